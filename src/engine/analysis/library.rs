//! Function libraries (`#!lua name=mylib`, loaded with FUNCTION LOAD), read statically: the
//! functions a library registers (`redis.register_function`), their flags and callbacks, and
//! what the server refuses at load time or in a `no-writes` function. Nothing of the library is
//! run: its top level would run at every keystroke otherwise.

use super::rules::*;
use super::{at, position, string_literal, token_text, Diagnostic};
use crate::engine::commands::{lookup_in, lower};
use crate::engine::profile::Profile;
use full_moon::ast::{
    self, Call, Expression, Field, FunctionArgs, FunctionBody, FunctionCall, Prefix, Stmt, Suffix,
    Var,
};
use full_moon::visitors::{Visit, Visitor};

/// The flags `redis.register_function` accepts (function_lua.c).
pub const FLAGS: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

/// One function a library registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub flags: Vec<String>,
    /// Where its name is written (1-based).
    pub line: usize,
    pub column: usize,
}

/// A library's name (from its shebang) and its functions, in the order registered.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Library {
    pub name: Option<String>,
    pub functions: Vec<Function>,
}

/// The library a file declares, when it is one: a `#!lua name=` shebang or a call of
/// `redis.register_function`. Parses, never runs.
pub fn library(source: &str) -> Option<Library> {
    let shebang_name = shebang(source).and_then(|s| s.name);
    if shebang_name.is_none() && !source.contains("register_function") {
        return None;
    }
    let body = super::strip_shebang(source);
    let parsed = full_moon::parse_fallible(body, full_moon::LuaVersion::lua51());
    let mut reader = Reader::default();
    if parsed.errors().is_empty() {
        reader.visit_ast(parsed.ast());
    }
    let library = Library {
        name: shebang_name,
        functions: reader
            .registrations
            .iter()
            .map(|r| r.function.clone())
            .collect(),
    };
    (library.name.is_some() || !library.functions.is_empty()).then_some(library)
}

/// The shebang as FUNCTION LOAD reads it: `#!<engine> name=<library> ...`.
struct Shebang {
    engine: String,
    name: Option<String>,
    /// Parts other than `name=` (the server refuses them).
    invalid: Vec<String>,
}

fn shebang(source: &str) -> Option<Shebang> {
    let first = source.lines().next()?.strip_prefix("#!")?;
    let mut parts = first.split(' ').filter(|p| !p.is_empty());
    let engine = parts.next().unwrap_or("").to_string();
    let mut name = None;
    let mut invalid = Vec::new();
    for part in parts {
        match part.strip_prefix("name=") {
            Some(n) if name.is_none() => name = Some(n.to_string()),
            _ => invalid.push(part.to_string()),
        }
    }
    Some(Shebang {
        engine,
        name,
        invalid,
    })
}

/// The server's rule for library and function names.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

struct Registration {
    function: Function,
    /// (flag, line, column) as written.
    flags: Vec<(String, usize, usize)>,
    callback: Option<Callback>,
}

enum Callback {
    Body(Box<FunctionBody>),
    Named(String),
}

/// One walk over the library: registrations, top-level functions (callbacks by name), and what
/// runs at load time (outside every function body).
#[derive(Default)]
struct Reader {
    depth: usize,
    registrations: Vec<Registration>,
    named: Vec<(String, FunctionBody)>,
    /// (what, line, column) used at load time: `redis.call`, `KEYS`, `ARGV`.
    load_time: Vec<(String, usize, usize)>,
}

