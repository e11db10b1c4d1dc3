//! The debugger's engine API: a debug session over the sandbox (breakpoints, steps both ways,
//! stack, variables, eval in a frame, coverage). Front ends (the headless REPL, the workbench)
//! implement [`DebugFrontend`]; the run calls [`DebugFrontend::stopped`] while the script is paused
//! inside it (the Lua state is not `Send`, so a stopped script stays on the engine's thread).
//!
//! Files: `hook.rs` the line hook, the stops and the replay driver; `inspect.rs` stack, variables
//! and value texts; `eval.rs` Lua in a frame and read-only Redis commands; `lines.rs` the lines
//! that hold code (from the compiled chunk's debug info).

pub(crate) mod eval;
pub(crate) mod hook;
pub(crate) mod inspect;
pub(crate) mod lines;
pub(crate) mod probes;

pub use hook::Stop;
pub use inspect::{Frame, Page, StopSnapshot, VarKind, Variable};

use super::report::RunReport;
use std::collections::BTreeMap;

/// Why the script is stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The first line of the script (as LDB stops when a session starts).
    Start,
    Breakpoint {
        id: u32,
    },
    /// A step (into, over, out, back, to a line, or an event reached by replay).
    Step,
    /// `redis.breakpoint()` was called on the previous line.
    RedisBreakpoint,
    /// An error that ends the script, before the stack unwinds (locals intact).
    Error {
        message: String,
    },
    /// Before a Redis command named by `break CMD`.
    Command {
        name: String,
    },
    /// Before a write to a key named by `bw KEY`.
    KeyWrite {
        key: Vec<u8>,
    },
}

/// What the front end wants after a stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    StepInto,
    StepOver,
    StepOut,
    Continue,
    /// Continue to this line (moved to the next line with code).
    RunToLine(u32),
    /// End the run with LDB's abort error.
    Abort,
    /// Back to the previous line event of the script (a replay).
    StepBack,
    /// Back to the previous breakpoint hit (or the start).
    ReverseContinue,
    /// To line event N (counted from the start of the run; earlier or later).
    GotoEvent(u64),
}

/// Text the script or the debugger produced between stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DebugOutput {
    /// `redis.debug(...)`: its arguments as LDB shows them.
    Debug { line: u32, text: String },
    /// Something the front end should know (a breakpoint moved, an eval refused...).
    Note(String),
}

/// A debugger front end. `stopped` is called while the script is paused; the `Stop` answers every
/// question about the paused run. Implementations for another thread block on a channel there
/// (`Stop::snapshot` gives plain, sendable data).
pub trait DebugFrontend {
    fn stopped(&mut self, stop: &mut Stop<'_>) -> Resume;
    fn output(&mut self, _output: DebugOutput) {}
}

/// A front end that never stops (coverage runs, "continue to the end" checks).
pub struct NoStops;

impl DebugFrontend for NoStops {
    fn stopped(&mut self, _stop: &mut Stop<'_>) -> Resume {
        Resume::Continue
    }
}

/// A line breakpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breakpoint {
    pub id: u32,
    pub line: u32,
    /// Lua expression evaluated in the frame; the breakpoint stops when it is true.
    pub condition: Option<String>,
    /// Stop only from the Nth hit on (a hit: the line reached with the condition true).
    pub hit_count: Option<u64>,
}

/// The answer to setting a breakpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BreakpointSet {
    pub id: u32,
    /// The line it was set on (the next line with code when the asked line has none).
    pub line: u32,
    pub asked: u32,
}

