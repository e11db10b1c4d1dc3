//! The crash fuzz targets, each a libFuzzer-shaped `fn(&[u8])`: no input may panic, hang
//! or crash the process, and each sandbox run must come back as a `RunReport`. Next to each target,
//! its structure-aware generator and its dictionary.

use super::gen;
use evalbench::engine::keyspace::{keyspace_from_json, keyspace_to_json};
use evalbench::engine::live::instrument::{decode, instrument, Instrumented};
use evalbench::engine::reply::parse_resp;
use evalbench::engine::{Protocol, Reply, RunReport, RunRequest, Sandbox};
use rand::rngs::StdRng;
use rand::RngExt;
use std::cell::RefCell;

thread_local! {
    /// One sandbox per test thread, reused across inputs as a server reuses its VM.
    static SANDBOX: RefCell<Sandbox> = RefCell::new({
        let mut sandbox = Sandbox::new();
        sandbox.config.busy_threshold_ms = 200;
        sandbox.config.memory_limit = 64 << 20;
        sandbox
    });
}

/// Run a script; the reply must survive RESP encoding and parsing unchanged.
fn run(script: &[u8], argv: Vec<Vec<u8>>, protocol: Protocol) -> RunReport {
    let report = SANDBOX.with(|s| {
        let mut sandbox = s.borrow_mut();
        sandbox.run(&RunRequest {
            script: script.to_vec(),
            argv,
            protocol,
            ..RunRequest::default()
        })
    });
    let reply = report.reply_for(protocol);
    let wire = reply.to_resp(protocol);
    match parse_resp(&wire) {
        Ok(Some((parsed, used))) => {
            assert_eq!(used, wire.len(), "RESP of the reply read to its end");
            assert_eq!(
                parsed.to_json(),
                reply.to_json(),
                "RESP of the reply parses back"
            );
        }
        other => panic!("the reply's RESP does not parse: {other:?}"),
    }
    report
}

// ---- Lua source ----

const LOAD_BY_READER: &[u8] = b"local s, n = ARGV[1], tonumber(ARGV[2]) local at = 1 \
local f, e = load(function() if at > #s then return nil end local piece = string.sub(s, at, at + n - 1) at = at + n return piece end, '=fuzz') \
if not f then return {0, e} end local ok, r = pcall(f) return {1, tostring(ok), type(r)}";

/// Lua source as the script, then through `load` with a reader (bytecode too: refused as Redis refuses it).
pub fn lua_source(data: &[u8]) {
    run(data, Vec::new(), Protocol::Resp2);
    let piece = 1 + data.len() % 7;
    run(
        LOAD_BY_READER,
        vec![data.to_vec(), piece.to_string().into_bytes()],
        Protocol::Resp3,
    );
}

pub const LUA_DICTIONARY: &[&[u8]] = &[
    b"redis.call(",
    b"redis.pcall(",
    b"'GET', 'k'",
    b"return ",
    b"local x = ",
    b"end ",
    b"function() ",
    b"while false do ",
    b"for i = 1, 3 do ",
    b"pcall(",
    b"error(",
    b"{err='x'}",
    b"setmetatable({}, {__index = function() error('m') end})",
    b"coroutine.wrap(",
    b"string.rep('x', 100)",
    b"cjson.decode(",
    b"cmsgpack.pack(",
    b"struct.pack(",
    b"bit.band(",
    b"redis.setresp(3) ",
    b"loadstring(",
    b"..",
    b"#",
    b"[[",
    b"]]",
    b"--[==[",
    b"\\0",
    b"0x",
    b"1e308",
    b"nil",
    b"...",
    b"redis.error_reply(",
    b"redis.status_reply(",
    b"redis.sha1hex(",
    b"redis.log(redis.LOG_WARNING, ",
    b"_G",
    b"getfenv(",
    b"table.concat(",
    b"unpack(",
    b"select('#', ",
    b"tostring(",
    b"math.huge",
    b"string.format('%d', ",
];

