//! Set commands (t_set.c @7.0.15, and 7.2's listpack sets where the profile has them).
//! `SetValue` keeps Redis's order where it is defined: numeric for intsets, listpack order for
//! listpacks, insertion order (our choice) for hash-table sets.

use super::hashes::{
    parse_scan_options, random_count_arg, random_indexes, scan_cursor, scan_reply, scan_window,
};
use super::{errors, filter_match, flatten, Command, Ctx};
use crate::engine::keyspace::set::SetEncoding;
use crate::engine::keyspace::{Db, SetValue, Value};
use crate::engine::number;
use crate::engine::profile::Profile;
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("sadd", sadd),
    Command::new("srem", srem),
    Command::new("smembers", smembers),
    Command::new("sismember", sismember),
    Command::new("smismember", smismember),
    Command::new("scard", scard),
    Command::new("spop", spop),
    Command::new("srandmember", srandmember),
    Command::new("smove", smove),
    Command::new("sinter", sinter),
    Command::with_keys("sintercard", sintercard, sintercard_keys),
    Command::new("sinterstore", sinterstore),
    Command::new("sunion", sunion),
    Command::new("sunionstore", sunionstore),
    Command::new("sdiff", sdiff),
    Command::new("sdiffstore", sdiffstore),
    Command::new("sscan", sscan),
];

const NUMKEYS_NOT_POSITIVE: &str = "ERR numkeys should be greater than 0";
const NUMKEYS_TOO_MANY: &str = "ERR Number of keys can't be greater than number of args";
const LIMIT_NEGATIVE: &str = "ERR LIMIT can't be negative";

/// The set at `key` for writing: `Ok(None)` when missing, an error when it holds another type.
fn read_mut<'a>(ctx: &'a mut Ctx, key: &[u8]) -> Result<Option<&'a mut SetValue>, Reply> {
    match ctx.value(key) {
        None => Ok(None),
        Some(Value::Set(s)) => Ok(Some(s)),
        Some(_) => Err(Reply::err(errors::WRONGTYPE)),
    }
}

/// The set at `key` in an already expired-checked database.
fn set_in<'a>(db: &'a Db, key: &[u8], now_ms: i64) -> Result<Option<&'a SetValue>, Reply> {
    match db.get(key, now_ms).map(|e| &e.value) {
        None => Ok(None),
        Some(Value::Set(s)) => Ok(Some(s)),
        Some(_) => Err(Reply::err(errors::WRONGTYPE)),
    }
}

/// Look several keys up at once (missing keys are `None`); the first wrong type is an error.
fn sets_of<'a>(ctx: &'a mut Ctx, keys: &[Vec<u8>]) -> Result<Vec<Option<&'a SetValue>>, Reply> {
    for key in keys {
        ctx.entry(key); // drops the key if it expired
    }
    let now = ctx.now_ms;
    let db: &Db = ctx.keyspace.db(ctx.db_index);
    keys.iter().map(|k| set_in(db, k, now)).collect()
}

fn members_reply<'a>(members: impl Iterator<Item = &'a Vec<u8>>) -> Vec<Reply> {
    members.map(|m| Reply::Bulk(m.clone())).collect()
}

/// Replace `dst` by `result`, or delete it when the result is empty; replies the cardinality.
fn store(ctx: &mut Ctx, dst: &[u8], result: SetValue) -> Reply {
    let len = result.len() as i64;
    let now = ctx.now_ms;
    if result.is_empty() {
        ctx.db().remove(dst, now);
    } else {
        ctx.db().set(dst.to_vec(), Value::Set(result));
    }
    Reply::Int(len)
}

fn sadd(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let listpack = ctx.profile.listpack_collections;
        // The size hint is the member count (`setTypeCreate`, `setTypeMaybeConvert`).
        let hint = args.len() - 2;
        match read_mut(ctx, &args[1])? {
            Some(set) => set.maybe_convert(hint, listpack),
            None => {
                let set = SetValue::create(&args[2], hint, listpack);
                ctx.db().set(args[1].clone(), Value::Set(set));
            }
        }
        let Some(set) = read_mut(ctx, &args[1])? else {
            return Ok(Reply::Int(0));
        };
        let added = args[2..]
            .iter()
            .filter(|m| set.insert(m.to_vec(), listpack))
            .count();
        Ok(Reply::Int(added as i64))
    })())
}

