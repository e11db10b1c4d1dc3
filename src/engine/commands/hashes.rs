//! Hash commands (t_hash.c @7.0.15). A hash is an `IndexMap` in insertion order, which is what
//! Redis's listpack encoding gives for small hashes.

use super::long_double;
use super::{errors, filter_match, flatten, int_arg, lower, Command, Ctx};
use crate::engine::keyspace::{HashValue, TtlOrder, Value};
use crate::engine::number;
use crate::engine::profile::{FieldTtlDialect, Profile};
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("hset", hset),
    Command::new("hsetnx", hsetnx),
    Command::new("hmset", hset),
    Command::new("hget", hget),
    Command::new("hmget", hmget),
    Command::new("hgetall", hgetall),
    Command::new("hdel", hdel),
    Command::new("hexists", hexists),
    Command::new("hlen", hlen),
    Command::new("hkeys", hkeys),
    Command::new("hvals", hvals),
    Command::new("hincrby", hincrby),
    Command::new("hincrbyfloat", hincrbyfloat),
    Command::new("hstrlen", hstrlen),
    Command::new("hscan", hscan),
    Command::new("hrandfield", hrandfield),
];

const INCR_NAN_OR_INF: &str = "ERR value is NaN or Infinity";
const OUT_OF_RANGE_PLAIN: &str = "ERR value is out of range";
const INVALID_CURSOR: &str = "ERR invalid cursor";
/// `getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX)` with no custom message.
pub(super) const COUNT_RANGE: &str =
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";

/// Redis's defaults `hash-max-listpack-entries` / `hash-max-listpack-value`.
const LISTPACK_MAX_ENTRIES: usize = 512;
const LISTPACK_MAX_VALUE: usize = 64;

/// Above this size HDEL may move the last field into the hole (O(1)) instead of shifting every
/// later field (O(n)); such a hash is a hash table in Redis, whose order is random anyway.
const ORDERED_REMOVE_LIMIT: usize = 1024;

/// Largest reply of random elements the sandbox builds (Redis itself runs out of memory on
/// `HRANDFIELD h -9223372036854775807`).
pub(super) const MAX_RANDOM_REPLY: u64 = 10_000_000;

pub(super) fn too_many_random(count: u64) -> Reply {
    Reply::err(format!(
        "ERR evalbench: a reply of {count} random elements is too large for the sandbox (at most {MAX_RANDOM_REPLY})"
    ))
}

/// The hash at `key`: `Ok(None)` when missing, an error when it holds another type.
/// Fields whose TTL passed are deleted first, as the server does lazily.
pub(super) fn read<'a>(ctx: &'a mut Ctx, key: &[u8]) -> Result<Option<&'a mut HashValue>, Reply> {
    let now = ctx.now_ms;
    match ctx.value(key) {
        None => Ok(None),
        Some(Value::Hash(h)) => {
            h.purge_expired(now);
            Ok(Some(h))
        }
        Some(_) => Err(Reply::err(errors::WRONGTYPE)),
    }
}

/// The hash at `key`, created empty when missing (`hashTypeLookupWriteOrCreate`). Callers must
/// leave it non-empty or remove it.
pub(super) fn write<'a>(ctx: &'a mut Ctx, key: &[u8]) -> Result<&'a mut HashValue, Reply> {
    if read(ctx, key)?.is_none() {
        ctx.db().set(key.to_vec(), Value::Hash(HashValue::new()));
    }
    match read(ctx, key)? {
        Some(h) => Ok(h),
        None => Err(Reply::err(errors::WRONGTYPE)),
    }
}

/// Remove a field, keeping the order of the others while that is cheap.
pub(super) fn remove_field(h: &mut HashValue, field: &[u8]) -> bool {
    let ordered = h.len() <= ORDERED_REMOVE_LIMIT;
    h.remove_field(field, ordered).is_some()
}

