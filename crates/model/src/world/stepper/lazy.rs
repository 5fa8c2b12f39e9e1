//! Fast stepping: a member's quiet poll-loop steps run outside the event queue, when
//! something needs them, instead of as one queued event each (issue 8, DESIGN section 4:
//! simulate changes, not ticks).
//!
//! A step of the poll loop (a batch ends, or a waiting poll wakes up) is *quiet* when the
//! member is steady ([`Consumer::poll_loop_is_quiet`]): it only fetches and processes records,
//! sends nothing and changes no ownership. Such steps touch nothing but the member itself and
//! the records of its partitions, so their order against other events matters only where
//! something reads those: an input to the member, a change of one of its partitions' owner or
//! state, another member processing one of its partitions, a sample (lag, log trimming), the
//! end of the run. The world keeps a steady member's pending step aside (`StepperSlot::lazy`) and
//! runs its steps up to the current instant (`catch_up`) just before any of those.
//!
//! The order of events is defined so that this gives exactly what stepping every event through
//! the queue gives (`super::Plain`, which `tests/stepping.rs` compares on every scenario in
//! `sims/`): at one instant, poll-loop steps come first, in member-slot order (queue rank =
//! slot), then every other event in scheduling order. A catch-up for an event of rank `r` runs
//! the member's steps up to and including the instant when the member's rank is below `r`.
//! Steps that are not quiet are never run aside: a poll at which the Java client's
//! auto-commit falls due ([`Consumer::loud_at`]) is put back in the queue by a wake-up of the
//! member's rank at that time; the wake-up also comes at most one `max.poll.interval.ms` after
//! the member went aside, so the `max.poll.interval.ms` timer of a batch run aside (armed, as
//! of its poll, at the end of each catch-up) is always in the queue before it can expire.
//!
//! One input need not catch its member up at all: a heartbeat response that changes nothing
//! only wakes a poll that waits for records, so in a run without cycles its wake-up is kept
//! with the member's aside steps and runs among them, in the order the queue would have given
//! it, at the member's next catch-up ([`World::defer_wake`], [`next_aside_step`]).

use super::cycle::{Bound, Processed, Recorder, Snapshot};
use super::fold::{FoldedReports, FoldingPoll};
use super::Fast;
use crate::consumer::{
    Batch, Consumer, ConsumerEnv, ConsumerInput, ConsumerNote, ConsumerTimer, LogView, QuietStep,
};
use crate::records::RecordTimes;
use crate::types::Conn;
use crate::world::{Ev, World};
use assignors::{Topic, Tp};
use sim_core::{SimRng, SimTime, RANK_LAST};

/// Cycles kept per member: a message that wakes a waiting poll moves the fetch rotation by
/// one, so a steady member alternates between two (more cost memory: each holds a period of
/// loop states and records).
pub(in crate::world) const MAX_CYCLES: usize = 2;

/// Steps a catch-up runs off every known cycle before it records them to find a new one: most
/// members knocked off their cycle (a rebalance, a wake-up) are back on a known one within a
/// few steps, and the snapshots of those steps would be dropped unused.
const RECORD_AFTER: u32 = 6;

/// Steps recorded in vain (in recordings that ended without a repeat) before a member waits.
const VAIN_STEPS: u32 = 64;

/// The first wait (off-cycle steps without recording) of a member, doubled at each next.
const FIRST_RECORD_WAIT: u32 = 1 << 10;

/// The longest wait.
const MAX_RECORD_WAIT: u32 = 1 << 14;

/// When a member's catch-ups may record its steps again, after its recordings found no repeat
/// in [`VAIN_STEPS`] recorded steps (a period longer than one catch-up or than a recording
/// holds, [`MAX_RECORDED`](super::cycle::MAX_RECORDED) steps, or none yet). A recording costs
/// a signature and a snapshot of the loop state per step, both as long as the member's list of
/// partitions, and ends with its catch-up: a member whose catch-ups end before its period does
/// would record in vain at every one. After each such run of recordings the member runs twice
/// as many off-cycle steps as before it records again (from [`FIRST_RECORD_WAIT`] to
/// [`MAX_RECORD_WAIT`]); a found cycle, a new incarnation or a new assignment starts afresh.
/// Only speed depends on it: steps not jumped run one by one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::world) struct RecordBackoff {
    /// Off-cycle steps to run before the next recording (0: none).
    wait: u32,
    /// Off-cycle steps run since the wait began.
    since: u32,
    /// Steps recorded in vain since the wait began (or since the start).
    wasted: u32,
    /// The generation of the member's partitions then (`Consumer::owned_generation`).
    generation: i32,
}

impl RecordBackoff {
    /// Whether a member whose partitions are of `generation` may start a recording.
    fn allows(&mut self, generation: i32) -> bool {
        if self.wait > 0 && generation != self.generation {
            *self = RecordBackoff::default();
        }
        self.since >= self.wait
    }

