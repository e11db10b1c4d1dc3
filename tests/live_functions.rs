//! Live Functions against real servers: `evalbench function call` (the guarded FCALL)
//! replies, errs and changes the data exactly as a plain FCALL does, on every installed server;
//! `function list|show|load` and `run --function --server`: exact output, consent, the library
//! diff, refusal on a replica.

mod common;

use common::{dump, Conn, RedisServer};
use evalbench::engine::reply::Reply;
use serde_json::Value as Json;
use std::process::Command;

const SHOP: &str = r#"#!lua name=shop
local function take(keys, args)
  local n = redis.call('DECRBY', keys[1], args[1])
  if n < 0 then
    redis.call('INCRBY', keys[1], args[1])
    return redis.error_reply('ERR out of stock')
  end
  return n
end
redis.register_function('stock_take', take)
redis.register_function{function_name = 'stock_peek', flags = {'no-writes'},
  callback = function(keys) return {redis.call('GET', keys[1]), redis.call('TTL', keys[1])} end}
redis.register_function('boom', function(keys, args) error('bad input: ' .. tostring(args[1])) end)
redis.register_function('wrong_type', function(keys) return redis.call('INCR', keys[1]) end)
redis.register_function('call_other', function(keys) return redis.call('FCALL', 'tally_read', 1, keys[1]) end)
redis.register_function('keys_global', function() return KEYS[1] end)
"#;

const TALLY: &str = r#"#!lua name=tally
redis.register_function{function_name = 'tally_read', flags = {'no-writes'},
  callback = function(keys) return redis.call('HGETALL', keys[1]) end}
redis.register_function('tally_add', function(keys, args)
  redis.call('HINCRBY', keys[1], args[1], 1)
  return redis.call('HGETALL', keys[1])
end)
"#;

fn evalbench(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
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

fn tempdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("evalbench-live-functions-{name}-"))
        .tempdir()
        .unwrap()
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn seed(conn: &mut Conn) {
    assert_eq!(conn.cmd(&["FLUSHALL"]), Reply::ok());
    conn.cmd(&["SET", "stock:1", "5"]);
    conn.cmd(&["SET", "str:1", "abc"]);
    conn.cmd(&["HSET", "h:1", "f", "1"]);
}

/// (function, KEYS, ARGV, FCALL_RO)
const CASES: &[(&str, &[&str], &[&str], bool)] = &[
    ("stock_take", &["stock:1"], &["3"], false),
    ("stock_take", &["stock:1"], &["9"], false),
    ("stock_take", &["stock:1"], &["x"], false),
    ("stock_peek", &["stock:1"], &[], false),
    ("stock_peek", &["stock:1"], &[], true),
    ("stock_take", &["stock:1"], &["1"], true),
    ("boom", &[], &["x"], false),
    ("wrong_type", &["str:1"], &[], false),
    ("call_other", &["h:1"], &[], false),
    ("keys_global", &["h:1"], &[], false),
    ("tally_add", &["h:1"], &["g"], false),
    ("tally_read", &["h:1"], &[], true),
];

