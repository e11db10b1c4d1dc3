//! The Lua 5.1 state, set up as Redis 7.0 sets up its EVAL VM: the same globals, the same
//! libraries, read-only globals and library tables, Redis's `pcall` and `math.random`, the error
//! handler, a compiled-script cache keyed by SHA1, a memory limit and a stop hook.
//!
//! Read-only tables: Redis patches Lua with a per-table read-only flag. Stock Lua cannot refuse a
//! store into an existing field of a plain table, so every protected table the script can reach is
//! an empty *proxy* whose metatable reads through to the real table (`__index`, a table, so reads
//! stay native and fast) and refuses stores (`__newindex`). `next`, `pairs`, `rawget`, `rawset`,
//! `getmetatable`, `setmetatable`, `table.insert/remove/sort` are wrapped so they see through the
//! proxies or refuse to modify them with Redis's texts.

use super::raw::{self, Raise, L};
use super::{api, bit, cjson, cmsgpack, structlib};
use crate::engine::profile::Profile;
use mlua::ffi;
use std::ffi::{c_char, c_int, c_void, CStr};

/// The Lua error text for a store into a protected table.
pub const READONLY_TEXT: &str = "Attempt to modify a readonly table";

/// How often (in VM instructions) the stop hook looks at the clock.
pub const HOOK_EVERY: c_int = 10_000;

/// Registry keys (light userdata addresses of these statics).
static REG_HANDLER: u8 = 0;
/// The interned field names the return conversion probes.
static REG_PROBES: u8 = 0;
/// metatable -> the read-only view `getmetatable` shows instead of it.
static REG_VIEWS: u8 = 0;
static REG_ERRFIELDS: u8 = 0;
static REG_GLOBALS: u8 = 0;

fn key(k: &'static u8) -> *mut c_void {
    k as *const u8 as *mut c_void
}

/// Allocation accounting for the memory limit, and the stop check of allocations.
struct AllocState {
    used: usize,
    limit: usize,
    /// Bytes the script may still grow by before the allocator next asks whether it has to stop
    /// (one clock read per `STOP_CHECK_BYTES`, never one per allocation).
    until_check: usize,
    /// A script is running under `call_script` (elsewhere a refused allocation would be a Lua panic).
    guarded: bool,
    /// The main thread, to arm the stop hook when an allocation is refused.
    main: L,
    /// Where the script was when its allocation was refused (source, line), for the kill text.
    stop_site: Option<(Vec<u8>, c_int)>,
    /// The refused allocation was made inside a C function called from Lua: its name as the
    /// caller spelled it, and the caller's line (a stop inside one C call, `api::note_stop_in_c`).
    stop_in_c: Option<(Vec<u8>, c_int)>,
    /// A block of [`FAULT_IN_CHUNK`] or more was allocated since the last purge (see [`purge_later`]).
    big_blocks: bool,
}

/// How much a script allocates between two stop checks. Time spent in one C function
/// (string.rep, table.concat, string.format, gsub, a concatenation) is mostly spent producing the
/// bytes it allocates, so this bounds how late a stop can come (64 KiB: tens of microseconds).
const STOP_CHECK_BYTES: usize = 64 << 10;
/// What the stop error and the error handler may allocate once a script is stopped.
const STOP_GRACE_BYTES: usize = 64 << 10;

// mimalloc for Lua's allocations: Redis gives its Lua jemalloc; glibc malloc made the
// allocator about a quarter of a run's instructions.
/// Where Lua's blocks come from: mimalloc, or the C library's malloc when the environment has
/// `EVALBENCH_LUA_SYSTEM_MALLOC=1` (valgrind sees malloc's blocks, not mimalloc's: see README's
/// hardening section). Chosen once per VM (two copies of the allocator, no branch in it).
trait Heap {
    unsafe fn malloc(size: usize) -> *mut c_void;
    unsafe fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void;
    unsafe fn free(ptr: *mut c_void);
}

struct Mimalloc;
impl Heap for Mimalloc {
    #[inline]
    unsafe fn malloc(size: usize) -> *mut c_void {
        libmimalloc_sys::mi_malloc(size)
    }
    #[inline]
    unsafe fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
        libmimalloc_sys::mi_realloc(ptr, size)
    }
    #[inline]
    unsafe fn free(ptr: *mut c_void) {
        libmimalloc_sys::mi_free(ptr)
    }
}

struct SystemMalloc;
impl Heap for SystemMalloc {
    unsafe fn malloc(size: usize) -> *mut c_void {
        libc::malloc(size)
    }
    unsafe fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
        libc::realloc(ptr, size)
    }
    unsafe fn free(ptr: *mut c_void) {
        libc::free(ptr)
    }
}

/// The allocator function of a new VM (see [`Heap`]).
fn lua_alloc_function() -> ffi::lua_Alloc {
    static SYSTEM: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *SYSTEM
        .get_or_init(|| std::env::var_os("EVALBENCH_LUA_SYSTEM_MALLOC").is_some_and(|v| v == "1"))
    {
        limited_alloc::<SystemMalloc>
    } else {
        limited_alloc::<Mimalloc>
    }
}

unsafe extern "C" fn limited_alloc<H: Heap>(
    ud: *mut c_void,
    ptr: *mut c_void,
    osize: usize,
    nsize: usize,
) -> *mut c_void {
    let state = &mut *(ud as *mut AllocState);
    let old = if ptr.is_null() { 0 } else { osize };
    if nsize == 0 {
        if !ptr.is_null() {
            H::free(ptr);
            state.used = state.used.saturating_sub(old);
        }
        return std::ptr::null_mut();
    }
    if nsize > old {
        let grow = nsize - old;
        // The budget is shared with the Rust side (engine/budget.rs): its last counted figure.
        if state
            .used
            .saturating_add(grow)
            .saturating_add(crate::engine::budget::cached())
            > state.limit
        {
            return std::ptr::null_mut();
        }
        if grow < state.until_check {
            state.until_check -= grow;
        } else if !allocation_may_proceed(state) {
            // Lua raises a memory error: the C function stops where it is. Lua only allows
            // growing allocations to fail, so shrinking and freeing go on.
            return std::ptr::null_mut();
        }
    }
    let p = if nsize >= FAULT_IN_CHUNK && nsize > old && state.guarded {
        match grow_in_steps::<H>(state, ptr, old, nsize) {
            Some(p) => p,
            None => return std::ptr::null_mut(),
        }
    } else {
        H::realloc(ptr, nsize)
    };
    if !p.is_null() {
        state.used = state.used - old + nsize;
    }
    p
}

/// Fresh memory is faulted in (zeroed by the kernel) in steps of this size, with a stop check
/// between steps.
const FAULT_IN_CHUNK: usize = 1 << 20;
const PAGE: usize = 4096;