fn srem(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let Some(set) = read_mut(ctx, &args[1])? else {
            return Ok(Reply::Int(0));
        };
        let mut removed = 0;
        for m in &args[2..] {
            if set.remove(m) {
                removed += 1;
                if set.is_empty() {
                    break;
                }
            }
        }
        ctx.db().remove_if_empty(&args[1]);
        Ok(Reply::Int(removed))
    })())
}

fn smembers(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    inter(ctx, &args[1..2], Inter::Reply)
}

fn sismember(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        Ok(Reply::Int(
            read_mut(ctx, &args[1])?.is_some_and(|s| s.contains(&args[2])) as i64,
        ))
    })())
}

fn smismember(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let set = read_mut(ctx, &args[1])?;
        let flags = args[2..]
            .iter()
            .map(|m| Reply::Int(set.as_ref().is_some_and(|s| s.contains(m)) as i64));
        Ok(Reply::Array(flags.collect()))
    })())
}

fn scard(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        Ok(Reply::Int(
            read_mut(ctx, &args[1])?.map_or(0, |s| s.len() as i64),
        ))
    })())
}

/// Remove and return the member at `index`.
fn take(set: &mut SetValue, index: usize) -> Option<Vec<u8>> {
    let member = set.get_index(index)?.clone();
    set.remove(&member);
    Some(member)
}

fn spop(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        match args.len() {
            2 => {}
            3 => return spop_count(ctx, args),
            _ => return Err(Reply::err(errors::SYNTAX)),
        }
        let Some(len) = read_mut(ctx, &args[1])?.map(|s| s.len()) else {
            return Ok(Reply::Nil);
        };
        let i = ctx.rng.below(len);
        let member = read_mut(ctx, &args[1])?.and_then(|s| take(s, i));
        ctx.db().remove_if_empty(&args[1]);
        Ok(member.map_or(Reply::Nil, Reply::Bulk))
    })())
}

fn spop_count(ctx: &mut Ctx, args: &[Vec<u8>]) -> Result<Reply, Reply> {
    let count = match number::parse_i64(&args[2]) {
        Some(n) if n >= 0 => n as u64,
        _ => return Err(Reply::err(errors::OUT_OF_RANGE)),
    };
    let key = &args[1];
    let profile = ctx.profile;
    let listpack = profile.listpack_collections;
    let Some(set) = read_mut(ctx, key)? else {
        return Ok(Reply::Set(Vec::new()));
    };
    if count == 0 {
        return Ok(Reply::Set(Vec::new()));
    }
    let size = set.len() as u64;
    if count >= size {
        // The whole set, as SUNION of it would list it; the key goes away.
        let all = union_of(&[Some(&*set)], true, profile);
        let reply = Reply::Set(members_reply(all.iter()));
        let now = ctx.now_ms;
        ctx.db().remove(key, now);
        return Ok(reply);
    }
    let remaining = (size - count) as usize;
    let count = count as usize;
    // A listpack is walked once from its head: what is popped, and what stays, keep its order.
    let listpack_order: Option<Vec<Vec<u8>>> =
        (set.encoding() == SetEncoding::Listpack).then(|| set.iter().cloned().collect());
    let in_listpack_order = |picked: Vec<Vec<u8>>| match &listpack_order {
        Some(order) => order
            .iter()
            .filter(|m| picked.contains(m))
            .cloned()
            .collect(),
        None => picked,
    };
    let mut popped = Vec::with_capacity(count);
    if remaining * 5 > count {
        // Few to pop: pick them one by one.
        for _ in 0..count {
            let Some(len) = read_mut(ctx, key)?.map(|s| s.len()) else {
                break;
            };
            let i = ctx.rng.below(len);
            let Some(set) = read_mut(ctx, key)? else {
                break;
            };
            popped.extend(take(set, i));
        }
        popped = in_listpack_order(popped);
    } else {
        // Most of the set goes: pick the members that stay into a new set (an intset from an
        // intset, else a listpack where the profile has them), and return what is left of the
        // old one in its order.
        let mut kept = match (set.encoding(), listpack) {
            (SetEncoding::Intset, _) => SetValue::with_encoding(SetEncoding::Intset),
            (_, Some(_)) => SetValue::with_encoding(SetEncoding::Listpack),
            (_, None) => SetValue::with_encoding(SetEncoding::Hashtable),
        };
        let mut picked = Vec::with_capacity(remaining);
        for _ in 0..remaining {
            let Some(len) = read_mut(ctx, key)?.map(|s| s.len()) else {
                break;
            };
            let i = ctx.rng.below(len);
            let Some(set) = read_mut(ctx, key)? else {
                break;
            };
            picked.extend(take(set, i));
        }
        for m in in_listpack_order(picked) {
            kept.insert(m, listpack);
        }
        if let Some(set) = read_mut(ctx, key)? {
            popped = set.iter().cloned().collect();
            *set = kept;
        }
    }
    Ok(Reply::Set(popped.into_iter().map(Reply::Bulk).collect()))
}

