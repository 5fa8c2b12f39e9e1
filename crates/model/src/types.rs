//! Small shared types of the model: member addresses, protocol messages and the outbox every
//! sans-IO machine writes into.
//!
//! A [`Conn`] is one incarnation of a named member: a crash and restart makes a new
//! incarnation, and the world drops any message or timer addressed to an old one. Messages
//! carry Kafka's protocol errors as plain values ([`ProtocolError`]), never Rust errors.

pub use assignors::Tp;
use sim_core::SimTime;

/// A coordinator-assigned member id (`c1-2`: name and incarnation, so ids sort by name the
/// way Kafka's `clientId-uuid` ids sort by client id).
pub type MemberId = String;

/// One incarnation of a named member: the address messages are delivered to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Conn {
    /// Index of the member name (order of first appearance: c0, c1, ...).
    pub slot: u32,
    /// Bumped at every (re)start of the process.
    pub incarnation: u32,
}

/// Kafka protocol errors the model uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    /// REBALANCE_IN_PROGRESS: rejoin.
    RebalanceInProgress,
    /// UNKNOWN_MEMBER_ID: the member was removed; reset and rejoin.
    UnknownMemberId,
    /// ILLEGAL_GENERATION: the member's generation is stale; reset and rejoin.
    IllegalGeneration,
    /// FENCED_MEMBER_EPOCH (KIP-848): drop the partitions and rejoin with epoch 0.
    FencedMemberEpoch,
    /// UNRELEASED_INSTANCE_ID (KIP-848): a live member holds this `group.instance.id`.
    UnreleasedInstanceId,
}

/// Why a member sends LeaveGroup (Kafka sends the reason since KIP-800).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaveReason {
    /// `close()`.
    Close,
    /// The poll timer (`max.poll.interval.ms`) expired.
    MaxPollExpired,
}

/// A member's view of the group sent with JoinGroup: what the leader's assignor reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinMeta {
    /// Member id.
    pub member_id: MemberId,
    /// Partitions the member reports as owned (cooperative; eager sticky's user data).
    pub owned: Vec<Tp>,
    /// Generation of that claim (-1 when none).
    pub owned_generation: i32,
    /// `group.instance.id` of a static member (KIP-345).
    pub group_instance_id: Option<String>,
}

/// Requests from a member to the group coordinator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToCoordinator {
    /// JoinGroup. `member_id` is `None` for a new member.
    Join {
        /// Sender.
        conn: Conn,
        /// Its `client.id` (the request header's): its name, or one id every member shares
        /// (`[group] client_ids`). A new member's id starts with it.
        client_id: String,
        /// Known member id, if any.
        member_id: Option<MemberId>,
        /// `group.instance.id` of a static member (KIP-345): its name.
        group_instance_id: Option<String>,
        /// Owned partitions and their generation.
        owned: Vec<Tp>,
        /// Generation of `owned`.
        owned_generation: i32,
        /// The member's `max.poll.interval.ms`.
        rebalance_timeout: SimTime,
        /// The member's `session.timeout.ms`.
        session_timeout: SimTime,
        /// It rejoins because its metadata changed (`protocols/classic/metadata.rs`; the
        /// JoinGroup `reason` of KIP-800, "cached metadata has changed").
        metadata_changed: bool,
    },
    /// SyncGroup; the leader carries the assignment.
    Sync {
        /// Sender (an unknown member must still get its error).
        conn: Conn,
        /// Member id.
        member_id: MemberId,
        /// Generation from the join response.
        generation: i32,
        /// The leader's assignment (member id, partitions).
        assignment: Option<Vec<(MemberId, Vec<Tp>)>>,
        /// The partition counts the leader assigned with, by topic (empty from a follower):
        /// not on the wire, the model's coordinator keeps them for its invariants.
        topic_counts: Vec<u32>,
    },
    /// Heartbeat.
    Heartbeat {
        /// Sender (an unknown member must still get its error).
        conn: Conn,
        /// Member id.
        member_id: MemberId,
        /// Current generation.
        generation: i32,
    },
    /// LeaveGroup.
    Leave {
        /// Member id.
        member_id: MemberId,
        /// Why.
        reason: LeaveReason,
    },
    /// KIP-848 ConsumerGroupHeartbeat.
    ConsumerHeartbeat(CgHeartbeat),
    /// OffsetCommit (KIP-848: `generation` is the member epoch).
    Commit {
        /// Sender (commits of members without an id still need an answer).
        conn: Conn,
        /// Member id (`None` after a reset: the coordinator rejects it).
        member_id: Option<MemberId>,
        /// Generation (-1 after a reset).
        generation: i32,
        /// Next offsets to read.
        offsets: Vec<(Tp, u64)>,
        /// Client-side request number, echoed in the response.
        request: u64,
    },
}

