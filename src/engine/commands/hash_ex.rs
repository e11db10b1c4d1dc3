//! HGETEX, HSETEX, HGETDEL: Redis 8.0 and Valkey 9, each with its own argument rules
//! (`FieldTtlDialect`). Profiles whose command table lacks them never reach these handlers.

use super::hash_ttl::{
    parse_fields, redis_expire_at, redis_num_fields, valkey_expire_at, REDIS_FIELDS_MISSING,
    REDIS_NUMFIELDS_MISMATCH, VALKEY_NUMFIELDS,
};
use super::hashes::{read, remove_field, write};
use super::{errors, flatten, int_arg, lower, until_nul, Command, Ctx};
use crate::engine::profile::FieldTtlDialect;
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("hgetdel", hgetdel),
    Command::new("hgetex", hgetex),
    Command::new("hsetex", hsetex),
];

/// What HGETEX / HSETEX do to the TTL of the fields they touch.
#[derive(Debug, Clone, Copy, PartialEq)]
enum TtlChange {
    /// HGETEX without an option; HSETEX without one drops the TTL as HSET does.
    None,
    /// Absolute time (Unix ms); at or before now the fields are deleted.
    At(i64),
    Persist,
    KeepTtl,
}

/// An expiry option's unit and base: (ms per unit, relative to now).
fn expiry_option(name: &str) -> Option<(i64, bool)> {
    match name {
        "ex" => Some((1000, true)),
        "px" => Some((1, true)),
        "exat" => Some((1000, false)),
        "pxat" => Some((1, false)),
        _ => None,
    }
}

/// Options Valkey reads before `FIELDS` (`parseExtendedCommandArgumentsOrReply`): an option is
/// refused when one it excludes was given (the same one again is allowed; the last value wins).
#[derive(Default)]
struct ValkeyOptions<'a> {
    expiry: Option<(&'static str, &'a [u8])>,
    persist: bool,
    keep_ttl: bool,
    nx: bool,
    xx: bool,
    fnx: bool,
    fxx: bool,
}

fn parse_valkey_options<'a>(
    options: &'a [Vec<u8>],
    setex: bool,
) -> Result<ValkeyOptions<'a>, Reply> {
    let mut o = ValkeyOptions::default();
    let syntax = || Reply::err(errors::SYNTAX);
    let mut i = 0;
    while i < options.len() {
        let name = lower(&options[i]);
        let other_expiry = |o: &ValkeyOptions, mine: &str| {
            o.persist || o.keep_ttl || o.expiry.is_some_and(|(n, _)| n != mine)
        };
        match name.as_str() {
            "nx" if setex && !o.xx => o.nx = true,
            "xx" if setex && !o.nx => o.xx = true,
            "fnx" if setex && !o.fxx => o.fnx = true,
            "fxx" if setex && !o.fnx => o.fxx = true,
            "keepttl" if setex && !o.persist && o.expiry.is_none() => o.keep_ttl = true,
            "persist" if !setex && !o.keep_ttl && o.expiry.is_none() => o.persist = true,
            n @ ("ex" | "px" | "exat" | "pxat") if !other_expiry(&o, n) => {
                let value = options.get(i + 1).ok_or_else(syntax)?;
                let n = ["ex", "px", "exat", "pxat"]
                    .into_iter()
                    .find(|k| *k == n)
                    .expect("listed");
                o.expiry = Some((n, value));
                i += 1;
            }
            _ => return Err(syntax()),
        }
        i += 1;
    }
    Ok(o)
}

/// Valkey's search for the first `FIELDS` (from the command name on, up to the last argument).
fn valkey_fields_at(args: &[Vec<u8>]) -> Option<usize> {
    (0..args.len().saturating_sub(1)).find(|&i| lower(&args[i]) == "fields")
}

/// The TTL change of a Valkey option set, its time read now (after the type check).
fn valkey_change(ctx: &Ctx, args: &[Vec<u8>], o: &ValkeyOptions) -> Result<TtlChange, Reply> {
    if o.persist {
        return Ok(TtlChange::Persist);
    }
    if o.keep_ttl {
        return Ok(TtlChange::KeepTtl);
    }
    let Some((name, value)) = o.expiry else {
        return Ok(TtlChange::None);
    };
    let (unit, relative) = expiry_option(name).expect("an expiry option");
    let base = if relative { ctx.now_ms } else { 0 };
    Ok(TtlChange::At(valkey_expire_at(args, value, base, unit)?))
}

