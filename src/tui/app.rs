//! The application state and its one entry point for change: `App::update(Action) -> Vec<Effect>`
//! (plus `on_key`, which passes a key through layers, overlays first and global keys late, and
//! `on_engine_event`). No drawing and no I/O here: the effects are carried out by the event loop
//! (or by a test harness), which keeps all of this testable without a terminal or threads.

use super::action::Action;
use super::config::Config;
use super::editor::EditorState;
use super::files::{self, PickerState};
use super::inputs::InputsState;
use super::inspector::{Cached, InspectEvent, InspectRequest};
use super::keymap::{Context, Keymap};
use super::keyspace::KeyspaceView;
use super::server::ServerView;
use super::worker::{EngineEvent, RunResult};
use crate::engine::keyspace::Db;
use crate::engine::RunRequest;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Editor,
    Keys,
    Argv,
    Panes,
}

impl Focus {
    const ORDER: [Focus; 4] = [Focus::Editor, Focus::Keys, Focus::Argv, Focus::Panes];
    fn step(self, by: isize) -> Focus {
        let i = Self::ORDER.iter().position(|f| *f == self).unwrap_or(0) as isize;
        Self::ORDER[(i + by).rem_euclid(4) as usize]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Trace,
    Reply,
    Keyspace,
    Warnings,
    /// The live server's keyspace (only with a live server).
    Server,
    /// The debugger: stack, variables, watches, console (tui/debugger.rs).
    Debug,
    /// The open lesson (tui/lessons.rs; shown while one is open).
    Lesson,
    /// The race lab's outcomes and replay (tui/race.rs; shown once a lab ran).
    Race,
    /// A test file's results (tui/tests_tab.rs; shown once it ran).
    Tests,
}

impl Tab {
    pub const ALL: [Tab; 9] = [
        Tab::Trace,
        Tab::Reply,
        Tab::Keyspace,
        Tab::Warnings,
        Tab::Server,
        Tab::Debug,
        Tab::Lesson,
        Tab::Race,
        Tab::Tests,
    ];
    pub fn title(self) -> &'static str {
        match self {
            Tab::Trace => "Trace",
            Tab::Reply => "Reply",
            Tab::Keyspace => "Keyspace",
            Tab::Warnings => "Warnings",
            Tab::Server => "Server",
            Tab::Debug => "Debug",
            Tab::Lesson => "Lesson",
            Tab::Race => "Race",
            Tab::Tests => "Tests",
        }
    }
}

/// What a prompt's answer is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptPurpose {
    FilterKeys,
    AddKey,
    SetString {
        key: Vec<u8>,
    },
    SetTtl {
        key: Vec<u8>,
    },
    LoadSeed,
    SaveSeed,
    AdvanceClock,
    SaveAs,
    Find,
    /// The Server tab's SCAN MATCH pattern.
    ScanMatch,
    /// A key on the live server, by name.
    OpenServerKey,
    /// The MATCH glob of a search inside a server key.
    SearchInKey {
        key: Vec<u8>,
    },
    /// A line of the script to go to (editing.rs).
    GotoLine,
    // The debugger's prompts (tui/debugger.rs).
    Breakpoint {
        line: u32,
    },
    DebugEval,
    AddWatch,
    RemoveWatch,
    BreakOn,
    /// The file to export the last run to (tui/export_run.rs).
    ExportRun,
    /// The name of a new test case (tui/tests_tab.rs).
    SaveCase,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub purpose: PromptPurpose,
    pub title: String,
    pub input: String,
    /// The input is the prefilled value, untouched: typing replaces it (inputs.rs).
    pub prefilled: bool,
}

#[derive(Debug, Clone)]
pub enum Confirm {
    QuitUnsaved,
    Recover,
    /// Close a buffer with unsaved changes: s saves, d discards, Esc cancels (tui/buffers.rs).
    CloseUnsaved,
    /// Save over another existing file (save-as).
    Overwrite(PathBuf),
    /// The file at the script's sidecar path is not an evalbench sidecar (or cannot be read):
    /// overwrite it, save the script only, or cancel.
    ForeignSidecar {
        script: PathBuf,
        /// What the file is, in words.
        why: String,
    },
    /// Send a script to the live server after the guard asked (the dry run writes, was slow or did
    /// not complete, or none was possible): y gives `question.consent`.
    LiveSend(Box<RunRequest>, Box<crate::engine::live::guarded::Question>),
    /// Open a lesson (its index) over unsaved changes (tui/lessons.rs).
    OpenLesson(usize),
    /// Reset the lesson's script to its start.
    ResetLesson,
    /// SCRIPT KILL from the Server tab's overview.
    ScriptKill,
    /// Open a server's function library read-only over unsaved changes.
    OpenServerLibrary {
        name: String,
        /// Shared: the question is cloned on every key while it shows.
        code: std::sync::Arc<[u8]>,
    },
    /// A live FCALL of this function after the guard asked (tui/live_function.rs).
    LiveFcall(
        Box<RunRequest>,
        Box<crate::engine::live::guarded::Question>,
        String,
    ),
    /// FUNCTION LOAD [REPLACE] of the editor's library as planned (tui/live_function.rs).
    LoadLibrary(Box<(Vec<u8>, crate::engine::live::function_load::LoadPlan)>),
}

pub enum Overlay {
    /// The command palette, which is the help too (tui/palette.rs).
    Palette(Box<super::palette::PaletteState>),
    Picker(PickerState),
    /// The open buffers, the selected row (tui/buffers.rs).
    Buffers(usize),
    /// The lesson picker (tui/lessons.rs): the selected row.
    Lessons(usize),
    Prompt(Prompt),
    Confirm(Confirm),
    /// The `redis>` command prompt (tui/command_prompt.rs; its state is `App::command`).
    Command,
    /// The value inspector, full screen (tui/value_view.rs).
    Value(Box<super::value_view::ValueView>),
}

/// Something the event loop must do.
#[derive(Debug)]
pub enum Effect {
    Run {
        id: u64,
        request: RunRequest,
        seed: Db,
        busy_threshold_ms: u64,
        /// What the user agreed to after the live guard asked (nothing: dry-run first).
        consent: crate::engine::live::guarded::Consent,
        /// Run on the live server (false: in the sandbox).
        live: bool,
        /// The sandbox's run clock (Unix ms): the seed's time plus the clock offset, the same at
        /// every run whatever the wall clock says, so seed TTLs count from the run's start.
        clock_ms: i64,
        /// The script is a function library: FCALL this function of it.
        function: Option<String>,
    },
    /// A request to the live inspector thread.
    Inspect(InspectRequest),
    Cancel,
    Quit,
    /// Put these bytes on the system clipboard (OSC 52; editing.rs).
    Clipboard(Vec<u8>),
    /// A command to the debugger on the engine thread (tui/debug_engine.rs).
    Debug(super::debug_engine::DebugCommand),
    /// Re-run the last run under a second profile (tui/reply_compare.rs).
    Compare(Box<super::reply_compare::CompareJob>),
    /// Run a test file's cases off the UI thread (tui/tests_tab.rs).
    RunTests(super::tests_tab::TestsJob),
    /// Lint the editor's text off the UI thread (tui/lint_diagnostics.rs).
    Lint(super::lint_diagnostics::LintJob),
    /// Plan or send FUNCTION LOAD on the engine thread's live connection (tui/live_function.rs).
    LiveFunction(super::live_function::LiveFunctionJob),
}

/// A run in progress.
#[derive(Debug, Clone, Copy)]
pub struct Running {
    pub id: u64,
    pub started: Instant,
    /// A live run: its phase, since when, and how long its dry run took (the running counter
    /// separates the dry run's time from the server's).
    pub phase: Option<(crate::engine::live::guarded::Phase, Instant)>,
    pub dry_run: Option<std::time::Duration>,
}

/// Ctrl or Alt with a character, or an F-key: the editor types none of them, so one that no
/// binding took does nothing (the status line says so).
fn unbound_chord(key: &KeyEvent) -> bool {
    use ratatui::crossterm::event::KeyModifiers;
    match key.code {
        KeyCode::Char(_) => key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT),
        KeyCode::F(_) => true,
        _ => false,
    }
}

/// List position of a pane.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListState {
    pub selected: usize,
    pub offset: usize,
}

impl ListState {
    pub fn move_by(&mut self, delta: isize, len: usize) {
        if len == 0 {
            self.selected = 0;
            return;
        }
        self.selected = (self.selected as isize + delta).clamp(0, len as isize - 1) as usize;
    }
}

