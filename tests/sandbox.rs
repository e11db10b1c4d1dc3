//! Engine behaviour that a single EVAL on a real server cannot show: state across runs, the stop
//! at the busy threshold, trace details, conversion notes, warnings, memory limit, manual clock.

use evalbench::engine::clock::ManualClock;
use evalbench::engine::keyspace::keyspace_from_json;
use evalbench::engine::report::{Outcome, Via, WarningKind};
use evalbench::engine::{Protocol, Reply, RunRequest, Sandbox};

fn run(
    sandbox: &mut Sandbox,
    script: &str,
    keys: &[&str],
    argv: &[&str],
) -> evalbench::engine::RunReport {
    let request = RunRequest {
        script: script.as_bytes().to_vec(),
        keys: keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
        argv: argv.iter().map(|a| a.as_bytes().to_vec()).collect(),
        ..RunRequest::default()
    };
    sandbox.run(&request)
}

#[test]
fn kill_at_threshold_survives_pcall_and_the_vm_stays_usable() {
    let mut sandbox = Sandbox::new();
    sandbox.config.busy_threshold_ms = 30;
    let script = "local n = 0\nwhile true do pcall(function() while true do n = n + 1 end end) end";
    let report = run(&mut sandbox, script, &[], &[]);
    assert_eq!(report.outcome, Outcome::Killed);
    let Reply::Error(text) = &report.reply else {
        panic!("{:?}", report.reply)
    };
    assert!(
        text.starts_with("ERR Script killed by user with SCRIPT KILL... script: "),
        "{text}"
    );
    // Never before the threshold (how soon after it is a benchmark figure, not a test).
    assert!(report.elapsed_ns >= 30_000_000);
    assert_eq!(run(&mut sandbox, "return 1", &[], &[]).reply, Reply::Int(1));
}

#[test]
fn cancel_handle_stops_a_run() {
    let mut sandbox = Sandbox::new();
    sandbox.config.busy_threshold_ms = 0;
    let cancel = sandbox.cancel_handle();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(30));
        cancel.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let report = run(&mut sandbox, "while true do end", &[], &[]);
    stopper.join().unwrap();
    assert_eq!(report.outcome, Outcome::Cancelled);
    assert_eq!(run(&mut sandbox, "return 2", &[], &[]).reply, Reply::Int(2));
}

#[test]
fn write_after_kill_warns_unkillable() {
    let mut sandbox = Sandbox::new();
    sandbox.config.busy_threshold_ms = 20;
    let report = run(
        &mut sandbox,
        "redis.call('SET', KEYS[1], 'x')\nwhile true do end",
        &["k"],
        &[],
    );
    assert_eq!(report.outcome, Outcome::Killed);
    assert!(report
        .warnings
        .iter()
        .any(|w| w.kind == WarningKind::Unkillable));
    assert!(report.first_write_ns.is_some());
}

#[test]
fn trace_records_line_via_keys_and_writes() {
    let mut sandbox = Sandbox::new();
    let script = "redis.call('SET', KEYS[1], '1')\nlocal e = redis.pcall('INCRBY', KEYS[1], 'x')\nreturn redis.call('GET', 'undeclared')";
    let report = run(&mut sandbox, script, &["a"], &[]);
    assert_eq!(report.trace.len(), 3);
    let t = &report.trace;
    assert_eq!((t[0].line, t[0].write, t[0].via), (1, true, Via::Call));
    assert_eq!((t[1].line, t[1].write, t[1].via), (2, true, Via::Pcall));
    assert_eq!(
        t[1].reply,
        Reply::Error("ERR value is not an integer or out of range".into())
    );
    assert_eq!(t[2].keys, vec![b"undeclared".to_vec()]);
    assert!(report.first_write_ns.is_some());
    let undeclared: Vec<_> = report
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::UndeclaredKey)
        .collect();
    assert_eq!(undeclared.len(), 1);
    assert_eq!(undeclared[0].line, 3);
}

