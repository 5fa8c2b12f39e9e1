//! `rebalance-sim trace RUN_DIR`: the trace of a protocol run built from the files the run
//! wrote, the way `plot` redraws its charts: `summary` (the protocol runs, their labels),
//! `rebalances` (the coordinator's rebalance spans), `ownership` (one span per row on each
//! partition's track) and `timeline` (the counters), as CSV, or as Parquet when the folder
//! holds no complete set of CSV files (`run --format parquet`).
//!
//! The same event writer as the live trace (`super::events`) writes it, and the live
//! trace's partition spans are the `ownership.csv` rows (`super::live`), so where both hold
//! a thing they show it alike: the partition spans and the rebalance spans have the same names
//! and timestamps (`crates/cli/tests/trace.rs` compares them on `sims/crash.toml`). The
//! `rebalance` arg of a partition span names the `rebalances.csv` row whose interval holds
//! the span's start; the live trace names the rebalance open then, which differs only when a
//! trigger later replaced that rebalance (the file keeps the replacing one). What the files
//! do not hold is not in this trace: member states, commits, max-poll expiries, heartbeats
//! and the coordinator's group state (and so no generation).
//!
//! Lifecycle: [`RunTables::open`] checks the folder, picks the format and reads the summary;
//! [`RunTables::write_trace`] streams one run's rows into a trace (the ownership table is never
//! held in memory); [`RunTables::write_trace_atomic`] writes it to a temporary file in the target's
//! folder and renames it into place ([`RunTables::stage_trace`] and [`StagedTrace::persist`]: the
//! two steps, for a set of traces), so an error (a malformed row late in a large file) leaves no
//! partial trace. Every row is checked: times finite and not negative, an end not before its start,
//! a partition's rows and the rebalances in time order without overlapping, the timeline's samples
//! in time order; the first that fails is an error naming the file and the line (CSV) or row
//! (Parquet).

use super::events::{EventWriter, RebalanceSpan, Rebalances, PARTITION_TID_STRIDE};
use super::tables::{for_each_row, table_path, Row};
use super::{TraceOptions, TraceStats};
use crate::csv_out::{OWNERSHIP_CSV, REBALANCES_CSV, SUMMARY_CSV, TIMELINE_CSV};
use model::Tp;
use serde::Deserialize;
use sim_core::SimTime;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use super::tables::{Format, Place};

/// Topics a trace has tracks for (a partition's track id is `topic * 1,000,000 + partition +
/// 1`, a `u32`).
const MAX_TOPICS: u32 = u32::MAX / PARTITION_TID_STRIDE - 1;

/// The tables a trace is built from, in the order they are read.
pub const TABLES: [&str; 4] = [SUMMARY_CSV, REBALANCES_CSV, OWNERSHIP_CSV, TIMELINE_CSV];

/// Why a trace cannot be built from a folder (all bad input: exit 2).
#[derive(Debug)]
pub enum FileTraceError {
    /// The path is not a folder.
    NotAFolder {
        /// The path given.
        dir: PathBuf,
    },
    /// Tables are missing, in both formats.
    Missing {
        /// The folder.
        dir: PathBuf,
        /// The missing CSV files.
        missing: Vec<&'static str>,
    },
    /// A file, a header or a row that cannot be read or breaks a rule of the format.
    Malformed {
        /// The file.
        path: PathBuf,
        /// The line or row (`None`: the file as a whole).
        place: Option<Place>,
        /// What is wrong.
        what: String,
    },
    /// Reading or writing a file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: io::Error,
    },
    /// Writing the trace failed (the caller knows where it writes).
    Write(io::Error),
}

impl fmt::Display for FileTraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileTraceError::NotAFolder { dir } => write!(
                f,
                "{}: not a folder; expected the output folder of `rebalance-sim run`",
                dir.display()
            ),
            FileTraceError::Missing { dir, missing } => write!(
                f,
                "{}: missing {} (as CSV, and no complete set of Parquet tables either); a \
                 trace is built from {}, which `rebalance-sim run` writes",
                dir.display(),
                missing.join(", "),
                TABLES.join(", ")
            ),
            FileTraceError::Malformed { path, place: Some(place), what } => {
                write!(f, "{} {place}: {what}", path.display())
            }
            FileTraceError::Malformed { path, place: None, what } => {
                write!(f, "{}: {what}", path.display())
            }
            FileTraceError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            FileTraceError::Write(error) => write!(f, "writing the trace: {error}"),
        }
    }
}

