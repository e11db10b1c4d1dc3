//! Lua in a stopped frame (eval, watches, breakpoint conditions) and LDB's `redis` word.
//!
//! The code runs in a fresh coroutine (so the count hook can stop a runaway even when the stop
//! is inside a hook), with an environment whose reads see a snapshot of the frame's locals and
//! upvalues, then the globals, tables as deep copies. It must not change the run: Redis writes are refused, reads are
//! not traced, and everything a run carries (RNG states, cjson settings, RESP version, database,
//! trace and log lengths) is put back afterwards.

use super::hook::{DebugRun, Stop};
use super::inspect::{for_each_var, ldb_repr, VarKind};
use crate::engine::lua::api;
use crate::engine::lua::raw::{self, L};
use crate::engine::reply::Reply;
use mlua::ffi;
use std::ffi::c_int;
use std::time::{Duration, Instant};

/// How long an eval may run when the run has no busy threshold.
const EVAL_BUDGET: Duration = Duration::from_secs(5);

/// Does a breakpoint condition compile? Lua's message when not.
pub(crate) fn check_condition(cond: &str) -> Result<(), String> {
    unsafe {
        let l = ffi::luaL_newstate();
        if l.is_null() {
            return Err("evalbench: cannot create a Lua state".into());
        }
        let code = format!("return ({cond})");
        let status = ffi::luaL_loadbuffer(
            l,
            code.as_ptr() as *const _,
            code.len(),
            c"=condition".as_ptr(),
        );
        let result = if status == 0 {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(raw::to_bytes(l, -1).unwrap_or(b"?")).into_owned())
        };
        ffi::lua_close(l);
        result
    }
}

/// Compile `code` as an expression first (`return code`), as a statement otherwise (LDB's rule);
/// pushes the function.
unsafe fn compile(l: L, code: &str) -> Result<(), String> {
    let expr = format!("return {code}");
    for text in [expr.as_str(), code] {
        let status =
            ffi::luaL_loadbuffer(l, text.as_ptr() as *const _, text.len(), c"=eval".as_ptr());
        if status == 0 {
            return Ok(());
        }
        if text == code {
            let msg = String::from_utf8_lossy(raw::to_bytes(l, -1).unwrap_or(b"?")).into_owned();
            ffi::lua_pop(l, 1);
            return Err(msg);
        }
        ffi::lua_pop(l, 1);
    }
    unreachable!()
}

/// The most table entries one variable's copy may hold (an eval of a larger table is refused).
pub(crate) const COPY_LIMIT: usize = 100_000;

/// Is the table at `idx` a read-only proxy of the sandbox (a library table: nothing to copy)?
unsafe fn is_readonly_proxy(l: L, idx: c_int) -> bool {
    ffi::lua_pushlightuserdata(
        l,
        &raw::READONLY_REGISTRY_KEY as *const u8 as *mut std::ffi::c_void,
    );
    ffi::lua_rawget(l, ffi::LUA_REGISTRYINDEX);
    let proxy = ffi::lua_type(l, -1) == ffi::LUA_TTABLE && {
        ffi::lua_pushvalue(l, idx);
        ffi::lua_rawget(l, -2);
        let found = ffi::lua_type(l, -1) != ffi::LUA_TNIL;
        ffi::lua_pop(l, 1);
        found
    };
    ffi::lua_pop(l, 1);
    proxy
}

/// Push the copy of the value at `idx` (absolute): a table not seen yet gets a new table (with the
/// same metatable), recorded in `seen` and queued to be filled; anything else is pushed as is.
unsafe fn push_copy_of(l: L, idx: c_int, seen: c_int, queue: c_int, queued: &mut i64) {
    if ffi::lua_type(l, idx) != ffi::LUA_TTABLE || is_readonly_proxy(l, idx) {
        ffi::lua_pushvalue(l, idx);
        return;
    }
    ffi::lua_pushvalue(l, idx);
    ffi::lua_rawget(l, seen);
    if ffi::lua_type(l, -1) != ffi::LUA_TNIL {
        return;
    }
    ffi::lua_pop(l, 1);
    ffi::lua_newtable(l);
    if ffi::lua_getmetatable(l, idx) != 0 {
        ffi::lua_setmetatable(l, -2);
    }
    ffi::lua_pushvalue(l, idx);
    ffi::lua_pushvalue(l, -2);
    ffi::lua_rawset(l, seen);
    *queued += 1;
    ffi::lua_pushvalue(l, idx);
    ffi::lua_rawseti(l, queue, *queued as _);
}

