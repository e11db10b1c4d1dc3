//! The debugger in the workbench, driven by keys through the synchronous harness (its debug engine
//! runs on a thread of its own and answers every key before the next): the stopped views as
//! TestBackend snapshots (`INSTA_UPDATE=always cargo test --test tui_debug` rewrites them), a whole
//! session by keys, and a debugged run that ends exactly as a plain run does.
#![cfg(feature = "tui")]

mod common;

use evalbench::engine::debug::StopReason;
use evalbench::engine::keyspace::Value;
use evalbench::tui::app::Tab;
use evalbench::tui::debugger::EDIT_REFUSED;
use evalbench::tui::harness::Harness;

/// A function called twice, a table local, redis.debug, a branch never taken; the line numbers
/// matter to the tests below.
const SCRIPT: &str = "local function bump(key, by)
  local n = redis.call('INCRBY', key, by)
  return n
end
-- a table local, then two calls
local items = {'a', 'b', limit = tonumber(ARGV[1])}
local total = bump(KEYS[1], 5)
redis.debug('total', total)
if total > items.limit * 1000 then
  return 'too big'
end
local again = bump(KEYS[1], 1)
return {total, again}
";

/// An error raised by redis.call on line 4, with locals to read at the stop.
const FAILING: &str = "local count = tonumber(ARGV[1])
local seen = {count, 'x'}
redis.call('SET', KEYS[1], count)
return redis.call('NOSUCHCOMMAND', KEYS[1])
";

fn harness(script: &str) -> Harness {
    common::isolate_app_dirs();
    Harness::new(
        script,
        &["counter"],
        &["10"],
        r#"{"counter": {"type": "string", "value": "100"}}"#,
    )
}

/// Put the editor's cursor on `line` (1-based).
fn cursor_to(h: &mut Harness, line: usize) {
    h.app.editor.goto_line(line);
}

/// Type into the open prompt and answer it.
fn answer(h: &mut Harness, text: &str) {
    h.type_text(text);
    h.press("<Enter>");
}

/// The screen with Lua's object addresses (`function@0x55d0...`) pinned: they change per run.
fn screen(h: &Harness, w: u16, hgt: u16) -> String {
    let raw = h.render(w, hgt);
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw.as_str();
    while let Some(at) = rest.find("@0x") {
        out.push_str(&rest[..at + 3]);
        rest = &rest[at + 3..];
        let hex = rest
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(rest.len());
        out.push_str(&"#".repeat(hex));
        rest = &rest[hex..];
    }
    out.push_str(rest);
    out
}

