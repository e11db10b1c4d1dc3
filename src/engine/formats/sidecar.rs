//! A script's sidecar, SCRIPT.json: its KEYS, ARGV, seed keyspace, expected reply and description.

use super::FormatError;
use crate::engine::input::{self, read_bounded_text};
use crate::engine::keyspace::KeyspaceJsonError;
use std::path::{Path, PathBuf};

/// A sample's sidecar: keys, argv, seed keyspace, expected reply, description.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct Sidecar {
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub keys: Vec<String>,
    #[serde(default)]
    pub argv: Vec<String>,
    #[serde(default)]
    pub keyspace: Option<serde_json::Value>,
    #[serde(default)]
    pub expected: Option<serde_json::Value>,
    /// A function library's function to call (the workbench's form picks it).
    #[serde(default)]
    pub function: Option<String>,
    /// The workbench's breakpoints on the script (the CLI does not use them).
    #[serde(default)]
    pub breakpoints: Vec<SidecarBreakpoint>,
    /// The workbench's debugger watches (Lua expressions).
    #[serde(default)]
    pub watches: Vec<String>,
    /// The workbench's run clock: how far ahead of the seed's time runs start (ms).
    #[serde(default)]
    pub clock_offset_ms: i64,
    /// The workbench's keep state: each run starts from the last run's keyspace.
    #[serde(default)]
    pub keep_state: bool,
}

/// A breakpoint as a sidecar keeps it: its line, and when it stops.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct SidecarBreakpoint {
    pub line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_count: Option<u64>,
}

pub fn sidecar_path(script: &Path) -> PathBuf {
    script.with_extension("json")
}

pub fn read_sidecar(path: &Path) -> Result<Sidecar, FormatError> {
    read_sidecar_text(path).map(|(car, _)| car)
}

/// The sidecar and the file's text (to place errors in its seed keyspace).
pub fn read_sidecar_text(path: &Path) -> Result<(Sidecar, String), FormatError> {
    let text = read_bounded_text(path, &input::KEYSPACE_JSON)
        .map_err(|e| FormatError::new(format!("sidecar: {e}")))?;
    // The seed inside counts against the budget while it is parsed; syntax errors are left to
    // the sidecar's own parse below, which names them the same way.
    if let Err(e @ KeyspaceJsonError::OverBudget { .. }) =
        crate::engine::keyspace::json::json_within_budget(&text)
    {
        return Err(FormatError::new(format!("{}: {e}", path.display())));
    }
    let car = serde_json::from_str(&text).map_err(|e| {
        FormatError::new(format!(
            "{}:{}:{}: malformed sidecar: {}",
            path.display(),
            e.line(),
            e.column(),
            e
        ))
    })?;
    Ok((car, text))
}
