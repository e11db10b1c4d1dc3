//! Several files open at once, as in an editor: opening a file adds a buffer (an open file is
//! switched to, not opened twice), Ctrl-PageDown / Ctrl-PageUp go to the next / previous one,
//! Alt-B lists them (`*` for unsaved), Ctrl-W closes one (asking first when it has unsaved
//! changes) and Ctrl-Q asks once for all of them.
//!
//! The shown buffer lives in the `App`'s fields (the panes read it there); the others wait here
//! whole (`BufferState`: script, form, seed, clock, keep state, debugger, run results), and a
//! switch swaps them (`App::swap_buffer`), so nothing of one buffer is seen in another.

use super::app::{App, Confirm, Effect, Overlay};
use super::buffer::BufferState;
use super::editor::EditorState;
use super::files;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use std::path::Path;

/// The open buffers.
pub struct Buffers {
    /// Every open buffer in order; the shown one's place is empty (it is in the `App`).
    slots: Vec<Option<BufferState>>,
    current: usize,
    /// Close the buffer with this id once it is saved ("s" to the close question).
    pending_close: Option<String>,
}

impl Default for Buffers {
    fn default() -> Self {
        Buffers {
            slots: vec![None],
            current: 0,
            pending_close: None,
        }
    }
}

impl Buffers {
    /// How many buffers are open.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The shown buffer's place in the list (from 0).
    pub fn current(&self) -> usize {
        self.current
    }
}

/// One row of the buffer list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub name: String,
    pub modified: bool,
    pub current: bool,
}

/// A buffer's name as the lists show it: its path, a server library's origin, or "untitled".
pub fn name_of(editor: &EditorState) -> String {
    let name = match (&editor.path, &editor.read_only) {
        (Some(p), _) => p.display().to_string(),
        (None, Some(read_only)) => super::read_only::title(read_only),
        (None, None) => "untitled".into(),
    };
    crate::engine::display::display_safe(&name).into_owned()
}

/// Every open buffer, in order.
pub fn list(app: &App) -> Vec<Listed> {
    let b = &app.buffers;
    b.slots
        .iter()
        .enumerate()
        .map(|(i, slot)| {
            let editor = match slot {
                Some(buffer) => &buffer.editor,
                None => &app.editor,
            };
            Listed {
                name: name_of(editor),
                modified: editor.modified,
                current: i == b.current,
            }
        })
        .collect()
}

/// The names of the buffers with unsaved changes.
pub fn unsaved(app: &App) -> Vec<String> {
    list(app)
        .into_iter()
        .filter(|l| l.modified)
        .map(|l| l.name)
        .collect()
}

/// "[2/3] " before the editor's title when more than one buffer is open.
pub fn position_label(app: &App) -> String {
    if app.buffers.len() < 2 {
        return String::new();
    }
    format!("[{}/{}] ", app.buffers.current + 1, app.buffers.len())
}

/// Nothing would be lost by putting another buffer in this one's place: an empty untitled
/// buffer nobody typed in (what the workbench starts with when given a file to open).
fn replaceable(app: &App) -> bool {
    app.editor.path.is_none()
        && app.editor.read_only.is_none()
        && !app.editor.modified
        && app.editor.textarea.lines().iter().all(|l| l.is_empty())
        && app.last_run.is_none()
}

/// Show `buffer`, a file just opened or a new script: after the others, or in the place of an
/// empty untitled buffer.
pub fn show_new(app: &mut App, buffer: BufferState) {
    if replaceable(app) {
        app.leave_buffer();
        app.swap_buffer(buffer);
        return;
    }
    app.autosave(); // what it holds now, should this process end before it is shown again
    let old = app.swap_buffer(buffer);
    let b = &mut app.buffers;
    b.slots[b.current] = Some(old);
    b.slots.push(None);
    b.current = b.slots.len() - 1;
}

