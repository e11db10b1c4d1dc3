//! File commands of the workbench beyond open and save: a new script (Ctrl-N), save-as that
//! asks before overwriting another file, samples saved under a new name, and the picker's
//! keys (type to filter, a path to open one, Tab to complete it).

use super::app::{App, Confirm, Overlay, PromptPurpose};
use super::buffer::BufferState;
use super::files::{expand_home, PickerState};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::path::{Path, PathBuf};

/// Ctrl-N: a new, empty script in a buffer of its own (the shown one stays open, edits and
/// all): nothing of its form, seed, clock, breakpoints or watches comes along.
pub fn new_file(app: &mut App) {
    if let Some(why) = super::buffers::busy(app) {
        app.status = why.into();
        return;
    }
    let now = app.next_seed_time();
    let editor = super::editor::EditorState::new("", None);
    super::buffers::show_new(app, BufferState::new(editor, now));
    app.focus = super::app::Focus::Editor;
    app.status = "a new script: Ctrl-S saves it under a name you give".into();
}

/// The shown buffer replaced by a new, empty script (a lesson's, after the question, if there
/// was one): nothing of the old one's form, seed, clock, breakpoints or watches in it.
pub fn start_new(app: &mut App) {
    app.leave_buffer();
    let now = app.next_seed_time();
    let editor = super::editor::EditorState::new("", None);
    app.swap_buffer(BufferState::new(editor, now));
    app.focus = super::app::Focus::Editor;
}

/// Whether `path` is one of the bundled samples (kept as they are: saved under a new name).
pub fn is_sample(path: &Path) -> bool {
    let in_samples = |p: &Path| {
        p.parent()
            .and_then(|d| d.file_name())
            .is_some_and(|d| d == "samples")
    };
    let cwd_samples = std::fs::canonicalize("samples").ok();
    match (std::fs::canonicalize(path), cwd_samples) {
        (Ok(p), Some(dir)) => p.starts_with(dir),
        _ => path.is_relative() && in_samples(path),
    }
}

/// The answer to the save-as prompt: the path to save to; another existing file is
/// overwritten only after a yes (asked here: None).
pub fn save_as(app: &mut App, input: &str) -> Option<PathBuf> {
    if input.is_empty() {
        app.status = "not saved: no file name given".into();
        return None;
    }
    let path = expand_home(Path::new(input));
    let same = app.editor.path.as_deref().is_some_and(|p| p == path);
    if path.exists() && !same {
        app.overlay = Some(Overlay::Confirm(Confirm::Overwrite(path)));
        return None;
    }
    Some(path)
}

/// The question before a save would replace a file evalbench did not write.
pub fn foreign_sidecar_question(script: &Path, why: &str) -> String {
    let name = script
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    crate::engine::display::display_safe(&format!(
        "{why}. Saving {name} would replace it with its sidecar. o overwrites it, s saves the script only (that file stays as it is), Esc cancels."
    ))
    .into_owned()
}

/// A key in the open picker: Up/Down/Enter/Esc come through the keymap first; here typing
/// filters (or is a path), Backspace and Ctrl-U edit it, Tab completes a path.
pub fn picker_key(picker: &mut PickerState, key: KeyEvent) {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Char('u') if ctrl => picker.set_query(String::new()),
        KeyCode::Char(c) if !ctrl => {
            let mut query = picker.query.clone();
            query.push(c);
            picker.set_query(query);
        }
        KeyCode::Backspace => {
            let mut query = picker.query.clone();
            query.pop();
            picker.set_query(query);
        }
        KeyCode::Tab => {
            if let Some(completed) = complete_path(&picker.query) {
                picker.set_query(completed);
            }
        }
        _ => {}
    }
}

/// What Enter in the picker opens: a typed path (it has a `/` or starts with `~`), else the
/// selected entry, else (nothing in the list matches) what was typed, as a path: `hash.lua` in
/// the working directory opens as it would in any editor.
pub fn picker_choice(picker: &PickerState) -> Option<PathBuf> {
    let query = picker.query.trim();
    if query.contains('/') || query.starts_with('~') {
        return Some(expand_home(Path::new(query)));
    }
    picker
        .selected_path()
        .or_else(|| (!query.is_empty()).then(|| PathBuf::from(query)))
}

/// `typed` completed as far as the file system allows: the longest common prefix of the
/// entries of its folder that start with its last part (a lone folder gets its `/`).
pub fn complete_path(typed: &str) -> Option<String> {
    let (dir, stem) = match typed.rfind('/') {
        Some(i) => (&typed[..=i], &typed[i + 1..]),
        None => ("", typed),
    };
    let listing = expand_home(Path::new(if dir.is_empty() { "." } else { dir }));
    let mut names: Vec<(String, bool)> = std::fs::read_dir(listing)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            (name.starts_with(stem) && (!name.starts_with('.') || stem.starts_with('.')))
                .then_some((name, is_dir))
        })
        .collect();
    names.sort();
    let first = names.first()?;
    let mut common = first.0.clone();
    for (name, _) in &names[1..] {
        let len = common
            .chars()
            .zip(name.chars())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a.len_utf8())
            .sum();
        common.truncate(len);
    }
    let slash = if names.len() == 1 && first.1 { "/" } else { "" };
    let completed = format!("{dir}{common}{slash}");
    (completed != typed).then_some(completed)
}

/// Ctrl-S on a sample: ask for a new name instead of changing the sample.
pub fn save_sample_as(app: &mut App, sample: &Path) {
    let name = sample.file_name().map_or("script.lua".to_string(), |n| {
        n.to_string_lossy().into_owned()
    });
    app.open_prompt(
        PromptPurpose::SaveAs,
        "Samples stay as they are: save the script as",
        name,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_complete_to_the_common_prefix() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::write(dir.join("rate_one.lua"), "").unwrap();
        std::fs::write(dir.join("rate_two.lua"), "").unwrap();
        let base = format!("{}/", dir.display());
        assert_eq!(
            complete_path(&format!("{base}ra")),
            Some(format!("{base}rate_"))
        );
        assert_eq!(
            complete_path(&format!("{base}sc")),
            Some(format!("{base}scripts/"))
        );
        assert_eq!(complete_path(&format!("{base}rate_")), None);
        assert_eq!(complete_path(&format!("{base}zzz")), None);
    }
}
