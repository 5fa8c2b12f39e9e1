//! What the world needs to step a member's poll loop outside the event queue (fast stepping,
//! `world/stepper/lazy.rs`): which poll-loop step is pending, whether the next steps can only
//! process records (no request, no callback), and until when that holds.

use super::{
    Batch, BatchTimes, Consumer, ConsumerEnv, ConsumerTimer, FetchSink, LogView, PollLoop,
    NO_POSITION,
};
use crate::processing::ProcessingSampler;
use crate::types::Tp;
use scenario::{Client, CommitPolicy};
use sim_core::SimTime;

/// Words of a loop signature that [`Consumer::loop_signature_head`] finds without the logs.
pub const SIGNATURE_HEAD: usize = 5;

impl Consumer {
    /// True when the coming poll-loop steps only fetch and process records: the member is in
    /// a stable generation (or KIP-848 epoch), or awaits its JoinGroup or SyncGroup response
    /// (a classic member keeps fetching its partitions meanwhile, and the response comes as a
    /// message, which catches the member up first), with nothing waiting for its poll (no
    /// assignment, rejoin, close, commit response), connected, and commits are not per batch.
    /// Such steps send nothing and report only `Processed` until [`Consumer::loud_at`].
    pub fn poll_loop_is_quiet(&self) -> bool {
        self.alive
            && self.poll_loop_is_plain()
            && !self.closing
            && !self.disconnected
            && self.awaiting_commit.is_none()
            && self.pending.is_none()
            && self.pending_join.is_none()
            && self.params.commit == CommitPolicy::Auto
            && self.poll_loop.poll_step().is_some()
    }

    /// The first time at which a poll-loop step does more than fetch: the Java client's
    /// auto-commit inside `poll()` falls due (`SimTime::MAX` when there is no such commit).
    /// A poll waiting before it wakes no later than it (`Consumer::next_wake`), so fast
    /// stepping's jumps also end at the last step whose successor is due by then
    /// (`world/stepper/cycle.rs`, `Cycle::steps_within`).
    ///
    /// A deadline already passed at the last poll while a classic rebalance is in progress
    /// is no bound: no poll commits during the rebalance (`Consumer::maybe_auto_commit_in_poll`)
    /// and none waits for an overdue deadline (`Consumer::next_wake`), and the rebalance ends
    /// only by a message to the member (its JoinGroup or SyncGroup response, or the loss of
    /// its request), which catches its steps up and takes them back first; its end restarts
    /// the deadline. The steps of a cooperative member that keeps fetching through a rebalance
    /// then stay aside instead of each running as a queued event (the same results, fewer
    /// `events`).
    pub fn loud_at(&self) -> SimTime {
        let deadline = self.auto_commit_deadline();
        if deadline <= self.poll_loop.last_poll && self.classic_rebalance_in_progress() {
            return SimTime::MAX;
        }
        deadline
    }

    /// When the Java client's next auto-commit inside `poll()` is due (`SimTime::MAX` when
    /// there is none).
    pub fn auto_commit_deadline(&self) -> SimTime {
        if self.params.client == Client::Java && self.params.auto_commit() {
            self.last_auto_commit.saturating_add(self.params.auto_commit_interval)
        } else {
            SimTime::MAX
        }
    }

    /// Whether the batch in progress is a full `max.poll.records` batch: the member is working
    /// through a backlog, where steps do not repeat (fast stepping does not look for cycles).
    pub fn in_full_batch(&self) -> bool {
        self.poll_loop.batch.as_ref().is_some_and(|b| {
            let records: usize = b.parts.iter().map(|p| p.2).sum();
            records as u64 >= u64::from(self.params.max_poll_records)
        })
    }

    /// Whether the `max.poll.interval.ms` timer of the batch in progress expires before `at`.
    pub fn poll_timer_expired_by(&self, at: SimTime) -> bool {
        self.batch_poll_timer().is_some_and(|(_, deadline, _)| deadline < at)
    }

    /// The `max.poll.interval.ms` timer of the batch in progress: the timer, when it expires,
    /// and when the poll that armed it ran.
    pub fn batch_poll_timer(&self) -> Option<(ConsumerTimer, SimTime, SimTime)> {
        let batch = self.poll_loop.batch.as_ref()?;
        let timer = ConsumerTimer::MaxPoll { epoch: batch.epoch };
        Some((timer, self.poll_deadline(batch.polled), batch.polled))
    }
}

