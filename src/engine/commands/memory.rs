//! MEMORY USAGE and MEMORY HELP (`memoryCommand` and `objectComputeSize` in `src/object.c`):
//! the bytes a server would account for a key, computed from the sizes of its C structures as
//! its allocator rounds them, for the encoding OBJECT ENCODING reports. What differs between
//! servers (allocator, where the key lives, Valkey's hashtable and radix tree accounting, struct
//! sizes) is a `MemoryLayout` per profile (`Profile::memory`).
//!
//! Exact for strings created whole (int, embstr, raw), listpack hashes (with field TTLs too) and
//! sorted sets, intsets, lists (quicklist nodes filled in order up to 8 KB), streams with their
//! groups, and hash tables of a few entries. Approximate where the figure depends on history or
//! chance the sandbox does not keep: a string grown in place (SETBIT, APPEND, SETRANGE: the
//! buffer has spare room; commands/sds.rs sizes it with 16-byte-quantum classes), hash tables (their size after growth and
//! during rehashing, Valkey's child buckets, and which five elements the sample meets in hash
//! order), skiplist node levels (random; counted as level 1 here), and glibc's usable sizes
//! (Valkey 9.1 as tested), which depend on the heap's past.

use super::generic::encoding;
use super::sds;
use super::zsets::d2string;
use super::{errors, flatten, int_arg, lower, Command, Ctx};
use crate::engine::keyspace::stream::{lp_str, StreamId};
use crate::engine::keyspace::{HashValue, ListValue, SetValue, StreamValue, Value, ZSetValue};
use crate::engine::profile::{
    Allocator, FieldTtlDialect, HashTableLayout, KeyLayout, MemoryLayout, NumberFormat, Profile,
    RaxAccounting,
};
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
/// `sizeof(listpackEx)`: the header of a Redis hash with field TTLs (7.4, 8.0).
const LISTPACK_EX: usize = 32;
/// `sizeof(long long)`: an expire field embedded in a Valkey object.
const EXPIRE_FIELD: usize = 8;
/// Valkey 8.1 embeds a string value with its key while the object stays within 64 bytes.
const VALKEY_EMBED_LIMIT: usize = 64;

impl Allocator {
    pub fn size(&self, n: usize) -> usize {
        match *self {
            // The 8-byte class comes before the quantum's multiples.
            Allocator::Jemalloc { .. } if n <= 8 => 8,
            Allocator::Jemalloc { quantum } if n <= 64 => n.div_ceil(quantum) * quantum,
            Allocator::Jemalloc { .. } => jemalloc_size(n),
            Allocator::Glibc => (n + 8).div_ceil(16).max(2) * 16 - 8,
        }
    }

    /// `sdsZmallocSize` of an sds created with exactly `len` bytes (`sdsnewlen`).
    fn sds(&self, len: usize) -> usize {
        self.size(sds::new_header(len) + len + 1)
    }
}

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

/// Bytes a Valkey key takes embedded in its robj: a header-size byte, then an sds of the
/// smallest type (`sdsReqType`: type 5, a 1-byte header, below 32 bytes).
fn embedded_key(len: usize) -> usize {
    1 + sds::header(len) + len + 1
}

/// Hash table buckets after adding `n` entries one by one: 4, doubling when full (`dictExpand`
/// at the add that finds it full). After a doubling both tables count until the incremental
/// rehash, one old bucket per later add, has moved every non-empty bucket; how many are
/// non-empty depends on Redis's random hash seed, so this takes the expected number.
fn dict_slots(n: usize) -> usize {
    dict_slots_from(n, 4)
}

