//! `rebalance-sim plot DIR [--out DIR]`: redraw the charts of a `run` from its CSV files alone.
//!
//! Reads `summary.csv`, `partitions.csv`, `rebalances.csv`, `ownership.csv` and
//! `timeline.csv` from DIR (as `run` wrote them), draws every chart with
//! `report::charts::draw_run` into `--out` (default: DIR itself) and prints one line per file
//! written. A missing folder or file, or a CSV that does not parse, is bad input (exit 2) with
//! a message naming the file; so is a time that is infinite, not a number or negative
//! (report::csv_check, naming the line). An unknown ownership state is warned about.

use super::Outcome;
use report::csv_out::{OWNERSHIP_CSV, PARTITIONS_CSV, REBALANCES_CSV, SUMMARY_CSV, TIMELINE_CSV};
use std::path::{Path, PathBuf};

/// Redraw the charts (PNG and SVG) of a run from the CSV files in its output folder.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Output folder of `rebalance-sim run` (holds summary.csv, ownership.csv, ...).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Where to write the charts (default: DIR).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Reads the CSV files, draws the charts and lists them.
pub fn run(args: Args) -> Outcome {
    if let Err(message) = check_inputs(&args.dir) {
        eprintln!("error: {message}");
        return Outcome::BadInput;
    }
    match report::csv_check::check_plot_inputs(&args.dir) {
        Ok(warnings) => warnings.iter().for_each(|w| eprintln!("warning: {w}")),
        Err(message) => {
            eprintln!("error: {message}");
            return Outcome::BadInput;
        }
    }
    let reports = match report::csv_out::read_run_outputs(&args.dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot read the run's CSV files: {e}");
            return Outcome::BadInput;
        }
    };
    if reports.is_empty() {
        eprintln!(
            "warning: {} has no rows: the charts will be empty",
            args.dir.join(SUMMARY_CSV).display()
        );
    }
    let out = args.out.unwrap_or(args.dir);
    match report::charts::draw_run(&out, &reports) {
        Ok(paths) => {
            for p in paths {
                println!("wrote {}", p.display());
            }
            Outcome::Ok
        }
        Err(e) => {
            eprintln!("error: cannot write the charts into {}: {e}", out.display());
            Outcome::BadInput
        }
    }
}

/// Checks that `dir` is a folder holding the five CSV files, naming what is missing.
fn check_inputs(dir: &Path) -> Result<(), String> {
    if !dir.is_dir() {
        return Err(format!(
            "{}: not a folder; expected the output folder of `rebalance-sim run`",
            dir.display()
        ));
    }
    let files = [SUMMARY_CSV, PARTITIONS_CSV, REBALANCES_CSV, OWNERSHIP_CSV, TIMELINE_CSV];
    let missing: Vec<&str> = files.into_iter().filter(|f| !dir.join(f).is_file()).collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}: missing {}; `rebalance-sim run` writes all of {}",
            dir.display(),
            missing.join(", "),
            files.join(", ")
        ))
    }
}
