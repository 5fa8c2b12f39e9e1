//! The consumer: a sans-IO state machine for one incarnation of one member, covering the poll
//! loop and the classic-protocol client (AK `ConsumerCoordinator`/`AbstractCoordinator`,
//! librdkafka `rdkafka_cgrp.c` where `client = "librdkafka"` differs; docs/kafka-facts.md
//! sections 2, 3 and 10).
//!
//! Lifecycle: `Start` -> the first poll sends JoinGroup -> JoinGroup response (the leader runs
//! the assignor and sends it with its SyncGroup) -> SyncGroup response -> the assignment takes
//! effect at the next poll (at once when the member waits in poll). The poll loop: a poll
//! returns up to `max.poll.records` records of the owned partitions; the batch is one event
//! whose per-record end times are drawn from the member's stream; the next poll follows at the
//! end of the batch (after a synchronous commit, when that is the policy). A heartbeat timer
//! runs while the member is in a stable generation; REBALANCE_IN_PROGRESS makes the member
//! rejoin at its next poll: eager members commit (auto-commit) and revoke everything first,
//! cooperative members commit (Java) and keep consuming, then revoke what the new assignment
//! takes away (librdkafka commits it first, Java does not) and rejoin at once. A Java member
//! handles its JoinGroup response inside poll (a busy member at its next poll), its periodic
//! auto-commit pauses during a rebalance and restarts when the assignment takes effect, and
//! a waiting poll wakes when that commit is due. `max.poll.interval.ms` counts from the poll that returned the
//! batch in progress: on expiry the member sends LeaveGroup and forgets its generation, so its
//! later commits fail and its next poll reports its partitions lost.
//!
//! librdkafka differences modeled: auto-commit runs on a background timer (covering every
//! record already returned, even mid-batch); a cooperative rebalance is rejoined without a
//! poll when the member has no assignment waiting for its callback (so round 1 completes
//! while a member stalls, but round 2 waits for the stalled member's poll, which serves the
//! assignment of round 1); the `max.poll.interval.ms` check runs on a 500 ms grid.

use crate::invariants::{assert_holds, first_broken, require, Broken, Fact};
use crate::observe::MemberState;
use crate::processing::{Listing, ProcessingSampler};
use crate::protocols::classic::metadata::TopicMetadata;
use crate::records::RecordTimes;
use crate::types::{
    Conn, JoinOk, MemberId, Outbox, ProtocolError, SyncOk, ToCoordinator, ToMember, Tp,
};
use crate::workload::ArrivalList;
use assignors::{AssignorName, Topic};
use scenario::{Client, CommitPolicy, OffsetReset};
use sim_core::{SimRng, SimTime};
use std::collections::BTreeSet;

mod fetch;
mod positions;
mod steps;

pub(crate) use crate::protocols::Membership;
pub(crate) use fetch::FetchSink;
use positions::Positions;
pub(crate) use steps::QuietStep;
pub use steps::{LoopShift, LoopState, SIGNATURE_HEAD};

/// How a group member rebalances: the classic protocol's two client modes (eager,
/// cooperative) or the KIP-848 consumer protocol. Members without a group (TubeMQ, manual)
/// carry `Eager`, unused (`protocols::rebalance_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RebalanceMode {
    /// Revoke everything at rejoin.
    Eager,
    /// KIP-429 incremental cooperative.
    Cooperative,
    /// KIP-848 consumer protocol: heartbeat-driven, server-side assignment.
    Consumer,
}

/// Everything a consumer needs to know about its configuration.
#[derive(Clone, Debug)]
pub struct ConsumerParams {
    /// Eager or cooperative.
    pub mode: RebalanceMode,
    /// The assignor the leader runs.
    pub assignor: AssignorName,
    /// Java or librdkafka behaviour.
    pub client: Client,
    /// Commit policy.
    pub commit: CommitPolicy,
    /// `enable.auto.commit` (auto-commit runs only with `commit = "auto"` and this set).
    pub enable_auto_commit: bool,
    /// `auto.commit.interval.ms`.
    pub auto_commit_interval: SimTime,
    /// `session.timeout.ms`.
    pub session_timeout: SimTime,
    /// `heartbeat.interval.ms`.
    pub heartbeat_interval: SimTime,
    /// `max.poll.interval.ms`.
    pub max_poll_interval: SimTime,
    /// `max.poll.records`.
    pub max_poll_records: u32,
    /// `fetch.max.wait.ms`: an empty poll returns after this long.
    pub fetch_max_wait: SimTime,
    /// `auto.offset.reset`.
    pub offset_reset: OffsetReset,
    /// One-way network delay (rtt / 2).
    pub one_way: SimTime,
    /// Per-record processing time.
    pub processing: ProcessingSampler,
    /// Static membership (KIP-345): the member's name is its `group.instance.id`; it sends
    /// no LeaveGroup, neither on close nor when its poll timer expires.
    pub static_membership: bool,
    /// The metadata refresh period of the member's client (Java `metadata.max.age.ms`,
    /// librdkafka `topic.metadata.refresh.interval.ms`): `protocols/classic/metadata.rs`.
    pub metadata_refresh: SimTime,
    /// The application registers a `ConsumerRebalanceListener` (`[consumer]
    /// rebalance_listener`): a Java KIP-848 member then completes its reconciliations at its
    /// next poll (`protocols/kip848/member.rs`, `Consumer::reconciles_in_poll`).
    pub rebalance_listener: bool,
    /// The `client.id` every member shares (`[group] client_ids = "default"`), or `None`:
    /// each member's client id is its name (`"member-name"`).
    pub shared_client_id: Option<String>,
}

impl ConsumerParams {
    /// The `client.id` of the member called `name`.
    pub(crate) fn client_id<'a>(&'a self, name: &'a str) -> &'a str {
        self.shared_client_id.as_deref().unwrap_or(name)
    }

    pub(crate) fn auto_commit(&self) -> bool {
        self.commit == CommitPolicy::Auto && self.enable_auto_commit
    }
}

/// Read access to the partition logs (the brokers' side of a fetch).
pub trait LogView {
    /// Records of `tp` that have arrived by `at`.
    fn log_end(&mut self, tp: Tp, at: SimTime) -> u64;
    /// When `offset` of `tp` arrives.
    fn arrival(&mut self, tp: Tp, offset: u64) -> SimTime;
    /// `max(known, log_end(tp, at))`: a reader at position `known` needs no more.
    fn log_end_from(&mut self, tp: Tp, at: SimTime, known: u64) -> u64 {
        self.log_end(tp, at).max(known)
    }
    /// The spacing `s` when offsets `first..first + count` of `tp` arrive exactly at
    /// `arrival(first) + i x s` (`None`: not known to be so).
    fn exact_spacing(&mut self, _tp: Tp, _first: u64, _count: u64) -> Option<SimTime> {
        None
    }
    /// Appends the arrivals of offsets `first..first + count` of `tp` to `out`.
    fn arrivals_into(&mut self, tp: Tp, first: u64, count: u64, out: &mut Vec<SimTime>) {
        out.extend((first..first + count).map(|offset| self.arrival(tp, offset)));
    }
    /// A fetch of at most `max` records of `tp` from position `known` at `at`: the first
    /// offset from `known` on that arrives after `at`, or `known + max` if that is lower, and
    /// the arrival of the offset returned when it is the first after `at` (`None` at the cap):
    /// [`LogView::log_end_from`] and the [`LogView::arrival`] the next fetch asks at the new
    /// position, in one look.
    fn read_from(&mut self, tp: Tp, at: SimTime, known: u64, max: u64) -> (u64, Option<SimTime>) {
        let end = self.log_end_from(tp, at, known);
        crate::workload::read_capped(end, known, max, |offset| self.arrival(tp, offset))
    }
    /// [`LogView::read_from`] (`at`, `known`, `max`) that also appends the arrivals of the
    /// offsets read to `out`: [`LogView::arrivals_into`] of them, in the same look.
    fn read_into(
        &mut self,
        tp: Tp,
        (at, known, max): (SimTime, u64, u64),
        out: &mut Vec<SimTime>,
    ) -> (u64, Option<SimTime>) {
        let read = self.read_from(tp, at, known, max);
        self.arrivals_into(tp, known, read.0 - known, out);
        read
    }
    /// [`LogView::read_into`] whose records are listed in `listing`, each with its processing
    /// drawn as it is listed.
    fn read_listing(
        &mut self,
        tp: Tp,
        span: (SimTime, u64, u64),
        listing: &mut Listing<'_>,
    ) -> (u64, Option<SimTime>) {
        listing.append_with(|list| self.read_into(tp, span, list))
    }
    /// [`LogView::read_listing`] of `tp`, the `place`-th of the reading member's partitions
    /// in partition order: a view holding only that member's logs finds it there.
    fn read_listing_at(
        &mut self,
        tp: Tp,
        _place: usize,
        span: (SimTime, u64, u64),
        listing: &mut Listing<'_>,
    ) -> (u64, Option<SimTime>) {
        self.read_listing(tp, span, listing)
    }
}

/// What the world hands a consumer with each input.
pub struct ConsumerEnv<'a, L: LogView + ?Sized = dyn LogView> {
    /// The logs (the world's own type on the hot path, so their lookups inline).
    pub log: &'a mut L,
    /// This member's stream (`("member", slot)`): processing times.
    pub rng: &'a mut SimRng,
    /// The `"assignor"` stream, used when this member leads.
    pub assignor_rng: &'a mut SimRng,
    /// The topics, sorted by name (`Tp::topic` indexes them).
    pub topics: &'a [Topic],
}

/// The consumer's timers; each carries the epoch that makes a late firing stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ConsumerTimer {
    /// Send the next heartbeat.
    Heartbeat,
    /// The batch of poll `epoch` is processed.
    BatchDone {
        /// Poll epoch.
        epoch: u64,
    },
    /// Wake an idle poll (records arrived or `fetch.max.wait.ms`).
    PollWake {
        /// Poll epoch.
        epoch: u64,
    },
    /// `max.poll.interval.ms` of poll `epoch` expired.
    MaxPoll {
        /// Poll epoch.
        epoch: u64,
    },
    /// librdkafka's background auto-commit.
    AutoCommit,
}

impl ConsumerTimer {
    /// The timer slot (0..=4): re-arming a slot moves its one pending firing.
    pub fn slot(&self) -> usize {
        match self {
            ConsumerTimer::Heartbeat => 0,
            ConsumerTimer::BatchDone { .. } => 1,
            ConsumerTimer::PollWake { .. } => 2,
            ConsumerTimer::MaxPoll { .. } => 3,
            ConsumerTimer::AutoCommit => 4,
        }
    }
}

/// Number of timer slots per consumer.
pub const CONSUMER_TIMER_SLOTS: usize = 5;

/// Inputs of a consumer.
#[derive(Clone, Debug)]
pub enum ConsumerInput {
    /// The process starts.
    Start,
    /// A timer fired.
    Timer(ConsumerTimer),
    /// A response from the coordinator.
    Message(ToMember),
    /// The process freezes for `duration` (the world holds other inputs meanwhile).
    Pause(SimTime),
    /// The current batch takes this much longer.
    Stall(SimTime),
    /// The network to the coordinator and brokers is cut.
    Disconnect,
    /// The network is back.
    Reconnect,
    /// A metadata refresh's response: the topics' partition counts, by topic index.
    Metadata(Vec<u32>),
    /// The process dies now.
    Crash,
    /// Graceful close: finish the batch, commit, revoke, LeaveGroup.
    Close,
    /// No classic group (TubeMQ, manual): these partitions are handed to the member, with
    /// their stored offsets (`None`: `auto.offset.reset` decides).
    Assign(Vec<(Tp, Option<u64>)>),
    /// No classic group (TubeMQ master): these partitions are taken away; one in the batch in
    /// progress waits up to `confirm_wait` for the batch's confirmation.
    Release {
        /// The partitions.
        tps: Vec<Tp>,
        /// TubeMQ `pullRebConfirmWaitPeriodMs`.
        confirm_wait: SimTime,
    },
    /// A release's `confirm_wait` may have run out.
    ReleaseTimeout,
    /// The TubeMQ master no longer knows the member: it drops everything it holds.
    DropAll,
}

/// Why partitions stopped being consumed by their owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RevokeCause {
    /// Eager revocation before rejoining: the group stops the world.
    StopTheWorld,
    /// Cooperative revocation of partitions that move.
    Revoked,
    /// The member closed.
    Closed,
}

