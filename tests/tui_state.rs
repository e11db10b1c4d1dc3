//! State that behaves: seed TTLs count from each run's start (never from when the
//! workbench started), advancing the clock never deletes seed keys and can be reset, and "keep
//! state" chains runs so a rate limiter denies the 11th call. Keys pressed as a user would.
#![cfg(feature = "tui")]

mod common;

use evalbench::engine::keyspace::keyspace_from_json;
use evalbench::engine::reply::Reply;
use evalbench::tui::app::App;
use evalbench::tui::config::Config;
use evalbench::tui::harness::Harness;
use evalbench::tui::inputs::InputsState;
use evalbench::tui::worker::Worker;
use std::time::Duration;

const RATE_LIMITER: &str = include_str!("../samples/rate_limiter.lua");
const SAMPLE_SEED: &str =
    r#"{"ratelimit:alice:42": {"type": "string", "value": "3", "ttl_ms": 60000}}"#;

fn limiter_reply(allowed: i64, remaining: i64, ttl: i64) -> Reply {
    Reply::Array(vec![
        Reply::Int(allowed),
        Reply::Int(remaining),
        Reply::Int(ttl),
    ])
}

fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// The workbench as it is an hour after it opened the sample (its seed read then), with the
/// real engine thread: the seed key's TTL still counts from the run's start.
#[test]
fn the_sample_seed_does_not_expire_an_hour_after_start() {
    common::isolate_app_dirs();
    let an_hour_ago = wall_ms() - 3_600_000;
    let mut app = App::new(RATE_LIMITER, None, Config::default());
    app.inputs = InputsState::from_lists(
        &["ratelimit:alice:42".to_string()],
        &["10".to_string(), "60".to_string()],
    );
    app.seed = keyspace_from_json(SAMPLE_SEED, an_hour_ago).unwrap();
    app.seed_now_ms = an_hour_ago;
    app.now_ms = an_hour_ago;
    let worker = Worker::start();
    let effects = app.on_event(&ratatui::crossterm::event::Event::Key(
        evalbench::tui::keymap::parse_key("<F5>").unwrap(),
    ));
    evalbench::tui::apply(effects, &worker, None);
    let result = worker
        .next_result(Duration::from_secs(30))
        .expect("a result");
    assert_eq!(result.report.reply, limiter_reply(1, 6, 60));

    // Saved as a relative TTL, an hour later too.
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let path = dir.join("seed.json");
    app.update(evalbench::tui::action::Action::TabKeyspace);
    app.update(evalbench::tui::action::Action::SaveSeed);
    if let Some(evalbench::tui::app::Overlay::Prompt(p)) = app.overlay.as_mut() {
        p.input = path.display().to_string();
    }
    app.on_event(&ratatui::crossterm::event::Event::Key(
        evalbench::tui::keymap::parse_key("<Enter>").unwrap(),
    ));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(saved["ratelimit:alice:42"]["ttl_ms"], 60000, "{saved}");
}

#[test]
fn advancing_the_clock_keeps_the_seed_and_resets() {
    common::isolate_app_dirs();
    let mut h = Harness::sample();
    h.press("<F5>");
    assert_eq!(
        h.app.last_run.as_ref().unwrap().report.reply,
        limiter_reply(1, 6, 60)
    );
    // 61 s later the seed key has expired in the run; the seed still holds it.
    h.keys("<A-3> + <Backspace> <Backspace>").type_text("61\n");
    assert_eq!(
        h.app.status,
        "run clock advanced by 61 s: 61 s after the seed's time (= resets it)"
    );
    h.press("<F5>");
    assert_eq!(
        h.app.last_run.as_ref().unwrap().report.reply,
        limiter_reply(1, 9, 60)
    );
    assert!(h
        .app
        .seed
        .get(b"ratelimit:alice:42", h.app.seed_now_ms)
        .is_some());
    assert!(h.render(120, 40).contains(" sandbox · clock +61 s "));
    // Twice: the same result (the seed is not consumed).
    h.press("<F5>");
    assert_eq!(
        h.app.last_run.as_ref().unwrap().report.reply,
        limiter_reply(1, 9, 60)
    );
    // = resets the clock: the seed key is back with its 60 s.
    h.keys("<A-3> =");
    assert_eq!(h.app.status, "run clock reset to the seed's time");
    h.press("<F5>");
    assert_eq!(
        h.app.last_run.as_ref().unwrap().report.reply,
        limiter_reply(1, 6, 60)
    );
    assert!(h.render(120, 40).contains(" sandbox "));
}