fn stop_line(h: &Harness) -> Option<u32> {
    h.app.debugger.paused_line()
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

fn var(h: &Harness, name: &str) -> Option<String> {
    h.app.debugger.stop().and_then(|s| {
        s.rows
            .iter()
            .find(|r| r.depth == 0 && r.var.name == name)
            .map(|r| r.var.value.clone())
    })
}

/// The string value of `key` in the keyspace the Keyspace tab shows.
fn shown_value(h: &Harness, key: &str) -> Option<String> {
    let db = h.app.shown_keyspace();
    match db.get(key.as_bytes(), h.app.now_ms).map(|e| &e.value) {
        Some(Value::Str(s)) => Some(String::from_utf8_lossy(s).into_owned()),
        Some(_) => Some("(not a string)".into()),
        None => None,
    }
}

fn console(h: &Harness) -> Vec<String> {
    h.app
        .debugger
        .console
        .iter()
        .map(|l| l.text.clone())
        .collect()
}

#[test]
fn a_whole_session_by_keys() {
    let mut h = harness(SCRIPT);
    // F9 on line 7, F5 runs to it.
    cursor_to(&mut h, 7);
    h.press("<F9>");
    assert_eq!(h.app.status, "breakpoint at line 7");
    h.press("<F5>");
    assert_eq!(stop_line(&h), Some(7));
    assert_eq!(h.app.tab, Tab::Debug);
    assert!(matches!(
        h.app.debugger.stop().map(|s| &s.reason),
        Some(StopReason::Breakpoint { .. })
    ));
    assert_eq!(shown_value(&h, "counter").as_deref(), Some("100"));
    // F11 into bump.
    h.press("<F11>");
    assert_eq!(stop_line(&h), Some(2));
    assert_eq!(
        stack(&h),
        vec![("bump".to_string(), 2), ("top level".to_string(), 7)]
    );
    assert_eq!(var(&h, "by").as_deref(), Some("5"));
    // F10 over the INCRBY: the keyspace view follows.
    h.press("<F10>");
    assert_eq!(stop_line(&h), Some(3));
    assert_eq!(var(&h, "n").as_deref(), Some("105"));
    assert_eq!(shown_value(&h, "counter").as_deref(), Some("105"));
    let log = console(&h);
    assert!(
        log.ends_with(&[
            "<redis> INCRBY counter 5".to_string(),
            "<reply> 105".to_string(),
            "* Stopped at 3, stop reason = step".to_string(),
        ]),
        "{log:?}"
    );
    // Shift-F10 steps back across the redis.call: the keyspace view goes back with it.
    h.press("<S-F10>");
    assert_eq!(stop_line(&h), Some(2));
    assert_eq!(shown_value(&h, "counter").as_deref(), Some("100"));
    assert_eq!(var(&h, "n"), None, "n is not declared yet");
    // Shift-F11 out to the caller, which moves on to line 8.
    h.press("<S-F11>");
    assert_eq!(stop_line(&h), Some(8));
    assert_eq!(stack(&h), vec![("top level".to_string(), 8)]);
    assert_eq!(var(&h, "total").as_deref(), Some("105"));
    // The console says what the function it stepped out of returned.
    let log = console(&h);
    assert!(
        log.ends_with(&[
            "<return> 105".to_string(),
            "* Stopped at 8, stop reason = step".to_string(),
        ]),
        "{log:?}"
    );
    // The cursor follows the stop.
    assert_eq!(h.app.editor.textarea.cursor().0 + 1, 8);
    // F5 runs to the end: redis.debug's output is in the console, the run's report is the plain one.
    h.press("<F5>");
    assert!(h.app.debugger.session.is_none());
    assert!(h.app.running.is_none());
    assert!(
        console(&h).contains(&"<debug> line 8: \"total\", 105".to_string()),
        "{:?}",
        console(&h)
    );
    let run = h.app.last_run.as_ref().expect("the run's report");
    assert_eq!(
        run.report.reply.to_cli(),
        "1) (integer) 105\n2) (integer) 106"
    );
    assert_eq!(shown_value(&h, "counter").as_deref(), Some("106"));
}

#[test]
fn reverse_continue_and_run_to_cursor() {
    let mut h = harness(SCRIPT);
    cursor_to(&mut h, 2);
    h.press("<F9>");
    h.press("<F5>");
    assert_eq!(var(&h, "by").as_deref(), Some("5"));
    h.press("<F5>");
    assert_eq!(stop_line(&h), Some(2));
    assert_eq!(var(&h, "by").as_deref(), Some("1"), "the second hit");
    assert_eq!(shown_value(&h, "counter").as_deref(), Some("105"));
    // Alt-F5: back to the previous hit, the keyspace as it was there.
    h.press("<A-F5>");
    assert_eq!(stop_line(&h), Some(2));
    assert_eq!(var(&h, "by").as_deref(), Some("5"));
    assert_eq!(shown_value(&h, "counter").as_deref(), Some("100"));
    // Ctrl-F10 runs to the cursor's line.
    cursor_to(&mut h, 12);
    h.press("<C-F10>");
    assert_eq!(stop_line(&h), Some(12));
    // Before any session, Ctrl-F10 starts one and runs to the cursor.
    h.press("<S-F5>");
    assert!(h.app.debugger.session.is_none());
    cursor_to(&mut h, 2);
    h.press("<F9>");
    assert!(h.app.debugger.breakpoints.is_empty());
    cursor_to(&mut h, 9);
    h.press("<C-F10>");
    assert_eq!(stop_line(&h), Some(9));
}

#[test]
fn stopped_views() {
    let mut h = harness(SCRIPT);
    // A first debug run to the end gives the gutter its line counts.
    h.keys("<F11> <F5>");
    assert!(h.app.debugger.session.is_none());
    cursor_to(&mut h, 2);
    h.press("<F9>");
    h.press("<F5>");
    h.press("<F10>");
    assert_eq!(stop_line(&h), Some(3));
    // The Debug tab focused: a watch, the caller's frame, its table expanded, an eval.
    h.press("<A-6>");
    h.press("w");
    answer(&mut h, "n * 2");
    h.press("w");
    answer(&mut h, "nosuch.field");
    h.press("]");
    assert_eq!(h.app.debugger.frame, 1);
    h.keys("<Down>");
    h.press("<Enter>");
    h.press("e");
    answer(&mut h, "#items + items.limit");
    let stop = h.app.debugger.stop().expect("stopped");
    assert_eq!(stop.frame, 1);
    assert_eq!(stop.watches[0].0, "n * 2");
    // Watches evaluate in the selected frame: n is not a local of the caller.
    assert!(stop.watches[0].1.is_err(), "{:?}", stop.watches);
    assert_eq!(console(&h).last().map(String::as_str), Some("<retval> 12"));
    insta::assert_snapshot!("stopped_120x40", screen(&h, 120, 40));
    insta::assert_snapshot!("stopped_80x24", screen(&h, 80, 24));
    // Back to the innermost frame: the watch has its value.
    h.press("[");
    let stop = h.app.debugger.stop().expect("stopped");
    assert_eq!(stop.watches[0].1.as_deref(), Ok("210"));
    insta::assert_snapshot!("stopped_inner_frame_120x40", screen(&h, 120, 40));
}

#[test]
fn an_expanded_table_is_paged_and_cycles_are_marked() {
    let script = "local big = {}\nfor i = 1, 120 do big[i] = i * i end\nlocal self_ref = {name = 'loop'}\nself_ref.me = self_ref\nlocal s = string.rep('x', 300)\nreturn #big\n";
    let mut h = harness(script);
    cursor_to(&mut h, 6);
    h.keys("<F9> <F5> <A-6>");
    // big: expand, then the "more" row shows the next page.
    h.press("<Enter>");
    let rows = &h.app.debugger.stop().expect("stopped").rows;
    assert_eq!(
        rows.len(),
        1 + 50 + 1 + 4,
        "big, 50 entries, more, self_ref, s, KEYS, ARGV"
    );
    assert_eq!(rows[51].more, Some(70));
    h.keys("<End>");
    h.keys("<Up> <Up> <Up> <Up>");
    h.press("<Enter>");
    let rows = &h.app.debugger.stop().expect("stopped").rows;
    assert_eq!(rows[101].more, Some(20));
    // Collapse big, expand self_ref: its own entry is a cycle.
    h.keys("<Home> <Enter> <Down> <Enter>");
    let rows = &h.app.debugger.stop().expect("stopped").rows;
    let me = rows.iter().find(|r| r.var.name == "[\"me\"]");
    assert!(
        me.is_some_and(|r| r.var.value.contains("<cycle>")),
        "{rows:#?}"
    );
    insta::assert_snapshot!("table_cycle_long_string_120x40", screen(&h, 120, 40));
}

#[test]
fn break_on_error_shows_the_locals() {
    let mut h = harness(FAILING);
    h.keys("<F11> <F5>");
    let stop = h.app.debugger.stop().expect("stopped at the error");
    assert_eq!(stop.line, 4);
    match &stop.reason {
        StopReason::Error { message } => {
            assert_eq!(message, "ERR Unknown Redis command called from script")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(var(&h, "count").as_deref(), Some("10"));
    assert_eq!(var(&h, "seen").as_deref(), Some("{10; \"x\"}"));
    // The SET before the error is in the keyspace view.
    assert_eq!(shown_value(&h, "counter").as_deref(), Some("10"));
    insta::assert_snapshot!("error_stop_120x40", screen(&h, 120, 40));
    // F5: the run ends with the script's own error, marked at its line.
    h.press("<F5>");
    let run = h.app.last_run.as_ref().expect("a report");
    assert!(run.report.is_error());
    assert_eq!(run.report.error_line, Some(4));
    assert_eq!(h.app.editor.error.as_ref().map(|e| e.0), Some(4));
}

#[test]
fn esc_at_a_stop_ends_the_run_as_ldb_abort() {
    let mut h = harness(SCRIPT);
    cursor_to(&mut h, 8);
    h.keys("<F9> <F5>");
    assert_eq!(stop_line(&h), Some(8));
    h.press("<Esc>");
    assert!(h.app.debugger.session.is_none());
    assert!(h.app.running.is_none());
    let run = h.app.last_run.as_ref().expect("a report");
    let sha = h.app.editor.sha1();
    assert_eq!(
        run.report.reply.to_cli(),
        format!("(error) ERR script aborted for user request script: {sha}, on @user_script:8.")
    );
    // What ran before the abort stays (LDB's session is a forked copy; the sandbox keeps it).
    assert_eq!(run.report.trace.len(), 1);
}

#[test]
fn a_debug_session_run_to_the_end_is_a_plain_run() {
    let scripts: &[(&str, &[&str], &[&str], &str)] = &[
        (
            SCRIPT,
            &["counter"],
            &["10"],
            r#"{"counter": {"type": "string", "value": "100"}}"#,
        ),
        (
            include_str!("../samples/rate_limiter.lua"),
            &["ratelimit:alice:42"],
            &["10", "60"],
            r#"{"ratelimit:alice:42": {"type": "string", "value": "3", "ttl_ms": 60000}}"#,
        ),
        (FAILING, &["k"], &["7"], ""),
        (
            "redis.call('HSET', KEYS[1], 'a', 1, 'b', 2)\nlocal t = redis.call('HGETALL', KEYS[1])\nredis.call('RPUSH', KEYS[2], unpack(t))\nreturn {redis.call('LRANGE', KEYS[2], 0, -1), cjson.encode({x = 1.5}), math.random(100)}\n",
            &["h", "l"],
            &[],
            "",
        ),
        (
            "local ok, err = pcall(redis.call, 'INCR', KEYS[1])\nreturn {ok and 1 or 0, tostring(err)}\n",
            &["s"],
            &[],
            r#"{"s": {"type": "string", "value": "abc"}}"#,
        ),
    ];
    for (script, keys, argv, seed) in scripts {
        common::isolate_app_dirs();
        let mut plain = Harness::new(script, keys, argv, seed);
        plain.press("<F5>");
        let mut debugged = Harness::new(script, keys, argv, seed);
        debugged.keys("<F11> <F5>");
        // A script that fails stops at its error first.
        if debugged.app.debugger.session.is_some() {
            debugged.press("<F5>");
        }
        let (p, d) = (
            plain.app.last_run.as_ref().expect("plain report"),
            debugged.app.last_run.as_ref().expect("debug report"),
        );
        assert_eq!(d.report.reply, p.report.reply, "{script}");
        assert_eq!(d.report.lua_value, p.report.lua_value, "{script}");
        assert_eq!(d.report.error_line, p.report.error_line, "{script}");
        assert_eq!(d.after, p.after, "{script}");
        assert_eq!(d.report.trace.len(), p.report.trace.len(), "{script}");
        assert_eq!(d.report.warnings, p.report.warnings, "{script}");
    }
}

#[test]
fn breakpoints_move_off_lines_without_code_and_take_conditions() {
    let mut h = harness(SCRIPT);
    // Line 5 is a comment: the breakpoint goes to line 6, and the console says so.
    cursor_to(&mut h, 5);
    h.press("<F9>");
    assert_eq!(
        h.app.status,
        "Line 5 has no code: breakpoint moved to line 6."
    );
    assert!(h.app.debugger.breakpoint_at(6).is_some());
    cursor_to(&mut h, 6);
    h.press("<F9>");
    assert!(h.app.debugger.breakpoints.is_empty(), "F9 again removes it");
    // A condition that does not compile is refused with Lua's message.
    cursor_to(&mut h, 2);
    h.press("<S-F9>");
    answer(&mut h, "by ==");
    assert_eq!(
        h.app.status,
        "breakpoint refused: condition:1: unexpected symbol near ')'"
    );
    assert!(h.app.debugger.breakpoints.is_empty());
    // A condition that does: the run stops only where it holds.
    h.press("<S-F9>");
    answer(&mut h, "by == 1");
    assert_eq!(h.app.status, "breakpoint at line 2 if by == 1");
    h.press("<F5>");
    assert_eq!(stop_line(&h), Some(2));
    assert_eq!(var(&h, "by").as_deref(), Some("1"));
    h.press("<S-F5>");
    // A hit count: from the second hit on.
    h.press("<S-F9>");
    h.press("<C-u>");
    for _ in 0.."by == 1".len() {
        h.press("<Backspace>");
    }
    answer(&mut h, "hits 2");
    assert_eq!(h.app.status, "breakpoint at line 2 from hit 2");
    h.press("<F5>");
    assert_eq!(var(&h, "by").as_deref(), Some("1"));
}

#[test]
fn an_eval_error_shows_and_the_run_stays_paused() {
    let mut h = harness(SCRIPT);
    cursor_to(&mut h, 8);
    h.keys("<F9> <F5> <A-6> e");
    answer(&mut h, "items.nosuch.x");
    assert_eq!(stop_line(&h), Some(8));
    let log = console(&h);
    assert_eq!(
        log[log.len() - 2..],
        [
            "> items.nosuch.x".to_string(),
            "<error> eval:1: attempt to index field 'nosuch' (a nil value)".to_string()
        ],
        "{log:?}"
    );
    // A write is refused; a read sees the keyspace at the stop.
    h.press("e");
    answer(&mut h, "redis.call('SET', 'x', 1)");
    assert!(
        console(&h).last().is_some_and(|l| l.starts_with("<error>")),
        "{:?}",
        console(&h)
    );
    h.press("e");
    answer(&mut h, "redis GET counter");
    assert_eq!(
        console(&h)[console(&h).len() - 2..],
        [
            "<redis> GET counter".to_string(),
            "<reply> \"105\"".to_string()
        ]
    );
    h.press("<F5>");
    assert_eq!(
        h.app.last_run.as_ref().map(|r| r.report.reply.to_cli()),
        Some("1) (integer) 105\n2) (integer) 106".to_string())
    );
}

#[test]
fn editing_is_refused_while_debugging_and_nothing_is_lost() {
    let mut h = harness(SCRIPT);
    h.press("<F11>");
    // The first line event: the function's definition ends on line 4.
    assert_eq!(stop_line(&h), Some(4));
    h.app.focus = evalbench::tui::app::Focus::Editor;
    let before = h.app.editor.text();
    h.type_text("x");
    h.press("<Backspace>");
    assert_eq!(h.app.editor.text(), before);
    assert_eq!(h.app.status, EDIT_REFUSED);
    h.app
        .on_event(&ratatui::crossterm::event::Event::Paste("pasted".into()));
    assert_eq!(h.app.editor.text(), before);
    // The cursor still moves (to pick a line for Ctrl-F10).
    h.press("<Down>");
    assert_eq!(h.app.editor.textarea.cursor().0, 4);
    // Once the session ends, typing works again.
    h.press("<S-F5>");
    h.type_text("-- ");
    assert!(
        h.app.editor.text().contains("-- "),
        "{}",
        h.app.editor.text()
    );
    assert!(h.app.editor.modified);
}

/// The editor's own editing commands (undo, redo, cut, paste, indent, outdent, comment, new) are
/// refused like typing; copy, select all and moves still work.
#[test]
fn editing_commands_are_refused_while_debugging() {
    let mut h = harness(SCRIPT);
    h.app.focus = evalbench::tui::app::Focus::Editor;
    // Something to undo, made before the session (a comment on the last line).
    h.press("<C-End>");
    h.type_text("--x");
    let edited = h.app.editor.text();
    h.press("<F11>");
    assert!(h.app.debugger.session.is_some());
    h.app.focus = evalbench::tui::app::Focus::Editor;
    for key in [
        "<C-z>",
        "<C-y>",
        "<C-a>",
        "<C-x>",
        "<C-v>",
        "<Tab>",
        "<BackTab>",
        "<C-/>",
    ] {
        h.app.status.clear();
        h.press(key);
        assert_eq!(h.app.editor.text(), edited, "{key} edited the script");
        if key != "<C-a>" {
            assert_eq!(h.app.status, EDIT_REFUSED, "{key}");
        }
    }
    // Ctrl-N would replace the script the session runs.
    h.press("<C-n>");
    assert_eq!(h.app.editor.text(), edited);
    assert_eq!(h.app.status, "stop debugging first (Shift-F5)");
    // Copying changes nothing: allowed (the selection of Ctrl-A above).
    h.effects.clear();
    h.press("<C-c>");
    assert_eq!(h.effects, ["clipboard"]);
    // Once the session ends, undo works again.
    h.press("<S-F5>");
    assert!(h.app.debugger.session.is_none());
    h.app.focus = evalbench::tui::app::Focus::Editor;
    h.press("<C-z>");
    assert_ne!(h.app.editor.text(), edited);
    assert!(h.app.editor.text().len() < edited.len());
}

#[test]
fn a_script_that_does_not_compile_shows_its_error_at_its_line() {
    let mut h = harness("local a = 1\nlocal b = (a +\nreturn b\n");
    h.press("<F11>");
    assert!(h.app.debugger.session.is_none());
    assert!(h.app.running.is_none());
    assert_eq!(
        h.app.editor.error,
        Some((3, "unexpected symbol near 'return'".to_string()))
    );
    assert_eq!(
        h.app.status,
        "the script does not compile: unexpected symbol near 'return'"
    );
}

#[test]
fn time_stopped_does_not_count_against_the_busy_threshold() {
    let mut h = harness(SCRIPT);
    h.app.config.busy_threshold_ms = 100;
    h.press("<F11>");
    std::thread::sleep(std::time::Duration::from_millis(300));
    h.press("<F10>");
    std::thread::sleep(std::time::Duration::from_millis(300));
    h.press("<F5>");
    let run = h.app.last_run.as_ref().expect("a report");
    assert_eq!(
        run.report.reply.to_cli(),
        "1) (integer) 105\n2) (integer) 106"
    );
}

#[test]
fn the_last_runs_calls_step_on_other_keys() {
    let mut h = harness(SCRIPT);
    h.keys("<F5> <A-Right> <A-Right>");
    assert_eq!(h.app.step, Some(1));
    h.press("<A-Left>");
    assert_eq!(h.app.step, Some(0));
    h.keys("<A-1> ]");
    assert_eq!(h.app.step, Some(1));
    h.press("[");
    assert_eq!(h.app.step, Some(0));
}

#[test]
fn quitting_while_stopped_never_waits_on_the_engine() {
    use evalbench::engine::RunRequest;
    use evalbench::tui::debug_engine::{DebugCommand, DebugEvent, StartDebug};
    use evalbench::tui::worker::{EngineEvent, Worker};
    let worker = Worker::start();
    worker.debug(DebugCommand::Start(Box::new(StartDebug {
        id: 1,
        request: RunRequest {
            script: b"local a = 1\nwhile true do a = a + 1 end\n".to_vec(),
            ..RunRequest::default()
        },
        seed: Default::default(),
        busy_threshold_ms: 0,
        clock_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64,
        breaks: Default::default(),
        stop_at_start: true,
        view: Default::default(),
        function: None,
    })));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match worker.events.recv_timeout(left) {
            Ok(EngineEvent::Debug(DebugEvent::Stopped(_))) => break,
            Ok(_) => {}
            Err(e) => panic!("no stop: {e}"),
        }
    }
    // Paused inside the run: dropping the worker (quit) closes the debug channel, the run aborts
    // and the engine thread ends, well before the wait after which a busy thread is left behind.
    let started = std::time::Instant::now();
    drop(worker);
    assert!(
        started.elapsed() < evalbench::tui::worker::QUIT_WAIT,
        "quit waited {:?}: the paused engine thread was left behind",
        started.elapsed()
    );
}

#[test]
fn a_closed_command_channel_aborts_the_paused_run() {
    use evalbench::engine::RunRequest;
    use evalbench::tui::debug_engine::{run, DebugCommand, DebugEvent, StartDebug};
    use evalbench::tui::worker::EngineEvent;
    let (commands, command_rx) = std::sync::mpsc::channel::<DebugCommand>();
    let (event_tx, events) = std::sync::mpsc::channel::<EngineEvent>();
    let engine = std::thread::spawn(move || {
        let mut sandbox = evalbench::engine::Sandbox::new();
        let start = StartDebug {
            id: 7,
            request: RunRequest {
                script: b"redis.call('SET', 'k', 'v')\nreturn 1\n".to_vec(),
                ..RunRequest::default()
            },
            seed: Default::default(),
            busy_threshold_ms: 0,
            clock_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis() as i64,
            breaks: Default::default(),
            stop_at_start: true,
            view: Default::default(),
            function: None,
        };
        let result = run(&mut sandbox, start, &command_rx, &event_tx);
        result.report.reply.to_cli()
    });
    loop {
        match events.recv_timeout(std::time::Duration::from_secs(30)) {
            Ok(EngineEvent::Debug(DebugEvent::Stopped(view))) => {
                assert_eq!(view.line, 1);
                break;
            }
            Ok(_) => {}
            Err(e) => panic!("no stop: {e}"),
        }
    }
    drop(commands);
    let reply = engine.join().expect("the engine thread");
    assert!(
        reply.starts_with("(error) ERR script aborted for user request"),
        "{reply}"
    );
}

#[test]
fn the_keyspace_tab_follows_the_stop_with_the_runs_clock() {
    common::isolate_app_dirs();
    let mut h = Harness::sample();
    // The UI's clock reading is stale until an engine answer brings the sandbox's.
    h.app.now_ms = 0;
    cursor_to(&mut h, 15);
    h.keys("<F9> <F5> <A-3>");
    assert_eq!(stop_line(&h), Some(15));
    let screen = screen(&h, 120, 40);
    assert!(
        screen.contains("Keys · at the debugger's stop, line 15 (1)"),
        "{screen}"
    );
    // INCR made it 4, the TTL is the seed's 60 s on the run's clock.
    assert!(
        screen.contains("~ ratelimit:alice:42") && screen.contains("string 60.0s"),
        "{screen}"
    );
    assert_eq!(shown_value(&h, "ratelimit:alice:42").as_deref(), Some("4"));
}

#[test]
fn step_keys_pressed_while_the_script_runs_step_on_at_the_next_stops() {
    use evalbench::tui::keymap::parse_key;
    use ratatui::crossterm::event::Event;
    let mut h = harness(SCRIPT);
    h.press("<F11>");
    assert_eq!(stop_line(&h), Some(4));
    let f10 = Event::Key(parse_key("<F10>").expect("a key"));
    // Three F10 in one burst: the first resumes, the others wait for the stops.
    let first = h.app.on_event(&f10);
    assert_eq!(first.len(), 1);
    assert!(h.app.on_event(&f10).is_empty());
    assert!(h.app.on_event(&f10).is_empty());
    h.apply(first);
    h.settle();
    assert_eq!(stop_line(&h), Some(8), "4 → 6 → 7 → 8");
}

#[test]
fn console_lines_stay_bounded_for_huge_commands_and_replies() {
    let script = "local s = string.rep('x', 1000000)\nredis.call('SET', KEYS[1], s)\nlocal r = redis.call('GET', KEYS[1])\nreturn 1\n";
    let mut h = harness(script);
    h.keys("<F11> <F10> <F10> <F10>");
    assert_eq!(stop_line(&h), Some(4));
    let log = console(&h);
    assert!(
        log.iter()
            .any(|l| l.starts_with("<redis> SET counter xxxx")),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l.starts_with("<reply> \"xxxx")),
        "{log:?}"
    );
    for line in &log {
        assert!(line.len() < 600, "{} bytes: {}", line.len(), &line[..80]);
    }
}

#[test]
fn esc_while_the_debugged_script_runs_cancels_it() {
    use evalbench::engine::report::Outcome;
    use evalbench::engine::RunRequest;
    use evalbench::tui::debug_engine::{DebugCommand, StartDebug};
    use evalbench::tui::worker::{EngineEvent, Worker};
    let worker = Worker::start();
    // Continue from the start into a loop that never stops by itself (no busy threshold).
    worker.debug(DebugCommand::Start(Box::new(StartDebug {
        id: 3,
        request: RunRequest {
            script: b"local a = 1\nwhile true do a = a + 1 end\n".to_vec(),
            ..RunRequest::default()
        },
        seed: Default::default(),
        busy_threshold_ms: 0,
        clock_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64,
        breaks: Default::default(),
        stop_at_start: false,
        view: Default::default(),
        function: None,
    })));
    std::thread::sleep(std::time::Duration::from_millis(100));
    worker.cancel();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match worker.events.recv_timeout(left) {
            Ok(EngineEvent::Finished(result)) => {
                assert_eq!(result.id, 3);
                assert_eq!(result.report.outcome, Outcome::Cancelled);
                break;
            }
            Ok(_) => {}
            Err(e) => panic!("the run did not end: {e}"),
        }
    }
}