#[test]
fn partial_write_and_cross_slot_warnings() {
    let mut sandbox = Sandbox::new();
    let report = run(
        &mut sandbox,
        "redis.call('SET', KEYS[1], '1')\nerror('boom')",
        &["foo", "bar"],
        &[],
    );
    assert_eq!(report.outcome, Outcome::Raised);
    assert_eq!(report.error_line, Some(2));
    let kinds: Vec<_> = report.warnings.iter().map(|w| w.kind).collect();
    assert!(kinds.contains(&WarningKind::PartialWrite), "{kinds:?}");
    assert!(kinds.contains(&WarningKind::CrossSlot), "{kinds:?}");
    // The write stays: no rollback.
    assert_eq!(
        run(
            &mut sandbox,
            "return redis.call('GET', KEYS[1])",
            &["foo"],
            &[]
        )
        .reply,
        Reply::bulk("1")
    );
    let tagged = run(&mut sandbox, "return 1", &["{user}:a", "{user}:b"], &[]);
    assert!(tagged.warnings.is_empty());
}

#[test]
fn conversion_notes_explain_lossy_steps() {
    let mut sandbox = Sandbox::new();
    let report = run(
        &mut sandbox,
        "local t = {1, 3.7, false, nil, 5} t.name = 'x' return t",
        &[],
        &[],
    );
    assert_eq!(
        report.reply,
        Reply::Array(vec![Reply::Int(1), Reply::Int(3), Reply::Nil])
    );
    let notes: Vec<String> = report.notes.iter().map(|n| n.to_string()).collect();
    assert_eq!(
        notes,
        vec![
            "[2]: 3.7 truncated to integer 3",
            "[3]: false became a nil reply",
            "array cut at index 4: element is nil (1 more element(s) after it ignored)",
            "hash part of the table ignored (1 key(s): name)",
        ]
    );
}

#[test]
fn cjson_settings_persist_until_script_flush_but_the_rng_does_not_reset() {
    let mut sandbox = Sandbox::new();
    run(
        &mut sandbox,
        "cjson.encode_number_precision(3) return 1",
        &[],
        &[],
    );
    assert_eq!(
        run(&mut sandbox, "return cjson.encode(3.14159)", &[], &[]).reply,
        Reply::bulk("3.14")
    );
    let first = run(&mut sandbox, "return tostring(math.random())", &[], &[]).reply;
    assert_eq!(first, Reply::bulk("0.39646477363839"));
    sandbox.script_flush();
    assert_eq!(
        run(&mut sandbox, "return cjson.encode(3.14159)", &[], &[]).reply,
        Reply::bulk("3.14159")
    );
    assert_eq!(
        run(
            &mut sandbox,
            "return string.format('%.17g', math.random())",
            &[],
            &[]
        )
        .reply,
        Reply::bulk("0.84048536971234034")
    );
}

#[test]
fn read_only_runs_refuse_writes() {
    let mut sandbox = Sandbox::new();
    let mut request = RunRequest::new("return redis.call('SET', 'k', 'v')");
    request.read_only = true;
    let report = sandbox.run(&request);
    let Reply::Error(text) = &report.reply else {
        panic!()
    };
    assert!(
        text.starts_with("ERR Write commands are not allowed from read-only scripts. script: "),
        "{text}"
    );
    request.script = b"#!lua\nreturn 1".to_vec();
    assert_eq!(
        sandbox.run(&request).reply,
        Reply::err("ERR Can not execute a script with write flag using *_ro command.")
    );
    request.script = b"#!lua flags=no-writes\nreturn redis.call('GET', 'k')".to_vec();
    assert_eq!(sandbox.run(&request).reply, Reply::Nil);
}

#[test]
fn logs_are_captured_with_level_and_line() {
    let mut sandbox = Sandbox::new();
    let report = run(
        &mut sandbox,
        "\nredis.log(redis.LOG_WARNING, 'hello from lua', 42, {}, true, 'end')",
        &[],
        &[],
    );
    assert_eq!(report.logs.len(), 1);
    assert_eq!(report.logs[0].level, 3);
    assert_eq!(report.logs[0].line, 2);
    assert_eq!(report.logs[0].message, b"hello from lua 42 end".to_vec());
}

