//! MEMORY USAGE and MEMORY HELP (`memoryCommand` and `objectComputeSize` in `src/object.c` of
//! Redis 7.0.15, 64-bit, jemalloc 5.3): the bytes Redis would account for a key, computed from
//! the sizes of its C structures rounded up to jemalloc's size classes, for the encoding OBJECT
//! ENCODING reports.
//!
//! Exact for strings created whole (int, embstr, raw), listpack hashes and sorted sets, intsets,
//! lists (quicklist nodes filled in order up to 8 KB) and streams without consumer groups.
//! Approximate where Redis's figure depends on history or chance the sandbox does not keep: a
//! string grown in place (SETBIT, APPEND, SETRANGE: Redis's buffer has spare room), hash tables
//! (their size after growth and during rehashing, and which five elements the sample meets in
//! hash order) and skiplist node levels (random in Redis; counted as level 1 here).

use super::generic::encoding;
use super::zsets::d2string;
use super::{errors, flatten, int_arg, lower, Command, Ctx};
use crate::engine::keyspace::stream::lp_str;
use crate::engine::keyspace::Value;
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("memory|usage", memory_usage),
    Command::new("memory|help", memory_help),
];

const MEMORY_HELP: &[&str] = &[
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
];

// Sizes of Redis's structures on 64-bit builds.
const ROBJ: usize = 16;
const DICT_ENTRY: usize = 24;
const DICT: usize = 56;
const POINTER: usize = 8;
const QUICKLIST: usize = 40;
const QUICKLIST_NODE: usize = 40;
const ZSET: usize = 16;
const ZSKIPLIST: usize = 32;
/// `zskiplistNode` without levels, and one level (forward pointer and span).
const ZSKIPLIST_NODE: usize = 24;
const ZSKIPLIST_LEVEL: usize = 16;
const ZSKIPLIST_MAXLEVEL: usize = 32;
const STREAM: usize = 80;
const STREAM_ID: usize = 16;
const RAX_NODE: usize = 4;
/// `streamRadixTreeMemoryUsage`'s fixed overhead per node (`sizeof(long)*30`).
const RAX_NODE_OVERHEAD: usize = 8 * 30;
/// A stream listpack is allocated with `stream-node-max-bytes` of room up front.
const STREAM_LISTPACK_PREALLOC: u64 = 4096;
/// An empty listpack: 6-byte header and the end byte.
const LISTPACK_EMPTY: u64 = 7;
/// `hash-max-listpack-entries`.
const HASH_MAX_LISTPACK_ENTRIES: usize = 512;
/// `OBJ_COMPUTE_SIZE_DEF_SAMPLES`.
const DEFAULT_SAMPLES: usize = 5;

/// The size class jemalloc rounds an allocation of `n` bytes up to (`zmalloc_size`): 8, 16,
/// then four classes per doubling (with a 16-byte quantum up to 128).
pub fn jemalloc_size(n: usize) -> usize {
    if n <= 8 {
        return 8;
    }
    if n <= 16 {
        return 16;
    }
    let k = usize::BITS - 1 - (n - 1).leading_zeros();
    let step = (1usize << k.saturating_sub(2)).max(16);
    n.div_ceil(step) * step
}

/// `sdsZmallocSize` of an sds created with exactly `len` bytes (`sdsnewlen`): the header
/// (1, 3, 5 or 9 bytes by length), the bytes and the terminator.
fn sds_size(len: usize) -> usize {
    let header = match len {
        0 => 3, // an empty sds is made type 8
        1..=31 => 1,
        32..=255 => 3,
        256..=65_535 => 5,
        _ => 9,
    };
    jemalloc_size(header + len + 1)
}

/// Hash table buckets after adding `n` entries one by one: 4, doubling when full (`dictExpand`
/// at the add that finds it full). After a doubling both tables count until the incremental
/// rehash, one old bucket per later add, has moved every non-empty bucket; how many are
/// non-empty depends on Redis's random hash seed, so this takes the expected number.
fn dict_slots(n: usize) -> usize {
    let size = n.next_power_of_two().max(4);
    if n <= 4 {
        return size;
    }
    let old = size / 2;
    // Adds after the one that doubled the table (at `old + 1` entries).
    let steps = n - old - 1;
    let expected_nonempty = old as f64 * (1.0 - (1.0 - 1.0 / old as f64).powi(old as i32));
    if (steps as f64) < expected_nonempty {
        size + old
    } else {
        size
    }
}

