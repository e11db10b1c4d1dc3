//! Screens of the workbench, driven by keys through the synchronous harness and compared with
//! insta snapshots (`INSTA_UPDATE=always cargo test --test tui_screens` rewrites them), plus
//! behavioural checks that do not depend on the layout.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::action::Action;
use evalbench::tui::app::{Confirm, Overlay, Tab};
use evalbench::tui::harness::Harness;
use evalbench::tui::keymap::format_key;

fn sample() -> Harness {
    common::isolate_app_dirs();
    Harness::sample()
}

/// A script whose second call fails (the error is raised on line 3).
const FAILING: &str = "local n = redis.call('INCR', KEYS[1])\n\
                       -- the next call names a command that does not exist\n\
                       return redis.call('NOSUCHCOMMAND', KEYS[1], n)\n";

/// A script touching a key it did not declare in KEYS.
const UNDECLARED: &str = "redis.call('SET', KEYS[1], 'a')\n\
                          return redis.call('GET', 'not:declared')\n";

#[test]
fn start_screen_empty() {
    common::isolate_app_dirs();
    let h = Harness::new("", &[], &[], "");
    insta::assert_snapshot!("start_empty_120x40", h.render(120, 40));
}

#[test]
fn start_screen_sample() {
    let h = sample();
    insta::assert_snapshot!("start_sample_120x40", h.render(120, 40));
    insta::assert_snapshot!("start_sample_80x24", h.render(80, 24));
}

#[test]
fn after_run_shows_trace() {
    let mut h = sample();
    h.press("<F5>");
    insta::assert_snapshot!("after_run_120x40", h.render(120, 40));
    insta::assert_snapshot!("after_run_80x24", h.render(80, 24));
}

#[test]
fn reply_tab() {
    let mut h = sample();
    h.keys("<F5> <A-2>");
    insta::assert_snapshot!("reply_tab_120x40", h.render(120, 40));
}

#[test]
fn error_run_marks_line() {
    common::isolate_app_dirs();
    let mut h = Harness::new(FAILING, &["counter"], &[], "");
    h.press("<F5>");
    let run = h.app.last_run.as_ref().expect("a report");
    assert!(run.report.is_error());
    assert_eq!(run.report.error_line, Some(3));
    assert_eq!(h.app.editor.error.as_ref().map(|e| e.0), Some(3));
    insta::assert_snapshot!("error_run_120x40", h.render(120, 40));
}

#[test]
fn stepping_forward_and_back() {
    let mut h = sample();
    // The last run's calls step on Alt-Right / Alt-Left (F10 is the debugger's step over).
    h.keys("<F5> <A-Right> <A-Right>");
    assert_eq!(h.app.step, Some(1));
    h.press("<A-Left>");
    assert_eq!(h.app.step, Some(0));
    // The editor's cursor is on the line of the first call (INCR).
    let first_line = h.app.last_run.as_ref().map(|r| r.report.trace[0].line);
    assert_eq!(
        Some(h.app.editor.textarea.cursor().0 as u32 + 1),
        first_line
    );
    insta::assert_snapshot!("stepping_120x40", h.render(120, 40));
}

#[test]
fn help_overlay() {
    let mut h = sample();
    h.press("<F1>");
    insta::assert_snapshot!("help_120x40", h.render(120, 40));
    insta::assert_snapshot!("help_80x24", h.render(80, 24));
}

#[test]
fn keyspace_tab_after_run() {
    let mut h = sample();
    h.keys("<F5> <A-3>");
    assert_eq!(h.app.tab, Tab::Keyspace);
    insta::assert_snapshot!("keyspace_after_run_120x40", h.render(120, 40));
}

#[test]
fn keyspace_diff_after_run() {
    let mut h = sample();
    h.keys("<F5> <A-3> D D");
    let screen = h.render(120, 40);
    assert!(screen.contains("ratelimit:alice:42"), "{screen}");
    insta::assert_snapshot!("keyspace_diff_120x40", screen);
}

#[test]
fn warnings_tab_undeclared_key() {
    common::isolate_app_dirs();
    let mut h = Harness::new(UNDECLARED, &["declared"], &[], "");
    h.keys("<F5> <A-4>");
    let run = h.app.last_run.as_ref().expect("a report");
    assert!(
        !run.report.warnings.is_empty(),
        "an undeclared key gives a warning"
    );
    let screen = h.render(120, 40);
    assert!(screen.contains("not:declared"), "{screen}");
    insta::assert_snapshot!("warnings_undeclared_120x40", screen);
}

#[test]
fn quit_confirmation_with_unsaved_changes() {
    let mut h = sample();
    h.type_text("-- edited\n").press("<C-q>");
    insta::assert_snapshot!("quit_confirm_120x40", h.render(120, 40));
    insta::assert_snapshot!("quit_confirm_80x24", h.render(80, 24));
}

// ---- Behaviour, independent of the layout ----

