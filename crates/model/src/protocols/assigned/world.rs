//! The world's side of the protocols without group membership (TubeMQ server-side and
//! client-side balance, manual assignment): the offset store, commits, the events these
//! protocols exchange, and partitions handed back. Members run the consumer's own poll loop
//! ([`Consumer::new_external`](crate::consumer::Consumer::new_external)); what differs per
//! protocol lives in its folder's `world.rs`:
//!
//! - **tubemq-server** ([`crate::protocols::tubemq_server`]): registrations, heartbeats and
//!   the master's events. TubeMQ confirms every fetched batch, so commits are synchronous per
//!   batch whatever `[consumer] commit` says; the broker accepts a confirmation only from the
//!   partition's registered consumer.
//! - **tubemq-client** ([`crate::protocols::tubemq_client`]): each node queries the
//!   partition set and registers what its node id selects. Commits are synchronous per batch,
//!   as for the server side.
//! - **manual** ([`crate::protocols::manual`]): a fixed assignment read at start. Commits go
//!   to the group's offsets (Kafka stores commits of a group with no members) under
//!   `[consumer] commit`.

use crate::consumer::{ConsumerInput, ConsumerParams};
use crate::observe::Observation;
use crate::protocols::tubemq_server::master::{FromMaster, MasterTimer, ToMaster};
use crate::protocols::Group;
use crate::types::{Conn, ToCoordinator, ToMember, Tp};
use crate::world::{Ev, Stepper, World};
use scenario::{CommitPolicy, Protocol, ProtocolSpec};
use sim_core::SimTime;
use std::collections::BTreeMap;

/// The consumer settings of the protocol: TubeMQ confirms each batch (synchronously).
pub(crate) fn params_for(protocol: ProtocolSpec, mut params: ConsumerParams) -> ConsumerParams {
    match protocol.protocol {
        Protocol::TubemqServer | Protocol::TubemqClient => {
            params.commit = CommitPolicy::SyncPerBatch;
        }
        Protocol::Eager | Protocol::Cooperative | Protocol::Consumer | Protocol::Manual => {}
    }
    params
}

/// World events of these protocols.
#[derive(Clone, Debug)]
pub(crate) enum ExtEv {
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

/// The committed offsets of a protocol without a group coordinator.
#[derive(Default)]
pub(crate) struct OffsetStore {
    offsets: BTreeMap<Tp, u64>,
}

impl OffsetStore {
    /// The stored offset of `tp`.
    pub(crate) fn committed(&self, tp: Tp) -> Option<u64> {
        self.offsets.get(&tp).copied()
    }

    fn store(&mut self, offsets: impl IntoIterator<Item = (Tp, u64)>) {
        self.offsets.extend(offsets);
    }
}

pub(crate) use crate::protocols::manual::world::ManualSide;
pub(crate) use crate::protocols::tubemq_client::world::ClientSide;
pub(crate) use crate::protocols::tubemq_server::world::ServerSide;

impl<S: Stepper> World<'_, S> {
    /// The offset store of a protocol without a group.
    fn offset_store(&mut self) -> &mut OffsetStore {
        match &mut self.group {
            Group::TubemqServer(side) => &mut side.store,
            Group::TubemqClient(side) => &mut side.store,
            Group::Manual(side) => &mut side.store,
            Group::Classic(_) | Group::Kip848(_) => {
                unreachable!("a protocol without a group has an offset store")
            }
        }
    }

    pub(crate) fn ext_schedule(&mut self, at: SimTime, ev: ExtEv) {
        self.queue.schedule(at, Ev::External(ev));
    }

    /// An event of these protocols.
    pub(crate) fn ext_event(&mut self, now: SimTime, ev: ExtEv) {
        match ev {
            ExtEv::ToMaster(msg) => self.master_message(now, msg),
            ExtEv::MasterTimer(t) => self.master_timer(now, t),
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

    /// A request a member sent to "the coordinator": only commits exist without a group.
    pub(crate) fn ext_to_coord(&mut self, now: SimTime, msg: ToCoordinator) {
        let ToCoordinator::Commit { conn, offsets, request, .. } = msg else { return };
        let server = match &self.group {
            Group::TubemqServer(side) => side.master.as_ref(),
            Group::TubemqClient(_) | Group::Manual(_) | Group::Classic(_) | Group::Kip848(_) => {
                None
            }
        };
        let accepted: Vec<(Tp, u64)> = offsets
            .iter()
            .filter(|(tp, _)| server.is_none_or(|m| m.holder(*tp) == Some(conn)))
            .copied()
            .collect();
        let ok = accepted.len() == offsets.len();
        self.offset_store().store(accepted);
        let reply = ToMember::Commit { request, ok };
        self.queue.schedule(now + self.one_way, Ev::ToMember(conn, reply));
    }

    /// A member handed partitions back (TubeMQ release): store their offsets, tell the master,
    /// and wake the member when its confirmation wait runs out.
    pub(crate) fn ext_released(
        &mut self,
        now: SimTime,
        conn: Conn,
        offsets: Vec<(Tp, u64)>,
        wait_until: Option<SimTime>,
    ) {
        let tps: Vec<Tp> = offsets.iter().map(|(tp, _)| *tp).collect();
        self.offset_store().store(offsets);
        if !tps.is_empty() && !self.cut_off(conn) {
            let released = ToMaster::Released { conn, tps };
            self.ext_schedule(now + self.one_way, ExtEv::ToMaster(released));
        }
        if let Some(at) = wait_until {
            self.ext_schedule(at, ExtEv::Input(conn, ConsumerInput::ReleaseTimeout));
        }
    }
}