// HSET key field value [field value ...] / HMSET (same, replies OK)
fn hset(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let is_hmset = lower(&args[0]) == "hmset";
        if args.len() % 2 == 1 {
            return Err(Reply::err(errors::wrong_args(if is_hmset {
                "hmset"
            } else {
                "hset"
            })));
        }
        let order = field_ttl_order(ctx.profile);
        let h = write(ctx, &args[1])?;
        let mut created = 0;
        for pair in args[2..].chunks(2) {
            // HSET drops the field's TTL.
            if h.set_value(pair[0].clone(), pair[1].clone(), false, order) {
                created += 1;
            }
        }
        Ok(if is_hmset {
            Reply::ok()
        } else {
            Reply::Int(created)
        })
    })())
}

fn hsetnx(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let h = write(ctx, &args[1])?;
        if h.contains_key(&args[2]) {
            return Ok(Reply::Int(0));
        }
        h.insert(args[2].clone(), args[3].clone());
        h.note_write(&args[2], &args[3]); // one-way conversion
        Ok(Reply::Int(1))
    })())
}

fn hget(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let Some(h) = read(ctx, &args[1])? else {
            return Ok(Reply::Nil);
        };
        Ok(h.get(&args[2])
            .map_or(Reply::Nil, |v| Reply::Bulk(v.clone())))
    })())
}

fn hmget(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let h = read(ctx, &args[1])?;
        let get = |f: &Vec<u8>| {
            h.as_ref()
                .and_then(|h| h.get(f))
                .map_or(Reply::Nil, |v| Reply::Bulk(v.clone()))
        };
        Ok(Reply::Array(args[2..].iter().map(get).collect()))
    })())
}

fn hgetall(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let Some(h) = read(ctx, &args[1])? else {
            return Ok(Reply::Map(Vec::new()));
        };
        Ok(Reply::Map(
            h.iter()
                .map(|(f, v)| (Reply::Bulk(f.clone()), Reply::Bulk(v.clone())))
                .collect(),
        ))
    })())
}

fn hkeys(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let Some(h) = read(ctx, &args[1])? else {
            return Ok(Reply::Array(Vec::new()));
        };
        Ok(Reply::bulks(h.keys().cloned()))
    })())
}

fn hvals(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let Some(h) = read(ctx, &args[1])? else {
            return Ok(Reply::Array(Vec::new()));
        };
        Ok(Reply::bulks(h.values().cloned()))
    })())
}

fn hdel(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let Some(h) = read(ctx, &args[1])? else {
            return Ok(Reply::Int(0));
        };
        let mut deleted = 0;
        for field in &args[2..] {
            if remove_field(h, field) {
                deleted += 1;
                if h.is_empty() {
                    break;
                }
            }
        }
        ctx.db().remove_if_empty(&args[1]);
        Ok(Reply::Int(deleted))
    })())
}

fn hexists(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let found = read(ctx, &args[1])?.is_some_and(|h| h.contains_key(&args[2]));
        Ok(Reply::Int(found as i64))
    })())
}

fn hlen(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        Ok(Reply::Int(
            read(ctx, &args[1])?.map_or(0, |h| h.len() as i64),
        ))
    })())
}

fn hstrlen(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let len = read(ctx, &args[1])?
            .and_then(|h| h.get(&args[2]))
            .map_or(0, |v| v.len());
        Ok(Reply::Int(len as i64))
    })())
}

fn hincrby(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let incr = int_arg(&args[3])?;
        let key = &args[1];
        let created = read(ctx, key)?.is_none();
        let result = (|| {
            let h = write(ctx, key)?;
            let old = match h.get(&args[2]) {
                Some(v) => {
                    number::parse_i64(v).ok_or_else(|| Reply::err(errors::HASH_NOT_INTEGER))?
                }
                None => 0,
            };
            let new = old
                .checked_add(incr)
                .ok_or_else(|| Reply::err(errors::OVERFLOW))?;
            let text = number::int_bytes(new);
            h.insert(args[2].clone(), text.clone());
            h.note_write(&args[2], &text); // one-way conversion
            Ok(Reply::Int(new))
        })();
        // An error after creating the key leaves nothing behind (Redis never creates it then).
        if created && result.is_err() {
            ctx.db().remove_if_empty(key);
        }
        result
    })())
}

