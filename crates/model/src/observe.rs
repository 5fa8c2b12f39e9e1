//! Observations: the facts the model reports while it runs. The model computes no
//! statistics; `crates/metrics` folds these into the numbers of DESIGN section 5.
//!
//! The contract (what an observer may rely on):
//! - `Topics` comes first and `End` last, once each.
//! - Observations that carry a time (`at`) come in order of that time: access changes,
//!   rebalances, commits, max-poll expiries, member states, samples, partitions added.
//! - Processed records do **not** come in time order. A batch's records may be reported when
//!   the batch starts (their ends lie ahead) or, under fast stepping, when a steady member is
//!   caught up, later than observations of other partitions and of the same partition (a
//!   revoked member's last batch may come after the new owner's `Skip` and `Access`). Two
//!   members may process one partition at once (a member that resumes from a pause finishes
//!   its batch), so records of one partition need not come in offset or end order either. A
//!   record processed twice (a redelivery) is reported twice.
//! - A `Sample` counts the records reported before it plus its `unreported` (first processed
//!   by its time, reported later): that sum, not the records seen so far, is the number
//!   processed at the sample.
//! - Processed records come in three encodings that mean the same thing, records one by one:
//!   `Processed` with [`RecordTimes`] listed or linear (two progressions), and
//!   `ProcessedPeriodic` (a repeating pattern: [`Observer::observe_periodic`] lends it as a
//!   [`PeriodicStretch`]). An observer folds all three, or wraps itself in
//!   [`RecordByRecord`], which expands them into one call per record.
//! - `Skip` carries no time: it happens at the time of the observation before it.
//! - Under both steppings (`crate::Stepping`) the same facts are reported, up to this order
//!   and the `End`'s event count (`lab::divergence` compares them in that normalised form).

use crate::latency_counts::{CountLatencies, LatencyCounts};
use crate::records::RecordTimes;
use crate::types::Tp;
use sim_core::SimTime;
use std::sync::Arc;

/// Whether a partition may be consumed, and if not, why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PartState {
    /// A live, reachable member owns it.
    Consuming,
    /// No member owns it (never assigned, owner left or was removed).
    Unassigned,
    /// Revoked by a cooperative rebalance, not yet reassigned.
    Revoked,
    /// Revoked by an eager rebalance: the group stops the world.
    StopTheWorld,
    /// Its owner crashed and was not yet evicted.
    OwnerDead,
    /// Its owner is frozen (pause) and was not yet evicted.
    OwnerPaused,
    /// Its owner cannot reach the brokers and was not yet evicted.
    OwnerDisconnected,
}

impl PartState {
    /// The `ownership.csv` state name.
    pub fn name(self) -> &'static str {
        match self {
            PartState::Consuming => "consuming",
            PartState::Unassigned => "unassigned",
            PartState::Revoked => "revoked",
            PartState::StopTheWorld => "stop-the-world",
            PartState::OwnerDead => "owner-dead",
            PartState::OwnerPaused => "owner-paused",
            PartState::OwnerDisconnected => "owner-disconnected",
        }
    }
}

/// What a member's process is doing ([`Observation::MemberState`]): its place in its group
/// protocol, or a state of the process that overrides it. When several hold, the first of
/// these wins: dead or closed, paused, disconnected, stalled, closing, then the protocol's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MemberState {
    /// In no group (TubeMQ, manual assignment): the process runs.
    Running,
    /// In no generation and no join in flight: it (re)joins at its next poll (after its
    /// `max.poll.interval.ms` expired, a fence, or an error that reset it).
    Unjoined,
    /// Its JoinGroup (classic) or joining heartbeat (KIP-848, epoch 0) is sent, and no
    /// response handled yet (a Java member busy with a batch handles it at its next poll).
    Joining,
    /// Its SyncGroup is sent (classic): it waits for its assignment.
    Syncing,
    /// In a generation (classic: its SyncGroup answered, the assignment taking effect at its
    /// next poll; KIP-848: it has a member epoch).
    Consuming,
    /// A graceful close began: it finishes its batch (or its commit), then commits, revokes
    /// and leaves.
    Closing,
    /// A processing stall: its batch takes longer by the stall's duration (heartbeats go on).
    Stalled,
    /// Cut off from the coordinator and the brokers.
    Disconnected,
    /// The whole process is frozen (no heartbeats, no polls).
    Paused,
    /// The process crashed (no commit, no leave).
    Dead,
    /// The process closed gracefully.
    Closed,
}