/// A big growth (a 64 MiB string, a table's new array): the kernel's zeroing of its fresh pages is
/// most of the time the C function then spends (one 64 MiB block: ~90% page faults, ~6% the copy),
/// and it would happen inside one uninterruptible `memcpy`. Fault the new block in here, a MiB at a
/// time with a stop check between steps, so a stop that comes due meanwhile refuses the
/// allocation (a memory error, reported as the stop) instead of waiting for the copy. On a stop the
/// old block is left as it was, as a refused realloc must.
#[cold]
unsafe fn grow_in_steps<H: Heap>(
    state: &mut AllocState,
    ptr: *mut c_void,
    old: usize,
    nsize: usize,
) -> Option<*mut c_void> {
    state.big_blocks = true;
    let p = H::malloc(nsize) as *mut u8;
    if p.is_null() {
        return Some(p as *mut c_void);
    }
    let mut done = 0;
    while done < nsize {
        let end = (done + FAULT_IN_CHUNK).min(nsize);
        // One write per page faults it in; the contents are the caller's to fill.
        let mut at = done;
        while at < end {
            std::ptr::write_volatile(p.add(at), 0);
            at += PAGE;
        }
        done = end;
        if done < nsize && !allocation_may_proceed(state) {
            H::free(p as *mut c_void);
            return None;
        }
    }
    if !ptr.is_null() {
        std::ptr::copy_nonoverlapping(ptr as *const u8, p, old.min(nsize));
        H::free(ptr);
    }
    Some(p as *mut c_void)
}

/// Switch transparent huge pages off for the process (once, before the first VM runs).
///
/// mimalloc reserves its arena with `MADV_HUGEPAGE`, so the first write to each 2 MiB of it faults
/// in (and zeroes) a whole huge page in one step no stop check can split: measured on a 2-core VM,
/// 6 ms median and up to 53 ms per 2 MiB fault, which made most of how late the busy threshold
/// stopped `string.rep` (a small allocation touching a fresh huge page paid it too), and a
/// small allocation made 2 MiB resident. With 4 KiB pages, [`grow_in_steps`] checks the stop
/// every MiB and resident memory follows what is allocated.
fn small_pages_only() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // Fails only on kernels before 3.15: huge pages then stay as they were.
        ONCE.call_once(|| unsafe {
            libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        });
    }
}

extern "C" {
    /// The vendored Lua's stop check between the chunks of long copies and compares (lua.h).
    fn lua_setstopcheck(l: L, check: Option<unsafe extern "C" fn(L, c_int) -> c_int>);
}

extern "C" {
    // mimalloc's C API (in the library libmimalloc-sys builds; its Rust bindings need a feature).
    fn mi_option_set(option: c_int, value: std::ffi::c_long);
    fn mi_collect(force: bool);
}
/// `mi_option_purge_delay` in mimalloc 3's `mi_option_t`.
const MI_OPTION_PURGE_DELAY: c_int = 15;

/// Let mimalloc keep freed memory for 10 s instead of 1 s before giving it back to the system,
/// and give it back after each run that made big blocks ([`Vm::after_run`]).
///
/// mimalloc purges (`madvise`) all memory whose delay has expired in one go, in whichever
/// allocation comes next: after a script that freed a few hundred MiB, one such call took 41-69 ms
/// inside a running script (perf), where no stop check can split it. Purging between runs
/// keeps it out of scripts; memory freed and reused within a run is also not faulted in again.
fn purge_later() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 10_000) });
}

/// Lua's memory in use and the run's budget, from any thread of the state (for the budget checks).
pub unsafe fn memory_of(l: L) -> (usize, usize) {
    let mut ud: *mut c_void = std::ptr::null_mut();
    ffi::lua_getallocf(l, &mut ud);
    if ud.is_null() {
        return (0, usize::MAX);
    }
    let state = &*(ud as *const AllocState);
    (state.used, state.limit)
}

/// The allocator's stop check: false once the running script has to stop (then every growing
/// allocation comes back here and is refused, until the stop error is raised).
#[cold]
unsafe fn allocation_may_proceed(state: &mut AllocState) -> bool {
    if !state.guarded || !api::stop_requested() {
        state.until_check = STOP_CHECK_BYTES;
        return true;
    }
    state.until_check = 0;
    if state.stop_site.is_none() {
        let site = stop_site(state.main);
        state.stop_in_c = c_function_on_top(state.main).map(|name| (name, site.1));
        state.stop_site = Some(site);
        // If the script catches the memory error, the hook raises the stop at its next line.
        ffi::lua_sethook(
            state.main,
            Some(api::stop_hook),
            ffi::LUA_MASKLINE | ffi::LUA_MASKCOUNT,
            HOOK_EVERY,
        );
    }
    false
}

/// The name of the C function running on top of `l`'s call stack, as its caller spelled it
/// (`rep` for `string.rep(...)`); None when Lua code runs there. Reads the call stack only: no Lua
/// allocation (the allocator asks, in the middle of one).
unsafe fn c_function_on_top(l: L) -> Option<Vec<u8>> {
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    if ffi::lua_getstack(l, 0, &mut ar) == 0 || ffi::lua_getinfo(l, c"Sn".as_ptr(), &mut ar) == 0 {
        return None;
    }
    if ar.what.is_null() || CStr::from_ptr(ar.what).to_bytes() != b"C" || ar.name.is_null() {
        return None;
    }
    Some(CStr::from_ptr(ar.name).to_bytes().to_vec())
}

/// The C function a refused allocation was made in, if any (taken: asked once).
pub(crate) unsafe fn take_stop_in_c(l: L) -> Option<(Vec<u8>, c_int)> {
    let mut ud: *mut c_void = std::ptr::null_mut();
    ffi::lua_getallocf(l, &mut ud);
    if ud.is_null() {
        return None;
    }
    (*(ud as *mut AllocState)).stop_in_c.take()
}

/// Source and line of the Lua code running on `l` (past a C function on top), as the error
/// handler records them. Reads the call stack only: no allocation.
pub(crate) unsafe fn stop_site(l: L) -> (Vec<u8>, c_int) {
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    // Past the C functions on top (redis.call under pcall, ...).
    for level in 0..16 {
        if ffi::lua_getstack(l, level, &mut ar) == 0 {
            break;
        }
        ffi::lua_getinfo(l, c"Sl".as_ptr(), &mut ar);
        if ar.currentline >= 0 && !ar.source.is_null() {
            return (
                CStr::from_ptr(ar.source).to_bytes().to_vec(),
                ar.currentline,
            );
        }
    }
    (b"@user_script".to_vec(), 0)
}

/// The main thread of the VM that `l` (any of its threads) belongs to.
pub unsafe fn main_thread_of(l: L) -> Option<L> {
    let mut ud: *mut c_void = std::ptr::null_mut();
    ffi::lua_getallocf(l, &mut ud);
    (ud as *const AllocState)
        .as_ref()
        .map(|state| state.main)
        .filter(|main| !main.is_null())
}

/// Let the stop error and the error handler allocate (a stopped script's allocations are refused).
pub unsafe fn allow_error_allocations(l: L) {
    let mut ud: *mut c_void = std::ptr::null_mut();
    ffi::lua_getallocf(l, &mut ud);
    if let Some(state) = (ud as *mut AllocState).as_mut() {
        state.until_check = state.until_check.max(STOP_GRACE_BYTES);
    }
}

