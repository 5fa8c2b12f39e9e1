//! The modeled world of the classic group protocol, eager and cooperative: producers
//! ([`workload`]), the group coordinator ([`coordinator::classic`]) and the consumers
//! ([`consumer`]) as sans-IO state machines, driven by one world loop ([`world`]) over the
//! `sim_core` event queue. The model reports [`Observation`]s; it computes no statistics.
//!
//! Entry point: [`simulate`]. Protocols not modeled yet (KIP-848, static membership, TubeMQ,
//! manual) return [`ModelError::Unsupported`]; they slot in as new coordinator modules.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod consumer;
pub mod coordinator;
pub mod observe;
pub mod processing;
pub mod types;
pub mod workload;
pub mod world;

pub use observe::{Observation, Observer, PartState};
pub use types::{Conn, Tp};
pub use world::{
    classic_mode, simulate, simulate_probed, MemberView, ModelError, NoProbe, Probe, RunStats,
    WorldView,
};
