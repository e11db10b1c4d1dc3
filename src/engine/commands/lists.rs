//! List commands (t_list.c @7.0.15; 7.2's listpack lists where the profile has them). Lists are
//! `VecDeque`s: O(1) at both ends and for index access, as quicklist is close enough to that for
//! every command here; `ListValue` also keeps the encoding, converted where Redis converts it.

use super::{errors, flatten, float_arg, int_arg, lower, Command, Ctx};
use crate::engine::keyspace::list::ListEnd;
use crate::engine::keyspace::{ListValue, Value};
use crate::engine::number;
use crate::engine::reply::Reply;

const NOT_POSITIVE: &str = "ERR value is out of range, must be positive";
/// `getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX)` (LPOS RANK from 7.2, LREM from 7.4).
const LLONG_MIN_OUT_OF_RANGE: &str =
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
const RANK_ZERO: &str = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list";
const COUNT_NEGATIVE: &str = "ERR COUNT can't be negative";
const MAXLEN_NEGATIVE: &str = "ERR MAXLEN can't be negative";
const NUMKEYS: &str = "ERR numkeys should be greater than 0";
const COUNT_POSITIVE: &str = "ERR count should be greater than 0";
const TIMEOUT_NOT_FLOAT: &str = "ERR timeout is not a float or out of range";
const TIMEOUT_NEGATIVE: &str = "ERR timeout is negative";

pub static COMMANDS: &[Command] = &[
    Command::new("lpush", lpush),
    Command::new("rpush", rpush),
    Command::new("lpushx", lpushx),
    Command::new("rpushx", rpushx),
    Command::new("lpop", lpop),
    Command::new("rpop", rpop),
    Command::new("llen", llen),
    Command::new("lrange", lrange),
    Command::new("lindex", lindex),
    Command::new("lset", lset),
    Command::new("linsert", linsert),
    Command::new("lrem", lrem),
    Command::new("ltrim", ltrim),
    Command::new("lpos", lpos),
    Command::new("lmove", lmove),
    Command::new("rpoplpush", rpoplpush),
    Command::with_keys("lmpop", lmpop, lmpop_keys),
    Command::with_keys("blmpop", blmpop, blmpop_keys),
];

#[derive(Clone, Copy, PartialEq)]
pub(super) enum End {
    Left,
    Right,
}

pub(super) fn end_arg(arg: &[u8]) -> Result<End, Reply> {
    match lower(arg).as_str() {
        "left" => Ok(End::Left),
        "right" => Ok(End::Right),
        _ => Err(Reply::err(errors::SYNTAX)),
    }
}

/// The live list at `key`: `Ok(None)` when missing, WRONGTYPE for another type.
pub(super) fn list_mut<'a>(
    ctx: &'a mut Ctx,
    key: &[u8],
) -> Result<Option<&'a mut ListValue>, Reply> {
    match ctx.value(key) {
        None => Ok(None),
        Some(Value::List(l)) => Ok(Some(l)),
        Some(_) => Err(Reply::err(errors::WRONGTYPE)),
    }
}

fn list_end(end: End) -> ListEnd {
    match end {
        End::Left => ListEnd::Head,
        End::Right => ListEnd::Tail,
    }
}

pub(super) fn pop_end(list: &mut ListValue, end: End) -> Option<Vec<u8>> {
    list.pop(list_end(end))
}

fn push_end(list: &mut ListValue, end: End, item: Vec<u8>) {
    list.push(list_end(end), item)
}

/// After a write removed elements from `key` (`listElementsRemoved`, LTRIM, LREM): an emptied
/// list goes away, another may become a listpack again (7.2+).
pub(super) fn elements_removed(ctx: &mut Ctx, key: &[u8]) {
    let listpack = ctx.profile.listpack_collections;
    if let Ok(Some(list)) = list_mut(ctx, key) {
        if !list.is_empty() {
            list.after_shrink(listpack);
        }
    }
    ctx.db().remove_if_empty(key);
}

/// Redis range normalisation (`listTypeRange`-style): `None` when the range is empty.
fn norm_range(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let end = if end < 0 { len + end } else { end };
    if start > end || start >= len {
        return None;
    }
    Some((start as usize, end.min(len - 1) as usize))
}

