//! A thin layer over the Lua 5.1 C API (`mlua::ffi`) for the functions evalbench gives scripts.
//!
//! Why raw C functions instead of mlua's safe callbacks: a script must see exactly what Redis's C
//! functions produce. mlua raises errors from Rust callbacks as userdata, while Redis raises plain
//! strings (with `luaL_error`'s `user_script:N: ` position prefix) or `{err=...}` tables; `pcall` in a
//! script exposes the difference. Raw functions are also about twice as fast per `redis.call`.
//!
//! Rule for every raw function: do the work in a closure passed to [`protect`], which returns the
//! number of results or a [`Raise`]. `protect` raises the Lua error only after the closure returned,
//! so no Rust value with a destructor is alive when `lua_error` jumps.

use mlua::ffi;
pub use mlua::ffi::lua_State;
use std::ffi::{c_int, CStr};
use std::panic::AssertUnwindSafe;

pub type L = *mut lua_State;

/// How a raw function fails.
#[derive(Debug)]
pub enum Raise {
    /// Like `luaL_error`: the message gets the calling Lua code's position (`user_script:1: `).
    Error(Vec<u8>),
    /// Like `lua_error` with a string: the exact message, no position.
    Plain(Vec<u8>),
    /// The error value is already on top of the Lua stack.
    OnStack,
    /// The script has to stop (busy threshold or cancel): the stop's error table.
    Stop,
}

impl Raise {
    pub fn error(msg: impl Into<Vec<u8>>) -> Raise {
        Raise::Error(msg.into())
    }
    pub fn plain(msg: impl Into<Vec<u8>>) -> Raise {
        Raise::Plain(msg.into())
    }
}

pub type RawResult = Result<c_int, Raise>;

/// Run the body of a raw C function; turns a `Raise` (or a panic) into a Lua error.
///
/// # Safety
/// `l` must be the state the C function was called with.
pub unsafe fn protect(l: L, body: impl FnOnce(L) -> RawResult) -> c_int {
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| body(l)));
    let raise = match outcome {
        Ok(Ok(n)) => return n,
        Ok(Err(raise)) => raise,
        Err(_) => {
            Raise::Plain(b"evalbench internal error (a Rust panic in a library function)".to_vec())
        }
    };
    push_raise(l, raise);
    ffi::lua_error(l)
}

/// Push the error value a `Raise` stands for (all Rust values are dropped on return).
unsafe fn push_raise(l: L, raise: Raise) {
    match raise {
        Raise::Error(msg) => {
            ffi::luaL_where(l, 1);
            push_bytes(l, &msg);
            ffi::lua_concat(l, 2);
        }
        Raise::Plain(msg) => push_bytes(l, &msg),
        Raise::OnStack => {}
        Raise::Stop => super::api::push_stop(l),
    }
}

/// `luaL_argerror`: `bad argument #n to 'name' (extramsg)`, with the name Lua reports for the call.
pub unsafe fn arg_error(l: L, narg: c_int, extramsg: &str) -> Raise {
    let mut narg = narg;
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    if ffi::lua_getstack(l, 0, &mut ar) == 0 {
        return Raise::error(format!("bad argument #{narg} ({extramsg})"));
    }
    ffi::lua_getinfo(l, c"n".as_ptr(), &mut ar);
    let namewhat = cstr(ar.namewhat);
    let name = if ar.name.is_null() {
        "?".to_string()
    } else {
        cstr(ar.name)
    };
    if namewhat == "method" {
        narg -= 1;
        if narg == 0 {
            return Raise::error(format!("calling '{name}' on bad self ({extramsg})"));
        }
    }
    Raise::error(format!("bad argument #{narg} to '{name}' ({extramsg})"))
}

/// `luaL_typerror`: `bad argument #n to 'f' (number expected, got nil)`.
pub unsafe fn type_error(l: L, narg: c_int, expected: &str) -> Raise {
    let got = type_name(l, narg);
    arg_error(l, narg, &format!("{expected} expected, got {got}"))
}

fn cstr(p: *const std::ffi::c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// `luaL_typename`: "nil", "number", ..., "no value" for an absent argument.
pub unsafe fn type_name(l: L, idx: c_int) -> &'static str {
    match ffi::lua_type(l, idx) {
        ffi::LUA_TNONE => "no value",
        ffi::LUA_TNIL => "nil",
        ffi::LUA_TBOOLEAN => "boolean",
        ffi::LUA_TLIGHTUSERDATA => "userdata",
        ffi::LUA_TNUMBER => "number",
        ffi::LUA_TSTRING => "string",
        ffi::LUA_TTABLE => "table",
        ffi::LUA_TFUNCTION => "function",
        ffi::LUA_TUSERDATA => "userdata",
        ffi::LUA_TTHREAD => "thread",
        _ => "?",
    }
}

/// `luaL_checknumber`.
pub unsafe fn check_number(l: L, narg: c_int) -> Result<f64, Raise> {
    let d = ffi::lua_tonumber(l, narg);
    if d == 0.0 && ffi::lua_isnumber(l, narg) == 0 {
        return Err(type_error(l, narg, "number"));
    }
    Ok(d)
}