impl Visitor for Reader {
    fn visit_function_body(&mut self, _: &FunctionBody) {
        self.depth += 1;
    }
    fn visit_function_body_end(&mut self, _: &FunctionBody) {
        self.depth -= 1;
    }
    fn visit_local_function(&mut self, f: &ast::LocalFunction) {
        if self.depth == 0 {
            self.named.push((token_text(f.name()), f.body().clone()));
        }
    }
    fn visit_function_declaration(&mut self, f: &ast::FunctionDeclaration) {
        if self.depth == 0 {
            let name = f
                .name()
                .names()
                .iter()
                .map(token_text)
                .collect::<Vec<_>>()
                .join(".");
            self.named.push((name, f.body().clone()));
        }
    }
    fn visit_stmt(&mut self, stmt: &Stmt) {
        if self.depth != 0 {
            return;
        }
        if let Stmt::LocalAssignment(a) = stmt {
            for (name, value) in a.names().iter().zip(a.expressions().iter()) {
                if let Expression::Function(f) = value {
                    self.named.push((token_text(name), f.1.clone()));
                }
            }
        }
    }
    fn visit_var(&mut self, var: &Var) {
        if self.depth != 0 {
            return;
        }
        let name = match var {
            Var::Name(token) => token,
            Var::Expression(e) => match e.prefix() {
                Prefix::Name(token) => token,
                _ => return,
            },
            _ => return,
        };
        let text = token_text(name);
        if text == "KEYS" || text == "ARGV" {
            let (line, column) = position(name);
            self.load_time.push((text, line, column));
        }
    }
    fn visit_function_call(&mut self, call: &FunctionCall) {
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        let Some(name) = super::callee_name(call.prefix(), &suffixes) else {
            return;
        };
        match name.as_str() {
            "redis.call" | "redis.pcall" | "server.call" | "server.pcall" if self.depth == 0 => {
                let (line, column) = position(call.prefix());
                self.load_time.push((name, line, column));
            }
            "redis.register_function" | "server.register_function" => {
                if let Some(r) = registration(&suffixes) {
                    self.registrations.push(r);
                }
            }
            _ => {}
        }
    }
}

