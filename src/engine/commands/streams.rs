//! Stream commands (t_stream.c @7.0.15): XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM and XREAD
//! (BLOCK never blocks in a script; later servers' `+` ID and BLOCK rules come from the
//! profile's `streams`). Consumer groups are in stream_groups.rs.

use super::{errors, flatten, lower, Command, Ctx};
use crate::engine::keyspace::stream::{StreamFields, TrimStrategy, NODE_MAX_ENTRIES};
use crate::engine::keyspace::{StreamId, StreamValue, Value};
use crate::engine::number;
use crate::engine::profile::LastEntryId;
use crate::engine::reply::Reply;

pub(super) const INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";
const ID_TOO_SMALL: &str =
    "ERR The ID specified in XADD is equal or smaller than the target stream top item";
const ID_ZERO: &str = "ERR The ID specified in XADD must be greater than 0-0";
const EXHAUSTED: &str =
    "ERR The stream has exhausted the last possible ID, unable to add more items";
const MAXLEN_NEGATIVE: &str = "ERR The MAXLEN argument must be >= 0.";
const LIMIT_NEGATIVE: &str = "ERR The LIMIT argument must be >= 0.";
const BOTH_STRATEGIES: &str =
    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
const LIMIT_NO_STRATEGY: &str =
    "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy";
const LIMIT_NO_APPROX: &str = "ERR syntax error, LIMIT cannot be used without the special ~ option";
const XTRIM_NO_STRATEGY: &str = "ERR syntax error, XTRIM must be called with a trimming strategy";
pub(super) const BAD_START: &str = "ERR invalid start ID for the interval";
pub(super) const BAD_END: &str = "ERR invalid end ID for the interval";
const GROUP_ONLY: &str =
    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.";
const NOACK_ONLY: &str =
    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.";
pub(super) const GT_ONLY: &str = "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.";

pub static COMMANDS: &[Command] = &[
    Command::new("xadd", xadd),
    Command::new("xlen", xlen),
    Command::new("xrange", xrange),
    Command::new("xrevrange", xrevrange),
    Command::new("xdel", xdel),
    Command::new("xtrim", xtrim),
    Command::with_keys("xread", xread, xread_keys),
];

/// Redis `string2ull`: `string2ll` if it applies (negatives refused), else `strtoull` over the
/// whole string (leading spaces, `+`, `-` wrap-around and leading zeros accepted).
fn string2ull(s: &[u8]) -> Option<u64> {
    if let Some(v) = number::parse_i64(s) {
        return u64::try_from(v).ok();
    }
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r') {
        i += 1;
    }
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits = &s[i..];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        v = v.checked_mul(10)?.checked_add((d - b'0') as u64)?;
    }
    Some(if neg { v.wrapping_neg() } else { v })
}

/// A parsed ID argument; `seq: None` for the XADD `ms-*` form.
pub(super) struct IdArg {
    pub(super) ms: u64,
    pub(super) seq: Option<u64>,
}

/// `streamGenericParseIDOrReply`: `strict` refuses `-`/`+`; `allow_star_seq` accepts `ms-*`.
pub(super) fn parse_id_arg(
    arg: &[u8],
    missing_seq: u64,
    strict: bool,
    allow_star_seq: bool,
) -> Result<IdArg, Reply> {
    let invalid = || Reply::err(INVALID_ID);
    if arg.len() > 127 {
        return Err(invalid());
    }
    // The C code reads the ID as a C string (it ends at a NUL); a '-' splits ms from seq.
    let arg = super::until_nul(arg);
    match arg {
        b"-" | b"+" if strict => return Err(invalid()),
        b"-" => {
            return Ok(IdArg {
                ms: 0,
                seq: Some(0),
            })
        }
        b"+" => {
            return Ok(IdArg {
                ms: u64::MAX,
                seq: Some(u64::MAX),
            })
        }
        _ => {}
    }
    let (ms, seq) = match arg.iter().position(|b| *b == b'-') {
        Some(p) => (&arg[..p], Some(&arg[p + 1..])),
        None => (arg, None),
    };
    let ms = string2ull(ms).ok_or_else(invalid)?;
    let seq = match seq {
        Some(b"*") if allow_star_seq => None,
        Some(seq) => Some(string2ull(seq).ok_or_else(invalid)?),
        None => Some(missing_seq),
    };
    Ok(IdArg { ms, seq })
}

