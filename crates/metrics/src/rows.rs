//! The rows of the output CSV files. Field names and order are the column contract of DESIGN
//! section 7: change them only together with DESIGN.md. New columns go at the end.

use crate::ownership::OwnershipLog;
use serde::{Deserialize, Serialize};

/// The CSV column names of a row type, in field order (so a header can be written with no rows).
pub trait Columns {
    /// Column names, equal to the serde field names.
    const COLUMNS: &'static [&'static str];
}

/// One row of `summary.csv`: one protocol run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummaryRow {
    /// Scenario name.
    pub scenario: String,
    /// `eager`, `cooperative`, `consumer`, `tubemq-server`, `tubemq-client`, `manual`.
    pub protocol: String,
    /// Assignor name (`modulo` / `none` where the protocol has no choice).
    pub assignor: String,
    /// Whether members were static (KIP-345).
    pub static_membership: bool,
    /// Run seed.
    pub seed: u64,
    /// Simulated duration.
    pub duration_s: f64,
    /// Partitions at the end of the run.
    pub partitions: u32,
    /// Records appended by producers.
    pub records_produced: u64,
    /// Deliveries to processing, including repeats.
    pub records_processed: u64,
    /// Deliveries of a (partition, offset) beyond the first.
    pub records_reprocessed: u64,
    /// Offsets never processed because a position was reset past them.
    pub records_lost: u64,
    /// Produced but not processed at the end.
    pub final_lag: u64,
    /// Sum over partitions of down time.
    pub downtime_partition_s: f64,
    /// Median downtime episode.
    pub downtime_episode_ms_p50: f64,
    /// 99th percentile downtime episode.
    pub downtime_episode_ms_p99: f64,
    /// Longest downtime episode.
    pub downtime_episode_ms_max: f64,
    /// Time during which every partition with waiting records was down.
    pub stop_the_world_s: f64,
    /// Logical rebalances.
    pub rebalances: u64,
    /// Median rebalance duration.
    pub rebalance_ms_p50: f64,
    /// Longest rebalance.
    pub rebalance_ms_max: f64,
    /// Assignments where a partition's owner changed.
    pub partitions_moved: u64,
    /// Median arrival-to-end-of-first-processing latency.
    pub e2e_latency_ms_p50: f64,
    /// 99th percentile latency.
    pub e2e_latency_ms_p99: f64,
    /// Largest latency.
    pub e2e_latency_ms_max: f64,
    /// Simulation events handled.
    pub events: u64,
    /// The start of the measurement window (`measure_from`): the downtime, stop-the-world,
    /// rebalance and move figures above count from it; record counts and latencies cover the
    /// whole run (so the conservation laws hold). 0: the whole run.
    #[serde(default)]
    pub measure_from_s: f64,
    /// Down time before `measure_from` (the start-up), apart from `downtime_partition_s`.
    #[serde(default)]
    pub startup_downtime_partition_s: f64,
    /// Stop-the-world time before `measure_from`.
    #[serde(default)]
    pub startup_stop_the_world_s: f64,
    /// Rebalances that started before `measure_from`.
    #[serde(default)]
    pub startup_rebalances: u64,
}

/// One row of `partitions.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartitionRow {
    /// Protocol name.
    pub protocol: String,
    /// Assignor name.
    pub assignor: String,
    /// Static membership.
    pub static_membership: bool,
    /// Topic name.
    pub topic: String,
    /// Partition number.
    pub partition: u32,
    /// Records appended.
    pub produced: u64,
    /// Deliveries to processing, including repeats.
    pub processed: u64,
    /// Repeated deliveries.
    pub reprocessed: u64,
    /// Offsets skipped by a reset.
    pub lost: u64,
    /// Total down time.
    pub downtime_s: f64,
    /// Number of down episodes.
    pub episodes: u64,
    /// Owner changes.
    pub moves: u64,
}

/// One row of `rebalances.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RebalanceRow {
    /// Protocol name.
    pub protocol: String,
    /// Assignor name.
    pub assignor: String,
    /// Static membership.
    pub static_membership: bool,
    /// 0-based index within the run.
    pub index: u64,
    /// What started it: join, leave, session-expiry, max-poll-leave, rejoin, partitions-added, ...
    pub trigger: String,
    /// Coordinator's trigger time.
    pub start_s: f64,
    /// When every member had its new assignment.
    pub end_s: f64,
    /// `end_s - start_s` in ms.
    pub duration_ms: f64,
    /// Join/sync rounds (2 for a cooperative rebalance that moved partitions).
    pub rounds: u32,
    /// Members in the group at the end.
    pub members: u32,
    /// Partitions whose owner changed.
    pub partitions_moved: u64,
}

