//! Every sandbox run stops: loops in an error handler (which Lua runs with hooks off when the stop
//! hook raised the error), a stop caught by `pcall` inside a coroutine, long C calls (table.sort,
//! table.maxn), and KEYS/SCAN MATCH over many keys or with hostile patterns. Through the engine,
//! the CLI's `run`, the debugger's eval, `lesson check` and the race lab.

use evalbench::engine::debug::{DebugFrontend, DebugOutput, DebugSession, Resume, Stop};
use evalbench::engine::keyspace::{Db, Value};
use evalbench::engine::race::{self, parse_lab, RaceOptions, Runner, Strategy};
use evalbench::engine::report::Outcome;
use evalbench::engine::{Reply, RunReport, RunRequest, Sandbox};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// An error handler that loops, and the hook's own error calls it again with
/// hooks off.
const HANDLER_LOOP: &str =
    "return xpcall(function() error('x') end, function() while true do end end)";

/// Scripts that never end by themselves, each stopped on line 1.
const UNENDING: &[(&str, &str)] = &[
    ("xpcall handler loop", HANDLER_LOOP),
    (
        "pcall loop inside the handler",
        "return xpcall(function() error('x') end, function() while true do pcall(function() while true do end end) end end)",
    ),
    (
        "xpcall inside the handler",
        "return xpcall(function() error('x') end, function() return xpcall(function() error('y') end, function() while true do end end) end)",
    ),
    (
        "coroutine inside the handler",
        "return xpcall(function() error('x') end, function() return coroutine.wrap(function() while true do end end)() end)",
    ),
    (
        "handler loop in a coroutine",
        "return coroutine.wrap(function() return xpcall(function() error('x') end, function() while true do end end) end)()",
    ),
    (
        "pcall in a coroutine returns",
        "local co = coroutine.create(function() return pcall(function() while true do end end) end) local ok, caught, e = coroutine.resume(co) return {caught, e}",
    ),
    (
        "coroutine.wrap and pcall return",
        "return coroutine.wrap(function() return pcall(function() while true do end end) end)()",
    ),
    (
        "table.sort without comparator",
        "local t = {} for i = 1, 300000 do t[i] = (i * 7919) % 300007 end while true do table.sort(t) table.sort(t, function(a, b) return a > b end) end",
    ),
    (
        "table.sort in a handler",
        "local t = {} for i = 1, 300000 do t[i] = (i * 7919) % 300007 end return xpcall(function() error('x') end, function() while true do table.sort(t) end end)",
    ),
    (
        "table.maxn in a handler",
        "local t = {} for i = 1, 300000 do t[i .. ''] = i end return xpcall(function() error('x') end, function() while true do table.maxn(t) end end)",
    ),
];

/// Run `script` on a fresh sandbox in a thread; None when it has not returned after `limit`.
fn run_with_limit(
    script: &str,
    threshold_ms: u64,
    limit: Duration,
    configure: impl FnOnce(&mut Sandbox) + Send + 'static,
) -> Option<RunReport> {
    let script = script.to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sandbox = Sandbox::new();
        sandbox.config.busy_threshold_ms = threshold_ms;
        configure(&mut sandbox);
        let _ = tx.send(sandbox.run(&RunRequest::new(script)));
    });
    rx.recv_timeout(limit).ok()
}

fn killed_text(report: &RunReport, line: u32) -> Reply {
    Reply::Error(format!(
        "ERR Script killed by user with SCRIPT KILL... script: {}, on @user_script:{line}.",
        report.sha1
    ))
}

#[test]
fn the_busy_threshold_stops_error_handlers_coroutines_and_long_c_calls() {
    for (name, script) in UNENDING {
        let report = run_with_limit(script, 100, Duration::from_secs(60), |_| {})
            .unwrap_or_else(|| panic!("{name}: still running 60 s after a 100 ms threshold"));
        assert_eq!(
            report.outcome,
            Outcome::Killed,
            "{name}: {:?}",
            report.reply
        );
        assert_eq!(report.reply, killed_text(&report, 1), "{name}");
    }
}

