//! The debugger's entry points into the runtime. The debugger (engine/debug) sits above the Lua
//! runtime and arms itself for a run; the runtime calls it only through this table, which the
//! debugger fills in the first time it arms, so the runtime never names the debugger. Before
//! that (and outside a debug session, where each hook does nothing) the defaults below answer.

use super::raw::{Raise, L};
use std::ffi::c_int;
use std::sync::OnceLock;

/// What the debugger adds to a run.
pub(crate) struct DebugHooks {
    /// Before a `redis.call` (break CMD, bw KEY): a raise ends the call with it.
    pub before_call: unsafe fn(L, &[Vec<u8>]) -> Option<Raise>,
    /// `redis.breakpoint()`.
    pub breakpoint: unsafe fn(L) -> c_int,
    /// `redis.debug(...)`.
    pub debug: unsafe fn(L) -> c_int,
    /// An error that ends the script, with the raising frames still on the stack (called by the
    /// error handler before it records the position).
    pub on_error: unsafe fn(L) -> c_int,
}

/// A write the debugger refuses (in eval, watches, conditions and `redis`); the runtime raises
/// it (engine/debug/eval.rs says when).
pub(crate) const WRITE_REFUSED: &str = "ERR evalbench: the debugger refuses write commands in eval, watches, conditions and 'redis' (they would change the run); read commands see the current keyspace";

static HOOKS: OnceLock<DebugHooks> = OnceLock::new();

/// Fill in the table (once; later calls keep the first).
pub(crate) fn install(hooks: impl FnOnce() -> DebugHooks) {
    HOOKS.get_or_init(hooks);
}

pub(crate) unsafe fn before_call(l: L, args: &[Vec<u8>]) -> Option<Raise> {
    HOOKS.get().and_then(|h| (h.before_call)(l, args))
}

/// `redis.breakpoint()` outside the debugger: false.
pub(crate) unsafe extern "C-unwind" fn redis_breakpoint(l: L) -> c_int {
    match HOOKS.get() {
        Some(h) => (h.breakpoint)(l),
        None => {
            mlua::ffi::lua_pushboolean(l, 0);
            1
        }
    }
}

/// `redis.debug(...)` outside the debugger: nothing.
pub(crate) unsafe extern "C-unwind" fn redis_debug(l: L) -> c_int {
    HOOKS.get().map_or(0, |h| (h.debug)(l))
}

/// The error handler's call before it records an error's position.
pub(crate) unsafe extern "C-unwind" fn on_script_error(l: L) -> c_int {
    HOOKS.get().map_or(0, |h| (h.on_error)(l))
}
