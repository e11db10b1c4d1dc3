//! `evalbench run --server`: the guarded write contract and exit statuses against a real redis-server.

mod common;

use common::RedisServer;
use evalbench::engine::reply::Reply;
use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .arg("run")
        .args(args)
        .env_remove("REDIS_URL")
        .output()
        .expect("run evalbench");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn script(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn writes_need_yes_reads_run_as_eval_ro() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["SET", "counter", "41"]);
    let url = format!("redis://127.0.0.1:{}", server.port);
    let dir_tmp = tempdir();
    let dir = dir_tmp.path().to_path_buf();
    let incr = script(
        &dir,
        "incr.lua",
        "local v = redis.call('GET', KEYS[1])\nreturn redis.call('INCR', KEYS[1])",
    );

    let (code, stdout, stderr) = run(&["--server", &url, &incr, "counter"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("line 2: INCR counter"), "{stderr}");
    assert!(stderr.contains("--yes"), "{stderr}");
    assert_eq!(conn.cmd(&["GET", "counter"]), Reply::bulk("41"));

    assert!(
        stderr.ends_with(". Rerun with --yes to allow writes.\n"),
        "{stderr}"
    );

    // --yes cannot make a --read-only run write: it is not suggested.
    let (code, stdout, stderr) = run(&["--server", &url, "--read-only", &incr, "counter"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!("evalbench: refused: a dry run in the sandbox on a copy of KEYS shows the script writes (--read-only is set):\n  line 2: INCR counter\nNothing was sent to 127.0.0.1:{}. Drop --read-only and add --yes to let it write.\n", server.port)
    );

    let (code, stdout, stderr) = run(&[
        "--server",
        &url,
        "--yes",
        "--json",
        "--dump-keyspace",
        &incr,
        "counter",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["reply"], serde_json::json!({"int": 42}));
    assert_eq!(json["mode"], "writes-allowed");
    assert_eq!(json["trace"].as_array().unwrap().len(), 2);
    assert_eq!(
        json["trace"][1]["command"],
        serde_json::json!(["INCR", "counter"])
    );
    assert_eq!(json["trace"][1]["line"], 2);
    assert_eq!(json["trace"][1]["write"], true);
    assert_eq!(
        json["keyspace"],
        serde_json::json!({"counter": {"type": "string", "value": "42"}})
    );
    assert_eq!(conn.cmd(&["GET", "counter"]), Reply::bulk("42"));

    let get = script(&dir, "get.lua", "return redis.call('GET', KEYS[1])");
    let (code, stdout, stderr) = run(&["-p", &server.port.to_string(), "--json", &get, "counter"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["reply"], serde_json::json!({"bulk": "42"}));
    assert_eq!(json["mode"], "read-only");
    // The dry run replied the same: its Lua value explains the reply; both times are reported.
    assert_eq!(json["lua_value"], "\"42\"");
    assert!(json["warnings"].as_array().unwrap().is_empty());
    let (server_us, round_trip_us) = (
        json["elapsed_us"].as_f64().unwrap(),
        json["round_trip_us"].as_f64().unwrap(),
    );
    assert!(server_us > 0.0 && round_trip_us > server_us, "{json}");

    // A key the script did not declare is not in the dry run's copy: the dry run is no preview,
    // and only --yes sends it. Sent (as EVAL_RO with --read-only), the replies differ, and a
    // warning says so instead of showing the dry run's Lua value.
    conn.cmd(&["SET", "hidden", "x"]);
    let hidden = script(&dir, "hidden.lua", "return redis.call('GET', 'hidden')");
    let (code, stdout, stderr) = run(&["-p", &server.port.to_string(), "--json", &hidden]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert_eq!(stderr, format!("evalbench: refused: the dry run in the sandbox on a copy of KEYS is no preview of the server: this call reads what the copy lacks:\n  line 1: GET hidden (key hidden not in KEYS: the copy lacks it)\nNothing was sent to 127.0.0.1:{}. Declare every key the script touches in KEYS, or rerun with --yes to send it anyway (with --read-only too, as EVAL_RO: the server refuses any write).\n", server.port));
    let port = server.port.to_string();
    let args = ["-p", &port, "--read-only", "--yes", "--json", &hidden];
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["reply"], serde_json::json!({"bulk": "x"}));
    assert_eq!(json["lua_value"], serde_json::Value::Null);
    let kinds: Vec<&str> = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"dry-run-differs"), "{json}");
    let differs = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "dry-run-differs")
        .unwrap();
    assert_eq!(
        differs["message"],
        "the dry run in the sandbox replied (nil), the server \"x\": the Lua value and conversion notes are not shown"
    );

    // An error reply exits 1 with the server's exact text (user's SHA).
    let bad = script(&dir, "bad.lua", "return redis.call('HGET', KEYS[1], 'f')");
    let (code, stdout, _) = run(&["--server", &url, &bad, "counter"]);
    assert_eq!(code, 1);
    let sha = evalbench::engine::script::sha1_hex(b"return redis.call('HGET', KEYS[1], 'f')");
    assert!(stdout.contains(&format!("\n(error) WRONGTYPE Operation against a key holding the wrong kind of value script: {sha}, on @user_script:1.")), "{stdout}");
}

