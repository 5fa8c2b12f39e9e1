//! The protocols without a classic group, on the world: TubeMQ server-side balance
//! (`tubemq-server`, the master of [`crate::coordinator::tubemq_master`]), TubeMQ client-side
//! balance (`tubemq-client`) and manual assignment (`manual`). Members run the consumer's own
//! poll loop ([`Consumer::new_external`]); this module hands them partitions, routes their
//! commits to the offset store and, for `tubemq-server`, carries registrations, heartbeats and
//! the master's events.
//!
//! - **tubemq-server**: a member registers at start and heartbeats every
//!   `[tubemq] heartbeat_interval` (not while paused or cut off); the master balances on its
//!   tick and answers heartbeats with its events (connect, disconnect, unknown). A released
//!   partition is reported to the broker at once (`ToMaster::Released`). TubeMQ confirms every
//!   fetched batch, so commits are synchronous per batch whatever `[consumer] commit` says;
//!   the broker accepts a confirmation only from the partition's registered consumer.
//! - **tubemq-client**: node `node_id` (`[tubemq.node_ids]`, default `cN` -> N) owns the
//!   partitions with `hash % source_count == node_id` (`assignors::tubemq_client_owns`). It
//!   queries the partition set at start and every `partition_query_interval` and registers
//!   what is new (a registration reads the stored offset: one round trip). Nobody
//!   coordinates: two nodes with one id both consume the same partitions (every record twice),
//!   a node id nobody runs leaves its partitions unconsumed, a dead node's partitions wait for
//!   it. Commits are synchronous per batch, as for the server side.
//! - **manual** (`assign()`): partition `i` of the flattened list (topics sorted by name, then
//!   partition; the partitions the topics have at the start) goes to initial member
//!   `c{i mod n}` (n = `[group] members`). A member reads its committed offsets at start (one
//!   round trip: OffsetFetch) and keeps its partitions for good; nothing moves; a dead member's
//!   partitions wait for its restart; a member that joins later gets nothing; added partitions
//!   are consumed by nobody. Commits go to the group's offsets (Kafka stores commits of a group
//!   with no members) under `[consumer] commit`.

use super::{Ev, World};
use crate::consumer::{Consumer, ConsumerInput, ConsumerParams};
use crate::coordinator::tubemq_master::{
    FromMaster, MasterInput, MasterNote, MasterOutbox, MasterParams, MasterTimer, ToMaster,
    TubeMqMaster,
};
use crate::observe::{Observation, PartState};
use crate::types::{Conn, ToCoordinator, ToMember, Tp};
use scenario::{CommitPolicy, Protocol, ProtocolSpec, Scenario, TubeMqSpec};
use sim_core::{RngStreams, SimRng, SimTime, TimerId};
use std::collections::{BTreeMap, BTreeSet};

/// Which protocol without a classic group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ExtKind {
    TubemqServer,
    TubemqClient,
    Manual,
}

/// The protocol of `protocol` if it has no classic group.
pub(super) fn external_kind(protocol: ProtocolSpec) -> Option<ExtKind> {
    match protocol.protocol {
        Protocol::TubemqServer => Some(ExtKind::TubemqServer),
        Protocol::TubemqClient => Some(ExtKind::TubemqClient),
        Protocol::Manual => Some(ExtKind::Manual),
        _ => None,
    }
}

/// The consumer settings of the protocol: TubeMQ confirms each batch (synchronously).
pub(super) fn params_for(protocol: ProtocolSpec, mut params: ConsumerParams) -> ConsumerParams {
    if matches!(external_kind(protocol), Some(ExtKind::TubemqServer | ExtKind::TubemqClient)) {
        params.commit = CommitPolicy::SyncPerBatch;
    }
    params
}

