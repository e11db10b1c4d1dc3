//! Lua's string hash as each server patches it (`luaS_newlstr` in deps/lua/src/lstring.c). The
//! hash decides where a string key sits in a table, so `pairs()` order over string keys (RESP3
//! maps and sets built by scripts, `cjson.encode` of an object) follows it. The vendored Lua
//! (vendor/lua-src) fixes a state's hash when the state is created, from a thread-local that
//! `with_string_hash` sets around the creation.

use std::ffi::c_int;

/// Which string hash a Lua state uses (the profile's `lua_string_hash`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LuaStringHash {
    /// Stock Lua 5.1.5: a sample of at most about 32 bytes of a long string.
    Stock,
    /// Redis (every release line): the stock mix over every byte.
    EveryByte,
    /// Valkey 8.1 and later: MurmurHash3 (x86, 32 bits) seeded with the length.
    Murmur32,
}

// The values of LUA_STRHASH_* in vendor/lua-src/lua-5.1.5/lua.h.
const STOCK: c_int = 0;
const EVERY_BYTE: c_int = 1;
const MURMUR32: c_int = 2;

extern "C" {
    fn lua_setnextstrhash(mode: c_int) -> c_int;
    fn lua_strhash(l: *mut mlua::ffi::lua_State) -> c_int;
}

impl LuaStringHash {
    fn code(self) -> c_int {
        match self {
            LuaStringHash::Stock => STOCK,
            LuaStringHash::EveryByte => EVERY_BYTE,
            LuaStringHash::Murmur32 => MURMUR32,
        }
    }

    fn from_code(code: c_int) -> LuaStringHash {
        match code {
            EVERY_BYTE => LuaStringHash::EveryByte,
            MURMUR32 => LuaStringHash::Murmur32,
            _ => LuaStringHash::Stock,
        }
    }
}

/// Run `create` (which makes Lua states: `lua_newstate`, `mlua::Lua::new`) so that the states
/// it creates use `hash`; states created afterwards on this thread are as before.
pub fn with_string_hash<T>(hash: LuaStringHash, create: impl FnOnce() -> T) -> T {
    struct Restore(c_int);
    impl Drop for Restore {
        fn drop(&mut self) {
            unsafe { lua_setnextstrhash(self.0) };
        }
    }
    let _restore = Restore(unsafe { lua_setnextstrhash(hash.code()) });
    create()
}

/// The string hash a state was created with.
///
/// # Safety
/// `l` is a valid Lua state.
pub unsafe fn string_hash_of(l: *mut mlua::ffi::lua_State) -> LuaStringHash {
    LuaStringHash::from_code(lua_strhash(l))
}
