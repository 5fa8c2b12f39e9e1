//! Folds a run's observations into a [`RunReport`] (DESIGN section 5).
//!
//! Per partition: processed offsets as an [`IntervalSet`] (a delivery of an offset already in
//! the set is a reprocessing); the highest offset a new owner started from (offsets below it
//! never processed are *lost*); the rest of the unprocessed offsets is the final lag. The
//! partition's access state comes from `Access` observations: an interval in which no live
//! member may consume it is *down* from the arrival of its first unprocessed record (before
//! that it is *idle*). Conservation is asserted when the report is finished.
//!
//! `stop_the_world_s` is the time during which at least one partition is down and no
//! partition may be consumed (a partition that may be consumed but has nothing waiting counts
//! as not stopped).

use crate::intervals::IntervalSet;
use crate::latency::{class_of, LatencyHistogram};
use crate::ownership::{self, OwnershipInterval, OwnershipLog, NO_OWNER};
use crate::rows::{PartitionRow, RebalanceRow, RunReport, SummaryRow, TimelineRow};
use crate::time_sweep::{CoverCount, StopSweep};
use crate::timeline::{Availability, ExactRow, MergeSource, OpenSpan, Timelines};
use hdrhistogram::Histogram;
use model::{
    latency_us, AccessRef, CountLatencies, LatencyCounts, Observation, Observer, PartState,
    PeriodicStretch, RecordTimes, Tp, TpTable,
};
use sim_core::SimTime;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

/// What identifies a protocol run in every row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunLabels {
    /// Scenario name.
    pub scenario: String,
    /// Protocol name (`eager`, ...).
    pub protocol: String,
    /// Assignor name.
    pub assignor: String,
    /// Static membership.
    pub static_membership: bool,
    /// Run seed.
    pub seed: u64,
    /// Simulated duration.
    pub duration: SimTime,
    /// The start of the measurement window (`measure_from`; zero: the whole run).
    pub measure_from: SimTime,
}

/// What every delivery of a partition updates, apart from the rest of its [`PartMetrics`]: one
/// cache line per partition, so that the folds of a jump's stretches (one per partition of
/// the member, at each of its catch-ups) touch 640 KB at 10,000 partitions instead of the 2.3
/// MB of the whole metrics (`perf`, KIP-848 hour: half of the fold's time was the miss on the
/// partition's metrics).
#[derive(Clone, Debug, Default)]
#[repr(align(64))]
struct PartCounts {
    processed: IntervalSet,
    deliveries: u64,
    skip_to: u64,
}

impl PartCounts {
    /// Offsets skipped over and never processed.
    fn lost(&self) -> u64 {
        self.skip_to - self.processed.count_in(0, self.skip_to)
    }
}

/// A partition's metrics other than its [`PartCounts`], in one aligned 64-byte line: an
/// `Access` report (10,000 of them per eager rebalance of the reference scenario) touches it
/// and the end of the run's one list of closed timeline intervals, nothing else
/// (`timeline.rs`).
#[derive(Clone, Debug)]
#[repr(align(64))]
struct PartMetrics {
    /// The last interval of its timeline (its end is when the current state began).
    open: OpenSpan,
    waiting_from: SimTime,
    produced: u64,
    /// The owner's index, or [`NO_OWNER`].
    owner: u32,
    /// The last owner's index, or [`NO_OWNER`] before the first.
    last_owner: u32,
    moves: u32,
    /// Its timeline's index in [`Collector::timelines`].
    timeline: u32,
    state: PartState,
}

impl PartMetrics {
    fn new(at: SimTime, timeline: u32) -> PartMetrics {
        PartMetrics {
            open: OpenSpan::empty(at),
            waiting_from: SimTime::MAX,
            produced: 0,
            owner: NO_OWNER,
            last_owner: NO_OWNER,
            moves: 0,
            timeline,
            state: PartState::Unassigned,
        }
    }

    /// Closes the current state interval at `at`: consuming, or idle until the first
    /// unprocessed record arrives and down (in the partition's state) from then.
    fn close_interval(&mut self, at: SimTime, timelines: &mut Timelines) {
        let since = self.open.end();
        if at <= since {
            return;
        }
        if self.state == PartState::Consuming {
            self.push(timelines, at, ownership::CONSUMING);
            return;
        }
        let down_from = self.waiting_from.max(since);
        if down_from > since {
            self.push(timelines, down_from.min(at), ownership::IDLE);
        }
        if down_from < at {
            self.push(timelines, at, ownership::state_code(self.state));
        }
    }

    /// Extends the timeline to `end` in `state` under the current owner.
    fn push(&mut self, timelines: &mut Timelines, end: SimTime, state: u8) {
        timelines.push((self.timeline, &mut self.open), end, self.owner, state);
    }
}

#[derive(Clone, Debug)]
struct OpenRebalance {
    trigger: String,
    start: SimTime,
    moves: u64,
}

#[derive(Clone, Copy, Debug)]
struct Sample {
    at: SimTime,
    lag: u64,
    members: u32,
}

/// Receives a run's observations and builds its report.
#[derive(Debug)]
pub struct Collector {
    labels: RunLabels,
    topics: Vec<String>,
    /// Per partition (dense, iterated in `(topic, partition)` order).
    parts: TpTable<PartMetrics>,
    /// Every partition's counts, by topic then partition (present or not in `parts`; not a
    /// `TpTable`, whose `Option` would pad each 64-byte line to 128).
    counts: Vec<Vec<PartCounts>>,
    e2e: LatencyHistogram,
    open: Option<OpenRebalance>,
    rebalances: Vec<RebalanceRow>,
    samples: Vec<Sample>,
    end: Option<(SimTime, u64)>,
    commits_failed: u64,
    /// The index of each owner name, assigned at its first appearance (the names by index are
    /// built from it at the end, so a name is never copied).
    owner_index: BTreeMap<String, u32>,
    /// By member id (`MemberRef::id`): the member's name and its index in `owner_index`.
    owner_by_id: Vec<Option<(Arc<str>, u32)>>,
    /// Every partition's ownership timeline (`timeline.rs`).
    timelines: Timelines,
    /// Per partition, its moves before `measure_from` (empty when the window is the whole
    /// run; apart from [`PartMetrics`], which fills its 64 bytes).
    startup_moves: TpTable<u32>,
    /// The sum over partitions of offsets processed (`processed.len()`) and of offsets lost
    /// (`lost()`), kept as they change: a sample reads them instead of visiting every
    /// partition (10,000 at the reference size, every sample).
    done: DoneTotals,
}

/// Running sums of [`PartMetrics`] counts over every partition.
#[derive(Clone, Copy, Debug, Default)]
struct DoneTotals {
    processed: u64,
    lost: u64,
}

impl DoneTotals {
    /// Offsets `lo..hi` of a partition whose skips reach `skip_to` were processed for the
    /// first time: those below `skip_to` are no longer lost.
    fn on_fresh(&mut self, (lo, hi): (u64, u64), skip_to: u64) {
        self.processed += hi - lo;
        self.lost -= hi.min(skip_to).saturating_sub(lo);
    }
}