/// The place of the open buffer of `path`, if there is one.
pub fn find(app: &App, path: &Path) -> Option<usize> {
    let key = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let wanted = key(path);
    app.buffers
        .slots
        .iter()
        .enumerate()
        .find(|(_, slot)| {
            let editor = match slot {
                Some(buffer) => &buffer.editor,
                None => &app.editor,
            };
            editor.path.as_deref().is_some_and(|p| key(p) == wanted)
        })
        .map(|(i, _)| i)
}

/// Why the shown buffer cannot be left now (its run or debug session belongs to it).
pub fn busy(app: &App) -> Option<&'static str> {
    if app.debugger.session.is_some() {
        Some("stop debugging first (Shift-F5): the session belongs to this buffer")
    } else if app.running.is_some() {
        Some("a run is in progress (Esc stops it): its result belongs to this buffer")
    } else if app.race_pending.is_some() {
        Some("the race lab is still running (Esc stops it)")
    } else {
        None
    }
}

/// Show the buffer at `index`; false (and the status line says why) when the shown one cannot
/// be left now.
pub fn switch_to(app: &mut App, index: usize) -> bool {
    if index >= app.buffers.len() {
        return false;
    }
    if index == app.buffers.current {
        return true;
    }
    if let Some(why) = busy(app) {
        app.status = why.into();
        return false;
    }
    app.autosave();
    let Some(buffer) = app.buffers.slots[index].take() else {
        return false;
    };
    let old = app.swap_buffer(buffer);
    let b = &mut app.buffers;
    b.slots[b.current] = Some(old);
    b.current = index;
    app.status = format!(
        "buffer {}/{}: {}{}",
        index + 1,
        app.buffers.len(),
        name_of(&app.editor),
        if app.editor.modified { " *" } else { "" }
    );
    true
}

/// The next (`by` 1) or previous (-1) buffer, round the list.
pub fn cycle(app: &mut App, by: isize) {
    let len = app.buffers.len();
    if len < 2 {
        app.status =
            "only one buffer is open (Ctrl-O opens another file, Ctrl-N a new script)".into();
        return;
    }
    let next = (app.buffers.current as isize + by).rem_euclid(len as isize) as usize;
    switch_to(app, next);
}

/// Alt-B: the list of open buffers, the shown one selected.
pub fn open_list(app: &mut App) {
    app.overlay = Some(Overlay::Buffers(app.buffers.current));
}

/// A key in the buffer list: ↑↓ choose, Enter shows the chosen one, Ctrl-W closes it, Esc.
pub fn list_key(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    let action = app.keymap.lookup(super::keymap::Context::Overlay, &key);
    let global = app.keymap.lookup(super::keymap::Context::Global, &key);
    let Some(Overlay::Buffers(selected)) = app.overlay.as_mut() else {
        return Vec::new();
    };
    let last = app.buffers.len().saturating_sub(1);
    use super::action::Action;
    match (action, global) {
        (Some(Action::Up), _) => *selected = selected.saturating_sub(1),
        (Some(Action::Down), _) => *selected = (*selected + 1).min(last),
        (Some(Action::Select), _) => {
            let index = *selected;
            app.overlay = None;
            switch_to(app, index);
        }
        (Some(Action::Close), _) | (_, Some(Action::BufferList)) => app.overlay = None,
        (_, Some(Action::CloseBuffer)) => {
            let index = *selected;
            app.overlay = None;
            if switch_to(app, index) {
                close(app);
            }
        }
        _ => {
            app.status = "↑↓ choose a buffer, Enter shows it, Ctrl-W closes it, Esc".into();
        }
    }
    Vec::new()
}

/// Ctrl-W: close the shown buffer; with unsaved changes it asks first (save / discard / cancel).
pub fn close(app: &mut App) {
    if let Some(why) = busy(app) {
        app.status = why.into();
        return;
    }
    if app.editor.modified {
        app.status = format!(
            "{} has unsaved changes: s saves it, d discards them, Esc keeps it open",
            name_of(&app.editor)
        );
        app.overlay = Some(Overlay::Confirm(Confirm::CloseUnsaved));
        return;
    }
    close_now(app);
}

