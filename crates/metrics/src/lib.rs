//! Metrics: fold the model's observations into the numbers users come for.
//!
//! The output of one protocol run is a [`RunReport`]: the summary row and the per-partition,
//! per-rebalance, ownership and timeline rows whose columns are the CSV contract of DESIGN
//! section 7 (`crates/report` writes them); the ownership rows, by far the most numerous, are
//! kept compact in an [`OwnershipLog`] and built on the fly; a long run's are on disk (spilled
//! to a temporary file during the run once [`SPILL_THRESHOLD`] are held, and read back as a
//! stream), so that a run's memory does not grow with its length. A [`Collector`] receives the
//! observations of a run (it is a `model::Observer`) and [`Collector::finish`] builds the
//! report. Conservation laws are checked when a report is finished; a violation is a bug in the
//! model or here, and panics with the numbers.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod collector;
mod intervals;
mod latency;
mod ownership;
mod rows;
mod spill;
mod time_sweep;
mod timeline;

pub use collector::{Collector, RunLabels};
pub use intervals::IntervalSet;
pub use ownership::{
    OwnershipInterval, OwnershipLog, OwnershipLogBuilder, OwnershipLogError, OwnershipRowRef,
    OwnershipSegment, KNOWN_STATES,
};
pub use rows::{
    Columns, OwnershipRow, PartitionRow, RebalanceRow, RunReport, SummaryRow, TimelineRow,
};
pub use timeline::SPILL_THRESHOLD;
