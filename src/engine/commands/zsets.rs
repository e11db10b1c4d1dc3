//! Sorted set commands (src/t_zset.c @7.0.15).

use super::{errors, filter_match, flatten, int_arg, lower, Command, Ctx};
use crate::engine::keyspace::{SetValue, Value, ZSetValue};
use crate::engine::number;
use crate::engine::profile::{NumberFormat, Profile};
use crate::engine::reply::{format_double_resp2, Reply};
use std::collections::HashMap;

pub static COMMANDS: &[Command] = &[
    Command::new("zadd", zadd),
    Command::new("zincrby", zincrby),
    Command::new("zrem", zrem),
    Command::new("zscore", zscore),
    Command::new("zmscore", zmscore),
    Command::new("zcard", zcard),
    Command::new("zcount", zcount),
    Command::new("zlexcount", zlexcount),
    Command::new("zrank", zrank),
    Command::new("zrevrank", zrevrank),
    Command::new("zrange", zrange),
    Command::new("zrangestore", zrangestore),
    Command::new("zrevrange", zrevrange),
    Command::new("zrangebyscore", zrangebyscore),
    Command::new("zrevrangebyscore", zrevrangebyscore),
    Command::new("zrangebylex", zrangebylex),
    Command::new("zrevrangebylex", zrevrangebylex),
    Command::new("zremrangebyrank", zremrangebyrank),
    Command::new("zremrangebyscore", zremrangebyscore),
    Command::new("zremrangebylex", zremrangebylex),
    Command::new("zpopmin", zpopmin),
    Command::new("zpopmax", zpopmax),
    Command::with_keys("zmpop", zmpop, zmpop_keys),
    Command::with_keys("bzmpop", bzmpop, bzmpop_keys),
    Command::with_keys("zunionstore", zunionstore, store_op_keys),
    Command::with_keys("zinterstore", zinterstore, store_op_keys),
    Command::with_keys("zdiffstore", zdiffstore, store_op_keys),
    Command::with_keys("zunion", zunion, op_keys),
    Command::with_keys("zinter", zinter, op_keys),
    Command::with_keys("zdiff", zdiff, op_keys),
    Command::with_keys("zintercard", zintercard, op_keys),
    Command::new("zrandmember", zrandmember),
    Command::new("zscan", zscan),
];

const XX_AND_NX: &str = "ERR XX and NX options at the same time are not compatible";
const GT_LT_NX: &str = "ERR GT, LT, and/or NX options at the same time are not compatible";
const INCR_SINGLE_PAIR: &str = "ERR INCR option supports a single increment-element pair";
const NAN_SCORE: &str = "ERR resulting score is not a number (NaN)";
const LIMIT_NEEDS_BY: &str =
    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
const WITHSCORES_BYLEX: &str =
    "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
const WEIGHT_NOT_FLOAT: &str = "ERR weight value is not a float";
const LIMIT_NEGATIVE: &str = "ERR LIMIT can't be negative";
const NUMKEYS_POSITIVE: &str = "ERR numkeys should be greater than 0";
const COUNT_POSITIVE: &str = "ERR count should be greater than 0";
const MUST_BE_POSITIVE: &str = "ERR value is out of range, must be positive";
const TIMEOUT_NOT_FLOAT: &str = "ERR timeout is not a float or out of range";
const TIMEOUT_NEGATIVE: &str = "ERR timeout is negative";
const OUT_OF_RANGE: &str = "ERR value is out of range";
const RANDMEMBER_RANGE: &str =
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
/// Replies this long would exhaust memory in Redis as well; the sandbox refuses them.
const MAX_RANDOM_REPLY: u64 = 1 << 20;

/// Members with their scores, in reply order.
pub(super) type Members = Vec<(Vec<u8>, f64)>;

// ---- key access ----

/// The sorted set at `key` (None when missing), or WRONGTYPE.
fn zset_mut<'a>(ctx: &'a mut Ctx, key: &[u8]) -> Result<Option<&'a mut ZSetValue>, Reply> {
    match ctx.value(key) {
        None => Ok(None),
        Some(Value::ZSet(z)) => Ok(Some(z)),
        Some(_) => Err(Reply::err(errors::WRONGTYPE)),
    }
}

/// Drop the key when its set became empty (Redis deletes empty aggregates).
fn drop_if_empty(ctx: &mut Ctx, key: &[u8]) {
    ctx.db().remove_if_empty(key);
}

/// Store `z` at `dst` (clearing any TTL) or delete `dst` when empty; reply with the size.
fn store_result(ctx: &mut Ctx, dst: &[u8], z: ZSetValue) -> Reply {
    let n = z.len() as i64;
    let now = ctx.now_ms;
    if n == 0 {
        ctx.db().remove(dst, now);
    } else {
        ctx.db().set(dst.to_vec(), Value::ZSet(z));
    }
    Reply::Int(n)
}

// ---- number and range parsing ----

/// A ZADD/ZINCRBY score as the profile's `string2d` reads it.
fn score_arg(profile: &Profile, arg: &[u8]) -> Result<f64, Reply> {
    number::string2d(profile.numbers.string2d, arg).ok_or_else(|| Reply::err(errors::NOT_FLOAT))
}

/// `getLongFromObjectOrReply` with a custom message for every failure and a range.
fn ranged_long(arg: &[u8], min: i64, max: i64, msg: &str) -> Result<i64, Reply> {
    match number::parse_i64(arg) {
        Some(v) if v >= min && v <= max => Ok(v),
        _ => Err(Reply::err(msg)),
    }
}

#[derive(Debug, Clone, Copy)]
struct ScoreRange {
    min: f64,
    minex: bool,
    max: f64,
    maxex: bool,
}

impl ScoreRange {
    /// `zslParseRange`: each bound read as a C string by the profile's parser, `(` exclusive.
    fn parse(profile: &Profile, min: &[u8], max: &[u8]) -> Result<ScoreRange, Reply> {
        let item = |arg: &[u8]| -> Option<(f64, bool)> {
            let syntax = profile.numbers.score_ranges;
            match arg.strip_prefix(b"(") {
                Some(rest) => Some((number::range_bound(syntax, rest)?, true)),
                None => Some((number::range_bound(syntax, arg)?, false)),
            }
        };
        match (item(min), item(max)) {
            (Some((min, minex)), Some((max, maxex))) => Ok(ScoreRange {
                min,
                minex,
                max,
                maxex,
            }),
            _ => Err(Reply::err(errors::MIN_MAX_NOT_FLOAT)),
        }
    }
    fn gte_min(&self, v: f64) -> bool {
        if self.minex {
            v > self.min
        } else {
            v >= self.min
        }
    }
    fn lte_max(&self, v: f64) -> bool {
        if self.maxex {
            v < self.max
        } else {
            v <= self.max
        }
    }
    /// Rank of the first element in range (`zslFirstInRange`).
    fn first_in(&self, z: &ZSetValue) -> Option<usize> {
        let i = z.partition_point(|s, _| !self.gte_min(s));
        z.get(i).filter(|(_, s)| self.lte_max(*s)).map(|_| i)
    }
    /// Rank of the last element in range (`zslLastInRange`).
    fn last_in(&self, z: &ZSetValue) -> Option<usize> {
        let i = z.partition_point(|s, _| self.lte_max(s)).checked_sub(1)?;
        z.get(i).filter(|(_, s)| self.gte_min(*s)).map(|_| i)
    }
}

/// One end of a lex range: `-`, `+` or a string.
#[derive(Debug, Clone, PartialEq)]
enum LexItem {
    Min,
    Max,
    Str(Vec<u8>),
}

/// `sdscmplex` of a member against a range end.
fn cmp_member(v: &[u8], b: &LexItem) -> std::cmp::Ordering {
    match b {
        LexItem::Min => std::cmp::Ordering::Greater,
        LexItem::Max => std::cmp::Ordering::Less,
        LexItem::Str(s) => v.cmp(s),
    }
}

/// `sdscmplex`: the sentinels compare below/above every string.
fn cmp_lex(a: &LexItem, b: &LexItem) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    match (a, b) {
        (LexItem::Min, LexItem::Min) | (LexItem::Max, LexItem::Max) => Equal,
        (LexItem::Min, _) | (_, LexItem::Max) => Less,
        (LexItem::Max, _) | (_, LexItem::Min) => Greater,
        (LexItem::Str(x), LexItem::Str(y)) => x.cmp(y),
    }
}

#[derive(Debug, Clone)]
struct LexRange {
    min: LexItem,
    minex: bool,
    max: LexItem,
    maxex: bool,
}

