//! The focus model: one focused pane, marked without relying on colour; Esc goes back one level;
//! the editor's keys work from wherever the editor shows (or the status line says why not); a key
//! that does nothing says so; overlays take every key until they close; F6 skips hidden fields.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::app::{Focus, Overlay, PromptPurpose, Tab};
use evalbench::tui::harness::Harness;

fn sample() -> Harness {
    common::isolate_app_dirs();
    Harness::sample()
}

fn prompt_purpose(h: &Harness) -> Option<PromptPurpose> {
    match &h.app.overlay {
        Some(Overlay::Prompt(p)) => Some(p.purpose.clone()),
        _ => None,
    }
}

fn cursor(h: &Harness) -> (usize, usize) {
    h.app.editor.textarea.cursor()
}

/// The rows of a screen holding the focus mark.
fn marked_rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .filter(|l| l.contains('❯'))
        .map(str::to_string)
        .collect()
}

#[test]
fn editor_keys_work_from_a_right_hand_pane() {
    let mut h = sample();
    // Alt-1 focuses the Trace pane; Ctrl-G still goes to a line of the script.
    h.press("<A-1>");
    assert_eq!(h.app.focus, Focus::Panes);
    h.press("<C-g>");
    assert_eq!(prompt_purpose(&h), Some(PromptPurpose::GotoLine));
    assert_eq!(h.app.focus, Focus::Editor);
    h.type_text("14\n");
    assert_eq!(cursor(&h).0, 13);

    // Ctrl-F from the Keyspace tab searches the script.
    h.press("<A-3>").press("<C-f>");
    assert_eq!(prompt_purpose(&h), Some(PromptPurpose::Find));
    h.type_text("EXPIRE\n");
    assert_eq!(h.app.status, "match 1/1 of 'EXPIRE'");
    assert_eq!(cursor(&h).0, 15);
    assert_eq!(h.app.focus, Focus::Editor);

    // Ctrl-Z from the Reply tab undoes the editor's last edit.
    let before = h.app.editor.text();
    h.type_text("x");
    assert_ne!(h.app.editor.text(), before);
    h.press("<A-2>").press("<C-z>");
    assert_eq!(h.app.editor.text(), before);
    assert_eq!(h.app.focus, Focus::Editor);
}

#[test]
fn editor_keys_from_the_fields_search_but_leave_the_fields_text_keys_alone() {
    let mut h = sample();
    h.press("<F6>");
    assert_eq!(h.app.focus, Focus::Keys);
    h.press("<C-f>");
    assert_eq!(prompt_purpose(&h), Some(PromptPurpose::Find));
    h.press("<Esc>");
    assert_eq!(h.app.focus, Focus::Editor);
    // Tab in the ARGV field does not indent the script.
    let text = h.app.editor.text();
    h.keys("<F6> <F6>");
    assert_eq!(h.app.focus, Focus::Argv);
    h.press("<BackTab>");
    assert_eq!(h.app.editor.text(), text);
    assert_eq!(h.app.focus, Focus::Argv);
}

#[test]
fn editor_keys_say_why_not_when_the_editor_is_hidden() {
    let mut h = sample();
    // The Trace pane zoomed to the whole screen: the editor does not show.
    h.keys("<A-1> <A-z>");
    assert!(h.app.zoomed);
    h.press("<C-f>");
    assert!(h.app.overlay.is_none());
    assert_eq!(
        h.app.status,
        "Ctrl-F: find works in the editor, hidden now (Esc: the editor)"
    );
    assert_eq!(h.app.focus, Focus::Panes);
    // Esc goes back to it (zoomed, the editor is what shows now).
    h.press("<Esc>");
    assert_eq!(h.app.focus, Focus::Editor);
    assert!(h
        .render(100, 30)
        .lines()
        .next()
        .unwrap()
        .starts_with("┏❯untitled"));
}

#[test]
fn esc_goes_back_one_level() {
    let mut h = sample();
    // Keyspace tab, its value view, a prompt over it.
    h.keys("<A-3> <Enter>");
    assert!(h.app.keyspace.value_focus);
    h.press("/");
    assert_eq!(prompt_purpose(&h), Some(PromptPurpose::FilterKeys));
    // Esc: the prompt closes, the value view keeps the focus.
    h.press("<Esc>");
    assert!(h.app.overlay.is_none());
    assert_eq!((h.app.focus, h.app.tab), (Focus::Panes, Tab::Keyspace));
    assert!(h.app.keyspace.value_focus);
    // Esc: back to the key list.
    h.press("<Esc>");
    assert!(!h.app.keyspace.value_focus);
    assert_eq!(h.app.focus, Focus::Panes);
    // Esc: back to the editor, and the status line says so.
    h.press("<Esc>");
    assert_eq!(h.app.focus, Focus::Editor);
    assert_eq!(
        h.app.status,
        "back in the editor (F6 or Alt-1…9: the panes)"
    );
    // The help over a pane: Esc closes it, the pane keeps the focus; Esc again: the editor.
    h.keys("<A-1> <F1>");
    assert!(matches!(h.app.overlay, Some(Overlay::Palette(_))));
    h.press("<Esc>");
    assert!(h.app.overlay.is_none());
    assert_eq!(h.app.focus, Focus::Panes);
    h.press("<Esc>");
    assert_eq!(h.app.focus, Focus::Editor);
    // From the ARGV field too.
    h.keys("<F6> <F6> <Esc>");
    assert_eq!(h.app.focus, Focus::Editor);
    // Nothing was typed anywhere on the way.
    assert!(!h.app.editor.modified);
    assert_eq!(h.app.inputs.argv_text(), "10 60");
    assert_eq!(h.app.inputs.keys_text(), "ratelimit:alice:42");
}

