//! KIP-848's server-side `UniformAssignor` (the broker's default `group.remote.assignor`), as
//! Apache Kafka 4.4.0 ships it (the broker `scripts/real/kafka` runs; the class structure was
//! checked with `javap` on `kafka-group-coordinator-4.4.0.jar`).
//!
//! The current assignment is each member's `owned` list (the coordinator's view; see
//! [`crate::common::server_current`]). With identical subscriptions this follows apache/kafka
//! `group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/UniformHomogeneousAssignmentBuilder.java`
//! (after KAFKA-16864, 3.8+: quotas handed out one member at a time instead of 3.7's
//! round-robin dealing, and 4.x's rule that a member below its quota gives its extra up to a
//! later member); see [`homogeneous`]. The members iterate as the broker's `GroupSpec` holds
//! them ([`crate::MemberOrder`]), the topics as a Java `HashSet` of their topic ids
//! ([`crate::TopicId`]). Heterogeneous subscriptions run [`crate::uniform_heterogeneous`], a
//! port of Kafka's `UniformHeterogeneousAssignmentBuilder`.

use crate::common::{
    by_member_id_into, fill_assignment, java_hashmap_capacity, java_hashmap_order_into,
    java_hashset_copy_capacity, java_table_order, reset_lists, JavaHashmapScratch, PartitionIndex,
    Subscriptions,
};
use crate::uniform_heterogeneous;
use crate::{GroupAssignment, GroupInput, MemberOrder, Tp};
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
        scratch.fill_iteration_order(input);
        let per_member =
            uniform_heterogeneous::assign(input, &ix, &subs, &current, &scratch.iteration);
        fill_assignment(&ix, per_member, out);
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
    /// The unfilled members with their remaining quota, in iteration order.
    unfilled: Vec<(usize, usize)>,
    /// The buffers of the Java `HashMap` order.
    hash_scratch: JavaHashmapScratch,
    /// The members in `GroupSpec.memberIds()` order.
    iteration: Vec<usize>,
    /// The subscribed topics in the order of the subscription's `HashSet<Uuid>`.
    topic_order: Vec<u32>,
    /// `assignRemainingPartitions`' list: partitions nobody holds, then the revoked ones.
    unassigned: Vec<Tp>,
    /// One member's current partitions in the order `maybeRevokePartitions` visits them.
    run: Vec<Tp>,
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

    /// The members in `GroupSpec.memberIds()` order into `iteration` ([`MemberOrder`]).
    fn fill_iteration_order(&mut self, input: &GroupInput) {
        match input.member_order {
            MemberOrder::Given => {
                self.iteration.clear();
                self.iteration.extend(0..input.members.len());
            }
            MemberOrder::JavaHashMap => {
                let ids = input.members.iter().map(|m| m.id.as_str());
                java_hashmap_order_into(ids, &mut self.hash_scratch, &mut self.iteration);
            }
        }
    }
}

