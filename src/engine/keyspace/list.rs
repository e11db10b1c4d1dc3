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

/// Which end of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListEnd {
    Head,
    Tail,
}

/// The elements (read as a `VecDeque`) and the encoding, which the list commands update at the
/// points Redis converts. The list commands write through the methods below, which also keep
/// the quicklist's nodes of a 7.2+ list (converting back to a listpack needs a single node).
#[derive(Debug, Clone, Default)]
pub struct ListValue {
    items: VecDeque<Vec<u8>>,
    encoding: ListEncoding,
    /// A 7.2+ quicklist's nodes (`None` for 7.0's lists and for a listpack).
    nodes: Option<Nodes>,
    /// A listpack's element count and `lpBytes`, kept as it changes (a push checks the size
    /// limit against it; counting the whole list each time would be quadratic).
    lp_bytes: Option<(usize, u64)>,
}

/// Lists are equal by their elements and encoding (the nodes are how Redis lays them out).
impl PartialEq for ListValue {
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items && self.encoding == other.encoding
    }
}

/// One quicklist node: how many elements it holds and its bytes (a listpack's `lpBytes`, or a
/// plain node's element).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Node {
    count: usize,
    bytes: u64,
    plain: bool,
}

/// A quicklist's nodes in order, under the profile's limits (`quicklist.c`).
#[derive(Debug, Clone)]
struct Nodes {
    list: VecDeque<Node>,
    limits: ListpackLimits,
}

impl Nodes {
    fn max(&self) -> u64 {
        self.limits.list_max_bytes as u64
    }
    /// `isLargeElement`: an element for a plain node of its own (7.4+).
    fn large(&self, item: &[u8]) -> bool {
        self.limits.list_plain_nodes && item.len() as u64 > self.max()
    }
    /// `_quicklistNodeAllowInsert`: the node's bytes plus the element's and an 8-byte estimate
    /// of its overhead stay within the limit.
    fn fits(&self, at: Option<usize>, item: &[u8]) -> bool {
        at.and_then(|i| self.list.get(i)).is_some_and(|n| {
            !n.plain
                && !self.large(item)
                && n.bytes + item.len() as u64 + QUICKLIST_ENTRY_OVERHEAD <= self.max()
        })
    }
    /// `_quicklistNodeAllowMerge`: two packed nodes whose listpacks fit one.
    fn merge_ok(&self, a: usize, b: usize) -> bool {
        match (self.list.get(a), self.list.get(b)) {
            (Some(a), Some(b)) => {
                !a.plain && !b.plain && a.bytes + b.bytes - LISTPACK_EMPTY <= self.max()
            }
            _ => false,
        }
    }
    /// Merge node `b` into node `a` (adjacent, `a` first).
    fn merge(&mut self, a: usize) {
        let b = self.list.remove(a + 1).expect("adjacent node");
        let n = &mut self.list[a];
        n.count += b.count;
        n.bytes += b.bytes - LISTPACK_EMPTY;
    }
    fn node_for(&self, item: &[u8]) -> Node {
        if self.large(item) {
            Node {
                count: 1,
                bytes: item.len() as u64,
                plain: true,
            }
        } else {
            Node {
                count: 1,
                bytes: LISTPACK_EMPTY + lp_str(item),
                plain: false,
            }
        }
    }
    fn add_to(&mut self, i: usize, item: &[u8]) {
        self.list[i].count += 1;
        self.list[i].bytes += lp_str(item);
    }
    /// Nodes filled in order (pushes at the tail of an empty quicklist).
    fn in_order(items: &VecDeque<Vec<u8>>, limits: ListpackLimits) -> Nodes {
        let mut nodes = Nodes {
            list: VecDeque::new(),
            limits,
        };
        for item in items {
            let last = nodes.list.len().checked_sub(1);
            if nodes.fits(last, item) {
                nodes.add_to(last.expect("a last node"), item);
            } else {
                let n = nodes.node_for(item);
                nodes.list.push_back(n);
            }
        }
        nodes
    }
    /// The node holding element `index` and the element's offset in it.
    fn locate(&self, index: usize) -> (usize, usize) {
        let mut start = 0;
        for (i, n) in self.list.iter().enumerate() {
            if index < start + n.count {
                return (i, index - start);
            }
            start += n.count;
        }
        (self.list.len().saturating_sub(1), 0)
    }
    fn total(&self) -> usize {
        self.list.iter().map(|n| n.count).sum()
    }
    /// `_quicklistMergeNodes` around node `center`.
    fn merge_around(&mut self, center: usize) {
        let mut center = center;
        if center >= 2 && self.merge_ok(center - 2, center - 1) {
            self.merge(center - 2);
            center -= 1;
        }
        if self.merge_ok(center + 1, center + 2) {
            self.merge(center + 1);
        }
        let target = if center >= 1 && self.merge_ok(center - 1, center) {
            self.merge(center - 1);
            center - 1
        } else {
            center
        };
        if self.merge_ok(target, target + 1) {
            self.merge(target);
        }
    }
}

