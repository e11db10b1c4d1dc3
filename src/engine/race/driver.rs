//! One schedule of a race lab: every client runs the logic in its own Lua thread (coroutine) whose
//! `redis.call` yields the command to this driver; the driver executes it on the one shared
//! keyspace with the sandbox's command implementations (engine/commands), so replies are exactly
//! the sandbox's. Which client's next server interaction runs is asked of a chooser at every step:
//! the explorer (explore.rs) enumerates or samples those choices.

use super::lab::{Lab, LabError};
use super::Strategy;
use crate::engine::clock::ManualClock;
use crate::engine::commands::{self, CommandRng, Ctx};
use crate::engine::keyspace::json::{keyspace_from_json_value, keyspace_to_json};
use crate::engine::keyspace::{Db, Keyspace};
use crate::engine::profile::{self, Profile};
use crate::engine::reply::{format_g, quote_bytes, Reply};
use mlua::thread::ThreadStatus;
use mlua::{Function, HookTriggers, Lua, MultiValue, Thread, Value, VmState};
use serde::Serialize;
use serde_json::Value as Json;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Lua instructions one client may run between two server interactions before it is stopped
/// (a logic that loops without calling the server would otherwise hang the lab).
const INSTRUCTION_LIMIT: u64 = 10_000_000;
/// What a client that ran past `INSTRUCTION_LIMIT` ends with.
fn over_limit_text() -> String {
    format!(
        "evalbench: the logic ran {INSTRUCTION_LIMIT} Lua instructions without calling the server; stopped"
    )
}

thread_local! {
    /// Lua instructions since the running client last called the server (the global hook
    /// counts; `over_limit_check` too, where hooks are off). One lab runs on one thread at a time.
    static INSTRUCTIONS: Cell<u64> = const { Cell::new(0) };
}

fn reset_instructions() {
    INSTRUCTIONS.with(|n| n.set(0));
}

/// Count `n` more instructions; true once the running client is past the limit.
fn count_instructions(n: u64) -> bool {
    INSTRUCTIONS.with(|c| {
        c.set(c.get().saturating_add(n));
        c.get() > INSTRUCTION_LIMIT
    })
}

/// The lab's stop check (the vendored Lua's `lua_setstopcheck`): asked where hooks are off (an
/// error handler running for the hook's own error) and inside long C calls, each ask counting as
/// one hook's worth of instructions. Past the limit it pushes the limit's error for Lua to raise.
unsafe extern "C" fn over_limit_check(
    l: *mut mlua::ffi::lua_State,
    raise: std::ffi::c_int,
) -> std::ffi::c_int {
    if raise == 0 {
        return INSTRUCTIONS.with(|c| c.get() > INSTRUCTION_LIMIT) as std::ffi::c_int;
    }
    if !count_instructions(HOOK_EVERY as u64) {
        return 0;
    }
    mlua::ffi::lua_checkstack(l, mlua::ffi::LUA_MINSTACK);
    let text = over_limit_text();
    mlua::ffi::lua_pushlstring(l, text.as_ptr() as *const _, text.len());
    1
}

extern "C" {
    /// The vendored Lua's stop check (lua.h).
    fn lua_setstopcheck(
        l: *mut mlua::ffi::lua_State,
        check: Option<
            unsafe extern "C" fn(*mut mlua::ffi::lua_State, std::ffi::c_int) -> std::ffi::c_int,
        >,
    );
}

/// Instructions between two calls of the lab's hook.
const HOOK_EVERY: u32 = 10_000;

/// Steps a traced run (a replay) keeps, each with the keyspace after it: a schedule of 16,000
/// steps is shown by its start.
pub const TRACED_STEPS: usize = 1000;
/// Server interactions one client may make in one schedule.
const CALL_LIMIT: usize = 10_000;
/// The Lua memory of a lab (all clients together).
const LUA_MEMORY_LIMIT: usize = 64 << 20;

/// `redis.call` / `redis.pcall` yield the command to the driver and get back (ok, value). An error
/// reply is raised by `redis.call` (with the caller's position), returned as `{err=...}` by pcall.
/// Globals are read-only as in Redis (`Attempt to modify a readonly table`).
const PRELUDE: &str = r#"
local yield, error, setmetatable, G = coroutine.yield, error, setmetatable, _G
redis = {}
function redis.call(...)
  local ok, v = yield('call', ...)
  if not ok then error(v.err, 2) end
  return v
end
function redis.pcall(...)
  local ok, v = yield('pcall', ...)
  return v
