//! `rebalance-sim check [--baseline DIR] [--config FILE] [--jobs N]`: re-runs the committed
//! reference results listed in `results/check.toml` (lab::check) and prints a table of what
//! moved, each value marked WORSE or better by its metric's rule (lab::check_rules).
//! Exit 1 when a value is worse beyond its tolerance (or breaks a limit), 0 otherwise (also
//! when values improved), 2 on bad input.

use super::Outcome;
use lab::check::{
    check_run, check_sweep, combine, format_moved, read_check_file, Baseline, BaselineKind,
    CheckReport, CHECK_TOML,
};
use lab::sweep::{model_run, LabError};
use lab::sweep_manifest::{Manifest, MANIFEST_JSON};
use std::path::{Path, PathBuf};

/// Arguments of `check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Check only this baseline folder (listed in the check file, or a sweep folder with a
    /// manifest.json).
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// The check file listing the baselines.
    #[arg(long, default_value = CHECK_TOML)]
    pub config: PathBuf,
    /// Worker threads for sweep baselines (default: the machine's cores).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Outcome {
    let baselines = match select(&args) {
        Ok(b) => b,
        Err(e) => return bad(&e.to_string()),
    };
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1);
    let mut total = CheckReport::default();
    for b in &baselines {
        eprintln!("check: re-running {}", b.dir.display());
        match check_one(b, jobs) {
            Ok(r) => combine(&mut total, r),
            Err(e) => return bad(&e.to_string()),
        }
    }
    for note in &total.notes {
        eprintln!("note: {note}");
    }
    let summary = format!("{} baselines, {} values compared", total.baselines, total.compared);
    if total.moved.is_empty() {
        println!("check: {summary}, nothing moved");
        return Outcome::Ok;
    }
    print!("{}", format_moved(&total.moved));
    let worse = total.worse();
    let better = total.moved.len() - worse;
    if worse == 0 {
        println!(
            "check: {summary}, nothing worse; {better} better beyond tolerance (ok; regenerate \
             the baselines to record them)"
        );
        return Outcome::Ok;
    }
    println!("check: {summary}, {worse} worse and {better} better beyond tolerance: REGRESSION");
    Outcome::CheckFailed
}

fn check_one(b: &Baseline, jobs: usize) -> Result<CheckReport, LabError> {
    match &b.kind {
        BaselineKind::Run { scenario } => check_run(&b.dir, scenario, &b.rules, &load, &model_run),
        BaselineKind::Sweep { sweep, tolerance } => {
            check_sweep(&b.dir, sweep, *tolerance, &b.rules, scenario::from_table, &model_run, jobs)
        }
    }
}

fn load(path: &Path) -> Result<scenario::Scenario, Vec<String>> {
    scenario::load(path).map_err(|errs| errs.iter().map(ToString::to_string).collect())
}

/// The baselines to check: all of the check file, or the one `--baseline` names.
fn select(args: &Args) -> Result<Vec<Baseline>, LabError> {
    let Some(wanted) = &args.baseline else { return read_check_file(&args.config) };
    if args.config.exists() {
        let all = read_check_file(&args.config)?;
        if let Some(b) = all.into_iter().find(|b| same_dir(&b.dir, wanted)) {
            return Ok(vec![b]);
        }
    }
    // Not listed: a sweep folder's manifest says which sweep file made it.
    let manifest = Manifest::read(&wanted.join(MANIFEST_JSON)).map_err(|e| {
        LabError::Input(vec![format!(
            "--baseline {}: not listed in {} and not a sweep folder ({e})",
            wanted.display(),
            args.config.display()
        )])
    })?;
    let sweep = locate_sweep_file(wanted, &manifest.sweep_file)?;
    // The tolerance is then the sweep file's [check] (never the manifest's).
    let kind = BaselineKind::Sweep { sweep, tolerance: None };
    Ok(vec![Baseline { dir: wanted.clone(), kind, rules: lab::check_rules::Rules::default() }])
}

/// The sweep file a baseline's manifest names, as it was given to `sweep` (relative to the
/// folder that command ran in): tried from here, then from each folder above the baseline
/// (a sweep run from the repository root into `results/sweeps/x` is found from anywhere).
fn locate_sweep_file(baseline: &Path, recorded: &str) -> Result<PathBuf, LabError> {
    let recorded_path = Path::new(recorded);
    if recorded_path.is_absolute() || recorded_path.exists() {
        return Ok(recorded_path.to_path_buf());
    }
    let start = baseline.canonicalize().unwrap_or_else(|_| baseline.to_path_buf());
    if let Some(found) = start.ancestors().map(|a| a.join(recorded_path)).find(|p| p.is_file()) {
        return Ok(found);
    }
    Err(LabError::Input(vec![format!(
        "--baseline {}: its manifest.json names the sweep file `{recorded}` (as given to \
         `sweep`, relative to the folder it ran in), found neither from here nor from a folder \
         above the baseline; list the baseline in a check file (`[[sweep]]` with `sweep` and \
         `dir`, paths relative to the check file)",
        baseline.display()
    )]))
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

fn bad(message: &str) -> Outcome {
    eprintln!("error: {message}");
    Outcome::BadInput
}
