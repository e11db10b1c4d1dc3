//! The embedded sandbox: one Lua VM reused across runs, the mocked keyspace, the run loop.

use super::clock::{Clock, SystemClock};
use super::keyspace::{Db, Keyspace};
use super::lint;
use super::lua::api::{self, Core, RunScratch, StopReason};
use super::lua::convert::ReturnConverter;
use super::lua::vm::{ScriptError, Vm};
use super::profile::Profile;
use super::reply::{Protocol, Reply};
use super::report::{Note, Outcome, RunReport, Warning, WarningKind};
use super::script::{parse_shebang_in, raised_error_text_in, sha1_hex};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Redis's `busy-reply-threshold` default.
pub const DEFAULT_BUSY_THRESHOLD_MS: u64 = 5000;
/// The sandbox's memory budget: Lua's memory and everything else a run allocates (keyspace,
/// trace, reply, report, snapshots) together — see engine/budget.rs. Redis has none; this keeps
/// a runaway from taking the machine.
pub const DEFAULT_MEMORY_LIMIT: usize = super::budget::DEFAULT_MEMORY_BUDGET;
/// A purge that looked at this many keys or more is left out of the run's time (one clock read
/// more; a small keyspace's pass is cheaper than the read).
const PURGE_OUTSIDE_THE_RUN_FROM: usize = 4096;

#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// The script is stopped with Redis's kill error once it runs this long (0: never).
    pub busy_threshold_ms: u64,
    /// The memory budget in bytes (see `DEFAULT_MEMORY_LIMIT`).
    pub memory_limit: usize,
    /// Record a trace entry for every call and describe the returned Lua value (cheap; off only
    /// for benchmarks and bulk runs).
    pub tracing: bool,
    /// Keep database 0 after every write, so a UI can step through the run.
    pub snapshots: bool,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            busy_threshold_ms: DEFAULT_BUSY_THRESHOLD_MS,
            memory_limit: super::budget::limit(),
            tracing: true,
            snapshots: false,
        }
    }
}

// The requests are data below the runtime (the debugger reads them too).
pub use super::request::{FunctionCall, RunRequest};

