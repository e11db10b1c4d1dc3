//! The workbench's side of `evalbench test`: save the last run as a new case of the
//! script's test file (one key), run the file's cases against the editor's text off the UI thread
//! and list them in the Tests tab; Enter on a case loads its KEYS, ARGV, seed and clock into the
//! form. The engine does the work (`engine::testing`); this is the front end.

use super::app::{App, Effect, Focus, ListState, PromptPurpose, Tab};
use super::inputs::InputsState;
use super::theme::Theme;
use crate::engine::display::display_safe;
use crate::engine::formats::test_file::test_file_for;
use crate::engine::input::{self, read_bounded_text};
use crate::engine::keyspace::{keyspace_from_json_value, keyspace_to_json};
use crate::engine::testing::new_case::{append_case, suggested_name, NewCase};
use crate::engine::testing::{self, parse_test_file, CaseResult, ScriptCoverage, TestFile};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};

/// The Tests tab's state.
#[derive(Default)]
pub struct TestsPane {
    /// The test file last run (the tab shows from then on).
    pub path: Option<PathBuf>,
    pub file: Option<TestFile>,
    pub results: Vec<CaseResult>,
    /// Why the file could not run (its place in the file when it does not parse).
    pub error: Option<String>,
    pub list: ListState,
    /// The results (and the lines the cases ran) on their way from the thread running the cases.
    pending: Option<Receiver<TestsDone>>,
    /// Select this case when the results come (the case just saved).
    select_name: Option<String>,
}

impl TestsPane {
    /// The tab shows once a test file was run.
    pub fn shown(&self) -> bool {
        self.path.is_some()
    }

    pub fn running(&self) -> bool {
        self.pending.is_some()
    }
}

/// What a test run gives back: each case's result, and the lines the cases ran (counted as
/// `evalbench test --coverage` counts them; none for a library or a script that does not compile).
pub struct TestsDone {
    results: Vec<CaseResult>,
    coverage: Option<ScriptCoverage>,
    /// The SHA1 of the text the cases ran on (the gutter counts are of that text only).
    sha: String,
}

/// Run a test file's cases: carried out on a thread of its own (each case has its own sandbox),
/// so a slow case never stops the editor.
#[derive(Debug)]
pub struct TestsJob {
    script: Vec<u8>,
    sha: String,
    file: TestFile,
    results: Sender<TestsDone>,
}

impl TestsJob {
    pub fn run(self) {
        let function = self.file.function.as_deref();
        let mut coverage = match function {
            None => ScriptCoverage::new(&self.script).ok(),
            Some(_) => None,
        };
        let results = self
            .file
            .cases
            .iter()
            .map(|case| {
                testing::run_case_counting(&self.script, function, case, None, coverage.as_mut())
            })
            .collect();
        let _ = self.results.send(TestsDone {
            results,
            coverage,
            sha: self.sha,
        });
    }

    /// Start it on its own thread (the event loop's way; the test harness calls `run`).
    pub fn spawn(self) {
        let spawned = std::thread::Builder::new()
            .name("evalbench-tests".into())
            .spawn(move || self.run());
        // No thread: the receiver sees the sender dropped and says the run ended without results.
        drop(spawned);
    }
}

/// The actions of this file.
pub fn handles(action: super::action::Action) -> bool {
    use super::action::Action;
    matches!(
        action,
        Action::SaveCase | Action::RunTests | Action::TabTests
    )
}

pub fn update(app: &mut App, action: super::action::Action) -> Vec<Effect> {
    use super::action::Action;
    match action {
        Action::SaveCase => ask_case_name(app),
        Action::RunTests => return run_tests(app, None),
        Action::TabTests if app.tests.shown() => {
            app.tab = Tab::Tests;
            app.focus = Focus::Panes;
        }
        Action::TabTests => {
            app.status = "no test results yet: Ctrl-T runs the script's test file".into()
        }
        _ => {}
    }
    Vec::new()
}

/// The test file beside the script in the editor (`x.lua` → `x.test.toml`).
fn test_path(app: &App) -> Result<PathBuf, String> {
    match &app.editor.path {
        Some(path) if !path.as_os_str().is_empty() => Ok(test_file_for(path)),
        _ => Err("save the script first (Ctrl-S): its test file goes beside it".into()),
    }
}

/// "Save as case": check there is a run to save, then ask its name (prefilled).
fn ask_case_name(app: &mut App) {
    let path = match test_path(app) {
        Ok(p) => p,
        Err(e) => {
            app.status = e;
            return;
        }
    };
    let Some(run) = &app.last_run else {
        app.status =
            "run the script first (F5): a case saves the run's KEYS, ARGV, seed and result".into();
        return;
    };
    if run.live || run.question.is_some() {
        app.status =
            "a case runs in the sandbox: save a sandbox run (F7 switches to the sandbox)".into();
        return;
    }
    if app.run_is_stale() {
        app.status =
            "the script changed since the last run: run it again (F5), then save the case".into();
        return;
    }
    let existing = read_test_text(&path).unwrap_or_default();
    app.open_prompt(
        PromptPurpose::SaveCase,
        format!(
            "Save the last run as a case of {}: its name",
            path.display()
        ),
        suggested_name(&existing),
    );
}