/// What a consumer reports.
#[derive(Clone, Debug, PartialEq)]
pub enum ConsumerNote {
    /// The assignment of `generation` took effect: these partitions are owned now.
    Assigned {
        /// All owned partitions after the change.
        owned: Vec<Tp>,
        /// Generation.
        generation: i32,
        /// The member will rejoin at once (cooperative revocation).
        rejoining: bool,
    },
    /// Partitions given up (onPartitionsRevoked).
    Revoked {
        /// Which.
        tps: Vec<Tp>,
        /// Why.
        cause: RevokeCause,
    },
    /// Partitions lost without commit (onPartitionsLost).
    Lost {
        /// Which.
        tps: Vec<Tp>,
    },
    /// Records `first..first + times.len()` of `tp` were processed.
    Processed {
        /// Partition.
        tp: Tp,
        /// First offset.
        first: u64,
        /// Arrival and end of processing of each record.
        times: RecordTimes,
    },
    /// The fetch position of `tp` was reset to `to` by `auto.offset.reset`.
    Reset {
        /// Partition.
        tp: Tp,
        /// New position.
        to: u64,
    },
    /// The fetch position of `tp` starts at `at` (committed offset or reset).
    Position {
        /// Partition.
        tp: Tp,
        /// Offset.
        at: u64,
    },
    /// A commit was stored (`true`) or refused (`false`).
    Commit {
        /// Outcome.
        ok: bool,
    },
    /// `max.poll.interval.ms` expired; the member left.
    MaxPollExpired,
    /// The process finished a graceful close.
    Exited,
    /// No classic group: partitions handed back at these offsets (confirmed, or rolled back
    /// to the unconfirmed batch's start); `wait_until`: others still wait for the batch.
    Released {
        /// Partitions and the offsets stored for their next owner.
        offsets: Vec<(Tp, u64)>,
        /// When the remaining releases give up waiting (a `ReleaseTimeout` is due then).
        wait_until: Option<SimTime>,
    },
}

/// The consumer's outbox.
pub type ConsumerOutbox = Outbox<ToCoordinator, ConsumerTimer, ConsumerNote>;

/// Where the member is in the classic protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// No generation: (re)join at the next poll.
    Unjoined,
    /// JoinGroup sent.
    Joining,
    /// SyncGroup sent.
    Syncing,
    /// In a generation.
    Stable,
}

#[derive(Clone, Debug)]
pub(crate) struct Batch {
    pub(crate) epoch: u64,
    pub(crate) parts: Vec<(Tp, u64, usize)>,
    pub(crate) times: BatchTimes,
    pub(crate) end: SimTime,
    /// When the poll that returned it ran (its `max.poll.interval.ms` counts from there).
    pub(crate) polled: SimTime,
}

/// The arrival and end times of a batch's records, in batch order (the parts one after the
/// other).
#[derive(Clone, Debug)]
pub(crate) enum BatchTimes {
    /// Record by record.
    Listed { arrivals: Vec<SimTime>, ends: Vec<SimTime> },
    /// Constant processing `each` from `start`: record `k` of the batch ends at
    /// `start + (k + 1) x each`; per part, the arrival of its first record and the exact
    /// spacing of its log.
    Linear { start: SimTime, each: SimTime, arrivals: Vec<(SimTime, SimTime)> },
}

impl BatchTimes {
    /// Every time moved `by` later.
    pub(crate) fn shift(&mut self, by: SimTime) {
        match self {
            BatchTimes::Listed { arrivals, ends } => {
                arrivals.iter_mut().chain(ends.iter_mut()).for_each(|t| *t += by)
            }
            BatchTimes::Linear { start, arrivals, .. } => {
                *start += by;
                arrivals.iter_mut().for_each(|(first, _)| *first += by);
            }
        }
    }

    /// Sets these times to `base`'s moved `by` later, reusing the buffers of the same form.
    pub(crate) fn set_shifted(&mut self, base: &BatchTimes, by: SimTime) {
        match (&mut *self, base) {
            (
                BatchTimes::Listed { arrivals, ends },
                BatchTimes::Listed { arrivals: arrivals0, ends: ends0 },
            ) => {
                arrivals.clear();
                arrivals.extend(arrivals0.iter().map(|t| *t + by));
                ends.clear();
                ends.extend(ends0.iter().map(|t| *t + by));
            }
            (
                BatchTimes::Linear { start, each, arrivals },
                BatchTimes::Linear { start: start0, each: each0, arrivals: arrivals0 },
            ) => {
                *start = *start0 + by;
                *each = *each0;
                arrivals.clear();
                arrivals.extend(arrivals0.iter().map(|(first, spacing)| (*first + by, *spacing)));
            }
            _ => {
                *self = base.clone();
                self.shift(by);
            }
        }
    }

    /// Whether these are `base`'s times moved `by` later (what `shift` makes of a copy),
    /// compared in place.
    pub(crate) fn eq_shifted(&self, base: &BatchTimes, by: SimTime) -> bool {
        match (self, base) {
            (
                BatchTimes::Listed { arrivals, ends },
                BatchTimes::Listed { arrivals: arrivals0, ends: ends0 },
            ) => {
                let moved = |a: &[SimTime], a0: &[SimTime]| {
                    a.len() == a0.len() && a.iter().zip(a0).all(|(t, t0)| *t == *t0 + by)
                };
                moved(arrivals, arrivals0) && moved(ends, ends0)
            }
            (
                BatchTimes::Linear { start, each, arrivals },
                BatchTimes::Linear { start: start0, each: each0, arrivals: arrivals0 },
            ) => {
                *start == *start0 + by
                    && each == each0
                    && arrivals.len() == arrivals0.len()
                    && arrivals
                        .iter()
                        .zip(arrivals0)
                        .all(|((f, x), (f0, x0))| *f == *f0 + by && x == x0)
            }
            _ => false,
        }
    }

    /// The same times, listed (`parts` gives each part's record count).
    pub(crate) fn to_listed(&self, parts: &[(Tp, u64, usize)]) -> BatchTimes {
        let (mut arrivals, mut ends) = (Vec::new(), Vec::new());
        let mut index = 0;
        for (part, (_, _, count)) in parts.iter().enumerate() {
            let (a, e) = self.of_part(part, index, *count as u64).into_lists();
            arrivals.extend(a);
            ends.extend(e);
            index += count;
        }
        BatchTimes::Listed { arrivals, ends }
    }

    /// The times of the first `count` records of part `part`, which starts at batch index
    /// `index`. Listed times of one or two records are given as progressions (no allocation:
    /// with random arrivals and processing most parts have a record or two; both forms mean
    /// the same times).
    pub(crate) fn of_part(&self, part: usize, index: usize, count: u64) -> RecordTimes {
        self.of_part_reusing(part, index, count, &mut (Vec::new(), Vec::new()))
    }

    /// [`BatchTimes::of_part`], listing three or more records in the buffers of `spare`
    /// (taken: give them back from the result, so that reporting a batch allocates nothing).
    pub(crate) fn of_part_reusing(
        &self,
        part: usize,
        index: usize,
        count: u64,
        spare: &mut (Vec<SimTime>, Vec<SimTime>),
    ) -> RecordTimes {
        match self {
            BatchTimes::Listed { arrivals, ends } if (1..=2).contains(&count) => {
                // A part's records are consecutive offsets processed in order: neither their
                // arrivals nor their ends decrease.
                let last = index + count as usize - 1;
                RecordTimes::Linear {
                    count,
                    arrival: arrivals[index],
                    arrival_step: arrivals[last] - arrivals[index],
                    end: ends[index],
                    end_step: ends[last] - ends[index],
                }
            }
            BatchTimes::Listed { arrivals, ends } => {
                let range = index..index + count as usize;
                let (mut part_arrivals, mut part_ends) = std::mem::take(spare);
                part_arrivals.clear();
                part_arrivals.extend_from_slice(&arrivals[range.clone()]);
                part_ends.clear();
                part_ends.extend_from_slice(&ends[range]);
                RecordTimes::listed(part_arrivals, part_ends)
            }
            BatchTimes::Linear { start, each, arrivals } => RecordTimes::Linear {
                count,
                arrival: arrivals[part].0,
                arrival_step: arrivals[part].1,
                end: *start + SimTime::from_nanos(each.as_nanos() * (index as u64 + 1)),
                end_step: *each,
            },
        }
    }

    /// Of the `count` records from batch index `index`, how many end by `cut`.
    pub(crate) fn done_by(&self, index: usize, count: usize, cut: SimTime) -> usize {
        match self {
            BatchTimes::Listed { ends, .. } => {
                ends[index..index + count].iter().take_while(|e| **e <= cut).count()
            }
            BatchTimes::Linear { start, each, .. } => {
                // Records 0..k of the batch end by `cut`, k = (cut - start) / each.
                let done_in_batch = match (cut >= *start, each.as_nanos()) {
                    (false, _) => 0,
                    (true, 0) => usize::MAX,
                    (true, each) => ((cut - *start).as_nanos() / each) as usize,
                };
                done_in_batch.saturating_sub(index).min(count)
            }
        }
    }
}

/// Position sentinel: `auto.offset.reset = none` with no committed offset: never fetched.
pub(crate) const NO_POSITION: u64 = u64::MAX;

/// One incarnation of a member.
#[derive(Clone, Debug)]
pub struct Consumer {
    pub(crate) conn: Conn,
    pub(crate) name: String,
    pub(crate) params: ConsumerParams,
    pub(crate) alive: bool,
    pub(crate) member_id: Option<MemberId>,
    pub(crate) generation: i32,
    pub(crate) phase: Phase,
    pub(crate) rejoin_needed: bool,
    pub(crate) owned_generation: i32,
    pub(crate) pending: Option<SyncOk>,
    /// A JoinGroup response that reached a Java member outside `poll()`: handled (the leader's
    /// assignment, the SyncGroup) at its next poll.
    pub(crate) pending_join: Option<Result<JoinOk, ProtocolError>>,
    pub(crate) awaiting_commit: Option<u64>,
    pub(crate) closing: bool,
    pub(crate) disconnected: bool,
    pub(crate) next_request: u64,
    pub(crate) last_auto_commit: SimTime,
    pub(crate) started: SimTime,
    /// When the application created the client: the member's moment (`started` is later by
    /// the start-up the timing variation draws). librdkafka's metadata refresh timer runs
    /// from here.
    pub(crate) created: SimTime,
    /// The topic metadata the member knows (classic: how it learns of added partitions).
    pub(crate) topic_metadata: TopicMetadata,
    /// The next JoinGroup is for a metadata change (`protocols/classic/metadata.rs`).
    pub(crate) metadata_rejoin: bool,
    /// The poll loop: partitions and positions, the batch in progress, the fetch rotation.
    pub(crate) poll_loop: PollLoop,
    /// The protocol's own client state.
    pub(crate) membership: Membership,
}

/// The protocol-neutral poll loop of a member: what its quiet steps change, and all that a
/// periodic jump of fast stepping writes (`world/stepper/cycle.rs` borrows this, not the
/// consumer, so a jump cannot touch membership).
#[derive(Clone, Debug, Default)]
pub(crate) struct PollLoop {
    /// The owned partitions and their fetch positions.
    pub(crate) owned: Positions,
    /// The batch in progress.
    pub(crate) batch: Option<Batch>,
    /// Waiting in `poll()` for records.
    pub(crate) in_poll: bool,
    /// Polls so far (a timer of an earlier poll is stale).
    pub(crate) epoch: u64,
    /// When `poll()` last ran (fast stepping compares loop states relative to it).
    pub(crate) last_poll: SimTime,
    /// The fetch rotation: the partition a fetch starts from (mod their count).
    pub(crate) cursor: usize,
    /// The buffers of the last finished batch, reused by the next one (not loop state).
    pub(crate) spare: SpareBatch,
}

impl PollLoop {
    /// A call of `poll()` at `now` begins: a new poll epoch (a timer of an earlier poll is
    /// stale), not waiting yet.
    pub(crate) fn begin_poll(&mut self, now: SimTime) {
        self.last_poll = now;
        self.in_poll = false;
        self.epoch += 1;
    }

    /// The batch in progress is finished and reported: it ends, its buffers kept for the next
    /// fetch (in place: the batch is not moved).
    pub(crate) fn recycle_batch(&mut self) {
        let Some(batch) = self.batch.as_mut() else { return };
        keep_larger(&mut self.spare.parts, std::mem::take(&mut batch.parts));
        match &mut batch.times {
            BatchTimes::Linear { arrivals, .. } => {
                keep_larger(&mut self.spare.arrivals, std::mem::take(arrivals))
            }
            BatchTimes::Listed { arrivals, ends } => {
                keep_larger(&mut self.spare.listed_arrivals, std::mem::take(arrivals));
                keep_larger(&mut self.spare.listed_ends, std::mem::take(ends));
            }
        }
        self.batch = None;
    }

    /// An empty batch of listed times in the buffers of the last finished batch (its epoch
    /// and times are the caller's to set).
    pub(crate) fn spare_listed_batch(&mut self) -> Batch {
        let spare = &mut self.spare;
        let mut parts = std::mem::take(&mut spare.parts);
        let mut arrivals = std::mem::take(&mut spare.listed_arrivals);
        let mut ends = std::mem::take(&mut spare.listed_ends);
        parts.clear();
        arrivals.clear();
        ends.clear();
        let times = BatchTimes::Listed { arrivals, ends };
        Batch { epoch: 0, parts, times, end: SimTime::ZERO, polled: SimTime::ZERO }
    }

