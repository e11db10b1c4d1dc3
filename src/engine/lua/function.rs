//! The Lua state of Redis Functions, set up as Redis 7.0 `function_lua.c` sets up its engine: a VM
//! of its own (the EVAL environment: same libraries, same `redis` API, same protections) whose
//! globals are an empty read-only table reading through a metatable. While a library loads, the
//! metatable reads from the *library API* — only `redis.register_function`, `redis.log`, the log
//! levels and the version, every other name an error — and otherwise from the real globals. Library
//! code therefore cannot call `redis.call` (or even `string.format`) at load time, and functions
//! get KEYS and ARGV as their two arguments, never as globals.

use super::raw::{self, Raise, L};
use super::vm::{self, ScriptError, Vm};
use crate::engine::script::ScriptFlags;
use mlua::ffi;
use std::cell::Cell;
use std::ffi::c_int;
use std::time::{Duration, Instant};

/// Redis's `LOAD_TIMEOUT_MS`: a library's top-level code may run this long.
pub const LOAD_TIMEOUT: Duration = Duration::from_millis(500);

/// A function a library registered while it loaded.
#[derive(Debug, Clone)]
pub struct Registered {
    pub name: String,
    pub description: Option<Vec<u8>>,
    pub flags: ScriptFlags,
    /// Registry slot of the callback in the function VM.
    pub function_ref: c_int,
}

/// What `redis.register_function` adds to while a library loads.
struct LoadCtx {
    registered: Vec<Registered>,
    started: Instant,
    /// The API table's name in the profile (`redis`, Valkey's `server`), for the error texts.
    api_table: &'static str,
    /// Valkey: names are checked after the code ran; the first bad one's error.
    names_after_load: bool,
    deferred_error: Option<&'static str>,
}

/// Valkey's text for a bad function name (Redis 7's says "Library names").
const BAD_FUNCTION_NAME_TEXT: &str = "Function names can only contain letters, numbers, or underscores(_) and must be at least one character long";

thread_local! {
    /// The load in progress (null outside `FunctionVm::load`).
    static LOADING: Cell<*mut LoadCtx> = const { Cell::new(std::ptr::null_mut()) };
}

pub struct FunctionVm {
    vm: Vm,
    /// Registry slots: the globals' metatable, the library API, the real globals (as scripts see them).
    meta_ref: c_int,
    library_api_ref: c_int,
    run_globals_ref: c_int,
}

impl FunctionVm {
    pub fn new(memory_limit: usize) -> FunctionVm {
        FunctionVm::with_profile(memory_limit, crate::engine::profile::DEFAULT)
    }

    /// A function VM with the environment of a server profile (Valkey's `server` names, ...).
    pub fn with_profile(
        memory_limit: usize,
        profile: &'static crate::engine::profile::Profile,
    ) -> FunctionVm {
        let vm = Vm::with_profile(memory_limit, profile);
        let l = vm.state();
        unsafe {
            // The real globals, as EVAL scripts see them (a read-only proxy).
            ffi::lua_pushvalue(l, ffi::LUA_GLOBALSINDEX);
            let run_globals = ffi::lua_gettop(l);
            ffi::lua_getfield(l, run_globals, c"redis".as_ptr());
            let redis = ffi::lua_gettop(l);
            // Functions run with the common API only: EVAL alone has replicate_commands,
            // breakpoint and debug (eval.c registers them, function_lua.c does not).
            ffi::lua_pushvalue(l, redis);
            raw::see_through_proxy(l, -1);
            for name in [c"replicate_commands", c"breakpoint", c"debug"] {
                ffi::lua_pushnil(l);
                ffi::lua_setfield(l, -2, name.as_ptr());
            }
            ffi::lua_pop(l, 1);
            // The library API's `redis`: register_function, log, the levels, the version.
            ffi::lua_newtable(l);
            let api_redis = ffi::lua_gettop(l);
            raw::set_function(l, c"register_function", register_function);
            for name in [
                c"log",
                c"LOG_DEBUG",
                c"LOG_VERBOSE",
                c"LOG_NOTICE",
                c"LOG_WARNING",
                c"REDIS_VERSION",
                c"REDIS_VERSION_NUM",
            ] {
                ffi::lua_getfield(l, redis, name.as_ptr());
                ffi::lua_setfield(l, api_redis, name.as_ptr());
            }
            set_error_metatable(l, api_redis);
            vm::make_proxy(l, api_redis);
            let api_redis_proxy = ffi::lua_gettop(l);
            ffi::lua_newtable(l);
            let api = ffi::lua_gettop(l);
            ffi::lua_pushvalue(l, api_redis_proxy);
            ffi::lua_setfield(l, api, c"redis".as_ptr());
            set_error_metatable(l, api);
            vm::make_proxy(l, api);
            let library_api_ref = ffi::luaL_ref(l, ffi::LUA_REGISTRYINDEX);
            // The new globals: empty, read-only, reading through their metatable.
            ffi::lua_newtable(l);
            let globals = ffi::lua_gettop(l);
            ffi::lua_newtable(l);
            let meta = ffi::lua_gettop(l);
            ffi::lua_pushvalue(l, run_globals);
            ffi::lua_setfield(l, meta, c"__index".as_ptr());
            ffi::lua_pushcfunction(l, vm::readonly_newindex);
            ffi::lua_setfield(l, meta, c"__newindex".as_ptr());
            ffi::lua_pushvalue(l, meta);
            ffi::lua_setmetatable(l, globals);
            let meta_ref = ffi::luaL_ref(l, ffi::LUA_REGISTRYINDEX);
            ffi::lua_replace(l, ffi::LUA_GLOBALSINDEX);
            ffi::lua_pushvalue(l, run_globals);
            let run_globals_ref = ffi::luaL_ref(l, ffi::LUA_REGISTRYINDEX);
            ffi::lua_settop(l, 0);
            FunctionVm {
                vm,
                meta_ref,
                library_api_ref,
                run_globals_ref,
            }
        }
    }

