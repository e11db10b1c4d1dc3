//! Sorted set values: members ordered by (score, member bytes), with score lookup by member.
//!
//! The order is kept in a list of sorted chunks (at most `CHUNK_MAX` entries each) with a Fenwick
//! tree over the chunk sizes, an order-statistic structure: insert, remove, rank and access by
//! rank are O(log n + chunk), and ranges by rank, score or lex are O(log n + m).

use std::cmp::Ordering;
use std::collections::HashMap;

/// A score with a total order (scores are never NaN in a sorted set).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score(pub f64);

impl Eq for Score {}
impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Largest chunk before it is split in two.
const CHUNK_MAX: usize = 512;
/// Redis's `zset-max-listpack-entries` / `zset-max-listpack-value` defaults.
const LISTPACK_MAX_ENTRIES: usize = 128;
const LISTPACK_MAX_VALUE: usize = 64;

type Item = (f64, Vec<u8>);

fn cmp_item(a: (f64, &[u8]), b: (f64, &[u8])) -> Ordering {
    a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1))
}

#[derive(Debug, Clone, Default)]
pub struct ZSetValue {
    scores: HashMap<Vec<u8>, f64>,
    /// Non-empty sorted chunks; concatenated they are the whole set in order.
    chunks: Vec<Vec<Item>>,
    /// Fenwick tree (1-based) over `chunks[i].len()`.
    fenwick: Vec<usize>,
    /// Mirrors Redis's encoding: once a set outgrows a listpack it stays a skiplist. Only
    /// observable through ZSCAN score texts, lex ranges over mixed scores and OBJECT ENCODING.
    skiplist: bool,
}

impl PartialEq for ZSetValue {
    fn eq(&self, other: &Self) -> bool {
        self.scores == other.scores
    }
}

