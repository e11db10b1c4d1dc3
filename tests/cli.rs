//! `evalbench run`: argument passing, exit statuses, JSON shape, bad-input messages.

mod common;

use serde_json::{json, Value};
use std::process::{Command, Output};

fn evalbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(args)
        .env_remove("REDIS_URL")
        .output()
        .expect("run evalbench")
}

/// Run evalbench, killed after `secs` (a read that blocks must fail the test, not hang it).
fn evalbench_within(args: &[&str], secs: u64) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(args)
        .env_remove("REDIS_URL")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run evalbench");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "evalbench {args:?} still running after {secs} s: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn temp_file(name: &str, contents: &str) -> common::ScratchFile {
    common::scratch_file(name, contents)
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn keys_and_argv_are_split_at_the_first_lone_comma_and_passed_literally() {
    let script = temp_file("echo.lua", "return {KEYS, ARGV}");
    let s = script.to_str().unwrap();
    let out = evalbench(&[
        "run", "--json", s, "k1", "k2", ",", "--json", "-5", "--", ",", "x",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bulks = |items: &[&str]| json!({"array": items.iter().map(|i| json!({"bulk": i})).collect::<Vec<_>>()});
    assert_eq!(
        json_of(&out)["reply"],
        json!({"array": [bulks(&["k1", "k2"]), bulks(&["--json", "-5", "--", ",", "x"])]})
    );
}

#[test]
fn json_report_has_the_documented_fields() {
    let script = temp_file(
        "incr.lua",
        "redis.call('SET', KEYS[1], 'v')\nreturn redis.call('GET', KEYS[1])",
    );
    let out = evalbench(&[
        "run",
        "--json",
        "--dump-keyspace",
        script.to_str().unwrap(),
        "k",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v = json_of(&out);
    assert_eq!(v["reply"], json!({"bulk": "v"}));
    assert_eq!(
        v["keyspace"],
        json!({"k": {"type": "string", "value": "v"}})
    );
    assert_eq!(v["busy_threshold_ms"], json!(5000));
    let trace = v["trace"].as_array().unwrap();
    assert_eq!(trace.len(), 2);
    assert_eq!(trace[0]["seq"], 1);
    assert_eq!(trace[0]["line"], 1);
    assert_eq!(trace[0]["command"], json!(["SET", "k", "v"]));
    assert_eq!(trace[0]["reply"], json!({"status": "OK"}));
    assert_eq!(trace[0]["keys"], json!(["k"]));
    assert_eq!(trace[0]["write"], true);
    assert_eq!(trace[0]["via"], "call");
    assert_eq!(trace[1]["line"], 2);
    assert_eq!(trace[1]["write"], false);
    assert!(trace[0]["elapsed_us"].is_number());
    assert!(v["elapsed_us"].is_number());
    assert!(v["notes"].as_array().unwrap().is_empty());
    assert!(v["warnings"].as_array().unwrap().is_empty());
}

#[test]
fn error_reply_exits_1_and_bad_input_exits_2() {
    let script = temp_file("err.lua", "return redis.call('INCR', 'k')");
    let seed = temp_file("seed.json", r#"{"k": "abc"}"#);
    let out = evalbench(&[
        "run",
        "--json",
        "--keyspace",
        seed.to_str().unwrap(),
        script.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        json_of(&out)["reply"],
        json!({"error": "ERR value is not an integer or out of range script: a02144db3132155527dc2889bcbaec380058c146, on @user_script:1."})
    );

    let out = evalbench(&["run", "/nonexistent/script.lua"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "evalbench: cannot read /nonexistent/script.lua: No such file or directory (os error 2)\n"
    );

    let bad = temp_file("bad.json", "{\n  \"a\": \"1\",\n  \"b\": [1,\n}");
    let out = evalbench(&[
        "run",
        "--keyspace",
        bad.to_str().unwrap(),
        script.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.json:4:1: malformed keyspace JSON"),
        "{err}"
    );

    let rejected = temp_file(
        "rejected.json",
        "{\n  \"z\": {\"type\": \"zset\", \"value\": [[\"m\", \"abc\"]]}\n}",
    );
    let out = evalbench(&[
        "run",
        "--keyspace",
        rejected.to_str().unwrap(),
        script.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rejected.json:2:3: key \"z\": a zset score must be a number"),
        "{err}"
    );

    let out = evalbench(&["run", "--resp", "4", script.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn resp3_caller_and_repeat() {
    let script = temp_file("map.lua", "return {map={a=1}}");
    let out = evalbench(&[
        "run",
        "--json",
        "--resp",
        "3",
        "--repeat",
        "5",
        script.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v = json_of(&out);
    assert_eq!(v["reply"], json!({"map": [[{"bulk": "a"}, {"int": 1}]]}));
    assert_eq!(v["repeat"]["runs"], 5);
    for field in ["min_us", "median_us", "p99_us"] {
        assert!(v["repeat"][field].is_number(), "{field}");
    }
    let out = evalbench(&["run", "--json", script.to_str().unwrap()]);
    assert_eq!(
        json_of(&out)["reply"],
        json!({"array": [{"bulk": "a"}, {"int": 1}]})
    );
}

#[test]
fn text_output_prints_reply_trace_and_timing() {
    let script = temp_file("text.lua", "redis.call('SET', 'other', '1')\nreturn 3.7");
    let out = evalbench(&["run", script.to_str().unwrap(), "k"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("backend: sandbox\n(integer) 3\n"),
        "{text}"
    );
    assert!(text.contains("SET other 1"), "{text}");
    assert!(text.contains("3.7 truncated to integer 3"), "{text}");
    assert!(text.contains("of the 5000 ms busy threshold"), "{text}");
    assert!(
        text.contains("key 'other' is accessed by SET but not declared in KEYS"),
        "{text}"
    );
}

#[test]
fn runaway_script_is_stopped_at_the_threshold() {
    let script = temp_file("spin.lua", "while true do end");
    let out = evalbench(&[
        "run",
        "--json",
        "--busy-threshold",
        "50",
        script.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&out);
    assert_eq!(
        v["reply"],
        json!({"error": "ERR Script killed by user with SCRIPT KILL... script: 694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7, on @user_script:1."})
    );
    assert!(v["elapsed_us"].as_f64().unwrap() >= 50_000.0);
}

#[test]
fn help_has_examples() {
    let out = evalbench(&["run", "--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Examples:"), "{text}");
    assert!(text.contains("--busy-threshold"), "{text}");
}

/// Every command and subcommand in clap's own tree answers `--help` (the top level turns clap's help
/// flag off for `-h`, the host, and that setting reaches every subcommand: each must offer it again).
#[test]
fn every_subcommand_answers_help() {
    use clap::CommandFactory;
    fn walk(command: &clap::Command, path: Vec<String>, all: &mut Vec<Vec<String>>) {
        for sub in command.get_subcommands() {
            if sub.get_name() == "help" {
                continue;
            }
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            walk(sub, p.clone(), all);
            all.push(p);
        }
    }
    let mut all = Vec::new();
    walk(&evalbench::cli::Cli::command(), Vec::new(), &mut all);
    assert!(all.len() >= 12, "{all:?}");
    for path in all {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let out = evalbench(&args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("Usage: evalbench"), "{args:?}: {text}");
    }
}

#[test]
fn sidecar_supplies_keys_argv_and_keyspace_only_when_asked() {
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/rate_limiter.lua");
    let out = evalbench(&["run", "--json", "--sidecar", sample]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(sample.replace(".lua", ".json")).unwrap())
            .unwrap();
    assert_eq!(json_of(&out)["reply"], expected["expected"]);
    // Without --sidecar the script runs with no keys: its validation answers.
    let out = evalbench(&["run", "--json", sample]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn no_command_runs_the_bundled_sample() {
    let out = evalbench(&[]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ran the bundled sample samples/rate_limiter.lua"),
        "{text}"
    );
    assert!(text.contains("trace ("), "{text}");
}

#[test]
fn workbench_connection_options_without_a_terminal_are_refused() {
    // stdout is a pipe here: the workbench cannot open, and the demo would ignore the server.
    let out = evalbench(&["-h", "127.0.0.1", "-p", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "evalbench: the workbench on a live server needs a terminal; for a headless run use `evalbench run --server URL SCRIPT KEY... , ARG...`\n"
    );
    assert!(out.stdout.is_empty());
}

/// A script that puts ESC/OSC/BEL, a bidi override (U+202E) and a C1 CSI (U+009B) into a log line,
/// a key, a value and its reply (ARGV[1]: status, error, raise or bulk).
const HOSTILE: &str =
    "local evil = '\\27]0;pwned\\7\\27[2J' .. '\\226\\128\\174' .. '\\194\\155'\n\
    redis.log(redis.LOG_WARNING, 'log ' .. evil)\n\
    redis.call('SET', KEYS[1], 'v' .. evil)\n\
    redis.call('GET', 'undeclared' .. evil)\n\
    if ARGV[1] == 'error' then return redis.error_reply('ERR ' .. evil) end\n\
    if ARGV[1] == 'raise' then error('boom ' .. evil) end\n\
    if ARGV[1] == 'bulk' then return 'bulk ' .. evil end\n\
    return {ok = 'status ' .. evil}\n";

/// What the terminal must never receive: C0 (but newline), DEL, C1, bidi controls.
fn assert_terminal_safe(text: &str) {
    for (i, c) in text.char_indices() {
        assert!(
            c == '\n' || !evalbench::engine::display::is_unsafe(c),
            "unsafe {c:?} at byte {i} of:\n{text}"
        );
    }
}

#[test]
fn text_report_escapes_control_and_bidi_characters() {
    let script = temp_file("hostile.lua", HOSTILE);
    let shown = "\\x1b]0;pwned\\a\\x1b[2J\\u{202e}\\u{9b}";
    for (mode, first) in [
        ("status", format!("status {shown}")),
        ("error", format!("(error) ERR {shown}")),
        (
            "raise",
            format!("(error) ERR user_script:6: boom {shown} script: c71690fc18ddd91c971cefc93d2069433bad55a8, on @user_script:6."),
        ),
        // Bulk strings are quoted as redis-cli quotes them, byte by byte.
        ("bulk", "\"bulk \\x1b]0;pwned\\a\\x1b[2J\\xe2\\x80\\xae\\xc2\\x9b\"".to_string()),
    ] {
        let out = evalbench(&["run", script.to_str().unwrap(), "k\u{1b}x", ",", mode]);
        let text = String::from_utf8(out.stdout).unwrap();
        assert_terminal_safe(&text);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "backend: sandbox", "{text}");
        assert_eq!(lines[1], first, "{text}");
        // The trace's command and reply columns (the time column varies).
        assert!(
            lines[5].starts_with("   1     3  SET k\\x1bx v\\x1b]0;pwned\\a\\x1b[2J\\u{202… OK "),
            "{text}"
        );
        assert!(
            lines[6].starts_with("   2     4  GET undeclared\\x1b]0;pwned\\a\\x1b[2J\\u{2… (nil) "),
            "{text}"
        );
        assert_eq!(lines[9], format!("  [3] line 2: log {shown}"), "{text}");
        assert_eq!(
            lines[14],
            format!("  - line 4: key 'undeclared{shown}' is accessed by GET but not declared in KEYS: a cluster cannot route it and Redis may reject it in the future"),
            "{text}"
        );
    }
}

#[test]
fn json_report_keeps_hostile_text_exact() {
    let script = temp_file("hostile_json.lua", HOSTILE);
    let out = evalbench(&[
        "run",
        "--json",
        script.to_str().unwrap(),
        "k\u{1b}x",
        ",",
        "status",
    ]);
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}\u{9b}";
    // JSON escapes C0 itself, and the report writes C1 and bidi controls as \uXXXX: nothing raw
    // reaches the terminal, and the decoded values are exact.
    assert_terminal_safe(&String::from_utf8(out.stdout.clone()).unwrap());
    assert!(String::from_utf8_lossy(&out.stdout).contains("\\u202e\\u009b"));
    let v = json_of(&out);
    assert_eq!(v["reply"], json!({"status": format!("status {evil}")}));
    assert_eq!(v["logs"][0]["message"], json!(format!("log {evil}")));
    assert_eq!(
        v["trace"][0]["command"],
        json!(["SET", "k\u{1b}x", format!("v{evil}")])
    );
}

#[test]
fn error_messages_escape_the_user_input_they_quote() {
    let out = evalbench(&["run", "missing\u{1b}]0;pwned\u{7}\u{202e}.lua"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "evalbench: cannot read missing\\x1b]0;pwned\\a\\u{202e}.lua: No such file or directory (os error 2)\n"
    );
}

#[test]
fn devices_fifos_and_huge_files_are_refused_at_once() {
    let script = temp_file("ok.lua", "return 1");
    let s = script.to_str().unwrap();
    let out = evalbench_within(&["run", "/dev/zero"], 10);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_of(&out),
        "evalbench: cannot read /dev/zero: it is a character device, not a regular file (evalbench reads a script from a regular file only; give the path of one)\n"
    );
    let out = evalbench_within(&["run", "--keyspace", "/dev/zero", s], 10);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_of(&out),
        "evalbench: --keyspace: cannot read /dev/zero: it is a character device, not a regular file (evalbench reads keyspace JSON from a regular file only; give the path of one)\n"
    );

    // A FIFO nobody writes to: opening it for reading would block forever.
    let fifo = script.with_file_name("pipe.lua");
    let _ = std::fs::remove_file(&fifo);
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let out = evalbench_within(&["run", fifo.to_str().unwrap()], 10);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_of(&out),
        format!("evalbench: cannot read {}: it is a FIFO (named pipe), not a regular file (evalbench reads a script from a regular file only; give the path of one)\n", fifo.display())
    );
    let out = evalbench_within(&["run", "--sidecar", fifo.to_str().unwrap()], 10);
    assert_eq!(out.status.code(), Some(2));

    // Sparse files: nothing is written, and nothing must be read.
    let big = script.with_file_name("big.lua");
    std::fs::File::create(&big)
        .unwrap()
        .set_len((16 << 20) + 1)
        .unwrap();
    let out = evalbench_within(&["run", big.to_str().unwrap()], 10);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_of(&out),
        format!("evalbench: cannot read {}: its size (16777217 bytes) is above the 16 MiB limit for a script; check that this is the Lua file you meant\n", big.display())
    );
    let seed = script.with_file_name("big.json");
    std::fs::File::create(&seed)
        .unwrap()
        .set_len((64 << 20) + 1)
        .unwrap();
    let out = evalbench_within(&["run", "--keyspace", seed.to_str().unwrap(), s], 10);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_of(&out),
        format!("evalbench: --keyspace: cannot read {}: its size (67108865 bytes) is above the 64 MiB limit for keyspace JSON; seed only the keys the script uses (evalbench copy KEY ... prints them)\n", seed.display())
    );
}

#[test]
fn a_file_without_a_terminal_is_run_or_refused_never_replaced_by_the_sample() {
    let out = evalbench_within(&["/nonexistent/missing.lua"], 10);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_of(&out),
        "evalbench: cannot read /nonexistent/missing.lua: No such file or directory (os error 2)\n"
    );
    assert!(out.stdout.is_empty());

    let script = temp_file("headless.lua", "return {KEYS[1], ARGV[1]}");
    let car = script.with_extension("json");
    std::fs::write(&car, r#"{"keys": ["k"], "argv": ["a"]}"#).unwrap();
    let out = evalbench_within(&[script.to_str().unwrap()], 10);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(&format!(
            "evalbench: ran {} in the embedded sandbox (no terminal for the workbench)\n  KEYS = [\"k\"]  ARGV = [\"a\"]\n\n1) \"k\"\n2) \"a\"\n",
            script.display()
        )),
        "{text}"
    );
}

#[test]
fn a_ttl_redis_would_refuse_is_refused_with_its_position() {
    let script = temp_file("ttl.lua", "return redis.call('PTTL', KEYS[1])");
    let seed = temp_file(
        "ttl.json",
        "{\n  \"ok\": \"v\",\n  \"session\": {\"type\": \"string\", \"value\": \"abc\", \"ttl_ms\": 9223372036854775807}\n}",
    );
    let out = evalbench(&[
        "run",
        "--keyspace",
        seed.to_str().unwrap(),
        script.to_str().unwrap(),
        "session",
    ]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        stderr_of(&out),
        format!("evalbench: {}:3:3: key \"session\": ttl_ms 9223372036854775807 is too large: the expiry time overflows, and Redis refuses it (ERR invalid expire time in 'pexpire' command) (see the keyspace format in README.md)\n", seed.display())
    );
    // Beyond i64 too.
    std::fs::write(
        &seed,
        r#"{"session": {"type": "string", "value": "abc", "ttl_ms": 18446744073709551615}}"#,
    )
    .unwrap();
    let out = evalbench(&[
        "run",
        "--keyspace",
        seed.to_str().unwrap(),
        script.to_str().unwrap(),
        "session",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains(":1:2: key \"session\": ttl_ms 18446744073709551615 is too large"),
        "{}",
        stderr_of(&out)
    );
    // A large TTL Redis takes is kept.
    std::fs::write(
        &seed,
        r#"{"session": {"type": "string", "value": "abc", "ttl_ms": 9000000000000000000}}"#,
    )
    .unwrap();
    let out = evalbench(&[
        "run",
        "--json",
        "--keyspace",
        seed.to_str().unwrap(),
        script.to_str().unwrap(),
        "session",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let pttl = json_of(&out)["reply"]["int"].as_i64().unwrap();
    assert!(pttl > 8_999_999_999_000_000_000, "{pttl}");
}

#[test]
fn a_sidecar_error_points_at_its_line_in_the_sidecar() {
    let script = temp_file("car.lua", "return 1");
    let car = script.with_extension("json");
    // The key also appears in "keys" (line 3): the position is its member in "keyspace" (line 7).
    std::fs::write(
        &car,
        "{\n  \"description\": \"x\",\n  \"keys\": [\"z\"],\n  \"argv\": [],\n  \"keyspace\": {\n    \"a\": \"1\",\n      \"z\": {\"type\": \"zset\", \"value\": [[\"m\", \"abc\"]]}\n  }\n}\n",
    )
    .unwrap();
    let out = evalbench(&["run", "--sidecar", script.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_of(&out),
        format!("evalbench: {}:7:7: key \"z\": a zset score must be a number, \"inf\" or \"-inf\" (see the keyspace format in README.md)\n", car.display())
    );
    // A keyspace that is not an object: the position of the "keyspace" member.
    std::fs::write(&car, "{\n  \"keys\": [],\n  \"keyspace\": [1]\n}\n").unwrap();
    let out = evalbench(&["run", "--sidecar", script.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_of(&out),
        format!("evalbench: {}:3:3: malformed keyspace JSON: the keyspace must be a JSON object of key -> value\n", car.display())
    );
    // The same in a keyspace file, where the key also appears nested (a hash field named "z").
    let seed = temp_file(
        "nested.json",
        "{\n  \"h\": {\"type\": \"hash\", \"value\": {\"z\": \"1\"}},\n  \"z\": {\"type\": \"list\", \"value\": []}\n}",
    );
    let out = evalbench(&[
        "run",
        "--keyspace",
        seed.to_str().unwrap(),
        script.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_of(&out),
        format!("evalbench: {}:3:3: key \"z\": an empty list cannot exist in Redis (see the keyspace format in README.md)\n", seed.display())
    );
}

#[test]
fn the_report_names_its_backend_and_an_unused_redis_url() {
    let script = temp_file("backend.lua", "return 1");
    let s = script.to_str().unwrap();
    let out = evalbench(&["run", "--json", s]);
    assert_eq!(json_of(&out)["backend"], "sandbox");
    assert!(out.stderr.is_empty(), "{}", stderr_of(&out));

    // REDIS_URL alone does not send the script to that server (it may be an application's): the run
    // stays in the sandbox and says how to use the server.
    let note = "note: REDIS_URL is set but not used: evalbench runs in the sandbox unless --server (or -h/-p/-a/-n) is given; --server \"$REDIS_URL\" runs on that server";
    let with_url = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_evalbench"))
            .args(args)
            .env("REDIS_URL", "redis://127.0.0.1:1")
            .output()
            .unwrap()
    };
    let out = with_url(&["run", s]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "backend: sandbox\n{note}\n(integer) 1\n\ntime: {}",
            String::from_utf8_lossy(&out.stdout)
                .split("time: ")
                .nth(1)
                .unwrap()
        )
    );
    let out = with_url(&["run", "--json", s]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json_of(&out)["backend"], "sandbox");
    assert_eq!(stderr_of(&out), format!("evalbench: {note}\n"));
}

#[test]
fn a_password_on_the_command_line_is_warned_about() {
    let script = temp_file("pw.lua", "return 1");
    let s = script.to_str().unwrap();
    let warning = "evalbench: warning: a password on the command line (-a, or in the --server URL) can be seen by other users in `ps`; use --askpass or REDISCLI_AUTH instead (--no-auth-warning hides this)\n";
    // Port 1: nothing listens; the warning comes before connecting.
    for args in [
        vec!["run", "-p", "1", "-a", "hunter2", s],
        vec!["run", "--server", "redis://:hunter2@127.0.0.1:1", s],
        vec!["run", "--server", "redis://ops:hunter2@127.0.0.1:1", s],
    ] {
        let out = evalbench(&args);
        assert_eq!(out.status.code(), Some(3));
        let err = stderr_of(&out);
        assert!(err.starts_with(warning), "{args:?}: {err}");
        assert!(!err.contains("hunter2"), "{err}");
    }
    for args in [
        vec!["run", "-p", "1", "-a", "hunter2", "--no-auth-warning", s],
        vec!["run", "--server", "redis://ops@127.0.0.1:1", s],
        vec!["run", "-p", "1", s],
    ] {
        let out = evalbench(&args);
        assert_eq!(out.status.code(), Some(3));
        assert!(
            !stderr_of(&out).contains("warning"),
            "{args:?}: {}",
            stderr_of(&out)
        );
    }
    // REDISCLI_AUTH is not on the command line.
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(["run", "-p", "1", s])
        .env("REDISCLI_AUTH", "hunter2")
        .output()
        .unwrap();
    assert!(!stderr_of(&out).contains("warning"), "{}", stderr_of(&out));
}

/// `run --coverage`: executions per line with code in the text and JSON reports, lines never run
/// marked; the reply is the plain run's.
#[test]
fn run_coverage_counts_each_line() {
    let script = temp_file(
        "coverage.lua",
        "local n = 0\nfor i = 1, 3 do\n  n = n + i\nend\nif n > 100 then\n  return 'big'\nend\nreturn n\n",
    );
    let path = script.to_str().unwrap();
    let out = evalbench(&["run", "--coverage", path]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("backend: sandbox\n(integer) 6\n"),
        "{text}"
    );
    assert!(
        text.ends_with("\ncoverage (line: executions, ! never run):\n    1        1  local n = 0\n    2        4  for i = 1, 3 do\n    3        3    n = n + i\n    5        1  if n > 100 then\n!   6        0    return 'big'\n    8        1  return n\n"),
        "{text}"
    );
    let json = json_of(&evalbench(&["run", "--json", "--coverage", path]));
    assert_eq!(json["reply"], serde_json::json!({"int": 6}));
    assert_eq!(
        json["coverage"],
        serde_json::json!({"1": 1, "2": 4, "3": 3, "5": 1, "8": 1})
    );
    assert_eq!(json["coverage_not_run"], serde_json::json!([6]));
    let out = evalbench(&["run", "--coverage", "--repeat", "3", path]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_of(&out),
        "evalbench: --coverage counts one run (its line hook would slow the timings of --repeat); drop one of them\n"
    );
}

/// `--function` loads SCRIPT as a library and FCALLs the function; `--read-only` is FCALL_RO;
/// `--library` loads more libraries first; a load error names the file.
#[test]
fn run_function_of_a_library() {
    let lib = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/counter_library.lua");
    let out = evalbench(&[
        "run",
        "--json",
        "--function",
        "counter_incr",
        lib,
        "c",
        ",",
        "5",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["function"], "counter_incr");
    assert_eq!(report["reply"], serde_json::json!({"int": 5}));
    let out = evalbench(&["run", "--read-only", "--function", "counter_incr", lib, "c"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("function: counter_incr (FCALL_RO)"), "{text}");
    assert!(
        text.contains("Can not execute a script with write flag using *_ro command."),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(1));
    let out = evalbench(&["run", "--read-only", "--function", "counter_get", lib, "c"]);
    assert_eq!(out.status.code(), Some(0));
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let other = dir.join("other.lua");
    std::fs::write(
        &other,
        "#!lua name=other\nredis.register_function('counter_get', function() return 1 end)\n",
    )
    .unwrap();
    let out = evalbench(&[
        "run",
        "--library",
        other.to_str().unwrap(),
        "--function",
        "counter_get",
        lib,
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert!(
        err.contains("FUNCTION LOAD failed: ERR Function counter_get already exists"),
        "{err}"
    );
}

#[test]
fn profile_option_picks_the_server_the_sandbox_imitates() {
    let script = temp_file(
        "profile.lua",
        "redis.call('SET', 'k', 0.1)\nreturn {redis.call('GET', 'k'), redis.pcall('NOSUCH')}",
    );
    let path = script.to_str().unwrap();
    let out = evalbench(&["run", "--json", path]);
    let v = json_of(&out);
    assert_eq!(v["profile"], "redis-7.0");
    assert_eq!(
        v["reply"],
        json!({"array": [{"bulk": "0.10000000000000001"}, {"error": "ERR Unknown Redis command called from script"}]})
    );
    let out = evalbench(&["run", "--json", "--profile", "valkey-9.1", path]);
    let v = json_of(&out);
    assert_eq!(v["profile"], "valkey-9.1");
    assert_eq!(
        v["reply"],
        json!({"array": [{"bulk": "0.1"}, {"error": "ERR Unknown command called from script"}]})
    );
    let out = evalbench(&["run", "--profile", "redis-8.0", path]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.ends_with("\nprofile: redis-8.0 (as redis 8.0.2)\n"),
        "{text}"
    );
    let out = evalbench(&["run", "--profile", "redis-6.2", path]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown profile 'redis-6.2': use one of redis-7.0, redis-7.2, redis-7.4, redis-8.0, valkey-8.1, valkey-9.1"),
        "{err}"
    );
}

/// `--compare-profile` runs the script under a second profile, on the same seed, and
/// reports that profile's reply (text and JSON) when it differs.
#[test]
fn compare_profile_adds_the_other_servers_reply() {
    let script = temp_file(
        "compare.lua",
        "redis.call('HSET', KEYS[1], 'a', '1')\nreturn redis.pcall('HEXPIRE', KEYS[1], 100, 'FIELDS', 2, 'a', 'b')",
    );
    let path = script.to_str().unwrap();
    let out = evalbench(&["run", "--compare-profile", "valkey-9.1", path, "h"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(
            "backend: sandbox\n(error) ERR Unknown Redis command called from script\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with(
            "\non valkey-9.1 (valkey 9.1.2) this reads: 1) (integer) 1\n2) (integer) -2\n"
        ),
        "{text}"
    );
    let out = evalbench(&[
        "run",
        "--json",
        "--profile",
        "redis-7.4",
        "--compare-profile",
        "redis-7.0",
        path,
        "h",
    ]);
    let v = json_of(&out);
    assert_eq!(v["reply"], json!({"array": [{"int": 1}, {"int": -2}]}));
    assert_eq!(
        v["compare"],
        json!({"profile": "redis-7.0", "differs": true, "reply": {"error": "ERR Unknown Redis command called from script"}})
    );
    let out = evalbench(&["run", "--json", "--compare-profile", "redis-7.2", path, "h"]);
    assert_eq!(
        json_of(&out)["compare"],
        json!({"profile": "redis-7.2", "differs": false})
    );
    let out = evalbench(&[
        "run",
        "--compare-profile",
        "redis-7.2",
        "--server",
        "redis://127.0.0.1:1",
        path,
        "h",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out)
            .contains("--compare-profile runs the script in the sandbox under two profiles"),
        "{}",
        stderr_of(&out)
    );
}

/// An option the command does not know, given before the script, is named as an option (it would
/// otherwise be read as the script's path: "cannot read --timeout-ms").
#[test]
fn an_unknown_option_before_the_script_is_named_as_an_option() {
    let script = temp_file("one.lua", "return 1");
    let path = script.to_str().unwrap();
    for command in ["run", "debug"] {
        let out = evalbench(&[command, "--timeout-ms", "2000", path]);
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert_eq!(
            stderr_of(&out),
            "evalbench: unknown option --timeout-ms: options go before the script, and --help lists this command's options\n",
            "{command}"
        );
    }
    // An ARGV value that starts with `-` is still an argument.
    let out = evalbench(&["run", path, "k", ",", "-1"]);
    assert_eq!(out.status.code(), Some(0));
}
