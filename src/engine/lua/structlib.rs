//! The `struct` library as Redis bundles it (Roberto Ierusalimschy's struct 0.2 with Redis's
//! fixes, `deps/lua/src/lua_struct.c`), written in Rust over the raw C API.
//!
//! Formats are read like the C code reads them: the format is a C string (it ends at the first
//! zero byte), numbers after options are parsed lazily, and the native layout is x86-64 Linux
//! (little endian, `long` and `size_t` of 8 bytes, maximum alignment 8).

use super::raw::{
    arg_error, c_cast_i64, check_bytes, check_number, opt_integer, protect, push_bytes,
    set_function, Raise, RawResult, L,
};
use mlua::ffi;
use std::ffi::c_int;

/// Largest size of an `i`/`I` integer, in bytes.
const MAXINTSIZE: i32 = 32;
/// Alignment of `!` without a number (the alignment of a double on x86-64).
const MAXALIGN: i32 = 8;

/// Endianness and maximum alignment in force while reading a format.
struct Header {
    little: bool,
    align: usize,
}

impl Header {
    fn new() -> Header {
        Header {
            little: true,
            align: 1,
        }
    }
}

/// A cursor over a format string.
struct Format<'a> {
    fmt: &'a [u8],
    pos: usize,
}

impl<'a> Format<'a> {
    fn new(fmt: &'a [u8]) -> Format<'a> {
        // The C library sees a C string: everything after a zero byte is ignored.
        let end = fmt.iter().position(|&b| b == 0).unwrap_or(fmt.len());
        Format {
            fmt: &fmt[..end],
            pos: 0,
        }
    }

    fn next_opt(&mut self) -> Option<u8> {
        let opt = *self.fmt.get(self.pos)?;
        self.pos += 1;
        Some(opt)
    }

    /// The decimal number at the cursor, or `df` when there is none.
    fn getnum(&mut self, df: i32) -> Result<i32, Raise> {
        let mut a: i32 = 0;
        let mut any = false;
        while let Some(&c) = self.fmt.get(self.pos).filter(|c| c.is_ascii_digit()) {
            let digit = (c - b'0') as i32;
            if a > i32::MAX / 10 || a * 10 > i32::MAX - digit {
                return Err(Raise::error("integral size overflow"));
            }
            a = a * 10 + digit;
            self.pos += 1;
            any = true;
        }
        Ok(if any { a } else { df })
    }

    /// The size in bytes of option `opt` (0 for options that take no room or vary).
    fn optsize(&mut self, opt: u8) -> Result<usize, Raise> {
        Ok(match opt {
            b'b' | b'B' => 1,
            b'h' | b'H' => 2,
            b'l' | b'L' | b'T' | b'd' => 8,
            b'f' => 4,
            b'x' => 1,
            // getnum never returns a negative number.
            b'c' => self.getnum(1)? as usize,
            b'i' | b'I' => {
                let sz = self.getnum(4)?;
                if sz > MAXINTSIZE {
                    return Err(Raise::error(format!(
                        "integral size {sz} is larger than limit of {MAXINTSIZE}"
                    )));
                }
                sz as usize
            }
            _ => 0,
        })
    }
}

/// Padding bytes needed to align an item of `size` bytes at offset `len`.
fn gettoalign(len: usize, h: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    // Sizes such as i3 are not powers of 2; the C arithmetic is kept as is (wrapping).
    size.wrapping_sub(len & (size - 1)) & (size - 1)
}

/// The options that change the header; anything else is an invalid option.
unsafe fn controloptions(l: L, opt: u8, fmt: &mut Format, h: &mut Header) -> Result<(), Raise> {
    match opt {
        b' ' => {}
        b'>' => h.little = false,
        b'<' => h.little = true,
        b'!' => {
            let a = fmt.getnum(MAXALIGN)?;
            if a <= 0 || a & (a - 1) != 0 {
                return Err(Raise::error(format!("alignment {a} is not a power of 2")));
            }
            h.align = a as usize;
        }
        _ => {
            // The option byte goes into the message raw (it may not be UTF-8): build the message
            // with a placeholder, then put the byte in place of the `?` in `... '?')`.
            let mut raise = arg_error(l, 1, "invalid format option '?'");
            if let Raise::Error(msg) = &mut raise {
                let at = msg.len() - 3;
                msg[at] = opt;
            }
            return Err(raise);
        }
    }
    Ok(())
}

/// The C conversion `(unsigned long)d` as gcc compiles it for x86-64.
fn c_cast_u64(d: f64) -> u64 {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    if d.is_nan() || d < TWO63 {
        c_cast_i64(d) as u64
    } else {
        (c_cast_i64(d - TWO63) as u64) ^ (1 << 63)
    }
}

/// `putinteger`: the value cast to a 64-bit integer, written in `size` bytes (bytes beyond
/// the 8th are zero, as the C code shifts an unsigned long).
fn putinteger(out: &mut Vec<u8>, n: f64, little: bool, size: usize) {
    let mut value = if n < 0.0 {
        c_cast_i64(n) as u64
    } else {
        c_cast_u64(n)
    };
    let mut buff = [0u8; MAXINTSIZE as usize];
    for i in 0..size {
        let at = if little { i } else { size - 1 - i };
        buff[at] = (value & 0xff) as u8;
        value >>= 8;
    }
    out.extend_from_slice(&buff[..size]);
}

/// `getinteger`: read `bytes` as an integer kept in 64 bits, sign-extended like the C code
/// (whose shift count for the sign mask is taken modulo 64, as x86 does).
fn getinteger(bytes: &[u8], little: bool, signed: bool) -> f64 {
    let fold = |l: u64, b: &u8| (l << 8) | *b as u64;
    let l = if little {
        bytes.iter().rev().fold(0, fold)
    } else {
        bytes.iter().fold(0, fold)
    };
    if !signed {
        return l as f64;
    }
    let shift = (bytes.len() as u32).wrapping_mul(8).wrapping_sub(1) & 63;
    let mask = u64::MAX << shift;
    let l = if l & mask != 0 { l | mask } else { l };
    l as i64 as f64
}

/// Bytes of a float or double in the requested byte order.
fn ordered<const N: usize>(le: [u8; N], little: bool) -> [u8; N] {
    let mut b = le;
    if !little {
        b.reverse();
    }
    b
}

/// `struct.pack(fmt, ...)`.
unsafe extern "C-unwind" fn pack(l: L) -> c_int {
    protect(l, |l| {
        let fmt = check_bytes(l, 1)?;
        // Like the C code, push a nil after the arguments: a missing argument right after the
        // last one reads as nil ("got nil"), later ones as "no value".
        ffi::lua_pushnil(l);
        let mut fmt = Format::new(fmt);
        let mut h = Header::new();
        let mut arg: c_int = 2;
        let mut out: Vec<u8> = Vec::new();
        let mut poll = super::api::StopPoll::new();
        while let Some(opt) = fmt.next_opt() {
            poll.tick()?;
            let mut size = fmt.optsize(opt)?;
            let toalign = gettoalign(out.len(), &h, opt, size);
            out.resize(out.len() + toalign, 0);
            match opt {
                b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                    let n = check_number(l, arg)?;
                    arg += 1;
                    putinteger(&mut out, n, h.little, size);
                }
                b'x' => out.push(0),
                b'f' => {
                    let f = check_number(l, arg)? as f32;
                    arg += 1;
                    out.extend_from_slice(&ordered(f.to_le_bytes(), h.little));
                }
                b'd' => {
                    let d = check_number(l, arg)?;
                    arg += 1;
                    out.extend_from_slice(&ordered(d.to_le_bytes(), h.little));
                }
                b'c' | b's' => {
                    let s = check_bytes(l, arg)?;
                    arg += 1;
                    if size == 0 {
                        size = s.len();
                    }
                    if s.len() < size {
                        // The library reports the already advanced argument number.
                        return Err(arg_error(l, arg, "string too short"));
                    }
                    out.extend_from_slice(&s[..size]);
                    if opt == b's' {
                        out.push(0);
                    }
                }
                _ => controloptions(l, opt, &mut fmt, &mut h)?,
            }
        }
        push_bytes(l, &out);
        Ok(1)
    })
}

