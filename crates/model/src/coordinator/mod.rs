//! Group coordinators, one module per protocol. Each is a sans-IO state machine fed
//! [`crate::ToCoordinator`] messages, its own timers and topology changes: [`classic`]
//! (eager and cooperative, with static membership in `classic/static_membership.rs`),
//! [`consumer_group`] (the KIP-848 consumer protocol). [`tubemq_master`] is TubeMQ's
//! master (server-side balance), fed its own messages.

pub mod classic;
pub mod consumer_group;
pub mod tubemq_master;