    /// Keeps the buffers of a finished batch for the next fetch.
    pub(crate) fn keep_buffers(&mut self, batch: Batch) {
        keep_larger(&mut self.spare.parts, batch.parts);
        match batch.times {
            BatchTimes::Linear { arrivals, .. } => keep_larger(&mut self.spare.arrivals, arrivals),
            BatchTimes::Listed { arrivals, ends } => {
                keep_larger(&mut self.spare.listed_arrivals, arrivals);
                keep_larger(&mut self.spare.listed_ends, ends);
            }
        }
    }
}

/// Keeps the larger of two buffers in `spare` (the next fetch empties it before use).
fn keep_larger<T>(spare: &mut Vec<T>, buffer: Vec<T>) {
    if buffer.capacity() > spare.capacity() {
        *spare = buffer;
    }
}

/// Emptied buffers of a finished batch: a fetch fills them again instead of allocating.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpareBatch {
    parts: Vec<(Tp, u64, usize)>,
    arrivals: Vec<(SimTime, SimTime)>,
    /// The record-by-record arrivals of a listed batch.
    listed_arrivals: Vec<SimTime>,
    /// The record-by-record ends of a listed batch.
    listed_ends: Vec<SimTime>,
}

impl Consumer {
    /// A member that has not started yet.
    pub fn new(conn: Conn, name: String, params: ConsumerParams) -> Consumer {
        let params_mode = params.mode;
        Consumer {
            conn,
            name,
            params,
            alive: true,
            member_id: None,
            generation: -1,
            phase: Phase::Unjoined,
            rejoin_needed: true,
            owned_generation: -1,
            pending: None,
            pending_join: None,
            awaiting_commit: None,
            closing: false,
            disconnected: false,
            next_request: 0,
            last_auto_commit: SimTime::ZERO,
            started: SimTime::ZERO,
            created: SimTime::ZERO,
            topic_metadata: TopicMetadata::default(),
            metadata_rejoin: false,
            poll_loop: PollLoop::default(),
            membership: Membership::of_mode(params_mode),
        }
    }