    pub fn vm(&mut self) -> &mut Vm {
        &mut self.vm
    }

    /// Point the globals' metatable at the library API (`true`) or the real globals.
    unsafe fn read_globals_from(&self, library_api: bool) {
        let l = self.vm.state();
        let source = if library_api {
            self.library_api_ref
        } else {
            self.run_globals_ref
        };
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, self.meta_ref as ffi::lua_Integer);
        ffi::lua_pushstring(l, c"__index".as_ptr());
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, source as ffi::lua_Integer);
        ffi::lua_rawset(l, -3);
        ffi::lua_pop(l, 1);
    }

    /// Run a library's code (the text after its shebang line, which stays as an empty line 1) as
    /// `luaEngineCreate` does; `Err` is the text after `ERR ` of Redis's reply.
    pub fn load(&mut self, code: &[u8]) -> Result<Vec<Registered>, String> {
        let l = self.vm.state();
        unsafe {
            ffi::lua_settop(l, 0);
            self.read_globals_from(true);
            let result = self.load_with_api(code);
            self.read_globals_from(false);
            ffi::lua_sethook(
                l,
                Some(super::api::stop_hook),
                ffi::LUA_MASKCOUNT,
                vm::HOOK_EVERY,
            );
            ffi::lua_settop(l, 0);
            result
        }
    }

    unsafe fn load_with_api(&mut self, code: &[u8]) -> Result<Vec<Registered>, String> {
        let l = self.vm.state();
        if vm::load_buffer(l, code, c"@user_function".as_ptr()) != 0 {
            let msg =
                String::from_utf8_lossy(raw::to_bytes(l, -1).unwrap_or_default()).into_owned();
            return Err(format!("Error compiling function: {msg}"));
        }
        let mut ctx = LoadCtx {
            registered: Vec::new(),
            started: Instant::now(),
            api_table: self.vm.profile().api_table,
            names_after_load: self.vm.profile().function_names_checked_after_load,
            deferred_error: None,
        };
        LOADING.with(|c| c.set(&mut ctx));
        ffi::lua_sethook(l, Some(load_hook), ffi::LUA_MASKCOUNT, 100_000);
        let status = ffi::lua_pcall(l, 0, 0, 0);
        LOADING.with(|c| c.set(std::ptr::null_mut()));
        if status == 0 && ctx.deferred_error.is_none() {
            return Ok(ctx.registered);
        }
        for f in &ctx.registered {
            ffi::luaL_unref(l, ffi::LUA_REGISTRYINDEX, f.function_ref);
        }
        if let (0, Some(error)) = (status, ctx.deferred_error) {
            return Err(error.to_string());
        }
        Err(format!(
            "Error registering functions: {}",
            String::from_utf8_lossy(&error_message(l))
        ))
    }

    /// Forget registered functions (a library replaced, deleted or flushed).
    pub fn release(&mut self, function_ref: c_int) {
        unsafe { ffi::luaL_unref(self.vm.state(), ffi::LUA_REGISTRYINDEX, function_ref) };
    }

    pub fn call(
        &mut self,
        function_ref: c_int,
        keys: &[Vec<u8>],
        argv: &[Vec<u8>],
    ) -> Result<(), ScriptError> {
        self.vm.call_function(function_ref, keys, argv)
    }
}

