//! generic commands: the keyspace family (DEL, EXISTS, TYPE, EXPIRE & co, TTL, RENAME, COPY,
//! MOVE, KEYS, SCAN, RANDOMKEY, DBSIZE, OBJECT), as `src/db.c`, `src/expire.c` and
//! `src/object.c` of Redis 7.0.15 behave.

use super::{errors, filter_match, flatten, int_arg, lower, Command, Ctx};
use crate::engine::keyspace::{Entry, Value, DATABASES};
use crate::engine::number;
use crate::engine::profile::{Embed, StringRules};
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("del", del),
    Command::new("unlink", del),
    Command::new("exists", exists),
    Command::new("touch", exists),
    Command::new("type", type_cmd),
    Command::new("expire", expire),
    Command::new("pexpire", expire),
    Command::new("expireat", expire),
    Command::new("pexpireat", expire),
    Command::new("ttl", ttl),
    Command::new("pttl", ttl),
    Command::new("expiretime", ttl),
    Command::new("pexpiretime", ttl),
    Command::new("persist", persist),
    Command::new("rename", rename),
    Command::new("renamenx", rename),
    Command::new("copy", copy),
    Command::new("move", move_cmd),
    Command::new("keys", keys),
    Command::new("scan", scan),
    Command::new("randomkey", randomkey),
    Command::new("dbsize", dbsize),
    Command::new("object|encoding", object_encoding),
    Command::new("object|refcount", object_refcount),
    Command::new("object|idletime", object_idletime),
    Command::new("object|freq", object_freq),
    Command::new("object|help", object_help),
];

const NX_XX_GT_LT: &str = "ERR NX and XX, GT or LT options at the same time are not compatible";
const GT_AND_LT: &str = "ERR GT and LT options at the same time are not compatible";
const SAME_OBJECT: &str = "ERR source and destination objects are the same";
const INVALID_CURSOR: &str = "ERR invalid cursor";
const FREQ_NOT_LFU: &str = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. \
Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";
/// `OBJECT REFCOUNT` of a shared integer object (`OBJ_SHARED_REFCOUNT`).
const SHARED_REFCOUNT: i64 = i32::MAX as i64;
/// Integers below this are shared objects (`OBJ_SHARED_INTEGERS`).
const SHARED_INTEGERS: i64 = 10_000;

/// The type names SCAN TYPE knows (`obj_type_name`), for a profile that checks them.
const SCAN_TYPES: &[&str] = &["string", "list", "set", "zset", "hash", "stream"];

/// Without the `HELP` entry: `help_reply` adds the profile's.
const OBJECT_HELP: &[&str] = &[
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
];

/// The command name as Redis's table spells it (error texts use it).
fn cmd_name(args: &[Vec<u8>]) -> String {
    lower(&args[0])
}

/// An argument as C code prints it with `%s`: up to the first NUL byte.
fn c_str(arg: &[u8]) -> String {
    String::from_utf8_lossy(super::until_nul(arg)).into_owned()
}

/// `getIntFromObjectOrReply`: a long that must also fit in a C int.
fn c_int_arg(arg: &[u8], msg: Option<&str>) -> Result<i64, Reply> {
    let v = number::parse_i64(arg).ok_or_else(|| Reply::err(msg.unwrap_or(errors::NOT_INTEGER)))?;
    if v < i32::MIN as i64 || v > i32::MAX as i64 {
        return Err(Reply::err(msg.unwrap_or(
            "ERR value is out of range, value must between -2147483648 and 2147483647",
        )));
    }
    Ok(v)
}

/// A database index argument (`selectDb` accepts `0..DATABASES`).
pub(super) fn db_index_arg(arg: &[u8]) -> Result<usize, Reply> {
    let id = c_int_arg(arg, None)?;
    usize::try_from(id)
        .ok()
        .filter(|&i| i < DATABASES)
        .ok_or_else(|| Reply::err(errors::DB_INDEX_OUT_OF_RANGE))
}

fn del(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let now = ctx.now_ms;
    let deleted = args[1..]
        .iter()
        .filter(|k| ctx.db().remove(k, now).is_some())
        .count();
    Reply::Int(deleted as i64)
}

/// EXISTS and TOUCH: count the live keys, repeats included.
fn exists(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let count = args[1..].iter().filter(|k| ctx.entry(k).is_some()).count();
    Reply::Int(count as i64)
}

fn type_cmd(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let name = ctx.value(&args[1]).map_or("none", |v| v.type_name());
    Reply::Status(name.into())
}

/// EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (`expireGenericCommand`).
fn expire(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(expire_inner(ctx, args))
}

fn expire_inner(ctx: &mut Ctx, args: &[Vec<u8>]) -> Result<Reply, Reply> {
    let name = cmd_name(args);
    let seconds = name == "expire" || name == "expireat";
    let base = if name.ends_with("at") {
        0
    } else {
        ctx.wall_ms()
    };
    // Options are checked before the time argument.
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for opt in &args[3..] {
        match lower(opt).as_str() {
            "nx" => nx = true,
            "xx" => xx = true,
            "gt" => gt = true,
            "lt" => lt = true,
            _ => return Err(Reply::err(format!("ERR Unsupported option {}", c_str(opt)))),
        }
    }
    if nx && (xx || gt || lt) {
        return Err(Reply::err(NX_XX_GT_LT));
    }
    if gt && lt {
        return Err(Reply::err(GT_AND_LT));
    }
    let invalid = || Reply::err(format!("ERR invalid expire time in '{name}' command"));
    let mut when = int_arg(&args[2])?;
    if seconds {
        when = when.checked_mul(1000).ok_or_else(invalid)?;
    }
    let when = when.checked_add(base).ok_or_else(invalid)?;
    let wall = ctx.wall_ms();
    let Some(entry) = ctx.entry(&args[1]) else {
        return Ok(Reply::Int(0));
    };
    let current = entry.expire_at_ms;
    let refused = (nx && current.is_some())
        || (xx && current.is_none())
        || (gt && current.is_none_or(|c| when <= c))
        || (lt && current.is_some_and(|c| when >= c));
    if refused {
        return Ok(Reply::Int(0));
    }
    // 7.0 compares with the real clock (`mstime()`), not the script's frozen time.
    if when <= wall {
        let now = ctx.now_ms;
        ctx.db().remove(&args[1], now);
    } else {
        entry.expire_at_ms = Some(when);
        entry.built.had_ttl = true;
    }
    Ok(Reply::Int(1))
}

/// TTL, PTTL, EXPIRETIME, PEXPIRETIME (`ttlGenericCommand`).
fn ttl(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let name = cmd_name(args);
    let ms = name.starts_with('p');
    let absolute = name.ends_with("expiretime");
    let wall = ctx.wall_ms();
    let Some(entry) = ctx.entry(&args[1]) else {
        return Reply::Int(-2);
    };
    let Some(at) = entry.expire_at_ms else {
        return Reply::Int(-1);
    };
    let t = if absolute {
        at
    } else {
        at.saturating_sub(wall)
    }
    .max(0);
    // Rounded to the nearest second; the real server gets this right even next to i64::MAX.
    let secs = ((i128::from(t) + 500) / 1000) as i64;
    Reply::Int(if ms { t } else { secs })
}

fn persist(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    match ctx.entry(&args[1]) {
        Some(e) if e.expire_at_ms.is_some() => {
            e.expire_at_ms = None;
            Reply::Int(1)
        }
        _ => Reply::Int(0),
    }
}

/// RENAME and RENAMENX: the value moves with its expiry.
fn rename(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let nx = cmd_name(args) == "renamenx";
    let (src, dst) = (&args[1], &args[2]);
    let now = ctx.now_ms;
    if ctx.entry(src).is_none() {
        return Reply::err(errors::NO_SUCH_KEY);
    }
    if src == dst {
        return if nx { Reply::Int(0) } else { Reply::ok() };
    }
    if nx && ctx.entry(dst).is_some() {
        return Reply::Int(0);
    }
    let db = ctx.db();
    let Some(entry) = db.remove(src, now) else {
        return Reply::err(errors::NO_SUCH_KEY);
    };
    db.insert_entry(dst.clone(), entry);
    if nx {
        Reply::Int(1)
    } else {
        Reply::ok()
    }
}

/// COPY source destination [DB index] [REPLACE].
fn copy(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(copy_inner(ctx, args))
}

fn copy_inner(ctx: &mut Ctx, args: &[Vec<u8>]) -> Result<Reply, Reply> {
    let mut replace = false;
    let mut dst_db = ctx.db_index;
    let mut i = 3;
    while i < args.len() {
        match lower(&args[i]).as_str() {
            "replace" => replace = true,
            "db" if i + 1 < args.len() => {
                dst_db = db_index_arg(&args[i + 1])?;
                i += 1;
            }
            _ => return Err(Reply::err(errors::SYNTAX)),
        }
        i += 1;
    }
    let (src, dst) = (&args[1], &args[2]);
    if dst_db == ctx.db_index && src == dst {
        return Err(Reply::err(SAME_OBJECT));
    }
    let now = ctx.now_ms;
    if ctx.entry(src).is_none()
        || (!replace && ctx.keyspace.db_mut(dst_db).get_mut(dst, now).is_some())
    {
        return Ok(Reply::Int(0));
    }
    // Deep copy only once we know it will be stored.
    let Some(entry) = ctx.entry(src).cloned() else {
        return Ok(Reply::Int(0));
    };
    ctx.keyspace.db_mut(dst_db).insert_entry(dst.clone(), entry);
    Ok(Reply::Int(1))
}