fn push_generic(ctx: &mut Ctx, args: &[Vec<u8>], end: End, only_existing: bool) -> Reply {
    flatten((|| {
        let key = &args[1];
        let listpack = ctx.profile.listpack_collections;
        if list_mut(ctx, key)?.is_none() {
            if only_existing {
                return Ok(Reply::Int(0));
            }
            ctx.db()
                .set(key.clone(), Value::List(ListValue::created(listpack)));
        }
        let Some(list) = list_mut(ctx, key)? else {
            return Ok(Reply::Int(0));
        };
        list.before_append(args[2..].iter().map(Vec::as_slice), listpack);
        for item in &args[2..] {
            push_end(list, end, item.clone());
        }
        Ok(Reply::Int(list.len() as i64))
    })())
}

fn lpush(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    push_generic(ctx, args, End::Left, false)
}
fn rpush(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    push_generic(ctx, args, End::Right, false)
}
fn lpushx(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    push_generic(ctx, args, End::Left, true)
}
fn rpushx(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    push_generic(ctx, args, End::Right, true)
}

fn pop_generic(ctx: &mut Ctx, args: &[Vec<u8>], end: End) -> Reply {
    flatten((|| {
        if args.len() > 3 {
            return Err(Reply::err(errors::wrong_args(&lower(&args[0]))));
        }
        let count = match args.get(2) {
            Some(a) => Some(
                number::parse_i64(a)
                    .filter(|n| *n >= 0)
                    .ok_or_else(|| Reply::err(NOT_POSITIVE))?,
            ),
            None => None,
        };
        let key = &args[1];
        let Some(list) = list_mut(ctx, key)? else {
            return Ok(if count.is_some() {
                Reply::NilArray
            } else {
                Reply::Nil
            });
        };
        let reply = match count {
            None => pop_end(list, end).map_or(Reply::Nil, Reply::Bulk),
            Some(n) => {
                let n = (n as u64).min(list.len() as u64) as usize;
                Reply::Array(
                    (0..n)
                        .filter_map(|_| pop_end(list, end))
                        .map(Reply::Bulk)
                        .collect(),
                )
            }
        };
        elements_removed(ctx, key);
        Ok(reply)
    })())
}

fn lpop(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    pop_generic(ctx, args, End::Left)
}
fn rpop(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    pop_generic(ctx, args, End::Right)
}

fn llen(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(list_mut(ctx, &args[1]).map(|l| Reply::Int(l.map_or(0, |l| l.len() as i64))))
}

fn lrange(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let start = int_arg(&args[2])?;
        let end = int_arg(&args[3])?;
        let Some(list) = list_mut(ctx, &args[1])? else {
            return Ok(Reply::Array(vec![]));
        };
        Ok(match norm_range(start, end, list.len()) {
            Some((s, e)) => {
                Reply::Array(list.range(s..=e).map(|v| Reply::Bulk(v.clone())).collect())
            }
            None => Reply::Array(vec![]),
        })
    })())
}

/// Index `i` (negative from the tail) into a list of `len`.
fn list_index(i: i64, len: usize) -> Option<usize> {
    let i = if i < 0 { len as i64 + i } else { i };
    (i >= 0 && i < len as i64).then_some(i as usize)
}

fn lindex(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let Some(list) = list_mut(ctx, &args[1])? else {
            return Ok(Reply::Nil);
        };
        let i = int_arg(&args[2])?;
        Ok(list_index(i, list.len()).map_or(Reply::Nil, |i| Reply::Bulk(list[i].clone())))
    })())
}

fn lset(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let listpack = ctx.profile.listpack_collections;
        let index_int = ctx.profile.lset_index_int;
        let list = list_mut(ctx, &args[1])?.ok_or_else(|| Reply::err(errors::NO_SUCH_KEY))?;
        let mut i = int_arg(&args[2])?;
        if index_int {
            i = i64::from(i as i32);
        }
        // The growing check comes first, replaced or not (7.2+).
        list.before_append(std::iter::once(args[3].as_slice()), listpack);
        let i = list_index(i, list.len()).ok_or_else(|| Reply::err(errors::INDEX_OUT_OF_RANGE))?;
        list.replace(i, args[3].clone());
        list.after_shrink(listpack);
        Ok(Reply::ok())
    })())
}

