//! The race lab (issue 14): the same logic run by N simulated clients on one keyspace, as plain
//! commands (every `redis.call` a point where another client may go), as one script, as
//! MULTI/EXEC and as WATCH + MULTI/EXEC with retries; every interleaving enumerated when there are
//! few, sampled with a seed otherwise; outcomes compared with the serial orders and the lab's
//! invariants. No terminal here: the CLI (src/cli/race.rs) and the workbench's Race tab are front ends.

pub mod driver;
pub mod explore;
pub mod lab;

pub use driver::{ClientEnd, ClientOutcome, Run, Runner, Step, Stop};
pub use explore::{
    race, race_with, replay, replay_schedule, verdict, BrokenInvariant, Cancelled, Outcome,
    Progress, RaceOptions, RaceReport, StrategyReport, Verdict, DEFAULT_SAMPLES,
    DEFAULT_SCHEDULE_LIMIT, DEFAULT_STEP_LIMIT,
};
pub use lab::{builtin_lab, parse_lab, Lab, LabError, BUILTIN_LABS};

use serde::Serialize;

/// Check a lab file as the lab would run it: its TOML, its fields, its logic and invariants
/// compiled (every mistake at its file:line:column).
pub fn check_lab(path: &std::path::Path, text: &str) -> Result<Lab, LabError> {
    let lab = parse_lab(path, text)?;
    Runner::new(&lab)?;
    Ok(lab)
}

/// How each client sends the logic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Every redis.call is its own command: other clients may run between any two.
    Plain,
    /// The whole logic as one EVAL: atomic.
    Script,
    /// Every command queued in MULTI, applied by EXEC: atomic, but reads answer QUEUED.
    Multi,
    /// WATCH KEYS, reads outside, writes in MULTI/EXEC; EXEC fails (nil) when a watched key
    /// changed, and the client retries.
    Watch,
}

impl Strategy {
    pub const ALL: [Strategy; 4] = [
        Strategy::Plain,
        Strategy::Script,
        Strategy::Multi,
        Strategy::Watch,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Strategy::Plain => "plain",
            Strategy::Script => "script",
            Strategy::Multi => "multi",
            Strategy::Watch => "watch",
        }
    }

    pub fn from_id(id: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|s| s.id() == id)
    }

    /// One line on what the strategy does.
    pub fn explanation(self) -> &'static str {
        match self {
            Strategy::Plain => "each redis.call sent as its own command; other clients may run between any two",
            Strategy::Script => "the whole logic as one EVAL: no other client runs until it ends",
            Strategy::Multi => "all commands queued in MULTI and applied by EXEC: atomic, but a read inside answers QUEUED, so read-modify-write cannot read",
            Strategy::Watch => "WATCH the KEYS, reads sent at once, writes queued in MULTI; EXEC answers nil when a watched key changed and the client retries",
        }
    }
}