/// MOVE key db: only when the key is absent from the target database.
fn move_cmd(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(move_inner(ctx, args))
}

fn move_inner(ctx: &mut Ctx, args: &[Vec<u8>]) -> Result<Reply, Reply> {
    let dst_db = db_index_arg(&args[2])?;
    if dst_db == ctx.db_index {
        return Err(Reply::err(SAME_OBJECT));
    }
    let key = &args[1];
    let now = ctx.now_ms;
    if ctx.entry(key).is_none() || ctx.keyspace.db_mut(dst_db).get_mut(key, now).is_some() {
        return Ok(Reply::Int(0));
    }
    let Some(entry) = ctx.db().remove(key, now) else {
        return Ok(Reply::Int(0));
    };
    ctx.keyspace.db_mut(dst_db).insert_entry(key.clone(), entry);
    Ok(Reply::Int(1))
}

fn keys(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let now = ctx.now_ms;
    let pattern = &args[1];
    let pattern = (pattern.as_slice() != b"*").then_some(pattern.as_slice());
    let star_limit = ctx.profile.glob_star_limit;
    let stop = &mut ctx.stop;
    let mut found: Vec<&Vec<u8>> = ctx
        .keyspace
        .db_mut(ctx.db_index)
        .keys(now)
        .filter(|k| filter_match(pattern, k, star_limit, stop))
        .collect();
    found.sort_unstable();
    Reply::bulks(found.into_iter().cloned())
}

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]. The cursor is a position in the
/// byte-ordered key list, so a full iteration is deterministic and ends with cursor "0".
fn scan(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(scan_inner(ctx, args))
}

fn scan_inner(ctx: &mut Ctx, args: &[Vec<u8>]) -> Result<Reply, Reply> {
    let cursor = number::scan_cursor(ctx.profile.numbers.scan_cursor, &args[1])
        .ok_or_else(|| Reply::err(INVALID_CURSOR))?;
    let mut count: i64 = 10;
    let mut pattern: Option<&[u8]> = None;
    let mut type_name: Option<String> = None;
    let mut i = 2;
    while i < args.len() {
        let has_value = i + 1 < args.len();
        match lower(&args[i]).as_str() {
            "count" if has_value => {
                count = int_arg(&args[i + 1])?;
                if count < 1 {
                    return Err(Reply::err(errors::SYNTAX));
                }
            }
            "match" if has_value => {
                pattern = Some(&args[i + 1])
                    .filter(|p| p.as_slice() != b"*")
                    .map(|p| p.as_slice());
            }
            "type" if has_value => {
                let name = c_str(&args[i + 1]).to_ascii_lowercase();
                // Valkey looks the name up among the types (`getObjectTypeByName`).
                if ctx.profile.scan_type_checked && !SCAN_TYPES.contains(&name.as_str()) {
                    return Err(Reply::err(format!(
                        "ERR unknown type name '{}'",
                        c_str(&args[i + 1])
                    )));
                }
                type_name = Some(name)
            }
            _ => return Err(Reply::err(errors::SYNTAX)),
        }
        i += 2;
    }
    let now = ctx.now_ms;
    let type_before_expiry = ctx.profile.scan_type_before_expiry;
    let star_limit = ctx.profile.glob_star_limit;
    let stop = &mut ctx.stop;
    let db = ctx.keyspace.db_mut(ctx.db_index);
    // Redis deletes the expired keys SCAN meets that pass MATCH (its TYPE check looks the key up,
    // which deletes it too); Valkey checks TYPE on the value first and reclaims only the keys
    // that pass both. Which ones it meets depends on its hash order: every one here.
    let expired: Vec<Vec<u8>> = db
        .raw_entries()
        .iter()
        .filter(|(k, e)| {
            e.expire_at_ms.is_some_and(|t| t <= now)
                && filter_match(pattern, k, star_limit, stop)
                && (!type_before_expiry
                    || type_name
                        .as_deref()
                        .is_none_or(|t| e.value.type_name() == t))
        })
        .map(|(k, _)| k.clone())
        .collect();
    for key in expired {
        db.expire_if_needed(&key, now);
    }
    let mut all: Vec<&Vec<u8>> = db.keys(now).collect();
    let total = all.len();
    let start = usize::try_from(cursor).unwrap_or(usize::MAX);
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    let mut page: &mut [&Vec<u8>] = &mut [];
    if start < all.len() {
        // Select the keys at positions start..start+count without sorting the whole keyspace.
        all.select_nth_unstable(start);
        let rest = &mut all[start..];
        let take = count.min(rest.len());
        if take < rest.len() {
            rest.select_nth_unstable(take);
        }
        page = &mut rest[..take];
        page.sort_unstable();
    }
    let next = if start < total && start.saturating_add(count) < total {
        start + count
    } else {
        0
    };
    let picked: Vec<Vec<u8>> = page
        .iter()
        .filter(|k| filter_match(pattern, k, star_limit, stop))
        .filter(|k| {
            type_name
                .as_deref()
                .is_none_or(|t| db.get(k, now).is_some_and(|e| e.value.type_name() == t))
        })
        .map(|k| (*k).clone())
        .collect();
    Ok(Reply::Array(vec![
        Reply::bulk(next.to_string()),
        Reply::bulks(picked),
    ]))
}