/// Buckets of a hash converted from a listpack: the table is sized for all the entries at once
/// (at the 513th entry, `hash-max-listpack-entries` + 1), then grows as `dict_slots`.
fn converted_dict_slots(n: usize) -> usize {
    let at_conversion = n
        .min(HASH_MAX_LISTPACK_ENTRIES + 1)
        .next_power_of_two()
        .max(4);
    if n <= at_conversion {
        at_conversion
    } else {
        dict_slots(n)
    }
}

/// `asize += (double)elesize/samples*count` as C computes it (truncated to an integer).
fn add_sampled(
    asize: usize,
    sizes: impl Iterator<Item = usize>,
    samples: usize,
    count: usize,
) -> usize {
    let (mut total, mut seen) = (0usize, 0usize);
    for size in sizes.take(samples) {
        total += size;
        seen += 1;
    }
    if seen == 0 {
        return asize;
    }
    (asize as f64 + total as f64 / seen as f64 * count as f64) as usize
}

/// Bytes of a listpack holding these elements.
fn listpack_bytes<'a>(elements: impl Iterator<Item = &'a [u8]>) -> u64 {
    LISTPACK_EMPTY + elements.map(lp_str).sum::<u64>()
}

/// `objectComputeSize` for the encoding the sandbox reports.
fn value_size(value: &mut Value, samples: usize) -> usize {
    let enc = encoding(value);
    match value {
        Value::Str(s) => match enc {
            "int" => ROBJ,
            // The object header and an sds type 8 in one allocation.
            "embstr" => jemalloc_size(ROBJ + 3 + s.len() + 1),
            _ => ROBJ + sds_size(s.len()),
        },
        Value::List(list) => {
            if enc == "listpack" {
                // 7.2+: one listpack, grown to its exact size.
                return ROBJ + jemalloc_size(list.listpack_bytes() as usize);
            }
            // Nodes filled in order, each up to 8 KB (`_quicklistNodeAllowInsert`); a 7.2+
            // list keeps the nodes its pushes and pops made.
            let nodes = list.node_bytes();
            let count = nodes.len();
            let sizes = nodes
                .into_iter()
                .map(|bytes| QUICKLIST_NODE + jemalloc_size(bytes as usize));
            add_sampled(ROBJ + QUICKLIST, sizes, samples.max(1), count)
        }
        Value::Set(set) => {
            if enc == "intset" {
                // Each member takes the width of the widest one (2, 4 or 8 bytes).
                let width = set
                    .iter()
                    .filter_map(|m| super::number::parse_i64(m))
                    .map(|v| {
                        if i16::try_from(v).is_ok() {
                            2
                        } else if i32::try_from(v).is_ok() {
                            4
                        } else {
                            8
                        }
                    })
                    .max()
                    .unwrap_or(2);
                ROBJ + jemalloc_size(8 + width * set.len())
            } else if enc == "listpack" {
                // 7.2+: a listpack set, as a listpack hash (`lpBytes`).
                ROBJ + jemalloc_size(listpack_bytes(set.iter().map(Vec::as_slice)) as usize)
            } else {
                let base = ROBJ + DICT + POINTER * dict_slots(set.len());
                let sizes = set.iter().map(|m| DICT_ENTRY + sds_size(m.len()));
                add_sampled(base, sizes, samples, set.len())
            }
        }
        Value::Hash(hash) => {
            if enc == "listpack" {
                let elements = hash.iter().flat_map(|(f, v)| [f.as_slice(), v.as_slice()]);
                ROBJ + jemalloc_size(listpack_bytes(elements) as usize)
            } else {
                let base = ROBJ + DICT + POINTER * converted_dict_slots(hash.len());
                let sizes = hash
                    .iter()
                    .map(|(f, v)| sds_size(f.len()) + sds_size(v.len()) + DICT_ENTRY);
                add_sampled(base, sizes, samples, hash.len())
            }
        }
        Value::ZSet(zset) => {
            if enc == "listpack" {
                let bytes = LISTPACK_EMPTY
                    + zset
                        .iter()
                        .map(|(m, score)| lp_str(m) + lp_str(d2string(score).as_bytes()))
                        .sum::<u64>();
                ROBJ + jemalloc_size(bytes as usize)
            } else {
                let header = ZSKIPLIST_NODE + ZSKIPLIST_LEVEL * ZSKIPLIST_MAXLEVEL;
                let base = ROBJ
                    + ZSET
                    + ZSKIPLIST
                    + DICT
                    + POINTER * dict_slots(zset.len())
                    + jemalloc_size(header);
                let node = jemalloc_size(ZSKIPLIST_NODE + ZSKIPLIST_LEVEL);
                let sizes = zset
                    .iter()
                    .map(|(m, _)| sds_size(m.len()) + DICT_ENTRY + node);
                add_sampled(base, sizes, samples, zset.len())
            }
        }
        Value::Stream(stream) => {
            let (nodes, rax_nodes) = stream.node_layout();
            let rax = nodes.len() * STREAM_ID + rax_nodes * (RAX_NODE + RAX_NODE_OVERHEAD);
            let mut asize = ROBJ + STREAM + rax;
            // A node is allocated with 4 KB of room and shrunk to fit when the next one starts.
            let last = nodes.len().saturating_sub(1);
            let alloc = |i: usize| {
                let bytes = nodes[i];
                let room = if i == last {
                    bytes.max(STREAM_LISTPACK_PREALLOC)
                } else {
                    bytes
                };
                jemalloc_size(room as usize)
            };
            let sampled = nodes.len().min(samples);
            let lpsize: usize = (0..sampled).map(alloc).sum();
            if nodes.len() <= sampled {
                asize += lpsize;
            } else {
                // The average of the sampled nodes for all but the last, then the last.
                asize += lpsize / sampled.max(1) * last;
                asize += alloc(last);
            }
            asize + stream_groups_size(stream)
        }
    }
}

