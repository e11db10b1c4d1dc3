//! The keyspace JSON format of `--keyspace` and `--dump-keyspace` (see README):
//! `{"KEY": {"type": ..., "value": ..., "ttl_ms": N}}`, a bare string for a plain string,
//! `{"b64": "..."}` for any string that is not UTF-8.

use super::{Db, Entry, HashValue, SetValue, StreamId, StreamValue, Value, ZSetValue};
use base64::Engine as _;
use serde_json::{json, Map, Value as Json};

#[derive(Debug, thiserror::Error)]
pub enum KeyspaceJsonError {
    #[error("malformed JSON at line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("key {key:?}: {message}")]
    Invalid { key: String, message: String },
    #[error("{}", over_budget_words(*json_bytes, *limit))]
    OverBudget {
        /// The size of the JSON text.
        json_bytes: usize,
        /// The budget in bytes.
        limit: usize,
    },
}

fn over_budget_words(json_bytes: usize, limit: usize) -> String {
    format!(
        "{} of keyspace JSON would take more than the memory budget ({}) to load; seed only the keys the script uses, or raise the budget with --max-memory MIB (memory_limit_mb in the workbench's config.toml)",
        crate::engine::budget::size_text(json_bytes as u64),
        crate::engine::budget::size_text(limit as u64)
    )
}

/// Parse `text` as JSON, counting what the document and the database made from it will hold
/// against the memory budget as it goes: past it, parsing stops with `OverBudget` before the
/// allocations that would abort the process (a 60 MB seed of small values takes gigabytes).
pub fn json_within_budget(text: &str) -> Result<Json, KeyspaceJsonError> {
    use serde::de::DeserializeSeed;
    let limit = crate::engine::budget::limit();
    let meter = std::cell::Cell::new(crate::engine::budget::refresh());
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = Metered {
        used: &meter,
        limit,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    match parsed {
        Ok(v) => Ok(v),
        Err(_) if meter.get() > limit => Err(KeyspaceJsonError::OverBudget {
            json_bytes: text.len(),
            limit,
        }),
        Err(e) => Err(KeyspaceJsonError::Syntax {
            line: e.line(),
            column: e.column(),
            message: e
                .to_string()
                .split(" at line")
                .next()
                .unwrap_or_default()
                .to_string(),
        }),
    }
}

/// What one value costs while a seed loads: its JSON node, its share of the database it becomes
/// and the growth slack of both (measured: a list of 1.5M one-byte strings peaks at 325 MB of
/// RSS, about 210 bytes an element); strings count twice (the JSON's and the database's copy).
const SEED_VALUE_COST: usize = 2 * std::mem::size_of::<Json>() + 96;

/// A `DeserializeSeed` that builds a `serde_json::Value` and charges each node to `used`.
struct Metered<'a> {
    used: &'a std::cell::Cell<usize>,
    limit: usize,
}

