//! One protocol run of one scenario: build the world, run it to the end, fold the metrics.

use metrics::{Collector, RunLabels, RunReport};
use model::{CatchUpThreads, NoProbe, Stepping};
use scenario::{ProtocolSpec, Scenario};
use std::fmt;

/// Why a protocol run could not produce a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The run reached the event bound before its end time.
    EventLimit {
        /// The protocol.
        protocol: String,
        /// Events handled.
        events: u64,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::EventLimit { protocol, events } => write!(
                f,
                "protocol `{protocol}` stopped after {events} events before the end time; \
                 shorten `duration` or lower the rates"
            ),
        }
    }
}

impl std::error::Error for RunError {}

/// Runs `scenario` once under `protocol` with run seed `seed` and returns its report.
/// Deterministic: the same arguments give the same report, bit for bit.
pub fn run_protocol(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    seed: u64,
) -> Result<RunReport, RunError> {
    run_protocol_stepped(scenario, protocol, seed, Stepping::Fast)
}

/// The labels a protocol run's report carries (scenario, protocol, assignor, static
/// membership, seed, duration), shared by every way of running one.
pub fn run_labels(scenario: &Scenario, protocol: ProtocolSpec, seed: u64) -> RunLabels {
    RunLabels {
        scenario: scenario.name.clone(),
        protocol: protocol.protocol.name().to_string(),
        assignor: protocol.assignor.name().to_string(),
        static_membership: protocol.static_membership,
        seed,
        duration: scenario.duration,
        measure_from: scenario.measure_from,
    }
}

/// [`run_protocol`] with an explicit [`Stepping`]: `Plain` queues every poll-loop step (the
/// reference), `Fast` runs quiet steps on demand; the reports are equal except `events`.
pub fn run_protocol_stepped(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    seed: u64,
    stepping: Stepping,
) -> Result<RunReport, RunError> {
    let threshold = metrics::SPILL_THRESHOLD;
    run_protocol_spilling(scenario, protocol, seed, stepping, threshold)
}

/// [`run_protocol_stepped`] whose collector spills its ownership intervals to a temporary file
/// whenever `threshold` of them are held (`metrics::Collector::with_spill_threshold`): the
/// report is the same for any threshold; tests take a tiny one to exercise the spill path.
pub fn run_protocol_spilling(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    seed: u64,
    stepping: Stepping,
    threshold: usize,
) -> Result<RunReport, RunError> {
    run_protocol_with(scenario, protocol, seed, (stepping, CatchUpThreads::new(1)), threshold)
}

/// [`run_protocol_stepped`] on `threads` threads (`model::simulate_on_threads`: the members'
/// catch-ups before each sample of a stochastic run shared out over them, from
/// `model::CatchUpThreads::MIN_MEMBERS` members on): the same report for any number.
pub fn run_protocol_on_threads(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    seed: u64,
    stepping: Stepping,
    threads: usize,
) -> Result<RunReport, RunError> {
    let threshold = metrics::SPILL_THRESHOLD;
    let threads = CatchUpThreads::new(threads);
    run_protocol_with(scenario, protocol, seed, (stepping, threads), threshold)
}

/// A run with `stepping` on `threads` threads, its collector spilling at `threshold`.
fn run_protocol_with(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    seed: u64,
    (stepping, threads): (Stepping, CatchUpThreads),
    threshold: usize,
) -> Result<RunReport, RunError> {
    let labels = run_labels(scenario, protocol, seed);
    let mut collector = Collector::with_spill_threshold(labels, threshold);
    let (observer, probe) = (&mut collector, &mut NoProbe);
    let stats =
        model::simulate_on_threads(scenario, protocol, seed, stepping, threads, observer, probe);
    if stats.hit_event_limit {
        return Err(RunError::EventLimit { protocol: protocol.to_string(), events: stats.events });
    }
    Ok(collector.finish())
}
