//! The simulator's work behind the Python functions, without any Python type: load a scenario
//! (a file or TOML text), run it once per protocol and write its five CSV files with the CLI's
//! own writer; validate a scenario; run a sweep. Every message is the text the CLI prints for
//! the same input (`crates/cli/src/commands/{run,validate,sweep}.rs`), line for line.
//!
//! The CSV bytes come from `report::csv_out::write_run_outputs` (what `rebalance-sim run`
//! writes into its staging folder) into a temporary folder, read back whole: the same bytes as
//! the binary's files for the same scenario, seed and protocols.

use lab::sweep::{model_run, run_sweep, LabError, SweepOptions, SweepPlan};
use lab::sweep_manifest::{git_commit, MANIFEST_JSON};
use lab::sweep_output::{AGGREGATE_CSV, RUNS_CSV};
use metrics::RunReport;
use report::csv_out::{OWNERSHIP_CSV, PARTITIONS_CSV, REBALANCES_CSV, SUMMARY_CSV, TIMELINE_CSV};
use scenario::{ProtocolSpec, Scenario, ScenarioError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The name a scenario given as TOML text has in messages (its `name` defaults to it too).
pub const TEXT_SOURCE_NAME: &str = "<string>";

/// The most worker threads a sweep takes, as the CLI's `--jobs` (`commands/jobs.rs`).
const MAX_JOBS: usize = 256;

/// The files of one `run`, in the order the CLI writes them.
pub const RUN_FILES: [&str; 5] =
    [SUMMARY_CSV, PARTITIONS_CSV, REBALANCES_CSV, OWNERSHIP_CSV, TIMELINE_CSV];

/// The files of one `sweep` handed back (the cells' scenario files stay in its folder).
pub const SWEEP_FILES: [&str; 3] = [RUNS_CSV, AGGREGATE_CSV, MANIFEST_JSON];

/// Where a scenario comes from.
#[derive(Clone, Debug)]
pub enum Source {
    /// A scenario file, named in messages as given.
    File(PathBuf),
    /// TOML text, named [`TEXT_SOURCE_NAME`] in messages.
    Text(String),
}

impl Source {
    fn display_path(&self) -> PathBuf {
        match self {
            Source::File(path) => path.clone(),
            Source::Text(_) => PathBuf::from(TEXT_SOURCE_NAME),
        }
    }

    fn load(&self) -> Result<Scenario, Vec<ScenarioError>> {
        match self {
            Source::File(path) => scenario::load(path),
            Source::Text(text) => scenario::parse_str(text, Path::new(TEXT_SOURCE_NAME)),
        }
    }
}

/// Why a call produced no result: the CLI's stderr lines for the same input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Bad input (the CLI exits 2): each `error: ...` line as printed.
    BadInput(Vec<String>),
    /// Reading or writing the outputs failed.
    Io(String),
    /// A sweep's run failed (the message names the run and how to replay it).
    Run(String),
}

/// What `run` produced: the files' bytes and the CLI's `warning: ...` lines.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// `(file name, bytes)` in [`RUN_FILES`] order.
    pub files: Vec<(&'static str, Vec<u8>)>,
    /// The CLI's `warning: FILE: ...` lines (`scenario::warnings` of the protocols run).
    pub warnings: Vec<String>,
}

/// What `validate` found in a valid scenario.
#[derive(Clone, Debug)]
pub struct Validated {
    /// The scenario's name.
    pub name: String,
    /// Its protocols (`eager:range+static` form).
    pub protocols: Vec<String>,
    /// Its number of events.
    pub events: usize,
    /// The CLI's `warning: FILE: ...` lines.
    pub warnings: Vec<String>,
}

