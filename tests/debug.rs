//! The debugger's engine API (engine/debug): every stop reason, every resume, variables, eval,
//! replay, the busy threshold, and "a debug run that continues gives the plain run's result".

mod common;

use evalbench::engine::debug::{
    DebugFrontend, DebugOutput, DebugReport, DebugSession, NoStops, Resume, Stop, StopReason,
    VarKind,
};
use evalbench::engine::keyspace::keyspace_to_json;
use evalbench::engine::reply::Reply;
use evalbench::engine::{RunRequest, Sandbox};
use std::time::Duration;

struct Driver<F> {
    f: F,
    outputs: Vec<DebugOutput>,
}

impl<F: FnMut(&mut Stop<'_>) -> Resume> DebugFrontend for Driver<F> {
    fn stopped(&mut self, stop: &mut Stop<'_>) -> Resume {
        (self.f)(stop)
    }
    fn output(&mut self, output: DebugOutput) {
        self.outputs.push(output);
    }
}

const SCRIPT: &str = "local count = 0
local limit = tonumber(ARGV[1])
local function bump(n)
  count = count + n
  return count
end
for i = 1, 3 do
  bump(i)
end
redis.call('SET', KEYS[1], count)
return {count, limit}";

fn request(script: &str) -> RunRequest {
    RunRequest {
        script: script.as_bytes().to_vec(),
        keys: vec![b"k".to_vec()],
        argv: vec![b"10".to_vec()],
        ..RunRequest::default()
    }
}

