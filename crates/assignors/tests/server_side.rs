//! KIP-848 `uniform` and (sticky) `range`, and TubeMQ's modulo balancing, on cases derived by
//! hand from apache/kafka `group-coordinator/.../assignor/OptimizedUniformAssignmentBuilder.java`
//! and `RangeAssignor.java`, and apache/inlong `tubemq-server/.../balance/DefaultLoadBalancer.java`.

mod support;

use assignors::{tubemq_client_owns, tubemq_partition_key, AssignorName, GroupInput, Member};
use sim_core::RngStreams;
use support::*;

fn owned_group(t: &[assignors::Topic], spec: &[(&str, &[&str])]) -> GroupInput {
    let subscribed: Vec<&str> = t.iter().map(|x| x.name.as_str()).collect();
    let members = spec
        .iter()
        .map(|&(id, owned)| Member { owned: tps(t, owned), ..member(t, id, &subscribed) })
        .collect();
    GroupInput { topics: t.to_vec(), members, ..GroupInput::default() }
}

#[test]
fn uniform_fresh_group() {
    // Kafka 4.4.0 `UniformHomogeneousAssignmentBuilder`: 7 over a, b, c, min 2, 1 extra.
    // Members iterate in HashMap order of "a" (97 -> bucket 1), "b" (2), "c" (3). a starts
    // with quota 3 and the extra, holds nothing, and gives the extra up because 3 members
    // remain for 1 extra (3 - 0 > 1): quota 2. b likewise (3 - 1 = 2 > 1): quota 2. c keeps
    // it (3 - 2 = 1, not > 1): quota 3. The unassigned t-0..t-6 go out in runs: a t-0 t-1, b
    // t-2 t-3, c t-4 t-5 t-6.
    let t = topics(&[("t", 7)]);
    let input = owned_group(&t, &[("c", &[]), ("a", &[]), ("b", &[])]);
    let a = run(AssignorName::Uniform, &input);
    assert_eq!(names(&input, &a, "a"), vec!["t-0", "t-1"]);
    assert_eq!(names(&input, &a, "b"), vec!["t-2", "t-3"]);
    assert_eq!(names(&input, &a, "c"), vec!["t-4", "t-5", "t-6"]);
}

#[test]
fn uniform_join_moves_one_partition() {
    // d joins: 7 over 4, min 1, extras 3. a (3 > 1, extra left) keeps t-0, t-3; b keeps
    // t-1, t-4; c keeps t-2, t-5 (extras now 0); d unfilled with 1 -> gets t-6.
    let t = topics(&[("t", 7)]);
    let input = owned_group(
        &t,
        &[
            ("a", &["t-0", "t-3", "t-6"]),
            ("b", &["t-1", "t-4"]),
            ("c", &["t-2", "t-5"]),
            ("d", &[]),
        ],
    );
    let a = run(AssignorName::Uniform, &input);
    assert_eq!(names(&input, &a, "a"), vec!["t-0", "t-3"]);
    assert_eq!(names(&input, &a, "b"), vec!["t-1", "t-4"]);
    assert_eq!(names(&input, &a, "c"), vec!["t-2", "t-5"]);
    assert_eq!(names(&input, &a, "d"), vec!["t-6"]);
}

#[test]
fn consumer_range_fresh_equals_classic_range() {
    // Per topic: 3 over 2, min 1, 1 extra: a takes 2 (0, 1), b 1 (2), in both topics.
    let t = topics(&[("t1", 3), ("t2", 3)]);
    let input = owned_group(&t, &[("b", &[]), ("a", &[])]);
    let a = run(AssignorName::ConsumerRange, &input);
    assert_eq!(names(&input, &a, "a"), vec!["t1-0", "t1-1", "t2-0", "t2-1"]);
    assert_eq!(names(&input, &a, "b"), vec!["t1-2", "t2-2"]);
    assert_eq!(a, run(AssignorName::Range, &input));
}

