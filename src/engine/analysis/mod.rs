//! `evalbench lint`: what can be told of a script before running it. The script is parsed as
//! Lua 5.1 (full_moon) and one walk over its syntax tree follows where each value comes from
//! (KEYS, ARGV, a literal, a command's reply), which commands are called with what, and in which
//! order writes and error exits come; the rules (rules.rs) read those facts.

pub mod bounds;
pub mod library;
pub mod rules;
pub mod unstoppable;

use crate::engine::commands::{is_container, lookup_in, lower, resolve_in, Refusal};
use crate::engine::profile::{self, Profile, PROFILES};
use full_moon::ast::{
    self, BinOp, Block, Call, Expression, Field, FunctionArgs, FunctionBody, LastStmt, Parameter,
    Prefix, Stmt, Suffix, UnOp, Var,
};
use full_moon::node::Node;
use full_moon::tokenizer::{Symbol, TokenReference, TokenType};
use rules::*;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// One finding, at a 1-based line and column of the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub rule: &'static str,
    pub severity: Severity,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl Diagnostic {
    pub fn fix(&self) -> &'static str {
        rule(self.rule).map_or("", |r| r.fix)
    }
}

/// Lint a script for Redis 7.0 (the default profile); findings in line order.
pub fn lint(source: &str) -> Vec<Diagnostic> {
    lint_in(source, profile::DEFAULT)
}

/// Lint a script for a server profile: commands are those of its table.
pub fn lint_in(source: &str, profile: &'static Profile) -> Vec<Diagnostic> {
    lint_with(source, profile, None)
}

/// Lint a script for a server profile, knowing the KEYS it runs with (its sidecar's): KEYS[n]
/// past them is undeclared, and their slots count for the cross-slot rule.
pub fn lint_with(
    source: &str,
    profile: &'static Profile,
    declared_keys: Option<&[String]>,
) -> Vec<Diagnostic> {
    let file = source;
    let source = strip_shebang(source);
    // Lua's own compiler first: its message is the one Redis gives, and its nesting limit (200
    // levels) bounds how deep the parser and the walk below recurse.
    if let Err(message) = compile(source) {
        return vec![syntax_diagnostic(source, &message)];
    }
    // Lua compiles chains of operators of any length, but the tree nests a level per operator
    // and grows with the text: past the bounds nothing is parsed, and the finding says where.
    if let Err(bound) = bounds::check(source) {
        let (line, column) = match bound {
            bounds::Bound::TooDeep { line, column } => (line, column),
            bounds::Bound::TooLarge { .. } => (1, 1),
        };
        return vec![at(
            NOT_ANALYSED,
            line,
            column,
            format!("{bound}: only Lua's compile check ran"),
        )];
    }
    // The tree's walks recurse once per level (at most bounds::MAX_DEPTH): a stack of its own.
    stacker::grow(64 << 20, || {
        let parsed = full_moon::parse_fallible(source, full_moon::LuaVersion::lua51());
        if !parsed.errors().is_empty() {
            // Lua compiled it: a construct this parser does not know; nothing to say of it.
            return Vec::new();
        }
        let mut walker = Walker::new(profile);
        walker.declared_keys = declared_keys;
        walker.scopes.push(HashMap::new());
        walker.functions.push(FunctionFacts::default());
        walker.block(parsed.ast().nodes());
        walker.finish_function();
        walker.one_command(parsed.ast().nodes());
        walker.cross_slot();
        let mut out = walker.out;
        out.extend(library::diagnostics(file, parsed.ast(), profile));
        out.extend(
            unstoppable::in_ast(parsed.ast(), profile)
                .into_iter()
                .map(|u| at(UNKILLABLE, u.line, u.column, u.message)),
        );
        out.sort_by_key(|d| (d.line, d.column));
        out.dedup();
        out
    })
}

/// Compile (never run) with Lua 5.1, text only as Redis: the error without its chunk name prefix.
fn compile(source: &str) -> Result<(), String> {
    use crate::engine::lua::{raw, vm};
    use mlua::ffi;
    // The loader the sandbox uses (text only, as Redis's Lua: a chunk starting with ESC is Lua text
    // too, and fails as text), in a bare state: only the compiler's message matters here.
    unsafe {
        let l = ffi::luaL_newstate();
        if l.is_null() {
            return Err("not enough memory to compile the script".to_string());
        }
        let status = vm::load_buffer(l, source.as_bytes(), c"=user_script".as_ptr());
        let result = if status == 0 {
            Ok(())
        } else {
            // As the server's error reply says it: a line break (from a long string in the
            // message) becomes a space.
            let message = raw::to_bytes(l, -1).unwrap_or(b"not enough memory");
            Err(String::from_utf8_lossy(message).replace(['\r', '\n'], " "))
        };
        ffi::lua_close(l);
        result
    }
}

/// Redis accepts `#!lua flags=...` as the first line; the parser does not.
fn strip_shebang(source: &str) -> &str {
    if source.starts_with("#!") {
        // Keep the line count: the rest starts on line 2 as in the file.
        match source.find('\n') {
            Some(i) => &source[i..],
            None => "",
        }
    } else {
        source
    }
}

fn at(rule: &'static str, line: usize, column: usize, message: String) -> Diagnostic {
    Diagnostic {
        rule,
        severity: rules::rule(rule).map_or(Severity::Warning, |r| r.severity),
        line,
        column,
        message,
    }
}

fn position(node: &impl Node) -> (usize, usize) {
    node.start_position()
        .map_or((1, 1), |p| (p.line(), p.character()))
}