#[test]
fn esc_stops_a_run_before_going_back() {
    // A run in progress is stopped by Esc wherever the focus is (tests/tui_screens.rs and the
    // live suites check the run's words); here the focus does not move while Esc stops it.
    let mut h = sample();
    h.press("<A-1>");
    h.app.running = Some(evalbench::tui::app::Running {
        id: 99,
        started: std::time::Instant::now(),
        phase: None,
        dry_run: None,
    });
    h.press("<Esc>");
    assert_eq!(h.effects, ["cancel"]);
    assert_eq!(h.app.status, "cancelling…");
    assert_eq!(h.app.focus, Focus::Panes);
}

#[test]
fn a_key_that_does_nothing_says_so() {
    let mut h = sample();
    h.press("<A-1>");
    h.press("z");
    assert_eq!(
        h.app.status,
        "z does nothing in the Trace tab (F1: its keys, Esc: the editor)"
    );
    h.press("<A-4>").press("q");
    assert_eq!(
        h.app.status,
        "q does nothing in the Warnings tab (F1: its keys, Esc: the editor)"
    );
    // In the editor: a chord nothing is bound to.
    h.press("<Esc>").press("<C-b>");
    assert_eq!(
        h.app.status,
        "Ctrl-B does nothing in the editor (F1: every key)"
    );
    assert!(!h.app.editor.modified);
}

#[test]
fn the_help_takes_every_key_until_closed() {
    let mut h = sample();
    // The Keyspace tab's key list, its seed key selected: `d` there would delete it.
    h.press("<A-3>");
    assert_eq!(h.app.seed.len(h.app.seed_now_ms), 1);
    h.press("<F1>");
    h.press("d");
    assert!(matches!(h.app.overlay, Some(Overlay::Palette(_))));
    assert_eq!(h.app.seed.len(h.app.seed_now_ms), 1);
    h.keys("<Backspace> <Esc>");
    assert!(h.app.overlay.is_none());
    assert_eq!(h.app.seed.len(h.app.seed_now_ms), 1);
    assert_eq!((h.app.focus, h.app.tab), (Focus::Panes, Tab::Keyspace));
}

#[test]
fn f6_never_stops_on_a_hidden_field() {
    let mut h = sample();
    // Presenter mode shows the editor or a pane, never the KEYS / ARGV fields.
    h.press("<A-p>");
    assert!(h.app.present);
    h.press("<F6>");
    assert_eq!(h.app.focus, Focus::Panes);
    h.press("<F6>");
    assert_eq!(h.app.focus, Focus::Editor);
    h.press("<S-F6>");
    assert_eq!(h.app.focus, Focus::Panes);
    h.type_text("ab");
    assert_eq!(h.app.inputs.keys_text(), "ratelimit:alice:42");
    assert_eq!(h.app.inputs.argv_text(), "10 60");
    // Out of presenter mode the fields are in the order again.
    h.keys("<A-p> <Esc> <F6>");
    assert_eq!(h.app.focus, Focus::Keys);
}

#[test]
fn one_focused_pane_marked_without_colour() {
    let mut h = sample();
    // The editor: thick lines and the mark before its title; the panes plain.
    let screen = h.render(120, 40);
    assert_eq!(
        marked_rows(&screen),
        ["┏❯untitled━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓1 Trace │ 2 Reply │ 3 Keyspace │ 4 Warnings │ 6 Debug"]
    );
    assert!(screen.contains("┌Trace──"), "{screen}");
    // The KEYS field.
    h.press("<F6>");
    let screen = h.render(120, 40);
    let marked = marked_rows(&screen);
    assert_eq!(marked.len(), 1, "{screen}");
    assert!(
        marked[0].starts_with("❯KEYS (1) slot ratelimit:alice:42→610━━"),
        "{}",
        marked[0]
    );
    assert!(screen.starts_with("┌untitled──"), "{screen}");
    // The Keyspace tab.
    h.press("<A-3>");
    let screen = h.render(120, 40);
    let marked = marked_rows(&screen);
    assert_eq!(marked.len(), 1, "{screen}");
    assert!(marked[0].contains("┏❯Keys"), "{}", marked[0]);
    assert!(screen.starts_with("┌untitled──"), "{screen}");
    // An overlay has the focus while it shows: only its border is thick.
    h.press("<C-p>");
    let screen = h.render(120, 40);
    let marked = marked_rows(&screen);
    assert_eq!(marked.len(), 1, "{screen}");
    assert!(marked[0].contains("┏❯Help"), "{}", marked[0]);
    // On a short terminal the fields share one row: the mark goes before the focused one.
    h.keys("<Esc> <Esc> <F6> <F6>");
    assert_eq!(h.app.focus, Focus::Argv);
    let screen = h.render(80, 24);
    let marked = marked_rows(&screen);
    assert_eq!(
        marked,
        ["KEYS (1) slot 610 ratelimit:alice:42            ❯ARGV (2) 10 60"],
        "{screen}"
    );
}
