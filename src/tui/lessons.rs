//! Lessons in the workbench (engine/lessons): a picker opens one (its starting script in the
//! editor, the first check's KEYS, ARGV and seed in the form), the Lesson tab shows the task,
//! the hints revealed so far and the last check; keys check the script (on a thread of its own,
//! so a script that loops does not freeze the screen), reveal the next hint and reset to the
//! starting script (asked first; the replaced text stays in undo).

use super::action::Action;
use super::app::{App, Confirm, Focus, Overlay, Tab};
use crate::engine::keyspace::{keyspace_from_json_value, Db};
use crate::engine::lessons::{self, CheckResult, Lesson};
use std::sync::mpsc::{Receiver, TryRecvError};

/// The open lesson.
pub struct LessonState {
    pub lesson: Lesson,
    /// How many lessons there are (for "Lesson 2 of 4").
    pub total: usize,
    pub hints_shown: usize,
    /// The last check's result, until the script changes and is checked again.
    pub check: Option<CheckResult>,
    /// A check running: its result arrives here.
    pub pending: Option<Receiver<CheckResult>>,
    /// Stops the running check (Esc).
    pub control: Option<std::sync::Arc<lessons::CheckControl>>,
    /// How long one run of the script may take in a check.
    pub run_limit_ms: u64,
    /// The Lesson tab's scroll.
    pub scroll: u16,
}

impl LessonState {
    pub fn checking(&self) -> bool {
        self.pending.is_some()
    }
}

/// The lessons Alt-L offers: the configured folder's (`lessons_dir`), else the bundled ones.
pub fn available(app: &App) -> Result<Vec<Lesson>, String> {
    match &app.config.lessons_dir {
        Some(dir) => lessons::from_dir(dir),
        None => lessons::all(),
    }
}

/// The lesson picker overlay's selected row.
pub fn open_picker(app: &mut App) {
    match available(app) {
        Ok(all) if !all.is_empty() => {
            let selected = app.lesson.as_ref().map_or(0, |l| l.lesson.number - 1);
            app.overlay = Some(Overlay::Lessons(selected));
        }
        Ok(_) => app.status = "no lessons are bundled".into(),
        Err(e) => app.status = format!("the lessons cannot be read: {e}"),
    }
}

/// The lesson actions (Alt-L, Alt-C, Alt-H, Alt-R, Alt-7).
pub fn update(app: &mut App, action: Action) {
    match action {
        Action::OpenLessons => open_picker(app),
        Action::TabLesson if app.lesson.is_some() => {
            app.tab = Tab::Lesson;
            app.focus = Focus::Panes;
        }
        Action::TabLesson | Action::CheckLesson | Action::NextHint | Action::ResetLesson
            if app.lesson.is_none() =>
        {
            app.status = "no lesson is open: Alt-L opens one".into()
        }
        Action::CheckLesson => check(app),
        Action::NextHint => next_hint(app),
        Action::ResetLesson => app.overlay = Some(Overlay::Confirm(Confirm::ResetLesson)),
        _ => {}
    }
}

/// A key in the picker: Up/Down move, Enter opens (asks first over unsaved changes), Esc closes.
pub fn picker_key(app: &mut App, action: Option<Action>) {
    if !matches!(app.overlay, Some(Overlay::Lessons(_))) {
        return;
    }
    let count = available(app).map(|a| a.len()).unwrap_or(0);
    let Some(Overlay::Lessons(selected)) = app.overlay.as_mut() else {
        return;
    };
    match action {
        Some(Action::Up) => *selected = selected.saturating_sub(1),
        Some(Action::Down) => *selected = (*selected + 1).min(count.saturating_sub(1)),
        Some(Action::Select) => {
            let index = *selected;
            if app.editor.modified {
                app.overlay = Some(Overlay::Confirm(Confirm::OpenLesson(index)));
            } else {
                app.overlay = None;
                open(app, index);
            }
        }
        Some(Action::Close) => app.overlay = None,
        _ => {}
    }
}

/// Open lesson `index` (0-based): its starting script as a new untitled script, the form and
/// seed from its first check.
pub fn open(app: &mut App, index: usize) {
    let all = match available(app) {
        Ok(all) => all,
        Err(e) => {
            app.status = format!("the lessons cannot be read: {e}");
            return;
        }
    };
    let total = all.len();
    let Some(lesson) = all.into_iter().nth(index) else {
        return;
    };
    // As Ctrl-N: the old script's unsaved changes were given up after the question.
    super::file_actions::start_new(app);
    app.editor = super::editor::EditorState::new(&lesson.start, None);
    set_form(app, &lesson);
    app.status = format!(
        "lesson {}: {} — Alt-C checks your script, Alt-H shows a hint",
        lesson.number, lesson.title
    );
    app.lesson = Some(Box::new(LessonState {
        lesson,
        total,
        hints_shown: 0,
        check: None,
        pending: None,
        control: None,
        run_limit_ms: lessons::property::RUN_LIMIT_MS,
        scroll: 0,
    }));
    app.tab = Tab::Lesson;
    app.focus = Focus::Editor;
}

