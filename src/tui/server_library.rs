//! Opening a live server's function library in the editor. The Server tab's overview
//! lists the libraries (FUNCTION LIST, no code); Up/Down pick one (its functions are shown with
//! their flags and description), Enter or `o` reads that library's code alone (FUNCTION LIST
//! WITHCODE LIBRARYNAME, bounded by the script limit) and opens it read-only
//! (tui/read_only.rs). Unsaved changes in the editor are never dropped without a y/n. The form
//! then offers the library's functions (tui/form_function.rs).

use super::app::{App, Confirm, Effect, Focus, Overlay};
use super::inspector::InspectRequest;
use super::read_only::ReadOnly;
use crate::engine::display::display_safe;
use crate::engine::live::functions::LiveLibrary;

/// A library's code larger than this is not opened (what the editor opens from a file).
pub const MAX_CODE: u64 = crate::engine::input::SCRIPT.bytes;

/// The libraries the overview lists (empty before the first answer).
fn libraries(app: &App) -> &[LiveLibrary] {
    app.server
        .as_ref()
        .and_then(|v| v.overview.data.as_ref())
        .and_then(|(o, _)| o.libraries.as_ref())
        .map_or(&[], |(libs, _)| libs.as_slice())
}

/// The selected library's index, clamped to the list.
pub fn selected(app: &App) -> Option<usize> {
    let len = libraries(app).len();
    let at = app.server.as_ref()?.overview.library;
    (len > 0).then(|| at.min(len - 1))
}

/// Up/Down (and Home/End, PageUp/PageDown) in the overview: another library.
pub fn move_by(app: &mut App, delta: isize) {
    let len = libraries(app).len();
    if len == 0 {
        app.status = "no function library on the server (FUNCTION LIST is empty)".into();
        return;
    }
    let at = selected(app).unwrap_or(0) as isize;
    let to = (at + delta).clamp(0, len as isize - 1) as usize;
    if let Some(view) = app.server.as_mut() {
        view.overview.library = to;
    }
    let lib = &libraries(app)[to];
    let status = format!(
        "library '{}' ({} of {len}, {} function{}): Enter or o opens it read-only in the editor",
        lib.name,
        to + 1,
        lib.functions.len(),
        if lib.functions.len() == 1 { "" } else { "s" }
    );
    app.status = display_safe(&status).into_owned();
}

/// Enter or `o` in the overview: read the selected library's code.
pub fn request_open(app: &mut App) -> Vec<Effect> {
    let Some(at) = selected(app) else {
        app.status = "no function library on the server to open (FUNCTION LIST is empty)".into();
        return Vec::new();
    };
    let name = libraries(app)[at].name.clone();
    app.status = display_safe(&format!(
        "reading library '{name}' (FUNCTION LIST WITHCODE LIBRARYNAME)…"
    ))
    .into_owned();
    vec![Effect::Inspect(InspectRequest::LibraryCode { name })]
}

/// The library's code arrived (None: the server no longer has it).
pub fn on_code(app: &mut App, name: String, code: Option<Vec<u8>>) {
    let Some(code) = code else {
        app.status = display_safe(&format!(
            "library '{name}' is no longer on the server (R reads the list again)"
        ))
        .into_owned();
        return;
    };
    if code.len() as u64 > MAX_CODE {
        app.status = display_safe(&format!(
            "library '{name}' is {} bytes: larger than the editor opens ({} bytes); not opened",
            code.len(),
            MAX_CODE
        ))
        .into_owned();
        return;
    }
    // Never drop the user's unsaved script without asking (as opening a file does).
    if app.editor.modified {
        app.status = "the script has unsaved changes: y opens the server's library in its place, n keeps it (Ctrl-S saves it first)".into();
        app.overlay = Some(Overlay::Confirm(Confirm::OpenServerLibrary {
            name,
            code: code.into(),
        }));
        return;
    }
    open(app, name, &code);
}

/// The confirm question before replacing unsaved changes.
pub fn question(name: &str) -> String {
    display_safe(&format!(
        "The script has unsaved changes. Open server library '{name}' (read-only) in its place? (y/n)"
    ))
    .into_owned()
}

/// Open `code` read-only in the editor: KEYS, ARGV and the seed stay (the function runs on them).
pub fn open(app: &mut App, name: String, code: &[u8]) {
    // Leaving this script: its unsaved changes were given up (the question was asked).
    app.leave_buffer();
    let text = super::editor::decode_script(code);
    app.editor = super::editor::EditorState::new(&text, None);
    app.editor.read_only = Some(ReadOnly {
        library: name.clone(),
        server: app
            .live_server
            .clone()
            .unwrap_or_else(|| "the live server".into()),
    });
    app.debugger.forget_script(); // breakpoints and line counts were the old script's
    app.last_run = None;
    app.step = None;
    app.focus = Focus::Editor;
    super::form_function::housekeeping(app);
    let call = match app.form_function.describe() {
        Some(line) => format!(
            "{line}: F5 calls it {}, Alt-F picks another",
            if app.use_live {
                "on the server (guarded)"
            } else {
                "in the sandbox"
            }
        ),
        None => "not a function library the sandbox loads".into(),
    };
    app.status = display_safe(&format!(
        "opened server library '{name}' read-only ({call}); Ctrl-S saves an editable copy"
    ))
    .into_owned();
}