#[test]
fn unreachable_server_exits_3_with_one_line() {
    // Port 1 on loopback: nothing listens there, and no other test's server can take it meanwhile.
    let port = 1;
    let dir_tmp = tempdir();
    let dir = dir_tmp.path().to_path_buf();
    let s = script(&dir, "one.lua", "return 1");
    let (code, _, stderr) = run(&[
        "--server",
        &format!("redis://:hunter2@127.0.0.1:{port}"),
        &s,
    ]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("connection refused"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("evalbench-cli-live-")
        .tempdir()
        .unwrap()
}

#[test]
fn a_replica_refuses_writes_even_with_yes() {
    let (Some(primary), Some(replica)) = (RedisServer::start(), RedisServer::start()) else {
        return;
    };
    let mut rconn = replica.connect();
    assert_eq!(
        rconn.cmd(&["REPLICAOF", "127.0.0.1", &primary.port.to_string()]),
        Reply::ok()
    );
    let dir_tmp = tempdir();
    let dir = dir_tmp.path().to_path_buf();
    let set = script(&dir, "set.lua", "return redis.call('SET', KEYS[1], 'v')");
    let url = format!("redis://127.0.0.1:{}", replica.port);
    let (code, stdout, stderr) = run(&["--server", &url, "--yes", &set, "k"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!("evalbench: refused: a dry run in the sandbox on a copy of KEYS shows the script writes (the server is a replica):\n  line 1: SET k v\nNothing was sent to 127.0.0.1:{}. A replica refuses writes: run it on the primary, with --yes.\n", replica.port)
    );
}

#[test]
fn copy_writes_keyspace_json_the_sandbox_loads() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["HSET", "user:1", "name", "Ada", "visits", "3"]);
    conn.cmd(&["RPUSH", "queue", "a", "b"]);
    conn.cmd(&["SET", "session", "abc", "EX", "100"]);
    let port = server.port.to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(["copy", "-p", &port, "user:1", "queue", "session", "missing"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        json["user:1"],
        serde_json::json!({"type": "hash", "value": {"name": "Ada", "visits": "3"}})
    );
    assert_eq!(
        json["queue"],
        serde_json::json!({"type": "list", "value": ["a", "b"]})
    );
    assert_eq!(json["session"]["value"], "abc");
    assert!(json["session"]["ttl_ms"]
        .as_i64()
        .is_some_and(|t| t > 90_000 && t <= 100_000));
    assert!(json.get("missing").is_none());
    // The copy seeds the sandbox.
    let dir_tmp = tempdir();
    let dir = dir_tmp.path().to_path_buf();
    let seed = dir.join("seed.json");
    std::fs::write(&seed, &out.stdout).unwrap();
    let s = script(
        &dir,
        "visits.lua",
        "return redis.call('HINCRBY', KEYS[1], 'visits', 1)",
    );
    let (code, stdout, stderr) = run(&[
        "--keyspace",
        &seed.display().to_string(),
        "--json",
        &s,
        "user:1",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["reply"], serde_json::json!({"int": 4}));
    // A key above the limit is refused with the reason.
    let big: Vec<String> = (0..10_001).map(|i| i.to_string()).collect();
    let mut args = vec!["SADD", "big"];
    args.extend(big.iter().map(String::as_str));
    conn.cmd(&args);
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(["copy", "-p", &port, "big"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "evalbench: key 'big' is a set of 10001 members, above the copy limit of 10000; copy refused"
    );
}

#[test]
fn timeouts_are_flags_in_seconds() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["CONFIG", "SET", "busy-reply-threshold", "100"]);
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let spin = script(&dir, "spin.lua", "while true do end");
    let port = server.port.to_string();
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = run(&["-p", &port, "--yes", "--read-timeout", "0.3", &spin]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!("evalbench: 127.0.0.1:{port}: gave up waiting for the script after 0.3s (--read-timeout); sent SCRIPT KILL: OK; the script was stopped (the server answers PING)\n")
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
    // The server is not left busy.
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));

    let (code, _, stderr) = run(&["-p", &port, "--read-timeout", "0", &spin]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "evalbench: --read-timeout 0: give a positive number of seconds (for example --read-timeout 2.5)\n"
    );
}

#[test]
fn giving_up_on_a_script_kills_it_and_says_how() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    // A read timeout under the busy threshold: SCRIPT KILL is read once the script turns busy.
    conn.cmd(&["CONFIG", "SET", "busy-reply-threshold", "2000"]);
    let dir_tmp = tempdir();
    let dir = dir_tmp.path().to_path_buf();
    let spin = script(&dir, "spin.lua", "while true do end");
    let port = server.port.to_string();
    let (code, stdout, stderr) = run(&["-p", &port, "--yes", "--read-timeout", "1", &spin]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!("evalbench: 127.0.0.1:{port}: gave up waiting for the script after 1s (--read-timeout); sent SCRIPT KILL: OK; the script was stopped (the server answers PING)\n")
    );
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));

    // A script that wrote cannot be killed: said, and the server is left to finish it.
    let spin_write = script(
        &dir,
        "spinw.lua",
        "redis.call('SET', KEYS[1], 'x')\nwhile true do end",
    );
    let (code, stdout, stderr) = run(&[
        "-p",
        &port,
        "--yes",
        "--read-timeout",
        "1",
        &spin_write,
        "k",
    ]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!("evalbench: 127.0.0.1:{port}: gave up waiting for the script after 1s (--read-timeout); sent SCRIPT KILL: UNKILLABLE: the script has written, so only SHUTDOWN NOSAVE stops it (which loses the writes since the last save; evalbench never sends it); otherwise the server stays busy until the script ends\n")
    );
    // The server is dropped (killed) with the test.
}

