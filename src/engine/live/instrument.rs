//! Traced live runs: an instrumented copy of the user's script whose prelude shadows `redis` with a
//! recording proxy, and the decoding of what it returns.
//!
//! The copy keeps the user's line numbers (the prelude sits on the first code line, the postlude after
//! the last line) and answers with an envelope: the server time, the trace, and either the value the
//! script returned or the parts of the error it raised. The client rebuilds the error text exactly as
//! Redis's `luaCallFunction` does, with the SHA1 of the user's script. Three Lua details make the reply
//! and the error texts those of a plain EVAL:
//! - `redis.call` resolves to a `coroutine.wrap` function: a C function, so Redis's error handler (which
//!   skips one C frame) reports the line of the user's call, as it does for the real `redis.call`, and a
//!   `return redis.call(...)` is not a tail call (the user's frame stays on the stack). Inside, the call
//!   is made with the real `redis.pcall` (same command, same reply, same error table; it never raises)
//!   and its error table is raised again, unchanged, out of the coroutine;
//! - the user's code runs under `xpcall` with Redis's own `__redis__err__handler`, at the raise point;
//! - the returned value is converted by the server, nested in the envelope (same conversion function).
//!
//! Redis 7.0 hides `debug` from scripts, so the calling line is read at each access of `redis.call` or
//! `redis.pcall` (the proxy's `__index`, running in the user's frame) from `error('', 3)`'s position
//! prefix, sent as is (`user_script:12: `) and parsed by the client. A call through a reference kept in
//! a local is traced with the line of the latest access.
//!
//! One coroutine serves all the `redis.call`s of a run (it yields each reply and waits for the next
//! call), unless the script might catch an error (`may_catch_errors`): an error ends that coroutine, and
//! a reference the script kept would then fail where `redis.call` works; such scripts get a coroutine
//! per access, as a script that cannot catch the error ends with it anyway.
//!
//! Envelope (`EB2`), one flat array (a nested table costs the server's reply conversion ~0.2 µs):
//! `EB2, t0 s, t0 µs, t1 s, t1 µs, calls, status, end`, then the trace up to index `end`, one entry per
//! call: `where, meta, arg1..argN, reply` with `meta = kind + 4 * truncated + 8 * same + 16 * nil + 32 *
//! N` (kind: 0 call that raised, 1 call, 2 pcall; truncated: the reply holds the first
//! `MAX_TRACED_ELEMENTS` elements and then the total; same: the reply is the value the script returned,
//! sent once, after the trace; nil: a RESP3 null, which would end the array), then the returned value
//! (status 1; absent when nil) or `err, source, line` (status 0). Arguments that are neither strings
//! nor numbers (the call refuses them) are sent as `false`.
//!
//! Known gaps (README): `_G.redis`/`rawget(_G, 'redis')` bypass the proxy (the call runs, untraced);
//! assigning the global `redis` writes the local instead of raising; the copy is one stack level deeper.

use crate::engine::reply::Reply;
use crate::engine::report::{TraceEntry, Via};
use crate::engine::script::{parse_shebang, sha1_hex};

/// Envelope tag (also the format version).
pub const TAG: &[u8] = b"EB2";
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
}

fn contains(script: &[u8], name: &[u8]) -> bool {
    script.windows(name.len()).any(|w| w == name)
}

/// Scripts that never name a function able to enumerate or raw-write a table cannot tell the proxy
/// from `redis`; for them the prelude skips copying `redis`'s fields into it (about 1 µs a run).
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
    if [&b"xpcall"[..], b"coroutine", b"_G", b"load", b"getfenv", b"setfenv"]
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

/// The prelude, written over several lines for reading; joined into one line (no newline may come
/// before the user's first line). `@COPY@` and `@CALL@` are filled in by `prelude`.
const PRELUDE: &str = r#"
local __eb_real, __eb_rcall, __eb_rpcall, __eb_type, __eb_select, __eb_error, __eb_pcall, __eb_fmt,
 __eb_wrap, __eb_yield, __eb_rawequal, __eb_handler = redis, redis.call, redis.pcall, type, select,
 error, pcall, string.format, coroutine.wrap, coroutine.yield, rawequal, __redis__err__handler