    /// One more off-cycle step run.
    fn on_off_cycle_step(&mut self) {
        self.since = self.since.saturating_add(1);
    }

    /// A recording of `steps` steps of a member with partitions of `generation` ended without
    /// a repeat (it filled up, or its catch-up ended).
    fn on_no_repeat(&mut self, steps: usize, generation: i32) {
        self.wasted = self.wasted.saturating_add(steps as u32);
        if self.wasted >= VAIN_STEPS {
            let wait = (self.wait.saturating_mul(2)).clamp(FIRST_RECORD_WAIT, MAX_RECORD_WAIT);
            *self = RecordBackoff { wait, since: 0, wasted: 0, generation };
        }
    }
}

/// A member's pending poll-loop step, kept out of the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::world) struct LazyStep {
    /// When it is due.
    pub at: SimTime,
    /// Which step (`BatchDone` or `PollWake`, with its poll epoch).
    pub timer: ConsumerTimer,
    /// When it was armed (its place among the events of its instant).
    pub armed: SimTime,
}

/// The queue rank of an event: poll-loop steps and wake-ups rank by member slot, ahead of
/// every other event of their instant.
pub(in crate::world) fn rank_of(ev: &Ev) -> u64 {
    match ev {
        Ev::MemberTimer(conn, ConsumerTimer::BatchDone { .. } | ConsumerTimer::PollWake { .. })
        | Ev::Wake(conn) => u64::from(conn.slot),
        _ => RANK_LAST,
    }
}

/// Whether `timer` is a poll-loop step (ranked by slot).
pub(in crate::world) fn is_poll_step(timer: ConsumerTimer) -> bool {
    matches!(timer, ConsumerTimer::BatchDone { .. } | ConsumerTimer::PollWake { .. })
}