/// Everything a debug session keeps across stops (and across runs of the same script).
#[derive(Debug, Clone)]
pub struct DebugSession {
    pub breakpoints: Vec<Breakpoint>,
    /// Commands to stop before (upper case).
    pub command_breaks: Vec<String>,
    /// Keys to stop before a write to.
    pub key_write_breaks: Vec<Vec<u8>>,
    /// Stop where an error that ends the script is raised (default on).
    pub break_on_error: bool,
    /// Stop at the first line, as LDB does.
    pub stop_at_start: bool,
    /// Count line executions of the script.
    pub coverage: bool,
    /// LDB's `maxlen`: values and replies longer than this are cut (0: never).
    pub maxlen: usize,
    /// Per line: does it hold code (index = line number).
    code_lines: Vec<bool>,
    /// First lines of the functions taking `...` (their varargs cannot be read in Lua 5.1).
    vararg_functions: Vec<u32>,
    source: Vec<String>,
    /// The script as given, and per line where a breakpoint probe may go (probes.rs).
    script: Vec<u8>,
    probe_offsets: Vec<Option<usize>>,
    next_id: u32,
}

/// The report of a debugged run: the run's own report plus what only a debug run knows.
#[derive(Debug, Clone)]
pub struct DebugReport {
    pub run: RunReport,
    /// Line -> executions, with `DebugSession::coverage` (lines never run are absent).
    pub coverage: Option<BTreeMap<u32, u64>>,
    /// Line events of the last pass (the numbering of `Resume::GotoEvent`); None when the end of
    /// the run was reached without the line hook (after a continue: see probes.rs).
    pub events: Option<u64>,
}

impl DebugSession {
    /// A session for `script` (a shebang line is allowed). A script that does not compile gives
    /// Lua's message (`user_script:3: ...`) and its line.
    pub fn new(script: &[u8]) -> Result<DebugSession, (String, Option<u32>)> {
        Self::with_shebang(script, false)
    }

    /// A session for a function library (`#!lua name=...` first line): its functions are debugged
    /// through `Sandbox::debug_function`. Compile errors say `user_function:N:`.
    pub fn for_library(code: &[u8]) -> Result<DebugSession, (String, Option<u32>)> {
        Self::with_shebang(code, true).map_err(|(message, line)| {
            let message = match message.strip_prefix("user_script:") {
                Some(rest) => format!("user_function:{rest}"),
                None => message,
            };
            (message, line)
        })
    }

    fn with_shebang(script: &[u8], library: bool) -> Result<DebugSession, (String, Option<u32>)> {
        let parsed = if library {
            // The library's shebang (name=...) is FUNCTION LOAD's to check: its line only.
            Ok((
                Default::default(),
                if script.starts_with(b"#!") {
                    script
                        .iter()
                        .position(|&c| c == b'\n')
                        .unwrap_or(script.len())
                } else {
                    0
                },
            ))
        } else {
            // A shebang some profile's server accepts (Valkey runs `#!LUA`): the run refuses it
            // with its profile's own text where that server would.
            let accepted = crate::engine::profile::PROFILES
                .iter()
                .find_map(|p| crate::engine::script::parse_shebang_in(p, script).ok());
            accepted.map_or_else(|| crate::engine::script::parse_shebang(script), Ok)
        };
        let body = match parsed {
            Ok((_, len)) => {
                // Keep line numbers: the shebang line stays as an empty line.
                let mut b = script.to_vec();
                for c in b.iter_mut().take(len) {
                    if *c != b'\n' {
                        *c = b' ';
                    }
                }
                b
            }
            Err(text) => return Err((text, None)),
        };
        let (code_lines, vararg_functions) = lines::code_lines(&body)?;
        let probe_offsets = std::str::from_utf8(&body)
            .map(probes::probe_offsets)
            .unwrap_or_default();
        let text = String::from_utf8_lossy(script);
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let source = text
            .split('\n')
            .map(|l| l.trim_end_matches('\r').to_string())
            .collect();
        Ok(DebugSession {
            breakpoints: Vec::new(),
            command_breaks: Vec::new(),
            key_write_breaks: Vec::new(),
            break_on_error: true,
            stop_at_start: true,
            coverage: false,
            maxlen: 256,
            code_lines,
            vararg_functions,
            source,
            script: script.to_vec(),
            probe_offsets,
            next_id: 1,
        })
    }

    /// The script's lines (1-based: `source_line(1)` is the first).
    pub fn source_line(&self, line: u32) -> Option<&str> {
        self.source
            .get((line as usize).wrapping_sub(1))
            .map(String::as_str)
    }

