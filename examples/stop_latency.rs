//! How late the busy threshold stops scripts whose time is spent inside C functions: each loop
//! runs N times (default 20) with a 100 ms threshold; prints the median, p99 and worst time past
//! the threshold.
//!
//! `cargo run --release --example stop_latency [RUNS] [NAME-FILTER]`; `EVALBENCH_PROFILE=ID` runs
//! the loops in that server profile (default redis-7.0; `all`: each profile in turn, issue 12);
//! with STOP_LATENCY_TIMELINE=1
//! each run's deadline and end (CLOCK_MONOTONIC) go to stderr, to match with
//! `perf record -k CLOCK_MONOTONIC -g` samples (`perf script`) of the late part.

use evalbench::engine::profile::{Profile, PROFILES};
use evalbench::engine::report::Outcome;
use evalbench::engine::{RunRequest, Sandbox};

/// The `evalbench` binary's allocator (src/main.rs): mimalloc, counted for the memory budget.
#[global_allocator]
static GLOBAL: evalbench::engine::budget::CountingAlloc<mimalloc::MiMalloc> =
    evalbench::engine::budget::CountingAlloc(mimalloc::MiMalloc);

const LOOPS: &[(&str, &str)] = &[
    ("while true do end", "while true do end"),
    ("string.rep 40 times", "for i = 1, 40 do local s = string.rep('x', 2^26) end"),
    ("string.rep forever", "while true do local s = string.rep('x', 2^26) end"),
    ("string.rep under pcall", "while true do local ok, e = pcall(string.rep, 'x', 2^26) end"),
    ("table.concat", "local t = {} for i = 1, 2^16 do t[i] = string.rep('x', 256) end while true do local s = table.concat(t) end"),
    ("string.format %s", "local big = string.rep('x', 2^24) while true do local s = string.format('%s%s%s%s', big, big, big, big) end"),
    ("gsub", "local s = string.rep('x', 2^22) while true do local r = s:gsub('x', 'yy') end"),
    ("concatenation", "while true do local s = string.rep('x', 2^25) .. string.rep('y', 2^25) end"),
    ("pattern backtracking", "local s = string.rep('a', 2^20) local i = s:find('.-.-.-b')"),
    ("cjson.encode", "local t = {} for i = 1, 2^16 do t[i] = i end local big = {} for i = 1, 64 do big[i] = t end while true do local s = cjson.encode(big) end"),
    ("cjson.encode of a string", "local s = string.rep('\"', 2^25) while true do local j = cjson.encode(s) end"),
    ("cjson.decode", "local j = '[' .. string.rep('1,', 2^20) .. '1]' while true do local t = cjson.decode(j) end"),
    ("xpcall handler loop", "return xpcall(function() error('x') end, function() while true do end end)"),
    ("pcall in a coroutine", "local co = coroutine.create(function() return pcall(function() while true do end end) end) local ok, caught, e = coroutine.resume(co) return e"),
    ("table.sort", "local t = {} for i = 1, 2^20 do t[i] = (i * 7919) % 1048583 end while true do table.sort(t) end"),
    ("table.sort in a handler", "local t = {} for i = 1, 2^20 do t[i] = (i * 7919) % 1048583 end return xpcall(function() error('x') end, function() while true do table.sort(t) end end)"),
    ("KEYS hostile pattern", "for i = 1, 20000 do redis.call('SET', string.rep('a', 2000) .. i, 1) end while true do redis.call('KEYS', '*a*a*a*a*a*a*a*a*a*a*a*a*a*ab') end"),
    ("cmsgpack.pack", "local t = {} for i = 1, 2^16 do t[i] = i end local big = {} for i = 1, 64 do big[i] = t end while true do local s = cmsgpack.pack(big) end"),
];

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(20)
        .max(1);
    let filter = args.next().unwrap_or_default();
    // Each run's deadline and end on CLOCK_MONOTONIC (stderr), to read a perf profile of the late part.
    let timeline = std::env::var_os("STOP_LATENCY_TIMELINE").is_some();
    let wanted = std::env::var("EVALBENCH_PROFILE").unwrap_or_else(|_| "redis-7.0".into());
    let profiles: Vec<&'static Profile> = if wanted == "all" {
        PROFILES.iter().collect()
    } else {
        match Profile::by_id(&wanted) {
            Ok(p) => vec![p],
            Err(e) => {
                eprintln!("stop_latency: EVALBENCH_PROFILE: {e}");
                std::process::exit(2);
            }
        }
    };
    for profile in profiles {
        println!("profile {}", profile.id);
        measure(profile, runs, &filter, timeline);
    }
}

/// Each loop `runs` times in `profile`, with the median, p99 and worst time past the threshold.
fn measure(profile: &'static Profile, runs: usize, filter: &str, timeline: bool) {
    const THRESHOLD_MS: u64 = 100;
    for (name, script) in LOOPS.iter().filter(|(n, _)| n.contains(filter)) {
        let mut late: Vec<f64> = (0..runs)
            .map(|_| {
                let mut sandbox = Sandbox::new();
                sandbox.set_profile(profile);
                sandbox.config.busy_threshold_ms = THRESHOLD_MS;
                let start = monotonic_ns();
                let report = sandbox.run(&RunRequest::new(*script));
                assert_eq!(
                    report.outcome,
                    Outcome::Killed,
                    "{name}: {:?}",
                    report.reply
                );
                let late = report.elapsed_ns as f64 / 1e6 - THRESHOLD_MS as f64;
                if timeline {
                    // CLOCK_MONOTONIC, as `perf record -k CLOCK_MONOTONIC` stamps its samples.
                    // (`start` is a little before the run's own start: the deadline shown is early by the
                    // run's setup, microseconds.)
                    let deadline = start + THRESHOLD_MS * 1_000_000;
                    let end = start + report.elapsed_ns;
                    eprintln!(
                        "{name}: late {late:.2} ms, deadline {:.6} s, end {:.6} s",
                        deadline as f64 / 1e9,
                        end as f64 / 1e9
                    );
                }
                late
            })
            .collect();
        late.sort_by(f64::total_cmp);
        let p99 = late[((late.len() * 99).div_ceil(100)).saturating_sub(1)];
        println!(
            "{name:<24} past the threshold over {runs} runs: median {:.2} ms, p99 {p99:.2} ms, worst {:.2} ms",
            late[late.len() / 2],
            late[late.len() - 1]
        );
    }
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
