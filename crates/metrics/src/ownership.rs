//! The ownership timeline of one protocol run (`ownership.csv`), kept compact: a long run has
//! tens of millions of intervals, so each is a packed [`OwnershipInterval`] (24 bytes: times in
//! seconds, an interned owner and a state code) instead of an [`OwnershipRow`] of five strings.
//!
//! An [`OwnershipLog`] holds the run's labels, the topic, owner and state names once, and the
//! intervals as segments (consecutive rows of one partition, in row order). It yields the rows
//! on the fly, borrowed ([`OwnershipLog::iter`], no allocation) or owned
//! ([`OwnershipLog::rows`]), and can be built back from rows ([`OwnershipLog::from_rows`],
//! [`OwnershipLogBuilder`]) losslessly: `from_rows(rows)` yields exactly `rows` again.
//!
//! A long run's log lives on disk: the collector spills its intervals to a temporary file
//! (`timeline.rs`), and such a log reads them back, partition by partition, each time its
//! segments are walked (one partition's rows in memory at a time; a failure to read the file
//! back is a panic: the file was written by this process and is held open, unnamed).

use crate::rows::{Columns, OwnershipRow};
use crate::timeline::{ExactRow, MergeSource};
use model::PartState;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// The owner code of an interval with no owner (the empty `owner` column).
pub(crate) const NO_OWNER: u32 = u32::MAX;

/// The state names with a fixed code (code `i` is `KNOWN_STATES[i]`): `idle` and the
/// [`PartState`] names. Other names (a hand-edited CSV) get codes from `KNOWN_STATES.len()` on.
pub const KNOWN_STATES: [&str; 8] = [
    "consuming",
    "idle",
    "unassigned",
    "revoked",
    "stop-the-world",
    "owner-dead",
    "owner-paused",
    "owner-disconnected",
];

/// The state code of `consuming`.
pub(crate) const CONSUMING: u8 = 0;

/// The state code of `idle` (a partition nobody may consume with nothing waiting).
pub(crate) const IDLE: u8 = 1;

/// The state code of a [`PartState`] (its `ownership.csv` name is `KNOWN_STATES[code]`).
pub(crate) fn state_code(state: PartState) -> u8 {
    match state {
        PartState::Consuming => CONSUMING,
        PartState::Unassigned => 2,
        PartState::Revoked => 3,
        PartState::StopTheWorld => 4,
        PartState::OwnerDead => 5,
        PartState::OwnerPaused => 6,
        PartState::OwnerDisconnected => 7,
    }
}

/// One interval of a partition's timeline, packed: 24 bytes. Times are kept as the seconds the
/// CSV writes (so rows read back from a file round-trip exactly).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OwnershipInterval {
    /// Interval start (s).
    pub(crate) start_s: f64,
    /// Interval end (s).
    pub(crate) end_s: f64,
    /// Index into the log's owner names, or [`NO_OWNER`].
    pub(crate) owner: u32,
    /// State code (see `KNOWN_STATES`).
    pub(crate) state: u8,
}

impl OwnershipInterval {
    /// An interval; `owner` is an index into the log's owner names.
    pub(crate) fn new(start_s: f64, end_s: f64, owner: Option<u32>, state: u8) -> Self {
        OwnershipInterval { start_s, end_s, owner: owner.unwrap_or(NO_OWNER), state }
    }

    /// Interval start (s), the row's `start_s`.
    pub fn start_s(&self) -> f64 {
        self.start_s
    }

    /// Interval end (s), the row's `end_s`.
    pub fn end_s(&self) -> f64 {
        self.end_s
    }

    /// The row's owner as an index into [`OwnershipLog::owner_names`], `None` when unowned
    /// (the empty `owner` column).
    #[inline]
    pub fn owner_index(&self) -> Option<usize> {
        (self.owner != NO_OWNER).then_some(self.owner as usize)
    }

    /// The row's state as an index into [`OwnershipLog::state_names`].
    pub fn state_code(&self) -> u8 {
        self.state
    }
}

