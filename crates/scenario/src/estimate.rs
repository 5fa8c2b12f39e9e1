//! A run's peak memory and wall time, estimated from its sizes before any work (issue 27 item
//! 2): `validate`, `run` and `sweep` refuse a run whose memory estimate is above the budget
//! (naming the keys that drive it) and warn about one whose time estimate is long.
//!
//! The coefficients are fitted on measured release runs (docs/limits.md has the table:
//! estimate against peak RSS from `/usr/bin/time -f '%e %M'`); they err on the high side.
//! What the estimate counts:
//! - per partition, the model's and the collector's state during a run, and the rows of a
//!   finished protocol run, kept until every protocol has run (`run` writes them together);
//!   with `run --jobs N`, up to N protocol runs hold their state at once ([`estimate_run`]);
//! - per rebalance, the ownership intervals it opens (every partition under eager protocols,
//!   about a member's share under the incremental ones), of which each protocol run holds at
//!   most [`INTERVALS_HELD_MAX`] in memory (`metrics::SPILL_THRESHOLD`: the rest are spilled
//!   to a temporary file, 16 bytes each, and read back at the end);
//! - the Poisson arrival times held: `crates/model/src/workload/poisson.rs` holds the drawn
//!   time of each record not yet consumed and committed up to [`POISSON_TIMES_HELD_MAX`] a
//!   partition, and past that (a backlog that grows) a 32-byte checkpoint per 1,024 records;
//! - the records of one sample's catch-ups, held while they run on the run's threads;
//! - the cycles of steady members' steps (constant arrivals and processing);
//! - heartbeats (members x duration / interval), Poisson draws and per-partition poll work, for
//!   the wall time.

use crate::types::{Arrival, EventKind, Processing, Protocol, Scenario};

/// The default memory budget: 16 GiB of this machine kind's 24 GiB (docs/limits.md), leaving
/// the rest to the system and to the other processes of a shared machine.
pub const DEFAULT_MEMORY_BUDGET_MB: u64 = 16 * 1024;
/// The environment variable that sets the memory budget (`--memory-budget-mb` overrides it).
pub const MEMORY_BUDGET_ENV: &str = "REBALANCE_SIM_MEMORY_BUDGET_MB";
/// Above this estimated wall time (all protocols), `warnings` says the run will be slow.
pub const WARN_WALL_S: f64 = 600.0;

