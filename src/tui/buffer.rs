//! What belongs to one buffer: the script and everything around it (KEYS/ARGV, seed, run clock,
//! keep-state, breakpoints, watches, the debug console), grouped in `BufferState` so opening
//! another file replaces all of it at once and nothing of the old file leaks into the new one.
//! The workbench shows one buffer; its parts are the `App` fields of the same names (the panes
//! read them there), and `App::swap_buffer` moves a whole buffer in or out — which is all a list
//! of several buffers needs.
//!
//! The buffer's changes other than its text are tracked here too: each one marks the buffer
//! modified (when the sidecar keeps it) and is a step of the buffer's undo history, interleaved
//! with the editor's text steps in the order they were made, so Ctrl-Z anywhere undoes the last
//! change of the buffer, whatever it was. One history rather than one per field: a seed key
//! deleted in the Keyspace tab is undone by the same Ctrl-Z as a word typed in the script, and
//! nothing is undone out of order behind the user's back.

use super::app::App;
use super::debugger::Debugger;
use super::editor::EditorState;
use super::form_function::FormFunction;
use super::inputs::InputsState;
use crate::engine::debug::Breakpoint;
use crate::engine::keyspace::Db;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// At most this many steps of the buffer's own (non-text) history are kept.
const MAX_STEPS: usize = 200;

/// Everything that belongs to one buffer (see the module comment).
pub struct BufferState {
    pub editor: EditorState,
    pub inputs: InputsState,
    pub form_function: FormFunction,
    pub seed: Db,
    pub seed_now_ms: i64,
    pub now_ms: i64,
    pub clock_offset_ms: i64,
    pub keep_state: Option<(Db, i64)>,
    /// Breakpoints, watches, the console (no session: a file is never opened while debugging).
    pub debugger: Debugger,
    pub changes: Changes,
    /// What its last run showed: the result, the step, where the panes were, the keyspace view,
    /// the Reply tab's comparison, its tests' results and its race lab.
    pub shown: Shown,
}

/// A buffer's run results and the panes' places in them (see `BufferState::shown`).
#[derive(Default)]
pub struct Shown {
    pub last_run: Option<super::worker::RunResult>,
    pub step: Option<usize>,
    pub trace_list: super::app::ListState,
    pub reply_scroll: u16,
    pub warnings_scroll: u16,
    pub keyspace: super::keyspace::KeyspaceView,
    pub reply_compare: super::reply_compare::CompareState,
    pub tests: super::tests_tab::TestsPane,
    pub race: Option<super::race::RaceView>,
}

impl BufferState {
    /// A buffer of `editor`'s script with an empty form and seed, its clock at `seed_now_ms`.
    pub fn new(editor: EditorState, seed_now_ms: i64) -> BufferState {
        let form_function = FormFunction::for_code(&editor.bytes());
        BufferState {
            editor,
            inputs: InputsState::default(),
            form_function,
            seed: Db::new(),
            seed_now_ms,
            now_ms: seed_now_ms,
            clock_offset_ms: 0,
            keep_state: None,
            debugger: Debugger::default(),
            changes: Changes::new(),
            shown: Shown::default(),
        }
    }
}

impl BufferState {
    /// The run clock and keep state a sidecar saved (before its seed is put in).
    pub fn restore_run_state(&mut self, car: &super::files::Sidecar) {
        self.clock_offset_ms = car.clock_offset_ms;
        self.now_ms = self.seed_now_ms + car.clock_offset_ms;
        if car.keep_state {
            self.keep_state = Some((car.seed.clone(), self.seed_now_ms));
        }
    }
}

