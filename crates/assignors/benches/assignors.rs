//! Criterion benchmarks: every assignor at 2,000 members x 100,000 partitions (10 topics of
//! 10,000, everyone subscribed to all), and cooperative-sticky at 2,000 members x 1,000,000
//! partitions (Kafka's `testLargeAssignmentAndGroupWithUniformSubscription` size). Each
//! benchmark is a rebalance after one member left and a new one joined: members own what a
//! first assignment of the old group gave them (generation 1). `uniform-into` is the uniform
//! one through `assign_into`, with the buffers of the previous iteration (as the KIP-848
//! coordinator calls it).
#![allow(missing_docs)]

use assignors::{
    assign, assign_into, AssignScratch, AssignorName, GroupAssignment, GroupInput, Member, Topic,
};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use sim_core::RngStreams;
use std::hint::black_box;

fn group(members: usize, topics: u32, partitions_per_topic: u32) -> GroupInput {
    let topics: Vec<Topic> = (0..topics)
        .map(|t| Topic { name: format!("topic-{t:03}"), partitions: partitions_per_topic })
        .collect();
    let all: Vec<u32> = (0..topics.len() as u32).collect();
    let members = (0..members)
        .map(|m| Member {
            id: format!("consumer-{m:05}"),
            topics: all.clone(),
            generation: 1,
            ..Member::default()
        })
        .collect();
    GroupInput { topics, members, ..GroupInput::default() }
}

/// The group after a first assignment (with `name`), with member 0 replaced by a newcomer.
fn rebalance_input(name: AssignorName, mut input: GroupInput) -> GroupInput {
    let mut rng = RngStreams::new(1).stream("assignor");
    let first = assign(name, &input, &mut rng);
    for (member, owned) in input.members.iter_mut().zip(first.partitions) {
        member.owned = owned;
    }
    input.members[0] = Member {
        id: "consumer-new".into(),
        topics: input.members[0].topics.clone(),
        ..Member::default()
    };
    input
}

fn bench_all(c: &mut Criterion) {
    let mut g = c.benchmark_group("2000x100k");
    g.sample_size(10);
    let names = [
        AssignorName::Range,
        AssignorName::RoundRobin,
        AssignorName::Sticky,
        AssignorName::CooperativeSticky,
        AssignorName::Uniform,
        AssignorName::ConsumerRange,
        AssignorName::Modulo,
    ];
    for name in names {
        let input = rebalance_input(name, group(2000, 10, 10_000));
        g.bench_with_input(
            BenchmarkId::from_parameter(
                name.to_string() + if name == AssignorName::ConsumerRange { "-848" } else { "" },
            ),
            &input,
            |b, input| {
                let mut rng = RngStreams::new(1).stream("assignor");
                b.iter(|| assign(name, black_box(input), &mut rng))
            },
        );
    }
    let input = rebalance_input(AssignorName::Uniform, group(2000, 10, 10_000));
    g.bench_function("uniform-into", |b| {
        let mut rng = RngStreams::new(1).stream("assignor");
        let (mut scratch, mut out) = (AssignScratch::default(), GroupAssignment::default());
        b.iter(|| {
            assign_into(AssignorName::Uniform, black_box(&input), &mut rng, &mut scratch, &mut out)
        })
    });
    let mut client = group(2000, 10, 10_000);
    client.source_count = Some(2000);
    for (i, m) in client.members.iter_mut().enumerate() {
        m.node_id = Some(i as u32);
    }
    g.bench_function("modulo-client", |b| {
        let mut rng = RngStreams::new(1).stream("assignor");
        b.iter(|| assign(AssignorName::Modulo, black_box(&client), &mut rng))
    });
    g.finish();
}

fn bench_large(c: &mut Criterion) {
    let mut g = c.benchmark_group("2000x1M");
    g.sample_size(10);
    let name = AssignorName::CooperativeSticky;
    let input = rebalance_input(name, group(2000, 10, 100_000));
    g.bench_function("cooperative-sticky", |b| {
        let mut rng = RngStreams::new(1).stream("assignor");
        b.iter(|| assign(name, black_box(&input), &mut rng))
    });
    g.finish();
}

criterion_group!(benches, bench_all, bench_large);
criterion_main!(benches);
