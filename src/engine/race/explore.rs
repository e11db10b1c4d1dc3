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

/// One distinct end (final keyspace and each client's result) and the schedules that reach it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub keyspace: Json,
    pub schedules: usize,
    /// Some serial order (each client's logic run whole, one after another) ends here too, with
    /// the same keyspace and the same result for every client.
    /// When false, an update was lost (or the clients failed): no serial order explains it.
    pub serializable: bool,
    pub broken_invariants: Vec<BrokenInvariant>,
    /// The first schedule found that reaches it: the client (1-based) of each step.
    pub schedule: Vec<usize>,
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
    pub outcomes: Vec<Outcome>,
    /// Schedules that end as no serial order does although every client succeeded (a lost update).
    pub lost_updates: usize,
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
    /// Distinct final keyspaces of the serial orders.
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
    let mut serial_keys = Vec::new();
    let mut serial_keyspaces: Vec<Json> = Vec::new();
    for run in &serial.runs {
        let key = outcome_key(run);
        if !serial_keys.contains(&key) {
            serial_keys.push(key);
        }
        if !serial_keyspaces.contains(&run.keyspace) {
            serial_keyspaces.push(run.keyspace.clone());
        }
    }
    let serial_set: HashSet<String> = serial_keys.into_iter().collect();
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
#[derive(Clone)]
struct Ran {
    schedule: Vec<usize>,
    keyspace: Json,
    clients: Vec<ClientEnd>,
}

#[derive(Clone)]
struct Explored {
    exhaustive: bool,
    runs: Vec<Ran>,
}

fn ran(run: Run, now_ms: i64) -> Ran {
    Ran {
        keyspace: keyspace_json(&run.final_db, now_ms),
        schedule: run.schedule,
        clients: run.clients,
    }
}

fn explore(runner: &Runner, strategy: Strategy, options: &RaceOptions) -> Explored {
    let now = runner.lab().clock_ms;
    // Depth-first: follow `prefix` (positions among the ready clients), then the first ready
    // client; next time, the deepest step with an untried client moves on to it.
    let mut runs = Vec::new();
    let mut prefix: Vec<usize> = Vec::new();
    loop {
        if runs.len() >= options.schedule_limit {
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
        runs.push(ran(run, now));
        match path.iter().rposition(|&(pick, width)| pick + 1 < width) {
            Some(d) => {
                prefix = path[..d].iter().map(|&(p, _)| p).collect();
                prefix.push(path[d].0 + 1);
            }
            None => {
                return Explored {
                    exhaustive: true,
                    runs,
                }
            }
        }
    }
    // Too many to enumerate: sample.
    let mut rng = XorShift::new(options.seed);
    let runs = (0..options.samples)
        .map(|_| {
            let run = runner.run(strategy, &mut |ready| rng.below(ready.len()), false);
            ran(run, now)
        })
        .collect();
    Explored {
        exhaustive: false,
        runs,
    }
}

/// What makes two schedules end the same: the final keyspace and what each client's logic
/// returned (two clients both told "sold" for one item is a lost update even when the stock reads
/// the same as in a serial order).
fn outcome_key(run: &Ran) -> String {
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
    explored: Explored,
    serial: &HashSet<String>,
) -> StrategyReport {
    let lab = runner.lab();
    let mut order: Vec<String> = Vec::new();
    let mut groups: HashMap<String, (usize, Ran)> = HashMap::new();
    let mut retries = 0;
    let mut max_retries = 0;
    let mut failed = 0;
    let schedules = explored.runs.len();
    for run in explored.runs {
        let r: usize = run.clients.iter().map(|c| c.retries).sum();
        retries += r;
        max_retries = max_retries.max(r);
        if run.clients.iter().any(|c| c.failed) {
            failed += 1;
        }
        let key = outcome_key(&run);
        match groups.get_mut(&key) {
            Some((count, _)) => *count += 1,
            None => {
                order.push(key.clone());
                groups.insert(key, (1, run));
            }
        }
    }
    let mut outcomes: Vec<Outcome> = order
        .into_iter()
        .map(|key| {
            let (count, example) = groups.remove(&key).expect("grouped");
            let replayed = replay(runner, strategy, &example.schedule);
            let broken = runner
                .broken_invariants(&replayed.final_db)
                .into_iter()
                .map(|(invariant, why)| BrokenInvariant { invariant, why })
                .collect();
            Outcome {
                serializable: serial.contains(&key),
                keyspace: example.keyspace,
                schedules: count,
                broken_invariants: broken,
                schedule: example.schedule.iter().map(|c| c + 1).collect(),
                steps: replayed.steps,
                clients: example.clients,
            }
        })
        .collect();
    // Most common first; ties keep the order found (the first schedule's outcome first).
    outcomes.sort_by_key(|o| std::cmp::Reverse(o.schedules));
    let lost_updates = outcomes
        .iter()
        .filter(|o| !o.serializable && !o.clients.iter().any(|c| c.failed))
        .map(|o| o.schedules)
        .sum();
    let broken = outcomes
        .iter()
        .filter(|o| !o.broken_invariants.is_empty())
        .map(|o| o.schedules)
        .sum();
    let _ = lab;
    StrategyReport {
        strategy,
        explanation: strategy.explanation(),
        exhaustive: explored.exhaustive,
        schedules,
        outcomes,
        lost_updates,
        broken,
        failed,
        retries,
        max_retries_in_a_schedule: max_retries,
    }
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