/// A packed node of these elements.
fn packed<'a>(items: impl Iterator<Item = &'a Vec<u8>>) -> Node {
    let mut n = Node {
        count: 0,
        bytes: LISTPACK_EMPTY,
        plain: false,
    };
    for item in items {
        n.count += 1;
        n.bytes += lp_str(item);
    }
    n
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
            nodes: None,
            lp_bytes: None,
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
            nodes: None,
            lp_bytes: listpack.map(|_| (0, LISTPACK_EMPTY)),
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
        list.lp_bytes = (list.encoding == ListEncoding::Listpack)
            .then(|| (list.items.len(), list.count_listpack_bytes()));
        // Pushed at the tail of an empty quicklist: nodes filled in order.
        if let (ListEncoding::Quicklist, Some(lp)) = (list.encoding, listpack) {
            list.nodes = Some(Nodes::in_order(&list.items, lp));
        }
        list
    }
    pub fn encoding(&self) -> ListEncoding {
        self.encoding
    }
    /// `lpBytes` of a listpack holding every element.
    pub fn listpack_bytes(&self) -> u64 {
        match self.lp_bytes {
            Some((len, bytes)) if len == self.items.len() => bytes,
            _ => self.count_listpack_bytes(),
        }
    }
    fn count_listpack_bytes(&self) -> u64 {
        LISTPACK_EMPTY + self.items.iter().map(|i| lp_str(i)).sum::<u64>()
    }
    /// A listpack's bytes before a write, to carry over to after it (`None` for a quicklist).
    fn lp_before(&self) -> Option<u64> {
        (self.encoding == ListEncoding::Listpack).then(|| self.listpack_bytes())
    }
    /// The listpack's bytes after a write that added `added` and removed `removed` bytes.
    fn lp_after(&mut self, before: Option<u64>, added: u64, removed: u64) {
        self.lp_bytes = before.map(|b| (self.items.len(), b + added - removed));
    }
    /// `listTypeTryConversionAppend`, before a write adds `added` (LPUSH, RPUSH, LINSERT, LSET,
    /// LMOVE's destination): a listpack that would pass the size limit with their bytes (raw
    /// lengths, as Redis estimates) becomes a quicklist whose only node is that listpack.
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
        let bytes = self.listpack_bytes();
        if bytes + added > lp.list_max_bytes as u64 {
            self.encoding = ListEncoding::Quicklist;
            self.lp_bytes = None;
            let mut list = VecDeque::new();
            if !self.items.is_empty() {
                list.push_back(Node {
                    count: self.items.len(),
                    bytes,
                    plain: false,
                });
            }
            self.nodes = Some(Nodes { list, limits: lp });
        }
    }
    /// `listTypeTryConversion(SHRINKING)`, after a write removed elements from a list that is
    /// not empty (pops, LTRIM, LREM, LSET): a quicklist of one packed node holding at most half
    /// the size limit becomes a listpack again.
    pub fn after_shrink(&mut self, listpack: Option<ListpackLimits>) {
        self.try_listpack(listpack, 2);
    }
    /// `listTypeTryConversion(AUTO)`, for a list built as a quicklist (SORT ... STORE): one
    /// packed node within the size limit becomes a listpack.
    pub fn after_build(&mut self, listpack: Option<ListpackLimits>) {
        if let Some(lp) = listpack {
            self.nodes = Some(Nodes::in_order(&self.items, lp));
        }
        self.try_listpack(listpack, 1);
    }
    fn try_listpack(&mut self, listpack: Option<ListpackLimits>, divisor: u64) {
        let Some(lp) = listpack else { return };
        if self.encoding != ListEncoding::Quicklist {
            return;
        }
        let nodes = self.kept_nodes(lp);
        if nodes.list.len() == 1
            && !nodes.list[0].plain
            && nodes.list[0].bytes <= lp.list_max_bytes as u64 / divisor
        {
            let bytes = nodes.list[0].bytes;
            self.encoding = ListEncoding::Listpack;
            self.lp_bytes = Some((self.items.len(), bytes));
            self.nodes = None;
        }
    }
    /// The nodes, laid out in order again when a write went around them.
    fn kept_nodes(&mut self, limits: ListpackLimits) -> &mut Nodes {
        let len = self.items.len();
        if self.nodes.as_ref().is_none_or(|n| n.total() != len) {
            let limits = self.nodes.as_ref().map_or(limits, |n| n.limits);
            self.nodes = Some(Nodes::in_order(&self.items, limits));
        }
        self.nodes.as_mut().expect("laid out")
    }
    /// The nodes when they are kept and in step with the elements (7.2+ quicklists).
    fn nodes_in_step(&mut self) -> Option<&mut Nodes> {
        let len = self.items.len();
        self.nodes.as_mut().filter(|n| n.total() == len)
    }
    /// The bytes of each quicklist node: the nodes kept since the list became a quicklist on a
    /// 7.2+ profile, else (7.0) filled in order up to 8 KiB.
    pub fn node_bytes(&mut self) -> Vec<u64> {
        if self.encoding != ListEncoding::Quicklist {
            return Vec::new();
        }
        let limits = self
            .nodes
            .as_ref()
            .map_or(crate::engine::profile::LISTPACK_DEFAULTS, |n| n.limits);
        let nodes = match self.nodes_in_step() {
            Some(n) => n.clone(),
            None => Nodes::in_order(&self.items, limits),
        };
        nodes.list.iter().map(|n| n.bytes).collect()
    }
    /// A quicklist however small (what loading an old RDB list format leaves), its nodes
    /// filled in order.
    pub fn into_quicklist(&mut self, listpack: Option<ListpackLimits>) {
        self.encoding = ListEncoding::Quicklist;
        self.lp_bytes = None;
        self.nodes = listpack.map(|lp| Nodes::in_order(&self.items, lp));
    }
    /// Each quicklist node's element count and whether it is a plain node (one large element),
    /// as `node_bytes` lays them out; a listpack is one packed node (how DUMP writes a list).
    pub fn node_layout(&mut self) -> Vec<(usize, bool)> {
        if self.encoding != ListEncoding::Quicklist {
            return vec![(self.items.len(), false)];
        }
        let limits = self
            .nodes
            .as_ref()
            .map_or(crate::engine::profile::LISTPACK_DEFAULTS, |n| n.limits);
        let nodes = match self.nodes_in_step() {
            Some(n) => n.clone(),
            None => Nodes::in_order(&self.items, limits),
        };
        nodes.list.iter().map(|n| (n.count, n.plain)).collect()
    }
    /// Push at one end (`quicklistPush`: into the end node when it has room, else a new node).
    pub fn push(&mut self, end: ListEnd, item: Vec<u8>) {
        if let Some(before) = self.lp_before() {
            let added = lp_str(&item);
            match end {
                ListEnd::Head => self.items.push_front(item),
                ListEnd::Tail => self.items.push_back(item),
            }
            return self.lp_after(Some(before), added, 0);
        }
        if let Some(nodes) = self.nodes_in_step() {
            let at = match end {
                ListEnd::Head => Some(0),
                ListEnd::Tail => nodes.list.len().checked_sub(1),
            };
            if nodes.fits(at, &item) {
                nodes.add_to(at.expect("an end node"), &item);
            } else {
                let n = nodes.node_for(&item);
                match end {
                    ListEnd::Head => nodes.list.push_front(n),
                    ListEnd::Tail => nodes.list.push_back(n),
                }
            }
        }
        match end {
            ListEnd::Head => self.items.push_front(item),
            ListEnd::Tail => self.items.push_back(item),
        }
    }
    /// Pop from one end; an emptied node goes away.
    pub fn pop(&mut self, end: ListEnd) -> Option<Vec<u8>> {
        let item = match end {
            ListEnd::Head => self.items.front(),
            ListEnd::Tail => self.items.back(),
        }?
        .clone();
        if let Some(before) = self.lp_before() {
            let popped = match end {
                ListEnd::Head => self.items.pop_front(),
                ListEnd::Tail => self.items.pop_back(),
            };
            self.lp_after(Some(before), 0, lp_str(&item));
            return popped;
        }
        if let Some(nodes) = self.nodes_in_step() {
            let i = match end {
                ListEnd::Head => 0,
                ListEnd::Tail => nodes.list.len() - 1,
            };
            let n = &mut nodes.list[i];
            n.count -= 1;
            n.bytes -= if n.plain { n.bytes } else { lp_str(&item) };
            if n.count == 0 {
                nodes.list.remove(i);
            }
        }
        match end {
            ListEnd::Head => self.items.pop_front(),
            ListEnd::Tail => self.items.pop_back(),
        }
    }
    /// Keep the elements `keep` says (LREM, LTRIM: an emptied node goes away, nodes never
    /// merge).
    pub fn retain_elements(&mut self, keep: &[bool]) {
        if self.encoding == ListEncoding::Listpack {
            let mut i = 0;
            self.items.retain(|_| {
                i += 1;
                keep[i - 1]
            });
            self.lp_bytes = Some((self.items.len(), self.count_listpack_bytes()));
            return;
        }
        let len = self.items.len();
        let items = &self.items;
        if let Some(nodes) = self.nodes.as_mut().filter(|n| n.total() == len) {
            let mut next = VecDeque::with_capacity(nodes.list.len());
            let mut i = 0;
            for node in nodes.list.iter() {
                let range = i..i + node.count;
                i += node.count;
                let kept = packed(range.clone().filter(|j| keep[*j]).map(|j| &items[j]));
                if kept.count > 0 {
                    next.push_back(if node.plain { *node } else { kept });
                }
            }
            nodes.list = next;
        }
        let mut i = 0;
        self.items.retain(|_| {
            i += 1;
            keep[i - 1]
        });
    }
    /// Replace the element at `index` (LSET, `quicklistReplaceEntry`): in place, unless 7.4's
    /// plain nodes are involved (a large element goes into a plain node of its own, splitting
    /// its node; a small one replacing a plain node joins the next node).
    pub fn replace(&mut self, index: usize, item: Vec<u8>) {
        if let Some(before) = self.lp_before() {
            let added = lp_str(&item);
            let old = std::mem::replace(&mut self.items[index], item);
            return self.lp_after(Some(before), added, lp_str(&old));
        }
        let items = &self.items;
        let len = items.len();
        if let Some(nodes) = self.nodes.as_mut().filter(|n| n.total() == len) {
            let (i, offset) = nodes.locate(index);
            let node = nodes.list[i];
            let large = nodes.large(&item);
            if !node.plain && !large {
                nodes.list[i].bytes = node.bytes - lp_str(&items[index]) + lp_str(&item);
            } else if node.plain && large {
                nodes.list[i].bytes = item.len() as u64;
            } else if node.plain {
                // Inserted after the plain node (at the next node's head when it has room),
                // then the plain node goes.
                if nodes.fits(Some(i + 1), &item) {
                    nodes.add_to(i + 1, &item);
                } else {
                    let n = nodes.node_for(&item);
                    nodes.list.insert(i + 1, n);
                }
                nodes.list.remove(i);
            } else {
                // Split at the element: [before] [plain new] [after], then merge around.
                let start = index - offset;
                let before = packed(items.range(start..index));
                let after = packed(items.range(index + 1..start + node.count));
                nodes.list.remove(i);
                let mut at = i;
                if before.count > 0 {
                    nodes.list.insert(at, before);
                    at += 1;
                }
                let n = nodes.node_for(&item);
                nodes.list.insert(at, n);
                if after.count > 0 {
                    nodes.list.insert(at + 1, after);
                }
                nodes.merge_around(at);
            }
        }
        self.items[index] = item;
    }
    /// Insert next to the element at `pivot` (LINSERT, `_quicklistInsert`): into the pivot's
    /// node when it has room, else the neighbour's at a node's edge, a new node there, or a
    /// split of the pivot's node.
    pub fn insert(&mut self, pivot: usize, after: bool, item: Vec<u8>) {
        if let Some(before) = self.lp_before() {
            let added = lp_str(&item);
            self.items
                .insert(if after { pivot + 1 } else { pivot }, item);
            return self.lp_after(Some(before), added, 0);
        }
        let items = &self.items;
        let len = items.len();
        if let Some(nodes) = self.nodes.as_mut().filter(|n| n.total() == len) {
            let (i, offset) = nodes.locate(pivot);
            let node = nodes.list[i];
            let full = !nodes.fits(Some(i), &item);
            let at_tail = after && offset + 1 == node.count;
            let at_head = !after && offset == 0;
            let avail_next = at_tail && nodes.fits(Some(i + 1), &item);
            let avail_prev = at_head && i > 0 && nodes.fits(Some(i - 1), &item);
            let start = pivot - offset;
            // The node's elements split at the pivot: [..=pivot] [pivot+1..] after it,
            // [..pivot] [pivot..] before it.
            let cut = if after { pivot + 1 } else { pivot };
            let left = packed(items.range(start..cut));
            let right = packed(items.range(cut..start + node.count));
            let new = nodes.node_for(&item);
            if nodes.large(&item) {
                if node.plain || at_tail || at_head {
                    nodes.list.insert(if after { i + 1 } else { i }, new);
                } else {
                    nodes.list.remove(i);
                    for (k, n) in [left, new, right].into_iter().enumerate() {
                        nodes.list.insert(i + k, n);
                    }
                }
            } else if !full {
                nodes.add_to(i, &item);
            } else if at_tail && avail_next {
                nodes.add_to(i + 1, &item);
            } else if at_head && avail_prev {
                nodes.add_to(i - 1, &item);
            } else if at_tail || at_head {
                nodes.list.insert(if after { i + 1 } else { i }, new);
            } else {
                // Split: the new element joins the part away from the pivot's node.
                nodes.list.remove(i);
                let (first, second, center) = if after {
                    let mut r = right;
                    r.count += 1;
                    r.bytes += lp_str(&item);
                    (left, r, i)
                } else {
                    let mut l = left;
                    l.count += 1;
                    l.bytes += lp_str(&item);
                    (l, right, i + 1)
                };
                nodes.list.insert(i, first);
                nodes.list.insert(i + 1, second);
                nodes.merge_around(center);
            }
        }
        self.items
            .insert(if after { pivot + 1 } else { pivot }, item);
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
        l.push(ListEnd::Tail, big.clone());
        assert_eq!(l.encoding(), ListEncoding::Quicklist);
        assert_eq!(l.node_bytes().len(), 2);
        l.pop(ListEnd::Tail);
        l.after_shrink(LP);
        // 8 KB in one node is more than half the limit: still a quicklist.
        assert_eq!(l.encoding(), ListEncoding::Quicklist);
        for _ in 0..4 {
            l.pop(ListEnd::Tail);
        }
        l.after_shrink(LP);
        assert_eq!(l.encoding(), ListEncoding::Listpack);
        assert_eq!(
            ListValue::created_by_rpush([b"a".to_vec()], None).encoding(),
            ListEncoding::Quicklist
        );
    }

    /// Popping the head of a list pushed at its tail empties the first node last: two nodes
    /// stay, and the list stays a quicklist however small (as Redis).
    #[test]
    fn nodes_follow_pushes_and_pops() {
        let big = vec![b'y'; 1000];
        let mut l = ListValue::created(LP);
        for _ in 0..9 {
            l.before_append([big.as_slice()].into_iter(), LP);
            l.push(ListEnd::Tail, big.clone());
        }
        for _ in 0..5 {
            l.pop(ListEnd::Head);
            l.after_shrink(LP);
        }
        assert_eq!(l.encoding(), ListEncoding::Quicklist);
        assert_eq!(l.node_bytes().len(), 2);
        for _ in 0..2 {
            l.pop(ListEnd::Head);
            l.after_shrink(LP);
        }
        assert_eq!(l.encoding(), ListEncoding::Quicklist);
        // The first node is gone with its last element.
        l.pop(ListEnd::Head);
        l.after_shrink(LP);
        assert_eq!(l.encoding(), ListEncoding::Listpack);
    }

    /// 7.4+: an element above 8 KiB gets a plain node; LSET of one splits its node.
    #[test]
    fn large_elements_take_plain_nodes() {
        let lp = Some(crate::engine::profile::LISTPACK_PLAIN_NODES);
        let mut l = ListValue::created_by_rpush([b"a".to_vec(), b"b".to_vec(), b"c".to_vec()], lp);
        let large = vec![b'z'; 8200];
        l.before_append([large.as_slice()].into_iter(), lp);
        l.replace(1, large);
        assert_eq!(l.node_bytes().len(), 3);
        l.replace(1, b"b".to_vec());
        l.after_shrink(lp);
        assert_eq!(l.node_bytes().len(), 2);
        assert_eq!(l.encoding(), ListEncoding::Quicklist);
    }
}
