//! The classic group coordinator (eager and cooperative share it: the difference lives in the
//! members and the assignor). Follows AK `GroupMetadataManager` / `ClassicGroup`
//! (docs/kafka-facts.md section 2):
//!
//! Empty -> PreparingRebalance (a join, leave, session expiry, rejoin or new partitions) ->
//! CompletingRebalance (every known member rejoined, or the rebalance timeout = the largest
//! member `max.poll.interval.ms` passed: dynamic members that did not rejoin are removed;
//! generation + 1; the leader gets all members' metadata) -> Stable (the leader's SyncGroup
//! carries the assignment). A group that was Empty waits `group.initial.rebalance.delay.ms`,
//! extended by the same delay while new members keep arriving, capped at the rebalance timeout.
//! Heartbeats answer REBALANCE_IN_PROGRESS while preparing; a session expires
//! `session.timeout.ms` after the last heartbeat/join/sync, except while a member awaits its
//! join response. Members that do not send SyncGroup within the rebalance timeout are removed.
//!
//! Simplifications: a new member gets its id at once (no MEMBER_ID_REQUIRED round trip); a
//! known member's JoinGroup always starts a rebalance outside PreparingRebalance.

use crate::tp_table::TpTable;
use crate::types::{
    Conn, JoinMeta, JoinOk, LeaveReason, MemberId, Outbox, ProtocolError, SyncOk, ToCoordinator,
    ToMember, Tp,
};
use sim_core::SimTime;
use std::collections::BTreeMap;

mod static_membership;

/// The classic group states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupState {
    /// No members.
    Empty,
    /// Waiting for members to (re)join.
    PreparingRebalance,
    /// Waiting for the leader's SyncGroup.
    CompletingRebalance,
    /// Assignment distributed.
    Stable,
}

/// The coordinator's timers. Each carries what makes a late firing recognisable as stale.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CoordTimer {
    /// A member's session expires.
    Session(MemberId),
    /// The join phase ends (initial delay or rebalance timeout) for join phase `epoch`.
    Join {
        /// The join phase it belongs to.
        epoch: u64,
    },
    /// Members that did not send SyncGroup for `generation` are removed.
    Sync {
        /// The generation it belongs to.
        generation: i32,
    },
}

impl CoordTimer {
    /// The timer slot: re-arming a slot moves its one pending firing.
    pub fn slot(&self) -> CoordTimer {
        match self {
            CoordTimer::Session(id) => CoordTimer::Session(id.clone()),
            CoordTimer::Join { .. } => CoordTimer::Join { epoch: 0 },
            CoordTimer::Sync { .. } => CoordTimer::Sync { generation: 0 },
        }
    }
}

/// Inputs of the coordinator.
#[derive(Clone, Debug)]
pub enum CoordInput {
    /// A request from a member.
    Message(ToCoordinator),
    /// One of its timers fired.
    Timer(CoordTimer),
    /// The subscribed topics changed (partitions added): the new partition counts.
    TopicsChanged(Vec<u32>),
}

/// Why a member left the group, as the coordinator saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemovalReason {
    /// LeaveGroup from `close()`.
    Leave,
    /// LeaveGroup after `max.poll.interval.ms`.
    MaxPollLeave,
    /// No heartbeat for `session.timeout.ms`.
    SessionExpired,
    /// Did not rejoin within the rebalance timeout.
    JoinTimeout,
    /// Did not send SyncGroup within the rebalance timeout.
    SyncTimeout,
    /// A static member's new process took its place (KIP-345): the old one is gone.
    Replaced,
}

impl RemovalReason {
    /// The rebalance trigger name (rebalances.csv `trigger`).
    pub fn trigger(self) -> &'static str {
        match self {
            RemovalReason::Leave => "leave",
            RemovalReason::MaxPollLeave => "max-poll-leave",
            RemovalReason::SessionExpired => "session-expiry",
            RemovalReason::JoinTimeout => "join-timeout",
            RemovalReason::SyncTimeout => "sync-timeout",
            RemovalReason::Replaced => "replaced",
        }
    }
}