impl MemberState {
    /// The name a trace shows.
    pub fn name(self) -> &'static str {
        match self {
            MemberState::Running => "running",
            MemberState::Unjoined => "unjoined",
            MemberState::Joining => "joining",
            MemberState::Syncing => "syncing",
            MemberState::Consuming => "consuming",
            MemberState::Closing => "closing",
            MemberState::Stalled => "stalled",
            MemberState::Disconnected => "disconnected",
            MemberState::Paused => "paused",
            MemberState::Dead => "dead",
            MemberState::Closed => "closed",
        }
    }
}

/// A member named by an observation: `id` is small and fixed for the run (the world's slot of
/// the member; one name per id), so an observer can keep what it derives from the name by
/// id; `name` is shared, not copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberRef {
    /// The member's slot.
    pub id: u32,
    /// Its name.
    pub name: Arc<str>,
}

/// [`Observation::Access`], its owner's name lent (see [`Observer::observe_access`]).
#[derive(Clone, Copy, Debug)]
pub struct AccessRef<'a> {
    /// When.
    pub at: SimTime,
    /// Partition.
    pub tp: Tp,
    /// Owner (slot and name), if any (as in [`Observation::Access`]).
    pub owner: Option<(u32, &'a Arc<str>)>,
    /// The new state.
    pub state: PartState,
    /// Arrival time of the first unprocessed record (`SimTime::MAX` if none ever).
    pub waiting_from: SimTime,
}

impl AccessRef<'_> {
    /// The observation it stands for.
    pub fn to_observation(&self) -> Observation {
        let owner = self.owner.map(|(id, name)| MemberRef { id, name: Arc::clone(name) });
        let AccessRef { at, tp, state, waiting_from, .. } = *self;
        Observation::Access { at, tp, owner, state, waiting_from }
    }
}