    /// Its address.
    pub fn conn(&self) -> Conn {
        self.conn
    }
    /// Whether the process runs.
    pub fn alive(&self) -> bool {
        self.alive
    }
    /// The protocol phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }
    /// The member's place in its group protocol, as [`Observation::MemberState`] names it
    /// (the world adds the states of the process: `world/member_state.rs`).
    ///
    /// [`Observation::MemberState`]: crate::Observation::MemberState
    pub fn protocol_state(&self) -> MemberState {
        match &self.membership {
            Membership::Assigned(_) => MemberState::Running,
            Membership::Kip848(state) if state.joining => MemberState::Joining,
            Membership::Classic | Membership::Kip848(_) => match self.phase {
                Phase::Unjoined => MemberState::Unjoined,
                Phase::Joining => MemberState::Joining,
                Phase::Syncing => MemberState::Syncing,
                Phase::Stable => MemberState::Consuming,
            },
        }
    }
    /// Whether a graceful close began (the process exits once its batch and commit are done).
    pub fn closing(&self) -> bool {
        self.closing
    }
    /// The generation of the owned partitions (-1 when none or reset).
    pub fn owned_generation(&self) -> i32 {
        if self.member_id.is_none() {
            -1
        } else {
            self.owned_generation
        }
    }
    /// The fetch position of `tp`, if owned and readable.
    pub fn position(&self, tp: Tp) -> Option<u64> {
        self.poll_loop.owned.get(&tp).copied().filter(|p| *p != NO_POSITION)
    }
    /// Partitions owned now with their fetch positions, the readable ones only (as
    /// [`Consumer::position`] gives them), in partition order.
    pub(crate) fn owned_positions(&self) -> impl Iterator<Item = (Tp, u64)> + '_ {
        let readable = self.poll_loop.owned.iter().filter(|(_, p)| **p != NO_POSITION);
        readable.map(|(tp, position)| (*tp, *position))
    }
    /// Partitions owned now.
    pub fn owned(&self) -> Vec<Tp> {
        self.poll_loop.owned.keys().copied().collect()
    }

    /// The partitions owned, in order.
    pub fn owned_partitions(&self) -> impl Iterator<Item = Tp> + '_ {
        self.poll_loop.owned.keys().copied()
    }

    /// Whether the partitions owned now are exactly `tps`, given in order without repeats (a
    /// set's, a response's list): one walk beside the owned ones, which are in order too.
    pub fn owns_exactly<'a>(&self, tps: impl IntoIterator<Item = &'a Tp>) -> bool {
        self.poll_loop.owned.keys().eq(tps)
    }

    /// Handles one input at `now`.
    pub fn handle<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        input: ConsumerInput,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        if !self.alive {
            return;
        }
        match input {
            ConsumerInput::Start => self.on_start(now, env, out),
            ConsumerInput::Timer(timer) => self.on_timer(now, timer, env, out),
            ConsumerInput::Message(msg) => self.on_message(now, msg, env, out),
            ConsumerInput::Pause(d) | ConsumerInput::Stall(d) => self.delay_batch(now, d, out),
            ConsumerInput::Disconnect => self.disconnected = true,
            ConsumerInput::Reconnect => self.on_reconnect(now, env, out),
            ConsumerInput::Metadata(counts) => self.on_metadata(now, counts, env, out),
            ConsumerInput::Crash => self.on_crash(now, out),
            ConsumerInput::Close => {
                self.closing = true;
                if self.poll_loop.batch.is_none() && self.awaiting_commit.is_none() {
                    self.close(out);
                }
            }
            ConsumerInput::Assign(assigned) => self.on_external_assign(now, assigned, env, out),
            ConsumerInput::Release { tps, confirm_wait } => {
                self.on_external_release(now, tps, confirm_wait, out)
            }
            ConsumerInput::ReleaseTimeout => self.on_release_timeout(now, out),
            ConsumerInput::DropAll => self.on_external_drop_all(out),
        }
    }

    pub(crate) fn on_start<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        self.started = now;
        self.last_auto_commit = now;
        let counts = env.topics.iter().map(|t| t.partitions).collect();
        self.topic_metadata = TopicMetadata::at_start(counts, self.params.client);
        if self.params.client == Client::Librdkafka && self.params.auto_commit() {
            out.arm(ConsumerTimer::AutoCommit, now + self.params.auto_commit_interval);
        }
        self.poll(now, env, out);
    }

    pub(crate) fn on_timer<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        timer: ConsumerTimer,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        match timer {
            ConsumerTimer::Heartbeat => self.on_heartbeat_timer(now, out),
            ConsumerTimer::BatchDone { epoch } => {
                if self.poll_loop.batch.as_ref().is_some_and(|b| b.epoch == epoch) {
                    self.finish_batch(now, env, out);
                }
            }
            ConsumerTimer::PollWake { epoch } => {
                if self.poll_loop.in_poll && epoch == self.poll_loop.epoch {
                    self.poll(now, env, out);
                }
            }
            ConsumerTimer::MaxPoll { epoch } => {
                if self.poll_loop.batch.as_ref().is_some_and(|b| b.epoch == epoch) {
                    self.on_poll_timeout(out);
                }
            }
            ConsumerTimer::AutoCommit => {
                let member = self.phase == Phase::Stable || self.is_external();
                if member && !self.poll_loop.owned.is_empty() {
                    self.commit(self.positions(|_| true), out);
                }
                out.arm(ConsumerTimer::AutoCommit, now + self.params.auto_commit_interval);
            }
        }
    }

    pub(crate) fn on_message<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        msg: ToMember,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        match msg {
            ToMember::Join(response) if self.join_response_waits_for_poll() => {
                self.pending_join = Some(response);
                return;
            }
            ToMember::Join(response) => self.on_join_response(response, env, out),
            ToMember::Sync(Ok(sync)) => self.on_sync_ok(now, sync, out),
            ToMember::Sync(Err(e)) => self.on_sync_error(e, out),
            ToMember::ConsumerHeartbeat(r) => self.kip848_response(now, r, env, out),
            ToMember::Heartbeat(None) => {}
            ToMember::Heartbeat(Some(e)) => self.on_heartbeat_error(e, out),
            ToMember::Commit { request, ok } => {
                out.note(ConsumerNote::Commit { ok });
                if self.awaiting_commit == Some(request) {
                    self.awaiting_commit = None;
                    self.after_batch(now, env, out);
                }
                return;
            }
        }
        self.wake(now, env, out);
    }

    pub(crate) fn on_heartbeat_timer(&mut self, now: SimTime, out: &mut ConsumerOutbox) {
        match self.membership {
            Membership::Classic => self.classic_heartbeat_timer(now, out),
            Membership::Kip848(_) => self.kip848_heartbeat_timer(now, out),
            Membership::Assigned(_) => {}
        }
    }

    /// `max.poll.interval.ms` expired: the member leaves its group (without a group, nothing
    /// happens: TubeMQ and manual assignment have no poll timer of their own).
    pub(crate) fn on_poll_timeout(&mut self, out: &mut ConsumerOutbox) {
        match self.membership {
            Membership::Classic => self.classic_poll_timeout(out),
            Membership::Kip848(_) => self.kip848_poll_timeout(out),
            Membership::Assigned(_) => {}
        }
    }

    pub(crate) fn on_reconnect<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        self.disconnected = false;
        self.pending_join = None;
        if matches!(self.phase, Phase::Joining | Phase::Syncing) {
            // The request (or its response) was lost: the client retries the join.
            self.phase = if self.member_id.is_some() { Phase::Stable } else { Phase::Unjoined };
            self.rejoin_needed = true;
        }
        if self.awaiting_commit.take().is_some() {
            out.note(ConsumerNote::Commit { ok: false });
            self.after_batch(now, env, out);
            return;
        }
        self.wake(now, env, out);
    }

    pub(crate) fn on_crash(&mut self, now: SimTime, out: &mut ConsumerOutbox) {
        if let Some(batch) = self.poll_loop.batch.take() {
            emit_processed(&batch, Some(now), out);
        }
        self.alive = false;
    }

    pub(crate) fn wake<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        if self.poll_loop.in_poll {
            self.poll(now, env, out);
        }
    }

    /// One call of `poll()`.
    pub(crate) fn poll<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        if self.poll_loop.batch.is_some() || self.awaiting_commit.is_some() {
            return;
        }
        self.poll_loop.begin_poll(now);
        out.cancel(ConsumerTimer::PollWake { epoch: self.poll_loop.epoch });
        if let Some(response) = self.pending_join.take() {
            self.on_join_response(response, env, out);
        }
        self.maybe_auto_commit_in_poll(now, out);
        if let Some(sync) = self.pending.take() {
            self.apply_assignment(now, sync, env, out);
        }
        if self.closing {
            self.close(out);
            return;
        }
        match self.membership {
            Membership::Classic => self.classic_poll(out),
            Membership::Kip848(_) => self.kip848_poll(now, env, out),
            Membership::Assigned(_) => {}
        }
        let step = self.fetch_or_wait(now, env);
        self.arm_poll_step(now, step, out);
    }

    /// Arms the poll-loop step a poll at `now` ended in, and for a batch its
    /// `max.poll.interval.ms` timer.
    fn arm_poll_step(
        &self,
        now: SimTime,
        (step, at): (ConsumerTimer, SimTime),
        out: &mut ConsumerOutbox,
    ) {
        out.arm(step, at);
        if let ConsumerTimer::BatchDone { epoch } = step {
            out.arm(ConsumerTimer::MaxPoll { epoch }, self.poll_deadline(now));
        }
    }

    /// The fetch of a poll at `now` (its epoch begun): a batch starts, or the poll waits for
    /// records. Returns the poll-loop step that comes next: the batch's end, or the waiting
    /// poll's wake-up ([`Consumer::next_wake`]). The batch's `max.poll.interval.ms` timer is
    /// the caller's to arm.
    pub(crate) fn fetch_or_wait<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        env: &mut ConsumerEnv<'_, L>,
    ) -> (ConsumerTimer, SimTime) {
        match self.fetch(now, env) {
            Ok(batch) => self.begin_batch(batch),
            Err(first_unseen) => self.wait_for_records(now, first_unseen),
        }
    }

    /// A poll at `now` found nothing: it waits for the earliest unread record (arriving at
    /// `first_unseen`). Returns its wake-up ([`Consumer::next_wake`]).
    pub(crate) fn wait_for_records(
        &mut self,
        now: SimTime,
        first_unseen: SimTime,
    ) -> (ConsumerTimer, SimTime) {
        self.poll_loop.in_poll = true;
        let wake = self.next_wake(now, first_unseen);
        (ConsumerTimer::PollWake { epoch: self.poll_loop.epoch }, wake)
    }

    /// Makes `batch` the batch in progress of the current poll; its end is the next step.
    fn begin_batch(&mut self, mut batch: Batch) -> (ConsumerTimer, SimTime) {
        let epoch = self.poll_loop.epoch;
        batch.epoch = epoch;
        let end = batch.end;
        self.poll_loop.batch = Some(batch);
        (ConsumerTimer::BatchDone { epoch }, end)
    }

    /// The Java client's periodic auto-commit inside `poll()` (AK `ConsumerCoordinator.poll`
    /// -> `maybeAutoCommitOffsetsAsync`), every `auto.commit.interval.ms` from the last one or
    /// from the last rebalance ([`Consumer::restart_auto_commit_timer`]). While a classic
    /// rebalance is in progress `ConsumerCoordinator.poll` returns before it (`if
    /// (rejoinNeededOrPending()) ... if (!ensureActiveGroup(...)) return false`): the deadline
    /// passes untouched, and the rebalance's `onJoinComplete` restarts it.
    pub(crate) fn maybe_auto_commit_in_poll(&mut self, now: SimTime, out: &mut ConsumerOutbox) {
        let java = self.params.client == Client::Java;
        let due = now.saturating_sub(self.last_auto_commit) >= self.params.auto_commit_interval;
        if java && self.params.auto_commit() && due && !self.classic_rebalance_in_progress() {
            self.last_auto_commit = now;
            let member = self.phase == Phase::Stable && self.member_id.is_some();
            if (member || self.is_external()) && !self.poll_loop.owned.is_empty() {
                self.commit(self.positions(|_| true), out);
            }
        }
    }

    /// Whether a classic member is in a rebalance (AK `rejoinNeededOrPending()`, or its
    /// assignment not yet applied): a rejoin waits, its JoinGroup or SyncGroup is out, or a
    /// response waits for its poll.
    pub(crate) fn classic_rebalance_in_progress(&self) -> bool {
        matches!(self.membership, Membership::Classic)
            && (self.rejoin_needed
                || self.phase != Phase::Stable
                || self.pending.is_some()
                || self.pending_join.is_some())
    }

    /// The Java client restarts its auto-commit deadline when an assignment takes effect:
    /// classic `ConsumerCoordinator.onJoinComplete` (`nextAutoCommitTimer.updateAndReset(
    /// autoCommitIntervalMs)`, "Reschedule the auto commit starting from now"), KIP-848
    /// `ConsumerMembershipManager.signalReconciliationCompleting` (`resetAutoCommitTimer`).
    /// librdkafka's timer runs from the consumer's creation (`rkcg_offset_commit_tmr`,
    /// started once in `rd_kafka_cgrp_new`, `rdkafka_cgrp.c`): nothing changes.
    pub(crate) fn restart_auto_commit_timer(&mut self, now: SimTime) {
        if self.params.client == Client::Java && self.params.auto_commit() {
            self.last_auto_commit = now;
        }
    }

    /// [`Consumer::restart_auto_commit_timer`] when `reconciled` (the KIP-848 member's hook:
    /// a reconciliation that changed the assignment completed).
    pub(crate) fn restart_auto_commit_timer_if(&mut self, now: SimTime, reconciled: bool) {
        if reconciled {
            self.restart_auto_commit_timer(now);
        }
    }

    /// Whether giving partitions up commits them first (auto-commit on): librdkafka commits
    /// the partitions it removes from its assignment, at every (incremental) unassign
    /// (`rd_kafka_assignment_serve_removals`, `rdkafka_assignment.c`, with
    /// `enable.auto.commit`), the Java KIP-848 client before revoking
    /// (`signalReconciliationStarted` -> `maybeAutoCommitSyncBeforeRevocation`). The Java
    /// classic client does not: `ConsumerCoordinator.onJoinComplete` calls
    /// `onPartitionsRevoked` for what a cooperative assignment takes away without a commit (its
    /// last commit was `onJoinPrepare`'s, before the JoinGroup), so what it consumed since is
    /// processed again by the new owner.
    fn commits_at_revocation(&self) -> bool {
        let java_classic =
            self.params.client == Client::Java && matches!(self.membership, Membership::Classic);
        self.params.auto_commit() && !java_classic
    }

    /// Revokes owned partitions not in `assigned` (committing them first where the client
    /// does, [`Consumer::commits_at_revocation`]); true if any were.
    pub(crate) fn revoke_missing(
        &mut self,
        assigned: &BTreeSet<Tp>,
        out: &mut ConsumerOutbox,
    ) -> bool {
        let revoked: Vec<Tp> =
            self.poll_loop.owned.keys().filter(|tp| !assigned.contains(tp)).copied().collect();
        if revoked.is_empty() {
            return false;
        }
        if self.commits_at_revocation() {
            self.commit(self.positions(|tp| !assigned.contains(tp)), out);
        }
        self.poll_loop.owned.retain(|tp| assigned.contains(tp));
        out.note(ConsumerNote::Revoked { tps: revoked, cause: RevokeCause::Revoked });
        true
    }

    /// Owns the partitions of `assigned` not owned yet, from their committed offsets (or the
    /// reset policy's).
    pub(crate) fn take_new<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        assigned: Vec<(Tp, Option<u64>)>,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) -> bool {
        let mut added = Vec::new();
        for (tp, committed) in assigned {
            if !self.poll_loop.owned.contains_key(&tp) {
                added.push((tp, self.start_position(now, tp, committed, env, out)));
            }
        }
        let any = !added.is_empty();
        self.poll_loop.owned.add_new(added);
        any
    }

    pub(crate) fn start_position<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        tp: Tp,
        committed: Option<u64>,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) -> u64 {
        let position = match (committed, self.params.offset_reset) {
            (Some(offset), _) => offset,
            (None, OffsetReset::Earliest) => 0,
            (None, OffsetReset::None) => return NO_POSITION,
            (None, OffsetReset::Latest) => {
                let end = env.log.log_end(tp, now);
                out.note(ConsumerNote::Reset { tp, to: end });
                end
            }
        };
        out.note(ConsumerNote::Position { tp, at: position });
        position
    }

    /// The batch of `parts` a poll at `now` took, with its records' times: their arrivals
    /// (`listed` if the fetch copied them already) and their ends, the processing times drawn
    /// record by record.
    pub(crate) fn timed_batch<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        parts: Vec<(Tp, u64, usize)>,
        listed: Option<Vec<SimTime>>,
        env: &mut ConsumerEnv<'_, L>,
    ) -> Batch {
        let total: usize = parts.iter().map(|p| p.2).sum();
        let arrivals = match listed {
            Some(arrivals) => arrivals,
            None => {
                let spare = std::mem::take(&mut self.poll_loop.spare.arrivals);
                let processing = &self.params.processing;
                match linear_times(now, &parts, processing, env, spare) {
                    Ok((times, end)) => return Batch { epoch: 0, parts, times, end, polled: now },
                    Err(spare) => self.poll_loop.spare.arrivals = spare,
                }
                let mut arrivals = std::mem::take(&mut self.poll_loop.spare.listed_arrivals);
                arrivals.clear();
                arrivals.reserve(total);
                for (tp, first, count) in &parts {
                    env.log.arrivals_into(*tp, *first, *count as u64, &mut arrivals);
                }
                arrivals
            }
        };
        debug_assert_eq!(arrivals.len(), total, "one arrival a record");
        let mut ends = std::mem::take(&mut self.poll_loop.spare.listed_ends);
        ends.clear();
        ends.reserve(total);
        let mut t = now;
        let (processing, rng) = (&self.params.processing, &mut *env.rng);
        ends.extend((0..total).map(|_| {
            t += processing.sample(rng);
            t
        }));
        let times = BatchTimes::Listed { arrivals, ends };
        Batch { epoch: 0, parts, times, end: t, polled: now }
    }

    pub(crate) fn start_batch(&mut self, now: SimTime, batch: Batch, out: &mut ConsumerOutbox) {
        let step = self.begin_batch(batch);
        self.arm_poll_step(now, step, out);
    }

    /// When the poll timer of a poll at `now` expires: Java checks it continuously,
    /// librdkafka every 500 ms from the client's start.
    pub(crate) fn poll_deadline(&self, now: SimTime) -> SimTime {
        let deadline = now + self.params.max_poll_interval;
        if self.params.client == Client::Java {
            return deadline;
        }
        let grid = SimTime::from_millis(500).as_nanos();
        let since = (deadline - self.started).as_nanos();
        self.started + SimTime::from_nanos(since.div_ceil(grid) * grid)
    }

    /// When a poll that found nothing (the earliest unread record arriving at `first_unseen`)
    /// wakes up: when that record reaches the client, at most `fetch.max.wait.ms` later, and
    /// for the Java client no later than its next auto-commit is due (AK
    /// `ClassicKafkaConsumer.pollForFetches` bounds its wait by
    /// `ConsumerCoordinator.timeToNextPoll`, the auto-commit timer's remaining time).
    pub(crate) fn next_wake(&self, now: SimTime, first_unseen: SimTime) -> SimTime {
        let wake = (now + self.params.fetch_max_wait).min(self.auto_commit_due_after(now));
        if self.disconnected {
            return wake; // No fetch can succeed: retry after fetch.max.wait.ms.
        }
        wake.min(first_unseen.saturating_add(self.params.one_way)).max(now)
    }

    /// The Java client's next auto-commit deadline if it is after `now` (else `SimTime::MAX`:
    /// one overdue in a rebalance waits for the rebalance's end, which restarts it).
    fn auto_commit_due_after(&self, now: SimTime) -> SimTime {
        let due = self.auto_commit_deadline();
        if due > now {
            due
        } else {
            SimTime::MAX
        }
    }

    pub(crate) fn delay_batch(&mut self, now: SimTime, by: SimTime, out: &mut ConsumerOutbox) {
        match self.poll_loop.batch.as_mut() {
            Some(batch) => {
                let mut times = batch.times.to_listed(&batch.parts);
                if let BatchTimes::Listed { ends, .. } = &mut times {
                    ends.iter_mut().filter(|e| **e > now).for_each(|end| *end += by);
                }
                batch.times = times;
                batch.end += by;
                out.arm(ConsumerTimer::BatchDone { epoch: batch.epoch }, batch.end);
            }
            None => {
                // Busy outside a batch (e.g. the application stalls between polls).
                self.poll_loop.in_poll = false;
                self.poll_loop.epoch += 1;
                let parts = Vec::new();
                let times = BatchTimes::Listed { arrivals: vec![], ends: vec![] };
                let batch = Batch { epoch: 0, parts, times, end: now + by, polled: now };
                self.start_batch(now, batch, out);
            }
        }
    }

    pub(crate) fn finish_batch<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        let batch = self.poll_loop.batch.take().expect("a batch in progress");
        emit_processed(&batch, None, out);
        self.confirm_releases(batch.epoch, out);
        out.cancel(ConsumerTimer::MaxPoll { epoch: batch.epoch });
        let had_records = !batch.parts.is_empty();
        self.poll_loop.keep_buffers(batch);
        match self.params.commit {
            CommitPolicy::SyncPerBatch if had_records => {
                if let Some(request) = self.commit(self.positions(|_| true), out) {
                    self.awaiting_commit = Some(request);
                    return;
                }
            }
            CommitPolicy::AsyncPerBatch if had_records => {
                self.commit(self.positions(|_| true), out);
            }
            _ => {}
        }
        self.after_batch(now, env, out);
    }

    pub(crate) fn after_batch<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        env: &mut ConsumerEnv<'_, L>,
        out: &mut ConsumerOutbox,
    ) {
        if self.closing {
            self.close(out);
        } else {
            self.poll(now, env, out);
        }
    }

    /// Positions of the owned partitions that satisfy `which`, to commit (a lookup per
    /// partition: a member revoking thousands of its partitions searched the revoked list
    /// for each).
    pub(crate) fn positions(&self, which: impl Fn(&Tp) -> bool) -> Vec<(Tp, u64)> {
        self.poll_loop
            .owned
            .iter()
            .filter(|(tp, p)| **p != NO_POSITION && which(tp))
            .map(|(tp, p)| (*tp, *p))
            .collect()
    }

    /// Sends an OffsetCommit, or fails it locally when the member is not in a stable
    /// generation (AK `sendOffsetCommitRequest`: "not part of an active group").
    pub(crate) fn commit(
        &mut self,
        offsets: Vec<(Tp, u64)>,
        out: &mut ConsumerOutbox,
    ) -> Option<u64> {
        let in_group = self.member_id.is_some() && self.phase == Phase::Stable;
        if !(in_group || self.is_external()) || self.disconnected {
            out.note(ConsumerNote::Commit { ok: false });
            return None;
        }
        let request = self.next_request;
        self.next_request += 1;
        out.send(ToCoordinator::Commit {
            conn: self.conn,
            member_id: self.member_id.clone(),
            generation: self.generation,
            offsets,
            request,
        });
        Some(request)
    }

    /// Graceful close: commit (auto-commit), revoke, LeaveGroup, exit.
    pub(crate) fn close(&mut self, out: &mut ConsumerOutbox) {
        if self.params.auto_commit() && !self.poll_loop.owned.is_empty() {
            self.commit(self.positions(|_| true), out);
        }
        if !self.poll_loop.owned.is_empty() {
            out.note(ConsumerNote::Revoked { tps: self.owned(), cause: RevokeCause::Closed });
        }
        match self.membership {
            Membership::Classic => self.classic_close(out),
            Membership::Kip848(_) => self.kip848_close(out),
            Membership::Assigned(_) => {}
        }
        self.poll_loop.owned.clear();
        self.alive = false;
        out.note(ConsumerNote::Exited);
    }
}