/// `struct.unpack(fmt, data [, pos])`: the values, then the position after the last one.
unsafe extern "C-unwind" fn unpack(l: L) -> c_int {
    protect(l, |l| {
        let fmt = check_bytes(l, 1)?;
        let data = check_bytes(l, 2)?;
        let ld = data.len();
        // size_t in C: a negative offset wraps to a huge one (and fails later).
        let mut pos = opt_integer(l, 3, 1)? as usize;
        if pos == 0 {
            return Err(arg_error(l, 3, "offset must be 1 or greater"));
        }
        pos -= 1;
        let mut fmt = Format::new(fmt);
        let mut h = Header::new();
        let mut n: c_int = 0;
        let too_short = |l: L| arg_error(l, 2, "data string too short");
        let mut poll = super::api::StopPoll::new();
        while let Some(opt) = fmt.next_opt() {
            poll.tick()?;
            let mut size = fmt.optsize(opt)?;
            pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
            if !(size <= ld && pos <= ld - size) {
                return Err(too_short(l));
            }
            if ffi::lua_checkstack(l, 2) == 0 {
                // The results are dropped anyway; popping them leaves room to build the message.
                ffi::lua_pop(l, n);
                return Err(Raise::error("stack overflow (too many results)"));
            }
            match opt {
                b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                    let signed = opt.is_ascii_lowercase();
                    ffi::lua_pushnumber(l, getinteger(&data[pos..pos + size], h.little, signed));
                    n += 1;
                }
                b'x' => {}
                b'f' => {
                    let mut b = [0u8; 4];
                    b.copy_from_slice(&data[pos..pos + 4]);
                    let f = f32::from_le_bytes(ordered(b, h.little));
                    ffi::lua_pushnumber(l, f as f64);
                    n += 1;
                }
                b'd' => {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&data[pos..pos + 8]);
                    ffi::lua_pushnumber(l, f64::from_le_bytes(ordered(b, h.little)));
                    n += 1;
                }
                b'c' => {
                    if size == 0 {
                        // c0: the length is the previous result (a number or numeric string).
                        if n == 0 || ffi::lua_isnumber(l, -1) == 0 {
                            return Err(Raise::error("format 'c0' needs a previous size"));
                        }
                        size = c_cast_u64(ffi::lua_tonumber(l, -1)) as usize;
                        ffi::lua_pop(l, 1);
                        n -= 1;
                        if !(size <= ld && pos <= ld - size) {
                            return Err(too_short(l));
                        }
                    }
                    push_bytes(l, &data[pos..pos + size]);
                    n += 1;
                }
                b's' => {
                    let Some(e) = data[pos..].iter().position(|&b| b == 0) else {
                        return Err(Raise::error("unfinished string in data"));
                    };
                    push_bytes(l, &data[pos..pos + e]);
                    size = e + 1;
                    n += 1;
                }
                _ => controloptions(l, opt, &mut fmt, &mut h)?,
            }
            pos = pos.wrapping_add(size);
        }
        ffi::lua_pushinteger(l, pos.wrapping_add(1) as ffi::lua_Integer);
        Ok(n + 1)
    })
}