pub(super) fn strict_id(arg: &[u8]) -> Result<StreamId, Reply> {
    let id = parse_id_arg(arg, 0, true, false)?;
    Ok(StreamId {
        ms: id.ms,
        seq: id.seq.unwrap_or(0),
    })
}

/// Range bound of XRANGE: `(` makes it exclusive (strict ID after it).
pub(super) fn interval_id(arg: &[u8], missing_seq: u64) -> Result<(StreamId, bool), Reply> {
    let exclusive = arg.len() > 1 && arg[0] == b'(';
    let id = if exclusive {
        parse_id_arg(&arg[1..], missing_seq, true, false)?
    } else {
        parse_id_arg(arg, missing_seq, false, false)?
    };
    Ok((
        StreamId {
            ms: id.ms,
            seq: id.seq.unwrap_or(missing_seq),
        },
        exclusive,
    ))
}

/// The live stream at `key`: `Ok(None)` when missing, WRONGTYPE for another type.
pub(super) fn stream_mut<'a>(
    ctx: &'a mut Ctx,
    key: &[u8],
) -> Result<Option<&'a mut StreamValue>, Reply> {
    match ctx.value(key) {
        None => Ok(None),
        Some(Value::Stream(s)) => Ok(Some(s)),
        Some(_) => Err(Reply::err(errors::WRONGTYPE)),
    }
}

pub(super) fn entry_reply(id: &StreamId, fields: &StreamFields) -> Reply {
    let flat = fields
        .iter()
        .flat_map(|(f, v)| [Reply::Bulk(f.clone()), Reply::Bulk(v.clone())])
        .collect();
    Reply::Array(vec![
        Reply::Bulk(id.to_string().into_bytes()),
        Reply::Array(flat),
    ])
}

/// Parsed XADD/XTRIM options (`streamAddTrimArgs`).
struct TrimArgs {
    strategy: Option<TrimStrategy>,
    approx: bool,
    limit: u64,
    no_mkstream: bool,
    /// XADD: the ID argument (`None` for `*`) and its position.
    id: Option<IdArg>,
    id_pos: usize,
}