/// What `sweep` produced.
#[derive(Clone, Debug)]
pub struct SweepOutput {
    /// `(file name, bytes)` in [`SWEEP_FILES`] order.
    pub files: Vec<(&'static str, Vec<u8>)>,
    /// Runs in all.
    pub runs: usize,
    /// Of these, found finished in the out folder's journal.
    pub resumed: usize,
}

fn error_lines(errors: &[ScenarioError]) -> Failure {
    Failure::BadInput(errors.iter().map(|e| format!("error: {e}")).collect())
}

/// `rebalance-sim run SOURCE [--seed N] [--protocol P]... [--jobs N]`: the same checks, skips
/// and messages as the CLI (`commands/run.rs`, `run` and `protocols_of`), the outputs in memory.
/// Up to `jobs` protocol runs at once (default: the machine's cores, fewer if the memory budget
/// needs it, as the CLI's `budget::run_at_once`): each run is independent, so the files are the
/// same bytes for any value.
pub fn run(
    source: &Source,
    seed: Option<u64>,
    given: &[String],
    jobs: Option<usize>,
) -> Result<RunOutput, Failure> {
    let given_jobs = jobs.is_some();
    let jobs = parse_jobs(jobs)?;
    let scenario = source.load().map_err(|errors| error_lines(&errors))?;
    let protocols = protocols_of(&scenario, given)?;
    let seed = seed.unwrap_or(scenario.seed);
    let shown = source.display_path();
    let chosen = Scenario { protocols: protocols.clone(), ..scenario.clone() };
    let (at_once, note) = runs_at_once(&shown, &chosen, jobs, given_jobs)?;
    let mut warnings = warning_lines(&shown, &chosen);
    warnings.extend(note);
    let results = in_parallel(protocols.len(), at_once, &|index| {
        lab::run_protocol(&scenario, protocols[index], seed)
    });
    let mut reports = Vec::with_capacity(results.len());
    for result in results {
        match result {
            Ok(report) => reports.push(report),
            Err(e) => {
                return Err(Failure::BadInput(vec![format!("error: {}: {e}", shown.display())]))
            }
        }
    }
    Ok(RunOutput { files: run_files(&reports)?, warnings })
}

/// `--jobs` checked as the CLI checks it (`commands/jobs.rs`, `parse`).
fn parse_jobs(jobs: Option<usize>) -> Result<usize, Failure> {
    match jobs {
        Some(0) => Err(Failure::BadInput(vec!["error: --jobs: must be at least 1".into()])),
        Some(n) if n > MAX_JOBS => Err(Failure::BadInput(vec![format!(
            "error: --jobs {n} is not allowed: from 1 to {MAX_JOBS} worker threads (the \
             default is the machine's cores)"
        )])),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, usize::from)),
    }
}

/// How many protocol runs of `chosen` to hold at once, and the note the CLI prints on stderr
/// when fewer than `jobs` fit (here a line of the warnings): `scenario::estimate::runs_at_once`
/// as the CLI's `budget::run_at_once` calls it, with the budget from
/// REBALANCE_SIM_MEMORY_BUDGET_MB, else the default.
fn runs_at_once(
    shown: &Path,
    chosen: &Scenario,
    jobs: usize,
    given: bool,
) -> Result<(usize, Option<String>), Failure> {
    let bad = |message: String| Failure::BadInput(vec![format!("error: {message}")]);
    let budget_bytes = scenario::estimate::memory_budget_bytes(None).map_err(bad)?;
    let (at_once, note) = scenario::estimate::runs_at_once(chosen, budget_bytes, jobs, given)
        .map_err(|message| bad(format!("{}: {message}", shown.display())))?;
    Ok((at_once, note.map(|note| format!("note: {}: {note}", shown.display()))))
}

/// `task(0)` .. `task(count - 1)` on up to `threads` threads (the calling thread alone for
/// one), their results in index order.
fn in_parallel<T: Send>(
    count: usize,
    threads: usize,
    task: &(dyn Fn(usize) -> T + Sync),
) -> Vec<T> {
    let threads = threads.clamp(1, count.max(1));
    if threads == 1 {
        return (0..count).map(task).collect();
    }
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::with_capacity(count));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= count {
                    return;
                }
                let value = task(index);
                done.lock().expect("results lock").push((index, value));
            });
        }
    });
    let mut done = done.into_inner().expect("results lock");
    done.sort_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, value)| value).collect()
}

/// The CLI's budget check of a scenario run one protocol at a time (`commands/budget.rs`,
/// `check_run`, as `validate` makes it): the budget from REBALANCE_SIM_MEMORY_BUDGET_MB, else
/// the default.
fn check_budget(shown: &Path, scenario: &Scenario) -> Result<(), Failure> {
    let bad = |message: String| Failure::BadInput(vec![format!("error: {message}")]);
    let budget_bytes = scenario::estimate::memory_budget_bytes(None).map_err(bad)?;
    scenario::estimate::check_memory_run(scenario, budget_bytes, 1)
        .map_err(|message| bad(format!("{}: {message}", shown.display())))
}

/// `warning: FILE: ...` lines of `scenario::warnings`, as `validate` and `run` print them.
fn warning_lines(shown: &Path, scenario: &Scenario) -> Vec<String> {
    scenario::warnings(scenario)
        .iter()
        .map(|w| format!("warning: {}: {w}", shown.display()))
        .collect()
}

