//! One memory budget for everything a run allocates (Lua, keyspace, trace, reply,
//! snapshots), bounded trace copies, JSON linear in the reply, a bounded reply preview.
//! Probes that once exhausted memory run through the real binary, whose peak RSS is checked against the
//! budget (`/usr/bin/time -f %M`).

use evalbench::engine::budget::CountingAlloc;
use evalbench::engine::keyspace::{Db, Value};
use evalbench::engine::{Reply, RunRequest, Sandbox};
use std::process::Command;
use std::sync::Mutex;

// As the binary: the Rust heap counts against the budget.
#[global_allocator]
static GLOBAL: CountingAlloc<mimalloc::MiMalloc> = CountingAlloc(mimalloc::MiMalloc);

/// The count is process-wide: tests that measure against a budget run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const MIB: usize = 1 << 20;

fn sandbox(budget_mib: usize) -> Sandbox {
    let mut s = Sandbox::new();
    s.config.memory_limit = budget_mib * MIB;
    s
}

fn run(s: &mut Sandbox, script: &str) -> evalbench::engine::RunReport {
    s.run(&RunRequest::new(script))
}

fn over_budget(mib: usize) -> String {
    format!("ERR evalbench: the run used more than the sandbox's memory budget ({mib} MiB: Lua, keyspace, trace and reply together); a real server would keep allocating (raise the budget with --max-memory MIB, or memory_limit_mb in the workbench's config.toml)")
}

fn error_text(report: &evalbench::engine::RunReport) -> String {
    match &report.reply {
        Reply::Error(e) => e.clone(),
        other => panic!("expected an error reply, got {other:?}"),
    }
}

#[test]
fn setrange_past_the_budget_is_refused_before_allocating() {
    let _g = serial();
    let mut s = sandbox(64);
    let report = run(
        &mut s,
        "redis.call('SETRANGE', 'k', 536870911, 'x')\nreturn 1",
    );
    let text = error_text(&report);
    assert!(
        text.starts_with(&over_budget(64)),
        "unexpected error: {text}"
    );
    assert!(text.ends_with("on @user_script:1."), "{text}");
    assert!(!s.keyspace().db(0).contains(b"k", 0), "nothing was written");
    // The process stays healthy: the next run works.
    let report = run(&mut s, "return redis.call('SET', 'k', 'v')");
    assert_eq!(report.reply, Reply::Status("OK".into()));
}

#[test]
fn append_growth_past_the_budget_is_refused() {
    let _g = serial();
    let mut s = sandbox(64);
    let mut db = Db::new();
    db.set(b"k".to_vec(), Value::Str(vec![b'x'; 40 * MIB]));
    s.set_db0(db);
    let report = run(&mut s, "return redis.call('APPEND', 'k', 'y')");
    assert!(error_text(&report).starts_with(&over_budget(64)));
    assert_eq!(
        s.keyspace().db(0).raw_entries()[&b"k".to_vec()]
            .value
            .size(),
        40 * MIB
    );
}

#[test]
fn pcall_cannot_swallow_the_budget_stop() {
    let _g = serial();
    let mut s = sandbox(64);
    let report = run(
        &mut s,
        "local ok = pcall(redis.call, 'SETRANGE', 'k', 536870911, 'x')\nlocal x = 1\nreturn 'survived'",
    );
    assert!(error_text(&report).starts_with(&over_budget(64)));
}

#[test]
fn a_reply_past_the_budget_stops_the_run_and_the_next_run_works() {
    let _g = serial();
    let mut s = sandbox(64);
    // 2M integers: ~32 MB of Lua table, ~112 MB of reply.
    let report = run(
        &mut s,
        "local t = {} for i = 1, 2000000 do t[i] = i end return t",
    );
    assert_eq!(error_text(&report), over_budget(64));
    let report = run(&mut s, "return {1, 2}");
    assert_eq!(
        report.reply,
        Reply::Array(vec![Reply::Int(1), Reply::Int(2)])
    );
}