/// Consumer groups in `objectComputeSize` (issue 13): per group its struct, its PEL's radix tree
/// (`streamRadixTreeMemoryUsage`) and NACKs; per consumer its struct, name and PEL tree.
fn stream_groups_size(stream: &crate::engine::keyspace::StreamValue) -> usize {
    use crate::engine::keyspace::stream::id_rax_node_count;
    /// `sizeof(streamCG)`, `sizeof(streamNACK)`, `sizeof(streamConsumer)` (7.0).
    const STREAM_CG: usize = 40;
    const STREAM_NACK: usize = 24;
    const STREAM_CONSUMER: usize = 24;
    let tree = |len: usize, nodes: usize| len * STREAM_ID + nodes * (RAX_NODE + RAX_NODE_OVERHEAD);
    stream
        .groups
        .values()
        .map(|g| {
            let pel = tree(g.pel.len(), id_rax_node_count(g.pel.keys().copied()));
            let consumers: usize = g
                .consumers
                .iter()
                .map(|(name, c)| {
                    STREAM_CONSUMER
                        + name.len()
                        + tree(c.pel.len(), id_rax_node_count(c.pel.iter().copied()))
                })
                .sum();
            STREAM_CG + pel + STREAM_NACK * g.pel.len() + consumers
        })
        .sum()
}

fn memory_usage(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let mut samples = DEFAULT_SAMPLES;
        let mut j = 3;
        while j < args.len() {
            if lower(&args[j]) == "samples" && j + 1 < args.len() {
                let n = int_arg(&args[j + 1])?;
                if n < 0 {
                    return Err(Reply::err(errors::SYNTAX));
                }
                samples = if n == 0 { usize::MAX } else { n as usize };
                j += 2;
            } else {
                return Err(Reply::err(errors::SYNTAX));
            }
        }
        // Redis looks the key up in the table directly: a key past its expiry that nothing has
        // reclaimed yet is still measured.
        let key = &args[2];
        let db = ctx.db();
        if !db.raw_entries().contains_key(key.as_slice()) {
            return Ok(Reply::Nil);
        }
        let entry = db.entry_mut_any(key).expect("checked above");
        let value = match (&entry.value, entry.raw) {
            // A raw string a command grew in place: its allocation (issue 13, sds.rs).
            (Value::Str(_), Some(raw)) => ROBJ + raw.bytes,
            _ => value_size(&mut entry.value, samples),
        };
        let usage = value + sds_size(key.len()) + DICT_ENTRY;
        Ok(Reply::Int(usage as i64))
    })())
}

fn memory_help(ctx: &mut Ctx, _args: &[Vec<u8>]) -> Reply {
    super::help::help_reply(ctx, MEMORY_HELP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jemalloc_classes() {
        let got: Vec<usize> = [1, 9, 17, 33, 49, 129, 161, 4097, 14337, 16385]
            .iter()
            .map(|&n| jemalloc_size(n))
            .collect();
        assert_eq!(got, [8, 16, 32, 48, 64, 160, 192, 5120, 16384, 20480]);
    }
}