impl LexRange {
    fn parse(min: &[u8], max: &[u8]) -> Result<LexRange, Reply> {
        // `zslParseLexRangeItem`: `+` and `-` must end the C string; a `(` or `[` item keeps
        // every byte after it.
        fn item(arg: &[u8]) -> Option<(LexItem, bool)> {
            match arg {
                [b'+', ..] if super::until_nul(arg).len() == 1 => Some((LexItem::Max, true)),
                [b'-', ..] if super::until_nul(arg).len() == 1 => Some((LexItem::Min, true)),
                [b'(', rest @ ..] => Some((LexItem::Str(rest.to_vec()), true)),
                [b'[', rest @ ..] => Some((LexItem::Str(rest.to_vec()), false)),
                _ => None,
            }
        }
        match (item(min), item(max)) {
            (Some((min, minex)), Some((max, maxex))) => Ok(LexRange {
                min,
                minex,
                max,
                maxex,
            }),
            _ => Err(Reply::err(errors::MIN_MAX_NOT_VALID_STRING)),
        }
    }
    fn gte_min(&self, v: &[u8]) -> bool {
        let c = cmp_member(v, &self.min);
        if self.minex {
            c.is_gt()
        } else {
            c.is_ge()
        }
    }
    fn lte_max(&self, v: &[u8]) -> bool {
        let c = cmp_member(v, &self.max);
        if self.maxex {
            c.is_lt()
        } else {
            c.is_le()
        }
    }
    /// `zslIsInLexRange`: could any element be in range?
    fn may_match(&self, z: &ZSetValue) -> bool {
        let c = cmp_lex(&self.min, &self.max);
        if c.is_gt() || (c.is_eq() && (self.minex || self.maxex)) {
            return false;
        }
        let (Some((first, _)), Some((last, _))) = (z.iter().next(), z.iter().next_back()) else {
            return false;
        };
        self.gte_min(last) && self.lte_max(first)
    }
    /// Rank of the first element in range. Lex ranges assume equal scores; for a small
    /// (listpack) set Redis scans linearly, which we copy so mixed scores answer the same.
    fn first_in(&self, z: &ZSetValue) -> Option<usize> {
        if !self.may_match(z) {
            return None;
        }
        let i = if z.is_skiplist() {
            z.partition_point(|_, m| !self.gte_min(m))
        } else {
            z.iter().position(|(m, _)| self.gte_min(m))?
        };
        z.get(i).filter(|(m, _)| self.lte_max(m)).map(|_| i)
    }
    fn last_in(&self, z: &ZSetValue) -> Option<usize> {
        if !self.may_match(z) {
            return None;
        }
        let i = if z.is_skiplist() {
            z.partition_point(|_, m| self.lte_max(m)).checked_sub(1)?
        } else {
            z.len() - 1 - z.iter().rev().position(|(m, _)| self.lte_max(m))?
        };
        z.get(i).filter(|(m, _)| self.gte_min(m)).map(|_| i)
    }
}

/// Redis's rank sanitizing: (start, end) inclusive, or None when the range is empty.
fn rank_range(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let mut start = if start < 0 {
        len.saturating_add(start)
    } else {
        start
    };
    let mut end = if end < 0 {
        len.saturating_add(end)
    } else {
        end
    };
    if start < 0 {
        start = 0;
    }
    if start > end || start >= len {
        return None;
    }
    if end >= len {
        end = len - 1;
    }
    Some((start as usize, end as usize))
}

// ---- replies ----

/// Members (and scores): flat for RESP2, `[member, score]` pairs for RESP3.
fn members_reply(ctx: &Ctx, items: Vec<(Vec<u8>, f64)>, withscores: bool) -> Reply {
    if !withscores {
        return Reply::Array(items.into_iter().map(|(m, _)| Reply::Bulk(m)).collect());
    }
    if ctx.resp3 {
        Reply::Array(
            items
                .into_iter()
                .map(|(m, s)| Reply::Array(vec![Reply::Bulk(m), Reply::Double(s)]))
                .collect(),
        )
    } else {
        Reply::Array(
            items
                .into_iter()
                .flat_map(|(m, s)| [Reply::Bulk(m), Reply::Double(s)])
                .collect(),
        )
    }
}

fn owned<'a>(it: impl Iterator<Item = (&'a Vec<u8>, f64)>) -> Vec<(Vec<u8>, f64)> {
    it.map(|(m, s)| (m.clone(), s)).collect()
}

// ---- ZADD / ZINCRBY / ZREM ----

/// Also GEOADD's last step (geo.rs), as `geoaddCommand` calls `zaddCommand`.
pub(super) fn zadd(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zadd_generic(ctx, args, false))
}

fn zincrby(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zadd_generic(ctx, args, true))
}

/// `zaddGenericCommand`: ZADD, and ZINCRBY as ZADD with INCR.
fn zadd_generic(ctx: &mut Ctx, args: &[Vec<u8>], mut incr: bool) -> Result<Reply, Reply> {
    let (mut nx, mut xx, mut gt, mut lt, mut ch) = (false, false, false, false, false);
    let mut idx = 2;
    while idx < args.len() {
        match lower(&args[idx]).as_str() {
            "nx" => nx = true,
            "xx" => xx = true,
            "ch" => ch = true,
            "incr" => incr = true,
            "gt" => gt = true,
            "lt" => lt = true,
            _ => break,
        }
        idx += 1;
    }
    let elements = args.len() - idx;
    if elements == 0 || !elements.is_multiple_of(2) {
        return Err(Reply::err(errors::SYNTAX));
    }
    if nx && xx {
        return Err(Reply::err(XX_AND_NX));
    }
    if (nx && (gt || lt)) || (gt && lt) {
        return Err(Reply::err(GT_LT_NX));
    }
    if incr && elements > 2 {
        return Err(Reply::err(INCR_SINGLE_PAIR));
    }
    let pairs: Vec<(f64, &Vec<u8>)> = args[idx..]
        .chunks(2)
        .map(|p| Ok((score_arg(ctx.profile, &p[0])?, &p[1])))
        .collect::<Result<_, Reply>>()?;

    let key = &args[1];
    if zset_mut(ctx, key)?.is_none() {
        if xx {
            return Ok(if incr { Reply::Nil } else { Reply::Int(0) });
        }
        ctx.db().set(key.clone(), Value::ZSet(ZSetValue::new()));
    }
    let Some(z) = zset_mut(ctx, key)? else {
        return Err(Reply::err(errors::WRONGTYPE));
    };
    let (mut added, mut updated, mut processed) = (0, 0, 0);
    let mut last_score = 0.0;
    for (score, member) in pairs {
        match z.score(member) {
            Some(cur) => {
                if nx {
                    continue;
                }
                let new = if incr { score + cur } else { score };
                if new.is_nan() {
                    return Err(Reply::err(NAN_SCORE));
                }
                if (lt && new >= cur) || (gt && new <= cur) {
                    continue;
                }
                processed += 1;
                last_score = new;
                if new != cur {
                    z.insert(member.clone(), new);
                    updated += 1;
                }
            }
            None if xx => {}
            None => {
                z.insert(member.clone(), score);
                added += 1;
                processed += 1;
                last_score = score;
            }
        }
    }
    Ok(if incr {
        if processed > 0 {
            Reply::Double(last_score)
        } else {
            Reply::Nil
        }
    } else {
        Reply::Int(if ch { added + updated } else { added })
    })
}

fn zrem(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let Some(z) = zset_mut(ctx, &args[1])? else {
            return Ok(Reply::Int(0));
        };
        let removed = args[2..].iter().filter(|m| z.remove(m)).count();
        drop_if_empty(ctx, &args[1]);
        Ok(Reply::Int(removed as i64))
    })())
}

// ---- simple reads ----

fn zscore(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let z = zset_mut(ctx, &args[1])?;
        Ok(z.and_then(|z| z.score(&args[2]))
            .map_or(Reply::Nil, Reply::Double))
    })())
}

fn zmscore(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let z = zset_mut(ctx, &args[1])?;
        let scores = args[2..].iter().map(|m| {
            z.as_ref()
                .and_then(|z| z.score(m))
                .map_or(Reply::Nil, Reply::Double)
        });
        Ok(Reply::Array(scores.collect()))
    })())
}

fn zcard(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zset_mut(ctx, &args[1]).map(|z| Reply::Int(z.map_or(0, |z| z.len() as i64))))
}

fn zrank(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(rank_generic(ctx, args, false))
}