#[test]
fn the_keyspace_counts_against_the_budget() {
    let _g = serial();
    let mut s = sandbox(64);
    // Each SET copies 8 MB into the keyspace; the eighth does not fit.
    let report = run(
        &mut s,
        "local v = string.rep('x', 8 * 1024 * 1024)\nfor i = 1, 20 do redis.call('SET', 'k' .. i, v) end\nreturn 1",
    );
    assert!(error_text(&report).starts_with(&over_budget(64)));
    let kept = s.keyspace().db(0).len(0);
    assert!((2..8).contains(&kept), "{kept} keys kept");
}

#[test]
fn trace_entries_keep_bounded_copies_with_the_true_size() {
    let _g = serial();
    let mut s = sandbox(1024);
    let report = run(
        &mut s,
        "redis.call('SET', 'k', string.rep('x', 1000000))\nfor i = 1, 20 do redis.call('GET', 'k') end\nfor i = 1, 5000 do redis.call('RPUSH', 'l', i) end\nreturn redis.call('LRANGE', 'l', 0, -1)",
    );
    assert!(
        matches!(&report.reply, Reply::Array(a) if a.len() == 5000),
        "the reply stays whole"
    );
    let set = &report.trace[0];
    assert_eq!(set.command.len(), 3);
    assert_eq!(set.keys, vec![b"k".to_vec()]);
    let mut expected = vec![b'x'; 64 * 1024 - 5];
    expected.extend_from_slice("… (1,000,000 bytes)".as_bytes());
    assert!(
        set.command[2] == expected,
        "SET's value cut after the key, SET and k"
    );
    let get = &report.trace[1];
    let mut expected = vec![b'x'; 64 * 1024];
    expected.extend_from_slice("… (1,000,000 bytes)".as_bytes());
    assert!(
        get.reply == Reply::Bulk(expected),
        "GET's reply cut at 64 KiB"
    );
    let lrange = report.trace.last().unwrap();
    let Reply::Array(items) = &lrange.reply else {
        panic!("{:?}", lrange.reply)
    };
    assert_eq!(items.len(), 1001);
    assert_eq!(items[999], Reply::Bulk(b"1000".to_vec()));
    assert_eq!(
        items[1000],
        Reply::Status("… 4,000 more (5,000 elements)".into())
    );
    // The JSON and the text report show the same cut copies.
    let json = report.to_json();
    let shown = json["trace"][1]["reply"]["bulk"].as_str().unwrap();
    assert!(shown.ends_with("x… (1,000,000 bytes)"));
}

#[test]
fn calls_beyond_the_traced_ones_are_counted() {
    let _g = serial();
    let mut s = sandbox(1024);
    let report = run(
        &mut s,
        "for i = 1, 100005 do redis.call('PING') end return 1",
    );
    assert_eq!(report.trace.len(), 100_000);
    assert!(report.warnings.iter().any(|w| w.message
        == "5 more calls were made than the 100000 evalbench traces"
        && w.kind.name() == "trace-limit"));
}

#[test]
fn snapshots_that_would_not_fit_are_skipped_with_a_warning() {
    let _g = serial();
    let mut s = sandbox(64);
    s.config.snapshots = true;
    let mut db = Db::new();
    db.set(b"big".to_vec(), Value::Str(vec![b'x'; 20 * MIB]));
    s.set_db0(db);
    let report = run(
        &mut s,
        "for i = 1, 5 do redis.call('INCR', 'n') end return 1",
    );
    assert_eq!(report.reply, Reply::Int(1));
    assert!(
        report.snapshots.len() < 5,
        "{} kept",
        report.snapshots.len()
    );
    let skipped = 5 - report.snapshots.len();
    assert!(report.warnings.iter().any(|w| w.message
        == format!("{skipped} writes have no keyspace snapshot for stepping: a copy would not fit the memory budget (64 MiB)")));
}

