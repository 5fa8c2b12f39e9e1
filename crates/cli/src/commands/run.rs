//! `rebalance-sim run SCENARIO.toml [--seed N] [--protocol P]... [--out DIR] [--charts]
//! [--jobs N]`: runs the scenario once per protocol (the file's list, or every `--protocol`),
//! up to N protocol runs at once (commands::jobs: each run is independent, and the files, the
//! table and stderr are those of the runs one after the other, for any N; threads that no run
//! holds, as with one protocol on two cores, share out each run's catch-ups,
//! `model::simulate_on_threads`, with the same results), writes the five CSV
//! files of DESIGN section 7 (default folder `results/<scenario name>/`) and optionally the
//! charts as one atomic set (a staging folder renamed into place), and prints a side-by-side
//! table (rows = metrics, columns = protocol runs).
//!
//! Bad input (an invalid file, an unknown protocol, a `--jobs` of 0 or above 256, a run
//! estimated above the memory budget, a run that reaches the event bound) is reported on
//! stderr with exit 2 before anything is written. What `validate` warns about
//! (scenario::warnings: no member, a slow run, a batch longer than max.poll.interval.ms, a
//! group at or above 100% of its processing capacity, ...) is printed on stderr before the
//! runs, and the utilisation estimate under the table.

use super::Outcome;
use metrics::{RunReport, SummaryRow};
use scenario::{ProtocolSpec, Scenario};
use std::path::{Path, PathBuf};

/// Run a scenario once per protocol and write its CSV files.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The scenario file (TOML).
    #[arg(value_name = "SCENARIO")]
    pub scenario: PathBuf,
    /// Run seed (default: the file's `seed`).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Protocol to run, repeatable: `eager[:range|roundrobin|sticky]`,
    /// `cooperative[:cooperative-sticky]`, `consumer[:uniform|range]` (KIP-848),
    /// `tubemq-server`, `tubemq-client`, `manual`; `+static` adds static membership where
    /// the protocol has it (default: the file's `protocols`).
    #[arg(long = "protocol", value_name = "P")]
    pub protocols: Vec<String>,
    /// Output folder (default: `results/<scenario name>/`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also draw the charts (ownership timeline per protocol, lag, comparison).
    #[arg(long)]
    pub charts: bool,
    /// Queue every poll-loop step as an event (the reference stepping; slower, same results
    /// except the `events` column).
    #[arg(long)]
    pub plain: bool,
    /// Print each protocol run's wall time, events and events/s to stderr.
    #[arg(long)]
    pub timing: bool,
    /// Table formats: `csv` (default), `parquet` (`<table>.parquet`, typed columns, instead of
    /// the CSV files), or both (`csv,parquet` or `both`).
    #[arg(long, value_name = "FORMATS", default_value = "csv")]
    pub format: String,
    /// Also write each protocol run's trace for ui.perfetto.dev / chrome://tracing
    /// (`trace-<protocol>.json`, Chrome JSON trace format, virtual microseconds): member
    /// states, partition owners and down causes, rebalances, group state, commits, counters.
    #[arg(long)]
    pub trace: bool,
    /// Keep only the part of the trace in FROM..TO of virtual time (e.g. `10m..12m`, `..90s`).
    #[arg(long, value_name = "FROM..TO", requires = "trace")]
    pub trace_window: Option<String>,
    /// Keep only these members in the trace (comma list: `c0,c7`), with the partition spans
    /// they own.
    #[arg(long, value_name = "NAMES", value_delimiter = ',', requires = "trace")]
    pub trace_members: Vec<String>,
    /// Also trace every heartbeat the coordinator receives (many: one per member every
    /// `heartbeat.interval.ms`).
    #[arg(long, requires = "trace")]
    pub trace_heartbeats: bool,
    /// Protocol runs at once, 1 to 256 (default: the machine's cores, fewer if the memory
    /// budget needs it); the files, the table and stderr are the same for any value.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub budget: super::budget::BudgetArgs,
}