/// Registry slots (luaL_ref) of the real globals, the error handler and the probe names.
#[derive(Debug, Clone, Copy, Default)]
struct HotRefs {
    globals: c_int,
    handler: c_int,
    probes: c_int,
}

/// A compiled script in the cache.
#[derive(Debug, Clone, Copy)]
struct Compiled {
    registry_ref: c_int,
}

pub struct Vm {
    l: L,
    alloc: Box<AllocState>,
    scripts: rustc_hash::FxHashMap<String, Compiled>,
    /// The script loaded last (reruns skip the cache lookup).
    last: Option<(String, Compiled)>,
    /// Registry integer slots of the tables every run needs (cheaper than light-userdata keys).
    refs: HotRefs,
    runs_since_gc: u32,
    /// The server profile whose globals this VM has (engine/profile.rs).
    profile: &'static Profile,
}

/// Why a script could not be compiled: Lua's message (`user_script:1: unexpected symbol near '+'`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError(pub String);

impl Vm {
    /// A fresh VM with Redis 7.0's environment and a Lua memory limit in bytes.
    pub fn new(memory_limit: usize) -> Vm {
        Vm::with_profile(memory_limit, crate::engine::profile::DEFAULT)
    }

    /// A fresh VM with the environment of a server profile (its globals and `redis` table).
    pub fn with_profile(memory_limit: usize, profile: &'static Profile) -> Vm {
        small_pages_only();
        purge_later();
        let mut alloc = Box::new(AllocState {
            used: 0,
            limit: memory_limit,
            until_check: STOP_CHECK_BYTES,
            guarded: false,
            main: std::ptr::null_mut(),
            stop_site: None,
            stop_in_c: None,
            big_blocks: false,
        });
        // The state's string hash is the profile's server's (pairs() order over string keys).
        let l = super::string_hash::with_string_hash(profile.lua_string_hash, || unsafe {
            ffi::lua_newstate(
                lua_alloc_function(),
                &mut *alloc as *mut AllocState as *mut c_void,
            )
        });
        assert!(!l.is_null(), "cannot create a Lua state");
        alloc.main = l;
        let mut vm = Vm {
            l,
            alloc,
            scripts: Default::default(),
            last: None,
            refs: HotRefs::default(),
            runs_since_gc: 0,
            profile,
        };
        unsafe {
            vm.setup();
            let slot = |k: &'static u8| {
                ffi::lua_pushlightuserdata(l, key(k));
                ffi::lua_rawget(l, ffi::LUA_REGISTRYINDEX);
                ffi::luaL_ref(l, ffi::LUA_REGISTRYINDEX)
            };
            vm.refs = HotRefs {
                globals: slot(&REG_GLOBALS),
                handler: slot(&REG_HANDLER),
                probes: slot(&REG_PROBES),
            };
        }
        vm
    }

    pub fn state(&self) -> L {
        self.l
    }

    pub fn profile(&self) -> &'static Profile {
        self.profile
    }

    pub fn memory_used(&self) -> usize {
        self.alloc.used
    }

    pub fn memory_limit(&self) -> usize {
        self.alloc.limit
    }

    pub fn set_memory_limit(&mut self, bytes: usize) {
        self.alloc.limit = bytes;
    }

    unsafe fn setup(&self) {
        let l = self.l;
        // Redis loads base, table, string, math, debug (removed again below) and its four C libraries.
        for open in [
            ffi::luaopen_base,
            ffi::luaopen_table,
            ffi::luaopen_string,
            ffi::luaopen_math,
            ffi::luaopen_debug,
        ] {
            ffi::lua_pushcfunction(l, open);
            ffi::lua_call(l, 0, 0);
        }
        for (name, open) in [
            (c"cjson", cjson::open as unsafe fn(L)),
            (c"struct", structlib::open),
            (c"cmsgpack", cmsgpack::open),
            (c"bit", bit::open),
        ] {
            open(l);
            if name == c"cmsgpack" {
                // The server's own copy of the library says who holds it (same table slot).
                cmsgpack::set_copyright(l, self.profile.cmsgpack_copyright);
            }
            ffi::lua_setfield(l, ffi::LUA_GLOBALSINDEX, name.as_ptr());
        }
        // `os` with `clock` only, where the profile's server has it.
        if self.profile.os_clock {
            ffi::lua_pushcfunction(l, ffi::luaopen_os);
            ffi::lua_call(l, 0, 0);
            ffi::lua_getfield(l, ffi::LUA_GLOBALSINDEX, c"os".as_ptr());
            ffi::lua_getfield(l, -1, c"clock".as_ptr());
            ffi::lua_newtable(l);
            ffi::lua_insert(l, -2);
            ffi::lua_setfield(l, -2, c"clock".as_ptr());
            ffi::lua_setfield(l, ffi::LUA_GLOBALSINDEX, c"os".as_ptr());
            ffi::lua_pop(l, 1);
        }
        // Not in Redis's sandbox (and getfenv/setfenv/newproxy gone with the October 2025 fixes).
        let fenv: &[&CStr] = if self.profile.fenv_and_newproxy {
            &[]
        } else {
            &[c"getfenv", c"setfenv", c"newproxy"]
        };
        for name in [c"print", c"dofile", c"loadfile", c"module", c"require"]
            .iter()
            .chain(fenv)
        {
            ffi::lua_pushnil(l);
            ffi::lua_setfield(l, ffi::LUA_GLOBALSINDEX, name.as_ptr());
        }
        api::install_redis_table(l, self.profile);
        self.install_error_handler();
        ffi::lua_pushnil(l);
        ffi::lua_setfield(l, ffi::LUA_GLOBALSINDEX, c"debug".as_ptr());
        self.install_overrides();
        self.protect_globals();
        ffi::lua_pushlightuserdata(l, key(&REG_PROBES));
        super::convert::push_probe_names(l);
        ffi::lua_rawset(l, ffi::LUA_REGISTRYINDEX);
        ffi::lua_sethook(l, Some(api::stop_hook), ffi::LUA_MASKCOUNT, HOOK_EVERY);
        // Concatenations and interning of long strings copy in chunks, asking this between them.
        lua_setstopcheck(l, Some(api::stop_check));
        ffi::lua_settop(l, 0);
    }

    /// After a successful `call_script`, put the probe-name table where the error handler was
    /// (index 1), keeping the stack as deep as Redis's; returns that index.
    pub fn swap_handler_for_probe_names(&self) -> c_int {
        unsafe {
            ffi::lua_rawgeti(
                self.l,
                ffi::LUA_REGISTRYINDEX,
                self.refs.probes as ffi::lua_Integer,
            );
            ffi::lua_replace(self.l, 1);
        }
        1
    }

    /// Redis's error handler (`__redis__err__handler`): turns any error into an `{err=...}` table and
    /// records the position of the Lua code that raised it (the caller, when a C function raised).
    /// Also a helper that reads `err`, `source`, `line` through metamethods, as Redis's C code does.
    unsafe fn install_error_handler(&self) {
        let l = self.l;
        let code = br#"
local getinfo, type, tostring, on_error = debug.getinfo, type, tostring, ...
local function handler(err)
  on_error(err)
  local frame = getinfo(2, 'nSl')
  if frame and frame.what == 'C' then
    frame = getinfo(3, 'nSl')
  end
  if type(err) ~= 'table' then
    err = {err = 'ERR ' .. tostring(err)}
  end
  if frame then
    err['source'] = frame.source
    err['line'] = frame.currentline
  end
  return err
end
local function fields(e) return e.err, e.source, e.line end
return handler, fields
"#;
        let status = ffi::luaL_loadbuffer(
            l,
            code.as_ptr() as *const _,
            code.len(),
            c"=evalbench".as_ptr(),
        );
        assert_eq!(status, 0, "error handler compiles");
        // The debugger's break on error (a no-op outside a debug session).
        ffi::lua_pushcfunction(l, super::debug_hooks::on_script_error);
        ffi::lua_call(l, 1, 2);
        ffi::lua_pushlightuserdata(l, key(&REG_ERRFIELDS));
        ffi::lua_insert(l, -2);
        ffi::lua_rawset(l, ffi::LUA_REGISTRYINDEX);
        ffi::lua_pushvalue(l, -1);
        ffi::lua_setfield(l, ffi::LUA_GLOBALSINDEX, c"__redis__err__handler".as_ptr());
        if self.profile.server_alias {
            ffi::lua_pushvalue(l, -1);
            ffi::lua_setfield(l, ffi::LUA_GLOBALSINDEX, c"__server__err__handler".as_ptr());
        }
        ffi::lua_pushlightuserdata(l, key(&REG_HANDLER));
        ffi::lua_insert(l, -2);
        ffi::lua_rawset(l, ffi::LUA_REGISTRYINDEX);
    }

    /// Replace the functions whose Redis versions differ from stock Lua.
    unsafe fn install_overrides(&self) {
        let l = self.l;
        // The read-only registry: proxy -> real table (or `true` for a view with no real table).
        ffi::lua_pushlightuserdata(l, key(&raw::READONLY_REGISTRY_KEY));
        ffi::lua_newtable(l);
        ffi::lua_rawset(l, ffi::LUA_REGISTRYINDEX);
        ffi::lua_pushlightuserdata(l, key(&REG_VIEWS));
        ffi::lua_newtable(l);
        ffi::lua_rawset(l, ffi::LUA_REGISTRYINDEX);

        api::install_math_random(l);
        ffi::lua_getfield(l, ffi::LUA_GLOBALSINDEX, c"string".as_ptr());
        raw::set_function(l, c"rep", string_rep);
        // string.format with stop checks for big %s results.
        super::strformat::install(l, c"format");
        ffi::lua_pop(l, 1);

        // Functions that take the read-only registry as upvalue 1 (and the original as upvalue 2).
        let wrap =
            |table: Option<&CStr>, name: &CStr, f: ffi::lua_CFunction, with_original: bool| {
                let target = match table {
                    Some(t) => {
                        ffi::lua_getfield(l, ffi::LUA_GLOBALSINDEX, t.as_ptr());
                        -1
                    }
                    None => ffi::LUA_GLOBALSINDEX,
                };
                let target_abs = if target == -1 {
                    ffi::lua_gettop(l)
                } else {
                    target
                };
                push_readonly_registry(l);
                let mut upvalues = 1;
                if with_original {
                    ffi::lua_getfield(l, target_abs, name.as_ptr());
                    upvalues = 2;
                }
                ffi::lua_pushcclosure(l, f, upvalues);
                ffi::lua_setfield(l, target_abs, name.as_ptr());
                if table.is_some() {
                    ffi::lua_pop(l, 1);
                }
            };
        wrap(None, c"next", ro_next, false);
        wrap(None, c"pairs", ro_pairs, false);
        wrap(None, c"rawget", ro_rawget, false);
        wrap(None, c"rawset", ro_rawset, false);
        wrap(None, c"setmetatable", ro_setmetatable, false);
        wrap(None, c"getmetatable", ro_getmetatable, false);
        wrap(None, c"pcall", api::redis_pcall, false);
        // Every chunk a script can load goes through `load_text_only` (never bytecode).
        wrap(None, c"loadstring", text_loadstring, false);
        wrap(None, c"load", text_load, false);
        // table.sort/remove/setn/getn/maxn/concat need no wrapper: the proxies have no array part,
        // exactly like Redis's library tables, so they do nothing (or fail) the same way.
        wrap(Some(c"table"), c"insert", ro_table_insert, true);
        wrap(Some(c"table"), c"foreach", ro_table_foreach, true);
        wrap(Some(c"table"), c"foreachi", ro_table_foreach, true);
    }

    /// Make `_G`, every library table and the string metatable read-only (proxies), and make a
    /// missing global an error.
    unsafe fn protect_globals(&self) {
        let l = self.l;
        let real_globals = {
            ffi::lua_pushvalue(l, ffi::LUA_GLOBALSINDEX);
            ffi::lua_gettop(l)
        };
        // Library tables -> proxies.
        for lib in [
            c"string",
            c"table",
            c"math",
            c"coroutine",
            c"cjson",
            c"struct",
            c"cmsgpack",
            c"bit",
            c"redis",
            c"os",
        ] {
            ffi::lua_getfield(l, real_globals, lib.as_ptr());
            if ffi::lua_isnil(l, -1) != 0 {
                ffi::lua_pop(l, 1); // `os` in a profile without it
                continue;
            }
            let real = ffi::lua_gettop(l);
            make_proxy(l, real);
            ffi::lua_setfield(l, real_globals, lib.as_ptr());
            ffi::lua_pop(l, 1);
        }
        // Valkey: `server` is the very `redis` table.
        if self.profile.server_alias {
            ffi::lua_getfield(l, real_globals, c"redis".as_ptr());
            ffi::lua_setfield(l, real_globals, c"server".as_ptr());
        }
        // The string metatable reads through the (protected) string proxy; scripts see a read-only view of it.
        ffi::lua_pushstring(l, c"".as_ptr());
        ffi::lua_getmetatable(l, -1);
        let string_mt = ffi::lua_gettop(l);
        ffi::lua_getfield(l, real_globals, c"string".as_ptr());
        ffi::lua_setfield(l, string_mt, c"__index".as_ptr());
        make_proxy(l, string_mt);
        set_view(l, string_mt);
        ffi::lua_pop(l, 2);

        // The real globals table raises on a missing name.
        ffi::lua_newtable(l);
        let globals_mt = ffi::lua_gettop(l);
        ffi::lua_pushcfunction(l, missing_global);
        ffi::lua_setfield(l, globals_mt, c"__index".as_ptr());
        ffi::lua_pushvalue(l, globals_mt);
        ffi::lua_setmetatable(l, real_globals);
        // `_G` is a proxy of the real globals; `getmetatable(_G)` shows a read-only view of globals_mt.
        make_proxy(l, real_globals);
        let proxy = ffi::lua_gettop(l);
        ffi::lua_getmetatable(l, proxy);
        make_proxy(l, globals_mt);
        set_view(l, -2);
        ffi::lua_pop(l, 1);
        ffi::lua_pushvalue(l, proxy);
        ffi::lua_setfield(l, real_globals, c"_G".as_ptr());
        // Keep the real globals reachable for KEYS/ARGV.
        ffi::lua_pushlightuserdata(l, key(&REG_GLOBALS));
        ffi::lua_pushvalue(l, real_globals);
        ffi::lua_rawset(l, ffi::LUA_REGISTRYINDEX);
        // From now on code runs with the proxy as its globals.
        ffi::lua_pushvalue(l, proxy);
        ffi::lua_replace(l, ffi::LUA_GLOBALSINDEX);
        ffi::lua_settop(l, 0);
    }

    /// Set the global tables `KEYS` and `ARGV` for the next run (fresh, writable tables).
    pub fn set_keys_and_argv(&self, keys: &[Vec<u8>], argv: &[Vec<u8>]) {
        let l = self.l;
        unsafe {
            ffi::lua_rawgeti(
                l,
                ffi::LUA_REGISTRYINDEX,
                self.refs.probes as ffi::lua_Integer,
            );
            let names = ffi::lua_gettop(l);
            ffi::lua_rawgeti(
                l,
                ffi::LUA_REGISTRYINDEX,
                self.refs.globals as ffi::lua_Integer,
            );
            for (name, items) in [
                (super::convert::KEYS_NAME_INDEX, keys),
                (super::convert::ARGV_NAME_INDEX, argv),
            ] {
                ffi::lua_rawgeti(l, names, name);
                ffi::lua_createtable(l, items.len() as c_int, 0);
                for (i, item) in items.iter().enumerate() {
                    raw::push_bytes(l, item);
                    ffi::lua_rawseti(l, -2, i as ffi::lua_Integer + 1);
                }
                ffi::lua_rawset(l, -3);
            }
            ffi::lua_pop(l, 2);
        }
    }

    /// Compile `body` (shebang line already blanked by the caller) under its SHA1, or reuse it.
    pub fn load_script(&mut self, sha: &str, body: &[u8]) -> Result<(), CompileError> {
        if self.last.as_ref().is_some_and(|(s, _)| s == sha) {
            return Ok(());
        }
        if let Some(compiled) = self.scripts.get(sha) {
            self.last = Some((sha.to_string(), *compiled));
            return Ok(());
        }
        let l = self.l;
        unsafe {
            let mut status = load_buffer(l, body, c"@user_script".as_ptr());
            if status == ffi::LUA_ERRMEM && !self.scripts.is_empty() {
                // The cache of compiled scripts is what fills a long-lived VM up to its memory
                // limit, and Redis (no limit on Lua's memory) would compile: make room by
                // forgetting the cached scripts (a later EVALSHA of one says NOSCRIPT, as after
                // SCRIPT FLUSH), then compile again, so the script gets Redis's own answer.
                ffi::lua_pop(l, 1);
                self.forget_scripts();
                status = load_buffer(l, body, c"@user_script".as_ptr());
            }
            if status != 0 {
                let msg = String::from_utf8_lossy(
                    raw::to_bytes(l, -1).unwrap_or(b"(error object is not a string)"),
                )
                .into_owned();
                ffi::lua_pop(l, 1);
                return Err(CompileError(msg));
            }
            let registry_ref = ffi::luaL_ref(l, ffi::LUA_REGISTRYINDEX);
            self.scripts
                .insert(sha.to_string(), Compiled { registry_ref });
        }
        Ok(())
    }

    /// Drop every cached script (the functions' libraries stay) and collect what they held.
    fn forget_scripts(&mut self) {
        self.last = None;
        for (_, compiled) in self.scripts.drain() {
            unsafe { ffi::luaL_unref(self.l, ffi::LUA_REGISTRYINDEX, compiled.registry_ref) };
        }
        unsafe { ffi::lua_gc(self.l, ffi::LUA_GCCOLLECT, 0) };
    }

    pub fn has_script(&self, sha: &str) -> bool {
        self.scripts.contains_key(sha)
    }

    /// Call a cached script under the error handler. On success the first return value is left on
    /// the stack (index 2, above the handler) and `Ok(())` returned; on error, `Err(ScriptError)` with the fields the
    /// handler recorded.
    pub fn call_script(&mut self, sha: &str) -> Result<(), ScriptError> {
        let l = self.l;
        let compiled = match &self.last {
            Some((s, compiled)) if s == sha => *compiled,
            _ => *self.scripts.get(sha).expect("script loaded before call"),
        };
        unsafe {
            ffi::lua_settop(l, 0);
            ffi::lua_rawgeti(
                l,
                ffi::LUA_REGISTRYINDEX,
                self.refs.handler as ffi::lua_Integer,
            );
            ffi::lua_rawgeti(
                l,
                ffi::LUA_REGISTRYINDEX,
                compiled.registry_ref as ffi::lua_Integer,
            );
            self.alloc.guarded = true;
            self.alloc.stop_site = None;
            self.alloc.stop_in_c = None;
            let status = ffi::lua_pcall(l, 0, 1, 1);
            self.alloc.guarded = false;
            self.alloc.until_check = STOP_CHECK_BYTES;
            if status == 0 {
                // The handler stays below the result during conversion, as in Redis (the depth at
                // which a nested reply hits the Lua stack limit depends on it).
                return Ok(());
            }
            ffi::lua_remove(l, 1);
            Err(self.read_error(status))
        }
    }

    /// Call a registered function (FCALL): the function in registry slot `function_ref` gets the
    /// KEYS and ARGV tables as its two arguments, under the error handler, as `luaCallFunction`
    /// does in function mode. Leaves the stack as `call_script` does.
    pub fn call_function(
        &mut self,
        function_ref: c_int,
        keys: &[Vec<u8>],
        argv: &[Vec<u8>],
    ) -> Result<(), ScriptError> {
        let l = self.l;
        unsafe {
            ffi::lua_settop(l, 0);
            ffi::lua_rawgeti(
                l,
                ffi::LUA_REGISTRYINDEX,
                self.refs.handler as ffi::lua_Integer,
            );
            ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, function_ref as ffi::lua_Integer);
            for items in [keys, argv] {
                ffi::lua_createtable(l, items.len() as c_int, 0);
                for (i, item) in items.iter().enumerate() {
                    raw::push_bytes(l, item);
                    ffi::lua_rawseti(l, -2, i as ffi::lua_Integer + 1);
                }
            }
            self.alloc.guarded = true;
            self.alloc.stop_site = None;
            self.alloc.stop_in_c = None;
            let status = ffi::lua_pcall(l, 2, 1, 1);
            self.alloc.guarded = false;
            self.alloc.until_check = STOP_CHECK_BYTES;
            if status == 0 {
                return Ok(());
            }
            ffi::lua_remove(l, 1);
            Err(self.read_error(status))
        }
    }

    unsafe fn read_error(&mut self, status: c_int) -> ScriptError {
        let l = self.l;
        if status == ffi::LUA_ERRMEM {
            ffi::lua_settop(l, 0);
            // A stop that refused an allocation is reported as the stop, where it happened.
            if let Some((source, line)) = self.alloc.stop_site.take() {
                if let Some((name, line)) = self.alloc.stop_in_c.take() {
                    api::note_stop_in_c(l, line, &name);
                }
                return ScriptError::Table {
                    err: Some(api::stop_text(self.alloc.limit).as_bytes().to_vec()),
                    source: Some(source),
                    line: Some(line.to_string().into_bytes()),
                };
            }
            return ScriptError::OutOfMemory;
        }
        if ffi::lua_type(l, -1) != ffi::LUA_TTABLE {
            let msg = raw::to_bytes(l, -1).map(|b| String::from_utf8_lossy(b).into_owned());
            ffi::lua_settop(l, 0);
            return ScriptError::NotATable(msg.unwrap_or_else(|| "execution failure".into()));
        }
        // err, source, line read with metamethods, under pcall (an __index may raise).
        ffi::lua_pushlightuserdata(l, key(&REG_ERRFIELDS));
        ffi::lua_rawget(l, ffi::LUA_REGISTRYINDEX);
        ffi::lua_insert(l, -2);
        if ffi::lua_pcall(l, 1, 3, 0) != 0 {
            ffi::lua_settop(l, 0);
            return ScriptError::Table {
                err: None,
                source: None,
                line: None,
            };
        }
        let text = |idx: c_int| -> Option<Vec<u8>> {
            match ffi::lua_type(l, idx) {
                ffi::LUA_TSTRING | ffi::LUA_TNUMBER => raw::to_bytes(l, idx).map(<[u8]>::to_vec),
                _ => None,
            }
        };
        let err = text(-3);
        let source = text(-2);
        let line = text(-1);
        ffi::lua_settop(l, 0);
        ScriptError::Table { err, source, line }
    }

    /// Forget every cached script and start over with a fresh VM (SCRIPT FLUSH).
    pub fn flush(&mut self) {
        let limit = self.alloc.limit;
        *self = Vm::with_profile(limit, self.profile);
    }

    /// Redis runs a GC step every 50 scripts.
    pub fn after_run(&mut self) {
        unsafe { ffi::lua_settop(self.l, 0) };
        self.runs_since_gc += 1;
        // After a run that came close to the memory limit, collect now so the next run has room.
        // (The budget is shared with the Rust heap: a run stopped past it leaves garbage here.)
        if self.alloc.used + crate::engine::budget::refresh() > self.alloc.limit / 4 * 3 {
            unsafe { ffi::lua_gc(self.l, ffi::LUA_GCCOLLECT, 0) };
        } else if self.runs_since_gc >= 50 {
            unsafe { ffi::lua_gc(self.l, ffi::LUA_GCSTEP, 50) };
            self.runs_since_gc = 0;
        }
        // Give the big blocks freed back to the system now, between runs (see `purge_later`).
        if std::mem::take(&mut self.alloc.big_blocks) {
            unsafe { mi_collect(true) };
        }
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        unsafe { ffi::lua_close(self.l) };
    }
}

