//! Exploring a lab's schedules: every interleaving by depth-first search with replay from the seed
//! while there are few (up to `schedule_limit`), else a seeded random sample; the final keyspaces
//! grouped into outcomes, each checked against the serial orders (one script per client, in every
//! order) and the lab's invariants.

use super::driver::{keyspace_json, ClientEnd, Run, Runner, Step, Stop};
use super::Strategy;
use crate::engine::reply::grouped;
use serde::Serialize;
use serde_json::Value as Json;
use std::collections::{HashMap, HashSet};

/// Schedules enumerated before the explorer falls back to sampling.
pub const DEFAULT_SCHEDULE_LIMIT: usize = 100_000;
/// Schedules drawn when sampling.
pub const DEFAULT_SAMPLES: usize = 10_000;
/// Steps (server interactions and commands queued in MULTI) one strategy may make over all its
/// schedules: 8 clients of 2,000 calls each are 16,000 steps a schedule, and every interleaving
/// of them would never end.
pub const DEFAULT_STEP_LIMIT: usize = 1_000_000;
/// Outcomes detailed per strategy (the most common).
pub const DETAILED_OUTCOMES: usize = 20;
/// Schedules listed per outcome.
pub const LISTED_SCHEDULES: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaceOptions {
    /// The strategies to run, in this order.
    pub strategies: Vec<Strategy>,
    pub schedule_limit: usize,
    pub samples: usize,
    /// The sampling seed.
    pub seed: u64,
    /// Steps (server interactions) per strategy over all its schedules; exploring stops there.
    pub step_limit: usize,
}

/// How far a strategy's exploring is, for a progress line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub strategy: Strategy,
    pub schedules: usize,
    pub steps: usize,
    pub step_limit: usize,
}

impl Progress {
    /// `race lab: plain: 1,200 schedules, 480,000 of 1,000,000 steps`.
    pub fn text(&self) -> String {
        format!(
            "race lab: {}: {} schedules, {} of {} steps",
            self.strategy.id(),
            grouped(self.schedules),
            grouped(self.steps),
            grouped(self.step_limit)
        )
    }
}

/// The lab was cancelled (its runner's cancel flag): there is no report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

impl Default for RaceOptions {
    fn default() -> Self {
        RaceOptions {
            strategies: Strategy::ALL.to_vec(),
            schedule_limit: DEFAULT_SCHEDULE_LIMIT,
            samples: DEFAULT_SAMPLES,
            seed: 1,
            step_limit: DEFAULT_STEP_LIMIT,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BrokenInvariant {
    pub invariant: String,
    /// `false`, or the error the invariant raised.
    pub why: String,
}

/// What an outcome is, from what happened to each client and to the keyspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// As some serial order, every client at its first attempt.
    Success,
    /// As some serial order, after WATCH made a client retry.
    Retried,
    /// A client got an error (or gave up retrying): what it meant to do was not done, which is
    /// not a lost update.
    Error,
    /// No serial order ends so, every client succeeded and the server applied writes: one
    /// client's write was overwritten or made on a stale read.
    LostUpdate,
    /// No serial order ends so, yet nothing was written: the clients' replies disagree with
    /// every serial order (a stale read), but no update was lost.
    StaleRead,
}

impl Verdict {
    /// One word for a row (`LOST`, `error`, ...).
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Success => "serial",
            Verdict::Retried => "retry",
            Verdict::Error => "error",
            Verdict::LostUpdate => "LOST",
            Verdict::StaleRead => "stale",
        }
    }

    /// What it means, for the CLI's outcome line.
    pub fn explanation(self) -> &'static str {
        match self {
            Verdict::Success => "as a serial order",
            Verdict::Retried => "as a serial order, after WATCH retries",
            Verdict::Error => "ERROR: a client got an error (nothing of it is a lost update)",
            Verdict::LostUpdate => "LOST UPDATE: no serial order ends so",
            Verdict::StaleRead => {
                "STALE READ: no serial order gives these replies, though nothing was written"
            }
        }
    }
}