/// `struct.size(fmt)`: the size of a format whose items all have a fixed size.
unsafe extern "C-unwind" fn size(l: L) -> c_int {
    protect(l, |l| -> RawResult {
        let fmt = check_bytes(l, 1)?;
        let mut fmt = Format::new(fmt);
        let mut h = Header::new();
        let mut pos: usize = 0;
        let mut poll = super::api::StopPoll::new();
        while let Some(opt) = fmt.next_opt() {
            poll.tick()?;
            let size = fmt.optsize(opt)?;
            pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
            if opt == b's' {
                return Err(arg_error(l, 1, "option 's' has no fixed size"));
            } else if opt == b'c' && size == 0 {
                return Err(arg_error(l, 1, "option 'c0' has no fixed size"));
            }
            // Unknown letters and digits are silently skipped here (as in the C code).
            if !opt.is_ascii_alphanumeric() {
                controloptions(l, opt, &mut fmt, &mut h)?;
            }
            pos = pos.wrapping_add(size);
        }
        ffi::lua_pushinteger(l, pos as ffi::lua_Integer);
        Ok(1)
    })
}

/// Push the library table (like `luaopen_struct`).
///
/// # Safety
/// `l` must be a valid Lua state with room for a few stack slots.
pub unsafe fn open(l: L) {
    ffi::lua_newtable(l);
    set_function(l, c"pack", pack);
    set_function(l, c"unpack", unpack);
    set_function(l, c"size", size);
}