/// What the first half of a quiet poll-loop step found ([`Consumer::end_quiet_step`]).
#[derive(Debug)]
pub(crate) enum QuietStep {
    /// The timer is stale (of an earlier poll or batch): nothing happens, no step follows.
    Stale,
    /// A poll waiting for records wakes up.
    Woke,
    /// The batch in progress is done: its records are processed. It stays the member's
    /// until the caller has reported it and gives its buffers back
    /// ([`PollLoop::recycle_batch`](crate::consumer::PollLoop::recycle_batch)).
    Finished,
}

impl Consumer {
    /// The first half of a quiet poll-loop step on `timer`, run aside by fast stepping
    /// (`world/stepper/lazy.rs`): what `handle(Timer(timer))` does for a member whose poll loop
    /// is quiet ([`Consumer::poll_loop_is_quiet`]) before its next poll, without an outbox.
    /// A finished batch stays in place: the caller reports its records (`Processed`) and
    /// gives its buffers back (`PollLoop::recycle_batch`). Its `max.poll.interval.ms` timer
    /// needs no cancelling: fast stepping arms it from the batch in progress.
    pub(crate) fn end_quiet_step(&mut self, timer: ConsumerTimer) -> QuietStep {
        debug_assert!(self.poll_loop_is_quiet(), "a quiet step of a loud member");
        let poll_loop = &mut self.poll_loop;
        match timer {
            ConsumerTimer::BatchDone { epoch }
                if poll_loop.batch.as_ref().is_some_and(|b| b.epoch == epoch) =>
            {
                QuietStep::Finished
            }
            ConsumerTimer::PollWake { epoch } if poll_loop.in_poll && epoch == poll_loop.epoch => {
                QuietStep::Woke
            }
            _ => QuietStep::Stale,
        }
    }

    /// The second half: the next `poll()` at `now`, which for a quiet member before
    /// [`Consumer::loud_at`] only fetches (no auto-commit is due, no assignment, join, close or
    /// commit response waits for it; each protocol's poll hook has nothing to do: its
    /// `poll_loop_is_plain`). Returns the next poll-loop step and when it is due.
    pub(crate) fn quiet_poll<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        env: &mut ConsumerEnv<'_, L>,
    ) -> (ConsumerTimer, SimTime) {
        debug_assert!(now < self.loud_at(), "a quiet poll at or after the auto-commit");
        debug_assert!(self.poll_loop.batch.is_none(), "a quiet poll with a batch in progress");
        self.poll_loop.begin_poll(now);
        self.fetch_or_wait(now, env)
    }
}

impl Consumer {
    /// [`Consumer::quiet_poll`] whose records go to `sink` (fast stepping's folded catch-up,
    /// `world/stepper/fold.rs`) instead of a batch of the member's own. `Ok(epoch)` when it
    /// took records: the batch in progress of poll `epoch` is the caller's, whose sink draws
    /// their processing times from the member's stream as [`Consumer::timed_batch`] would
    /// ([`Consumer::processing`], `processing::Listing`), and which gives it back before
    /// anything else reads the member.
    /// `Err`: the poll waits, with its wake-up.
    pub(crate) fn quiet_poll_into<L: LogView + ?Sized, S: FetchSink>(
        &mut self,
        now: SimTime,
        log: &mut L,
        sink: &mut S,
    ) -> Result<u64, (ConsumerTimer, SimTime)> {
        debug_assert!(now < self.loud_at(), "a quiet poll at or after the auto-commit");
        debug_assert!(self.poll_loop.batch.is_none(), "a quiet poll with a batch in progress");
        self.poll_loop.begin_poll(now);
        match self.fetch_into(now, log, sink) {
            Ok(()) => Ok(self.poll_loop.epoch),
            Err(first_unseen) => Err(self.wait_for_records(now, first_unseen)),
        }
    }

    /// The sampler of the member's processing times.
    pub(crate) fn processing(&self) -> &ProcessingSampler {
        &self.params.processing
    }

    /// Whether its batches list each record's processing time (variable processing): a
    /// folded catch-up's fetches may then put records straight into the fold
    /// ([`Consumer::quiet_poll_into`]).
    pub(crate) fn lists_records(&self) -> bool {
        !matches!(self.params.processing, ProcessingSampler::Constant(_))
    }
}

