//! `evalbench test --update`: write what failing cases gave as their expectations, in place, keeping
//! the file's comments and layout, for the user to review with their usual diff.

use super::check::nil_as_toml;
use super::{CaseResult, Observed};
use serde_json::Value as Json;
use toml_edit::{value, Array, DocumentMut, InlineTable, Item, Table, Value};

/// The file's text with each failing case's expectations replaced by what it gave. Cases that
/// passed are left as written. Returns None when the text no longer parses as TOML.
pub fn update_text(text: &str, results: &[CaseResult]) -> Option<String> {
    let mut doc: DocumentMut = text.parse().ok()?;
    let cases = doc.get_mut("case")?.as_array_of_tables_mut()?;
    for case in cases.iter_mut() {
        let Some(name) = case.get("name").and_then(Item::as_str).map(str::to_string) else {
            continue;
        };
        let Some(result) = results.iter().find(|r| r.name == name) else {
            continue;
        };
        if result.passed() || result.observed.is_empty() {
            continue;
        }
        match case.get_mut("step").and_then(Item::as_array_of_tables_mut) {
            Some(steps) => {
                for (table, observed) in steps.iter_mut().zip(&result.observed) {
                    update_table(table, observed);
                }
            }
            None => update_table(case, &result.observed[0]),
        }
    }
    Some(doc.to_string())
}

pub(super) fn update_table(table: &mut Table, observed: &Observed) {
    let has_pattern = table.contains_key("reply_match") || table.contains_key("error_match");
    let has_exact = table.contains_key("reply") || table.contains_key("error");
    let checks_something = has_pattern
        || has_exact
        || table.contains_key("keyspace")
        || table.contains_key("absent")
        || table.contains_key("warnings");
    // A pattern was written to be loose (a timestamp, a random id): keep it.
    if has_exact || !has_pattern {
        table.remove("reply");
        table.remove("error");
        match &observed.error {
            Some(text) => table.insert("error", value(text.as_str())),
            None => table.insert("reply", value(to_toml(&nil_as_toml(&observed.reply)))),
        };
    }
    if table.contains_key("keyspace") || !checks_something {
        let partial = table.get("keyspace_match").and_then(Item::as_str) == Some("partial");
        let old = table
            .get("keyspace")
            .and_then(Item::as_inline_table)
            .cloned();
        table.insert(
            "keyspace",
            value(keyspace_value(&observed.keyspace, old.as_ref(), partial)),
        );
    }
    if table.contains_key("warnings") {
        let mut list = Array::new();
        for w in &observed.warnings {
            list.push(w.as_str());
        }
        table.insert("warnings", value(list));
    }
}

/// The observed keyspace as an inline table; with `partial`, only the keys listed before.
pub(super) fn keyspace_value(
    observed: &Json,
    old: Option<&InlineTable>,
    partial: bool,
) -> InlineTable {
    let mut out = InlineTable::new();
    let Some(keys) = observed.as_object() else {
        return out;
    };
    for (key, entry) in keys {
        if partial && !old.is_some_and(|t| t.contains_key(key)) {
            continue;
        }
        out.insert(key, compact_entry(entry));
    }
    out
}

/// `"k" = "v"` for a plain string without TTL, the full `{ type, value, ttl_ms }` otherwise.
fn compact_entry(entry: &Json) -> Value {
    let is_plain = entry.get("type").and_then(Json::as_str) == Some("string")
        && entry.get("ttl_ms").is_none()
        && entry.get("value").is_some_and(Json::is_string);
    if is_plain {
        return to_toml(&entry["value"]);
    }
    to_toml(entry)
}

/// JSON → an inline TOML value.
pub(super) fn to_toml(json: &Json) -> Value {
    match json {
        Json::Null => {
            let mut t = InlineTable::new();
            t.insert("nil", Value::from(true));
            Value::InlineTable(t)
        }
        Json::Bool(b) => Value::from(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::from(i),
            None => Value::from(n.as_f64().unwrap_or(0.0)),
        },
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(items) => Value::Array(items.iter().map(to_toml).collect()),
        Json::Object(o) => {
            let mut t = InlineTable::new();
            for (k, v) in o {
                t.insert(k, to_toml(v));
            }
            Value::InlineTable(t)
        }
    }
}