impl Collector {
    /// A collector for one protocol run.
    pub fn new(labels: RunLabels) -> Collector {
        Collector::with_spill_threshold(labels, crate::timeline::SPILL_THRESHOLD)
    }

    /// A collector that holds at most `threshold` closed ownership intervals in memory
    /// before it sorts them and spills them to a temporary file (`timeline.rs`); the report
    /// is the same whatever the threshold ([`Collector::new`] takes
    /// [`SPILL_THRESHOLD`](crate::SPILL_THRESHOLD), 16 MiB of intervals).
    pub fn with_spill_threshold(labels: RunLabels, threshold: usize) -> Collector {
        Collector {
            labels,
            topics: Vec::new(),
            parts: TpTable::default(),
            counts: Vec::new(),
            e2e: LatencyHistogram::new(),
            open: None,
            rebalances: Vec::new(),
            samples: Vec::new(),
            end: None,
            commits_failed: 0,
            owner_index: BTreeMap::new(),
            owner_by_id: Vec::new(),
            timelines: Timelines::with_threshold(threshold),
            startup_moves: TpTable::default(),
            done: DoneTotals::default(),
        }
    }

    /// Commits refused so far (for tests and diagnostics).
    pub fn commits_failed(&self) -> u64 {
        self.commits_failed
    }

    /// Debug builds: `tp` has metrics (the check reads the metrics that `counts` keeps apart,
    /// so release builds skip it on the path of every delivery).
    fn check_known(&self, tp: Tp) {
        debug_assert!(self.parts.get(tp).is_some(), "processed a known partition {tp:?}");
    }

    /// The counts of `tp`.
    fn counts(&self, tp: Tp) -> &PartCounts {
        &self.counts[tp.topic as usize][tp.partition as usize]
    }

    /// Room for `partitions` partitions of `topic`, in both tables.
    fn reserve(&mut self, topic: u32, partitions: u32) {
        self.parts.reserve(topic, partitions);
        let topic = topic as usize;
        if self.counts.len() <= topic {
            self.counts.resize_with(topic + 1, Vec::new);
        }
        let counts = &mut self.counts[topic];
        if counts.len() < partitions as usize {
            counts.resize_with(partitions as usize, PartCounts::default);
        }
    }

    /// Folds one delivery of `first..first + times.len()`: only offsets never processed before
    /// count towards latency; equal consecutive latencies go into the histogram as one
    /// `record_n` (exact: a histogram is a multiset of values).
    fn on_processed(&mut self, tp: Tp, first: u64, times: &RecordTimes) {
        // Each form counted in its own loop (a per-record dispatch, as in
        // `RecordTimes::pairs`, made the fold bench about 1.6x slower).
        match *times {
            RecordTimes::Listed { ref arrivals, ref ends } => {
                self.on_processed_listed(tp, first, arrivals, ends)
            }
            RecordTimes::Linear { count, arrival, arrival_step, end, end_step } => {
                let arrival = (arrival.as_nanos(), arrival_step.as_nanos());
                let end = (end.as_nanos(), end_step.as_nanos());
                self.on_deliveries(tp, first, count, |e2e, from, to| {
                    e2e.record_linear(arrival, end, from, to)
                })
            }
        }
    }

    /// [`Collector::on_processed`] of listed times, lent as two lists of equal length.
    fn on_processed_listed(&mut self, tp: Tp, first: u64, arrivals: &[SimTime], ends: &[SimTime]) {
        debug_assert_eq!(arrivals.len(), ends.len(), "one arrival and one end per record");
        self.on_deliveries(tp, first, ends.len() as u64, |e2e, from, to| {
            record_listed_range(e2e, (arrivals, ends), from..to)
        })
    }

    /// [`Collector::on_processed_listed`] of records counted ahead in `counted` (per
    /// [`class_of`], `max_us` the largest latency): a report whose records are all processed
    /// for the first time leaves its latencies there and raises the maximum; one with records
    /// processed before records its first-time records as listed and takes all of its records
    /// back out of `counted`. Either way the histogram ends with the counts
    /// [`Collector::on_processed_listed`] gives.
    fn on_processed_counted(
        &mut self,
        (tp, first): (Tp, u64),
        (arrivals, ends): (&[SimTime], &[SimTime]),
        max_us: u64,
        counted: &mut LatencyCounts,
    ) {
        debug_assert_eq!(arrivals.len(), ends.len(), "one arrival and one end per record");
        let count = ends.len() as u64;
        let mut all_first_time = false;
        self.on_deliveries(tp, first, count, |e2e, from, to| {
            if (from, to) == (0, count) {
                all_first_time = true;
                e2e.raise_max_us(max_us);
            } else {
                record_listed_range(e2e, (arrivals, ends), from..to);
            }
        });
        if !all_first_time {
            for (arrival, end) in arrivals.iter().zip(ends) {
                counted.remove(class_of(latency_us(*arrival, *end)));
            }
        }
    }

    /// Counts `count` deliveries of `tp` from offset `first`; each range of them processed
    /// for the first time is counted as done and given to `record` (the end-to-end
    /// histogram, and the range as indices from `first`: `from..to`).
    fn on_deliveries(
        &mut self,
        tp: Tp,
        first: u64,
        count: u64,
        mut record: impl FnMut(&mut LatencyHistogram, u64, u64),
    ) {
        self.check_known(tp);
        let part = &mut self.counts[tp.topic as usize][tp.partition as usize];
        part.deliveries += count;
        let (e2e, done, skip_to) = (&mut self.e2e, &mut self.done, part.skip_to);
        part.processed.insert_each(first, first + count, |lo, hi| {
            done.on_fresh((lo, hi), skip_to);
            record(e2e, lo - first, hi - first);
        });
    }

    /// Folds a stretch of a repeating delivery pattern (see `Observation::ProcessedPeriodic`):
    /// every copy has the same latencies, so offset `o` has the latency of pattern record
    /// `(start + o - first) % n`; the offsets never processed before are counted per pattern
    /// record and go into the histogram as one `record_n` each (exactly what the separate
    /// deliveries would record).
    fn on_processed_periodic(
        &mut self,
        tp: Tp,
        (first, count): (u64, u64),
        latencies: &[SimTime],
        start: u64,
    ) {
        if latencies.is_empty() || count == 0 {
            return;
        }
        self.check_known(tp);
        let part = &mut self.counts[tp.topic as usize][tp.partition as usize];
        part.deliveries += count;
        let (e2e, done, skip_to) = (&mut self.e2e, &mut self.done, part.skip_to);
        part.processed.insert_each(first, first + count, |lo, hi| {
            done.on_fresh((lo, hi), skip_to);
            record_pattern_stretch(e2e, latencies, start + (lo - first), start + (hi - first));
        });
    }

    /// The index of `owner`'s name, assigned at its first appearance; kept by member id, so
    /// a member seen before is found without a search (its name is compared, not looked up).
    fn intern_owner(&mut self, (id, owner_name): (u32, &Arc<str>)) -> u32 {
        let id = id as usize;
        if let Some(Some((name, index))) = self.owner_by_id.get(id) {
            if Arc::ptr_eq(name, owner_name) || **name == **owner_name {
                return *index;
            }
        }
        let next = self.owner_index.len() as u32;
        let index = *self.owner_index.entry(owner_name.to_string()).or_insert(next);
        if self.owner_by_id.len() <= id {
            self.owner_by_id.resize(id + 1, None);
        }
        self.owner_by_id[id] = Some((Arc::clone(owner_name), index));
        index
    }

