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

/// `run`'s protocol runs at once: `jobs` threads at most, one per protocol. A `--jobs` given on
/// the command line is checked as it is (refused above the budget, naming `--jobs`); the
/// default (`given` false: the machine's cores) is lowered to the most runs at once that fit,
/// with a note for stderr, so that a run that fits one protocol at a time is never refused
/// for the default. `Err`: the refusal (one at a time does not fit either, or the given
/// `--jobs` does not).
pub fn run_at_once(
    file: &Path,
    scenario: &Scenario,
    jobs: usize,
    given: bool,
    budget: BudgetArgs,
) -> Result<(usize, Option<String>), String> {
    let at_most = jobs.clamp(1, scenario.protocols.len().max(1));
    if given {
        return check_run(file, scenario, at_most, budget).map(|()| (at_most, None));
    }
    let budget_bytes = budget.bytes()?;
    let Some(fits) = estimate::most_at_once(scenario, budget_bytes, at_most) else {
        return check_run(file, scenario, 1, budget).map(|()| (1, None));
    };
    let note = (fits < at_most).then(|| {
        let needed = estimate::estimate_run(scenario, at_most).memory_bytes;
        let running = if fits == 1 {
            "one protocol run".to_string()
        } else {
            format!("{fits} protocol runs")
        };
        format!(
            "{}: running {running} at a time, not {at_most} (the default: one per core, at most one \
             per protocol): {at_most} at once are \
             estimated to need {}, above the memory budget of {} (--jobs sets the number; \
             docs/limits.md)",
            file.display(),
            estimate::megabytes(needed),
            estimate::megabytes(budget_bytes)
        )
    });
    Ok((fits, note))
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
