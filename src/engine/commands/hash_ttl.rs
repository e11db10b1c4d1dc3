//! Hash-field expiration: HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT, HTTL HPTTL
//! HEXPIRETIME HPEXPIRETIME, HPERSIST. Only the profiles whose command table lists them (Redis
//! 7.4, 8.0; Valkey 9) reach these handlers. Redis (t_hash.c @7.4.1) and Valkey 9 parse the
//! arguments differently and word their errors differently: `FieldTtlDialect` picks the rules.

use super::hashes::{read, remove_field};
use super::{errors, int_arg, lower, until_nul, Command, Ctx};
use crate::engine::profile::FieldTtlDialect;
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("hexpire", hexpire),
    Command::new("hpexpire", hpexpire),
    Command::new("hexpireat", hexpireat),
    Command::new("hpexpireat", hpexpireat),
    Command::new("httl", httl),
    Command::new("hpttl", hpttl),
    Command::new("hexpiretime", hexpiretime),
    Command::new("hpexpiretime", hpexpiretime),
    Command::new("hpersist", hpersist),
];

/// OBJECT ENCODING of a hash that has had a field TTL (even one since removed): Redis keeps a
/// small one as `listpackex`, Valkey moves it to a hash table for good.
pub(super) fn encoding_with_field_ttls(
    value: &crate::engine::keyspace::Value,
    plain: &'static str,
    dialect: FieldTtlDialect,
) -> &'static str {
    match value {
        crate::engine::keyspace::Value::Hash(h) if h.had_field_ttls() && plain == "listpack" => {
            match dialect {
                FieldTtlDialect::Redis => "listpackex",
                FieldTtlDialect::Valkey => "hashtable",
            }
        }
        _ => plain,
    }
}

/// Per-field replies, as both servers give them.
const NO_FIELD: i64 = -2;
const NO_TTL: i64 = -1;
const CONDITION_NOT_MET: i64 = 0;
const SET: i64 = 1;
const DELETED: i64 = 2;

/// Redis's `HFE_MAX_ABS_TIME_MSEC`: `EB_EXPIRE_TIME_MAX >> 2`, EB_EXPIRE_TIME_MAX = 2^48 - 1.
const REDIS_MAX_EXPIRE_MS: i64 = ((1i64 << 48) - 1) >> 2;

pub(super) const REDIS_FIELDS_MISSING: &str =
    "ERR Mandatory argument FIELDS is missing or not at the right position";
pub(super) const REDIS_NUMFIELDS_MISMATCH: &str =
    "ERR The `numfields` parameter must match the number of arguments";
