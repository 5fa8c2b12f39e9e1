//! The draws' floor of a stochastic scenario (issue 29 goal 1), measured beside a run so the
//! run's time a record reads as a ratio to it (`scripts/perf-reference.sh` prints both): what
//! drawing each record's arrival (a Poisson log at the scenario's first topic's rate) and its
//! processing time (the consumer's distribution) costs alone, with the same build, on the same
//! machine, in the same phase. The loop is the criterion bench's
//! (`cargo bench -p lab --bench model -- stochastic/draws_100k_records`): one arrival read and
//! one processing time drawn a record, the log trimmed behind it as a run's commits trim it.
//!
//!     cargo run --release -p lab --example draw_floor -- SCENARIO [RECORDS]
//!
//! Prints one line: `draw_ns_per_record=<f>`, the fastest of [`ROUNDS`] rounds of RECORDS
//! records (default [`DEFAULT_RECORDS`]): the floor, as the machine's quietest moment gives it.

use model::processing::ProcessingSampler;
use model::workload::PartitionLog;
use scenario::{Arrival, Processing};
use sim_core::{RngStreams, SimTime};
use std::hint::black_box;
use std::path::Path;
use std::process::exit;
use std::time::Instant;

/// Records drawn a round unless the command line says otherwise.
const DEFAULT_RECORDS: u64 = 1_000_000;
/// Rounds measured; the fastest is printed.
const ROUNDS: usize = 5;

/// What the scenario draws for each record.
struct Draws {
    /// The rate of the first topic's partitions if its arrivals are Poisson (drawn).
    poisson_rate_per_s: Option<f64>,
    /// The processing time's sampler (a constant one draws nothing).
    processing: ProcessingSampler,
}

/// Nanoseconds a record of one round of `records` records.
fn round_ns_per_record(draws: &Draws, seed: u64, records: u64) -> f64 {
    let streams = RngStreams::new(seed);
    let mut log = draws
        .poisson_rate_per_s
        .map(|rate| PartitionLog::poisson(SimTime::ZERO, rate, streams.stream("w")));
    let mut rng = streams.stream("p");
    let mut total = SimTime::ZERO;
    #[allow(clippy::disallowed_methods)] // the floor is wall time by definition, never simulated
    let started = Instant::now();
    for offset in 0..records {
        total += draws.processing.sample(&mut rng);
        if let Some(log) = log.as_mut() {
            total = total.max(log.arrival(offset));
            log.trim_below(offset);
        }
    }
    let elapsed_s = started.elapsed().as_secs_f64();
    black_box(total);
    elapsed_s * 1e9 / records as f64
}

/// The draws of the scenario at `path`, or why there are none to measure.
fn draws_of(path: &Path) -> Result<(Draws, u64), String> {
    let scenario = scenario::load(path).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
        lines.join("\n")
    })?;
    let topic =
        scenario.topics.first().ok_or_else(|| format!("{}: no [[topic]]", path.display()))?;
    let poisson_rate_per_s = (topic.arrival == Arrival::Poisson).then_some(topic.rate_per_s);
    let processing = &scenario.consumer.processing;
    if poisson_rate_per_s.is_none() && matches!(processing, Processing::Constant(_)) {
        return Err(format!(
            "{}: draws nothing (the first [[topic]]'s arrival is not \"poisson\" and \
             [consumer] processing is constant)",
            path.display()
        ));
    }
    let draws = Draws { poisson_rate_per_s, processing: ProcessingSampler::new(processing) };
    Ok((draws, scenario.seed))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: draw_floor SCENARIO [RECORDS]";
    let Some(path) = args.first() else {
        eprintln!("draw_floor: {usage}");
        exit(2);
    };
    let records = match args.get(1) {
        None => DEFAULT_RECORDS,
        Some(text) => match text.parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("draw_floor: RECORDS must be a positive whole number, not {text:?}");
                exit(2);
            }
        },
    };
    let (draws, seed) = draws_of(Path::new(path)).unwrap_or_else(|why| {
        eprintln!("draw_floor: {why}");
        exit(2);
    });
    let fastest = (0..ROUNDS)
        .map(|_| round_ns_per_record(&draws, seed, records))
        .fold(f64::INFINITY, f64::min);
    println!("draw_ns_per_record={fastest:.1}");
}