pub struct Sandbox {
    vm: Vm,
    /// The last script and its SHA1: rerunning a script does not hash it again.
    last_sha: Option<(Vec<u8>, String)>,
    core: Box<Core>,
    pub config: SandboxConfig,
    /// Stops a run past its deadline that the hooks cannot reach (engine/lua/watchdog.rs).
    watch: std::sync::Arc<super::lua::watchdog::Watch>,
    /// Loaded function libraries and their Lua state (engine/function).
    functions: super::function::Functions,
    /// The script cache as a client sees it: each script run or loaded, by SHA1, for EVALSHA.
    /// A script counts only while the VM holds it compiled (it drops them all when Lua's memory
    /// runs out, as SCRIPT FLUSH does).
    scripts: rustc_hash::FxHashMap<String, Vec<u8>>,
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new()
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox::with_clock(Box::new(SystemClock))
    }

    pub fn with_clock(clock: Box<dyn Clock>) -> Sandbox {
        super::commands::warm_up(super::profile::DEFAULT);
        let config = SandboxConfig::default();
        let core = Box::new(Core {
            keyspace: Keyspace::new(),
            cmd_rng: Default::default(),
            lrand48: api::LRAND48_INITIAL,
            clock,
            run: RunScratch::new(),
            arg_pool: Vec::new(),
            spare_args: Vec::new(),
            resolve_cache: Default::default(),
            profile: super::profile::DEFAULT,
        });
        Sandbox {
            vm: Vm::new(config.memory_limit),
            last_sha: None,
            core,
            config,
            watch: super::lua::watchdog::Watch::new(),
            functions: Default::default(),
            scripts: Default::default(),
        }
    }

    /// The server profile runs imitate.
    pub fn profile(&self) -> &'static Profile {
        self.core.profile
    }

    /// Imitate another server: its command table, globals, number formatting and error texts.
    /// The VM starts over (as SCRIPT FLUSH); the keyspace stays.
    pub fn set_profile(&mut self, profile: &'static Profile) {
        if std::ptr::eq(self.core.profile, profile) {
            return;
        }
        super::commands::warm_up(profile);
        self.core.profile = profile;
        self.vm = Vm::with_profile(self.vm.memory_limit(), profile);
        // Function libraries follow the profile too.
        self.functions
            .set_profile(profile, self.config.memory_limit);
        self.last_sha = None;
        self.scripts.clear();
    }

    pub fn keyspace(&self) -> &Keyspace {
        &self.core.keyspace
    }

    pub fn keyspace_mut(&mut self) -> &mut Keyspace {
        &mut self.core.keyspace
    }

    /// Replace database 0 (the caller's database) with `db`, a seed: its sets and lists take the
    /// encodings seeding this profile's server gives them (7.2+ listpacks).
    pub fn set_db0(&mut self, mut db: Db) {
        db.encode_as_seeded(self.core.profile.listpack_collections);
        *self.core.keyspace.db_mut(0) = db;
    }

    pub fn now_ms(&self) -> i64 {
        self.core.clock.now_ms()
    }

    /// SCRIPT FLUSH: forget compiled scripts and recreate the VM (resets cjson settings, not the RNG).
    pub fn script_flush(&mut self) {
        self.vm.flush();
        self.scripts.clear();
    }

    pub fn has_script(&self, sha: &str) -> bool {
        self.vm.has_script(sha)
    }

    /// SCRIPT LOAD: compile the script into the cache without running it; its SHA1, or the
    /// error the server gives (a bad shebang, `ERR Error compiling script ...`).
    pub fn script_load(&mut self, script: &[u8]) -> Result<String, String> {
        let sha = sha1_hex(script);
        let (_, shebang_len) = parse_shebang_in(self.core.profile, script)?;
        if let Err(e) = self.vm.load_script(&sha, &script[shebang_len..]) {
            return Err(
                format!("ERR Error compiling script (new function): {}", e.0)
                    .replace(['\r', '\n'], " "),
            );
        }
        self.scripts.insert(sha.clone(), script.to_vec());
        Ok(sha)
    }

    /// SCRIPT EXISTS: whether each SHA1 (in any case, as the server compares them) is cached.
    pub fn script_exists(&self, shas: &[&str]) -> Vec<bool> {
        shas.iter()
            .map(|sha| self.cached(&sha.to_ascii_lowercase()).is_some())
            .collect()
    }

    fn cached(&self, sha: &str) -> Option<&Vec<u8>> {
        self.scripts.get(sha).filter(|_| self.vm.has_script(sha))
    }

    /// EVALSHA (or EVALSHA_RO with `read_only`): the cached script of that SHA1 run as EVAL
    /// runs it, or the profile's server's NOSCRIPT error when the cache does not hold it (never
    /// loaded, flushed, a profile change or a dropped cache: what a client sees after a restart
    /// or a failover).
    pub fn evalsha(
        &mut self,
        sha: &str,
        keys: Vec<Vec<u8>>,
        argv: Vec<Vec<u8>>,
        protocol: Protocol,
        read_only: bool,
    ) -> RunReport {
        let sha = sha.to_ascii_lowercase();
        let Some(script) = self.cached(&sha).cloned() else {
            let text = self.core.profile.noscript_reply.to_string();
            return self.refused(sha, protocol, text);
        };
        self.run(&RunRequest {
            script,
            keys,
            argv,
            protocol,
            read_only,
        })
    }

    /// Set to true from another thread to stop the running script (or the next one, when none runs
    /// yet); the run it stops clears it.
    pub fn cancel_handle(&self) -> Arc<AtomicBool> {
        self.core.run.cancel.clone()
    }

    pub fn lua_memory_used(&self) -> usize {
        self.vm.memory_used()
    }

    fn refused(&self, sha: String, protocol: Protocol, text: String) -> RunReport {
        RunReport {
            profile: self.core.profile.id,
            ..RunReport::refused(sha, text, protocol, self.config.busy_threshold_ms)
        }
    }

    /// Run a script as `EVAL` (or `EVAL_RO`) would, and report everything about the run.
    pub fn run(&mut self, request: &RunRequest) -> RunReport {
        let sha = match &self.last_sha {
            Some((script, sha)) if *script == request.script => sha.clone(),
            _ => {
                let sha = sha1_hex(&request.script);
                self.last_sha = Some((request.script.clone(), sha.clone()));
                sha
            }
        };
        let (flags, shebang_len) = match parse_shebang_in(self.core.profile, &request.script) {
            Ok(parsed) => parsed,
            Err(text) => return self.refused(sha, request.protocol, text),
        };
        if request.read_only && flags.shebang && !flags.no_writes {
            return self.refused(
                sha,
                request.protocol,
                "ERR Can not execute a script with write flag using *_ro command.".into(),
            );
        }
        if let Err(e) = self.vm.load_script(&sha, &request.script[shebang_len..]) {
            let text = format!("ERR Error compiling script (new function): {}", e.0)
                .replace(['\r', '\n'], " ");
            let mut report = self.refused(sha, request.protocol, text);
            // Marked at its line, as a runtime error is.
            report.error_line = report.compile_error_line();
            return report;
        }
        // An EVAL caches its script for EVALSHA too.
        if !self.scripts.contains_key(&sha) {
            self.scripts.insert(sha.clone(), request.script.clone());
        }
        self.vm.set_keys_and_argv(&request.keys, &request.argv);
        let refuse_writes = flags.no_writes || request.read_only;
        self.execute(Target::Script(request), sha, refuse_writes)
    }

    /// Run a script or a function on its VM and report everything about the run.
    fn execute(&mut self, target: Target<'_>, sha: String, refuse_writes: bool) -> RunReport {
        let (keys, protocol, label) = match target {
            Target::Script(request) => (&request.keys, request.protocol, sha.as_str()),
            Target::Function { call, .. } => (&call.keys, call.protocol, call.name.as_str()),
        };
        let Sandbox {
            vm: script_vm,
            core,
            config,
            watch,
            functions,
            ..
        } = self;
        let vm = match target {
            Target::Script(_) => script_vm,
            Target::Function { .. } => functions.vm(config.memory_limit).vm(),
        };
        let started = begin_run(vm, core, config, refuse_writes);
        let result = call_target(vm, core, watch, target, &sha);
        let result = stop_stays_stopped(vm, core, result);
        let mut warnings = Vec::new();
        let ending = conclude(vm, core, config, label, result, &mut warnings);
        let elapsed_ns = started.elapsed().as_nanos() as u64;
        let run = end_run(vm, core, started);
        warnings.extend(run_warnings(&run, ending.outcome, config));
        warnings.extend(lint::warnings(
            keys,
            &run.trace,
            ending.outcome,
            ending.error_line,
            run.first_write_ns.is_some(),
        ));
        RunReport {
            profile: core.profile.id,
            sha1: sha,
            reply: ending.reply,
            protocol,
            notes: ending.notes,
            trace: run.trace,
            elapsed_ns,
            round_trip_ns: None,
            first_write_ns: run.first_write_ns,
            busy_threshold_ms: config.busy_threshold_ms,
            warnings,
            logs: run.logs,
            snapshots: run.snapshots,
            lua_value: ending.lua_value,
            outcome: ending.outcome,
            error_line: ending.error_line,
        }
    }

    /// `FUNCTION LOAD [REPLACE] code`: the library's name, or the error reply's text.
    pub fn function_load(&mut self, code: &[u8], replace: bool) -> Result<String, String> {
        self.functions.load(code, replace, self.config.memory_limit)
    }

    /// FUNCTION DELETE: `Err` is the error reply's text.
    pub fn function_delete(&mut self, library: &str) -> Result<(), String> {
        self.functions.delete(library)
    }

    /// FUNCTION FLUSH.
    pub fn function_flush(&mut self) {
        self.functions.flush();
    }

    /// The loaded libraries (FUNCTION LIST), by name.
    pub fn function_libraries(&self) -> Vec<&super::function::LibraryInfo> {
        self.functions.libraries().collect()
    }

    /// Call a loaded function as `FCALL` (or `FCALL_RO`) would, and report everything about the
    /// run. The report's `sha1` is the SHA1 of the function's library code.
    pub fn fcall(&mut self, call: &FunctionCall) -> RunReport {
        let found = self.functions.find(&call.name).map(|f| {
            let code = self
                .functions
                .libraries()
                .find(|lib| lib.name == f.library)
                .map(|lib| lib.code.as_slice())
                .unwrap_or_default();
            (f.function_ref, f.flags, sha1_hex(code))
        });
        let Some((function_ref, flags, sha)) = found else {
            return self.refused(
                String::new(),
                call.protocol,
                "ERR Function not found".into(),
            );
        };
        if call.read_only && !flags.no_writes {
            return self.refused(
                sha,
                call.protocol,
                "ERR Can not execute a script with write flag using *_ro command.".into(),
            );
        }
        let refuse_writes = flags.no_writes || call.read_only;
        self.execute(Target::Function { function_ref, call }, sha, refuse_writes)
    }

    /// Run a script under the debugger (engine/debug): like `run`, stopping where `session` says
    /// and asking `frontend` what to do at each stop.
    pub fn debug(
        &mut self,
        request: &RunRequest,
        session: &mut super::debug::DebugSession,
        frontend: &mut dyn super::debug::DebugFrontend,
    ) -> super::debug::DebugReport {
        super::debug::armed(session, frontend, || self.run(request))
    }

    /// Call a loaded function (FCALL) under the debugger; `session` from
    /// `DebugSession::for_library` on its library.
    pub fn debug_function(
        &mut self,
        call: &FunctionCall,
        session: &mut super::debug::DebugSession,
        frontend: &mut dyn super::debug::DebugFrontend,
    ) -> super::debug::DebugReport {
        super::debug::armed(session, frontend, || self.fcall(call))
    }
}

