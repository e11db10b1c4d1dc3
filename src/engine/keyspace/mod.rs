//! The data model: databases of keys holding typed values with an optional expiry.
//! Knows nothing of Lua or RESP; the command handlers in `commands/` work on it.

pub mod hash; // per-field TTLs
pub mod json;
pub mod list; // listpack or quicklist
pub mod set;
pub mod stream;
mod stream_json; // the "stream" member of the keyspace JSON
pub mod zset;

use rustc_hash::FxHashMap;

pub use hash::{HashValue, TtlOrder};
pub use json::{keyspace_from_json, keyspace_from_json_value, keyspace_to_json, KeyspaceJsonError};
pub use list::ListValue;
pub use set::SetValue;
pub use stream::{StreamId, StreamValue};
pub use zset::ZSetValue;

/// Number of databases, as Redis's default `databases 16`.
pub const DATABASES: usize = 16;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(Vec<u8>),
    Hash(HashValue),
    List(ListValue),
    Set(SetValue),
    ZSet(ZSetValue),
    Stream(StreamValue),
}

impl Value {
    /// The name `TYPE` answers.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::Hash(_) => "hash",
            Value::List(_) => "list",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
            Value::Stream(_) => "stream",
        }
    }

    /// About how many bytes the value holds (its strings plus a per-element overhead), for the
    /// memory budget's estimate of what a command may copy. O(n) for a collection.
    pub fn approx_bytes(&self) -> usize {
        const PER_ELEMENT: usize = 48;
        let sum = |it: &mut dyn Iterator<Item = usize>| it.map(|n| n + PER_ELEMENT).sum::<usize>();
        match self {
            Value::Str(s) => s.len(),
            Value::Hash(h) => sum(&mut h.iter().map(|(k, v)| k.len() + v.len())),
            Value::List(l) => sum(&mut l.iter().map(Vec::len)),
            Value::Set(s) => sum(&mut s.iter().map(Vec::len)),
            Value::ZSet(z) => sum(&mut z.iter().map(|(m, _)| m.len() + 8)),
            Value::Stream(s) => sum(&mut s.entries.values().map(|f| {
                f.iter()
                    .map(|(k, v)| k.len() + v.len() + PER_ELEMENT)
                    .sum::<usize>()
            })),
        }
    }

    /// Number of elements (string: bytes), for the inspector.
    pub fn size(&self) -> usize {
        match self {
            Value::Str(s) => s.len(),
            Value::Hash(h) => h.len(),
            Value::List(l) => l.len(),
            Value::Set(s) => s.len(),
            Value::ZSet(z) => z.len(),
            Value::Stream(s) => s.len(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub value: Value,
    /// Absolute expiry time in Unix milliseconds.
    pub expire_at_ms: Option<i64>,
    /// A string Redis holds `raw` whatever its length (grown in place by APPEND, SETRANGE,
    /// SETBIT, BITFIELD; made by BITOP, PFADD): its sds allocation, for OBJECT ENCODING and
    /// MEMORY USAGE (commands/sds.rs). None: the encoding follows from the bytes.
    pub raw: Option<RawSds>,
    /// How the string object was built, for OBJECT ENCODING on Valkey (profile's `StringRules`).
    pub built: StringBuild,
}

/// What Valkey's string encoding depends on beyond the bytes: it embeds the key (and
/// an expire field) with the value, and a script's arguments reach the keyspace as they are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StringBuild {
    /// Stored from a script's argument (SET, MSET, ...): Valkey 9 does not int-encode it.
    pub from_argument: bool,
    /// Built while the key had a TTL (the object got an expire field).
    pub with_expire_field: bool,
    /// The key has had a TTL since the value was built (Valkey 8.1 re-embeds the value with an
    /// expire field then, which PERSIST does not take away).
    pub had_ttl: bool,
}

/// The allocation of a raw string's sds (Redis 7.0 `sds.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawSds {
    /// Bytes of the allocation (header, content, spare room, terminator): `zmalloc_size`.
    pub bytes: usize,
    /// Content bytes it holds without growing (`sdsalloc`).
    pub capacity: usize,
}

/// Entries are equal by what a script can read; the raw mark is how Redis stores it.
impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value && self.expire_at_ms == other.expire_at_ms
    }
}

