//! The debugger on the engine thread: a `DebugFrontend` that sends every stop to the UI as plain
//! data and blocks on a channel for the UI's commands while the script is paused (the Lua state
//! is not `Send`, so the paused run stays on this thread). Every command is answered by exactly
//! one closing event — a stop (`DebugEvent::Stopped`) or the end of the run
//! (`EngineEvent::Finished`) — so a front end, or the synchronous test harness, knows when the
//! engine has answered.

use super::worker::{EngineEvent, RunResult};
use crate::engine::debug::inspect::reply_text;
use crate::engine::debug::{
    Breakpoint, DebugFrontend, DebugOutput, DebugSession, Frame, Resume, Stop, StopReason, Variable,
};
use crate::engine::display::display_safe;
use crate::engine::keyspace::Db;
use crate::engine::{RunRequest, Sandbox};
use std::collections::BTreeMap;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// Console lines stop here (a reply or a command argument of megabytes is cut, with ` ...`).
const CONSOLE_MAX: usize = 512;

/// A command and its reply as console text, bounded whatever their size.
fn call_text(command: &[Vec<u8>], reply: &crate::engine::Reply) -> (String, String) {
    let mut words = String::new();
    for a in command {
        if words.len() > CONSOLE_MAX {
            break;
        }
        if !words.is_empty() {
            words.push(' ');
        }
        words.push_str(&String::from_utf8_lossy(&a[..a.len().min(CONSOLE_MAX + 1)]));
    }
    let cut = crate::engine::debug::inspect::cut;
    (
        cut(words, CONSOLE_MAX),
        cut(reply_text(&reply.preview()), CONSOLE_MAX),
    )
}

/// Entries of a table shown when it is expanded; its "more" row shows this many more.
pub const PAGE: usize = 50;

/// Where the run stops, besides the steps: owned by the UI, sent with every resume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breaks {
    pub breakpoints: Vec<Breakpoint>,
    /// Redis commands to stop before (upper case).
    pub commands: Vec<String>,
    /// Keys to stop before a write to.
    pub key_writes: Vec<Vec<u8>>,
    pub on_error: bool,
}

impl Default for Breaks {
    fn default() -> Self {
        Breaks {
            breakpoints: Vec::new(),
            commands: Vec::new(),
            key_writes: Vec::new(),
            on_error: true,
        }
    }
}

impl Breaks {
    fn apply(&self, session: &mut DebugSession) {
        session.breakpoints = self.breakpoints.clone();
        session.command_breaks = self.commands.clone();
        session.key_write_breaks = self.key_writes.clone();
        session.break_on_error = self.on_error;
    }
}

/// An expanded table: the variable's name and the entry indices below it. By name, so a table
/// stays expanded across steps while new locals shift the variables' positions.
pub type ExpandKey = (String, Vec<usize>);

/// What the UI looks at in a stop: the selected frame, the tables it expanded, its watches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewRequest {
    pub frame: usize,
    /// Expanded tables by path (see `Stop::expand`), with how many entries are shown.
    pub expanded: BTreeMap<ExpandKey, usize>,
    pub watches: Vec<String>,
}

/// Start a debug session: reset database 0 to `seed`, then run `request` under the debugger.
#[derive(Debug)]
pub struct StartDebug {
    pub id: u64,
    pub request: RunRequest,
    pub seed: Db,
    pub busy_threshold_ms: u64,
    /// The run clock (Unix ms): the seed's time plus the clock offset, as for a plain run.
    pub clock_ms: i64,
    pub breaks: Breaks,
    /// Stop at the first line (F10 / F11 start), or run to the first breakpoint (F5).
    pub stop_at_start: bool,
    pub view: ViewRequest,
    /// The script is a function library: debug the FCALL of this function.
    pub function: Option<String>,
}

