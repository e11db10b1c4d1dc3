//! An open document: its text, LSP positions (UTF-16 columns) to and from byte offsets, and a
//! lexical look at one line (string literals, dotted names, punctuation) to tell where the cursor
//! is: in a command name of `redis.call('…')`, after `redis.`, in `KEYS[…]`.

use lsp_types::{Position, Range};

pub struct Document {
    pub text: String,
    pub version: i32,
    /// Byte offset of each line's start.
    line_starts: Vec<usize>,
}

impl Document {
    pub fn new(text: String, version: i32) -> Document {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Document {
            text,
            version,
            line_starts,
        }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// A line (0-based) without its line break.
    pub fn line(&self, n: usize) -> &str {
        let Some(&start) = self.line_starts.get(n) else {
            return "";
        };
        let end = self
            .line_starts
            .get(n + 1)
            .map_or(self.text.len(), |&e| e - 1);
        self.text[start..end].trim_end_matches('\r')
    }

    /// The byte offset in its line of an LSP position (None past the document).
    pub fn column_byte(&self, position: Position) -> Option<usize> {
        let line = self.line(position.line as usize);
        if position.line as usize >= self.line_count() {
            return None;
        }
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            if units >= position.character {
                return Some(i);
            }
            units += c.len_utf16() as u32;
        }
        Some(line.len())
    }

    /// The LSP position of a byte offset in a line.
    pub fn position(&self, line: usize, byte: usize) -> Position {
        let text = self.line(line);
        let byte = text.floor_char_boundary(byte.min(text.len()));
        Position::new(
            line as u32,
            text[..byte].chars().map(|c| c.len_utf16() as u32).sum(),
        )
    }

    /// The byte offset in its line of a 1-based character column (as the lint counts them).
    pub fn byte_of_column(&self, line: usize, column: usize) -> usize {
        let text = self.line(line);
        text.char_indices()
            .nth(column.saturating_sub(1))
            .map_or(text.len(), |(i, _)| i)
    }

    /// The range of the token starting at a lint finding's place (1-based line and column): a
    /// string literal, a dotted name, or one character.
    pub fn token_range(&self, line: usize, column: usize) -> Range {
        let line = line.saturating_sub(1).min(self.line_count() - 1);
        let text = self.line(line);
        let start = self.byte_of_column(line, column);
        let end = tokens(text)
            .into_iter()
            .find(|t| t.start == start)
            .map_or_else(
                || {
                    text[start..]
                        .chars()
                        .next()
                        .map_or(start, |c| start + c.len_utf8())
                },
                |t| t.end,
            );
        Range::new(self.position(line, start), self.position(line, end))
    }

    /// The whole document's range.
    pub fn full_range(&self) -> Range {
        let last = self.line_count() - 1;
        Range::new(
            Position::new(0, 0),
            self.position(last, self.line(last).len()),
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A string literal: its text between the quotes (escapes as written); `closed` when its
    /// closing quote is on the line.
    Str {
        content: String,
        closed: bool,
    },
    /// A name, dots included (`redis.call`).
    Name(String),
    Number(String),
    Punct(char),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub kind: Kind,
    /// Byte offsets in the line.
    pub start: usize,
    pub end: usize,
}

impl Token {
    /// Where a string's text starts (after its quote).
    pub fn content_start(&self) -> usize {
        self.start + 1
    }
}

/// The tokens of one line, up to a `--` comment. Long strings (`[[…]]`) are read as punctuation:
/// command names are never written in them.
pub fn tokens(line: &str) -> Vec<Token> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'-' && bytes.get(i + 1) == Some(&b'-') {
            break;
        }
        if c == b'\'' || c == b'"' {
            let mut j = i + 1;
            let mut closed = false;
            while j < bytes.len() {
                if bytes[j] == b'\\' {
                    j += 2;
                    continue;
                }
                if bytes[j] == c {
                    closed = true;
                    break;
                }
                j += 1;
            }
            let content_end = j.min(bytes.len());
            let end = if closed { j + 1 } else { bytes.len() };
            out.push(Token {
                kind: Kind::Str {
                    content: line[i + 1..content_end].to_string(),
                    closed,
                },
                start: i,
                end,
            });
            i = end;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let mut j = i;
            while j < bytes.len()
                && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_' || bytes[j] == b'.')
            {
                j += 1;
            }
            out.push(Token {
                kind: Kind::Name(line[i..j].to_string()),
                start: i,
                end: j,
            });
            i = j;
        } else if c.is_ascii_digit() {
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'.') {
                j += 1;
            }
            out.push(Token {
                kind: Kind::Number(line[i..j].to_string()),
                start: i,
                end: j,
            });
            i = j;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else {
            let len = line[i..].chars().next().map_or(1, char::len_utf8);
            out.push(Token {
                kind: Kind::Punct(line[i..].chars().next().unwrap_or(' ')),
                start: i,
                end: i + len,
            });
            i += len;
        }
    }
    out
}

/// The callees whose first argument is a command.
pub const COMMAND_CALLEES: [&str; 4] = ["redis.call", "redis.pcall", "server.call", "server.pcall"];

/// A string literal that is the command name (argument 0) or the subcommand (argument 1) of a
/// `redis.call` on its line.
#[derive(Debug, Clone, PartialEq)]
pub struct CallArgument {
    pub callee: String,
    /// 0: the command; 1: the argument after it.
    pub index: usize,
    /// The command's name (when `index` is 1).
    pub command: Option<String>,
    /// The literal's text and where its text starts and ends (bytes in the line).
    pub text: String,
    pub text_start: usize,
    pub text_end: usize,
}