#[test]
fn a_missing_password_is_a_connection_error() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["CONFIG", "SET", "requirepass", "s3cret"]);
    let dir_tmp = tempdir();
    let dir = dir_tmp.path().to_path_buf();
    let one = script(&dir, "one.lua", "return 1");
    let port = server.port.to_string();
    let (code, stdout, stderr) = run(&["-p", &port, &one]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!("evalbench: 127.0.0.1:{port}: the server requires a password (give it with -a, --askpass or REDISCLI_AUTH, with --user for an ACL user, or in the URL: redis://user:password@host:port)\n")
    );
    assert!(stdout.is_empty());
    // The same when a database is to be selected first.
    let (code, _, stderr_db) = run(&["-p", &port, "-n", "3", &one]);
    assert_eq!(code, 3);
    assert_eq!(stderr_db, stderr);
    // With it (and a database, selected after AUTH), the run works.
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(["run", "-p", &port, "-n", "3", "--json", &one])
        .env("REDISCLI_AUTH", "s3cret")
        .env_remove("REDIS_URL")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["backend"], "live");
    assert_eq!(json["reply"], serde_json::json!({"int": 1}));
}

/// A TCP server on a loopback port that answers each connection with `answer` (None: accepts and
/// never answers).
fn fake_server(answer: Option<&'static [u8]>) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut open = Vec::new();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            if let Some(answer) = answer {
                use std::io::{Read, Write};
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(answer);
            }
            open.push(stream);
        }
    });
    port
}