impl World<'_, Fast> {
    /// Runs the aside steps of `slot` that come before the event being handled at `now`.
    pub(in crate::world) fn catch_up(&mut self, slot: usize, now: SimTime) {
        let inclusive = (slot as u64) < self.stepper.current_rank;
        self.catch_up_until(slot, now, inclusive);
    }

    /// Runs the aside steps of `slot` due before `until` (and at `until` if `inclusive`),
    /// jumping along a known cycle of the member where one applies (`world/stepper/cycle.rs`): the
    /// jump is tried before every step (a member knocked off its cycle by an input is usually
    /// back on it one step later); while none applies, the steps after the first
    /// [`RECORD_AFTER`] are recorded to find a new one.
    fn catch_up_until(&mut self, slot: usize, until: SimTime, inclusive: bool) {
        debug_assert!(
            !self.stepper.periodic || self.stepper.slots[slot].deferred_wake.is_none(),
            "a wake-up deferred in a run that looks for cycles"
        );
        if !self.stepper.periodic {
            if self.run_quiet_steps(slot, until, inclusive) {
                self.sync_poll_timer(slot);
            }
            return;
        }
        let mut ran = false;
        let mut recorder: Option<Recorder> = None;
        let mut off_cycle_steps = 0;
        while let Some(step) = self.stepper.slots[slot].lazy {
            let due = step.at < until || (inclusive && step.at == until);
            if !due || !self.step_stays_quiet(slot, step.at) {
                break;
            }
            // Full batches mean a backlog, not a cycle: look again once it is worked off.
            let backlog = || self.slots[slot].consumer.as_ref().is_none_or(|c| c.in_full_batch());
            if self.stepper.periodic && !backlog() {
                let loud = self.slots[slot].consumer.as_ref().map_or(SimTime::MAX, |c| c.loud_at());
                let known = recorder.as_ref().and_then(|r| r.position_of(step));
                if self.jump(slot, Bound { until, inclusive, loud }, known) {
                    ran = true;
                    recorder = None;
                    continue;
                }
                off_cycle_steps += 1;
                self.stepper.slots[slot].record_backoff.on_off_cycle_step();
                if recorder.is_none() && off_cycle_steps > RECORD_AFTER && self.may_record(slot) {
                    recorder = Some(Recorder::default());
                    match self.signature(slot, step) {
                        Some(signature) => {
                            let snap = self.snapshot(slot, Vec::new());
                            self.record(slot, &mut recorder, signature, snap);
                        }
                        None => recorder = None,
                    }
                }
            }
            let processed = self.run_aside(slot, step, recorder.is_some());
            ran = true;
            if recorder.is_some() {
                let Some(next) = self.stepper.slots[slot].lazy else { break };
                if !self.step_stays_quiet(slot, next.at) {
                    // The step may have been cut short by the auto-commit deadline (a waiting
                    // poll wakes at it): a cycle may hold only steps that repeat without it.
                    self.end_recording(slot, recorder.take());
                    break;
                }
                match self.signature(slot, next) {
                    Some(signature) => {
                        let snap = self.snapshot(slot, processed);
                        self.record(slot, &mut recorder, signature, snap);
                    }
                    None => recorder = None,
                }
                if recorder.as_ref().is_some_and(Recorder::is_full) {
                    self.end_recording(slot, recorder.take());
                }
            }
        }
        self.end_recording(slot, recorder);
        if ran {
            self.sync_poll_timer(slot);
        }
    }

    /// [`World::catch_up_until`] where no cycle is looked for (a stochastic run: nothing
    /// repeats): the quiet steps one after the other, each as [`World::run_aside`] runs it.
    /// The member's auto-commit deadline ([`Consumer::loud_at`]) is asked once: quiet steps
    /// do not commit. Their reports are folded per partition and given at the end where the
    /// member may ([`World::may_fold_reports`], `fold.rs`). True if any step ran.
    fn run_quiet_steps(&mut self, slot: usize, until: SimTime, inclusive: bool) -> bool {
        let Some(loud) = self.slots[slot].consumer.as_ref().map(Consumer::loud_at) else {
            return false;
        };
        if let Some(owned) = self.may_fold_reports(slot) {
            self.stepper.folded.begin(owned);
            let bound = Bound { until, inclusive, loud };
            let mut ran = false;
            // In runs of at most `fold::FOLD_RECORDS` records, each reported at its end.
            while let Some(at) = self.run_folded_steps(slot, bound) {
                ran = true;
                self.report_folded(slot, at);
            }
            if ran {
                self.stepper.slots[slot].forget_cycle_position();
            }
            self.check_wake_used(slot);
            return ran;
        }
        let bound = Bound { until, inclusive, loud };
        let mut last = None;
        loop {
            let consumer = self.slots[slot].consumer.as_ref().expect("an aside member");
            let ss = &mut self.stepper.slots[slot];
            let Some((step, woken)) =
                next_aside_step(consumer, &mut ss.lazy, &mut ss.deferred_wake)
            else {
                break;
            };
            if !admitted(bound, step.at, woken) || self.poll_timer_expired_by(slot, step.at) {
                break;
            }
            if last.is_none() {
                self.stepper.slots[slot].forget_cycle_position();
            }
            self.run_quiet_step(slot, step);
            debug_assert_eq!(self.slots[slot].consumer.as_ref().map(Consumer::loud_at), Some(loud));
            last = Some(step.at);
        }
        self.check_wake_used(slot);
        last.is_some()
    }

    /// After a catch-up to the current instant: a wake-up deferred before it was used
    /// (debug builds). It comes before every later event, and before the member's wake-up
    /// (`set_aside`), its auto-commit deadline and any `max.poll.interval.ms` expiry, which no
    /// catch-up passes ([`World::defer_wake`]).
    pub(super) fn check_wake_used(&self, slot: usize) {
        debug_assert!(
            self.stepper.slots[slot].deferred_wake.is_none(),
            "slot {slot}'s deferred wake-up {:?} outlived a catch-up",
            self.stepper.slots[slot].deferred_wake
        );
    }

    /// Before `input` reaches `slot` at `now`: a response that changes nothing
    /// (`Consumer::response_changes_nothing`) only wakes the member's poll if it waits for
    /// records (`Consumer::wake`; a busy member ignores it). In a run that looks for no cycle
    /// (a stochastic run), a member with aside steps keeps them: the wake-up is kept with
    /// them and runs in their order when the member next catches up, as a step at `now`
    /// after the steps the event comes after ([`next_aside_step`]), instead of the member
    /// catching up alone, on the calling thread, at every heartbeat ("(17)" in
    /// docs/performance.md). True when the input is so kept (it is then not delivered).
    /// Why nothing else changes: the wake-up reads and writes only the member's poll loop (its
    /// fetch rotation, poll epoch and last poll; a poll woken before its own wake-up finds
    /// nothing new), and nothing reads those before the member's next catch-up: every input
    /// to the member catches it up first, as do the books before one of its partitions
    /// changes, each sample and the end.
    ///
    /// Only for a wake-up that stays quiet: before the member's auto-commit deadline, which
    /// does not depend on its last poll (no classic rebalance in progress,
    /// `Consumer::loud_at`), so the catch-ups before the member's own wake-up (`set_aside`)
    /// run it; one at a time (a second one catches up as before).
    pub(in crate::world) fn defer_wake(
        &mut self,
        slot: usize,
        now: SimTime,
        input: &ConsumerInput,
    ) -> bool {
        let Some(consumer) = self.slots[slot].consumer.as_ref() else { return false };
        let ss = &self.stepper.slots[slot];
        let deferrable = !self.stepper.periodic
            && ss.lazy.is_some()
            && ss.deferred_wake.is_none()
            && consumer.response_changes_nothing(input)
            && now < consumer.loud_at()
            && !consumer.classic_rebalance_in_progress();
        if deferrable {
            let inclusive = (slot as u64) < self.stepper.current_rank;
            let loud = consumer.loud_at();
            self.stepper.slots[slot].deferred_wake = Some(Bound { until: now, inclusive, loud });
            self.stepper.deferred_wakes += 1;
        }
        deferrable
    }

    /// [`run_folded_steps`] on `slot`'s member, the world's logs and the world's fold.
    fn run_folded_steps(&mut self, slot: usize, bound: Bound) -> Option<SimTime> {
        let World { slots, logs, assignor_rng, topics, stepper, .. } = self;
        let s = &mut slots[slot];
        let consumer = s.consumer.as_mut()?;
        let Fast { slots: stepper_slots, folded, .. } = stepper;
        let ss = &mut stepper_slots[slot];
        let (lazy, wake) = (&mut ss.lazy, &mut ss.deferred_wake);
        let mut member = AsideMember { consumer, rng: &mut s.rng, lazy, wake };
        run_folded_steps(&mut member, logs, folded, bound, Some((assignor_rng, topics)))
    }

    /// Whether the reports of `slot`'s quiet steps may be folded (`fold.rs`): it is the book
    /// owner, or there is none, of every partition it holds (a report of another member's
    /// partition catches that member up to the report's time first), and its batch in
    /// progress reads only those (a partition revoked during a batch is reported when the
    /// batch ends). Gives the number of partitions it holds.
    pub(super) fn may_fold_reports(&self, slot: usize) -> Option<usize> {
        let poll_loop = &self.slots[slot].consumer.as_ref()?.poll_loop;
        let owned = &poll_loop.owned;
        let own = |tp: &Tp| self.books.owner(*tp).is_none_or(|o| o.slot as usize == slot);
        let batch_parts = poll_loop.batch.iter().flat_map(|b| &b.parts);
        let held = batch_parts.map(|p| &p.0).all(|tp| owned.contains_key(tp));
        (held && owned.keys().all(own)).then_some(owned.len())
    }

    /// Gives the reports folded during `slot`'s catch-up, whose last step ran at `at`.
    fn report_folded(&mut self, slot: usize, at: SimTime) {
        let conn = self.slots[slot].consumer.as_ref().expect("an aside member").conn();
        let mut folded = std::mem::take(&mut self.stepper.folded);
        folded.drain(|tp, first, times| self.on_processed(at, conn, tp, first, times));
        self.stepper.folded = folded;
    }

    /// A recording of `slot` that found no repeat ends ([`RecordBackoff`]).
    fn end_recording(&mut self, slot: usize, recorder: Option<Recorder>) {
        let Some(steps) = recorder.map(|r| r.len()) else { return };
        let generation = self.owned_generation(slot);
        self.stepper.slots[slot].record_backoff.on_no_repeat(steps, generation);
    }

    /// Whether `slot` may start a recording ([`RecordBackoff`]).
    fn may_record(&mut self, slot: usize) -> bool {
        let generation = self.owned_generation(slot);
        self.stepper.slots[slot].record_backoff.allows(generation)
    }

    /// The generation of the partitions of `slot`'s member (-1 without a member).
    fn owned_generation(&self, slot: usize) -> i32 {
        self.slots[slot].consumer.as_ref().map_or(-1, Consumer::owned_generation)
    }

    /// The loop state of `slot` after a step that processed `processed`.
    fn snapshot(&self, slot: usize, processed: Vec<Processed>) -> Snapshot {
        let consumer = self.slots[slot].consumer.as_ref().expect("an aside member is alive");
        let next = self.stepper.slots[slot].lazy.expect("a pending step");
        Snapshot { state: consumer.poll_loop.loop_state(), next, processed }
    }

    /// Records a snapshot; true when it closed a cycle (kept with the member, recording ends).
    fn record(
        &mut self,
        slot: usize,
        recorder: &mut Option<Recorder>,
        signature: Vec<i64>,
        snap: Snapshot,
    ) -> bool {
        let Some(r) = recorder.as_mut() else { return false };
        let tps = snap.state.tps();
        let Some(cycle) = r.push(signature, snap, tps) else { return false };
        self.stepper.slots[slot].forget_cycle_position(); // Cycle indices move.
        let cycles = &mut self.stepper.slots[slot].cycles;
        if cycles.len() >= MAX_CYCLES {
            cycles.remove(0);
        }
        cycles.push(cycle);
        *recorder = None;
        self.stepper.slots[slot].record_backoff = RecordBackoff::default();
        true
    }

    /// Whether the aside step at `at` is still quiet: before the auto-commit and before the
    /// batch's `max.poll.interval.ms` expiry (that timer, in the queue, comes first).
    pub(in crate::world) fn step_stays_quiet(&self, slot: usize, at: SimTime) -> bool {
        let Some(consumer) = self.slots[slot].consumer.as_ref() else { return false };
        at < consumer.loud_at() && !self.poll_timer_expired_by(slot, at)
    }

    /// Whether the `max.poll.interval.ms` timer of `slot`'s batch in progress expires before
    /// `at` (that timer, in the queue, comes first).
    fn poll_timer_expired_by(&self, slot: usize, at: SimTime) -> bool {
        self.slots[slot].consumer.as_ref().is_some_and(|c| c.poll_timer_expired_by(at))
    }

    /// Runs every aside step due by `now` (the end of the run; a sample counts instead).
    pub(in crate::world) fn catch_up_all(&mut self, now: SimTime) {
        if self.catch_up_all_shared_out(now, true) {
            return;
        }
        for slot in 0..self.slots.len() {
            if self.stepper.slots[slot].lazy.is_some() {
                self.catch_up(slot, now);
            }
        }
    }

    /// Before a sample: the records of steady members on a known cycle are counted (returned),
    /// every other member with aside steps catches up.
    pub(in crate::world) fn count_or_catch_up_all(&mut self, now: SimTime) -> u64 {
        if self.catch_up_all_shared_out(now, true) {
            return 0; // A run whose catch-ups are shared out has no cycle to count.
        }
        let mut unreported = 0;
        for slot in 0..self.slots.len() {
            if self.stepper.slots[slot].lazy.is_none() {
                continue;
            }
            let loud = self.slots[slot].consumer.as_ref().map_or(SimTime::MAX, |c| c.loud_at());
            let bound = Bound { until: now, inclusive: true, loud };
            match self.unreported_records(slot, bound) {
                Some(count) => unreported += count,
                None => self.catch_up(slot, now),
            }
        }
        unreported
    }

    /// Runs one aside step: the member's machine, then its `Processed` reports (returned too
    /// when `keep`).
    fn run_aside(&mut self, slot: usize, step: LazyStep, keep: bool) -> Vec<Processed> {
        self.stepper.slots[slot].forget_cycle_position();
        if !keep {
            self.run_quiet_step(slot, step);
            return Vec::new();
        }
        let mut out = self.take_outbox();
        let input = ConsumerInput::Timer(step.timer);
        let conn = self.run_member(slot, step.at, input, &mut out).expect("an aside member");
        assert!(out.sends.is_empty(), "a quiet poll step of {conn:?} sent {:?}", out.sends);
        let mut next = None;
        for (timer, at) in out.timers.drain(..) {
            match (timer, at) {
                (t, Some(at)) if is_poll_step(t) => {
                    next = Some(LazyStep { at, timer: t, armed: step.at })
                }
                (t, None) if is_poll_step(t) => {
                    next = next.filter(|n: &LazyStep| n.timer.slot() != t.slot())
                }
                (ConsumerTimer::MaxPoll { .. }, _) => {} // Armed from the batch at catch-up end.
                (t, at) => panic!("a quiet poll step of {conn:?} set timer {t:?} to {at:?}"),
            }
        }
        self.stepper.slots[slot].lazy = next;
        let mut kept = Vec::with_capacity(if keep { out.notes.len() } else { 0 });
        for note in out.notes.drain(..) {
            let ConsumerNote::Processed { tp, first, times } = note else {
                panic!("a quiet poll step of {conn:?} reported {note:?}");
            };
            self.on_processed(step.at, conn, tp, first, &times);
            if keep {
                kept.push((tp, first, times));
            }
        }
        self.return_outbox(out);
        kept
    }

    /// Runs one aside step without an outbox (`Consumer::end_quiet_step`, `quiet_poll`): the
    /// same member machine as [`World::run_aside`]'s `handle`. A finished batch is reported
    /// before the next poll (`handle` reports it after: the poll reports nothing and reads
    /// nothing a report writes, so no other report comes between), part by part in the same
    /// order among all reports (a catch-up that folds them runs [`World::run_folded_steps`]);
    /// its buffers are then the poll's: steps run aside allocate nothing.
    fn run_quiet_step(&mut self, slot: usize, step: LazyStep) {
        let consumer = self.slots[slot].consumer.as_mut().expect("an aside member");
        let conn = consumer.conn();
        match consumer.end_quiet_step(step.timer) {
            QuietStep::Stale => {
                self.stepper.slots[slot].lazy = None;
                return;
            }
            QuietStep::Woke => {}
            QuietStep::Finished => {
                let batch = consumer.poll_loop.batch.take().expect("a finished batch");
                self.report_batch(step.at, conn, &batch);
                let consumer = self.slots[slot].consumer.as_mut().expect("an aside member");
                consumer.poll_loop.keep_buffers(batch);
            }
        }
        let World { slots, logs, assignor_rng, topics, .. } = self;
        let s = &mut slots[slot];
        let consumer = s.consumer.as_mut().expect("an aside member");
        let mut env = ConsumerEnv { log: logs, rng: &mut s.rng, assignor_rng, topics };
        let (timer, at) = consumer.quiet_poll(step.at, &mut env);
        self.stepper.slots[slot].lazy = Some(LazyStep { at, timer, armed: step.at });
    }

    /// Reports the records of `batch`, finished by `conn` at `at`, part by part (`Processed`).
    fn report_batch(&mut self, at: SimTime, conn: Conn, batch: &Batch) {
        let mut index = 0;
        for (part, &(tp, first, count)) in batch.parts.iter().enumerate() {
            let spare = &mut self.spare_times;
            let times = batch.times.of_part_reusing(part, index, count as u64, spare);
            self.on_processed(at, conn, tp, first, &times);
            if let RecordTimes::Listed { arrivals, ends } = times {
                self.spare_times = (arrivals, ends);
            }
            index += count;
        }
    }

    /// Puts the `max.poll.interval.ms` timer of the batch in progress in the queue, as of its
    /// poll (or clears it between batches).
    pub(super) fn sync_poll_timer(&mut self, slot: usize) {
        let Some(consumer) = self.slots[slot].consumer.as_ref() else { return };
        let conn = consumer.conn();
        let id = self.slots[slot].timers[ConsumerTimer::MaxPoll { epoch: 0 }.slot()];
        match consumer.batch_poll_timer() {
            Some((timer, deadline, polled)) => {
                let ev = Ev::MemberTimer(conn, timer);
                self.queue.arm_as_of(id, deadline, RANK_LAST, polled, ev);
            }
            None => self.queue.cancel(id),
        }
    }

    /// After an input: a steady member's pending step leaves the queue, and a wake-up is set
    /// for the first step that will not be quiet.
    pub(in crate::world) fn set_aside(&mut self, slot: usize, now: SimTime) {
        let s = &self.slots[slot];
        let aside = self.stepper.slots[slot].lazy.is_some();
        if s.paused || s.disconnected || aside {
            return;
        }
        let Some(consumer) = s.consumer.as_ref().filter(|c| c.poll_loop_is_quiet()) else {
            return;
        };
        let Some(timer) = consumer.poll_loop.poll_step() else { return };
        let conn = consumer.conn();
        let wake_at = consumer.loud_at().min(now.saturating_add(self.params.max_poll_interval));
        let id = s.timers[timer.slot()];
        let Some((at, armed)) = self.queue.armed(id) else { return };
        if at >= consumer.loud_at() {
            return; // The very next step is not quiet.
        }
        self.queue.cancel(id);
        self.stepper.slots[slot].lazy = Some(LazyStep { at, timer, armed });
        self.resume_position(slot);
        let wake = self.stepper.slots[slot].wake;
        if self.queue.armed_at(wake) != Some(wake_at) && wake_at != SimTime::MAX {
            self.queue.arm_as_of(wake, wake_at, slot as u64, now, Ev::Wake(conn));
        }
    }

    /// Puts the pending step of `slot` back in the queue (as of when it was armed).
    pub(in crate::world) fn take_back(&mut self, slot: usize) {
        self.check_wake_used(slot);
        let s = &mut self.stepper.slots[slot];
        s.deferred_wake = None;
        let kept = s.on_cycle.take().filter(|p| Some(p.step) == s.lazy);
        s.forget_cycle_position();
        s.resume_hint = kept;
        let Some(step) = self.stepper.slots[slot].lazy.take() else { return };
        let Some(conn) = self.slots[slot].consumer.as_ref().map(|c| c.conn()) else { return };
        let id = self.slots[slot].timers[step.timer.slot()];
        let ev = Ev::MemberTimer(conn, step.timer);
        self.queue.arm_as_of(id, step.at, slot as u64, step.armed, ev);
    }

    /// Before `input` reaches `slot`, unless the member's protocol says it leaves the poll
    /// loop alone (`Consumer::input_leaves_poll_loop_alone`) or its wake-up waits with the
    /// member's steps ([`World::defer_wake`], checked first): its steps due by `now` run (if
    /// the input is not a response that changes nothing, with every member's, shared out,
    /// when those are far enough behind: [`World::share_out_before_catch_up`]), and
    /// its pending step goes back to the queue unless the input is a response that changes
    /// nothing (`Consumer::response_changes_nothing`) to a member busy with a batch (such a
    /// response only wakes a poll that waits for records).
    pub(in crate::world) fn touch_for(&mut self, slot: usize, now: SimTime, input: &ConsumerInput) {
        if self.stepper.slots[slot].lazy.is_none() {
            return;
        }
        let consumer = self.slots[slot].consumer.as_ref();
        if consumer.is_some_and(|c| c.input_leaves_poll_loop_alone(input)) {
            return;
        }
        if !consumer.is_some_and(|c| c.response_changes_nothing(input)) {
            self.share_out_before_catch_up(now);
        }
        self.catch_up(slot, now);
        let Some(consumer) = self.slots[slot].consumer.as_ref() else { return };
        let idle = consumer.response_changes_nothing(input);
        if !(idle && consumer.poll_loop.in_batch() && self.stepper.slots[slot].lazy.is_some()) {
            self.take_back(slot);
        }
    }

    /// Whether `input` to `slot` changes nothing at `now` and may be dropped without catching
    /// the member up: a heartbeat response that changes nothing, to a member its cycle shows
    /// busy with a batch at `now`. Its steps stay aside instead of being cut into a jump at
    /// every heartbeat.
    pub(in crate::world) fn changes_nothing(
        &mut self,
        slot: usize,
        now: SimTime,
        input: &ConsumerInput,
    ) -> bool {
        let Some(consumer) = self.slots[slot].consumer.as_ref() else { return false };
        consumer.response_changes_nothing(input)
            && self.stepper.slots[slot].lazy.is_some()
            && self.busy_at(slot, now)
    }

    /// A wake-up: the steps before it run, the next one goes back to the queue.
    pub(in crate::world) fn on_wake(&mut self, now: SimTime, conn: Conn) {
        let Some(slot) = self.live_slot(conn) else { return };
        if self.stepper.slots[slot].lazy.is_some() {
            self.catch_up_until(slot, now, false);
            self.take_back(slot);
        }
    }
}

