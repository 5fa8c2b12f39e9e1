//! Manual assignment (`manual`, `assign()`): no coordinator; partition `i` of the initial
//! flattened list goes to initial member `c{i mod n}` for good (`world`). Its members have
//! no group membership: partitions are handed to them ([`crate::protocols::assigned`]).

pub(crate) mod world;
