//! KIP-848's server-side `UniformAssignor` (the broker's default `group.remote.assignor`).
//!
//! The current assignment is each member's `owned` list (the coordinator's view; see
//! [`crate::common::server_current`]). With identical subscriptions this follows apache/kafka
//! `group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/OptimizedUniformAssignmentBuilder.java`:
//! `min = P / N`, `P % N` members may get one extra. Each member (in member-id order; Kafka
//! iterates the group's member map) keeps up to `min` of its current partitions, plus one more
//! if it had more than `min` and extras remain; members still below `min`, or exactly at it,
//! become "potentially unfilled" with their remaining count. The unassigned partitions, sorted,
//! are then dealt over a round-robin queue of those members (in Java `HashMap` order of their
//! ids, as Kafka builds the queue from `potentiallyUnfilledMembers.keySet()`): a member below
//! `min` takes one; a member at `min` takes one only while extras remain and then leaves the
//! queue. Heterogeneous subscriptions run [`crate::uniform_heterogeneous`], a port of Kafka's
//! `UniformHeterogeneousAssignmentBuilder`.

use crate::common::{
    by_member_id_into, fill_assignment, java_hashmap_order_into, reset_lists, JavaHashmapScratch,
    PartitionIndex, Subscriptions,
};
use crate::uniform_heterogeneous;
use crate::{GroupAssignment, GroupInput, Tp};
use std::collections::VecDeque;
use std::ops::Range;

/// The uniform assignment of `input`.
pub(crate) fn assign(input: &GroupInput) -> GroupAssignment {
    let mut out = GroupAssignment::default();
    assign_into(input, &mut Scratch::default(), &mut out);
    out
}

/// The uniform assignment of `input` into `out` (its lists are cleared and reused), with the
/// working buffers of `scratch`: a KIP-848 coordinator bumps its epoch thousands of times an
/// hour, and one allocation per member and step was a fifth of the assignor's time.
pub(crate) fn assign_into(input: &GroupInput, scratch: &mut Scratch, out: &mut GroupAssignment) {
    let ix = PartitionIndex::new(&input.topics);
    let mut subs = std::mem::take(&mut scratch.subs);
    subs.fill(input);
    by_member_id_into(&input.members, &mut scratch.order);
    scratch.fill_current(input, &ix, &subs);
    if input.members.is_empty() {
        out.partitions.clear();
    } else if subs.all_equal() {
        homogeneous(input, &ix, &subs, scratch, out);
    } else {
        let current = scratch.current_lists(input.members.len());
        fill_assignment(&ix, uniform_heterogeneous::assign(input, &ix, &subs, &current), out);
    }
    scratch.subs = subs;
}

/// The buffers of one uniform assignment, kept for the next (their contents are not).
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    /// Who subscribes to what (taken out while an assignment reads it).
    subs: Subscriptions,
    /// Member indices in member-id order.
    order: Vec<usize>,
    /// Per global partition index: claimed by a member's current assignment.
    taken: Vec<bool>,
    /// The current assignments (global index and partition), one ascending run per member.
    current: Vec<(usize, Tp)>,
    /// Per member (input order): its run in `current`.
    spans: Vec<Range<usize>>,
    /// Per global partition index: kept by its current owner.
    assigned: Vec<bool>,
    /// The potentially unfilled members with their remaining count, in member-id order.
    unfilled: Vec<(usize, usize)>,
    /// The buffers of the Java `HashMap` order.
    hash_scratch: JavaHashmapScratch,
    /// The unfilled members (indices into `unfilled`) in `HashMap` order.
    hash_order: Vec<usize>,
    /// The round-robin of the dealing.
    queue: VecDeque<usize>,
    /// Per member: what it still needs (see [`Dealing::remaining`]).
    remaining: Vec<Option<usize>>,
}

