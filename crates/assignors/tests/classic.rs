//! Range and roundrobin against the worked examples in
//! /work/shared/seeds/kafka-range-roundrobin-assignors.zh.txt (Kafka 2.6.2, two consumers, two
//! 9-partition topics) and against cases derived by hand from apache/kafka
//! `clients/.../consumer/RangeAssignor.java` and `RoundRobinAssignor.java` (their javadoc
//! examples and the `MemberInfo.compareTo` ordering).

mod support;

use assignors::{AssignorName, GroupInput, Member};
use support::*;

const ONE: &str = "test_topic_partition_one";
const TWO: &str = "test_topic_partition_two";
// Member ids from the seed's range example; "...-11580834..." sorts before "...-504e90bc...".
const R_A: &str = "consumer-group-one-1-11580834-fc23-468e-ae11-edbc3c4a74bd";
const R_B: &str = "consumer-group-one-1-504e90bc-c1cc-45d5-a687-5e4f98ee48c3";
// Member ids from the seed's roundrobin log line ("...-6c946240..." < "...-d227d230...").
// The seed's prose calls the second consumer "...-504e90bc..." in the roundrobin section, a
// copy slip: with that id it would sort first and the printed result would not follow; the
// log line of the same run names "...-d227d230...".
const RR_X: &str = "consumer-group-one-1-6c946240-3ffc-4bba-806d-7d7a0ccc1ad5";
const RR_Y: &str = "consumer-group-one-1-d227d230-8adc-4d4e-a092-77b63c07855a";

fn two_topics(a: (&str, &[&str]), b: (&str, &[&str])) -> GroupInput {
    let topics = topics(&[(ONE, 9), (TWO, 9)]);
    let members = vec![member(&topics, a.0, a.1), member(&topics, b.0, b.1)];
    GroupInput { topics, members, ..GroupInput::default() }
}

#[test]
fn seed_range_unequal_subscriptions() {
    // Topic one: 2 subscribers, 9 / 2 = 4, 9 % 2 = 1 extra -> A (first) 0..=4, B 5..=8.
    // Topic two: only A -> all 9.
    let input = two_topics((R_A, &[ONE, TWO]), (R_B, &[ONE]));
    let a = run(AssignorName::Range, &input);
    assert_eq!(
        names(&input, &a, R_A),
        cat(&[parts(ONE, &[0, 1, 2, 3, 4]), parts(TWO, &[0, 1, 2, 3, 4, 5, 6, 7, 8])])
    );
    assert_eq!(names(&input, &a, R_B), parts(ONE, &[5, 6, 7, 8]));
}

#[test]
fn seed_range_equal_subscriptions() {
    // Each topic alone: A gets 0..=4, B 5..=8; A's extra partition repeats in every topic.
    let input = two_topics((R_A, &[ONE, TWO]), (R_B, &[ONE, TWO]));
    let a = run(AssignorName::Range, &input);
    assert_eq!(
        names(&input, &a, R_A),
        cat(&[parts(ONE, &[0, 1, 2, 3, 4]), parts(TWO, &[0, 1, 2, 3, 4])])
    );
    assert_eq!(
        names(&input, &a, R_B),
        cat(&[parts(ONE, &[5, 6, 7, 8]), parts(TWO, &[5, 6, 7, 8])])
    );
}

#[test]
fn seed_roundrobin_unequal_subscriptions() {
    // one-0..8 alternate X, Y (X first); two-* : Y is skipped every time, so X takes all.
    let input = two_topics((RR_X, &[ONE, TWO]), (RR_Y, &[ONE]));
    let a = run(AssignorName::RoundRobin, &input);
    assert_eq!(
        names(&input, &a, RR_X),
        cat(&[parts(ONE, &[0, 2, 4, 6, 8]), parts(TWO, &[0, 1, 2, 3, 4, 5, 6, 7, 8])])
    );
    assert_eq!(names(&input, &a, RR_Y), parts(ONE, &[1, 3, 5, 7]));
}

#[test]
fn seed_roundrobin_equal_subscriptions() {
    // 18 partitions dealt alternately: one-8 is the 9th (X), so two-0 goes to Y, two-1 to X...
    let input = two_topics((RR_X, &[ONE, TWO]), (RR_Y, &[ONE, TWO]));
    let a = run(AssignorName::RoundRobin, &input);
    assert_eq!(
        names(&input, &a, RR_X),
        cat(&[parts(ONE, &[0, 2, 4, 6, 8]), parts(TWO, &[1, 3, 5, 7])])
    );
    assert_eq!(
        names(&input, &a, RR_Y),
        cat(&[parts(ONE, &[1, 3, 5, 7]), parts(TWO, &[0, 2, 4, 6, 8])])
    );
}

#[test]
fn range_javadoc_example() {
    // RangeAssignor javadoc: C0, C1; t0, t1 with 3 partitions -> C0 [t0p0, t0p1, t1p0, t1p1],
    // C1 [t0p2, t1p2].
    let topics = topics(&[("t0", 3), ("t1", 3)]);
    let members = vec![member(&topics, "C1", &["t0", "t1"]), member(&topics, "C0", &["t0", "t1"])];
    let input = GroupInput { topics, members, ..GroupInput::default() };
    let a = run(AssignorName::Range, &input);
    assert_eq!(names(&input, &a, "C0"), vec!["t0-0", "t0-1", "t1-0", "t1-1"]);
    assert_eq!(names(&input, &a, "C1"), vec!["t0-2", "t1-2"]);
}

