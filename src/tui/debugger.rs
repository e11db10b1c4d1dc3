//! The workbench's debugger state: breakpoints (kept across runs), the session in progress and
//! its last stop, the selected frame and expanded tables, watches, the console, and the line
//! counts of the last debug run for the editor's gutter. The engine side is `debug_engine.rs`;
//! the Debug tab is drawn by `ui/debug.rs`.
//!
//! Editing while a session runs is refused (cursor movement is allowed, to pick a line for
//! run-to-cursor): the paused run executes the text it started with, and its lines, stack and
//! gutter marks would no longer match an edited buffer. Stop debugging (Shift-F5 or Esc) to edit.

use super::action::Action;
use super::app::{App, Effect, Focus, PromptPurpose, Running, Tab};
use super::debug_engine::{
    Breaks, ConsoleKind, ConsoleLine, DebugCommand, DebugEvent, ExpandKey, StartDebug, StopView,
    ViewRequest, PAGE,
};
use crate::engine::debug::{Breakpoint, DebugSession, Resume, StopReason};
use crate::engine::keyspace::Db;
use crate::engine::RunRequest;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

/// Step keys kept while the script runs to its next stop.
const PENDING_STEPS: usize = 32;

/// Console lines kept (the oldest go first).
const CONSOLE_LINES: usize = 1000;

/// A debug session in progress.
pub struct Session {
    pub id: u64,
    /// The last stop (kept while the script runs on to the next one).
    pub stop: Option<Box<StopView>>,
    /// The script is paused at `stop` (false while it runs).
    pub paused: bool,
    /// The seed the run started from (the keyspace view compares the stop with it).
    pub seed: Db,
    /// The script's lines and where code is (for the gutter and breakpoints).
    pub script: DebugSession,
    /// The SHA1 of the script run (the gutter's counts hold while the editor has it).
    pub sha: String,
    /// Resumes to send at the next stops: step keys pressed while the script ran to its stop (a
    /// held F10 steps on), and run-to-cursor before any session.
    pending: VecDeque<Resume>,
}

/// The stops of the last debug session, in order, for an export (Alt-E on the Debug tab).
#[derive(Default)]
pub struct Recording {
    pub script: Vec<u8>,
    pub keys: Vec<Vec<u8>>,
    pub argv: Vec<Vec<u8>>,
    pub stops: Vec<crate::engine::debug::StopSnapshot>,
    /// The run ended (its reply is the last run's).
    pub ended: bool,
}

/// Line counts of the last debug run, for the gutter while the script is unchanged.
pub struct Coverage {
    pub sha: String,
    pub counts: BTreeMap<u32, u64>,
    pub script: DebugSession,
}

#[derive(Default)]
pub struct Debugger {
    pub breakpoints: Vec<Breakpoint>,
    next_id: u32,
    /// Redis commands to stop before (upper case).
    pub command_breaks: Vec<String>,
    pub key_write_breaks: Vec<Vec<u8>>,
    pub session: Option<Session>,
    pub coverage: Option<Coverage>,
    pub watches: Vec<String>,
    pub console: VecDeque<ConsoleLine>,
    /// The last session's stops (kept after it ends).
    pub recording: Option<Recording>,
    /// The selected frame (0 = innermost).
    pub frame: usize,
    /// Expanded tables by path, with how many entries are shown.
    pub expanded: BTreeMap<ExpandKey, usize>,
    /// The selected row of the variables tree.
    pub selected: usize,
    /// The editor's revision and lines the breakpoints were last placed on (see `follow_edits`).
    placed_on: Option<(u64, Vec<String>)>,
}

impl Debugger {
    /// Another script is opened: its lines are not the breakpoints' nor the counts'.
    pub fn forget_script(&mut self) {
        self.breakpoints.clear();
        self.placed_on = None;
        self.coverage = None;
    }

    /// The script's breakpoints and watches as its sidecar keeps them (tui/buffer.rs).
    pub fn restore(
        &mut self,
        breakpoints: &[crate::engine::formats::SidecarBreakpoint],
        watches: &[String],
    ) {
        for b in breakpoints {
            if b.line == 0 || self.breakpoint_at(b.line).is_some() {
                continue;
            }
            self.next_id += 1;
            self.breakpoints.push(Breakpoint {
                id: self.next_id,
                line: b.line,
                condition: b.condition.clone(),
                hit_count: b.hit_count,
            });
        }
        self.watches = watches.to_vec();
    }