pub struct App {
    pub editor: EditorState,
    pub inputs: InputsState,
    /// The function F5 calls when the editor holds a function library (form_function.rs).
    pub form_function: super::form_function::FormFunction,
    /// On a cluster: the node of the last live run (where it ran, or goes once agreed).
    pub live_node: Option<String>,
    /// On a cluster: what a script past `cluster-node-timeout` risks (said with a slow dry run).
    pub cluster_timeout_note: Option<String>,
    /// The function of the live FCALL in progress: its guard's question names it.
    pub live_function: Option<String>,
    pub keyspace: KeyspaceView,
    pub keymap: Keymap,
    pub config: Config,
    pub focus: Focus,
    pub tab: Tab,
    pub overlay: Option<Overlay>,
    pub last_run: Option<RunResult>,
    /// The Reply tab's second profile and its answer.
    pub reply_compare: super::reply_compare::CompareState,
    pub running: Option<Running>,
    /// Index into the trace while stepping through the last run.
    pub step: Option<usize>,
    pub trace_list: ListState,
    pub reply_scroll: u16,
    pub warnings_scroll: u16,
    /// The seed keyspace every run starts from.
    pub seed: Db,
    /// The last race lab run (the Race tab, tui/race.rs).
    pub race: Option<super::race::RaceView>,
    /// A race lab still running on its thread.
    pub race_pending: Option<super::race::RacePending>,
    /// Unix ms of the sandbox clock (for TTLs in the inspector).
    pub now_ms: i64,
    /// The seed's time (Unix ms): seed TTLs are relative to it; a sandbox run's clock starts here
    /// plus `clock_offset_ms`, so the same seed gives the same result at minute 0 and minute 60.
    pub seed_now_ms: i64,
    /// How far the run clock is ahead of the seed's time (advance clock; reset to 0).
    pub clock_offset_ms: i64,
    /// Keep state: each sandbox run's keyspace becomes the seed of the next run; the seed from
    /// before is kept to return to when it is switched off.
    pub keep_state: Option<(Db, i64)>,
    pub status: String,
    pub quit: bool,
    /// The live server ("redis 7.0.15 host:port"), when there is one.
    pub live_server: Option<String>,
    /// Runs go to the live server (F7 switches to the sandbox and back).
    pub use_live: bool,
    /// The Server tab's state (with a live server).
    pub server: Option<ServerView>,
    /// Whether the live server's script cache holds the script with this SHA1 (None: the question
    /// failed; it is asked again after the next run or edit).
    pub script_cache: Option<(String, Option<Cached>)>,
    /// The SHA1 whose SCRIPT EXISTS is on its way.
    pub script_cache_pending: Option<String>,
    /// The focused pane fills the screen (Zoom).
    pub zoomed: bool,
    /// Where the last frame drew things, for the mouse (mouse.rs).
    pub regions: std::cell::RefCell<super::mouse::Regions>,
    /// The live server's connection (checked with PING; shown in the status bar).
    pub connection: super::connection::ConnectionState,
    /// Breakpoints, the debug session, watches, console, coverage (tui/debugger.rs).
    pub debugger: super::debugger::Debugger,
    /// The open lesson (tui/lessons.rs).
    pub lesson: Option<Box<super::lessons::LessonState>>,
    /// Presenter mode (ui/present.rs): one large pane.
    pub present: bool,
    /// Presenter mode shows the code beside the tab shown (trace, keyspace, debugger...).
    pub present_split: bool,
    /// The Tests tab: the script's test file run on the editor's text (tui/tests_tab.rs).
    pub tests: super::tests_tab::TestsPane,
    /// Lint while typing: the findings of the editor's text (tui/lint_diagnostics.rs).
    pub lint: super::lint_diagnostics::LintState,
    /// The buffer's changes besides its text, for its undo and its modified mark (tui/buffer.rs).
    pub changes: super::buffer::Changes,
    /// The `redis>` prompt's line, history and last reply (tui/command_prompt.rs).
    pub command: super::command_prompt::CommandLine,
    /// The other open buffers (tui/buffers.rs).
    pub buffers: super::buffers::Buffers,
    next_run_id: u64,
}

impl App {
    pub fn new(script: &str, path: Option<PathBuf>, config: Config) -> App {
        let mut keymap = Keymap::default();
        let mut status = String::from("F5 runs the script, F1 shows every key");
        for warning in config.apply_key_overrides(&mut keymap) {
            status = warning;
        }
        App {
            editor: EditorState::new(script, path),
            inputs: InputsState::default(),
            form_function: super::form_function::FormFunction::for_code(script.as_bytes()),
            live_function: None, // live FCALL
            live_node: None,
            cluster_timeout_note: None,
            keyspace: KeyspaceView::default(),
            keymap,
            config,
            focus: Focus::Editor,
            tab: Tab::Trace,
            race: None,
            race_pending: None,
            overlay: None,
            last_run: None,
            reply_compare: Default::default(),
            running: None,
            step: None,
            trace_list: ListState::default(),
            reply_scroll: 0,
            warnings_scroll: 0,
            seed: Db::new(),
            now_ms: super::keyspace::wall_clock_ms(),
            seed_now_ms: super::keyspace::wall_clock_ms(),
            clock_offset_ms: 0,
            keep_state: None,
            status,
            quit: false,
            live_server: None,
            use_live: false,
            server: None,
            script_cache: None,
            script_cache_pending: None,
            zoomed: false,
            regions: Default::default(),
            connection: Default::default(),
            debugger: Default::default(),
            lesson: None,
            present: false,
            present_split: false,
            tests: Default::default(),
            lint: Default::default(),
            changes: Default::default(),
            command: Default::default(),
            buffers: Default::default(),
            next_run_id: 1,
        }
    }

    /// With a live server: runs go there (guarded), and the Server tab browses its keyspace.
    pub fn set_live_server(&mut self, label: String) {
        self.live_server = Some(label);
        self.use_live = true;
        self.server = Some(ServerView::default());
    }

    /// What runs the scripts, for the status bar.
    pub fn backend_label(&self) -> String {
        let live_server = self
            .live_server
            .as_ref()
            .map(|s| self.connection.server_label(s));
        match (&live_server, self.use_live) {
            (Some(server), _) if self.connection.lost.is_some() => {
                format!("live {server} DISCONNECTED")
            }
            // The cluster refuses runs with keys: the status line says why.
            (Some(server), true) if self.connection.cluster_down.is_some() => {
                format!("live {server} CLUSTER DOWN")
            }
            (Some(server), true) if !self.connection.down.is_empty() => format!(
                "live {server} guarded · {} node{} down: {}",
                self.connection.down.len(),
                if self.connection.down.len() == 1 {
                    ""
                } else {
                    "s"
                },
                self.connection.down.join("; ")
            ),
            (Some(server), true) => format!("live {server} guarded"),
            (Some(_), false) => format!("sandbox{} (F7: live)", self.sandbox_state_label()),
            (None, _) => format!("sandbox{}", self.sandbox_state_label()),
        }
    }

    /// The sandbox's run clock and keep-state mode, when not the defaults (" clock +30 s, keep state").
    fn sandbox_state_label(&self) -> String {
        let mut parts = Vec::new();
        if self.clock_offset_ms != 0 {
            parts.push(format!("clock +{} s", self.clock_offset_ms / 1000));
        }
        if self.keep_state.is_some() {
            parts.push("keep state".to_string());
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!(" · {}", parts.join(", "))
        }
    }

    /// The buffer changed after the last run: its markers (error line, trace) are stale.
    pub fn run_is_stale(&self) -> bool {
        self.last_run
            .as_ref()
            .is_some_and(|r| r.report.sha1 != self.editor.sha1())
    }

    /// The tabs shown: Server only with a live server.
    pub fn tabs(&self) -> Vec<Tab> {
        Tab::ALL
            .into_iter()
            .filter(|t| *t != Tab::Server || self.server.is_some())
            .filter(|t| *t != Tab::Lesson || self.lesson.is_some())
            .filter(|t| *t != Tab::Race || self.race.is_some())
            .filter(|t| *t != Tab::Tests || self.tests.shown()) // once a test file ran
            .collect()
    }

    /// An answer of the live inspector thread.
    pub fn on_inspect_event(&mut self, event: InspectEvent) {
        super::server::on_event(self, event);
    }

    /// The Server tab waits for the server (the event loop then ticks faster).
    pub fn inspecting(&self) -> bool {
        self.server.as_ref().is_some_and(|s| s.waiting())
            || self.script_cache_pending.is_some()
            || super::lessons::waiting(self) // a lesson check running
            || self.race_pending.is_some()
    }

