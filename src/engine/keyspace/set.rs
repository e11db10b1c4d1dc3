//! Set values. Redis 7.0 keeps a set of integers (at most `set-max-intset-entries`, 512) as an
//! intset, which iterates in ascending numeric order; any other set is a hash table whose order is
//! effectively random. 7.2 and later keep a small set that is not all integers as a listpack
//! (`t_set.c`): appended at the end, a removal closes the gap, iterated in that order. We keep
//! numeric order for an intset, listpack order for a listpack, and insertion order once the set
//! became a hash table (it never goes back by itself, as in Redis).

use crate::engine::number::parse_i64;
use crate::engine::profile::ListpackLimits;
use indexmap::IndexSet;

/// Redis's default `set-max-intset-entries`.
pub const MAX_INTSET_ENTRIES: usize = 512;

/// Above this size a removal may move the last member into the hole (O(1)) instead of shifting
/// every later member (O(n)); such a set is a hash table in Redis, whose order is random anyway.
const ORDERED_REMOVE_LIMIT: usize = 1024;

/// How Redis holds a set (OBJECT ENCODING).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetEncoding {
    Intset,
    Listpack,
    Hashtable,
}

impl SetEncoding {
    pub fn name(self) -> &'static str {
        match self {
            SetEncoding::Intset => "intset",
            SetEncoding::Listpack => "listpack",
            SetEncoding::Hashtable => "hashtable",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SetValue {
    members: IndexSet<Vec<u8>>,
    /// An intset keeps `members` sorted numerically (every member a canonical integer).
    encoding: SetEncoding,
}

impl Default for SetValue {
    fn default() -> Self {
        // An empty set is created as an intset (`createIntsetObject`); the first non-integer
        // member converts it.
        SetValue::with_encoding(SetEncoding::Intset)
    }
}

impl SetValue {
    pub fn new() -> SetValue {
        SetValue::default()
    }
    /// An empty set of this encoding (`createIntsetObject`, `createSetListpackObject`, ...).
    pub fn with_encoding(encoding: SetEncoding) -> SetValue {
        SetValue {
            members: IndexSet::new(),
            encoding,
        }
    }
    /// `setTypeCreate`: the set SADD (with `size_hint` members), SMOVE (1) ... create for a
    /// first member `first`. 7.0 has no listpack and no hint.
    pub fn create(first: &[u8], size_hint: usize, listpack: Option<ListpackLimits>) -> SetValue {
        let integer = parse_i64(first).is_some();
        let encoding = match listpack {
            None if integer => SetEncoding::Intset,
            None => SetEncoding::Hashtable,
            Some(_) if integer && size_hint <= MAX_INTSET_ENTRIES => SetEncoding::Intset,
            Some(lp) if size_hint <= lp.set_max_entries => SetEncoding::Listpack,
            Some(_) => SetEncoding::Hashtable,
        };
        SetValue::with_encoding(encoding)
    }
    /// The set one SADD of all these members (in this order) creates: what seeding a server does.
    pub fn created_by_sadd(
        members: impl ExactSizeIterator<Item = Vec<u8>>,
        listpack: Option<ListpackLimits>,
    ) -> SetValue {
        let mut members = members.peekable();
        let hint = members.len();
        let mut set = match members.peek() {
            Some(first) => SetValue::create(first, hint, listpack),
            None => SetValue::new(),
        };
        for m in members {
            set.insert(m, listpack);
        }
        set
    }
    /// `setTypeMaybeConvert` (7.2+): SADD of `size_hint` members to an existing set converts a
    /// set that could not hold that many to a hash table first, added or not.
    pub fn maybe_convert(&mut self, size_hint: usize, listpack: Option<ListpackLimits>) {
        let Some(lp) = listpack else { return };
        let too_many = match self.encoding {
            SetEncoding::Listpack => size_hint > lp.set_max_entries,
            SetEncoding::Intset => size_hint > MAX_INTSET_ENTRIES,
            SetEncoding::Hashtable => false,
        };
        if too_many {
            self.encoding = SetEncoding::Hashtable;
        }
    }
    /// `maybeConvertToIntset`: a set known to hold only integers becomes an intset again when
    /// it is small enough (SINTERSTORE's result).
    pub fn convert_to_intset_if_fits(&mut self) {
        if self.encoding == SetEncoding::Intset || self.members.len() > MAX_INTSET_ENTRIES {
            return;
        }
        self.members.sort_by_cached_key(|m| int_of(m));
        self.encoding = SetEncoding::Intset;
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
    pub fn encoding(&self) -> SetEncoding {
        self.encoding
    }
    /// Whether Redis would hold this set as an intset (numeric iteration order).
    pub fn is_intset(&self) -> bool {
        self.encoding == SetEncoding::Intset
    }
    /// Returns true when the member was added (`setTypeAddAux`).
    pub fn insert(&mut self, member: Vec<u8>, listpack: Option<ListpackLimits>) -> bool {
        if self.members.contains(&member) {
            return false;
        }
        match self.encoding {
            SetEncoding::Hashtable => {}
            SetEncoding::Listpack => {
                let fits = listpack.is_some_and(|lp| {
                    self.members.len() < lp.set_max_entries && member.len() <= lp.set_max_value
                });
                if !fits {
                    self.encoding = SetEncoding::Hashtable;
                }
            }
            SetEncoding::Intset => {
                if let Some(v) = parse_i64(&member) {
                    if self.members.len() < MAX_INTSET_ENTRIES {
                        let pos = self.members.as_slice().partition_point(|m| int_of(m) < v);
                        self.members.shift_insert(pos, member);
                        return true;
                    }
                    // One too many: a hash table for good.
                    self.encoding = SetEncoding::Hashtable;
                } else {
                    // A non-integer: a listpack (its integers in order, then the newcomer)
                    // when the set is small enough, else a hash table.
                    let fits = listpack.is_some_and(|lp| {
                        self.members.len() < lp.set_max_entries && member.len() <= lp.set_max_value
                    });
                    self.encoding = if fits {
                        SetEncoding::Listpack
                    } else {
                        SetEncoding::Hashtable
                    };
                }
            }
        }
        self.members.insert(member)
    }
    /// Returns true when the member was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        if self.encoding != SetEncoding::Hashtable || self.members.len() <= ORDERED_REMOVE_LIMIT {
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
            s.insert(m.as_bytes().to_vec(), None);
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
            s.insert(m.as_bytes().to_vec(), None);
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
            s.insert(i.to_string().into_bytes(), None);
        }
        assert!(s.is_intset());
        assert_eq!(s.get_index(0).map(|m| m.as_slice()), Some(&b"0"[..]));
        s.insert(b"1000".to_vec(), None);
        assert!(!s.is_intset());
        assert_eq!(s.len(), 513);
        assert_eq!(s.get_index(512).map(|m| m.as_slice()), Some(&b"1000"[..]));
    }

    const LP: Option<ListpackLimits> = Some(crate::engine::profile::LISTPACK_DEFAULTS);

    /// 7.2+: an intset takes a string as a listpack (its integers first, in order), a listpack
    /// appends and closes gaps, and turns into a hash table past 128 members or 64 bytes.
    #[test]
    fn listpack_between_intset_and_hashtable() {
        let mut s = SetValue::create(b"3", 3, LP);
        for m in ["3", "1", "b", "a"] {
            s.insert(m.as_bytes().to_vec(), LP);
        }
        assert_eq!(s.encoding(), SetEncoding::Listpack);
        assert_eq!(members(&s), ["1", "3", "b", "a"]);
        s.remove(b"3");
        s.insert(b"0".to_vec(), LP);
        assert_eq!(members(&s), ["1", "b", "a", "0"]);
        s.insert(vec![b'x'; 65], LP);
        assert_eq!(s.encoding(), SetEncoding::Hashtable);

        let mut full = SetValue::create(b"m", 1, LP);
        for i in 0..128 {
            full.insert(format!("m{i}").into_bytes(), LP);
        }
        assert_eq!(full.encoding(), SetEncoding::Listpack);
        full.insert(b"one more".to_vec(), LP);
        assert_eq!(full.encoding(), SetEncoding::Hashtable);
    }

    /// SADD's size hint: 129 new members make a hash table at once; an existing listpack
    /// converts before the members are added, new or not.
    #[test]
    fn size_hints_decide_the_first_encoding() {
        assert_eq!(
            SetValue::create(b"a", 128, LP).encoding(),
            SetEncoding::Listpack
        );
        assert_eq!(
            SetValue::create(b"a", 129, LP).encoding(),
            SetEncoding::Hashtable
        );
        assert_eq!(
            SetValue::create(b"1", 512, LP).encoding(),
            SetEncoding::Intset
        );
        assert_eq!(
            SetValue::create(b"1", 513, LP).encoding(),
            SetEncoding::Hashtable
        );
        assert_eq!(
            SetValue::create(b"a", 1, None).encoding(),
            SetEncoding::Hashtable
        );
        let mut s = SetValue::create(b"a", 1, LP);
        s.insert(b"a".to_vec(), LP);
        s.maybe_convert(129, LP);
        assert_eq!(s.encoding(), SetEncoding::Hashtable);
        let mut ints =
            SetValue::created_by_sadd(["2", "1"].map(|m| m.as_bytes().to_vec()).into_iter(), LP);
        ints.insert(b"x".to_vec(), LP);
        ints.remove(b"x");
        ints.convert_to_intset_if_fits();
        assert_eq!(ints.encoding(), SetEncoding::Intset);
        assert_eq!(members(&ints), ["1", "2"]);
    }
}