    /// The breakpoints as the sidecar keeps them.
    pub fn saved_breakpoints(&self) -> Vec<crate::engine::formats::SidecarBreakpoint> {
        self.breakpoints
            .iter()
            .map(|b| crate::engine::formats::SidecarBreakpoint {
                line: b.line,
                condition: b.condition.clone(),
                hit_count: b.hit_count,
            })
            .collect()
    }

    pub fn breaks(&self) -> Breaks {
        Breaks {
            breakpoints: self.breakpoints.clone(),
            commands: self.command_breaks.clone(),
            key_writes: self.key_write_breaks.clone(),
            on_error: true,
        }
    }

    pub fn view(&self) -> ViewRequest {
        ViewRequest {
            frame: self.frame,
            expanded: self.expanded.clone(),
            watches: self.watches.clone(),
        }
    }

    pub fn say(&mut self, kind: ConsoleKind, text: impl Into<String>) {
        if self.console.len() >= CONSOLE_LINES {
            self.console.pop_front();
        }
        self.console.push_back(ConsoleLine::new(kind, text));
    }

    pub fn breakpoint_at(&self, line: u32) -> Option<&Breakpoint> {
        self.breakpoints.iter().find(|b| b.line == line)
    }

    /// The stop shown (paused or not), while a session runs.
    pub fn stop(&self) -> Option<&StopView> {
        self.session.as_ref().and_then(|s| s.stop.as_deref())
    }

    /// Paused at a stop: the line.
    pub fn paused_line(&self) -> Option<u32> {
        self.session
            .as_ref()
            .filter(|s| s.paused)
            .and_then(|s| s.stop.as_ref())
            .map(|s| s.line)
    }

    /// The keyspace at the last stop, while a session runs (the Keyspace tab follows it).
    pub fn stopped_keyspace(&self) -> Option<&Db> {
        self.stop().map(|s| &s.keyspace)
    }

    /// The session's seed, to mark what the run changed up to the stop.
    pub fn session_seed(&self) -> Option<&Db> {
        self.session
            .as_ref()
            .filter(|s| s.stop.is_some())
            .map(|s| &s.seed)
    }

    /// The line counts for `sha` (the editor's script), when the last debug run ran it.
    pub fn coverage_for(&self, sha: &str) -> Option<&Coverage> {
        self.coverage.as_ref().filter(|c| c.sha == sha)
    }
}

/// Keys the editor still takes while a session runs: moving the cursor, never editing.
pub fn refuses_key(app: &App, key: &KeyEvent) -> bool {
    app.debugger.session.is_some()
        && !matches!(
            key.code,
            KeyCode::Up
                | KeyCode::Down
                | KeyCode::Left
                | KeyCode::Right
                | KeyCode::Home
                | KeyCode::End
                | KeyCode::PageUp
                | KeyCode::PageDown
        )
}

pub const EDIT_REFUSED: &str =
    "no edits while debugging (the run executes the text it started with): Shift-F5 stops; Alt-6 then e evals, w watches";

/// Is `action` one of the debugger's?
pub fn handles(action: Action) -> bool {
    matches!(
        action,
        Action::ToggleBreakpoint
            | Action::EditBreakpoint
            | Action::StepOver
            | Action::StepInto
            | Action::StepOut
            | Action::StepBackLine
            | Action::ReverseContinue
            | Action::RunToCursor
            | Action::StopDebugging
            | Action::TabDebug
            | Action::DebugEval
            | Action::AddWatch
            | Action::RemoveWatch
            | Action::BreakOn
            | Action::NextFrame
            | Action::PrevFrame
    )
}

