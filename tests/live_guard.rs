//! The live guard's blind spots, against a real redis-server: a dry run that read what the copy of
//! KEYS lacks is no preview (asked, refused without --yes), code SCRIPT KILL cannot stop is never
//! sent unasked, and `debug --server --sync` always needs consent. After each refusal the server's
//! keyspace is unchanged and PING answers. A script that would freeze the server is never sent.

mod common;

use common::{dump, RedisServer};
use evalbench::engine::live::guarded::{guarded_run, Concern, Consent, RunControl};
use evalbench::engine::live::{LiveBackend, TargetSpec};
use evalbench::engine::reply::Reply;
use evalbench::engine::RunRequest;
use std::process::Command;

const PWN: &str =
    "if redis.call('EXISTS','other:key')==1 then redis.call('SET','pwned','yes') end return 1";
const FREEZE: &str = "return xpcall(function() if redis.call('EXISTS','other:key')==1 then error('x') end end, function() while true do end end)";
const SPIN: &str = "while redis.call('EXISTS','other:key')==1 do end return 1";

fn server() -> Option<RedisServer> {
    let server = RedisServer::start()?;
    let mut conn = server.connect();
    conn.cmd(&["SET", "other:key", "1"]);
    conn.cmd(&["SET", "k", "v"]);
    // The sandbox stops a loop SCRIPT KILL cannot stop at the busy threshold: kept short so the dry
    // runs of such loops end soon.
    conn.cmd(&["CONFIG", "SET", "busy-reply-threshold", "1000"]);
    Some(server)
}

/// The dry run's time, from a question whose dry run was stopped.
fn stopped_after(concerns: &[Concern]) -> f64 {
    concerns
        .iter()
        .find_map(|c| match c {
            Concern::Incomplete { ms, .. } => Some(*ms),
            _ => None,
        })
        .expect("the dry run did not complete")
}

const FREEZE_PLACE: &str = "line 1: a `while` loop in the error handler of xpcall at line 1: it runs with Lua's hooks off once the script is killed, so SCRIPT KILL cannot stop it and the server may need a restart";

/// The keyspace as seeded, and a server that answers.
fn untouched(server: &RedisServer) {
    let mut conn = server.connect();
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
    assert_eq!(conn.cmd(&["EXISTS", "pwned"]), Reply::Int(0));
    assert_eq!(
        dump(&mut conn),
        serde_json::json!({"k": {"type": "string", "value": "v"}, "other:key": {"type": "string", "value": "1"}})
    );
}

fn evalbench(args: &[&str], script: &str) -> (i32, String, String) {
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("s{n}.lua"));
    std::fs::write(&path, script).unwrap();
    let at = args.iter().position(|a| *a == "SCRIPT").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(&args[..at])
        .arg(&path)
        .args(&args[at + 1..])
        .env_remove("REDIS_URL")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn backend(server: &RedisServer) -> LiveBackend {
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..TargetSpec::default()
    }
    .resolve()
    .expect("target");
    LiveBackend::connect(target).expect("connect")
}

fn request(script: &str, keys: &[&str], argv: &[&str]) -> RunRequest {
    RunRequest {
        script: script.as_bytes().to_vec(),
        keys: keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
        argv: argv.iter().map(|a| a.as_bytes().to_vec()).collect(),
        ..RunRequest::default()
    }
}

/// The concerns of a guarded run that must ask (nothing sent), and its question's consent.
fn asked(live: &mut LiveBackend, req: &RunRequest) -> (Vec<Concern>, Consent, String) {
    let control = RunControl::default();
    control.begin(&req.keys);
    let run = guarded_run(live, req, &Consent::default(), &control, 0);
    assert!(!run.sent, "{:?}", run.report.reply);
    let question = run.question.expect("the guard asks");
    let text = question.text();
    (question.concerns, question.consent, text)
}

