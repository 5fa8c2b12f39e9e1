//! What the three protocols without group membership share (TubeMQ server-side and
//! client-side balance, manual assignment): the member's side ([`member`]: partitions handed
//! to it and taken away) and the world's side (`world`: the offset store, commits, the
//! events these protocols exchange).

pub mod member;
pub(crate) mod world;