fn linsert(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let after = match lower(&args[2]).as_str() {
            "after" => true,
            "before" => false,
            _ => return Err(Reply::err(errors::SYNTAX)),
        };
        let listpack = ctx.profile.listpack_collections;
        let Some(list) = list_mut(ctx, &args[1])? else {
            return Ok(Reply::Int(0));
        };
        // Converted before the pivot is looked for, inserted or not (7.2+).
        list.before_append(std::iter::once(args[4].as_slice()), listpack);
        let Some(pos) = list.iter().position(|v| *v == args[3]) else {
            return Ok(Reply::Int(-1));
        };
        list.insert(pos, after, args[4].clone());
        Ok(Reply::Int(list.len() as i64))
    })())
}

fn lrem(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let count = int_arg(&args[2])?;
        if count == i64::MIN && ctx.profile.lrem_count_excludes_llong_min {
            return Err(Reply::err(LLONG_MIN_OUT_OF_RANGE));
        }
        let key = &args[1];
        let Some(list) = list_mut(ctx, key)? else {
            return Ok(Reply::Int(0));
        };
        let target = &args[3];
        let limit = if count == 0 {
            u64::MAX
        } else {
            count.unsigned_abs()
        };
        // One pass either way, so a long list with many matches stays linear.
        let mut removed = 0u64;
        let mut keep = vec![true; list.len()];
        if count >= 0 {
            for (i, v) in list.iter().enumerate() {
                if removed == limit {
                    break;
                }
                if v == target {
                    keep[i] = false;
                    removed += 1;
                }
            }
        } else {
            for i in (0..list.len()).rev() {
                if removed == limit {
                    break;
                }
                if list[i] == *target {
                    keep[i] = false;
                    removed += 1;
                }
            }
        }
        if removed > 0 {
            list.retain_elements(&keep);
        }
        if removed > 0 {
            elements_removed(ctx, key);
        }
        Ok(Reply::Int(removed as i64))
    })())
}

fn ltrim(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let start = int_arg(&args[2])?;
        let end = int_arg(&args[3])?;
        let key = &args[1];
        let Some(list) = list_mut(ctx, key)? else {
            return Ok(Reply::ok());
        };
        match norm_range(start, end, list.len()) {
            Some((s, e)) => {
                let keep: Vec<bool> = (0..list.len()).map(|i| (s..=e).contains(&i)).collect();
                list.retain_elements(&keep);
            }
            None => list.clear(),
        }
        elements_removed(ctx, key);
        Ok(Reply::ok())
    })())
}

fn lpos(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let (mut rank, mut count, mut maxlen) = (1i64, None::<i64>, 0i64);
        let mut j = 3;
        while j < args.len() {
            let opt = lower(&args[j]);
            let Some(val) = args.get(j + 1) else {
                return Err(Reply::err(errors::SYNTAX));
            };
            match opt.as_str() {
                "rank" => {
                    rank = int_arg(val)?;
                    if rank == i64::MIN && ctx.profile.lpos_rank_excludes_llong_min {
                        return Err(Reply::err(LLONG_MIN_OUT_OF_RANGE));
                    }
                    if rank == 0 {
                        return Err(Reply::err(RANK_ZERO));
                    }
                }
                "count" => {
                    count = Some(
                        number::parse_i64(val)
                            .filter(|n| *n >= 0)
                            .ok_or_else(|| Reply::err(COUNT_NEGATIVE))?,
                    )
                }
                "maxlen" => {
                    maxlen = number::parse_i64(val)
                        .filter(|n| *n >= 0)
                        .ok_or_else(|| Reply::err(MAXLEN_NEGATIVE))?
                }
                _ => return Err(Reply::err(errors::SYNTAX)),
            }
            j += 2;
        }
        let Some(list) = list_mut(ctx, &args[1])? else {
            return Ok(if count.is_some() {
                Reply::Array(vec![])
            } else {
                Reply::Nil
            });
        };
        let target = &args[2];
        let len = list.len();
        let scan = if maxlen == 0 {
            len
        } else {
            (maxlen as u64).min(len as u64) as usize
        };
        // Number of matches to skip before the first reported one.
        // RANK LLONG_MIN stays negative after Redis negates it, so the first match counts.
        let mut skip = if rank == i64::MIN {
            0
        } else {
            rank.unsigned_abs() - 1
        };
        let want = match count {
            None => 1,
            Some(0) => usize::MAX,
            Some(n) => n as usize,
        };
        let mut found = Vec::new();
        let mut check = |i: usize| -> bool {
            if list[i] == *target {
                if skip > 0 {
                    skip -= 1;
                } else {
                    found.push(Reply::Int(i as i64));
                    return found.len() >= want;
                }
            }
            false
        };
        if rank > 0 {
            for i in 0..scan {
                if check(i) {
                    break;
                }
            }
        } else {
            for i in (len - scan..len).rev() {
                if check(i) {
                    break;
                }
            }
        }
        Ok(match count {
            Some(_) => Reply::Array(found),
            None => found.pop().unwrap_or(Reply::Nil),
        })
    })())
}