fn randomkey(ctx: &mut Ctx, _args: &[Vec<u8>]) -> Reply {
    let now = ctx.now_ms;
    // Redis deletes the expired keys it draws (which ones is chance: all here).
    ctx.db().purge_expired(now);
    let mut all: Vec<Vec<u8>> = ctx.keyspace.db(ctx.db_index).keys(now).cloned().collect();
    if all.is_empty() {
        return Reply::Nil;
    }
    // HashMap order varies between runs: pick by rank in byte order to stay reproducible.
    let n = ctx.rng.below(all.len());
    let (_, key, _) = all.select_nth_unstable(n);
    Reply::Bulk(std::mem::take(key))
}

fn dbsize(ctx: &mut Ctx, _args: &[Vec<u8>]) -> Reply {
    Reply::Int(ctx.db().held() as i64)
}

/// The encoding Redis would report for a value with these contents (default config): sets
/// and lists keep the encoding their history gave them.
pub(super) fn encoding(value: &Value) -> &'static str {
    match value {
        Value::Str(s) if s.len() <= 20 && number::parse_i64(s).is_some() => "int",
        Value::Str(s) if s.len() <= 44 => "embstr",
        Value::Str(_) => "raw",
        // hash-max-listpack-entries is 512 in 7.0 (the zset limit is 128); one way.
        Value::Hash(h) if h.is_hashtable() => "hashtable",
        Value::Hash(_) => "listpack",
        Value::List(l) => l.encoding().name(),
        // Sets and sorted sets convert one way (a removal never converts them back): their
        // values remember it.
        Value::Set(s) => s.encoding().name(),
        Value::ZSet(z) => z.encoding(),
        Value::Stream(_) => "stream",
    }
}

/// Look the OBJECT key up: `None` is the nil reply for a missing key.
fn object_entry<'a>(ctx: &'a mut Ctx, key: &[u8]) -> Option<&'a Entry> {
    ctx.entry(key).map(|e| &*e)
}

/// The encoding of a key's value: a string a command grew in place is raw (commands/sds.rs).
pub(super) fn entry_encoding(entry: &Entry) -> &'static str {
    match (&entry.value, entry.raw) {
        (Value::Str(_), Some(_)) => "raw",
        (value, _) => encoding(value),
    }
}

/// The encoding the profile's server reports for the value at `key` (a string's depends on how
/// it was built, and on Valkey on its key: `StringRules`).
pub(super) fn entry_encoding_in(rules: &StringRules, key: &[u8], entry: &Entry) -> &'static str {
    let Value::Str(s) = &entry.value else {
        return entry_encoding(entry);
    };
    let int_encoded = !entry.built.from_argument || rules.arguments_int_encoded;
    match rules.embed {
        _ if entry.raw.is_some() => "raw",
        _ if int_encoded && s.len() <= 20 && number::parse_i64(s).is_some() => "int",
        Embed::UpTo(_) => encoding(&entry.value),
        Embed::WithKey {
            ttl_adds_expire_field,
            ..
        } => {
            let (k, v) = (key.len(), s.len());
            let embedded = if entry.built.with_expire_field {
                rules.embed.fits(k, v, true)
            } else if ttl_adds_expire_field && (entry.built.had_ttl || entry.expire_at_ms.is_some())
            {
                // Built without the field, then given a TTL: the field went into the room
                // jemalloc's size class left, or the value was built again with it.
                let bytes = rules.embed.allocation(k, v, false);
                rules.embed.fits(k, v, false)
                    && (super::memory::jemalloc_size(bytes) >= bytes + 8
                        || rules.embed.fits(k, v, true))
            } else {
                rules.embed.fits(k, v, false)
            };
            if embedded {
                "embstr"
            } else {
                "raw"
            }
        }
    }
}