/// Bytes in a megabyte of the budget.
const MB: f64 = 1024.0 * 1024.0;
/// Fixed cost of a process: the binary, the allocator, the event queue (fitted: 100 members
/// and 1,000 partitions peaked at 28 MiB).
const BASE_BYTES: f64 = 24e6;
/// Model and collector state per partition during a protocol run (fitted: 10 million
/// partitions peaked at 5.6 GiB, 100,000 at 101 MiB).
const PARTITION_BYTES: f64 = 750.0;
/// Rows of a finished protocol run per partition, kept until the last protocol has run
/// (fitted: three protocols over a million partitions peaked 0.56 GB above one).
const PARTITION_ROW_BYTES: f64 = 300.0;
/// Per member: its state in the model and the coordinator.
const MEMBER_BYTES: f64 = 4096.0;
/// One ownership interval held: 16 bytes in the collector's list, and 16 more while the list
/// is sorted by partition before it is spilled (metrics::timeline).
const INTERVAL_BYTES: f64 = 32.0;
/// The most ownership intervals a protocol run holds in memory: `metrics::SPILL_THRESHOLD`
/// (a test in `lab` keeps the two equal); a finished run keeps at most these until the files
/// are written.
pub const INTERVALS_HELD_MAX: f64 = 1_048_576.0;
/// Per held Poisson arrival time: 8 bytes, with the vector's growth and compaction slack: a
/// partition's vector doubles when it is full, after dropping a trimmed prefix of at least a
/// quarter of it, so it holds at most 8/3 of the most times ever live, 21.3 bytes a time (the
/// test `held_times_keep_a_bounded_slack` in `model`; 20, fitted when every arrival was held,
/// was under it for the stochastic reference, docs/limits.md).
const ARRIVAL_BYTES: f64 = 22.0;
/// Per record of a sample's shared-out catch-ups (variable processing): its arrival and end,
/// held until the calling thread gives them (`model`'s `world/stepper/parallel.rs`), twice for
/// the vectors' growth.
const HELD_REPORT_BYTES: f64 = 32.0;
/// Cycles a steady member keeps: `model`'s `world/stepper/lazy.rs` `MAX_CYCLES` (a test in
/// `model` keeps the two equal).
pub const CYCLES_PER_MEMBER: f64 = 2.0;
/// Per step of a kept cycle of a member with `p` partitions: `CYCLE_STEP_BYTES + p x
/// CYCLE_STEP_PARTITION_BYTES` (its signature, 64 words reserved; its loop state and the
/// records of the step; a row of counts per partition). Fitted on the constant reference's
/// layout (1,000 members of 10 partitions at 100 records/s, 0.5 ms a record: 74 MiB peak for
/// 120 s against 35 MB estimated without cycles, docs/limits.md), where a period is about two
/// steps per partition.
const CYCLE_STEP_BYTES: f64 = 1024.0;
/// See [`CYCLE_STEP_BYTES`].
const CYCLE_STEP_PARTITION_BYTES: f64 = 48.0;
/// The most steps of a kept cycle: a recording holds `model`'s `cycle::MAX_RECORDED`
/// snapshots, and a cycle one more (a test in `model` keeps them equal).
pub const CYCLE_STEPS_MAX: f64 = 257.0;
/// The most samples of a run: `model`'s `world::MAX_SAMPLES` (a test in `model` keeps the two
/// equal). A longer run samples every `ceil(seconds / SAMPLES_MAX)` seconds.
pub const SAMPLES_MAX: f64 = 2_000.0;
/// The most Poisson arrival times a partition holds: `model`'s `poisson::RUN_SIZES`, held
/// times up to the cap and a block past it, decoded ones up to the window's cap and a block
/// (a test in `model` keeps the two equal).
pub const POISSON_TIMES_HELD_MAX: f64 = 32_768.0 + 1024.0 + 4096.0 + 1024.0;
/// Per backlogged record past the held times: a 32-byte checkpoint per 1,024 records, twice
/// for the deque's growth.
const BACKLOG_RECORD_BYTES: f64 = 64.0 / 1024.0;
/// Wall time per partition and protocol run, and per partition and simulated second (polls
/// and fetches visit the assigned partitions; fitted on 10^4 to 10^7 partitions).
const PARTITION_S: f64 = 2e-6;
const PARTITION_SECOND_S: f64 = 1.8e-6;
/// Wall time per heartbeat (fitted: 100 members at 1 ms for 60 s took 10.7 s).
const HEARTBEAT_S: f64 = 1.8e-6;
/// Wall time per Poisson arrival, drawn and then processed one record at a time (constant
/// arrivals are closed-form: no per-record cost). Fitted: the stochastic reference, 10,000
/// partitions at 100 records/s for 60 s, took 7.6 s a protocol (docs/performance.md).
const POISSON_RECORD_S: f64 = 1.1e-7;
/// Wall time per ownership interval opened by a rebalance.
const INTERVAL_S: f64 = 1e-7;

/// One part of an estimate: what it counts, the keys that drive it, and its share.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// What is counted, for messages (`10000000 partitions x 3 protocols`).
    pub what: String,
    /// The keys to change to lower it.
    pub keys: &'static str,
    /// Bytes at the peak, or seconds of wall time.
    pub amount: f64,
}

/// A run's estimated peak memory and wall time (every protocol of the scenario in turn).
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Peak resident memory in bytes.
    pub memory_bytes: f64,
    /// The parts of the memory, largest first.
    pub memory_parts: Vec<Part>,
    /// Wall time in seconds of all the protocol runs.
    pub wall_s: f64,
    /// The parts of the wall time, largest first.
    pub wall_parts: Vec<Part>,
    /// Heartbeats the coordinator receives, all protocol runs.
    pub heartbeats: f64,
}

/// The estimate of `scenario` with its protocols run one after the other (`run --jobs 1`); a
/// sweep's run is one protocol (`protocols = 1`).
pub fn estimate(scenario: &Scenario) -> Estimate {
    estimate_run(scenario, 1)
}

/// The estimate of `run` with up to `at_once` of the scenario's protocol runs in flight at a
/// time (`run --jobs`; at most the number of protocols): each run in flight holds its own
/// partition state, Poisson backlog and members, and the finished runs' rows and ownership
/// intervals are kept until the last one ends. The peak is at the end: the last `at_once`
/// runs in flight (every protocol run's in-flight state is estimated alike) beside the rows of
/// the others.
pub fn estimate_run(scenario: &Scenario, at_once: usize) -> Estimate {
    let protocols = scenario.protocols.len().max(1);
    estimate_with(scenario, protocols, at_once.clamp(1, protocols))
}

