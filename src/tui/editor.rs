//! The editor's model: tui-textarea holds the buffer, cursor, undo and selection; the editor pane
//! draws it with syntax highlighting (ui/editor.rs), reading the highlight cache kept here.

use super::highlight::LineHighlighter;
use super::undo::{EditKind, History};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
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
    // Raw bytes are shown as non-ASCII characters: an ASCII text (nearly every script) is its own
    // bytes, copied at memory speed (this runs for the hash on every keystroke).
    if text.is_ascii() {
        return text.as_bytes().to_vec();
    }
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
    /// Opened from a live server: edits are refused, Ctrl-S saves an editable copy.
    pub read_only: Option<super::read_only::ReadOnly>,
    /// The line (1-based) and message of the last run's error.
    pub error: Option<(u32, String)>,
    /// First visible line (0-based); follows the cursor.
    pub scroll: usize,
    /// Long lines continue on the next rows (Alt-W) instead of scrolling sideways.
    pub wrap: bool,
    /// Text rows of the editor pane at the last draw (drawing records it; key handling reads it to
    /// keep the cursor in view).
    pub viewport: Cell<u16>,
    /// Per-line syntax highlighting, filled lazily while drawing.
    pub highlight: RefCell<LineHighlighter>,
    /// Every line of the file ended with CRLF: lines are shown without the CR and saved with it.
    /// Otherwise a CR is part of its line (shown as `\r`), so mixed endings survive too.
    crlf: bool,
    /// Undo and redo by edit groups (tui-textarea's own history is one step per character).
    history: History,
    /// The search pattern (as a regex), set again when the buffer is rebuilt.
    search: Option<String>,
    /// The search pattern as typed (for the status line).
    search_text: String,
    /// The last search was a regex (the search prompt opens in the same mode).
    pub search_regex: bool,
    /// Bumped on every change of the text; keys the SHA1 cache.
    revision: u64,
    /// The script's SHA1 at a revision (the status bar shows it on every frame).
    sha: RefCell<Option<(u64, String)>>,
}

/// One indent step (what Tab inserts; the editor shows a tab as wide).
const INDENT: &str = "  ";

/// A TextArea as the editor uses it: two-space indent, no history of its own (see `undo`).
fn new_textarea(lines: Vec<String>) -> TextArea<'static> {
    let mut textarea = TextArea::new(lines);
    textarea.set_tab_length(INDENT.len() as u8);
    textarea.set_hard_tab_indent(false);
    textarea.set_max_histories(0);
    textarea
}

/// Whether the text before the cursor opens a Lua block (Enter indents one step more).
fn opens_block(before: &str) -> bool {
    let code = before.split("--").next().unwrap_or("").trim_end();
    let last_word = code
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    matches!(last_word, "then" | "do" | "else" | "repeat")
        || code.ends_with('{')
        || code.ends_with('(')
        || (code.ends_with(')') && code.contains("function"))
}

/// Words that close a block (or continue an `if`): typed as a line's first word, the line takes
/// the indent of the block they belong to.
const CLOSERS: [&str; 4] = ["end", "else", "elseif", "until"];

