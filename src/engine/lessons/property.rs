//! A lesson's properties: checks written once over many inputs (every stock and quantity in a
//! range, every limit and window), so a wrong solution meets its counterexample and any correct
//! one passes. A property is a Lua chunk run once per combination of its variables; it seeds the
//! keyspace, runs the learner's script (as many times as it likes, moving the clock between) and
//! states what must hold. The first combination that breaks it is reported in redis-cli's words,
//! with the variables, the seed and the KEYS and ARGV of the run that went wrong.

use crate::engine::clock::ManualClock;
use crate::engine::keyspace::keyspace_to_json;
use crate::engine::reply::Reply;
use crate::engine::sandbox::{RunRequest, Sandbox};
use mlua::{HookTriggers, Lua, MultiValue, Value, VmState};
use serde::Deserialize;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long one run of the learner's script may take before it is stopped (a lesson's scripts
/// take microseconds; a loop that never ends is the usual reason to reach it).
pub const RUN_LIMIT_MS: u64 = 1000;
/// How long a whole check may take.
pub const CHECK_LIMIT: Duration = Duration::from_secs(10);
/// Combinations one property may ask for.
pub const MAX_COMBINATIONS: usize = 20_000;
/// Lua instructions of a property's own chunk per combination (its loops are the author's).
const PROPERTY_INSTRUCTIONS: u64 = 50_000_000;

/// A property as written in lesson.toml (`[[property]]`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Property {
    pub name: String,
    /// Each variable's inclusive range (`stock = [0, 12]`); every combination is run.
    #[serde(default)]
    pub vars: BTreeMap<String, [i64; 2]>,
    /// Lua: `seed(key, value[, ttl_ms])`, `run(keys, argv)` (the reply as a script sees a
    /// redis.call's), `advance(ms)`, `value(key)`, `ttl(key)` (ms; -1 no TTL, -2 no key),
    /// `expect(got, wanted, what)`, `fail(message)`; the variables as numbers.
    pub check: String,
}

/// Stops a check from another thread (Esc), and bounds it in time.
#[derive(Debug)]
pub struct CheckControl {
    cancelled: AtomicBool,
    /// The cancel flag of the sandbox running now.
    running: Mutex<Option<Arc<AtomicBool>>>,
    deadline: Instant,
    limit: Duration,
    /// Each run's busy limit.
    pub run_limit_ms: u64,
}

impl Default for CheckControl {
    fn default() -> Self {
        CheckControl::new(CHECK_LIMIT, RUN_LIMIT_MS)
    }
}

impl CheckControl {
    pub fn new(limit: Duration, run_limit_ms: u64) -> CheckControl {
        CheckControl {
            cancelled: AtomicBool::new(false),
            running: Mutex::new(None),
            deadline: Instant::now() + limit,
            limit,
            run_limit_ms,
        }
    }

    /// Stop the check: the run in progress ends at once, no other starts.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        if let Ok(running) = self.running.lock() {
            if let Some(flag) = running.as_ref() {
                flag.store(true, Ordering::SeqCst);
            }
        }
    }

    pub fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Why no more runs may start (cancelled, or out of time), if so.
    pub fn stopped(&self) -> Option<String> {
        if self.cancelled() {
            Some("cancelled".into())
        } else if Instant::now() > self.deadline {
            Some(format!(
                "the check ran out of time ({} s): stopped",
                self.limit.as_secs()
            ))
        } else {
            None
        }
    }

    /// A sandbox for one run or case: limited in time, stoppable by `cancel`.
    pub fn sandbox(&self, clock: ManualClock) -> Sandbox {
        let mut sandbox = Sandbox::with_clock(Box::new(clock));
        sandbox.config.busy_threshold_ms = self.run_limit_ms;
        let flag = sandbox.cancel_handle();
        // Registered first, then the flag looked at: a cancel either finds this sandbox or was
        // already set when it is looked at.
        if let Ok(mut running) = self.running.lock() {
            *running = Some(flag.clone());
        }
        if self.cancelled() {
            flag.store(true, Ordering::SeqCst);
        }
        sandbox
    }
}

/// Where a property first failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counterexample {
    /// `stock = 1, qty = 9`.
    pub vars: String,
    /// The keyspace before the first run (keyspace JSON).
    pub seed: String,
    /// KEYS and ARGV of the run that went wrong (the last one), in redis-cli's quoting.
    pub keys: Vec<String>,
    pub argv: Vec<String>,
    pub message: String,
}

/// A property's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropertyResult {
    pub name: String,
    /// Combinations run.
    pub tried: usize,
    pub counterexample: Option<Counterexample>,
}

impl PropertyResult {
    pub fn passed(&self) -> bool {
        self.counterexample.is_none()
    }
}

