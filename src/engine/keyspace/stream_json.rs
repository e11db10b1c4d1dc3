//! The `"stream"` member of a stream key in the keyspace JSON: what a stream holds
//! besides its entries, written only when it differs from what the entries imply:
//!
//! ```json
//! {"type": "stream", "value": [["1-1", ["f", "v"]]],
//!  "stream": {"last_id": "5-0", "entries_added": 3, "max_deleted_id": "2-0",
//!             "groups": {"g": {"last_delivered_id": "1-1", "entries_read": 1,
//!                              "consumers": ["alice"], "pending": [["1-1", "alice", 1]]}}}}
//! ```
//!
//! `entries_read` is `null` when the group's counter is unknown; a pending entry is
//! `[id, consumer, delivery_count]`. Delivery and seen times are not written (they are the run
//! clock's); a loaded pending entry or consumer was delivered / seen at load time.

use super::json::{bytes_to_json, KeyspaceJsonError};
use super::stream::{Consumer, ConsumerGroup, PendingEntry, ENTRIES_READ_UNKNOWN};
use super::{StreamId, StreamValue};
use serde_json::{json, Map, Value as Json};

fn invalid(key: &str, message: impl Into<String>) -> KeyspaceJsonError {
    KeyspaceJsonError::Invalid {
        key: key.to_string(),
        message: message.into(),
    }
}

/// The metadata object, or `None` when the entries say it all (last ID = last entry, every
/// entry ever added still there, nothing deleted, no groups).
pub fn meta_to_json(s: &StreamValue) -> Option<Json> {
    let implied_last = s.entries.keys().next_back().copied().unwrap_or_default();
    if s.last_id == implied_last
        && s.entries_added == s.entries.len() as u64
        && s.max_deleted_id == StreamId::default()
        && s.groups.is_empty()
    {
        return None;
    }
    let mut meta = Map::new();
    meta.insert("last_id".into(), json!(s.last_id.to_string()));
    meta.insert("entries_added".into(), json!(s.entries_added));
    meta.insert("max_deleted_id".into(), json!(s.max_deleted_id.to_string()));
    if !s.groups.is_empty() {
        let groups: Map<String, Json> = s
            .groups
            .iter()
            .map(|(name, g)| {
                let key = String::from_utf8_lossy(name).into_owned();
                let entries_read = if g.entries_read == ENTRIES_READ_UNKNOWN {
                    Json::Null
                } else {
                    json!(g.entries_read)
                };
                let consumers: Vec<Json> = g.consumers.keys().map(|c| bytes_to_json(c)).collect();
                let pending: Vec<Json> = g
                    .pel
                    .iter()
                    .map(|(id, p)| {
                        json!([id.to_string(), bytes_to_json(&p.consumer), p.delivery_count])
                    })
                    .collect();
                (
                    key,
                    json!({
                        "last_delivered_id": g.last_id.to_string(),
                        "entries_read": entries_read,
                        "consumers": consumers,
                        "pending": pending,
                    }),
                )
            })
            .collect();
        meta.insert("groups".into(), Json::Object(groups));
    }
    Some(Json::Object(meta))
}

fn id_field(
    key: &str,
    obj: &Map<String, Json>,
    name: &str,
) -> Result<Option<StreamId>, KeyspaceJsonError> {
    match obj.get(name) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => v
            .as_str()
            .and_then(StreamId::parse)
            .map(Some)
            .ok_or_else(|| invalid(key, format!("stream.{name} must be an ID \"ms-seq\""))),
    }
}

fn text_bytes(v: &Json) -> Option<Vec<u8>> {
    match v {
        Json::String(s) => Some(s.as_bytes().to_vec()),
        Json::Object(o) => o.get("b64").and_then(Json::as_str).and_then(|b| {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.decode(b).ok()
        }),
        _ => None,
    }
}

