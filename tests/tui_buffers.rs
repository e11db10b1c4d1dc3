//! Several files open at once: opening a file adds a buffer (an open one is switched to),
//! Ctrl-PageDown / Ctrl-PageUp (Alt-. / Alt-,) switch, Alt-B lists them with `*` for unsaved,
//! Ctrl-W closes one (asking save / discard / cancel when unsaved), Ctrl-Q asks once for all of
//! them, and nothing of one buffer (form, seed, clock, keep state, debugger, run results) is
//! seen in another.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::app::{Confirm, Overlay};
use evalbench::tui::harness::Harness;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// Two scripts in a fresh folder: a.lua (a sidecar with KEYS and a seed key) and b.lua (none).
fn two_files() -> (TempDir, PathBuf, PathBuf) {
    common::isolate_app_dirs();
    let dir = TempDir::new().unwrap();
    let a = dir.path().join("a.lua");
    let b = dir.path().join("b.lua");
    std::fs::write(&a, "return redis.call('GET', KEYS[1])\n").unwrap();
    std::fs::write(
        dir.path().join("a.json"),
        r#"{"keys": ["ka"], "argv": [], "keyspace": {"ka": {"type": "string", "value": "from a"}}}"#,
    )
    .unwrap();
    std::fs::write(&b, "return ARGV[1]\n").unwrap();
    (dir, a, b)
}

/// The workbench started on an empty untitled buffer (as `evalbench tui FILE` does), then `a`
/// and `b` opened.
fn open_both(a: &Path, b: &Path) -> Harness {
    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(a.to_path_buf());
    h.app.open_file(b.to_path_buf());
    h
}

fn text(h: &Harness) -> String {
    h.app.editor.textarea.lines().join("\n")
}

