//! Stream consumer groups (`src/t_stream.c` of Redis 7.0.15): XGROUP CREATE / SETID / DESTROY
//! / CREATECONSUMER / DELCONSUMER, XREADGROUP (BLOCK refused or, on later servers, never blocking), XACK,
//! XPENDING (summary and extended, IDLE), XCLAIM, XAUTOCLAIM, XSETID and XINFO STREAM [FULL] /
//! GROUPS / CONSUMERS, with the group's `entries_read` counter and lag computed as 7.0 does.
//! Delivery and seen times come from the run clock, so idle times are deterministic.

use super::streams::{
    block_in_script, entry_reply, interval_id, parse_id_arg, stream_mut, strict_id, xread_keys,
    BAD_END, BAD_START,
};
use super::{errors, flatten, int_arg, lower, until_nul, Command, Ctx};
use crate::engine::keyspace::stream::{
    Consumer, ConsumerGroup, PendingEntry, ENTRIES_READ_UNKNOWN,
};
use crate::engine::keyspace::{StreamId, StreamValue, Value};
use crate::engine::profile::{GroupLag, LastEntryId};
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("xgroup|create", xgroup),
    Command::new("xgroup|setid", xgroup),
    Command::new("xgroup|destroy", xgroup),
    Command::new("xgroup|createconsumer", xgroup),
    Command::new("xgroup|delconsumer", xgroup),
    Command::new("xgroup|help", xgroup),
    Command::with_keys("xreadgroup", xreadgroup, xread_keys),
    Command::new("xack", xack),
    Command::new("xpending", xpending),
    Command::new("xsetid", xsetid),
    Command::new("xclaim", xclaim),
    Command::new("xautoclaim", xautoclaim),
    Command::new("xinfo|groups", xinfo),
    Command::new("xinfo|consumers", xinfo),
    Command::new("xinfo|stream", xinfo_stream),
    Command::new("xinfo|help", xinfo),
];

const KEY_REQUIRED: &str = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.";
const BUSYGROUP: &str = "BUSYGROUP Consumer Group name already exists";
const ENTRIESREAD_RANGE: &str = "ERR value for ENTRIESREAD must be positive or -1";
const MISSING_GROUP: &str = "ERR Missing GROUP option for XREADGROUP";
const PLUS_IN_GROUP: &str = "ERR The + ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The + ID would just return an empty result set.";
const DOLLAR_IN_GROUP: &str = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.";
const ENTRIES_ADDED_NEGATIVE: &str = "ERR entries_added must be positive";
const SETID_BELOW_MAXDELETED: &str =
    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id";
const SETID_BELOW_TOP: &str =
    "ERR The ID specified in XSETID is smaller than the target stream top item";
const SETID_BELOW_MAX_DELETED: &str =
    "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id";
const SETID_ADDED_BELOW_LEN: &str =
    "ERR The entries_added specified in XSETID is smaller than the target stream length";

const XGROUP_HELP: &[&str] = &[
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
];

const XINFO_HELP: &[&str] = &[
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
];

fn text(arg: &[u8]) -> String {
    String::from_utf8_lossy(until_nul(arg)).into_owned()
}

/// `addReplySubcommandSyntaxError` (also PUBSUB's, pubsub.rs).
pub(super) fn subcommand_syntax(args: &[Vec<u8>]) -> Reply {
    Reply::err(format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.",
        text(&args[1]),
        text(&args[0]).to_uppercase()
    ))
}

/// `SCG_INVALID_ENTRIES_READ` or a counter.
fn entries_read_reply(v: i64) -> Reply {
    if v == ENTRIES_READ_UNKNOWN {
        Reply::Nil
    } else {
        Reply::Int(v)
    }
}

fn id_reply(id: StreamId) -> Reply {
    Reply::Bulk(id.to_string().into_bytes())
}

fn first_id(s: &StreamValue) -> StreamId {
    s.entries.keys().next().copied().unwrap_or_default()
}

/// `streamRangeHasTombstones(s, start, NULL)`.
fn has_tombstones_from(group_lag: GroupLag, s: &StreamValue, start: StreamId) -> bool {
    if s.entries.is_empty() || s.max_deleted_id == StreamId::default() {
        return false;
    }
    // Before the fixes a tombstone before the first entry does not count.
    if !group_lag.fragmentation_fixed() && first_id(s) > s.max_deleted_id {
        return false;
    }
    start <= s.max_deleted_id
}

/// `streamEstimateDistanceFromFirstEverEntry`.
fn estimate_distance(group_lag: GroupLag, s: &StreamValue, id: StreamId) -> i64 {
    if s.entries_added == 0 {
        return 0;
    }
    let added = s.entries_added as i64;
    if s.entries.is_empty() && id <= s.last_id {
        return added;
    }
    // Fixed servers: tombstones between the ID and the last one leave the distance unknown.
    if group_lag.fragmentation_fixed() && id != StreamId::default() && id < s.max_deleted_id {
        return ENTRIES_READ_UNKNOWN;
    }
    match id.cmp(&s.last_id) {
        std::cmp::Ordering::Equal => return added,
        std::cmp::Ordering::Greater => return ENTRIES_READ_UNKNOWN,
        std::cmp::Ordering::Less => {}
    }
    let first = first_id(s);
    if s.max_deleted_id == StreamId::default() || s.max_deleted_id < first {
        let len = s.entries.len() as i64;
        if id < first {
            return added - len;
        } else if id == first {
            return added - len + 1;
        }
    }
    ENTRIES_READ_UNKNOWN
}

