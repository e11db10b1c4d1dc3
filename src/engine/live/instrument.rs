//! Traced live runs: an instrumented copy of the user's script whose prelude shadows `redis` with a
//! recording proxy, and the decoding of what it returns.
//!
//! The copy keeps the user's line numbers (the prelude sits on the first code line, the postlude after
//! the last line) and answers with an envelope: the server time, the trace, and either the value the
//! script returned or the parts of the error it raised. The client rebuilds the error text exactly as
//! Redis's `luaCallFunction` does, with the SHA1 of the user's script. The user's code runs under
//! `xpcall` with Redis's own `__redis__err__handler`, at the raise point, and the returned value is
//! converted by the server, nested in the envelope (same conversion function).
//!
//! Every call is made with the real `redis.pcall` (same command, reply and error table as
//! `redis.call`; it never raises), recorded, and for `redis.call` an error table is raised again,
//! unchanged. Redis 7.0 hides `debug` from scripts, and its error handler reports the line of the
//! caller of the C function that raised (it skips one C frame). What `redis.call` is depends on what a
//! scan of the code (`scan_names`, comments and strings skipped) finds:
//! - no `redis` at all (`return 1`): no proxy;
//! - only direct calls with a literal command (`redis.call('INCR', KEYS[1])`, each (call or pcall,
//!   command) at one line) in a script that cannot catch an error (`may_catch_errors`): `redis.call`
//!   and `redis.pcall` are plain Lua functions in the proxy. Each trace entry's line is the line of its
//!   command's site. When such a call raises, the handler reports the proxy's line: the envelope names
//!   the command (status 2) and the client puts its site's line in the error text; nothing could have
//!   caught the error in between;
//! - otherwise `redis.call` is a `coroutine.wrap` function, a C function: the handler skips it and
//!   reports the user's line, and `return redis.call(...)` is not a tail call (the user's frame stays).
//!   Its coroutine loops (it yields each reply and waits for the next call). A script that cannot catch
//!   an error shares one per run (an error ends the script); the others get one per access of
//!   `redis.call`, as an error ends that coroutine and a reference kept in a local would then fail.
//!   When the sites do not tell the lines, the proxy's `__index` (running in the user's frame) reads
//!   each access's line from `error('', 3)`'s position prefix, sent as is (`user_script:12: `) and
//!   parsed by the client; a call through a reference kept in a local gets the latest access's line.
//!
//! The envelope is one flat array (a nested table costs the server's reply conversion ~0.3 µs, and
//! each element the client's parser ~0.08 µs): `server µs` (between the two `TIME` calls), `8*end + 4*lost +
//! status` (status 1 returned, 0 raised, 2 raised by a direct `redis.call`), then the trace up
//! to index `end`, one entry per call: `[where,] meta, arg1..argN, reply` with `meta = kind +
//! 4*truncated + 8*same + 16*nil + 32*N` (kind: 0 call that raised, 1 call, 2 pcall; truncated: the
//! reply holds the first `MAX_TRACED_ELEMENTS` elements and then the total; same: the reply is also the
//! value the script returned, not sent again; nil: a RESP3 null, which would end the array), then the
//! number of calls beyond `MAX_TRACED_CALLS` (when `lost`), then the returned value (status 1, unless
//! an entry is `same`; absent when nil) or `err, source, line`, followed by the command for status 2.
//! Arguments that are neither strings nor numbers (the call refuses them) are sent as `false`.
//!
//! Known gaps (README): `_G.redis`/`rawget(_G, 'redis')` bypass the proxy (the call runs, untraced);
//! assigning the global `redis` writes the local instead of raising; the copy is one stack level
//! deeper; in a script that can catch errors, a `redis.call` kept in a local fails after an error
//! raised through it was caught ("cannot resume dead coroutine").

use crate::engine::reply::Reply;
use crate::engine::report::{TraceEntry, Via};
use crate::engine::script::{parse_shebang, sha1_hex};

/// At most this many calls are recorded; the rest are counted.
pub const MAX_TRACED_CALLS: usize = 10_000;
/// Array replies longer than this are recorded truncated in the trace.
pub const MAX_TRACED_ELEMENTS: usize = 100;

/// The user's script and its instrumented copy.
#[derive(Debug, Clone)]
pub struct Instrumented {
    pub user_sha: String,
    pub text: Vec<u8>,
    pub sha: String,
    /// The script's call sites when each call's line is told by its command (`scan_names`); `None`:
    /// each trace entry carries its calling line.
    pub sites: Option<Vec<CallSite>>,
}

fn contains(script: &[u8], name: &[u8]) -> bool {
    script.windows(name.len()).any(|w| w == name)
}

/// Scripts that never name a function able to enumerate or raw-write a table cannot tell the hooked
/// proxy (coroutine modes) from `redis`; for them the prelude skips copying `redis`'s fields into it
/// (about 1 µs a run).
fn may_inspect_redis_table(script: &[u8]) -> bool {
    [
        &b"pairs"[..],
        b"next",
        b"foreach",
        b"rawset",
        b"rawget",
        b"load",
        b"getfenv",
    ]
    .iter()
    .any(|name| contains(script, name))
}

/// Can the script catch an error raised by `redis.call` and go on? Only through the global `pcall` or
/// `xpcall`, a coroutine, or code that reaches them without naming them (`_G`, `load`/`loadstring`).
/// `redis.pcall` (a `pcall` after a `.` or `:`) catches nothing. Words inside strings and comments
/// count too: a false "yes" only costs the faster path.
fn may_catch_errors(script: &[u8]) -> bool {
    if [
        &b"xpcall"[..],
        b"coroutine",
        b"_G",
        b"load",
        b"getfenv",
        b"setfenv",
    ]
    .iter()
    .any(|name| contains(script, name))
    {
        return true;
    }
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    script.windows(5).enumerate().any(|(i, w)| {
        w == b"pcall"
            && !script.get(i + 5).is_some_and(|&b| word(b))
            && match script[..i].iter().rev().find(|b| !b.is_ascii_whitespace()) {
                Some(b'.') | Some(b':') => false,
                Some(&b) => !word(b),
                None => true,
            }
    })
}

