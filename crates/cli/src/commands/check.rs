//! `rebalance-sim check [--baseline DIR] [--config FILE] [--jobs N]`: re-runs the committed
//! reference results listed in `results/check.toml` (lab::check) and prints what moved.
//! Exit 1 when anything moved beyond its tolerance, 0 otherwise, 2 on bad input.

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
    println!("check: {summary}, {} moved beyond tolerance: REGRESSION", total.moved.len());
    Outcome::CheckFailed
}

fn check_one(b: &Baseline, jobs: usize) -> Result<CheckReport, LabError> {
    match &b.kind {
        BaselineKind::Run { scenario } => check_run(&b.dir, scenario, &load, &model_run),
        BaselineKind::Sweep { sweep, tolerance } => {
            check_sweep(&b.dir, sweep, *tolerance, scenario::from_table, &model_run, jobs)
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
    let sweep = PathBuf::from(manifest.sweep_file);
    // The tolerance is then the sweep file's [check] (never the manifest's).
    let kind = BaselineKind::Sweep { sweep, tolerance: None };
    Ok(vec![Baseline { dir: wanted.clone(), kind }])
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
