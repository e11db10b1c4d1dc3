//! Nothing is lost: a save never replaces or merges a file evalbench did not write without
//! asking; KEYS/ARGV, the seed, breakpoints and watches are the buffer's changes (marked, asked
//! about on quit, saved in the sidecar, undone by Ctrl-Z in the order they were made); a seed key
//! deleted with `d` comes back with Ctrl-Z; each buffer has its own autosave; and nothing of one
//! file's state (clock, keep state, watches, console) leaks into the next one opened.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::app::{Confirm, Overlay};
use evalbench::tui::files::{self, Slot};
use evalbench::tui::harness::Harness;
use std::path::Path;

fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("evalbench-lost-{name}-"))
        .tempdir()
        .unwrap()
}

fn text(h: &Harness) -> String {
    h.app.editor.textarea.lines().join("\n")
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Ctrl-S of an untitled script, typed name `path`.
fn save_as(h: &mut Harness, path: &Path) {
    h.press("<C-s>");
    h.type_text(&format!("{}\n", path.display()));
}

#[test]
fn a_new_script_never_replaces_an_unrelated_json_beside_it_without_asking() {
    common::isolate_app_dirs();
    let dir_tmp = temp_dir("foreign");
    let dir = dir_tmp.path().to_path_buf();
    let notes = dir.join("notes.json");
    let mine = "{\"todo\": [\"buy milk\"], \"done\": []}\n";
    std::fs::write(&notes, mine).unwrap();
    let script = dir.join("notes.lua");
    let mut h = Harness::new("return 1", &["k"], &[], "");
    save_as(&mut h, &script);
    assert!(matches!(
        &h.app.overlay,
        Some(Overlay::Confirm(Confirm::ForeignSidecar { script: s, .. })) if *s == script
    ));
    assert_eq!(
        h.app.status,
        format!(
            "not saved yet: {}: not an evalbench sidecar (it has fields \"todo\", \"done\"). o overwrites it with the sidecar, s saves the script only, Esc cancels",
            notes.display()
        )
    );
    // The dialog's text, its rows joined (where it wraps depends on the path's length).
    let screen = h.render(100, 30);
    let dialog: Vec<&str> = screen
        .lines()
        .filter_map(|row| {
            let (start, end) = (row.find('┃')?, row.rfind('┃')?);
            (end > start).then(|| row[start + '┃'.len_utf8()..end].trim())
        })
        .collect();
    assert!(
        dialog.join(" ").contains(
            "Saving notes.lua would replace it with its sidecar. o overwrites it, s saves the script only (that file stays as it is), Esc cancels."
        ),
        "{screen}"
    );
    // Any other key is not an answer: it says which are.
    h.press("y");
    assert_eq!(
        h.app.status,
        "o overwrites that file with the sidecar, s saves the script only, Esc cancels"
    );
    // Esc: nothing written, the buffer stays untitled.
    h.press("<Esc>");
    assert!(h.app.overlay.is_none());
    assert_eq!(
        h.app.status,
        format!(
            "not saved: nothing was written ({} stays as it is)",
            notes.display()
        )
    );
    assert!(!script.exists());
    assert_eq!(h.app.editor.path, None);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), mine);

    // s: the script alone; the choice holds for the next saves of this buffer.
    save_as(&mut h, &script);
    h.press("s");
    assert_eq!(
        h.app.status,
        format!(
            "saved {} without its sidecar (notes.json stays as it is)",
            script.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&script).unwrap(), "return 1");
    assert_eq!(h.app.editor.path.as_deref(), Some(script.as_path()));
    assert!(!h.app.editor.modified);
    h.keys("<End> 2 <C-s>");
    assert!(h.app.overlay.is_none());
    assert_eq!(std::fs::read_to_string(&script).unwrap(), "return 12");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), mine);

    // An existing data.json is not merged into: o replaces it, as the user said.
    let data = dir.join("data.json");
    std::fs::write(&data, "{\"users\": 3}").unwrap();
    let mut h = Harness::new("return 2", &["k1"], &["a"], "");
    save_as(&mut h, &dir.join("data.lua"));
    assert!(matches!(
        h.app.overlay,
        Some(Overlay::Confirm(Confirm::ForeignSidecar { .. }))
    ));
    h.press("o");
    assert_eq!(
        h.app.status,
        format!("saved {} and its sidecar", dir.join("data.lua").display())
    );
    assert_eq!(
        json(&data),
        serde_json::json!({"keys": ["k1"], "argv": ["a"], "keyspace": {}})
    );
}