/// `streamParseAddOrTrimArgsOrReply`, with Redis's order of checks.
fn parse_trim_args(args: &[Vec<u8>], xadd: bool) -> Result<TrimArgs, Reply> {
    let mut out = TrimArgs {
        strategy: None,
        approx: false,
        limit: 0,
        no_mkstream: false,
        id: None,
        id_pos: args.len(),
    };
    let mut limit_given = false;
    let mut i = 2;
    while i < args.len() {
        let moreargs = args.len() - 1 - i;
        let opt = lower(&args[i]);
        // `opt[0] == '*' && opt[1] == '\0'`, and `~`/`=` likewise: C-string tests.
        if xadd && super::until_nul(&args[i]) == b"*" {
            break;
        } else if (opt == "maxlen" || opt == "minid") && moreargs > 0 {
            if out.strategy.is_some() {
                return Err(Reply::err(BOTH_STRATEGIES));
            }
            out.approx = false;
            let next = super::until_nul(&args[i + 1]);
            if moreargs >= 2 && next == b"~" {
                out.approx = true;
                i += 1;
            } else if moreargs >= 2 && next == b"=" {
                i += 1;
            }
            let value = &args[i + 1];
            out.strategy = Some(if opt == "maxlen" {
                let n = super::int_arg(value)?;
                if n < 0 {
                    return Err(Reply::err(MAXLEN_NEGATIVE));
                }
                TrimStrategy::MaxLen(n as u64)
            } else {
                TrimStrategy::MinId(strict_id(value)?)
            });
            i += 1;
        } else if opt == "limit" && moreargs > 0 {
            let n = super::int_arg(&args[i + 1])?;
            if n < 0 {
                return Err(Reply::err(LIMIT_NEGATIVE));
            }
            out.limit = n as u64;
            limit_given = true;
            i += 1;
        } else if xadd && opt == "nomkstream" {
            out.no_mkstream = true;
        } else if xadd {
            out.id = Some(parse_id_arg(&args[i], 0, true, true)?);
            break;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        i += 1;
    }
    out.id_pos = i;
    if out.limit != 0 && out.strategy.is_none() {
        return Err(Reply::err(LIMIT_NO_STRATEGY));
    }
    if !xadd && out.strategy.is_none() {
        return Err(Reply::err(XTRIM_NO_STRATEGY));
    }
    if limit_given {
        if !out.approx {
            return Err(Reply::err(LIMIT_NO_APPROX));
        }
    } else if out.approx {
        out.limit = 100 * NODE_MAX_ENTRIES;
    }
    Ok(out)
}

fn xadd(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let parsed = parse_trim_args(args, true)?;
        let field_pos = parsed.id_pos + 1;
        let nfields = args.len().saturating_sub(field_pos);
        if nfields < 2 || !nfields.is_multiple_of(2) {
            return Err(Reply::err(errors::wrong_args("xadd")));
        }
        if let Some(IdArg {
            ms: 0,
            seq: Some(0),
        }) = parsed.id
        {
            return Err(Reply::err(ID_ZERO));
        }
        let key = &args[1];
        if stream_mut(ctx, key)?.is_none() {
            if parsed.no_mkstream {
                return Ok(Reply::Nil);
            }
            ctx.db().set(key.clone(), Value::Stream(StreamValue::new()));
        }
        let wall_ms = ctx.wall_ms().max(0) as u64;
        let Some(stream) = stream_mut(ctx, key)? else {
            return Ok(Reply::Nil);
        };
        let last = stream.last_id;
        if last == StreamId::MAX {
            return Err(Reply::err(EXHAUSTED));
        }
        let id = match &parsed.id {
            // `streamNextID`: the clock if it moved past the last ID, else last + 1.
            None if wall_ms > last.ms => StreamId {
                ms: wall_ms,
                seq: 0,
            },
            None => last.incr().ok_or_else(|| Reply::err(EXHAUSTED))?,
            Some(IdArg { ms, seq: Some(seq) }) => StreamId { ms: *ms, seq: *seq },
            Some(IdArg { ms, seq: None }) if *ms == last.ms => {
                if last.seq == u64::MAX {
                    return Err(Reply::err(ID_TOO_SMALL));
                }
                StreamId {
                    ms: *ms,
                    seq: last.seq + 1,
                }
            }
            Some(IdArg { ms, seq: None }) => StreamId { ms: *ms, seq: 0 },
        };
        if id <= last {
            return Err(Reply::err(ID_TOO_SMALL));
        }
        let fields: StreamFields = args[field_pos..]
            .chunks(2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect();
        stream.append(id, fields);
        if let Some(strategy) = parsed.strategy {
            stream.trim(strategy, parsed.approx, parsed.limit);
        }
        Ok(Reply::Bulk(id.to_string().into_bytes()))
    })())
}

fn xlen(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(stream_mut(ctx, &args[1]).map(|s| Reply::Int(s.map_or(0, |s| s.len() as i64))))
}

fn range_generic(ctx: &mut Ctx, args: &[Vec<u8>], rev: bool) -> Result<Reply, Reply> {
    let (start_arg, end_arg) = if rev {
        (&args[3], &args[2])
    } else {
        (&args[2], &args[3])
    };
    let (mut start, start_ex) = interval_id(start_arg, 0)?;
    if start_ex {
        start = start.incr().ok_or_else(|| Reply::err(BAD_START))?;
    }
    let (mut end, end_ex) = interval_id(end_arg, u64::MAX)?;
    if end_ex {
        end = end.decr().ok_or_else(|| Reply::err(BAD_END))?;
    }
    let mut count: i64 = -1;
    let mut j = 4;
    while j < args.len() {
        if lower(&args[j]) == "count" && j + 1 < args.len() {
            count = super::int_arg(&args[j + 1])?.max(0);
            j += 2;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
    }
    let Some(stream) = stream_mut(ctx, &args[1])? else {
        return Ok(Reply::Array(vec![]));
    };
    if count == 0 {
        return Ok(Reply::NilArray);
    }
    if start > end {
        return Ok(Reply::Array(vec![]));
    }
    let limit = if count < 0 {
        usize::MAX
    } else {
        count as usize
    };
    let range = stream.entries.range(start..=end);
    let items: Vec<Reply> = if rev {
        range
            .rev()
            .take(limit)
            .map(|(id, f)| entry_reply(id, f))
            .collect()
    } else {
        range
            .take(limit)
            .map(|(id, f)| entry_reply(id, f))
            .collect()
    };
    Ok(Reply::Array(items))
}

fn xrange(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(range_generic(ctx, args, false))
}
fn xrevrange(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(range_generic(ctx, args, true))
}

fn xdel(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        // The key is looked up before the IDs are parsed; all are parsed before any is deleted.
        if stream_mut(ctx, &args[1])?.is_none() {
            return Ok(Reply::Int(0));
        }
        let ids = args[2..]
            .iter()
            .map(|a| strict_id(a))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(stream) = stream_mut(ctx, &args[1])? else {
            return Ok(Reply::Int(0));
        };
        Ok(Reply::Int(
            ids.into_iter().filter(|id| stream.delete(*id)).count() as i64,
        ))
    })())
}