/// A `redis.call('NAME', ...)` or `redis.pcall('NAME', ...)` in the script's code.
#[derive(Debug, Clone, PartialEq)]
pub struct CallSite {
    pub via: Via,
    pub command: Vec<u8>,
    pub line: u32,
}

/// What the scanner of the script's code found.
#[derive(Debug, Clone, PartialEq)]
enum Names {
    /// The code never names `redis` (as a variable): no proxy is needed.
    NoRedis,
    /// Every `redis` of the code reads `redis.<field>`, each `redis.call`/`redis.pcall` is called at
    /// once with a plain literal command name, and no (via, name) is at two lines: a call's line is
    /// told by its command. `fields`: the other fields read (`log`, `error_reply`, ...).
    Static {
        sites: Vec<CallSite>,
        fields: Vec<Vec<u8>>,
    },
    /// Anything else (`local r = redis`, `pcall(redis.call, ...)`, `redis.call(cmd, ...)`, ...): the
    /// copy reads each call's line at run time.
    Dynamic,
}

/// Lua's line ends: `\n`, `\r`, `\r\n` and `\n\r` each count once. Returns the index after it.
fn skip_newline(s: &[u8], i: usize) -> usize {
    match (s[i], s.get(i + 1)) {
        (b'\n', Some(b'\r')) | (b'\r', Some(b'\n')) => i + 2,
        _ => i + 1,
    }
}

/// At `[` opening a long bracket (`[[`, `[==[`): its level.
fn long_bracket(s: &[u8], i: usize) -> Option<usize> {
    if s.get(i) != Some(&b'[') {
        return None;
    }
    let level = s[i + 1..].iter().take_while(|&&b| b == b'=').count();
    (s.get(i + 1 + level) == Some(&b'[')).then_some(level)
}

/// Skip a long string or comment opened at `i`; `None` when it is not closed.
fn skip_long(s: &[u8], mut i: usize, level: usize, line: &mut u32) -> Option<usize> {
    i += level + 2;
    while i < s.len() {
        match s[i] {
            b'\n' | b'\r' => {
                i = skip_newline(s, i);
                *line += 1;
            }
            b']' if s[i + 1..].iter().take_while(|&&b| b == b'=').count() == level
                && s.get(i + 1 + level) == Some(&b']') =>
            {
                return Some(i + level + 2);
            }
            _ => i += 1,
        }
    }
    None
}

/// Scan the script's code (comments and strings skipped) for its `redis` names. `first_line` is the
/// line number of `body`'s first line.
fn scan_names(body: &[u8], first_line: u32, server_alias: bool) -> Names {
    scan_names_with(body, first_line, false, server_alias)
}

/// The command names of every `redis.call`/`redis.pcall` of `code`, when each is called at once with
/// a plain literal name and `redis` is never aliased (a name at several lines is fine); None when
/// any command may be chosen at run time (`redis.call('SEL' .. 'ECT', 0)`, `local c = redis.call`).
pub fn literal_commands(code: &[u8]) -> Option<Vec<Vec<u8>>> {
    // `server` too: on Valkey it is the very `redis` table.
    match scan_names_with(code, 1, true, true) {
        Names::NoRedis => Some(Vec::new()),
        Names::Static { sites, .. } => Some(sites.into_iter().map(|s| s.command).collect()),
        Names::Dynamic => None,
    }
}

