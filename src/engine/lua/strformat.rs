//! `string.format` that the busy threshold can stop.
//!
//! Lua 5.1's `str_format` adds each `%s` argument of 100 bytes or more with `luaL_addvalue`; its
//! buffer then concatenates the pieces (copying tens of MiB) and interns the result, which
//! `memcmp`s it against the equal string of the previous loop iteration: no allocation, so no
//! stop check, and a loop of such calls stopped up to 20 ms late. When a format is only literal
//! bytes, `%%` and plain `%s` of string arguments and the result is big, this builds the same bytes
//! itself, checking for a stop between chunks; every other call goes to the original C function,
//! called directly (not through `lua_call`) so its errors still name 'format' and nothing changes.

use super::api;
use super::raw::{self, Raise, RawResult, L};
use mlua::ffi;
use std::ffi::{c_char, c_int, CStr};

/// Results smaller than this are quick to build: the original makes them.
const BUILD_ITSELF_FROM: usize = 1 << 20;
/// Bytes copied between two stop checks (well under a millisecond).
const COPY_CHUNK: usize = 1 << 20;
/// lstrlib formats a `%s` argument shorter than this with `sprintf`, which stops at a NUL byte;
/// a longer one is added whole.
const SPRINTF_BELOW: usize = 100;

/// Replace `format` in the string library table on top of the stack; the original C function is
/// the new one's upvalue.
pub unsafe fn install(l: L, name: &CStr) {
    ffi::lua_getfield(l, -1, name.as_ptr());
    ffi::lua_pushcclosure(l, string_format, 1);
    ffi::lua_setfield(l, -2, name.as_ptr());
}

unsafe extern "C-unwind" fn string_format(l: L) -> c_int {
    if let Some(total) = size_if_plain(l) {
        return raw::protect(l, |l| build(l, total));
    }
    match ffi::lua_tocfunction(l, ffi::lua_upvalueindex(1)) {
        // Same state, same stack, same call frame: exactly lstrlib's behaviour and error texts.
        Some(original) => original(l),
        None => raw::protect(l, |_| {
            Err(Raise::plain(
                "evalbench internal error (string.format lost its original)",
            ))
        }),
    }
}

/// Lua string at `idx` (the caller checked its type): borrowed from the stack slot.
unsafe fn bytes_at<'a>(l: L, idx: c_int) -> &'a [u8] {
    raw::to_bytes(l, idx).unwrap_or_default()
}

/// What a `%s` argument adds to the result, as lstrlib adds it.
fn piece(arg: &[u8]) -> &[u8] {
    if arg.len() >= SPRINTF_BELOW {
        return arg;
    }
    let end = arg.iter().position(|&b| b == 0).unwrap_or(arg.len());
    &arg[..end]
}

/// One step of a plain format: literal bytes, or the argument at a stack index.
enum Item<'a> {
    Literal(&'a [u8]),
    Arg(c_int),
}

/// Walk a plain format (literal bytes, `%%`, `%s`); None at anything else.
fn items(format: &[u8], mut each: impl FnMut(Item) -> Option<()>) -> Option<()> {
    let mut arg = 1;
    let mut i = 0;
    while i < format.len() {
        let run = format[i..]
            .iter()
            .position(|&b| b == b'%')
            .unwrap_or(format.len() - i);
        if run > 0 {
            each(Item::Literal(&format[i..i + run]))?;
            i += run;
            continue;
        }
        match format.get(i + 1) {
            Some(b'%') => each(Item::Literal(b"%"))?,
            Some(b's') => {
                arg += 1;
                each(Item::Arg(arg))?;
            }
            // Flags, width, precision, other conversions, a trailing '%': the original's job.
            _ => return None,
        }
        i += 2;
    }
    Some(())
}

/// The result's size when this call is one to build here: a string format of literal bytes, `%%`
/// and `%s`, each `%s` with a string argument present, and a result of at least
/// [`BUILD_ITSELF_FROM`] bytes.
unsafe fn size_if_plain(l: L) -> Option<usize> {
    if ffi::lua_type(l, 1) != ffi::LUA_TSTRING {
        return None;
    }
    let format = bytes_at(l, 1);
    let top = ffi::lua_gettop(l);
    let mut total = 0usize;
    items(format, |item| {
        // Saturating: past what memory holds, the allocation fails as the original's would.
        total = total.saturating_add(match item {
            Item::Literal(bytes) => bytes.len(),
            // A number would be converted in place by the original: leave it to it.
            Item::Arg(idx) if idx <= top && ffi::lua_type(l, idx) == ffi::LUA_TSTRING => {
                piece(bytes_at(l, idx)).len()
            }
            Item::Arg(_) => return None,
        });
        Some(())
    })?;
    (total >= BUILD_ITSELF_FROM).then_some(total)
}

/// Build the result of a plain format in a userdata of its exact size (Lua's allocator counts it
/// and checks for a stop while the pages come in), copying with a stop check every
/// [`COPY_CHUNK`] bytes, then intern it.
unsafe fn build(l: L, total: usize) -> RawResult {
    let out = ffi::lua_newuserdata(l, total) as *mut u8;
    let format = bytes_at(l, 1);
    let mut filled = 0usize;
    let mut since_check = 0usize;
    let mut stopped = false;
    items(format, |item| {
        let bytes = match item {
            Item::Literal(bytes) => bytes,
            Item::Arg(idx) => piece(bytes_at(l, idx)),
        };
        for chunk in bytes.chunks(COPY_CHUNK) {
            std::ptr::copy_nonoverlapping(chunk.as_ptr(), out.add(filled), chunk.len());
            filled += chunk.len();
            since_check += chunk.len();
            if since_check >= COPY_CHUNK {
                since_check = 0;
                if api::stop_requested() {
                    stopped = true;
                    return None;
                }
            }
        }
        Some(())
    });
    if stopped {
        return Err(Raise::Stop);
    }
    debug_assert_eq!(filled, total);
    ffi::lua_pushlstring(l, out as *const c_char, total);
    ffi::lua_remove(l, -2);
    Ok(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_pieces_stop_at_a_nul_and_long_ones_are_whole() {
        assert_eq!(piece(b"ab\0cd"), b"ab");
        let long = [b"x\0".as_slice(); 50].concat();
        assert_eq!(piece(&long), long.as_slice());
    }

    #[test]
    fn only_literals_percent_and_plain_s_are_plain() {
        let walk = |f: &[u8]| {
            let mut seen = Vec::new();
            items(f, |item| {
                seen.push(match item {
                    Item::Literal(b) => String::from_utf8_lossy(b).into_owned(),
                    Item::Arg(i) => format!("#{i}"),
                });
                Some(())
            })
            .map(|()| seen)
        };
        assert_eq!(
            walk(b"a%%b%s\0%s"),
            Some(
                vec!["a", "%", "b", "#2", "\0", "#3"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            )
        );
        assert_eq!(walk(b"%5s"), None);
        assert_eq!(walk(b"%d"), None);
        assert_eq!(walk(b"abc%"), None);
    }
}
