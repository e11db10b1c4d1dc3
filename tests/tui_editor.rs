//! The editor as people's own editors behave: paste, undo by groups, selection and the clipboard,
//! line commands, paging and the cursor, driven by keys through the synchronous harness.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::harness::Harness;
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;
use ratatui::Terminal;

fn editor(script: &str) -> Harness {
    common::isolate_app_dirs();
    Harness::new(script, &[], &[], "")
}

fn lines(h: &Harness) -> Vec<String> {
    h.app.editor.textarea.lines().to_vec()
}

fn text(h: &Harness) -> String {
    lines(h).join("\n")
}

#[test]
fn a_bracketed_paste_arrives_as_lines_and_undoes_in_one_step() {
    let mut h = editor("");
    // Terminals send a pasted newline as CR; Windows text has CRLF.
    h.paste("local a = 1\rlocal b = 2\r\nreturn a + b\n");
    assert_eq!(
        lines(&h),
        ["local a = 1", "local b = 2", "return a + b", ""]
    );
    assert_eq!(h.app.editor.textarea.cursor(), (3, 0));
    assert!(h.render(80, 24).contains("  2 local b = 2"));
    h.press("<C-z>");
    assert_eq!(text(&h), "");
    h.press("<C-y>");
    assert_eq!(lines(&h).len(), 4);
}

#[test]
fn a_paste_into_an_open_prompt_goes_to_the_prompt() {
    let mut h = editor("return 1");
    h.press("<C-f>");
    h.paste("return\r");
    h.press("<Enter>");
    assert_eq!(text(&h), "return 1");
    assert_eq!(h.app.status, "match 1/1 of 'return '");
}

#[test]
fn undo_and_redo_go_by_words_and_deletion_runs() {
    let mut h = editor("");
    h.type_text("local abc = 1");
    h.press("<C-z>");
    assert_eq!(text(&h), "local abc = ");
    h.press("<C-z>");
    assert_eq!(text(&h), "local ");
    h.press("<C-y>");
    assert_eq!(text(&h), "local abc = ");
    h.press("<C-S-z>");
    assert_eq!(text(&h), "local abc = 1");
    h.press("<C-y>");
    assert_eq!(h.app.status, "nothing to redo");

    // A run of Backspaces is one step; moving the cursor ends a group.
    h.keys("<Backspace> <Backspace> <Backspace>");
    assert_eq!(text(&h), "local abc ");
    h.press("<C-z>");
    assert_eq!(text(&h), "local abc = 1");
    h.keys("<Home> <Del> <End>");
    h.type_text("2");
    h.press("<C-z>");
    assert_eq!(text(&h), "ocal abc = 1");
    h.press("<C-z>");
    assert_eq!(text(&h), "local abc = 1");
    assert_eq!(h.app.editor.textarea.cursor(), (0, 0));
}

#[test]
fn shift_arrows_select_and_copy_cut_paste_reach_the_clipboard() {
    let mut h = editor("hello world\nnext");
    h.keys("<End> <S-Left> <S-Left> <S-Left> <S-Left> <S-Left>");
    assert_eq!(
        h.app.editor.textarea.selection_range(),
        Some(((0, 6), (0, 11)))
    );
    h.press("<C-c>");
    assert_eq!(h.clipboard, vec![b"world".to_vec()]);
    assert_eq!(h.app.status, "copied 5 bytes (to the system clipboard too)");
    // Copying keeps the selection; cutting removes it as one undo step.
    h.press("<C-x>");
    assert_eq!(text(&h), "hello \nnext");
    assert_eq!(h.clipboard.len(), 2);
    h.keys("<Down> <End> <C-v>");
    assert_eq!(text(&h), "hello \nnextworld");
    h.press("<C-z>");
    assert_eq!(text(&h), "hello \nnext");
    h.press("<C-z>");
    assert_eq!(text(&h), "hello world\nnext");
    // Nothing selected: nothing copied, and the status says what to do.
    h.keys("<Home> <C-c>");
    assert_eq!(h.clipboard.len(), 2);
    assert_eq!(
        h.app.status,
        "nothing copied: select text first (Shift+arrows)"
    );
}

#[test]
fn the_selection_is_drawn() {
    let mut h = editor("hello world");
    h.keys("<S-Right> <S-Right>");
    let theme = h.theme.clone();
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|f| evalbench::tui::ui::draw(f, &h.app, &theme))
        .unwrap();
    let buf = terminal.backend().buffer();
    let row = (0..24)
        .find(|&y| {
            (0..80)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .contains("hello world")
        })
        .expect("the line");
    let x = (0..80).find(|&x| buf[(x, row)].symbol() == "h").unwrap();
    assert_eq!(
        buf[(x, row)].style().bg,
        theme.selection.bg,
        "h is selected"
    );
    assert_eq!(
        buf[(x + 1, row)].style().bg,
        theme.selection.bg,
        "e is selected"
    );
    assert!(
        buf[(x + 2, row)].modifier.contains(Modifier::REVERSED),
        "the cursor is after the selection"
    );
}