pub(super) const VALKEY_NUMFIELDS: &str =
    "ERR numfields should be greater than 0 and match the provided number of fields";

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Condition {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

impl Condition {
    /// Whether a field whose expiry is `current` may get `new`. A field without a TTL counts as
    /// never expiring: LT passes, GT and XX fail.
    fn allows(self, current: Option<i64>, new: i64) -> bool {
        match current {
            None => !self.xx && !self.gt,
            Some(old) => {
                let refused = self.nx || (self.gt && old >= new) || (self.lt && old <= new);
                !refused
            }
        }
    }
}

fn expire_time_error(args: &[Vec<u8>]) -> Reply {
    Reply::err(format!(
        "ERR invalid expire time in '{}' command",
        lower(&args[0])
    ))
}

/// Redis's expiry argument (`hexpireGenericCommand`): not negative, and the absolute time
/// within `HFE_MAX_ABS_TIME_MSEC`.
pub(super) fn redis_expire_at(
    args: &[Vec<u8>],
    arg: &[u8],
    base_ms: i64,
    unit_ms: i64,
) -> Result<i64, Reply> {
    let mut time = int_arg(arg)?;
    if time < 0 {
        return Err(Reply::err("ERR invalid expire time, must be >= 0"));
    }
    if unit_ms == 1000 {
        if time > REDIS_MAX_EXPIRE_MS / 1000 {
            return Err(expire_time_error(args));
        }
        time *= 1000;
    }
    if time > REDIS_MAX_EXPIRE_MS - base_ms {
        return Err(expire_time_error(args));
    }
    Ok(time + base_ms)
}

/// Valkey's `convertExpireArgumentToUnixTime`: not negative, no overflow.
pub(super) fn valkey_expire_at(
    args: &[Vec<u8>],
    arg: &[u8],
    base_ms: i64,
    unit_ms: i64,
) -> Result<i64, Reply> {
    let mut time = int_arg(arg)?;
    if time < 0 {
        return Err(expire_time_error(args));
    }
    if unit_ms == 1000 {
        if time > i64::MAX / 1000 {
            return Err(expire_time_error(args));
        }
        time *= 1000;
    }
    if time > i64::MAX - base_ms {
        return Err(expire_time_error(args));
    }
    Ok(time + base_ms)
}

/// A whole positive count of fields, as `getRangeLongFromObjectOrReply(1, LONG_MAX, msg)`.
pub(super) fn redis_num_fields(arg: &[u8], message: &str) -> Result<usize, Reply> {
    match int_arg(arg) {
        Ok(n) if n >= 1 => Ok(n as usize),
        _ => Err(Reply::err(format!("ERR {message}"))),
    }
}

/// The arguments of HEXPIRE & co: the absolute expiry, the condition, where the fields start.
struct ExpireRequest {
    at_ms: i64,
    condition: Condition,
    first_field: usize,
}

/// Redis 7.4 / 8.0: `key time [NX|XX|GT|LT] FIELDS n field...` with FIELDS at a fixed place.
fn parse_redis(args: &[Vec<u8>], base_ms: i64, unit_ms: i64) -> Result<ExpireRequest, Reply> {
    let at_ms = redis_expire_at(args, &args[2], base_ms, unit_ms)?;
    let mut condition = Condition::default();
    let mut num_at = 4;
    match lower(&args[3]).as_str() {
        "nx" => condition.nx = true,
        "xx" => condition.xx = true,
        "gt" => condition.gt = true,
        "lt" => condition.lt = true,
        _ => num_at = 3,
    }
    if lower(&args[num_at]) != "fields" {
        return Err(Reply::err(REDIS_FIELDS_MISSING));
    }
    let count = args
        .get(num_at + 1)
        .ok_or_else(|| Reply::err(REDIS_FIELDS_MISSING))?;
    let n = redis_num_fields(count, "Parameter `numFields` should be greater than 0")?;
    if n != args.len() - num_at - 2 {
        return Err(Reply::err(REDIS_NUMFIELDS_MISMATCH));
    }
    Ok(ExpireRequest {
        at_ms,
        condition,
        first_field: num_at + 2,
    })
}

/// Valkey 9: `key time [NX|XX|GT|LT ...] FIELDS n field...`, options in any order before the
/// first `FIELDS`.
fn parse_valkey(args: &[Vec<u8>], base_ms: i64, unit_ms: i64) -> Result<ExpireRequest, Reply> {
    let fields_at = (3..args.len().saturating_sub(1)).find(|&i| lower(&args[i]) == "fields");
    let mut condition = Condition::default();
    let mut n: i64 = 0;
    let mut first_field = args.len();
    if let Some(at) = fields_at {
        for opt in &args[3..at] {
            match lower(opt).as_str() {
                "nx" => condition.nx = true,
                "xx" => condition.xx = true,
                "gt" => condition.gt = true,
                "lt" => condition.lt = true,
                _ => {
                    return Err(Reply::err(format!(
                        "ERR Unsupported option {}",
                        String::from_utf8_lossy(until_nul(opt))
                    )))
                }
            }
        }
        let c = condition;
        if c.nx && (c.xx || c.gt || c.lt) {
            return Err(Reply::err(
                "ERR NX and XX, GT or LT options at the same time are not compatible",
            ));
        }
        if c.gt && c.lt {
            return Err(Reply::err(
                "ERR GT and LT options at the same time are not compatible",
            ));
        }
        n = int_arg(&args[at + 1])?;
        first_field = at + 2;
    }
    if n == 0 || n != (args.len() - first_field) as i64 {
        return Err(Reply::err(VALKEY_NUMFIELDS));
    }
    Ok(ExpireRequest {
        at_ms: valkey_expire_at(args, &args[2], base_ms, unit_ms)?,
        condition,
        first_field,
    })
}

fn expire_generic(ctx: &mut Ctx, args: &[Vec<u8>], unit_ms: i64, relative: bool) -> Reply {
    let base_ms = if relative { ctx.now_ms } else { 0 };
    let dialect = ctx.profile.field_ttl;
    // Redis checks the key's type first, Valkey after reading the arguments.
    if dialect == FieldTtlDialect::Redis {
        if let Err(e) = read(ctx, &args[1]) {
            return e;
        }
    }
    let request = match dialect {
        FieldTtlDialect::Redis => parse_redis(args, base_ms, unit_ms),
        FieldTtlDialect::Valkey => parse_valkey(args, base_ms, unit_ms),
    };
    let request = match request {
        Ok(r) => r,
        Err(e) => return e,
    };
    let now = ctx.now_ms;
    let order = super::hashes::field_ttl_order(ctx.profile);
    let fields = &args[request.first_field..];
    let Some(h) = (match read(ctx, &args[1]) {
        Ok(h) => h,
        Err(e) => return e,
    }) else {
        return Reply::Array(fields.iter().map(|_| Reply::Int(NO_FIELD)).collect());
    };
    let mut replies = Vec::with_capacity(fields.len());
    for field in fields {
        let code = if !h.contains_key(field) {
            NO_FIELD
        } else if !request
            .condition
            .allows(h.field_expire_at(field), request.at_ms)
        {
            CONDITION_NOT_MET
        } else if request.at_ms <= now {
            remove_field(h, field);
            DELETED
        } else {
            h.set_field_expire(field, request.at_ms, order);
            SET
        };
        replies.push(Reply::Int(code));
    }
    if h.is_empty() {
        ctx.db().remove(&args[1], now);
    }
    Reply::Array(replies)
}

fn hexpire(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    expire_generic(ctx, args, 1000, true)
}
fn hpexpire(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    expire_generic(ctx, args, 1, true)
}
fn hexpireat(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    expire_generic(ctx, args, 1000, false)
}
fn hpexpireat(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    expire_generic(ctx, args, 1, false)
}

/// `key FIELDS n field...` of HTTL & co and HPERSIST: the index of the first field.
pub(super) fn parse_fields(
    ctx: &Ctx,
    args: &[Vec<u8>],
    valkey_mismatch: &str,
) -> Result<usize, Reply> {
    match ctx.profile.field_ttl {
        FieldTtlDialect::Redis => {
            if lower(&args[2]) != "fields" {
                return Err(Reply::err(REDIS_FIELDS_MISSING));
            }
            let n = redis_num_fields(&args[3], "Number of fields must be a positive integer")?;
            if n != args.len() - 4 {
                return Err(Reply::err(REDIS_NUMFIELDS_MISMATCH));
            }
        }
        FieldTtlDialect::Valkey => {
            if lower(&args[2]) != "fields" {
                return Err(Reply::err(errors::SYNTAX));
            }
            let n = int_arg(&args[3])?;
            if n == 0 || n != (args.len() - 4) as i64 {
                return Err(Reply::err(valkey_mismatch));
            }
        }
    }
    Ok(4)
}

/// HTTL HPTTL HEXPIRETIME HPEXPIRETIME: -2 no field, -1 no TTL, else the time.
fn ttl_generic(ctx: &mut Ctx, args: &[Vec<u8>], seconds: bool, relative: bool) -> Reply {
    let redis = ctx.profile.field_ttl == FieldTtlDialect::Redis;
    if redis {
        if let Err(e) = read(ctx, &args[1]) {
            return e;
        }
    }
    let first = match parse_fields(ctx, args, errors::SYNTAX) {
        Ok(i) => i,
        Err(e) => return e,
    };
    let base = if relative { ctx.now_ms } else { 0 };
    let h = match read(ctx, &args[1]) {
        Ok(h) => h,
        Err(e) => return e,
    };
    let reply = |field: &Vec<u8>| {
        let Some(h) = h.as_ref().filter(|h| h.contains_key(field)) else {
            return NO_FIELD;
        };
        let Some(at) = h.field_expire_at(field) else {
            return NO_TTL;
        };
        let left = at - base;
        match (seconds, redis) {
            (false, _) => left.max(0),
            // Redis rounds up, Valkey to the nearest second.
            (true, true) => (left + 999) / 1000,
            (true, false) => (left.max(0) + 500) / 1000,
        }
    };
    Reply::Array(args[first..].iter().map(|f| Reply::Int(reply(f))).collect())
}

fn httl(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    ttl_generic(ctx, args, true, true)
}
fn hpttl(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    ttl_generic(ctx, args, false, true)
}
fn hexpiretime(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    ttl_generic(ctx, args, true, false)
}
fn hpexpiretime(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    ttl_generic(ctx, args, false, false)
}

/// HPERSIST key FIELDS n field...: 1 removed, -1 no TTL, -2 no field.
fn hpersist(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    if ctx.profile.field_ttl == FieldTtlDialect::Redis {
        if let Err(e) = read(ctx, &args[1]) {
            return e;
        }
    }
    let first = match parse_fields(ctx, args, VALKEY_NUMFIELDS) {
        Ok(i) => i,
        Err(e) => return e,
    };
    let order = super::hashes::field_ttl_order(ctx.profile);
    let mut h = match read(ctx, &args[1]) {
        Ok(h) => h,
        Err(e) => return e,
    };
    let replies = args[first..]
        .iter()
        .map(|field| {
            Reply::Int(match h.as_mut().filter(|h| h.contains_key(field)) {
                None => NO_FIELD,
                Some(h) => {
                    if h.persist(field, order) {
                        SET
                    } else {
                        NO_TTL
                    }
                }
            })
        })
        .collect();
    Reply::Array(replies)
}
