//! The classic coordinator's members: what it knows of each, in the shared member table
//! (`protocols/member_table.rs`: a slab looked up by id through a hash map, iterated in
//! member-id order).

use crate::protocols::member_table::{Keyed, MemberTable};
use crate::types::{Conn, MemberId, Tp};
use sim_core::SimTime;

pub(crate) use crate::protocols::member_table::Slot;

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

impl Keyed for CMember {
    fn id(&self) -> &MemberId {
        &self.id
    }

    fn replace_id(&mut self, id: MemberId) -> MemberId {
        std::mem::replace(&mut self.id, id)
    }
}

/// The members of one group.
pub(super) type Members = MemberTable<CMember>;