pub fn update(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::ToggleBreakpoint => toggle_breakpoint(app),
        Action::EditBreakpoint => {
            let line = cursor_line(app);
            let current = app.debugger.breakpoint_at(line).map_or(String::new(), |b| {
                match (&b.condition, b.hit_count) {
                    (Some(c), _) => c.clone(),
                    (None, Some(h)) => format!("hits {h}"),
                    (None, None) => String::new(),
                }
            });
            app.open_prompt(
                PromptPurpose::Breakpoint { line },
                format!("Breakpoint at line {line}: a Lua condition, or hits N"),
                current,
            );
        }
        Action::StepOver => return step(app, Resume::StepOver),
        Action::StepInto => return step(app, Resume::StepInto),
        Action::StepOut => return step(app, Resume::StepOut),
        Action::StepBackLine => return step(app, Resume::StepBack),
        Action::ReverseContinue => return step(app, Resume::ReverseContinue),
        Action::RunToCursor => {
            let line = cursor_line(app);
            return step(app, Resume::RunToLine(line));
        }
        Action::StopDebugging => return stop_debugging(app),
        Action::TabDebug => {
            app.tab = Tab::Debug;
            app.focus = Focus::Panes;
        }
        Action::DebugEval => {
            if paused(app) {
                app.open_prompt(
                    PromptPurpose::DebugEval,
                    "Eval Lua in the selected frame, or redis CMD ARGS… (reads only)",
                    "",
                );
            } else {
                app.status = "eval works when the script is stopped (F9 a line, F5; or F11)".into();
            }
        }
        Action::AddWatch => app.open_prompt(PromptPurpose::AddWatch, "Watch a Lua expression", ""),
        Action::RemoveWatch => {
            if app.debugger.watches.is_empty() {
                app.status = "no watches (w adds one)".into();
            } else {
                let n = app.debugger.watches.len().to_string();
                app.open_prompt(PromptPurpose::RemoveWatch, "Remove watch number", n);
            }
        }
        Action::BreakOn => app.open_prompt(
            PromptPurpose::BreakOn,
            "Stop before a command (INCR) or a write to key NAME; -INCR, -key NAME",
            "",
        ),
        Action::NextFrame | Action::PrevFrame => {
            let frames = app.debugger.stop().map_or(0, |s| s.frames.len());
            if frames == 0 {
                app.status = "no stack: the script is not stopped".into();
                return Vec::new();
            }
            let d = &mut app.debugger;
            d.frame = if action == Action::NextFrame {
                (d.frame + 1).min(frames - 1)
            } else {
                d.frame.saturating_sub(1)
            };
            d.selected = 0;
            if let Some(line) = app
                .debugger
                .stop()
                .and_then(|s| s.frames.get(app.debugger.frame))
                .map(|f| f.line)
            {
                app.editor.goto_line(line as usize);
            }
            return refresh(app);
        }
        _ => {}
    }
    Vec::new()
}

fn cursor_line(app: &App) -> u32 {
    app.editor.textarea.cursor().0 as u32 + 1
}

fn paused(app: &App) -> bool {
    app.debugger.session.as_ref().is_some_and(|s| s.paused)
}

/// F5: continue when stopped; start a debug session when breakpoints are set (in the sandbox);
/// otherwise a plain run.
pub fn run_or_continue(app: &mut App) -> Vec<Effect> {
    if app.debugger.session.is_some() {
        return step(app, Resume::Continue);
    }
    // A lab file is no script: F5 runs the lab.
    if super::race::is_lab_file(app.editor.path.as_deref()) {
        return super::race::open(app);
    }
    if !app.debugger.breakpoints.is_empty() && !on_live(app) {
        return start(app, false, None);
    }
    app.start_run()
}

fn on_live(app: &App) -> bool {
    app.use_live && app.live_server.is_some()
}

/// Esc: at a stop, end the run with LDB's abort; while the script runs, cancel it.
pub fn cancel(app: &mut App) -> Option<Vec<Effect>> {
    let session = app.debugger.session.as_ref()?;
    if session.paused {
        return Some(resume(app, Resume::Abort));
    }
    app.status = "cancelling…".into();
    Some(vec![Effect::Cancel])
}

fn stop_debugging(app: &mut App) -> Vec<Effect> {
    match cancel(app) {
        Some(effects) => effects,
        None => {
            app.status = "no debug session (F11 starts one at the first line)".into();
            Vec::new()
        }
    }
}

/// A step key: resume the paused run, or start a session for it.
fn step(app: &mut App, resume_with: Resume) -> Vec<Effect> {
    match &app.debugger.session {
        Some(s) if s.paused => resume(app, resume_with),
        Some(_) => {
            if let Some(s) = app.debugger.session.as_mut() {
                if s.pending.len() < PENDING_STEPS {
                    s.pending.push_back(resume_with);
                }
            }
            Vec::new()
        }
        None => match resume_with {
            Resume::StepInto | Resume::StepOver | Resume::StepOut => start(app, true, None),
            Resume::RunToLine(_) => start(app, true, Some(resume_with)),
            _ => {
                app.status =
                    "no debug session to step back in: F11 starts one at the first line".into();
                Vec::new()
            }
        },
    }
}

