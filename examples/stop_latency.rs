//! How late the busy threshold stops scripts whose time is spent inside C functions: each loop
//! runs 5 times with a 100 ms threshold; prints the median and worst time past the threshold.
//!
//! `cargo run --release --example stop_latency`

use evalbench::engine::report::Outcome;
use evalbench::engine::{RunRequest, Sandbox};

const LOOPS: &[(&str, &str)] = &[
    ("while true do end", "while true do end"),
    ("string.rep 40 times", "for i = 1, 40 do local s = string.rep('x', 2^26) end"),
    ("string.rep forever", "while true do local s = string.rep('x', 2^26) end"),
    ("string.rep under pcall", "while true do local ok, e = pcall(string.rep, 'x', 2^26) end"),
    ("table.concat", "local t = {} for i = 1, 2^16 do t[i] = string.rep('x', 256) end while true do local s = table.concat(t) end"),
    ("string.format %s", "local big = string.rep('x', 2^24) while true do local s = string.format('%s%s%s%s', big, big, big, big) end"),
    ("gsub", "local s = string.rep('x', 2^22) while true do local r = s:gsub('x', 'yy') end"),
    ("concatenation", "while true do local s = string.rep('x', 2^25) .. string.rep('y', 2^25) end"),
    ("cjson.encode", "local t = {} for i = 1, 2^16 do t[i] = i end local big = {} for i = 1, 64 do big[i] = t end while true do local s = cjson.encode(big) end"),
    ("cjson.decode", "local j = '[' .. string.rep('1,', 2^20) .. '1]' while true do local t = cjson.decode(j) end"),
    ("cmsgpack.pack", "local t = {} for i = 1, 2^16 do t[i] = i end local big = {} for i = 1, 64 do big[i] = t end while true do local s = cmsgpack.pack(big) end"),
];

fn main() {
    const THRESHOLD_MS: u64 = 100;
    for (name, script) in LOOPS {
        let mut late: Vec<f64> = (0..5)
            .map(|_| {
                let mut sandbox = Sandbox::new();
                sandbox.config.busy_threshold_ms = THRESHOLD_MS;
                let report = sandbox.run(&RunRequest::new(*script));
                assert_eq!(
                    report.outcome,
                    Outcome::Killed,
                    "{name}: {:?}",
                    report.reply
                );
                report.elapsed_ns as f64 / 1e6 - THRESHOLD_MS as f64
            })
            .collect();
        late.sort_by(f64::total_cmp);
        println!(
            "{name:<24} past the threshold: median {:.2} ms, worst {:.2} ms",
            late[late.len() / 2],
            late[late.len() - 1]
        );
    }
}