/// What the coordinator reports to the world.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoordNote {
    /// The group entered PreparingRebalance.
    Prepare {
        /// join, leave, session-expiry, max-poll-leave, rejoin, partitions-added, ...
        trigger: &'static str,
    },
    /// A generation formed: these members got join responses.
    GenerationFormed {
        /// The generation.
        generation: i32,
        /// Its members.
        members: Vec<Conn>,
    },
    /// The leader's assignment arrived: the group is Stable.
    Stable {
        /// The generation.
        generation: i32,
    },
    /// A member was removed.
    Removed {
        /// Its address.
        conn: Conn,
        /// Why.
        reason: RemovalReason,
    },
}

/// The coordinator's outbox: responses to members, timers, notes.
pub type CoordOutbox = Outbox<(Conn, ToMember), CoordTimer, CoordNote>;

/// Broker-side settings the coordinator uses.
#[derive(Clone, Copy, Debug)]
pub struct CoordParams {
    /// `group.initial.rebalance.delay.ms`.
    pub initial_rebalance_delay: SimTime,
}

#[derive(Clone, Debug)]
struct CMember {
    conn: Conn,
    instance_id: Option<String>,
    owned: Vec<Tp>,
    owned_generation: i32,
    rebalance_timeout: SimTime,
    session_timeout: SimTime,
    join_seq: u64,
    joined: bool,
    awaiting_join: bool,
    awaiting_sync: bool,
    sync_sent: bool,
}

#[derive(Clone, Copy, Debug)]
struct InitialDelay {
    remaining: SimTime,
    new_member_joined: bool,
}

/// The classic group coordinator of one group.
#[derive(Clone, Debug)]
pub struct ClassicCoordinator {
    params: CoordParams,
    state: GroupState,
    generation: i32,
    members: BTreeMap<MemberId, CMember>,
    /// Members with `joined` set: the join phase completes when it reaches the member count
    /// (a scan of the group at every JoinGroup was quadratic per rebalance).
    joined_count: usize,
    leader: Option<MemberId>,
    assignment: BTreeMap<MemberId, Vec<Tp>>,
    committed: TpTable<u64>,
    partition_counts: Vec<u32>,
    join_epoch: u64,
    initial_delay: Option<InitialDelay>,
    next_seq: u64,
}

impl ClassicCoordinator {
    /// An empty group over topics with these partition counts.
    pub fn new(params: CoordParams, partition_counts: Vec<u32>) -> ClassicCoordinator {
        ClassicCoordinator {
            params,
            state: GroupState::Empty,
            generation: 0,
            members: BTreeMap::new(),
            joined_count: 0,
            leader: None,
            assignment: BTreeMap::new(),
            committed: TpTable::default(),
            partition_counts,
            join_epoch: 0,
            initial_delay: None,
            next_seq: 0,
        }
    }

    /// Its settings.
    pub fn params(&self) -> CoordParams {
        self.params
    }

    /// The group state.
    pub fn state(&self) -> GroupState {
        self.state
    }

    /// The current generation.
    pub fn generation(&self) -> i32 {
        self.generation
    }

    /// The committed offset of `tp`, if any.
    pub fn committed(&self, tp: Tp) -> Option<u64> {
        self.committed.get(tp).copied()
    }

    /// Number of members.
    pub fn member_count(&self) -> usize {
        self.members.len()
    }

    /// Handles one input at `now`, recording responses, timers and notes into `out`.
    pub fn handle(&mut self, now: SimTime, input: CoordInput, out: &mut CoordOutbox) {
        match input {
            CoordInput::Message(ToCoordinator::Join {
                conn,
                name,
                member_id,
                group_instance_id,
                owned,
                owned_generation,
                rebalance_timeout,
                session_timeout,
            }) => {
                let meta = JoinRequest {
                    conn,
                    name,
                    instance_id: group_instance_id,
                    owned,
                    owned_generation,
                    rebalance_timeout,
                    session_timeout,
                };
                self.on_join(now, member_id, meta, out)
            }
            CoordInput::Message(ToCoordinator::Sync {
                conn,
                member_id,
                generation,
                assignment,
            }) => {
                if !self.members.contains_key(&member_id) {
                    out.send((conn, ToMember::Sync(Err(ProtocolError::UnknownMemberId))));
                    return;
                }
                self.on_sync(now, member_id, generation, assignment, out)
            }
            CoordInput::Message(ToCoordinator::Heartbeat { conn, member_id, generation }) => {
                self.on_heartbeat(now, conn, member_id, generation, out)
            }
            CoordInput::Message(ToCoordinator::Leave { member_id, reason }) => {
                let reason = match reason {
                    LeaveReason::Close => RemovalReason::Leave,
                    LeaveReason::MaxPollExpired => RemovalReason::MaxPollLeave,
                };
                if self.members.contains_key(&member_id) {
                    self.remove_member(now, &member_id, reason, out);
                }
            }
            CoordInput::Message(ToCoordinator::Commit {
                conn,
                member_id,
                generation,
                offsets,
                request,
            }) => {
                let ok = self.commit_allowed(member_id.as_deref(), generation);
                if ok {
                    self.committed.extend(offsets);
                }
                out.send((conn, ToMember::Commit { request, ok }));
            }
            CoordInput::Message(ToCoordinator::ConsumerHeartbeat(hb)) => {
                // A KIP-848 request to a classic group (AK: GROUP_ID_NOT_FOUND): fenced.
                let error = ProtocolError::FencedMemberEpoch;
                out.send((hb.conn, ToMember::ConsumerHeartbeat(Err(error))));
            }
            CoordInput::Timer(timer) => self.on_timer(now, timer, out),
            CoordInput::TopicsChanged(counts) => {
                self.partition_counts = counts;
                if matches!(self.state, GroupState::Stable | GroupState::CompletingRebalance) {
                    self.prepare(now, "partitions-added", out);
                }
            }
        }
    }

