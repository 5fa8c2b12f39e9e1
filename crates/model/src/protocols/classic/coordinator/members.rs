//! The classic coordinator's member table. Members live in a slab: each keeps its [`Slot`]
//! from its join until its removal (a rename by static membership keeps it too), so the
//! coordinator looks a member up once per request and then indexes. Lookups by member id go
//! through a hash map that is never iterated (no string comparisons on the hot path); every
//! iteration follows member-id order, kept in a
//! `BTreeMap` from id to slot that only joins, removals and renames search (in `O(log n)`),
//! because that order decides the outputs (the leader's member list, the order of responses
//! and removals).

use crate::types::{Conn, MemberId, Tp};
use rustc_hash::FxHashMap;
use sim_core::SimTime;
use std::collections::BTreeMap;
use std::ops::{Index, IndexMut};

/// One member of the group, as the coordinator knows it.
#[derive(Clone, Debug)]
pub(super) struct CMember {
    /// Its member id (the table's key).
    pub(super) id: MemberId,
    /// The address of its process.
    pub(super) conn: Conn,
    /// `group.instance.id` of a static member (KIP-345).
    pub(super) instance_id: Option<String>,
    /// Partitions it reported as owned at its last join.
    pub(super) owned: Vec<Tp>,
    /// The generation of that claim (-1 when none).
    pub(super) owned_generation: i32,
    /// Its process was replaced by a static member's new process in a Stable group since
    /// its last join (KIP-345: the new process got the stored assignment, no rebalance), so
    /// `owned` is the claim of a process that is gone.
    pub(super) replaced_since_join: bool,
    /// Its `max.poll.interval.ms`.
    pub(super) rebalance_timeout: SimTime,
    /// Its `session.timeout.ms`.
    pub(super) session_timeout: SimTime,
    /// Order of its first join (the first joiner leads).
    pub(super) join_seq: u64,
    /// Rejoined the current join phase.
    pub(super) joined: bool,
    /// Waits for its JoinGroup response.
    pub(super) awaiting_join: bool,
    /// Got a JoinGroup response of the current generation and no SyncGroup response yet.
    pub(super) awaiting_sync: bool,
    /// Sent its SyncGroup of the current generation.
    pub(super) sync_sent: bool,
    /// Its part of the leader's assignment of the current generation (empty until then).
    pub(super) assigned: Vec<Tp>,
}

/// A member's place in the [`Members`] slab, valid until the member is removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Slot(u32);

impl Slot {
    fn index(self) -> usize {
        self.0 as usize
    }
}

/// The members of one group: a slab, an id -> slot hash map, and the slots in id order.
#[derive(Clone, Debug, Default)]
pub(super) struct Members {
    /// The members by slot; `None` is a free slot (listed in `free`).
    slots: Vec<Option<CMember>>,
    /// Free slots, reused last freed first.
    free: Vec<Slot>,
    /// The slot of each member id; looked up only, never iterated.
    by_id: FxHashMap<MemberId, Slot>,
    /// The occupied slots by member id, iterated in id order.
    in_order: BTreeMap<MemberId, Slot>,
}

impl Members {
    /// Number of members.
    pub(super) fn len(&self) -> usize {
        self.in_order.len()
    }

    /// Whether the group has no member.
    pub(super) fn is_empty(&self) -> bool {
        self.in_order.is_empty()
    }

    /// The slot of member `id`, if it is a member.
    pub(super) fn find(&self, id: &str) -> Option<Slot> {
        self.by_id.get(id).copied()
    }

    /// Whether `id` is a member.
    pub(super) fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// Adds `member`, whose id must be new; returns its slot.
    pub(super) fn insert(&mut self, member: CMember) -> Slot {
        let slot = self.free.pop().unwrap_or_else(|| {
            let next = u32::try_from(self.slots.len()).expect("fewer than 2^32 member slots");
            self.slots.push(None);
            Slot(next)
        });
        self.place(slot, &member.id);
        self.slots[slot.index()] = Some(member);
        slot
    }

    /// Removes the member in `slot` and returns it; the slot becomes free.
    pub(super) fn remove(&mut self, slot: Slot) -> CMember {
        self.unplace(slot);
        self.free.push(slot);
        self.slots[slot.index()].take().expect("removing an occupied slot")
    }