impl Scratch {
    /// [`crate::common::server_current`] as runs of `current` (`spans[m]` for member `m`):
    /// each member's `owned` partitions that exist and belong to a topic it subscribes to,
    /// each kept by the first member in id order that lists it, ascending.
    fn fill_current(&mut self, input: &GroupInput, ix: &PartitionIndex, subs: &Subscriptions) {
        self.taken.clear();
        self.taken.resize(ix.total(), false);
        self.current.clear();
        self.current.reserve(input.members.iter().map(|m| m.owned.len()).sum());
        self.spans.clear();
        self.spans.resize(input.members.len(), 0..0);
        for &m in &self.order {
            let start = self.current.len();
            let mut ascending = true;
            for &tp in &input.members[m].owned {
                let Some(idx) = ix.index(tp) else { continue };
                if subs.has(m, tp.topic) && !self.taken[idx] {
                    self.taken[idx] = true;
                    if let Some(&(last, _)) = self.current[start..].last() {
                        ascending &= last < idx;
                    }
                    self.current.push((idx, tp));
                }
            }
            if !ascending {
                // Indices are distinct (taken once): any sort gives the same order.
                self.current[start..].sort_unstable_by_key(|&(idx, _)| idx);
            }
            self.spans[m] = start..self.current.len();
        }
    }

    /// The current assignments as one list of global indices per member (the general
    /// assignor's input).
    fn current_lists(&self, n: usize) -> Vec<Vec<usize>> {
        (0..n)
            .map(|m| self.current[self.spans[m].clone()].iter().map(|&(i, _)| i).collect())
            .collect()
    }

    /// Members of `unfilled` in the iteration order of a Java `HashMap` keyed by their ids
    /// (see [`crate::common::java_hashmap_order`]; equal buckets keep insertion order) into
    /// `queue`, and their remaining counts into `remaining` (`n` members).
    fn fill_round_robin(&mut self, input: &GroupInput, n: usize) {
        let ids = self.unfilled.iter().map(|&(m, _)| input.members[m].id.as_str());
        java_hashmap_order_into(ids, &mut self.hash_scratch, &mut self.hash_order);
        self.queue.clear();
        self.queue.extend(self.hash_order.iter().map(|&i| self.unfilled[i].0));
        self.remaining.clear();
        self.remaining.resize(n, None);
        for &(m, r) in &self.unfilled {
            self.remaining[m] = Some(r);
        }
    }
}

/// `OptimizedUniformAssignmentBuilder.buildAssignment` for identical subscriptions, into
/// `out` (one sorted list per member).
fn homogeneous(
    input: &GroupInput,
    ix: &PartitionIndex,
    subs: &Subscriptions,
    scratch: &mut Scratch,
    out: &mut GroupAssignment,
) {
    let n = input.members.len();
    let topics = || (0..input.topics.len() as u32).filter(|&t| subs.has(0, t));
    let total: usize = topics().map(|t| ix.range(t).len()).sum();
    let min_quota = total / n;
    let mut extras = total % n;
    reset_lists(&mut out.partitions, n);
    for list in &mut out.partitions {
        list.reserve(min_quota + 1); // A no-op on buffers kept from an earlier call.
    }
    scratch.assigned.clear();
    scratch.assigned.resize(ix.total(), false);
    // Members with their remaining count to reach min, in insertion order.
    scratch.unfilled.clear();
    for &m in &scratch.order {
        let valid = &scratch.current[scratch.spans[m].clone()];
        let retained = valid.len().min(min_quota);
        let mut keep = retained;
        if valid.len() > min_quota && extras > 0 {
            keep += 1;
            extras -= 1;
        }
        for &(p, tp) in &valid[..keep] {
            out.partitions[m].push(tp);
            scratch.assigned[p] = true;
        }
        if valid.len() <= min_quota {
            scratch.unfilled.push((m, min_quota - valid.len()));
        }
    }
    scratch.fill_round_robin(input, n);
    let queue = std::mem::take(&mut scratch.queue);
    let remaining = std::mem::take(&mut scratch.remaining);
    let mut dealing = Dealing { queue, remaining, extras };
    for t in topics() {
        let range = ix.range(t);
        for p in range.clone().filter(|&p| !scratch.assigned[p]) {
            if let Some(m) = dealing.taker() {
                out.partitions[m].push(Tp { topic: t, partition: (p - range.start) as u32 });
            }
        }
    }
    (scratch.queue, scratch.remaining) = (dealing.queue, dealing.remaining);
    // Each list is its kept partitions, ascending, then the dealt ones, ascending (`Tp`
    // order is global index order).
    for list in &mut out.partitions {
        if !list.windows(2).all(|w| w[0] < w[1]) {
            list.sort_unstable();
        }
    }
}

