//! Read-only editor buffers: a function library opened from a live server is shown as the
//! server holds it. Every key and command that would change its text is refused with one status
//! line saying where it came from and how to get an editable copy (Ctrl-S saves it as a local file,
//! which is then an ordinary, editable script). Moving, selecting, copying, searching, running (F5
//! in the sandbox, F7) and the debugger work as on any buffer.

use super::app::App;
use ratatui::crossterm::event::{KeyCode, KeyEvent};

/// Where a read-only buffer came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOnly {
    /// The library's name (FUNCTION LIST's `library_name`).
    pub library: String,
    /// The server it was read from, as the status bar names it ("redis 7.0.15 host:port").
    pub server: String,
}

impl ReadOnly {
    /// "server library 'counters' (redis 7.0.15 host:port)".
    pub fn origin(&self) -> String {
        format!("server library '{}' ({})", self.library, self.server)
    }

    /// The file name Ctrl-S offers for the editable copy.
    pub fn file_name(&self) -> String {
        let safe: String = self
            .library
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("{safe}.lua")
    }
}

/// The status line of a refused edit.
pub fn refusal(read_only: &ReadOnly) -> String {
    format!(
        "read-only: {} — Ctrl-S saves an editable copy",
        read_only.origin()
    )
}

/// Would the editor change the text on `key` (typing, Enter, Tab, deleting)? Movement, selection
/// and keys the editor ignores are not refused.
pub fn edits(key: &KeyEvent) -> bool {
    let word = key.modifiers.intersects(
        ratatui::crossterm::event::KeyModifiers::CONTROL
            | ratatui::crossterm::event::KeyModifiers::ALT,
    );
    match key.code {
        KeyCode::Char(_) => !word,
        KeyCode::Enter | KeyCode::BackTab | KeyCode::Backspace | KeyCode::Delete => true,
        KeyCode::Tab => !word,
        _ => false,
    }
}

/// Refuse a change to a read-only buffer: true (and the status says why) when the editor is one.
pub fn refuse(app: &mut App) -> bool {
    match &app.editor.read_only {
        Some(read_only) => {
            app.status = refusal(read_only);
            true
        }
        None => false,
    }
}

/// The editor pane's title: "[read-only] server library 'x' (server)".
pub fn title(read_only: &ReadOnly) -> String {
    format!("[read-only] {}", read_only.origin())
}

/// What Ctrl-S asks on a read-only buffer: a local file name for the editable copy.
pub fn save_prompt(app: &mut App) -> bool {
    let Some(read_only) = app.editor.read_only.clone() else {
        return false;
    };
    if app.editor.path.is_some() {
        return false;
    }
    app.open_prompt(
        super::app::PromptPurpose::SaveAs,
        format!(
            "{} is read-only: save an editable copy as",
            read_only.origin()
        ),
        read_only.file_name(),
    );
    true
}

/// After the copy was saved: the buffer is that local file now, editable.
pub fn saved(app: &mut App) {
    if let Some(read_only) = app.editor.read_only.take() {
        app.status = format!(
            "{}: an editable copy of {} (the server's library is unchanged)",
            app.status,
            read_only.origin()
        );
    }
}
