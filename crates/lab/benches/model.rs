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
    scenario_with(members, partitions, rate, duration, CONSTANT)
}

/// Constant arrivals and processing.
const CONSTANT: (&str, &str) = ("\"constant\"", "\"0.5ms\"");

/// Poisson arrivals and lognormal processing (mean 0.5 ms, p99 2 ms), as in
/// `sims/bench/large-rolling-restart-stochastic.toml`.
const STOCHASTIC: (&str, &str) =
    ("\"poisson\"", "{ dist = \"lognormal\", mean = \"0.5ms\", p99 = \"2ms\" }");

/// [`scenario`] with the given `arrival` and `processing` values (TOML text).
fn scenario_with(
    members: u32,
    partitions: u32,
    rate: f64,
    duration: &str,
    (arrival, processing): (&str, &str),
) -> Scenario {
    let text = format!(
        r#"
name = "bench"
duration = "{duration}"
protocols = ["eager:range"]

[[topic]]
name = "t"
partitions = {partitions}
rate = {rate}
arrival = {arrival}

[consumer]
processing = {processing}

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

/// The stochastic steady state: the member of [`steady_member`] with Poisson arrivals and
/// lognormal processing (each record's arrival and processing time drawn, no cycle to jump),
/// and the draws alone (100,000 records' arrivals of one Poisson log and as many lognormal
/// processing times): the floor of any exact run that draws every record.
fn stochastic_member(c: &mut Criterion) {
    let mut group = c.benchmark_group("stochastic");
    group.sample_size(10);
    group.throughput(Throughput::Elements(60_000));
    let s = scenario_with(1, 10, 100.0, "60s", STOCHASTIC);
    let spec = protocol("eager:range");
    group.bench_function("one_member_60s_60k_records", |b| {
        b.iter(|| lab::run_protocol(&s, spec, 1).expect("runs"))
    });
    const RECORDS: u64 = 100_000;
    group.throughput(Throughput::Elements(RECORDS));
    let streams = sim_core::RngStreams::new(1);
    let processing = model::processing::ProcessingSampler::new(&scenario::Processing::Lognormal {
        mean: sim_core::SimTime::from_micros(500),
        p99: sim_core::SimTime::from_millis(2),
    });
    let draws = lab::draws::Draws { poisson_rate_per_s: Some(100.0), processing };
    group.bench_function("draws_100k_records", |b| b.iter(|| draws.draw(&streams, RECORDS)));
    group.finish();
}

criterion_group!(benches, rebalance_1000_members, steady_member, stochastic_member);
criterion_main!(benches);
