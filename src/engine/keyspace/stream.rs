//! Stream values: entries by ID, plus the metadata XADD/XTRIM/XDEL maintain.
//!
//! Besides the entries, a stream remembers how Redis would have split it into listpack nodes
//! (`streamAppendItem`): approximate trimming (`MAXLEN ~`, `MINID ~`) only drops whole nodes, so
//! its result depends on where the node boundaries fall.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

impl std::fmt::Display for StreamId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

impl StreamId {
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    /// Parse a complete `ms-seq` (or `ms`, seq 0) ID.
    pub fn parse(text: &str) -> Option<StreamId> {
        let (ms, seq) = match text.split_once('-') {
            Some((ms, seq)) => (ms.parse().ok()?, seq.parse().ok()?),
            None => (text.parse().ok()?, 0),
        };
        Some(StreamId { ms, seq })
    }

    /// The next ID (`streamIncrID`); `None` past the last possible ID.
    pub fn incr(self) -> Option<StreamId> {
        match (self.ms, self.seq) {
            (u64::MAX, u64::MAX) => None,
            (ms, u64::MAX) => Some(StreamId { ms: ms + 1, seq: 0 }),
            (ms, seq) => Some(StreamId { ms, seq: seq + 1 }),
        }
    }

    /// The previous ID (`streamDecrID`); `None` before 0-0.
    pub fn decr(self) -> Option<StreamId> {
        match (self.ms, self.seq) {
            (0, 0) => None,
            (ms, 0) => Some(StreamId {
                ms: ms - 1,
                seq: u64::MAX,
            }),
            (ms, seq) => Some(StreamId { ms, seq: seq - 1 }),
        }
    }
}

pub type StreamFields = Vec<(Vec<u8>, Vec<u8>)>;

/// Redis's default `stream-node-max-entries` and `stream-node-max-bytes`.
pub const NODE_MAX_ENTRIES: u64 = 100;
pub const NODE_MAX_BYTES: u64 = 4096;

/// One listpack node as Redis keeps it: enough to know when it is full and what it holds.
#[derive(Debug, Clone, Default)]
pub struct StreamNode {
    /// Field names of the master entry (the node's first entry).
    pub master_fields: Vec<Vec<u8>>,
    /// Live entries and entries flagged deleted but still in the listpack.
    pub live: u64,
    pub deleted: u64,
    /// `lpBytes` of the listpack.
    pub bytes: u64,
    /// Last ID written to the node, deleted or not (`lpGetEdgeStreamID`).
    pub last: StreamId,
}

#[derive(Debug, Clone, Default)]
pub struct StreamValue {
    pub entries: BTreeMap<StreamId, StreamFields>,
    pub last_id: StreamId,
    pub max_deleted_id: StreamId,
    pub entries_added: u64,
    /// Listpack nodes by master ID. Rebuilt from `entries` (as consecutive XADDs would build
    /// them) whenever they are out of step, e.g. for a stream loaded from JSON.
    nodes: BTreeMap<StreamId, StreamNode>,
    nodes_live: usize,
    /// Consumer groups by name, in byte order as Redis's radix tree lists them.
    pub groups: BTreeMap<Vec<u8>, ConsumerGroup>,
}

/// `SCG_INVALID_ENTRIES_READ`: a group whose read counter is unknown.
pub const ENTRIES_READ_UNKNOWN: i64 = -1;

/// A consumer group (`streamCG`): its last delivered ID, its logical read counter, the pending
/// entries (delivered, not yet acknowledged) and its consumers.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsumerGroup {
    pub last_id: StreamId,
    pub entries_read: i64,
    pub pel: BTreeMap<StreamId, PendingEntry>,
    pub consumers: BTreeMap<Vec<u8>, Consumer>,
}

/// A pending entry (`streamNACK`): who has it, when it was last delivered (run clock, ms) and
/// how many times.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingEntry {
    pub consumer: Vec<u8>,
    pub delivery_time: i64,
    pub delivery_count: u64,
}