/// Loads, runs every protocol, writes the outputs and prints the table.
pub fn run(args: Args) -> Outcome {
    let jobs = match super::jobs::parse(args.jobs) {
        Ok(n) => n,
        Err(message) => {
            eprintln!("error: {message}");
            return Outcome::BadInput;
        }
    };
    let scenario = match scenario::load(&args.scenario) {
        Ok(s) => s,
        Err(errors) => {
            for error in &errors {
                eprintln!("error: {error}");
            }
            return Outcome::BadInput;
        }
    };
    let Some(protocols) = protocols_of(&scenario, &args.protocols) else {
        return Outcome::BadInput;
    };
    let formats = match super::formats::Formats::parse(&args.format) {
        Ok(f) => f,
        Err(message) => {
            eprintln!("error: {message}");
            return Outcome::BadInput;
        }
    };
    let trace_options = match trace_options(&args, &scenario) {
        Ok(t) => t,
        Err(message) => {
            eprintln!("error: {message}");
            return Outcome::BadInput;
        }
    };
    let chosen = Scenario { protocols: protocols.clone(), ..scenario.clone() };
    let Some(at_once) = runs_at_once(&args, &chosen, jobs) else {
        return Outcome::BadInput;
    };
    for warning in scenario::warnings(&chosen) {
        eprintln!("warning: {}: {warning}", args.scenario.display());
    }
    let seed = args.seed.unwrap_or(scenario.seed);
    let stepping = if args.plain { lab::Stepping::Plain } else { lab::Stepping::Fast };
    let out = args.out.clone().unwrap_or_else(|| Path::new("results").join(&scenario.name));
    // With --trace the traces are written during the runs, into the staging folder.
    let mut stage = None;
    if trace_options.is_some() {
        match report::run_folder::RunFolder::stage(&out) {
            Ok(s) => stage = Some(s),
            Err(e) => {
                eprintln!("error: writing {}: {e}", out.display());
                return Outcome::BadInput;
            }
        }
    }
    let trace = stage.as_ref().zip(trace_options.as_ref()).map(|(s, o)| (s.path(), o));
    // Threads no protocol run holds go to the runs' catch-ups (`model::simulate_on_threads`).
    let threads = (jobs / at_once.min(protocols.len()).max(1)).max(1);
    let one = OneRun { file: &args.scenario, scenario: &scenario, seed, stepping, threads, trace };
    let task = |index: usize| one.run(protocols[index], args.timing);
    let reports = match super::jobs::in_order(protocols.len(), at_once, &task) {
        Ok(reports) => reports,
        Err(message) => {
            eprintln!("error: {message}");
            return Outcome::BadInput;
        }
    };
    if let Some(warning) = replacing_other_output(&out, &scenario.name) {
        eprintln!("warning: {}: {warning}", out.display());
    }
    if let Err(message) = write_outputs(&out, stage, &reports, args.charts, formats) {
        eprintln!("error: {message}");
        return Outcome::BadInput;
    }
    print!("{}", table(&reports));
    if let Some(line) = utilisation_line(&scenario) {
        println!("{line}");
    }
    println!("wrote {}", out.display());
    Outcome::Ok
}

/// How many protocol runs to hold at once (budget::run_at_once), printing its note; `None`
/// after printing the refusal.
fn runs_at_once(args: &Args, chosen: &Scenario, jobs: usize) -> Option<usize> {
    let given = args.jobs.is_some();
    match super::budget::run_at_once(&args.scenario, chosen, jobs, given, args.budget) {
        Ok((at_once, note)) => {
            if let Some(note) = note {
                eprintln!("note: {note}");
            }
            Some(at_once)
        }
        Err(message) => {
            eprintln!("error: {message}");
            None
        }
    }
}

/// What every protocol run of one `run` shares.
struct OneRun<'a> {
    /// The scenario file, for messages.
    file: &'a Path,
    scenario: &'a Scenario,
    seed: u64,
    stepping: lab::Stepping,
    /// The threads of each protocol run (the share of `--jobs` no other run holds).
    threads: usize,
    /// With `--trace`: the staging folder the traces go into, and the trace options.
    trace: Option<(&'a Path, &'a report::perfetto::TraceOptions)>,
}

impl OneRun<'_> {
    /// Runs `protocol`: its report and the lines for stderr (the trace's, then `--timing`'s),
    /// or the error message (exit 2).
    fn run(&self, protocol: ProtocolSpec, timing: bool) -> super::jobs::TaskResult<RunReport> {
        #[allow(clippy::disallowed_methods)] // wall time of the run, reported, never simulated
        let started = std::time::Instant::now();
        let mut lines = Vec::new();
        let result = match self.trace {
            Some((dir, options)) => {
                let run = (self.scenario, protocol, self.seed, self.stepping);
                match super::run_trace::run_traced(run, dir, options)? {
                    Ok((report, line)) => {
                        lines.push(line);
                        Ok(report)
                    }
                    Err(e) => Err(e),
                }
            }
            None => {
                let (scenario, seed) = (self.scenario, self.seed);
                lab::run_protocol_on_threads(scenario, protocol, seed, self.stepping, self.threads)
            }
        };
        let report = result.map_err(|e| format!("{}: {e}", self.file.display()))?;
        if timing {
            lines.push(timing_line(protocol, &report, started.elapsed()));
        }
        Ok((report, lines))
    }
}