/// Consecutive rows of one partition.
#[derive(Clone, Debug)]
struct Segment {
    topic: u32,
    partition: u32,
    intervals: Vec<OwnershipInterval>,
}

/// One `ownership.csv` row borrowed from an [`OwnershipLog`]: the same fields (and the same CSV
/// serialisation) as [`OwnershipRow`], without allocating.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct OwnershipRowRef<'a> {
    /// Protocol name.
    pub protocol: &'a str,
    /// Assignor name.
    pub assignor: &'a str,
    /// Static membership.
    pub static_membership: bool,
    /// Topic name.
    pub topic: &'a str,
    /// Partition number.
    pub partition: u32,
    /// Interval start.
    pub start_s: f64,
    /// Interval end.
    pub end_s: f64,
    /// Member name, or empty when unowned.
    pub owner: &'a str,
    /// State name (see [`OwnershipRow::state`]).
    pub state: &'a str,
}

impl OwnershipRowRef<'_> {
    /// The owned row.
    pub fn to_row(&self) -> OwnershipRow {
        OwnershipRow {
            protocol: self.protocol.to_string(),
            assignor: self.assignor.to_string(),
            static_membership: self.static_membership,
            topic: self.topic.to_string(),
            partition: self.partition,
            start_s: self.start_s,
            end_s: self.end_s,
            owner: self.owner.to_string(),
            state: self.state.to_string(),
        }
    }
}

impl Columns for OwnershipRowRef<'_> {
    const COLUMNS: &'static [&'static str] = OwnershipRow::COLUMNS;
}

/// Why rows cannot go into one [`OwnershipLog`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnershipLogError {
    /// The rows belong to more than one protocol run (a log holds one run's rows).
    MixedRuns {
        /// The labels of the first row (`protocol:assignor`, `+static` if static).
        first: String,
        /// The labels of the first row that differs.
        other: String,
    },
    /// More distinct names of one kind than the compact codes can hold.
    TooMany {
        /// `state names`, `owner names` or `topic names`.
        what: &'static str,
        /// The largest number of distinct names.
        limit: usize,
    },
}

impl fmt::Display for OwnershipLogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OwnershipLogError::MixedRuns { first, other } => {
                write!(f, "ownership rows of two protocol runs in one log: {first} and {other}")
            }
            OwnershipLogError::TooMany { what, limit } => {
                write!(f, "ownership rows with more than {limit} distinct {what}")
            }
        }
    }
}

impl std::error::Error for OwnershipLogError {}

/// The `ownership.csv` rows of one protocol run, compact (see the module documentation).
/// Two logs are equal when they yield the same rows.
#[derive(Clone, Default)]
pub struct OwnershipLog {
    protocol: String,
    assignor: String,
    static_membership: bool,
    topics: Vec<String>,
    owners: Vec<String>,
    /// Names of the state codes from `KNOWN_STATES.len()` on.
    other_states: Vec<String>,
    segments: Vec<Segment>,
    /// The rows on disk, read back on each walk (then `segments` is empty).
    spilled: Option<Arc<MergeSource>>,
    len: usize,
}

/// The consecutive rows of one partition in an [`OwnershipLog`] (the collector's log has one
/// segment per partition): borrowed from a log in memory, owned when read back from a spill.
#[derive(Clone)]
pub struct OwnershipSegment<'a> {
    log: &'a OwnershipLog,
    topic: u32,
    partition: u32,
    intervals: Cow<'a, [OwnershipInterval]>,
}