/// One logical database.
#[derive(Debug, Clone, Default)]
pub struct Db {
    // Fx: keys are hashed on every command; SipHash showed up at 8% of a run's instructions.
    entries: FxHashMap<Vec<u8>, Entry>,
    purge: PurgeHint,
}

/// What lets `purge_expired` skip its pass over every key (a run on a seed of 200,000 keys spent
/// ~3 ms there): the soonest expiry the last pass left, and whether an entry may have changed since.
#[derive(Debug, Clone, Copy, Default)]
struct PurgeHint {
    /// An entry was handed out for writing or inserted since the last pass (it may have a TTL now).
    changed: bool,
    /// The soonest key or field expiry among the entries the last pass kept.
    next_expiry_ms: Option<i64>,
}

/// Equal entries make equal databases (the purge hint is bookkeeping).
impl PartialEq for Db {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl Db {
    pub fn new() -> Db {
        Db::default()
    }

    fn is_live(entry: &Entry, now_ms: i64) -> bool {
        entry.expire_at_ms.is_none_or(|t| t > now_ms)
            // A hash whose every field expired is gone (field TTLs).
            && match &entry.value {
                Value::Hash(h) if h.has_field_ttls() => h.has_live_field(now_ms),
                _ => true,
            }
    }

    /// Drop `key` if it expired at `now_ms`; afterwards plain lookups see only live keys.
    pub fn expire_if_needed(&mut self, key: &[u8], now_ms: i64) {
        if let Some(e) = self.entries.get(key) {
            if !Self::is_live(e, now_ms) {
                self.entries.remove(key);
            }
        }
    }

    /// Drop every expired key; returns the number of entries looked at (0: nothing can have
    /// expired since the last pass, and this one was skipped).
    pub fn purge_expired(&mut self, now_ms: i64) -> usize {
        let hint = self.purge;
        if !hint.changed && hint.next_expiry_ms.is_none_or(|at| at > now_ms) {
            return 0;
        }
        let looked_at = self.entries.len();
        // One pass: a live key stays, minus its expired hash fields.
        let mut next_expiry_ms: Option<i64> = None;
        let mut sooner = |at: Option<i64>| {
            if let Some(at) = at {
                next_expiry_ms = Some(next_expiry_ms.map_or(at, |n| n.min(at)));
            }
        };
        self.entries.retain(|_, e| {
            let live = Self::is_live(e, now_ms);
            if live {
                sooner(e.expire_at_ms);
                if let Value::Hash(h) = &mut e.value {
                    h.purge_expired(now_ms);
                    sooner(h.earliest_field_expiry());
                }
            }
            live
        });
        self.purge = PurgeHint {
            changed: false,
            next_expiry_ms,
        };
        looked_at
    }

    pub fn get(&self, key: &[u8], now_ms: i64) -> Option<&Entry> {
        self.entries.get(key).filter(|e| Self::is_live(e, now_ms))
    }

    pub fn get_mut(&mut self, key: &[u8], now_ms: i64) -> Option<&mut Entry> {
        self.expire_if_needed(key, now_ms);
        self.purge.changed = true;
        self.entries.get_mut(key)
    }

    pub fn contains(&self, key: &[u8], now_ms: i64) -> bool {
        self.get(key, now_ms).is_some()
    }

    /// Insert or replace the value, clearing any expiry (as SET does).
    pub fn set(&mut self, key: Vec<u8>, value: Value) {
        self.set_built(key, value, None, StringBuild::default());
    }

    /// Insert or replace the value with this expiry. `built.with_expire_field` is set when the
    /// key had a TTL: the server builds the new object with the old expire before changing it.
    pub fn set_built(
        &mut self,
        key: Vec<u8>,
        value: Value,
        expire_at_ms: Option<i64>,
        mut built: StringBuild,
    ) {
        built.had_ttl |= expire_at_ms.is_some();
        self.purge.changed = true;
        match self.entries.entry(key) {
            std::collections::hash_map::Entry::Occupied(mut slot) => {
                let entry = slot.get_mut();
                built.with_expire_field |= entry.expire_at_ms.is_some();
                *entry = Entry {
                    value,
                    expire_at_ms,
                    raw: None,
                    built,
                };
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(Entry {
                    value,
                    expire_at_ms,
                    raw: None,
                    built,
                });
            }
        }
    }