local __eb_t0 = __eb_rcall('TIME')
local __eb_tr, __eb_n, __eb_calls, __eb_where, __eb_co = { 'EB2', __eb_t0[1], __eb_t0[2], 0, 0, 0, 0, 0 }, 8, 0, ''
local function __eb_rec(kind, r, ...)
 __eb_calls = __eb_calls + 1
 if __eb_calls > MAX_CALLS then return end
 local t, i, n = __eb_tr, __eb_n, __eb_select('#', ...)
 t[i + 1] = __eb_where
 for j = 1, n do
  local a = (__eb_select(j, ...)) local ty = __eb_type(a)
  if ty == 'number' then a = __eb_fmt('%.17g', a) elseif ty ~= 'string' then a = false end
  t[i + 2 + j] = a
 end
 if __eb_type(r) == 'table' and #r > MAX_ELEMENTS then
  local c = {} for j = 1, MAX_ELEMENTS do c[j] = r[j] end c[MAX_ELEMENTS + 1] = #r r = c kind = kind + 4
 elseif r == nil then r = 0 kind = kind + 16
 end
 t[i + 2] = kind + 32 * n
 t[i + n + 3] = r
 __eb_n = i + n + 3
end
local function __eb_docall(...)
 local r = __eb_rpcall(...)
 if __eb_type(r) == 'table' and r.err ~= nil then __eb_rec(0, r, ...) __eb_co = nil __eb_error(r, 0) end
 __eb_rec(1, r, ...)
 return r
end
local function __eb_loop(...) return __eb_loop(__eb_yield(__eb_docall(...))) end
local function __eb_dopcall(...) local r = __eb_rpcall(...) __eb_rec(2, r, ...) return r end
local __eb_proxy = {} @COPY@
local redis = setmetatable(__eb_proxy, {
 __index = function(_, k)
  if k == 'call' then local _, w = __eb_pcall(__eb_error, '', 3) __eb_where = w @CALL@
  elseif k == 'pcall' then local _, w = __eb_pcall(__eb_error, '', 3) __eb_where = w return __eb_dopcall end
  return __eb_real[k]
 end,
 __newindex = function(_, k, v) __eb_real[k] = v end })
local function __eb_f() "#;

/// `redis.call` for one run: the shared coroutine (made again after an error ended it), or a new one.
const CALL_SHARED: &str =
    "local c = __eb_co if not c then c = __eb_wrap(__eb_loop) __eb_co = c end return c";
const CALL_PER_ACCESS: &str = "return __eb_wrap(__eb_loop)";

fn prelude(copy_fields: bool, shared_coroutine: bool) -> String {
    let copy = if copy_fields {
        "for k, v in pairs(__eb_real) do if k ~= 'call' and k ~= 'pcall' then __eb_proxy[k] = v end end"
    } else {
        ""
    };
    let call = if shared_coroutine {
        CALL_SHARED
    } else {
        CALL_PER_ACCESS
    };
    PRELUDE
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .replace("MAX_CALLS", &MAX_TRACED_CALLS.to_string())
        .replace("MAX_ELEMENTS", &MAX_TRACED_ELEMENTS.to_string())
        .replace("@COPY@", copy)
        .replace("@CALL@", call)
        + " "
}

/// After the user's last line: run it, then fill the envelope. A returned table that is also a traced
/// reply (`return redis.call('HGETALL', k)`) is sent once: its trace slot becomes 0, flagged `same`.
const POSTLUDE: &str = r#"
end
local ok, r = xpcall(__eb_f, __eb_handler)
local t1 = __eb_rcall('TIME')
local t, n = __eb_tr, __eb_n
t[4] = t1[1] t[5] = t1[2] t[6] = __eb_calls t[8] = n
if ok then
 t[7] = 1
 if __eb_type(r) == 'table' then
  local i = 9
  while i <= n do
   local m = t[i + 1] local p = i + 2 + (m - m % 32) / 32
   if __eb_rawequal(t[p], r) then t[p] = 0 t[i + 1] = m + 8 end
   i = p + 1
  end
 end
 t[n + 1] = r
 return t
end
t[7] = 0
if __eb_type(r) ~= 'table' then t[n + 1] = 'ERR ' .. tostring(r) return t end
local function str(x) local ty = __eb_type(x) if ty == 'string' or ty == 'number' then return tostring(x) end return false end
t[n + 1] = str(r.err) t[n + 2] = str(r.source) t[n + 3] = str(r.line)
return t
"#;