#[test]
fn a_stop_caught_in_a_coroutine_ends_the_run_where_the_script_goes_on() {
    // The coroutine swallows the kill; the main thread stops at its next line.
    let script =
        "local co = coroutine.create(function() return pcall(function() while true do end end) end)
local ok, caught, e = coroutine.resume(co)
return {caught, e}";
    let report = run_with_limit(script, 100, Duration::from_secs(60), |_| {}).expect("returns");
    assert_eq!(report.outcome, Outcome::Killed);
    assert_eq!(report.reply, killed_text(&report, 3));
    // The VM is usable afterwards: the next run's hook is the plain count hook again.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sandbox = Sandbox::new();
        sandbox.config.busy_threshold_ms = 100;
        let first = sandbox.run(&RunRequest::new(HANDLER_LOOP));
        sandbox.config.busy_threshold_ms = 0;
        let after = sandbox.run(&RunRequest::new(
            "local co = coroutine.wrap(function() return pcall(error, 'y') end) local ok, e = co() return {tostring(ok), e, select(2, xpcall(function() error('z', 0) end, function(m) return m .. '!' end))}",
        ));
        let _ = tx.send((first, after));
    });
    let (first, after) = rx.recv_timeout(Duration::from_secs(60)).expect("returns");
    assert_eq!(first.outcome, Outcome::Killed);
    assert_eq!(after.outcome, Outcome::Returned, "{:?}", after.reply);
    assert_eq!(
        after.reply,
        Reply::Array(vec![
            Reply::Bulk(b"false".to_vec()),
            Reply::Bulk(b"y".to_vec()),
            Reply::Bulk(b"z!".to_vec()),
        ])
    );
}

#[test]
fn cancel_stops_an_error_handler_loop() {
    for script in [
        HANDLER_LOOP,
        "return coroutine.wrap(function() return pcall(function() while true do end end) end)()",
    ] {
        let (cancel_tx, cancel_rx) = std::sync::mpsc::channel();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sandbox = Sandbox::new();
            sandbox.config.busy_threshold_ms = 0;
            cancel_tx.send(sandbox.cancel_handle()).unwrap();
            let _ = tx.send(sandbox.run(&RunRequest::new(script)));
        });
        let cancel = cancel_rx.recv().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        cancel.store(true, Ordering::Relaxed);
        let report = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("a cancelled run returns");
        assert_eq!(report.outcome, Outcome::Cancelled, "{script}");
        assert_eq!(
            report.reply,
            Reply::Error(format!(
                "ERR evalbench: the run was cancelled script: {}, on @user_script:1.",
                report.sha1
            ))
        );
    }
}

/// 100,000 keys of 2,000 bytes: a KEYS over them runs far past a 50 ms threshold (a pattern the
/// matcher walks whole for each key).
fn many_long_keys() -> Db {
    let mut db = Db::new();
    for i in 0..100_000 {
        let mut key = vec![b'a'; 2000];
        key.extend_from_slice(i.to_string().as_bytes());
        db.set(key, Value::Str(b"1".to_vec()));
    }
    db
}

#[test]
fn keys_and_scan_match_over_many_keys_stop_inside_the_command() {
    for script in [
        "return #redis.call('KEYS', '*a*a*a*a*a*a*a*a*a*a*a*a*a*ab')",
        "return #redis.call('SCAN', 0, 'MATCH', '*a*a*a*a*a*a*a*a*a*a*a*a*a*ab', 'COUNT', 1000000)[2]",
    ] {
        let report = run_with_limit(script, 50, Duration::from_secs(120), |sandbox| {
            sandbox.set_db0(many_long_keys())
        })
        .expect("returns");
        assert_eq!(report.outcome, Outcome::Killed, "{script}: {:?}", report.reply);
        assert_eq!(report.reply, killed_text(&report, 1));
        // Stopped inside the command: it has no reply, so it is not in the trace.
        assert!(report.trace.is_empty(), "{script}: {:?}", report.trace);
    }
}