fn zrevrank(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(rank_generic(ctx, args, true))
}

/// `zrankGenericCommand`. `WITHSCORE` exists where the command table allows a fourth argument
/// (7.2 and later); it is checked before the key is looked up.
fn rank_generic(ctx: &mut Ctx, args: &[Vec<u8>], reverse: bool) -> Result<Reply, Reply> {
    if args.len() > 4 {
        return Err(Reply::err(errors::wrong_args(&lower(&args[0]))));
    }
    let with_score = match args.get(3) {
        Some(opt) if lower(opt) == "withscore" => true,
        Some(_) => return Err(Reply::err(errors::SYNTAX)),
        None => false,
    };
    let missing = if with_score {
        Reply::NilArray
    } else {
        Reply::Nil
    };
    let Some(z) = zset_mut(ctx, &args[1])? else {
        return Ok(missing);
    };
    let len = z.len();
    let Some(r) = z.rank(&args[2]) else {
        return Ok(missing);
    };
    let rank = Reply::Int(if reverse { len - 1 - r } else { r } as i64);
    Ok(match z.score(&args[2]) {
        Some(score) if with_score => Reply::Array(vec![rank, Reply::Double(score)]),
        _ => rank,
    })
}

fn zcount(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let range = ScoreRange::parse(ctx.profile, &args[2], &args[3])?;
        let Some(z) = zset_mut(ctx, &args[1])? else {
            return Ok(Reply::Int(0));
        };
        let count = match (range.first_in(z), range.last_in(z)) {
            (Some(first), Some(last)) => last + 1 - first,
            _ => 0,
        };
        Ok(Reply::Int(count as i64))
    })())
}

fn zlexcount(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let range = LexRange::parse(&args[2], &args[3])?;
        let Some(z) = zset_mut(ctx, &args[1])? else {
            return Ok(Reply::Int(0));
        };
        let Some(first) = range.first_in(z) else {
            return Ok(Reply::Int(0));
        };
        let count = if z.is_skiplist() {
            // Counted by ranks of the first and last elements in range.
            match range.last_in(z) {
                Some(last) => (last + 1).saturating_sub(first),
                None => z.len() - first,
            }
        } else {
            z.range(first, z.len())
                .take_while(|(m, _)| range.lte_max(m))
                .count()
        };
        Ok(Reply::Int(count as i64))
    })())
}

// ---- ZRANGE family ----

#[derive(Debug, Clone, Copy, PartialEq)]
enum RangeType {
    Auto,
    Rank,
    Score,
    Lex,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Direction {
    Auto,
    Forward,
    Reverse,
}

fn zrange(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zrange_generic(
        ctx,
        args,
        None,
        RangeType::Auto,
        Direction::Auto,
    ))
}

fn zrangestore(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zrange_generic(
        ctx,
        &args[1..],
        Some(&args[1]),
        RangeType::Auto,
        Direction::Auto,
    ))
}

fn zrevrange(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zrange_generic(
        ctx,
        args,
        None,
        RangeType::Rank,
        Direction::Reverse,
    ))
}

fn zrangebyscore(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zrange_generic(
        ctx,
        args,
        None,
        RangeType::Score,
        Direction::Forward,
    ))
}

fn zrevrangebyscore(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zrange_generic(
        ctx,
        args,
        None,
        RangeType::Score,
        Direction::Reverse,
    ))
}

fn zrangebylex(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zrange_generic(
        ctx,
        args,
        None,
        RangeType::Lex,
        Direction::Forward,
    ))
}

fn zrevrangebylex(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zrange_generic(
        ctx,
        args,
        None,
        RangeType::Lex,
        Direction::Reverse,
    ))
}

/// `zrangeGenericCommand`. `args[1]` is the source key (for ZRANGESTORE the caller drops the
/// destination from the front and passes it as `store`).
fn zrange_generic(
    ctx: &mut Ctx,
    args: &[Vec<u8>],
    store: Option<&Vec<u8>>,
    mut rangetype: RangeType,
    mut direction: Direction,
) -> Result<Reply, Reply> {
    let mut withscores = false;
    let (mut offset, mut limit) = (0i64, -1i64);
    let mut j = 4;
    while j < args.len() {
        let left = args.len() - j - 1;
        let opt = lower(&args[j]);
        if store.is_none() && opt == "withscores" {
            withscores = true;
        } else if opt == "limit" && left >= 2 {
            offset = int_arg(&args[j + 1])?;
            limit = int_arg(&args[j + 2])?;
            j += 2;
        } else if direction == Direction::Auto && opt == "rev" {
            direction = Direction::Reverse;
        } else if rangetype == RangeType::Auto && opt == "bylex" {
            rangetype = RangeType::Lex;
        } else if rangetype == RangeType::Auto && opt == "byscore" {
            rangetype = RangeType::Score;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        j += 1;
    }
    let reverse = direction == Direction::Reverse;
    if rangetype == RangeType::Auto {
        rangetype = RangeType::Rank;
    }
    if limit != -1 && rangetype == RangeType::Rank {
        return Err(Reply::err(LIMIT_NEEDS_BY));
    }
    if withscores && rangetype == RangeType::Lex {
        return Err(Reply::err(WITHSCORES_BYLEX));
    }
    // BYSCORE/BYLEX with REV take the range as <max> <min>.
    let (min_arg, max_arg) = if reverse && rangetype != RangeType::Rank {
        (&args[3], &args[2])
    } else {
        (&args[2], &args[3])
    };
    enum Spec {
        Rank(i64, i64),
        Score(ScoreRange),
        Lex(LexRange),
    }
    let spec = match rangetype {
        RangeType::Score => Spec::Score(ScoreRange::parse(ctx.profile, min_arg, max_arg)?),
        RangeType::Lex => Spec::Lex(LexRange::parse(min_arg, max_arg)?),
        _ => Spec::Rank(int_arg(min_arg)?, int_arg(max_arg)?),
    };

    let items = match zset_mut(ctx, &args[1])? {
        None => Vec::new(),
        Some(z) => match &spec {
            Spec::Rank(start, end) => match rank_range(*start, *end, z.len()) {
                None => Vec::new(),
                Some((s, e)) if reverse => {
                    let len = z.len();
                    owned(z.range(len - 1 - e, len - s).rev())
                }
                Some((s, e)) => owned(z.range(s, e + 1)),
            },
            Spec::Score(r) => {
                let start = if reverse { r.last_in(z) } else { r.first_in(z) };
                walk(z, start, reverse, offset, limit, |_, s| {
                    if reverse {
                        r.gte_min(s)
                    } else {
                        r.lte_max(s)
                    }
                })
            }
            Spec::Lex(r) => {
                let start = if reverse { r.last_in(z) } else { r.first_in(z) };
                walk(z, start, reverse, offset, limit, |m, _| {
                    if reverse {
                        r.gte_min(m)
                    } else {
                        r.lte_max(m)
                    }
                })
            }
        },
    };
    match store {
        Some(dst) => {
            let mut z = ZSetValue::new();
            for (m, s) in items {
                z.insert(m, s);
            }
            Ok(store_result(ctx, dst, z))
        }
        None => Ok(members_reply(ctx, items, withscores)),
    }
}

/// From rank `start`, skip `offset` elements, then take up to `limit` (negative: all) while
/// `in_range` holds, moving towards lower ranks when `reverse`.
fn walk(
    z: &ZSetValue,
    start: Option<usize>,
    reverse: bool,
    offset: i64,
    limit: i64,
    in_range: impl Fn(&[u8], f64) -> bool,
) -> Vec<(Vec<u8>, f64)> {
    // A negative offset walks off the end in Redis.
    let (Some(start), Ok(offset)) = (start, usize::try_from(offset)) else {
        return Vec::new();
    };
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let it: Box<dyn Iterator<Item = (&Vec<u8>, f64)>> = if reverse {
        Box::new(z.range(0, start + 1).rev())
    } else {
        Box::new(z.range(start, z.len()))
    };
    owned(
        it.skip(offset)
            .take(limit)
            .take_while(|(m, s)| in_range(m, *s)),
    )
}

// ---- ZREMRANGEBY* ----

fn zremrangebyrank(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let start = int_arg(&args[2])?;
        let end = int_arg(&args[3])?;
        let Some(z) = zset_mut(ctx, &args[1])? else {
            return Ok(Reply::Int(0));
        };
        let removed = match rank_range(start, end, z.len()) {
            Some((s, e)) => z.remove_range(s, e + 1).len(),
            None => 0,
        };
        drop_if_empty(ctx, &args[1]);
        Ok(Reply::Int(removed as i64))
    })())
}