/// `luaL_optnumber`.
pub unsafe fn opt_number(l: L, narg: c_int, default: f64) -> Result<f64, Raise> {
    if ffi::lua_type(l, narg) <= ffi::LUA_TNIL {
        Ok(default)
    } else {
        check_number(l, narg)
    }
}

/// `luaL_checkinteger` (`lua_Integer` is `ptrdiff_t`: a C cast of the double, x86 semantics).
pub unsafe fn check_integer(l: L, narg: c_int) -> Result<i64, Raise> {
    let d = check_number(l, narg)?;
    Ok(c_cast_i64(d))
}

/// `luaL_optinteger`.
pub unsafe fn opt_integer(l: L, narg: c_int, default: i64) -> Result<i64, Raise> {
    if ffi::lua_type(l, narg) <= ffi::LUA_TNIL {
        Ok(default)
    } else {
        check_integer(l, narg)
    }
}

/// `luaL_checkint`: `(int)luaL_checkinteger`.
pub unsafe fn check_int(l: L, narg: c_int) -> Result<i32, Raise> {
    Ok(check_integer(l, narg)? as i32)
}

/// `luaL_optint`.
pub unsafe fn opt_int(l: L, narg: c_int, default: i32) -> Result<i32, Raise> {
    Ok(opt_integer(l, narg, default as i64)? as i32)
}

/// `luaL_checklstring`: a string or a number (converted in place, as Lua does).
/// The slice lives as long as the value stays on the stack.
pub unsafe fn check_bytes<'a>(l: L, narg: c_int) -> Result<&'a [u8], Raise> {
    to_bytes(l, narg).ok_or_else(|| type_error(l, narg, "string"))
}

/// `luaL_optlstring`.
pub unsafe fn opt_bytes(l: L, narg: c_int, default: &[u8]) -> Result<&[u8], Raise> {
    if ffi::lua_type(l, narg) <= ffi::LUA_TNIL {
        Ok(default)
    } else {
        check_bytes(l, narg)
    }
}

/// `lua_tolstring`: string or number (converted in place), else None.
pub unsafe fn to_bytes<'a>(l: L, idx: c_int) -> Option<&'a [u8]> {
    let mut len = 0usize;
    let p = ffi::lua_tolstring(l, idx, &mut len);
    if p.is_null() {
        None
    } else {
        Some(std::slice::from_raw_parts(p as *const u8, len))
    }
}

/// Push a binary-safe string.
pub unsafe fn push_bytes(l: L, bytes: &[u8]) {
    ffi::lua_pushlstring(l, bytes.as_ptr() as *const _, bytes.len());
}

/// `luaL_where(L, level)` as bytes (`user_script:3: ` or empty).
pub unsafe fn where_prefix(l: L, level: c_int) -> Vec<u8> {
    ffi::luaL_where(l, level);
    let out = to_bytes(l, -1).unwrap_or_default().to_vec();
    ffi::lua_pop(l, 1);
    out
}

/// Set `t[name] = f` for the table on top of the stack.
pub unsafe fn set_function(l: L, name: &CStr, f: ffi::lua_CFunction) {
    ffi::lua_pushcfunction(l, f);
    ffi::lua_setfield(l, -2, name.as_ptr());
}

/// Registry key of the read-only registry (protected proxy -> real table), see `vm.rs`.
pub static READONLY_REGISTRY_KEY: u8 = 0;

/// Libraries that walk tables (cjson, cmsgpack) see a protected library table as Redis does, with
/// its contents: replace the read-only proxy at `idx` by the real table.
pub unsafe fn see_through_proxy(l: L, idx: c_int) {
    if ffi::lua_type(l, idx) != ffi::LUA_TTABLE {
        return;
    }
    let idx = if idx < 0 {
        ffi::lua_gettop(l) + idx + 1
    } else {
        idx
    };
    if ffi::lua_checkstack(l, 2) == 0 {
        return;
    }
    ffi::lua_pushlightuserdata(
        l,
        &READONLY_REGISTRY_KEY as *const u8 as *mut std::ffi::c_void,
    );
    ffi::lua_rawget(l, ffi::LUA_REGISTRYINDEX);
    if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
        ffi::lua_pushvalue(l, idx);
        ffi::lua_rawget(l, -2);
        if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
            ffi::lua_replace(l, idx);
        } else {
            ffi::lua_pop(l, 1);
        }
    }
    ffi::lua_pop(l, 1);
}

/// The C cast `(long long)d` as x86-64 computes it: truncation toward zero, and
/// INT64_MIN for NaN, infinities and anything out of range.
pub fn c_cast_i64(d: f64) -> i64 {
    if d.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_cast_matches_x86() {
        assert_eq!(c_cast_i64(3.99), 3);
        assert_eq!(c_cast_i64(-3.99), -3);
        assert_eq!(c_cast_i64(f64::NAN), i64::MIN);
        assert_eq!(c_cast_i64(2f64.powi(63)), i64::MIN);
        assert_eq!(c_cast_i64(-(2f64.powi(63))), i64::MIN);
        assert_eq!(c_cast_i64(1e20), i64::MIN);
    }
}