    fn commit_allowed(&self, member_id: Option<&str>, generation: i32) -> bool {
        let known = member_id.is_some_and(|id| self.members.contains_key(id));
        known && generation == self.generation && self.state != GroupState::CompletingRebalance
    }

    fn on_join(
        &mut self,
        now: SimTime,
        member_id: Option<MemberId>,
        req: JoinRequest,
        out: &mut CoordOutbox,
    ) {
        let (id, is_new) = match member_id {
            Some(id) if self.members.contains_key(&id) => (id, false),
            Some(_) => {
                out.send((req.conn, ToMember::Join(Err(ProtocolError::UnknownMemberId))));
                return;
            }
            None => match self.static_member(&req) {
                Some(old) => match self.replace_static(now, &old, &req, out) {
                    Some(id) => (id, false),
                    None => return,
                },
                None => (self.add_member(&req), true),
            },
        };
        let member = self.members.get_mut(&id).expect("member present");
        member.owned = req.owned;
        member.owned_generation = req.owned_generation;
        member.rebalance_timeout = req.rebalance_timeout;
        member.session_timeout = req.session_timeout;
        member.conn = req.conn;
        out.cancel(CoordTimer::Session(id.clone()));
        let was_preparing = self.state == GroupState::PreparingRebalance;
        match self.state {
            GroupState::Empty => self.prepare(now, "join", out),
            GroupState::Stable | GroupState::CompletingRebalance => {
                let trigger = if is_new { "join" } else { "rejoin" };
                self.prepare(now, trigger, out);
            }
            GroupState::PreparingRebalance => {}
        }
        if let Some(delay) = self.initial_delay.as_mut() {
            // AK sets `newMemberAdded` only for joins into a group already preparing.
            delay.new_member_joined |= is_new && was_preparing;
        }
        let member = self.members.get_mut(&id).expect("member present");
        if !member.joined {
            member.joined = true;
            self.joined_count += 1;
        }
        member.awaiting_join = true;
        self.maybe_complete_join(now, out);
    }

    fn add_member(&mut self, req: &JoinRequest) -> MemberId {
        // Unique like Kafka's `clientId-uuid`, and sorting by client id first.
        let seq = self.next_seq;
        let id = format!("{}-{seq}", req.name);
        self.next_seq += 1;
        let member = CMember {
            conn: req.conn,
            instance_id: req.instance_id.clone(),
            owned: Vec::new(),
            owned_generation: -1,
            rebalance_timeout: req.rebalance_timeout,
            session_timeout: req.session_timeout,
            join_seq: seq,
            joined: false,
            awaiting_join: false,
            awaiting_sync: false,
            sync_sent: false,
        };
        let previous = self.members.insert(id.clone(), member);
        assert!(previous.is_none(), "member id {id} reused");
        id
    }

    fn rebalance_timeout(&self) -> SimTime {
        self.members.values().map(|m| m.rebalance_timeout).max().unwrap_or(SimTime::ZERO)
    }