/// Lua's compile error (`user_script:3: unexpected symbol near '/'`) at its line, said as a Lua
/// 5.2+ construct when that line has one.
fn syntax_diagnostic(source: &str, message: &str) -> Diagnostic {
    let rest = message.strip_prefix("user_script:").unwrap_or(message);
    let (line, text) = match rest.split_once(": ") {
        Some((n, text)) => (n.parse::<usize>().unwrap_or(1), text),
        None => (1, rest),
    };
    let line_text = source.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let code = code_part(line_text);
    let newer: [(&str, &str); 8] = [
        (
            "//",
            "`//` (integer division) is Lua 5.3: write math.floor(a / b)",
        ),
        (
            "goto ",
            "`goto` is Lua 5.2: use a loop with break, or a flag",
        ),
        (
            "::",
            "labels (`::name::`) are Lua 5.2: use a loop with break, or a flag",
        ),
        ("<<", "`<<` is Lua 5.3: write bit.lshift(a, n)"),
        (">>", "`>>` is Lua 5.3: write bit.rshift(a, n)"),
        ("&", "`&` is Lua 5.3: write bit.band(a, b)"),
        ("|", "`|` is Lua 5.3: write bit.bor(a, b)"),
        (
            "~",
            "`~` as xor/not is Lua 5.3: write bit.bxor(a, b) or bit.bnot(a)",
        ),
    ];
    for (token, hint) in newer {
        let found = code
            .match_indices(token)
            .find(|(i, _)| token != "~" || !code[i + 1..].starts_with('='));
        if let Some((i, _)) = found {
            let column = code[..i].chars().count() + 1;
            return at(
                LUA52_SYNTAX,
                line,
                column,
                format!("{hint} (Lua says: {text})"),
            );
        }
    }
    // Lua gives no column but the token it stopped at (`near '='`): its last place on the line,
    // else the first non-blank character.
    let near = text
        .rsplit_once("near '")
        .and_then(|(_, t)| t.strip_suffix('\''));
    let column = match near.and_then(|t| code.rfind(t)) {
        Some(i) => code[..i].chars().count() + 1,
        None => line_text.chars().take_while(|c| c.is_whitespace()).count() + 1,
    };
    at(SYNTAX, line, column, text.to_string())
}

/// A line without its string literals and comment, so `'a//b'` and `-- x | y` are not code.
fn code_part(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                out.push(' ');
                if c == '\\' {
                    chars.next();
                    out.push(' ');
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                out.push(' ');
            }
            None if c == '-' && chars.peek() == Some(&'-') => break,
            None => out.push(c),
        }
    }
    out
}

/// Where a value comes from, as far as one pass can tell.
#[derive(Debug, Clone, PartialEq)]
enum Origin {
    /// `KEYS[i]` (or a local holding it).
    Keys,
    /// `ARGV[i]`, `tonumber(ARGV[i])`.
    Argv,
    /// A string literal (its text, escapes as written).
    Literal(String),
    /// A number literal (its text).
    Number(String),
    /// `..` of parts, at least one of them not from KEYS.
    Built,
    /// The reply of a command that answers a string (GET, HGET, ...).
    StringReply(String),
    Other,
}

#[derive(Default)]
struct FunctionFacts {
    /// (line, column, command) of each write, in source order.
    writes: Vec<(usize, usize, String)>,
    /// Lines where the script can end with an error it raises or returns.
    error_exits: Vec<(usize, &'static str)>,
}

struct Walker<'k> {
    /// The server the script is checked for (its command table).
    profile: &'static Profile,
    /// The KEYS the script runs with, when a sidecar tells them.
    declared_keys: Option<&'k [String]>,
    /// Each `KEYS[n]` with a literal n: (n, line, column).
    keys_read: Vec<(usize, usize, usize)>,
    /// Each key written into the script where a command takes a key: (key, line, column).
    literal_keys: Vec<(String, usize, usize)>,
    scopes: Vec<HashMap<String, Origin>>,
    functions: Vec<FunctionFacts>,
    /// SETNX calls by the text of their key argument.
    setnx: Vec<(String, usize, usize)>,
    reported_globals: HashSet<String>,
    out: Vec<Diagnostic>,
}

/// The globals of the script sandbox, read from the sandbox itself (so they follow its Lua).
fn sandbox_globals() -> &'static HashSet<String> {
    static GLOBALS: OnceLock<HashSet<String>> = OnceLock::new();
    GLOBALS.get_or_init(|| {
        let mut sandbox = crate::engine::Sandbox::new();
        let report = sandbox.run(&crate::engine::RunRequest::new(
            "local t = {} for k in pairs(_G) do t[#t + 1] = k end return t",
        ));
        match report.reply {
            crate::engine::Reply::Array(items) => items
                .into_iter()
                .filter_map(|r| match r {
                    crate::engine::Reply::Bulk(b) => String::from_utf8(b).ok(),
                    _ => None,
                })
                .collect(),
            _ => HashSet::new(),
        }
    })
}

/// Commands whose reply is a string (or nil) that scripts often treat as a number.
const STRING_REPLIES: &[&str] = &[
    "get",
    "getdel",
    "getex",
    "getset",
    "getrange",
    "substr",
    "hget",
    "hincrbyfloat",
    "incrbyfloat",
    "lindex",
    "lpop",
    "rpop",
    "rpoplpush",
    "lmove",
    "spop",
    "srandmember",
    "zscore",
    "zincrby",
    "hrandfield",
    "randomkey",
];

fn token_text(token: &TokenReference) -> String {
    token.token().to_string()
}

