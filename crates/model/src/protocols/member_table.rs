//! A group coordinator's member table, shared by the classic and the KIP-848 coordinators.
//! Members live in a slab: each keeps its [`Slot`] from its join until its removal (a rename
//! by static membership keeps it too), so a coordinator looks a member up once per request
//! and then indexes. Lookups by member id go through a hash map that is never iterated (no
//! string comparisons on the hot path: a B-tree of ids compared strings, each in memory of
//! its own, at every level of every lookup); every iteration follows member-id order, kept
//! in a `BTreeMap` from id to slot that only joins, removals and renames search (in
//! `O(log n)`), because that order decides the outputs (the leader's member list, the
//! assignor's input, the order of responses and removals).

use crate::types::MemberId;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::ops::{Bound, Index, IndexMut};

/// A member as its table keeps it: it carries its own id.
pub(crate) trait Keyed {
    /// Its member id (the table's key).
    fn id(&self) -> &MemberId;
    /// Gives it the id `id`; returns the old one.
    fn replace_id(&mut self, id: MemberId) -> MemberId;
}

/// A member's place in its coordinator's member table, valid until the member is removed (a
/// timer keyed by it is cancelled at the removal: the next member in the slot never hears it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot(u32);

impl Slot {
    /// Its index in the slab, also a dense key for what is kept per member.
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// The members of one group: a slab, an id -> slot hash map, and the slots in id order.
#[derive(Clone, Debug)]
pub(crate) struct MemberTable<T> {
    /// The members by slot; `None` is a free slot (listed in `free`).
    slots: Vec<Option<T>>,
    /// Free slots, reused last freed first.
    free: Vec<Slot>,
    /// The slot of each member id; looked up only, never iterated.
    by_id: FxHashMap<MemberId, Slot>,
    /// The occupied slots by member id, iterated in id order.
    in_order: BTreeMap<MemberId, Slot>,
}

impl<T> Default for MemberTable<T> {
    fn default() -> MemberTable<T> {
        MemberTable {
            slots: Vec::new(),
            free: Vec::new(),
            by_id: FxHashMap::default(),
            in_order: BTreeMap::new(),
        }
    }
}

impl<T: Keyed> MemberTable<T> {
    /// Number of members.
    pub(crate) fn len(&self) -> usize {
        self.in_order.len()
    }

    /// Whether the group has no member.
    pub(crate) fn is_empty(&self) -> bool {
        self.in_order.is_empty()
    }

    /// The slot of member `id`, if it is a member.
    pub(crate) fn find(&self, id: &str) -> Option<Slot> {
        self.by_id.get(id).copied()
    }

    /// Whether `id` is a member.
    pub(crate) fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// Member `id`, if it is one.
    pub(crate) fn get(&self, id: &str) -> Option<&T> {
        self.find(id).map(|slot| &self[slot])
    }

    /// Member `id`, if it is one, to change.
    pub(crate) fn get_mut(&mut self, id: &str) -> Option<&mut T> {
        self.find(id).map(|slot| &mut self[slot])
    }

    /// Adds `member`, whose id must be new; returns its slot.
    pub(crate) fn insert(&mut self, member: T) -> Slot {
        let slot = self.free.pop().unwrap_or_else(|| {
            let next = u32::try_from(self.slots.len()).expect("fewer than 2^32 member slots");
            self.slots.push(None);
            Slot(next)
        });
        self.place(slot, member.id());
        self.slots[slot.index()] = Some(member);
        slot
    }

    /// The member in `slot`, if the slot is occupied.
    pub(crate) fn at(&self, slot: Slot) -> Option<&T> {
        self.slots.get(slot.index())?.as_ref()
    }

    /// Removes the member in `slot` and returns it; the slot becomes free.
    pub(crate) fn remove(&mut self, slot: Slot) -> T {
        self.unplace(slot);
        self.free.push(slot);
        self.slots[slot.index()].take().expect("removing an occupied slot")
    }

    /// Gives the member in `slot` the new id `id` (it keeps its slot); returns its old id.
    pub(crate) fn rename(&mut self, slot: Slot, id: MemberId) -> MemberId {
        self.unplace(slot);
        self.place(slot, &id);
        self[slot].replace_id(id)
    }

    /// The members with their slots, in member-id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Slot, &T)> + '_ {
        self.in_order.values().map(|&slot| (slot, &self[slot]))
    }