fn xtrim(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let parsed = parse_trim_args(args, false)?;
        let Some(stream) = stream_mut(ctx, &args[1])? else {
            return Ok(Reply::Int(0));
        };
        let Some(strategy) = parsed.strategy else {
            return Ok(Reply::Int(0));
        };
        Ok(Reply::Int(
            stream.trim(strategy, parsed.approx, parsed.limit) as i64,
        ))
    })())
}

/// Position of the STREAMS keyword as Redis's key extraction finds it.
fn streams_pos(args: &[Vec<u8>]) -> Option<usize> {
    let mut i = 1;
    while i < args.len() {
        match lower(&args[i]).as_str() {
            "block" | "count" => i += 2,
            "group" => i += 3,
            "noack" => i += 1,
            "streams" => return Some(i),
            _ => return None,
        }
    }
    None
}

pub(super) fn xread_keys(args: &[Vec<u8>]) -> Vec<usize> {
    let Some(pos) = streams_pos(args) else {
        return vec![];
    };
    let num = args.len() - pos - 1;
    if num == 0 || !num.is_multiple_of(2) {
        return vec![];
    }
    (pos + 1..=pos + num / 2).collect()
}

fn xread(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let mut count: i64 = 0;
        let mut streams_arg = 0;
        let mut i = 1;
        while i < args.len() {
            let moreargs = args.len() - 1 - i;
            match lower(&args[i]).as_str() {
                "block" if moreargs > 0 => {
                    block_in_script(ctx, args, i + 1)?;
                    i += 1;
                }
                "count" if moreargs > 0 => {
                    count = super::int_arg(&args[i + 1])?.max(0);
                    i += 1;
                }
                "streams" if moreargs > 0 => {
                    streams_arg = i + 1;
                    if !(args.len() - streams_arg).is_multiple_of(2) {
                        return Err(Reply::err(ctx.profile.streams.unbalanced_xread));
                    }
                    break;
                }
                "group" if moreargs >= 2 => return Err(Reply::err(GROUP_ONLY)),
                "noack" => return Err(Reply::err(NOACK_ONLY)),
                _ => return Err(Reply::err(errors::SYNTAX)),
            }
            i += 1;
        }
        if streams_arg == 0 {
            return Err(Reply::err(errors::SYNTAX));
        }
        let n = (args.len() - streams_arg) / 2;
        let keys = &args[streams_arg..streams_arg + n];
        let last_entry = ctx.profile.streams.last_entry_id;
        let mut ids = Vec::with_capacity(n);
        for (key, id_arg) in keys.iter().zip(&args[streams_arg + n..]) {
            let stream = stream_mut(ctx, key)?;
            // `strcmp(arg, "$")`: a C-string comparison.
            ids.push(match super::until_nul(id_arg) {
                b"$" => stream.map_or(StreamId::default(), |s| s.last_id),
                b">" => return Err(Reply::err(GT_ONLY)),
                b"+" if last_entry != LastEntryId::Invalid => stream
                    .map_or(Ok(StreamId::default()), |s| {
                        before_last_entry(s, last_entry)
                    })?,
                other => strict_id(other)?,
            });
        }
        let limit = if count == 0 {
            usize::MAX
        } else {
            count as usize
        };
        let mut served: Vec<(Reply, Reply)> = Vec::new();
        for (key, gt) in keys.iter().zip(ids) {
            let Some(stream) = stream_mut(ctx, key)? else {
                continue;
            };
            // Served only when some live entry is past the given ID.
            let Some((&max, _)) = stream.entries.last_key_value() else {
                continue;
            };
            if max <= gt {
                continue;
            }
            let Some(start) = gt.incr() else { continue };
            let items = stream
                .entries
                .range(start..)
                .take(limit)
                .map(|(id, f)| entry_reply(id, f))
                .collect();
            served.push((Reply::Bulk(key.clone()), Reply::Array(items)));
        }
        Ok(streams_reply(served, ctx.resp3))
    })())
}