    /// Enters PreparingRebalance (AK `prepareRebalance`).
    fn prepare(&mut self, now: SimTime, trigger: &'static str, out: &mut CoordOutbox) {
        out.note(CoordNote::Prepare { trigger });
        if self.state == GroupState::CompletingRebalance {
            self.fail_pending_syncs(out);
        }
        let was_empty = self.state == GroupState::Empty;
        self.state = GroupState::PreparingRebalance;
        self.assignment.clear();
        for m in self.members.values_mut() {
            m.joined = false;
        }
        self.joined_count = 0;
        out.cancel(CoordTimer::Sync { generation: self.generation });
        self.join_epoch += 1;
        let timeout = self.rebalance_timeout();
        let wait = if was_empty {
            let delay = self.params.initial_rebalance_delay.min(timeout);
            self.initial_delay =
                Some(InitialDelay { remaining: timeout - delay, new_member_joined: false });
            delay
        } else {
            self.initial_delay = None;
            timeout
        };
        out.arm(CoordTimer::Join { epoch: self.join_epoch }, now + wait);
    }

    fn fail_pending_syncs(&mut self, out: &mut CoordOutbox) {
        for m in self.members.values_mut() {
            if m.awaiting_sync && m.sync_sent {
                out.send((m.conn, ToMember::Sync(Err(ProtocolError::RebalanceInProgress))));
            }
            m.awaiting_sync = false;
            m.sync_sent = false;
        }
    }

    fn maybe_complete_join(&mut self, now: SimTime, out: &mut CoordOutbox) {
        if self.state != GroupState::PreparingRebalance || self.initial_delay.is_some() {
            return;
        }
        debug_assert_eq!(
            self.joined_count,
            self.members.values().filter(|m| m.joined).count(),
            "joined members counted"
        );
        if self.joined_count == self.members.len() {
            self.complete_join(now, out);
        }
    }

    /// Ends the join phase (AK `completeClassicGroupJoin` + `initNextGeneration`).
    fn complete_join(&mut self, now: SimTime, out: &mut CoordOutbox) {
        // AK keeps static members that did not rejoin until their session expires.
        let laggards: Vec<MemberId> = self
            .members
            .iter()
            .filter(|(_, m)| !m.joined && m.instance_id.is_none())
            .map(|(id, _)| id.clone())
            .collect();
        for id in laggards {
            self.drop_member(&id, RemovalReason::JoinTimeout, out);
        }
        out.cancel(CoordTimer::Join { epoch: self.join_epoch });
        self.initial_delay = None;
        self.generation += 1;
        if self.members.is_empty() {
            self.state = GroupState::Empty;
            return;
        }
        self.state = GroupState::CompletingRebalance;
        let leader = self.choose_leader();
        let metas: Vec<JoinMeta> = self
            .members
            .iter()
            .map(|(id, m)| JoinMeta {
                member_id: id.clone(),
                owned: m.owned.clone(),
                owned_generation: m.owned_generation,
                group_instance_id: m.instance_id.clone(),
            })
            .collect();
        let mut conns = Vec::with_capacity(self.members.len());
        for (id, m) in self.members.iter_mut() {
            if !m.joined {
                continue; // A static member kept without rejoining gets no response.
            }
            let members = if *id == leader { metas.clone() } else { Vec::new() };
            let ok = JoinOk {
                member_id: id.clone(),
                generation: self.generation,
                leader: leader.clone(),
                members,
            };
            out.send((m.conn, ToMember::Join(Ok(ok))));
            m.awaiting_join = false;
            m.awaiting_sync = true;
            m.sync_sent = false;
            out.arm(CoordTimer::Session(id.clone()), now + m.session_timeout);
            conns.push(m.conn);
        }
        out.note(CoordNote::GenerationFormed { generation: self.generation, members: conns });
        let deadline = now + self.rebalance_timeout();
        out.arm(CoordTimer::Sync { generation: self.generation }, deadline);
    }

    fn choose_leader(&mut self) -> MemberId {
        let joined = |id: &str| self.members.get(id).is_some_and(|m| m.joined);
        let keep = self.leader.as_ref().filter(|l| joined(l.as_str())).cloned();
        let leader = keep.unwrap_or_else(|| {
            let first =
                self.members.iter().filter(|(_, m)| m.joined).min_by_key(|(_, m)| m.join_seq);
            first.map(|(id, _)| id.clone()).expect("a member")
        });
        self.leader = Some(leader.clone());
        leader
    }