end
function redis.status_reply(s) return {ok = s} end
function redis.error_reply(s) return {err = s} end
return setmetatable({}, {
  __index = function(_, k)
    local v = G[k]
    if v == nil then
      error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
    end
    return v
  end,
  __newindex = function() error("Attempt to modify a readonly table", 2) end,
})
"#;

/// One server interaction of one client, as a replay shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// 1-based.
    pub client: usize,
    /// What the client sent (`GET stock`, `WATCH stock`, `EXEC [DECR stock]`).
    pub command: String,
    /// The reply, one line (`"1"`, `(integer) 0`, `OK`, `(nil)`).
    pub reply: String,
    /// The keyspace after the step (keyspace JSON), when the run was traced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyspace: Option<Json>,
}

/// How one client ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClientEnd {
    /// 1-based.
    pub client: usize,
    /// The logic's return value, one line; or the error that stopped it.
    pub result: String,
    pub failed: bool,
    /// WATCH retries (EXEC answered nil).
    pub retries: usize,
    /// Still failing after the lab's `max_retries`.
    pub gave_up: bool,
    /// What happened to it, in one word.
    pub outcome: ClientOutcome,
}

impl ClientEnd {
    /// How the client at `index` (0-based) ended its schedule.
    fn of((index, c): (usize, &Client)) -> ClientEnd {
        let (result, failed) = c.result.clone().unwrap_or_default();
        ClientEnd {
            outcome: ClientOutcome::of(&result, failed, c.retries, c.gave_up),
            client: index + 1,
            result,
            failed,
            retries: c.retries,
            gave_up: c.gave_up,
        }
    }
}

/// What happened to one client in a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientOutcome {
    /// The logic ran to its end and returned a value, at the first attempt.
    Success,
    /// It succeeded after WATCH made it retry.
    Retried,
    /// The logic stopped on an error, or returned an error reply: its write (if any) was not made
    /// by the logic as meant, and nothing of it is a lost update.
    Error,
    /// EXEC kept failing past the lab's `max_retries`.
    GaveUp,
}

impl ClientOutcome {
    pub fn of(result: &str, failed: bool, retries: usize, gave_up: bool) -> ClientOutcome {
        if gave_up {
            ClientOutcome::GaveUp
        } else if failed || result.starts_with("(error) ") {
            ClientOutcome::Error
        } else if retries > 0 {
            ClientOutcome::Retried
        } else {
            ClientOutcome::Success
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            ClientOutcome::Success => "success",
            ClientOutcome::Retried => "retried",
            ClientOutcome::Error => "error",
            ClientOutcome::GaveUp => "gave up",
        }
    }
}

/// Why a schedule was stopped before its end: nothing of it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The runner's cancel flag was raised (the workbench's Esc).
    Cancelled,
    /// The process's memory went past the budget (engine/budget.rs).
    OverBudget,
}

/// The result of one schedule.
pub struct Run {
    /// The client (0-based) that made each step.
    pub schedule: Vec<usize>,
    /// How many clients could have gone at each step (the explorer's branching).
    pub widths: Vec<usize>,
    pub steps: Vec<Step>,
    pub final_db: Db,
    pub clients: Vec<ClientEnd>,
    /// Writes the server applied (a lost update needs one: nothing written, nothing lost).
    pub writes: usize,
    /// The schedule did not end: cancelled, or over the memory budget.
    pub stopped: Option<Stop>,
    /// Steps of a traced run after the first `TRACED_STEPS` (run, not kept).
    pub steps_not_traced: usize,
    /// Commands the clients queued in MULTI (not steps: no other client can go between them).
    pub queued: usize,
}

/// What a client does at its next step.
enum Next {
    /// Send this command (`pcall`: an error reply is returned, not raised).
    Call(Vec<Vec<u8>>, bool),
    /// WATCH its KEYS (strategy watch, at the start of every attempt).
    Watch,
    /// Send the queued commands as one MULTI/EXEC.
    Exec,
    Done,
}

struct Client {
    thread: Thread,
    keys: Vec<Vec<u8>>,
    argv: Vec<Vec<u8>>,
    next: Next,
    queue: Vec<Vec<Vec<u8>>>,
    /// MULTI was sent (a write, or anything after one, under watch): commands are queued.
    in_multi: bool,
    /// A command was refused while queueing: EXEC answers EXECABORT.
    queue_refused: bool,
    watched: Vec<(Vec<u8>, u64)>,
    retries: usize,
    calls: usize,
    /// Commands queued in MULTI (answered QUEUED by the client itself): work the step limit counts.
    queued: usize,
    /// The logic's result when it finished.
    result: Option<(String, bool)>,
    gave_up: bool,
    /// What the client did that no other client can see (MULTI, a command answered QUEUED,
    /// DISCARD), for the trace: shown right after the step that led to it.
    local: Vec<(String, String)>,
    /// The QUEUED tables handed to the logic, by queue position: a logic that returns one
    /// returns what EXEC answers for that command (as a client library's transaction result).
    /// Kept in one Lua table: a handle per placeholder would take a slot of mlua's reference
    /// stack each, and 8 clients queueing 2,000 commands exhaust it.
    placeholders: Option<mlua::Table>,
    /// The logic returned the placeholder of this queued command.
    result_from_queue: Option<usize>,
}