/// `streamReplyWithCGLag`: `None` where Redis replies null.
fn lag(group_lag: GroupLag, s: &StreamValue, g: &ConsumerGroup) -> Option<i64> {
    if s.entries_added == 0 {
        return Some(0);
    }
    if group_lag == GroupLag::Redis80 {
        if s.entries.is_empty() {
            return Some(0);
        }
        let first = first_id(s);
        if g.last_id < first && s.max_deleted_id < first {
            return Some(s.entries.len() as i64);
        }
    }
    if g.entries_read != ENTRIES_READ_UNKNOWN && !has_tombstones_from(group_lag, s, g.last_id) {
        return Some(s.entries_added as i64 - g.entries_read);
    }
    let read = estimate_distance(group_lag, s, g.last_id);
    (read != ENTRIES_READ_UNKNOWN).then(|| s.entries_added as i64 - read)
}

// ---- XGROUP ----

fn xgroup(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(xgroup_generic(ctx, args))
}

/// `xgroupCommand`: options, key and group checks in Redis's order, then the subcommand.
fn xgroup_generic(ctx: &mut Ctx, args: &[Vec<u8>]) -> Result<Reply, Reply> {
    let opt = lower(&args[1]);
    let argc = args.len();
    if opt == "help" {
        return Ok(if argc == 2 {
            super::help::help_reply(ctx, XGROUP_HELP)
        } else {
            subcommand_syntax(args)
        });
    }
    let (mkstream, entries_read) = xgroup_options(args, &opt)?;
    let now = ctx.wall_ms();
    let key = &args[2];
    let group = args[3].clone();
    let exists = stream_mut(ctx, key)?.is_some();
    if !mkstream {
        let Some(s) = stream_mut(ctx, key)? else {
            return Err(Reply::err(KEY_REQUIRED));
        };
        if !s.groups.contains_key(&group)
            && matches!(opt.as_str(), "setid" | "createconsumer" | "delconsumer")
        {
            return Err(Reply::err(format!(
                "NOGROUP No such consumer group '{}' for key name '{}'",
                text(&group),
                text(key)
            )));
        }
    }
    match opt.as_str() {
        "create" if (5..=8).contains(&argc) => {
            xgroup_create(ctx, args, group, exists, entries_read)
        }
        "setid" if argc == 5 || argc == 7 => xgroup_setid(ctx, args, &group, entries_read),
        "destroy" if argc == 4 => {
            let s = stream_mut(ctx, key)?.expect("checked above");
            Ok(Reply::Int(s.groups.remove(&group).is_some() as i64))
        }
        "createconsumer" if argc == 5 => {
            let s = stream_mut(ctx, key)?.expect("checked above");
            let g = s.groups.get_mut(&group).expect("checked above");
            if g.consumers.contains_key(&args[4]) {
                return Ok(Reply::Int(0));
            }
            g.consumers.insert(
                args[4].clone(),
                Consumer {
                    seen_time: now,
                    active_time: -1,
                    pel: Default::default(),
                },
            );
            Ok(Reply::Int(1))
        }
        "delconsumer" if argc == 5 => {
            let s = stream_mut(ctx, key)?.expect("checked above");
            let g = s.groups.get_mut(&group).expect("checked above");
            let Some(c) = g.consumers.remove(&args[4]) else {
                return Ok(Reply::Int(0));
            };
            for id in &c.pel {
                g.pel.remove(id);
            }
            Ok(Reply::Int(c.pel.len() as i64))
        }
        _ => Err(subcommand_syntax(args)),
    }
}

/// MKSTREAM (CREATE) and ENTRIESREAD (CREATE, SETID) after the ID.
fn xgroup_options(args: &[Vec<u8>], opt: &str) -> Result<(bool, i64), Reply> {
    let argc = args.len();
    let mut mkstream = false;
    let mut entries_read = ENTRIES_READ_UNKNOWN;
    if argc >= 4 {
        let (create, setid) = (opt == "create", opt == "setid");
        let mut i = 5;
        while i < argc {
            match lower(&args[i]).as_str() {
                "mkstream" if create => {
                    mkstream = true;
                    i += 1;
                }
                "entriesread" if (create || setid) && i + 1 < argc => {
                    entries_read = int_arg(&args[i + 1])?;
                    if entries_read < 0 && entries_read != ENTRIES_READ_UNKNOWN {
                        return Err(Reply::err(ENTRIESREAD_RANGE));
                    }
                    i += 2;
                }
                _ => return Err(subcommand_syntax(args)),
            }
        }
    }
    Ok((mkstream, entries_read))
}

