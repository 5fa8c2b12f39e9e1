//! Chaos mode (`rebalance-sim chaos`): thousands of random scenarios, every invariant checked
//! after every event, every failure replayable from its seed.
//!
//! Lifecycle of one seed: [`crate::chaos_gen::generate`] derives the scenario from the seed
//! alone; [`check_run`] runs it under each protocol with a [`Checker`] probe (safety after
//! every event, liveness after the last fault, `crate::chaos_check` documents them) and an
//! observer that folds the metrics and re-checks their conservation at the end. A model
//! assertion (a panic) is caught and reported as a failure too. A failed run is run a second
//! time recording its last events; the second run must fail identically (else the failure is
//! reported as `nondeterminism`). Seeds run in parallel with rayon; results are collected in
//! seed order, so the output does not depend on the number of threads.

use crate::chaos_check::{Checker, Liveness, Names, Ring, Violation};
use crate::chaos_gen::{fault_horizon, generate, liveness_bound};
use metrics::{Collector, RunLabels, RunReport};
use model::{AccessRef, Observation, Observer, PeriodicStretch, RecordTimes, Tp};
use rayon::prelude::*;
use scenario::{Protocol, ProtocolSpec, Scenario};
use sim_core::SimTime;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// How many events before a failure are shown.
pub const LAST_EVENTS: usize = 12;

/// A run may handle at most this many events (a livelock would not end otherwise).
pub const EVENT_BUDGET: u64 = 20_000_000;

/// A failed run: which invariant broke, where, and what led to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// What broke.
    pub violation: Violation,
    /// Simulated time of the failing event.
    pub at: SimTime,
    /// Number of the failing event (1-based).
    pub event: u64,
    /// The last events up to the failing one, oldest first.
    pub last_events: Vec<String>,
}

/// What a passing run measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFacts {
    /// Events handled.
    pub events: u64,
    /// Partition-time during which a zombie consumed a partition a group member also owned.
    pub zombie_overlap: SimTime,
    /// Zombie overlap episodes.
    pub zombie_episodes: u64,
    /// The first zombie overlap, described.
    pub first_zombie: Option<String>,
    /// When the group settled for good after the last fault (None without a liveness rule).
    pub settled_at: Option<SimTime>,
    /// Partition-time the group left partitions to no one for good, as Kafka does
    /// (`chaos_check::WithheldMeter`).
    pub withheld: SimTime,
    /// The first such partition, described.
    pub first_withheld: Option<String>,
}

/// The verdict on one protocol run of one seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every invariant held.
    Passed(RunFacts),
    /// An invariant broke.
    Failed(Failure),
}

/// One protocol run of one seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunResult {
    /// The protocol.
    pub protocol: ProtocolSpec,
    /// What happened.
    pub verdict: Verdict,
}

/// Every protocol run of one seed.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedResult {
    /// The chaos seed.
    pub seed: u64,
    /// Its scenario.
    pub scenario: Scenario,
    /// One result per protocol, in the order asked.
    pub runs: Vec<RunResult>,
}

impl SeedResult {
    /// Whether any run failed.
    pub fn failed(&self) -> bool {
        self.runs.iter().any(|r| matches!(r.verdict, Verdict::Failed(_)))
    }
}

/// Checks every seed of `seeds` under every protocol, in parallel; results in seed order.
pub fn run_seeds(seeds: Range<u64>, protocols: &[ProtocolSpec]) -> Vec<SeedResult> {
    seeds.into_par_iter().map(|seed| check_seed(seed, protocols)).collect()
}

/// Generates seed `seed`'s scenario and checks it under every protocol.
pub fn check_seed(seed: u64, protocols: &[ProtocolSpec]) -> SeedResult {
    let scenario = generate(seed);
    let runs = protocols
        .iter()
        .map(|p| RunResult { protocol: *p, verdict: check_run(&scenario, *p) })
        .collect();
    SeedResult { seed, scenario, runs }
}

/// Runs `scenario` (seed: its own) under `protocol` with every check; on a failure, runs it
/// again recording the last events.
pub fn check_run(scenario: &Scenario, protocol: ProtocolSpec) -> Verdict {
    check_run_with(scenario, protocol, liveness_of(scenario))
}