/// The part of a member's state that its quiet poll-loop steps change: positions, the fetch
/// rotation, the poll epoch, and the batch in progress (fast stepping's periodic jumps copy
/// and shift it).
#[derive(Clone, Debug)]
pub struct LoopState {
    positions: Vec<(Tp, u64)>,
    cursor: usize,
    epoch: u64,
    in_poll: bool,
    last_poll: SimTime,
    batch: Option<Batch>,
}

/// A shift between two loop states of the same cycle: later by `time`, every partition by its
/// offset count (in owned order), the rotation and the epoch by their step counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopShift {
    /// Time.
    pub time: SimTime,
    /// Offsets per owned partition, in partition order.
    pub offsets: Vec<u64>,
    /// Fetch rotation steps.
    pub cursor: usize,
    /// Polls.
    pub epoch: u64,
}

impl LoopShift {
    /// `to - from` (both states of one member, `to` the later, at times `to_at`/`from_at`).
    pub fn between(from: &LoopState, from_at: SimTime, to: &LoopState, to_at: SimTime) -> Self {
        let to_positions = to.positions.iter().map(|p| p.1);
        LoopShift::to((to_positions, to.cursor, to.epoch, to_at), from, from_at)
    }

    /// From `from` (last poll at `from_at`) to a state given by its positions in owned order,
    /// fetch rotation, poll epoch and last poll.
    fn to(
        (positions, cursor, epoch, at): (impl Iterator<Item = u64>, usize, u64, SimTime),
        from: &LoopState,
        from_at: SimTime,
    ) -> Self {
        LoopShift {
            time: at - from_at,
            offsets: positions.zip(&from.positions).map(|(t, f)| t.wrapping_sub(f.1)).collect(),
            cursor: cursor.wrapping_sub(from.cursor),
            epoch: epoch.wrapping_sub(from.epoch),
        }
    }

    /// Adds `times x other` in place.
    pub fn add(&mut self, other: &LoopShift, times: u64) {
        self.time += SimTime::from_nanos(other.time.as_nanos() * times);
        for (a, b) in self.offsets.iter_mut().zip(&other.offsets) {
            *a = a.wrapping_add(b.wrapping_mul(times));
        }
        self.cursor = self.cursor.wrapping_add(other.cursor.wrapping_mul(times as usize));
        self.epoch = self.epoch.wrapping_add(other.epoch.wrapping_mul(times));
    }

    /// `self + times x other`.
    pub fn plus(&self, other: &LoopShift, times: u64) -> LoopShift {
        let mut sum = self.clone();
        sum.add(other, times);
        sum
    }
}

impl LoopState {
    /// The partitions, in owned order (the order of a shift's offsets).
    pub fn tps(&self) -> Vec<Tp> {
        self.positions.iter().map(|p| p.0).collect()
    }

    /// How many partitions.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// True without partitions.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// When the poll that produced this state ran.
    pub fn last_poll(&self) -> SimTime {
        self.last_poll
    }
}

/// Position `p` moved `d` offsets on (no position stays none): how
/// [`PollLoop::set_loop_state_shifted`] and [`PollLoop::loop_state_is`] move a partition's
/// position.
fn moved_position(p: u64, d: u64) -> u64 {
    if p == NO_POSITION {
        p
    } else {
        p.wrapping_add(d)
    }
}

/// Whether batch `b` is `b0` (of a state with positions `positions0`) moved by `shift`, as
/// [`PollLoop::set_loop_state_shifted`] moves it.
fn batch_is_shifted(b: &Batch, b0: &Batch, shift: &LoopShift, positions0: &[(Tp, u64)]) -> bool {
    let part_moved = |(tp, first, n): &(Tp, u64, usize), (tp0, first0, n0): &(Tp, u64, usize)| {
        let i = positions0.binary_search_by_key(tp0, |p| p.0);
        tp == tp0 && n == n0 && i.is_ok_and(|i| *first == first0.wrapping_add(shift.offsets[i]))
    };
    b.epoch == b0.epoch.wrapping_add(shift.epoch)
        && b.end == b0.end + shift.time
        && b.polled == b0.polled + shift.time
        && b.parts.len() == b0.parts.len()
        && b.parts.iter().zip(&b0.parts).all(|(p, p0)| part_moved(p, p0))
        && b.times.eq_shifted(&b0.times, shift.time)
}

