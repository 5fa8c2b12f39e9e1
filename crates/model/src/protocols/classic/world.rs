//! The world's side of the classic group protocol: it feeds the [`ClassicCoordinator`] the
//! members' requests and its own timers, delivers its responses one network delay later, and
//! keeps the books of the open rebalance (rebalances.csv rows).
//!
//! A rebalance opens at the coordinator's first `Prepare` and counts a round per generation
//! formed; it closes when the group is Stable, every member of the last generation applied
//! its assignment and none announced another round (a cooperative member revoking), or when
//! the group is Empty.

use crate::observe::{Observation, PartState};
use crate::protocols::classic::coordinator::{
    member_id, ClassicCoordinator, CoordInput, CoordNote, CoordOutbox, CoordParams, CoordTimer,
    GroupState,
};
use crate::protocols::Group;
use crate::types::Tp;
use crate::world::{Ev, OpenRebalance, Stepper, World};
use scenario::Scenario;
use sim_core::{EventQueue, RngStreams, SimTime, TimerId};
use std::collections::BTreeSet;

/// The classic coordinator with its timer handles and its reused outbox.
pub(crate) struct ClassicGroup {
    pub(crate) coord: ClassicCoordinator,
    timers: CoordTimerSlots,
    /// The coordinator's outbox, drained after each input (kept for its buffers).
    spare_outbox: CoordOutbox,
}

impl ClassicGroup {
    /// An empty classic group over topics with these partition counts.
    /// Member-id UUIDs come from the run's [`member_id::STREAM`] stream.
    pub(crate) fn new(
        scenario: &Scenario,
        partition_counts: Vec<u32>,
        streams: &RngStreams,
    ) -> ClassicGroup {
        let params =
            CoordParams { initial_rebalance_delay: scenario.broker.group_initial_rebalance_delay };
        let ids = streams.stream(member_id::STREAM);
        ClassicGroup {
            coord: ClassicCoordinator::new(params, partition_counts, ids),
            timers: CoordTimerSlots::default(),
            spare_outbox: CoordOutbox::default(),
        }
    }
}

/// The queue's timer of each timer slot of the classic coordinator ([`CoordTimer::slot`]),
/// made at its first use: one for the join phase, one for the sync phase, one per slot of
/// the coordinator's member table for the sessions of the members in it (indexed by the
/// slot: a session timer keyed by member id cost a hash and a string comparison at every
/// heartbeat, and a copy of the id to arm it; a `BTreeMap` of the ids before that spent about
/// 2.5% of the cooperative hour comparing strings).
#[derive(Default)]
pub(crate) struct CoordTimerSlots {
    join: Option<TimerId>,
    sync: Option<TimerId>,
    sessions: Vec<Option<TimerId>>,
}

impl CoordTimerSlots {
    /// The queue's timer of `timer`'s slot, made now if it is the slot's first use.
    fn slot(&mut self, timer: &CoordTimer, queue: &mut EventQueue<Ev>) -> TimerId {
        let known = match timer {
            CoordTimer::Join { .. } => &mut self.join,
            CoordTimer::Sync { .. } => &mut self.sync,
            CoordTimer::Session(slot) => {
                let index = slot.index();
                if self.sessions.len() <= index {
                    self.sessions.resize(index + 1, None);
                }
                &mut self.sessions[index]
            }
        };
        *known.get_or_insert_with(|| queue.new_timer())
    }
}

impl<S: Stepper> World<'_, S> {
    /// Feeds the classic coordinator and applies its outbox.
    pub(crate) fn coord_input(&mut self, now: SimTime, input: CoordInput) {
        let World { group, queue, timing, .. } = self;
        let Group::Classic(group) = group else { return };
        // The outbox's buffers are kept from one input to the next (a rebalance of 1,000
        // members is thousands of inputs, most answering every member).
        let mut out = std::mem::take(&mut group.spare_outbox);
        group.coord.handle(now, input, &mut out);
        for (conn, msg) in out.sends.drain(..) {
            let at = timing.net.arrival_at_member(conn.slot as usize, now);
            queue.schedule(at, Ev::ToMember(conn, msg));
        }
        for (timer, at) in out.timers.drain(..) {
            let id = group.timers.slot(&timer, queue);
            match at {
                Some(at) => queue.arm(id, at, Ev::CoordTimer(timer)),
                None => queue.cancel(id),
            }
        }
        for note in out.notes.drain(..) {
            self.on_coord_note(now, note);
        }
        if let Group::Classic(group) = &mut self.group {
            group.spare_outbox = out;
        }
        self.try_close_rebalance(now);
    }

    fn on_coord_note(&mut self, now: SimTime, note: CoordNote) {
        match note {
            CoordNote::Prepare { trigger } => {
                if self.rebalance.is_none() {
                    self.rebalance = Some(OpenRebalance {
                        rounds: 0,
                        generation: -1,
                        pending: BTreeSet::new(),
                        more_rounds: false,
                    });
                    let trigger = trigger.to_string();
                    self.observer.observe(Observation::RebalanceStarted { at: now, trigger });
                }
            }
            CoordNote::GenerationFormed { generation, members } => {
                assert!(generation > self.last_generation, "generations only grow");
                self.last_generation = generation;
                if let Some(r) = self.rebalance.as_mut() {
                    r.rounds += 1;
                    r.generation = generation;
                    r.pending = members.into_iter().collect();
                    r.more_rounds = false;
                }
            }
            CoordNote::Stable { .. } => {}
            CoordNote::Removed { conn, .. } => {
                let owned: Vec<Tp> = self.books.owned_by(conn);
                for tp in owned {
                    self.set_owner(tp, None, PartState::Unassigned);
                }
                if let Some(r) = self.rebalance.as_mut() {
                    r.pending.remove(&conn);
                }
            }
        }
    }

    /// Closes the open rebalance when the group settled (Stable, every member of the last
    /// generation assigned, no round announced) or emptied.
    pub(crate) fn classic_try_close(&mut self, now: SimTime) {
        let Group::Classic(group) = &self.group else { return };
        let Some(r) = self.rebalance.as_ref() else { return };
        let state = group.coord.state();
        let settled = r.rounds > 0 && r.pending.is_empty() && !r.more_rounds;
        if (settled && state == GroupState::Stable) || state == GroupState::Empty {
            // The last assignments belong to this rebalance: report them first.
            self.flush_access(now);
            let Some(r) = self.rebalance.as_ref() else { return };
            let rounds = r.rounds;
            let Group::Classic(group) = &self.group else { return };
            let members = group.coord.member_count() as u32;
            self.rebalance = None;
            self.observer.observe(Observation::RebalanceEnded { at: now, rounds, members });
        }
    }
}