#[test]
fn a_peer_that_is_not_redis_is_one_line_and_a_silent_one_one_timeout() {
    let dir_tmp = tempdir();
    let dir = dir_tmp.path().to_path_buf();
    let one = script(&dir, "one.lua", "return 1");
    let http = fake_server(Some(
        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
    ));
    let (code, stdout, stderr) = run(&["-p", &http.to_string(), &one]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!("evalbench: 127.0.0.1:{http}: did not answer as a Redis server (its reply is not RESP, the Redis protocol); check the address and port (a TLS port needs --tls)\n")
    );
    // Valid RESP, but not what a Redis server says to INFO.
    let odd = fake_server(Some(b"+hello\r\n"));
    let (code, _, stderr) = run(&["-p", &odd.to_string(), &one]);
    assert_eq!(code, 3, "{stderr}");
    assert_eq!(
        stderr,
        format!("evalbench: 127.0.0.1:{odd}: did not answer as a Redis server (INFO replied hello); check the address and port\n")
    );

    // Accepts and never answers: the connect timeout bounds connecting and discovery together.
    let silent = fake_server(None);
    let started = std::time::Instant::now();
    let (code, _, stderr) = run(&["-p", &silent.to_string(), "--connect-timeout", "2", &one]);
    let elapsed = started.elapsed();
    assert_eq!(code, 3, "{stderr}");
    assert_eq!(
        stderr,
        format!("evalbench: 127.0.0.1:{silent}: timed out waiting for the server (check the address, firewalls, or a script blocking the server)\n")
    );
    assert!(
        elapsed >= std::time::Duration::from_secs(2)
            && elapsed < std::time::Duration::from_millis(3500),
        "{elapsed:?}"
    );
    // The same with a password and a database (AUTH, then SELECT: one timeout in all).
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args([
            "run",
            "-p",
            &silent.to_string(),
            "-n",
            "2",
            "--connect-timeout",
            "2",
            &one,
        ])
        .env("REDISCLI_AUTH", "x")
        .env_remove("REDIS_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(
        started.elapsed() < std::time::Duration::from_millis(3500),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_key_too_large_to_dry_run_is_no_obstacle_to_a_read_only_run() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let members: Vec<String> = (0..10_001).map(|i| i.to_string()).collect();
    let mut args = vec!["SADD", "big"];
    args.extend(members.iter().map(String::as_str));
    conn.cmd(&args);
    let dir_tmp = tempdir();
    let dir = dir_tmp.path().to_path_buf();
    let card = script(&dir, "card.lua", "return redis.call('SCARD', KEYS[1])");
    let port = server.port.to_string();
    // The guard cannot copy the key: --read-only (EVAL_RO, the server refuses writes) or --yes helps.
    let (code, stdout, stderr) = run(&["-p", &port, &card, "big"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert_eq!(
        stderr,
        "evalbench: key 'big' is a set of 10001 members, above the copy limit of 10000; copy refused (the write guard copies the declared keys to dry-run the script; rerun with --read-only to run it as EVAL_RO without the dry run, or with --yes to skip the dry run and allow writes)\n"
    );
    let (code, stdout, stderr) = run(&["-p", &port, "--read-only", "--json", &card, "big"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["reply"], serde_json::json!({"int": 10001}));
    assert_eq!(json["mode"], "read-only");
    assert_eq!(
        json["warnings"],
        serde_json::json!([{"kind": "dry-run-differs", "line": 0, "message": "no dry run (key 'big' is a set of 10001 members, above the copy limit of 10000; copy refused); the script ran as EVAL_RO, so the server refused any write: the Lua value and conversion notes are not shown"}])
    );
}

/// A dry run stopped at the busy threshold is not sent without --yes (nor one that took
/// half of it: the same guard::concerns, unit-tested there); the refusal names the dry-run time and
/// the server never ran the script.
#[test]
fn a_slow_dry_run_is_not_sent_without_yes() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["CONFIG", "SET", "busy-reply-threshold", "100"]);
    conn.cmd(&["CONFIG", "RESETSTAT"]);
    let dir_tmp = tempdir();
    let dir = dir_tmp.path().to_path_buf();
    let spin = script(&dir, "spin.lua", "while true do end");
    let port = server.port.to_string();
    let (code, stdout, stderr) = run(&["-p", &port, "--read-only", "--read-timeout", "2", &spin]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.starts_with("evalbench: refused: the dry run in the sandbox on a copy of KEYS did not complete: stopped at the busy threshold (100 ms) after "),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(&format!(" ms (on the server it would keep every other client waiting until it ends or is killed).\nNothing was sent to 127.0.0.1:{port}. Rerun with --yes to send it anyway (with --read-timeout SECONDS evalbench gives up and sends SCRIPT KILL).\n")),
        "{stderr}"
    );
    // The script never reached the server.
    let Reply::Bulk(stats) = conn.cmd(&["INFO", "commandstats"]) else {
        panic!("INFO")
    };
    let stats = String::from_utf8_lossy(&stats).into_owned();
    assert!(!stats.contains("cmdstat_eval"), "{stats}");
}
