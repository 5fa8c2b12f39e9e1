//! Static membership (KIP-345) in the classic coordinator: a JoinGroup without a member id
//! but with the `group.instance.id` of a known member replaces that member (AK
//! `GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin`,
//! docs/kafka-facts.md section 4):
//!
//! - Stable: the member gets a new id and the current generation back with no rebalance; the
//!   leader's response carries no members (JoinGroup v9 `skipAssignment`), and its SyncGroup
//!   returns the assignment it had;
//! - CompletingRebalance: the id is replaced and a rebalance is forced (trigger `rejoin`);
//! - PreparingRebalance: the id is replaced and the member joins the ongoing phase.
//!
//! Static members send no LeaveGroup; one that does not rejoin a join phase is kept (no join
//! response) until its session expires.

use super::{
    ClassicCoordinator, CoordNote, CoordOutbox, CoordTimer, GroupState, JoinRequest, RemovalReason,
    Slot,
};
use crate::types::{JoinOk, MemberId, ToMember};
use sim_core::SimTime;

impl ClassicCoordinator {
    /// The slot of the member with the request's `group.instance.id`, if one is known (the
    /// first in member-id order).
    pub(super) fn static_member(&self, req: &JoinRequest) -> Option<Slot> {
        let instance = req.instance_id.as_deref()?;
        let found = self.members.iter().find(|(_, m)| m.instance_id.as_deref() == Some(instance));
        found.map(|(slot, _)| slot)
    }

    /// Replaces the static member in `slot` by the joining process; it keeps its slot under a
    /// new id. Returns the slot when the join goes on as a known member's (a rebalance runs or
    /// is forced), `None` when it was answered at once with the current generation (group
    /// Stable: no rebalance).
    pub(super) fn replace_static(
        &mut self,
        now: SimTime,
        slot: Slot,
        req: &JoinRequest,
        out: &mut CoordOutbox,
    ) -> Option<Slot> {
        let id = self.rekey(slot, req);
        out.cancel(CoordTimer::Session(slot));
        let member = &mut self.members[slot];
        // The old process is gone: the world stops waiting for it.
        out.note(CoordNote::Removed { conn: member.conn, reason: RemovalReason::Replaced });
        member.conn = req.conn;
        member.session_timeout = req.session_timeout;
        member.rebalance_timeout = req.rebalance_timeout;
        if self.state != GroupState::Stable {
            return Some(slot);
        }
        member.replaced_since_join = true; // Its claim (`owned`) is the old process's.
        member.awaiting_join = false;
        member.awaiting_sync = true;
        member.sync_sent = false;
        let conn = member.conn;
        let session_timeout = member.session_timeout;
        let leader = self.leader.map_or_else(|| id.clone(), |l| self.members[l].id.clone());
        let ok =
            JoinOk { member_id: id.clone(), generation: self.generation, leader, members: vec![] };
        out.send((conn, ToMember::Join(Ok(ok))));
        out.arm(CoordTimer::Session(slot), now + session_timeout);
        None
    }

    /// Gives the member in `slot` a fresh id (`groupInstanceId-UUID`, AK
    /// `ClassicGroup.generateMemberId`); its slot, and with it its assignment and leadership,
    /// stay (its session timer too: the caller cancels it, the old process being gone).
    /// Returns the new id.
    fn rekey(&mut self, slot: Slot, req: &JoinRequest) -> MemberId {
        let id = self.new_member_id(req);
        self.members.rename(slot, id.clone());
        id
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CoordInput, CoordParams};
    use super::*;
    use crate::types::{Conn, ToCoordinator, Tp};

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    fn join(slot: u32, incarnation: u32, member_id: Option<&str>) -> CoordInput {
        CoordInput::Message(ToCoordinator::Join {
            conn: Conn { slot, incarnation },
            client_id: format!("c{slot}"),
            member_id: member_id.map(str::to_string),
            group_instance_id: Some(format!("c{slot}")),
            owned: vec![],
            owned_generation: -1,
            rebalance_timeout: SimTime::from_secs(300),
            session_timeout: SimTime::from_secs(10),
            metadata_changed: false,
        })
    }

    fn sync(
        slot: u32,
        incarnation: u32,
        id: &str,
        assignment: Option<Vec<(MemberId, Vec<Tp>)>>,
    ) -> CoordInput {
        CoordInput::Message(ToCoordinator::Sync {
            conn: Conn { slot, incarnation },
            member_id: id.into(),
            generation: 1,
            assignment,
            topic_counts: Vec::new(),
        })
    }

    fn step(c: &mut ClassicCoordinator, now: SimTime, input: CoordInput) -> CoordOutbox {
        let mut out = CoordOutbox::default();
        c.handle(now, input, &mut out);
        c.check_invariants();
        out
    }

    /// Two static members in Stable generation 1 (c0-0 leads: t-0 to c0, t-1 to c1).
    fn stable_static_pair() -> ClassicCoordinator {
        let params = CoordParams { initial_rebalance_delay: SimTime::ZERO };
        let mut c = ClassicCoordinator::sequential(params, vec![2]);
        step(&mut c, t(1), join(0, 1, None));
        step(&mut c, t(1), join(1, 1, None));
        step(&mut c, t(1), CoordInput::Timer(CoordTimer::Join { epoch: 1 }));
        // (c1 joined during the zero initial delay: one more, empty, extension.)
        step(&mut c, t(1), CoordInput::Timer(CoordTimer::Join { epoch: 1 }));
        let a = vec![
            ("c0-0".into(), vec![Tp { topic: 0, partition: 0 }]),
            ("c1-1".into(), vec![Tp { topic: 0, partition: 1 }]),
        ];
        step(&mut c, t(3), sync(0, 1, "c0-0", Some(a)));
        step(&mut c, t(3), sync(1, 1, "c1-1", None));
        assert_eq!(c.state(), GroupState::Stable);
        c
    }