/// The estimate of one protocol run of `scenario` (a sweep runs each protocol on its own).
pub fn estimate_one_protocol(scenario: &Scenario) -> Estimate {
    estimate_with(scenario, 1, 1)
}

/// `protocols` runs in all, `at_once` of them (1 ..= protocols) in flight at the peak.
fn estimate_with(scenario: &Scenario, protocols: usize, at_once: usize) -> Estimate {
    assert!((1..=protocols).contains(&at_once), "{at_once} runs at once of {protocols}");
    let sizes = Sizes::of(scenario);
    let runs = protocols as f64;
    let in_flight = at_once as f64;
    let intervals =
        if protocols == 1 { sizes.intervals } else { sizes.intervals_all.max(sizes.intervals) };
    let intervals_held =
        if protocols == 1 { sizes.intervals_held } else { sizes.intervals_held_all };
    // The parts each run in flight holds: counted `at_once` times, with `--jobs` among their
    // keys when that is more than one.
    let keys = |one: &'static str, many: &'static str| if at_once == 1 { one } else { many };
    let times = if at_once == 1 { String::new() } else { format!(" x {at_once} runs at once") };
    let mut memory = vec![
        Part {
            what: if at_once == 1 {
                format!("{} partitions in all", sizes.partitions)
            } else {
                format!("{} partitions x {at_once} protocol runs at once", sizes.partitions)
            },
            keys: keys(
                "[[topic]] partitions, add-partitions events",
                "[[topic]] partitions, add-partitions events, --jobs",
            ),
            amount: sizes.partitions * PARTITION_BYTES * in_flight,
        },
        Part {
            what: if at_once == 1 {
                format!("{} partitions x {protocols} protocols' rows", sizes.partitions)
            } else {
                let finished = protocols - at_once;
                format!("{} partitions x {finished} finished protocols' rows", sizes.partitions)
            },
            keys: "[[topic]] partitions, protocols (or run one --protocol at a time)",
            amount: sizes.partitions * PARTITION_ROW_BYTES * (runs - in_flight),
        },
        Part {
            what: format!("{intervals_held:.0} ownership intervals held"),
            keys: "[[topic]] partitions, [[event]] entries (each rebalance moves partitions)",
            amount: intervals_held * INTERVAL_BYTES,
        },
        Part {
            what: format!("a Poisson backlog of {:.3e} records{times}", sizes.backlog),
            keys: keys(
                "[[topic]] rate or arrival = \"poisson\", duration, [consumer] processing, \
                 [group] members",
                "[[topic]] rate or arrival = \"poisson\", duration, [consumer] processing, \
                 [group] members, --jobs",
            ),
            amount: (sizes.held_times * ARRIVAL_BYTES + sizes.backlog * BACKLOG_RECORD_BYTES)
                * in_flight,
        },
        Part {
            what: format!(
                "{:.3e} records of a sample's catch-ups held{times}",
                sizes.records_per_sample
            ),
            keys: keys(
                "[[topic]] rate, duration (a sample every ceil(duration / 2000 s) seconds)",
                "[[topic]] rate, duration (a sample every ceil(duration / 2000 s) seconds), \
                 --jobs",
            ),
            amount: sizes.records_per_sample * HELD_REPORT_BYTES * in_flight,
        },
        Part {
            what: format!("the repeating steps of {} steady members{times}", sizes.cycling_members),
            keys: keys(
                "[group] members, [[topic]] partitions (constant arrivals and processing)",
                "[group] members, [[topic]] partitions (constant arrivals and processing), --jobs",
            ),
            amount: sizes.cycling_members * sizes.cycle_bytes_per_member * in_flight,
        },
        Part {
            what: format!("{} members{times}", sizes.members),
            keys: keys(
                "[group] members, join and scale events",
                "[group] members, join and scale events, --jobs",
            ),
            amount: sizes.members * MEMBER_BYTES * in_flight,
        },
    ];
    let memory_bytes = BASE_BYTES + memory.iter().map(|p| p.amount).sum::<f64>();
    let heartbeats = sizes.heartbeats_per_run(scenario, protocols);
    let mut wall = vec![
        Part {
            what: format!(
                "{} partitions over {:.0} simulated seconds",
                sizes.partitions, sizes.duration_s
            ),
            keys: "[[topic]] partitions, duration",
            amount: runs * sizes.partitions * (PARTITION_S + PARTITION_SECOND_S * sizes.duration_s),
        },
        Part {
            what: format!("about {heartbeats:.3e} heartbeats"),
            keys: "heartbeat.interval.ms, duration, [group] members",
            amount: heartbeats * HEARTBEAT_S,
        },
        Part {
            what: format!("{:.3e} Poisson arrivals", sizes.poisson_records * runs),
            keys: "[[topic]] rate, arrival, duration",
            amount: runs * sizes.poisson_records * POISSON_RECORD_S,
        },
        Part {
            what: format!("{intervals:.0} ownership intervals"),
            keys: "[[topic]] partitions, [[event]] entries",
            amount: intervals * INTERVAL_S,
        },
    ];
    let wall_s = wall.iter().map(|p| p.amount).sum();
    for parts in [&mut memory, &mut wall] {
        parts.sort_by(|a, b| b.amount.total_cmp(&a.amount));
    }
    Estimate { memory_bytes, memory_parts: memory, wall_s, wall_parts: wall, heartbeats }
}