/// `scan_names`; `repeats`: a (via, name) at several lines is not Dynamic (its first line is kept);
/// `server_alias`: `server` names the `redis` table too (Valkey).
fn scan_names_with(body: &[u8], first_line: u32, repeats: bool, server_alias: bool) -> Names {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let blank = |s: &[u8], mut i: usize| {
        while i < s.len() && (s[i] == b' ' || s[i] == b'\t') {
            i += 1;
        }
        i
    };
    let mut sites: Vec<CallSite> = Vec::new();
    let mut fields: Vec<Vec<u8>> = Vec::new();
    let mut seen_redis = false;
    let mut line = first_line;
    // The last byte of code before the current token (not a blank, comment or newline).
    let mut prev = 0u8;
    let mut i = 0;
    while i < body.len() {
        let b = body[i];
        match b {
            b'\n' | b'\r' => {
                i = skip_newline(body, i);
                line += 1;
            }
            b' ' | b'\t' | 0x0b | 0x0c => i += 1,
            b'-' if body.get(i + 1) == Some(&b'-') => {
                i += 2;
                match long_bracket(body, i) {
                    Some(level) => match skip_long(body, i, level, &mut line) {
                        Some(end) => i = end,
                        None => return Names::Dynamic,
                    },
                    None => {
                        while i < body.len() && body[i] != b'\n' && body[i] != b'\r' {
                            i += 1;
                        }
                    }
                }
            }
            b'[' if long_bracket(body, i).is_some() => {
                let level = long_bracket(body, i).unwrap_or(0);
                match skip_long(body, i, level, &mut line) {
                    Some(end) => i = end,
                    None => return Names::Dynamic,
                }
                prev = b']';
            }
            b'\'' | b'"' => {
                i += 1;
                while i < body.len() && body[i] != b {
                    match body[i] {
                        b'\\' if i + 1 < body.len() => {
                            if matches!(body[i + 1], b'\n' | b'\r') {
                                i = skip_newline(body, i + 1);
                                line += 1;
                            } else {
                                i += 2;
                            }
                        }
                        b'\n' | b'\r' => return Names::Dynamic,
                        _ => i += 1,
                    }
                }
                i += 1;
                prev = b;
            }
            b'0'..=b'9' => {
                // A number (`1e5`, `0xff`, `1.5`): never a name.
                while i < body.len() && (word(body[i]) || body[i] == b'.') {
                    i += 1;
                }
                prev = b'0';
            }
            _ if word(b) => {
                let start = i;
                while i < body.len() && word(body[i]) {
                    i += 1;
                }
                let field = matches!(prev, b'.' | b':');
                prev = b'a';
                let api =
                    &body[start..i] == b"redis" || (server_alias && &body[start..i] == b"server");
                if !api || field {
                    continue;
                }
                seen_redis = true;
                // `redis . name`: a field; anything else may alias the proxy.
                let dot = blank(body, i);
                if body.get(dot) != Some(&b'.') || body.get(dot + 1) == Some(&b'.') {
                    return Names::Dynamic;
                }
                let name_start = blank(body, dot + 1);
                let mut name_end = name_start;
                while name_end < body.len() && word(body[name_end]) {
                    name_end += 1;
                }
                let via = match &body[name_start..name_end] {
                    b"call" => Via::Call,
                    b"pcall" => Via::Pcall,
                    b"" => return Names::Dynamic,
                    name => {
                        // Read, not assigned (`redis.x = 1` must raise as on the real table).
                        let next = blank(body, name_end);
                        if body.get(next) == Some(&b'=') && body.get(next + 1) != Some(&b'=') {
                            return Names::Dynamic;
                        }
                        if !fields.iter().any(|f| f == name) {
                            fields.push(name.to_vec());
                        }
                        i = name_end;
                        continue;
                    }
                };
                // `redis.call('NAME', ...)`, `redis.call('NAME')` or `redis.call 'NAME'`.
                let mut at = blank(body, name_end);
                let parenthesized = body.get(at) == Some(&b'(');
                if parenthesized {
                    at = blank(body, at + 1);
                }
                let Some(&quote @ (b'\'' | b'"')) = body.get(at) else {
                    return Names::Dynamic;
                };
                let literal_start = at + 1;
                let mut literal_end = literal_start;
                while literal_end < body.len()
                    && (body[literal_end].is_ascii_alphanumeric()
                        || matches!(body[literal_end], b'_' | b'|' | b'-' | b'.' | b':'))
                {
                    literal_end += 1;
                }
                if body.get(literal_end) != Some(&quote) || literal_end == literal_start {
                    return Names::Dynamic;
                }
                let after = blank(body, literal_end + 1);
                if parenthesized && !matches!(body.get(after), Some(b',') | Some(b')')) {
                    return Names::Dynamic;
                }
                let command = body[literal_start..literal_end].to_vec();
                match sites.iter().find(|s| s.via == via && s.command == command) {
                    Some(s) if s.line != line && !repeats => return Names::Dynamic,
                    Some(_) => {}
                    None => sites.push(CallSite { via, command, line }),
                }
                i = literal_end + 1;
                prev = quote;
            }
            b'.' => {
                // `..` and `...` are operators; `x.redis` is a field.
                let dots = body[i..].iter().take_while(|&&d| d == b'.').count();
                i += dots;
                prev = if dots == 1 { b'.' } else { b'+' };
            }
            _ => {
                i += 1;
                prev = b;
            }
        }
    }
    if seen_redis {
        Names::Static { sites, fields }
    } else {
        Names::NoRedis
    }
}

/// The prelude, written over several lines for reading and joined into one line (no newline may come
/// before the user's first line): the run's start time and the envelope. `@SLOTS@`: room for the
/// first entries when the script may call (each growth of the table's array costs ~0.1 µs); the
/// server's reply conversion stops at the first nil.
const HEAD: &str = r#"
local __eb_rcall, __eb_type, __eb_rawequal, __eb_handler = redis.call, type, rawequal, __redis__err__handler
local __eb_t0 = __eb_rcall('TIME')
local __eb_tr, __eb_n, __eb_calls = { 0, 0@SLOTS@ }, 2, 0
"#;

/// What the recording functions use (for a script that names `redis`). Each local a closure uses costs
/// an upvalue per run: rare paths (a number argument, a raise) read the globals.
const RECORDER_LOCALS: &str = r#"
local __eb_real, __eb_rpcall, __eb_select, __eb_error, __eb_where = redis, redis.pcall, select, error, ''
"#;

/// Appends the entry of the call just made (`r` its reply, `kind` 0 raised, 1 call, 2 pcall, `...` its
/// arguments) to the envelope; inlined in each recording function (a vararg call costs ~0.05 µs).
/// `@WHERE@`: storing the calling line (when the call sites do not tell it).
const RECORD: &str = r#"
local calls = __eb_calls + 1 __eb_calls = calls
if calls <= MAX_CALLS then
 local t, i, n, m, v = __eb_tr, __eb_n, __eb_select('#', ...), kind, r
 @WHERE@
 for j = 1, n do
  local a = (__eb_select(j, ...)) local ty = __eb_type(a)
  if ty == 'number' then a = string.format('%.17g', a) elseif ty ~= 'string' then a = false end
  t[i + 1 + j] = a
 end
 if __eb_type(r) == 'table' and #r > MAX_ELEMENTS then
  v = {} for j = 1, MAX_ELEMENTS do v[j] = r[j] end v[MAX_ELEMENTS + 1] = #r m = m + 4
 elseif r == nil then v = 0 m = m + 16
 end
 t[i + 1] = m + 32 * n
 t[i + n + 2] = v
 __eb_n = i + n + 2
end
"#;

/// Under a scratch database (`test --server --db N`): every call goes through this guard, which
/// answers with an error, without sending it, a command that reaches another database than `@DB@`
/// (SELECT of another, MOVE, SWAPDB, COPY ... DB, MIGRATE, FLUSHALL, CLUSTER FLUSHSLOT). The
/// refusal is recorded in the trace as the call's reply (`CONFINED_PREFIX`).
const CONFINE: &str = r#"
local __eb_upper, __eb_tostring = string.upper, tostring
__eb_rpcall = (function(p) return function(c, ...)
 local u = __eb_type(c) == 'string' and __eb_upper(c) or ''
 local bad = u == 'MOVE' or u == 'SWAPDB' or u == 'FLUSHALL' or u == 'MIGRATE'
 if u == 'SELECT' then bad = __eb_tostring((...)) ~= '@DB@' end
 if u == 'COPY' then
  for j = 3, __eb_select('#', ...) do
   local a = __eb_select(j, ...)
   if __eb_type(a) == 'string' and __eb_upper(a) == 'DB' then bad = true end
  end
 end
 if u == 'CLUSTER' then local a = (...) bad = __eb_type(a) == 'string' and __eb_upper(a) == 'FLUSHSLOT' end
 if bad then return { err = '@PREFIX@' .. u .. ' reaches beyond the scratch db @DB@: not sent (test --server keeps each case in --db @DB@)' } end
 return p(c, ...)
end end)(__eb_rpcall)
"#;