fn zremrangebyscore(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let range = ScoreRange::parse(ctx.profile, &args[2], &args[3])?;
        let Some(z) = zset_mut(ctx, &args[1])? else {
            return Ok(Reply::Int(0));
        };
        let removed = match range.first_in(z) {
            Some(first) => {
                let n = z
                    .range(first, z.len())
                    .take_while(|(_, s)| range.lte_max(*s))
                    .count();
                z.remove_range(first, first + n).len()
            }
            None => 0,
        };
        drop_if_empty(ctx, &args[1]);
        Ok(Reply::Int(removed as i64))
    })())
}

fn zremrangebylex(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let range = LexRange::parse(&args[2], &args[3])?;
        let Some(z) = zset_mut(ctx, &args[1])? else {
            return Ok(Reply::Int(0));
        };
        let removed = match range.first_in(z) {
            Some(first) => {
                let n = z
                    .range(first, z.len())
                    .take_while(|(m, _)| range.lte_max(m))
                    .count();
                z.remove_range(first, first + n).len()
            }
            None => 0,
        };
        drop_if_empty(ctx, &args[1]);
        Ok(Reply::Int(removed as i64))
    })())
}

// ---- pops ----

fn zpopmin(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zpop_minmax(ctx, args, false))
}

fn zpopmax(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zpop_minmax(ctx, args, true))
}

fn zpop_minmax(ctx: &mut Ctx, args: &[Vec<u8>], max: bool) -> Result<Reply, Reply> {
    if args.len() > 3 {
        return Err(Reply::err(errors::SYNTAX));
    }
    let count = match args.get(2) {
        Some(c) => Some(ranged_long(c, 0, i64::MAX, MUST_BE_POSITIVE)?),
        None => None,
    };
    let Some(items) = pop(ctx, &args[1], max, count.unwrap_or(1))? else {
        return Ok(Reply::Array(Vec::new()));
    };
    if count.is_some() {
        return Ok(members_reply(ctx, items, true));
    }
    // Without a count the reply is a flat [member, score] even under RESP3.
    Ok(Reply::Array(
        items
            .into_iter()
            .flat_map(|(m, s)| [Reply::Bulk(m), Reply::Double(s)])
            .collect(),
    ))
}

/// Pop up to `count` elements from one end of `key`; None when the key is missing.
pub(super) fn pop(
    ctx: &mut Ctx,
    key: &[u8],
    max: bool,
    count: i64,
) -> Result<Option<Members>, Reply> {
    let Some(z) = zset_mut(ctx, key)? else {
        return Ok(None);
    };
    let n = usize::try_from(count).unwrap_or(usize::MAX).min(z.len());
    let items = if max {
        let len = z.len();
        let mut v = z.remove_range(len - n, len);
        v.reverse();
        v
    } else {
        z.remove_range(0, n)
    };
    drop_if_empty(ctx, key);
    Ok(Some(items))
}

/// ZMPOP / BZMPOP argument parsing: (keys, max, count).
fn parse_mpop(args: &[Vec<u8>], numkeys_idx: usize) -> Result<(Vec<Vec<u8>>, bool, i64), Reply> {
    let numkeys = ranged_long(&args[numkeys_idx], 1, i64::MAX, NUMKEYS_POSITIVE)? as u64;
    let where_idx = (numkeys_idx as u64)
        .saturating_add(numkeys)
        .saturating_add(1);
    if where_idx >= args.len() as u64 {
        return Err(Reply::err(errors::SYNTAX));
    }
    let where_idx = where_idx as usize;
    let max = match lower(&args[where_idx]).as_str() {
        "min" => false,
        "max" => true,
        _ => return Err(Reply::err(errors::SYNTAX)),
    };
    let mut count = -1;
    let mut j = where_idx + 1;
    while j < args.len() {
        if count == -1 && lower(&args[j]) == "count" && j + 1 < args.len() {
            j += 1;
            count = ranged_long(&args[j], 1, i64::MAX, COUNT_POSITIVE)?;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        j += 1;
    }
    Ok((args[numkeys_idx + 1..where_idx].to_vec(), max, count.max(1)))
}

/// Pop from the first non-empty key: `[key, [[member, score], ...]]` or a null array.
fn mpop_keys(ctx: &mut Ctx, keys: &[Vec<u8>], max: bool, count: i64) -> Result<Reply, Reply> {
    for key in keys {
        if let Some(items) = pop(ctx, key, max, count)? {
            let pairs = items
                .into_iter()
                .map(|(m, s)| Reply::Array(vec![Reply::Bulk(m), Reply::Double(s)]));
            return Ok(Reply::Array(vec![
                Reply::Bulk(key.clone()),
                Reply::Array(pairs.collect()),
            ]));
        }
    }
    Ok(Reply::NilArray)
}

fn zmpop(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let (keys, max, count) = parse_mpop(args, 1)?;
        mpop_keys(ctx, &keys, max, count)
    })())
}

/// BZMPOP in a script never blocks: it pops like ZMPOP or replies null as if timed out.
fn bzmpop(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let (keys, max, count) = parse_mpop(args, 2)?;
        parse_timeout(ctx, &args[1])?;
        mpop_keys(ctx, &keys, max, count)
    })())
}

/// `getTimeoutFromObjectOrReply` in seconds: long double text, `ceil(t * 1000)` ms.
fn parse_timeout(ctx: &Ctx, arg: &[u8]) -> Result<(), Reply> {
    // 7.2 and later range-check it.
    if ctx.profile.timeout_out_of_range {
        return super::blocking::check_timeout(ctx, arg, true);
    }
    let t = number::parse_f64(arg).ok_or_else(|| Reply::err(TIMEOUT_NOT_FLOAT))?;
    let ms = (t * 1000.0).ceil();
    // A value a long long cannot hold converts to LLONG_MIN on x86: negative.
    if !(ms > -1.0 && ms < 9.223_372_036_854_776e18) {
        return Err(Reply::err(TIMEOUT_NEGATIVE));
    }
    Ok(())
}

// ---- ZUNION / ZINTER / ZDIFF ----

#[derive(Debug, Clone, Copy, PartialEq)]
enum SetOp {
    Union,
    Inter,
    Diff,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

fn aggregate(target: &mut f64, val: f64, how: Aggregate) {
    match how {
        Aggregate::Sum => {
            *target += val;
            // inf + -inf is NaN: Redis makes it 0.
            if target.is_nan() {
                *target = 0.0;
            }
        }
        Aggregate::Min => *target = if val < *target { val } else { *target },
        Aggregate::Max => *target = if val > *target { val } else { *target },
    }
}

/// An input of the set operations: a sorted set, a set (scores 1) or a missing key.
enum Source<'a> {
    Missing,
    Z(&'a ZSetValue),
    S(&'a SetValue),
}

impl Source<'_> {
    fn len(&self) -> usize {
        match self {
            Source::Missing => 0,
            Source::Z(z) => z.len(),
            Source::S(s) => s.len(),
        }
    }
    fn iter(&self) -> Box<dyn Iterator<Item = (&Vec<u8>, f64)> + '_> {
        match self {
            Source::Missing => Box::new(std::iter::empty()),
            Source::Z(z) => Box::new(z.iter()),
            Source::S(s) => Box::new(s.iter().map(|m| (m, 1.0))),
        }
    }
    fn find(&self, member: &[u8]) -> Option<f64> {
        match self {
            Source::Missing => None,
            Source::Z(z) => z.score(member),
            Source::S(s) => s.contains(member).then_some(1.0),
        }
    }
}

fn zunionstore(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zsetop(ctx, args, 2, SetOp::Union, false))
}
fn zinterstore(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zsetop(ctx, args, 2, SetOp::Inter, false))
}
fn zdiffstore(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zsetop(ctx, args, 2, SetOp::Diff, false))
}
fn zunion(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zsetop(ctx, args, 1, SetOp::Union, false))
}
fn zinter(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zsetop(ctx, args, 1, SetOp::Inter, false))
}
fn zdiff(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zsetop(ctx, args, 1, SetOp::Diff, false))
}
fn zintercard(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(zsetop(ctx, args, 1, SetOp::Inter, true))
}