#[test]
fn memory_limit_stops_a_hungry_script() {
    let mut sandbox = Sandbox::new();
    sandbox.config.memory_limit = 64 << 20;
    let report = run(
        &mut sandbox,
        "local t = {} for i = 1, 1e9 do t[i] = {i, i, i, i, i, i, i, i} end",
        &[],
        &[],
    );
    let Reply::Error(text) = &report.reply else {
        panic!("{:?}", report.reply)
    };
    assert_eq!(
        text,
        &evalbench::engine::budget::over_budget_text(64 << 20),
        "the budget's error"
    );
    assert_eq!(run(&mut sandbox, "return 3", &[], &[]).reply, Reply::Int(3));
}

#[test]
fn manual_clock_drives_expiry() {
    let clock = ManualClock::new(1_700_000_000_000_000);
    let mut sandbox = Sandbox::with_clock(Box::new(clock.clone()));
    let db = keyspace_from_json(
        r#"{"k": {"type": "string", "value": "v", "ttl_ms": 5000}}"#,
        sandbox.now_ms(),
    )
    .unwrap();
    sandbox.set_db0(db);
    assert_eq!(
        run(&mut sandbox, "return redis.call('PTTL', 'k')", &[], &[]).reply,
        Reply::Int(5000)
    );
    clock.advance_ms(4999);
    assert_eq!(
        run(&mut sandbox, "return redis.call('GET', 'k')", &[], &[]).reply,
        Reply::bulk("v")
    );
    clock.advance_ms(1);
    assert_eq!(
        run(&mut sandbox, "return redis.call('GET', 'k')", &[], &[]).reply,
        Reply::Nil
    );
}

#[test]
fn resp3_caller_sees_rich_types() {
    let mut sandbox = Sandbox::new();
    let mut request = RunRequest::new("redis.setresp(3) return {true, false, {double=1.5}}");
    request.protocol = Protocol::Resp3;
    let report = sandbox.run(&request);
    assert_eq!(
        report.reply_for(Protocol::Resp3),
        Reply::Array(vec![
            Reply::Bool(true),
            Reply::Bool(false),
            Reply::Double(1.5)
        ])
    );
    assert_eq!(
        report.reply_for(Protocol::Resp2),
        Reply::Array(vec![Reply::Int(1), Reply::Int(0), Reply::bulk("1.5")])
    );
}

/// The differential harness parses its seeds with the same serde_json, so a seed number read one
/// ULP off would reach both sides alike: this test pins Redis 7.0.15's reply (`ZADD z
/// -91.26398983444395 a` then `ZSCORE z a` on redis-server) for a seeded score.
#[test]
fn seeded_scores_parse_to_the_nearest_double() {
    let mut sandbox = Sandbox::new();
    let seed = r#"{"z": {"type": "zset", "value": [["a", -91.26398983444395], ["b", 0.30000000000000004]]}}"#;
    sandbox.set_db0(keyspace_from_json(seed, sandbox.now_ms()).unwrap());
    let report = run(
        &mut sandbox,
        "return {redis.call('ZSCORE', KEYS[1], 'a'), redis.call('ZSCORE', KEYS[1], 'b')}",
        &["z"],
        &[],
    );
    assert_eq!(
        report.reply_for(Protocol::Resp2),
        Reply::Array(vec![
            Reply::bulk("-91.263989834443947"),
            Reply::bulk("0.30000000000000004")
        ])
    );
    let dumped = evalbench::engine::keyspace::keyspace_to_json(sandbox.keyspace().db(0), 0);
    assert_eq!(
        dumped["z"]["value"].to_string(),
        "[[\"a\",-91.26398983444395],[\"b\",0.30000000000000004]]"
    );
}

