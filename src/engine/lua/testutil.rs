//! Run a Lua snippet in a bare Lua 5.1 state with some libraries, for library unit tests.
//! `eval(openers, script)` returns the script's return value serialized like the `D;` helper of
//! `shared/docs/redis-scripting.md` (`d(v)`), or the error message as `Err`.

use super::raw::{self, L};
use mlua::ffi;

const D: &str = r#"local function d(v) if type(v)=="table" then local p={} for k,x in pairs(v) do p[#p+1]=tostring(k).."="..d(x) end table.sort(p) return "{"..table.concat(p,",").."}" elseif type(v)=="string" then return string.format("%q",v) else return type(v)..":"..tostring(v) end end "#;

/// Libraries to install as globals: (global name, opener that pushes the table).
pub type Opener = (&'static str, unsafe fn(L));

/// Run `script` (chunk name `@user_script`) with the libraries installed; `return x` is serialized with `d(x)`.
pub fn eval(libs: &[Opener], script: &str) -> Result<String, String> {
    unsafe {
        let l = ffi::luaL_newstate();
        ffi::luaL_openlibs(l);
        for (name, open) in libs {
            open(l);
            let cname = std::ffi::CString::new(*name).unwrap();
            ffi::lua_setfield(l, ffi::LUA_GLOBALSINDEX, cname.as_ptr());
        }
        // The script runs as a function `f`; its first result goes through d().
        let wrapped = format!("{D} local f = ...; return d(f())");
        let chunk = script.as_bytes();
        let result = if ffi::luaL_loadbuffer(
            l,
            chunk.as_ptr() as *const _,
            chunk.len(),
            c"@user_script".as_ptr(),
        ) != 0
        {
            Err(String::from_utf8_lossy(raw::to_bytes(l, -1).unwrap_or_default()).into_owned())
        } else if ffi::luaL_loadbuffer(
            l,
            wrapped.as_ptr() as *const _,
            wrapped.len(),
            c"=wrapper".as_ptr(),
        ) != 0
        {
            Err("wrapper failed to compile".into())
        } else {
            ffi::lua_insert(l, -2);
            let status = ffi::lua_pcall(l, 1, 1, 0);
            let text =
                String::from_utf8_lossy(raw::to_bytes(l, -1).unwrap_or(b"<non-string error>"))
                    .into_owned();
            if status == 0 {
                Ok(text)
            } else {
                Err(text)
            }
        };
        ffi::lua_close(l);
        result
    }
}

/// Run each `(script, expected)` with `libs` installed: `Ok` is the `d()` text, `Err` the raw error.
pub fn check(libs: &[Opener], cases: &[(&str, Result<&str, &str>)]) {
    for (script, want) in cases {
        let got = eval(libs, script);
        assert_eq!(
            got.as_deref().map_err(|e| e.as_str()),
            *want,
            "script: {script}"
        );
    }
}
