//! A live server's function library in the workbench, driven by keys through the
//! synchronous harness against a redis-server the test starts: the Server overview lists the
//! libraries, Up/Down pick one (its functions with flags and description), Enter or `o` opens it
//! read-only in the editor (FUNCTION LIST WITHCODE LIBRARYNAME); every edit is refused with the
//! reason, movement, selection, copy, search and the sandbox run work; unsaved changes are never
//! dropped without a y/n; Ctrl-S saves an editable copy.
#![cfg(feature = "tui")]

mod common;

use common::RedisServer;
use evalbench::engine::live::TargetSpec;
use evalbench::engine::reply::Reply;
use evalbench::tui::app::{Confirm, Focus, Overlay, Tab};
use evalbench::tui::harness::Harness;

const LIBRARY: &str = include_str!("../samples/counter_library.lua");
const OTHER: &str = "#!lua name=audit\nredis.register_function('audit_log', function(keys, args) return redis.call('RPUSH', keys[1], args[1]) end)\n";

fn workbench(server: &RedisServer, script: &str) -> Harness {
    common::isolate_app_dirs();
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..TargetSpec::default()
    }
    .resolve()
    .expect("target");
    Harness::new(
        script,
        &["counter:page"],
        &["5"],
        r#"{"counter:page": "10"}"#,
    )
    .with_live(target, "redis 7.0.15 test-server")
    .expect("connect")
}

fn server_with_libraries() -> Option<RedisServer> {
    let server = RedisServer::start()?;
    let mut conn = server.connect();
    assert_eq!(
        conn.cmd(&["FUNCTION", "LOAD", LIBRARY]),
        Reply::bulk("counters")
    );
    assert_eq!(conn.cmd(&["FUNCTION", "LOAD", OTHER]), Reply::bulk("audit"));
    Some(server)
}

/// Alt-5, i: the overview; Down to `counters` (the list is sorted: audit, counters).
fn pick_counters(h: &mut Harness) {
    h.press("<A-5>").press("i");
    assert_eq!(h.app.tab, Tab::Server);
    h.press("<Down>");
    assert_eq!(
        h.app.status,
        "library 'counters' (2 of 2, 2 functions): Enter or o opens it read-only in the editor"
    );
}

