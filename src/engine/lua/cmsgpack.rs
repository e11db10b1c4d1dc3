//! The `cmsgpack` library as Redis bundles it (lua-cmsgpack 0.4.0), written in Rust over the raw
//! C API.
//!
//! Like the C library, packing walks the real tables with `lua_next` (map order is Lua's order)
//! and uses the Lua stack the same way, so stack-limit errors appear at the same points.

use super::api;
use super::raw::{
    self, arg_error, check_bytes, check_integer, opt_integer, protect, push_bytes, set_function,
    Raise, L,
};
use mlua::ffi;
use std::ffi::c_int;

/// Deeper tables are packed as nil (protects against reference cycles).
const MAX_NESTING: i32 = 16;

/// Push the library table (like `luaopen_cmsgpack`).
///
/// # Safety
/// `l` must be a valid Lua state with room for a few stack slots.
pub unsafe fn open(l: L) {
    ffi::lua_newtable(l);
    set_function(l, c"pack", mp_pack);
    set_function(l, c"unpack", mp_unpack);
    set_function(l, c"unpack_one", mp_unpack_one);
    set_function(l, c"unpack_limit", mp_unpack_limit);
    for (key, value) in [
        (c"_NAME", "cmsgpack"),
        (c"_VERSION", "lua-cmsgpack 0.4.0"),
        (c"_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo"),
        (c"_DESCRIPTION", "MessagePack C implementation for Lua"),
    ] {
        push_bytes(l, value.as_bytes());
        ffi::lua_setfield(l, -2, key.as_ptr());
    }
}

/// Replace `_COPYRIGHT` of the library table on top of the stack (Valkey's copy says
/// `Copyright (C) 2012, Redis Ltd.`). The key exists already, so the table keeps its layout.
///
/// # Safety
/// `l` must be a valid Lua state with the table `open` pushed on top.
pub unsafe fn set_copyright(l: L, copyright: &str) {
    push_bytes(l, copyright.as_bytes());
    ffi::lua_setfield(l, -2, c"_COPYRIGHT".as_ptr());
}

/// `luaL_checkstack`: `stack overflow (<what>)` when the stack cannot grow by `n`.
unsafe fn check_stack(l: L, n: c_int, what: &str) -> Result<(), Raise> {
    if ffi::lua_checkstack(l, n) == 0 {
        return Err(Raise::error(format!("stack overflow ({what})")));
    }
    Ok(())
}

/// C's `(int)d` on x86-64: out of range and NaN give `INT_MIN`.
fn c_cast_i32(d: f64) -> i32 {
    if d.is_nan() || d >= 2147483648.0 || d <= -2147483649.0 {
        i32::MIN
    } else {
        d as i32
    }
}

// ===== Packing =====

