//! Group coordinators, one module per protocol. Each is a sans-IO state machine fed
//! [`crate::ToCoordinator`] messages, its own timers and topology changes; KIP-848, static
//! membership and TubeMQ will add modules beside [`classic`].

pub mod classic;
