//! The properties Kafka's server-side `UniformAssignor` tests assert beyond exact answers, on
//! random and large groups (both the homogeneous and the heterogeneous builder):
//!
//! - `checkValidityAndBalance` (`OptimizedUniformAssignmentBuilderTest`,
//!   `testValidityAndBalanceForLargeSampleSet`: 100 topics of 3 partitions over 49 members):
//!   every subscribed partition exactly once, only to a subscriber; with equal subscriptions the
//!   member sizes differ by at most one.
//! - The heterogeneous builder's own balance guarantee (`UniformHeterogeneousAssignmentBuilder.
//!   balanceTopics` javadoc: "almost-balanced"): once `balanceTopic` stops moving, no member
//!   that holds a partition of a topic has more than one partition more than the least loaded
//!   subscriber of that topic.
//! - `CommonAssignorTests.testAssignmentReuse` (Kafka 4.x, run by both builders' test classes):
//!   assigning again with every member owning what it got changes nothing.
//! - `CommonAssignorTests.testReassignmentStickiness`: that second assignment is the same
//!   whatever order the group iterates its members in (all six orders of three members there;
//!   every rotation and the reversal here).
//!
//! Bounded: groups of at most 7 members, 4 topics of 12 partitions (the large ones are fixed),
//! 128 proptest cases each.

use assignors::{
    assign, AssignorName, GroupAssignment, GroupInput, Member, MemberOrder, Topic, TopicId, Tp,
};
use proptest::prelude::*;
use sim_core::RngStreams;

/// A random KIP-848 group: partitions per topic, a subscription mask and an id salt per
/// member, random prior claims, the member order, topic-id seed.
#[derive(Clone, Debug)]
struct Spec {
    partitions: Vec<u32>,
    masks: Vec<u8>,
    id_salts: Vec<u32>,
    claims: Vec<(usize, u32, u32)>,
    broker_order: bool,
    id_seed: u64,
}

fn spec() -> impl Strategy<Value = Spec> {
    (1usize..=4, 2usize..=7).prop_flat_map(|(topics, members)| {
        (
            prop::collection::vec(1u32..=12, topics),
            prop::collection::vec(1u8..16, members),
            prop::collection::vec(any::<u32>(), members),
            prop::collection::vec((0..members, 0..topics as u32, 0u32..12), 0..30),
            any::<bool>(),
            any::<u64>(),
        )
            .prop_map(|(partitions, masks, id_salts, claims, broker_order, id_seed)| {
                Spec { partitions, masks, id_salts, claims, broker_order, id_seed }
            })
    })
}

/// SplitMix64: distinct, well-spread topic ids from one seed.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1330_11EB);
    z ^ (z >> 31)
}

fn topic_ids(count: usize, seed: u64) -> Vec<TopicId> {
    let mut state = seed;
    (0..count).map(|_| TopicId { msb: splitmix(&mut state), lsb: splitmix(&mut state) }).collect()
}

/// The group of `s`; a claim is kept only by the first member listing the partition (the
/// coordinator's target assignment never has two owners) and only for a subscribed topic.
fn build(s: &Spec) -> GroupInput {
    let topics: Vec<Topic> = s
        .partitions
        .iter()
        .enumerate()
        .map(|(i, &p)| Topic { name: format!("t{i}"), partitions: p })
        .collect();
    let nt = topics.len() as u32;
    let mut claimed = std::collections::BTreeSet::new();
    let mut members: Vec<Member> = s
        .masks
        .iter()
        .enumerate()
        .map(|(m, &mask)| {
            let subscribed: Vec<u32> = (0..nt).filter(|t| mask & (1 << t) != 0).collect();
            let subscribed = if subscribed.is_empty() { vec![0] } else { subscribed };
            Member {
                id: format!("m{m}-{:08x}", s.id_salts[m]),
                topics: subscribed,
                ..Member::default()
            }
        })
        .collect();
    for &(m, t, p) in &s.claims {
        let tp = Tp { topic: t, partition: p };
        if p < topics[t as usize].partitions && members[m].topics.contains(&t) && claimed.insert(tp)
        {
            members[m].owned.push(tp);
        }
    }
    members.iter_mut().for_each(|m| m.owned.sort_unstable());
    let member_order = if s.broker_order { MemberOrder::JavaHashMap } else { MemberOrder::Given };
    GroupInput {
        topic_ids: topic_ids(topics.len(), s.id_seed),
        topics,
        members,
        member_order,
        ..GroupInput::default()
    }
}

fn uniform(input: &GroupInput) -> GroupAssignment {
    assign(AssignorName::Uniform, input, &mut RngStreams::new(1).stream("assignor"))
}

/// `checkValidityAndBalance`'s validity half: every partition of a subscribed topic goes to
/// exactly one member, and only to a subscriber.
fn check_valid(input: &GroupInput, a: &GroupAssignment) -> Result<(), String> {
    let mut owners: Vec<Vec<u32>> =
        input.topics.iter().map(|t| vec![0; t.partitions as usize]).collect();
    for (m, list) in a.partitions.iter().enumerate() {
        for tp in list {
            if !input.members[m].topics.contains(&tp.topic) {
                return Err(format!("{} got {tp:?} without subscribing", input.members[m].id));
            }
            owners[tp.topic as usize][tp.partition as usize] += 1;
        }
    }
    for (t, counts) in owners.iter().enumerate() {
        let subscribed = input.members.iter().any(|m| m.topics.contains(&(t as u32)));
        let want = u32::from(subscribed);
        if let Some(p) = counts.iter().position(|&c| c != want) {
            return Err(format!("t{t}-{p} has {} owners, expected {want}", counts[p]));
        }
    }
    Ok(())
}

