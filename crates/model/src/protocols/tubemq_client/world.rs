//! The world's side of TubeMQ client-side balance (`tubemq-client`): node `node_id`
//! (`[tubemq.node_ids]`, default `cN` -> N) owns the partitions with
//! `hash % source_count == node_id` (`assignors::tubemq_client_owns`). It queries the
//! partition set at start and every `partition_query_interval` and registers what is new (a
//! registration reads the stored offset: one round trip). Nobody coordinates: two nodes with
//! one id both consume the same partitions (every record twice), a node id nobody runs leaves
//! its partitions unconsumed, a dead node's partitions wait for it. Offsets and commits:
//! [`crate::protocols::assigned::world`].

use crate::observe::PartState;
use crate::protocols::assigned::world::{ExtEv, OffsetStore};
use crate::protocols::Group;
use crate::types::{Conn, Tp};
use crate::world::{Stepper, World};
use scenario::{Scenario, TubeMqSpec};
use sim_core::SimTime;
use std::collections::{BTreeMap, BTreeSet};

/// The nodes' registrations and the offset store.
pub(crate) struct ClientSide {
    pub(crate) store: OffsetStore,
    spec: TubeMqSpec,
    registered: BTreeMap<Conn, BTreeSet<Tp>>,
}

impl ClientSide {
    /// The side of a run of `scenario`.
    pub(crate) fn new(scenario: &Scenario) -> ClientSide {
        ClientSide {
            store: OffsetStore::default(),
            spec: scenario.tubemq.clone(),
            registered: BTreeMap::new(),
        }
    }

    fn node_id(&self, name: &str) -> Option<u32> {
        if let Some(id) = self.spec.node_ids.get(name) {
            return Some(*id);
        }
        name.strip_prefix('c')?.parse().ok()
    }
}

impl<S: Stepper> World<'_, S> {
    fn client(&self) -> &ClientSide {
        match &self.group {
            Group::TubemqClient(side) => side,
            Group::Classic(_) | Group::Kip848(_) | Group::TubemqServer(_) | Group::Manual(_) => {
                unreachable!("client-side balance")
            }
        }
    }

    /// Incarnation `conn` just started: it queries the partition set at once.
    pub(crate) fn client_member_started(&mut self, now: SimTime, conn: Conn) {
        self.ext_schedule(now, ExtEv::Query(conn));
    }

    /// Client-side rule: the partitions node `name` owns now.
    fn client_partitions(&self, name: &str) -> Vec<Tp> {
        let side = self.client();
        let Some(node_id) = side.node_id(name) else { return Vec::new() };
        let mut out = Vec::new();
        for (t, topic) in self.topics.iter().enumerate() {
            for p in 0..topic.partitions {
                if assignors::tubemq_client_owns(&topic.name, p, side.spec.source_count, node_id) {
                    out.push(Tp { topic: t as u32, partition: p });
                }
            }
        }
        out
    }

    pub(crate) fn query_due(&mut self, now: SimTime, conn: Conn) {
        let Some(slot) = self.live_slot(conn) else { return };
        if !self.slots[slot].paused && !self.slots[slot].disconnected {
            let name = self.slots[slot].name.clone();
            let own = self.client_partitions(&name);
            let Group::TubemqClient(side) = &mut self.group else { return };
            let known = side.registered.entry(conn).or_default();
            let new: Vec<Tp> = own.into_iter().filter(|tp| known.insert(*tp)).collect();
            if !new.is_empty() {
                self.ext_schedule(now + self.one_way, ExtEv::Fetch(conn, new));
            }
        }
        let interval = self.client().spec.partition_query_interval;
        self.ext_schedule(now + interval, ExtEv::Query(conn));
    }

    /// A duplicated node id: two live members own the same partitions. The world books one
    /// owner per partition; when that one stops consuming (crash, close), the partition stays
    /// consumable if another live member owns it.
    pub(crate) fn client_shared_owners(&mut self) {
        for tp in self.books.marked() {
            if self.books.owner(tp).is_some_and(|c| self.live_slot(c).is_some()) {
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
}
