//! The KIP-848 consumer protocol (`group.protocol = consumer`; docs/kafka-facts.md sections 5
//! and 10): the group coordinator ([`coordinator`]), the member's side ([`member`]) and the
//! world's side (`world`).

pub mod coordinator;
pub mod member;
pub(crate) mod world;
