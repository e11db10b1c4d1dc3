//! What the syntax-tree parser (full_moon) can be given: one linear pass over the script's tokens
//! that measures how deep its syntax tree would be, before any tree is built.
//!
//! Lua's own compiler refuses more than 200 levels of brackets, blocks, unary operators and
//! right-associative operators (`..`, `^`): "chunk has too many syntax levels". Left-associative
//! chains (`a+a+a`, `x==1 or x==2 or ...`) it compiles flat at any length, but in the tree they
//! nest one level per operator, and the tree's walks, printing and freeing recurse on each level.
//! The scan counts, at every token, the brackets and blocks open around it plus the operators seen
//! so far in each open expression; a script deeper than [`MAX_DEPTH`] or larger than
//! [`MAX_PARSE_BYTES`] is not given to the parser at all (its memory grows with the text: about
//! 400 bytes of tree per byte of script).

use std::fmt;

/// The deepest syntax tree the parser is given (levels of brackets, blocks and operators).
pub const MAX_DEPTH: usize = 2000;

/// The largest script the parser is given, in bytes.
pub const MAX_PARSE_BYTES: usize = 1 << 20;

/// Why a script is not parsed into a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bound {
    /// An expression nests deeper than [`MAX_DEPTH`]: where it passes the limit (1-based line and
    /// column in characters).
    TooDeep { line: usize, column: usize },
    /// The script is larger than [`MAX_PARSE_BYTES`].
    TooLarge { bytes: usize },
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::TooDeep { line, column } => write!(
                f,
                "expression nested deeper than {MAX_DEPTH} at line {line}, column {column}"
            ),
            Bound::TooLarge { bytes } => write!(
                f,
                "script of {bytes} bytes is larger than the {} MiB the analysis reads",
                MAX_PARSE_BYTES >> 20
            ),
        }
    }
}

/// Whether the parser may be given `source`: Err says where it is too deep, or that it is too large.
pub fn check(source: &str) -> Result<(), Bound> {
    if source.len() > MAX_PARSE_BYTES {
        return Err(Bound::TooLarge {
            bytes: source.len(),
        });
    }
    match deepest(source, MAX_DEPTH) {
        Some((line, column)) => Err(Bound::TooDeep { line, column }),
        None => Ok(()),
    }
}

/// A token as far as depth goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// `(`, `[`, `{`, and `function`, `do`, `if`, `repeat`: a level of its own.
    Open,
    /// `)`, `]`, `}`, `end`, `until`.
    Close,
    /// A binary or unary operator: one level more in the current expression.
    Operator,
    /// Where a new expression starts: `,`, `;`, `=`, `then`, `else`, `elseif`, `return`, `local`,
    /// `in`, `while`, `for`.
    Separator,
    /// A name, number, string, `nil`, `true`, `false`, `...`: ends an operand.
    Operand,
    /// `.`, `:` and anything else that neither nests nor ends an operand.
    Other,
}

/// The first place (line, column) where the tree would be deeper than `limit`, if any.
///
/// Levels are kept as a stack of operator counts, one per open bracket or block; the depth at a
/// token is the number of open levels plus every count on the stack.
pub fn deepest(source: &str, limit: usize) -> Option<(usize, usize)> {
    let mut lexer = Lexer::new(source.as_bytes());
    let mut ops: Vec<usize> = vec![0];
    let mut depth = 1usize;
    // The last token finished an operand (a name, `)`, `end`...): a name after it starts a statement.
    let mut after_operand = false;
    while let Some((tok, ends_operand, line, start)) = lexer.next_token() {
        let new_statement = tok == Tok::Operand && after_operand;
        match tok {
            Tok::Open => {
                ops.push(0);
                depth += 1;
            }
            Tok::Close if ops.len() > 1 => depth -= 1 + ops.pop().unwrap_or(0),
            Tok::Operator => {
                if let Some(n) = ops.last_mut() {
                    *n += 1;
                }
                depth += 1;
            }
            _ => {}
        }
        if tok == Tok::Separator || new_statement {
            if let Some(n) = ops.last_mut() {
                depth -= *n;
                *n = 0;
            }
        }
        if depth > limit {
            // Counted here only: counting at every token would cost a long line its square.
            return Some((line, lexer.column(start)));
        }
        after_operand = ends_operand;
    }
    None
}