#[test]
fn opening_another_script_drops_the_breakpoints_and_line_counts() {
    let mut h = harness(SCRIPT);
    h.keys("<F11> <F5>");
    cursor_to(&mut h, 7);
    h.press("<F9>");
    assert!(h.app.debugger.coverage.is_some());
    assert_eq!(h.app.debugger.breakpoints.len(), 1);
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let other = dir.join("other.lua");
    std::fs::write(&other, "return 1\n").expect("write");
    h.app.open_file(other);
    assert!(h.app.debugger.breakpoints.is_empty());
    assert!(h.app.debugger.coverage.is_none());
}

/// Every differential case through the workbench's debug path (continued at every stop, errors
/// included) gives what its plain run gives: the reply, the Lua value, the keyspace, the trace.
#[test]
fn every_differential_case_debugged_to_the_end_is_its_plain_run() {
    use evalbench::engine::clock::ManualClock;
    use evalbench::engine::keyspace::keyspace_from_json;
    use evalbench::engine::{Protocol, RunRequest, Sandbox};
    use evalbench::tui::debug_engine::{Breaks, DebugCommand, DebugEvent, DebugThread, StartDebug};
    use evalbench::tui::harness::START_US;
    use evalbench::tui::worker::{EngineEvent, RunResult};
    let clock = ManualClock::new(START_US);
    let mut plain = Sandbox::with_clock(Box::new(clock.clone()));
    plain.config.snapshots = true;
    let debugger = DebugThread::start(clock.clone());
    let cases = common::all_cases();
    assert!(cases.len() > 50, "{} cases", cases.len());
    for (id, case) in cases.iter().enumerate() {
        // redis.breakpoint() is true under a debugger (as with LDB): such a script may differ.
        if case.script.contains("redis.breakpoint") {
            continue;
        }
        let seed = keyspace_from_json(&case.seed.to_string(), plain.now_ms())
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let request = RunRequest {
            script: case.script.as_bytes().to_vec(),
            keys: case.keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
            argv: case.argv.iter().map(|a| a.as_bytes().to_vec()).collect(),
            protocol: if case.resp == 3 {
                Protocol::Resp3
            } else {
                Protocol::Resp2
            },
            read_only: false,
        };
        let expected = RunResult::run(&mut plain, id as u64, request.clone(), seed.clone(), 5000);
        let id = id as u64 + 1;
        debugger.send(DebugCommand::Start(Box::new(StartDebug {
            id,
            request,
            seed,
            busy_threshold_ms: 5000,
            clock_ms: 1_700_000_000_000,
            breaks: Breaks::default(),
            stop_at_start: true,
            view: Default::default(),
            function: None,
        })));
        let got = loop {
            let events = debugger.answer().expect("an answer");
            match events.into_iter().last() {
                Some(EngineEvent::Finished(result)) => break result,
                Some(EngineEvent::Debug(DebugEvent::Stopped(_))) => {
                    debugger.send(DebugCommand::Resume {
                        id,
                        resume: evalbench::engine::debug::Resume::Continue,
                        breaks: Breaks::default(),
                        view: Default::default(),
                    })
                }
                _ => panic!("{}: an answer that closes nothing", case.name),
            }
        };
        let what = format!("{}: {}", case.file, case.name);
        // As text: a NaN reply is not equal to itself.
        assert_eq!(
            format!("{:?}", got.report.reply),
            format!("{:?}", expected.report.reply),
            "{what}"
        );
        assert_eq!(got.report.lua_value, expected.report.lua_value, "{what}");
        assert_eq!(got.after, expected.after, "{what}");
        assert_eq!(
            got.report.trace.len(),
            expected.report.trace.len(),
            "{what}"
        );
    }
}

