//! The `redis` table scripts see (`redis.call`, `redis.pcall`, `redis.error_reply`, ...), Redis's
//! global `pcall` and `math.random`, and the stop hook — with Redis 7.0's argument checks and texts.
//!
//! These raw functions reach the sandbox's state through [`Core`], which the sandbox points to
//! (thread-locally) for the duration of a run.

use super::convert::{push_error_table, push_reply};
use super::raw::{self, Raise, RawResult, L};
use crate::engine::budget;
use crate::engine::clock::Clock;
use crate::engine::commands::{self, errors, CommandRng, Ctx};
use crate::engine::keyspace::Keyspace;
use crate::engine::profile::Profile;
use crate::engine::reply::{Allowance, Reply, TRACE_ALLOWANCE};
use crate::engine::report::{LogLine, TraceEntry, Via};
use mlua::ffi;
use std::cell::Cell;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

pub const KILLED_TEXT: &str = "ERR Script killed by user with SCRIPT KILL...";
pub const CANCELLED_TEXT: &str = "ERR evalbench: the run was cancelled";

/// Why a run was stopped from outside the script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    BusyThreshold,
    Cancelled,
    /// The run went past the sandbox's memory budget (engine/budget.rs).
    MemoryBudget,
}

/// Calls a run's trace records; later calls are counted only (as on a live server).
pub const MAX_TRACED_CALLS: usize = 100_000;
/// String bytes all the trace entries of a run keep together; past it each entry keeps
/// `TRACE_FLOOR` only.
pub const TRACE_BYTES: usize = 32 << 20;
const TRACE_FLOOR: Allowance = Allowance {
    elements: 16,
    bytes: 256,
};

/// The sandbox state the Lua functions work on.
pub struct Core {
    pub keyspace: Keyspace,
    pub cmd_rng: CommandRng,
    /// Redis's `lrand48` state for `math.random`: never reseeded, survives SCRIPT FLUSH.
    pub lrand48: u64,
    pub clock: Box<dyn Clock>,
    pub run: RunScratch,
    /// Argument buffers reused across calls when no trace keeps them (one allocation fewer per argument).
    pub arg_pool: Vec<Vec<u8>>,
    /// The argument vector itself, reused the same way.
    pub spare_args: Vec<Vec<u8>>,
    pub resolve_cache: commands::ResolveCache,
    /// The server profile the run imitates (engine/profile.rs).
    pub profile: &'static Profile,
}

/// Per-run state.
pub struct RunScratch {
    pub active: bool,
    pub db_index: usize,
    /// Expiry time of this run (frozen at start).
    pub now_ms: i64,
    pub script_resp3: bool,
    /// `#!lua flags=no-writes` or EVAL_RO.
    pub refuse_writes: bool,
    pub started: Instant,
    pub deadline: Option<Instant>,
    pub stopped: Option<StopReason>,
    /// Where the stop was first raised (source, line): a script that catches it and returns
    /// anyway still ends as stopped, there.
    pub stop_site: Option<(Vec<u8>, i32)>,
    /// The stop first landed inside one C call (a pattern match, a sort, a command), as (line of
    /// the Lua code that made it, what it was): Redis's count hook never fires there, so on a
    /// server SCRIPT KILL could not stop the script until that call returns.
    pub stopped_in_c: Option<(u32, String)>,
    /// Calls answered from server state the sandbox does not have (`redis.acl_check_cmd`), as
    /// (line, the call): a dry run that made them is no preview of the server.
    pub server_state_calls: Vec<(u32, String)>,
    pub cancel: Arc<AtomicBool>,
    pub tracing: bool,
    pub trace: Vec<TraceEntry>,
    pub calls: usize,
    pub first_write_ns: Option<u64>,
    pub logs: Vec<LogLine>,
    /// What the log may still keep, and what it did not.
    pub log_keep: LogKeep,
    /// Keep a copy of database 0 after every write (for stepping through a run).
    pub snapshots_enabled: bool,
    /// (seq of the write, database 0 after it).
    pub snapshots: Vec<(usize, crate::engine::keyspace::Db)>,
    /// What the last snapshot cost (the next one is refused when it would not fit the budget).
    pub snapshot_bytes: Option<usize>,
    /// Writes after which no snapshot was kept, for lack of budget.
    pub snapshots_skipped: usize,
    /// Calls made beyond `MAX_TRACED_CALLS`.
    pub untraced_calls: u64,
    /// String bytes the trace may still keep (`TRACE_BYTES` at the start).
    pub trace_bytes_left: usize,
    /// A debug session is running: calls go past the debugger first (engine/debug).
    pub debug_calls: bool,
    /// A debugger eval is running: writes are refused with the debugger's text.
    pub debug_eval: bool,
}

/// The bound on a run's log (`budget::LOG_TOTAL_BYTES`): messages are kept whole until it is
/// reached; after it, one last line counts what was not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogKeep {
    pub bytes_left: usize,
    pub hidden_messages: u64,
    pub hidden_bytes: u64,
}

impl LogKeep {
    pub const fn new() -> LogKeep {
        LogKeep {
            bytes_left: crate::engine::budget::LOG_TOTAL_BYTES,
            hidden_messages: 0,
            hidden_bytes: 0,
        }
    }

    /// The last line of a log that ran out of room.
    pub fn hidden_text(&self) -> Vec<u8> {
        format!(
            "… ({} more message{}, {} bytes, not shown: a run keeps the first {} MiB of its log)",
            self.hidden_messages,
            if self.hidden_messages == 1 { "" } else { "s" },
            self.hidden_bytes,
            crate::engine::budget::LOG_TOTAL_BYTES >> 20
        )
        .into_bytes()
    }
}

impl Default for LogKeep {
    fn default() -> Self {
        LogKeep::new()
    }
}

impl RunScratch {
    pub fn new() -> RunScratch {
        RunScratch::with_cancel(Arc::new(AtomicBool::new(false)))
    }

    /// A fresh scratch sharing an existing cancel flag (no allocation).
    pub fn with_cancel(cancel: Arc<AtomicBool>) -> RunScratch {
        RunScratch::idle(cancel, Instant::now())
    }

    /// `with_cancel` with a start time the caller already has: each run makes two scratches, and
    /// a clock read is a noticeable part of a 1 µs run.
    pub fn idle(cancel: Arc<AtomicBool>, started: Instant) -> RunScratch {
        RunScratch {
            active: false,
            db_index: 0,
            now_ms: 0,
            script_resp3: false,
            refuse_writes: false,
            started,
            deadline: None,
            stopped: None,
            stop_site: None,
            stopped_in_c: None,
            server_state_calls: Vec::new(),
            cancel,
            tracing: true,
            trace: Vec::new(),
            calls: 0,
            first_write_ns: None,
            logs: Vec::new(),
            log_keep: LogKeep::new(),
            snapshots_enabled: false,
            snapshots: Vec::new(),
            snapshot_bytes: None,
            snapshots_skipped: 0,
            untraced_calls: 0,
            trace_bytes_left: TRACE_BYTES,
            debug_calls: false,
            debug_eval: false,
        }
    }
}