    /// Gives the member in `slot` the new id `id` (it keeps its slot); returns its old id.
    pub(super) fn rename(&mut self, slot: Slot, id: MemberId) -> MemberId {
        self.unplace(slot);
        self.place(slot, &id);
        std::mem::replace(&mut self[slot].id, id)
    }

    /// The members with their slots, in member-id order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (Slot, &CMember)> + '_ {
        self.in_order.values().map(|&slot| (slot, &self[slot]))
    }

    /// Calls `f` on every member with its slot, in member-id order.
    pub(super) fn for_each_mut(&mut self, mut f: impl FnMut(Slot, &mut CMember)) {
        for &slot in self.in_order.values() {
            let member = self.slots[slot.index()].as_mut().expect("an ordered slot is occupied");
            f(slot, member);
        }
    }

    /// Indexes `slot` under `id`, which must be new, in the map and the id order.
    fn place(&mut self, slot: Slot, id: &MemberId) {
        let previous = self.by_id.insert(id.clone(), slot);
        assert!(previous.is_none(), "member id {id} reused");
        self.in_order.insert(id.clone(), slot);
    }

    /// Drops the member in `slot` from the map and the id order (it stays in the slab).
    fn unplace(&mut self, slot: Slot) {
        let id = &self.slots[slot.index()].as_ref().expect("a member's slot is occupied").id;
        self.by_id.remove(id.as_str()).expect("a member's id is indexed");
        self.in_order.remove(id.as_str()).expect("a member's id is in the order");
    }
}

impl Index<Slot> for Members {
    type Output = CMember;

    fn index(&self, slot: Slot) -> &CMember {
        self.slots[slot.index()].as_ref().expect("a member's slot is occupied")
    }
}

impl IndexMut<Slot> for Members {
    fn index_mut(&mut self, slot: Slot) -> &mut CMember {
        self.slots[slot.index()].as_mut().expect("a member's slot is occupied")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: &str, slot: u32) -> CMember {
        CMember {
            id: id.to_string(),
            conn: Conn { slot, incarnation: 1 },
            instance_id: None,
            owned: Vec::new(),
            owned_generation: -1,
            replaced_since_join: false,
            rebalance_timeout: SimTime::from_secs(300),
            session_timeout: SimTime::from_secs(10),
            join_seq: 0,
            joined: false,
            awaiting_join: false,
            awaiting_sync: false,
            sync_sent: false,
            assigned: Vec::new(),
        }
    }

    fn ids(members: &Members) -> Vec<&str> {
        members.iter().map(|(_, m)| m.id.as_str()).collect()
    }

    #[test]
    fn iterates_in_member_id_order_and_reuses_freed_slots() {
        let mut members = Members::default();
        let c1 = members.insert(member("c1-0", 1));
        let c10 = members.insert(member("c10-1", 10));
        let c0 = members.insert(member("c0-2", 0));
        // Byte order: "c0-2" < "c1-0" < "c10-1" ('-' is 0x2d, '0' is 0x30).
        assert_eq!(ids(&members), vec!["c0-2", "c1-0", "c10-1"]);
        assert_eq!(members.find("c10-1"), Some(c10));
        assert_eq!(members.find("c10"), None);
        assert_eq!(members.remove(c1).conn.slot, 1);
        assert!(!members.contains("c1-0"));
        // The freed slot (the first, 0) goes to the next member.
        let c2 = members.insert(member("c2-3", 2));
        assert_eq!(c2, c1);
        assert_eq!(ids(&members), vec!["c0-2", "c10-1", "c2-3"]);
        assert_eq!(members[c0].conn.slot, 0);
        assert_eq!(members.len(), 3);
    }

    #[test]
    fn a_renamed_member_keeps_its_slot_and_moves_in_the_order() {
        let mut members = Members::default();
        let a = members.insert(member("c0-0", 0));
        members.insert(member("c1-1", 1));
        members[a].assigned = vec![Tp { topic: 0, partition: 7 }];
        let old = members.rename(a, "c0-2".to_string());
        assert_eq!(old, "c0-0");
        assert_eq!(members.find("c0-0"), None);
        assert_eq!(members.find("c0-2"), Some(a));
        assert_eq!(members[a].assigned, vec![Tp { topic: 0, partition: 7 }]);
        // A rename that changes the place: "c9-3" sorts after "c1-1".
        members.rename(a, "c9-3".to_string());
        assert_eq!(ids(&members), vec!["c1-1", "c9-3"]);
    }
}
