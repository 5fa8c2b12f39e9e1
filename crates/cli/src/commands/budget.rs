//! `--memory-budget-mb`: the memory budget of `validate`, `run` and `sweep` (scenario::estimate),
//! shared by the three subcommands.

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

/// Checks `scenario` (all its protocols, one after the other) against the budget; the error
/// message names `file`.
pub fn check_run(file: &Path, scenario: &Scenario, budget: BudgetArgs) -> Result<(), String> {
    let budget_bytes = budget.bytes()?;
    check(file, &estimate::estimate(scenario), budget_bytes, 1)
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