fn hincrbyfloat(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        // Redis adds in x87 long double and prints `%.17Lf`: see long_double.rs.
        let incr = long_double::parse(&args[3]).ok_or_else(|| Reply::err(errors::NOT_FLOAT))?;
        if !incr.is_finite() {
            return Err(Reply::err(INCR_NAN_OR_INF));
        }
        let key = &args[1];
        let created = read(ctx, key)?.is_none();
        let result = (|| {
            let h = write(ctx, key)?;
            let old = match h.get(&args[2]) {
                None => long_double::Ld::ZERO,
                Some(v) => {
                    long_double::parse(v).ok_or_else(|| Reply::err(errors::HASH_NOT_FLOAT))?
                }
            };
            let new = long_double::add(old, incr);
            if !new.is_finite() {
                return Err(Reply::err(errors::NAN_RESULT));
            }
            let text = long_double::format_human(new).into_bytes();
            h.insert(args[2].clone(), text.clone());
            h.note_write(&args[2], &text); // one-way conversion
            Ok(Reply::Bulk(text))
        })();
        // An error after creating the key leaves nothing behind (Redis never creates it then).
        if created && result.is_err() {
            ctx.db().remove_if_empty(key);
        }
        result
    })())
}

// ---- HSCAN (shared with SSCAN) ----

/// `parseScanCursorOrReply` (shared with SCAN) with its error reply, as the profile reads it.
pub(super) fn scan_cursor(ctx: &Ctx, arg: &[u8]) -> Result<u64, Reply> {
    number::scan_cursor(ctx.profile.numbers.scan_cursor, arg)
        .ok_or_else(|| Reply::err(INVALID_CURSOR))
}

/// COUNT and MATCH options of HSCAN/SSCAN (`scanGenericCommand`, parsed after the key lookup).
pub(super) fn parse_scan_options(args: &[Vec<u8>]) -> Result<(usize, Option<Vec<u8>>), Reply> {
    let mut count: i64 = 10;
    let mut pattern = None;
    let mut i = 3;
    while i < args.len() {
        let more = args.len() - i >= 2;
        match lower(&args[i]).as_str() {
            "count" if more => {
                count = int_arg(&args[i + 1])?;
                if count < 1 {
                    return Err(Reply::err(errors::SYNTAX));
                }
            }
            "match" if more => {
                let p = &args[i + 1];
                pattern = if p.as_slice() == b"*" {
                    None
                } else {
                    Some(p.clone())
                };
            }
            _ => return Err(Reply::err(errors::SYNTAX)),
        }
        i += 2;
    }
    Ok((usize::try_from(count).unwrap_or(usize::MAX), pattern))
}

/// Which positions of a hash-table collection of `len` elements one scan call returns, and the
/// next cursor. We walk from the end backwards: removals only move elements to lower positions
/// from higher ones (already returned) or from the last place, and additions go to the end, so
/// every element present for the whole scan is returned, as SCAN guarantees.
pub(super) fn scan_window(len: usize, cursor: u64, count: usize) -> (std::ops::Range<usize>, u64) {
    let end = if cursor == 0 {
        len
    } else {
        usize::try_from(cursor).unwrap_or(usize::MAX).min(len)
    };
    let start = end.saturating_sub(count);
    (start..end, start as u64)
}

/// The `[cursor, [elements]]` reply.
pub(super) fn scan_reply(cursor: u64, items: Vec<Reply>) -> Reply {
    Reply::Array(vec![
        Reply::Bulk(cursor.to_string().into_bytes()),
        Reply::Array(items),
    ])
}

fn is_listpack(h: &HashValue) -> bool {
    h.len() <= LISTPACK_MAX_ENTRIES
        && h.iter()
            .all(|(f, v)| f.len() <= LISTPACK_MAX_VALUE && v.len() <= LISTPACK_MAX_VALUE)
}

