//! A traced live run against a bare redis-crate EVALSHA round trip, measured in the same run on the
//! same loopback redis-server (started by the benchmark), interleaved in rounds.
//!
//! Bare: `EVALSHA sha numkeys keys.. args..` of the user's script on a redis::Connection (already
//! cached). Traced: `LiveBackend::run` with writes allowed (EVALSHA of the instrumented copy, decoding
//! of the envelope, trace annotation). Printed: median µs of each and their ratio, per script. Both
//! run with mimalloc, as in the shipped binary.
//! `cargo bench --bench live`; needs redis-server on PATH.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{median, RedisServer};
use evalbench::engine::live::{LiveBackend, TargetSpec, WriteMode};
use evalbench::engine::script::sha1_hex;
use evalbench::engine::RunRequest;
use redis::ConnectionLike;
use std::time::Instant;

/// The allocator the `evalbench` binary ships with (src/main.rs), for the bare round trip and the
/// live backend alike: parsing and decoding a reply are mostly small allocations.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let Some(server) = RedisServer::start() else {
        eprintln!("redis-server is needed for this benchmark");
        return;
    };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let target = TargetSpec {
        url: Some(url.clone()),
        ..TargetSpec::default()
    }
    .resolve()
    .unwrap();
    let mut live = LiveBackend::connect(target).unwrap();
    let mut bare = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let quick = std::env::var("EVALBENCH_BENCH_QUICK").is_ok();
    let (runs, rounds) = if quick { (200, 3) } else { (2000, 11) };
    let scripts: Vec<(&str, RunRequest)> = vec![
        ("return_1", RunRequest::new("return 1")),
        (
            "rate_limiter",
            RunRequest {
                script: std::fs::read(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/samples/rate_limiter.lua"
                ))
                .unwrap(),
                keys: vec![b"ratelimit:alice:42".to_vec()],
                argv: vec![b"1000000000".to_vec(), b"60".to_vec()],
                ..RunRequest::default()
            },
        ),
        (
            "hgetall_50_fields",
            RunRequest {
                script:
                    b"local n = redis.call('HLEN', KEYS[1]) return redis.call('HGETALL', KEYS[1])"
                        .to_vec(),
                keys: vec![b"h50".to_vec()],
                ..RunRequest::default()
            },
        ),
    ];
    let mut seed = redis::cmd("HSET");
    seed.arg("h50");
    for i in 0..50 {
        seed.arg(format!("field{i}")).arg(format!("value{i}"));
    }
    bare.req_command(&seed).unwrap();
    println!("\n{:<20} {:>10} {:>10} {:>7} {:>12} {:>7}   (medians of {rounds} interleaved rounds of {runs} runs)", "script", "bare µs", "traced µs", "ratio", "untraced µs", "ratio");
    let mut ratios = Vec::new();
    let mut untraced_ratios = Vec::new();
    for (name, request) in &scripts {
        let sha = sha1_hex(&request.script);
        let mut load = redis::cmd("SCRIPT");
        load.arg("LOAD").arg(&request.script[..]);
        bare.req_command(&load).unwrap();
        live.run(request, WriteMode::Allowed).unwrap();
        let mut evalsha = redis::cmd("EVALSHA");
        evalsha.arg(&sha).arg(request.keys.len());
        for k in &request.keys {
            evalsha.arg(&k[..]);
        }
        for a in &request.argv {
            evalsha.arg(&a[..]);
        }
        let (mut bare_us, mut traced_us, mut untraced_us) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let mut samples = Vec::with_capacity(runs);
            for _ in 0..runs {
                let t = Instant::now();
                std::hint::black_box(bare.req_command(&evalsha).unwrap());
                samples.push(t.elapsed().as_nanos() as f64 / 1000.0);
            }
            bare_us.push(median(&mut samples));
            let mut samples = Vec::with_capacity(runs);
            for _ in 0..runs {
                let t = Instant::now();
                std::hint::black_box(live.run(request, WriteMode::Allowed).unwrap());
                samples.push(t.elapsed().as_nanos() as f64 / 1000.0);
            }
            traced_us.push(median(&mut samples));
            live.tracing = false;
            let mut samples = Vec::with_capacity(runs);
            for _ in 0..runs {
                let t = Instant::now();
                std::hint::black_box(live.run(request, WriteMode::Allowed).unwrap());
                samples.push(t.elapsed().as_nanos() as f64 / 1000.0);
            }
            untraced_us.push(median(&mut samples));
            live.tracing = true;
        }
        let (b, t, u) = (
            median(&mut bare_us),
            median(&mut traced_us),
            median(&mut untraced_us),
        );
        ratios.push(t / b);
        untraced_ratios.push(u / b);
        println!(
            "{name:<20} {b:>10.1} {t:>10.1} {:>7.3} {u:>12.1} {:>7.3}",
            t / b,
            u / b
        );
    }
    let geomean = |r: &[f64]| (r.iter().map(|r| r.ln()).sum::<f64>() / r.len() as f64).exp();
    println!(
        "geometric mean ratio to bare EVALSHA: traced {:.3}, untraced {:.3} (target <= 1.1)",
        geomean(&ratios),
        geomean(&untraced_ratios)
    );
}