/// XGROUP CREATE: the group at the ID (`$`: the last), the stream made first with MKSTREAM.
fn xgroup_create(
    ctx: &mut Ctx,
    args: &[Vec<u8>],
    group: Vec<u8>,
    exists: bool,
    entries_read: i64,
) -> Result<Reply, Reply> {
    let key = &args[2];
    let id = match until_nul(&args[4]) {
        b"$" => stream_mut(ctx, key)?.map_or(StreamId::default(), |s| s.last_id),
        other => strict_id(other)?,
    };
    if !exists {
        ctx.db().set(key.clone(), Value::Stream(StreamValue::new()));
    }
    let Some(s) = stream_mut(ctx, key)? else {
        return Err(Reply::err(errors::WRONGTYPE));
    };
    if s.groups.contains_key(&group) {
        return Err(Reply::err(BUSYGROUP));
    }
    s.groups.insert(group, ConsumerGroup::new(id, entries_read));
    Ok(Reply::ok())
}

/// XGROUP SETID: the group's last delivered ID (`$`: the stream's last) and ENTRIESREAD.
fn xgroup_setid(
    ctx: &mut Ctx,
    args: &[Vec<u8>],
    group: &[u8],
    entries_read: i64,
) -> Result<Reply, Reply> {
    let key = &args[2];
    let s = stream_mut(ctx, key)?.expect("checked above");
    let id = match until_nul(&args[4]) {
        b"$" => s.last_id,
        other => {
            let id = parse_id_arg(other, 0, false, false)?;
            StreamId {
                ms: id.ms,
                seq: id.seq.unwrap_or(0),
            }
        }
    };
    let g = s.groups.get_mut(group).expect("checked above");
    g.last_id = id;
    g.entries_read = entries_read;
    Ok(Reply::ok())
}

// ---- XREADGROUP ----

fn xreadgroup(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(xreadgroup_generic(ctx, args))
}

/// `xreadCommand` in its XREADGROUP form, never blocking.
fn xreadgroup_generic(ctx: &mut Ctx, args: &[Vec<u8>]) -> Result<Reply, Reply> {
    let mut count: i64 = 0;
    let mut streams_arg = 0;
    let mut noack = false;
    let mut names: Option<(Vec<u8>, Vec<u8>)> = None;
    let mut i = 1;
    while i < args.len() {
        let moreargs = args.len() - 1 - i;
        match lower(&args[i]).as_str() {
            "block" if moreargs > 0 => {
                block_in_script(ctx, args, i + 1)?;
                i += 1;
            }
            "count" if moreargs > 0 => {
                count = int_arg(&args[i + 1])?.max(0);
                i += 1;
            }
            "streams" if moreargs > 0 => {
                streams_arg = i + 1;
                if !(args.len() - streams_arg).is_multiple_of(2) {
                    return Err(Reply::err(ctx.profile.streams.unbalanced_xreadgroup));
                }
                break;
            }
            "group" if moreargs >= 2 => {
                names = Some((args[i + 1].clone(), args[i + 2].clone()));
                i += 2;
            }
            "noack" => noack = true,
            _ => return Err(Reply::err(errors::SYNTAX)),
        }
        i += 1;
    }
    if streams_arg == 0 {
        return Err(Reply::err(errors::SYNTAX));
    }
    let Some((group, consumer)) = names else {
        return Err(Reply::err(MISSING_GROUP));
    };
    let n = (args.len() - streams_arg) / 2;
    let keys = &args[streams_arg..streams_arg + n];
    // `None` is `>`: new entries only.
    let mut ids: Vec<Option<StreamId>> = Vec::with_capacity(n);
    for (key, id_arg) in keys.iter().zip(&args[streams_arg + n..]) {
        let has_group = stream_mut(ctx, key)?.is_some_and(|s| s.groups.contains_key(&group));
        if !has_group {
            return Err(Reply::err(format!(
                "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
                text(key),
                text(&group)
            )));
        }
        ids.push(match until_nul(id_arg) {
            b"$" => return Err(Reply::err(DOLLAR_IN_GROUP)),
            b"+" if ctx.profile.streams.last_entry_id != LastEntryId::Invalid => {
                return Err(Reply::err(PLUS_IN_GROUP))
            }
            b">" => None,
            other => Some(strict_id(other)?).filter(|id| *id != StreamId::MAX),
        });
    }
    let limit = if count == 0 {
        usize::MAX
    } else {
        count as usize
    };
    let now = ctx.wall_ms();
    let mut served: Vec<(Reply, Reply)> = Vec::new();
    let consumer_always = ctx.profile.xreadgroup_consumer_always;
    let group_lag = ctx.profile.streams.group_lag;
    for (key, gt) in keys.iter().zip(ids) {
        let Some(s) = stream_mut(ctx, key)? else {
            continue;
        };
        if consumer_always {
            touch_consumer(s, &group, &consumer, now);
        }
        let last_delivered = s.groups[&group].last_id;
        let (start, history) = match gt {
            Some(id) => (id, true),
            None => match s.entries.last_key_value() {
                Some((&max, _)) if max > last_delivered => (last_delivered, false),
                _ => continue,
            },
        };
        let start = start.incr().unwrap_or(StreamId::MAX);
        let items = serve(
            group_lag, s, &group, &consumer, start, limit, history, noack, now,
        );
        served.push((Reply::Bulk(key.clone()), Reply::Array(items)));
    }
    Ok(super::streams::streams_reply(served, ctx.resp3))
}