/// The open dialog's text, its rows joined (where it wraps depends on the paths' length).
fn dialog(screen: &str) -> String {
    screen
        .lines()
        .filter_map(|row| {
            let (start, end) = (row.find('┃')?, row.rfind('┃')?);
            (end > start).then(|| row[start + '┃'.len_utf8()..end].trim().to_string())
        })
        .filter(|row| !row.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The editor pane's title row.
fn editor_title(h: &Harness) -> String {
    let screen = h.render(100, 30);
    screen
        .lines()
        .find(|l| l.contains(".lua") || l.contains("untitled"))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn opening_a_file_adds_a_buffer_and_opening_it_again_switches_to_it() {
    let (_dir, a, b) = two_files();
    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(a.clone());
    // The empty untitled buffer gave its place to the file: one buffer, no position shown.
    assert_eq!(h.app.buffers.len(), 1);
    assert!(editor_title(&h).contains(&format!("┏❯{}━", a.display())));
    h.app.open_file(b.clone());
    assert_eq!(h.app.buffers.len(), 2);
    assert_eq!(text(&h), "return ARGV[1]\n");
    assert_eq!(h.app.status, format!("opened {}", b.display()));
    assert!(
        editor_title(&h).contains(&format!("┏❯[2/2] {}━", b.display())),
        "{}",
        editor_title(&h)
    );
    // Ctrl-O with a's path: the open buffer is shown, not a second copy.
    h.press("<C-o>");
    h.type_text(&format!("{}\n", a.display()));
    assert_eq!(h.app.buffers.len(), 2);
    assert_eq!(text(&h), "return redis.call('GET', KEYS[1])\n");
    assert_eq!(
        h.app.status,
        format!(
            "{} is open already: buffer 1/2: {}",
            a.display(),
            a.display()
        )
    );
    assert!(editor_title(&h).contains(&format!("┏❯[1/2] {}━", a.display())));
}

#[test]
fn ctrl_pagedown_and_ctrl_pageup_go_round_the_buffers_and_alt_dot_comma_too() {
    let (_dir, a, b) = two_files();
    let mut h = Harness::new("", &[], &[], "");
    h.press("<C-PageDown>");
    assert_eq!(
        h.app.status,
        "only one buffer is open (Ctrl-O opens another file, Ctrl-N a new script)"
    );
    h.app.open_file(a.clone());
    h.app.open_file(b.clone());
    h.press("<C-n>"); // a third: untitled
    assert_eq!(h.app.buffers.len(), 3);
    assert_eq!(h.app.buffers.current(), 2);
    h.press("<C-PageDown>"); // round to the first
    assert_eq!(h.app.status, format!("buffer 1/3: {}", a.display()));
    h.press("<C-PageUp>");
    assert_eq!(h.app.status, "buffer 3/3: untitled");
    h.press("<A-,>");
    assert_eq!(h.app.status, format!("buffer 2/3: {}", b.display()));
    h.press("<A-.>");
    assert_eq!(h.app.status, "buffer 3/3: untitled");
    // From a pane too: the keys are global.
    h.press("<A-3>");
    h.press("<C-PageDown>");
    assert_eq!(text(&h), "return redis.call('GET', KEYS[1])\n");
}

#[test]
fn the_buffer_list_marks_unsaved_ones_and_enter_shows_the_chosen_one() {
    let (dir, a, b) = two_files();
    let mut h = open_both(&a, &b);
    h.type_text("-- edited\n");
    h.press("<A-b>");
    let screen = h.render(60, 12);
    let rows: Vec<&str> = screen
        .lines()
        .filter(|l| l.starts_with('┃') && l.contains(".lua"))
        .collect();
    // 58 columns inside the border: the shown one's mark, the number, the name, `*` if unsaved.
    assert_eq!(
        rows,
        [
            format!("┃  1 {:<54}┃", a.display().to_string()),
            format!("┃❯ 2 {:<54}┃", format!("{} *", b.display())),
        ],
        "{screen}"
    );
    assert!(screen.contains("Buffers — Enter shows, Ctrl-W closes, Esc"));
    h.keys("<Up> <Enter>");
    assert!(h.app.overlay.is_none());
    assert_eq!(text(&h), "return redis.call('GET', KEYS[1])\n");
    // b keeps its edit, and says so on the way back.
    h.press("<C-PageDown>");
    assert_eq!(h.app.status, format!("buffer 2/2: {} *", b.display()));
    assert_eq!(text(&h), "-- edited\nreturn ARGV[1]\n");
    drop(dir);
}

#[test]
fn ctrl_w_closes_a_saved_buffer_at_once_and_asks_for_an_unsaved_one() {
    let (_dir, a, b) = two_files();
    let mut h = open_both(&a, &b);
    h.press("<C-w>");
    assert_eq!(h.app.buffers.len(), 1);
    assert_eq!(
        h.app.status,
        format!("closed {}; buffer 1/1: {}", b.display(), a.display())
    );
    h.app.open_file(b.clone());
    h.type_text("-- mine\n");
    h.press("<C-w>");
    assert!(matches!(
        h.app.overlay,
        Some(Overlay::Confirm(Confirm::CloseUnsaved))
    ));
    assert_eq!(
        h.app.status,
        format!(
            "{} has unsaved changes: s saves it, d discards them, Esc keeps it open",
            b.display()
        )
    );
    assert_eq!(
        dialog(&h.render(100, 30)),
        format!(
            "{} has unsaved changes. s saves it and closes it, d discards the changes, Esc keeps it open.",
            b.display()
        )
    );
    // Esc: it stays, edits and all.
    h.press("<Esc>");
    assert_eq!(h.app.buffers.len(), 2);
    assert_eq!(text(&h), "-- mine\nreturn ARGV[1]\n");
    // s: saved, then closed.
    h.keys("<C-w> s");
    assert_eq!(h.app.buffers.len(), 1);
    assert_eq!(
        std::fs::read_to_string(&b).unwrap(),
        "-- mine\nreturn ARGV[1]\n"
    );
    assert_eq!(
        h.app.status,
        format!(
            "saved {} and its sidecar; closed {}; buffer 1/1: {}",
            b.display(),
            b.display(),
            a.display()
        )
    );
    // d: the changes go, the file stays as it was.
    h.app.open_file(b.clone());
    h.type_text("-- dropped\n");
    h.keys("<C-w> d");
    assert_eq!(h.app.buffers.len(), 1);
    assert_eq!(
        std::fs::read_to_string(&b).unwrap(),
        "-- mine\nreturn ARGV[1]\n"
    );
    // The last buffer closed: an empty new script, never no buffer at all.
    h.press("<C-w>");
    assert_eq!(h.app.buffers.len(), 1);
    assert_eq!(h.app.editor.path, None);
    assert_eq!(text(&h), "");
    assert_eq!(
        h.app.status,
        format!("closed {}: a new, empty script is open", a.display())
    );
}

#[test]
fn closing_an_untitled_buffer_with_save_asks_its_name_then_closes_it() {
    let (dir, a, _b) = two_files();
    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(a.clone());
    h.press("<C-n>");
    h.type_text("return 'new'");
    h.keys("<C-w> s");
    // The save asks for a name first; Esc there keeps the buffer open.
    assert!(matches!(h.app.overlay, Some(Overlay::Prompt(_))));
    h.press("<Esc>");
    assert_eq!(h.app.buffers.len(), 2);
    h.press("<Right>"); // a key later: the close is not still waiting for a save
    h.press("<C-s>");
    h.press("<C-u>");
    let named = dir.path().join("new.lua");
    h.type_text(&format!("{}\n", named.display()));
    assert_eq!(h.app.buffers.len(), 2, "{}", h.app.status);
    // Now with the name given inside the close question's save.
    h.press("<End>");
    h.type_text(" -- again");
    h.keys("<C-w> s");
    assert_eq!(h.app.buffers.len(), 1);
    assert_eq!(
        std::fs::read_to_string(&named).unwrap(),
        "return 'new' -- again"
    );
}

#[test]
fn ctrl_q_asks_once_naming_every_unsaved_buffer() {
    let (_dir, a, b) = two_files();
    let mut h = open_both(&a, &b);
    h.type_text("-- b\n");
    h.press("<C-PageUp>");
    h.type_text("-- a\n");
    h.press("<C-n>"); // an untitled one, untouched
    h.press("<C-q>");
    assert!(matches!(
        h.app.overlay,
        Some(Overlay::Confirm(Confirm::QuitUnsaved))
    ));
    assert_eq!(
        dialog(&h.render(120, 30)),
        format!(
            "2 buffers have unsaved changes: {}, {}. Quit anyway? (y/n)",
            a.display(),
            b.display()
        )
    );
    h.press("n");
    assert!(!h.app.quit);
    h.keys("<C-q> y");
    assert!(h.app.quit);
    assert_eq!(h.effects.last(), Some(&"quit"));
}

#[test]
fn ctrl_q_with_one_unsaved_buffer_among_several_names_it() {
    let (_dir, a, b) = two_files();
    let mut h = open_both(&a, &b);
    h.press("<C-PageUp>");
    h.type_text("-- a\n");
    h.press("<C-PageDown>");
    // The shown buffer is saved; another is not: still asked.
    assert!(!h.app.editor.modified);
    h.press("<C-q>");
    assert_eq!(
        dialog(&h.render(120, 30)),
        format!("{} has unsaved changes. Quit anyway? (y/n)", a.display())
    );
    assert!(!h.app.quit);
}

#[test]
fn switching_waits_for_a_debug_session_to_stop() {
    let (_dir, a, b) = two_files();
    let mut h = open_both(&a, &b);
    h.press("<F10>"); // a debug session of b
    assert!(h.app.debugger.session.is_some());
    h.press("<C-PageUp>");
    assert_eq!(
        h.app.status,
        "stop debugging first (Shift-F5): the session belongs to this buffer"
    );
    assert_eq!(h.app.buffers.current(), 1);
    h.press("<C-w>");
    assert_eq!(h.app.buffers.len(), 2);
    h.press("<S-F5>");
    h.press("<C-PageUp>");
    assert_eq!(h.app.buffers.current(), 0);
}

// Nothing leaks: each part of a buffer, set in a, is not in b, and is a's again on the way back.

/// a.lua shown with the given keys pressed on it, then b.lua opened.
fn set_in_a_then_open_b(keys: &str, typed: &str) -> (TempDir, PathBuf, PathBuf, Harness) {
    let (dir, a, b) = two_files();
    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(a.clone());
    h.keys(keys);
    if !typed.is_empty() {
        h.type_text(typed);
    }
    h.press("<Esc>");
    h.app.open_file(b.clone());
    assert_eq!(h.app.buffers.current(), 1);
    (dir, a, b, h)
}

#[test]
fn the_form_stays_with_its_buffer() {
    let (_dir, _a, _b, mut h) = set_in_a_then_open_b("<F6> <End>", " kb");
    assert_eq!(h.app.inputs.keys_text(), "");
    h.press("<C-PageUp>");
    assert_eq!(h.app.inputs.keys_text(), "ka kb");
}

#[test]
fn the_seed_stays_with_its_buffer() {
    let (_dir, _a, _b, mut h) = set_in_a_then_open_b("<A-3> a", "extra 1\n");
    assert!(h.app.seed.is_empty());
    let screen = h.render(100, 30);
    assert!(!screen.contains("from a"), "{screen}");
    h.press("<C-PageUp>");
    let now = h.app.seed_now_ms;
    let mut keys: Vec<String> = h
        .app
        .seed
        .keys(now)
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .collect();
    keys.sort();
    assert_eq!(keys, ["extra", "ka"]);
}

#[test]
fn the_run_clock_stays_with_its_buffer() {
    let (_dir, _a, _b, mut h) = set_in_a_then_open_b("<A-3> + <Enter>", "");
    assert_eq!(h.app.clock_offset_ms, 0);
    assert!(!h.app.backend_label().contains("clock"));
    h.press("<C-PageUp>");
    assert_eq!(h.app.clock_offset_ms, 60_000);
    assert_eq!(h.app.backend_label(), "sandbox · clock +60 s");
}

#[test]
fn keep_state_stays_with_its_buffer() {
    let (_dir, _a, _b, mut h) = set_in_a_then_open_b("<A-3> K", "");
    assert!(h.app.keep_state.is_none());
    assert_eq!(h.app.backend_label(), "sandbox");
    h.press("<C-PageUp>");
    assert!(h.app.keep_state.is_some());
    assert_eq!(h.app.backend_label(), "sandbox · keep state");
}

#[test]
fn breakpoints_watches_and_the_console_stay_with_their_buffer() {
    let (_dir, _a, _b, mut h) = set_in_a_then_open_b("<F9> <A-6> w", "KEYS[1]\n");
    assert!(h.app.debugger.breakpoints.is_empty());
    assert!(h.app.debugger.watches.is_empty());
    h.press("<C-PageUp>");
    assert_eq!(h.app.debugger.breakpoints.len(), 1);
    assert_eq!(h.app.debugger.watches, ["KEYS[1]"]);
}

#[test]
fn run_results_stay_with_their_buffer() {
    let (_dir, _a, _b, mut h) = set_in_a_then_open_b("<F5>", "");
    assert!(h.app.last_run.is_none());
    let screen = h.render(100, 30);
    assert!(!screen.contains("from a"), "{screen}");
    h.press("<F5>");
    let b_reply = h.app.last_run.as_ref().map(|r| r.report.reply.to_cli());
    assert_eq!(b_reply.as_deref(), Some("(nil)"));
    h.press("<C-PageUp>");
    let a_reply = h.app.last_run.as_ref().map(|r| r.report.reply.to_cli());
    assert_eq!(a_reply.as_deref(), Some("\"from a\""));
    h.press("<C-PageDown>");
    let b_reply = h.app.last_run.as_ref().map(|r| r.report.reply.to_cli());
    assert_eq!(b_reply.as_deref(), Some("(nil)"));
}

#[test]
fn undoing_everything_typed_in_a_new_buffer_takes_its_star_away() {
    common::isolate_app_dirs();
    let mut h = Harness::new("", &[], &[], "");
    h.type_text("return 1\nreturn 2");
    assert!(h.app.editor.modified);
    assert!(
        editor_title(&h).contains("┏❯untitled *━"),
        "{}",
        editor_title(&h)
    );
    for _ in 0..20 {
        h.press("<C-z>");
    }
    assert_eq!(text(&h), "");
    assert!(!h.app.editor.modified);
    assert!(
        editor_title(&h).contains("┏❯untitled━"),
        "{}",
        editor_title(&h)
    );
    // Redone: unsaved again.
    h.press("<C-y>");
    assert!(h.app.editor.modified);
}

#[test]
fn undoing_back_to_the_saved_file_takes_the_star_away_for_every_kind_of_change() {
    let (_dir, a, _b) = two_files();
    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(a.clone());
    // A word typed, a seed key deleted, the clock advanced, ARGV typed: four changes.
    h.type_text("-- x\n");
    h.keys("<A-3> d + <Enter> <Esc> <F6> <F6>");
    h.type_text("1");
    assert_eq!(h.app.inputs.argv_text(), "1");
    assert!(h.app.seed.is_empty());
    assert_eq!(h.app.clock_offset_ms, 60_000);
    assert!(h.app.editor.modified);
    h.keys("<C-z> <C-z> <C-z>");
    assert!(h.app.editor.modified, "the typed line is still there");
    // The typing, in the editor: a step or two, however the editor groups it.
    h.press("<Esc>");
    for _ in 0..5 {
        h.press("<C-z>");
    }
    assert_eq!(text(&h), "return redis.call('GET', KEYS[1])\n");
    assert_eq!(h.app.inputs.argv_text(), "");
    assert!(!h.app.seed.is_empty());
    assert_eq!(h.app.clock_offset_ms, 0);
    assert!(!h.app.editor.modified, "{}", h.app.status);
}

#[test]
fn the_run_clock_and_keep_state_are_saved_in_the_sidecar_and_come_back_on_open() {
    let (dir, a, _b) = two_files();
    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(a.clone());
    h.keys("<A-3> + <Enter>");
    // Both are the buffer's changes now: marked, and undone like the others.
    assert!(h.app.editor.modified);
    h.press("<C-z>");
    assert_eq!(h.app.clock_offset_ms, 0);
    assert!(!h.app.editor.modified);
    h.keys("+ <Enter> K");
    assert!(h.app.editor.modified);
    h.press("<C-s>");
    let car: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("a.json")).unwrap()).unwrap();
    assert_eq!(car["clock_offset_ms"], 60_000);
    assert_eq!(car["keep_state"], true);
    assert_eq!(car["keys"], serde_json::json!(["ka"]));
    // Opened again in a new workbench: the same clock and keep state.
    let mut again = Harness::new("", &[], &[], "");
    again.app.open_file(a.clone());
    assert_eq!(again.app.clock_offset_ms, 60_000);
    assert!(again.app.keep_state.is_some());
    assert!(!again.app.editor.modified);
    assert_eq!(
        again.app.backend_label(),
        "sandbox · clock +60 s, keep state"
    );
    // Back to the defaults and saved: the sidecar says so.
    again.keys("<A-3> = K <C-s>");
    let car: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("a.json")).unwrap()).unwrap();
    assert_eq!(car["clock_offset_ms"], 0);
    assert_eq!(car["keep_state"], false);
}