/// Small scripts from fragments: calls, control flow, metatables, the bundled libraries.
pub fn gen_lua(rng: &mut StdRng) -> Vec<u8> {
    if rng.random_range(0..3) == 0 {
        // A whole command script of the differential generator.
        let opts = gen::Options {
            enabled: gen::Known::ALL.to_vec(),
            small: true,
        };
        return gen::program(rng, &opts, 8).script().into_bytes();
    }
    const EXPRS: &[&str] = &[
        "1",
        "-0.5",
        "'s'",
        "nil",
        "true",
        "{}",
        "{1, 2, {3}}",
        "{err = 'E x'}",
        "{ok = 'fine'}",
        "redis.call('SET', 'k', 'v')",
        "redis.pcall('INCR', 'k')",
        "redis.call('GET', 'k')",
        "redis.pcall('HGETALL', 'h')",
        "redis.pcall('NOPE')",
        "string.rep('ab', 50)",
        "cjson.encode({a = {1, 2}})",
        "cjson.decode('[1,{\"a\":null}]')",
        "cmsgpack.pack({1, 'x', {y = 2}})",
        "struct.pack('>i4', 7)",
        "bit.tohex(255)",
        "tostring(print)",
        "select('#', 1, nil, 3)",
        "math.random(10)",
        "redis.sha1hex('x')",
        "setmetatable({}, {__index = function(t, k) return k end}).z",
        "(function(...) return select('#', ...) end)(1, 2)",
        "coroutine.wrap(function() coroutine.yield(5) end)()",
        "redis.status_reply('OK')",
        "redis.error_reply('bad')",
        "0/0",
        "1/0",
        "2^53 + 1",
        "#'abc'",
        "{double = 1.5}",
        "{map = {a = 1}}",
        "{set = {x = true}}",
        "{big_number = '123'}",
    ];
    let mut out = String::new();
    if rng.random_range(0..4) == 0 {
        out.push_str("redis.setresp(3)\n");
    }
    for _ in 0..rng.random_range(1..6) {
        let e = EXPRS[rng.random_range(0..EXPRS.len())];
        let s = match rng.random_range(0..8) {
            0 => format!("local ok, v = pcall(function() return {e} end)\n"),
            1 => format!("for i = 1, 3 do local _ = {e} end\n"),
            2 => format!("if {e} then local _ = {e} end\n"),
            3 => format!("error({e})\n"),
            4 => format!("local t = {{{e}, {e}}}\n"),
            _ => format!("local _ = {e}\n"),
        };
        out.push_str(&s);
    }
    let e = EXPRS[rng.random_range(0..EXPRS.len())];
    out.push_str(&format!("return {e}\n"));
    out.into_bytes()
}

// ---- bytecode ----

/// Chunks as `string.dump` writes them, through `loadstring` (which refuses them as Redis does) and,
/// behind the switch, `load(reader)`.
pub fn bytecode(data: &[u8]) {
    run(
        b"local f, e = loadstring(ARGV[1]) return {tostring(f), e}",
        vec![data.to_vec()],
        Protocol::Resp2,
    );
    run(
        LOAD_BY_READER,
        vec![data.to_vec(), b"64".to_vec()],
        Protocol::Resp2,
    );
}

/// Real Lua 5.1 bytecode (the vendored Lua of mlua) of small functions.
pub fn bytecode_seeds() -> Vec<Vec<u8>> {
    let lua = mlua::Lua::new();
    [
        "return 1",
        "local t = {} for i = 1, 10 do t[i] = i * 2 end return t",
        "return function(a, b) return a .. b end",
        "local s = 'x' while #s < 10 do s = s .. s end return s",
        "return redis, KEYS, ARGV, ...",
    ]
    .iter()
    .flat_map(|src| {
        let f = lua.load(*src).into_function().expect("seed compiles");
        [f.dump(false), f.dump(true)]
    })
    .collect()
}

pub fn gen_bytecode(rng: &mut StdRng) -> Vec<u8> {
    let seeds = bytecode_seeds_cached();
    let mut b = seeds[rng.random_range(0..seeds.len())].clone();
    // Overwrite a few words with extreme values: sizes, counts, constants.
    for _ in 0..rng.random_range(1..4) {
        if b.len() > 16 {
            let at = rng.random_range(12..b.len() - 4);
            let word: [u8; 4] = *[
                [0xff; 4],
                [0; 4],
                [0x7f, 0xff, 0xff, 0xff],
                [1, 0, 0, 0],
                [0, 0, 0, 0x80],
            ]
            .get(rng.random_range(0..5))
            .unwrap();
            b[at..at + 4].copy_from_slice(&word);
        }
    }
    b
}

fn bytecode_seeds_cached() -> &'static [Vec<u8>] {
    static SEEDS: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(bytecode_seeds)
}

// ---- cjson ----

pub fn cjson_decode(data: &[u8]) {
    run(
        b"local ok, v = pcall(cjson.decode, ARGV[1]) if not ok then return {0, v} end \
local ok2, text = pcall(cjson.encode, v) if not ok2 then return {1, text} end \
local ok3, again = pcall(cjson.decode, text) return {2, text, tostring(ok3)}",
        vec![data.to_vec()],
        Protocol::Resp2,
    );
}

pub const JSON_DICTIONARY: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"null",
    b"true",
    b"false",
    b"-0",
    b"1e400",
    b"-1e-400",
    b"\\u0000",
    b"\\ud800",
    b"\\udc00",
    b"\\uDBFF\\uDFFF",
    b"\\\"",
    b"0x10",
    b"Infinity",
    b"NaN",
    b"1.7976931348623157e308",
    b"123456789012345678901234567890",
    b"[[[[[[[[[[",
    b"{\"a\":{\"a\":",
    b"\xc3\xa9",
    b"\xff",
];

