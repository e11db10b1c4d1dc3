//! The keyspace diff of an export: keys the run added, changed (value or TTL) or removed, each with
//! its value before and after as keyspace JSON (the `--keyspace` format), escaped for display.

use crate::engine::display::{display_bytes, display_safe};
use crate::engine::keyspace::{keyspace_to_json, Db, Entry};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyChange {
    Added,
    Changed,
    Removed,
}

impl KeyChange {
    pub fn name(self) -> &'static str {
        match self {
            KeyChange::Added => "added",
            KeyChange::Changed => "changed",
            KeyChange::Removed => "removed",
        }
    }
}

/// One key the run changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyDiff {
    pub key: String,
    pub change: KeyChange,
    /// `{"type":...,"value":...,"ttl_ms":...}` before the run (None when added).
    pub before: Option<String>,
    /// The same after the run (None when removed).
    pub after: Option<String>,
}

/// Keys that differ between `before` and `after`, in byte order of their names; TTLs are shown
/// relative to `now_ms` for both, so an untouched key with a TTL is not a change.
pub fn keyspace_diff(before: &Db, after: &Db, now_ms: i64) -> Vec<KeyDiff> {
    let mut keys = before.sorted_keys(now_ms);
    keys.extend(after.sorted_keys(now_ms));
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .filter_map(|key| {
            let (b, a) = (before.get(&key, now_ms), after.get(&key, now_ms));
            let change = match (b, a) {
                (None, Some(_)) => KeyChange::Added,
                (Some(_), None) => KeyChange::Removed,
                (Some(b), Some(a)) if b != a => KeyChange::Changed,
                _ => return None,
            };
            Some(KeyDiff {
                key: display_bytes(&key).into_owned(),
                change,
                before: b.map(|e| entry_json(&key, e, now_ms)),
                after: a.map(|e| entry_json(&key, e, now_ms)),
            })
        })
        .collect()
}

/// One entry as compact keyspace JSON (JSON escapes C0; C1 and bidi are escaped for display).
/// A value larger than an export shows is described, not copied: its JSON would take several
/// times its size to build and escape.
fn entry_json(key: &[u8], entry: &Entry, now_ms: i64) -> String {
    let size = entry.value.approx_bytes();
    if size > crate::engine::budget::EXPORT_VALUE_BYTES {
        return format!(
            "(a {} of {} bytes: not shown; an export shows values up to {} bytes)",
            entry.value.type_name(),
            crate::engine::reply::grouped(size),
            crate::engine::reply::grouped(crate::engine::budget::EXPORT_VALUE_BYTES)
        );
    }
    let mut one = Db::new();
    one.insert_entry(key.to_vec(), entry.clone());
    let json = keyspace_to_json(&one, now_ms);
    let spec = json
        .as_object()
        .and_then(|o| o.values().next())
        .cloned()
        .unwrap_or_default();
    display_safe(&spec.to_string()).into_owned()
}