/// The shared server: keyspace, and a version per key that WATCH compares.
struct World {
    keyspace: Keyspace,
    versions: HashMap<Vec<u8>, u64>,
    clock: ManualClock,
    rng: CommandRng,
    now_ms: i64,
    profile: &'static Profile,
    /// Write commands applied without an error.
    writes: usize,
    /// A command was refused for lack of budget (SETRANGE's offset, APPEND).
    over_budget: bool,
}

impl World {
    /// Run one command as the server would; a write touches the versions of the keys it names
    /// (as Redis's signalModifiedKey invalidates a WATCH).
    fn exec(&mut self, args: &[Vec<u8>]) -> Reply {
        let resolved = match commands::resolve_in(self.profile, args) {
            Ok(r) => r,
            Err(refusal) => return Reply::Error(refusal.text_in(self.profile)),
        };
        if resolved.info.is_write() {
            for position in resolved.key_positions(args) {
                if let Some(key) = args.get(position) {
                    *self.versions.entry(key.clone()).or_default() += 1;
                }
            }
        }
        let mut ctx = Ctx {
            keyspace: &mut self.keyspace,
            db_index: 0,
            now_ms: self.now_ms,
            clock: &self.clock,
            resp3: false,
            rng: &mut self.rng,
            // The lab's keyspaces, outcomes and Lua share the process's budget.
            spare_bytes: crate::engine::budget::spare(),
            over_budget: false,
            profile: self.profile,
            stop: commands::StopCheck::never(),
        };
        let write = resolved.info.is_write();
        let reply = commands::execute(resolved, &mut ctx, args).to_resp2();
        if ctx.over_budget {
            self.over_budget = true;
            return Reply::Error(crate::engine::budget::over_budget_text(
                crate::engine::budget::limit(),
            ));
        }
        if write && !reply.is_error() {
            self.writes += 1;
        }
        reply
    }
    fn version(&self, key: &[u8]) -> u64 {
        self.versions.get(key).copied().unwrap_or(0)
    }
    fn snapshot(&self) -> Json {
        keyspace_json(self.keyspace.db(0), self.now_ms)
    }
}

/// A lab compiled once and run for many schedules.
pub struct Runner {
    lab: Lab,
    lua: Lua,
    logic: Function,
    /// Each invariant's compiled chunk (called like the logic, KEYS/ARGV empty).
    invariants: Vec<Function>,
    seed: Db,
    /// Raised to stop the lab: checked at every step and every 10,000 Lua instructions.
    cancel: Arc<AtomicBool>,
}

impl Runner {
    pub fn new(lab: &Lab) -> Result<Runner, LabError> {
        Runner::with_cancel(lab, Arc::new(AtomicBool::new(false)))
    }

