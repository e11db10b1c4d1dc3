//! The form's function of a library buffer: when the editor holds a function library
//! (`#!lua name=...`), the form lists the functions it registers (with their flags) and F5 calls the
//! chosen one with FCALL (FCALL_RO for a `no-writes` function) on the form's KEYS and ARGV, in the
//! sandbox, with the same trace and reply as a script. The list comes from loading the library as
//! FUNCTION LOAD does, in a sandbox of its own.

use super::app::App;
use super::worker::RunResult;
use crate::engine::function::library::parse_metadata;
use crate::engine::keyspace::Db;
use crate::engine::script::{sha1_hex, ScriptFlags};
use crate::engine::{FunctionCall, RunRequest, Sandbox};

/// A function the library registers.
#[derive(Debug, Clone, PartialEq)]
pub struct Registered {
    pub name: String,
    pub flags: ScriptFlags,
}

/// The library in the editor, as last loaded (`sha`: the buffer it was loaded from).
#[derive(Debug, Clone, Default)]
pub struct FormFunction {
    sha: String,
    /// The library's name; None when the buffer is not a library.
    pub library: Option<String>,
    pub functions: Vec<Registered>,
    pub selected: usize,
    /// FUNCTION LOAD's error, when the library does not load.
    pub error: Option<String>,
}

impl FormFunction {
    /// The form of a buffer holding `code`.
    pub fn for_code(code: &[u8]) -> FormFunction {
        let mut form = FormFunction::default();
        form.refresh(code);
        form
    }

    /// Load the buffer again if it changed since the last load.
    pub fn refresh(&mut self, code: &[u8]) {
        self.refresh_as(sha1_hex(code), code)
    }

    fn refresh_as(&mut self, sha: String, code: &[u8]) {
        if sha == self.sha {
            return;
        }
        let chosen = self.chosen().map(str::to_string);
        *self = FormFunction {
            sha,
            ..FormFunction::default()
        };
        let Ok(meta) = parse_metadata(code) else {
            return; // a script, not a library
        };
        // A shebang of a script (`#!lua flags=...`) has no name=: not a library either.
        self.library = Some(meta.name);
        let mut sandbox = Sandbox::new();
        match sandbox.function_load(code, false) {
            Ok(_) => {
                self.functions = sandbox
                    .function_libraries()
                    .iter()
                    .flat_map(|lib| lib.functions.iter())
                    .map(|f| Registered {
                        name: f.name.clone(),
                        flags: f.flags,
                    })
                    .collect();
                // The same function stays chosen across edits.
                self.selected = chosen
                    .and_then(|c| self.functions.iter().position(|f| f.name == c))
                    .unwrap_or(0);
            }
            Err(e) => self.error = Some(e),
        }
    }

    pub fn is_library(&self) -> bool {
        self.library.is_some()
    }

    pub fn chosen(&self) -> Option<&str> {
        self.functions.get(self.selected).map(|f| f.name.as_str())
    }

    /// The form's line: "FCALL name [no-writes] · 1/3 (Alt-F picks)" or the load error.
    pub fn describe(&self) -> Option<String> {
        let library = self.library.as_ref()?;
        if let Some(e) = &self.error {
            return Some(format!("library '{library}': FUNCTION LOAD failed: {e}"));
        }
        let f = self.functions.get(self.selected)?;
        let command = if f.flags.no_writes {
            "FCALL_RO"
        } else {
            "FCALL"
        };
        Some(format!(
            "{command} {}{} · {}/{} of '{library}'",
            f.name,
            flags_text(&f.flags),
            self.selected + 1,
            self.functions.len()
        ))
    }
}

impl FormFunction {
    /// The form's line at decreasing lengths, for the width there is: with the library and the
    /// key, without them, the command and name alone.
    pub fn describe_fitting(&self) -> Vec<String> {
        let Some(full) = self.describe() else {
            return Vec::new();
        };
        let mut out = vec![format!("{full} · Alt-F")];
        if let Some(f) = self
            .functions
            .get(self.selected)
            .filter(|_| self.error.is_none())
        {
            let command = if f.flags.no_writes {
                "FCALL_RO"
            } else {
                "FCALL"
            };
            out.push(format!(
                "{command} {} {}/{} · Alt-F",
                f.name,
                self.selected + 1,
                self.functions.len()
            ));
            out.push(format!("{command} {}", f.name));
        } else {
            out.push("FUNCTION LOAD failed (F5 says why)".into());
        }
        out
    }
}

