//! The functions scripts have beside commands: `redis.*` and the libraries Redis bundles
//! (cjson, cmsgpack, struct, bit). Which names exist is read from the sandbox itself (so it
//! follows its Lua); what each does, as Redis documents it, is written here for the hover.

use std::sync::OnceLock;

/// The libraries completed and described.
pub const LIBRARIES: [&str; 5] = ["redis", "cjson", "cmsgpack", "struct", "bit"];

/// (name, signature, what it does in Redis's Lua).
const DOCS: &[(&str, &str, &str)] = &[
    ("redis", "redis", "The server's API to scripts: `redis.call`, `redis.pcall`, replies, logging, replication flags. `server` is the same table on Valkey and Redis 7.2+."),
    ("redis.call", "redis.call(command, arg...)", "Runs a command and returns its reply converted to Lua (integer → number, bulk → string, nil → false, array → table, status → {ok=...}). An error reply raises a Lua error that ends the script, with the script's line in its text."),
    ("redis.pcall", "redis.pcall(command, arg...)", "Runs a command like `redis.call`, but an error reply is returned as a table `{err = \"...\"}` instead of raising: check `type(r) == 'table' and r.err`."),
    ("redis.error_reply", "redis.error_reply(message)", "Returns `{err = message}`: returned from the script, the client gets an error reply (`-ERR` is prefixed when the text has no error code)."),
    ("redis.status_reply", "redis.status_reply(message)", "Returns `{ok = message}`: returned from the script, the client gets a status reply such as `+OK`."),
    ("redis.sha1hex", "redis.sha1hex(text)", "The SHA1 of a string as 40 lower-case hex digits (what EVALSHA names a script by)."),
    ("redis.log", "redis.log(level, message)", "Writes to the server's log at a level: redis.LOG_DEBUG, LOG_VERBOSE, LOG_NOTICE or LOG_WARNING."),
    ("redis.setresp", "redis.setresp(2 | 3)", "The protocol of the replies `redis.call` gives the script from here on: RESP3 adds maps ({map=...}), sets ({set=...}), doubles ({double=n}), booleans and nil for null."),
    ("redis.set_repl", "redis.set_repl(flags)", "What of the script's writes replicates: redis.REPL_ALL (default), REPL_AOF, REPL_REPLICA, REPL_SLAVE, REPL_NONE."),
    ("redis.replicate_commands", "redis.replicate_commands()", "Kept for old scripts: since Redis 7 scripts always replicate their effects, and this returns true."),
    ("redis.breakpoint", "redis.breakpoint()", "Stops in the Lua debugger (LDB) when one runs the script; does nothing otherwise."),
    ("redis.debug", "redis.debug(value...)", "Prints in the Lua debugger's console (LDB); does nothing otherwise."),
    ("redis.acl_check_cmd", "redis.acl_check_cmd(command, arg...)", "Whether the current user's ACL allows the command with these arguments (true or false); an unknown command raises an error."),
    ("redis.register_function", "redis.register_function(name, callback) / redis.register_function{function_name=, callback=, flags=, description=}", "In a library (`#!lua name=lib`), loaded with FUNCTION LOAD: makes `callback(keys, args)` callable by FCALL. Flags: no-writes, allow-oom, allow-stale, no-cluster, allow-cross-slot-keys."),
    ("redis.REDIS_VERSION", "redis.REDIS_VERSION", "The server's version as text (\"7.0.15\")."),
    ("redis.REDIS_VERSION_NUM", "redis.REDIS_VERSION_NUM", "The server's version as a number (0x00070f for 7.0.15)."),
    ("cjson", "cjson", "JSON encode and decode (lua-cjson 2.1, as bundled with Redis)."),
    ("cjson.encode", "cjson.encode(value)", "A Lua value as JSON text. A table with keys 1..n is an array, else an object; an empty table is `{}`; numbers keep 14 significant digits; a sparse array raises an error."),
    ("cjson.decode", "cjson.decode(text)", "JSON text as a Lua value: objects and arrays become tables, `null` becomes `cjson.null` (a lightuserdata, not nil); invalid JSON raises an error."),
    ("cjson.null", "cjson.null", "The value `null` decodes to (compare with `== cjson.null`)."),
    ("cjson.encode_keep_buffer", "cjson.encode_keep_buffer(on)", "Whether the encoder keeps its buffer between calls."),
    ("cjson.encode_max_depth", "cjson.encode_max_depth(n)", "The deepest nesting encode accepts (default 1000)."),
    ("cjson.decode_max_depth", "cjson.decode_max_depth(n)", "The deepest nesting decode accepts (default 1000)."),
    ("cjson.encode_number_precision", "cjson.encode_number_precision(digits)", "Significant digits of encoded numbers (1 to 14, default 14)."),
    ("cjson.encode_sparse_array", "cjson.encode_sparse_array(convert, ratio, safe)", "How arrays with holes encode: an error (default), an object, or nulls."),
    ("cjson.encode_invalid_numbers", "cjson.encode_invalid_numbers(setting)", "Whether NaN and infinity encode (default: an error)."),
    ("cjson.decode_invalid_numbers", "cjson.decode_invalid_numbers(setting)", "Whether `NaN`, `Infinity` and hex numbers decode."),
    ("cmsgpack", "cmsgpack", "MessagePack encode and decode (lua-cmsgpack, as bundled with Redis)."),
    ("cmsgpack.pack", "cmsgpack.pack(value...)", "The values as MessagePack bytes, one after the other."),
    ("cmsgpack.unpack", "cmsgpack.unpack(bytes)", "Every value in the MessagePack bytes, as several results."),
    ("cmsgpack.unpack_one", "cmsgpack.unpack_one(bytes, offset)", "The next value and the offset after it (-1 at the end)."),
    ("cmsgpack.unpack_limit", "cmsgpack.unpack_limit(bytes, limit, offset)", "At most `limit` values, after the offset of the next."),
    ("struct", "struct", "Binary packing of numbers and strings (Roberto Ierusalimschy's struct, as bundled with Redis; not Lua 5.3's string.pack)."),
    ("struct.pack", "struct.pack(format, value...)", "The values as bytes by a format: `<`/`>` byte order, b/B h/H i/I l/L integers, f d floats, s zero-terminated, cN fixed strings."),
    ("struct.unpack", "struct.unpack(format, bytes, offset)", "The values the format reads from the bytes, then the offset after them."),
    ("struct.size", "struct.size(format)", "The number of bytes a format packs to (formats of fixed size only)."),
    ("bit", "bit", "Bit operations on 32-bit integers (LuaBitOp, as bundled with Redis): Lua 5.1 has no `&`, `|`, `~`, `<<`, `>>`."),
    ("bit.tobit", "bit.tobit(x)", "x as a signed 32-bit integer."),
    ("bit.tohex", "bit.tohex(x, n)", "x as n hex digits (8 by default; a negative n for upper case)."),
    ("bit.bnot", "bit.bnot(x)", "Bitwise not."),
    ("bit.band", "bit.band(x, y...)", "Bitwise and."),
    ("bit.bor", "bit.bor(x, y...)", "Bitwise or."),
    ("bit.bxor", "bit.bxor(x, y...)", "Bitwise exclusive or."),
    ("bit.lshift", "bit.lshift(x, n)", "Shift left by n bits."),
    ("bit.rshift", "bit.rshift(x, n)", "Logical shift right by n bits."),
    ("bit.arshift", "bit.arshift(x, n)", "Arithmetic shift right by n bits (the sign stays)."),
    ("bit.rol", "bit.rol(x, n)", "Rotate left by n bits."),
    ("bit.ror", "bit.ror(x, n)", "Rotate right by n bits."),
    ("bit.bswap", "bit.bswap(x)", "Swap the bytes (endianness)."),
];

