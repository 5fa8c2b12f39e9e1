//! A read-only window on the world after every event, for checkers such as chaos mode
//! (`lab::chaos`): a [`Probe`] handed to [`super::simulate_probed`] sees a [`WorldView`] after
//! each event (before the model's own debug assertions) and may stop the run.
//! It reads the world's state and changes nothing, so a probed run is the same run as an
//! unprobed one. It sees the world through [`Seen`], whichever stepper the world runs with.

use super::{Slot, Stepper, World};
use crate::consumer::Phase;
use crate::invariants::Broken;
use crate::observe::PartState;
use crate::protocols::classic::GroupState;
use crate::protocols::Group;
use crate::types::{Conn, Tp};
use crate::workload::PartitionLog;
use sim_core::SimTime;
use std::fmt;

/// Watches a run event by event.
pub trait Probe {
    /// Whether [`Probe::before_event`] wants each event described (costs a `Debug` format).
    fn wants_events(&self) -> bool {
        false
    }
    /// The event about to be handled at `now`; called only when [`Probe::wants_events`].
    fn before_event(&mut self, now: SimTime, event: &dyn fmt::Debug) {
        let _ = (now, event);
    }
    /// After every event; return `false` to end the run there.
    fn after_event(&mut self, view: &WorldView<'_, '_>) -> bool;
}

/// A probe that watches nothing.
pub struct NoProbe;

impl Probe for NoProbe {
    fn after_event(&mut self, _: &WorldView<'_, '_>) -> bool {
        true
    }
}

/// One member process as the world sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberView {
    /// Member name.
    pub name: String,
    /// This incarnation.
    pub conn: Conn,
    /// Frozen by a pause.
    pub paused: bool,
    /// Cut off from the coordinator and brokers.
    pub disconnected: bool,
    /// Protocol phase.
    pub phase: Phase,
    /// Partitions it owns now.
    pub owned: Vec<Tp>,
    /// The generation of `owned` (-1 when none or reset).
    pub owned_generation: i32,
}

/// What a [`WorldView`] reads of the world.
pub(super) trait Seen {
    fn end(&self) -> SimTime;
    fn group(&self) -> &Group;
    fn rebalance_open(&self) -> bool;
    fn slots(&self) -> &[Slot];
    fn broken(&self) -> Option<Broken>;
    fn partitions(&self) -> Vec<(Tp, Option<Conn>, PartState)>;
    fn held_arrivals(&self) -> u64;
}

impl<S: Stepper> Seen for World<'_, S> {
    fn end(&self) -> SimTime {
        self.end
    }
    fn group(&self) -> &Group {
        &self.group
    }
    fn rebalance_open(&self) -> bool {
        self.rebalance.is_some()
    }
    fn slots(&self) -> &[Slot] {
        &self.slots
    }
    fn broken(&self) -> Option<Broken> {
        World::broken(self)
    }
    fn held_arrivals(&self) -> u64 {
        self.logs.logs.iter().flatten().map(PartitionLog::held_arrivals).sum()
    }
    fn partitions(&self) -> Vec<(Tp, Option<Conn>, PartState)> {
        let owners = self.books.owners();
        owners.map(|(tp, owner)| (tp, owner, self.access_state(tp))).collect()
    }
}

/// The world between two events.
pub struct WorldView<'w, 'o> {
    pub(super) world: &'w (dyn Seen + 'o),
    pub(super) now: SimTime,
    pub(super) events: u64,
}

impl WorldView<'_, '_> {
    /// Arrival times the partitions' logs hold now (Poisson logs; constant ones hold none):
    /// what a run keeps of its logs, which each sample's trim bounds (`World::trim_logs`).
    pub fn held_arrivals(&self) -> u64 {
        self.world.held_arrivals()
    }

    /// The time of the event just handled.
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Events handled so far, this one included.
    pub fn events(&self) -> u64 {
        self.events
    }
    /// The run's end time.
    pub fn end(&self) -> SimTime {
        self.world.end()
    }
    /// The coordinator's group state.
    pub fn group_state(&self) -> GroupState {
        self.world.group().state()
    }
    /// The coordinator's generation.
    pub fn generation(&self) -> i32 {
        self.world.group().generation()
    }
    /// The members the coordinator has in its group.
    pub fn group_members(&self) -> Vec<Conn> {
        self.world.group().member_conns()
    }
    /// Whether a rebalance is open: triggered, and not every member has applied the
    /// assignment of its last round yet.
    pub fn rebalance_open(&self) -> bool {
        self.world.rebalance_open()
    }
    /// Every live member process (alive incarnations), in slot order.
    pub fn members(&self) -> Vec<MemberView> {
        let mut out = Vec::new();
        for slot in self.world.slots() {
            let Some(c) = slot.consumer.as_ref().filter(|c| c.alive()) else { continue };
            out.push(MemberView {
                name: slot.name.to_string(),
                conn: c.conn(),
                paused: slot.paused,
                disconnected: slot.disconnected,
                phase: c.phase(),
                owned: c.owned(),
                owned_generation: c.owned_generation(),
            });
        }
        out
    }
    /// The first of the model's own facts that does not hold (`crate::invariants`: the
    /// coordinator's, every live consumer's, the world's), without panicking; the run loop
    /// asserts them only in debug builds and tests.
    pub fn broken(&self) -> Option<Broken> {
        self.world.broken()
    }
    /// Partitions the coordinator's Stable group leaves to no one for good: withheld by a
    /// cooperative round from a static member whose process was replaced since
    /// (`ClassicCoordinator::withheld_for_good`; Kafka does the same).
    pub fn withheld_for_good(&self) -> Vec<Tp> {
        self.world.group().withheld_for_good()
    }
    /// Every partition with its owner in the world's books and its access state.
    pub fn partitions(&self) -> Vec<(Tp, Option<Conn>, PartState)> {
        self.world.partitions()
    }
}
