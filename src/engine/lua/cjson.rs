//! The `cjson` library as Redis bundles it (lua-cjson 2.1.0 with Redis's patches), written in
//! Rust over the raw C API.
//!
//! Tables are walked with `lua_next`/`lua_rawgeti` on the real Lua stack, exactly as the C library
//! does, so key order, sparse-array detection and stack-limit errors come out the same. Numbers are
//! printed with the C library's own `snprintf("%.14g")` and read with its `strtod`, which is what
//! lua-cjson uses (glibc rounding, `inf`, `nan`, hex floats).

use super::raw::{self, arg_error, check_bytes, check_integer, protect, push_bytes, Raise, L};
use mlua::ffi;
use std::ffi::{c_char, c_int, CStr};

extern "C" {
    fn snprintf(buf: *mut c_char, size: usize, fmt: *const c_char, ...) -> c_int;
    fn strtod(nptr: *const c_char, endptr: *mut *mut c_char) -> f64;
}

/// Per-instance configuration (`json_config_t`), kept in a userdata upvalue of every function.
#[derive(Clone, Copy)]
struct Config {
    sparse_convert: i32,
    sparse_ratio: i32,
    sparse_safe: i32,
    encode_max_depth: i32,
    decode_max_depth: i32,
    /// 0 = error, 1 = print `nan`/`inf`, 2 = print `null`.
    encode_invalid_numbers: i32,
    decode_invalid_numbers: i32,
    /// Only a buffer-reuse hint in C; kept for its getter/setter.
    encode_keep_buffer: i32,
    number_precision: i32,
}

const DEFAULT_CONFIG: Config = Config {
    sparse_convert: 0,
    sparse_ratio: 2,
    sparse_safe: 10,
    encode_max_depth: 1000,
    decode_max_depth: 1000,
    encode_invalid_numbers: 0,
    decode_invalid_numbers: 1,
    encode_keep_buffer: 1,
    number_precision: 14,
};

const FUNCTIONS: [(&CStr, ffi::lua_CFunction); 10] = [
    (c"encode", json_encode),
    (c"decode", json_decode),
    (c"encode_sparse_array", cfg_encode_sparse_array),
    (c"encode_max_depth", cfg_encode_max_depth),
    (c"decode_max_depth", cfg_decode_max_depth),
    (c"encode_number_precision", cfg_encode_number_precision),
    (c"encode_keep_buffer", cfg_encode_keep_buffer),
    (c"encode_invalid_numbers", cfg_encode_invalid_numbers),
    (c"decode_invalid_numbers", cfg_decode_invalid_numbers),
    (c"new", json_new),
];

/// Push the library table (like `luaopen_cjson`).
///
/// # Safety
/// `l` must be a valid Lua state with room for a few stack slots.
pub unsafe fn open(l: L) {
    push_module(l);
}

/// `lua_cjson_new`: a fresh table with its own configuration.
unsafe fn push_module(l: L) {
    ffi::lua_newtable(l);
    let cfg = ffi::lua_newuserdata(l, std::mem::size_of::<Config>()) as *mut Config;
    cfg.write(DEFAULT_CONFIG);
    for (name, f) in FUNCTIONS {
        ffi::lua_pushvalue(l, -1);
        ffi::lua_pushcclosure(l, f, 1);
        ffi::lua_setfield(l, -3, name.as_ptr());
    }
    ffi::lua_pop(l, 1);
    ffi::lua_pushlightuserdata(l, std::ptr::null_mut());
    ffi::lua_setfield(l, -2, c"null".as_ptr());
    push_bytes(l, b"cjson");
    ffi::lua_setfield(l, -2, c"_NAME".as_ptr());
    push_bytes(l, b"2.1.0");
    ffi::lua_setfield(l, -2, c"_VERSION".as_ptr());
}

unsafe extern "C-unwind" fn json_new(l: L) -> c_int {
    protect(l, |l| {
        push_module(l);
        Ok(1)
    })
}

/// The configuration of the running function's instance.
unsafe fn config<'a>(l: L) -> Result<&'a mut Config, Raise> {
    let p = ffi::lua_touserdata(l, ffi::lua_upvalueindex(1)) as *mut Config;
    p.as_mut()
        .ok_or_else(|| Raise::error("BUG: Unable to fetch CJSON configuration"))
}

// ===== Configuration functions =====

/// `json_arg_init`: refuse extra arguments, pad missing ones with nil.
unsafe fn arg_init<'a>(l: L, args: c_int) -> Result<&'a mut Config, Raise> {
    if ffi::lua_gettop(l) > args {
        return Err(arg_error(l, args + 1, "found too many arguments"));
    }
    while ffi::lua_gettop(l) < args {
        ffi::lua_pushnil(l);
    }
    config(l)
}

/// Set an integer option from argument `idx` (if not nil) and push its value. Range errors always
/// name argument #1, as the C code does.
unsafe fn integer_option(
    l: L,
    idx: c_int,
    setting: &mut i32,
    min: i32,
    max: i32,
) -> Result<(), Raise> {
    if ffi::lua_isnil(l, idx) == 0 {
        let value = check_integer(l, idx)? as i32;
        if !(min <= value && value <= max) {
            return Err(arg_error(
                l,
                1,
                &format!("expected integer between {min} and {max}"),
            ));
        }
        *setting = value;
    }
    ffi::lua_pushinteger(l, *setting as ffi::lua_Integer);
    Ok(())
}

/// Set an on/off (or named) option from argument `idx` and push its value: a boolean for
/// settings 0 and 1, else the option's name.
unsafe fn enum_option(l: L, idx: c_int, setting: &mut i32, options: &[&str]) -> Result<(), Raise> {
    if ffi::lua_isnil(l, idx) == 0 {
        if ffi::lua_isboolean(l, idx) != 0 {
            *setting = ffi::lua_toboolean(l, idx);
        } else {
            *setting = check_option(l, idx, options)?;
        }
    }
    match *setting {
        0 | 1 => ffi::lua_pushboolean(l, *setting),
        n => push_bytes(l, options[n as usize].as_bytes()),
    }
    Ok(())
}

/// `luaL_checkoption` without a default (names compare as C strings).
unsafe fn check_option(l: L, idx: c_int, options: &[&str]) -> Result<i32, Raise> {
    let name = check_bytes(l, idx)?;
    let name = name.split(|&b| b == 0).next().unwrap_or_default();
    match options.iter().position(|o| o.as_bytes() == name) {
        Some(i) => Ok(i as i32),
        None => Err(arg_error(
            l,
            idx,
            &format!("invalid option '{}'", String::from_utf8_lossy(name)),
        )),
    }
}

const ON_OFF: [&str; 2] = ["off", "on"];

unsafe extern "C-unwind" fn cfg_encode_sparse_array(l: L) -> c_int {
    protect(l, |l| {
        let cfg = arg_init(l, 3)?;
        enum_option(l, 1, &mut cfg.sparse_convert, &ON_OFF)?;
        integer_option(l, 2, &mut cfg.sparse_ratio, 0, i32::MAX)?;
        integer_option(l, 3, &mut cfg.sparse_safe, 0, i32::MAX)?;
        Ok(3)
    })
}

unsafe extern "C-unwind" fn cfg_encode_max_depth(l: L) -> c_int {
    protect(l, |l| {
        let cfg = arg_init(l, 1)?;
        integer_option(l, 1, &mut cfg.encode_max_depth, 1, i32::MAX)?;
        Ok(1)
    })
}

unsafe extern "C-unwind" fn cfg_decode_max_depth(l: L) -> c_int {
    protect(l, |l| {
        let cfg = arg_init(l, 1)?;
        integer_option(l, 1, &mut cfg.decode_max_depth, 1, i32::MAX)?;
        Ok(1)
    })
}

