//! KIP-848's `UniformAssignor` for heterogeneous subscriptions: Apache Kafka 4.4.0's
//! `org.apache.kafka.coordinator.group.assignor.UniformHeterogeneousAssignmentBuilder`
//! (group-coordinator module; source read at apache/kafka 1eb7644349cb, KAFKA-17710
//! 017da210999, and checked method by method against `javap -c -p` of
//! `kafka-group-coordinator-4.4.0.jar`, the broker `scripts/real/kafka` runs: `build`,
//! `maybeRevokePartitions`, `computeUnassignedPartitions`, `assignRemainingPartitions`,
//! `balance`, `balanceTopics`, `balanceTopic` and the inner `MemberAssignmentBalancer` are the
//! same bytecode for the same source):
//!
//! 1. `maybeRevokePartitions`: each member keeps its current partitions of topics it still
//!    subscribes to.
//! 2. `assignRemainingPartitions`: topics with unassigned partitions, in `topicComparator`
//!    order (most partitions per subscriber first, then fewer subscribers, then
//!    `Uuid.compareTo` of the topic ids: signed most, then least significant bits; without
//!    ids the topic name stands in), each dealt over its subscribers from the least loaded
//!    (`MemberAssignmentBalancer.nextLeastLoadedMember`: the members with the fewest
//!    partitions in turn, then the next level).
//! 3. `balance`: for topics with two or more subscribers, up to 16 rounds over the sorted
//!    topics, each moving a topic's partitions from its most loaded subscribers (highest
//!    partition numbers of each first) to its least loaded, until the topic's subscribers are
//!    within one; a round with no move after the last moving topic ends it.
//!
//! Member indices, which break every tie (`memberComparator`, the owner-grouped partition
//! list of `balanceTopic`), are positions in `new ArrayList<>(groupSpec.memberIds())`: the
//! caller's iteration order (a Java `HashMap` of member ids on the broker,
//! [`crate::MemberOrder`]).

use crate::common::{java_cmp, PartitionIndex, Subscriptions};
use crate::GroupInput;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// `MAX_ITERATION_COUNT` of `balanceTopics`.
const MAX_ITERATION_COUNT: usize = 16;

/// The heterogeneous uniform assignment: per member (input order), the global indices of its
/// partitions. `current[m]` are member `m`'s current partitions of topics it subscribes to;
/// `iteration` lists every member (input indices) in `GroupSpec.memberIds()` order.
pub(crate) fn assign(
    input: &GroupInput,
    ix: &PartitionIndex,
    subs: &Subscriptions,
    current: &[Vec<usize>],
    iteration: &[usize],
) -> Vec<Vec<usize>> {
    let n = input.members.len();
    debug_assert_eq!(iteration.len(), n, "every member once");
    // `memberIds.get(i)` is member `by_index[i]`.
    let by_index = iteration;
    let topic_count = input.topics.len() as u32;
    let subscribers: Vec<Vec<usize>> =
        (0..topic_count).map(|t| (0..n).filter(|&i| subs.has(by_index[i], t)).collect()).collect();
    let mut b = Builder { owners: vec![None; ix.total()], sizes: vec![0; n] };
    for (i, &m) in by_index.iter().enumerate() {
        for &p in &current[m] {
            b.owners[p] = Some(i);
            b.sizes[i] += 1;
        }
    }
    let subscribed: Vec<u32> =
        (0..topic_count).filter(|&t| !subscribers[t as usize].is_empty()).collect();
    let order = TopicOrder { input, ix, subscribers: &subscribers };
    // `assignRemainingPartitions`.
    let mut with_unassigned: Vec<u32> = subscribed
        .iter()
        .copied()
        .filter(|&t| ix.range(t).any(|p| b.owners[p].is_none()))
        .collect();
    order.sort(&mut with_unassigned);
    for &t in &with_unassigned {
        let mut balancer = Balancer::new(&subscribers[t as usize], &b.sizes);
        for p in ix.range(t).filter(|&p| b.owners[p].is_none()).collect::<Vec<_>>() {
            let m = balancer.next_least_loaded(&b.sizes);
            b.assign(p, m);
        }
    }
    // `balance`.
    let mut movable: Vec<u32> =
        subscribed.iter().copied().filter(|&t| subscribers[t as usize].len() >= 2).collect();
    order.sort(&mut movable);
    b.balance_topics(ix, &movable, &subscribers);
    let mut per_member = vec![Vec::new(); n];
    for (p, owner) in b.owners.iter().enumerate() {
        if let Some(i) = owner {
            per_member[by_index[*i]].push(p);
        }
    }
    per_member
}