/// What the property's functions share with the run.
struct State {
    sandbox: Sandbox,
    clock: ManualClock,
    seed: Option<String>,
    last: Option<(Vec<String>, Vec<String>)>,
    stopped: Option<String>,
}

impl State {
    /// A fresh keyspace and clock (the lessons' clock start), nothing run yet.
    fn fresh(control: &CheckControl) -> State {
        let clock = ManualClock::new(crate::engine::testing::DEFAULT_CLOCK_MS * 1000);
        State {
            sandbox: control.sandbox(clock.clone()),
            clock,
            seed: None,
            last: None,
            stopped: None,
        }
    }
}

/// Check a property's text before it runs: its variables' ranges and that its chunk compiles.
pub fn validate(property: &Property) -> Result<(), String> {
    let mut combinations: usize = 1;
    for (name, [low, high]) in &property.vars {
        if low > high {
            return Err(format!(
                "property \"{}\": {name} = [{low}, {high}]: the first bound must not be above the second",
                property.name
            ));
        }
        let width = usize::try_from(high - low + 1).unwrap_or(usize::MAX);
        combinations = combinations.saturating_mul(width);
    }
    if combinations > MAX_COMBINATIONS {
        return Err(format!(
            "property \"{}\": {combinations} combinations; at most {MAX_COMBINATIONS} (narrow the ranges)",
            property.name
        ));
    }
    Lua::new()
        .load(&property.check)
        .set_name("=property")
        .into_function()
        .map(|_| ())
        .map_err(|e| format!("property \"{}\": {}", property.name, lua_error(&e)))
}

/// Run a property on `script` over every combination of its variables, stopping at the first
/// that breaks it.
pub fn check_property(
    script: &[u8],
    property: &Property,
    control: &CheckControl,
) -> PropertyResult {
    let mut result = PropertyResult {
        name: property.name.clone(),
        tried: 0,
        counterexample: None,
    };
    let fail = |message: String| Counterexample {
        vars: String::new(),
        seed: "{}".into(),
        keys: Vec::new(),
        argv: Vec::new(),
        message,
    };
    if let Err(e) = validate(property) {
        result.counterexample = Some(fail(e));
        return result;
    }
    let lua = Lua::new();
    let state = Rc::new(RefCell::new(State::fresh(control)));
    let chunk = match install(&lua, &state, script).and_then(|_| {
        lua.load(&property.check)
            .set_name("=property")
            .into_function()
    }) {
        Ok(chunk) => chunk,
        Err(e) => {
            result.counterexample = Some(fail(lua_error(&e)));
            return result;
        }
    };
    let counted = match count_instructions(&lua) {
        Ok(counted) => counted,
        Err(e) => {
            result.counterexample = Some(fail(lua_error(&e)));
            return result;
        }
    };
    let vars: Vec<(&String, [i64; 2])> = property.vars.iter().map(|(k, v)| (k, *v)).collect();
    let mut values: Vec<i64> = vars.iter().map(|(_, [low, _])| *low).collect();
    loop {
        if let Some(why) = control.stopped() {
            result.counterexample = Some(fail(why));
            return result;
        }
        // A fresh keyspace and clock for every combination.
        *state.borrow_mut() = State::fresh(control);
        counted.set(0);
        let globals = lua.globals();
        let shown: Vec<String> = vars
            .iter()
            .zip(&values)
            .map(|((name, _), v)| format!("{name} = {v}"))
            .collect();
        for ((name, _), v) in vars.iter().zip(&values) {
            let _ = globals.set(name.as_str(), *v);
        }
        result.tried += 1;
        let outcome = chunk.call::<MultiValue>(());
        let s = state.borrow();
        let message = match (&s.stopped, outcome) {
            (Some(why), _) => Some(why.clone()),
            (None, Err(e)) => Some(lua_error(&e)),
            (None, Ok(_)) => None,
        };
        if let Some(message) = message {
            let (keys, argv) = s.last.clone().unwrap_or_default();
            let seed = s
                .seed
                .clone()
                .unwrap_or_else(|| current_keyspace(&s.sandbox));
            result.counterexample = Some(Counterexample {
                vars: shown.join(", "),
                seed,
                keys,
                argv,
                message,
            });
            return result;
        }
        drop(s);
        if !next_combination(&vars, &mut values) {
            return result;
        }
    }
}

/// The next combination of the variables' values (the last variable moves fastest); false after
/// the last one.
fn next_combination(vars: &[(&String, [i64; 2])], values: &mut [i64]) -> bool {
    for i in (0..vars.len()).rev() {
        if values[i] < vars[i].1[1] {
            values[i] += 1;
            for (j, v) in values.iter_mut().enumerate().skip(i + 1) {
                *v = vars[j].1[0];
            }
            return true;
        }
    }
    false
}