#[test]
fn run_server_refuses_the_probes_without_yes() {
    let Some(server) = server() else { return };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let port = server.port;

    let (code, out, err) = evalbench(&["run", "--server", &url, "SCRIPT"], PWN);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(err, format!("evalbench: refused: the dry run in the sandbox on a copy of KEYS is no preview of the server: this call reads what the copy lacks:\n  line 1: EXISTS other:key (key other:key not in KEYS: the copy lacks it)\nNothing was sent to 127.0.0.1:{port}. Declare every key the script touches in KEYS, or rerun with --yes to send it anyway (with --read-only too, as EVAL_RO: the server refuses any write).\n"));
    untouched(&server);

    let (code, out, err) = evalbench(&["run", "--server", &url, "SCRIPT"], FREEZE);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(err, format!("evalbench: refused: SCRIPT KILL cannot stop this script:\n  line 1: a `while` loop in the error handler of xpcall at line 1: it runs with Lua's hooks off once the script is killed, so SCRIPT KILL cannot stop it and the server may need a restart\nIf that code runs long, the server stays busy for every client and may need a restart. Nothing was sent to 127.0.0.1:{port}. Rerun with --yes to send it anyway (with --read-only too, as EVAL_RO).\n"));
    untouched(&server);

    // --read-only does not make it safe to send: EVAL_RO runs the loop all the same.
    let (code, _, err) = evalbench(&["run", "--server", &url, "--read-only", "SCRIPT"], FREEZE);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("evalbench: refused: SCRIPT KILL cannot stop this script:\n"),
        "{err}"
    );

    let (code, out, err) = evalbench(&["run", "--server", &url, "SCRIPT"], SPIN);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains(
            "\n  line 1: EXISTS other:key (key other:key not in KEYS: the copy lacks it)\n"
        ),
        "{err}"
    );
    untouched(&server);

    // Consent with --read-only --yes sends the first probe as EVAL_RO: the server refuses the SET.
    let (code, out, err) = evalbench(
        &["run", "--server", &url, "--read-only", "--yes", "SCRIPT"],
        PWN,
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("(error) ERR Write commands are not allowed from read-only scripts."),
        "{out}"
    );
    untouched(&server);
}

#[test]
fn debug_sync_always_needs_consent_and_says_why() {
    let Some(server) = server() else { return };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let port = server.port;
    let (code, out, err) = evalbench(&["debug", "--server", &url, "--sync", "SCRIPT"], PWN);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(err, format!("evalbench: refused: SCRIPT DEBUG SYNC blocks 127.0.0.1:{port} for every other client while the script is stopped, and keeps every write the script makes (no rollback), so it always needs consent.\n  The dry run is no preview of the server: these calls read what the copy of KEYS lacks:\n    line 1: EXISTS other:key (key other:key not in KEYS: the copy lacks it)\nNothing was sent to 127.0.0.1:{port}. Rerun with --yes to allow it, or drop --sync for a forked session (SCRIPT DEBUG YES: its changes are rolled back) (stdin is not a terminal to ask on).\n"));
    untouched(&server);

    // A script whose dry run shows nothing to fear is refused all the same.
    let (code, _, err) = evalbench(
        &["debug", "--server", &url, "--sync", "SCRIPT", "k"],
        "return redis.call('GET', KEYS[1])",
    );
    assert_eq!(code, 2);
    assert_eq!(err, format!("evalbench: refused: SCRIPT DEBUG SYNC blocks 127.0.0.1:{port} for every other client while the script is stopped, and keeps every write the script makes (no rollback), so it always needs consent.\n  A dry run in the sandbox on a copy of KEYS shows no write, but it cannot vouch for the server.\nNothing was sent to 127.0.0.1:{port}. Rerun with --yes to allow it, or drop --sync for a forked session (SCRIPT DEBUG YES: its changes are rolled back) (stdin is not a terminal to ask on).\n"));

    let (code, _, err) = evalbench(&["debug", "--server", &url, "--sync", "SCRIPT"], FREEZE);
    assert_eq!(code, 2);
    assert!(err.contains("\n  SCRIPT KILL cannot stop it (the server may need a restart):\n    line 1: a `while` loop in the error handler of xpcall at line 1: "), "{err}");
    untouched(&server);
}

