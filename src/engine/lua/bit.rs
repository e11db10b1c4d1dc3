//! The `bit` library as Redis bundles it (LuaBitOp 1.0.2, `deps/lua/src/lua_bit.c`, with the
//! CVE-2024-31449 fix in `tohex`), written in Rust over the raw C API.
//!
//! Every result is a signed 32-bit number; every argument goes through `tobit`.

use super::raw::{protect, push_bytes, set_function, type_error, Raise, L};
use mlua::ffi;
use std::ffi::c_int;

/// `tobit` on a double: add 2^52+2^51 so the integer part lands in the low mantissa bits, then
/// take the low 32 bits. This rounds half to even and reduces modulo 2^32.
fn tobit(n: f64) -> u32 {
    (n + 6_755_399_441_055_744.0).to_bits() as u32
}

/// `barg`: argument `idx` as bits. Numbers and numeric strings are accepted.
unsafe fn barg(l: L, idx: c_int) -> Result<u32, Raise> {
    let b = tobit(ffi::lua_tonumber(l, idx));
    // As in the C code, only a zero result is checked (a non-number always converts to 0).
    if b == 0 && ffi::lua_isnumber(l, idx) == 0 {
        return Err(type_error(l, idx, "number"));
    }
    Ok(b)
}

/// Push a result as the signed 32-bit number it stands for.
unsafe fn bret(l: L, b: u32) -> Result<c_int, Raise> {
    ffi::lua_pushnumber(l, b as i32 as f64);
    Ok(1)
}

unsafe extern "C-unwind" fn bit_tobit(l: L) -> c_int {
    protect(l, |l| bret(l, barg(l, 1)?))
}

unsafe extern "C-unwind" fn bit_bnot(l: L) -> c_int {
    protect(l, |l| bret(l, !barg(l, 1)?))
}

/// band/bor/bxor: the first argument, then the others from the last one down (the C order,
/// which decides which bad argument is reported).
unsafe fn fold(l: L, op: fn(u32, u32) -> u32) -> Result<c_int, Raise> {
    let mut b = barg(l, 1)?;
    let mut i = ffi::lua_gettop(l);
    while i > 1 {
        b = op(b, barg(l, i)?);
        i -= 1;
    }
    bret(l, b)
}

unsafe extern "C-unwind" fn bit_band(l: L) -> c_int {
    protect(l, |l| fold(l, |a, b| a & b))
}

unsafe extern "C-unwind" fn bit_bor(l: L) -> c_int {
    protect(l, |l| fold(l, |a, b| a | b))
}

unsafe extern "C-unwind" fn bit_bxor(l: L) -> c_int {
    protect(l, |l| fold(l, |a, b| a ^ b))
}

/// Shifts and rotations: the count is the low 5 bits of the second argument.
unsafe fn shift(l: L, op: fn(u32, u32) -> u32) -> Result<c_int, Raise> {
    let b = barg(l, 1)?;
    let n = barg(l, 2)? & 31;
    bret(l, op(b, n))
}

unsafe extern "C-unwind" fn bit_lshift(l: L) -> c_int {
    protect(l, |l| shift(l, |b, n| b << n))
}

unsafe extern "C-unwind" fn bit_rshift(l: L) -> c_int {
    protect(l, |l| shift(l, |b, n| b >> n))
}

unsafe extern "C-unwind" fn bit_arshift(l: L) -> c_int {
    protect(l, |l| shift(l, |b, n| ((b as i32) >> n) as u32))
}

unsafe extern "C-unwind" fn bit_rol(l: L) -> c_int {
    protect(l, |l| shift(l, u32::rotate_left))
}

unsafe extern "C-unwind" fn bit_ror(l: L) -> c_int {
    protect(l, |l| shift(l, u32::rotate_right))
}

unsafe extern "C-unwind" fn bit_bswap(l: L) -> c_int {
    protect(l, |l| bret(l, barg(l, 1)?.swap_bytes()))
}