/// BLOCK's timeout (at `at`) in a script: refused before 7.4; checked and then ignored on later
/// servers (a script never blocks: the read answers at once, nil when nothing is there).
pub(super) fn block_in_script(ctx: &Ctx, args: &[Vec<u8>], at: usize) -> Result<(), Reply> {
    if !ctx.profile.streams.block_in_scripts {
        let name = String::from_utf8_lossy(&args[0]);
        return Err(Reply::err(format!(
            "ERR {name} command is not allowed with BLOCK option from scripts"
        )));
    }
    super::blocking::check_timeout(ctx, &args[at], false)
}

/// The ID XREAD reads after for `+`, which serves the stream's last entry.
fn before_last_entry(s: &StreamValue, rule: LastEntryId) -> Result<StreamId, Reply> {
    match rule {
        LastEntryId::LastLiveEntry => Ok(s
            .entries
            .last_key_value()
            .and_then(|(id, _)| id.decr())
            .unwrap_or(s.last_id)),
        LastEntryId::BeforeLastId { zero_is_error } => match s.last_id.decr() {
            Some(id) => Ok(id),
            None if zero_is_error => Err(Reply::err("ERR the stream last element ID is 0-0")),
            None => Ok(StreamId::default()),
        },
        LastEntryId::Invalid => Err(Reply::err(INVALID_ID)),
    }
}

