//! Code a server's SCRIPT KILL cannot stop. Redis stops a busy script from Lua's count hook, and
//! Lua 5.1 runs no hook while it is inside one: the kill's error, raised in the hook, calls the
//! `xpcall` error handler with hooks off (an error in a handler calls the handler again), and the
//! garbage collector runs a `newproxy` userdata's `__gc` with hooks off too. A loop there (or a
//! recursion, or code the analysis cannot follow) keeps the server busy for good: only a restart
//! ends it. One walk over the syntax tree records each function's loops, calls and the functions
//! it hands on; the roots (error handlers, `__gc`) are followed through that graph.

use crate::engine::profile::Profile;
use full_moon::ast::{
    self, Call, Expression, Field, FunctionArgs, FunctionBody, Prefix, Suffix, Var,
};
use full_moon::node::Node;
use full_moon::tokenizer::{TokenReference, TokenType};
use full_moon::visitors::Visitor;
use std::collections::{HashMap, HashSet};

/// One place SCRIPT KILL cannot reach, at a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unkillable {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Functions of the libraries Redis gives scripts: C code that returns (their function arguments
/// are followed as values handed on).
const LIBRARY_TABLES: &[&str] = &[
    "string",
    "table",
    "math",
    "cjson",
    "cmsgpack",
    "bit",
    "struct",
    "redis",
    "server",
    "os",
    "coroutine",
    "debug",
];
const BASE_FUNCTIONS: &[&str] = &[
    "tostring",
    "tonumber",
    "type",
    "print",
    "error",
    "assert",
    "pairs",
    "ipairs",
    "next",
    "select",
    "unpack",
    "rawget",
    "rawset",
    "rawequal",
    "setmetatable",
    "getmetatable",
    "pcall",
    "collectgarbage",
    "gcinfo",
    "newproxy",
];
/// Values through which code can reach any function or global: what they call cannot be followed.
const DYNAMIC: &[&str] = &[
    "getfenv",
    "setfenv",
    "loadstring",
    "load",
    "dofile",
    "loadfile",
];

#[derive(Default)]
struct Body {
    /// `line N` of the function (0: the script itself).
    line: usize,
    /// Names it is bound to (`f`, `M.f`, a table field's name).
    names: Vec<String>,
    loops: Vec<(usize, usize, &'static str)>,
    /// Names it calls or hands on as values, at a line.
    refs: Vec<(String, usize)>,
    /// Calls of something that is not a plain name (`t[k]()`, `f()()`, `obj:m()`).
    unknown_calls: Vec<(String, usize, usize)>,
    /// Names it calls (of `refs`: the others are values handed on).
    calls: HashSet<String>,
    /// Function literals written inside it.
    children: Vec<usize>,
}

enum Root {
    Name(String, usize, String),
    Unknown(usize, usize, String),
}

struct Walk<'p> {
    profile: &'p Profile,
    bodies: Vec<Body>,
    stack: Vec<usize>,
    /// Function literal positions and the names they are bound to.
    names_at: HashMap<(usize, usize), Vec<String>>,
    /// `__gc` metamethods: literal positions, names, and values the analysis cannot follow.
    gc_at: HashSet<(usize, usize)>,
    gc_names: Vec<(String, usize)>,
    gc_unknown: Vec<(usize, usize)>,
    /// Body positions to ids.
    body_at: HashMap<(usize, usize), usize>,
    roots: Vec<Root>,
    setmetatable: bool,
    /// Bodies by the names they are bound to, whole and by last segment (filled by `finish`).
    by_name: HashMap<String, Vec<usize>>,
    by_last: HashMap<String, Vec<usize>>,
    /// Findings that need no graph (xpcall as a value, code built at run time).
    direct: Vec<Unkillable>,
}

fn pos(node: &impl Node) -> (usize, usize) {
    node.start_position()
        .map_or((1, 1), |p| (p.line(), p.character()))
}

fn text(token: &TokenReference) -> String {
    token.token().to_string()
}

fn literal(token: &TokenReference) -> Option<String> {
    match token.token().token_type() {
        TokenType::StringLiteral { literal, .. } => Some(literal.to_string()),
        _ => None,
    }
}