/// A raised error, as the error handler left it.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptError {
    Table {
        err: Option<Vec<u8>>,
        source: Option<Vec<u8>>,
        line: Option<Vec<u8>>,
    },
    NotATable(String),
    OutOfMemory,
}

unsafe fn push_readonly_registry(l: L) {
    ffi::lua_pushlightuserdata(l, key(&raw::READONLY_REGISTRY_KEY));
    ffi::lua_rawget(l, ffi::LUA_REGISTRYINDEX);
}

/// Push a read-only proxy of the table at `real` (also used by engine/lua/function.rs).
pub(crate) unsafe fn make_proxy(l: L, real: c_int) {
    let real = if real < 0 && real > ffi::LUA_REGISTRYINDEX {
        ffi::lua_gettop(l) + real + 1
    } else {
        real
    };
    ffi::lua_newtable(l);
    let proxy = ffi::lua_gettop(l);
    ffi::lua_newtable(l);
    ffi::lua_pushvalue(l, real);
    ffi::lua_setfield(l, -2, c"__index".as_ptr());
    ffi::lua_pushcfunction(l, readonly_newindex);
    ffi::lua_setfield(l, -2, c"__newindex".as_ptr());
    ffi::lua_setmetatable(l, proxy);
    push_readonly_registry(l);
    ffi::lua_pushvalue(l, proxy);
    ffi::lua_pushvalue(l, real);
    ffi::lua_rawset(l, -3);
    ffi::lua_pop(l, 1);
}