fn srandmember(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        if args.len() > 3 {
            return Err(Reply::err(errors::SYNTAX));
        }
        if args.len() == 2 {
            let Some(len) = read_mut(ctx, &args[1])?.map(|s| s.len()) else {
                return Ok(Reply::Nil);
            };
            let i = ctx.rng.below(len);
            let member = read_mut(ctx, &args[1])?.and_then(|s| s.get_index(i).cloned());
            return Ok(member.map_or(Reply::Nil, Reply::Bulk));
        }
        let l = random_count_arg(&args[2])?;
        let Some(len) = read_mut(ctx, &args[1])?.map(|s| s.len()) else {
            return Ok(Reply::Array(Vec::new()));
        };
        let count = l.unsigned_abs();
        if count == 0 {
            return Ok(Reply::Array(Vec::new()));
        }
        let indexes = random_indexes(ctx, len, l)?;
        let Some(set) = read_mut(ctx, &args[1])? else {
            return Ok(Reply::Array(Vec::new()));
        };
        Ok(Reply::Array(
            indexes
                .into_iter()
                .filter_map(|i| set.get_index(i).cloned())
                .map(Reply::Bulk)
                .collect(),
        ))
    })())
}

fn smove(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let (src, dst, member) = (&args[1], &args[2], &args[3]);
        if read_mut(ctx, src)?.is_none() {
            return Ok(Reply::Int(0));
        }
        let dst_exists = read_mut(ctx, dst)?.is_some();
        if src == dst {
            return Ok(Reply::Int(
                read_mut(ctx, src)?.is_some_and(|s| s.contains(member)) as i64,
            ));
        }
        if !read_mut(ctx, src)?.is_some_and(|s| s.remove(member)) {
            return Ok(Reply::Int(0));
        }
        ctx.db().remove_if_empty(src);
        let listpack = ctx.profile.listpack_collections;
        if !dst_exists {
            let set = SetValue::create(member, 1, listpack);
            ctx.db().set(dst.clone(), Value::Set(set));
        }
        if let Some(d) = read_mut(ctx, dst)? {
            d.insert(member.clone(), listpack);
        }
        Ok(Reply::Int(1))
    })())
}

// ---- intersection ----

enum Inter {
    Reply,
    Card(usize),
    Store(Vec<u8>),
}

/// `sinterGenericCommand`: walk the smallest set and keep what every other set has.
fn inter(ctx: &mut Ctx, keys: &[Vec<u8>], mode: Inter) -> Reply {
    let listpack = ctx.profile.listpack_collections;
    let found = match sets_of(ctx, keys) {
        Ok(sets) => sets,
        Err(e) => return e,
    };
    let mut sets: Vec<&SetValue> = match found.into_iter().collect::<Option<Vec<_>>>() {
        Some(sets) => sets,
        // A missing key is an empty set: the intersection is empty.
        None => {
            return match mode {
                Inter::Reply => Reply::Set(Vec::new()),
                Inter::Card(_) => Reply::Int(0),
                Inter::Store(dst) => store(ctx, &dst, SetValue::new()),
            }
        }
    };
    sets.sort_by_key(|s| s.len());
    let Some((first, others)) = sets.split_first() else {
        return Reply::Set(Vec::new());
    };
    let common = first
        .iter()
        .filter(|m| others.iter().all(|s| s.contains(m)));
    let dst = match mode {
        Inter::Reply => return Reply::Set(members_reply(common)),
        Inter::Card(0) => return Reply::Int(common.count() as i64),
        Inter::Card(limit) => return Reply::Int(common.take(limit).count() as i64),
        Inter::Store(dst) => dst,
    };
    // The result starts as the smallest set's encoding (7.2+: a listpack for a hash table; 7.0:
    // an intset) and becomes an intset again when every member is an integer.
    let mut result = match (first.encoding(), listpack) {
        (_, None) | (SetEncoding::Intset, _) => SetValue::new(),
        (_, Some(_)) => SetValue::with_encoding(SetEncoding::Listpack),
    };
    let mut only_integers = true;
    for m in common {
        only_integers &= number::parse_i64(m).is_some();
        result.insert(m.clone(), listpack);
    }
    if only_integers {
        result.convert_to_intset_if_fits();
    }
    store(ctx, &dst, result)
}