    pub fn line_count(&self) -> u32 {
        self.source.len() as u32
    }

    /// Does the function defined at `line` take varargs (`...`)?
    pub fn is_vararg_function(&self, line: u32) -> bool {
        self.vararg_functions.contains(&line)
    }

    /// Does `line` hold code (can the script stop there)?
    pub fn has_code(&self, line: u32) -> bool {
        self.code_lines.get(line as usize).copied().unwrap_or(false)
    }

    /// The first line at or after `line` that holds code.
    pub fn next_code_line(&self, line: u32) -> Option<u32> {
        (line.max(1)..self.code_lines.len() as u32).find(|&l| self.has_code(l))
    }

    /// Set a breakpoint; a line without code moves to the next line with code. A condition that
    /// does not compile is refused with Lua's message.
    pub fn add_breakpoint(
        &mut self,
        line: u32,
        condition: Option<&str>,
        hit_count: Option<u64>,
    ) -> Result<BreakpointSet, String> {
        let Some(at) = self.next_code_line(line) else {
            return Err(format!(
                "line {line}: no code at or after this line (the script has {} lines)",
                self.line_count()
            ));
        };
        if let Some(cond) = condition {
            eval::check_condition(cond)?;
        }
        if let Some(bp) = self.breakpoints.iter_mut().find(|b| b.line == at) {
            bp.condition = condition.map(str::to_string);
            bp.hit_count = hit_count;
            return Ok(BreakpointSet {
                id: bp.id,
                line: at,
                asked: line,
            });
        }
        let id = self.next_id;
        self.next_id += 1;
        self.breakpoints.push(Breakpoint {
            id,
            line: at,
            condition: condition.map(str::to_string),
            hit_count,
        });
        Ok(BreakpointSet {
            id,
            line: at,
            asked: line,
        })
    }

    /// Remove the breakpoint on `line`; false when there is none.
    pub fn remove_breakpoint(&mut self, line: u32) -> bool {
        let before = self.breakpoints.len();
        self.breakpoints.retain(|b| b.line != line);
        before != self.breakpoints.len()
    }

    pub fn breakpoint_at(&self, line: u32) -> Option<&Breakpoint> {
        self.breakpoints.iter().find(|b| b.line == line)
    }

    /// The body the VM compiles for `script` (shebang line cut at `skip`) with a probe on every
    /// breakpoint line that can take one, and those lines; None for another script or no probe.
    pub(crate) fn probed_body(&self, script: &[u8], skip: usize) -> Option<(Vec<u8>, Vec<u32>)> {
        if script != self.script.as_slice() {
            return None;
        }
        let lines: Vec<u32> = self.breakpoints.iter().map(|b| b.line).collect();
        probes::instrument(&script[skip..], &self.probe_offsets, skip, &lines)
    }
}

/// One run of `go` (the sandbox's EVAL or FCALL, for `Sandbox::debug` and
/// `Sandbox::debug_function`) with the debugger armed: it stops where `session` says and asks
/// `frontend` what to do. The sandbox calls this; the debugger never reaches up into the sandbox.
pub(crate) fn armed(
    session: &mut DebugSession,
    frontend: &mut dyn DebugFrontend,
    go: impl FnOnce() -> RunReport,
) -> DebugReport {
    crate::engine::lua::debug_hooks::install(|| crate::engine::lua::debug_hooks::DebugHooks {
        before_call: hook::before_call,
        breakpoint: hook::redis_breakpoint,
        debug: hook::redis_debug,
        on_error: hook::on_script_error,
    });
    let mut run = hook::DebugRun::new(session, frontend);
    hook::DebugRun::arm(&mut run);
    let mut report = go();
    hook::DebugRun::disarm();
    // Time stopped and time replaying are not the script's.
    if report.outcome != super::report::Outcome::Refused {
        report.elapsed_ns = run.active.as_nanos() as u64;
    }
    let coverage = run.coverage.take().map(|counts| {
        counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(line, &n)| (line as u32, n))
            .collect()
    });
    DebugReport {
        run: report,
        coverage,
        events: run.event_known.then_some(run.event),
    }
}
