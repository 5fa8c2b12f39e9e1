//! TubeMQ client-side balance (`tubemq-client`; docs/kafka-facts.md section 8): no
//! coordinator; each node owns the partitions its node id selects and finds them by querying
//! the partition set (`world`). Its members have no group membership: partitions are handed
//! to them ([`crate::protocols::assigned`]).

pub(crate) mod world;
