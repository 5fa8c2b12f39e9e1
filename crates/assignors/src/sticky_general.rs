//! Kafka's client-side sticky general path (unequal subscriptions), ported from apache/kafka
//! `clients/src/main/java/org/apache/kafka/clients/consumer/internals/AbstractStickyAssignor.java`
//! (`GeneralAssignmentBuilder`, non-rack path; read at commit 1eb7644349cb, 2024-10-25):
//!
//! 1. `prepopulateCurrentAssignments`: every member whose generation is below the group's
//!    highest puts its raw owned partitions into `prevAssignment` (per partition the highest
//!    such generation, the first member in Java `HashMap` order on a tie).
//! 2. `assignOwnedPartitions`: each member keeps its resolved claims on topics it still
//!    subscribes to; a claim on a topic it no longer subscribes to sets `revocationRequired`.
//! 3. `balance`: the unassigned partitions (in `sortedAllPartitions` order: topics by their
//!    number of potential consumers, then name; partitions ascending) each go to the first
//!    member of `sortedCurrentSubscriptions` (fewest partitions, then member id) that
//!    subscribes to the topic. Topics with fewer than two potential consumers and members that
//!    cannot take part are set aside; then `performReassignments` runs over the newly assigned
//!    partitions (unless a revocation is required) and over all partitions: while the
//!    assignment is not balanced (`isBalanced`), a partition whose owner has two more than its
//!    previous-generation owner goes back to that owner; otherwise, if some potential consumer
//!    has two fewer, it goes to the least-loaded one. Each move goes through
//!    `PartitionMovements.getTheActualPartitionToBeMoved` (a move back along an earlier move
//!    of the same topic moves that partition instead). If the result is not strictly better
//!    by `getBalanceScore` than before the reassignments (and the group was not empty), the
//!    reassignments are undone.
//!
//! Known departures: Kafka's `maxGeneration` is a field of the assignor instance and is never
//! reset, so it may remember a generation from an earlier call; here it is the highest of this
//! input. A previous owner no longer subscribed to the partition's topic (or set aside) is not
//! given the partition back (Kafka would assign it, or fail on the missing entry).

use crate::common::{
    java_cmp, java_hashmap_order, java_string_hash, PartitionIndex, Subscriptions,
};
use crate::{GroupInput, Tp};
use std::collections::{BTreeMap, BTreeSet};

/// The general sticky assignment: per member, the global indices it is assigned.
///
/// `kept[m]` are member `m`'s resolved claims (generation conflicts settled, KAFKA-12984);
/// `revocation_required` says a member claimed a partition of a topic it no longer subscribes
/// to.
pub(crate) fn assign(
    input: &GroupInput,
    ix: &PartitionIndex,
    subs: &Subscriptions,
    kept: &[Vec<usize>],
    revocation_required: bool,
) -> Vec<Vec<usize>> {
    let mut b = Builder::new(input, ix, subs);
    for (m, list) in kept.iter().enumerate() {
        for &p in list {
            if subs.has(m, ix.topic_of(p)) {
                b.owner[p] = Some(m);
                b.counts[m] += 1;
            }
        }
    }
    let prev = prev_assignment(input, ix);
    let unassigned: Vec<usize> =
        b.sorted_all.iter().copied().filter(|&p| b.owner[p].is_none()).collect();
    for m in 0..b.n {
        b.sorted.insert((b.counts[m], b.rank[m]));
    }
    b.balance(&prev, unassigned, revocation_required);
    let mut per_member = vec![Vec::new(); b.n];
    for (p, owner) in b.owner.iter().enumerate() {
        if let Some(m) = owner {
            per_member[*m].push(p);
        }
    }
    per_member
}

/// `prepopulateCurrentAssignments`: per partition, the member of the highest generation below
/// the group's maximum that lists it as owned (first in `HashMap` order on a tie). A member
/// without a generation counts as generation -1 (`DEFAULT_GENERATION`).
fn prev_assignment(input: &GroupInput, ix: &PartitionIndex) -> Vec<Option<(usize, i32)>> {
    let max_generation = input.members.iter().map(|m| m.generation).max().unwrap_or(-1).max(-1);
    let mut prev: Vec<Option<(usize, i32)>> = vec![None; ix.total()];
    let ids: Vec<&str> = input.members.iter().map(|m| m.id.as_str()).collect();
    for m in java_hashmap_order(&ids) {
        let generation = input.members[m].generation;
        if generation >= max_generation {
            continue;
        }
        for &tp in &input.members[m].owned {
            let Some(p) = ix.index(tp) else { continue };
            if prev[p].is_none_or(|(_, g)| generation > g) {
                prev[p] = Some((m, generation));
            }
        }
    }
    prev
}