/// Every case as a plain FCALL and through `evalbench function call --yes --json`, from the same
/// data: the same reply (errors to the byte) and the same data after. Returns how many evalbench
/// runs carried a trace.
fn differential(server: &RedisServer, profile: &str) -> usize {
    let mut conn = server.connect();
    for lib in [SHOP, TALLY] {
        assert_eq!(
            conn.cmd(&["FUNCTION", "LOAD", "REPLACE", lib]),
            Reply::bulk(if lib == SHOP { "shop" } else { "tally" }),
            "{profile}"
        );
    }
    let url = format!("redis://127.0.0.1:{}", server.port);
    let mut traced = 0;
    for (name, keys, argv, read_only) in CASES {
        seed(&mut conn);
        let numkeys = keys.len().to_string();
        let mut fcall = vec![
            if *read_only { "FCALL_RO" } else { "FCALL" },
            name,
            &numkeys,
        ];
        fcall.extend(keys.iter());
        fcall.extend(argv.iter());
        let real = conn.cmd(&fcall);
        let real_data = dump(&mut conn);

        seed(&mut conn);
        let mut args = vec!["function", "call", "--server", &url, "--yes", "--json"];
        if *read_only {
            args.push("--read-only");
        }
        args.push(name);
        args.extend(keys.iter());
        if !argv.is_empty() {
            args.push(",");
            args.extend(argv.iter());
        }
        let (code, stdout, stderr) = evalbench(&args);
        let json: Json = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{profile} {name}: {e}: {stdout}{stderr}"));
        assert_eq!(
            json["reply"],
            real.to_json(),
            "{profile} {name} {keys:?} {argv:?} ro={read_only}: {stderr}"
        );
        assert_eq!(
            code,
            if real.is_error() { 1 } else { 0 },
            "{profile} {name}"
        );
        assert_eq!(
            dump(&mut conn),
            real_data,
            "{profile} {name}: the data after"
        );
        if json["trace"].as_array().is_some_and(|t| !t.is_empty()) {
            traced += 1;
        }
    }
    traced
}

#[test]
fn function_call_replies_and_writes_as_a_plain_fcall_on_every_server() {
    let mut ran = 0;
    for profile in [
        "redis-7.0",
        "redis-7.2",
        "redis-7.4",
        "redis-8.0",
        "valkey-8.1",
        "valkey-9.1",
    ] {
        let Some(server) = RedisServer::start_profile(profile) else {
            continue;
        };
        let traced = differential(&server, profile);
        if profile == "redis-7.0" {
            // Every case that reached a redis.call has the dry run's trace (the sandbox replied the
            // same): all but keys_global, FCALL_RO of a writing function, and the refused FCALL.
            assert_eq!(traced, 9, "{profile}");
        }
        ran += 1;
    }
    assert!(ran > 0 || std::env::var("CI").is_err(), "no server ran");
}