impl<'a> OwnershipSegment<'a> {
    /// Topic name.
    pub fn topic(&self) -> &'a str {
        &self.log.topics[self.topic as usize]
    }

    /// Partition number.
    pub fn partition(&self) -> u32 {
        self.partition
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.intervals.len()
    }

    /// Whether the segment has no rows.
    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty()
    }

    /// The rows' intervals, compact (times, owner index, state code), in order: the rows
    /// without building them ([`OwnershipLog::owner_names`] and [`OwnershipLog::state_names`]
    /// name the codes).
    pub fn intervals(&self) -> &[OwnershipInterval] {
        &self.intervals
    }

    /// Row `i`.
    fn row(&self, i: usize) -> OwnershipRowRef<'a> {
        self.log.row_ref(self.topic(), self.partition, &self.intervals[i])
    }

    /// The rows, in order.
    pub fn iter(&self) -> impl Iterator<Item = OwnershipRowRef<'a>> + '_ {
        (0..self.len()).map(|i| self.row(i))
    }

    /// The rows, in order, the segment moved in.
    pub fn into_rows(self) -> impl Iterator<Item = OwnershipRowRef<'a>> {
        (0..self.len()).map(move |i| self.row(i))
    }
}

/// The segments of a spilled log, read back partition by partition.
struct SpilledSegments<'a> {
    log: &'a OwnershipLog,
    merge: crate::timeline::Merge<'a>,
    rows: Vec<ExactRow>,
}

impl<'a> Iterator for SpilledSegments<'a> {
    type Item = OwnershipSegment<'a>;

    fn next(&mut self) -> Option<OwnershipSegment<'a>> {
        loop {
            let tp = self.merge.next_partition(&mut self.rows).unwrap_or_else(|e| {
                panic!("reading back the ownership intervals spilled to a temporary file: {e}")
            })?;
            if self.rows.is_empty() {
                continue;
            }
            let intervals: Vec<OwnershipInterval> =
                self.rows.iter().map(ExactRow::interval).collect();
            return Some(OwnershipSegment {
                log: self.log,
                topic: tp.topic,
                partition: tp.partition,
                intervals: Cow::Owned(intervals),
            });
        }
    }
}

impl OwnershipLog {
    /// The log the collector hands over: `segments` are (topic index, partition, intervals)
    /// in row order, `owners` the interned owner names.
    pub(crate) fn from_collected(
        labels: (String, String, bool),
        topics: Vec<String>,
        owners: Vec<String>,
        segments: impl IntoIterator<Item = (u32, u32, Vec<OwnershipInterval>)>,
    ) -> OwnershipLog {
        let segments: Vec<Segment> = segments
            .into_iter()
            .filter(|(_, _, intervals)| !intervals.is_empty())
            .map(|(topic, partition, intervals)| Segment { topic, partition, intervals })
            .collect();
        let len = segments.iter().map(|s| s.intervals.len()).sum();
        let (protocol, assignor, static_membership) = labels;
        OwnershipLog {
            protocol,
            assignor,
            static_membership,
            topics,
            owners,
            other_states: Vec::new(),
            segments,
            spilled: None,
            len,
        }
    }

    /// The log of a run whose intervals were spilled: `source` is read back on each walk.
    pub(crate) fn from_spilled(
        labels: (String, String, bool),
        topics: Vec<String>,
        owners: Vec<String>,
        source: MergeSource,
    ) -> OwnershipLog {
        let (protocol, assignor, static_membership) = labels;
        OwnershipLog {
            protocol,
            assignor,
            static_membership,
            topics,
            owners,
            other_states: Vec::new(),
            segments: Vec::new(),
            len: source.rows(),
            spilled: Some(Arc::new(source)),
        }
    }

    /// Whether the rows are read back from a spill file (a long run's), not held in memory.
    pub fn is_spilled(&self) -> bool {
        self.spilled.is_some()
    }

    /// A log holding `rows` (of one protocol run), in their order; it yields them back exactly.
    pub fn from_rows(
        rows: impl IntoIterator<Item = OwnershipRow>,
    ) -> Result<OwnershipLog, OwnershipLogError> {
        let mut builder = OwnershipLogBuilder::default();
        for row in rows {
            builder.push(row)?;
        }
        Ok(builder.finish())
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The rows, borrowed, in order.
    pub fn iter(&self) -> impl Iterator<Item = OwnershipRowRef<'_>> + '_ {
        self.segments().flat_map(OwnershipSegment::into_rows)
    }

    /// The rows, owned, in order (each built on the fly).
    pub fn rows(&self) -> impl Iterator<Item = OwnershipRow> + '_ {
        self.iter().map(|r| r.to_row())
    }

