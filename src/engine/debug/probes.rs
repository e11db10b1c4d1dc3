//! Breakpoints without a line hook: the debug run compiles a copy of the script where the first
//! statement of each breakpoint line is preceded, on the same line, by `redis.breakpoint(LINE);`
//! (a probe). Lua 5.1 calls its hook tracer on every instruction while a line hook is set, so a
//! script with breakpoints set but not hit runs with the count hook only and reaches the debugger
//! through the probes (hook.rs turns the line hook on for steps, replays and coverage).
//!
//! A line takes a probe only when the probe runs exactly once each time the line hook would report
//! the line: the line's first token starts a statement (nothing spills onto it from an earlier
//! line), and it holds no loop (`for`, `while`, `repeat`, `until`: a backward jump reports the
//! line again) and no function boundary (`function`, a function body's `end`: code of two
//! functions). Other breakpoint lines keep the line hook. Line numbers, error texts and replies
//! are unchanged: the probe adds no line and is a call statement of its own (`;`).

use full_moon::ast::{Expression, FunctionBody, LastStmt, Prefix, Stmt, Var};
use full_moon::node::Node;
use full_moon::tokenizer::{Lexer, LexerResult, Position, Symbol, Token, TokenType};
use full_moon::visitors::Visitor;
use std::collections::HashSet;

/// Per line (index = line number): the byte offset in the script where a probe may go. A script
/// the parser is not given (too deep or too large, see analysis::bounds) takes none: its
/// breakpoints use the line hook.
pub fn probe_offsets(script: &str) -> Vec<Option<usize>> {
    if crate::engine::analysis::bounds::check(script).is_err() {
        return Vec::new();
    }
    // The tree's walks recurse once per level (bounded above): a stack of their own.
    stacker::grow(64 << 20, || offsets(script)).unwrap_or_default()
}

fn offsets(script: &str) -> Option<Vec<Option<usize>>> {
    let parsed = full_moon::parse_fallible(script, full_moon::LuaVersion::lua51());
    if !parsed.errors().is_empty() {
        return None;
    }
    let ast = parsed.ast();
    let mut shape = Shape::default();
    shape.visit_ast(ast);
    // The tokens from the lexer, in order: a tree's token iterator costs the square of its depth.
    let tokens: Vec<Token> = match Lexer::new(script, full_moon::LuaVersion::lua51()).collect() {
        LexerResult::Ok(tokens) => tokens
            .into_iter()
            .filter(|t| !t.token_type().is_trivia() && !matches!(t.token_type(), TokenType::Eof))
            .collect(),
        _ => return None,
    };
    let lines = script.split('\n').count();
    let mut first: Vec<Option<usize>> = vec![None; lines + 2];
    let mut barred = vec![false; lines + 2];
    for line in &shape.function_ends {
        barred[*line] = true;
    }
    for token in &tokens {
        let (start, end) = (token.start_position(), token.end_position());
        let line = start.line();
        if line >= first.len() {
            continue;
        }
        // A long string or a `\z`-free multi-line token: its code belongs to its last line.
        for spilled in barred
            .iter_mut()
            .take(end.line().min(lines) + 1)
            .skip(line + 1)
        {
            *spilled = true;
        }
        if let TokenType::Symbol {
            symbol: Symbol::For | Symbol::While | Symbol::Repeat | Symbol::Until | Symbol::Function,
        } = token.token_type()
        {
            barred[line] = true;
        }
        if first[line].is_none() {
            first[line] = Some(start.bytes());
        }
    }
    // The probe reaches `redis` as a global: a script that names something else `redis` (a local,
    // a parameter, an assignment) gets no probes.
    for (i, token) in tokens.iter().enumerate() {
        if let TokenType::Identifier { identifier } = token.token_type() {
            let dotted = matches!(
                tokens.get(i + 1).map(|t| t.token_type()),
                Some(TokenType::Symbol {
                    symbol: Symbol::Dot | Symbol::Colon
                })
            );
            if identifier.as_str() == "redis" && !dotted {
                return None;
            }
        }
    }
    Some(
        first
            .iter()
            .enumerate()
            .map(|(line, at)| at.filter(|b| !barred[line] && shape.statement_starts.contains(b)))
            .collect(),
    )
}

#[derive(Default)]
struct Shape {
    statement_starts: HashSet<usize>,
    function_ends: Vec<usize>,
}

impl Visitor for Shape {
    fn visit_stmt(&mut self, node: &Stmt) {
        if let Some(p) = stmt_start(node) {
            self.statement_starts.insert(p.bytes());
        }
    }
    fn visit_last_stmt(&mut self, node: &LastStmt) {
        let first = match node {
            LastStmt::Return(r) => r.token().start_position(),
            LastStmt::Break(token) => token.start_position(),
            other => other.start_position(),
        };
        if let Some(p) = first {
            self.statement_starts.insert(p.bytes());
        }
    }
    fn visit_function_body(&mut self, node: &FunctionBody) {
        if let Some(p) = node.end_token().start_position() {
            self.function_ends.push(p.line());
        }
    }
}

