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
//! A new member's id is `clientId-UUID` (`groupInstanceId-UUID` when static), the UUID drawn
//! from the coordinator's own seeded stream ([`member_id`]); members are listed in id order.
//!
//! Simplifications: a new member gets its id at once (no MEMBER_ID_REQUIRED round trip); a
//! known member's JoinGroup always starts a rebalance outside PreparingRebalance.

use crate::invariants::{assert_holds, first_broken, require, Broken, Fact};
use crate::tp_table::TpTable;
use crate::types::{
    Conn, JoinMeta, JoinOk, LeaveReason, MemberId, Outbox, ProtocolError, SyncOk, ToCoordinator,
    ToMember, Tp,
};
use members::{CMember, Members, Slot};
use sim_core::{SimRng, SimTime};
use std::collections::{BTreeMap, BTreeSet};

pub mod member_id;
mod members;
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
    /// The session of the member in a slot of the member table expires (the slot's timer is
    /// cancelled when its member goes, so a firing is always its current member's).
    Session(Slot),
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
            CoordTimer::Session(slot) => CoordTimer::Session(*slot),
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
    /// The members, found by id, listed in id order; each keeps its part of the assignment.
    members: Members,
    /// Members with `joined` set: the join phase completes when it reaches the member count
    /// (counted, not scanned for at every JoinGroup).
    joined_count: usize,
    /// The leader's slot (cleared when the leader is removed).
    leader: Option<Slot>,
    committed: TpTable<u64>,
    /// The partition counts the leader's last assignment was made with.
    partition_counts: Vec<u32>,
    /// The topics' partition counts on the brokers (not used by the protocol: the classic
    /// coordinator does not watch topics; read by `withheld_for_good`).
    broker_counts: Vec<u32>,
    join_epoch: u64,
    initial_delay: Option<InitialDelay>,
    /// The join order of the next new member (the first joiner leads).
    next_seq: u64,
    /// Where new members' ids come from.
    ids: IdSource,
}

/// Where the coordinator's new member ids come from.
#[derive(Clone, Debug)]
enum IdSource {
    /// `prefix-UUID`, the UUIDs drawn from this stream (the world's `classic-member-ids`).
    Random(Box<SimRng>),
    /// `prefix-n`, `n` counting ids made: the unit tests' readable ids (`c0-0`, `c1-1`).
    #[cfg(test)]
    Sequential(u64),
}

impl IdSource {
    fn generate(&mut self, prefix: &str) -> MemberId {
        match self {
            IdSource::Random(rng) => member_id::generate(prefix, rng),
            #[cfg(test)]
            IdSource::Sequential(n) => {
                *n += 1;
                format!("{prefix}-{}", *n - 1)
            }
        }
    }
}