    /// The first row.
    pub fn first(&self) -> Option<OwnershipRowRef<'_>> {
        self.iter().next()
    }

    /// The segments (consecutive rows of one partition), in row order. A spilled log reads
    /// them back from its file, one at a time.
    pub fn segments(&self) -> Box<dyn Iterator<Item = OwnershipSegment<'_>> + '_> {
        match &self.spilled {
            Some(source) => {
                Box::new(SpilledSegments { log: self, merge: source.merge(), rows: Vec::new() })
            }
            None => Box::new(self.segments.iter().map(move |segment| OwnershipSegment {
                log: self,
                topic: segment.topic,
                partition: segment.partition,
                intervals: Cow::Borrowed(&segment.intervals),
            })),
        }
    }

    /// The owner names, indexed by [`OwnershipInterval::owner_index`].
    pub fn owner_names(&self) -> &[String] {
        &self.owners
    }

    /// The state names, indexed by [`OwnershipInterval::state_code`] (every code in use has
    /// one).
    pub fn state_names(&self) -> impl Iterator<Item = &str> + '_ {
        KNOWN_STATES.iter().copied().chain(self.other_states.iter().map(String::as_str))
    }

    fn state_name(&self, code: u8) -> &str {
        match KNOWN_STATES.get(code as usize) {
            Some(name) => name,
            None => &self.other_states[code as usize - KNOWN_STATES.len()],
        }
    }

    fn row_ref<'a>(
        &'a self,
        topic: &'a str,
        partition: u32,
        i: &OwnershipInterval,
    ) -> OwnershipRowRef<'a> {
        OwnershipRowRef {
            protocol: &self.protocol,
            assignor: &self.assignor,
            static_membership: self.static_membership,
            topic,
            partition,
            start_s: i.start_s,
            end_s: i.end_s,
            owner: i.owner_index().map_or("", |o| self.owners[o].as_str()),
            state: self.state_name(i.state),
        }
    }
}

impl PartialEq for OwnershipLog {
    fn eq(&self, other: &OwnershipLog) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl fmt::Debug for OwnershipLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Builds an [`OwnershipLog`] from rows pushed one at a time (a CSV reader streams into it).
#[derive(Default)]
pub struct OwnershipLogBuilder {
    log: OwnershipLog,
    topic_codes: BTreeMap<String, u32>,
    owner_codes: BTreeMap<String, u32>,
    state_codes: BTreeMap<String, u8>,
}

impl OwnershipLogBuilder {
    /// Appends `row`; it must have the labels of the rows before it.
    pub fn push(&mut self, row: OwnershipRow) -> Result<(), OwnershipLogError> {
        let log = &mut self.log;
        if log.len == 0 {
            log.protocol = row.protocol;
            log.assignor = row.assignor;
            log.static_membership = row.static_membership;
        } else if (log.protocol.as_str(), log.assignor.as_str(), log.static_membership)
            != (row.protocol.as_str(), row.assignor.as_str(), row.static_membership)
        {
            return Err(OwnershipLogError::MixedRuns {
                first: label(&log.protocol, &log.assignor, log.static_membership),
                other: label(&row.protocol, &row.assignor, row.static_membership),
            });
        }
        let topic = intern(&mut self.topic_codes, &mut log.topics, row.topic, "topic names")?;
        let owner = if row.owner.is_empty() {
            None
        } else {
            Some(intern(&mut self.owner_codes, &mut log.owners, row.owner, "owner names")?)
        };
        let state = match KNOWN_STATES.iter().position(|s| *s == row.state) {
            Some(code) => code as u8,
            None => {
                let extra =
                    intern(&mut self.state_codes, &mut log.other_states, row.state, "state names")?;
                // `intern` keeps `extra` below `MAX_OTHER_STATES` for state names.
                (extra as usize + KNOWN_STATES.len()) as u8
            }
        };
        let interval = OwnershipInterval::new(row.start_s, row.end_s, owner, state);
        match log.segments.last_mut() {
            Some(s) if s.topic == topic && s.partition == row.partition => {
                s.intervals.push(interval)
            }
            _ => log.segments.push(Segment {
                topic,
                partition: row.partition,
                intervals: vec![interval],
            }),
        }
        log.len += 1;
        Ok(())
    }