#[test]
fn f5_produces_a_report() {
    let mut h = sample();
    assert!(h.app.last_run.is_none());
    h.press("<F5>");
    assert_eq!(h.effects, ["run"]);
    assert!(h.app.running.is_none(), "the run finished");
    let run = h.app.last_run.as_ref().expect("a report");
    assert!(!run.report.is_error());
    // INCR then TTL (the key exists, so no EXPIRE): {1, 10 - 4, 60}.
    let commands: Vec<String> = run
        .report
        .trace
        .iter()
        .map(|e| String::from_utf8_lossy(&e.command[0]).to_uppercase())
        .collect();
    assert_eq!(commands, ["INCR", "TTL"]);
    assert_eq!(
        run.report.reply.to_cli(),
        "1) (integer) 1\n2) (integer) 6\n3) (integer) 60"
    );
    assert!(h.app.status.starts_with("done"), "{}", h.app.status);
    let first = run.report.reply.to_cli();
    // Every run starts from the seed: a second run gives the same answer.
    h.press("<C-r>");
    let again = h.app.last_run.as_ref().expect("a report");
    assert_eq!(again.report.reply.to_cli(), first);
    assert_eq!(h.effects, ["run", "run"]);
}

#[test]
fn esc_without_a_run_is_harmless() {
    let mut h = sample();
    let text = h.app.editor.text();
    let before = h.render(120, 40);
    h.press("<Esc>");
    assert!(h.effects.is_empty(), "{:?}", h.effects);
    assert!(!h.app.quit);
    assert!(h.app.overlay.is_none());
    assert!(h.app.last_run.is_none());
    assert_eq!(h.app.editor.text(), text);
    assert!(!h.app.editor.modified);
    assert_eq!(h.render(120, 40), before);
    // Also after a run, and from the panes.
    h.keys("<F5> <A-1> <Esc> <Esc>");
    assert_eq!(h.effects, ["run"]);
    assert!(h.app.last_run.is_some());
    assert!(!h.app.quit);
}

#[test]
fn ctrl_q_asks_when_modified() {
    let mut h = sample();
    h.type_text("x").press("<C-q>");
    assert!(h.app.editor.modified);
    assert!(!h.app.quit);
    assert!(matches!(
        h.app.overlay,
        Some(Overlay::Confirm(Confirm::QuitUnsaved))
    ));
    // "n" keeps the session and the text.
    h.press("n");
    assert!(h.app.overlay.is_none());
    assert!(!h.app.quit);
    assert!(h.app.editor.text().starts_with('x'));
    // Asked again, "y" quits.
    h.keys("<C-q> y");
    assert!(h.app.quit);
    assert_eq!(h.effects, ["quit"]);
}

#[test]
fn ctrl_q_quits_at_once_when_unmodified() {
    let mut h = sample();
    h.press("<C-q>");
    assert!(h.app.quit);
    assert!(h.app.overlay.is_none());
}

#[test]
fn help_lists_every_bound_action() {
    let mut h = sample();
    h.press("<F1>");
    // Tall enough for the whole list; the overlay is at most 80 columns wide.
    let screen = h.render(120, 200);
    let mut missing = Vec::new();
    for action in Action::ALL {
        let keys: Vec<String> = h
            .app
            .keymap
            .bindings
            .iter()
            .filter(|b| b.action == *action)
            .map(|b| format_key(&b.key))
            .collect();
        if keys.is_empty() {
            continue;
        }
        // A row holds one of the keys and the start of the description.
        let description: String = action.description().chars().take(40).collect();
        let listed = screen
            .lines()
            .any(|l| l.contains(&description) && keys.iter().any(|k| l.contains(k.as_str())));
        if !listed {
            missing.push(format!("{action:?} ({})", keys.join(" ")));
        }
    }
    assert!(missing.is_empty(), "not in the help: {missing:?}\n{screen}");
    // Any other key closes it.
    h.press("<Esc>");
    assert!(h.app.overlay.is_none());
}

#[test]
fn small_terminals_do_not_panic() {
    let mut h = sample();
    h.keys("<F5> <F10>");
    for (w, hgt) in [(1, 1), (10, 5), (40, 12), (80, 24), (200, 60)] {
        let _ = h.render(w, hgt);
    }
    h.press("<F1>");
    for (w, hgt) in [(1, 1), (10, 5), (40, 12)] {
        let _ = h.render(w, hgt);
    }
}

#[test]
fn advance_clock_moves_the_sandbox_clock() {
    let mut h = sample();
    h.keys("<F5> <A-3>");
    let before = h.app.now_ms;
    // "+" asks for seconds (prefilled with 60): replace them with 30.
    h.keys("+ <Backspace> <Backspace>")
        .type_text("30")
        .press("<Enter>");
    assert_eq!(h.effects, ["run"]);
    assert_eq!(h.app.now_ms, before + 30_000);
    // The seed's key (TTL 60 s when loaded) now has 30 s left in a new run.
    h.press("<F5>");
    let ttl = h.app.last_run.as_ref().map(|r| r.report.reply.to_cli());
    assert_eq!(
        ttl.as_deref(),
        Some("1) (integer) 1\n2) (integer) 6\n3) (integer) 30")
    );
}

