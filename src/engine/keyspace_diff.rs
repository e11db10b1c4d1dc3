//! The difference of two keyspaces in keyspace JSON (the `--keyspace` dump, or a lab's keyspace
//! where a plain string may be written bare), per key and typed: a string's old and new value, a
//! hash's fields added, removed and changed, a sorted set's members and scores, a set's members,
//! a list's edit, a stream's entries, a TTL. What a race outcome changed from the seed, and how a
//! test's keyspace differs from what it expected, read without comparing JSON by eye.

use crate::engine::report::json_line;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Added,
    Removed,
    Changed,
}

/// One key that differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyDelta {
    pub key: String,
    /// Its type (after; before when removed).
    pub kind: String,
    pub change: Change,
    /// What differs, each `before → after` (`+x` only after, `-x` only before); for an added key,
    /// its value.
    pub details: Vec<String>,
}

impl KeyDelta {
    /// `lb zset: bob 2 → 5, +carol 3`, `stock: "1" → "0"` (a string's quotes say its type),
    /// `+new string "1"`, `-gone hash`.
    pub fn line(&self) -> String {
        let key = json_text(&self.key);
        match self.change {
            Change::Changed if self.kind == "string" => {
                format!("{key}: {}", self.details.join(", "))
            }
            Change::Added => format!("+{key} {} {}", self.kind, self.details.join(", ")),
            Change::Removed => format!("-{key} {}", self.kind),
            Change::Changed => format!("{key} {}: {}", self.kind, self.details.join(", ")),
        }
    }
}

/// A key or member as written in the lines: bare when plain, JSON-quoted when it has spaces,
/// quotes or characters a terminal would act on.
fn json_text(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || ":_-./{}#@".contains(c));
    if plain {
        s.to_string()
    } else {
        json_line(&Json::String(s.to_string()))
    }
}

/// The entry as the keyspace dump writes it (`{type, value, …}`, sets sorted by the dump's
/// order), whatever form it was written in (a bare string, `{value, ttl_ms}` of a lab's seed).
fn entry(spec: &Json) -> Map<String, Json> {
    let mut one = Map::new();
    one.insert("k".into(), spec.clone());
    if let Ok(db) = crate::engine::keyspace::keyspace_from_json_value(&Json::Object(one), 0) {
        if let Some(Json::Object(o)) = crate::engine::keyspace::keyspace_to_json(&db, 0)
            .as_object()
            .and_then(|o| o.values().next())
        {
            return o.clone();
        }
    }
    match spec {
        Json::Object(o) if o.contains_key("type") => o.clone(),
        other => {
            let mut o = Map::new();
            o.insert("type".into(), Json::from("string"));
            o.insert("value".into(), other.clone());
            o
        }
    }
}

fn kind(entry: &Map<String, Json>) -> String {
    entry
        .get("type")
        .and_then(Json::as_str)
        .unwrap_or("?")
        .to_string()
}

/// Keys of `before` and `after` (keyspace JSON objects) that differ, in key order.
pub fn keyspace_delta(before: &Json, after: &Json) -> Vec<KeyDelta> {
    let empty = Map::new();
    let b = before.as_object().unwrap_or(&empty);
    let a = after.as_object().unwrap_or(&empty);
    let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|key| match (b.get(key), a.get(key)) {
            (None, Some(spec)) => {
                let e = entry(spec);
                Some(KeyDelta {
                    key: key.clone(),
                    kind: kind(&e),
                    change: Change::Added,
                    details: vec![short(e.get("value").unwrap_or(&Json::Null))],
                })
            }
            (Some(spec), None) => Some(KeyDelta {
                key: key.clone(),
                kind: kind(&entry(spec)),
                change: Change::Removed,
                details: Vec::new(),
            }),
            (Some(x), Some(y)) => {
                let details = entry_delta(x, y);
                (!details.is_empty()).then(|| KeyDelta {
                    key: key.clone(),
                    kind: kind(&entry(y)),
                    change: Change::Changed,
                    details,
                })
            }
            (None, None) => None,
        })
        .collect()
}

