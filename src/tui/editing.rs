//! The editor's commands (undo, clipboard, selection, line commands, go to line): the app's side
//! of them, the text work being in editor.rs. Copy and cut also reach the system clipboard, as
//! one OSC 52 sequence the event loop writes (`Effect::Clipboard`).

use super::action::Action;
use super::app::{App, Effect, PromptPurpose};
use ratatui::crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers};

/// Above this many bytes a copy stays inside evalbench: terminals drop longer OSC 52 sequences.
pub const CLIPBOARD_MAX: usize = 100_000;

/// Does `action` change the script's text (refused while debugging)?
pub fn changes_script(action: Action) -> bool {
    matches!(
        action,
        Action::Undo
            | Action::Redo
            | Action::Cut
            | Action::Paste
            | Action::ToggleComment
            | Action::Indent
            | Action::Outdent
    )
}

pub fn update(app: &mut App, action: Action) -> Vec<Effect> {
    // A debug session runs the text it started with: no edits until it ends (tui/debugger.rs).
    if app.debugger.session.is_some() && changes_script(action) {
        app.status = super::debugger::EDIT_REFUSED.into();
        return Vec::new();
    }
    // A server's library stays as it is (tui/read_only.rs).
    if changes_script(action) && super::read_only::refuse(app) {
        return Vec::new();
    }
    let editor = &mut app.editor;
    match action {
        Action::Undo if !editor.undo() => app.status = "nothing to undo".into(),
        Action::Redo if !editor.redo() => app.status = "nothing to redo".into(),
        Action::Copy | Action::Cut => {
            let copied = if action == Action::Copy {
                editor.copy()
            } else {
                editor.cut()
            };
            let verb = if action == Action::Copy {
                "copied"
            } else {
                "cut"
            };
            return match copied {
                None => {
                    app.status = format!("nothing {verb}: select text first (Shift+arrows)");
                    Vec::new()
                }
                Some(bytes) if bytes.len() > CLIPBOARD_MAX => {
                    app.status = format!(
                        "{verb} {} bytes; too many for the terminal's clipboard, Ctrl-V pastes them here",
                        bytes.len()
                    );
                    Vec::new()
                }
                Some(bytes) => {
                    app.status =
                        format!("{verb} {} bytes (to the system clipboard too)", bytes.len());
                    vec![Effect::Clipboard(bytes)]
                }
            };
        }
        Action::Paste if !editor.paste_copied() => {
            app.status =
                "nothing to paste: copy or cut first (the terminal's paste works too)".into()
        }
        Action::SelectAll => editor.select_all(),
        Action::DocumentStart => editor.to_start(false),
        Action::DocumentEnd => editor.to_end(false),
        Action::GotoLine => {
            let lines = editor.textarea.lines().len();
            app.open_prompt(
                PromptPurpose::GotoLine,
                format!("Go to line (1-{lines})"),
                "",
            );
        }
        Action::ToggleComment => editor.toggle_comment(),
        Action::Indent => editor.indent(),
        Action::Outdent => editor.outdent(),
        Action::Find => {
            let title = find_title(editor.search_regex);
            app.open_prompt(PromptPurpose::Find, title, "");
        }
        Action::FindNext | Action::FindPrevious => {
            let found = if action == Action::FindNext {
                editor.find_next()
            } else {
                editor.find_previous()
            };
            app.status = match found {
                Some(found) => found_status(found, editor.search_pattern_text()),
                None if editor.searching() => "no match (Ctrl-F searches again)".into(),
                None => "nothing to search for: Ctrl-F searches".into(),
            };
        }
        Action::ToggleWrap => {
            editor.wrap = !editor.wrap;
            app.status = if editor.wrap {
                "long lines wrap onto the next rows".into()
            } else {
                "long lines scroll sideways".into()
            };
        }
        Action::Zoom => {
            app.zoomed = !app.zoomed;
            app.status = if app.zoomed {
                "zoomed: the focused pane fills the screen (again to go back)".into()
            } else {
                "all panes shown".into()
            };
        }
        _ => {}
    }
    Vec::new()
}