/// `getmetatable` shows the view on top of the stack (popped) instead of the metatable at `mt`.
unsafe fn set_view(l: L, mt: c_int) {
    let mt = if mt < 0 {
        ffi::lua_gettop(l) + mt + 1
    } else {
        mt
    };
    ffi::lua_pushlightuserdata(l, key(&REG_VIEWS));
    ffi::lua_rawget(l, ffi::LUA_REGISTRYINDEX);
    ffi::lua_pushvalue(l, mt);
    ffi::lua_pushvalue(l, -3);
    ffi::lua_rawset(l, -3);
    ffi::lua_pop(l, 2);
}

/// Is the value at `idx` a protected table? Leaves the real table (or true/nil) on the stack.
unsafe fn push_real_of(l: L, idx: c_int) -> bool {
    ffi::lua_pushvalue(l, idx);
    ffi::lua_rawget(l, ffi::lua_upvalueindex(1));
    ffi::lua_type(l, -1) != ffi::LUA_TNIL
}

/// Also the function VM's globals guard (engine/lua/function.rs).
pub(crate) unsafe extern "C-unwind" fn readonly_newindex(l: L) -> c_int {
    raw::protect(l, |_| Err(Raise::error(READONLY_TEXT)))
}

/// Also the function VM's load-time API guard (engine/lua/function.rs).
pub(crate) unsafe extern "C-unwind" fn missing_global(l: L) -> c_int {
    raw::protect(l, |l| {
        if ffi::lua_gettop(l) != 2 {
            return Err(Raise::error(
                "Wrong number of arguments to luaProtectedTableError",
            ));
        }
        if ffi::lua_isstring(l, -1) == 0 {
            return Err(Raise::error(
                "Second argument to luaProtectedTableError must be a string or number",
            ));
        }
        let name = raw::to_bytes(l, -1).unwrap_or_default();
        let mut msg = b"Script attempted to access nonexistent global variable '".to_vec();
        msg.extend_from_slice(name);
        msg.push(b'\'');
        Err(Raise::Error(msg))
    })
}