/// [`check_run`] with a given liveness rule (`None`: safety checks only).
pub fn check_run_with(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    liveness: Option<Liveness>,
) -> Verdict {
    let first = run_once(scenario, protocol, liveness, false);
    let Verdict::Failed(failure) = &first else { return first };
    match run_once(scenario, protocol, liveness, true) {
        Verdict::Failed(again) if again.violation == failure.violation => Verdict::Failed(again),
        other => Verdict::Failed(Failure {
            violation: Violation {
                invariant: "nondeterminism",
                detail: format!(
                    "the run failed with [{}] but its replay gave {other:?}",
                    failure.violation
                ),
            },
            at: failure.at,
            event: failure.event,
            last_events: Vec::new(),
        }),
    }
}

/// The liveness rule of `scenario`: settled from the last fault's end plus the bound, when
/// that falls inside the run.
pub fn liveness_of(scenario: &Scenario) -> Option<Liveness> {
    let horizon = fault_horizon(scenario);
    let deadline = horizon + liveness_bound(scenario);
    (deadline < scenario.duration).then_some(Liveness { horizon, deadline })
}

fn names_of(scenario: &Scenario) -> Names {
    let mut topics: Vec<String> = scenario.topics.iter().map(|t| t.name.clone()).collect();
    topics.sort();
    Names { topics }
}

/// One run with the checker (and the ring when `record`).
fn run_once(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    liveness: Option<Liveness>,
    record: bool,
) -> Verdict {
    let ring = record.then(|| Ring::new(LAST_EVENTS));
    let mut checker = Checker::new(names_of(scenario), liveness, EVENT_BUDGET, ring);
    // The snapshot shows the classic coordinator's or the KIP-848 group; not TubeMQ's or none.
    let group_shown =
        matches!(protocol.protocol, Protocol::Eager | Protocol::Cooperative | Protocol::Consumer);
    if !group_shown {
        checker = checker.without_group_checks();
    }
    let labels = RunLabels {
        scenario: scenario.name.clone(),
        protocol: protocol.protocol.name().to_string(),
        assignor: protocol.assignor.name().to_string(),
        static_membership: protocol.static_membership,
        seed: scenario.seed,
        duration: scenario.duration,
        measure_from: scenario.measure_from,
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut tee = Tee::new(Collector::new(labels));
        let stats =
            model::simulate_probed(scenario, protocol, scenario.seed, &mut tee, &mut checker);
        if checker.failure.is_some() {
            return None;
        }
        if stats.hit_event_limit {
            let detail = format!("the model stopped at its event limit ({} events)", stats.events);
            return Some((Err(Violation { invariant: "event-budget", detail }), stats.events));
        }
        let check = tee.finish_and_check().and_then(|report| check_no_loss(scenario, &report));
        Some((check, stats.events))
    }));
    match outcome {
        Ok(None) => {
            let (violation, at, event) = checker.failure.clone().expect("the checker failed");
            Verdict::Failed(Failure { violation, at, event, last_events: checker.last_events() })
        }
        Ok(Some((Err(violation), _))) => failed_at_end(&checker, violation, scenario.duration),
        Ok(Some((Ok(()), events))) => Verdict::Passed(RunFacts {
            events,
            zombie_overlap: checker.zombies.overlap,
            zombie_episodes: checker.zombies.episodes,
            first_zombie: checker.zombies.first.clone(),
            settled_at: checker.settled_since,
            withheld: checker.withheld.partition_time,
            first_withheld: checker.withheld.first.clone(),
        }),
        Err(payload) => {
            let detail = take_panic_message(payload.as_ref());
            let (at, event) = checker.last;
            let violation = Violation { invariant: "model-assertion", detail };
            Verdict::Failed(Failure { violation, at, event, last_events: checker.last_events() })
        }
    }
}

fn failed_at_end(checker: &Checker, violation: Violation, end: SimTime) -> Verdict {
    let (_, event) = checker.last;
    Verdict::Failed(Failure { violation, at: end, event, last_events: checker.last_events() })
}

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Replaces the panic hook with one that prints nothing and remembers the message and place
/// for the chaos report (a failing seed's panic is reported once, in its failure). For the
/// command line; without it, panics print as usual and the report has the message only.
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let place = info.location().map(|l| format!(" ({}:{})", l.file(), l.line()));
        let text = format!("{}{}", payload_text(info.payload()), place.unwrap_or_default());
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(text));
    }));
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

fn take_panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| payload_text(payload))
}

/// The metrics collector, plus independent counts to re-check its conservation.
struct Tee {
    collector: Collector,
    deliveries: u64,
    produced: BTreeMap<Tp, u64>,
    processed_to: BTreeMap<Tp, u64>,
}

