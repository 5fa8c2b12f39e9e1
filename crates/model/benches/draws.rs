//! The random draws of a stochastic run, piece by piece (issue 29 item 2): the ChaCha8 stream
//! every named stream uses (one word at a time, and a block filled at once), other generators
//! for scale, the `rand_distr` samplers (ziggurat exponential and normal, the lognormal's
//! `exp`), and the two draws a record costs in the model (a Poisson arrival through
//! `PartitionLog`, a lognormal processing time through `ProcessingSampler`). Each bench draws
//! 100,000 values, so criterion's elements per second are draws per second.
//! `cargo bench -p model --bench draws`.
// criterion_group! generates undocumented functions.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::{ChaCha12Rng, ChaCha20Rng};
use rand_distr::{Distribution, Exp, Exp1, LogNormal, StandardNormal};
use sim_core::{RngStreams, SimRng, SimTime};

const DRAWS: u64 = 100_000;

/// The word streams: ChaCha8 (the model's), one word per call and 100,000 words filled at
/// once; ChaCha12, ChaCha20 and `SmallRng` (Xoshiro256++) one word per call.
fn streams(c: &mut Criterion) {
    let mut group = c.benchmark_group("draws/stream");
    group.sample_size(20);
    group.throughput(Throughput::Elements(DRAWS));
    let mut chacha8 = RngStreams::new(1).stream("bench");
    group.bench_function("chacha8_u64", |b| b.iter(|| words(&mut chacha8)));
    let mut block = vec![0u64; DRAWS as usize];
    group.bench_function("chacha8_u64_filled_at_once", |b| {
        b.iter(|| {
            chacha8.fill(&mut block[..]);
            black_box(block[block.len() - 1])
        })
    });
    let mut chacha12 = ChaCha12Rng::seed_from_u64(1);
    group.bench_function("chacha12_u64", |b| b.iter(|| words(&mut chacha12)));
    let mut chacha20 = ChaCha20Rng::seed_from_u64(1);
    group.bench_function("chacha20_u64", |b| b.iter(|| words(&mut chacha20)));
    let mut small = SmallRng::seed_from_u64(1);
    group.bench_function("xoshiro256pp_u64", |b| b.iter(|| words(&mut small)));
    group.finish();
}

/// The sum of 100,000 words (so none is optimized away).
fn words(rng: &mut impl RngCore) -> u64 {
    (0..DRAWS).fold(0u64, |sum, _| sum.wrapping_add(rng.next_u64()))
}

/// The samplers on the ChaCha8 stream: the standard exponential and normal (ziggurat), the
/// exponential of a Poisson log's gaps, the lognormal (a normal and an `exp`), and `f64::exp`
/// alone on the same arguments' scale.
fn samplers(c: &mut Criterion) {
    let mut group = c.benchmark_group("draws/sampler");
    group.sample_size(20);
    group.throughput(Throughput::Elements(DRAWS));
    let mut rng = RngStreams::new(1).stream("bench");
    group.bench_function("exp1_ziggurat", |b| b.iter(|| sum(&mut rng, &Exp1)));
    group.bench_function("standard_normal_ziggurat", |b| b.iter(|| sum(&mut rng, &StandardNormal)));
    let gap_s = Exp::new(100.0).expect("positive rate");
    group.bench_function("exp_gap_rate_100", |b| b.iter(|| sum(&mut rng, &gap_s)));
    let (mu, sigma) = model::processing::lognormal_params(500_000.0, 2_000_000.0);
    let lognormal = LogNormal::new(mu, sigma).expect("finite sigma");
    group.bench_function("lognormal", |b| b.iter(|| sum(&mut rng, &lognormal)));
    let arguments: Vec<f64> =
        (0..DRAWS).map(|i| mu + sigma * ((i % 1000) as f64 / 400.0 - 1.25)).collect();
    group.bench_function("f64_exp_alone", |b| {
        b.iter(|| arguments.iter().fold(0.0, |sum, x| sum + black_box(*x).exp()))
    });
    group.finish();
}

/// The sum of 100,000 draws of `distribution`.
fn sum<D: Distribution<f64>>(rng: &mut SimRng, distribution: &D) -> f64 {
    (0..DRAWS).fold(0.0, |sum, _| sum + distribution.sample(rng))
}

/// A record's two draws as the model makes them: the next arrival of a Poisson log (its gap,
/// the conversion to nanoseconds, the held window) and a lognormal processing time (rounded to
/// nanoseconds), separately and together.
fn model_draws(c: &mut Criterion) {
    let mut group = c.benchmark_group("draws/model");
    group.sample_size(20);
    group.throughput(Throughput::Elements(DRAWS));
    let streams = RngStreams::new(1);
    group.bench_function("poisson_arrival", |b| {
        b.iter(|| {
            let mut log =
                model::workload::PartitionLog::poisson(SimTime::ZERO, 100.0, streams.stream("w"));
            for offset in 0..DRAWS {
                black_box(log.arrival(offset));
                log.trim_below(offset);
            }
            log.arrival(DRAWS)
        })
    });
    let processing = model::processing::ProcessingSampler::new(&scenario::Processing::Lognormal {
        mean: SimTime::from_micros(500),
        p99: SimTime::from_millis(2),
    });
    let mut rng = streams.stream("p");
    group.bench_function("lognormal_processing_time", |b| {
        b.iter(|| (0..DRAWS).fold(SimTime::ZERO, |total, _| total + processing.sample(&mut rng)))
    });
    group.finish();
}

criterion_group!(benches, streams, samplers, model_draws);
criterion_main!(benches);
