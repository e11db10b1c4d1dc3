//! Time to the live inspector's first screen on a 1,000,000-key server started by the benchmark:
//! `first_page` (want 100 keys, at most MAX_CALLS SCAN calls of COUNT 1000) plus `summarize_many`
//! of the first 100 keys found (two pipelined round trips), with no pattern and with a MATCH pattern that
//! matches 11 keys (the scan stops at MAX_CALLS; the UI shows "scanned N of DBSIZE" and continues).
//! Then the workbench's Server tab as its inspector thread does it (`InspectorCore`: the scan until
//! 1,000 keys are listed, 120 summaries, the first page of the first key).
//! Printed: the median over 11 runs and whether it is within 100 ms.
//! `cargo bench --bench live_inspect`; needs redis-server on PATH.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{median, RedisServer};
use evalbench::engine::live::inspect::{first_page, summarize_many, KeyScan};
use evalbench::engine::live::{LiveBackend, TargetSpec};
use std::time::Instant;

const KEYS: usize = 1_000_000;
const WANT: usize = 100;
const MAX_CALLS: usize = 50;
const RUNS: usize = 11;

fn main() {
    let Some(server) = RedisServer::start() else {
        eprintln!("redis-server is needed for this benchmark");
        return;
    };
    // Fill with pipelined MSETs of 1,000 keys (DEBUG POPULATE is disabled by default in Redis 7).
    let started = Instant::now();
    let mut conn = server.connect();
    let msets: Vec<Vec<Vec<u8>>> = (0..KEYS / 1000)
        .map(|batch| {
            let mut args = vec![b"MSET".to_vec()];
            for i in batch * 1000..(batch + 1) * 1000 {
                args.push(format!("key:{i}").into_bytes());
                args.push(format!("value:{i}").into_bytes());
            }
            args
        })
        .collect();
    for chunk in msets.chunks(50) {
        for reply in conn.pipeline(chunk) {
            assert!(!reply.is_error(), "{reply:?}");
        }
    }
    println!(
        "filled {KEYS} keys in {:.0} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );

    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..TargetSpec::default()
    }
    .resolve()
    .unwrap();
    let mut live = LiveBackend::connect(target).unwrap();

    // key:12345 and key:123450..key:123459.
    let cases: [(&str, Option<&[u8]>); 2] = [
        ("no pattern", None),
        ("MATCH key:12345* (11 keys)", Some(b"key:12345*")),
    ];
    for (name, pattern) in cases {
        let mut times = Vec::new();
        let mut found = 0;
        let mut calls = 0;
        for _ in 0..RUNS {
            let t = Instant::now();
            let (keys, scan) = first_page(&mut live, pattern, None, WANT, MAX_CALLS).unwrap();
            // The screen shows the first WANT keys (a SCAN call may return more).
            let shown = &keys[..keys.len().min(WANT)];
            let summaries = summarize_many(&mut live, shown).unwrap();
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            found = summaries.iter().flatten().count();
            calls = scan.scanned_calls();
        }
        let m = median(&mut times);
        println!(
            "first page, {name}: median {m:.1} ms over {RUNS} runs ({found} keys summarised, {calls} SCAN calls) -> {}",
            if m <= 100.0 { "within 100 ms" } else { "OVER 100 ms" }
        );
    }

    // The workbench's Server tab, as its inspector thread does it: the scan until 1,000 keys are
    // listed, the summaries of the keys around the selection, and the first page of the first key.
    {
        use evalbench::engine::live::inspect::PageCursor;
        use evalbench::tui::inspector::{InspectEvent, InspectRequest, InspectorCore};
        use evalbench::tui::server::{LIST_STEP, VALUE_PAGE};
        let target = TargetSpec {
            url: Some(format!("redis://127.0.0.1:{}", server.port)),
            ..TargetSpec::default()
        }
        .resolve()
        .unwrap();
        let mut core = InspectorCore::new(LiveBackend::connect(target).unwrap());
        let mut times = Vec::new();
        let mut listed = 0;
        for generation in 0..RUNS as u64 {
            let t = Instant::now();
            core.handle(InspectRequest::Scan {
                generation,
                pattern: None,
                kind: None,
                want: LIST_STEP,
            });
            let mut keys = Vec::new();
            while let Some(event) = core.step() {
                if let InspectEvent::Keys { keys: found, .. } = event {
                    keys.extend(found);
                }
            }
            let window: Vec<Vec<u8>> = keys.iter().take(120).cloned().collect();
            core.handle(InspectRequest::Summaries { keys: window });
            core.handle(InspectRequest::Page {
                key: keys[0].clone(),
                kind: "string".into(),
                cursor: PageCursor::Start,
                count: VALUE_PAGE,
                pattern: None, // issue 11: the plain value, not a search
            });
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            listed = keys.len();
        }
        let m = median(&mut times);
        println!(
            "Server tab first screen ({listed} keys listed, 120 summarised, 1 page): median {m:.1} ms over {RUNS} runs -> {}",
            if m <= 100.0 { "within 100 ms" } else { "OVER 100 ms" }
        );
    }

    // For scale: the whole sparse scan to the end (what the UI continues in the background).
    let mut times = Vec::new();
    let mut found = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let mut scan = KeyScan::new(Some(b"key:12345*"), None, 1000);
        found = 0;
        while !scan.done() {
            found += scan.step(&mut live).unwrap().len();
        }
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "full scan, MATCH key:12345*: median {:.0} ms over 3 runs ({found} keys)",
        median(&mut times)
    );
}