/// `a.b["c"]`: the dotted name of a prefix and index suffixes (None: not a plain path).
fn path<'a>(prefix: &Prefix, suffixes: impl Iterator<Item = &'a Suffix>) -> Option<String> {
    let Prefix::Name(base) = prefix else {
        return None;
    };
    let mut name = text(base);
    for s in suffixes {
        match s {
            Suffix::Index(ast::Index::Dot { name: field, .. }) => {
                name.push('.');
                name.push_str(&text(field));
            }
            Suffix::Index(ast::Index::Brackets {
                expression: Expression::String(s),
                ..
            }) => {
                name.push('.');
                name.push_str(&literal(s)?);
            }
            _ => return None,
        }
    }
    Some(name)
}

/// The value a function-valued expression names: a literal's position, or a path.
enum FnValue {
    Literal((usize, usize)),
    Path(String),
    Other,
}

fn fn_value(e: &Expression) -> FnValue {
    match e {
        Expression::Function(f) => FnValue::Literal(pos(&f.1)),
        Expression::Parentheses { expression, .. } => fn_value(expression),
        Expression::Var(Var::Name(n)) => FnValue::Path(text(n)),
        Expression::Var(Var::Expression(v)) => match path(v.prefix(), v.suffixes()) {
            Some(p) => FnValue::Path(p),
            None => FnValue::Other,
        },
        _ => FnValue::Other,
    }
}

fn last_segment(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

fn is_constant_number(e: &Expression) -> bool {
    match e {
        Expression::Number(_) => true,
        Expression::UnaryOperator { expression, .. } => is_constant_number(expression),
        Expression::Parentheses { expression, .. } => is_constant_number(expression),
        _ => false,
    }
}

impl Walk<'_> {
    fn current(&mut self) -> &mut Body {
        let id = *self.stack.last().expect("the script's own body");
        &mut self.bodies[id]
    }

    fn bind(&mut self, at: (usize, usize), name: String) {
        self.names_at.entry(at).or_default().push(name);
    }

    /// `__gc = value`: remember the function it holds (other metamethods are followed from a
    /// handler whenever the script sets a metatable at all).
    fn metamethod(&mut self, key: &str, value: &Expression) {
        if key != "__gc" {
            return;
        }
        match fn_value(value) {
            FnValue::Literal(at) => {
                self.gc_at.insert(at);
            }
            FnValue::Path(p) => self.gc_names.push((p, pos(value).0)),
            FnValue::Other => self.gc_unknown.push(pos(value)),
        }
    }

    fn assigned(&mut self, target: Option<String>, value: &Expression) {
        let Some(target) = target else { return };
        if let FnValue::Literal(at) = fn_value(value) {
            self.bind(at, target.clone());
        }
        self.metamethod(last_segment(&target).to_string().as_str(), value);
    }
}