/// Build the instrumented copy. `None` when the script's shebang is invalid (send it as is: the
/// server refuses it with its own error).
pub fn instrument(script: &[u8]) -> Option<Instrumented> {
    let user_sha = sha1_hex(script);
    let (_, shebang_len) = parse_shebang(script).ok()?;
    let mut text = Vec::with_capacity(script.len() + 4096);
    // The shebang line stays first and unchanged (same flags); Redis drops it but keeps its newline.
    let body = if shebang_len > 0 {
        text.extend_from_slice(&script[..=shebang_len]);
        &script[shebang_len + 1..]
    } else {
        script
    };
    text.extend_from_slice(
        prelude(may_inspect_redis_table(body), !may_catch_errors(body)).as_bytes(),
    );
    text.extend_from_slice(body);
    // The postlude's first newline ends the user's last line (which may be a comment).
    text.extend_from_slice(POSTLUDE.as_bytes());
    let sha = sha1_hex(&text);
    Some(Instrumented {
        user_sha,
        text,
        sha,
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

fn is_envelope(reply: &Reply) -> bool {
    matches!(reply, Reply::Array(items) if items.len() >= 8 && items.first().and_then(as_bytes) == Some(TAG))
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
pub fn decode(reply: Reply, user_sha: &str) -> Result<Decoded, Reply> {
    if !is_envelope(&reply) {
        return Err(reply);
    }
    let Reply::Array(items) = reply else {
        return Err(reply);
    };
    let int = |i: usize| as_int(items.get(i));
    let server_us = match (int(1), int(2), int(3), int(4)) {
        (Some(s0), Some(u0), Some(s1), Some(u1)) => {
            Some(((s1 - s0) * 1_000_000 + (u1 - u0)).max(0) as u64)
        }
        _ => None,
    };
    let untraced_calls = (int(5).unwrap_or(0) - MAX_TRACED_CALLS as i64).max(0) as u64;
    let returned = int(6) == Some(1);
    // The trace ends at this (1-based) index.
    let end = (int(7).unwrap_or(8).max(8) as usize).min(items.len());
    let mut rest = items.into_iter().skip(8);
    let mut trace = Vec::new();
    // Entries whose reply is the returned value (filled in once it is decoded).
    let mut same = Vec::new();
    let mut at = 8;
    while at + 3 <= end {
        let line = where_line(rest.next().as_ref());
        let meta = as_int(rest.next().as_ref()).unwrap_or(0).max(0) as usize;
        let nargs = (meta >> 5).min(end - at - 3);
        let command = rest
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
        at += 3 + nargs;
        if meta & 4 != 0 {
            // The first elements, then the total.
            if let Reply::Array(elements) = &mut reply {
                let total = match elements.pop() {
                    Some(Reply::Int(n)) => n.max(0) as usize,
                    _ => 0,
                };
                elements.push(Reply::Status(format!(
                    "... {} more elements (evalbench records the first {MAX_TRACED_ELEMENTS})",
                    total.saturating_sub(elements.len())
                )));
            }
        }
        if meta & 8 != 0 {
            same.push(trace.len());
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
            via: if meta & 3 == 2 { Via::Pcall } else { Via::Call },
            db: 0,
        });
    }
    let mut rest = rest.skip(end.saturating_sub(at));
    let result = if returned {
        let value = rest.next().unwrap_or(Reply::Nil);
        for &i in &same {
            trace[i].reply = value.clone();
        }
        Decision::Returned(value)
    } else {
        let (err, source, line) = (rest.next(), rest.next(), rest.next());
        let line_text = line.as_ref().and_then(as_bytes);
        let line_number = line_text
            .and_then(|l| std::str::from_utf8(l).ok())
            .and_then(|l| l.parse().ok());
        match err.as_ref().and_then(as_bytes) {
            Some(err) => Decision::Raised {
                text: crate::engine::script::raised_error_text(
                    user_sha,
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
    fn keeps_line_numbers_and_the_shebang_line() {
        let copy = instrument(b"#!lua flags=no-writes\nreturn 1\nreturn 2").unwrap();
        let text = String::from_utf8(copy.text).unwrap();
        assert!(text.starts_with("#!lua flags=no-writes\nlocal __eb_real, "));
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
        assert_eq!(decode(Reply::Int(1), "x"), Err(Reply::Int(1)));
        let other = Reply::Array(vec![Reply::bulk("EB1")]);
        assert_eq!(decode(other.clone(), "x"), Err(other));
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
