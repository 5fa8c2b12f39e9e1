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
/// At most this many bytes in a scenario, sweep, check or `assign` input file (100,000
/// events of about 80 bytes fit): a larger file is refused before it is parsed, so
/// `validate /dev/zero` ends at once and a huge file costs no memory.
pub const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;
/// At most this many member-steps over all `scale` events (each counts the members present
/// and those added or removed). It once kept a replay that touched every member per `scale`
/// from taking minutes (issue 27 item 6); the replay now costs a few tree steps per event
/// whatever the member counts (`roster.rs`), and the bound stays so that the same files are
/// accepted and refused as before (`crates/cli/tests/limits.rs` pins its message).
pub const MAX_SCALE_WORK: u64 = 2_000_000;
/// At most this many characters in a scenario's or a sweep's `name` (it names the output
/// folder, whose staging folder `.<name>.staging-<pid>-<n>` must stay within the file systems'
/// 255-byte limit on a file name): a longer name was refused only after the simulation, when
/// the outputs were written ("File name too long", issue 27 item 9).
pub const MAX_NAME_CHARS: usize = 200;
/// At most this many replications per sweep cell (the file's `seeds` and `--seeds`).
pub const MAX_SEEDS: u32 = 100_000;
/// Above this many expected records produced, `warnings` says the run may be slow.
pub const WARN_RECORDS: f64 = 1e9;

/// Reads at most [`MAX_INPUT_BYTES`] of the file at `path`: `Err` names the limit when the
/// file is larger (or endless, like `/dev/zero`), or the reading error.
pub fn read_capped(path: &std::path::Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read the file: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the file: {e}"))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(format!(
            "the file is larger than {MAX_INPUT_BYTES} bytes ({} MiB), the most an input \
             file may hold",
            MAX_INPUT_BYTES / (1024 * 1024)
        ));
    }
    Ok(bytes)
}
