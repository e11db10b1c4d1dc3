//! Exploring a lab's schedules: every interleaving by depth-first search with replay from the seed
//! while there are few (up to `schedule_limit`), else a seeded random sample; the final keyspaces
//! grouped into outcomes, each checked against the serial orders (one script per client, in every
//! order) and the lab's invariants.

use super::driver::{keyspace_json, ClientEnd, Run, Runner, Step};
use super::Strategy;
use serde::Serialize;
use serde_json::Value as Json;
use std::collections::{HashMap, HashSet};

/// Schedules enumerated before the explorer falls back to sampling.
pub const DEFAULT_SCHEDULE_LIMIT: usize = 100_000;
/// Schedules drawn when sampling.
pub const DEFAULT_SAMPLES: usize = 10_000;
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
}

impl Default for RaceOptions {
    fn default() -> Self {
        RaceOptions {
            strategies: Strategy::ALL.to_vec(),
            schedule_limit: DEFAULT_SCHEDULE_LIMIT,
            samples: DEFAULT_SAMPLES,
            seed: 1,
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
    /// That schedule step by step, with the keyspace after each step.
    pub steps: Vec<Step>,
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
    /// Distinct final keyspaces of the serial orders (the first `DETAILED_OUTCOMES`).
    pub serial_keyspaces: Vec<Json>,
    pub strategies: Vec<StrategyReport>,
}

impl RaceReport {
    pub fn strategy(&self, strategy: Strategy) -> Option<&StrategyReport> {
        self.strategies.iter().find(|s| s.strategy == strategy)
    }
}

/// Run a lab under the options' strategies.
pub fn race(runner: &Runner, options: &RaceOptions) -> RaceReport {
    let lab = runner.lab();
    let now = lab.clock_ms;
    // The serial orders are the script strategy's schedules (N! of them, at most 40,320).
    let serial = explore(runner, Strategy::Script, options);
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
    let strategies = options
        .strategies
        .iter()
        .map(|&strategy| {
            let explored = if strategy == Strategy::Script {
                serial.clone()
            } else {
                explore(runner, strategy, options)
            };
            summarize(runner, strategy, explored, &serial_set)
        })
        .collect();
    let _ = now;
    RaceReport {
        lab: lab.name.clone(),
        about: lab.about.clone(),
        clients: lab.clients,
        seed_keyspace: lab.seed.clone(),
        invariants: lab.invariants.iter().map(|i| i.source.clone()).collect(),
        sampling_seed: options.seed,
        serial_keyspaces,
        strategies,
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
    schedules: usize,
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

fn explore(runner: &Runner, strategy: Strategy, options: &RaceOptions) -> Explored {
    let now = runner.lab().clock_ms;
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
        explored.add(run, now);
        match path.iter().rposition(|&(pick, width)| pick + 1 < width) {
            Some(d) => {
                prefix = path[..d].iter().map(|&(p, _)| p).collect();
                prefix.push(path[d].0 + 1);
            }
            None => {
                explored.exhaustive = true;
                return explored;
            }
        }
    }
    // Too many to enumerate: sample.
    let mut rng = XorShift::new(options.seed);
    for _ in 0..options.samples {
        let run = runner.run(strategy, &mut |ready| rng.below(ready.len()), false);
        explored.add(run, now);
    }
    explored
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
                steps: replayed.steps,
                clients: group.clients,
            }
        })
        .collect();
    StrategyReport {
        strategy,
        explanation: strategy.explanation(),
        exhaustive: explored.exhaustive,
        schedules: explored.schedules,
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
