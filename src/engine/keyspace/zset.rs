//! Sorted set values: members ordered by (score, member bytes), with score lookup by member.

use std::collections::{BTreeSet, HashMap};

/// A score with a total order (scores are never NaN in a sorted set).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score(pub f64);

impl Eq for Score {}
impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Score {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ZSetValue {
    scores: HashMap<Vec<u8>, f64>,
    ordered: BTreeSet<(Score, Vec<u8>)>,
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
    /// Insert or update; returns true when the member is new.
    pub fn insert(&mut self, member: Vec<u8>, score: f64) -> bool {
        // -0.0 and 0.0 are the same score in Redis.
        let score = if score == 0.0 { 0.0 } else { score };
        match self.scores.insert(member.clone(), score) {
            Some(old) => {
                self.ordered.remove(&(Score(old), member.clone()));
                self.ordered.insert((Score(score), member));
                false
            }
            None => {
                self.ordered.insert((Score(score), member));
                true
            }
        }
    }
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self.scores.remove(member) {
            Some(old) => {
                self.ordered.remove(&(Score(old), member.to_vec()));
                true
            }
            None => false,
        }
    }
    /// Members with scores in ascending order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Vec<u8>, f64)> {
        self.ordered.iter().map(|(s, m)| (m, s.0))
    }
    /// The ordered index, for range queries in O(log n + m).
    pub fn ordered(&self) -> &BTreeSet<(Score, Vec<u8>)> {
        &self.ordered
    }
}
