//! Traced live runs: an instrumented copy of the user's script whose prelude shadows `redis` with a
//! recording proxy, and the decoding of what it returns.
//!
//! The copy keeps the user's line numbers (the prelude sits on the first code line, the postlude after
//! the last line) and answers with an envelope: the trace, the server time, and either the value the
//! script returned or the parts of the error it raised. The client rebuilds the error text exactly as
//! Redis's `luaCallFunction` does, with the SHA1 of the user's script. Three Lua details make the reply
//! and the error texts those of a plain EVAL:
//! - `redis.call` resolves to a fresh `coroutine.wrap` function: a C function, so Redis's error handler
//!   (which skips one C frame) reports the line of the user's call, as it does for the real `redis.call`;
//! - the user's code runs under `xpcall` with Redis's own `__redis__err__handler`, at the raise point;
//! - the returned value is converted by the server, nested in the envelope (same conversion function).
//!
//! Known gaps (README): `_G.redis`/`rawget(_G, 'redis')` bypass the proxy (the call runs, untraced);
//! assigning the global `redis` writes the local instead of raising; the copy is one stack level deeper.

use crate::engine::reply::Reply;
use crate::engine::report::{TraceEntry, Via};
use crate::engine::script::{parse_shebang, sha1_hex};

/// Envelope tag (also the format version).
pub const TAG: &[u8] = b"EB1";
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
    .any(|name| script.windows(name.len()).any(|w| w == *name))
}

fn prelude(user_sha: &str, copy_fields: bool) -> String {
    let copy = if copy_fields {
        "for k, v in pairs(__eb.real) do if k ~= 'call' and k ~= 'pcall' then __eb_proxy[k] = v end end "
    } else {
        ""
    };
    // One line: no newline may be added before the user's first line.
    format!(
        "local __eb = {{ sha = '{user_sha}', trace = {{}}, n = 0, lost = 0, real = redis, call = redis.call, pcall = redis.pcall, \
select = select, unpack = unpack, type = type, format = string.format, wrap = coroutine.wrap, xpcall = xpcall, \
error = error, pcallg = pcall, match = string.match, tonumber = tonumber, rawequal = rawequal, assert = assert, handler = __redis__err__handler }} \
__eb.t0 = __eb.call('TIME') \
__eb.record = function(line, via, ok, n, args, r) \
 if __eb.n >= {MAX_TRACED_CALLS} then __eb.lost = __eb.lost + 1 return end \
 for i = 1, n do local a = args[i] if __eb.type(a) == 'number' then args[i] = __eb.format('%.17g', a) end end \
 local total = 0 \
 if __eb.type(r) == 'table' and #r > {MAX_TRACED_ELEMENTS} then total = #r local c = {{}} for i = 1, {MAX_TRACED_ELEMENTS} do c[i] = r[i] end r = c end \
 __eb.n = __eb.n + 1 __eb.trace[__eb.n] = {{ line, via, ok and 1 or 0, args, total, r }} end \
__eb.callv = function() return __eb.call(__eb.unpack(__eb.args, 1, __eb.nargs)) end \
local __eb_proxy = {{}} {copy}\
local redis = setmetatable(__eb_proxy, {{ \
 __index = function(_, k) \
  if k ~= 'call' and k ~= 'pcall' then return __eb.real[k] end \
  local _, w = __eb.pcallg(__eb.error, '', 3) local line = __eb.tonumber(__eb.match(w or '', ':(%d+): $')) or 0 \
  if k == 'call' then return __eb.wrap(function(...) \
   local n, args = __eb.select('#', ...), {{...}} \
   __eb.args, __eb.nargs = args, n \
   local ok, r = __eb.xpcall(__eb.callv, __eb.assert) \
   __eb.record(line, 1, ok, n, args, r) \
   if not ok then __eb.error(r, 0) end \
   return r end) \
  else return function(...) \
   local n, args = __eb.select('#', ...), {{...}} \
   local r = __eb.pcall(...) \
   __eb.record(line, 2, true, n, args, r) \
   return r end \
  end end, \
 __newindex = function(_, k, v) __eb.real[k] = v end }}) \
__eb.f = function() "
    )
}

const POSTLUDE: &str = "\nend\n\
local ok, r = __eb.xpcall(__eb.f, __eb.handler) \
local t1 = __eb.call('TIME') \
local head = { 'EB1', __eb.trace, __eb.lost, __eb.t0[1], __eb.t0[2], t1[1], t1[2] } \
if ok then \
 if __eb.type(r) == 'table' then for i = 1, __eb.n do local e = __eb.trace[i] if __eb.rawequal(e[6], r) then e[5] = -1 e[6] = nil end end end \
 head[8] = 1 head[9] = r return head end \
head[8] = 0 \
if __eb.type(r) ~= 'table' then head[9] = 'ERR ' .. tostring(r) return head end \
local e, s, l = r.err, r.source, r.line \
local function str(x) local t = __eb.type(x) if t == 'string' or t == 'number' then return tostring(x) end return false end \
head[9] = str(e) head[10] = str(s) head[11] = str(l) \
return head\n";