/// A consumer (`streamConsumer`): when it was last seen and the IDs it has pending.
#[derive(Debug, Clone, PartialEq)]
pub struct Consumer {
    pub seen_time: i64,
    /// When it last got an entry (7.2's `active_time`, XINFO CONSUMERS `inactive`); -1: never.
    pub active_time: i64,
    pub pel: std::collections::BTreeSet<StreamId>,
}

impl ConsumerGroup {
    pub fn new(last_id: StreamId, entries_read: i64) -> ConsumerGroup {
        ConsumerGroup {
            last_id,
            entries_read,
            pel: BTreeMap::new(),
            consumers: BTreeMap::new(),
        }
    }
}

/// Streams compare by content; the node layout is bookkeeping.
impl PartialEq for StreamValue {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
            && self.last_id == other.last_id
            && self.max_deleted_id == other.max_deleted_id
            && self.entries_added == other.entries_added
            && self.groups == other.groups
    }
}

/// Trimming request (`streamAddTrimArgs`).
#[derive(Debug, Clone, Copy)]
pub enum TrimStrategy {
    MaxLen(u64),
    MinId(StreamId),
}

impl StreamValue {
    pub fn new() -> StreamValue {
        StreamValue::default()
    }
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `lpBytes` of each listpack node in ID order, and the node count of the radix tree that
    /// indexes them by master ID (for MEMORY USAGE).
    pub fn node_layout(&mut self) -> (Vec<u64>, usize) {
        self.sync_nodes();
        let bytes = self.nodes.values().map(|n| n.bytes).collect();
        let keys: Vec<[u8; 16]> = self
            .nodes
            .keys()
            .map(|id| {
                let mut k = [0u8; 16];
                k[..8].copy_from_slice(&id.ms.to_be_bytes());
                k[8..].copy_from_slice(&id.seq.to_be_bytes());
                k
            })
            .collect();
        (bytes, rax_node_count(&keys))
    }

    /// The first ID of each listpack node: the keys of the stream's radix tree.
    pub fn node_first_ids(&mut self) -> Vec<StreamId> {
        self.sync_nodes();
        self.nodes.keys().copied().collect()
    }

    fn sync_nodes(&mut self) {
        if self.nodes_live == self.entries.len() {
            return;
        }
        self.nodes.clear();
        self.nodes_live = 0;
        // Take the entries out while the nodes are rebuilt, to avoid copying them.
        let entries = std::mem::take(&mut self.entries);
        for (id, fields) in &entries {
            self.place(*id, fields);
        }
        self.entries = entries;
    }

    /// Account for an entry appended to the tail node (or a new node), as `streamAppendItem` does.
    fn place(&mut self, id: StreamId, fields: &StreamFields) {
        let totelelen: u64 = fields.iter().map(|(f, v)| (f.len() + v.len()) as u64).sum();
        let tail_full = self.nodes.last_key_value().is_none_or(|(_, n)| {
            n.bytes + totelelen >= NODE_MAX_BYTES || n.live + n.deleted >= NODE_MAX_ENTRIES
        });
        if tail_full {
            let master_fields: Vec<Vec<u8>> = fields.iter().map(|(f, _)| f.clone()).collect();
            // Header + end byte, then count, deleted, num-fields, fields, master terminator.
            let mut bytes = 7 + 3 * lp_int(0) + lp_int(fields.len() as i64);
            bytes += master_fields.iter().map(|f| lp_str(f)).sum::<u64>();
            let node = StreamNode {
                master_fields,
                live: 0,
                deleted: 0,
                bytes,
                last: id,
            };
            self.nodes.insert(id, node);
        }
        let Some((master, node)) = self.nodes.iter_mut().next_back() else {
            return;
        };
        let same = node.master_fields.len() == fields.len()
            && node
                .master_fields
                .iter()
                .zip(fields)
                .all(|(m, (f, _))| *m == *f);
        let n = fields.len() as i64;
        let mut bytes = lp_int(2)
            + lp_int(id.ms.wrapping_sub(master.ms) as i64)
            + lp_int(id.seq.wrapping_sub(master.seq) as i64);
        let lp_count = if same {
            bytes += fields.iter().map(|(_, v)| lp_str(v)).sum::<u64>();
            n + 3
        } else {
            bytes += lp_int(n)
                + fields
                    .iter()
                    .map(|(f, v)| lp_str(f) + lp_str(v))
                    .sum::<u64>();
            2 * n + 4
        };
        bytes += lp_int(lp_count);
        node.bytes += bytes;
        node.live += 1;
        node.last = id;
        self.nodes_live += 1;
    }

