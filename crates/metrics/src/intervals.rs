//! A set of `u64` offsets stored as disjoint half-open intervals: which offsets of a partition
//! were processed at least once.

use std::collections::BTreeMap;

/// Disjoint, non-adjacent half-open intervals `[start, end)`, keyed by start. The highest span
/// is kept out of the map (`tail`): in-order reads extend it without walking the tree, which
/// was the largest cost of the metrics fold at 10,000 partitions (cache misses). 48 bytes, so
/// that a partition's counts fit one cache line (the collector's `PartCounts`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IntervalSet {
    /// Every span but the highest.
    spans: BTreeMap<u64, u64>,
    /// The highest span; empty (`(0, 0)`, no span is empty) only when the set is empty.
    tail: (u64, u64),
    len: u64,
}

/// The tail of an empty set.
const NO_TAIL: (u64, u64) = (0, 0);

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
        let mut fresh = Vec::new();
        self.insert_each(start, end, |lo, hi| fresh.push((lo, hi)));
        fresh
    }

    /// Adds `[start, end)` and calls `fresh(lo, hi)` for each sub-range that was not in the
    /// set before, in order, without allocating in the common case (a range at or past the
    /// end of the set, as when a partition is read in order).
    pub fn insert_each(&mut self, start: u64, end: u64, mut fresh: impl FnMut(u64, u64)) {
        if start >= end {
            return;
        }
        match self.tail {
            NO_TAIL => {
                self.tail = (start, end);
                self.len += end - start;
                fresh(start, end);
                return;
            }
            (tail_start, tail_end) if tail_end <= start => {
                if tail_end == start {
                    self.tail = (tail_start, end);
                } else {
                    self.spans.insert(tail_start, tail_end);
                    self.tail = (start, end);
                }
                self.len += end - start;
                fresh(start, end);
                return;
            }
            (tail_start, tail_end) => {
                self.spans.insert(tail_start, tail_end);
                self.tail = NO_TAIL;
            }
        }
        let news = self.insert_general(start, end);
        self.tail = self.spans.pop_last().expect("a span was just inserted");
        for (lo, hi) in news {
            fresh(lo, hi);
        }
    }

    /// Every span in order (the map, then the tail).
    #[cfg(test)]
    fn all_spans(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.spans.iter().map(|(s, e)| (*s, *e)).chain(Some(self.tail).filter(|t| *t != NO_TAIL))
    }

    /// `insert` for a range that overlaps or precedes existing spans.
    fn insert_general(&mut self, start: u64, end: u64) -> Vec<(u64, u64)> {
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
        let clip = |(s, e): (u64, u64)| e.min(hi).saturating_sub(s.max(lo));
        let in_map: u64 = self.spans.range(from..hi).map(|(s, e)| clip((*s, *e))).sum();
        in_map + clip(self.tail) // An empty tail clips to nothing.
    }

    /// One past the largest offset (0 when empty).
    pub fn max_end(&self) -> u64 {
        self.tail.1
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
        assert_eq!(s.all_spans().count(), 1);
        assert_eq!(s.len(), 45);
    }

    #[test]
    fn appends_in_order_merge_into_one_span() {
        let mut s = IntervalSet::new();
        let mut fresh = Vec::new();
        // 0..10, then 10..15 (touching: merges), then 20..25 (a gap: a new span).
        for (a, b) in [(0, 10), (10, 15), (20, 25)] {
            s.insert_each(a, b, |lo, hi| fresh.push((lo, hi)));
        }
        assert_eq!(fresh, vec![(0, 10), (10, 15), (20, 25)]);
        assert_eq!((s.len(), s.all_spans().count()), (20, 2));
        // A redelivery of 5..22 is new only on 15..20.
        fresh.clear();
        s.insert_each(5, 22, |lo, hi| fresh.push((lo, hi)));
        assert_eq!(fresh, vec![(15, 20)]);
        assert_eq!((s.len(), s.all_spans().count()), (25, 1));
    }

    /// Random inserts against a plain set of offsets: fresh ranges, length, counts and the
    /// span representation (disjoint, non-adjacent, sorted) all agree.
    #[test]
    fn matches_a_set_of_offsets() {
        let mut x: u64 = 7;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let mut s = IntervalSet::new();
        let mut model = std::collections::BTreeSet::new();
        for _ in 0..2_000 {
            let start = next(300);
            let end = start + next(12);
            let mut fresh = Vec::new();
            s.insert_each(start, end, |lo, hi| fresh.extend(lo..hi));
            let expected: Vec<u64> = (start..end).filter(|o| !model.contains(o)).collect();
            model.extend(start..end);
            assert_eq!(fresh, expected);
            assert_eq!(s.len(), model.len() as u64);
            let (lo, hi) = (next(320), next(320));
            assert_eq!(s.count_in(lo, hi), model.range(lo..hi.max(lo)).count() as u64);
            let spans: Vec<(u64, u64)> = s.all_spans().collect();
            assert!(spans.windows(2).all(|w| w[0].1 < w[1].0), "{spans:?}");
            assert_eq!(s.max_end(), model.last().map_or(0, |m| m + 1));
        }
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