    /// The requests the Server tab and the script-cache mark need now (after any event).
    pub fn housekeeping(&mut self) -> Vec<Effect> {
        let mut effects = super::server::housekeeping(self);
        // The connection check (a PING every few seconds).
        effects.extend(super::connection::housekeeping(self));
        effects.extend(super::debugger::housekeeping(self)); // step keys queued while the script ran
        super::lessons::housekeeping(self); // a lesson check's result
        effects.extend(super::reply_compare::housekeeping(self));
        super::race::housekeeping(self); // a race lab's report
        effects.extend(super::tests_tab::housekeeping(self)); // test results from their thread
        effects.extend(super::lint_diagnostics::housekeeping(self)); // lint once the text rests
        super::form_function::housekeeping(self); // the library's functions in the form
        effects
    }

    /// A new run's id (runs and debug sessions share the numbering).
    pub(crate) fn allocate_run_id(&mut self) -> u64 {
        let id = self.next_run_id;
        self.next_run_id += 1;
        id
    }

    /// The binding context of the focused pane.
    pub fn context(&self) -> Context {
        match (self.focus, self.tab) {
            (_, _) if matches!(self.overlay, Some(Overlay::Value(_))) => Context::Value,
            (_, _) if self.overlay.is_some() => Context::Overlay,
            (Focus::Editor, _) => Context::Editor,
            (Focus::Panes, Tab::Keyspace) => Context::Keyspace,
            (Focus::Panes, Tab::Server) => Context::Server,
            (Focus::Panes, Tab::Debug) => Context::Debug,
            (Focus::Panes, _) => Context::Panes,
            _ => Context::Global,
        }
    }

    /// Route a terminal event (keys: see `on_key`).
    pub fn on_event(&mut self, event: &Event) -> Vec<Effect> {
        super::buffer::before_event(self);
        let effects = self.on_event_inner(event);
        // Breakpoints follow the lines they are on through every edit (tui/debugger.rs).
        super::debugger::follow_edits(self);
        // The form, breakpoints and watches are the buffer's changes too (tui/buffer.rs).
        super::buffer::after_event(self);
        effects
    }