/// `topicComparator`.
struct TopicOrder<'a> {
    input: &'a GroupInput,
    ix: &'a PartitionIndex,
    subscribers: &'a [Vec<usize>],
}

impl TopicOrder<'_> {
    fn sort(&self, topics: &mut [u32]) {
        topics.sort_by(|&a, &b| {
            let (pa, sa) = (self.ix.range(a).len(), self.subscribers[a as usize].len());
            let (pb, sb) = (self.ix.range(b).len(), self.subscribers[b as usize].len());
            // Partitions per subscriber, descending: pb/sb vs pa/sa without division.
            (pb * sa).cmp(&(pa * sb)).then(sa.cmp(&sb)).then_with(|| self.topic_id_cmp(a, b))
        });
    }

    /// `topic1Id.compareTo(topic2Id)`: Kafka's `Uuid.compareTo` compares the most, then the
    /// least significant bits as signed `long`s; without ids, the topic names.
    fn topic_id_cmp(&self, a: u32, b: u32) -> Ordering {
        let ids = &self.input.topic_ids;
        if ids.len() == self.input.topics.len() && !ids.is_empty() {
            ids[a as usize].java_cmp(ids[b as usize])
        } else {
            java_cmp(&self.input.topics[a as usize].name, &self.input.topics[b as usize].name)
        }
    }
}

/// The target assignment being built: partition owners and sizes by member index.
struct Builder {
    owners: Vec<Option<usize>>,
    sizes: Vec<usize>,
}

impl Builder {
    /// `assignPartition`.
    fn assign(&mut self, p: usize, m: usize) {
        if let Some(old) = self.owners[p] {
            self.sizes[old] -= 1;
        }
        self.owners[p] = Some(m);
        self.sizes[m] += 1;
    }

    /// `balanceTopics`.
    fn balance_topics(&mut self, ix: &PartitionIndex, topics: &[u32], subscribers: &[Vec<usize>]) {
        let mut last_rebalanced: Option<usize> = None;
        for _ in 0..MAX_ITERATION_COUNT {
            for (k, &t) in topics.iter().enumerate() {
                if last_rebalanced == Some(k) {
                    return;
                }
                let moved = self.balance_topic(ix, t, &subscribers[t as usize]);
                if moved > 0 || last_rebalanced.is_none() {
                    last_rebalanced = Some(k);
                }
            }
        }
    }

    /// `balanceTopic`: the number of partitions moved.
    fn balance_topic(&mut self, ix: &PartitionIndex, t: u32, subscribers: &[usize]) -> usize {
        let mut balancer = Balancer::new(subscribers, &self.sizes);
        if balancer.imbalance <= 1 {
            return 0;
        }
        // The topic's partitions by owner, then partition number; each owner's run.
        let mut partitions: Vec<usize> = ix.range(t).collect();
        partitions.sort_by_key(|&p| (self.owners[p].map_or(-1, |o| o as i64), p));
        let mut runs: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
        for (k, &p) in partitions.iter().enumerate() {
            if let Some(o) = self.owners[p] {
                runs.entry(o).or_insert((k, k + 1)).1 = k + 1;
            }
        }
        let mut moved = 0;
        // Bounded: each round takes one partition off a run or excludes a member.
        while !balancer.is_balanced() {
            let from = loop {
                let Some(m) = balancer.next_most_loaded(&self.sizes) else { break None };
                match runs.get(&m) {
                    Some(&(start, end)) if end > start => break Some(m),
                    _ => balancer.exclude_most_loaded(),
                }
            };
            let Some(from) = from else { break };
            let run = runs.get_mut(&from).expect("the most loaded member has a run");
            run.1 -= 1;
            let p = partitions[run.1];
            let to = balancer.next_least_loaded(&self.sizes);
            if balancer.is_balanced() {
                break;
            }
            self.assign(p, to);
            moved += 1;
        }
        moved
    }
}

/// `MemberAssignmentBalancer`: a topic's subscribers sorted by size (then index), walked from
/// the least loaded up and from the most loaded down, one size level at a time.
struct Balancer {
    sorted: Vec<usize>,
    imbalance: usize,
    least_end: usize,
    least_count: i64,
    next_least: usize,
    most_start: usize,
    most_end: usize,
    most_count: i64,
    next_most: i64,
}

impl Balancer {
    /// `initialize`.
    fn new(members: &[usize], sizes: &[usize]) -> Balancer {
        let mut sorted = members.to_vec();
        sorted.sort_by_key(|&m| (sizes[m], m));
        let (first, last) = (sizes[sorted[0]], sizes[sorted[sorted.len() - 1]]);
        Balancer {
            imbalance: last - first,
            least_end: 0,
            least_count: first as i64 - 1,
            next_least: 0,
            most_start: sorted.len(),
            most_end: sorted.len(),
            most_count: last as i64 + 1,
            next_most: sorted.len() as i64 - 1,
            sorted,
        }
    }