fn gen_json_value(rng: &mut StdRng, depth: u32, out: &mut String) {
    let kind = if depth > 6 {
        rng.random_range(0..5)
    } else {
        rng.random_range(0..8)
    };
    match kind {
        0 => out.push_str(["null", "true", "false"][rng.random_range(0..3)]),
        1 => out.push_str(&rng.random_range(-1_000_000i64..1_000_000).to_string()),
        2 => {
            let f: f64 = rng.random::<f64>() * 10f64.powi(rng.random_range(-320..310));
            out.push_str(&format!("{f:e}"));
        }
        3 | 4 => {
            out.push('"');
            for _ in 0..rng.random_range(0..8) {
                match rng.random_range(0..6) {
                    0 => out.push_str(&format!("\\u{:04x}", rng.random_range(0..0x10000u32))),
                    1 => {
                        out.push_str(["\\n", "\\\"", "\\\\", "\\/", "\\t"][rng.random_range(0..5)])
                    }
                    2 => out.push(char::from_u32(rng.random_range(0x80..0x3000)).unwrap_or('x')),
                    _ => out.push((b'a' + rng.random_range(0..26)) as char),
                }
            }
            out.push('"');
        }
        5 => {
            // Deep nesting now and then (cjson's default limit is 1000).
            if rng.random_range(0..20) == 0 {
                let n = rng.random_range(900..1100);
                out.push_str(&"[".repeat(n));
                out.push_str(&"]".repeat(n));
                return;
            }
            out.push('[');
            for i in 0..rng.random_range(0..5) {
                if i > 0 {
                    out.push(',');
                }
                gen_json_value(rng, depth + 1, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..rng.random_range(0..5) {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&format!("\"k{}\":", rng.random_range(0..4)));
                gen_json_value(rng, depth + 1, out);
            }
            out.push('}');
        }
    }
}

pub fn gen_json(rng: &mut StdRng) -> Vec<u8> {
    let mut s = String::new();
    gen_json_value(rng, 0, &mut s);
    s.into_bytes()
}

// ---- cmsgpack ----

/// `cmsgpack.unpack`, `unpack_one` and `unpack_limit` (limit and offset from the first two bytes).
pub fn cmsgpack_unpack(data: &[u8]) {
    let (limit, offset, payload) = match data {
        [a, b, rest @ ..] => (*a as i64 - 8, *b as i64 - 8, rest),
        _ => (0, 0, data),
    };
    run(
        b"local r = {pcall(cmsgpack.unpack, ARGV[1])} \
local r1 = {pcall(cmsgpack.unpack_one, ARGV[1], tonumber(ARGV[3]))} \
local r2 = {pcall(cmsgpack.unpack_limit, ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]))} \
if r[1] and r[2] ~= nil then local ok, p = pcall(cmsgpack.pack, r[2]) r[#r + 1] = p end \
return {#r, #r1, #r2, tostring(r[2]), tostring(r1[2]), tostring(r2[2])}",
        vec![
            payload.to_vec(),
            limit.to_string().into_bytes(),
            offset.to_string().into_bytes(),
        ],
        Protocol::Resp2,
    );
}

pub const MSGPACK_DICTIONARY: &[&[u8]] = &[
    b"\xc0",
    b"\xc2",
    b"\xc3",
    b"\xcc\xff",
    b"\xcd\xff\xff",
    b"\xce\xff\xff\xff\xff",
    b"\xcf\xff\xff\xff\xff\xff\xff\xff\xff",
    b"\xd3\x80\x00\x00\x00\x00\x00\x00\x00",
    b"\xca\x7f\xc0\x00\x00",
    b"\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00",
    b"\xd9\xff",
    b"\xda\xff\xff",
    b"\xdb\xff\xff\xff\xff",
    b"\xdc\xff\xff",
    b"\xdd\xff\xff\xff\xff",
    b"\xde\xff\xff",
    b"\xdf\xff\xff\xff\xff",
    b"\x9f",
    b"\x8f",
    b"\xbf",
    b"\xc4\x05",
    b"\xd4\x01\x02",
    b"\xc7\x03\x01",
];

fn gen_msgpack_value(rng: &mut StdRng, depth: u32, out: &mut Vec<u8>) {
    let kind = rng.random_range(0..if depth > 5 { 8 } else { 11 });
    match kind {
        0 => out.push([0xc0, 0xc2, 0xc3][rng.random_range(0..3)]),
        1 => out.push(rng.random_range(0..0x80u8)),
        2 => out.push(0xe0 | rng.random_range(0..0x20u8)),
        3 => {
            let tag = [0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3][rng.random_range(0..8)];
            out.push(tag);
            let n = 1 << (tag & 3);
            out.extend((0..n).map(|_| rng.random::<u8>()));
        }
        4 => {
            out.push(0xca);
            out.extend_from_slice(&(rng.random::<f32>() * 1e10).to_be_bytes());
        }
        5 => {
            out.push(0xcb);
            out.extend_from_slice(&f64::from_bits(rng.random()).to_be_bytes());
        }
        6 | 7 => {
            let len = rng.random_range(0..40usize);
            match rng.random_range(0..4) {
                0 if len < 32 => out.push(0xa0 | len as u8),
                1 => out.extend_from_slice(&[0xd9, len as u8]),
                2 => out.extend_from_slice(&[0xda, 0, len as u8]),
                _ => out.extend_from_slice(&[0xc4, len as u8]),
            }
            out.extend((0..len).map(|_| rng.random_range(b'a'..=b'z')));
        }
        8 | 9 => {
            let n = rng.random_range(0..6u8);
            if rng.random() {
                out.push(0x90 | n);
            } else {
                out.extend_from_slice(&[0xdc, 0, n]);
            }
            for _ in 0..n {
                gen_msgpack_value(rng, depth + 1, out);
            }
        }
        _ => {
            let n = rng.random_range(0..5u8);
            out.push(0x80 | n);
            for _ in 0..2 * n {
                gen_msgpack_value(rng, depth + 1, out);
            }
        }
    }
}

pub fn gen_msgpack(rng: &mut StdRng) -> Vec<u8> {
    let mut out = vec![rng.random_range(0..20u8), rng.random_range(0..20u8)];
    for _ in 0..rng.random_range(1..4) {
        gen_msgpack_value(rng, 0, &mut out);
    }
    out
}

// ---- struct ----

/// `struct.unpack`, `struct.size` and `struct.pack` with a random format: the first byte is the
/// format's length, then the format, then the data.
pub fn struct_formats(data: &[u8]) {
    let (fmt, payload) = match data.split_first() {
        Some((&n, rest)) => rest.split_at((n as usize % 24).min(rest.len())),
        None => (&data[..0], data),
    };
    run(
        b"local a = {pcall(struct.unpack, ARGV[1], ARGV[2])} \
local b = {pcall(struct.unpack, ARGV[1], ARGV[2], 2)} \
local c = {pcall(struct.size, ARGV[1])} \
local d = {pcall(struct.pack, ARGV[1], 1, 'ab', 2.5, -3, 'xyz', 4)} \
return {#a, #b, #c, #d, tostring(a[2]), tostring(c[2]), tostring(d[2])}",
        vec![fmt.to_vec(), payload.to_vec()],
        Protocol::Resp2,
    );
}

pub const STRUCT_DICTIONARY: &[&[u8]] = &[
    b"<",
    b">",
    b"!",
    b"=",
    b"b",
    b"B",
    b"h",
    b"H",
    b"l",
    b"L",
    b"T",
    b"i",
    b"I",
    b"i8",
    b"I16",
    b"i0",
    b"f",
    b"d",
    b"c",
    b"c0",
    b"c9",
    b"s",
    b"x",
    b"!8",
    b"!3",
    b" ",
    b"i2147483647",
    b"c99999999999",
];

pub fn gen_struct(rng: &mut StdRng) -> Vec<u8> {
    let mut fmt = Vec::new();
    for _ in 0..rng.random_range(0..8) {
        fmt.extend_from_slice(STRUCT_DICTIONARY[rng.random_range(0..STRUCT_DICTIONARY.len())]);
    }
    fmt.truncate(23);
    let mut out = vec![fmt.len() as u8];
    out.extend_from_slice(&fmt);
    out.extend((0..rng.random_range(0..40)).map(|_| rng.random::<u8>()));
    out
}

// ---- keyspace JSON ----

/// The keyspace JSON loader: what it accepts writes back to JSON that it reads back the same.
pub fn keyspace_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let now = 1_700_000_000_000;
    if let Ok(db) = keyspace_from_json(text, now) {
        let written = keyspace_to_json(&db, now);
        let again = keyspace_from_json(&written.to_string(), now)
            .unwrap_or_else(|e| panic!("the loader refuses its own output {written}: {e}"));
        let reread = keyspace_to_json(&again, now);
        assert_eq!(reread, written, "keyspace JSON round trip");
    }
}

