//! The files a user writes, read in one place for the engine and both front ends (the CLI and the
//! workbench): a script's sidecar (SCRIPT.json), seed keyspace JSON, test files (NAME.test.toml) and
//! the workbench's config.toml. Errors name the file, and the line and column where the text says it.
//! It sits inside the engine because the engine reads some of them itself (a lesson's checks are a
//! test file); it names no front end, and the front ends only show its errors.

/// The workbench's `config.toml`.
pub mod config;
mod seed;
mod sidecar;
/// `NAME.test.toml`: the cases of `evalbench test`, the workbench's Tests tab and a lesson's checks.
pub mod test_file;

pub use seed::{load_keyspace, load_sidecar_keyspace, locate_member};
pub use sidecar::{read_sidecar, read_sidecar_text, sidecar_path, Sidecar};

/// A file that cannot be used, said as `FILE:LINE:COLUMN: what is wrong` (or `FILE: ...` when no
/// place applies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub message: String,
}

impl FormatError {
    pub fn new(message: impl Into<String>) -> FormatError {
        FormatError {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FormatError {}