    fn on_event_inner(&mut self, event: &Event) -> Vec<Effect> {
        match event {
            Event::Key(key) if key.kind != ratatui::crossterm::event::KeyEventKind::Release => {
                self.on_key(*key)
            }
            Event::Mouse(mouse) => super::mouse::on_mouse(self, *mouse),
            Event::Paste(text) => {
                // A paste into an open prompt goes there, as one line.
                if let Some(Overlay::Prompt(prompt)) = self.overlay.as_mut() {
                    prompt.input.push_str(&text.replace(['\r', '\n'], " "));
                    return Vec::new();
                }
                if let Some(Overlay::Command) = self.overlay {
                    super::command_prompt::paste(self, text);
                    return Vec::new();
                }
                if self.overlay.is_some() {
                    return Vec::new();
                }
                match self.focus {
                    // Never into a script the debugger is running (tui/debugger.rs).
                    Focus::Editor if self.debugger.session.is_some() => {
                        self.status = super::debugger::EDIT_REFUSED.into()
                    }
                    // A server's library stays as it is (tui/read_only.rs).
                    Focus::Editor if self.editor.read_only.is_some() => {
                        super::read_only::refuse(self);
                    }
                    Focus::Editor => self.editor.paste(text),
                    Focus::Keys | Focus::Argv => self.inputs.paste(self.focus == Focus::Keys, text),
                    Focus::Panes => {}
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// Route a key as gitui's event pump does: each layer takes it or passes it on. An overlay
    /// takes every key until it closes; then Esc stops whatever runs; then the focused pane's own
    /// keys, the global keys, the editor's keys (from wherever the editor shows), Esc as "back one
    /// level", and last the focused widget's typing, or a word saying the key does nothing here.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if self.overlay.is_some() {
            return self.on_overlay_key(key);
        }
        super::buffers::forget_pending_close(self);
        if let Some(effects) = self.stop_key(&key) {
            return effects;
        }
        if let Some(effects) = self.pane_key(&key) {
            return effects;
        }
        // Esc reaches here with nothing to stop: it goes back a level below.
        if let Some(action) = self
            .keymap
            .lookup(Context::Global, &key)
            .filter(|a| *a != Action::Cancel)
        {
            return self.update(action);
        }
        if let Some(effects) = self.editor_key_elsewhere(&key) {
            return effects;
        }
        if key.code == KeyCode::Esc {
            self.back();
            return Vec::new();
        }
        self.widget_key(key);
        Vec::new()
    }

    /// Esc while a script, a debug session, a race lab or a lesson's check runs: it stops that.
    fn stop_key(&mut self, key: &KeyEvent) -> Option<Vec<Effect>> {
        if self.keymap.lookup(Context::Global, key) != Some(Action::Cancel) {
            return None;
        }
        if self.running.is_some() || self.debugger.session.is_some() || self.race_pending.is_some()
        {
            return Some(self.update(Action::Cancel));
        }
        super::lessons::cancel(self).then(Vec::new)
    }

    /// The keys bound in the focused pane's context (the editor's, a tab's, then the tabs' shared
    /// ones). The KEYS / ARGV fields have none: their typing comes after the global keys.
    fn pane_key(&mut self, key: &KeyEvent) -> Option<Vec<Effect>> {
        let context = self.context();
        if let Some(action) = self.keymap.lookup(context, key) {
            // Esc in the Server tab stops a search inside a key; with none it goes back.
            let idle_esc = action == Action::StopSearch
                && key.code == KeyCode::Esc
                && !super::server::searching(self);
            if matches!(
                context,
                Context::Editor | Context::Keyspace | Context::Server | Context::Debug
            ) && !idle_esc
            {
                return Some(self.update(action));
            }
        }
        if self.focus == Focus::Panes {
            let action = self.keymap.lookup(Context::Panes, key)?;
            return Some(self.update(action));
        }
        None
    }

    /// An editor key pressed in a field or a pane: it works on the editor when the editor shows
    /// (the focus goes there, so the effect is seen), else the status line says why not. Tab and
    /// Shift-Tab stay where they are, and so do a field's own text keys (copy, paste, undo…).
    fn editor_key_elsewhere(&mut self, key: &KeyEvent) -> Option<Vec<Effect>> {
        if self.focus == Focus::Editor {
            return None;
        }
        let action = self.keymap.lookup(Context::Editor, key)?;
        // The buffer's last change may be a field, a seed key or a breakpoint: undone where the
        // focus is (tui/buffer.rs); a text change goes on to the editor as below.
        if matches!(action, Action::Undo | Action::Redo)
            && super::buffer::undo_redo(self, action == Action::Undo)
        {
            return Some(Vec::new());
        }
        let in_field = matches!(self.focus, Focus::Keys | Focus::Argv);
        let text_key = matches!(
            action,
            Action::Undo
                | Action::Redo
                | Action::Copy
                | Action::Cut
                | Action::Paste
                | Action::SelectAll
                | Action::Indent
                | Action::Outdent
        );
        if matches!(action, Action::Indent | Action::Outdent) || (in_field && text_key) {
            return None;
        }
        if !self.shows_editor() {
            self.status = format!(
                "{}: {} works in the editor, hidden now (Esc: the editor)",
                super::ui::key_label(key),
                action.hint()
            );
            return Some(Vec::new());
        }
        self.focus = Focus::Editor;
        Some(self.update(action))
    }

    /// Whether the editor is on screen (a zoomed pane or presenter mode shows the focused one).
    pub fn shows_editor(&self) -> bool {
        self.focus != Focus::Panes || !(self.zoomed || self.present)
    }

    /// Esc with nothing to stop or close: back one level (a key list's value view to its list,
    /// a pane or a field to the editor).
    fn back(&mut self) {
        match self.focus {
            Focus::Panes if self.tab == Tab::Keyspace && self.keyspace.value_focus => {
                self.keyspace.value_focus = false;
            }
            Focus::Panes
                if self.tab == Tab::Server
                    && self.server.as_ref().is_some_and(|s| s.value_focus) =>
            {
                if let Some(server) = self.server.as_mut() {
                    server.value_focus = false;
                }
            }
            Focus::Panes | Focus::Keys | Focus::Argv => {
                self.focus = Focus::Editor;
                // A word about the pane left behind would be stale now.
                self.status = "back in the editor (F6 or Alt-1…9: the panes)".into();
            }
            Focus::Editor => {}
        }
    }

    /// What is left: typing into the editor or a field, or a word for a key that does nothing.
    fn widget_key(&mut self, key: KeyEvent) {
        let label = super::ui::key_label(&key);
        match self.focus {
            Focus::Editor if super::debugger::refuses_key(self, &key) => {
                self.status = super::debugger::EDIT_REFUSED.into()
            }
            // A server's library stays as it is (tui/read_only.rs).
            Focus::Editor if self.editor.read_only.is_some() && super::read_only::edits(&key) => {
                super::read_only::refuse(self);
            }
            // Ctrl or Alt with a character, or an F-key, that nothing is bound to.
            Focus::Editor if unbound_chord(&key) => {
                self.status = format!("{label} does nothing in the editor (F1: every key)");
            }
            Focus::Editor => self.editor.on_key(key),
            Focus::Keys => self.inputs.on_key(true, key),
            Focus::Argv => self.inputs.on_key(false, key),
            Focus::Panes if matches!(key.code, KeyCode::Modifier(_) | KeyCode::Null) => {}
            Focus::Panes => {
                self.status = format!(
                    "{label} does nothing in the {} tab (F1: its keys, Esc: the editor)",
                    self.tab.title()
                );
            }
        }
    }

    fn on_overlay_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let action = self.keymap.lookup(Context::Overlay, &key);
        match self.overlay.as_mut() {
            Some(Overlay::Value(_)) => super::value_view::on_key(self, key),
            Some(Overlay::Prompt(prompt)) => {
                match key.code {
                    KeyCode::Esc => self.overlay = None,
                    KeyCode::Enter => {
                        let prompt = prompt.clone();
                        self.overlay = None;
                        return self.answer_prompt(prompt);
                    }
                    // The search prompt's literal / regex switch (editing.rs).
                    _ if action == Some(Action::SearchRegex)
                        && matches!(prompt.purpose, PromptPurpose::Find) =>
                    {
                        self.editor.search_regex = !self.editor.search_regex;
                        prompt.title = super::editing::find_title(self.editor.search_regex);
                    }
                    _ => super::inputs::edit_prompt(prompt, key),
                }
                Vec::new()
            }
            // Recovery takes an explicit key: r recovers, d discards (a stray y or n does not).
            Some(Overlay::Confirm(Confirm::Recover)) => {
                match key.code {
                    KeyCode::Char('r') => {
                        self.overlay = None;
                        self.recover();
                    }
                    KeyCode::Char('d') => {
                        self.overlay = None;
                        files::discard_autosave(self.autosave_slot());
                        self.status = "the autosaved changes were discarded".into();
                    }
                    _ => {}
                }
                Vec::new()
            }
            // A buffer closed with unsaved changes: s, d or Esc (tui/buffers.rs).
            Some(Overlay::Confirm(Confirm::CloseUnsaved)) => {
                super::buffers::close_answer(self, key)
            }
            // A file at the sidecar's path that evalbench did not write: o, s or Esc.
            Some(Overlay::Confirm(Confirm::ForeignSidecar { script, .. })) => {
                let script = script.clone();
                let mode = match key.code {
                    KeyCode::Char('o') | KeyCode::Char('O') => Some(files::SidecarWrite::Replace),
                    KeyCode::Char('s') | KeyCode::Char('S') => Some(files::SidecarWrite::Skip),
                    KeyCode::Esc | KeyCode::Char('c') | KeyCode::Char('n') => None,
                    _ => {
                        self.status =
                            "o overwrites that file with the sidecar, s saves the script only, Esc cancels"
                                .into();
                        return Vec::new();
                    }
                };
                self.overlay = None;
                match mode {
                    Some(mode) => self.save_to(script, Some(mode)),
                    None => {
                        self.status = format!(
                            "not saved: nothing was written ({} stays as it is)",
                            crate::engine::formats::sidecar_path(&script).display()
                        )
                    }
                }
                Vec::new()
            }
            Some(Overlay::Confirm(confirm)) => {
                let confirm = confirm.clone();
                match key.code {
                    KeyCode::Char('y') | KeyCode::Char('Y') => {
                        self.overlay = None;
                        match confirm {
                            Confirm::QuitUnsaved => {
                                // Quit anyway: the changes go, their autosaves with them.
                                super::buffers::quit_discarding(self);
                                self.quit = true;
                                return vec![Effect::Quit];
                            }
                            Confirm::Recover => self.recover(),
                            Confirm::Overwrite(path) => self.save_to(path, None),
                            // Answered by their own keys above.
                            Confirm::ForeignSidecar { .. } | Confirm::CloseUnsaved => {}
                            Confirm::LiveSend(request, question) => {
                                return self.rerun(*request, question.consent)
                            }
                            Confirm::OpenLesson(index) => super::lessons::open(self, index),
                            Confirm::ResetLesson => super::lessons::reset(self),
                            Confirm::ScriptKill => return super::server_overview::kill(self),
                            Confirm::OpenServerLibrary { name, code } => {
                                super::server_library::open(self, name, &code)
                            }
                            // live Functions (tui/live_function.rs)
                            Confirm::LiveFcall(request, question, function) => {
                                return super::live_function::send_with_consent(
                                    self, *request, *question, function,
                                )
                            }
                            Confirm::LoadLibrary(planned) => {
                                let (code, plan) = *planned;
                                return super::live_function::confirm_load(self, code, plan);
                            }
                        }
                    }
                    KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => {
                        self.overlay = None;
                    }
                    _ => {}
                }
                Vec::new()
            }
            Some(Overlay::Palette(_)) => super::palette::on_key(self, key),
            Some(Overlay::Buffers(_)) => super::buffers::list_key(self, key),
            Some(Overlay::Command) => super::command_prompt::on_key(self, key),
            Some(Overlay::Lessons(_)) => {
                super::lessons::picker_key(self, action);
                Vec::new()
            }
            Some(Overlay::Picker(picker)) => {
                match action {
                    Some(Action::Up) => picker.move_by(-1),
                    Some(Action::Down) => picker.move_by(1),
                    Some(Action::Select) => {
                        // A buffer of its own: the shown one stays open, edits and all.
                        if let Some(path) = super::file_actions::picker_choice(picker) {
                            self.overlay = None;
                            self.open_file(path);
                        }
                    }
                    Some(Action::Close) => self.overlay = None,
                    _ => super::file_actions::picker_key(picker, key),
                }
                Vec::new()
            }
            None => Vec::new(),
        }
    }

    pub fn open_prompt(
        &mut self,
        purpose: PromptPurpose,
        title: impl Into<String>,
        input: impl Into<String>,
    ) {
        self.prompt(purpose, title, input)
    }

    fn prompt(
        &mut self,
        purpose: PromptPurpose,
        title: impl Into<String>,
        input: impl Into<String>,
    ) {
        let input: String = input.into();
        self.overlay = Some(Overlay::Prompt(Prompt {
            purpose,
            title: title.into(),
            prefilled: !input.is_empty(),
            input,
        }));
    }

    /// Apply one action.
    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        // The buffer's last change may be a seed key, a field or a breakpoint (tui/buffer.rs).
        if matches!(action, Action::Undo | Action::Redo)
            && super::buffer::undo_redo(self, action == Action::Undo)
        {
            return Vec::new();
        }
        if self.tab == Tab::Server && self.focus == Focus::Panes && action.in_server_tab() {
            return super::server::update(self, action);
        }
        if super::race::handles(self, action) {
            return super::race::update(self, action);
        }
        if super::debugger::handles(action) {
            return super::debugger::update(self, action);
        }
        if super::tests_tab::handles(action) {
            return super::tests_tab::update(self, action);
        }
        if super::value_view::handles(action) {
            return super::value_view::open(self);
        }
        match action {
            // F5 continues a paused debug session, or starts one when breakpoints are set.
            Action::Run => return super::debugger::run_or_continue(self),
            Action::Cancel => {
                if let Some(effects) = super::debugger::cancel(self) {
                    return effects;
                }
                if super::race::cancel(self) {
                    return Vec::new();
                }
                if let Some(running) = self.running {
                    use crate::engine::live::guarded::Phase;
                    self.status = match running.phase.map(|(p, _)| p) {
                        Some(Phase::Copying | Phase::DryRun) => {
                            "cancelling before the script reaches the server: nothing will be sent"
                                .into()
                        }
                        // a function is stopped by FUNCTION KILL
                        Some(Phase::OnServer) if self.live_function.is_some() => {
                            "the function runs on the server: sending FUNCTION KILL…".into()
                        }
                        Some(Phase::OnServer) => {
                            "the script runs on the server: sending SCRIPT KILL…".into()
                        }
                        _ => "cancelling…".into(),
                    };
                    return vec![Effect::Cancel];
                }
            }
            Action::StepForward => self.step_by(1),
            Action::StepBack => self.step_by(-1),
            Action::StepStop => {
                self.step = None;
                self.status = "left step mode".into();
            }
            Action::Help | Action::Palette => {
                let mut palette = super::palette::PaletteState::new(&self.keymap);
                palette.add_buffers(super::buffers::list(self)); // with several open
                self.overlay = Some(Overlay::Palette(Box::new(palette)))
            }
            Action::Quit => {
                // Asked once, for every buffer with unsaved changes (tui/buffers.rs).
                if super::buffers::any_unsaved(self) {
                    self.overlay = Some(Overlay::Confirm(Confirm::QuitUnsaved));
                } else {
                    super::buffers::quit(self);
                    self.quit = true;
                    return vec![Effect::Quit];
                }
            }
            Action::Save => self.save(),
            Action::NextBuffer => super::buffers::cycle(self, 1),
            Action::PrevBuffer => super::buffers::cycle(self, -1),
            Action::BufferList => super::buffers::open_list(self),
            Action::CloseBuffer => super::buffers::close(self),
            Action::Open if self.debugger.session.is_some() => {
                self.status = "stop debugging first (Shift-F5)".into()
            }
            Action::Open => self.overlay = Some(Overlay::Picker(PickerState::load(&self.config))),
            Action::FocusNext => self.focus = self.next_focus(1),
            Action::FocusPrev => self.focus = self.next_focus(-1),
            Action::TabTrace => self.show_tab(Tab::Trace),
            Action::TabReply => self.show_tab(Tab::Reply),
            Action::CompareProfile => super::reply_compare::cycle(self),
            Action::TabKeyspace => self.show_tab(Tab::Keyspace),
            Action::TabWarnings => self.show_tab(Tab::Warnings),
            Action::TabServer => {
                if self.server.is_some() {
                    self.show_tab(Tab::Server);
                } else {
                    self.status = "the Server tab needs a live server (--server URL)".into();
                }
            }
            Action::NextTab => {
                let tabs = self.tabs();
                let i = tabs.iter().position(|t| *t == self.tab).unwrap_or(0);
                self.tab = tabs[(i + 1) % tabs.len()];
            }
            Action::ToggleBackend => match &self.live_server {
                Some(server) => {
                    self.use_live = !self.use_live;
                    self.status = if self.use_live {
                        format!("runs go to the live server {server} (guarded)")
                    } else {
                        "runs go to the sandbox, on the seed (Keyspace tab)".into()
                    };
                }
                None => self.status = "no live server: start with --server URL".into(),
            },
            Action::ScriptLoad => return super::server::script_load(self),
            Action::CommandPrompt => super::command_prompt::open(self),
            Action::RaceLab => return super::race::open(self),
            Action::CopyDeclaredKeys => return super::server::copy_declared_keys(self),
            Action::Rescan
            | Action::OpenKey
            | Action::CopyToSandbox
            | Action::ServerOverview
            | Action::SearchInKey
            | Action::StopSearch
            | Action::ServerScriptKill => {
                self.status = "this key works in the Server tab (Alt-5)".into()
            }
            Action::PickFunction => super::form_function::pick_next(self),
            Action::LoadLibrary => return super::live_function::start_load(self),
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => self.scroll(action),
            Action::Select => return self.select(),
            Action::Close => self.overlay = None,
            // The search prompt takes it (on_overlay_key); anywhere else it says where it works.
            Action::SearchRegex => {
                self.status = "Alt-R switches literal / regex in the search prompt (Ctrl-F)".into()
            }
            Action::FilterKeys => {
                let current = self.keyspace.filter.clone();
                self.prompt(
                    PromptPurpose::FilterKeys,
                    "Filter keys (glob, empty for all)",
                    current,
                );
            }
            Action::CycleTypeFilter => self.keyspace.cycle_type_filter(),
            Action::ToggleDiff => self.keyspace.cycle_diff(),
            Action::AddKey => self.prompt(
                PromptPurpose::AddKey,
                "Add to seed: NAME VALUE | hash|list|set|zset|stream NAME ITEMS…",
                "",
            ),
            Action::DeleteKey => {
                if let Some(key) = self.keyspace.selected_key(self) {
                    let name = String::from_utf8_lossy(&key).into_owned();
                    if self.seed.contains(&key, self.seed_now_ms) {
                        super::buffer::seed_edit(self, format!("deleted '{name}' from the seed"));
                        self.seed.remove(&key, self.seed_now_ms);
                        self.status = format!("deleted '{name}' from the seed (Ctrl-Z undoes it)");
                        super::keyspace::show_seed(self, Some(&key));
                    } else {
                        self.status = format!("'{name}' is not in the seed (the run made it)");
                    }
                }
            }
            Action::SetString => {
                if let Some(key) = self.keyspace.selected_key(self) {
                    // Prefill the seed's current string, when it is short text.
                    let current = match self.seed.get(&key, self.seed_now_ms).map(|e| &e.value) {
                        Some(crate::engine::keyspace::Value::Str(s)) if s.len() <= 200 => {
                            String::from_utf8(s.clone()).unwrap_or_default()
                        }
                        _ => String::new(),
                    };
                    self.prompt(
                        PromptPurpose::SetString { key: key.clone() },
                        format!("Seed string value of '{}'", String::from_utf8_lossy(&key)),
                        current,
                    );
                }
            }
            Action::SetTtl => {
                if let Some(key) = self.keyspace.selected_key(self) {
                    if self.seed.contains(&key, self.seed_now_ms) {
                        self.prompt(
                            PromptPurpose::SetTtl { key: key.clone() },
                            format!(
                                "Seed TTL of '{}' in seconds (0 = persist)",
                                String::from_utf8_lossy(&key)
                            ),
                            "",
                        );
                    } else {
                        self.status = format!(
                            "'{}' is not in the seed (the run made it)",
                            String::from_utf8_lossy(&key)
                        );
                    }
                }
            }
            Action::LoadSeed => self.prompt(
                PromptPurpose::LoadSeed,
                "Load the seed keyspace from JSON file",
                "",
            ),
            Action::SaveSeed => self.prompt(
                PromptPurpose::SaveSeed,
                "Save the seed keyspace to JSON file",
                "seed.json",
            ),
            Action::ResetSeed => {
                self.keyspace.value_scroll = 0;
                // The run's result goes from view, not for good: Ctrl-Z brings it back.
                match self.last_run.take() {
                    Some(run) => {
                        let before =
                            super::buffer::Before::Run(Some(Box::new(run)), self.step.take());
                        super::buffer::record(self, "reset the keyspace to the seed", before);
                        self.status =
                            "keyspace reset to the seed (Ctrl-Z brings the last run back)".into();
                    }
                    None => self.status = "keyspace reset to the seed".into(),
                }
            }
            Action::AdvanceClock => self.prompt(
                PromptPurpose::AdvanceClock,
                "Advance the run clock by N seconds",
                "60",
            ),
            Action::ResetClock => {
                let before = super::buffer::Before::Clock(self.clock_offset_ms);
                super::buffer::record(self, "reset the run clock", before);
                self.set_clock_offset(0);
                self.status = "run clock reset to the seed's time".into();
            }
            Action::KeepState => match self.keep_state.take() {
                None => {
                    let before =
                        super::buffer::Before::Chain(Box::new(super::buffer::Chain::of(self)));
                    super::buffer::record(self, "keep state on", before);
                    self.keep_state = Some((self.seed.clone(), self.seed_now_ms));
                    self.status =
                        "keep state on: each run starts from the last run's keyspace (K again returns to the seed)"
                            .into();
                }
                Some(base) => {
                    // The chained runs' keyspace is not lost: Ctrl-Z goes back to it.
                    self.keep_state = Some(base);
                    let before =
                        super::buffer::Before::Chain(Box::new(super::buffer::Chain::of(self)));
                    super::buffer::record(self, "keep state off", before);
                    let (seed, seed_now_ms) = self.keep_state.take().unwrap_or_default();
                    self.seed = seed;
                    self.seed_now_ms = seed_now_ms;
                    self.set_clock_offset(0);
                    self.status = "keep state off: runs start from the seed again (Ctrl-Z returns to the last run's keyspace)".into();
                }
            },
            Action::ToggleSeedView => super::keyspace::toggle_seed_view(self),
            Action::KeyspaceFocus
            | Action::KeyspaceUp
            | Action::KeyspaceDown
            | Action::KeyspacePageUp
            | Action::KeyspacePageDown
            | Action::KeyspaceTop
            | Action::KeyspaceBottom => super::keyspace::navigate(self, action),
            Action::ExportRun => super::export_run::open_prompt(self),
            Action::OpenLessons
            | Action::CheckLesson
            | Action::NextHint
            | Action::ResetLesson
            | Action::TabLesson => super::lessons::update(self, action),
            Action::PresentSplit => {
                self.present_split = !self.present_split;
                self.status = match (self.present, self.present_split) {
                    (true, true) => "presenter mode: the code beside the tab shown (Tab, Alt-1..9 choose it; Alt-S: the code alone)".into(),
                    (true, false) => "presenter mode: one pane (Alt-S: the code beside the tab shown)".into(),
                    (false, split) => format!(
                        "presenter mode will show {} (Alt-P starts it)",
                        if split { "the code beside the tab shown" } else { "one pane" }
                    ),
                };
            }
            Action::Present => {
                self.present = !self.present;
                self.status = if self.present {
                    "presenter mode: Alt-P leaves it".into()
                } else {
                    "presenter mode off".into()
                };
            }
            // Editor commands: editing.rs.
            Action::Undo
            | Action::Redo
            | Action::Copy
            | Action::Cut
            | Action::Paste
            | Action::SelectAll
            | Action::DocumentStart
            | Action::DocumentEnd
            | Action::GotoLine
            | Action::ToggleComment
            | Action::Indent
            | Action::Outdent
            | Action::Zoom
            | Action::ToggleWrap
            | Action::Find
            | Action::FindNext
            | Action::FindPrevious => return super::editing::update(self, action),
            // Like Open: the debugger's session belongs to this script.
            Action::NewFile if self.debugger.session.is_some() => {
                self.status = "stop debugging first (Shift-F5)".into()
            }
            Action::NewFile => super::file_actions::new_file(self),
            // Handled by tui/debugger.rs above.
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
            | Action::PrevFrame => {}
            // Handled by tui/tests_tab.rs above.
            Action::SaveCase | Action::RunTests | Action::TabTests => {}
            // The Race tab's own (tui/race.rs, above); elsewhere nothing.
            Action::MoreClients | Action::FewerClients => {}
            // Opened above; its own keys go to tui/value_view.rs while it is open.
            Action::ViewValue
            | Action::ValueWrap
            | Action::ValueMode
            | Action::ValueSearch
            | Action::ValueNext
            | Action::ValuePrev
            | Action::ValueYank
            | Action::ValueLeft
            | Action::ValueRight => {}
        }
        Vec::new()
    }

