//! Limits against runaway input (style.md item 5), checked when a scenario loads: past one of
//! them a file is rejected with a message, never left to exhaust memory or time.

use sim_core::SimTime;

/// At most this many members at any time (initial, joined or scaled to).
pub const MAX_MEMBERS: u32 = 100_000;
/// At most this many partitions over all topics, including added ones.
pub const MAX_PARTITIONS: u32 = 10_000_000;
/// At most this many `[[event]]` entries.
pub const MAX_EVENTS: usize = 100_000;
/// At most this much simulated time, and the longest duration any key accepts: 30 days.
pub const MAX_DURATION: SimTime = SimTime::from_secs(30 * 24 * 3600);
/// At most this many records per second per partition (the mean, when skewed).
pub const MAX_RATE_PER_S: f64 = 1e6;
/// Above this many expected records produced, `warnings` says the run may be slow.
pub const WARN_RECORDS: f64 = 1e9;