    fn on_sync(
        &mut self,
        now: SimTime,
        member_id: MemberId,
        generation: i32,
        assignment: Option<Vec<(MemberId, Vec<Tp>)>>,
        out: &mut CoordOutbox,
    ) {
        let Some(member) = self.members.get(&member_id) else {
            return; // The sender is gone; its address is unknown here, so nothing to answer.
        };
        let conn = member.conn;
        let error = if generation != self.generation {
            Some(ProtocolError::IllegalGeneration)
        } else if self.state == GroupState::PreparingRebalance {
            Some(ProtocolError::RebalanceInProgress)
        } else {
            None
        };
        if let Some(e) = error {
            out.send((conn, ToMember::Sync(Err(e))));
            return;
        }
        self.touch_session(now, &member_id, out);
        let member = self.members.get_mut(&member_id).expect("member present");
        member.sync_sent = true;
        let is_leader = self.leader.as_deref() == Some(member_id.as_str());
        let was_stable = self.state == GroupState::Stable;
        if self.state == GroupState::CompletingRebalance && is_leader {
            let assignment = assignment.unwrap_or_default();
            self.assignment = assignment.into_iter().collect();
            self.state = GroupState::Stable;
            out.note(CoordNote::Stable { generation: self.generation });
        }
        if was_stable {
            // Every earlier SyncGroup of this generation was answered when it came (or when
            // the leader's made the group Stable): only this one waits.
            debug_assert!(self
                .members
                .iter()
                .all(|(id, m)| *id == member_id || !(m.awaiting_sync && m.sync_sent)));
            self.answer_sync(&member_id, out);
        } else if self.state == GroupState::Stable {
            self.answer_syncs(out);
        }
    }

    /// Answers `id`'s SyncGroup, if it waits for an answer.
    fn answer_sync(&mut self, id: &str, out: &mut CoordOutbox) {
        let Some(m) = self.members.get_mut(id) else { return };
        if !(m.awaiting_sync && m.sync_sent) {
            return;
        }
        let assigned = self.assignment.get(id).cloned().unwrap_or_default();
        let committed = assigned.iter().map(|tp| (*tp, self.committed.get(*tp).copied()));
        let ok = SyncOk { generation: self.generation, committed: committed.collect(), assigned };
        out.send((m.conn, ToMember::Sync(Ok(ok))));
        m.awaiting_sync = false;
    }

    /// Answers every SyncGroup that waits (the leader's made the group Stable).
    fn answer_syncs(&mut self, out: &mut CoordOutbox) {
        let waiting: Vec<MemberId> = self
            .members
            .iter()
            .filter(|(_, m)| m.awaiting_sync && m.sync_sent)
            .map(|(id, _)| id.clone())
            .collect();
        for id in waiting {
            self.answer_sync(&id, out);
        }
    }

    /// A heartbeat: one lookup of the member (the hot path of a stable group).
    fn on_heartbeat(
        &mut self,
        now: SimTime,
        from: Conn,
        member_id: MemberId,
        generation: i32,
        out: &mut CoordOutbox,
    ) {
        let Some(member) = self.members.get(&member_id) else {
            out.send((from, ToMember::Heartbeat(Some(ProtocolError::UnknownMemberId))));
            return;
        };
        let (conn, session_timeout) = (member.conn, member.session_timeout);
        let error = if generation != self.generation {
            Some(ProtocolError::IllegalGeneration)
        } else if self.state == GroupState::PreparingRebalance {
            Some(ProtocolError::RebalanceInProgress)
        } else {
            None
        };
        if error != Some(ProtocolError::IllegalGeneration) {
            out.arm(CoordTimer::Session(member_id), now + session_timeout);
        }
        out.send((conn, ToMember::Heartbeat(error)));
    }

    fn touch_session(&mut self, now: SimTime, member_id: &str, out: &mut CoordOutbox) {
        let m = &self.members[member_id];
        out.arm(CoordTimer::Session(member_id.to_string()), now + m.session_timeout);
    }

    fn on_timer(&mut self, now: SimTime, timer: CoordTimer, out: &mut CoordOutbox) {
        match timer {
            CoordTimer::Session(id) => {
                let Some(m) = self.members.get(&id) else { return };
                if m.awaiting_join {
                    return; // AK: a member waiting for its join response does not expire.
                }
                self.remove_member(now, &id, RemovalReason::SessionExpired, out);
            }
            CoordTimer::Join { epoch } => {
                if epoch == self.join_epoch && self.state == GroupState::PreparingRebalance {
                    self.on_join_deadline(now, out);
                }
            }
            CoordTimer::Sync { generation } => {
                let current = generation == self.generation;
                if current && self.state != GroupState::PreparingRebalance {
                    self.expire_pending_syncs(now, out);
                }
            }
        }
    }