unsafe extern "C-unwind" fn cfg_encode_number_precision(l: L) -> c_int {
    protect(l, |l| {
        let cfg = arg_init(l, 1)?;
        integer_option(l, 1, &mut cfg.number_precision, 1, 14)?;
        Ok(1)
    })
}

unsafe extern "C-unwind" fn cfg_encode_keep_buffer(l: L) -> c_int {
    protect(l, |l| {
        let cfg = arg_init(l, 1)?;
        enum_option(l, 1, &mut cfg.encode_keep_buffer, &ON_OFF)?;
        Ok(1)
    })
}

unsafe extern "C-unwind" fn cfg_encode_invalid_numbers(l: L) -> c_int {
    protect(l, |l| {
        let cfg = arg_init(l, 1)?;
        enum_option(
            l,
            1,
            &mut cfg.encode_invalid_numbers,
            &["off", "on", "null"],
        )?;
        Ok(1)
    })
}

unsafe extern "C-unwind" fn cfg_decode_invalid_numbers(l: L) -> c_int {
    protect(l, |l| {
        let cfg = arg_init(l, 1)?;
        enum_option(l, 1, &mut cfg.decode_invalid_numbers, &ON_OFF)?;
        Ok(1)
    })
}

// ===== Encoding =====

/// C's `(int)d` on x86-64: out of range and NaN give `INT_MIN`.
fn c_cast_i32(d: f64) -> i32 {
    if d.is_nan() || d >= 2147483648.0 || d <= -2147483649.0 {
        i32::MIN
    } else {
        d as i32
    }
}

/// `snprintf("%.<precision>g", num)` appended to `out`. An integer of at most `precision` digits
/// is what printf writes it as, its digits, and is written without printf (about a microsecond a
/// number: `cjson.encode` of a big array of integers went milliseconds between stop checks).
fn append_g(out: &mut Vec<u8>, num: f64, precision: i32) {
    let precision = precision.clamp(1, 14);
    let negative_zero = num == 0.0 && num.is_sign_negative();
    if num.fract() == 0.0 && num.abs() < 10f64.powi(precision) && !negative_zero {
        out.extend_from_slice(itoa::Buffer::new().format(num as i64).as_bytes());
        return;
    }
    const FORMATS: [&CStr; 14] = [
        c"%.1g", c"%.2g", c"%.3g", c"%.4g", c"%.5g", c"%.6g", c"%.7g", c"%.8g", c"%.9g", c"%.10g",
        c"%.11g", c"%.12g", c"%.13g", c"%.14g",
    ];
    let mut buf = [0u8; 64];
    // SAFETY: the buffer size is passed, the format is NUL-terminated and takes one double.
    let n = unsafe {
        snprintf(
            buf.as_mut_ptr() as *mut c_char,
            buf.len(),
            FORMATS[precision as usize - 1].as_ptr(),
            num,
        )
    };
    out.extend_from_slice(&buf[..(n.max(0) as usize).min(buf.len() - 1)]);
}

/// How each byte is written inside a JSON string (None = as is).
fn escape(b: u8) -> Option<&'static [u8]> {
    const CONTROL: [&[u8]; 32] = [
        b"\\u0000", b"\\u0001", b"\\u0002", b"\\u0003", b"\\u0004", b"\\u0005", b"\\u0006",
        b"\\u0007", b"\\b", b"\\t", b"\\n", b"\\u000b", b"\\f", b"\\r", b"\\u000e", b"\\u000f",
        b"\\u0010", b"\\u0011", b"\\u0012", b"\\u0013", b"\\u0014", b"\\u0015", b"\\u0016",
        b"\\u0017", b"\\u0018", b"\\u0019", b"\\u001a", b"\\u001b", b"\\u001c", b"\\u001d",
        b"\\u001e", b"\\u001f",
    ];
    match b {
        0..=31 => Some(CONTROL[b as usize]),
        b'"' => Some(b"\\\""),
        b'\\' => Some(b"\\\\"),
        b'/' => Some(b"\\/"),
        127 => Some(b"\\u007f"),
        _ => None,
    }
}

struct Encoder {
    cfg: Config,
    out: Vec<u8>,
}

impl Encoder {
    unsafe fn exception(&self, l: L, idx: c_int, reason: &str) -> Raise {
        Raise::error(format!(
            "Cannot serialise {}: {}",
            raw::type_name(l, idx),
            reason
        ))
    }

    /// Write a string with its escapes, asking for the stop between 64 KiB chunks (escaping a
    /// 32 MiB string is a hundred milliseconds no hook can split; a chunk, a fraction of one).
    unsafe fn append_string(&mut self, l: L, idx: c_int) -> Result<(), Raise> {
        const CHUNK: usize = 1 << 16;
        let s = raw::to_bytes(l, idx).unwrap_or_default();
        // The exact size first: growing a buffer of tens of MiB by doubling is a copy as long
        // as the escaping itself, with no chance to stop in it.
        let mut escaped = 2;
        for (n, chunk) in s.chunks(CHUNK).enumerate() {
            if n > 0 && super::api::stop_requested() {
                return Err(Raise::Stop);
            }
            escaped += chunk
                .iter()
                .map(|&b| escape(b).map_or(1, <[u8]>::len))
                .sum::<usize>();
        }
        super::api::reserve_stoppable(&mut self.out, escaped)?;
        self.out.push(b'"');
        for (n, chunk) in s.chunks(CHUNK).enumerate() {
            if n > 0 && super::api::stop_requested() {
                return Err(Raise::Stop);
            }
            let mut plain = 0;
            for (i, &b) in chunk.iter().enumerate() {
                if let Some(e) = escape(b) {
                    self.out.extend_from_slice(&chunk[plain..i]);
                    self.out.extend_from_slice(e);
                    plain = i + 1;
                }
            }
            self.out.extend_from_slice(&chunk[plain..]);
        }
        self.out.push(b'"');
        Ok(())
    }

    unsafe fn append_number(&mut self, l: L, idx: c_int) -> Result<(), Raise> {
        let num = ffi::lua_tonumber(l, idx);
        match self.cfg.encode_invalid_numbers {
            0 if !num.is_finite() => return Err(self.exception(l, idx, "must not be NaN or Inf")),
            1 if num.is_nan() => {
                self.out.extend_from_slice(b"nan");
                return Ok(());
            }
            2 if !num.is_finite() => {
                self.out.extend_from_slice(b"null");
                return Ok(());
            }
            _ => {}
        }
        append_g(&mut self.out, num, self.cfg.number_precision);
        Ok(())
    }

