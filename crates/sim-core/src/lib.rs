//! The simulation core: virtual time, a deterministic event queue, and seeded random streams.
//!
//! Nothing here knows about Kafka. A world built on top owns one [`EventQueue`] and one
//! [`RngStreams`]; it pops the next event with [`run()`] (or by hand), handles it, and schedules
//! what follows. Same inputs, same order, same bytes: equal-time events pop in insertion order,
//! time never goes backwards (asserted), and every random draw comes from a named stream derived
//! from the run seed.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod queue;
mod rng;
mod run;
mod time;

pub use queue::{EventQueue, TimerId, RANK_LAST};
pub use rng::{RngStreams, SimRng};
pub use run::{run, RunLimits, RunOutcome, StopReason};
pub use time::{ParseSimTimeError, SimTime};