/// One fact reported by the model.
#[derive(Clone, Debug, PartialEq)]
pub enum Observation {
    /// At the start: the topics (sorted by name; `Tp::topic` indexes them).
    Topics {
        /// Names.
        names: Vec<String>,
        /// Partition counts.
        partitions: Vec<u32>,
    },
    /// A topic grew to `partitions` partitions at `at`.
    PartitionsAdded {
        /// When.
        at: SimTime,
        /// Topic index.
        topic: u32,
        /// The new count.
        partitions: u32,
    },
    /// Records `first..first + times.len()` of `tp` were processed (a delivery each).
    Processed {
        /// Partition.
        tp: Tp,
        /// First offset.
        first: u64,
        /// Arrival and end of processing of each record.
        times: RecordTimes,
    },
    /// Records processed in a repeating pattern (fast stepping's periodic jump): the `count`
    /// records `first..first + count`. The pattern's `n = ends.len()` records repeat period
    /// after period; record `j` (offset `first + j`) is pattern record `k = (start + j) % n`
    /// of copy `w = (start + j) / n`, with arrival `arrivals[k] + shift + w x period` and end
    /// `ends[k] + shift + w x period`. The same as `Processed` observations of those records.
    /// (The pattern is shared, not copied, by the jumps that repeat it.)
    ProcessedPeriodic {
        /// Partition.
        tp: Tp,
        /// Offset of the first record.
        first: u64,
        /// Arrival time of each record of the pattern (copy 0: plus `shift`).
        arrivals: Arc<[SimTime]>,
        /// End of processing of each record of the pattern (copy 0: plus `shift`).
        ends: Arc<[SimTime]>,
        /// The pattern record the first record is (`< n`).
        start: u64,
        /// Records (at least 1).
        count: u64,
        /// The time from the pattern to copy 0.
        shift: SimTime,
        /// The time shift from one copy to the next.
        period: SimTime,
    },
    /// A new owner starts reading `tp` at offset `at_offset` (committed offset or reset): every
    /// offset below it that is never processed was skipped.
    Skip {
        /// Partition.
        tp: Tp,
        /// First offset that will be read.
        at_offset: u64,
    },
    /// The owner or the state of `tp` changed at `at`.
    Access {
        /// When.
        at: SimTime,
        /// Partition.
        tp: Tp,
        /// Owner (for down states: the owner that cannot consume), if any.
        owner: Option<MemberRef>,
        /// The new state.
        state: PartState,
        /// Arrival time of the first unprocessed record (`SimTime::MAX` if none ever).
        waiting_from: SimTime,
    },
    /// The coordinator triggered a (logical) rebalance.
    RebalanceStarted {
        /// When.
        at: SimTime,
        /// join, leave, session-expiry, max-poll-leave, rejoin, partitions-added, ...
        trigger: String,
    },
    /// Every member has the assignment of the rebalance's last round.
    RebalanceEnded {
        /// When.
        at: SimTime,
        /// Join/sync rounds.
        rounds: u32,
        /// Members in the group.
        members: u32,
    },
    /// A member's commit was stored or refused.
    Commit {
        /// When.
        at: SimTime,
        /// Member name (shared with the world, not copied: commits are frequent).
        member: Arc<str>,
        /// Stored?
        ok: bool,
    },
    /// A member's `max.poll.interval.ms` expired.
    MaxPollExpired {
        /// When.
        at: SimTime,
        /// Member name.
        member: String,
    },
    /// The state of a member's incarnation changed (reported only on a change, and once
    /// when an incarnation starts).
    MemberState {
        /// When.
        at: SimTime,
        /// The member.
        member: MemberRef,
        /// Its incarnation (1 for the first start, one more at each restart).
        incarnation: u32,
        /// The new state.
        state: MemberState,
    },
    /// A periodic sample.
    Sample {
        /// When.
        at: SimTime,
        /// Records produced so far, all partitions.
        produced: u64,
        /// Members in the group.
        members: u32,
        /// Records first processed by now whose `Processed` observations come later (fast
        /// stepping counts a steady member's records without running its steps yet): they
        /// count as processed in this sample.
        unreported: u64,
    },
    /// The run ended.
    End {
        /// The end time.
        at: SimTime,
        /// Records produced per partition, by topic then partition.
        produced: Vec<(Tp, u64)>,
        /// Simulation events handled.
        events: u64,
    },
}

/// A [`Observation::ProcessedPeriodic`] whose pattern is lent, not shared: what a jump
/// reports for each partition (lending spares the reference counts of two `Arc`s per
/// partition and jump).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PeriodicStretch<'a> {
    /// Partition.
    pub tp: Tp,
    /// Offset of the first record.
    pub first: u64,
    /// Arrival time of each record of the pattern (copy 0: plus `shift`).
    pub arrivals: &'a [SimTime],
    /// End of processing of each record of the pattern (copy 0: plus `shift`).
    pub ends: &'a [SimTime],
    /// The latency of each record of the pattern, `ends[k] - arrivals[k]` (zero if negative),
    /// the same in every copy (computed once per pattern, not at each stretch).
    pub latencies: &'a [SimTime],
    /// The pattern record the first record is (`< n`).
    pub start: u64,
    /// Records (at least 1).
    pub count: u64,
    /// The time from the pattern to copy 0.
    pub shift: SimTime,
    /// The time shift from one copy to the next.
    pub period: SimTime,
}

