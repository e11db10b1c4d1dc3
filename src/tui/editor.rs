//! The editor's model: tui-textarea holds the buffer, cursor, undo and selection; the editor pane
//! draws it with syntax highlighting (ui/editor.rs), reading the highlight cache kept here.

use super::highlight::LineHighlighter;
use ratatui::crossterm::event::KeyEvent;
use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use tui_textarea::{CursorMove, TextArea};

/// Bytes that are not UTF-8 live in the buffer as one character each, from this private-use range
/// (U+10FF80..=U+10FFFF for the bytes 0x80..=0xFF: an invalid byte is never below 0x80), so the
/// buffer stays a `String` and every byte survives open → edit → save. The editor shows such a
/// character as `\xNN`; it is edited as one character (the cursor steps over it, Backspace removes
/// the byte). A character of the range found in a file or a paste is kept as its four bytes.
const RAW_BYTE_BASE: u32 = 0x10FF00;

/// The byte a buffer character stands for, when it stands for one.
pub fn raw_byte(c: char) -> Option<u8> {
    let v = c as u32;
    (v >= RAW_BYTE_BASE + 0x80).then(|| (v - RAW_BYTE_BASE) as u8)
}

fn push_raw(out: &mut String, bytes: &[u8]) {
    for &b in bytes {
        out.push(char::from_u32(RAW_BYTE_BASE + b as u32).expect("in the private-use range"));
    }
}

/// A script's bytes as buffer text (see `RAW_BYTE_BASE`).
pub fn decode_script(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if raw_byte(c).is_some() {
                push_raw(&mut out, c.encode_utf8(&mut [0; 4]).as_bytes());
            } else {
                out.push(c);
            }
        }
        push_raw(&mut out, chunk.invalid());
    }
    out
}

/// Buffer text back to the script's bytes.
pub fn encode_script(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        match raw_byte(c) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out
}

pub struct EditorState {
    pub textarea: TextArea<'static>,
    pub path: Option<PathBuf>,
    pub modified: bool,
    /// The line (1-based) and message of the last run's error.
    pub error: Option<(u32, String)>,
    /// First visible line (0-based); follows the cursor.
    pub scroll: usize,
    /// Text rows of the editor pane at the last draw (drawing records it; key handling reads it to
    /// keep the cursor in view).
    pub viewport: Cell<u16>,
    /// Per-line syntax highlighting, filled lazily while drawing.
    pub highlight: RefCell<LineHighlighter>,
    /// Every line of the file ended with CRLF: lines are shown without the CR and saved with it.
    /// Otherwise a CR is part of its line (shown as `\r`), so mixed endings survive too.
    crlf: bool,
    /// Bumped on every change of the text; keys the SHA1 cache.
    revision: u64,
    /// The script's SHA1 at a revision (the status bar shows it on every frame).
    sha: RefCell<Option<(u64, String)>>,
}

/// The first visible row so that `row` is in a window of `height` rows, moving `scroll` as little
/// as possible. Shared by key handling and drawing (which must agree after a resize).
pub fn follow(scroll: usize, row: usize, height: usize) -> usize {
    let height = height.max(1);
    if row < scroll {
        row
    } else if row >= scroll + height {
        row + 1 - height
    } else {
        scroll
    }
}

impl EditorState {
    /// `text` is buffer text: from `decode_script` for a file's bytes.
    pub fn new(text: &str, path: Option<PathBuf>) -> EditorState {
        let crlf =
            text.contains('\n') && text.matches('\n').count() == text.matches("\r\n").count();
        let lines: Vec<String> = if text.is_empty() {
            vec![String::new()]
        } else if crlf {
            text.split("\r\n").map(str::to_string).collect()
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
            viewport: Cell::new(20),
            highlight: RefCell::new(LineHighlighter::new()),
            crlf,
            revision: 0,
            sha: RefCell::new(None),
        }
    }

    /// The SHA1 of the script as EVAL would compute it, recomputed only after a change.
    pub fn sha1(&self) -> String {
        let mut cache = self.sha.borrow_mut();
        match &*cache {
            Some((revision, sha)) if *revision == self.revision => sha.clone(),
            _ => {
                let sha = crate::engine::script::sha1_hex(&self.bytes());
                *cache = Some((self.revision, sha.clone()));
                sha
            }
        }
    }

    /// The buffer text (what the autosave keeps; `bytes` for the file's bytes).
    pub fn text(&self) -> String {
        self.textarea
            .lines()
            .join(if self.crlf { "\r\n" } else { "\n" })
    }

    /// The script's bytes, as saved and run.
    pub fn bytes(&self) -> Vec<u8> {
        encode_script(&self.text())
    }

    /// Keep the cursor inside the viewport.
    fn follow_cursor(&mut self) {
        let row = self.textarea.cursor().0;
        self.scroll = follow(self.scroll, row, self.viewport.get() as usize);
    }

    pub fn on_key(&mut self, key: KeyEvent) {
        if self.textarea.input(key) {
            self.modified = true;
            self.revision += 1;
        }
        self.follow_cursor();
    }

    pub fn paste(&mut self, text: &str) {
        let text = decode_script(text.replace("\r\n", "\n").replace('\t', "  ").as_bytes());
        if self.textarea.insert_str(text) {
            self.modified = true;
            self.revision += 1;
        }
        self.follow_cursor();
    }

    pub fn set_error(&mut self, error: Option<(u32, String)>) {
        self.error = error;
    }

    /// Put the cursor on `line` (1-based); a line out of view is brought to a third of the pane
    /// so the lines around it show too.
    pub fn goto_line(&mut self, line: usize) {
        if line == 0 {
            return;
        }
        let row = (line - 1).min(self.textarea.lines().len().saturating_sub(1));
        self.textarea
            .move_cursor(CursorMove::Jump(row.min(u16::MAX as usize) as u16, 0));
        let height = self.viewport.get().max(1) as usize;
        if row < self.scroll || row >= self.scroll + height {
            self.scroll = row.saturating_sub(height / 3);
        }
    }

    pub fn find(&mut self, pattern: &str) {
        if self.textarea.set_search_pattern(pattern).is_ok() {
            self.textarea.search_forward(true);
        }
        self.follow_cursor();
    }

    pub fn find_next(&mut self) {
        self.textarea.search_forward(false);
        self.follow_cursor();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};

    #[test]
    fn scroll_follows_the_cursor() {
        let text: Vec<String> = (0..100).map(|i| format!("local x = {i}")).collect();
        let mut ed = EditorState::new(&text.join("\n"), None);
        ed.viewport.set(10);
        let down = KeyEvent::new(KeyCode::Down, KeyModifiers::NONE);
        for _ in 0..15 {
            ed.on_key(down);
        }
        assert_eq!(ed.textarea.cursor().0, 15);
        assert_eq!(ed.scroll, 6);
        ed.goto_line(80);
        assert_eq!(ed.scroll, 79 - 3);
        ed.goto_line(1);
        assert_eq!(ed.scroll, 0);
        assert_eq!(follow(50, 10, 0), 10);
    }

    #[test]
    fn sha1_follows_edits() {
        let mut editor = super::EditorState::new("return 1", None);
        assert_eq!(editor.sha1(), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
        editor.textarea.move_cursor(tui_textarea::CursorMove::End);
        editor.on_key(ratatui::crossterm::event::KeyEvent::new(
            ratatui::crossterm::event::KeyCode::Char(' '),
            ratatui::crossterm::event::KeyModifiers::NONE,
        ));
        assert_eq!(editor.sha1(), "90a2482bf05c35264ba010507ec8f88c2dd96f87");
    }
}
