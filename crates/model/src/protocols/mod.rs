//! The group protocols, one folder each. A folder holds everything of its protocol: the
//! coordinator (a sans-IO state machine fed its messages, timers and topology changes), the
//! membership half of the consumer (`member.rs`: what the member does at poll, at its
//! heartbeat timer, on its responses), what the world does for it (`world.rs`: routing its
//! messages and timers, turning its notes into observations) and its invariants.
//!
//! - [`classic`]: the classic group protocol, with its two client rebalance modes, eager
//!   ([`classic::eager`]) and cooperative ([`classic::cooperative`]), and static membership;
//! - [`kip848`]: the KIP-848 consumer protocol (`group.protocol = consumer`);
//! - [`tubemq_server`]: TubeMQ server-side balance (the master);
//! - [`tubemq_client`]: TubeMQ client-side balance (no coordinator);
//! - [`manual`]: manual assignment (`assign()`, no coordinator).
//!
//! The last three have no group membership: their members get partitions handed to them
//! ([`assigned`], shared by the three). The world holds one `Group` and each consumer one
//! `Membership`; both are matched exhaustively, so a new protocol makes the compiler list
//! every place that must handle it (docs/architecture.md, "Adding a protocol").

pub mod assigned;
pub mod classic;
pub mod kip848;
pub mod manual;
mod member_table;
pub use member_table::Slot as MemberSlot;
pub mod tubemq_client;
pub mod tubemq_server;

use crate::consumer::{Consumer, ConsumerInput, RebalanceMode};
use crate::protocols::assigned::world::{ClientSide, ManualSide, ServerSide};
use crate::protocols::classic::coordinator::{CoordInput, GroupState};
use crate::protocols::classic::world::ClassicGroup;
use crate::protocols::kip848::coordinator::CgInput;
use crate::protocols::kip848::world::CgSide;
use crate::types::{Conn, ToCoordinator, ToMember, Tp};
use crate::world::{Stepper, World};
use scenario::{Protocol, ProtocolSpec, Scenario};
use sim_core::{RngStreams, SimTime};

/// The group protocol's side of the world: one variant per protocol folder.
pub(crate) enum Group {
    /// The classic group protocol (eager or cooperative members).
    Classic(ClassicGroup),
    /// The KIP-848 consumer protocol.
    Kip848(CgSide),
    /// TubeMQ server-side balance.
    TubemqServer(ServerSide),
    /// TubeMQ client-side balance.
    TubemqClient(ClientSide),
    /// Manual assignment.
    Manual(ManualSide),
}

/// The client rebalance mode a protocol's members run (members without group membership
/// never join a group: `Eager` is unused for them).
pub(crate) fn rebalance_mode(protocol: Protocol) -> RebalanceMode {
    match protocol {
        Protocol::Eager => RebalanceMode::Eager,
        Protocol::Cooperative => RebalanceMode::Cooperative,
        Protocol::Consumer => RebalanceMode::Consumer,
        Protocol::TubemqServer | Protocol::TubemqClient | Protocol::Manual => RebalanceMode::Eager,
    }
}

impl Group {
    /// The group side of `protocol` over topics with these partition counts.
    pub(crate) fn new(
        scenario: &Scenario,
        protocol: ProtocolSpec,
        streams: &RngStreams,
        partition_counts: Vec<u32>,
    ) -> Group {
        match protocol.protocol {
            Protocol::Eager | Protocol::Cooperative => {
                Group::Classic(ClassicGroup::new(scenario, partition_counts, streams))
            }
            Protocol::Consumer => {
                Group::Kip848(CgSide::new(scenario, protocol.assignor, partition_counts, streams))
            }
            Protocol::TubemqServer => Group::TubemqServer(ServerSide::new(scenario, streams)),
            Protocol::TubemqClient => Group::TubemqClient(ClientSide::new(scenario)),
            Protocol::Manual => Group::Manual(ManualSide::new(scenario)),
        }
    }

    /// The group's state in classic terms, for probes (protocols without a group: Empty).
    pub(crate) fn state(&self) -> GroupState {
        match self {
            Group::Classic(g) => g.coord.state(),
            Group::Kip848(side) => side.state(),
            Group::TubemqServer(_) | Group::TubemqClient(_) | Group::Manual(_) => GroupState::Empty,
        }
    }

    /// The group's generation (KIP-848: group epoch), for probes (no group: 0).
    pub(crate) fn generation(&self) -> i32 {
        match self {
            Group::Classic(g) => g.coord.generation(),
            Group::Kip848(side) => side.coord.group_epoch(),
            Group::TubemqServer(_) | Group::TubemqClient(_) | Group::Manual(_) => 0,
        }
    }