    /// `new`, stopped when `cancel` is raised (from another thread: the workbench's Esc).
    pub fn with_cancel(lab: &Lab, cancel: Arc<AtomicBool>) -> Result<Runner, LabError> {
        // The lab runs as on the default profile's server: its string hash (pairs() order).
        let lua = crate::engine::lua::string_hash::with_string_hash(
            profile::DEFAULT.lua_string_hash,
            Lua::new,
        );
        let internal = |e: mlua::Error| LabError {
            path: lab.path.clone(),
            line: 1,
            column: 1,
            message: format!("internal error setting up the lab: {e}"),
        };
        lua.set_memory_limit(LUA_MEMORY_LIMIT).map_err(internal)?;
        // One hook for every thread (set per thread it costs an allocation per client per schedule).
        let cancelled = cancel.clone();
        lua.set_global_hook(
            HookTriggers::new().every_nth_instruction(HOOK_EVERY),
            move |_, _| {
                if cancelled.load(Ordering::Relaxed) {
                    return Err(mlua::Error::runtime(
                        "evalbench: the race lab was cancelled",
                    ));
                }
                if count_instructions(HOOK_EVERY as u64) {
                    return Err(mlua::Error::runtime(over_limit_text()));
                }
                Ok(VmState::Continue)
            },
        )
        .map_err(internal)?;
        // The hook cannot fire in an error handler running for its own error: there, and in
        // long C calls, Lua asks this check instead.
        unsafe {
            lua.exec_raw::<()>((), |state| lua_setstopcheck(state, Some(over_limit_check)))
                .map_err(internal)?;
        }
        let env: mlua::Table = lua
            .load(PRELUDE)
            .set_name("=prelude")
            .eval()
            .map_err(internal)?;
        let logic =
            compile(&lua, &env, &lab.logic, "logic").map_err(|(line, message)| LabError {
                path: lab.path.clone(),
                line: lab.logic_line + line.saturating_sub(1),
                column: 1,
                message,
            })?;
        let mut invariants = Vec::new();
        for invariant in &lab.invariants {
            // An expression (`tonumber(redis.call('GET','stock')) >= 0`), else a chunk.
            let function = compile(
                &lua,
                &env,
                &format!("return {}", invariant.source),
                "invariant",
            )
            // Neither: the expression's error says more of what was meant.
            .or_else(|expression_error| {
                compile(&lua, &env, &invariant.source, "invariant").map_err(|_| expression_error)
            })
            .map_err(|(_, message)| LabError {
                path: lab.path.clone(),
                line: invariant.line,
                column: invariant.column,
                message: format!("invariant: {message}"),
            })?;
            invariants.push(function);
        }
        let seed = keyspace_from_json_value(&lab.seed, lab.clock_ms).map_err(|e| LabError {
            path: lab.path.clone(),
            line: 1,
            column: 1,
            message: format!("seed: {e}"),
        })?;
        Ok(Runner {
            lab: lab.clone(),
            lua,
            logic,
            invariants,
            seed,
            cancel,
        })
    }

    pub fn lab(&self) -> &Lab {
        &self.lab
    }