    fn on_join_deadline(&mut self, now: SimTime, out: &mut CoordOutbox) {
        if let Some(delay) = self.initial_delay {
            if delay.new_member_joined && !delay.remaining.is_zero() {
                let step = self.params.initial_rebalance_delay.min(delay.remaining);
                self.initial_delay = Some(InitialDelay {
                    remaining: delay.remaining - step,
                    new_member_joined: false,
                });
                out.arm(CoordTimer::Join { epoch: self.join_epoch }, now + step);
                return;
            }
        }
        if self.joined_count > 0 {
            self.complete_join(now, out);
        } else {
            // Nobody rejoined: AK reschedules the join phase.
            self.initial_delay = None;
            out.arm(CoordTimer::Join { epoch: self.join_epoch }, now + self.rebalance_timeout());
        }
    }

    fn expire_pending_syncs(&mut self, now: SimTime, out: &mut CoordOutbox) {
        let late: Vec<MemberId> = self
            .members
            .iter()
            .filter(|(_, m)| m.awaiting_sync && !m.sync_sent)
            .map(|(id, _)| id.clone())
            .collect();
        if late.is_empty() {
            return;
        }
        for id in &late {
            self.drop_member(id, RemovalReason::SyncTimeout, out);
        }
        self.after_removal(now, RemovalReason::SyncTimeout, out);
    }

    fn remove_member(
        &mut self,
        now: SimTime,
        id: &str,
        reason: RemovalReason,
        out: &mut CoordOutbox,
    ) {
        self.drop_member(id, reason, out);
        self.after_removal(now, reason, out);
    }

    fn drop_member(&mut self, id: &str, reason: RemovalReason, out: &mut CoordOutbox) {
        let m = self.members.remove(id).expect("removing a known member");
        self.joined_count -= usize::from(m.joined);
        out.cancel(CoordTimer::Session(id.to_string()));
        out.note(CoordNote::Removed { conn: m.conn, reason });
        if self.leader.as_deref() == Some(id) {
            self.leader = None;
        }
    }

    fn after_removal(&mut self, now: SimTime, reason: RemovalReason, out: &mut CoordOutbox) {
        if self.members.is_empty() {
            out.cancel(CoordTimer::Join { epoch: self.join_epoch });
            out.cancel(CoordTimer::Sync { generation: self.generation });
            self.initial_delay = None;
            self.state = GroupState::Empty;
            self.assignment.clear();
            return;
        }
        match self.state {
            GroupState::Stable | GroupState::CompletingRebalance => {
                self.prepare(now, reason.trigger(), out)
            }
            GroupState::PreparingRebalance => self.maybe_complete_join(now, out),
            GroupState::Empty => {}
        }
    }

    /// The connections of the group's members, by member id (read by chaos checks).
    pub fn member_conns(&self) -> Vec<Conn> {
        self.members.values().map(|m| m.conn).collect()
    }

    /// Asserts the coordinator's invariants; each assert names the fact that broke.
    pub fn check_invariants(&self) {
        let mut seen: BTreeMap<Tp, &str> = BTreeMap::new();
        for (id, parts) in &self.assignment {
            for tp in parts {
                let dup = seen.insert(*tp, id);
                assert!(dup.is_none(), "partition {tp:?} assigned to {id} and {dup:?}");
            }
        }
        if self.state == GroupState::Stable {
            self.check_stable_coverage(&seen);
        }
        let empty = self.members.is_empty();
        assert_eq!(empty, self.state == GroupState::Empty, "Empty state iff no members");
    }

    /// A Stable group covers every subscribed partition: assigned now, or still owned by a
    /// member that reported it at join (cooperative round 1 withholds moving partitions).
    fn check_stable_coverage(&self, assigned: &BTreeMap<Tp, &str>) {
        for (topic, count) in self.partition_counts.iter().enumerate() {
            for partition in 0..*count {
                let tp = Tp { topic: topic as u32, partition };
                let claimed = self.members.values().any(|m| m.owned.contains(&tp));
                assert!(
                    assigned.contains_key(&tp) || claimed,
                    "Stable group generation {} leaves {tp:?} uncovered",
                    self.generation
                );
            }
        }
    }
}