/// The signature and description of a function or library (`cjson.decode`, `bit`). `server.*`
/// is `redis.*`.
pub fn doc(name: &str) -> Option<(&'static str, &'static str)> {
    let name = match name.strip_prefix("server") {
        Some(rest) if rest.is_empty() || rest.starts_with('.') => format!("redis{rest}"),
        _ => name.to_string(),
    };
    DOCS.iter()
        .find(|(n, ..)| *n == name)
        .map(|(_, signature, text)| (*signature, *text))
}

/// The members of a library as the sandbox has them, with the ones only a function library
/// sees (`redis.register_function`): (name, is a function), sorted.
pub fn members(library: &str) -> Vec<(String, bool)> {
    let library = if library == "server" {
        "redis"
    } else {
        library
    };
    let mut out: Vec<(String, bool)> = sandbox_members()
        .iter()
        .filter(|(lib, _, _)| lib == library)
        .map(|(_, member, function)| (member.clone(), *function))
        .collect();
    for (name, signature, _) in DOCS {
        if let Some(member) = name.strip_prefix(library).and_then(|m| m.strip_prefix('.')) {
            if !out.iter().any(|(m, _)| m == member) {
                out.push((member.to_string(), signature.contains('(')));
            }
        }
    }
    out.sort();
    out
}

/// (library, member, is a function) of each library in the script sandbox.
fn sandbox_members() -> &'static [(String, String, bool)] {
    static MEMBERS: OnceLock<Vec<(String, String, bool)>> = OnceLock::new();
    MEMBERS.get_or_init(|| {
        let script = format!(
            "local out = {{}}\nfor _, lib in ipairs({{'{}'}}) do\n  for k, v in pairs(_G[lib]) do\n    out[#out + 1] = lib .. ' ' .. tostring(k) .. ' ' .. type(v)\n  end\nend\nreturn out",
            LIBRARIES.join("', '")
        );
        let mut sandbox = crate::engine::Sandbox::new();
        let report = sandbox.run(&crate::engine::RunRequest::new(script.as_str()));
        let crate::engine::Reply::Array(items) = report.reply else {
            return Vec::new();
        };
        items
            .into_iter()
            .filter_map(|r| match r {
                crate::engine::Reply::Bulk(b) => {
                    let text = String::from_utf8(b).ok()?;
                    let mut parts = text.split(' ');
                    Some((
                        parts.next()?.to_string(),
                        parts.next()?.to_string(),
                        parts.next()? == "function",
                    ))
                }
                _ => None,
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_come_from_the_sandbox() {
        let redis: Vec<String> = members("redis").into_iter().map(|(m, _)| m).collect();
        for name in [
            "call",
            "pcall",
            "error_reply",
            "sha1hex",
            "LOG_WARNING",
            "register_function",
        ] {
            assert!(redis.contains(&name.to_string()), "{name} in {redis:?}");
        }
        let bit: Vec<String> = members("bit").into_iter().map(|(m, _)| m).collect();
        assert!(bit.contains(&"band".to_string()), "{bit:?}");
        assert_eq!(members("server"), members("redis"));
        assert_eq!(doc("server.call"), doc("redis.call"));
    }
}