#[test]
fn the_guard_asks_for_each_probe_and_consent_sends_eval_ro() {
    let Some(server) = server() else { return };
    let mut live = backend(&server);

    let req = request(PWN, &[], &[]);
    let (concerns, consent, text) = asked(&mut live, &req);
    assert_eq!(
        concerns,
        vec![Concern::Unseen(vec![
            "line 1: EXISTS other:key (key other:key not in KEYS: the copy lacks it)".into()
        ])]
    );
    assert!(consent.unseen && !consent.writes);
    assert_eq!(text, "The dry run is no preview of the server: it could not see what this call read (line 1: EXISTS other:key (key other:key not in KEYS: the copy lacks it)). Nothing was sent. y sends it as EVAL_RO (the server refuses any write); Esc on the server sends SCRIPT KILL. Send it to the live server? (y/n)");
    untouched(&server);
    // Yes: sent as EVAL_RO, so the write the dry run could not see is refused by the server.
    let control = RunControl::default();
    control.begin(&req.keys);
    let run = guarded_run(&mut live, &req, &consent, &control, 0);
    assert!(run.sent);
    match &run.report.reply {
        Reply::Error(e) => assert!(
            e.starts_with("ERR Write commands are not allowed from read-only scripts."),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }
    untouched(&server);

    // Code SCRIPT KILL cannot stop is dry-run too, and asked about with everything else the dry
    // run found, in one question (the copy lacks other:key: its handler never ran in the sandbox).
    let (concerns, consent, text) = asked(&mut live, &request(FREEZE, &[], &[]));
    assert_eq!(
        concerns,
        vec![
            Concern::Unkillable(vec![FREEZE_PLACE.into()]),
            Concern::Unseen(vec![
                "line 1: EXISTS other:key (key other:key not in KEYS: the copy lacks it)".into()
            ])
        ]
    );
    assert!(consent.unkillable && consent.unseen && !consent.slow && !consent.writes);
    assert_eq!(text, format!("SCRIPT KILL cannot stop this script ({FREEZE_PLACE}): if that code runs long, the server stays busy for every client and may need a restart; The dry run is no preview of the server: it could not see what this call read (line 1: EXISTS other:key (key other:key not in KEYS: the copy lacks it)). Nothing was sent. y sends it as EVAL_RO (the server refuses any write); Esc on the server sends SCRIPT KILL, which cannot stop those places. Send it to the live server? (y/n)"));

    let (concerns, _, _) = asked(&mut live, &request(SPIN, &[], &[]));
    assert_eq!(
        concerns,
        vec![Concern::Unseen(vec![
            "line 1: EXISTS other:key (key other:key not in KEYS: the copy lacks it)".into()
        ])]
    );
    untouched(&server);
}

/// Variants of the same families, as an attacker would write them: each is asked about, and
/// nothing reaches the server.
#[test]
fn attacker_variants_are_asked_about() {
    let Some(server) = server() else { return };
    let mut live = backend(&server);
    let unseen: &[(&str, &[&str], &[&str], &str)] = &[
        // A key name built at run time.
        ("if redis.call('EXISTS','other'..':'..'key')==1 then redis.call('SET','pwned','yes') end return 1", &[], &[],
         "line 1: EXISTS other:key (key other:key not in KEYS: the copy lacks it)"),
        // redis.pcall reads it as well.
        ("if redis.pcall('EXISTS','other:key')==1 then redis.call('SET','pwned','yes') end return 1", &[], &[],
         "line 1: EXISTS other:key (key other:key not in KEYS: the copy lacks it)"),
        // The key passed through ARGV.
        ("return redis.call('GET', ARGV[1])", &["k"], &["other:key"],
         "line 1: GET other:key (key other:key not in KEYS: the copy lacks it)"),
        // SCAN, KEYS, DBSIZE and RANDOMKEY read the keyspace as a whole.
        ("local r = redis.call('SCAN', '0', 'MATCH', 'other:*')\nreturn #r[2]", &[], &[],
         "line 1: SCAN 0 MATCH other:* (its reply differs from run to run)"),
        ("return #redis.call('KEYS', 'other:*')", &[], &[],
         "line 1: KEYS other:* (it reads the whole keyspace)"),
        ("while redis.call('DBSIZE') > 0 do end return 1", &[], &[],
         "line 1: DBSIZE (it reads the whole keyspace)"),
        ("return redis.call('RANDOMKEY')", &[], &[],
         "line 1: RANDOMKEY (its reply differs from run to run)"),
        // INFO: the server's own state.
        ("return string.len(redis.call('INFO', 'keyspace'))", &[], &[],
         "line 1: INFO keyspace (it reads the server's own state)"),
        // Another database: the copy holds KEYS of the first only.
        ("redis.call('SELECT', 1)\nreturn redis.call('EXISTS', KEYS[1])", &["k"], &[],
         "line 2: EXISTS k (key k in database 1 after SELECT: the copy holds KEYS of the first only)"),
        // SORT's BY and GET patterns read keys it does not name.
        ("return redis.call('SORT_RO', KEYS[1], 'BY', 'nosort', 'GET', 'other:*')", &["k"], &[],
         "line 1: SORT_RO k BY nosort GET other:* (a BY or GET pattern reads keys it does not name)"),
        // A key read inside a coroutine.
        ("local co = coroutine.wrap(function() return redis.call('GET', 'other:key') end)\nreturn co()", &[], &[],
         "line 1: GET other:key (key other:key not in KEYS: the copy lacks it)"),
    ];
    for (script, keys, argv, line) in unseen {
        let (concerns, consent, _) = asked(&mut live, &request(script, keys, argv));
        match concerns.last() {
            Some(Concern::Unseen(lines)) => {
                assert!(lines.iter().any(|l| l == line), "{script}: {lines:?}")
            }
            other => panic!("{script}: {other:?}"),
        }
        assert!(consent.unseen, "{script}");
        assert!(!consent.writes, "{script}");
    }
    // Loops SCRIPT KILL cannot stop, however the handler is reached.
    let unkillable: &[&str] = &[
        "local function spin() while true do end end\nreturn xpcall(function() error('x') end, function(e) pcall(spin) return e end)",
        "local function h(e) repeat until false end\nreturn xpcall(error, h)",
        "local co = coroutine.wrap(function() return xpcall(error, function() while true do end end) end)\nreturn co()",
        "return _G['xp'..'call'](error, function() while true do end end)",
        "local xp = xpcall\nreturn xp(error, function() while true do end end)",
        "return loadstring(ARGV[1])()",
        "local function h(e) return h(e) end\nreturn xpcall(error, h)",
        "return xpcall(error, function(e) for i = 1, tonumber(ARGV[1]) do end return e end)",
        "local t = setmetatable({}, {__index = function() while true do end end})\nreturn xpcall(error, function(e) return t.x end)",
        "return xpcall(error, function(e) for k in pairs(KEYS) do end return e end)",
    ];
    for script in unkillable {
        let (concerns, consent, text) = asked(&mut live, &request(script, &[], &["return 1"]));
        assert!(
            matches!(concerns.first(), Some(Concern::Unkillable(_))),
            "{script}: {concerns:?}"
        );
        assert!(consent.unkillable && !consent.writes, "{script}");
        assert!(
            text.contains("the server stays busy for every client and may need a restart"),
            "{script}: {text}"
        );
    }
    untouched(&server);
}

/// A function's library: a read of a key outside KEYS and a loop in an error handler are asked
/// about as for a script (FCALL would run them on the server all the same).
#[test]
fn a_function_is_guarded_as_a_script_is() {
    use evalbench::engine::live::fcall::guarded_fcall;
    use evalbench::engine::FunctionCall;
    let Some(server) = server() else { return };
    let mut conn = server.connect();
    let lib = "#!lua name=guardlib\nredis.register_function{function_name='peek', callback=function(keys, args) return redis.call('EXISTS', 'other:key') end, flags={'no-writes'}}";
    assert_eq!(
        conn.cmd(&["FUNCTION", "LOAD", lib]),
        Reply::Bulk(b"guardlib".to_vec())
    );
    let mut live = backend(&server);
    let call = |name: &str| FunctionCall {
        name: name.into(),
        ..FunctionCall::default()
    };
    let control = RunControl::default();
    control.begin(&[]);
    let run = guarded_fcall(&mut live, &call("peek"), &Consent::default(), &control, 0);
    assert!(!run.sent);
    assert_eq!(
        run.question.expect("asked").concerns,
        vec![Concern::Unseen(vec![
            "line 2: EXISTS other:key (key other:key not in KEYS: the copy lacks it)".into()
        ])]
    );

    let lib = "#!lua name=freezelib\nredis.register_function{function_name='freeze', callback=function(keys, args)\n  return xpcall(error, function() while true do end end)\nend, flags={'no-writes'}}";
    assert_eq!(
        conn.cmd(&["FUNCTION", "LOAD", lib]),
        Reply::Bulk(b"freezelib".to_vec())
    );
    control.begin(&[]);
    let run = guarded_fcall(&mut live, &call("freeze"), &Consent::default(), &control, 0);
    assert!(!run.sent);
    let question = run.question.expect("asked");
    let ms = stopped_after(&question.concerns);
    assert_eq!(question.concerns, vec![Concern::Unkillable(vec!["line 3: a `while` loop in the error handler of xpcall at line 3: it runs with Lua's hooks off once the script is killed, so SCRIPT KILL cannot stop it and the server may need a restart".into()]), Concern::Incomplete { why: "stopped at the busy threshold (1000 ms)".into(), ms }]);
    assert!(question.consent.unkillable && question.consent.slow && !question.consent.writes);
    conn.cmd(&["FUNCTION", "DELETE", "guardlib"]);
    conn.cmd(&["FUNCTION", "DELETE", "freezelib"]);
    untouched(&server);
}

/// The dry run of a loop in an error handler ends at the busy threshold: the one question says the
/// dry run did not complete and that SCRIPT KILL cannot stop it.
#[test]
fn the_dry_run_of_an_unkillable_loop_ends_at_the_busy_threshold() {
    let Some(server) = server() else { return };
    let mut live = backend(&server);
    let script = "return xpcall(function() error('x') end, function() while true do end end)";
    let (concerns, consent, text) = asked(&mut live, &request(script, &[], &[]));
    let ms = stopped_after(&concerns);
    assert!(ms >= 1000.0, "{ms}");
    assert_eq!(
        concerns,
        vec![
            Concern::Unkillable(vec![FREEZE_PLACE.into()]),
            Concern::Incomplete {
                why: "stopped at the busy threshold (1000 ms)".into(),
                ms
            }
        ]
    );
    assert!(consent.unkillable && consent.slow && !consent.writes && !consent.unseen);
    assert_eq!(text, format!("SCRIPT KILL cannot stop this script ({FREEZE_PLACE}): if that code runs long, the server stays busy for every client and may need a restart; The dry run did not complete: stopped at the busy threshold (1000 ms) after {ms:.1} ms (on the server it would keep every other client waiting until it ends or is killed). Nothing was sent. y sends it as EVAL_RO (the server refuses any write); Esc on the server sends SCRIPT KILL, which cannot stop those places. Send it to the live server? (y/n)"));
    untouched(&server);
}

/// A script with a place SCRIPT KILL cannot stop and a write: one question, with the dry run's
/// trace and diff; a yes sends EVAL with writes allowed, and the server's key is written once.
#[test]
fn an_unkillable_place_and_a_write_are_one_question_and_yes_writes_once() {
    use evalbench::engine::keyspace::keyspace_to_json;
    let Some(server) = server() else { return };
    let mut live = backend(&server);
    let script = "redis.call('INCR', KEYS[1])\nlocal ok = xpcall(function() return 1 end, function() while true do end end)\nreturn redis.call('GET', KEYS[1])";
    let req = request(script, &["counter"], &[]);
    let control = RunControl::default();
    control.begin(&req.keys);
    let run = guarded_run(&mut live, &req, &Consent::default(), &control, 0);
    assert!(!run.sent);
    let question = run.question.expect("the guard asks");
    let place = "line 2: a `while` loop in the error handler of xpcall at line 2: it runs with Lua's hooks off once the script is killed, so SCRIPT KILL cannot stop it and the server may need a restart";
    assert_eq!(
        question.concerns,
        vec![
            Concern::Unkillable(vec![place.into()]),
            Concern::Writes(vec!["line 1: INCR counter".into()])
        ]
    );
    assert!(question.consent.unkillable && question.consent.writes);
    assert!(!question.consent.slow && !question.consent.unseen);
    assert_eq!(question.text(), format!("SCRIPT KILL cannot stop this script ({place}): if that code runs long, the server stays busy for every client and may need a restart; The dry run WRITES (line 1: INCR counter). Nothing was sent. y sends it with writes allowed; Esc on the server sends SCRIPT KILL, which cannot stop those places. Send it to the live server? (y/n)"));
    // The dry run's trace and keyspace diff come with the question.
    assert_eq!(run.report.trace.len(), 2, "{:?}", run.report.trace);
    assert_eq!(keyspace_to_json(&run.before, 0), serde_json::json!({}));
    assert_eq!(
        keyspace_to_json(&run.after, 0),
        serde_json::json!({"counter": {"type": "string", "value": "1"}})
    );
    assert_eq!(server.connect().cmd(&["EXISTS", "counter"]), Reply::Int(0));

    control.begin(&req.keys);
    let run = guarded_run(&mut live, &req, &question.consent, &control, 0);
    assert!(run.sent);
    assert_eq!(run.report.reply, Reply::Bulk(b"1".to_vec()));
    let mut conn = server.connect();
    assert_eq!(conn.cmd(&["GET", "counter"]), Reply::Bulk(b"1".to_vec()));
    let Reply::Bulk(info) = conn.cmd(&["INFO", "commandstats"]) else {
        panic!("INFO commandstats")
    };
    let info = String::from_utf8_lossy(&info);
    assert!(
        info.lines().any(|l| l.starts_with("cmdstat_eval:calls=1,")),
        "{info}"
    );
    assert!(!info.contains("cmdstat_eval_ro"), "{info}");
}

/// The server's script calls so far (INFO commandstats): none, when nothing was sent.
fn script_calls(server: &RedisServer) -> Vec<String> {
    let Reply::Bulk(info) = server.connect().cmd(&["INFO", "commandstats"]) else {
        panic!("INFO commandstats answers a bulk string")
    };
    String::from_utf8_lossy(&info)
        .lines()
        .filter(|l| l.starts_with("cmdstat_eval") || l.starts_with("cmdstat_script"))
        .map(str::to_string)
        .collect()
}

/// A pattern search runs inside one C call on the server, where neither the hook nor SCRIPT KILL
/// reaches: its dry run, stopped there, raises the unkillable concern (no read timeout or SCRIPT
/// KILL is promised), and nothing reaches the server, which would freeze.
#[test]
fn a_pattern_search_that_would_freeze_the_server_is_never_sent() {
    let Some(server) = server() else { return };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let port = server.port;
    let pattern = "local s, p = string.rep('a', 3000), string.rep('a*', 12) .. 'b'\n";
    let inside = |what: &str| {
        format!("line 2: stopped at the busy threshold inside {what}, one C call: Redis's hook never fires there, so on a server no client is answered, SCRIPT KILL included, until the call returns (a kill sent meanwhile acts then): a call that runs for long leaves a restart as the only way out")
    };
    let script = format!("{pattern}return string.find(s, p)");
    for extra in [&[][..], &["--read-only"][..]] {
        let args: Vec<&str> = ["run", "--server", &url]
            .into_iter()
            .chain(extra.iter().copied())
            .chain(["SCRIPT"])
            .collect();
        let (code, out, err) = evalbench(&args, &script);
        assert_eq!(code, 2, "{out}{err}");
        assert_eq!(err, format!("evalbench: refused: SCRIPT KILL cannot stop this script:\n  {}\nIf that code runs long, the server stays busy for every client and may need a restart. Nothing was sent to 127.0.0.1:{port}. Rerun with --yes to send it anyway (with --read-only too, as EVAL_RO).\n", inside("string.find")));
        assert!(!err.contains("--read-timeout"), "{err}");
    }
    untouched(&server);
    assert_eq!(script_calls(&server), Vec::<String>::new());

    // The engine's guard (the workbench, `function call`): one unkillable concern, no promise.
    let mut live = backend(&server);
    for (call, what) in [
        ("return string.match(s, p)", "string.match"),
        ("return s:gsub(p, 'x')", "string.gsub"),
        (
            "for m in s:gmatch(p) do end return 1",
            "the C iterator of a `for ... in` loop",
        ),
    ] {
        let script = format!("{pattern}{call}");
        let (concerns, consent, text) = asked(&mut live, &request(&script, &[], &[]));
        assert_eq!(
            concerns,
            vec![Concern::Unkillable(vec![inside(what)])],
            "{call}"
        );
        assert!(consent.unkillable && !consent.slow && !consent.writes && !consent.unseen);
        assert!(
            text.ends_with("Esc on the server sends SCRIPT KILL, which cannot stop those places. Send it to the live server? (y/n)"),
            "{text}"
        );
    }
    untouched(&server);
    assert_eq!(script_calls(&server), Vec::<String>::new());

    // A stop inside the allocator within one C call (string.rep's result faulted in, with a 1 ms
    // busy threshold on the server) is the same concern.
    let mut conn = server.connect();
    assert_eq!(
        conn.cmd(&["CONFIG", "SET", "busy-reply-threshold", "1"]),
        Reply::ok()
    );
    let rep = inside("string.rep").replacen("line 2:", "line 1:", 1);
    let (code, out, err) = evalbench(
        &["run", "--server", &url, "SCRIPT"],
        "local s = string.rep('x', 48 * 2^20)\nreturn #s",
    );
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(err, format!("evalbench: refused: SCRIPT KILL cannot stop this script:\n  {rep}\nIf that code runs long, the server stays busy for every client and may need a restart. Nothing was sent to 127.0.0.1:{port}. Rerun with --yes to send it anyway (with --read-only too, as EVAL_RO).\n"));
    untouched(&server);
    assert_eq!(script_calls(&server), Vec::<String>::new());
}

/// `redis.acl_check_cmd` answers from the server's ACL rules, which the sandbox does not have (it
/// answers as the default user): a dry run that asked is no preview, and nothing is sent unasked.
#[test]
fn acl_check_cmd_is_a_read_the_dry_run_cannot_see() {
    let Some(server) = server() else { return };
    let url = format!("redis://127.0.0.1:{}", server.port);
    let port = server.port;
    let script = "local can = 'no'\nif redis.acl_check_cmd('SET', KEYS[1], 'v') then can = 'yes' end\nreturn can";
    let (code, out, err) = evalbench(&["run", "--server", &url, "SCRIPT", "k"], script);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(err, format!("evalbench: refused: the dry run in the sandbox on a copy of KEYS is no preview of the server: this call reads what the copy lacks:\n  line 2: redis.acl_check_cmd SET k v (the answer depends on the ACL user the server runs the script for: the sandbox answers as the default user, who may run every command)\nNothing was sent to 127.0.0.1:{port}. Declare every key the script touches in KEYS, or rerun with --yes to send it anyway (with --read-only too, as EVAL_RO: the server refuses any write).\n"));
    untouched(&server);
    assert_eq!(script_calls(&server), Vec::<String>::new());

    // Why: a user who may not SET gets another answer from the server than the sandbox gives.
    server.connect().cmd(&[
        "ACL", "SETUSER", "reader", "on", ">pw", "~*", "+@all", "-set",
    ]);
    let reader = format!("redis://reader:pw@127.0.0.1:{}", server.port);
    let (code, out, err) = evalbench(
        &[
            "run",
            "--server",
            &reader,
            "--yes",
            "--read-only",
            "SCRIPT",
            "k",
        ],
        script,
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("\"no\""), "{out}");
    let (code, out, err) = evalbench(&["run", "SCRIPT", "k"], script);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("\"yes\""), "{out}");
    untouched(&server);
}

