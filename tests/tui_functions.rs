//! Functions in the workbench's form: a library buffer (`#!lua name=`) lists the functions
//! it registers, Alt-F picks one, F5 calls it with FCALL (FCALL_RO for a no-writes function) on the
//! form's KEYS and ARGV in the sandbox, with the trace and reply as for a script.
#![cfg(feature = "tui")]

mod common;

use evalbench::engine::reply::Reply;
use evalbench::tui::harness::Harness;

const LIBRARY: &str = include_str!("../samples/counter_library.lua");

#[test]
fn the_form_calls_the_chosen_function_of_a_library() {
    let mut h = Harness::new(
        LIBRARY,
        &["counter:page"],
        &["5"],
        r#"{"counter:page": "10"}"#,
    );
    let screen = h.render(200, 40);
    assert!(
        screen.contains("─KEYS (1) slot counter:page→13456─"),
        "{screen}"
    );
    assert!(
        screen.contains("─ FCALL counter_incr · 1/2 of 'counters' · Alt-F │"),
        "{screen}"
    );
    // Narrower: the command and the name alone.
    let screen = h.render(120, 40);
    assert!(
        screen.contains("─KEYS (1) slot counter:page→13456─"),
        "{screen}"
    );
    assert!(screen.contains("─ FCALL counter_incr │"), "{screen}");

    // F5: FCALL counter_incr counter:page 5, traced.
    h.press("<F5>");
    let run = h.app.last_run.as_ref().expect("a run");
    assert_eq!(run.report.reply, Reply::Int(15));
    assert_eq!(run.report.trace.len(), 1);
    assert_eq!(
        run.report.trace[0].command,
        vec![b"INCRBY".to_vec(), b"counter:page".to_vec(), b"5".to_vec()]
    );
    assert!(run.report.trace[0].write);

    // Alt-F: the next function, with its flags; F5 calls it with FCALL_RO.
    h.press("<A-f>");
    assert_eq!(
        h.app.status,
        "FCALL_RO counter_get [no-writes] · 2/2 of 'counters'"
    );
    assert!(h
        .render(200, 40)
        .contains(" FCALL_RO counter_get [no-writes] · 2/2 of 'counters' · Alt-F "));
    h.press("<F5>");
    let run = h.app.last_run.as_ref().expect("a run");
    assert_eq!(run.report.reply, Reply::Int(10));
    assert!(!run.report.trace[0].write);
    // Around the list and back.
    h.press("<A-f>");
    assert_eq!(h.app.status, "FCALL counter_incr · 1/2 of 'counters'");
}

#[test]
fn a_library_that_does_not_load_is_said_and_not_run() {
    let mut h = Harness::new("#!lua name=empty\nlocal x = 1\n", &[], &[], "");
    assert!(h
        .render(200, 40)
        .contains(" library 'empty': FUNCTION LOAD failed: ERR No functions registered · Alt-F "));
    assert!(h
        .render(100, 40)
        .contains(" FUNCTION LOAD failed (F5 says why) "));
    h.press("<F5>");
    assert!(h.app.last_run.is_none());
    assert_eq!(
        h.app.status,
        "library 'empty': FUNCTION LOAD failed: ERR No functions registered"
    );

    // A plain script: Alt-F says F5 runs it with EVAL, and the form shows no function.
    let mut h = Harness::new("return 1", &[], &[], "");
    h.press("<A-f>");
    assert_eq!(
        h.app.status,
        "the editor holds a script, not a function library (#!lua name=...): F5 runs it with EVAL"
    );
    assert!(!h.render(120, 40).contains("Alt-F"));
    h.press("<F5>");
    assert_eq!(h.app.last_run.as_ref().unwrap().report.reply, Reply::Int(1));
}

#[test]
fn the_compact_form_names_the_call_too() {
    let h = Harness::new(LIBRARY, &["counter:page"], &["5"], "");
    // 80x24: KEYS and ARGV share one row; the call and the count, then the keys.
    let screen = h.render(80, 24);
    assert!(
        screen.contains("FCALL counter_incr · KEYS (1) counter:page"),
        "{screen}"
    );
    let screen = h.render(80, 30);
    assert!(
        screen.contains("FCALL counter_incr · KEYS (1) slot 13456 counter:page"),
        "{screen}"
    );
}

/// A library and its sidecar in a temporary folder of their own.
fn library_file(name: &str, sidecar: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.lua"));
    std::fs::write(&path, LIBRARY).unwrap();
    std::fs::write(dir.path().join(format!("{name}.json")), sidecar).unwrap();
    (dir, path)
}

#[test]
fn the_sidecars_function_is_the_forms() {
    common::isolate_app_dirs();
    let (dir, path) = library_file(
        "reader",
        r#"{"function": "counter_get", "keys": ["counter:page"], "keyspace": {"counter:page": "7"}}"#,
    );
    let mut h = Harness::new("return 1", &[], &[], "");
    h.app.open_file(path.clone());
    h.settle(); // the event loop's housekeeping after the open
    assert_eq!(h.app.status, format!("opened {}", path.display()));
    assert_eq!(h.app.form_function.chosen(), Some("counter_get"));
    assert!(h
        .render(200, 40)
        .contains(" FCALL_RO counter_get [no-writes] · 2/2 of 'counters' · Alt-F "));
    h.press("<F5>");
    let run = h.app.last_run.as_ref().expect("a run");
    assert_eq!(run.report.reply, Reply::Int(7));
    assert!(!run.report.trace[0].write);

    // Alt-F, Ctrl-S: the sidecar keeps the form's choice.
    h.press("<A-f>").press("<C-s>");
    let car: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("reader.json")).unwrap())
            .unwrap();
    assert_eq!(car["function"], "counter_incr");
    assert_eq!(car["keys"], serde_json::json!(["counter:page"]));
}

#[test]
fn a_sidecar_function_the_library_lacks_is_said() {
    common::isolate_app_dirs();
    let (_dir, path) = library_file("missing", r#"{"function": "counter_reset"}"#);
    let mut h = Harness::new("return 1", &[], &[], "");
    h.app.open_file(path.clone());
    h.settle(); // the event loop's housekeeping after the open
    assert_eq!(
        h.app.status,
        format!(
            "opened {}; the sidecar's function 'counter_reset' is not registered by the library: F5 calls 'counter_incr' (Alt-F picks another)",
            path.display()
        )
    );
    assert_eq!(h.app.form_function.chosen(), Some("counter_incr"));
}

#[test]
fn the_bundled_library_sample_shows_functions() {
    common::isolate_app_dirs();
    let mut h = Harness::new("return 1", &[], &[], "");
    // Built into the binary (the picker lists it where there is no samples/ folder).
    h.app.open_file("embedded:counter_library.lua".into());
    h.settle();
    assert_eq!(
        h.app.status,
        "opened a built-in sample; Ctrl-S saves a copy"
    );
    let screen = h.render(200, 40);
    assert!(
        screen.contains("─KEYS (1) slot counter:page→13456─"),
        "{screen}"
    );
    assert!(
        screen.contains(" FCALL counter_incr · 1/2 of 'counters' · Alt-F "),
        "{screen}"
    );
    h.press("<F5>");
    assert_eq!(
        h.app.last_run.as_ref().expect("a run").report.reply,
        Reply::Int(15)
    );
}
