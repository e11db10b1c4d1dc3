//! Lint while typing: after an idle pause the editor's text is linted
//! (`engine::analysis::lint`) on a thread of its own, never on the UI thread, so typing is never
//! held up by it; its findings show as gutter marks and as Warnings entries (rule id, message,
//! fix). A result for a text that has changed since is dropped and the newer text linted.

use super::app::{App, Effect};
use super::theme::Theme;
use crate::engine::analysis::{lint_with, rules::Severity, Diagnostic};
use crate::engine::display::display_safe;
use crate::engine::profile::Profile;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the text must rest before it is linted.
pub const IDLE: Duration = Duration::from_millis(300);

/// What lints a text, for a profile and the KEYS it runs with (the engine's lint; a test puts a
/// slow one in its place).
pub type Linter =
    Arc<dyn Fn(&str, &'static Profile, Option<&[String]>) -> Vec<Diagnostic> + Send + Sync>;

/// A lint under way: the SHA1 of its text, the KEYS it is of, where its findings come.
type InFlight = (String, Option<Vec<String>>, Receiver<Vec<Diagnostic>>);

pub struct LintState {
    /// Off in the test harness unless a test turns it on (screens must not depend on timing).
    pub enabled: bool,
    pub idle: Duration,
    pub linter: Linter,
    /// The findings shown, and the SHA1 of the text they are of.
    diagnostics: Vec<Diagnostic>,
    linted: Option<String>,
    /// The editor revision the findings were last found current at.
    linted_revision: Option<u64>,
    /// The KEYS field the findings are of (None: it does not parse).
    linted_keys: Option<Vec<String>>,
    /// The editor's revision when last looked at, and since when it is so (a revision, not a
    /// hash: hashing the text on every keystroke would cost a large script its frame budget).
    seen: Option<(u64, Instant)>,
    /// The lint in progress: the SHA1 of its text and where its findings come.
    in_flight: Option<InFlight>,
}

impl Default for LintState {
    fn default() -> Self {
        LintState {
            enabled: true,
            idle: IDLE,
            linter: Arc::new(|text: &str, profile: &'static Profile, keys| {
                lint_with(text, profile, keys)
            }),
            diagnostics: Vec::new(),
            linted: None,
            linted_revision: None,
            linted_keys: None,
            seen: None,
            in_flight: None,
        }
    }
}

impl LintState {
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// A lint runs, or one is due after the idle pause (the event loop ticks faster).
    pub fn busy(&self) -> bool {
        self.in_flight.is_some()
            || (self.enabled
                && self
                    .seen
                    .as_ref()
                    .is_some_and(|(revision, _)| self.linted_revision != Some(*revision)))
    }

    /// The findings are of the editor's text as it is (no lint due or running).
    pub fn current(&self, sha: &str) -> bool {
        self.in_flight.is_none() && self.linted.as_deref() == Some(sha)
    }
}

/// A text to lint, on a thread of its own.
pub struct LintJob {
    text: String,
    /// The KEYS field, as the CLI and the language server take the sidecar's.
    keys: Option<Vec<String>>,
    /// The workbench's profile: the commands of its server.
    profile: &'static Profile,
    linter: Linter,
    findings: Sender<Vec<Diagnostic>>,
    /// The editor holds a TOML file (a race lab or a test file) at this path: checked as TOML.
    toml: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for LintJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LintJob({} bytes)", self.text.len())
    }
}

impl LintJob {
    pub fn spawn(self) {
        let spawned = std::thread::Builder::new()
            .name("evalbench-lint".into())
            .spawn(move || {
                let findings = match &self.toml {
                    Some(path) => toml_diagnostics(path, &self.text),
                    None => (self.linter)(&self.text, self.profile, self.keys.as_deref()),
                };
                let _ = self.findings.send(findings);
            });
        // No thread: the receiver sees the sender dropped and the text is linted again later.
        drop(spawned);
    }
}

