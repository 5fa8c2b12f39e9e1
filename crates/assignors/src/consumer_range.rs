//! KIP-848's server-side `RangeAssignor`, `AssignorName::ConsumerRange`, as Apache Kafka 4.4.0
//! ships it.
//!
//! Follows apache/kafka `group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/RangeAssignor.java`
//! since KAFKA-16944 (3.9+; the 4.4.0 jar's `RangeAssignor` has `assignHomogeneousGroup`,
//! `assignHeterogeneousGroup`, `sortMemberIds` and `addPartitionsToAssignment`, checked with
//! `javap`): plain ranges that ignore the current assignment. `sortMemberIds` puts static
//! members first, by `group.instance.id`, then the others by member id (Java `String`
//! order); per topic, with `P` partitions and `C` subscribers, each subscriber in that order
//! takes the next `P / C` partitions, plus one while `P % C` extras remain. Both of Kafka's
//! paths give this: the homogeneous one walks members then topics, the heterogeneous one the
//! same per topic over its subscribers, and each topic's ranges depend only on that order.
//! (Before 3.9 the server-side range assignor was sticky: it kept current partitions up to the
//! quota.)

use crate::common::{by_member_info, to_assignment, PartitionIndex, Subscriptions};
use crate::{GroupAssignment, GroupInput};

/// The KIP-848 range assignment of `input`.
pub(crate) fn assign(input: &GroupInput) -> GroupAssignment {
    let ix = PartitionIndex::new(&input.topics);
    let subs = Subscriptions::new(input);
    let order = by_member_info(&input.members);
    let mut per_member = vec![Vec::new(); input.members.len()];
    for t in 0..input.topics.len() as u32 {
        let members = subs.members_of(t, &order);
        if members.is_empty() {
            continue;
        }
        let range = ix.range(t);
        let min_quota = range.len() / members.len();
        let mut extras = range.len() % members.len();
        let mut next = range.start;
        for m in members {
            let mut quota = min_quota;
            if extras > 0 {
                quota += 1;
                extras -= 1;
            }
            per_member[m].extend(next..next + quota);
            next += quota;
        }
    }
    to_assignment(&ix, per_member)
}
