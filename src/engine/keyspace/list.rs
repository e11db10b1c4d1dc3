//! List values: the elements in order, and how Redis holds them. 7.0 always uses a quicklist;
//! 7.2 and later keep a small list as one listpack (`list-max-listpack-size -2`: 8 KiB) and
//! convert it to a quicklist when a write would grow it past that, and back when it shrinks to
//! one quicklist node of at most half the limit (`listTypeTryConversion*` in `t_list.c`).

use super::stream::lp_str;
use crate::engine::profile::ListpackLimits;
use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};

/// An empty listpack: 6-byte header and the end byte.
pub const LISTPACK_EMPTY: u64 = 7;
/// `quicklist.c` SIZE_ESTIMATE_OVERHEAD: what `_quicklistNodeAllowInsert` adds per entry.
const QUICKLIST_ENTRY_OVERHEAD: u64 = 8;

/// How Redis holds a list (OBJECT ENCODING).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListEncoding {
    Listpack,
    #[default]
    Quicklist,
}

impl ListEncoding {
    pub fn name(self) -> &'static str {
        match self {
            ListEncoding::Listpack => "listpack",
            ListEncoding::Quicklist => "quicklist",
        }
    }
}

/// The elements (read and written as a `VecDeque`) and the encoding, which the list commands
/// update at the points Redis converts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListValue {
    items: VecDeque<Vec<u8>>,
    encoding: ListEncoding,
}

impl Deref for ListValue {
    type Target = VecDeque<Vec<u8>>;
    fn deref(&self) -> &Self::Target {
        &self.items
    }
}

impl DerefMut for ListValue {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.items
    }
}

impl FromIterator<Vec<u8>> for ListValue {
    fn from_iter<I: IntoIterator<Item = Vec<u8>>>(iter: I) -> Self {
        ListValue {
            items: iter.into_iter().collect(),
            encoding: ListEncoding::Quicklist,
        }
    }
}

impl From<Vec<Vec<u8>>> for ListValue {
    fn from(items: Vec<Vec<u8>>) -> Self {
        items.into_iter().collect()
    }
}

impl<const N: usize> From<[Vec<u8>; N]> for ListValue {
    fn from(items: [Vec<u8>; N]) -> Self {
        items.into_iter().collect()
    }
}

impl ListValue {
    /// An empty quicklist (7.0's only encoding).
    pub fn new() -> ListValue {
        ListValue::default()
    }
    /// The empty list a push creates: a listpack where the profile has them
    /// (`createListListpackObject`), else a quicklist.
    pub fn created(listpack: Option<ListpackLimits>) -> ListValue {
        ListValue {
            items: VecDeque::new(),
            encoding: match listpack {
                Some(_) => ListEncoding::Listpack,
                None => ListEncoding::Quicklist,
            },
        }
    }
    /// The list one RPUSH of all these elements creates: what seeding a server does.
    pub fn created_by_rpush(
        items: impl IntoIterator<Item = Vec<u8>>,
        listpack: Option<ListpackLimits>,
    ) -> ListValue {
        let items: VecDeque<Vec<u8>> = items.into_iter().collect();
        let mut list = ListValue::created(listpack);
        list.before_append(items.iter().map(Vec::as_slice), listpack);
        list.items = items;
        list
    }
    pub fn encoding(&self) -> ListEncoding {
        self.encoding
    }
    /// `lpBytes` of a listpack holding every element.
    pub fn listpack_bytes(&self) -> u64 {
        LISTPACK_EMPTY + self.items.iter().map(|i| lp_str(i)).sum::<u64>()
    }
    /// `listTypeTryConversionAppend`, before a write adds `added` (LPUSH, RPUSH, LINSERT, LSET,
    /// LMOVE's destination): a listpack that would pass the size limit with their bytes (raw
    /// lengths, as Redis estimates) becomes a quicklist.
    pub fn before_append<'a>(
        &mut self,
        added: impl Iterator<Item = &'a [u8]>,
        listpack: Option<ListpackLimits>,
    ) {
        let Some(lp) = listpack else { return };
        if self.encoding != ListEncoding::Listpack {
            return;
        }
        let added: u64 = added.map(|a| a.len() as u64).sum();
        if self.listpack_bytes() + added > lp.list_max_bytes as u64 {
            self.encoding = ListEncoding::Quicklist;
        }
    }
    /// `listTypeTryConversion(SHRINKING)`, after a write removed elements from a list that is
    /// not empty (pops, LTRIM, LREM, LSET): a quicklist of one node holding at most half the
    /// size limit becomes a listpack again.
    pub fn after_shrink(&mut self, listpack: Option<ListpackLimits>) {
        self.try_listpack(listpack, 2);
    }
    /// `listTypeTryConversion(AUTO)`, for a list built as a quicklist (SORT ... STORE): one
    /// node within the size limit becomes a listpack.
    pub fn after_build(&mut self, listpack: Option<ListpackLimits>) {
        self.try_listpack(listpack, 1);
    }
    fn try_listpack(&mut self, listpack: Option<ListpackLimits>, divisor: u64) {
        let Some(lp) = listpack else { return };
        if self.encoding != ListEncoding::Quicklist {
            return;
        }
        let nodes = self.quicklist_nodes();
        if nodes.len() == 1 && nodes[0] <= lp.list_max_bytes as u64 / divisor {
            self.encoding = ListEncoding::Listpack;
        }
    }
    /// The bytes of each quicklist node, the nodes filled in order up to `max` bytes as
    /// `_quicklistNodeAllowInsert` fills them (Redis's nodes depend on the push history; a list
    /// pushed at its tail has exactly these).
    pub fn quicklist_nodes_within(&self, max: u64) -> Vec<u64> {
        let mut nodes: Vec<u64> = Vec::new();
        for item in self.items.iter() {
            match nodes.last_mut() {
                Some(bytes) if *bytes + item.len() as u64 + QUICKLIST_ENTRY_OVERHEAD <= max => {
                    *bytes += lp_str(item)
                }
                _ => nodes.push(LISTPACK_EMPTY + lp_str(item)),
            }
        }
        nodes
    }
    /// `quicklist_nodes_within` the default 8 KiB.
    pub fn quicklist_nodes(&self) -> Vec<u64> {
        self.quicklist_nodes_within(crate::engine::profile::LISTPACK_DEFAULTS.list_max_bytes as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::profile::LISTPACK_DEFAULTS;

    const LP: Option<ListpackLimits> = Some(LISTPACK_DEFAULTS);

    #[test]
    fn grows_to_quicklist_past_8k_and_back_under_half() {
        let big = vec![b'x'; 1000];
        let mut l = ListValue::created_by_rpush((0..8).map(|_| big.clone()), LP);
        assert_eq!(l.encoding(), ListEncoding::Listpack);
        l.before_append([big.as_slice()].into_iter(), LP);
        l.push_back(big.clone());
        assert_eq!(l.encoding(), ListEncoding::Quicklist);
        l.pop_back();
        l.after_shrink(LP);
        // 8 KB in one node is more than half the limit: still a quicklist.
        assert_eq!(l.encoding(), ListEncoding::Quicklist);
        for _ in 0..4 {
            l.pop_back();
        }
        l.after_shrink(LP);
        assert_eq!(l.encoding(), ListEncoding::Listpack);
        assert_eq!(
            ListValue::created_by_rpush([b"a".to_vec()], None).encoding(),
            ListEncoding::Quicklist
        );
    }
}