/// `luaExtractErrorInformation`'s message for the error on top of the stack (a string gets `ERR `).
unsafe fn error_message(l: L) -> Vec<u8> {
    let mut msg = None;
    if ffi::lua_isstring(l, -1) != 0 {
        let mut m = b"ERR ".to_vec();
        m.extend_from_slice(raw::to_bytes(l, -1).unwrap_or_default());
        msg = Some(m);
    } else if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
        ffi::lua_getfield(l, -1, c"err".as_ptr());
        if ffi::lua_isstring(l, -1) != 0 {
            msg = raw::to_bytes(l, -1).map(<[u8]>::to_vec);
        }
        ffi::lua_pop(l, 1);
    }
    // A C string: Redis's reply ends at the first NUL.
    let mut msg = msg.unwrap_or_else(|| b"(null)".to_vec());
    if let Some(nul) = msg.iter().position(|&b| b == 0) {
        msg.truncate(nul);
    }
    msg
}

/// `luaSetErrorMetatable`: reading a missing name of the table at `idx` raises Redis's error.
unsafe fn set_error_metatable(l: L, idx: c_int) {
    ffi::lua_newtable(l);
    ffi::lua_pushcfunction(l, vm::missing_global);
    ffi::lua_setfield(l, -2, c"__index".as_ptr());
    ffi::lua_setmetatable(l, idx);
}

/// `luaEngineLoadHook`: a library whose top-level code runs past the load timeout is stopped.
unsafe extern "C-unwind" fn load_hook(l: L, _ar: *mut ffi::lua_Debug) {
    let ctx = LOADING.with(|c| c.get());
    if ctx.is_null() || (*ctx).started.elapsed() <= LOAD_TIMEOUT {
        return;
    }
    // Every line from now on raises again, should the code catch the error.
    ffi::lua_sethook(l, Some(load_hook), ffi::LUA_MASKLINE, 0);
    push_error_table(l, b"FUNCTION LOAD timeout");
    ffi::lua_error(l);
}

/// `luaPushError`: `{err = 'ERR ' .. msg}`.
unsafe fn push_error_table(l: L, msg: &[u8]) {
    ffi::lua_newtable(l);
    let mut text = b"ERR ".to_vec();
    text.extend_from_slice(msg);
    raw::push_bytes(l, &text);
    ffi::lua_setfield(l, -2, c"err".as_ptr());
}

fn raise(l: L, msg: &str) -> Raise {
    // The texts name `redis.register_function`; Valkey names its table `server`.
    let loading = LOADING.with(|c| c.get());
    let api_table = if loading.is_null() {
        super::api::current_profile().api_table
    } else {
        unsafe { (*loading).api_table }
    };
    let msg = msg.replace(
        "redis.register_function",
        &format!("{api_table}.register_function"),
    );
    unsafe { push_error_table(l, msg.as_bytes()) };
    Raise::OnStack
}

/// `functionsVerifyName`: letters, digits and `_`, at least one.
pub fn is_valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_')
}

pub const BAD_NAME_TEXT: &str = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

/// `lua_isstring` and the text (a number is converted in place, as Lua does).
unsafe fn string_arg(l: L, idx: c_int) -> Option<Vec<u8>> {
    if ffi::lua_isstring(l, idx) == 0 {
        return None;
    }
    raw::to_bytes(l, idx).map(<[u8]>::to_vec)
}

/// `redis.register_function(name, callback)` or `redis.register_function{function_name=...,
/// callback=..., flags={...}, description=...}` (`luaRegisterFunction`).
unsafe extern "C-unwind" fn register_function(l: L) -> c_int {
    raw::protect(l, |l| {
        let ctx = LOADING.with(|c| c.get());
        if ctx.is_null() {
            return Err(raise(
                l,
                "redis.register_function can only be called on FUNCTION LOAD command",
            ));
        }
        let argc = ffi::lua_gettop(l);
        if !(1..=2).contains(&argc) {
            return Err(raise(
                l,
                "wrong number of arguments to redis.register_function",
            ));
        }
        let (name, description, function_ref, flags) = if argc == 1 {
            read_named_args(l)?
        } else {
            let Some(name) = string_arg(l, 1) else {
                return Err(raise(
                    l,
                    "first argument to redis.register_function must be a string",
                ));
            };
            if ffi::lua_type(l, 2) != ffi::LUA_TFUNCTION {
                return Err(raise(
                    l,
                    "second argument to redis.register_function must be a function",
                ));
            }
            let function_ref = ffi::luaL_ref(l, ffi::LUA_REGISTRYINDEX);
            (name, None, function_ref, ScriptFlags::default())
        };
        // `functionLibCreateFunction`.
        let registered = &mut (*ctx).registered;
        let error = if !is_valid_name(&name) {
            Some(BAD_NAME_TEXT)
        } else if registered.iter().any(|f| f.name.as_bytes() == name) {
            Some("Function already exists in the library")
        } else {
            None
        };
        if let Some(error) = error {
            ffi::luaL_unref(l, ffi::LUA_REGISTRYINDEX, function_ref);
            if (*ctx).names_after_load {
                // Valkey: the library runs on; the first bad name fails the load afterwards.
                let deferred = if error == BAD_NAME_TEXT {
                    BAD_FUNCTION_NAME_TEXT
                } else {
                    error
                };
                (*ctx).deferred_error.get_or_insert(deferred);
                return Ok(0);
            }
            return Err(raise(l, error));
        }
        registered.push(Registered {
            name: String::from_utf8_lossy(&name).into_owned(),
            description,
            flags: ScriptFlags {
                shebang: true,
                ..flags
            },
            function_ref,
        });
        Ok(0)
    })
}