/// The protocols to run: every `given` text parsed (all problems reported), else the file's.
fn protocols_of(scenario: &Scenario, given: &[String]) -> Result<Vec<ProtocolSpec>, Failure> {
    if given.is_empty() {
        return Ok(scenario.protocols.clone());
    }
    let mut specs = Vec::with_capacity(given.len());
    let mut errors = Vec::new();
    for text in given {
        match Scenario::parse_protocol(text) {
            Ok(mut spec) => {
                spec.static_membership |= scenario.group.static_membership;
                if specs.contains(&spec) {
                    errors.push(format!(
                        "error: --protocol {text}: repeats {spec}, given before; each protocol \
                         is run once"
                    ));
                } else {
                    specs.push(spec);
                }
            }
            Err(e) => errors.push(format!("error: --protocol {text}: {e}")),
        }
    }
    if errors.is_empty() {
        Ok(specs)
    } else {
        Err(Failure::BadInput(errors))
    }
}

/// The five CSV files of `reports` as the CLI writes them, read back from a temporary folder.
fn run_files(reports: &[RunReport]) -> Result<Vec<(&'static str, Vec<u8>)>, Failure> {
    let io = |what: &str, e: std::io::Error| Failure::Io(format!("{what}: {e}"));
    let dir = tempfile::tempdir().map_err(|e| io("creating a temporary folder", e))?;
    report::csv_out::write_run_outputs(dir.path(), reports)
        .map_err(|e| io(&format!("writing {}", dir.path().display()), e))?;
    read_files(dir.path(), &RUN_FILES)
}

fn read_files(dir: &Path, names: &[&'static str]) -> Result<Vec<(&'static str, Vec<u8>)>, Failure> {
    names
        .iter()
        .map(|name| {
            let path = dir.join(name);
            let bytes = std::fs::read(&path)
                .map_err(|e| Failure::Io(format!("{}: {e}", path.display())))?;
            Ok((*name, bytes))
        })
        .collect()
}

/// `rebalance-sim validate FILE`: the scenario's facts and warnings, or the CLI's error lines.
pub fn validate(source: &Source) -> Result<Validated, Failure> {
    let scenario = source.load().map_err(|errors| error_lines(&errors))?;
    let shown = source.display_path();
    check_budget(&shown, &scenario)?;
    let warnings = warning_lines(&shown, &scenario);
    Ok(Validated {
        name: scenario.name.clone(),
        protocols: scenario.protocols.iter().map(ToString::to_string).collect(),
        events: scenario.events.len(),
        warnings,
    })
}

/// `rebalance-sim sweep FILE [--seeds N] [--jobs N] [--out DIR]`: runs the sweep into `out` (a
/// temporary folder when `None`; a given folder keeps the files and resumes from its journal as
/// the CLI does) and hands back its `runs.csv`, `aggregate.csv` and `manifest.json`.
pub fn sweep(
    path: &Path,
    seeds: Option<u32>,
    jobs: Option<usize>,
    out: Option<&Path>,
) -> Result<SweepOutput, Failure> {
    let jobs = parse_jobs(jobs)?;
    let plan =
        SweepPlan::load(path, seeds, &git_commit(), scenario::from_table).map_err(lab_failure)?;
    check_sweep_budget(path, &plan, jobs)?;
    let temporary; // removed when the function returns
    let out_dir = match out {
        Some(dir) => dir,
        None => {
            temporary = tempfile::tempdir().map_err(|e| Failure::Io(e.to_string()))?;
            temporary.path()
        }
    };
    let opts = SweepOptions { out_dir: out_dir.to_path_buf(), jobs, shard: None };
    let outcome = run_sweep(&plan, &opts, &model_run, &|_, _| {}).map_err(lab_failure)?;
    let files = read_files(out_dir, &SWEEP_FILES)?;
    Ok(SweepOutput { files, runs: outcome.runs, resumed: outcome.resumed })
}

/// The CLI's sweep budget check (`commands/sweep.rs`, `check_budget`): the largest cell's run
/// (one protocol) times the runs at once.
fn check_sweep_budget(path: &Path, plan: &SweepPlan, jobs: usize) -> Result<(), Failure> {
    let bad = |message: String| Failure::BadInput(vec![format!("error: {message}")]);
    let budget_bytes = scenario::estimate::memory_budget_bytes(None).map_err(bad)?;
    let largest = plan
        .cells
        .iter()
        .map(|cell| scenario::estimate::estimate_one_protocol(&cell.scenario))
        .max_by(|a, b| a.memory_bytes.total_cmp(&b.memory_bytes));
    let Some(largest) = largest else { return Ok(()) };
    let parallel = jobs.min(plan.manifest.runs.max(1));
    scenario::estimate::check_memory(&largest, budget_bytes, parallel)
        .map_err(|message| bad(format!("{}: {message}", path.display())))
}

/// A sweep's error as the CLI prints it (`error: ` before the first line only, as `bad` does).
fn lab_failure(e: LabError) -> Failure {
    let text = format!("error: {e}");
    match e {
        LabError::Input(_) => Failure::BadInput(vec![text]),
        LabError::Io(_) => Failure::Io(text),
        LabError::Run(_) => Failure::Run(text),
    }
}