/// How the confinement's refusals begin (the case that made one fails).
pub const CONFINED_PREFIX: &str = "ERR evalbench: ";

/// Names through which a script could reach the real `redis.call` past the proxy (the global
/// table, another chunk's environment, a metatable, the debug library, the copy's own locals): a
/// script naming one cannot be kept in a scratch database. (Valkey's `server` is shadowed by the
/// proxy as `redis` is.)
const ESCAPES: [&str; 8] = [
    "_G",
    "getfenv",
    "setfenv",
    "loadstring",
    "load",
    "debug",
    "getmetatable",
    "__eb_",
];

/// The first name of `ESCAPES` the script's code has as a word (`__eb_` as a prefix; comments and
/// strings skipped): None when confining it to a scratch database holds.
pub fn confinement_escape(script: &[u8]) -> Option<&'static str> {
    let code = masked(script, false);
    ESCAPES
        .into_iter()
        .find(|name| has_word(&code, name.as_bytes(), name.ends_with('_')))
}

/// Does `text` hold `name` as a word (any case when `name` is upper case; as a prefix when
/// `prefix`)?
pub fn has_word(text: &[u8], name: &[u8], prefix: bool) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let any_case = name.iter().all(|b| !b.is_ascii_lowercase());
    text.windows(name.len()).enumerate().any(|(i, w)| {
        (if any_case {
            w.eq_ignore_ascii_case(name)
        } else {
            w == name
        }) && (i == 0 || !word(text[i - 1]))
            && (prefix || !text.get(i + name.len()).is_some_and(|&b| word(b)))
    })
}