// HGETDEL key FIELDS n field...: the values, and the fields deleted.
fn hgetdel(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        if ctx.profile.field_ttl == FieldTtlDialect::Redis {
            read(ctx, &args[1])?;
        }
        let first = parse_fields(ctx, args, VALKEY_NUMFIELDS)?;
        let now = ctx.now_ms;
        let Some(h) = read(ctx, &args[1])? else {
            return Ok(Reply::Array(
                args[first..].iter().map(|_| Reply::Nil).collect(),
            ));
        };
        let replies = args[first..]
            .iter()
            .map(|f| {
                let value = h.get(f).cloned();
                remove_field(h, f);
                value.map_or(Reply::Nil, Reply::Bulk)
            })
            .collect();
        if h.is_empty() {
            ctx.db().remove(&args[1], now);
        }
        Ok(Reply::Array(replies))
    })())
}

/// Redis 8.0 HGETEX: `key [EX s | PX ms | EXAT t | PXAT t | PERSIST] FIELDS n field...`.
fn parse_hgetex_redis(ctx: &Ctx, args: &[Vec<u8>]) -> Result<(TtlChange, usize), Reply> {
    let option = lower(&args[2]);
    let (change, fields_at) = if let Some((unit, relative)) = expiry_option(&option) {
        let base = if relative { ctx.now_ms } else { 0 };
        (
            TtlChange::At(redis_expire_at(args, &args[3], base, unit)?),
            4,
        )
    } else if option == "persist" {
        (TtlChange::Persist, 3)
    } else {
        (TtlChange::None, 2)
    };
    if args.get(fields_at).is_none_or(|a| lower(a) != "fields") {
        return Err(Reply::err(REDIS_FIELDS_MISSING));
    }
    let count = args
        .get(fields_at + 1)
        .ok_or_else(|| Reply::err(REDIS_FIELDS_MISSING))?;
    let n = redis_num_fields(count, "Number of fields must be a positive integer")?;
    if n != args.len() - fields_at - 2 {
        return Err(Reply::err(REDIS_NUMFIELDS_MISMATCH));
    }
    Ok((change, fields_at + 2))
}

/// Valkey 9 HGETEX: options in any order before `FIELDS`.
fn parse_hgetex_valkey(ctx: &mut Ctx, args: &[Vec<u8>]) -> Result<(TtlChange, usize), Reply> {
    let mut options = ValkeyOptions::default();
    let mut n: i64 = -1;
    let mut first = args.len();
    if let Some(at) = valkey_fields_at(args) {
        options = parse_valkey_options(&args[2.min(at)..at], false)?;
        n = int_arg(&args[at + 1])?;
        first = at + 2;
    }
    if n == 0 || n != (args.len() - first) as i64 {
        return Err(Reply::err(VALKEY_NUMFIELDS));
    }
    read(ctx, &args[1])?;
    Ok((valkey_change(ctx, args, &options)?, first))
}

fn hgetex(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let (change, first) = match ctx.profile.field_ttl {
            FieldTtlDialect::Redis => {
                read(ctx, &args[1])?;
                parse_hgetex_redis(ctx, args)?
            }
            FieldTtlDialect::Valkey => parse_hgetex_valkey(ctx, args)?,
        };
        let now = ctx.now_ms;
        let order = super::hashes::field_ttl_order(ctx.profile);
        let Some(h) = read(ctx, &args[1])? else {
            return Ok(Reply::Array(
                args[first..].iter().map(|_| Reply::Nil).collect(),
            ));
        };
        let mut replies = Vec::with_capacity(args.len() - first);
        for f in &args[first..] {
            let Some(value) = h.get(f).cloned() else {
                replies.push(Reply::Nil);
                continue;
            };
            match change {
                TtlChange::At(at) if at <= now => {
                    remove_field(h, f);
                }
                TtlChange::At(at) => h.set_field_expire(f, at, order),
                TtlChange::Persist => {
                    h.persist(f, order);
                }
                TtlChange::None | TtlChange::KeepTtl => {}
            }
            replies.push(Reply::Bulk(value));
        }
        if h.is_empty() {
            ctx.db().remove(&args[1], now);
        }
        Ok(Reply::Array(replies))
    })())
}

/// What HSETEX was asked: key and field conditions, the TTL change, where the pairs start.
struct SetexRequest {
    key_nx: bool,
    key_xx: bool,
    fnx: bool,
    fxx: bool,
    change: TtlChange,
    first: usize,
}