#[test]
fn an_expanded_table_stays_expanded_across_steps_and_each_stop_opens_on_the_innermost_frame() {
    let mut h = harness(SCRIPT);
    cursor_to(&mut h, 7);
    h.keys("<F9> <F5> <A-6>");
    // bump, items, KEYS, ARGV: expand KEYS.
    h.keys("<Down> <Down> <Enter>");
    let rows = &h.app.debugger.stop().expect("stopped").rows;
    assert!(rows[2].expanded && rows[2].var.name == "KEYS", "{rows:#?}");
    // F10 declares total before KEYS: KEYS stays expanded (by name, not position).
    h.press("<F10>");
    let stop = h.app.debugger.stop().expect("stopped");
    let names: Vec<(&str, bool)> = stop
        .rows
        .iter()
        .filter(|r| r.depth == 0)
        .map(|r| (r.var.name.as_str(), r.expanded))
        .collect();
    assert_eq!(
        names,
        [
            ("bump", false),
            ("items", false),
            ("total", false),
            ("KEYS", true),
            ("ARGV", false)
        ]
    );
    // A step from the caller's frame: the next stop shows the innermost frame.
    h.keys("<F11> <F11> <F11>");
    assert_eq!(stop_line(&h), Some(2));
    h.press("]");
    assert_eq!(h.app.debugger.stop().map(|s| s.frame), Some(1));
    h.press("<F10>");
    let stop = h.app.debugger.stop().expect("stopped");
    assert_eq!((stop.line, stop.frame), (3, 0));
    assert_eq!(var(&h, "n").as_deref(), Some("106"));
}