impl Visitor for Walk<'_> {
    fn visit_function_body(&mut self, node: &FunctionBody) {
        let at = pos(node);
        let id = self.bodies.len();
        self.bodies.push(Body {
            line: at.0,
            names: self.names_at.get(&at).cloned().unwrap_or_default(),
            ..Body::default()
        });
        self.current().children.push(id);
        self.body_at.insert(at, id);
        self.stack.push(id);
    }

    fn visit_function_body_end(&mut self, _node: &FunctionBody) {
        self.stack.pop();
    }

    fn visit_local_function(&mut self, node: &ast::LocalFunction) {
        self.bind(pos(node.body()), text(node.name()));
    }

    fn visit_function_declaration(&mut self, node: &ast::FunctionDeclaration) {
        let name = node.name();
        let mut full: Vec<String> = name.names().iter().map(text).collect();
        if let Some(m) = name.method_name() {
            full.push(text(m));
        }
        let full = full.join(".");
        let at = pos(node.body());
        self.bind(at, full.clone());
        if last_segment(&full) == "__gc" {
            self.gc_at.insert(at);
        }
    }

    fn visit_local_assignment(&mut self, node: &ast::LocalAssignment) {
        for (name, value) in node.names().iter().zip(node.expressions().iter()) {
            self.assigned(Some(text(name)), value);
        }
    }

    fn visit_assignment(&mut self, node: &ast::Assignment) {
        for var in node.variables() {
            // `getmetatable('').__index = f`: a metatable changed in place.
            if let Var::Expression(v) = var {
                if let Prefix::Name(n) = v.prefix() {
                    if text(n).ends_with("metatable") {
                        self.setmetatable = true;
                    }
                }
            }
        }
        for (var, value) in node.variables().iter().zip(node.expressions().iter()) {
            let target = match var {
                Var::Name(n) => Some(text(n)),
                // `getmetatable(p).__gc = f`: no plain path, but the key tells a metamethod.
                Var::Expression(v) => {
                    path(v.prefix(), v.suffixes()).or_else(|| match v.suffixes().last() {
                        Some(Suffix::Index(ast::Index::Dot { name, .. })) => Some(text(name)),
                        Some(Suffix::Index(ast::Index::Brackets {
                            expression: Expression::String(s),
                            ..
                        })) => literal(s),
                        _ => None,
                    })
                }
                _ => None,
            };
            self.assigned(target, value);
        }
    }

    fn visit_field(&mut self, node: &Field) {
        match node {
            Field::NameKey { key, value, .. } => {
                if let FnValue::Literal(at) = fn_value(value) {
                    self.bind(at, text(key));
                }
                self.metamethod(&text(key), value);
            }
            Field::ExpressionKey {
                key: Expression::String(s),
                value,
                ..
            } => {
                if let Some(k) = literal(s) {
                    if let FnValue::Literal(at) = fn_value(value) {
                        self.bind(at, k.clone());
                    }
                    self.metamethod(&k, value);
                }
            }
            _ => {}
        }
    }

    fn visit_while(&mut self, node: &ast::While) {
        let (l, c) = pos(node);
        self.current().loops.push((l, c, "a `while` loop"));
    }

    fn visit_repeat(&mut self, node: &ast::Repeat) {
        let (l, c) = pos(node);
        self.current().loops.push((l, c, "a `repeat` loop"));
    }

    fn visit_generic_for(&mut self, node: &ast::GenericFor) {
        let (l, c) = pos(node);
        self.current().loops.push((l, c, "a `for ... in` loop"));
    }

    fn visit_numeric_for(&mut self, node: &ast::NumericFor) {
        let bounded = is_constant_number(node.start())
            && is_constant_number(node.end())
            && node.step().is_none_or(is_constant_number);
        if !bounded {
            let (l, c) = pos(node);
            self.current()
                .loops
                .push((l, c, "a `for` loop with a bound known only at run time"));
        }
    }

    fn visit_expression(&mut self, node: &Expression) {
        let name = match node {
            Expression::Var(Var::Name(n)) => Some(text(n)),
            Expression::Var(Var::Expression(v)) => {
                let p = path(v.prefix(), v.suffixes());
                if p.is_none() {
                    if let Prefix::Name(n) = v.prefix() {
                        if text(n) == "_G" {
                            let (line, column) = pos(node);
                            self.direct.push(Unkillable { line, column, message: "`_G` indexed by a name built at run time: the analysis cannot tell which function is reached (an error handler's loop runs where SCRIPT KILL cannot stop it)".into() });
                        }
                    }
                }
                p
            }
            _ => None,
        };
        let Some(name) = name else { return };
        let line = pos(node).0;
        let (base, last) = (name.split('.').next().unwrap_or(&name), last_segment(&name));
        if last == "xpcall" && (base == "xpcall" || base == "_G") {
            let (line, column) = pos(node);
            self.direct.push(Unkillable { line, column, message: "xpcall used as a value: the analysis cannot tell which function becomes its error handler, where a loop runs with Lua's hooks off (SCRIPT KILL cannot stop it)".into() });
        } else if name == "_G" {
            let (line, column) = pos(node);
            self.direct.push(Unkillable { line, column, message: "`_G` used as a value: the analysis cannot follow what is called through it (an error handler's loop runs where SCRIPT KILL cannot stop it)".into() });
        } else if DYNAMIC.contains(&base) {
            let (line, column) = pos(node);
            self.direct.push(Unkillable { line, column, message: format!("{base} used as a value: code reached through it cannot be checked for loops SCRIPT KILL cannot stop") });
        }
        self.current().refs.push((name, line));
    }

    fn visit_function_call(&mut self, node: &ast::FunctionCall) {
        let suffixes: Vec<&Suffix> = node.suffixes().collect();
        let (line, column) = pos(node);
        if let Prefix::Name(n) = node.prefix() {
            let first_call = suffixes.iter().position(|s| matches!(s, Suffix::Call(_)));
            let plain = first_call
                .is_some_and(|i| path(node.prefix(), suffixes[..i].iter().copied()).is_some());
            if text(n) == "_G" && !plain {
                self.direct.push(Unkillable { line, column, message: "`_G` indexed by a name built at run time: the analysis cannot tell which function is reached (an error handler's loop runs where SCRIPT KILL cannot stop it)".into() });
            }
        }
        // The callee of the first call: the index suffixes before it.
        let first_call = suffixes.iter().position(|s| matches!(s, Suffix::Call(_)));
        let callee = first_call.and_then(|i| path(node.prefix(), suffixes[..i].iter().copied()));
        let method =
            first_call.is_some_and(|i| matches!(suffixes[i], Suffix::Call(Call::MethodCall(_))));
        match (&callee, method) {
            (Some(name), false) => {
                self.current().refs.push((name.clone(), line));
                self.current().calls.insert(name.clone());
            }
            _ => {
                let shown = node.to_string();
                let shown: String = shown.trim().chars().take(40).collect();
                // `s:upper()`: string methods are the string library's C functions.
                let string_method = method
                    && first_call.is_some_and(|i| match suffixes[i] {
                        Suffix::Call(Call::MethodCall(m)) => {
                            STRING_METHODS.contains(&text(m.name()).as_str())
                        }
                        _ => false,
                    });
                if !string_method {
                    self.current().unknown_calls.push((shown, line, column));
                }
            }
        }
        // Later calls in the chain (`f()()`) call what a call returned.
        if let Some(i) = first_call {
            if suffixes[i + 1..]
                .iter()
                .any(|s| matches!(s, Suffix::Call(_)))
            {
                let shown: String = node.to_string().trim().chars().take(40).collect();
                self.current().unknown_calls.push((shown, line, column));
            }
        }
        let Some(name) = callee else { return };
        let base = name.split('.').next().unwrap_or(&name).to_string();
        let last = last_segment(&name).to_string();
        // `setmetatable`, `getmetatable('').__index = ...`: a metamethod may be any function.
        if last.ends_with("metatable") || last == "rawset" {
            self.setmetatable = true;
        }
        let args: Vec<&Expression> = match first_call.map(|i| suffixes[i]) {
            Some(Suffix::Call(Call::AnonymousCall(FunctionArgs::Parentheses {
                arguments,
                ..
            }))) => arguments.iter().collect(),
            _ => Vec::new(),
        };
        if (base == "loadstring" || base == "load") && name == base {
            let readable = match args.first() {
                Some(Expression::String(s)) => literal(s).filter(|t| !t.contains('\\')),
                _ => None,
            };
            match readable {
                Some(source) => {
                    for mut found in unkillable(&source, self.profile) {
                        found.message = format!(
                            "in the code {base} builds at line {line}: {}",
                            found.message
                        );
                        found.line = line;
                        found.column = column;
                        self.direct.push(found);
                    }
                }
                None => self.direct.push(Unkillable {
                    line,
                    column,
                    message: format!("{base} builds code at run time: the analysis cannot check it for loops SCRIPT KILL cannot stop (in an xpcall error handler)"),
                }),
            }
        }
        if last == "xpcall" && (base == "xpcall" || base == "_G") {
            let what = format!("the error handler of xpcall at line {line}");
            match args.get(1).map(|e| fn_value(e)) {
                Some(FnValue::Literal(at)) => {
                    self.roots
                        .push(Root::Name(format!("\u{0}{}:{}", at.0, at.1), line, what))
                }
                Some(FnValue::Path(p)) => self.roots.push(Root::Name(p, line, what)),
                Some(FnValue::Other) => self.roots.push(Root::Unknown(line, column, what)),
                None => {}
            }
        }
    }
}

