//! The `bit` library as Redis bundles it, written in Rust over the raw C API.

use super::raw::L;

/// Push the library table (like `luaopen_bit`).
///
/// # Safety
/// `l` must be a valid Lua state with room for a few stack slots.
pub unsafe fn open(l: L) {
    mlua::ffi::lua_newtable(l);
}