    /// The next pane or field that shows (presenter mode shows no KEYS / ARGV fields).
    fn next_focus(&self, by: isize) -> Focus {
        let mut focus = self.focus;
        for _ in 0..Focus::ORDER.len() {
            focus = focus.step(by);
            if !(self.present && matches!(focus, Focus::Keys | Focus::Argv)) {
                return focus;
            }
        }
        self.focus
    }

    pub(crate) fn show_tab(&mut self, tab: Tab) {
        self.tab = tab;
        self.focus = Focus::Panes;
    }

    fn answer_prompt(&mut self, prompt: Prompt) -> Vec<Effect> {
        let input = prompt.input.trim().to_string();
        match prompt.purpose {
            PromptPurpose::FilterKeys => self.keyspace.set_filter(input),
            PromptPurpose::AddKey => {
                match super::keyspace::parse_add_key(&input, self.seed_now_ms) {
                    Ok((name, value)) => {
                        let kind = value.type_name();
                        let verb = if self.seed.contains(&name, self.seed_now_ms) {
                            "replaced"
                        } else {
                            "added"
                        };
                        self.status = format!(
                            "{verb} {kind} '{}' in the seed",
                            String::from_utf8_lossy(&name)
                        );
                        super::buffer::seed_edit(self, self.status.clone());
                        self.seed.set(name.clone(), value);
                        super::keyspace::show_seed(self, Some(&name));
                    }
                    Err(e) => self.status = e,
                }
            }
            PromptPurpose::SetString { key } => {
                let what = format!("set the string '{}'", String::from_utf8_lossy(&key));
                super::buffer::seed_edit(self, what);
                self.seed.set_keep_ttl(
                    key.clone(),
                    crate::engine::keyspace::Value::Str(prompt.input.into_bytes()),
                    self.seed_now_ms,
                );
                self.status = "string value set in the seed".into();
                super::keyspace::show_seed(self, Some(&key));
            }
            PromptPurpose::SetTtl { key } => {
                // Relative to the seed's time: the TTL each run starts with.
                match input.parse::<i64>() {
                    Ok(0) => {
                        super::buffer::seed_edit(self, "removed a TTL in the seed");
                        self.seed.set_expire(&key, None);
                        self.status = "TTL removed in the seed".into();
                        super::keyspace::show_seed(self, Some(&key));
                    }
                    Ok(secs) if secs > 0 && secs < i64::MAX / 1000 - self.seed_now_ms / 1000 => {
                        super::buffer::seed_edit(
                            self,
                            format!("set a TTL of {secs} s in the seed"),
                        );
                        self.seed
                            .set_expire(&key, Some(self.seed_now_ms + secs * 1000));
                        self.status = format!("TTL {secs} s set in the seed");
                        super::keyspace::show_seed(self, Some(&key));
                    }
                    _ => self.status = format!("'{input}' is not a number of seconds"),
                }
            }
            PromptPurpose::LoadSeed => {
                match files::load_seed(std::path::Path::new(&input), self.seed_now_ms) {
                    Ok(db) => {
                        super::buffer::seed_edit(self, format!("loaded the seed from {input}"));
                        self.seed = db;
                        self.status = format!("seed loaded from {input}");
                        super::keyspace::show_seed(self, None);
                    }
                    Err(e) => self.status = e,
                }
            }
            PromptPurpose::SaveSeed => {
                match files::save_seed(std::path::Path::new(&input), &self.seed, self.seed_now_ms) {
                    Ok(()) => self.status = format!("seed saved to {input}"),
                    Err(e) => self.status = e,
                }
            }
            PromptPurpose::AdvanceClock => match input.parse::<i64>() {
                Ok(secs)
                    if secs > 0 && secs < i64::MAX / 4_000_000 - self.clock_offset_ms / 1000 =>
                {
                    // The seed keeps its keys: a run sees those whose TTL has passed as expired.
                    let before = super::buffer::Before::Clock(self.clock_offset_ms);
                    super::buffer::record(
                        self,
                        format!("advanced the run clock by {secs} s"),
                        before,
                    );
                    self.set_clock_offset(self.clock_offset_ms + secs * 1000);
                    self.status = format!(
                        "run clock advanced by {secs} s: {} s after the seed's time (= resets it)",
                        self.clock_offset_ms / 1000
                    );
                }
                _ => self.status = format!("'{input}' is not a positive number of seconds"),
            },
            PromptPurpose::SaveAs => {
                if let Some(path) = super::file_actions::save_as(self, &input) {
                    self.save_to(path, None);
                }
            }
            PromptPurpose::Find => super::editing::find(self, &prompt.input),
            PromptPurpose::GotoLine => super::editing::goto_line(self, &input),
            PromptPurpose::ExportRun => super::export_run::answer(self, &input),
            PromptPurpose::ScanMatch
            | PromptPurpose::OpenServerKey
            | PromptPurpose::SearchInKey { .. } => {
                return super::server::answer_prompt(self, &prompt.purpose, input)
            }
            PromptPurpose::Breakpoint { .. }
            | PromptPurpose::DebugEval
            | PromptPurpose::AddWatch
            | PromptPurpose::RemoveWatch
            | PromptPurpose::BreakOn => {
                return super::debugger::answer_prompt(self, &prompt.purpose, &input)
            }
            PromptPurpose::SaveCase => return super::tests_tab::answer_prompt(self, &input),
        }
        Vec::new()
    }