#[test]
fn the_cli_run_stops_the_probes() {
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    for (i, (name, script)) in UNENDING.iter().enumerate().take(7) {
        let path = dir.join(format!("probe{i}.lua"));
        std::fs::write(&path, script).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
            .args(["run", "--json", "--busy-threshold", "100"])
            .arg(&path)
            .output()
            .expect("run evalbench");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stdout)));
        assert_eq!(json["outcome"], "killed", "{name}");
        assert_eq!(
            json["reply"]["error"],
            format!(
                "ERR Script killed by user with SCRIPT KILL... script: {}, on @user_script:1.",
                json["sha1"].as_str().unwrap()
            ),
            "{name}"
        );
    }
}

struct EvalAtStart {
    code: &'static str,
    answer: Option<Result<Vec<String>, String>>,
}

impl DebugFrontend for EvalAtStart {
    fn stopped(&mut self, stop: &mut Stop<'_>) -> Resume {
        if self.answer.is_none() {
            self.answer = Some(stop.eval(0, self.code));
        }
        Resume::Continue
    }
    fn output(&mut self, _: DebugOutput) {}
}

#[test]
fn the_debuggers_eval_stops_a_handler_loop_and_the_run_goes_on() {
    for code in [
        "xpcall(function() error('x') end, function() while true do end end)",
        "coroutine.wrap(function() return pcall(function() while true do end end) end)()",
    ] {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sandbox = Sandbox::new();
            sandbox.config.busy_threshold_ms = 100;
            let script = "local a = 1\nreturn a + 1";
            let mut session = DebugSession::new(script.as_bytes()).unwrap();
            let mut frontend = EvalAtStart { code, answer: None };
            let report = sandbox.debug(&RunRequest::new(script), &mut session, &mut frontend);
            let _ = tx.send((frontend.answer, report.run));
        });
        let (answer, run) = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{code}: the eval still runs after 60 s"));
        assert_eq!(
            answer,
            Some(Err("eval: stopped after 100 ms (it ran too long)".into())),
            "{code}"
        );
        // The paused run is not stopped by its eval's stop.
        assert_eq!(run.outcome, Outcome::Returned, "{code}: {:?}", run.reply);
        assert_eq!(run.reply, Reply::Int(2));
    }
}

#[test]
fn the_debugger_run_of_a_handler_loop_is_killed() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sandbox = Sandbox::new();
        sandbox.config.busy_threshold_ms = 100;
        let mut session = DebugSession::new(HANDLER_LOOP.as_bytes()).unwrap();
        let mut frontend = EvalAtStart {
            code: "1",
            answer: None,
        };
        let report = sandbox.debug(&RunRequest::new(HANDLER_LOOP), &mut session, &mut frontend);
        let _ = tx.send(report.run);
    });
    let run = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the debug run returns");
    assert_eq!(run.outcome, Outcome::Killed, "{:?}", run.reply);
    assert_eq!(run.reply, killed_text(&run, 1));
}

const LIMIT_TEXT: &str =
    "evalbench: the logic ran 10000000 Lua instructions without calling the server; stopped";

fn lab(logic: &str) -> String {
    format!(
        "name = \"stops\"\nclients = 2\nkeys = [\"k\"]\nlogic = '''\nredis.call('GET', KEYS[1])\n{logic}\n'''\n"
    )
}

#[test]
fn the_race_lab_stops_handler_loops_and_caught_limits() {
    for logic in [
        HANDLER_LOOP,
        "local co = coroutine.create(function() return pcall(function() while true do end end) end)\nlocal ok, caught, e = coroutine.resume(co)\nreturn e",
        "return coroutine.wrap(function() return pcall(function() while true do end end) end)()",
    ] {
        let text = lab(logic);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let parsed = parse_lab(Path::new("lab.toml"), &text).expect("lab parses");
            let runner = Runner::new(&parsed).expect("lab compiles");
            let report = race::race(
                &runner,
                &RaceOptions {
                    strategies: vec![Strategy::Plain],
                    ..RaceOptions::default()
                },
            );
            let ends: Vec<(String, bool)> = report.strategies[0]
                .outcomes
                .iter()
                .flat_map(|o| &o.clients)
                .map(|c| (c.result.clone(), c.failed))
                .collect();
            let _ = tx.send(ends);
        });
        let ends = rx
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("{logic}: the lab still runs after 120 s"));
        assert!(!ends.is_empty(), "{logic}");
        for end in ends {
            assert_eq!(end, (LIMIT_TEXT.to_string(), true), "{logic}");
        }
    }
}