/// `zunionInterDiffGenericCommand`; the destination is `args[1]` when `numkeys_idx` is 2.
fn zsetop(
    ctx: &mut Ctx,
    args: &[Vec<u8>],
    numkeys_idx: usize,
    op: SetOp,
    card_only: bool,
) -> Result<Reply, Reply> {
    let store = numkeys_idx == 2;
    let keys = input_keys(args, numkeys_idx)?;
    let setnum = keys.len();
    // Drop expired inputs first, so that plain shared borrows see only live keys.
    for key in keys {
        ctx.entry(key);
    }
    let db = ctx.keyspace.db(ctx.db_index);
    let mut sources = Vec::with_capacity(setnum);
    for key in keys {
        sources.push(match db.get(key, ctx.now_ms).map(|e| &e.value) {
            None => Source::Missing,
            Some(Value::ZSet(z)) => Source::Z(z),
            Some(Value::Set(s)) => Source::S(s),
            Some(_) => return Err(Reply::err(errors::WRONGTYPE)),
        });
    }
    let kind = SetOpKind {
        op,
        store,
        card_only,
    };
    let opts = setop_options(ctx.profile, args, numkeys_idx + 1 + setnum, setnum, kind)?;
    let mut srcs: Vec<(Source, f64)> = sources.into_iter().zip(opts.weights).collect();
    if op != SetOp::Diff {
        // Smallest inputs first (a stable sort, as glibc's qsort is a merge sort here).
        srcs.sort_by_key(|(s, _)| s.len());
    }
    // Redis builds the result as a skiplist, which keeps a -0 score (a listpack would not).
    let (mut result, cardinality) = match op {
        SetOp::Inter => intersection(&srcs, opts.how, card_only, opts.limit),
        SetOp::Union => (union(&srcs, opts.how), 0),
        SetOp::Diff => (difference(&srcs), 0),
    };
    if card_only {
        return Ok(Reply::Int(cardinality));
    }
    if store {
        let mut z = ZSetValue::new();
        for (m, s) in result {
            z.insert(m, s);
        }
        return Ok(store_result(ctx, &args[1], z));
    }
    // Scores are never NaN here; -0 and 0 compare equal as in Redis.
    result.sort_by(|a, b| {
        a.1.partial_cmp(&b.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.0.cmp(&b.0))
    });
    Ok(members_reply(ctx, result, opts.withscores))
}

/// The `numkeys` input keys after `args[numkeys_idx]`, or the error for a count below 1 or past
/// the arguments.
fn input_keys(args: &[Vec<u8>], numkeys_idx: usize) -> Result<&[Vec<u8>], Reply> {
    let setnum = int_arg(&args[numkeys_idx])?;
    if setnum < 1 {
        return Err(Reply::err(format!(
            "ERR at least 1 input key is needed for '{}' command",
            lower(&args[0])
        )));
    }
    let first = numkeys_idx + 1;
    if setnum > (args.len() - first) as i64 {
        return Err(Reply::err(errors::SYNTAX));
    }
    Ok(&args[first..first + setnum as usize])
}

/// Which of the set-operation commands runs: the options it takes follow from it.
#[derive(Clone, Copy)]
struct SetOpKind {
    op: SetOp,
    store: bool,
    card_only: bool,
}

/// WEIGHTS, AGGREGATE, WITHSCORES and (ZINTERCARD) LIMIT.
struct SetOpOptions {
    weights: Vec<f64>,
    how: Aggregate,
    withscores: bool,
    limit: i64,
}

/// The options from `args[from]` on, each where the command takes it.
fn setop_options(
    profile: &Profile,
    args: &[Vec<u8>],
    from: usize,
    setnum: usize,
    kind: SetOpKind,
) -> Result<SetOpOptions, Reply> {
    let SetOpKind {
        op,
        store,
        card_only,
    } = kind;
    let mut opts = SetOpOptions {
        weights: vec![1.0; setnum],
        how: Aggregate::Sum,
        withscores: false,
        limit: 0,
    };
    let mut j = from;
    while j < args.len() {
        let remaining = args.len() - j;
        let opt = lower(&args[j]);
        if op != SetOp::Diff && !card_only && remaining > setnum && opt == "weights" {
            for (i, w) in opts.weights.iter_mut().enumerate() {
                *w = number::string2d(profile.numbers.string2d, &args[j + 1 + i])
                    .ok_or_else(|| Reply::err(WEIGHT_NOT_FLOAT))?;
            }
            j += 1 + setnum;
        } else if op != SetOp::Diff && !card_only && remaining >= 2 && opt == "aggregate" {
            opts.how = match lower(&args[j + 1]).as_str() {
                "sum" => Aggregate::Sum,
                "min" => Aggregate::Min,
                "max" => Aggregate::Max,
                _ => return Err(Reply::err(errors::SYNTAX)),
            };
            j += 2;
        } else if !store && !card_only && opt == "withscores" {
            opts.withscores = true;
            j += 1;
        } else if card_only && remaining >= 2 && opt == "limit" {
            opts.limit = ranged_long(&args[j + 1], 0, i64::MAX, LIMIT_NEGATIVE)?;
            j += 2;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
    }
    Ok(opts)
}

/// The members of the first (smallest) input found in every other, scores aggregated; with
/// `card_only` only their count, up to `limit` when non-zero.
fn intersection(
    srcs: &[(Source, f64)],
    how: Aggregate,
    card_only: bool,
    limit: i64,
) -> (Vec<(Vec<u8>, f64)>, i64) {
    let mut result = Vec::new();
    let mut cardinality = 0i64;
    let (first_src, w0) = &srcs[0];
    for (member, s) in first_src.iter() {
        let mut score = w0 * s;
        if score.is_nan() {
            score = 0.0;
        }
        let mut in_all = true;
        for (src, w) in &srcs[1..] {
            match src.find(member) {
                Some(v) => aggregate(&mut score, v * w, how),
                None => {
                    in_all = false;
                    break;
                }
            }
        }
        if !in_all {
            continue;
        }
        if card_only {
            cardinality += 1;
            if limit > 0 && cardinality >= limit {
                break;
            }
        } else {
            result.push((member.clone(), score));
        }
    }
    (result, cardinality)
}

/// Every member of every input, scores aggregated.
fn union(srcs: &[(Source, f64)], how: Aggregate) -> Vec<(Vec<u8>, f64)> {
    let mut acc: HashMap<&Vec<u8>, f64> = HashMap::new();
    for (src, w) in srcs {
        for (member, s) in src.iter() {
            let mut score = w * s;
            if score.is_nan() {
                score = 0.0;
            }
            acc.entry(member)
                .and_modify(|t| aggregate(t, score, how))
                .or_insert(score);
        }
    }
    acc.into_iter().map(|(m, s)| (m.clone(), s)).collect()
}

/// The members of the first input found in no other, with their own scores.
fn difference(srcs: &[(Source, f64)]) -> Vec<(Vec<u8>, f64)> {
    let (first_src, _) = &srcs[0];
    first_src
        .iter()
        .filter(|(member, _)| srcs[1..].iter().all(|(src, _)| src.find(member).is_none()))
        .map(|(member, s)| (member.clone(), s))
        .collect()
}

// ---- key positions of the movable-key commands (Redis's `genericGetKeys`) ----

/// C `atoi`: leading spaces, optional sign, digits; anything else ends the number.
fn atoi(arg: &[u8]) -> i64 {
    let s = String::from_utf8_lossy(arg);
    let s = s.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for c in digits.bytes().take_while(u8::is_ascii_digit) {
        v = v.saturating_mul(10).saturating_add((c - b'0') as i64);
    }
    if neg {
        -v
    } else {
        v
    }
}

/// Input keys after `numkeys` at `count_idx`, then the store key; none when numkeys is bad.
fn generic_keys(args: &[Vec<u8>], store_idx: Option<usize>, count_idx: usize) -> Vec<usize> {
    let Some(count_arg) = args.get(count_idx) else {
        return Vec::new();
    };
    let num = atoi(count_arg);
    let first = count_idx + 1;
    if num < 1 || num > args.len().saturating_sub(first) as i64 {
        return Vec::new();
    }
    let mut keys: Vec<usize> = (first..first + num as usize).collect();
    keys.extend(store_idx);
    keys
}

fn op_keys(args: &[Vec<u8>]) -> Vec<usize> {
    generic_keys(args, None, 1)
}
fn store_op_keys(args: &[Vec<u8>]) -> Vec<usize> {
    generic_keys(args, Some(1), 2)
}
fn zmpop_keys(args: &[Vec<u8>]) -> Vec<usize> {
    generic_keys(args, None, 1)
}
fn bzmpop_keys(args: &[Vec<u8>]) -> Vec<usize> {
    generic_keys(args, None, 2)
}

// ---- ZRANDMEMBER / ZSCAN ----

fn zrandmember(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        if args.len() < 3 {
            let Some(size) = zset_mut(ctx, &args[1])?.map(|z| z.len()) else {
                return Ok(Reply::Nil);
            };
            let i = ctx.rng.below(size);
            let z = zset_mut(ctx, &args[1])?;
            return Ok(z
                .and_then(|z| z.get(i))
                .map_or(Reply::Nil, |(m, _)| Reply::Bulk(m.clone())));
        }
        let l = int_arg(&args[2])?;
        if l == i64::MIN {
            return Err(Reply::err(RANDMEMBER_RANGE));
        }
        if args.len() > 4 || (args.len() == 4 && lower(&args[3]) != "withscores") {
            return Err(Reply::err(errors::SYNTAX));
        }
        let withscores = args.len() == 4;
        if withscores && !(-i64::MAX / 2..=i64::MAX / 2).contains(&l) {
            return Err(Reply::err(OUT_OF_RANGE));
        }
        let Some(size) = zset_mut(ctx, &args[1])?.map(|z| z.len() as u64) else {
            return Ok(Reply::Array(Vec::new()));
        };
        let count = l.unsigned_abs();
        let unique = l >= 0;
        if count == 0 {
            return Ok(Reply::Array(Vec::new()));
        }
        let picks: Vec<usize> = if !unique || count == 1 {
            if count > MAX_RANDOM_REPLY {
                return Err(Reply::err(
                    "ERR evalbench: ZRANDMEMBER count is too large for the sandbox",
                ));
            }
            (0..count).map(|_| ctx.rng.below(size as usize)).collect()
        } else if count >= size {
            // The whole set, walked from the highest score down as Redis's iterator does.
            (0..size as usize).rev().collect()
        } else {
            // `count` distinct ranks (Floyd's sampling), order unspecified as in Redis.
            let mut chosen = std::collections::HashSet::new();
            let mut order = Vec::new();
            for j in (size - count)..size {
                let t = ctx.rng.below(j as usize + 1);
                let pick = if chosen.insert(t) { t } else { j as usize };
                chosen.insert(pick);
                order.push(pick);
            }
            order
        };
        let Some(z) = zset_mut(ctx, &args[1])? else {
            return Ok(Reply::Array(Vec::new()));
        };
        let items: Vec<(Vec<u8>, f64)> = picks
            .into_iter()
            .filter_map(|i| z.get(i).map(|(m, s)| (m.clone(), s)))
            .collect();
        Ok(members_reply(ctx, items, withscores))
    })())
}

