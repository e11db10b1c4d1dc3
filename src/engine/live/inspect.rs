//! The engine side of the live keyspace inspector, safe on a production server: keys are found with
//! an incremental SCAN (never KEYS), a key is summarised with O(1) commands, and values are read a
//! page at a time on the server (HSCAN, SSCAN, ZRANGE/LRANGE windows, XRANGE by id, GETRANGE), never
//! whole.

use super::{ClusterNode, LiveBackend, LiveError};
use crate::engine::reply::Reply;

/// The COUNT hint `first_page` sends: enough work per call to find sparse matches quickly, little
/// enough that one SCAN call stays well under a millisecond on the server.
pub const FIRST_PAGE_SCAN_COUNT: usize = 1000;

/// The bytes or text of a bulk/status reply.
fn bytes(reply: Reply) -> Option<Vec<u8>> {
    match reply {
        Reply::Bulk(b) => Some(b),
        Reply::Status(s) => Some(s.into_bytes()),
        Reply::Verbatim { text, .. } => Some(text),
        _ => None,
    }
}

fn text(reply: Reply) -> Option<String> {
    bytes(reply).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// A flat list of bulk strings (RESP3 maps flattened to k1 v1 k2 v2 ...).
fn bulks(reply: Reply) -> Vec<Vec<u8>> {
    let items = match reply {
        Reply::Array(items) | Reply::Set(items) => items,
        Reply::Map(pairs) => pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(),
        _ => Vec::new(),
    };
    items.into_iter().filter_map(bytes).collect()
}

fn int(reply: &Reply) -> Option<i64> {
    match reply {
        Reply::Int(i) => Some(*i),
        Reply::Bulk(b) => std::str::from_utf8(b).ok()?.parse().ok(),
        _ => None,
    }
}

fn score(reply: Reply) -> Option<f64> {
    match reply {
        Reply::Double(d) => Some(d),
        other => text(other)?.parse().ok(),
    }
}

/// A server error reply becomes `LiveError::Server`; anything else passes through.
fn checked(reply: Reply) -> Result<Reply, LiveError> {
    match reply {
        Reply::Error(e) => Err(LiveError::Server(e)),
        other => Ok(other),
    }
}

/// `[cursor, [items...]]` of SCAN, HSCAN and SSCAN.
fn scan_reply(reply: Reply) -> Result<(Vec<u8>, Vec<Vec<u8>>), LiveError> {
    match checked(reply)? {
        Reply::Array(mut parts) if parts.len() == 2 => {
            let items = bulks(parts.pop().unwrap_or(Reply::Nil));
            let cursor = parts
                .pop()
                .and_then(bytes)
                .ok_or_else(|| LiveError::Server("scan reply without a cursor".into()))?;
            Ok((cursor, items))
        }
        other => Err(LiveError::Server(format!(
            "unexpected scan reply: {other:?}"
        ))),
    }
}

/// An incremental SCAN over the keyspace; each `step` is one SCAN call. On a cluster SCAN only sees
/// the keys of the node it is sent to: the masters are scanned in turn, each to the end of its cursor.
#[derive(Debug, Clone)]
pub struct KeyScan {
    pattern: Option<Vec<u8>>,
    type_filter: Option<String>,
    count: usize,
    /// The cursor on the node being scanned ("0": the node's scan starts, or the scan is over).
    cursor: Vec<u8>,
    calls: usize,
    returned: u64,
    /// Read once, on the first step, for "scanned N of DBSIZE" (on a cluster, summed over the masters).
    dbsize: Option<u64>,
    /// On a cluster: the masters (listed on the first step) and the index of the one being scanned;
    /// empty on a standalone server.
    nodes: Vec<ClusterNode>,
    node: usize,
}

impl KeyScan {
    pub fn new(pattern: Option<&[u8]>, type_filter: Option<&str>, count: usize) -> KeyScan {
        KeyScan {
            pattern: pattern.map(<[u8]>::to_vec),
            type_filter: type_filter.map(str::to_string),
            count: count.max(1),
            cursor: b"0".to_vec(),
            calls: 0,
            returned: 0,
            dbsize: None,
            nodes: Vec::new(),
            node: 0,
        }
    }

    /// One SCAN call; the keys it returned (SCAN may repeat a key across calls while the table
    /// rehashes: callers that need a set dedup).
    pub fn step(&mut self, live: &mut LiveBackend) -> Result<Vec<Vec<u8>>, LiveError> {
        if self.done() {
            return Ok(Vec::new());
        }
        if self.calls == 0 {
            self.dbsize = if live.server.cluster {
                self.nodes = live.cluster_masters()?;
                if self.nodes.is_empty() {
                    return Err(LiveError::Server(
                        "CLUSTER SLOTS lists no master: no slot of the cluster is served".into(),
                    ));
                }
                let mut total = Some(0);
                for node in &self.nodes {
                    let size = int(&live.command_on(node, &[b"DBSIZE"])?);
                    total = total.zip(size).map(|(t, n)| t + n.max(0) as u64);
                }
                total
            } else {
                int(&live.command(&[b"DBSIZE"])?).map(|n| n.max(0) as u64)
            };
        }
        let count = self.count.to_string();
        let mut args: Vec<&[u8]> = vec![b"SCAN", &self.cursor];
        if let Some(p) = &self.pattern {
            args.extend([b"MATCH".as_slice(), p]);
        }
        if let Some(t) = &self.type_filter {
            args.extend([b"TYPE".as_slice(), t.as_bytes()]);
        }
        args.extend([b"COUNT".as_slice(), count.as_bytes()]);
        let reply = match self.nodes.get(self.node) {
            Some(node) => live.command_on(node, &args)?,
            None => live.command(&args)?,
        };
        let (cursor, keys) = scan_reply(reply)?;
        if !self.nodes.is_empty() && cursor == b"0" {
            // This master is done: the next step starts on the next one.
            self.node += 1;
        }
        self.cursor = cursor;
        self.calls += 1;
        self.returned += keys.len() as u64;
        Ok(keys)
    }

    /// The cursor came back to 0 (on a cluster, on every master): every key present for the whole
    /// scan was returned.
    pub fn done(&self) -> bool {
        self.calls > 0 && self.cursor == b"0" && self.node >= self.nodes.len()
    }

    pub fn scanned_calls(&self) -> usize {
        self.calls
    }

    /// Keys returned so far and the DBSIZE read at the start.
    pub fn progress(&self) -> (u64, Option<u64>) {
        (self.returned, self.dbsize)
    }
}

/// The inspector's first screen: step until `want` keys, `max_calls` SCAN calls or the end. Returns
/// every key found (the last call may bring more than `want`; none is dropped) and the scan, to
/// continue from where it stopped.
pub fn first_page(
    live: &mut LiveBackend,
    pattern: Option<&[u8]>,
    type_filter: Option<&str>,
    want: usize,
    max_calls: usize,
) -> Result<(Vec<Vec<u8>>, KeyScan), LiveError> {
    let mut scan = KeyScan::new(pattern, type_filter, FIRST_PAGE_SCAN_COUNT);
    let mut keys = Vec::new();
    while keys.len() < want && scan.scanned_calls() < max_calls && !scan.done() {
        keys.extend(scan.step(live)?);
    }
    Ok((keys, scan))
}

/// What the key list shows for one key, from O(1) commands only.
#[derive(Debug, Clone, PartialEq)]
pub struct KeySummary {
    pub key: Vec<u8>,
    /// TYPE: string, list, set, zset, hash, stream (or a module type).
    pub kind: String,
    /// PTTL; None when the key has no expiry.
    pub ttl_ms: Option<i64>,
    /// Bytes of a string, elements of a collection; None for module types.
    pub size: Option<u64>,
    /// OBJECT ENCODING (None when denied).
    pub encoding: Option<String>,
    /// MEMORY USAGE key SAMPLES 5 (None when denied).
    pub memory_bytes: Option<u64>,
    /// On a cluster: the node that holds the key ("host:port"); None on a standalone server.
    pub node: Option<String>,
}

/// The O(1) size command of a type.
fn size_command(kind: &str) -> Option<&'static [u8]> {
    Some(match kind {
        "string" => b"STRLEN",
        "hash" => b"HLEN",
        "list" => b"LLEN",
        "set" => b"SCARD",
        "zset" => b"ZCARD",
        "stream" => b"XLEN",
        _ => return None,
    })
}