fn sinter(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    inter(ctx, &args[1..], Inter::Reply)
}

fn sinterstore(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    inter(ctx, &args[2..], Inter::Store(args[1].clone()))
}

/// SINTERCARD numkeys key [key ...] [LIMIT limit]
fn sintercard(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let numkeys = match number::parse_i64(&args[1]) {
            Some(n) if n >= 1 => n as usize,
            _ => return Err(Reply::err(NUMKEYS_NOT_POSITIVE)),
        };
        if numkeys > args.len() - 2 {
            return Err(Reply::err(NUMKEYS_TOO_MANY));
        }
        let mut limit = 0usize;
        let mut i = 2 + numkeys;
        while i < args.len() {
            if super::lower(&args[i]) == "limit" && i + 1 < args.len() {
                i += 1;
                limit = match number::parse_i64(&args[i]) {
                    Some(n) if n >= 0 => usize::try_from(n).unwrap_or(usize::MAX),
                    _ => return Err(Reply::err(LIMIT_NEGATIVE)),
                };
            } else {
                return Err(Reply::err(errors::SYNTAX));
            }
            i += 1;
        }
        Ok(inter(ctx, &args[2..2 + numkeys], Inter::Card(limit)))
    })())
}

/// Keys of SINTERCARD: the `numkeys` arguments after it.
fn sintercard_keys(args: &[Vec<u8>]) -> Vec<usize> {
    let Some(n) = args.get(1).and_then(|a| number::parse_i64(a)) else {
        return Vec::new();
    };
    let n = usize::try_from(n).unwrap_or(0);
    (2..args.len()).take(n).collect()
}

// ---- union and difference ----

/// The set `sunionDiffGenericCommand` builds the result in: an intset (converted as members
/// come), or, for a reply on 8.0 and Valkey, a hash table once an input set is not an intset.
fn result_set(sets: &[Option<&SetValue>], reply: bool, profile: &Profile) -> SetValue {
    let hashtable =
        reply && profile.set_ops_reply_hashtable && sets.iter().flatten().any(|s| !s.is_intset());
    if hashtable {
        SetValue::with_encoding(SetEncoding::Hashtable)
    } else {
        SetValue::new()
    }
}

/// The union as `sunionDiffGenericCommand` builds it (`reply`: SUNION rather than SUNIONSTORE).
fn union_of(sets: &[Option<&SetValue>], reply: bool, profile: &Profile) -> SetValue {
    let mut result = result_set(sets, reply, profile);
    for set in sets.iter().flatten() {
        for m in set.iter() {
            result.insert(m.clone(), profile.listpack_collections);
        }
    }
    result
}

/// The difference, with Redis's choice of algorithm (it decides the encoding of the result).
fn diff_of(
    keys: &[Vec<u8>],
    sets: &[Option<&SetValue>],
    reply: bool,
    profile: &Profile,
) -> SetValue {
    let listpack = profile.listpack_collections;
    let mut result = result_set(sets, reply, profile);
    let Some(first) = sets[0] else { return result };
    // A later key naming the first set empties the result.
    if keys[1..]
        .iter()
        .zip(&sets[1..])
        .any(|(k, s)| s.is_some() && *k == keys[0])
    {
        return result;
    }
    let algo_one_work: usize = sets.iter().flatten().map(|_| first.len()).sum::<usize>() / 2;
    let algo_two_work: usize = sets.iter().flatten().map(|s| s.len()).sum();
    if algo_one_work <= algo_two_work {
        // Walk the first set, keep what no other set has.
        let mut others: Vec<&SetValue> = sets[1..].iter().flatten().copied().collect();
        others.sort_by_key(|s| std::cmp::Reverse(s.len()));
        for m in first.iter() {
            if !others.iter().any(|s| s.contains(m)) {
                result.insert(m.clone(), listpack);
            }
        }
    } else {
        // Copy the first set, then take every other set's members out.
        for m in first.iter() {
            result.insert(m.clone(), listpack);
        }
        for set in sets[1..].iter().flatten() {
            if result.is_empty() {
                break;
            }
            for m in set.iter() {
                result.remove(m);
            }
        }
    }
    result
}