/// `redis.register_function('name', callback)` or `redis.register_function{function_name=...,
/// callback=..., flags={...}}`; None when the name is not a literal.
fn registration(suffixes: &[&Suffix]) -> Option<Registration> {
    let args = suffixes.iter().find_map(|s| match s {
        Suffix::Call(Call::AnonymousCall(args)) => Some(args),
        _ => None,
    })?;
    let callback_of = |e: &Expression| match e {
        Expression::Function(f) => Some(Callback::Body(Box::new(f.1.clone()))),
        Expression::Var(Var::Name(n)) => Some(Callback::Named(token_text(n))),
        _ => None,
    };
    let named = |token: &full_moon::tokenizer::TokenReference, flags, callback| {
        let name = string_literal(token)?;
        let (line, column) = position(token);
        Some(Registration {
            function: Function {
                name,
                flags: Vec::new(),
                line,
                column,
            },
            flags,
            callback,
        })
    };
    match args {
        FunctionArgs::Parentheses { arguments, .. } => {
            let mut it = arguments.iter();
            let Some(Expression::String(token)) = it.next() else {
                return None;
            };
            named(token, Vec::new(), it.next().and_then(callback_of))
        }
        FunctionArgs::TableConstructor(table) => {
            let mut name = None;
            let mut flags = Vec::new();
            let mut callback = None;
            for field in table.fields() {
                let Field::NameKey { key, value, .. } = field else {
                    continue;
                };
                match token_text(key).as_str() {
                    "function_name" => {
                        if let Expression::String(token) = value {
                            name = Some(token.clone());
                        }
                    }
                    "callback" => callback = callback_of(value),
                    "flags" => {
                        if let Expression::TableConstructor(t) = value {
                            for f in t.fields() {
                                if let Field::NoKey(Expression::String(token)) = f {
                                    if let Some(text) = string_literal(token) {
                                        let (line, column) = position(token);
                                        flags.push((text, line, column));
                                    }
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            let mut r = named(&name?, flags, callback)?;
            r.function.flags = r.flags.iter().map(|(f, ..)| f.clone()).collect();
            Some(r)
        }
        _ => None,
    }
}

/// The write commands a function body calls by a literal name: (command, line, column).
struct Writes {
    profile: &'static Profile,
    found: Vec<(String, usize, usize)>,
}

impl Visitor for Writes {
    fn visit_function_call(&mut self, call: &FunctionCall) {
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        if !matches!(
            super::callee_name(call.prefix(), &suffixes).as_deref(),
            Some("redis.call" | "redis.pcall" | "server.call" | "server.pcall")
        ) {
            return;
        }
        let Some(Expression::String(token)) =
            super::first_call_args(&suffixes).and_then(|args| args.first().copied())
        else {
            return;
        };
        let Some(command) = string_literal(token).map(|c| lower(c.as_bytes())) else {
            return;
        };
        if lookup_in(self.profile, &command).is_some_and(|r| r.info.is_write()) {
            let (line, column) = position(call.prefix());
            self.found.push((command, line, column));
        }
    }
}

/// The library's findings: its shebang and names, duplicate functions, unknown flags, writes in
/// `no-writes` functions, and what the server refuses at load time.
pub(super) fn diagnostics(
    source: &str,
    ast: &full_moon::ast::Ast,
    profile: &'static Profile,
) -> Vec<Diagnostic> {
    let header = shebang(source);
    let library_by_header = header.as_ref().is_some_and(|h| h.name.is_some());
    // A plain script costs no second walk.
    if !library_by_header && !source.contains("register_function") {
        return Vec::new();
    }
    let mut reader = Reader::default();
    reader.visit_ast(ast);
    if !library_by_header && reader.registrations.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    match &header {
        None => out.push(at(
            LIBRARY_HEADER,
            1,
            1,
            "the file registers functions but has no `#!lua name=<library>` first line: FUNCTION LOAD answers 'Missing library metadata'".into(),
        )),
        Some(h) => {
            if h.engine != "lua" {
                out.push(at(
                    LIBRARY_HEADER,
                    1,
                    1,
                    format!(
                        "the engine is `{}`: FUNCTION LOAD answers 'Engine '{}' not found' (write `#!lua name=<library>`)",
                        h.engine, h.engine
                    ),
                ));
            }
            for part in &h.invalid {
                out.push(at(
                    LIBRARY_HEADER,
                    1,
                    1,
                    format!("FUNCTION LOAD answers 'Invalid metadata value given: {part}': a library's first line takes only name=<library>"),
                ));
            }
            match &h.name {
                None => out.push(at(
                    LIBRARY_HEADER,
                    1,
                    1,
                    "the first line names no library: FUNCTION LOAD answers 'Library name was not given' (write `#!lua name=<library>`)".into(),
                )),
                Some(name) if !valid_name(name) => out.push(at(
                    BAD_NAME,
                    1,
                    1,
                    format!("library name `{name}`: Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"),
                )),
                Some(_) => {}
            }
        }
    }
    if reader.registrations.is_empty() {
        out.push(at(
            LIBRARY_HEADER,
            1,
            1,
            "the library registers no function (redis.register_function): FUNCTION LOAD answers 'No functions registered'".into(),
        ));
    }
    let mut seen: Vec<&str> = Vec::new();
    for r in &reader.registrations {
        let f = &r.function;
        if !valid_name(&f.name) {
            out.push(at(
                BAD_NAME,
                f.line,
                f.column,
                format!("function name `{}`: function names can only contain letters, numbers, or underscores(_) and must be at least one character long", f.name),
            ));
        }
        if seen.contains(&f.name.as_str()) {
            let first = reader
                .registrations
                .iter()
                .find(|o| o.function.name == f.name)
                .map_or(0, |o| o.function.line);
            out.push(at(
                DUPLICATE_FUNCTION,
                f.line,
                f.column,
                format!("`{}` is registered again (first on line {first}): FUNCTION LOAD answers 'Function already exists in the library'", f.name),
            ));
        } else {
            seen.push(&f.name);
        }
        for (flag, line, column) in &r.flags {
            if !FLAGS.contains(&flag.as_str()) {
                out.push(at(
                    UNKNOWN_FLAG,
                    *line,
                    *column,
                    format!("`{flag}` is not a function flag: FUNCTION LOAD answers 'unknown flag given' (flags: {})", FLAGS.join(", ")),
                ));
            }
        }
        if r.flags.iter().any(|(flag, ..)| flag == "no-writes") {
            let body = match &r.callback {
                Some(Callback::Body(body)) => Some(&**body),
                Some(Callback::Named(name)) => reader
                    .named
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, body)| body),
                None => None,
            };
            if let Some(body) = body {
                let mut writes = Writes {
                    profile,
                    found: Vec::new(),
                };
                body.block().visit(&mut writes);
                for (command, line, column) in writes.found {
                    out.push(at(
                        WRITE_IN_NO_WRITES,
                        line,
                        column,
                        format!(
                            "{} writes, in `{}` flagged no-writes: FCALL answers 'Write commands are not allowed from read-only scripts'",
                            command.to_uppercase(),
                            f.name
                        ),
                    ));
                }
            }
        }
    }
    for (what, line, column) in reader.load_time {
        let message = if what == "KEYS" || what == "ARGV" {
            format!("{what} at load time: FUNCTION LOAD fails with 'Script attempted to access nonexistent global variable '{what}''; a function gets its keys and arguments as its parameters (function(keys, args))")
        } else {
            format!("{what} at load time: FUNCTION LOAD fails with 'Script attempted to access nonexistent global variable '{}''; call commands inside a registered function", what.rsplit('.').next().unwrap_or("call"))
        };
        out.push(at(LOAD_TIME, line, column, message));
    }
    out
}
