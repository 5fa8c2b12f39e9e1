//! `rebalance-sim validate FILE...`: load and check scenario files without running them.
//!
//! Prints `ok FILE (N protocols, M events)` per valid file on stdout, warnings to stderr, and
//! one line per problem on stderr for invalid files; exit 2 when any file is invalid. A file
//! whose run is estimated to need more memory than the budget (`--memory-budget-mb`,
//! scenario::estimate) is invalid too.

use super::Outcome;
use std::path::{Path, PathBuf};

/// Check scenario files without running them: every problem is reported with its file, line,
/// key and what is allowed.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Scenario files (TOML) to check.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub budget: super::budget::BudgetArgs,
    /// Also print each valid file's estimated peak memory and wall time (all its protocols)
    /// on stdout.
    #[arg(long)]
    pub estimate: bool,
}

/// Validates every file, reporting all problems; `BadInput` if any file is invalid.
pub fn run(args: Args) -> Outcome {
    let mut all_valid = true;
    for file in &args.files {
        all_valid &= validate_one(file, &args);
    }
    if all_valid {
        Outcome::Ok
    } else {
        Outcome::BadInput
    }
}

/// Checks one file and prints its result; true when it is valid.
fn validate_one(file: &Path, args: &Args) -> bool {
    match scenario::load(file) {
        Ok(s) => {
            if let Err(message) = super::budget::check_run(file, &s, 1, args.budget) {
                eprintln!("error: {message}");
                return false;
            }
            for warning in scenario::warnings(&s) {
                eprintln!("warning: {}: {warning}", file.display());
            }
            println!(
                "ok {} ({} protocols, {} events)",
                file.display(),
                s.protocols.len(),
                s.events.len()
            );
            if args.estimate {
                let e = scenario::estimate::estimate(&s);
                println!(
                    "estimate {}: peak memory {:.0} MB, wall time {:.1} s, {:.3e} heartbeats",
                    file.display(),
                    (e.memory_bytes / 1024.0 / 1024.0).ceil(),
                    e.wall_s,
                    e.heartbeats
                );
            }
            true
        }
        Err(errors) => {
            for error in &errors {
                eprintln!("error: {error}");
            }
            false
        }
    }
}
