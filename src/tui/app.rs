//! The application state and its one entry point for change: `App::update(Action) -> Vec<Effect>`
//! (plus `on_key`, which routes a key to an overlay, the keymap or the focused widget, and
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
}

impl Tab {
    pub const ALL: [Tab; 5] = [
        Tab::Trace,
        Tab::Reply,
        Tab::Keyspace,
        Tab::Warnings,
        Tab::Server,
    ];
    pub fn title(self) -> &'static str {
        match self {
            Tab::Trace => "Trace",
            Tab::Reply => "Reply",
            Tab::Keyspace => "Keyspace",
            Tab::Warnings => "Warnings",
            Tab::Server => "Server",
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
    /// A line of the script to go to (editing.rs).
    GotoLine,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub purpose: PromptPurpose,
    pub title: String,
    pub input: String,
    /// The input is the prefilled value, untouched: typing replaces it (inputs.rs).
    pub prefilled: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirm {
    QuitUnsaved,
    Recover,
    /// Open another file over unsaved changes.
    OpenUnsaved(PathBuf),
    /// Save over another existing file (save-as).
    Overwrite(PathBuf),
    /// Start a new script over unsaved changes.
    NewUnsaved,
    /// Send a script that the dry run showed writing, with writes allowed, to the live server.
    LiveWrite(Box<RunRequest>),
}

pub enum Overlay {
    Help { scroll: u16 },
    Picker(PickerState),
    Prompt(Prompt),
    Confirm(Confirm),
}

/// Something the event loop must do.
#[derive(Debug)]
pub enum Effect {
    Run {
        id: u64,
        request: RunRequest,
        seed: Db,
        busy_threshold_ms: u64,
        /// The user confirmed that this run may write to the live server.
        writes_confirmed: bool,
        /// Run on the live server (false: in the sandbox).
        live: bool,
    },
    /// A request to the live inspector thread.
    Inspect(InspectRequest),
    Cancel,
    AdvanceClock {
        ms: i64,
    },
    Quit,
    /// Put these bytes on the system clipboard (OSC 52; editing.rs).
    Clipboard(Vec<u8>),
}

/// A run in progress.
#[derive(Debug, Clone, Copy)]
pub struct Running {
    pub id: u64,
    pub started: Instant,
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
    pub keyspace: KeyspaceView,
    pub keymap: Keymap,
    pub config: Config,
    pub focus: Focus,
    pub tab: Tab,
    pub overlay: Option<Overlay>,
    pub last_run: Option<RunResult>,
    pub running: Option<Running>,
    /// Index into the trace while stepping through the last run.
    pub step: Option<usize>,
    pub trace_list: ListState,
    pub reply_scroll: u16,
    pub warnings_scroll: u16,
    /// The seed keyspace every run starts from.
    pub seed: Db,
    /// Unix ms of the sandbox clock (for TTLs in the inspector).
    pub now_ms: i64,
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
            keyspace: KeyspaceView::default(),
            keymap,
            config,
            focus: Focus::Editor,
            tab: Tab::Trace,
            overlay: None,
            last_run: None,
            running: None,
            step: None,
            trace_list: ListState::default(),
            reply_scroll: 0,
            warnings_scroll: 0,
            seed: Db::new(),
            now_ms: 0,
            status,
            quit: false,
            live_server: None,
            use_live: false,
            server: None,
            script_cache: None,
            script_cache_pending: None,
            zoomed: false,
            regions: Default::default(),
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
        match (&self.live_server, self.use_live) {
            (Some(server), true) => format!("live {server} guarded"),
            (Some(_), false) => "sandbox (F7: live)".into(),
            (None, _) => "sandbox".into(),
        }
    }

    /// The tabs shown: Server only with a live server.
    pub fn tabs(&self) -> Vec<Tab> {
        Tab::ALL
            .into_iter()
            .filter(|t| *t != Tab::Server || self.server.is_some())
            .collect()
    }

    /// An answer of the live inspector thread.
    pub fn on_inspect_event(&mut self, event: InspectEvent) {
        super::server::on_event(self, event);
    }

    /// The Server tab waits for the server (the event loop then ticks faster).
    pub fn inspecting(&self) -> bool {
        self.server.as_ref().is_some_and(|s| s.waiting()) || self.script_cache_pending.is_some()
    }

    /// The requests the Server tab and the script-cache mark need now (after any event).
    pub fn housekeeping(&mut self) -> Vec<Effect> {
        super::server::housekeeping(self)
    }

    /// The binding context of the focused pane.
    pub fn context(&self) -> Context {
        match (self.focus, self.tab) {
            (_, _) if self.overlay.is_some() => Context::Overlay,
            (Focus::Editor, _) => Context::Editor,
            (Focus::Panes, Tab::Keyspace) => Context::Keyspace,
            (Focus::Panes, Tab::Server) => Context::Server,
            (Focus::Panes, _) => Context::Panes,
            _ => Context::Global,
        }
    }

    /// Route a terminal event. Order: overlay, global keymap, focused pane's keymap, focused widget.
    pub fn on_event(&mut self, event: &Event) -> Vec<Effect> {
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
                if self.overlay.is_some() {
                    return Vec::new();
                }
                match self.focus {
                    Focus::Editor => self.editor.paste(text),
                    Focus::Keys | Focus::Argv => self.inputs.paste(self.focus == Focus::Keys, text),
                    Focus::Panes => {}
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if self.overlay.is_some() {
            return self.on_overlay_key(key);
        }
        if let Some(action) = self.keymap.lookup(Context::Global, &key) {
            // Esc only cancels a run; otherwise it reaches the focused widget.
            if action != Action::Cancel || self.running.is_some() {
                return self.update(action);
            }
        }
        let context = self.context();
        if matches!(context, Context::Keyspace | Context::Server) {
            if let Some(action) = self.keymap.lookup(context, &key) {
                return self.update(action);
            }
        }
        if matches!(
            context,
            Context::Keyspace | Context::Server | Context::Panes
        ) {
            if let Some(action) = self.keymap.lookup(Context::Panes, &key) {
                return self.update(action);
            }
            return Vec::new();
        }
        if context == Context::Editor {
            if let Some(action) = self.keymap.lookup(Context::Editor, &key) {
                return self.update(action);
            }
        }
        match self.focus {
            Focus::Editor => self.editor.on_key(key),
            Focus::Keys => self.inputs.on_key(true, key),
            Focus::Argv => self.inputs.on_key(false, key),
            Focus::Panes => {}
        }
        Vec::new()
    }

    fn on_overlay_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let action = self.keymap.lookup(Context::Overlay, &key);
        match self.overlay.as_mut() {
            Some(Overlay::Prompt(prompt)) => {
                match key.code {
                    KeyCode::Esc => self.overlay = None,
                    KeyCode::Enter => {
                        let prompt = prompt.clone();
                        self.overlay = None;
                        return self.answer_prompt(prompt);
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
                        files::discard_autosave(self.editor.path.as_deref());
                        self.status = "the autosaved changes were discarded".into();
                    }
                    _ => {}
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
                                // Quit anyway: the changes go, their autosave with them.
                                self.editor.modified = false;
                                files::discard_autosave(self.editor.path.as_deref());
                                self.quit = true;
                                return vec![Effect::Quit];
                            }
                            Confirm::Recover => self.recover(),
                            Confirm::OpenUnsaved(path) => self.open_file(path),
                            Confirm::Overwrite(path) => {
                                self.editor.path = Some(path);
                                self.save();
                            }
                            Confirm::NewUnsaved => super::file_actions::start_new(self),
                            Confirm::LiveWrite(request) => return self.rerun(*request, true),
                        }
                    }
                    KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => {
                        self.overlay = None;
                    }
                    _ => {}
                }
                Vec::new()
            }
            Some(Overlay::Help { scroll }) => {
                match action {
                    Some(Action::Up) => *scroll = scroll.saturating_sub(1),
                    // Never past the end (the last frame knows where it is).
                    Some(Action::Down) => {
                        *scroll = (*scroll + 1).min(self.regions.borrow().scroll_max)
                    }
                    Some(Action::PageUp) => *scroll = scroll.saturating_sub(10),
                    Some(Action::PageDown) => {
                        *scroll = (*scroll + 10).min(self.regions.borrow().scroll_max)
                    }
                    _ => self.overlay = None,
                }
                Vec::new()
            }
            Some(Overlay::Picker(picker)) => {
                match action {
                    Some(Action::Up) => picker.move_by(-1),
                    Some(Action::Down) => picker.move_by(1),
                    Some(Action::Select) => {
                        if let Some(path) = super::file_actions::picker_choice(picker) {
                            // Never drop unsaved edits without asking.
                            if self.editor.modified {
                                self.overlay = Some(Overlay::Confirm(Confirm::OpenUnsaved(path)));
                            } else {
                                self.overlay = None;
                                self.open_file(path);
                            }
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
        if self.tab == Tab::Server && self.focus == Focus::Panes && action.in_server_tab() {
            return super::server::update(self, action);
        }
        match action {
            Action::Run => return self.start_run(),
            Action::Cancel => {
                if self.running.is_some() {
                    self.status = "cancelling…".into();
                    return vec![Effect::Cancel];
                }
            }
            Action::StepForward => self.step_by(1),
            Action::StepBack => self.step_by(-1),
            Action::StepStop => {
                self.step = None;
                self.status = "left step mode".into();
            }
            Action::Help => self.overlay = Some(Overlay::Help { scroll: 0 }),
            Action::Quit => {
                if self.editor.modified {
                    self.overlay = Some(Overlay::Confirm(Confirm::QuitUnsaved));
                } else {
                    self.quit = true;
                    return vec![Effect::Quit];
                }
            }
            Action::Save => self.save(),
            Action::Open => self.overlay = Some(Overlay::Picker(PickerState::load(&self.config))),
            Action::FocusNext => self.focus = self.focus.step(1),
            Action::FocusPrev => self.focus = self.focus.step(-1),
            Action::TabTrace => self.show_tab(Tab::Trace),
            Action::TabReply => self.show_tab(Tab::Reply),
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
            Action::CopyDeclaredKeys => return super::server::copy_declared_keys(self),
            Action::Rescan | Action::OpenKey | Action::CopyToSandbox => {
                self.status = "this key works in the Server tab (Alt-5)".into()
            }
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => self.scroll(action),
            Action::Select => self.select(),
            Action::Close => self.overlay = None,
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
                    if self.seed.remove(&key, self.now_ms).is_some() {
                        self.status = format!("deleted '{name}' from the seed");
                        super::keyspace::show_seed(self, Some(&key));
                    } else {
                        self.status = format!("'{name}' is not in the seed (the run made it)");
                    }
                }
            }
            Action::SetString => {
                if let Some(key) = self.keyspace.selected_key(self) {
                    // Prefill the seed's current string, when it is short text.
                    let current = match self.seed.get(&key, self.now_ms).map(|e| &e.value) {
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
                    if self.seed.contains(&key, self.now_ms) {
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
                self.last_run = None;
                self.step = None;
                self.keyspace.value_scroll = 0;
                self.status = "keyspace reset to the seed".into();
            }
            Action::AdvanceClock => self.prompt(
                PromptPurpose::AdvanceClock,
                "Advance the sandbox clock by N seconds",
                "60",
            ),
            Action::ToggleSeedView => super::keyspace::toggle_seed_view(self),
            Action::KeyspaceFocus
            | Action::KeyspaceUp
            | Action::KeyspaceDown
            | Action::KeyspacePageUp
            | Action::KeyspacePageDown
            | Action::KeyspaceTop
            | Action::KeyspaceBottom => super::keyspace::navigate(self, action),
            Action::Find => self.prompt(PromptPurpose::Find, "Search (regex)", ""),
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
            | Action::ToggleWrap => return super::editing::update(self, action),
            Action::NewFile => super::file_actions::new_file(self),
            Action::FindNext => {
                if !self.editor.find_next() {
                    self.status = "no match (Ctrl-F searches)".into();
                }
            }
        }
        Vec::new()
    }

    fn show_tab(&mut self, tab: Tab) {
        self.tab = tab;
        self.focus = Focus::Panes;
    }

    fn answer_prompt(&mut self, prompt: Prompt) -> Vec<Effect> {
        let input = prompt.input.trim().to_string();
        match prompt.purpose {
            PromptPurpose::FilterKeys => self.keyspace.set_filter(input),
            PromptPurpose::AddKey => {
                if self.now_ms == 0 {
                    self.now_ms = super::keyspace::wall_clock_ms();
                }
                match super::keyspace::parse_add_key(&input, self.now_ms) {
                    Ok((name, value)) => {
                        let kind = value.type_name();
                        let verb = if self.seed.contains(&name, self.now_ms) {
                            "replaced"
                        } else {
                            "added"
                        };
                        self.status = format!(
                            "{verb} {kind} '{}' in the seed",
                            String::from_utf8_lossy(&name)
                        );
                        self.seed.set(name.clone(), value);
                        super::keyspace::show_seed(self, Some(&name));
                    }
                    Err(e) => self.status = e,
                }
            }
            PromptPurpose::SetString { key } => {
                self.seed.set_keep_ttl(
                    key.clone(),
                    crate::engine::keyspace::Value::Str(prompt.input.into_bytes()),
                    self.now_ms,
                );
                self.status = "string value set in the seed".into();
                super::keyspace::show_seed(self, Some(&key));
            }
            PromptPurpose::SetTtl { key } => {
                if self.now_ms == 0 {
                    self.now_ms = super::keyspace::wall_clock_ms();
                }
                match input.parse::<i64>() {
                    Ok(0) => {
                        self.seed.set_expire(&key, None);
                        self.status = "TTL removed in the seed".into();
                        super::keyspace::show_seed(self, Some(&key));
                    }
                    Ok(secs) if secs > 0 && secs < i64::MAX / 1000 - self.now_ms / 1000 => {
                        self.seed.set_expire(&key, Some(self.now_ms + secs * 1000));
                        self.status = format!("TTL {secs} s set in the seed");
                        super::keyspace::show_seed(self, Some(&key));
                    }
                    _ => self.status = format!("'{input}' is not a number of seconds"),
                }
            }
            PromptPurpose::LoadSeed => {
                if self.now_ms == 0 {
                    self.now_ms = super::keyspace::wall_clock_ms();
                }
                match files::load_seed(std::path::Path::new(&input), self.now_ms) {
                    Ok(db) => {
                        self.seed = db;
                        self.status = format!("seed loaded from {input}");
                        super::keyspace::show_seed(self, None);
                    }
                    Err(e) => self.status = e,
                }
            }
            PromptPurpose::SaveSeed => {
                match files::save_seed(std::path::Path::new(&input), &self.seed, self.now_ms) {
                    Ok(()) => self.status = format!("seed saved to {input}"),
                    Err(e) => self.status = e,
                }
            }
            PromptPurpose::AdvanceClock => match input.parse::<i64>() {
                Ok(secs) if secs > 0 && secs < i64::MAX / 1_000_000 => {
                    self.status = format!("clock advanced by {secs} s");
                    return vec![Effect::AdvanceClock { ms: secs * 1000 }];
                }
                _ => self.status = format!("'{input}' is not a positive number of seconds"),
            },
            PromptPurpose::SaveAs => {
                if super::file_actions::save_as(self, &input) {
                    self.save();
                }
            }
            PromptPurpose::Find => {
                self.status = match self.editor.find(&prompt.input) {
                    Ok(true) => format!("found '{}'", prompt.input),
                    Ok(false) => format!("no match for '{}'", prompt.input),
                    Err(e) => e,
                }
            }
            PromptPurpose::GotoLine => super::editing::goto_line(self, &input),
            PromptPurpose::ScanMatch | PromptPurpose::OpenServerKey => {
                return super::server::answer_prompt(self, &prompt.purpose, input)
            }
        }
        Vec::new()
    }

    fn start_run(&mut self) -> Vec<Effect> {
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
        self.rerun(request, false)
    }

    /// Send `request` to the engine (`writes_confirmed`: after the live-write confirmation).
    fn rerun(&mut self, request: RunRequest, writes_confirmed: bool) -> Vec<Effect> {
        let id = self.next_run_id;
        self.next_run_id += 1;
        self.running = Some(Running {
            id,
            started: Instant::now(),
        });
        self.step = None;
        self.status = "running…".into();
        vec![Effect::Run {
            id,
            request,
            seed: self.seed.clone(),
            busy_threshold_ms: self.config.busy_threshold_ms,
            writes_confirmed,
            live: self.use_live,
        }]
    }

    pub fn on_engine_event(&mut self, event: EngineEvent) {
        match event {
            EngineEvent::Finished(result) => {
                if self.running.is_some_and(|r| r.id != result.id) {
                    return; // a superseded run
                }
                self.running = None;
                self.now_ms = result.now_ms;
                if self.use_live {
                    // The run loaded the traced copy: ask the cache again.
                    self.script_cache = None;
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
                self.editor
                    .set_error(report.error_line.map(|line| (line, report.reply.to_cli())));
                self.trace_list = ListState::default();
                if result.awaiting_confirmation {
                    self.status =
                        "the dry run writes: see Trace and Keyspace; y sends it to the live server"
                            .into();
                    self.overlay = Some(Overlay::Confirm(Confirm::LiveWrite(Box::new(
                        result.request.clone(),
                    ))));
                }
                self.last_run = Some(*result);
            }
            EngineEvent::ClockMoved { now_ms } => self.now_ms = now_ms,
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
        match (&self.last_run, self.keyspace.shown(self)) {
            (Some(run), Shown::Step(i)) => {
                let seq = run.report.trace.get(i).map_or(0, |e| e.seq);
                super::keyspace::db_at(run, seq)
            }
            (Some(run), Shown::AfterRun) => &run.after,
            _ => &self.seed,
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
            Tab::Server => {}
        }
    }

    fn select(&mut self) {
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
    }

    fn save(&mut self) {
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
        let path = files::expand_home(&path);
        self.editor.path = Some(path.clone());
        let text = self.editor.text();
        let result = files::save_script(
            &path,
            &text,
            &self.inputs,
            &self.seed,
            files::now_ms(self.now_ms),
        );
        match result {
            Ok(sidecar_problem) => {
                self.editor.modified = false;
                files::mark_clean(&files::Autosaved {
                    text,
                    path: Some(path.clone()),
                    keys: self.inputs.keys_text(),
                    argv: self.inputs.argv_text(),
                });
                files::discard_autosave(Some(&path));
                files::remember_recent(&path);
                self.status = sidecar_problem
                    .unwrap_or_else(|| format!("saved {} and its sidecar", path.display()));
            }
            Err(e) => self.status = e,
        }
    }

    pub fn open_file(&mut self, path: PathBuf) {
        // Leaving this script: its unsaved changes were given up (the question was asked).
        if self.editor.modified {
            files::discard_autosave(self.editor.path.as_deref());
        }
        files::release_autosave(self.editor.path.as_deref());
        let now = files::now_ms(self.now_ms);
        match files::open_script(&path, now) {
            Ok(opened) => {
                self.editor = EditorState::new(&opened.text, opened.path.clone());
                match opened.sidecar {
                    Some(car) => {
                        self.inputs = InputsState::from_lists(&car.keys, &car.argv);
                        self.seed = car.seed;
                    }
                    None => {
                        self.inputs = InputsState::default();
                        self.seed = Db::new();
                    }
                }
                self.last_run = None;
                self.step = None;
                self.status = match (&opened.path, opened.sidecar_error) {
                    (_, Some(e)) => format!("opened {}; sidecar ignored: {e}", path.display()),
                    (Some(p), None) => format!("opened {}", p.display()),
                    (None, None) => "opened a built-in sample; Ctrl-S saves a copy".into(),
                };
                files::mark_clean(&files::Autosaved {
                    text: opened.text,
                    path: opened.path,
                    keys: self.inputs.keys_text(),
                    argv: self.inputs.argv_text(),
                });
                files::remember_recent(&path);
                self.offer_recovery(); // an autosave of this same script
            }
            Err(_) if !path.exists() && path.extension().is_some_and(|e| e == "lua") => {
                // A new file: an empty buffer that Ctrl-S creates.
                self.editor = EditorState::new("", Some(path.clone()));
                self.inputs = InputsState::default();
                self.seed = Db::new();
                self.last_run = None;
                self.step = None;
                self.status = format!("{} is a new file; Ctrl-S creates it", path.display());
            }
            Err(e) => self.status = e,
        }
    }

    /// Offer to recover the autosave of this same script left by a crash.
    pub fn offer_recovery(&mut self) {
        let path = self.editor.path.clone();
        let path = path.as_deref();
        if !files::autosave_exists(path) {
            return;
        }
        if !files::may_autosave(path) {
            self.status =
                "another evalbench is editing this script: this one does not autosave it".into();
            return;
        }
        let Some(saved) = files::load_autosave(path) else {
            files::discard_autosave(path);
            self.status = "an unreadable autosave was found and removed".into();
            return;
        };
        let current = files::Autosaved {
            text: self.editor.text(),
            path: self.editor.path.clone(),
            keys: self.inputs.keys_text(),
            argv: self.inputs.argv_text(),
        };
        if saved == current {
            files::discard_autosave(path); // nothing to recover
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
        match files::load_autosave(self.editor.path.as_deref()) {
            Some(saved) => {
                // The seed is not autosaved: take the one of the script's sidecar.
                let now = files::now_ms(self.now_ms);
                self.seed = saved
                    .path
                    .as_deref()
                    .and_then(|p| files::open_script(p, now).ok())
                    .and_then(|o| o.sidecar)
                    .map_or_else(Db::new, |car| car.seed);
                self.editor = EditorState::new(&saved.text, saved.path);
                self.editor.modified = true;
                let mut inputs = InputsState::default();
                inputs.keys.insert_str(&saved.keys);
                inputs.argv.insert_str(&saved.argv);
                self.inputs = inputs;
                self.last_run = None;
                self.step = None;
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
        let state = files::Autosaved {
            text: self.editor.text(),
            path: self.editor.path.clone(),
            keys: self.inputs.keys_text(),
            argv: self.inputs.argv_text(),
        };
        if let Err(e) = files::autosave(&state) {
            self.status = e;
        }
    }
}