/// The balance `balanceTopic` leaves: for every topic, a member holding one of its partitions
/// has at most one more partition in all than the topic's least loaded subscriber.
fn check_topic_balance(input: &GroupInput, a: &GroupAssignment) -> Result<(), String> {
    let sizes: Vec<usize> = a.partitions.iter().map(Vec::len).collect();
    for t in 0..input.topics.len() as u32 {
        let subscribers: Vec<usize> =
            (0..input.members.len()).filter(|&m| input.members[m].topics.contains(&t)).collect();
        let Some(least) = subscribers.iter().map(|&m| sizes[m]).min() else { continue };
        for &m in &subscribers {
            let holds = a.partitions[m].iter().any(|tp| tp.topic == t);
            if holds && sizes[m] > least + 1 {
                return Err(format!(
                    "{} holds t{t} with {} partitions, the topic's least loaded subscriber {least}",
                    input.members[m].id, sizes[m]
                ));
            }
        }
    }
    Ok(())
}

/// With equal subscriptions: member sizes within one (`checkValidityAndBalance`).
fn check_fully_balanced(a: &GroupAssignment) -> Result<(), String> {
    let sizes: Vec<usize> = a.partitions.iter().map(Vec::len).collect();
    let (lo, hi) = (sizes.iter().min().unwrap_or(&0), sizes.iter().max().unwrap_or(&0));
    if hi - lo > 1 {
        return Err(format!("sizes {sizes:?} differ by more than one"));
    }
    Ok(())
}

/// The group again with every member owning what `a` gave it.
fn owning(input: &GroupInput, a: &GroupAssignment) -> GroupInput {
    let mut next = input.clone();
    for (m, list) in next.members.iter_mut().zip(&a.partitions) {
        m.owned = list.clone();
    }
    next
}

/// `input` with its members listed in `order` (indices into `input.members`).
fn reordered(input: &GroupInput, order: &[usize]) -> GroupInput {
    let mut next = input.clone();
    next.members = order.iter().map(|&m| input.members[m].clone()).collect();
    next
}

/// `a` of `input` as member id -> partitions, to compare across member orders.
fn by_id(input: &GroupInput, a: &GroupAssignment) -> std::collections::BTreeMap<String, Vec<Tp>> {
    input.members.iter().zip(&a.partitions).map(|(m, l)| (m.id.clone(), l.clone())).collect()
}

/// Every rotation of `0..n` and its reversal.
fn member_orders(n: usize) -> Vec<Vec<usize>> {
    let mut orders: Vec<Vec<usize>> =
        (0..n).map(|r| (0..n).map(|i| (i + r) % n).collect()).collect();
    orders.push((0..n).rev().collect());
    orders
}

fn all_equal(input: &GroupInput) -> bool {
    input.members.windows(2).all(|w| w[0].topics == w[1].topics)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Validity always; the heterogeneous builder's per-topic balance; full balance when the
    /// subscriptions are equal. From the random claims and again from the answer.
    #[test]
    fn uniform_is_valid_and_balanced(s in spec()) {
        let input = build(&s);
        let first = uniform(&input);
        check_valid(&input, &first).map_err(TestCaseError::fail)?;
        check_topic_balance(&input, &first).map_err(TestCaseError::fail)?;
        if all_equal(&input) {
            check_fully_balanced(&first).map_err(TestCaseError::fail)?;
        }
    }

    /// `testAssignmentReuse` and `testReassignmentStickiness`: owning the answer, the group
    /// gets the same answer back, whatever its member order.
    #[test]
    fn uniform_keeps_its_own_answer_in_any_member_order(s in spec()) {
        let input = build(&s);
        let first = uniform(&input);
        let settled = owning(&input, &first);
        let want = by_id(&settled, &first);
        for order in member_orders(settled.members.len()) {
            let again = reordered(&settled, &order);
            let got = by_id(&again, &uniform(&again));
            prop_assert_eq!(&got, &want, "member order {:?}", order);
        }
    }
}

/// `testValidityAndBalanceForLargeSampleSet` (homogeneous: 100 topics of 3 partitions over
/// 49 members "member1".."member49"), then a heterogeneous version of it: member i subscribes
/// to the topics whose number is a multiple of (i % 4) + 1, so topic 12 has every member and
/// topic 1 a quarter of them; both again after the group reassigns with member 7 gone.
#[test]
fn large_sample_sets_are_valid_and_balanced() {
    let topics: Vec<Topic> =
        (1..=100).map(|i| Topic { name: format!("topic-{i:03}"), partitions: 3 }).collect();
    for heterogeneous in [false, true] {
        let members: Vec<Member> = (1..50)
            .map(|i| Member {
                id: format!("member{i}"),
                topics: (0..100u32)
                    .filter(|t| !heterogeneous || (t + 1) % (i % 4 + 1) == 0)
                    .collect(),
                ..Member::default()
            })
            .collect();
        let input = GroupInput {
            topic_ids: topic_ids(topics.len(), 42),
            topics: topics.clone(),
            members,
            ..GroupInput::default()
        };
        let first = uniform(&input);
        check_valid(&input, &first).unwrap();
        check_topic_balance(&input, &first).unwrap();
        if !heterogeneous {
            check_fully_balanced(&first).unwrap();
        }
        let mut smaller = owning(&input, &first);
        smaller.members.remove(6);
        let second = uniform(&smaller);
        check_valid(&smaller, &second).unwrap();
        check_topic_balance(&smaller, &second).unwrap();
        if !heterogeneous {
            check_fully_balanced(&second).unwrap();
        }
        // The members that stay lose nothing: the leaver's partitions are enough to top up.
        let kept = smaller.members.iter().zip(&second.partitions);
        for (m, got) in kept {
            assert!(m.owned.iter().all(|tp| got.contains(tp)), "{} lost a partition", m.id);
        }
    }
}