/// One row of `ownership.csv`: a partition's (owner, state) over `[start_s, end_s)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OwnershipRow {
    /// Protocol name.
    pub protocol: String,
    /// Assignor name.
    pub assignor: String,
    /// Static membership.
    pub static_membership: bool,
    /// Topic name.
    pub topic: String,
    /// Partition number.
    pub partition: u32,
    /// Interval start.
    pub start_s: f64,
    /// Interval end.
    pub end_s: f64,
    /// Member name, or empty when unowned.
    pub owner: String,
    /// `consuming`, `idle` (nothing waiting), or a down cause: `unassigned`, `revoked`,
    /// `stop-the-world`, `owner-dead`, `owner-paused`, `owner-disconnected`.
    pub state: String,
}

/// One row of `timeline.csv`: a sample of the group at `t_s`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineRow {
    /// Protocol name.
    pub protocol: String,
    /// Assignor name.
    pub assignor: String,
    /// Static membership.
    pub static_membership: bool,
    /// Sample time.
    pub t_s: f64,
    /// Records produced but not yet processed, over all partitions.
    pub lag: u64,
    /// Partitions down at that moment.
    pub down_partitions: u32,
    /// Live members in the group.
    pub members: u32,
}

/// Everything one protocol run reports.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RunReport {
    /// The `summary.csv` row (None only for an empty report).
    pub summary: Option<SummaryRow>,
    /// `partitions.csv` rows, by topic then partition.
    pub partitions: Vec<PartitionRow>,
    /// `rebalances.csv` rows, by index.
    pub rebalances: Vec<RebalanceRow>,
    /// `ownership.csv` rows, by topic, partition, start (compact: see [`OwnershipLog`]).
    pub ownership: OwnershipLog,
    /// `timeline.csv` rows, by time.
    pub timeline: Vec<TimelineRow>,
}

/// A reference to rows has the rows' columns (so borrowed rows can be written).
impl<T: Columns + ?Sized> Columns for &T {
    const COLUMNS: &'static [&'static str] = T::COLUMNS;
}

impl Columns for SummaryRow {
    const COLUMNS: &'static [&'static str] = &[
        "scenario",
        "protocol",
        "assignor",
        "static_membership",
        "seed",
        "duration_s",
        "partitions",
        "records_produced",
        "records_processed",
        "records_reprocessed",
        "records_lost",
        "final_lag",
        "downtime_partition_s",
        "downtime_episode_ms_p50",
        "downtime_episode_ms_p99",
        "downtime_episode_ms_max",
        "stop_the_world_s",
        "rebalances",
        "rebalance_ms_p50",
        "rebalance_ms_max",
        "partitions_moved",
        "e2e_latency_ms_p50",
        "e2e_latency_ms_p99",
        "e2e_latency_ms_max",
        "events",
        "measure_from_s",
        "startup_downtime_partition_s",
        "startup_stop_the_world_s",
        "startup_rebalances",
    ];
}

impl Columns for PartitionRow {
    const COLUMNS: &'static [&'static str] = &[
        "protocol",
        "assignor",
        "static_membership",
        "topic",
        "partition",
        "produced",
        "processed",
        "reprocessed",
        "lost",
        "downtime_s",
        "episodes",
        "moves",
    ];
}

impl Columns for RebalanceRow {
    const COLUMNS: &'static [&'static str] = &[
        "protocol",
        "assignor",
        "static_membership",
        "index",
        "trigger",
        "start_s",
        "end_s",
        "duration_ms",
        "rounds",
        "members",
        "partitions_moved",
    ];
}

impl Columns for OwnershipRow {
    const COLUMNS: &'static [&'static str] = &[
        "protocol",
        "assignor",
        "static_membership",
        "topic",
        "partition",
        "start_s",
        "end_s",
        "owner",
        "state",
    ];
}

impl Columns for TimelineRow {
    const COLUMNS: &'static [&'static str] =
        &["protocol", "assignor", "static_membership", "t_s", "lag", "down_partitions", "members"];
}