/// Values longer than this are cut in a detail (the inspector shows them whole).
const SHORT: usize = 60;

/// A value in one short line.
fn short(value: &Json) -> String {
    let text = match value {
        // A score as Redis writes it: 5, not 5.0.
        Json::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => (f as i64).to_string(),
            _ => n.to_string(),
        },
        other => json_line(other),
    };
    if text.chars().count() > SHORT {
        text.chars().take(SHORT - 1).collect::<String>() + "…"
    } else {
        text
    }
}

/// What differs between two entries of one key, each `before → after`.
pub fn entry_delta(before: &Json, after: &Json) -> Vec<String> {
    let (b, a) = (entry(before), entry(after));
    let (bt, at) = (kind(&b), kind(&a));
    let null = Json::Null;
    let (bv, av) = (
        b.get("value").unwrap_or(&null),
        a.get("value").unwrap_or(&null),
    );
    let mut out = Vec::new();
    if bt != at {
        out.push(format!("{bt} {} → {at} {}", short(bv), short(av)));
    } else if bv != av {
        match bt.as_str() {
            "hash" => out.extend(map_delta(&pairs_of_object(bv), &pairs_of_object(av))),
            "zset" => out.extend(map_delta(&pairs_of_array(bv), &pairs_of_array(av))),
            "set" => out.extend(set_delta(bv, av)),
            "list" => out.extend(list_delta(bv, av)),
            "stream" => out.extend(map_delta(&pairs_of_array(bv), &pairs_of_array(av))),
            _ => out.push(format!("{} → {}", short(bv), short(av))),
        }
    }
    // TTLs and what else the entry carries (a stream's counters, hash-field TTLs).
    let mut others: Vec<&String> = b.keys().chain(a.keys()).collect();
    others.sort();
    others.dedup();
    for name in others {
        if name == "type" || name == "value" || b.get(name) == a.get(name) {
            continue;
        }
        let side = |v: Option<&Json>| v.map_or("none".to_string(), short);
        let label = if name == "ttl_ms" { "ttl ms" } else { name };
        out.push(format!(
            "{label} {} → {}",
            side(b.get(name)),
            side(a.get(name))
        ));
    }
    out
}