impl Observer for Tee {
    fn observe_periodic(&mut self, stretch: PeriodicStretch<'_>) {
        self.on_delivered(stretch.tp, stretch.first, stretch.count);
        self.collector.observe_periodic(stretch);
    }

    fn observe_access(&mut self, access: AccessRef<'_>) {
        self.collector.observe_access(access);
    }

    fn observe_processed(&mut self, tp: Tp, first: u64, times: &RecordTimes) {
        self.on_delivered(tp, first, times.len());
        self.collector.observe_processed(tp, first, times);
    }

    fn observe_processed_listed(
        &mut self,
        tp: Tp,
        first: u64,
        arrivals: &[SimTime],
        ends: &[SimTime],
    ) {
        self.on_delivered(tp, first, ends.len() as u64);
        self.collector.observe_processed_listed(tp, first, arrivals, ends);
    }

    fn observe(&mut self, observation: Observation) {
        match &observation {
            Observation::Processed { tp, first, times } => {
                self.on_delivered(*tp, *first, times.len())
            }
            Observation::ProcessedPeriodic { tp, first, count, .. } => {
                self.on_delivered(*tp, *first, *count)
            }
            Observation::End { produced, .. } => self.produced = produced.iter().copied().collect(),
            _ => {}
        }
        self.collector.observe(observation);
    }
}

impl Tee {
    fn new(collector: Collector) -> Tee {
        Tee { collector, deliveries: 0, produced: BTreeMap::new(), processed_to: BTreeMap::new() }
    }

    /// Counts `count` records of `tp` from offset `first` as delivered.
    fn on_delivered(&mut self, tp: Tp, first: u64, count: u64) {
        self.deliveries += count;
        let to = self.processed_to.entry(tp).or_default();
        *to = (*to).max(first + count);
    }

    /// Finishes the report (the collector asserts conservation itself) and re-checks it.
    fn finish_and_check(self) -> Result<RunReport, Violation> {
        for (tp, to) in &self.processed_to {
            let produced = self.produced.get(tp).copied().unwrap_or(0);
            if *to > produced {
                let detail = format!(
                    "partition {tp:?} processed offsets up to {} but only {produced} records were produced",
                    to - 1
                );
                return Err(Violation { invariant: "conservation", detail });
            }
        }
        let produced: u64 = self.produced.values().sum();
        let deliveries = self.deliveries;
        let report = self.collector.finish();
        check_conservation(&report, produced, deliveries)?;
        Ok(report)
    }
}

/// DESIGN section 5: `produced = unique + lost + final_lag`, `processed = unique +
/// reprocessed`, against the observations' own counts.
pub fn check_conservation(
    report: &RunReport,
    produced: u64,
    deliveries: u64,
) -> Result<(), Violation> {
    let fail = |detail: String| Err(Violation { invariant: "conservation", detail });
    let Some(s) = report.summary.as_ref() else {
        return fail("the report has no summary".to_string());
    };
    if s.records_produced != produced {
        return fail(format!(
            "records_produced {} but the logs hold {produced}",
            s.records_produced
        ));
    }
    if s.records_processed != deliveries {
        return fail(format!(
            "records_processed {} but {deliveries} deliveries were observed",
            s.records_processed
        ));
    }
    let Some(unique) = s.records_processed.checked_sub(s.records_reprocessed) else {
        return fail(format!(
            "records_reprocessed {} > records_processed {}",
            s.records_reprocessed, s.records_processed
        ));
    };
    if unique + s.records_lost + s.final_lag != produced {
        return fail(format!(
            "produced {produced} != unique {unique} + lost {} + final_lag {}",
            s.records_lost, s.final_lag
        ));
    }
    Ok(())
}

/// Whether no record may be lost: with `auto.offset.reset = earliest` a new owner starts at
/// the committed offset or the log start, and every commit covers processed records only,
/// except librdkafka's background auto-commit, which also covers records returned to the
/// application and not processed yet (docs/kafka-facts.md section 10).
pub fn loss_impossible(scenario: &Scenario) -> bool {
    let c = &scenario.consumer;
    let background_commit = c.client == scenario::Client::Librdkafka
        && c.commit == scenario::CommitPolicy::Auto
        && c.config.enable_auto_commit;
    c.config.auto_offset_reset == scenario::OffsetReset::Earliest && !background_commit
}