fn resume(app: &mut App, resume: Resume) -> Vec<Effect> {
    let breaks = app.debugger.breaks();
    let Some(session) = app.debugger.session.as_mut() else {
        return Vec::new();
    };
    session.paused = false;
    let id = session.id;
    // Each stop opens on its innermost frame (expanded tables stay, by name).
    app.debugger.frame = 0;
    let view = app.debugger.view();
    app.status = match resume {
        Resume::Abort => "aborting the run…".into(),
        Resume::StepBack | Resume::ReverseContinue => "replaying the run…".into(),
        _ => "running…".into(),
    };
    vec![Effect::Debug(DebugCommand::Resume {
        id,
        resume,
        breaks,
        view,
    })]
}

/// Ask the paused run for the view again (another frame, a table expanded, watches changed).
fn refresh(app: &mut App) -> Vec<Effect> {
    match &app.debugger.session {
        Some(s) if s.paused => vec![Effect::Debug(DebugCommand::View {
            id: s.id,
            view: app.debugger.view(),
        })],
        _ => Vec::new(),
    }
}

/// Start a debug session on the editor's script.
fn start(app: &mut App, stop_at_start: bool, pending: Option<Resume>) -> Vec<Effect> {
    if app.running.is_some() {
        app.status = "a run is already in progress (Esc cancels it)".into();
        return Vec::new();
    }
    if on_live(app) {
        app.status =
            "the workbench debugger runs in the sandbox: F7 switches runs to it (on the seed)"
                .into();
        return Vec::new();
    }
    let (keys, argv) = match app.inputs.parsed() {
        Ok(parsed) => parsed,
        Err(e) => {
            app.status = e;
            return Vec::new();
        }
    };
    // A function library debugs the form's function: FUNCTION LOAD, then its FCALL.
    let function = match super::form_function::for_run(app) {
        Some(Ok(name)) => Some(name),
        Some(Err(why)) => {
            app.status = why;
            return Vec::new();
        }
        None => None,
    };
    let script = app.editor.bytes();
    app.debugger.recording = Some(Recording {
        script: script.clone(),
        keys: keys.clone(),
        argv: argv.clone(),
        ..Recording::default()
    });
    let parsed = match function {
        Some(_) => DebugSession::for_library(&script),
        None => DebugSession::new(&script),
    };
    let session = match parsed {
        Ok(s) => s,
        Err((message, line)) => {
            // Shown at its line, as a run's error is.
            let text = match line {
                Some(n) => message
                    .strip_prefix(&format!("user_script:{n}: "))
                    .or_else(|| message.strip_prefix(&format!("user_function:{n}: ")))
                    .unwrap_or(&message)
                    .to_string(),
                None => message.clone(),
            };
            app.editor.set_error(line.map(|n| (n, text.clone())));
            app.status = format!("the script does not compile: {text}");
            return Vec::new();
        }
    };
    let id = app.allocate_run_id();
    app.running = Some(Running {
        id,
        started: Instant::now(),
        phase: None,
        dry_run: None,
    });
    app.step = None;
    app.editor.set_error(None);
    let d = &mut app.debugger;
    d.frame = 0;
    d.expanded.clear();
    d.selected = 0;
    d.console.clear();
    d.say(
        ConsoleKind::Note,
        "Lua debugging session started (sandbox).",
    );
    d.session = Some(Session {
        id,
        stop: None,
        paused: false,
        seed: app.seed.clone(),
        script: session,
        sha: app.editor.sha1(),
        pending: pending.into_iter().collect(),
    });
    app.tab = Tab::Debug;
    app.status = "debugging…".into();
    let request = RunRequest {
        script,
        keys,
        argv,
        ..RunRequest::default()
    };
    vec![Effect::Debug(DebugCommand::Start(Box::new(StartDebug {
        id,
        request,
        seed: app.seed.clone(),
        busy_threshold_ms: app.config.busy_threshold_ms,
        clock_ms: app.seed_now_ms + app.clock_offset_ms,
        breaks: app.debugger.breaks(),
        stop_at_start,
        view: app.debugger.view(),
        function,
    })))]
}

