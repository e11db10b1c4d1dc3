//! A hash value: fields in order, and (Redis 7.4 and later, Valkey 9) an optional expiry time
//! per field. The fields dereference to an `IndexMap`, so readers use it as a map; the writers
//! that must keep the per-field TTLs right (set, delete, expire, persist) are methods here.

use indexmap::IndexMap;
use rustc_hash::FxHashMap;
use std::ops::{Deref, DerefMut};

/// Field order of a small Redis hash (listpack) is insertion order; we keep it for every size.
#[derive(Debug, Clone, Default)]
pub struct HashValue {
    fields: IndexMap<Vec<u8>, Vec<u8>>,
    /// Absolute expiry (Unix ms) of the fields that have one; `None` until a field gets a TTL,
    /// so a hash without field TTLs costs one word.
    expires: Option<Box<FxHashMap<Vec<u8>, i64>>>,
    /// Redis converted it to a hash table: once past the listpack limits it stays one,
    /// whatever is deleted later. The number of fields it then had sized the table (MEMORY USAGE).
    converted_with: Option<u32>,
}

/// Redis's defaults (7.0.15 as installed): `hash-max-listpack-entries`, `hash-max-listpack-value`.
pub const LISTPACK_MAX_ENTRIES: usize = 512;
pub const LISTPACK_MAX_VALUE: usize = 64;

/// Where a field whose TTL changed goes: Redis keeps a small hash with field TTLs as a listpack
/// ordered by expiry (fields with a TTL first, soonest first; the others after, in order);
/// Valkey keeps such a hash in a hash table, whose order no model can follow, so it stays put.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TtlOrder {
    ByExpiry,
    Unchanged,
}

impl PartialEq for HashValue {
    fn eq(&self, other: &Self) -> bool {
        self.fields == other.fields && self.ttls() == other.ttls()
    }
}

impl Deref for HashValue {
    type Target = IndexMap<Vec<u8>, Vec<u8>>;
    fn deref(&self) -> &Self::Target {
        &self.fields
    }
}

impl DerefMut for HashValue {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.fields
    }
}

impl FromIterator<(Vec<u8>, Vec<u8>)> for HashValue {
    fn from_iter<I: IntoIterator<Item = (Vec<u8>, Vec<u8>)>>(iter: I) -> Self {
        HashValue {
            fields: iter.into_iter().collect(),
            expires: None,
            converted_with: None,
        }
    }
}

impl<'a> IntoIterator for &'a HashValue {
    type Item = (&'a Vec<u8>, &'a Vec<u8>);
    type IntoIter = indexmap::map::Iter<'a, Vec<u8>, Vec<u8>>;
    fn into_iter(self) -> Self::IntoIter {
        self.fields.iter()
    }
}

impl HashValue {
    pub fn new() -> HashValue {
        HashValue::default()
    }

    /// Field TTLs of present fields, sorted by field (for comparison and dumps).
    pub fn ttls(&self) -> Vec<(&Vec<u8>, i64)> {
        let mut out: Vec<(&Vec<u8>, i64)> = match &self.expires {
            None => Vec::new(),
            Some(map) => map
                .iter()
                .filter(|(f, _)| self.fields.contains_key(*f))
                .map(|(f, at)| (f, *at))
                .collect(),
        };
        out.sort();
        out
    }

    /// Whether a field ever had a TTL (the server's encoding changes for good: OBJECT ENCODING).
    pub fn had_field_ttls(&self) -> bool {
        self.expires.is_some()
    }

    pub fn has_field_ttls(&self) -> bool {
        self.expires.as_ref().is_some_and(|m| !m.is_empty())
    }

    /// The soonest field expiry (Unix ms), if a field has a TTL.
    pub fn earliest_field_expiry(&self) -> Option<i64> {
        self.expires.as_ref()?.values().copied().min()
    }

    /// The absolute expiry of `field` (Unix ms), if it has one.
    pub fn field_expire_at(&self, field: &[u8]) -> Option<i64> {
        self.expires.as_ref()?.get(field).copied()
    }

    /// `hashTypeSet`'s conversion, after writing `field` = `value`: a field or value longer than
    /// a listpack takes, or one field too many, makes it a hash table for good.
    pub fn note_write(&mut self, field: &[u8], value: &[u8]) {
        if field.len() > LISTPACK_MAX_VALUE
            || value.len() > LISTPACK_MAX_VALUE
            || self.fields.len() > LISTPACK_MAX_ENTRIES
        {
            self.converted_with
                .get_or_insert(self.fields.len().try_into().unwrap_or(u32::MAX));
        }
    }

    /// The number of fields the hash had when a write converted it to a hash table.
    pub fn converted_with(&self) -> Option<usize> {
        self.converted_with.map(|n| n as usize)
    }

    /// Whether Redis holds it as a hash table: converted once, or (a value built otherwise, a
    /// seed) past the limits now.
    pub fn is_hashtable(&self) -> bool {
        self.converted_with.is_some()
            || self.fields.len() > LISTPACK_MAX_ENTRIES
            || self
                .fields
                .iter()
                .any(|(f, v)| f.len() > LISTPACK_MAX_VALUE || v.len() > LISTPACK_MAX_VALUE)
    }