    /// The members whose id is `id` or after it, in member-id order.
    pub(crate) fn iter_from<'a>(&'a self, id: &str) -> impl Iterator<Item = &'a T> + 'a {
        let rest = self.in_order.range::<str, _>((Bound::Included(id), Bound::Unbounded));
        rest.map(|(_, &slot)| &self[slot])
    }

    /// Calls `f` on every member with its slot, in member-id order.
    pub(crate) fn for_each_mut(&mut self, mut f: impl FnMut(Slot, &mut T)) {
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
        let id = self.slots[slot.index()].as_ref().expect("a member's slot is occupied").id();
        self.by_id.remove(id.as_str()).expect("a member's id is indexed");
        self.in_order.remove(id.as_str()).expect("a member's id is in the order");
    }
}

impl<T> Index<Slot> for MemberTable<T> {
    type Output = T;

    fn index(&self, slot: Slot) -> &T {
        self.slots[slot.index()].as_ref().expect("a member's slot is occupied")
    }
}

impl<T> IndexMut<Slot> for MemberTable<T> {
    fn index_mut(&mut self, slot: Slot) -> &mut T {
        self.slots[slot.index()].as_mut().expect("a member's slot is occupied")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A member with an id and a payload.
    #[derive(Debug)]
    struct M {
        id: MemberId,
        payload: u32,
    }

    impl Keyed for M {
        fn id(&self) -> &MemberId {
            &self.id
        }

        fn replace_id(&mut self, id: MemberId) -> MemberId {
            std::mem::replace(&mut self.id, id)
        }
    }

    fn member(id: &str, payload: u32) -> M {
        M { id: id.to_string(), payload }
    }

    fn ids(members: &MemberTable<M>) -> Vec<&str> {
        members.iter().map(|(_, m)| m.id.as_str()).collect()
    }

    #[test]
    fn iterates_in_member_id_order_and_reuses_freed_slots() {
        let mut members = MemberTable::default();
        let c1 = members.insert(member("c1-0", 1));
        let c10 = members.insert(member("c10-1", 10));
        let c0 = members.insert(member("c0-2", 0));
        // Byte order: "c0-2" < "c1-0" < "c10-1" ('-' is 0x2d, '0' is 0x30).
        assert_eq!(ids(&members), vec!["c0-2", "c1-0", "c10-1"]);
        assert_eq!(members.find("c10-1"), Some(c10));
        assert_eq!(members.find("c10"), None);
        assert_eq!(members.get("c10-1").map(|m| m.payload), Some(10));
        assert_eq!(members.remove(c1).payload, 1);
        assert!(!members.contains("c1-0"));
        assert!(members.get("c1-0").is_none());
        // The freed slot (the first, 0) goes to the next member.
        let c2 = members.insert(member("c2-3", 2));
        assert_eq!(c2, c1);
        assert_eq!(ids(&members), vec!["c0-2", "c10-1", "c2-3"]);
        assert_eq!(members[c0].payload, 0);
        assert_eq!(members.len(), 3);
        // From an id on, in id order; an id that is no member starts where it would sort.
        let from = |id| members.iter_from(id).map(|m| m.payload).collect::<Vec<_>>();
        assert_eq!(from("c10-1"), vec![10, 2]);
        assert_eq!(from("c1"), vec![10, 2]);
        assert_eq!(from("c3"), Vec::<u32>::new());
    }

    #[test]
    fn a_renamed_member_keeps_its_slot_and_moves_in_the_order() {
        let mut members = MemberTable::default();
        let a = members.insert(member("c0-0", 0));
        members.insert(member("c1-1", 1));
        members[a].payload = 7;
        let old = members.rename(a, "c0-2".to_string());
        assert_eq!(old, "c0-0");
        assert_eq!(members.find("c0-0"), None);
        assert_eq!(members.find("c0-2"), Some(a));
        assert_eq!(members[a].id, "c0-2");
        assert_eq!(members.get_mut("c0-2").map(|m| m.payload), Some(7));
        // A rename that changes the place: "c9-3" sorts after "c1-1".
        members.rename(a, "c9-3".to_string());
        assert_eq!(ids(&members), vec!["c1-1", "c9-3"]);
        let mut seen = Vec::new();
        members.for_each_mut(|_, m| {
            m.payload += 1;
            seen.push(m.id.clone());
        });
        assert_eq!(seen, vec!["c1-1", "c9-3"]);
        assert_eq!(members[a].payload, 8);
    }
}