/// Build the instrumented copy. `None` when the script's shebang is invalid (send it as is: the
/// server refuses it with its own error).
pub fn instrument(script: &[u8]) -> Option<Instrumented> {
    let user_sha = sha1_hex(script);
    let (_, shebang_len) = parse_shebang(script).ok()?;
    let mut text = Vec::with_capacity(script.len() + 2048);
    // The shebang line stays first and unchanged (same flags); Redis drops it but keeps its newline.
    let body = if shebang_len > 0 {
        text.extend_from_slice(&script[..=shebang_len]);
        &script[shebang_len + 1..]
    } else {
        script
    };
    text.extend_from_slice(prelude(&user_sha, may_inspect_redis_table(body)).as_bytes());
    text.extend_from_slice(body);
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

/// Decode the envelope; `Err` gives back a reply that is not one (the server's own reply).
pub fn decode(reply: Reply, user_sha: &str) -> Result<Decoded, Reply> {
    if !is_envelope(&reply) {
        return Err(reply);
    }
    let Reply::Array(mut items) = reply else {
        return Err(reply);
    };
    let result_reply = if as_int(items.get(7)) == Some(1) && items.len() > 8 {
        Some(items.swap_remove(8))
    } else {
        None
    };
    let mut trace = Vec::new();
    if let Some(Reply::Array(entries)) = items.get_mut(1) {
        for (i, entry) in entries.iter_mut().enumerate() {
            let Reply::Array(fields) = entry else {
                continue;
            };
            let line = as_int(fields.first()).unwrap_or(0) as u32;
            let via = if as_int(fields.get(1)) == Some(2) {
                Via::Pcall
            } else {
                Via::Call
            };
            let command = match fields.get(3) {
                Some(Reply::Array(args)) => args
                    .iter()
                    .map(|a| match a {
                        Reply::Bulk(b) => b.clone(),
                        Reply::Int(n) => n.to_string().into_bytes(),
                        other => other.to_cli().into_bytes(),
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let total = as_int(fields.get(4)).unwrap_or(0);
            let mut reply = if total == -1 {
                // The call's reply is the value the script returned (sent once).
                result_reply.clone().unwrap_or(Reply::Nil)
            } else if fields.len() > 5 {
                fields.swap_remove(5)
            } else {
                Reply::Nil
            };
            if total > 0 {
                if let Reply::Array(elements) = &mut reply {
                    elements.push(Reply::Status(format!(
                        "... {} more elements (evalbench records the first {MAX_TRACED_ELEMENTS})",
                        total as usize - elements.len()
                    )));
                }
            }
            trace.push(TraceEntry {
                seq: i + 1,
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
    }
    let untraced_calls = as_int(items.get(2)).unwrap_or(0).max(0) as u64;
    let server_us = match (
        as_int(items.get(3)),
        as_int(items.get(4)),
        as_int(items.get(5)),
        as_int(items.get(6)),
    ) {
        (Some(s0), Some(u0), Some(s1), Some(u1)) => {
            Some(((s1 - s0) * 1_000_000 + (u1 - u0)).max(0) as u64)
        }
        _ => None,
    };
    let result = if as_int(items.get(7)) == Some(1) {
        Decision::Returned(result_reply.unwrap_or(Reply::Nil))
    } else {
        let text = items.get(8).and_then(as_bytes);
        let source = items.get(9).and_then(as_bytes);
        let line = items.get(10).and_then(as_bytes);
        let line_number = line
            .and_then(|l| std::str::from_utf8(l).ok())
            .and_then(|l| l.parse().ok());
        match text {
            Some(err) => Decision::Raised {
                text: crate::engine::script::raised_error_text(user_sha, err, source, line),
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
        assert!(text.starts_with("#!lua flags=no-writes\nlocal __eb = "));
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].ends_with("__eb.f = function() return 1"));
        assert_eq!(lines[2], "return 2");
        assert_eq!(
            copy.user_sha,
            sha1_hex(b"#!lua flags=no-writes\nreturn 1\nreturn 2")
        );
    }

    #[test]
    fn not_an_envelope_is_none() {
        assert_eq!(decode(Reply::Int(1), "x"), Err(Reply::Int(1)));
        let other = Reply::Array(vec![Reply::bulk("EB0")]);
        assert_eq!(decode(other.clone(), "x"), Err(other));
    }
}
