//! The debug run: the line hook, stops, and the replay driver for backward steps.
//!
//! Line events are numbered from the start of a pass (every line hook call counts, whatever the
//! chunk, so the numbering is deterministic). A backward step aborts the current pass, restores
//! what carries across runs (the keyspace, the lrand48 and command RNG states, cjson's settings,
//! the clock's readings), and runs the script again silently to the wanted event.
//!
//! The line hook is on only while something needs it (a step, `redis.breakpoint()`, run to a
//! line, coverage, a breakpoint on a line without a probe, replays). After a continue the script
//! runs with the count hook only and breakpoints are reached through probes (probes.rs); the line
//! events of that stretch are not counted, so a stop there first replays the pass silently with
//! the line hook up to the same point (the same count of marks: probes, commands,
//! `redis.breakpoint()` calls, or the error) and stops there, its event number known.

use super::{DebugFrontend, DebugOutput, DebugSession, Resume, StopReason};
use crate::engine::clock::Clock;
use crate::engine::commands::CommandRng;
use crate::engine::keyspace::Keyspace;
use crate::engine::lua::api::{self, Core};
use crate::engine::lua::convert::push_error_table;
use crate::engine::lua::raw::{self, Raise, L};
use crate::engine::lua::vm::{ScriptError, Vm, HOOK_EVERY};
use crate::engine::request::{FunctionCall, RunRequest};
use mlua::ffi;
use std::cell::Cell;
use std::ffi::c_int;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(crate) const ABORT_TEXT: &str = "ERR script aborted for user request";
const REWIND_TEXT: &str = "ERR evalbench: the debugger is replaying the run";
const USER_SOURCE: &[u8] = b"@user_script";
/// A function library's chunk (FUNCTION LOAD).
const LIBRARY_SOURCE: &[u8] = b"@user_function";

thread_local! {
    static RUN: Cell<*mut DebugRun> = const { Cell::new(std::ptr::null_mut()) };
}

/// Is a debug run armed on this thread (set by `Sandbox::debug`)?
pub(crate) fn armed() -> bool {
    !RUN.with(Cell::get).is_null()
}

pub(crate) fn current<'a>() -> Option<&'a mut DebugRun> {
    unsafe { RUN.with(Cell::get).as_mut() }
}

/// The `lua_Debug` layout, to read its private `i_ci` (the call depth, set for every hook call).
#[repr(C)]
struct RawDebug {
    event: c_int,
    name: *const i8,
    namewhat: *const i8,
    what: *const i8,
    source: *const i8,
    currentline: c_int,
    nups: c_int,
    linedefined: c_int,
    lastlinedefined: c_int,
    short_src: [i8; 60],
    i_ci: c_int,
}

pub(crate) unsafe fn depth_of(ar: *const ffi::lua_Debug) -> c_int {
    (*(ar as *const RawDebug)).i_ci
}