    /// The flag that stops the lab (from another thread: the workbench's Esc).
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }

    /// Why a schedule must stop now, if it must.
    fn must_stop(&self, world: &World) -> Option<Stop> {
        if self.cancel.load(Ordering::Relaxed) {
            Some(Stop::Cancelled)
        } else if world.over_budget
            || crate::engine::budget::refresh() > crate::engine::budget::limit()
        {
            Some(Stop::OverBudget)
        } else {
            None
        }
    }

    fn world(&self) -> World {
        let mut keyspace = Keyspace::new();
        *keyspace.db_mut(0) = self.seed.clone();
        World {
            keyspace,
            versions: HashMap::new(),
            clock: ManualClock::new(self.lab.clock_ms * 1000),
            rng: CommandRng::default(),
            now_ms: self.lab.clock_ms,
            profile: profile::DEFAULT,
            writes: 0,
            over_budget: false,
        }
    }

    fn new_thread(&self, function: &Function) -> mlua::Result<Thread> {
        self.lua.create_thread(function.clone())
    }

    /// Run one schedule from the seed. `choose` gets the clients (0-based) that may go next and
    /// returns the position of the one that does. `trace` keeps the keyspace after every step.
    pub fn run(
        &self,
        strategy: Strategy,
        choose: &mut dyn FnMut(&[usize]) -> usize,
        trace: bool,
    ) -> Run {
        let mut world = self.world();
        let mut clients = match self.clients(strategy) {
            Ok(clients) => clients,
            Err(e) => return self.failed_setup(e, strategy),
        };
        let mut run = Run {
            schedule: Vec::new(),
            widths: Vec::new(),
            steps: Vec::new(),
            final_db: Db::new(),
            clients: Vec::new(),
            writes: 0,
            stopped: None,
            steps_not_traced: 0,
            queued: 0,
        };
        for (index, client) in clients.iter_mut().enumerate() {
            trace_local(&mut run, index, client, &world, trace);
        }
        // Under `script` a client that started runs to its end before another may go.
        let mut running: Option<usize> = None;
        loop {
            let ready: Vec<usize> = match running {
                Some(i) if !matches!(clients[i].next, Next::Done) => vec![i],
                _ => (0..clients.len())
                    .filter(|&i| !matches!(clients[i].next, Next::Done))
                    .collect(),
            };
            if ready.is_empty() {
                break;
            }
            if let Some(stop) = self.must_stop(&world) {
                run.stopped = Some(stop);
                break;
            }
            let pick = choose(&ready).min(ready.len() - 1);
            let index = ready[pick];
            run.schedule.push(index);
            run.widths.push(ready.len());
            if strategy == Strategy::Script {
                running = Some(index);
            }
            let (command, reply) = self.step(&mut clients[index], &mut world, strategy);
            if trace && run.steps.len() >= TRACED_STEPS {
                run.steps_not_traced += 1;
            } else if trace {
                run.steps.push(Step {
                    client: index + 1,
                    command,
                    reply,
                    keyspace: Some(world.snapshot()),
                });
            }
            trace_local(&mut run, index, &mut clients[index], &world, trace);
        }
        run.queued = clients.iter().map(|c| c.queued).sum();
        if run.stopped.is_some() {
            // Not a schedule's end: no copy of a keyspace that may be what filled the budget.
            return run;
        }
        run.final_db = world.keyspace.db(0).clone();
        run.writes = world.writes;
        run.clients = clients.iter().enumerate().map(ClientEnd::of).collect();
        run
    }

    /// The lab's clients, each at its start (`WATCH` first under the watch strategy).
    fn clients(&self, strategy: Strategy) -> mlua::Result<Vec<Client>> {
        let mut clients = Vec::new();
        for index in 0..self.lab.clients {
            let mut client = Client {
                thread: self.new_thread(&self.logic)?,
                keys: self.lab.client_keys(index),
                argv: self.lab.client_argv(index),
                next: Next::Done,
                queue: Vec::new(),
                in_multi: false,
                queue_refused: false,
                watched: Vec::new(),
                retries: 0,
                calls: 0,
                queued: 0,
                result: None,
                gave_up: false,
                local: Vec::new(),
                placeholders: None,
                result_from_queue: None,
            };
            if strategy == Strategy::Watch {
                client.next = Next::Watch;
            } else {
                let start = self.start_args(&client);
                self.advance(&mut client, strategy, start);
            }
            clients.push(client);
        }
        Ok(clients)
    }

    fn failed_setup(&self, e: mlua::Error, _strategy: Strategy) -> Run {
        let world = self.world();
        Run {
            schedule: Vec::new(),
            widths: Vec::new(),
            steps: Vec::new(),
            final_db: world.keyspace.db(0).clone(),
            stopped: None,
            steps_not_traced: 0,
            queued: 0,
            clients: vec![ClientEnd {
                client: 1,
                result: format!("evalbench: could not start the client: {e}"),
                failed: true,
                retries: 0,
                gave_up: false,
                outcome: ClientOutcome::Error,
            }],
            writes: 0,
        }
    }

    fn start_args(&self, client: &Client) -> MultiValue {
        let table = |values: &[Vec<u8>]| -> mlua::Result<mlua::Table> {
            let t = self.lua.create_table()?;
            for v in values {
                t.raw_push(self.lua.create_string(v)?)?;
            }
            Ok(t)
        };
        match (table(&client.keys), table(&client.argv)) {
            (Ok(k), Ok(a)) => MultiValue::from_iter([Value::Table(k), Value::Table(a)]),
            _ => MultiValue::new(),
        }
    }

    /// Make the client's next step, return what it sent and the reply (one line each).
    fn step(&self, client: &mut Client, world: &mut World, strategy: Strategy) -> (String, String) {
        client.calls += 1;
        if client.calls > CALL_LIMIT {
            client.result = Some((
                format!("evalbench: more than {CALL_LIMIT} server calls in one schedule; stopped"),
                true,
            ));
            client.next = Next::Done;
            return ("(stopped)".into(), String::new());
        }
        match std::mem::replace(&mut client.next, Next::Done) {
            Next::Call(args, pcall) => {
                let reply = world.exec(&args);
                let shown = (command_line(&args), reply_line(&reply));
                let input = self.reply_input(&reply, pcall);
                self.advance(client, strategy, input);
                shown
            }
            Next::Watch => {
                let mut args = vec![b"WATCH".to_vec()];
                args.extend(client.keys.iter().cloned());
                client.watched = client
                    .keys
                    .iter()
                    .map(|k| (k.clone(), world.version(k)))
                    .collect();
                let start = self.start_args(client);
                self.advance(client, strategy, start);
                let reply = if client.keys.is_empty() {
                    "(no KEYS to watch)".to_string()
                } else {
                    "OK".to_string()
                };
                (command_line(&args), reply)
            }
            Next::Exec => {
                let command = "EXEC".to_string();
                if client.queue_refused {
                    client.queue.clear();
                    let text = "EXECABORT Transaction discarded because of previous errors.";
                    client.result = Some((format!("(error) {text}"), true));
                    return (command, format!("(error) {text}"));
                }
                let changed = client
                    .watched
                    .iter()
                    .any(|(key, version)| world.version(key) != *version);
                client.watched.clear();
                if changed {
                    client.queue.clear();
                    client.placeholders = None;
                    client.result_from_queue = None;
                    client.in_multi = false;
                    if client.retries >= self.lab.max_retries {
                        client.gave_up = true;
                        client.result = Some((
                            format!(
                                "gave up: EXEC failed {} times (max_retries = {})",
                                client.retries + 1,
                                self.lab.max_retries
                            ),
                            true,
                        ));
                        return (command, "(nil) a watched key changed: gave up".into());
                    }
                    client.retries += 1;
                    client.result = None;
                    match self.new_thread(&self.logic) {
                        Ok(thread) => {
                            client.thread = thread;
                            client.next = Next::Watch;
                        }
                        Err(e) => client.result = Some((e.to_string(), true)),
                    }
                    return (command, "(nil) a watched key changed: retry".into());
                }
                let replies: Vec<Reply> = std::mem::take(&mut client.queue)
                    .iter()
                    .map(|c| world.exec(c))
                    .collect();
                client.placeholders = None;
                if let Some(reply) = client.result_from_queue.take().and_then(|p| replies.get(p)) {
                    client.result = Some((reply_line(reply), false));
                }
                let lines: Vec<String> = replies.iter().map(reply_line).collect();
                (command, format!("[{}]", lines.join(", ")))
            }
            Next::Done => ("(done)".into(), String::new()),
        }
    }

    /// The value `redis.call` returns for a reply: (ok, value) with Redis's RESP2 → Lua conversion.
    fn reply_input(&self, reply: &Reply, _pcall: bool) -> MultiValue {
        let ok = !reply.is_error();
        let value = reply_to_lua(&self.lua, reply).unwrap_or(Value::Nil);
        MultiValue::from_iter([Value::Boolean(ok), value])
    }

    /// Resume the client's logic with `input` until its next server interaction or its end.
    fn advance(&self, client: &mut Client, strategy: Strategy, mut input: MultiValue) {
        loop {
            reset_instructions();
            let resumed = client.thread.resume::<MultiValue>(input);
            // Past the limit the logic is stopped, even if it caught the error and went on.
            let resumed = match resumed {
                Ok(_) if count_instructions(0) => Err(mlua::Error::runtime(over_limit_text())),
                resumed => resumed,
            };
            let yielded = match resumed {
                Ok(values) => values,
                Err(e) => {
                    // The logic failed: a transaction being built is discarded.
                    if client.in_multi {
                        client.local.push(("DISCARD".into(), "OK".into()));
                    }
                    client.queue.clear();
                    client.in_multi = false;
                    client.watched.clear();
                    client.result = Some((error_text(&e), true));
                    client.next = Next::Done;
                    return;
                }
            };
            if client.thread.status() != ThreadStatus::Resumable {
                client.result = Some((value_line(yielded.front()), false));
                if let Some(Value::Table(t)) = yielded.front() {
                    client.result_from_queue = client.placeholders.as_ref().and_then(|list| {
                        (1..=list.raw_len()).position(|i| {
                            matches!(list.raw_get::<Value>(i), Ok(Value::Table(p)) if p.to_pointer() == t.to_pointer())
                        })
                    });
                }
                client.next = if client.queue.is_empty() && !client.queue_refused {
                    Next::Done
                } else {
                    Next::Exec
                };
                return;
            }
            let mut values = yielded.into_iter();
            let pcall = matches!(values.next(), Some(Value::String(s)) if s.as_bytes().as_ref() == b"pcall");
            let args = match call_args(values) {
                Ok(args) => args,
                Err(text) => {
                    input = self.reply_input(&Reply::Error(text), pcall);
                    continue;
                }
            };
            let queue = match strategy {
                Strategy::Plain | Strategy::Script => false,
                Strategy::Multi => true,
                // Reads go out before MULTI; the first write opens it and all that follows is queued.
                Strategy::Watch => {
                    client.in_multi
                        || commands::resolve_in(profile::DEFAULT, &args)
                            .map(|r| r.info.is_write())
                            .unwrap_or(true)
                }
            };
            if !queue {
                client.next = Next::Call(args, pcall);
                return;
            }
            if !client.in_multi {
                client.local.push(("MULTI".into(), "OK".into()));
            }
            client.in_multi = true;
            // Queued as Redis queues: refused commands are refused now, the rest answer QUEUED.
            let reply = match commands::resolve_in(profile::DEFAULT, &args) {
                Ok(_) => Reply::Status("QUEUED".into()),
                Err(refusal) => {
                    client.queue_refused = true;
                    Reply::Error(refusal.text_in(profile::DEFAULT))
                }
            };
            client.local.push((command_line(&args), reply_line(&reply)));
            client.queued += 1;
            input = self.reply_input(&reply, pcall);
            if !reply.is_error() {
                client.queue.push(args);
                if let Some(Value::Table(t)) = input.get(1) {
                    if client.placeholders.is_none() {
                        client.placeholders = self.lua.create_table().ok();
                    }
                    if let Some(list) = &client.placeholders {
                        let _ = list.raw_push(t.clone());
                    }
                }
            }
        }
    }

    /// Evaluate the invariants on a final keyspace: (invariant source, why it is broken) for each
    /// broken one.
    pub fn broken_invariants(&self, db: &Db) -> Vec<(String, String)> {
        let mut broken = Vec::new();
        for (function, invariant) in self.invariants.iter().zip(&self.lab.invariants) {
            let mut world = self.world();
            *world.keyspace.db_mut(0) = db.clone();
            let verdict = self.evaluate(function, &mut world);
            if let Err(why) = verdict {
                broken.push((invariant.source.clone(), why));
            }
        }
        broken
    }

    fn evaluate(&self, function: &Function, world: &mut World) -> Result<(), String> {
        let thread = self.new_thread(function).map_err(|e| e.to_string())?;
        let empty = || {
            self.lua
                .create_table()
                .map(Value::Table)
                .unwrap_or(Value::Nil)
        };
        let mut input = MultiValue::from_iter([empty(), empty()]);
        for _ in 0..CALL_LIMIT {
            reset_instructions();
            let values = thread
                .resume::<MultiValue>(input)
                .map_err(|e| error_text(&e))?;
            if count_instructions(0) {
                return Err(over_limit_text());
            }
            if thread.status() != ThreadStatus::Resumable {
                return match values.front() {
                    None | Some(Value::Nil) | Some(Value::Boolean(false)) => {
                        Err("false".to_string())
                    }
                    Some(_) => Ok(()),
                };
            }
            let mut values = values.into_iter();
            values.next();
            let reply = match call_args(values) {
                Ok(args) => {
                    let writes = commands::resolve_in(profile::DEFAULT, &args)
                        .map(|r| r.info.is_write())
                        .unwrap_or(false);
                    if writes {
                        Reply::Error(format!(
                            "ERR an invariant may only read ({} writes)",
                            String::from_utf8_lossy(&args[0])
                        ))
                    } else {
                        world.exec(&args)
                    }
                }
                Err(text) => Reply::Error(text),
            };
            input = self.reply_input(&reply, false);
        }
        Err(format!("more than {CALL_LIMIT} calls"))
    }
}

