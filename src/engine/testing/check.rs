//! Comparing a step's expectations with what its run gave: one message per difference, saying
//! what was expected and what came.

use super::{Expect, KeyspaceExpect, KeyspaceMatch, Observed, TtlExpect};
use crate::engine::commands::glob_match;
use crate::engine::keyspace::{keyspace_from_json_value, keyspace_to_json};
use crate::engine::report::json_line;
use crate::engine::Reply;
use serde_json::{Map, Value as Json};

/// A key's expected value in the form the keyspace JSON dump gives (`{"type", "value"}`, sets
/// sorted), so that `"k" = "v"` and `{ type = "string", value = "v" }` mean the same.
pub(crate) fn canonical_entry(key: &str, spec: &Json) -> Result<Json, String> {
    let mut one = Map::new();
    one.insert(key.to_string(), spec.clone());
    let db = keyspace_from_json_value(&Json::Object(one), 0).map_err(|e| e.to_string())?;
    let dumped = keyspace_to_json(&db, 0);
    let entry = dumped
        .as_object()
        .and_then(|o| o.values().next())
        .cloned()
        .unwrap_or(Json::Null);
    Ok(sorted_set(without_ttl(entry)))
}

fn without_ttl(mut entry: Json) -> Json {
    if let Some(o) = entry.as_object_mut() {
        o.remove("ttl_ms");
    }
    entry
}

/// Set members come in hash order: compare them sorted.
fn sorted_set(mut entry: Json) -> Json {
    if entry.get("type").and_then(Json::as_str) == Some("set") {
        if let Some(Json::Array(members)) = entry.get_mut("value") {
            members.sort_by_key(json_line);
        }
    }
    entry
}

pub(super) fn differences(
    expect: &Expect,
    observed: &Observed,
    reply: &Reply,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let got = describe_outcome(observed);
    outcome_differences(expect, observed, reply, &got, &mut out);
    let actual = observed.keyspace.as_object().cloned().unwrap_or_default();
    if let Some(ks) = &expect.keyspace {
        keyspace_differences(ks, &actual, &mut out);
    }
    for key in &expect.absent {
        if let Some(entry) = actual.get(key) {
            out.push((
                "keyspace",
                format!(
                    "key {}: expected absent, but it exists: {}",
                    json_line(&Json::String(key.clone())),
                    json_line(entry)
                ),
            ));
        }
    }
    warning_differences(expect, observed, &mut out);
    out
}