impl Consumer {
    /// The consumer's facts (`crate::invariants`), in the order they are checked; they hold
    /// for a live incarnation (a dead one's state is frozen at its crash).
    pub const FACTS: &'static [Fact<Consumer>] = &[
        Consumer::batch_outside_poll,
        Consumer::batch_of_last_poll,
        Consumer::generation_has_member_id,
        Consumer::groupless_has_no_member_id,
        Consumer::groupless_stays_unjoined,
    ];

    /// The first of the consumer's facts that does not hold (none for a dead incarnation).
    pub fn broken(&self) -> Option<Broken> {
        if !self.alive {
            return None;
        }
        first_broken(self, Self::FACTS)
    }

    /// Asserts the consumer's facts (the world runs this after every event in debug builds
    /// and tests, for every live member); the panic names the one that broke.
    pub fn check_invariants(&self) {
        assert_holds(self.broken());
    }

    /// `consumer.batch_outside_poll`: the poll loop is in one place at a time: a batch in
    /// progress is not waiting for records in poll.
    fn batch_outside_poll(&self) -> Result<(), Broken> {
        let holds = !(self.poll_loop.batch.is_some() && self.poll_loop.in_poll);
        require(holds, "consumer.batch_outside_poll", || {
            format!("{}: a batch in progress while waiting in poll", self.name)
        })
    }

    /// `consumer.batch_of_last_poll`: the batch in progress belongs to the last poll.
    fn batch_of_last_poll(&self) -> Result<(), Broken> {
        let Some(batch) = &self.poll_loop.batch else { return Ok(()) };
        require(batch.epoch == self.poll_loop.epoch, "consumer.batch_of_last_poll", || {
            format!(
                "{}: batch of poll {} after poll {}",
                self.name, batch.epoch, self.poll_loop.epoch
            )
        })
    }

    /// `consumer.generation_has_member_id`: a group member syncing or stable has a member id.
    fn generation_has_member_id(&self) -> Result<(), Broken> {
        let in_group = matches!(self.membership, Membership::Classic | Membership::Kip848(_));
        let in_generation = matches!(self.phase, Phase::Syncing | Phase::Stable);
        let holds = !(in_group && in_generation) || self.member_id.is_some();
        require(holds, "consumer.generation_has_member_id", || {
            format!("{}: phase {:?} without a member id", self.name, self.phase)
        })
    }

    /// `consumer.groupless_has_no_member_id`: a member without a group has no member id.
    fn groupless_has_no_member_id(&self) -> Result<(), Broken> {
        let groupless = matches!(self.membership, Membership::Assigned(_));
        require(
            !groupless || self.member_id.is_none(),
            "consumer.groupless_has_no_member_id",
            || format!("{}: a member id without a group", self.name),
        )
    }

    /// `consumer.groupless_stays_unjoined`: a member without a group never joins one.
    fn groupless_stays_unjoined(&self) -> Result<(), Broken> {
        let groupless = matches!(self.membership, Membership::Assigned(_));
        let holds = !groupless || self.phase == Phase::Unjoined;
        require(holds, "consumer.groupless_stays_unjoined", || {
            format!("{}: phase {:?} without a group", self.name, self.phase)
        })
    }

    /// At the end of the run: reports the records of the batch in progress finished by `at`.
    pub fn flush_partial(&self, at: SimTime, out: &mut ConsumerOutbox) {
        if let Some(batch) = &self.poll_loop.batch {
            emit_processed(batch, Some(at), out);
        }
    }
}

/// Emits the processed records of `batch` (those finished by `cut`, if given).
pub(crate) fn emit_processed(batch: &Batch, cut: Option<SimTime>, out: &mut ConsumerOutbox) {
    out.notes.reserve(batch.parts.len());
    let mut index = 0;
    for (part, (tp, first, count)) in batch.parts.iter().enumerate() {
        let done = cut.map_or(*count, |cut| batch.times.done_by(index, *count, cut));
        if done > 0 {
            let times = batch.times.of_part(part, index, done as u64);
            out.note(ConsumerNote::Processed { tp: *tp, first: *first, times });
        }
        index += count;
    }
}