/// Apply a `"stream"` object to a stream loaded from its entries.
pub fn apply_meta(
    key: &str,
    s: &mut StreamValue,
    meta: &Json,
    now_ms: i64,
) -> Result<(), KeyspaceJsonError> {
    let Json::Object(obj) = meta else {
        return Err(invalid(key, "\"stream\" must be an object"));
    };
    let top = s.entries.keys().next_back().copied().unwrap_or_default();
    if let Some(last) = id_field(key, obj, "last_id")? {
        if last < top {
            return Err(invalid(
                key,
                format!("stream.last_id {last} is below the last entry {top}"),
            ));
        }
        s.last_id = last;
    }
    if let Some(n) = obj.get("entries_added") {
        let n = n
            .as_u64()
            .ok_or_else(|| invalid(key, "stream.entries_added must be a non-negative integer"))?;
        if n < s.entries.len() as u64 {
            return Err(invalid(
                key,
                "stream.entries_added is smaller than the number of entries",
            ));
        }
        s.entries_added = n;
    }
    if let Some(id) = id_field(key, obj, "max_deleted_id")? {
        s.max_deleted_id = id;
    }
    let Some(groups) = obj.get("groups") else {
        return Ok(());
    };
    let Json::Object(groups) = groups else {
        return Err(invalid(
            key,
            "stream.groups must be an object of name -> group",
        ));
    };
    for (name, g) in groups {
        let group = group_from_json(key, name, g, now_ms)?;
        s.groups.insert(name.as_bytes().to_vec(), group);
    }
    Ok(())
}

/// One consumer group of a `"stream"` object: its last delivered id, read count, consumers and
/// pending entries (delivered now).
fn group_from_json(
    key: &str,
    name: &str,
    g: &Json,
    now_ms: i64,
) -> Result<ConsumerGroup, KeyspaceJsonError> {
    let Json::Object(g) = g else {
        return Err(invalid(key, format!("group {name:?} must be an object")));
    };
    let last = id_field(key, g, "last_delivered_id")?.unwrap_or_default();
    let entries_read = match g.get("entries_read") {
        None | Some(Json::Null) => ENTRIES_READ_UNKNOWN,
        Some(v) => v.as_i64().filter(|n| *n >= 0).ok_or_else(|| {
            invalid(
                key,
                format!("group {name:?}: entries_read must be a count or null"),
            )
        })?,
    };
    let mut group = ConsumerGroup::new(last, entries_read);
    for c in g
        .get("consumers")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let c = text_bytes(c)
            .ok_or_else(|| invalid(key, format!("group {name:?}: consumers are strings")))?;
        group.consumers.insert(c, idle_consumer(now_ms));
    }
    for p in g
        .get("pending")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        add_pending(key, name, &mut group, p, now_ms)?;
    }
    Ok(group)
}

/// A consumer seen now that has never been active.
fn idle_consumer(now_ms: i64) -> Consumer {
    Consumer {
        seen_time: now_ms,
        active_time: -1,
        pel: Default::default(),
    }
}

/// `[id, consumer, delivery_count]`: a pending entry of the group and of its consumer (added if
/// not listed).
fn add_pending(
    key: &str,
    name: &str,
    group: &mut ConsumerGroup,
    p: &Json,
    now_ms: i64,
) -> Result<(), KeyspaceJsonError> {
    let bad = || {
        invalid(
            key,
            format!("group {name:?}: a pending entry is [id, consumer, delivery_count]"),
        )
    };
    let [id, consumer, count] = p.as_array().map(Vec::as_slice).ok_or_else(bad)? else {
        return Err(bad());
    };
    let id = id.as_str().and_then(StreamId::parse).ok_or_else(bad)?;
    let consumer = text_bytes(consumer).ok_or_else(bad)?;
    let count = count.as_u64().ok_or_else(bad)?;
    group
        .consumers
        .entry(consumer.clone())
        .or_insert_with(|| idle_consumer(now_ms))
        .pel
        .insert(id);
    group.pel.insert(
        id,
        PendingEntry {
            consumer,
            delivery_time: now_ms,
            delivery_count: count,
        },
    );
    Ok(())
}