impl PollLoop {
    /// The pending step of the poll loop: the end of the batch in progress, or the wake-up of
    /// a poll waiting for records.
    pub(crate) fn poll_step(&self) -> Option<ConsumerTimer> {
        match &self.batch {
            Some(batch) => Some(ConsumerTimer::BatchDone { epoch: batch.epoch }),
            None if self.in_poll => Some(ConsumerTimer::PollWake { epoch: self.epoch }),
            None => None,
        }
    }

    /// Whether a batch is in progress (the member is not waiting in `poll()`).
    pub(crate) fn in_batch(&self) -> bool {
        self.batch.is_some()
    }

    /// Per owned partition with a position, the next offset it will process: the first of
    /// its records in the batch in progress, else its fetch position.
    pub(crate) fn next_unprocessed(&self) -> impl Iterator<Item = (Tp, u64)> + '_ {
        self.owned.iter().filter(|(_, p)| **p != NO_POSITION).map(|(tp, p)| {
            let in_batch = self.batch.as_ref().and_then(|b| b.parts.iter().find(|x| x.0 == *tp));
            (*tp, in_batch.map_or(*p, |x| x.1))
        })
    }

    /// Whether the loop state now is `base` moved by `shift` (what
    /// [`PollLoop::set_loop_state_shifted`] sets), compared in place (no copy of either).
    pub(crate) fn loop_state_is(&self, base: &LoopState, shift: &LoopShift) -> bool {
        let scalars = self.cursor == base.cursor.wrapping_add(shift.cursor)
            && self.epoch == base.epoch.wrapping_add(shift.epoch)
            && self.in_poll == base.in_poll
            && self.last_poll == base.last_poll + shift.time
            && self.owned.len() == base.positions.len()
            && shift.offsets.len() == base.positions.len();
        let positions = || {
            let pairs = self.owned.iter().zip(&base.positions).zip(&shift.offsets);
            pairs
                .into_iter()
                .all(|(((tp, p), (tp0, p0)), d)| tp == tp0 && *p == moved_position(*p0, *d))
        };
        let batch = || match (&self.batch, &base.batch) {
            (None, None) => true,
            (Some(b), Some(b0)) => batch_is_shifted(b, b0, shift, &base.positions),
            _ => false,
        };
        scalars && positions() && batch()
    }

    /// The loop state now.
    pub(crate) fn loop_state(&self) -> LoopState {
        LoopState {
            positions: self.owned.iter().map(|(tp, p)| (*tp, *p)).collect(),
            cursor: self.cursor,
            epoch: self.epoch,
            in_poll: self.in_poll,
            last_poll: self.last_poll,
            batch: self.batch.clone(),
        }
    }

    /// Puts `base` (an earlier state of this member, with as many partitions, maybe others)
    /// moved by `shift` in, written in place (the batch's buffers are reused: a jump sets the
    /// state of every member it moves): positions and batch parts go to the partitions in the
    /// same places of the owned order.
    pub(crate) fn set_loop_state_shifted(&mut self, base: &LoopState, shift: &LoopShift) {
        debug_assert_eq!(base.positions.len(), self.owned.len());
        let renamed = !base.positions.iter().map(|p| p.0).eq(self.owned.keys().copied());
        let places = base.positions.iter().zip(&shift.offsets);
        for (p, ((_, p0), d)) in self.owned.values_mut().zip(places) {
            *p = moved_position(*p0, *d);
        }
        self.cursor = base.cursor.wrapping_add(shift.cursor);
        self.epoch = base.epoch.wrapping_add(shift.epoch);
        self.in_poll = base.in_poll;
        self.last_poll = base.last_poll + shift.time;
        let Some(b0) = &base.batch else {
            if let Some(batch) = self.batch.take() {
                self.keep_buffers(batch);
            }
            return;
        };
        let tps: Vec<Tp> = if renamed { self.owned.keys().copied().collect() } else { Vec::new() };
        // A new batch takes the buffers of the last finished one.
        let spare = &mut self.spare;
        let b = self.batch.get_or_insert_with(|| Batch {
            epoch: 0,
            parts: std::mem::take(&mut spare.parts),
            times: BatchTimes::Linear {
                start: SimTime::ZERO,
                each: SimTime::ZERO,
                arrivals: std::mem::take(&mut spare.arrivals),
            },
            end: SimTime::ZERO,
            polled: SimTime::ZERO,
        });
        b.epoch = b0.epoch.wrapping_add(shift.epoch);
        b.end = b0.end + shift.time;
        b.polled = b0.polled + shift.time;
        b.times.set_shifted(&b0.times, shift.time);
        b.parts.clear();
        b.parts.extend(b0.parts.iter().map(|&(tp, first, count)| {
            let i = base.positions.binary_search_by_key(&tp, |p| p.0).expect("an owned part");
            let tp = if renamed { tps[i] } else { tp };
            (tp, first.wrapping_add(shift.offsets[i]), count)
        }));
    }

    /// The shift from `from` (an earlier state of this member's cycle, last poll at
    /// `from_at`) to the state now: `LoopShift::between(from, from_at, &self.loop_state(),
    /// self.last_poll())` without copying the state.
    pub(crate) fn shift_since(&self, from: &LoopState, from_at: SimTime) -> LoopShift {
        let now = (self.owned.values().copied(), self.cursor, self.epoch, self.last_poll);
        LoopShift::to(now, from, from_at)
    }

    /// Partitions owned.
    pub(crate) fn owned_len(&self) -> usize {
        self.owned.len()
    }

    /// When `poll()` last ran.
    pub(crate) fn last_poll(&self) -> SimTime {
        self.last_poll
    }
}

