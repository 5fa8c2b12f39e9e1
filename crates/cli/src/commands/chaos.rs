//! `rebalance-sim chaos --seeds A..B [--protocol P]... [--save DIR] [--jobs N]`: random
//! scenarios from seeds, every invariant checked after every event (`lab::chaos`).
//!
//! Prints one report per failed run (seed, invariant, last events, replay command), the
//! zombie-overlap total and the summary line `N seeds, M runs, K failures`. Exit 1 when any run failed, 0 otherwise, 2 on bad
//! arguments. The output does not depend on `--jobs`.

use super::Outcome;
use lab::chaos::{self, ChaosSummary, SeedResult, Verdict};
use scenario::{ProtocolSpec, Scenario};
use std::path::{Path, PathBuf};

/// Run random scenarios derived from seeds under every protocol and check every invariant
/// after every event; exit 1 if any run fails.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Seeds: `A..B` (B excluded), `A..=B`, or one seed `A`.
    #[arg(long, value_name = "A..B")]
    pub seeds: String,
    /// Protocols to run (repeatable), e.g. `eager:range`; default: every protocol.
    #[arg(long = "protocol", value_name = "P")]
    pub protocols: Vec<String>,
    /// Write the scenario of every failing seed to DIR/chaos-<seed>.toml (a file `run`
    /// accepts).
    #[arg(long, value_name = "DIR")]
    #[allow(rustdoc::invalid_html_tags)] // `<seed>` is `--help` text, not HTML.
    pub save: Option<PathBuf>,
    /// With --save: write every seed's scenario, not only the failing ones.
    #[arg(long, requires = "save")]
    pub save_all: bool,
    /// Also print one line per passing run: events, when the group settled, zombie overlap.
    #[arg(long)]
    pub verbose: bool,
    /// Worker threads (default: all cores). The output does not depend on it.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
}

/// Runs the seeds and prints the reports and the summary.
pub fn run(args: Args) -> Outcome {
    let Some((seeds, protocols)) = parse(&args) else { return Outcome::BadInput };
    chaos::quiet_panics();
    let results = match args.jobs {
        Some(jobs) => match rayon_pool(jobs) {
            Ok(pool) => pool.install(|| chaos::run_seeds(seeds, &protocols)),
            Err(e) => {
                eprintln!("error: --jobs {jobs}: {e}");
                return Outcome::BadInput;
            }
        },
        None => chaos::run_seeds(seeds, &protocols),
    };
    for result in &results {
        let saved = match save(&args, result) {
            Ok(saved) => saved,
            Err(message) => {
                eprintln!("error: {message}");
                return Outcome::BadInput;
            }
        };
        print_failures(result, saved.as_deref());
        if args.verbose {
            print_passes(result);
        }
    }
    let summary = ChaosSummary::of(&results);
    print_summary(&summary);
    if summary.failures > 0 {
        Outcome::CheckFailed
    } else {
        Outcome::Ok
    }
}

fn parse(args: &Args) -> Option<(std::ops::Range<u64>, Vec<ProtocolSpec>)> {
    let seeds = match chaos::parse_seed_range(&args.seeds) {
        Ok(seeds) => seeds,
        Err(message) => {
            eprintln!("error: --seeds {message}");
            return None;
        }
    };
    if args.protocols.is_empty() {
        return Some((seeds, lab::chaos_gen::default_protocols()));
    }
    let mut protocols = Vec::new();
    for text in &args.protocols {
        match Scenario::parse_protocol(text) {
            Ok(p) if !protocols.contains(&p) => protocols.push(p),
            Ok(_) => {}
            Err(message) => {
                eprintln!("error: --protocol {message}");
                return None;
            }
        }
    }
    Some((seeds, protocols))
}

fn rayon_pool(jobs: usize) -> Result<rayon::ThreadPool, String> {
    if jobs == 0 {
        return Err("must be at least 1".to_string());
    }
    rayon::ThreadPoolBuilder::new().num_threads(jobs).build().map_err(|e| e.to_string())
}

/// Writes the seed's scenario when asked; returns its path.
fn save(args: &Args, result: &SeedResult) -> Result<Option<String>, String> {
    let Some(dir) = args.save.as_deref() else { return Ok(None) };
    if !(args.save_all || result.failed()) {
        return Ok(None);
    }
    let path = scenario_path(dir, result.seed);
    std::fs::create_dir_all(dir).map_err(|e| format!("--save {}: {e}", dir.display()))?;
    std::fs::write(&path, scenario::to_toml(&result.scenario))
        .map_err(|e| format!("--save {}: {e}", path.display()))?;
    Ok(Some(path.display().to_string()))
}

/// `DIR/chaos-<seed>.toml`.
pub fn scenario_path(dir: &Path, seed: u64) -> PathBuf {
    dir.join(format!("chaos-{seed}.toml"))
}

fn print_failures(result: &SeedResult, saved: Option<&str>) {
    for run in &result.runs {
        if let Verdict::Failed(failure) = &run.verdict {
            print!("{}", chaos::failure_report(result.seed, run.protocol, failure, saved));
        }
    }
}

fn print_passes(result: &SeedResult) {
    for run in &result.runs {
        if let Verdict::Passed(facts) = &run.verdict {
            let settled = facts.settled_at.map_or("-".to_string(), |t| t.to_string());
            let mut line =
                format!(
                "ok seed {} {}: {} events, settled at {settled}, zombie overlap {} in {} episodes",
                result.seed, run.protocol, facts.events, facts.zombie_overlap, facts.zombie_episodes
            );
            if let Some(first) = &facts.first_zombie {
                line.push_str(&format!(" (first {first})"));
            }
            if let Some(first) = &facts.first_withheld {
                line.push_str(&format!(", withheld for good {} (first {first})", facts.withheld));
            }
            println!("{line}");
        }
    }
}

fn print_summary(summary: &ChaosSummary) {
    println!(
        "zombie overlap (a removed member still consuming a partition another member owns): {} runs, {:.3} partition-s",
        summary.zombie_runs,
        summary.zombie_overlap.as_secs_f64()
    );
    println!(
        "withheld for good (a cooperative round's partition whose static member was replaced in a Stable group, as in Kafka): {} runs, {:.3} partition-s",
        summary.withheld_runs,
        summary.withheld.as_secs_f64()
    );
    println!("{}", summary.line());
}