/// The prompt's answer: append the case and run the file (which checks it passes).
pub fn answer_prompt(app: &mut App, name: &str) -> Vec<Effect> {
    let path = match test_path(app) {
        Ok(p) => p,
        Err(e) => {
            app.status = e;
            return Vec::new();
        }
    };
    let Some(run) = &app.last_run else {
        return Vec::new();
    };
    let utf8 = |items: &[Vec<u8>], what: &str| -> Result<Vec<String>, String> {
        items
            .iter()
            .map(|b| {
                String::from_utf8(b.clone())
                    .map_err(|_| format!("not saved: a {what} value is not UTF-8 text, which a test file cannot hold"))
            })
            .collect()
    };
    let (keys, argv) = match (
        utf8(&run.request.keys, "KEYS"),
        utf8(&run.request.argv, "ARGV"),
    ) {
        (Ok(k), Ok(a)) => (k, a),
        (Err(e), _) | (_, Err(e)) => {
            app.status = e;
            return Vec::new();
        }
    };
    // The manual run clock does not move during a run: the run started at `now_ms`.
    let case = NewCase {
        name: name.trim().to_string(),
        keys,
        argv,
        protocol: run.request.protocol,
        read_only: run.request.read_only,
        clock_ms: run.now_ms,
        seed: keyspace_to_json(&run.before, run.now_ms),
        observed: testing::observe(&run.report, run.request.protocol, &run.after, run.now_ms),
    };
    let existing = if path.exists() {
        match read_test_text(&path) {
            Ok(text) => text,
            Err(e) => {
                app.status = format!("not saved: {e}");
                return Vec::new();
            }
        }
    } else {
        String::new()
    };
    let text = match append_case(&existing, &case) {
        Ok(t) => t,
        Err(e) => {
            app.status = format!("not saved: {e}");
            return Vec::new();
        }
    };
    if let Err(e) = write_replacing(&path, &text) {
        app.status = format!("not saved: {e}");
        return Vec::new();
    }
    let effects = run_tests(app, Some(case.name.clone()));
    app.status = format!(
        "saved case {:?} to {}; running its tests",
        case.name,
        path.display()
    );
    effects
}

fn read_test_text(path: &Path) -> Result<String, String> {
    read_bounded_text(path, &input::SETTINGS).map_err(|e| e.to_string())
}

/// Atomically (`engine::output`): an interruption never leaves half a test file, a symlinked
/// test file stays a link and the file keeps its mode.
fn write_replacing(path: &Path, text: &str) -> Result<(), crate::engine::output::OutputError> {
    crate::engine::output::write_file(path, text.as_bytes())
}

/// Run the test file's cases against the editor's text (saved or not), off the UI thread.
fn run_tests(app: &mut App, select_name: Option<String>) -> Vec<Effect> {
    let path = match test_path(app) {
        Ok(p) => p,
        Err(e) => {
            app.status = e;
            return Vec::new();
        }
    };
    if app.tests.running() {
        app.status = "the tests are running already".into();
        return Vec::new();
    }
    app.tests.path = Some(path.clone());
    app.tests.results.clear();
    app.tests.file = None;
    app.tests.error = None;
    app.tests.list = ListState::default();
    app.tab = Tab::Tests;
    app.focus = Focus::Panes;
    let parsed = if path.exists() {
        read_test_text(&path)
            .and_then(|text| parse_test_file(&path, &text).map_err(|e| e.to_string()))
    } else {
        Err(format!(
            "{} does not exist: run the script and save the run as a case (Alt-T)",
            path.display()
        ))
    };
    let file = match parsed {
        Ok(f) => f,
        Err(e) => {
            app.status = "the test file could not run (Tests tab)".into();
            app.tests.error = Some(e);
            return Vec::new();
        }
    };
    let (sender, receiver) = channel();
    app.tests.pending = Some(receiver);
    app.tests.select_name = select_name;
    app.tests.file = Some(file.clone());
    app.status = format!(
        "running {} case(s) of {}…",
        file.cases.len(),
        path.display()
    );
    vec![Effect::RunTests(TestsJob {
        script: app.editor.bytes(),
        sha: app.editor.sha1(),
        file,
        results: sender,
    })]
}