    /// The members the coordinator has in its group, for probes (no group: none).
    pub(crate) fn member_conns(&self) -> Vec<Conn> {
        match self {
            Group::Classic(g) => g.coord.member_conns(),
            Group::Kip848(side) => side.coord.member_conns(),
            Group::TubemqServer(_) | Group::TubemqClient(_) | Group::Manual(_) => Vec::new(),
        }
    }

    /// Partitions the group leaves to no one until some other rebalance, for probes (the
    /// classic group's `ClassicCoordinator::withheld_for_good`; the other protocols have
    /// no withheld partitions).
    pub(crate) fn withheld_for_good(&self) -> Vec<Tp> {
        match self {
            Group::Classic(g) => g.coord.withheld_for_good(),
            Group::Kip848(_)
            | Group::TubemqServer(_)
            | Group::TubemqClient(_)
            | Group::Manual(_) => Vec::new(),
        }
    }
}

impl<S: Stepper> World<'_, S> {
    /// After the topics exist: the protocol's own start (the TubeMQ master's first tick).
    pub(crate) fn group_init(&mut self) {
        match self.group {
            Group::TubemqServer(_) => self.master_init(),
            Group::Classic(_) | Group::Kip848(_) | Group::TubemqClient(_) | Group::Manual(_) => {}
        }
    }

    /// A new consumer for `conn`, with the membership its protocol runs.
    pub(crate) fn new_consumer(&self, conn: Conn, name: &str) -> Consumer {
        let (name, params) = (name.to_string(), self.params.clone());
        match self.group {
            Group::Classic(_) | Group::Kip848(_) => Consumer::new(conn, name, params),
            Group::TubemqServer(_) | Group::TubemqClient(_) | Group::Manual(_) => {
                Consumer::new_external(conn, name, params)
            }
        }
    }

    /// Incarnation `conn` just started: register, start heartbeats or queries, fetch offsets
    /// (the group protocols' members join at their first poll).
    pub(crate) fn group_member_started(&mut self, now: SimTime, conn: Conn) {
        match self.group {
            Group::Classic(_) | Group::Kip848(_) => {}
            Group::TubemqServer(_) => self.server_member_started(now, conn),
            Group::TubemqClient(_) => self.client_member_started(now, conn),
            Group::Manual(_) => self.manual_member_started(now, conn),
        }
    }

    /// A request a member sent to its coordinator.
    pub(crate) fn group_message(&mut self, now: SimTime, msg: ToCoordinator) {
        match self.group {
            Group::Classic(_) => self.coord_input(now, CoordInput::Message(msg)),
            Group::Kip848(_) => self.cg_input(now, CgInput::Message(msg)),
            Group::TubemqServer(_) | Group::TubemqClient(_) | Group::Manual(_) => {
                self.ext_to_coord(now, msg)
            }
        }
    }

    /// Partitions were added (the scenario's `add-partitions`).
    pub(crate) fn group_topics_changed(&mut self, now: SimTime) {
        let counts = self.partition_counts();
        match self.group {
            Group::Classic(_) => self.coord_input(now, CoordInput::TopicsChanged(counts)),
            Group::Kip848(_) => {
                // Until issue 23 the world also fed the (empty) classic coordinator, whose
                // input ends with a try to close the open rebalance: kept, so that outputs
                // stay the same.
                self.cg_try_close(now);
                self.cg_input(now, CgInput::TopicsChanged(counts));
            }
            Group::TubemqServer(_) => self.master_topics_changed(now, counts),
            // Client-side nodes find new partitions at their next query; manual assignment
            // never consumes them.
            Group::TubemqClient(_) | Group::Manual(_) => {}
        }
    }

    /// Closes the open rebalance if its protocol says it is over.
    pub(crate) fn try_close_rebalance(&mut self, now: SimTime) {
        match self.group {
            Group::Classic(_) => self.classic_try_close(now),
            Group::Kip848(_) => self.cg_try_close(now),
            // Their rebalances are reported by the master's own notes.
            Group::TubemqServer(_) | Group::TubemqClient(_) | Group::Manual(_) => {}
        }
    }

    /// The stored offset of `tp` (the coordinator's, or the offset store's without a group).
    pub(crate) fn committed_offset(&self, tp: Tp) -> Option<u64> {
        match &self.group {
            Group::Classic(g) => g.coord.committed(tp),
            Group::Kip848(side) => side.coord.committed(tp),
            Group::TubemqServer(side) => side.store.committed(tp),
            Group::TubemqClient(side) => side.store.committed(tp),
            Group::Manual(side) => side.store.committed(tp),
        }
    }

    /// Members for the timeline: the coordinator's or the master's, else live processes.
    pub(crate) fn group_members(&self) -> u32 {
        match &self.group {
            Group::Classic(g) => g.coord.member_count() as u32,
            Group::Kip848(side) => side.coord.member_count() as u32,
            Group::TubemqServer(side) => match side.master.as_ref() {
                Some(master) => master.member_count() as u32,
                None => self.live_members(),
            },
            Group::TubemqClient(_) | Group::Manual(_) => self.live_members(),
        }
    }

    fn live_members(&self) -> u32 {
        self.slots.iter().filter(|s| s.alive()).count() as u32
    }

    /// Before the accesses of an event are reported: client-side balance may keep a partition
    /// consumable by a second owner.
    pub(crate) fn group_before_flush(&mut self) {
        match self.group {
            Group::TubemqClient(_) => self.client_shared_owners(),
            Group::Classic(_) | Group::Kip848(_) | Group::TubemqServer(_) | Group::Manual(_) => {}
        }
    }

    /// A member handed partitions back (TubeMQ release).
    pub(crate) fn group_released(
        &mut self,
        now: SimTime,
        conn: Conn,
        offsets: Vec<(Tp, u64)>,
        wait_until: Option<SimTime>,
    ) {
        match self.group {
            Group::Classic(_) | Group::Kip848(_) => {}
            Group::TubemqServer(_) | Group::TubemqClient(_) | Group::Manual(_) => {
                self.ext_released(now, conn, offsets, wait_until)
            }
        }
    }

    /// A member finished a graceful close: TubeMQ consumers unregister from the master.
    pub(crate) fn group_member_exited(&mut self, now: SimTime, conn: Conn) {
        match self.group {
            Group::TubemqServer(_) => self.server_member_exited(now, conn),
            Group::Classic(_) | Group::Kip848(_) | Group::TubemqClient(_) | Group::Manual(_) => {}
        }
    }
}