/// The words of a line's code, in order: comments and the text of quoted strings left out (a
/// keyword inside them does not open or close a block).
fn code_words(line: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut start = None;
    while i < bytes.len() {
        let b = bytes[i];
        let ident = b.is_ascii_alphanumeric() || b == b'_';
        if ident {
            start.get_or_insert(i);
            i += 1;
            continue;
        }
        if let Some(s) = start.take() {
            words.push(&line[s..i]);
        }
        match b {
            b'-' if bytes.get(i + 1) == Some(&b'-') => return words,
            b'"' | b'\'' => {
                // Skip to the closing quote (a backslash escapes the next byte).
                i += 1;
                while i < bytes.len() && bytes[i] != b {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            _ => {}
        }
        i += 1;
    }
    if let Some(s) = start {
        words.push(&line[s..]);
    }
    words
}

/// The indent of the line holding the block that `row`'s closer belongs to: the nearest unclosed
/// `function`/`do`/`if`/`repeat` above (or an `else`/`elseif` of the same `if`).
fn block_indent(lines: &[String], row: usize) -> Option<String> {
    let mut depth = 0usize;
    for line in lines[..row].iter().rev() {
        for word in code_words(line).into_iter().rev() {
            match word {
                "end" | "until" => depth += 1,
                "else" | "elseif" if depth == 0 => return Some(indent_of(line)),
                "function" | "do" | "if" | "repeat" if depth == 0 => return Some(indent_of(line)),
                "function" | "do" | "if" | "repeat" => depth -= 1,
                _ => {}
            }
        }
    }
    None
}

fn indent_of(line: &str) -> String {
    line.chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// After a typed character: when it completed `end`, `else`, `elseif` or `until` as the first
/// word of its line, move the line to its block's indent (as editors do while typing).
fn outdent_closer(t: &mut TextArea<'static>) {
    let (row, col) = t.cursor();
    if row > u16::MAX as usize {
        return; // CursorMove::Jump could not come back to this row
    }
    let line = &t.lines()[row];
    let before: String = line.chars().take(col).collect();
    let word = before.trim_start();
    let after_is_word = line
        .chars()
        .nth(col)
        .is_some_and(|c| c.is_alphanumeric() || c == '_');
    if after_is_word {
        return;
    }
    // A word that went on past a closer (`endpoint`): back to the indent Enter gave the line.
    let went_on = word.len() > 1
        && word.is_ascii()
        && word.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && CLOSERS.contains(&&word[..word.len() - 1])
        && !CLOSERS.contains(&word);
    let indent = if CLOSERS.contains(&word) {
        block_indent(t.lines(), row)
    } else if went_on && row > 0 {
        let above = &t.lines()[row - 1];
        let mut indent = indent_of(above);
        if opens_block(above) {
            indent.push_str(INDENT);
        }
        Some(indent)
    } else {
        None
    };
    let Some(indent) = indent else {
        return;
    };
    let current = indent_of(line);
    if current == indent {
        return;
    }
    let width = |s: &str| s.chars().count();
    t.move_cursor(CursorMove::Head);
    for _ in 0..width(&current) {
        t.delete_next_char();
    }
    t.insert_str(&indent);
    let col = col - width(&current) + width(&indent);
    t.move_cursor(CursorMove::Jump(
        row.min(u16::MAX as usize) as u16,
        col as u16,
    ));
}

/// A paste's line breaks as `\n`: CRLF, LF and CR are one break each, except in a paste whose
/// breaks all come as pairs of CR: a terminal pasting CRLF text sends each line end as CR CR
/// (it turns the LF into a CR too), so there a pair is one break.
pub fn paste_line_breaks(text: &str) -> String {
    let crlf_as_cr_pairs = !text.contains('\n')
        && text.contains('\r')
        && text
            .split(|c| c != '\r')
            .all(|run| run.len().is_multiple_of(2));
    if crlf_as_cr_pairs {
        text.replace("\r\r", "\n")
    } else {
        text.replace("\r\n", "\n").replace('\r', "\n")
    }
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
        EditorState {
            textarea: new_textarea(lines),
            history: History::default(),
            search: None,
            search_regex: false,
            search_text: String::new(),
            path,
            modified: false,
            read_only: None,
            error: None,
            scroll: 0,
            wrap: false,
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

    /// Bumped on every change of the text (the debugger's breakpoints follow edits by it).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The buffer's lines (the debugger's breakpoints follow edits by them).
    pub fn lines(&self) -> &[String] {
        self.textarea.lines()
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

    /// One edit through the undo history: `kind` decides whether it joins the group in progress.
    fn edit(
        &mut self,
        kind: EditKind,
        typed: Option<char>,
        f: impl FnOnce(&mut TextArea<'static>) -> bool,
    ) -> bool {
        if self.textarea.is_selecting() {
            self.history.seal(); // replacing a selection is a step of its own
        }
        self.history
            .begin(kind, typed, self.textarea.lines(), self.textarea.cursor());
        let changed = f(&mut self.textarea);
        self.history.edited(self.textarea.cursor(), typed);
        if changed {
            self.touched();
        }
        self.follow_cursor();
        changed
    }

    fn touched(&mut self) {
        self.modified = true;
        self.revision += 1;
    }

    /// Whether the highlighting shown is partly guessed (after a jump far into a large file) and
    /// the exact pass has more to do (`catch_up_highlight`).
    pub fn highlight_behind(&self) -> bool {
        self.highlight.borrow().behind()
    }

    /// Go on with the exact highlighting for about `budget` (the event loop, while idle); whether
    /// there is more to do.
    pub fn catch_up_highlight(&self, budget: std::time::Duration) -> bool {
        self.highlight
            .borrow_mut()
            .catch_up(self.textarea.lines(), budget)
    }

    /// Move the cursor; `extend` grows the selection (Shift), otherwise the selection ends.
    pub fn move_cursor(&mut self, to: CursorMove, extend: bool) {
        if extend {
            if !self.textarea.is_selecting() {
                self.textarea.start_selection();
            }
        } else {
            self.textarea.cancel_selection();
        }
        self.textarea.move_cursor(to);
        self.history.seal();
        self.follow_cursor();
    }

    /// To the start of the script.
    pub fn to_start(&mut self, extend: bool) {
        self.move_cursor(CursorMove::Top, extend);
        self.move_cursor(CursorMove::Head, extend);
    }

    /// To the end of the script (its last line's end).
    pub fn to_end(&mut self, extend: bool) {
        self.move_cursor(CursorMove::Bottom, extend);
        self.move_cursor(CursorMove::End, extend);
    }

    /// Put the cursor at (row, column), clamped to the text (the selection stays as it is).
    fn jump(&mut self, (row, col): (usize, usize)) {
        let fits = |v: usize| v.min(u16::MAX as usize) as u16;
        self.textarea
            .move_cursor(CursorMove::Jump(fits(row), fits(col)));
        // Rows past 65535 (CursorMove::Jump takes u16): walk the rest.
        let mut at = self.textarea.cursor().0;
        while at < row && at + 1 < self.textarea.lines().len() {
            self.textarea.move_cursor(CursorMove::Down);
            at += 1;
        }
    }

    /// Select from `anchor` to `cursor` (the cursor ends at `cursor`).
    pub fn select(&mut self, anchor: (usize, usize), cursor: (usize, usize)) {
        self.textarea.cancel_selection();
        self.jump(anchor);
        self.textarea.start_selection();
        self.jump(cursor);
        self.history.seal();
        self.follow_cursor();
    }

    /// A click (or a drag, `extend`) at (row, column).
    pub fn click(&mut self, row: usize, col: usize, extend: bool) {
        if extend {
            if !self.textarea.is_selecting() {
                self.textarea.start_selection();
            }
        } else {
            self.textarea.cancel_selection();
        }
        self.jump((row, col));
        self.history.seal();
        self.follow_cursor();
    }

    /// Scroll the view by `lines` (the wheel); the cursor stays on a line in view.
    pub fn scroll_view(&mut self, lines: isize) {
        let height = self.viewport.get().max(1) as usize;
        let len = self.textarea.lines().len();
        let max = len.saturating_sub(height);
        self.scroll = (self.scroll as isize + lines).clamp(0, max as isize) as usize;
        let (row, col) = self.textarea.cursor();
        let inside = row.clamp(self.scroll, self.scroll + height - 1);
        if inside != row {
            self.jump((inside, col));
            self.history.seal();
        }
    }

    /// A key that no binding took: typing, deleting and moving the cursor.
    pub fn on_key(&mut self, key: KeyEvent) {
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let word = key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Char(c) if !word => {
                self.edit(EditKind::Typing, Some(c), |t| {
                    t.insert_char(c);
                    outdent_closer(t);
                    true
                });
            }
            KeyCode::Enter => self.newline(),
            KeyCode::Tab if !word => self.indent(),
            KeyCode::BackTab => self.outdent(),
            KeyCode::Backspace => {
                self.edit(EditKind::Deleting, None, |t| {
                    if word {
                        t.delete_word()
                    } else {
                        t.delete_char()
                    }
                });
            }
            KeyCode::Delete => {
                self.edit(EditKind::Deleting, None, |t| {
                    if word {
                        t.delete_next_word()
                    } else {
                        t.delete_next_char()
                    }
                });
            }
            KeyCode::Left if word => self.move_cursor(CursorMove::WordBack, shift),
            KeyCode::Right if word => self.move_cursor(CursorMove::WordForward, shift),
            KeyCode::Left => self.move_cursor(CursorMove::Back, shift),
            KeyCode::Right => self.move_cursor(CursorMove::Forward, shift),
            KeyCode::Up => self.move_cursor(CursorMove::Up, shift),
            KeyCode::Down => self.move_cursor(CursorMove::Down, shift),
            KeyCode::Home if word => self.to_start(shift),
            KeyCode::End if word => self.to_end(shift),
            KeyCode::Home => self.move_cursor(CursorMove::Head, shift),
            KeyCode::End => self.move_cursor(CursorMove::End, shift),
            KeyCode::PageUp => self.page(-1, shift),
            KeyCode::PageDown => self.page(1, shift),
            _ => {}
        }
    }

    /// Move a page (the pane's height at the last draw) up or down, the view with it.
    pub fn page(&mut self, direction: isize, extend: bool) {
        let height = self.viewport.get().max(1) as usize;
        let last = self.textarea.lines().len().saturating_sub(1);
        let (row, col) = self.textarea.cursor();
        let target = if direction < 0 {
            row.saturating_sub(height)
        } else {
            (row + height).min(last)
        };
        if extend && !self.textarea.is_selecting() {
            self.textarea.start_selection();
        } else if !extend {
            self.textarea.cancel_selection();
        }
        self.jump((target, col));
        let max_scroll = (last + 1).saturating_sub(height);
        self.scroll = if direction < 0 {
            self.scroll.saturating_sub(height)
        } else {
            (self.scroll + height).min(max_scroll)
        };
        self.history.seal();
        self.follow_cursor();
    }

    /// Enter: a new line indented as this one, one step more after a line that opens a block.
    fn newline(&mut self) {
        let (row, col) = self.textarea.cursor();
        let line = &self.textarea.lines()[row];
        let before: String = line.chars().take(col).collect();
        let mut indent: String = before
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        if opens_block(&before) {
            indent.push_str(INDENT);
        }
        self.edit(EditKind::Typing, Some('\n'), |t| {
            t.insert_newline();
            t.insert_str(&indent);
            true
        });
    }

    /// The rows a line command works on: the selected lines (a selection ending at the start of a
    /// line leaves that line out), or the cursor's line.
    fn line_rows(&self) -> std::ops::RangeInclusive<usize> {
        match self.textarea.selection_range() {
            Some(((r0, _), (r1, c1))) if r1 > r0 && c1 == 0 => r0..=r1 - 1,
            Some(((r0, _), (r1, _))) => r0..=r1,
            None => {
                let row = self.textarea.cursor().0;
                row..=row
            }
        }
    }

    /// Change whole lines as one undo step: `f` edits one line and returns (column, shift) of
    /// what it inserted (positive) or removed (negative), so the cursor and the selection stay
    /// on the same text.
    fn change_lines(&mut self, f: impl Fn(&mut String) -> Option<(usize, isize)>) {
        let rows = self.line_rows();
        let cursor = self.textarea.cursor();
        let anchor = self.selection_anchor();
        self.history
            .begin(EditKind::Single, None, self.textarea.lines(), cursor);
        let mut lines = std::mem::take(&mut self.textarea).into_lines();
        let mut shifts = Vec::new();
        for row in rows.clone() {
            if let Some(shift) = lines.get_mut(row).and_then(&f) {
                shifts.push((row, shift));
            }
        }
        let moved = |(row, col): (usize, usize)| match shifts.iter().find(|(r, _)| *r == row) {
            Some((_, (at, by))) if col >= *at => {
                (row, (col as isize + by).max(*at as isize) as usize)
            }
            _ => (row, col),
        };
        self.set_lines(lines);
        match anchor {
            Some(anchor) => self.select(moved(anchor), moved(cursor)),
            None => self.jump(moved(cursor)),
        }
        self.history.edited(self.textarea.cursor(), None);
        if !shifts.is_empty() {
            self.touched();
        }
        self.follow_cursor();
    }

    /// Where the selection started (the end that is not the cursor).
    fn selection_anchor(&self) -> Option<(usize, usize)> {
        let (from, to) = self.textarea.selection_range()?;
        Some(if self.textarea.cursor() == from {
            to
        } else {
            from
        })
    }

    /// Tab: indent the selected lines, or insert spaces to the next indent stop.
    pub fn indent(&mut self) {
        let multi_line = self
            .textarea
            .selection_range()
            .is_some_and(|((r0, _), (r1, _))| r1 > r0);
        if multi_line {
            self.change_lines(|line| {
                (!line.is_empty()).then(|| {
                    line.insert_str(0, INDENT);
                    (0, INDENT.len() as isize)
                })
            });
        } else {
            self.edit(EditKind::Typing, Some(' '), |t| t.insert_tab());
        }
    }

    /// Shift-Tab: outdent the selected lines, or the cursor's line.
    pub fn outdent(&mut self) {
        self.change_lines(|line| {
            let n = if line.starts_with('\t') {
                1
            } else {
                line.chars()
                    .take(INDENT.len())
                    .take_while(|c| *c == ' ')
                    .count()
            };
            (n > 0).then(|| {
                line.drain(..n);
                (0, -(n as isize))
            })
        });
    }

    /// Comment the lines out with `-- `, or uncomment them when all of them are comments.
    pub fn toggle_comment(&mut self) {
        let rows = self.line_rows();
        let lines = self.textarea.lines();
        let indent_of = |l: &str| l.chars().take_while(|c| c.is_whitespace()).count();
        let filled: Vec<&String> = lines[rows]
            .iter()
            .filter(|l| !l.trim().is_empty())
            .collect();
        if filled.is_empty() {
            return;
        }
        let uncomment = filled.iter().all(|l| l.trim_start().starts_with("--"));
        let depth = filled.iter().map(|l| indent_of(l)).min().unwrap_or(0);
        self.change_lines(|line| {
            if line.trim().is_empty() {
                return None;
            }
            let at = indent_of(line);
            let byte = |col: usize| line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
            if uncomment {
                let start = byte(at);
                let n = if line[start..].starts_with("-- ") {
                    3
                } else {
                    2
                };
                line.drain(start..start + n);
                Some((at, -(n as isize)))
            } else {
                line.insert_str(byte(depth), "-- ");
                Some((depth, 3))
            }
        });
    }

    /// Replace the buffer's lines (undo, line commands), keeping the clipboard and the search.
    fn set_lines(&mut self, lines: Vec<String>) {
        let yank = self.textarea.yank_text();
        self.textarea = new_textarea(lines);
        self.textarea.set_yank_text(yank);
        if let Some(pattern) = &self.search {
            let _ = self.textarea.set_search_pattern(pattern);
        }
    }

    pub fn undo(&mut self) -> bool {
        self.history_step(true)
    }

    /// The text's undo depth (tui/buffer.rs orders the buffer's other changes by it).
    pub fn undo_depth(&mut self) -> usize {
        self.history
            .depth(self.textarea.lines(), self.textarea.cursor())
    }

    pub fn redo(&mut self) -> bool {
        self.history_step(false)
    }

    fn history_step(&mut self, undo: bool) -> bool {
        let cursor = self.textarea.cursor();
        let mut lines = std::mem::take(&mut self.textarea).into_lines();
        let to = if undo {
            self.history.undo(&mut lines, cursor)
        } else {
            self.history.redo(&mut lines, cursor)
        };
        self.set_lines(lines);
        self.jump(to.unwrap_or(cursor));
        if to.is_some() {
            self.touched();
        }
        self.follow_cursor();
        to.is_some()
    }

    /// Select the whole script.
    pub fn select_all(&mut self) {
        self.textarea.select_all();
        self.history.seal();
        self.follow_cursor();
    }

    /// Copy the selection; its bytes for the system clipboard, None when nothing is selected.
    pub fn copy(&mut self) -> Option<Vec<u8>> {
        let anchor = self.selection_anchor()?;
        let cursor = self.textarea.cursor();
        self.textarea.copy();
        self.select(anchor, cursor); // copying keeps the selection
        Some(encode_script(&self.textarea.yank_text()))
    }

    /// Cut the selection: one undo step; its bytes for the system clipboard.
    pub fn cut(&mut self) -> Option<Vec<u8>> {
        self.selection_anchor()?;
        self.edit(EditKind::Single, None, |t| t.cut());
        Some(encode_script(&self.textarea.yank_text()))
    }

    /// Paste what was copied or cut in the editor (the terminal's own paste arrives as `paste`).
    pub fn paste_copied(&mut self) -> bool {
        self.edit(EditKind::Single, None, |t| t.paste())
    }

    /// Pasted text (bracketed paste): line ends of any kind become lines, one undo step.
    pub fn paste(&mut self, text: &str) {
        let text = paste_line_breaks(text).replace('\t', INDENT);
        let text = decode_script(text.as_bytes());
        self.edit(EditKind::Single, None, |t| t.insert_str(text));
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

    /// Search for `pattern` from the cursor (the match under it counts): literally, or as a
    /// regex when `regex`. None when nothing matches; an invalid regex's error in one line.
    pub fn find(&mut self, pattern: &str, regex: bool) -> Result<Option<Found>, String> {
        let compiled = if regex {
            pattern.to_string()
        } else {
            regex::escape(pattern)
        };
        if let Err(e) = regex::Regex::new(&compiled) {
            // The regex crate's message spans lines (the pattern, a caret, the error): its last
            // line says what is wrong.
            let text = e.to_string();
            let what = text
                .lines()
                .last()
                .unwrap_or("")
                .trim_start_matches("error: ");
            return Err(format!(
                "not a valid regex: {what} (Alt-R in the search prompt searches literally)"
            ));
        }
        let _ = self.textarea.set_search_pattern(&compiled);
        self.search = (!pattern.is_empty()).then_some(compiled);
        self.search_regex = regex;
        self.search_text = pattern.to_string();
        Ok(self.step(Step::Here))
    }

    /// The next match after the cursor (wrapping to the top); None without a search or a match.
    pub fn find_next(&mut self) -> Option<Found> {
        self.step(Step::Next)
    }

    /// The match before the cursor (wrapping to the bottom).
    pub fn find_previous(&mut self) -> Option<Found> {
        self.step(Step::Previous)
    }

    /// The search pattern as typed.
    pub fn search_pattern_text(&self) -> &str {
        &self.search_text
    }

    /// Whether a search pattern is set (F3 and Shift-F3 have something to look for).
    pub fn searching(&self) -> bool {
        self.search.is_some()
    }

    /// Move to a match of the search pattern; which one `step` says.
    fn step(&mut self, step: Step) -> Option<Found> {
        let re = self.textarea.search_pattern()?.clone();
        // Every non-empty match in the buffer, as (row, character column), in order.
        let mut matches = Vec::new();
        for (row, line) in self.textarea.lines().iter().enumerate() {
            let mut chars = 0;
            let mut at = 0;
            for m in re.find_iter(line).filter(|m| !m.is_empty()) {
                chars += line[at..m.start()].chars().count();
                at = m.start();
                matches.push((row, chars));
            }
        }
        if matches.is_empty() {
            return None;
        }
        let cursor = self.textarea.cursor();
        let (index, wrapped) = match step {
            Step::Here | Step::Next => {
                let after = |m: &(usize, usize)| match step {
                    Step::Here => *m >= cursor,
                    _ => *m > cursor,
                };
                match matches.iter().position(after) {
                    Some(i) => (i, None),
                    None => (0, Some(Wrap::ToTop)),
                }
            }
            Step::Previous => match matches.iter().rposition(|m| *m < cursor) {
                Some(i) => (i, None),
                None => (matches.len() - 1, Some(Wrap::ToBottom)),
            },
        };
        self.textarea.cancel_selection();
        self.jump(matches[index]);
        self.history.seal();
        self.follow_cursor();
        Some(Found {
            index: index + 1,
            total: matches.len(),
            wrapped,
        })
    }
}

/// Which match a search step goes to.
#[derive(Clone, Copy, PartialEq)]
enum Step {
    /// The first at or after the cursor (a new search).
    Here,
    Next,
    Previous,
}

/// Where a search step landed: match `index` (1-based) of `total`, and whether it went round the
/// end of the script to get there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub index: usize,
    pub total: usize,
    pub wrapped: Option<Wrap>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrap {
    ToTop,
    ToBottom,
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