/// The state of one `GeneralAssignmentBuilder` run.
struct Builder<'a> {
    ix: &'a PartitionIndex,
    subs: &'a Subscriptions,
    n: usize,
    /// Member id rank (Java `compareTo` order) of each member, and the member of each rank.
    rank: Vec<usize>,
    by_rank: Vec<usize>,
    /// `topic2AllPotentialConsumers`, in input member order (only its sizes and members
    /// matter).
    potential: Vec<Vec<usize>>,
    /// `getMaxAssignmentSize` of each member.
    max_size: Vec<usize>,
    /// `sortedAllPartitions`.
    sorted_all: Vec<usize>,
    owner: Vec<Option<usize>>,
    counts: Vec<usize>,
    /// `sortedCurrentSubscriptions`: (partition count, id rank) of the members taking part.
    sorted: BTreeSet<(usize, usize)>,
    /// Members set aside by `canConsumerParticipateInReassignment` (the `fixedAssignments`).
    fixed: Vec<bool>,
    movements: Movements,
}

impl<'a> Builder<'a> {
    fn new(input: &GroupInput, ix: &'a PartitionIndex, subs: &'a Subscriptions) -> Builder<'a> {
        let n = input.members.len();
        let mut by_rank: Vec<usize> = (0..n).collect();
        by_rank.sort_by(|&a, &b| java_cmp(&input.members[a].id, &input.members[b].id));
        let mut rank = vec![0; n];
        for (r, &m) in by_rank.iter().enumerate() {
            rank[m] = r;
        }
        let topic_count = input.topics.len() as u32;
        let potential: Vec<Vec<usize>> =
            (0..topic_count).map(|t| (0..n).filter(|&m| subs.has(m, t)).collect()).collect();
        let max_size = (0..n)
            .map(|m| (0..topic_count).filter(|&t| subs.has(m, t)).map(|t| ix.range(t).len()).sum())
            .collect();
        // `TopicComparator`: fewer potential consumers first, then topic name.
        let mut topics: Vec<u32> = (0..topic_count).collect();
        topics.sort_by(|&a, &b| {
            potential[a as usize].len().cmp(&potential[b as usize].len()).then_with(|| {
                java_cmp(&input.topics[a as usize].name, &input.topics[b as usize].name)
            })
        });
        let sorted_all = topics.iter().flat_map(|&t| ix.range(t)).collect();
        let topic_hashes = input.topics.iter().map(|t| java_string_hash(&t.name)).collect();
        Builder {
            ix,
            subs,
            n,
            rank,
            by_rank,
            potential,
            max_size,
            sorted_all,
            owner: vec![None; ix.total()],
            counts: vec![0; n],
            sorted: BTreeSet::new(),
            fixed: vec![false; n],
            movements: Movements { topic_hashes, ..Movements::default() },
        }
    }

    fn topic(&self, p: usize) -> usize {
        self.ix.topic_of(p) as usize
    }

    /// Changes a member's partition count, keeping `sorted` in step.
    fn set_count(&mut self, m: usize, count: usize) {
        let in_sorted = self.sorted.remove(&(self.counts[m], self.rank[m]));
        self.counts[m] = count;
        if in_sorted {
            self.sorted.insert((count, self.rank[m]));
        }
    }

    /// The first member of `sortedCurrentSubscriptions` subscribed to topic `t`.
    fn least_loaded_subscriber(&self, t: u32) -> Option<usize> {
        self.sorted.iter().map(|&(_, r)| self.by_rank[r]).find(|&m| self.subs.has(m, t))
    }

    /// `balance`.
    fn balance(
        &mut self,
        prev: &[Option<(usize, i32)>],
        mut unassigned: Vec<usize>,
        revocation_required: bool,
    ) {
        let initializing = self.sorted.last().is_some_and(|&(count, _)| count == 0);
        // `maybeAssign` (no rack matching).
        for &p in &unassigned {
            let t = self.topic(p) as u32;
            if let Some(m) = self.least_loaded_subscriber(t) {
                self.owner[p] = Some(m);
                self.set_count(m, self.counts[m] + 1);
            }
        }
        // Topics with fewer than two potential consumers are fixed.
        let movable = |b: &Builder, p: usize| b.potential[b.topic(p)].len() >= 2;
        let mut reassignable = std::mem::take(&mut self.sorted_all);
        reassignable.retain(|&p| movable(self, p));
        unassigned.retain(|&p| movable(self, p));
        let mut holds_movable = vec![false; self.n];
        for (p, owner) in self.owner.iter().enumerate() {
            if let Some(m) = *owner {
                holds_movable[m] |= movable(self, p);
            }
        }
        for m in 0..self.n {
            if !self.can_participate(m, &holds_movable) {
                self.sorted.remove(&(self.counts[m], self.rank[m]));
                self.fixed[m] = true;
            }
        }
        let before = (self.owner.clone(), self.counts.clone());
        let score_before = self.balance_score();
        if !revocation_required {
            self.perform_reassignments(&unassigned, prev);
        }
        let performed = self.perform_reassignments(&reassignable, prev);
        if !initializing && performed && self.balance_score() >= score_before {
            (self.owner, self.counts) = before;
        }
    }

    /// `canConsumerParticipateInReassignment`.
    fn can_participate(&self, m: usize, holds_movable: &[bool]) -> bool {
        self.counts[m] < self.max_size[m] || holds_movable[m]
    }

    /// `getBalanceScore` over the members taking part: the sum of |a - b| over pairs.
    fn balance_score(&self) -> usize {
        let mut counts: Vec<usize> =
            (0..self.n).filter(|&m| !self.fixed[m]).map(|m| self.counts[m]).collect();
        counts.sort_unstable();
        // Sorted ascending: element i is larger than the i before it.
        counts.iter().enumerate().map(|(i, &c)| c * i).sum::<usize>()
            - counts.iter().enumerate().map(|(i, &c)| c * (counts.len() - 1 - i)).sum::<usize>()
    }

    /// `isBalanced`.
    fn is_balanced(&self) -> bool {
        let (Some(&(min, _)), Some(&(max, _))) = (self.sorted.first(), self.sorted.last()) else {
            return true;
        };
        if min + 1 >= max {
            return true;
        }
        for &(count, r) in &self.sorted {
            let m = self.by_rank[r];
            if count == self.max_size[m] {
                continue;
            }
            for t in 0..self.potential.len() as u32 {
                if !self.subs.has(m, t) {
                    continue;
                }
                for p in self.ix.range(t) {
                    let Some(other) = self.owner[p] else { continue };
                    if other != m && !self.fixed[other] && count + 1 < self.counts[other] {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// `performReassignments`: true when some partition moved.
    fn perform_reassignments(
        &mut self,
        partitions: &[usize],
        prev: &[Option<(usize, i32)>],
    ) -> bool {
        let mut performed = false;
        // Every move lowers the sum of squared counts, so the rounds are bounded.
        loop {
            let mut modified = false;
            for &p in partitions {
                if self.is_balanced() {
                    break;
                }
                let Some(consumer) = self.owner[p] else { continue };
                let t = self.topic(p);
                if let Some((prev_owner, _)) = prev[p] {
                    let eligible = !self.fixed[prev_owner] && self.subs.has(prev_owner, t as u32);
                    if eligible && self.counts[consumer] > self.counts[prev_owner] + 1 {
                        self.reassign(p, prev_owner);
                        performed = true;
                        modified = true;
                        continue;
                    }
                }
                let better = self.potential[t]
                    .iter()
                    .any(|&o| !self.fixed[o] && self.counts[consumer] > self.counts[o] + 1);
                if better {
                    let to = self
                        .least_loaded_subscriber(t as u32)
                        .expect("a member with fewer partitions subscribes to the topic");
                    self.reassign(p, to);
                    performed = true;
                    modified = true;
                }
            }
            if !modified {
                return performed;
            }
        }
    }

    /// `reassignPartition(partition, newConsumer)` and `processPartitionMovement`.
    fn reassign(&mut self, p: usize, to: usize) {
        let from = self.owner[p].expect("an assigned partition");
        let topic = self.ix.topic_of(p);
        let moved = self.movements.actual_partition_to_move(p, topic, from, to);
        let old = self.owner[moved].expect("an assigned partition");
        self.movements.move_partition(self.ix, moved, topic, old, to);
        self.owner[moved] = Some(to);
        self.set_count(old, self.counts[old] - 1);
        self.set_count(to, self.counts[to] + 1);
    }
}

/// Kafka's `PartitionMovements`: per partition its (source, destination) since the start of
/// the run, and per topic and pair the partitions that moved so (a Java `HashSet`, whose
/// iteration order `getTheActualPartitionToBeMoved` depends on).
#[derive(Default)]
struct Movements {
    topic_hashes: Vec<i32>,
    by_partition: BTreeMap<usize, (usize, usize)>,
    by_pair: BTreeMap<(u32, usize, usize), JavaHashSet>,
}

impl Movements {
    /// `getTheActualPartitionToBeMoved`.
    fn actual_partition_to_move(&self, p: usize, topic: u32, from: usize, to: usize) -> usize {
        let mut old = from;
        if let Some(&(src, _)) = self.by_partition.get(&p) {
            old = src;
        }
        match self.by_pair.get(&(topic, to, old)) {
            Some(set) => set.first(),
            None => p,
        }
    }

    /// `movePartition`.
    fn move_partition(
        &mut self,
        ix: &PartitionIndex,
        p: usize,
        topic: u32,
        from: usize,
        to: usize,
    ) {
        match self.by_partition.remove(&p) {
            Some((src, dst)) => {
                let key = (topic, src, dst);
                if let Some(set) = self.by_pair.get_mut(&key) {
                    set.remove(p);
                    if set.is_empty() {
                        self.by_pair.remove(&key);
                    }
                }
                if src != to {
                    self.add(ix, p, topic, src, to);
                }
            }
            None => self.add(ix, p, topic, from, to),
        }
    }

    /// `addPartitionMovementRecord`.
    fn add(&mut self, ix: &PartitionIndex, p: usize, topic: u32, src: usize, dst: usize) {
        self.by_partition.insert(p, (src, dst));
        let hash = self.tp_hash(ix.tp(p));
        self.by_pair.entry((topic, src, dst)).or_default().insert(p, hash);
    }

    /// `TopicPartition.hashCode()`: `31 * (31 + partition) + topic.hashCode()`.
    fn tp_hash(&self, tp: Tp) -> i32 {
        31i32
            .wrapping_mul(31i32.wrapping_add(tp.partition as i32))
            .wrapping_add(self.topic_hashes[tp.topic as usize])
    }
}

/// Enough of a `java.util.HashSet` (created empty, capacity 16, load factor 3/4) to know its
/// first element: the one in the lowest bucket, the earliest inserted within it.
#[derive(Default)]
struct JavaHashSet {
    /// (partition, hash, insertion sequence).
    entries: Vec<(usize, i32, u64)>,
    capacity: usize,
    next_seq: u64,
}

impl JavaHashSet {
    fn insert(&mut self, p: usize, hash: i32) {
        if self.entries.iter().any(|e| e.0 == p) {
            return;
        }
        self.capacity = self.capacity.max(16);
        self.entries.push((p, hash, self.next_seq));
        self.next_seq += 1;
        if self.entries.len() * 4 > self.capacity * 3 {
            self.capacity *= 2;
        }
    }

    fn remove(&mut self, p: usize) {
        self.entries.retain(|e| e.0 != p);
    }

    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The first element in iteration order (`iterator().next()`).
    fn first(&self) -> usize {
        let bucket = |h: i32| {
            let h = h as u32;
            ((h ^ (h >> 16)) as usize) & (self.capacity - 1)
        };
        self.entries
            .iter()
            .min_by_key(|&&(_, h, seq)| (bucket(h), seq))
            .map(|e| e.0)
            .expect("a movement set is never empty")
    }
}