impl std::error::Error for FileTraceError {}

/// One protocol run of a folder: its `summary.csv` row's labels.
#[derive(Clone, Debug, PartialEq)]
pub struct FolderRun {
    /// The scenario's name.
    pub scenario: String,
    /// Protocol (CSV name: `eager`).
    pub protocol: String,
    /// Assignor (CSV name: `range`).
    pub assignor: String,
    /// Static membership.
    pub static_membership: bool,
    /// The run's seed.
    pub seed: u64,
    /// The run's length (s).
    pub duration_s: f64,
}

impl FolderRun {
    /// `protocol:assignor[+static]`, as `--protocol` spells it (`eager:range+static`).
    pub fn protocol_text(&self) -> String {
        let suffix = if self.static_membership { "+static" } else { "" };
        format!("{}:{}{suffix}", self.protocol, self.assignor)
    }

    /// The trace's title, as `run --trace` labels the live trace.
    pub fn label(&self) -> String {
        format!("{} {} seed {}", self.scenario, self.protocol_text(), self.seed)
    }

    fn is(&self, key: &Key<'_>) -> bool {
        (self.protocol.as_str(), self.assignor.as_str(), self.static_membership)
            == (key.protocol, key.assignor, key.static_membership)
    }
}

/// The columns that name a row's protocol run (every table has them).
#[derive(Deserialize)]
struct Key<'a> {
    protocol: &'a str,
    assignor: &'a str,
    static_membership: bool,
}

#[derive(Deserialize)]
struct RebalanceIn<'a> {
    index: u64,
    trigger: &'a str,
    start_s: f64,
    end_s: f64,
    rounds: u32,
    members: u32,
}

#[derive(Deserialize)]
struct OwnershipIn<'a> {
    topic: &'a str,
    partition: u32,
    start_s: f64,
    end_s: f64,
    owner: &'a str,
    state: &'a str,
}

#[derive(Deserialize)]
struct TimelineIn {
    t_s: f64,
    lag: u64,
    down_partitions: u32,
    members: u32,
}

/// A run folder's tables: where they are and the protocol runs they hold.
#[derive(Clone, Debug)]
pub struct RunTables {
    dir: PathBuf,
    format: Format,
    runs: Vec<FolderRun>,
}