fn object_encoding(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let dialect = ctx.profile.field_ttl;
    let rules = ctx.profile.strings;
    let key = &args[2];
    object_entry(ctx, key).map_or(Reply::Nil, |e| {
        Reply::bulk(super::hash_ttl::encoding_with_field_ttls(
            &e.value,
            entry_encoding_in(rules, key, e),
            dialect,
        ))
    })
}

fn object_refcount(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let shared_integers = ctx.profile.strings.shared_integers;
    let Some(e) = object_entry(ctx, &args[2]) else {
        return Reply::Nil;
    };
    // Small non-negative integers are the server's shared objects (Redis).
    let shared = match &e.value {
        _ if !shared_integers => false,
        Value::Str(s) if s.len() <= 20 => {
            number::parse_i64(s).is_some_and(|n| (0..SHARED_INTEGERS).contains(&n))
        }
        _ => false,
    };
    Reply::Int(if shared { SHARED_REFCOUNT } else { 1 })
}

fn object_idletime(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    // A script runs in one go: no key has been idle for a measurable time in the sandbox.
    object_entry(ctx, &args[2]).map_or(Reply::Nil, |_| Reply::Int(0))
}

fn object_freq(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    // The default maxmemory-policy (noeviction) is not an LFU policy.
    object_entry(ctx, &args[2]).map_or(Reply::Nil, |_| Reply::err(FREQ_NOT_LFU))
}