    /// `lua_array_length`: the array size of the table on top, or -1 for an object.
    unsafe fn array_length(&self, l: L) -> Result<i32, Raise> {
        let mut max: i32 = 0;
        let mut items: i32 = 0;
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, -2) != 0 {
            if ffi::lua_type(l, -2) == ffi::LUA_TNUMBER {
                let k = ffi::lua_tonumber(l, -2);
                // `k != 0.0` is C's truth test (NaN counts as true).
                if k != 0.0 && k.floor() == k && k >= 1.0 {
                    if k > max as f64 {
                        max = c_cast_i32(k);
                    }
                    items = items.wrapping_add(1);
                    ffi::lua_pop(l, 1);
                    continue;
                }
            }
            ffi::lua_pop(l, 2);
            return Ok(-1);
        }
        let cfg = &self.cfg;
        if cfg.sparse_ratio > 0
            && max > items.wrapping_mul(cfg.sparse_ratio)
            && max > cfg.sparse_safe
        {
            if cfg.sparse_convert == 0 {
                return Err(self.exception(l, -1, "excessively sparse array"));
            }
            return Ok(-1);
        }
        Ok(max)
    }

    /// Append the value on top of the stack (left there). Nested tables are tracked in a `Vec`,
    /// not by recursion, so a raised `encode_max_depth` cannot overflow the Rust stack; the Lua
    /// stack holds what the C code's recursion holds (a table and its element, or table, key and
    /// value), so `lua_checkstack` fails at the same depth.
    unsafe fn append_data(&mut self, l: L) -> Result<(), Raise> {
        enum Frame {
            Array { i: i32, len: i32 },
            Object { comma: bool },
        }
        let mut frames: Vec<Frame> = Vec::new();
        let mut poll = super::api::StopPoll::new();
        'value: loop {
            poll.tick()?;
            // Room for a number, a key's quotes and the brackets around (strings reserve theirs).
            super::api::reserve_stoppable(&mut self.out, 64)?;
            let mut opened = false;
            match ffi::lua_type(l, -1) {
                ffi::LUA_TSTRING => self.append_string(l, -1)?,
                ffi::LUA_TNUMBER => self.append_number(l, -1)?,
                ffi::LUA_TBOOLEAN => {
                    let text: &[u8] = if ffi::lua_toboolean(l, -1) != 0 {
                        b"true"
                    } else {
                        b"false"
                    };
                    self.out.extend_from_slice(text);
                }
                ffi::LUA_TTABLE => {
                    raw::see_through_proxy(l, -1);
                    let depth = frames.len() as i32 + 1;
                    // Room for key, value and an error message, like the C check.
                    if depth > self.cfg.encode_max_depth || ffi::lua_checkstack(l, 3) == 0 {
                        return Err(Raise::error(format!(
                            "Cannot serialise, excessive nesting ({depth})"
                        )));
                    }
                    let len = self.array_length(l)?;
                    opened = true;
                    if len > 0 {
                        self.out.push(b'[');
                        frames.push(Frame::Array { i: 0, len });
                    } else {
                        self.out.push(b'{');
                        ffi::lua_pushnil(l);
                        frames.push(Frame::Object { comma: false });
                    }
                }
                ffi::LUA_TNIL => self.out.extend_from_slice(b"null"),
                ffi::LUA_TLIGHTUSERDATA if ffi::lua_touserdata(l, -1).is_null() => {
                    self.out.extend_from_slice(b"null")
                }
                _ => return Err(self.exception(l, -1, "type not supported")),
            }
            // A value just written (not a table just opened) is popped from its container.
            let mut finished = !opened;
            loop {
                let Some(frame) = frames.last_mut() else {
                    return Ok(());
                };
                if finished {
                    ffi::lua_pop(l, 1);
                }
                finished = true;
                match frame {
                    Frame::Array { i, len } => {
                        if *i == *len {
                            self.out.push(b']');
                            frames.pop();
                            continue;
                        }
                        if *i > 0 {
                            self.out.push(b',');
                        }
                        *i += 1;
                        ffi::lua_rawgeti(l, -1, *i as _);
                    }
                    Frame::Object { comma } => {
                        if ffi::lua_next(l, -2) == 0 {
                            self.out.push(b'}');
                            frames.pop();
                            continue;
                        }
                        if *comma {
                            self.out.push(b',');
                        }
                        *comma = true;
                        self.append_key(l)?;
                    }
                }
                continue 'value;
            }
        }
    }

    /// Write the key of a `lua_next` pair (stack: table, key, value).
    unsafe fn append_key(&mut self, l: L) -> Result<(), Raise> {
        match ffi::lua_type(l, -2) {
            ffi::LUA_TNUMBER => {
                self.out.push(b'"');
                self.append_number(l, -2)?;
                self.out.extend_from_slice(b"\":");
            }
            ffi::LUA_TSTRING => {
                self.append_string(l, -2)?;
                self.out.push(b':');
            }
            _ => return Err(self.exception(l, -2, "table key must be a number or string")),
        }
        Ok(())
    }
}

/// Before raising from deep inside a table walk: drop the work values so the error message has
/// stack room even when the stack is exhausted (C relies on Lua's spare slots instead).
unsafe fn drop_work(l: L) {
    ffi::lua_settop(l, 1);
}

unsafe extern "C-unwind" fn json_encode(l: L) -> c_int {
    protect(l, |l| {
        let cfg = *config(l)?;
        if ffi::lua_gettop(l) != 1 {
            return Err(arg_error(l, 1, "expected 1 argument"));
        }
        let mut enc = Encoder {
            cfg,
            out: Vec::new(),
        };
        enc.append_data(l).inspect_err(|_| drop_work(l))?;
        push_bytes(l, &enc.out);
        Ok(1)
    })
}

// ===== Decoding =====

#[derive(Clone, Copy, PartialEq, Debug)]
enum Tok {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    /// The text is in `Parser::tmp`.
    Str,
    Num(f64),
    Bool(bool),
    Null,
    Colon,
    Comma,
    End,
    Error(&'static str),
}

impl Tok {
    /// What a parse error says was found.
    fn name(self) -> &'static str {
        match self {
            Tok::ObjBegin => "T_OBJ_BEGIN",
            Tok::ObjEnd => "T_OBJ_END",
            Tok::ArrBegin => "T_ARR_BEGIN",
            Tok::ArrEnd => "T_ARR_END",
            Tok::Str => "T_STRING",
            Tok::Num(_) => "T_NUMBER",
            Tok::Bool(_) => "T_BOOLEAN",
            Tok::Null => "T_NULL",
            Tok::Colon => "T_COLON",
            Tok::Comma => "T_COMMA",
            Tok::End => "T_END",
            Tok::Error(what) => what,
        }
    }
}

/// A token and the 0-based offset where it (or its error) starts.
type Token = (Tok, usize);

struct Parser<'a> {
    /// The JSON text; the Lua string behind it is NUL-terminated, and the C parser stops at the
    /// first NUL, so `at` reads past-the-end as 0.
    data: &'a [u8],
    pos: usize,
    cfg: Config,
    depth: i32,
    tmp: Vec<u8>,
}

fn hex_digit(b: u8) -> Option<u32> {
    (b as char).to_digit(16)
}

