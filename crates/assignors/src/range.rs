//! Kafka's classic `RangeAssignor`, non-rack path.
//!
//! Follows apache/kafka `clients/src/main/java/org/apache/kafka/clients/consumer/RangeAssignor.java`
//! (`assignRanges` without rack matching, equal to the pre-3.5 loop): for each topic, its
//! subscribers are sorted by `MemberInfo` (static members by `group.instance.id` first, then
//! member id); with `P` partitions and `C` subscribers, subscriber `i` gets the contiguous range
//! starting at `(P / C) * i + min(i, P % C)` of length `P / C + (i < P % C)`. Topics are
//! independent, so the first members of every topic get the extra partitions. Topics nobody
//! subscribes to are not assigned.

use crate::common::{by_member_info, to_assignment, PartitionIndex, Subscriptions};
use crate::{GroupAssignment, GroupInput};

/// The range assignment of `input`.
pub(crate) fn assign(input: &GroupInput) -> GroupAssignment {
    let ix = PartitionIndex::new(&input.topics);
    let subs = Subscriptions::new(input);
    let order = by_member_info(&input.members);
    let mut per_member = vec![Vec::new(); input.members.len()];
    for t in 0..input.topics.len() as u32 {
        let consumers = subs.members_of(t, &order);
        assign_topic(
            ix.range(t).start,
            input.topics[t as usize].partitions,
            &consumers,
            &mut per_member,
        );
    }
    to_assignment(&ix, per_member)
}

/// Lays one topic's partitions (global indices `first..first + partitions`) out in ranges.
fn assign_topic(first: usize, partitions: u32, consumers: &[usize], per_member: &mut [Vec<usize>]) {
    if consumers.is_empty() {
        return;
    }
    let p = partitions as usize;
    let per_consumer = p / consumers.len();
    let with_extra = p % consumers.len();
    for (i, &m) in consumers.iter().enumerate() {
        let start = per_consumer * i + i.min(with_extra);
        let length = per_consumer + usize::from(i < with_extra);
        per_member[m].extend(first + start..first + start + length);
    }
}