#[test]
fn a_file_name_typed_in_the_open_picker_opens_as_a_path() {
    let (_dir, a, _b) = two_files();
    let mut h = Harness::new("", &[], &[], "");
    h.app.open_file(a.clone());
    // No `/` in it and nothing in the list matches: Enter opens it (here a new file, nothing
    // written until Ctrl-S).
    h.press("<C-o>");
    h.type_text("zz-no-such-script.lua\n");
    assert!(h.app.overlay.is_none());
    assert_eq!(h.app.buffers.len(), 2);
    assert_eq!(
        h.app.status,
        "zz-no-such-script.lua is a new file; Ctrl-S creates it"
    );
    assert!(!Path::new("zz-no-such-script.lua").exists());
}

#[test]
fn the_palette_lists_the_open_buffers_first_and_enter_shows_one() {
    let (_dir, a, b) = two_files();
    let mut h = open_both(&a, &b);
    h.type_text("-- b\n");
    h.press("<C-p>");
    let screen = h.render(100, 20);
    let rows: Vec<&str> = screen.lines().skip(3).take(3).collect();
    assert!(rows[0].contains("┃— Open buffers —"), "{screen}");
    assert!(
        rows[1].contains(&format!("┃ buffer 1               {} ", a.display())),
        "{screen}"
    );
    assert!(
        rows[2].contains(&format!("┃ buffer 2               {} * ", b.display())),
        "{screen}"
    );
    // Typed words find a buffer by its name; Enter shows it.
    h.type_text("a.lua\n");
    assert!(h.app.overlay.is_none());
    assert_eq!(h.app.buffers.current(), 0);
    assert_eq!(h.app.status, format!("buffer 1/2: {}", a.display()));
}

/// `evalbench a.lua b.lua`: one buffer each, in order; the last is shown and the status names
/// every file opened and the keys that switch.
#[test]
fn the_command_line_opens_each_file_given_in_a_buffer() {
    let (_dir, a, b) = two_files();
    let app = evalbench::tui::build_app(&evalbench::tui::TuiOptions {
        files: vec![a.clone(), b.clone()],
        theme: None,
        server: None,
        profile: None,
        present: false,
    });
    let names: Vec<String> = evalbench::tui::buffers::list(&app)
        .iter()
        .map(|l| l.name.clone())
        .collect();
    assert_eq!(names, [a.display().to_string(), b.display().to_string()]);
    assert_eq!(app.editor.path.as_deref(), Some(b.as_path()));
    assert_eq!(
        app.status,
        format!(
            "2 buffers (Ctrl-PageUp/PageDown switch, Alt-B lists them): opened {}; opened {}",
            a.display(),
            b.display()
        )
    );
}
