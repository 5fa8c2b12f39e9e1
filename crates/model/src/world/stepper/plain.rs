//! Plain stepping, the trivial [`Stepper`]: every poll-loop step is a queued event, so the
//! world's stepping hooks have nothing to do. It is the reference fast stepping is held to
//! (`lab/tests/stepping.rs` and `lab::divergence` compare the two on every scenario).

use super::Stepper;
use crate::consumer::ConsumerInput;
use crate::types::Conn;
use crate::world::{Ev, World};
use sim_core::{SimTime, TimerId};

/// Every step in the queue; no state.
pub(in crate::world) struct Plain;

impl Stepper for Plain {
    fn new(_periodic: bool, _topics: usize) -> Plain {
        Plain
    }

    fn add_slot(&mut self, _wake: TimerId) {}

    fn add_partition(&mut self, _topic: usize, _spacing: Option<(SimTime, u64)>) {}

    fn restart(&mut self, _slot: usize) {}

    fn before_event(_: &mut World<'_, Plain>, _: &Ev) {}

    fn before_input(_: &mut World<'_, Plain>, _: usize, _: SimTime, _: &ConsumerInput) -> bool {
        false
    }

    fn after_input(_: &mut World<'_, Plain>, _: usize, _: SimTime) {}

    fn on_wake(_: &mut World<'_, Plain>, _: SimTime, _: Conn) {}

    fn on_pause(_: &mut World<'_, Plain>, _: usize) {}

    fn on_crash(_: &mut World<'_, Plain>, _: usize) {}

    fn before_sample(_: &mut World<'_, Plain>, _: SimTime) -> u64 {
        0
    }

    fn before_end(_: &mut World<'_, Plain>, _: SimTime) {}

    fn catch_up_owner(_: &mut World<'_, Plain>, _: Conn, _: SimTime) {}

    fn behind(_: &World<'_, Plain>, _: Conn, _: SimTime) -> bool {
        false
    }

    fn shared_catch_ups(_: &World<'_, Plain>) -> u64 {
        0
    }

    fn deferred_wakes(_: &World<'_, Plain>) -> u64 {
        0
    }
}