#[cfg(test)]
mod tests {

    type Case = (&'static str, Result<&'static str, &'static str>);

    fn check(cases: &[Case]) {
        super::super::testutil::check(&[("struct", super::open)], cases);
    }

    /// Every example of section 9 of the reference (results as `d(v)` prints them).
    #[test]
    fn reference_examples() {
        check(&[
            ("return struct.pack('>I2', 258)", Ok("\"\u{1}\u{2}\"")),
            ("local s = struct.pack('<i4', -2) return {string.byte(s, 1, -1)}", Ok("{1=number:254,2=number:255,3=number:255,4=number:255}")),
            ("local s = struct.pack('b B h H l L', -1, 255, -2, 65535, -3, 4) return #s", Ok("number:22")),
            ("local s = struct.pack('!4 b i4', 1, 2) return #s", Ok("number:8")),
            ("return {struct.unpack('>I2', string.char(1, 2))}", Ok("{1=number:258,2=number:3}")),
            ("return {struct.unpack('<i4', string.char(0xfe, 0xff, 0xff, 0xff))}", Ok("{1=number:-2,2=number:5}")),
            ("return {struct.unpack('s', 'abc' .. string.char(0) .. 'rest')}", Ok("{1=\"abc\",2=number:5}")),
            ("return {struct.unpack('c2', 'abcdef', 3)}", Ok("{1=\"cd\",2=number:5}")),
            ("return struct.pack('s', 'ab')", Ok("\"ab\\000\"")),
            ("return {struct.unpack('d', struct.pack('d', 1.5))}", Ok("{1=number:1.5,2=number:9}")),
            ("return tostring(struct.unpack('f', struct.pack('f', 0.1)))", Ok("\"0.10000000149012\"")),
            ("return struct.size('i4 d c10')", Ok("number:22")),
            ("return struct.size('!8 b d')", Ok("number:16")),
            ("return {string.byte(struct.pack('i17', 1), 1, -1)}", Ok("{10=number:0,11=number:0,12=number:0,13=number:0,14=number:0,15=number:0,16=number:0,17=number:0,1=number:1,2=number:0,3=number:0,4=number:0,5=number:0,6=number:0,7=number:0,8=number:0,9=number:0}")),
            ("return tostring(struct.unpack('>I8', string.rep(string.char(255), 8)))", Ok("\"1.844674407371e+19\"")),
            ("local s = struct.pack('>I4', 2^32 + 5) return {string.byte(s, 1, -1)}", Ok("{1=number:0,2=number:0,3=number:0,4=number:5}")),
            ("local s = struct.pack('>i4', -1.9) return {string.byte(s, 1, -1)}", Ok("{1=number:255,2=number:255,3=number:255,4=number:255}")),
            ("return {struct.unpack('b', string.char(200))}", Ok("{1=number:-56,2=number:2}")),
            ("local s = struct.pack('c5', 'ab') return {string.byte(s, 1, -1)}", Err("user_script:1: bad argument #3 to 'pack' (string too short)")),
            ("return {struct.unpack('c3 c0', 'abc' .. string.char(5) .. 'hello')}", Err("user_script:1: format 'c0' needs a previous size")),
            ("return struct.size('s')", Err("user_script:1: bad argument #1 to 'size' (option 's' has no fixed size)")),
            ("return struct.pack('i4')", Err("user_script:1: bad argument #2 to 'pack' (number expected, got nil)")),
            ("return struct.pack('z', 1)", Err("user_script:1: bad argument #1 to 'pack' (invalid format option 'z')")),
            ("return {struct.unpack('i4', 'ab')}", Err("user_script:1: bad argument #2 to 'unpack' (data string too short)")),
        ]);
    }

    /// Edge cases, each checked on a real Redis 7.0.15.
    #[test]
    fn real_server_edge_cases() {
        check(&[
            ("return {struct.unpack('x', 'abc', 10)}", Err("user_script:1: bad argument #2 to 'unpack' (data string too short)")),
            ("return {struct.unpack('', 'abc', -1)}", Ok("{1=number:-1}")),
            ("return {struct.unpack('x', 'abc', 4)}", Err("user_script:1: bad argument #2 to 'unpack' (data string too short)")),
            ("return {struct.unpack('b', 'abc', 0.5)}", Err("user_script:1: bad argument #3 to 'unpack' (offset must be 1 or greater)")),
            ("return {struct.unpack('b', 'abc', 0)}", Err("user_script:1: bad argument #3 to 'unpack' (offset must be 1 or greater)")),
            ("return {string.byte(struct.pack('>i16', -1), 1, -1)}", Ok("{10=number:255,11=number:255,12=number:255,13=number:255,14=number:255,15=number:255,16=number:255,1=number:0,2=number:0,3=number:0,4=number:0,5=number:0,6=number:0,7=number:0,8=number:0,9=number:255}")),
            ("return {string.byte(struct.pack('<i9', -1), 1, -1)}", Ok("{1=number:255,2=number:255,3=number:255,4=number:255,5=number:255,6=number:255,7=number:255,8=number:255,9=number:0}")),
            ("return tostring(struct.unpack('<i9', string.rep(string.char(255), 9)))", Ok("\"-1\"")),
            ("return tostring(struct.unpack('>i12', string.rep(string.char(0), 4) .. string.char(0, 0, 0, 0, 0, 0, 1, 0)))", Ok("\"256\"")),
            ("return tostring(struct.unpack('>i12', string.rep(string.char(0), 4) .. string.char(0, 0, 0, 0, 128, 0, 0, 0)))", Ok("\"-2147483648\"")),
            ("return {struct.unpack('i0', 'abc')}", Ok("{1=number:0,2=number:1}")),
            ("return {string.byte(struct.pack('>I8', 0/0), 1, -1)}", Ok("{1=number:128,2=number:0,3=number:0,4=number:0,5=number:0,6=number:0,7=number:0,8=number:0}")),
            ("return {string.byte(struct.pack('>I8', 2^64), 1, -1)}", Ok("{1=number:0,2=number:0,3=number:0,4=number:0,5=number:0,6=number:0,7=number:0,8=number:0}")),
            ("return {string.byte(struct.pack('>I8', 2^63), 1, -1)}", Ok("{1=number:128,2=number:0,3=number:0,4=number:0,5=number:0,6=number:0,7=number:0,8=number:0}")),
            ("return {string.byte(struct.pack('>I8', 1/0), 1, -1)}", Ok("{1=number:0,2=number:0,3=number:0,4=number:0,5=number:0,6=number:0,7=number:0,8=number:0}")),
            ("return {string.byte(struct.pack('>I8', -1/0), 1, -1)}", Ok("{1=number:128,2=number:0,3=number:0,4=number:0,5=number:0,6=number:0,7=number:0,8=number:0}")),
            ("return {string.byte(struct.pack('>i8', -1e30), 1, -1)}", Ok("{1=number:128,2=number:0,3=number:0,4=number:0,5=number:0,6=number:0,7=number:0,8=number:0}")),
            ("return {string.byte(struct.pack('<I8', 2^63 + 2^11), 1, -1)}", Ok("{1=number:0,2=number:8,3=number:0,4=number:0,5=number:0,6=number:0,7=number:0,8=number:128}")),
            ("return struct.size('z')", Ok("number:0")),
            ("return struct.size('b5')", Ok("number:1")),
            ("return struct.pack('b5', 1)", Err("user_script:1: bad argument #1 to 'pack' (invalid format option '5')")),
            ("return struct.size('c0')", Err("user_script:1: bad argument #1 to 'size' (option 'c0' has no fixed size)")),
            ("return struct.size('!3')", Err("user_script:1: alignment 3 is not a power of 2")),
            ("return struct.pack('!0 i', 1)", Err("user_script:1: alignment 0 is not a power of 2")),
            ("return struct.size('i99999999999')", Err("user_script:1: integral size overflow")),
            ("return struct.size('c2147483648')", Err("user_script:1: integral size overflow")),
            ("return struct.size('i33')", Err("user_script:1: integral size 33 is larger than limit of 32")),
            ("return struct.pack('I33', 1)", Err("user_script:1: integral size 33 is larger than limit of 32")),
            ("return struct.size('!')", Ok("number:0")),
            ("return struct.size('! d')", Ok("number:8")),
            ("return struct.size('!2 d')", Ok("number:8")),
            ("return struct.size('!4 b h b i b l b d')", Ok("number:36")),
            ("return struct.size('ic')", Ok("number:5")),
            ("return struct.size('T L l')", Ok("number:24")),
            ("return struct.size('c2147483647 c2147483647')", Ok("number:4294967294")),
            ("return struct.size('!4 b i3')", Ok("number:6")),
            ("return {struct.unpack('c3 c0', 'nanabc')}", Err("user_script:1: bad argument #2 to 'unpack' (data string too short)")),
            ("return {struct.unpack('c3 c0', 'inf')}", Ok("{1=\"\",2=number:4}")),
            ("return {struct.unpack('c1 c0', '2hello')}", Ok("{1=\"he\",2=number:4}")),
            ("return {struct.unpack('c4 c0', '-1.0abc')}", Err("user_script:1: bad argument #2 to 'unpack' (data string too short)")),
            ("return {struct.unpack('c3 c0', '1.9abc')}", Ok("{1=\"a\",2=number:5}")),
            ("return {struct.unpack('c3 c0', '0x2abc')}", Ok("{1=\"ab\",2=number:6}")),
            ("return {struct.unpack('b x c0', string.char(2, 0) .. 'abc')}", Ok("{1=\"ab\",2=number:5}")),
            ("return {struct.unpack('c0', 'abc')}", Err("user_script:1: format 'c0' needs a previous size")),
            ("return {struct.unpack('x c0', 'abc')}", Err("user_script:1: format 'c0' needs a previous size")),
            ("return {struct.unpack('s', 'abc')}", Err("user_script:1: unfinished string in data")),
            ("return {struct.unpack('s s', 'a' .. string.char(0) .. string.char(0))}", Ok("{1=\"a\",2=\"\",3=number:4}")),
            ("local ok, e = pcall(struct.unpack, string.rep('b', 9000), string.rep('a', 9000)) return e", Ok("\"stack overflow (too many results)\"")),
            ("return struct.pack('\\200', 1)", Err("user_script:1: bad argument #1 to 'pack' (invalid format option '\u{fffd}')")),
            ("return struct.size('\\200')", Err("user_script:1: bad argument #1 to 'size' (invalid format option '\u{fffd}')")),
            ("return struct.pack('b\\0z', 65)", Ok("\"A\"")),
            ("return {struct.unpack('>!4 b i4', struct.pack('>!4 b i4', 1, 2))}", Ok("{1=number:1,2=number:2,3=number:9}")),
            ("return struct.pack('!4 b i4', 1)", Err("user_script:1: bad argument #3 to 'pack' (number expected, got nil)")),
            ("return {string.byte(struct.pack('!4 b i4', 1, 2, 3), 1, -1)}", Ok("{1=number:1,2=number:0,3=number:0,4=number:0,5=number:2,6=number:0,7=number:0,8=number:0}")),
            ("return struct.pack()", Err("user_script:1: bad argument #1 to 'pack' (string expected, got no value)")),
            ("return struct.unpack('b')", Err("user_script:1: bad argument #2 to 'unpack' (string expected, got no value)")),
            ("return struct.unpack('b', 'a', 'x')", Err("user_script:1: bad argument #3 to 'unpack' (number expected, got string)")),
            ("return struct.pack('s', {})", Err("user_script:1: bad argument #2 to 'pack' (string expected, got table)")),
            ("return struct.pack('c0', 12)", Ok("\"12\"")),
            ("return {string.byte(struct.pack('>d', '1.5'), 1, -1)}", Ok("{1=number:63,2=number:248,3=number:0,4=number:0,5=number:0,6=number:0,7=number:0,8=number:0}")),
            ("return struct.pack('i4 i4 i4', 1)", Err("user_script:1: bad argument #3 to 'pack' (number expected, got nil)")),
            ("return struct.pack('i4', 'x')", Err("user_script:1: bad argument #2 to 'pack' (number expected, got string)")),
            ("return {struct.unpack('>I4', 'abcd', 0)}", Err("user_script:1: bad argument #3 to 'unpack' (offset must be 1 or greater)")),
            ("return {struct.unpack('>s', 'hi')}", Err("user_script:1: unfinished string in data")),
            ("return {struct.unpack('c0', 'abcdef', 1)}", Err("user_script:1: format 'c0' needs a previous size")),
            ("return {string.byte(struct.pack('>h <h', 1, 1), 1, -1)}", Ok("{1=number:0,2=number:1,3=number:1,4=number:0}")),
            ("return {string.byte(struct.pack('>f', 1), 1, -1)}", Ok("{1=number:63,2=number:128,3=number:0,4=number:0}")),
            ("return {string.byte(struct.pack('<f', -2.5), 1, -1)}", Ok("{1=number:0,2=number:0,3=number:32,4=number:192}")),
            ("return {struct.unpack('>f <d', struct.pack('>f <d', 0.5, -3.25))}", Ok("{1=number:0.5,2=number:-3.25,3=number:13}")),
            ("return {struct.unpack('!8 b d', struct.pack('!8 b d', 7, 2.5))}", Ok("{1=number:7,2=number:2.5,3=number:17}")),
            ("return {struct.unpack('!4 b d', struct.pack('!4 b d', 7, 2.5))}", Ok("{1=number:7,2=number:2.5,3=number:13}")),
            ("return {string.byte(struct.pack('x b x', 1), 1, -1)}", Ok("{1=number:0,2=number:1,3=number:0}")),
            ("return {struct.unpack('>H >h', string.char(255, 255, 255, 255))}", Ok("{1=number:65535,2=number:-1,3=number:5}")),
            ("return {struct.unpack('<I3 >i3', string.char(1, 2, 3, 255, 255, 254))}", Ok("{1=number:197121,2=number:-2,3=number:7}")),
            ("return {struct.unpack('>l >L', string.rep(string.char(255), 16))}", Ok("{1=number:-1,2=number:1.844674407371e+19,3=number:17}")),
            ("return tostring(struct.unpack('>I8', string.char(0x40, 0, 0, 0, 0, 0, 0, 1)))", Ok("\"4.6116860184274e+18\"")),
            ("return tostring(struct.unpack('>i8', string.char(0x80, 0, 0, 0, 0, 0, 0, 0)))", Ok("\"-9.2233720368548e+18\"")),
            ("return {string.byte(struct.pack('>T', 2^40 + 3), 1, -1)}", Ok("{1=number:0,2=number:0,3=number:1,4=number:0,5=number:0,6=number:0,7=number:0,8=number:3}")),
            ("return {string.byte(struct.pack('>i2', 70000), 1, -1)}", Ok("{1=number:17,2=number:112}")),
            ("return {string.byte(struct.pack('b', 300.7), 1, -1)}", Ok("{1=number:44}")),
            ("return {string.byte(struct.pack('>i3', -2^23 - 1), 1, -1)}", Ok("{1=number:127,2=number:255,3=number:255}")),
            ("return {struct.unpack('c2 c2', 'abcdef', 2)}", Ok("{1=\"bc\",2=\"de\",3=number:6}")),
            ("return {struct.unpack('b', 'abc', 3)}", Ok("{1=number:99,2=number:4}")),
            ("return {struct.unpack('b', 'abc', 4)}", Err("user_script:1: bad argument #2 to 'unpack' (data string too short)")),
            ("return {struct.unpack('', '', 1)}", Ok("{1=number:1}")),
            ("return {struct.unpack('b', 'abc', '2')}", Ok("{1=number:98,2=number:3}")),
            ("return struct.pack('c', 'xyz')", Ok("\"x\"")),
            ("return struct.pack('c0 s', 123, 4.5)", Ok("\"1234.5\\000\"")),
            ("return struct.pack('c3', 'ab')", Err("user_script:1: bad argument #3 to 'pack' (string too short)")),
            ("return struct.pack('b c3', 1, 'ab')", Err("user_script:1: bad argument #4 to 'pack' (string too short)")),
            ("return struct.pack(12, 1)", Err("user_script:1: bad argument #1 to 'pack' (invalid format option '1')")),
            ("return struct.size(12)", Ok("number:0")),
            ("return struct.size('')", Ok("number:0")),
            ("return struct.pack('')", Ok("\"\"")),
            ("return struct.size()", Err("user_script:1: bad argument #1 to 'size' (string expected, got no value)")),
            ("return struct.unpack()", Err("user_script:1: bad argument #1 to 'unpack' (string expected, got no value)")),
            ("return {struct.unpack(' < > ! ', '')}", Ok("{1=number:1}")),
            ("return struct.pack('c99999999999', 'a')", Err("user_script:1: integral size overflow")),
            ("return {struct.unpack('i4', 'abcd', -2^70)}", Err("user_script:1: bad argument #2 to 'unpack' (data string too short)")),
            ("local t = {struct.unpack('b b b', 'abc')} return #t", Ok("number:4")),
            ("return {struct.unpack('!2 b h', string.char(1, 0, 2, 0))}", Ok("{1=number:1,2=number:2,3=number:5}")),
            ("return {struct.unpack('!2 b i3', string.char(1, 0, 2, 0, 0))}", Ok("{1=number:1,2=number:2,3=number:6}")),
            ("return struct.pack('!16 b', 1)", Ok("\"\u{1}\"")),
            ("return struct.size('!16 b i16')", Ok("number:32")),
            ("return struct.size('!32 b i32')", Ok("number:64")),
            ("return struct.size('!64 b i32')", Ok("number:64")),
            ("return {struct.unpack('c1 c0', '0abc')}", Ok("{1=\"\",2=number:2}")),
            ("return {struct.unpack('h c0', string.char(3, 0) .. 'abcd')}", Ok("{1=\"abc\",2=number:6}")),
            ("return {struct.unpack('h c0', string.char(9, 0) .. 'abcd')}", Err("user_script:1: bad argument #2 to 'unpack' (data string too short)")),
            ("return struct:size()", Err("user_script:1: calling 'size' on bad self (string expected, got table)")),
            ("local p = struct.pack return p('z')", Err("user_script:1: bad argument #1 to 'p' (invalid format option 'z')")),
            ("return {struct.unpack('>f', struct.pack('>f', 1e300))}", Ok("{1=number:inf,2=number:5}")),
            ("return tostring(struct.unpack('<f', struct.pack('<f', -1e-50)))", Ok("\"-0\"")),
            ("return {string.byte(struct.pack('>i4', '0x10'), 1, -1)}", Ok("{1=number:0,2=number:0,3=number:0,4=number:16}")),
        ]);
    }
}
