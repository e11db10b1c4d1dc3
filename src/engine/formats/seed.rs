//! Seed keyspace JSON (`--keyspace FILE`, a sidecar's "keyspace"): errors name the file, line and
//! column.

use super::FormatError;
use crate::engine::keyspace::{keyspace_from_json, Db, KeyspaceJsonError};
use std::path::Path;

/// Where the member at `path` (object keys from the root) is written in the JSON `text`: the line and
/// column (1-based) of its key. A key with the same name elsewhere (in a sidecar's "keys" list, in a
/// nested value) does not count.
pub fn locate_member(text: &str, path: &[&str]) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    // One entry per open container: (is an object, lies on `path`).
    let mut stack: Vec<(bool, bool)> = Vec::new();
    let mut expect_key = false;
    // Whether the value about to start lies on `path` (the root does).
    let mut next_on_path = true;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                let end = (i + 1).min(bytes.len());
                if expect_key {
                    expect_key = false;
                    let depth = stack.len();
                    let parent_on_path = stack.last().is_some_and(|(_, on)| *on);
                    next_on_path = parent_on_path
                        && depth <= path.len()
                        && serde_json::from_str::<String>(text.get(start..end)?)
                            .ok()
                            .as_deref()
                            == Some(path[depth - 1]);
                    if next_on_path && depth == path.len() {
                        let before = &text[..start];
                        let line = before.matches('\n').count() + 1;
                        let column = start - before.rfind('\n').map_or(0, |p| p + 1) + 1;
                        return Some((line, column));
                    }
                }
                i = end;
                continue;
            }
            b'{' => {
                stack.push((true, next_on_path));
                expect_key = true;
                next_on_path = false;
            }
            b'[' => {
                stack.push((false, false));
                next_on_path = false;
            }
            b'}' | b']' => {
                stack.pop();
            }
            b',' => expect_key = stack.last().is_some_and(|(object, _)| *object),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Load a keyspace JSON file; errors say file, line and column.
pub fn load_keyspace(path: &Path, text: &str, now_ms: i64) -> Result<Db, FormatError> {
    keyspace_at(path, text, &[], text, now_ms)
}

/// Load the keyspace a sidecar holds (`keyspace` of `car_text`, the file as read): errors give the
/// line and column in the sidecar file.
pub fn load_sidecar_keyspace(
    car_path: &Path,
    car_text: &str,
    keyspace: &serde_json::Value,
    now_ms: i64,
) -> Result<Db, FormatError> {
    keyspace_at(
        car_path,
        car_text,
        &["keyspace"],
        &keyspace.to_string(),
        now_ms,
    )
}

/// Load the keyspace `json`, written at `at` (object keys) in the file `path` that reads `text`.
fn keyspace_at(
    path: &Path,
    text: &str,
    at: &[&str],
    json: &str,
    now_ms: i64,
) -> Result<Db, FormatError> {
    keyspace_from_json(json, now_ms).map_err(|e| match e {
        KeyspaceJsonError::Syntax {
            line,
            column,
            message,
        } => {
            // A sidecar's keyspace was parsed already: only its shape can be wrong, at the member.
            let (line, column) = if at.is_empty() {
                (line, column)
            } else {
                locate_member(text, at).unwrap_or((1, 1))
            };
            FormatError::new(format!(
                "{}:{line}:{column}: malformed keyspace JSON: {message}",
                path.display()
            ))
        }
        e @ KeyspaceJsonError::OverBudget { .. } => {
            FormatError::new(format!("{}: {e}", path.display()))
        }
        KeyspaceJsonError::Invalid { key, message } => {
            let mut member = at.to_vec();
            member.push(&key);
            let (line, column) = locate_member(text, &member).unwrap_or((1, 1));
            FormatError::new(format!(
                "{}:{line}:{column}: key {key:?}: {message} (see the keyspace format in README.md)",
                path.display()
            ))
        }
    })
}
