//! The metrics fold of processed records: one million records of 10 (or 10,000, the size of
//! the performance reference) partitions, delivered in order in batches of 10 (the steady
//! state of a member), through `Collector::observe`.
//! `cargo bench -p metrics --bench fold`.
// criterion_group! generates undocumented functions.
#![allow(missing_docs)]
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use metrics::{Collector, RunLabels};
use model::{MemberRef, Observation, Observer, PartState, Tp};
use sim_core::SimTime;

const RECORDS: u64 = 1_000_000;
const BATCH: u64 = 10;

fn labels() -> RunLabels {
    RunLabels {
        scenario: "bench".into(),
        protocol: "eager".into(),
        assignor: "range".into(),
        static_membership: false,
        seed: 1,
        duration: SimTime::from_secs(10_000),
        measure_from: SimTime::ZERO,
    }
}

/// Folds `RECORDS` records of `partitions` partitions of one topic; returns the collector so
/// the work is not optimised away.
fn fold(partitions: u32) -> Collector {
    let mut c = Collector::new(labels());
    c.observe(Observation::Topics { names: vec!["t".into()], partitions: vec![partitions] });
    for partition in 0..partitions {
        c.observe(Observation::Access {
            at: SimTime::ZERO,
            tp: Tp { topic: 0, partition },
            owner: Some(MemberRef { id: 0, name: "c0".into() }),
            state: PartState::Consuming,
            waiting_from: SimTime::ZERO,
        });
    }
    let per_partition = RECORDS / u64::from(partitions);
    let mut first = 0;
    while first < per_partition {
        for partition in 0..partitions {
            let arrivals: Vec<SimTime> =
                (first..first + BATCH).map(|k| SimTime::from_millis(10 * (k + 1))).collect();
            let ends: Vec<SimTime> =
                arrivals.iter().map(|a| *a + SimTime::from_micros(1500)).collect();
            let tp = Tp { topic: 0, partition };
            let times = model::RecordTimes::listed(arrivals, ends);
            c.observe(Observation::Processed { tp, first, times });
        }
        first += BATCH;
    }
    c
}

fn collector_fold(c: &mut Criterion) {
    let mut group = c.benchmark_group("collector");
    group.sample_size(10);
    group.throughput(Throughput::Elements(RECORDS));
    group.bench_function("fold_1M_records_in_batches_of_10", |b| b.iter(|| fold(10)));
    group.bench_function("fold_1M_records_of_10k_partitions", |b| b.iter(|| fold(10_000)));
    group.finish();
}

criterion_group!(benches, collector_fold);
criterion_main!(benches);
