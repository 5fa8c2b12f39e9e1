//! A dense map from topic partitions to per-partition values: per topic a `Vec` indexed by
//! partition, so a lookup is two indexings instead of a B-tree search. It grows as partitions
//! appear (in any order) and iterates in `(topic, partition)` order, the order of a
//! `BTreeMap<Tp, T>` with the same entries, on which every output relies.

use crate::types::Tp;
use std::ops::{Index, IndexMut};

/// Values by topic partition, present or absent per partition.
#[derive(Clone, Debug)]
pub struct TpTable<T> {
    /// `topics[topic][partition]`, `None` where no value was inserted.
    topics: Vec<Vec<Option<T>>>,
    /// Present values.
    len: usize,
}

impl<T> Default for TpTable<T> {
    fn default() -> Self {
        TpTable { topics: Vec::new(), len: 0 }
    }
}

impl<T> TpTable<T> {
    /// Makes room for `partitions` partitions of `topic` (grows only; inserts no value).
    pub fn reserve(&mut self, topic: u32, partitions: u32) {
        let topic = topic as usize;
        if self.topics.len() <= topic {
            self.topics.resize_with(topic + 1, Vec::new);
        }
        let slots = &mut self.topics[topic];
        if slots.len() < partitions as usize {
            slots.resize_with(partitions as usize, || None);
        }
    }

    /// The value of `tp`, if present.
    pub fn get(&self, tp: Tp) -> Option<&T> {
        self.topics.get(tp.topic as usize)?.get(tp.partition as usize)?.as_ref()
    }

    /// The value of `tp`, if present, mutably.
    pub fn get_mut(&mut self, tp: Tp) -> Option<&mut T> {
        self.topics.get_mut(tp.topic as usize)?.get_mut(tp.partition as usize)?.as_mut()
    }

    /// The value of `tp`, inserted with `make` first if absent.
    pub fn get_or_insert_with(&mut self, tp: Tp, make: impl FnOnce() -> T) -> &mut T {
        self.reserve(tp.topic, tp.partition + 1);
        let slot = &mut self.topics[tp.topic as usize][tp.partition as usize];
        if slot.is_none() {
            self.len += 1;
        }
        slot.get_or_insert_with(make)
    }

    /// Present values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True without values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Present values with their partitions, in `(topic, partition)` order.
    pub fn iter(&self) -> impl Iterator<Item = (Tp, &T)> {
        self.topics.iter().zip(0u32..).flat_map(|(slots, topic)| {
            slots.iter().zip(0u32..).filter_map(move |(slot, partition)| {
                slot.as_ref().map(|value| (Tp { topic, partition }, value))
            })
        })
    }

    /// Present values with their partitions, mutably, in `(topic, partition)` order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Tp, &mut T)> {
        self.topics.iter_mut().zip(0u32..).flat_map(|(slots, topic)| {
            slots.iter_mut().zip(0u32..).filter_map(move |(slot, partition)| {
                slot.as_mut().map(|value| (Tp { topic, partition }, value))
            })
        })
    }

    /// The partitions with a value, in `(topic, partition)` order.
    pub fn keys(&self) -> impl Iterator<Item = Tp> + '_ {
        self.iter().map(|(tp, _)| tp)
    }

    /// Present values in `(topic, partition)` order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.topics.iter().flatten().flatten()
    }

    /// Present values, mutably, in `(topic, partition)` order.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.topics.iter_mut().flatten().flatten()
    }
}

impl<T> Extend<(Tp, T)> for TpTable<T> {
    /// Inserts each value, replacing the one present (like `BTreeMap`'s `Extend`).
    fn extend<I: IntoIterator<Item = (Tp, T)>>(&mut self, values: I) {
        for (tp, value) in values {
            // Moved in as the new value if absent, else written over the present one.
            let mut value = Some(value);
            let slot = self.get_or_insert_with(tp, || value.take().expect("taken once"));
            if let Some(value) = value {
                *slot = value;
            }
        }
    }
}

impl<T> Index<Tp> for TpTable<T> {
    type Output = T;

    /// The value of `tp`; panics if absent (like `BTreeMap`'s `Index`).
    fn index(&self, tp: Tp) -> &T {
        self.get(tp).expect("no value for this partition")
    }
}

impl<T> IndexMut<Tp> for TpTable<T> {
    /// The value of `tp`, mutably; panics if absent.
    fn index_mut(&mut self, tp: Tp) -> &mut T {
        self.get_mut(tp).expect("no value for this partition")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn tp(topic: u32, partition: u32) -> Tp {
        Tp { topic, partition }
    }

    /// Insertions out of order, into reserved and unreserved topics and beyond the reserved
    /// partitions: the table iterates exactly like a `BTreeMap` given the same insertions.
    #[test]
    fn iterates_like_a_btreemap() {
        let mut table = TpTable::default();
        let mut map = BTreeMap::new();
        table.reserve(0, 3);
        table.reserve(1, 2);
        // Topic 2 never reserved; topic 1 grows to 6 partitions; 0-1 inserted twice.
        let inserts = [(1, 5), (0, 2), (2, 0), (0, 1), (1, 0), (0, 1), (3, 4)];
        for (i, &(t, p)) in inserts.iter().enumerate() {
            *table.get_or_insert_with(tp(t, p), || 0) += i;
            *map.entry(tp(t, p)).or_insert(0) += i;
        }
        let got: Vec<(Tp, usize)> = table.iter().map(|(k, v)| (k, *v)).collect();
        let expected: Vec<(Tp, usize)> = map.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(got, expected);
        // 0-1 got 3 + 5 = 8; six distinct partitions; in order 0-1, 0-2, 1-0, 1-5, 2-0, 3-4
        // with the values of their insertion indexes.
        assert_eq!(table[tp(0, 1)], 8);
        assert_eq!(table.len(), 6);
        assert_eq!(table.values().copied().collect::<Vec<_>>(), vec![8, 1, 4, 0, 2, 6]);
        assert_eq!(table.get(tp(0, 0)), None, "reserved but never inserted");
        assert_eq!(table.get(tp(9, 9)), None, "beyond every topic");
        table.values_mut().for_each(|v| *v += 1);
        for (k, v) in table.iter_mut() {
            *v += k.partition as usize;
        }
        // 3-4: 6 + 1 + partition 4.
        assert_eq!(table.get_mut(tp(3, 4)).copied(), Some(11));
    }

    /// `extend` replaces present values and adds absent ones, as a `BTreeMap` does.
    #[test]
    fn extends_like_a_btreemap() {
        let mut table = TpTable::default();
        let mut map = BTreeMap::new();
        let first = [(tp(0, 1), 10), (tp(2, 0), 20)];
        let second = [(tp(0, 1), 11), (tp(1, 3), 30), (tp(0, 1), 12)];
        table.extend(first);
        map.extend(first);
        table.extend(second);
        map.extend(second);
        let got: Vec<(Tp, i32)> = table.iter().map(|(k, v)| (k, *v)).collect();
        let expected: Vec<(Tp, i32)> = map.into_iter().collect();
        assert_eq!(got, expected);
        // 0-1 took its last value, 12; three partitions.
        assert_eq!((table[tp(0, 1)], table.len()), (12, 3));
    }
}