/// The results, when they have come (called by `App::housekeeping`).
pub fn housekeeping(app: &mut App) -> Vec<Effect> {
    let Some(receiver) = &app.tests.pending else {
        return Vec::new();
    };
    match receiver.try_recv() {
        Ok(TestsDone {
            results,
            coverage,
            sha,
        }) => {
            app.tests.pending = None;
            // The lines the cases ran, in the editor's gutter (the debugger's count column).
            if let Some(coverage) = coverage {
                app.debugger.coverage = Some(super::debugger::Coverage {
                    sha,
                    counts: coverage.counts().clone(),
                    script: coverage.session().clone(),
                });
            }
            let failed = results.iter().filter(|r| !r.passed()).count();
            app.status = format!("tests: {} passed, {failed} failed", results.len() - failed);
            let select = app.tests.select_name.take();
            let at = select
                .and_then(|name| results.iter().position(|r| r.name == name))
                .or_else(|| results.iter().position(|r| !r.passed()))
                .unwrap_or(0);
            app.tests.list.selected = at;
            app.tests.results = results;
        }
        Err(TryRecvError::Empty) => {}
        Err(TryRecvError::Disconnected) => {
            app.tests.pending = None;
            app.tests.error = Some("the test run ended without results".into());
        }
    }
    Vec::new()
}

pub fn scroll(app: &mut App, delta: isize) {
    let len = app.tests.results.len();
    app.tests.list.move_by(delta, len);
}

/// Enter on a case: its KEYS, ARGV, seed and clock go into the form, to run and debug it.
pub fn select(app: &mut App) -> Vec<Effect> {
    if app.debugger.session.is_some() {
        app.status = "stop debugging first (Shift-F5): the session runs the form's inputs".into();
        return Vec::new();
    }
    let (Some(file), Some(result)) = (
        app.tests.file.as_ref(),
        app.tests.results.get(app.tests.list.selected),
    ) else {
        return Vec::new();
    };
    let Some(case) = file.cases.iter().find(|c| c.name == result.name) else {
        return Vec::new();
    };
    // The first failing step (or the first): its inputs.
    let index = result
        .failures
        .iter()
        .map(|f| f.step)
        .find(|&s| s > 0)
        .map_or(0, |s| s - 1);
    let Some(step) = case.steps.get(index) else {
        return Vec::new();
    };
    let seed = match keyspace_from_json_value(&case.seed, case.clock_ms) {
        Ok(db) => db,
        Err(e) => {
            app.status = format!("the case's seed is not valid: {e}");
            return Vec::new();
        }
    };
    let inputs = InputsState::from_lists(&step.keys, &step.argv);
    let (name, clock_ms, steps_len) = (case.name.clone(), case.clock_ms, case.steps.len());
    super::buffer::seed_edit(app, format!("loaded the case '{name}'"));
    app.inputs = inputs;
    app.seed = seed;
    app.seed_now_ms = clock_ms;
    app.now_ms = clock_ms;
    app.clock_offset_ms = 0;
    app.last_run = None;
    app.step = None;
    let steps = if steps_len > 1 {
        format!(
            " (step {} of {steps_len}: the earlier steps are not run)",
            index + 1,
        )
    } else {
        String::new()
    };
    app.status = format!(
        "loaded case {name:?} into the form: KEYS, ARGV, seed and clock{steps}; F5 runs it"
    );
    Vec::new()
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme, focused: bool) {
    let pane = &app.tests;
    let name = pane
        .path
        .as_ref()
        .and_then(|p| p.file_name())
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    let failed = pane.results.iter().filter(|r| !r.passed()).count();
    let title = if pane.running() {
        format!("Tests {name}: running…")
    } else if pane.error.is_some() {
        format!("Tests {name}: could not run")
    } else {
        format!(
            "Tests {name}: {} passed, {failed} failed",
            pane.results.len() - failed
        )
    };
    let title = display_safe(&title).into_owned();
    if let Some(error) = &pane.error {
        frame.render_widget(
            Paragraph::new(display_safe(error).into_owned())
                .wrap(Wrap { trim: false })
                .block(super::ui::block(&title, focused, theme)),
            area,
        );
        return;
    }
    // The selected case's differences under the list; on a small terminal what the list leaves
    // (a short list needs few rows), nothing when under 3 rows.
    let list_needs = (pane.results.len() as u16 + 2).max(3);
    let detail_height = if area.height >= 14 {
        7
    } else {
        area.height.saturating_sub(list_needs).min(7)
    };
    let detail_height = if detail_height < 3 { 0 } else { detail_height };
    let [list_area, detail_area] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(detail_height)]).areas(area);
    let inner_rows = list_area.height.saturating_sub(2) as usize;
    let selected = pane.list.selected.min(pane.results.len().saturating_sub(1));
    let first = selected.saturating_sub(inner_rows.saturating_sub(1));
    let lines: Vec<Line> = pane
        .results
        .iter()
        .enumerate()
        .skip(first)
        .take(inner_rows.max(1))
        .map(|(i, r)| {
            let (mark, style) = if r.passed() {
                ("ok  ", theme.text)
            } else {
                ("FAIL", theme.error)
            };
            let style = if i == selected && !pane.results.is_empty() {
                theme.selected
            } else {
                style
            };
            Line::from(Span::styled(
                format!("{mark}  {}", display_safe(&r.name)),
                style,
            ))
        })
        .collect();
    let mut lines = lines;
    // No room for the differences pane: the selected case's first difference under the list.
    if detail_height == 0 && lines.len() < inner_rows {
        if let Some(f) = pane.results.get(selected).and_then(|r| r.failures.first()) {
            lines.push(Line::from(Span::styled(
                display_safe(&format!("  line {}: {}", f.line, f.message)).into_owned(),
                theme.error,
            )));
        }
    }
    frame.render_widget(
        Paragraph::new(lines).block(super::ui::block(&title, focused, theme)),
        list_area,
    );
    if detail_height == 0 {
        return;
    }
    let detail: Vec<Line> = match pane.results.get(selected) {
        None => vec![Line::from("no cases")],
        Some(r) if r.passed() => vec![
            Line::from(format!(
                "passed ({} run{})",
                r.runs,
                if r.runs == 1 { "" } else { "s" }
            )),
            Line::from("Enter loads its KEYS, ARGV and seed into the form"),
        ],
        Some(r) => {
            let mut lines: Vec<Line> = r
                .failures
                .iter()
                .map(|f| {
                    let step = if f.step > 0 {
                        format!("step {}: ", f.step)
                    } else {
                        String::new()
                    };
                    Line::from(format!(
                        "line {}: {step}{}",
                        f.line,
                        display_safe(&f.message)
                    ))
                })
                .collect();
            lines.push(Line::from(Span::styled(
                "Enter loads its KEYS, ARGV and seed into the form",
                theme.header,
            )));
            lines
        }
    };
    let detail_title = pane
        .results
        .get(selected)
        .map_or("Case".to_string(), |r| format!("Case at line {}", r.line));
    frame.render_widget(
        Paragraph::new(detail)
            .wrap(Wrap { trim: false })
            .block(super::ui::block(&detail_title, false, theme)),
        detail_area,
    );
}