fn toggle_breakpoint(app: &mut App) {
    let line = cursor_line(app);
    if app.debugger.breakpoint_at(line).is_some() {
        app.debugger.breakpoints.retain(|b| b.line != line);
        app.status = format!("breakpoint at line {line} removed");
        return;
    }
    set_breakpoint(app, line, None, None);
}

/// The script's lines and code, as the session runs it or as the editor holds it.
fn script_lines(app: &App) -> Result<DebugSession, String> {
    if let Some(s) = &app.debugger.session {
        return Ok(s.script.clone());
    }
    // A library's lines as FUNCTION LOAD takes them.
    let code = app.editor.bytes();
    if app.form_function.is_library() {
        return DebugSession::for_library(&code).map_err(|(m, _)| m);
    }
    DebugSession::new(&code).map_err(|(m, _)| m)
}

/// Set (or change) a breakpoint; a line without code moves to the next line with code (said in
/// the console and the status line); a condition that does not compile is refused with Lua's
/// message.
fn set_breakpoint(app: &mut App, line: u32, condition: Option<&str>, hits: Option<u64>) {
    let mut script = match script_lines(app) {
        Ok(s) => s,
        Err(e) => {
            app.status = format!("no breakpoint: the script does not compile: {e}");
            return;
        }
    };
    script.breakpoints = app.debugger.breakpoints.clone();
    match script.add_breakpoint(line, condition, hits) {
        Ok(set) => {
            let d = &mut app.debugger;
            let existing = d.breakpoints.iter().position(|b| b.line == set.line);
            let mut bp = script.breakpoint_at(set.line).cloned().expect("just set");
            match existing {
                Some(i) => {
                    bp.id = d.breakpoints[i].id;
                    d.breakpoints[i] = bp;
                }
                None => {
                    d.next_id += 1;
                    bp.id = d.next_id;
                    d.breakpoints.push(bp);
                }
            }
            let what = match (condition, hits) {
                (Some(c), _) => format!(" if {c}"),
                (None, Some(h)) => format!(" from hit {h}"),
                _ => String::new(),
            };
            if set.line != set.asked {
                let text = format!(
                    "Line {} has no code: breakpoint moved to line {}.",
                    set.asked, set.line
                );
                d.say(ConsoleKind::Note, text.clone());
                app.status = format!("{text}{what}");
            } else {
                app.status = format!("breakpoint at line {}{what}", set.line);
            }
        }
        Err(e) => {
            app.debugger.say(ConsoleKind::Error, format!("<error> {e}"));
            app.status = format!("breakpoint refused: {e}");
        }
    }
}

