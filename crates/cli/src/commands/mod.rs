//! One module per subcommand, and the shared outcome type that maps to the exit code.

pub mod assign;
pub mod budget;
pub mod chaos;
pub mod check;
pub mod diff;
pub mod formats;
pub mod jobs;
pub mod merge;
pub mod plot;
pub mod run;
pub mod run_trace;
pub mod sweep;
pub mod trace;
pub mod validate;

use std::process::ExitCode;

/// How a subcommand ended.
#[derive(Debug)]
pub enum Outcome {
    /// Exit 0.
    Ok,
    /// Exit 1: a regression check failed (the table was already printed).
    CheckFailed,
    /// Exit 2: bad input; the messages were already printed to stderr.
    BadInput,
}

/// The process exit code of an outcome (DESIGN section 6).
pub fn exit(outcome: Outcome) -> ExitCode {
    match outcome {
        Outcome::Ok => ExitCode::SUCCESS,
        Outcome::CheckFailed => ExitCode::from(1),
        Outcome::BadInput => ExitCode::from(2),
    }
}