    /// Append an entry whose ID is greater than `last_id` (checked by the caller).
    pub fn append(&mut self, id: StreamId, fields: StreamFields) {
        self.sync_nodes();
        self.place(id, &fields);
        self.entries.insert(id, fields);
        self.last_id = id;
        self.entries_added += 1;
    }

    /// XDEL of one ID: true when it existed.
    pub fn delete(&mut self, id: StreamId) -> bool {
        self.sync_nodes();
        if self.entries.remove(&id).is_none() {
            return false;
        }
        self.nodes_live -= 1;
        if let Some((&master, node)) = self.nodes.range_mut(..=id).next_back() {
            if node.live <= 1 {
                self.nodes.remove(&master);
            } else {
                node.live -= 1;
                node.deleted += 1;
            }
        }
        if id > self.max_deleted_id {
            self.max_deleted_id = id;
        }
        true
    }

    /// `streamTrim`: whole nodes from the head, then (unless `approx`) single entries of the
    /// first node that survives. `limit` 0 means no limit. Returns the number of entries removed.
    pub fn trim(&mut self, strategy: TrimStrategy, approx: bool, limit: u64) -> u64 {
        self.sync_nodes();
        let mut deleted = 0u64;
        while let Some((&master, node)) = self.nodes.first_key_value() {
            let len = self.entries.len() as u64;
            if let TrimStrategy::MaxLen(max) = strategy {
                if len <= max {
                    break;
                }
            }
            let live = node.live;
            if limit != 0 && deleted + live > limit {
                break;
            }
            let remove_node = match strategy {
                TrimStrategy::MaxLen(max) => len - live >= max,
                TrimStrategy::MinId(min) => node.last < min,
            };
            let next = self.nodes.range(master..).nth(1).map(|(k, _)| *k);
            let ids: Vec<StreamId> = match next {
                Some(next) => self.entries.range(master..next).map(|(k, _)| *k).collect(),
                None => self.entries.range(master..).map(|(k, _)| *k).collect(),
            };
            if remove_node {
                for id in &ids {
                    self.entries.remove(id);
                }
                self.nodes.remove(&master);
                self.nodes_live -= ids.len();
                deleted += live;
                continue;
            }
            if approx {
                break;
            }
            let mut removed = 0u64;
            for id in ids {
                let stop = match strategy {
                    TrimStrategy::MaxLen(max) => self.entries.len() as u64 <= max,
                    TrimStrategy::MinId(min) => id >= min,
                };
                if stop {
                    break;
                }
                self.entries.remove(&id);
                removed += 1;
            }
            // Flagged entries stay in the listpack: a node may be left with no live entry.
            if let Some(node) = self.nodes.get_mut(&master) {
                node.live -= removed;
                node.deleted += removed;
            }
            self.nodes_live -= removed as usize;
            deleted += removed;
            break;
        }
        deleted
    }
}

/// Size of a listpack entry of `len` encoded bytes, with its back-length.
fn lp_entry(len: u64) -> u64 {
    let backlen = match len {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    };
    len + backlen
}

/// Nodes of a radix tree (`rax.c`) holding these sorted, distinct, equal-length keys: the root,
/// each child of a branching point, and each key or branching point ending a compressed chain.
/// The node count of a radix tree keyed by these stream IDs (a consumer group's or consumer's
/// pending entries list, for MEMORY USAGE).
pub fn id_rax_node_count(ids: impl Iterator<Item = StreamId>) -> usize {
    let keys: Vec<[u8; 16]> = ids
        .map(|id| {
            let mut k = [0u8; 16];
            k[..8].copy_from_slice(&id.ms.to_be_bytes());
            k[8..].copy_from_slice(&id.seq.to_be_bytes());
            k
        })
        .collect();
    rax_node_count(&keys)
}

