//! Periodic jumps of fast stepping: when a member's aside steps repeat (constant arrivals
//! exactly evenly spaced, constant processing), whole stretches of them are applied at once.
//!
//! While a member catches up, the loop state after each aside step is recorded with its
//! signature ([`crate::consumer::Consumer::loop_signature`]: everything that decides the
//! coming steps, relative to the last poll). When a signature repeats, the steps between the two are one *cycle*: from
//! any state with the signature of a cycle phase, the member runs the cycle's steps again,
//! shifted in time and offsets (the arrivals are exactly evenly spaced, so the same records
//! are waiting at the same relative times). A jump then emits the records of the skipped
//! steps (whole periods as one `ProcessedPeriodic` per partition, the rest as `Processed`)
//! and sets the member's loop state to the recorded state of the phase it lands on, shifted.
//! The cycle stays with the member for later catch-ups until an input changes it.

use super::lazy::LazyStep;
use super::Fast;
use crate::consumer::{ConsumerTimer, LoopShift, LoopState, PollLoop, SIGNATURE_HEAD};
use crate::observe::PeriodicStretch;
use crate::records::RecordTimes;
use crate::types::Tp;
use crate::world::World;
use sim_core::SimTime;
use std::collections::BTreeSet;

/// Records processed at one step: partition, first offset, times.
pub(in crate::world) type Processed = (Tp, u64, RecordTimes);

/// Records of several steps of one partition: first offset, arrivals, ends.
type Gathered = (u64, Vec<SimTime>, Vec<SimTime>);

/// The records one period (from phase 0) processes of one partition, in the frame of the
/// recorded cycle: the partition's place in the cycle's partitions, its first offset, and
/// where its records are in the [`Patterns`] of the cycle.
type Pattern = (usize, u64, std::ops::Range<usize>);

/// The records of a period, every partition's one after the other (lent to the observer by
/// every jump that emits them): a jump reads the latencies of all its partitions from one
/// short array instead of two allocations per partition.
#[derive(Clone, Debug, Default)]
struct Patterns {
    /// Per partition with records, in owned order.
    parts: Vec<Pattern>,
    arrivals: Vec<SimTime>,
    ends: Vec<SimTime>,
    /// `ends[k] - arrivals[k]` (zero if negative, as a latency is counted).
    latencies: Vec<SimTime>,
}

/// The state after one aside step.
#[derive(Clone, Debug)]
pub(in crate::world) struct Snapshot {
    /// The member's loop state after the step.
    pub state: LoopState,
    /// Its pending step.
    pub next: LazyStep,
    /// What the step processed.
    pub processed: Vec<Processed>,
}

/// One period of a member's repeating steps.
#[derive(Clone, Debug)]
pub(in crate::world) struct Cycle {
    /// `snaps[0]` is the state the period starts from; `snaps[1..=n]` the states after each of
    /// its `n` steps; `snaps[n]` is `snaps[0]` shifted by `period`.
    snaps: Vec<Snapshot>,
    period: LoopShift,
    /// The member's partitions, in owned order (the offsets of a shift follow it).
    tps: Vec<Tp>,
    /// The signature of each phase (`0..n`).
    signatures: Vec<Vec<i64>>,
    /// (signature hash, phase), sorted: a lookup compares hashes, then one signature.
    phases: Vec<(u64, usize)>,
    /// The first words of each phase's signature (`Consumer::loop_signature_head`), sorted: a
    /// state whose head is not among them is on no phase, found before its whole signature
    /// (which reads every partition's log) is computed.
    heads: Vec<[i64; SIGNATURE_HEAD]>,
    /// The records of the period from phase 0, per partition with records, in the frame of
    /// the recorded cycle. A jump from any phase emits a stretch of their cyclic repetition.
    pattern: Patterns,
    /// `step_at[k]`: when the pending step of snapshot `k` is due (`snaps[k].next.at`), kept
    /// together: a jump's bound reads it for several phases, and the snapshots lie far apart.
    step_at: Vec<SimTime>,
    /// `counts[k]`: the records processed by steps `1..=k` of the period.
    counts: Vec<u64>,
    /// `by_part[k * tps.len() + i]`: the records of partition `i` (owned order) processed by
    /// steps `1..=k` (one array: a jump reads three rows of it per partition).
    by_part: Vec<u64>,
}

