//! `rebalance-sim sweep SWEEP.toml [--out DIR] [--jobs N] [--seeds N] [--shard K/N]`: runs a
//! grid of parameters x seeds in parallel (lab::sweep) with a progress bar, then prints the
//! aggregate table. Killed and started again, it resumes from the out folder's journal.

use super::Outcome;
use lab::sweep::{model_run, run_sweep, SweepOptions, SweepPlan};
use lab::sweep_manifest::{git_commit, Shard};
use lab::sweep_output::AGGREGATE_CSV;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

/// Arguments of `sweep`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The sweep file (TOML; its format: docs/files.md).
    pub file: PathBuf,
    /// Output folder (default `results/sweeps/<name>/`; a shard's default adds `shard-K-of-N/`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Worker threads, 1 to 256 (default: the machine's cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Replications per cell, overriding the file's `seeds`.
    #[arg(long)]
    pub seeds: Option<u32>,
    /// Run only shard K of N (0 <= K < N); join shards with `rebalance-sim merge`.
    #[arg(long)]
    pub shard: Option<String>,
    /// Also draw each metric against the first grid key, a marker per protocol and grid value
    /// with its 95% CI whisker (points, not joined by lines), into `<out>/charts/` (not for a
    /// shard: `merge --charts` draws them).
    #[arg(long)]
    pub charts: bool,
    /// Table formats: `csv` (default), or also Parquet (`parquet`, `csv,parquet`, `both`):
    /// `runs.parquet` and `aggregate.parquet` with typed columns beside the CSV files (which
    /// stay: a resumed sweep and `merge` read `runs.csv`).
    #[arg(long, value_name = "FORMATS", default_value = "csv")]
    pub format: String,
    #[command(flatten)]
    pub budget: super::budget::BudgetArgs,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Outcome {
    let shard = match args.shard.as_deref().map(Shard::parse).transpose() {
        Ok(s) => s,
        Err(msg) => return bad(&msg),
    };
    let formats = match super::formats::Formats::parse(&args.format) {
        Ok(f) => f,
        Err(msg) => return bad(&msg),
    };
    let jobs = match super::jobs::parse(args.jobs) {
        Ok(n) => n,
        Err(msg) => return bad(&msg),
    };
    let plan = match SweepPlan::load(&args.file, args.seeds, &git_commit(), scenario::from_table) {
        Ok(p) => p,
        Err(e) => return bad(&e.to_string()),
    };
    if let Err(message) = check_budget(&args.file, &plan, jobs, args.budget) {
        return bad(&message);
    }
    print_warnings(&args.file, &plan);
    let out_dir = args.out.unwrap_or_else(|| default_out(&plan.manifest.name, shard));
    let opts = SweepOptions { out_dir: out_dir.clone(), jobs, shard };
    let progress = Progress::new();
    let result = run_sweep(&plan, &opts, &model_run, &|done, total| progress.update(done, total));
    progress.finish();
    let outcome = match result {
        Ok(o) => o,
        Err(e) => return bad(&e.to_string()),
    };
    eprintln!(
        "sweep {}: {} runs ({} resumed, {} run now) -> {}",
        plan.manifest.name,
        outcome.runs,
        outcome.resumed,
        outcome.ran,
        out_dir.display()
    );
    if formats.parquet {
        if let Err(msg) = write_parquet(&out_dir) {
            return bad(&msg);
        }
    }
    if shard.is_some() {
        eprintln!("this is one shard: join all shards with `rebalance-sim merge DIR... --out DIR`");
        return Outcome::Ok;
    }
    finish(&out_dir, &plan.manifest.grid_keys, args.charts)
}

/// Checks the largest cell's run (one protocol) times the runs at once against the budget.
fn check_budget(
    file: &std::path::Path,
    plan: &SweepPlan,
    jobs: usize,
    budget: super::budget::BudgetArgs,
) -> Result<(), String> {
    let budget_bytes = budget.bytes()?;
    let largest = plan
        .cells
        .iter()
        .map(|cell| scenario::estimate::estimate_one_protocol(&cell.scenario))
        .max_by(|a, b| a.memory_bytes.total_cmp(&b.memory_bytes));
    let Some(largest) = largest else { return Ok(()) };
    let parallel = jobs.min(plan.manifest.runs.max(1));
    super::budget::check(file, &largest, budget_bytes, parallel)
}

/// At most this many distinct warnings are printed before a sweep (cells whose values differ
/// can each word one differently).
const MAX_WARNINGS_SHOWN: usize = 20;