/// Replace the table on top of the stack by its deep copy (cycles and sharing kept through `seen`,
/// shared by every copy of one eval); iterative, so a deep structure cannot overflow the C stack.
/// Err when the copy would exceed COPY_LIMIT entries (the top is then left as it was).
unsafe fn deep_copy_top(l: L, seen: c_int) -> Result<(), ()> {
    if ffi::lua_checkstack(l, 12) == 0 {
        return Err(());
    }
    let orig = ffi::lua_gettop(l);
    ffi::lua_newtable(l);
    let queue = ffi::lua_gettop(l);
    let mut queued = 0i64;
    push_copy_of(l, orig, seen, queue, &mut queued);
    let mut done = 0i64;
    let mut entries = 0usize;
    while done < queued {
        done += 1;
        ffi::lua_rawgeti(l, queue, done as _);
        let o = ffi::lua_gettop(l);
        ffi::lua_pushvalue(l, o);
        ffi::lua_rawget(l, seen);
        let c = ffi::lua_gettop(l);
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, o) != 0 {
            entries += 1;
            if entries > COPY_LIMIT {
                ffi::lua_settop(l, orig);
                return Err(());
            }
            let (k, v) = (ffi::lua_gettop(l) - 1, ffi::lua_gettop(l));
            push_copy_of(l, k, seen, queue, &mut queued);
            push_copy_of(l, v, seen, queue, &mut queued);
            ffi::lua_rawset(l, c);
            ffi::lua_pop(l, 1);
        }
        ffi::lua_settop(l, o - 1);
    }
    // Stack: orig, queue, copy.
    ffi::lua_replace(l, orig);
    ffi::lua_settop(l, orig);
    Ok(())
}

/// __index of an eval's environment: the frame's snapshot (upvalue 1), names bound to nil
/// (upvalue 2), then the script's globals. Tables come as copies (upvalue 3: original -> copy, for
/// this eval), so an eval never changes the run; library tables are read-only proxies, kept.
unsafe extern "C-unwind" fn env_index(l: L) -> c_int {
    ffi::lua_settop(l, 2);
    ffi::lua_pushvalue(l, 2);
    ffi::lua_rawget(l, ffi::lua_upvalueindex(1));
    if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
        ffi::lua_pop(l, 1);
        ffi::lua_pushvalue(l, 2);
        ffi::lua_rawget(l, ffi::lua_upvalueindex(2));
        if ffi::lua_toboolean(l, -1) != 0 {
            ffi::lua_pushnil(l);
            return 1;
        }
        ffi::lua_pop(l, 1);
        ffi::lua_pushvalue(l, 2);
        ffi::lua_gettable(l, ffi::LUA_GLOBALSINDEX);
    }
    if ffi::lua_type(l, -1) == ffi::LUA_TTABLE
        && deep_copy_top(l, ffi::lua_upvalueindex(3)).is_err()
    {
        {
            // Owned strings end here: lua_error does not return.
            let name = String::from_utf8_lossy(raw::to_bytes(l, 2).unwrap_or(b"?")).into_owned();
            let msg = format!("evalbench: eval works on copies of the tables it reads, and '{name}' holds over {COPY_LIMIT} entries (see it with p)");
            raw::push_bytes(l, msg.as_bytes());
        }
        ffi::lua_error(l);
    }
    1
}

