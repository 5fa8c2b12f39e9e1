//! `run --trace [--trace-window FROM..TO] [--trace-members A,B] [--trace-heartbeats]`: each
//! protocol run also writes `trace-<protocol>.json` (report::perfetto) into the run's staging
//! folder while it runs; one line per trace on stderr (printed by `run`, in protocol order)
//! says its events and size.

use lab::{RunError, Stepping};
use metrics::RunReport;
use report::perfetto::{TraceOptions, TraceWriter};
use scenario::{ProtocolSpec, Scenario};
use sim_core::SimTime;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The options of `--trace` and its companions (None without `--trace`).
pub fn options(
    trace: bool,
    window: Option<&str>,
    members: &[String],
    heartbeats: bool,
    scenario: &Scenario,
) -> Result<Option<TraceOptions>, String> {
    if !trace {
        return Ok(None);
    }
    let flags = ("--trace-window", "--trace-members");
    let (window, members) = window_and_members(flags, window, members, scenario.duration)?;
    Ok(Some(TraceOptions { window, members, heartbeats }))
}

/// A trace's window (`FROM..TO`, starting before `duration`, the run's end) and member list
/// (`c0,c3`), each `None` when not given; `flags` name the options in messages (`run`'s
/// `--trace-window`, `trace`'s `--window`).
pub fn window_and_members(
    flags: (&str, &str),
    window: Option<&str>,
    members: &[String],
    duration: SimTime,
) -> Result<TraceFilter, String> {
    let (window_flag, members_flag) = flags;
    let window = match window {
        None => None,
        Some(text) => {
            let (from, to) =
                TraceOptions::parse_window(text).map_err(|e| format!("{window_flag} {e}"))?;
            if from >= duration {
                return Err(format!(
                    "{window_flag} {text}: starts at or after the end of the run ({duration})"
                ));
            }
            Some((from, to))
        }
    };
    let members = if members.is_empty() {
        None
    } else {
        if let Some(empty) = members.iter().find(|m| m.trim().is_empty()) {
            return Err(format!("{members_flag}: an empty member name (`{empty}`); use c0,c3"));
        }
        Some(members.iter().map(|m| m.trim().to_string()).collect::<BTreeSet<_>>())
    };
    Ok((window, members))
}

/// A trace's window and member filter ([`TraceOptions::window`], [`TraceOptions::members`]).
pub type TraceFilter = (Option<(SimTime, SimTime)>, Option<BTreeSet<String>>);

/// `trace-<protocol>.json`: `trace-eager-range.json`, `trace-eager-range+static.json`.
pub fn trace_file_name(protocol: ProtocolSpec) -> String {
    format!("trace-{}.json", file_part(&protocol.to_string()))
}

/// `eager:range+static` as a file name's part: `eager-range+static`.
pub fn file_part(protocol: &str) -> String {
    protocol.replace(':', "-")
}

/// Runs one protocol with its trace written into `dir`: the run's result with the line to
/// print on stderr about the trace (its events and size), or (`Err`) why the trace could not
/// be written.
pub fn run_traced(
    run: (&Scenario, ProtocolSpec, u64, Stepping),
    dir: &Path,
    options: &TraceOptions,
) -> Result<Result<(RunReport, String), RunError>, String> {
    let (scenario, protocol, seed, stepping) = run;
    let path: PathBuf = dir.join(trace_file_name(protocol));
    let file = match std::fs::File::create(&path) {
        Ok(f) => std::io::BufWriter::with_capacity(1 << 20, f),
        Err(e) => return Err(io_error(&path, e)),
    };
    let label = format!("{} {protocol} seed {seed}", scenario.name);
    let name = protocol.protocol.name();
    let writer =
        TraceWriter::new(file, &label, name, options.clone()).map_err(|e| io_error(&path, e))?;
    let (report, written) =
        match lab::trace::run_protocol_traced(scenario, protocol, seed, stepping, writer) {
            Ok(done) => done,
            Err(e) => return Ok(Err(e)),
        };
    match written {
        Ok((_, stats)) => {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let line = format!(
                "trace: {}: {} events, {} bytes",
                name.unwrap_or_default(),
                stats.events,
                stats.bytes
            );
            Ok(Ok((report, line)))
        }
        Err(e) => Err(io_error(&path, e)),
    }
}

/// Why a trace cannot be written (the caller reports it, exit 2).
fn io_error(path: &Path, e: std::io::Error) -> String {
    format!("writing {}: {e}", path.display())
}
