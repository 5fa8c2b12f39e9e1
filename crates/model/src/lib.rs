//! The modeled world of the classic group protocol (eager, cooperative, static membership)
//! and the KIP-848 consumer protocol ([`coordinator::consumer_group`]): producers
//! ([`workload`]), the group coordinator ([`coordinator::classic`]) and the consumers
//! ([`consumer`]) as sans-IO state machines, driven by one world loop ([`world`]) over the
//! `sim_core` event queue. The model reports [`Observation`]s; it computes no statistics.
//!
//! Entry point: [`simulate`]. Protocols not modeled yet return [`ModelError::Unsupported`];
//! they slot in as new coordinator modules. TubeMQ server-side balance
//! ([`coordinator::tubemq_master`]), TubeMQ client-side balance and manual assignment run the
//! same consumers without a classic group (`world/external.rs`).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod consumer;
pub mod coordinator;
pub mod observe;
pub mod processing;
pub mod records;
pub mod tp_table;
pub mod types;
pub mod workload;
pub mod world;

pub use observe::{AccessRef, MemberRef, Observation, Observer, PartState, PeriodicStretch};
pub use records::RecordTimes;
pub use tp_table::TpTable;
pub use types::{Conn, Tp};
pub use world::{
    classic_mode, simulate, simulate_probed, simulate_stepped, MemberView, ModelError, NoProbe,
    Probe, RunStats, Stepping, WorldView,
};