/// A database as keyspace JSON (the `--keyspace` format), a plain string without TTL written as
/// the bare string (`{"stock": "0"}`), as a lab's seed is.
pub fn keyspace_json(db: &Db, now_ms: i64) -> Json {
    let mut json = keyspace_to_json(db, now_ms);
    if let Json::Object(map) = &mut json {
        for spec in map.values_mut() {
            let plain = match spec {
                Json::Object(o) if o.len() == 2 && o.get("type") == Some(&Json::from("string")) => {
                    o.get("value").filter(|v| v.is_string()).cloned()
                }
                _ => None,
            };
            if let Some(value) = plain {
                *spec = value;
            }
        }
    }
    json
}

/// Move a client's local events into the trace (dropped when not tracing).
fn trace_local(run: &mut Run, index: usize, client: &mut Client, world: &World, trace: bool) {
    if client.local.is_empty() {
        return;
    }
    if !trace || run.steps.len() >= TRACED_STEPS {
        if trace {
            run.steps_not_traced += client.local.len();
        }
        client.local.clear();
        return;
    }
    let snapshot = world.snapshot();
    for (command, reply) in client.local.drain(..) {
        if run.steps.len() >= TRACED_STEPS {
            run.steps_not_traced += 1;
            continue;
        }
        run.steps.push(Step {
            client: index + 1,
            command,
            reply,
            keyspace: Some(snapshot.clone()),
        });
    }
}

