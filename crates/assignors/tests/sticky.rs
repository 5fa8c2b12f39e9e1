//! Sticky and cooperative-sticky on cases derived by hand from apache/kafka
//! `clients/.../consumer/internals/AbstractStickyAssignor.java` (`allSubscriptionsEqual`,
//! `constrainedAssign`) and `CooperativeStickyAssignor.java` (`adjustAssignment`).
//!
//! Java `HashMap` order of the ids "c0".."c3" (capacity 16): hashCode("cN") = 99*31 + 48 + N
//! = 3117 + N, bucket = hash & 15 -> c0: 13, c1: 14, c2: 15, c3: 3120 & 15 = 0. So Kafka
//! visits c3, c0, c1, c2.

mod support;

use assignors::{AssignorName, GroupInput, Member, Topic};
use support::*;

fn group(t: &[Topic], spec: &[(&str, &[&str], i32)]) -> GroupInput {
    let members = spec
        .iter()
        .map(|&(id, owned, generation)| Member {
            owned: tps(t, owned),
            generation,
            ..member(t, id, &["t"])
        })
        .collect();
    GroupInput { topics: t.to_vec(), members, ..GroupInput::default() }
}

#[test]
fn fresh_group_is_dealt_round_robin_in_id_order() {
    // 7 partitions, 3 members: min 2, max 3, one member at max. All under min, sorted c0 c1 c2:
    // t0 c0, t1 c1, t2 c2, t3 c0 (reaches min -> exactly-min queue), t4 c1, t5 c2; t6 goes
    // to the head of the exactly-min queue, c0.
    let t = topics(&[("t", 7)]);
    let input = group(&t, &[("c2", &[], -1), ("c0", &[], -1), ("c1", &[], -1)]);
    for name in [AssignorName::Sticky, AssignorName::CooperativeSticky] {
        let a = run(name, &input);
        assert_eq!(names(&input, &a, "c0"), vec!["t-0", "t-3", "t-6"], "{name}");
        assert_eq!(names(&input, &a, "c1"), vec!["t-1", "t-4"], "{name}");
        assert_eq!(names(&input, &a, "c2"), vec!["t-2", "t-5"], "{name}");
    }
}

fn after_join() -> GroupInput {
    let t = topics(&[("t", 7)]);
    group(
        &t,
        &[
            ("c0", &["t-0", "t-3", "t-6"], 1),
            ("c1", &["t-1", "t-4"], 1),
            ("c2", &["t-2", "t-5"], 1),
            ("c3", &[], -1),
        ],
    )
}

#[test]
fn join_moves_one_partition_eager() {
    // 7 over 4: min 1, max 2, 3 members may hold 2. Visit order c3, c0, c1, c2: c3 owns 0 (<1,
    // under min); c0 owns 3 >= 2 -> keeps t-0, t-3, revokes t-6 (1 at max); c1, c2 keep their 2
    // (3 at max: the exactly-min queue is cleared). t-6 goes to c3.
    let input = after_join();
    let a = run(AssignorName::Sticky, &input);
    assert_eq!(names(&input, &a, "c0"), vec!["t-0", "t-3"]);
    assert_eq!(names(&input, &a, "c1"), vec!["t-1", "t-4"]);
    assert_eq!(names(&input, &a, "c2"), vec!["t-2", "t-5"]);
    assert_eq!(names(&input, &a, "c3"), vec!["t-6"]);
}

#[test]
fn join_withholds_the_moving_partition_cooperative() {
    // Same as above, but t-6 changes owner (c0 -> c3): withheld in round 1.
    let input = after_join();
    let a = run(AssignorName::CooperativeSticky, &input);
    assert_eq!(names(&input, &a, "c0"), vec!["t-0", "t-3"]);
    assert!(names(&input, &a, "c3").is_empty());
    // Round 2: c0 revoked t-6 and everyone rejoins with generation 2; t-6 is unowned, so it
    // is no longer "transferring" and c3 (under min) gets it.
    let mut round2 = input.clone();
    for (m, list) in round2.members.iter_mut().zip(&a.partitions) {
        m.owned = list.clone();
        m.generation = 2;
    }
    let b = run(AssignorName::CooperativeSticky, &round2);
    assert_eq!(names(&round2, &b, "c3"), vec!["t-6"]);
    assert_eq!(names(&round2, &b, "c0"), vec!["t-0", "t-3"]);
}

#[test]
fn highest_generation_claim_wins() {
    // c0 claims t-0 at generation 1 (stale), c1 at generation 2: c1 keeps it. 2 partitions,
    // 2 members: min = max = 1. c0 has no valid claim -> under min -> gets t-1.
    let t = topics(&[("t", 2)]);
    let input = group(&t, &[("c0", &["t-0"], 1), ("c1", &["t-0"], 2)]);
    for name in [AssignorName::Sticky, AssignorName::CooperativeSticky] {
        let a = run(name, &input);
        assert_eq!(names(&input, &a, "c1"), vec!["t-0"], "{name}");
        assert_eq!(names(&input, &a, "c0"), vec!["t-1"], "{name}");
    }
}