/// The answer to one of the debugger's prompts.
pub fn answer_prompt(app: &mut App, purpose: &PromptPurpose, input: &str) -> Vec<Effect> {
    let input = input.trim();
    match purpose {
        PromptPurpose::Breakpoint { line } => {
            if input.is_empty() {
                set_breakpoint(app, *line, None, None);
            } else if let Some(h) = input.strip_prefix("hits ") {
                match h.trim().parse::<u64>() {
                    Ok(h) if h > 0 => set_breakpoint(app, *line, None, Some(h)),
                    _ => app.status = format!("'{h}' is not a hit count above 0 (hits N)"),
                }
            } else {
                let cond = input.strip_prefix("if ").unwrap_or(input);
                set_breakpoint(app, *line, Some(cond), None);
            }
        }
        PromptPurpose::DebugEval => {
            let Some(session) = app.debugger.session.as_ref().filter(|s| s.paused) else {
                app.status = "the script is not stopped".into();
                return Vec::new();
            };
            let id = session.id;
            if input.is_empty() {
                return Vec::new();
            }
            let redis = ["redis ", "r "].iter().find_map(|p| input.strip_prefix(p));
            return match redis {
                Some(rest) => match crate::engine::live::ldb::split_args(rest) {
                    Ok(args) => vec![Effect::Debug(DebugCommand::Redis { id, args })],
                    Err(e) => {
                        app.debugger.say(ConsoleKind::Error, format!("<error> {e}"));
                        Vec::new()
                    }
                },
                None => vec![Effect::Debug(DebugCommand::Eval {
                    id,
                    frame: app.debugger.frame,
                    code: input.to_string(),
                })],
            };
        }
        PromptPurpose::AddWatch if !input.is_empty() => {
            app.debugger.watches.push(input.to_string());
            app.status = format!("watching {input}");
            return refresh(app);
        }
        PromptPurpose::RemoveWatch => match input.parse::<usize>() {
            Ok(n) if n >= 1 && n <= app.debugger.watches.len() => {
                let w = app.debugger.watches.remove(n - 1);
                app.status = format!("watch {n} ({w}) removed");
                return refresh(app);
            }
            _ => app.status = format!("no watch '{input}' (1 to {})", app.debugger.watches.len()),
        },
        PromptPurpose::BreakOn => {
            let (remove, what) = match input.strip_prefix('-') {
                Some(rest) => (true, rest.trim()),
                None => (false, input),
            };
            let d = &mut app.debugger;
            if let Some(name) = what.strip_prefix("key ") {
                let key = name.as_bytes().to_vec();
                d.key_write_breaks.retain(|k| *k != key);
                if !remove {
                    d.key_write_breaks.push(key);
                }
                app.status = format!(
                    "{} before a write to {}",
                    if remove {
                        "no longer stopping"
                    } else {
                        "stopping"
                    },
                    crate::engine::reply::quote_bytes(name.as_bytes())
                );
            } else if !what.is_empty() && what.chars().all(|c| c.is_ascii_alphabetic()) {
                if crate::engine::commands::lookup(&what.to_ascii_lowercase()).is_none() {
                    app.status = format!("{} is not a Redis command", what.to_ascii_uppercase());
                    return Vec::new();
                }
                let name = what.to_ascii_uppercase();
                d.command_breaks.retain(|c| *c != name);
                if !remove {
                    d.command_breaks.push(name.clone());
                }
                app.status = format!(
                    "{} before every {name}",
                    if remove {
                        "no longer stopping"
                    } else {
                        "stopping"
                    }
                );
            } else {
                app.status = "give a command name (INCR) or key NAME".into();
            }
        }
        _ => {}
    }
    Vec::new()
}

/// Up/Down/PageUp/PageDown/Home/End in the variables tree.
pub fn scroll(app: &mut App, delta: isize) {
    let len = app.debugger.stop().map_or(0, |s| s.rows.len());
    let d = &mut app.debugger;
    d.selected = if len == 0 {
        0
    } else {
        (d.selected as isize + delta).clamp(0, len as isize - 1) as usize
    };
}

/// Enter on a variable: expand or collapse a table; on a "more" row, show another page.
pub fn select(app: &mut App) -> Vec<Effect> {
    let Some(row) = app
        .debugger
        .stop()
        .and_then(|s| s.rows.get(app.debugger.selected))
        .cloned()
    else {
        return Vec::new();
    };
    let d = &mut app.debugger;
    if row.more.is_some() {
        if let Some(limit) = d.expanded.get_mut(&row.key) {
            *limit += PAGE;
        }
    } else if row.expanded {
        d.expanded
            .retain(|(name, p), _| *name != row.key.0 || !p.starts_with(&row.key.1));
    } else if row.var.expandable {
        d.expanded.insert(row.key.clone(), PAGE);
    } else {
        app.status = format!("{} = {}", row.var.name, row.var.value);
        return Vec::new();
    }
    refresh(app)
}

/// At a stop, send the next step key pressed while the script ran.
pub fn housekeeping(app: &mut App) -> Vec<Effect> {
    let pending = match app.debugger.session.as_mut() {
        Some(s) if s.paused => s.pending.pop_front(),
        _ => None,
    };
    match pending {
        Some(r) => resume(app, r),
        None => Vec::new(),
    }
}