/// Where a member stands on one of its cycles (index in `StepperSlot::cycles`, phase, shift from
/// the recorded state), as found by the last jump or lookup. Valid while the member's pending
/// step is `step`: running, taking back or re-recording its steps clears it.
#[derive(Clone, Debug)]
pub(in crate::world) struct OnCycle {
    cycle: usize,
    q: usize,
    shift: LoopShift,
    pub(in crate::world) step: LazyStep,
}

/// The recording of one catch-up, looking for a repeat.
#[derive(Default)]
pub(in crate::world) struct Recorder {
    snaps: Vec<Snapshot>,
    signatures: Vec<Vec<i64>>,
    /// (signature hash, index in `signatures`).
    seen: BTreeSet<(u64, usize)>,
}

/// Whole periods one jump may cover (a bound for the search, far above any catch-up's reach).
const MAX_JUMP_PERIODS: u64 = 1 << 20;

/// Room reserved for a signature (4 + 2 per partition + 3 + 2 per batch part: ten
/// partitions fit without growing).
const SIGNATURE_CAPACITY: usize = 64;

/// Snapshots kept per catch-up while looking for a cycle.
pub(in crate::world) const MAX_RECORDED: usize = 256;

/// The pending step as a signature names it: its kind (0 batch end, 1 poll wake-up) and time.
fn step_kind(step: LazyStep) -> (u8, SimTime) {
    (u8::from(matches!(step.timer, ConsumerTimer::PollWake { .. })), step.at)
}

/// A hash of a signature (FxHash's mixing step: deterministic, a few cycles per word): a
/// lookup compares one word per entry, then one whole signature.
fn signature_hash(signature: &[i64]) -> u64 {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    signature
        .iter()
        .fold(signature.len() as u64, |h, &w| (h.rotate_left(5) ^ w as u64).wrapping_mul(SEED))
}

/// The first index recorded under `hash` in `seen` that `matches`.
fn find_hashed(
    seen: &BTreeSet<(u64, usize)>,
    hash: u64,
    matches: impl Fn(usize) -> bool,
) -> Option<usize> {
    seen.range((hash, 0)..=(hash, usize::MAX)).map(|&(_, i)| i).find(|&i| matches(i))
}

/// The records of steps `1..=n` of a period (snapshots `1..=n`) per partition with records,
/// in offset order (they are contiguous per partition), in the frame of the recording.
fn period_records(snaps: &[Snapshot], tps: &[Tp]) -> Patterns {
    let mut by_part: Vec<Option<Gathered>> = vec![None; tps.len()];
    for snap in &snaps[1..] {
        for note in &snap.processed {
            let i = tps.binary_search(&note.0).expect("an owned partition");
            let acc = by_part[i].get_or_insert_with(|| (note.1, vec![], vec![]));
            debug_assert_eq!(acc.0 + acc.2.len() as u64, note.1, "contiguous records");
            for (arrival, end) in note.2.pairs(0, note.2.len()) {
                acc.1.push(arrival);
                acc.2.push(end);
            }
        }
    }
    let mut patterns = Patterns::default();
    for (i, gathered) in by_part.into_iter().enumerate() {
        let Some((first, arrivals, ends)) = gathered else { continue };
        let from = patterns.ends.len();
        let latencies = arrivals.iter().zip(&ends).map(|(a, e)| e.saturating_sub(*a));
        patterns.latencies.extend(latencies);
        patterns.arrivals.extend(arrivals);
        patterns.ends.extend(ends);
        patterns.parts.push((i, first, from..patterns.ends.len()));
    }
    patterns
}