/// The search prompt's title: the mode it searches in and the key that switches it.
pub fn find_title(regex: bool) -> String {
    if regex {
        "Search (regex; Alt-R: literal)".into()
    } else {
        "Search (literal; Alt-R: regex)".into()
    }
}

/// The answer to the search prompt, in the mode the prompt showed.
pub fn find(app: &mut App, input: &str) {
    let regex = app.editor.search_regex;
    app.status = match app.editor.find(input, regex) {
        Ok(_) if input.is_empty() => "search cleared".into(),
        Ok(Some(found)) => found_status(found, input),
        Ok(None) => format!("no match for '{input}'"),
        Err(e) => e,
    };
}

/// "match 3/17 of 'count(k'", with a notice when the search went round the end of the script.
fn found_status(found: super::editor::Found, pattern: &str) -> String {
    use super::editor::Wrap;
    let wrapped = match found.wrapped {
        Some(Wrap::ToTop) => " (search wrapped to top)",
        Some(Wrap::ToBottom) => " (search wrapped to bottom)",
        None => "",
    };
    format!(
        "match {}/{} of '{pattern}'{wrapped}",
        found.index, found.total
    )
}

/// The answer to the go-to-line prompt.
pub fn goto_line(app: &mut App, input: &str) {
    match input.trim().parse::<usize>() {
        Ok(line) if line >= 1 => {
            let last = app.editor.textarea.lines().len();
            app.editor.goto_line(line.min(last));
            app.status = format!("line {}", line.min(last));
        }
        _ => app.status = format!("'{input}' is not a line number"),
    }
}

/// A batch of terminal events read at once, with a paste typed key by key (a terminal without
/// bracketed paste) made one paste: a run of plain keys holding Enter Enter (how such a terminal
/// sends CRLF text) into the editor. It then goes through `EditorState::paste`, which makes each
/// CR pair one line break, and is one undo step; other runs stay keys.
pub fn key_by_key_paste(app: &App, events: Vec<Event>) -> Vec<Event> {
    if app.focus != super::app::Focus::Editor || app.overlay.is_some() {
        return events;
    }
    let typed = |event: &Event| -> Option<Option<char>> {
        let Event::Key(key) = event else { return None };
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return None;
        }
        let c = match key.code {
            KeyCode::Char(c) => c,
            KeyCode::Enter => '\r',
            KeyCode::Tab => '\t',
            _ => return None,
        };
        // A key's release (terminals reporting them) belongs to the run and adds nothing.
        Some((key.kind != KeyEventKind::Release).then_some(c))
    };
    let mut out = Vec::with_capacity(events.len());
    let mut run: Vec<Event> = Vec::new();
    let mut text = String::new();
    let flush = |run: &mut Vec<Event>, text: &mut String, out: &mut Vec<Event>| {
        if text.contains("\r\r") {
            out.push(Event::Paste(std::mem::take(text)));
            run.clear();
        } else {
            out.append(run);
            text.clear();
        }
    };
    for event in events {
        match typed(&event) {
            Some(c) => {
                text.extend(c);
                run.push(event);
            }
            None => {
                flush(&mut run, &mut text, &mut out);
                out.push(event);
            }
        }
    }
    flush(&mut run, &mut text, &mut out);
    out
}

/// The OSC 52 sequence that puts `bytes` on the terminal's clipboard: base64 inside, so no byte
/// of the script reaches the terminal as it is.
pub fn osc52(bytes: &[u8]) -> String {
    use base64::Engine;
    format!(
        "\x1b]52;c;{}\x07",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn osc52_is_base64_inside_one_sequence() {
        assert_eq!(super::osc52(b"a\x1b]0;x\x07"), "\x1b]52;c;YRtdMDt4Bw==\x07");
    }
}