fn hscan(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let star_limit = ctx.profile.glob_star_limit;
    let mut stop = ctx.stop.fork();
    let reply = flatten((|| {
        let cursor = scan_cursor(ctx, &args[2])?;
        let Some(h) = read(ctx, &args[1])? else {
            return Ok(scan_reply(0, Vec::new()));
        };
        let (count, pattern) = parse_scan_options(args)?;
        // A listpack hash is returned whole with cursor 0, as Redis does.
        let (range, next) = if is_listpack(h) {
            (0..h.len(), 0)
        } else {
            scan_window(h.len(), cursor, count)
        };
        let mut items = Vec::new();
        for i in range {
            let Some((f, v)) = h.get_index(i) else {
                continue;
            };
            if filter_match(pattern.as_deref(), f, star_limit, &mut stop) {
                items.push(Reply::Bulk(f.clone()));
                items.push(Reply::Bulk(v.clone()));
            }
        }
        Ok(scan_reply(next, items))
    })());
    ctx.stop.join(stop);
    reply
}

// ---- HRANDFIELD ----

/// A COUNT argument of HRANDFIELD/SRANDMEMBER: `-LONG_MAX..=LONG_MAX`.
pub(super) fn random_count_arg(arg: &[u8]) -> Result<i64, Reply> {
    let n = int_arg(arg)?;
    if n == i64::MIN {
        return Err(Reply::err(COUNT_RANGE));
    }
    Ok(n)
}

/// The positions HRANDFIELD/SRANDMEMBER pick for a count argument `l` over `len` elements:
/// negative (or 1) means independent picks with repeats, positive means distinct elements.
pub(super) fn random_indexes(ctx: &mut Ctx, len: usize, l: i64) -> Result<Vec<usize>, Reply> {
    let count = l.unsigned_abs();
    Ok(if l < 0 || count == 1 {
        if count > MAX_RANDOM_REPLY {
            return Err(too_many_random(count));
        }
        (0..count).map(|_| ctx.rng.below(len)).collect()
    } else if count >= len as u64 {
        (0..len).collect()
    } else {
        distinct_indexes(ctx, len, count as usize)
    })
}

/// `count` distinct indexes below `len` (count < len), in ascending order.
pub(super) fn distinct_indexes(ctx: &mut Ctx, len: usize, count: usize) -> Vec<usize> {
    // Partial Fisher-Yates over the picks we need.
    let mut picks: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let j = i + ctx.rng.below(len - i);
        let at_j = *picks.get(&j).unwrap_or(&j);
        let at_i = *picks.get(&i).unwrap_or(&i);
        picks.insert(j, at_i);
        out.push(at_j);
    }
    out.sort_unstable();
    out
}

fn hrandfield(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        if args.len() == 2 {
            let Some(len) = read(ctx, &args[1])?.map(|h| h.len()) else {
                return Ok(Reply::Nil);
            };
            let i = ctx.rng.below(len);
            let field = read(ctx, &args[1])?
                .and_then(|h| h.get_index(i))
                .map(|(f, _)| f.clone());
            return Ok(field.map_or(Reply::Nil, Reply::Bulk));
        }
        let l = random_count_arg(&args[2])?;
        if args.len() > 4 || (args.len() == 4 && lower(&args[3]) != "withvalues") {
            return Err(Reply::err(errors::SYNTAX));
        }
        let withvalues = args.len() == 4;
        if withvalues && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&l) {
            return Err(Reply::err(OUT_OF_RANGE_PLAIN));
        }
        let resp3 = ctx.resp3;
        let Some(len) = read(ctx, &args[1])?.map(|h| h.len()) else {
            return Ok(Reply::Array(Vec::new()));
        };
        let count = l.unsigned_abs();
        if count == 0 {
            return Ok(Reply::Array(Vec::new()));
        }
        let indexes = random_indexes(ctx, len, l)?;
        let Some(h) = read(ctx, &args[1])? else {
            return Ok(Reply::Array(Vec::new()));
        };
        let mut out = Vec::with_capacity(indexes.len() * if withvalues { 2 } else { 1 });
        for i in indexes {
            let Some((f, v)) = h.get_index(i) else {
                continue;
            };
            let (f, v) = (Reply::Bulk(f.clone()), Reply::Bulk(v.clone()));
            match (withvalues, resp3) {
                (false, _) => out.push(f),
                (true, true) => out.push(Reply::Array(vec![f, v])),
                (true, false) => out.extend([f, v]),
            }
        }
        Ok(Reply::Array(out))
    })())
}