/// Compile a chunk as a function of (KEYS, ARGV) in the lab's environment; on a syntax error,
/// (line in the chunk, message).
fn compile(
    lua: &Lua,
    env: &mlua::Table,
    source: &str,
    name: &str,
) -> Result<Function, (usize, String)> {
    // On the chunk's first line, so line numbers stay the logic's own.
    let text = format!("local KEYS, ARGV = ...; {source}");
    lua.load(text)
        .set_name(format!("={name}"))
        .set_environment(env.clone())
        .into_function()
        .map_err(|e| {
            let message = error_text(&e);
            let line = message
                .strip_prefix(&format!("{name}:"))
                .and_then(|rest| rest.split(':').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(1);
            (line, message)
        })
}

/// An mlua error as the one line a user reads (no traceback).
fn error_text(e: &mlua::Error) -> String {
    let text = match e {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(message) => message.clone(),
        // Lua's own "not enough memory" says neither which limit nor what to change.
        mlua::Error::MemoryError(_) => format!(
            "out of memory: the lab's Lua (all clients together) may use {} MiB; make the logic's values smaller, or use fewer clients",
            LUA_MEMORY_LIMIT >> 20
        ),
        mlua::Error::CallbackError { cause, .. } => return error_text(cause),
        other => other.to_string(),
    };
    let text = text.split("\nstack traceback:").next().unwrap_or_default();
    if text.contains("attempt to yield across") {
        return format!("{text} (a lab's redis.call cannot run inside pcall: Lua 5.1 cannot pause there; use redis.pcall)");
    }
    text.trim_end().to_string()
}

/// The arguments of a `redis.call`, as Redis converts them (numbers as %.17g).
fn call_args(values: impl Iterator<Item = Value>) -> Result<Vec<Vec<u8>>, String> {
    let mut args = Vec::new();
    for value in values {
        let bytes = match value {
            Value::String(s) => s.as_bytes().to_vec(),
            Value::Integer(i) => i.to_string().into_bytes(),
            Value::Number(n) => format_g(n, 17).into_bytes(),
            _ => return Err(format!("ERR {}", profile::DEFAULT.bad_argument)),
        };
        args.push(bytes);
    }
    if args.is_empty() {
        return Err(format!("ERR {}", profile::DEFAULT.no_arguments));
    }
    Ok(args)
}

/// Redis's RESP2 → Lua conversion: integers to numbers, bulks to strings, nil to false, status
/// to `{ok=...}`, error to `{err=...}`, arrays to tables.
pub(crate) fn reply_to_lua(lua: &Lua, reply: &Reply) -> mlua::Result<Value> {
    Ok(match reply {
        Reply::Status(s) => {
            let t = lua.create_table()?;
            t.set("ok", lua.create_string(s)?)?;
            Value::Table(t)
        }
        Reply::Error(s) => {
            let t = lua.create_table()?;
            t.set("err", lua.create_string(s)?)?;
            Value::Table(t)
        }
        Reply::Int(i) => Value::Number(*i as f64),
        Reply::Bulk(b) => Value::String(lua.create_string(b)?),
        Reply::Nil | Reply::NilArray => Value::Boolean(false),
        Reply::Array(items) => {
            let t = lua.create_table()?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, reply_to_lua(lua, item)?)?;
            }
            Value::Table(t)
        }
        other => reply_to_lua(lua, &other.to_resp2())?,
    })
}