/// Prints what `validate` would warn about the cells (scenario::warnings) on stderr, each
/// distinct warning once with the number of cells it concerns.
fn print_warnings(file: &std::path::Path, plan: &SweepPlan) {
    let mut distinct: Vec<(String, usize)> = Vec::new();
    let mut index_of = std::collections::BTreeMap::new();
    for cell in &plan.cells {
        for warning in scenario::warnings(&cell.scenario) {
            let index = *index_of.entry(warning.clone()).or_insert_with(|| {
                distinct.push((warning, 0));
                distinct.len() - 1
            });
            distinct[index].1 += 1;
        }
    }
    let cells = plan.cells.len();
    for (warning, count) in distinct.iter().take(MAX_WARNINGS_SHOWN) {
        eprintln!("warning: {}: {warning} ({count} of {cells} cells)", file.display());
    }
    if distinct.len() > MAX_WARNINGS_SHOWN {
        let more = distinct.len() - MAX_WARNINGS_SHOWN;
        eprintln!("warning: {}: and {more} more distinct warnings", file.display());
    }
}

/// Prints the aggregate table of a finished sweep folder and, with `charts`, draws its charts.
pub fn finish(dir: &std::path::Path, grid_keys: &[String], charts: bool) -> Outcome {
    if charts {
        match lab::sweep_output::write_charts(dir, grid_keys) {
            Ok(files) => {
                eprintln!("wrote {} charts into {}", files.len(), dir.join("charts").display())
            }
            Err(e) => return bad(&e.to_string()),
        }
    }
    print_table(&dir.join(AGGREGATE_CSV), grid_keys)
}

/// Prints the aggregate table of a finished sweep folder.
pub fn print_table(path: &std::path::Path, grid_keys: &[String]) -> Outcome {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return bad(&format!("{}: {e}", path.display())),
    };
    match lab::sweep_table::format_aggregate(&bytes, grid_keys) {
        Ok(t) => {
            print!("{t}");
            Outcome::Ok
        }
        Err(e) => bad(&e.to_string()),
    }
}

/// `runs.parquet` and `aggregate.parquet` (if the folder has an `aggregate.csv`: not a shard)
/// from the sweep folder's CSV files.
fn write_parquet(dir: &std::path::Path) -> Result<(), String> {
    for name in [lab::sweep_output::RUNS_CSV, AGGREGATE_CSV] {
        let csv_path = dir.join(name);
        if name == AGGREGATE_CSV && !csv_path.exists() {
            continue;
        }
        let bytes = std::fs::read(&csv_path).map_err(|e| format!("{}: {e}", csv_path.display()))?;
        let path = dir.join(report::parquet_out::parquet_name(name));
        report::parquet_out::write_csv_as_parquet_atomic(&path, &bytes)
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(())
}

fn default_out(name: &str, shard: Option<Shard>) -> PathBuf {
    let dir = PathBuf::from("results/sweeps").join(name);
    match shard {
        Some(s) => dir.join(format!("shard-{}-of-{}", s.index, s.count)),
        None => dir,
    }
}

fn bad(message: &str) -> Outcome {
    eprintln!("error: {message}");
    Outcome::BadInput
}

/// A progress bar with an ETA on a terminal; plain lines (about every 5%, with an ETA)
/// otherwise. Runs resumed from the journal count as done but not in the rate.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    /// Wall-clock start and the runs already done then; last plain line's count.
    plain: Mutex<(Option<(Instant, usize)>, usize)>,
}

impl Progress {
    fn new() -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(0);
            let style = indicatif::ProgressStyle::with_template(
                "{bar:40.cyan/blue} {pos}/{len} runs  elapsed {elapsed_precise}  ETA {eta_precise}",
            )
            .expect("valid template");
            bar.set_style(style);
            bar
        });
        Progress { bar, plain: Mutex::new((None, usize::MAX)) }
    }

    fn update(&self, done: usize, total: usize) {
        let mut state = self.plain.lock().expect("progress lock");
        let first = state.0.is_none();
        let (start, done_at_start) = *state.0.get_or_insert_with(|| (now(), done));
        if let Some(bar) = &self.bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            if first {
                bar.reset_eta(); // resumed runs are not part of the rate
            }
            return;
        }
        let step = (total / 20).max(1);
        if first || done == total || done >= state.1 + step {
            let eta = eta_text(start, done - done_at_start, total - done);
            eprintln!("sweep: {done}/{total} runs{eta}");
            state.1 = done;
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}

/// Wall-clock time for the progress display only; the simulation never reads it.
#[allow(clippy::disallowed_methods)]
fn now() -> Instant {
    Instant::now()
}

/// `, ETA 1m 05s` from the rate so far, or nothing before the first run ends.
fn eta_text(start: Instant, ran: usize, left: usize) -> String {
    if ran == 0 || left == 0 {
        return String::new();
    }
    let per_run_s = now().duration_since(start).as_secs_f64() / ran as f64;
    let eta_s = (per_run_s * left as f64).round() as u64;
    format!(", ETA {}m {:02}s", eta_s / 60, eta_s % 60)
}