/// Look the consumer up (it was seen now) or create it.
fn touch_consumer(s: &mut StreamValue, group: &[u8], consumer: &[u8], now: i64) {
    let g = s.groups.get_mut(group).expect("group checked");
    g.consumers
        .entry(consumer.to_vec())
        .and_modify(|c| c.seen_time = now)
        .or_insert_with(|| Consumer {
            seen_time: now,
            active_time: -1,
            pel: Default::default(),
        });
}

/// `streamReplyWithRange` with a group: the consumer (created when missing) gets its own
/// pending history (`history`), or the entries after `start` that become pending for it.
#[allow(clippy::too_many_arguments)]
fn serve(
    group_lag: GroupLag,
    s: &mut StreamValue,
    group: &[u8],
    consumer: &[u8],
    start: StreamId,
    limit: usize,
    history: bool,
    noack: bool,
    now: i64,
) -> Vec<Reply> {
    touch_consumer(s, group, consumer, now);
    let g = s.groups.get_mut(group).expect("group checked");
    if history {
        let pending: Vec<StreamId> = g.consumers[consumer]
            .pel
            .range(start..)
            .take(limit)
            .copied()
            .collect();
        return pending
            .into_iter()
            .map(|id| match s.entries.get(&id) {
                Some(fields) => {
                    let g = s.groups.get_mut(group).expect("group checked");
                    if let Some(p) = g.pel.get_mut(&id) {
                        p.delivery_time = now;
                        p.delivery_count += 1;
                    }
                    entry_reply(&id, fields)
                }
                None => Reply::Array(vec![id_reply(id), Reply::NilArray]),
            })
            .collect();
    }
    let picked: Vec<StreamId> = s
        .entries
        .range(start..)
        .take(limit)
        .map(|(id, _)| *id)
        .collect();
    let mut out = Vec::with_capacity(picked.len());
    // Fixed servers look for tombstones after the group's last ID (not after the served entry),
    // and recount when that ID is behind the first entry (trimmed past it).
    let fixed = group_lag.fragmentation_fixed();
    for id in picked {
        let tombstones = if fixed {
            let last = s.groups[group].last_id;
            last < first_id(s) || has_tombstones_from(group_lag, s, last)
        } else {
            has_tombstones_from(group_lag, s, id)
        };
        let estimate = estimate_distance(group_lag, s, id);
        let entries_added = s.entries_added;
        let g = s.groups.get_mut(group).expect("group checked");
        if id > g.last_id {
            if g.entries_read != ENTRIES_READ_UNKNOWN && !tombstones {
                g.entries_read += 1;
            } else if entries_added != 0 {
                g.entries_read = estimate;
            }
            g.last_id = id;
        }
        if !noack {
            if let Some(old) = g.pel.get(&id).map(|p| p.consumer.clone()) {
                if let Some(c) = g.consumers.get_mut(&old) {
                    c.pel.remove(&id);
                }
            }
            g.pel.insert(
                id,
                PendingEntry {
                    consumer: consumer.to_vec(),
                    delivery_time: now,
                    delivery_count: 1,
                },
            );
            if let Some(c) = g.consumers.get_mut(consumer) {
                c.pel.insert(id);
                c.active_time = now;
            }
        }
        out.push(entry_reply(&id, &s.entries[&id]));
    }
    out
}

// ---- XACK XPENDING XSETID ----

fn xack(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let Some(s) = stream_mut(ctx, &args[1])? else {
            return Ok(Reply::Int(0));
        };
        let Some(g) = s.groups.get_mut(&args[2]) else {
            return Ok(Reply::Int(0));
        };
        let ids = args[3..]
            .iter()
            .map(|a| strict_id(a))
            .collect::<Result<Vec<_>, _>>()?;
        let mut acked = 0;
        for id in ids {
            if let Some(p) = g.pel.remove(&id) {
                if let Some(c) = g.consumers.get_mut(&p.consumer) {
                    c.pel.remove(&id);
                }
                acked += 1;
            }
        }
        Ok(Reply::Int(acked))
    })())
}

