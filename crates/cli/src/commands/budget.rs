//! `--memory-budget-mb`: the memory budget of `validate`, `run` and `sweep` (scenario::estimate),
//! shared by the three subcommands, and how many protocol runs `run --jobs` holds at once.

use scenario::estimate::{self, Estimate};
use scenario::Scenario;
use std::path::Path;

/// The `--memory-budget-mb` option.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct BudgetArgs {
    /// Refuse a run estimated to need more memory than this, in MB (default: the environment
    /// variable REBALANCE_SIM_MEMORY_BUDGET_MB, else 16384; docs/limits.md).
    #[arg(long, value_name = "MB", value_parser = clap::value_parser!(u64).range(1..))]
    pub memory_budget_mb: Option<u64>,
}

impl BudgetArgs {
    /// The budget in bytes, or the message about a bad environment variable.
    pub fn bytes(&self) -> Result<f64, String> {
        estimate::memory_budget_bytes(self.memory_budget_mb)
    }
}

/// Checks `scenario` with `at_once` of its protocol runs in flight (1: one after the other, as
/// `validate` checks a file) against the budget; the error message names `file`.
pub fn check_run(
    file: &Path,
    scenario: &Scenario,
    at_once: usize,
    budget: BudgetArgs,
) -> Result<(), String> {
    let budget_bytes = budget.bytes()?;
    estimate::check_memory_run(scenario, budget_bytes, at_once)
        .map_err(|message| format!("{}: {message}", file.display()))
}

/// `run`'s protocol runs at once and the note for stderr (`estimate::runs_at_once`, with the
/// budget of `budget`); the messages name `file`.
pub fn run_at_once(
    file: &Path,
    scenario: &Scenario,
    jobs: usize,
    given: bool,
    budget: BudgetArgs,
) -> Result<(usize, Option<String>), String> {
    let budget_bytes = budget.bytes()?;
    let named = |message: String| format!("{}: {message}", file.display());
    let (at_once, note) =
        estimate::runs_at_once(scenario, budget_bytes, jobs, given).map_err(named)?;
    Ok((at_once, note.map(named)))
}

/// Checks an estimate for `parallel` runs at once against `budget_bytes`.
pub fn check(
    file: &Path,
    estimate: &Estimate,
    budget_bytes: f64,
    parallel: usize,
) -> Result<(), String> {
    estimate::check_memory(estimate, budget_bytes, parallel)
        .map_err(|message| format!("{}: {message}", file.display()))
}