impl Parser<'_> {
    fn at(&self, i: usize) -> u8 {
        self.data.get(i).copied().unwrap_or(0)
    }

    fn starts_with(&self, word: &[u8]) -> bool {
        word.iter()
            .enumerate()
            .all(|(i, &b)| self.at(self.pos + i) == b)
    }

    fn next_token(&mut self) -> Token {
        while matches!(self.at(self.pos), b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let start = self.pos;
        let single = match self.at(start) {
            0 => return (Tok::End, start),
            b'{' => Tok::ObjBegin,
            b'}' => Tok::ObjEnd,
            b'[' => Tok::ArrBegin,
            b']' => Tok::ArrEnd,
            b',' => Tok::Comma,
            b':' => Tok::Colon,
            b'"' => return self.string_token(),
            b'-' | b'0'..=b'9' => {
                if self.cfg.decode_invalid_numbers == 0 && self.is_invalid_number() {
                    return (Tok::Error("invalid number"), start);
                }
                return self.number_token();
            }
            b'f' | b'i' | b'I' | b'n' | b'N' | b't' | b'+' => {
                for (word, tok) in [
                    (&b"true"[..], Tok::Bool(true)),
                    (b"false", Tok::Bool(false)),
                    (b"null", Tok::Null),
                ] {
                    if self.starts_with(word) {
                        self.pos += word.len();
                        return (tok, start);
                    }
                }
                if self.cfg.decode_invalid_numbers != 0 && self.is_invalid_number() {
                    return self.number_token();
                }
                return (Tok::Error("invalid token"), start);
            }
            _ => return (Tok::Error("invalid token"), start),
        };
        self.pos += 1;
        (single, start)
    }

    /// `json_is_invalid_number`: strtod would accept it but strict JSON does not.
    fn is_invalid_number(&self) -> bool {
        let mut p = self.pos;
        match self.at(p) {
            b'+' => return true,
            b'-' => p += 1,
            _ => {}
        }
        let c = self.at(p);
        if c == b'0' {
            let c2 = self.at(p + 1);
            return (c2 | 0x20) == b'x' || c2.is_ascii_digit();
        }
        if c <= b'9' {
            return false;
        }
        let prefix = |word: &[u8]| {
            word.iter()
                .enumerate()
                .all(|(i, &w)| self.at(p + i).to_ascii_lowercase() == w)
        };
        prefix(b"inf") || prefix(b"nan")
    }

    fn number_token(&mut self) -> Token {
        let start = self.pos;
        let base = self.data.as_ptr() as *const c_char;
        let mut end: *mut c_char = std::ptr::null_mut();
        // SAFETY: `data` is a Lua string, so `data[len]` is a NUL and strtod stops there.
        let value = unsafe { strtod(base.add(start), &mut end) };
        let consumed = (end as usize)
            .wrapping_sub(base as usize)
            .wrapping_sub(start);
        if end.is_null() || consumed == 0 || start + consumed > self.data.len() {
            return (Tok::Error("invalid number"), start);
        }
        self.pos = start + consumed;
        (Tok::Num(value), start)
    }

    fn hex4(&self, p: usize) -> Option<u32> {
        (0..4).try_fold(0, |acc, i| Some(acc << 4 | hex_digit(self.at(p + i))?))
    }

    /// `\uXXXX` at `pos` (a surrogate pair takes two escapes): append UTF-8 to `tmp`.
    fn unicode_escape(&mut self) -> Option<()> {
        let p = self.pos;
        let mut code = self.hex4(p + 2)?;
        let mut escape_len = 6;
        if code & 0xF800 == 0xD800 {
            if code & 0x400 != 0 || self.at(p + 6) != b'\\' || self.at(p + 7) != b'u' {
                return None;
            }
            let low = self.hex4(p + 8)?;
            if low & 0xFC00 != 0xDC00 {
                return None;
            }
            code = (((code & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
            escape_len = 12;
        }
        let mut utf8 = [0u8; 4];
        let s = char::from_u32(code)?.encode_utf8(&mut utf8);
        self.tmp.extend_from_slice(s.as_bytes());
        self.pos += escape_len;
        Some(())
    }

    fn string_token(&mut self) -> Token {
        let start = self.pos;
        self.pos += 1;
        self.tmp.clear();
        loop {
            let ch = self.at(self.pos);
            match ch {
                b'"' => break,
                0 => return (Tok::Error("unexpected end of string"), self.pos),
                b'\\' => {
                    let translated = match self.at(self.pos + 1) {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 8,
                        b't' => b'\t',
                        b'n' => b'\n',
                        b'f' => 12,
                        b'r' => b'\r',
                        b'u' => {
                            if self.unicode_escape().is_none() {
                                return (Tok::Error("invalid unicode escape code"), self.pos);
                            }
                            continue;
                        }
                        _ => return (Tok::Error("invalid escape code"), self.pos),
                    };
                    self.tmp.push(translated);
                    self.pos += 2;
                }
                _ => {
                    self.tmp.push(ch);
                    self.pos += 1;
                }
            }
        }
        self.pos += 1;
        (Tok::Str, start)
    }

    fn parse_error(expected: &str, (tok, index): Token) -> Raise {
        Raise::error(format!(
            "Expected {expected} but found {} at character {}",
            tok.name(),
            (index + 1) as i32
        ))
    }

    unsafe fn descend(&mut self, l: L, slots: c_int) -> Result<(), Raise> {
        self.depth += 1;
        if self.depth <= self.cfg.decode_max_depth && ffi::lua_checkstack(l, slots) != 0 {
            return Ok(());
        }
        Err(Raise::error(format!(
            "Found too many nested data structures ({}) at character {}",
            self.depth, self.pos as i32
        )))
    }

    /// Push the value that starts with `token`. Open arrays and objects are tracked in a `Vec`,
    /// not by recursion, so a raised `decode_max_depth` cannot overflow the Rust stack; the Lua
    /// stack holds what the C code's recursion holds, so `lua_checkstack` fails at the same depth.
    unsafe fn value(&mut self, l: L, mut token: Token) -> Result<(), Raise> {
        /// An open container: an array with the index of its next element, or an object.
        enum Open {
            Array(c_int),
            Object,
        }
        let mut open: Vec<Open> = Vec::new();
        let mut poll = super::api::StopPoll::new();
        loop {
            poll.tick()?;
            // Push the value starting at `token`, or open a container and parse its first element.
            match token.0 {
                Tok::Str => push_bytes(l, &self.tmp),
                Tok::Num(n) => ffi::lua_pushnumber(l, n),
                Tok::Bool(b) => ffi::lua_pushboolean(l, b as c_int),
                Tok::Null => ffi::lua_pushlightuserdata(l, std::ptr::null_mut()),
                Tok::ObjBegin => {
                    self.descend(l, 3)?;
                    ffi::lua_newtable(l);
                    let first = self.next_token();
                    if first.0 != Tok::ObjEnd {
                        self.object_key(l, first)?;
                        token = self.next_token();
                        open.push(Open::Object);
                        continue;
                    }
                    self.depth -= 1;
                }
                Tok::ArrBegin => {
                    self.descend(l, 2)?;
                    ffi::lua_newtable(l);
                    let first = self.next_token();
                    if first.0 != Tok::ArrEnd {
                        token = first;
                        open.push(Open::Array(1));
                        continue;
                    }
                    self.depth -= 1;
                }
                _ => return Err(Self::parse_error("value", token)),
            }
            // A complete value is on top: store it, then close containers that end here.
            loop {
                match open.last_mut() {
                    None => return Ok(()),
                    Some(Open::Array(i)) => {
                        ffi::lua_rawseti(l, -2, *i as _);
                        *i = i.wrapping_add(1);
                        let next = self.next_token();
                        if next.0 == Tok::ArrEnd {
                            self.depth -= 1;
                            open.pop();
                            continue;
                        }
                        if next.0 != Tok::Comma {
                            return Err(Self::parse_error("comma or array end", next));
                        }
                        token = self.next_token();
                    }
                    Some(Open::Object) => {
                        ffi::lua_rawset(l, -3);
                        let next = self.next_token();
                        if next.0 == Tok::ObjEnd {
                            self.depth -= 1;
                            open.pop();
                            continue;
                        }
                        if next.0 != Tok::Comma {
                            return Err(Self::parse_error("comma or object end", next));
                        }
                        let key = self.next_token();
                        self.object_key(l, key)?;
                        token = self.next_token();
                    }
                }
                break;
            }
        }
    }

    /// Push an object key and consume the colon after it.
    unsafe fn object_key(&mut self, l: L, token: Token) -> Result<(), Raise> {
        if token.0 != Tok::Str {
            return Err(Self::parse_error("object key string", token));
        }
        push_bytes(l, &self.tmp);
        let colon = self.next_token();
        if colon.0 != Tok::Colon {
            return Err(Self::parse_error("colon", colon));
        }
        Ok(())
    }
}

unsafe extern "C-unwind" fn json_decode(l: L) -> c_int {
    protect(l, |l| {
        if ffi::lua_gettop(l) != 1 {
            return Err(arg_error(l, 1, "expected 1 argument"));
        }
        let cfg = *config(l)?;
        let data = check_bytes(l, 1)?;
        // Only the first bytes can tell UTF-16/32 from UTF-8 (RFC 4627).
        if data.len() >= 2 && (data[0] == 0 || data[1] == 0) {
            return Err(Raise::error(
                "JSON parser does not support UTF-16 or UTF-32",
            ));
        }
        let mut parser = Parser {
            data,
            pos: 0,
            cfg,
            depth: 0,
            tmp: Vec::new(),
        };
        let token = parser.next_token();
        parser.value(l, token).inspect_err(|_| drop_work(l))?;
        let token = parser.next_token();
        if token.0 != Tok::End {
            return Err(Parser::parse_error("the end", token));
        }
        Ok(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(script, expected)`: `Ok` text is the `d()` form, `Err` the raw error.
    fn check(cases: &[(&str, Result<&str, &str>)]) {
        super::super::testutil::check(&[("cjson", open)], cases);
    }

    fn format_g(num: f64, precision: i32) -> Vec<u8> {
        let mut out = Vec::new();
        append_g(&mut out, num, precision);
        out
    }

    #[test]
    fn numbers_are_written_as_printf_writes_them() {
        assert_eq!(format_g(0.1, 14), b"0.1");
        assert_eq!(format_g(1e15, 14), b"1e+15");
        assert_eq!(format_g(-0.0, 14), b"-0");
        assert_eq!(format_g(1.23456, 3), b"1.23");
        assert_eq!(format_g(f64::INFINITY, 14), b"inf");
        assert_eq!(format_g(-1.5e-7, 14), b"-1.5e-07");
        // Integers: the digits up to the precision, then printf's exponent form.
        assert_eq!(format_g(99999999999999.0, 14), b"99999999999999");
        assert_eq!(format_g(100000000000000.0, 14), b"1e+14");
        assert_eq!(format_g(-1234.0, 4), b"-1234");
        assert_eq!(format_g(12345.0, 4), b"1.234e+04");
        assert_eq!(format_g(0.0, 14), b"0");
    }

    /// Every example of the reference's section 9.1 plus edge cases; expectations were produced
    /// by running each script on a real Redis 7.0.15 (fresh configuration per script).
    #[test]
    fn matches_redis() {
        check(&[
        ("return cjson.encode({})", Ok("\"{}\"")),
        ("return cjson.encode({1,2,nil,4})", Ok("\"[1,2,null,4]\"")),
        ("local t = {} t[1]=1 t[10]=10 return cjson.encode(t)", Ok("\"[1,null,null,null,null,null,null,null,null,10]\"")),
        ("local t = {} t[1]=1 t[20]=10 return cjson.encode(t)", Err("user_script:1: Cannot serialise table: excessively sparse array")),
        ("local t = {} t[3]=1 return cjson.encode(t)", Ok("\"[null,null,1]\"")),
        ("return cjson.encode({[1]='a', x='b'})", Ok("\"{\\\"1\\\":\\\"a\\\",\\\"x\\\":\\\"b\\\"}\"")),
        ("return cjson.encode({[0]='a'})", Ok("\"{\\\"0\\\":\\\"a\\\"}\"")),
        ("return cjson.encode({[1.5]='a'})", Ok("\"{\\\"1.5\\\":\\\"a\\\"}\"")),
        ("return cjson.encode({[true]='a'})", Err("user_script:1: Cannot serialise boolean: table key must be a number or string")),
        ("return cjson.encode({cjson.null, 1})", Ok("\"[null,1]\"")),
        ("return cjson.encode(nil)", Ok("\"null\"")),
        ("return cjson.encode()", Err("user_script:1: bad argument #1 to 'encode' (expected 1 argument)")),
        ("return cjson.encode('a\"b\\\\c/d\\n\\t\\1\\127\\200')", Ok("\"\\\"a\\\\\\\"b\\\\\\\\c\\\\/d\\\\n\\\\t\\\\u0001\\\\u007f\u{fffd}\\\"\"")),
        ("return cjson.encode('a\\0b')", Ok("\"\\\"a\\\\u0000b\\\"\"")),
        ("return cjson.encode(0.1)", Ok("\"0.1\"")),
        ("return cjson.encode(3.14159265358979)", Ok("\"3.1415926535898\"")),
        ("return cjson.encode(1/3)", Ok("\"0.33333333333333\"")),
        ("return cjson.encode(1e16)", Ok("\"1e+16\"")),
        ("return cjson.encode(2^53)", Ok("\"9.007199254741e+15\"")),
        ("return cjson.encode(12345678901234)", Ok("\"12345678901234\"")),
        ("return cjson.encode(0/0)", Err("user_script:1: Cannot serialise number: must not be NaN or Inf")),
        ("return cjson.encode(function() end)", Err("user_script:1: Cannot serialise function: type not supported")),
        ("local t = {} t.self = t return cjson.encode(t)", Err("user_script:1: Cannot serialise, excessive nesting (1001)")),
        ("local t = {} local c = t for i=1,999 do c[1] = {} c = c[1] end return #cjson.encode(t)", Ok("number:2000")),
        ("local t = {} local c = t for i=1,1000 do c[1] = {} c = c[1] end return cjson.encode(t)", Err("user_script:1: Cannot serialise, excessive nesting (1001)")),
        ("return cjson.encode({[1]=1, [2]=2, n=2})", Ok("\"{\\\"1\\\":1,\\\"2\\\":2,\\\"n\\\":2}\"")),
        ("return cjson.encode({b=1,a=2,c=3})", Ok("\"{\\\"a\\\":2,\\\"c\\\":3,\\\"b\\\":1}\"")),
        ("local j = cjson.new() j.encode_sparse_array(true) return {j.encode({[1]=1,[5]=5}), j.encode({[1]=1,[12]=5})}", Ok("{1=\"[1,null,null,null,5]\",2=\"{\\\"1\\\":1,\\\"12\\\":5}\"}")),
        ("return cjson.encode(1e15)", Ok("\"1e+15\"")),
        ("return cjson.encode(123456789012345)", Ok("\"1.2345678901234e+14\"")),
        ("return cjson.encode(-0)", Ok("\"-0\"")),
        ("return cjson.encode(-1.5e-7)", Ok("\"-1.5e-07\"")),
        ("return cjson.encode(1/0)", Err("user_script:1: Cannot serialise number: must not be NaN or Inf")),
        ("return cjson.encode({[-1/0]=1})", Err("user_script:1: Cannot serialise number: must not be NaN or Inf")),
        ("return cjson.encode({[1e10]=1})", Ok("\"{\\\"10000000000\\\":1}\"")),
        ("return cjson.encode({[2^31]=1})", Ok("\"{\\\"2147483648\\\":1}\"")),
        ("return cjson.encode({[{}]=1})", Err("user_script:1: Cannot serialise table: table key must be a number or string")),
        ("return cjson.encode(coroutine.create(function() end))", Err("user_script:1: Cannot serialise thread: type not supported")),
        ("return cjson.encode({1,{2,{3,{a={true,false}}}},'x'})", Ok("\"[1,[2,[3,{\\\"a\\\":[true,false]}]],\\\"x\\\"]\"")),
        ("return cjson.encode({true,false})", Ok("\"[true,false]\"")),
        ("return cjson.encode('123')", Ok("\"\\\"123\\\"\"")),
        ("return cjson.encode({['1']=1})", Ok("\"{\\\"1\\\":1}\"")),
        ("return cjson.encode('\\195\\169\\255')", Ok("\"\\\"\u{e9}\u{fffd}\\\"\"")),
        ("return cjson.encode('\\8\\12\\13\\11\\31\\30')", Ok("\"\\\"\\\\b\\\\f\\\\r\\\\u000b\\\\u001f\\\\u001e\\\"\"")),
        ("return cjson.encode({0.5, -2, 1e300, 5e-324})", Ok("\"[0.5,-2,1e+300,4.9406564584125e-324]\"")),
        ("return cjson.encode(1, 2)", Err("user_script:1: bad argument #1 to 'encode' (expected 1 argument)")),
        ("return cjson.encode({1, type})", Err("user_script:1: Cannot serialise function: type not supported")),
        ("local ok, e = pcall(cjson.encode, {f=type}) return {tostring(ok), e}", Ok("{1=\"false\",2=\"Cannot serialise function: type not supported\"}")),
        ("local t = {} t[11]=1 return cjson.encode(t)", Err("user_script:1: Cannot serialise table: excessively sparse array")),
        ("local t = {} t[10]=1 return cjson.encode(t)", Ok("\"[null,null,null,null,null,null,null,null,null,1]\"")),
        ("local t = {1,2,3,4,5,6} t[12]=1 return cjson.encode(t)", Ok("\"[1,2,3,4,5,6,null,null,null,null,null,1]\"")),
        ("local t = {1,2,3,4,5} t[13]=1 return cjson.encode(t)", Err("user_script:1: Cannot serialise table: excessively sparse array")),
        ("return {cjson.encode_number_precision()}", Ok("{1=number:14}")),
        ("local j = cjson.new() return {j.encode_number_precision(3), j.encode(3.14159), cjson.encode(3.14159)}", Ok("{1=number:3,2=\"3.14\",3=\"3.14159\"}")),
        ("local j = cjson.new() j.encode_number_precision(1) return j.encode({0.25, 0.35, 2.5, 150, 1e100})", Ok("\"[0.2,0.3,2,2e+02,1e+100]\"")),
        ("return cjson.new().encode_number_precision(0)", Err("user_script:1: bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)")),
        ("return cjson.encode_number_precision(15)", Err("user_script:1: bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)")),
        ("local j = cjson.new() return j.encode_number_precision('5')", Ok("number:5")),
        ("return cjson.encode_number_precision('x')", Err("user_script:1: bad argument #1 to 'encode_number_precision' (number expected, got string)")),
        ("return cjson.encode_number_precision(1, 2)", Err("user_script:1: bad argument #2 to 'encode_number_precision' (found too many arguments)")),
        ("local j = cjson.new() return j.encode_number_precision(7.9)", Ok("number:7")),
        ("return {cjson.encode_sparse_array()}", Ok("{1=boolean:false,2=number:2,3=number:10}")),
        ("local j = cjson.new() return {j.encode_sparse_array('on', 3, 5)}", Ok("{1=boolean:true,2=number:3,3=number:5}")),
        ("local j = cjson.new() local ok, e = pcall(j.encode_sparse_array, true, -1) return {e, j.encode_sparse_array()}", Ok("{1=\"bad argument #1 to '?' (expected integer between 0 and 2147483647)\",2=boolean:true,3=number:2,4=number:10}")),
        ("return cjson.new().encode_sparse_array(nil, nil, -1)", Err("user_script:1: bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 2147483647)")),
        ("return cjson.new().encode_sparse_array('yes')", Err("user_script:1: bad argument #1 to 'encode_sparse_array' (invalid option 'yes')")),
        ("return cjson.new().encode_sparse_array(1)", Err("user_script:1: bad argument #1 to 'encode_sparse_array' (invalid option '1')")),
        ("return cjson.new().encode_sparse_array({})", Err("user_script:1: bad argument #1 to 'encode_sparse_array' (string expected, got table)")),
        ("local j = cjson.new() j.encode_sparse_array(false, 0) local t = {} t[30] = 1 return j.encode(t)", Ok("\"[null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,1]\"")),
        ("local j = cjson.new() j.encode_sparse_array(false, 2, 100) local t = {} t[30] = 1 return #j.encode(t)", Ok("number:148")),
        ("local j = cjson.new() j.encode_sparse_array(false, 1, 0) local t = {1,2} t[4] = 1 return j.encode(t)", Err("user_script:1: Cannot serialise table: excessively sparse array")),
        ("return cjson.encode_sparse_array(1, 2, 3, 4)", Err("user_script:1: bad argument #4 to 'encode_sparse_array' (found too many arguments)")),
        ("return {cjson.encode_max_depth(), cjson.decode_max_depth()}", Ok("{1=number:1000,2=number:1000}")),
        ("local j = cjson.new() j.encode_max_depth(2) return {j.encode({{1}}), pcall(j.encode, {{{1}}})}", Ok("{1=\"[[1]]\",2=boolean:false,3=\"Cannot serialise, excessive nesting (3)\"}")),
        ("return cjson.new().encode_max_depth(0)", Err("user_script:1: bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)")),
        ("local j = cjson.new() j.decode_max_depth(2) return {#j.decode('[[1]]'), pcall(j.decode, '[[[1]]]')}", Ok("{1=number:1,2=boolean:false,3=\"Found too many nested data structures (3) at character 3\"}")),
        ("local j = cjson.new() j.decode_max_depth(1) return j.decode('{\"a\":{}}')", Err("user_script:1: Found too many nested data structures (2) at character 6")),
        ("return {cjson.encode_invalid_numbers(), cjson.decode_invalid_numbers(), cjson.encode_keep_buffer()}", Ok("{1=boolean:false,2=boolean:true,3=boolean:true}")),
        ("local j = cjson.new() j.encode_invalid_numbers(true) return j.encode({1/0, -1/0, 0/0})", Ok("\"[inf,-inf,nan]\"")),
        ("local j = cjson.new() return {j.encode_invalid_numbers('null'), j.encode({1/0, 0/0, 2})}", Ok("{1=\"null\",2=\"[null,null,2]\"}")),
        ("local j = cjson.new() return {tostring(j.encode_invalid_numbers('on')), tostring(j.encode_invalid_numbers('off'))}", Ok("{1=\"true\",2=\"false\"}")),
        ("return cjson.new().encode_invalid_numbers('maybe')", Err("user_script:1: bad argument #1 to 'encode_invalid_numbers' (invalid option 'maybe')")),
        ("local j = cjson.new() j.decode_invalid_numbers(false) return {pcall(j.decode, '0x10')}", Ok("{1=boolean:false,2=\"Expected value but found invalid number at character 1\"}")),
        ("local j = cjson.new() j.decode_invalid_numbers('off') return {pcall(j.decode, '[NaN]')}", Ok("{1=boolean:false,2=\"Expected value but found invalid token at character 2\"}")),
        ("local j = cjson.new() j.decode_invalid_numbers(false) return {pcall(j.decode, '+1')}", Ok("{1=boolean:false,2=\"Expected value but found invalid token at character 1\"}")),
        ("local j = cjson.new() j.decode_invalid_numbers(false) return {pcall(j.decode, '-01')}", Ok("{1=boolean:false,2=\"Expected value but found invalid number at character 1\"}")),
        ("local j = cjson.new() j.decode_invalid_numbers(false) return j.decode('[-0.5e2, 0, 10]')", Ok("{1=number:-50,2=number:0,3=number:10}")),
        ("local j = cjson.new() return {tostring(j.encode_keep_buffer(false)), j.encode({1}), tostring(j.encode_keep_buffer())}", Ok("{1=\"false\",2=\"[1]\",3=\"false\"}")),
        ("return cjson._NAME .. ' ' .. cjson._VERSION", Ok("\"cjson 2.1.0\"")),
        ("return tostring(cjson.null)", Ok("\"userdata: (nil)\"")),
        ("return type(cjson.null)", Ok("\"userdata\"")),
        ("local j = cjson.new() return {j._NAME, j._VERSION, j.null == cjson.null, j ~= cjson}", Ok("{1=\"cjson\",2=\"2.1.0\",3=boolean:true,4=boolean:true}")),
        ("return cjson.new().new().encode({1})", Ok("\"[1]\"")),
        ("local t = {} for k in pairs(cjson) do t[#t+1] = k end table.sort(t) return table.concat(t, ' ')", Ok("\"_NAME _VERSION decode decode_invalid_numbers decode_max_depth encode encode_invalid_numbers encode_keep_buffer encode_max_depth encode_number_precision encode_sparse_array new null\"")),
        ("return cjson.decode('[1,2,3]')", Ok("{1=number:1,2=number:2,3=number:3}")),
        ("return cjson.decode('[1,null,3]')", Ok("{1=number:1,2=userdata:userdata: (nil),3=number:3}")),
        ("return #cjson.decode('[1,null,3]')", Ok("number:3")),
        ("return cjson.decode('null') == cjson.null", Ok("boolean:true")),
        ("return tostring(cjson.decode('12345678901234567890'))", Ok("\"1.2345678901235e+19\"")),
        ("return cjson.decode('9007199254740993')", Ok("number:9.007199254741e+15")),
        ("return tostring(cjson.decode('1E400'))", Ok("\"inf\"")),
        ("return cjson.decode('0x10')", Ok("number:16")),
        ("return cjson.decode('01')", Ok("number:1")),
        ("return cjson.decode('NaN')", Ok("number:nan")),
        ("return cjson.decode('[1,2')", Err("user_script:1: Expected comma or array end but found T_END at character 5")),
        ("return cjson.decode('{\"a\":}')", Err("user_script:1: Expected value but found T_OBJ_END at character 6")),
        ("return cjson.decode('')", Err("user_script:1: Expected value but found T_END at character 1")),
        ("return cjson.decode('{\"a\":1} x')", Err("user_script:1: Expected the end but found invalid token at character 9")),
        ("return cjson.decode('[1,]')", Err("user_script:1: Expected value but found T_ARR_END at character 4")),
        ("return cjson.decode('{\"a\":1,}')", Err("user_script:1: Expected object key string but found T_OBJ_END at character 8")),
        ("return cjson.decode('-')", Err("user_script:1: Expected value but found invalid number at character 1")),
        ("return cjson.decode('\"\\\\ud800\"')", Err("user_script:1: Expected value but found invalid unicode escape code at character 2")),
        ("return cjson.decode('\"\\\\u00e9\\\\ud83d\\\\ude00\"')", Ok("\"\u{e9}\u{1f600}\"")),
        ("return cjson.decode({})", Err("user_script:1: bad argument #1 to 'decode' (string expected, got table)")),
        ("return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))", Err("user_script:1: Found too many nested data structures (1001) at character 1001")),
        ("return #cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000))", Ok("number:1")),
        ("return cjson.decode(string.rep('{\"a\":', 1001) .. '1' .. string.rep('}', 1001))", Err("user_script:1: Found too many nested data structures (1001) at character 5001")),
        ("return cjson.decode(123)", Ok("number:123")),
        ("return cjson.decode()", Err("user_script:1: bad argument #1 to 'decode' (expected 1 argument)")),
        ("return cjson.decode('1', '2')", Err("user_script:1: bad argument #1 to 'decode' (expected 1 argument)")),
        ("local t = cjson.decode('{\"a\":1,\"b\":[true,false],\"c\":{\"d\":\"e\"}}') return {t.a, t.b[1], t.b[2], t.c.d}", Ok("{1=number:1,2=boolean:true,3=boolean:false,4=\"e\"}")),
        ("local t = cjson.decode('{\"1\":\"a\"}') return {t[1] == nil, t['1']}", Ok("{1=boolean:true,2=\"a\"}")),
        ("return cjson.encode(cjson.decode('[]'))", Ok("\"{}\"")),
        ("return cjson.encode(cjson.decode('{}'))", Ok("\"{}\"")),
        ("return cjson.decode('\"a\\\\\"b\\\\\\\\c\\\\/d\\\\b\\\\f\\\\n\\\\r\\\\t\"')", Ok("\"a\\\"b\\\\c/d\u{8}\u{c}\\\u{a}\\r\u{9}\"")),
        ("return cjson.decode('\"\\\\x41\"')", Err("user_script:1: Expected value but found invalid escape code at character 2")),
        ("return cjson.decode('\"ab\\\\u12g4\"')", Err("user_script:1: Expected value but found invalid unicode escape code at character 4")),
        ("return cjson.decode('\"\\\\udc00\\\\ud800\"')", Err("user_script:1: Expected value but found invalid unicode escape code at character 2")),
        ("return cjson.decode('\"\\\\ud83dx\"')", Err("user_script:1: Expected value but found invalid unicode escape code at character 2")),
        ("return cjson.decode('\"\\\\ud83d\\\\u0041\"')", Err("user_script:1: Expected value but found invalid unicode escape code at character 2")),
        ("return cjson.decode('\"a\\\\u0000b\"')", Ok("\"a\\000b\"")),
        ("return cjson.decode('\"\\\\u20AC\\\\u07ff\\\\u0080\"')", Ok("\"\u{20ac}\u{7ff}\u{80}\"")),
        ("return cjson.decode('\"abc')", Err("user_script:1: Expected value but found unexpected end of string at character 5")),
        ("return cjson.decode('\"a\\tb\\1\"')", Ok("\"a\u{9}b\u{1}\"")),
        ("return cjson.decode('\"\\195\\169\"')", Ok("\"\u{e9}\"")),
        ("return cjson.decode(' \\t\\r\\n[ 1 , 2 ] \\n')", Ok("{1=number:1,2=number:2}")),
        ("return {cjson.decode('true'), cjson.decode('false')}", Ok("{1=boolean:true,2=boolean:false}")),
        ("return cjson.decode('truex')", Err("user_script:1: Expected the end but found invalid token at character 5")),
        ("return cjson.decode('nul')", Err("user_script:1: Expected value but found invalid token at character 1")),
        ("return cjson.decode('@')", Err("user_script:1: Expected value but found invalid token at character 1")),
        ("return cjson.decode('{\"a\" 1}')", Err("user_script:1: Expected colon but found T_NUMBER at character 6")),
        ("return cjson.decode('{1:2}')", Err("user_script:1: Expected object key string but found T_NUMBER at character 2")),
        ("return cjson.decode('{\"a\":1 \"b\":2}')", Err("user_script:1: Expected comma or object end but found T_STRING at character 8")),
        ("return cjson.decode('[1 2]')", Err("user_script:1: Expected comma or array end but found T_NUMBER at character 4")),
        ("return cjson.decode('[[1,2],[3,}]')", Err("user_script:1: Expected value but found T_OBJ_END at character 11")),
        ("return tostring(cjson.decode('-Infinity'))", Ok("\"-inf\"")),
        ("return {tostring(cjson.decode('inf')), tostring(cjson.decode('[-inf]')[1])}", Ok("{1=\"inf\",2=\"-inf\"}")),
        ("return cjson.decode('info')", Err("user_script:1: Expected the end but found invalid token at character 4")),
        ("return cjson.decode('+12.5')", Ok("number:12.5")),
        ("return cjson.decode('+')", Err("user_script:1: Expected value but found invalid number at character 1")),
        ("return tostring(cjson.decode('nan(123)'))", Ok("\"nan\"")),
        ("return cjson.decode('[0x1p4, 0x.8, 0X1F]')", Ok("{1=number:16,2=number:0.5,3=number:31}")),
        ("return cjson.decode('0x')", Err("user_script:1: Expected the end but found invalid token at character 2")),
        ("return cjson.decode('[1e2, 1E+2, 1e-2, 1.5e, 2]')", Err("user_script:1: Expected comma or array end but found invalid token at character 22")),
        ("return cjson.decode('1.5e')", Err("user_script:1: Expected the end but found invalid token at character 4")),
        ("return cjson.decode('.5')", Err("user_script:1: Expected value but found invalid token at character 1")),
        ("return cjson.decode('-.5')", Ok("number:-0.5")),
        ("return tostring(cjson.decode('-0'))", Ok("\"-0\"")),
        ("return cjson.decode('\\0[')", Err("user_script:1: JSON parser does not support UTF-16 or UTF-32")),
        ("return cjson.decode('[\\0')", Err("user_script:1: JSON parser does not support UTF-16 or UTF-32")),
        ("return cjson.decode('1\\0xyz')", Err("user_script:1: JSON parser does not support UTF-16 or UTF-32")),
        ("return cjson.decode('\"ab\\0cd\"')", Err("user_script:1: Expected value but found unexpected end of string at character 4")),
        ("local t = cjson.decode('{\"a\":1,\"a\":2}') return t.a", Ok("number:2")),
        ("local t = cjson.decode('{\"b\":1,\"a\":2,\"c\":3}') local k = {} for x in pairs(t) do k[#k+1] = x end return k", Ok("{1=\"a\",2=\"c\",3=\"b\"}")),
        ("local t = cjson.decode('{\"a\":null}') return t.a == cjson.null", Ok("boolean:true")),
        ("return cjson.encode(cjson.decode('[{\"x\":1},{\"y\":[1,2,{\"z\":null}]}]'))", Ok("\"[{\\\"x\\\":1},{\\\"y\\\":[1,2,{\\\"z\\\":null}]}]\"")),
        ("return cjson.encode(cjson.decode('[0.1, 1e21, -3, 123456789012345678]'))", Ok("\"[0.1,1e+21,-3,1.2345678901235e+17]\"")),
        ("return #cjson.decode('\"' .. string.rep('x', 10000) .. '\"')", Ok("number:10000")),
        ("local t = cjson.decode('{\"a\":[[1],[2,[3]]]}') return t.a[2][2][1]", Ok("number:3")),
        ("local t = cjson.decode('{\"\":5}') return t['']", Ok("number:5")),
        ("return cjson.decode('\"hello\"')", Ok("\"hello\"")),
        ("return cjson.decode('[1,   ')", Err("user_script:1: Expected value but found T_END at character 7")),
        ("return cjson.decode(':')", Err("user_script:1: Expected value but found T_COLON at character 1")),
        ("return cjson.decode(']')", Err("user_script:1: Expected value but found T_ARR_END at character 1")),
        ("return cjson.decode('Null')", Err("user_script:1: Expected value but found invalid token at character 1")),
        ("return cjson.decode('NULL')", Err("user_script:1: Expected value but found invalid token at character 1")),
        ("return cjson.decode('TRUE')", Err("user_script:1: Expected value but found invalid token at character 1")),
        ("return cjson.decode('  [[[' )", Err("user_script:1: Expected value but found T_END at character 6")),
        ("local j = cjson.new() j.decode_max_depth(3) return j.decode('[ [ [ [1] ] ] ]')", Err("user_script:1: Found too many nested data structures (4) at character 7")),
        ("return cjson.decode_max_depth(1, 2)", Err("user_script:1: bad argument #2 to 'decode_max_depth' (found too many arguments)")),
        ("return cjson.decode('\"\\\\')", Err("user_script:1: Expected value but found invalid escape code at character 2")),
        ("return cjson.decode('\"\\\\u12')", Err("user_script:1: Expected value but found invalid unicode escape code at character 2")),
        ("local s = cjson.encode({a={1,2,3}}) return cjson.encode(cjson.decode(s))", Ok("\"{\\\"a\\\":[1,2,3]}\"")),
        ("local ok, e = pcall(cjson.decode, '[') return e", Ok("\"Expected value but found T_END at character 2\"")),
        ("local t = {} for i=0,255 do t[#t+1] = string.char(i) end return cjson.encode(table.concat(t))", Ok("\"\\\"\\\\u0000\\\\u0001\\\\u0002\\\\u0003\\\\u0004\\\\u0005\\\\u0006\\\\u0007\\\\b\\\\t\\\\n\\\\u000b\\\\f\\\\r\\\\u000e\\\\u000f\\\\u0010\\\\u0011\\\\u0012\\\\u0013\\\\u0014\\\\u0015\\\\u0016\\\\u0017\\\\u0018\\\\u0019\\\\u001a\\\\u001b\\\\u001c\\\\u001d\\\\u001e\\\\u001f !\\\\\\\"#$%&'()*+,-.\\\\/0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\\\\\\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\\\\u007f\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\\\"\"")),
        ("local t = {} for i=0,255 do t[#t+1] = string.char(i) end local s = table.concat(t) return cjson.decode(cjson.encode(s)) == s", Ok("boolean:true")),
        ("return cjson:encode({1})", Err("user_script:1: calling 'encode' on bad self (expected 1 argument)")),
        ("return cjson:decode('[1]')", Err("user_script:1: calling 'decode' on bad self (expected 1 argument)")),
        ("local t = setmetatable({}, {__index = function() return 1 end}) t[2] = 5 return cjson.encode(t)", Ok("\"[null,5]\"")),
        ("local t = setmetatable({a=1}, {__len = function() return 5 end}) return cjson.encode(t)", Ok("\"{\\\"a\\\":1}\"")),
        ("return cjson:encode_max_depth()", Err("user_script:1: calling 'encode_max_depth' on bad self (number expected, got table)")),
        ("local t = {} t[30] = 1 return cjson.encode({a={t}})", Err("user_script:1: Cannot serialise table: excessively sparse array")),
        ("return cjson.encode({{[{}]=1}})", Err("user_script:1: Cannot serialise table: table key must be a number or string")),
        ("local j = cjson.new() j.encode_number_precision(2) return j.encode({[1.2345]='v'})", Ok("\"{\\\"1.2\\\":\\\"v\\\"}\"")),
        ("local j = cjson.new() j.encode_invalid_numbers(true) return j.encode({[1/0]=1})", Ok("\"{\\\"inf\\\":1}\"")),
        ("return cjson.decode('[\\0\\0\\0')", Err("user_script:1: JSON parser does not support UTF-16 or UTF-32")),
        ("return cjson.decode('7')", Ok("number:7")),
        ("return cjson.decode('{\"a\":[1,{\"b\":tru}]}')", Err("user_script:1: Expected value but found invalid token at character 14")),
        ("local j = cjson.new() j.decode_max_depth(100000) local ok, e = pcall(j.decode, string.rep('[', 9000) .. string.rep(']', 9000)) return e", Ok("\"Found too many nested data structures (7999) at character 7999\"")),
        ("local j = cjson.new() j.decode_max_depth(100000) local ok, e = pcall(j.decode, string.rep('{\"a\":', 9000) .. '1' .. string.rep('}', 9000)) return e", Ok("\"Found too many nested data structures (4000) at character 19996\"")),
        ("local j = cjson.new() j.decode_max_depth(100000) local v = j.decode(string.rep('[', 5000) .. string.rep(']', 5000)) return type(v)", Ok("\"table\"")),
        ("local j = cjson.new() j.encode_max_depth(100000) local t = {} local c = t for i=1,9000 do c[1] = {} c = c[1] end local ok, e = pcall(j.encode, t) return e", Ok("\"Cannot serialise, excessive nesting (7998)\"")),
        ("local j = cjson.new() j.encode_max_depth(100000) local t = {} local c = t for i=1,9000 do c.a = {} c = c.a end local ok, e = pcall(j.encode, t) return e", Ok("\"Cannot serialise, excessive nesting (4000)\"")),
        ("local j = cjson.new() j.encode_max_depth(100000) local t = {} local c = t for i=1,3000 do c[1] = {} c = c[1] end return #j.encode(t)", Ok("number:6002")),
        ]);
    }

    #[test]
    fn configuration_persists_in_the_instance() {
        check(&[
            ("cjson.encode_number_precision(3) return cjson.encode(3.14159)", Ok("\"3.14\"")),
            ("cjson.encode_sparse_array(true) return cjson.encode({[1]=1,[5]=5})", Ok("\"[1,null,null,null,5]\"")),
            ("local ok = pcall(cjson.encode_sparse_array, 'on', -1) return {cjson.encode_sparse_array()}", Ok("{1=boolean:true,2=number:2,3=number:10}")),
        ]);
    }
}