/// A Lua 5.1 lexer that knows only what depth needs: token kinds and where each starts.
struct Lexer<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
    /// Byte offset where the current line starts (columns count characters from there).
    line_start: usize,
}

impl<'a> Lexer<'a> {
    fn new(bytes: &'a [u8]) -> Lexer<'a> {
        Lexer {
            bytes,
            pos: 0,
            line: 1,
            line_start: 0,
        }
    }

    fn peek(&self, at: usize) -> u8 {
        self.bytes.get(self.pos + at).copied().unwrap_or(0)
    }

    fn newline(&mut self) {
        self.line += 1;
        self.line_start = self.pos + 1;
    }

    fn column(&self, at: usize) -> usize {
        // Characters, not bytes: UTF-8 continuation bytes do not start one.
        self.bytes[self.line_start.min(at)..at]
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count()
            + 1
    }

    /// `[`, `=`*, `[` at the current position: the level of a long bracket (its `=` count).
    fn long_bracket(&self) -> Option<usize> {
        if self.peek(0) != b'[' {
            return None;
        }
        let mut n = 1;
        while self.peek(n) == b'=' {
            n += 1;
        }
        (self.peek(n) == b'[').then_some(n - 1)
    }

    /// Skip a long string or comment body from its opening bracket to past its closing one.
    fn skip_long(&mut self, level: usize) {
        self.pos += level + 2;
        while self.pos < self.bytes.len() {
            match self.bytes[self.pos] {
                b'\n' => self.newline(),
                b']' => {
                    let mut n = 1;
                    while self.peek(n) == b'=' {
                        n += 1;
                    }
                    if n - 1 == level && self.peek(n) == b']' {
                        self.pos += n + 1;
                        return;
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
    }

    fn skip_quoted(&mut self, quote: u8) {
        self.pos += 1;
        while self.pos < self.bytes.len() {
            match self.bytes[self.pos] {
                b'\\' => {
                    if self.peek(1) == b'\n' {
                        self.pos += 1;
                        self.newline();
                    }
                    self.pos += 2;
                    continue;
                }
                b'\n' => return,
                c if c == quote => {
                    self.pos += 1;
                    return;
                }
                _ => self.pos += 1,
            }
        }
    }

    /// Lua 5.1's numeral: digits and dots, an optional exponent sign, then letters and digits.
    fn skip_number(&mut self) {
        while self.peek(0).is_ascii_digit() || self.peek(0) == b'.' {
            self.pos += 1;
        }
        if matches!(self.peek(0), b'e' | b'E') {
            self.pos += 1;
            if matches!(self.peek(0), b'+' | b'-') {
                self.pos += 1;
            }
        }
        while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' {
            self.pos += 1;
        }
    }

    /// The next token: its kind, whether it finishes an operand, its line and its byte offset.
    fn next_token(&mut self) -> Option<(Tok, bool, usize, usize)> {
        loop {
            let c = *self.bytes.get(self.pos)?;
            match c {
                b'\n' => {
                    self.newline();
                    self.pos += 1;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'-' if self.peek(1) == b'-' => {
                    self.pos += 2;
                    if let Some(level) = self.long_bracket() {
                        self.skip_long(level);
                    } else {
                        while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                            self.pos += 1;
                        }
                    }
                }
                _ => break,
            }
        }
        let start = self.pos;
        let line = self.line;
        let c = self.bytes[start];
        let tok = match c {
            b'\'' | b'"' => {
                self.skip_quoted(c);
                Tok::Operand
            }
            b'[' => match self.long_bracket() {
                Some(level) => {
                    self.skip_long(level);
                    Tok::Operand
                }
                None => {
                    self.pos += 1;
                    Tok::Open
                }
            },
            b'0'..=b'9' => {
                self.skip_number();
                Tok::Operand
            }
            b'.' if self.peek(1).is_ascii_digit() => {
                self.skip_number();
                Tok::Operand
            }
            b'.' if self.peek(1) == b'.' && self.peek(2) == b'.' => {
                self.pos += 3;
                Tok::Operand
            }
            b'.' if self.peek(1) == b'.' => {
                self.pos += 2;
                Tok::Operator
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' {
                    self.pos += 1;
                }
                match &self.bytes[start..self.pos] {
                    b"function" | b"do" | b"if" | b"repeat" => Tok::Open,
                    b"end" | b"until" => Tok::Close,
                    b"and" | b"or" | b"not" => Tok::Operator,
                    b"then" | b"else" | b"elseif" | b"return" | b"local" | b"in" | b"while"
                    | b"for" | b"break" => Tok::Separator,
                    _ => Tok::Operand,
                }
            }
            b'(' | b'{' => {
                self.pos += 1;
                Tok::Open
            }
            b')' | b']' | b'}' => {
                self.pos += 1;
                Tok::Close
            }
            b'=' | b'~' | b'<' | b'>' if self.peek(1) == b'=' => {
                self.pos += 2;
                Tok::Operator
            }
            b'=' | b',' | b';' => {
                self.pos += 1;
                Tok::Separator
            }
            b'+' | b'-' | b'*' | b'/' | b'%' | b'^' | b'#' | b'<' | b'>' => {
                self.pos += 1;
                Tok::Operator
            }
            _ => {
                // `.`, `:`, and bytes Lua would refuse; a multi-byte character as one.
                self.pos += 1;
                while self.pos < self.bytes.len() && self.bytes[self.pos] & 0xC0 == 0x80 {
                    self.pos += 1;
                }
                Tok::Other
            }
        };
        // `end`, `)`, `]`, `}` finish an operand too: a name after them starts a statement.
        let ends_operand = matches!(tok, Tok::Operand)
            || (tok == Tok::Close && &self.bytes[start..self.pos] != b"until");
        Some((tok, ends_operand, line, start))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_of_each_shape() {
        // Brackets, blocks and operators each add a level; separators end an expression.
        assert_eq!(deepest("return ((((1))))", 5), None);
        assert_eq!(deepest("return ((((((1))))))", 5), Some((1, 12)));
        assert_eq!(deepest("local a=1 return a+a+a+a+a", 4), Some((1, 25)));
        assert_eq!(deepest("local a=1 return a+a, a+a, a+a, a+a", 3), None);
        // A new statement on the same line ends the chain before it.
        assert_eq!(deepest("x = a + b + c  y = d + e + f", 3), None);
        assert_eq!(deepest("x = a + b + c + d", 3), Some((1, 15)));
        // Operators inside strings, comments and exponents are none.
        assert_eq!(
            deepest(
                "return '+ + + +' .. [==[+ + ]] +]==] --[[ + + + + ]] .. 1e+5",
                3
            ),
            None
        );
        // Columns in characters, lines counted through long strings.
        assert_eq!(
            deepest("local s = [[\n\n]] return 'é' .. (((1)))", 4),
            Some((3, 20))
        );
        assert_eq!(
            deepest("if a then if b then if c then end end end", 3),
            Some((1, 21))
        );
    }

    #[test]
    fn limits_said_with_their_place() {
        let deep = format!("local a=1\nreturn a{}", "+a".repeat(MAX_DEPTH + 10));
        let err = check(&deep).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "expression nested deeper than {MAX_DEPTH} at line 2, column {}",
                8 + 2 * MAX_DEPTH - 1
            )
        );
        let large = "x".repeat(MAX_PARSE_BYTES + 1);
        assert_eq!(
            check(&large).unwrap_err().to_string(),
            format!(
                "script of {} bytes is larger than the 1 MiB the analysis reads",
                MAX_PARSE_BYTES + 1
            )
        );
        assert_eq!(check("return 1"), Ok(()));
    }
}