pub const KEYSPACE_DICTIONARY: &[&[u8]] = &[
    b"{\"type\": \"zset\", \"value\": [[\"a\", 1.5]]}",
    b"\"type\"",
    b"\"value\"",
    b"\"ttl_ms\"",
    b"\"b64\"",
    b"\"hash\"",
    b"\"list\"",
    b"\"set\"",
    b"\"zset\"",
    b"\"stream\"",
    b"\"string\"",
    b"\"inf\"",
    b"\"-inf\"",
    b"\"nan\"",
    b"\"1-1\"",
    b"\"18446744073709551615-18446744073709551615\"",
    b"9223372036854775807",
    b"-9223372036854775808",
    b"1e308",
    b"-0.0",
    b"\"AP8=\"",
    b"\"!!\"",
    b"[]",
    b"{}",
];

pub fn gen_keyspace(rng: &mut StdRng) -> Vec<u8> {
    let opts = gen::Options {
        enabled: gen::Known::ALL.to_vec(),
        small: true,
    };
    let mut seed = gen::program(rng, &opts, 1).seed;
    // Extra shapes the differential seeds never use.
    if let Some(map) = seed.as_object_mut() {
        match rng.random_range(0..6) {
            0 => {
                map.insert("bin".into(), serde_json::json!({"b64": "AP8A/w=="}));
            }
            1 => {
                map.insert(
                    "ttl".into(),
                    serde_json::json!({"type": "string", "value": "v", "ttl_ms": rng.random_range(i64::MIN..i64::MAX)}),
                );
            }
            2 => {
                map.insert(
                    "ids".into(),
                    serde_json::json!({"type": "stream", "value": [["18446744073709551615-18446744073709551615", ["a", "b"]]]}),
                );
            }
            3 => {
                map.insert("plain".into(), serde_json::json!(rng.random::<f64>()));
            }
            _ => {}
        }
    }
    seed.to_string().into_bytes()
}