pub(crate) unsafe fn is_user(l: L, ar: *mut ffi::lua_Debug) -> bool {
    ffi::lua_getinfo(l, c"S".as_ptr(), ar);
    !(*ar).source.is_null() && {
        let source = std::ffi::CStr::from_ptr((*ar).source).to_bytes();
        source == USER_SOURCE || source == LIBRARY_SOURCE
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    None,
    Into,
    Over { thread: L, depth: c_int },
    Out { thread: L, depth: c_int },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Running with stops.
    Live,
    /// Silent up to `target`, then stop there.
    Replay { target: u64, back: bool },
    /// Silent up to `until`, remembering the last user line (or breakpoint hit) before it.
    Scan { until: u64, breakpoints: bool },
    /// Silent up to mark N (None: the error that ends the script), then live: a stop reached
    /// without the line hook, found again with it.
    Locate { mark: Option<u64> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    Abort,
    Rewind(Mode),
}

/// The clock of a debug run: its readings are recorded on the first pass and given back on
/// replays, so `TIME` answers the same.
pub(crate) struct ReplayClock {
    inner: Box<dyn Clock>,
    log: Arc<Mutex<ClockLog>>,
}

#[derive(Default)]
pub(crate) struct ClockLog {
    values: Vec<i64>,
    pos: usize,
    /// Evals read the real clock and leave the log alone.
    passthrough: bool,
}

impl Clock for ReplayClock {
    fn now_us(&self) -> i64 {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if log.passthrough {
            return self.inner.now_us();
        }
        let pos = log.pos;
        log.pos += 1;
        if let Some(&v) = log.values.get(pos) {
            return v;
        }
        let v = self.inner.now_us();
        log.values.push(v);
        v
    }
}

/// What a replay restores.
struct Snapshot {
    keyspace: Keyspace,
    lrand48: u64,
    cmd_rng: CommandRng,
    cjson: Vec<u8>,
}

pub struct DebugRun {
    pub(crate) session: *mut DebugSession,
    frontend: *mut dyn DebugFrontend,
    pub(crate) core: *mut Core,
    pub(crate) main: L,
    pub(crate) event: u64,
    pub(crate) mode: Mode,
    step: Step,
    start_pending: bool,
    break_next_line: bool,
    temp_line: Option<u32>,
    pending: Option<Pending>,
    pub(crate) in_eval: bool,
    hits: Vec<(u32, u64)>,
    bits: Vec<u64>,
    pub(crate) coverage: Option<Vec<u64>>,
    found: Option<(u64, Option<u32>)>,
    first_user_event: Option<u64>,
    /// Time the script ran (stops and replays excluded).
    pub(crate) active: Duration,
    live_since: Option<Instant>,
    threshold: Option<Duration>,
    trace_seen: usize,
    clock_log: Arc<Mutex<ClockLog>>,
    snapshot: Option<Snapshot>,
    /// Compiled conditions (registry refs) by breakpoint id and text.
    pub(crate) conditions: Vec<(u32, String, c_int)>,
    /// `abort` answered at an error stop: the run ends with LDB's abort error, not the script's.
    aborted_at_error: bool,
    /// Lines with a probe in the chunk this run calls (index = line).
    probe_lines: Vec<bool>,
    /// Is the line hook wanted (set on the running thread and the main one)?
    line_on: bool,
    /// Is `event` the count of line events since the pass started (the line hook never off)?
    pub(crate) event_known: bool,
    /// Probes, commands and `redis.breakpoint()` calls of this pass (what `Mode::Locate` counts).
    marks: u64,
    /// The line event the hook left to the probe of its line.
    deferred: Option<u64>,
    /// What the function a step out left returned (LDB's texts).
    returned: Option<Vec<String>>,
    /// The last two user line events seen with every event since the earlier one checked (`chain`):
    /// a step back from the last one replays straight to the earlier one (no scan pass).
    prev_user: Option<u64>,
    last_user: Option<u64>,
    chain: bool,
}

/// A replay checks the chunk of this many line events before its target, so that the stop there
/// knows the user line event before it.
const NEAR_TARGET: u64 = 64;

impl DebugRun {
    pub(crate) fn new(
        session: &mut DebugSession,
        frontend: &mut dyn DebugFrontend,
    ) -> Box<DebugRun> {
        let frontend: *mut (dyn DebugFrontend + '_) = frontend;
        // The run lives only inside Sandbox::debug, which outlives neither borrow.
        let frontend: *mut (dyn DebugFrontend + 'static) = unsafe { std::mem::transmute(frontend) };
        Box::new(DebugRun {
            session,
            frontend,
            core: std::ptr::null_mut(),
            main: std::ptr::null_mut(),
            event: 0,
            mode: Mode::Live,
            step: Step::None,
            aborted_at_error: false,
            start_pending: false,
            break_next_line: false,
            temp_line: None,
            pending: None,
            in_eval: false,
            hits: Vec::new(),
            bits: Vec::new(),
            coverage: None,
            found: None,
            first_user_event: None,
            active: Duration::ZERO,
            live_since: None,
            threshold: None,
            trace_seen: 0,
            clock_log: Arc::default(),
            snapshot: None,
            conditions: Vec::new(),
            probe_lines: Vec::new(),
            line_on: false,
            event_known: true,
            marks: 0,
            deferred: None,
            returned: None,
            prev_user: None,
            last_user: None,
            chain: true,
        })
    }

    pub(crate) fn arm(run: &mut DebugRun) {
        RUN.with(|c| c.set(run));
    }

    pub(crate) fn disarm() {
        RUN.with(|c| c.set(std::ptr::null_mut()));
    }

    // The session and the core are raw pointers valid for the whole run (Sandbox::debug owns
    // both borrows); the hook reaches them from C the way api.rs reaches Core.
    #[allow(clippy::mut_from_ref)]
    pub(crate) fn session(&self) -> &mut DebugSession {
        unsafe { &mut *self.session }
    }

    #[allow(clippy::mut_from_ref)]
    pub(crate) fn core(&self) -> &mut Core {
        unsafe { &mut *self.core }
    }

    /// The busy threshold of the run, or `default` when it has none.
    pub(crate) fn threshold_or(&self, default: Duration) -> Duration {
        self.threshold.unwrap_or(default)
    }

    pub(crate) fn clock_passthrough(&self, on: bool) {
        self.clock_log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .passthrough = on;
    }

    /// The lines the line hook must watch: breakpoints without a probe, and run-to-line's.
    fn rebuild_bits(&mut self) {
        let session = unsafe { &*self.session };
        let lines = session
            .breakpoints
            .iter()
            .map(|b| b.line)
            .filter(|&line| !self.is_probe(line as c_int))
            .chain(self.temp_line)
            .collect::<Vec<u32>>();
        self.bits.clear();
        for line in lines {
            let word = line as usize / 64;
            if word >= self.bits.len() {
                self.bits.resize(word + 1, 0);
            }
            self.bits[word] |= 1 << (line % 64);
        }
    }

    #[inline]
    fn is_probe(&self, line: c_int) -> bool {
        self.probe_lines
            .get(line as usize)
            .copied()
            .unwrap_or(false)
    }

    fn wants_line_hook(&self) -> bool {
        self.mode != Mode::Live
            || self.pending.is_some()
            || self.step != Step::None
            || self.start_pending
            || self.break_next_line
            || self.coverage.is_some()
            || self.bits.iter().any(|w| *w != 0)
    }

    /// Set the line hook on or off (on the running thread and the main one) as the run needs it.
    fn apply_line_hook(&mut self, l: L) {
        let on = self.wants_line_hook();
        let mut mask = ffi::LUA_MASKCOUNT | if on { ffi::LUA_MASKLINE } else { 0 };
        if matches!(self.step, Step::Out { .. }) {
            // A step out shows what the function returned.
            mask |= ffi::LUA_MASKRET;
        }
        for thread in [l, self.main] {
            unsafe { ffi::lua_sethook(thread, Some(debug_hook), mask, HOOK_EVERY) };
        }
        if !on {
            self.event_known = false;
            self.deferred = None;
            self.chain = false;
        }
        self.line_on = on;
    }

    /// A mark (a probe, a command, a `redis.breakpoint()` call): the point a locating pass looks for.
    fn mark(&mut self) {
        self.marks += 1;
        if self.mode
            == (Mode::Locate {
                mark: Some(self.marks),
            })
        {
            self.mode = Mode::Live;
            self.go_live();
        }
    }

    /// A stop reached without the line hook: find it again with it (its event number).
    unsafe fn locate(&mut self, l: L, mark: Option<u64>) {
        self.pending = Some(Pending::Rewind(Mode::Locate { mark }));
        self.apply_line_hook(l);
    }

    #[inline]
    fn bit(&self, line: c_int) -> bool {
        let line = line as usize;
        self.bits
            .get(line / 64)
            .is_some_and(|w| w & (1 << (line % 64)) != 0)
    }

    fn output(&mut self, out: DebugOutput) {
        if self.mode == Mode::Live && !self.in_eval {
            unsafe { (*self.frontend).output(out) };
        }
    }

    /// Start counting the script's time (and arm the busy threshold with what is left).
    fn go_live(&mut self) {
        let now = Instant::now();
        self.live_since = Some(now);
        let core = self.core();
        core.run.deadline = self.threshold.map(|t| now + t.saturating_sub(self.active));
        // The trace's times and the first write's count the script's time only, not time stopped.
        if let Some(started) = now.checked_sub(self.active) {
            core.run.started = started;
        }
    }

    fn pause_clock(&mut self) {
        if let Some(since) = self.live_since.take() {
            self.active += since.elapsed();
        }
        self.core().run.deadline = None;
    }

    fn begin_pass(&mut self) {
        self.event = 0;
        self.event_known = true;
        self.marks = 0;
        self.deferred = None;
        self.returned = None;
        self.prev_user = None;
        self.last_user = None;
        self.chain = true;
        self.step = Step::None;
        self.break_next_line = false;
        self.hits.clear();
        self.found = None;
        self.first_user_event = None;
        // Locating a stop is no step: the calls since the previous stop are still new there.
        if !matches!(self.mode, Mode::Locate { .. }) {
            self.trace_seen = 0;
        }
        if let Some(c) = &mut self.coverage {
            c.iter_mut().for_each(|n| *n = 0);
        }
        self.clock_log.lock().unwrap_or_else(|e| e.into_inner()).pos = 0;
        self.rebuild_bits();
        if self.mode == Mode::Live {
            self.go_live();
        } else {
            self.core().run.deadline = None;
        }
        self.apply_line_hook(self.main);
    }
}

/// The call of the script under the debugger: stops, and passes replayed for backward steps.
pub(crate) fn call_script(
    vm: &mut Vm,
    core: &mut Core,
    sha: &str,
    request: &RunRequest,
) -> Result<(), ScriptError> {
    call(vm, core, Callee::Script { sha, request })
}

/// The call of a registered function (FCALL) under the debugger. Its library was compiled when
/// it was loaded: its breakpoints use the line hook (no probes).
pub(crate) fn call_function(
    vm: &mut Vm,
    core: &mut Core,
    function_ref: c_int,
    call_args: &FunctionCall,
) -> Result<(), ScriptError> {
    call(
        vm,
        core,
        Callee::Function {
            function_ref,
            call: call_args,
        },
    )
}

/// What a debug run calls: a script (EVAL) or a registered function (FCALL).
#[derive(Clone, Copy)]
enum Callee<'a> {
    Script {
        sha: &'a str,
        request: &'a RunRequest,
    },
    Function {
        function_ref: c_int,
        call: &'a FunctionCall,
    },
}

fn call(vm: &mut Vm, core: &mut Core, callee: Callee<'_>) -> Result<(), ScriptError> {
    let run = current().expect("armed");
    let l = vm.state();
    begin_debug_run(run, core, l);
    let chunk = chunk_to_call(vm, run, core, callee);
    run.mode = Mode::Live;
    let result = loop {
        run.begin_pass();
        let result = match callee {
            Callee::Script { .. } => vm.call_script(&chunk),
            Callee::Function { function_ref, call } => {
                vm.call_function(function_ref, &call.keys, &call.argv)
            }
        };
        run.pause_clock();
        match run.pending.take() {
            Some(Pending::Rewind(mode)) => {
                rewind(vm, run, core, callee);
                run.mode = mode;
            }
            Some(Pending::Abort) if result.is_ok() => {
                // A pcall swallowed the abort and the script returned: the run still ends aborted.
                break Err(ScriptError::Table {
                    err: Some(ABORT_TEXT.as_bytes().to_vec()),
                    source: Some(USER_SOURCE.to_vec()),
                    line: None,
                });
            }
            // Aborted at an error stop: LDB's abort error, at the line that raised.
            _ if run.aborted_at_error => match result {
                Err(ScriptError::Table { source, line, .. }) => {
                    break Err(ScriptError::Table {
                        err: Some(ABORT_TEXT.as_bytes().to_vec()),
                        source,
                        line,
                    })
                }
                other => break other,
            },
            _ => break result,
        }
    };
    end_debug_run(run, core, l);
    result
}

/// Tie the run to the core: the session's start and coverage settings, the snapshot a replay
/// restores, the replaying clock, and commands reported to the debugger.
fn begin_debug_run(run: &mut DebugRun, core: &mut Core, l: L) {
    run.core = core;
    run.main = l;
    run.threshold = core.run.deadline.map(|d| d - core.run.started);
    let session = unsafe { &*run.session };
    run.start_pending = session.stop_at_start;
    run.coverage = session
        .coverage
        .then(|| vec![0; session.line_count() as usize + 2]);
    run.snapshot = Some(Snapshot {
        keyspace: core.keyspace.clone(),
        lrand48: core.lrand48,
        cmd_rng: core.cmd_rng.clone(),
        cjson: unsafe { cjson_config(l, None) },
    });
    let inner = std::mem::replace(&mut core.clock, Box::new(crate::engine::clock::SystemClock));
    core.clock = Box::new(ReplayClock {
        inner,
        log: run.clock_log.clone(),
    });
    core.run.debug_calls = true;
}

/// The chunk with probes on the breakpoint lines (compiled once per set of lines), else the
/// script as it is (its breakpoints then use the line hook); a function is called by reference.
fn chunk_to_call(vm: &mut Vm, run: &mut DebugRun, core: &Core, callee: Callee<'_>) -> String {
    let session = unsafe { &*run.session };
    let probed = match callee {
        Callee::Script { sha, request } => {
            let skip = crate::engine::script::parse_shebang_in(core.profile, &request.script)
                .map_or(0, |(_, len)| len);
            session
                .probed_body(&request.script, skip)
                .map(|probed| (sha, probed))
        }
        Callee::Function { .. } => None,
    };
    match probed {
        Some((sha, (body, lines))) => {
            let key = format!("{sha}+probes{lines:?}");
            match vm.load_script(&key, &body) {
                Ok(()) => {
                    for line in lines {
                        let i = line as usize;
                        if i >= run.probe_lines.len() {
                            run.probe_lines.resize(i + 1, false);
                        }
                        run.probe_lines[i] = true;
                    }
                    key
                }
                Err(_) => sha.to_string(),
            }
        }
        None => match callee {
            Callee::Script { sha, .. } => sha.to_string(),
            Callee::Function { .. } => String::new(),
        },
    }
}

/// Put everything the run changed back as the snapshot has it, for the next pass.
fn rewind(vm: &mut Vm, run: &mut DebugRun, core: &mut Core, callee: Callee<'_>) {
    let l = vm.state();
    unsafe { ffi::lua_settop(l, 0) };
    let snap = run.snapshot.as_ref().expect("snapshot");
    core.keyspace = snap.keyspace.clone();
    core.lrand48 = snap.lrand48;
    core.cmd_rng = snap.cmd_rng.clone();
    unsafe { cjson_config(l, Some(&snap.cjson)) };
    core.run.restart_pass();
    if let Callee::Script { request, .. } = callee {
        vm.set_keys_and_argv(&request.keys, &request.argv);
    }
}

/// Give the sandbox its own clock back and release the conditions' Lua references.
fn end_debug_run(run: &mut DebugRun, core: &mut Core, l: L) {
    core.run.debug_calls = false;
    let clock = std::mem::replace(&mut core.clock, Box::new(crate::engine::clock::SystemClock));
    let any: Box<dyn std::any::Any> = unsafe { into_any(clock) };
    if let Ok(replay) = any.downcast::<ReplayClock>() {
        core.clock = replay.inner;
    }
    for (_, _, r) in run.conditions.drain(..) {
        unsafe { ffi::luaL_unref(l, ffi::LUA_REGISTRYINDEX, r) };
    }
}

/// The boxed clock we installed is a ReplayClock; recover it as such.
unsafe fn into_any(clock: Box<dyn Clock>) -> Box<dyn std::any::Any> {
    let raw = Box::into_raw(clock) as *mut ReplayClock;
    Box::from_raw(raw)
}

pub(crate) unsafe fn cjson_snapshot(l: L) -> Vec<u8> {
    cjson_config(l, None)
}

pub(crate) unsafe fn cjson_restore(l: L, bytes: &[u8]) {
    cjson_config(l, Some(bytes));
}

/// Read (or, with `restore`, write back) the main cjson instance's settings: the userdata
/// upvalue of `cjson.encode`.
unsafe fn cjson_config(l: L, restore: Option<&[u8]>) -> Vec<u8> {
    let top = ffi::lua_gettop(l);
    let mut out = Vec::new();
    ffi::lua_getfield(l, ffi::LUA_GLOBALSINDEX, c"cjson".as_ptr());
    if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
        ffi::lua_getfield(l, -1, c"encode".as_ptr());
        if !ffi::lua_getupvalue(l, -1, 1).is_null() && ffi::lua_type(l, -1) == ffi::LUA_TUSERDATA {
            let p = ffi::lua_touserdata(l, -1) as *mut u8;
            let n = ffi::lua_objlen(l, -1);
            match restore {
                Some(bytes) if bytes.len() == n => {
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, n)
                }
                Some(_) => {}
                None => out.extend_from_slice(std::slice::from_raw_parts(p, n)),
            }
        }
    }
    ffi::lua_settop(l, top);
    out
}

/// The line hook (and the count hook's busy-threshold checks) of a debug run.
pub(crate) unsafe extern "C-unwind" fn debug_hook(l: L, ar: *mut ffi::lua_Debug) {
    let Some(run) = current() else {
        return api::stop_hook(l, ar);
    };
    if (*ar).event == ffi::LUA_HOOKRET {
        return on_return(run, l, ar);
    }
    if (*ar).event != ffi::LUA_HOOKLINE {
        return api::stop_hook(l, ar);
    }
    if run.in_eval {
        return;
    }
    if !run.line_on && run.pending.is_none() && run.mode == Mode::Live {
        // A coroutine created while the hook was on keeps it: off there too.
        ffi::lua_sethook(l, Some(debug_hook), ffi::LUA_MASKCOUNT, HOOK_EVERY);
        return;
    }
    if let Some(pending) = run.pending {
        // Keep raising (a pcall must not swallow an abort or a rewind), but never inside
        // evalbench's own helpers (the error handler must run).
        if ffi::lua_getinfo(l, c"S".as_ptr(), ar) != 0
            && !(*ar).source.is_null()
            && std::ffi::CStr::from_ptr((*ar).source).to_bytes() == b"=evalbench"
        {
            return;
        }
        push_stop_error(l, pending);
        ffi::lua_error(l);
    }
    run.event += 1;
    let line = (*ar).currentline;
    if let Mode::Scan { until, .. } = run.mode {
        if run.event >= until {
            let target = run
                .found
                .map(|(e, _)| e)
                .or(run.first_user_event)
                .unwrap_or(1);
            run.pending = Some(Pending::Rewind(Mode::Replay { target, back: true }));
            push_stop_error(l, Pending::Abort);
            ffi::lua_error(l);
        }
    }
    if run.is_probe(line) && is_user(l, ar) {
        // The probe that starts this line does the rest, as a mark.
        run.deferred = Some(run.event);
        return;
    }
    at_line(run, l, ar, 0, line);
}

/// The first fields of Lua 5.1's `lua_State` (lstate.h), to read `savedpc` in a return hook.
#[repr(C)]
struct RawState {
    next: *mut std::ffi::c_void,
    tt: u8,
    marked: u8,
    status: u8,
    top: *mut std::ffi::c_void,
    base: *mut std::ffi::c_void,
    l_g: *mut std::ffi::c_void,
    ci: *mut std::ffi::c_void,
    savedpc: *const u32,
}

/// Lua 5.1's `OP_RETURN` (lopcodes.h).
const OP_RETURN: u32 = 30;

/// A function returns: when it is the one a step out leaves, keep its return values. In the hook
/// the stack holds the function's registers up to the last result; `RETURN A B` (the instruction
/// before `savedpc`) says the results start at register A.
unsafe fn on_return(run: &mut DebugRun, l: L, ar: *mut ffi::lua_Debug) {
    let Step::Out { thread, depth } = run.step else {
        return;
    };
    if run.in_eval || run.mode != Mode::Live || l != thread || depth_of(ar) != depth {
        return;
    }
    // The first return at that depth is the function's (later ones are other calls).
    if run.returned.is_some() || !is_user(l, ar) {
        return;
    }
    let pc = (*(l as *const RawState)).savedpc;
    if pc.is_null() {
        return;
    }
    let instruction = *pc.sub(1);
    if instruction & 0x3f != OP_RETURN {
        return;
    }
    let first = ((instruction >> 6) & 0xff) as c_int + 1;
    let maxlen = run.session().maxlen;
    let top = ffi::lua_gettop(l);
    run.returned = Some(
        (first..=top)
            .map(|i| super::inspect::ldb_repr(l, i, maxlen))
            .collect(),
    );
}

/// A line event of the script at `level` (0: in the hook, 1: in a probe): stops, coverage, scans.
unsafe fn at_line(run: &mut DebugRun, l: L, ar: *mut ffi::lua_Debug, level: c_int, line: c_int) {
    let arrive = match run.mode {
        Mode::Replay { target, .. } => run.event >= target,
        _ => false,
    };
    let scanning = matches!(run.mode, Mode::Scan { .. });
    let near = matches!(run.mode, Mode::Replay { target, .. } if target.saturating_sub(run.event) <= NEAR_TARGET);
    let probe = level > 0;
    let candidate = arrive
        || near
        || scanning
        || probe
        || run.step != Step::None
        || run.start_pending
        || run.break_next_line
        || run.coverage.is_some()
        || run.bit(line);
    if !candidate {
        run.chain = false;
        return;
    }
    if !probe && !is_user(l, ar) {
        return;
    }
    run.prev_user = if run.chain { run.last_user } else { None };
    run.last_user = Some(run.event);
    run.chain = true;
    let line = line.max(0) as u32;
    if run.first_user_event.is_none() {
        run.first_user_event = Some(run.event);
    }
    if let Some(c) = &mut run.coverage {
        if let Some(n) = c.get_mut(line as usize) {
            *n += 1;
        }
    }
    let mut reason = None;
    if run.start_pending {
        run.start_pending = false;
        reason = Some(StopReason::Start);
    }
    if run.break_next_line {
        run.break_next_line = false;
        reason = reason.or(Some(StopReason::RedisBreakpoint));
    }
    if probe || run.bit(line as c_int) {
        if run.temp_line == Some(line) {
            run.temp_line = None;
            reason = reason.or(Some(StopReason::Step));
        }
        if let Some(id) = breakpoint_hit(run, l, level, line) {
            reason = reason.or(Some(StopReason::Breakpoint { id }));
        }
    }
    match run.step {
        Step::None => {}
        Step::Into => reason = reason.or(Some(StopReason::Step)),
        Step::Over { thread, depth } | Step::Out { thread, depth } => {
            let out = matches!(run.step, Step::Out { .. });
            let d = depth_of(ar);
            let back = if l == thread {
                if out {
                    d < depth
                } else {
                    d <= depth
                }
            } else {
                l == run.main
            };
            if back {
                reason = reason.or(Some(StopReason::Step));
            }
        }
    }
    match run.mode {
        Mode::Live => {}
        Mode::Replay { back, .. } => {
            if !arrive {
                return;
            }
            run.mode = Mode::Live;
            run.go_live();
            let why = match reason {
                Some(r @ StopReason::Breakpoint { .. }) if back => r,
                _ => StopReason::Step,
            };
            reason = Some(why);
        }
        Mode::Scan { breakpoints, .. } => {
            let hit = matches!(reason, Some(StopReason::Breakpoint { .. }));
            if !breakpoints || hit {
                run.found = Some((run.event, None));
            }
            return;
        }
        Mode::Locate { .. } => return,
    }
    if let Some(reason) = reason {
        if stop(run, l, level, reason) {
            let pending = run.pending.expect("a raise is pending");
            push_stop_error(l, pending);
            ffi::lua_error(l);
        }
    }
}

unsafe fn push_stop_error(l: L, pending: Pending) {
    let text = match pending {
        Pending::Abort => ABORT_TEXT,
        Pending::Rewind(_) => REWIND_TEXT,
    };
    let mut buf = Vec::with_capacity(text.len() + 1);
    buf.push(b'-');
    buf.extend_from_slice(text.as_bytes());
    push_error_table(l, &buf, false);
}

/// Does a breakpoint on `line` stop here (its condition true, its hit count reached)?
unsafe fn breakpoint_hit(run: &mut DebugRun, l: L, level: c_int, line: u32) -> Option<u32> {
    let bp = run.session().breakpoint_at(line)?.clone();
    if let Some(cond) = &bp.condition {
        match super::eval::condition(run, l, level, bp.id, cond) {
            Ok(false) => return None,
            Ok(true) => {}
            Err(message) => {
                // A condition that raises stops, so the user sees why.
                run.output(DebugOutput::Note(format!(
                    "breakpoint at line {line}: the condition raised: {message}"
                )));
            }
        }
    }
    let hits = match run.hits.iter_mut().find(|(id, _)| *id == bp.id) {
        Some((_, n)) => {
            *n += 1;
            *n
        }
        None => {
            run.hits.push((bp.id, 1));
            1
        }
    };
    (hits >= bp.hit_count.unwrap_or(1)).then_some(bp.id)
}

/// Hit counts of this pass, by breakpoint id.
pub(crate) fn hits_of(run: &DebugRun, id: u32) -> u64 {
    run.hits
        .iter()
        .find(|(i, _)| *i == id)
        .map_or(0, |(_, n)| *n)
}

/// Stop: ask the front end, apply its answer. Returns true when the caller must raise
/// (`run.pending` says what).
unsafe fn stop(run: &mut DebugRun, l: L, base_level: c_int, reason: StopReason) -> bool {
    run.pause_clock();
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    let (line, depth) = if ffi::lua_getstack(l, base_level, &mut ar) != 0 {
        ffi::lua_getinfo(l, c"l".as_ptr(), &mut ar);
        (ar.currentline.max(0) as u32, depth_of(&ar))
    } else {
        (0, 0)
    };
    let trace_from = run.trace_seen;
    run.trace_seen = run.core().run.trace.len();
    let frontend = run.frontend;
    let returned = run.returned.take();
    let mut stop = Stop {
        run,
        l,
        base_level,
        line,
        reason,
        trace_from,
        returned,
    };
    let resume = (*frontend).stopped(&mut stop);
    run.rebuild_bits();
    run.step = Step::None;
    let mut raise = false;
    match resume {
        Resume::StepInto => run.step = Step::Into,
        Resume::StepOver => run.step = Step::Over { thread: l, depth },
        Resume::StepOut => run.step = Step::Out { thread: l, depth },
        Resume::Continue => {}
        Resume::RunToLine(n) => {
            run.temp_line = run.session().next_code_line(n);
            run.rebuild_bits();
        }
        Resume::Abort => {
            run.pending = Some(Pending::Abort);
            raise = true;
        }
        Resume::StepBack => {
            let mode =
                if let (Some(target), true) = (run.prev_user, run.last_user == Some(run.event)) {
                    // The user line event before this one is known: one replay, no scan.
                    Mode::Replay { target, back: true }
                } else if run.event > 1 {
                    Mode::Scan {
                        until: run.event,
                        breakpoints: false,
                    }
                } else {
                    Mode::Replay {
                        target: 1,
                        back: true,
                    }
                };
            run.pending = Some(Pending::Rewind(mode));
            raise = true;
        }
        Resume::ReverseContinue => {
            run.pending = Some(Pending::Rewind(Mode::Scan {
                until: run.event,
                breakpoints: true,
            }));
            raise = true;
        }
        Resume::GotoEvent(n) => {
            run.pending = Some(Pending::Rewind(Mode::Replay {
                target: n.max(1),
                back: false,
            }));
            raise = true;
        }
    }
    if !raise {
        run.go_live();
    }
    run.apply_line_hook(l);
    raise
}

/// Called by Redis's error handler (vm.rs) before it records the error's position: an error
/// that ends the script, with the raising frames still on the stack.
pub(crate) unsafe fn on_script_error(l: L) -> c_int {
    let Some(run) = current() else { return 0 };
    if run.in_eval
        || run.pending.is_some()
        || run.core.is_null()
        || run.core().run.stopped.is_some()
        || !run.session().break_on_error
    {
        return 0;
    }
    match run.mode {
        Mode::Live => {}
        Mode::Locate { mark: None } => {
            run.mode = Mode::Live;
            run.go_live();
        }
        _ => return 0,
    }
    if !run.event_known {
        // The error ends this pass; the next one finds it with the line hook.
        run.locate(l, None);
        return 0;
    }
    let message = match ffi::lua_type(l, 1) {
        ffi::LUA_TSTRING | ffi::LUA_TNUMBER => {
            String::from_utf8_lossy(raw::to_bytes(l, 1).unwrap_or_default()).into_owned()
        }
        ffi::LUA_TTABLE => {
            ffi::lua_pushstring(l, c"err".as_ptr());
            ffi::lua_rawget(l, 1);
            let m = raw::to_bytes(l, -1)
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_else(|| "(an error table without err)".into());
            ffi::lua_pop(l, 1);
            m
        }
        _ => "(an error that is not a string)".into(),
    };
    // Level 0: this function, 1: the handler, 2: what raised (a C function or the script).
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    let mut level = 2;
    while ffi::lua_getstack(l, level, &mut ar) != 0 {
        if is_user(l, &mut ar) {
            break;
        }
        level += 1;
    }
    if ffi::lua_getstack(l, level, &mut ar) == 0 {
        return 0;
    }
    // The error ends the script whatever the answer: a rewind is applied after it; an abort
    // replaces the script's error with LDB's when the run ends (the handler goes on as usual).
    stop(run, l, level, StopReason::Error { message });
    if run.pending == Some(Pending::Abort) {
        run.pending = None;
        run.aborted_at_error = true;
    }
    0
}

/// `redis.call`/`redis.pcall` in a debug run, before the command runs: `break CMD` and `bw KEY`.
/// Some(raise) when the run must end or rewind.
pub(crate) unsafe fn before_call(l: L, args: &[Vec<u8>]) -> Option<Raise> {
    let run = current()?;
    if run.in_eval {
        return None;
    }
    run.mark();
    if run.mode != Mode::Live || run.pending.is_some() {
        return None;
    }
    let session = run.session();
    if session.command_breaks.is_empty() && session.key_write_breaks.is_empty() {
        return None;
    }
    let name = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
    let mut reason = session
        .command_breaks
        .contains(&name)
        .then(|| StopReason::Command { name: name.clone() });
    if reason.is_none() && !session.key_write_breaks.is_empty() {
        if let Ok(resolved) = crate::engine::commands::resolve(args) {
            if resolved.info.is_write() {
                reason = resolved
                    .key_positions(args)
                    .into_iter()
                    .filter_map(|i| args.get(i))
                    .find(|k| session.key_write_breaks.contains(k))
                    .map(|k| StopReason::KeyWrite { key: k.clone() });
            }
        }
    }
    let reason = reason?;
    if !run.event_known {
        run.locate(l, Some(run.marks));
        push_stop_error(l, run.pending.expect("pending"));
        return Some(Raise::OnStack);
    }
    // Level 0 is redis.call itself: the script's frame is the next user frame.
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    let mut level = 1;
    while ffi::lua_getstack(l, level, &mut ar) != 0 && !is_user(l, &mut ar) {
        level += 1;
    }
    if stop(run, l, level, reason) {
        push_stop_error(l, run.pending.expect("pending"));
        return Some(Raise::OnStack);
    }
    None
}

/// `redis.breakpoint()`: true in a debug run, and the next line stops. Called with the number
/// of the line it is on, on a line with a probe, it is that probe.
pub(crate) unsafe fn redis_breakpoint(l: L) -> c_int {
    let active = match current() {
        Some(run) if !run.in_eval => {
            if let Some(line) = probe_line(run, l) {
                return probe(run, l, line);
            }
            run.mark();
            run.break_next_line = true;
            if run.mode == Mode::Live && !run.event_known {
                run.locate(l, Some(run.marks));
                push_stop_error(l, run.pending.expect("pending"));
                ffi::lua_error(l);
            }
            run.apply_line_hook(l);
            true
        }
        Some(_) => true,
        None => false,
    };
    ffi::lua_pushboolean(l, active as c_int);
    1
}

/// Is this `redis.breakpoint(N)` call a probe: N the line it is on, a line with a probe?
unsafe fn probe_line(run: &DebugRun, l: L) -> Option<c_int> {
    if ffi::lua_gettop(l) != 1 || ffi::lua_type(l, 1) != ffi::LUA_TNUMBER {
        return None;
    }
    let line = ffi::lua_tointeger(l, 1) as c_int;
    if !run.is_probe(line) {
        return None;
    }
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    if ffi::lua_getstack(l, 1, &mut ar) == 0 || !is_user(l, &mut ar) {
        return None;
    }
    ffi::lua_getinfo(l, c"l".as_ptr(), &mut ar);
    (ar.currentline == line).then_some(line)
}

/// A probe: the line event of its line (left by the line hook), or, with the line hook off, the
/// breakpoint's check.
unsafe fn probe(run: &mut DebugRun, l: L, line: c_int) -> c_int {
    run.mark();
    if let Some(pending) = run.pending {
        push_stop_error(l, pending);
        ffi::lua_error(l);
    }
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    ffi::lua_getstack(l, 1, &mut ar);
    let deferred = run.deferred.take();
    if run.line_on && deferred == Some(run.event) {
        at_line(run, l, &mut ar, 1, line);
        return 0;
    }
    if run.mode != Mode::Live {
        return 0;
    }
    if let Some(id) = breakpoint_hit(run, l, 1, line as u32) {
        if !run.event_known {
            run.locate(l, Some(run.marks));
        } else if !stop(run, l, 1, StopReason::Breakpoint { id }) {
            return 0;
        }
        push_stop_error(l, run.pending.expect("pending"));
        ffi::lua_error(l);
    }
    0
}

/// `redis.debug(...)`: the arguments as LDB shows them, to the front end's console.
pub(crate) unsafe fn redis_debug(l: L) -> c_int {
    let Some(run) = current() else { return 0 };
    if run.mode != Mode::Live || run.in_eval {
        return 0;
    }
    let maxlen = run.session().maxlen;
    let argc = ffi::lua_gettop(l);
    let parts: Vec<String> = (1..=argc)
        .map(|i| super::inspect::ldb_repr(l, i, maxlen))
        .collect();
    let line = api::caller_line(l);
    run.output(DebugOutput::Debug {
        line,
        text: parts.join(", "),
    });
    0
}

/// A paused run: what the front end may look at and do while the script is stopped.
pub struct Stop<'a> {
    pub(crate) run: &'a mut DebugRun,
    pub(crate) l: L,
    /// Lua level of the innermost user frame.
    pub(crate) base_level: c_int,
    line: u32,
    reason: StopReason,
    trace_from: usize,
    returned: Option<Vec<String>>,
}