impl RunTables {
    /// Checks that `dir` holds the tables (CSV, else Parquet) and reads its protocol runs.
    pub fn open(dir: &Path) -> Result<RunTables, FileTraceError> {
        if !dir.is_dir() {
            return Err(FileTraceError::NotAFolder { dir: dir.to_path_buf() });
        }
        let missing = |format| -> Vec<&'static str> {
            TABLES.into_iter().filter(|name| !table_path(dir, name, format).is_file()).collect()
        };
        let format = match (missing(Format::Csv), missing(Format::Parquet)) {
            (csv, _) if csv.is_empty() => Format::Csv,
            (_, parquet) if parquet.is_empty() => Format::Parquet,
            (csv, _) => {
                return Err(FileTraceError::Missing { dir: dir.to_path_buf(), missing: csv })
            }
        };
        let path = table_path(dir, SUMMARY_CSV, format);
        let mut runs = Vec::new();
        for_each_row(&path, format, &mut |row| {
            let run = read_run(row)?;
            if !run.duration_s.is_finite() || run.duration_s < 0.0 {
                return Err(row.malformed(format!("duration_s = {} is no length", run.duration_s)));
            }
            runs.push(run);
            Ok(())
        })?;
        if runs.is_empty() {
            return Err(FileTraceError::Malformed {
                path,
                place: None,
                what: "no rows: the folder holds no protocol run to trace".into(),
            });
        }
        Ok(RunTables { dir: dir.to_path_buf(), format, runs })
    }

    /// The protocol runs, in `summary.csv` order.
    pub fn runs(&self) -> &[FolderRun] {
        &self.runs
    }

    /// The format the tables are read in.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The files a trace of this folder is built from, for the trace's `source`.
    fn source(&self) -> String {
        let names = [REBALANCES_CSV, OWNERSHIP_CSV, TIMELINE_CSV];
        let files: Vec<String> = names
            .iter()
            .map(|name| table_path(Path::new(""), name, self.format).display().to_string())
            .collect();
        format!("{} (rebalance-sim trace)", files.join(", "))
    }

    /// Writes the trace of `run` to `out` (see the module doc): the output and what it holds.
    pub fn write_trace<W: Write>(
        &self,
        run: &FolderRun,
        options: TraceOptions,
        out: W,
    ) -> Result<(W, TraceStats), FileTraceError> {
        let source = self.source();
        let mut events = EventWriter::new(out, &run.label(), Some(&source), options)
            .map_err(FileTraceError::Write)?;
        let rebalances = self.rebalances(run, &mut events)?;
        self.partitions(run, &rebalances, &mut events)?;
        self.counters(run, &mut events)?;
        events.finish().map_err(FileTraceError::Write)
    }

    /// [`RunTables::write_trace`] into the file `path`, atomically: a temporary file in its
    /// folder (created if need be), synced, renamed into place; nothing is left on an error.
    pub fn write_trace_atomic(
        &self,
        run: &FolderRun,
        options: TraceOptions,
        path: &Path,
    ) -> Result<TraceStats, FileTraceError> {
        self.stage_trace(run, options, path)?.persist()
    }

    /// The first half of [`RunTables::write_trace_atomic`]: the trace written and synced in a
    /// temporary file beside `path`, renamed into place by [`StagedTrace::persist`] (dropped,
    /// it is removed). Several traces staged first and persisted after are a set that is
    /// written whole or not at all (but for an error of the renames themselves).
    pub fn stage_trace(
        &self,
        run: &FolderRun,
        options: TraceOptions,
        path: &Path,
    ) -> Result<StagedTrace, FileTraceError> {
        let io = |error| FileTraceError::Io { path: path.to_path_buf(), error };
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(io)?;
        let tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
        let out = BufWriter::with_capacity(1 << 20, tmp.as_file());
        let (out, stats) = self.write_trace(run, options, out).map_err(|e| match e {
            FileTraceError::Write(error) => io(error),
            other => other,
        })?;
        out.into_inner().map_err(|e| io(e.into_error()))?;
        tmp.as_file().sync_all().map_err(io)?;
        crate::csv_out::set_readable_by_all(tmp.as_file()).map_err(io)?;
        Ok(StagedTrace { tmp, path: path.to_path_buf(), stats })
    }

    /// The run's rebalances: their spans written, and kept for the partition spans' args.
    fn rebalances<W: Write>(
        &self,
        run: &FolderRun,
        events: &mut EventWriter<W>,
    ) -> Result<Rebalances, FileTraceError> {
        let mut rebalances = Rebalances::default();
        let path = table_path(&self.dir, REBALANCES_CSV, self.format);
        for_each_row(&path, self.format, &mut |row| {
            if !run.is(&row.get::<Key<'_>>()?) {
                return Ok(());
            }
            let r: RebalanceIn<'_> = row.get()?;
            let (start, end) = interval(row, r.start_s, r.end_s)?;
            if let Some(last) = rebalances.last_end().filter(|last| start < *last) {
                let last_s = last.as_secs_f64();
                let what = format!(
                    "starts at {} s, before the rebalance before it ends ({last_s} s); \
                     rebalances follow each other",
                    r.start_s
                );
                return Err(row.malformed(what));
            }
            // A rebalance open at the end of the run is written with 0 rounds.
            let done = (r.rounds > 0).then_some((r.rounds, r.members));
            let trigger: Arc<str> = Arc::from(r.trigger);
            let span = RebalanceSpan { index: r.index, trigger, start, end, done };
            events.rebalance_span(&span);
            rebalances.push(span);
            Ok(())
        })?;
        Ok(rebalances)
    }

    /// One span per ownership row of the run.
    fn partitions<W: Write>(
        &self,
        run: &FolderRun,
        rebalances: &Rebalances,
        events: &mut EventWriter<W>,
    ) -> Result<(), FileTraceError> {
        let path = table_path(&self.dir, OWNERSHIP_CSV, self.format);
        let mut ends: BTreeMap<Tp, SimTime> = BTreeMap::new();
        for_each_row(&path, self.format, &mut |row| {
            if !run.is(&row.get::<Key<'_>>()?) {
                return Ok(());
            }
            let o: OwnershipIn<'_> = row.get()?;
            let (start, end) = interval(row, o.start_s, o.end_s)?;
            if o.partition >= PARTITION_TID_STRIDE {
                let what = format!(
                    "partition {}: a trace has tracks for partitions 0 to {} of a topic",
                    o.partition,
                    PARTITION_TID_STRIDE - 1
                );
                return Err(row.malformed(what));
            }
            if o.state.is_empty() {
                return Err(row.malformed("an empty state"));
            }
            let topic = events.topic_index(o.topic);
            if topic >= MAX_TOPICS {
                return Err(row.malformed(format!("more than {MAX_TOPICS} topics")));
            }
            let tp = Tp { topic, partition: o.partition };
            let last = ends.entry(tp).or_insert(SimTime::ZERO);
            if start < *last {
                let what = format!(
                    "{}-{} starts at {} s, before its row before ends ({} s); a partition's \
                     rows follow each other",
                    o.topic,
                    o.partition,
                    o.start_s,
                    last.as_secs_f64()
                );
                return Err(row.malformed(what));
            }
            *last = end;
            let owner = (!o.owner.is_empty()).then_some(o.owner);
            events.partition_span(tp, (start, end), owner, o.state, rebalances.at(start));
            Ok(())
        })
    }

    /// The counters of the run's timeline samples.
    fn counters<W: Write>(
        &self,
        run: &FolderRun,
        events: &mut EventWriter<W>,
    ) -> Result<(), FileTraceError> {
        let path = table_path(&self.dir, TIMELINE_CSV, self.format);
        let mut last = 0.0;
        for_each_row(&path, self.format, &mut |row| {
            if !run.is(&row.get::<Key<'_>>()?) {
                return Ok(());
            }
            let t: TimelineIn = row.get()?;
            seconds(row, "t_s", t.t_s)?;
            if t.t_s < last {
                let what = format!("t_s = {} comes before the sample before it ({last})", t.t_s);
                return Err(row.malformed(what));
            }
            last = t.t_s;
            events.counters(t.t_s, t.lag, t.down_partitions, t.members);
            Ok(())
        })
    }
}

