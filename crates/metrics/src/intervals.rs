//! A set of `u64` offsets stored as disjoint half-open intervals: which offsets of a partition
//! were processed at least once.

use std::collections::BTreeMap;

/// Disjoint, non-adjacent half-open intervals `[start, end)`, keyed by start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IntervalSet {
    spans: BTreeMap<u64, u64>,
    len: u64,
}

impl IntervalSet {
    /// An empty set.
    pub fn new() -> IntervalSet {
        IntervalSet::default()
    }

    /// Number of offsets in the set.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds `[start, end)` and returns the sub-ranges that were not in the set before, in order.
    pub fn insert(&mut self, start: u64, end: u64) -> Vec<(u64, u64)> {
        if start >= end {
            return Vec::new();
        }
        let mut new_start = start;
        let mut new_end = end;
        let mut fresh = Vec::new();
        let mut cursor = start;
        // Spans that overlap or touch [start, end).
        let first = self.spans.range(..=start).next_back().filter(|(_, e)| **e >= start);
        let from = first.map_or(start, |(s, _)| *s);
        let touching: Vec<(u64, u64)> =
            self.spans.range(from..=end).map(|(s, e)| (*s, *e)).collect();
        for (s, e) in touching {
            if s > cursor {
                fresh.push((cursor, s.min(end)));
            }
            cursor = cursor.max(e);
            new_start = new_start.min(s);
            new_end = new_end.max(e);
            self.spans.remove(&s);
            self.len -= e - s;
        }
        if cursor < end {
            fresh.push((cursor, end));
        }
        self.spans.insert(new_start, new_end);
        self.len += new_end - new_start;
        fresh
    }

    /// Offsets of the set inside `[lo, hi)`.
    pub fn count_in(&self, lo: u64, hi: u64) -> u64 {
        if lo >= hi {
            return 0;
        }
        let from = self.spans.range(..=lo).next_back().map_or(lo, |(s, _)| *s);
        self.spans.range(from..hi).map(|(s, e)| (*e).min(hi).saturating_sub((*s).max(lo))).sum()
    }

    /// One past the largest offset (0 when empty).
    pub fn max_end(&self) -> u64 {
        self.spans.values().next_back().copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_reports_only_new_offsets_and_merges() {
        let mut s = IntervalSet::new();
        assert_eq!(s.insert(10, 20), vec![(10, 20)]);
        assert_eq!(s.insert(30, 40), vec![(30, 40)]);
        // Covers the gap 20..30 and the tails 5..10 and 40..45.
        assert_eq!(s.insert(5, 45), vec![(5, 10), (20, 30), (40, 45)]);
        assert_eq!(s.len(), 40);
        assert_eq!(s.insert(12, 18), vec![]);
        assert_eq!(s.insert(45, 50), vec![(45, 50)], "adjacent spans merge");
        assert_eq!(s.spans.len(), 1);
        assert_eq!(s.len(), 45);
    }

    #[test]
    fn count_in_clips_to_the_window() {
        let mut s = IntervalSet::new();
        s.insert(0, 10);
        s.insert(20, 30);
        // [5, 25) holds 5..10 and 20..25: 10 offsets.
        assert_eq!(s.count_in(5, 25), 10);
        assert_eq!(s.count_in(10, 20), 0);
        assert_eq!(s.count_in(0, 100), 20);
        assert_eq!(s.max_end(), 30);
    }
}
