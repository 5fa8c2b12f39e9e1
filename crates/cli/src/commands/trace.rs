//! `rebalance-sim trace RUN_DIR [--protocol P] [--window FROM..TO] [--members A,B] [--out
//! FILE]`: the Perfetto trace of a run built from the files it wrote (report::perfetto::files),
//! as `plot` redraws its charts from them. Reads `summary`, `rebalances`, `ownership` and
//! `timeline` (CSV, or Parquet when the run wrote only Parquet) and writes, per protocol run
//! (or the one `--protocol` names), `trace-<protocol>.files.json` into RUN_DIR (beside `run
//! --trace`'s `trace-<protocol>.json`, which it leaves alone) or the file `--out` names (one
//! run), printing one line per trace. Bad input (not a folder, a missing table, a malformed
//! row, an unknown or absent protocol, a bad window) is an error naming the file and line,
//! exit 2; the traces are staged in temporary files and renamed into place only once all are
//! written, so an error leaves no trace behind, whole or partial.

use super::run_trace::{file_part, window_and_members};
use super::Outcome;
use report::perfetto::files::{FolderRun, RunTables, StagedTrace};
use report::perfetto::TraceOptions;
use report::perfetto::TraceStats;
use scenario::Scenario;
use sim_core::SimTime;
use std::path::{Path, PathBuf};

/// The arguments of `trace` (its help text is the `Trace` command's doc in main.rs).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Output folder of `rebalance-sim run` (summary, rebalances, ownership and timeline as
    /// .csv, or as .parquet).
    #[arg(value_name = "RUN_DIR")]
    pub dir: PathBuf,
    /// The protocol run to trace, as `run --protocol` names it (`eager:range`, `cooperative`,
    /// `eager:range+static`, ...); default: every protocol run in RUN_DIR.
    #[arg(long, value_name = "P")]
    pub protocol: Option<String>,
    /// Keep only the part of the trace in FROM..TO of virtual time (e.g. `10m..12m`, `..90s`).
    #[arg(long, value_name = "FROM..TO")]
    pub window: Option<String>,
    /// Keep only the partition spans these members own (comma list: `c0,c7`).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub members: Vec<String>,
    /// Where to write the trace of the one protocol run traced (default:
    /// `RUN_DIR/trace-<protocol>.files.json` for each).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Reads the folder, writes the traces and lists them.
pub fn run(args: Args) -> Outcome {
    match traces(&args) {
        Ok(written) => {
            for (path, stats) in written {
                println!(
                    "wrote {}: {} events, {} bytes",
                    path.display(),
                    stats.events,
                    stats.bytes
                );
            }
            Outcome::Ok
        }
        Err(message) => {
            eprintln!("error: {message}");
            Outcome::BadInput
        }
    }
}

/// Writes every trace asked for (staged first, renamed once all are written).
fn traces(args: &Args) -> Result<Vec<(PathBuf, TraceStats)>, String> {
    let tables = RunTables::open(&args.dir).map_err(|e| e.to_string())?;
    let runs = selected(&tables, &args.dir, args.protocol.as_deref())?;
    if let (Some(out), [_, _, ..]) = (&args.out, runs.as_slice()) {
        return Err(format!(
            "--out {}: names one file, and {} holds {} protocol runs ({}); choose one with \
             --protocol, or leave --out out to write them all into the folder",
            out.display(),
            args.dir.display(),
            runs.len(),
            names(&runs)
        ));
    }
    let mut jobs = Vec::with_capacity(runs.len());
    for run in runs {
        let duration = SimTime::from_secs_f64(run.duration_s);
        let flags = ("--window", "--members");
        let (window, members) =
            window_and_members(flags, args.window.as_deref(), &args.members, duration)?;
        let options = TraceOptions { window, members, heartbeats: false };
        let path = match &args.out {
            Some(out) => out.clone(),
            None => args.dir.join(files_trace_name(run)),
        };
        jobs.push((run, options, path));
    }
    let mut staged: Vec<StagedTrace> = Vec::with_capacity(jobs.len());
    for (run, options, path) in jobs {
        staged.push(tables.stage_trace(run, options, &path).map_err(|e| e.to_string())?);
    }
    let mut written = Vec::with_capacity(staged.len());
    for trace in staged {
        let path = trace.path().to_path_buf();
        written.push((path, trace.persist().map_err(|e| e.to_string())?));
    }
    Ok(written)
}

/// The runs to trace: the one `protocol` names, or all.
fn selected<'t>(
    tables: &'t RunTables,
    dir: &Path,
    protocol: Option<&str>,
) -> Result<Vec<&'t FolderRun>, String> {
    let all: Vec<&FolderRun> = tables.runs().iter().collect();
    let Some(text) = protocol else { return Ok(all) };
    let spec = Scenario::parse_protocol(text).map_err(|e| format!("--protocol {e}"))?;
    let key = (spec.protocol.name(), spec.assignor.name(), spec.static_membership);
    let chosen: Vec<&FolderRun> = all
        .iter()
        .copied()
        .filter(|r| (r.protocol.as_str(), r.assignor.as_str(), r.static_membership) == key)
        .collect();
    if chosen.is_empty() {
        return Err(format!(
            "--protocol {text}: {} holds no run of {spec}; it holds {}",
            dir.display(),
            names(&all)
        ));
    }
    Ok(chosen)
}

/// `eager:range, cooperative:cooperative-sticky`.
fn names(runs: &[&FolderRun]) -> String {
    runs.iter().map(|r| r.protocol_text()).collect::<Vec<_>>().join(", ")
}

/// `trace-<protocol>.files.json`: `trace-eager-range.files.json` (not the name of `run
/// --trace`'s richer trace, which it would replace).
pub fn files_trace_name(run: &FolderRun) -> String {
    format!("trace-{}.files.json", file_part(&run.protocol_text()))
}