impl App {
    /// Put `buffer` in the workbench and hand back the one it replaces.
    pub fn swap_buffer(&mut self, mut buffer: BufferState) -> BufferState {
        std::mem::swap(&mut self.editor, &mut buffer.editor);
        std::mem::swap(&mut self.inputs, &mut buffer.inputs);
        std::mem::swap(&mut self.form_function, &mut buffer.form_function);
        std::mem::swap(&mut self.seed, &mut buffer.seed);
        std::mem::swap(&mut self.seed_now_ms, &mut buffer.seed_now_ms);
        std::mem::swap(&mut self.now_ms, &mut buffer.now_ms);
        std::mem::swap(&mut self.clock_offset_ms, &mut buffer.clock_offset_ms);
        std::mem::swap(&mut self.keep_state, &mut buffer.keep_state);
        std::mem::swap(&mut self.debugger, &mut buffer.debugger);
        std::mem::swap(&mut self.changes, &mut buffer.changes);
        // What was shown of the old buffer's last run goes with it.
        let shown = &mut buffer.shown;
        std::mem::swap(&mut self.last_run, &mut shown.last_run);
        std::mem::swap(&mut self.step, &mut shown.step);
        std::mem::swap(&mut self.trace_list, &mut shown.trace_list);
        std::mem::swap(&mut self.reply_scroll, &mut shown.reply_scroll);
        std::mem::swap(&mut self.warnings_scroll, &mut shown.warnings_scroll);
        std::mem::swap(&mut self.keyspace, &mut shown.keyspace);
        std::mem::swap(&mut self.reply_compare, &mut shown.reply_compare);
        std::mem::swap(&mut self.tests, &mut shown.tests);
        std::mem::swap(&mut self.race, &mut shown.race);
        // A tab of the old buffer's (its race, its tests) the new one has not.
        if !self.tabs().contains(&self.tab) {
            self.tab = super::app::Tab::Trace;
        }
        buffer
    }

    /// The buffer's seed as it is saved: with keep state on, the seed it started from (the
    /// chained runs' keyspace is for trying things, K returns to the seed).
    pub fn saved_seed(&self) -> &Db {
        match &self.keep_state {
            Some((seed, _)) => seed,
            None => &self.seed,
        }
    }
}

impl App {
    /// What the autosave keeps of this buffer.
    pub fn autosave_state(&self) -> super::files::Autosaved {
        super::files::Autosaved {
            text: self.editor.text(),
            path: self.editor.path.clone(),
            keys: self.inputs.keys_text(),
            argv: self.inputs.argv_text(),
            buffer: self.changes.id.clone(),
        }
    }

    /// This buffer's autosave.
    pub fn autosave_slot(&self) -> super::files::Slot<'_> {
        super::files::Slot::of(self.editor.path.as_deref(), &self.changes.id)
    }

    /// Leaving this buffer for another: its unsaved changes were given up (the question was
    /// asked), their autosave with them; its autosave lock is let go.
    pub fn leave_buffer(&mut self) {
        if self.editor.modified {
            super::files::discard_autosave(self.autosave_slot());
        }
        super::files::release_autosave(self.autosave_slot());
    }
}

/// A part of the buffer's state, as it was before a change.
pub enum Before {
    Keys(String),
    Argv(String),
    Seed(Box<Db>),
    Breakpoints(Vec<Breakpoint>),
    Watches(Vec<String>),
    /// Break on commands and on writes to keys.
    Breaks(Vec<String>, Vec<Vec<u8>>),
    /// The run clock's offset.
    Clock(i64),
    /// The last run's result and step shown (`r` takes them from view).
    Run(Option<Box<super::worker::RunResult>>, Option<usize>),
    /// The sandbox's chained state (keep state on, the runs' keyspace as the seed).
    Chain(Box<Chain>),
}

/// What keep state chains: the seed the next run starts from, its time and clock, and the seed
/// it started from.
#[derive(Debug, Clone)]
pub struct Chain {
    seed: Db,
    seed_now_ms: i64,
    now_ms: i64,
    clock_offset_ms: i64,
    keep_state: Option<(Db, i64)>,
}