impl ClassicCoordinator {
    /// An empty group over topics with these partition counts, drawing member-id UUIDs from
    /// `id_rng`.
    pub fn new(
        params: CoordParams,
        partition_counts: Vec<u32>,
        id_rng: SimRng,
    ) -> ClassicCoordinator {
        ClassicCoordinator {
            params,
            state: GroupState::Empty,
            generation: 0,
            members: Members::default(),
            joined_count: 0,
            leader: None,
            committed: TpTable::default(),
            broker_counts: partition_counts.clone(),
            partition_counts,
            join_epoch: 0,
            initial_delay: None,
            next_seq: 0,
            ids: IdSource::Random(Box::new(id_rng)),
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

    /// The session timer of member `id` (a test fires it by hand, as the world would).
    #[cfg(test)]
    fn session_timer(&self, id: &str) -> CoordTimer {
        CoordTimer::Session(self.members.find(id).expect("a member"))
    }

    /// Handles one input at `now`, recording responses, timers and notes into `out`.
    pub fn handle(&mut self, now: SimTime, input: CoordInput, out: &mut CoordOutbox) {
        match input {
            CoordInput::Message(ToCoordinator::Join {
                conn,
                client_id,
                member_id,
                group_instance_id,
                owned,
                owned_generation,
                rebalance_timeout,
                session_timeout,
                metadata_changed,
            }) => {
                let meta = JoinRequest {
                    conn,
                    client_id,
                    instance_id: group_instance_id,
                    owned,
                    owned_generation,
                    rebalance_timeout,
                    session_timeout,
                    metadata_changed,
                };
                self.on_join(now, member_id, meta, out)
            }
            CoordInput::Message(ToCoordinator::Sync {
                conn,
                member_id,
                generation,
                assignment,
                topic_counts,
            }) => {
                let Some(slot) = self.members.find(&member_id) else {
                    out.send((conn, ToMember::Sync(Err(ProtocolError::UnknownMemberId))));
                    return;
                };
                let assignment = assignment.map(|a| (a, topic_counts));
                self.on_sync(now, slot, generation, assignment, out)
            }
            CoordInput::Message(ToCoordinator::Heartbeat { conn, member_id, generation }) => {
                self.on_heartbeat(now, conn, member_id, generation, out)
            }
            CoordInput::Message(ToCoordinator::Leave { member_id, reason }) => {
                let reason = match reason {
                    LeaveReason::Close => RemovalReason::Leave,
                    LeaveReason::MaxPollExpired => RemovalReason::MaxPollLeave,
                };
                if let Some(slot) = self.members.find(&member_id) {
                    self.remove_member(now, slot, reason, out);
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
            // The classic coordinator does not watch topics: its members' metadata refreshes
            // bring added partitions to the group (`protocols/classic/metadata.rs`), and the
            // leader's SyncGroup the counts it assigned with.
            CoordInput::TopicsChanged(counts) => self.broker_counts = counts,
        }
    }

    fn commit_allowed(&self, member_id: Option<&str>, generation: i32) -> bool {
        let known = member_id.is_some_and(|id| self.members.contains(id));
        known && generation == self.generation && self.state != GroupState::CompletingRebalance
    }

    fn on_join(
        &mut self,
        now: SimTime,
        member_id: Option<MemberId>,
        req: JoinRequest,
        out: &mut CoordOutbox,
    ) {
        let (slot, is_new) = match member_id.map(|id| self.members.find(&id)) {
            Some(Some(slot)) if self.rejoin_keeps_generation(slot, &req) => {
                self.answer_join_of_current_generation(slot, out);
                return;
            }
            Some(Some(slot)) => (slot, false),
            Some(None) => {
                out.send((req.conn, ToMember::Join(Err(ProtocolError::UnknownMemberId))));
                return;
            }
            None => match self.static_member(&req) {
                Some(old) => match self.replace_static(now, old, &req, out) {
                    Some(slot) => (slot, false),
                    None => return,
                },
                None => (self.add_member(&req), true),
            },
        };
        let member = &mut self.members[slot];
        member.owned = req.owned;
        member.owned_generation = req.owned_generation;
        member.replaced_since_join = false;
        member.rebalance_timeout = req.rebalance_timeout;
        member.session_timeout = req.session_timeout;
        member.conn = req.conn;
        out.cancel(CoordTimer::Session(slot));
        let was_preparing = self.state == GroupState::PreparingRebalance;
        match self.state {
            GroupState::Empty => self.prepare(now, "join", out),
            GroupState::Stable | GroupState::CompletingRebalance => {
                let trigger = match (is_new, req.metadata_changed) {
                    (true, _) => "join",
                    (false, true) => "partitions-added",
                    (false, false) => "rejoin",
                };
                self.prepare(now, trigger, out);
            }
            GroupState::PreparingRebalance => {}
        }
        if let Some(delay) = self.initial_delay.as_mut() {
            // AK sets `newMemberAdded` only for joins into a group already preparing.
            delay.new_member_joined |= is_new && was_preparing;
        }
        let member = &mut self.members[slot];
        if !member.joined {
            member.joined = true;
            self.joined_count += 1;
        }
        member.awaiting_join = true;
        self.maybe_complete_join(now, out);
    }

    /// Whether the JoinGroup of the known member in `slot` just gets the current generation
    /// back, with no rebalance (AK `GroupMetadataManager.classicGroupJoinExistingMember`):
    /// in CompletingRebalance when its metadata is unchanged (it lost its JoinGroup
    /// response), in Stable when it is a follower and its metadata is unchanged (a leader's
    /// rejoin always rebalances: it may have seen topic metadata change). The model's
    /// subscription metadata is the owned partitions and their generation (Java
    /// `ConsumerCoordinator.metadata` serializes both into every subscription; the topics
    /// never change), so `ClassicGroupMember.matches` compares those with the last join's.
    fn rejoin_keeps_generation(&self, slot: Slot, req: &JoinRequest) -> bool {
        let m = &self.members[slot];
        let matches = m.owned == req.owned && m.owned_generation == req.owned_generation;
        match self.state {
            GroupState::CompletingRebalance => matches,
            GroupState::Stable => matches && self.leader != Some(slot),
            GroupState::Empty | GroupState::PreparingRebalance => false,
        }
    }

    /// The JoinGroup response of the current generation for the member in `slot` (every
    /// member's metadata if it leads); it then syncs and gets its current assignment.
    fn answer_join_of_current_generation(&mut self, slot: Slot, out: &mut CoordOutbox) {
        let leader = self.leader.expect("a formed generation has a leader");
        let members = if slot == leader { self.join_metas() } else { Vec::new() };
        let leader_id = self.members[leader].id.clone();
        let generation = self.generation;
        let m = &mut self.members[slot];
        let ok = JoinOk { member_id: m.id.clone(), generation, leader: leader_id, members };
        out.send((m.conn, ToMember::Join(Ok(ok))));
        m.awaiting_join = false;
        m.awaiting_sync = true;
        m.sync_sent = false;
    }

    /// Every member's JoinGroup metadata, for the leader's JoinGroup response.
    fn join_metas(&self) -> Vec<JoinMeta> {
        self.members
            .iter()
            .map(|(_, m)| JoinMeta {
                member_id: m.id.clone(),
                owned: m.owned.clone(),
                owned_generation: m.owned_generation,
                group_instance_id: m.instance_id.clone(),
            })
            .collect()
    }

    /// Adds the joining process as a new member: its id is fresh.
    fn add_member(&mut self, req: &JoinRequest) -> Slot {
        let seq = self.next_seq;
        self.next_seq += 1;
        let id = self.new_member_id(req);
        let member = CMember {
            id,
            conn: req.conn,
            instance_id: req.instance_id.clone(),
            owned: Vec::new(),
            owned_generation: -1,
            replaced_since_join: false,
            rebalance_timeout: req.rebalance_timeout,
            session_timeout: req.session_timeout,
            join_seq: seq,
            joined: false,
            awaiting_join: false,
            awaiting_sync: false,
            sync_sent: false,
            assigned: Vec::new(),
        };
        self.members.insert(member)
    }

    /// A fresh member id for the joining process: `groupInstanceId-UUID` or `clientId-UUID`
    /// (AK `ClassicGroup.generateMemberId`). A UUID already in use (never seen: 122 random
    /// bits) is drawn again, so ids stay unique whatever the stream yields.
    fn new_member_id(&mut self, req: &JoinRequest) -> MemberId {
        const DRAWS_MAX: u32 = 8;
        let prefix = req.instance_id.as_deref().unwrap_or(&req.client_id);
        for _ in 0..DRAWS_MAX {
            let id = self.ids.generate(prefix);
            if !self.members.contains(&id) {
                return id;
            }
        }
        panic!("{DRAWS_MAX} UUID draws all collided with members of the group: a broken stream")
    }

    fn rebalance_timeout(&self) -> SimTime {
        self.members.iter().map(|(_, m)| m.rebalance_timeout).max().unwrap_or(SimTime::ZERO)
    }

    /// Enters PreparingRebalance (AK `prepareRebalance`).
    fn prepare(&mut self, now: SimTime, trigger: &'static str, out: &mut CoordOutbox) {
        out.note(CoordNote::Prepare { trigger });
        if self.state == GroupState::CompletingRebalance {
            self.fail_pending_syncs(out);
        }
        let was_empty = self.state == GroupState::Empty;
        self.state = GroupState::PreparingRebalance;
        self.members.for_each_mut(|_, m| {
            m.assigned.clear();
            m.joined = false;
        });
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
        self.members.for_each_mut(|_, m| {
            if m.awaiting_sync && m.sync_sent {
                out.send((m.conn, ToMember::Sync(Err(ProtocolError::RebalanceInProgress))));
            }
            m.awaiting_sync = false;
            m.sync_sent = false;
        });
    }

    fn maybe_complete_join(&mut self, now: SimTime, out: &mut CoordOutbox) {
        if self.state != GroupState::PreparingRebalance || self.initial_delay.is_some() {
            return;
        }
        debug_assert_eq!(
            self.joined_count,
            self.members.iter().filter(|(_, m)| m.joined).count(),
            "joined members counted"
        );
        if self.joined_count == self.members.len() {
            self.complete_join(now, out);
        }
    }

    /// Ends the join phase (AK `completeClassicGroupJoin` + `initNextGeneration`).
    fn complete_join(&mut self, now: SimTime, out: &mut CoordOutbox) {
        // AK keeps static members that did not rejoin until their session expires.
        let laggards: Vec<Slot> = self
            .members
            .iter()
            .filter(|(_, m)| !m.joined && m.instance_id.is_none())
            .map(|(slot, _)| slot)
            .collect();
        for slot in laggards {
            self.drop_member(slot, RemovalReason::JoinTimeout, out);
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
        let leader_id = self.members[leader].id.clone();
        let metas = self.join_metas();
        let generation = self.generation;
        let mut conns = Vec::with_capacity(self.members.len());
        self.members.for_each_mut(|slot, m| {
            if !m.joined {
                return; // A static member kept without rejoining gets no response.
            }
            let members = if slot == leader { metas.clone() } else { Vec::new() };
            let ok =
                JoinOk { member_id: m.id.clone(), generation, leader: leader_id.clone(), members };
            out.send((m.conn, ToMember::Join(Ok(ok))));
            m.awaiting_join = false;
            m.awaiting_sync = true;
            m.sync_sent = false;
            out.arm(CoordTimer::Session(slot), now + m.session_timeout);
            conns.push(m.conn);
        });
        out.note(CoordNote::GenerationFormed { generation, members: conns });
        let deadline = now + self.rebalance_timeout();
        out.arm(CoordTimer::Sync { generation: self.generation }, deadline);
    }

    /// The leader of the new generation: the current one if it rejoined, else the first
    /// joiner among the members that rejoined.
    fn choose_leader(&mut self) -> Slot {
        let keep = self.leader.filter(|&slot| self.members[slot].joined);
        let leader = keep.unwrap_or_else(|| {
            let first =
                self.members.iter().filter(|(_, m)| m.joined).min_by_key(|(_, m)| m.join_seq);
            first.map(|(slot, _)| slot).expect("a member")
        });
        self.leader = Some(leader);
        leader
    }

    /// A SyncGroup from the member in `slot`.
    fn on_sync(
        &mut self,
        now: SimTime,
        slot: Slot,
        generation: i32,
        assignment: Option<LeaderAssignment>,
        out: &mut CoordOutbox,
    ) {
        let conn = self.members[slot].conn;
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
        self.touch_session(now, slot, out);
        self.members[slot].sync_sent = true;
        let is_leader = self.leader == Some(slot);
        let was_stable = self.state == GroupState::Stable;
        if self.state == GroupState::CompletingRebalance && is_leader {
            let (assignment, counts) = assignment.unwrap_or_default();
            if !counts.is_empty() {
                self.partition_counts = counts;
            }
            self.set_assignment(assignment);
            self.state = GroupState::Stable;
            out.note(CoordNote::Stable { generation: self.generation });
        }
        if was_stable {
            // Every earlier SyncGroup of this generation was answered when it came (or when
            // the leader's made the group Stable): only this one waits.
            debug_assert!(self
                .members
                .iter()
                .all(|(other, m)| other == slot || !(m.awaiting_sync && m.sync_sent)));
            self.answer_sync(slot, out);
        } else if self.state == GroupState::Stable {
            self.answer_syncs(out);
        }
    }

    /// Gives every member its part of the leader's assignment (a member the leader left out
    /// gets none; a member id listed twice gets its last part, like a map built from the list).
    /// Every id of the leader's list is a member: any change of the members since the
    /// generation formed started a new rebalance, which refuses this SyncGroup.
    fn set_assignment(&mut self, assignment: Vec<(MemberId, Vec<Tp>)>) {
        self.members.for_each_mut(|_, m| m.assigned.clear());
        for (id, parts) in assignment {
            let slot = self.members.find(&id);
            debug_assert!(slot.is_some(), "the leader assigned to {id}, not a member");
            if let Some(slot) = slot {
                self.members[slot].assigned = parts;
            }
        }
    }

    /// Answers the SyncGroup of the member in `slot`, if it waits for an answer.
    fn answer_sync(&mut self, slot: Slot, out: &mut CoordOutbox) {
        let m = &mut self.members[slot];
        if !(m.awaiting_sync && m.sync_sent) {
            return;
        }
        let assigned = m.assigned.clone();
        let committed = assigned.iter().map(|tp| (*tp, self.committed.get(*tp).copied()));
        let ok = SyncOk { generation: self.generation, committed: committed.collect(), assigned };
        out.send((m.conn, ToMember::Sync(Ok(ok))));
        m.awaiting_sync = false;
    }

    /// Answers every SyncGroup that waits (the leader's made the group Stable).
    fn answer_syncs(&mut self, out: &mut CoordOutbox) {
        let waiting: Vec<Slot> = self
            .members
            .iter()
            .filter(|(_, m)| m.awaiting_sync && m.sync_sent)
            .map(|(slot, _)| slot)
            .collect();
        for slot in waiting {
            self.answer_sync(slot, out);
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
        let Some(slot) = self.members.find(&member_id) else {
            out.send((from, ToMember::Heartbeat(Some(ProtocolError::UnknownMemberId))));
            return;
        };
        let member = &self.members[slot];
        let (conn, session_timeout) = (member.conn, member.session_timeout);
        let error = if generation != self.generation {
            Some(ProtocolError::IllegalGeneration)
        } else if self.state == GroupState::PreparingRebalance {
            Some(ProtocolError::RebalanceInProgress)
        } else {
            None
        };
        if error != Some(ProtocolError::IllegalGeneration) {
            out.arm(CoordTimer::Session(slot), now + session_timeout);
        }
        out.send((conn, ToMember::Heartbeat(error)));
    }

    /// Restarts the session of the member in `slot`.
    fn touch_session(&mut self, now: SimTime, slot: Slot, out: &mut CoordOutbox) {
        let m = &self.members[slot];
        out.arm(CoordTimer::Session(slot), now + m.session_timeout);
    }

    fn on_timer(&mut self, now: SimTime, timer: CoordTimer, out: &mut CoordOutbox) {
        match timer {
            CoordTimer::Session(slot) => {
                if self.members[slot].awaiting_join {
                    return; // AK: a member waiting for its join response does not expire.
                }
                self.remove_member(now, slot, RemovalReason::SessionExpired, out);
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
        let late: Vec<Slot> = self
            .members
            .iter()
            .filter(|(_, m)| m.awaiting_sync && !m.sync_sent)
            .map(|(slot, _)| slot)
            .collect();
        if late.is_empty() {
            return;
        }
        for &slot in &late {
            self.drop_member(slot, RemovalReason::SyncTimeout, out);
        }
        self.after_removal(now, RemovalReason::SyncTimeout, out);
    }

    /// Removes the member in `slot` and lets the group react (a rebalance, or Empty).
    fn remove_member(
        &mut self,
        now: SimTime,
        slot: Slot,
        reason: RemovalReason,
        out: &mut CoordOutbox,
    ) {
        self.drop_member(slot, reason, out);
        self.after_removal(now, reason, out);
    }

    /// Removes the member in `slot`: its session timer goes, the world hears why.
    fn drop_member(&mut self, slot: Slot, reason: RemovalReason, out: &mut CoordOutbox) {
        let m = self.members.remove(slot);
        self.joined_count -= usize::from(m.joined);
        out.cancel(CoordTimer::Session(slot));
        out.note(CoordNote::Removed { conn: m.conn, reason });
        if self.leader == Some(slot) {
            self.leader = None;
        }
    }

    fn after_removal(&mut self, now: SimTime, reason: RemovalReason, out: &mut CoordOutbox) {
        if self.members.is_empty() {
            out.cancel(CoordTimer::Join { epoch: self.join_epoch });
            out.cancel(CoordTimer::Sync { generation: self.generation });
            self.initial_delay = None;
            self.state = GroupState::Empty;
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

    /// The partitions a Stable group leaves to no one for good (read by chaos checks):
    /// assigned to no member, and reported owned at the last join only by members whose
    /// process was replaced since (a static member's restart in a Stable group).
    ///
    /// Cooperative rebalancing withholds a partition that moves: the member that reported
    /// it gets an assignment without it, revokes it and rejoins, and the next round hands it
    /// out (AK `ConsumerCoordinator.onJoinComplete`: "need to revoke partitions and
    /// re-join"). A static member whose process is gone by then never revokes; when its new
    /// process joins a Stable group the coordinator answers with the stored assignment and no
    /// rebalance (AK `GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin`),
    /// and the new process owned nothing, so it revokes nothing and does not rejoin: nobody
    /// triggers the round that would hand the partition out. Real Apache Kafka 4.4.0 does the
    /// same (docs/chaos.md, "Withheld for good").
    pub fn withheld_for_good(&self) -> Vec<Tp> {
        if self.state != GroupState::Stable {
            return Vec::new();
        }
        let assigned: BTreeSet<Tp> =
            self.members.iter().flat_map(|(_, m)| m.assigned.iter().copied()).collect();
        let mut withheld = Vec::new();
        for (topic, count) in self.partition_counts.iter().enumerate() {
            for partition in 0..*count {
                let tp = Tp { topic: topic as u32, partition };
                let claimed = |live_only: bool| {
                    let mut claims = self.members.iter().filter(|(_, m)| m.owned.contains(&tp));
                    claims.any(|(_, m)| !live_only || !m.replaced_since_join)
                };
                if !assigned.contains(&tp) && claimed(false) && !claimed(true) {
                    withheld.push(tp);
                }
            }
        }
        withheld.extend(self.added_unknown_to_a_returned_static_leader());
        withheld
    }

    /// Partitions added on the brokers that the Stable group's assignment was not made with,
    /// in a group with static members. A static leader whose new process joins a Stable
    /// group gets no members to assign (JoinGroup `skipAssignment`) and takes its current
    /// metadata as the snapshot it compares with (AK `ConsumerCoordinator.onLeaderElected`:
    /// "assignmentSnapshot = metadataSnapshot"), so partitions added before it came back are in
    /// no assignment and no refresh makes it rejoin for them: left to no one until a rebalance
    /// for another reason, as the Java client's source does it (not measured on the broker).
    fn added_unknown_to_a_returned_static_leader(&self) -> Vec<Tp> {
        if !self.members.iter().any(|(_, m)| m.instance_id.is_some()) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (topic, &on_brokers) in self.broker_counts.iter().enumerate() {
            let assigned_with = self.partition_counts.get(topic).copied().unwrap_or(0);
            out.extend(
                (assigned_with..on_brokers).map(|partition| Tp { topic: topic as u32, partition }),
            );
        }
        out
    }

    /// The connections of the group's members, by member id (read by chaos checks).
    pub fn member_conns(&self) -> Vec<Conn> {
        self.members.iter().map(|(_, m)| m.conn).collect()
    }

    /// The coordinator's facts (`crate::invariants`), in the order they are checked.
    pub const FACTS: &'static [Fact<ClassicCoordinator>] = &[
        ClassicCoordinator::assignment_exclusive,
        ClassicCoordinator::stable_covers_partitions,
        ClassicCoordinator::empty_iff_no_members,
    ];

    /// The first of the coordinator's facts that does not hold.
    pub fn broken(&self) -> Option<Broken> {
        first_broken(self, Self::FACTS)
    }

    /// Asserts the coordinator's facts; the panic names the one that broke.
    pub fn check_invariants(&self) {
        assert_holds(self.broken());
    }

    /// `classic.assignment_exclusive`: the assignment gives each partition to one member.
    fn assignment_exclusive(&self) -> Result<(), Broken> {
        let mut seen: BTreeMap<Tp, &str> = BTreeMap::new();
        for (_, m) in self.members.iter() {
            for tp in &m.assigned {
                let dup = seen.insert(*tp, &m.id);
                require(dup.is_none(), "classic.assignment_exclusive", || {
                    format!("partition {tp:?} assigned to {} and {dup:?}", m.id)
                })?;
            }
        }
        Ok(())
    }

    /// `classic.stable_covers_partitions`: a Stable group covers every subscribed partition:
    /// assigned now, or still owned by a member that reported it at join (cooperative round 1
    /// withholds moving partitions).
    fn stable_covers_partitions(&self) -> Result<(), Broken> {
        if self.state != GroupState::Stable {
            return Ok(());
        }
        let assigned: BTreeSet<Tp> =
            self.members.iter().flat_map(|(_, m)| m.assigned.iter().copied()).collect();
        for (topic, count) in self.partition_counts.iter().enumerate() {
            for partition in 0..*count {
                let tp = Tp { topic: topic as u32, partition };
                let covered = assigned.contains(&tp)
                    || self.members.iter().any(|(_, m)| m.owned.contains(&tp));
                require(covered, "classic.stable_covers_partitions", || {
                    format!("Stable group generation {} leaves {tp:?} uncovered", self.generation)
                })?;
            }
        }
        Ok(())
    }

    /// `classic.empty_iff_no_members`: the group is Empty exactly when it has no members.
    fn empty_iff_no_members(&self) -> Result<(), Broken> {
        let empty = self.members.is_empty();
        require(empty == (self.state == GroupState::Empty), "classic.empty_iff_no_members", || {
            format!("state {:?} with {} members", self.state, self.members.len())
        })
    }
}

/// The leader's SyncGroup assignment and the partition counts it assigned with.
type LeaderAssignment = (Vec<(MemberId, Vec<Tp>)>, Vec<u32>);

#[derive(Clone, Debug)]
struct JoinRequest {
    conn: Conn,
    client_id: String,
    instance_id: Option<String>,
    owned: Vec<Tp>,
    owned_generation: i32,
    rebalance_timeout: SimTime,
    session_timeout: SimTime,
    metadata_changed: bool,
}

#[cfg(test)]
impl ClassicCoordinator {
    /// A coordinator whose member ids are `prefix-n` (`n` counting the ids it made): its unit
    /// tests name members `c0-0`, `c1-1`, ... and the group orders them by name.
    pub(crate) fn sequential(params: CoordParams, partition_counts: Vec<u32>) -> Self {
        let rng = sim_core::RngStreams::new(0).stream(member_id::STREAM);
        ClassicCoordinator {
            ids: IdSource::Sequential(0),
            ..Self::new(params, partition_counts, rng)
        }
    }
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
            client_id: format!("c{slot}"),
            member_id: member_id.map(str::to_string),
            group_instance_id: None,
            owned,
            owned_generation: -1,
            rebalance_timeout: SimTime::from_secs(300),
            session_timeout: SimTime::from_secs(10),
            metadata_changed: false,
        })
    }

    fn tp(partition: u32) -> Tp {
        Tp { topic: 0, partition }
    }

    fn coordinator(delay_ms: u64) -> ClassicCoordinator {
        let params = CoordParams { initial_rebalance_delay: t(delay_ms) };
        ClassicCoordinator::sequential(params, vec![2])
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
            topic_counts: Vec::new(),
        };
        step(&mut c, t(3), CoordInput::Message(sync));
        let sync = ToCoordinator::Sync {
            conn: conn(1),
            member_id: "c1-1".into(),
            generation: 1,
            assignment: None,
            topic_counts: Vec::new(),
        };
        step(&mut c, t(3), CoordInput::Message(sync));
        assert_eq!(c.state(), GroupState::Stable);
        c
    }

    /// Each of the coordinator's facts names a hand-broken state, and only that one.
    #[test]
    fn a_broken_state_is_named_by_the_fact_it_breaks() {
        let c = stable_pair();
        assert_eq!(c.broken(), None);
        // c1 is also assigned c0's t-0.
        let mut two_owners = c.clone();
        two_owners.members.for_each_mut(|_, m| {
            if m.id == "c1-1" {
                m.assigned.push(tp(0));
            }
        });
        let b = two_owners.broken().expect("t-0 assigned twice");
        assert_eq!(b.fact, "classic.assignment_exclusive");
        assert_eq!(b.detail, format!("partition {:?} assigned to c1-1 and Some(\"c0-0\")", tp(0)));
        // Nobody is assigned or owns t-1 in a Stable group.
        let mut uncovered = c.clone();
        uncovered.members.for_each_mut(|_, m| m.assigned.retain(|p| *p != tp(1)));
        let b = uncovered.broken().expect("t-1 uncovered");
        assert_eq!(b.fact, "classic.stable_covers_partitions");
        assert_eq!(b.detail, format!("Stable group generation 1 leaves {:?} uncovered", tp(1)));
        // Empty with two members.
        let mut empty = c.clone();
        empty.state = GroupState::Empty;
        let b = empty.broken().expect("Empty with members");
        assert_eq!(b.fact, "classic.empty_iff_no_members");
        assert_eq!(b.detail, "state Empty with 2 members");
    }

    #[test]
    #[should_panic(
        expected = "invariant classic.empty_iff_no_members broken: state Empty with 2 members"
    )]
    fn check_invariants_panics_naming_the_fact() {
        let mut c = stable_pair();
        c.state = GroupState::Empty;
        c.check_invariants();
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

    /// Issue 25 item 6a (AK `classicGroupJoinExistingMember`, STABLE): a follower that
    /// rejoins with the metadata of its last join gets generation 1 back, no rebalance; with
    /// changed metadata, or as the leader, it starts one.
    #[test]
    fn follower_rejoin_with_unchanged_metadata_keeps_the_generation() {
        let mut c = stable_pair();
        // c1 joined generation 1 with owned [] at generation -1 and sends that again.
        let out = step(&mut c, t(10), join(1, Some("c1-1"), vec![]));
        assert!(out.notes.is_empty(), "no rebalance: {:?}", out.notes);
        assert_eq!(c.state(), GroupState::Stable);
        let ok = JoinOk {
            member_id: "c1-1".into(),
            generation: 1,
            leader: "c0-0".into(),
            members: Vec::new(),
        };
        assert_eq!(out.sends, vec![(conn(1), ToMember::Join(Ok(ok)))]);
        // Its SyncGroup gets its part of generation 1 at once.
        let sync = ToCoordinator::Sync {
            conn: conn(1),
            member_id: "c1-1".into(),
            generation: 1,
            assignment: None,
            topic_counts: Vec::new(),
        };
        let out = step(&mut c, t(11), CoordInput::Message(sync));
        let assigned = out.sends.iter().find_map(|(to, m)| match m {
            ToMember::Sync(Ok(ok)) if *to == conn(1) => Some((ok.generation, ok.assigned.clone())),
            _ => None,
        });
        assert_eq!(assigned, Some((1, vec![tp(1)])));
        // Changed metadata (it now owns t-1): a rebalance.
        let mut changed = c.clone();
        let out = step(&mut changed, t(12), join(1, Some("c1-1"), vec![tp(1)]));
        assert_eq!(out.notes, vec![CoordNote::Prepare { trigger: "rejoin" }]);
        // The leader with unchanged metadata: a rebalance too.
        let out = step(&mut c, t(12), join(0, Some("c0-0"), vec![]));
        assert_eq!(out.notes, vec![CoordNote::Prepare { trigger: "rejoin" }]);
        assert_eq!(c.state(), GroupState::PreparingRebalance);
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
            topic_counts: Vec::new(),
        };
        let out = step(&mut c, t(3), CoordInput::Message(follower));
        assert!(out.sends.is_empty());
        let assignment = Some(vec![("c0-0".into(), vec![tp(0)]), ("c1-1".into(), vec![tp(1)])]);
        let leader = ToCoordinator::Sync {
            conn: conn(0),
            member_id: "c0-0".into(),
            generation: 1,
            assignment,
            topic_counts: Vec::new(),
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

    /// Session timers are kept per slot of the member table: a member's removal cancels its
    /// slot's timer, so the next member in the slot, armed on the same timer, is the only one
    /// its firing can concern.
    #[test]
    fn a_removed_members_session_timer_is_cancelled_before_its_slot_is_reused() {
        let mut c = stable_pair();
        let c1_session = c.session_timer("c1-1");
        let leave = ToCoordinator::Leave { member_id: "c1-1".into(), reason: LeaveReason::Close };
        let out = step(&mut c, t(100), CoordInput::Message(leave));
        assert_eq!(out.timers.first(), Some(&(c1_session.clone(), None)));
        let out = step(&mut c, t(200), join(2, None, vec![]));
        assert_eq!(c.session_timer("c2-2"), c1_session, "the freed slot is reused");
        // A joining member's session waits for its join response (AK: no expiry meanwhile).
        assert_eq!(out.timers, vec![(c1_session.clone(), None)]);
        // The join phase ends: c0, which never rejoined, is removed; c2's session is armed
        // on the slot's timer.
        let out = step(&mut c, t(300_200), CoordInput::Timer(CoordTimer::Join { epoch: 2 }));
        let armed: Vec<_> = out.timers.iter().filter(|(timer, _)| *timer == c1_session).collect();
        assert_eq!(armed, vec![&(c1_session.clone(), Some(t(310_200)))]);
        // Its expiry removes c2.
        let out = step(&mut c, t(310_200), CoordInput::Timer(c1_session));
        assert_eq!(
            out.notes.first(),
            Some(&CoordNote::Removed { conn: conn(2), reason: RemovalReason::SessionExpired })
        );
        assert_eq!(c.member_count(), 0);
    }

    #[test]
    fn session_expiry_removes_the_member_and_rebalances() {
        let mut c = stable_pair();
        let expiry = CoordInput::Timer(c.session_timer("c1-1"));
        let out = step(&mut c, t(13_003), expiry);
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