fn xpending(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let argc = args.len();
        if argc != 3 && !(6..=9).contains(&argc) {
            return Err(Reply::err(errors::SYNTAX));
        }
        let mut range = None;
        let mut minidle = 0;
        if argc >= 6 {
            let mut startidx = 3;
            if lower(&args[3]) == "idle" {
                minidle = int_arg(&args[4])?;
                if argc < 8 {
                    return Err(Reply::err(errors::SYNTAX));
                }
                startidx += 2;
            }
            let count = int_arg(&args[startidx + 2])?.max(0);
            let (mut start, startex) = interval_id(&args[startidx], 0)?;
            if startex {
                start = start.incr().ok_or_else(|| Reply::err(BAD_START))?;
            }
            let (mut end, endex) = interval_id(&args[startidx + 1], u64::MAX)?;
            if endex {
                end = end.decr().ok_or_else(|| Reply::err(BAD_END))?;
            }
            let consumer = args.get(startidx + 3).cloned();
            range = Some((start, end, count, consumer));
        }
        let now = ctx.wall_ms();
        let key = &args[1];
        let group_name = &args[2];
        let group = stream_mut(ctx, key)?.and_then(|s| s.groups.get(group_name));
        let Some(g) = group else {
            return Err(Reply::err(format!(
                "NOGROUP No such key '{}' or consumer group '{}'",
                text(key),
                text(group_name)
            )));
        };
        let Some((start, end, mut count, consumer)) = range else {
            let (Some((first, _)), Some((last, _))) =
                (g.pel.first_key_value(), g.pel.last_key_value())
            else {
                return Ok(Reply::Array(vec![
                    Reply::Int(0),
                    Reply::Nil,
                    Reply::Nil,
                    Reply::NilArray,
                ]));
            };
            let owners = g
                .consumers
                .iter()
                .filter(|(_, c)| !c.pel.is_empty())
                .map(|(name, c)| {
                    Reply::Array(vec![
                        Reply::Bulk(name.clone()),
                        Reply::Bulk(c.pel.len().to_string().into_bytes()),
                    ])
                })
                .collect();
            return Ok(Reply::Array(vec![
                Reply::Int(g.pel.len() as i64),
                id_reply(*first),
                id_reply(*last),
                Reply::Array(owners),
            ]));
        };
        let ids: Vec<StreamId> = match &consumer {
            Some(name) => match g.consumers.get(name) {
                None => return Ok(Reply::Array(vec![])),
                Some(c) => c.pel.iter().copied().collect(),
            },
            None => g.pel.keys().copied().collect(),
        };
        let mut out = Vec::new();
        for id in ids.into_iter().filter(|id| *id >= start) {
            if count == 0 || id > end {
                break;
            }
            let p = &g.pel[&id];
            let idle = now - p.delivery_time;
            if minidle != 0 && idle < minidle {
                continue;
            }
            count -= 1;
            out.push(Reply::Array(vec![
                id_reply(id),
                Reply::Bulk(p.consumer.clone()),
                Reply::Int(idle.max(0)),
                Reply::Int(p.delivery_count as i64),
            ]));
        }
        Ok(Reply::Array(out))
    })())
}

fn xsetid(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let id = strict_id(&args[2])?;
        let mut entries_added: i64 = -1;
        let mut max_deleted = StreamId::default();
        let mut i = 3;
        while i < args.len() {
            let moreargs = args.len() - 1 - i;
            match lower(&args[i]).as_str() {
                "entriesadded" if moreargs > 0 => {
                    entries_added = int_arg(&args[i + 1])?;
                    if entries_added < 0 {
                        return Err(Reply::err(ENTRIES_ADDED_NEGATIVE));
                    }
                }
                "maxdeletedid" if moreargs > 0 => {
                    max_deleted = strict_id(&args[i + 1])?;
                    if id < max_deleted {
                        return Err(Reply::err(SETID_BELOW_MAXDELETED));
                    }
                }
                _ => return Err(Reply::err(errors::SYNTAX)),
            }
            i += 2;
        }
        let checks_max_deleted = ctx.profile.xsetid_checks_max_deleted;
        let Some(s) = stream_mut(ctx, &args[1])? else {
            return Err(Reply::err(errors::NO_SUCH_KEY));
        };
        if checks_max_deleted && id < s.max_deleted_id {
            return Err(Reply::err(SETID_BELOW_MAX_DELETED));
        }
        if let Some((&top, _)) = s.entries.last_key_value() {
            if id < top {
                return Err(Reply::err(SETID_BELOW_TOP));
            }
            if entries_added != -1 && s.entries.len() as u64 > entries_added as u64 {
                return Err(Reply::err(SETID_ADDED_BELOW_LEN));
            }
        }
        s.last_id = id;
        if entries_added != -1 {
            s.entries_added = entries_added as u64;
        }
        if max_deleted != StreamId::default() {
            s.max_deleted_id = max_deleted;
        }
        Ok(Reply::ok())
    })())
}

// ---- XCLAIM XAUTOCLAIM ----

/// `getLongLongFromObjectOrReply` with a custom message.
fn long_or(arg: &[u8], msg: &str) -> Result<i64, Reply> {
    int_arg(arg).map_err(|_| Reply::err(format!("ERR {msg}")))
}

