//! The modeled world of Kafka-style consumer groups: producers ([`workload`]), the group
//! protocols ([`protocols`]: classic eager and cooperative with static membership, KIP-848,
//! TubeMQ server-side and client-side balance, manual assignment; one folder each, holding
//! its coordinator, the member's side and the world's side) and the consumer's poll loop
//! ([`consumer`]), as sans-IO state machines driven by one world loop ([`world`]) over the
//! `sim_core` event queue. The model reports [`Observation`]s; it computes no statistics.
//!
//! Entry point: [`simulate`]. A map of the insides: docs/architecture.md.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod consumer;
pub mod invariants;
pub mod latency_counts;
pub mod observe;
mod ownership;
pub mod processing;
pub mod protocols;
pub mod records;
pub mod tp_table;
pub mod types;
pub mod workload;
pub mod world;

pub use invariants::Broken;
pub use latency_counts::{latency_us, CountLatencies, LatencyCounts};
pub use observe::{
    AccessRef, MemberRef, MemberState, Observation, Observer, PartState, PeriodicStretch,
};
pub use records::RecordTimes;
pub use tp_table::TpTable;
pub use types::{Conn, Tp};
pub use world::{
    simulate, simulate_on_threads, simulate_probed, simulate_stepped, CatchUpThreads, MemberView,
    NoProbe, Probe, RunStats, Stepping, WorldView,
};