/// The sizes the estimate is made of.
struct Sizes {
    partitions: f64,
    members: f64,
    duration_s: f64,
    /// Ownership intervals of one protocol run (the largest over the protocols: every run's
    /// are kept until the last one ends, so the estimate counts the largest once per run).
    intervals: f64,
    /// Ownership intervals of every protocol's run, one after the other.
    intervals_all: f64,
    /// Of `intervals`, those held in memory (at most [`INTERVALS_HELD_MAX`]).
    intervals_held: f64,
    /// Of `intervals_all`, those held in memory (at most [`INTERVALS_HELD_MAX`] a run).
    intervals_held_all: f64,
    /// Poisson arrivals not yet consumed and committed at the peak.
    backlog: f64,
    /// Poisson arrival times held at the peak (at most [`POISSON_TIMES_HELD_MAX`] a partition).
    held_times: f64,
    /// Poisson arrivals drawn in one protocol run.
    poisson_records: f64,
    /// Records a sample's shared-out catch-ups hold at once (0 for constant processing:
    /// those are never shared out).
    records_per_sample: f64,
    /// Members whose steps may repeat (constant arrivals and processing, a member that keeps
    /// up), and the cycles each keeps.
    cycling_members: f64,
    cycle_bytes_per_member: f64,
}

impl Sizes {
    fn of(scenario: &Scenario) -> Sizes {
        let duration_s = scenario.duration.as_secs_f64();
        let partitions = partitions_at_most(scenario);
        let members = members_at_most(scenario);
        let rebalances = rebalances_at_most(scenario);
        let intervals_of = |protocol: Protocol| {
            let moved = if moves_every_partition(protocol) {
                partitions
            } else {
                partitions / members.max(1.0)
            };
            partitions * 2.0 + rebalances * moved * 2.0
        };
        let per_protocol = scenario.protocols.iter().map(|p| intervals_of(p.protocol));
        let intervals = per_protocol.clone().fold(0.0, f64::max);
        let intervals_all = per_protocol.clone().sum();
        let intervals_held = intervals.min(INTERVALS_HELD_MAX);
        let intervals_held_all = per_protocol.map(|n| n.min(INTERVALS_HELD_MAX)).sum();
        let PoissonSizes { backlog, held_times, drawn: poisson_records } =
            poisson_sizes(scenario, partitions, duration_s);
        let records_per_sample = if matches!(scenario.consumer.processing, Processing::Constant(_))
        {
            0.0
        } else {
            let rate_per_s: f64 =
                scenario.topics.iter().map(|t| t.rate_per_s * f64::from(t.partitions)).sum();
            rate_per_s * sample_every_s(duration_s)
        };
        let (cycling_members, cycle_bytes_per_member) = cycle_sizes(scenario, partitions);
        Sizes {
            partitions,
            members,
            duration_s,
            intervals,
            intervals_all,
            intervals_held,
            intervals_held_all,
            backlog,
            held_times,
            poisson_records,
            records_per_sample,
            cycling_members,
            cycle_bytes_per_member,
        }
    }

    /// Heartbeats of `protocols` runs: members x duration / the protocol's interval (the
    /// protocols of the scenario in turn, or one run of its first for a sweep's run).
    fn heartbeats_per_run(&self, scenario: &Scenario, protocols: usize) -> f64 {
        let per_run = |protocol: Protocol| {
            let interval_s = heartbeat_interval_s(scenario, protocol);
            if interval_s > 0.0 {
                self.members * self.duration_s / interval_s
            } else {
                0.0
            }
        };
        if protocols == 1 {
            let most = scenario.protocols.iter().map(|p| per_run(p.protocol));
            return most.fold(0.0, f64::max);
        }
        scenario.protocols.iter().map(|p| per_run(p.protocol)).sum()
    }
}