/// What `execute` runs: an EVAL's compiled script, or a registered function (FCALL).
#[derive(Clone, Copy)]
enum Target<'a> {
    Script(&'a RunRequest),
    Function {
        function_ref: std::ffi::c_int,
        call: &'a FunctionCall,
    },
}

/// How a run ended, before its records are taken out of the core.
struct Ending {
    reply: Reply,
    notes: Vec<Note>,
    outcome: Outcome,
    error_line: Option<u32>,
    lua_value: Option<String>,
}

/// Set up the core for a run on `vm`: limits current, expired keys gone, fresh scratch, the Lua
/// API pointed at the core. The run's start, which the purge of a big keyspace does not count.
fn begin_run(vm: &mut Vm, core: &mut Core, config: &SandboxConfig, refuse_writes: bool) -> Instant {
    vm.set_memory_limit(config.memory_limit);
    // Lua's allocator adds the last counted Rust figure: make it current.
    super::budget::refresh();

    let mut started = Instant::now();
    let now_ms = core.clock.now_ms_at(started);
    // Keys that expired between runs are gone, as Redis's active expiry would have them. A
    // pass over a big keyspace is that background work, not the script's time.
    if core.keyspace.purge_expired(now_ms) >= PURGE_OUTSIDE_THE_RUN_FROM {
        started = Instant::now();
    }
    // The stop flag is not cleared here: a cancel that lands between a caller handing out the
    // flag and this run starting must still stop it. The run that a cancel stopped consumes it.
    let cancel = core.run.cancel.clone();
    core.run = RunScratch {
        active: true,
        now_ms,
        refuse_writes,
        started,
        deadline: (config.busy_threshold_ms > 0)
            .then(|| started + Duration::from_millis(config.busy_threshold_ms)),
        tracing: config.tracing,
        snapshots_enabled: config.snapshots,
        ..RunScratch::idle(cancel, started)
    };
    api::set_current_core(core);
    started
}