/// `UniformHomogeneousAssignmentBuilder.build` (Kafka 4.4.0) for identical subscriptions,
/// into `out` (one sorted list per member).
///
/// `minimumMemberQuota = P / N`; the first `P % N` members in iteration order start with one
/// more (`maybeRevokePartitions`). Each member keeps its current partitions up to its quota,
/// topic by topic in its assignment map's order and partition by partition in its set's
/// order ([`member_current_in_java_order`]); the rest are revoked to the end of the
/// unassigned list. A member still below its quota that holds an extra gives the extra up
/// while more members follow than extras remain (the `numberOfMembers - memberIndex >
/// remainingMembersToGetAnExtraPartition` test of 4.4.0, so that a later member that already
/// owns one more keeps it). `assignRemainingPartitions` then hands the unassigned list out
/// in order: each unfilled member, in iteration order, takes its remaining quota in one run.
/// The unassigned list starts with every partition no member holds, topics in the order of
/// the subscription's `HashSet<Uuid>`, partitions ascending.
fn homogeneous(
    input: &GroupInput,
    ix: &PartitionIndex,
    subs: &Subscriptions,
    scratch: &mut Scratch,
    out: &mut GroupAssignment,
) {
    let n = input.members.len();
    scratch.fill_iteration_order(input);
    let first = scratch.iteration[0];
    scratch.topic_order.clear();
    scratch.topic_order.extend((0..input.topics.len() as u32).filter(|&t| subs.has(first, t)));
    let capacity = java_hashset_copy_capacity(scratch.topic_order.len());
    order_topics(input, &mut scratch.topic_order, capacity);
    let total: usize = scratch.topic_order.iter().map(|&t| ix.range(t).len()).sum();
    let min_quota = total / n;
    let mut extras = total % n;
    reset_lists(&mut out.partitions, n);
    scratch.unassigned.clear();
    for &t in &scratch.topic_order {
        let range = ix.range(t);
        let free = range.clone().filter(|&p| !scratch.taken[p]);
        scratch
            .unassigned
            .extend(free.map(|p| Tp { topic: t, partition: (p - range.start) as u32 }));
    }
    scratch.unfilled.clear();
    for index in 0..n {
        let m = scratch.iteration[index];
        let mut quota = min_quota;
        let mut has_extra = false;
        if extras > 0 {
            quota += 1;
            has_extra = true;
        }
        member_current_in_java_order(
            input,
            &scratch.current[scratch.spans[m].clone()],
            &mut scratch.run,
        );
        for group in scratch.run.chunk_by(|a, b| a.topic == b.topic) {
            let keep = group.len().min(quota);
            out.partitions[m].extend_from_slice(&group[..keep]);
            scratch.unassigned.extend_from_slice(&group[keep..]);
            quota -= keep;
        }
        if quota > 0 && has_extra && n - index > extras {
            quota -= 1;
            has_extra = false;
        }
        if quota > 0 {
            scratch.unfilled.push((m, quota));
        }
        if has_extra {
            extras -= 1;
        }
    }
    let mut next = 0;
    for &(m, quota) in &scratch.unfilled {
        let take = quota.min(scratch.unassigned.len() - next);
        out.partitions[m].extend_from_slice(&scratch.unassigned[next..next + take]);
        next += take;
    }
    // Kafka throws "Partitions were left unassigned" here; the quotas add up to the total.
    debug_assert_eq!(next, scratch.unassigned.len(), "every partition handed out");
    for list in &mut out.partitions {
        if !list.windows(2).all(|w| w[0] < w[1]) {
            list.sort_unstable();
        }
    }
}

/// Sorts `topics` (ascending indices) into the iteration order of a Java hash table of
/// `capacity` buckets keyed by their topic ids; without ids (`input.topic_ids` empty) they
/// stay in name order.
fn order_topics(input: &GroupInput, topics: &mut [u32], capacity: usize) {
    if input.topic_ids.len() == input.topics.len() && !input.topic_ids.is_empty() {
        java_table_order(topics, capacity, |&t| input.topic_ids[t as usize].java_hash());
    }
}