/// The UI's commands to a paused run (each tagged with its session's id: a command left from an
/// earlier session is dropped).
#[derive(Debug)]
pub enum DebugCommand {
    Start(Box<StartDebug>),
    /// Show another frame, expand or page a table, change the watches.
    View {
        id: u64,
        view: ViewRequest,
    },
    /// Run Lua in a frame (its locals readable; writes refused).
    Eval {
        id: u64,
        frame: usize,
        code: String,
    },
    /// A read command on the current keyspace.
    Redis {
        id: u64,
        args: Vec<Vec<u8>>,
    },
    /// Resume; the next stops show `view`.
    Resume {
        id: u64,
        resume: Resume,
        breaks: Breaks,
        view: ViewRequest,
    },
}

impl DebugCommand {
    fn id(&self) -> u64 {
        match self {
            DebugCommand::Start(s) => s.id,
            DebugCommand::View { id, .. }
            | DebugCommand::Eval { id, .. }
            | DebugCommand::Redis { id, .. }
            | DebugCommand::Resume { id, .. } => *id,
        }
    }
}

/// One row of the variables tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarRow {
    pub depth: usize,
    /// The variable's path (`Stop::expand`); a "more" row has its table's path.
    pub path: Vec<usize>,
    /// Its key in `ViewRequest::expanded` (a "more" row: its table's).
    pub key: ExpandKey,
    pub var: Variable,
    pub expanded: bool,
    /// A row standing for the entries of a table not shown yet: how many.
    pub more: Option<usize>,
}

/// A stop as the UI draws it.
#[derive(Debug, Clone)]
pub struct StopView {
    pub id: u64,
    pub line: u32,
    pub reason: StopReason,
    /// The line event of the stop (counted from the start of the run).
    pub event: u64,
    pub frames: Vec<Frame>,
    /// The selected frame (clamped to the stack).
    pub frame: usize,
    pub rows: Vec<VarRow>,
    /// Each watch with its value or its error, evaluated in the selected frame.
    pub watches: Vec<(String, Result<String, String>)>,
    /// Database 0 as it is at the stop.
    pub keyspace: Db,
    /// redis.call made so far.
    pub calls: usize,
    /// The script's running time so far (stops and replays excluded).
    pub active_ns: u64,
    /// Unix ms of the sandbox clock at the run's start (the keyspace's TTLs count from it).
    pub now_ms: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsoleKind {
    /// `redis.debug(...)` output.
    Debug,
    /// The debugger's own messages (a breakpoint moved, a condition raised...).
    Note,
    /// A Redis command made by the script or typed.
    Redis,
    Reply,
    /// What was typed at the eval prompt.
    Input,
    Value,
    Error,
    Stop,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleLine {
    pub kind: ConsoleKind,
    pub text: String,
}

impl ConsoleLine {
    pub fn new(kind: ConsoleKind, text: impl Into<String>) -> ConsoleLine {
        ConsoleLine {
            kind,
            text: text.into(),
        }
    }
}

pub enum DebugEvent {
    Stopped(Box<StopView>),
    Console {
        id: u64,
        line: ConsoleLine,
    },
    /// The run ended (its `Finished` follows): line counts for the gutter.
    Ended {
        id: u64,
        coverage: Option<BTreeMap<u32, u64>>,
        /// None when the run ended without the line hook (see engine/debug/probes.rs).
        events: Option<u64>,
    },
}

/// The stop reason in LDB's words (`break point`, `step over`...).
pub fn reason_text(reason: &StopReason) -> String {
    match reason {
        StopReason::Start => "start".into(),
        StopReason::Step => "step".into(),
        StopReason::Breakpoint { .. } => "breakpoint".into(),
        StopReason::RedisBreakpoint => "redis.breakpoint() called".into(),
        StopReason::Error { message } => format!("error: {message}"),
        StopReason::Command { name } => format!("before {name}"),
        StopReason::KeyWrite { key } => {
            format!("write to {}", crate::engine::reply::quote_bytes(key))
        }
    }
}

struct ChannelFrontend<'a> {
    id: u64,
    commands: &'a Receiver<DebugCommand>,
    events: &'a Sender<EngineEvent>,
    view: ViewRequest,
    now_ms: i64,
    /// The FCALL's function when a library is debugged: its frame is named by it.
    function: Option<String>,
}

impl ChannelFrontend<'_> {
    fn console(&self, kind: ConsoleKind, text: impl Into<String>) {
        let _ = self.events.send(EngineEvent::Debug(DebugEvent::Console {
            id: self.id,
            line: ConsoleLine::new(kind, text),
        }));
    }