#[test]
fn a_server_library_opens_read_only_from_the_overview() {
    let Some(server) = server_with_libraries() else {
        return;
    };
    let mut h = workbench(&server, "return 1");
    pick_counters(&mut h);
    let screen = h.render(200, 40);
    // The selected library lists its functions with flags and description.
    assert!(screen.contains("┃audit: audit_log"), "{screen}");
    assert!(
        screen.contains("┃counters: counter_get [no-writes], counter_incr"),
        "{screen}"
    );
    assert!(
        screen.contains("┃  counter_get [no-writes]: the counter, 0 when it does not exist"),
        "{screen}"
    );
    assert!(screen.contains("┃  counter_incr "), "{screen}");
    assert!(!screen.contains("┃  audit_log"), "{screen}");
    assert!(
        screen.contains("i: keys · ↑↓ Enter: open a library"),
        "{screen}"
    );

    // Enter: the library's code, read-only in the editor, the form offering its functions.
    h.press("<Enter>");
    assert_eq!(h.app.editor.bytes(), LIBRARY.as_bytes());
    assert_eq!(h.app.focus, Focus::Editor);
    assert_eq!(
        h.app.status,
        "opened server library 'counters' read-only (FCALL counter_incr · 1/2 of 'counters': F5 calls it on the server (guarded), Alt-F picks another); Ctrl-S saves an editable copy"
    );
    let screen = h.render(200, 40);
    assert!(
        screen.contains("[read-only] server library 'counters' (redis 7.0.15 test-server)"),
        "{screen}"
    );
    assert!(
        screen.contains(" [read-only] library 'counters' "),
        "{screen}"
    );
    assert!(
        screen.contains(" FCALL counter_incr · 1/2 of 'counters' · Alt-F "),
        "{screen}"
    );

    // Every edit is refused, with where the buffer came from and what to do.
    let refused = "read-only: server library 'counters' (redis 7.0.15 test-server) — Ctrl-S saves an editable copy";
    for key in [
        "x",
        "<Enter>",
        "<Tab>",
        "<BackTab>",
        "<Backspace>",
        "<C-Backspace>",
        "<Del>",
        "<C-z>",
        "<C-y>",
        "<C-v>",
        "<C-x>",
        "<C-/>",
    ] {
        h.app.status.clear();
        h.press(key);
        assert_eq!(h.app.status, refused, "key {key}");
        assert_eq!(h.app.editor.bytes(), LIBRARY.as_bytes(), "key {key}");
    }
    h.app.status.clear();
    h.paste("return 2");
    assert_eq!(h.app.status, refused);
    assert_eq!(h.app.editor.bytes(), LIBRARY.as_bytes());
    assert!(!h.app.editor.modified);

    // Movement, selection and copy work.
    h.press("<C-Home>").press("<S-End>");
    h.press("<C-c>");
    assert_eq!(
        h.app.status,
        "copied 19 bytes (to the system clipboard too)"
    );
    assert_eq!(h.clipboard.last().unwrap(), b"#!lua name=counters");
    h.press("<Down>").press("<Down>");
    assert_eq!(h.app.editor.textarea.cursor().0, 2);
    // Search too (literal: the brace is a brace).
    h.press("<C-f>")
        .type_text("register_function{")
        .press("<Enter>");
    assert_eq!(h.app.status, "match 1/1 of 'register_function{'");
    assert_eq!(h.app.editor.textarea.cursor().0, 26);

    // F7: runs go to the sandbox; F5 calls the form's function there on the form's KEYS/ARGV.
    h.press("<F7>");
    h.press("<F5>");
    let run = h.app.last_run.as_ref().expect("a run");
    assert_eq!(run.report.reply, Reply::Int(15));
    assert_eq!(
        run.report.trace[0].command,
        vec![b"INCRBY".to_vec(), b"counter:page".to_vec(), b"5".to_vec()]
    );
    assert_eq!(h.app.editor.bytes(), LIBRARY.as_bytes());

    // The debugger: a breakpoint (not an edit) in the function's body, F5 stops there.
    h.app.editor.goto_line(24);
    h.press("<F9>");
    assert_eq!(h.app.status, "breakpoint at line 24");
    h.press("<F5>");
    assert_eq!(h.app.debugger.paused_line(), Some(24));
    h.press("<S-F5>");
    assert!(h.app.debugger.session.is_none());
    assert_eq!(h.app.editor.bytes(), LIBRARY.as_bytes());
    assert!(h.app.editor.read_only.is_some());
}

#[test]
fn unsaved_changes_are_kept_unless_the_user_agrees() {
    let Some(server) = server_with_libraries() else {
        return;
    };
    let mut h = workbench(&server, "return 1");
    // The user's own script, edited and not saved.
    h.press("<C-End>").type_text(" + 1");
    assert!(h.app.editor.modified);
    pick_counters(&mut h);
    h.press("o");
    assert!(
        matches!(
            &h.app.overlay,
            Some(Overlay::Confirm(Confirm::OpenServerLibrary { name, .. })) if name == "counters"
        ),
        "{}",
        h.app.status
    );
    let screen = h.render(200, 40);
    assert!(
        screen.contains("The script has unsaved changes. Open server library 'counters'"),
        "{screen}"
    );
    // n: the user's script stays, unchanged and still marked unsaved.
    h.press("n");
    assert!(h.app.overlay.is_none());
    assert_eq!(h.app.editor.text(), "return 1 + 1");
    assert!(h.app.editor.modified);
    assert!(h.app.editor.read_only.is_none());
    // y: the library replaces it.
    h.press("o").press("y");
    assert_eq!(h.app.editor.bytes(), LIBRARY.as_bytes());
    assert_eq!(
        h.app.editor.read_only.as_ref().map(|r| r.library.as_str()),
        Some("counters")
    );
}

