//! The classic group protocol (JoinGroup / SyncGroup / Heartbeat; docs/kafka-facts.md
//! sections 2 and 3): one coordinator ([`coordinator`], with static membership in
//! `coordinator/static_membership.rs`), the member's side ([`member`]) with its two rebalance
//! modes, [`eager`] (revoke everything before rejoining) and [`cooperative`] (KIP-429: keep
//! consuming, revoke only what moves), and the world's side (`world`: the coordinator's
//! timers and the rebalance's open/close books); [`metadata`]: how a member learns of added
//! partitions (its metadata refreshes).

pub mod cooperative;
pub mod coordinator;
pub mod eager;
pub mod member;
pub mod metadata;
pub(crate) mod world;

pub use coordinator::{ClassicCoordinator, GroupState};