    /// The log of the rows pushed so far.
    pub fn finish(self) -> OwnershipLog {
        self.log
    }
}

/// Distinct state names beyond the known ones that fit a `u8` code.
const MAX_OTHER_STATES: usize = 256 - KNOWN_STATES.len();

/// The code of `name` in `names`, appended at its first appearance.
fn intern<T: Copy + TryFrom<usize>>(
    codes: &mut BTreeMap<String, T>,
    names: &mut Vec<String>,
    name: String,
    what: &'static str,
) -> Result<T, OwnershipLogError> {
    if let Some(code) = codes.get(&name) {
        return Ok(*code);
    }
    // u32 codes keep u32::MAX free for "no owner"; state codes share the u8 with the known ones.
    let limit = if what == "state names" { MAX_OTHER_STATES } else { u32::MAX as usize };
    let code = T::try_from(names.len())
        .ok()
        .filter(|_| names.len() < limit)
        .ok_or(OwnershipLogError::TooMany { what, limit })?;
    names.push(name.clone());
    codes.insert(name, code);
    Ok(code)
}

fn label(protocol: &str, assignor: &str, static_membership: bool) -> String {
    let suffix = if static_membership { "+static" } else { "" };
    format!("{protocol}:{assignor}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(partition: u32, start_s: f64, end_s: f64, owner: &str, state: &str) -> OwnershipRow {
        OwnershipRow {
            protocol: "eager".into(),
            assignor: "range".into(),
            static_membership: false,
            topic: if partition < 10 { "a".into() } else { "b".into() },
            partition,
            start_s,
            end_s,
            owner: owner.into(),
            state: state.into(),
        }
    }

    #[test]
    fn an_interval_is_24_bytes() {
        assert_eq!(std::mem::size_of::<OwnershipInterval>(), 24);
    }

    #[test]
    fn known_state_codes_are_the_part_state_names() {
        let all = [
            PartState::Consuming,
            PartState::Unassigned,
            PartState::Revoked,
            PartState::StopTheWorld,
            PartState::OwnerDead,
            PartState::OwnerPaused,
            PartState::OwnerDisconnected,
        ];
        for state in all {
            assert_eq!(KNOWN_STATES[state_code(state) as usize], state.name());
        }
        assert_eq!(KNOWN_STATES[IDLE as usize], "idle");
    }

    #[test]
    fn rows_round_trip_in_any_order_with_unknown_states() {
        // Partition 1 appears twice (two segments), an unknown state, odd times (NaN aside).
        let rows = vec![
            row(1, 0.0, 0.123_456_789_012_3, "c10", "consuming"),
            row(0, 0.0, 2.5, "", "stop-the-world"),
            row(1, 0.123_456_789_012_3, 9.0, "", "frozen-by-hand"),
            row(12, -1.0, f64::INFINITY, "c2", "idle"),
            row(1, 9.0, 10.0, "c10", "frozen-by-hand"),
        ];
        let log = OwnershipLog::from_rows(rows.clone()).unwrap();
        assert_eq!((log.len(), log.is_empty()), (5, false));
        assert_eq!(log.rows().collect::<Vec<_>>(), rows);
        assert_eq!(log.segments().count(), 5);
        assert_eq!(log.first().unwrap().owner, "c10");
        let states: Vec<&str> = log.state_names().collect();
        let codes: Vec<u8> =
            log.segments().flat_map(|s| s.intervals().to_vec()).map(|i| i.state_code()).collect();
        let names: Vec<&str> = codes.iter().map(|c| states[usize::from(*c)]).collect();
        assert_eq!(names, rows.iter().map(|r| r.state.as_str()).collect::<Vec<_>>());
        // Equality is row equality: a log built from the same rows twice is equal.
        assert_eq!(log, OwnershipLog::from_rows(rows.clone()).unwrap());
        let shorter = OwnershipLog::from_rows(rows[..4].to_vec()).unwrap();
        assert_ne!(log, shorter);
        assert_eq!(OwnershipLog::from_rows(Vec::new()).unwrap(), OwnershipLog::default());
    }

    #[test]
    fn mixed_runs_and_too_many_states_are_errors() {
        let mut other = row(0, 0.0, 1.0, "c0", "consuming");
        other.static_membership = true;
        let err = OwnershipLog::from_rows(vec![row(0, 0.0, 1.0, "c0", "idle"), other]);
        assert_eq!(
            err.unwrap_err().to_string(),
            "ownership rows of two protocol runs in one log: eager:range and eager:range+static"
        );
        let many = (0..=MAX_OTHER_STATES).map(|i| row(0, 0.0, 1.0, "c0", &format!("s{i}")));
        assert_eq!(
            OwnershipLog::from_rows(many).unwrap_err(),
            OwnershipLogError::TooMany { what: "state names", limit: 248 }
        );
        let just_fit = (0..MAX_OTHER_STATES).map(|i| row(0, 0.0, 1.0, "c0", &format!("s{i}")));
        let log = OwnershipLog::from_rows(just_fit).unwrap();
        assert_eq!(log.iter().last().unwrap().state, "s247");
    }

    #[test]
    fn collected_segments_yield_rows_with_interned_names() {
        let log = OwnershipLog::from_collected(
            ("cooperative".into(), "cooperative-sticky".into(), true),
            vec!["a".into(), "b".into()],
            vec!["c1".into(), "c0".into()],
            vec![
                (0, 0, vec![OwnershipInterval::new(0.0, 1.5, Some(1), 0)]),
                (0, 1, Vec::new()),
                (
                    1,
                    3,
                    vec![
                        OwnershipInterval::new(0.0, 1.0, None, IDLE),
                        OwnershipInterval::new(1.0, 2.0, Some(0), state_code(PartState::Revoked)),
                    ],
                ),
            ],
        );
        assert_eq!(log.len(), 3);
        assert_eq!(log.segments().count(), 2); // the empty one is dropped
        let got: Vec<(&str, u32, f64, &str, &str)> =
            log.iter().map(|r| (r.topic, r.partition, r.end_s, r.owner, r.state)).collect();
        assert_eq!(
            got,
            vec![
                ("a", 0, 1.5, "c0", "consuming"),
                ("b", 3, 1.0, "", "idle"),
                ("b", 3, 2.0, "c1", "revoked"),
            ]
        );
        // The compact view names the same rows by codes.
        let states: Vec<&str> = log.state_names().collect();
        let by_codes: Vec<(f64, f64, &str, &str)> = log
            .segments()
            .flat_map(|s| s.intervals().to_vec())
            .map(|i| {
                let owner = i.owner_index().map_or("", |o| log.owner_names()[o].as_str());
                (i.start_s(), i.end_s(), owner, states[usize::from(i.state_code())])
            })
            .collect();
        let by_rows: Vec<(f64, f64, &str, &str)> =
            log.iter().map(|r| (r.start_s, r.end_s, r.owner, r.state)).collect();
        assert_eq!(by_codes, by_rows);
        let first = log.first().unwrap();
        assert_eq!(
            (first.protocol, first.assignor, first.static_membership),
            ("cooperative", "cooperative-sticky", true)
        );
        let back = OwnershipLog::from_rows(log.rows()).unwrap();
        assert_eq!(back, log);
    }
}
