//! The files a user writes, read in one place for both front ends (the CLI and the workbench): a
//! script's sidecar (SCRIPT.json) and seed keyspace JSON. Errors name the file, and the line and
//! column where the JSON says it. The engine runs what these describe and never reads a user's
//! file format itself; the front ends only show the errors.

mod seed;
mod sidecar;

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