/// Where a field whose TTL changes goes in the profile's hashes.
pub(super) fn field_ttl_order(profile: &Profile) -> TtlOrder {
    match profile.field_ttl {
        FieldTtlDialect::Redis => TtlOrder::ByExpiry,
        FieldTtlDialect::Valkey => TtlOrder::Unchanged,
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::commands::TestServer;
    use crate::engine::keyspace::Value;
    use crate::engine::reply::Reply;

    fn set_string(s: &mut TestServer, key: &str) {
        s.keyspace
            .db_mut(0)
            .set(key.as_bytes().to_vec(), Value::Str(b"x".to_vec()));
    }
    fn exists(s: &TestServer, key: &str) -> bool {
        s.keyspace.db(0).contains(key.as_bytes(), s.now_ms)
    }

    fn b(s: &str) -> Reply {
        Reply::Bulk(s.as_bytes().to_vec())
    }
    fn err(s: &str) -> Reply {
        Reply::Error(s.into())
    }
    fn bulks(items: &[&str]) -> Reply {
        Reply::Array(items.iter().map(|s| b(s)).collect())
    }

    #[test]
    fn hset_hget_order_and_errors() {
        let mut s = TestServer::new();
        assert_eq!(s.call(&["HSET", "h", "b", "1", "a", "2"]), Reply::Int(2));
        assert_eq!(s.call(&["HSET", "h", "b", "3", "c", "4"]), Reply::Int(1));
        assert_eq!(s.call(&["HKEYS", "h"]), bulks(&["b", "a", "c"]));
        assert_eq!(s.call(&["HVALS", "h"]), bulks(&["3", "2", "4"]));
        assert_eq!(
            s.call(&["HSET", "h", "a"]),
            err("ERR Wrong number of args calling Redis command from script")
        );
        assert_eq!(
            s.call(&["HSET", "h", "a", "b", "c"]),
            err("ERR wrong number of arguments for 'hset' command")
        );
        assert_eq!(
            s.call(&["HMSET", "h", "a", "b", "c"]),
            err("ERR wrong number of arguments for 'hmset' command")
        );
        assert_eq!(s.call(&["HMSET", "h", "d", "5"]), Reply::ok());
        assert_eq!(s.call(&["HGET", "h", "d"]), b("5"));
        assert_eq!(s.call(&["HGET", "h", "zz"]), Reply::Nil);
        assert_eq!(s.call(&["HGET", "nokey", "zz"]), Reply::Nil);
        assert_eq!(
            s.call(&["HMGET", "h", "a", "zz"]),
            Reply::Array(vec![b("2"), Reply::Nil])
        );
        assert_eq!(
            s.call(&["HMGET", "nokey", "a"]),
            Reply::Array(vec![Reply::Nil])
        );
        assert_eq!(s.call(&["HDEL", "h", "a", "zz"]), Reply::Int(1));
        assert_eq!(s.call(&["HKEYS", "h"]), bulks(&["b", "c", "d"]));
        assert_eq!(s.call(&["HLEN", "h"]), Reply::Int(3));
        assert_eq!(s.call(&["HEXISTS", "h", "b"]), Reply::Int(1));
        assert_eq!(s.call(&["HEXISTS", "h", "a"]), Reply::Int(0));
        assert_eq!(s.call(&["HSTRLEN", "h", "b"]), Reply::Int(1));
        assert_eq!(s.call(&["HSTRLEN", "h", "nope"]), Reply::Int(0));
        assert_eq!(s.call(&["HSETNX", "h", "b", "x"]), Reply::Int(0));
        assert_eq!(s.call(&["HSETNX", "h", "e", "x"]), Reply::Int(1));
        assert_eq!(s.call(&["HDEL", "h", "b", "c", "d", "e"]), Reply::Int(4));
        assert!(!exists(&s, "h"));
    }

    #[test]
    fn hgetall_shapes() {
        let mut s = TestServer::new();
        assert_eq!(s.call(&["HGETALL", "h"]), Reply::Map(vec![]));
        s.call(&["HSET", "h", "f", "v"]);
        assert_eq!(
            s.call(&["HGETALL", "h"]),
            Reply::Map(vec![(b("f"), b("v"))])
        );
        assert_eq!(s.call(&["HKEYS", "nokey"]), Reply::Array(vec![]));
    }

    #[test]
    fn wrong_type() {
        let mut s = TestServer::new();
        set_string(&mut s, "str");
        let wt = err("WRONGTYPE Operation against a key holding the wrong kind of value");
        for cmd in [
            &["HGET", "str", "a"][..],
            &["HSET", "str", "a", "b"],
            &["HMGET", "str", "a"],
            &["HGETALL", "str"],
            &["HLEN", "str"],
            &["HINCRBY", "str", "f", "1"],
            &["HSCAN", "str", "0", "foo"],
            &["HRANDFIELD", "str", "0"],
        ] {
            assert_eq!(s.call(cmd), wt, "{cmd:?}");
        }
        // Argument errors come before the type check.
        assert_eq!(
            s.call(&["HINCRBY", "str", "f", "x"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            s.call(&["HRANDFIELD", "str", "abc"]),
            err("ERR value is not an integer or out of range")
        );
    }

    #[test]
    fn hincrby_and_float() {
        let mut s = TestServer::new();
        s.call(&["HSET", "h", "s", "v1", "n", "10", "f", "1.5"]);
        assert_eq!(
            s.call(&["HINCRBY", "h", "s", "1"]),
            err("ERR hash value is not an integer")
        );
        assert_eq!(
            s.call(&["HINCRBY", "h", "n", "abc"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            s.call(&["HINCRBY", "h", "n", "9223372036854775807"]),
            err("ERR increment or decrement would overflow")
        );
        assert_eq!(s.call(&["HINCRBY", "h", "new", "-5"]), Reply::Int(-5));
        assert_eq!(s.call(&["HINCRBY", "h", "n", "5"]), Reply::Int(15));
        assert_eq!(
            s.call(&["HINCRBYFLOAT", "h", "s", "1"]),
            err("ERR hash value is not a float")
        );
        assert_eq!(
            s.call(&["HINCRBYFLOAT", "h", "n", "inf"]),
            err("ERR value is NaN or Infinity")
        );
        assert_eq!(
            s.call(&["HINCRBYFLOAT", "h", "n", "nan"]),
            err("ERR value is not a valid float")
        );
        assert_eq!(
            s.call(&["HINCRBYFLOAT", "h", "n", " 1"]),
            err("ERR value is not a valid float")
        );
        assert_eq!(s.call(&["HINCRBYFLOAT", "h", "f", "0.1"]), b("1.6"));
        assert_eq!(s.call(&["HINCRBYFLOAT", "h", "n", "-15"]), b("0"));
        assert_eq!(s.call(&["HINCRBYFLOAT", "h", "g", "3"]), b("3"));
        assert_eq!(s.call(&["HINCRBYFLOAT", "h", "g", "2.5e3"]), b("2503"));
        // Long-double arithmetic and `%.17Lf`, noise included (values from Redis 7.0.15).
        for (incr, want) in [
            ("1000000.1", "1000000.10000000000002274"),
            ("0.2", "1000000.30000000000001137"),
        ] {
            assert_eq!(s.call(&["HINCRBYFLOAT", "h", "big", incr]), b(want));
        }
        for (incr, want) in [
            ("100.1", "100.1"),
            ("0.2", "100.3"),
            ("5.55", "105.85000000000000001"),
        ] {
            assert_eq!(s.call(&["HINCRBYFLOAT", "h", "c", incr]), b(want));
        }
        assert_eq!(
            s.call(&["HINCRBYFLOAT", "h", "d", "123456789.123"]),
            b("123456789.12299999999959255")
        );
        assert_eq!(s.call(&["HINCRBYFLOAT", "h", "e", "0x10"]), b("16"));
        assert_eq!(
            s.call(&["HINCRBYFLOAT", "h", "e", "1e-5000"]),
            err("ERR value is not a valid float")
        );
        assert_eq!(
            s.call(&["HINCRBYFLOAT", "h", "e", "1e5000"]),
            err("ERR value is not a valid float")
        );
        s.call(&["HSET", "h", "huge", "1e4932"]);
        assert_eq!(
            s.call(&["HINCRBYFLOAT", "h", "huge", "1e4932"]),
            err("ERR increment would produce NaN or Infinity")
        );
        s.call(&["HSET", "h", "tiny", "-0.000000000000000005"]);
        assert_eq!(
            s.call(&["HINCRBYFLOAT", "h", "tiny", "0.000000000000000001"]),
            b("0")
        );
        // A failed increment on a missing key leaves no key.
        assert_eq!(
            s.call(&["HINCRBYFLOAT", "k2", "g", "x"]),
            err("ERR value is not a valid float")
        );
        assert!(!exists(&s, "k2"));
    }

    #[test]
    fn long_double_sums() {
        // Expected texts from a C program printing `%.17Lf` of strtold(a) + strtold(b).
        let cases = [
            ("0.1", "0.2", "0.3"),
            ("-0.1", "0.1", "0"),
            ("1e-5", "3.0e-7", "0.0000103"),
            ("1e20", "0.1", "100000000000000000000"),
            ("-100.1", "12345.678", "12245.57800000000000029"),
            ("12345.678", "3.14159", "12348.81958999999999982"),
            ("1e-300", "12.75", "12.75"),
            ("9999999999999999999", "0.1", "9999999999999999999"),
            ("0.30000000000000004", "0.1", "0.40000000000000004"),
            ("1.0000000000000002", "0.1", "1.1000000000000002"),
            ("0.000000000000000005", "0.1", "0.10000000000000001"),
            ("0.000000000000000015", "0", "0.00000000000000002"),
            ("2.5e-17", "0", "0.00000000000000002"),
            ("-0.000000000000000005", "0.000000000000000001", "0"),
            (
                "4951760157141521099596496896",
                "0.1",
                "4951760157141521099596496896",
            ),
        ];
        use super::long_double::{add, format_human, parse};
        for (a, b, want) in cases {
            let (x, y) = (parse(a.as_bytes()).unwrap(), parse(b.as_bytes()).unwrap());
            assert_eq!(format_human(add(x, y)), want, "{a} + {b}");
        }
        let sum = format_human(add(parse(b"1e300").unwrap(), parse(b"5.55").unwrap()));
        assert!(
            sum.starts_with("10000000000000000000089973240795591938705239442732907479382600823")
        );
        assert_eq!(sum.len(), 301);
    }

    #[test]
    fn hscan() {
        let mut s = TestServer::new();
        s.call(&["HSET", "h", "f1", "a", "g", "b", "f2", "c"]);
        let all = Reply::Array(vec![b("0"), bulks(&["f1", "a", "g", "b", "f2", "c"])]);
        assert_eq!(s.call(&["HSCAN", "h", "0"]), all);
        assert_eq!(s.call(&["HSCAN", "h", "7", "COUNT", "1"]), all);
        assert_eq!(
            s.call(&["HSCAN", "h", "0", "MATCH", "f*"]),
            Reply::Array(vec![b("0"), bulks(&["f1", "a", "f2", "c"])])
        );
        assert_eq!(s.call(&["HSCAN", "h", "abc"]), err("ERR invalid cursor"));
        assert_eq!(s.call(&["HSCAN", "h", " 1"]), err("ERR invalid cursor"));
        assert_eq!(
            s.call(&["HSCAN", "h", "0", "COUNT", "0"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["HSCAN", "h", "0", "COUNT", "x"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            s.call(&["HSCAN", "h", "0", "MATCH"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["HSCAN", "nokey", "0", "COUNT", "0"]),
            Reply::Array(vec![b("0"), bulks(&[])])
        );
    }

    #[test]
    fn hscan_large_hash_visits_everything_despite_deletes() {
        let mut s = TestServer::new();
        for i in 0..600 {
            s.call(&["HSET", "h", &format!("f{i}"), "v"]);
        }
        let mut seen = std::collections::HashSet::new();
        let mut cursor = "0".to_string();
        loop {
            let Reply::Array(r) = s.call(&["HSCAN", "h", &cursor, "COUNT", "50"]) else {
                panic!()
            };
            let Reply::Bulk(c) = &r[0] else { panic!() };
            let Reply::Array(items) = &r[1] else { panic!() };
            for pair in items.chunks(2) {
                let Reply::Bulk(f) = &pair[0] else { panic!() };
                let f = String::from_utf8(f.clone()).unwrap();
                s.call(&["HDEL", "h", &f]);
                seen.insert(f);
            }
            cursor = String::from_utf8(c.clone()).unwrap();
            if cursor == "0" {
                break;
            }
        }
        assert_eq!(seen.len(), 600);
        assert!(!exists(&s, "h"));
    }

    #[test]
    fn hrandfield() {
        let mut s = TestServer::new();
        assert_eq!(s.call(&["HRANDFIELD", "h"]), Reply::Nil);
        assert_eq!(s.call(&["HRANDFIELD", "h", "3"]), Reply::Array(vec![]));
        s.call(&["HSET", "h", "a", "1", "b", "2", "c", "3"]);
        assert_eq!(s.call(&["HRANDFIELD", "h", "5"]), bulks(&["a", "b", "c"]));
        assert_eq!(
            s.call(&["HRANDFIELD", "h", "5", "WITHVALUES"]),
            bulks(&["a", "1", "b", "2", "c", "3"])
        );
        s.resp3 = true;
        assert_eq!(
            s.call(&["HRANDFIELD", "h", "3", "withvalues"]),
            Reply::Array(vec![
                bulks(&["a", "1"]),
                bulks(&["b", "2"]),
                bulks(&["c", "3"])
            ])
        );
        let Reply::Array(r) = s.call(&["HRANDFIELD", "h", "-5", "WITHVALUES"]) else {
            panic!()
        };
        assert_eq!(r.len(), 5);
        assert!(matches!(&r[0], Reply::Array(p) if p.len() == 2));
        s.resp3 = false;
        let Reply::Array(r) = s.call(&["HRANDFIELD", "h", "2"]) else {
            panic!()
        };
        assert_eq!(r.len(), 2);
        assert_ne!(r[0], r[1]);
        assert_eq!(s.call(&["HRANDFIELD", "h", "0"]), Reply::Array(vec![]));
        assert_eq!(
            s.call(&["HRANDFIELD", "h", "5", "foo"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["HRANDFIELD", "h", "abc"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            s.call(&["HRANDFIELD", "h", "-9223372036854775808"]),
            err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
        );
        assert_eq!(
            s.call(&["HRANDFIELD", "h", "4611686018427387904", "WITHVALUES"]),
            err("ERR value is out of range")
        );
        assert!(s
            .call(&["HRANDFIELD", "h", "-9223372036854775807"])
            .is_error());
        assert!(matches!(s.call(&["HRANDFIELD", "h"]), Reply::Bulk(_)));
    }
}