/// Call the script or function: under the debugger when it is armed (the call stops and may be
/// replayed, engine/debug/hook.rs), else with the watchdog minding the deadline.
fn call_target(
    vm: &mut Vm,
    core: &mut Box<Core>,
    watch: &super::lua::watchdog::Watch,
    target: Target<'_>,
    sha: &str,
) -> Result<(), ScriptError> {
    match target {
        Target::Script(request) if super::debug::hook::armed() => {
            super::debug::hook::call_script(vm, core, sha, request)
        }
        // `Sandbox::debug_function`: an FCALL under the debugger.
        Target::Function { function_ref, call } if super::debug::hook::armed() => {
            super::debug::hook::call_function(vm, core, function_ref, call)
        }
        _ => {
            watch.arm(vm.state(), core.run.deadline, core.run.cancel.clone());
            let result = match target {
                Target::Script(_) => vm.call_script(sha),
                Target::Function { function_ref, call } => {
                    vm.call_function(function_ref, &call.keys, &call.argv)
                }
            };
            watch.disarm();
            result
        }
    }
}

/// A stop is sticky: a script that caught it (a pcall inside a coroutine, an xpcall handler)
/// and returned anyway still ends stopped, where the stop was first raised.
fn stop_stays_stopped(
    vm: &mut Vm,
    core: &mut Core,
    result: Result<(), ScriptError>,
) -> Result<(), ScriptError> {
    match result {
        Ok(()) if core.run.stopped.is_some() => {
            unsafe { mlua::ffi::lua_settop(vm.state(), 0) };
            let (source, line) = core
                .run
                .stop_site
                .take()
                .unwrap_or_else(|| (b"@user_script".to_vec(), 0));
            Err(ScriptError::Table {
                err: Some(api::stop_text(vm.memory_limit()).as_bytes().to_vec()),
                source: Some(source),
                line: Some(line.to_string().into_bytes()),
            })
        }
        result => result,
    }
}