#[test]
fn json_of_a_deeply_nested_reply_is_linear() {
    let _g = serial();
    let mut s = sandbox(1024);
    let report = run(&mut s, "local t = {} t[1] = t return t");
    let mut out = Vec::new();
    report.write_json(Default::default(), &mut out).unwrap();
    // Indenting all ~8,000 levels made it 511 MB; the text report is 24 KB.
    assert!(out.len() < 200_000, "{} bytes", out.len());
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("{\n  \"reply\": {\n    \"array\": [\n"));
    // Compact below the indentation cap.
    assert!(text.contains("[{\"array\":[{\"array\":["));
}

#[test]
fn a_table_nested_in_itself_reserves_no_capacity_down_the_chain() {
    let _g = serial();
    let mut s = sandbox(64);
    // The conversion descends r[1][1]... to the Lua stack limit; each level of r used to reserve
    // 2,000 slots before converting its first element: ~256 MiB for a reply of a few MiB.
    let report = run(
        &mut s,
        "local t={} t[1]=t local r={} for i=1,2000 do r[i]={r,t,{1,2,{3,{4}}}} end return r",
    );
    let mut depth = 0;
    let mut at = &report.reply;
    while let Reply::Array(items) = at {
        assert_eq!(items.len(), 1, "cut at the stack limit, at depth {depth}");
        at = &items[0];
        depth += 1;
    }
    assert_eq!(at, &Reply::Error("ERR reached lua stack limit".into()));
    assert!(depth > 1000, "{depth}");
}

#[test]
fn streamed_json_is_the_json_of_the_report() {
    let _g = serial();
    let mut s = sandbox(1024);
    let script = "redis.setresp(3)\nreturn {1, 'a', {double=1.5}, {double=1/0}, true, false, {map={a=1}}, {set={x=true}}, {big_number='123'}, {verbatim_string={format='txt', string='hi'}}, {ok='fine'}, {err='E bad'}, '\\255'}";
    for protocol in [
        evalbench::engine::Protocol::Resp2,
        evalbench::engine::Protocol::Resp3,
    ] {
        let report = s.run(&RunRequest {
            protocol,
            ..RunRequest::new(script)
        });
        let mut out = Vec::new();
        report.write_json(Default::default(), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string_pretty(&report.to_json()).unwrap()
        );
    }
}

#[test]
fn a_huge_reply_has_a_bounded_preview() {
    let _g = serial();
    let reply = Reply::Array((0..10_000_000).map(Reply::Int).collect());
    let Reply::Array(shown) = reply.preview() else {
        panic!()
    };
    assert_eq!(shown.len(), 1001);
    assert_eq!(
        shown[1000],
        Reply::Status("… 9,999,000 more (10,000,000 elements)".into())
    );
    let text = Reply::Bulk(vec![b'y'; 50_000_000]).preview();
    let mut expected = vec![b'y'; 64 * 1024];
    expected.extend_from_slice("… (50,000,000 bytes)".as_bytes());
    assert!(text == Reply::Bulk(expected), "cut at 64 KiB with the size");
}

/// Exit status, stdout and peak RSS (KiB) of `evalbench run ARGS`.
fn evalbench_rss(args: &[&str]) -> (i32, String, u64) {
    let rss_file = tempfile_path("rss");
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o", arg(&rss_file)])
        .arg(env!("CARGO_BIN_EXE_evalbench"))
        .args(args)
        .output()
        .expect("run /usr/bin/time evalbench");
    let rss = std::fs::read_to_string(&rss_file)
        .unwrap_or_default()
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        rss,
    )
}

/// A scratch file, removed when dropped.
fn tempfile_path(tag: &str) -> tempfile::TempPath {
    tempfile::Builder::new()
        .prefix("evalbench-mem-")
        .suffix(&format!("-{tag}"))
        .tempfile()
        .unwrap()
        .into_temp_path()
}