#[test]
fn an_evalbench_sidecar_is_updated_without_asking() {
    common::isolate_app_dirs();
    let dir_tmp = temp_dir("ours");
    let dir = dir_tmp.path().to_path_buf();
    let script = dir.join("mine.lua");
    std::fs::write(&script, "return 1").unwrap();
    let car = dir.join("mine.json");
    std::fs::write(
        &car,
        r#"{"description": "mine", "keys": ["old"], "argv": []}"#,
    )
    .unwrap();
    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(script.clone());
    // F6: the KEYS field; its text is replaced.
    h.keys("<F6> <End> <Backspace> <Backspace> <Backspace>")
        .type_text("new");
    h.press("<C-s>");
    assert!(h.app.overlay.is_none());
    assert_eq!(
        json(&car),
        serde_json::json!({"description": "mine", "keys": ["new"], "argv": [], "keyspace": {}})
    );
    files::release_autosave(Slot::File(&script));
}

/// KEYS typed: the buffer is modified (`*`), Ctrl-Q asks, Ctrl-S writes them to the sidecar.
#[test]
fn form_edits_mark_the_buffer_ask_on_quit_and_are_saved() {
    common::isolate_app_dirs();
    let dir_tmp = temp_dir("form");
    let dir = dir_tmp.path().to_path_buf();
    let script = dir.join("form.lua");
    std::fs::write(&script, "return ARGV[1]").unwrap();
    std::fs::write(dir.join("form.json"), r#"{"keys": [], "argv": ["1"]}"#).unwrap();
    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(script.clone());
    assert!(!h.app.editor.modified);
    h.keys("<F6> <F6> <End>").type_text(" 2");
    assert!(h.app.editor.modified);
    let title = format!("{} *", script.display());
    assert!(h.render(120, 30).contains(&title));
    h.press("<C-q>");
    assert!(matches!(
        h.app.overlay,
        Some(Overlay::Confirm(Confirm::QuitUnsaved))
    ));
    h.press("n");
    assert!(!h.app.quit);
    h.press("<C-s>");
    assert!(!h.app.editor.modified);
    assert!(!h.render(120, 30).contains(&title));
    assert_eq!(
        json(&dir.join("form.json"))["argv"],
        serde_json::json!(["1", "2"])
    );
    h.press("<C-q>");
    assert!(h.app.quit, "nothing unsaved: no question");
    files::release_autosave(Slot::File(&script));
}

/// `d` in the Keyspace tab deletes a seed key; the status says how to undo it and Ctrl-Z brings
/// it back (Ctrl-Y deletes it again). The delete is an unsaved change.
#[test]
fn a_seed_key_deleted_with_d_comes_back_with_ctrl_z() {
    common::isolate_app_dirs();
    let seed = r#"{"a": {"type": "string", "value": "1"}, "b": {"type": "string", "value": "2"}}"#;
    let mut h = Harness::new("return 1", &[], &[], seed);
    h.keys("<A-3> d");
    assert_eq!(h.app.status, "deleted 'a' from the seed (Ctrl-Z undoes it)");
    assert!(!h.app.seed.contains(b"a", h.app.seed_now_ms));
    assert!(h.app.editor.modified);
    h.press("<C-z>");
    assert_eq!(
        h.app.status,
        "undone: deleted 'a' from the seed (Ctrl-Y redoes it)"
    );
    assert!(h.app.seed.contains(b"a", h.app.seed_now_ms));
    assert!(h.render(100, 30).contains("a"));
    h.press("<C-y>");
    assert_eq!(
        h.app.status,
        "redone: deleted 'a' from the seed (Ctrl-Z undoes it)"
    );
    assert!(!h.app.seed.contains(b"a", h.app.seed_now_ms));
    assert!(h.app.seed.contains(b"b", h.app.seed_now_ms));
    // The clock reset is undone the same way.
    h.press("+");
    h.type_text("30\n");
    assert_eq!(h.app.clock_offset_ms, 30_000);
    h.press("=");
    assert_eq!(h.app.clock_offset_ms, 0);
    h.press("<C-z>");
    assert_eq!(
        h.app.status,
        "undone: reset the run clock (Ctrl-Y redoes it)"
    );
    assert_eq!(h.app.clock_offset_ms, 30_000);
}

/// One history for the buffer: Ctrl-Z undoes its last change whatever it was (text, KEYS, seed),
/// in the order they were made; Ctrl-Y redoes them in order.
#[test]
fn ctrl_z_undoes_the_buffers_changes_in_the_order_they_were_made() {
    common::isolate_app_dirs();
    let seed = r#"{"a": {"type": "string", "value": "1"}}"#;
    let mut h = Harness::new("return 1", &["k1"], &[], seed);
    h.keys("<End>").paste(" + 1"); // text
    h.keys("<F6> <End>").type_text(" k2"); // KEYS, one step for the word typed
    h.keys("<A-3> d"); // seed
    h.keys("<F6>"); // back to the editor (F6 from the panes goes round)
    assert_eq!(h.app.focus, evalbench::tui::app::Focus::Editor);
    h.keys("<End>").paste(" -- x"); // text again
    let keys = |h: &Harness| h.app.inputs.keys_text();
    h.press("<C-z>");
    assert_eq!(text(&h), "return 1 + 1");
    h.press("<C-z>");
    assert!(h.app.seed.contains(b"a", h.app.seed_now_ms));
    assert_eq!(text(&h), "return 1 + 1");
    h.press("<C-z>");
    assert_eq!(keys(&h), "k1");
    assert_eq!(h.app.status, "undone: KEYS edit (Ctrl-Y redoes it)");
    h.press("<C-z>");
    assert_eq!(text(&h), "return 1");
    assert_eq!(keys(&h), "k1");
    h.keys("<C-y> <C-y>");
    assert_eq!(text(&h), "return 1 + 1");
    assert_eq!(keys(&h), "k1 k2");
    assert!(h.app.seed.contains(b"a", h.app.seed_now_ms));
    h.keys("<C-y> <C-y>");
    assert!(!h.app.seed.contains(b"a", h.app.seed_now_ms));
    assert_eq!(text(&h), "return 1 + 1 -- x");
}

/// Breakpoints and watches are the script's: a change marks it, Ctrl-S keeps them in the
/// sidecar, opening the script again brings them back.
#[test]
fn breakpoints_and_watches_are_saved_with_the_script() {
    common::isolate_app_dirs();
    let dir_tmp = temp_dir("breaks");
    let dir = dir_tmp.path().to_path_buf();
    let script = dir.join("bp.lua");
    std::fs::write(&script, "local a = 1\nlocal b = 2\nreturn a + b\n").unwrap();
    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(script.clone());
    h.keys("<Down> <F9>");
    assert_eq!(h.app.debugger.breakpoints.len(), 1);
    assert!(h.app.editor.modified);
    h.keys("<A-6> w").type_text("a + 1\n");
    assert_eq!(h.app.debugger.watches, vec!["a + 1".to_string()]);
    h.press("<C-s>");
    assert!(!h.app.editor.modified, "{}", h.app.status);
    let car = json(&dir.join("bp.json"));
    assert_eq!(car["breakpoints"], serde_json::json!([{"line": 2}]));
    assert_eq!(car["watches"], serde_json::json!(["a + 1"]));
    // Ctrl-Z from the Debug tab: the watch goes; the breakpoint next.
    h.press("<C-z>");
    assert_eq!(h.app.status, "undone: watches (Ctrl-Y redoes it)");
    assert!(h.app.debugger.watches.is_empty());
    assert!(h.app.editor.modified);
    h.press("<C-z>");
    assert!(h.app.debugger.breakpoints.is_empty());

    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(script.clone());
    let lines: Vec<u32> = h.app.debugger.breakpoints.iter().map(|b| b.line).collect();
    assert_eq!(lines, vec![2]);
    assert_eq!(h.app.debugger.watches, vec!["a + 1".to_string()]);
    assert!(!h.app.editor.modified);
    files::release_autosave(Slot::File(&script));
}

/// The clock offset, keep state, watches and the debug console belong to the file they were set
/// on: opening another file starts from that file's own (its sidecar's, else none).
#[test]
fn opening_another_file_leaves_the_old_files_state_behind() {
    common::isolate_app_dirs();
    let dir_tmp = temp_dir("leaks");
    let dir = dir_tmp.path().to_path_buf();
    let one = dir.join("one.lua");
    let two = dir.join("two.lua");
    std::fs::write(&one, "return 1").unwrap();
    std::fs::write(&two, "return 2").unwrap();
    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(one.clone());
    h.keys("<A-3> K +")
        .keys("<Backspace> <Backspace>")
        .type_text("61\n");
    h.keys("<A-6> w").type_text("KEYS[1]\n");
    h.app.debugger.say(
        evalbench::tui::debug_engine::ConsoleKind::Note,
        "one's note",
    );
    assert!(h
        .render(120, 30)
        .contains(" sandbox · clock +61 s, keep state "));
    assert!(h.app.editor.modified);
    h.press("<C-s>");
    h.app.open_file(two.clone());
    assert_eq!(h.app.clock_offset_ms, 0);
    assert!(h.app.keep_state.is_none());
    assert!(h.app.debugger.watches.is_empty());
    assert!(h.app.debugger.console.is_empty());
    let screen = h.render(120, 30);
    assert!(screen.contains(" sandbox "), "{screen}");
    assert!(!screen.contains("clock +61"), "{screen}");
    // The first file is still open: opening it again shows that buffer, its own state with it.
    h.app.open_file(one.clone());
    assert_eq!(h.app.debugger.watches, vec!["KEYS[1]".to_string()]);
    assert_eq!(h.app.clock_offset_ms, 61_000);
    assert!(h.app.keep_state.is_some());
    files::release_autosave(Slot::File(&one));
    files::release_autosave(Slot::File(&two));
}

/// Each untitled buffer has an autosave of its own; saving it drops that autosave, so the saved
/// script is never offered for recovery; a new buffer does not see another's.
#[test]
fn each_untitled_buffer_has_its_own_autosave_dropped_once_saved() {
    common::isolate_app_dirs();
    let dir_tmp = temp_dir("untitled");
    let dir = dir_tmp.path().to_path_buf();
    let mut h = Harness::new("", &[], &[], "");
    h.type_text("return 'first'");
    h.app.autosave();
    let first = h.app.changes.id.clone();
    assert!(files::autosave_exists(Slot::Untitled(&first)));
    // Ctrl-N: a second buffer; the first stays open, its autosave with it.
    h.press("<C-n>");
    let second = h.app.changes.id.clone();
    assert_ne!(first, second);
    assert!(files::autosave_exists(Slot::Untitled(&first)));
    // Closed with its changes discarded: its autosave goes.
    h.keys("<C-PageUp> <C-w> d");
    assert_eq!(h.app.changes.id, second);
    assert!(!files::autosave_exists(Slot::Untitled(&first)));
    h.type_text("return 'second'");
    h.app.autosave();
    assert!(files::autosave_exists(Slot::Untitled(&second)));
    let path = dir.join("second.lua");
    save_as(&mut h, &path);
    assert_eq!(
        h.app.status,
        format!("saved {} and its sidecar", path.display())
    );
    assert!(!files::autosave_exists(Slot::Untitled(&second)));
    assert!(!files::autosave_exists(Slot::File(&path)));
    // A new session (untitled) offers nothing: the saved script is not recovered.
    let mut again = Harness::new("", &[], &[], "");
    again.app.offer_recovery();
    assert!(again.app.overlay.is_none(), "{}", again.app.status);
    files::release_autosave(Slot::File(&path));

    // An untitled buffer left by a crash (its lock let go, as the kernel does for a killed
    // process) is offered to the next untitled session, which carries it on under its id.
    let mut crashed = Harness::new("", &[], &[], "");
    crashed.type_text("return 'lost?'");
    crashed.app.autosave();
    let id = crashed.app.changes.id.clone();
    drop(crashed);
    files::release_autosave(Slot::Untitled(&id));
    let mut next = Harness::new("", &[], &[], "");
    next.app.offer_recovery();
    assert!(matches!(
        next.app.overlay,
        Some(Overlay::Confirm(Confirm::Recover))
    ));
    assert_eq!(
        next.app.status,
        "unsaved changes to an untitled script were autosaved: r recovers them, d discards them"
    );
    next.press("r");
    assert_eq!(text(&next), "return 'lost?'");
    assert_eq!(next.app.changes.id, id);
    assert!(next.app.editor.modified);
    let path = dir.join("found.lua");
    save_as(&mut next, &path);
    assert!(!files::autosave_exists(Slot::Untitled(&id)));
    files::release_autosave(Slot::File(&path));
}

fn seed_string(h: &Harness, key: &[u8]) -> Option<Vec<u8>> {
    match &h.app.seed.get(key, h.app.seed_now_ms)?.value {
        evalbench::engine::keyspace::Value::Str(s) => Some(s.clone()),
        _ => None,
    }
}

/// `r` (back to the seed) and K (keep state off) drop what the last runs made: the status says
/// so and Ctrl-Z brings it back.
#[test]
fn reset_and_keep_state_off_are_undone_by_ctrl_z() {
    common::isolate_app_dirs();
    let mut h = Harness::sample();
    h.press("<F5>");
    assert!(h.app.last_run.is_some());
    h.keys("<A-3> r");
    assert_eq!(
        h.app.status,
        "keyspace reset to the seed (Ctrl-Z brings the last run back)"
    );
    assert!(h.app.last_run.is_none());
    h.press("<C-z>");
    assert_eq!(
        h.app.status,
        "undone: reset the keyspace to the seed (Ctrl-Y redoes it)"
    );
    assert!(h.app.last_run.is_some());
    assert!(!h.app.editor.modified, "the run is not the script's state");

    // Keep state: a run chains the seed (the counter 3 → 4); K off returns to the seed.
    h.press("K");
    h.press("<F5>");
    assert_eq!(seed_string(&h, b"ratelimit:alice:42"), Some(b"4".to_vec()));
    h.press("K");
    assert_eq!(
        h.app.status,
        "keep state off: runs start from the seed again (Ctrl-Z returns to the last run's keyspace)"
    );
    assert_eq!(seed_string(&h, b"ratelimit:alice:42"), Some(b"3".to_vec()));
    assert!(h.app.keep_state.is_none());
    h.press("<C-z>");
    assert_eq!(h.app.status, "undone: keep state off (Ctrl-Y redoes it)");
    assert_eq!(seed_string(&h, b"ratelimit:alice:42"), Some(b"4".to_vec()));
    assert!(h.app.keep_state.is_some());
    assert!(h.render(120, 40).contains(" sandbox · keep state "));
}

/// A key copied from a live server into the seed (a hash of 5,000 fields) is a change of the
/// buffer: marked, and undone by Ctrl-Z.
#[test]
fn a_key_copied_from_the_server_is_undone_by_ctrl_z() {
    let Some(server) = common::RedisServer::start() else {
        return;
    };
    common::isolate_app_dirs();
    let mut conn = server.connect();
    let mut hset = vec![b"HSET".to_vec(), b"big".to_vec()];
    for i in 0..5000 {
        hset.push(format!("f{i}").into_bytes());
        hset.push(format!("v{i}").into_bytes());
    }
    conn.pipeline(&[hset]);
    let target = evalbench::engine::live::TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..Default::default()
    }
    .resolve()
    .expect("target");
    let mut h = Harness::new("return 1", &[], &[], "")
        .with_live(target, "redis 7.0.15 test-server")
        .expect("connect");
    h.keys("<A-5> c");
    assert!(
        h.app.status.starts_with("copied 'big' to the sandbox seed"),
        "{}",
        h.app.status
    );
    assert!(h.app.editor.modified);
    assert!(h.app.seed.contains(b"big", h.app.seed_now_ms));
    h.press("<C-z>");
    assert_eq!(
        h.app.status,
        "undone: copied a key from the server to the seed (Ctrl-Y redoes it)"
    );
    assert!(!h.app.seed.contains(b"big", h.app.seed_now_ms));
    h.press("<C-y>");
    match &h.app.seed.get(b"big", h.app.seed_now_ms).unwrap().value {
        evalbench::engine::keyspace::Value::Hash(hash) => assert_eq!(hash.len(), 5000),
        _ => panic!("not a hash"),
    }
}