    /// The owner names by index (the inverse of `owner_index`, which it empties).
    fn take_owner_names(&mut self) -> Vec<String> {
        let mut names = vec![String::new(); self.owner_index.len()];
        for (name, i) in std::mem::take(&mut self.owner_index) {
            names[i as usize] = name;
        }
        names
    }

    fn on_access(
        &mut self,
        at: SimTime,
        tp: Tp,
        owner: Option<(u32, &Arc<str>)>,
        state: PartState,
        waiting_from: SimTime,
    ) {
        let owner = owner.map_or(NO_OWNER, |member| self.intern_owner(member));
        let part = part_in(&mut self.parts, &mut self.timelines, tp, at);
        part.close_interval(at, &mut self.timelines);
        if owner != NO_OWNER {
            if part.last_owner != NO_OWNER && part.last_owner != owner {
                part.moves += 1;
                if let Some(open) = self.open.as_mut() {
                    open.moves += 1;
                }
                if at < self.labels.measure_from {
                    *self.startup_moves.get_or_insert_with(tp, || 0) += 1;
                }
            }
            part.last_owner = owner;
        }
        part.state = state;
        part.owner = owner;
        part.waiting_from = waiting_from;
    }

    fn on_rebalance_end(&mut self, at: SimTime, rounds: u32, members: u32) {
        let Some(open) = self.open.take() else { return };
        let duration = at - open.start;
        self.rebalances.push(RebalanceRow {
            protocol: self.labels.protocol.clone(),
            assignor: self.labels.assignor.clone(),
            static_membership: self.labels.static_membership,
            index: self.rebalances.len() as u64,
            trigger: open.trigger,
            start_s: open.start.as_secs_f64(),
            end_s: at.as_secs_f64(),
            duration_ms: duration.as_millis_f64(),
            rounds,
            members,
            partitions_moved: open.moves,
        });
    }

    fn on_sample(&mut self, at: SimTime, produced: u64, members: u32) {
        let done = self.done.processed + self.done.lost;
        debug_assert_eq!(
            done,
            self.parts
                .keys()
                .map(|tp| self.counts(tp))
                .map(|c| c.processed.len() + c.lost())
                .sum::<u64>(),
            "the running sums of processed and lost offsets"
        );
        let lag = produced.saturating_sub(done);
        self.samples.push(Sample { at, lag, members });
    }

    /// Finishes the report; panics (with the numbers) if conservation is violated.
    pub fn finish(mut self) -> RunReport {
        let (end, events) = self.end.expect("the run reported its end");
        let mut members_at_end = 0;
        if self.open.is_some() {
            members_at_end = self.samples.last().map_or(0, |s| s.members);
        }
        self.on_rebalance_end(end, 0, members_at_end);
        let source = self.close_timelines(end);
        let folded = self.fold_timelines(&source);
        let partitions = self.partition_rows(&folded.parts);
        self.e2e.flush();
        let mut summary = self.summary(events, &partitions, &folded);
        self.add_startup(&mut summary, &folded);
        let timeline = self.timeline_rows(&folded.down_counts);
        let ownership = self.take_ownership(source, folded.rows);
        RunReport {
            summary: Some(summary),
            ownership,
            timeline,
            partitions,
            rebalances: self.rebalances,
        }
    }

    /// Reads every partition's timeline once, in partition order, and folds what the report
    /// needs of it: its availability's figures (the partition alone is held at a time), and
    /// its rows if nothing was spilled (otherwise the log reads them from the spill file).
    fn fold_timelines(&self, source: &MergeSource) -> Folded {
        let from = self.labels.measure_from;
        let at: Vec<SimTime> = self.samples.iter().map(|s| s.at).collect();
        let mut down_counts = CoverCount::new(&at);
        let mut stop = StopSweep::default();
        let mut episodes = EpisodeHistogram::default();
        let mut parts = Vec::with_capacity(self.parts.len());
        let mut startup_downtime = SimTime::ZERO;
        let mut rows = (!source.spilled()).then(Vec::new);
        let mut merge = source.merge();
        let mut exact: Vec<ExactRow> = Vec::new();
        while let Some(tp) = merge.next_partition(&mut exact).unwrap_or_else(|e| {
            panic!("reading back the ownership intervals spilled to a temporary file: {e}")
        }) {
            let availability = Availability::of(&exact);
            down_counts.add(&availability.down);
            stop.add(&availability.down, &availability.allowed);
            let measured = if from.is_zero() {
                episodes.add(availability.episodes());
                (availability.downtime(), availability.episodes().len() as u64)
            } else {
                startup_downtime += availability.clipped(SimTime::ZERO, from).downtime();
                let window = availability.clipped(from, SimTime::MAX);
                episodes.add(window.episodes());
                (window.downtime(), window.episodes().len() as u64)
            };
            parts.push(measured);
            if let Some(rows) = rows.as_mut() {
                let intervals = exact.iter().map(ExactRow::interval).collect();
                rows.push((tp.topic, tp.partition, intervals));
            }
        }
        debug_assert_eq!(parts.len(), self.parts.len(), "a timeline per partition");
        Folded {
            parts,
            episodes,
            startup: (!from.is_zero())
                .then(|| (startup_downtime, stop.within(SimTime::ZERO, from))),
            stop_the_world: stop.within(from, SimTime::MAX),
            down_counts: down_counts.counts(),
            rows,
        }
    }

    /// One row per partition; `measured` (downtime and episodes in the measurement window)
    /// is in the order of `parts`.
    fn partition_rows(&self, measured: &[(SimTime, u64)]) -> Vec<PartitionRow> {
        self.parts
            .iter()
            .zip(measured)
            .map(|((tp, p), &(downtime, episodes))| {
                let c = self.counts(tp);
                check_partition_conservation(&self.topics, tp, p, c);
                let startup_moves = self.startup_moves.get(tp).copied().unwrap_or(0);
                PartitionRow {
                    protocol: self.labels.protocol.clone(),
                    assignor: self.labels.assignor.clone(),
                    static_membership: self.labels.static_membership,
                    topic: self.topics[tp.topic as usize].clone(),
                    partition: tp.partition,
                    produced: p.produced,
                    processed: c.deliveries,
                    reprocessed: c.deliveries - c.processed.len(),
                    lost: c.lost(),
                    downtime_s: downtime.as_secs_f64(),
                    episodes,
                    moves: u64::from(p.moves - startup_moves),
                }
            })
            .collect()
    }