/// Where a statement starts, read off its first token: full_moon's own `start_position` of a
/// statement computes its whole range, and nested index expressions (`t[t[t[(a+a)]]]`) make that
/// exponential in their depth.
fn stmt_start(node: &Stmt) -> Option<Position> {
    match node {
        Stmt::LocalAssignment(s) => s.local_token().start_position(),
        Stmt::LocalFunction(s) => s.local_token().start_position(),
        Stmt::FunctionDeclaration(s) => s.function_token().start_position(),
        Stmt::Do(s) => s.do_token().start_position(),
        Stmt::While(s) => s.while_token().start_position(),
        Stmt::Repeat(s) => s.repeat_token().start_position(),
        Stmt::If(s) => s.if_token().start_position(),
        Stmt::NumericFor(s) => s.for_token().start_position(),
        Stmt::GenericFor(s) => s.for_token().start_position(),
        Stmt::FunctionCall(s) => prefix_start(s.prefix()),
        Stmt::Assignment(s) => match s.variables().iter().next()? {
            Var::Name(token) => token.start_position(),
            Var::Expression(e) => prefix_start(e.prefix()),
            other => other.start_position(),
        },
        other => other.start_position(),
    }
}

/// The first token of a call's or a variable's prefix: a name, or an opening parenthesis.
fn prefix_start(prefix: &Prefix) -> Option<Position> {
    match prefix {
        Prefix::Name(token) => token.start_position(),
        Prefix::Expression(e) => match &**e {
            Expression::Parentheses { contained, .. } => contained.tokens().0.start_position(),
            other => other.start_position(),
        },
        other => other.start_position(),
    }
}

/// The script with a probe before the first statement of each of `lines` that can take one;
/// `offsets` from [`probe_offsets`] on the same script, `skip` the bytes the VM does not see (the
/// shebang line). None when no line takes a probe. Also gives the lines that have one.
pub fn instrument(
    body: &[u8],
    offsets: &[Option<usize>],
    skip: usize,
    lines: &[u32],
) -> Option<(Vec<u8>, Vec<u32>)> {
    let mut at: Vec<(usize, u32)> = lines
        .iter()
        .filter_map(|&line| {
            let offset = (*offsets.get(line as usize)?)?;
            Some((offset.checked_sub(skip)?, line))
        })
        .filter(|(offset, _)| *offset <= body.len())
        .collect();
    if at.is_empty() {
        return None;
    }
    at.sort_unstable();
    at.dedup();
    let mut out = Vec::with_capacity(body.len() + at.len() * 28);
    let mut from = 0;
    for (offset, line) in &at {
        out.extend_from_slice(&body[from..*offset]);
        out.extend_from_slice(format!("redis.breakpoint({line}); ").as_bytes());
        from = *offset;
    }
    out.extend_from_slice(&body[from..]);
    Some((out, at.iter().map(|(_, line)| *line).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probed(script: &str) -> Vec<usize> {
        probe_offsets(script)
            .iter()
            .enumerate()
            .filter_map(|(line, at)| at.map(|_| line))
            .collect()
    }

    #[test]
    fn statements_over_nested_indexes_take_probes_without_walking_them() {
        // full_moon's own start of such a statement took time exponential in the nesting (40 levels:
        // longer than any test runs); the first token is read instead.
        let nested = format!("t[{}(a+a){}]", "t[".repeat(39), "]".repeat(39));
        let script = format!(
            "local a = setmetatable({{}}, {{}})\nlocal t = {{}}\nlocal x = {nested}\n{nested} = 1\nf({nested})\nreturn {nested}\n"
        );
        assert_eq!(probed(&script), vec![1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn lines_that_take_a_probe() {
        let script = "local x = 1\nfor i = 1, 3 do\n  x = x + i\nend\nlocal f = function()\n  return 1 end\nlocal s = [[a\nb]] x = 2\nif x then x = 3 end\nwhile x do x = nil end\nreturn redis.call('GET', 'k')";
        // Not 2, 4 (loop), 5, 6 (function), 8 (a string spills onto it), 10 (loop).
        assert_eq!(probed(script), [1, 3, 7, 9, 11]);
        assert_eq!(probed("local redis = 1\nreturn redis"), Vec::<usize>::new());
    }

    #[test]
    fn probes_keep_lines() {
        let script = b"local x = 1\n  x = x + 1\nreturn x";
        let offsets = probe_offsets(std::str::from_utf8(script).unwrap());
        let (out, lines) = instrument(script, &offsets, 0, &[2, 3]).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "local x = 1\n  redis.breakpoint(2); x = x + 1\nredis.breakpoint(3); return x"
        );
        assert_eq!(lines, [2, 3]);
    }
}