/// One distinct end (final keyspace and each client's result) and the schedules that reach it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub keyspace: Json,
    pub schedules: usize,
    /// What happened, from each client's end and the writes made.
    pub verdict: Verdict,
    /// The server applied writes in some schedule that reaches it.
    pub wrote: bool,
    /// Some serial order (each client's logic run whole, one after another) ends here too, with
    /// the same keyspace and the same result for every client.
    /// When false, an update was lost (or the clients failed): no serial order explains it.
    pub serializable: bool,
    pub broken_invariants: Vec<BrokenInvariant>,
    /// The first schedule found that reaches it: the client (1-based) of each step.
    pub schedule: Vec<usize>,
    /// The first `LISTED_SCHEDULES` schedules that reach it, in the order run.
    pub schedule_list: Vec<Vec<usize>>,
    /// That schedule step by step, with the keyspace after each step (the first
    /// `driver::TRACED_STEPS`).
    pub steps: Vec<Step>,
    /// Steps of that schedule after those shown.
    pub steps_not_shown: usize,
    /// How each client ended in that schedule.
    pub clients: Vec<ClientEnd>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrategyReport {
    pub strategy: Strategy,
    pub explanation: &'static str,
    /// Every interleaving was run (else `schedules` were sampled with the seed).
    pub exhaustive: bool,
    pub schedules: usize,
    /// The schedules were drawn at random with the seed (else enumerated, maybe not all).
    pub sampled: bool,
    /// Steps (server interactions) over all the schedules run.
    pub steps: usize,
    /// Why exploring stopped before it was done (the step limit, the memory budget).
    pub stopped: Option<String>,
    /// Distinct outcomes reached.
    pub outcome_count: usize,
    /// The most common outcomes (at most `DETAILED_OUTCOMES`), each with a schedule step by step.
    pub outcomes: Vec<Outcome>,
    /// Schedules that reach the outcomes not detailed.
    pub more_schedules: usize,
    /// Schedules that end as no serial order does although every client succeeded and writes
    /// were applied (a lost update).
    pub lost_updates: usize,
    /// Schedules in which some client got an error (raised or returned) or gave up.
    pub errors: usize,
    /// Schedules that break an invariant.
    pub broken: usize,
    /// Schedules in which some client's logic failed (an error, or WATCH retries exhausted).
    pub failed: usize,
    /// WATCH retries over all schedules, and the most in one schedule.
    pub retries: usize,
    pub max_retries_in_a_schedule: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RaceReport {
    pub lab: String,
    pub about: String,
    pub clients: usize,
    pub seed_keyspace: Json,
    pub invariants: Vec<String>,
    /// The sampling seed (used only by strategies that were not exhaustive).
    pub sampling_seed: u64,
    /// Steps each strategy may make over all its schedules.
    pub step_limit: usize,
    /// Why the serial orders were not all run (then an outcome called a lost update may be a
    /// serial order not run).
    pub serial_stopped: Option<String>,
    /// Distinct final keyspaces of the serial orders (the first `DETAILED_OUTCOMES`).
    pub serial_keyspaces: Vec<Json>,
    pub strategies: Vec<StrategyReport>,
}

impl RaceReport {
    pub fn strategy(&self, strategy: Strategy) -> Option<&StrategyReport> {
        self.strategies.iter().find(|s| s.strategy == strategy)
    }
}

/// Run a lab under the options' strategies (with no progress to report; a cancelled lab gives
/// the strategies run so far, each saying it was cancelled).
pub fn race(runner: &Runner, options: &RaceOptions) -> RaceReport {
    build(runner, options, &mut |_| {})
}

/// `race`, reporting progress as it goes (about a hundred times per strategy), and nothing but
/// `Cancelled` when the runner's cancel flag was raised.
pub fn race_with(
    runner: &Runner,
    options: &RaceOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RaceReport, Cancelled> {
    let report = build(runner, options, progress);
    if runner
        .cancel_flag()
        .load(std::sync::atomic::Ordering::Relaxed)
    {
        return Err(Cancelled);
    }
    Ok(report)
}

fn build(
    runner: &Runner,
    options: &RaceOptions,
    progress: &mut dyn FnMut(&Progress),
) -> RaceReport {
    let lab = runner.lab();
    // The serial orders are the script strategy's schedules (N! of them, at most 40,320).
    let serial = explore(runner, Strategy::Script, options, progress);
    let mut serial_keyspaces: Vec<Json> = Vec::new();
    for key in &serial.order {
        let keyspace = &serial.groups[key].keyspace;
        if !serial_keyspaces.contains(keyspace) && serial_keyspaces.len() < DETAILED_OUTCOMES {
            serial_keyspaces.push(keyspace.clone());
        }
    }
    let serial_set: HashSet<String> = serial
        .groups
        .values()
        .map(|g| g.serial_key.clone())
        .collect();
    let serial_stopped = serial.stopped.clone();
    let mut strategies = Vec::new();
    for &strategy in &options.strategies {
        let explored = if strategy == Strategy::Script {
            serial.clone()
        } else {
            explore(runner, strategy, options, progress)
        };
        let cancelled = explored.stopped.as_deref() == Some(CANCELLED);
        strategies.push(summarize(runner, strategy, explored, &serial_set));
        if cancelled {
            break;
        }
    }
    RaceReport {
        lab: lab.name.clone(),
        about: lab.about.clone(),
        clients: lab.clients,
        seed_keyspace: lab.seed.clone(),
        invariants: lab.invariants.iter().map(|i| i.source.clone()).collect(),
        sampling_seed: options.seed,
        step_limit: options.step_limit,
        serial_stopped: serial_stopped.clone(),
        serial_keyspaces,
        strategies,
    }
}

const CANCELLED: &str = "cancelled";

/// Counts the steps of one strategy's schedules against the limit, reports progress, and says
/// when exploring must stop.
struct Meter<'a> {
    strategy: Strategy,
    limit: usize,
    steps: usize,
    schedules: usize,
    next_report: usize,
    progress: &'a mut dyn FnMut(&Progress),
}

impl Meter<'_> {
    /// Why exploring stops before `run` is counted (it did not end), if it does.
    fn refuse(&self, run: &Run) -> Option<String> {
        match run.stopped? {
            Stop::Cancelled => Some(CANCELLED.into()),
            Stop::OverBudget => Some(format!(
                "the race lab used more than the memory budget ({}: keyspaces, outcomes and Lua together) after {} schedules; raise it with --max-memory MIB, or memory_limit_mb in the workbench's config.toml",
                crate::engine::budget::size_text(crate::engine::budget::limit() as u64),
                grouped(self.schedules)
            )),
        }
    }

    /// Count a schedule that ended; why exploring stops after it, if it does.
    fn count(&mut self, run: &Run) -> Option<String> {
        // Queued commands count: under multi a schedule is one EXEC per client, whatever the
        // logic queued, and the limit bounds the work.
        self.steps += run.schedule.len() + run.queued;
        self.schedules += 1;
        if self.steps >= self.next_report {
            self.next_report = self.steps + (self.limit / 100).max(1);
            (self.progress)(&Progress {
                strategy: self.strategy,
                schedules: self.schedules,
                steps: self.steps,
                step_limit: self.limit,
            });
        }
        (self.steps >= self.limit).then(|| {
            format!(
                "stopped at the step limit ({} steps over all schedules) after {} schedules",
                grouped(self.limit),
                grouped(self.schedules)
            )
        })
    }
}