    fn summary(&self, events: u64, rows: &[PartitionRow], folded: &Folded) -> SummaryRow {
        let produced: u64 = rows.iter().map(|r| r.produced).sum();
        let processed: u64 = rows.iter().map(|r| r.processed).sum();
        let reprocessed: u64 = rows.iter().map(|r| r.reprocessed).sum();
        let lost: u64 = rows.iter().map(|r| r.lost).sum();
        let unique: u64 = self.parts.keys().map(|tp| self.counts(tp).processed.len()).sum();
        let final_lag = self.final_lag();
        assert_eq!(
            produced,
            unique + lost + final_lag,
            "conservation: produced {produced} != unique {unique} + lost {lost} + final_lag {final_lag}"
        );
        assert_eq!(
            processed,
            unique + reprocessed,
            "conservation: processed {processed} != unique {unique} + reprocessed {reprocessed}"
        );
        let episodes = folded.episodes.quantiles();
        let downtime: f64 = rows.iter().map(|r| r.downtime_s).sum();
        let measured_rebalances: Vec<&RebalanceRow> = self.measured_rebalances().collect();
        let (reb_p50, reb_max) = rebalance_stats(&measured_rebalances);
        let moved: u64 = rows.iter().map(|r| r.moves).sum();
        SummaryRow {
            scenario: self.labels.scenario.clone(),
            protocol: self.labels.protocol.clone(),
            assignor: self.labels.assignor.clone(),
            static_membership: self.labels.static_membership,
            seed: self.labels.seed,
            duration_s: self.labels.duration.as_secs_f64(),
            partitions: self.parts.len() as u32,
            records_produced: produced,
            records_processed: processed,
            records_reprocessed: reprocessed,
            records_lost: lost,
            final_lag,
            downtime_partition_s: downtime,
            downtime_episode_ms_p50: episodes.0,
            downtime_episode_ms_p99: episodes.1,
            downtime_episode_ms_max: episodes.2,
            stop_the_world_s: folded.stop_the_world.as_secs_f64(),
            rebalances: measured_rebalances.len() as u64,
            rebalance_ms_p50: reb_p50,
            rebalance_ms_max: reb_max,
            partitions_moved: moved,
            e2e_latency_ms_p50: quantile_ms(self.e2e.histogram(), 0.5, self.e2e.max_us()),
            e2e_latency_ms_p99: quantile_ms(self.e2e.histogram(), 0.99, self.e2e.max_us()),
            e2e_latency_ms_max: self.e2e.max_us() as f64 / 1_000.0,
            events,
            measure_from_s: self.labels.measure_from.as_secs_f64(),
            startup_downtime_partition_s: 0.0,
            startup_stop_the_world_s: 0.0,
            startup_rebalances: 0,
        }
    }

    /// The rebalances that start inside the measurement window (`rebalances.csv` lists every
    /// one: those of the start-up have `start_s` before `measure_from`).
    fn measured_rebalances(&self) -> impl Iterator<Item = &RebalanceRow> {
        let from_s = self.labels.measure_from.as_secs_f64();
        self.rebalances.iter().filter(move |r| r.start_s >= from_s)
    }

    /// The start-up's figures (before `measure_from`), reported beside the window's.
    fn add_startup(&self, summary: &mut SummaryRow, folded: &Folded) {
        let Some((downtime, stop_the_world)) = folded.startup else { return };
        summary.startup_downtime_partition_s = downtime.as_secs_f64();
        summary.startup_stop_the_world_s = stop_the_world.as_secs_f64();
        summary.startup_rebalances =
            self.rebalances.len() as u64 - self.measured_rebalances().count() as u64;
    }

    /// Unprocessed offsets above the skip point, counted independently of `lost`.
    fn final_lag(&self) -> u64 {
        self.parts
            .iter()
            .map(|(tp, p)| {
                let c = self.counts(tp);
                let from = c.skip_to.min(p.produced);
                (p.produced - from) - c.processed.count_in(from, p.produced)
            })
            .sum()
    }

    /// Closes every partition's timeline at `end`: the source of their rows, in partition
    /// order (`timeline.rs`).
    fn close_timelines(&mut self, end: SimTime) -> MergeSource {
        for part in self.parts.values_mut() {
            part.close_interval(end, &mut self.timelines);
            self.timelines.close(part.timeline, &part.open);
        }
        std::mem::take(&mut self.timelines).into_merge_source()
    }

    /// The report's log of every partition's rows and the owner names: `rows`
    /// (`(topic, partition, rows)`, in partition order) when nothing was spilled, else the
    /// spilled `source`, read again by each reader of the log.
    fn take_ownership(
        &mut self,
        source: MergeSource,
        rows: Option<Vec<(u32, u32, Vec<OwnershipInterval>)>>,
    ) -> OwnershipLog {
        let labels = (
            self.labels.protocol.clone(),
            self.labels.assignor.clone(),
            self.labels.static_membership,
        );
        let owners = self.take_owner_names();
        match rows {
            Some(rows) => OwnershipLog::from_collected(labels, self.topics.clone(), owners, rows),
            None => OwnershipLog::from_spilled(labels, self.topics.clone(), owners, source),
        }
    }

    fn timeline_rows(&self, down_counts: &[u32]) -> Vec<TimelineRow> {
        self.samples
            .iter()
            .zip(down_counts)
            .map(|(sample, &down_partitions)| TimelineRow {
                protocol: self.labels.protocol.clone(),
                assignor: self.labels.assignor.clone(),
                static_membership: self.labels.static_membership,
                t_s: sample.at.as_secs_f64(),
                lag: sample.lag,
                down_partitions,
                members: sample.members,
            })
            .collect()
    }
}

/// What the end of a run folds from every partition's timeline (`Collector::fold_timelines`).
struct Folded {
    /// Per partition (in the order of `parts`): downtime and episodes in the measurement
    /// window.
    parts: Vec<(SimTime, u64)>,
    /// The measured episodes' durations.
    episodes: EpisodeHistogram,
    /// The start-up's downtime and stop-the-world time, when there is a start-up.
    startup: Option<(SimTime, SimTime)>,
    /// The measured stop-the-world time.
    stop_the_world: SimTime,
    /// Down partitions at each sample.
    down_counts: Vec<u32>,
    /// Every partition's rows, when nothing was spilled.
    rows: Option<Vec<(u32, u32, Vec<OwnershipInterval>)>>,
}

impl Observer for Collector {
    fn observe_periodic(&mut self, s: PeriodicStretch<'_>) {
        self.on_processed_periodic(s.tp, (s.first, s.count), s.latencies, s.start)
    }

    fn observe_processed(&mut self, tp: Tp, first: u64, times: &RecordTimes) {
        self.on_processed(tp, first, times)
    }

    fn observe_processed_listed(
        &mut self,
        tp: Tp,
        first: u64,
        arrivals: &[SimTime],
        ends: &[SimTime],
    ) {
        self.on_processed_listed(tp, first, arrivals, ends)
    }

    fn latency_counter(&self) -> Option<CountLatencies> {
        Some(|counts, arrivals, ends| counts.count_listed(arrivals, ends, class_of))
    }

    fn observe_processed_counted(
        &mut self,
        tp: Tp,
        first: u64,
        times: (&[SimTime], &[SimTime]),
        max_us: u64,
        counted: &mut LatencyCounts,
    ) {
        self.on_processed_counted((tp, first), times, max_us, counted)
    }

    fn observe_counted_latencies(&mut self, counted: &mut LatencyCounts) {
        self.e2e.add_counts(counted);
    }