#[test]
fn same_generation_double_claim_is_dropped_from_both() {
    // c0 and c1 both claim t-0 at generation 3 (KAFKA-12984): neither keeps it. Both under
    // min (1), sorted c0 c1: t-0 -> c0, t-1 -> c1. t-0 had several previous owners, so the
    // cooperative assignor withholds it from c0 in round 1.
    let t = topics(&[("t", 2)]);
    let input = group(&t, &[("c1", &["t-0"], 3), ("c0", &["t-0"], 3)]);
    let a = run(AssignorName::Sticky, &input);
    assert_eq!(names(&input, &a, "c0"), vec!["t-0"]);
    assert_eq!(names(&input, &a, "c1"), vec!["t-1"]);
    let c = run(AssignorName::CooperativeSticky, &input);
    assert!(names(&input, &c, "c0").is_empty());
    assert_eq!(names(&input, &c, "c1"), vec!["t-1"]);
}

#[test]
fn leave_spreads_the_orphans() {
    // c1 left; c0 owns t-0..t-2, c2 owns t-3..t-5 (generation 4); 6 partitions over 2: min =
    // max = 3, nothing moves. Then 7 partitions (t-6 added): min 3, max 4, one member at max.
    // Order c0 (bucket 13), c2 (15): c0 owns 3 < max -> keeps 3, joins the exactly-min queue;
    // c2 the same. t-6 goes to the queue head after sorting: c0.
    let t = topics(&[("t", 6)]);
    let input = group(&t, &[("c0", &["t-0", "t-1", "t-2"], 4), ("c2", &["t-3", "t-4", "t-5"], 4)]);
    let a = run(AssignorName::Sticky, &input);
    assert_eq!(names(&input, &a, "c0"), vec!["t-0", "t-1", "t-2"]);
    assert_eq!(names(&input, &a, "c2"), vec!["t-3", "t-4", "t-5"]);
    let mut grown = input.clone();
    grown.topics[0].partitions = 7;
    let b = run(AssignorName::CooperativeSticky, &grown);
    assert_eq!(names(&grown, &b, "c0"), vec!["t-0", "t-1", "t-2", "t-6"]);
    assert_eq!(names(&grown, &b, "c2"), vec!["t-3", "t-4", "t-5"]);
}

#[test]
fn unequal_subscriptions_general_case() {
    // a subscribes x (2 partitions); b subscribes x and y (y: 4 partitions). Nothing owned.
    // Unassigned sorted by number of eligible members: y-0..3 (1 eligible: b) first, then
    // x-0, x-1 (2 eligible) to the least loaded: a (0) gets x-0, then a (1) vs b (4): x-1 -> a.
    let t = topics(&[("x", 2), ("y", 4)]);
    let members = vec![member(&t, "a", &["x"]), member(&t, "b", &["x", "y"])];
    let input = GroupInput { topics: t, members, ..GroupInput::default() };
    let a = run(AssignorName::Sticky, &input);
    assert_eq!(names(&input, &a, "a"), vec!["x-0", "x-1"]);
    assert_eq!(names(&input, &a, "b"), vec!["y-0", "y-1", "y-2", "y-3"]);
}

#[test]
fn unequal_subscriptions_cooperative_withholds_moves() {
    // b owned x-0, x-1, y-0 (gen 1); a is new and subscribes x only. Kept: b's 3. a (0) is
    // least loaded for x but x is all owned; balance: b (3) > a (0) + 1 -> x-0 moves to a
    // (b 2, a 1), then x-1: b 2 > a 1 + 1? no. Eager: a [x-0], b [x-1, y-0]. Cooperative:
    // x-0 is owned by b and added to a -> withheld.
    let t = topics(&[("x", 2), ("y", 1)]);
    let members = vec![
        member(&t, "a", &["x"]),
        Member {
            owned: tps(&t, &["x-0", "x-1", "y-0"]),
            generation: 1,
            ..member(&t, "b", &["x", "y"])
        },
    ];
    let input = GroupInput { topics: t, members, ..GroupInput::default() };
    let e = run(AssignorName::Sticky, &input);
    assert_eq!(names(&input, &e, "a"), vec!["x-0"]);
    assert_eq!(names(&input, &e, "b"), vec!["x-1", "y-0"]);
    let c = run(AssignorName::CooperativeSticky, &input);
    assert!(names(&input, &c, "a").is_empty());
    assert_eq!(names(&input, &c, "b"), vec!["x-1", "y-0"]);
}

#[test]
fn kept_claims_are_the_lowest_partition_numbers_across_topics() {
    // Kafka 3.5+ sorts a member's claims by partition, then topic: c0's a-0, a-1, b-0, b-1
    // become a-0, b-0, a-1, b-1. 4 over 2: min = max = 2 -> c0 keeps a-0, b-0 and revokes
    // a-1, b-1, which go (sorted) to c1, the only under-min member.
    let t = topics(&[("a", 2), ("b", 2)]);
    let members = vec![
        Member {
            owned: tps(&t, &["a-0", "a-1", "b-0", "b-1"]),
            generation: 1,
            ..member(&t, "c0", &["a", "b"])
        },
        member(&t, "c1", &["a", "b"]),
    ];
    let input = GroupInput { topics: t, members, ..GroupInput::default() };
    let a = run(AssignorName::Sticky, &input);
    assert_eq!(names(&input, &a, "c0"), vec!["a-0", "b-0"]);
    assert_eq!(names(&input, &a, "c1"), vec!["a-1", "b-1"]);
    let c = run(AssignorName::CooperativeSticky, &input);
    assert!(names(&input, &c, "c1").is_empty(), "both move from c0: withheld");
}