/// The reply: the returned value converted (and described when tracing), or the error reply
/// with the outcome the stop reason gives.
fn conclude(
    vm: &mut Vm,
    core: &Core,
    config: &SandboxConfig,
    label: &str,
    result: Result<(), ScriptError>,
    warnings: &mut Vec<Warning>,
) -> Ending {
    match result {
        Ok(()) => {
            let lua_value = config
                .tracing
                .then(|| unsafe { super::lua::convert::describe_value(vm.state(), -1) });
            let names = vm.swap_handler_for_probe_names();
            let mut converter = ReturnConverter::new(core.run.script_resp3).with_probe_names(names);
            let reply = unsafe { converter.convert(vm.state(), &super::lua::convert::Path::Root) };
            let (reply, notes, outcome) = if converter.over_budget {
                drop(reply);
                let text = super::budget::over_budget_text(config.memory_limit);
                (Reply::Error(text), Vec::new(), Outcome::Raised)
            } else {
                (reply, converter.notes, Outcome::Returned)
            };
            Ending {
                reply,
                notes,
                outcome,
                error_line: None,
                lua_value,
            }
        }
        Err(err) => {
            let (text, error_line) =
                error_text(core.profile, label, vm.memory_limit(), err, warnings);
            let outcome = match core.run.stopped {
                Some(StopReason::BusyThreshold) => Outcome::Killed,
                Some(StopReason::Cancelled) => Outcome::Cancelled,
                Some(StopReason::MemoryBudget) | None => Outcome::Raised,
            };
            Ending {
                reply: Reply::Error(text),
                notes: Vec::new(),
                outcome,
                error_line,
                lua_value: None,
            }
        }
    }
}

/// Detach the core from the Lua API, consume the cancel, put back the stop hook between runs,
/// and hand back the run's records.
fn end_run(vm: &mut Vm, core: &mut Core, started: Instant) -> RunScratch {
    api::set_current_core(std::ptr::null_mut());
    vm.after_run();
    let cancel = core.run.cancel.clone();
    cancel.store(false, Ordering::Relaxed);
    let run = std::mem::replace(&mut core.run, RunScratch::idle(cancel, started));
    unsafe {
        mlua::ffi::lua_sethook(
            vm.state(),
            Some(api::stop_hook),
            mlua::ffi::LUA_MASKCOUNT,
            super::lua::vm::HOOK_EVERY,
        )
    };
    run
}

/// Warnings from what the run recorded: calls past the trace limit, a stop inside one C call
/// (which SCRIPT KILL cannot reach on a server), calls whose answer depends on server state the
/// sandbox lacks, and writes without a snapshot.
fn run_warnings(run: &RunScratch, outcome: Outcome, config: &SandboxConfig) -> Vec<Warning> {
    let mut warnings = Vec::new();
    if run.untraced_calls > 0 {
        warnings.push(Warning {
            kind: WarningKind::TraceLimit, // a limit of evalbench's records
            line: 0,
            message: format!(
                "{} more calls were made than the {} evalbench traces",
                run.untraced_calls,
                api::MAX_TRACED_CALLS
            ),
        });
    }
    if let (Outcome::Killed, Some((line, what))) = (outcome, &run.stopped_in_c) {
        warnings.push(Warning {
            kind: WarningKind::Unkillable,
            line: *line,
            message: format!(
                "stopped at the busy threshold inside {what}, one C call: Redis's hook never fires there, so on a server no client is answered, SCRIPT KILL included, until the call returns (a kill sent meanwhile acts then): a call that runs for long leaves a restart as the only way out"
            ),
        });
    }
    for (line, call) in &run.server_state_calls {
        warnings.push(Warning {
            kind: WarningKind::ServerState,
            line: *line,
            message: format!("{call} (the answer depends on the ACL user the server runs the script for: the sandbox answers as the default user, who may run every command)"),
        });
    }
    if run.snapshots_skipped > 0 {
        warnings.push(Warning {
            kind: WarningKind::TraceLimit, // a limit of evalbench's records
            line: 0,
            message: format!(
                "{} writes have no keyspace snapshot for stepping: a copy would not fit the memory budget ({} MiB)",
                run.snapshots_skipped,
                config.memory_limit >> 20
            ),
        });
    }
    warnings
}