/// Give the pending entry `id` to `consumer` (created when missing), as XCLAIM and XAUTOCLAIM
/// do: delivered at `time`, its count set or incremented.
fn claim(
    g: &mut ConsumerGroup,
    id: StreamId,
    consumer: &[u8],
    time: i64,
    count: Option<u64>,
    now: i64,
) {
    g.consumers
        .entry(consumer.to_vec())
        .and_modify(|c| c.seen_time = now)
        .or_insert_with(|| Consumer {
            seen_time: now,
            active_time: -1,
            pel: Default::default(),
        });
    // A forced entry has no owner yet: it moves to `consumer` whatever its placeholder says.
    let owned = g.consumers[consumer].pel.contains(&id);
    let p = g.pel.get_mut(&id).expect("pending entry");
    if !owned {
        if let Some(old) = g.consumers.get_mut(&p.consumer) {
            old.pel.remove(&id);
        }
    }
    p.delivery_time = time;
    match count {
        Some(c) => p.delivery_count = c,
        None => p.delivery_count += 1,
    }
    if !owned {
        p.consumer = consumer.to_vec();
    }
    let c = g.consumers.get_mut(consumer).expect("created above");
    c.pel.insert(id);
    c.active_time = now;
}

/// Drop a pending entry whose stream entry is gone.
fn drop_pending(g: &mut ConsumerGroup, id: StreamId) {
    if let Some(p) = g.pel.remove(&id) {
        if let Some(c) = g.consumers.get_mut(&p.consumer) {
            c.pel.remove(&id);
        }
    }
}

fn no_key_or_group(key: &[u8], group: &[u8]) -> Reply {
    Reply::err(format!(
        "NOGROUP No such key '{}' or consumer group '{}'",
        text(key),
        text(group)
    ))
}

/// `xclaimCommand`.
fn xclaim(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let now = ctx.wall_ms();
        let (key, group, consumer) = (&args[1], &args[2], &args[3]);
        let has_group = stream_mut(ctx, key)?.is_some_and(|s| s.groups.contains_key(group));
        if !has_group {
            return Err(no_key_or_group(key, group));
        }
        let minidle = long_or(&args[4], "Invalid min-idle-time argument for XCLAIM")?.max(0);
        let mut j = 5;
        let mut ids = Vec::new();
        while j < args.len() {
            match strict_id(&args[j]) {
                Ok(id) => ids.push(id),
                Err(_) => break,
            }
            j += 1;
        }
        let (mut force, mut justid) = (false, false);
        let mut retrycount: i64 = -1;
        let mut deliverytime: i64 = -1;
        let mut last_id = StreamId::default();
        while j < args.len() {
            let moreargs = args.len() - 1 - j;
            match lower(&args[j]).as_str() {
                "force" => force = true,
                "justid" => justid = true,
                "idle" if moreargs > 0 => {
                    j += 1;
                    deliverytime =
                        now - long_or(&args[j], "Invalid IDLE option argument for XCLAIM")?;
                }
                "time" if moreargs > 0 => {
                    j += 1;
                    deliverytime = long_or(&args[j], "Invalid TIME option argument for XCLAIM")?;
                }
                "retrycount" if moreargs > 0 => {
                    j += 1;
                    retrycount =
                        long_or(&args[j], "Invalid RETRYCOUNT option argument for XCLAIM")?;
                }
                "lastid" if moreargs > 0 => {
                    j += 1;
                    last_id = strict_id(&args[j])?;
                }
                _ => {
                    return Err(Reply::err(format!(
                        "ERR Unrecognized XCLAIM option '{}'",
                        text(&args[j])
                    )))
                }
            }
            j += 1;
        }
        let s = stream_mut(ctx, key)?.expect("checked above");
        let g = s.groups.get_mut(group).expect("checked above");
        if last_id > g.last_id {
            g.last_id = last_id;
        }
        if deliverytime == -1 || deliverytime < 0 || deliverytime > now {
            deliverytime = now;
        }
        let mut out = Vec::new();
        for id in ids {
            let Some(fields) = s.entries.get(&id) else {
                drop_pending(g, id);
                continue;
            };
            if force && !g.pel.contains_key(&id) {
                // A forced entry has no owner yet: the idle check does not apply to it.
                g.pel.insert(
                    id,
                    PendingEntry {
                        consumer: Vec::new(),
                        delivery_time: now,
                        delivery_count: 1,
                    },
                );
            } else if let Some(p) = g.pel.get(&id) {
                if minidle != 0 && now - p.delivery_time < minidle {
                    continue;
                }
            } else {
                continue;
            }
            let count = if retrycount >= 0 {
                Some(retrycount as u64)
            } else if justid {
                g.pel.get(&id).map(|p| p.delivery_count)
            } else {
                None
            };
            claim(g, id, consumer, deliverytime, count, now);
            out.push(if justid {
                id_reply(id)
            } else {
                entry_reply(&id, fields)
            });
        }
        Ok(Reply::Array(out))
    })())
}