fn string_literal(token: &TokenReference) -> Option<String> {
    match token.token().token_type() {
        TokenType::StringLiteral { literal, .. } => Some(literal.to_string()),
        _ => None,
    }
}

impl<'k> Walker<'k> {
    fn new(profile: &'static Profile) -> Walker<'k> {
        Walker {
            profile,
            declared_keys: None,
            keys_read: Vec::new(),
            literal_keys: Vec::new(),
            scopes: Vec::new(),
            functions: Vec::new(),
            setnx: Vec::new(),
            reported_globals: HashSet::new(),
            out: Vec::new(),
        }
    }

    fn lookup(&self, name: &str) -> Option<&Origin> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn declare(&mut self, name: String, origin: Origin) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name, origin);
        }
    }

    fn report(&mut self, rule: &'static str, node: &impl Node, message: String) {
        let (line, column) = position(node);
        self.out.push(at(rule, line, column, message));
    }

    fn block(&mut self, block: &Block) {
        self.scopes.push(HashMap::new());
        for stmt in block.stmts() {
            self.stmt(stmt);
        }
        if let Some(LastStmt::Return(ret)) = block.last_stmt() {
            let exprs: Vec<&Expression> = ret.returns().iter().collect();
            if let Some(first) = exprs.first() {
                if is_error_value(first) {
                    let (line, _) = position(ret);
                    self.functions
                        .last_mut()
                        .expect("a function")
                        .error_exits
                        .push((line, "returns an error"));
                }
            }
            for e in exprs {
                self.expr(e);
            }
        }
        self.scopes.pop();
    }

    fn function_body(&mut self, body: &FunctionBody, params: Vec<String>) {
        self.functions.push(FunctionFacts::default());
        self.scopes.push(HashMap::new());
        for p in params {
            self.declare(p, Origin::Other);
        }
        for p in body.parameters() {
            if let Parameter::Name(name) = p {
                self.declare(token_text(name), Origin::Other);
            }
        }
        self.block(body.block());
        self.scopes.pop();
        self.finish_function();
    }

    /// The write-before-validation rule, per function: the first write followed by an error exit.
    fn finish_function(&mut self) {
        let facts = self.functions.pop().expect("a function");
        if let Some((line, column, command)) = facts.writes.first() {
            if let Some((exit_line, how)) = facts.error_exits.iter().find(|(l, _)| l > line) {
                self.out.push(at(
                    WRITE_BEFORE_VALIDATION,
                    *line,
                    *column,
                    format!("{} writes here, and line {exit_line} {how} after it: the write stays (no rollback)", command.to_uppercase()),
                ));
            }
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::LocalAssignment(local) => {
                let exprs: Vec<&Expression> = local.expressions().iter().collect();
                for e in &exprs {
                    self.expr(e);
                }
                for (i, name) in local.names().iter().enumerate() {
                    let origin = exprs.get(i).map_or(Origin::Other, |e| self.origin(e));
                    self.declare(token_text(name), origin);
                }
            }
            Stmt::Assignment(assign) => {
                for e in assign.expressions() {
                    self.expr(e);
                }
                let exprs: Vec<&Expression> = assign.expressions().iter().collect();
                for (i, var) in assign.variables().iter().enumerate() {
                    match var {
                        Var::Name(name) => {
                            let text = token_text(name);
                            if self.lookup(&text).is_some() {
                                let origin = exprs.get(i).map_or(Origin::Other, |e| self.origin(e));
                                // A reassigned local: its origin is the last one seen.
                                for scope in self.scopes.iter_mut().rev() {
                                    if let Some(o) = scope.get_mut(&text) {
                                        *o = origin;
                                        break;
                                    }
                                }
                            } else if self.reported_globals.insert(text.clone()) {
                                self.report(
                                    GLOBAL_VARIABLE,
                                    name,
                                    format!("`{text}` is a global: Redis refuses it (Script attempted to create global variable '{text}')"),
                                );
                            }
                        }
                        Var::Expression(var) => self.var_expression(var.prefix(), var.suffixes()),
                        _ => {}
                    }
                }
            }
            Stmt::FunctionCall(call) => {
                if let Some(kind) = self.call(call.prefix(), call.suffixes()) {
                    if matches!(kind.as_str(), "redis.pcall" | "pcall") {
                        self.report(
                            DROPPED_PCALL_ERROR,
                            call,
                            format!("the result of {kind} is not looked at: an error it catches is dropped"),
                        );
                    }
                }
            }
            Stmt::Do(d) => self.block(d.block()),
            Stmt::While(w) => {
                self.expr(w.condition());
                self.block(w.block());
            }
            Stmt::Repeat(r) => {
                self.block(r.block());
                self.expr(r.until());
            }
            Stmt::If(i) => {
                self.expr(i.condition());
                self.block(i.block());
                for e in i.else_if().into_iter().flatten() {
                    self.expr(e.condition());
                    self.block(e.block());
                }
                if let Some(b) = i.else_block() {
                    self.block(b);
                }
            }
            Stmt::NumericFor(f) => {
                self.expr(f.start());
                self.expr(f.end());
                if let Some(s) = f.step() {
                    self.expr(s);
                }
                self.scopes.push(HashMap::new());
                self.declare(token_text(f.index_variable()), Origin::Other);
                self.block(f.block());
                self.scopes.pop();
            }
            Stmt::GenericFor(f) => {
                for e in f.expressions() {
                    self.expr(e);
                }
                self.scopes.push(HashMap::new());
                for n in f.names() {
                    self.declare(token_text(n), Origin::Other);
                }
                self.block(f.block());
                self.scopes.pop();
            }
            Stmt::LocalFunction(f) => {
                self.declare(token_text(f.name()), Origin::Other);
                self.function_body(f.body(), Vec::new());
            }
            Stmt::FunctionDeclaration(f) => {
                let names: Vec<String> = f.name().names().iter().map(token_text).collect();
                let first = names.first().cloned().unwrap_or_default();
                if names.len() == 1
                    && f.name().method_name().is_none()
                    && self.lookup(&first).is_none()
                {
                    self.reported_globals.insert(first.clone());
                    self.report(
                        GLOBAL_VARIABLE,
                        f.name(),
                        format!("`function {first}` creates a global: Redis refuses it (Script attempted to create global variable '{first}')"),
                    );
                } else if self.lookup(&first).is_none() && !sandbox_globals().contains(&first) {
                    self.unknown_global(&first, f.name());
                }
                let params = if f.name().method_name().is_some() {
                    vec!["self".to_string()]
                } else {
                    Vec::new()
                };
                self.function_body(f.body(), params);
            }
            _ => {}
        }
    }

    fn unknown_global(&mut self, name: &str, node: &impl Node) {
        if !self.reported_globals.insert(name.to_string()) {
            return;
        }
        let hint = match name {
            "utf8" | "bit32" => format!("`{name}` is Lua 5.2+: Redis's Lua 5.1 has no {name} (bit operations: the `bit` library)"),
            "os" | "io" | "require" | "dofile" | "loadfile" | "print" | "debug" | "package" | "module" => {
                format!("`{name}` is not available to scripts: Redis removes it from the sandbox")
            }
            _ => format!("`{name}` is not defined: Redis raises an error (Script attempted to access nonexistent global variable '{name}')"),
        };
        let rule = if matches!(name, "utf8" | "bit32") {
            LUA52_SYNTAX
        } else {
            GLOBAL_VARIABLE
        };
        self.report(rule, node, hint);
    }

    fn expr(&mut self, e: &Expression) {
        match e {
            Expression::BinaryOperator { lhs, binop, rhs } => {
                self.expr(lhs);
                self.expr(rhs);
                let numeric = matches!(
                    binop,
                    BinOp::Plus(_)
                        | BinOp::Minus(_)
                        | BinOp::Star(_)
                        | BinOp::Slash(_)
                        | BinOp::Percent(_)
                        | BinOp::Caret(_)
                        | BinOp::LessThan(_)
                        | BinOp::LessThanEqual(_)
                        | BinOp::GreaterThan(_)
                        | BinOp::GreaterThanEqual(_)
                );
                let equality = matches!(binop, BinOp::TwoEqual(_) | BinOp::TildeEqual(_));
                for (side, other) in [(lhs, rhs), (rhs, lhs)] {
                    if let Origin::StringReply(cmd) = self.origin(side) {
                        let against_number = matches!(self.origin(other), Origin::Number(_));
                        if numeric || (equality && against_number) {
                            self.report(
                                REPLY_WITHOUT_TONUMBER,
                                side.as_ref(),
                                format!("the reply of {} is a string (or false when missing), used here with `{}`", cmd.to_uppercase(), binop.token().token().to_string().trim()),
                            );
                            break;
                        }
                    }
                }
            }
            Expression::UnaryOperator { unop, expression } => {
                self.expr(expression);
                if matches!(unop, UnOp::Minus(_)) {
                    if let Origin::StringReply(cmd) = self.origin(expression) {
                        self.report(
                            REPLY_WITHOUT_TONUMBER,
                            expression.as_ref(),
                            format!(
                                "the reply of {} is a string, negated here",
                                cmd.to_uppercase()
                            ),
                        );
                    }
                }
            }
            Expression::Parentheses { expression, .. } => self.expr(expression),
            Expression::Function(f) => self.function_body(&f.1, Vec::new()),
            Expression::FunctionCall(call) => {
                self.call(call.prefix(), call.suffixes());
            }
            Expression::TableConstructor(t) => {
                for field in t.fields() {
                    match field {
                        Field::ExpressionKey { key, value, .. } => {
                            self.expr(key);
                            self.expr(value);
                        }
                        Field::NameKey { value, .. } => self.expr(value),
                        Field::NoKey(value) => self.expr(value),
                        _ => {}
                    }
                }
            }
            Expression::String(token) => self.check_escapes(token),
            Expression::Var(Var::Name(name)) => {
                let text = token_text(name);
                if self.lookup(&text).is_none() && !sandbox_globals().contains(&text) {
                    self.unknown_global(&text, name);
                }
            }
            Expression::Var(Var::Expression(v)) => self.var_expression(v.prefix(), v.suffixes()),
            _ => {}
        }
    }

    /// `\x41`, `\u{..}` and `\z` are Lua 5.2+ escapes: Lua 5.1 reads `\x41` as the text "x41".
    fn check_escapes(&mut self, token: &TokenReference) {
        let Some(raw) = string_literal(token) else {
            return;
        };
        let bytes = raw.as_bytes();
        let mut i = 0;
        while i + 1 < bytes.len() {
            if bytes[i] == b'\\' {
                if matches!(bytes[i + 1], b'x' | b'u' | b'z') {
                    self.report(
                        LUA52_SYNTAX,
                        token,
                        format!("`\\{}` is a Lua 5.2+ escape: Lua 5.1 reads it as the letter {} (write bytes as decimal escapes, \\65)", bytes[i + 1] as char, bytes[i + 1] as char),
                    );
                    return;
                }
                i += 2;
            } else {
                i += 1;
            }
        }
    }

    fn var_expression<'a>(&mut self, prefix: &Prefix, suffixes: impl Iterator<Item = &'a Suffix>) {
        let suffixes: Vec<&Suffix> = suffixes.collect();
        self.walk_prefix_and_suffixes(prefix, &suffixes);
        if let (Prefix::Name(base), Some(Suffix::Index(ast::Index::Brackets { expression, .. }))) =
            (prefix, suffixes.first())
        {
            if token_text(base) == "KEYS" && self.lookup("KEYS").is_none() {
                if let Expression::Number(n) = expression {
                    if let Ok(n) = token_text(n).trim().parse::<usize>() {
                        self.key_read(n, base);
                    }
                }
            }
        }
        if let (Prefix::Name(base), Some(Suffix::Index(ast::Index::Dot { name, .. }))) =
            (prefix, suffixes.first())
        {
            let path = format!("{}.{}", token_text(base), token_text(name));
            if self.lookup(&token_text(base)).is_none() {
                if let Some(hint) = lua52_library(&path) {
                    self.report(LUA52_SYNTAX, name, hint);
                }
            }
        }
    }

    /// `KEYS[n]`: nil past the declared keys (and KEYS[0] always).
    fn key_read(&mut self, n: usize, node: &impl Node) {
        let (line, column) = position(node);
        self.keys_read.push((n, line, column));
        let message =
            match self.declared_keys {
                _ if n == 0 => {
                    "KEYS[0] is always nil: Lua's tables start at 1 (KEYS[1] is the first key)"
                        .to_string()
                }
                Some(keys) if n > keys.len() => format!(
                "KEYS[{n}] is not declared: the sidecar passes {} key{} ({}), so KEYS[{n}] is nil",
                keys.len(),
                if keys.len() == 1 { "" } else { "s" },
                if keys.is_empty() {
                    "none".to_string()
                } else {
                    keys.iter().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ")
                }
            ),
                _ => return,
            };
        self.out.push(at(UNDECLARED_KEY, line, column, message));
    }

    /// The keys the script names (literal keys, and the sidecar's KEYS) in more than one slot:
    /// one finding, at the first place naming a key of another slot than the first key's.
    fn cross_slot(&mut self) {
        let declared = self.declared_keys.unwrap_or_default();
        let mut keys: Vec<(&str, Option<(usize, usize)>)> = Vec::new();
        for (i, key) in declared.iter().enumerate() {
            let first_read = self
                .keys_read
                .iter()
                .find(|(n, _, _)| *n == i + 1)
                .map(|(_, l, c)| (*l, *c));
            keys.push((key, first_read));
        }
        for (key, line, column) in &self.literal_keys {
            keys.push((key, Some((*line, *column))));
        }
        let Some((first, _)) = keys.first().copied() else {
            return;
        };
        let first_slot = crate::engine::lint::hash_slot(first.as_bytes());
        let other = keys
            .iter()
            .filter(|(k, _)| crate::engine::lint::hash_slot(k.as_bytes()) != first_slot)
            .min_by_key(|(_, at)| at.unwrap_or((usize::MAX, 0)));
        if let Some((key, at_place)) = other {
            let (line, column) = at_place.unwrap_or((1, 1));
            let slot = crate::engine::lint::hash_slot(key.as_bytes());
            self.out.push(at(
                CROSS_SLOT,
                line,
                column,
                format!("\"{key}\" hashes to slot {slot} and \"{first}\" to slot {first_slot}: a Redis Cluster answers CROSSSLOT; give them one {{hash tag}}"),
            ));
        }
    }

    fn walk_prefix_and_suffixes(&mut self, prefix: &Prefix, suffixes: &[&Suffix]) {
        match prefix {
            Prefix::Expression(e) => self.expr(e),
            Prefix::Name(name) => {
                let text = token_text(name);
                if self.lookup(&text).is_none() && !sandbox_globals().contains(&text) {
                    self.unknown_global(&text, name);
                }
            }
            _ => {}
        }
        for s in suffixes {
            match s {
                Suffix::Index(ast::Index::Brackets { expression, .. }) => self.expr(expression),
                Suffix::Call(Call::AnonymousCall(args)) => self.args(args),
                Suffix::Call(Call::MethodCall(m)) => self.args(m.args()),
                _ => {}
            }
        }
    }

    fn args(&mut self, args: &FunctionArgs) {
        match args {
            FunctionArgs::Parentheses { arguments, .. } => {
                for a in arguments {
                    self.expr(a);
                }
            }
            FunctionArgs::TableConstructor(t) => {
                self.expr(&Expression::TableConstructor(t.clone()))
            }
            FunctionArgs::String(s) => self.check_escapes(s),
            _ => {}
        }
    }

    /// Walk a call; returns its callee's dotted name when it is a plain one (`redis.call`).
    fn call<'a>(
        &mut self,
        prefix: &Prefix,
        suffixes: impl Iterator<Item = &'a Suffix>,
    ) -> Option<String> {
        let suffixes: Vec<&Suffix> = suffixes.collect();
        let callee = callee_name(prefix, &suffixes);
        // Walk arguments and inner expressions first.
        self.walk_prefix_and_suffixes(prefix, &suffixes);
        if let Some(name) = &callee {
            if let Some(hint) = lua52_library(name) {
                self.report(LUA52_SYNTAX, prefix, hint);
            }
        }
        let args = first_call_args(&suffixes);
        match callee.as_deref() {
            Some("redis.call" | "redis.pcall" | "server.call" | "server.pcall") => {
                if let Some(args) = args {
                    self.redis_call(prefix, &args);
                }
            }
            Some("error" | "assert") => {
                let (line, _) = position(prefix);
                let how = if callee.as_deref() == Some("error") {
                    "raises an error"
                } else {
                    "can fail an assert"
                };
                self.functions
                    .last_mut()
                    .expect("a function")
                    .error_exits
                    .push((line, how));
            }
            Some("tonumber") => {
                if let Some(args) = args {
                    if let Some(first) = args.first() {
                        if self.origin(first) == Origin::Keys {
                            self.report(
                                VALUE_IN_KEYS,
                                *first,
                                "tonumber(KEYS[...]): a number passed in KEYS".into(),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
        callee
    }

    /// A command the profile lacks or refuses in scripts, with the profiles that do run it.
    fn not_in_profile(&mut self, prefix: &Prefix, command: &str, refusal: &Refusal) {
        let runs_it = |p: &'static Profile| {
            lookup_in(p, command)
                .is_some_and(|r| !r.info.has(crate::engine::commands::table::F_NOSCRIPT))
        };
        let elsewhere: Vec<&str> = PROFILES
            .iter()
            .filter(|p| runs_it(p))
            .map(|p| p.id)
            .collect();
        let upper = command.to_uppercase();
        let what = match refusal {
            Refusal::NoScript => format!("{upper} is refused in scripts by {}", self.profile.id),
            _ => format!("{upper} is not a command of {}", self.profile.id),
        };
        let message = if elsewhere.is_empty() && *refusal == Refusal::NoScript {
            format!("{what}, as by every profile: scripts cannot call it")
        } else if elsewhere.is_empty() {
            format!("{what}, nor of any profile (a module's command, or a typo?)")
        } else {
            format!("{what}: scripts can call it on {}", elsewhere.join(", "))
        };
        self.report(COMMAND_NOT_IN_PROFILE, prefix, message);
    }

    /// A call whose argument count the command's table refuses.
    fn wrong_arity(&mut self, prefix: &Prefix, command: &str, args: &[Vec<u8>]) {
        let sub = args
            .get(1)
            .map(|s| format!("{command}|{}", lower(s)))
            .filter(|_| is_container(self.profile, command));
        let info = sub
            .as_deref()
            .and_then(|s| lookup_in(self.profile, s))
            .or_else(|| lookup_in(self.profile, command));
        let Some(info) = info.map(|r| r.info) else {
            return;
        };
        let name = info.name.replace('|', " ").to_uppercase();
        let wanted = if info.arity >= 0 {
            format!("exactly {}", info.arity)
        } else {
            format!("at least {}", -info.arity)
        };
        let message = format!(
            "{name} takes {wanted} arguments counting its name, this call passes {}: the server answers {}",
            args.len(),
            Refusal::WrongArity.text_in(self.profile)
        );
        self.report(WRONG_ARITY, prefix, message);
    }

    fn redis_call(&mut self, prefix: &Prefix, args: &[&Expression]) {
        let Some(Origin::Literal(name)) = args.first().map(|a| self.origin(a)) else {
            return;
        };
        let command = lower(name.as_bytes());
        // Arguments as far as literals tell; a trailing call (`unpack(...)`) may expand to many.
        let expands = args
            .last()
            .is_some_and(|a| matches!(a, Expression::FunctionCall(_)) || is_vararg(a));
        let fake: Vec<Vec<u8>> = args
            .iter()
            .map(|a| match self.origin(a) {
                Origin::Literal(t) | Origin::Number(t) => t.into_bytes(),
                _ => b"x".to_vec(),
            })
            .collect();
        // A container's subcommand from a variable: nothing is known of the call.
        let literal_sub = matches!(
            args.get(1).map(|a| self.origin(a)),
            Some(Origin::Literal(_))
        );
        if !literal_sub && args.len() > 1 && is_container(self.profile, &command) {
            return;
        }
        let resolved = match resolve_in(self.profile, &fake) {
            Ok(resolved) => resolved,
            // A container the profile has, with a subcommand it has not (7.0 calls it unknown).
            Err(refusal @ (Refusal::Unknown | Refusal::UnknownSubcommand(..)))
                if args.len() > 1 && is_container(self.profile, &command) =>
            {
                let sub = String::from_utf8_lossy(&fake[1]).to_uppercase();
                let message = format!(
                    "{} has no subcommand {sub} on {}: the server answers {}",
                    command.to_uppercase(),
                    self.profile.id,
                    refusal.text_in(self.profile)
                );
                self.report(COMMAND_NOT_IN_PROFILE, prefix, message);
                return;
            }
            Err(refusal @ (Refusal::Unknown | Refusal::NoScript)) => {
                self.not_in_profile(prefix, &command, &refusal);
                return;
            }
            Err(Refusal::WrongArity) if !expands => {
                self.wrong_arity(prefix, &command, &fake);
                return;
            }
            Err(_) => return,
        };
        let key_positions: Vec<usize> = if expands {
            Vec::new()
        } else {
            resolved.key_positions(&fake)
        };
        let (line, column) = position(prefix);
        if resolved.info.is_write() {
            self.functions.last_mut().expect("a function").writes.push((
                line,
                column,
                command.clone(),
            ));
        }
        self.check_arguments(&command, args, &key_positions, expands);
        if let Some(message) = self.unbounded_read(&command, args, &fake) {
            self.report(UNBOUNDED_READ, prefix, message);
        }
        if crate::engine::commands::table::NONDETERMINISTIC.contains(&command.as_str()) {
            self.report(
                NONDETERMINISTIC,
                prefix,
                format!(
                    "{} gives another result on every run",
                    command.to_uppercase()
                ),
            );
        }
        self.pair_setnx_with_expire(&command, args, line, column);
    }

    /// Each argument by where it comes from: a key not from KEYS, a KEYS entry that is no key
    /// there, data written into the script.
    fn check_arguments(
        &mut self,
        command: &str,
        args: &[&Expression],
        key_positions: &[usize],
        expands: bool,
    ) {
        for (i, arg) in args.iter().enumerate().skip(1) {
            let origin = self.origin(arg);
            let is_key = key_positions.contains(&i);
            if let (Origin::Literal(text), true) = (&origin, is_key) {
                let (line, column) = position(*arg);
                self.literal_keys.push((text.clone(), line, column));
            }
            match (&origin, is_key) {
                (Origin::Literal(text), true) => self.report(
                    KEY_NOT_FROM_KEYS,
                    *arg,
                    format!(
                        "{} uses the key \"{}\" written in the script, not passed in KEYS",
                        command.to_uppercase(),
                        text
                    ),
                ),
                (Origin::Built | Origin::Argv, true) => self.report(
                    KEY_NOT_FROM_KEYS,
                    *arg,
                    format!(
                        "{} uses a key built in the script, not passed in KEYS",
                        command.to_uppercase()
                    ),
                ),
                (Origin::Keys, false) if !expands && !key_positions.is_empty() => self.report(
                    VALUE_IN_KEYS,
                    *arg,
                    format!(
                        "a KEYS entry is argument {i} of {}, which is not a key there",
                        command.to_uppercase()
                    ),
                ),
                (Origin::Literal(text), false) if looks_like_data(text) => self.report(
                    LITERAL_BELONGS_IN_ARGV,
                    *arg,
                    format!("\"{text}\" looks like data written into the script"),
                ),
                (Origin::Number(text), false)
                    if text.len() >= 10 && text.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    self.report(
                        LITERAL_BELONGS_IN_ARGV,
                        *arg,
                        format!("{text} looks like a timestamp or an id written into the script"),
                    )
                }
                _ => {}
            }
        }
    }

    /// A read of a whole key or keyspace, whatever its size (`fake`: the arguments as far as
    /// literals tell).
    fn unbounded_read(
        &self,
        command: &str,
        args: &[&Expression],
        fake: &[Vec<u8>],
    ) -> Option<String> {
        let literal_at = |i: usize| match args.get(i).map(|a| self.origin(a)) {
            Some(Origin::Number(t)) | Some(Origin::Literal(t)) => Some(t),
            _ => None,
        };
        match command {
            "keys" => {
                Some("KEYS walks the whole keyspace: use SCAN with MATCH and COUNT".to_string())
            }
            "smembers" | "hgetall" | "hkeys" | "hvals" | "sunion" | "sinter" | "sdiff" => {
                Some(format!(
                    "{} reads the whole key whatever its size",
                    command.to_uppercase()
                ))
            }
            "lrange" | "zrange" | "zrevrange"
                if literal_at(2).as_deref() == Some("0")
                    && literal_at(3).as_deref() == Some("-1") =>
            {
                Some(format!(
                    "{} 0 -1 reads the whole key whatever its size",
                    command.to_uppercase()
                ))
            }
            "xrange" | "xrevrange" if !fake.iter().any(|a| lower(a) == "count") => Some(format!(
                "{} without COUNT reads the whole stream range",
                command.to_uppercase()
            )),
            _ => None,
        }
    }

    /// SETNX then EXPIRE on the same key: two commands where SET NX EX is one.
    fn pair_setnx_with_expire(
        &mut self,
        command: &str,
        args: &[&Expression],
        line: usize,
        column: usize,
    ) {
        let key_text = args.get(1).map(|a| a.to_string().trim().to_string());
        match command {
            "setnx" => {
                if let Some(k) = key_text {
                    self.setnx.push((k, line, column));
                }
            }
            "expire" | "pexpire" | "expireat" | "pexpireat" => {
                if let Some(k) = key_text {
                    if let Some(pos) = self.setnx.iter().position(|(key, _, _)| *key == k) {
                        let (_, l, c) = self.setnx.remove(pos);
                        self.out.push(at(
                            SETNX_THEN_EXPIRE,
                            l,
                            c,
                            format!(
                                "SETNX here and {} on line {line} on the same key",
                                command.to_uppercase()
                            ),
                        ));
                    }
                }
            }
            _ => {}
        }
    }

    /// Where an expression's value comes from.
    fn origin(&self, e: &Expression) -> Origin {
        match e {
            Expression::String(t) => string_literal(t).map_or(Origin::Other, Origin::Literal),
            Expression::Number(t) => Origin::Number(token_text(t)),
            Expression::UnaryOperator {
                unop: UnOp::Minus(_),
                expression,
            } => match self.origin(expression) {
                Origin::Number(n) => Origin::Number(format!("-{n}")),
                _ => Origin::Other,
            },
            Expression::Parentheses { expression, .. } => self.origin(expression),
            Expression::BinaryOperator {
                lhs,
                binop: BinOp::TwoDots(_),
                rhs,
            } => match (self.origin(lhs), self.origin(rhs)) {
                (Origin::Keys, Origin::Keys) => Origin::Keys,
                _ => Origin::Built,
            },
            Expression::Var(Var::Name(name)) => self
                .lookup(&token_text(name))
                .cloned()
                .unwrap_or(Origin::Other),
            Expression::Var(Var::Expression(v)) => match (v.prefix(), v.suffixes().next()) {
                (Prefix::Name(n), Some(Suffix::Index(ast::Index::Brackets { .. })))
                    if v.suffixes().count() == 1 =>
                {
                    match token_text(n).as_str() {
                        "KEYS" if self.lookup("KEYS").is_none() => Origin::Keys,
                        "ARGV" if self.lookup("ARGV").is_none() => Origin::Argv,
                        _ => Origin::Other,
                    }
                }
                _ => Origin::Other,
            },
            Expression::FunctionCall(call) => {
                let suffixes: Vec<&Suffix> = call.suffixes().collect();
                match callee_name(call.prefix(), &suffixes).as_deref() {
                    Some("tonumber") => match first_call_args(&suffixes)
                        .and_then(|a| a.first().map(|e| self.origin(e)))
                    {
                        Some(Origin::Argv) => Origin::Argv,
                        _ => Origin::Other,
                    },
                    Some("redis.call" | "server.call") => {
                        let args = first_call_args(&suffixes).unwrap_or_default();
                        match args.first().map(|a| self.origin(a)) {
                            Some(Origin::Literal(name))
                                if STRING_REPLIES.contains(&lower(name.as_bytes()).as_str()) =>
                            {
                                Origin::StringReply(lower(name.as_bytes()))
                            }
                            _ => Origin::Other,
                        }
                    }
                    _ => Origin::Other,
                }
            }
            _ => Origin::Other,
        }
    }

    /// A script whose whole body is `return redis.call(CMD, KEYS/ARGV ...)`.
    fn one_command(&mut self, block: &Block) {
        if block.stmts().next().is_some() {
            return;
        }
        let Some(LastStmt::Return(ret)) = block.last_stmt() else {
            return;
        };
        let returns: Vec<&Expression> = ret.returns().iter().collect();
        let [Expression::FunctionCall(call)] = returns.as_slice() else {
            return;
        };
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        if callee_name(call.prefix(), &suffixes).as_deref() != Some("redis.call") {
            return;
        }
        let Some(args) = first_call_args(&suffixes) else {
            return;
        };
        let Some(Origin::Literal(name)) = args.first().map(|a| self.origin(a)) else {
            return;
        };
        let plain = args[1..].iter().all(|a| {
            matches!(
                self.origin(a),
                Origin::Keys | Origin::Argv | Origin::Literal(_) | Origin::Number(_)
            )
        });
        if plain {
            self.report(
                ONE_COMMAND,
                call.prefix(),
                format!("the whole script is one {} call", name.to_uppercase()),
            );
        }
    }
}

/// `redis.call`, `pcall`, `table.unpack`: the dotted name of a plain callee.
fn callee_name(prefix: &Prefix, suffixes: &[&Suffix]) -> Option<String> {
    let Prefix::Name(base) = prefix else {
        return None;
    };
    let mut name = token_text(base);
    for s in suffixes {
        match s {
            Suffix::Index(ast::Index::Dot { name: field, .. }) => {
                name.push('.');
                name.push_str(&token_text(field));
            }
            Suffix::Call(_) => return Some(name),
            _ => return None,
        }
    }
    None
}

/// The arguments of the first call in a chain of suffixes (`redis.call(...)`).
fn first_call_args<'a>(suffixes: &[&'a Suffix]) -> Option<Vec<&'a Expression>> {
    suffixes.iter().find_map(|s| match s {
        Suffix::Call(Call::AnonymousCall(FunctionArgs::Parentheses { arguments, .. })) => {
            Some(arguments.iter().collect())
        }
        _ => None,
    })
}