/// How a listpack stores a score (`d2string`): integral values print as integers.
pub(super) fn d2string(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() <= (i64::MAX / 2) as f64 {
        return (v as i64).to_string();
    }
    format_double_resp2(v)
}

/// A listpack's score as ZSCAN returns it: the profile's `d2string` (the shortest text from 7.2
/// on, whose double replies are `d2string`'s; 7.0's `%.17g` with integers as integers).
pub(super) fn listpack_score(profile: &Profile, v: f64) -> String {
    match profile.double_replies {
        NumberFormat::ReplyDouble => profile.double_text(v),
        _ => d2string(v),
    }
}

fn zscan(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let star_limit = ctx.profile.glob_star_limit;
    let mut stop = ctx.stop.fork();
    let reply = flatten((|| {
        let cursor = super::hashes::scan_cursor(ctx, &args[2])?;
        let profile = ctx.profile;
        let Some(z) = zset_mut(ctx, &args[1])? else {
            return Ok(Reply::Array(vec![
                Reply::bulk("0"),
                Reply::Array(Vec::new()),
            ]));
        };
        let mut count = 10i64;
        let mut pattern: Option<&[u8]> = None;
        let mut i = 3;
        while i < args.len() {
            let left = args.len() - i;
            match lower(&args[i]).as_str() {
                "count" if left >= 2 => {
                    count = int_arg(&args[i + 1])?;
                    if count < 1 {
                        return Err(Reply::err(errors::SYNTAX));
                    }
                }
                "match" if left >= 2 => {
                    pattern = Some(&args[i + 1])
                        .filter(|p| p.as_slice() != b"*")
                        .map(|p| &p[..])
                }
                _ => return Err(Reply::err(errors::SYNTAX)),
            }
            i += 2;
        }
        // A listpack answers in one call; a skiplist (a hash table in Redis, whose order we
        // cannot copy) is paged by rank, the cursor being the next rank.
        let skiplist = z.is_skiplist();
        let (page, next): (Members, u64) = if skiplist {
            let start = usize::try_from(cursor).unwrap_or(usize::MAX);
            let end = start.saturating_add(count as usize).min(z.len());
            let next = if end >= z.len() { 0 } else { end as u64 };
            (owned(z.range(start, end)), next)
        } else {
            (owned(z.iter()), 0)
        };
        let mut out = Vec::new();
        for (m, s) in page {
            if filter_match(pattern, &m, star_limit, &mut stop) {
                let text = if skiplist {
                    format_double_resp2(s)
                } else {
                    listpack_score(profile, s)
                };
                out.push(Reply::Bulk(m));
                out.push(Reply::Bulk(text.into_bytes()));
            }
        }
        Ok(Reply::Array(vec![
            Reply::Bulk(next.to_string().into_bytes()),
            Reply::Array(out),
        ]))
    })());
    ctx.stop.join(stop);
    reply
}

#[cfg(test)]
mod tests {
    use super::super::TestServer;
    use crate::engine::keyspace::{SetValue, Value};
    use crate::engine::reply::Reply;

    fn bulk(s: &str) -> Reply {
        Reply::Bulk(s.as_bytes().to_vec())
    }
    fn bulks(items: &[&str]) -> Reply {
        Reply::Array(items.iter().map(|s| bulk(s)).collect())
    }
    fn err(s: &str) -> Reply {
        Reply::Error(s.to_string())
    }
    fn pair(m: &str, s: f64) -> Reply {
        Reply::Array(vec![bulk(m), Reply::Double(s)])
    }
    fn server() -> TestServer {
        let mut s = TestServer::new();
        assert_eq!(
            s.call(&["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"]),
            Reply::Int(5)
        );
        s
    }
    fn set_string(s: &mut TestServer, key: &str) {
        s.keyspace
            .db_mut(0)
            .set(key.as_bytes().to_vec(), Value::Str(b"v".to_vec()));
    }