/// Per step `k` of a period (snapshots `1..=k`), the records processed per partition, summed:
/// row `k` (`tps.len()` sums) after row `k - 1`.
fn records_by_part(snaps: &[Snapshot], tps: &[Tp]) -> Vec<u64> {
    let width = tps.len();
    let mut sums = vec![0; width];
    for (k, snap) in snaps.iter().enumerate().skip(1) {
        sums.extend_from_within((k - 1) * width..k * width);
        let row = &mut sums[k * width..];
        for (tp, _, times) in &snap.processed {
            row[tps.binary_search(tp).expect("an owned partition")] += times.len();
        }
    }
    sums
}

impl Recorder {
    /// The signature and loop state recorded last, if they are those of the pending step
    /// `step` (the member has not moved since): a lookup on the cycles can use them instead
    /// of computing them again.
    pub fn position_of(&self, step: LazyStep) -> Option<Position<'_>> {
        let snap = self.snaps.last().filter(|s| s.next == step)?;
        Some(Position { signature: self.signatures.last()?, state: &snap.state })
    }

    /// Snapshots recorded.
    pub fn len(&self) -> usize {
        self.snaps.len()
    }

    /// Whether it holds [`MAX_RECORDED`] snapshots: a repeat found later would miss the steps
    /// not kept, so the recording ends there.
    pub fn is_full(&self) -> bool {
        self.snaps.len() >= MAX_RECORDED
    }

    /// Adds the state after a step; returns the cycle if its signature was seen before.
    pub fn push(&mut self, signature: Vec<i64>, snap: Snapshot, tps: Vec<Tp>) -> Option<Cycle> {
        assert!(!self.is_full(), "a full recording ends");
        let hash = signature_hash(&signature);
        if let Some(start) = find_hashed(&self.seen, hash, |i| self.signatures[i] == signature) {
            let at = |s: &Snapshot| s.state.last_poll();
            let from = &self.snaps[start];
            let period = LoopShift::between(&from.state, at(from), &snap.state, at(&snap));
            let mut snaps: Vec<Snapshot> = self.snaps[start..].to_vec();
            snaps.push(snap);
            let signatures = self.signatures.split_off(start);
            let mut phases: Vec<(u64, usize)> =
                signatures.iter().map(|s| signature_hash(s)).zip(0..).collect();
            phases.sort_unstable();
            let mut heads: Vec<[i64; SIGNATURE_HEAD]> = signatures
                .iter()
                .map(|s| s[..SIGNATURE_HEAD].try_into().expect("a signature starts with its head"))
                .collect();
            heads.sort_unstable();
            heads.dedup();
            let counts = std::iter::once(0)
                .chain(snaps[1..].iter().scan(0, |sum, snap| {
                    *sum += snap.processed.iter().map(|p| p.2.len()).sum::<u64>();
                    Some(*sum)
                }))
                .collect();
            let by_part = records_by_part(&snaps, &tps);
            let pattern = period_records(&snaps, &tps);
            let step_at = snaps.iter().map(|snap| snap.next.at).collect();
            return Some(Cycle {
                snaps,
                period,
                tps,
                signatures,
                phases,
                heads,
                pattern,
                step_at,
                counts,
                by_part,
            });
        }
        self.seen.insert((hash, self.snaps.len()));
        self.signatures.push(signature);
        self.snaps.push(snap);
        None
    }
}

/// A member's signature and loop state at its pending step, already computed.
#[derive(Clone, Copy)]
pub(in crate::world) struct Position<'a> {
    signature: &'a [i64],
    state: &'a LoopState,
}

/// Where a jump may go: steps due before `until` (or at it if `inclusive`) and before `loud`.
#[derive(Clone, Copy, Debug)]
pub(in crate::world) struct Bound {
    pub until: SimTime,
    pub inclusive: bool,
    pub loud: SimTime,
}

impl Bound {
    /// The first time not admitted: every step due before it is admitted.
    fn limit(&self) -> SimTime {
        let until = if self.inclusive {
            self.until.saturating_add(SimTime::from_nanos(1))
        } else {
            self.until
        };
        until.min(self.loud)
    }

    /// Whether a step due at `at` may run.
    pub(in crate::world) fn admits(&self, at: SimTime) -> bool {
        at < self.limit()
    }
}

impl Cycle {
    fn len(&self) -> usize {
        self.snaps.len() - 1
    }