#[test]
fn keep_state_lets_a_rate_limiter_deny_the_eleventh_call() {
    common::isolate_app_dirs();
    let mut h = Harness::new(RATE_LIMITER, &["ratelimit:bob"], &["10", "60"], "");
    h.keys("<A-3> K");
    assert_eq!(
        h.app.status,
        "keep state on: each run starts from the last run's keyspace (K again returns to the seed)"
    );
    for call in 1..=10 {
        h.press("<F5>");
        assert_eq!(
            h.app.last_run.as_ref().unwrap().report.reply,
            limiter_reply(1, 10 - call, 60),
            "call {call}"
        );
    }
    h.press("<F5>");
    assert_eq!(
        h.app.last_run.as_ref().unwrap().report.reply,
        limiter_reply(0, 0, 60),
        "the 11th call is denied"
    );
    assert!(h.render(120, 40).contains(" sandbox · keep state "));
    // The window passes: allowed again, and the state goes on from there.
    h.keys("<A-3> + <Backspace> <Backspace>").type_text("60\n");
    h.press("<F5>");
    assert_eq!(
        h.app.last_run.as_ref().unwrap().report.reply,
        limiter_reply(1, 9, 60)
    );
    h.press("<F5>");
    assert_eq!(
        h.app.last_run.as_ref().unwrap().report.reply,
        limiter_reply(1, 8, 60)
    );
    // K again: back to the seed from before (empty): the first call of a window.
    h.keys("<A-3> K");
    assert_eq!(
        h.app.status,
        "keep state off: runs start from the seed again (Ctrl-Z returns to the last run's keyspace)"
    );
    h.press("<F5>");
    assert_eq!(
        h.app.last_run.as_ref().unwrap().report.reply,
        limiter_reply(1, 9, 60)
    );
}

/// A compile error is marked at its line like a runtime error and listed in Warnings; once the
/// buffer changes after the run, the marker is dimmed and labelled stale.
#[test]
fn compile_errors_are_marked_and_markers_turn_stale_after_an_edit() {
    common::isolate_app_dirs();
    let mut h = Harness::new("local a = 1\nreturn a +\n", &[], &[], "");
    h.press("<F5>");
    let run = h.app.last_run.as_ref().unwrap();
    assert_eq!(
        run.report.reply,
        Reply::Error(
            "ERR Error compiling script (new function): user_script:3: unexpected symbol near '<eof>'"
                .into()
        )
    );
    assert_eq!(run.report.error_line, Some(3));
    assert_eq!(h.app.editor.error.as_ref().map(|(l, _)| *l), Some(3));
    let screen = h.render(200, 60);
    assert!(
        screen.contains(" ✗ line 3: compile error: unexpected symbol near '<eof>' "),
        "{screen}"
    );
    assert!(
        screen.contains("3   ◀ compile error: unexpected symbol near '<eof>'"),
        "{screen}"
    );
    assert!(screen.contains("4 Warnings (1)"), "{screen}");
    h.press("<A-4>");
    let screen = h.render(120, 40);
    assert!(
        screen.contains("[compile-error] line 3: (error) ERR Error compiling "),
        "{screen}"
    );
    assert!(!screen.contains("stale"), "{screen}");

    // An edit after the run: the marker and the trace are labelled stale.
    h.press("<F6>");
    assert_eq!(h.app.focus, evalbench::tui::app::Focus::Editor);
    h.type_text("x");
    let screen = h.render(200, 60);
    assert!(
        screen.contains("3   ◀ (stale) compile error: unexpected symbol near '<eof>'"),
        "{screen}"
    );
    assert!(
        screen.contains(" ✗ line 3 (stale: edited since the run): compile error: unexpected"),
        "{screen}"
    );
    h.press("<A-1>");
    assert!(h
        .render(120, 40)
        .contains("Trace (stale: edited since the run)"));
}
