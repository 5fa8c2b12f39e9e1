//! Hot paths of a protocol run, end to end (model + metrics fold), so a slowdown shows up in
//! review: one join rebalance of a 1,000-member group, and the steady-state advance of one
//! member (fast stepping, which jumps over repeating poll-loop cycles, and plain stepping, one
//! queued event per step). `cargo bench -p lab --bench model`.
// criterion_group! generates undocumented functions.
#![allow(missing_docs)]
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use scenario::{ProtocolSpec, Scenario};
use std::path::Path;

/// A scenario of `members` members on one topic of `partitions` partitions (`rate` records/s
/// each, 0.5 ms per record), no initial rebalance delay, running `duration`.
fn scenario(members: u32, partitions: u32, rate: f64, duration: &str) -> Scenario {
    let text = format!(
        r#"
name = "bench"
duration = "{duration}"
protocols = ["eager:range"]

[[topic]]
name = "t"
partitions = {partitions}
rate = {rate}

[consumer]
processing = "0.5ms"

[broker.config]
"group.initial.rebalance.delay.ms" = 0

[group]
members = {members}
"#
    );
    scenario::parse_str(&text, Path::new("bench.toml")).expect("a valid bench scenario")
}

fn protocol(text: &str) -> ProtocolSpec {
    Scenario::parse_protocol(text).expect("a valid protocol")
}

/// The group forms: 1,000 members join one generation (join barrier, leader assignment over
/// 1,000 partitions, sync), then 1 s of heartbeats and light consumption.
fn rebalance_1000_members(c: &mut Criterion) {
    let mut group = c.benchmark_group("rebalance");
    group.sample_size(10);
    let s = scenario(1000, 1000, 1.0, "2s");
    for p in ["eager:range", "cooperative:cooperative-sticky"] {
        let spec = protocol(p);
        group.bench_function(format!("join_1000_members_{}", p.replace(':', "_")), |b| {
            b.iter(|| lab::run_protocol(&s, spec, 1).expect("runs"))
        });
    }
    group.finish();
}

/// One member owning 10 partitions at 100 records/s each for 60 simulated seconds: 60,000
/// records through the poll loop, batch timing and the metrics fold.
fn steady_member(c: &mut Criterion) {
    let mut group = c.benchmark_group("steady_state");
    group.sample_size(10);
    group.throughput(Throughput::Elements(60_000));
    let s = scenario(1, 10, 100.0, "60s");
    let spec = protocol("eager:range");
    for (name, stepping) in [("fast", lab::Stepping::Fast), ("plain", lab::Stepping::Plain)] {
        group.bench_function(format!("one_member_60s_60k_records_{name}"), |b| {
            b.iter(|| lab::run_protocol_stepped(&s, spec, 1, stepping).expect("runs"))
        });
    }
    group.finish();
}

criterion_group!(benches, rebalance_1000_members, steady_member);
criterion_main!(benches);
