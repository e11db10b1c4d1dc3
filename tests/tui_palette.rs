//! The command palette (Ctrl-P; F1 opens the same list as the help): what a user does with it
//! first — open it, type a few letters, see the list filtered, move with the arrows, run the
//! chosen action with Enter, close it with Esc, and use it on a tiny terminal.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::action::Action;
use evalbench::tui::app::{Focus, Overlay, PromptPurpose, Tab};
use evalbench::tui::harness::Harness;

fn sample() -> Harness {
    common::isolate_app_dirs();
    Harness::sample()
}

/// The actions the palette shows, in order.
fn shown(h: &Harness) -> Vec<Action> {
    match &h.app.overlay {
        Some(Overlay::Palette(p)) => p.shown.iter().map(|&i| p.entries[i].action).collect(),
        _ => panic!("the palette is not open"),
    }
}

fn chosen(h: &Harness) -> Action {
    match &h.app.overlay {
        Some(Overlay::Palette(p)) => p.current().expect("a chosen row").action,
        _ => panic!("the palette is not open"),
    }
}

#[test]
fn typing_filters_and_enter_runs_the_chosen_action() {
    let mut h = sample();
    h.press("<C-p>");
    let all = shown(&h).len();
    // Every action of the table is there (Close only works inside an overlay, listed there).
    for action in Action::ALL {
        assert!(
            shown(&h).contains(action),
            "{action:?} is not in the palette"
        );
    }
    h.type_text("wrap");
    // The word is in the editor's wrap and the value inspector's wrap and sideways scroll.
    let filtered = shown(&h);
    assert!(filtered.len() < all, "{filtered:?}");
    assert_eq!(
        filtered,
        [
            Action::ToggleWrap,
            Action::ValueWrap,
            Action::ValueLeft,
            Action::ValueRight
        ]
    );
    let screen = h.render(120, 40);
    assert!(
        screen.contains("┃> wrap "),
        "the typed text shows above the list\n{screen}"
    );
    assert!(
        screen.contains(
            "┃ <A-w>                  wrap long lines onto the next rows, or scroll sideways · Editor"
        ),
        "{screen}"
    );
    // Enter runs it: the editor wraps, the palette is gone.
    assert!(!h.app.editor.wrap);
    h.press("<Enter>");
    assert!(h.app.overlay.is_none());
    assert!(h.app.editor.wrap);
    assert_eq!(h.app.status, "long lines wrap onto the next rows");
}

#[test]
fn letters_of_a_name_match_when_no_word_does() {
    let mut h = sample();
    h.press("<C-p>");
    // No action has "tgwrp" in its words; the letters run through "toggle wrap".
    h.type_text("tgwrp");
    assert_eq!(chosen(&h), Action::ToggleWrap);
    // With a word found, rows that only hold its letters scattered are left out.
    for _ in 0.."tgwrp".len() {
        h.press("<Backspace>");
    }
    h.type_text("keep");
    assert_eq!(shown(&h), [Action::KeepState]);
}

#[test]
fn arrows_choose_a_row() {
    let mut h = sample();
    h.press("<C-p>");
    h.type_text("show the");
    let filtered = shown(&h);
    assert!(filtered.len() >= 3, "{filtered:?}");
    assert_eq!(chosen(&h), filtered[0]);
    h.press("<Down>").press("<Down>");
    assert_eq!(chosen(&h), filtered[2]);
    h.press("<Up>");
    assert_eq!(chosen(&h), filtered[1]);
    // Not past the ends.
    h.keys("<Up> <Up> <Up>");
    assert_eq!(chosen(&h), filtered[0]);
    // The chosen row is the highlighted one on screen: its description is on the row under the
    // cursor of the arrows.
    let wanted = filtered
        .iter()
        .position(|a| *a == Action::TabKeyspace)
        .expect("show the keyspace");
    for _ in 0..wanted {
        h.press("<Down>");
    }
    h.press("<Enter>");
    assert_eq!((h.app.focus, h.app.tab), (Focus::Panes, Tab::Keyspace));
}

#[test]
fn esc_closes_without_effect() {
    let mut h = sample();
    h.type_text("x");
    let text = h.app.editor.text();
    let status = h.app.status.clone();
    h.press("<C-p>");
    h.type_text("quit");
    assert_eq!(chosen(&h), Action::Quit);
    h.press("<Esc>");
    assert!(h.app.overlay.is_none());
    assert!(!h.app.quit);
    assert_eq!(h.app.editor.text(), text);
    assert_eq!(h.app.status, status);
    assert!(h.effects.is_empty(), "{:?}", h.effects);
    // Ctrl-P again closes it too, typing nothing anywhere.
    h.keys("<C-p> <C-p>");
    assert!(h.app.overlay.is_none());
    assert_eq!(h.app.editor.text(), text);
}