/// A batch's times as progressions, and its end, when processing is constant and every part's
/// arrivals are exactly evenly spaced. The arrivals go into `arrivals` (emptied first), which
/// comes back when they are not (to be kept for the next batch: no allocation a batch).
fn linear_times<L: LogView + ?Sized>(
    now: SimTime,
    parts: &[(Tp, u64, usize)],
    processing: &ProcessingSampler,
    env: &mut ConsumerEnv<'_, L>,
    mut arrivals: Vec<(SimTime, SimTime)>,
) -> Result<(BatchTimes, SimTime), Vec<(SimTime, SimTime)>> {
    let ProcessingSampler::Constant(each) = *processing else { return Err(arrivals) };
    let total: u64 = parts.iter().map(|p| p.2 as u64).sum();
    // The same sum as adding the processing time record by record.
    let end = each.as_nanos().checked_mul(total).and_then(|t| now.as_nanos().checked_add(t));
    let Some(end) = end else { return Err(arrivals) };
    arrivals.clear();
    for (tp, first, count) in parts {
        let Some(spacing) = env.log.exact_spacing(*tp, *first, *count as u64) else {
            return Err(arrivals);
        };
        arrivals.push((env.log.arrival(*tp, *first), spacing));
    }
    Ok((BatchTimes::Linear { start: now, each, arrivals }, SimTime::from_nanos(end)))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::types::{CgHeartbeatOk, JoinMeta, JoinOk, LeaveReason, ProtocolError};
    use sim_core::RngStreams;

    /// Every partition holds one record per 10 ms: offset k arrives at (k + 1) * 10 ms.
    /// Shared with the tests of the `external` submodule.
    pub(crate) struct TenMs;

    impl LogView for TenMs {
        fn log_end(&mut self, _: Tp, at: SimTime) -> u64 {
            at.as_millis() / 10
        }
        fn arrival(&mut self, _: Tp, offset: u64) -> SimTime {
            SimTime::from_millis((offset + 1) * 10)
        }
    }

    pub(crate) fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    pub(crate) fn tp(partition: u32) -> Tp {
        Tp { topic: 0, partition }
    }

    fn params(mode: RebalanceMode, assignor: AssignorName) -> ConsumerParams {
        ConsumerParams {
            mode,
            assignor,
            client: Client::Java,
            commit: CommitPolicy::Auto,
            enable_auto_commit: true,
            auto_commit_interval: t(5000),
            session_timeout: t(10_000),
            heartbeat_interval: t(3000),
            max_poll_interval: t(300_000),
            max_poll_records: 500,
            fetch_max_wait: t(500),
            offset_reset: OffsetReset::Earliest,
            one_way: t(1),
            processing: ProcessingSampler::Constant(SimTime::ZERO),
            static_membership: false,
            metadata_refresh: t(300_000),
            rebalance_listener: true,
            shared_client_id: None,
        }
    }

    #[derive(Clone)]
    struct Rig {
        consumer: Consumer,
        rng: SimRng,
        assignor_rng: SimRng,
        topics: Vec<Topic>,
    }

    impl Rig {
        fn new(mode: RebalanceMode, assignor: AssignorName) -> Rig {
            let conn = Conn { slot: 0, incarnation: 1 };
            let streams = RngStreams::new(1);
            Rig {
                consumer: Consumer::new(conn, "c0".into(), params(mode, assignor)),
                rng: streams.indexed("member", 0),
                assignor_rng: streams.stream("assignor"),
                topics: vec![Topic { name: "t".into(), partitions: 4 }],
            }
        }

        fn step(&mut self, now: SimTime, input: ConsumerInput) -> ConsumerOutbox {
            let mut out = ConsumerOutbox::default();
            self.with_env(|consumer, env| consumer.handle(now, input, env, &mut out));
            out
        }

        /// Runs `f` on the member and its environment (the 10 ms log).
        fn with_env<R>(
            &mut self,
            f: impl FnOnce(&mut Consumer, &mut ConsumerEnv<'_, TenMs>) -> R,
        ) -> R {
            let mut log = TenMs;
            let mut env = ConsumerEnv {
                log: &mut log,
                rng: &mut self.rng,
                assignor_rng: &mut self.assignor_rng,
                topics: &self.topics,
            };
            f(&mut self.consumer, &mut env)
        }

        /// Start, lead a group of itself and `c1-1`, sync `assigned` (committed at 0).
        fn stable(&mut self, assigned: Vec<Tp>) -> ConsumerOutbox {
            self.step(t(0), ConsumerInput::Start);
            let members = vec![meta("c0-0", vec![]), meta("c1-1", vec![])];
            let ok =
                JoinOk { member_id: "c0-0".into(), generation: 1, leader: "c0-0".into(), members };
            self.step(t(2), ConsumerInput::Message(ToMember::Join(Ok(ok))));
            let committed = assigned.iter().map(|tp| (*tp, Some(0))).collect();
            let sync = SyncOk { generation: 1, assigned, committed };
            self.step(t(4), ConsumerInput::Message(ToMember::Sync(Ok(sync))))
        }
    }

    /// The member's armed timers by slot, as its outboxes set and cancel them.
    #[derive(Default)]
    struct Timers(std::collections::BTreeMap<usize, (ConsumerTimer, SimTime)>);

    impl Timers {
        fn apply(&mut self, out: &ConsumerOutbox) {
            for (timer, at) in &out.timers {
                match at {
                    Some(at) => self.0.insert(timer.slot(), (*timer, *at)),
                    None => self.0.remove(&timer.slot()),
                };
            }
        }
    }

    impl Rig {
        /// Runs the member's own timers (no response ever comes back) from the state `out`
        /// left, up to `until`; returns the times of the commits it sent.
        fn commit_times_until(&mut self, out: &ConsumerOutbox, until: SimTime) -> Vec<SimTime> {
            let mut timers = Timers::default();
            timers.apply(out);
            let mut commits = Vec::new();
            for _ in 0..100_000 {
                let next = timers.0.values().min_by_key(|(timer, at)| (*at, timer.slot()));
                let Some(&(timer, at)) = next.filter(|(_, at)| *at <= until) else { break };
                timers.0.remove(&timer.slot());
                let out = self.step(at, ConsumerInput::Timer(timer));
                timers.apply(&out);
                let sent = out.sends.iter().filter(|m| matches!(m, ToCoordinator::Commit { .. }));
                commits.extend(sent.map(|_| at));
            }
            commits
        }
    }

    fn meta(id: &str, owned: Vec<Tp>) -> JoinMeta {
        let owned_generation = if owned.is_empty() { -1 } else { 1 };
        JoinMeta { member_id: id.into(), owned, owned_generation, group_instance_id: None }
    }

    #[test]
    fn start_sends_a_join_without_member_id() {
        let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
        let out = rig.step(t(0), ConsumerInput::Start);
        assert!(matches!(
            out.sends.as_slice(),
            [ToCoordinator::Join { member_id: None, owned, .. }] if owned.is_empty()
        ));
        assert_eq!(rig.consumer.phase(), Phase::Joining);
        // Nothing owned: the idle poll wakes after fetch.max.wait.ms.
        assert_eq!(
            out.timers,
            vec![
                (ConsumerTimer::PollWake { epoch: 1 }, None),
                (ConsumerTimer::Heartbeat, None),
                (ConsumerTimer::PollWake { epoch: 1 }, Some(t(500))),
            ]
        );
    }

    #[test]
    fn the_leader_runs_the_assignor_and_sends_it_with_sync() {
        let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
        rig.step(t(0), ConsumerInput::Start);
        let members = vec![meta("c0-0", vec![]), meta("c1-1", vec![])];
        let ok = JoinOk { member_id: "c0-0".into(), generation: 1, leader: "c0-0".into(), members };
        let out = rig.step(t(2), ConsumerInput::Message(ToMember::Join(Ok(ok))));
        // Range over 4 partitions and 2 members sorted by id: 0-1 to c0-0, 2-3 to c1-1.
        let expected =
            vec![("c0-0".to_string(), vec![tp(0), tp(1)]), ("c1-1".into(), vec![tp(2), tp(3)])];
        match out.sends.as_slice() {
            [ToCoordinator::Sync { generation: 1, assignment: Some(a), .. }] => {
                assert_eq!(a, &expected)
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn the_assignment_takes_effect_at_the_poll_and_starts_heartbeats() {
        let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
        let out = rig.stable(vec![tp(0), tp(1)]);
        // Idle in poll: the sync response is applied at once; positions start at the committed
        // offset 0; the first heartbeat is due 3 s after the sync response.
        assert!(out.timers.contains(&(ConsumerTimer::Heartbeat, Some(t(3004)))));
        assert!(out.notes.contains(&ConsumerNote::Assigned {
            owned: vec![tp(0), tp(1)],
            generation: 1,
            rejoining: false
        }));
        assert_eq!(rig.consumer.owned(), vec![tp(0), tp(1)]);
        // The next wake: offset 0 arrives at 10 ms and reaches the client at 11 ms.
        // (Polls so far: at the start, at the join response, at the sync response: epoch 3.)
        assert_eq!(out.timers.last(), Some(&(ConsumerTimer::PollWake { epoch: 3 }, Some(t(11)))));
        let out = rig.step(t(11), ConsumerInput::Timer(ConsumerTimer::PollWake { epoch: 3 }));
        // One record per partition; zero processing time: the batch ends at 11 ms.
        assert!(out.timers.contains(&(ConsumerTimer::BatchDone { epoch: 4 }, Some(t(11)))));
        let out = rig.step(t(11), ConsumerInput::Timer(ConsumerTimer::BatchDone { epoch: 4 }));
        let processed: Vec<(Tp, u64, usize)> = out
            .notes
            .iter()
            .filter_map(|n| match n {
                ConsumerNote::Processed { tp, first, times } => {
                    Some((*tp, *first, times.len() as usize))
                }
                _ => None,
            })
            .collect();
        // The first partition read rotates from fetch to fetch: the second fetch starts at t-1.
        assert_eq!(processed, vec![(tp(1), 0, 1), (tp(0), 0, 1)]);
    }

    #[test]
    fn eager_rejoin_commits_and_revokes_everything() {
        let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
        rig.stable(vec![tp(0), tp(1)]);
        let error = ToMember::Heartbeat(Some(ProtocolError::RebalanceInProgress));
        let out = rig.step(t(3006), ConsumerInput::Message(error));
        // Idle in poll: commit the positions (nothing fetched yet: 0), revoke, rejoin.
        assert!(matches!(
            out.sends.as_slice(),
            [ToCoordinator::Commit { offsets, .. }, ToCoordinator::Join { owned, .. }]
                if offsets == &vec![(tp(0), 0), (tp(1), 0)] && owned == &vec![tp(0), tp(1)]
        ));
        assert!(out.notes.contains(&ConsumerNote::Revoked {
            tps: vec![tp(0), tp(1)],
            cause: RevokeCause::StopTheWorld
        }));
        assert!(rig.consumer.owned().is_empty());
    }

    /// Issue 25 item 6b (AK `AbstractCoordinator.HeartbeatResponseHandler`): a heartbeat
    /// answered ILLEGAL_GENERATION keeps the member id, UNKNOWN_MEMBER_ID clears it; either
    /// way the generation is reset and the partitions are lost (`onJoinPrepare`: no
    /// generation), so the rejoin reports none and commits nothing.
    #[test]
    fn illegal_generation_keeps_the_member_id_unknown_member_clears_it() {
        for (error, kept) in [
            (ProtocolError::IllegalGeneration, Some("c0-0".to_string())),
            (ProtocolError::UnknownMemberId, None),
        ] {
            let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
            rig.stable(vec![tp(0), tp(1)]);
            let out = rig.step(t(3006), ConsumerInput::Message(ToMember::Heartbeat(Some(error))));
            let join = out.sends.iter().find_map(|m| match m {
                ToCoordinator::Join { member_id, owned, .. } => Some((member_id, owned)),
                _ => None,
            });
            assert_eq!(join, Some((&kept, &Vec::new())), "{error:?}: {:?}", out.sends);
            assert!(!out.sends.iter().any(|m| matches!(m, ToCoordinator::Commit { .. })));
            let lost = ConsumerNote::Lost { tps: vec![tp(0), tp(1)] };
            assert!(out.notes.contains(&lost), "{error:?}: {:?}", out.notes);
        }
    }

    /// Drives a cooperative member (leader `c1-1`, max.poll.records 10,000) through a
    /// rebalance whose round 1 takes t-1 away: the sends at the rejoin of 3.006 s and at the
    /// round-1 assignment of 3.010 s, and the notes of the latter.
    fn cooperative_round_one(client: Client) -> [ConsumerOutbox; 2] {
        let mut rig = Rig::new(RebalanceMode::Cooperative, AssignorName::CooperativeSticky);
        rig.consumer.params.max_poll_records = 10_000;
        rig.consumer.params.client = client;
        rig.stable(vec![tp(0), tp(1)]);
        let error = ToMember::Heartbeat(Some(ProtocolError::RebalanceInProgress));
        let rejoin = rig.step(t(3006), ConsumerInput::Message(error));
        // The poll rejoins and keeps consuming: offsets 0..300 of both partitions (arrived by
        // 3.005 s) form a batch; nothing is revoked.
        assert!(rejoin.timers.contains(&(ConsumerTimer::BatchDone { epoch: 4 }, Some(t(3006)))));
        let out = rig.step(t(3006), ConsumerInput::Timer(ConsumerTimer::BatchDone { epoch: 4 }));
        assert!(!out.notes.iter().any(|n| matches!(n, ConsumerNote::Revoked { .. })));
        assert_eq!(rig.consumer.owned(), vec![tp(0), tp(1)]);
        let ok = JoinOk {
            member_id: "c0-0".into(),
            generation: 2,
            leader: "c1-1".into(),
            members: vec![],
        };
        rig.step(t(3008), ConsumerInput::Message(ToMember::Join(Ok(ok))));
        let sync =
            SyncOk { generation: 2, assigned: vec![tp(0)], committed: vec![(tp(0), Some(0))] };
        let round_one = rig.step(t(3010), ConsumerInput::Message(ToMember::Sync(Ok(sync))));
        assert!(round_one
            .notes
            .contains(&ConsumerNote::Revoked { tps: vec![tp(1)], cause: RevokeCause::Revoked }));
        assert!(round_one.notes.contains(&ConsumerNote::Assigned {
            owned: vec![tp(0)],
            generation: 2,
            rejoining: true
        }));
        [rejoin, round_one]
    }

    /// Java (AK `ConsumerCoordinator.onJoinPrepare` commits before every JoinGroup;
    /// `onJoinComplete` revokes without a commit): the rejoin of 3.006 s commits the positions
    /// (0: nothing fetched yet) before its JoinGroup; round 1 revokes t-1 without committing
    /// its 300 consumed records, and the round-2 JoinGroup's commit covers t-0 only (300).
    #[test]
    fn java_cooperative_commits_before_each_join_and_not_at_revocation() {
        let [rejoin, round_one] = cooperative_round_one(Client::Java);
        assert!(matches!(
            rejoin.sends.as_slice(),
            [ToCoordinator::Commit { offsets, .. }, ToCoordinator::Join { owned, .. }]
                if offsets == &vec![(tp(0), 0), (tp(1), 0)] && owned.len() == 2
        ));
        assert!(matches!(
            round_one.sends.as_slice(),
            [ToCoordinator::Commit { offsets, .. }, ToCoordinator::Join { owned, .. }]
                if offsets == &vec![(tp(0), 300)] && owned == &vec![tp(0)]
        ));
    }

    /// librdkafka (commits what it unassigns, `rd_kafka_assignment_serve_removals`): no commit
    /// before the cooperative JoinGroup; round 1 commits t-1 at 300 as it revokes it, then
    /// rejoins.
    #[test]
    fn librdkafka_cooperative_commits_what_it_revokes() {
        let [rejoin, round_one] = cooperative_round_one(Client::Librdkafka);
        assert!(matches!(
            rejoin.sends.as_slice(),
            [ToCoordinator::Join { owned, .. }] if owned.len() == 2
        ));
        assert!(matches!(
            round_one.sends.as_slice(),
            [ToCoordinator::Commit { offsets, .. }, ToCoordinator::Join { owned, .. }]
                if offsets == &vec![(tp(1), 300)] && owned == &vec![tp(0)]
        ));
    }

    /// AK `ConsumerCoordinator.onJoinComplete` restarts the auto-commit deadline: the
    /// assignment takes effect at 4 ms, so the first commit is due at 5.004 s. Polls run at
    /// x.xx1 s (a record every 10 ms reaching the client 1 ms after it arrives) and wait until
    /// the next one, but a waiting poll also wakes when the commit is due: commits go out at
    /// 5.004 s and 10.004 s (with the timer from the process start, 0: 5.001 and 10.001 s).
    #[test]
    fn java_auto_commit_timer_restarts_when_the_assignment_takes_effect() {
        let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
        let out = rig.stable(vec![tp(0), tp(1)]);
        assert_eq!(rig.consumer.auto_commit_deadline(), t(5004));
        assert_eq!(rig.consumer.loud_at(), t(5004));
        assert_eq!(rig.commit_times_until(&out, t(12_000)), vec![t(5004), t(10_004)]);
    }

    /// An auto-commit overdue in a classic rebalance bounds no step ([`Consumer::loud_at`]): a
    /// cooperative Java member stable from 4 ms (due 5.004 s) is told at 3.006 s that a
    /// rebalance is in progress and rejoins at once (idle in poll: its commit and JoinGroup);
    /// no response comes. Its polls at x.xx1 s wait for the next record, and the one of
    /// 5.001 s wakes at the deadline, 5.004 s: until then the deadline is the bound. That poll
    /// commits nothing (AK `ConsumerCoordinator.poll` returns before
    /// `maybeAutoCommitOffsetsAsync` while a rebalance is pending), and no later poll waits
    /// for the overdue deadline: from it to 12 s every step sends nothing, the member stays
    /// quiet, and there is no bound. The JoinGroup and SyncGroup responses (12 s and 12.003 s,
    /// each waking the waiting poll, which handles it) end the rebalance: due again at
    /// 17.003 s.
    #[test]
    fn an_auto_commit_overdue_in_a_classic_rebalance_bounds_no_step() {
        let mut rig = Rig::new(RebalanceMode::Cooperative, AssignorName::CooperativeSticky);
        rig.stable(vec![tp(0), tp(1)]);
        assert_eq!(rig.consumer.loud_at(), t(5004));
        let error = ToMember::Heartbeat(Some(ProtocolError::RebalanceInProgress));
        let rejoin = rig.step(t(3006), ConsumerInput::Message(error));
        assert!(rejoin.sends.iter().any(|m| matches!(m, ToCoordinator::Join { .. })));
        let mut timers = Timers::default();
        timers.apply(&rejoin);
        let mut steps = Vec::new();
        loop {
            let next = timers.0.values().min_by_key(|(timer, at)| (*at, timer.slot()));
            let Some(&(timer, at)) = next.filter(|(_, at)| *at <= t(12_000)) else { break };
            timers.0.remove(&timer.slot());
            let loud = rig.consumer.loud_at();
            let out = rig.step(at, ConsumerInput::Timer(timer));
            timers.apply(&out);
            assert!(out.sends.is_empty(), "{at:?}: {:?}", out.sends);
            assert!(rig.consumer.poll_loop_is_quiet(), "{at:?}");
            steps.push((at, loud));
        }
        let (before, after): (Vec<_>, Vec<_>) = steps.iter().partition(|(at, _)| *at < t(5004));
        assert!(before.iter().all(|&(_, loud)| loud == t(5004)), "{before:?}");
        assert_eq!(after.first(), Some(&(t(5004), t(5004))), "the wait cut short at the deadline");
        let bounded = after[1..].iter().filter(|&&(_, loud)| loud != SimTime::MAX).count();
        assert_eq!(bounded, 0, "steps after 5.004 s with a bound");
        assert!(after.len() > 600, "steps from 5.004 s to 12 s: {}", after.len());
        // The responses wake the waiting poll, which handles each at once.
        let ok = JoinOk {
            member_id: "c0-0".into(),
            generation: 2,
            leader: "c1-1".into(),
            members: vec![],
        };
        let join = rig.step(t(12_000), ConsumerInput::Message(ToMember::Join(Ok(ok))));
        assert!(matches!(join.sends.as_slice(), [ToCoordinator::Sync { .. }]), "{:?}", join.sends);
        assert_eq!(rig.consumer.loud_at(), SimTime::MAX, "still in the rebalance");
        let assigned = vec![tp(0), tp(1)];
        let committed = vec![(tp(0), Some(0)), (tp(1), Some(0))];
        let ok = SyncOk { generation: 2, assigned, committed };
        rig.step(t(12_003), ConsumerInput::Message(ToMember::Sync(Ok(ok))));
        assert_eq!(rig.consumer.loud_at(), t(17_003));
    }

    /// librdkafka's background timer runs from the start (0): due at 5 s whatever the
    /// assignment; nothing commits inside poll.
    #[test]
    fn librdkafka_auto_commit_timer_runs_from_the_start() {
        let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
        rig.consumer.params.client = Client::Librdkafka;
        let out = rig.stable(vec![tp(0), tp(1)]);
        assert_eq!(rig.consumer.auto_commit_deadline(), SimTime::MAX);
        // Its own AutoCommit timer (armed at the start for 5 s) is not in the sync's outbox.
        assert!(rig.commit_times_until(&out, t(12_000)).is_empty());
    }

    /// AK `ClassicKafkaConsumer.pollForFetches` bounds an idle poll's wait by
    /// `timeToNextPoll` (the auto-commit's remaining time): assigned nothing at 4 ms, a poll
    /// at 4.8 s (fetch.max.wait.ms 500) wakes at 5.004 s, not 5.3 s; librdkafka at 5.3 s.
    #[test]
    fn java_idle_poll_wakes_when_the_commit_is_due() {
        let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
        rig.stable(vec![]);
        assert_eq!(rig.consumer.next_wake(t(4800), SimTime::MAX), t(5004));
        assert_eq!(rig.consumer.next_wake(t(4000), SimTime::MAX), t(4500));
        rig.consumer.params.client = Client::Librdkafka;
        assert_eq!(rig.consumer.next_wake(t(4800), SimTime::MAX), t(5300));
    }

    /// Constant processing (1 ms a record): a batch of evenly spaced records is linear and
    /// fills the buffer of linear times; a batch with a part not known to be evenly spaced is
    /// listed, and gives that buffer back for the next linear batch instead of dropping it.
    #[test]
    fn a_batch_that_is_not_linear_keeps_the_buffer_of_linear_times() {
        /// The 10 ms log, with partition 0 known to be evenly spaced and partition 1 not.
        struct HalfSpaced;
        impl LogView for HalfSpaced {
            fn log_end(&mut self, tp: Tp, at: SimTime) -> u64 {
                TenMs.log_end(tp, at)
            }
            fn arrival(&mut self, tp: Tp, offset: u64) -> SimTime {
                TenMs.arrival(tp, offset)
            }
            fn exact_spacing(&mut self, tp: Tp, _: u64, _: u64) -> Option<SimTime> {
                (tp.partition == 0).then_some(t(10))
            }
        }
        let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
        rig.consumer.params.processing = ProcessingSampler::Constant(t(1));
        let mut log = HalfSpaced;
        let mut env = ConsumerEnv {
            log: &mut log,
            rng: &mut rig.rng,
            assignor_rng: &mut rig.assignor_rng,
            topics: &rig.topics,
        };
        let consumer = &mut rig.consumer;
        let linear = consumer.timed_batch(t(100), vec![(tp(0), 0, 3)], None, &mut env);
        assert!(matches!(linear.times, BatchTimes::Linear { .. }), "{:?}", linear.times);
        assert_eq!(linear.end, t(103));
        consumer.poll_loop.keep_buffers(linear);
        let capacity = consumer.poll_loop.spare.arrivals.capacity();
        assert!(capacity >= 1, "the linear batch's buffer is kept");
        let parts = vec![(tp(0), 3, 2), (tp(1), 0, 2)];
        let mixed = consumer.timed_batch(t(200), parts, None, &mut env);
        let BatchTimes::Listed { arrivals, ends } = &mixed.times else {
            panic!("a listed batch: {:?}", mixed.times)
        };
        assert_eq!(arrivals, &[t(40), t(50), t(10), t(20)]);
        assert_eq!(ends, &[t(201), t(202), t(203), t(204)]);
        assert_eq!(consumer.poll_loop.spare.arrivals.capacity(), capacity, "given back");
    }

    /// The fetch rotation: each fetch starts from the next owned partition (the cursor mod
    /// their count) and wraps around until `max.poll.records`. Three partitions of the 10 ms
    /// log, each read from offset 0 at 100 ms (offsets 0-8 arrived by the visible 99 ms: 9
    /// records each), 20 records a poll: 9 from the first in rotation, 9 from the second, 2
    /// from the third; the next fetch starts one partition later.
    #[test]
    fn the_fetch_starts_from_the_next_partition_and_wraps_around() {
        let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
        rig.consumer.params.max_poll_records = 20;
        rig.stable(vec![tp(0), tp(1), tp(2)]);
        assert!(rig.consumer.poll_loop.batch.is_none(), "nothing arrived by the sync");
        for _ in 0..4 {
            rig.consumer.poll_loop.owned.values_mut().for_each(|p| *p = 0);
            let cursor = rig.consumer.poll_loop.cursor;
            let batch = rig.with_env(|c, env| c.fetch(t(100), env)).expect("records");
            let at = |k: usize| tp(((cursor + k) % 3) as u32);
            assert_eq!(batch.parts, vec![(at(0), 0, 9), (at(1), 0, 9), (at(2), 0, 2)]);
            assert_eq!(rig.consumer.poll_loop.cursor, cursor + 1);
        }
    }

    /// Partition `p` holds one record per `p + 3` ms: offset `k` arrives at `(k + 1)(p + 3)` ms.
    struct Staggered;

    impl LogView for Staggered {
        fn log_end(&mut self, tp: Tp, at: SimTime) -> u64 {
            at.as_millis() / (u64::from(tp.partition) + 3)
        }
        fn arrival(&mut self, tp: Tp, offset: u64) -> SimTime {
            t((offset + 1) * (u64::from(tp.partition) + 3))
        }
    }

    /// A sink that notes what a walk took and reads the log plainly.
    #[derive(Default, Debug, PartialEq, Eq)]
    struct Noted(Vec<(Tp, usize, u64, usize)>);

    impl FetchSink for Noted {
        fn read<L: LogView + ?Sized>(
            &mut self,
            log: &mut L,
            tp: Tp,
            _place: usize,
            (at, known, max): (SimTime, u64, u64),
        ) -> (u64, Option<SimTime>) {
            log.read_from(tp, at, known, max)
        }
        fn took(&mut self, tp: Tp, place: usize, first: u64, count: usize) {
            self.0.push((tp, place, first, count));
        }
    }

    proptest::proptest! {
        /// The masked walk of a few partitions takes what the walk in rotation takes: the
        /// same parts in the same order, the same positions after, the same answer (the
        /// earliest arrival when nothing was taken) and the same earliest arrival known,
        /// from any positions (some without one), rotation start, `max.poll.records` and time.
        #[test]
        fn the_masked_walk_takes_what_the_walk_in_rotation_takes(
            positions in proptest::collection::vec(proptest::option::weighted(0.9, 0u64..40), 1..9),
            start in 0usize..8,
            max_poll_records in 1u32..40,
            at_ms in 0u64..200,
            walks in 1usize..4,
        ) {
            let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
            rig.consumer.params.max_poll_records = max_poll_records;
            rig.stable((0..positions.len() as u32).map(tp).collect());
            rig.consumer.poll_loop.batch = None;
            let owned = rig.consumer.poll_loop.owned.values_mut();
            owned.zip(&positions).for_each(|(p, s)| *p = s.unwrap_or(NO_POSITION));
            let (mut masked, mut rotation) = (rig.consumer.clone(), rig.consumer.clone());
            let start = start % positions.len();
            for walk in 0..walks {
                let at = t(at_ms + 7 * walk as u64);
                let (mut a, mut b) = (Noted::default(), Noted::default());
                let got = masked.fetch_walk_masked(start, at, &mut Staggered, &mut a);
                let want = rotation.fetch_walk_in_rotation(start, at, &mut Staggered, &mut b);
                proptest::prop_assert_eq!(got, want);
                proptest::prop_assert_eq!(&a, &b);
                let (got, want) = (&masked.poll_loop.owned, &rotation.poll_loop.owned);
                proptest::prop_assert!(got.iter().eq(want.iter()));
                proptest::prop_assert_eq!(got.earliest(), want.earliest());
            }
        }
    }

    /// The 10 ms log, counting the questions a fetch asks it.
    #[derive(Default)]
    struct Counted {
        asked: usize,
    }

    impl LogView for Counted {
        fn log_end(&mut self, tp: Tp, at: SimTime) -> u64 {
            self.asked += 1;
            TenMs.log_end(tp, at)
        }
        fn arrival(&mut self, tp: Tp, offset: u64) -> SimTime {
            self.asked += 1;
            TenMs.arrival(tp, offset)
        }
    }

    /// A fetch that found nothing new remembers the earliest arrival at its positions, and
    /// until then finds nothing again without asking the log; any change of the positions
    /// forgets it. Two partitions of the 10 ms log (offset `k` arrives at `(k + 1) x 10` ms),
    /// at offsets 10 (arriving at 110 ms) and 12 (130 ms); a fetch sees what arrived one
    /// network delay (1 ms) before it:
    /// - at 106 ms nothing arrived: the wait is for 110 ms, after asking both arrivals;
    /// - at 109 ms the same, asking nothing, and the rotation still moves on;
    /// - at 116 ms offset 10 of the first is taken (offset 11 arrives at 120 ms): the log is
    ///   asked where it ends, when offset 11 arrives, and offset 10's arrival for the batch;
    /// - at 119 ms nothing again, for 120 ms, asking nothing;
    /// - after the first partition goes back to offset 10, at 119 ms that record is taken
    ///   again (a stale memory would have waited for 120 ms).
    #[test]
    fn a_fetch_that_found_nothing_finds_nothing_again_without_reading_the_log() {
        let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
        rig.stable(vec![tp(0), tp(1)]);
        rig.consumer.poll_loop.batch = None;
        let starts = [10, 12];
        rig.consumer.poll_loop.owned.values_mut().zip(starts).for_each(|(p, s)| *p = s);
        let mut log = Counted::default();
        let mut fetch = |rig: &mut Rig, at_ms: u64| {
            let asked = log.asked;
            let cursor = rig.consumer.poll_loop.cursor;
            let Rig { consumer, rng, assignor_rng, topics } = rig;
            let mut env = ConsumerEnv { log: &mut log, rng, assignor_rng, topics };
            let found = consumer.fetch(t(at_ms), &mut env).map(|batch| batch.parts);
            assert_eq!(rig.consumer.poll_loop.cursor, cursor + 1, "the rotation moves on");
            (found, log.asked - asked)
        };
        assert_eq!(fetch(&mut rig, 106), (Err(t(110)), 2));
        assert_eq!(fetch(&mut rig, 109), (Err(t(110)), 0));
        assert_eq!(fetch(&mut rig, 116), (Ok(vec![(tp(0), 10, 1)]), 3));
        assert_eq!(fetch(&mut rig, 119), (Err(t(120)), 0));
        rig.consumer.poll_loop.owned.values_mut().zip(starts).for_each(|(p, s)| *p = s);
        assert_eq!(fetch(&mut rig, 119).0, Ok(vec![(tp(0), 10, 1)]));
    }

    /// A quiet step as fast stepping runs it aside (`end_quiet_step`, then `quiet_poll`) is
    /// `handle(Timer(step))` without an outbox. A stable member owns two partitions of the
    /// 10 ms log (200 records/s reach it) and processes each record in an exponential time of
    /// mean 4 ms (80% busy: batches of one to several records, and idle waits). From the same
    /// state, both ways give, step after step until 4.9 s (the auto-commit is due at 5.004 s,
    /// the first step that is not quiet), the same next step and due time, the same records
    /// with the same times, and the same loop state, rotation and random stream; and some
    /// steps are each kind (a batch ends, a waiting poll wakes).
    #[test]
    fn a_quiet_step_is_its_timer_handled_without_an_outbox() {
        let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
        let mean_ns = t(4).as_nanos() as f64;
        let exp = rand_distr::Exp::new(1.0 / mean_ns).expect("positive rate");
        rig.consumer.params.processing = ProcessingSampler::Exponential(exp);
        rig.stable(vec![tp(0), tp(1)]);
        let (mut batches, mut wakes) = (0, 0);
        let mut next = rig.consumer.poll_loop.poll_step().expect("a pending step");
        let mut at = t(5);
        while at < t(4900) {
            assert!(rig.consumer.poll_loop_is_quiet() && at < rig.consumer.loud_at());
            let mut handled = rig.clone();
            let out = handled.step(at, ConsumerInput::Timer(next));
            let armed: Vec<_> =
                out.timers.iter().filter(|(t, a)| is_step(*t) && a.is_some()).collect();
            let &&(step_then, Some(due_then)) = armed.last().expect("a next step") else {
                unreachable!()
            };
            let processed = out.notes.to_vec();
            let (finished, (step, due)) = rig.with_env(|consumer, env| {
                let finished = match consumer.end_quiet_step(next) {
                    QuietStep::Finished => consumer.poll_loop.batch.take(),
                    QuietStep::Woke => None,
                    QuietStep::Stale => panic!("the pending step is not stale"),
                };
                (finished, consumer.quiet_poll(at, env))
            });
            let mut quiet = ConsumerOutbox::default();
            if let Some(batch) = &finished {
                emit_processed(batch, None, &mut quiet);
                batches += 1;
            } else {
                wakes += 1;
            }
            assert_eq!((step, due), (step_then, due_then), "the next step after {at:?}");
            assert_eq!(quiet.notes, processed, "the records of the step at {at:?}");
            assert!(processed.iter().all(|n| matches!(n, ConsumerNote::Processed { .. })));
            let (state, state_then) =
                (rig.consumer.poll_loop.loop_state(), handled.consumer.poll_loop.loop_state());
            assert_eq!(format!("{state:?}"), format!("{state_then:?}"));
            assert_eq!(rig.rng.get_word_pos(), handled.rng.get_word_pos(), "the same stream");
            rig.consumer = handled.consumer;
            (next, at) = (step, due);
        }
        assert!(batches > 200 && wakes > 50, "{batches} batches, {wakes} wakes");

        fn is_step(timer: ConsumerTimer) -> bool {
            matches!(timer, ConsumerTimer::BatchDone { .. } | ConsumerTimer::PollWake { .. })
        }
    }

    /// Java handles a JoinGroup response inside `poll()` (AK `joinGroupIfNeeded`; the heartbeat
    /// thread does no I/O while joining): the member stalls 2 s from 1 ms (busy outside a
    /// batch) and its JoinGroup response arrives at 2 ms; it leads, but its assignment and
    /// SyncGroup go out at its next poll, 2.001 s. librdkafka sends them at 2 ms.
    #[test]
    fn java_handles_the_join_response_at_its_next_poll() {
        for (client, sync_at) in [(Client::Java, t(2001)), (Client::Librdkafka, t(2))] {
            let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
            rig.consumer.params.client = client;
            rig.step(t(0), ConsumerInput::Start);
            let stall = rig.step(t(1), ConsumerInput::Stall(t(2000)));
            assert!(stall.timers.contains(&(ConsumerTimer::BatchDone { epoch: 2 }, Some(t(2001)))));
            let members = vec![meta("c0-0", vec![]), meta("c1-1", vec![])];
            let ok =
                JoinOk { member_id: "c0-0".into(), generation: 1, leader: "c0-0".into(), members };
            let mut sent = Vec::new();
            let out = rig.step(t(2), ConsumerInput::Message(ToMember::Join(Ok(ok))));
            sent.extend(out.sends.iter().map(|m| (t(2), m.clone())));
            let end =
                rig.step(t(2001), ConsumerInput::Timer(ConsumerTimer::BatchDone { epoch: 2 }));
            sent.extend(end.sends.iter().map(|m| (t(2001), m.clone())));
            assert!(
                matches!(
                    sent.as_slice(),
                    [(at, ToCoordinator::Sync { assignment: Some(a), .. })] if *at == sync_at && a.len() == 2
                ),
                "{client:?}: {sent:?}"
            );
            assert_eq!(rig.consumer.phase(), Phase::Syncing, "{client:?}");
        }
    }

    #[test]
    fn librdkafka_checks_the_poll_timer_on_a_500_ms_grid() {
        let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
        rig.consumer.params.client = Client::Librdkafka;
        rig.consumer.params.max_poll_interval = t(1200);
        rig.consumer.started = t(100);
        // A poll at 0.350 s expires at 1.550 s; checks run at 0.1 + k * 0.5 s: 1.600 s.
        assert_eq!(rig.consumer.poll_deadline(t(350)), t(1600));
        rig.consumer.params.client = Client::Java;
        assert_eq!(rig.consumer.poll_deadline(t(350)), t(1550));
    }

    #[test]
    fn poll_timeout_leaves_and_the_late_commit_fails() {
        let mut rig = Rig::new(RebalanceMode::Eager, AssignorName::Range);
        rig.consumer.params.commit = CommitPolicy::SyncPerBatch;
        rig.stable(vec![tp(0)]);
        rig.step(t(11), ConsumerInput::Timer(ConsumerTimer::PollWake { epoch: 3 }));
        // A 400 s stall inside the batch polled at 11 ms: the poll timer fires at 300.011 s.
        rig.step(t(11), ConsumerInput::Stall(SimTime::from_secs(400)));
        let expiry = SimTime::from_millis(300_011);
        let out = rig.step(expiry, ConsumerInput::Timer(ConsumerTimer::MaxPoll { epoch: 4 }));
        assert!(matches!(
            out.sends.as_slice(),
            [ToCoordinator::Leave { reason: LeaveReason::MaxPollExpired, .. }]
        ));
        assert_eq!(out.notes, vec![ConsumerNote::MaxPollExpired]);
        assert_eq!(rig.consumer.phase(), Phase::Unjoined);
        // The batch ends at 400.011 s: its synchronous commit fails without being sent, and
        // the next poll reports the partition lost and joins as a new member.
        let end = SimTime::from_millis(400_011);
        let out = rig.step(end, ConsumerInput::Timer(ConsumerTimer::BatchDone { epoch: 4 }));
        assert!(out.notes.contains(&ConsumerNote::Commit { ok: false }));
        assert!(out.notes.contains(&ConsumerNote::Lost { tps: vec![tp(0)] }));
        assert!(matches!(out.sends.as_slice(), [ToCoordinator::Join { member_id: None, .. }]));
    }

    /// A KIP-848 response to a membership the member gave up is dropped (the Java client has
    /// one heartbeat in flight at a time, so it never sees one: `answers_current_membership`).
    /// c0 joins at 0 and gets t-0 as c0-1 at 2 ms, acknowledging it at once (issue 25 item
    /// 4); a response naming another id at 3 ms changes nothing; fenced at 4 ms, it drops t-0
    /// and joins again; the answer to its 2 ms acknowledgement (still c0-1) comes at 5 ms and is
    /// dropped, so the join's answer at 6 ms (c0-2, t-1) is the membership it takes.
    #[test]
    fn kip848_drops_a_response_of_an_old_membership() {
        let mut rig = Rig::new(RebalanceMode::Consumer, AssignorName::Range);
        let joins = |out: &ConsumerOutbox| {
            out.sends
                .iter()
                .filter(
                    |m| matches!(m, ToCoordinator::ConsumerHeartbeat(hb) if hb.member_epoch == 0),
                )
                .count()
        };
        let ok = |id: &str, epoch: i32, p: u32| {
            let (assigned, committed) = (vec![tp(p)], vec![(tp(p), Some(0))]);
            let heartbeat_interval = t(5000);
            let member_id = id.to_string();
            let ok = CgHeartbeatOk {
                member_id,
                member_epoch: epoch,
                heartbeat_interval,
                assigned,
                committed,
                stable: true,
            };
            ConsumerInput::Message(ToMember::ConsumerHeartbeat(Ok(ok)))
        };
        assert_eq!(joins(&rig.step(t(0), ConsumerInput::Start)), 1);
        let first = rig.step(t(2), ok("c0-1", 1, 0));
        assert!(matches!(
            first.sends.as_slice(),
            [ToCoordinator::ConsumerHeartbeat(hb)] if hb.member_epoch == 1
                && hb.owned.as_deref() == Some(&[tp(0)][..])
        ));
        let other = rig.step(t(3), ok("c9-9", 7, 3));
        assert!(other.sends.is_empty() && other.notes.is_empty());
        assert_eq!(
            (rig.consumer.member_id.as_deref(), rig.consumer.owned()),
            (Some("c0-1"), vec![tp(0)])
        );
        let fenced = ConsumerInput::Message(ToMember::ConsumerHeartbeat(Err(
            ProtocolError::FencedMemberEpoch,
        )));
        let out = rig.step(t(4), fenced);
        assert_eq!(joins(&out), 1);
        assert!(out.notes.contains(&ConsumerNote::Lost { tps: vec![tp(0)] }));
        let stale = rig.step(t(5), ok("c0-1", 1, 0));
        assert!(stale.sends.is_empty() && stale.notes.is_empty());
        assert_eq!((rig.consumer.member_id.as_deref(), rig.consumer.owned()), (None, vec![]));
        rig.step(t(6), ok("c0-2", 2, 1));
        assert_eq!(
            (rig.consumer.member_id.as_deref(), rig.consumer.owned()),
            (Some("c0-2"), vec![tp(1)])
        );
    }

    /// Whether a KIP-848 response changes nothing (fast stepping leaves a busy member's steps
    /// aside for it): c0 joins and takes t-0 and t-1 as c0-1 at epoch 1. The same response
    /// again changes nothing, its committed offsets listed in any order or only in part too;
    /// a committed offset of a partition it does not own, one partition fewer, another
    /// partition in place of one, another epoch or another id change something.
    #[test]
    fn kip848_response_changes_nothing_only_for_the_same_membership_and_partitions() {
        let mut rig = Rig::new(RebalanceMode::Consumer, AssignorName::Range);
        let ok = |id: &str, epoch: i32, assigned: &[u32], committed: &[u32]| CgHeartbeatOk {
            member_id: id.to_string(),
            member_epoch: epoch,
            heartbeat_interval: t(5000),
            assigned: assigned.iter().map(|p| tp(*p)).collect(),
            committed: committed.iter().map(|p| (tp(*p), Some(0))).collect(),
            stable: true,
        };
        rig.step(t(0), ConsumerInput::Start);
        let first = ok("c0-1", 1, &[0, 1], &[0, 1]);
        rig.step(t(2), ConsumerInput::Message(ToMember::ConsumerHeartbeat(Ok(first.clone()))));
        assert_eq!(rig.consumer.owned(), vec![tp(0), tp(1)]);
        let unchanged = |ok: &CgHeartbeatOk| rig.consumer.cg_response_changes_nothing(ok);
        assert!(unchanged(&first));
        assert!(unchanged(&ok("c0-1", 1, &[0, 1], &[1, 0])));
        assert!(unchanged(&ok("c0-1", 1, &[0, 1], &[1])));
        assert!(!unchanged(&ok("c0-1", 1, &[0, 1], &[0, 2])));
        assert!(!unchanged(&ok("c0-1", 1, &[0], &[0])));
        assert!(!unchanged(&ok("c0-1", 1, &[0, 2], &[0, 2])));
        assert!(!unchanged(&ok("c0-1", 2, &[0, 1], &[0, 1])));
        assert!(!unchanged(&ok("c0-2", 1, &[0, 1], &[0, 1])));
    }

    /// A KIP-848 response that takes a partition away, reaching a member busy outside
    /// `poll()` (stalled 5 s from 3 ms): the Java client with a rebalance listener runs
    /// `onPartitionsRevoked` in the application thread (AK
    /// `ConsumerMembershipManager.invokeOnPartitionsRevokedCallback` ->
    /// `enqueueConsumerRebalanceListenerCallback`; `AsyncKafkaConsumer.poll` ->
    /// `processBackgroundEvents`), so the revocation, its commit and the acknowledgement wait
    /// for the poll at the stall's end (5.003 s); without a listener, and for librdkafka, they
    /// happen when the response arrives (10 ms). The member epoch is taken at once either way.
    #[test]
    fn kip848_java_listener_reconciles_at_the_next_poll() {
        let ok = |epoch: i32, parts: &[u32]| {
            let assigned: Vec<Tp> = parts.iter().map(|p| tp(*p)).collect();
            let committed = assigned.iter().map(|tp| (*tp, Some(0))).collect();
            let member_id = "c0-1".to_string();
            let heartbeat_interval = t(5000);
            let ok = CgHeartbeatOk {
                member_id,
                member_epoch: epoch,
                heartbeat_interval,
                assigned,
                committed,
                stable: true,
            };
            ConsumerInput::Message(ToMember::ConsumerHeartbeat(Ok(ok)))
        };
        let revoked = |out: &ConsumerOutbox| {
            out.notes
                .contains(&ConsumerNote::Revoked { tps: vec![tp(1)], cause: RevokeCause::Revoked })
        };
        let ack = |out: &ConsumerOutbox| {
            out.sends.iter().any(|m| {
                matches!(m, ToCoordinator::ConsumerHeartbeat(hb)
                    if hb.member_epoch == 2 && hb.owned.as_deref() == Some(&[tp(0)][..]))
            })
        };
        for (client, listener, waits) in [
            (Client::Java, true, true),
            (Client::Java, false, false),
            (Client::Librdkafka, true, false),
        ] {
            let what = format!("{client:?}, listener {listener}");
            let mut rig = Rig::new(RebalanceMode::Consumer, AssignorName::Uniform);
            rig.consumer.params.client = client;
            rig.consumer.params.rebalance_listener = listener;
            // No periodic auto-commit in the window (only the one before the revocation).
            rig.consumer.params.auto_commit_interval = t(60_000);
            rig.step(t(0), ConsumerInput::Start);
            // Waiting in poll at 2 ms: the first assignment is applied and acknowledged at once.
            let first = rig.step(t(2), ok(1, &[0, 1]));
            assert_eq!(rig.consumer.owned(), vec![tp(0), tp(1)], "{what}");
            assert!(first.sends.iter().any(|m| matches!(m, ToCoordinator::ConsumerHeartbeat(_))));
            let stall = rig.step(t(3), ConsumerInput::Stall(t(5000)));
            let epoch = stall
                .timers
                .iter()
                .find_map(|(timer, at)| match timer {
                    ConsumerTimer::BatchDone { epoch } if *at == Some(t(5003)) => Some(*epoch),
                    _ => None,
                })
                .expect("the stall ends at 5.003 s");
            let response = rig.step(t(10), ok(2, &[0]));
            assert_eq!(rig.consumer.generation, 2, "{what}: the epoch is the background's");
            assert_eq!((revoked(&response), ack(&response)), (!waits, !waits), "{what}");
            let end = rig.step(t(5003), ConsumerInput::Timer(ConsumerTimer::BatchDone { epoch }));
            assert_eq!((revoked(&end), ack(&end)), (waits, waits), "{what}");
            assert_eq!(rig.consumer.owned(), vec![tp(0)], "{what}");
            assert_eq!(rig.consumer.owned_generation(), 2, "{what}");
            if waits {
                // The commit before the revocation (auto-commit) goes out at the poll, before
                // the acknowledgement: t-1 at 0 (nothing was fetched before the stall).
                assert!(
                    matches!(
                        end.sends.as_slice(),
                        [ToCoordinator::Commit { offsets, .. }, ToCoordinator::ConsumerHeartbeat(_), ..]
                            if offsets == &vec![(tp(1), 0)]
                    ),
                    "{what}: {:?}",
                    end.sends
                );
            }
        }
    }
}
