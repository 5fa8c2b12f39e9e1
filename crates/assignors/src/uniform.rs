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
}