/// One member's part of the world that its quiet steps write: the member, its stream, its
/// pending step (a catch-up on another thread borrows these, `parallel.rs`).
pub(super) struct AsideMember<'a> {
    pub consumer: &'a mut Consumer,
    pub rng: &'a mut SimRng,
    pub lazy: &'a mut Option<LazyStep>,
    /// Its deferred wake-up ([`World::defer_wake`]).
    pub wake: &'a mut Option<Bound>,
}

/// The member's next aside step, and whether it is due whatever the catch-up's bound (it
/// comes before a deferred wake-up, an event already handled, or it is that wake-up). A
/// deferred wake-up ([`World::defer_wake`]) that comes before the pending step is used up
/// here: a member that waits in `poll()` (its pending step is the wake-up of its current
/// poll) polls again at its instant, as `Consumer::wake` does: the pending step becomes
/// that wake-up (the poll's own, at a later instant, is replaced as `poll()` cancels it); a
/// member busy with a batch ignores it.
fn next_aside_step(
    consumer: &Consumer,
    lazy: &mut Option<LazyStep>,
    wake: &mut Option<Bound>,
) -> Option<(LazyStep, bool)> {
    let step = (*lazy)?;
    let Some(after) = *wake else { return Some((step, false)) };
    if after.admits(step.at) {
        return Some((step, true));
    }
    *wake = None;
    let poll_loop = &consumer.poll_loop;
    let waiting = matches!(step.timer, ConsumerTimer::PollWake { epoch }
        if poll_loop.in_poll && epoch == poll_loop.epoch);
    if !waiting {
        return Some((step, false));
    }
    let woken = LazyStep { at: after.until, timer: step.timer, armed: after.until };
    *lazy = Some(woken);
    Some((woken, true))
}