/// Whether a rebalance of `protocol` revokes and reassigns every partition.
fn moves_every_partition(protocol: Protocol) -> bool {
    matches!(protocol, Protocol::Eager | Protocol::TubemqServer)
}

/// The heartbeat interval `protocol` uses, in seconds (0: no heartbeats).
fn heartbeat_interval_s(scenario: &Scenario, protocol: Protocol) -> f64 {
    match protocol {
        Protocol::Eager | Protocol::Cooperative => {
            scenario.consumer.config.heartbeat_interval.as_secs_f64()
        }
        Protocol::Consumer => scenario.broker.group_consumer_heartbeat_interval.as_secs_f64(),
        Protocol::TubemqServer | Protocol::TubemqClient => {
            scenario.tubemq.heartbeat_interval.as_secs_f64()
        }
        Protocol::Manual => 0.0,
    }
}

/// Partitions at the end: the topics' and every added one.
fn partitions_at_most(scenario: &Scenario) -> f64 {
    let initial: f64 = scenario.topics.iter().map(|t| f64::from(t.partitions)).sum();
    let added: f64 = scenario
        .events
        .iter()
        .map(|e| match e.kind {
            EventKind::AddPartitions { count, .. } => f64::from(count),
            _ => 0.0,
        })
        .sum();
    initial + added
}

/// The most members present at once, bounded by the initial ones plus every join and scale.
fn members_at_most(scenario: &Scenario) -> f64 {
    let points = crate::load_timeline(scenario);
    let most = points.iter().map(|p| p.members).max().unwrap_or(0);
    f64::from(most.max(scenario.group.members))
}

/// Rebalances at most: the first, and one or two per event that changes the group.
fn rebalances_at_most(scenario: &Scenario) -> f64 {
    let members = f64::from(scenario.group.members);
    let per_event = |kind: &EventKind| match kind {
        EventKind::Crash { restart_after: Some(_), .. } => 2.0,
        EventKind::RollingRestart { .. } => 2.0 * members.max(1.0),
        _ => 1.0,
    };
    1.0 + scenario.events.iter().map(|e| per_event(&e.kind)).sum::<f64>()
}

/// Poisson arrivals of one protocol run.
struct PoissonSizes {
    /// Not yet consumed and committed at the peak.
    backlog: f64,
    /// Their times held at the peak.
    held_times: f64,
    /// Drawn in the run.
    drawn: f64,
}

/// The members that keep cycles of their steps, and the bytes each keeps: a run of constant
/// arrivals and processing records a steady member's steps until they repeat
/// (`model`'s `world/stepper/cycle.rs`) and keeps [`CYCLES_PER_MEMBER`] periods of them. A member
/// with `p` partitions (the group's share) whose topics have one rate repeats after about
/// `2p + 1` steps (a batch's end and a poll's wake-up per partition); one that cannot keep up
/// (`p` x the highest rate x the processing time at least 1) works off a backlog and never
/// repeats, and one whose topics receive nothing has no step. Topics of different rates
/// usually repeat after more steps than a recording holds and keep less (counted alike).
fn cycle_sizes(scenario: &Scenario, partitions: f64) -> (f64, f64) {
    let constant = scenario.topics.iter().all(|t| t.arrival == Arrival::Constant);
    let Processing::Constant(processing) = scenario.consumer.processing else { return (0.0, 0.0) };
    let members = f64::from(scenario.group.members);
    if !constant || members < 1.0 || partitions < 1.0 {
        return (0.0, 0.0);
    }
    let share = (partitions / members).ceil();
    let fastest = scenario.topics.iter().map(|t| t.rate_per_s).fold(0.0, f64::max);
    if fastest <= 0.0 || share * fastest * processing.as_secs_f64() >= 1.0 {
        return (0.0, 0.0);
    }
    let steps = (2.0 * share + 1.0).min(CYCLE_STEPS_MAX);
    let per_member =
        CYCLES_PER_MEMBER * steps * (CYCLE_STEP_BYTES + share * CYCLE_STEP_PARTITION_BYTES);
    (members.min(partitions), per_member)
}

/// The seconds between two samples of a run of `duration_s` (`model`'s `World::new`).
fn sample_every_s(duration_s: f64) -> f64 {
    (duration_s.ceil() / SAMPLES_MAX).ceil().max(1.0)
}