    /// Set or replace a field's value. `keep_ttl` (HINCRBY, HINCRBYFLOAT) keeps the field's
    /// TTL; otherwise (HSET) an existing field loses it, as on the server. True if new.
    pub fn set_value(
        &mut self,
        field: Vec<u8>,
        value: Vec<u8>,
        keep_ttl: bool,
        order: TtlOrder,
    ) -> bool {
        self.note_write(&field, &value);
        if !keep_ttl && self.field_expire_at(&field).is_some() {
            self.fields.insert(field.clone(), value);
            self.persist(&field, order);
            return false;
        }
        let new = self.fields.insert(field, value).is_none();
        self.note_write(b"", b"");
        new
    }

    /// Remove a field and its TTL; `ordered` keeps the others in order (O(n)).
    pub fn remove_field(&mut self, field: &[u8], ordered: bool) -> Option<Vec<u8>> {
        if let Some(map) = &mut self.expires {
            map.remove(field);
        }
        if ordered {
            self.fields.shift_remove(field)
        } else {
            self.fields.swap_remove(field)
        }
    }

    /// Give a present field an expiry.
    pub fn set_field_expire(&mut self, field: &[u8], at_ms: i64, order: TtlOrder) {
        let Some(index) = self.fields.get_index_of(field) else {
            return;
        };
        self.expires
            .get_or_insert_with(Default::default)
            .insert(field.to_vec(), at_ms);
        if order == TtlOrder::ByExpiry {
            // Redis re-inserts the field before the first field without a TTL or with a TTL
            // at or past the new one.
            let (f, v) = self.fields.shift_remove_index(index).expect("present");
            let expires = self.expires.as_ref().expect("just set");
            let to = self
                .fields
                .keys()
                .position(|k| expires.get(k).is_none_or(|&t| t >= at_ms))
                .unwrap_or(self.fields.len());
            self.fields.shift_insert(to, f, v);
        }
    }

    /// Drop a field's TTL; true if it had one. Redis moves it after every other field.
    pub fn persist(&mut self, field: &[u8], order: TtlOrder) -> bool {
        let had = self
            .expires
            .as_mut()
            .is_some_and(|m| m.remove(field).is_some());
        if had && order == TtlOrder::ByExpiry {
            if let Some(index) = self.fields.get_index_of(field) {
                let (f, v) = self.fields.shift_remove_index(index).expect("present");
                self.fields.insert(f, v);
            }
        }
        had
    }

    /// Delete the fields whose expiry is at or before `now_ms` (Redis deletes them lazily or in
    /// its active expiry; the sandbox does it before a command reads the hash). Returns how many.
    pub fn purge_expired(&mut self, now_ms: i64) -> usize {
        let Some(map) = &mut self.expires else {
            return 0;
        };
        let expired: Vec<Vec<u8>> = map
            .iter()
            .filter(|(_, &at)| at <= now_ms)
            .map(|(f, _)| f.clone())
            .collect();
        for f in &expired {
            map.remove(f);
            self.fields.shift_remove(f);
        }
        expired.len()
    }

    /// Whether any field is still live at `now_ms`.
    pub fn has_live_field(&self, now_ms: i64) -> bool {
        match &self.expires {
            None => !self.fields.is_empty(),
            Some(map) => self
                .fields
                .keys()
                .any(|f| map.get(f).is_none_or(|&at| at > now_ms)),
        }
    }

    /// The live fields at `now_ms`, in order (dumps and the inspector).
    pub fn live_fields(&self, now_ms: i64) -> impl Iterator<Item = (&Vec<u8>, &Vec<u8>)> {
        self.fields
            .iter()
            .filter(move |(f, _)| self.field_expire_at(f).is_none_or(|at| at > now_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(fields: &[&str]) -> HashValue {
        fields
            .iter()
            .map(|f| (f.as_bytes().to_vec(), b"v".to_vec()))
            .collect()
    }

    fn order(h: &HashValue) -> Vec<String> {
        h.keys()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect()
    }

    /// The order Redis 7.4.1 gave HGETALL after these steps (listpackEx ordering).
    #[test]
    fn redis_orders_fields_by_expiry() {
        let mut h = hash(&["a", "b", "c"]);
        h.set_field_expire(b"a", 100, TtlOrder::ByExpiry);
        assert_eq!(order(&h), ["a", "b", "c"]);
        h.set_field_expire(b"b", 100, TtlOrder::ByExpiry);
        assert_eq!(order(&h), ["b", "a", "c"]);
        h.set_field_expire(b"a", 50, TtlOrder::ByExpiry);
        h.set_field_expire(b"b", 50, TtlOrder::ByExpiry);
        assert_eq!(order(&h), ["b", "a", "c"]);
        assert!(h.persist(b"b", TtlOrder::ByExpiry));
        assert_eq!(order(&h), ["a", "c", "b"]);
        assert!(!h.set_value(b"a".to_vec(), b"w".to_vec(), false, TtlOrder::ByExpiry));
        assert_eq!(order(&h), ["c", "b", "a"]);
        assert!(!h.has_field_ttls());
    }

    #[test]
    fn expired_fields_are_purged_and_ttls_follow_deletes() {
        let mut h = hash(&["a", "b"]);
        h.set_field_expire(b"a", 10, TtlOrder::Unchanged);
        assert!(h.has_live_field(10));
        assert_eq!(h.live_fields(10).count(), 1);
        h.remove_field(b"a", true);
        h.insert(b"a".to_vec(), b"v".to_vec());
        assert_eq!(h.field_expire_at(b"a"), None);
        h.set_field_expire(b"b", 5, TtlOrder::Unchanged);
        assert_eq!(h.purge_expired(5), 1);
        assert_eq!(order(&h), ["a"]);
    }
}
