//! `--export FILE` of `run`, `race` and `debug`: the format from the name, the target checked
//! before the work, the document written atomically (engine/output).

use crate::cli::common::CliError;
use crate::engine::export::Format;
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

/// Refuse an existing FILE before the script runs (without --overwrite), and a FIFO, device or
/// directory always (opening one to write would block or fail after the run); `write_export`
/// checks again as it creates the file, in case one appeared meanwhile.
pub fn check_target(file: &Path, overwrite: bool) -> Result<(), CliError> {
    if !overwrite && std::fs::symlink_metadata(file).is_ok() {
        return Err(exists_error(file));
    }
    crate::engine::output::check_writable(file)
        .map(|_| ())
        .map_err(|e| output_error(file, e))
}

fn exists_error(file: &Path) -> CliError {
    let shown = crate::engine::display::display_safe(&file.display().to_string()).into_owned();
    CliError::input(format!(
        "--export {shown}: the file exists; choose another name, or add --overwrite to replace it"
    ))
}

fn output_error(file: &Path, e: crate::engine::output::OutputError) -> CliError {
    use crate::engine::output::OutputError;
    match e {
        OutputError::Exists { .. } => exists_error(file),
        e => CliError::input(format!(
            "--export: {}",
            crate::engine::display::display_safe(&e.to_string())
        )),
    }
}

/// Write `text` to `file` atomically: an existing file is kept unless `overwrite` (the check and
/// the creation are one step); a symlinked FILE is written through, a FIFO or device refused.
pub fn write_text(file: &Path, text: &str, overwrite: bool) -> Result<(), CliError> {
    let options = crate::engine::output::Options {
        mode: None,
        create_new: !overwrite,
    };
    crate::engine::output::write_with(file, options, |w| w.write_all(text.as_bytes()))
        .map_err(|e| output_error(file, e))
}