fn union_diff(ctx: &mut Ctx, keys: &[Vec<u8>], dst: Option<&[u8]>, diff: bool) -> Reply {
    let profile = ctx.profile;
    let reply = dst.is_none();
    let result = match sets_of(ctx, keys) {
        Ok(sets) if diff => diff_of(keys, &sets, reply, profile),
        Ok(sets) => union_of(&sets, reply, profile),
        Err(e) => return e,
    };
    match dst {
        Some(dst) => store(ctx, dst, result),
        None => Reply::Set(members_reply(result.iter())),
    }
}

fn sunion(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    union_diff(ctx, &args[1..], None, false)
}

fn sunionstore(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    union_diff(ctx, &args[2..], Some(&args[1]), false)
}

fn sdiff(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    union_diff(ctx, &args[1..], None, true)
}

fn sdiffstore(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    union_diff(ctx, &args[2..], Some(&args[1]), true)
}

fn sscan(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let star_limit = ctx.profile.glob_star_limit;
    let mut stop = ctx.stop.fork();
    let reply = flatten((|| {
        let cursor = scan_cursor(ctx, &args[2])?;
        let Some(set) = read_mut(ctx, &args[1])? else {
            return Ok(scan_reply(0, Vec::new()));
        };
        let (count, pattern) = parse_scan_options(args)?;
        // An intset or a listpack is returned whole with cursor 0, as Redis does.
        let (range, next) = if set.encoding() != SetEncoding::Hashtable {
            (0..set.len(), 0)
        } else {
            scan_window(set.len(), cursor, count)
        };
        let items = range
            .filter_map(|i| set.get_index(i))
            .filter(|m| filter_match(pattern.as_deref(), m, star_limit, &mut stop))
            .map(|m| Reply::Bulk(m.clone()))
            .collect();
        Ok(scan_reply(next, items))
    })());
    ctx.stop.join(stop);
    reply
}

#[cfg(test)]
mod tests {
    use crate::engine::commands::TestServer;
    use crate::engine::keyspace::Value;
    use crate::engine::reply::Reply;

    fn b(s: &str) -> Reply {
        Reply::Bulk(s.as_bytes().to_vec())
    }
    fn err(s: &str) -> Reply {
        Reply::Error(s.into())
    }
    fn bulks(items: &[&str]) -> Reply {
        Reply::Array(items.iter().map(|s| b(s)).collect())
    }
    fn set(items: &[&str]) -> Reply {
        Reply::Set(items.iter().map(|s| b(s)).collect())
    }
    fn set_string(s: &mut TestServer, key: &str) {
        s.keyspace
            .db_mut(0)
            .set(key.as_bytes().to_vec(), Value::Str(b"x".to_vec()));
    }
    fn exists(s: &TestServer, key: &str) -> bool {
        s.keyspace.db(0).contains(key.as_bytes(), s.now_ms)
    }
    const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

    #[test]
    fn sadd_srem_order() {
        let mut s = TestServer::new();
        assert_eq!(s.call(&["SADD", "s", "10", "2", "-1", "2"]), Reply::Int(3));
        assert_eq!(s.call(&["SMEMBERS", "s"]), set(&["-1", "2", "10"]));
        assert_eq!(s.call(&["SADD", "s", "b", "a"]), Reply::Int(2));
        assert_eq!(s.call(&["SADD", "s", "0"]), Reply::Int(1));
        // A hash-table set keeps insertion order; it never becomes an intset again.
        assert_eq!(
            s.call(&["SMEMBERS", "s"]),
            set(&["-1", "2", "10", "b", "a", "0"])
        );
        assert_eq!(s.call(&["SREM", "s", "b", "a", "zz"]), Reply::Int(2));
        assert_eq!(s.call(&["SADD", "s", "1"]), Reply::Int(1));
        assert_eq!(
            s.call(&["SMEMBERS", "s"]),
            set(&["-1", "2", "10", "0", "1"])
        );
        assert_eq!(s.call(&["SCARD", "s"]), Reply::Int(5));
        assert_eq!(
            s.call(&["SREM", "s", "-1", "2", "10", "0", "1", "x"]),
            Reply::Int(5)
        );
        assert!(!exists(&s, "s"));
        assert_eq!(s.call(&["SREM", "s", "x"]), Reply::Int(0));
        assert_eq!(s.call(&["SCARD", "s"]), Reply::Int(0));
        assert_eq!(s.call(&["SMEMBERS", "s"]), set(&[]));
    }