/// `dict_slots` for a table that started with `first` slots.
fn dict_slots_from(n: usize, first: usize) -> usize {
    let size = n.next_power_of_two().max(first);
    if n <= first {
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

/// Buckets of a hash converted from a listpack with `converted_with` fields: the table is sized
/// for them at once (`dictExpand`; a hash that had no conversion, a seed, at the 513th entry,
/// `hash-max-listpack-entries` + 1), then grows as `dict_slots`.
fn converted_dict_slots(n: usize, converted_with: Option<usize>) -> usize {
    let with = converted_with.unwrap_or(n.min(HASH_MAX_LISTPACK_ENTRIES + 1));
    dict_slots_from(n, with.next_power_of_two().max(4))
}

/// `hashtableMemUsage` of a Valkey hash of `n` fields: the struct and its buckets. The table
/// was made at the conversion from a listpack, sized for the fields it had then (a seed: all
/// of them, or 513), and grew as fields were added: past 7 entries a bucket it doubles, both
/// tables counting until the next adds have moved every old bucket (one each). Child buckets
/// (a bucket's eighth entry) depend on the random hash seed and are not counted: exact up to
/// 7 fields.
fn hashtable_size(n: usize, converted_with: Option<usize>) -> usize {
    /// `sizeof(hashtable)`, a bucket, the entries a bucket holds.
    const HASHTABLE: usize = 72;
    const BUCKET: usize = 64;
    const ENTRIES_PER_BUCKET: usize = 7;
    // `numBucketsForCapacity`: `ceil(n * 5 / 32)`, a power of two.
    let buckets_for = |n: usize| (n * 5).div_ceil(32).max(1).next_power_of_two();
    let converted_with = converted_with.unwrap_or(n.min(HASH_MAX_LISTPACK_ENTRIES + 1));
    let (mut buckets, mut old, mut to_move) = (buckets_for(converted_with), 0, 0);
    for used in converted_with..n {
        // The add moves an old bucket, then finds the table full or not.
        if to_move > 0 {
            to_move -= 1;
            if to_move == 0 {
                old = 0;
            }
        }
        if used + 1 > buckets * ENTRIES_PER_BUCKET {
            (old, to_move) = (buckets, buckets);
            buckets = buckets_for(used + 1);
        }
    }
    HASHTABLE + BUCKET * (buckets + old)
}

/// `hashTypeEntryMemUsage` (Valkey 8.1): the field as an sds of the smallest type and the
/// value as an sds type 8 in one allocation while they fit 128 bytes; else the field after a
/// pointer to a value of its own.
fn hashtable_entry(a: &Allocator, field: &[u8], value: &[u8]) -> usize {
    const EMBED_LIMIT: usize = 128;
    let field_sds = sds::header(field.len()) + field.len() + 1;
    let value_sds = 3 + value.len() + 1;
    if field_sds + value_sds <= EMBED_LIMIT {
        a.size(field_sds + value_sds)
    } else {
        a.size(POINTER + field_sds) + a.sds(value.len())
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

/// The key a value is measured under: Valkey embeds it (and an expire field) in the robj.
struct KeyInfo<'a> {
    name: &'a [u8],
    has_expire: bool,
}

/// What the robj itself counts for a value other than an embedded string.
fn object_size(mem: &MemoryLayout, key: &KeyInfo) -> usize {
    match mem.key {
        KeyLayout::SdsInDictEntry | KeyLayout::EmbeddedInObject => ROBJ,
        KeyLayout::EmbeddedCounted => mem.allocator.size(ROBJ + valkey_key_bytes(key)),
    }
}

/// The embedded key and the expire field of a Valkey object (a key of 128 bytes or more
/// always gets the field: `KEY_SIZE_TO_INCLUDE_EXPIRE_THRESHOLD`).
fn valkey_key_bytes(key: &KeyInfo) -> usize {
    let expire = key.has_expire || key.name.len() >= 128;
    embedded_key(key.name.len()) + if expire { EXPIRE_FIELD } else { 0 }
}

/// A string value: an integer in the robj's pointer, embedded after the object header
/// (embstr), or an sds of its own (raw).
fn string_size(mem: &MemoryLayout, key: &KeyInfo, s: &[u8], enc: &str) -> usize {
    let a = &mem.allocator;
    // The value as an sds type 8 (`sdsReqSize(len, SDS_TYPE_8)`).
    let embedded_value = 3 + s.len() + 1;
    match mem.key {
        KeyLayout::SdsInDictEntry => match enc {
            "int" => ROBJ,
            "embstr" => a.size(ROBJ + embedded_value),
            _ => ROBJ + a.sds(s.len()),
        },
        KeyLayout::EmbeddedInObject => {
            // 8.1 decides with the key's header taken as 3 bytes (a longer one, type 8, can
            // make a 64-byte object 65: valkey#2087).
            let expire = valkey_key_bytes(key) - embedded_key(key.name.len());
            let decided = ROBJ + key.name.len() + 3 + expire + embedded_value;
            match enc {
                "int" => ROBJ,
                "embstr" if decided <= VALKEY_EMBED_LIMIT => {
                    a.size(ROBJ + valkey_key_bytes(key) + embedded_value)
                }
                _ => ROBJ + a.sds(s.len()),
            }
        }
        KeyLayout::EmbeddedCounted => {
            // The value replaces the robj's `ptr` (at least pointer-sized, to unembed it
            // later); values are embedded up to 128 bytes in all.
            let embedded = ROBJ - POINTER + valkey_key_bytes(key) + embedded_value.max(POINTER);
            // Integers stay text when they fit embedded (OBJECT ENCODING says embstr).
            match enc {
                _ if embedded <= 2 * VALKEY_EMBED_LIMIT => a.size(embedded),
                "int" => object_size(mem, key),
                _ => object_size(mem, key) + a.sds(s.len()),
            }
        }
    }
}

/// A score as a listpack stores it: `d2string`, the shortest text from 7.2 on (the profile's
/// double replies), 7.0's `%.17g` with integers as integers.
fn score_text(profile: &Profile, score: f64) -> String {
    match profile.double_replies {
        NumberFormat::ReplyDouble => profile.double_text(score),
        _ => d2string(score),
    }
}

/// `objectComputeSize` for the encoding the sandbox reports.
fn value_size(
    value: &mut Value,
    samples: usize,
    profile: &Profile,
    key: &KeyInfo,
    field_ttls_listpack: bool,
) -> usize {
    let enc = encoding(value);
    let mem = profile.memory;
    match value {
        Value::Str(s) => string_size(mem, key, s, enc),
        Value::List(list) => list_size(list, enc, samples),
        Value::Set(set) => set_size(set, enc, samples),
        Value::Hash(hash) => hash_size(hash, enc, samples, mem, key, field_ttls_listpack),
        Value::ZSet(zset) => zset_size(zset, enc, samples, profile, key),
        Value::Stream(stream) => stream_size(stream, samples, mem, key),
    }
}

/// A list: one listpack (7.2+) or quicklist nodes.
fn list_size(list: &mut ListValue, enc: &str, samples: usize) -> usize {
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

/// A set: an intset, a listpack (7.2+) or a dict.
fn set_size(set: &SetValue, enc: &str, samples: usize) -> usize {
    if enc == "intset" {
        // Each member takes the width of the widest one (2, 4 or 8 bytes).
        let width = set
            .iter()
            .filter_map(|m| crate::engine::number::parse_i64(m))
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
        let sizes = set.iter().map(|m| DICT_ENTRY + sds::exact(m.len()).bytes);
        add_sampled(base, sizes, samples, set.len())
    }
}

/// A hash: a listpack (with field TTLs: `listpackEx`), Valkey's hashtable or a dict.
fn hash_size(
    hash: &HashValue,
    enc: &str,
    samples: usize,
    mem: &MemoryLayout,
    key: &KeyInfo,
    field_ttls_listpack: bool,
) -> usize {
    let a = &mem.allocator;
    if enc == "listpack" && field_ttls_listpack {
        // `listpackEx`: its header, then a listpack of field, value and TTL (0: none).
        let bytes = LISTPACK_EMPTY
            + hash
                .iter()
                .map(|(f, v)| {
                    let ttl = hash.field_expire_at(f).unwrap_or(0).to_string();
                    lp_str(f) + lp_str(v) + lp_str(ttl.as_bytes())
                })
                .sum::<u64>();
        object_size(mem, key) + a.size(LISTPACK_EX) + a.size(bytes as usize)
    } else if enc == "listpack" {
        let elements = hash.iter().flat_map(|(f, v)| [f.as_slice(), v.as_slice()]);
        object_size(mem, key) + a.size(listpack_bytes(elements) as usize)
    } else if mem.hash_table == HashTableLayout::Hashtable {
        let base = object_size(mem, key) + hashtable_size(hash.len(), hash.converted_with());
        let sizes = hash.iter().map(|(f, v)| hashtable_entry(a, f, v));
        add_sampled(base, sizes, samples, hash.len())
    } else {
        let slots = converted_dict_slots(hash.len(), hash.converted_with());
        let base = ROBJ + DICT + POINTER * slots;
        let sizes = hash
            .iter()
            .map(|(f, v)| a.sds(f.len()) + a.sds(v.len()) + DICT_ENTRY);
        add_sampled(base, sizes, samples, hash.len())
    }
}

/// A sorted set: a listpack or a skiplist with its dict.
fn zset_size(
    zset: &ZSetValue,
    enc: &str,
    samples: usize,
    profile: &Profile,
    key: &KeyInfo,
) -> usize {
    let mem = profile.memory;
    let a = &mem.allocator;
    if enc == "listpack" {
        let bytes = LISTPACK_EMPTY
            + zset
                .iter()
                .map(|(m, score)| lp_str(m) + lp_str(score_text(profile, score).as_bytes()))
                .sum::<u64>();
        object_size(mem, key) + a.size(bytes as usize)
    } else {
        let header = ZSKIPLIST_NODE + ZSKIPLIST_LEVEL * ZSKIPLIST_MAXLEVEL;
        let base =
            ROBJ + ZSET + ZSKIPLIST + DICT + POINTER * dict_slots(zset.len()) + a.size(header);
        let node = a.size(ZSKIPLIST_NODE + ZSKIPLIST_LEVEL);
        let sizes = zset.iter().map(|(m, _)| a.sds(m.len()) + DICT_ENTRY + node);
        add_sampled(base, sizes, samples, zset.len())
    }
}

/// A stream: its listpack nodes (sampled), radix tree and consumer groups.
fn stream_size(
    stream: &mut StreamValue,
    samples: usize,
    mem: &MemoryLayout,
    key: &KeyInfo,
) -> usize {
    let a = &mem.allocator;
    let (nodes, rax_nodes) = stream.node_layout();
    let rax = match mem.rax {
        RaxAccounting::Estimate => {
            nodes.len() * STREAM_ID + rax_nodes * (RAX_NODE + RAX_NODE_OVERHEAD)
        }
        RaxAccounting::Allocated => rax_allocated(stream.node_first_ids(), a),
    };
    let mut asize = object_size(mem, key) + STREAM + rax;
    // A node is allocated with 4 KB of room and shrunk to fit when the next one starts.
    let last = nodes.len().saturating_sub(1);
    let alloc = |i: usize| {
        let bytes = nodes[i];
        let room = if i == last {
            bytes.max(STREAM_LISTPACK_PREALLOC)
        } else {
            bytes
        };
        a.size(room as usize)
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
    asize + stream_groups_size(stream, mem, samples)
}

/// Consumer groups in `objectComputeSize`: per group its struct, its PEL's radix tree
/// (`streamRadixTreeMemoryUsage`) and NACKs; per consumer its struct, name and PEL tree.
fn stream_groups_size(
    stream: &crate::engine::keyspace::StreamValue,
    mem: &MemoryLayout,
    samples: usize,
) -> usize {
    use crate::engine::keyspace::stream::id_rax_node_count;
    /// `sizeof(streamCG)`, `sizeof(streamNACK)`.
    const STREAM_CG: usize = 40;
    const STREAM_NACK: usize = 24;
    let tree = |ids: Vec<StreamId>| match mem.rax {
        RaxAccounting::Estimate => {
            let nodes = id_rax_node_count(ids.iter().copied());
            ids.len() * STREAM_ID + nodes * (RAX_NODE + RAX_NODE_OVERHEAD)
        }
        RaxAccounting::Allocated => rax_allocated(ids, &mem.allocator),
    };
    let consumer_size = |(name, c): (&Vec<u8>, &crate::engine::keyspace::stream::Consumer)| {
        mem.stream_consumer + name.len() + tree(c.pel.iter().copied().collect())
    };
    let group_size = |g: &crate::engine::keyspace::stream::ConsumerGroup, consumers: usize| {
        STREAM_CG + tree(g.pel.keys().copied().collect()) + STREAM_NACK * g.pel.len() + consumers
    };
    if !mem.stream_groups_sampled {
        return stream
            .groups
            .values()
            .map(|g| group_size(g, g.consumers.iter().map(consumer_size).sum()))
            .sum();
    }
    // Valkey: the first `samples` groups (in name order), each with the average of its first
    // `samples` consumers times their number, summed into an integer as C does.
    let mut sum = 0usize;
    let mut seen = 0usize;
    for g in stream.groups.values().take(samples) {
        let consumers = g.consumers.iter().map(consumer_size);
        sum += group_size(g, add_sampled(0, consumers, samples, g.consumers.len()));
        seen += 1;
    }
    if seen == 0 {
        return 0;
    }
    (sum as f64 / seen as f64 * stream.groups.len() as f64) as usize
}

/// `raxAllocSize` of a radix tree keyed by these stream IDs (ascending): the `rax` struct and
/// every node as `rax.c` lays it out (a 4-byte header, the chars padded to a pointer, one child
/// pointer for a compressed chain or one per char for a branch, and the value pointer of a
/// key). The shape follows from the keys: a branch where they differ, a compressed chain where
/// they agree, a childless key node at the end.
fn rax_allocated(ids: Vec<StreamId>, a: &Allocator) -> usize {
    /// `sizeof(rax)` with its allocation counter.
    const RAX: usize = 32;
    fn node(a: &Allocator, chars: usize, children: usize, key: bool) -> usize {
        let padding = (POINTER - (RAX_NODE + chars) % POINTER) % POINTER;
        a.size(RAX_NODE + chars + padding + POINTER * children + usize::from(key) * POINTER)
    }
    fn walk(a: &Allocator, keys: &[[u8; 16]], depth: usize) -> usize {
        if depth == 16 {
            return node(a, 0, 0, true);
        }
        let mut runs: Vec<&[[u8; 16]]> = Vec::new();
        let mut start = 0;
        for i in 1..=keys.len() {
            if i == keys.len() || keys[i][depth] != keys[start][depth] {
                runs.push(&keys[start..i]);
                start = i;
            }
        }
        if runs.len() > 1 {
            let children: usize = runs.iter().map(|run| walk(a, run, depth + 1)).sum();
            return node(a, runs.len(), runs.len(), false) + children;
        }
        let (first, last) = (keys[0], keys[keys.len() - 1]);
        let shared = (depth..16).take_while(|&d| first[d] == last[d]).count();
        node(a, shared, 1, false) + walk(a, keys, depth + shared)
    }
    let keys: Vec<[u8; 16]> = ids
        .iter()
        .map(|id| {
            let mut k = [0u8; 16];
            k[..8].copy_from_slice(&id.ms.to_be_bytes());
            k[8..].copy_from_slice(&id.seq.to_be_bytes());
            k
        })
        .collect();
    let nodes = if keys.is_empty() {
        node(a, 0, 0, false)
    } else {
        walk(a, &keys, 0)
    };
    a.size(RAX) + nodes
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
        let profile = ctx.profile;
        let mem = profile.memory;
        let redis_listpack_ex = ctx.profile.field_ttl == FieldTtlDialect::Redis;
        let db = ctx.db();
        if !db.raw_entries().contains_key(key.as_slice()) {
            return Ok(Reply::Nil);
        }
        let entry = db.entry_mut_any(key).expect("checked above");
        let key_info = KeyInfo {
            name: key,
            has_expire: entry.expire_at_ms.is_some(),
        };
        let field_ttls_listpack =
            redis_listpack_ex && matches!(&entry.value, Value::Hash(h) if h.had_field_ttls());
        let value = match (&entry.value, entry.raw) {
            // A raw string a command grew in place: its allocation (sds.rs).
            (Value::Str(_), Some(raw)) => ROBJ + raw.bytes,
            _ => value_size(
                &mut entry.value,
                samples,
                profile,
                &key_info,
                field_ttls_listpack,
            ),
        };
        // Redis adds the key's sds and its dict entry; Valkey's value embeds the key.
        let key_size = match mem.key {
            KeyLayout::SdsInDictEntry => mem.allocator.sds(key.len()) + DICT_ENTRY,
            KeyLayout::EmbeddedInObject | KeyLayout::EmbeddedCounted => 0,
        };
        Ok(Reply::Int((value + key_size) as i64))
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

    #[test]
    fn allocator_classes_per_build() {
        let sizes = [1, 9, 17, 21, 25, 41, 57, 65, 129];
        let q16 = Allocator::Jemalloc { quantum: 16 };
        let q8 = Allocator::Jemalloc { quantum: 8 };
        let got = |a: &Allocator| sizes.iter().map(|&n| a.size(n)).collect::<Vec<_>>();
        assert_eq!(got(&q16), [8, 16, 32, 32, 32, 48, 64, 80, 160]);
        assert_eq!(got(&q8), [8, 16, 24, 24, 32, 48, 64, 80, 160]);
        // glibc: 16-byte chunks with an 8-byte header, 32 at least.
        assert_eq!(
            got(&Allocator::Glibc),
            [24, 24, 24, 24, 40, 56, 72, 72, 136]
        );
    }

    #[test]
    fn rax_allocations() {
        let a = Allocator::Jemalloc { quantum: 16 };
        // Measured on Valkey 8.1: an empty tree (struct and root) and one key (a compressed
        // chain of 16 bytes and the key node).
        assert_eq!(rax_allocated(Vec::new(), &a), 40);
        assert_eq!(rax_allocated(vec![StreamId { ms: 1, seq: 1 }], &a), 80);
        // Two keys differing in the last byte: chain of 15, a branch of 2, two key nodes.
        let two = vec![StreamId { ms: 1, seq: 1 }, StreamId { ms: 1, seq: 2 }];
        assert_eq!(rax_allocated(two, &a), 32 + 32 + 32 + 2 * 16);
    }

    #[test]
    fn valkey_hash_entries() {
        let a = Allocator::Jemalloc { quantum: 16 };
        // Measured on Valkey 8.1: embedded up to 128 bytes, else the value on its own.
        assert_eq!(hashtable_entry(&a, b"f", b"v"), 8);
        assert_eq!(hashtable_entry(&a, b"a", &[b'x'; 120]), 128);
        assert_eq!(hashtable_entry(&a, b"a", &[b'x'; 125]), 176);
        assert_eq!(hashtable_entry(&a, &[b'f'; 100], &[b'x'; 65]), 192);
        // One bucket up to 7 entries; the 8th add (one by one) doubles it, both tables counting.
        assert_eq!(hashtable_size(1, Some(0)), 72 + 64);
        assert_eq!(hashtable_size(8, Some(0)), 72 + 3 * 64);
        assert_eq!(hashtable_size(9, Some(0)), 72 + 2 * 64);
    }
}