/// A partition's consumer processes at most `1 / mean processing time` records per second,
/// and the group its members' share; what a partition receives above that accumulates for the
/// whole run. The rest is held until it is committed: from the start until the first commit
/// (the group's initial rebalance delay, then an auto-commit interval), later for about an
/// auto-commit interval; logs are trimmed at samples and drawn a sample ahead (two sample
/// intervals), and a second more for the group to form. Of each partition's backlog at most
/// [`POISSON_TIMES_HELD_MAX`] times are held. (The stochastic reference, 100 records/s a
/// partition: about 1,100 times a partition before its first commit, 11 s.)
fn poisson_sizes(scenario: &Scenario, partitions: f64, duration_s: f64) -> PoissonSizes {
    let processing_s = scenario.consumer.processing.mean().as_secs_f64();
    let members = f64::from(scenario.group.members);
    let per_partition_s = if processing_s > 0.0 {
        (1.0 / processing_s).min(members / processing_s / partitions.max(1.0))
    } else {
        f64::INFINITY
    };
    let window_s = scenario.broker.group_initial_rebalance_delay.as_secs_f64()
        + scenario.consumer.config.auto_commit_interval.as_secs_f64()
        + 2.0 * sample_every_s(duration_s)
        + 1.0;
    let mut sizes = PoissonSizes { backlog: 0.0, held_times: 0.0, drawn: 0.0 };
    for topic in scenario.topics.iter().filter(|t| t.arrival == Arrival::Poisson) {
        let count = f64::from(topic.partitions);
        let growth_per_s = (topic.rate_per_s - per_partition_s).max(0.0);
        let live = growth_per_s * duration_s + topic.rate_per_s * window_s.min(duration_s);
        let live = live.min(topic.rate_per_s * duration_s);
        sizes.backlog += count * live;
        sizes.held_times += count * live.min(POISSON_TIMES_HELD_MAX);
        sizes.drawn += count * topic.rate_per_s * duration_s;
    }
    sizes
}

/// The memory budget in bytes: `flag_mb` if given, else the environment variable
/// [`MEMORY_BUDGET_ENV`], else [`DEFAULT_MEMORY_BUDGET_MB`]. `Err` when the variable is not a
/// whole number of megabytes of at least 1.
pub fn memory_budget_bytes(flag_mb: Option<u64>) -> Result<f64, String> {
    let mb = match (flag_mb, std::env::var(MEMORY_BUDGET_ENV)) {
        (Some(mb), _) => mb,
        (None, Ok(text)) => text.trim().parse::<u64>().ok().filter(|mb| *mb >= 1).ok_or_else(|| {
            format!("{MEMORY_BUDGET_ENV} = `{text}`: expected a whole number of megabytes (at least 1)")
        })?,
        (None, Err(_)) => DEFAULT_MEMORY_BUDGET_MB,
    };
    Ok(mb as f64 * MB)
}

/// `Err` with the message when `estimate` needs more memory than `budget_bytes` for
/// `parallel` runs at once (a sweep's `--jobs`; 1 for `run`).
pub fn check_memory(estimate: &Estimate, budget_bytes: f64, parallel: usize) -> Result<(), String> {
    let needed = estimate.memory_bytes * parallel as f64;
    if needed <= budget_bytes {
        return Ok(());
    }
    let at_once = (parallel > 1).then(|| {
        let each = megabytes(estimate.memory_bytes);
        format!("{each} per run x {parallel} runs at once: lower --jobs")
    });
    Err(memory_message(estimate, needed, budget_bytes, at_once))
}

/// `Err` with the message when `run` with `at_once` of its protocol runs in flight (`--jobs`,
/// at most the number of protocols: [`estimate_run`]) needs more memory than `budget_bytes`.
/// With more than one at once, the message says to lower `--jobs` and what the most runs at
/// once that fit need (or what one at a time needs, when none fits).
pub fn check_memory_run(
    scenario: &Scenario,
    budget_bytes: f64,
    at_once: usize,
) -> Result<(), String> {
    let at_once = at_once.clamp(1, scenario.protocols.len().max(1));
    let estimate = estimate_run(scenario, at_once);
    if estimate.memory_bytes <= budget_bytes {
        return Ok(());
    }
    let lower = (at_once > 1).then(|| {
        let fits = most_at_once(scenario, budget_bytes, at_once);
        let (jobs, even) = fits.map_or((1, "even "), |j| (j, ""));
        format!(
            "{at_once} protocol runs at once: lower --jobs; {even}--jobs {jobs} needs {}",
            megabytes(estimate_run(scenario, jobs).memory_bytes)
        )
    });
    Err(memory_message(&estimate, estimate.memory_bytes, budget_bytes, lower))
}