/// Collect a finished lint and start the next one when the text has rested (`App::housekeeping`).
pub fn housekeeping(app: &mut App) -> Vec<Effect> {
    let state = &mut app.lint;
    if !state.enabled {
        return Vec::new();
    }
    // The run's KEYS (the sidecar's when the script was opened): KEYS[n] past them and keys of
    // several slots are findings, as in `evalbench lint` and the language server.
    let keys = crate::tui::inputs::InputsState::values(&app.inputs.keys_text(), "KEYS").ok();
    if let Some((of, of_keys, receiver)) = &state.in_flight {
        match receiver.try_recv() {
            Ok(findings) => {
                // Findings of an older text are dropped: the current one is linted next.
                if *of == app.editor.sha1() && *of_keys == keys {
                    state.diagnostics = findings;
                    state.linted = Some(of.clone());
                    state.linted_keys = of_keys.clone();
                    state.linted_revision = Some(app.editor.revision());
                }
                state.in_flight = None;
            }
            Err(TryRecvError::Empty) => return Vec::new(),
            Err(TryRecvError::Disconnected) => state.in_flight = None,
        }
    }
    let now = Instant::now();
    let revision = app.editor.revision();
    match &state.seen {
        Some((seen, _)) if *seen == revision => {}
        _ => state.seen = Some((revision, now)),
    }
    let rested = state
        .seen
        .as_ref()
        .is_some_and(|(_, since)| now.duration_since(*since) >= state.idle);
    if !rested {
        return Vec::new();
    }
    // The text rests: hashed once (the editor caches the hash by revision).
    let sha = app.editor.sha1();
    if state.linted.as_deref() == Some(sha.as_str()) && state.linted_keys == keys {
        state.linted_revision = Some(revision);
        return Vec::new();
    }
    let (sender, receiver) = channel();
    state.in_flight = Some((sha, keys.clone(), receiver));
    vec![Effect::Lint(LintJob {
        text: String::from_utf8_lossy(&app.editor.bytes()).into_owned(),
        keys,
        profile: app.config.profile,
        linter: state.linter.clone(),
        findings: sender,
        toml: app
            .editor
            .path
            .clone()
            .filter(|p| super::race::is_toml(Some(p))),
    })]
}

/// A TOML file's findings: a lab file checked as the lab runs it (its fields, its logic and
/// invariants compiled), any other (a test file) as TOML; never linted as Lua.
pub fn toml_diagnostics(path: &std::path::Path, text: &str) -> Vec<Diagnostic> {
    use crate::engine::analysis::rules::SYNTAX;
    let error = if super::race::is_lab_file(Some(path)) {
        crate::engine::race::check_lab(path, text)
            .err()
            .map(|e| (e.line, e.column, e.message))
    } else {
        toml::from_str::<toml::Table>(text).err().map(|e| {
            let (line, column) = crate::engine::formats::test_file::line_column(
                text,
                e.span().map_or(0, |s| s.start),
            );
            (line, column, e.message().trim_end().replace('\n', ": "))
        })
    };
    error
        .map(|(line, column, message)| Diagnostic {
            rule: SYNTAX,
            severity: Severity::Error,
            line,
            column,
            message,
        })
        .into_iter()
        .collect()
}

/// The gutter mark of `line` (1-based): `✗` for an error, `!` for a warning (the worst of the
/// line's findings).
pub fn gutter_mark(app: &App, line: usize, theme: &Theme) -> Option<Span<'static>> {
    let worst = app
        .lint
        .diagnostics
        .iter()
        .filter(|d| d.line == line)
        .map(|d| d.severity)
        .reduce(|a, b| if a == Severity::Error { a } else { b })?;
    Some(match worst {
        Severity::Error => Span::styled("✗", theme.error.add_modifier(Modifier::BOLD)),
        Severity::Warning => Span::styled("!", theme.warning.add_modifier(Modifier::BOLD)),
    })
}

/// The Warnings tab's lint entries: `[lint rule] line N:COL: message`, then the fix.
pub fn warning_lines(app: &App, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for d in &app.lint.diagnostics {
        out.push(Line::from(vec![
            Span::styled(
                format!("[lint {} {}] ", d.severity.name(), d.rule),
                match d.severity {
                    Severity::Error => theme.error,
                    Severity::Warning => theme.warning,
                },
            ),
            Span::raw(format!(
                "line {}:{}: {}",
                d.line,
                d.column,
                display_safe(&d.message)
            )),
        ]));
        out.push(Line::from(format!("  fix: {}", display_safe(d.fix()))));
    }
    out
}