    #[test]
    fn zadd_option_errors() {
        let mut s = server();
        assert_eq!(
            s.call(&["ZADD", "z", "NX", "XX", "1", "a"]),
            err(super::XX_AND_NX)
        );
        assert_eq!(
            s.call(&["ZADD", "z", "GT", "LT", "1", "a"]),
            err(super::GT_LT_NX)
        );
        assert_eq!(
            s.call(&["ZADD", "z", "NX", "GT", "1", "a"]),
            err(super::GT_LT_NX)
        );
        assert_eq!(
            s.call(&["ZADD", "z", "INCR", "1", "a", "2", "b"]),
            err(super::INCR_SINGLE_PAIR)
        );
        assert_eq!(
            s.call(&["ZADD", "z", "1", "a", "2"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["ZADD", "z", "abc", "a"]),
            err("ERR value is not a valid float")
        );
        assert_eq!(
            s.call(&["ZADD", "z", "1e500", "a"]),
            err("ERR value is not a valid float")
        );
        assert_eq!(
            s.call(&["ZADD", "z", "nan", "a"]),
            err("ERR value is not a valid float")
        );
        assert_eq!(
            s.call(&["ZINCRBY", "z", "nx", "c"]),
            err("ERR syntax error")
        );
        set_string(&mut s, "str");
        assert_eq!(
            s.call(&["ZADD", "str", "1", "a"]),
            err("WRONGTYPE Operation against a key holding the wrong kind of value")
        );
    }

    #[test]
    fn zadd_flags() {
        let mut s = TestServer::new();
        assert_eq!(s.call(&["ZADD", "z", "1", "a", "2", "b"]), Reply::Int(2));
        assert_eq!(
            s.call(&["ZADD", "z", "CH", "5", "a", "2", "b", "7", "d"]),
            Reply::Int(2)
        );
        assert_eq!(
            s.call(&["ZADD", "z", "GT", "CH", "1", "a", "9", "b"]),
            Reply::Int(1)
        );
        assert_eq!(s.call(&["ZADD", "z", "XX", "10", "nope"]), Reply::Int(0));
        assert_eq!(
            s.call(&["ZADD", "z", "XX", "INCR", "10", "nope"]),
            Reply::Nil
        );
        assert_eq!(s.call(&["ZADD", "z", "NX", "INCR", "10", "a"]), Reply::Nil);
        assert_eq!(
            s.call(&["ZADD", "z", "INCR", "-inf", "a"]),
            Reply::Double(f64::NEG_INFINITY)
        );
        assert_eq!(
            s.call(&["ZADD", "z", "INCR", "+inf", "a"]),
            err(super::NAN_SCORE)
        );
        assert_eq!(
            s.call(&["ZINCRBY", "new", "-0", "c"]).to_resp2(),
            bulk("-0")
        );
        assert_eq!(s.call(&["ZSCORE", "new", "c"]).to_resp2(), bulk("0"));
        assert_eq!(s.call(&["ZADD", "zz", "XX", "1", "a"]), Reply::Int(0));
        assert!(s.keyspace.db(0).get(b"zz", 0).is_none());
    }

    #[test]
    fn scores_and_ranks() {
        let mut s = server();
        assert_eq!(
            s.call(&["ZINCRBY", "z", "0.1", "c"]).to_resp2(),
            bulk("3.1000000000000001")
        );
        assert_eq!(s.call(&["ZSCORE", "z", "a"]), Reply::Double(1.0));
        assert_eq!(s.call(&["ZSCORE", "z", "q"]), Reply::Nil);
        assert_eq!(
            s.call(&["ZMSCORE", "nokey", "a", "b"]),
            Reply::Array(vec![Reply::Nil, Reply::Nil])
        );
        assert_eq!(s.call(&["ZCARD", "z"]), Reply::Int(5));
        assert_eq!(s.call(&["ZRANK", "z", "c"]), Reply::Int(2));
        assert_eq!(s.call(&["ZREVRANK", "z", "a"]), Reply::Int(4));
        assert_eq!(s.call(&["ZRANK", "z", "q"]), Reply::Nil);
        assert_eq!(s.call(&["ZREM", "z", "a", "q"]), Reply::Int(1));
        assert_eq!(s.call(&["ZREM", "z", "b", "c", "d", "e"]), Reply::Int(4));
        assert!(s.keyspace.db(0).get(b"z", 0).is_none());
    }

    #[test]
    fn counts_and_range_parsing() {
        let mut s = server();
        assert_eq!(s.call(&["ZCOUNT", "z", "(1", "(5"]), Reply::Int(3));
        assert_eq!(s.call(&["ZCOUNT", "z", "", " 3"]), Reply::Int(3));
        assert_eq!(
            s.call(&["ZCOUNT", "z", "2", "x"]),
            err("ERR min or max is not a float")
        );
        assert_eq!(
            s.call(&["ZCOUNT", "z", "nan", "1"]),
            err("ERR min or max is not a float")
        );
        assert_eq!(s.call(&["ZLEXCOUNT", "z", "[b", "(d"]), Reply::Int(2));
        assert_eq!(
            s.call(&["ZLEXCOUNT", "z", "b", "(d"]),
            err("ERR min or max not valid string range item")
        );
    }

    #[test]
    fn zrange_variants() {
        let mut s = server();
        assert_eq!(
            s.call(&["ZRANGE", "z", "1", "3", "REV"]),
            bulks(&["d", "c", "b"])
        );
        assert_eq!(s.call(&["ZRANGE", "z", "-100", "0"]), bulks(&["a"]));
        assert_eq!(
            s.call(&["ZRANGE", "z", "4", "(1", "BYSCORE", "REV", "LIMIT", "0", "2"]),
            bulks(&["d", "c"])
        );
        assert_eq!(
            s.call(&["ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "-1", "2"]),
            bulks(&[])
        );
        assert_eq!(
            s.call(&["ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "3", "-1"]),
            bulks(&["d", "e"])
        );
        assert_eq!(
            s.call(&["ZRANGE", "z", "0", "-1", "LIMIT", "0", "-1"])
                .to_resp2(),
            bulks(&["a", "b", "c", "d", "e"])
        );
        assert_eq!(
            s.call(&["ZRANGE", "z", "0", "-1", "LIMIT", "0", "1"]),
            err(super::LIMIT_NEEDS_BY)
        );
        assert_eq!(
            s.call(&["ZRANGE", "z", "[a", "[c", "BYLEX", "WITHSCORES"]),
            err(super::WITHSCORES_BYLEX)
        );
        assert_eq!(
            s.call(&["ZRANGE", "z", "[c", "-", "BYLEX", "REV", "LIMIT", "1", "5"]),
            bulks(&["b", "a"])
        );
        assert_eq!(
            s.call(&["ZRANGE", "z", "0", "1", "REV", "REV"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["ZRANGEBYSCORE", "z", "2", "4", "REV"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["ZREVRANGEBYLEX", "z", "[d", "(a"]),
            bulks(&["d", "c", "b"])
        );
        assert_eq!(
            s.call(&["ZREVRANGE", "z", "0", "1", "WITHSCORES"]),
            Reply::Array(vec![
                bulk("e"),
                Reply::Double(5.0),
                bulk("d"),
                Reply::Double(4.0)
            ])
        );
        s.resp3 = true;
        assert_eq!(
            s.call(&["ZRANGEBYSCORE", "z", "(3", "inf", "WITHSCORES"]),
            Reply::Array(vec![pair("d", 4.0), pair("e", 5.0)])
        );
    }

    #[test]
    fn lex_ranges_over_mixed_scores_follow_the_listpack_scan() {
        let mut s = TestServer::new();
        s.call(&[
            "ZADD", "m", "3", "a", "1", "b", "2", "c", "1", "d", "5", "e",
        ]);
        // Order is b d c a e; verified on Redis 7.0.15.
        assert_eq!(s.call(&["ZRANGEBYLEX", "m", "[a", "[c"]), bulks(&["b"]));
        assert_eq!(s.call(&["ZLEXCOUNT", "m", "[b", "+"]), Reply::Int(5));
        assert_eq!(s.call(&["ZREMRANGEBYLEX", "m", "[b", "[d"]), Reply::Int(4));
        assert_eq!(s.call(&["ZRANGE", "m", "0", "-1"]), bulks(&["e"]));
    }

    #[test]
    fn zrangestore_and_removals() {
        let mut s = server();
        assert_eq!(
            s.call(&[
                "ZRANGESTORE",
                "dst",
                "z",
                "(b",
                "+",
                "BYLEX",
                "LIMIT",
                "0",
                "2"
            ]),
            Reply::Int(2)
        );
        assert_eq!(s.call(&["ZRANGE", "dst", "0", "-1"]), bulks(&["c", "d"]));
        assert_eq!(
            s.call(&["ZRANGESTORE", "dst", "z", "1", "2", "WITHSCORES"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["ZRANGESTORE", "dst", "z", "5", "9"]),
            Reply::Int(0)
        );
        assert!(s.keyspace.db(0).get(b"dst", 0).is_none());
        assert_eq!(s.call(&["ZREMRANGEBYSCORE", "z", "(1", "3"]), Reply::Int(2));
        assert_eq!(s.call(&["ZREMRANGEBYLEX", "z", "[a", "[a"]), Reply::Int(1));
        assert_eq!(
            s.call(&["ZREMRANGEBYRANK", "z", "x", "0"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            s.call(&["ZREMRANGEBYRANK", "z", "-100", "100"]),
            Reply::Int(2)
        );
        assert!(s.keyspace.db(0).get(b"z", 0).is_none());
    }

    #[test]
    fn pops() {
        let mut s = server();
        assert_eq!(
            s.call(&["ZPOPMIN", "z"]),
            Reply::Array(vec![bulk("a"), Reply::Double(1.0)])
        );
        assert_eq!(
            s.call(&["ZPOPMIN", "z", "-1"]),
            err(super::MUST_BE_POSITIVE)
        );
        assert_eq!(s.call(&["ZPOPMIN", "z", "x"]), err(super::MUST_BE_POSITIVE));
        assert_eq!(s.call(&["ZPOPMIN", "z", "1", "2"]), err("ERR syntax error"));
        assert_eq!(s.call(&["ZPOPMIN", "z", "0"]), Reply::Array(vec![]));
        s.resp3 = true;
        assert_eq!(
            s.call(&["ZPOPMAX", "z", "2"]),
            Reply::Array(vec![pair("e", 5.0), pair("d", 4.0)])
        );
        assert_eq!(
            s.call(&["ZPOPMAX", "z"]),
            Reply::Array(vec![bulk("c"), Reply::Double(3.0)])
        );
        assert_eq!(
            s.call(&["ZMPOP", "2", "nokey", "z", "MIN", "COUNT", "5"]),
            Reply::Array(vec![bulk("z"), Reply::Array(vec![pair("b", 2.0)])])
        );
        assert_eq!(s.call(&["ZMPOP", "1", "z", "MIN"]), Reply::NilArray);
        assert_eq!(
            s.call(&["ZMPOP", "0", "z", "MIN"]),
            err(super::NUMKEYS_POSITIVE)
        );
        assert_eq!(s.call(&["ZMPOP", "5", "z", "MIN"]), err("ERR syntax error"));
        assert_eq!(
            s.call(&["ZMPOP", "1", "z", "MIN", "COUNT", "0"]),
            err(super::COUNT_POSITIVE)
        );
        assert_eq!(
            s.call(&["ZMPOP", "1", "z", "MIN", "COUNT", "1", "COUNT", "1"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["BZMPOP", "inf", "1", "z", "MIN"]),
            err(super::TIMEOUT_NEGATIVE)
        );
        assert_eq!(
            s.call(&["BZMPOP", "x", "1", "z", "MIN"]),
            err(super::TIMEOUT_NOT_FLOAT)
        );
        assert_eq!(s.call(&["BZMPOP", "0", "1", "z", "MIN"]), Reply::NilArray);
        s.call(&["ZADD", "h", "1", "a"]);
        assert_eq!(
            s.call(&["BZMPOP", "0", "1", "h", "MAX", "COUNT", "2"]),
            Reply::Array(vec![bulk("h"), Reply::Array(vec![pair("a", 1.0)])])
        );
        assert_eq!(
            s.call(&["BZPOPMIN", "h", "0"]),
            err("ERR This Redis command is not allowed from script")
        );
    }

    #[test]
    fn set_operations() {
        let mut s = TestServer::new();
        s.call(&["ZADD", "u1", "1", "a", "2", "b", "3", "c"]);
        s.call(&["ZADD", "u2", "10", "b", "20", "c", "30", "d"]);
        let mut set = SetValue::new();
        for m in ["a", "d", "x"] {
            set.insert(m.as_bytes().to_vec(), None);
        }
        s.keyspace.db_mut(0).set(b"s1".to_vec(), Value::Set(set));
        assert_eq!(
            s.call(&[
                "ZUNION",
                "3",
                "u1",
                "u2",
                "s1",
                "WEIGHTS",
                "2",
                "3",
                "4",
                "WITHSCORES"
            ])
            .to_resp2(),
            bulks(&["x", "4", "a", "6", "b", "34", "c", "66", "d", "94"])
        );
        assert_eq!(
            s.call(&["ZINTER", "2", "u1", "s1", "WITHSCORES", "AGGREGATE", "MAX"])
                .to_resp2(),
            bulks(&["a", "1"])
        );
        assert_eq!(s.call(&["ZDIFF", "2", "u1", "s1"]), bulks(&["b", "c"]));
        assert_eq!(
            s.call(&["ZDIFF", "2", "u1", "u2", "WEIGHTS", "1", "1"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["ZUNION", "2", "u1", "u2", "WEIGHTS", "1", "x"]),
            err(super::WEIGHT_NOT_FLOAT)
        );
        assert_eq!(
            s.call(&["ZUNION", "0", "u1"]),
            err("ERR at least 1 input key is needed for 'zunion' command")
        );
        assert_eq!(
            s.call(&["ZUNION", "3", "u1", "u2"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["ZUNIONSTORE", "out", "2", "u1", "u2", "WITHSCORES"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["ZINTERSTORE", "out", "2", "u1", "u2", "WEIGHTS", "2", "0.5"]),
            Reply::Int(2)
        );
        assert_eq!(
            s.call(&["ZRANGE", "out", "0", "-1", "WITHSCORES"])
                .to_resp2(),
            bulks(&["b", "9", "c", "16"])
        );
        assert_eq!(
            s.call(&["ZINTERSTORE", "out", "2", "u1", "nokey"]),
            Reply::Int(0)
        );
        assert!(s.keyspace.db(0).get(b"out", 0).is_none());
        assert_eq!(
            s.call(&["ZINTERCARD", "2", "u1", "u2", "LIMIT", "1"]),
            Reply::Int(1)
        );
        assert_eq!(
            s.call(&["ZINTERCARD", "2", "u1", "u2", "LIMIT", "-1"]),
            err(super::LIMIT_NEGATIVE)
        );
        s.call(&["ZADD", "i1", "inf", "a", "-inf", "b"]);
        s.call(&["ZADD", "i2", "-inf", "a", "inf", "b"]);
        assert_eq!(
            s.call(&["ZUNION", "2", "i1", "i2", "WITHSCORES"])
                .to_resp2(),
            bulks(&["a", "0", "b", "0"])
        );
        assert_eq!(
            s.call(&["ZUNION", "1", "u1", "WEIGHTS", "-0", "WITHSCORES"])
                .to_resp2(),
            bulks(&["a", "-0", "b", "-0", "c", "-0"])
        );
        let resolved = super::super::resolve(&[
            b"zunionstore".to_vec(),
            b"d".to_vec(),
            b"2".to_vec(),
            b"a".to_vec(),
            b"b".to_vec(),
        ]);
        let args: Vec<Vec<u8>> = ["zunionstore", "d", "2", "a", "b"]
            .iter()
            .map(|a| a.as_bytes().to_vec())
            .collect();
        assert_eq!(
            resolved.map(|r| r.key_positions(&args)).ok(),
            Some(vec![3, 4, 1])
        );
    }

    #[test]
    fn randmember_and_scan() {
        let mut s = server();
        assert_eq!(
            s.call(&["ZRANDMEMBER", "z", "10"]),
            bulks(&["e", "d", "c", "b", "a"])
        );
        assert_eq!(
            s.call(&["ZRANDMEMBER", "z", "x"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            s.call(&["ZRANDMEMBER", "z", "-9223372036854775808"]),
            err(super::RANDMEMBER_RANGE)
        );
        assert_eq!(
            s.call(&["ZRANDMEMBER", "z", "9223372036854775807", "WITHSCORES"]),
            err("ERR value is out of range")
        );
        assert_eq!(
            s.call(&["ZRANDMEMBER", "z", "1", "x"]),
            err("ERR syntax error")
        );
        match s.call(&["ZRANDMEMBER", "z", "-7"]) {
            Reply::Array(v) => assert_eq!(v.len(), 7),
            other => panic!("{other:?}"),
        }
        match s.call(&["ZRANDMEMBER", "z", "3"]) {
            Reply::Array(mut v) => {
                v.sort_by_key(|r| format!("{r:?}"));
                v.dedup();
                assert_eq!(v.len(), 3);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            s.call(&["ZSCAN", "z", "0", "MATCH", "b*"]),
            Reply::Array(vec![bulk("0"), bulks(&["b", "2"])])
        );
        assert_eq!(s.call(&["ZSCAN", "z", "x"]), err("ERR invalid cursor"));
        assert_eq!(
            s.call(&["ZSCAN", "z", "0", "COUNT", "0"]),
            err("ERR syntax error")
        );
        s.call(&["ZADD", "big", "100000000000000000", "a"]);
        assert_eq!(
            s.call(&["ZSCAN", "big", "0"]),
            Reply::Array(vec![bulk("0"), bulks(&["a", "100000000000000000"])])
        );
    }

    #[test]
    fn large_sets_use_logarithmic_paths() {
        let mut s = TestServer::new();
        let mut z = crate::engine::keyspace::ZSetValue::new();
        for i in 0..200_000u32 {
            z.insert(format!("m{i:06}").into_bytes(), (i / 2) as f64);
        }
        s.keyspace.db_mut(0).set(b"big".to_vec(), Value::ZSet(z));
        assert_eq!(s.call(&["ZRANK", "big", "m150001"]), Reply::Int(150001));
        assert_eq!(
            s.call(&["ZRANGE", "big", "100000", "100001"]),
            bulks(&["m100000", "m100001"])
        );
        assert_eq!(
            s.call(&["ZRANGEBYSCORE", "big", "(70000", "70001"]),
            bulks(&["m140002", "m140003"])
        );
        assert_eq!(s.call(&["ZCOUNT", "big", "10", "(20"]), Reply::Int(20));
        assert_eq!(
            s.call(&["ZREMRANGEBYRANK", "big", "0", "99999"]),
            Reply::Int(100000)
        );
        assert_eq!(s.call(&["ZRANK", "big", "m150001"]), Reply::Int(50001));
    }
}