/// The close question's answer: s, d or Esc.
pub fn close_answer(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    match key.code {
        KeyCode::Char('s') | KeyCode::Char('S') => {
            app.overlay = None;
            app.buffers.pending_close = Some(app.changes.id.clone());
            app.update(super::action::Action::Save);
            // Saved at once (a file of its own): closed by `saved`; else a question is open.
        }
        KeyCode::Char('d') | KeyCode::Char('D') => {
            app.overlay = None;
            close_now(app);
        }
        KeyCode::Esc | KeyCode::Char('c') | KeyCode::Char('n') => {
            app.overlay = None;
            app.status = "the buffer stays open".into();
        }
        _ => {
            app.status =
                "s saves the buffer and closes it, d discards its changes, Esc keeps it open"
                    .into();
        }
    }
    Vec::new()
}

/// A key outside any overlay: a save asked for by the close question ended (saved, or given
/// up at one of its own questions).
pub fn forget_pending_close(app: &mut App) {
    app.buffers.pending_close = None;
}

/// The shown buffer was saved: close it if the close question asked for that.
pub fn saved(app: &mut App) {
    if app.buffers.pending_close.as_deref() == Some(app.changes.id.as_str()) {
        app.buffers.pending_close = None;
        let status = app.status.clone();
        close_now(app);
        app.status = format!("{status}; {}", app.status);
    }
}

/// Close the shown buffer now (its unsaved changes were given up, their autosave with them);
/// the next one is shown, or an empty new script when it was the last.
fn close_now(app: &mut App) {
    let name = name_of(&app.editor);
    app.leave_buffer();
    let b = &mut app.buffers;
    if b.slots.len() == 1 {
        let now = app.next_seed_time();
        let editor = EditorState::new("", None);
        app.swap_buffer(BufferState::new(editor, now));
        app.status = format!("closed {name}: a new, empty script is open");
        return;
    }
    let closing = b.current;
    let next = if closing + 1 < b.slots.len() {
        closing + 1
    } else {
        closing - 1
    };
    let Some(buffer) = b.slots[next].take() else {
        return;
    };
    app.swap_buffer(buffer);
    let b = &mut app.buffers;
    b.slots.remove(closing);
    b.current = if next > closing { closing } else { next };
    app.status = format!(
        "closed {name}; buffer {}/{}: {}",
        app.buffers.current + 1,
        app.buffers.len(),
        name_of(&app.editor)
    );
}

/// Quit anyway: every buffer's unsaved changes go, their autosaves with them.
pub fn quit_discarding(app: &mut App) {
    for buffer in app.buffers.slots.iter().flatten() {
        let slot = files::Slot::of(buffer.editor.path.as_deref(), &buffer.changes.id);
        if buffer.editor.modified {
            files::discard_autosave(slot);
        }
        files::release_autosave(slot);
    }
    app.editor.modified = false;
    files::discard_autosave(app.autosave_slot());
}

/// Quitting with nothing unsaved: the other buffers' autosave locks are let go.
pub fn quit(app: &mut App) {
    for buffer in app.buffers.slots.iter().flatten() {
        let slot = files::Slot::of(buffer.editor.path.as_deref(), &buffer.changes.id);
        files::discard_autosave(slot);
        files::release_autosave(slot);
    }
}

/// Whether any buffer has unsaved changes.
pub fn any_unsaved(app: &App) -> bool {
    app.editor.modified
        || app
            .buffers
            .slots
            .iter()
            .flatten()
            .any(|b| b.editor.modified)
}

/// The quit question's text: every buffer with unsaved changes, by name.
pub fn quit_question(app: &App) -> String {
    let names = unsaved(app);
    match names.as_slice() {
        [] => "Quit? (y/n)".into(),
        [one] if app.buffers.len() == 1 => {
            let _ = one;
            "The script has unsaved changes. Quit anyway? (y/n)".into()
        }
        [one] => format!("{one} has unsaved changes. Quit anyway? (y/n)"),
        many => format!(
            "{} buffers have unsaved changes: {}. Quit anyway? (y/n)",
            many.len(),
            many.join(", ")
        ),
    }
}