fn pairs_of_object(value: &Json) -> BTreeMap<String, Json> {
    value
        .as_object()
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

/// `[[member, score], …]` (a sorted set) or `[[id, fields], …]` (a stream) by their first item.
fn pairs_of_array(value: &Json) -> BTreeMap<String, Json> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|pair| {
                    let p = pair.as_array()?;
                    let name = match p.first()? {
                        Json::String(s) => s.clone(),
                        other => json_line(other),
                    };
                    Some((name, p.get(1).cloned().unwrap_or(Json::Null)))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `f "1" → "2"`, `+g "3"`, `-h "4"`, by name.
fn map_delta(before: &BTreeMap<String, Json>, after: &BTreeMap<String, Json>) -> Vec<String> {
    let mut names: Vec<&String> = before.keys().chain(after.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|n| {
            let name = json_text(n);
            match (before.get(n), after.get(n)) {
                (Some(x), Some(y)) if x != y => Some(format!("{name} {} → {}", short(x), short(y))),
                (None, Some(y)) => Some(format!("+{name} {}", short(y))),
                (Some(x), None) => Some(format!("-{name} {}", short(x))),
                _ => None,
            }
        })
        .collect()
}

fn set_delta(before: &Json, after: &Json) -> Vec<String> {
    let members = |v: &Json| -> Vec<String> {
        let mut m: Vec<String> = v
            .as_array()
            .map(|a| a.iter().map(short).collect())
            .unwrap_or_default();
        m.sort();
        m
    };
    let (b, a) = (members(before), members(after));
    let mut out: Vec<String> = a
        .iter()
        .filter(|m| !b.contains(m))
        .map(|m| format!("+{m}"))
        .collect();
    out.extend(b.iter().filter(|m| !a.contains(m)).map(|m| format!("-{m}")));
    out
}

/// A list's edit: what the run replaced between the common start and end (`at 2: -"x" +"y"`).
fn list_delta(before: &Json, after: &Json) -> Vec<String> {
    let empty = Vec::new();
    let b = before.as_array().unwrap_or(&empty);
    let a = after.as_array().unwrap_or(&empty);
    let start = b.iter().zip(a).take_while(|(x, y)| x == y).count();
    let end = b[start..]
        .iter()
        .rev()
        .zip(a[start..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = vec![format!("at {start}:")];
    out.extend(
        b[start..b.len() - end]
            .iter()
            .map(|v| format!("-{}", short(v))),
    );
    out.extend(
        a[start..a.len() - end]
            .iter()
            .map(|v| format!("+{}", short(v))),
    );
    vec![out.join(" ")]
}

/// Differences as lines, at most `max` (then how many more).
pub fn delta_lines(deltas: &[KeyDelta], max: usize) -> Vec<String> {
    let mut out: Vec<String> = deltas.iter().take(max).map(KeyDelta::line).collect();
    if deltas.len() > max {
        out.push(format!("… {} more keys differ", deltas.len() - max));
    }
    out
}

/// A keyspace told by its differences from `seed`, key by key (`stock: "1" → "0"; +lock string
/// "c1"`, at most `max` keys), or `keyspace as seeded`.
pub fn changes_text(seed: &Json, keyspace: &Json, max: usize) -> String {
    let deltas = keyspace_delta(seed, keyspace);
    if deltas.is_empty() {
        return "keyspace as seeded".into();
    }
    delta_lines(&deltas, max).join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(before: Json, after: Json) -> Vec<String> {
        keyspace_delta(&before, &after)
            .iter()
            .map(KeyDelta::line)
            .collect()
    }

    #[test]
    fn typed_differences_per_key() {
        let before = json!({
            "stock": "1",
            "lb": {"type": "zset", "value": [["ann", 1], ["bob", 2], ["dave", 4]]},
            "h": {"type": "hash", "value": {"a": "1", "b": "2"}, "ttl_ms": 60000},
            "s": {"type": "set", "value": ["x", "y"]},
            "l": {"type": "list", "value": ["a", "b", "c"]},
            "same": "v",
            "gone": {"type": "hash", "value": {"f": "v"}}
        });
        let after = json!({
            "stock": "0",
            "lb": {"type": "zset", "value": [["ann", 1], ["bob", 5], ["carol", 3]]},
            "h": {"type": "hash", "value": {"a": "1", "b": "3", "c": "new"}},
            "s": {"type": "set", "value": ["y", "z"]},
            "l": {"type": "list", "value": ["a", "x", "c", "d"]},
            "same": {"type": "string", "value": "v"},
            "new key": {"type": "list", "value": ["1"]}
        });
        assert_eq!(
            lines(before, after),
            [
                "-gone hash",
                "h hash: b \"2\" → \"3\", +c \"new\", ttl ms 60000 → none",
                "l list: at 1: -\"b\" -\"c\" +\"x\" +\"c\" +\"d\"",
                "lb zset: bob 2 → 5, +carol 3, -dave 4",
                "+\"new key\" list [\"1\"]",
                "s set: +\"z\", -\"x\"",
                "stock: \"1\" → \"0\"",
            ]
        );
    }

    #[test]
    fn a_type_change_and_nothing_changed() {
        assert_eq!(
            entry_delta(&json!("1"), &json!({"type": "hash", "value": {"a": "1"}})),
            ["string \"1\" → hash {\"a\":\"1\"}"]
        );
        assert!(keyspace_delta(&json!({"k": "v"}), &json!({"k": "v"})).is_empty());
    }
}
