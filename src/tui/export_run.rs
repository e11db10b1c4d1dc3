//! Export to a file (engine/export) what is shown: on the Race tab the race lab, on the Debug tab
//! the debug session's stops and variables, else the last run. Asks for the path, prefilled with
//! a free name after the script (`stock_decrement.html` beside it, `-race`, `-debug`, then `-2`,
//! `-3`... when taken). The extension picks Markdown (.md) or HTML (.html); an existing file is
//! never replaced.

use super::app::{App, PromptPurpose, Tab};
use super::files::expand_home;
use crate::engine::export::{Format, RunExport};
use std::path::{Path, PathBuf};

/// What the export key exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Subject {
    Run,
    Race,
    Debug,
}

/// What is shown: the Race tab's lab, the Debug tab's session, else the last run.
fn subject(app: &App) -> Subject {
    match app.tab {
        Tab::Race if app.race.is_some() => Subject::Race,
        Tab::Debug
            if app
                .debugger
                .recording
                .as_ref()
                .is_some_and(|r| !r.stops.is_empty()) =>
        {
            Subject::Debug
        }
        _ => Subject::Run,
    }
}

/// The export key: the path prompt, or a status line saying why not.
pub fn open_prompt(app: &mut App) {
    let subject = subject(app);
    if subject == Subject::Run && app.last_run.is_none() {
        app.status = "nothing to export yet: run the script first (F5)".into();
        return;
    }
    let (what, suffix) = match subject {
        Subject::Run => ("the last run", ""),
        Subject::Race => ("the race lab", "-race"),
        Subject::Debug => ("the debug session (its stops and variables)", "-debug"),
    };
    let suggested = free_name_with(app.editor.path.as_deref(), suffix);
    app.open_prompt(
        PromptPurpose::ExportRun,
        format!("Export {what} to (.html page or .md)"),
        suggested.display().to_string(),
    );
}

/// `NAME.html` beside the script (`run.html` in the current directory for an unnamed script),
/// with `-2`, `-3`... before the extension while the name is taken.
pub fn free_name(script: Option<&Path>) -> PathBuf {
    free_name_with(script, "")
}

/// `free_name` with `suffix` after the script's name (`stock-race.html`).
fn free_name_with(script: Option<&Path>, suffix: &str) -> PathBuf {
    let (dir, stem) = match script {
        Some(p) => (
            p.parent().map(Path::to_path_buf).unwrap_or_default(),
            p.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "run".into()),
        ),
        None => (PathBuf::new(), "run".to_string()),
    };
    let stem = format!("{stem}{suffix}");
    let mut n = 1;
    loop {
        let name = if n == 1 {
            format!("{stem}.html")
        } else {
            format!("{stem}-{n}.html")
        };
        let path = dir.join(name);
        if !path.exists() || n >= 1000 {
            return path;
        }
        n += 1;
    }
}

/// The prompt's answer: write the last run there.
pub fn answer(app: &mut App, input: &str) {
    let what = match subject(app) {
        Subject::Run => "run",
        Subject::Race => "race lab",
        Subject::Debug => "debug session",
    };
    app.status = match export(app, input) {
        Ok(path) => format!("{what} exported to {}", path.display()),
        Err(e) => e,
    };
}

fn export(app: &App, input: &str) -> Result<PathBuf, String> {
    if input.is_empty() {
        return Err("not exported: no file name given".into());
    }
    let path = expand_home(Path::new(input));
    let format = Format::from_path(&path).ok_or_else(|| {
        format!(
            "not exported: {} ends neither in .html nor in .md",
            path.display()
        )
    })?;
    let title = app
        .editor
        .path
        .as_deref()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "untitled script".into());
    let text = match subject(app) {
        Subject::Run => run_text(app, format, &title)?,
        Subject::Race => {
            let view = app.race.as_ref().ok_or("no race lab to export")?;
            crate::engine::export::race::render(format, &view.report, &view.lab.logic)
        }
        Subject::Debug => {
            let r = app
                .debugger
                .recording
                .as_ref()
                .ok_or("no debug session to export")?;
            let end = r
                .ended
                .then(|| app.last_run.as_ref().map(|run| run.report.reply.to_cli()))
                .flatten();
            crate::engine::export::session::render(
                format,
                &crate::engine::export::session::SessionExport {
                    title: &title,
                    script: &r.script,
                    keys: &r.keys,
                    argv: &r.argv,
                    stops: &r.stops,
                    end,
                },
            )
        }
    };
    write(&path, &text)?;
    Ok(path)
}

/// The last run as a document.
fn run_text(app: &App, format: Format, title: &str) -> Result<String, String> {
    let run = app.last_run.as_ref().ok_or("nothing to export yet")?;
    let export = RunExport {
        title,
        script: &run.request.script,
        keys: &run.request.keys,
        argv: &run.request.argv,
        report: &run.report,
        backend: if run.live { "live server" } else { "sandbox" },
        // A live run's keyspace changes are the server's: not recorded.
        keyspace: (!run.live).then_some((&run.before, &run.after)),
        now_ms: run.now_ms,
    };
    Ok(format.render(&export))
}

/// Write `text` to a new file at `path` (never over one).
fn write(path: &Path, text: &str) -> Result<(), String> {
    let options = crate::engine::output::Options {
        mode: None,
        create_new: true,
    };
    crate::engine::output::write_with(path, options, |w| w.write_all(text.as_bytes())).map_err(
        |e| match e {
            crate::engine::output::OutputError::Exists { .. } => format!(
                "not exported: {} exists (choose another name)",
                path.display()
            ),
            e => format!("not exported: {e}"),
        },
    )?;
    Ok(())
}