/// `no-loss`: `records_lost = 0` where [`loss_impossible`].
pub fn check_no_loss(scenario: &Scenario, report: &RunReport) -> Result<(), Violation> {
    let lost = report.summary.as_ref().map_or(0, |s| s.records_lost);
    if lost == 0 || !loss_impossible(scenario) {
        return Ok(());
    }
    let partitions: Vec<String> = report
        .partitions
        .iter()
        .filter(|p| p.lost > 0)
        .map(|p| format!("{}-{}: {}", p.topic, p.partition, p.lost))
        .collect();
    let detail = format!(
        "{lost} records lost although auto.offset.reset = earliest and every commit covers processed records only ({})",
        partitions.join(", ")
    );
    Err(Violation { invariant: "no-loss", detail })
}

/// Totals over many seeds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChaosSummary {
    /// Seeds checked.
    pub seeds: u64,
    /// Protocol runs made.
    pub runs: u64,
    /// Runs that failed.
    pub failures: u64,
    /// Passing runs with zombie overlap.
    pub zombie_runs: u64,
    /// Their zombie partition-time.
    pub zombie_overlap: SimTime,
    /// Passing runs that left a partition to no one for good, as Kafka does.
    pub withheld_runs: u64,
    /// Their withheld partition-time.
    pub withheld: SimTime,
}

impl ChaosSummary {
    /// Sums `results`.
    pub fn of(results: &[SeedResult]) -> ChaosSummary {
        let mut s = ChaosSummary { seeds: results.len() as u64, ..ChaosSummary::default() };
        for run in results.iter().flat_map(|r| &r.runs) {
            match &run.verdict {
                Verdict::Passed(facts) => {
                    s.runs += 1;
                    if facts.zombie_episodes > 0 {
                        s.zombie_runs += 1;
                        s.zombie_overlap += facts.zombie_overlap;
                    }
                    if facts.first_withheld.is_some() {
                        s.withheld_runs += 1;
                        s.withheld += facts.withheld;
                    }
                }
                Verdict::Failed(_) => {
                    s.runs += 1;
                    s.failures += 1;
                }
            }
        }
        s
    }

    /// `N seeds, M runs, K failures`.
    pub fn line(&self) -> String {
        format!("{} seeds, {} runs, {} failures", self.seeds, self.runs, self.failures)
    }
}

/// The largest chaos seed: a scenario file's `seed` is a TOML integer (`i64`).
pub const MAX_SEED: u64 = i64::MAX as u64;

/// Parses `A..B` (B excluded), `A..=B` or a single seed `A`; seeds go up to [`MAX_SEED`].
pub fn parse_seed_range(text: &str) -> Result<Range<u64>, String> {
    let number = |s: &str| {
        s.trim().parse::<u64>().map_err(|_| {
            format!("`{text}`: `{s}` is not a seed; write A..B (B excluded), A..=B or one seed A, e.g. 0..500")
        })
    };
    let range = if let Some((a, b)) = text.split_once("..=") {
        let end = number(b)?
            .checked_add(1)
            .ok_or_else(|| format!("`{text}`: the last seed is too large"))?;
        number(a)?..end
    } else if let Some((a, b)) = text.split_once("..") {
        number(a)?..number(b)?
    } else {
        let a = number(text)?;
        a..a.checked_add(1).ok_or_else(|| format!("`{text}`: the seed is too large"))?
    };
    if range.is_empty() {
        return Err(format!("`{text}` holds no seed; write A..B with A < B"));
    }
    if range.end - 1 > MAX_SEED {
        return Err(format!(
            "`{text}`: seeds go up to {MAX_SEED} (a scenario's seed is a TOML integer)"
        ));
    }
    Ok(range)
}

/// The command that replays one failing run.
pub fn replay_command(seed: u64, protocol: ProtocolSpec) -> String {
    format!("rebalance-sim chaos --seeds {seed} --protocol {protocol}")
}

/// The report of one failed run, several lines, ending in the replay commands.
pub fn failure_report(
    seed: u64,
    protocol: ProtocolSpec,
    f: &Failure,
    saved: Option<&str>,
) -> String {
    let mut text = format!(
        "FAIL seed {seed} {protocol}: {} at {} (event {})\n  {}\n",
        f.violation.invariant, f.at, f.event, f.violation.detail
    );
    if !f.last_events.is_empty() {
        text.push_str(&format!("  last {} events:\n", f.last_events.len()));
        for line in &f.last_events {
            text.push_str(&format!("    {line}\n"));
        }
    }
    text.push_str(&format!("  replay: {}\n", replay_command(seed, protocol)));
    if let Some(path) = saved {
        text.push_str(&format!(
            "  scenario: {path} (rebalance-sim run {path} --protocol {protocol})\n"
        ));
    }
    text
}
