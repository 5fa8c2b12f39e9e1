//! The members' states ([`Observation::MemberState`]): what each member's process is doing,
//! reported when it changes (a trace's member tracks read them; the metrics ignore them).
//!
//! A member's state is a function of the world at an instant ([`World::member_state`]): its
//! incarnation dead or exited (`dead`, `closed`), the world's flags of its process (`paused`,
//! `disconnected`, a processing stall until a known time: `stalled`), its closing, and else
//! its consumer's place in the protocol (`Consumer::protocol_state`). The world compares that
//! with the state it reported last after every input a member handles and after each change
//! of a flag, and reports a difference then: nothing runs per event when nothing changes but
//! that comparison, and no event is added to the queue. A stall ends at a time no event marks;
//! its end is reported, stamped with that time, before the first event at or after it (or at
//! the end of the run), which keeps observations in time order: no event came in between.
//! Quiet poll-loop steps that fast stepping runs aside change no state (they send nothing and
//! change no ownership), so both steppings report the same states at the same times.
//!
//! Checked after every event in tests and debug builds (`world.member_states_reported`): the
//! state reported last is the state the world is in.

use super::{Stepper, World};
use crate::invariants::{require, Broken};
use crate::observe::{MemberRef, MemberState, Observation};
use sim_core::SimTime;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The ends of the processing stalls in progress, by time.
#[derive(Debug)]
pub(crate) struct StallEnds {
    /// `(end, slot)` of each stall begun (an entry whose slot's stall moved on is stale).
    ends: BTreeSet<(SimTime, usize)>,
    /// The first end (`SimTime::MAX` when none): the one comparison per event.
    next: SimTime,
}

impl Default for StallEnds {
    fn default() -> Self {
        StallEnds { ends: BTreeSet::new(), next: SimTime::MAX }
    }
}

impl<S: Stepper> World<'_, S> {
    /// The state of the member in `slot` at `now`; `None` before its first start.
    pub(crate) fn member_state(&self, slot: usize, now: SimTime) -> Option<MemberState> {
        let s = &self.slots[slot];
        let consumer = s.consumer.as_ref()?;
        Some(if !consumer.alive() {
            if s.exited {
                MemberState::Closed
            } else {
                MemberState::Dead
            }
        } else if s.paused {
            MemberState::Paused
        } else if s.disconnected {
            MemberState::Disconnected
        } else if now < s.stalled_until {
            MemberState::Stalled
        } else if consumer.closing() {
            MemberState::Closing
        } else {
            consumer.protocol_state()
        })
    }

    /// Reports the state of the member in `slot` at `now` if it is not the one reported last
    /// for its incarnation.
    pub(crate) fn report_member_state(&mut self, now: SimTime, slot: usize) {
        let Some(state) = self.member_state(slot, now) else { return };
        let s = &mut self.slots[slot];
        let current = Some((s.incarnation, state));
        if s.reported == current {
            return;
        }
        s.reported = current;
        let member = MemberRef { id: slot as u32, name: Arc::clone(&s.name) };
        let incarnation = s.incarnation;
        self.observer.observe(Observation::MemberState { at: now, member, incarnation, state });
    }

    /// A processing stall of `by` reaches the member in `slot` at `now`: it stalls until
    /// `by` after its current stall's end, or after `now` (the model's stall delays the batch
    /// by `by` again: `Consumer::delay_batch`).
    pub(crate) fn begin_stall(&mut self, now: SimTime, slot: usize, by: SimTime) {
        let s = &mut self.slots[slot];
        s.stalled_until = s.stalled_until.max(now).saturating_add(by);
        self.stall_ends.ends.insert((s.stalled_until, slot));
        self.stall_ends.next = self.stall_ends.next.min(s.stalled_until);
    }

    /// Before an event at `now` (and at the end of the run): reports the end of every stall
    /// that ended by then, at its end.
    #[inline]
    pub(crate) fn end_stalls(&mut self, now: SimTime) {
        if now >= self.stall_ends.next {
            self.end_stalls_by(now);
        }
    }

    fn end_stalls_by(&mut self, now: SimTime) {
        while let Some(&(end, slot)) = self.stall_ends.ends.first() {
            if end > now {
                break;
            }
            self.stall_ends.ends.pop_first();
            if self.slots[slot].stalled_until == end {
                self.report_member_state(end, slot);
            }
        }
        self.stall_ends.next = self.stall_ends.ends.first().map_or(SimTime::MAX, |e| e.0);
    }

    /// A new incarnation starts in `slot`: no stall, no exit.
    pub(crate) fn reset_member_state(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        s.stalled_until = SimTime::ZERO;
        s.exited = false;
    }

    /// `world.member_states_reported`: every member's state reported last is its state now.
    pub(crate) fn member_states_reported(&self) -> Result<(), Broken> {
        let now = self.queue.now();
        for (slot, s) in self.slots.iter().enumerate() {
            let Some(state) = self.member_state(slot, now) else { continue };
            require(
                s.reported == Some((s.incarnation, state)),
                "world.member_states_reported",
                || {
                    format!(
                        "{} (incarnation {}) is {} at {now}, reported {:?}",
                        s.name,
                        s.incarnation,
                        state.name(),
                        s.reported
                    )
                },
            )?;
        }
        Ok(())
    }
}