#[test]
fn consumer_range_ignores_the_current_assignment() {
    // Kafka 4.4.0's server-side range (KAFKA-16944, 3.9+) is plain ranges: a owns t-0, t-1, b
    // owns t-2, c joins; 3 over 3 (min 1, no extras) in member-id order gives a t-0, b t-1,
    // c t-2, moving two partitions where 3.8's sticky version kept a's t-0 and b's t-2 and
    // moved one.
    let t = topics(&[("t", 3)]);
    let input = owned_group(&t, &[("a", &["t-0", "t-1"]), ("b", &["t-2"]), ("c", &[])]);
    let a = run(AssignorName::ConsumerRange, &input);
    assert_eq!(names(&input, &a, "a"), vec!["t-0"]);
    assert_eq!(names(&input, &a, "b"), vec!["t-1"]);
    assert_eq!(names(&input, &a, "c"), vec!["t-2"]);
}

#[test]
fn consumer_range_puts_static_members_first() {
    // `sortMemberIds`: members with a group.instance.id first, by it, then the others by
    // member id. 5 over z (instance "i1"), a (no instance), m (instance "i0"): m, z, a; min 1,
    // 2 extras: m t-0 t-1, z t-2 t-3, a t-4.
    let t = topics(&[("t", 5)]);
    let mut input = owned_group(&t, &[("z", &[]), ("a", &[]), ("m", &[])]);
    input.members[0].group_instance_id = Some("i1".into());
    input.members[2].group_instance_id = Some("i0".into());
    let a = run(AssignorName::ConsumerRange, &input);
    assert_eq!(names(&input, &a, "m"), vec!["t-0", "t-1"]);
    assert_eq!(names(&input, &a, "z"), vec!["t-2", "t-3"]);
    assert_eq!(names(&input, &a, "a"), vec!["t-4"]);
}

#[test]
fn uniform_visits_topics_by_topic_id_hash_and_keeps_partitions_in_hashset_order() {
    // Two topics with Kafka's test ids: t1 = topic1's id (hash 418407434, bucket 10 of 16),
    // t3 = topic3's (365927798, bucket 9): t3's partitions are handed out first. A and B,
    // 3 + 2 partitions, min 2, 1 extra: A (first, 2 - 0 > 1) gives the extra up, so A takes
    // t3-0 t3-1 and B t1-0 t1-1 t1-2 (what the 4.4.0 jar answers: scripts/real/assignor_diff.py).
    let t = topics(&[("t1", 3), ("t3", 2)]);
    let mut input = owned_group(&t, &[("A", &[]), ("B", &[])]);
    input.topic_ids = ["T1-A4s3VTwiI5CTbEp6POw", "T3-CU8fVTLCz5YMkLoDQsa"]
        .iter()
        .map(|s| assignors::TopicId::parse(s).unwrap())
        .collect();
    let a = run(AssignorName::Uniform, &input);
    assert_eq!(names(&input, &a, "A"), vec!["t3-0", "t3-1"]);
    assert_eq!(names(&input, &a, "B"), vec!["t1-0", "t1-1", "t1-2"]);
    // `maybeRevokePartitions` keeps a member's partitions in the order of its HashSet, not
    // ascending. a holds 0..=6 and 30..=39 of t (17 partitions, copied into a HashSet of 32
    // buckets: 17 / .75 + 1 = 23 -> 32); b, c, d join: 40 over 4, quota 10. The set visits
    // bucket 0 (0, 32), 1 (1, 33), 2 (2, 34), 3 (3, 35), 4 (4, 36), 5 (5, 37), 6 (6, 38), 7
    // (39), 30, 31: a keeps the first ten, 0-4 and 32-36 (ascending it would keep 0-6, 30-32).
    let t = topics(&[("t", 40)]);
    let owned: Vec<String> = (30..40).chain(0..7).map(|p| format!("t-{p}")).collect();
    let owned: Vec<&str> = owned.iter().map(String::as_str).collect();
    let input = owned_group(&t, &[("a", &owned), ("b", &[]), ("c", &[]), ("d", &[])]);
    let a = run(AssignorName::Uniform, &input);
    assert_eq!(
        names(&input, &a, "a"),
        vec!["t-0", "t-1", "t-2", "t-3", "t-4", "t-32", "t-33", "t-34", "t-35", "t-36"]
    );
}