fn encode_int(out: &mut Vec<u8>, n: i64) {
    match n {
        0..=127 => out.push(n as u8),
        128..=0xff => out.extend_from_slice(&[0xcc, n as u8]),
        0x100..=0xffff => {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
        0x1_0000_0000.. => {
            out.push(0xcf);
            out.extend_from_slice(&n.to_be_bytes());
        }
        -32..=-1 => out.push(n as u8),
        -128..=-33 => out.extend_from_slice(&[0xd0, n as u8]),
        -32768..=-129 => {
            out.push(0xd1);
            out.extend_from_slice(&(n as i16).to_be_bytes());
        }
        -2147483648..=-32769 => {
            out.push(0xd2);
            out.extend_from_slice(&(n as i32).to_be_bytes());
        }
        _ => {
            out.push(0xd3);
            out.extend_from_slice(&n.to_be_bytes());
        }
    }
}

/// float32 when the value survives the round trip, else float64.
fn encode_double(out: &mut Vec<u8>, d: f64) {
    let f = d as f32;
    if f as f64 == d {
        out.push(0xca);
        out.extend_from_slice(&f.to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&d.to_be_bytes());
    }
}

/// A header for a str / array / map: fix form (`fix_max` items at most), then 8 (str only),
/// 16 and 32-bit lengths (longer lengths are truncated, as in C).
fn encode_header(out: &mut Vec<u8>, n: u64, fix: u8, fix_max: u64, codes: [Option<u8>; 3]) {
    if n <= fix_max {
        out.push(fix | n as u8);
    } else if let (Some(code), true) = (codes[0], n <= 0xff) {
        out.extend_from_slice(&[code, n as u8]);
    } else if n <= 0xffff {
        out.push(codes[1].unwrap_or_default());
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(codes[2].unwrap_or_default());
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

/// Pack the value on top of the stack and pop it.
unsafe fn encode_value(l: L, out: &mut Vec<u8>, level: i32) -> Result<(), Raise> {
    // Room for a header or a number (strings make room for theirs).
    api::reserve_stoppable(out, 16)?;
    let mut t = ffi::lua_type(l, -1);
    if t == ffi::LUA_TTABLE && level == MAX_NESTING {
        t = ffi::LUA_TNIL;
    }
    match t {
        ffi::LUA_TSTRING => {
            let s = raw::to_bytes(l, -1).unwrap_or_default();
            encode_header(
                out,
                s.len() as u64,
                0xa0,
                31,
                [Some(0xd9), Some(0xda), Some(0xdb)],
            );
            api::extend_stoppable(out, s)?;
        }
        ffi::LUA_TBOOLEAN => out.push(if ffi::lua_toboolean(l, -1) != 0 {
            0xc3
        } else {
            0xc2
        }),
        ffi::LUA_TNUMBER => {
            let n = ffi::lua_tonumber(l, -1);
            let i = raw::c_cast_i64(n);
            if !n.is_infinite() && i as f64 == n {
                encode_int(out, i);
            } else {
                encode_double(out, n);
            }
        }
        ffi::LUA_TTABLE => {
            raw::see_through_proxy(l, -1);
            if table_is_an_array(l)? {
                encode_array(l, out, level)?;
            } else {
                encode_map(l, out, level)?;
            }
        }
        _ => out.push(0xc0),
    }
    ffi::lua_pop(l, 1);
    Ok(())
}

/// True when the keys of the table on top are exactly the integers 1..n.
unsafe fn table_is_an_array(l: L) -> Result<bool, Raise> {
    let top = ffi::lua_gettop(l);
    let (mut count, mut max) = (0i32, 0i32);
    check_stack(l, 2, "in function table_is_an_array")?;
    ffi::lua_pushnil(l);
    let mut poll = api::StopPoll::new();
    while ffi::lua_next(l, -2) != 0 {
        ffi::lua_pop(l, 1);
        if let Err(stop) = poll.tick() {
            ffi::lua_settop(l, top);
            return Err(stop);
        }
        let n = ffi::lua_tonumber(l, -1);
        let int_like = !n.is_infinite() && c_cast_i32(n) as f64 == n;
        if ffi::lua_type(l, -1) != ffi::LUA_TNUMBER || n <= 0.0 || !int_like {
            ffi::lua_settop(l, top);
            return Ok(false);
        }
        if n > max as f64 {
            max = c_cast_i32(n);
        }
        count = count.wrapping_add(1);
    }
    ffi::lua_settop(l, top);
    Ok(max == count)
}

unsafe fn encode_array(l: L, out: &mut Vec<u8>, level: i32) -> Result<(), Raise> {
    let len = ffi::lua_objlen(l, -1);
    encode_header(out, len as u64, 0x90, 15, [None, Some(0xdc), Some(0xdd)]);
    check_stack(l, 1, "in function mp_encode_lua_table_as_array")?;
    let mut poll = api::StopPoll::new();
    for j in 1..=len {
        poll.tick()?;
        // The keys 1..len exist, so a raw read sees what `lua_gettable` would.
        ffi::lua_rawgeti(l, -1, j as _);
        encode_value(l, out, level + 1)?;
    }
    Ok(())
}

unsafe fn encode_map(l: L, out: &mut Vec<u8>, level: i32) -> Result<(), Raise> {
    check_stack(l, 3, "in function mp_encode_lua_table_as_map")?;
    let mut len: u64 = 0;
    let mut poll = api::StopPoll::new();
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, -2) != 0 {
        ffi::lua_pop(l, 1);
        if let Err(stop) = poll.tick() {
            ffi::lua_pop(l, 1);
            return Err(stop);
        }
        len += 1;
    }
    encode_header(out, len, 0x80, 15, [None, Some(0xde), Some(0xdf)]);
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, -2) != 0 {
        poll.tick()?;
        ffi::lua_pushvalue(l, -2);
        encode_value(l, out, level + 1)?; // the key copy
        encode_value(l, out, level + 1)?; // the value
    }
    Ok(())
}

unsafe extern "C-unwind" fn mp_pack(l: L) -> c_int {
    protect(l, |l| {
        let nargs = ffi::lua_gettop(l);
        if nargs == 0 {
            return Err(arg_error(l, 0, "MessagePack pack needs input."));
        }
        if ffi::lua_checkstack(l, nargs) == 0 {
            return Err(arg_error(l, 0, "Too many arguments for MessagePack pack."));
        }
        // One string per argument, concatenated at the end, as the C code does.
        let mut out = Vec::new();
        for i in 1..=nargs {
            check_stack(l, 1, "in function mp_check")?;
            ffi::lua_pushvalue(l, i);
            // Dropping the work values leaves the error message stack room.
            encode_value(l, &mut out, 0).inspect_err(|_| ffi::lua_settop(l, nargs))?;
            push_bytes(l, &out);
            out.clear();
        }
        ffi::lua_concat(l, nargs);
        Ok(1)
    })
}

// ===== Unpacking =====

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn left(&self) -> usize {
        self.data.len() - self.pos
    }

    /// The next `n` bytes, or "Missing bytes in input.".
    fn need(&self, n: usize) -> Result<&[u8], Raise> {
        if self.left() < n {
            return Err(Raise::error("Missing bytes in input."));
        }
        Ok(&self.data[self.pos..self.pos + n])
    }

    fn be(&self, from: usize, n: usize) -> Result<u64, Raise> {
        let bytes = self.need(from + n)?;
        Ok(bytes[from..]
            .iter()
            .fold(0u64, |acc, &b| acc << 8 | b as u64))
    }
}

/// A table being filled by the decoder.
struct Frame {
    array: bool,
    /// Array index of the next element.
    next: c_int,
    /// Elements (pairs for a map) still to decode.
    left: u64,
    /// A map whose key is on the stack, waiting for its value.
    have_key: bool,
}

