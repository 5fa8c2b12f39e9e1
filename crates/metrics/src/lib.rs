//! Metrics: fold the model's observations into the numbers users come for.
//!
//! The output of one protocol run is a [`RunReport`]: the summary row and the per-partition,
//! per-rebalance, ownership and timeline rows whose columns are the CSV contract of DESIGN
//! section 7 (`crates/report` writes them). Conservation laws are checked when a report is
//! finished; a violation is a bug in the model or here, and panics with the numbers.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod rows;

pub use rows::{
    Columns, OwnershipRow, PartitionRow, RebalanceRow, RunReport, SummaryRow, TimelineRow,
};