#[test]
fn opening_another_file_over_unsaved_edits_keeps_them_in_their_buffer() {
    let mut h = sample();
    h.type_text("-- edited\n");
    assert!(h.app.editor.modified);
    h.keys("<C-o> <Down> <Enter>");
    // No question: the other file gets a buffer of its own, the edited one stays open.
    assert!(h.app.overlay.is_none());
    assert_eq!(h.app.buffers.len(), 2);
    assert!(!h.app.editor.modified);
    assert!(!h.app.editor.text().contains("-- edited"));
    h.press("<C-PageUp>");
    assert!(h.app.editor.modified);
    assert!(
        h.app.editor.text().contains("-- edited"),
        "the edits were dropped"
    );
}

/// On a live server the engine holds back a run whose dry run writes; the workbench asks, and `y`
/// sends the same request again with writes confirmed.
#[test]
fn a_live_write_is_confirmed_before_it_is_sent() {
    use evalbench::engine::{RunRequest, Sandbox};
    use evalbench::tui::app::Effect;
    use evalbench::tui::worker::{EngineEvent, RunResult};
    use ratatui::crossterm::event::{Event, KeyCode, KeyEvent};
    let mut h = Harness::new("return redis.call('INCR', KEYS[1])", &["c"], &[], "");
    let request = RunRequest {
        script: b"return redis.call('INCR', KEYS[1])".to_vec(),
        keys: vec![b"c".to_vec()],
        ..RunRequest::default()
    };
    let mut sandbox = Sandbox::new();
    let report = sandbox.run(&request);
    h.app
        .on_engine_event(EngineEvent::Finished(Box::new(RunResult {
            id: 1,
            request: request.clone(),
            report,
            before: Default::default(),
            after: sandbox.keyspace().db(0).clone(),
            now_ms: 0,
            question: Some(evalbench::engine::live::guarded::Question {
                concerns: vec![evalbench::engine::live::guarded::Concern::Writes(vec![
                    "line 1: INCR c".into(),
                ])],
                consent: evalbench::engine::live::guarded::Consent {
                    writes: true,
                    ..Default::default()
                },
            }),
            live: false,
            dry_run_ns: None,
            kill: None,
        })));
    assert!(matches!(
        &h.app.overlay,
        Some(Overlay::Confirm(Confirm::LiveSend(r, _))) if **r == request
    ));
    assert!(h
        .render(120, 40)
        .contains("The dry run WRITES (line 1: INCR c)"));
    let effects = h
        .app
        .on_event(&Event::Key(KeyEvent::from(KeyCode::Char('y'))));
    assert!(
        matches!(effects.as_slice(), [Effect::Run { request: r, consent, .. }] if *r == request && consent.writes),
        "{effects:?}"
    );
    assert!(h.app.overlay.is_none());
}

/// ESC/OSC/BEL, a bidi override (U+202E) and a C1 CSI (U+009B) in a log line, a key, a value, the
/// reply and the error (ARGV[1]: status or raise).
const HOSTILE: &str =
    "local evil = '\\27]0;pwned\\7\\27[2J' .. '\\226\\128\\174' .. '\\194\\155'\n\
    redis.log(redis.LOG_WARNING, 'log ' .. evil)\n\
    redis.call('SET', KEYS[1], 'v' .. evil)\n\
    redis.call('SET', 'undeclared' .. evil, evil)\n\
    if ARGV[1] == 'raise' then error('boom ' .. evil) end\n\
    return {ok = 'status ' .. evil}\n";

/// The cells a terminal would receive hold no control, C1 or bidi character.
fn assert_screen_safe(h: &Harness) {
    let screen = h.render_raw(120, 40);
    for (i, c) in screen.char_indices() {
        assert!(
            c == '\n' || !evalbench::engine::display::is_unsafe(c),
            "unsafe {c:?} at byte {i} of:\n{screen}"
        );
    }
}

#[test]
fn hostile_text_never_reaches_the_terminal() {
    common::isolate_app_dirs();
    let mut h = Harness::new(HOSTILE, &["k\u{1b}[2J"], &["status"], "");
    h.app.status = "status \u{1b}]0;pwned\u{7}".into();
    assert_screen_safe(&h);
    h.press("<F5>");
    for tab in ["<A-1>", "<A-2>", "<A-3>", "<A-4>"] {
        h.press(tab);
        assert_screen_safe(&h);
    }
    h.press("<A-1>");
    insta::assert_snapshot!("hostile_trace_120x40", h.render(120, 40));
    h.press("<A-2>");
    insta::assert_snapshot!("hostile_reply_120x40", h.render(120, 40));
    h.press("<A-3>");
    insta::assert_snapshot!("hostile_keyspace_120x40", h.render(120, 40));
    h.press("<A-4>");
    insta::assert_snapshot!("hostile_warnings_120x40", h.render(120, 40));
    // The error line in the editor and on its border.
    let mut h = Harness::new(HOSTILE, &["k"], &["raise"], "");
    h.press("<F5>");
    assert_screen_safe(&h);
    insta::assert_snapshot!("hostile_error_120x40", h.render(120, 40));
}