/// Run one schedule again (clients 0-based, as `Run::schedule`), keeping the keyspace after every step.
pub fn replay(runner: &Runner, strategy: Strategy, schedule: &[usize]) -> Run {
    let mut k = 0;
    runner.run(
        strategy,
        &mut |ready| {
            let wanted = schedule.get(k).copied();
            k += 1;
            wanted
                .and_then(|w| ready.iter().position(|&c| c == w))
                .unwrap_or(0)
        },
        true,
    )
}

/// What one schedule left, kept small: its final keyspace and how its clients ended.
struct Ran {
    schedule: Vec<usize>,
    keyspace: Json,
    final_db: crate::engine::keyspace::Db,
    clients: Vec<ClientEnd>,
    writes: usize,
}

/// One distinct end while exploring.
#[derive(Clone)]
struct Group {
    count: usize,
    /// The first schedule that reached it (0-based clients), its keyspace and clients' ends.
    schedule: Vec<usize>,
    keyspace: Json,
    final_db: crate::engine::keyspace::Db,
    clients: Vec<ClientEnd>,
    listed: Vec<Vec<usize>>,
    wrote: bool,
    /// The final keyspace and each client's result: what a serial order is compared by.
    serial_key: String,
}

/// The schedules of one strategy, grouped by how they end as they are run (never all kept).
#[derive(Clone, Default)]
struct Explored {
    exhaustive: bool,
    sampled: bool,
    schedules: usize,
    steps: usize,
    stopped: Option<String>,
    /// Outcome keys in the order first reached.
    order: Vec<String>,
    groups: HashMap<String, Group>,
    retries: usize,
    max_retries: usize,
    failed: usize,
}

