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
fn at_80x24_the_editor_shows_eight_lines_and_the_panes_eight_rows() {
    let h = long_script();
    let screen = h.render(80, 24);
    assert_eq!(editor_lines(&screen), 8, "{screen}");
    // The form on one row, KEYS beside ARGV.
    let form = screen
        .lines()
        .find(|l| l.contains("KEYS (1)"))
        .expect(&screen);
    assert!(
        form.contains("ARGV (2)") || form.contains("ARGV (1)"),
        "{screen}"
    );
    // The panes: the tab bar, then a box with 8 rows inside.
    let rows: Vec<&str> = screen.lines().collect();
    let tabs = rows
        .iter()
        .position(|l| l.starts_with("1 Trace"))
        .expect(&screen);
    let inside = rows[tabs + 1..]
        .iter()
        .skip(1)
        .take_while(|l| l.starts_with('│'))
        .count();
    assert_eq!(inside, 8, "{screen}");
    assert_eq!(rows.len() - tabs, 1 + 10 + 2, "{screen}");
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
    assert_eq!(editor_lines(&h.render(80, 24)), 8);
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

/// At 100 columns the Trace pane is 43 columns inside: the fixed columns are as wide as what
/// they hold and the time moves to the call box, so the command and the reply get 18 and 12
/// columns (10 and 9 before), cut with `…`.
#[test]
fn at_100x30_the_trace_gives_the_command_and_the_reply_the_room() {
    common::isolate_app_dirs();
    let mut h = Harness::sample();
    h.press("<F5>");
    let screen = h.render(100, 30);
    let pane: Vec<&str> = screen
        .lines()
        .skip(2)
        .take(3)
        .map(|l| l.split_once('┃').map_or(l, |(_, r)| r))
        .map(|l| l.split_once('┃').map_or(l, |(_, r)| r))
        .collect();
    assert_eq!(
        pane,
        [
            "│seq line command            reply          │",
            "│ 1  14   INCR ratelimit:al… (integer) 4  W │",
            "│ 2  18   TTL ratelimit:ali… (integer) 60   │",
        ],
        "{screen}"
    );
    assert!(screen.contains("│time:    #.# µs"), "{screen}");
}

#[test]
fn at_60x20_the_trace_still_shows_calls() {
    common::isolate_app_dirs();
    let mut h = Harness::sample();
    h.press("<F5>");
    let screen = h.render(60, 20);
    assert!(
        screen.contains("│ 1  14   INCR ratelimit:alice:42 (integer) 4        0.0 W │"),
        "{screen}"
    );
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

/// A colour as sRGB: named and indexed colours as xterm shows them.
fn rgb(color: Color) -> (u8, u8, u8) {
    const BASIC: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (205, 0, 0),
        (0, 205, 0),
        (205, 205, 0),
        (0, 0, 238),
        (205, 0, 205),
        (0, 205, 205),
        (229, 229, 229),
        (127, 127, 127),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (92, 92, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    let index = match color {
        Color::Rgb(r, g, b) => return (r, g, b),
        Color::Indexed(i) => i,
        Color::Black => 0,
        Color::Red => 1,
        Color::Green => 2,
        Color::Yellow => 3,
        Color::Blue => 4,
        Color::Magenta => 5,
        Color::Cyan => 6,
        Color::Gray => 7,
        Color::DarkGray => 8,
        Color::LightRed => 9,
        Color::LightGreen => 10,
        Color::LightYellow => 11,
        Color::LightBlue => 12,
        Color::LightMagenta => 13,
        Color::LightCyan => 14,
        Color::White | Color::Reset => 15,
    };
    match index {
        0..=15 => BASIC[index as usize],
        16..=231 => {
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            let i = index - 16;
            (level(i / 36), level(i / 6 % 6), level(i % 6))
        }
        _ => {
            let v = 8 + 10 * (index - 232);
            (v, v, v)
        }
    }
}

/// WCAG 2 contrast ratio of two colours.
fn contrast(a: Color, b: Color) -> f64 {
    let luminance = |c: Color| {
        let (r, g, b) = rgb(c);
        let lin = |v: u8| {
            let v = v as f64 / 255.0;
            if v <= 0.03928 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
    };
    let (x, y) = (luminance(a), luminance(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

#[test]
fn every_theme_reads_at_a_contrast_of_4_5_to_1() {
    let mut failures = Vec::new();
    for theme in [Theme::dark(), Theme::light(), Theme::contrast().clone()] {
        // A theme without colours of its own draws on the terminal's: a dark one for the dark
        // theme (black, light grey text).
        let bg = theme.text.bg.unwrap_or(Color::Black);
        let fg = theme.text.fg.unwrap_or(Color::Gray);
        let mut check = |what: String, fg: Color, bg: Color| {
            let ratio = contrast(fg, bg);
            if ratio < 4.5 {
                failures.push(format!(
                    "{}: {what} {fg:?} on {bg:?}: {ratio:.2}",
                    theme.name
                ));
            }
        };
        for (what, style) in [
            ("text", theme.text),
            ("border", theme.border),
            ("focus_border", theme.focus_border),
            ("header", theme.header),
            ("error", theme.error),
            ("warning", theme.warning),
            ("line_number", theme.line_number),
            ("changed", theme.changed),
        ] {
            check(what.into(), style.fg.unwrap_or(fg), bg);
        }
        for (n, style) in theme.clients.iter().enumerate() {
            check(format!("client{}", n + 1), style.fg.unwrap_or(fg), bg);
        }
        for (what, style) in [
            ("current_line", theme.current_line),
            ("selection", theme.selection),
            ("error_line", theme.error_line),
        ] {
            check(format!("text on {what}"), fg, style.bg.unwrap_or(bg));
        }
        // The script's colours, on the background and on the cursor's line.
        let line_bg = theme.current_line.bg.unwrap_or(bg);
        let plain = theme
            .syntax
            .settings
            .foreground
            .map(|c| ("plain".to_string(), c));
        let scoped = theme
            .syntax
            .scopes
            .iter()
            .filter_map(|item| Some((format!("{:?}", item.scope), item.style.foreground?)));
        for (what, c) in plain.into_iter().chain(scoped) {
            let c = Color::Rgb(c.r, c.g, c.b);
            check(format!("syntax {what}"), c, bg);
            check(format!("syntax {what} on the cursor's line"), c, line_bg);
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn at_100_columns_every_tab_and_the_run_counter_stay_on_screen() {
    use evalbench::tui::action::Action;
    let mut h = long_script();
    h.app.set_live_server("redis 7.0.15 127.0.0.1:63999".into());
    h.app.editor.path =
        Some("/home/someone/projects/rate-limits/scripts/sliding_window_limiter.lua".into());
    let screen = h.render(100, 30);
    let tab_bar = screen.lines().next().unwrap();
    assert!(
        tab_bar.ends_with("1 Trace│2 Rep│3 Key│4 War│5 Ser│6 Deb"),
        "{screen}"
    );
    // The selected tab is whole, the others shortened.
    h.press("<A-5>");
    let screen = h.render(100, 30);
    let tab_bar = screen.lines().next().unwrap();
    assert!(
        tab_bar.ends_with("1 Tra│2 Rep│3 Key│4 War│5 Server│6 Deb"),
        "{screen}"
    );
    // A run in progress (its effect not carried out): the counter is whole, the SHA1 and the
    // profile gave way, the file name is cut at its start with an ellipsis.
    h.press("<A-1>");
    let _ = h.app.update(Action::Run);
    assert!(h.app.running.is_some());
    let screen = h.render(100, 30);
    let status = screen.lines().nth(28).unwrap();
    let threshold = h.app.config.busy_threshold_ms;
    assert!(
        status.trim_end().ends_with(&format!(" s / {threshold} ms")),
        "{status}"
    );
    assert!(status.contains(" running "), "{status}");
    assert!(
        status.ends_with(&format!(
            "] …indow_limiter.lua  running #.# s / {threshold} ms"
        )),
        "{status}"
    );
    assert!(!status.contains(" sha "), "{status}");
}

#[test]
fn a_tab_bar_too_narrow_for_numbers_scrolls_around_the_selected_tab() {
    let mut h = long_script();
    h.app.set_live_server("redis".into());
    h.press("<A-5>");
    assert_eq!(h.app.focus, Focus::Panes);
    let screen = h.render(14, 20);
    let tab_bar = screen
        .lines()
        .find(|l| l.contains("5 Server"))
        .expect(&screen);
    assert_eq!(tab_bar, "‹ 4│5 Server│6", "{screen}");
    // The run counter stays whole in the status bar; the server's name gives way.
    let status = screen.lines().nth(18).unwrap();
    assert_eq!(status, "… - / 5000 ms", "{screen}");
}

#[test]
fn at_80x24_the_server_tab_shows_the_key_list_and_its_value() {
    use common::RedisServer;
    use evalbench::engine::live::TargetSpec;
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let mut hset: Vec<String> = vec!["HSET".into(), "big:hash".into()];
    for i in 0..5000 {
        hset.push(format!("f{i}"));
        hset.push(format!("v{i}"));
    }
    conn.cmd(&hset.iter().map(String::as_str).collect::<Vec<_>>());
    common::isolate_app_dirs();
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..TargetSpec::default()
    }
    .resolve()
    .expect("target");
    let mut h = Harness::new("return 1", &[], &[], "")
        .with_live(target, "redis test-server")
        .expect("connect");
    h.press("<A-5>");
    let screen = h.render(80, 24);
    let rows: Vec<&str> = screen.lines().collect();
    let tabs = rows
        .iter()
        .position(|l| l.contains("5 Server"))
        .expect(&screen);
    // The list on the left, the selected key's value on the right, on the same rows.
    let titles = rows[tabs + 1];
    // (The focused list is marked.)
    assert!(titles.starts_with("┏❯Server keys"), "{screen}");
    assert!(
        titles.contains("┓┌hash 'big:hash' · ") && titles.contains("/5,000 · ↓ more"),
        "{screen}"
    );
    let first = rows[tabs + 3];
    assert!(first.starts_with("┃big:hash   hash "), "{screen}");
    assert!(first.contains("┃│f"), "{screen}");
    // Eight rows inside each box.
    assert_eq!(
        rows[tabs + 2..]
            .iter()
            .take_while(|l| l.starts_with('┃'))
            .count(),
        8,
        "{screen}"
    );
}

#[test]
fn a_long_key_in_the_keyspace_list_ends_in_an_ellipsis_at_80x24() {
    let mut h = Harness::new(
        "return 1",
        &[],
        &[],
        r#"{"ratelimit:alice:42": {"type": "string", "value": "4"}}"#,
    );
    h.press("<A-3>");
    let screen = h.render(80, 24);
    // The list's row (the value pane's title names the key too).
    let row = screen
        .lines()
        .find(|l| l.contains(" string -"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(row.starts_with("┃  ratelimit… string -"), "{screen}");
    // The value pane's title is cut with an ellipsis too.
    let title = screen.lines().find(|l| l.contains("┌Value · ")).unwrap();
    assert!(title.trim_end_matches(['┐', '─']).ends_with('…'), "{title}");
}