fn debug(
    sandbox: &mut Sandbox,
    script: &str,
    setup: impl FnOnce(&mut DebugSession),
    f: impl FnMut(&mut Stop<'_>) -> Resume,
) -> (DebugReport, Vec<DebugOutput>) {
    let mut session = DebugSession::new(script.as_bytes()).expect("compiles");
    setup(&mut session);
    let mut driver = Driver {
        f,
        outputs: Vec::new(),
    };
    let report = sandbox.debug(&request(script), &mut session, &mut driver);
    (report, driver.outputs)
}

/// Lines and reasons of every stop, answering each with the next resume of `plan`.
fn stops(
    script: &str,
    setup: impl FnOnce(&mut DebugSession),
    plan: &[Resume],
) -> Vec<(u32, StopReason)> {
    let mut seen = Vec::new();
    let mut plan = plan.iter().copied();
    let mut sandbox = Sandbox::new();
    debug(&mut sandbox, script, setup, |stop| {
        seen.push((stop.line(), stop.reason().clone()));
        plan.next().unwrap_or(Resume::Continue)
    });
    seen
}

#[test]
fn starts_at_the_first_line_and_steps_into_over_and_out() {
    use Resume::*;
    // Line 3 holds no code: `local function` is created on its `end` line (6); after
    // `return count` the loop's own instruction is on line 7.
    let lines: Vec<u32> = stops(SCRIPT, |_| {}, &[StepInto; 9])
        .iter()
        .map(|s| s.0)
        .collect();
    assert_eq!(lines, [1, 2, 6, 7, 8, 4, 5, 7, 8, 4]);
    let lines: Vec<u32> = stops(
        SCRIPT,
        |_| {},
        &[
            StepInto, StepInto, StepInto, StepInto, StepOver, StepOver, StepOver,
        ],
    )
    .iter()
    .map(|s| s.0)
    .collect();
    assert_eq!(lines, [1, 2, 6, 7, 8, 7, 8, 7]);
    let got = stops(
        SCRIPT,
        |_| {},
        &[StepInto, StepInto, StepInto, StepInto, StepInto, StepOut],
    );
    assert_eq!(
        got.iter().map(|s| s.0).collect::<Vec<_>>(),
        [1, 2, 6, 7, 8, 4, 7]
    );
    assert_eq!(got[0].1, StopReason::Start);
    assert_eq!(got[1].1, StopReason::Step);
}

#[test]
fn breakpoints_continue_run_to_line_and_a_line_without_code_moves() {
    let mut set = None;
    let got = stops(
        SCRIPT,
        |s| {
            s.stop_at_start = false;
            set = Some(s.add_breakpoint(3, None, None).unwrap());
        },
        &[Resume::Continue, Resume::RunToLine(9)],
    );
    let set = set.unwrap();
    // Line 3 (`local function bump(n)`) holds no code: the breakpoint goes to line 4.
    assert_eq!((set.asked, set.line), (3, 4));
    let bp = StopReason::Breakpoint { id: set.id };
    assert_eq!(
        got,
        [
            (4, bp.clone()),
            (4, bp.clone()),
            (4, bp),
            // RunToLine(9): line 9 (`end` of the loop) has no code, so line 10.
            (10, StopReason::Step),
        ]
    );
    let mut s = DebugSession::new(SCRIPT.as_bytes()).unwrap();
    assert_eq!(
        s.add_breakpoint(50, None, None).unwrap_err(),
        "line 50: no code at or after this line (the script has 11 lines)"
    );
}

#[test]
fn conditional_breakpoints_and_hit_counts() {
    let mut values = Vec::new();
    let mut sandbox = Sandbox::new();
    debug(
        &mut sandbox,
        SCRIPT,
        |s| {
            s.stop_at_start = false;
            s.add_breakpoint(8, Some("i >= 2"), None).unwrap();
        },
        |stop| {
            values.push(stop.eval(0, "i").unwrap());
            Resume::Continue
        },
    );
    assert_eq!(values, [vec!["2".to_string()], vec!["3".to_string()]]);
    let got = stops(
        SCRIPT,
        |s| {
            s.stop_at_start = false;
            s.add_breakpoint(4, None, Some(3)).unwrap();
        },
        &[],
    );
    assert_eq!(got.len(), 1, "only the third hit stops: {got:?}");
    let mut s = DebugSession::new(SCRIPT.as_bytes()).unwrap();
    assert_eq!(
        s.add_breakpoint(8, Some("count >"), None).unwrap_err(),
        "condition:1: unexpected symbol near ')'"
    );
    assert!(s.breakpoints.is_empty());
}

#[test]
fn variables_locals_upvalues_keys_argv_nested_cycles_and_binary() {
    let script = "local t = {1, 2, sub = {x = 'y'}}
t.self = t
local bin = 'a\\0\\255'
local long = string.rep('x', 500)
local function f()
  return t, bin
end
f()
return 1";
    let mut sandbox = Sandbox::new();
    let mut checked = false;
    debug(
        &mut sandbox,
        script,
        |s| {
            s.stop_at_start = false;
            s.add_breakpoint(6, None, None).unwrap();
        },
        |stop| {
            let vars = stop.variables(0).unwrap();
            let brief: Vec<(String, VarKind, String)> = vars
                .iter()
                .map(|v| (v.name.clone(), v.kind, v.value.clone()))
                .collect();
            assert_eq!(
                brief,
                [
                    (
                        "t".into(),
                        VarKind::Upvalue,
                        "{[1]=1; [2]=2; [\"sub\"]={[\"x\"]=\"y\"}; [\"self\"]=<cycle>}".into()
                    ),
                    ("bin".into(), VarKind::Upvalue, "\"a\\x00\\xff\"".into()),
                    ("KEYS".into(), VarKind::Global, "{\"k\"}".into()),
                    ("ARGV".into(), VarKind::Global, "{\"10\"}".into()),
                ]
            );
            // The outer frame: locals in order, the long string cut with its length.
            let outer = stop.variables(1).unwrap();
            let long = outer.iter().find(|v| v.name == "long").unwrap();
            assert_eq!(long.len, Some(500));
            assert_eq!(long.value, format!("\"{}\"… (500 bytes)", "x".repeat(120)));
            let page = stop.expand(0, &[0], 0, 10).unwrap();
            let entries: Vec<(String, String, bool)> = page
                .items
                .iter()
                .map(|v| (v.name.clone(), v.value.clone(), v.expandable))
                .collect();
            assert_eq!(page.total, 4);
            assert_eq!(
                entries,
                [
                    ("[1]".into(), "1".into(), false),
                    ("[2]".into(), "2".into(), false),
                    ("[\"sub\"]".into(), "{[\"x\"]=\"y\"}".into(), true),
                    ("[\"self\"]".into(), "<cycle>".into(), false),
                ]
            );
            let page = stop.expand(0, &[0, 2], 0, 10).unwrap();
            assert_eq!(page.items[0].value, "\"y\"");
            let page = stop.expand(0, &[0], 1, 2).unwrap();
            assert_eq!(page.items.len(), 2);
            assert_eq!(page.items[0].name, "[2]");
            let frames: Vec<(String, u32)> = stop
                .stack()
                .iter()
                .map(|f| (f.function.clone(), f.line))
                .collect();
            assert_eq!(frames, [("f".to_string(), 6), ("top level".to_string(), 8)]);
            assert_eq!(stop.stack()[1].source_line, "f()");
            checked = true;
            Resume::Continue
        },
    );
    assert!(checked);
}

#[test]
fn eval_sees_locals_refuses_writes_and_changes_nothing() {
    let script = "local a = math.random(1000)
redis.call('SET', 'x', 'before')
local b = a * 2
redis.call('SET', 'y', b)
return {a, math.random(1000), redis.call('GET', 'x')}";
    let plain = Sandbox::new().run(&request(script)).reply;
    let mut sandbox = Sandbox::new();
    let (report, _) = debug(
        &mut sandbox,
        script,
        |s| {
            s.stop_at_start = false;
            s.add_breakpoint(4, None, None).unwrap();
        },
        |stop| {
            assert_eq!(stop.eval(0, "a * 2 == b").unwrap(), ["true"]);
            assert_eq!(
                stop.eval(0, "redis.call('GET', 'x')").unwrap(),
                ["\"before\""]
            );
            assert_eq!(
                stop.eval(0, "redis.call('SET', 'x', 'changed')").unwrap_err(),
                "ERR evalbench: the debugger refuses write commands in eval, watches, conditions and 'redis' (they would change the run); read commands see the current keyspace"
            );
            // Randomness, the RESP version, the database and the trace are put back.
            stop.eval(
                0,
                "math.random(); redis.setresp(3); redis.call('SELECT', 1)",
            )
            .unwrap();
            assert_eq!(
                stop.eval(0, "nope + 1").unwrap_err(),
                "Script attempted to access nonexistent global variable 'nope'"
            );
            assert_eq!(stop.eval(0, "error('boom')").unwrap_err(), "eval:1: boom");
            assert_eq!(
                stop.eval(0, "x = ").unwrap_err(),
                "eval:1: unexpected symbol near '<eof>'"
            );
            assert_eq!(
                stop.redis(&[b"GET".to_vec(), b"x".to_vec()]),
                Reply::Bulk(b"before".to_vec())
            );
            assert!(stop.redis(&[b"DEL".to_vec(), b"x".to_vec()]).is_error());
            assert_eq!(stop.trace().len(), 1);
            Resume::Continue
        },
    );
    assert_eq!(report.run.reply, plain);
    assert_eq!(report.run.trace.len(), 3);
    assert_eq!(report.run.trace[2].seq, 3);
}

#[test]
fn break_on_error_stops_before_the_stack_unwinds() {
    let script = "local n = 41
local function inner(key)
  local tmp = n + 1
  return redis.call('INCR', key)
end
local r = inner('h')
return r";
    let mut sandbox = Sandbox::new();
    sandbox.keyspace_mut().db_mut(0).set(
        b"h".to_vec(),
        evalbench::engine::keyspace::Value::Hash(Default::default()),
    );
    let mut seen = Vec::new();
    let (report, _) = debug(
        &mut sandbox,
        script,
        |s| s.stop_at_start = false,
        |stop| {
            let locals: Vec<String> = stop
                .print(None)
                .into_iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect();
            seen.push((
                stop.line(),
                stop.reason().clone(),
                locals,
                stop.stack().len(),
            ));
            Resume::Continue
        },
    );
    assert_eq!(
        seen,
        [(
            4,
            StopReason::Error {
                message: "WRONGTYPE Operation against a key holding the wrong kind of value".into()
            },
            vec!["key=\"h\"".to_string(), "tmp=42".to_string()],
            2
        )]
    );
    let plain = {
        let mut s = Sandbox::new();
        s.keyspace_mut().db_mut(0).set(
            b"h".to_vec(),
            evalbench::engine::keyspace::Value::Hash(Default::default()),
        );
        s.run(&request(script)).reply
    };
    assert_eq!(report.run.reply, plain);
    // A runtime error in the script itself.
    let got = stops(
        "local x = nil\nreturn x.y",
        |s| s.stop_at_start = false,
        &[],
    );
    assert_eq!(
        got,
        [(
            2,
            StopReason::Error {
                message: "user_script:2: attempt to index local 'x' (a nil value)".into()
            }
        )]
    );
    // Off: no stop.
    assert!(stops(
        "return x.y",
        |s| {
            s.stop_at_start = false;
            s.break_on_error = false
        },
        &[]
    )
    .is_empty());
}

#[test]
fn redis_breakpoint_command_and_key_write_breaks_and_debug_output() {
    let script = "local ok = redis.breakpoint()
local a = 1
redis.call('SET', 'other', 1)
redis.call('INCR', 'counter')
redis.debug('a is', a, {1, 'x'})
return ok";
    let mut sandbox = Sandbox::new();
    let mut seen = Vec::new();
    let (report, outputs) = debug(
        &mut sandbox,
        script,
        |s| {
            s.stop_at_start = false;
            s.command_breaks.push("INCR".into());
            s.key_write_breaks.push(b"other".to_vec());
        },
        |stop| {
            seen.push((
                stop.line(),
                stop.reason().clone(),
                stop.keyspace().db(0).len(0),
            ));
            Resume::Continue
        },
    );
    assert_eq!(
        seen,
        [
            (2, StopReason::RedisBreakpoint, 0),
            (
                3,
                StopReason::KeyWrite {
                    key: b"other".to_vec()
                },
                0
            ),
            (
                4,
                StopReason::Command {
                    name: "INCR".into()
                },
                1
            ),
        ]
    );
    assert_eq!(
        outputs,
        [DebugOutput::Debug {
            line: 5,
            text: "\"a is\", 1, {1; \"x\"}".into()
        }]
    );
    assert_eq!(report.run.reply, Reply::Int(1));
    // Outside a debug session redis.breakpoint() is false.
    assert_eq!(Sandbox::new().run(&request(script)).reply, Reply::Nil);
}

#[test]
fn abort_ends_with_ldbs_error_even_under_pcall() {
    let mut sandbox = Sandbox::new();
    let (report, _) = debug(&mut sandbox, SCRIPT, |_| {}, |_| Resume::Abort);
    assert_eq!(
        report.run.reply,
        Reply::Error(format!(
            "ERR script aborted for user request script: {}, on @user_script:1.",
            report.run.sha1
        ))
    );
    let script = "local ok = pcall(function()\n  local x = 1\nend)\nreturn 'finished'";
    let mut sandbox = Sandbox::new();
    let mut n = 0;
    let (report, _) = debug(
        &mut sandbox,
        script,
        |_| {},
        |_| {
            n += 1;
            if n == 2 {
                Resume::Abort
            } else {
                Resume::StepInto
            }
        },
    );
    assert!(report.run.is_error(), "{:?}", report.run.reply);
    assert!(format!("{:?}", report.run.reply).contains("script aborted for user request"));
}

#[test]
fn step_back_replays_to_the_previous_line_with_the_keyspace_of_then() {
    let script = "local r = math.random(1000000)
redis.call('SET', 'k', r)
local t = redis.call('TIME')[2]
redis.call('INCR', 'k')
return {r, t}";
    let mut sandbox = Sandbox::new();
    let mut log = Vec::new();
    let mut plan = vec![
        Resume::StepInto,
        Resume::StepInto,
        Resume::StepInto,
        Resume::StepBack,
        Resume::StepBack,
        Resume::Continue,
    ]
    .into_iter();
    let (report, _) = debug(
        &mut sandbox,
        script,
        |_| {},
        |stop| {
            let k = stop
                .keyspace()
                .db(0)
                .get(b"k", 0)
                .map(|e| format!("{:?}", e.value));
            let vars: Vec<String> = stop
                .print(None)
                .into_iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect();
            log.push((stop.line(), stop.event(), k, vars.len(), stop.trace().len()));
            plan.next().unwrap_or(Resume::Continue)
        },
    );
    let lines: Vec<(u32, u64, bool, usize, usize)> = log
        .iter()
        .map(|(l, e, k, v, t)| (*l, *e, k.is_some(), *v, *t))
        .collect();
    assert_eq!(
        lines,
        [
            (1, 1, false, 0, 0),
            (2, 2, false, 1, 0),
            (3, 3, true, 1, 1),
            (4, 4, true, 2, 2),
            (3, 3, true, 1, 1),
            (2, 2, false, 1, 0),
        ]
    );
    // The same random number and TIME reading as the first pass: the run is deterministic.
    let first_k = log[2].2.clone();
    assert_eq!(log[4].2, first_k);
    // The reply's random number is the one SET before the INCR.
    let Reply::Array(items) = &report.run.reply else {
        panic!()
    };
    let Reply::Int(r) = items[0] else { panic!() };
    let stored = sandbox
        .keyspace()
        .db(0)
        .get(b"k", 0)
        .map(|e| e.value.clone());
    assert_eq!(
        stored,
        Some(evalbench::engine::keyspace::Value::Str(
            (r + 1).to_string().into_bytes()
        ))
    );
    assert_eq!(report.run.trace.len(), 3);
}

#[test]
fn reverse_continue_and_goto_event() {
    use Resume::*;
    let got = stops(
        SCRIPT,
        |s| {
            s.stop_at_start = false;
            s.add_breakpoint(4, None, None).unwrap();
        },
        &[Continue, Continue, ReverseContinue, GotoEvent(3), StepInto],
    );
    let lines: Vec<u32> = got.iter().map(|s| s.0).collect();
    // 4 (i=1), 4 (i=2), 4 (i=3) -> rc back to i=2, goto event 3 (line 6), step -> 7, then the
    // breakpoint again for i = 1, 2, 3.
    assert_eq!(lines, [4, 4, 4, 4, 6, 7, 4, 4, 4]);
    let mut values = Vec::new();
    let mut plan = vec![Continue, Continue, ReverseContinue, Continue].into_iter();
    let mut sandbox = Sandbox::new();
    debug(
        &mut sandbox,
        SCRIPT,
        |s| {
            s.stop_at_start = false;
            s.add_breakpoint(4, None, None).unwrap();
        },
        |stop| {
            values.push(stop.eval(0, "n").unwrap()[0].clone());
            plan.next().unwrap_or(Continue)
        },
    );
    assert_eq!(values, ["1", "2", "3", "2", "3"]);
}

#[test]
fn time_stopped_does_not_count_towards_the_busy_threshold() {
    let script = "local x = 0\nfor i = 1, 10 do x = x + i end\nreturn x";
    let mut sandbox = Sandbox::new();
    sandbox.config.busy_threshold_ms = 100;
    let (report, _) = debug(
        &mut sandbox,
        script,
        |_| {},
        |_| {
            std::thread::sleep(Duration::from_millis(150));
            Resume::StepInto
        },
    );
    assert_eq!(report.run.reply, Reply::Int(55));
    assert!(
        report.run.elapsed_ns < 100_000_000,
        "{}",
        report.run.elapsed_ns
    );
    // A runaway is still stopped at the threshold.
    let mut sandbox = Sandbox::new();
    sandbox.config.busy_threshold_ms = 50;
    let (report, _) = debug(
        &mut sandbox,
        "while true do end",
        |_| {},
        |_| Resume::Continue,
    );
    assert_eq!(
        report.run.reply,
        Reply::Error(format!(
            "ERR Script killed by user with SCRIPT KILL... script: {}, on @user_script:1.",
            report.run.sha1
        ))
    );
}

#[test]
fn coverage_counts_line_executions() {
    let mut sandbox = Sandbox::new();
    let mut session = DebugSession::new(SCRIPT.as_bytes()).unwrap();
    session.stop_at_start = false;
    session.coverage = true;
    let report = sandbox.debug(&request(SCRIPT), &mut session, &mut NoStops);
    let coverage: Vec<(u32, u64)> = report.coverage.unwrap().into_iter().collect();
    assert_eq!(
        coverage,
        [
            (1, 1),
            (2, 1),
            (4, 3),
            (5, 3),
            (6, 1),
            (7, 4),
            (8, 3),
            (10, 1),
            (11, 1)
        ]
    );
}

#[test]
fn a_script_that_does_not_compile_gives_its_error_and_line() {
    let err = DebugSession::new(b"local a = 1\nlocal b = +\n").unwrap_err();
    assert_eq!(
        err,
        (
            "user_script:2: unexpected symbol near '+'".to_string(),
            Some(2)
        )
    );
}

/// Every differential case: a debug session that stops at the start and continues (also past an
/// error stop) gives exactly the reply, trace commands and keyspace of a plain run.
#[test]
fn continuing_to_the_end_gives_the_plain_runs_result_on_every_case() {
    let cases = common::all_cases();
    assert!(cases.len() > 100);
    let mut checked = 0;
    for case in &cases {
        // redis.breakpoint() is true under a debugger (as in LDB), false otherwise.
        if case.script.contains("redis.breakpoint") {
            continue;
        }
        let request = RunRequest {
            script: case.script.as_bytes().to_vec(),
            keys: case.keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
            argv: case.argv.iter().map(|a| a.as_bytes().to_vec()).collect(),
            protocol: evalbench::engine::Protocol::from_number(case.resp).unwrap(),
            read_only: false,
        };
        let clock = evalbench::engine::clock::ManualClock::new(1_700_000_000_000_000);
        let run = |debug: bool| {
            let mut sandbox = Sandbox::with_clock(Box::new(clock.clone()));
            let seed = evalbench::engine::keyspace::keyspace_from_json(
                &case.seed.to_string(),
                sandbox.now_ms(),
            )
            .unwrap();
            sandbox.set_db0(seed);
            let report = if debug {
                match DebugSession::new(&request.script) {
                    Ok(mut session) => {
                        let mut stops = 0;
                        let mut f = Driver {
                            f: |_: &mut Stop<'_>| {
                                stops += 1;
                                Resume::Continue
                            },
                            outputs: Vec::new(),
                        };
                        sandbox.debug(&request, &mut session, &mut f).run
                    }
                    Err(_) => sandbox.run(&request),
                }
            } else {
                sandbox.run(&request)
            };
            let commands: Vec<Vec<Vec<u8>>> =
                report.trace.iter().map(|e| e.command.clone()).collect();
            (
                format!("{:?}", report.reply),
                report.lua_value,
                commands,
                keyspace_to_json(sandbox.keyspace().db(0), sandbox.now_ms()),
            )
        };
        let plain = run(false);
        let debugged = run(true);
        assert_eq!(plain, debugged, "{}: {}", case.file, case.name);
        checked += 1;
    }
    assert!(checked + 3 > cases.len(), "{checked} of {}", cases.len());
}