/// The selected case for the value inspector: its differences, then per step what was expected
/// (reply, error, keys) and what came (reply, error, keyspace).
pub fn inspect_selected(app: &App) -> Result<super::value_view::ValueView, String> {
    use super::value_view::{Part, ValueView};
    use serde_json::{Map, Value as Json};
    let pane = &app.tests;
    let selected = pane.list.selected.min(pane.results.len().saturating_sub(1));
    let result = pane
        .results
        .get(selected)
        .ok_or("no test results yet: Ctrl-T runs the script's test file")?;
    let case = pane
        .file
        .as_ref()
        .and_then(|f| f.cases.iter().find(|c| c.name == result.name));
    let mut parts = Vec::new();
    if !result.failures.is_empty() {
        let text: Vec<String> = result
            .failures
            .iter()
            .map(|f| format!("line {}: {}", f.line, f.message))
            .collect();
        parts.push(Part::text("differences", text.join("\n")));
    }
    let steps = case.map_or(0, |c| c.steps.len()).max(result.observed.len());
    for i in 0..steps {
        let step = if steps > 1 {
            format!("step {}: ", i + 1)
        } else {
            String::new()
        };
        if let Some(expect) = case.and_then(|c| c.steps.get(i)).map(|s| &s.expect) {
            let mut expected = Map::new();
            if let Some(reply) = &expect.reply {
                expected.insert("reply".into(), reply.clone());
            }
            if let Some(error) = &expect.error {
                expected.insert("error".into(), Json::String(error.clone()));
            }
            if let Some(ks) = &expect.keyspace {
                let keys: Map<String, Json> = ks
                    .keys
                    .iter()
                    .map(|(k, v, _)| (k.clone(), v.clone()))
                    .collect();
                expected.insert("keys".into(), Json::Object(keys));
            }
            if !expected.is_empty() {
                parts.push(Part::json(
                    &format!("{step}expected"),
                    Json::Object(expected),
                ));
            }
        }
        if let Some(got) = result.observed.get(i) {
            let mut map = Map::new();
            map.insert("reply".into(), got.reply.clone());
            if let Some(error) = &got.error {
                map.insert("error".into(), Json::String(error.clone()));
            }
            map.insert("keyspace".into(), got.keyspace.clone());
            parts.push(Part::json(&format!("{step}got"), Json::Object(map)));
        }
    }
    if parts.is_empty() {
        return Err(format!("case {:?} has nothing to inspect", result.name));
    }
    Ok(ValueView::new(format!("case {:?}", result.name), parts))
}