/// Methods of strings (`s:upper()`): the string library's C functions.
const STRING_METHODS: &[&str] = &[
    "byte", "char", "find", "format", "gmatch", "gsub", "len", "lower", "match", "rep", "reverse",
    "sub", "upper",
];

/// Where a script runs code SCRIPT KILL cannot stop on `profile`'s server (empty: none found).
/// The script must compile; one that does not parse is left to the server's own error.
pub fn unkillable(source: &str, profile: &Profile) -> Vec<Unkillable> {
    let source = if source.starts_with("#!") {
        match source.find('\n') {
            Some(i) => &source[i..],
            None => "",
        }
    } else {
        source
    };
    // Past what the parser is given (analysis::bounds) nothing is followed: said, not assumed safe.
    if let Err(bound) = super::bounds::check(source) {
        let (line, column) = match bound {
            super::bounds::Bound::TooDeep { line, column } => (line, column),
            super::bounds::Bound::TooLarge { .. } => (1, 1),
        };
        return vec![Unkillable {
            line,
            column,
            message: format!("{bound}: the analysis cannot follow it, so it cannot tell whether SCRIPT KILL can stop the script"),
        }];
    }
    stacker::grow(64 << 20, || {
        let parsed = full_moon::parse_fallible(source, full_moon::LuaVersion::lua51());
        if !parsed.errors().is_empty() {
            return Vec::new();
        }
        in_ast(parsed.ast(), profile)
    })
}