    pub(crate) fn start_run(&mut self) -> Vec<Effect> {
        if self.running.is_some() {
            self.status = "a run is already in progress (Esc cancels it)".into();
            return Vec::new();
        }
        let (keys, argv) = match self.inputs.parsed() {
            Ok(parsed) => parsed,
            Err(e) => {
                self.status = e;
                return Vec::new();
            }
        };
        let request = RunRequest {
            script: self.editor.bytes(),
            keys,
            argv,
            ..RunRequest::default()
        };
        // A function library: FCALL the form's function.
        let function = match super::form_function::for_run(self) {
            Some(Err(why)) => {
                self.status = why;
                return Vec::new();
            }
            Some(Ok(name)) => Some(name),
            None => None,
        };
        // On a live server the FCALL goes there, guarded (tui/live_function.rs).
        self.live_function = function.clone().filter(|_| self.use_live);
        let mut effects = self.rerun(request, Default::default());
        if let Some(Effect::Run { function: f, .. }) = effects.first_mut() {
            *f = function;
        }
        effects
    }

    /// Send `request` to the engine (`consent`: after the live guard asked).
    pub(crate) fn rerun(
        &mut self,
        request: RunRequest,
        consent: crate::engine::live::guarded::Consent,
    ) -> Vec<Effect> {
        let id = self.next_run_id;
        self.next_run_id += 1;
        self.running = Some(Running {
            id,
            started: Instant::now(),
            phase: None,
            dry_run: None,
        });
        self.step = None;
        self.status = "running…".into();
        vec![Effect::Run {
            id,
            request,
            seed: self.seed.clone(),
            busy_threshold_ms: self.config.busy_threshold_ms,
            consent,
            live: self.use_live,
            clock_ms: self.seed_now_ms + self.clock_offset_ms,
            function: None,
        }]
    }