#[test]
fn lesson_check_stops_a_handler_loop() {
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let path = dir.join("probe.lua");
    // Lesson 1's solution, but its second call of the second check loops in an error handler
    // (one run at the checks' 1 s limit per run, which ends the check).
    let script = format!(
        "if ARGV[1] == '2' then {HANDLER_LOOP} end
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('TTL', KEYS[1]) == -1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return count"
    );
    std::fs::write(&path, &script).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(["lesson", "check", "1"])
        .arg(&path)
        .output()
        .expect("run evalbench");
    let sha = evalbench::engine::script::sha1_hex(script.as_bytes());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "Lesson 1: An atomic counter with a window — {}
  ok   a new counter holds the increment and expires after the window
  FAIL a second call adds to it and keeps the TTL
         step 2: expected (integer) 7, got (error) ERR Script killed by user with SCRIPT KILL... script: {sha}, on @user_script:1.
         with KEYS [\"hits:alice\"] ARGV [\"2\", \"60\"] seed {{}}
         step 2: key \"hits:alice\" (string), expected → got: \"7\" → \"5\"
  stopped: the script ran longer than 1000 ms on \"a second call adds to it and keeps the TTL\" and was stopped; the other checks were not run (a loop that never ends?)
1 of 4 checks pass; the script ran longer than 1000 ms on \"a second call adds to it and keeps the TTL\" and was stopped; the other checks were not run (a loop that never ends?)
",
            path.display()
        )
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_memory_budget_stop_caught_in_a_coroutine_ends_the_run() {
    let mut sandbox = Sandbox::new();
    sandbox.config.memory_limit = 64 << 20;
    let report = sandbox.run(&RunRequest::new(
        "local co = coroutine.create(function() return pcall(redis.call, 'SETRANGE', 'k', 2^28, 'x') end) local ok, caught, e = coroutine.resume(co) return {tostring(caught), tostring(e)}",
    ));
    assert_eq!(report.outcome, Outcome::Raised);
    assert_eq!(
        report.reply,
        Reply::Error(format!(
            "ERR evalbench: the run used more than the sandbox's memory budget (64 MiB: Lua, keyspace, trace and reply together); a real server would keep allocating (raise the budget with --max-memory MIB, or memory_limit_mb in the workbench's config.toml) script: {}, on @user_script:1.",
            report.sha1
        ))
    );
    // The stopped run wrote nothing, and the VM goes on.
    let after = sandbox.run(&RunRequest::new("return redis.call('EXISTS', 'k')"));
    assert_eq!(after.reply, Reply::Int(0));
}

/// The workbench's engine thread: Esc stops a handler loop (the workbench sat at "cancelling…").
#[test]
fn esc_in_the_workbench_stops_a_handler_loop() {
    use evalbench::tui::worker::{EngineCommand, EngineEvent, Worker};
    let worker = Worker::start();
    worker.send(EngineCommand::Run {
        id: 1,
        request: RunRequest::new(HANDLER_LOOP),
        seed: Db::new(),
        busy_threshold_ms: 0,
        consent: Default::default(),
        live: false,
        clock_ms: 0,
    });
    // Let the engine thread enter the script.
    std::thread::sleep(Duration::from_millis(200));
    worker.cancel();
    let result = loop {
        match worker.events.recv_timeout(Duration::from_secs(60)) {
            Ok(EngineEvent::Finished(result)) => break result,
            Ok(_) => continue,
            Err(e) => panic!("the cancelled run did not finish within 60 s: {e}"),
        }
    };
    assert_eq!(result.report.outcome, Outcome::Cancelled);
    assert_eq!(
        result.report.reply,
        Reply::Error(format!(
            "ERR evalbench: the run was cancelled script: {}, on @user_script:1.",
            result.report.sha1
        ))
    );
}

/// The unkillable warning of a run stopped at the busy threshold, if any.
fn unkillable_warning(report: &RunReport) -> Option<(u32, String)> {
    use evalbench::engine::report::WarningKind;
    report
        .warnings
        .iter()
        .find(|w| w.kind == WarningKind::Unkillable)
        .map(|w| (w.line, w.message.clone()))
}

/// A stop that lands inside one C call (a pattern match, a sort, a command) says so: on a server
/// Redis's hook never fires there, so SCRIPT KILL could not stop it. A stop the hook raises in Lua
/// code (a comparator or a gsub callback included) does not.
#[test]
fn a_stop_inside_one_c_call_is_flagged_unkillable() {
    let inside = |what: &str| {
        format!("stopped at the busy threshold inside {what}, one C call: Redis's hook never fires there, so on a server no client is answered, SCRIPT KILL included, until the call returns (a kill sent meanwhile acts then): a call that runs for long leaves a restart as the only way out")
    };
    let pattern = "local s, p = string.rep('a', 3000), string.rep('a*', 12) .. 'b'\n";
    let flagged = [
        (
            format!("{pattern}return string.find(s, p)"),
            2,
            inside("string.find"),
        ),
        (
            format!("{pattern}return string.match(s, p)"),
            2,
            inside("string.match"),
        ),
        (
            format!("{pattern}return s:gsub(p, 'x')"),
            2,
            inside("string.gsub"),
        ),
        (
            format!("{pattern}for m in string.gmatch(s, p) do end return 1"),
            2,
            inside("the C iterator of a `for ... in` loop"),
        ),
    ];
    for (script, line, message) in flagged {
        let report =
            run_with_limit(&script, 100, Duration::from_secs(60), |_| {}).expect("returns");
        assert_eq!(report.outcome, Outcome::Killed, "{script}");
        assert_eq!(
            unkillable_warning(&report),
            Some((line, message)),
            "{script}"
        );
    }
    // A stop inside the allocator within one C call: string.rep's result is faulted in with a stop
    // check between its MiBs, and with a 1 ms threshold the first check of the script is there
    // (a few instructions run before: no hook). Measured on Redis 7.0.15: a SCRIPT KILL sent
    // during a 64 MiB string.rep was answered when the call returned, then killed the script.
    // The second is caught by pcall: the stop still landed inside string.rep.
    for script in [
        "local s = string.rep('x', 48 * 2^20)\nreturn #s",
        "local ok = pcall(function() return string.rep('x', 48 * 2^20) end)\nwhile true do end",
    ] {
        let report = run_with_limit(script, 1, Duration::from_secs(60), |_| {}).expect("returns");
        assert_eq!(report.outcome, Outcome::Killed, "{script}");
        assert_eq!(
            unkillable_warning(&report),
            Some((1, inside("string.rep"))),
            "{script}"
        );
    }
    // A long command: the server runs it to its end.
    let report = run_with_limit(
        "return #redis.call('KEYS', '*a*a*a*a*a*a*a*a*a*a*a*a*a*ab')",
        50,
        Duration::from_secs(120),
        |sandbox| sandbox.set_db0(many_long_keys()),
    )
    .expect("returns");
    assert_eq!(
        unkillable_warning(&report),
        Some((1, inside("the command KEYS")))
    );
    for script in [
        "while true do end",
        "local t = {} for i = 1, 1000 do t[i] = i end table.sort(t, function(a, b) while true do end end)",
        "return string.gsub(string.rep('a', 100), 'a', function() while true do end end)",
        HANDLER_LOOP,
    ] {
        let report = run_with_limit(script, 100, Duration::from_secs(60), |_| {}).expect("returns");
        assert_eq!(report.outcome, Outcome::Killed, "{script}");
        assert_eq!(unkillable_warning(&report), None, "{script}");
    }
}
