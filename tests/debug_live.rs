//! `evalbench debug --server`: Redis's own LDB driven by the REPL, against a real redis-server
//! (exact transcripts, rollback of the forked session, SYNC keeping writes, refusals, abort).

mod common;

use common::RedisServer;
use evalbench::engine::reply::Reply;
use std::process::Command;

const SCRIPT: &str = "local a = 1
local t = {x = 1}
redis.call('SET', KEYS[1], 'v')
redis.debug('hi', t)
return redis.call('GET', KEYS[1])
";

fn debug(script: &str, args: &[&str]) -> (i32, String, String) {
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("s{n}.lua"));
    std::fs::write(&path, script).unwrap();
    let (opts, rest) = args.split_at(args.iter().position(|a| *a == "SCRIPT").unwrap());
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .arg("debug")
        .args(opts)
        .arg(&path)
        .args(&rest[1..])
        .env_remove("REDIS_URL")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The header lines before LDB's first stop (the server line carries the server's memory).
fn body(out: &str) -> &str {
    let at = out.find("\n* Stopped at 1").expect("a first stop") + 1;
    &out[at..]
}

#[test]
fn a_forked_session_reads_like_redis_cli_ldb_and_is_rolled_back() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let (code, out, err) = debug(
        SCRIPT,
        &[
            "--server",
            &url,
            "--yes",
            "--commands",
            "b 3; c; p; e t.x; r get k; back; c",
            "SCRIPT",
            "k",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let head = format!(
        "server: 127.0.0.1:{port} (redis 7.0.15 primary, busy threshold 5000 ms)\nSCRIPT DEBUG YES forks the server (used_memory ",
        port = server.port
    );
    assert!(out.starts_with(&head), "{out}");
    assert!(out.contains(&format!("Lua debugging session started on 127.0.0.1:{} (Redis's LDB). Type h for help.\nNot on a live server (sandbox only): back, rc, goto, watch, cond, bw, o, over, finish, u, until, b LINE if/hits, b COMMAND, coverage.\n\n", server.port)), "{out}");
    let expected = "* Stopped at 1, stop reason = step over
-> 1   local a = 1
lua debugger> b 3
   2   local t = {x = 1}
  #3   redis.call('SET', KEYS[1], 'v')
   4   redis.debug('hi', t)
lua debugger> c
* Stopped at 3, stop reason = break point
->#3   redis.call('SET', KEYS[1], 'v')
lua debugger> p
<value> a = 1
<value> t = {[\"x\"]=1}
lua debugger> e t.x
<error> ldb_eval:1: Script attempted to access nonexistent global variable 't'
<hint> LDB's eval runs in a frame of its own and cannot read the script's locals: p NAME shows one (the sandbox's eval reads them: drop --server).
lua debugger> r get k
<redis> get k
<reply> NULL
lua debugger> back
<error> 'back' is not available on a live server: LDB cannot step backwards. Debug in the sandbox (drop --server) for it.
lua debugger> c
<debug> line 4: \"hi\", {[\"x\"]=1}

(Lua debugging session ended -- dataset changes rolled back)

\"v\"
";
    assert_eq!(body(&out), expected);
    // The fork's SET is gone: the server never saw it.
    let mut conn = server.connect();
    assert_eq!(conn.cmd(&["EXISTS", "k"]), Reply::Int(0));
}

#[test]
fn sync_keeps_the_writes_and_needs_yes_for_them() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let (code, out, err) = debug(SCRIPT, &["--server", &url, "--sync", "SCRIPT", "k"]);
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        err,
        format!("evalbench: refused: SCRIPT DEBUG SYNC blocks 127.0.0.1:{port} for every other client while the script is stopped, and keeps every write the script makes (no rollback), so it always needs consent.\n  A dry run in the sandbox on a copy of KEYS writes:\n    line 3: SET k v\nNothing was sent to 127.0.0.1:{port}. Rerun with --yes to allow it, or drop --sync for a forked session (SCRIPT DEBUG YES: its changes are rolled back) (stdin is not a terminal to ask on).\n", port = server.port)
    );
    let (code, out, err) = debug(
        SCRIPT,
        &[
            "--server",
            &url,
            "--sync",
            "--yes",
            "--commands",
            "n; n; n",
            "SCRIPT",
            "k",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("SCRIPT DEBUG SYNC: the server is blocked while the script is stopped, and the script's changes are kept.\n"), "{out}");
    // A step over a redis.call logs the call and its reply, as LDB does.
    assert!(out.contains("lua debugger> n\n<redis> SET k v\n<reply> \"+OK\"\n* Stopped at 4, stop reason = step over\n"), "{out}");
    assert!(out.ends_with("(no more commands: the script runs to the end)\n\n(Lua debugging session ended -- dataset changes kept)\n\n\"v\"\n"), "{out}");
    let mut conn = server.connect();
    assert_eq!(conn.cmd(&["GET", "k"]), Reply::Bulk(b"v".to_vec()));
}

#[test]
fn abort_ends_the_session_with_ldbs_error_and_the_server_answers() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let (code, out, err) = debug(
        SCRIPT,
        &[
            "--server",
            &url,
            "--yes",
            "--commands",
            "n; a",
            "SCRIPT",
            "k",
        ],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        body(&out).starts_with("* Stopped at 1, stop reason = step over\n-> 1   local a = 1\nlua debugger> n\n* Stopped at 2, stop reason = step over\n-> 2   local t = {x = 1}\nlua debugger> a\n\n(Lua debugging session ended -- dataset changes rolled back)\n\n(error) ERR script aborted for user request script: "),
        "{out}"
    );
    assert!(out.ends_with(", on @user_script:2.\n"), "{out}");
    let mut conn = server.connect();
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
}

#[test]
fn refusals_are_one_line_with_the_reason() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let url = format!("redis://127.0.0.1:{}", server.port);
    // No terminal to ask on and no --yes: the fork is refused, with the server's memory.
    let (code, out, err) = debug(SCRIPT, &["--server", &url, "SCRIPT", "k"]);
    assert_eq!(code, 2, "{out}");
    let prefix = format!(
        "evalbench: refused: SCRIPT DEBUG YES would fork 127.0.0.1:{} (used_memory ",
        server.port
    );
    assert!(err.starts_with(&prefix), "{err}");
    assert!(
        err.ends_with(
            " bytes)); rerun with --yes to allow the fork (stdin is not a terminal to ask on)\n"
        ),
        "{err}"
    );
    // A user the server does not let run SCRIPT DEBUG: the server's answer, on one line.
    let mut conn = server.connect();
    assert_eq!(
        conn.cmd(&[
            "ACL",
            "SETUSER",
            "nodebug",
            "on",
            ">pw",
            "~*",
            "+@all",
            "-script|debug"
        ]),
        Reply::ok()
    );
    let limited = format!("redis://nodebug:pw@127.0.0.1:{}", server.port);
    let (code, out, err) = debug(
        SCRIPT,
        &[
            "--server",
            &limited,
            "--yes",
            "--no-auth-warning",
            "SCRIPT",
            "k",
        ],
    );
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        err,
        format!("evalbench: refused: 127.0.0.1:{} answered SCRIPT DEBUG YES with: NOPERM this user has no permissions to run the 'script|debug' command\n", server.port)
    );
    // Sandbox-only options are refused with --server.
    let (code, _, err) = debug(
        SCRIPT,
        &["--server", &url, "--yes", "--coverage", "SCRIPT", "k"],
    );
    assert_eq!(code, 2);
    assert_eq!(err, "evalbench: --coverage is for the sandbox debugger: on a live server LDB cannot count line executions; drop --coverage or --server\n");
    assert_eq!(conn.cmd(&["DBSIZE"]), Reply::Int(0));
}

