//! Set values. Redis 7.0 keeps a set of integers (at most `set-max-intset-entries`, 512) as an
//! intset, which iterates in ascending numeric order; any other set is a hash table whose order is
//! effectively random. We keep insertion order for hash-table sets and numeric order for intsets,
//! so that small integer sets reply exactly as Redis does.

use indexmap::IndexSet;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SetValue {
    members: IndexSet<Vec<u8>>,
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
    /// Returns true when the member was added.
    pub fn insert(&mut self, member: Vec<u8>) -> bool {
        self.members.insert(member)
    }
    /// Returns true when the member was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        self.members.shift_remove(member)
    }
    /// Members in the order Redis would iterate them.
    pub fn iter(&self) -> impl Iterator<Item = &Vec<u8>> {
        self.members.iter()
    }
}