// ---- RESP ----

/// `parse_resp` on any bytes: no panic, never past the input, and what it read encodes to RESP3
/// without a panic. (Encoding garbage back is not exact: a blob error or status with CRLF inside
/// comes back as a simple one.)
pub fn resp(data: &[u8]) {
    if let Ok(Some((reply, used))) = parse_resp(data) {
        assert!(
            used <= data.len(),
            "parse_resp used {used} of {} bytes",
            data.len()
        );
        let _ = parse_resp(&reply.to_resp(Protocol::Resp3));
    }
}

pub const RESP_DICTIONARY: &[&[u8]] = &[
    b"\r\n",
    b"+OK\r\n",
    b"-ERR x\r\n",
    b":1\r\n",
    b":-9223372036854775808\r\n",
    b"$3\r\nabc\r\n",
    b"$-1\r\n",
    b"*-1\r\n",
    b"*2\r\n",
    b"_\r\n",
    b",1.5\r\n",
    b",inf\r\n",
    b",nan\r\n",
    b"#t\r\n",
    b"%1\r\n",
    b"~2\r\n",
    b"(123\r\n",
    b"=7\r\ntxt:abc\r\n",
    b"$9223372036854775807\r\n",
    b"*9223372036854775807\r\n",
    b"*2147483648\r\n",
    b">2\r\n",
    b"|1\r\n",
    b"!3\r\nerr\r\n",
    b"$-2\r\n",
];

fn gen_reply(rng: &mut StdRng, depth: u32) -> Reply {
    match rng.random_range(0..if depth > 4 { 9 } else { 13 }) {
        0 => Reply::Status("OK".into()),
        1 => Reply::Error("ERR bad".into()),
        2 => Reply::Int(rng.random()),
        3 => Reply::Bulk((0..rng.random_range(0..20)).map(|_| rng.random()).collect()),
        4 => Reply::Nil,
        5 => Reply::NilArray,
        6 => Reply::Double(f64::from_bits(rng.random())),
        7 => Reply::Bool(rng.random()),
        8 => Reply::BigNumber(rng.random::<u64>().to_string()),
        9 => Reply::Array(
            (0..rng.random_range(0..5))
                .map(|_| gen_reply(rng, depth + 1))
                .collect(),
        ),
        10 => Reply::Map(
            (0..rng.random_range(0..4))
                .map(|_| (gen_reply(rng, depth + 1), gen_reply(rng, depth + 1)))
                .collect(),
        ),
        11 => Reply::Set(
            (0..rng.random_range(0..4))
                .map(|_| gen_reply(rng, depth + 1))
                .collect(),
        ),
        _ => Reply::Verbatim {
            format: "txt".into(),
            text: b"some text".to_vec(),
        },
    }
}

pub fn gen_resp(rng: &mut StdRng) -> Vec<u8> {
    let protocol = if rng.random() {
        Protocol::Resp3
    } else {
        Protocol::Resp2
    };
    gen_reply(rng, 0).to_resp(protocol)
}

// ---- the traced run's envelope ----

fn copies() -> &'static [Instrumented] {
    static COPIES: std::sync::OnceLock<Vec<Instrumented>> = std::sync::OnceLock::new();
    COPIES.get_or_init(|| {
        [
            // Call sites told by the code (no line slots).
            &b"redis.call('SET', KEYS[1], 'v') return redis.call('GET', KEYS[1])"[..],
            // Dynamic names: a line slot per entry.
            b"local c = ARGV[1] return redis.pcall(c, KEYS[1])",
            // Errors can be caught.
            b"local ok = pcall(redis.call, 'GET', 'k') return redis.call('INCR', 'n')",
        ]
        .iter()
        .map(|s| instrument(s).expect("instrumentable"))
        .collect()
    })
}

/// The decoder of a traced run's reply, on any reply a server (or an impostor) could send.
pub fn envelope(data: &[u8]) {
    if let Ok(Some((reply, _))) = parse_resp(data) {
        for copy in copies() {
            let _ = decode(reply.clone(), copy);
        }
    }
}

pub fn gen_envelope(rng: &mut StdRng) -> Vec<u8> {
    let mut items = vec![
        Reply::Int(rng.random_range(-5..100_000)),
        Reply::Int(rng.random_range(-5..4096)),
    ];
    for _ in 0..rng.random_range(0..6) {
        if rng.random_range(0..3) == 0 {
            items.push(Reply::Bulk(b"user_script:3: ".to_vec()));
        }
        let nargs = rng.random_range(0..4i64);
        items.push(Reply::Int(
            (nargs << 5)
                | rng.random_range(0..32)
                | if rng.random_range(0..10) == 0 {
                    1 << 40
                } else {
                    0
                },
        ));
        for _ in 0..nargs {
            items.push(Reply::Bulk(b"GET".to_vec()));
        }
        items.push(gen_reply(rng, 2));
    }
    if rng.random_range(0..4) == 0 {
        items.push(Reply::Bulk(b"ERR oops".to_vec()));
        items.push(Reply::Bulk(b"@user_script".to_vec()));
        items.push(Reply::Int(rng.random_range(-1..100)));
    }
    Reply::Array(items).to_resp(Protocol::Resp3)
}