/// Stop a property whose own Lua loops run past `PROPERTY_INSTRUCTIONS`: the count (reset for
/// each combination) the hook adds to.
fn count_instructions(lua: &Lua) -> mlua::Result<Rc<std::cell::Cell<u64>>> {
    let counted = Rc::new(std::cell::Cell::new(0u64));
    let hook_count = counted.clone();
    lua.set_global_hook(
        HookTriggers::new().every_nth_instruction(10_000),
        move |_, _| {
            hook_count.set(hook_count.get() + 10_000);
            if hook_count.get() > PROPERTY_INSTRUCTIONS {
                return Err(mlua::Error::runtime(
                    "the property ran too long (its own Lua loops): stopped",
                ));
            }
            Ok(VmState::Continue)
        },
    )?;
    Ok(counted)
}

fn current_keyspace(sandbox: &Sandbox) -> String {
    keyspace_to_json(sandbox.keyspace().db(0), sandbox.now_ms()).to_string()
}

/// Run a helper script of the checker's own (seed, value, ttl) on the learner's keyspace.
fn helper(state: &mut State, script: &str, keys: Vec<Vec<u8>>, argv: Vec<Vec<u8>>) -> Reply {
    let request = RunRequest {
        script: script.as_bytes().to_vec(),
        keys,
        argv,
        ..RunRequest::default()
    };
    state.sandbox.run(&request).reply.to_resp2()
}

/// `seed(key, value[, ttl_ms])`: a string key set before the property's run.
fn seed(state: &mut State, key: &[u8], value: &[u8], ttl: Option<i64>) -> mlua::Result<()> {
    let mut argv = vec![value.to_vec()];
    if let Some(ttl) = ttl {
        argv.push(ttl.to_string().into_bytes());
    }
    let reply = helper(
        state,
        "redis.call('SET', KEYS[1], ARGV[1]) if ARGV[2] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end",
        vec![key.to_vec()],
        argv,
    );
    if let Reply::Error(e) = reply {
        return Err(mlua::Error::runtime(format!("seed: {e}")));
    }
    Ok(())
}

/// `run(keys, argv)`: the learner's script once, its reply as Lua; the keyspace before the first
/// run is kept (a failure shows it). A run stopped by its limit or by Esc ends the property.
fn run_script(
    lua: &Lua,
    state: &mut State,
    script: &[u8],
    keys: Vec<Vec<u8>>,
    argv: Vec<Vec<u8>>,
) -> mlua::Result<Value> {
    if state.seed.is_none() {
        state.seed = Some(current_keyspace(&state.sandbox));
    }
    let quoted = |items: &[Vec<u8>]| -> Vec<String> {
        items
            .iter()
            .map(|i| crate::engine::reply::quote_bytes(i))
            .collect()
    };
    state.last = Some((quoted(&keys), quoted(&argv)));
    let request = RunRequest {
        script: script.to_vec(),
        keys,
        argv,
        ..RunRequest::default()
    };
    let started = Instant::now();
    let reply = state.sandbox.run(&request).reply.to_resp2();
    // Stopped by the run's limit or by Esc: no property holds or fails on that.
    let threshold = Duration::from_millis(state.sandbox.config.busy_threshold_ms);
    if state.sandbox.cancel_handle().load(Ordering::SeqCst) || started.elapsed() >= threshold {
        let why = match &reply {
            Reply::Error(e) if started.elapsed() < threshold => format!("cancelled ({e})"),
            _ => format!(
                "the script ran longer than {} ms and was stopped (a loop that never ends?)",
                state.sandbox.config.busy_threshold_ms
            ),
        };
        state.stopped = Some(why.clone());
        return Err(mlua::Error::runtime(why));
    }
    crate::engine::race::driver::reply_to_lua(lua, &reply)
}