/// LDB's `abort` ends the script with LDB's error wherever it is stopped, also at an error stop
/// (the script's own error is not the reply then).
#[test]
fn abort_at_an_error_stop_ends_with_ldbs_abort_error() {
    let script = "local x = 5\nlocal y = x .. nil\nreturn y\n";
    let mut sandbox = Sandbox::new();
    let mut reasons = Vec::new();
    let (report, _) = debug(
        &mut sandbox,
        script,
        |s| s.stop_at_start = false,
        |stop| {
            reasons.push(stop.reason().clone());
            Resume::Abort
        },
    );
    assert!(
        matches!(reasons.as_slice(), [StopReason::Error { .. }]),
        "{reasons:?}"
    );
    assert_eq!(
        report.run.reply,
        Reply::Error(format!(
            "ERR script aborted for user request script: {}, on @user_script:2.",
            report.run.sha1
        ))
    );
}

/// eval works on copies of the tables it reaches (a local's, an upvalue's, KEYS): the run never sees
/// its writes; within one eval, shared tables stay shared and cycles stay cycles.
#[test]
fn eval_cannot_change_a_table_of_the_run() {
    let script = "local t = {x = 1, list = {1, 2}}\nlocal u = t\nlocal c = {}\nc.self = c\nreturn {t.x, u.x, #t.list, KEYS[1], c.self == c and 1 or 0}\n";
    let mut sandbox = Sandbox::new();
    let mut answers = Vec::new();
    let mut session = DebugSession::new(script.as_bytes()).unwrap();
    session.stop_at_start = false;
    session.add_breakpoint(5, None, None).unwrap();
    let mut driver = Driver {
        f: |stop: &mut Stop<'_>| {
            for code in [
                "t.x = 99; table.insert(t.list, 3); KEYS[1] = 'zz'; return u.x, #u.list, KEYS[1]",
                "return t.x, #t.list, KEYS[1]",
                "return c.self == c, c ~= nil",
            ] {
                answers.push(stop.eval(0, code));
            }
            Resume::Continue
        },
        outputs: Vec::new(),
    };
    let mut req = request(script);
    req.keys = vec![b"k".to_vec()];
    let report = sandbox.debug(&req, &mut session, &mut driver);
    let ok = |v: &[&str]| Ok(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(
        answers,
        [
            ok(&["99", "3", "\"zz\""]),
            ok(&["1", "2", "\"k\""]),
            ok(&["true", "true"])
        ]
    );
    assert_eq!(
        report.run.reply,
        Reply::Array(vec![
            Reply::Int(1),
            Reply::Int(1),
            Reply::Int(2),
            Reply::Bulk(b"k".to_vec()),
            Reply::Int(1)
        ])
    );
}

