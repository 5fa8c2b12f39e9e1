//! The world's side of manual assignment (`manual`, `assign()`): partition `i` of the
//! flattened list (topics sorted by name, then partition; the partitions the topics have at
//! the start) goes to initial member `c{i mod n}` (n = `[group] members`). A member reads its
//! committed offsets at start (one round trip: OffsetFetch) and keeps its partitions for good;
//! nothing moves; a dead member's partitions wait for its restart; a member that joins later
//! gets nothing; added partitions are consumed by nobody. Offsets and commits:
//! [`crate::protocols::assigned::world`].

use crate::protocols::assigned::world::{ExtEv, OffsetStore};
use crate::protocols::Group;
use crate::types::{Conn, Tp};
use crate::world::{Stepper, World};
use scenario::Scenario;
use sim_core::SimTime;

/// The initial group size and the offset store.
pub(crate) struct ManualSide {
    pub(crate) store: OffsetStore,
    initial_members: u32,
}

impl ManualSide {
    /// The side of a run of `scenario`.
    pub(crate) fn new(scenario: &Scenario) -> ManualSide {
        ManualSide { store: OffsetStore::default(), initial_members: scenario.group.members }
    }
}

impl<S: Stepper> World<'_, S> {
    /// Incarnation `conn` just started: it fetches the offsets of its partitions.
    pub(crate) fn manual_member_started(&mut self, now: SimTime, conn: Conn) {
        let name = self.slots[conn.slot as usize].name.to_string();
        let tps = self.manual_partitions(&name);
        if !tps.is_empty() {
            self.ext_schedule(now + self.one_way, ExtEv::Fetch(conn, tps));
        }
    }

    /// Manual rule: partition `i` of the initial flattened list goes to `c{i mod n}`.
    fn manual_partitions(&self, name: &str) -> Vec<Tp> {
        let Group::Manual(side) = &self.group else { return Vec::new() };
        let n = side.initial_members;
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
}