impl Metered<'_> {
    fn charge<E: serde::de::Error>(&self, bytes: usize) -> Result<(), E> {
        let used = self.used.get().saturating_add(bytes);
        self.used.set(used);
        if used > self.limit {
            return Err(E::custom("over the memory budget"));
        }
        Ok(())
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Metered<'_> {
    type Value = Json;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        // Nesting: serde_json's own recursion limit (128) bounds the depth.
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Metered<'_> {
    type Value = Json;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Json, E> {
        self.charge(SEED_VALUE_COST)?;
        Ok(Json::Bool(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Json, E> {
        self.charge(SEED_VALUE_COST)?;
        Ok(Json::from(v))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Json, E> {
        self.charge(SEED_VALUE_COST)?;
        Ok(Json::from(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Json, E> {
        self.charge(SEED_VALUE_COST)?;
        Ok(serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Json, E> {
        self.charge(SEED_VALUE_COST.saturating_add(v.len().saturating_mul(2)))?;
        Ok(Json::String(v.to_owned()))
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Json, E> {
        self.charge(SEED_VALUE_COST.saturating_add(v.len().saturating_mul(2)))?;
        Ok(Json::String(v))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Json, E> {
        self.charge(SEED_VALUE_COST)?;
        Ok(Json::Null)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Json, E> {
        self.visit_unit()
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        self.charge(SEED_VALUE_COST)?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Metered {
            used: self.used,
            limit: self.limit,
        })? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        self.charge(SEED_VALUE_COST)?;
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.charge(SEED_VALUE_COST.saturating_add(key.len().saturating_mul(2)))?;
            let value = map.next_value_seed(Metered {
                used: self.used,
                limit: self.limit,
            })?;
            out.insert(key, value);
        }
        Ok(Json::Object(out))
    }
}

fn invalid(key: &str, message: impl Into<String>) -> KeyspaceJsonError {
    KeyspaceJsonError::Invalid {
        key: key.to_string(),
        message: message.into(),
    }
}

/// Parse a seed keyspace; TTLs are relative to `now_ms`.
pub fn keyspace_from_json(text: &str, now_ms: i64) -> Result<Db, KeyspaceJsonError> {
    let root = json_within_budget(text)?;
    keyspace_from_json_value(&root, now_ms)
}

/// Parse a seed keyspace already read as a JSON value (a test file's TOML table, converted).
pub fn keyspace_from_json_value(root: &Json, now_ms: i64) -> Result<Db, KeyspaceJsonError> {
    let Json::Object(map) = root else {
        return Err(KeyspaceJsonError::Syntax {
            line: 1,
            column: 1,
            message: "the keyspace must be a JSON object of key -> value".into(),
        });
    };
    let mut db = Db::new();
    for (key_text, spec) in map {
        let key = decode_key(key_text);
        let entry = entry_from_json(key_text, spec, now_ms)?;
        db.insert_entry(key, entry);
    }
    Ok(db)
}

fn decode_key(text: &str) -> Vec<u8> {
    text.as_bytes().to_vec()
}

fn entry_from_json(key: &str, spec: &Json, now_ms: i64) -> Result<Entry, KeyspaceJsonError> {
    if let Some(bytes) = as_bytes(spec) {
        return Ok(Entry {
            value: Value::Str(bytes),
            expire_at_ms: None,
            raw: None,
            built: Default::default(),
        });
    }
    let Json::Object(obj) = spec else {
        return Err(invalid(
            key,
            "expected a string or an object {\"type\", \"value\", \"ttl_ms\"}",
        ));
    };
    let kind = obj.get("type").and_then(Json::as_str).unwrap_or("string");
    let value = obj
        .get("value")
        .ok_or_else(|| invalid(key, "missing \"value\""))?;
    let value = match kind {
        "string" => Value::Str(
            as_bytes(value).ok_or_else(|| invalid(key, "a string value must be a string"))?,
        ),
        "hash" => hash_from_json(key, obj, value, now_ms)?,
        "list" => list_from_json(key, value)?,
        "set" => set_from_json(key, value)?,
        "zset" => zset_from_json(key, value)?,
        "stream" => stream_from_json(key, obj, value, now_ms)?,
        other => {
            return Err(invalid(
                key,
                format!("unknown type {other:?} (string, hash, list, set, zset or stream)"),
            ))
        }
    };
    let expire_at_ms = expiry_from_json(key, obj.get("ttl_ms"), now_ms)?;
    Ok(Entry {
        value,
        expire_at_ms,
        raw: None,
        // The server's copy got its TTL after the value (SET, then PEXPIRE).
        built: crate::engine::keyspace::StringBuild {
            had_ttl: expire_at_ms.is_some(),
            ..Default::default()
        },
    })
}

/// A hash: an object of string fields, with its field TTLs.
fn hash_from_json(
    key: &str,
    obj: &Map<String, Json>,
    value: &Json,
    now_ms: i64,
) -> Result<Value, KeyspaceJsonError> {
    let Json::Object(fields) = value else {
        return Err(invalid(key, "a hash value must be an object"));
    };
    if fields.is_empty() {
        return Err(invalid(key, "an empty hash cannot exist in Redis"));
    }
    let mut h = HashValue::new();
    for (f, v) in fields {
        h.insert(
            f.as_bytes().to_vec(),
            as_bytes(v)
                .ok_or_else(|| invalid(key, format!("field {f:?}: value must be a string")))?,
        );
    }
    field_ttls_from_json(key, obj.get("field_ttl_ms"), &mut h, now_ms)?;
    Ok(Value::Hash(h))
}

/// A list: a non-empty array of strings.
fn list_from_json(key: &str, value: &Json) -> Result<Value, KeyspaceJsonError> {
    let items = non_empty_array(key, value, "list")?;
    Ok(Value::List(
        items
            .iter()
            .map(|v| as_bytes(v).ok_or_else(|| invalid(key, "list elements must be strings")))
            .collect::<Result<_, _>>()?,
    ))
}

/// A set: a non-empty array of strings, built as SADD builds it.
fn set_from_json(key: &str, value: &Json) -> Result<Value, KeyspaceJsonError> {
    let items = non_empty_array(key, value, "set")?;
    let members = items
        .iter()
        .map(|v| as_bytes(v).ok_or_else(|| invalid(key, "set members must be strings")))
        .collect::<Result<Vec<_>, _>>()?;
    // As 7.0's SADD creates it; a profile with listpacks re-encodes it when seeding.
    Ok(Value::Set(SetValue::created_by_sadd(
        members.into_iter(),
        None,
    )))
}

/// A sorted set: a non-empty array of [member, score] pairs.
fn zset_from_json(key: &str, value: &Json) -> Result<Value, KeyspaceJsonError> {
    let items = non_empty_array(key, value, "zset")?;
    let mut z = ZSetValue::new();
    for pair in items {
        let (m, s) = match pair.as_array().map(Vec::as_slice) {
            Some([m, s]) => (m, s),
            _ => return Err(invalid(key, "zset members must be [member, score] pairs")),
        };
        let member = as_bytes(m).ok_or_else(|| invalid(key, "a zset member must be a string"))?;
        let score = as_score(s)
            .ok_or_else(|| invalid(key, "a zset score must be a number, \"inf\" or \"-inf\""))?;
        z.insert(member, score);
    }
    Ok(Value::ZSet(z))
}

/// A stream: entries [id, [field, value, ...]] in increasing ID order, then its "stream" member.
fn stream_from_json(
    key: &str,
    obj: &Map<String, Json>,
    value: &Json,
    now_ms: i64,
) -> Result<Value, KeyspaceJsonError> {
    let Json::Array(items) = value else {
        return Err(invalid(
            key,
            "a stream value must be an array of [id, [field, value, ...]]",
        ));
    };
    let mut s = StreamValue::new();
    for item in items {
        let (id, fields) = match item.as_array().map(Vec::as_slice) {
            Some([id, Json::Array(fields)]) => (id, fields),
            _ => {
                return Err(invalid(
                    key,
                    "stream entries must be [id, [field, value, ...]]",
                ))
            }
        };
        let id = id
            .as_str()
            .and_then(StreamId::parse)
            .ok_or_else(|| invalid(key, "a stream entry ID must be \"ms-seq\""))?;
        if id <= s.last_id && !(s.entries.is_empty() && id > StreamId::default()) {
            return Err(invalid(
                key,
                format!("stream ID {id} is not greater than the previous one"),
            ));
        }
        if fields.is_empty() || fields.len() % 2 != 0 {
            return Err(invalid(
                key,
                format!("entry {id}: fields must be a non-empty list of field, value pairs"),
            ));
        }
        let mut pairs = Vec::new();
        for fv in fields.chunks(2) {
            let f =
                as_bytes(&fv[0]).ok_or_else(|| invalid(key, "stream fields must be strings"))?;
            let v =
                as_bytes(&fv[1]).ok_or_else(|| invalid(key, "stream values must be strings"))?;
            pairs.push((f, v));
        }
        s.entries.insert(id, pairs);
        s.last_id = id;
        s.entries_added += 1;
    }
    // Last ID, counters, groups.
    if let Some(meta) = obj.get("stream") {
        super::stream_json::apply_meta(key, &mut s, meta, now_ms)?;
    }
    Ok(Value::Stream(s))
}

/// `ttl_ms` as the expiry time from `now_ms` (none when absent or null).
fn expiry_from_json(
    key: &str,
    ttl: Option<&Json>,
    now_ms: i64,
) -> Result<Option<i64>, KeyspaceJsonError> {
    Ok(match ttl {
        None | Some(Json::Null) => None,
        Some(t) => {
            // Redis refuses a TTL whose expiry time overflows (PEXPIRE k 9223372036854775807);
            // wrapping around would expire the key at once.
            let too_large = || {
                invalid(
                    key,
                    format!(
                        "ttl_ms {t} is too large: the expiry time overflows, and Redis refuses it (ERR invalid expire time in 'pexpire' command)"
                    ),
                )
            };
            let ms = match (t.as_i64(), t.as_u64()) {
                (Some(ms), _) if ms > 0 => ms,
                (None, Some(_)) => return Err(too_large()),
                _ => return Err(invalid(key, "ttl_ms must be a positive integer")),
            };
            Some(now_ms.checked_add(ms).ok_or_else(too_large)?)
        }
    })
}

fn non_empty_array<'a>(
    key: &str,
    value: &'a Json,
    kind: &str,
) -> Result<&'a Vec<Json>, KeyspaceJsonError> {
    match value {
        Json::Array(items) if !items.is_empty() => Ok(items),
        Json::Array(_) => Err(invalid(
            key,
            format!("an empty {kind} cannot exist in Redis"),
        )),
        _ => Err(invalid(key, format!("a {kind} value must be an array"))),
    }
}

fn as_bytes(v: &Json) -> Option<Vec<u8>> {
    match v {
        Json::String(s) => Some(s.as_bytes().to_vec()),
        Json::Number(n) => Some(n.to_string().into_bytes()),
        Json::Object(o) if o.len() == 1 => o
            .get("b64")
            .and_then(Json::as_str)
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok()),
        _ => None,
    }
}

fn as_score(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => match s.as_str() {
            "inf" | "+inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            other => other.parse().ok().filter(|f: &f64| !f.is_nan()),
        },
        _ => None,
    }
}

/// A string as JSON: plain when UTF-8, `{"b64": ...}` otherwise.
pub fn bytes_to_json(b: &[u8]) -> Json {
    match std::str::from_utf8(b) {
        Ok(s) => json!(s),
        Err(_) => json!({ "b64": base64::engine::general_purpose::STANDARD.encode(b) }),
    }
}

/// `"field_ttl_ms": {"field": ms}`: the remaining time of fields that have a TTL (Redis 7.4+,
/// Valkey 9). Each field must be in the hash; a TTL must be a positive integer.
fn field_ttls_from_json(
    key: &str,
    spec: Option<&Json>,
    h: &mut HashValue,
    now_ms: i64,
) -> Result<(), KeyspaceJsonError> {
    let Some(spec) = spec.filter(|s| !s.is_null()) else {
        return Ok(());
    };
    let Json::Object(ttls) = spec else {
        return Err(invalid(
            key,
            "\"field_ttl_ms\" must be an object of field -> milliseconds",
        ));
    };
    for (f, ms) in ttls {
        if !h.contains_key(f.as_bytes()) {
            return Err(invalid(
                key,
                format!("\"field_ttl_ms\": field {f:?} is not in the hash"),
            ));
        }
        let ms = ms.as_i64().filter(|ms| *ms > 0).ok_or_else(|| {
            invalid(
                key,
                format!("\"field_ttl_ms\": field {f:?}: the TTL must be a positive integer of milliseconds"),
            )
        })?;
        let at = now_ms.checked_add(ms).ok_or_else(|| {
            invalid(
                key,
                format!("\"field_ttl_ms\": field {f:?}: the TTL is too large"),
            )
        })?;
        // The JSON's field order is kept as it is (a dump lists them as the server did).
        h.set_field_expire(f.as_bytes(), at, super::TtlOrder::Unchanged);
    }
    Ok(())
}

/// The live fields' remaining TTLs, in field order; `None` when no field has one.
fn field_ttls_to_json(h: &HashValue, now_ms: i64) -> Option<Json> {
    if !h.has_field_ttls() {
        return None;
    }
    let ttls: Map<String, Json> = h
        .live_fields(now_ms)
        .filter_map(|(f, _)| {
            let at = h.field_expire_at(f)?;
            Some((String::from_utf8_lossy(f).into_owned(), json!(at - now_ms)))
        })
        .collect();
    (!ttls.is_empty()).then_some(Json::Object(ttls))
}

fn score_to_json(s: f64) -> Json {
    if s == f64::INFINITY {
        json!("inf")
    } else if s == f64::NEG_INFINITY {
        json!("-inf")
    } else {
        json!(s)
    }
}

/// Dump a database, keys in byte order; `ttl_ms` is the remaining time at `now_ms`.
pub fn keyspace_to_json(db: &Db, now_ms: i64) -> Json {
    let mut out = Map::new();
    for key in db.sorted_keys(now_ms) {
        let entry = db.get(&key, now_ms).expect("live key");
        let value = match &entry.value {
            Value::Str(s) => bytes_to_json(s),
            Value::Hash(h) => Json::Object(
                h.live_fields(now_ms)
                    .map(|(f, v)| (String::from_utf8_lossy(f).into_owned(), bytes_to_json(v)))
                    .collect(),
            ),
            Value::List(l) => Json::Array(l.iter().map(|v| bytes_to_json(v)).collect()),
            Value::Set(s) => Json::Array(s.iter().map(|v| bytes_to_json(v)).collect()),
            Value::ZSet(z) => Json::Array(
                z.iter()
                    .map(|(m, s)| json!([bytes_to_json(m), score_to_json(s)]))
                    .collect(),
            ),
            Value::Stream(s) => Json::Array(
                s.entries
                    .iter()
                    .map(|(id, fields)| {
                        json!([
                            id.to_string(),
                            fields
                                .iter()
                                .flat_map(|(f, v)| [bytes_to_json(f), bytes_to_json(v)])
                                .collect::<Vec<_>>()
                        ])
                    })
                    .collect(),
            ),
        };
        let mut spec = Map::new();
        spec.insert("type".into(), json!(entry.value.type_name()));
        spec.insert("value".into(), value);
        if let Value::Stream(s) = &entry.value {
            // Last ID, counters, groups when the entries do not imply them.
            spec.extend(super::stream_json::meta_to_json(s).map(|m| ("stream".into(), m)));
        }
        if let Some(at) = entry.expire_at_ms {
            spec.insert("ttl_ms".into(), json!((at - now_ms).max(0)));
        }
        if let Value::Hash(h) = &entry.value {
            if let Some(ttls) = field_ttls_to_json(h, now_ms) {
                spec.insert("field_ttl_ms".into(), ttls);
            }
        }
        out.insert(
            String::from_utf8_lossy(&key).into_owned(),
            Json::Object(spec),
        );
    }
    Json::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hash-field TTLs load, dump back the same, and an expired field disappears.
    #[test]
    fn field_ttls_round_trip() {
        let text = r#"{"h":{"type":"hash","value":{"b":"2","a":"1"},"field_ttl_ms":{"a":5000}}}"#;
        let db = keyspace_from_json(text, 1_000).unwrap();
        assert_eq!(keyspace_to_json(&db, 1_000).to_string(), text);
        assert_eq!(
            keyspace_to_json(&db, 6_000).to_string(),
            r#"{"h":{"type":"hash","value":{"b":"2"}}}"#
        );
        let err = |t: &str| keyspace_from_json(t, 0).unwrap_err().to_string();
        assert_eq!(
            err(r#"{"h":{"type":"hash","value":{"a":"1"},"field_ttl_ms":{"z":5}}}"#),
            "key \"h\": \"field_ttl_ms\": field \"z\" is not in the hash"
        );
        assert_eq!(
            err(r#"{"h":{"type":"hash","value":{"a":"1"},"field_ttl_ms":{"a":0}}}"#),
            "key \"h\": \"field_ttl_ms\": field \"a\": the TTL must be a positive integer of milliseconds"
        );
        assert_eq!(
            err(r#"{"h":{"type":"hash","value":{"a":"1"},"field_ttl_ms":[1]}}"#),
            "key \"h\": \"field_ttl_ms\" must be an object of field -> milliseconds"
        );
        // Every field expired: the key is gone.
        let db = keyspace_from_json(
            r#"{"h":{"type":"hash","value":{"a":"1"},"field_ttl_ms":{"a":5}}}"#,
            0,
        )
        .unwrap();
        assert_eq!(keyspace_to_json(&db, 5).to_string(), "{}");
    }
}