/// The most protocol runs at once, from `at_most` down to 1, whose [`estimate_run`] fits
/// `budget_bytes`; `None` when not even one at a time does.
pub fn most_at_once(scenario: &Scenario, budget_bytes: f64, at_most: usize) -> Option<usize> {
    (1..=at_most.max(1)).rev().find(|&j| estimate_run(scenario, j).memory_bytes <= budget_bytes)
}

/// `run`'s protocol runs at once: `jobs` threads at most, one per protocol. A `jobs` given by
/// the user (`given`) is checked as it is (refused above the budget, naming `--jobs`); the
/// default (the machine's cores) is lowered to the most runs at once that fit, with a note,
/// so that a run that fits one protocol at a time is never refused for the default. `Err`:
/// the refusal (one at a time does not fit either, or the given `jobs` does not). The messages
/// do not name the file: the CLI and the Python package put it first.
pub fn runs_at_once(
    scenario: &Scenario,
    budget_bytes: f64,
    jobs: usize,
    given: bool,
) -> Result<(usize, Option<String>), String> {
    let at_most = jobs.clamp(1, scenario.protocols.len().max(1));
    if given {
        return check_memory_run(scenario, budget_bytes, at_most).map(|()| (at_most, None));
    }
    let Some(fits) = most_at_once(scenario, budget_bytes, at_most) else {
        return check_memory_run(scenario, budget_bytes, 1).map(|()| (1, None));
    };
    let note = (fits < at_most).then(|| {
        let needed = estimate_run(scenario, at_most).memory_bytes;
        let running = if fits == 1 {
            "one protocol run".to_string()
        } else {
            format!("{fits} protocol runs")
        };
        format!(
            "running {running} at a time, not {at_most} (the default: one per core, at most one \
             per protocol): {at_most} at once are estimated to need {}, above the memory budget \
             of {} (--jobs sets the number; docs/limits.md)",
            megabytes(needed),
            megabytes(budget_bytes)
        )
    });
    Ok((fits, note))
}

/// The refusal: `needed` against the budget, why several runs at once (`at_once`, if so), the
/// two largest parts with their keys, and how to raise the budget.
fn memory_message(
    estimate: &Estimate,
    needed: f64,
    budget_bytes: f64,
    at_once: Option<String>,
) -> String {
    let mut message = format!(
        "the run is estimated to need {} of memory at its peak, above the budget of {}",
        megabytes(needed),
        megabytes(budget_bytes)
    );
    if let Some(at_once) = at_once {
        message.push_str(&format!(" ({at_once})"));
    }
    message.push_str("; most of it: ");
    let largest: Vec<String> = estimate
        .memory_parts
        .iter()
        .take(2)
        .filter(|p| p.amount >= estimate.memory_bytes / 100.0)
        .map(|p| format!("{} for {} (lower {})", megabytes(p.amount), p.what, p.keys))
        .collect();
    if largest.is_empty() {
        // Every part of a small run is below 1%: the process itself is the run's memory.
        message.push_str(&format!(
            "{} for the process itself (code, allocator, buffers: no key of the file lowers it)",
            megabytes(BASE_BYTES)
        ));
    }
    message.push_str(&largest.join("; "));
    message.push_str(&format!(
        "; or raise the budget with --memory-budget-mb or {MEMORY_BUDGET_ENV} (docs/limits.md)"
    ));
    message
}

/// The slow-run warning of `warnings`, if the estimated wall time is above [`WARN_WALL_S`].
pub fn slow_run_warning(scenario: &Scenario) -> Option<String> {
    let estimate = estimate(scenario);
    if estimate.wall_s <= WARN_WALL_S {
        return None;
    }
    let top = &estimate.wall_parts[0];
    Some(format!(
        "the run is estimated to take about {} of wall time, most of it for {} (lower {}): it \
         will be slow",
        duration_text(estimate.wall_s),
        top.what,
        top.keys
    ))
}

/// `1234 MB` (MB of 2^20 bytes, the unit of the budget), rounded up.
pub fn megabytes(bytes: f64) -> String {
    format!("{:.0} MB", (bytes / MB).ceil())
}