impl Stop<'_> {
    pub fn line(&self) -> u32 {
        self.line
    }

    pub fn reason(&self) -> &StopReason {
        &self.reason
    }

    /// After a step out (`finish`): what the function it left returned, as LDB prints values.
    pub fn returned(&self) -> Option<&[String]> {
        self.returned.as_deref()
    }

    /// The line event this stop is at (see `Resume::GotoEvent`).
    pub fn event(&self) -> u64 {
        self.run.event
    }

    pub fn session(&mut self) -> &mut DebugSession {
        self.run.session()
    }

    /// The keyspace as it is now.
    pub fn keyspace(&self) -> &Keyspace {
        &self.run.core().keyspace
    }

    /// The trace so far.
    pub fn trace(&self) -> &[crate::engine::report::TraceEntry] {
        &self.run.core().run.trace
    }

    /// The calls made since the previous stop.
    pub fn new_calls(&self) -> &[crate::engine::report::TraceEntry] {
        let trace = &self.run.core().run.trace;
        &trace[self.trace_from.min(trace.len())..]
    }

    /// How often each breakpoint was hit in this pass.
    pub fn hits(&self, id: u32) -> u64 {
        hits_of(self.run, id)
    }

    /// The script's running time so far (stops and replays excluded).
    pub fn active_time(&self) -> Duration {
        self.run.active
    }
}
