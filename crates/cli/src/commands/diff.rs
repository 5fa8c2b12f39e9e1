//! `rebalance-sim diff BEFORE AFTER [--all] [--out DIR]`: two runs side by side (lab::diff).
//! Each side is a run's output folder or a scenario file (run here). Prints, per protocol, the
//! metrics that changed with the change and `better`/`worse` by the metric's default rule;
//! `--out DIR` also writes `diff.csv` (every metric) and `diff.png` (the relative changes).
//! Exit 0 (a diff is not a gate: `check` is), 2 on bad input.

use super::Outcome;
use lab::diff::{diff_csv, diff_tables, format_diff, summary_of};
use lab::sweep::{model_run, LabError};
use std::path::{Path, PathBuf};

/// Arguments of `diff`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The first side: a run's output folder (with summary.csv) or a scenario file.
    pub before: PathBuf,
    /// The second side, as the first.
    pub after: PathBuf,
    /// Show every metric, not only those that changed.
    #[arg(long)]
    pub all: bool,
    /// Also write diff.csv and diff.png into this folder (created if missing).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Outcome {
    match diff(&args) {
        Ok(()) => Outcome::Ok,
        Err(e) => {
            eprintln!("error: {e}");
            Outcome::BadInput
        }
    }
}

fn diff(args: &Args) -> Result<(), LabError> {
    let before = summary_of(&args.before, &load, &model_run)?;
    let after = summary_of(&args.after, &load, &model_run)?;
    let diff = diff_tables(&before, &after);
    let (b, a) = (label(&args.before), label(&args.after));
    print!("{}", format_diff(&diff, &b, &a, args.all));
    if let Some(out) = &args.out {
        let io = |what: &Path, e: std::io::Error| LabError::Io(format!("{}: {e}", what.display()));
        std::fs::create_dir_all(out).map_err(|e| io(out, e))?;
        let csv_path = out.join("diff.csv");
        std::fs::write(&csv_path, diff_csv(&diff)?).map_err(|e| io(&csv_path, e))?;
        let png = out.join("diff.png");
        report::charts::diff::draw(&diff_bars(&diff), &b, &a, &png)
            .map_err(|e| LabError::Io(format!("{}: {e}", png.display())))?;
        eprintln!("wrote {} and {}", csv_path.display(), png.display());
    }
    Ok(())
}

/// The relative change of every judged metric that changed, for the chart.
fn diff_bars(diff: &lab::diff::Diff) -> Vec<report::charts::diff::Bar> {
    diff.changed()
        .filter(|l| !l.verdict.is_empty())
        .filter_map(|l| {
            let (b, a) = (l.before.parse::<f64>().ok()?, l.after.parse::<f64>().ok()?);
            let percent = if b == 0.0 { None } else { Some((a - b) / b.abs() * 100.0) };
            Some(report::charts::diff::Bar {
                row: l.row.clone(),
                metric: l.metric.clone(),
                percent,
                worse: l.verdict == "worse",
            })
        })
        .collect()
}

/// A side's name in the table: its file or folder name.
fn label(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into())
}

fn load(path: &Path) -> Result<scenario::Scenario, Vec<String>> {
    scenario::load(path).map_err(|errs| errs.iter().map(ToString::to_string).collect())
}