/// A scratch file's path as an argument.
fn arg(path: &tempfile::TempPath) -> &str {
    path.to_str().unwrap()
}

fn script_file(text: &str) -> tempfile::TempPath {
    let path = tempfile_path("script.lua");
    std::fs::write(&path, text).unwrap();
    path
}

/// Probes that once exhausted memory, through the binary at a 256 MiB budget: each ends (within the budget, or
/// with the budget's error) and its peak RSS stays under the budget plus a small constant.
#[test]
fn memory_hungry_probes_stay_within_the_budget() {
    if !std::path::Path::new("/usr/bin/time").exists() {
        eprintln!("skipped: /usr/bin/time is not installed");
        return;
    }
    let _g = serial();
    let limit_kib = (256 + 32) * 1024;
    let probes = [
        // 50 x GET of a 50 MB string (was 9.8 GB and SIGABRT).
        (
            "redis.call('SET', KEYS[1], string.rep('x', 50 * 1024 * 1024))\nfor i = 1, 50 do redis.call('GET', KEYS[1]) end\nreturn 1",
            0,
        ),
        // A 10M-element reply (was 8.3 GB in --json).
        ("local t = {}\nfor i = 1, 10000000 do t[i] = i end\nreturn t", 1),
        // 4 x SETRANGE at 512 MB (was 2.1 GB).
        (
            "for i = 1, 4 do redis.call('SETRANGE', 'k' .. i, 536870911, 'x') end\nreturn 1",
            1,
        ),
        // A self-referencing nested reply (was 511 MB of JSON, then 416 MB of RSS: with
        // transparent huge pages each 2 MiB the conversion touched became resident).
        ("local t = {} t[1] = t return t", 0),
        (
            "local t={} t[1]=t local r={} for i=1,2000 do r[i]={r,t,{1,2,{3,{4}}}} end return r",
            0,
        ),
    ];
    for (script, code) in probes {
        let path = script_file(script);
        // No busy threshold: these probe memory, and under load a debug build's 50 GETs of 50 MB
        // passed the default 5 s and were killed (exit 1: the test's one flake).
        let (status, stdout, rss) = evalbench_rss(&[
            "run",
            "--json",
            "--busy-threshold",
            "0",
            "--max-memory",
            "256",
            arg(&path),
            "k",
        ]);
        assert_eq!(status, code, "{script}: {stdout}");
        if code == 1 {
            assert!(stdout.contains(&over_budget(256)), "{stdout}");
        }
        assert!(
            rss > 0 && rss < limit_kib,
            "{script}: peak RSS {rss} KiB, budget 256 MiB"
        );
    }
}