    fn observe_access(&mut self, access: AccessRef<'_>) {
        let AccessRef { at, tp, owner, state, waiting_from } = access;
        self.on_access(at, tp, owner, state, waiting_from)
    }

    fn observe(&mut self, observation: Observation) {
        match observation {
            Observation::Topics { names, partitions } => {
                for (topic, count) in (0u32..).zip(partitions) {
                    self.reserve(topic, count);
                }
                self.topics = names;
            }
            Observation::PartitionsAdded { topic, partitions, .. } => {
                self.reserve(topic, partitions)
            }
            Observation::Processed { tp, first, times } => self.on_processed(tp, first, &times),
            Observation::ProcessedPeriodic { tp, first, arrivals, ends, start, count, .. } => {
                let latencies: Vec<SimTime> =
                    arrivals.iter().zip(ends.iter()).map(|(a, e)| e.saturating_sub(*a)).collect();
                self.on_processed_periodic(tp, (first, count), &latencies, start)
            }
            Observation::Skip { tp, at_offset } => {
                assert!(self.parts.get(tp).is_some(), "skip on a known partition {tp:?}");
                let part = &mut self.counts[tp.topic as usize][tp.partition as usize];
                let before = part.lost();
                part.skip_to = part.skip_to.max(at_offset);
                self.done.lost += part.lost() - before; // Skipping further loses more.
            }
            Observation::Access { at, tp, owner, state, waiting_from } => {
                self.on_access(at, tp, owner.as_ref().map(|m| (m.id, &m.name)), state, waiting_from)
            }
            Observation::RebalanceStarted { at, trigger } => {
                self.open = Some(OpenRebalance { trigger, start: at, moves: 0 });
            }
            Observation::RebalanceEnded { at, rounds, members } => {
                self.on_rebalance_end(at, rounds, members)
            }
            Observation::Commit { ok, .. } => self.commits_failed += u64::from(!ok),
            Observation::MaxPollExpired { .. } | Observation::MemberState { .. } => {}
            Observation::Sample { at, produced, members, unreported } => {
                self.on_sample(at, produced.saturating_sub(unreported), members)
            }
            Observation::End { at, produced, events } => {
                for (tp, n) in produced {
                    part_in(&mut self.parts, &mut self.timelines, tp, at).produced = n;
                }
                self.end = Some((at, events));
            }
        }
    }
}

/// Down episodes' durations in microseconds: an hdrhistogram (3 significant digits) and the
/// exact max.
struct EpisodeHistogram {
    histogram: Histogram<u64>,
    max_us: u64,
}

impl Default for EpisodeHistogram {
    fn default() -> EpisodeHistogram {
        EpisodeHistogram { histogram: Histogram::new(3).expect("3 significant digits"), max_us: 0 }
    }
}

impl EpisodeHistogram {
    /// Records the episodes `[s, e)`.
    fn add(&mut self, episodes: &[(SimTime, SimTime)]) {
        for &(s, e) in episodes {
            let us = (e - s).as_nanos() / 1_000;
            self.histogram.record(us).expect("auto-resizing histogram");
            self.max_us = self.max_us.max(us);
        }
    }

    /// (p50, p99, max) in ms; p50/p99 never above the exact max.
    fn quantiles(&self) -> (f64, f64, f64) {
        let (h, max_us) = (&self.histogram, self.max_us);
        (quantile_ms(h, 0.5, max_us), quantile_ms(h, 0.99, max_us), max_us as f64 / 1_000.0)
    }
}

/// The metrics of `tp` in `parts`, made (with a timeline starting at `at`) if it has none yet.
fn part_in<'a>(
    parts: &'a mut TpTable<PartMetrics>,
    timelines: &mut Timelines,
    tp: Tp,
    at: SimTime,
) -> &'a mut PartMetrics {
    parts.get_or_insert_with(tp, || PartMetrics::new(at, timelines.add(tp, at)))
}

/// Conservation for one partition: every processed or skipped offset was produced.
fn check_partition_conservation(topics: &[String], tp: Tp, p: &PartMetrics, c: &PartCounts) {
    let name = &topics[tp.topic as usize];
    assert!(
        c.processed.max_end() <= p.produced,
        "conservation: {name}-{} processed offset {} but only {} produced",
        tp.partition,
        c.processed.max_end().saturating_sub(1),
        p.produced
    );
    assert!(
        c.skip_to <= p.produced,
        "conservation: {name}-{} skipped to {} but only {} produced",
        tp.partition,
        c.skip_to,
        p.produced
    );
    assert!(
        c.deliveries >= c.processed.len(),
        "conservation: {name}-{} deliveries {} < unique {}",
        tp.partition,
        c.deliveries,
        c.processed.len()
    );
}

/// Records the latencies of the pattern's records at relative offsets `lo..hi` (offset `o`
/// has `latencies[o % n]`): per pattern record one `record_n` of its count, the whole copies
/// of the pattern plus one if it falls in the rest (the `(hi - lo) % n` offsets from `lo % n`
/// on, wrapping once). Two divisions, not one per record; no count of 0 is recorded (it
/// would raise the maximum).
fn record_pattern_stretch(e2e: &mut LatencyHistogram, latencies: &[SimTime], lo: u64, hi: u64) {
    let n = latencies.len() as u64;
    let (whole, rest, from) = ((hi - lo) / n, (hi - lo) % n, lo % n);
    for (i, latency) in (0..n).zip(latencies) {
        let after_from = if i >= from { i - from } else { i + n - from };
        let count = whole + u64::from(after_from < rest);
        if count > 0 {
            e2e.record_n(latency.as_nanos() / 1_000, count);
        }
    }
}

/// [`record_latencies`] of the listed records `range` (indices into both lists).
fn record_listed_range(
    e2e: &mut LatencyHistogram,
    (arrivals, ends): (&[SimTime], &[SimTime]),
    range: Range<u64>,
) {
    let range = range.start as usize..range.end as usize;
    record_latencies(e2e, arrivals[range.clone()].iter().copied().zip(ends[range].iter().copied()))
}

/// Records `ends[i] - arrivals[i]` (in microseconds) of every record, one `record_n` per run
/// of equal values.
fn record_latencies(e2e: &mut LatencyHistogram, records: impl Iterator<Item = (SimTime, SimTime)>) {
    let mut run: Option<(u64, u64)> = None;
    for (arrival, end) in records {
        let us = latency_us(arrival, end);
        run = match run {
            Some((value, count)) if value == us => Some((value, count + 1)),
            Some((value, count)) => {
                e2e.record_n(value, count);
                Some((us, 1))
            }
            None => Some((us, 1)),
        };
    }
    if let Some((value, count)) = run {
        e2e.record_n(value, count);
    }
}

fn quantile_ms(h: &Histogram<u64>, q: f64, max_us: u64) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    h.value_at_quantile(q).min(max_us) as f64 / 1_000.0
}