pub fn on_event(app: &mut App, event: DebugEvent) {
    let current = app.debugger.session.as_ref().map(|s| s.id);
    match event {
        DebugEvent::Console { id, line } if Some(id) == current => {
            app.debugger.console_push(line);
        }
        DebugEvent::Stopped(view) if Some(view.id) == current => {
            let (line, rows, now_ms) = (view.line, view.rows.len(), view.now_ms);
            let status = match &view.reason {
                StopReason::Error { message } => format!(
                    "stopped at the error on line {line} (locals intact): {message} — F5 ends the run"
                ),
                reason => format!(
                    "stopped at line {line} ({}) — F5 continue, F10 over, F11 into, S-F11 out, S-F10 back",
                    super::debug_engine::reason_text(reason)
                ),
            };
            let d = &mut app.debugger;
            d.frame = view.frame;
            d.selected = d.selected.min(rows.saturating_sub(1));
            let frame_line = view.frames.get(view.frame).map_or(line, |f| f.line);
            if let Some(s) = d.session.as_mut() {
                // Keys pressed ahead never step past an error: the user reads it first.
                if matches!(view.reason, StopReason::Error { .. }) {
                    s.pending.clear();
                }
                if let Some(r) = d.recording.as_mut() {
                    record(r, &view);
                }
                s.stop = Some(view);
                s.paused = true;
            }
            app.now_ms = now_ms;
            app.editor.goto_line(frame_line as usize);
            app.status = status;
        }
        DebugEvent::Ended { id, coverage, .. } if Some(id) == current => {
            if let Some(s) = app.debugger.session.take() {
                if let Some(counts) = coverage {
                    app.debugger.coverage = Some(Coverage {
                        sha: s.sha,
                        counts,
                        script: s.script,
                    });
                }
            }
            if let Some(r) = app.debugger.recording.as_mut() {
                r.ended = true;
            }
            app.debugger.say(ConsoleKind::Note, "The run ended.");
        }
        _ => {}
    }
}

/// A stop as an export keeps it: the line, why, the stack and the shown frame's variables (the
/// same stop shown again, with another frame or a table opened, replaces it).
fn record(r: &mut Recording, view: &StopView) {
    let snapshot = crate::engine::debug::StopSnapshot {
        line: view.line,
        reason: view.reason.clone(),
        event: view.event,
        frames: view.frames.clone(),
        variables: view
            .rows
            .iter()
            .filter(|row| row.depth == 0 && row.more.is_none())
            .map(|row| row.var.clone())
            .collect(),
    };
    match r.stops.last_mut() {
        Some(last) if last.event == snapshot.event && last.line == snapshot.line => {
            *last = snapshot
        }
        _ => r.stops.push(snapshot),
    }
}

impl Debugger {
    fn console_push(&mut self, line: ConsoleLine) {
        if self.console.len() >= CONSOLE_LINES {
            self.console.pop_front();
        }
        self.console.push_back(line);
    }
}

/// Breakpoints follow edits, as in every editor: lines inserted or deleted above a breakpoint move
/// it with its line; deleting its line removes it. Called after every event; the lines are kept
/// only while there are breakpoints.
pub fn follow_edits(app: &mut App) {
    let d = &mut app.debugger;
    if d.breakpoints.is_empty() {
        d.placed_on = None;
        return;
    }
    let revision = app.editor.revision();
    match &d.placed_on {
        Some((at, _)) if *at == revision => return,
        Some((_, old)) => {
            let moved = moved_lines(old, app.editor.lines());
            let mut removed = Vec::new();
            d.breakpoints.retain_mut(|b| match moved(b.line) {
                Some(line) => {
                    b.line = line;
                    true
                }
                None => {
                    removed.push(b.line);
                    false
                }
            });
            if !removed.is_empty() {
                let lines: Vec<String> = removed.iter().map(u32::to_string).collect();
                app.status = format!(
                    "breakpoint at line {} removed with its line",
                    lines.join(", ")
                );
            }
        }
        None => {}
    }
    d.placed_on = Some((revision, app.editor.lines().to_vec()));
}

/// Where each line (1-based) of `old` is in `new`: the lines before the first change and after the
/// last one keep their text (they move by the lines added or removed between); a changed line
/// keeps its number while the changed stretch still has a line there, else it was deleted (None).
fn moved_lines(old: &[String], new: &[String]) -> impl Fn(u32) -> Option<u32> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    let (old_len, new_len) = (old.len(), new.len());
    move |line: u32| {
        let i = (line as usize).saturating_sub(1);
        if i < prefix {
            Some(line)
        } else if i >= old_len - suffix {
            Some((i + new_len - old_len + 1) as u32)
        } else if i < new_len - suffix {
            Some(line)
        } else {
            None
        }
    }
}