/// KEYS, ARGV and the seed of the lesson's first check: F5 runs what the first check runs.
fn set_form(app: &mut App, lesson: &Lesson) {
    let Some(case) = lesson.checks.cases.first() else {
        return;
    };
    if let Some(step) = case.steps.first() {
        app.inputs = super::inputs::InputsState::from_lists(&step.keys, &step.argv);
    }
    app.seed = keyspace_from_json_value(&case.seed, app.seed_now_ms).unwrap_or_else(|_| Db::new());
}

/// Reset to the starting script (after the question): one edit, so Ctrl-Z brings the user's
/// script back; the autosave keeps it too until the next save.
pub fn reset(app: &mut App) {
    let Some(state) = app.lesson.as_ref() else {
        return;
    };
    let start = state.lesson.start.clone();
    let lesson = state.lesson.clone();
    app.editor.select_all();
    app.editor.paste(&start);
    set_form(app, &lesson);
    if let Some(state) = app.lesson.as_mut() {
        state.check = None;
    }
    app.status = "back to the starting script (Ctrl-Z brings yours back)".into();
}

fn next_hint(app: &mut App) {
    let Some(state) = app.lesson.as_mut() else {
        return;
    };
    let total = state.lesson.hints.len();
    if state.hints_shown < total {
        state.hints_shown += 1;
        app.status = format!(
            "hint {} of {total} shown in the Lesson tab",
            state.hints_shown
        );
    } else {
        app.status = format!("all {total} hints are shown");
    }
    app.tab = Tab::Lesson;
}

/// Run the lesson's checks on the editor's script, on a thread (the answer comes in
/// `housekeeping`).
fn check(app: &mut App) {
    let Some(state) = app.lesson.as_mut() else {
        return;
    };
    if state.checking() {
        app.status = "the checks are running".into();
        return;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let lesson = state.lesson.clone();
    let script = app.editor.bytes();
    let control = std::sync::Arc::new(lessons::CheckControl::new(
        lessons::property::CHECK_LIMIT,
        state.run_limit_ms,
    ));
    let stop = control.clone();
    // Replies can nest deep, as in the engine's own threads.
    let spawned = std::thread::Builder::new()
        .name("lesson-check".into())
        .stack_size(256 << 20)
        .spawn(move || {
            let _ = tx.send(lesson.check_with(&script, &stop));
        });
    match spawned {
        Ok(_) => {
            state.pending = Some(rx);
            state.control = Some(control);
            app.tab = Tab::Lesson;
            app.status = "checking… (Esc cancels)".into();
        }
        Err(e) => app.status = format!("the checks could not start: {e}"),
    }
}

/// Esc while a check runs: stop it (its result, marked cancelled, arrives as usual). False when
/// no check runs.
pub fn cancel(app: &mut App) -> bool {
    let Some(control) = app.lesson.as_ref().and_then(|l| l.control.as_ref()) else {
        return false;
    };
    control.cancel();
    app.status = "cancelling the check…".into();
    true
}

/// Take a finished check's result (called after every event and tick).
pub fn housekeeping(app: &mut App) {
    let Some(state) = app.lesson.as_mut() else {
        return;
    };
    let Some(rx) = &state.pending else {
        return;
    };
    match rx.try_recv() {
        Ok(result) => {
            app.status = result.summary();
            state.check = Some(result);
            state.pending = None;
            state.control = None;
            state.scroll = 0;
        }
        Err(TryRecvError::Empty) => {}
        Err(TryRecvError::Disconnected) => {
            state.pending = None;
            state.control = None;
            app.status = "the checks stopped without a result".into();
        }
    }
}

pub fn scroll(app: &mut App, delta: isize) {
    let max = app.regions.borrow().scroll_max as isize;
    if let Some(state) = app.lesson.as_mut() {
        state.scroll = (state.scroll as isize + delta).clamp(0, max) as u16;
    }
}

/// Whether the event loop should tick soon (a check is running).
pub fn waiting(app: &App) -> bool {
    app.lesson.as_ref().is_some_and(|l| l.checking())
}