impl PeriodicStretch<'_> {
    /// `(arrival, end)` of each record of the stretch, in offset order: record `j` is pattern
    /// record `k = (start + j) % n` of copy `w = (start + j) / n`, at
    /// `pattern[k] + shift + w x period` (`Observation::ProcessedPeriodic`).
    pub fn times(&self) -> impl Iterator<Item = (SimTime, SimTime)> + '_ {
        let n = self.ends.len() as u64;
        (self.start..self.start + self.count).map(move |i| {
            let (k, w) = ((i % n) as usize, i / n);
            let offset = self.shift + SimTime::from_nanos(self.period.as_nanos() * w);
            (self.arrivals[k] + offset, self.ends[k] + offset)
        })
    }

    /// The same stretch as an owned observation (the pattern copied).
    pub fn to_observation(&self) -> Observation {
        Observation::ProcessedPeriodic {
            tp: self.tp,
            first: self.first,
            arrivals: Arc::from(self.arrivals),
            ends: Arc::from(self.ends),
            start: self.start,
            count: self.count,
            shift: self.shift,
            period: self.period,
        }
    }
}

/// Receives the observations of a run, in the order the module doc describes.
pub trait Observer {
    /// One observation.
    fn observe(&mut self, observation: Observation);

    /// A stretch of a repeating pattern, its pattern lent. The default observes
    /// [`PeriodicStretch::to_observation`] (a copy of the pattern); an observer that folds the
    /// stretch at once overrides it and copies nothing.
    fn observe_periodic(&mut self, stretch: PeriodicStretch<'_>) {
        self.observe(stretch.to_observation());
    }

    /// [`Observation::Processed`], the most frequent observation (a part of every batch),
    /// its times lent: the default observes a copy; an observer may read them in place.
    fn observe_processed(&mut self, tp: Tp, first: u64, times: &RecordTimes) {
        self.observe(Observation::Processed { tp, first, times: times.clone() });
    }

    /// [`Observer::observe_processed`] of listed times lent as two lists of equal length
    /// (the reports a shared-out catch-up held, `world/stepper/parallel.rs`): the default
    /// observes a copy as [`RecordTimes::Listed`]; an observer that reads them in place
    /// overrides it, and the calling thread copies nothing.
    fn observe_processed_listed(
        &mut self,
        tp: Tp,
        first: u64,
        arrivals: &[SimTime],
        ends: &[SimTime],
    ) {
        let times = RecordTimes::listed(arrivals.to_vec(), ends.to_vec());
        self.observe_processed(tp, first, &times);
    }

    /// How this observer counts a report's records per class of their latency
    /// ([`crate::latency_us`], [`CountLatencies`]), if it keeps its latencies as counts per
    /// class: a shared-out round then counts its reports' records ahead, on its threads
    /// ([`Observer::observe_processed_counted`]). `None`, the default: nothing is counted
    /// ahead, and those reports come as [`Observer::observe_processed_listed`].
    fn latency_counter(&self) -> Option<CountLatencies> {
        None
    }

    /// [`Observer::observe_processed_listed`] of records counted ahead: each record's latency
    /// class ([`Observer::latency_counter`]) is counted in `counted`, and `max_us` is the
    /// largest of their latencies. The observer may leave their latencies to `counted`, which
    /// it receives at the end of the run, before [`Observation::End`]
    /// ([`Observer::observe_counted_latencies`]; `counted` then counts the records of many
    /// rounds' reports); it then takes back out of `counted` the records it would not count
    /// (processed before). The default observes them as listed, leaving `counted` alone.
    fn observe_processed_counted(
        &mut self,
        tp: Tp,
        first: u64,
        (arrivals, ends): (&[SimTime], &[SimTime]),
        max_us: u64,
        counted: &mut LatencyCounts,
    ) {
        let _ = (max_us, counted);
        self.observe_processed_listed(tp, first, arrivals, ends);
    }

    /// The latencies counted ahead for reports given (see
    /// [`Observer::observe_processed_counted`]), to be taken: `counted` must count nothing
    /// after. Called at the end of the run, before [`Observation::End`], once for each
    /// `counted` a report was given with. The default discards them.
    fn observe_counted_latencies(&mut self, counted: &mut LatencyCounts) {
        counted.clear();
    }