/// `next` that iterates the real table behind a proxy.
unsafe extern "C-unwind" fn ro_next(l: L) -> c_int {
    raw::protect(l, |l| {
        if ffi::lua_type(l, 1) != ffi::LUA_TTABLE {
            return Err(raw::type_error(l, 1, "table"));
        }
        ffi::lua_settop(l, 2);
        if push_real_of(l, 1) && ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
            ffi::lua_replace(l, 1);
        } else {
            ffi::lua_pop(l, 1);
        }
        if ffi::lua_next(l, 1) != 0 {
            Ok(2)
        } else {
            ffi::lua_pushnil(l);
            Ok(1)
        }
    })
}

unsafe extern "C-unwind" fn ro_pairs(l: L) -> c_int {
    raw::protect(l, |l| {
        if ffi::lua_type(l, 1) != ffi::LUA_TTABLE {
            return Err(raw::type_error(l, 1, "table"));
        }
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
        ffi::lua_pushcclosure(l, ro_next, 1);
        ffi::lua_pushvalue(l, 1);
        ffi::lua_pushnil(l);
        Ok(3)
    })
}

unsafe extern "C-unwind" fn ro_rawget(l: L) -> c_int {
    raw::protect(l, |l| {
        if ffi::lua_type(l, 1) != ffi::LUA_TTABLE {
            return Err(raw::type_error(l, 1, "table"));
        }
        if ffi::lua_type(l, 2) == ffi::LUA_TNONE {
            return Err(raw::arg_error(l, 2, "value expected"));
        }
        ffi::lua_settop(l, 2);
        if push_real_of(l, 1) && ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
            ffi::lua_replace(l, 1);
        } else {
            ffi::lua_pop(l, 1);
        }
        ffi::lua_rawget(l, 1);
        Ok(1)
    })
}