#[test]
fn uniform_heterogeneous_breaks_ties_by_the_brokers_member_order() {
    // `UniformHeterogeneousAssignmentBuilder` numbers the members in `groupSpec.memberIds()`
    // order, a HashMap of member ids on the broker: "p" (112 -> bucket 0), "a" (97 -> 1), "c"
    // (99 -> 3). a and p subscribe to t1 (1 partition), c to t2 (1 partition). Topics by
    // partitions per subscriber: t2 (1) first, to c; then t1 (0.5) to the least loaded of a
    // and p, both at 0, the tie broken by member index: p on the broker. Kafka's tests build
    // the group in a TreeMap (member order "given", sorted here): there a gets it.
    let t = topics(&[("t1", 1), ("t2", 1)]);
    let members =
        vec![member(&t, "a", &["t1"]), member(&t, "c", &["t2"]), member(&t, "p", &["t1"])];
    let mut input = GroupInput { topics: t.clone(), members, ..GroupInput::default() };
    let broker = run(AssignorName::Uniform, &input);
    assert_eq!(names(&input, &broker, "p"), vec!["t1-0"]);
    assert_eq!(names(&input, &broker, "a"), Vec::<String>::new());
    assert_eq!(names(&input, &broker, "c"), vec!["t2-0"]);
    input.member_order = assignors::MemberOrder::Given;
    let given = run(AssignorName::Uniform, &input);
    assert_eq!(names(&input, &given, "a"), vec!["t1-0"]);
    assert_eq!(names(&input, &given, "p"), Vec::<String>::new());
}

#[test]
fn tubemq_partition_key_and_client_rule() {
    assert_eq!(tubemq_partition_key("orders", 3), "1:orders:3");
    // "1:t:0".hashCode(): 49 -> 49*31+58 = 1577 -> 1577*31+116 = 49003 -> 49003*31+58 =
    // 1519151 -> 1519151*31+48 = 47093729. 47093729 = 3*15697909 + 2 -> node 2 of 3.
    // "1:t:1" = 47093730 -> node 0; "1:t:2" = 47093731 -> node 1.
    assert!(tubemq_client_owns("t", 0, 3, 2));
    assert!(tubemq_client_owns("t", 1, 3, 0));
    assert!(tubemq_client_owns("t", 2, 3, 1));
    assert!(!tubemq_client_owns("t", 0, 3, 0));
    // "1:orders:0".hashCode() is negative: -1558048252; & 0xffffffffL gives
    // 2^32 - 1558048252 = 2736919044 = 3 * 912306348 -> node 0 (a signed remainder would be
    // -1 and match no node).
    assert!(tubemq_client_owns("orders", 0, 3, 0));
}

#[test]
fn modulo_uses_the_client_rule_with_source_count() {
    // Same keys as above: with source_count 3, node 0 gets t-1, node 1 t-2, node 2 t-0; a
    // member without node_id gets nothing.
    let t = topics(&[("t", 3)]);
    let node = |id: &str, n: Option<u32>| Member { node_id: n, ..member(&t, id, &["t"]) };
    let input = GroupInput {
        topics: t.clone(),
        members: vec![
            node("m0", Some(0)),
            node("m1", Some(1)),
            node("m2", Some(2)),
            node("m3", None),
        ],
        source_count: Some(3),
        ..GroupInput::default()
    };
    let a = run(AssignorName::Modulo, &input);
    assert_eq!(names(&input, &a, "m0"), vec!["t-1"]);
    assert_eq!(names(&input, &a, "m1"), vec!["t-2"]);
    assert_eq!(names(&input, &a, "m2"), vec!["t-0"]);
    assert!(names(&input, &a, "m3").is_empty());
}

#[test]
fn tubemq_server_first_allocation_sorts_and_splits() {
    // Nobody owns anything: bukAssign, members sorted (a, b): 5 partitions -> a 0..=2, b 3, 4.
    let t = topics(&[("t", 5)]);
    let input = owned_group(&t, &[("b", &[]), ("a", &[])]);
    let a = run(AssignorName::Modulo, &input);
    assert_eq!(names(&input, &a, "a"), vec!["t-0", "t-1", "t-2"]);
    assert_eq!(names(&input, &a, "b"), vec!["t-3", "t-4"]);
}

#[test]
fn tubemq_server_balance_sheds_to_the_newcomer() {
    // a owns all 5, b joins: nothing unowned -> balance. min 2, max 3, one member may stay at
    // max: a sheds 5 - 3 = 2 from the front (t-0, t-1); b (load 0) takes up to 3: both.
    let t = topics(&[("t", 5)]);
    let input = owned_group(&t, &[("a", &["t-0", "t-1", "t-2", "t-3", "t-4"]), ("b", &[])]);
    let a = run(AssignorName::Modulo, &input);
    assert_eq!(names(&input, &a, "a"), vec!["t-2", "t-3", "t-4"]);
    assert_eq!(names(&input, &a, "b"), vec!["t-0", "t-1"]);
}