    /// Replace the value and keep the key's expiry (as SETRANGE/APPEND/... do).
    pub fn set_keep_ttl(&mut self, key: Vec<u8>, value: Value, now_ms: i64) {
        self.set_keep_ttl_built(key, value, now_ms, StringBuild::default());
    }

    /// `set_keep_ttl` for a value built as `built` says.
    pub fn set_keep_ttl_built(
        &mut self,
        key: Vec<u8>,
        value: Value,
        now_ms: i64,
        built: StringBuild,
    ) {
        let expire_at_ms = self.get(&key, now_ms).and_then(|e| e.expire_at_ms);
        self.purge.changed = true;
        self.entries.insert(
            key,
            Entry {
                value,
                expire_at_ms,
                raw: None,
                built: StringBuild {
                    with_expire_field: built.with_expire_field || expire_at_ms.is_some(),
                    had_ttl: built.had_ttl || expire_at_ms.is_some(),
                    ..built
                },
            },
        );
    }

    pub fn insert_entry(&mut self, key: Vec<u8>, entry: Entry) {
        self.purge.changed = true;
        self.entries.insert(key, entry);
    }

    pub fn remove(&mut self, key: &[u8], now_ms: i64) -> Option<Entry> {
        // One lookup: an expired key is removed all the same, and reported as absent.
        self.entries
            .remove(key)
            .filter(|e| Self::is_live(e, now_ms))
    }

    pub fn set_expire(&mut self, key: &[u8], at_ms: Option<i64>) {
        self.purge.changed = true;
        if let Some(e) = self.entries.get_mut(key) {
            e.expire_at_ms = at_ms;
            e.built.had_ttl |= at_ms.is_some();
        }
    }

    /// Live keys, unordered.
    pub fn keys(&self, now_ms: i64) -> impl Iterator<Item = &Vec<u8>> {
        self.entries
            .iter()
            .filter(move |(_, e)| Self::is_live(e, now_ms))
            .map(|(k, _)| k)
    }

    /// Live keys in byte order (deterministic for SCAN, KEYS and dumps).
    pub fn sorted_keys(&self, now_ms: i64) -> Vec<Vec<u8>> {
        let mut keys: Vec<Vec<u8>> = self.keys(now_ms).cloned().collect();
        keys.sort();
        keys
    }

    pub fn len(&self, now_ms: i64) -> usize {
        self.keys(now_ms).count()
    }

    /// Keys held, expired ones not yet reclaimed included: what Redis's DBSIZE counts (a script
    /// that gives a key a past expiry leaves it counted until something looks it up).
    pub fn held(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Remove a collection key that became empty (Redis deletes empty aggregates).
    pub fn remove_if_empty(&mut self, key: &[u8]) {
        if self.entries.get(key).is_some_and(|e| {
            e.value.size() == 0 && !matches!(e.value, Value::Str(_) | Value::Stream(_))
        }) {
            self.entries.remove(key);
        }
    }

    /// The entry of `key` even past its expiry (MEMORY USAGE reads the table as it is).
    pub fn entry_mut_any(&mut self, key: &[u8]) -> Option<&mut Entry> {
        self.purge.changed = true;
        self.entries.get_mut(key)
    }

    pub fn raw_entries(&self) -> &FxHashMap<Vec<u8>, Entry> {
        &self.entries
    }

    /// Give every set and list the encoding one SADD / RPUSH of its elements (in their order)
    /// gives it on a server with listpack collections (7.2+): what seeding that server does.
    /// Nothing changes without them (7.0: the values already are as seeded).
    pub fn encode_as_seeded(&mut self, listpack: Option<crate::engine::profile::ListpackLimits>) {
        if listpack.is_none() {
            return;
        }
        self.purge.changed = true;
        for entry in self.entries.values_mut() {
            match &mut entry.value {
                Value::Set(s) => {
                    let members: Vec<Vec<u8>> = s.iter().cloned().collect();
                    *s = SetValue::created_by_sadd(members.into_iter(), listpack);
                }
                Value::List(l) => {
                    let items = std::mem::take(&mut **l);
                    *l = ListValue::created_by_rpush(items, listpack);
                }
                _ => {}
            }
        }
    }
}

/// All databases of one server.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyspace {
    pub dbs: Vec<Db>,
}

impl Default for Keyspace {
    fn default() -> Self {
        Keyspace {
            dbs: (0..DATABASES).map(|_| Db::new()).collect(),
        }
    }
}

impl Keyspace {
    pub fn new() -> Keyspace {
        Keyspace::default()
    }
    pub fn db(&self, index: usize) -> &Db {
        &self.dbs[index]
    }
    pub fn db_mut(&mut self, index: usize) -> &mut Db {
        &mut self.dbs[index]
    }