unsafe extern "C-unwind" fn ro_rawset(l: L) -> c_int {
    raw::protect(l, |l| {
        if ffi::lua_type(l, 1) != ffi::LUA_TTABLE {
            return Err(raw::type_error(l, 1, "table"));
        }
        if ffi::lua_type(l, 2) == ffi::LUA_TNONE {
            return Err(raw::arg_error(l, 2, "value expected"));
        }
        if ffi::lua_type(l, 3) == ffi::LUA_TNONE {
            return Err(raw::arg_error(l, 3, "value expected"));
        }
        if push_real_of(l, 1) {
            return Err(Raise::plain(READONLY_TEXT));
        }
        ffi::lua_pop(l, 1);
        ffi::lua_settop(l, 3);
        ffi::lua_rawset(l, 1);
        Ok(1)
    })
}

/// Lua 5.1's `setmetatable`, refusing protected tables with Redis's text.
unsafe extern "C-unwind" fn ro_setmetatable(l: L) -> c_int {
    raw::protect(l, |l| {
        if ffi::lua_type(l, 1) != ffi::LUA_TTABLE {
            return Err(raw::type_error(l, 1, "table"));
        }
        let t = ffi::lua_type(l, 2);
        if t != ffi::LUA_TNIL && t != ffi::LUA_TTABLE {
            return Err(raw::arg_error(l, 2, "nil or table expected"));
        }
        if push_real_of(l, 1) {
            return Err(Raise::plain(READONLY_TEXT));
        }
        ffi::lua_pop(l, 1);
        if ffi::lua_getmetatable(l, 1) != 0 {
            ffi::lua_pushstring(l, c"__metatable".as_ptr());
            ffi::lua_rawget(l, -2);
            if ffi::lua_type(l, -1) != ffi::LUA_TNIL {
                return Err(Raise::error("cannot change a protected metatable"));
            }
            ffi::lua_pop(l, 2);
        }
        ffi::lua_settop(l, 2);
        ffi::lua_setmetatable(l, 1);
        Ok(1)
    })
}

unsafe extern "C-unwind" fn ro_getmetatable(l: L) -> c_int {
    raw::protect(l, |l| {
        if ffi::lua_type(l, 1) == ffi::LUA_TNONE {
            return Err(raw::arg_error(l, 1, "value expected"));
        }
        if ffi::lua_getmetatable(l, 1) == 0 {
            ffi::lua_pushnil(l);
            return Ok(1);
        }
        // A protected object shows its view (or nothing, for library tables).
        let mt = ffi::lua_gettop(l);
        ffi::lua_pushlightuserdata(l, key(&REG_VIEWS));
        ffi::lua_rawget(l, ffi::LUA_REGISTRYINDEX);
        ffi::lua_pushvalue(l, mt);
        ffi::lua_rawget(l, -2);
        if ffi::lua_type(l, -1) != ffi::LUA_TNIL {
            return Ok(1);
        }
        ffi::lua_pop(l, 1);
        if ffi::lua_type(l, 1) == ffi::LUA_TTABLE && push_real_of(l, 1) {
            ffi::lua_pushnil(l);
            return Ok(1);
        }
        ffi::lua_settop(l, mt);
        // Honour __metatable as Lua's getmetatable does.
        ffi::lua_pushstring(l, c"__metatable".as_ptr());
        ffi::lua_rawget(l, mt);
        if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
            ffi::lua_pop(l, 1);
        }
        Ok(1)
    })
}

/// `table.insert`: refuses protected tables (no position: Redis raises it in C), after the same
/// argument checks as Lua's, so that the original, called next, cannot raise with the wrong name.
unsafe extern "C-unwind" fn ro_table_insert(l: L) -> c_int {
    raw::protect(l, |l| {
        if ffi::lua_type(l, 1) != ffi::LUA_TTABLE {
            return Err(raw::type_error(l, 1, "table"));
        }
        let argc = ffi::lua_gettop(l);
        if argc != 2 && argc != 3 {
            return Err(Raise::error("wrong number of arguments to 'insert'"));
        }
        if argc == 3 {
            raw::check_int(l, 2)?;
        }
        if push_real_of(l, 1) {
            return Err(Raise::plain(READONLY_TEXT));
        }
        ffi::lua_pop(l, 1);
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(2));
        ffi::lua_insert(l, 1);
        ffi::lua_call(l, argc, 0);
        Ok(0)
    })
}

/// `table.foreach`/`foreachi` over the real table behind a proxy. The callback's errors pass
/// straight through (no protected call), so their positions stay those of the script.
unsafe extern "C-unwind" fn ro_table_foreach(l: L) -> c_int {
    raw::protect(l, |l| {
        if ffi::lua_type(l, 1) != ffi::LUA_TTABLE {
            return Err(raw::type_error(l, 1, "table"));
        }
        if ffi::lua_type(l, 2) != ffi::LUA_TFUNCTION {
            return Err(raw::type_error(l, 2, "function"));
        }
        ffi::lua_settop(l, 2);
        if push_real_of(l, 1) && ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
            ffi::lua_replace(l, 1);
        } else {
            ffi::lua_pop(l, 1);
        }
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(2));
        ffi::lua_insert(l, 1);
        ffi::lua_call(l, 2, 1);
        Ok(1)
    })
}

// ---- loading chunks: text only ----
//
// Lua 5.1 picks the undumper when a chunk's first byte is ESC (the bytecode signature), and
// crafted bytecode can read and write memory at will. Redis's patched `f_parser` always runs the
// text parser, which refuses such a chunk with `unexpected symbol near 'char(27)'`. Every chunk
// evalbench loads (scripts, `loadstring`, `load` with any reader) passes through
// `load_text_only`, whose reader hands Lua a space before a first piece that starts with ESC:
// the text parser then sees the ESC as Redis's does, with the same message, line and chunk name.