    fn size(&self, k: usize, sizes: &[usize]) -> i64 {
        sizes[self.sorted[k]] as i64
    }

    /// `nextLeastLoadedMember`.
    fn next_least_loaded(&mut self, sizes: &[usize]) -> usize {
        if self.next_least >= self.least_end {
            self.least_count += 1;
            while self.least_end < self.sorted.len()
                && self.size(self.least_end, sizes) == self.least_count
            {
                self.least_end += 1;
            }
            self.next_least = 0;
        }
        let m = self.sorted[self.next_least];
        self.next_least += 1;
        m
    }

    /// `nextMostLoadedMember`; `None` for Kafka's -1.
    fn next_most_loaded(&mut self, sizes: &[usize]) -> Option<usize> {
        if self.next_most < self.most_start as i64 {
            if self.most_end <= self.most_start && self.most_start > 0 {
                self.most_count = self.size(self.most_start - 1, sizes);
            } else {
                self.most_count -= 1;
            }
            while self.most_start > 0 && self.size(self.most_start - 1, sizes) == self.most_count {
                self.most_start -= 1;
            }
            self.next_most = self.most_end as i64 - 1;
        }
        if self.next_most < 0 {
            return None;
        }
        let m = self.sorted[self.next_most as usize];
        self.next_most -= 1;
        Some(m)
    }

    /// `excludeMostLoadedMember`: the member just returned leaves the most loaded range.
    fn exclude_most_loaded(&mut self) {
        let k = (self.next_most + 1) as usize;
        self.sorted.swap(k, self.most_end - 1);
        self.most_end -= 1;
    }

    /// `isBalanced`.
    fn is_balanced(&self) -> bool {
        self.most_count - self.least_count <= 1
    }
}

#[cfg(test)]
mod tests {
    use super::assign;
    use crate::common::{server_current, PartitionIndex, Subscriptions};
    use crate::{GroupInput, Member, MemberOrder, Topic, TopicId, Tp};

    /// Kafka's `UniformHeterogeneousAssignmentBuilderTest.
    /// testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions` builds a
    /// HETEROGENEOUS group spec with equal subscriptions, which the coordinator never does (the
    /// `assign` command takes the homogeneous path there: a known difference of the
    /// kafka_cases test). The builder itself gives Kafka's expected answer: topics of 2
    /// partitions, 2 subscribers each, so sorted by topic id (T1 < T2 < T3); A owns all six.
    /// topic1 loses both to B (A 4, B 2), topic2 its partition 1 (3 and 3), topic3 nothing.
    #[test]
    fn kafka_forced_heterogeneous_case_gives_kafkas_answer() {
        let topics: Vec<Topic> =
            (1..=3).map(|i| Topic { name: format!("topic{i}"), partitions: 2 }).collect();
        let all: Vec<Tp> =
            (0..3).flat_map(|t| (0..2).map(move |p| Tp { topic: t, partition: p })).collect();
        let members = vec![
            Member { id: "A".into(), topics: vec![0, 1, 2], owned: all, ..Member::default() },
            Member { id: "B".into(), topics: vec![0, 1, 2], ..Member::default() },
        ];
        let topic_ids =
            ["T1-A4s3VTwiI5CTbEp6POw", "T2-B4s3VTwiI5YHbPp6YUe", "T3-CU8fVTLCz5YMkLoDQsa"]
                .iter()
                .map(|s| TopicId::parse(s).expect(s))
                .collect();
        let input = GroupInput {
            topics,
            members,
            topic_ids,
            member_order: MemberOrder::Given,
            ..GroupInput::default()
        };
        let ix = PartitionIndex::new(&input.topics);
        let subs = Subscriptions::new(&input);
        let current = server_current(&input, &ix, &subs, &[0, 1]);
        let got = assign(&input, &ix, &subs, &current, &[0, 1]);
        let named = |list: &[usize]| -> Vec<String> {
            list.iter()
                .map(|&p| {
                    let tp = ix.tp(p);
                    format!("{}-{}", input.topics[tp.topic as usize].name, tp.partition)
                })
                .collect()
        };
        assert_eq!(named(&got[0]), ["topic2-0", "topic3-0", "topic3-1"]);
        assert_eq!(named(&got[1]), ["topic1-0", "topic1-1", "topic2-1"]);
    }
}