#[derive(Clone, Debug)]
struct JoinRequest {
    conn: Conn,
    name: String,
    instance_id: Option<String>,
    owned: Vec<Tp>,
    owned_generation: i32,
    rebalance_timeout: SimTime,
    session_timeout: SimTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    fn conn(slot: u32) -> Conn {
        Conn { slot, incarnation: 1 }
    }

    fn join(slot: u32, member_id: Option<&str>, owned: Vec<Tp>) -> CoordInput {
        CoordInput::Message(ToCoordinator::Join {
            conn: conn(slot),
            name: format!("c{slot}"),
            member_id: member_id.map(str::to_string),
            group_instance_id: None,
            owned,
            owned_generation: -1,
            rebalance_timeout: SimTime::from_secs(300),
            session_timeout: SimTime::from_secs(10),
        })
    }

    fn tp(partition: u32) -> Tp {
        Tp { topic: 0, partition }
    }

    fn coordinator(delay_ms: u64) -> ClassicCoordinator {
        ClassicCoordinator::new(CoordParams { initial_rebalance_delay: t(delay_ms) }, vec![2])
    }

    fn step(c: &mut ClassicCoordinator, now: SimTime, input: CoordInput) -> CoordOutbox {
        let mut out = CoordOutbox::default();
        c.handle(now, input, &mut out);
        c.check_invariants();
        out
    }

    /// Brings two members c0, c1 to Stable generation 1 (c0 leads: t-0 to c0, t-1 to c1).
    fn stable_pair() -> ClassicCoordinator {
        let mut c = coordinator(0);
        step(&mut c, t(1), join(0, None, vec![]));
        step(&mut c, t(1), join(1, None, vec![]));
        step(&mut c, t(1), CoordInput::Timer(CoordTimer::Join { epoch: 1 }));
        step(&mut c, t(1), CoordInput::Timer(CoordTimer::Join { epoch: 1 }));
        let assignment = Some(vec![("c0-0".into(), vec![tp(0)]), ("c1-1".into(), vec![tp(1)])]);
        let sync = ToCoordinator::Sync {
            conn: conn(0),
            member_id: "c0-0".into(),
            generation: 1,
            assignment,
        };
        step(&mut c, t(3), CoordInput::Message(sync));
        let sync = ToCoordinator::Sync {
            conn: conn(1),
            member_id: "c1-1".into(),
            generation: 1,
            assignment: None,
        };
        step(&mut c, t(3), CoordInput::Message(sync));
        assert_eq!(c.state(), GroupState::Stable);
        c
    }

    #[test]
    fn first_join_waits_the_initial_delay_and_extends_it_for_newcomers() {
        let mut c = coordinator(3000);
        // c0's join makes the empty group prepare, with the 3 s initial delay.
        let out = step(&mut c, t(1), join(0, None, vec![]));
        assert_eq!(out.notes, vec![CoordNote::Prepare { trigger: "join" }]);
        assert_eq!(out.timers.last(), Some(&(CoordTimer::Join { epoch: 1 }, Some(t(3001)))));
        assert!(out.sends.is_empty(), "no response before the join phase ends");
        // c1 joins during the delay: at 3.001 s the delay is extended by another 3 s.
        step(&mut c, t(2), join(1, None, vec![]));
        let out = step(&mut c, t(3001), CoordInput::Timer(CoordTimer::Join { epoch: 1 }));
        assert_eq!(out.timers, vec![(CoordTimer::Join { epoch: 1 }, Some(t(6001)))]);
        // Nobody new: the phase ends, generation 1, the leader (first joiner) gets both members.
        let out = step(&mut c, t(6001), CoordInput::Timer(CoordTimer::Join { epoch: 1 }));
        assert_eq!(c.state(), GroupState::CompletingRebalance);
        assert_eq!(c.generation(), 1);
        let leader_members = out.sends.iter().find_map(|(to, m)| match m {
            ToMember::Join(Ok(ok)) if *to == conn(0) => Some(ok.members.len()),
            _ => None,
        });
        assert_eq!(leader_members, Some(2));
        let follower_members = out.sends.iter().find_map(|(to, m)| match m {
            ToMember::Join(Ok(ok)) if *to == conn(1) => Some((ok.leader.clone(), ok.members.len())),
            _ => None,
        });
        assert_eq!(follower_members, Some(("c0-0".to_string(), 0)));
    }