#[test]
fn sync_is_refused_on_a_replica() {
    let (Some(primary), Some(replica)) = (RedisServer::start(), RedisServer::start()) else {
        return;
    };
    let mut rconn = replica.connect();
    assert_eq!(
        rconn.cmd(&["REPLICAOF", "127.0.0.1", &primary.port.to_string()]),
        Reply::ok()
    );
    let url = format!("redis://127.0.0.1:{}", replica.port);
    let (code, _, err) = debug(
        SCRIPT,
        &["--server", &url, "--sync", "--yes", "SCRIPT", "k"],
    );
    assert_eq!(code, 2);
    assert_eq!(
        err,
        format!("evalbench: refused: 127.0.0.1:{} is a replica: SCRIPT DEBUG SYNC keeps the script's writes, which a replica refuses; use the primary, or drop --sync for a forked session\n", replica.port)
    );
}

#[test]
fn json_gives_ldbs_lines_as_the_repls_events() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let (code, out, err) = debug(
        SCRIPT,
        &[
            "--server",
            &url,
            "--yes",
            "--json",
            "--commands",
            "n; p a; p b; c",
            "SCRIPT",
            "k",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<&str> = out.lines().skip(2).collect();
    assert_eq!(
        lines,
        [
            r#"{"event":"stop","text":"* Stopped at 1, stop reason = step over","line":1}"#,
            r#"{"event":"source","text":"-> 1   local a = 1","line":1}"#,
            r#"{"event":"stop","text":"* Stopped at 2, stop reason = step over","line":2}"#,
            r#"{"event":"source","text":"-> 2   local t = {x = 1}","line":2}"#,
            r#"{"event":"value","text":"<value> 1"}"#,
            r#"{"event":"error","text":"No such variable."}"#,
            r#"{"event":"debug","text":"<debug> line 4: \"hi\", {[\"x\"]=1}"}"#,
            r#"{"event":"end","text":"(Lua debugging session ended -- dataset changes rolled back)","reply":"\"v\"","error":false}"#,
        ]
    );
}

/// On a cluster the session runs on the master of the keys' slot: here the one node, with --sync
/// (its write is kept), every line naming it.
#[test]
fn a_cluster_session_runs_on_the_keys_node() {
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let dir_arg = dir.display().to_string();
    let Some(node) = RedisServer::start_with(&[
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes-PORT.conf",
        "--dir",
        &dir_arg,
    ]) else {
        return;
    };
    let mut conn = node.connect();
    assert_eq!(
        conn.cmd(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]),
        Reply::ok()
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !matches!(conn.cmd(&["CLUSTER", "INFO"]), Reply::Bulk(b) if String::from_utf8_lossy(&b).contains("cluster_state:ok"))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the node did not become ready"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let url = format!("redis://127.0.0.1:{}", node.port);
    let (code, out, err) = debug(
        SCRIPT,
        &["--server", &url, "--yes", "--sync", "SCRIPT", "k"],
    );
    assert_eq!((code, err.as_str()), (0, ""));
    let at = format!(
        "127.0.0.1:{} (master, slot {})",
        node.port,
        evalbench::engine::lint::hash_slot(b"k")
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        format!("server: {at} (redis 7.0.15 primary (cluster), busy threshold 5000 ms, cluster-node-timeout 15000 ms)")
    );
    assert!(
        lines.contains(
            &format!("(Lua debugging session on {at} ended -- dataset changes kept)").as_str()
        ),
        "{out}"
    );
    assert_eq!(conn.cmd(&["GET", "k"]), Reply::bulk("v"));
    drop(node);
}

/// A forked session of code SCRIPT KILL cannot stop says so before the fork is agreed to: looping
/// there, the fork's process would go on until the server is restarted.
#[test]
fn a_fork_of_an_unkillable_script_says_so_before_the_consent() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let (code, out, err) = debug(
        "return xpcall(function() error('x') end, function() while true do end end)",
        &["--server", &url, "SCRIPT"],
    );
    assert_eq!(code, 2, "{out}");
    assert!(
        err.ends_with(" bytes)); SCRIPT KILL cannot stop this script (line 1: a `while` loop in the error handler of xpcall at line 1: it runs with Lua's hooks off once the script is killed, so SCRIPT KILL cannot stop it and the server may need a restart): looping there, the fork's process keeps running (and holding its memory) until the server is restarted; rerun with --yes to allow the fork (stdin is not a terminal to ask on)\n"),
        "{err}"
    );
    let mut conn = server.connect();
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
}