fn first_commands(key: &[u8]) -> [Vec<Vec<u8>>; 4] {
    [
        vec![b"TYPE".to_vec(), key.to_vec()],
        vec![b"PTTL".to_vec(), key.to_vec()],
        vec![b"OBJECT".to_vec(), b"ENCODING".to_vec(), key.to_vec()],
        vec![
            b"MEMORY".to_vec(),
            b"USAGE".to_vec(),
            key.to_vec(),
            b"SAMPLES".to_vec(),
            b"5".to_vec(),
        ],
    ]
}

/// A summary from the TYPE, PTTL, OBJECT ENCODING, MEMORY USAGE replies; None when the key is gone.
fn partial_summary(key: &[u8], replies: [Reply; 4]) -> Result<Option<KeySummary>, LiveError> {
    let [kind, ttl, encoding, memory] = replies;
    let kind = text(checked(kind)?).unwrap_or_default();
    let ttl = int(&checked(ttl)?);
    // TYPE "none" or PTTL -2: the key does not exist (or expired between the two).
    if kind == "none" || kind.is_empty() || ttl == Some(-2) {
        return Ok(None);
    }
    Ok(Some(KeySummary {
        key: key.to_vec(),
        kind,
        ttl_ms: ttl.filter(|t| *t >= 0),
        size: None,
        encoding: text(encoding),
        memory_bytes: int(&memory).map(|m| m.max(0) as u64),
        node: None,
    }))
}