/// XREAD's and XREADGROUP's reply: nil when no stream served anything, else per stream its key and
/// entries (a map under RESP3).
pub(super) fn streams_reply(served: Vec<(Reply, Reply)>, resp3: bool) -> Reply {
    if served.is_empty() {
        Reply::NilArray
    } else if resp3 {
        Reply::Map(served)
    } else {
        Reply::Array(
            served
                .into_iter()
                .map(|(k, v)| Reply::Array(vec![k, v]))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::TestServer;
    use crate::engine::reply::Reply;

    fn b(s: &str) -> Reply {
        Reply::bulk(s.as_bytes())
    }
    fn err(s: &str) -> Reply {
        Reply::err(s)
    }
    fn entry(id: &str, fv: &[&str]) -> Reply {
        Reply::Array(vec![b(id), Reply::Array(fv.iter().map(|s| b(s)).collect())])
    }
    fn ids(r: &Reply) -> Vec<String> {
        match r {
            Reply::Array(items) => items
                .iter()
                .map(|e| match e {
                    Reply::Array(p) => match &p[0] {
                        Reply::Bulk(id) => String::from_utf8_lossy(id).into_owned(),
                        _ => String::new(),
                    },
                    _ => String::new(),
                })
                .collect(),
            _ => vec![],
        }
    }

    #[test]
    fn xadd_ids_and_errors() {
        let mut s = TestServer::new();
        assert_eq!(s.call(&["XADD", "st", "5-5", "f", "v"]), b("5-5"));
        assert_eq!(
            s.call(&["XADD", "st", "5-5", "f", "v"]),
            err(super::ID_TOO_SMALL)
        );
        assert_eq!(
            s.call(&["XADD", "st", "0-0", "f", "v"]),
            err(super::ID_ZERO)
        );
        assert_eq!(s.call(&["XADD", "st", "5-*", "f", "v"]), b("5-6"));
        assert_eq!(
            s.call(&["XADD", "st", "4-*", "f", "v"]),
            err(super::ID_TOO_SMALL)
        );
        assert_eq!(
            s.call(&["XADD", "st", "abc", "f", "v"]),
            err(super::INVALID_ID)
        );
        assert_eq!(
            s.call(&["XADD", "st", "-", "f", "v"]),
            err(super::INVALID_ID)
        );
        assert_eq!(
            s.call(&["XADD", "st", "1-", "f", "v"]),
            err(super::INVALID_ID)
        );
        assert_eq!(s.call(&["XADD", "st", "007", "f", "v"]), b("7-0"));
        assert_eq!(s.call(&["XADD", "st", "+9-1", "f", "v"]), b("9-1"));
        assert_eq!(
            s.call(&["XADD", "st", "10-1", "f", "v", "g"]),
            err("ERR wrong number of arguments for 'xadd' command")
        );
        assert_eq!(s.call(&["XADD", "st", "*", "f", "v"]), b("1700000000000-0"));
        assert_eq!(s.call(&["XADD", "st", "*", "f", "v"]), b("1700000000000-1"));
        assert_eq!(s.call(&["XADD", "st2", "0-*", "f", "v"]), b("0-1"));
        assert_eq!(
            s.call(&["XADD", "nokey", "NOMKSTREAM", "*", "f", "v"]),
            Reply::Nil
        );
        assert_eq!(
            s.call(&[
                "XADD",
                "st",
                "18446744073709551615-18446744073709551615",
                "f",
                "v"
            ]),
            b("18446744073709551615-18446744073709551615")
        );
        assert_eq!(
            s.call(&["XADD", "st", "*", "f", "v"]),
            err(super::EXHAUSTED)
        );
        assert_eq!(s.call(&["XLEN", "st"]), Reply::Int(7));
        assert_eq!(s.call(&["XLEN", "nokey"]), Reply::Int(0));
    }

    #[test]
    fn xadd_trim_options() {
        let mut s = TestServer::new();
        s.call(&["XADD", "st", "1-1", "f", "v"]);
        assert_eq!(
            s.call(&["XADD", "st", "MAXLEN", "x", "*", "f", "v"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            s.call(&["XADD", "st", "MAXLEN", "-1", "*", "f", "v"]),
            err(super::MAXLEN_NEGATIVE)
        );
        assert_eq!(
            s.call(&["XADD", "st", "MAXLEN", "1", "LIMIT", "10", "*", "f", "v"]),
            err(super::LIMIT_NO_APPROX)
        );
        assert_eq!(
            s.call(&["XADD", "st", "MAXLEN", "~", "1", "LIMIT", "-1", "*", "f", "v"]),
            err(super::LIMIT_NEGATIVE)
        );
        assert_eq!(
            s.call(&["XADD", "st", "LIMIT", "5", "*", "f", "v"]),
            err(super::LIMIT_NO_STRATEGY)
        );
        assert_eq!(
            s.call(&["XADD", "st", "MAXLEN", "5", "MINID", "1", "*", "f", "v"]),
            err(super::BOTH_STRATEGIES)
        );
        assert_eq!(
            s.call(&["XADD", "st", "MINID", "abc", "*", "f", "v"]),
            err(super::INVALID_ID)
        );
        assert_eq!(
            s.call(&["XADD", "st", "MAXLEN", "=", "1", "2-1", "f", "v"]),
            b("2-1")
        );
        assert_eq!(
            s.call(&["XRANGE", "st", "-", "+"]),
            Reply::Array(vec![entry("2-1", &["f", "v"])])
        );
        assert_eq!(
            s.call(&["XTRIM", "st", "foo", "bar"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["XTRIM", "st", "LIMIT", "1"]),
            err(super::LIMIT_NO_STRATEGY)
        );
        assert_eq!(s.call(&["XTRIM", "nokey", "MAXLEN", "0"]), Reply::Int(0));
        assert_eq!(s.call(&["XTRIM", "st", "MAXLEN", "0"]), Reply::Int(1));
        assert_eq!(s.call(&["XLEN", "st"]), Reply::Int(0));
    }

    #[test]
    fn approximate_trim_drops_whole_nodes() {
        let mut s = TestServer::new();
        for i in 1..=250 {
            s.call(&["XADD", "st", &format!("{i}-0"), "f", "v"]);
        }
        // Nodes of 100: MAXLEN ~ 10 can only drop the first two.
        assert_eq!(
            s.call(&["XTRIM", "st", "MAXLEN", "~", "10"]),
            Reply::Int(200)
        );
        assert_eq!(s.call(&["XTRIM", "st", "MAXLEN", "~", "10"]), Reply::Int(0));
        assert_eq!(s.call(&["XTRIM", "st", "MAXLEN", "10"]), Reply::Int(40));
        // The exactly-trimmed entries still occupy the node, so it fills after 50 more.
        for i in 251..=310 {
            s.call(&["XADD", "st", &format!("{i}-0"), "f", "v"]);
        }
        assert_eq!(s.call(&["XTRIM", "st", "MINID", "~", "300"]), Reply::Int(0));
        assert_eq!(
            s.call(&["XTRIM", "st", "MINID", "~", "301"]),
            Reply::Int(60)
        );
        assert_eq!(s.call(&["XLEN", "st"]), Reply::Int(10));
        assert_eq!(
            s.call(&["XTRIM", "st", "MAXLEN", "~", "0", "LIMIT", "5"]),
            Reply::Int(0)
        );
    }

    /// Node splits by `stream-node-max-bytes` and by field layout, checked on Redis 7.0.15.
    #[test]
    fn node_boundaries_match_redis() {
        let mut s = TestServer::new();
        let x300 = "x".repeat(300);
        for i in 1..=30 {
            s.call(&["XADD", "a", &format!("{i}-0"), "f", &x300]);
        }
        assert_eq!(s.call(&["XTRIM", "a", "MAXLEN", "~", "1"]), Reply::Int(26));
        for i in 1..=200 {
            let id = format!("{i}-{i}");
            if i % 3 == 0 {
                s.call(&["XADD", "b", &id, "g", &i.to_string(), "h", "123456789012"]);
            } else {
                s.call(&["XADD", "b", &id, "f", &format!("-{i}")]);
            }
        }
        assert_eq!(s.call(&["XTRIM", "b", "MAXLEN", "~", "1"]), Reply::Int(100));
        let y60 = "y".repeat(60);
        for i in 1..=100 {
            s.call(&[
                "XADD",
                "c",
                &format!("{}-0", i * 1000),
                &format!("field{i}"),
                &y60,
            ]);
        }
        assert_eq!(s.call(&["XTRIM", "c", "MAXLEN", "~", "5"]), Reply::Int(49));
        for i in 1..=150 {
            s.call(&["XADD", "d", &format!("{i}-0"), "f", "v"]);
        }
        for i in 101..=150 {
            s.call(&["XDEL", "d", &format!("{i}-0")]);
        }
        for i in 151..=170 {
            s.call(&["XADD", "d", &format!("{i}-0"), "f", "v"]);
        }
        assert_eq!(s.call(&["XTRIM", "d", "MAXLEN", "~", "1"]), Reply::Int(100));
        assert_eq!(s.call(&["XLEN", "d"]), Reply::Int(20));
    }

    #[test]
    fn ranges() {
        let mut s = TestServer::new();
        for id in ["1-1", "1-2", "2-0", "3-5"] {
            s.call(&["XADD", "st", id, "f", id]);
        }
        assert_eq!(
            ids(&s.call(&["XRANGE", "st", "(1-1", "+"])),
            ["1-2", "2-0", "3-5"]
        );
        assert_eq!(
            ids(&s.call(&["XRANGE", "st", "1", "2"])),
            ["1-1", "1-2", "2-0"]
        );
        assert_eq!(
            ids(&s.call(&["XRANGE", "st", "-", "(2-0", "COUNT", "1"])),
            ["1-1"]
        );
        assert_eq!(
            ids(&s.call(&["XREVRANGE", "st", "+", "-", "COUNT", "2"])),
            ["3-5", "2-0"]
        );
        assert_eq!(
            ids(&s.call(&["XREVRANGE", "st", "(3-5", "1-2"])),
            ["2-0", "1-2"]
        );
        assert_eq!(
            s.call(&["XRANGE", "st", "-", "+", "COUNT", "0"]),
            Reply::NilArray
        );
        assert_eq!(
            s.call(&["XRANGE", "nokey", "-", "+", "COUNT", "0"]),
            Reply::Array(vec![])
        );
        assert_eq!(s.call(&["XRANGE", "st", "(-", "+"]), err(super::INVALID_ID));
        assert_eq!(
            s.call(&[
                "XRANGE",
                "st",
                "(18446744073709551615-18446744073709551615",
                "+"
            ]),
            err(super::BAD_START)
        );
        assert_eq!(s.call(&["XRANGE", "st", "-", "(0-0"]), err(super::BAD_END));
        assert_eq!(
            s.call(&["XRANGE", "st", "-", "+", "COUNT"]),
            err("ERR syntax error")
        );
        assert_eq!(s.call(&["XDEL", "st", "x", "1-1"]), err(super::INVALID_ID));
        assert_eq!(s.call(&["XDEL", "st", "1-1", "1-1", "9-9"]), Reply::Int(1));
        assert_eq!(s.call(&["XDEL", "nokey", "1-1"]), Reply::Int(0));
        assert_eq!(s.call(&["XDEL", "nokey", "x"]), Reply::Int(0));
        assert_eq!(
            ids(&s.call(&["XRANGE", "st", "-", "+"])),
            ["1-2", "2-0", "3-5"]
        );
    }

    #[test]
    fn xread_shapes() {
        let mut s = TestServer::new();
        s.call(&["XADD", "st", "1-1", "f", "v"]);
        s.call(&["XADD", "st", "2-1", "g", "w"]);
        let one = Reply::Array(vec![Reply::Array(vec![
            b("st"),
            Reply::Array(vec![entry("2-1", &["g", "w"])]),
        ])]);
        assert_eq!(
            s.call(&["XREAD", "STREAMS", "st", "nokey", "1-1", "0"]),
            one
        );
        assert_eq!(
            s.call(&["XREAD", "COUNT", "1", "STREAMS", "st", "0"])
                .to_resp2(),
            Reply::Array(vec![Reply::Array(vec![
                b("st"),
                Reply::Array(vec![entry("1-1", &["f", "v"])])
            ])])
        );
        assert_eq!(s.call(&["XREAD", "STREAMS", "st", "$"]), Reply::NilArray);
        assert_eq!(
            s.call(&["XREAD", "BLOCK", "0", "STREAMS", "st", "0"]),
            err("ERR XREAD command is not allowed with BLOCK option from scripts")
        );
        assert_eq!(
            s.call(&["xread", "block", "0", "STREAMS", "st", "0"]),
            err("ERR xread command is not allowed with BLOCK option from scripts")
        );
        assert_eq!(
            s.call(&["XREAD", "STREAMS", "st", "nokey", "0"]),
            err("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
        );
        assert_eq!(
            s.call(&["XREAD", "STREAMS", "st", ">"]),
            err(super::GT_ONLY)
        );
        assert_eq!(
            s.call(&["XREAD", "NOACK", "STREAMS", "st", "0"]),
            err(super::NOACK_ONLY)
        );
        assert_eq!(
            s.call(&["XREAD", "FOO", "STREAMS", "st", "0"]),
            err("ERR syntax error")
        );
        s.resp3 = true;
        assert_eq!(
            s.call(&["XREAD", "STREAMS", "st", "1-1"]),
            Reply::Map(vec![(
                b("st"),
                Reply::Array(vec![entry("2-1", &["g", "w"])])
            )])
        );
        let args: Vec<Vec<u8>> = ["xread", "count", "1", "streams", "a", "b", "0", "0"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        assert_eq!(super::xread_keys(&args), vec![4, 5]);
    }

    /// 7.4 and later check BLOCK's timeout and answer at once; `+` reads the last
    /// entry (7.4: after the last ID minus one, 8.0: the last live entry).
    #[test]
    fn block_and_last_entry_per_profile() {
        use crate::engine::profile::Profile;
        let mut s = TestServer::new();
        s.call(&["XADD", "st", "5-5", "a", "1"]);
        s.call(&["XADD", "st", "6-0", "b", "2"]);
        s.call(&["XDEL", "st", "6-0"]);
        let last = |s: &mut TestServer| s.call(&["XREAD", "STREAMS", "st", "+"]).to_resp2();
        assert_eq!(last(&mut s), err(super::INVALID_ID));
        s.profile = Profile::by_id("redis-7.4").unwrap();
        assert_eq!(last(&mut s), Reply::NilArray);
        assert_eq!(
            s.call(&["XREAD", "BLOCK", "-1", "STREAMS", "st", "0"]),
            err("ERR timeout is negative")
        );
        assert_eq!(
            s.call(&["XREAD", "BLOCK", "100", "STREAMS", "st", "$"]),
            Reply::NilArray
        );
        s.profile = Profile::by_id("redis-8.0").unwrap();
        assert_eq!(
            last(&mut s),
            Reply::Array(vec![Reply::Array(vec![
                b("st"),
                Reply::Array(vec![entry("5-5", &["a", "1"])])
            ])])
        );
    }
}
