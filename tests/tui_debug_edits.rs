//! Breakpoints follow edits in the workbench (tui/debugger.rs `follow_edits`), by keys through the
//! harness: a line inserted or deleted above a breakpoint moves it with its line; deleting its line
//! removes it; the gutter shows it where its line is.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::harness::Harness;

const SCRIPT: &str = "local a = 1
local b = 2
local c = a + b
return c
";

fn breakpoint_lines(h: &Harness) -> Vec<u32> {
    h.app.debugger.breakpoints.iter().map(|b| b.line).collect()
}

/// The screen rows that show a breakpoint mark, with their text from the mark on.
fn marked_rows(h: &Harness) -> Vec<String> {
    h.render(60, 24)
        .lines()
        .filter_map(|row| {
            let at = row.find('●')?;
            Some(row[at..].split(['│', '┃']).next()?.trim_end().to_string())
        })
        .collect()
}

#[test]
fn breakpoints_move_with_their_lines_and_go_with_them() {
    common::isolate_app_dirs();
    let mut h = Harness::new(SCRIPT, &[], &[], "{}");
    h.app.editor.goto_line(3);
    h.press("<F9>");
    assert_eq!(breakpoint_lines(&h), [3]);
    assert_eq!(marked_rows(&h), ["●  3 local c = a + b"]);
    // A line inserted above (Enter at the end of line 1): the breakpoint moves down with its line.
    h.app.editor.goto_line(1);
    h.press("<End>");
    h.press("<Enter>");
    h.type_text("local z = 0");
    assert_eq!(breakpoint_lines(&h), [4]);
    assert_eq!(
        marked_rows(&h),
        ["●  4 local c = a + b"],
        "{}",
        h.render(60, 24)
    );
    // Typing on its line keeps it there; Enter at the start of its line moves it down with the text.
    h.app.editor.goto_line(4);
    h.press("<Home>");
    h.press("<Enter>");
    assert_eq!(breakpoint_lines(&h), [5]);
    // Lines deleted above (the empty line joined to the one before, twice the inserted line's
    // text removed): it moves back up.
    h.press("<Backspace>");
    assert_eq!(breakpoint_lines(&h), [4]);
    h.app.editor.goto_line(2);
    h.press("<End>");
    h.press("<S-Home>");
    h.press("<Del>");
    h.press("<Backspace>");
    assert_eq!(breakpoint_lines(&h), [3]);
    assert_eq!(
        h.app.editor.text(),
        "local a = 1\nlocal b = 2\nlocal c = a + b\nreturn c\n"
    );
    // Its line deleted (emptied, then joined to the line before): the breakpoint goes with it.
    h.app.editor.goto_line(3);
    h.press("<End>");
    h.press("<S-Home>");
    h.press("<Del>");
    assert_eq!(breakpoint_lines(&h), [3]);
    h.press("<Backspace>");
    assert_eq!(breakpoint_lines(&h), Vec::<u32>::new());
    assert_eq!(h.app.status, "breakpoint at line 3 removed with its line");
    assert!(marked_rows(&h).is_empty());
}