/// The reply and the error against REPLY, REPLY_MATCH, ERROR and ERROR_MATCH.
fn outcome_differences(
    expect: &Expect,
    observed: &Observed,
    reply: &Reply,
    got: &str,
    out: &mut Vec<(&'static str, String)>,
) {
    if let Some(expected) = &expect.reply {
        if *expected != observed.reply {
            out.push((
                "reply",
                format!(
                    "expected reply {}, got {got}",
                    json_line(&nil_as_toml(expected))
                ),
            ));
        }
    }
    if let Some(pattern) = &expect.reply_match {
        let text = reply.to_cli();
        if !glob_match(pattern.as_bytes(), text.as_bytes(), false) {
            out.push((
                "reply",
                format!(
                    "expected a reply matching {}, got {}",
                    json_line(&Json::String(pattern.clone())),
                    json_line(&Json::String(text))
                ),
            ));
        }
    }
    if let Some(expected) = &expect.error {
        if observed.error.as_deref() != Some(expected.as_str()) {
            out.push((
                "error",
                format!(
                    "expected error {}, got {got}",
                    json_line(&Json::String(expected.clone()))
                ),
            ));
        }
    }
    if let Some(pattern) = &expect.error_match {
        let matched = observed
            .error
            .as_ref()
            .is_some_and(|e| glob_match(pattern.as_bytes(), e.as_bytes(), false));
        if !matched {
            out.push((
                "error",
                format!(
                    "expected an error matching {}, got {got}",
                    json_line(&Json::String(pattern.clone()))
                ),
            ));
        }
    }
}

/// Each expected key's value and TTL, then (an exact match) the keys nobody listed.
fn keyspace_differences(
    ks: &KeyspaceExpect,
    actual: &Map<String, Json>,
    out: &mut Vec<(&'static str, String)>,
) {
    for (key, spec, ttl) in &ks.keys {
        let shown = json_line(&Json::String(key.clone()));
        let Some(entry) = actual.get(key) else {
            out.push((
                "keyspace",
                format!(
                    "key {shown}: expected {}, but it does not exist",
                    json_line(spec)
                ),
            ));
            continue;
        };
        let expected = match canonical_entry(key, spec) {
            Ok(e) => e,
            Err(message) => {
                out.push(("keyspace", message));
                continue;
            }
        };
        let value = sorted_set(without_ttl(entry.clone()));
        if value != expected {
            // What differs, typed (a hash's fields, a sorted set's scores), not two JSON
            // documents to compare by eye.
            let kind = value.get("type").and_then(Json::as_str).unwrap_or("?");
            let details = crate::engine::keyspace_diff::entry_delta(&expected, &value);
            out.push((
                "keyspace",
                format!(
                    "key {shown} ({kind}), expected → got: {}",
                    details.join(", ")
                ),
            ));
        }
        let remaining = entry.get("ttl_ms").and_then(Json::as_i64);
        let ttl_ok = match (ttl, remaining) {
            (TtlExpect::Any, _) => true,
            (TtlExpect::None, None) => true,
            (TtlExpect::Range(lo, hi), Some(ms)) => (*lo..=*hi).contains(&ms),
            _ => false,
        };
        if !ttl_ok {
            let wanted = match ttl {
                TtlExpect::None => "no TTL".to_string(),
                TtlExpect::Range(lo, hi) if lo == hi => format!("ttl_ms {lo}"),
                TtlExpect::Range(lo, hi) => format!("ttl_ms in [{lo}, {hi}]"),
                TtlExpect::Any => unreachable!("any TTL matches"),
            };
            let has = match remaining {
                Some(ms) => format!("ttl_ms {ms}"),
                None => "no TTL".to_string(),
            };
            out.push((
                "keyspace",
                format!("key {shown}: expected {wanted}, has {has}"),
            ));
        }
    }
    if ks.matching == KeyspaceMatch::Exact {
        for (key, entry) in actual {
            if !ks.keys.iter().any(|(k, _, _)| k == key) {
                out.push((
                    "keyspace",
                    format!(
                        "key {}: not expected, but it exists: {} (list it, or set keyspace_match = \"partial\")",
                        json_line(&Json::String(key.clone())),
                        json_line(entry)
                    ),
                ));
            }
        }
    }
}

/// The run's warnings against the expected set.
fn warning_differences(
    expect: &Expect,
    observed: &Observed,
    out: &mut Vec<(&'static str, String)>,
) {
    if let Some(expected) = &expect.warnings {
        let mut expected = expected.clone();
        expected.sort();
        expected.dedup();
        if expected != observed.warnings {
            out.push((
                "warnings",
                format!(
                    "expected warnings [{}], got [{}]",
                    expected.join(", "),
                    observed.warnings.join(", ")
                ),
            ));
        }
    }
}

/// The run's outcome in the words of a test file.
fn describe_outcome(observed: &Observed) -> String {
    match &observed.error {
        Some(e) => format!("error {}", json_line(&Json::String(e.clone()))),
        None => format!("reply {}", json_line(&nil_as_toml(&observed.reply))),
    }
}

/// A reply written as a test file writes it: nil as `{"nil": true}` (TOML has no null).
pub fn nil_as_toml(reply: &Json) -> Json {
    match reply {
        Json::Null => serde_json::json!({ "nil": true }),
        Json::Array(items) => Json::Array(items.iter().map(nil_as_toml).collect()),
        Json::Object(o) => {
            Json::Object(o.iter().map(|(k, v)| (k.clone(), nil_as_toml(v))).collect())
        }
        other => other.clone(),
    }
}