/// Whether a catch-up to `bound` runs a step due at `at`, `woken` if it is due whatever the
/// bound ([`next_aside_step`]; it still comes before the member's auto-commit deadline).
fn admitted(bound: Bound, at: SimTime, woken: bool) -> bool {
    bound.admits(at) || (woken && at < bound.loud)
}

/// [`World::run_quiet_steps`]'s loop when the reports are folded (`fold.rs`; the common
/// case of a stochastic run): each step as [`World::run_quiet_step`] runs it, its finished
/// batch held for the catch-up's report of each partition instead of reported; the member,
/// the logs, its stream, its pending step and the fold are borrowed once for the whole
/// catch-up instead of looked up at every step. When the member lists each record's
/// times (variable processing), its fetches put their records straight into the fold
/// (`Consumer::quiet_poll_into`): the batch in progress is the fold's, and goes back to the
/// member when the loop stops (`FoldedReports::reopen_into`), so only a batch that spans
/// two catch-ups is ever copied. A member that does not list them polls with the assignor's
/// stream and the topics of `plain` (`ConsumerEnv`; a member that lists them never asks).
/// It stops after the step that fills the fold
/// ([`fold::FoldedReports::is_full`](super::fold::FoldedReports::is_full)). Gives the
/// time of the last step run.
pub(super) fn run_folded_steps<L: LogView>(
    member: &mut AsideMember<'_>,
    logs: &mut L,
    folded: &mut FoldedReports,
    bound: Bound,
    mut plain: Option<(&mut SimRng, &[Topic])>,
) -> Option<SimTime> {
    let AsideMember { consumer, rng, lazy, wake } = member;
    // The member's sampler, lent to each poll's sink while the member fetches.
    let processing = consumer.processing().clone();
    // Listed records go straight into the fold: a batch that ends within the catch-up
    // is never copied (the fold holds the batch in progress, `fold::OpenBatch`).
    let into_fold = consumer.lists_records();
    let mut last = None;
    while let Some((step, woken)) = next_aside_step(consumer, lazy, wake) {
        // The batch in progress is the fold's or the member's.
        let open = folded.open_poll();
        let expired = match open {
            Some((_, polled)) => consumer.poll_deadline(polled) < step.at,
            None => consumer.poll_timer_expired_by(step.at),
        };
        if !admitted(bound, step.at, woken) || expired {
            break;
        }
        last = Some(step.at);
        if let Some((epoch, _)) = open {
            debug_assert_eq!(step.timer, ConsumerTimer::BatchDone { epoch });
            folded.close_batch();
        } else {
            match consumer.end_quiet_step(step.timer) {
                QuietStep::Stale => {
                    **lazy = None;
                    break;
                }
                QuietStep::Woke => {}
                QuietStep::Finished => {
                    let poll_loop = &mut consumer.poll_loop;
                    let batch = poll_loop.batch.as_ref().expect("a finished batch");
                    let owned = &poll_loop.owned;
                    let place_of = |tp: &Tp| owned.index_of(tp).expect("an owned partition");
                    folded.add_batch(batch, place_of);
                    poll_loop.recycle_batch();
                }
            }
        }
        let (timer, at) = if into_fold {
            let mut poll = FoldingPoll::new(folded, &processing, rng, step.at);
            match consumer.quiet_poll_into(step.at, &mut *logs, &mut poll) {
                Ok(epoch) => {
                    let end = poll.end();
                    folded.open_batch(epoch, step.at, end);
                    (ConsumerTimer::BatchDone { epoch }, end)
                }
                Err(wait) => wait,
            }
        } else {
            let Some((assignor_rng, topics)) = plain.as_mut() else {
                unreachable!("a member that does not list its records polls in the world")
            };
            let log = &mut *logs;
            let mut env = ConsumerEnv { log, rng, assignor_rng, topics };
            consumer.quiet_poll(step.at, &mut env)
        };
        **lazy = Some(LazyStep { at, timer, armed: step.at });
        debug_assert_eq!(consumer.loud_at(), bound.loud, "a quiet step changed loud_at");
        if folded.is_full() {
            break;
        }
    }
    folded.reopen_into(&mut consumer.poll_loop);
    last
}