impl RunScratch {
    /// Forget what a pass of the script accumulated, keeping the run's settings and clock: the
    /// debugger replays a run from its start (engine/debug). Every per-pass field is reset here.
    pub fn restart_pass(&mut self) {
        self.db_index = 0;
        self.script_resp3 = false;
        self.stopped = None;
        self.stop_site = None;
        self.stopped_in_c = None;
        self.server_state_calls.clear();
        self.trace.clear();
        self.calls = 0;
        self.first_write_ns = None;
        self.logs.clear();
        self.log_keep = LogKeep::new();
        self.snapshots.clear();
        self.snapshot_bytes = None;
        self.snapshots_skipped = 0;
        self.untraced_calls = 0;
        self.trace_bytes_left = TRACE_BYTES;
    }
}

impl Default for RunScratch {
    fn default() -> Self {
        RunScratch::new()
    }
}

pub const LRAND48_INITIAL: u64 = 0x1234_ABCD_330E;

thread_local! {
    static CORE: Cell<*mut Core> = const { Cell::new(std::ptr::null_mut()) };
}

/// Point the Lua functions at `core` for the duration of a run.
pub fn set_current_core(core: *mut Core) {
    CORE.with(|c| c.set(core));
}

unsafe fn core<'a>() -> Option<&'a mut Core> {
    let p = CORE.with(|c| c.get());
    p.as_mut()
}

/// The profile of the running script (the default between runs).
pub fn current_profile() -> &'static Profile {
    unsafe { core() }.map_or(crate::engine::profile::DEFAULT, |c| c.profile)
}

/// An API error naming its table: `redis.log() ...`, or `server.log() ...` on Valkey.
fn api_text(function_and_text: &str) -> Vec<u8> {
    format!("{}.{function_and_text}", current_profile().api_table).into_bytes()
}

fn no_run() -> Raise {
    Raise::plain("evalbench: the redis API is only available while a script runs")
}

/// Push the `redis` table into the globals.
pub unsafe fn install_redis_table(l: L, profile: &'static Profile) {
    ffi::lua_newtable(l);
    let functions: [(&std::ffi::CStr, ffi::lua_CFunction); 12] = [
        (c"call", redis_call),
        (c"pcall", redis_pcall_command),
        (c"log", redis_log),
        (c"setresp", redis_setresp),
        (c"sha1hex", redis_sha1hex),
        (c"error_reply", redis_error_reply),
        (c"status_reply", redis_status_reply),
        (c"set_repl", redis_set_repl),
        (c"acl_check_cmd", redis_acl_check_cmd),
        (c"replicate_commands", redis_replicate_commands),
        (c"breakpoint", redis_breakpoint),
        (c"debug", redis_debug),
    ];
    for (name, f) in functions {
        raw::set_function(l, name, f);
    }
    let numbers: [(&std::ffi::CStr, f64); 11] = [
        (c"LOG_DEBUG", 0.0),
        (c"LOG_VERBOSE", 1.0),
        (c"LOG_NOTICE", 2.0),
        (c"LOG_WARNING", 3.0),
        (c"REPL_NONE", 0.0),
        (c"REPL_AOF", 1.0),
        (c"REPL_SLAVE", 2.0),
        (c"REPL_REPLICA", 2.0),
        (c"REPL_ALL", 3.0),
        (c"REDIS_VERSION_NUM", profile.redis_version_num as f64),
        (c"REDIS_VERSION", 0.0),
    ];
    for (name, value) in numbers {
        if name == c"REDIS_VERSION" {
            raw::push_bytes(l, profile.redis_version.as_bytes());
        } else {
            ffi::lua_pushnumber(l, value);
        }
        ffi::lua_setfield(l, -2, name.as_ptr());
    }
    // Valkey's own names next to Redis's.
    if let Some((version, num)) = profile.valkey_version {
        raw::push_bytes(l, profile.product.name().as_bytes());
        ffi::lua_setfield(l, -2, c"SERVER_NAME".as_ptr());
        raw::push_bytes(l, version.as_bytes());
        ffi::lua_setfield(l, -2, c"VALKEY_VERSION".as_ptr());
        ffi::lua_pushnumber(l, num as f64);
        ffi::lua_setfield(l, -2, c"VALKEY_VERSION_NUM".as_ptr());
    }
    ffi::lua_setfield(l, ffi::LUA_GLOBALSINDEX, c"redis".as_ptr());
}

/// Redis's error table for a failure of the API itself (`luaPushError`): raised for `call`,
/// returned for `pcall`.
unsafe fn api_failure(l: L, via: Via, text: &[u8], ignore_stats: bool) -> RawResult {
    push_error_table(l, text, ignore_stats);
    match via {
        Via::Call => Err(Raise::OnStack),
        Via::Pcall => Ok(1),
    }
}

unsafe extern "C-unwind" fn redis_call(l: L) -> c_int {
    raw::protect(l, |l| generic_call(l, Via::Call))
}

unsafe extern "C-unwind" fn redis_pcall_command(l: L) -> c_int {
    raw::protect(l, |l| generic_call(l, Via::Pcall))
}

/// Lua arguments -> argv as the profile's server does (numbers: `Profile::argument_text`); None
/// if one is not a string/number.
unsafe fn luaargs(
    l: L,
    profile: &Profile,
    argc: c_int,
    pool: &mut Vec<Vec<u8>>,
    spare: &mut Vec<Vec<u8>>,
) -> Option<Vec<Vec<u8>>> {
    let mut args = std::mem::take(spare);
    args.clear();
    args.reserve(argc as usize);
    for i in 1..=argc {
        let mut buf = pool.pop().unwrap_or_default();
        buf.clear();
        match ffi::lua_type(l, i) {
            ffi::LUA_TNUMBER => profile.argument_text(ffi::lua_tonumber(l, i), &mut buf),
            ffi::LUA_TSTRING => buf.extend_from_slice(raw::to_bytes(l, i).unwrap_or_default()),
            _ => {
                pool.push(buf);
                pool.append(&mut args);
                return None;
            }
        }
        args.push(buf);
    }
    Some(args)
}

