//! The stable driver of the crash fuzz targets: for a bounded time, each target gets inputs made by
//! its structure-aware generator or by mutating its corpus (seeds, then inputs the generator made),
//! from one seeded RNG. A panic or a run over `HANG_LIMIT` fails the test with the input as a Rust
//! byte string; a crash of the process is replayed with the printed seed
//! (`EVALBENCH_FUZZ_SEED=N`, `EVALBENCH_FUZZ_VERBOSE=1` prints every input before it runs).

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// One input may take this much CPU time (the sandbox's busy threshold in the targets is far below it).
/// CPU time, not wall-clock time: on a machine busy with other work an input waits for a core, and
/// that is no hang. An input blocked without spinning is caught by `BLOCKED_LIMIT` of wall-clock time.
pub const HANG_LIMIT: Duration = Duration::from_secs(3);
/// Wall-clock time an input may take however little CPU it uses (a deadlock, a wait that never ends).
const BLOCKED_LIMIT: Duration = Duration::from_secs(120);

/// The CPU time this thread has used (the targets run on the driver's thread).
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec for the call to fill; the clock id is a constant of the OS.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}
/// Corpus entries kept per target (seeds first).
const MAX_CORPUS: usize = 512;
/// Mutated inputs stay below this size.
const MAX_INPUT: usize = 64 * 1024;

pub struct Target<'a> {
    pub name: &'a str,
    pub seeds: Vec<Vec<u8>>,
    /// Tokens worth inserting (keywords, format characters, magic bytes).
    pub dictionary: &'a [&'a [u8]],
    pub generate: &'a mut dyn FnMut(&mut StdRng) -> Vec<u8>,
    pub run: &'a mut dyn FnMut(&[u8]),
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?}: expected a number")),
    )
}

/// The run's seed: `EVALBENCH_FUZZ_SEED`; else a fixed one under `CI=true` (CI replays the same
/// inputs), else one from the clock. Printed either way.
pub fn seed() -> u64 {
    env_u64("EVALBENCH_FUZZ_SEED").unwrap_or_else(|| {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            return 9;
        }
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    })
}

/// Each target's time: `EVALBENCH_FUZZ_SECONDS` (default 3; fractions allowed as milliseconds
/// through `EVALBENCH_FUZZ_MILLIS`).
pub fn budget() -> Duration {
    if let Some(ms) = env_u64("EVALBENCH_FUZZ_MILLIS") {
        return Duration::from_millis(ms);
    }
    Duration::from_secs(env_u64("EVALBENCH_FUZZ_SECONDS").unwrap_or(3))
}

/// Rust source for an input: paste it into a regression test.
pub fn byte_literal(input: &[u8]) -> String {
    let mut s = String::from("b\"");
    for &b in input {
        match b {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    s.push('"');
    s
}

fn mutate(rng: &mut StdRng, input: &mut Vec<u8>, corpus: &[Vec<u8>], dictionary: &[&[u8]]) {
    for _ in 0..1 + rng.random_range(0..4) {
        let len = input.len();
        match rng.random_range(0..8) {
            // Flip a bit.
            0 if len > 0 => {
                let at = rng.random_range(0..len);
                input[at] ^= 1 << rng.random_range(0..8);
            }
            // An interesting byte.
            1 if len > 0 => {
                let at = rng.random_range(0..len);
                input[at] = *[0u8, 0x1b, 0x7f, 0x80, 0xff, b'"', b'\\', b'\n', b'9', b'-']
                    .get(rng.random_range(0..10))
                    .unwrap();
            }
            // Delete a range.
            2 if len > 0 => {
                let at = rng.random_range(0..len);
                let n = rng.random_range(1..=(len - at).min(16));
                input.drain(at..at + n);
            }
            // Duplicate a range (deep nesting, long runs).
            3 if len > 0 => {
                let at = rng.random_range(0..len);
                let n = rng.random_range(1..=(len - at).min(32));
                let chunk = input[at..at + n].to_vec();
                for _ in 0..rng.random_range(1..8) {
                    input.splice(at..at, chunk.iter().copied());
                }
            }
            // A dictionary token.
            4 | 5 if !dictionary.is_empty() => {
                let token = dictionary[rng.random_range(0..dictionary.len())];
                let at = rng.random_range(0..=len);
                input.splice(at..at, token.iter().copied());
            }
            // Splice with another corpus entry.
            6 if !corpus.is_empty() => {
                let other = &corpus[rng.random_range(0..corpus.len())];
                if !other.is_empty() {
                    let from = rng.random_range(0..other.len());
                    let at = rng.random_range(0..=len);
                    input.truncate(at);
                    input.extend_from_slice(&other[from..]);
                }
            }
            // Random bytes.
            _ => {
                let at = rng.random_range(0..=len);
                let n = rng.random_range(1..8);
                let bytes: Vec<u8> = (0..n).map(|_| rng.random()).collect();
                input.splice(at..at, bytes);
            }
        }
    }
    input.truncate(MAX_INPUT);
}

/// Run a target for `budget`; panics (failing the test) on the first input that panics or hangs.
pub fn fuzz(target: Target, seed: u64, budget: Duration) {
    let verbose = std::env::var("EVALBENCH_FUZZ_VERBOSE").is_ok_and(|v| v == "1");
    // One stream per target, so a target's inputs do not depend on the others'.
    let name_hash = target.name.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    });
    let mut rng = StdRng::seed_from_u64(seed ^ name_hash);
    let mut corpus = target.seeds;
    let started = Instant::now();
    let mut execs = 0u64;
    let mut slowest = Duration::ZERO;
    // `EVALBENCH_FUZZ_HANG_SECONDS`: more under valgrind (an input runs ~50 times slower).
    let hang_limit = env_u64("EVALBENCH_FUZZ_HANG_SECONDS").map_or(HANG_LIMIT, Duration::from_secs);
    while started.elapsed() < budget {
        let input = if corpus.is_empty() || rng.random_range(0..10) < 3 {
            let made = (target.generate)(&mut rng);
            if corpus.len() < MAX_CORPUS && rng.random_range(0..10) == 0 {
                corpus.push(made.clone());
            }
            made
        } else {
            let mut input = corpus[rng.random_range(0..corpus.len())].clone();
            mutate(&mut rng, &mut input, &corpus, target.dictionary);
            input
        };
        if verbose {
            eprintln!("{} #{execs}: {}", target.name, byte_literal(&input));
        }
        let t = Instant::now();
        let cpu = thread_cpu_time();
        let result = catch_unwind(AssertUnwindSafe(|| (target.run)(&input)));
        let wall = t.elapsed();
        let took = thread_cpu_time().saturating_sub(cpu);
        slowest = slowest.max(took);
        execs += 1;
        if let Err(panic) = result {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!(
                "fuzz target {} panicked on input #{execs} (EVALBENCH_FUZZ_SEED={seed}): {message}\ninput: {}",
                target.name,
                byte_literal(&input)
            );
        }
        assert!(
            took < hang_limit && wall < BLOCKED_LIMIT.max(hang_limit),
            "fuzz target {} took {took:?} of CPU time ({wall:?} in all) on input #{execs} (EVALBENCH_FUZZ_SEED={seed})\ninput: {}",
            target.name,
            byte_literal(&input)
        );
    }
    eprintln!(
        "fuzz {}: {execs} executions in {:.1} s ({:.0}/s), slowest {:.1} ms, EVALBENCH_FUZZ_SEED={seed}",
        target.name,
        started.elapsed().as_secs_f64(),
        execs as f64 / started.elapsed().as_secs_f64(),
        slowest.as_secs_f64() * 1000.0
    );
}