/// Responses from the coordinator to a member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToMember {
    /// JoinGroup response.
    Join(Result<JoinOk, ProtocolError>),
    /// SyncGroup response.
    Sync(Result<SyncOk, ProtocolError>),
    /// Heartbeat response (`None` = OK).
    Heartbeat(Option<ProtocolError>),
    /// KIP-848 ConsumerGroupHeartbeat response.
    ConsumerHeartbeat(Result<CgHeartbeatOk, ProtocolError>),
    /// OffsetCommit response.
    Commit {
        /// The request number.
        request: u64,
        /// Whether the offsets were stored.
        ok: bool,
    },
}

/// A successful JoinGroup response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinOk {
    /// The member's id.
    pub member_id: MemberId,
    /// The new generation.
    pub generation: i32,
    /// The leader's id.
    pub leader: MemberId,
    /// All members' metadata (leader only; empty for followers).
    pub members: Vec<JoinMeta>,
}

/// A successful SyncGroup response. The committed offsets of the assigned partitions ride
/// along: the model folds the client's OffsetFetch into it (documented simplification).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncOk {
    /// The generation.
    pub generation: i32,
    /// This member's partitions, sorted.
    pub assigned: Vec<Tp>,
    /// Committed offsets of `assigned` (`None`: never committed).
    pub committed: Vec<(Tp, Option<u64>)>,
}

/// Member epoch of a leave (KIP-848 `LEAVE_GROUP_MEMBER_EPOCH`).
pub const LEAVE_EPOCH: i32 = -1;
/// Member epoch of a static member's leave (`LEAVE_GROUP_STATIC_MEMBER_EPOCH`): the
/// coordinator keeps its assignment until its session expires.
pub const STATIC_LEAVE_EPOCH: i32 = -2;

/// A KIP-848 ConsumerGroupHeartbeat request (AK `ConsumerGroupHeartbeatRequest`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgHeartbeat {
    /// Sender.
    pub conn: Conn,
    /// Member name (client id).
    pub name: String,
    /// Member id (`None` when joining).
    pub member_id: Option<MemberId>,
    /// 0 joins, [`LEAVE_EPOCH`] / [`STATIC_LEAVE_EPOCH`] leave, else the member's epoch.
    pub member_epoch: i32,
    /// `group.instance.id` of a static member.
    pub instance_id: Option<String>,
    /// Owned partitions (sent when they changed: this acknowledges a revocation).
    pub owned: Option<Vec<Tp>>,
    /// The member's `max.poll.interval.ms` (the rebalance timeout).
    pub rebalance_timeout: SimTime,
    /// Why a leave is sent.
    pub leave_reason: Option<LeaveReason>,
}

/// A successful ConsumerGroupHeartbeat response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgHeartbeatOk {
    /// The member's id.
    pub member_id: MemberId,
    /// Its epoch now.
    pub member_epoch: i32,
    /// `group.consumer.heartbeat.interval.ms`.
    pub heartbeat_interval: SimTime,
    /// The partitions the member may own now, sorted.
    pub assigned: Vec<Tp>,
    /// Committed offsets of `assigned` (the model folds OffsetFetch in, as for SyncGroup).
    pub committed: Vec<(Tp, Option<u64>)>,
    /// The member reached the target assignment of the group epoch (state STABLE).
    pub stable: bool,
}

/// What a machine asks the world to do after handling one input.
#[derive(Debug)]
pub struct Outbox<M, T, N> {
    /// Messages to send, in order.
    pub sends: Vec<M>,
    /// Timers to (re)arm at a time, or cancel (`None`).
    pub timers: Vec<(T, Option<SimTime>)>,
    /// Observations, in order.
    pub notes: Vec<N>,
}

impl<M, T, N> Default for Outbox<M, T, N> {
    fn default() -> Self {
        Outbox { sends: Vec::new(), timers: Vec::new(), notes: Vec::new() }
    }
}

impl<M, T, N> Outbox<M, T, N> {
    /// Records a message.
    pub fn send(&mut self, msg: M) {
        self.sends.push(msg);
    }
    /// Records a timer setting.
    pub fn arm(&mut self, timer: T, at: SimTime) {
        self.timers.push((timer, Some(at)));
    }
    /// Records a timer cancellation.
    pub fn cancel(&mut self, timer: T) {
        self.timers.push((timer, None));
    }
    /// Records an observation.
    pub fn note(&mut self, note: N) {
        self.notes.push(note);
    }
}
