//! Undo and redo by edit groups (a typed word, a run of deletions, a paste), not one character at
//! a time. A group remembers the lines before it began; when it ends, only the lines it changed
//! are kept (the common head and tail of before and after are dropped), so a step on a large
//! script costs the changed lines, and the whole history is bounded in steps and bytes.

use std::collections::VecDeque;

/// At most this many undo steps are kept.
const MAX_STEPS: usize = 1000;
/// And at most this many bytes of text in them (the oldest steps go first).
const MAX_BYTES: usize = 32 << 20;

/// What kind of edit extends a group: typing continues typing, deleting continues deleting;
/// anything else (a paste, a cut, an indent) is a group of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditKind {
    Typing,
    Deleting,
    Single,
}

/// One undo step: lines `start..start + new.len()` were `old` before it.
#[derive(Debug, Clone)]
struct Change {
    start: usize,
    old: Vec<String>,
    new: Vec<String>,
    cursor_before: (usize, usize),
    cursor_after: (usize, usize),
}

impl Change {
    fn bytes(&self) -> usize {
        self.old.iter().chain(&self.new).map(String::len).sum()
    }
}

/// The group in progress.
#[derive(Debug)]
struct Open {
    kind: EditKind,
    before: Vec<String>,
    cursor_before: (usize, usize),
    /// Where the cursor was after the group's last edit: an edit elsewhere starts a new group.
    cursor_last: (usize, usize),
    /// The last character typed (a word starts a new group after a space or punctuation).
    last_char: Option<char>,
    sealed: bool,
}

#[derive(Debug, Default)]
pub struct History {
    done: VecDeque<Change>,
    undone: Vec<Change>,
    open: Option<Open>,
    bytes: usize,
    /// Steps dropped from the front (the depth counts them, so it only grows with new edits).
    dropped: usize,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl History {
    /// Call before an edit of `kind` (`typed`: the character typed, for word groups).
    pub fn begin(
        &mut self,
        kind: EditKind,
        typed: Option<char>,
        lines: &[String],
        cursor: (usize, usize),
    ) {
        if let Some(open) = &self.open {
            let word_starts = typed.is_some_and(is_word) && !open.last_char.is_some_and(is_word);
            let continues = !open.sealed
                && kind != EditKind::Single
                && open.kind == kind
                && open.cursor_last == cursor
                && !(kind == EditKind::Typing && word_starts);
            if continues {
                return;
            }
        }
        self.close(lines, cursor);
        self.open = Some(Open {
            kind,
            before: lines.to_vec(),
            cursor_before: cursor,
            cursor_last: cursor,
            last_char: None,
            sealed: false,
        });
    }

    /// Call after the edit: where the cursor went and what was typed.
    pub fn edited(&mut self, cursor: (usize, usize), typed: Option<char>) {
        if let Some(open) = &mut self.open {
            open.cursor_last = cursor;
            open.last_char = typed;
            if open.kind == EditKind::Single {
                open.sealed = true;
            }
        }
    }

    /// The cursor moved or something else happened: the next edit starts a new group.
    pub fn seal(&mut self) {
        if let Some(open) = &mut self.open {
            open.sealed = true;
        }
    }

    /// End the group in progress, keeping what it changed as one step.
    fn close(&mut self, lines: &[String], cursor: (usize, usize)) {
        let Some(open) = self.open.take() else {
            return;
        };
        let before = &open.before;
        let head = before.iter().zip(lines).take_while(|(a, b)| a == b).count();
        let room = before.len().min(lines.len()) - head;
        let tail = before
            .iter()
            .rev()
            .zip(lines.iter().rev())
            .take(room)
            .take_while(|(a, b)| a == b)
            .count();
        if head == before.len() && head == lines.len() {
            return; // nothing changed
        }
        let change = Change {
            start: head,
            old: before[head..before.len() - tail].to_vec(),
            new: lines[head..lines.len() - tail].to_vec(),
            cursor_before: open.cursor_before,
            cursor_after: cursor,
        };
        self.undone.clear();
        self.bytes += change.bytes();
        self.done.push_back(change);
        while self.done.len() > MAX_STEPS || (self.bytes > MAX_BYTES && self.done.len() > 1) {
            if let Some(dropped) = self.done.pop_front() {
                self.bytes -= dropped.bytes();
                self.dropped += 1;
            }
        }
    }

    /// How many steps there are to undo (and were dropped): the group in progress ends here, so
    /// a change made outside the text (tui/buffer.rs) is ordered after it.
    pub fn depth(&mut self, lines: &[String], cursor: (usize, usize)) -> usize {
        self.close(lines, cursor);
        self.dropped + self.done.len()
    }

    /// Undo the last group on `lines`; the cursor to restore, or None when there is nothing.
    pub fn undo(
        &mut self,
        lines: &mut Vec<String>,
        cursor: (usize, usize),
    ) -> Option<(usize, usize)> {
        self.close(lines, cursor);
        let change = self.done.pop_back()?;
        self.bytes -= change.bytes();
        lines.splice(
            change.start..change.start + change.new.len(),
            change.old.iter().cloned(),
        );
        let to = change.cursor_before;
        self.undone.push(change);
        Some(to)
    }

    /// Redo the last undone group.
    pub fn redo(
        &mut self,
        lines: &mut Vec<String>,
        cursor: (usize, usize),
    ) -> Option<(usize, usize)> {
        self.close(lines, cursor);
        let change = self.undone.pop()?;
        lines.splice(
            change.start..change.start + change.old.len(),
            change.new.iter().cloned(),
        );
        let to = change.cursor_after;
        self.bytes += change.bytes();
        self.done.push_back(change);
        Some(to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.split('\n').map(str::to_string).collect()
    }

    #[test]
    fn a_change_keeps_only_the_lines_it_touched() {
        let mut h = History::default();
        let mut text = lines("a\nb\nc\nd");
        h.begin(EditKind::Single, None, &text, (1, 0));
        text[1] = "B".into();
        text.insert(2, "new".into());
        h.edited((2, 3), None);
        assert_eq!(h.undo(&mut text, (2, 3)), Some((1, 0)));
        assert_eq!(text, lines("a\nb\nc\nd"));
        assert_eq!(h.bytes, 0);
        assert_eq!(h.redo(&mut text, (1, 0)), Some((2, 3)));
        assert_eq!(text, lines("a\nB\nnew\nc\nd"));
        assert_eq!(h.done[0].old, vec!["b".to_string()]);
        assert_eq!(h.undo(&mut text, (2, 3)), Some((1, 0)));
        assert_eq!(h.undo(&mut text, (1, 0)), None);
    }
}