/// Decode one object and push it. Nested tables are tracked in a `Vec`, not by recursion, so
/// deep input cannot overflow the Rust stack; the Lua stack is used exactly as the C code uses it
/// (table, then index and value for arrays; table, key and value for maps).
unsafe fn decode_value(l: L, c: &mut Cursor) -> Result<(), Raise> {
    let mut frames: Vec<Frame> = Vec::new();
    let mut poll = api::StopPoll::new();
    loop {
        poll.tick()?;
        let opened = decode_head(l, c)?;
        let mut done = opened.is_none();
        if let Some(frame) = opened {
            frames.push(frame);
        }
        // Store finished values into their tables and close the tables that are full.
        loop {
            let Some(f) = frames.last_mut() else {
                return Ok(());
            };
            if done {
                if f.array {
                    ffi::lua_rawset(l, -3);
                    f.left -= 1;
                } else if !f.have_key {
                    f.have_key = true;
                    break;
                } else {
                    // `lua_settable` raises these (without a script position).
                    match ffi::lua_type(l, -2) {
                        ffi::LUA_TNIL => return Err(Raise::plain("table index is nil")),
                        ffi::LUA_TNUMBER if ffi::lua_tonumber(l, -2).is_nan() => {
                            return Err(Raise::plain("table index is NaN"))
                        }
                        _ => {}
                    }
                    ffi::lua_rawset(l, -3);
                    f.have_key = false;
                    f.left -= 1;
                }
            }
            if f.left == 0 {
                frames.pop();
                done = true;
                continue;
            }
            if f.array {
                ffi::lua_pushnumber(l, f.next as f64);
                f.next = f.next.wrapping_add(1);
            }
            break;
        }
    }
}

/// Push a new table for an array or map of `len` elements.
unsafe fn open_table(l: L, array: bool, len: u64) -> Result<Option<Frame>, Raise> {
    ffi::lua_newtable(l);
    if array {
        check_stack(l, 1, "in function mp_decode_to_lua_array")?;
    }
    Ok(Some(Frame {
        array,
        next: 1,
        left: len,
        have_key: false,
    }))
}

/// Decode a scalar and push it, or push the table a container header starts and return its frame.
unsafe fn decode_head(l: L, c: &mut Cursor) -> Result<Option<Frame>, Raise> {
    let code = c.need(1)?[0];
    check_stack(
        l,
        1,
        "too many return values at once; use unpack_one or unpack_limit instead.",
    )?;
    match code {
        0xcc..=0xcf => {
            let size = 1 << (code - 0xcc);
            // uint64 goes through `lua_Integer`: values above 2^63 come back negative.
            let v = c.be(1, size)? as i64;
            ffi::lua_pushinteger(l, v as ffi::lua_Integer);
            c.pos += 1 + size;
        }
        0xd0 => {
            let v = c.be(1, 1)? as u8 as i8;
            ffi::lua_pushinteger(l, v as ffi::lua_Integer);
            c.pos += 2;
        }
        0xd1 => {
            let v = c.be(1, 2)? as u16 as i16;
            ffi::lua_pushinteger(l, v as ffi::lua_Integer);
            c.pos += 3;
        }
        0xd2 => {
            let v = c.be(1, 4)? as u32 as i32;
            ffi::lua_pushinteger(l, v as ffi::lua_Integer);
            c.pos += 5;
        }
        0xd3 => {
            let v = c.be(1, 8)? as i64;
            ffi::lua_pushnumber(l, v as f64);
            c.pos += 9;
        }
        0xc0 => {
            ffi::lua_pushnil(l);
            c.pos += 1;
        }
        0xc2 | 0xc3 => {
            ffi::lua_pushboolean(l, (code == 0xc3) as c_int);
            c.pos += 1;
        }
        0xca => {
            let v = f32::from_bits(c.be(1, 4)? as u32);
            ffi::lua_pushnumber(l, v as f64);
            c.pos += 5;
        }
        0xcb => {
            let v = f64::from_bits(c.be(1, 8)?);
            ffi::lua_pushnumber(l, v);
            c.pos += 9;
        }
        0xd9..=0xdb => {
            let size = 1 << (code - 0xd9);
            let len = c.be(1, size)? as usize;
            let bytes = c.need(1 + size + len)?;
            push_bytes(l, &bytes[1 + size..]);
            c.pos += 1 + size + len;
        }
        0xdc..=0xdf => {
            let size = if code & 1 == 0 { 2 } else { 4 };
            let len = c.be(1, size)?;
            c.pos += 1 + size;
            return open_table(l, code < 0xde, len);
        }
        0x00..=0x7f => {
            ffi::lua_pushinteger(l, code as ffi::lua_Integer);
            c.pos += 1;
        }
        0xe0..=0xff => {
            ffi::lua_pushinteger(l, code as i8 as ffi::lua_Integer);
            c.pos += 1;
        }
        0xa0..=0xbf => {
            let len = (code & 0x1f) as usize;
            let bytes = c.need(1 + len)?;
            push_bytes(l, &bytes[1..]);
            c.pos += 1 + len;
        }
        0x90..=0x9f => {
            c.pos += 1;
            return open_table(l, true, (code & 0xf) as u64);
        }
        0x80..=0x8f => {
            c.pos += 1;
            return open_table(l, false, (code & 0xf) as u64);
        }
        // bin, ext and the never-used 0xc1.
        _ => return Err(Raise::error("Bad data format in input.")),
    }
    Ok(None)
}