/// The error reply Redis builds from a raised error (`luaCallFunction`); `label` is the script's
/// SHA1 or the function's name.
fn error_text(
    profile: &Profile,
    label: &str,
    memory_limit: usize,
    err: ScriptError,
    warnings: &mut Vec<Warning>,
) -> (String, Option<u32>) {
    let sha = label;
    {
        match err {
            ScriptError::Table { err, source, line } => {
                let line_number = line
                    .as_deref()
                    .and_then(|l| std::str::from_utf8(l).ok())
                    .and_then(|l| l.parse().ok());
                let text = match err {
                    Some(e) => {
                        raised_error_text_in(profile, sha, &e, source.as_deref(), line.as_deref())
                    }
                    None => {
                        if profile.errorless_table_crashes {
                            warnings.push(Warning {
                                kind: WarningKind::WouldCrash,
                                line: line_number.unwrap_or(0),
                                message: format!("the script raised a table without an 'err' field: {} crashes on this (SIGSEGV); the sandbox answers 'ERR unknown error'", profile.display_name()),
                            });
                        }
                        raised_error_text_in(
                            profile,
                            sha,
                            b"ERR unknown error",
                            source.as_deref(),
                            line.as_deref(),
                        )
                    }
                };
                (text, line_number)
            }
            ScriptError::NotATable(msg) => (
                format!("ERR Error running script {sha}, {msg}").replace(['\r', '\n'], " "),
                None,
            ),
            ScriptError::OutOfMemory => (super::budget::over_budget_text(memory_limit), None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OBJECT: &str =
        "cjson.encode({name = 'ann', age = 31, city = 'Oslo', email = 'e', active = true})";
    // What redis-server 7.0.15 and valkey-server 8.1.1 reply (redis-cli EVAL): the order of a
    // table's keys follows the profile's Lua string hash.
    const REDIS_ORDER: &str = r#"{"name":"ann","active":true,"city":"Oslo","age":31,"email":"e"}"#;
    const VALKEY_ORDER: &str = r#"{"email":"e","city":"Oslo","age":31,"name":"ann","active":true}"#;

    fn profile(id: &str) -> &'static Profile {
        Profile::by_id(id).unwrap()
    }

    fn encoded(sandbox: &mut Sandbox) -> Reply {
        sandbox
            .run(&RunRequest::new(format!("return {OBJECT}")))
            .reply
    }

    fn bulk(text: &str) -> Reply {
        Reply::Bulk(text.as_bytes().to_vec())
    }

    #[test]
    fn scripts_and_functions_follow_profile_changes() {
        let mut sandbox = Sandbox::new();
        assert_eq!(encoded(&mut sandbox), bulk(REDIS_ORDER));
        sandbox.set_profile(profile("valkey-8.1"));
        assert_eq!(encoded(&mut sandbox), bulk(VALKEY_ORDER));
        sandbox.script_flush();
        assert_eq!(encoded(&mut sandbox), bulk(VALKEY_ORDER));
        let library = format!(
            "#!lua name=order\nredis.register_function('order', function() return {OBJECT} end)"
        );
        sandbox.function_load(library.as_bytes(), false).unwrap();
        let call = FunctionCall {
            name: "order".into(),
            ..FunctionCall::default()
        };
        assert_eq!(sandbox.fcall(&call).reply, bulk(VALKEY_ORDER));
        // Back to Redis: the library is loaded again, into a VM with Redis's hash.
        sandbox.set_profile(profile("redis-7.0"));
        assert_eq!(encoded(&mut sandbox), bulk(REDIS_ORDER));
        assert_eq!(sandbox.fcall(&call).reply, bulk(REDIS_ORDER));
    }
}