/// A member's group membership: the client state of its protocol, beside the poll loop the
/// consumer runs for every protocol (`crate::consumer`).
#[derive(Clone, Debug)]
pub(crate) enum Membership {
    /// The classic group protocol ([`classic::member`]; eager or cooperative by
    /// `ConsumerParams::mode`). Its state (member id, generation, phase, the pending
    /// assignment) is the consumer's own, shared in part with KIP-848.
    Classic,
    /// The KIP-848 consumer protocol ([`kip848::member`]).
    Kip848(kip848::member::Kip848State),
    /// No group: partitions handed to the member ([`assigned::member`]).
    Assigned(assigned::member::ExternalState),
}

impl Membership {
    /// The membership of a group member running `mode`.
    pub(crate) fn of_mode(mode: RebalanceMode) -> Membership {
        match mode {
            RebalanceMode::Eager | RebalanceMode::Cooperative => Membership::Classic,
            RebalanceMode::Consumer => Membership::Kip848(Default::default()),
        }
    }
}

/// What fast stepping (`world/stepper`) asks a member's protocol, answered in the protocol's
/// own `member.rs`.
impl Consumer {
    /// Whether the protocol leaves the member's coming poll-loop steps plain: they only
    /// fetch and process records, send nothing and change no ownership (the protocol-neutral
    /// conditions are `Consumer::poll_loop_is_quiet`'s).
    pub(crate) fn poll_loop_is_plain(&self) -> bool {
        match &self.membership {
            Membership::Classic => self.classic_poll_loop_is_plain(),
            Membership::Kip848(state) => self.kip848_poll_loop_is_plain(state),
            Membership::Assigned(_) => self.assigned_poll_loop_is_plain(),
        }
    }

    /// Whether handling `input` neither reads nor changes a steady member's poll loop, so its
    /// aside steps may stay aside: a commit response for every protocol (a quiet member
    /// awaits none; only the outcome is reported), and what the protocol says.
    pub(crate) fn input_leaves_poll_loop_alone(&self, input: &ConsumerInput) -> bool {
        if matches!(input, ConsumerInput::Message(ToMember::Commit { .. })) {
            return true;
        }
        match &self.membership {
            Membership::Classic => Consumer::classic_input_leaves_poll_loop_alone(input),
            Membership::Kip848(_) => Consumer::kip848_input_leaves_poll_loop_alone(input),
            Membership::Assigned(_) => Consumer::assigned_input_leaves_poll_loop_alone(input),
        }
    }

    /// Whether `input` is a coordinator's response that changes nothing for the member: its
    /// handling only wakes a poll that waits for records (`Consumer::wake`).
    pub(crate) fn response_changes_nothing(&self, input: &ConsumerInput) -> bool {
        match &self.membership {
            Membership::Classic => Consumer::classic_response_changes_nothing(input),
            Membership::Kip848(_) => self.kip848_response_changes_nothing(input),
            Membership::Assigned(_) => Consumer::assigned_response_changes_nothing(input),
        }
    }
}