/// The line of the innermost Lua code on the stack (the script line making the call).
pub unsafe fn caller_line(l: L) -> u32 {
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    for level in 1..6 {
        if ffi::lua_getstack(l, level, &mut ar) == 0 {
            break;
        }
        ffi::lua_getinfo(l, c"l".as_ptr(), &mut ar);
        if ar.currentline > 0 {
            return ar.currentline as u32;
        }
    }
    0
}

unsafe fn generic_call(l: L, via: Via) -> RawResult {
    let core = core().ok_or_else(no_run)?;
    // A stopped script runs no more commands (a plain load: the hot path reads no clock).
    if core.run.stopped.is_some() {
        return Err(Raise::Stop);
    }
    let args = match call_arguments(l, core) {
        Ok(args) => args,
        Err(text) => return api_failure(l, via, text.as_bytes(), false),
    };
    // The debugger may stop before the command (break CMD, bw KEY), or end the run there.
    if core.run.debug_calls {
        if let Some(raise) = super::debug_hooks::before_call(l, &args) {
            return Err(raise);
        }
    }
    // Timestamps only serve the trace and the first write's time.
    let started = core.run.tracing.then(Instant::now);
    let (reply, keys, write) = dispatch(core, l, &args);
    let (lua_used, limit) = super::vm::memory_of(l);
    if let Some(raise) = stop_after_command(l, core, lua_used, limit) {
        drop(reply);
        recycle(&mut core.arg_pool, &mut core.spare_args, args);
        return Err(raise);
    }
    let elapsed_ns = started.map_or(0, |s| s.elapsed().as_nanos() as u64);
    stop_at_next_line_past_deadline(l, core, started, elapsed_ns);
    let at_ns = call_time_ns(core, started, write);
    if write && core.run.snapshots_enabled {
        snapshot(core, lua_used, limit);
    }
    let run = &mut core.run;
    run.calls += 1;
    if write && !reply.is_error() && run.first_write_ns.is_none() {
        run.first_write_ns = Some(at_ns);
    }
    // Convert before moving the reply into the trace (no clone).
    let is_error = push_call_reply(l, &reply, run.script_resp3);
    let facts = CallFacts {
        keys,
        elapsed_ns,
        at_ns,
        write,
        via,
    };
    record_call(l, core, args, reply, facts);
    if is_error && via == Via::Call {
        return Err(Raise::OnStack);
    }
    Ok(1)
}

/// The command's arguments from the Lua stack, or the profile's error for none or a bad one.
unsafe fn call_arguments(l: L, core: &mut Core) -> Result<Vec<Vec<u8>>, &'static str> {
    let argc = ffi::lua_gettop(l);
    if argc == 0 {
        return Err(core.profile.no_arguments);
    }
    luaargs(
        l,
        core.profile,
        argc,
        &mut core.arg_pool,
        &mut core.spare_args,
    )
    .ok_or(core.profile.bad_argument)
}

/// The stop a command leaves the script at: past the budget (what the command allocated, its
/// reply included), or a long command (KEYS over many keys, a hostile MATCH) that gave up at the
/// stop with a partial reply.
unsafe fn stop_after_command(
    l: L,
    core: &mut Core,
    lua_used: usize,
    limit: usize,
) -> Option<Raise> {
    if core.run.stopped == Some(StopReason::MemoryBudget)
        || budget::refresh().saturating_add(lua_used) > limit
    {
        return Some(stop_over_budget(l, core));
    }
    core.run.stopped.is_some().then_some(Raise::Stop)
}

/// A traced call has just read the clock: a command that ran past the threshold stops the
/// script at the next line, not 10,000 instructions later.
unsafe fn stop_at_next_line_past_deadline(
    l: L,
    core: &Core,
    started: Option<Instant>,
    elapsed_ns: u64,
) {
    if let (Some(s), Some(deadline)) = (started, core.run.deadline) {
        if s + std::time::Duration::from_nanos(elapsed_ns) >= deadline && stop_requested() {
            ffi::lua_sethook(
                l,
                Some(stop_hook),
                ffi::LUA_MASKLINE | ffi::LUA_MASKCOUNT,
                super::vm::HOOK_EVERY,
            );
        }
    }
}

/// When the call started, from the run's start: from the trace's clock, or read now for an
/// untraced run's first write.
fn call_time_ns(core: &Core, started: Option<Instant>, write: bool) -> u64 {
    match started {
        Some(s) => s.duration_since(core.run.started).as_nanos() as u64,
        None if write && core.run.first_write_ns.is_none() => {
            core.run.started.elapsed().as_nanos() as u64
        }
        None => 0,
    }
}

/// Push the reply for the script: an error as its error table, anything else converted.
/// Whether it was an error.
unsafe fn push_call_reply(l: L, reply: &Reply, resp3: bool) -> bool {
    if let Reply::Error(text) = reply {
        let mut buf = Vec::with_capacity(text.len() + 1);
        buf.push(b'-');
        buf.extend_from_slice(text.as_bytes());
        push_error_table(l, &buf, true);
        true
    } else {
        push_reply(l, reply, resp3);
        false
    }
}

/// What the trace keeps of a call beside its arguments and reply.
struct CallFacts {
    keys: Vec<Vec<u8>>,
    elapsed_ns: u64,
    at_ns: u64,
    write: bool,
    via: Via,
}

/// Keep the call in the trace (bounded copies) when the run traces and the trace has room;
/// otherwise count it and give the argument buffers back.
unsafe fn record_call(l: L, core: &mut Core, args: Vec<Vec<u8>>, reply: Reply, facts: CallFacts) {
    let run = &mut core.run;
    if !run.tracing {
        recycle(&mut core.arg_pool, &mut core.spare_args, args);
        return;
    }
    if run.trace.len() >= MAX_TRACED_CALLS {
        run.untraced_calls += 1;
        recycle(&mut core.arg_pool, &mut core.spare_args, args);
        return;
    }
    let line = caller_line(l);
    // Bounded copies: a run that reads a 50 MB value 50 times keeps 64 KiB of each.
    let mut allowance = if run.trace_bytes_left >= TRACE_ALLOWANCE.bytes {
        TRACE_ALLOWANCE
    } else {
        TRACE_FLOOR
    };
    // The keys first (the warnings read them), then the arguments; the reply has its own.
    let for_reply_start = allowance;
    let keys = bounded_args(facts.keys, &mut allowance);
    let command = bounded_args(args, &mut allowance);
    let mut for_reply = for_reply_start;
    let (reply, _) = reply.into_bounded(&mut for_reply);
    let start = for_reply_start.bytes;
    let kept = (start - allowance.bytes) + (start - for_reply.bytes);
    run.trace_bytes_left = run.trace_bytes_left.saturating_sub(kept);
    run.trace.push(TraceEntry {
        seq: run.calls,
        line,
        command,
        reply,
        elapsed_ns: facts.elapsed_ns,
        at_ns: facts.at_ns,
        keys,
        write: facts.write,
        via: facts.via,
        db: run.db_index,
    });
}

