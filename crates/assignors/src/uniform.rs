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
//! queue. Heterogeneous subscriptions use [`crate::sticky::general`], an approximation of
//! `GeneralUniformAssignmentBuilder`.

use crate::common::{
    by_member_id, java_hashmap_order, server_current, to_assignment, PartitionIndex, Subscriptions,
};
use crate::sticky::general;
use crate::{GroupAssignment, GroupInput};
use std::collections::VecDeque;

/// The uniform assignment of `input`.
pub(crate) fn assign(input: &GroupInput) -> GroupAssignment {
    let ix = PartitionIndex::new(&input.topics);
    let subs = Subscriptions::new(input);
    let order = by_member_id(&input.members);
    let current = server_current(input, &ix, &subs, &order);
    let per_member = if input.members.is_empty() {
        Vec::new()
    } else if subs.all_equal() {
        homogeneous(input, &ix, &subs, &order, &current)
    } else {
        general(input, &ix, &subs, current)
    };
    to_assignment(&ix, per_member)
}

/// `OptimizedUniformAssignmentBuilder.buildAssignment` for identical subscriptions.
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
    let mut per_member: Vec<Vec<usize>> =
        (0..n).map(|_| Vec::with_capacity(min_quota + 1)).collect();
    let mut assigned = vec![false; ix.total()];
    // Members with their remaining count to reach min, in insertion order.
    let mut unfilled: Vec<(usize, usize)> = Vec::new();
    for &m in order {
        let valid = &current[m];
        let retained = valid.len().min(min_quota);
        let mut keep = retained;
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
    let ids: Vec<&str> = unfilled.iter().map(|&(m, _)| input.members[m].id.as_str()).collect();
    let mut remaining = vec![None; n];
    for &(m, r) in &unfilled {
        remaining[m] = Some(r);
    }
    let mut queue: VecDeque<usize> =
        java_hashmap_order(&ids).into_iter().map(|i| unfilled[i].0).collect();
    let unassigned = topics.iter().flat_map(|&t| ix.range(t)).filter(|&p| !assigned[p]);
    for p in unassigned {
        let mut i = 0;
        let mut done = false;
        while i < queue.len() && !done {
            let m = queue.pop_front().expect("i < len");
            if remaining[m].is_some() {
                done = take_one(&mut remaining[m], &mut extras);
                if done {
                    per_member[m].push(p);
                }
            }
            if remaining[m].is_some() {
                queue.push_back(m);
            }
            i += 1;
        }
    }
    per_member
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