/// Summarise one key by name (no scan needed); None if it does not exist.
pub fn summarize(live: &mut LiveBackend, key: &[u8]) -> Result<Option<KeySummary>, LiveError> {
    Ok(summarize_many(live, &[key.to_vec()])?.pop().flatten())
}

/// Summarise many keys in two round trips (TYPE/PTTL/ENCODING/MEMORY, then the type's size
/// command); one entry per key, None for keys that do not exist.
pub fn summarize_many(
    live: &mut LiveBackend,
    keys: &[Vec<u8>],
) -> Result<Vec<Option<KeySummary>>, LiveError> {
    let commands: Vec<Vec<Vec<u8>>> = keys.iter().flat_map(|k| first_commands(k)).collect();
    let mut replies = live.pipeline(&commands)?.into_iter();
    let mut summaries = Vec::with_capacity(keys.len());
    for key in keys {
        let mut next = || replies.next().unwrap_or(Reply::Nil);
        summaries.push(partial_summary(key, [next(), next(), next(), next()])?);
    }
    // The size needs the type: a second round trip for the keys that exist.
    let sized: Vec<(usize, Vec<Vec<u8>>)> = summaries
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let s = s.as_ref()?;
            Some((i, vec![size_command(&s.kind)?.to_vec(), s.key.clone()]))
        })
        .collect();
    let commands: Vec<Vec<Vec<u8>>> = sized.iter().map(|(_, c)| c.clone()).collect();
    let sizes = live.pipeline(&commands)?;
    for ((i, _), reply) in sized.into_iter().zip(sizes) {
        if let Some(s) = summaries[i].as_mut() {
            // A key deleted or retyped in between answers an error: the size stays unknown.
            s.size = int(&reply).map(|n| n.max(0) as u64);
        }
    }
    for s in summaries.iter_mut().flatten() {
        s.node = live.node_for_key(&s.key);
    }
    Ok(summaries)
}

/// Where a page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageCursor {
    Start,
    /// An HSCAN/SSCAN cursor.
    Scan(Vec<u8>),
    /// An index: list/zset element, or string byte offset.
    Index(u64),
    /// A stream page starts after this id (exclusive).
    After(Vec<u8>),
}