/// Raise the budget error and make it stick: the stop hook raises it again on every line, so
/// `pcall` cannot swallow it (as the busy threshold's kill).
unsafe fn stop_over_budget(l: L, core: &mut Core) -> Raise {
    core.run.stopped = Some(StopReason::MemoryBudget);
    // The budget's text, sticky as every stop.
    push_stop(l);
    Raise::OnStack
}

/// Keep database 0 after a write, for stepping — unless the copy would not fit the budget
/// (then the run goes on without it; the report says how many were skipped).
fn snapshot(core: &mut Core, lua_used: usize, limit: usize) {
    let live = budget::refresh();
    // The first copy costs at most what the heap holds (the keyspace is part of it).
    let estimate = core.run.snapshot_bytes.unwrap_or(live);
    if live.saturating_add(lua_used).saturating_add(estimate) > limit {
        core.run.snapshots_skipped += 1;
        return;
    }
    let copy = core.keyspace.db(0).clone();
    let cost = budget::refresh().saturating_sub(live);
    if budget::counting() {
        core.run.snapshot_bytes = Some(cost);
    }
    core.run.snapshots.push((core.run.calls + 1, copy));
}

/// A trace entry's copy of an argument list: each argument cut to what the allowance leaves
/// (with `… (N bytes)`), at most its element count of arguments (then `… N more arguments`).
fn bounded_args(mut args: Vec<Vec<u8>>, allowance: &mut Allowance) -> Vec<Vec<u8>> {
    let fits = args.len() <= allowance.elements
        && args.iter().map(Vec::len).sum::<usize>() <= allowance.bytes;
    if fits {
        allowance.elements -= args.len();
        allowance.bytes -= args.iter().map(Vec::len).sum::<usize>();
        return args;
    }
    let total = args.len();
    let keep = total.min(allowance.elements.max(1));
    allowance.elements = allowance.elements.saturating_sub(keep);
    args.truncate(keep);
    for arg in &mut args {
        if arg.len() > allowance.bytes {
            *arg = crate::engine::reply::cut_bytes(arg, allowance).0;
        } else {
            allowance.bytes -= arg.len();
        }
    }
    if keep < total {
        args.push(
            format!(
                "… {} more arguments",
                crate::engine::reply::grouped(total - keep)
            )
            .into_bytes(),
        );
    }
    args
}

/// Give argument buffers back to the pool (bounded, so one huge call does not pin memory).
fn recycle(pool: &mut Vec<Vec<u8>>, spare: &mut Vec<Vec<u8>>, mut args: Vec<Vec<u8>>) {
    for buf in args.drain(..) {
        if pool.len() < 64 && buf.capacity() <= 4096 {
            pool.push(buf);
        }
    }
    if args.capacity() <= 64 {
        *spare = args;
    }
}

/// Redis's `scriptCall`: checks in Redis's order, then the command. Returns the reply (in the
/// command's rich form), the keys it names and whether it is a write.
pub(crate) unsafe fn dispatch(
    core: &mut Core,
    l: L,
    args: &[Vec<u8>],
) -> (Reply, Vec<Vec<u8>>, bool) {
    let resolved = match commands::resolve_cached(&mut core.resolve_cache, core.profile, args) {
        Ok(r) => r,
        Err(refusal) => return (Reply::err(refusal.text_in(core.profile)), Vec::new(), false),
    };
    // The keys are only kept for the trace.
    let keys: Vec<Vec<u8>> = if core.run.tracing {
        resolved
            .key_positions(args)
            .into_iter()
            .filter_map(|i| args.get(i).cloned())
            .collect()
    } else {
        Vec::new()
    };
    let write = resolved.info.is_write();
    if write && core.run.refuse_writes {
        // A debugger eval says why it refuses (engine/debug/eval.rs).
        let text = if core.run.debug_eval {
            super::debug_hooks::WRITE_REFUSED
        } else {
            errors::WRITE_IN_READ_ONLY
        };
        return (Reply::err(text), keys, write);
    }
    let spare_bytes = match precheck(core, l, resolved, args) {
        Some(spare) => spare,
        None => {
            core.run.stopped = Some(StopReason::MemoryBudget);
            return (Reply::err(""), keys, write);
        }
    };
    let mut ctx = Ctx {
        keyspace: &mut core.keyspace,
        db_index: core.run.db_index,
        now_ms: core.run.now_ms,
        clock: &*core.clock,
        resp3: core.run.script_resp3,
        rng: &mut core.cmd_rng,
        spare_bytes,
        over_budget: false,
        profile: core.profile,
        stop: commands::StopCheck::new(core.run.deadline, &core.run.cancel),
    };
    let reply = commands::execute(resolved, &mut ctx, args);
    core.run.db_index = ctx.db_index;
    let gave_up = ctx.stop.stopped;
    if ctx.over_budget {
        core.run.stopped = Some(StopReason::MemoryBudget);
    }
    if gave_up && core.run.stopped.is_none() {
        // The command saw the deadline or the cancel: record which, the run stops.
        core.run.stopped = Some(if core.run.cancel.load(Ordering::Relaxed) {
            StopReason::Cancelled
        } else {
            StopReason::BusyThreshold
        });
        // A server runs one command to its end: no hook or SCRIPT KILL reaches inside it.
        if core.run.stop_site.is_none() && core.run.stopped_in_c.is_none() {
            let name = String::from_utf8_lossy(&args[0]).to_uppercase();
            core.run.stopped_in_c = Some((caller_line(l), format!("the command {name}")));
        }
    }
    (reply, keys, write)
}