/// `unkillable` of a parsed script (the lint's tree).
pub fn in_ast(tree: &ast::Ast, profile: &Profile) -> Vec<Unkillable> {
    let mut walk = Walk {
        profile,
        bodies: vec![Body::default()],
        stack: vec![0],
        names_at: HashMap::new(),
        gc_at: HashSet::new(),
        gc_names: Vec::new(),
        gc_unknown: Vec::new(),
        body_at: HashMap::new(),
        roots: Vec::new(),
        setmetatable: false,
        by_name: HashMap::new(),
        by_last: HashMap::new(),
        direct: Vec::new(),
    };
    walk.visit_ast(tree);
    walk.finish()
}

impl Walk<'_> {
    /// Bodies a name may be (by its whole name, else its last segment); None: not a function of
    /// the script.
    fn resolve(&self, name: &str) -> Vec<usize> {
        if let Some(at) = name.strip_prefix('\u{0}') {
            let mut parts = at.split(':').map(|n| n.parse::<usize>().unwrap_or(0));
            let at = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
            return self.body_at.get(&at).copied().into_iter().collect();
        }
        if let Some(ids) = self.by_name.get(name) {
            return ids.clone();
        }
        self.by_last
            .get(last_segment(name))
            .cloned()
            .unwrap_or_default()
    }

    /// A name that is no function of the script: a library's C function (true), or something
    /// the analysis cannot follow (false).
    fn library(&self, name: &str) -> bool {
        let base = name.split('.').next().unwrap_or(name);
        if name.contains('.') {
            LIBRARY_TABLES.contains(&base) || (base == "_G" && self.library(&name[3..]))
        } else {
            BASE_FUNCTIONS.contains(&name) || name == "xpcall"
        }
    }

    fn finish(mut self) -> Vec<Unkillable> {
        for (id, body) in self.bodies.iter().enumerate().skip(1) {
            for n in &body.names {
                self.by_name.entry(n.clone()).or_default().push(id);
                let last = last_segment(n).to_string();
                let ids = self.by_last.entry(last).or_default();
                if ids.last() != Some(&id) {
                    ids.push(id);
                }
            }
        }
        let mut out = std::mem::take(&mut self.direct);
        let mut roots: Vec<(Vec<usize>, usize, String)> = Vec::new();
        for root in std::mem::take(&mut self.roots) {
            match root {
                Root::Name(name, line, what) => {
                    let ids = self.resolve(&name);
                    if ids.is_empty() && !self.library(&name) {
                        out.push(Unkillable {
                            line,
                            column: 1,
                            message: format!("{what} is `{name}`, which the analysis cannot follow: a loop in it runs with Lua's hooks off once the script is killed (SCRIPT KILL cannot stop it)"),
                        });
                    }
                    if !ids.is_empty() {
                        roots.push((ids, line, what));
                    }
                }
                Root::Unknown(line, column, what) => out.push(Unkillable {
                    line,
                    column,
                    message: format!("{what} is computed at run time: the analysis cannot check it for loops, which run with Lua's hooks off once the script is killed (SCRIPT KILL cannot stop them)"),
                }),
            }
        }
        // A handler touching a table with a metatable runs its metamethods in the handler too;
        // a key computed at run time can make any function one, so all are followed then.
        let metamethods: Vec<usize> = if self.setmetatable {
            (1..self.bodies.len()).collect()
        } else {
            Vec::new()
        };
        for (ids, _, _) in roots.iter_mut() {
            ids.extend(metamethods.iter().copied());
        }
        if self.profile.fenv_and_newproxy {
            let mut ids: Vec<usize> = self
                .gc_at
                .iter()
                .filter_map(|at| self.body_at.get(at).copied())
                .collect();
            for (name, line) in &self.gc_names {
                let found = self.resolve(name);
                if found.is_empty() && !self.library(name) {
                    out.push(Unkillable { line: *line, column: 1, message: format!("a `__gc` metamethod is `{name}`, which the analysis cannot follow: the collector runs it with Lua's hooks off (SCRIPT KILL cannot stop a loop there)") });
                }
                ids.extend(found);
            }
            for (line, column) in &self.gc_unknown {
                out.push(Unkillable { line: *line, column: *column, message: "a `__gc` metamethod computed at run time: the collector runs it with Lua's hooks off (SCRIPT KILL cannot stop a loop there)".into() });
            }
            if !ids.is_empty() {
                roots.push((ids, 0, "a `__gc` metamethod (newproxy userdata: the collector runs it with Lua's hooks off)".into()));
            }
        }
        for (ids, _, what) in roots {
            self.follow(&ids, &what, &mut out);
        }
        out.sort_by(|a, b| (a.line, a.column, &a.message).cmp(&(b.line, b.column, &b.message)));
        out.dedup();
        out
    }

    /// Every body reachable from `start`, and what in them SCRIPT KILL cannot stop.
    fn follow(&self, start: &[usize], what: &str, out: &mut Vec<Unkillable>) {
        let mut seen: HashSet<usize> = HashSet::new();
        let mut queue: Vec<usize> = start.to_vec();
        let mut edges: HashMap<usize, Vec<usize>> = HashMap::new();
        while let Some(id) = queue.pop() {
            if !seen.insert(id) {
                continue;
            }
            let body = &self.bodies[id];
            let mut next: Vec<usize> = body.children.clone();
            for (name, line) in &body.refs {
                let ids = self.resolve(name);
                if ids.is_empty() {
                    if !self.library(name) && self.called(id, name) {
                        out.push(Unkillable { line: *line, column: 1, message: format!("{what} calls `{name}`, which the analysis cannot follow: a loop there runs with Lua's hooks off once the script is killed (SCRIPT KILL cannot stop it)") });
                    }
                } else {
                    next.extend(ids);
                }
            }
            for (shown, line, column) in &body.unknown_calls {
                out.push(Unkillable { line: *line, column: *column, message: format!("{what} calls `{shown}`, which the analysis cannot follow: a loop there runs with Lua's hooks off once the script is killed (SCRIPT KILL cannot stop it)") });
            }
            for (line, column, kind) in &body.loops {
                out.push(Unkillable {
                    line: *line,
                    column: *column,
                    message: format!("{kind} in {what}: it runs with Lua's hooks off once the script is killed, so SCRIPT KILL cannot stop it and the server may need a restart"),
                });
            }
            edges.insert(id, next.clone());
            queue.extend(next);
        }
        // A body that reaches itself recurses: as endless as a loop. A depth-first walk (on a
        // stack of its own, not the thread's) finds each edge back to a body still open.
        let mut state: HashMap<usize, bool> = HashMap::new(); // false: open, true: done
        let mut recursive: Vec<usize> = Vec::new();
        for &root in start {
            if state.contains_key(&root) {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            state.insert(root, false);
            while let Some((id, next)) = stack.pop() {
                let targets = edges.get(&id).map_or(&[][..], |v| v.as_slice());
                if let Some(&target) = targets.get(next) {
                    stack.push((id, next + 1));
                    match state.get(&target) {
                        None => {
                            state.insert(target, false);
                            stack.push((target, 0));
                        }
                        Some(false) => recursive.push(target),
                        Some(true) => {}
                    }
                } else {
                    state.insert(id, true);
                }
            }
        }
        recursive.sort_unstable();
        recursive.dedup();
        for id in recursive {
            let body = &self.bodies[id];
            out.push(Unkillable {
                line: body.line,
                column: 1,
                message: format!("a recursive function (line {}) in {what}: it runs with Lua's hooks off once the script is killed, so SCRIPT KILL cannot stop it and the server may need a restart", body.line),
            });
        }
    }

    /// Whether body `id` calls `name` (not only hands it on as a value: a parameter named in
    /// `return e` is no call).
    fn called(&self, id: usize, name: &str) -> bool {
        self.bodies[id].calls.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::profile::DEFAULT;

    fn lines(source: &str) -> Vec<(usize, String)> {
        unkillable(source, DEFAULT)
            .into_iter()
            .map(|u| (u.line, u.message))
            .collect()
    }

    #[test]
    fn a_loop_in_an_xpcall_handler_is_found_at_its_line() {
        let found =
            lines("return xpcall(function() error('x') end,\n function() while true do end end)");
        assert_eq!(found, vec![(2, "a `while` loop in the error handler of xpcall at line 1: it runs with Lua's hooks off once the script is killed, so SCRIPT KILL cannot stop it and the server may need a restart".to_string())]);
    }

    #[test]
    fn handlers_that_end_are_not_findings() {
        for ok in [
            "return xpcall(function() return 1 end, function(e) return e end)",
            "return xpcall(function() return 1 end, debug.traceback)",
            "return xpcall(function() return 1 end, tostring)",
            "local function h(e) for i = 1, 10 do e = e .. i end return cjson.encode({e}) end\nreturn xpcall(function() return 1 end, h)",
            "local n = 0 while n < 10 do n = n + 1 end return pcall(function() return n end)",
            "return xpcall(function() return 1 end, function(e) return e:upper() end)",
        ] {
            assert_eq!(lines(ok), vec![], "{ok}");
        }
    }

    #[test]
    fn loops_reached_from_a_handler_are_found_however_it_is_written() {
        let cases: &[(&str, usize, &str)] = &[
            // A named local handler, and a loop in a helper it calls.
            ("local function spin() repeat until false end\nlocal function h(e) spin() return e end\nreturn xpcall(function() error('x') end, h)", 1, "a `repeat` loop in the error handler of xpcall at line 3"),
            // A helper reached through pcall inside the handler.
            ("local function spin() while true do end end\nreturn xpcall(error, function(e) pcall(spin) return e end)", 1, "a `while` loop in the error handler of xpcall at line 2"),
            // A for loop bounded by data.
            ("return xpcall(error, function(e)\n for i = 1, tonumber(ARGV[1]) do end end)", 2, "a `for` loop with a bound known only at run time in the error handler of xpcall at line 1"),
            ("return xpcall(error, function(e)\n for k in pairs(KEYS) do end end)", 2, "a `for ... in` loop in the error handler of xpcall at line 1"),
            // _G.xpcall, a global-table function.
            ("return _G.xpcall(error, function(e)\n while 1 do end end)", 2, "a `while` loop in the error handler of xpcall at line 1"),
            // A handler defined inside a coroutine body.
            ("local co = coroutine.wrap(function() return xpcall(error, function() while true do end end) end)\nreturn co()", 1, "a `while` loop in the error handler of xpcall at line 1"),
            // A table method as the handler.
            ("local M = {}\nfunction M.h(e) while true do end end\nreturn xpcall(error, M.h)", 2, "a `while` loop in the error handler of xpcall at line 3"),
        ];
        for (source, line, start) in cases {
            let found = lines(source);
            assert!(
                found.iter().any(|(l, m)| l == line && m.starts_with(start)),
                "{source}: {found:?}"
            );
        }
    }

    #[test]
    fn recursion_and_what_cannot_be_followed_are_findings() {
        let found = lines("local function h(e) return h(e) end\nreturn xpcall(error, h)");
        assert_eq!(found, vec![(1, "a recursive function (line 1) in the error handler of xpcall at line 2: it runs with Lua's hooks off once the script is killed, so SCRIPT KILL cannot stop it and the server may need a restart".to_string())]);
        let found = lines("return xpcall(error, function(e) e() end)");
        assert_eq!(found, vec![(1, "the error handler of xpcall at line 1 calls `e`, which the analysis cannot follow: a loop there runs with Lua's hooks off once the script is killed (SCRIPT KILL cannot stop it)".to_string())]);
        for (source, start) in [
            (
                "local xp = xpcall\nreturn xp(error, function() end)",
                "xpcall used as a value",
            ),
            (
                "return pcall(xpcall, error, function() end)",
                "xpcall used as a value",
            ),
            (
                "return _G['xp' .. 'call'](error, function() end)",
                "`_G` indexed by a name built at run time",
            ),
            (
                "return loadstring(ARGV[1])()",
                "loadstring builds code at run time",
            ),
            (
                "return loadstring('return xpcall(error, function() while true do end end)')()",
                "in the code loadstring builds at line 1: a `while` loop",
            ),
            (
                "return xpcall(error, ARGV[1] and tostring)",
                "the error handler of xpcall at line 1 is computed at run time",
            ),
            (
                "local t = {}\nreturn xpcall(error, t.h)",
                "the error handler of xpcall at line 2 is `t.h`",
            ),
        ] {
            let found = lines(source);
            assert!(
                found.iter().any(|(_, m)| m.starts_with(start)),
                "{source}: {found:?}"
            );
        }
    }

    #[test]
    fn a_metamethod_runs_inside_the_handler_that_touches_its_table() {
        let found = lines("local t = setmetatable({}, {__index = function() while true do end end})\nreturn xpcall(error, function(e) return t.x end)");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0]
            .1
            .starts_with("a `while` loop in the error handler of xpcall at line 2"));
    }

    #[test]
    fn a_gc_metamethod_counts_only_where_newproxy_exists() {
        let source = "local p = newproxy(true)\ngetmetatable(p).__gc = function() while true do end end\nreturn 1";
        assert_eq!(unkillable(source, DEFAULT), vec![]);
        let with_newproxy: &'static Profile = Box::leak(Box::new(Profile {
            fenv_and_newproxy: true,
            ..crate::engine::profile::PROFILES[0]
        }));
        let found = unkillable(source, with_newproxy);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].line, 2);
        assert!(found[0]
            .message
            .starts_with("a `while` loop in a `__gc` metamethod"));
    }

    #[test]
    fn a_second_round_of_variants_is_found_too() {
        for (source, start) in [
            // A handler assigned after its declaration.
            ("local h\nh = function() while true do end end\nreturn xpcall(error, h)", "a `while` loop in the error handler of xpcall at line 3"),
            // A table field holding the handler.
            ("local t = {h = function() while true do end end}\nreturn xpcall(error, t.h)", "a `while` loop in the error handler of xpcall at line 2"),
            ("local t = {['h'] = function() repeat until false end}\nreturn xpcall(error, t['h'])", "a `repeat` loop in the error handler of xpcall at line 2"),
            // A handler handed in as a parameter.
            ("local function run(h) return xpcall(error, h) end\nreturn run(function() end)", "the error handler of xpcall at line 1 is `h`, which the analysis cannot follow"),
            // A handler that is a call's result: select, coroutine.wrap, a callable table.
            ("local function h() end\nreturn xpcall(error, select(1, h))", "the error handler of xpcall at line 2 is computed at run time"),
            ("return xpcall(error, coroutine.wrap(function() while true do end end))", "the error handler of xpcall at line 1 is computed at run time"),
            // xpcall reached through _G as a value, or stored in a table.
            ("return rawget(_G, 'xpcall')(error, function() end)", "`_G` used as a value"),
            ("local t = {xpcall}\nreturn t[1](error, function() end)", "xpcall used as a value"),
            // A comparator written inside the handler.
            ("return xpcall(error, function(e) table.sort({3, 1}, function(a, b) while true do end end) end)", "a `while` loop in the error handler of xpcall at line 1"),
            // Mutual recursion.
            ("local a, b\nfunction a() return b() end\nfunction b() return a() end\nreturn xpcall(error, a)", "a recursive function (line "),
            // A metatable set with a key built at run time.
            ("local mt = {}\nmt['__in' .. 'dex'] = function() while true do end end\nlocal t = setmetatable({}, mt)\nreturn xpcall(error, function(e) return t.x end)", "a `while` loop in the error handler of xpcall at line 4"),
            // The string metatable's __index, reached by a method call in the handler.
            ("getmetatable('').__index = function() while true do end end\nreturn xpcall(error, function(e) return e:upper() end)", "a `while` loop in the error handler of xpcall at line 2"),
        ] {
            let found = lines(source);
            assert!(found.iter().any(|(_, m)| m.starts_with(start)), "{source}: {found:?}");
        }
    }
}