/// One row of a page.
#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    Field {
        field: Vec<u8>,
        value: Vec<u8>,
    },
    Member(Vec<u8>),
    Scored {
        member: Vec<u8>,
        score: f64,
    },
    Item {
        index: u64,
        value: Vec<u8>,
    },
    Entry {
        id: Vec<u8>,
        fields: Vec<(Vec<u8>, Vec<u8>)>,
    },
    /// A slice of a string starting at `offset`.
    Bytes {
        offset: u64,
        data: Vec<u8>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub rows: Vec<Row>,
    /// Where the next page starts; None when this was the last.
    pub next: Option<PageCursor>,
    /// For strings: the total STRLEN ("first N of M bytes").
    pub total: Option<u64>,
}

fn pairs(flat: Vec<Vec<u8>>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = flat.into_iter();
    let mut out = Vec::new();
    while let (Some(a), Some(b)) = (it.next(), it.next()) {
        out.push((a, b));
    }
    out
}

/// Read one page of a key of type `kind` (as TYPE names it) on the server: `count` rows (bytes for
/// a string), from `cursor`.
pub fn page(
    live: &mut LiveBackend,
    key: &[u8],
    kind: &str,
    cursor: PageCursor,
    count: usize,
) -> Result<Page, LiveError> {
    // Never 0: an LRANGE window 0..-1 would be the whole list.
    let count = count.max(1);
    let n = count.to_string();
    let start = match &cursor {
        PageCursor::Index(i) => *i,
        _ => 0,
    };
    let stop = (start + count as u64 - 1).to_string();
    let start_text = start.to_string();
    let mut total = None;
    let rows = match kind {
        "hash" | "set" => {
            let scan_cursor = match &cursor {
                PageCursor::Scan(c) => c.clone(),
                _ => b"0".to_vec(),
            };
            let command: &[u8] = if kind == "hash" { b"HSCAN" } else { b"SSCAN" };
            let (next, items) =
                scan_reply(live.command(&[command, key, &scan_cursor, b"COUNT", n.as_bytes()])?)?;
            let rows = if kind == "hash" {
                pairs(items)
                    .into_iter()
                    .map(|(field, value)| Row::Field { field, value })
                    .collect()
            } else {
                items.into_iter().map(Row::Member).collect()
            };
            let next = (next != b"0").then_some(PageCursor::Scan(next));
            return Ok(Page { rows, next, total });
        }
        "list" => {
            let reply = checked(live.command(&[
                b"LRANGE",
                key,
                start_text.as_bytes(),
                stop.as_bytes(),
            ])?)?;
            bulks(reply)
                .into_iter()
                .zip(start..)
                .map(|(value, index)| Row::Item { index, value })
                .collect::<Vec<_>>()
        }
        "zset" => {
            let reply = checked(live.command(&[
                b"ZRANGE",
                key,
                start_text.as_bytes(),
                stop.as_bytes(),
                b"WITHSCORES",
            ])?)?;
            zset_rows(reply)
        }
        "stream" => {
            let from = match &cursor {
                PageCursor::After(id) => [b"(".as_slice(), id].concat(),
                _ => b"-".to_vec(),
            };
            let reply =
                checked(live.command(&[b"XRANGE", key, &from, b"+", b"COUNT", n.as_bytes()])?)?;
            let rows = stream_rows(reply);
            let next = match rows.last() {
                Some(Row::Entry { id, .. }) if rows.len() == count => {
                    Some(PageCursor::After(id.clone()))
                }
                _ => None,
            };
            return Ok(Page { rows, next, total });
        }
        "string" => {
            let len = int(&checked(live.command(&[b"STRLEN", key])?)?).unwrap_or(0);
            total = Some(len.max(0) as u64);
            let data = bytes(checked(live.command(&[
                b"GETRANGE",
                key,
                start_text.as_bytes(),
                stop.as_bytes(),
            ])?)?)
            .unwrap_or_default();
            let end = start + data.len() as u64;
            let rows = vec![Row::Bytes {
                offset: start,
                data,
            }];
            let next = (end < len.max(0) as u64).then_some(PageCursor::Index(end));
            return Ok(Page { rows, next, total });
        }
        other => {
            return Err(LiveError::Server(format!(
                "the inspector cannot page a key of type '{other}'"
            )))
        }
    };
    // Index windows: a short window is the last one.
    let next = (rows.len() == count).then_some(PageCursor::Index(start + count as u64));
    Ok(Page { rows, next, total })
}

