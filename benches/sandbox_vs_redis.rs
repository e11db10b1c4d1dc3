//! Sandbox time per script against a real redis-server's in-server time, measured in the same run.
//!
//! For each sample (samples/*.lua with its sidecar): Redis's time is `usec_per_call` of EVALSHA in
//! `INFO commandstats`, the runs pipelined in batches, each EVALSHA preceded by the commands that
//! restore its fixture (not counted: only EVALSHA's time is). The sandbox's time is the median
//! of timed runs on one VM, the keyspace reset to the seed before each run outside the timing.
//! Also: the stop latency of `while true do end` after the busy threshold.
//! Rounds (a warm-up round, then 31, or 11 with `EVALBENCH_BENCH_QUICK=1`) each measure every
//! sample on both sides. Prints a table of ratios (medians over the rounds) and their geometric
//! means (tracing on and off), the spread of the rounds' geometric means (min / median / max),
//! the load average and whether the process is pinned; criterion benchmarks of each sample follow. `cargo bench --bench sandbox_vs_redis`; needs redis-server on PATH.
//! `EVALBENCH_PROFILE=valkey-9.1` measures that profile's sandbox against that server (installed by
//! `.ci/install-servers`).

#[path = "../tests/common/mod.rs"]
mod common;

use common::{seed_commands, Conn, RedisServer};
use criterion::{black_box, Criterion};
use evalbench::engine::keyspace::{keyspace_from_json, Db};
use evalbench::engine::profile::Profile;
use evalbench::engine::reply::Reply;
use evalbench::engine::{RunRequest, Sandbox};
use serde_json::Value as Json;
use std::time::{Duration, Instant};

// Counted, as the evalbench binary's allocator (engine/budget.rs).
#[global_allocator]
static GLOBAL: evalbench::engine::budget::CountingAlloc<mimalloc::MiMalloc> =
    evalbench::engine::budget::CountingAlloc(mimalloc::MiMalloc);

struct Sample {
    name: String,
    request: RunRequest,
    seed: Json,
}

fn samples() -> Vec<Sample> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    paths.retain(|p| p.extension().is_some_and(|e| e == "lua"));
    paths.sort();
    let mut out = vec![Sample {
        name: "return_1".into(),
        request: RunRequest::new("return 1"),
        seed: serde_json::json!({}),
    }];
    for path in paths {
        let car: Json =
            serde_json::from_str(&std::fs::read_to_string(path.with_extension("json")).unwrap())
                .unwrap();
        // A function library (its sidecar names the function) is FCALLed, not EVALed: not compared here.
        if car.get("function").is_some() {
            continue;
        }
        let strings = |v: &Json| -> Vec<Vec<u8>> {
            v.as_array()
                .into_iter()
                .flatten()
                .map(|s| s.as_str().unwrap_or_default().as_bytes().to_vec())
                .collect()
        };
        out.push(Sample {
            name: path.file_stem().unwrap().to_string_lossy().into_owned(),
            request: RunRequest {
                script: std::fs::read(&path).unwrap(),
                keys: strings(&car["keys"]),
                argv: strings(&car["argv"]),
                ..RunRequest::default()
            },
            seed: car
                .get("keyspace")
                .cloned()
                .unwrap_or(serde_json::json!({})),
        });
    }
    out
}

/// Redis's in-server microseconds per EVALSHA for one sample.
fn redis_usec_per_call(conn: &mut Conn, sample: &Sample, batches: usize, per_batch: usize) -> f64 {
    let sha = match conn.cmd_bytes(&[b"SCRIPT", b"LOAD", &sample.request.script]) {
        Reply::Bulk(b) => b,
        other => panic!("SCRIPT LOAD: {other:?}"),
    };
    let numkeys = sample.request.keys.len().to_string();
    let mut evalsha: Vec<&[u8]> = vec![b"EVALSHA", &sha, numkeys.as_bytes()];
    evalsha.extend(sample.request.keys.iter().map(Vec::as_slice));
    evalsha.extend(sample.request.argv.iter().map(Vec::as_slice));
    // Each run restores its fixture first (FLUSHALL + seed, not counted: only EVALSHA's time is);
    // runs go pipelined in batches so that the server's caches stay warm, as they do in production.
    let mut batch: Vec<Vec<Vec<u8>>> = Vec::new();
    for _ in 0..per_batch {
        batch.push(vec![b"FLUSHALL".to_vec()]);
        batch.extend(seed_commands(&sample.seed));
        batch.push(evalsha.iter().map(|a| a.to_vec()).collect());
    }
    for round in 0..2 {
        conn.cmd(&["CONFIG", "RESETSTAT"]);
        for _ in 0..batches {
            let replies = conn.pipeline(&batch);
            assert!(
                round > 0
                    || !replies
                        .iter()
                        .any(|r| matches!(r, Reply::Error(e) if e.starts_with("NOSCRIPT")))
            );
        }
    }
    let info = match conn.cmd(&["INFO", "commandstats"]) {
        Reply::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
        other => panic!("INFO: {other:?}"),
    };
    let line = info
        .lines()
        .find(|l| l.starts_with("cmdstat_evalsha:"))
        .expect("evalsha stats");
    let field = line
        .split(',')
        .find_map(|f| f.strip_prefix("usec_per_call="))
        .expect("usec_per_call");
    field.parse().unwrap()
}