    /// [`Observation::Access`] with its owner's name lent: the default observes a copy; an
    /// observer that knows the name already need not touch its count.
    fn observe_access(&mut self, access: AccessRef<'_>) {
        self.observe(access.to_observation());
    }
}

impl Observer for Vec<Observation> {
    fn observe(&mut self, observation: Observation) {
        self.push(observation);
    }
}

/// An observer that takes processed records one by one: [`RecordByRecord`] expands the three
/// encodings of processed records for it (module doc) and hands it everything else as is.
pub trait RecordObserver {
    /// One processed record of `tp`: its offset, arrival and end of processing.
    fn record(&mut self, tp: Tp, offset: u64, arrival: SimTime, end: SimTime);

    /// Consecutive records `first..` of `tp` with their `(arrival, end)`, in offset order (one
    /// run of an encoding); the default hands each to [`RecordObserver::record`].
    fn records(&mut self, tp: Tp, first: u64, times: &mut dyn Iterator<Item = (SimTime, SimTime)>) {
        for (offset, (arrival, end)) in (first..).zip(times) {
            self.record(tp, offset, arrival, end);
        }
    }

    /// Every observation but processed records (never `Processed` or `ProcessedPeriodic`).
    fn other(&mut self, observation: Observation);

    /// An access change, its owner's name lent; the default hands a copy to
    /// [`RecordObserver::other`].
    fn other_access(&mut self, access: AccessRef<'_>) {
        self.other(access.to_observation());
    }
}

impl<O: RecordObserver + ?Sized> RecordObserver for &mut O {
    fn record(&mut self, tp: Tp, offset: u64, arrival: SimTime, end: SimTime) {
        (**self).record(tp, offset, arrival, end);
    }
    fn records(&mut self, tp: Tp, first: u64, times: &mut dyn Iterator<Item = (SimTime, SimTime)>) {
        (**self).records(tp, first, times);
    }
    fn other(&mut self, observation: Observation) {
        (**self).other(observation);
    }
    fn other_access(&mut self, access: AccessRef<'_>) {
        (**self).other_access(access);
    }
}

/// The [`Observer`] that expands every encoding of processed records (listed, linear,
/// periodic) into records one by one for the [`RecordObserver`] it wraps.
pub struct RecordByRecord<O>(pub O);

impl<O: RecordObserver> Observer for RecordByRecord<O> {
    fn observe(&mut self, observation: Observation) {
        match observation {
            Observation::Processed { tp, first, times } => {
                self.observe_processed(tp, first, &times)
            }
            Observation::ProcessedPeriodic {
                tp,
                first,
                arrivals,
                ends,
                start,
                count,
                shift,
                period,
            } => {
                let stretch = PeriodicStretch {
                    tp,
                    first,
                    arrivals: &arrivals,
                    ends: &ends,
                    latencies: &[],
                    start,
                    count,
                    shift,
                    period,
                };
                self.observe_periodic(stretch);
            }
            other => self.0.other(other),
        }
    }

    fn observe_periodic(&mut self, stretch: PeriodicStretch<'_>) {
        self.0.records(stretch.tp, stretch.first, &mut stretch.times());
    }

    fn observe_processed(&mut self, tp: Tp, first: u64, times: &RecordTimes) {
        self.0.records(tp, first, &mut times.pairs(0, times.len()));
    }

    fn observe_processed_listed(
        &mut self,
        tp: Tp,
        first: u64,
        arrivals: &[SimTime],
        ends: &[SimTime],
    ) {
        self.0.records(tp, first, &mut arrivals.iter().copied().zip(ends.iter().copied()));
    }