impl ZSetValue {
    pub fn new() -> ZSetValue {
        ZSetValue::default()
    }
    pub fn len(&self) -> usize {
        self.scores.len()
    }
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        self.scores.get(member).copied()
    }
    /// `"listpack"` or `"skiplist"`, as OBJECT ENCODING reports it.
    pub fn encoding(&self) -> &'static str {
        if self.skiplist {
            "skiplist"
        } else {
            "listpack"
        }
    }
    pub fn is_skiplist(&self) -> bool {
        self.skiplist
    }

    /// Insert or update; returns true when the member is new.
    pub fn insert(&mut self, member: Vec<u8>, score: f64) -> bool {
        // -0.0 and 0.0 are the same score in Redis.
        let score = if score == 0.0 { 0.0 } else { score };
        if member.len() > LISTPACK_MAX_VALUE {
            self.skiplist = true;
        }
        let new = match self.scores.insert(member.clone(), score) {
            Some(old) => {
                if old.total_cmp(&score) == Ordering::Equal {
                    return false;
                }
                self.remove_ordered(old, &member);
                false
            }
            None => true,
        };
        self.insert_ordered(score, member);
        if self.len() > LISTPACK_MAX_ENTRIES {
            self.skiplist = true;
        }
        new
    }

    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self.scores.remove(member) {
            Some(old) => {
                self.remove_ordered(old, member);
                true
            }
            None => false,
        }
    }

    /// Members with scores in ascending order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Vec<u8>, f64)> {
        self.chunks.iter().flatten().map(|(s, m)| (m, *s))
    }

    /// 0-based rank of `member` in ascending order.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        let score = self.score(member)?;
        let c = self.chunk_for(score, member);
        let pos = self
            .chunks
            .get(c)?
            .binary_search_by(|(s, m)| cmp_item((*s, m), (score, member)))
            .ok()?;
        Some(self.prefix(c) + pos)
    }

    /// The element at 0-based rank `index`.
    pub fn get(&self, index: usize) -> Option<(&Vec<u8>, f64)> {
        if index >= self.len() {
            return None;
        }
        let (c, o) = self.locate(index);
        self.chunks.get(c)?.get(o).map(|(s, m)| (m, *s))
    }

    /// Elements of ranks `start..end` (clamped), in ascending order.
    pub fn range(
        &self,
        start: usize,
        end: usize,
    ) -> impl DoubleEndedIterator<Item = (&Vec<u8>, f64)> {
        let end = end.min(self.len());
        let start = start.min(end);
        let (c0, o0) = self.locate(start);
        let (c1, o1) = self.locate(end);
        let last = (c1 + 1).min(self.chunks.len());
        let first = c0.min(last);
        self.chunks[first..last]
            .iter()
            .enumerate()
            .flat_map(move |(i, ch)| {
                let ci = first + i;
                let lo = if ci == c0 { o0 } else { 0 };
                let hi = if ci == c1 { o1 } else { ch.len() };
                ch[lo.min(hi)..hi].iter().map(|(s, m)| (m, *s))
            })
    }

    /// Number of leading elements for which `pred(score, member)` holds; `pred` must be true
    /// for a prefix of the order and false afterwards (binary search).
    pub fn partition_point(&self, pred: impl Fn(f64, &[u8]) -> bool) -> usize {
        let c = self
            .chunks
            .partition_point(|ch| ch.last().is_some_and(|(s, m)| pred(*s, m)));
        match self.chunks.get(c) {
            None => self.len(),
            Some(ch) => self.prefix(c) + ch.partition_point(|(s, m)| pred(*s, m)),
        }
    }

    /// Remove the elements of ranks `start..end` (clamped) and return them in order.
    pub fn remove_range(&mut self, start: usize, end: usize) -> Vec<(Vec<u8>, f64)> {
        let end = end.min(self.len());
        if start >= end {
            return Vec::new();
        }
        let (c0, o0) = self.locate(start);
        let mut removed = Vec::with_capacity(end - start);
        let mut c = c0;
        let mut offset = o0;
        let mut left = end - start;
        while left > 0 && c < self.chunks.len() {
            let ch = &mut self.chunks[c];
            let take = left.min(ch.len() - offset);
            for (s, m) in ch.drain(offset..offset + take) {
                self.scores.remove(&m);
                removed.push((m, s));
            }
            left -= take;
            offset = 0;
            c += 1;
        }
        self.chunks.retain(|ch| !ch.is_empty());
        self.rebuild();
        removed
    }

    // ---- internals ----

    /// Index of the chunk that holds (or would hold) `(score, member)`.
    fn chunk_for(&self, score: f64, member: &[u8]) -> usize {
        self.chunks.partition_point(|ch| {
            ch.last()
                .is_some_and(|(s, m)| cmp_item((*s, m), (score, member)) == Ordering::Less)
        })
    }

    fn insert_ordered(&mut self, score: f64, member: Vec<u8>) {
        if self.chunks.is_empty() {
            self.chunks.push(vec![(score, member)]);
            self.rebuild();
            return;
        }
        let c = self.chunk_for(score, &member).min(self.chunks.len() - 1);
        let ch = &mut self.chunks[c];
        let pos =
            ch.partition_point(|(s, m)| cmp_item((*s, m), (score, &member)) == Ordering::Less);
        ch.insert(pos, (score, member));
        if ch.len() > CHUNK_MAX {
            let tail = ch.split_off(ch.len() / 2);
            self.chunks.insert(c + 1, tail);
            self.rebuild();
        } else {
            self.fenwick_add(c, true);
        }
    }

    fn remove_ordered(&mut self, score: f64, member: &[u8]) {
        let c = self.chunk_for(score, member);
        let Some(ch) = self.chunks.get_mut(c) else {
            return;
        };
        if let Ok(pos) = ch.binary_search_by(|(s, m)| cmp_item((*s, m), (score, member))) {
            ch.remove(pos);
            if ch.is_empty() {
                self.chunks.remove(c);
                self.rebuild();
            } else {
                self.fenwick_add(c, false);
            }
        }
    }

    fn rebuild(&mut self) {
        let n = self.chunks.len();
        self.fenwick = vec![0; n + 1];
        for i in 1..=n {
            self.fenwick[i] += self.chunks[i - 1].len();
            let parent = i + (i & i.wrapping_neg());
            if parent <= n {
                self.fenwick[parent] += self.fenwick[i];
            }
        }
    }

    /// One element more (`grow`) or less in `chunks[chunk]`.
    fn fenwick_add(&mut self, chunk: usize, grow: bool) {
        let mut i = chunk + 1;
        while i < self.fenwick.len() {
            if grow {
                self.fenwick[i] += 1;
            } else {
                self.fenwick[i] -= 1;
            }
            i += i & i.wrapping_neg();
        }
    }

    /// Number of elements in `chunks[..chunk]`.
    fn prefix(&self, chunk: usize) -> usize {
        let mut i = chunk.min(self.chunks.len());
        let mut sum = 0;
        while i > 0 {
            sum += self.fenwick[i];
            i -= i & i.wrapping_neg();
        }
        sum
    }

    /// (chunk, offset) of rank `index`; `(chunks.len(), 0)` when `index >= len`.
    fn locate(&self, index: usize) -> (usize, usize) {
        if index >= self.len() {
            return (self.chunks.len(), 0);
        }
        let n = self.chunks.len();
        let mut pos = 0;
        let mut rem = index;
        let mut step = if n == 0 {
            0
        } else {
            1usize << (usize::BITS - 1 - n.leading_zeros())
        };
        while step > 0 {
            if pos + step <= n && self.fenwick[pos + step] <= rem {
                pos += step;
                rem -= self.fenwick[pos];
            }
            step >>= 1;
        }
        (pos, rem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model_check(z: &ZSetValue, model: &std::collections::BTreeSet<(Score, Vec<u8>)>) {
        let want: Vec<(Vec<u8>, f64)> = model.iter().map(|(s, m)| (m.clone(), s.0)).collect();
        let got: Vec<(Vec<u8>, f64)> = z.iter().map(|(m, s)| (m.clone(), s)).collect();
        assert_eq!(got, want);
        let back: Vec<(Vec<u8>, f64)> = z.iter().rev().map(|(m, s)| (m.clone(), s)).collect();
        assert_eq!(back.len(), want.len());
        for (i, (m, s)) in want.iter().enumerate() {
            assert_eq!(z.rank(m), Some(i));
            assert_eq!(z.get(i), Some((m, *s)));
        }
    }

    #[test]
    fn order_statistics_match_a_model() {
        let mut z = ZSetValue::new();
        let mut model = std::collections::BTreeSet::new();
        let mut x: u64 = 12345;
        for round in 0..6000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let member = format!("m{}", x % 1500).into_bytes();
            let score = (x % 97) as f64;
            if round % 3 == 2 {
                let had = z.score(&member);
                assert_eq!(z.remove(&member), had.is_some());
                if let Some(s) = had {
                    model.remove(&(Score(s), member));
                }
            } else {
                if let Some(s) = z.score(&member) {
                    model.remove(&(Score(s), member.clone()));
                }
                z.insert(member.clone(), score);
                model.insert((Score(score), member));
            }
        }
        model_check(&z, &model);
        let n = z.len();
        let mid: Vec<_> = z.range(10, n - 10).map(|(m, _)| m.clone()).collect();
        let want: Vec<_> = model
            .iter()
            .skip(10)
            .take(n - 20)
            .map(|(_, m)| m.clone())
            .collect();
        assert_eq!(mid, want);
        let removed = z.remove_range(5, 700);
        assert_eq!(removed.len(), 695);
        for (m, s) in &removed {
            model.remove(&(Score(*s), m.clone()));
        }
        model_check(&z, &model);
        assert_eq!(
            z.partition_point(|s, _| s < 50.0),
            model.iter().filter(|(s, _)| s.0 < 50.0).count()
        );
    }

    #[test]
    fn encoding_follows_listpack_limits() {
        let mut z = ZSetValue::new();
        for i in 0..128 {
            z.insert(format!("{i}").into_bytes(), 1.0);
        }
        assert_eq!(z.encoding(), "listpack");
        z.insert(b"x".to_vec(), 1.0);
        assert_eq!(z.encoding(), "skiplist");
        let mut z = ZSetValue::new();
        z.insert(vec![b'a'; 65], 1.0);
        assert_eq!(z.encoding(), "skiplist");
    }
}
