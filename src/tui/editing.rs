//! The editor's commands (undo, clipboard, selection, line commands, go to line): the app's side
//! of them, the text work being in editor.rs. Copy and cut also reach the system clipboard, as
//! one OSC 52 sequence the event loop writes (`Effect::Clipboard`).

use super::action::Action;
use super::app::{App, Effect, PromptPurpose};

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