/// Writes the CSV files (and the charts) into a staging folder that then replaces `out` in
/// one rename (report::run_folder): interrupted at any point, `out` holds the old set or the
/// new one. On an error the staging folder is removed and `out` is left as it was.
fn write_outputs(
    out: &Path,
    stage: Option<report::run_folder::RunFolder>,
    reports: &[RunReport],
    charts: bool,
    formats: super::formats::Formats,
) -> Result<(), String> {
    let failed = |what: &str, e: std::io::Error| format!("{what} {}: {e}", out.display());
    let stage = match stage {
        Some(stage) => stage,
        None => report::run_folder::RunFolder::stage(out).map_err(|e| failed("writing", e))?,
    };
    if formats.csv {
        report::csv_out::write_run_outputs(stage.path(), reports)
            .map_err(|e| failed("writing", e))?;
    }
    if formats.parquet {
        report::parquet_out::write_run_parquet(stage.path(), reports)
            .map_err(|e| failed("writing", e))?;
    }
    if charts {
        report::charts::draw_run(stage.path(), reports)
            .map_err(|e| failed("drawing charts in", e))?;
    }
    stage.commit().map_err(|e| failed("writing", e))
}

/// The trace options of `--trace` (None without it); a bad window or member list is an error.
fn trace_options(
    args: &Args,
    scenario: &Scenario,
) -> Result<Option<report::perfetto::TraceOptions>, String> {
    super::run_trace::options(
        args.trace,
        args.trace_window.as_deref(),
        &args.trace_members,
        args.trace_heartbeats,
        scenario,
    )
}

/// The group's estimated load (scenario::load_timeline), printed under the table: at the
/// start and its peak over the run's changes of membership.
pub fn utilisation_line(scenario: &Scenario) -> Option<String> {
    let points = scenario::load_timeline(scenario);
    let peak = scenario::peak_utilisation(&points)?;
    let start = points.first().and_then(|p| p.utilisation);
    let start = start.map_or("no member".to_string(), |u| format!("{:.0}%", u * 100.0));
    Some(format!(
        "utilisation (estimated: records/s x mean processing time / consuming members): \
         {start} at the start, peak {:.0}%",
        peak * 100.0
    ))
}

/// A warning when `out` already holds output this scenario's runs did not write: another
/// scenario's `summary.csv` (replaced), or a folder that is no run's output (this run's files
/// are added to it; its other files are kept, report::run_folder).
fn replacing_other_output(out: &Path, scenario: &str) -> Option<String> {
    if !out.is_dir() {
        return None;
    }
    let summary = out.join(report::csv_out::SUMMARY_CSV);
    if !summary.is_file() {
        let has_files = std::fs::read_dir(out).ok()?.next().is_some();
        return has_files.then(|| {
            "exists and is not a run's output folder (no summary.csv): this run's files are \
             written into it beside its other files"
                .to_string()
        });
    }
    let rows: Vec<SummaryRow> = match report::csv_out::read_rows(&summary) {
        Ok(rows) => rows,
        Err(_) => {
            return Some(
                "holds a summary.csv this program cannot read: it is replaced by this run's"
                    .to_string(),
            )
        }
    };
    let other = rows.iter().find(|r| r.scenario != scenario)?;
    Some(format!(
        "holds the results of scenario `{}`, not `{scenario}`: they are replaced by this run's",
        other.scenario
    ))
}

/// `--timing`: one line per protocol run on stderr (the run's own wall time, while others may
/// run beside it with `--jobs`).
fn timing_line(protocol: ProtocolSpec, report: &RunReport, wall: std::time::Duration) -> String {
    let events = report.summary.as_ref().map_or(0, |s| s.events);
    let wall_s = wall.as_secs_f64();
    let per_s = if wall_s > 0.0 { events as f64 / wall_s } else { 0.0 };
    format!("timing: {protocol}: {wall_s:.3} s wall, {events} events, {per_s:.0} events/s")
}

