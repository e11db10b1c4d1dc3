//! The mouse through the synchronous harness: clicks on tabs, the editor, the fields and list
//! rows; drags select; the wheel scrolls the pane under the pointer.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::app::{Focus, Tab};
use evalbench::tui::harness::Harness;
use ratatui::crossterm::event::{KeyModifiers, MouseButton, MouseEventKind};

const W: u16 = 120;
const H: u16 = 40;

/// Column and row of the first occurrence of `needle` on the screen.
fn find(h: &Harness, needle: &str) -> (u16, u16) {
    let screen = h.render(W, H);
    for (y, line) in screen.lines().enumerate() {
        if let Some(byte) = line.find(needle) {
            return (line[..byte].chars().count() as u16, y as u16);
        }
    }
    panic!("{needle:?} not on screen:\n{screen}");
}

fn click(h: &mut Harness, (x, y): (u16, u16)) {
    h.mouse(MouseEventKind::Down(MouseButton::Left), x, y);
    h.mouse(MouseEventKind::Up(MouseButton::Left), x, y);
}

#[test]
fn a_click_on_a_tab_shows_it() {
    common::isolate_app_dirs();
    let mut h = Harness::sample();
    let at = find(&h, "3 Keyspace");
    click(&mut h, at);
    assert_eq!(h.app.tab, Tab::Keyspace);
    assert_eq!(h.app.focus, Focus::Panes);
    let at = find(&h, "2 Reply");
    click(&mut h, (at.0 + 3, at.1));
    assert_eq!(h.app.tab, Tab::Reply);
}

#[test]
fn a_click_places_the_cursor_and_a_drag_selects() {
    common::isolate_app_dirs();
    let mut h = Harness::new(
        "local alpha = 1\nlocal beta = 2\nreturn alpha",
        &[],
        &[],
        "",
    );
    h.press("<F6>"); // focus elsewhere first: the click brings it back
    let (x, y) = find(&h, "beta");
    click(&mut h, (x, y));
    assert_eq!(h.app.focus, Focus::Editor);
    assert_eq!(h.app.editor.textarea.cursor(), (1, 6));
    // Drag from "beta" to the end of "alpha" on line 3.
    let (x2, y2) = find(&h, "return alpha");
    h.mouse(MouseEventKind::Down(MouseButton::Left), x, y);
    h.mouse(MouseEventKind::Drag(MouseButton::Left), x2 + 12, y2);
    h.mouse(MouseEventKind::Up(MouseButton::Left), x2 + 12, y2);
    assert_eq!(
        h.app.editor.textarea.selection_range(),
        Some(((1, 6), (2, 12)))
    );
    h.press("<C-c>");
    assert_eq!(h.clipboard, vec![b"beta = 2\nreturn alpha".to_vec()]);
    // Shift-click extends from the cursor; a plain click ends the selection.
    let (x3, y3) = find(&h, "alpha = 1");
    h.mouse_with(
        MouseEventKind::Down(MouseButton::Left),
        x3,
        y3,
        KeyModifiers::SHIFT,
    );
    assert_eq!(
        h.app.editor.textarea.selection_range(),
        Some(((0, 6), (1, 6)))
    );
    click(&mut h, (x3, y3));
    assert_eq!(h.app.editor.textarea.selection_range(), None);
    // A click past the end of a line puts the cursor at its end.
    click(&mut h, (x3 + 40, y3));
    assert_eq!(h.app.editor.textarea.cursor(), (0, 15));
}

#[test]
fn a_click_in_a_field_focuses_it() {
    common::isolate_app_dirs();
    let mut h = Harness::sample();
    let (x, y) = find(&h, "10 60");
    click(&mut h, (x + 3, y));
    assert_eq!(h.app.focus, Focus::Argv);
    assert_eq!(h.app.inputs.argv.cursor(), (0, 3));
}

#[test]
fn the_wheel_scrolls_the_pane_under_the_pointer() {
    common::isolate_app_dirs();
    let script: Vec<String> = (1..=100)
        .map(|i| format!("redis.call('SET', 'k{i}', {i})"))
        .collect();
    let mut h = Harness::new(&script.join("\n"), &[], &[], "");
    h.press("<F5>");
    let (x, y) = find(&h, "  1 redis.call");
    for _ in 0..4 {
        h.mouse(MouseEventKind::ScrollDown, x, y);
    }
    assert_eq!(h.app.editor.scroll, 12);
    assert!(h.render(W, H).contains(" 13 redis.call('SET', 'k13', 13)"));
    // The cursor moved along to stay in view.
    assert_eq!(h.app.editor.textarea.cursor().0, 12);
    h.mouse(MouseEventKind::ScrollUp, x, y);
    assert_eq!(h.app.editor.scroll, 9);

    // Over the trace: its rows move, the editor keeps the focus.
    let (tx, ty) = find(&h, "SET k1 1");
    h.mouse(MouseEventKind::ScrollDown, tx, ty);
    assert_eq!(h.app.trace_list.selected, 3);
    assert_eq!(h.app.focus, Focus::Editor);
    // A click on a trace row selects that call.
    let (rx, ry) = find(&h, "SET k6 6");
    click(&mut h, (rx, ry));
    assert_eq!(h.app.trace_list.selected, 5);
    assert_eq!(h.app.focus, Focus::Panes);
}

#[test]
fn the_wheel_never_scrolls_the_editor_past_its_content() {
    common::isolate_app_dirs();
    let mut h = Harness::new("a\nb\nc", &[], &[], "");
    let (x, y) = find(&h, "  1 a");
    h.mouse(MouseEventKind::ScrollDown, x, y);
    assert_eq!(h.app.editor.scroll, 0);
    h.mouse(MouseEventKind::ScrollUp, x, y);
    assert_eq!(h.app.editor.scroll, 0);
}