/// World events of these protocols.
#[derive(Clone, Debug)]
pub(super) enum ExtEv {
    /// A request arrives at the master.
    ToMaster(ToMaster),
    /// A master timer fires.
    MasterTimer(MasterTimer),
    /// A master event arrives at a member.
    FromMaster(Conn, FromMaster),
    /// An input for a member (partitions with their offsets, a release deadline).
    Input(Conn, ConsumerInput),
    /// A registration / OffsetFetch of these partitions arrives at the broker.
    Fetch(Conn, Vec<Tp>),
    /// A member's heartbeat to the master is due.
    Heartbeat(Conn),
    /// A member's partition query is due (client-side balance).
    Query(Conn),
    /// A settled master rebalance reached its last member.
    RebalanceEnd(u32),
}

/// The state of these protocols in the world.
pub(super) struct External {
    kind: ExtKind,
    spec: TubeMqSpec,
    initial_members: u32,
    offsets: BTreeMap<Tp, u64>,
    master: Option<TubeMqMaster>,
    master_timers: BTreeMap<MasterTimer, TimerId>,
    master_rng: SimRng,
    registered: BTreeMap<Conn, BTreeSet<Tp>>,
}

impl External {
    /// The state for `protocol`, or `None` for classic protocols.
    pub(super) fn new(
        scenario: &Scenario,
        protocol: ProtocolSpec,
        streams: &RngStreams,
    ) -> Option<External> {
        let kind = external_kind(protocol)?;
        Some(External {
            kind,
            spec: scenario.tubemq.clone(),
            initial_members: scenario.group.members,
            offsets: BTreeMap::new(),
            master: None,
            master_timers: BTreeMap::new(),
            master_rng: streams.stream("tubemq-master"),
            registered: BTreeMap::new(),
        })
    }

    fn node_id(&self, name: &str) -> Option<u32> {
        if let Some(id) = self.spec.node_ids.get(name) {
            return Some(*id);
        }
        name.strip_prefix('c')?.parse().ok()
    }
}