/// (median by nearest rank, max) of rebalance durations in ms.
fn rebalance_stats(rows: &[&RebalanceRow]) -> (f64, f64) {
    if rows.is_empty() {
        return (0.0, 0.0);
    }
    let mut d: Vec<f64> = rows.iter().map(|r| r.duration_ms).collect();
    d.sort_by(f64::total_cmp);
    let rank = (d.len() as f64 * 0.5).ceil() as usize;
    (d[rank.max(1) - 1], d[d.len() - 1])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use model::MemberRef;

    /// `ms` milliseconds.
    pub(crate) fn s(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    /// Partition `partition` of topic 0.
    pub(crate) fn tp(partition: u32) -> Tp {
        Tp { topic: 0, partition }
    }

    /// A member reference with the same id for every name: the collector must still tell
    /// the names apart (it compares the name kept for an id).
    fn member(name: &str) -> MemberRef {
        MemberRef { id: 0, name: name.into() }
    }

    fn access(
        at: u64,
        p: u32,
        owner: Option<&str>,
        state: PartState,
        waiting_ms: u64,
    ) -> Observation {
        Observation::Access {
            at: s(at),
            tp: tp(p),
            owner: owner.map(member),
            state,
            waiting_from: s(waiting_ms),
        }
    }

    fn labels(duration_ms: u64) -> RunLabels {
        RunLabels {
            scenario: "s".into(),
            protocol: "eager".into(),
            assignor: "range".into(),
            static_membership: false,
            seed: 1,
            duration: s(duration_ms),
            measure_from: SimTime::ZERO,
        }
    }

    /// A collector of a run of one topic with one partition, owned by `a` from t = 0.
    fn consuming_partition(duration_ms: u64) -> Collector {
        let mut c = Collector::new(labels(duration_ms));
        c.observe(Observation::Topics { names: vec!["t".into()], partitions: vec![1] });
        c.observe(access(0, 0, Some("a"), PartState::Consuming, 0));
        c
    }

    fn processed(p: u32, first: u64, n: u64, arrival_ms: u64, end_ms: u64) -> Observation {
        let times =
            RecordTimes::listed(vec![s(arrival_ms); n as usize], vec![s(end_ms); n as usize]);
        Observation::Processed { tp: tp(p), first, times }
    }

    /// Two partitions over 10 s, folded by hand.
    #[test]
    fn folds_a_hand_made_run() {
        let mut c = Collector::new(labels(10_000));
        let obs = vec![
            Observation::Topics { names: vec!["t".into()], partitions: vec![2] },
            access(0, 0, None, PartState::Unassigned, 500),
            access(0, 1, None, PartState::Unassigned, 500),
            // Both assigned at 1 s: down 0.5..1 s each (records waiting from 0.5 s).
            access(1_000, 0, Some("a"), PartState::Consuming, 500),
            access(1_000, 1, Some("b"), PartState::Consuming, 500),
            Observation::Skip { tp: tp(0), at_offset: 3 },
            Observation::Skip { tp: tp(1), at_offset: 0 },
            processed(0, 3, 7, 1_000, 1_010),
            processed(1, 0, 10, 1_000, 1_020),
            // b dies at 4 s; its records wait from 4.5 s; a takes p1 at 6 s and restarts at
            // offset 5: offsets 5..10 again.
            access(4_000, 1, Some("b"), PartState::OwnerDead, 4_500),
            access(6_000, 1, Some("a"), PartState::Consuming, 4_500),
            Observation::Skip { tp: tp(1), at_offset: 5 },
            processed(1, 5, 5, 1_000, 6_010),
            Observation::End {
                at: s(10_000),
                produced: vec![(tp(0), 12), (tp(1), 10)],
                events: 42,
            },
        ];
        for o in obs {
            c.observe(o);
        }
        let r = c.finish();
        let sum = r.summary.unwrap();
        // p0: 12 produced, offsets 0..3 skipped (lost 3), 3..10 processed, 10..12 lag.
        // p1: 10 produced, 0..10 processed, 5..10 twice.
        assert_eq!(sum.records_produced, 22);
        assert_eq!((sum.records_lost, sum.final_lag), (3, 2));
        assert_eq!((sum.records_processed, sum.records_reprocessed), (22, 5));
        // Down: 0.5 s + 0.5 s at the start, 1.5 s for p1 (4.5..6 s): 2.5 s in 3 episodes.
        assert!((sum.downtime_partition_s - 2.5).abs() < 1e-9);
        assert_eq!(r.partitions[1].episodes, 2);
        assert!((sum.downtime_episode_ms_max - 1500.0).abs() < 1e-9);
        // Stop-the-world only at the start (0.5..1 s): p0 is consumable during p1's outage.
        assert!((sum.stop_the_world_s - 0.5).abs() < 1e-9);
        // p1 moved from b to a; the first assignments are no moves.
        assert_eq!(sum.partitions_moved, 1);
        // First deliveries: 7 at 10 ms, 10 at 20 ms; max latency 20 ms.
        assert!((sum.e2e_latency_ms_max - 20.0).abs() < 1e-9);
        assert_eq!(sum.events, 42);
        // Ownership of p1: idle, unassigned, consuming (b), idle (b), owner-dead (b), consuming (a).
        let states: Vec<(String, String)> = r
            .ownership
            .iter()
            .filter(|o| o.partition == 1)
            .map(|o| (o.owner.to_string(), o.state.to_string()))
            .collect();
        let expected = [
            ("", "idle"),
            ("", "unassigned"),
            ("b", "consuming"),
            ("b", "idle"),
            ("b", "owner-dead"),
            ("a", "consuming"),
        ];
        let expected: Vec<(String, String)> =
            expected.iter().map(|(o, st)| (o.to_string(), st.to_string())).collect();
        assert_eq!(states, expected);
    }

    /// Times lent as two lists (`observe_processed_listed`, a shared-out catch-up's held
    /// reports) fold as the same times observed in a `Processed`: offsets 0..4 with latencies
    /// 5, 6, 7, 8 ms, then 2..6 again with 18 ms (8 deliveries; 2..4 processed twice, their
    /// latencies not counted again).
    #[test]
    fn lent_lists_fold_as_an_observed_report() {
        let ms = |v: &[u64]| v.iter().map(|&m| s(m)).collect::<Vec<_>>();
        let deliveries = [
            (0, ms(&[0, 1, 2, 3]), ms(&[5, 7, 9, 11])),
            (2, ms(&[2, 3, 4, 5]), ms(&[20, 21, 22, 23])),
        ];
        let end = Observation::End { at: s(10_000), produced: vec![(tp(0), 6)], events: 1 };
        let mut lent = consuming_partition(10_000);
        let mut owned = consuming_partition(10_000);
        for (first, arrivals, ends) in &deliveries {
            lent.observe_processed_listed(tp(0), *first, arrivals, ends);
            let times = RecordTimes::listed(arrivals.clone(), ends.clone());
            owned.observe(Observation::Processed { tp: tp(0), first: *first, times });
        }
        lent.observe(end.clone());
        owned.observe(end);
        let (lent, owned) = (lent.finish().summary.unwrap(), owned.finish().summary.unwrap());
        assert_eq!((lent.records_processed, lent.records_reprocessed), (8, 2));
        assert!((lent.e2e_latency_ms_max - 18.0).abs() < 1e-9, "{}", lent.e2e_latency_ms_max);
        // The median's class holds 7 ms (3 significant digits: 7.000..7.003).
        assert!((lent.e2e_latency_ms_p50 - 7.0).abs() < 0.005, "{}", lent.e2e_latency_ms_p50);
        assert_eq!(lent, owned);
    }

    /// Repeated `Access` observations of the same owner and state make one ownership row and
    /// one allowed piece; down pieces of two causes back to back make one down piece (one
    /// episode) but two rows.
    #[test]
    fn adjacent_intervals_are_merged() {
        let mut c = consuming_partition(10_000);
        c.observe(access(1_000, 0, Some("a"), PartState::Consuming, 0));
        c.observe(access(2_000, 0, Some("a"), PartState::Consuming, 0));
        c.observe(access(3_000, 0, None, PartState::StopTheWorld, 0));
        c.observe(access(4_000, 0, None, PartState::Unassigned, 0));
        c.observe(access(6_000, 0, Some("b"), PartState::Consuming, 0));
        c.observe(Observation::End { at: s(10_000), produced: vec![(tp(0), 0)], events: 1 });
        let r = c.finish();
        let rows: Vec<(f64, f64, &str, &str)> =
            r.ownership.iter().map(|o| (o.start_s, o.end_s, o.owner, o.state)).collect();
        assert_eq!(
            rows,
            vec![
                (0.0, 3.0, "a", "consuming"),
                (3.0, 4.0, "", "stop-the-world"),
                (4.0, 6.0, "", "unassigned"),
                (6.0, 10.0, "b", "consuming"),
            ]
        );
        assert_eq!(r.partitions[0].episodes, 1);
        assert!((r.partitions[0].downtime_s - 3.0).abs() < 1e-12);
        let sum = r.summary.unwrap();
        assert!((sum.stop_the_world_s - 3.0).abs() < 1e-12);
        assert!((sum.downtime_episode_ms_max - 3_000.0).abs() < 1e-9);
    }

    /// Partitions appear out of order, one beyond the count given by `Topics` (added later)
    /// and one first mentioned by `End`: the rows come in (topic, partition) order, and only
    /// the partitions observed count (t0-1 never is: 3 partitions, as with a `BTreeMap`).
    #[test]
    fn partitions_are_reported_in_order_whatever_their_arrival() {
        let mut c = Collector::new(labels(1_000));
        let names = vec!["t0".into(), "t1".into()];
        c.observe(Observation::Topics { names, partitions: vec![1, 1] });
        let at = |topic, partition| Observation::Access {
            at: s(0),
            tp: Tp { topic, partition },
            owner: Some(member(&format!("m{topic}"))),
            state: PartState::Consuming,
            waiting_from: SimTime::MAX,
        };
        c.observe(at(1, 0));
        c.observe(Observation::PartitionsAdded { at: s(0), topic: 0, partitions: 3 });
        c.observe(at(0, 2));
        let produced = vec![(Tp { topic: 0, partition: 0 }, 0), (Tp { topic: 1, partition: 0 }, 0)];
        c.observe(Observation::End { at: s(1_000), produced, events: 1 });
        let r = c.finish();
        let rows: Vec<(&str, u32)> =
            r.partitions.iter().map(|p| (p.topic.as_str(), p.partition)).collect();
        assert_eq!(rows, vec![("t0", 0), ("t0", 2), ("t1", 0)]);
        assert_eq!(r.summary.expect("a summary").partitions, 3);
        // Owners are interned in order of appearance: m1 (t1-0) is owner 0, m0 owner 1; the
        // rows name them right.
        let owners: Vec<&str> = r.ownership.iter().map(|o| o.owner).collect();
        assert_eq!(owners, vec!["m0", "m1"]);
    }

    /// A partition whose offsets 0..5 were processed once (latency 50 ms), then `deliveries`,
    /// then the end (20 produced).
    fn folded_after_five(deliveries: Vec<Observation>) -> Collector {
        let mut c = consuming_partition(1_000);
        c.observe(processed(0, 0, 5, 0, 50));
        for delivery in deliveries {
            c.observe(delivery);
        }
        c.observe(Observation::End { at: s(1_000), produced: vec![(tp(0), 20)], events: 1 });
        c
    }

    /// Both collectors' latency histograms, flushed, are equal.
    fn assert_same_latencies(a: &mut Collector, b: &mut Collector) {
        a.e2e.flush();
        b.e2e.flush();
        assert_eq!(a.e2e.histogram(), b.e2e.histogram());
    }

    /// One `Processed` observation of records `first..` with these times.
    fn listed(first: u64, arrivals: Vec<SimTime>, ends: Vec<SimTime>) -> Observation {
        Observation::Processed { tp: tp(0), first, times: RecordTimes::listed(arrivals, ends) }
    }

    /// Reports counted ahead (a shared-out round: `observe_processed_counted`, then the
    /// counts) after offsets 0..5 were processed at 50 ms: offsets 5..8 at 1, 3 and 55 ms (all
    /// first-time: left to the counts, the maximum raised to 55 ms); 6..10 at 2, 2, 7 and 9 ms
    /// (6 and 7 processed before: 8 and 9 recorded as listed, all four taken back out); 0..2
    /// at 60 ms (all processed before: taken out, the maximum stays). The histogram holds 5 x
    /// 50, 1, 3, 55, 7 and 9 ms: what the same reports observed as listed give.
    #[test]
    fn reports_counted_ahead_fold_like_listed_ones() {
        let reports = [
            (5, vec![(s(100), s(101)), (s(100), s(103)), (s(100), s(155))]),
            (6, vec![(s(200), s(202)), (s(200), s(202)), (s(200), s(207)), (s(200), s(209))]),
            (0, vec![(s(300), s(360)), (s(300), s(360))]),
        ];
        let lists = |records: &Vec<(SimTime, SimTime)>| -> (Vec<SimTime>, Vec<SimTime>) {
            records.iter().copied().unzip()
        };
        let mut a = consuming_partition(1_000);
        a.observe(processed(0, 0, 5, 0, 50));
        let mut counted = LatencyCounts::default();
        let count = a.latency_counter().expect("the collector counts per class");
        for (_, records) in &reports {
            let (arrivals, ends) = lists(records);
            let max_us = records.iter().map(|(a, e)| latency_us(*a, *e)).max().unwrap_or(0);
            assert_eq!(count(&mut counted, &arrivals, &ends), max_us);
        }
        assert_eq!(counted.total(), 9);
        for (first, records) in &reports {
            let (arrivals, ends) = lists(records);
            let max_us = records.iter().map(|(a, e)| latency_us(*a, *e)).max().unwrap_or(0);
            a.observe_processed_counted(tp(0), *first, (&arrivals, &ends), max_us, &mut counted);
        }
        assert_eq!(counted.total(), 3, "the first report's records are left to the counts");
        a.observe_counted_latencies(&mut counted);
        assert_eq!(counted.total(), 0, "taken");
        let end = Observation::End { at: s(1_000), produced: vec![(tp(0), 20)], events: 1 };
        a.observe(end.clone());
        let listed_reports = reports.iter().map(|(first, records)| {
            let (arrivals, ends) = lists(records);
            listed(*first, arrivals, ends)
        });
        let mut b = folded_after_five(listed_reports.collect());
        assert_same_latencies(&mut a, &mut b);
        assert_eq!(a.e2e.max_us(), 55_000);
        assert_eq!(a.e2e.histogram().len(), 10);
        let counts: Vec<u64> = [1, 2, 3, 7, 9, 50, 60]
            .iter()
            .map(|ms| a.e2e.histogram().count_at(ms * 1_000))
            .collect();
        assert_eq!(counts, vec![1, 0, 1, 1, 1, 5, 0]);
        let (a, b) = (a.finish(), b.finish());
        assert_eq!(a, b);
        let summary = a.summary.expect("a summary");
        // Deliveries: 5 + 3 + 4 + 2; processed before: 6, 7, 0 and 1.
        assert_eq!((summary.records_processed, summary.records_reprocessed), (14, 4));
    }

    #[test]
    fn periodic_deliveries_fold_like_their_copies() {
        // A 3-record pattern (latencies 1, 2 and 4 ms), 4 copies 30 ms apart, after offsets
        // 0..5 were already processed once: the copies cover 3..15, so 3..5 are reprocessed
        // (no latency), 5..15 are new: pattern records 2,0,1,2,0,1,2,0,1,2 -> 4 x 4 ms,
        // 3 x 1 ms, 3 x 2 ms. The same fold as the 4 copies observed one by one.
        let arrivals = vec![s(100), s(110), s(120)];
        let ends = vec![s(101), s(112), s(124)];
        let mut a = folded_after_five(vec![Observation::ProcessedPeriodic {
            tp: tp(0),
            first: 3,
            arrivals: arrivals.iter().map(|t| *t - s(100)).collect(),
            ends: ends.iter().map(|t| *t - s(100)).collect(),
            start: 0,
            count: 12,
            shift: s(100),
            period: s(30),
        }]);
        let at = |v: &Vec<SimTime>, j: u64| v.iter().map(|t| *t + s(30 * j)).collect();
        let copies = (0..4u64).map(|j| listed(3 + 3 * j, at(&arrivals, j), at(&ends, j)));
        let mut b = folded_after_five(copies.collect());
        assert_same_latencies(&mut a, &mut b);
        assert_eq!(a.e2e.max_us(), 50_000); // The first delivery: 50 ms.
        assert_eq!(a.e2e.histogram().len(), 5 + 10);
        assert_eq!(a.e2e.histogram().count_at(4_000), 4);
        assert_eq!(a.e2e.histogram().count_at(1_000), 3);
        let (a, b) = (a.finish(), b.finish());
        assert_eq!(a, b);
        let summary = a.summary.expect("a summary");
        assert_eq!((summary.records_processed, summary.records_reprocessed), (17, 2));
    }

    #[test]
    fn a_stretch_from_inside_the_pattern_folds_like_its_records() {
        // The same 3-record pattern (latencies 1, 2, 4 ms, period 30 ms), a stretch of 5
        // records starting at pattern record 2 of copy 0: records 2 | 0 1 2 | 0, i.e. copy 0's
        // last record, copy 1 whole, copy 2's first, at offsets 7..12 (latencies 4, 1, 2, 4,
        // 1 ms). Offsets 0..5 were processed before, so all 5 are new.
        let arrivals = vec![s(0), s(10), s(20)];
        let ends = vec![s(1), s(12), s(24)];
        let mut a = folded_after_five(vec![Observation::ProcessedPeriodic {
            tp: tp(0),
            first: 7,
            arrivals: arrivals.clone().into(),
            ends: ends.clone().into(),
            start: 2,
            count: 5,
            shift: s(200),
            period: s(30),
        }]);
        // (pattern record, copy) of each record.
        let records = [(2usize, 0u64), (0, 1), (1, 1), (2, 1), (0, 2)];
        let one_by_one = records.into_iter().enumerate().map(|(j, (k, w))| {
            let copy = s(200 + 30 * w);
            listed(7 + j as u64, vec![arrivals[k] + copy], vec![ends[k] + copy])
        });
        let mut b = folded_after_five(one_by_one.collect());
        assert_same_latencies(&mut a, &mut b);
        assert_eq!(a.e2e.histogram().count_at(4_000), 2);
        assert_eq!(a.e2e.histogram().count_at(1_000), 2);
        assert_eq!(a.e2e.histogram().count_at(2_000), 1);
        let (a, b) = (a.finish(), b.finish());
        assert_eq!(a, b);
        // 0..5 and 7..12 processed once each: 10 records, none twice; 5..7 never (a gap).
        let summary = a.summary.expect("a summary");
        assert_eq!((summary.records_processed, summary.records_reprocessed), (10, 0));
    }

    #[test]
    #[should_panic(expected = "conservation")]
    fn processing_beyond_the_log_is_a_bug() {
        let mut c = consuming_partition(1_000);
        c.observe(processed(0, 0, 5, 0, 1));
        c.observe(Observation::End { at: s(1_000), produced: vec![(tp(0), 3)], events: 1 });
        c.finish();
    }

    /// A partition's counts fill one cache line, aligned: a field more would double the
    /// table the folds of deliveries walk.
    #[test]
    fn part_counts_are_one_cache_line() {
        assert_eq!(std::mem::size_of::<IntervalSet>(), 48);
        assert_eq!(std::mem::size_of::<PartCounts>(), 64);
        assert_eq!(std::mem::align_of::<PartCounts>(), 64);
    }

    /// A partition's other metrics fill one cache line too (an `Access` report touches it
    /// and the end of the list of closed intervals), also as the `Option` its table holds.
    #[test]
    fn part_metrics_are_one_cache_line() {
        assert_eq!(std::mem::size_of::<PartMetrics>(), 64);
        assert_eq!(std::mem::size_of::<Option<PartMetrics>>(), 64);
        assert_eq!(std::mem::align_of::<PartMetrics>(), 64);
    }

    proptest::proptest! {
        /// A stretch of a pattern, recorded per pattern record, gives the histogram and the
        /// maximum that recording each record of it gives (some latencies repeat, some are
        /// far apart, so classes are shared and the maximum is the largest one recorded).
        #[test]
        fn a_pattern_stretch_records_what_its_records_do(
            us in proptest::collection::vec(proptest::sample::select(vec![0u64, 7, 7, 900, 2_500, 1 << 33]), 1..12),
            lo in 0u64..100,
            len in 0u64..60,
        ) {
            let latencies: Vec<SimTime> = us.iter().map(|u| SimTime::from_micros(*u)).collect();
            let mut stretch = LatencyHistogram::new();
            record_pattern_stretch(&mut stretch, &latencies, lo, lo + len);
            let mut one_by_one = LatencyHistogram::new();
            for o in lo..lo + len {
                one_by_one.record_n(us[(o % us.len() as u64) as usize], 1);
            }
            stretch.flush();
            one_by_one.flush();
            proptest::prop_assert_eq!(stretch.max_us(), one_by_one.max_us());
            proptest::prop_assert!(stretch.histogram() == one_by_one.histogram());
        }
    }
}