/// A command as one line: `SET stock 0`, arguments quoted when they need it.
pub fn command_line(args: &[Vec<u8>]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.iter()
                    .all(|&b| b.is_ascii_graphic() && b != b'"' && b != b'\\');
            if plain {
                String::from_utf8_lossy(a).into_owned()
            } else {
                quote_bytes(a)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A reply as one line, as redis-cli shows it.
pub fn reply_line(reply: &Reply) -> String {
    match reply {
        Reply::Status(s) => s.clone(),
        Reply::Error(e) => format!("(error) {e}"),
        Reply::Int(i) => format!("(integer) {i}"),
        Reply::Bulk(b) => quote_bytes(b),
        Reply::Nil | Reply::NilArray => "(nil)".into(),
        Reply::Array(items) => format!(
            "[{}]",
            items.iter().map(reply_line).collect::<Vec<_>>().join(", ")
        ),
        other => reply_line(&other.to_resp2()),
    }
}

/// A Lua value (the logic's return) as one line.
fn value_line(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Nil) => "(nil)".into(),
        Some(Value::Boolean(false)) => "(nil)".into(),
        Some(Value::Boolean(true)) => "(integer) 1".into(),
        Some(Value::Integer(i)) => format!("(integer) {i}"),
        Some(Value::Number(n)) => format!("(integer) {}", *n as i64),
        Some(Value::String(s)) => quote_bytes(&s.as_bytes()),
        Some(Value::Table(t)) => {
            if let Ok(Value::String(s)) = t.raw_get::<Value>("err") {
                return format!("(error) {}", s.to_string_lossy());
            }
            if let Ok(Value::String(s)) = t.raw_get::<Value>("ok") {
                return s.to_string_lossy();
            }
            let items: Vec<String> = (1..=t.raw_len())
                .map(|i| value_line(t.raw_get::<Value>(i).ok().as_ref()))
                .collect();
            format!("[{}]", items.join(", "))
        }
        Some(other) => other.type_name().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_out_of_lua_memory_is_told_the_labs_limit() {
        assert_eq!(
            error_text(&mlua::Error::MemoryError("not enough memory".into())),
            "out of memory: the lab's Lua (all clients together) may use 64 MiB; make the logic's values smaller, or use fewer clients"
        );
    }
}