/// Pop from `src` and push onto `dst`; missing `src` gives nil. Both types are checked first.
pub(super) fn move_generic(
    ctx: &mut Ctx,
    src: &[u8],
    dst: &[u8],
    from: End,
    to: End,
) -> Result<Reply, Reply> {
    if list_mut(ctx, src)?.is_none() {
        return Ok(Reply::Nil);
    }
    list_mut(ctx, dst)?;
    let item = list_mut(ctx, src)?.and_then(|l| pop_end(l, from));
    let Some(item) = item else {
        return Ok(Reply::Nil);
    };
    // Push before deleting an emptied source, as Redis does: with `src == dst` the list is not
    // empty again and keeps its key (and its TTL).
    let listpack = ctx.profile.listpack_collections;
    if list_mut(ctx, dst)?.is_none() {
        ctx.db()
            .set(dst.to_vec(), Value::List(ListValue::created(listpack)));
    }
    if let Some(l) = list_mut(ctx, dst)? {
        l.before_append(std::iter::once(item.as_slice()), listpack);
        push_end(l, to, item.clone());
    }
    elements_removed(ctx, src);
    Ok(Reply::Bulk(item))
}

fn lmove(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let from = end_arg(&args[3])?;
        let to = end_arg(&args[4])?;
        move_generic(ctx, &args[1], &args[2], from, to)
    })())
}

fn rpoplpush(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(move_generic(ctx, &args[1], &args[2], End::Right, End::Left))
}

/// `numkeys` at `idx`, checked against the arguments that follow (LMPOP/BLMPOP).
fn numkeys_at(args: &[Vec<u8>], idx: usize) -> Result<usize, Reply> {
    let n = number::parse_i64(&args[idx])
        .filter(|n| *n >= 1)
        .ok_or_else(|| Reply::err(NUMKEYS))?;
    Ok(n as u64 as usize)
}

fn mpop_keys(args: &[Vec<u8>], idx: usize) -> Vec<usize> {
    let Some(n) = args
        .get(idx)
        .and_then(|a| number::parse_i64(a))
        .filter(|n| *n >= 1)
    else {
        return vec![];
    };
    let last = (idx as u64)
        .saturating_add(n as u64)
        .min(args.len() as u64 - 1) as usize;
    (idx + 1..=last).collect()
}

fn lmpop_keys(args: &[Vec<u8>]) -> Vec<usize> {
    mpop_keys(args, 1)
}
fn blmpop_keys(args: &[Vec<u8>]) -> Vec<usize> {
    mpop_keys(args, 2)
}