/// Push the environment of an eval in the frame at `level`.
unsafe fn push_env(l: L, level: c_int) {
    ffi::lua_newtable(l); // the environment
    ffi::lua_newtable(l); // values
    let values = ffi::lua_gettop(l);
    ffi::lua_newtable(l); // names bound to nil
    let nils = ffi::lua_gettop(l);
    // Upvalues first, then locals (a local shadows an upvalue; a later local an earlier one).
    let mut vars: Vec<(String, VarKind)> = Vec::new();
    for_each_var(l, level, |_, name, kind| {
        vars.push((name.to_string(), kind));
        false
    });
    for pass in [VarKind::Upvalue, VarKind::Local] {
        let mut i = 0;
        for_each_var(l, level, |l, name, kind| {
            if kind == pass {
                let is_nil = ffi::lua_type(l, -1) == ffi::LUA_TNIL;
                raw::push_bytes(l, name.as_bytes());
                ffi::lua_pushvalue(l, -2);
                ffi::lua_rawset(l, values);
                raw::push_bytes(l, name.as_bytes());
                if is_nil {
                    ffi::lua_pushboolean(l, 1);
                } else {
                    ffi::lua_pushnil(l);
                }
                ffi::lua_rawset(l, nils);
            }
            i += 1;
            false
        });
        let _ = i;
    }
    ffi::lua_newtable(l); // metatable
    ffi::lua_pushvalue(l, values);
    ffi::lua_pushvalue(l, nils);
    ffi::lua_newtable(l); // original table -> its copy, for this eval
    ffi::lua_pushcclosure(l, env_index, 3);
    ffi::lua_setfield(l, -2, c"__index".as_ptr());
    ffi::lua_setmetatable(l, -4);
    ffi::lua_pop(l, 2);
}

/// What an eval changes in the run, to put back.
struct Saved {
    tracing: bool,
    refuse_writes: bool,
    calls: usize,
    trace_len: usize,
    logs_len: usize,
    log_keep: api::LogKeep,
    resp3: bool,
    db_index: usize,
    first_write_ns: Option<u64>,
    lrand48: u64,
    cmd_rng: crate::engine::commands::CommandRng,
    deadline: Option<Instant>,
    stopped: Option<api::StopReason>,
    stop_site: Option<(Vec<u8>, i32)>,
}

fn enter(run: &mut DebugRun) -> Saved {
    let core = run.core();
    let r = &mut core.run;
    let saved = Saved {
        tracing: r.tracing,
        refuse_writes: r.refuse_writes,
        calls: r.calls,
        trace_len: r.trace.len(),
        logs_len: r.logs.len(),
        log_keep: r.log_keep,
        resp3: r.script_resp3,
        db_index: r.db_index,
        first_write_ns: r.first_write_ns,
        lrand48: core.lrand48,
        cmd_rng: core.cmd_rng.clone(),
        deadline: r.deadline,
        stopped: r.stopped,
        stop_site: r.stop_site.take(),
    };
    let budget = run.threshold_or(EVAL_BUDGET);
    let r = &mut run.core().run;
    r.tracing = false;
    r.refuse_writes = true;
    r.debug_eval = true;
    r.deadline = Some(Instant::now() + budget);
    run.in_eval = true;
    run.clock_passthrough(true);
    saved
}

fn leave(run: &mut DebugRun, saved: Saved) -> bool {
    run.in_eval = false;
    run.clock_passthrough(false);
    let core = run.core();
    core.lrand48 = saved.lrand48;
    core.cmd_rng = saved.cmd_rng;
    let r = &mut core.run;
    let killed = r.stopped.is_some() && saved.stopped.is_none();
    r.tracing = saved.tracing;
    r.refuse_writes = saved.refuse_writes;
    r.debug_eval = false;
    r.calls = saved.calls;
    r.trace.truncate(saved.trace_len);
    r.logs.truncate(saved.logs_len);
    r.log_keep = saved.log_keep;
    if saved.log_keep.hidden_messages > 0 {
        if let Some(last) = r.logs.last_mut() {
            last.message = saved.log_keep.hidden_text();
        }
    }
    r.script_resp3 = saved.resp3;
    r.db_index = saved.db_index;
    r.first_write_ns = saved.first_write_ns;
    r.deadline = saved.deadline;
    r.stopped = saved.stopped;
    r.stop_site = saved.stop_site;
    killed
}