#[test]
fn ctrl_s_saves_an_editable_copy() {
    let Some(server) = server_with_libraries() else {
        return;
    };
    let mut h = workbench(&server, "return 1");
    pick_counters(&mut h);
    h.press("<Enter>");
    h.press("<C-s>");
    let Some(Overlay::Prompt(prompt)) = &h.app.overlay else {
        panic!("a save prompt, not {:?}", h.app.status);
    };
    assert_eq!(
        prompt.title,
        "server library 'counters' (redis 7.0.15 test-server) is read-only: save an editable copy as"
    );
    assert_eq!(prompt.input, "counters.lua");
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let path = dir.join("counters.lua");
    let _ = std::fs::remove_file(&path);
    // Typing replaces the prefilled name.
    h.type_text(&path.display().to_string()).press("<Enter>");
    assert_eq!(std::fs::read(&path).unwrap(), LIBRARY.as_bytes());
    assert_eq!(
        h.app.status,
        format!(
            "saved {} and its sidecar: an editable copy of server library 'counters' (redis 7.0.15 test-server) (the server's library is unchanged)",
            path.display()
        )
    );
    assert!(h.app.editor.read_only.is_none());
    // Editable now.
    h.press("<C-Home>").press("<End>").type_text("x");
    assert!(h.app.editor.text().starts_with("#!lua name=countersx\n"));
    assert!(h.app.editor.modified);
}

#[test]
fn a_library_gone_from_the_server_is_said() {
    let Some(server) = server_with_libraries() else {
        return;
    };
    let mut h = workbench(&server, "return 1");
    pick_counters(&mut h);
    let mut conn = server.connect();
    assert_eq!(conn.cmd(&["FUNCTION", "DELETE", "counters"]), Reply::ok());
    h.press("<Enter>");
    assert_eq!(
        h.app.status,
        "library 'counters' is no longer on the server (R reads the list again)"
    );
    assert_eq!(h.app.editor.text(), "return 1");
}

#[test]
fn the_selected_library_stays_in_view_in_a_long_list() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    for i in 0..40 {
        let code = format!(
            "#!lua name=lib{i:02}\nredis.register_function{{function_name='f{i:02}', callback=function() return {i} end, description='number {i}'}}\n"
        );
        assert_eq!(
            conn.cmd(&["FUNCTION", "LOAD", &code]),
            Reply::bulk(format!("lib{i:02}"))
        );
    }
    let mut h = workbench(&server, "return 1");
    h.press("<A-5>").press("i");
    let screen = h.render(200, 30);
    assert!(
        screen.contains("┃Function libraries (FUNCTION LIST): 40"),
        "{screen}"
    );
    assert!(screen.contains("┃  f00: number 0"), "{screen}");
    // End: the last library, scrolled into view with its function.
    h.press("<End>");
    assert_eq!(
        h.app.status,
        "library 'lib39' (40 of 40, 1 function): Enter or o opens it read-only in the editor"
    );
    let screen = h.render(200, 30);
    assert!(screen.contains("┃lib39: f39"), "{screen}");
    assert!(screen.contains("┃  f39: number 39"), "{screen}");
    assert!(!screen.contains("┃lib00: f00"), "{screen}");
    // Up ten: still in view; Home: the top again.
    h.keys("<Up> <Up> <Up> <Up> <Up> <Up> <Up> <Up> <Up> <Up>");
    let screen = h.render(200, 30);
    assert!(screen.contains("┃  f29: number 29"), "{screen}");
    h.press("<Home>");
    let screen = h.render(200, 30);
    assert!(
        screen.contains("┃Function libraries (FUNCTION LIST): 40"),
        "{screen}"
    );
    // o opens the selected one.
    h.press("<End>").press("o");
    assert_eq!(
        h.app.editor.read_only.as_ref().map(|r| r.library.as_str()),
        Some("lib39")
    );
}