/// Before a command runs: will what it copies fit the budget? The command's arguments are
/// stored or compared, and the values of the keys it names may be copied into its reply (then
/// into Lua) or into another key. Returns the bytes the run may still allocate (handlers that
/// size an allocation from an argument check against it), None when the command would not fit.
unsafe fn precheck(
    core: &mut Core,
    l: L,
    resolved: &commands::Resolved,
    args: &[Vec<u8>],
) -> Option<usize> {
    let (mut lua_used, limit) = super::vm::memory_of(l);
    let live = budget::refresh();
    let args_len: usize = args.iter().map(Vec::len).sum();
    let spare = |lua_used: usize| limit.saturating_sub(live.saturating_add(lua_used));
    // Cheap case first: no key can hold more than the whole heap, so when even a copy of the
    // heap per argument fits, no lookup is needed.
    let worst = live
        .saturating_mul(args.len())
        .saturating_add(args_len)
        .saturating_mul(2);
    if worst <= spare(lua_used) {
        return Some(spare(lua_used));
    }
    let fast = resolved.info.has(commands::table::F_FAST);
    let db = core.keyspace.db(core.run.db_index);
    let mut sources: usize = 0;
    for i in resolved.key_positions(args) {
        let Some(entry) = args.get(i).and_then(|k| db.get(k, core.run.now_ms)) else {
            continue;
        };
        // A fast command touches a few elements of a collection; a string may be copied whole.
        sources = sources.saturating_add(match &entry.value {
            crate::engine::keyspace::Value::Str(s) => s.len(),
            _ if fast => 0,
            value => value.approx_bytes(),
        });
    }
    let need = args_len.saturating_add(sources.saturating_mul(2));
    if need > spare(lua_used) {
        // Lua's garbage (strings of earlier replies) may be what is in the way.
        ffi::lua_gc(l, ffi::LUA_GCCOLLECT, 0);
        lua_used = super::vm::memory_of(l).0;
        if need > spare(lua_used) {
            return None;
        }
    }
    Some(spare(lua_used))
}

/// Redis's global `pcall`: like Lua's, but an error table with a string `err` comes back as that string.
pub unsafe extern "C-unwind" fn redis_pcall(l: L) -> c_int {
    raw::protect(l, |l| {
        let argc = ffi::lua_gettop(l);
        if argc == 0 {
            // Redis's wrapper calls its placeholder boolean.
            ffi::lua_pushboolean(l, 0);
            raw::push_bytes(l, b"attempt to call a boolean value");
            return Ok(2);
        }
        ffi::lua_pushboolean(l, 1);
        ffi::lua_insert(l, 1);
        if ffi::lua_pcall(l, argc - 1, ffi::LUA_MULTRET, 0) != 0 {
            ffi::lua_remove(l, 1);
            if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
                ffi::lua_getfield(l, -1, c"err".as_ptr());
                // Redis leaves a non-string `err` on the stack: it becomes a third result.
                if ffi::lua_isstring(l, -1) != 0 {
                    ffi::lua_replace(l, -2);
                }
            }
            ffi::lua_pushboolean(l, 0);
            ffi::lua_insert(l, 1);
        }
        Ok(ffi::lua_gettop(l))
    })
}

unsafe extern "C-unwind" fn redis_log(l: L) -> c_int {
    raw::protect(l, |l| {
        let argc = ffi::lua_gettop(l);
        if argc < 2 {
            return api_failure(
                l,
                Via::Call,
                &api_text("log() requires two arguments or more."),
                false,
            );
        }
        if ffi::lua_isnumber(l, 1) == 0 {
            return api_failure(
                l,
                Via::Call,
                b"First argument must be a number (log level).",
                false,
            );
        }
        let level = ffi::lua_tonumber(l, 1);
        if !(0.0..=3.0).contains(&level) {
            return api_failure(
                l,
                Via::Call,
                current_profile().bad_log_level.as_bytes(),
                false,
            );
        }
        // Only the first LOG_MESSAGE_BYTES are copied: a message of many megabytes costs what
        // is kept, not its size.
        let cap = crate::engine::budget::LOG_MESSAGE_BYTES;
        // Three bytes past the cap: enough to see where the last kept character ends.
        let copy = cap + 3;
        let mut message = Vec::new();
        let mut full = 0usize;
        for i in 2..=argc {
            // Only strings and numbers are logged; the separator follows Redis (before every arg but the first).
            if matches!(ffi::lua_type(l, i), ffi::LUA_TSTRING | ffi::LUA_TNUMBER) {
                ffi::lua_pushvalue(l, i);
                let bytes = raw::to_bytes(l, -1).unwrap_or_default();
                let separator: &[u8] = if i != 2 { b" " } else { b"" };
                for part in [separator, bytes] {
                    let room = copy.saturating_sub(message.len());
                    message.extend_from_slice(&part[..part.len().min(room)]);
                    full += part.len();
                }
                ffi::lua_pop(l, 1);
            }
        }
        if full > cap {
            // Not in the middle of a UTF-8 character: the kept text stays readable.
            let mut keep = cap;
            while keep > cap - 3 && (message[keep] & 0xC0) == 0x80 {
                keep -= 1;
            }
            message.truncate(keep);
            message.extend_from_slice(format!("… ({} bytes not shown)", full - keep).as_bytes());
        }
        let line = caller_line(l);
        if let Some(core) = core() {
            let run = &mut core.run;
            if run.log_keep.hidden_messages == 0 && message.len() <= run.log_keep.bytes_left {
                run.log_keep.bytes_left -= message.len();
                run.logs.push(LogLine {
                    level: level as u8,
                    line,
                    message,
                });
            } else {
                let first = run.log_keep.hidden_messages == 0;
                run.log_keep.hidden_messages += 1;
                run.log_keep.hidden_bytes += full as u64;
                let text = run.log_keep.hidden_text();
                match run.logs.last_mut() {
                    Some(last) if !first => last.message = text,
                    _ => run.logs.push(LogLine {
                        level: 3,
                        line,
                        message: text,
                    }),
                }
            }
        }
        Ok(0)
    })
}

unsafe extern "C-unwind" fn redis_setresp(l: L) -> c_int {
    raw::protect(l, |l| {
        if ffi::lua_gettop(l) != 1 {
            return api_failure(
                l,
                Via::Call,
                &api_text("setresp() requires one argument."),
                false,
            );
        }
        let resp = raw::c_cast_i64(ffi::lua_tonumber(l, 1)) as i32;
        if resp != 2 && resp != 3 {
            return api_failure(l, Via::Call, b"RESP version must be 2 or 3.", false);
        }
        let core = core().ok_or_else(no_run)?;
        core.run.script_resp3 = resp == 3;
        Ok(0)
    })
}

unsafe extern "C-unwind" fn redis_sha1hex(l: L) -> c_int {
    raw::protect(l, |l| {
        if ffi::lua_gettop(l) != 1 {
            return api_failure(l, Via::Call, b"wrong number of arguments", false);
        }
        let input = raw::to_bytes(l, 1).unwrap_or_default();
        let hex = crate::engine::script::sha1_hex(input);
        raw::push_bytes(l, hex.as_bytes());
        Ok(1)
    })
}

