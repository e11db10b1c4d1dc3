//! `evalbench run --export FILE`: write the run as Markdown or HTML (engine/export).

use crate::cli::CliError;
use crate::engine::export::{Format, RunExport};
use std::io::Write;
use std::path::Path;

/// The format `--export-format` names, else the one FILE's extension asks for.
pub fn export_format(file: &Path, named: Option<&str>) -> Result<Format, CliError> {
    match named {
        Some(name) => Format::by_name(name).ok_or_else(|| {
            CliError::input(format!(
                "--export-format {name:?}: unknown format (use one of: {})",
                Format::NAMES
            ))
        }),
        None => Format::from_path(file).ok_or_else(|| {
            CliError::input(format!(
                "--export {}: the format is taken from the extension (.md or .html); name the file so, or add --export-format md|html",
                file.display()
            ))
        }),
    }
}

/// Refuse an existing FILE before the script runs (without --overwrite); `write_export` checks
/// again as it creates the file, in case one appeared meanwhile.
pub fn check_target(file: &Path, overwrite: bool) -> Result<(), CliError> {
    if !overwrite && file.exists() {
        return Err(exists_error(file));
    }
    Ok(())
}

fn exists_error(file: &Path) -> CliError {
    let shown = crate::engine::display::display_safe(&file.display().to_string()).into_owned();
    CliError::input(format!(
        "--export {shown}: the file exists; choose another name, or add --overwrite to replace it"
    ))
}

/// Write the export to `file`. An existing file is kept (the run's report is not worth more than
/// the file it would replace) unless `overwrite`; the check and the creation are one step.
pub fn write_export(
    file: &Path,
    format: Format,
    run: &RunExport,
    overwrite: bool,
) -> Result<(), CliError> {
    let text = format.render(run);
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if overwrite {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let shown = crate::engine::display::display_safe(&file.display().to_string()).into_owned();
    let mut f = options.open(file).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            exists_error(file)
        } else {
            CliError::input(format!("--export {shown}: cannot create the file: {e}"))
        }
    })?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.flush())
        .map_err(|e| CliError::input(format!("--export {shown}: cannot write the file: {e}")))
}