    /// Move the run clock to `offset_ms` after the seed's time (the inspector shows TTLs there).
    fn set_clock_offset(&mut self, offset_ms: i64) {
        self.clock_offset_ms = offset_ms;
        self.now_ms = self.seed_now_ms + offset_ms;
    }

    pub fn on_engine_event(&mut self, event: EngineEvent) {
        match event {
            EngineEvent::Finished(result) => {
                if self.running.is_some_and(|r| r.id != result.id) {
                    return; // a superseded run
                }
                self.running = None;
                self.now_ms = result.now_ms;
                if self.keep_state.is_some() && !result.live && result.question.is_none() {
                    // Keep state: the next run starts where this one ended, at this run's time.
                    self.seed = result.after.clone();
                    self.seed_now_ms = result.now_ms;
                    self.clock_offset_ms = 0;
                }
                if self.use_live {
                    // The run loaded the traced copy: ask the cache again.
                    self.script_cache = None;
                }
                if self.use_live {
                    // A live run may be the first to meet a server gone away: check at once.
                    self.connection.check_now();
                }
                if result.live {
                    if let Some(server) = self.server.as_mut() {
                        server.forget(result.report.trace.iter().flat_map(|t| &t.keys));
                    }
                }
                let report = &result.report;
                self.status = format!(
                    "{} in {:.3} ms, {} call(s)",
                    if report.is_error() { "error" } else { "done" },
                    report.elapsed_ns as f64 / 1e6,
                    report.trace.len()
                );
                if result.live {
                    // What the run did on the server, and on a cluster where.
                    self.status = format!(
                        "{}: {}{}",
                        self.status,
                        crate::engine::live::outcome_summary(report),
                        match &self.live_node {
                            Some(node) => format!(" on {node}"),
                            None => String::new(),
                        }
                    );
                }
                // A run the guard did not send for a reason of the server's (a node lost, the
                // cluster down): its words, not "error in 0.000 ms".
                let not_sent = report.outcome == crate::engine::report::Outcome::Refused
                    && !result.live
                    && result.question.is_none()
                    && matches!(&report.reply, crate::engine::reply::Reply::Error(e)
                        if e.starts_with("evalbench: not sent: "));
                if (report.outcome == crate::engine::report::Outcome::Cancelled || not_sent)
                    && self.use_live
                {
                    // evalbench's own words: cancelled before the send, nothing reached the server.
                    self.status = report
                        .reply
                        .to_cli()
                        .trim_start_matches("(error) ")
                        .to_string();
                }
                if let Some(kill) = &result.kill {
                    self.status = format!("{}; {kill}", self.status);
                }
                self.editor.set_error(
                    report
                        .error_line
                        .map(|line| (line, report.error_at_line_text())),
                );
                self.trace_list = ListState::default();
                if let (Some(question), Some(function)) = (&result.question, &self.live_function) {
                    // a live FCALL's question names it
                    self.status = "nothing was sent: the live guard asks first (y/n)".into();
                    super::live_function::ask(
                        self,
                        result.request.clone(),
                        question.clone(),
                        function.clone(),
                    );
                } else if let Some(question) = &result.question {
                    self.status = "nothing was sent: the live guard asks first (y/n)".into();
                    self.overlay = Some(Overlay::Confirm(Confirm::LiveSend(
                        Box::new(result.request.clone()),
                        Box::new(question.clone()),
                    )));
                }
                self.last_run = Some(*result);
            }
            EngineEvent::Phase(phase) => self.enter_phase(phase),
            EngineEvent::Debug(event) => super::debugger::on_event(self, event),
            EngineEvent::Compared(id, c) => super::reply_compare::on_result(self, id, *c),
            EngineEvent::LiveFunction(answer) => super::live_function::on_answer(self, answer),
            EngineEvent::Node(node) => self.live_node = node,
        }
    }

    /// A live run moved on: the counter restarts for the phase; the dry run's time is kept.
    fn enter_phase(&mut self, phase: crate::engine::live::guarded::Phase) {
        use crate::engine::live::guarded::Phase;
        let Some(running) = self.running.as_mut() else {
            return;
        };
        let now = Instant::now();
        if let Some((Phase::DryRun, since)) = running.phase {
            running.dry_run = Some(now - since);
        }
        if phase != Phase::Idle {
            running.phase = Some((phase, now));
        }
        // Say what Esc does now.
        match phase {
            Phase::Copying | Phase::DryRun => {
                self.status = format!(
                    "{} in the sandbox first (Esc: nothing is sent)",
                    phase.label()
                )
            }
            Phase::OnServer => {
                self.status = "running on the live server (Esc sends SCRIPT KILL)".into()
            }
            Phase::Idle => {}
        }
    }

    fn step_by(&mut self, delta: isize) {
        let Some(run) = &self.last_run else {
            self.status = "run the script first (F5), then step through its calls".into();
            return;
        };
        let len = run.report.trace.len();
        if len == 0 {
            self.status = "this run made no redis.call to step through".into();
            return;
        }
        let next = match self.step {
            None if delta > 0 => 0,
            None => len - 1,
            Some(i) => (i as isize + delta).clamp(0, len as isize - 1) as usize,
        };
        self.step = Some(next);
        self.trace_list.selected = next;
        let entry = &run.report.trace[next];
        self.editor.goto_line(entry.line as usize);
        self.status = format!("step {}/{}: line {}", next + 1, len, entry.line);
    }

    /// The keyspace as the inspector should show it: the step's snapshot, the run's result, or the seed.
    pub fn shown_keyspace(&self) -> &Db {
        use super::keyspace::Shown;
        // A debug session: the keyspace at its last stop.
        if let Some(db) = self.debugger.stopped_keyspace() {
            return db;
        }
        match (&self.last_run, self.keyspace.shown(self)) {
            (Some(run), Shown::Step(i)) => {
                let seq = run.report.trace.get(i).map_or(0, |e| e.seq);
                super::keyspace::db_at(run, seq)
            }
            (Some(run), Shown::AfterRun) => &run.after,
            _ => &self.seed,
        }
    }

    /// The time the shown keyspace's TTLs count from: the run clock for the seed (what the next run
    /// sees), the run's own time for a run's keyspace (a live run's is the server's).
    pub fn shown_now_ms(&self) -> i64 {
        use super::keyspace::Shown;
        match (&self.last_run, self.keyspace.shown(self)) {
            (Some(_), Shown::Step(_) | Shown::AfterRun) => self.now_ms,
            _ => self.seed_now_ms + self.clock_offset_ms,
        }
    }

    fn scroll(&mut self, action: Action) {
        let delta: isize = match action {
            Action::Up => -1,
            Action::Down => 1,
            Action::PageUp => -10,
            Action::PageDown => 10,
            Action::Top => isize::MIN / 2,
            _ => isize::MAX / 2,
        };
        match self.tab {
            Tab::Trace => {
                let len = self.last_run.as_ref().map_or(0, |r| r.report.trace.len());
                self.trace_list.move_by(delta, len);
            }
            // Not past the content (its length is known from the last frame).
            Tab::Reply => {
                let max = self.regions.borrow().scroll_max as isize;
                self.reply_scroll = (self.reply_scroll as isize + delta).clamp(0, max) as u16
            }
            Tab::Warnings => {
                let max = self.regions.borrow().scroll_max as isize;
                self.warnings_scroll = (self.warnings_scroll as isize + delta).clamp(0, max) as u16
            }
            Tab::Keyspace => {
                let len = self.keyspace.visible_keys(self).len();
                self.keyspace.list.move_by(delta, len);
            }
            Tab::Server | Tab::Race => {}
            Tab::Debug => super::debugger::scroll(self, delta),
            Tab::Lesson => super::lessons::scroll(self, delta),
            Tab::Tests => super::tests_tab::scroll(self, delta),
        }
    }

    fn select(&mut self) -> Vec<Effect> {
        if self.tab == Tab::Debug {
            return super::debugger::select(self);
        }
        if self.tab == Tab::Tests {
            return super::tests_tab::select(self);
        }
        if self.tab == Tab::Trace {
            if let Some(entry) = self
                .last_run
                .as_ref()
                .and_then(|r| r.report.trace.get(self.trace_list.selected))
            {
                let line = entry.line as usize;
                self.editor.goto_line(line);
                self.status = format!("call {} at line {}", entry.seq, line);
            }
        }
        Vec::new()
    }