    #[test]
    fn sync_waits_for_the_leader_then_answers_everyone() {
        let mut c = coordinator(0);
        step(&mut c, t(1), join(0, None, vec![]));
        step(&mut c, t(1), join(1, None, vec![]));
        step(&mut c, t(1), CoordInput::Timer(CoordTimer::Join { epoch: 1 }));
        step(&mut c, t(1), CoordInput::Timer(CoordTimer::Join { epoch: 1 }));
        // The follower's SyncGroup is held until the leader's arrives.
        let follower = ToCoordinator::Sync {
            conn: conn(1),
            member_id: "c1-1".into(),
            generation: 1,
            assignment: None,
        };
        let out = step(&mut c, t(3), CoordInput::Message(follower));
        assert!(out.sends.is_empty());
        let assignment = Some(vec![("c0-0".into(), vec![tp(0)]), ("c1-1".into(), vec![tp(1)])]);
        let leader = ToCoordinator::Sync {
            conn: conn(0),
            member_id: "c0-0".into(),
            generation: 1,
            assignment,
        };
        let out = step(&mut c, t(3), CoordInput::Message(leader));
        assert_eq!(c.state(), GroupState::Stable);
        let got: Vec<(Conn, Vec<Tp>)> = out
            .sends
            .iter()
            .map(|(to, m)| match m {
                ToMember::Sync(Ok(ok)) => (*to, ok.assigned.clone()),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(got, vec![(conn(0), vec![tp(0)]), (conn(1), vec![tp(1)])]);
    }

    #[test]
    fn heartbeats_report_the_rebalance_and_unknown_members() {
        let mut c = stable_pair();
        let hb = |slot: u32, id: &str| {
            CoordInput::Message(ToCoordinator::Heartbeat {
                conn: conn(slot),
                member_id: id.into(),
                generation: 1,
            })
        };
        let out = step(&mut c, t(10), hb(0, "c0-0"));
        assert_eq!(out.sends, vec![(conn(0), ToMember::Heartbeat(None))]);
        // A new member joins: the group prepares; c0's next heartbeat says so.
        let out = step(&mut c, t(20), join(2, None, vec![]));
        assert_eq!(out.notes, vec![CoordNote::Prepare { trigger: "join" }]);
        let out = step(&mut c, t(30), hb(0, "c0-0"));
        let expected = ToMember::Heartbeat(Some(ProtocolError::RebalanceInProgress));
        assert_eq!(out.sends, vec![(conn(0), expected)]);
        let out = step(&mut c, t(30), hb(5, "ghost-9"));
        let expected = ToMember::Heartbeat(Some(ProtocolError::UnknownMemberId));
        assert_eq!(out.sends, vec![(conn(5), expected)]);
    }

    #[test]
    fn session_expiry_removes_the_member_and_rebalances() {
        let mut c = stable_pair();
        let out = step(&mut c, t(13_003), CoordInput::Timer(CoordTimer::Session("c1-1".into())));
        assert_eq!(
            out.notes,
            vec![
                CoordNote::Removed { conn: conn(1), reason: RemovalReason::SessionExpired },
                CoordNote::Prepare { trigger: "session-expiry" },
            ]
        );
        assert_eq!(c.member_count(), 1);
        // The survivor rejoins: it is the only member, so the join phase ends at once.
        let out = step(&mut c, t(13_010), join(0, Some("c0-0"), vec![tp(0)]));
        assert_eq!(c.generation(), 2);
        assert!(matches!(
            out.notes.last(),
            Some(CoordNote::GenerationFormed { generation: 2, .. })
        ));
    }

    #[test]
    fn commits_need_a_current_generation() {
        let mut c = stable_pair();
        let commit = |generation: i32, request: u64| {
            CoordInput::Message(ToCoordinator::Commit {
                conn: conn(1),
                member_id: Some("c1-1".into()),
                generation,
                offsets: vec![(tp(1), 42)],
                request,
            })
        };
        let out = step(&mut c, t(50), commit(0, 1));
        assert_eq!(out.sends, vec![(conn(1), ToMember::Commit { request: 1, ok: false })]);
        assert_eq!(c.committed(tp(1)), None);
        let out = step(&mut c, t(51), commit(1, 2));
        assert_eq!(out.sends, vec![(conn(1), ToMember::Commit { request: 2, ok: true })]);
        assert_eq!(c.committed(tp(1)), Some(42));
    }
}