impl World<'_> {
    fn ext(&self) -> &External {
        self.external.as_ref().expect("a protocol without a classic group")
    }

    fn ext_mut(&mut self) -> &mut External {
        self.external.as_mut().expect("a protocol without a classic group")
    }

    fn ext_schedule(&mut self, at: SimTime, ev: ExtEv) {
        self.queue.schedule(at, Ev::External(ev));
    }

    /// After the topics exist: the TubeMQ master starts (its first balance tick is armed).
    pub(super) fn ext_init(&mut self) {
        let Some(ext) = self.external.as_ref() else { return };
        if ext.kind != ExtKind::TubemqServer {
            return;
        }
        let params = MasterParams {
            balance_period: ext.spec.balance_period,
            first_balance_delay: ext.spec.first_balance_delay,
            heartbeat_timeout: ext.spec.heartbeat_timeout,
        };
        let mut out = MasterOutbox::default();
        let master = TubeMqMaster::new(params, self.topics.clone(), &mut out);
        self.ext_mut().master = Some(master);
        self.apply_master_outbox(SimTime::ZERO, out);
    }

    /// A new consumer for `conn` (external or classic).
    pub(super) fn new_consumer(&self, conn: Conn, name: &str) -> Consumer {
        if self.external.is_some() {
            Consumer::new_external(conn, name.to_string(), self.params.clone())
        } else {
            Consumer::new(conn, name.to_string(), self.params.clone())
        }
    }

    /// Incarnation `conn` just started: register, start heartbeats or queries, fetch offsets.
    pub(super) fn ext_started(&mut self, now: SimTime, conn: Conn) {
        let Some(kind) = self.external.as_ref().map(|e| e.kind) else { return };
        let name = self.slots[conn.slot as usize].name.to_string();
        match kind {
            ExtKind::TubemqServer => {
                self.ext_schedule(
                    now + self.one_way,
                    ExtEv::ToMaster(ToMaster::Register { conn, name }),
                );
                let interval = self.ext().spec.heartbeat_interval;
                self.ext_schedule(now + interval, ExtEv::Heartbeat(conn));
            }
            ExtKind::TubemqClient => self.ext_schedule(now, ExtEv::Query(conn)),
            ExtKind::Manual => {
                let tps = self.manual_partitions(&name);
                if !tps.is_empty() {
                    self.ext_schedule(now + self.one_way, ExtEv::Fetch(conn, tps));
                }
            }
        }
    }

    /// Manual rule: partition `i` of the initial flattened list goes to `c{i mod n}`.
    fn manual_partitions(&self, name: &str) -> Vec<Tp> {
        let n = self.ext().initial_members;
        let Some(k) = name.strip_prefix('c').and_then(|d| d.parse::<u32>().ok()) else {
            return Vec::new();
        };
        if n == 0 || k >= n || name != format!("c{k}") {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut i = 0u32;
        for (topic, w) in self.workloads.iter().enumerate() {
            for partition in 0..w.initial {
                if i % n == k {
                    out.push(Tp { topic: topic as u32, partition });
                }
                i += 1;
            }
        }
        out
    }

    /// Client-side rule: the partitions node `name` owns now.
    fn client_partitions(&self, name: &str) -> Vec<Tp> {
        let ext = self.ext();
        let Some(node_id) = ext.node_id(name) else { return Vec::new() };
        let mut out = Vec::new();
        for (t, topic) in self.topics.iter().enumerate() {
            for p in 0..topic.partitions {
                if assignors::tubemq_client_owns(&topic.name, p, ext.spec.source_count, node_id) {
                    out.push(Tp { topic: t as u32, partition: p });
                }
            }
        }
        out
    }

    pub(super) fn ext_event(&mut self, now: SimTime, ev: ExtEv) {
        match ev {
            ExtEv::ToMaster(msg) => self.master_input(now, MasterInput::Message(msg)),
            ExtEv::MasterTimer(t) => self.master_input(now, MasterInput::Timer(t)),
            ExtEv::FromMaster(conn, msg) => self.on_master_event(now, conn, msg),
            ExtEv::Input(conn, input) => {
                if !self.cut_off(conn) {
                    self.member_input(now, conn, input);
                }
            }
            ExtEv::Fetch(conn, tps) => {
                let assigned = tps.into_iter().map(|tp| (tp, self.committed_offset(tp))).collect();
                let input = ConsumerInput::Assign(assigned);
                self.ext_schedule(now + self.one_way, ExtEv::Input(conn, input));
            }
            ExtEv::Heartbeat(conn) => self.heartbeat_due(now, conn),
            ExtEv::Query(conn) => self.query_due(now, conn),
            ExtEv::RebalanceEnd(members) => {
                self.observer.observe(Observation::RebalanceEnded { at: now, rounds: 1, members });
            }
        }
    }

    fn heartbeat_due(&mut self, now: SimTime, conn: Conn) {
        let Some(slot) = self.live_slot(conn) else { return };
        if !self.slots[slot].paused && !self.slots[slot].disconnected {
            self.ext_schedule(now + self.one_way, ExtEv::ToMaster(ToMaster::Heartbeat { conn }));
        }
        let interval = self.ext().spec.heartbeat_interval;
        self.ext_schedule(now + interval, ExtEv::Heartbeat(conn));
    }

    fn query_due(&mut self, now: SimTime, conn: Conn) {
        let Some(slot) = self.live_slot(conn) else { return };
        if !self.slots[slot].paused && !self.slots[slot].disconnected {
            let name = self.slots[slot].name.clone();
            let own = self.client_partitions(&name);
            let known = self.ext_mut().registered.entry(conn).or_default();
            let new: Vec<Tp> = own.into_iter().filter(|tp| known.insert(*tp)).collect();
            if !new.is_empty() {
                self.ext_schedule(now + self.one_way, ExtEv::Fetch(conn, new));
            }
        }
        let interval = self.ext().spec.partition_query_interval;
        self.ext_schedule(now + interval, ExtEv::Query(conn));
    }

    fn on_master_event(&mut self, now: SimTime, conn: Conn, msg: FromMaster) {
        if self.cut_off(conn) {
            return;
        }
        match msg {
            FromMaster::Assign(tps) => {
                let assigned = tps.into_iter().map(|tp| (tp, self.committed_offset(tp))).collect();
                self.member_input(now, conn, ConsumerInput::Assign(assigned));
            }
            FromMaster::Release(tps) => {
                let confirm_wait = self.ext().spec.confirm_wait;
                self.member_input(now, conn, ConsumerInput::Release { tps, confirm_wait });
            }
            FromMaster::Unknown => {
                self.member_input(now, conn, ConsumerInput::DropAll);
                let name = self.slots[conn.slot as usize].name.to_string();
                let register = ToMaster::Register { conn, name };
                self.ext_schedule(now + self.one_way, ExtEv::ToMaster(register));
            }
        }
    }

    fn master_input(&mut self, now: SimTime, input: MasterInput) {
        let ext = self.external.as_mut().expect("a protocol without a classic group");
        let Some(master) = ext.master.as_mut() else { return };
        let mut out = MasterOutbox::default();
        master.handle(now, input, &mut ext.master_rng, &mut out);
        self.apply_master_outbox(now, out);
    }

    fn apply_master_outbox(&mut self, now: SimTime, out: MasterOutbox) {
        for (conn, msg) in out.sends {
            self.ext_schedule(now + self.one_way, ExtEv::FromMaster(conn, msg));
        }
        for (timer, at) in out.timers {
            let id = match self.ext().master_timers.get(&timer) {
                Some(id) => *id,
                None => {
                    let id = self.queue.new_timer();
                    self.ext_mut().master_timers.insert(timer, id);
                    id
                }
            };
            match at {
                Some(at) => self.queue.arm(id, at, Ev::External(ExtEv::MasterTimer(timer))),
                None => self.queue.cancel(id),
            }
        }
        for note in out.notes {
            self.on_master_note(now, note);
        }
    }

    fn on_master_note(&mut self, now: SimTime, note: MasterNote) {
        match note {
            MasterNote::Started { trigger } => {
                let trigger = trigger.to_string();
                self.observer.observe(Observation::RebalanceStarted { at: now, trigger });
            }
            MasterNote::Settled { members } => {
                self.ext_schedule(now + self.one_way, ExtEv::RebalanceEnd(members));
            }
            MasterNote::Removed { conn, tps } => {
                for tp in tps {
                    if self.parts[tp].owner == Some(conn) {
                        self.set_owner(tp, None, PartState::Unassigned);
                    }
                }
            }
        }
    }

    /// A request a member sent to "the coordinator": only commits exist without a group.
    pub(super) fn ext_to_coord(&mut self, now: SimTime, msg: ToCoordinator) {
        let ToCoordinator::Commit { conn, offsets, request, .. } = msg else { return };
        let server = self.ext().master.as_ref();
        let accepted: Vec<(Tp, u64)> = offsets
            .iter()
            .filter(|(tp, _)| server.is_none_or(|m| m.holder(*tp) == Some(conn)))
            .copied()
            .collect();
        let ok = accepted.len() == offsets.len();
        self.ext_mut().offsets.extend(accepted);
        let reply = ToMember::Commit { request, ok };
        self.queue.schedule(now + self.one_way, Ev::ToMember(conn, reply));
    }

    /// A member handed partitions back (TubeMQ release): store their offsets, tell the master,
    /// and wake the member when its confirmation wait runs out.
    pub(super) fn ext_released(
        &mut self,
        now: SimTime,
        conn: Conn,
        offsets: Vec<(Tp, u64)>,
        wait_until: Option<SimTime>,
    ) {
        if self.external.is_none() {
            return;
        }
        let tps: Vec<Tp> = offsets.iter().map(|(tp, _)| *tp).collect();
        self.ext_mut().offsets.extend(offsets);
        if !tps.is_empty() && !self.cut_off(conn) {
            let released = ToMaster::Released { conn, tps };
            self.ext_schedule(now + self.one_way, ExtEv::ToMaster(released));
        }
        if let Some(at) = wait_until {
            self.ext_schedule(at, ExtEv::Input(conn, ConsumerInput::ReleaseTimeout));
        }
    }

    /// A member finished a graceful close: TubeMQ consumers unregister from the master.
    pub(super) fn ext_exited(&mut self, now: SimTime, conn: Conn) {
        let Some(kind) = self.external.as_ref().map(|e| e.kind) else { return };
        if kind == ExtKind::TubemqServer && !self.slots[conn.slot as usize].disconnected {
            self.ext_schedule(now + self.one_way, ExtEv::ToMaster(ToMaster::Unregister { conn }));
        }
    }

    /// Partitions were added: the master balances them at its next tick (client-side nodes
    /// find them at their next query; manual assignment never consumes them).
    pub(super) fn ext_topics_changed(&mut self, now: SimTime) {
        if self.external.as_ref().is_some_and(|e| e.master.is_some()) {
            self.master_input(now, MasterInput::TopicsChanged(self.partition_counts()));
        }
    }

    /// The stored offset of `tp`: the offset store here, the classic coordinator's otherwise.
    pub(super) fn committed_offset(&self, tp: Tp) -> Option<u64> {
        match self.external.as_ref() {
            Some(ext) => ext.offsets.get(&tp).copied(),
            None => self.cg_committed(tp).unwrap_or_else(|| self.coord.committed(tp)),
        }
    }

    /// Members for the timeline: the master's registered consumers, else live processes.
    pub(super) fn group_members(&self) -> u32 {
        match self.external.as_ref() {
            None => self.cg_member_count().unwrap_or(self.coord.member_count() as u32),
            Some(ext) => match ext.master.as_ref() {
                Some(master) => master.member_count() as u32,
                None => self.slots.iter().filter(|s| s.alive()).count() as u32,
            },
        }
    }

    /// Client-side balance with a duplicated node id: two live members own the same
    /// partitions. The world books one owner per partition; when that one stops consuming
    /// (crash, close), the partition stays consumable if another live member owns it.
    pub(super) fn ext_shared_owners(&mut self) {
        if self.external.as_ref().is_none_or(|e| e.kind != ExtKind::TubemqClient) {
            return;
        }
        let mut dirty = self.dirty.clone();
        dirty.sort_unstable(); // In partition order, as `flush_access` takes them.
        for tp in dirty {
            if self.parts[tp].owner.is_some_and(|c| self.live_slot(c).is_some()) {
                continue;
            }
            let other = self.slots.iter().find_map(|s| {
                let c = s.consumer.as_ref().filter(|c| c.alive())?;
                c.owned().contains(&tp).then(|| c.conn())
            });
            if let Some(conn) = other {
                self.set_owner(tp, Some(conn), PartState::Unassigned);
            }
        }
    }

    /// Invariants of these protocols: the master's own; no partition owned by two live
    /// members, except under client-side balance, where nothing prevents it (two nodes with
    /// one node id) and the duplicate consumption shows as `records_reprocessed`; under
    /// server-side balance a member the master already removed (a zombie that has not
    /// noticed) is not counted.
    pub(super) fn ext_check_invariants(&self) {
        let Some(ext) = self.external.as_ref() else { return };
        if let Some(master) = ext.master.as_ref() {
            master.check_invariants();
        }
        if ext.kind == ExtKind::TubemqClient {
            return;
        }
        let mut holders: BTreeMap<Tp, &str> = BTreeMap::new();
        for slot in &self.slots {
            let Some(c) = slot.consumer.as_ref().filter(|c| c.alive()) else { continue };
            for tp in c.owned() {
                if ext.master.as_ref().is_some_and(|m| !m.knows(c.conn())) {
                    continue;
                }
                let other = holders.insert(tp, &slot.name);
                assert!(other.is_none(), "partition {tp:?} owned by {} and {other:?}", slot.name);
            }
        }
    }
}
