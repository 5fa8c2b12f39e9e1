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
    GroupInput { topics: t.to_vec(), members, source_count: None }
}

#[test]
fn uniform_fresh_group() {
    // 7 over a, b, c: min 2, 1 extra. All unfilled with 2; queue in HashMap order of "a"
    // (97 -> bucket 1), "b" (2), "c" (3). t-0 a, t-1 b, t-2 c, t-3 a, t-4 b, t-5 c (each now at
    // 0 remaining, kept: an extra is left), t-6 a (takes the extra, leaves).
    let t = topics(&[("t", 7)]);
    let input = owned_group(&t, &[("c", &[]), ("a", &[]), ("b", &[])]);
    let a = run(AssignorName::Uniform, &input);
    assert_eq!(names(&input, &a, "a"), vec!["t-0", "t-3", "t-6"]);
    assert_eq!(names(&input, &a, "b"), vec!["t-1", "t-4"]);
    assert_eq!(names(&input, &a, "c"), vec!["t-2", "t-5"]);
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
fn consumer_range_is_sticky() {
    // a owns t-0, t-1; b owns t-2; c joins. 3 over 3: min 1, extras 0. a keeps t-0 (its
    // lowest); b keeps t-2 (unfilled with 0); c unfilled with 1 takes the free t-1. Classic
    // range would move two partitions (a t-0, b t-1, c t-2); this moves one.
    let t = topics(&[("t", 3)]);
    let input = owned_group(&t, &[("a", &["t-0", "t-1"]), ("b", &["t-2"]), ("c", &[])]);
    let a = run(AssignorName::ConsumerRange, &input);
    assert_eq!(names(&input, &a, "a"), vec!["t-0"]);
    assert_eq!(names(&input, &a, "b"), vec!["t-2"]);
    assert_eq!(names(&input, &a, "c"), vec!["t-1"]);
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