/// On Valkey, `server` is the `redis` table under another name: the traced copy records its calls
/// (and a guarded run's report shows them), however the script reaches it.
#[test]
fn valkey_server_calls_are_traced() {
    use evalbench::engine::live::WriteMode;
    use evalbench::engine::report::Via;
    for profile in ["valkey-8.1", "valkey-9.1"] {
        let Some(server) = RedisServer::start_profile(profile) else {
            continue;
        };
        let mut live = backend(&server);
        let scripts = [
            // Every call names its command.
            "server.call('SET', KEYS[1], 'v')\nlocal r = server.pcall('GET', KEYS[1])\nreturn redis.call('GET', KEYS[1])",
            // Kept in a local, called through pcall.
            "local s = server\ns.call('SET', KEYS[1], 'v')\nlocal ok, r = pcall(server.pcall, 'GET', KEYS[1])\nreturn redis.call('GET', KEYS[1])",
        ];
        for script in scripts {
            server.connect().cmd(&["DEL", "k"]);
            let report = live
                .run(&request(script, &["k"], &[]), WriteMode::Allowed)
                .expect("runs");
            assert_eq!(
                report.reply,
                Reply::Bulk(b"v".to_vec()),
                "{profile}: {script}"
            );
            let calls: Vec<(u32, String, Via)> = report
                .trace
                .iter()
                .map(|t| {
                    let words: Vec<String> = t
                        .command
                        .iter()
                        .map(|a| String::from_utf8_lossy(a).into_owned())
                        .collect();
                    (t.line, words.join(" "), t.via)
                })
                .collect();
            let first = if script.starts_with("local") { 2 } else { 1 };
            assert_eq!(
                calls,
                vec![
                    (first, "SET k v".to_string(), Via::Call),
                    (first + 1, "GET k".to_string(), Via::Pcall),
                    (first + 2, "GET k".to_string(), Via::Call),
                ],
                "{profile}: {script}"
            );
        }
        // The guard's question lists the write made through `server`.
        let (concerns, _, _) = asked(
            &mut live,
            &request("return server.call('SET', KEYS[1], 'w')", &["k"], &[]),
        );
        assert_eq!(
            concerns,
            vec![Concern::Writes(vec!["line 1: SET k w".into()])]
        );
        assert_eq!(
            server.connect().cmd(&["GET", "k"]),
            Reply::Bulk(b"v".to_vec())
        );
    }
}