#[test]
fn select_all_then_typing_replaces_everything() {
    let mut h = editor("a\nb\nc");
    h.press("<C-a>");
    h.type_text("x");
    assert_eq!(text(&h), "x");
    h.press("<C-z>");
    assert_eq!(text(&h), "a\nb\nc");
}

#[test]
fn ctrl_home_end_and_go_to_line() {
    let script: Vec<String> = (1..=50).map(|i| format!("local v{i} = {i}")).collect();
    let mut h = editor(&script.join("\n"));
    h.press("<C-End>");
    assert_eq!(h.app.editor.textarea.cursor(), (49, 14));
    h.press("<C-Home>");
    assert_eq!(h.app.editor.textarea.cursor(), (0, 0));
    h.press("<C-g>");
    h.type_text("30\n");
    assert_eq!(h.app.editor.textarea.cursor(), (29, 0));
    h.press("<C-g>");
    h.type_text("thirty\n");
    assert_eq!(h.app.status, "'thirty' is not a line number");
}

#[test]
fn toggle_comment_on_selected_lines() {
    let mut h = editor("local a = 1\n  local b = 2\nreturn a");
    h.keys("<S-Down> <S-Right>");
    h.press("<C-/>");
    assert_eq!(text(&h), "-- local a = 1\n--   local b = 2\nreturn a");
    // The byte terminals send for Ctrl-/ toggles too; the selection stays on the same text.
    h.press("<C-7>");
    assert_eq!(text(&h), "local a = 1\n  local b = 2\nreturn a");
    assert_eq!(
        h.app.editor.textarea.selection_range(),
        Some(((0, 0), (1, 1)))
    );
    h.press("<C-z>");
    assert_eq!(text(&h), "-- local a = 1\n--   local b = 2\nreturn a");
}

#[test]
fn enter_keeps_the_indent_and_indents_after_a_block_opens() {
    let mut h = editor("");
    h.type_text("if x then\nreturn 1\n");
    h.press("<BackTab>");
    h.type_text("end");
    assert_eq!(text(&h), "if x then\n  return 1\nend");
}

#[test]
fn tab_and_shift_tab_indent_and_outdent_a_selection() {
    let mut h = editor("a\nb\n\nc");
    h.keys("<S-Down> <S-Down> <S-Down> <S-End> <Tab>");
    assert_eq!(text(&h), "  a\n  b\n\n  c");
    h.press("<BackTab>");
    assert_eq!(text(&h), "a\nb\n\nc");
    // Without a selection Tab inserts an indent.
    h.keys("<C-Home> <Tab>");
    assert_eq!(text(&h), "  a\nb\n\nc");
}

#[test]
fn page_down_moves_by_the_pane_height() {
    let script: Vec<String> = (1..=200).map(|i| format!("local v{i} = {i}")).collect();
    let mut h = editor(&script.join("\n"));
    h.render(120, 40); // the pane's height is known after a draw
    let height = h.app.editor.viewport.get() as usize;
    assert!(height >= 10, "{height}");
    h.press("<PageDown>");
    assert_eq!(h.app.editor.textarea.cursor().0, height);
    assert_eq!(h.app.editor.scroll, height);
    h.press("<PageDown>");
    assert_eq!(h.app.editor.textarea.cursor().0, 2 * height);
    h.press("<PageUp>");
    assert_eq!(h.app.editor.textarea.cursor().0, height);
    assert!(h
        .render(120, 40)
        .contains(&format!("{} local v{}", height + 1, height + 1)));
}

#[test]
fn the_cursor_shows_only_in_the_focused_field() {
    let h = editor("return 1");
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    terminal
        .draw(|f| evalbench::tui::ui::draw(f, &h.app, &h.theme))
        .unwrap();
    let buf = terminal.backend().buffer();
    let row_of = |label: &str| {
        (0..40)
            .find(|&y| {
                (0..120)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
                    .contains(label)
            })
            .expect(label)
    };
    // The fields' text rows (under their titles) show no cursor while the editor has focus.
    for field in ["KEYS (", "ARGV ("] {
        let y = row_of(field) + 1;
        let reversed: Vec<u16> = (0..60)
            .filter(|&x| buf[(x, y)].modifier.contains(Modifier::REVERSED))
            .collect();
        assert!(
            reversed.is_empty(),
            "{field} row shows a cursor at {reversed:?}"
        );
    }
    let y = row_of("return 1");
    let x = (0..120).find(|&x| buf[(x, y)].symbol() == "r").unwrap();
    assert!(
        buf[(x, y)].modifier.contains(Modifier::REVERSED),
        "the editor's cursor"
    );
}