/// The vendored Lua converts a plain decimal integer of up to 15 digits without strtod
/// (lobject.c `str2int_exact`): it must give strtod's double for every such string. A trailing
/// space sends the same text down the strtod path, so the script compares the two conversions.
#[test]
fn integer_strings_convert_as_strtod_does() {
    let mut texts: Vec<String> = [
        "0",
        "-0",
        "7",
        "-7",
        "007",
        "-007",
        "999999999999999",
        "-999999999999999",
        "1000000000000000",
        "9007199254740993",
        "12345678901234567",
        "-",
        "",
        "1-",
        "--1",
        "+1",
        "1.5",
        "1e5",
        "0x10",
        " 12",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Every length up to 17 digits, with and without a sign and leading zeros.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for len in 1..=17 {
        for _ in 0..20 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits: String = (0..len)
                .map(|i| char::from(b'0' + ((x >> (i * 3)) % 10) as u8))
                .collect();
            texts.push(if x.is_multiple_of(3) {
                format!("-{digits}")
            } else {
                digits
            });
        }
    }
    let mut sandbox = Sandbox::new();
    let argv: Vec<&str> = texts.iter().map(String::as_str).collect();
    let report = run(
        &mut sandbox,
        "local bad = {}
         for i, s in ipairs(ARGV) do
           local a, b = tonumber(s), tonumber(s .. ' ')
           if a ~= b or (a == 0 and 1 / a ~= 1 / b) then bad[#bad + 1] = s end
         end
         return {#ARGV, bad}",
        &[],
        &argv,
    );
    assert_eq!(
        report.reply_for(Protocol::Resp2),
        Reply::Array(vec![Reply::Int(texts.len() as i64), Reply::Array(vec![])])
    );
}

#[test]
fn an_unsupported_command_names_the_profiles_server() {
    use evalbench::engine::profile::Profile;
    for (id, server) in [("redis-7.0", "Redis 7.0"), ("valkey-9.1", "Valkey 9.1")] {
        let mut sandbox = Sandbox::new();
        sandbox.set_profile(Profile::by_id(id).unwrap());
        let report = run(&mut sandbox, "return redis.pcall('LASTSAVE')", &[], &[]);
        assert_eq!(
            report.reply,
            Reply::Error(format!("ERR evalbench: the sandbox does not support 'LASTSAVE' (a {server} command); run this script against a live server")),
            "profile {id}"
        );
    }
}

#[test]
fn a_table_without_err_warns_of_the_crash_only_where_the_server_crashes() {
    use evalbench::engine::profile::Profile;
    for (id, warning) in [
        ("redis-7.2", Some("the script raised a table without an 'err' field: Redis 7.2 crashes on this (SIGSEGV); the sandbox answers 'ERR unknown error'")),
        ("valkey-8.1", Some("the script raised a table without an 'err' field: Valkey 8.1 crashes on this (SIGSEGV); the sandbox answers 'ERR unknown error'")),
        ("valkey-9.1", None),
    ] {
        let mut sandbox = Sandbox::new();
        sandbox.set_profile(Profile::by_id(id).unwrap());
        let report = run(&mut sandbox, "error({})", &[], &[]);
        let crash: Vec<&str> = report
            .warnings
            .iter()
            .filter(|w| w.kind == WarningKind::WouldCrash)
            .map(|w| w.message.as_str())
            .collect();
        assert_eq!(crash, warning.into_iter().collect::<Vec<_>>(), "profile {id}");
    }
}

#[test]
fn dump_says_what_it_cannot_write_yet() {
    use evalbench::engine::profile::Profile;
    let mut sandbox = Sandbox::new();
    sandbox.set_profile(Profile::by_id("redis-7.4").unwrap());
    let report = run(
        &mut sandbox,
        "redis.call('XADD', KEYS[1], '1-1', 'f', 'v')\n\
         redis.call('HSET', KEYS[2], 'f', string.rep('v', 600))\n\
         redis.call('HEXPIRE', KEYS[2], 100, 'FIELDS', 1, 'f')\n\
         return {redis.pcall('DUMP', KEYS[1]), redis.pcall('DUMP', KEYS[2])}",
        &["s", "h"],
        &[],
    );
    let not_yet = |what: &str| {
        Reply::Error(format!(
            "ERR evalbench: the sandbox cannot DUMP {what} yet; run this script against a live server"
        ))
    };
    assert_eq!(
        report.reply,
        Reply::Array(vec![
            not_yet("a stream"),
            not_yet("a hash table with field TTLs")
        ])
    );
}
