//! The editor's model: tui-textarea holds the buffer, cursor, undo and selection; the editor pane
//! draws it with syntax highlighting (ui/editor.rs).

use ratatui::crossterm::event::KeyEvent;
use std::path::PathBuf;
use tui_textarea::{CursorMove, TextArea};

pub struct EditorState {
    pub textarea: TextArea<'static>,
    pub path: Option<PathBuf>,
    pub modified: bool,
    /// The line (1-based) and message of the last run's error.
    pub error: Option<(u32, String)>,
    /// First visible line (0-based).
    pub scroll: usize,
}

impl EditorState {
    pub fn new(text: &str, path: Option<PathBuf>) -> EditorState {
        let lines: Vec<String> = if text.is_empty() {
            vec![String::new()]
        } else {
            text.split('\n').map(str::to_string).collect()
        };
        let mut textarea = TextArea::new(lines);
        textarea.set_tab_length(2);
        textarea.set_hard_tab_indent(false);
        EditorState {
            textarea,
            path,
            modified: false,
            error: None,
            scroll: 0,
        }
    }

    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    pub fn on_key(&mut self, key: KeyEvent) {
        if self.textarea.input(key) {
            self.modified = true;
        }
    }

    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\t', "  ");
        if self.textarea.insert_str(text) {
            self.modified = true;
        }
    }

    pub fn set_error(&mut self, error: Option<(u32, String)>) {
        self.error = error;
    }

    /// Put the cursor on `line` (1-based).
    pub fn goto_line(&mut self, line: usize) {
        if line == 0 {
            return;
        }
        let row = (line - 1).min(self.textarea.lines().len().saturating_sub(1));
        self.textarea.move_cursor(CursorMove::Jump(row as u16, 0));
    }

    pub fn find(&mut self, pattern: &str) {
        if self.textarea.set_search_pattern(pattern).is_ok() {
            self.textarea.search_forward(true);
        }
    }

    pub fn find_next(&mut self) {
        self.textarea.search_forward(false);
    }
}