unsafe extern "C-unwind" fn redis_error_reply(l: L) -> c_int {
    raw::protect(l, |l| {
        if ffi::lua_gettop(l) != 1 || ffi::lua_type(l, -1) != ffi::LUA_TSTRING {
            push_error_table(l, b"wrong number or type of arguments", false);
            return Ok(1);
        }
        let text = raw::to_bytes(l, 1).unwrap_or_default();
        let mut buf = Vec::with_capacity(text.len() + 1);
        if text.first() != Some(&b'-') {
            buf.push(b'-');
        }
        buf.extend_from_slice(text);
        push_error_table(l, &buf, false);
        Ok(1)
    })
}

unsafe extern "C-unwind" fn redis_status_reply(l: L) -> c_int {
    raw::protect(l, |l| {
        if ffi::lua_gettop(l) != 1 || ffi::lua_type(l, -1) != ffi::LUA_TSTRING {
            push_error_table(l, b"wrong number or type of arguments", false);
            return Ok(1);
        }
        ffi::lua_newtable(l);
        ffi::lua_pushstring(l, c"ok".as_ptr());
        ffi::lua_pushvalue(l, -3);
        ffi::lua_settable(l, -3);
        Ok(1)
    })
}

unsafe extern "C-unwind" fn redis_set_repl(l: L) -> c_int {
    raw::protect(l, |l| {
        if ffi::lua_gettop(l) != 1 {
            return api_failure(
                l,
                Via::Call,
                &api_text(&format!("set_repl() {}", current_profile().set_repl_arity)),
                false,
            );
        }
        let flags = raw::c_cast_i64(ffi::lua_tonumber(l, -1)) as i32;
        if flags & !3 != 0 {
            return api_failure(
                l,
                Via::Call,
                b"Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
                false,
            );
        }
        Ok(0)
    })
}

/// Lines with a call answered from server state that a run records (one per line).
const MAX_SERVER_STATE_CALLS: usize = 16;

unsafe extern "C-unwind" fn redis_acl_check_cmd(l: L) -> c_int {
    raw::protect(l, |l| {
        let argc = ffi::lua_gettop(l);
        if argc == 0 {
            return api_failure(
                l,
                Via::Call,
                current_profile().no_arguments.as_bytes(),
                false,
            );
        }
        let profile = current_profile();
        let Some(args) = luaargs(l, profile, argc, &mut Vec::new(), &mut Vec::new()) else {
            return api_failure(
                l,
                Via::Call,
                current_profile().bad_argument.as_bytes(),
                false,
            );
        };
        // The sandbox runs as the default user, who may run every command Redis knows; the
        // server answers for the user its client logged in as.
        if let Some(core) = core() {
            let line = caller_line(l);
            if core.run.server_state_calls.len() < MAX_SERVER_STATE_CALLS
                && !core
                    .run
                    .server_state_calls
                    .iter()
                    .any(|(at, _)| *at == line)
            {
                let shown: Vec<String> = args
                    .iter()
                    .take(8)
                    .map(|a| String::from_utf8_lossy(&a[..a.len().min(64)]).into_owned())
                    .collect();
                let call = format!("{}.acl_check_cmd {}", profile.api_table, shown.join(" "));
                core.run.server_state_calls.push((line, call));
            }
        }
        let known = match commands::resolve_in(profile, &args) {
            Ok(_) => true,
            Err(commands::Refusal::Unknown | commands::Refusal::UnknownSubcommand(..)) => false,
            // Redis 8.0 checks the arity too.
            Err(commands::Refusal::WrongArity) if profile.acl_check_cmd_arity => {
                drop(args);
                return api_failure(
                    l,
                    Via::Call,
                    format!(
                        "Wrong number of args for {}.acl_check_cmd()",
                        profile.api_table
                    )
                    .as_bytes(),
                    false,
                );
            }
            Err(_) => commands::lookup_in(
                profile,
                &String::from_utf8_lossy(&args[0]).to_ascii_lowercase(),
            )
            .is_some(),
        };
        drop(args);
        if !known {
            return api_failure(
                l,
                Via::Call,
                format!(
                    "Invalid command passed to {}.acl_check_cmd()",
                    profile.api_table
                )
                .as_bytes(),
                false,
            );
        }
        ffi::lua_pushboolean(l, 1);
        Ok(1)
    })
}

unsafe extern "C-unwind" fn redis_replicate_commands(l: L) -> c_int {
    ffi::lua_pushboolean(l, 1);
    1
}

// Both are the debugger's (through lua/debug_hooks.rs): false / nothing outside a debug session.
use super::debug_hooks::{redis_breakpoint, redis_debug};

// ---- math.random / math.randomseed: Redis's lrand48 ----

const LRAND48_MAX: f64 = 2147483647.0;

/// One step of POSIX `lrand48`: the 31 high bits of the next 48-bit state.
pub fn lrand48_next(state: &mut u64) -> u32 {
    *state = (state.wrapping_mul(0x5_DEEC_E66D).wrapping_add(0xB)) & 0xFFFF_FFFF_FFFF;
    (*state >> 17) as u32
}

pub unsafe fn install_math_random(l: L) {
    ffi::lua_getfield(l, ffi::LUA_GLOBALSINDEX, c"math".as_ptr());
    raw::set_function(l, c"random", math_random);
    raw::set_function(l, c"randomseed", math_randomseed);
    ffi::lua_pop(l, 1);
}

unsafe extern "C-unwind" fn math_random(l: L) -> c_int {
    raw::protect(l, |l| {
        let core = core().ok_or_else(no_run)?;
        let r = (lrand48_next(&mut core.lrand48) as f64 % LRAND48_MAX) / LRAND48_MAX;
        match ffi::lua_gettop(l) {
            0 => ffi::lua_pushnumber(l, r),
            1 => {
                let u = raw::check_int(l, 1)?;
                if u < 1 {
                    return Err(raw::arg_error(l, 1, "interval is empty"));
                }
                ffi::lua_pushnumber(l, (r * u as f64).floor() + 1.0);
            }
            2 => {
                let lo = raw::check_int(l, 1)?;
                let hi = raw::check_int(l, 2)?;
                if lo > hi {
                    return Err(raw::arg_error(l, 2, "interval is empty"));
                }
                ffi::lua_pushnumber(l, (r * (hi as f64 - lo as f64 + 1.0)).floor() + lo as f64);
            }
            _ => return Err(Raise::error("wrong number of arguments")),
        }
        Ok(1)
    })
}

unsafe extern "C-unwind" fn math_randomseed(l: L) -> c_int {
    raw::protect(l, |l| {
        let seed = raw::check_int(l, 1)? as u32 as u64;
        let core = core().ok_or_else(no_run)?;
        core.lrand48 = (seed << 16) | 0x330E;
        Ok(0)
    })
}

