//! TubeMQ server-side balance (`tubemq-server`; docs/kafka-facts.md section 8): the master
//! ([`master`]) and the world's side (`world`: registrations, heartbeats, the master's
//! events). Its members have no group membership: partitions are handed to them
//! ([`crate::protocols::assigned`]).

pub mod master;
pub(crate) mod world;