/// The round-robin of `assignRemainingPartitions` over the potentially unfilled members.
struct Dealing {
    /// Members still in the round-robin, the next one first.
    queue: VecDeque<usize>,
    /// Per member: the partitions it still needs to reach `min` (`None`: out of the queue).
    remaining: Vec<Option<usize>>,
    /// Members that may still go one above `min`.
    extras: usize,
}

impl Dealing {
    /// The member that takes the next partition: the first in the round-robin that will
    /// (`None` after a full turn without one). A member at `min` once no extras are left can
    /// never take one again: it leaves the queue when reached, instead of being passed over
    /// at every partition (the members reached, in order, are the same; after a member
    /// leaves the group, every other member at `min` was passed over for each of its
    /// partitions).
    fn taker(&mut self) -> Option<usize> {
        let mut passed = 0; // Members passed over and put back this turn.
        while passed < self.queue.len() {
            let m = self.queue.pop_front().expect("passed < len");
            let took = take_one(&mut self.remaining[m], &mut self.extras);
            if self.remaining[m] == Some(0) && self.extras == 0 {
                self.remaining[m] = None;
            }
            if self.remaining[m].is_some() {
                self.queue.push_back(m);
                passed += usize::from(!took);
            }
            if took {
                return Some(m);
            }
        }
        None
    }
}