    fn save(&mut self) {
        // A server's library: ask for a local name for its editable copy (tui/read_only.rs).
        if super::read_only::save_prompt(self) {
            return;
        }
        let Some(path) = self.editor.path.clone() else {
            self.prompt(PromptPurpose::SaveAs, "Save the script as", "script.lua");
            return;
        };
        if super::file_actions::is_sample(&path) {
            return super::file_actions::save_sample_as(self, &path);
        }
        if path.as_os_str().is_empty() {
            self.editor.path = None;
            self.status = "not saved: no file name given".into();
            return;
        }
        self.save_to(files::expand_home(&path), None);
    }

    /// Save the buffer as `path` (it becomes the buffer's path once saved). `sidecar`: what the
    /// user answered about a file at the sidecar's path that is not evalbench's (None: ask).
    pub(crate) fn save_to(&mut self, path: PathBuf, sidecar: Option<files::SidecarWrite>) {
        let car_path = crate::engine::formats::sidecar_path(&path);
        let declined = self.changes.sidecar_declined.as_ref() == Some(&car_path);
        let mode = match sidecar {
            Some(mode) => mode,
            None => match files::classify_sidecar(&car_path) {
                files::SidecarFile::Missing | files::SidecarFile::Ours(_) => {
                    files::SidecarWrite::IfOurs
                }
                // Asked before for this buffer: the script only, as the user chose.
                files::SidecarFile::Foreign(_) if declined => files::SidecarWrite::Skip,
                files::SidecarFile::Foreign(why) => {
                    self.status = format!(
                        "not saved yet: {why}. o overwrites it with the sidecar, s saves the script only, Esc cancels"
                    );
                    self.overlay = Some(Overlay::Confirm(Confirm::ForeignSidecar {
                        script: path,
                        why,
                    }));
                    return;
                }
            },
        };
        let text = self.editor.text();
        // A library's chosen function goes to the sidecar too (form_function.rs).
        let function = self.form_function.chosen().map(str::to_string);
        let content = files::SidecarContent {
            inputs: &self.inputs,
            seed: self.saved_seed(),
            now_ms: match &self.keep_state {
                Some((_, at)) => *at,
                None => self.seed_now_ms,
            },
            function: function.as_deref(),
            breakpoints: self.debugger.saved_breakpoints(),
            watches: self.debugger.watches.clone(),
            clock_offset_ms: self.clock_offset_ms,
            keep_state: self.keep_state.is_some(),
        };
        match files::save_buffer(&path, &text, &content, mode) {
            Ok(sidecar_problem) => {
                if mode == files::SidecarWrite::Skip {
                    self.changes.sidecar_declined = Some(car_path);
                }
                // An untitled buffer's autosave is done with once it has a file.
                if self.editor.path.is_none() {
                    files::discard_autosave(self.autosave_slot());
                }
                self.editor.path = Some(path.clone());
                self.editor.modified = false;
                super::buffer::saved(self);
                files::mark_clean(&self.autosave_state());
                files::discard_autosave(self.autosave_slot());
                files::remember_recent(&path);
                self.status = sidecar_problem
                    .unwrap_or_else(|| format!("saved {} and its sidecar", path.display()));
                super::read_only::saved(self); // a server library's copy is editable now
                super::buffers::saved(self); // closed now when Ctrl-W's question said save
            }
            Err(e) => self.status = e,
        }
    }

    /// The seed's time of a buffer opened now: this buffer's (its saved seed's, with keep state).
    pub(crate) fn next_seed_time(&self) -> i64 {
        match &self.keep_state {
            Some((_, at)) => *at,
            None => self.seed_now_ms,
        }
    }

    /// Open `path` in a buffer of its own (the one already open for it is shown instead).
    pub fn open_file(&mut self, path: PathBuf) {
        if let Some(index) = super::buffers::find(self, &files::expand_home(&path)) {
            if super::buffers::switch_to(self, index) {
                self.status = format!("{} is open already: {}", path.display(), self.status);
            }
            return;
        }
        if let Some(why) = super::buffers::busy(self) {
            self.status = why.into();
            return;
        }
        let now = self.next_seed_time();
        match files::open_script(&path, now) {
            Ok(opened) => {
                // A buffer of its own: nothing of the shown one comes along, not its clock,
                // keep state, breakpoints, watches nor console.
                let editor = EditorState::new(&opened.text, opened.path.clone());
                let mut buffer = super::buffer::BufferState::new(editor, now);
                let function = opened.sidecar.as_ref().and_then(|c| c.function.clone());
                if let Some(car) = opened.sidecar {
                    buffer.inputs = InputsState::from_lists(&car.keys, &car.argv);
                    buffer.debugger.restore(&car.breakpoints, &car.watches);
                    buffer.restore_run_state(&car);
                    buffer.seed = car.seed;
                }
                super::buffers::show_new(self, buffer);
                self.status = match (&opened.path, opened.sidecar_error) {
                    (_, Some(e)) => format!("opened {}; sidecar ignored: {e}", path.display()),
                    (Some(p), None) => format!("opened {}", p.display()),
                    (None, None) => "opened a built-in sample; Ctrl-S saves a copy".into(),
                };
                // The sidecar's function of a library.
                super::form_function::apply_sidecar(self, function.as_deref());
                files::mark_clean(&self.autosave_state());
                files::remember_recent(&path);
                self.offer_recovery(); // an autosave of this same script
            }
            Err(_) if !path.exists() && path.extension().is_some_and(|e| e == "lua") => {
                // A new file: an empty buffer that Ctrl-S creates.
                let editor = EditorState::new("", Some(path.clone()));
                super::buffers::show_new(self, super::buffer::BufferState::new(editor, now));
                self.status = format!("{} is a new file; Ctrl-S creates it", path.display());
            }
            Err(e) => self.status = e,
        }
    }

    /// Offer to recover the autosave of this same buffer left by a crash (an untitled buffer:
    /// the autosave of an untitled buffer of an evalbench that ended without saving it).
    pub fn offer_recovery(&mut self) {
        if self.editor.path.is_none() && !files::autosave_exists(self.autosave_slot()) {
            if let Some(id) = files::orphaned_untitled() {
                self.changes.id = id; // this buffer carries on the one left behind
            }
        }
        let slot = self.autosave_slot();
        if !files::autosave_exists(slot) {
            return;
        }
        if !files::may_autosave(slot) {
            self.status =
                "another evalbench is editing this script: this one does not autosave it".into();
            return;
        }
        let Some(saved) = files::load_autosave(slot) else {
            files::discard_autosave(slot);
            self.status = "an unreadable autosave was found and removed".into();
            return;
        };
        if saved == self.autosave_state() {
            files::discard_autosave(self.autosave_slot()); // nothing to recover
            return;
        }
        let name = saved
            .path
            .as_ref()
            .map_or("an untitled script".to_string(), |p| {
                p.display().to_string()
            });
        self.status =
            format!("unsaved changes to {name} were autosaved: r recovers them, d discards them");
        self.overlay = Some(Overlay::Confirm(Confirm::Recover));
    }

    fn recover(&mut self) {
        match files::load_autosave(self.autosave_slot()) {
            Some(saved) => {
                // The seed, breakpoints and watches are not autosaved: the script's sidecar's.
                let now = self.next_seed_time();
                let car = saved
                    .path
                    .as_deref()
                    .and_then(|p| files::open_script(p, now).ok())
                    .and_then(|o| o.sidecar);
                let editor = EditorState::new(&saved.text, saved.path.clone());
                let mut buffer = super::buffer::BufferState::new(editor, now);
                buffer.changes.id = self.changes.id.clone(); // the same buffer, the same autosave
                if let Some(car) = car {
                    buffer.debugger.restore(&car.breakpoints, &car.watches);
                    buffer.restore_run_state(&car);
                    buffer.seed = car.seed;
                }
                let mut inputs = InputsState::default();
                inputs.keys.insert_str(&saved.keys);
                inputs.argv.insert_str(&saved.argv);
                buffer.inputs = inputs;
                buffer.editor.modified = true;
                self.swap_buffer(buffer);
                self.status = "recovered the autosaved script (Ctrl-S saves it)".into();
            }
            None => self.status = "the autosave could not be read".into(),
        }
    }

    /// Autosave everything typed (cheap when nothing changed; see `files::autosave`).
    pub fn autosave(&mut self) {
        // An earlier session's autosave stays untouched until the recovery question is answered.
        if matches!(self.overlay, Some(Overlay::Confirm(Confirm::Recover))) {
            return;
        }
        // A server's library is not the user's script: nothing to autosave (tui/read_only.rs).
        if self.editor.read_only.is_some() {
            return;
        }
        if let Err(e) = files::autosave(&self.autosave_state()) {
            self.status = e;
        }
    }
}