/// `tohex(x [, n])`: `n` digits (default 8, at most 8), upper case when `n` is negative.
unsafe extern "C-unwind" fn bit_tohex(l: L) -> c_int {
    protect(l, |l| {
        let mut b = barg(l, 1)?;
        // Only an absent argument means 8: an explicit nil is a bad argument.
        let mut n = if ffi::lua_type(l, 2) == ffi::LUA_TNONE {
            8
        } else {
            barg(l, 2)? as i32
        };
        // The CVE-2024-31449 fix: INT32_MIN cannot be negated, treat it as INT32_MIN+1.
        if n == i32::MIN {
            n = i32::MIN + 1;
        }
        let digits: &[u8; 16] = if n < 0 {
            n = -n;
            b"0123456789ABCDEF"
        } else {
            b"0123456789abcdef"
        };
        let n = n.min(8) as usize;
        let mut buf = [0u8; 8];
        for i in (0..n).rev() {
            buf[i] = digits[(b & 15) as usize];
            b >>= 4;
        }
        push_bytes(l, &buf[..n]);
        Ok(1)
    })
}

/// Push the library table (like `luaopen_bit`).
///
/// # Safety
/// `l` must be a valid Lua state with room for a few stack slots.
pub unsafe fn open(l: L) {
    ffi::lua_newtable(l);
    set_function(l, c"tobit", bit_tobit);
    set_function(l, c"bnot", bit_bnot);
    set_function(l, c"band", bit_band);
    set_function(l, c"bor", bit_bor);
    set_function(l, c"bxor", bit_bxor);
    set_function(l, c"lshift", bit_lshift);
    set_function(l, c"rshift", bit_rshift);
    set_function(l, c"arshift", bit_arshift);
    set_function(l, c"rol", bit_rol);
    set_function(l, c"ror", bit_ror);
    set_function(l, c"bswap", bit_bswap);
    set_function(l, c"tohex", bit_tohex);
}

#[cfg(test)]
mod tests {

