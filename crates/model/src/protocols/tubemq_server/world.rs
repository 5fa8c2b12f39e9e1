//! The world's side of TubeMQ server-side balance (`tubemq-server`): a member registers at
//! start and heartbeats every `[tubemq] heartbeat_interval` (not while paused or cut off); the
//! master ([`TubeMqMaster`]) balances on its tick and answers heartbeats with its events
//! (connect, disconnect, unknown). A released partition is reported to the broker at once
//! (`ToMaster::Released`). Offsets and commits: [`crate::protocols::assigned::world`].

use crate::consumer::ConsumerInput;
use crate::observe::{Observation, PartState};
use crate::protocols::assigned::world::{ExtEv, OffsetStore};
use crate::protocols::tubemq_server::master::{
    FromMaster, MasterInput, MasterNote, MasterOutbox, MasterParams, MasterTimer, ToMaster,
    TubeMqMaster,
};
use crate::protocols::Group;
use crate::types::Conn;
use crate::world::{Ev, Stepper, World};
use scenario::{Scenario, TubeMqSpec};
use sim_core::{RngStreams, SimRng, SimTime, TimerId};
use std::collections::BTreeMap;

/// The master, its timers and stream, and the offset store.
pub(crate) struct ServerSide {
    pub(crate) store: OffsetStore,
    spec: TubeMqSpec,
    /// Made once the topics exist (`World::master_init`).
    pub(crate) master: Option<TubeMqMaster>,
    master_timers: BTreeMap<MasterTimer, TimerId>,
    master_rng: SimRng,
}

impl ServerSide {
    /// The side of a run of `scenario`, its master not started yet.
    pub(crate) fn new(scenario: &Scenario, streams: &RngStreams) -> ServerSide {
        ServerSide {
            store: OffsetStore::default(),
            spec: scenario.tubemq.clone(),
            master: None,
            master_timers: BTreeMap::new(),
            master_rng: streams.stream("tubemq-master"),
        }
    }
}

impl<S: Stepper> World<'_, S> {
    fn server(&self) -> &ServerSide {
        match &self.group {
            Group::TubemqServer(side) => side,
            Group::Classic(_) | Group::Kip848(_) | Group::TubemqClient(_) | Group::Manual(_) => {
                unreachable!("server-side balance")
            }
        }
    }

    fn server_mut(&mut self) -> &mut ServerSide {
        match &mut self.group {
            Group::TubemqServer(side) => side,
            Group::Classic(_) | Group::Kip848(_) | Group::TubemqClient(_) | Group::Manual(_) => {
                unreachable!("server-side balance")
            }
        }
    }

    /// After the topics exist: the TubeMQ master starts (its first balance tick is armed).
    pub(crate) fn master_init(&mut self) {
        let spec = &self.server().spec;
        let params = MasterParams {
            balance_period: spec.balance_period,
            first_balance_delay: spec.first_balance_delay,
            heartbeat_timeout: spec.heartbeat_timeout,
        };
        let mut out = MasterOutbox::default();
        let master = TubeMqMaster::new(params, self.topics.clone(), &mut out);
        self.server_mut().master = Some(master);
        self.apply_master_outbox(SimTime::ZERO, out);
    }

    /// Incarnation `conn` just started: it registers and starts heartbeating.
    pub(crate) fn server_member_started(&mut self, now: SimTime, conn: Conn) {
        let name = self.slots[conn.slot as usize].name.to_string();
        self.ext_schedule(now + self.one_way, ExtEv::ToMaster(ToMaster::Register { conn, name }));
        let interval = self.server().spec.heartbeat_interval;
        self.ext_schedule(now + interval, ExtEv::Heartbeat(conn));
    }

    pub(crate) fn heartbeat_due(&mut self, now: SimTime, conn: Conn) {
        let Some(slot) = self.live_slot(conn) else { return };
        if !self.slots[slot].paused && !self.slots[slot].disconnected {
            self.ext_schedule(now + self.one_way, ExtEv::ToMaster(ToMaster::Heartbeat { conn }));
        }
        let interval = self.server().spec.heartbeat_interval;
        self.ext_schedule(now + interval, ExtEv::Heartbeat(conn));
    }

    pub(crate) fn on_master_event(&mut self, now: SimTime, conn: Conn, msg: FromMaster) {
        if self.cut_off(conn) {
            return;
        }
        match msg {
            FromMaster::Assign(tps) => {
                let assigned = tps.into_iter().map(|tp| (tp, self.committed_offset(tp))).collect();
                self.member_input(now, conn, ConsumerInput::Assign(assigned));
            }
            FromMaster::Release(tps) => {
                let confirm_wait = self.server().spec.confirm_wait;
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

    /// A request arrives at the master (without a master, as a released partition of
    /// client-side balance or manual assignment: nobody listens).
    pub(crate) fn master_message(&mut self, now: SimTime, msg: ToMaster) {
        self.master_input(now, MasterInput::Message(msg));
    }

    /// A master timer fired.
    pub(crate) fn master_timer(&mut self, now: SimTime, timer: MasterTimer) {
        self.master_input(now, MasterInput::Timer(timer));
    }

    /// Partitions were added: the master balances them at its next tick.
    pub(crate) fn master_topics_changed(&mut self, now: SimTime, counts: Vec<u32>) {
        self.master_input(now, MasterInput::TopicsChanged(counts));
    }

    fn master_input(&mut self, now: SimTime, input: MasterInput) {
        let Group::TubemqServer(side) = &mut self.group else { return };
        let Some(master) = side.master.as_mut() else { return };
        let mut out = MasterOutbox::default();
        master.handle(now, input, &mut side.master_rng, &mut out);
        self.apply_master_outbox(now, out);
    }

    fn apply_master_outbox(&mut self, now: SimTime, out: MasterOutbox) {
        for (conn, msg) in out.sends {
            self.ext_schedule(now + self.one_way, ExtEv::FromMaster(conn, msg));
        }
        for (timer, at) in out.timers {
            let id = match self.server().master_timers.get(&timer) {
                Some(id) => *id,
                None => {
                    let id = self.queue.new_timer();
                    self.server_mut().master_timers.insert(timer, id);
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
                    if self.books.owner(tp) == Some(conn) {
                        self.set_owner(tp, None, PartState::Unassigned);
                    }
                }
            }
        }
    }

    /// A member finished a graceful close: it unregisters from the master.
    pub(crate) fn server_member_exited(&mut self, now: SimTime, conn: Conn) {
        if !self.slots[conn.slot as usize].disconnected {
            self.ext_schedule(now + self.one_way, ExtEv::ToMaster(ToMaster::Unregister { conn }));
        }
    }
}