    #[test]
    fn restarted_static_leader_gets_its_assignment_back_without_rebalance() {
        let mut c = stable_static_pair();
        // The restarted c0 (incarnation 2) joins without a member id: it becomes c0-2, still
        // the leader, with the current generation, no members (skip assignment), no Prepare.
        let out = step(&mut c, t(5000), join(0, 2, None));
        let replaced = CoordNote::Removed {
            conn: Conn { slot: 0, incarnation: 1 },
            reason: RemovalReason::Replaced,
        };
        assert_eq!(out.notes, vec![replaced], "no rebalance");
        let expected = JoinOk {
            member_id: "c0-2".into(),
            generation: 1,
            leader: "c0-2".into(),
            members: vec![],
        };
        assert!(out
            .sends
            .contains(&(Conn { slot: 0, incarnation: 2 }, ToMember::Join(Ok(expected)))));
        assert_eq!(c.state(), GroupState::Stable);
        // Its SyncGroup returns t-0, the partition the old c0-0 had.
        let out = step(&mut c, t(5002), sync(0, 2, "c0-2", None));
        let assigned = out.sends.iter().find_map(|(_, m)| match m {
            ToMember::Sync(Ok(ok)) => Some(ok.assigned.clone()),
            _ => None,
        });
        assert_eq!(assigned, Some(vec![Tp { topic: 0, partition: 0 }]));
        assert_eq!(c.generation(), 1);
    }

    #[test]
    fn static_member_that_does_not_rejoin_is_kept_until_its_session_expires() {
        let mut c = stable_static_pair();
        // c0 rejoins with its id (a rejoin): the group prepares; c1 (crashed) never rejoins.
        let out = step(&mut c, t(4000), join(0, 1, Some("c0-0")));
        assert_eq!(out.notes, vec![CoordNote::Prepare { trigger: "rejoin" }]);
        // The rebalance timeout (300 s) ends the phase: c1-1 is kept, without a response.
        let out = step(&mut c, t(304_000), CoordInput::Timer(CoordTimer::Join { epoch: 2 }));
        assert_eq!(c.member_count(), 2);
        let answered: Vec<Conn> = out.sends.iter().map(|(to, _)| *to).collect();
        assert_eq!(answered, vec![Conn { slot: 0, incarnation: 1 }]);
        // Its session timer (the world fires it; here by hand) removes it and starts the next
        // rebalance.
        let expiry = CoordInput::Timer(c.session_timer("c1-1"));
        let out = step(&mut c, t(304_001), expiry);
        assert_eq!(c.member_count(), 1);
        assert!(out.notes.contains(&CoordNote::Prepare { trigger: "session-expiry" }));
    }

    /// A join request of `c{slot}` (incarnation 1) reporting `owned` of generation 1.
    fn rejoin(slot: u32, id: &str, owned: &[u32]) -> CoordInput {
        CoordInput::Message(ToCoordinator::Join {
            conn: Conn { slot, incarnation: 1 },
            client_id: format!("c{slot}"),
            member_id: Some(id.to_string()),
            group_instance_id: Some(format!("c{slot}")),
            owned: owned.iter().map(|p| Tp { topic: 0, partition: *p }).collect(),
            owned_generation: 1,
            rebalance_timeout: SimTime::from_secs(300),
            session_timeout: SimTime::from_secs(10),
            metadata_changed: false,
        })
    }

    /// Issue 27 item 1 (chaos seeds 1516, 1528, 1685, 1895, 2311): a cooperative round
    /// withholds t-1 from c1 (the leader gives it to no one: it moves, and c1 must revoke it
    /// first). While c1's process lives, its claim stands (it will revoke and rejoin); once a
    /// new c1 process replaces it in the Stable group (no rebalance), nobody will: t-1 is
    /// withheld for good, and only then.
    #[test]
    fn a_withheld_partition_is_lost_for_good_when_its_static_claimant_is_replaced() {
        let mut c = stable_static_pair();
        step(&mut c, t(4000), rejoin(0, "c0-0", &[0]));
        step(&mut c, t(4001), rejoin(1, "c1-1", &[1]));
        assert_eq!(c.state(), GroupState::CompletingRebalance);
        let withheld =
            vec![("c0-0".into(), vec![Tp { topic: 0, partition: 0 }]), ("c1-1".into(), vec![])];
        let mut sync2 = |slot, id: &str, assignment| {
            let input = CoordInput::Message(ToCoordinator::Sync {
                conn: Conn { slot, incarnation: 1 },
                member_id: id.into(),
                generation: 2,
                assignment,
                topic_counts: Vec::new(),
            });
            step(&mut c, t(4003), input);
        };
        sync2(0, "c0-0", Some(withheld));
        sync2(1, "c1-1", None);
        assert_eq!(c.state(), GroupState::Stable);
        assert_eq!(c.generation(), 2);
        assert_eq!(c.withheld_for_good(), vec![], "c1's live process still claims t-1");
        // c1's process is gone; its successor joins the Stable group: no rebalance, and the
        // claim on t-1 is a dead process's.
        step(&mut c, t(9000), join(1, 2, None));
        assert_eq!(c.state(), GroupState::Stable);
        assert_eq!(c.withheld_for_good(), vec![Tp { topic: 0, partition: 1 }]);
        // Any rejoin of c1's successor (here with nothing owned) ends it: a new round.
        step(&mut c, t(9100), join(1, 2, Some("c1-2")));
        assert_eq!(c.state(), GroupState::PreparingRebalance);
        assert_eq!(c.withheld_for_good(), vec![]);
    }
}