    /// Reclaim every expired key, as Redis's active expiry does between commands; returns the
    /// number of entries looked at.
    pub fn purge_expired(&mut self, now_ms: i64) -> usize {
        self.dbs.iter_mut().map(|db| db.purge_expired(now_ms)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db_with(keys: &[(&str, Option<i64>)]) -> Db {
        let mut db = Db::new();
        for (key, expire_at_ms) in keys {
            let value = Value::Str(b"v".to_vec());
            db.set_built(
                key.as_bytes().to_vec(),
                value,
                *expire_at_ms,
                StringBuild::default(),
            );
        }
        db
    }

    fn names(db: &Db) -> Vec<String> {
        let mut keys: Vec<String> = db
            .raw_entries()
            .keys()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        keys.sort();
        keys
    }

    #[test]
    fn a_purge_with_nothing_changed_and_nothing_due_looks_at_no_key() {
        let mut db = db_with(&[("a", None), ("b", Some(2_000)), ("c", None)]);
        assert_eq!(db.purge_expired(1_000), 3);
        assert_eq!(
            db.purge_expired(1_500),
            0,
            "nothing was written, b is not due"
        );
        assert_eq!(
            db.get(b"a", 1_500).map(|e| e.value.size()),
            Some(1),
            "a read"
        );
        assert_eq!(db.purge_expired(1_999), 0, "a read changes nothing");
        assert_eq!(names(&db), ["a", "b", "c"]);
        // b's expiry comes due: the pass runs and reclaims it.
        assert_eq!(db.purge_expired(2_000), 3);
        assert_eq!(names(&db), ["a", "c"]);
        assert_eq!(db.purge_expired(1_000_000), 0, "no key has a TTL left");
    }

    #[test]
    fn a_ttl_given_after_a_pass_is_seen_by_the_next_one() {
        let mut db = db_with(&[("a", None), ("b", None)]);
        assert_eq!(db.purge_expired(1_000), 2);
        // Through a handed-out entry (as EXPIRE's code does), then through set_expire.
        db.get_mut(b"a", 1_000).unwrap().expire_at_ms = Some(1_500);
        assert_eq!(
            db.purge_expired(1_200),
            2,
            "an entry was handed out for writing"
        );
        assert_eq!(db.purge_expired(1_400), 0);
        assert_eq!(db.purge_expired(1_500), 2);
        assert_eq!(names(&db), ["b"]);
        db.set_expire(b"b", Some(1_600));
        assert_eq!(db.purge_expired(1_600), 1);
        assert!(db.is_empty());
    }

    #[test]
    fn a_hash_field_ttl_coming_due_runs_the_pass() {
        let mut hash = HashValue::new();
        hash.set_value(b"f".to_vec(), b"1".to_vec(), false, TtlOrder::Unchanged);
        hash.set_value(b"g".to_vec(), b"2".to_vec(), false, TtlOrder::Unchanged);
        hash.set_field_expire(b"f", 3_000, TtlOrder::Unchanged);
        let mut db = Db::new();
        db.set(b"h".to_vec(), Value::Hash(hash));
        assert_eq!(db.purge_expired(2_000), 1);
        assert_eq!(db.purge_expired(2_999), 0);
        assert_eq!(db.purge_expired(3_000), 1, "field f comes due");
        let Value::Hash(h) = &db.get(b"h", 3_000).unwrap().value else {
            panic!("a hash")
        };
        assert_eq!(h.live_fields(3_000).count(), 1);
        assert_eq!(db.purge_expired(10_000), 0, "no field has a TTL left");
    }

    #[test]
    fn a_copied_database_purges_as_the_original() {
        let mut db = db_with(&[("a", Some(5_000))]);
        db.purge_expired(1_000);
        let mut copy = db.clone();
        assert_eq!(copy, db);
        assert_eq!(copy.purge_expired(4_999), 0);
        assert_eq!(copy.purge_expired(5_000), 1);
        assert!(copy.is_empty());
    }
}