#[test]
fn tubemq_server_places_orphans_at_random_from_the_seeded_stream() {
    // A member left: t-3, t-4 are unowned. Owners keep theirs; each orphan lands on a member;
    // no balancing this period. Same seed -> same placement.
    let t = topics(&[("t", 5)]);
    let input = owned_group(&t, &[("a", &["t-0", "t-1"]), ("b", &["t-2"]), ("c", &[])]);
    let draw = |seed| {
        assignors::assign(AssignorName::Modulo, &input, &mut RngStreams::new(seed).stream("tubemq"))
    };
    let first = draw(11);
    assert_eq!(first, draw(11));
    let all: usize = first.partitions.iter().map(Vec::len).sum();
    assert_eq!(all, 5);
    assert!(names(&input, &first, "a").starts_with(&["t-0".to_string(), "t-1".to_string()]));
    assert!(names(&input, &first, "b").contains(&"t-2".to_string()));
    // Over 20 seeds both orphans do not always land on the same member.
    let spread = (0..20u64).map(draw).filter(|x| names(&input, x, "c").len() == 1).count();
    assert!(spread > 0, "the placement uses the random stream");
}

#[test]
fn tubemq_server_balance_can_shed_a_partition_nobody_takes() {
    // DefaultLoadBalancer.balance quirk, kept on purpose: m0 owns t-0, t-2, t-4; m1 t-3; m2
    // t-1. 5 over 3: min 1, max 2, two members may stay at max. m0 (3 >= 2) sheds 3 - 2 = 1
    // (t-0); m1 and m2 have load 1 = min (< max but neither 0 nor < min), so they are not in
    // `serverToTake`: t-0 stays unassigned until the next period places it at random.
    let t = topics(&[("t", 5)]);
    let input =
        owned_group(&t, &[("m0", &["t-0", "t-2", "t-4"]), ("m1", &["t-3"]), ("m2", &["t-1"])]);
    let a = run(AssignorName::Modulo, &input);
    assert_eq!(names(&input, &a, "m0"), vec!["t-2", "t-4"]);
    assert_eq!(names(&input, &a, "m1"), vec!["t-3"]);
    assert_eq!(names(&input, &a, "m2"), vec!["t-1"]);
    // Next period: t-0 is unowned -> placed on some member by the seeded stream.
    let mut next = input.clone();
    for (m, list) in next.members.iter_mut().zip(&a.partitions) {
        m.owned = list.clone();
    }
    let b = run(AssignorName::Modulo, &next);
    assert_eq!(b.partitions.iter().filter(|l| l.contains(&tps(&t, &["t-0"])[0])).count(), 1);
}

#[test]
fn whole_group_client_rule_agrees_with_the_per_member_function() {
    // The fast whole-group path must match `tubemq_client_partitions` member by member.
    let t = topics(&[("orders", 40), ("payments", 25)]);
    let mut input = owned_group(&t, &[("a", &[]), ("b", &[]), ("c", &[]), ("d", &[])]);
    input.source_count = Some(3);
    for (i, m) in input.members.iter_mut().enumerate() {
        m.node_id = Some(i as u32 % 3); // d shares node 0 with a
    }
    let a = run(AssignorName::Modulo, &input);
    for m in 0..input.members.len() {
        assert_eq!(a.partitions[m], assignors::tubemq_client_partitions(&input, m, 3));
    }
    assert_eq!(a.partitions[0], a.partitions[3]);
    // And with the string-building rule, partition by partition, for node 1 (member b).
    let slow: Vec<String> = [("orders", 40u32), ("payments", 25)]
        .iter()
        .flat_map(|&(name, n)| (0..n).map(move |p| (name, p)))
        .filter(|&(name, p)| tubemq_client_owns(name, p, 3, 1))
        .map(|(name, p)| format!("{name}-{p}"))
        .collect();
    assert_eq!(names(&input, &a, "b"), slow);
    let total: usize = a.partitions[..3].iter().map(Vec::len).sum();
    assert_eq!(total, 65, "nodes 0..3 cover every partition exactly once");
}