type NamedArgs = (Vec<u8>, Option<Vec<u8>>, c_int, ScriptFlags);

/// `luaRegisterFunctionReadNamedArgs`: the table at index 1, in Lua's iteration order.
unsafe fn read_named_args(l: L) -> Result<NamedArgs, Raise> {
    if ffi::lua_type(l, 1) != ffi::LUA_TTABLE {
        return Err(raise(l, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."));
    }
    let mut name = None;
    let mut description = None;
    let mut callback: Option<c_int> = None;
    let mut flags = ScriptFlags::default();
    let fail = |l: L, callback: Option<c_int>, msg: &str| {
        if let Some(r) = callback {
            ffi::luaL_unref(l, ffi::LUA_REGISTRYINDEX, r);
        }
        raise(l, msg)
    };
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, 1) != 0 {
        let Some(key) = string_arg(l, -2) else {
            return Err(fail(
                l,
                callback,
                "named argument key given to redis.register_function is not a string",
            ));
        };
        // A C string compared with strcasecmp: up to the first NUL.
        let key = key.split(|&b| b == 0).next().unwrap_or_default();
        let key = key.to_ascii_lowercase();
        match key.as_slice() {
            b"function_name" => {
                match string_arg(l, -1) {
                    Some(v) => name = Some(v),
                    None => return Err(fail(
                        l,
                        callback,
                        "function_name argument given to redis.register_function must be a string",
                    )),
                }
            }
            b"description" => {
                match string_arg(l, -1) {
                    Some(v) => description = Some(v),
                    None => return Err(fail(
                        l,
                        callback,
                        "description argument given to redis.register_function must be a string",
                    )),
                }
            }
            b"callback" => {
                if ffi::lua_type(l, -1) != ffi::LUA_TFUNCTION {
                    return Err(fail(
                        l,
                        callback,
                        "callback argument given to redis.register_function must be a function",
                    ));
                }
                // luaL_ref pops the value: the key stays for lua_next.
                callback = Some(ffi::luaL_ref(l, ffi::LUA_REGISTRYINDEX));
                continue;
            }
            b"flags" => {
                if ffi::lua_type(l, -1) != ffi::LUA_TTABLE {
                    return Err(fail(l, callback, "flags argument to redis.register_function must be a table representing function flags"));
                }
                match read_flags(l) {
                    Some(f) => flags = f,
                    None => return Err(fail(l, callback, "unknown flag given")),
                }
            }
            _ => {
                return Err(fail(
                    l,
                    callback,
                    "unknown argument given to redis.register_function",
                ))
            }
        }
        ffi::lua_pop(l, 1);
    }
    let Some(name) = name else {
        return Err(fail(
            l,
            callback,
            "redis.register_function must get a function name argument",
        ));
    };
    let Some(callback) = callback else {
        return Err(raise(
            l,
            "redis.register_function must get a callback argument",
        ));
    };
    Ok((name, description, callback, flags))
}

/// `luaRegisterFunctionReadFlags`: the array part of the table on top, up to the first nil.
unsafe fn read_flags(l: L) -> Option<ScriptFlags> {
    let mut flags = ScriptFlags::default();
    let mut j = 1;
    loop {
        ffi::lua_pushnumber(l, j as ffi::lua_Number);
        j += 1;
        ffi::lua_gettable(l, -2);
        if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
            ffi::lua_pop(l, 1);
            return Some(flags);
        }
        let flag = string_arg(l, -1);
        ffi::lua_pop(l, 1);
        let flag = flag?;
        let flag = flag.split(|&b| b == 0).next().unwrap_or_default();
        match flag.to_ascii_lowercase().as_slice() {
            b"no-writes" => flags.no_writes = true,
            b"allow-oom" => flags.allow_oom = true,
            b"allow-stale" => flags.allow_stale = true,
            b"no-cluster" => flags.no_cluster = true,
            b"allow-cross-slot-keys" => flags.allow_cross_slot_keys = true,
            _ => return None,
        }
    }
}