/// Median microseconds per sandbox run (keyspace reset outside the timed part).
fn sandbox_usec(sandbox: &mut Sandbox, sample: &Sample, seed_db: &Db, runs: usize) -> f64 {
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs + runs / 10 {
        sandbox.set_db0(seed_db.clone());
        let started = Instant::now();
        let report = black_box(sandbox.run(&sample.request));
        let t = started.elapsed();
        if i >= runs / 10 {
            times.push(t.as_nanos() as f64 / 1000.0);
        }
        assert!(
            !report.reply.is_error() || sample.name.contains("error"),
            "{}: {:?}",
            sample.name,
            report.reply
        );
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn geometric_mean(values: &[f64]) -> f64 {
    (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp()
}

fn stop_latency_ms(profile: &'static Profile, threshold_ms: u64, runs: usize) -> (f64, f64) {
    let mut sandbox = Sandbox::new();
    sandbox.set_profile(profile);
    sandbox.config.busy_threshold_ms = threshold_ms;
    let mut late: Vec<f64> = (0..runs)
        .map(|_| {
            let report = sandbox.run(&RunRequest::new("while true do end"));
            report.elapsed_ns as f64 / 1e6 - threshold_ms as f64
        })
        .collect();
    late.sort_by(f64::total_cmp);
    (late[late.len() / 2], late[late.len() - 1])
}

/// The 1-minute load average (/proc/loadavg), to print beside the figures.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// CPUs this process may run on (1 when pinned with `taskset -c N`).
fn cpus_allowed() -> usize {
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return 0;
        }
        libc::CPU_COUNT(&set) as usize
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// One sample's figures over the rounds.
#[derive(Default)]
struct Rounds {
    redis: Vec<f64>,
    on: Vec<f64>,
    off: Vec<f64>,
}

fn main() {
    let profile_id = std::env::var("EVALBENCH_PROFILE").unwrap_or_else(|_| "redis-7.0".into());
    let profile = Profile::by_id(&profile_id).unwrap_or_else(|e| panic!("{e}"));
    let Some(server) = RedisServer::start_profile(&profile_id) else {
        eprintln!("the server of profile {profile_id} is needed for this benchmark");
        return;
    };
    let load_before = load_average();
    let cpus = cpus_allowed();
    println!(
        "profile {profile_id}, load average {load_before}, {cpus} CPU(s) allowed{}",
        if cpus == 1 {
            " (pinned)"
        } else {
            "; for steadier figures pin the bench and its server to one CPU: taskset -c 1 (README, Benchmarks)"
        }
    );
    let mut conn = server.connect();
    let samples = samples();
    let quick = std::env::var("EVALBENCH_BENCH_QUICK").is_ok();
    let (batches, per_batch, runs, rounds) = if quick {
        (2, 50, 300, 11)
    } else {
        (4, 200, 2000, 31)
    };

    // This machine is shared and noisy. Each round measures every sample, Redis and the sandbox
    // back to back, so a round is the whole suite at one moment; a first round warms both sides
    // up (caches, allocator, the server's script cache) and is not counted. Figures: medians over
    // the rounds, and the spread of the rounds' geometric means.
    let mut sandboxes: Vec<(Sandbox, Db)> = samples
        .iter()
        .map(|sample| {
            let mut sandbox = Sandbox::new();
            sandbox.set_profile(profile);
            let seed_db = keyspace_from_json(&sample.seed.to_string(), sandbox.now_ms())
                .expect("sample seed");
            (sandbox, seed_db)
        })
        .collect();
    let mut figures: Vec<Rounds> = samples.iter().map(|_| Rounds::default()).collect();
    for round in 0..=rounds {
        for ((sample, (sandbox, seed_db)), figures) in
            samples.iter().zip(&mut sandboxes).zip(&mut figures)
        {
            let r = redis_usec_per_call(&mut conn, sample, batches, per_batch);
            sandbox.config.tracing = true;
            let t_on = sandbox_usec(sandbox, sample, seed_db, runs);
            sandbox.config.tracing = false;
            let t_off = sandbox_usec(sandbox, sample, seed_db, runs);
            if round > 0 {
                figures.redis.push(r);
                figures.on.push(t_on);
                figures.off.push(t_off);
            }
        }
    }

    println!(
        "\n{:<22} {:>10} {:>12} {:>8} {:>12} {:>8}   (medians of {rounds} interleaved rounds)",
        "script", "redis µs", "sandbox µs", "ratio", "no-trace µs", "ratio"
    );
    let ratios = |side: &[f64], redis: &[f64]| -> Vec<f64> {
        side.iter().zip(redis).map(|(s, r)| s / r).collect()
    };
    let (mut ratios_on, mut ratios_off) = (Vec::new(), Vec::new());
    let (mut best_on, mut best_off) = (Vec::new(), Vec::new());
    for (sample, f) in samples.iter().zip(&figures) {
        let (ratio_on, ratio_off) = (
            median(ratios(&f.on, &f.redis)),
            median(ratios(&f.off, &f.redis)),
        );
        // Best of the rounds on each side: the estimator least moved by other load on the machine.
        best_on.push(min(&f.on) / min(&f.redis));
        best_off.push(min(&f.off) / min(&f.redis));
        println!(
            "{:<22} {:>10.2} {:>12.2} {:>8.2} {:>12.2} {:>8.2}",
            sample.name,
            median(f.redis.clone()),
            median(f.on.clone()),
            ratio_on,
            median(f.off.clone()),
            ratio_off
        );
        ratios_on.push(ratio_on);
        ratios_off.push(ratio_off);
    }
    // Each round's geometric mean over the samples: how far one run of the suite may land.
    let per_round = |side: fn(&Rounds) -> &Vec<f64>| -> Vec<f64> {
        (0..rounds)
            .map(|r| {
                let ratios: Vec<f64> = figures.iter().map(|f| side(f)[r] / f.redis[r]).collect();
                geometric_mean(&ratios)
            })
            .collect()
    };
    let (rounds_on, rounds_off) = (per_round(|f| &f.on), per_round(|f| &f.off));
    println!(
        "geometric mean sandbox/redis: tracing on {:.2}, tracing off {:.2} ({} scripts, medians of per-round ratios)",
        geometric_mean(&ratios_on),
        geometric_mean(&ratios_off),
        samples.len()
    );
    println!(
        "geometric mean sandbox/redis per round (min / median / max of {rounds}): tracing on {:.2} / {:.2} / {:.2}, tracing off {:.2} / {:.2} / {:.2}",
        min(&rounds_on),
        median(rounds_on.clone()),
        max(&rounds_on),
        min(&rounds_off),
        median(rounds_off.clone()),
        max(&rounds_off)
    );
    println!(
        "geometric mean sandbox/redis: tracing on {:.2}, tracing off {:.2} (best of {rounds} rounds on each side)",
        geometric_mean(&best_on),
        geometric_mean(&best_off)
    );
    let (median, worst) = stop_latency_ms(profile, 100, if quick { 5 } else { 20 });
    println!("while-true stop latency after a 100 ms threshold: median {median:.3} ms, worst {worst:.3} ms");
    println!(
        "load average {load_before} before, {} after\n",
        load_average()
    );

    // Quick: a glance at each sample (the ratios above are the figures this bench is for).
    let (measure, warm_up) = if quick { (300, 100) } else { (2000, 500) };
    let mut criterion = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_millis(measure))
        .warm_up_time(Duration::from_millis(warm_up));
    let mut group = criterion.benchmark_group("sandbox");
    for sample in &samples {
        let mut sandbox = Sandbox::new();
        sandbox.set_profile(profile);
        let seed_db =
            keyspace_from_json(&sample.seed.to_string(), sandbox.now_ms()).expect("sample seed");
        group.bench_function(&sample.name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    sandbox.set_db0(seed_db.clone());
                    let started = Instant::now();
                    black_box(sandbox.run(&sample.request));
                    total += started.elapsed();
                }
                total
            })
        });
    }
    group.finish();
    criterion.final_summary();
}
