//! Observations: the facts the model reports while it runs, in time order. The model computes
//! no statistics; `crates/metrics` folds these into the numbers of DESIGN section 5.

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
        /// Member name (shared with the world: a commit is frequent, about 700,000 in the
        /// reference hour, and a copy of the name was an allocation each).
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
/// reports for each partition. Handing the pattern over as `Arc`s cost two atomic increments
/// and two decrements per partition and jump (about 6% of the cooperative hour in `perf`:
/// the counts sit on lines the collector had not touched yet).
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

/// Receives the observations of a run, in order.
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