// ---- command sequences ----

/// Bytes read as choices: a seed keyspace and a script of commands over it (the differential
/// generator with small numbers), RESP2 or RESP3.
pub fn commands(data: &[u8]) {
    let mut u = arbitrary::Unstructured::new(data);
    let opts = gen::Options {
        enabled: gen::Known::ALL.to_vec(),
        small: true,
    };
    let program = gen::program(&mut u, &opts, 16);
    SANDBOX.with(|s| {
        let mut sandbox = s.borrow_mut();
        for db in &mut sandbox.keyspace_mut().dbs {
            db.clear();
        }
        let now = sandbox.now_ms();
        let db = keyspace_from_json(&program.seed.to_string(), now).expect("generated seeds load");
        sandbox.set_db0(db);
    });
    let protocol = if program.client_resp == 3 {
        Protocol::Resp3
    } else {
        Protocol::Resp2
    };
    run(program.script().as_bytes(), Vec::new(), protocol);
}

pub fn gen_commands(rng: &mut StdRng) -> Vec<u8> {
    (0..rng.random_range(16..512))
        .map(|_| rng.random())
        .collect()
}

// ---- glob patterns ----

/// The server's glob rules as the server runs them, one recursion per `*` (`nesting` deep), with
/// its flag that no earlier `*` is retried once a later one's rest matched nowhere: the reference
/// the sandbox's matcher (which keeps one retried `*` instead of recursing) is compared with.
fn reference_glob(p: &[u8], t: &[u8], nocase: bool, limit: Option<u32>) -> bool {
    fn at(b: &[u8], i: usize) -> u8 {
        b.get(i).copied().unwrap_or(0)
    }
    fn low(c: i32) -> i32 {
        if (65..=90).contains(&c) {
            c + 32
        } else {
            c
        }
    }
    fn eq(a: u8, b: u8, nocase: bool) -> bool {
        if nocase {
            low(a as i8 as i32) == low(b as i8 as i32)
        } else {
            a == b
        }
    }
    #[allow(clippy::too_many_arguments)]
    fn go(
        p: &[u8],
        mut pi: usize,
        t: &[u8],
        mut ti: usize,
        nocase: bool,
        limit: Option<u32>,
        nesting: u32,
        give_up: &mut bool,
    ) -> bool {
        if limit.is_some_and(|l| nesting > l) {
            return false;
        }
        while pi < p.len() && ti < t.len() {
            match p[pi] {
                b'*' => {
                    while at(p, pi + 1) == b'*' && pi + 1 < p.len() {
                        pi += 1;
                    }
                    if pi == p.len() - 1 {
                        return true;
                    }
                    for start in ti..t.len() {
                        if go(p, pi + 1, t, start, nocase, limit, nesting + 1, give_up) {
                            return true;
                        }
                        if *give_up {
                            return false;
                        }
                    }
                    *give_up = true;
                    return false;
                }
                b'?' => ti += 1,
                b'[' => {
                    pi += 1;
                    let negate = at(p, pi) == b'^';
                    if negate {
                        pi += 1;
                    }
                    let mut hit = false;
                    loop {
                        let left = p.len().saturating_sub(pi);
                        if at(p, pi) == b'\\' && left >= 2 {
                            pi += 1;
                            hit |= p[pi] == t[ti];
                        } else if at(p, pi) == b']' {
                            break;
                        } else if left == 0 {
                            pi -= 1;
                            break;
                        } else if left >= 3 && p[pi + 1] == b'-' {
                            let (a, b) = (p[pi] as i8 as i32, p[pi + 2] as i8 as i32);
                            let (mut lo, mut hi) = (a.min(b), a.max(b));
                            let mut c = t[ti] as i8 as i32;
                            if nocase {
                                lo = low(lo);
                                hi = low(hi);
                                c = low(c);
                            }
                            hit |= lo <= c && c <= hi;
                            pi += 2;
                        } else {
                            hit |= eq(p[pi], t[ti], nocase);
                        }
                        pi += 1;
                    }
                    if hit == negate {
                        return false;
                    }
                    ti += 1;
                }
                c => {
                    let c = if c == b'\\' && p.len() - pi >= 2 {
                        pi += 1;
                        p[pi]
                    } else {
                        c
                    };
                    if !eq(c, t[ti], nocase) {
                        return false;
                    }
                    ti += 1;
                }
            }
            pi += 1;
            if ti == t.len() {
                while at(p, pi) == b'*' {
                    pi += 1;
                }
                break;
            }
        }
        pi >= p.len() && ti == t.len()
    }
    let mut give_up = false;
    go(p, 0, t, 0, nocase, limit, 0, &mut give_up)
}