/// The catch-up the ownership books ask for before a partition changes (`crate::ownership`,
/// through `Stepper::catch_up_owner` and `Stepper::behind`).
impl World<'_, Fast> {
    /// Runs the aside steps of `owner` (if still its slot's incarnation) that come before the
    /// event being handled at `now`.
    pub(in crate::world) fn catch_up_conn(&mut self, owner: Conn, now: SimTime) {
        if self.has_aside_steps(owner) {
            self.catch_up(owner.slot as usize, now);
        }
    }

    /// Whether `owner` has aside steps that come before the event being handled at `now`.
    pub(in crate::world) fn conn_behind(&self, owner: Conn, now: SimTime) -> bool {
        if !self.has_aside_steps(owner) {
            return false;
        }
        let slot = owner.slot as usize;
        let Some(step) = self.stepper.slots[slot].lazy else { return false };
        let inclusive = (slot as u64) < self.stepper.current_rank;
        let due = step.at < now || (inclusive && step.at == now);
        due && self.step_stays_quiet(slot, step.at)
    }
}

impl World<'_, Fast> {
    /// Whether incarnation `conn` (not a later one of its slot) has steps aside.
    fn has_aside_steps(&self, conn: Conn) -> bool {
        let slot = self.slots.get(conn.slot as usize);
        slot.is_some_and(|s| s.incarnation == conn.incarnation)
            && self.stepper.slots[conn.slot as usize].lazy.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::super::cycle::MAX_RECORDED;
    use super::*;

    /// Recordings that end without a repeat add up: at [`VAIN_STEPS`] steps recorded in
    /// vain the member waits [`FIRST_RECORD_WAIT`] off-cycle steps, after the next such run
    /// twice as many, up to [`MAX_RECORD_WAIT`]; a new generation of its partitions starts
    /// afresh.
    #[test]
    fn recordings_in_vain_back_off() {
        let mut b = RecordBackoff::default();
        assert!(b.allows(3));
        b.on_no_repeat(40, 3);
        assert!(b.allows(3), "40 steps in vain are below 64");
        b.on_no_repeat(24, 3);
        assert!(!b.allows(3), "64 steps in vain: wait 1,024 off-cycle steps");
        (0..1_023).for_each(|_| b.on_off_cycle_step());
        assert!(!b.allows(3));
        b.on_off_cycle_step();
        assert!(b.allows(3));
        b.on_no_repeat(MAX_RECORDED, 3);
        (0..2_047).for_each(|_| b.on_off_cycle_step());
        assert!(!b.allows(3), "then 2,048");
        assert!(b.allows(4), "a new assignment starts afresh");
        assert_eq!(b, RecordBackoff::default());
        (0..20).for_each(|_| b.on_no_repeat(MAX_RECORDED, 1));
        assert_eq!(b.wait, MAX_RECORD_WAIT);
    }

    /// `validate`'s memory estimate counts the cycles a steady member keeps.
    #[test]
    fn the_estimate_knows_the_cycles() {
        assert_eq!(MAX_CYCLES as f64, scenario::estimate::CYCLES_PER_MEMBER);
        assert_eq!((MAX_RECORDED + 1) as f64, scenario::estimate::CYCLE_STEPS_MAX);
    }
}