/// Redis 8.0 HSETEX: `key [FNX|FXX] [EX|PX|EXAT|PXAT t | KEEPTTL] FIELDS n field value...`,
/// options in any order, each kind once.
fn parse_hsetex_redis(ctx: &Ctx, args: &[Vec<u8>]) -> Result<SetexRequest, Reply> {
    let mut request = SetexRequest {
        key_nx: false,
        key_xx: false,
        fnx: false,
        fxx: false,
        change: TtlChange::None,
        first: args.len(),
    };
    let only_one_expiry =
        || Reply::err("ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified");
    let mut i = 2;
    loop {
        let Some(arg) = args.get(i) else {
            return Err(Reply::err(REDIS_FIELDS_MISSING));
        };
        let name = lower(arg);
        match name.as_str() {
            "fields" => {
                let n = args
                    .get(i + 1)
                    .and_then(|a| int_arg(a).ok())
                    .filter(|n| *n > 0)
                    .ok_or_else(|| Reply::err("ERR invalid number of fields"))?;
                if n.checked_mul(2) != Some((args.len() - i - 2) as i64) {
                    return Err(Reply::err(errors::wrong_args("hsetex")));
                }
                request.first = i + 2;
                return Ok(request);
            }
            "fnx" | "fxx" => {
                if request.fnx || request.fxx {
                    return Err(Reply::err(
                        "ERR Only one of FXX or FNX arguments can be specified",
                    ));
                }
                request.fnx = name == "fnx";
                request.fxx = name == "fxx";
                i += 1;
            }
            "keepttl" => {
                if request.change != TtlChange::None {
                    return Err(only_one_expiry());
                }
                request.change = TtlChange::KeepTtl;
                i += 1;
            }
            n => match expiry_option(n) {
                Some((unit, relative)) => {
                    if request.change != TtlChange::None {
                        return Err(only_one_expiry());
                    }
                    let value = args
                        .get(i + 1)
                        .ok_or_else(|| Reply::err(errors::NOT_INTEGER))?;
                    let base = if relative { ctx.now_ms } else { 0 };
                    request.change = TtlChange::At(redis_expire_at(args, value, base, unit)?);
                    i += 2;
                }
                None => {
                    return Err(Reply::err(format!(
                        "ERR unknown argument: {}",
                        String::from_utf8_lossy(until_nul(arg))
                    )))
                }
            },
        }
    }
}

/// Valkey 9 HSETEX: `key [NX|XX] [FNX|FXX] [EX|PX|EXAT|PXAT t | KEEPTTL] FIELDS n field value...`.
fn parse_hsetex_valkey(ctx: &mut Ctx, args: &[Vec<u8>]) -> Result<SetexRequest, Reply> {
    let mut options = ValkeyOptions::default();
    let mut n: i64 = 0;
    let mut first = args.len();
    if let Some(at) = valkey_fields_at(args) {
        options = parse_valkey_options(&args[2.min(at)..at], true)?;
        n = int_arg(&args[at + 1])?;
        first = at + 2;
    }
    if n <= 0 || n.checked_mul(2) != Some((args.len() - first) as i64) {
        return Err(Reply::err(VALKEY_NUMFIELDS));
    }
    read(ctx, &args[1])?;
    Ok(SetexRequest {
        key_nx: options.nx,
        key_xx: options.xx,
        fnx: options.fnx,
        fxx: options.fxx,
        change: valkey_change(ctx, args, &options)?,
        first,
    })
}

fn hsetex(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let request = match ctx.profile.field_ttl {
            FieldTtlDialect::Redis => {
                let r = parse_hsetex_redis(ctx, args)?;
                read(ctx, &args[1])?;
                r
            }
            FieldTtlDialect::Valkey => parse_hsetex_valkey(ctx, args)?,
        };
        let now = ctx.now_ms;
        let order = super::hashes::field_ttl_order(ctx.profile);
        let pairs = &args[request.first..];
        let existing = read(ctx, &args[1])?;
        if (request.key_nx && existing.is_some()) || (request.key_xx && existing.is_none()) {
            return Ok(Reply::Int(0));
        }
        let has = |f: &Vec<u8>| existing.as_ref().is_some_and(|h| h.contains_key(f));
        let fields = || pairs.chunks(2).map(|p| &p[0]);
        if (request.fnx && fields().any(has)) || (request.fxx && !fields().all(has)) {
            return Ok(Reply::Int(0));
        }
        if let TtlChange::At(at) = request.change {
            if at <= now {
                // A time already past deletes the fields (and the key when none is left).
                if let Some(h) = read(ctx, &args[1])? {
                    for f in fields() {
                        remove_field(h, f);
                    }
                    if h.is_empty() {
                        ctx.db().remove(&args[1], now);
                    }
                }
                return Ok(Reply::Int(1));
            }
        }
        let h = write(ctx, &args[1])?;
        for pair in pairs.chunks(2) {
            let keep = request.change == TtlChange::KeepTtl;
            h.set_value(pair[0].clone(), pair[1].clone(), keep, order);
            if let TtlChange::At(at) = request.change {
                h.set_field_expire(&pair[0], at, order);
            }
        }
        Ok(Reply::Int(1))
    })())
}