/// Wraps another reader; see above.
struct TextOnly {
    inner: ffi::lua_Reader,
    data: *mut c_void,
    first: bool,
    /// The first piece, held back while the space is read.
    held: Option<(*const c_char, usize)>,
}

unsafe extern "C-unwind" fn text_only_reader(
    l: L,
    ud: *mut c_void,
    size: *mut usize,
) -> *const c_char {
    let reader = &mut *(ud as *mut TextOnly);
    if let Some((piece, len)) = reader.held.take() {
        *size = len;
        return piece;
    }
    let piece = (reader.inner)(l, reader.data, size);
    // Lua decides text or bytecode on the first byte of the first piece (an empty first piece
    // reads as the end: text).
    if reader.first {
        reader.first = false;
        if !piece.is_null() && *size > 0 && *piece as u8 == 0x1b {
            reader.held = Some((piece, *size));
            *size = 1;
            return c" ".as_ptr();
        }
    }
    piece
}

/// `lua_load` that never loads bytecode. The chunk name is a C string (cut at a NUL, as in Redis).
pub unsafe fn load_text_only(
    l: L,
    inner: ffi::lua_Reader,
    data: *mut c_void,
    chunkname: *const c_char,
) -> c_int {
    let mut reader = TextOnly {
        inner,
        data,
        first: true,
        held: None,
    };
    ffi::lua_load(
        l,
        text_only_reader,
        &mut reader as *mut TextOnly as *mut c_void,
        chunkname,
    )
}

/// Lauxlib's `getS`: the whole buffer as one piece.
struct Buffer {
    data: *const c_char,
    len: usize,
}

unsafe extern "C-unwind" fn buffer_reader(
    _l: L,
    ud: *mut c_void,
    size: *mut usize,
) -> *const c_char {
    let buffer = &mut *(ud as *mut Buffer);
    if buffer.len == 0 {
        return std::ptr::null();
    }
    *size = buffer.len;
    buffer.len = 0;
    buffer.data
}

/// `luaL_loadbuffer`, text only.
pub unsafe fn load_buffer(l: L, chunk: &[u8], chunkname: *const c_char) -> c_int {
    let mut buffer = Buffer {
        data: chunk.as_ptr() as *const c_char,
        len: chunk.len(),
    };
    load_text_only(
        l,
        buffer_reader,
        &mut buffer as *mut Buffer as *mut c_void,
        chunkname,
    )
}

/// `luaL_error` from inside a reader (no Rust value alive: `lua_error` jumps).
unsafe fn reader_error(l: L, msg: &CStr) -> ! {
    ffi::luaL_where(l, 1);
    ffi::lua_pushstring(l, msg.as_ptr());
    ffi::lua_concat(l, 2);
    ffi::lua_error(l);
}

/// Lbaselib's `generic_reader`: calls the function at index 1, keeps the piece in slot 3.
unsafe extern "C-unwind" fn function_reader(
    l: L,
    _ud: *mut c_void,
    size: *mut usize,
) -> *const c_char {
    if ffi::lua_checkstack(l, 2) == 0 {
        reader_error(l, c"stack overflow (too many nested functions)");
    }
    ffi::lua_pushvalue(l, 1);
    ffi::lua_call(l, 0, 1);
    if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
        *size = 0;
        return std::ptr::null();
    }
    if ffi::lua_isstring(l, -1) == 0 {
        reader_error(l, c"reader function must return a string");
    }
    ffi::lua_replace(l, 3);
    ffi::lua_tolstring(l, 3, size)
}

/// Lbaselib's `load_aux`: the function, or nil and the message.
unsafe fn load_results(l: L, status: c_int) -> c_int {
    if status == 0 {
        return 1;
    }
    ffi::lua_pushnil(l);
    ffi::lua_insert(l, -2);
    2
}

/// An optional chunk-name argument as a C string (Lua's `luaL_optstring`).
unsafe fn opt_chunkname(l: L, narg: c_int, default: *const c_char) -> Result<*const c_char, Raise> {
    if ffi::lua_type(l, narg) <= ffi::LUA_TNIL {
        return Ok(default);
    }
    raw::check_bytes(l, narg)?;
    Ok(ffi::lua_tolstring(l, narg, std::ptr::null_mut()))
}

/// `loadstring(s [, chunkname])`, text only.
unsafe extern "C-unwind" fn text_loadstring(l: L) -> c_int {
    raw::protect(l, |l| {
        let chunk = raw::check_bytes(l, 1)?;
        // The default name is the chunk itself (Lua strings end with a NUL).
        let name = opt_chunkname(l, 2, chunk.as_ptr() as *const c_char)?;
        Ok(load_results(l, load_buffer(l, chunk, name)))
    })
}

/// `load(func [, chunkname])`, text only.
unsafe extern "C-unwind" fn text_load(l: L) -> c_int {
    raw::protect(l, |l| {
        let name = opt_chunkname(l, 2, c"=(load)".as_ptr())?;
        if ffi::lua_type(l, 1) != ffi::LUA_TFUNCTION {
            return Err(raw::type_error(l, 1, "function"));
        }
        // The function, the name, and a slot for the piece being read.
        ffi::lua_settop(l, 3);
        let status = load_text_only(l, function_reader, std::ptr::null_mut(), name);
        Ok(load_results(l, status))
    })
}

/// Lstrlib's `str_rep`, built by doubling copies with a stop check between chunks: lstrlib adds
/// the piece a byte at a time (0.4 s for 64 MiB, with no point the busy threshold could stop), and
/// `string.rep('', 2^31 - 1)` loops two billion times. The result grows in a userdata, so Lua's
/// allocator (memory limit, stop) sees it, then is interned once.
unsafe extern "C-unwind" fn string_rep(l: L) -> c_int {
    raw::protect(l, |l| {
        let piece = raw::check_bytes(l, 1)?;
        let n = raw::check_int(l, 2)?;
        if piece.is_empty() || n <= 0 {
            raw::push_bytes(l, b"");
            return Ok(1);
        }
        // Past what can exist, ask for more than any limit: Lua's memory error, as lstrlib ends.
        let total = piece
            .len()
            .checked_mul(n as usize)
            .filter(|&t| t <= isize::MAX as usize / 2)
            .unwrap_or(isize::MAX as usize / 2);
        let out = ffi::lua_newuserdata(l, total) as *mut u8;
        std::ptr::copy_nonoverlapping(piece.as_ptr(), out, piece.len());
        // Chunks are whole repetitions, so copying the prefix keeps the pattern.
        let chunk_cap = piece.len().max((1 << 20) / piece.len() * piece.len());
        let mut filled = piece.len();
        while filled < total {
            let chunk = filled.min(chunk_cap).min(total - filled);
            std::ptr::copy_nonoverlapping(out, out.add(filled), chunk);
            filled += chunk;
            if api::stop_requested() {
                return Err(Raise::Stop);
            }
        }
        ffi::lua_pushlstring(l, out as *const c_char, total);
        ffi::lua_remove(l, -2);
        Ok(1)
    })
}
