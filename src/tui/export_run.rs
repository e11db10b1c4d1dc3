//! Export the last run to a file (engine/export): asks for the path, prefilled with a free name
//! after the script (`stock_decrement.html` beside it, `-2`, `-3`... when taken). The extension
//! picks Markdown (.md) or HTML (.html); an existing file is never replaced.

use super::app::{App, PromptPurpose};
use super::files::expand_home;
use crate::engine::export::{Format, RunExport};
use std::path::{Path, PathBuf};

/// The export key: the path prompt, or a status line saying why not.
pub fn open_prompt(app: &mut App) {
    if app.last_run.is_none() {
        app.status = "nothing to export yet: run the script first (F5)".into();
        return;
    }
    let suggested = free_name(app.editor.path.as_deref());
    app.open_prompt(
        PromptPurpose::ExportRun,
        "Export the last run to (.html page or .md)",
        suggested.display().to_string(),
    );
}

/// `NAME.html` beside the script (`run.html` in the current directory for an unnamed script),
/// with `-2`, `-3`... before the extension while the name is taken.
pub fn free_name(script: Option<&Path>) -> PathBuf {
    let (dir, stem) = match script {
        Some(p) => (
            p.parent().map(Path::to_path_buf).unwrap_or_default(),
            p.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "run".into()),
        ),
        None => (PathBuf::new(), "run".to_string()),
    };
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
    app.status = match export(app, input) {
        Ok(path) => format!("run exported to {}", path.display()),
        Err(e) => e,
    };
}

fn export(app: &App, input: &str) -> Result<PathBuf, String> {
    if input.is_empty() {
        return Err("not exported: no file name given".into());
    }
    let run = app.last_run.as_ref().ok_or("nothing to export yet")?;
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
    let export = RunExport {
        title: &title,
        script: &run.request.script,
        keys: &run.request.keys,
        argv: &run.request.argv,
        report: &run.report,
        backend: if run.live { "live server" } else { "sandbox" },
        // A live run's keyspace changes are the server's: not recorded.
        keyspace: (!run.live).then_some((&run.before, &run.after)),
        now_ms: run.now_ms,
    };
    let text = format.render(&export);
    let options = crate::engine::output::Options {
        mode: None,
        create_new: true,
    };
    crate::engine::output::write_with(&path, options, |w| w.write_all(text.as_bytes())).map_err(
        |e| match e {
            crate::engine::output::OutputError::Exists { .. } => format!(
                "not exported: {} exists (choose another name)",
                path.display()
            ),
            e => format!("not exported: {e}"),
        },
    )?;
    Ok(path)
}