// ---- the stop hook and the stop checks inside long C functions ----

/// Has the running script to stop (cancelled, or past the busy threshold)? Records why in
/// `run.stopped`. Reads the clock: call it every so often, not per instruction.
pub fn stop_requested() -> bool {
    let Some(core) = (unsafe { core() }) else {
        return false;
    };
    let run = &mut core.run;
    if !run.active {
        return false;
    }
    if run.stopped.is_none() {
        if run.cancel.load(Ordering::Relaxed) {
            run.stopped = Some(StopReason::Cancelled);
        } else if run.deadline.is_some_and(|d| Instant::now() >= d) {
            run.stopped = Some(StopReason::BusyThreshold);
        } else {
            return false;
        }
    }
    true
}

/// The stop as Redis reports it (`ERR Script killed by user with SCRIPT KILL...`), or the cancel
/// or memory-budget text (`budget`: the run's limit in bytes).
pub fn stop_text(budget: usize) -> std::borrow::Cow<'static, str> {
    match unsafe { core() }.and_then(|c| c.run.stopped) {
        Some(StopReason::Cancelled) => CANCELLED_TEXT.into(),
        Some(StopReason::MemoryBudget) => budget::over_budget_text(budget).into(),
        _ => KILLED_TEXT.into(),
    }
}

/// Push the stop's error table (the one the hook raises), and make the hook fire on every line
/// from now on so that `pcall` cannot swallow the stop. Raw functions return `Raise::Stop`.
pub unsafe fn push_stop(l: L) {
    super::vm::allow_error_allocations(l);
    let mut main = None;
    if let Some(core) = core() {
        if core.run.stop_site.is_none() {
            core.run.stop_site = Some(super::vm::stop_site(l));
            if core.run.stopped_in_c.is_none() && core.run.stopped != Some(StopReason::MemoryBudget)
            {
                core.run.stopped_in_c = c_function_running(l);
            }
            // The script caught the memory error of an allocation the stop refused inside a C
            // call: the stop still landed there.
            if let Some((name, line)) = super::vm::take_stop_in_c(l) {
                note_stop_in_c(l, line, &name);
            }
        }
        // A coroutine that catches the stop returns to the main thread: it stops at its next
        // line too. (Not in a debugger eval: that stop ends the eval, not the paused run.)
        if !core.run.debug_eval {
            main = super::vm::main_thread_of(l).filter(|&m| m != l);
        }
    }
    for thread in std::iter::once(l).chain(main) {
        ffi::lua_sethook(
            thread,
            Some(stop_hook),
            ffi::LUA_MASKLINE | ffi::LUA_MASKCOUNT,
            super::vm::HOOK_EVERY,
        );
    }
    let text = stop_text(super::vm::memory_of(l).1);
    let text = text.as_bytes();
    let mut buf = Vec::with_capacity(text.len() + 1);
    buf.push(b'-');
    buf.extend_from_slice(text);
    push_error_table(l, &buf, false);
}

/// The libraries a C function the stop landed in is looked up in, for its name.
const C_LIBRARIES: [&std::ffi::CStr; 9] = [
    c"string",
    c"table",
    c"math",
    c"cjson",
    c"cmsgpack",
    c"struct",
    c"bit",
    c"redis",
    c"server",
];

/// When the function running on `l` is a C function (a stop landing inside `string.find`,
/// `cjson.encode`, ...): the line of the Lua code that called it, and its name. Redis's count
/// hook fires between Lua instructions only, so on a server nothing interrupts that call. A
/// `table.sort` given a Lua comparator is not one: the hook fires inside the comparator.
unsafe fn c_function_running(l: L) -> Option<(u32, String)> {
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    if ffi::lua_getstack(l, 0, &mut ar) == 0 || ffi::lua_getinfo(l, c"S".as_ptr(), &mut ar) == 0 {
        return None;
    }
    if ar.what.is_null() || std::ffi::CStr::from_ptr(ar.what).to_bytes() != b"C" {
        return None;
    }
    ffi::lua_checkstack(l, 8);
    let top = ffi::lua_gettop(l);
    ffi::lua_getinfo(l, c"f".as_ptr(), &mut ar);
    let mut name = None;
    ffi::lua_pushvalue(l, ffi::LUA_GLOBALSINDEX);
    behind_proxy(l);
    let globals = ffi::lua_gettop(l);
    'libraries: for library in C_LIBRARIES {
        // Raw: the globals' protection raises for a missing name.
        ffi::lua_pushstring(l, library.as_ptr());
        ffi::lua_rawget(l, globals);
        behind_proxy(l);
        if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
            ffi::lua_pushnil(l);
            while ffi::lua_next(l, -2) != 0 {
                if ffi::lua_rawequal(l, -1, top + 1) != 0
                    && ffi::lua_type(l, -2) == ffi::LUA_TSTRING
                {
                    let field = raw::to_bytes(l, -2).map(String::from_utf8_lossy);
                    name = field.map(|f| format!("{}.{f}", library.to_string_lossy()));
                    break 'libraries;
                }
                ffi::lua_settop(l, -2);
            }
        }
        ffi::lua_settop(l, globals);
    }
    ffi::lua_settop(l, top);
    if name.as_deref() == Some("table.sort") && ffi::lua_type(l, 2) == ffi::LUA_TFUNCTION {
        return None;
    }
    let name = name.unwrap_or_else(|| {
        // Not a library's: a closure such as string.gmatch's iterator.
        ffi::lua_getinfo(l, c"n".as_ptr(), &mut ar);
        let local = (!ar.name.is_null()).then(|| std::ffi::CStr::from_ptr(ar.name).to_bytes());
        if local.is_some_and(|n| n.starts_with(b"(for ")) {
            "the C iterator of a `for ... in` loop".into()
        } else {
            "a C function".into()
        }
    });
    Some((caller_line(l), name))
}

/// A stop that refused an allocation inside the C function the caller named `name` (the
/// allocator's stop check, `vm.rs`), at the caller's `line`: a stop inside one C call when `name`
/// is a C function of a library (a coroutine's resume or a wrapped coroutine is not one).
pub(crate) unsafe fn note_stop_in_c(l: L, line: std::ffi::c_int, name: &[u8]) {
    let Some(core) = core() else {
        return;
    };
    if core.run.stopped_in_c.is_some() || core.run.stopped == Some(StopReason::MemoryBudget) {
        return;
    }
    ffi::lua_checkstack(l, 8);
    let top = ffi::lua_gettop(l);
    ffi::lua_pushvalue(l, ffi::LUA_GLOBALSINDEX);
    behind_proxy(l);
    let globals = ffi::lua_gettop(l);
    let mut found = None;
    for library in C_LIBRARIES {
        ffi::lua_pushstring(l, library.as_ptr());
        ffi::lua_rawget(l, globals);
        behind_proxy(l);
        if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
            raw::push_bytes(l, name);
            ffi::lua_rawget(l, -2);
            if ffi::lua_iscfunction(l, -1) != 0 {
                found = Some(format!(
                    "{}.{}",
                    library.to_string_lossy(),
                    String::from_utf8_lossy(name)
                ));
                break;
            }
        }
        ffi::lua_settop(l, globals);
    }
    ffi::lua_settop(l, top);
    if let Some(what) = found {
        core.run.stopped_in_c = Some((line.max(0) as u32, what));
    }
}

