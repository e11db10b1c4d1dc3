//! Set values. Redis 7.0 keeps a set of integers (at most `set-max-intset-entries`, 512) as an
//! intset, which iterates in ascending numeric order; any other set is a hash table whose order is
//! effectively random. We keep numeric order while the set would be an intset and insertion order
//! once it became a hash table (it never goes back, as in Redis).

use crate::engine::commands::number::parse_i64;
use indexmap::IndexSet;

/// Redis's default `set-max-intset-entries`.
pub const MAX_INTSET_ENTRIES: usize = 512;

/// Above this size a removal may move the last member into the hole (O(1)) instead of shifting
/// every later member (O(n)); such a set is a hash table in Redis, whose order is random anyway.
const ORDERED_REMOVE_LIMIT: usize = 1024;

#[derive(Debug, Clone, PartialEq)]
pub struct SetValue {
    members: IndexSet<Vec<u8>>,
    /// Still an intset: every member is a canonical integer and there are at most 512 of them;
    /// `members` is then sorted numerically.
    intset: bool,
}

impl Default for SetValue {
    fn default() -> Self {
        // An empty set is created as an intset (`createIntsetObject`); the first non-integer
        // member converts it.
        SetValue {
            members: IndexSet::new(),
            intset: true,
        }
    }
}

impl SetValue {
    pub fn new() -> SetValue {
        SetValue::default()
    }
    pub fn len(&self) -> usize {
        self.members.len()
    }
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
    pub fn contains(&self, member: &[u8]) -> bool {
        self.members.contains(member)
    }
    /// Whether Redis would hold this set as an intset (numeric iteration order).
    pub fn is_intset(&self) -> bool {
        self.intset
    }
    /// Returns true when the member was added.
    pub fn insert(&mut self, member: Vec<u8>) -> bool {
        if self.members.contains(&member) {
            return false;
        }
        if self.intset {
            if let Some(v) = parse_i64(&member) {
                if self.members.len() < MAX_INTSET_ENTRIES {
                    let pos = self.members.as_slice().partition_point(|m| int_of(m) < v);
                    self.members.shift_insert(pos, member);
                    return true;
                }
            }
            // A non-integer member or one too many: a hash table for good.
            self.intset = false;
        }
        self.members.insert(member)
    }
    /// Returns true when the member was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        if self.intset || self.members.len() <= ORDERED_REMOVE_LIMIT {
            self.members.shift_remove(member)
        } else {
            self.members.swap_remove(member)
        }
    }
    /// Members in the order Redis would iterate them.
    pub fn iter(&self) -> impl Iterator<Item = &Vec<u8>> {
        self.members.iter()
    }
    /// The member at `index` of the iteration order (for random picks and scans).
    pub fn get_index(&self, index: usize) -> Option<&Vec<u8>> {
        self.members.get_index(index)
    }
}

/// The value of an intset member (always canonical, so parsing cannot fail).
fn int_of(member: &[u8]) -> i64 {
    parse_i64(member).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(s: &SetValue) -> Vec<&str> {
        s.iter().map(|m| std::str::from_utf8(m).unwrap()).collect()
    }

    #[test]
    fn intset_is_numeric_order() {
        let mut s = SetValue::new();
        for m in ["10", "-3", "2", "2", "9223372036854775807"] {
            s.insert(m.as_bytes().to_vec());
        }
        assert!(s.is_intset());
        assert_eq!(members(&s), ["-3", "2", "10", "9223372036854775807"]);
        assert!(s.remove(b"2"));
        assert_eq!(members(&s), ["-3", "10", "9223372036854775807"]);
    }

    #[test]
    fn non_integer_converts_for_good() {
        let mut s = SetValue::new();
        for m in ["3", "1", "01", "2"] {
            s.insert(m.as_bytes().to_vec());
        }
        assert!(!s.is_intset());
        assert_eq!(members(&s), ["1", "3", "01", "2"]);
        s.remove(b"01");
        assert!(!s.is_intset());
    }

    #[test]
    fn growing_past_512_converts() {
        let mut s = SetValue::new();
        for i in (0..512).rev() {
            s.insert(i.to_string().into_bytes());
        }
        assert!(s.is_intset());
        assert_eq!(s.get_index(0).map(|m| m.as_slice()), Some(&b"0"[..]));
        s.insert(b"1000".to_vec());
        assert!(!s.is_intset());
        assert_eq!(s.len(), 513);
        assert_eq!(s.get_index(512).map(|m| m.as_slice()), Some(&b"1000"[..]));
    }
}