impl Chain {
    pub fn of(app: &App) -> Chain {
        Chain {
            seed: app.seed.clone(),
            seed_now_ms: app.seed_now_ms,
            now_ms: app.now_ms,
            clock_offset_ms: app.clock_offset_ms,
            keep_state: app.keep_state.clone(),
        }
    }
}

impl Before {
    /// Whether the sidecar keeps this part (then changing it is an unsaved change): all but
    /// the breaks and what a run showed.
    fn saved(&self) -> bool {
        !matches!(self, Before::Breaks(..) | Before::Run(..))
    }
}

struct Step {
    /// What the change was, for the status line ("deleted 'k' from the seed").
    what: String,
    before: Before,
    /// The editor's undo depth when it was made: its place among the text steps.
    text_depth: usize,
}

/// The parts compared after every event (all cheap: short strings and lists).
#[derive(Debug, Clone, PartialEq)]
struct Mark {
    keys: String,
    argv: String,
    breakpoints: Vec<Breakpoint>,
    watches: Vec<String>,
    command_breaks: Vec<String>,
    key_write_breaks: Vec<Vec<u8>>,
}

impl Mark {
    fn of(app: &App) -> Mark {
        Mark {
            keys: app.inputs.keys_text(),
            argv: app.inputs.argv_text(),
            breakpoints: app.debugger.breakpoints.clone(),
            watches: app.debugger.watches.clone(),
            command_breaks: app.debugger.command_breaks.clone(),
            key_write_breaks: app.debugger.key_write_breaks.clone(),
        }
    }
}

/// What the buffer's files hold (when it was opened, saved, or first seen unmodified): an undo
/// or redo that comes back to it leaves nothing unsaved, so the `*` goes.
#[derive(Debug, Clone, PartialEq)]
struct SavedPoint {
    text: String,
    keys: String,
    argv: String,
    breakpoints: Vec<crate::engine::formats::SidecarBreakpoint>,
    watches: Vec<String>,
    seed: Db,
    clock_offset_ms: i64,
    keep_state: bool,
}

impl SavedPoint {
    fn of(app: &App) -> SavedPoint {
        SavedPoint {
            text: app.editor.text(),
            keys: app.inputs.keys_text(),
            argv: app.inputs.argv_text(),
            breakpoints: app.debugger.saved_breakpoints(),
            watches: app.debugger.watches.clone(),
            seed: app.saved_seed().clone(),
            clock_offset_ms: app.clock_offset_ms,
            keep_state: app.keep_state.is_some(),
        }
    }
}