/// A member's current partitions (`current`, ascending) in the order
/// `maybeRevokePartitions` visits them into `run`: grouped by topic, topics in the order of
/// the member's assignment map (a `HashMap<Uuid, Set<Integer>>` filled by `put`), each
/// topic's partitions in the order of a `HashSet<Integer>` copied from the ascending list
/// (by `partition & (capacity - 1)`: a member holding 34..=66 of a topic visits 64, 65, 66
/// before 34, and keeps those when its quota shrinks).
fn member_current_in_java_order(input: &GroupInput, current: &[(usize, Tp)], run: &mut Vec<Tp>) {
    run.clear();
    run.extend(current.iter().map(|&(_, tp)| tp));
    if input.member_order == MemberOrder::Given {
        return; // As listed: by topic name, then partition.
    }
    let several_topics = run.first().is_some_and(|f| run.iter().any(|tp| tp.topic != f.topic));
    if several_topics {
        // Rare (a member of several topics): allocating here costs nothing measurable.
        let mut topics: Vec<u32> =
            run.chunk_by(|a, b| a.topic == b.topic).map(|g| g[0].topic).collect();
        let capacity = java_hashmap_capacity(topics.len());
        order_topics(input, &mut topics, capacity);
        let mut rank = vec![0usize; input.topics.len()];
        for (r, &t) in topics.iter().enumerate() {
            rank[t as usize] = r;
        }
        run.sort_by_key(|tp| (rank[tp.topic as usize], tp.partition));
    }
    for group in run.chunk_by_mut(|a, b| a.topic == b.topic) {
        let capacity = java_hashset_copy_capacity(group.len());
        java_table_order(group, capacity, |tp| tp.partition as i32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Kafka 4.4.0's `UniformHomogeneousAssignmentBuilder` transcribed plainly (maps and
    /// fresh vectors per call, as Java does), the reference the buffered version must equal.
    mod reference {
        use crate::common::{
            by_member_id, java_hashmap_order, server_current, to_assignment, PartitionIndex,
            Subscriptions,
        };
        use crate::uniform_heterogeneous;
        use crate::{GroupAssignment, GroupInput, MemberOrder};

        pub(super) fn assign(input: &GroupInput) -> GroupAssignment {
            let ix = PartitionIndex::new(&input.topics);
            let subs = Subscriptions::new(input);
            let order = by_member_id(&input.members);
            let current = server_current(input, &ix, &subs, &order);
            let per_member = if input.members.is_empty() {
                Vec::new()
            } else if subs.all_equal() {
                homogeneous(input, &ix, &subs, &current)
            } else {
                uniform_heterogeneous::assign(input, &ix, &subs, &current, &iteration(input))
            };
            to_assignment(&ix, per_member)
        }

        /// `GroupSpec.memberIds()` order.
        fn iteration(input: &GroupInput) -> Vec<usize> {
            let ids: Vec<&str> = input.members.iter().map(|m| m.id.as_str()).collect();
            match input.member_order {
                MemberOrder::Given => (0..ids.len()).collect(),
                MemberOrder::JavaHashMap => java_hashmap_order(&ids),
            }
        }

        /// A Java hash table's bucket of `hash` in a table of `capacity`.
        fn bucket(hash: i32, capacity: usize) -> usize {
            let h = hash as u32;
            ((h ^ (h >> 16)) as usize) % capacity
        }

        /// `new HashSet<>(c)` capacity on JDK 17.
        fn copy_capacity(len: usize) -> usize {
            (((len as f32 / 0.75f32) as usize) + 1).max(16).next_power_of_two()
        }

        fn topic_hash(input: &GroupInput, t: u32) -> i32 {
            if input.topic_ids.is_empty() {
                0 // No ids: one bucket, insertion (name) order.
            } else {
                input.topic_ids[t as usize].java_hash()
            }
        }

        fn homogeneous(
            input: &GroupInput,
            ix: &PartitionIndex,
            subs: &Subscriptions,
            current: &[Vec<usize>],
        ) -> Vec<Vec<usize>> {
            let n = input.members.len();
            let members = iteration(input);
            let mut topics = subs.topics_of(members[0]);
            let capacity = copy_capacity(topics.len());
            topics.sort_by_key(|&t| bucket(topic_hash(input, t), capacity));
            let held: Vec<bool> = {
                let mut held = vec![false; ix.total()];
                current.iter().flatten().for_each(|&p| held[p] = true);
                held
            };
            let mut unassigned: Vec<usize> =
                topics.iter().flat_map(|&t| ix.range(t)).filter(|&p| !held[p]).collect();
            let total: usize = topics.iter().map(|&t| ix.range(t).len()).sum();
            let min_quota = total / n;
            let mut remaining_extras = total % n;
            let mut target: Vec<Vec<usize>> = vec![Vec::new(); n];
            let mut unfilled: Vec<(usize, usize)> = Vec::new();
            for (member_index, &m) in members.iter().enumerate() {
                let mut quota = min_quota;
                let mut has_extra = false;
                if remaining_extras > 0 {
                    quota += 1;
                    has_extra = true;
                }
                let mut my_topics: Vec<u32> = current[m].iter().map(|&p| ix.topic_of(p)).collect();
                my_topics.dedup();
                let map_capacity = {
                    let mut c = 16;
                    while my_topics.len() * 4 > c * 3 {
                        c *= 2;
                    }
                    c
                };
                my_topics.sort_by_key(|&t| bucket(topic_hash(input, t), map_capacity));
                for t in my_topics {
                    let range = ix.range(t);
                    let mut partitions: Vec<usize> =
                        current[m].iter().copied().filter(|p| range.contains(p)).collect();
                    let set_capacity = copy_capacity(partitions.len());
                    partitions.sort_by_key(|&p| bucket((p - range.start) as i32, set_capacity));
                    if partitions.len() <= quota {
                        quota -= partitions.len();
                        target[m].extend(partitions);
                    } else {
                        for p in partitions {
                            if quota > 0 {
                                quota -= 1;
                                target[m].push(p);
                            } else {
                                unassigned.push(p);
                            }
                        }
                    }
                }
                if quota > 0 && has_extra && n - member_index > remaining_extras {
                    quota -= 1;
                    has_extra = false;
                }
                if quota > 0 {
                    unfilled.push((m, quota));
                }
                if has_extra {
                    remaining_extras -= 1;
                }
            }
            let mut next = 0;
            for (m, quota) in unfilled {
                for _ in 0..quota {
                    if next < unassigned.len() {
                        target[m].push(unassigned[next]);
                        next += 1;
                    }
                }
            }
            assert_eq!(next, unassigned.len(), "Partitions were left unassigned");
            target
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
        GroupInput { topics, members, ..GroupInput::default() }
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
            ..GroupInput::default()
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