/// `mp_unpack_full`: decode up to `limit` objects from `offset` (both 0: everything, and no offset
/// result). With a limit, the next offset (-1 at the end) comes first.
unsafe fn unpack_full(l: L, limit: i64, offset: i64) -> Result<c_int, Raise> {
    let data = check_bytes(l, 1)?;
    let len = data.len();
    let decode_all = limit == 0 && offset == 0;
    if offset < 0 || limit < 0 {
        // The C message prints the input length where it says "limit".
        return Err(Raise::error(format!(
            "Invalid request to unpack with offset of {} and limit of {}.",
            offset as i32, len as i32
        )));
    }
    if offset as u64 > len as u64 {
        return Err(Raise::error(format!(
            "Start offset {} greater than input length {}.",
            offset as i32, len as i32
        )));
    }
    let limit = if decode_all { i32::MAX as i64 } else { limit };
    let mut c = Cursor {
        data,
        pos: offset as usize,
    };
    let mut count: c_int = 0;
    while c.left() > 0 && (count as i64) < limit {
        // Dropping the decoded values leaves the error message stack room.
        decode_value(l, &mut c).inspect_err(|_| ffi::lua_settop(l, 1))?;
        count += 1;
    }
    if !decode_all {
        check_stack(l, 1, "in function mp_unpack_full")?;
        let next = if c.left() == 0 { -1 } else { c.pos as i64 };
        ffi::lua_pushinteger(l, next as ffi::lua_Integer);
        ffi::lua_insert(l, 2);
        count += 1;
    }
    Ok(count)
}

/// `lua_pop(L, lua_gettop(L) - 1)`: keep only the first argument (if any).
unsafe fn keep_first_arg(l: L) {
    if ffi::lua_gettop(l) > 1 {
        ffi::lua_settop(l, 1);
    }
}

unsafe extern "C-unwind" fn mp_unpack(l: L) -> c_int {
    protect(l, |l| unpack_full(l, 0, 0))
}

unsafe extern "C-unwind" fn mp_unpack_one(l: L) -> c_int {
    protect(l, |l| {
        let offset = opt_integer(l, 2, 0)?;
        keep_first_arg(l);
        unpack_full(l, 1, offset)
    })
}

