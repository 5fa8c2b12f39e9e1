//! Apache TubeMQ (InLong) partition balancing: the master's server-side hash-modulo balance and
//! the client-side `hash % sourceCount == nodeId` rule.
//!
//! **Server side** follows apache/inlong
//! `inlong-tubemq/tubemq-server/src/main/java/org/apache/inlong/tubemq/server/master/balance/DefaultLoadBalancer.java`:
//! - When no member owns anything (a group's first allocation, `bukAssign`): members sorted by
//!   id; for each topic, sorted partitions are split in ranges (`partsPerConsumer * i +
//!   min(i, consumersWithExtraPart)`), as Kafka's range does.
//! - Otherwise (`balanceCluster`, every balance period): each member keeps the partitions it
//!   owns that still exist (the first member in id order keeps a partition listed twice). If
//!   some partitions are unowned, each is placed on a member drawn uniformly at random
//!   (`randomAssign`; TubeMQ uses `new Random(System.currentTimeMillis())`, here
//!   the caller's seeded `rng`), and balancing waits for the next period. If none are unowned,
//!   `balance` runs: `min = P / N`, `max = min + (P % N != 0)`; the first `P % N` members (in id
//!   order) at or above `max` shed down to `max`, later ones down to `min`, taking partitions from
//!   the front of each topic's list; members with no partitions or fewer than `min` take up to
//!   `max - load` from that queue (in Java `HashMap` order of their ids, as TubeMQ's
//!   `serverToTake` map), and any leftover goes one each to the same members. As in TubeMQ, a
//!   shed partition that no member may take (members at exactly `min` are not takers) stays
//!   unassigned until the next period, which then places it at random.
//! - Members subscribe to topics individually here; TubeMQ groups share one topic set, so a
//!   partition is only placed on members subscribed to its topic.
//!
//! **Client side** (`ClientBalanceConsumerExample.java` in tubemq-example): node `nodeId` of a
//! group of `sourceCount` consumes a partition iff
//! `(partKey.hashCode() & 0xffffffffL) % sourceCount == nodeId`, with Java `String.hashCode`
//! over the partition key `"BrokerId:TopicName:PartitionId"`. See [`tubemq_partition_key`] for
//! the broker-id convention.

use crate::common::{
    by_member_id, java_hashmap_order, java_string_hash, server_current, to_assignment,
    PartitionIndex, Subscriptions,
};
use crate::{GroupAssignment, GroupInput, Tp};
use rand::Rng;
use sim_core::SimRng;
use std::collections::{BTreeMap, VecDeque};

/// The broker id in simulated TubeMQ partition keys: the simulated cluster has one broker,
/// with id 1, holding every partition of every topic.
pub const TUBEMQ_BROKER_ID: u32 = 1;

/// The TubeMQ partition key `"BrokerId:TopicName:PartitionId"` of a partition, with the single
/// broker [`TUBEMQ_BROKER_ID`] (e.g. `"1:orders:3"`).
pub fn tubemq_partition_key(topic: &str, partition: u32) -> String {
    format!("{TUBEMQ_BROKER_ID}:{topic}:{partition}")
}

/// The client-side rule: node `node_id` of `source_count` nodes consumes the partition iff
/// `(partKey.hashCode() & 0xffffffffL) % sourceCount == nodeId`. False when `source_count`
/// is 0 (TubeMQ disables the rule for non-positive counts).
pub fn tubemq_client_owns(topic: &str, partition: u32, source_count: u32, node_id: u32) -> bool {
    if source_count == 0 {
        return false;
    }
    // `as u32` reinterprets the bits: the same as `& 0xffffffffL` on the sign-extended long.
    let hash = java_string_hash(&tubemq_partition_key(topic, partition)) as u32;
    hash % source_count == node_id
}

/// The partitions member `member` (an index into `input.members`) consumes under client-side
/// balance: those of its subscribed topics that the rule gives its `node_id`. Empty when the
/// member has no `node_id`.
pub fn tubemq_client_partitions(input: &GroupInput, member: usize, source_count: u32) -> Vec<Tp> {
    let m = &input.members[member];
    let Some(node_id) = m.node_id else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for &t in &m.topics {
        let Some(topic) = input.topics.get(t as usize) else { continue };
        if source_count == 0 {
            break;
        }
        // Same as `tubemq_client_owns`, without building a key string per partition.
        let prefix = java_string_hash(&format!("{TUBEMQ_BROKER_ID}:{}:", topic.name));
        for partition in 0..topic.partitions {
            let hash = java_hash_continue(prefix, &partition.to_string()) as u32;
            if hash % source_count == node_id {
                out.push(Tp { topic: t, partition });
            }
        }
    }
    out.sort_unstable();
    out
}

/// Client-side balance for the whole group: each partition's node is computed once (the key's
/// hash continues from the hash of the `"1:topic:"` prefix, so no string is built per
/// partition) and the partition goes to the members with that `node_id` that subscribe to its
/// topic.
pub(crate) fn client_assign(input: &GroupInput, source_count: u32) -> GroupAssignment {
    let subs = Subscriptions::new(input);
    let mut by_node: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (m, member) in input.members.iter().enumerate() {
        if let Some(node) = member.node_id {
            by_node.entry(node).or_default().push(m);
        }
    }
    let mut partitions = vec![Vec::new(); input.members.len()];
    for (t, topic) in input.topics.iter().enumerate() {
        if !subs.any[t] || source_count == 0 {
            continue;
        }
        let prefix = java_string_hash(&format!("{TUBEMQ_BROKER_ID}:{}:", topic.name));
        for partition in 0..topic.partitions {
            let hash = java_hash_continue(prefix, &partition.to_string()) as u32;
            let Some(members) = by_node.get(&(hash % source_count)) else { continue };
            for &m in members.iter().filter(|&&m| subs.has(m, t as u32)) {
                partitions[m].push(Tp { topic: t as u32, partition });
            }
        }
    }
    GroupAssignment { partitions }
}

