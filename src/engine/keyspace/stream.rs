//! Stream values: entries by ID, plus the metadata XADD/XTRIM/XDEL maintain.

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
    /// Parse a complete `ms-seq` (or `ms`, seq 0) ID.
    pub fn parse(text: &str) -> Option<StreamId> {
        let (ms, seq) = match text.split_once('-') {
            Some((ms, seq)) => (ms.parse().ok()?, seq.parse().ok()?),
            None => (text.parse().ok()?, 0),
        };
        Some(StreamId { ms, seq })
    }
}

pub type StreamFields = Vec<(Vec<u8>, Vec<u8>)>;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamValue {
    pub entries: BTreeMap<StreamId, StreamFields>,
    pub last_id: StreamId,
    pub max_deleted_id: StreamId,
    pub entries_added: u64,
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
}