#[test]
fn a_failed_search_says_no_match() {
    let mut h = editor("return 1");
    h.press("<C-f>");
    h.type_text("nothing\n");
    assert_eq!(h.app.status, "no match for 'nothing'");
    h.press("<F3>");
    assert_eq!(h.app.status, "no match (Ctrl-F searches again)");
}

fn prompt_input(h: &Harness) -> String {
    match &h.app.overlay {
        Some(evalbench::tui::app::Overlay::Prompt(p)) => p.input.clone(),
        _ => panic!("no prompt open"),
    }
}

#[test]
fn typing_replaces_a_prefilled_prompt_and_ctrl_u_ctrl_w_edit_it() {
    let mut h = editor("return 1");
    h.keys("<A-3> w"); // save the seed: prefilled "seed.json"
    assert_eq!(prompt_input(&h), "seed.json");
    h.type_text("out.json");
    assert_eq!(prompt_input(&h), "out.json");
    h.type_text(" more words");
    h.press("<C-w>");
    assert_eq!(prompt_input(&h), "out.json more ");
    h.press("<C-u>");
    assert_eq!(prompt_input(&h), "");
    h.press("<Esc>");
    // Backspace on a prefilled value clears it; End keeps it to edit.
    h.keys("w <Backspace>");
    assert_eq!(prompt_input(&h), "");
    h.keys("<Esc> w <End>");
    h.type_text("x");
    assert_eq!(prompt_input(&h), "seed.jsonx");
}

/// A pasted expression nested far deeper than the lint's parser takes: the paste stays whole, the
/// screen draws, and lint while typing (on its own thread, with a thread's default stack) says
/// where it stopped instead of bringing the workbench down.
#[test]
fn a_pasted_deep_expression_stays_and_lint_says_it_is_too_deep() {
    use std::time::{Duration, Instant};
    let mut h = editor("");
    h.app.lint.enabled = true;
    h.app.lint.idle = Duration::ZERO;
    let deep = format!("local a = 1\rreturn a{}\r", "+a".repeat(200_000));
    h.paste(&deep);
    let expected = deep.replace('\r', "\n");
    // (assert! rather than assert_eq!: a failure would print 400 KB)
    assert!(h.app.editor.text() == expected, "the paste is not whole");
    let screen = h.render(80, 24);
    assert!(screen.contains("  2 return a+a+a+a"), "{screen}");
    let sha = h.app.editor.sha1();
    let waited = Instant::now();
    while !h.app.lint.current(&sha) {
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "the lint never came"
        );
        std::thread::sleep(Duration::from_millis(5));
        h.settle();
    }
    let found: Vec<(&str, usize, usize, String)> = h
        .app
        .lint
        .diagnostics()
        .iter()
        .map(|d| (d.rule, d.line, d.column, d.message.clone()))
        .collect();
    assert_eq!(
        found,
        vec![(
            "not-analysed",
            2,
            4007,
            "expression nested deeper than 2000 at line 2, column 4007: only Lua's compile check ran"
                .to_string()
        )]
    );
    // Typing after it goes on.
    h.type_text("-- end");
    assert!(h.app.editor.text() == format!("{expected}-- end"));
}

#[test]
fn end_else_elseif_and_until_outdent_as_typed() {
    let mut h = editor("");
    h.type_text("local function f(x)\nif x then\nreturn 1\nelseif y then\nreturn 2\nelse\nfor i = 1, 3 do\nx()\nend\nend\nend\n");
    assert_eq!(
        text(&h),
        "local function f(x)\n  if x then\n    return 1\n  elseif y then\n    return 2\n  else\n    for i = 1, 3 do\n      x()\n    end\n  end\nend\n"
    );
    // repeat ... until, and a one-line block above does not count.
    let mut h = editor("");
    h.type_text("repeat\nif a then b() end\nuntil done");
    assert_eq!(text(&h), "repeat\n  if a then b() end\nuntil done");
    // A word that only starts with `end` is not a closer; a comment or a string is no block.
    let mut h = editor("");
    h.type_text("do\n-- if only\nlocal s = 'do'\nendpoint = 1");
    assert_eq!(
        text(&h),
        "do\n  -- if only\n  local s = 'do'\n  endpoint = 1"
    );
    // The outdent is part of the typing: one undo takes the word and its indent change back.
    let mut h = editor("if x then\n  y()\n  ");
    h.keys("<C-End>");
    h.type_text("end");
    assert_eq!(text(&h), "if x then\n  y()\nend");
    assert_eq!(h.app.editor.textarea.cursor(), (2, 3));
    h.press("<C-z>");
    assert_eq!(text(&h), "if x then\n  y()\n  ");
}