/// The copy an eval works on is bounded: a larger table is refused with a message, the run goes on.
#[test]
fn eval_of_a_table_too_large_to_copy_is_refused() {
    let script = "local big = {}\nfor i = 1, 100001 do big[i] = i end\nreturn #big\n";
    let mut sandbox = Sandbox::new();
    let mut answers = Vec::new();
    let (report, _) = debug(
        &mut sandbox,
        script,
        |s| {
            s.stop_at_start = false;
            s.add_breakpoint(3, None, None).unwrap();
        },
        |stop| {
            answers.push(stop.eval(0, "#big"));
            Resume::Continue
        },
    );
    assert_eq!(
        answers,
        [Err("evalbench: eval works on copies of the tables it reads, and 'big' holds over 100000 entries (see it with p)".to_string())]
    );
    assert_eq!(report.run.reply, Reply::Int(100001));
}

/// A frame of a function taking `...` says its varargs are hidden (Lua 5.1 cannot read them);
/// other frames, and the main chunk (whose varargs are always empty), do not.
#[test]
fn frames_of_vararg_functions_say_their_varargs_are_hidden() {
    let script = "local function f(a, ...)\n  local n = select('#', ...)\n  return n\nend\nlocal function g(b)\n  return b\nend\nreturn f(1, 2, 3) + g(4)\n";
    let mut seen = Vec::new();
    let mut sandbox = Sandbox::new();
    debug(
        &mut sandbox,
        script,
        |s| {
            s.stop_at_start = false;
            s.add_breakpoint(3, None, None).unwrap();
            s.add_breakpoint(6, None, None).unwrap();
        },
        |stop| {
            seen.push((stop.line(), stop.hidden_varargs(0), stop.hidden_varargs(1)));
            Resume::Continue
        },
    );
    assert_eq!(seen, [(3, true, false), (6, false, false)]);
}