#[test]
fn the_budget_flag_is_checked() {
    let path = script_file("return 1");
    let (status, _, _) = evalbench_rss(&["run", "--max-memory", "0", arg(&path)]);
    assert_eq!(status, 2);
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(["run", "--memory-limit", "64", arg(&path)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

/// `redis.log` keeps the first 64 KiB of a message and 1 MiB of log in all; the rest is counted.
#[test]
fn the_log_keeps_the_first_bytes_of_each_message_and_a_total() {
    let _g = serial();
    let mut s = sandbox(64);
    let report = run(
        &mut s,
        "local s = string.rep('x', 16 * 1024 * 1024)\nfor i = 1, 100 do redis.log(redis.LOG_WARNING, s) end\nreturn #s",
    );
    assert_eq!(report.reply, Reply::Int(16 << 20));
    let one = format!("{}… (16711680 bytes not shown)", "x".repeat(65536));
    let kept = (1 << 20) / one.len();
    assert_eq!(kept, 15);
    assert_eq!(report.logs.len(), kept + 1);
    for log in &report.logs[..kept] {
        assert_eq!(log.message, one.as_bytes());
        assert_eq!((log.level, log.line), (3, 2));
    }
    let last = report.logs.last().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&last.message),
        "… (85 more messages, 1426063360 bytes, not shown: a run keeps the first 1 MiB of its log)"
    );
}

#[test]
fn a_cut_log_message_ends_on_a_whole_character() {
    let _g = serial();
    let mut s = sandbox(64);
    // 'a' then two-byte characters: byte 65,536 is the second half of one.
    let report = run(
        &mut s,
        "redis.log(redis.LOG_NOTICE, 'a' .. string.rep('\\195\\169', 40000), 7)\nreturn 1",
    );
    let text = String::from_utf8(report.logs[0].message.clone()).expect("whole characters");
    assert_eq!(
        text,
        format!("a{}… (14468 bytes not shown)", "é".repeat(32767))
    );
}

/// A probe through the binary: 100 messages of 16 MiB under --max-memory 64 (was
/// 1.7 GB and SIGABRT) end normally within the budget.
#[test]
fn logging_huge_messages_stays_within_the_budget() {
    if !std::path::Path::new("/usr/bin/time").exists() {
        eprintln!("skipped: /usr/bin/time is not installed");
        return;
    }
    let _g = serial();
    let path = script_file(
        "local s = string.rep('x', 16 * 1024 * 1024)\nfor i = 1, 100 do redis.log(redis.LOG_WARNING, s) end\nreturn #s",
    );
    let (status, stdout, rss) = evalbench_rss(&[
        "run",
        "--busy-threshold",
        "0",
        "--max-memory",
        "64",
        arg(&path),
    ]);
    assert_eq!(status, 0, "{}", &stdout[..stdout.len().min(300)]);
    assert!(
        stdout.starts_with("backend: sandbox\n(integer) 16777216\n"),
        "{}",
        &stdout[..300]
    );
    assert!(stdout.contains("  [3] line 2: … (85 more messages, 1426063360 bytes, not shown: a run keeps the first 1 MiB of its log)\n"));
    assert!(rss > 0 && rss < (64 + 32) * 1024, "peak RSS {rss} KiB");
}

/// A seed of 1.5M one-byte list elements (6 MB of JSON, about 300 MB loaded) under
/// --max-memory 64: refused while parsing, with the file and its size, within the budget.
#[test]
fn a_seed_past_the_budget_is_refused_while_parsing() {
    if !std::path::Path::new("/usr/bin/time").exists() {
        eprintln!("skipped: /usr/bin/time is not installed");
        return;
    }
    let _g = serial();
    let seed = tempfile_path("seed.json");
    let mut text = String::from("{\"l\": {\"type\": \"list\", \"value\": [");
    for i in 0..1_500_000 {
        text.push_str(if i == 0 { "\"1\"" } else { ",\"1\"" });
    }
    text.push_str("]}}");
    std::fs::write(&seed, &text).unwrap();
    let script = script_file("return 1");
    let rss_file = tempfile_path("rss-seed");
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o", arg(&rss_file)])
        .arg(env!("CARGO_BIN_EXE_evalbench"))
        .args([
            "run",
            "--max-memory",
            "64",
            "--keyspace",
            arg(&seed),
            arg(&script),
        ])
        .output()
        .unwrap();
    let rss: u64 = std::fs::read_to_string(&rss_file)
        .unwrap_or_default()
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    // /usr/bin/time reports the exit status on stderr after evalbench's own line.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!("evalbench: {}: 6,000,035 bytes of keyspace JSON would take more than the memory budget (64 MiB) to load; seed only the keys the script uses, or raise the budget with --max-memory MIB (memory_limit_mb in the workbench's config.toml)\n", seed.display())),
        "{stderr}"
    );
    assert!(rss > 0 && rss < (64 + 32) * 1024, "peak RSS {rss} KiB");
}

#[test]
fn a_seed_within_the_budget_loads() {
    let _g = serial();
    let db = evalbench::engine::keyspace::keyspace_from_json(
        r#"{"k": "v", "l": {"type": "list", "value": ["a", "b"]}}"#,
        0,
    )
    .unwrap();
    assert_eq!(db.len(0), 2);
}
