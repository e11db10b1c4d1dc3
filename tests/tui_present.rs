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

/// At a projector's 100x28 and 120x35: the state markers, whole key hints, the code beside the
/// tab shown (Alt-S), and the stepped line marked by a gutter arrow in a strong colour.
#[test]
fn a_room_reads_the_state_the_split_and_the_stepped_line_at_100x28_and_120x35() {
    let mut h = presenting_sample();
    // Keep state and a clock 30 s ahead, set from the Keyspace tab, then back to the code.
    h.press("<F6>").press("<F6>").press("<F6>").press("<A-3>");
    h.press("K").press("+").type_text("30\n");
    h.press("<F6>");
    for (w, rows) in [(100, 28), (120, 35)] {
        let screen = h.render(w, rows);
        let lines: Vec<&str> = screen.lines().collect();
        assert!(
            lines[0].ends_with(" Redis 7.0 · clock +30 s · keep state"),
            "{screen}"
        );
        assert!(
            lines[0].starts_with(" untitled   KEYS ratelimit:alice:42   ARGV 10 60"),
            "{screen}"
        );
        // The hints are whole, never cut in a word.
        assert_eq!(
            lines[rows as usize - 1].trim_end(),
            if w == 100 {
                "  F5 run   Alt-P presenter   Alt-S split   F6 next pane   Tab next tab   Alt-Right step"
            } else {
                "  F5 run   Alt-P presenter   Alt-S split   F6 next pane   Tab next tab   Alt-Right step   #.### ms of 5000 ms"
            },
            "{screen}"
        );
    }
    insta::assert_snapshot!("present_state_100x28", h.render(100, 28));
    // Alt-S: the code beside the trace.
    h.press("<A-1>").press("<A-s>");
    assert_eq!(
        h.app.status,
        "presenter mode: the code beside the tab shown (Tab, Alt-1..9 choose it; Alt-S: the code alone)"
    );
    let screen = h.render(100, 28);
    assert!(
        screen.contains(" 14 local count = redis.call('INCR', KEYS[1])"),
        "{screen}"
    );
    assert!(screen.contains("1 Trace │ 2 Rep"), "{screen}");
    assert!(screen.contains(" 1    14    INCR rat"), "{screen}");
    // Stepping: the call's line has the arrow in the gutter and the strong selection colour.
    h.press("<A-Right>");
    insta::assert_snapshot!("present_split_step_120x35", h.render(120, 35));
    let buffer = h.render_buffer(120, 35).unwrap();
    let row = (0..35)
        .find(|&y| {
            let text: String = (0..60)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect();
            text.contains("14 local count")
        })
        .expect("line 14 on screen");
    let text: String = (0..20)
        .map(|x| buffer[(x, row)].symbol().to_string())
        .collect();
    assert!(text.contains("▶ 14 local count"), "{text}");
    let strong = evalbench::tui::theme::Theme::contrast().selected.bg;
    assert_eq!(strong, Some(ratatui::style::Color::Rgb(0xff, 0xff, 0x00)));
    assert_eq!(buffer[(12, row)].bg, strong.unwrap());
    // Alt-S again: one pane, the focused one (here the tab).
    h.press("<A-s>");
    let screen = h.render(100, 28);
    assert!(!screen.contains("local count = redis.call"), "{screen}");
    assert!(screen.contains("1 Trace │ 2 Reply"), "{screen}");
}