#[test]
fn breaks_on_a_command_and_on_a_write_to_a_key_and_watches_come_and_go() {
    let mut h = harness(SCRIPT);
    h.keys("<A-6> b");
    answer(&mut h, "nosuch");
    assert_eq!(h.app.status, "NOSUCH is not a Redis command");
    h.press("b");
    answer(&mut h, "incrby");
    assert_eq!(h.app.status, "stopping before every INCRBY");
    h.press("<F11>");
    h.press("<F5>");
    assert_eq!(stop_line(&h), Some(2));
    assert_eq!(
        h.app.debugger.stop().map(|s| s.reason.clone()),
        Some(StopReason::Command {
            name: "INCRBY".into()
        })
    );
    assert_eq!(
        shown_value(&h, "counter").as_deref(),
        Some("100"),
        "before it"
    );
    h.press("b");
    answer(&mut h, "-INCRBY");
    assert_eq!(h.app.status, "no longer stopping before every INCRBY");
    h.press("b");
    answer(&mut h, "key counter");
    h.press("w");
    answer(&mut h, "by");
    h.press("w");
    answer(&mut h, "key");
    assert_eq!(h.app.debugger.watches, ["by", "key"]);
    h.press("<F5>");
    assert_eq!(
        h.app.debugger.stop().map(|s| s.reason.clone()),
        Some(StopReason::KeyWrite {
            key: b"counter".to_vec()
        })
    );
    let watches = &h.app.debugger.stop().expect("stopped").watches;
    assert_eq!(watches[0], ("by".to_string(), Ok("1".to_string())));
    h.press("W");
    h.press("<Backspace>");
    answer(&mut h, "1");
    assert_eq!(h.app.debugger.watches, ["key"]);
    let watches = &h.app.debugger.stop().expect("stopped").watches;
    assert_eq!(
        watches,
        &[("key".to_string(), Ok("\"counter\"".to_string()))]
    );
}
