//! The workbench debugger on a function library: with a library in the editor, F9 sets
//! breakpoints in a function's body, F5 loads the library as FUNCTION LOAD does and debugs the FCALL
//! of the form's function on the form's KEYS and ARGV; the stop shows the function's locals (keys,
//! args), F10/F11 step, Shift-F10 steps back with the keyspace of then, F5 runs to the end with the
//! FCALL's reply. Alt-F's choice is the function debugged (FCALL_RO for a no-writes one).
#![cfg(feature = "tui")]

mod common;

use evalbench::engine::debug::StopReason;
use evalbench::engine::keyspace::Value;
use evalbench::engine::reply::Reply;
use evalbench::tui::app::Tab;
use evalbench::tui::harness::Harness;

const LIBRARY: &str = include_str!("../samples/counter_library.lua");

fn harness() -> Harness {
    common::isolate_app_dirs();
    Harness::new(
        LIBRARY,
        &["counter:page"],
        &["5"],
        r#"{"counter:page": "10"}"#,
    )
}

fn stop_line(h: &Harness) -> Option<u32> {
    h.app.debugger.paused_line()
}

fn var(h: &Harness, name: &str) -> Option<String> {
    h.app.debugger.stop().and_then(|s| {
        s.rows
            .iter()
            .find(|r| r.depth == 0 && r.var.name == name)
            .map(|r| r.var.value.clone())
    })
}

fn stack(h: &Harness) -> Vec<(String, u32)> {
    h.app
        .debugger
        .stop()
        .map(|s| {
            s.frames
                .iter()
                .map(|f| (f.function.clone(), f.line))
                .collect()
        })
        .unwrap_or_default()
}

fn counter(h: &Harness) -> Option<String> {
    match h
        .app
        .shown_keyspace()
        .get(b"counter:page", h.app.now_ms)
        .map(|e| &e.value)
    {
        Some(Value::Str(s)) => Some(String::from_utf8_lossy(s).into_owned()),
        _ => None,
    }
}

#[test]
fn a_breakpoint_in_a_function_stops_there_with_its_locals() {
    let mut h = harness();
    // F9 in counter_incr's body, F5: FUNCTION LOAD, then FCALL counter_incr under the debugger.
    h.app.editor.goto_line(20);
    h.press("<F9>");
    assert_eq!(h.app.status, "breakpoint at line 20");
    h.press("<F5>");
    assert_eq!(h.app.tab, Tab::Debug);
    assert_eq!(stop_line(&h), Some(20));
    assert!(matches!(
        h.app.debugger.stop().map(|s| &s.reason),
        Some(StopReason::Breakpoint { .. })
    ));
    // The function's arguments are its locals: KEYS as `keys`, ARGV as `args`.
    assert_eq!(var(&h, "keys").as_deref(), Some("{\"counter:page\"}"));
    assert_eq!(var(&h, "args").as_deref(), Some("{\"5\"}"));
    let screen = h.render(200, 40);
    assert!(
        screen.contains("Debug · stopped at line 20 (breakpoint) · event 1"),
        "{screen}"
    );
    assert!(
        screen.contains("│▸ keys = {\"counter:page\"}  (table, 1 entry)"),
        "{screen}"
    );
    assert!(
        screen.contains("│▸ args = {\"5\"}  (table, 1 entry)"),
        "{screen}"
    );
    assert!(
        screen.contains("│▶ 0 counter_incr line 20   local n = amount(args)"),
        "{screen}"
    );

    // F11 into the library's local helper, F10 back out to line 21.
    h.press("<F11>");
    assert_eq!(stop_line(&h), Some(12));
    // The registered callback's frame is named by the function FCALL called.
    assert_eq!(
        stack(&h),
        vec![("amount".to_string(), 12), ("counter_incr".to_string(), 20)]
    );
    h.press("<S-F11>");
    assert_eq!(stop_line(&h), Some(21));
    assert_eq!(var(&h, "n").as_deref(), Some("5"));
    // F10 to the INCRBY line, then over it: the keyspace view follows.
    h.press("<F10>");
    assert_eq!(stop_line(&h), Some(24));
    assert_eq!(counter(&h).as_deref(), Some("10"));
    // Shift-F10 steps back: line 21 again.
    h.press("<S-F10>");
    assert_eq!(stop_line(&h), Some(21));
    // F5 to the end: the FCALL's reply and trace, as F5 without breakpoints gives them.
    h.press("<F5>");
    assert!(h.app.debugger.session.is_none());
    let run = h.app.last_run.as_ref().expect("the run's report");
    assert_eq!(run.report.reply, Reply::Int(15));
    assert_eq!(
        run.report.trace[0].command,
        vec![b"INCRBY".to_vec(), b"counter:page".to_vec(), b"5".to_vec()]
    );
    assert_eq!(counter(&h).as_deref(), Some("15"));
}

#[test]
fn the_function_alt_f_picks_is_the_one_debugged() {
    let mut h = harness();
    h.press("<A-f>");
    assert_eq!(
        h.app.status,
        "FCALL_RO counter_get [no-writes] · 2/2 of 'counters'"
    );
    h.app.editor.goto_line(30);
    h.keys("<F9> <F5>");
    assert_eq!(stop_line(&h), Some(30));
    assert_eq!(var(&h, "keys").as_deref(), Some("{\"counter:page\"}"));
    h.press("<F5>");
    let run = h.app.last_run.as_ref().expect("the run's report");
    assert_eq!(run.report.reply, Reply::Int(10));
    assert!(!run.report.trace[0].write);
}

#[test]
fn a_library_that_does_not_load_is_not_debugged() {
    common::isolate_app_dirs();
    let mut h = Harness::new("#!lua name=empty\nlocal x = 1\n", &[], &[], "");
    h.app.editor.goto_line(2);
    h.keys("<F9> <F5>");
    assert!(h.app.debugger.session.is_none());
    assert_eq!(
        h.app.status,
        "library 'empty': FUNCTION LOAD failed: ERR No functions registered"
    );
}

#[test]
fn f10_starts_at_the_functions_first_line() {
    let mut h = harness();
    h.press("<F10>");
    assert_eq!(stop_line(&h), Some(20));
    assert_eq!(stack(&h), vec![("counter_incr".to_string(), 20)]);
    assert_eq!(var(&h, "args").as_deref(), Some("{\"5\"}"));
    h.press("<S-F5>");
    assert!(h.app.debugger.session.is_none());
}