    /// The time of step `m` (1-based) after phase `q`, for a member at `S_q + shift`.
    fn step_time(&self, q: usize, m: u64, shift: &LoopShift) -> SimTime {
        let n = self.len() as u64;
        let (wraps, phase) = ((q as u64 + m - 1) / n, (q as u64 + m - 1) % n);
        let base = self.step_at[phase as usize] + shift.time;
        base + SimTime::from_nanos(self.period.time.as_nanos() * wraps)
    }

    /// The phase of a member in loop state `consumer` (with `signature`) on this cycle, and
    /// its shift from the recorded state of that phase.
    fn locate(&self, signature: &[i64], poll_loop: &PollLoop) -> Option<(usize, LoopShift)> {
        let hash = signature_hash(signature);
        let from = self.phases.partition_point(|&(h, _)| h < hash);
        let same_hash = self.phases[from..].iter().take_while(|&&(h, _)| h == hash);
        let q = same_hash.map(|&(_, q)| q).find(|&q| self.signatures[q] == signature)?;
        let base = &self.snaps[q].state;
        if poll_loop.owned_len() != self.tps.len() || poll_loop.last_poll() < base.last_poll() {
            return None;
        }
        Some((q, poll_loop.shift_since(base, base.last_poll())))
    }

    /// How many steps from phase `q` fit in `bound` (at most [`MAX_JUMP_PERIODS`] periods):
    /// those due before its limit whose successor is due by `bound.loud`, since a poll waiting
    /// before the Java auto-commit deadline wakes no later than it (`Consumer::next_wake`),
    /// which the recorded cycle does not know. The step cut short is run by the member.
    fn steps_within(&self, q: usize, shift: &LoopShift, bound: Bound) -> u64 {
        let within = self.steps_before(q, shift, bound.limit());
        if bound.loud == SimTime::MAX {
            return within;
        }
        let followed =
            self.steps_before(q, shift, bound.loud.saturating_add(SimTime::from_nanos(1)));
        within.min(followed.saturating_sub(1))
    }

    /// [`Cycle::steps_within`] when one jump of them reaches the bound: `None` when the
    /// step after them is still admitted (a step the auto-commit deadline may cut short, or
    /// the longest jump), so that a catch-up would run more than that jump.
    fn steps_reaching(&self, q: usize, shift: &LoopShift, bound: Bound) -> Option<u64> {
        let m = self.steps_within(q, shift, bound);
        (!bound.admits(self.step_time(q, m + 1, shift))).then_some(m)
    }

    /// How many steps from phase `q` are due before `limit` (at most [`MAX_JUMP_PERIODS`]
    /// periods). Step `k n` (the last of the `k`-th period) is due at `last + (k - 1) period`,
    /// where `last` is the time of step `n`: whole periods in closed form, then single steps.
    fn steps_before(&self, q: usize, shift: &LoopShift, limit: SimTime) -> u64 {
        let n = self.len() as u64;
        if self.step_time(q, 1, shift) >= limit {
            return 0;
        }
        let last = self.step_time(q, n, shift).as_nanos();
        let limit_ns = limit.as_nanos();
        let period = self.period.time.as_nanos();
        let periods = match (last < limit_ns, period) {
            (false, _) => 0,
            (true, 0) => MAX_JUMP_PERIODS,
            (true, period) => ((limit_ns - 1 - last) / period + 1).min(MAX_JUMP_PERIODS),
        };
        let mut m = periods * n;
        while m < periods * n + n && self.step_time(q, m + 1, shift) < limit {
            m += 1;
        }
        m
    }

    /// How many records of partition `i` the `r` (at most `n`) steps after phase `q` process.
    fn part_records(&self, q: usize, r: usize, i: usize) -> u64 {
        let n = self.len();
        let sum = |k: usize| self.part_sum(k, i);
        if q + r <= n {
            sum(q + r) - sum(q)
        } else {
            sum(n) - sum(q) + sum(q + r - n)
        }
    }

    /// The records of partition `i` processed by steps `1..=k` of the period.
    fn part_sum(&self, k: usize, i: usize) -> u64 {
        self.by_part[k * self.tps.len() + i]
    }

