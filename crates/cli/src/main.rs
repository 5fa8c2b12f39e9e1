//! The `rebalance-sim` binary: parses arguments with clap and calls the library crates.
//! No simulation logic lives here; each subcommand is a small module under `commands/`.
//!
//! Exit codes (DESIGN section 6): 0 ok, 1 a check failed, 2 bad input.

mod commands;

/// mimalloc: the model allocates many small short-lived vectors (a batch's arrival and end
/// times); the system allocator spent about a quarter of a large run in malloc and free.
/// Built with `no_thp` (workspace Cargo.toml): mimalloc otherwise asks for transparent huge
/// pages, and each page it frees and reuses was zeroed again 2 MiB at a time by the kernel
/// (clear_page_erms, 5-10% of a 1,000-member run in `perf`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

/// `--version`: the package version and the commit the binary was built from (lab's build.rs).
const VERSION: &str = lab::sweep_manifest::VERSION_AND_COMMIT;
use std::process::ExitCode;

/// Deterministic discrete-event simulator of Kafka-style consumer-group rebalances.
#[derive(Parser, Debug)]
#[command(name = "rebalance-sim", version = VERSION, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scenario once per protocol; write CSV (and charts) and print a table.
    Run(commands::run::Args),
    /// Check scenario files without running them.
    Validate(commands::validate::Args),
    /// Print the assignment an assignor computes for a JSON group description.
    Assign(commands::assign::Args),
    /// Run a grid of parameters x seeds in parallel (the sweep file: docs/files.md).
    Sweep(commands::sweep::Args),
    /// Join the outputs of `sweep --shard K/N` into one sweep's files.
    Merge(commands::merge::Args),
    /// Re-run the committed reference results; exit 1 if a metric got worse than its rule
    /// allows (the check file: docs/check.md).
    Check(commands::check::Args),
    /// Compare two runs (output folders or scenario files) metric by metric: the change, and
    /// whether it is better or worse (docs/check.md's default rules).
    Diff(commands::diff::Args),
    /// Redraw the charts of a run from its CSV files.
    Plot(commands::plot::Args),
    /// Build a Perfetto trace of a run from its files (partitions, rebalances, counters).
    ///
    /// Reads summary, rebalances, ownership and timeline (CSV, or Parquet when the run wrote
    /// only Parquet) from RUN_DIR and writes trace-<protocol>.files.json per protocol run:
    /// one track per partition (owner spans, idle and down spans with their state and the
    /// rebalance they began in), the coordinator's rebalances (trigger, rounds, members) and
    /// the counters lag, down partitions and members. The files hold no member states,
    /// commits, max-poll expiries, heartbeats or group state (so no generation): those are
    /// only in the trace `run --trace` writes, whose partition and rebalance spans are the
    /// same. docs/formats.md describes both.
    #[allow(rustdoc::invalid_html_tags)] // `<protocol>` is `--help` text, not HTML.
    Trace(commands::trace::Args),
    /// Random scenarios from seeds, every invariant checked after every event; exit 1 on a failure.
    Chaos(commands::chaos::Args),
}

/// On SIGINT or SIGTERM: remove the run's staging folder (report::run_folder), then end as
/// the signal would have (its default action), so no temporary is left behind.
fn clean_up_on_signals() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return; // without a handler the default action still ends the process
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            report::run_folder::remove_registered();
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            std::process::exit(128 + signal);
        }
    });
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    clean_up_on_signals();
    let outcome = match cli.command {
        Command::Run(args) => commands::run::run(args),
        Command::Validate(args) => commands::validate::run(args),
        Command::Assign(args) => commands::assign::run(args),
        Command::Sweep(args) => commands::sweep::run(args),
        Command::Merge(args) => commands::merge::run(args),
        Command::Check(args) => commands::check::run(args),
        Command::Diff(args) => commands::diff::run(args),
        Command::Plot(args) => commands::plot::run(args),
        Command::Trace(args) => commands::trace::run(args),
        Command::Chaos(args) => commands::chaos::run(args),
    };
    commands::exit(outcome)
}