#[test]
fn search_is_literal_by_default_with_a_count_a_wrap_notice_and_previous() {
    let mut h = editor("local n = count(k)\nreturn count(k) + count(kk)\nlocal m = 1");
    h.press("<C-f>");
    assert!(h.render(100, 30).contains("Search (literal; Alt-R: regex)"));
    h.type_text("count(k\n");
    assert_eq!(h.app.status, "match 1/3 of 'count(k'");
    assert_eq!(h.app.editor.textarea.cursor(), (0, 10));
    h.press("<F3>");
    assert_eq!(h.app.status, "match 2/3 of 'count(k'");
    assert_eq!(h.app.editor.textarea.cursor(), (1, 7));
    h.press("<A-n>");
    assert_eq!(h.app.editor.textarea.cursor(), (1, 18));
    h.press("<F3>");
    assert_eq!(
        h.app.status,
        "match 1/3 of 'count(k' (search wrapped to top)"
    );
    assert_eq!(h.app.editor.textarea.cursor(), (0, 10));
    h.press("<A-N>");
    assert_eq!(
        h.app.status,
        "match 3/3 of 'count(k' (search wrapped to bottom)"
    );
    h.press("<A-N>");
    assert_eq!(h.app.status, "match 2/3 of 'count(k'");
    // Alt-R switches the prompt to a regex (the title says so); an invalid one is one line.
    h.keys("<C-f> <A-r>");
    assert!(h.render(100, 30).contains("Search (regex; Alt-R: literal)"));
    h.type_text("count(k\n");
    assert_eq!(
        h.app.status,
        "not a valid regex: unclosed group (Alt-R in the search prompt searches literally)"
    );
    h.keys("<C-Home> <C-f>");
    assert!(h.render(100, 30).contains("Search (regex; Alt-R: literal)"));
    h.type_text("count\\(k+\\)\n");
    assert_eq!(h.app.status, "match 1/3 of 'count\\(k+\\)'");
    assert_eq!(h.app.editor.textarea.cursor(), (0, 10));
}

#[test]
fn cr_cr_from_a_terminals_crlf_paste_is_one_line_break() {
    // Bracketed: CRLF text pasted by a terminal arrives with each line end as CR CR.
    let mut h = editor("");
    h.paste("local a = 1\r\r\r\rreturn a\r\r");
    assert_eq!(lines(&h), ["local a = 1", "", "return a", ""]);
    // LF text (each line end one CR): a blank line stays a blank line.
    let mut h = editor("");
    h.paste("local a = 1\r\rlocal b = 2\rreturn a");
    assert_eq!(lines(&h), ["local a = 1", "", "local b = 2", "return a"]);
    // Key by key (no bracketed paste): the burst becomes one paste, one undo step.
    let mut h = editor("");
    h.key_burst("local a = 1\r\rreturn a\r\r");
    assert_eq!(lines(&h), ["local a = 1", "return a", ""]);
    h.press("<C-z>");
    assert_eq!(text(&h), "");
    // Keys typed one at a time are keys: Enter Enter is a blank line, with auto-indent.
    let mut h = editor("");
    h.type_text("if x then\n\ny");
    assert_eq!(text(&h), "if x then\n  \n  y");
}

#[test]
fn keys_and_argv_follow_the_shells_quoting() {
    let mut h = editor("return 1");
    h.press("<F6>");
    assert_eq!(h.app.focus, evalbench::tui::app::Focus::Keys);
    h.type_text(r#"'it'\''s' "a b" c\ d 'x'"y" """#);
    let (keys, _) = h.app.inputs.parsed().expect("shell quoting");
    let keys: Vec<String> = keys
        .into_iter()
        .map(|k| String::from_utf8(k).unwrap())
        .collect();
    assert_eq!(keys, ["it's", "a b", "c d", "xy", ""]);
    // Values written back to the form read back the same.
    let form = evalbench::tui::inputs::InputsState::from_lists(&keys, &[r"back\slash".into()]);
    let (again, argv) = form.parsed().unwrap();
    assert_eq!(again.len(), 5);
    assert_eq!(String::from_utf8(again[0].clone()).unwrap(), "it's");
    assert_eq!(argv, [b"back\\slash".to_vec()]);
    // An error says which character, where, and what to do; in the field's title too.
    h.press("<F6>");
    h.type_text("10 'open");
    assert_eq!(
        h.app.inputs.parsed().unwrap_err(),
        "ARGV: the ' at column 4 is never closed: close it, or write \\' for the character itself"
    );
    assert!(h
        .render(120, 40)
        .contains("ARGV: the ' at column 4 is never closed"));
}