/// `5 min`, `3.2 h`, `4.1 days`.
fn duration_text(seconds: f64) -> String {
    if seconds < 3600.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 48.0 * 3600.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{:.1} days", seconds / 86400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn scenario(text: &str) -> Scenario {
        crate::parse_str(text, Path::new("t.toml")).expect("a valid scenario")
    }

    /// The part of `estimate` whose description starts with `what`.
    fn part(estimate: &Estimate, what: &str) -> f64 {
        let found = estimate.memory_parts.iter().find(|p| p.what.starts_with(what));
        let all: Vec<_> = estimate.memory_parts.iter().map(|p| (&p.what, p.amount)).collect();
        found.unwrap_or_else(|| panic!("no part {what:?} in {all:?}")).amount
    }

    /// Four Poisson partitions at 100 records/s, lognormal processing, one protocol, the
    /// default 3 s initial rebalance delay and 5 s auto-commit interval. 60 s samples every
    /// second: 1,100 times held a partition (3 + 5 + 2 x 1 + 1 s), 22 bytes each, and a
    /// checkpoint's 64/1,024 bytes a record: 4 x 1,100 x (22 + 0.0625) = 97,075 bytes; a
    /// sample's catch-ups hold 400 records, 32 bytes each: 12,800 bytes. Three hours sample
    /// every 6 s (10,800 / 2,000, rounded up): 3 + 5 + 2 x 6 + 1 = 21 s held, 4 x 100 x 21 x
    /// 22.0625 = 185,325 bytes, and 4 x 100 x 6 x 32 = 76,800 bytes of a sample's records.
    #[test]
    fn poisson_times_and_a_samples_records_by_hand() {
        let text = |duration: &str| {
            format!(
                "duration = \"{duration}\"\nprotocols = [\"eager\"]\n[[topic]]\nname = \"t\"\n\
                 partitions = 4\nrate = 100.0\narrival = \"poisson\"\n[consumer]\n\
                 processing = {{ dist = \"lognormal\", mean = \"1ms\", p99 = \"6ms\" }}\n\
                 [group]\nmembers = 2\n"
            )
        };
        let minute = estimate(&scenario(&text("60s")));
        assert_eq!(part(&minute, "a Poisson backlog of 4.400e3 records"), 97_075.0);
        assert_eq!(part(&minute, "4.000e2 records of a sample's catch-ups held"), 12_800.0);
        let hours = estimate(&scenario(&text("3h")));
        assert_eq!(part(&hours, "a Poisson backlog of 8.400e3 records"), 185_325.0);
        assert_eq!(part(&hours, "2.400e3 records of a sample's catch-ups held"), 76_800.0);
    }

    /// Ten members of 100 constant partitions at 10 records/s, 1 ms a record (a member's share
    /// of 10 partitions is 10% busy): each keeps 2 cycles of 2 x 10 + 1 steps of 1,024 + 48 x 10
    /// bytes, 10 x 2 x 21 x 1,504 = 631,680 bytes. At 100 records/s a member is busy all the
    /// time (10 x 100 x 1 ms = 1): no cycle; nor with no record, or with lognormal processing
    /// (and constant processing holds no sample's records).
    #[test]
    fn the_cycles_of_steady_members_by_hand() {
        let text = |rate: &str, processing: &str| {
            format!(
                "duration = \"60s\"\nprotocols = [\"eager\"]\n[[topic]]\nname = \"t\"\n\
                 partitions = 100\nrate = {rate}\n[consumer]\nprocessing = {processing}\n\
                 [group]\nmembers = 10\n"
            )
        };
        let steady = estimate(&scenario(&text("10.0", "\"1ms\"")));
        assert_eq!(part(&steady, "the repeating steps of 10 steady members"), 631_680.0);
        assert_eq!(part(&steady, "0.000e0 records of a sample's catch-ups held"), 0.0);
        let busy = estimate(&scenario(&text("100.0", "\"1ms\"")));
        assert_eq!(part(&busy, "the repeating steps of 0 steady members"), 0.0);
        let idle = estimate(&scenario(&text("0.0", "\"1ms\"")));
        assert_eq!(part(&idle, "the repeating steps of 0 steady members"), 0.0);
        let varied = "{ dist = \"lognormal\", mean = \"1ms\", p99 = \"6ms\" }";
        let stochastic = estimate(&scenario(&text("10.0", varied)));
        assert_eq!(part(&stochastic, "the repeating steps of 0 steady members"), 0.0);
        assert_eq!(part(&stochastic, "1.000e3 records of a sample's catch-ups held"), 32_000.0);
    }
}