/// " [no-writes, allow-oom]" (empty without flags).
pub fn flags_text(flags: &ScriptFlags) -> String {
    let names: Vec<&str> = [
        (flags.no_writes, "no-writes"),
        (flags.allow_oom, "allow-oom"),
        (flags.allow_stale, "allow-stale"),
        (flags.no_cluster, "no-cluster"),
        (flags.allow_cross_slot_keys, "allow-cross-slot-keys"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    if names.is_empty() {
        String::new()
    } else {
        format!(" [{}]", names.join(", "))
    }
}

/// After every event: the form follows the editor (a library is loaded again once it changed; the
/// editor caches its SHA1, so an unchanged buffer costs a comparison).
pub fn housekeeping(app: &mut App) {
    // A script (no `#!` first line) is never a library: no need to hash the buffer on every
    // keystroke (a 5,000-line script would cost a frame's budget).
    let shebang = app
        .editor
        .lines()
        .first()
        .is_some_and(|l| l.starts_with("#!"));
    if !shebang {
        if app.form_function.library.is_some() || !app.form_function.sha.is_empty() {
            app.form_function = FormFunction::default();
        }
        return;
    }
    let sha = app.editor.sha1();
    if sha != app.form_function.sha {
        let code = app.editor.bytes();
        app.form_function.refresh_as(sha, &code);
    }
}

/// Alt-F: the next function of the library in the editor.
pub fn pick_next(app: &mut App) {
    let code = app.editor.bytes();
    let form = &mut app.form_function;
    form.refresh(&code);
    if !form.is_library() {
        app.status =
            "the editor holds a script, not a function library (#!lua name=...): F5 runs it with EVAL"
                .into();
        return;
    }
    if !form.functions.is_empty() {
        form.selected = (form.selected + 1) % form.functions.len();
    }
    app.status = form
        .describe()
        .unwrap_or_else(|| "the library registers no function".into());
}

/// The function F5 calls: Some(Ok(name)) for a library that loads, Some(Err(why)) for one that
/// does not, None for a script.
pub fn for_run(app: &mut App) -> Option<Result<String, String>> {
    let code = app.editor.bytes();
    app.form_function.refresh(&code);
    let form = &app.form_function;
    if !form.is_library() {
        return None;
    }
    if let Some(line) = form.describe().filter(|_| form.error.is_some()) {
        return Some(Err(line));
    }
    Some(
        form.chosen()
            .map(str::to_string)
            .ok_or_else(|| "the library registers no function".into()),
    )
}

impl RunResult {
    /// F5 on a library: FUNCTION LOAD it (the sandbox's libraries replaced by it) and FCALL
    /// `function` on the request's KEYS and ARGV: FCALL_RO for a `no-writes` function.
    pub fn fcall(
        sandbox: &mut Sandbox,
        id: u64,
        request: RunRequest,
        seed: Db,
        busy_threshold_ms: u64,
        function: &str,
    ) -> RunResult {
        sandbox.config.busy_threshold_ms = busy_threshold_ms;
        sandbox.set_db0(seed.clone());
        let report = match load_call(sandbox, &request, function) {
            Ok(call) => sandbox.fcall(&call),
            Err(e) => crate::engine::RunReport::refused(
                sha1_hex(&request.script),
                e,
                request.protocol,
                busy_threshold_ms,
            ),
        };
        RunResult::of_sandbox(sandbox, id, request, report, seed)
    }
}

/// FUNCTION LOAD the request's library (the sandbox's libraries replaced by it) and the FCALL of
/// `function` on the request's KEYS and ARGV: FCALL_RO for a `no-writes` function. Shared by F5
/// and the debugger (tui/debug_engine.rs). Err: FUNCTION LOAD's error.
pub fn load_call(
    sandbox: &mut Sandbox,
    request: &RunRequest,
    function: &str,
) -> Result<FunctionCall, String> {
    sandbox.function_flush();
    sandbox.function_load(&request.script, false)?;
    let read_only = sandbox
        .function_libraries()
        .iter()
        .flat_map(|lib| lib.functions.iter())
        .find(|f| f.name == function)
        .is_some_and(|f| f.flags.no_writes);
    Ok(FunctionCall {
        name: function.to_string(),
        keys: request.keys.clone(),
        argv: request.argv.clone(),
        protocol: request.protocol,
        read_only,
    })
}

/// A file was opened whose sidecar names `function` (`"function"`): the form calls it. A name
/// the library does not register, or a script that is no library, is said in the status line.
pub fn apply_sidecar(app: &mut App, function: Option<&str>) {
    let Some(name) = function else {
        return;
    };
    let code = app.editor.bytes();
    let form = &mut app.form_function;
    form.refresh(&code);
    let note = if !form.is_library() {
        format!("the sidecar's function '{name}' is not used: the script is not a function library (#!lua name=...)")
    } else if let Some(at) = form.functions.iter().position(|f| f.name == name) {
        form.selected = at;
        return;
    } else if form.error.is_some() {
        return; // the load error is on the form already
    } else {
        format!(
            "the sidecar's function '{name}' is not registered by the library: F5 calls '{}' (Alt-F picks another)",
            form.chosen().unwrap_or_default()
        )
    };
    app.status =
        crate::engine::display::display_safe(&format!("{}; {note}", app.status)).into_owned();
}
