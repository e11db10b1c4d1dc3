//! Runs the samples in the sandbox in a loop, without a server: a steady target for `perf record`
//! and a per-sample µs figure per profile (is a profile slower in the sandbox, or only its server
//! faster?). The same runs as `benches/sandbox_vs_redis.rs` (keyspace reset outside the timing).
//!
//! `cargo build --release --example sandbox_profile && perf record -F 5000 -g
//! ./target/release/examples/sandbox_profile [SECONDS-PER-SAMPLE] [NAME-FILTER]`;
//! `EVALBENCH_PROFILE=ID` picks the profile (or `all`: a table of every profile),
//! `EVALBENCH_TRACING=0` switches the trace off.

use evalbench::engine::keyspace::keyspace_from_json;
use evalbench::engine::profile::{Profile, PROFILES};
use evalbench::engine::{RunRequest, Sandbox};
use serde_json::Value as Json;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The `evalbench` binary's allocator (src/main.rs): mimalloc, counted for the memory budget.
#[global_allocator]
static GLOBAL: evalbench::engine::budget::CountingAlloc<mimalloc::MiMalloc> =
    evalbench::engine::budget::CountingAlloc(mimalloc::MiMalloc);

/// The bench's samples: `return 1` and every EVAL sample with its sidecar (not the libraries).
fn samples() -> Vec<(String, RunRequest, Json)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("samples/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "lua"))
        .collect();
    paths.sort();
    let mut out = vec![(
        "return_1".to_string(),
        RunRequest::new("return 1"),
        serde_json::json!({}),
    )];
    for path in paths {
        let Ok(text) = std::fs::read_to_string(path.with_extension("json")) else {
            continue;
        };
        let car: Json = serde_json::from_str(&text).expect("sidecar JSON");
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
        let request = RunRequest {
            script: std::fs::read(&path).expect("sample"),
            keys: strings(&car["keys"]),
            argv: strings(&car["argv"]),
            ..RunRequest::default()
        };
        let seed = car.get("keyspace").cloned().unwrap_or(Json::Null);
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        out.push((name, request, seed));
    }
    out
}

/// Median µs per run of one sample for `duration` (runs of 200, the median of their means).
fn measure(
    profile: &'static Profile,
    tracing: bool,
    request: &RunRequest,
    seed: &Json,
    duration: Duration,
) -> f64 {
    let mut sandbox = Sandbox::new();
    sandbox.set_profile(profile);
    sandbox.config.tracing = tracing;
    let seed_db = keyspace_from_json(&seed.to_string(), sandbox.now_ms()).expect("sample seed");
    let mut means = Vec::new();
    let end = Instant::now() + duration;
    while Instant::now() < end || means.is_empty() {
        let mut total = Duration::ZERO;
        for _ in 0..200 {
            sandbox.set_db0(seed_db.clone());
            let started = Instant::now();
            black_box(sandbox.run(request));
            total += started.elapsed();
        }
        means.push(total.as_nanos() as f64 / 200.0 / 1000.0);
    }
    means.sort_by(f64::total_cmp);
    means[means.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(2.0);
    let filter = args.next().unwrap_or_default();
    let tracing = std::env::var("EVALBENCH_TRACING").map_or(true, |v| v != "0");
    let wanted = std::env::var("EVALBENCH_PROFILE").unwrap_or_else(|_| "redis-7.0".into());
    let profiles: Vec<&'static Profile> = if wanted == "all" {
        PROFILES.iter().collect()
    } else {
        vec![Profile::by_id(&wanted).unwrap_or_else(|e| panic!("{e}"))]
    };
    let duration = Duration::from_secs_f64(seconds);
    print!(
        "{:<20}",
        format!("µs (tracing {})", if tracing { "on" } else { "off" })
    );
    for p in &profiles {
        print!(" {:>10}", p.id);
    }
    println!();
    for (name, request, seed) in samples().iter().filter(|s| s.0.contains(&filter)) {
        print!("{name:<20}");
        for profile in &profiles {
            print!(
                " {:>10.2}",
                measure(profile, tracing, request, seed, duration)
            );
        }
        println!();
    }
}
