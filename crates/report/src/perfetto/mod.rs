//! Perfetto traces of a protocol run in the Chrome JSON Trace Event Format (the object form,
//! `{"traceEvents": [...]}`), which ui.perfetto.dev and chrome://tracing open offline. Two
//! sources write the same kind of trace through one event writer (`events`):
//! - the run itself (`run --trace`, [`TraceWriter`] in `live`): written while the run runs,
//!   from a [`model::Observer`] and a [`model::Probe`], streamed to the file (memory holds one
//!   open span per track, never the run's records);
//! - the files a run wrote (`trace RUN_DIR`, [`files`]): `ownership`, `rebalances`,
//!   `timeline` and `summary` (CSV, or Parquet when the run wrote only Parquet). They hold no
//!   member states, commits, heartbeats or group states, so that trace has none.
//!
//! Tracks (`pid`/`tid`, named by `M` metadata events, sorted by `*_sort_index`):
//! - pid 1 `coordinator`: tid 1 `rebalances` (one span per logical rebalance, a row of
//!   `rebalances.csv`: index, trigger, rounds, members), tid 2 `group state` (live only:
//!   Empty / PreparingRebalance / CompletingRebalance / Stable spans with their generation,
//!   read by the probe after every event: a generation's round is its span), and the counter
//!   tracks `lag`, `down partitions`, `members` (the `timeline.csv` samples).
//! - pid 2 `partitions`: one thread per partition (`topic-N`): its `ownership.csv` rows as
//!   spans, named by the owner while consuming, else by the state (`idle`: nothing waits;
//!   `revoked`, `unassigned`, `stop-the-world`, `owner-dead`, `owner-paused`,
//!   `owner-disconnected`: the cause of the down interval), with the owner and the rebalance
//!   the span began in (index and trigger) in `args`.
//! - pid 10 + slot (live only): one process per member: tid 1 `state` (the model's
//!   [`model::MemberState`]s: joining, syncing, consuming, unjoined, closing, stalled,
//!   disconnected, paused, dead, closed; `running` for protocols without a group; the
//!   incarnation in `args`), tid 2 `commits` (instants: `commit`, `commit-refused`,
//!   `max-poll-expired`), tid 3 `heartbeats` (instants, only with
//!   [`TraceOptions::heartbeats`]: one per heartbeat the coordinator receives).
//!
//! Spans are complete (`X`) events, written when they end, so each track's events are in
//! `ts` order and nothing is left open; zero-length spans are left out. Timestamps and
//! durations are virtual microseconds written exactly: the integer nanoseconds divided by
//! 1,000 as a decimal with up to three fractional digits (no rounding; a double holds every
//! such value of a run of up to 104 days exactly to the nanosecond). The files' times are
//! seconds as `f64`, each the exact conversion of the run's nanoseconds, which converting
//! back recovers for runs of up to 26 days: both sources write the same timestamps.
//!
//! Bounding the size: [`TraceOptions::window`] keeps what overlaps `[from, to)` (spans cut at
//! its edges) and [`TraceOptions::members`] keeps the processes of the named members and the
//! partition spans they own (ownerless spans are dropped under a member filter).
//!
//! [`check`] states the format's rules as a function, for the tests of both sources.

pub mod check;
mod event_text;
mod events;
pub mod files;
mod live;
mod tables;

pub use live::{Tee, TraceObserver, TraceProbe, TraceWriter};
use sim_core::SimTime;
use std::collections::BTreeSet;

/// What a trace keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceOptions {
    /// Keep only what overlaps `[from, to)` (spans cut at the edges); `None`: the whole run.
    pub window: Option<(SimTime, SimTime)>,
    /// Keep only these members' processes and the partition spans they own; `None`: all.
    pub members: Option<BTreeSet<String>>,
    /// Also write an instant per heartbeat the coordinator receives (many).
    pub heartbeats: bool,
}

impl TraceOptions {
    /// Parses `--trace-window FROM..TO` (human durations, `10m..12m`; either side may be
    /// empty: from the start, to the end).
    pub fn parse_window(text: &str) -> Result<(SimTime, SimTime), String> {
        let (from, to) = text
            .split_once("..")
            .ok_or_else(|| format!("`{text}`: expected FROM..TO, e.g. 10m..12m"))?;
        let at = |part: &str, default: SimTime| -> Result<SimTime, String> {
            let part = part.trim();
            if part.is_empty() {
                return Ok(default);
            }
            let d = humantime_like(part).ok_or_else(|| {
                format!("`{part}`: not a duration (use e.g. 90s, 10m, 1h, 250ms)")
            })?;
            Ok(d)
        };
        let (from, to) = (at(from, SimTime::ZERO)?, at(to, SimTime::MAX)?);
        if from >= to {
            return Err(format!("`{text}`: the window's start must be before its end"));
        }
        Ok((from, to))
    }
}

/// A duration such as `10m`, `1h30m`, `250ms`, `2.5s` (the scenario files' durations).
fn humantime_like(text: &str) -> Option<SimTime> {
    const UNITS: [(&str, f64); 6] =
        [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9)];
    let mut nanos = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.').count();
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        // Longest unit first: `ms` before `m`, `ns`/`us` before `s`.
        let (unit, scale) =
            UNITS.iter().filter(|(u, _)| rest.starts_with(u)).max_by_key(|(u, _)| u.len())?;
        nanos += value * scale;
        rest = &rest[unit.len()..];
    }
    (nanos.is_finite() && nanos >= 0.0).then(|| SimTime::from_nanos_f64(nanos.round()))
}

/// What a finished trace holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// Trace events written (metadata included).
    pub events: u64,
    /// Bytes written.
    pub bytes: u64,
}