/// On a connection to database 3, `SELECT 0` leaves the database the copy of KEYS came from
/// (though the sandbox's database 0 holds the copy): the dry run is no preview, and a write there
/// says its database. Nothing is sent.
#[test]
fn select_away_from_the_connections_database_is_asked_about() {
    let Some(server) = server() else { return };
    let mut conn = server.connect();
    conn.cmd(&["SELECT", "3"]);
    conn.cmd(&["SET", "k", "db3"]);
    let url = format!("redis://127.0.0.1:{}/3", server.port);
    let port = server.port;
    let (code, out, err) = evalbench(
        &["run", "--server", &url, "SCRIPT", "k"],
        "redis.call('SELECT', 0)\nreturn redis.call('GET', KEYS[1])",
    );
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(err, format!("evalbench: refused: the dry run in the sandbox on a copy of KEYS is no preview of the server: this call reads what the copy lacks:\n  line 2: GET k (key k in database 0 after SELECT: the copy holds KEYS of the first only)\nNothing was sent to 127.0.0.1:{port}. Declare every key the script touches in KEYS, or rerun with --yes to send it anyway (with --read-only too, as EVAL_RO: the server refuses any write).\n"));
    let (code, out, err) = evalbench(
        &["run", "--server", &url, "SCRIPT", "k"],
        "redis.call('SELECT', 0)\nreturn redis.call('SET', KEYS[1], 'x')",
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.starts_with("evalbench: refused: a dry run in the sandbox on a copy of KEYS shows the script writes (writes on a live server need --yes):\n  line 2: SET k x (in database 0)\n"),
        "{err}"
    );
    assert_eq!(conn.cmd(&["GET", "k"]), Reply::Bulk(b"db3".to_vec()));
    untouched(&server);
    assert_eq!(script_calls(&server), Vec::<String>::new());
}

/// A server whose busy-reply-threshold is 0 (every script is busy for other clients from its
/// start): the dry run of a loop still ends (0 would be "never" in the sandbox), and the run is
/// refused, saying why.
#[test]
fn a_zero_busy_threshold_still_ends_the_dry_run() {
    let Some(server) = server() else { return };
    server
        .connect()
        .cmd(&["CONFIG", "SET", "busy-reply-threshold", "0"]);
    let url = format!("redis://127.0.0.1:{}", server.port);
    let (code, out, err) = evalbench(&["run", "--server", &url, "SCRIPT"], "while true do end");
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.starts_with("evalbench: refused: the dry run in the sandbox on a copy of KEYS did not complete: stopped at 5000 ms (the server's busy-reply-threshold is 0: a script is busy for every other client from its start) after "),
        "{err}"
    );
    untouched(&server);
    assert_eq!(script_calls(&server), Vec::<String>::new());
}