/// The protocols to run: `--protocol` values if any (each parsed), else the file's list.
fn protocols_of(scenario: &Scenario, given: &[String]) -> Option<Vec<ProtocolSpec>> {
    if given.is_empty() {
        return Some(scenario.protocols.clone());
    }
    let mut specs = Vec::with_capacity(given.len());
    let mut ok = true;
    for text in given {
        match Scenario::parse_protocol(text) {
            Ok(mut spec) => {
                spec.static_membership |= scenario.group.static_membership;
                if specs.contains(&spec) {
                    eprintln!(
                        "error: --protocol {text}: repeats {spec}, given before; each protocol \
                         is run once"
                    );
                    ok = false;
                } else {
                    specs.push(spec);
                }
            }
            Err(e) => {
                eprintln!("error: --protocol {text}: {e}");
                ok = false;
            }
        }
    }
    ok.then_some(specs)
}

/// The rows of the printed table: label and how to read it from a summary.
type Metric = (&'static str, fn(&SummaryRow) -> String);

const METRICS: &[Metric] = &[
    ("records_produced", |s| s.records_produced.to_string()),
    ("records_processed", |s| s.records_processed.to_string()),
    ("records_reprocessed", |s| s.records_reprocessed.to_string()),
    ("records_lost", |s| s.records_lost.to_string()),
    ("final_lag", |s| s.final_lag.to_string()),
    ("downtime_partition_s", |s| format!("{:.3}", s.downtime_partition_s)),
    ("downtime_episode_ms_p50", |s| format!("{:.1}", s.downtime_episode_ms_p50)),
    ("downtime_episode_ms_p99", |s| format!("{:.1}", s.downtime_episode_ms_p99)),
    ("downtime_episode_ms_max", |s| format!("{:.1}", s.downtime_episode_ms_max)),
    ("stop_the_world_s", |s| format!("{:.3}", s.stop_the_world_s)),
    ("rebalances", |s| s.rebalances.to_string()),
    ("rebalance_ms_p50", |s| format!("{:.1}", s.rebalance_ms_p50)),
    ("rebalance_ms_max", |s| format!("{:.1}", s.rebalance_ms_max)),
    ("partitions_moved", |s| s.partitions_moved.to_string()),
    ("e2e_latency_ms_p50", |s| format!("{:.2}", s.e2e_latency_ms_p50)),
    ("e2e_latency_ms_p99", |s| format!("{:.2}", s.e2e_latency_ms_p99)),
    ("e2e_latency_ms_max", |s| format!("{:.2}", s.e2e_latency_ms_max)),
    ("events", |s| s.events.to_string()),
];

/// Rows added when a run has a measurement window (`measure_from`): the start-up's figures,
/// which the rows above leave out.
const STARTUP_METRICS: &[Metric] = &[
    ("measure_from_s", |s| format!("{:.3}", s.measure_from_s)),
    ("startup_downtime_partition_s", |s| format!("{:.3}", s.startup_downtime_partition_s)),
    ("startup_stop_the_world_s", |s| format!("{:.3}", s.startup_stop_the_world_s)),
    ("startup_rebalances", |s| s.startup_rebalances.to_string()),
];

/// A side-by-side table: one row per metric, one column per protocol run.
pub fn table(reports: &[RunReport]) -> String {
    let summaries: Vec<&SummaryRow> = reports.iter().filter_map(|r| r.summary.as_ref()).collect();
    let mut header = vec!["metric".to_string()];
    header.extend(summaries.iter().map(|s| column_label(s)));
    let mut rows = vec![header];
    let windowed = summaries.iter().any(|s| s.measure_from_s > 0.0);
    let extra = if windowed { STARTUP_METRICS } else { &[] };
    for (name, read) in METRICS.iter().chain(extra) {
        let mut row = vec![(*name).to_string()];
        row.extend(summaries.iter().map(|s| read(s)));
        rows.push(row);
    }
    let widths: Vec<usize> =
        (0..rows[0].len()).map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0)).collect();
    let mut text = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                if c == 0 {
                    format!("{cell:<w$}", w = widths[c])
                } else {
                    format!("{cell:>w$}", w = widths[c])
                }
            })
            .collect();
        text.push_str(cells.join("  ").trim_end());
        text.push('\n');
    }
    text
}

fn column_label(s: &SummaryRow) -> String {
    let suffix = if s.static_membership { "+static" } else { "" };
    format!("{}:{}{suffix}", s.protocol, s.assignor)
}