    /// How many records the `m` steps after phase `q` process.
    fn record_count(&self, q: usize, m: u64) -> u64 {
        let n = self.len();
        let (periods, rest) = (m / n as u64, (m % n as u64) as usize);
        // Steps q + 1 ..= q + rest of the period, wrapping around its end.
        let partial = if q + rest <= n {
            self.counts[q + rest] - self.counts[q]
        } else {
            self.counts[n] - self.counts[q] + self.counts[q + rest - n]
        };
        periods * self.counts[n] + partial
    }
}

impl World<'_, Fast> {
    /// Jumps `slot` along its cycle as far as `bound` allows; true if it moved. `known`: the
    /// member's position, if already computed.
    pub(in crate::world) fn jump(
        &mut self,
        slot: usize,
        bound: Bound,
        known: Option<Position>,
    ) -> bool {
        if !self.on_cycle(slot, known) {
            return false;
        }
        // Taken, not copied: a jump that moves replaces it, one that does not puts it back.
        let position = self.stepper.slots[slot].on_cycle.take().expect("found above");
        let cycles = std::mem::take(&mut self.stepper.slots[slot].cycles);
        let moved = self.jump_along(slot, &cycles[position.cycle], position, bound);
        self.stepper.slots[slot].cycles = cycles;
        moved
    }

    /// Whether `slot` stands on one of its cycles; if it does, `StepperSlot::on_cycle` says where:
    /// the position kept by the last jump or lookup while the pending step is unchanged, else
    /// looked up (and kept).
    fn on_cycle(&mut self, slot: usize, known: Option<Position>) -> bool {
        let Some(step) =
            self.stepper.slots[slot].lazy.filter(|_| !self.stepper.slots[slot].cycles.is_empty())
        else {
            return false;
        };
        if self.stepper.slots[slot].on_cycle.as_ref().is_some_and(|p| p.step == step) {
            #[cfg(debug_assertions)]
            self.check_kept_position(slot, step);
            return true;
        }
        if self.stepper.slots[slot].off_cycle == Some(step) {
            debug_assert!(
                self.locate(slot, step, None).is_none(),
                "slot {slot}, known to be on none of its cycles, is on one"
            );
            return false;
        }
        let found = self.locate(slot, step, known);
        self.stepper.slots[slot].off_cycle = if found.is_none() { Some(step) } else { None };
        self.stepper.slots[slot].on_cycle = found;
        self.stepper.slots[slot].on_cycle.is_some()
    }

    /// `slot` just went aside again after its pending step had been taken back at a known
    /// position: if it stands at that position or one step further (its loop state and
    /// pending step are that snapshot's, shifted, as a jump would set them), that is its
    /// position now, found without a lookup (a sample would otherwise look it up: a
    /// signature and a search per member after each wake-up).
    pub(in crate::world) fn resume_position(&mut self, slot: usize) {
        let Some(hint) = self.stepper.slots[slot].resume_hint.take() else { return };
        let Some(step) = self.stepper.slots[slot].lazy else { return };
        let cycle = self.stepper.slots[slot].cycles.get(hint.cycle);
        let (Some(cycle), Some(consumer)) = (cycle, self.slots[slot].consumer.as_ref()) else {
            return;
        };
        let n = cycle.len();
        let stands_at = |k: usize| {
            let (wraps, q) = (((hint.q + k) / n) as u64, (hint.q + k) % n);
            let wrapped;
            let shift = match wraps {
                0 => &hint.shift,
                _ => {
                    wrapped = hint.shift.plus(&cycle.period, wraps);
                    &wrapped
                }
            };
            let snap = &cycle.snaps[q];
            let found = shift_step(snap.next, shift) == step
                && consumer.poll_loop.loop_state_is(&snap.state, shift);
            found.then_some((q, wraps))
        };
        let Some((q, wraps)) = (0..2).find_map(stands_at) else { return };
        let shift = match wraps {
            0 => hint.shift,
            _ => hint.shift.plus(&cycle.period, wraps),
        };
        self.stepper.slots[slot].on_cycle = Some(OnCycle { cycle: hint.cycle, q, shift, step });
        self.stepper.slots[slot].off_cycle = None;
    }

    /// Debug builds: the kept position of `slot` is the one a fresh lookup finds.
    #[cfg(debug_assertions)]
    fn check_kept_position(&mut self, slot: usize, step: LazyStep) {
        let kept = self.stepper.slots[slot].on_cycle.clone().expect("a kept position");
        let fresh = self.locate(slot, step, None);
        assert!(
            fresh.is_some_and(|p| (p.cycle, p.q, &p.shift) == (kept.cycle, kept.q, &kept.shift)),
            "the kept cycle position of slot {slot} is stale"
        );
    }

    /// The cycle, phase and shift of `slot`'s kept position (after [`World::on_cycle`]).
    fn kept_position(&self, slot: usize) -> Option<(&Cycle, usize, &LoopShift)> {
        let p = self.stepper.slots[slot].on_cycle.as_ref()?;
        Some((&self.stepper.slots[slot].cycles[p.cycle], p.q, &p.shift))
    }

    /// The loop state of `slot` when its coming steps may repeat: its signature, the state
    /// and the time of its last poll (debug builds check known positions with it).
    fn loop_position(&mut self, slot: usize) -> Option<(Vec<i64>, LoopState, SimTime)> {
        let step = self.stepper.slots[slot].lazy?;
        let signature = self.signature(slot, step)?;
        let consumer = self.slots[slot].consumer.as_ref()?;
        Some((signature, consumer.poll_loop.loop_state(), consumer.poll_loop.last_poll()))
    }

    /// Looks `slot` (with pending step `step`) up on its cycles, with the signature of
    /// position `known` if given (debug builds check it against a fresh computation).
    fn locate(&mut self, slot: usize, step: LazyStep, known: Option<Position>) -> Option<OnCycle> {
        // A computed signature goes into the world's scratch buffer (one lookup per step of
        // a member off its cycles: no allocation per lookup).
        let mut computed = std::mem::take(&mut self.stepper.signature_scratch);
        let found = self.locate_with(slot, step, known, &mut computed);
        self.stepper.signature_scratch = computed;
        found
    }

    /// [`World::locate`], computing the signature into `computed` when none is `known`.
    fn locate_with(
        &mut self,
        slot: usize,
        step: LazyStep,
        known: Option<Position>,
        computed: &mut Vec<i64>,
    ) -> Option<OnCycle> {
        let signature = match known {
            Some(Position { signature, state }) => {
                debug_assert!(
                    self.loop_position(slot).is_some_and(|(s, st, at)| {
                        s == signature
                            && format!("{st:?}") == format!("{state:?}")
                            && at == state.last_poll()
                    }),
                    "the known position of slot {slot} is stale"
                );
                signature
            }
            None => {
                if !self.may_be_on_a_cycle(slot, step) {
                    debug_assert!(
                        !self.signature_into(slot, step, computed) || {
                            let consumer = self.slots[slot].consumer.as_ref().expect("a member");
                            let cycles = &self.stepper.slots[slot].cycles;
                            cycles.iter().all(|c| c.locate(computed, &consumer.poll_loop).is_none())
                        },
                        "slot {slot} ruled off its cycles by the head of its signature is on one"
                    );
                    return None;
                }
                if !self.signature_into(slot, step, computed) {
                    return None;
                }
                &computed[..]
            }
        };
        let consumer = self.slots[slot].consumer.as_ref()?;
        self.stepper.slots[slot].cycles.iter().enumerate().find_map(|(cycle, c)| {
            let (q, shift) = c.locate(signature, &consumer.poll_loop)?;
            Some(OnCycle { cycle, q, shift, step })
        })
    }

    /// Jumps `slot`, at `position` (`S_q + shift`) on `cycle`, as many steps as `bound`
    /// allows; the position it lands on is kept (the one given if it did not move).
    fn jump_along(&mut self, slot: usize, cycle: &Cycle, position: OnCycle, bound: Bound) -> bool {
        let OnCycle { cycle: index, q, mut shift, .. } = position;
        let m = cycle.steps_within(q, &shift, bound);
        if m == 0 {
            self.stepper.slots[slot].on_cycle = Some(OnCycle { shift, ..position });
            return false;
        }
        let n = cycle.len() as u64;
        self.emit_stretch(slot, cycle, q, &shift, m);
        let (wraps, phase) = ((q as u64 + m) / n, ((q as u64 + m) % n) as usize);
        shift.add(&cycle.period, wraps);
        let target = &cycle.snaps[phase];
        // The jump writes the poll loop only (not the membership).
        let consumer = self.slots[slot].consumer.as_mut().expect("an aside member is alive");
        consumer.poll_loop.set_loop_state_shifted(&target.state, &shift);
        let step = shift_step(target.next, &shift);
        self.stepper.slots[slot].lazy = Some(step);
        self.stepper.slots[slot].on_cycle = Some(OnCycle { cycle: index, q: phase, shift, step });
        self.stepper.slots[slot].off_cycle = None;
        true
    }

    /// The records `slot`'s aside steps due by `bound` would process, if it is on one of its
    /// cycles and every one of them is processed for the first time (each of its partitions'
    /// next record is at or above the highest offset processed so far): a sample counts them
    /// without running the steps. `None`: the member must catch up instead.
    pub(in crate::world) fn unreported_records(
        &mut self,
        slot: usize,
        bound: Bound,
    ) -> Option<u64> {
        let consumer = self.slots[slot].consumer.as_ref()?;
        let fresh = consumer
            .poll_loop
            .next_unprocessed()
            .all(|(tp, offset)| self.books.is_unprocessed(tp, offset));
        if !fresh {
            return None;
        }
        if !self.on_cycle(slot, None) {
            return None;
        }
        let (cycle, q, shift) = self.kept_position(slot)?;
        // A jump stopping short of the bound leaves due records uncounted: catch up instead.
        let m = cycle.steps_reaching(q, shift, bound)?;
        Some(cycle.record_count(q, m))
    }

    /// Whether `slot`, on a known cycle, is busy with a batch once its steps due by `now`
    /// (inclusive) have run, found on the cycle without running them; `false` when that is
    /// not known, or when a catch-up to `now` would do more than one jump (a loud or expired
    /// step on the way, a backlog).
    pub(in crate::world) fn busy_at(&mut self, slot: usize, now: SimTime) -> bool {
        let Some(consumer) = self.slots[slot].consumer.as_ref() else { return false };
        let loud = consumer.loud_at();
        if !self.stepper.periodic || consumer.in_full_batch() || !self.step_stays_quiet(slot, now) {
            return false;
        }
        if !self.on_cycle(slot, None) {
            return false;
        }
        let Some((cycle, q, shift)) = self.kept_position(slot) else { return false };
        let bound = Bound { until: now, inclusive: true, loud };
        let Some(m) = cycle.steps_reaching(q, shift, bound) else { return false };
        let phase = (q as u64 + m) % cycle.len() as u64;
        matches!(cycle.snaps[phase as usize].next.timer, ConsumerTimer::BatchDone { .. })
    }

    /// False when the head of `slot`'s signature at `step` is that of no phase of its cycles
    /// (then neither is its signature): most steps of a member working off a backlog, whose
    /// batches last longer than any of a steady cycle, are ruled out without reading a log.
    fn may_be_on_a_cycle(&self, slot: usize, step: LazyStep) -> bool {
        let Some(consumer) = self.slots[slot].consumer.as_ref() else { return false };
        let Some(head) = consumer.loop_signature_head(step_kind(step)) else { return false };
        self.stepper.slots[slot].cycles.iter().any(|c| c.heads.binary_search(&head).is_ok())
    }

    /// The signature of `slot`'s loop state with pending step `step` (None: not periodic).
    pub(in crate::world) fn signature(&mut self, slot: usize, step: LazyStep) -> Option<Vec<i64>> {
        let mut out = Vec::with_capacity(SIGNATURE_CAPACITY);
        self.signature_into(slot, step, &mut out).then_some(out)
    }

    /// Writes the signature of `slot` at `step` into `out` (emptied first); false when it has
    /// none (not periodic).
    fn signature_into(&mut self, slot: usize, step: LazyStep, out: &mut Vec<i64>) -> bool {
        out.clear();
        let Some(consumer) = self.slots[slot].consumer.as_ref().filter(|_| self.stepper.periodic)
        else {
            return false;
        };
        let spacings = &self.stepper.spacings;
        let spacing = |tp: Tp| spacings[tp.topic as usize][tp.partition as usize];
        let armed = step.armed.as_nanos() as i64 - consumer.poll_loop.last_poll().as_nanos() as i64;
        let ok = consumer.loop_signature(&mut self.logs, &spacing, step_kind(step), out);
        out.push(armed);
        ok
    }

    /// Emits the records of the `m` steps after phase `q` of a member at `S_q + shift`: per
    /// partition, the stretch of the period's records (repeated period after period) that
    /// starts after the records of steps `1..=q`.
    fn emit_stretch(&mut self, slot: usize, cycle: &Cycle, q: usize, shift: &LoopShift, m: u64) {
        let n = cycle.len();
        let (periods, rest) = (m / n as u64, (m % n as u64) as usize);
        let consumer = self.slots[slot].consumer.as_ref().expect("an aside member is alive");
        // The member's partitions in the places of the recorded ones (the pattern follows
        // the places in order).
        let mut places = consumer.owned_partitions().enumerate();
        let records = &cycle.pattern;
        for (i, first, range) in &records.parts {
            let per_period = cycle.part_sum(n, *i);
            let count = periods * per_period + cycle.part_records(q, rest, *i);
            if count == 0 {
                continue;
            }
            debug_assert_eq!(
                per_period, cycle.period.offsets[*i],
                "a period reads what it processes"
            );
            let start = cycle.part_sum(q, *i);
            let tp =
                places.find(|(place, _)| place == i).expect("as many partitions as the cycle").1;
            let first = first.wrapping_add(start).wrapping_add(shift.offsets[*i]);
            self.books.raise_frontier(tp, first + count); // The owner's own records.
            self.observer.observe_periodic(PeriodicStretch {
                tp,
                first,
                arrivals: &records.arrivals[range.clone()],
                ends: &records.ends[range.clone()],
                latencies: &records.latencies[range.clone()],
                start,
                count,
                shift: shift.time,
                period: cycle.period.time,
            });
        }
    }
}