#[test]
fn a_call_shows_the_server_reply_with_the_dry_runs_trace() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["FUNCTION", "LOAD", SHOP]);
    conn.cmd(&["SET", "stock:1", "5"]);
    let url = format!("redis://127.0.0.1:{}", server.port);
    let port = server.port;

    // A function without no-writes needs --yes, even when its dry run reads only.
    let (code, stdout, stderr) = evalbench(&[
        "function",
        "call",
        "--server",
        &url,
        "stock_take",
        "stock:1",
        ",",
        "2",
    ]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert_eq!(
        stderr,
        format!("evalbench: refused: The dry run WRITES (line 3: DECRBY stock:1 2).\nNothing was sent to 127.0.0.1:{port}. Rerun with --yes to send it.\n")
    );
    let (code, _, stderr) = evalbench(&["function", "call", "--server", &url, "keys_global"]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        format!("evalbench: refused: The function keys_global is not flagged no-writes: the dry run wrote nothing, but the server cannot be told to refuse its writes (FCALL_RO refuses such a function).\nNothing was sent to 127.0.0.1:{port}. Rerun with --yes to send it.\n")
    );
    assert_eq!(conn.cmd(&["GET", "stock:1"]), Reply::bulk("5"));

    // A no-writes function goes as FCALL_RO without asking.
    let (code, stdout, stderr) = evalbench(&[
        "function",
        "call",
        "--server",
        &url,
        "stock_peek",
        "stock:1",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let head = format!("backend: live\nserver: 127.0.0.1:{port} (redis 7.0.15 primary, busy threshold 5000 ms)\nfunction: stock_peek of library shop (FCALL_RO)\ntrace: the dry run's in the sandbox on a copy of KEYS (the server replied the same)\n1) \"5\"\n2) (integer) -1\n\ntrace (2 calls):\n");
    assert!(stdout.starts_with(&head), "{stdout}");
    assert!(stdout.contains("   1    12  GET stock:1 "), "{stdout}");
    assert!(stdout.contains("   2    12  TTL stock:1 "), "{stdout}");

    let (code, stdout, _) = evalbench(&[
        "function", "call", "--server", &url, "--yes", "boom", ",", "x",
    ]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains(
            "\n(error) ERR user_function:13: bad input: x script: boom, on @user_function:13.\n"
        ),
        "{stdout}"
    );

    // No such function: nothing is sent.
    let (code, _, stderr) = evalbench(&["function", "call", "--server", &url, "nope"]);
    assert_eq!(code, 2);
    assert_eq!(stderr, "evalbench: not sent: the server has no function named nope (FUNCTION LIST); load its library first (evalbench function load --server URL LIBRARY.lua)\n");
}

#[test]
fn list_show_and_load_with_the_change_summary() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let url = format!("redis://127.0.0.1:{}", server.port);
    let port = server.port;
    let dir_tmp = tempdir("load");
    let dir = dir_tmp.path().to_path_buf();
    let shop = write(&dir, "shop.lua", SHOP);

    // Without --yes nothing is loaded: what would change is printed.
    let (code, stdout, stderr) = evalbench(&["function", "load", "--server", &url, &shop]);
    assert_eq!(code, 2);
    assert_eq!(stdout, "library shop: new on the server (FUNCTION LOAD)\n  functions: stock_take (no flags), stock_peek (no-writes), boom (no flags), wrong_type (no flags), call_other (no flags), keys_global (no flags)\n");
    assert_eq!(stderr, format!("evalbench: refused: FUNCTION LOAD writes to 127.0.0.1:{port} (the changes are above). Nothing was sent. Rerun with --yes to load it.\n"));
    assert_eq!(conn.cmd(&["FUNCTION", "LIST"]), Reply::Array(vec![]));

    let (code, stdout, _) = evalbench(&["function", "load", "--server", &url, "--yes", &shop]);
    assert_eq!(code, 0);
    assert!(stdout.ends_with("\nloaded: shop\n"), "{stdout}");

    let (code, stdout, _) = evalbench(&["function", "show", "--server", &url, "shop"]);
    assert_eq!((code, stdout.as_str()), (0, SHOP));
    let (code, _, stderr) = evalbench(&["function", "show", "--server", &url, "sho*"]);
    assert_eq!(code, 2);
    assert_eq!(stderr, format!("evalbench: 127.0.0.1:{port} has no library named sho* (evalbench function list --server URL lists them)\n"));

    let (code, stdout, _) = evalbench(&["function", "list", "--server", &url]);
    assert_eq!(code, 0);
    assert_eq!(stdout, format!("server: 127.0.0.1:{port} (redis 7.0.15 primary, busy threshold 5000 ms)\nshop (LUA)\n  boom\n  call_other\n  keys_global\n  stock_peek  [no-writes]\n  stock_take\n  wrong_type\n1 library\n"));

    // The same name again: only --replace loads it; the summary says what changes.
    let changed = SHOP
        .replace("if n < 0 then", "if n < 0 then -- refill")
        .replace("flags = {'no-writes'},", "flags = {},")
        .replace(
            "redis.register_function('boom', function(keys, args) error('bad input: ' .. tostring(args[1])) end)\n",
            "",
        )
        + "redis.register_function('restock', function(keys, args) return redis.call('INCRBY', keys[1], args[1]) end)\n";
    let shop2 = write(&dir, "shop2.lua", &changed);
    let summary = format!(
        "library shop: replaces the server's library of that name (FUNCTION LOAD REPLACE)
  functions added: restock
  functions removed: boom
  flags of stock_peek: no-writes -> no flags
--- server: shop
+++ {shop2}
@@ -2,5 +2,5 @@
 local function take(keys, args)
   local n = redis.call('DECRBY', keys[1], args[1])
-  if n < 0 then
+  if n < 0 then -- refill
     redis.call('INCRBY', keys[1], args[1])
     return redis.error_reply('ERR out of stock')
@@ -9,8 +9,8 @@
 end
 redis.register_function('stock_take', take)
-redis.register_function{{function_name = 'stock_peek', flags = {{'no-writes'}},
+redis.register_function{{function_name = 'stock_peek', flags = {{}},
   callback = function(keys) return {{redis.call('GET', keys[1]), redis.call('TTL', keys[1])}} end}}
-redis.register_function('boom', function(keys, args) error('bad input: ' .. tostring(args[1])) end)
 redis.register_function('wrong_type', function(keys) return redis.call('INCR', keys[1]) end)
 redis.register_function('call_other', function(keys) return redis.call('FCALL', 'tally_read', 1, keys[1]) end)
 redis.register_function('keys_global', function() return KEYS[1] end)
+redis.register_function('restock', function(keys, args) return redis.call('INCRBY', keys[1], args[1]) end)
"
    );
    let (code, stdout, stderr) = evalbench(&["function", "load", "--server", &url, &shop2]);
    assert_eq!(code, 2);
    assert_eq!(stdout, summary);
    assert_eq!(stderr, format!("evalbench: refused: 127.0.0.1:{port} already has a library named shop: --replace replaces it (FUNCTION LOAD REPLACE; the changes are above). Nothing was sent.\n"));
    let (code, stdout, stderr) =
        evalbench(&["function", "load", "--server", &url, "--replace", &shop2]);
    assert_eq!((code, stdout.as_str()), (2, summary.as_str()));
    assert!(
        stderr.ends_with("Rerun with --yes to load it.\n"),
        "{stderr}"
    );
    let (code, stdout, _) = evalbench(&[
        "function",
        "load",
        "--server",
        &url,
        "--replace",
        "--yes",
        &shop2,
    ]);
    assert_eq!(code, 0);
    assert_eq!(stdout, format!("{summary}loaded: shop\n"));
    let (_, shown, _) = evalbench(&["function", "show", "--server", &url, "shop"]);
    assert_eq!(shown, changed);

    // A load the server refuses comes back with its own text (exit 1), the same as a plain load.
    let bad = "#!lua name=bad\nredis.call('GET', 'x')\n";
    let expected = conn.cmd(&["FUNCTION", "LOAD", bad]);
    let bad_path = write(&dir, "bad.lua", bad);
    let (code, stdout, _) = evalbench(&["function", "load", "--server", &url, "--yes", &bad_path]);
    assert_eq!(code, 1);
    let Reply::Error(text) = expected else {
        panic!("the server refuses it: {expected:?}")
    };
    assert!(stdout.ends_with(&format!("\n(error) {text}\n")), "{stdout}");
}

#[test]
fn a_replica_refuses_loads_and_writing_functions() {
    // The replica saves the RDB it receives: in a directory of its own, or every server started
    // later from the crate's directory would load this test's library and keys.
    let rdb_dir_tmp = tempdir("replica-rdb");
    let rdb_dir = rdb_dir_tmp.path().to_path_buf();
    let rdb_dir = rdb_dir.display().to_string();
    let (Some(primary), Some(replica)) = (
        RedisServer::start(),
        RedisServer::start_with(&["--dir", &rdb_dir]),
    ) else {
        return;
    };
    let mut pconn = primary.connect();
    pconn.cmd(&["FUNCTION", "LOAD", SHOP]);
    pconn.cmd(&["SET", "stock:1", "5"]);
    let mut rconn = replica.connect();
    assert_eq!(
        rconn.cmd(&["REPLICAOF", "127.0.0.1", &primary.port.to_string()]),
        Reply::ok()
    );
    // The replica receives the library and the data from its primary.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while rconn.cmd(&["GET", "stock:1"]) != Reply::bulk("5") {
        assert!(std::time::Instant::now() < deadline, "the replica syncs");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let url = format!("redis://127.0.0.1:{}", replica.port);
    let port = replica.port;
    let dir_tmp = tempdir("replica");
    let dir = dir_tmp.path().to_path_buf();
    let tally = write(&dir, "tally.lua", TALLY);
    let (code, stdout, stderr) =
        evalbench(&["function", "load", "--server", &url, "--yes", &tally]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert_eq!(stderr, format!("evalbench: refused: 127.0.0.1:{port} is a replica (INFO replication): FUNCTION LOAD is refused there; load the library on its primary (replicas receive it from there). Nothing was sent.\n"));

    let (code, _, stderr) = evalbench(&[
        "function",
        "call",
        "--server",
        &url,
        "--yes",
        "stock_take",
        "stock:1",
        ",",
        "1",
    ]);
    assert_eq!(code, 2);
    assert_eq!(stderr, "evalbench: not sent: the server is a replica and the function stock_take is not flagged no-writes: a replica refuses it (and FCALL_RO refuses a function without no-writes); run it on the primary\n");
    let (code, stdout, stderr) = evalbench(&[
        "function",
        "call",
        "--server",
        &url,
        "stock_peek",
        "stock:1",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("(FCALL_RO)\n"), "{stdout}");
    assert_eq!(pconn.cmd(&["GET", "stock:1"]), Reply::bulk("5"));
}

#[test]
fn run_function_on_a_server_calls_it_only_when_the_library_is_the_file() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["SET", "stock:1", "5"]);
    let url = format!("redis://127.0.0.1:{}", server.port);
    let port = server.port;
    let dir_tmp = tempdir("run");
    let dir = dir_tmp.path().to_path_buf();
    let shop = write(&dir, "shop.lua", SHOP);
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--server", &url];
        args.extend_from_slice(extra);
        evalbench(&args)
    };

    let (code, _, stderr) = run(&["--function", "stock_peek", &shop, "stock:1"]);
    assert_eq!(code, 2);
    assert_eq!(stderr, format!("evalbench: 127.0.0.1:{port} has no function named stock_peek: load the library first (evalbench function load --server URL --yes {shop}). Nothing was sent.\n"));

    conn.cmd(&["FUNCTION", "LOAD", SHOP]);
    let (code, _, stderr) = run(&[
        "--repeat",
        "2",
        "--function",
        "stock_peek",
        &shop,
        "stock:1",
    ]);
    assert_eq!(code, 2);
    assert_eq!(stderr, "evalbench: --repeat runs in the sandbox only (a live run is sent once); drop --repeat or --server\n");
    let (code, stdout, stderr) = run(&["--function", "stock_peek", &shop, "stock:1"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("function: stock_peek of library shop (FCALL_RO)\n"),
        "{stdout}"
    );
    assert!(stdout.contains("\n1) \"5\"\n2) (integer) -1\n"), "{stdout}");

    let (code, _, _) = run(&["--function", "stock_take", &shop, "stock:1", ",", "2"]);
    assert_eq!(code, 2, "a writing function needs --yes");
    let (code, stdout, _) = run(&[
        "--yes",
        "--function",
        "stock_take",
        &shop,
        "stock:1",
        ",",
        "2",
    ]);
    assert_eq!(code, 0);
    assert!(stdout.contains("\n(integer) 3\n"), "{stdout}");
    assert_eq!(conn.cmd(&["GET", "stock:1"]), Reply::bulk("3"));

    let other = write(&dir, "other.lua", &SHOP.replace("n < 0", "n < 1"));
    let (code, _, stderr) = run(&[
        "--yes",
        "--function",
        "stock_take",
        &other,
        "stock:1",
        ",",
        "2",
    ]);
    assert_eq!(code, 2);
    assert_eq!(stderr, format!("evalbench: the server's library shop (which holds stock_take) differs from {other}: run what the server has with `evalbench function call`, or load this file first (evalbench function load --server URL --replace --yes {other}; without --yes it shows the diff). Nothing was sent.\n"));
    assert_eq!(conn.cmd(&["GET", "stock:1"]), Reply::bulk("3"));
}

#[test]
fn function_help_has_examples_and_a_server_is_required() {
    for args in [&["function", "--help"][..], &["function", "load", "--help"]] {
        let (code, stdout, _) = evalbench(args);
        assert_eq!(code, 0, "{args:?}");
        assert!(
            stdout.contains(
                "\nExamples:\n  evalbench function list --server redis://127.0.0.1:6379\n"
            ),
            "{stdout}"
        );
        assert!(stdout.contains("FUNCTION DUMP, RESTORE, DELETE and FLUSH are not offered."));
    }
    let (code, _, stderr) = evalbench(&["function", "list"]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "evalbench: evalbench function works on a live server: give --server URL (or -h/-p)\n"
    );
}

/// Three masters on loopback ports (as tests/live_cluster.rs), each with a third of the slots.
fn start_cluster(dir: &std::path::Path) -> Option<Vec<RedisServer>> {
    let dir_arg = dir.display().to_string();
    let mut nodes = Vec::new();
    for _ in 0..3 {
        nodes.push(RedisServer::start_with(&[
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes-PORT.conf",
            "--dir",
            &dir_arg,
        ])?);
    }
    let mut conns: Vec<Conn> = nodes.iter().map(|n| n.connect()).collect();
    for (conn, (from, to)) in
        conns
            .iter_mut()
            .zip([("0", "5460"), ("5461", "10922"), ("10923", "16383")])
    {
        assert_eq!(
            conn.cmd(&["CLUSTER", "ADDSLOTSRANGE", from, to]),
            Reply::ok()
        );
    }
    for node in &nodes[1..] {
        conns[0].cmd(&["CLUSTER", "MEET", "127.0.0.1", &node.port.to_string()]);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !conns.iter_mut().all(|c| match c.cmd(&["CLUSTER", "INFO"]) {
        Reply::Bulk(b) => {
            let text = String::from_utf8_lossy(&b).into_owned();
            text.contains("cluster_state:ok") && text.contains("cluster_known_nodes:3")
        }
        _ => false,
    }) {
        assert!(std::time::Instant::now() < deadline, "the cluster is ready");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Some(nodes)
}

#[test]
fn on_a_cluster_a_load_goes_to_one_master_and_a_call_to_its_keys_master() {
    let dir_tmp = tempdir("cluster");
    let dir = dir_tmp.path().to_path_buf();
    let Some(nodes) = start_cluster(&dir) else {
        return;
    };
    let shop = write(&dir, "shop.lua", SHOP);
    let url = |i: usize| format!("redis://127.0.0.1:{}", nodes[i].port);
    let (code, stdout, stderr) =
        evalbench(&["function", "load", "--server", &url(1), "--yes", &shop]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&format!("\n  cluster: FUNCTION LOAD goes to one master (127.0.0.1:{}); the other masters do not get the library (--every-master loads it on each)\n", nodes[0].port)),
        "{stdout}"
    );
    assert!(stdout.ends_with("\nloaded: shop\n"), "{stdout}");
    let libraries = |i: usize| nodes[i].connect().cmd(&["FUNCTION", "LIST"]);
    assert_ne!(libraries(0), Reply::Array(vec![]));
    assert_eq!(libraries(1), Reply::Array(vec![]));
    assert_eq!(libraries(2), Reply::Array(vec![]));

    // A key of the first master's slots: the call reaches it (from another node's URL) and the
    // function is found there; a key of the third master's: that master has no such function.
    let key_in = |from: u16, to: u16| {
        (0..1000)
            .map(|i| format!("stock:{i}"))
            .find(|k| (from..=to).contains(&evalbench::engine::lint::hash_slot(k.as_bytes())))
            .unwrap()
    };
    let (first, third) = (key_in(0, 5460), key_in(10923, 16383));
    nodes[0].connect().cmd(&["SET", &first, "5"]);
    let (code, stdout, stderr) = evalbench(&[
        "function",
        "call",
        "--server",
        &url(1),
        "--yes",
        "stock_take",
        &first,
        ",",
        "2",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("\n(integer) 3\n"), "{stdout}");
    assert_eq!(nodes[0].connect().cmd(&["GET", &first]), Reply::bulk("3"));
    let (code, _, stderr) = evalbench(&[
        "function",
        "call",
        "--server",
        &url(1),
        "--yes",
        "stock_take",
        &third,
        ",",
        "2",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("evalbench: not sent: the server has no function named stock_take"),
        "{stderr}"
    );
}