fn rax_node_count(keys: &[[u8; 16]]) -> usize {
    if keys.is_empty() {
        return 1;
    }
    // Children of the trie node shared by keys[lo..hi] at `depth`: runs of equal bytes.
    fn walk(keys: &[[u8; 16]], depth: usize, parent_branches: bool) -> usize {
        if depth == 16 {
            // A key: its own node unless it is the child of a branch (counted there already).
            return usize::from(!parent_branches);
        }
        let mut runs = Vec::new();
        let mut start = 0;
        for i in 1..=keys.len() {
            if i == keys.len() || keys[i][depth] != keys[start][depth] {
                runs.push(&keys[start..i]);
                start = i;
            }
        }
        let branches = runs.len() > 1;
        // A branching node ending a chain is a node of its own; the children of a branch are too.
        let own = usize::from(branches && !parent_branches);
        let children: usize = runs
            .iter()
            .map(|run| usize::from(branches) + walk(run, depth + 1, branches))
            .sum();
        own + children
    }
    // The root is always a node (compressed or branching).
    1 + walk(keys, 0, true)
}

fn lp_int(v: i64) -> u64 {
    let enc = match v {
        0..=127 => 1,
        -4096..=4095 => 2,
        -32768..=32767 => 3,
        -8_388_608..=8_388_607 => 4,
        -2_147_483_648..=2_147_483_647 => 5,
        _ => 9,
    };
    lp_entry(enc)
}

/// A string element: stored as an integer when it is one by `string2ll` rules.
pub fn lp_str(s: &[u8]) -> u64 {
    if s.len() < 21 {
        if let Some(v) = string2ll(s) {
            return lp_int(v);
        }
    }
    let len = s.len() as u64;
    lp_entry(match len {
        0..=63 => 1 + len,
        64..=4095 => 2 + len,
        _ => 5 + len,
    })
}

/// Redis `string2ll` (no `+`, no leading zeros or spaces).
fn string2ll(s: &[u8]) -> Option<i64> {
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty()
        || !(b'1'..=b'9').contains(&digits[0])
        || !digits.iter().all(u8::is_ascii_digit)
    {
        return None;
    }
    let v: u64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    if neg {
        (v <= i64::MAX as u64 + 1).then(|| (v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fv() -> StreamFields {
        vec![(b"f".to_vec(), b"v".to_vec())]
    }

    /// A stream loaded with bare entries (as from JSON) gets the nodes consecutive XADDs build.
    #[test]
    fn nodes_rebuilt_for_loaded_entries() {
        let mut s = StreamValue::new();
        for i in 1..=250 {
            s.entries.insert(StreamId { ms: i, seq: 0 }, fv());
            s.last_id = StreamId { ms: i, seq: 0 };
        }
        assert_eq!(s.trim(TrimStrategy::MaxLen(10), true, 0), 200);
        assert_eq!(s.trim(TrimStrategy::MaxLen(10), false, 0), 40);
        assert_eq!(s.len(), 10);
        s.append(StreamId { ms: 300, seq: 0 }, fv());
        assert!(s.delete(StreamId { ms: 300, seq: 0 }));
        assert!(!s.delete(StreamId { ms: 300, seq: 0 }));
        assert_eq!(s.max_deleted_id, StreamId { ms: 300, seq: 0 });
        // The node's last ID counts deleted entries too (checked on Redis 7.0.15).
        let min = |ms| TrimStrategy::MinId(StreamId { ms, seq: 0 });
        assert_eq!(s.trim(min(251), true, 0), 0);
        assert_eq!(s.trim(min(301), true, 0), 10);
        assert!(s.is_empty());
    }

    #[test]
    fn listpack_sizes() {
        assert_eq!(lp_str(b"127"), 2);
        assert_eq!(lp_str(b"128"), 3);
        assert_eq!(lp_str(b"007"), 5);
        assert_eq!(lp_str(&[b'x'; 63]), 65);
        assert_eq!(lp_str(&[b'x'; 64]), 67);
        assert_eq!(lp_int(i64::MIN), 10);
        assert_eq!(StreamId::MAX.incr(), None);
        assert_eq!(StreamId::default().decr(), None);
    }
}