impl Explored {
    fn add(&mut self, run: Run, now_ms: i64) {
        let ran = Ran {
            keyspace: keyspace_json(&run.final_db, now_ms),
            final_db: run.final_db,
            schedule: run.schedule,
            clients: run.clients,
            writes: run.writes,
        };
        self.schedules += 1;
        let r: usize = ran.clients.iter().map(|c| c.retries).sum();
        self.retries += r;
        self.max_retries = self.max_retries.max(r);
        if ran.clients.iter().any(|c| c.failed) {
            self.failed += 1;
        }
        let serial_key = serial_key(&ran);
        // Grouped by what happened to each client too: a retried client is another outcome.
        let mut key = serial_key.clone();
        for client in &ran.clients {
            key.push_str(&format!("\0{}", client.retries));
        }
        let shown: Vec<usize> = ran.schedule.iter().map(|c| c + 1).collect();
        match self.groups.get_mut(&key) {
            Some(group) => {
                group.count += 1;
                group.wrote |= ran.writes > 0;
                if group.listed.len() < LISTED_SCHEDULES {
                    group.listed.push(shown);
                }
            }
            None => {
                self.order.push(key.clone());
                self.groups.insert(
                    key,
                    Group {
                        count: 1,
                        schedule: ran.schedule,
                        keyspace: ran.keyspace,
                        final_db: ran.final_db,
                        clients: ran.clients,
                        listed: vec![shown],
                        wrote: ran.writes > 0,
                        serial_key,
                    },
                );
            }
        }
    }
}