    type Case = (&'static str, Result<&'static str, &'static str>);

    fn check(cases: &[Case]) {
        super::super::testutil::check(&[("bit", super::open)], cases);
    }

    /// Every example of section 9 of the reference (results as `d(v)` prints them).
    #[test]
    fn reference_examples() {
        check(&[
            ("return {bit.band(0xff, 0x0f), bit.bor(1, 2, 4), bit.bxor(5, 3), bit.bnot(0)}", Ok("{1=number:15,2=number:7,3=number:6,4=number:-1}")),
            ("return {bit.lshift(1, 31), bit.lshift(1, 32), bit.lshift(1, 33), bit.rshift(-1, 28), bit.arshift(-256, 4)}", Ok("{1=number:-2147483648,2=number:1,3=number:2,4=number:15,5=number:-16}")),
            ("return {bit.rol(0x12345678, 8), bit.ror(0x12345678, 8), bit.bswap(0x12345678)}", Ok("{1=number:878082066,2=number:2014458966,3=number:2018915346}")),
            ("return {bit.tobit(0xffffffff), bit.tobit(2^32 + 5), bit.tobit(-1), bit.tobit(1.5), bit.tobit(2.5), bit.tobit(-1.5)}", Ok("{1=number:-1,2=number:5,3=number:-1,4=number:2,5=number:2,6=number:-2}")),
            ("return {bit.tohex(255), bit.tohex(-1), bit.tohex(255, 2), bit.tohex(255, -4), bit.tohex(0x12345678, 4), bit.tohex(1, 10)}", Ok("{1=\"000000ff\",2=\"ffffffff\",3=\"ff\",4=\"00FF\",5=\"5678\",6=\"00000001\"}")),
            ("return {bit.tohex(255, 0), bit.tohex(255, 1), bit.tohex(-1, -8), bit.tohex(2^32+255), bit.tohex(1.7)}", Ok("{1=\"\",2=\"f\",3=\"FFFFFFFF\",4=\"000000ff\",5=\"00000002\"}")),
            ("return {bit.arshift(-1, 40), bit.rshift(1, 32), bit.rol(1, 33), bit.lshift(3, 1.9)}", Ok("{1=number:-1,2=number:1,3=number:2,4=number:12}")),
            ("return bit.bor(2^53)", Ok("number:0")),
            ("return bit.bnot(0x7fffffff)", Ok("number:-2147483648")),
            ("return bit.tohex(1, -2147483648)", Ok("\"00000001\"")),
            ("return bit.band()", Err("user_script:1: bad argument #1 to 'band' (number expected, got no value)")),
        ]);
    }

    /// Edge cases, each checked on a real Redis 7.0.15.
    #[test]
    fn real_server_edge_cases() {
        check(&[
            ("return bit.band('12', 4)", Ok("number:4")),
            ("return bit.band(1, 'x', {})", Err("user_script:1: bad argument #3 to 'band' (number expected, got table)")),
            ("return bit.band(1, 2, nil)", Err("user_script:1: bad argument #3 to 'band' (number expected, got nil)")),
            ("return bit.bor(nil, 1)", Err("user_script:1: bad argument #1 to 'bor' (number expected, got nil)")),
            ("return bit.bxor(1, 2, 3, 4, 5, 6, 7)", Ok("number:0")),
            ("return bit.tohex(1, nil)", Err("user_script:1: bad argument #2 to 'tohex' (number expected, got nil)")),
            ("return bit.tohex('255', '-3')", Ok("\"0FF\"")),
            ("return bit.tohex(65535, -2147483648)", Ok("\"0000FFFF\"")),
            ("return bit.tohex(-2147483648)", Ok("\"80000000\"")),
            ("return bit.tohex(0xabcdef, 2^32 - 6)", Ok("\"ABCDEF\"")),
            ("return bit.tohex(0xabcdef, -7)", Ok("\"0ABCDEF\"")),
            ("return bit.tohex()", Err("user_script:1: bad argument #1 to 'tohex' (number expected, got no value)")),
            ("return bit.tohex(true)", Err("user_script:1: bad argument #1 to 'tohex' (number expected, got boolean)")),
            ("return bit.tobit('0x10')", Ok("number:16")),
            ("return bit.tobit(' 12 ')", Ok("number:12")),
            ("return bit.tobit('1e3')", Ok("number:1000")),
            ("return bit.tobit(2^52)", Ok("number:0")),
            ("return bit.tobit(2^53 + 3)", Ok("number:2")),
            ("return bit.tobit(2^51 + 0.5)", Ok("number:0")),
            ("return bit.tobit(-2^31 - 0.5)", Ok("number:-2147483648")),
            ("return bit.tobit(2^31)", Ok("number:-2147483648")),
            ("return bit.tobit(1/0)", Ok("number:0")),
            ("return bit.tobit(-1/0)", Ok("number:0")),
            ("return bit.tobit(0/0)", Ok("number:0")),
            ("return bit.tobit('abc')", Err("user_script:1: bad argument #1 to 'tobit' (number expected, got string)")),
            ("return bit.tobit('')", Err("user_script:1: bad argument #1 to 'tobit' (number expected, got string)")),
            ("return bit.tobit()", Err("user_script:1: bad argument #1 to 'tobit' (number expected, got no value)")),
            ("return bit.tobit({})", Err("user_script:1: bad argument #1 to 'tobit' (number expected, got table)")),
            ("return bit.tobit(3.5)", Ok("number:4")),
            ("return bit.tobit(-0.5)", Ok("number:0")),
            ("return bit.tobit(0.5000001)", Ok("number:1")),
            ("return bit.tobit(4294967295.5)", Ok("number:0")),
            ("return bit.tobit(1e300)", Ok("number:-2013235812")),
            ("return bit.bnot('1e3')", Ok("number:-1001")),
            ("return bit.lshift(1)", Err("user_script:1: bad argument #2 to 'lshift' (number expected, got no value)")),
            ("return bit.lshift('x', 1)", Err("user_script:1: bad argument #1 to 'lshift' (number expected, got string)")),
            ("return bit.rshift(1, 'x')", Err("user_script:1: bad argument #2 to 'rshift' (number expected, got string)")),
            ("return {bit.lshift(1, -1), bit.rshift(-1, -1), bit.arshift(-2^31, 31), bit.rshift(-2^31, 31)}", Ok("{1=number:-2147483648,2=number:1,3=number:-1,4=number:1}")),
            ("return {bit.rol(1, 0), bit.ror(1, 0), bit.rol(-1, 4), bit.ror(1, 1), bit.ror(0x80000001, 33)}", Ok("{1=number:1,2=number:1,3=number:-1,4=number:-2147483648,5=number:-1073741824}")),
            ("return {bit.bswap(-1), bit.bswap(1), bit.bswap(0xff00), bit.bswap(2^31)}", Ok("{1=number:-1,2=number:16777216,3=number:16711680,4=number:128}")),
            ("return {bit.band(-1, 2^32 + 7), bit.bor(0.4, 0.6), bit.bxor(-1, 1)}", Ok("{1=number:7,2=number:1,3=number:-2}")),
            ("return {bit.arshift(0x7fffffff, 30), bit.arshift(-5, 1), bit.rshift(-5, 1), bit.lshift(0xff, 28)}", Ok("{1=number:1,2=number:-3,3=number:2147483645,4=number:-268435456}")),
            ("local ok, e = pcall(bit.band, 1, 'x') return e", Ok("\"bad argument #2 to '?' (number expected, got string)\"")),
            ("local ok, e = pcall(bit.tohex, {}) return e", Ok("\"bad argument #1 to '?' (number expected, got table)\"")),
            ("return bit.tohex(-1, -2)", Ok("\"FF\"")),
            ("return bit.tohex(0, 8)", Ok("\"00000000\"")),
            ("return bit.tohex('0x7f', '2')", Ok("\"7f\"")),
            ("return bit:tohex()", Err("user_script:1: calling 'tohex' on bad self (number expected, got table)")),
            ("local t = {} for i = 1, 20 do t[i] = bit.tohex(i * 2^27, -i) end return t", Ok("{10=\"50000000\",11=\"58000000\",12=\"60000000\",13=\"68000000\",14=\"70000000\",15=\"78000000\",16=\"80000000\",17=\"88000000\",18=\"90000000\",19=\"98000000\",1=\"0\",20=\"A0000000\",2=\"00\",3=\"000\",4=\"0000\",5=\"00000\",6=\"000000\",7=\"8000000\",8=\"40000000\",9=\"48000000\"}")),
            ("local t = {} for i = -40, 40 do t[#t+1] = bit.arshift(-123456789, i) + bit.rol(987654321, i) end return t", Ok("{10=number:1913580247,11=number:-375214210,12=number:-704132122,13=number:-1385116095,14=number:1536309182,15=number:-1216561895,16=number:1864737026,17=number:-564046484,18=number:-1127369586,19=number:2040589815,1=number:-1321542048,20=number:-213606820,21=number:-427123216,22=number:-854201220,23=number:-1708379833,24=number:878218935,25=number:1756443522,26=number:-782077426,27=number:-1564153438,28=number:1166661127,29=number:-1961644688,2=number:1651883213,30=number:371678098,31=number:743356284,32=number:1486712613,33=number:-1321542048,34=number:1651883213,35=number:-991200864,36=number:-1982401724,37=number:330163850,38=number:660327701,39=number:1320655403,3=number:-991200864,40=number:-1653656489,41=number:864197532,42=number:1913580247,43=number:-375214210,44=number:-704132122,45=number:-1385116095,46=number:1536309182,47=number:-1216561895,48=number:1864737026,49=number:-564046484,4=number:-1982401724,50=number:-1127369586,51=number:2040589815,52=number:-213606820,53=number:-427123216,54=number:-854201220,55=number:-1708379833,56=number:878218935,57=number:1756443522,58=number:-782077426,59=number:-1564153438,5=number:330163850,60=number:1166661127,61=number:-1961644688,62=number:371678098,63=number:743356284,64=number:1486712613,65=number:-1321542048,66=number:1651883213,67=number:-991200864,68=number:-1982401724,69=number:330163850,6=number:660327701,70=number:660327701,71=number:1320655403,72=number:-1653656489,73=number:864197532,74=number:1913580247,75=number:-375214210,76=number:-704132122,77=number:-1385116095,78=number:1536309182,79=number:-1216561895,7=number:1320655403,80=number:1864737026,81=number:-564046484,8=number:-1653656489,9=number:864197532}")),
        ]);
    }
}
