//! The world's side of the KIP-848 consumer protocol: it runs the
//! [`ConsumerGroupCoordinator`] in place of the classic one, delivers its responses and
//! timers, and turns its notes into observations.
//!
//! A rebalance (rebalances.csv row, `rounds` = 1) opens at a group-epoch bump and closes
//! when every live member has applied the assignment of the group epoch in STABLE state;
//! bumps while one is open extend it (as classic rebalances absorb new triggers), so the
//! three joins of a group's start make one rebalance.

use crate::observe::{Observation, PartState};
use crate::protocols::classic::coordinator::GroupState;
use crate::protocols::kip848::coordinator::{
    CgInput, CgNote, CgOutbox, CgParams, CgTimer, ConsumerGroupCoordinator,
};
use crate::protocols::Group;
use crate::types::{Conn, Tp};
use crate::world::{Ev, OpenRebalance, Stepper, World};
use assignors::{AssignorName, TopicId};
use rand::RngCore;
use rustc_hash::FxHashMap;
use scenario::Scenario;
use sim_core::{RngStreams, SimRng, SimTime, TimerId};
use std::collections::BTreeSet;

/// The KIP-848 coordinator and its timer handles.
pub(crate) struct CgSide {
    pub(crate) coord: ConsumerGroupCoordinator,
    /// The queue's timer of each coordinator timer slot (a session per member id, a
    /// revocation deadline per member): looked up at every heartbeat, never iterated, so a
    /// hash map (a B-tree compared member-id strings at each of its levels).
    timers: FxHashMap<CgTimer, TimerId>,
    /// The member whose partitions last kept a reconciled rebalance open (its consumer did
    /// not own its assignment yet): checked first by the next try (`World::cg_try_close`).
    close_blocker: Option<String>,
}

impl CgSide {
    /// The consumer-group side of a run of `scenario` with the server-side `assignor`.
    pub(crate) fn new(
        scenario: &Scenario,
        assignor: AssignorName,
        partition_counts: Vec<u32>,
        streams: &RngStreams,
    ) -> CgSide {
        let cg_params = CgParams {
            session_timeout: scenario.broker.group_consumer_session_timeout,
            heartbeat_interval: scenario.broker.group_consumer_heartbeat_interval,
            assignor,
        };
        let topic_ids = draw_topic_ids(partition_counts.len(), &mut streams.stream("topic-ids"));
        let coord = ConsumerGroupCoordinator::new(cg_params, partition_counts, topic_ids);
        CgSide { coord, timers: FxHashMap::default(), close_blocker: None }
    }

    /// The KIP-848 group in classic terms, for probes: Empty without members, Stable when
    /// every member is STABLE at the group epoch, else PreparingRebalance.
    pub(crate) fn state(&self) -> GroupState {
        if self.coord.member_count() == 0 {
            GroupState::Empty
        } else if self.coord.reconciled() {
            GroupState::Stable
        } else {
            GroupState::PreparingRebalance
        }
    }
}