/// Types whose elements the server can search with a MATCH glob (HSCAN, SSCAN, ZSCAN).
pub fn searchable(kind: &str) -> bool {
    matches!(kind, "hash" | "set" | "zset")
}

/// One page of a search inside a key: a single HSCAN/SSCAN/ZSCAN call with MATCH
/// `pattern` and COUNT `count` (the elements the server examines, not the matches: a page may hold
/// none and still not be the last). Fields for a hash, members for a set, members with their scores
/// for a sorted set.
pub fn page_matching(
    live: &mut LiveBackend,
    key: &[u8],
    kind: &str,
    cursor: PageCursor,
    count: usize,
    pattern: &[u8],
) -> Result<Page, LiveError> {
    let command: &[u8] = match kind {
        "hash" => b"HSCAN",
        "set" => b"SSCAN",
        "zset" => b"ZSCAN",
        other => {
            return Err(LiveError::Server(format!(
                "a search inside a key works on hashes, sets and sorted sets (HSCAN, SSCAN, ZSCAN MATCH); '{}' is a {other}",
                String::from_utf8_lossy(key)
            )))
        }
    };
    let scan_cursor = match &cursor {
        PageCursor::Scan(c) => c.clone(),
        _ => b"0".to_vec(),
    };
    let n = count.max(1).to_string();
    let (next, items) = scan_reply(live.command(&[
        command,
        key,
        &scan_cursor,
        b"MATCH",
        pattern,
        b"COUNT",
        n.as_bytes(),
    ])?)?;
    let rows = match kind {
        "hash" => pairs(items)
            .into_iter()
            .map(|(field, value)| Row::Field { field, value })
            .collect(),
        "zset" => pairs(items)
            .into_iter()
            .filter_map(|(member, s)| {
                let score = std::str::from_utf8(&s).ok()?.parse().ok()?;
                Some(Row::Scored { member, score })
            })
            .collect(),
        _ => items.into_iter().map(Row::Member).collect(),
    };
    let next = (next != b"0").then_some(PageCursor::Scan(next));
    Ok(Page {
        rows,
        next,
        total: None,
    })
}

/// ZRANGE WITHSCORES: RESP2 flat member score ..., RESP3 [[member, score], ...].
fn zset_rows(reply: Reply) -> Vec<Row> {
    let Reply::Array(items) = reply else {
        return Vec::new();
    };
    let mut flat = Vec::new();
    for item in items {
        match item {
            Reply::Array(pair) => flat.extend(pair),
            other => flat.push(other),
        }
    }
    let mut it = flat.into_iter();
    let mut rows = Vec::new();
    while let (Some(member), Some(s)) = (it.next(), it.next()) {
        if let (Some(member), Some(score)) = (bytes(member), score(s)) {
            rows.push(Row::Scored { member, score });
        }
    }
    rows
}

/// XRANGE: [[id, [field, value, ...]], ...].
fn stream_rows(reply: Reply) -> Vec<Row> {
    let Reply::Array(entries) = reply else {
        return Vec::new();
    };
    entries
        .into_iter()
        .filter_map(|entry| {
            let Reply::Array(mut parts) = entry else {
                return None;
            };
            if parts.len() != 2 {
                return None;
            }
            let fields = pairs(bulks(parts.pop()?));
            let id = bytes(parts.pop()?)?;
            Some(Row::Entry { id, fields })
        })
        .collect()
}
