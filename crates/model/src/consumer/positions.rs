//! A member's owned partitions and their fetch positions, as a vector sorted by partition.
//!
//! A member owns a handful of partitions (ten in the reference scenario) and every poll-loop
//! step walks all of them (the fetch, the wake-up, the fast stepping's signature), so a sorted
//! vector beats a `BTreeMap` here: the walk is a slice, the fetch rotation two slices. The
//! interface is the map's (iteration in partition order), so the consumer reads the same.
//! A member may also own thousands of partitions (the first of a group owns them all): changes
//! of many partitions at once go through [`Positions::add_new`] and [`Positions::retain`],
//! which cost one pass (and a sort), not a shift of the vector per partition.
//!
//! Beside each position the table keeps the arrival time of the record at it, once asked
//! ([`Seen`]): a poll that finds nothing new reads every owned partition's next arrival, and
//! the arrival of an offset never changes, so the fetch asks the log only when the position
//! moved. It also keeps the earliest of those arrivals when the last fetch left every readable
//! partition with nothing new ([`Positions::earliest`]): until then a fetch finds nothing without
//! walking them (a poll that waits for records fetches again at every wake-up). Any change of
//! the table forgets it. And it knows when every arrival is seen at its position (`fresh`,
//! kept by the fetch's walk of a few partitions, forgotten by any other change): that walk
//! then compares the arrivals without checking each against its position. The caches are not
//! state: equality compares partitions and positions only.

use assignors::Tp;
use sim_core::SimTime;

/// A run of (partition, position) entries.
type Entries = [(Tp, u64)];

/// The arrival time of the record at `offset` of one partition, as the log gave it
/// (`offset == NOT_SEEN`: not asked since the entry was made).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seen {
    pub(crate) offset: u64,
    pub(crate) arrival: SimTime,
}

/// A [`Seen`] that matches no position (the fetch never asks at `u64::MAX`, `NO_POSITION`).
pub(crate) const NOT_SEEN: Seen = Seen { offset: u64::MAX, arrival: SimTime::MAX };

/// Owned partitions with their positions, sorted by partition (no partition twice), and the
/// arrival at each position once the fetch asked for it (`seen[i]` beside `entries[i]`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Positions {
    entries: Vec<(Tp, u64)>,
    seen: Vec<Seen>,
    /// Every entry's arrival is seen at its position (`seen[i].offset == entries[i].1`; a
    /// position `NO_POSITION` has `NOT_SEEN`, whose offset it is): true only after a fetch's
    /// walk that left them so ([`SeenWalk`]), until any other change. Its walk then compares
    /// the arrivals alone.
    fresh: bool,
    /// The earliest arrival at a readable position, each of them seen, when no change came
    /// since the fetch that found it (`None`: not known).
    earliest: Option<SimTime>,
}

/// A fetch's walk of a few partitions (`fetch.rs`): the entries, the arrivals seen at their
/// positions place by place, and whether each of them is seen at its position
/// ([`Positions::fresh`](Positions)), which the walk keeps true or false as it leaves them.
pub(crate) struct SeenWalk<'a> {
    pub(crate) entries: &'a mut Entries,
    pub(crate) seen: &'a mut [Seen],
    pub(crate) fresh: &'a mut bool,
}

impl PartialEq for Positions {
    fn eq(&self, other: &Positions) -> bool {
        self.entries == other.entries
    }
}

impl Eq for Positions {}

impl Positions {
    fn find(&self, tp: &Tp) -> Result<usize, usize> {
        self.entries.binary_search_by_key(tp, |e| e.0)
    }

    /// The position of `tp`, if owned.
    pub(crate) fn get(&self, tp: &Tp) -> Option<&u64> {
        self.find(tp).ok().map(|i| &self.entries[i].1)
    }

    /// The place of `tp` among the owned partitions (in partition order), if owned.
    pub(crate) fn index_of(&self, tp: &Tp) -> Option<usize> {
        self.find(tp).ok()
    }

    /// Whether `tp` is owned.
    pub(crate) fn contains_key(&self, tp: &Tp) -> bool {
        self.find(tp).is_ok()
    }

    /// Owns `added` too: partitions not owned yet, each once (debug builds check), in any
    /// order. One sort instead of an insertion each.
    pub(crate) fn add_new(&mut self, added: impl IntoIterator<Item = (Tp, u64)>) {
        self.earliest = None;
        self.fresh = false;
        let before = self.entries.len();
        self.entries.extend(added);
        let appended_in_order = self.entries[before.saturating_sub(1)..].is_sorted_by_key(|e| e.0);
        if !appended_in_order {
            self.entries.sort_unstable_by_key(|e| e.0);
            // The places moved: forget what was seen (it is asked again, with the same answer).
            self.seen.clear();
        }
        self.seen.resize(self.entries.len(), NOT_SEEN);
        debug_assert!(
            self.entries.windows(2).all(|w| w[0].0 < w[1].0),
            "a partition added twice, or one already owned"
        );
    }