/// Split fuzz bytes into (pattern, text, nocase): a head byte (bit 7: nocase; bit 6: the pattern's
/// length is in the next two bytes, little-endian; else in its low 6 bits), the pattern, the text.
fn glob_input(data: &[u8]) -> (&[u8], &[u8], bool) {
    let Some((&head, rest)) = data.split_first() else {
        return (b"", b"", false);
    };
    let (n, rest) = match rest {
        [lo, hi, tail @ ..] if head & 0x40 != 0 => (u16::from_le_bytes([*lo, *hi]) as usize, tail),
        _ => (head as usize & 0x3f, rest),
    };
    let n = n.min(rest.len());
    (&rest[..n], &rest[n..], head & 0x80 != 0)
}

/// A pattern and a text: the sandbox's matcher must give the reference's answer under both limits
/// (and plain backtracking's, for patterns of stars and literals over short texts), and KEYS in a
/// script must pick the key by the same rule.
pub fn glob(data: &[u8]) {
    use evalbench::engine::commands::{glob_match_stoppable, StopCheck};
    let (pattern, text, nocase) = glob_input(data);
    for limit in [Some(1000), None] {
        let expected = reference_glob(pattern, text, nocase, limit);
        let got = glob_match_stoppable(pattern, text, nocase, limit, &mut StopCheck::never());
        assert_eq!(
            got,
            Some(expected),
            "glob {:?} on {:?} (nocase {nocase}, limit {limit:?})",
            String::from_utf8_lossy(pattern),
            String::from_utf8_lossy(text)
        );
    }
    let plain = |b: &u8| *b == b'*' || b.is_ascii_lowercase();
    // (The server never matches an empty text but with the empty pattern: no comparison there.)
    if (1..=16).contains(&text.len())
        && pattern.iter().all(plain)
        && text.iter().all(plain)
        && !nocase
    {
        let expected = reference_glob(pattern, text, false, None);
        assert_eq!(backtracking_glob_literal(pattern, text), expected);
    }
    // KEYS in a script checks the wiring; long inputs are covered by the direct comparison above.
    if nocase || text.is_empty() || pattern.len() > 256 || text.len() > 256 {
        return;
    }
    let report = SANDBOX.with(|s| {
        let mut sandbox = s.borrow_mut();
        for db in &mut sandbox.keyspace_mut().dbs {
            db.clear();
        }
        sandbox.keyspace_mut().dbs[0].set(
            text.to_vec(),
            evalbench::engine::keyspace::Value::Str(b"1".to_vec()),
        );
        // The busy threshold is wall-clock time, as on a server: on a machine busy with other work a
        // one-call script can outlast 200 ms while it waits for a core. The glob's own limit bounds
        // this run, and the driver's hang limit (CPU time) still catches a loop.
        let threshold = std::mem::replace(&mut sandbox.config.busy_threshold_ms, 60_000);
        let report = sandbox.run(&RunRequest {
            script: b"return #redis.call('KEYS', ARGV[1])".to_vec(),
            argv: vec![pattern.to_vec()],
            ..RunRequest::default()
        });
        sandbox.config.busy_threshold_ms = threshold;
        report
    });
    // KEYS * lists every key without matching.
    let listed = pattern == b"*" || reference_glob(pattern, text, false, Some(1000));
    assert_eq!(
        report.reply,
        Reply::Int(listed as i64),
        "KEYS {pattern:?} over {text:?}"
    );
}

/// Plain backtracking over stars and literals, without the server's early give-up (exponential:
/// short texts only): it must agree with the reference wherever no `*` limit applies.
fn backtracking_glob_literal(p: &[u8], t: &[u8]) -> bool {
    match (p.first(), t.first()) {
        (None, _) => t.is_empty(),
        (Some(b'*'), _) => (0..=t.len()).any(|i| backtracking_glob_literal(&p[1..], &t[i..])),
        (Some(&c), Some(&d)) => c == d && backtracking_glob_literal(&p[1..], &t[1..]),
        (Some(_), None) => false,
    }
}

pub const GLOB_DICTIONARY: &[&[u8]] = &[
    b"*", b"?", b"[", b"]", b"^", b"-", b"\\", b"[a-z]", b"[^a]", b"\xff", b"\x00", b"*a*a*a",
];

pub fn gen_glob(rng: &mut StdRng) -> Vec<u8> {
    const PATTERN: &[u8] = b"ab*?[]^-\\A\xff\x00";
    const TEXT: &[u8] = b"abA-]\xff\x00\\";
    if rng.random_range(0..20) == 0 {
        // Near the servers' limit of nested stars.
        let mut pattern = "*a".repeat(rng.random_range(995..1006)).into_bytes();
        if rng.random() {
            pattern.push(b'*');
        }
        let mut out = vec![0x40];
        out.extend_from_slice(&(pattern.len() as u16).to_le_bytes());
        out.extend_from_slice(&pattern);
        out.extend(std::iter::repeat_n(b'a', rng.random_range(990..1010)));
        return out;
    }
    let n = rng.random_range(0..24usize);
    let m = rng.random_range(0..24usize);
    let mut out = vec![n as u8 | if rng.random_range(0..4) == 0 { 0x80 } else { 0 }];
    out.extend((0..n).map(|_| PATTERN[rng.random_range(0..PATTERN.len())]));
    out.extend((0..m).map(|_| TEXT[rng.random_range(0..TEXT.len())]));
    out
}