/// `script` with its comments (and its strings, unless `keep_strings`) blanked out, for word
/// searches in its code. An unclosed string or comment blanks the rest.
pub fn masked(script: &[u8], keep_strings: bool) -> Vec<u8> {
    let mut out = script.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to.min(script.len())] {
            if !matches!(*b, b'\n' | b'\r') {
                *b = b' ';
            }
        }
    };
    let mut line = 0u32;
    let mut i = 0;
    while i < script.len() {
        match script[i] {
            b'-' if script.get(i + 1) == Some(&b'-') => {
                let end = match long_bracket(script, i + 2) {
                    Some(level) => {
                        skip_long(script, i + 2, level, &mut line).unwrap_or(script.len())
                    }
                    None => script[i..]
                        .iter()
                        .position(|&b| b == b'\n' || b == b'\r')
                        .map_or(script.len(), |n| i + n),
                };
                blank(&mut out, i, end);
                i = end;
            }
            b'[' if long_bracket(script, i).is_some() => {
                let level = long_bracket(script, i).unwrap_or(0);
                let end = skip_long(script, i, level, &mut line).unwrap_or(script.len());
                if !keep_strings {
                    blank(&mut out, i, end);
                }
                i = end;
            }
            quote @ (b'\'' | b'"') => {
                let mut j = i + 1;
                while j < script.len() && script[j] != quote {
                    j += if script[j] == b'\\' { 2 } else { 1 };
                }
                let end = (j + 1).min(script.len());
                if !keep_strings {
                    blank(&mut out, i, end);
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    out
}

/// `redis.pcall`: never raises.
const PCALL: &str = r#"
local function __eb_dopcall(...) local r, kind = __eb_rpcall(...), 2 @RECORD@ return r end
"#;

/// `redis.call` as a Lua function in the proxy, for a script whose every call site names its command
/// and that cannot catch an error. Redis's error handler reports the line of this function, not the
/// user's (and `return redis.call(...)` is a tail call): the command that raised goes back in the
/// envelope and the client puts its site's line in the error text. With no way to catch the error,
/// the script ends with it, so the error the handler saw is this one.
const DIRECT_CALL: &str = r#"
local function __eb_call(...)
 local r, kind = __eb_rpcall(...), 1
 if __eb_type(r) == 'table' and r.err ~= nil then kind = 0 end
 @RECORD@
 if kind == 0 then __eb_raised = (...) error(r, 0) end
 return r
end
"#;

/// `redis.call` for other scripts: a `coroutine.wrap` function (see the module comment) whose
/// coroutine loops, yielding each reply. An error ends the coroutine (`__eb_co`, the shared one, is
/// made again at the next access).
const COROUTINE_CALL: &str = r#"
local __eb_pcall, __eb_wrap, __eb_yield, __eb_co = pcall, coroutine.wrap, coroutine.yield
local function __eb_loop(...)
 local r, kind = __eb_rpcall(...), 1
 if __eb_type(r) == 'table' and r.err ~= nil then kind = 0 end
 @RECORD@
 if kind == 0 then __eb_co = nil error(r, 0) end
 return __eb_loop(__eb_yield(r))
end
"#;

/// The proxy with an `__index` hook for `call` and `pcall`. `@ACCESS@`: reading the calling line;
/// `@CALL@`: the coroutine given out; `@COPY@`: copying `redis`'s other fields into the proxy.
const HOOKED_PROXY: &str = r#"
local __eb_proxy = {} @COPY@
local redis = setmetatable(__eb_proxy, {
 __index = function(_, k)
  if k == 'call' then @ACCESS@ @CALL@
  elseif k == 'pcall' then @ACCESS@ return __eb_dopcall end
  return __eb_real[k]
 end,
 __newindex = __eb_real })
@ITERATE@
"#;

/// `next` and `pairs` that walk the proxy as the real `redis` table: its keys in its own order,
/// `call` and `pcall` included (the proxy holds them only through `__index`), with the proxy's
/// recording functions as their values; `pairs` hands out its own iterator, not `next` (as the
/// real one hands out its upvalue). Every other table goes to the real functions, held as
/// upvalues named `next` and `pairs` so that their argument errors name them as a plain run does.
const ITERATE_AS_REAL: &str = r#"
local next, pairs = (function(next, pairs)
 local function step(_, k)
  local nk, nv = next(__eb_real, k)
  if nk == 'call' or nk == 'pcall' then nv = __eb_proxy[nk] end
  return nk, nv
 end
 local function n(...)
  local t, k = ...
  if t == __eb_proxy then return step(t, k) end
  local a, b = next(...)
  return a, b
 end
 local function p(...)
  local t = ...
  if t == __eb_proxy then return step, t, nil end
  local a, b, c = pairs(...)
  return a, b, c
 end
 return n, p
end)(next, pairs)
"#;

/// The calling line, read in `__index` (in the user's frame): `error`'s position prefix.
const ACCESS_WHERE: &str = "local _, w = __eb_pcall(__eb_error, '', 3) __eb_where = w";
const RECORD_WHERE: &str = "i = i + 1 t[i] = __eb_where";

/// `redis.call` for one run: the shared coroutine (made again after an error ended it), or a new one.
const CALL_SHARED: &str =
    "local c = __eb_co if not c then c = __eb_wrap(__eb_loop) __eb_co = c end return c";
const CALL_PER_ACCESS: &str = "return __eb_wrap(__eb_loop)";

fn one_line(lua: &str) -> String {
    lua.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// How the copy records calls.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// No `redis` in the code: no proxy.
    NoProxy,
    /// Plain Lua functions in a plain table (`Names::Static`, cannot catch errors).
    Direct,
    /// The `__index`-hooked proxy and a coroutine per run (`shared`) or per access.
    Coroutine { shared: bool },
}

fn prelude(
    names: &Names,
    mode: Mode,
    copy_fields: bool,
    confine: Option<i64>,
    server_alias: bool,
) -> String {
    let slots = if mode == Mode::NoProxy {
        String::new()
    } else {
        ", nil".repeat(14)
    };
    let mut text = one_line(HEAD).replace("@SLOTS@", &slots);
    if mode == Mode::NoProxy {
        text.push_str(" local function __eb_f() ");
        return text;
    }
    let dynamic = *names == Names::Dynamic;
    let record = one_line(RECORD)
        .replace("MAX_CALLS", &MAX_TRACED_CALLS.to_string())
        .replace("MAX_ELEMENTS", &MAX_TRACED_ELEMENTS.to_string())
        .replace("@WHERE@", if dynamic { RECORD_WHERE } else { "" });
    let with_record = |template: &str| one_line(template).replace("@RECORD@", &record);
    let (calls, pcalls) = match names {
        Names::Static { sites, .. } => (
            sites.iter().any(|s| s.via == Via::Call),
            sites.iter().any(|s| s.via == Via::Pcall),
        ),
        _ => (true, true),
    };
    let mut parts = vec![one_line(RECORDER_LOCALS)];
    if let Some(db) = confine {
        parts.push(
            one_line(CONFINE)
                .replace("@DB@", &db.to_string())
                .replace("@PREFIX@", CONFINED_PREFIX),
        );
    }
    if pcalls || mode != Mode::Direct {
        parts.push(with_record(PCALL));
    }
    match (mode, names) {
        (Mode::Direct, Names::Static { fields, .. }) => {
            // Only what the code reads: no metatable (the scan saw every use of `redis`).
            parts.push("local __eb_raised".into());
            if calls {
                parts.push(with_record(DIRECT_CALL));
            }
            let mut entries: Vec<String> = fields
                .iter()
                .map(|f| {
                    let f = String::from_utf8_lossy(f);
                    format!("{f} = __eb_real.{f}")
                })
                .collect();
            if calls {
                entries.push("call = __eb_call".into());
            }
            if pcalls {
                entries.push("pcall = __eb_dopcall".into());
            }
            parts.push(format!("local redis = {{ {} }}", entries.join(", ")));
        }
        (_, _) => {
            let shared = matches!(mode, Mode::Coroutine { shared: true });
            parts.push(with_record(COROUTINE_CALL));
            let copy = if copy_fields {
                "for k, v in pairs(__eb_real) do if k ~= 'call' and k ~= 'pcall' then __eb_proxy[k] = v end end"
            } else {
                ""
            };
            parts.push(
                one_line(HOOKED_PROXY)
                    .replace("@ACCESS@", if dynamic { ACCESS_WHERE } else { "" })
                    .replace("@COPY@", copy)
                    .replace(
                        "@ITERATE@",
                        &if copy_fields {
                            one_line(ITERATE_AS_REAL)
                        } else {
                            String::new()
                        },
                    )
                    .replace("@CALL@", if shared { CALL_SHARED } else { CALL_PER_ACCESS }),
            );
        }
    }
    if server_alias {
        // Valkey's `server` is the same table: its calls are recorded (and confined) as well.
        parts.push("local server = redis".into());
    }
    for part in parts {
        text.push(' ');
        text.push_str(&part);
    }
    text.push_str(" local function __eb_f() ");
    text
}

/// After the user's last line: run it, then fill the envelope. A returned table that is also a traced
/// reply (`return redis.call('HGETALL', k)`) is sent once, in that entry (flagged `same`), not after
/// the trace.
/// `@SKIP@` steps over an entry's calling line; `@RAISED@` sends the command of a direct `redis.call`
/// that raised (status 2).
const POSTLUDE: &str = r#"
end
local ok, r = xpcall(__eb_f, __eb_handler)
local t1 = __eb_rcall('TIME')
local t, n, k, lost = __eb_tr, __eb_n, __eb_n, __eb_calls - MAX_CALLS
local us = t1[2] - __eb_t0[2]
if t1[1] ~= __eb_t0[1] then us = us + (t1[1] - __eb_t0[1]) * 1000000 end
t[1] = us t[2] = 8 * n
if lost > 0 then k = n + 1 t[k] = lost t[2] = t[2] + 4 end
if ok then
 t[2] = t[2] + 1
 if __eb_type(r) == 'table' then
  local i = 2
  while i < n do
   @SKIP@
   local m = t[i + 1] local p = i + 2 + (m - m % 32) / 32
   if __eb_rawequal(t[p], r) then t[i + 1] = m + 8 return t end
   i = p
  end
 end
 t[k + 1] = r
 return t
end
if __eb_type(r) ~= 'table' then t[k + 1] = 'ERR ' .. tostring(r) return t end
local function str(x) local ty = __eb_type(x) if ty == 'string' or ty == 'number' then return tostring(x) end return false end
t[k + 1] = str(r.err) t[k + 2] = str(r.source) t[k + 3] = str(r.line)
@RAISED@
return t
"#;

/// Build the instrumented copy. `None` when the script's shebang is invalid (send it as is: the
/// server refuses it with its own error).
pub fn instrument(script: &[u8]) -> Option<Instrumented> {
    instrument_confined(script, None)
}

/// `instrument`, every call kept in database `confine` when given (see `CONFINE`).
pub fn instrument_confined(script: &[u8], confine: Option<i64>) -> Option<Instrumented> {
    instrument_for(script, confine, false)
}

/// `instrument_confined` for a server where `server_alias` (Valkey): `server` is the `redis` table,
/// and its calls are traced too.
pub fn instrument_for(
    script: &[u8],
    confine: Option<i64>,
    server_alias: bool,
) -> Option<Instrumented> {
    let user_sha = sha1_hex(script);
    let (_, shebang_len) = parse_shebang(script).ok()?;
    let mut text = Vec::with_capacity(script.len() + 4096);
    // The shebang line stays first and unchanged (same flags); Redis drops it but keeps its newline.
    let (body, first_line) = if shebang_len > 0 {
        text.extend_from_slice(&script[..=shebang_len]);
        (&script[shebang_len + 1..], 2)
    } else {
        (script, 1)
    };
    let names = scan_names(body, first_line, server_alias);
    let can_catch = may_catch_errors(body);
    let mode = match names {
        Names::NoRedis => Mode::NoProxy,
        Names::Static { .. } if !can_catch => Mode::Direct,
        _ => Mode::Coroutine { shared: !can_catch },
    };
    text.extend_from_slice(
        prelude(
            &names,
            mode,
            may_inspect_redis_table(body),
            confine,
            server_alias && names != Names::NoRedis,
        )
        .as_bytes(),
    );
    text.extend_from_slice(body);
    text.extend_from_slice(
        POSTLUDE
            .replace("MAX_CALLS", &MAX_TRACED_CALLS.to_string())
            .replace(
                "@SKIP@",
                if names == Names::Dynamic {
                    "i = i + 1"
                } else {
                    ""
                },
            )
            .replace(
                "@RAISED@",
                if mode == Mode::Direct {
                    "if __eb_raised ~= nil then t[2] = t[2] + 2 t[k + 4] = __eb_raised end"
                } else {
                    ""
                },
            )
            .as_bytes(),
    );
    let sha = sha1_hex(&text);
    Some(Instrumented {
        user_sha,
        text,
        sha,
        sites: match names {
            Names::Static { sites, .. } => Some(sites),
            Names::NoRedis => Some(Vec::new()),
            Names::Dynamic => None,
        },
    })
}

/// What an instrumented run answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub trace: Vec<TraceEntry>,
    /// Calls made beyond `MAX_TRACED_CALLS`.
    pub untraced_calls: u64,
    /// Server time of the script body (TIME before and after), in microseconds.
    pub server_us: Option<u64>,
    pub result: Decision,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Returned(Reply),
    /// The error text as a plain EVAL would have replied, and its line.
    Raised {
        text: String,
        line: Option<u32>,
    },
    /// An error table without `err`: Redis 7.0 crashes on this; nothing was sent back by the script.
    WouldCrash {
        line: Option<u32>,
    },
}

fn as_bytes(r: &Reply) -> Option<&[u8]> {
    match r {
        Reply::Bulk(b) => Some(b),
        Reply::Status(s) => Some(s.as_bytes()),
        _ => None,
    }
}

/// The copy always answers its envelope (an array starting with two integers) unless the server
/// refused it (an error).
fn is_envelope(reply: &Reply) -> bool {
    matches!(reply, Reply::Array(items) if items.len() >= 2 && items[..2].iter().all(|i| matches!(i, Reply::Int(_))))
}

/// The returned value as the trace records it when a call's reply is that value: arrays beyond
/// `MAX_TRACED_ELEMENTS` truncated as the copy truncates the other replies.
fn traced_copy(value: &Reply) -> Reply {
    match value {
        Reply::Array(elements) if elements.len() > MAX_TRACED_ELEMENTS => {
            let mut copy = elements[..MAX_TRACED_ELEMENTS].to_vec();
            copy.push(truncation_note(elements.len()));
            Reply::Array(copy)
        }
        other => other.clone(),
    }
}

fn truncation_note(total: usize) -> Reply {
    Reply::Status(format!(
        "... {} more elements (evalbench records the first {MAX_TRACED_ELEMENTS})",
        total.saturating_sub(MAX_TRACED_ELEMENTS)
    ))
}

fn as_int(r: Option<&Reply>) -> Option<i64> {
    match r? {
        Reply::Int(i) => Some(*i),
        Reply::Bulk(b) => std::str::from_utf8(b).ok()?.parse().ok(),
        _ => None,
    }
}

/// The line in `error('', 3)`'s position prefix (`user_script:12: `); 0 when there is none (a call
/// reached from C).
fn where_line(r: Option<&Reply>) -> u32 {
    let Some(w) = r.and_then(as_bytes) else {
        return 0;
    };
    let w = w.strip_suffix(b": ").unwrap_or(w);
    let digits = w.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&w[w.len() - digits..])
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(0)
}

/// Decode the envelope; `Err` gives back a reply that is not one (the server's own reply).
pub fn decode(reply: Reply, copy: &Instrumented) -> Result<Decoded, Reply> {
    if !is_envelope(&reply) {
        return Err(reply);
    }
    let Reply::Array(items) = reply else {
        return Err(reply);
    };
    let server_us = as_int(items.first()).map(|us| us.max(0) as u64);
    let head = as_int(items.get(1)).unwrap_or(0).max(0) as usize;
    let (status, lost) = (head & 3, head & 4 != 0);
    // The trace ends at this (1-based) index.
    let end = (head >> 3).clamp(2, items.len());
    let mut rest = items.into_iter().skip(2);
    let mut trace = Vec::new();
    // The entry whose reply is the returned value.
    let mut same = None;
    let mut at = 2;
    // An entry: its calling line (unless the sites tell it), meta, the arguments, the reply.
    let line_slot = usize::from(copy.sites.is_none());
    while at + 2 + line_slot <= end {
        let mut line = if line_slot == 1 {
            where_line(rest.next().as_ref())
        } else {
            0
        };
        let meta = as_int(rest.next().as_ref()).unwrap_or(0).max(0) as usize;
        let nargs = (meta >> 5).min(end - at - 2 - line_slot);
        let command: Vec<Vec<u8>> = rest
            .by_ref()
            .take(nargs)
            .map(|a| match a {
                Reply::Bulk(b) => b,
                Reply::Int(n) => n.to_string().into_bytes(),
                other => other.to_cli().into_bytes(),
            })
            .collect();
        let mut reply = rest.next().unwrap_or(Reply::Nil);
        if meta & 16 != 0 {
            reply = Reply::Nil;
        }
        at += 2 + line_slot + nargs;
        let via = if meta & 3 == 2 { Via::Pcall } else { Via::Call };
        if let (Some(sites), Some(name)) = (&copy.sites, command.first()) {
            line = sites
                .iter()
                .find(|s| s.via == via && &s.command == name)
                .map_or(0, |s| s.line);
        }
        if meta & 4 != 0 {
            // The first elements, then the total.
            if let Reply::Array(elements) = &mut reply {
                let total = match elements.pop() {
                    Some(Reply::Int(n)) => n.max(0) as usize,
                    _ => 0,
                };
                elements.push(truncation_note(total));
            }
        }
        if meta & 8 != 0 {
            same = Some(trace.len());
        }
        trace.push(TraceEntry {
            seq: trace.len() + 1,
            line,
            command,
            reply,
            elapsed_ns: 0,
            at_ns: 0,
            keys: Vec::new(),
            write: false,
            via,
            db: 0,
        });
    }
    let mut rest = rest.skip(end.saturating_sub(at));
    let untraced_calls = if lost {
        as_int(rest.next().as_ref()).unwrap_or(0).max(0) as u64
    } else {
        0
    };
    let result = if status == 1 {
        let value = match same {
            Some(i) => {
                let copy = traced_copy(&trace[i].reply);
                std::mem::replace(&mut trace[i].reply, copy)
            }
            None => rest.next().unwrap_or(Reply::Nil),
        };
        Decision::Returned(value)
    } else {
        let (err, source, mut line) = (rest.next(), rest.next(), rest.next());
        if status == 2 {
            // A direct `redis.call` raised: the handler saw the proxy's line; the site has the user's.
            let command = rest.next();
            let site = copy.sites.as_ref().and_then(|sites| {
                sites.iter().find(|s| {
                    s.via == Via::Call
                        && Some(s.command.as_slice()) == command.as_ref().and_then(as_bytes)
                })
            });
            if let Some(site) = site {
                line = Some(Reply::Bulk(site.line.to_string().into_bytes()));
            }
        }
        let line_text = line.as_ref().and_then(as_bytes);
        let line_number = line_text
            .and_then(|l| std::str::from_utf8(l).ok())
            .and_then(|l| l.parse().ok());
        match err.as_ref().and_then(as_bytes) {
            Some(err) => Decision::Raised {
                text: crate::engine::script::raised_error_text(
                    &copy.user_sha,
                    err,
                    source.as_ref().and_then(as_bytes),
                    line_text,
                ),
                line: line_number,
            },
            None => Decision::WouldCrash { line: line_number },
        }
    };
    Ok(Decoded {
        trace,
        untraced_calls,
        server_us,
        result,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_chosen_at_run_time_are_not_literal() {
        assert_eq!(
            literal_commands(b"redis.call('GET', KEYS[1])\nreturn redis.pcall('GET', KEYS[1])"),
            Some(vec![b"GET".to_vec(), b"GET".to_vec()])
        );
        assert_eq!(
            literal_commands(
                b"local f = function() return redis.call('GET', 'a') end\nreturn redis.call('GET', 'b')"
            ),
            Some(vec![b"GET".to_vec()])
        );
        for dynamic in [
            "return redis.call('SEL' .. 'ECT', 0)",
            "return redis.call(string.reverse('TCELES'), 0)",
            "local c = redis.call return c('SELECT', 0)",
            "return pcall(redis.call, 'SELECT', 0)",
        ] {
            assert_eq!(literal_commands(dynamic.as_bytes()), None, "{dynamic}");
        }
    }

    #[test]
    fn ways_past_the_proxy_are_found_in_code_only() {
        assert_eq!(
            confinement_escape(b"return _G.redis.call('GET', 'k')"),
            Some("_G")
        );
        assert_eq!(
            confinement_escape(b"local r = getmetatable(redis).__newindex"),
            Some("getmetatable")
        );
        assert_eq!(
            confinement_escape(b"return __eb_real.call('SELECT', 0)"),
            Some("__eb_")
        );
        assert_eq!(
            confinement_escape(b"return loadstring('return redis')()"),
            Some("loadstring")
        );
        // Valkey's `server` is shadowed by the proxy as `redis` is: no way past it.
        assert_eq!(
            confinement_escape(b"server.call('SELECT', 0) return server.call('SET', 'k', 1)"),
            None
        );
        let copy = instrument_for(b"return server.call('GET', KEYS[1])", Some(3), true).unwrap();
        let text = String::from_utf8(copy.text).unwrap();
        assert!(
            text.contains(
                " local server = redis local function __eb_f() return server.call('GET', KEYS[1])"
            ),
            "{text}"
        );
        // Not on Redis, where `server` is no global: naming it raises as on the server.
        let copy = instrument_for(b"return server.call('GET', KEYS[1])", Some(3), false).unwrap();
        assert!(!String::from_utf8(copy.text)
            .unwrap()
            .contains("local server"));
        // Comments and strings are not code; longer names are other names.
        assert_eq!(
            confinement_escape(
                b"-- _G and load\n--[[ getfenv ]] return {'_G', [[debug]], download, _Go}"
            ),
            None
        );
        assert_eq!(
            masked(b"a = 'x' -- c\nb = [[y]]", true),
            b"a = 'x'     \nb = [[y]]".to_vec()
        );
        assert_eq!(
            masked(b"a = 'x' -- c\nb = [[y]]", false),
            format!("a ={}\nb ={}", " ".repeat(9), " ".repeat(6)).into_bytes()
        );
        assert!(has_word(b"redis.call('select', 0)", b"SELECT", false));
        assert!(!has_word(b"local selected = 1", b"SELECT", false));
    }

    #[test]
    fn keeps_line_numbers_and_the_shebang_line() {
        let copy = instrument(b"#!lua flags=no-writes\nreturn 1\nreturn 2").unwrap();
        let text = String::from_utf8(copy.text).unwrap();
        assert!(text.starts_with("#!lua flags=no-writes\nlocal __eb_rcall, "));
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].ends_with("local function __eb_f() return 1"));
        assert_eq!(lines[2], "return 2");
        assert_eq!(
            copy.user_sha,
            sha1_hex(b"#!lua flags=no-writes\nreturn 1\nreturn 2")
        );
    }

    #[test]
    fn not_an_envelope_is_none() {
        let copy = instrument(b"return 1").unwrap();
        assert_eq!(decode(Reply::Int(1), &copy), Err(Reply::Int(1)));
        let other = Reply::Array(vec![Reply::bulk("EB1")]);
        assert_eq!(decode(other.clone(), &copy), Err(other));
    }

    fn site(via: Via, command: &str, line: u32) -> CallSite {
        CallSite {
            via,
            command: command.as_bytes().to_vec(),
            line,
        }
    }

    #[test]
    fn call_sites_tell_the_line_when_the_command_does() {
        let script = b"-- redis.call(x) in a comment\nlocal n = redis.call('HLEN', KEYS[1])\n\
            local s = [[redis]] .. redis.call 'TIME'[1]\r\nredis.log(redis.LOG_WARNING, 'x')\n\
            return redis.pcall(\"HGETALL\", KEYS[1]), redis.call('EXISTS', KEYS[2])";
        assert_eq!(
            scan_names(script, 1, false),
            Names::Static {
                sites: vec![
                    site(Via::Call, "HLEN", 2),
                    site(Via::Call, "TIME", 3),
                    site(Via::Pcall, "HGETALL", 5),
                    site(Via::Call, "EXISTS", 5),
                ],
                fields: vec![b"log".to_vec(), b"LOG_WARNING".to_vec()],
            }
        );
        assert_eq!(scan_names(b"return 1 -- redis\n", 1, false), Names::NoRedis);
        assert_eq!(
            scan_names(b"return _G.redis.call('GET', 'k')", 1, false),
            Names::NoRedis
        );
        for dynamic in [
            "redis.call('GET', 'a')\nredis.call('GET', 'b')",
            "local n = redis.call('HLEN', KEYS[1])\nreturn redis.call('HLEN', KEYS[2])",
            "local r = redis\nreturn r.call('GET', 'a')",
            "local c = redis.call\nreturn c('GET', 'a')",
            "return pcall(redis.call, 'GET', 'a')",
            "return redis.call(ARGV[1], 'a')",
            "return redis.call('GE' .. 'T', 'a')",
            "return redis.call('G\\69T', 'a')",
            "return redis\n.call('GET', 'a')",
            "return redis['call']('GET', 'a')",
            "return redis:call('GET')",
            "for k in pairs(redis) do end",
            "return 'x' .. redis.call('GET', 'a'), redis",
            "redis.log = nil",
        ] {
            assert_eq!(
                scan_names(dynamic.as_bytes(), 1, false),
                Names::Dynamic,
                "{dynamic}"
            );
        }
        // A shebang line counts.
        let copy = instrument(b"#!lua\nreturn redis.call('GET', KEYS[1])").unwrap();
        assert_eq!(copy.sites, Some(vec![site(Via::Call, "GET", 2)]));
    }

    #[test]
    fn scripts_that_may_catch_an_error() {
        for script in [
            "local ok = pcall(redis.call, 'GET')",
            "local p = pcall\nreturn 1",
            "return xpcall(f, g)",
            "local co = coroutine.create(f)",
            "return _G['pc' .. 'all']",
            "return loadstring(ARGV[1])()",
        ] {
            assert!(may_catch_errors(script.as_bytes()), "{script}");
        }
        for script in [
            "return redis.pcall('GET', KEYS[1])",
            "local r = redis\nreturn r . pcall('GET', 'k')",
            "local mypcall_count = 1 return redis.call('INCR', KEYS[1])",
        ] {
            assert!(!may_catch_errors(script.as_bytes()), "{script}");
        }
    }

    #[test]
    fn the_calling_line_comes_from_the_position_prefix() {
        assert_eq!(where_line(Some(&Reply::bulk("user_script:12: "))), 12);
        assert_eq!(where_line(Some(&Reply::bulk("[string \"x:1\"]:3: "))), 3);
        assert_eq!(where_line(Some(&Reply::bulk(""))), 0);
        assert_eq!(where_line(None), 0);
    }
}
