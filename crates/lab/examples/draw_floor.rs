//! The draws' floor of a stochastic scenario (issue 29 goal 1), measured beside a run so the
//! run's time a record reads as a ratio to it (`scripts/perf-reference.sh` prints both): what
//! drawing each record's arrival (a Poisson log at the scenario's first topic's rate) and its
//! processing time (the consumer's distribution) costs alone, with the same build, on the same
//! machine, in the same phase. The loop is [`Draws::draw`], the one the criterion bench times
//! (`cargo bench -p lab --bench model -- stochastic/draws_100k_records`): one arrival read and
//! one processing time drawn a record, the log trimmed behind it as a run's commits trim it.
//!
//!     cargo run --release -p lab --example draw_floor -- SCENARIO [RECORDS]
//!
//! Prints one line: `draw_ns_per_record=<f>`, the fastest of [`ROUNDS`] rounds of RECORDS
//! records (default [`DEFAULT_RECORDS`]): the floor, as the machine's quietest moment gives it.

use lab::draws::Draws;
use sim_core::RngStreams;
use std::hint::black_box;
use std::path::Path;
use std::process::exit;
use std::time::Instant;

/// Records drawn a round unless the command line says otherwise.
const DEFAULT_RECORDS: u64 = 1_000_000;
/// Rounds measured; the fastest is printed.
const ROUNDS: usize = 5;

/// Nanoseconds a record of one round of `records` records ([`Draws::draw`]).
fn round_ns_per_record(draws: &Draws, seed: u64, records: u64) -> f64 {
    let streams = RngStreams::new(seed);
    #[allow(clippy::disallowed_methods)] // the floor is wall time by definition, never simulated
    let started = Instant::now();
    black_box(draws.draw(&streams, records));
    started.elapsed().as_secs_f64() * 1e9 / records as f64
}

/// The draws of the scenario at `path` and its seed, or why there are none to measure.
fn draws_of(path: &Path) -> Result<(Draws, u64), String> {
    let scenario = scenario::load(path).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
        lines.join("\n")
    })?;
    let draws = Draws::of_scenario(&scenario).ok_or_else(|| {
        format!(
            "{}: draws nothing (its first [[topic]]'s arrival is not \"poisson\" and [consumer] \
             processing is constant)",
            path.display()
        )
    })?;
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