impl Consumer {
    /// The first [`SIGNATURE_HEAD`] words of [`Consumer::loop_signature`], found without
    /// reading a log: the pending step's kind and time, the fetch rotation, whether the poll
    /// waits and how many partitions are owned (by their places in the owned order, not their
    /// names: a member given other partitions with the same spacings and phases runs the same
    /// steps, so its cycles stay valid across assignments). `None` when it has no signature.
    pub fn loop_signature_head(&self, next: (u8, SimTime)) -> Option<[i64; SIGNATURE_HEAD]> {
        let poll_loop = &self.poll_loop;
        if !matches!(self.params.processing, ProcessingSampler::Constant(_))
            || poll_loop.owned.is_empty()
        {
            return None;
        }
        let rel = next.1.as_nanos() as i64 - poll_loop.last_poll.as_nanos() as i64;
        let owned = poll_loop.owned.len();
        let (rotation, waits) = ((poll_loop.cursor % owned) as i64, i64::from(poll_loop.in_poll));
        Some([i64::from(next.0), rel, rotation, waits, owned as i64])
    }

    /// What decides the member's coming quiet steps, relative to its last poll, or `None`
    /// when they are not periodic in closed form (random processing times, a partition whose
    /// arrivals are not exactly evenly spaced, offsets beyond exact arithmetic). Two states
    /// with equal signatures evolve identically, shifted in time by the difference of their
    /// last polls: every arrival still to come and every relative time is the same.
    /// `next`: the pending step's kind (0 batch end, 1 poll wake-up) and time.
    pub fn loop_signature(
        &self,
        logs: &mut dyn super::LogView,
        spacing: &dyn Fn(Tp) -> Option<(SimTime, u64)>,
        next: (u8, SimTime),
        out: &mut Vec<i64>,
    ) -> bool {
        out.clear();
        let Some(head) = self.loop_signature_head(next) else { return false };
        out.extend_from_slice(&head);
        let t = self.poll_loop.last_poll;
        let rel = |at: SimTime| at.as_nanos() as i64 - t.as_nanos() as i64;
        for (tp, position) in &self.poll_loop.owned {
            if *position == NO_POSITION {
                out.push(i64::MIN);
                continue;
            }
            let Some((every, limit)) = spacing(*tp) else { return false };
            if *position >= limit / 2 {
                return false;
            }
            out.push(every.as_nanos() as i64);
            out.push(rel(logs.arrival(*tp, *position)));
        }
        if let Some(b) = &self.poll_loop.batch {
            // A batch long enough to meet its max.poll.interval.ms is never copied.
            if b.end - b.polled + SimTime::from_millis(500) >= self.params.max_poll_interval {
                return false;
            }
            out.push(rel(b.polled));
            out.push(rel(b.end));
            for (tp, _, count) in &b.parts {
                // A part of a partition given up meanwhile has no place: not copied.
                let Some(place) = self.poll_loop.owned.index_of(tp) else {
                    return false;
                };
                out.push(place as i64);
                out.push(*count as i64);
            }
        }
        true
    }
}