fn object_help(ctx: &mut Ctx, _args: &[Vec<u8>]) -> Reply {
    super::help::help_reply(ctx, OBJECT_HELP) // the HELP line follows the profile
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::commands::TestServer;
    use crate::engine::keyspace::{HashValue, SetValue, ZSetValue};
    use crate::engine::profile::CursorSyntax;

    fn int(n: i64) -> Reply {
        Reply::Int(n)
    }
    fn err(s: &str) -> Reply {
        Reply::err(s)
    }

    #[test]
    fn del_exists_type_touch() {
        let mut s = TestServer::new();
        seed(&mut s, "a", str_value("1"), None);
        seed(&mut s, "l", Value::List(vec![b"x".to_vec()].into()), None);
        assert_eq!(s.call(&["EXISTS", "a", "a", "nokey"]), int(2));
        assert_eq!(s.call(&["TOUCH", "a", "a", "nokey"]), int(2));
        assert_eq!(s.call(&["TYPE", "a"]), Reply::Status("string".into()));
        assert_eq!(s.call(&["TYPE", "nokey"]), Reply::Status("none".into()));
        assert_eq!(s.call(&["DEL", "a", "a", "nokey"]), int(1));
        assert_eq!(s.call(&["UNLINK", "a"]), int(0));
        assert_eq!(s.call(&["DBSIZE"]), int(1));
    }

    fn seed(s: &mut TestServer, key: &str, value: Value, ttl: Option<i64>) {
        let at = ttl.map(|t| s.now_ms + t);
        s.keyspace.db_mut(0).insert_entry(
            key.as_bytes().to_vec(),
            Entry {
                value,
                expire_at_ms: at,
                raw: None,
                built: Default::default(),
            },
        );
    }
    fn str_value(v: &str) -> Value {
        Value::Str(v.as_bytes().to_vec())
    }

    #[test]
    fn expire_options_and_errors() {
        let mut s = TestServer::new();
        seed(&mut s, "k", str_value("v"), None);
        assert_eq!(s.call(&["EXPIRE", "k", "10", "nx", "xx"]), err(NX_XX_GT_LT));
        assert_eq!(s.call(&["EXPIRE", "k", "10", "NX", "GT"]), err(NX_XX_GT_LT));
        assert_eq!(s.call(&["EXPIRE", "k", "10", "gt", "lt"]), err(GT_AND_LT));
        assert_eq!(
            s.call(&["EXPIRE", "k", "abc", "foo"]),
            err("ERR Unsupported option foo")
        );
        assert_eq!(s.call(&["EXPIRE", "k", "abc"]), err(errors::NOT_INTEGER));
        assert_eq!(
            s.call(&["EXPIRE", "k", "9223372036854775807"]),
            err("ERR invalid expire time in 'expire' command")
        );
        assert_eq!(
            s.call(&["PEXPIRE", "nokey", "9223372036854775807"]),
            err("ERR invalid expire time in 'pexpire' command")
        );
        assert_eq!(
            s.call(&["EXPIREAT", "k", "9223372036854775807"]),
            err("ERR invalid expire time in 'expireat' command")
        );
        assert_eq!(
            s.call(&["EXPIRE", "k", "9223372036854775"]),
            err("ERR invalid expire time in 'expire' command")
        );
        assert_eq!(s.call(&["TTL", "k"]), int(-1));
        assert_eq!(s.call(&["EXPIRE", "k", "100", "XX"]), int(0));
        assert_eq!(s.call(&["EXPIRE", "k", "100", "GT"]), int(0));
        assert_eq!(s.call(&["EXPIRE", "k", "100", "LT"]), int(1));
        assert_eq!(s.call(&["TTL", "k"]), int(100));
        assert_eq!(s.call(&["PTTL", "k"]), int(100_000));
        assert_eq!(s.call(&["EXPIRE", "k", "50", "NX"]), int(0));
        assert_eq!(s.call(&["EXPIRE", "k", "200", "LT"]), int(0));
        assert_eq!(s.call(&["EXPIRE", "k", "200", "GT"]), int(1));
        assert_eq!(s.call(&["PEXPIRE", "k", "200000", "GT"]), int(0));
        assert_eq!(s.call(&["EXPIRETIME", "k"]), int(s.now_ms / 1000 + 200));
        assert_eq!(s.call(&["PEXPIRETIME", "k"]), int(s.now_ms + 200_000));
        assert_eq!(s.call(&["PERSIST", "k"]), int(1));
        assert_eq!(s.call(&["PERSIST", "k"]), int(0));
        assert_eq!(s.call(&["EXPIRETIME", "k"]), int(-1));
        assert_eq!(s.call(&["EXPIRETIME", "nokey"]), int(-2));
        assert_eq!(s.call(&["PTTL", "nokey"]), int(-2));
        assert_eq!(s.call(&["EXPIRE", "nokey", "10"]), int(0));
        // A time in the past deletes the key and still answers 1.
        assert_eq!(s.call(&["PEXPIREAT", "k", "9223372036854775807"]), int(1));
        assert_eq!(s.call(&["EXPIRETIME", "k"]), int(9223372036854776));
        assert_eq!(s.call(&["PEXPIRETIME", "k"]), int(i64::MAX));
        assert_eq!(s.call(&["EXPIRE", "k", "-1"]), int(1));
        assert_eq!(s.call(&["EXISTS", "k"]), int(0));
        seed(&mut s, "k", str_value("v"), None);
        assert_eq!(s.call(&["PEXPIRE", "k", "-9223372036854775808"]), int(1));
        assert_eq!(s.call(&["EXISTS", "k"]), int(0));
    }

    #[test]
    fn ttl_rounds_seconds() {
        let mut s = TestServer::new();
        seed(&mut s, "k", str_value("v"), Some(1499));
        assert_eq!(s.call(&["TTL", "k"]), int(1));
        seed(&mut s, "k", str_value("v"), Some(1500));
        assert_eq!(s.call(&["TTL", "k"]), int(2));
    }

    #[test]
    fn rename_and_renamenx() {
        let mut s = TestServer::new();
        assert_eq!(s.call(&["RENAME", "nokey", "x"]), err(errors::NO_SUCH_KEY));
        assert_eq!(
            s.call(&["RENAMENX", "nokey", "x"]),
            err(errors::NO_SUCH_KEY)
        );
        seed(&mut s, "a", str_value("1"), Some(5000));
        seed(&mut s, "b", str_value("2"), None);
        assert_eq!(s.call(&["RENAME", "a", "a"]), Reply::ok());
        assert_eq!(s.call(&["RENAMENX", "a", "a"]), int(0));
        assert_eq!(s.call(&["RENAMENX", "a", "b"]), int(0));
        assert_eq!(s.call(&["RENAME", "a", "b"]), Reply::ok());
        assert_eq!(s.call(&["EXISTS", "a"]), int(0));
        assert_eq!(s.call(&["PTTL", "b"]), int(5000));
        assert_eq!(s.call(&["RENAMENX", "b", "c"]), int(1));
        assert_eq!(s.call(&["TYPE", "c"]), Reply::Status("string".into()));
    }

    #[test]
    fn copy_and_move() {
        let mut s = TestServer::new();
        seed(&mut s, "a", str_value("1"), Some(5000));
        seed(&mut s, "b", str_value("2"), None);
        assert_eq!(s.call(&["COPY", "a", "a"]), err(SAME_OBJECT));
        assert_eq!(s.call(&["COPY", "a", "a", "DB", "0"]), err(SAME_OBJECT));
        assert_eq!(
            s.call(&["COPY", "a", "c", "DB", "16"]),
            err(errors::DB_INDEX_OUT_OF_RANGE)
        );
        assert_eq!(
            s.call(&["COPY", "a", "c", "DB", "x"]),
            err(errors::NOT_INTEGER)
        );
        assert_eq!(s.call(&["COPY", "a", "c", "DB"]), err(errors::SYNTAX));
        assert_eq!(s.call(&["COPY", "a", "c", "foo"]), err(errors::SYNTAX));
        assert_eq!(s.call(&["COPY", "nokey", "c"]), int(0));
        assert_eq!(s.call(&["COPY", "a", "b"]), int(0));
        assert_eq!(s.call(&["COPY", "a", "b", "REPLACE"]), int(1));
        assert_eq!(s.call(&["PTTL", "b"]), int(5000));
        assert_eq!(s.call(&["COPY", "a", "a", "DB", "3"]), int(1));
        assert!(s.keyspace.db(3).contains(b"a", s.now_ms));
        assert_eq!(s.call(&["MOVE", "a", "0"]), err(SAME_OBJECT));
        assert_eq!(
            s.call(&["MOVE", "a", "16"]),
            err(errors::DB_INDEX_OUT_OF_RANGE)
        );
        assert_eq!(
            s.call(&["MOVE", "a", "99999999999"]),
            err("ERR value is out of range, value must between -2147483648 and 2147483647")
        );
        assert_eq!(s.call(&["MOVE", "a", "3"]), int(0));
        assert_eq!(s.call(&["MOVE", "nokey", "3"]), int(0));
        assert_eq!(s.call(&["MOVE", "b", "3"]), int(1));
        assert_eq!(s.call(&["EXISTS", "b"]), int(0));
        assert_eq!(
            s.keyspace
                .db(3)
                .get(b"b", s.now_ms)
                .and_then(|e| e.expire_at_ms),
            Some(s.now_ms + 5000)
        );
    }

    #[test]
    fn keys_scan_randomkey() {
        let mut s = TestServer::new();
        assert_eq!(s.call(&["RANDOMKEY"]), Reply::Nil);
        for k in ["b2", "a1", "c3", "b1"] {
            seed(&mut s, k, str_value("v"), None);
        }
        seed(&mut s, "h", Value::Hash(Default::default()), None);
        seed(&mut s, "gone", str_value("v"), Some(-1));
        assert_eq!(
            s.call(&["KEYS", "*"]),
            Reply::bulks(["a1", "b1", "b2", "c3", "h"])
        );
        assert_eq!(s.call(&["KEYS", "b?"]), Reply::bulks(["b1", "b2"]));
        assert_eq!(
            s.call(&["SCAN", "0", "COUNT", "2"]),
            Reply::Array(vec![Reply::bulk("2"), Reply::bulks(["a1", "b1"])])
        );
        assert_eq!(
            s.call(&["SCAN", "4", "COUNT", "2"]),
            Reply::Array(vec![Reply::bulk("0"), Reply::bulks(["h"])])
        );
        assert_eq!(
            s.call(&["SCAN", "", "MATCH", "b*", "TYPE", "STRING"]),
            Reply::Array(vec![Reply::bulk("0"), Reply::bulks(["b1", "b2"])])
        );
        assert_eq!(
            s.call(&["SCAN", "0", "TYPE", "hash"]),
            Reply::Array(vec![Reply::bulk("0"), Reply::bulks(["h"])])
        );
        assert_eq!(
            s.call(&["SCAN", "99", "COUNT", "2"]),
            Reply::Array(vec![Reply::bulk("0"), Reply::Array(vec![])])
        );
        assert_eq!(s.call(&["SCAN", "x"]), err(INVALID_CURSOR));
        assert_eq!(s.call(&["SCAN", " 1"]), err(INVALID_CURSOR));
        assert_eq!(
            s.call(&["SCAN", "18446744073709551616"]),
            err(INVALID_CURSOR)
        );
        assert_eq!(s.call(&["SCAN", "0", "COUNT", "0"]), err(errors::SYNTAX));
        assert_eq!(
            s.call(&["SCAN", "0", "COUNT", "x"]),
            err(errors::NOT_INTEGER)
        );
        assert_eq!(s.call(&["SCAN", "0", "MATCH"]), err(errors::SYNTAX));
        assert_eq!(
            s.call(&["SCAN", "3", "COUNT", "9223372036854775807"]),
            Reply::Array(vec![Reply::bulk("0"), Reply::bulks(["c3", "h"])])
        );
        assert_eq!(
            s.call(&["SCAN", "-1"]),
            Reply::Array(vec![Reply::bulk("0"), Reply::Array(vec![])])
        );
        let cursor = |arg: &[u8]| number::scan_cursor(CursorSyntax::Strtoul, arg);
        assert_eq!(cursor(b"+5"), Some(5));
        assert_eq!(cursor(b"-1"), Some(u64::MAX));
        assert_eq!(cursor(b"-"), None);
        let Reply::Bulk(k) = s.call(&["RANDOMKEY"]) else {
            panic!("RANDOMKEY")
        };
        assert!(s.keyspace.db(0).contains(&k, s.now_ms));
        assert_eq!(s.call(&["DBSIZE"]), int(5));
    }

    #[test]
    fn object_subcommands() {
        let mut s = TestServer::new();
        let cases: &[(&str, Value, &str)] = &[
            ("i", str_value("-12"), "int"),
            ("z0", str_value("012"), "embstr"),
            ("e", str_value(&"x".repeat(44)), "embstr"),
            ("r", str_value(&"x".repeat(45)), "raw"),
            ("big", str_value("9223372036854775808"), "embstr"),
            ("l", Value::List(Default::default()), "quicklist"),
            ("x", Value::Stream(Default::default()), "stream"),
        ];
        for (k, v, enc) in cases {
            seed(&mut s, k, v.clone(), None);
            assert_eq!(s.call(&["OBJECT", "ENCODING", k]), Reply::bulk(*enc), "{k}");
        }
        let mut set = SetValue::new();
        set.insert(b"1".to_vec(), None);
        set.insert(b"-2".to_vec(), None);
        assert_eq!(encoding(&Value::Set(set.clone())), "intset");
        set.insert(b"a".to_vec(), None);
        assert_eq!(encoding(&Value::Set(set)), "hashtable");
        let big_set: SetValue = {
            let mut b = SetValue::new();
            (0..513).for_each(|i| {
                b.insert(i.to_string().into_bytes(), None);
            });
            b
        };
        assert_eq!(encoding(&Value::Set(big_set)), "hashtable");
        let mut h = HashValue::new();
        h.insert(b"f".to_vec(), b"v".to_vec());
        assert_eq!(encoding(&Value::Hash(h.clone())), "listpack");
        h.insert(b"f".to_vec(), vec![b'v'; 65]);
        assert_eq!(encoding(&Value::Hash(h)), "hashtable");
        let h: HashValue = (0..513)
            .map(|i| (i.to_string().into_bytes(), b"v".to_vec()))
            .collect();
        assert_eq!(encoding(&Value::Hash(h)), "hashtable");
        let mut z = ZSetValue::new();
        z.insert(b"a".to_vec(), 1.0);
        seed(&mut s, "zs", Value::ZSet(z.clone()), None);
        assert_eq!(
            s.call(&["OBJECT", "ENCODING", "zs"]),
            Reply::bulk("listpack")
        );
        z.insert(vec![b'm'; 65], 2.0);
        assert_eq!(encoding(&Value::ZSet(z)), "skiplist");
        assert_eq!(s.call(&["OBJECT", "ENCODING", "nokey"]), Reply::Nil);
        assert_eq!(s.call(&["OBJECT", "REFCOUNT", "i"]), int(1));
        seed(&mut s, "n", str_value("123"), None);
        assert_eq!(s.call(&["OBJECT", "REFCOUNT", "n"]), int(2147483647));
        assert_eq!(s.call(&["OBJECT", "REFCOUNT", "nokey"]), Reply::Nil);
        assert_eq!(s.call(&["OBJECT", "IDLETIME", "n"]), int(0));
        assert_eq!(s.call(&["OBJECT", "FREQ", "n"]), err(FREQ_NOT_LFU));
        assert_eq!(s.call(&["OBJECT", "FREQ", "nokey"]), Reply::Nil);
        let Reply::Array(help) = s.call(&["OBJECT", "HELP"]) else {
            panic!("help")
        };
        assert_eq!(help.len(), 15);
        assert_eq!(help[14], Reply::Status("    Prints this help.".into()));
    }
}
