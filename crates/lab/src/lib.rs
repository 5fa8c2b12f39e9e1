//! Experiments on top of the model: one run of a scenario per protocol, and (later) sweeps,
//! shards and merge, the regression check and chaos.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod single;

pub use single::run_protocol;