/// `xautoclaimCommand`: claim up to COUNT idle entries from START, scanning at most 10 × COUNT
/// pending entries; reply with the next start, the claimed entries and the IDs dropped because
/// their entries were deleted.
fn xautoclaim(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let now = ctx.wall_ms();
        let (key, group, consumer) = (&args[1], &args[2], &args[3]);
        let minidle = long_or(&args[4], "Invalid min-idle-time argument for XAUTOCLAIM")?.max(0);
        let (mut start, startex) = interval_id(&args[5], 0)?;
        if startex {
            start = start.incr().ok_or_else(|| Reply::err(BAD_START))?;
        }
        let mut count: i64 = 100;
        let mut justid = false;
        let mut j = 6;
        while j < args.len() {
            let moreargs = args.len() - 1 - j;
            match lower(&args[j]).as_str() {
                "count" if moreargs > 0 => {
                    count = match int_arg(&args[j + 1]) {
                        Ok(c) if (1..=i64::MAX / 16).contains(&c) => c,
                        _ => return Err(Reply::err("ERR COUNT must be > 0")),
                    };
                    j += 1;
                }
                "justid" => justid = true,
                _ => return Err(Reply::err(errors::SYNTAX)),
            }
            j += 1;
        }
        let has_group = stream_mut(ctx, key)?.is_some_and(|s| s.groups.contains_key(group));
        if !has_group {
            return Err(no_key_or_group(key, group));
        }
        let s = stream_mut(ctx, key)?.expect("checked above");
        let g = s.groups.get_mut(group).expect("checked above");
        let pending: Vec<StreamId> = g.pel.range(start..).map(|(id, _)| *id).collect();
        let mut attempts = count.saturating_mul(10);
        let (mut claimed, mut deleted) = (Vec::new(), Vec::new());
        let mut pos = 0;
        let mut eof = false;
        loop {
            if attempts == 0 || count == 0 {
                break;
            }
            attempts -= 1;
            let Some(&id) = pending.get(pos) else {
                eof = true;
                break;
            };
            pos += 1;
            let Some(fields) = s.entries.get(&id) else {
                drop_pending(g, id);
                deleted.push(id_reply(id));
                count -= 1;
                continue;
            };
            if minidle != 0 && now - g.pel[&id].delivery_time < minidle {
                continue;
            }
            let times = if justid {
                Some(g.pel[&id].delivery_count)
            } else {
                None
            };
            claim(g, id, consumer, now, times, now);
            claimed.push(if justid {
                id_reply(id)
            } else {
                entry_reply(&id, fields)
            });
            count -= 1;
        }
        let next = if eof {
            StreamId::default()
        } else {
            pending.get(pos).copied().unwrap_or_default()
        };
        Ok(Reply::Array(vec![
            id_reply(next),
            Reply::Array(claimed),
            Reply::Array(deleted),
        ]))
    })())
}

// ---- XINFO STREAM ----

/// `xinfoReplyWithStreamInfo`: the summary, or with FULL the entries (COUNT, default 10, 0 for
/// all) and every group with its pending entries and consumers.
fn xinfo_stream(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let active_time = ctx.profile.xinfo_consumers_inactive;
        let group_lag = ctx.profile.streams.group_lag;
        let key = &args[2];
        let Some(s) = stream_mut(ctx, key)? else {
            return Err(Reply::err(errors::NO_SUCH_KEY));
        };
        let full_count = xinfo_stream_full_count(args)?;
        let field = |name: &str| Reply::Bulk(name.as_bytes().to_vec());
        let (nodes, rax_nodes) = s.node_layout();
        let mut out = vec![
            (field("length"), Reply::Int(s.entries.len() as i64)),
            (field("radix-tree-keys"), Reply::Int(nodes.len() as i64)),
            (field("radix-tree-nodes"), Reply::Int(rax_nodes as i64)),
            (field("last-generated-id"), id_reply(s.last_id)),
            (field("max-deleted-entry-id"), id_reply(s.max_deleted_id)),
            (field("entries-added"), Reply::Int(s.entries_added as i64)),
            (field("recorded-first-entry-id"), id_reply(first_id(s))),
        ];
        let Some(count) = full_count else {
            let edge = |e: Option<(&StreamId, &crate::engine::keyspace::stream::StreamFields)>| {
                e.map_or(Reply::Nil, |(id, f)| entry_reply(id, f))
            };
            out.push((field("groups"), Reply::Int(s.groups.len() as i64)));
            out.push((field("first-entry"), edge(s.entries.iter().next())));
            out.push((field("last-entry"), edge(s.entries.iter().next_back())));
            return Ok(Reply::Map(out));
        };
        let limit = if count == 0 {
            usize::MAX
        } else {
            count as usize
        };
        out.push((
            field("entries"),
            Reply::Array(
                s.entries
                    .iter()
                    .take(limit)
                    .map(|(id, f)| entry_reply(id, f))
                    .collect(),
            ),
        ));
        let groups = s
            .groups
            .iter()
            .map(|(name, g)| full_group_reply(s, name, g, limit, active_time, group_lag))
            .collect();
        out.push((field("groups"), Reply::Array(groups)));
        Ok(Reply::Map(out))
    })())
}