/// Run the function on top of `l` in the frame at `level`; `read` gets the coroutine with the
/// results. The function is popped.
unsafe fn run_in_frame<T>(
    run: &mut DebugRun,
    l: L,
    level: c_int,
    read: impl FnOnce(L, c_int) -> T,
) -> Result<T, String> {
    let func = ffi::lua_gettop(l);
    if ffi::lua_checkstack(l, 8) == 0 {
        ffi::lua_settop(l, func - 1);
        return Err("evalbench: the Lua stack is full".into());
    }
    push_env(l, level);
    ffi::lua_setfenv(l, func);
    let co = ffi::lua_newthread(l);
    ffi::lua_pushvalue(l, func);
    ffi::lua_xmove(l, co, 1);
    let cjson = super::hook::cjson_snapshot(l);
    let saved = enter(run);
    let status = ffi::lua_resume_(co, 0);
    let killed = leave(run, saved);
    super::hook::cjson_restore(l, &cjson);
    // After an error the dead coroutine's frame has no free slots: make room to read it.
    ffi::lua_checkstack(co, 20);
    let result = match status {
        // Stopped, even when the code caught the stop (in a coroutine) and returned.
        _ if killed => Err(format!(
            "eval: stopped after {} ms (it ran too long)",
            run.threshold_or(EVAL_BUDGET).as_millis()
        )),
        0 => Ok(read(co, ffi::lua_gettop(co))),
        ffi::LUA_YIELD => {
            Err("eval: the code yielded (coroutine.yield outside a coroutine)".into())
        }
        _ => Err(error_text(co)),
    };
    ffi::lua_settop(l, func - 1);
    result
}

unsafe fn error_text(co: L) -> String {
    match ffi::lua_type(co, -1) {
        ffi::LUA_TTABLE => {
            ffi::lua_pushstring(co, c"err".as_ptr());
            ffi::lua_rawget(co, -2);
            let text = raw::to_bytes(co, -1)
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_else(|| "(an error table without err)".into());
            text
        }
        ffi::LUA_TSTRING | ffi::LUA_TNUMBER => {
            String::from_utf8_lossy(raw::to_bytes(co, -1).unwrap_or_default()).into_owned()
        }
        _ => "(an error that is not a string)".into(),
    }
}

/// Evaluate a breakpoint condition in the frame at `level` (compiled once per run).
pub(crate) unsafe fn condition(
    run: &mut DebugRun,
    l: L,
    level: c_int,
    id: u32,
    cond: &str,
) -> Result<bool, String> {
    let cached = run
        .conditions
        .iter()
        .find(|(i, text, _)| *i == id && text == cond)
        .map(|(_, _, r)| *r);
    match cached {
        Some(r) => {
            ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, r as _);
        }
        None => {
            compile(l, &format!("({cond})"))?;
            ffi::lua_pushvalue(l, -1);
            let r = ffi::luaL_ref(l, ffi::LUA_REGISTRYINDEX);
            run.conditions.push((id, cond.to_string(), r));
        }
    }
    run_in_frame(run, l, level, |co, n| {
        n > 0 && ffi::lua_toboolean(co, 1) != 0
    })
}

impl Stop<'_> {
    /// Run Lua in a frame (0 = innermost) with its locals and upvalues readable; the values it
    /// returns as LDB prints them (cut at maxlen). Errors come back as text; the run stays
    /// paused and unchanged.
    pub fn eval(&mut self, frame: usize, code: &str) -> Result<Vec<String>, String> {
        let level = self.level_of(frame)?;
        let maxlen = self.run.session().maxlen;
        let l = self.l;
        unsafe {
            compile(l, code)?;
            run_in_frame(self.run, l, level, |co, n| {
                (1..=n).map(|i| ldb_repr(co, i, maxlen)).collect()
            })
        }
    }

    /// LDB's `redis` word: run a command on the current keyspace; writes are refused, nothing is
    /// traced.
    pub fn redis(&mut self, args: &[Vec<u8>]) -> Reply {
        if args.is_empty() {
            return Reply::err("ERR wrong number of arguments: give a command");
        }
        let run = &mut *self.run;
        let saved = enter(run);
        let (reply, _, _) = unsafe { api::dispatch(run.core(), self.l, args) };
        leave(run, saved);
        reply
    }
}