#[test]
fn roundrobin_javadoc_examples() {
    // Equal: t0p0 C0, t0p1 C1, t0p2 C0, t1p0 C1, t1p1 C0, t1p2 C1.
    let topics_eq = topics(&[("t0", 3), ("t1", 3)]);
    let members =
        vec![member(&topics_eq, "C0", &["t0", "t1"]), member(&topics_eq, "C1", &["t0", "t1"])];
    let input = GroupInput { topics: topics_eq, members, ..GroupInput::default() };
    let a = run(AssignorName::RoundRobin, &input);
    assert_eq!(names(&input, &a, "C0"), vec!["t0-0", "t0-2", "t1-1"]);
    assert_eq!(names(&input, &a, "C1"), vec!["t0-1", "t1-0", "t1-2"]);
    // Unequal (javadoc): C0 {t0}, C1 {t0,t1}, C2 {t0,t1,t2}; t0:1, t1:2, t2:3 partitions.
    // t0p0 -> C0; t1p0: cursor C1 -> C1; t1p1: C2; t2p0: C0, C1 skipped -> C2; t2p1, t2p2 -> C2.
    let t = topics(&[("t0", 1), ("t1", 2), ("t2", 3)]);
    let members = vec![
        member(&t, "C0", &["t0"]),
        member(&t, "C1", &["t0", "t1"]),
        member(&t, "C2", &["t0", "t1", "t2"]),
    ];
    let input = GroupInput { topics: t, members, ..GroupInput::default() };
    let a = run(AssignorName::RoundRobin, &input);
    assert_eq!(names(&input, &a, "C0"), vec!["t0-0"]);
    assert_eq!(names(&input, &a, "C1"), vec!["t1-0"]);
    assert_eq!(names(&input, &a, "C2"), vec!["t1-1", "t2-0", "t2-1", "t2-2"]);
}

#[test]
fn more_members_than_partitions() {
    // Range: 2 partitions / 3 members = 0 each, 2 extras -> c0 p0, c1 p1, c2 none.
    // Roundrobin: the same here (one topic).
    let t = topics(&[("t", 2)]);
    let members =
        vec![member(&t, "c2", &["t"]), member(&t, "c0", &["t"]), member(&t, "c1", &["t"])];
    let input = GroupInput { topics: t, members, ..GroupInput::default() };
    for name in [AssignorName::Range, AssignorName::RoundRobin] {
        let a = run(name, &input);
        assert_eq!(names(&input, &a, "c0"), vec!["t-0"], "{name}");
        assert_eq!(names(&input, &a, "c1"), vec!["t-1"], "{name}");
        assert!(names(&input, &a, "c2").is_empty(), "{name}");
    }
}

#[test]
fn static_members_sort_first_by_instance_id() {
    // MemberInfo: static members first, by group.instance.id: c (y), b (z), then dynamic a.
    // Range over 3 partitions: c p0, b p1, a p2. A member id that sorts first does not matter.
    let t = topics(&[("t", 3)]);
    let with_gi = |id: &str, gi: &str| Member {
        group_instance_id: Some(gi.into()),
        ..member(&t, id, &["t"])
    };
    let members = vec![member(&t, "a", &["t"]), with_gi("b", "z"), with_gi("c", "y")];
    let input = GroupInput { topics: t, members, ..GroupInput::default() };
    let a = run(AssignorName::Range, &input);
    assert_eq!(names(&input, &a, "c"), vec!["t-0"]);
    assert_eq!(names(&input, &a, "b"), vec!["t-1"]);
    assert_eq!(names(&input, &a, "a"), vec!["t-2"]);
}

#[test]
fn topics_nobody_subscribes_to_stay_unassigned() {
    // "unused" (5 partitions) has no subscriber; "t" (2) is split c0 p0, c1 p1.
    let t = topics(&[("t", 2), ("unused", 5)]);
    let members = vec![member(&t, "c0", &["t"]), member(&t, "c1", &["t"])];
    let input = GroupInput { topics: t, members, ..GroupInput::default() };
    for name in [
        AssignorName::Range,
        AssignorName::RoundRobin,
        AssignorName::Sticky,
        AssignorName::Uniform,
        AssignorName::ConsumerRange,
    ] {
        let a = run(name, &input);
        let total: usize = a.partitions.iter().map(Vec::len).sum();
        assert_eq!(total, 2, "{name}: only t's 2 partitions are assigned");
        assert_eq!(names(&input, &a, "c0"), vec!["t-0"], "{name}");
    }
}

#[test]
fn range_is_per_topic_so_extras_pile_up() {
    // 3 topics x 4 partitions over 3 members: 4/3 = 1 each, 1 extra per topic, always to the
    // first member (a): a gets 2 per topic = 6, b and c 1 per topic = 3 each.
    let t = topics(&[("x", 4), ("y", 4), ("z", 4)]);
    let all = ["x", "y", "z"];
    let members = vec![member(&t, "a", &all), member(&t, "b", &all), member(&t, "c", &all)];
    let input = GroupInput { topics: t, members, ..GroupInput::default() };
    let a = run(AssignorName::Range, &input);
    assert_eq!(names(&input, &a, "a"), vec!["x-0", "x-1", "y-0", "y-1", "z-0", "z-1"]);
    assert_eq!(names(&input, &a, "b"), vec!["x-2", "y-2", "z-2"]);
    assert_eq!(names(&input, &a, "c"), vec!["x-3", "y-3", "z-3"]);
    // Roundrobin over the 12 sorted partitions: a gets x0 x3 y2 z1, b x1 y0 y3 z2, c x2 y1 z0 z3.
    let r = run(AssignorName::RoundRobin, &input);
    assert_eq!(names(&input, &r, "a"), vec!["x-0", "x-3", "y-2", "z-1"]);
    assert_eq!(names(&input, &r, "b"), vec!["x-1", "y-0", "y-3", "z-2"]);
    assert_eq!(names(&input, &r, "c"), vec!["x-2", "y-1", "z-0", "z-3"]);
}