/// XINFO STREAM's options: `None` for the summary, `Some(count)` for FULL [COUNT n] (10 when
/// not given or negative, 0: everything).
fn xinfo_stream_full_count(args: &[Vec<u8>]) -> Result<Option<i64>, Reply> {
    let opts = &args[3..];
    if opts.is_empty() {
        return Ok(None);
    }
    if (opts.len() != 1 && opts.len() != 3) || lower(&opts[0]) != "full" {
        return Err(subcommand_syntax(args));
    }
    let mut count: i64 = 10;
    if opts.len() == 3 {
        if lower(&opts[1]) != "count" {
            return Err(subcommand_syntax(args));
        }
        count = int_arg(&opts[2])?;
        if count < 0 {
            count = 10;
        }
    }
    Ok(Some(count))
}

/// A group in XINFO STREAM FULL: its counters, lag, up to `limit` pending entries, and its
/// consumers with their own pending entries.
fn full_group_reply(
    s: &StreamValue,
    name: &[u8],
    g: &ConsumerGroup,
    limit: usize,
    active_time: bool,
    group_lag: GroupLag,
) -> Reply {
    let field = |name: &str| Reply::Bulk(name.as_bytes().to_vec());
    let pending = g
        .pel
        .iter()
        .take(limit)
        .map(|(id, p)| {
            Reply::Array(vec![
                id_reply(*id),
                Reply::Bulk(p.consumer.clone()),
                Reply::Int(p.delivery_time),
                Reply::Int(p.delivery_count as i64),
            ])
        })
        .collect();
    let consumers = g
        .consumers
        .iter()
        .map(|(cname, c)| {
            let mut fields = vec![
                (field("name"), Reply::Bulk(cname.clone())),
                (field("seen-time"), Reply::Int(c.seen_time)),
            ];
            if active_time {
                fields.push((field("active-time"), Reply::Int(c.active_time)));
            }
            fields.push((field("pel-count"), Reply::Int(c.pel.len() as i64)));
            let own = c
                .pel
                .iter()
                .take(limit)
                .map(|id| {
                    let p = &g.pel[id];
                    Reply::Array(vec![
                        id_reply(*id),
                        Reply::Int(p.delivery_time),
                        Reply::Int(p.delivery_count as i64),
                    ])
                })
                .collect();
            fields.push((field("pending"), Reply::Array(own)));
            Reply::Map(fields)
        })
        .collect();
    Reply::Map(vec![
        (field("name"), Reply::Bulk(name.to_vec())),
        (field("last-delivered-id"), id_reply(g.last_id)),
        (field("entries-read"), entries_read_reply(g.entries_read)),
        (
            field("lag"),
            lag(group_lag, s, g).map_or(Reply::Nil, Reply::Int),
        ),
        (field("pel-count"), Reply::Int(g.pel.len() as i64)),
        (field("pending"), Reply::Array(pending)),
        (field("consumers"), Reply::Array(consumers)),
    ])
}

// ---- XINFO GROUPS / CONSUMERS ----

fn xinfo(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let opt = lower(&args[1]);
        if opt == "help" {
            return Ok(if args.len() == 2 {
                super::help::help_reply(ctx, XINFO_HELP)
            } else {
                subcommand_syntax(args)
            });
        }
        let now = ctx.wall_ms();
        let inactive_field = ctx.profile.xinfo_consumers_inactive;
        let group_lag = ctx.profile.streams.group_lag;
        let key = &args[2];
        let Some(s) = stream_mut(ctx, key)? else {
            return Err(Reply::err(errors::NO_SUCH_KEY));
        };
        let field = |name: &str| Reply::Bulk(name.as_bytes().to_vec());
        match opt.as_str() {
            "consumers" if args.len() == 4 => {
                let Some(g) = s.groups.get(&args[3]) else {
                    return Err(Reply::err(format!(
                        "NOGROUP No such consumer group '{}' for key name '{}'",
                        text(&args[3]),
                        text(key)
                    )));
                };
                Ok(Reply::Array(
                    g.consumers
                        .iter()
                        .map(|(name, c)| {
                            let mut fields = vec![
                                (field("name"), Reply::Bulk(name.clone())),
                                (field("pending"), Reply::Int(c.pel.len() as i64)),
                                (field("idle"), Reply::Int((now - c.seen_time).max(0))),
                            ];
                            if inactive_field {
                                let inactive = if c.active_time == -1 {
                                    -1
                                } else {
                                    now - c.active_time
                                };
                                fields.push((field("inactive"), Reply::Int(inactive)));
                            }
                            Reply::Map(fields)
                        })
                        .collect(),
                ))
            }
            "groups" if args.len() == 3 => Ok(Reply::Array(
                s.groups
                    .iter()
                    .map(|(name, g)| {
                        Reply::Map(vec![
                            (field("name"), Reply::Bulk(name.clone())),
                            (field("consumers"), Reply::Int(g.consumers.len() as i64)),
                            (field("pending"), Reply::Int(g.pel.len() as i64)),
                            (field("last-delivered-id"), id_reply(g.last_id)),
                            (field("entries-read"), entries_read_reply(g.entries_read)),
                            (
                                field("lag"),
                                lag(group_lag, s, g).map_or(Reply::Nil, Reply::Int),
                            ),
                        ])
                    })
                    .collect(),
            )),
            _ => Err(subcommand_syntax(args)),
        }
    })())
}
