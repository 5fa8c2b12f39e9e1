//! The `rebalance-sim` binary: parses arguments with clap and calls the library crates.
//! No simulation logic lives here; each subcommand is a small module under `commands/`.
//!
//! Exit codes (DESIGN section 6): 0 ok, 1 a check failed, 2 bad input.

mod commands;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Deterministic discrete-event simulator of Kafka-style consumer-group rebalances.
#[derive(Parser, Debug)]
#[command(name = "rebalance-sim", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check scenario files without running them.
    Validate(commands::validate::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Validate(args) => commands::validate::run(args),
    };
    commands::exit(outcome)
}
