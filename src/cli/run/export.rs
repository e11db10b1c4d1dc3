//! `evalbench run --export FILE`: write the run as Markdown or HTML (engine/export).

pub use crate::cli::common::export::{check_target, export_format};
use crate::cli::common::CliError;
use crate::engine::export::{Format, RunExport};
use std::path::Path;

/// Write the export to `file` atomically (`engine::output`). An existing file is kept (the run's
/// report is not worth more than the file it would replace) unless `overwrite`; the check and the
/// creation are one step. A symlinked FILE is written through; a FIFO or device is refused.
pub fn write_export(
    file: &Path,
    format: Format,
    run: &RunExport,
    overwrite: bool,
) -> Result<(), CliError> {
    crate::cli::common::export::write_text(file, &format.render(run), overwrite)
}