    /// Keeps only the partitions for which `keep` holds.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&Tp) -> bool) {
        self.earliest = None;
        self.fresh = false;
        let mut kept = 0;
        for read in 0..self.entries.len() {
            if keep(&self.entries[read].0) {
                self.entries[kept] = self.entries[read];
                self.seen[kept] = self.seen[read];
                kept += 1;
            }
        }
        self.entries.truncate(kept);
        self.seen.truncate(kept);
    }

    /// Owns nothing.
    pub(crate) fn clear(&mut self) {
        self.earliest = None;
        self.fresh = false;
        self.entries.clear();
        self.seen.clear();
    }

    /// Partitions owned.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is owned.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// (partition, position) in partition order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Tp, &u64)> {
        self.entries.iter().map(|(tp, p)| (tp, p))
    }

    /// The partitions, in order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &Tp> {
        self.entries.iter().map(|e| &e.0)
    }

    /// The positions, in partition order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &u64> {
        self.entries.iter().map(|e| &e.1)
    }

    /// The positions, in partition order, to change.
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut u64> {
        self.earliest = None;
        self.fresh = false;
        self.entries.iter_mut().map(|e| &mut e.1)
    }

    /// The entries in rotation from the `start`-th (`start < len`): those from it on, then
    /// those before it, each with the arrivals seen at their positions, place by place:
    /// `((from, seen_from), (before, seen_before))`.
    pub(crate) fn rotation_with_seen_mut(&mut self, start: usize) -> (Rotated<'_>, Rotated<'_>) {
        self.earliest = None;
        self.fresh = false;
        debug_assert_eq!(self.entries.len(), self.seen.len(), "one seen per entry");
        let (before, from) = self.entries.split_at_mut(start);
        let (seen_before, seen_from) = self.seen.split_at_mut(start);
        ((from, seen_from), (before, seen_before))
    }

    /// The entries, the arrivals seen at their positions and whether each is seen at its
    /// position, for a fetch's walk of a few partitions (`fetch.rs`), which keeps `fresh`;
    /// like any change, it forgets the earliest arrival.
    pub(crate) fn seen_walk(&mut self) -> SeenWalk<'_> {
        self.earliest = None;
        debug_assert_eq!(self.entries.len(), self.seen.len(), "one seen per entry");
        debug_assert!(!self.fresh || self.all_seen_at_their_positions(), "fresh but not seen");
        SeenWalk { entries: &mut self.entries, seen: &mut self.seen, fresh: &mut self.fresh }
    }

    /// Whether every entry's arrival is seen at its position (what `fresh` claims).
    fn all_seen_at_their_positions(&self) -> bool {
        self.entries.iter().zip(&self.seen).all(|(e, s)| s.offset == e.1)
    }

    /// The earliest arrival at a readable position, if the last fetch saw every one of them
    /// and nothing changed since ([`Positions::set_earliest`]).
    pub(crate) fn earliest(&self) -> Option<SimTime> {
        self.earliest
    }

    /// What a fetch found: the earliest arrival at a readable position, every one of them
    /// seen (`None`: some were not).
    pub(crate) fn set_earliest(&mut self, earliest: Option<SimTime>) {
        debug_assert!(earliest.is_none_or(|e| e == self.earliest_seen()), "{earliest:?}");
        self.earliest = earliest;
    }

    /// The earliest arrival seen at a readable position (positions not seen are ignored).
    fn earliest_seen(&self) -> SimTime {
        let seen = self.entries.iter().zip(&self.seen).filter(|(e, s)| s.offset == e.1);
        seen.map(|(_, s)| s.arrival).min().unwrap_or(SimTime::MAX)
    }
}

/// Entries and the arrivals seen at their positions, place by place.
pub(crate) type Rotated<'a> = (&'a mut Entries, &'a mut [Seen]);

