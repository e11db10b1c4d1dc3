//! Presenter mode: one large pane (the editor, or the focused tab), margins instead of
//! the other panes, a header with KEYS/ARGV and one bold status line; Alt-P switches it.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::harness::Harness;

fn presenting_sample() -> Harness {
    common::isolate_app_dirs();
    let mut h = Harness::sample();
    h.press("<A-p>");
    assert!(h.app.present);
    assert_eq!(h.app.status, "presenter mode: Alt-P leaves it");
    h.press("<F5>");
    h
}

#[test]
fn the_editor_alone_at_80x24_and_200x60() {
    let h = presenting_sample();
    insta::assert_snapshot!("present_editor_80x24", h.render(80, 24));
    insta::assert_snapshot!("present_editor_200x60", h.render(200, 60));
}

#[test]
fn the_focused_tab_alone_and_back() {
    let mut h = presenting_sample();
    h.press("<F6>"); // the KEYS field
    h.press("<F6>"); // ARGV
    h.press("<F6>"); // the tabs
    insta::assert_snapshot!("present_trace_80x24", h.render(80, 24));
    insta::assert_snapshot!("present_trace_200x60", h.render(200, 60));
    // Leaving presenter mode gives the usual layout back (the editor beside the tabs).
    h.press("<A-p>");
    assert!(!h.app.present);
    let screen = h.render(120, 40);
    assert!(screen.contains("1 Trace │ 2 Reply"), "{screen}");
    assert!(screen.contains("─KEYS (1)"), "{screen}");
}