/// Shared LMPOP/BLMPOP body; `timeout` is checked after the other arguments, as Redis does.
fn mpop_generic(
    ctx: &mut Ctx,
    args: &[Vec<u8>],
    idx: usize,
    timeout: Option<&[u8]>,
) -> Result<Reply, Reply> {
    let numkeys = numkeys_at(args, idx)?;
    let where_idx = idx
        .checked_add(numkeys)
        .and_then(|i| i.checked_add(1))
        .filter(|i| *i < args.len());
    let where_idx = where_idx.ok_or_else(|| Reply::err(errors::SYNTAX))?;
    let end = end_arg(&args[where_idx])?;
    let mut count = None;
    let mut j = where_idx + 1;
    while j < args.len() {
        if count.is_none() && lower(&args[j]) == "count" && j + 1 < args.len() {
            j += 1;
            let n = number::parse_i64(&args[j])
                .filter(|n| *n >= 1)
                .ok_or_else(|| Reply::err(COUNT_POSITIVE))?;
            count = Some(n as u64);
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        j += 1;
    }
    if let Some(t) = timeout {
        check_timeout(ctx, t)?;
    }
    let count = count.unwrap_or(1);
    for key in &args[idx + 1..where_idx] {
        let Some(list) = list_mut(ctx, key)? else {
            continue;
        };
        let n = count.min(list.len() as u64) as usize;
        let items: Vec<Reply> = (0..n)
            .filter_map(|_| pop_end(list, end))
            .map(Reply::Bulk)
            .collect();
        elements_removed(ctx, key);
        return Ok(Reply::Array(vec![
            Reply::Bulk(key.clone()),
            Reply::Array(items),
        ]));
    }
    Ok(Reply::NilArray)
}

/// `getTimeoutFromObjectOrReply` in seconds: a long double, times 1000, cast to long long.
fn check_timeout(ctx: &Ctx, arg: &[u8]) -> Result<(), Reply> {
    // 7.2 and later range-check it.
    if ctx.profile.timeout_out_of_range {
        return super::blocking::check_timeout(ctx, arg, true);
    }
    let secs = float_arg(arg).map_err(|_| Reply::err(TIMEOUT_NOT_FLOAT))?;
    let ms = secs * 1000.0;
    // C's cast of an out-of-range value yields LLONG_MIN on x86, hence "negative".
    if !(ms > -1.0 && ms < 9.223_372_036_854_776e18) {
        return Err(Reply::err(TIMEOUT_NEGATIVE));
    }
    Ok(())
}

fn lmpop(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(mpop_generic(ctx, args, 1, None))
}

/// Inside a script BLMPOP never blocks: it pops if it can, else answers nil at once.
fn blmpop(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(mpop_generic(ctx, args, 2, Some(&args[1])))
}

#[cfg(test)]
mod tests {
    use super::super::TestServer;
    use crate::engine::reply::Reply;

    fn b(s: &str) -> Reply {
        Reply::bulk(s.as_bytes())
    }
    fn arr(items: &[&str]) -> Reply {
        Reply::Array(items.iter().map(|s| b(s)).collect())
    }
    fn err(s: &str) -> Reply {
        Reply::err(s)
    }

    #[test]
    fn push_pop_len() {
        let mut s = TestServer::new();
        assert_eq!(s.call(&["RPUSH", "l", "a", "b", "c"]), Reply::Int(3));
        assert_eq!(s.call(&["LPUSH", "l", "z"]), Reply::Int(4));
        assert_eq!(s.call(&["LPUSHX", "nokey", "z"]), Reply::Int(0));
        assert_eq!(s.call(&["RPUSHX", "l", "d"]), Reply::Int(5));
        assert_eq!(s.call(&["LLEN", "l"]), Reply::Int(5));
        assert_eq!(s.call(&["LPOP", "l"]), b("z"));
        assert_eq!(s.call(&["RPOP", "l", "2"]), arr(&["d", "c"]));
        assert_eq!(s.call(&["LPOP", "l", "0"]), arr(&[]));
        assert_eq!(s.call(&["LPOP", "nokey"]), Reply::Nil);
        assert_eq!(s.call(&["LPOP", "nokey", "1"]), Reply::NilArray);
        assert_eq!(
            s.call(&["LPOP", "l", "-1"]),
            err("ERR value is out of range, must be positive")
        );
        assert_eq!(
            s.call(&["LPOP", "l", "1", "2"]),
            err("ERR wrong number of arguments for 'lpop' command")
        );
        assert_eq!(s.call(&["LPOP", "l", "10"]), arr(&["a", "b"]));
        assert!(!s.keyspace.db(0).contains(b"l", s.now_ms));
        assert_eq!(s.call(&["LLEN", "l"]), Reply::Int(0));
    }

    #[test]
    fn wrong_type() {
        let mut s = TestServer::new();
        s.call(&["LPUSH", "l", "a"]);
        s.keyspace.db_mut(0).set(
            b"s".to_vec(),
            crate::engine::keyspace::Value::Str(b"x".to_vec()),
        );
        let wt = err(crate::engine::commands::errors::WRONGTYPE);
        assert_eq!(s.call(&["LPUSH", "s", "a"]), wt);
        assert_eq!(s.call(&["LPOP", "s", "0"]), wt);
        assert_eq!(s.call(&["RPOPLPUSH", "l", "s"]), wt);
        assert_eq!(s.call(&["LRANGE", "l", "0", "-1"]), arr(&["a"]));
        assert_eq!(s.call(&["LMPOP", "2", "nokey", "s", "LEFT"]), wt);
    }

    #[test]
    fn range_index_set() {
        let mut s = TestServer::new();
        s.call(&["RPUSH", "l", "a", "b", "c", "d"]);
        assert_eq!(s.call(&["LRANGE", "l", "1", "-2"]), arr(&["b", "c"]));
        assert_eq!(
            s.call(&["LRANGE", "l", "-100", "100"]),
            arr(&["a", "b", "c", "d"])
        );
        assert_eq!(s.call(&["LRANGE", "l", "3", "1"]), arr(&[]));
        assert_eq!(
            s.call(&["LRANGE", "l", "a", "1"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(s.call(&["LINDEX", "l", "-1"]), b("d"));
        assert_eq!(s.call(&["LINDEX", "l", "9"]), Reply::Nil);
        assert_eq!(s.call(&["LSET", "l", "-1", "x"]), Reply::ok());
        assert_eq!(
            s.call(&["LSET", "l", "4", "x"]),
            err("ERR index out of range")
        );
        assert_eq!(s.call(&["LSET", "nokey", "x", "x"]), err("ERR no such key"));
        assert_eq!(s.call(&["LINSERT", "l", "BEFORE", "b", "q"]), Reply::Int(5));
        assert_eq!(s.call(&["LINSERT", "l", "after", "x", "y"]), Reply::Int(6));
        assert_eq!(
            s.call(&["LINSERT", "l", "after", "zz", "y"]),
            Reply::Int(-1)
        );
        assert_eq!(
            s.call(&["LINSERT", "l", "middle", "zz", "y"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["LINSERT", "nokey", "after", "zz", "y"]),
            Reply::Int(0)
        );
        assert_eq!(
            s.call(&["LRANGE", "l", "0", "-1"]),
            arr(&["a", "q", "b", "c", "x", "y"])
        );
        assert_eq!(s.call(&["LTRIM", "l", "1", "-2"]), Reply::ok());
        assert_eq!(
            s.call(&["LRANGE", "l", "0", "-1"]),
            arr(&["q", "b", "c", "x"])
        );
        assert_eq!(s.call(&["LTRIM", "l", "5", "1"]), Reply::ok());
        assert_eq!(s.call(&["LLEN", "l"]), Reply::Int(0));
    }

    #[test]
    fn lrem_lpos() {
        let mut s = TestServer::new();
        s.call(&["RPUSH", "l", "a", "c", "a", "b", "a"]);
        assert_eq!(
            s.call(&["LPOS", "l", "a", "RANK", "-1", "COUNT", "2"]),
            Reply::Array(vec![Reply::Int(4), Reply::Int(2)])
        );
        assert_eq!(
            s.call(&["LPOS", "l", "a", "COUNT", "0", "MAXLEN", "3"]),
            Reply::Array(vec![Reply::Int(0), Reply::Int(2)])
        );
        assert_eq!(s.call(&["LPOS", "l", "a", "RANK", "2"]), Reply::Int(2));
        assert_eq!(s.call(&["LPOS", "l", "z"]), Reply::Nil);
        assert_eq!(
            s.call(&["LPOS", "l", "a", "RANK", "-9223372036854775808"]),
            Reply::Int(4)
        );
        assert_eq!(
            s.call(&["LPOS", "l", "a", "RANK", "0"]),
            err(super::RANK_ZERO)
        );
        assert_eq!(
            s.call(&["LPOS", "l", "a", "COUNT", "x"]),
            err("ERR COUNT can't be negative")
        );
        assert_eq!(
            s.call(&["LPOS", "l", "a", "MAXLEN", "-1"]),
            err("ERR MAXLEN can't be negative")
        );
        assert_eq!(
            s.call(&["LPOS", "l", "a", "COUNT"]),
            err("ERR syntax error")
        );
        assert_eq!(s.call(&["LPOS", "nokey", "a", "COUNT", "1"]), arr(&[]));
        assert_eq!(s.call(&["LREM", "l", "-2", "a"]), Reply::Int(2));
        assert_eq!(s.call(&["LRANGE", "l", "0", "-1"]), arr(&["a", "c", "b"]));
        assert_eq!(s.call(&["LREM", "l", "0", "a"]), Reply::Int(1));
        assert_eq!(
            s.call(&["LREM", "l", "x", "a"]),
            err("ERR value is not an integer or out of range")
        );
    }

    #[test]
    fn moves_and_mpop() {
        let mut s = TestServer::new();
        s.call(&["RPUSH", "l", "a", "b", "c"]);
        assert_eq!(s.call(&["LMOVE", "l", "m", "LEFT", "RIGHT"]), b("a"));
        assert_eq!(s.call(&["RPOPLPUSH", "l", "l"]), b("c"));
        assert_eq!(
            s.call(&["LMOVE", "l", "m", "up", "RIGHT"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["LMOVE", "nokey", "m", "LEFT", "RIGHT"]),
            Reply::Nil
        );
        assert_eq!(
            s.call(&["LMPOP", "2", "nokey", "l", "RIGHT", "COUNT", "5"]),
            Reply::Array(vec![b("l"), arr(&["b", "c"])])
        );
        assert_eq!(s.call(&["LMPOP", "1", "l", "LEFT"]), Reply::NilArray);
        assert_eq!(
            s.call(&["LMPOP", "0", "l", "LEFT"]),
            err("ERR numkeys should be greater than 0")
        );
        assert_eq!(
            s.call(&["LMPOP", "5", "l", "LEFT"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["LMPOP", "9223372036854775807", "l", "LEFT"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["LMPOP", "1", "l", "LEFT", "COUNT", "0"]),
            err("ERR count should be greater than 0")
        );
        assert_eq!(
            s.call(&["LMPOP", "1", "l", "LEFT", "COUNT", "1", "COUNT", "1"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["BLMPOP", "x", "1", "m", "LEFT"]),
            err("ERR timeout is not a float or out of range")
        );
        assert_eq!(
            s.call(&["BLMPOP", "-1", "1", "m", "LEFT"]),
            err("ERR timeout is negative")
        );
        assert_eq!(
            s.call(&["BLMPOP", "inf", "1", "m", "LEFT"]),
            err("ERR timeout is negative")
        );
        assert_eq!(
            s.call(&["BLMPOP", "x", "0", "m", "LEFT"]),
            err("ERR numkeys should be greater than 0")
        );
        assert_eq!(
            s.call(&["BLMPOP", "-0.0001", "1", "m", "LEFT"]),
            Reply::Array(vec![b("m"), arr(&["a"])])
        );
        assert_eq!(s.call(&["BLMPOP", "0", "1", "m", "LEFT"]), Reply::NilArray);
        assert_eq!(
            s.call(&["BLPOP", "m", "0"]),
            err("ERR This Redis command is not allowed from script")
        );
    }

    #[test]
    fn mpop_key_positions() {
        let args: Vec<Vec<u8>> = ["lmpop", "2", "a", "b", "left"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        assert_eq!(super::lmpop_keys(&args), vec![2, 3]);
        let args: Vec<Vec<u8>> = ["blmpop", "0", "9", "a", "left"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        assert_eq!(super::blmpop_keys(&args), vec![3, 4]);
    }
}

/// Differential helper: `EVALBENCH_REPLAY=cmds.jsonl cargo test --lib replay_commands -- --ignored
/// --nocapture` runs one JSON argv per line (lists and streams mixed) and prints each RESP2 reply
/// as a JSON line, to compare with a real server.
#[cfg(test)]
mod replay {
    use super::super::TestServer;
    use crate::engine::reply::Reply;
    use serde_json::{json, Value as Json};

    fn to_json(r: &Reply) -> Json {
        match r.to_resp2() {
            Reply::Status(s) => json!(format!("s:{s}")),
            Reply::Error(e) => json!(format!("e:{e}")),
            Reply::Int(n) => json!(n),
            Reply::Bulk(b) => json!(format!("b:{}", String::from_utf8_lossy(&b))),
            Reply::Nil => json!("nil"),
            Reply::NilArray => json!("nilarray"),
            Reply::Array(items) => Json::Array(items.iter().map(to_json).collect()),
            other => json!(format!("?{other:?}")),
        }
    }

    #[test]
    #[ignore]
    fn replay_commands() {
        let Ok(path) = std::env::var("EVALBENCH_REPLAY") else {
            return;
        };
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let mut s = TestServer::new();
        for line in text.lines() {
            let argv: Vec<String> = serde_json::from_str(line).unwrap_or_default();
            let args: Vec<&str> = argv.iter().map(String::as_str).collect();
            if let ["SET", key, value] = args.as_slice() {
                // Strings belong to another family: seed them directly.
                let value = crate::engine::keyspace::Value::Str(value.as_bytes().to_vec());
                s.keyspace.db_mut(0).set(key.as_bytes().to_vec(), value);
            }
            println!("REPLY {}", to_json(&s.call(&args)));
        }
    }
}