/// Time stopped is not the script's: the first write and the trace's times leave it out too.
#[test]
fn time_stopped_is_not_in_the_first_write_time() {
    let script = "local a = 1\nredis.call('SET', 'k', a)\nreturn a\n";
    let mut sandbox = Sandbox::new();
    let (report, _) = debug(
        &mut sandbox,
        script,
        |_| {},
        |_| {
            std::thread::sleep(Duration::from_millis(300));
            Resume::Continue
        },
    );
    let first = report.run.first_write_ns.expect("a write");
    assert!(first < 100_000_000, "first write at {first} ns");
}

/// A shebang only some servers accept (`#!LUA`: Valkey) opens a session; the run answers as the
/// profile's server does.
#[test]
fn a_valkey_shebang_is_debugged_under_each_profile() {
    let script = "#!LUA\nreturn 1";
    let run_on = |id: &str| {
        let mut sandbox = Sandbox::new();
        sandbox.set_profile(evalbench::engine::profile::Profile::by_id(id).unwrap());
        let mut session = DebugSession::new(script.as_bytes()).expect("a shebang Valkey accepts");
        let mut driver = Driver {
            f: |_: &mut Stop<'_>| Resume::Continue,
            outputs: Vec::new(),
        };
        sandbox
            .debug(&request(script), &mut session, &mut driver)
            .run
            .reply
    };
    assert_eq!(run_on("valkey-8.1"), Reply::Int(1));
    assert_eq!(
        run_on("redis-7.0"),
        Reply::Error("ERR Unexpected engine in script shebang: #!LUA".into())
    );
}
