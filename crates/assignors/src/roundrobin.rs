//! Kafka's classic `RoundRobinAssignor`.
//!
//! Follows apache/kafka `clients/src/main/java/org/apache/kafka/clients/consumer/RoundRobinAssignor.java`:
//! members sorted by `MemberInfo` form a circular list; all partitions of all subscribed topics,
//! sorted by topic name then partition, are dealt one by one. For each partition the cursor
//! skips members not subscribed to its topic (`while (!topics.contains(topic)) assigner.next()`),
//! gives the partition to the member under the cursor and advances past it.

use crate::common::{by_member_info, to_assignment, PartitionIndex, Subscriptions};
use crate::{GroupAssignment, GroupInput};

/// The round-robin assignment of `input`.
pub(crate) fn assign(input: &GroupInput) -> GroupAssignment {
    let ix = PartitionIndex::new(&input.topics);
    let subs = Subscriptions::new(input);
    let order = by_member_info(&input.members);
    let mut per_member = vec![Vec::new(); input.members.len()];
    let mut cursor = 0usize;
    for t in 0..input.topics.len() as u32 {
        if !subs.any[t as usize] {
            continue;
        }
        for idx in ix.range(t) {
            // Terminates: at least one member subscribes to `t`.
            while !subs.has(order[cursor], t) {
                cursor = (cursor + 1) % order.len();
            }
            per_member[order[cursor]].push(idx);
            cursor = (cursor + 1) % order.len();
        }
    }
    to_assignment(&ix, per_member)
}