/// A trace written to a temporary file, waiting to be renamed to its path
/// ([`RunTables::stage_trace`]).
#[derive(Debug)]
pub struct StagedTrace {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
    /// What the trace holds.
    pub stats: TraceStats,
}

impl StagedTrace {
    /// Where it goes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames it into place: what it holds.
    pub fn persist(self) -> Result<TraceStats, FileTraceError> {
        let StagedTrace { tmp, path, stats } = self;
        tmp.persist(&path).map_err(|e| FileTraceError::Io { path, error: e.error })?;
        Ok(stats)
    }
}

/// A `summary.csv` row's labels.
fn read_run(row: &Row<'_>) -> Result<FolderRun, FileTraceError> {
    #[derive(Deserialize)]
    struct SummaryIn {
        scenario: String,
        protocol: String,
        assignor: String,
        static_membership: bool,
        seed: u64,
        duration_s: f64,
    }
    let s: SummaryIn = row.get()?;
    Ok(FolderRun {
        scenario: s.scenario,
        protocol: s.protocol,
        assignor: s.assignor,
        static_membership: s.static_membership,
        seed: s.seed,
        duration_s: s.duration_s,
    })
}

/// A time in seconds a trace can place (finite, at least 0), or an error naming the column.
fn seconds(row: &Row<'_>, column: &str, value: f64) -> Result<SimTime, FileTraceError> {
    if !value.is_finite() {
        return Err(row.malformed(format!("{column} = {value} is not finite")));
    }
    if value < 0.0 {
        return Err(row.malformed(format!("{column} = {value} is negative")));
    }
    Ok(SimTime::from_secs_f64(value))
}

/// `[start_s, end_s)` as times: both placeable, the end not before the start.
fn interval(row: &Row<'_>, start_s: f64, end_s: f64) -> Result<(SimTime, SimTime), FileTraceError> {
    let start = seconds(row, "start_s", start_s)?;
    let end = seconds(row, "end_s", end_s)?;
    if end < start {
        return Err(row.malformed(format!("end_s = {end_s} is before start_s = {start_s}")));
    }
    Ok((start, end))
}
