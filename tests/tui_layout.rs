//! Layout and words on small and large terminals: the editor's share at 80x24, zoom, hints in
//! plain words fitted to the width, the light theme's own background.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::app::Focus;
use evalbench::tui::harness::Harness;
use evalbench::tui::theme::Theme;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use ratatui::Terminal;

fn long_script() -> Harness {
    common::isolate_app_dirs();
    let script: Vec<String> = (1..=60).map(|i| format!("local v{i} = {i}")).collect();
    Harness::new(&script.join("\n"), &["k"], &["1"], "")
}

/// The highest line number shown in the editor's gutter.
fn editor_lines(screen: &str) -> usize {
    screen
        .lines()
        .filter_map(|l| {
            let rest = l.trim_start_matches(['│', '┃']).trim_start();
            let (n, text) = rest.split_once(' ')?;
            (text.starts_with("local v")).then(|| n.parse::<usize>().ok())?
        })
        .count()
}

#[test]
fn the_editor_shows_twelve_lines_at_80x24() {
    let h = long_script();
    let screen = h.render(80, 24);
    assert_eq!(editor_lines(&screen), 12, "{screen}");
    // The form and the panes are still there.
    assert!(
        screen.contains("KEYS (1)") && screen.contains("ARGV (1)"),
        "{screen}"
    );
    assert!(screen.contains("1 Trace"), "{screen}");
}

#[test]
fn zoom_gives_the_focused_pane_the_screen_and_back() {
    let mut h = long_script();
    h.press("<A-z>");
    let screen = h.render(80, 24);
    assert_eq!(editor_lines(&screen), 20, "{screen}");
    assert!(!screen.contains("1 Trace"), "{screen}");
    h.press("<F6>"); // KEYS
    h.press("<F6>"); // ARGV
    h.press("<F6>"); // the panes
    assert_eq!(h.app.focus, Focus::Panes);
    let screen = h.render(80, 24);
    assert!(
        screen.contains("1 Trace") && screen.contains("No run yet"),
        "{screen}"
    );
    assert_eq!(editor_lines(&screen), 0, "{screen}");
    h.press("<A-z>");
    assert_eq!(editor_lines(&h.render(80, 24)), 12);
}

#[test]
fn hints_are_plain_words_that_fit_the_width() {
    let h = long_script();
    for (w, hgt) in [(60, 20), (80, 24), (200, 60)] {
        let screen = h.render(w, hgt);
        let last = screen.lines().last().unwrap();
        assert!(last.chars().count() <= w as usize, "{last}");
        assert!(!last.contains('_') && !last.contains("<F"), "{last}");
    }
    let wide = h.render(200, 60);
    let last = wide.lines().last().unwrap();
    assert!(
        last.ends_with("F5 run F1 help Ctrl-S save Ctrl-F find Ctrl-Z undo Ctrl-G go to line Ctrl-/ comment Ctrl-O open F6 next pane F10 step over F9 breakpoint Ctrl-Q quit"),
        "{last}"
    );
    let narrow = h.render(60, 20);
    assert!(
        narrow.lines().last().unwrap().ends_with("│ F5 run F1 help"),
        "{narrow}"
    );
}

#[test]
fn the_light_theme_paints_its_own_background() {
    let mut h = long_script();
    h.theme = Theme::light();
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|f| evalbench::tui::ui::draw(f, &h.app, &h.theme))
        .unwrap();
    let buf = terminal.backend().buffer();
    // A blank cell of the status bar and one of the panes: white, not the terminal's default.
    assert_eq!(buf[(79, 22)].bg, Color::Rgb(0xff, 0xff, 0xff));
    assert_eq!(buf[(40, 20)].bg, Color::Rgb(0xff, 0xff, 0xff));
}

#[test]
fn panes_never_scroll_past_their_content() {
    common::isolate_app_dirs();
    let mut h = Harness::sample();
    h.keys("<F5> <A-2>");
    h.render(120, 14);
    h.keys("<PageDown> <PageDown> <PageDown> <PageDown> <PageDown> <PageDown>");
    let max = h.app.regions.borrow().scroll_max;
    assert!(max > 0, "the reply is longer than the pane at 120x14");
    assert_eq!(h.app.reply_scroll, max);
    // The last line of the reply (its conversion notes) is in view.
    assert!(h
        .render(120, 14)
        .contains("none: the value converted without loss"));
    // One step up is one row up (no hidden run-off to climb back from).
    h.press("<Up>");
    assert_eq!(h.app.reply_scroll, max - 1);
}

#[test]
fn at_60x20_the_trace_still_shows_calls() {
    common::isolate_app_dirs();
    let mut h = Harness::sample();
    h.press("<F5>");
    let screen = h.render(60, 20);
    assert!(screen.contains(" 1    14    INCR ratelimit"), "{screen}");
    assert!(editor_lines_any(&screen) >= 8, "{screen}");
}

/// Rows of the editor showing a numbered line.
fn editor_lines_any(screen: &str) -> usize {
    screen
        .lines()
        .filter(|l| {
            let rest = l.trim_start_matches(['│', '┃']).trim_start();
            rest.split_once(' ')
                .is_some_and(|(n, _)| n.parse::<usize>().is_ok() && l.starts_with(['│', '┃']))
        })
        .count()
}

#[test]
fn long_lines_wrap_on_demand() {
    use ratatui::crossterm::event::{MouseButton, MouseEventKind};
    common::isolate_app_dirs();
    let long = format!("return '{}'", "abcdefghij".repeat(15));
    let mut h = Harness::new(&format!("local a = 1\n{long}\nreturn a"), &[], &[], "");
    let before = h.render(80, 24);
    assert!(!before.contains("↪"), "{before}");
    h.press("<A-w>");
    assert_eq!(h.app.status, "long lines wrap onto the next rows");
    let screen = h.render(80, 24);
    // 160 characters in rows of 74 cells: the line and two continuation rows, then line 3.
    let rows: Vec<&str> = screen.lines().collect();
    let at = rows
        .iter()
        .position(|l| l.contains("  2 return 'abc"))
        .expect(&screen);
    assert!(rows[at + 1].starts_with("┃  ↪ "), "{screen}");
    assert!(rows[at + 2].starts_with("┃  ↪ "), "{screen}");
    assert!(rows[at + 3].contains("  3 return a"), "{screen}");
    let joined: String = rows[at..at + 3]
        .iter()
        .map(|l| {
            let text: String = l.trim_start_matches(['│', '┃']).chars().skip(4).collect();
            text.trim_end_matches(['│', '┃']).trim_end().to_string()
        })
        .collect();
    assert_eq!(joined, long);
    // A click on the first continuation row lands on the character shown there.
    h.mouse(MouseEventKind::Down(MouseButton::Left), 5, at as u16 + 1);
    assert_eq!(h.app.editor.textarea.cursor(), (1, 74));
    h.press("<A-w>");
    assert!(!h.render(80, 24).contains("↪"));
}