/// The call argument whose literal holds byte `at` of the line (its quotes' insides, ends
/// included).
pub fn call_argument(line: &str, at: usize) -> Option<CallArgument> {
    let toks = tokens(line);
    let k = toks.iter().position(|t| match &t.kind {
        Kind::Str { content, .. } => {
            at >= t.content_start() && at <= t.content_start() + content.len()
        }
        _ => false,
    })?;
    let Kind::Str { content, .. } = &toks[k].kind else {
        return None;
    };
    let callee_at = |open: usize| -> Option<String> {
        let paren = toks.get(open)?;
        let name = toks.get(open.checked_sub(1)?)?;
        match (&paren.kind, &name.kind) {
            (Kind::Punct('('), Kind::Name(n)) if COMMAND_CALLEES.contains(&n.as_str()) => {
                Some(n.clone())
            }
            _ => None,
        }
    };
    let argument = |index, command| CallArgument {
        callee: String::new(),
        index,
        command,
        text: content.clone(),
        text_start: toks[k].content_start(),
        text_end: toks[k].content_start() + content.len(),
    };
    if let Some(callee) = k.checked_sub(1).and_then(callee_at) {
        return Some(CallArgument {
            callee,
            ..argument(0, None)
        });
    }
    // `redis.call('CONFIG', 'GET'…)`: a comma after the command's literal.
    if k >= 3 && toks[k - 1].kind == Kind::Punct(',') {
        if let Kind::Str { content: name, .. } = &toks[k - 2].kind {
            if let Some(callee) = callee_at(k - 3) {
                return Some(CallArgument {
                    callee,
                    ..argument(1, Some(name.clone()))
                });
            }
        }
    }
    None
}

/// The dotted name around byte `at` (`redis.call`), cut after the part the cursor is on, with
/// its start: `redis.ca|ll` gives `redis.call`, `red|is.call` gives `redis`.
pub fn name_at(line: &str, at: usize) -> Option<(String, usize)> {
    let token = tokens(line)
        .into_iter()
        .find(|t| matches!(t.kind, Kind::Name(_)) && t.start <= at && at <= t.end)?;
    let Kind::Name(name) = token.kind else {
        return None;
    };
    let cut = name[at - token.start..]
        .find('.')
        .map_or(name.len(), |i| at - token.start + i);
    Some((name[..cut].to_string(), token.start))
}

/// What is typed before byte `at`: `redis.ca` gives ("redis", "ca"); None without a dot.
pub fn member_prefix(line: &str, at: usize) -> Option<(String, String)> {
    let before = &line[..at];
    let start = before
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .map_or(0, |i| i + 1);
    let word = &before[start..];
    let (base, member) = word.rsplit_once('.')?;
    Some((base.to_string(), member.to_string()))
}

/// `KEYS[` or `ARGV[` (and digits) just before byte `at`: the table's name.
pub fn table_index_before(line: &str, at: usize) -> Option<&'static str> {
    let before = line[..at].trim_end_matches(|c: char| c.is_ascii_digit());
    ["KEYS", "ARGV"]
        .into_iter()
        .find(|t| before.ends_with(&format!("{t}[")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units() {
        let doc = Document::new("local s = 'é😀x'\r\nreturn s".into(), 1);
        assert_eq!(doc.line(0), "local s = 'é😀x'");
        assert_eq!(doc.line(1), "return s");
        // 'x' is after é (1 unit) and 😀 (2 units).
        let x = doc.line(0).find('x').unwrap();
        assert_eq!(doc.position(0, x), Position::new(0, 14));
        assert_eq!(doc.column_byte(Position::new(0, 14)), Some(x));
        assert_eq!(doc.column_byte(Position::new(5, 0)), None);
    }

    #[test]
    fn the_literal_under_the_cursor_is_a_command_or_its_subcommand() {
        let line = "local v = redis.call('CONFIG', 'GET', 'x') -- redis.call('GET')";
        let at = line.find("CONFIG").unwrap() + 2;
        let arg = call_argument(line, at).unwrap();
        assert_eq!(
            (arg.callee.as_str(), arg.index, arg.text.as_str()),
            ("redis.call", 0, "CONFIG")
        );
        let arg = call_argument(line, line.find("GET").unwrap()).unwrap();
        assert_eq!((arg.index, arg.command.as_deref()), (1, Some("CONFIG")));
        assert_eq!(call_argument(line, line.find("'x'").unwrap() + 1), None);
        // In the comment: nothing.
        assert_eq!(call_argument(line, line.rfind("GET").unwrap()), None);
        // Being typed: the literal is not closed yet.
        let typing = "redis.pcall(\"hs";
        let arg = call_argument(typing, typing.len()).unwrap();
        assert_eq!((arg.index, arg.text.as_str()), (0, "hs"));
    }

    #[test]
    fn names_members_and_indexes_before_the_cursor() {
        let line = "local n = cjson.decode(ARGV[1])";
        assert_eq!(
            name_at(line, line.find("decode").unwrap() + 1),
            Some(("cjson.decode".into(), 10))
        );
        assert_eq!(name_at(line, 11), Some(("cjson".into(), 10)));
        assert_eq!(
            member_prefix("x = redis.ca", 12),
            Some(("redis".into(), "ca".into()))
        );
        assert_eq!(member_prefix("x = redis", 9), None);
        assert_eq!(
            table_index_before("redis.call('GET', KEYS[", 23),
            Some("KEYS")
        );
        assert_eq!(table_index_before("ARGV[1", 6), Some("ARGV"));
        assert_eq!(table_index_before("ARGV", 4), None);
    }
}