impl<'a> IntoIterator for &'a Positions {
    type Item = (&'a Tp, &'a u64);
    type IntoIter =
        std::iter::Map<std::slice::Iter<'a, (Tp, u64)>, fn(&'a (Tp, u64)) -> Self::Item>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(tp, p)| (tp, p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn tp(topic: u32, partition: u32) -> Tp {
        Tp { topic, partition }
    }

    proptest! {
        /// Any sequence of additions and removals of one partition leaves the entries, and
        /// gives the answers, of a `BTreeMap` doing the same.
        #[test]
        fn behaves_like_a_btree_map(ops in prop::collection::vec((0u8..3, 0u32..3, 0u32..6, 0u64..9), 0..60)) {
            let (mut vec, mut map) = (Positions::default(), BTreeMap::new());
            for (op, topic, partition, position) in ops {
                let key = tp(topic, partition);
                match op {
                    0 if !map.contains_key(&key) => {
                        vec.add_new([(key, position)]);
                        map.insert(key, position);
                    }
                    1 => {
                        vec.retain(|t| *t != key);
                        map.remove(&key);
                    }
                    _ => prop_assert_eq!(vec.get(&key), map.get(&key)),
                }
                prop_assert_eq!(vec.contains_key(&key), map.contains_key(&key));
                prop_assert_eq!(vec.len(), map.len());
                prop_assert_eq!(vec.seen.len(), vec.entries.len());
                prop_assert!(vec.iter().eq(map.iter()));
                prop_assert!((&vec).into_iter().eq(map.iter()));
            }
        }

        /// Adding new partitions in any order and keeping some: the entries of a `BTreeMap`
        /// given the same inserts and removes one by one.
        #[test]
        fn bulk_changes_equal_one_by_one(
            first in prop::collection::btree_set(0u32..40, 0..20),
            added in prop::collection::btree_set(0u32..40, 0..20),
            order in any::<prop::sample::Index>(),
            kept in prop::collection::btree_set(0u32..40, 0..40),
        ) {
            let (mut vec, mut map) = (Positions::default(), BTreeMap::new());
            vec.add_new(first.iter().map(|&p| (tp(0, p), u64::from(p))));
            map.extend(first.iter().map(|&p| (tp(0, p), u64::from(p))));
            let mut new: Vec<_> = added.difference(&first).map(|&p| (tp(0, p), 7)).collect();
            if !new.is_empty() {
                let by = order.index(new.len());
                new.rotate_left(by);
            }
            map.extend(new.iter().copied());
            vec.add_new(new);
            prop_assert!(vec.iter().eq(map.iter()));
            vec.retain(|t| kept.contains(&t.partition));
            map.retain(|t, _| kept.contains(&t.partition));
            prop_assert!(vec.iter().eq(map.iter()));
        }
    }

    /// The fetch rotation: from the second of three partitions, then the first. A change
    /// through it is the table's, and the rotation forgets the earliest arrival.
    #[test]
    fn rotation_starts_at_the_given_place() {
        let mut p = Positions::default();
        p.add_new([(tp(0, 2), 0), (tp(0, 0), 10), (tp(0, 1), 20)]);
        p.set_earliest(Some(SimTime::MAX));
        let ((from, seen_from), (before, seen_before)) = p.rotation_with_seen_mut(1);
        assert_eq!(from, &[(tp(0, 1), 20), (tp(0, 2), 0)]);
        assert_eq!(before, &[(tp(0, 0), 10)]);
        assert_eq!((seen_from.len(), seen_before.len()), (2, 1));
        from[0].1 = 21;
        assert_eq!(p.get(&tp(0, 1)), Some(&21));
        assert!(p.values().copied().eq([10, 21, 0]));
        assert_eq!(p.earliest(), None);
    }

    /// What the fetch saw at a position stays beside its partition when others go, and is
    /// forgotten when an addition reorders the places (an entry never shows another's).
    #[test]
    fn seen_arrivals_follow_their_partitions() {
        let mut p = Positions::default();
        p.add_new([(tp(0, 0), 10), (tp(0, 1), 20), (tp(0, 2), 30)]);
        {
            let ((_, seen), _) = p.rotation_with_seen_mut(0);
            assert!(seen.iter().all(|s| s.offset == NOT_SEEN.offset));
            for (i, s) in seen.iter_mut().enumerate() {
                *s = Seen { offset: 10 * (i as u64 + 1), arrival: SimTime::from_millis(i as u64) };
            }
        }
        p.retain(|t| t.partition != 1);
        let ((entries, seen), _) = p.rotation_with_seen_mut(0);
        assert_eq!(entries, &[(tp(0, 0), 10), (tp(0, 2), 30)]);
        let kept: Vec<(u64, SimTime)> = seen.iter().map(|s| (s.offset, s.arrival)).collect();
        assert_eq!(kept, [(10, SimTime::ZERO), (30, SimTime::from_millis(2))]);
        p.add_new([(tp(0, 1), 5)]);
        let ((entries, seen), _) = p.rotation_with_seen_mut(0);
        assert_eq!(entries, &[(tp(0, 0), 10), (tp(0, 1), 5), (tp(0, 2), 30)]);
        assert!(seen.iter().all(|s| s.offset == NOT_SEEN.offset));
        // Appending in order keeps what was seen.
        let mut q = Positions::default();
        q.add_new([(tp(0, 0), 1)]);
        q.rotation_with_seen_mut(0).0 .1[0] = Seen { offset: 1, arrival: SimTime::from_millis(9) };
        q.add_new([(tp(0, 4), 2)]);
        let ((_, seen), _) = q.rotation_with_seen_mut(0);
        assert_eq!((seen[0].offset, seen[1].offset), (1, NOT_SEEN.offset));
        // Equality ignores the cache.
        let mut r = Positions::default();
        r.add_new([(tp(0, 0), 1), (tp(0, 4), 2)]);
        assert_eq!(q, r);
    }
}