/// Replace the table on top of the stack by the one its read-only proxy reads through (the
/// protected globals and library tables, vm.rs), raw: no metamethod runs.
unsafe fn behind_proxy(l: L) {
    if ffi::lua_type(l, -1) != ffi::LUA_TTABLE || ffi::lua_getmetatable(l, -1) == 0 {
        return;
    }
    ffi::lua_pushstring(l, c"__index".as_ptr());
    ffi::lua_rawget(l, -2);
    if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
        ffi::lua_replace(l, -3);
        ffi::lua_settop(l, -2);
    } else {
        ffi::lua_settop(l, -3);
    }
}

/// `raise` of the vendored Lua's stop check where hooks are off (lua.h).
const STOPCHECK_HOOKSOFF: std::ffi::c_int = 2;

/// The vendored Lua's stop check (`lua_setstopcheck`), asked between the 1 MiB chunks of a
/// concatenation's copy and of interning a long string, every few thousand steps of a pattern
/// match or a sort, and where hooks are off (an error handler running for an error the stop hook
/// raised, which no hook can reach): 0 to go on; 1 when stopping, with the stop's error pushed if
/// `raise` (Lua then raises it).
pub unsafe extern "C" fn stop_check(l: L, raise: std::ffi::c_int) -> std::ffi::c_int {
    if !stop_requested() {
        return 0;
    }
    if raise == 0 {
        return 1;
    }
    // evalbench's own error handler runs with hooks off too: it must finish, to report the stop.
    if raise == STOPCHECK_HOOKSOFF && running_evalbench_code(l) {
        return 0;
    }
    // Lua asks from inside an instruction, where the frame's stack may be full.
    ffi::lua_checkstack(l, ffi::LUA_MINSTACK);
    push_stop(l);
    1
}

/// A stop check for loops in long C functions (cjson, cmsgpack, ...): looks at the clock every
/// `STOP_POLL_EVERY` steps.
pub struct StopPoll(u32);

const STOP_POLL_EVERY: u32 = 4096;

impl StopPoll {
    pub fn new() -> StopPoll {
        StopPoll(0)
    }

    /// One step of work; `Err` (the stop raised) once the script has to stop.
    #[inline]
    pub fn tick(&mut self) -> Result<(), Raise> {
        self.0 += 1;
        if self.0 < STOP_POLL_EVERY {
            return Ok(());
        }
        self.0 = 0;
        if stop_requested() {
            return Err(Raise::Stop);
        }
        Ok(())
    }
}

impl Default for StopPoll {
    fn default() -> Self {
        StopPoll::new()
    }
}

/// Bytes an encoder copies between two stop checks (`reserve_stoppable`, `extend_stoppable`).
const STOPPABLE_COPY_CHUNK: usize = 1 << 20;

/// Make room for `additional` more bytes at the end of an encoder's output. A big output grows
/// by a copy in 1 MiB chunks with a stop check between them, where `Vec`'s own doubling would
/// copy tens of MiB at once, past any check.
pub fn reserve_stoppable(out: &mut Vec<u8>, additional: usize) -> Result<(), Raise> {
    if out.capacity() - out.len() >= additional {
        return Ok(());
    }
    if out.len() <= STOPPABLE_COPY_CHUNK {
        out.reserve(additional);
        return Ok(());
    }
    let mut grown = Vec::with_capacity((out.capacity() * 2).max(out.len() + additional));
    for chunk in out.chunks(STOPPABLE_COPY_CHUNK) {
        if stop_requested() {
            return Err(Raise::Stop);
        }
        grown.extend_from_slice(chunk);
    }
    *out = grown;
    Ok(())
}

/// Append `bytes` to an encoder's output, with a stop check between 1 MiB chunks.
pub fn extend_stoppable(out: &mut Vec<u8>, bytes: &[u8]) -> Result<(), Raise> {
    reserve_stoppable(out, bytes.len())?;
    for (n, chunk) in bytes.chunks(STOPPABLE_COPY_CHUNK).enumerate() {
        if n > 0 && stop_requested() {
            return Err(Raise::Stop);
        }
        out.extend_from_slice(chunk);
    }
    Ok(())
}

/// The chunk name of evalbench's own Lua (the error handler, vm.rs).
const EVALBENCH_SOURCE: &[u8] = b"=evalbench";

/// Is the Lua function running on `l` evalbench's own?
unsafe fn running_evalbench_code(l: L) -> bool {
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    ffi::lua_getstack(l, 0, &mut ar) != 0
        && ffi::lua_getinfo(l, c"S".as_ptr(), &mut ar) != 0
        && !ar.source.is_null()
        && std::ffi::CStr::from_ptr(ar.source).to_bytes() == EVALBENCH_SOURCE
}

/// Memory the Lua allocator cannot see (logs, replies kept by C functions) counts too.
unsafe fn over_budget_now(l: L) -> bool {
    let (lua_used, limit) = super::vm::memory_of(l);
    budget::refresh().saturating_add(lua_used) > limit
}

/// Count hook: stops the script at the busy threshold or on cancel, and keeps raising
/// afterwards (on every line) so that `pcall` cannot swallow the stop.
pub unsafe extern "C-unwind" fn stop_hook(l: L, ar: *mut ffi::lua_Debug) {
    let Some(core) = core() else { return };
    if !core.run.active {
        return;
    }
    // Never stop inside evalbench's own Lua helpers (the error handler must be able to run).
    if !ar.is_null() && ffi::lua_getinfo(l, c"S".as_ptr(), ar) != 0 && !(*ar).source.is_null() {
        let source = std::ffi::CStr::from_ptr((*ar).source);
        if source.to_bytes() == EVALBENCH_SOURCE {
            return;
        }
    }
    if !stop_requested() {
        if !over_budget_now(l) {
            return;
        }
        core.run.stopped = Some(StopReason::MemoryBudget);
    }
    push_stop(l);
    ffi::lua_error(l);
}