    #[test]
    fn membership() {
        let mut s = TestServer::new();
        s.call(&["SADD", "s", "a", "1"]);
        assert_eq!(s.call(&["SISMEMBER", "s", "a"]), Reply::Int(1));
        assert_eq!(s.call(&["SISMEMBER", "s", "b"]), Reply::Int(0));
        assert_eq!(s.call(&["SISMEMBER", "nokey", "b"]), Reply::Int(0));
        assert_eq!(
            s.call(&["SMISMEMBER", "s", "1", "9"]),
            Reply::Array(vec![Reply::Int(1), Reply::Int(0)])
        );
        assert_eq!(
            s.call(&["SMISMEMBER", "nokey", "1"]),
            Reply::Array(vec![Reply::Int(0)])
        );
    }

    #[test]
    fn wrong_type() {
        let mut s = TestServer::new();
        set_string(&mut s, "str");
        s.call(&["SADD", "s", "1"]);
        for cmd in [
            &["SADD", "str", "a"][..],
            &["SREM", "str", "a"],
            &["SCARD", "str"],
            &["SISMEMBER", "str", "a"],
            &["SMISMEMBER", "str", "a"],
            &["SMEMBERS", "str"],
            &["SPOP", "str"],
            &["SPOP", "str", "0"],
            &["SRANDMEMBER", "str", "0"],
            &["SMOVE", "str", "s", "a"],
            &["SMOVE", "s", "str", "1"],
            &["SINTER", "nokey", "str"],
            &["SINTERCARD", "2", "nokey", "str"],
            &["SUNION", "s", "str"],
            &["SDIFF", "nokey", "str"],
            &["SSCAN", "str", "0", "COUNT", "0"],
        ] {
            assert_eq!(s.call(cmd), err(WRONGTYPE), "{cmd:?}");
        }
        assert_eq!(s.call(&["SMOVE", "nokey", "str", "a"]), Reply::Int(0));
        assert_eq!(
            s.call(&["SRANDMEMBER", "str", "abc"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            s.call(&["SPOP", "str", "-1"]),
            err("ERR value is out of range, must be positive")
        );
    }

    #[test]
    fn spop_and_srandmember() {
        let mut s = TestServer::new();
        assert_eq!(s.call(&["SPOP", "s"]), Reply::Nil);
        assert_eq!(s.call(&["SPOP", "s", "2"]), set(&[]));
        assert_eq!(s.call(&["SRANDMEMBER", "s"]), Reply::Nil);
        assert_eq!(s.call(&["SRANDMEMBER", "s", "3"]), bulks(&[]));
        assert_eq!(
            s.call(&["SPOP", "s", "abc"]),
            err("ERR value is out of range, must be positive")
        );
        assert_eq!(s.call(&["SPOP", "s", "1", "2"]), err("ERR syntax error"));
        assert_eq!(
            s.call(&["SRANDMEMBER", "s", "1", "2"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["SRANDMEMBER", "s", "-9223372036854775808"]),
            err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
        );
        s.call(&["SADD", "s", "3", "1", "2"]);
        assert_eq!(s.call(&["SRANDMEMBER", "s", "5"]), bulks(&["1", "2", "3"]));
        assert_eq!(s.call(&["SRANDMEMBER", "s", "0"]), bulks(&[]));
        let Reply::Array(r) = s.call(&["SRANDMEMBER", "s", "-7"]) else {
            panic!()
        };
        assert_eq!(r.len(), 7);
        let Reply::Array(r) = s.call(&["SRANDMEMBER", "s", "2"]) else {
            panic!()
        };
        assert_eq!(r.len(), 2);
        assert_ne!(r[0], r[1]);
        assert!(s
            .call(&["SRANDMEMBER", "s", "-9223372036854775807"])
            .is_error());
        assert_eq!(s.call(&["SPOP", "s", "0"]), set(&[]));
        let Reply::Set(popped) = s.call(&["SPOP", "s", "2"]) else {
            panic!()
        };
        assert_eq!(popped.len(), 2);
        assert_eq!(s.call(&["SCARD", "s"]), Reply::Int(1));
        assert!(matches!(s.call(&["SPOP", "s"]), Reply::Bulk(_)));
        assert!(!exists(&s, "s"));
        s.call(&["SADD", "s", "3", "1", "2"]);
        assert_eq!(s.call(&["SPOP", "s", "3"]), set(&["1", "2", "3"]));
        assert!(!exists(&s, "s"));
        // Popping most of a big set keeps the right members.
        for i in 0..100 {
            s.call(&["SADD", "big", &format!("m{i}")]);
        }
        let Reply::Set(popped) = s.call(&["SPOP", "big", "90"]) else {
            panic!()
        };
        assert_eq!(popped.len(), 90);
        assert_eq!(s.call(&["SCARD", "big"]), Reply::Int(10));
        for m in popped {
            let Reply::Bulk(m) = m else { panic!() };
            assert_eq!(
                s.call(&["SISMEMBER", "big", std::str::from_utf8(&m).unwrap()]),
                Reply::Int(0)
            );
        }
    }

    #[test]
    fn smove() {
        let mut s = TestServer::new();
        s.call(&["SADD", "a", "x", "y"]);
        assert_eq!(s.call(&["SMOVE", "a", "b", "x"]), Reply::Int(1));
        assert_eq!(s.call(&["SMOVE", "a", "b", "zz"]), Reply::Int(0));
        assert_eq!(s.call(&["SMOVE", "a", "a", "y"]), Reply::Int(1));
        assert_eq!(s.call(&["SMOVE", "a", "a", "zz"]), Reply::Int(0));
        assert_eq!(s.call(&["SMOVE", "a", "b", "y"]), Reply::Int(1));
        assert!(!exists(&s, "a"));
        assert_eq!(s.call(&["SMEMBERS", "b"]), set(&["x", "y"]));
    }

    #[test]
    fn algebra() {
        let mut s = TestServer::new();
        s.call(&["SADD", "a", "5", "3", "x", "1"]);
        s.call(&["SADD", "b", "3", "1", "5", "9"]);
        s.call(&["SADD", "c", "1", "2", "3", "4", "5", "6", "7", "8"]);
        // The smallest set is walked: here the intset b, so numeric order.
        assert_eq!(s.call(&["SINTER", "c", "b"]), set(&["1", "3", "5"]));
        assert_eq!(s.call(&["SINTER", "a", "nokey"]), set(&[]));
        assert_eq!(s.call(&["SINTERSTORE", "d", "a", "c"]), Reply::Int(3));
        assert_eq!(s.call(&["SMEMBERS", "d"]), set(&["1", "3", "5"]));
        assert_eq!(s.call(&["SINTERSTORE", "d", "a", "nokey"]), Reply::Int(0));
        assert!(!exists(&s, "d"));
        assert_eq!(
            s.call(&["SUNION", "b", "c"]),
            set(&["1", "2", "3", "4", "5", "6", "7", "8", "9"])
        );
        assert_eq!(
            s.call(&["SUNION", "a", "b"]),
            set(&["3", "5", "x", "1", "9"])
        );
        assert_eq!(
            s.call(&["SDIFF", "c", "b"]),
            set(&["2", "4", "6", "7", "8"])
        );
        assert_eq!(s.call(&["SDIFF", "a", "b"]), set(&["x"]));
        assert_eq!(s.call(&["SDIFF", "a", "b", "a"]), set(&[]));
        assert_eq!(s.call(&["SDIFF", "nokey", "a"]), set(&[]));
        assert_eq!(s.call(&["SDIFFSTORE", "e", "a", "x"]), Reply::Int(4));
        assert_eq!(s.call(&["SUNIONSTORE", "e", "nokey"]), Reply::Int(0));
        assert!(!exists(&s, "e"));
        assert_eq!(s.call(&["SUNIONSTORE", "b", "b", "c"]), Reply::Int(9));
        s.resp3 = true;
        // "5" and "3" went in as an intset, then "x" made it a hash table.
        assert_eq!(s.call(&["SMEMBERS", "a"]), set(&["3", "5", "x", "1"]));
    }

    #[test]
    fn sintercard() {
        let mut s = TestServer::new();
        s.call(&["SADD", "a", "1", "2", "3"]);
        s.call(&["SADD", "b", "2", "3", "4"]);
        assert_eq!(s.call(&["SINTERCARD", "2", "a", "b"]), Reply::Int(2));
        assert_eq!(
            s.call(&["SINTERCARD", "2", "a", "b", "LIMIT", "1"]),
            Reply::Int(1)
        );
        assert_eq!(
            s.call(&["SINTERCARD", "2", "a", "b", "limit", "0"]),
            Reply::Int(2)
        );
        assert_eq!(s.call(&["SINTERCARD", "1", "nokey"]), Reply::Int(0));
        assert_eq!(
            s.call(&["SINTERCARD", "0", "a"]),
            err("ERR numkeys should be greater than 0")
        );
        assert_eq!(
            s.call(&["SINTERCARD", "abc", "a"]),
            err("ERR numkeys should be greater than 0")
        );
        assert_eq!(
            s.call(&["SINTERCARD", "3", "a"]),
            err("ERR Number of keys can't be greater than number of args")
        );
        assert_eq!(
            s.call(&["SINTERCARD", "1", "a", "LIMIT", "-1"]),
            err("ERR LIMIT can't be negative")
        );
        assert_eq!(
            s.call(&["SINTERCARD", "1", "a", "LIMIT", "x"]),
            err("ERR LIMIT can't be negative")
        );
        assert_eq!(
            s.call(&["SINTERCARD", "1", "a", "LIMIT"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["SINTERCARD", "1", "a", "foo", "1"]),
            err("ERR syntax error")
        );
        let args: Vec<Vec<u8>> = ["SINTERCARD", "2", "a", "b", "LIMIT", "1"]
            .iter()
            .map(|a| a.as_bytes().to_vec())
            .collect();
        assert_eq!(super::sintercard_keys(&args), vec![2, 3]);
    }

    #[test]
    fn sscan() {
        let mut s = TestServer::new();
        s.call(&["SADD", "s", "3", "1", "2"]);
        assert_eq!(
            s.call(&["SSCAN", "s", "0"]),
            Reply::Array(vec![b("0"), bulks(&["1", "2", "3"])])
        );
        assert_eq!(
            s.call(&["SSCAN", "s", ""]),
            Reply::Array(vec![b("0"), bulks(&["1", "2", "3"])])
        );
        assert_eq!(
            s.call(&["SSCAN", "s", "-1", "COUNT", "1"]),
            Reply::Array(vec![b("0"), bulks(&["1", "2", "3"])])
        );
        assert_eq!(
            s.call(&["SSCAN", "s", "0", "MATCH", "[12]"]),
            Reply::Array(vec![b("0"), bulks(&["1", "2"])])
        );
        assert_eq!(s.call(&["SSCAN", "s", "abc"]), err("ERR invalid cursor"));
        assert_eq!(
            s.call(&["SSCAN", "s", "0", "TYPE", "string"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.call(&["SSCAN", "nokey", "0", "COUNT", "0"]),
            Reply::Array(vec![b("0"), bulks(&[])])
        );
        // A hash-table set scans in steps and still visits everything while members go away.
        for i in 0..100 {
            s.call(&["SADD", "h", &format!("m{i}")]);
        }
        let mut seen = std::collections::HashSet::new();
        let mut cursor = "0".to_string();
        loop {
            let Reply::Array(r) = s.call(&["SSCAN", "h", &cursor]) else {
                panic!()
            };
            let (Reply::Bulk(c), Reply::Array(items)) = (&r[0], &r[1]) else {
                panic!()
            };
            assert!(items.len() <= 10);
            for m in items {
                let Reply::Bulk(m) = m else { panic!() };
                let m = String::from_utf8(m.clone()).unwrap();
                s.call(&["SREM", "h", &m]);
                seen.insert(m);
            }
            cursor = String::from_utf8(c.clone()).unwrap();
            if cursor == "0" {
                break;
            }
        }
        assert_eq!(seen.len(), 100);
    }
}
