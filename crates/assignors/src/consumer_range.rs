//! KIP-848's server-side (sticky) `RangeAssignor`, `AssignorName::ConsumerRange`.
//!
//! Follows apache/kafka `group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/RangeAssignor.java`:
//! per topic, with `P` partitions and `C` subscribers (in member-id order; Kafka iterates the
//! group's members), `min = P / C` and `P % C` members may get one extra. Each subscriber keeps
//! its lowest `min(current, min)` current partitions of the topic, and one more (the next lowest)
//! if it had more than `min` while extras remain; the others become potentially unfilled with
//! `min - current`. The unassigned partitions, ascending, are then handed out in ranges: each
//! potentially unfilled member in turn takes its remaining count, plus one while extras remain.

use crate::common::{by_member_id, server_current, to_assignment, PartitionIndex, Subscriptions};
use crate::{GroupAssignment, GroupInput};

/// The KIP-848 range assignment of `input`.
pub(crate) fn assign(input: &GroupInput) -> GroupAssignment {
    let ix = PartitionIndex::new(&input.topics);
    let subs = Subscriptions::new(input);
    let order = by_member_id(&input.members);
    let current = server_current(input, &ix, &subs, &order);
    let mut per_member = vec![Vec::new(); input.members.len()];
    for t in 0..input.topics.len() as u32 {
        let members = subs.members_of(t, &order);
        if !members.is_empty() {
            assign_topic(&ix, t, &members, &current, &mut per_member);
        }
    }
    to_assignment(&ix, per_member)
}

/// One topic of the KIP-848 range assignor.
fn assign_topic(
    ix: &PartitionIndex,
    t: u32,
    members: &[usize],
    current: &[Vec<usize>],
    per_member: &mut [Vec<usize>],
) {
    let range = ix.range(t);
    let min_quota = range.len() / members.len();
    let mut extras = range.len() % members.len();
    let mut sticky = vec![false; range.len()];
    let mut unfilled: Vec<(usize, usize)> = Vec::new();
    for &m in members {
        // `current[m]` is sorted, so the topic's partitions come out ascending.
        let mine: Vec<usize> = current[m].iter().copied().filter(|p| range.contains(p)).collect();
        let mut keep = mine.len().min(min_quota);
        if mine.len() > min_quota && extras > 0 {
            extras -= 1;
            keep += 1;
        } else if mine.len() <= min_quota {
            unfilled.push((m, min_quota - mine.len()));
        }
        for &p in &mine[..keep] {
            sticky[p - range.start] = true;
            per_member[m].push(p);
        }
    }
    let mut free = range.clone().filter(|p| !sticky[p - range.start]);
    for (m, mut remaining) in unfilled {
        if extras > 0 {
            remaining += 1;
            extras -= 1;
        }
        per_member[m].extend(free.by_ref().take(remaining));
    }
}
