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
    let dir = tempdir();
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

    let (code, stdout, stderr) = run(&["--server", &url, "--read-only", &incr, "counter"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("--read-only is set"), "{stderr}");

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

    // A key the script did not declare is not in the dry run's copy: the replies differ, and a
    // warning says so instead of showing the dry run's Lua value.
    conn.cmd(&["SET", "hidden", "x"]);
    let hidden = script(&dir, "hidden.lua", "return redis.call('GET', 'hidden')");
    let (code, stdout, stderr) = run(&["-p", &server.port.to_string(), "--json", &hidden]);
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
    let dir = tempdir();
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

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "evalbench-cli-live-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
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
    let dir = tempdir();
    let set = script(&dir, "set.lua", "return redis.call('SET', KEYS[1], 'v')");
    let url = format!("redis://127.0.0.1:{}", replica.port);
    let (code, stdout, stderr) = run(&["--server", &url, "--yes", &set, "k"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("the server is a replica"), "{stderr}");
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
    let dir = tempdir();
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
    let dir = std::env::temp_dir().join(format!("evalbench-cli-timeouts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spin = script(&dir, "spin.lua", "while true do end");
    let port = server.port.to_string();
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = run(&["-p", &port, "--yes", "--read-timeout", "0.3", &spin]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(stderr.contains("timed out"), "{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
    // The script still spins on the server: stop it as an operator would.
    assert_eq!(conn.cmd(&["SCRIPT", "KILL"]), Reply::Status("OK".into()));

    let (code, _, stderr) = run(&["-p", &port, "--read-timeout", "0", &spin]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "evalbench: --read-timeout 0: give a positive number of seconds (for example --read-timeout 2.5)\n"
    );
}