fn install(lua: &Lua, state: &Rc<RefCell<State>>, script: &[u8]) -> mlua::Result<()> {
    let globals = lua.globals();
    let script = script.to_vec();
    let s = state.clone();
    globals.set(
        "seed",
        lua.create_function(
            move |_, (key, value, ttl): (mlua::LuaString, mlua::LuaString, Option<i64>)| {
                seed(&mut s.borrow_mut(), &key.as_bytes(), &value.as_bytes(), ttl)
            },
        )?,
    )?;
    let s = state.clone();
    globals.set(
        "run",
        lua.create_function(
            move |lua, (keys, argv): (Vec<mlua::LuaString>, Vec<mlua::LuaString>)| {
                let keys = keys.iter().map(|k| k.as_bytes().to_vec()).collect();
                let argv = argv.iter().map(|a| a.as_bytes().to_vec()).collect();
                run_script(lua, &mut s.borrow_mut(), &script, keys, argv)
            },
        )?,
    )?;
    let s = state.clone();
    globals.set(
        "advance",
        lua.create_function(move |_, ms: i64| {
            s.borrow().clock.advance_ms(ms);
            Ok(())
        })?,
    )?;
    let s = state.clone();
    globals.set(
        "value",
        lua.create_function(move |lua, key: mlua::LuaString| {
            let mut state = s.borrow_mut();
            let reply = helper(
                &mut state,
                "return redis.call('GET', KEYS[1])",
                vec![key.as_bytes().to_vec()],
                Vec::new(),
            );
            match reply {
                Reply::Nil => Ok(Value::Nil),
                other => crate::engine::race::driver::reply_to_lua(lua, &other),
            }
        })?,
    )?;
    let s = state.clone();
    globals.set(
        "ttl",
        lua.create_function(move |lua, key: mlua::LuaString| {
            let mut state = s.borrow_mut();
            let reply = helper(
                &mut state,
                "return redis.call('PTTL', KEYS[1])",
                vec![key.as_bytes().to_vec()],
                Vec::new(),
            );
            crate::engine::race::driver::reply_to_lua(lua, &reply)
        })?,
    )?;
    globals.set(
        "expect",
        lua.create_function(|_, (got, wanted, what): (Value, Value, Option<String>)| {
            if same(&got, &wanted) {
                return Ok(());
            }
            let what = what.map(|w| format!("{w}: ")).unwrap_or_default();
            Err(mlua::Error::runtime(format!(
                "{what}expected {}, got {}",
                cli_words(&wanted),
                cli_words(&got)
            )))
        })?,
    )?;
    globals.set(
        "fail",
        lua.create_function(|_, message: String| -> mlua::Result<()> {
            Err(mlua::Error::runtime(message))
        })?,
    )?;
    Ok(())
}

/// Equal as replies: numbers by value, strings by bytes, tables item by item (and `err`/`ok`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Nil | Value::Boolean(false), Value::Nil | Value::Boolean(false)) => true,
        (Value::Integer(_) | Value::Number(_), Value::Integer(_) | Value::Number(_)) => {
            number(a) == number(b)
        }
        (Value::String(x), Value::String(y)) => x.as_bytes() == y.as_bytes(),
        (Value::Boolean(x), Value::Boolean(y)) => x == y,
        (Value::Table(x), Value::Table(y)) => {
            let field = |t: &mlua::Table, k: &str| t.raw_get::<Value>(k).unwrap_or(Value::Nil);
            same(&field(x, "err"), &field(y, "err"))
                && same(&field(x, "ok"), &field(y, "ok"))
                && x.raw_len() == y.raw_len()
                && (1..=x.raw_len()).all(|i| {
                    same(
                        &x.raw_get::<Value>(i).unwrap_or(Value::Nil),
                        &y.raw_get::<Value>(i).unwrap_or(Value::Nil),
                    )
                })
        }
        _ => false,
    }
}

fn number(v: &Value) -> f64 {
    match v {
        Value::Integer(i) => *i as f64,
        Value::Number(n) => *n,
        _ => f64::NAN,
    }
}

/// A Lua value as redis-cli shows the reply it becomes: `(integer) 5`, `"5"`, `(nil)`,
/// `(error) ERR ...`.
pub fn cli_words(value: &Value) -> String {
    match value {
        Value::Nil | Value::Boolean(false) => "(nil)".into(),
        Value::Boolean(true) => "(integer) 1".into(),
        Value::Integer(i) => format!("(integer) {i}"),
        Value::Number(n) => format!("(integer) {}", *n as i64),
        Value::String(s) => crate::engine::reply::quote_bytes(&s.as_bytes()),
        Value::Table(t) => {
            if let Ok(Value::String(e)) = t.raw_get::<Value>("err") {
                return format!("(error) {}", e.to_string_lossy());
            }
            if let Ok(Value::String(s)) = t.raw_get::<Value>("ok") {
                return s.to_string_lossy();
            }
            let items: Vec<String> = (1..=t.raw_len())
                .map(|i| {
                    format!(
                        "{i}) {}",
                        cli_words(&t.raw_get::<Value>(i).unwrap_or(Value::Nil))
                    )
                })
                .collect();
            if items.is_empty() {
                "(empty array)".into()
            } else {
                items.join(" ")
            }
        }
        other => other.type_name().to_string(),
    }
}

/// An mlua error as one line (no traceback, no "runtime error:" prefix).
fn lua_error(e: &mlua::Error) -> String {
    let text = match e {
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => m.clone(),
        mlua::Error::CallbackError { cause, .. } => return lua_error(cause),
        other => other.to_string(),
    };
    let text = text.split("\nstack traceback:").next().unwrap_or_default();
    // A property's expect() names the property chunk's line: the learner needs only the message.
    let text = text
        .strip_prefix("property:")
        .and_then(|rest| rest.split_once(": ").map(|(_, m)| m))
        .unwrap_or(text);
    text.trim_end().to_string()
}