#[test]
fn an_action_runs_where_its_key_works() {
    let mut h = sample();
    // "add key" is a Keyspace key: from the editor the palette shows the Keyspace tab and asks.
    h.press("<C-p>");
    h.type_text("add to the seed");
    assert_eq!(chosen(&h), Action::AddKey);
    h.press("<Enter>");
    assert_eq!((h.app.focus, h.app.tab), (Focus::Panes, Tab::Keyspace));
    match &h.app.overlay {
        Some(Overlay::Prompt(p)) => assert_eq!(p.purpose, PromptPurpose::AddKey),
        _ => panic!("no add-key prompt"),
    }
    h.type_text("greeting hello\n");
    assert_eq!(h.app.status, "added string 'greeting' in the seed");
    // A Server key without a live server says what it needs.
    h.press("<C-p>");
    h.type_text("rescan");
    assert_eq!(chosen(&h), Action::Rescan);
    h.press("<Enter>");
    assert_eq!(
        h.app.status,
        "rescan: the Server tab needs a live server (--server URL)"
    );
    // A run from the palette is a run.
    h.press("<C-p>");
    h.type_text("run the script");
    assert_eq!(chosen(&h), Action::Run);
    h.press("<Enter>");
    assert_eq!(h.effects, ["run"]);
}

#[test]
fn nothing_matches_says_so() {
    let mut h = sample();
    h.press("<C-p>");
    let all = shown(&h).len();
    h.type_text("zzqqxx");
    assert!(shown(&h).is_empty());
    let screen = h.render(100, 30);
    assert!(
        screen.contains("┃Nothing matches 'zzqqxx': Backspace widens the search"),
        "{screen}"
    );
    h.press("<Enter>");
    assert_eq!(h.app.status, "no action matches 'zzqqxx'");
    assert!(matches!(h.app.overlay, Some(Overlay::Palette(_))));
    for _ in 0..6 {
        h.press("<Backspace>");
    }
    assert_eq!(shown(&h).len(), all);
}

#[test]
fn f1_opens_it_grouped_by_where_keys_work() {
    let mut h = sample();
    h.press("<F1>");
    let screen = h.render(120, 40);
    let rows: Vec<&str> = screen.lines().skip(1).take(5).collect();
    assert!(
        rows[0].contains("┏❯Help · commands — type to filter, Enter runs, Esc closes━"),
        "{screen}"
    );
    assert!(rows[1].contains("┃> "), "{screen}");
    assert!(rows[2].contains("┃— Everywhere —"), "{screen}");
    assert!(
        rows[3].contains("┃ <F5> <C-r>             run the script (sandbox, or the live server guarded); with breakpoints, debug; continue w…┃"),
        "{screen}"
    );
    // Typing filters the help the same way.
    h.type_text("undo");
    assert_eq!(chosen(&h), Action::Undo);
}

#[test]
fn a_tiny_terminal() {
    let mut h = sample();
    h.press("<C-p>");
    h.type_text("save");
    assert_eq!(chosen(&h), Action::Save);
    // 40x10: a shorter title, the keys' column narrower, every cut marked.
    assert_eq!(
        h.render(40, 10),
        "┌untitled──────────────────────────────┐\n\
         ┏❯Help — Enter runs, Esc closes━━━━━━━━┓\n\
         ┃> save                           6/147┃\n\
         ┃ <C-s>        save the script and its…┃\n\
         ┃ <A-t>        save the last run (KEYS…┃\n\
         ┃ w            save the seed keyspace …┃\n\
         ┃ <C-w>        close the buffer (asks …┃\n\
         ┃ <C-q>        quit (asks once when an…┃\n\
         ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛\n\
         \u{20}F5 runs the script, F1 shows every k… │"
    );
    // The whole list: the chosen row stays in view as the arrows go down it.
    h.keys("<Backspace> <Backspace> <Backspace> <Backspace>");
    h.keys("<Down> <Down> <Down> <Down> <Down> <Down>");
    assert_eq!(chosen(&h), Action::Quit);
    let screen = h.render(40, 10);
    let rows: Vec<&str> = screen.lines().collect();
    assert_eq!(rows[2], "┃>                              147/147┃");
    assert_eq!(rows[7], "┃ <C-q>        quit (asks once when an…┃");
    h.press("<Esc>");
    assert!(!h.app.quit);
    // Smaller still: nothing panics, the typed line shows first.
    h.press("<C-p>");
    for (w, hgt) in [(1, 1), (10, 5), (20, 4)] {
        let _ = h.render(w, hgt);
    }
}