/// A buffer's id: unique across processes, so each untitled buffer has an autosave of its own.
fn new_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!(
        "{}-{started}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The buffer's changes besides its text, and its identity.
pub struct Changes {
    /// Names the autosave of an untitled buffer.
    pub id: String,
    mark: Option<Mark>,
    done: Vec<Step>,
    undone: Vec<Step>,
    /// The field being typed in: its keystrokes are one step.
    typing: Option<bool>,
    /// The editor's revision after the last event.
    text_revision: u64,
    /// This event is an undo or a redo (a text change by one keeps what there is to redo).
    undoing: bool,
    /// The sidecar's path where the user chose to save the script only (a file that is not
    /// evalbench's): later saves leave it alone without asking again.
    pub sidecar_declined: Option<PathBuf>,
    /// What its files hold (None: not known, as for recovered changes).
    saved_point: Option<Box<SavedPoint>>,
}

impl Default for Changes {
    fn default() -> Self {
        Changes::new()
    }
}

impl Changes {
    pub fn new() -> Changes {
        Changes {
            id: new_id(),
            mark: None,
            done: Vec::new(),
            undone: Vec::new(),
            typing: None,
            text_revision: 0,
            undoing: false,
            sidecar_declined: None,
            saved_point: None,
        }
    }
}

/// Record a change of the buffer made just now: `before` is the part as it was.
pub fn record(app: &mut App, what: impl Into<String>, before: Before) {
    if before.saved() {
        app.editor.modified = true;
    }
    let text_depth = app.editor.undo_depth();
    let changes = &mut app.changes;
    changes.typing = None;
    changes.undone.clear();
    changes.done.push(Step {
        what: what.into(),
        before,
        text_depth,
    });
    if changes.done.len() > MAX_STEPS {
        changes.done.remove(0);
    }
}

/// Before changing the seed: keeps it for Ctrl-Z and marks the buffer modified.
pub fn seed_edit(app: &mut App, what: impl Into<String>) {
    let before = Before::Seed(Box::new(app.seed.clone()));
    record(app, what, before);
}

/// Before every event: the first look at a buffer is what its changes are compared with.
pub fn before_event(app: &mut App) {
    if app.changes.mark.is_none() {
        app.changes.mark = Some(Mark::of(app));
        app.changes.text_revision = app.editor.revision();
        if !app.editor.modified {
            app.changes.saved_point = Some(Box::new(SavedPoint::of(app)));
        }
    }
}

/// The buffer was just saved or opened: what it holds now is where its changes start from
/// (its undo history stays).
pub fn saved(app: &mut App) {
    app.changes.mark = Some(Mark::of(app));
    app.changes.typing = None;
    app.changes.saved_point = Some(Box::new(SavedPoint::of(app)));
}

/// After every event: the form, breakpoints, watches and breaks compared with the last event's;
/// what changed is a step (keystrokes in one field are one step until the focus leaves it).
pub fn after_event(app: &mut App) {
    let undoing = app.changes.undoing;
    after_change(app);
    app.changes.undoing = false;
    // Undone (or redone) back to what the files hold: nothing is unsaved.
    if undoing && app.editor.modified {
        let back = app
            .changes
            .saved_point
            .as_deref()
            .is_some_and(|saved| *saved == SavedPoint::of(app));
        if back {
            app.editor.modified = false;
        }
    }
}

fn after_change(app: &mut App) {
    let now = Mark::of(app);
    let revision = app.editor.revision();
    let text_changed = revision != app.changes.text_revision;
    app.changes.text_revision = revision;
    let typing_in = match app.focus {
        super::app::Focus::Keys => Some(true),
        super::app::Focus::Argv => Some(false),
        _ => None,
    };
    let Some(last) = app.changes.mark.replace(now.clone()) else {
        return; // the first look at this buffer
    };
    if text_changed && !std::mem::take(&mut app.changes.undoing) {
        // A new text change ends what was undone of the rest.
        app.changes.undone.clear();
    }
    if now == last {
        if app.changes.typing != typing_in {
            app.changes.typing = None;
        }
        return;
    }
    for (keys, old, new) in [
        (true, &last.keys, &now.keys),
        (false, &last.argv, &now.argv),
    ] {
        if old == new {
            continue;
        }
        let same_field = app.changes.typing == Some(keys) && typing_in == Some(keys);
        if same_field {
            app.editor.modified = true;
            app.changes.undone.clear();
            continue; // one step per field typed in
        }
        let (what, before) = if keys {
            ("KEYS edit", Before::Keys(old.clone()))
        } else {
            ("ARGV edit", Before::Argv(old.clone()))
        };
        record(app, what, before);
        app.changes.typing = typing_in.filter(|k| *k == keys);
    }
    // Breakpoints moved with their lines by a text edit follow the text's own undo.
    if last.breakpoints != now.breakpoints && !text_changed {
        record(app, "breakpoints", Before::Breakpoints(last.breakpoints));
    }
    if last.watches != now.watches {
        record(app, "watches", Before::Watches(last.watches));
    }
    if (&last.command_breaks, &last.key_write_breaks)
        != (&now.command_breaks, &now.key_write_breaks)
    {
        record(
            app,
            "break on",
            Before::Breaks(last.command_breaks, last.key_write_breaks),
        );
    }
}

/// Ctrl-Z / Ctrl-Y: when the buffer's last change (or the next one to redo) is not a text edit,
/// undo (redo) it here and say so; false leaves it to the editor.
pub fn undo_redo(app: &mut App, undo: bool) -> bool {
    app.changes.undoing = true;
    let depth = app.editor.undo_depth();
    let step = if undo {
        match app.changes.done.last() {
            Some(step) if step.text_depth >= depth => app.changes.done.pop(),
            _ => None,
        }
    } else {
        match app.changes.undone.last() {
            Some(step) if step.text_depth <= depth => app.changes.undone.pop(),
            _ => None,
        }
    };
    let Some(mut step) = step else {
        return false;
    };
    if app.debugger.session.is_some() && matches!(step.before, Before::Breakpoints(_)) {
        // The session runs with the breakpoints it has; the step stays for later.
        app.status = "stop debugging first (Shift-F5), then undo the breakpoint change".into();
        if undo {
            app.changes.done.push(step);
        } else {
            app.changes.undone.push(step);
        }
        return true;
    }
    step.before = restore(app, step.before);
    if step.before.saved() {
        app.editor.modified = true;
    }
    app.status = if undo {
        format!("undone: {} (Ctrl-Y redoes it)", step.what)
    } else {
        format!("redone: {} (Ctrl-Z undoes it)", step.what)
    };
    app.changes.typing = None;
    app.changes.mark = Some(Mark::of(app));
    if undo {
        app.changes.undone.push(step);
    } else {
        app.changes.done.push(step);
    }
    true
}

/// Put `before` back; what it replaced is returned (to redo or undo again).
fn restore(app: &mut App, before: Before) -> Before {
    match before {
        Before::Keys(text) => {
            let now = app.inputs.keys_text();
            app.inputs.keys = field(text);
            Before::Keys(now)
        }
        Before::Argv(text) => {
            let now = app.inputs.argv_text();
            app.inputs.argv = field(text);
            Before::Argv(now)
        }
        Before::Seed(mut seed) => {
            std::mem::swap(&mut app.seed, &mut *seed);
            super::keyspace::show_seed(app, None);
            Before::Seed(seed)
        }
        Before::Breakpoints(list) => {
            Before::Breakpoints(std::mem::replace(&mut app.debugger.breakpoints, list))
        }
        Before::Watches(list) => {
            Before::Watches(std::mem::replace(&mut app.debugger.watches, list))
        }
        Before::Breaks(commands, keys) => {
            let d = &mut app.debugger;
            Before::Breaks(
                std::mem::replace(&mut d.command_breaks, commands),
                std::mem::replace(&mut d.key_write_breaks, keys),
            )
        }
        Before::Run(run, step) => {
            let shown = app.last_run.take().map(Box::new);
            let shown_step = std::mem::replace(&mut app.step, step);
            app.last_run = run.map(|run| *run);
            Before::Run(shown, shown_step)
        }
        Before::Chain(mut chain) => {
            std::mem::swap(&mut app.seed, &mut chain.seed);
            std::mem::swap(&mut app.seed_now_ms, &mut chain.seed_now_ms);
            std::mem::swap(&mut app.now_ms, &mut chain.now_ms);
            std::mem::swap(&mut app.clock_offset_ms, &mut chain.clock_offset_ms);
            std::mem::swap(&mut app.keep_state, &mut chain.keep_state);
            super::keyspace::show_seed(app, None);
            Before::Chain(chain)
        }
        Before::Clock(offset) => {
            let now = app.clock_offset_ms;
            app.clock_offset_ms = offset;
            app.now_ms = app.seed_now_ms + offset;
            Before::Clock(now)
        }
    }
}

/// A KEYS or ARGV field holding `text`, the cursor at its end.
fn field(text: String) -> tui_textarea::TextArea<'static> {
    let mut area = tui_textarea::TextArea::new(vec![text]);
    area.move_cursor(tui_textarea::CursorMove::End);
    area
}