// ---- expression depth ----

/// A script of any nesting through everything that reads Lua source: the lint, the debugger's
/// session (its probes) and the sandbox. None may overflow a test thread's
/// stack; the lint's syntax finding is the run's compile error, word for word.
pub fn expression_depth(data: &[u8]) {
    let source = String::from_utf8_lossy(data).into_owned();
    let findings = evalbench::engine::analysis::lint(&source);
    let report = run(source.as_bytes(), Vec::new(), Protocol::Resp2);
    let compile_error = match &report.reply {
        Reply::Error(e) => e
            .strip_prefix("ERR Error compiling script (new function): user_script:")
            .and_then(|rest| rest.split_once(": "))
            .map(|(_, text)| text.to_string()),
        _ => None,
    };
    let syntax: Vec<&str> = findings
        .iter()
        .filter(|d| d.rule == "syntax" || d.rule == "lua52-syntax")
        .map(|d| d.message.as_str())
        .collect();
    match &compile_error {
        Some(text) => assert!(
            // A Lua 5.2+ construct is named, with Lua's own words after it.
            syntax.len() == 1
                && (syntax[0].ends_with(text.as_str())
                    || syntax[0].ends_with(&format!("(Lua says: {text})"))),
            "the run says {text:?}, the lint {syntax:?}"
        ),
        None => assert!(
            syntax.is_empty(),
            "the lint says {syntax:?}, the run did not refuse it as Redis does: {:?}",
            report.reply
        ),
    }
    if compile_error.is_none() {
        // The debugger's session parses the script for its breakpoint probes.
        if let Ok(mut session) = evalbench::engine::debug::DebugSession::new(source.as_bytes()) {
            let _ = session.add_breakpoint(1, None, None);
        }
    }
}

pub const DEPTH_DICTIONARY: &[&[u8]] = &[
    b"(",
    b")",
    b"{",
    b"}",
    b"[",
    b"]",
    b"f(",
    b"- ",
    b"not ",
    b"#",
    b"..",
    b"+",
    b" and ",
    b" or ",
    b"==",
    b"^",
    b":m()",
    b"function() return ",
    b" end",
    b"do ",
    b"if a then ",
    b"elseif a then ",
    b"else ",
    b"--[[",
    b"]]",
    b"[==[",
    b"]==]",
    b"'",
    b"\n",
];

/// Nestings of every shape, mixed, around Lua's limit (200 levels) and the parser's (2000).
pub fn gen_depth(rng: &mut StdRng) -> Vec<u8> {
    // Wrappers: (before, after) around an expression.
    const WRAPS: &[(&str, &str)] = &[
        ("(", ")"),
        ("{", "}"),
        ("f(", ")"),
        ("- ", ""),
        ("not ", ""),
        ("#", ""),
        ("a .. ", ""),
        ("a ^ ", ""),
        ("(function() return ", " end)()"),
        ("{x = ", "}"),
        ("t[", "]"),
    ];
    // Left-associative chains: the operator between terms.
    const CHAINS: &[&str] = &["+", "-", "*", " and ", " or ", "==", "<", ":m()"];
    let depth = match rng.random_range(0..4) {
        0 => rng.random_range(1..300),
        1 => rng.random_range(150..260),
        2 => rng.random_range(1900..2100),
        _ => rng.random_range(1..4000),
    };
    let mut before = String::new();
    let mut after = String::new();
    let mut expr = String::from("a");
    let mut left = depth;
    while left > 0 {
        let n = rng.random_range(1..=left);
        left -= n;
        if rng.random_range(0..3) == 0 {
            let op = CHAINS[rng.random_range(0..CHAINS.len())];
            for _ in 0..n {
                if op == ":m()" {
                    expr.push_str(":m()");
                } else {
                    expr.push_str(op);
                    expr.push('a');
                }
            }
            expr = format!("({expr})");
        } else {
            let (b, a) = WRAPS[rng.random_range(0..WRAPS.len())];
            for _ in 0..n {
                before.push_str(b);
                after.insert_str(0, a);
            }
        }
    }
    let body = format!("{before}{expr}{after}");
    let statement = match rng.random_range(0..5) {
        0 => format!("return {body}"),
        1 => format!("local x = {body}\nreturn type(x)"),
        2 => format!(
            "{}return type({body}){}",
            "do ".repeat(depth.min(300)),
            " end".repeat(depth.min(300))
        ),
        3 => {
            let mut s = String::from("if a == 0 then return 0\n");
            for i in 1..depth {
                s.push_str(&format!("elseif a == {i} then return {i}\n"));
            }
            s + "end\nreturn type(" + &body + ")"
        }
        _ => format!("local y = 1\nredis.call('SET', KEYS[1], {body})\nreturn 1"),
    };
    format!(
        "local a = 1 local t = {{}} local function f(x) return x end \
         local m = {{}} m.__index = m function m.m(s) return s end a = setmetatable({{}}, m)\n{statement}"
    )
    .into_bytes()
}