    fn send_view(&self, stop: &mut Stop<'_>) {
        let mut view = build_view(self.id, stop, &self.view);
        view.now_ms = self.now_ms;
        // The registered callback is anonymous to Lua ("?"): it is the function FCALL called.
        if let (Some(name), Some(outermost)) = (&self.function, view.frames.last_mut()) {
            if outermost.function == "?" {
                outermost.function = name.clone();
            }
        }
        let _ = self
            .events
            .send(EngineEvent::Debug(DebugEvent::Stopped(Box::new(view))));
    }
}

/// The variables tree of `frame`, the expanded tables' entries a page at a time.
fn rows(stop: &Stop<'_>, frame: usize, expanded: &BTreeMap<ExpandKey, usize>) -> Vec<VarRow> {
    let mut out = Vec::new();
    let vars = stop.variables(frame).unwrap_or_default();
    for (i, var) in vars.into_iter().enumerate() {
        let key = (var.name.clone(), Vec::new());
        push_tree(stop, frame, vec![i], key, var, 0, expanded, &mut out);
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn push_tree(
    stop: &Stop<'_>,
    frame: usize,
    path: Vec<usize>,
    key: ExpandKey,
    var: Variable,
    depth: usize,
    expanded: &BTreeMap<ExpandKey, usize>,
    out: &mut Vec<VarRow>,
) {
    let limit = expanded
        .get(&key)
        .copied()
        .filter(|_| var.expandable && depth < 32);
    out.push(VarRow {
        depth,
        path: path.clone(),
        key: key.clone(),
        var,
        expanded: limit.is_some(),
        more: None,
    });
    let Some(limit) = limit else { return };
    let Ok(page) = stop.expand(frame, &path, 0, limit) else {
        return;
    };
    let shown = page.items.len();
    for (j, item) in page.items.into_iter().enumerate() {
        let mut child = path.clone();
        child.push(j);
        let mut child_key = key.clone();
        child_key.1.push(j);
        push_tree(
            stop,
            frame,
            child,
            child_key,
            item,
            depth + 1,
            expanded,
            out,
        );
    }
    if page.total > shown {
        out.push(VarRow {
            depth: depth + 1,
            path,
            key,
            var: Variable {
                name: String::new(),
                kind: crate::engine::debug::VarKind::Field,
                type_name: String::new(),
                value: String::new(),
                len: None,
                expandable: false,
            },
            expanded: false,
            more: Some(page.total - shown),
        });
    }
}

fn build_view(id: u64, stop: &mut Stop<'_>, view: &ViewRequest) -> StopView {
    let (line, reason, event, frames) = (
        stop.line(),
        stop.reason().clone(),
        stop.event(),
        stop.stack(),
    );
    let frame = view.frame.min(frames.len().saturating_sub(1));
    let rows = rows(stop, frame, &view.expanded);
    let watches = view
        .watches
        .iter()
        .map(|w| {
            let value = stop
                .eval(frame, w)
                .map(|v| v.into_iter().next().unwrap_or_else(|| "nil".into()));
            (w.clone(), value)
        })
        .collect();
    StopView {
        id,
        line,
        reason,
        event,
        frames,
        frame,
        rows,
        watches,
        keyspace: stop.keyspace().db(0).clone(),
        calls: stop.trace().len(),
        active_ns: stop.active_time().as_nanos() as u64,
        now_ms: 0,
    }
}

impl DebugFrontend for ChannelFrontend<'_> {
    fn stopped(&mut self, stop: &mut Stop<'_>) -> Resume {
        // The calls made since the last stop, as LDB logs them after a step.
        let calls: Vec<(String, String)> = stop
            .new_calls()
            .iter()
            .map(|e| call_text(&e.command, &e.reply))
            .collect();
        for (command, reply) in calls {
            self.console(ConsoleKind::Redis, format!("<redis> {command}"));
            self.console(ConsoleKind::Reply, format!("<reply> {reply}"));
        }
        if let Some(values) = stop.returned() {
            // Shift-F11 (step out): what the function it left returned.
            let text = if values.is_empty() {
                "<return> (no value)".to_string()
            } else {
                format!("<return> {}", values.join(", "))
            };
            self.console(ConsoleKind::Value, display_safe(&text));
        }
        self.console(
            ConsoleKind::Stop,
            format!(
                "* Stopped at {}, stop reason = {}",
                stop.line(),
                reason_text(stop.reason())
            ),
        );
        self.send_view(stop);
        loop {
            let command = match self.commands.recv() {
                Ok(c) => c,
                // The UI is gone (quit): end the run as LDB's abort does.
                Err(_) => return Resume::Abort,
            };
            if command.id() != self.id {
                continue;
            }
            match command {
                DebugCommand::Start(_) => {}
                DebugCommand::View { view, .. } => {
                    self.view = view;
                    self.send_view(stop);
                }
                DebugCommand::Eval { frame, code, .. } => {
                    self.console(ConsoleKind::Input, format!("> {code}"));
                    match stop.eval(frame, &code) {
                        Ok(values) if values.is_empty() => {
                            self.console(ConsoleKind::Value, "<retval> (no value)")
                        }
                        Ok(values) => {
                            for v in values {
                                self.console(ConsoleKind::Value, format!("<retval> {v}"));
                            }
                        }
                        Err(e) => self.console(ConsoleKind::Error, format!("<error> {e}")),
                    }
                    self.send_view(stop);
                }
                DebugCommand::Redis { args, .. } => {
                    let reply = stop.redis(&args);
                    let (words, text) = call_text(&args, &reply);
                    self.console(ConsoleKind::Input, format!("<redis> {words}"));
                    let kind = if reply.is_error() {
                        ConsoleKind::Error
                    } else {
                        ConsoleKind::Reply
                    };
                    self.console(kind, format!("<reply> {text}"));
                    self.send_view(stop);
                }
                DebugCommand::Resume {
                    resume,
                    breaks,
                    view,
                    ..
                } => {
                    self.view = view;
                    breaks.apply(stop.session());
                    return resume;
                }
            }
        }
    }

    fn output(&mut self, output: DebugOutput) {
        match output {
            DebugOutput::Debug { line, text } => {
                self.console(ConsoleKind::Debug, format!("<debug> line {line}: {text}"))
            }
            DebugOutput::Note(text) => self.console(ConsoleKind::Note, display_safe(&text)),
        }
    }
}

/// Run `start` under the debugger on this (the engine's) thread, answering `commands` while the
/// script is paused; the run's result as a plain run gives it, with the keyspace before and after.
pub fn run(
    sandbox: &mut Sandbox,
    start: StartDebug,
    commands: &Receiver<DebugCommand>,
    events: &Sender<EngineEvent>,
) -> RunResult {
    // Commands left from an earlier session (sent as it ended) are not this one's.
    while commands.try_recv().is_ok() {}
    let StartDebug {
        id,
        request,
        seed,
        busy_threshold_ms,
        clock_ms: _, // set on the engine's clock by the caller
        breaks,
        stop_at_start,
        view,
        function,
    } = start;
    // A library's code is parsed as FUNCTION LOAD takes it (its shebang names the library).
    let parsed = match &function {
        Some(_) => DebugSession::for_library(&request.script),
        None => DebugSession::new(&request.script),
    };
    let mut session = match parsed {
        Ok(s) => s,
        // A script that does not compile: the plain run reports it (the UI refuses it first).
        Err(_) => return plain_run(sandbox, id, request, seed, busy_threshold_ms, &function),
    };
    breaks.apply(&mut session);
    session.stop_at_start = stop_at_start;
    session.coverage = true;
    sandbox.config.busy_threshold_ms = busy_threshold_ms;
    sandbox.set_db0(seed.clone());
    let mut frontend = ChannelFrontend {
        id,
        commands,
        events,
        view,
        now_ms: sandbox.now_ms(),
        function: function.clone(),
    };
    let report = match &function {
        // A library: loaded as FUNCTION LOAD does (not under the debugger), then its FCALL.
        Some(name) => match super::form_function::load_call(sandbox, &request, name) {
            Ok(call) => sandbox.debug_function(&call, &mut session, &mut frontend),
            Err(_) => return plain_run(sandbox, id, request, seed, busy_threshold_ms, &function),
        },
        None => sandbox.debug(&request, &mut session, &mut frontend),
    };
    let _ = events.send(EngineEvent::Debug(DebugEvent::Ended {
        id,
        coverage: report.coverage,
        events: report.events,
    }));
    RunResult {
        id,
        request,
        report: report.run,
        before: seed,
        after: sandbox.keyspace().db(0).clone(),
        now_ms: sandbox.now_ms(),
        question: None,
        live: false,
        dry_run_ns: None,
        kill: None,
    }
}

/// The run without the debugger: it reports what stopped the session from starting (a compile
/// or FUNCTION LOAD error), as F5 would.
fn plain_run(
    sandbox: &mut Sandbox,
    id: u64,
    request: RunRequest,
    seed: Db,
    busy_threshold_ms: u64,
    function: &Option<String>,
) -> RunResult {
    match function {
        Some(name) => RunResult::fcall(sandbox, id, request, seed, busy_threshold_ms, name),
        None => RunResult::run(sandbox, id, request, seed, busy_threshold_ms),
    }
}

/// A debug engine on a thread of its own, for the synchronous test harness (its sandbox reads
/// `clock`): `send` a command, then `answer` gives the events up to the closing one.
pub struct DebugThread {
    commands: Sender<DebugCommand>,
    events: Receiver<EngineEvent>,
}

/// How long the harness waits for the engine's answer before reporting a hang.
const ANSWER_WAIT: Duration = Duration::from_secs(60);

impl DebugThread {
    pub fn start(clock: crate::engine::clock::ManualClock) -> DebugThread {
        let (commands, command_rx) = channel::<DebugCommand>();
        let (event_tx, events) = channel::<EngineEvent>();
        std::thread::Builder::new()
            .name("evalbench-debug-harness".into())
            .stack_size(256 << 20)
            .spawn(move || {
                let mut sandbox = Sandbox::with_clock(Box::new(clock));
                sandbox.config.snapshots = true;
                while let Ok(command) = command_rx.recv() {
                    if let DebugCommand::Start(start) = command {
                        let result = run(&mut sandbox, *start, &command_rx, &event_tx);
                        if event_tx
                            .send(EngineEvent::Finished(Box::new(result)))
                            .is_err()
                        {
                            break;
                        }
                    }
                }
            })
            .expect("start the debug harness thread");
        DebugThread { commands, events }
    }

    pub fn send(&self, command: DebugCommand) {
        let _ = self.commands.send(command);
    }

    /// The events up to and including the closing one (a stop or the end of the run).
    pub fn answer(&self) -> Result<Vec<EngineEvent>, String> {
        let mut out = Vec::new();
        loop {
            match self.events.recv_timeout(ANSWER_WAIT) {
                Ok(event) => {
                    let closing = matches!(
                        event,
                        EngineEvent::Finished(_) | EngineEvent::Debug(DebugEvent::Stopped(_))
                    );
                    out.push(event);
                    if closing {
                        return Ok(out);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err("the debug engine did not answer in 60 s".into())
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err("the debug engine thread ended".into())
                }
            }
        }
    }
}