fn explore(
    runner: &Runner,
    strategy: Strategy,
    options: &RaceOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Explored {
    let now = runner.lab().clock_ms;
    let mut meter = Meter {
        strategy,
        limit: options.step_limit.max(1),
        steps: 0,
        schedules: 0,
        next_report: 0,
        progress,
    };
    // Depth-first: follow `prefix` (positions among the ready clients), then the first ready
    // client; next time, the deepest step with an untried client moves on to it.
    let mut explored = Explored::default();
    let mut prefix: Vec<usize> = Vec::new();
    let few = estimated_schedules(runner, strategy) <= options.schedule_limit as f64;
    loop {
        if !few || explored.schedules >= options.schedule_limit {
            // More than the estimate said: start over, sampling.
            explored = Explored::default();
            break;
        }
        let mut depth = 0;
        let mut path = Vec::new();
        let run = runner.run(
            strategy,
            &mut |ready| {
                let pick = prefix.get(depth).copied().unwrap_or(0);
                depth += 1;
                path.push((pick, ready.len()));
                pick
            },
            false,
        );
        if let Some(why) = meter.refuse(&run) {
            return explored.stopped_by(why, &meter);
        }
        let stop = meter.count(&run);
        explored.add(run, now);
        match path.iter().rposition(|&(pick, width)| pick + 1 < width) {
            Some(d) if stop.is_none() => {
                prefix = path[..d].iter().map(|&(p, _)| p).collect();
                prefix.push(path[d].0 + 1);
            }
            Some(_) => return explored.stopped_by(stop.unwrap_or_default(), &meter),
            None => {
                explored.exhaustive = true;
                explored.steps = meter.steps;
                return explored;
            }
        }
    }
    // Too many to enumerate: sample.
    explored.sampled = true;
    let mut rng = XorShift::new(options.seed);
    for _ in 0..options.samples {
        let run = runner.run(strategy, &mut |ready| rng.below(ready.len()), false);
        if let Some(why) = meter.refuse(&run) {
            return explored.stopped_by(why, &meter);
        }
        let stop = meter.count(&run);
        explored.add(run, now);
        if let Some(why) = stop {
            return explored.stopped_by(why, &meter);
        }
    }
    explored.steps = meter.steps;
    explored
}

impl Explored {
    fn stopped_by(mut self, why: String, meter: &Meter) -> Explored {
        self.stopped = Some(why);
        self.steps = meter.steps;
        self
    }
}

/// How many interleavings there are if every client makes as many steps as in the first schedule:
/// the multinomial (s1 + ... + sn)! / (s1! ... sn!) (under `script`, n!). Past the limit the
/// explorer samples at once rather than enumerate 100,000 schedules first.
fn estimated_schedules(runner: &Runner, strategy: Strategy) -> f64 {
    let run = runner.run(strategy, &mut |_| 0, false);
    let clients = runner.lab().clients;
    if strategy == Strategy::Script {
        return (1..=clients).map(|k| k as f64).product();
    }
    let mut steps = vec![0usize; clients];
    for &c in &run.schedule {
        steps[c] += 1;
    }
    let mut total = 0usize;
    let mut estimate = 1f64;
    for s in steps {
        for k in 1..=s {
            total += 1;
            estimate = estimate * total as f64 / k as f64;
        }
    }
    estimate
}

fn serial_key(run: &Ran) -> String {
    let mut key = run.keyspace.to_string();
    for client in &run.clients {
        key.push('\0');
        key.push_str(&client.result);
    }
    key
}

fn summarize(
    runner: &Runner,
    strategy: Strategy,
    mut explored: Explored,
    serial: &HashSet<String>,
) -> StrategyReport {
    // Invariants read only the final keyspace: judged once per distinct keyspace.
    let mut verdicts: HashMap<String, Vec<BrokenInvariant>> = HashMap::new();
    let mut ends: Vec<(String, Group, Vec<BrokenInvariant>)> = Vec::new();
    for key in std::mem::take(&mut explored.order) {
        let group = explored.groups.remove(&key).expect("grouped");
        let broken = verdicts
            .entry(group.keyspace.to_string())
            .or_insert_with(|| {
                runner
                    .broken_invariants(&group.final_db)
                    .into_iter()
                    .map(|(invariant, why)| BrokenInvariant { invariant, why })
                    .collect()
            })
            .clone();
        ends.push((key, group, broken));
    }
    let verdict_of = |g: &Group| verdict(serial.contains(&g.serial_key), g.wrote, &g.clients);
    let count_of = |wanted: Verdict| -> usize {
        ends.iter()
            .filter(|(_, g, _)| verdict_of(g) == wanted)
            .map(|(_, g, _)| g.count)
            .sum()
    };
    let lost_updates = count_of(Verdict::LostUpdate);
    let errors = count_of(Verdict::Error);
    let broken = ends
        .iter()
        .filter(|(_, _, b)| !b.is_empty())
        .map(|(_, g, _)| g.count)
        .sum();
    // Most common first; ties keep the order found (the first schedule's outcome first).
    ends.sort_by_key(|(_, g, _)| std::cmp::Reverse(g.count));
    let outcome_count = ends.len();
    let more: Vec<_> = ends.split_off(ends.len().min(DETAILED_OUTCOMES));
    let outcomes = ends
        .into_iter()
        .map(|(_, group, broken)| {
            let replayed = replay(runner, strategy, &group.schedule);
            Outcome {
                verdict: verdict_of(&group),
                wrote: group.wrote,
                serializable: serial.contains(&group.serial_key),
                keyspace: group.keyspace,
                schedules: group.count,
                broken_invariants: broken,
                schedule: group.schedule.iter().map(|c| c + 1).collect(),
                schedule_list: group.listed,
                steps_not_shown: replayed.steps_not_traced,
                steps: replayed.steps,
                clients: group.clients,
            }
        })
        .collect();
    StrategyReport {
        strategy,
        explanation: strategy.explanation(),
        exhaustive: explored.exhaustive,
        sampled: explored.sampled,
        schedules: explored.schedules,
        steps: explored.steps,
        stopped: explored.stopped,
        outcome_count,
        more_schedules: more.iter().map(|(_, g, _)| g.count).sum(),
        outcomes,
        lost_updates,
        errors,
        broken,
        failed: explored.failed,
        retries: explored.retries,
        max_retries_in_a_schedule: explored.max_retries,
    }
}

/// An outcome's verdict: a client's error comes first (an error is never a lost update), then
/// whether a serial order explains the end, then whether anything was written.
pub fn verdict(serializable: bool, wrote: bool, clients: &[ClientEnd]) -> Verdict {
    use super::driver::ClientOutcome;
    if clients
        .iter()
        .any(|c| matches!(c.outcome, ClientOutcome::Error | ClientOutcome::GaveUp))
    {
        Verdict::Error
    } else if !serializable {
        if wrote {
            Verdict::LostUpdate
        } else {
            Verdict::StaleRead
        }
    } else if clients.iter().any(|c| c.retries > 0) {
        Verdict::Retried
    } else {
        Verdict::Success
    }
}

/// Replay a schedule a user gives (clients 1-based, as listed): every step must name a client
/// that can go then, and the schedule must run the clients to their end.
pub fn replay_schedule(
    runner: &Runner,
    strategy: Strategy,
    schedule: &[usize],
) -> Result<Run, String> {
    let mut k = 0;
    let mut wrong: Option<String> = None;
    let run = runner.run(
        strategy,
        &mut |ready| {
            let wanted = schedule.get(k).copied();
            k += 1;
            let ready_shown: Vec<String> = ready.iter().map(|c| (c + 1).to_string()).collect();
            match wanted.and_then(|w| ready.iter().position(|&c| c + 1 == w)) {
                Some(position) => position,
                None => {
                    if wrong.is_none() {
                        wrong = Some(match wanted {
                            Some(w) => format!(
                                "step {k}: client {w} cannot go then (the clients that can: {})",
                                ready_shown.join(" ")
                            ),
                            None => format!(
                                "the schedule ends after {} steps, but the clients are not done (next could go: {})",
                                schedule.len(),
                                ready_shown.join(" ")
                            ),
                        });
                    }
                    0
                }
            }
        },
        true,
    );
    if let Some(wrong) = wrong {
        return Err(wrong);
    }
    if run.schedule.len() < schedule.len() {
        return Err(format!(
            "the clients are done after {} steps, but the schedule has {}",
            run.schedule.len(),
            schedule.len()
        ));
    }
    Ok(run)
}

/// A small seeded generator (xorshift64*) for sampling schedules.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> XorShift {
        XorShift(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }
    fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1) as u64) as usize
    }
}