    fn observe_access(&mut self, access: AccessRef<'_>) {
        self.0.other_access(access);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    const TP: Tp = Tp { topic: 0, partition: 1 };

    /// Every record handed on, and every other observation.
    #[derive(Default)]
    struct Seen {
        records: Vec<(Tp, u64, SimTime, SimTime)>,
        others: Vec<Observation>,
    }

    impl RecordObserver for Seen {
        fn record(&mut self, tp: Tp, offset: u64, arrival: SimTime, end: SimTime) {
            self.records.push((tp, offset, arrival, end));
        }
        fn other(&mut self, observation: Observation) {
            self.others.push(observation);
        }
    }

    #[test]
    fn the_three_record_encodings_expand_to_the_same_records() {
        // Records 10..16 arrive every 10 ms from 100 ms and end every 10 ms from 500 ms.
        let expected: Vec<(Tp, u64, SimTime, SimTime)> =
            (0..6).map(|i| (TP, 10 + i, ms(100 + 10 * i), ms(500 + 10 * i))).collect();
        let (arrivals, ends): (Vec<_>, Vec<_>) = expected.iter().map(|r| (r.2, r.3)).unzip();
        let mut listed = RecordByRecord(Seen::default());
        listed.observe_processed(TP, 10, &RecordTimes::listed(arrivals, ends));
        let mut linear = RecordByRecord(Seen::default());
        let times = RecordTimes::Linear {
            count: 6,
            arrival: ms(100),
            arrival_step: ms(10),
            end: ms(500),
            end_step: ms(10),
        };
        linear.observe(Observation::Processed { tp: TP, first: 10, times });
        // A pattern of two records (arrivals 100, 110 ms; ends 500, 510 ms) repeating every
        // 20 ms: record j is pattern record j % 2 of copy j / 2, the same progression.
        let (arrivals, ends) = ([ms(100), ms(110)], [ms(500), ms(510)]);
        let stretch = PeriodicStretch {
            tp: TP,
            first: 10,
            arrivals: &arrivals,
            ends: &ends,
            latencies: &[],
            start: 0,
            count: 6,
            shift: SimTime::ZERO,
            period: ms(20),
        };
        let mut lent = RecordByRecord(Seen::default());
        lent.observe_periodic(stretch);
        let mut owned = RecordByRecord(Seen::default());
        owned.observe(stretch.to_observation());
        for (name, seen) in
            [("listed", listed), ("linear", linear), ("lent", lent), ("owned", owned)]
        {
            assert_eq!(seen.0.records, expected, "{name}");
            assert!(seen.0.others.is_empty(), "{name}");
        }
    }

    #[test]
    fn a_periodic_stretch_starting_inside_its_pattern_shifts_its_copies() {
        // Pattern of 3: arrivals 0, 1, 2 ms, ends 5, 6, 7 ms; period 3 ms, shift 1 s; start 2:
        // record 0 is pattern record 2 of copy 0 (arrival 1 s + 2 ms), record 1 is pattern
        // record 0 of copy 1 (arrival 1 s + 0 + 3 ms).
        let (arrivals, ends) = ([ms(0), ms(1), ms(2)], [ms(5), ms(6), ms(7)]);
        let stretch = PeriodicStretch {
            tp: TP,
            first: 7,
            arrivals: &arrivals,
            ends: &ends,
            latencies: &[],
            start: 2,
            count: 3,
            shift: ms(1000),
            period: ms(3),
        };
        let expected = vec![(ms(1002), ms(1007)), (ms(1003), ms(1008)), (ms(1004), ms(1009))];
        assert_eq!(stretch.times().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn other_observations_pass_through_unchanged() {
        let mut seen = RecordByRecord(Seen::default());
        let sample = Observation::Sample { at: ms(10), produced: 9, members: 2, unreported: 5 };
        seen.observe(sample.clone());
        let name: Arc<str> = Arc::from("c0");
        let access = AccessRef {
            at: ms(11),
            tp: TP,
            owner: Some((0, &name)),
            state: PartState::Consuming,
            waiting_from: SimTime::MAX,
        };
        seen.observe_access(access);
        assert!(seen.0.records.is_empty());
        assert_eq!(seen.0.others, vec![sample, access.to_observation()]);
    }
}
