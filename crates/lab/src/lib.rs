//! Experiments on top of the model: one run of a scenario per protocol ([`run_protocol`]),
//! seeded sweeps with shards and merge, and the regression check.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod chaos;
pub mod chaos_check;
pub mod chaos_gen;
pub mod check;
pub mod check_rules;
pub mod diff;
pub mod divergence;
pub mod draws;
mod single;
pub mod stats;
pub mod sweep;
pub mod sweep_journal;
pub mod sweep_manifest;
pub mod sweep_merge;
pub mod sweep_output;
pub mod sweep_table;
pub mod trace;

pub use model::Stepping;
pub use single::{
    run_labels, run_protocol, run_protocol_on_threads, run_protocol_spilling, run_protocol_stepped,
    RunError,
};