/// `step` moved by `shift` (time and poll epoch).
fn shift_step(step: LazyStep, shift: &LoopShift) -> LazyStep {
    let timer = match step.timer {
        ConsumerTimer::BatchDone { epoch } => {
            ConsumerTimer::BatchDone { epoch: epoch.wrapping_add(shift.epoch) }
        }
        ConsumerTimer::PollWake { epoch } => {
            ConsumerTimer::PollWake { epoch: epoch.wrapping_add(shift.epoch) }
        }
        other => other,
    };
    LazyStep { at: step.at + shift.time, timer, armed: step.armed + shift.time }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_collision_still_finds_the_equal_signature() {
        // Two recorded signatures filed under one hash (a collision, forced): the lookup
        // compares each with the wanted one and finds index 1, not the first filed.
        let signatures = [vec![1_i64, 2, 3], vec![4_i64, 5, 6]];
        let seen: BTreeSet<(u64, usize)> = [(7, 0), (7, 1), (9, 2)].into_iter().collect();
        let wanted = [4_i64, 5, 6];
        let found = find_hashed(&seen, 7, |i| signatures[i] == wanted);
        assert_eq!(found, Some(1));
        assert_eq!(find_hashed(&seen, 8, |_| true), None);
    }

    #[test]
    fn equal_signatures_hash_equal_and_order_matters() {
        assert_eq!(signature_hash(&[1, 2, 3]), signature_hash(&[1, 2, 3]));
        assert_ne!(signature_hash(&[1, 2, 3]), signature_hash(&[3, 2, 1]));
        assert_ne!(signature_hash(&[0]), signature_hash(&[0, 0]));
    }
}