impl<S: Stepper> World<'_, S> {
    /// Feeds the KIP-848 coordinator and applies its outbox.
    pub(crate) fn cg_input(&mut self, now: SimTime, input: CgInput) {
        let World { group, queue, timing, assignor_rng, .. } = self;
        let Group::Kip848(side) = group else { return };
        let mut out = CgOutbox::default();
        side.coord.handle(now, input, assignor_rng, &mut out);
        if cfg!(any(debug_assertions, test)) {
            side.coord.check_invariants();
        }
        for (conn, msg) in out.sends {
            let at = timing.net.arrival_at_member(conn.slot as usize, now);
            queue.schedule(at, Ev::ToMember(conn, msg));
        }
        for (timer, at) in out.timers {
            let id = *side.timers.entry(timer.slot()).or_insert_with(|| queue.new_timer());
            match at {
                Some(at) => queue.arm(id, at, Ev::CgTimer(timer)),
                None => queue.cancel(id),
            }
        }
        for note in out.notes {
            self.on_cg_note(now, note);
        }
        self.cg_try_close(now);
    }

    fn on_cg_note(&mut self, now: SimTime, note: CgNote) {
        match note {
            CgNote::EpochBumped { epoch, trigger } => {
                let members: BTreeSet<_> = self.cg_conns().into_iter().collect();
                match self.rebalance.as_mut() {
                    Some(r) => {
                        r.generation = epoch;
                        r.pending = members;
                    }
                    None => {
                        self.rebalance = Some(OpenRebalance {
                            rounds: 1,
                            generation: epoch,
                            pending: members,
                            more_rounds: false,
                        });
                        let trigger = trigger.to_string();
                        self.observer.observe(Observation::RebalanceStarted { at: now, trigger });
                    }
                }
            }
            CgNote::Removed { conn } => {
                for tp in self.books.owned_by(conn) {
                    self.set_owner(tp, None, PartState::Unassigned);
                }
            }
        }
    }

    fn cg_conns(&self) -> Vec<Conn> {
        match &self.group {
            Group::Kip848(side) => side.coord.member_conns(),
            Group::Classic(_)
            | Group::TubemqServer(_)
            | Group::TubemqClient(_)
            | Group::Manual(_) => Vec::new(),
        }
    }

    /// Closes the open rebalance once the coordinator has every member STABLE at the group
    /// epoch and every live member applied that epoch and its assignment.
    pub(crate) fn cg_try_close(&mut self, now: SimTime) {
        let Group::Kip848(side) = &self.group else { return };
        if self.rebalance.is_none() || !side.coord.reconciled() {
            return;
        }
        let epoch = side.coord.group_epoch();
        // The rebalance stays open while any member's consumer does not own its assignment
        // at the epoch: the one that kept it open last time is asked first (it usually still
        // does), so most tries stop at one member instead of scanning the group.
        let blocker = side.close_blocker.as_deref().and_then(|id| side.coord.member_assignment(id));
        if blocker.is_some_and(|(conn, assigned)| !self.cg_member_holds(conn, assigned, epoch)) {
            return;
        }
        let open = side
            .coord
            .member_assignments()
            .find(|(_, conn, assigned)| !self.cg_member_holds(*conn, assigned, epoch))
            .map(|(id, _, _)| id.to_string());
        let members = side.coord.member_count() as u32;
        if let Some(id) = open {
            if let Group::Kip848(side) = &mut self.group {
                side.close_blocker = Some(id);
            }
            return;
        }
        self.flush_access(now);
        self.rebalance = None;
        self.observer.observe(Observation::RebalanceEnded { at: now, rounds: 1, members });
    }

    /// Whether the member at `conn` owns `assigned` at `epoch` (or is gone: nothing to wait
    /// for).
    fn cg_member_holds(&self, conn: Conn, assigned: &BTreeSet<Tp>, epoch: i32) -> bool {
        let Some(slot) = self.live_slot(conn) else { return true };
        let consumer = self.slots[slot].consumer.as_ref().expect("live consumer");
        consumer.owned_generation() == epoch && consumer.owns_exactly(assigned)
    }
}

/// One Kafka topic id per topic, as a broker draws them at topic creation (`Uuid.randomUuid()`,
/// a version-4 UUID), from the run's own `topic-ids` stream: the uniform assignor visits topics
/// in the order of a Java `HashSet` of their ids, which a real cluster does not fix either.
fn draw_topic_ids(topics: usize, rng: &mut SimRng) -> Vec<TopicId> {
    (0..topics)
        .map(|_| {
            let (msb, lsb) = (rng.next_u64(), rng.next_u64());
            // java.util.UUID.randomUUID: version 4 in msb bits 12..16, IETF variant in lsb.
            TopicId {
                msb: (msb & !0xF000) | 0x4000,
                lsb: (lsb & !(0xC000u64 << 48)) | (0x8000u64 << 48),
            }
        })
        .collect()
}
