//! Copy keys from a live server into a sandbox database: type-aware, bounded reads only (a key above
//! the size limit is refused with the reason, never read whole).

use super::{LiveBackend, LiveError};
use crate::engine::keyspace::{
    Db, Entry, HashValue, ListValue, SetValue, StreamId, StreamValue, Value, ZSetValue,
};
use crate::engine::reply::Reply;

/// Largest key copied: elements of a collection, bytes of a string.
#[derive(Debug, Clone, Copy)]
pub struct CopyLimits {
    pub max_elements: usize,
    pub max_string_bytes: usize,
}

impl Default for CopyLimits {
    fn default() -> Self {
        CopyLimits {
            max_elements: 10_000,
            max_string_bytes: 1 << 20,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error(
        "key '{key}' is a {kind} of {size} {unit}, above the copy limit of {limit}; copy refused"
    )]
    TooLarge {
        key: String,
        kind: &'static str,
        size: usize,
        unit: &'static str,
        limit: usize,
    },
    #[error("key '{key}': {message}")]
    Unsupported { key: String, message: String },
    #[error(transparent)]
    Live(#[from] LiveError),
}

fn bulks(reply: Reply) -> Vec<Vec<u8>> {
    match reply {
        Reply::Array(items) | Reply::Set(items) => items
            .into_iter()
            .filter_map(|r| match r {
                Reply::Bulk(b) => Some(b),
                _ => None,
            })
            .collect(),
        Reply::Map(pairs) => pairs
            .into_iter()
            .flat_map(|(k, v)| [k, v])
            .filter_map(|r| match r {
                Reply::Bulk(b) => Some(b),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn int(reply: Reply) -> i64 {
    match reply {
        Reply::Int(i) => i,
        _ => 0,
    }
}

/// Read one key (None when it does not exist). Expiry is kept as an absolute time from `now_ms`.
pub fn read_key(
    live: &mut LiveBackend,
    key: &[u8],
    limits: &CopyLimits,
    now_ms: i64,
) -> Result<Option<Entry>, CopyError> {
    let name = String::from_utf8_lossy(key).into_owned();
    let kind = match live.command(&[b"TYPE", key])? {
        Reply::Status(s) => s,
        other => {
            return Err(CopyError::Unsupported {
                key: name,
                message: format!("TYPE answered {}", other.to_cli()),
            })
        }
    };
    let (size_cmd, kind_name, unit, limit): (&[u8], &'static str, &'static str, usize) =
        match kind.as_str() {
            "none" => return Ok(None),
            "string" => (b"STRLEN", "string", "bytes", limits.max_string_bytes),
            "hash" => (b"HLEN", "hash", "fields", limits.max_elements),
            "list" => (b"LLEN", "list", "elements", limits.max_elements),
            "set" => (b"SCARD", "set", "members", limits.max_elements),
            "zset" => (b"ZCARD", "zset", "members", limits.max_elements),
            "stream" => (b"XLEN", "stream", "entries", limits.max_elements),
            other => {
                return Err(CopyError::Unsupported {
                    key: name,
                    message: format!("type '{other}' is not supported by the sandbox"),
                })
            }
        };
    let size = int(live.command(&[size_cmd, key])?).max(0) as usize;
    if size > limit {
        return Err(CopyError::TooLarge {
            key: name,
            kind: kind_name,
            size,
            unit,
            limit,
        });
    }
    let value = match kind_name {
        "string" => match live.command(&[b"GET", key])? {
            Reply::Bulk(b) => Value::Str(b),
            _ => return Ok(None),
        },
        "hash" => {
            let mut h = HashValue::new();
            let items = bulks(live.command(&[b"HGETALL", key])?);
            for pair in items.chunks_exact(2) {
                h.insert(pair[0].clone(), pair[1].clone());
            }
            copy_field_ttls(live, key, &mut h, now_ms)?;
            Value::Hash(h)
        }
        "list" => Value::List(ListValue::from(bulks(
            live.command(&[b"LRANGE", key, b"0", b"-1"])?,
        ))),
        "set" => {
            let members = bulks(live.command(&[b"SMEMBERS", key])?);
            Value::Set(SetValue::created_by_sadd(members.into_iter(), None))
        }
        "zset" => {
            let mut z = ZSetValue::new();
            let reply = live.command(&[b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"])?;
            let flat: Vec<Reply> = match reply {
                Reply::Array(items) => items
                    .into_iter()
                    .flat_map(|r| match r {
                        Reply::Array(pair) => pair,
                        other => vec![other],
                    })
                    .collect(),
                _ => Vec::new(),
            };
            for pair in flat.chunks_exact(2) {
                let score = match &pair[1] {
                    Reply::Double(d) => *d,
                    Reply::Bulk(b) => String::from_utf8_lossy(b).parse().unwrap_or(0.0),
                    _ => 0.0,
                };
                if let Reply::Bulk(m) = &pair[0] {
                    z.insert(m.clone(), score);
                }
            }
            Value::ZSet(z)
        }
        _ => {
            let mut stream = StreamValue::new();
            if let Reply::Array(entries) = live.command(&[b"XRANGE", key, b"-", b"+"])? {
                for entry in entries {
                    let Reply::Array(parts) = entry else { continue };
                    let (Some(Reply::Bulk(id)), Some(fields)) = (parts.first(), parts.get(1))
                    else {
                        continue;
                    };
                    let Some(id) = StreamId::parse(&String::from_utf8_lossy(id)) else {
                        continue;
                    };
                    let flat = bulks(fields.clone());
                    let fields = flat
                        .chunks_exact(2)
                        .map(|p| (p[0].clone(), p[1].clone()))
                        .collect();
                    stream.append(id, fields);
                }
            }
            Value::Stream(stream)
        }
    };
    let pttl = int(live.command(&[b"PTTL", key])?);
    Ok(Some(Entry {
        value,
        expire_at_ms: (pttl > 0).then_some(now_ms + pttl),
        raw: None, // a raw string's allocation
        built: Default::default(),
    }))
}

/// The fields' TTLs, on a server whose command table has HPTTL (Redis 7.4+, Valkey
/// 9): the guard's dry run then sees the fields expire as the server will.
fn copy_field_ttls(
    live: &mut LiveBackend,
    key: &[u8],
    h: &mut HashValue,
    now_ms: i64,
) -> Result<(), CopyError> {
    if h.is_empty() || crate::engine::commands::lookup_in(live.server.profile, "hpttl").is_none() {
        return Ok(());
    }
    let fields: Vec<Vec<u8>> = h.keys().cloned().collect();
    let count = fields.len().to_string();
    let mut args: Vec<&[u8]> = vec![b"HPTTL", key, b"FIELDS", count.as_bytes()];
    args.extend(fields.iter().map(Vec::as_slice));
    let Reply::Array(ttls) = live.command(&args)? else {
        return Ok(());
    };
    for (field, ttl) in fields.iter().zip(ttls) {
        if let Reply::Int(ms) = ttl {
            if ms > 0 {
                h.set_field_expire(
                    field,
                    now_ms + ms,
                    crate::engine::keyspace::TtlOrder::Unchanged,
                );
            }
        }
    }
    Ok(())
}

/// Copy `keys` into `db` (missing keys are removed from it).
pub fn copy_keys(
    live: &mut LiveBackend,
    keys: &[Vec<u8>],
    db: &mut Db,
    limits: &CopyLimits,
    now_ms: i64,
) -> Result<(), CopyError> {
    for key in keys {
        match read_key(live, key, limits, now_ms)? {
            Some(entry) => db.insert_entry(key.clone(), entry),
            None => {
                db.remove(key, now_ms);
            }
        }
    }
    Ok(())
}