fn is_vararg(e: &Expression) -> bool {
    matches!(e, Expression::Symbol(t) if matches!(t.token().token_type(), TokenType::Symbol { symbol: Symbol::Ellipsis }))
}

/// A returned value that is an error: `redis.error_reply(...)` or `{err = ...}`.
fn is_error_value(e: &Expression) -> bool {
    match e {
        Expression::FunctionCall(call) => {
            let suffixes: Vec<&Suffix> = call.suffixes().collect();
            matches!(
                callee_name(call.prefix(), &suffixes).as_deref(),
                Some("redis.error_reply" | "server.error_reply")
            )
        }
        Expression::TableConstructor(t) => t
            .fields()
            .iter()
            .any(|f| matches!(f, Field::NameKey { key, .. } if token_text(key) == "err")),
        _ => false,
    }
}

/// Library functions Lua 5.1 does not have.
fn lua52_library(path: &str) -> Option<String> {
    let instead = match path {
        "table.unpack" => "unpack",
        "table.pack" => "{...} and select('#', ...)",
        "math.type" => "type(x) == 'number' and x % 1 == 0",
        "string.pack" | "string.unpack" => "struct.pack / struct.unpack",
        "table.move" => "a loop",
        _ => return None,
    };
    Some(format!(
        "`{path}` is Lua 5.2+: Lua 5.1 has no such function (use {instead})"
    ))
}

/// A literal that looks like an id or a timestamp rather than a constant of the script.
fn looks_like_data(text: &str) -> bool {
    let mut run = 0;
    let mut longest_digits = 0;
    for b in text.bytes() {
        if b.is_ascii_digit() {
            run += 1;
            longest_digits = longest_digits.max(run);
        } else {
            run = 0;
        }
    }
    let hex_run = text
        .split(|c: char| !c.is_ascii_hexdigit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    let uuid_like = text.len() >= 36 && text.matches('-').count() >= 4 && hex_run >= 8;
    longest_digits >= 6 || hex_run >= 16 || uuid_like
}