/// Java `String.hashCode` of `prefix + s` given the hash of `prefix`.
fn java_hash_continue(prefix_hash: i32, s: &str) -> i32 {
    s.encode_utf16().fold(prefix_hash, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// Server-side balance (see the module doc).
pub(crate) fn server_assign(input: &GroupInput, rng: &mut SimRng) -> GroupAssignment {
    let ix = PartitionIndex::new(&input.topics);
    let subs = Subscriptions::new(input);
    let order = by_member_id(&input.members);
    let current = server_current(input, &ix, &subs, &order);
    let per_member = if current.iter().all(Vec::is_empty) {
        first_allocation(input, &ix, &subs, &order)
    } else {
        periodic_balance(input, &ix, &subs, &order, current, rng)
    };
    to_assignment(&ix, per_member)
}

/// `bukAssign`: sort and split every topic in ranges.
fn first_allocation(
    input: &GroupInput,
    ix: &PartitionIndex,
    subs: &Subscriptions,
    order: &[usize],
) -> Vec<Vec<usize>> {
    let mut per_member = vec![Vec::new(); input.members.len()];
    for t in 0..input.topics.len() as u32 {
        let members = subs.members_of(t, order);
        if members.is_empty() {
            continue;
        }
        let range = ix.range(t);
        let per = range.len() / members.len();
        let with_extra = range.len() % members.len();
        for (i, &m) in members.iter().enumerate() {
            let start = range.start + per * i + i.min(with_extra);
            per_member[m].extend(start..start + per + usize::from(i < with_extra));
        }
    }
    per_member
}

/// `balanceCluster`: keep, place the unowned at random, or else `balance`.
fn periodic_balance(
    input: &GroupInput,
    ix: &PartitionIndex,
    subs: &Subscriptions,
    order: &[usize],
    mut per_member: Vec<Vec<usize>>,
    rng: &mut SimRng,
) -> Vec<Vec<usize>> {
    let mut owned = vec![false; ix.total()];
    per_member.iter().flatten().for_each(|&p| owned[p] = true);
    let unowned: Vec<usize> = (0..input.topics.len() as u32)
        .filter(|&t| subs.any[t as usize])
        .flat_map(|t| ix.range(t))
        .filter(|&p| !owned[p])
        .collect();
    if unowned.is_empty() {
        balance(input, ix, subs, order, &mut per_member);
        return per_member;
    }
    for p in unowned {
        let candidates = subs.members_of(ix.topic_of(p), order);
        let pick = candidates[rng.random_range(0..candidates.len())];
        per_member[pick].push(p);
    }
    per_member
}

/// `DefaultLoadBalancer.balance` for one group whose partitions are all owned.
fn balance(
    input: &GroupInput,
    ix: &PartitionIndex,
    subs: &Subscriptions,
    order: &[usize],
    per_member: &mut [Vec<usize>],
) {
    let total: usize = per_member.iter().map(Vec::len).sum();
    let n = order.len();
    let min = total / n;
    let max = if total.is_multiple_of(n) { min } else { min + 1 };
    let mut to_load_max = total % n;
    let mut queue: VecDeque<usize> = VecDeque::new();
    let mut takers: Vec<(usize, usize)> = Vec::new();
    for &m in order {
        let load = per_member[m].len();
        if load < max {
            if load == 0 || load < min {
                takers.push((m, max - load));
            }
            continue;
        }
        let offload = if to_load_max > 0 {
            to_load_max -= 1;
            load - max
        } else {
            load - min
        };
        shed(ix, &mut per_member[m], offload, &mut queue);
    }
    let ids: Vec<&str> = takers.iter().map(|&(m, _)| input.members[m].id.as_str()).collect();
    let hash_order = java_hashmap_order(&ids);
    for &i in &hash_order {
        let (m, want) = takers[i];
        for _ in 0..want {
            let Some(p) = take_for(ix, subs, m, &mut queue) else { break };
            per_member[m].push(p);
        }
    }
    for &i in &hash_order {
        let m = takers[i].0;
        if let Some(p) = take_for(ix, subs, m, &mut queue) {
            per_member[m].push(p);
        }
    }
}

/// The first queued partition member `m` subscribes to (TubeMQ members share one topic set,
/// so there it is simply the queue head).
fn take_for(
    ix: &PartitionIndex,
    subs: &Subscriptions,
    m: usize,
    queue: &mut VecDeque<usize>,
) -> Option<usize> {
    let pos = queue.iter().position(|&p| subs.has(m, ix.topic_of(p)))?;
    queue.remove(pos)
}

/// Removes `count` partitions from a member, topic by topic from the front of each topic's
/// (ascending) list, into `queue`.
fn shed(ix: &PartitionIndex, list: &mut Vec<usize>, count: usize, queue: &mut VecDeque<usize>) {
    list.sort_unstable();
    let mut left = count;
    let mut kept = Vec::with_capacity(list.len());
    let mut i = 0;
    while i < list.len() {
        let topic = ix.topic_of(list[i]);
        let end = i + list[i..].iter().take_while(|&&p| ix.topic_of(p) == topic).count();
        let take = left.min(end - i);
        queue.extend(&list[i..i + take]);
        kept.extend(&list[i + take..end]);
        left -= take;
        i = end;
    }
    *list = kept;
}