/// `maybeAssignPartitionToMember`: whether the member takes the partition; `None` removes it
/// from the potentially unfilled members.
fn take_one(remaining: &mut Option<usize>, extras: &mut usize) -> bool {
    match *remaining {
        Some(r) if r > 0 => {
            *remaining = if r == 1 && *extras == 0 { None } else { Some(r - 1) };
            true
        }
        Some(0) if *extras > 0 => {
            *extras -= 1;
            *remaining = None;
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Kafka's round-robin as written in `assignRemainingPartitions`: every member reached is
    /// offered the partition, and put back unless it left (the reference of [`Dealing`]).
    fn deal_by_rotation(d: &mut Dealing, partitions: usize) -> Vec<Option<usize>> {
        let mut takers = Vec::new();
        for _ in 0..partitions {
            let (mut i, mut taker) = (0, None);
            while i < d.queue.len() && taker.is_none() {
                let m = d.queue.pop_front().expect("i < len");
                if d.remaining[m].is_some() && take_one(&mut d.remaining[m], &mut d.extras) {
                    taker = Some(m);
                }
                if d.remaining[m].is_some() {
                    d.queue.push_back(m);
                }
                i += 1;
            }
            takers.push(taker);
        }
        takers
    }

    proptest! {
        /// Dropping the members that can never take a partition again changes no taker.
        #[test]
        fn dealing_gives_every_partition_to_kafkas_taker(
            needs in proptest::collection::vec(0usize..4, 0..30),
            extras in 0usize..12,
            partitions in 0usize..80,
        ) {
            let n = needs.len();
            let dealing = || Dealing {
                queue: (0..n).collect(),
                remaining: needs.iter().map(|&r| Some(r)).collect(),
                extras,
            };
            let mut reference = dealing();
            let expected = deal_by_rotation(&mut reference, partitions);
            let mut d = dealing();
            let takers: Vec<Option<usize>> = (0..partitions).map(|_| d.taker()).collect();
            prop_assert_eq!(takers, expected);
            prop_assert_eq!(d.extras, reference.extras);
        }
    }

    /// Members 0..3 at `min` (0 needed), member 3 needs 2, no extras: the first partition
    /// passes over 0, 1, 2 (they leave) and goes to 3, the second to 3 again, the third to
    /// nobody (3 is full and left; the queue is empty).
    #[test]
    fn members_at_min_leave_once_no_extras_are_left() {
        let mut d = Dealing {
            queue: (0..4).collect(),
            remaining: vec![Some(0), Some(0), Some(0), Some(2)],
            extras: 0,
        };
        assert_eq!(d.taker(), Some(3));
        assert_eq!(d.queue, VecDeque::from(vec![3]));
        assert_eq!(d.taker(), Some(3));
        assert_eq!(d.taker(), None);
        assert!(d.queue.is_empty());
    }

    /// The uniform assignor as it was before [`assign_into`] (a per-member list built and
    /// converted at each step), kept as the reference the buffered version must equal.
    mod reference {
        use super::super::Dealing;
        use crate::common::{
            by_member_id, java_hashmap_order, server_current, to_assignment, PartitionIndex,
            Subscriptions,
        };
        use crate::uniform_heterogeneous;
        use crate::{GroupAssignment, GroupInput};
        use std::collections::VecDeque;

        pub(super) fn assign(input: &GroupInput) -> GroupAssignment {
            let ix = PartitionIndex::new(&input.topics);
            let subs = Subscriptions::new(input);
            let order = by_member_id(&input.members);
            let current = server_current(input, &ix, &subs, &order);
            let per_member = if input.members.is_empty() {
                Vec::new()
            } else if subs.all_equal() {
                homogeneous(input, &ix, &subs, &order, &current)
            } else {
                uniform_heterogeneous::assign(input, &ix, &subs, &current)
            };
            to_assignment(&ix, per_member)
        }

        fn homogeneous(
            input: &GroupInput,
            ix: &PartitionIndex,
            subs: &Subscriptions,
            order: &[usize],
            current: &[Vec<usize>],
        ) -> Vec<Vec<usize>> {
            let n = input.members.len();
            let topics = subs.topics_of(0);
            let total: usize = topics.iter().map(|&t| ix.range(t).len()).sum();
            let min_quota = total / n;
            let mut extras = total % n;
            let mut per_member: Vec<Vec<usize>> = vec![Vec::new(); n];
            let mut assigned = vec![false; ix.total()];
            let mut unfilled: Vec<(usize, usize)> = Vec::new();
            for &m in order {
                let valid = &current[m];
                let mut keep = valid.len().min(min_quota);
                if valid.len() > min_quota && extras > 0 {
                    keep += 1;
                    extras -= 1;
                }
                for &p in &valid[..keep] {
                    per_member[m].push(p);
                    assigned[p] = true;
                }
                if valid.len() <= min_quota {
                    unfilled.push((m, min_quota - valid.len()));
                }
            }
            let ids: Vec<&str> =
                unfilled.iter().map(|&(m, _)| input.members[m].id.as_str()).collect();
            let mut remaining = vec![None; n];
            for &(m, r) in &unfilled {
                remaining[m] = Some(r);
            }
            let queue: VecDeque<usize> =
                java_hashmap_order(&ids).into_iter().map(|i| unfilled[i].0).collect();
            let unassigned = topics.iter().flat_map(|&t| ix.range(t)).filter(|&p| !assigned[p]);
            let mut dealing = Dealing { queue, remaining, extras };
            for p in unassigned {
                if let Some(m) = dealing.taker() {
                    per_member[m].push(p);
                }
            }
            per_member
        }
    }

    /// One random group: partition counts per topic, per member an id, a subscription mask
    /// (ignored when `equal`) and owned partitions as (topic, partition) claims, possibly
    /// out of range, unsubscribed, claimed twice or unsorted.
    type GroupSpec = (Vec<u32>, bool, Vec<(String, u8, Vec<(u32, u32)>)>);

    fn group_spec() -> impl Strategy<Value = GroupSpec> {
        let member =
            ("[a-dé]{1,3}", 1u8..16, proptest::collection::vec((0u32..4, 0u32..40), 0..12));
        (
            proptest::collection::vec(0u32..40, 1..=4),
            any::<bool>(),
            proptest::collection::vec(member, 0..24),
        )
    }

    fn build(spec: &GroupSpec) -> GroupInput {
        let (partitions, equal, members) = spec;
        let topics: Vec<crate::Topic> = partitions
            .iter()
            .enumerate()
            .map(|(i, &p)| crate::Topic { name: format!("t{i}"), partitions: p })
            .collect();
        let nt = topics.len() as u32;
        let first_mask = members.first().map_or(1, |m| m.1);
        let members = members
            .iter()
            .map(|(id, mask, owned)| {
                let mask = if *equal { first_mask } else { *mask };
                crate::Member {
                    id: id.clone(),
                    topics: (0..nt).filter(|t| mask & (1 << t) != 0).collect(),
                    owned: owned
                        .iter()
                        .map(|&(topic, partition)| Tp { topic, partition })
                        .collect(),
                    ..crate::Member::default()
                }
            })
            .collect();
        GroupInput { topics, members, source_count: None }
    }

    /// `input` after a rebalance: every member owns what `assignment` gave it, sorted, then
    /// the member at `leaver` (if any) is replaced by a newcomer owning nothing.
    fn next_round(
        mut input: GroupInput,
        assignment: &GroupAssignment,
        leaver: usize,
    ) -> GroupInput {
        for (member, owned) in input.members.iter_mut().zip(&assignment.partitions) {
            member.owned.clone_from(owned);
        }
        if let Some(m) = input.members.get_mut(leaver) {
            m.id = format!("new-{}", m.id);
            m.owned.clear();
        }
        input
    }

    proptest! {
        /// The buffered assignor gives the reference's assignment, on random groups and on
        /// the rebalances that follow them, with one scratch and one output reused throughout
        /// (left over from larger or smaller groups).
        #[test]
        fn assign_into_equals_the_reference(
            specs in proptest::collection::vec(group_spec(), 1..4),
            leaver in 0usize..24,
        ) {
            let mut scratch = Scratch::default();
            let mut out = GroupAssignment::default();
            for spec in &specs {
                let mut input = build(spec);
                for _ in 0..3 {
                    let expected = reference::assign(&input);
                    assign_into(&input, &mut scratch, &mut out);
                    prop_assert_eq!(&out, &expected);
                    prop_assert_eq!(&assign(&input), &expected);
                    input = next_round(input, &expected, leaver);
                }
            }
        }
    }

    /// 4 members m0..m3 over one topic of 10 partitions, m3 leaving for a newcomer: min 2,
    /// 2 extras. m0 (owned 0 1 2) keeps 0 1 2 (extra 1), m1 (3 4 5) keeps 3 4 5 (extra 2), m2
    /// (6 7) keeps 6 7, the newcomer n (8 9 owned by nobody) gets 8 and 9; with the scratch
    /// of a first call on a different group, the same.
    #[test]
    fn reused_buffers_give_the_sticky_result() {
        let member = |id: &str, owned: &[u32]| crate::Member {
            id: id.into(),
            topics: vec![0],
            owned: owned.iter().map(|&partition| Tp { topic: 0, partition }).collect(),
            ..crate::Member::default()
        };
        let topics = vec![crate::Topic { name: "t".into(), partitions: 10 }];
        let input = GroupInput {
            topics,
            members: vec![
                member("m0", &[0, 1, 2]),
                member("m1", &[5, 3, 4]),
                member("m2", &[6, 7]),
                member("n", &[]),
            ],
            source_count: None,
        };
        let mut scratch = Scratch::default();
        let mut out = GroupAssignment::default();
        let mut other = input.clone();
        other.members.truncate(1);
        assign_into(&other, &mut scratch, &mut out);
        assert_eq!(out.partitions.len(), 1);
        assign_into(&input, &mut scratch, &mut out);
        let tps =
            |ps: &[u32]| ps.iter().map(|&partition| Tp { topic: 0, partition }).collect::<Vec<_>>();
        assert_eq!(
            out.partitions,
            vec![tps(&[0, 1, 2]), tps(&[3, 4, 5]), tps(&[6, 7]), tps(&[8, 9])]
        );
    }
}