unsafe extern "C-unwind" fn mp_unpack_limit(l: L) -> c_int {
    protect(l, |l| {
        let limit = check_integer(l, 2)?;
        let offset = opt_integer(l, 3, 0)?;
        keep_first_arg(l);
        unpack_full(l, limit, offset)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(cases: &[(&str, Result<&str, &str>)]) {
        super::super::testutil::check(
            &[("cmsgpack", open), ("cjson", super::super::cjson::open)],
            cases,
        );
    }

    /// Every example of the reference's section 9.2 plus edge cases; expectations were produced
    /// by running each script on a real Redis 7.0.15.
    #[test]
    fn matches_redis() {
        check(&[
        ("return cmsgpack.pack(1)", Ok("\"\u{1}\"")),
        ("local s = cmsgpack.pack({1,2,3}) return {#s, string.byte(s, 1, -1)}", Ok("{1=number:4,2=number:147,3=number:1,4=number:2,5=number:3}")),
        ("local s = cmsgpack.pack({a=1}) return {#s, string.byte(s, 1, -1)}", Ok("{1=number:4,2=number:129,3=number:161,4=number:97,5=number:1}")),
        ("local s = cmsgpack.pack({}) return {string.byte(s, 1, -1)}", Ok("{1=number:144}")),
        ("local s = cmsgpack.pack(nil, true, false) return {string.byte(s, 1, -1)}", Ok("{1=number:192,2=number:195,3=number:194}")),
        ("local s = cmsgpack.pack(127, 128, 255, 256, 65536, -1, -32, -33, -129, 2^32, -2^31-1) return {string.byte(s, 1, -1)}", Ok("{10=number:0,11=number:1,12=number:0,13=number:0,14=number:255,15=number:224,16=number:208,17=number:223,18=number:209,19=number:255,1=number:127,20=number:127,21=number:207,22=number:0,23=number:0,24=number:0,25=number:1,26=number:0,27=number:0,28=number:0,29=number:0,2=number:204,30=number:211,31=number:255,32=number:255,33=number:255,34=number:255,35=number:127,36=number:255,37=number:255,38=number:255,3=number:128,4=number:204,5=number:255,6=number:205,7=number:1,8=number:0,9=number:206}")),
        ("local s = cmsgpack.pack(1.5) return {string.byte(s, 1, -1)}", Ok("{1=number:202,2=number:63,3=number:192,4=number:0,5=number:0}")),
        ("local s = cmsgpack.pack(0.1) return {string.byte(s, 1, -1)}", Ok("{1=number:203,2=number:63,3=number:185,4=number:153,5=number:153,6=number:153,7=number:153,8=number:153,9=number:154}")),
        ("local s = cmsgpack.pack(2^64) return {string.byte(s, 1, -1)}", Ok("{1=number:202,2=number:95,3=number:128,4=number:0,5=number:0}")),
        ("local s = cmsgpack.pack(string.rep('x', 40)) return {string.byte(s, 1, 3)}", Ok("{1=number:217,2=number:40,3=number:120}")),
        ("local s = cmsgpack.pack({1,nil,3}) return {string.byte(s, 1, -1)}", Ok("{1=number:130,2=number:1,3=number:1,4=number:3,5=number:3}")),
        ("return cmsgpack.pack(function() end)", Ok("\"\u{fffd}\"")),
        ("return cmsgpack.pack()", Err("user_script:1: bad argument #0 to 'pack' (MessagePack pack needs input.)")),
        ("return {cmsgpack.unpack(cmsgpack.pack({1,2,{a='b'}}, 'x', 7.5, true))}", Ok("{1={1=number:1,2=number:2,3={a=\"b\"}},2=\"x\",3=number:7.5,4=boolean:true}")),
        ("return {cmsgpack.unpack(string.char(0xc0, 0xc2, 0xc3))}", Ok("{2=boolean:false,3=boolean:true}")),
        ("return {cmsgpack.unpack(string.char(0xcf, 0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff))}", Ok("{1=number:-1}")),
        ("return {cmsgpack.unpack(string.char(0xc4, 2, 65, 66))}", Err("user_script:1: Bad data format in input.")),
        ("return {cmsgpack.unpack(string.char(0x92, 0x01))}", Err("user_script:1: Missing bytes in input.")),
        ("return {cmsgpack.unpack_one(string.char(1, 2, 3))}", Ok("{1=number:1,2=number:1}")),
        ("return {cmsgpack.unpack_limit(string.char(1, 2, 3), 2)}", Ok("{1=number:2,2=number:1,3=number:2}")),
        ("return {cmsgpack.unpack_limit(string.char(1, 2, 3), 2, 2)}", Ok("{1=number:-1,2=number:3}")),
        ("local t = {} t.self = t local s = cmsgpack.pack(t) return #s", Ok("number:97")),
        ("return cmsgpack._VERSION", Ok("\"lua-cmsgpack 0.4.0\"")),
        ("return {cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION}", Ok("{1=\"cmsgpack\",2=\"lua-cmsgpack 0.4.0\",3=\"Copyright (C) 2012, Salvatore Sanfilippo\",4=\"MessagePack C implementation for Lua\"}")),
        ("local t = {} for k in pairs(cmsgpack) do t[#t+1] = k end table.sort(t) return table.concat(t, ' ')", Ok("\"_COPYRIGHT _DESCRIPTION _NAME _VERSION pack unpack unpack_limit unpack_one\"")),
        ("local s = cmsgpack.pack(65535, 4294967295, 4294967296, -32768, -32769, -2147483648, -2147483649) return {string.byte(s, 1, -1)}", Ok("{10=number:0,11=number:0,12=number:0,13=number:1,14=number:0,15=number:0,16=number:0,17=number:0,18=number:209,19=number:128,1=number:205,20=number:0,21=number:210,22=number:255,23=number:255,24=number:127,25=number:255,26=number:210,27=number:128,28=number:0,29=number:0,2=number:255,30=number:0,31=number:211,32=number:255,33=number:255,34=number:255,35=number:255,36=number:127,37=number:255,38=number:255,39=number:255,3=number:255,4=number:206,5=number:255,6=number:255,7=number:255,8=number:255,9=number:207}")),
        ("local s = cmsgpack.pack(2^63, -2^63, 2^62) return {string.byte(s, 1, -1)}", Ok("{10=number:0,11=number:0,12=number:0,13=number:0,14=number:0,15=number:207,16=number:64,17=number:0,18=number:0,19=number:0,1=number:202,20=number:0,21=number:0,22=number:0,23=number:0,2=number:95,3=number:0,4=number:0,5=number:0,6=number:211,7=number:128,8=number:0,9=number:0}")),
        ("local s = cmsgpack.pack(1/0, -1/0) return {string.byte(s, 1, -1)}", Ok("{10=number:0,1=number:202,2=number:127,3=number:128,4=number:0,5=number:0,6=number:202,7=number:255,8=number:128,9=number:0}")),
        ("local s = cmsgpack.pack(0/0) return #s", Ok("number:9")),
        ("local s = cmsgpack.pack(-0.0) return {string.byte(s, 1, -1)}", Ok("{1=number:0}")),
        ("local s = cmsgpack.pack(-2.5, 1e300, 3.4e38, 1e-50) return {string.byte(s, 1, -1)}", Ok("{10=number:60,11=number:136,12=number:0,13=number:117,14=number:156,15=number:203,16=number:71,17=number:239,18=number:249,19=number:51,1=number:202,20=number:199,21=number:140,22=number:223,23=number:173,24=number:203,25=number:53,26=number:141,27=number:238,28=number:122,29=number:74,2=number:192,30=number:212,31=number:184,32=number:31,3=number:32,4=number:0,5=number:0,6=number:203,7=number:126,8=number:55,9=number:228}")),
        ("local s = cmsgpack.pack('', 'abc', string.rep('y', 31), string.rep('z', 32)) return {string.byte(s, 1, -1)}", Ok("{10=number:121,11=number:121,12=number:121,13=number:121,14=number:121,15=number:121,16=number:121,17=number:121,18=number:121,19=number:121,1=number:160,20=number:121,21=number:121,22=number:121,23=number:121,24=number:121,25=number:121,26=number:121,27=number:121,28=number:121,29=number:121,2=number:163,30=number:121,31=number:121,32=number:121,33=number:121,34=number:121,35=number:121,36=number:121,37=number:121,38=number:217,39=number:32,3=number:97,40=number:122,41=number:122,42=number:122,43=number:122,44=number:122,45=number:122,46=number:122,47=number:122,48=number:122,49=number:122,4=number:98,50=number:122,51=number:122,52=number:122,53=number:122,54=number:122,55=number:122,56=number:122,57=number:122,58=number:122,59=number:122,5=number:99,60=number:122,61=number:122,62=number:122,63=number:122,64=number:122,65=number:122,66=number:122,67=number:122,68=number:122,69=number:122,6=number:191,70=number:122,71=number:122,7=number:121,8=number:121,9=number:121}")),
        ("local s = cmsgpack.pack(string.rep('q', 300)) return {#s, string.byte(s, 1, 4)}", Ok("{1=number:303,2=number:218,3=number:1,4=number:44,5=number:113}")),
        ("local s = cmsgpack.pack(string.rep('q', 70000)) return {#s, string.byte(s, 1, 6)}", Ok("{1=number:70005,2=number:219,3=number:0,4=number:1,5=number:17,6=number:112,7=number:113}")),
        ("local t = {} for i=1,20 do t[i]=i end local s = cmsgpack.pack(t) return {#s, string.byte(s, 1, 4)}", Ok("{1=number:23,2=number:220,3=number:0,4=number:20,5=number:1}")),
        ("local t = {} for i=1,70000 do t[i]=0 end local s = cmsgpack.pack(t) return {#s, string.byte(s, 1, 6)}", Ok("{1=number:70005,2=number:221,3=number:0,4=number:1,5=number:17,6=number:112,7=number:0}")),
        ("local t = {} for i=1,20 do t['k'..i]=i end local s = cmsgpack.pack(t) return {#s, string.byte(s, 1, 3)}", Ok("{1=number:94,2=number:222,3=number:0,4=number:20}")),
        ("local s = cmsgpack.pack({[0]=1}) return {string.byte(s, 1, -1)}", Ok("{1=number:129,2=number:0,3=number:1}")),
        ("local s = cmsgpack.pack({[1.5]=1}) return {string.byte(s, 1, -1)}", Ok("{1=number:129,2=number:202,3=number:63,4=number:192,5=number:0,6=number:0,7=number:1}")),
        ("local s = cmsgpack.pack({[2]=1}) return {string.byte(s, 1, -1)}", Ok("{1=number:129,2=number:2,3=number:1}")),
        ("local s = cmsgpack.pack({[2^31]=1}) return {string.byte(s, 1, -1)}", Ok("{1=number:129,2=number:206,3=number:128,4=number:0,5=number:0,6=number:0,7=number:1}")),
        ("local s = cmsgpack.pack({x=true}) return {string.byte(s, 1, -1)}", Ok("{1=number:129,2=number:161,3=number:120,4=number:195}")),
        ("local s = cmsgpack.pack({[{1}]=2}) return {string.byte(s, 1, -1)}", Ok("{1=number:129,2=number:145,3=number:1,4=number:2}")),
        ("return {string.byte(cmsgpack.pack(cjson.null), 1, -1)}", Ok("{1=number:192}")),
        ("return {string.byte(cmsgpack.pack(coroutine.create(function() end)), 1, -1)}", Ok("{1=number:192}")),
        ("local t = {} local c = t for i=1,20 do c[1] = {} c = c[1] end local s = cmsgpack.pack(t) return {#s, string.byte(s, 1, -1)}", Ok("{10=number:145,11=number:145,12=number:145,13=number:145,14=number:145,15=number:145,16=number:145,17=number:145,18=number:192,1=number:17,2=number:145,3=number:145,4=number:145,5=number:145,6=number:145,7=number:145,8=number:145,9=number:145}")),
        ("local t = {} local c = t for i=1,15 do c[1] = {} c = c[1] end local s = cmsgpack.pack(t) return {#s, string.byte(s, -2, -1)}", Ok("{1=number:16,2=number:145,3=number:144}")),
        ("local t = {} t[1] = t local s = cmsgpack.pack(t) return {#s, string.byte(s, -2, -1)}", Ok("{1=number:17,2=number:145,3=number:192}")),
        ("return #cmsgpack.pack(1, 2, 3, 'a', {}, {1}, {a=1})", Ok("number:12")),
        ("local t = {} for i=1,4500 do t[i]=i end return cmsgpack.pack(unpack(t))", Err("user_script:1: bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)")),
        ("local t = {} for i=1,4000 do t[i]=i end return #cmsgpack.pack(unpack(t))", Ok("number:11618")),
        ("return {cmsgpack.unpack('')}", Ok("{}")),
        ("return select('#', cmsgpack.unpack(''))", Ok("number:0")),
        ("return select('#', cmsgpack.unpack(string.char(0xc0, 0xc0)))", Ok("number:2")),
        ("return {cmsgpack.unpack(cmsgpack.pack(0, 127, 128, 255, 256, 65535, 65536, -1, -32, -33, -128, -129, -32768, -32769, 2^31, -2^31, 2^40, -2^40))}", Ok("{10=number:-33,11=number:-128,12=number:-129,13=number:-32768,14=number:-32769,15=number:2147483648,16=number:-2147483648,17=number:1099511627776,18=number:-1099511627776,1=number:0,2=number:127,3=number:128,4=number:255,5=number:256,6=number:65535,7=number:65536,8=number:-1,9=number:-32}")),
        ("return {cmsgpack.unpack(string.char(0xd0, 0x80, 0xd1, 0x80, 0x00, 0xd2, 0x80, 0, 0, 0, 0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0))}", Ok("{1=number:-128,2=number:-32768,3=number:-2147483648,4=number:-9.2233720368548e+18}")),
        ("return {cmsgpack.unpack(string.char(0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0))}", Ok("{1=number:-9.2233720368548e+18}")),
        ("return {cmsgpack.unpack(cmsgpack.pack(1.5, 0.1, -2.25))}", Ok("{1=number:1.5,2=number:0.1,3=number:-2.25}")),
        ("return tostring(cmsgpack.unpack(string.char(0xca, 0x3d, 0xcc, 0xcc, 0xcd)))", Ok("\"0.10000000149012\"")),
        ("return tostring(cmsgpack.unpack(string.char(0xca, 0x7f, 0x80, 0, 0)))", Ok("\"inf\"")),
        ("return {cmsgpack.unpack(string.char(0xa3, 97, 98, 99, 0xd9, 2, 120, 121, 0xda, 0, 1, 122, 0xdb, 0, 0, 0, 1, 119))}", Ok("{1=\"abc\",2=\"xy\",3=\"z\",4=\"w\"}")),
        ("return cmsgpack.unpack(string.char(0xa3, 97))", Err("user_script:1: Missing bytes in input.")),
        ("return cmsgpack.unpack(string.char(0xd9))", Err("user_script:1: Missing bytes in input.")),
        ("return cmsgpack.unpack(string.char(0xdb, 0, 0, 1, 0, 65))", Err("user_script:1: Missing bytes in input.")),
        ("return {cmsgpack.unpack(string.char(0xdc, 0, 2, 1, 2))}", Ok("{1={1=number:1,2=number:2}}")),
        ("return {cmsgpack.unpack(string.char(0xdd, 0, 0, 0, 1, 0xc3))}", Ok("{1={1=boolean:true}}")),
        ("return {cmsgpack.unpack(string.char(0xde, 0, 1, 0xa1, 97, 5))}", Ok("{1={a=number:5}}")),
        ("return {cmsgpack.unpack(string.char(0xdf, 0, 0, 0, 1, 1, 0xa1, 98))}", Ok("{1={1=\"b\"}}")),
        ("return cmsgpack.unpack(string.char(0x81, 0xc0, 0x01))", Err("table index is nil")),
        ("return cmsgpack.unpack(string.char(0x81, 0xcb, 0x7f,0xf8,0,0,0,0,0,1, 0x01))", Err("table index is NaN")),
        ("local t = cmsgpack.unpack(string.char(0x81, 0x01, 0xc0)) return next(t) == nil", Ok("boolean:true")),
        ("local t = cmsgpack.unpack(string.char(0x93, 1, 0xc0, 3)) return {t[1], t[2], t[3]}", Ok("{1=number:1,3=number:3}")),
        ("local t = cmsgpack.unpack(string.char(0x81, 0x91, 1, 2)) local k, v = next(t) return {type(k), k[1], v}", Ok("{1=\"table\",2=number:1,3=number:2}")),
        ("return cmsgpack.unpack(string.char(0xd4, 1, 2))", Err("user_script:1: Bad data format in input.")),
        ("return cmsgpack.unpack(string.char(0xc1))", Err("user_script:1: Bad data format in input.")),
        ("return cmsgpack.unpack(string.char(0xc7, 0, 1))", Err("user_script:1: Bad data format in input.")),
        ("return cmsgpack.unpack(string.char(0x91, 0xc1))", Err("user_script:1: Bad data format in input.")),
        ("return cmsgpack.unpack(string.char(0x82, 1, 2, 3))", Err("user_script:1: Missing bytes in input.")),
        ("return cmsgpack.unpack(string.char(0xce, 1, 2))", Err("user_script:1: Missing bytes in input.")),
        ("return cmsgpack.unpack(string.char(0xcb, 1, 2))", Err("user_script:1: Missing bytes in input.")),
        ("return {cmsgpack.unpack(5)}", Ok("{1=number:53}")),
        ("return cmsgpack.unpack({})", Err("user_script:1: bad argument #1 to 'unpack' (string expected, got table)")),
        ("return cmsgpack.unpack()", Err("user_script:1: bad argument #1 to 'unpack' (string expected, got no value)")),
        ("return cmsgpack.unpack_one()", Err("user_script:1: bad argument #1 to 'unpack_one' (string expected, got no value)")),
        ("return cmsgpack.unpack_one('a', 'x')", Err("user_script:1: bad argument #2 to 'unpack_one' (number expected, got string)")),
        ("return cmsgpack.unpack_one(string.char(1, 2), -1)", Err("user_script:1: Invalid request to unpack with offset of -1 and limit of 2.")),
        ("return cmsgpack.unpack_one(string.char(1, 2), 3)", Err("user_script:1: Start offset 3 greater than input length 2.")),
        ("return {cmsgpack.unpack_one(string.char(1, 2), 2)}", Ok("{1=number:-1}")),
        ("local s = cmsgpack.pack('a', {1, 2}, 3) local o, v = cmsgpack.unpack_one(s) local o2, v2 = cmsgpack.unpack_one(s, o) local o3, v3 = cmsgpack.unpack_one(s, o2) return {o, v, o2, v2[2], o3, v3}", Ok("{1=number:2,2=\"a\",3=number:5,4=number:2,5=number:-1,6=number:3}")),
        ("return {select('#', cmsgpack.unpack_one(string.char(0xc0, 1))), (cmsgpack.unpack_one(string.char(0xc0, 1)))}", Ok("{1=number:2,2=number:1}")),
        ("return {cmsgpack.unpack_one('')}", Ok("{1=number:-1}")),
        ("return cmsgpack.unpack_limit('a')", Err("user_script:1: bad argument #2 to 'unpack_limit' (number expected, got no value)")),
        ("return {cmsgpack.unpack_limit(string.char(1, 2, 3), 0)}", Ok("{1=number:1,2=number:2,3=number:3}")),
        ("return {cmsgpack.unpack_limit(string.char(1, 2, 3), 0, 1)}", Ok("{1=number:1}")),
        ("return cmsgpack.unpack_limit(string.char(1, 2, 3), -1)", Err("user_script:1: Invalid request to unpack with offset of 0 and limit of 3.")),
        ("return {cmsgpack.unpack_limit(string.char(1, 2, 3), 10)}", Ok("{1=number:-1,2=number:1,3=number:2,4=number:3}")),
        ("return {cmsgpack.unpack_limit(string.char(1, 2, 3), 1.9, 1.2)}", Ok("{1=number:2,2=number:2}")),
        ("return {cmsgpack.unpack_limit(string.char(1, 2, 3), '2')}", Ok("{1=number:2,2=number:1,3=number:2}")),
        ("return cmsgpack.unpack_limit(string.char(1), {})", Err("user_script:1: bad argument #2 to 'unpack_limit' (number expected, got table)")),
        ("return cmsgpack.unpack_limit({}, 1, 'z')", Err("user_script:1: bad argument #3 to 'unpack_limit' (number expected, got string)")),
        ("return cmsgpack.unpack_limit(string.char(1, 0x92), 5)", Err("user_script:1: Missing bytes in input.")),
        ("return select('#', cmsgpack.unpack(string.rep(string.char(1), 9000)))", Err("user_script:1: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)")),
        ("return select('#', cmsgpack.unpack(string.rep(string.char(1), 7000)))", Ok("number:7000")),
        ("local v = cmsgpack.unpack(cmsgpack.pack({a={b={c={1,2,'x'}}}})) return v.a.b.c", Ok("{1=number:1,2=number:2,3=\"x\"}")),
        ("return cmsgpack.unpack(cmsgpack.pack('a\\0b\\255'))", Ok("\"a\\000b\u{fffd}\"")),
        ("local s = cmsgpack.pack({b=1,a=2,c=3}) return {string.byte(s, 1, -1)}", Ok("{10=number:1,1=number:131,2=number:161,3=number:97,4=number:2,5=number:161,6=number:99,7=number:3,8=number:161,9=number:98}")),
        ("local s = cmsgpack.pack({{x=1}, {y=2}}) return {string.byte(s, 1, -1)}", Ok("{1=number:146,2=number:129,3=number:161,4=number:120,5=number:1,6=number:129,7=number:161,8=number:121,9=number:2}")),
        ("local s = string.rep(string.char(0x91), 5000) .. string.char(1) return cmsgpack.unpack(s)", Err("user_script:1: stack overflow (in function mp_decode_to_lua_array)")),
        ("local s = string.rep(string.char(0x91), 100) .. string.char(7) local v = cmsgpack.unpack(s) for i=1,100 do v = v[1] end return v", Ok("number:7")),
        ("return #cmsgpack:pack(1)", Ok("number:189")),
        ("local t = setmetatable({1, 2}, {__index = function() return 9 end}) local s = cmsgpack.pack(t) return {string.byte(s, 1, -1)}", Ok("{1=number:146,2=number:1,3=number:2}")),
        ("local t = {} local c = t for i=1,20 do c.k = {} c = c.k end local s = cmsgpack.pack(t) return {#s, string.byte(s, -3, -1)}", Ok("{1=number:49,2=number:161,3=number:107,4=number:192}")),
        ("return {cmsgpack:unpack_one(string.char(1))}", Err("user_script:1: bad argument #1 to 'unpack_one' (number expected, got string)")),
        ("return cmsgpack.unpack_limit('abc', 1, 2^32 + 5)", Err("user_script:1: Start offset 5 greater than input length 3.")),
        ("return {cmsgpack.unpack_one(string.char(1, 2, 3), 1.7)}", Ok("{1=number:2,2=number:2}")),
        ]);
    }
}
