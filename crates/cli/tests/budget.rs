//! Issue 27 item 2: a run whose estimated peak memory is above the budget is refused before
//! any work, by `validate`, `run` and `sweep`, with the file, the estimate, the budget and the
//! keys to change (scenario::estimate); the budget comes from `--memory-budget-mb`, else
//! REBALANCE_SIM_MEMORY_BUDGET_MB, else 16384 MB. `run` counts the protocol runs it holds at
//! once (`--jobs`, issue 29 item 3). Each case's input, exit code and message.

mod support;

use std::path::Path;
use std::process::{Command, Output};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// Runs `rebalance-sim ARGS` in `dir` with the budget variable set to `budget_env` (or unset).
fn sim_env(dir: &Path, args: &[&str], budget_env: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rebalance-sim"));
    command.current_dir(dir).args(args).env_remove("REBALANCE_SIM_MEMORY_BUDGET_MB");
    if let Some(value) = budget_env {
        command.env("REBALANCE_SIM_MEMORY_BUDGET_MB", value);
    }
    command.output().unwrap()
}

/// Asserts the exit code and a part of stderr.
fn expect(o: &Output, code: i32, message: &str) {
    assert_eq!(o.status.code(), Some(code), "{}", stderr(o));
    assert!(stderr(o).contains(message), "expected `{message}` in:\n{}", stderr(o));
}

/// 10 million partitions (the documented maximum), 3 members, `protocols`, `events`.
fn ten_million(protocols: &str, events: &str) -> String {
    format!(
        "duration = \"1m\"\nprotocols = [{protocols}]\n[[topic]]\nname = \"t\"\npartitions = 10000000\nrate = 0.0\n[group]\nmembers = 3\n{events}"
    )
}

const CRASHES: &str = "[[event]]\nat = \"10s\"\nkind = \"crash\"\nmember = \"c1\"\nrestart_after = \"5s\"\n[[event]]\nat = \"20s\"\nkind = \"crash\"\nmember = \"c2\"\nrestart_after = \"5s\"\n";

#[test]
fn ten_million_partitions_fit_the_default_budget_or_are_refused_naming_the_keys() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "one.toml", &ten_million("\"eager\"", ""));
    let o = sim_env(d, &["validate", "--estimate", "one.toml"], None);
    expect(&o, 0, "");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("estimate one.toml: peak memory 7208 MB"), "{stdout}");
    // A lower budget refuses the same file, naming it, the estimate, the budget and the keys.
    let o = sim_env(d, &["validate", "one.toml", "--memory-budget-mb", "4096"], None);
    expect(
        &o,
        2,
        "error: one.toml: the run is estimated to need 7208 MB of memory at its peak, above the \
         budget of 4096 MB; most of it: 7153 MB for 10000000 partitions in all (lower [[topic]] \
         partitions, add-partitions events)",
    );
    assert!(stderr(&o)
        .contains("or raise the budget with --memory-budget-mb or REBALANCE_SIM_MEMORY_BUDGET_MB"));
    let o = sim_env(d, &["validate", "one.toml"], Some("4096"));
    expect(&o, 2, "above the budget of 4096 MB");
    let o = sim_env(d, &["validate", "one.toml"], Some("lots"));
    expect(&o, 2, "REBALANCE_SIM_MEMORY_BUDGET_MB = `lots`: expected a whole number of megabytes");
    // Three protocols and two crashes with restarts: every run's rows are kept until the last
    // one ends; eager rebalances move every partition, but each run holds at most 2^20
    // ownership intervals (32 MB) and spills the rest: 12994 MB, under the default budget
    // (18086 MB when every interval was held), above a budget of 12000 MB.
    write(d, "three.toml", &ten_million("\"eager\", \"cooperative\", \"consumer\"", CRASHES));
    let o = sim_env(d, &["validate", "three.toml", "--memory-budget-mb", "12000"], None);
    expect(&o, 2, "three.toml: the run is estimated to need 12994 MB of memory at its peak, above the budget of 12000 MB; most of it: 7153 MB for 10000000 partitions in all (lower [[topic]] partitions, add-partitions events); 5723 MB for 10000000 partitions x 3 protocols' rows (lower [[topic]] partitions, protocols (or run one --protocol at a time))");
    let o = sim_env(d, &["run", "three.toml", "--out", "o"], Some("12000"));
    expect(&o, 2, "above the budget of 12000 MB");
    assert!(!d.join("o").exists(), "refused before any work");
    // The default budget lets it through.
    let o = sim_env(d, &["validate", "--estimate", "three.toml"], None);
    expect(&o, 0, "");
    assert!(String::from_utf8_lossy(&o.stdout).contains("peak memory 12994 MB"));
}

#[test]
fn a_poisson_backlog_that_outgrows_the_budget_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 10^6 records/s on one partition, one member at 1 ms a record, an hour: the backlog grows
    // by 999,000 records a second to 3.6e9. The model holds at most 38,912 of their times (20
    // bytes each: 0.78 MB) and a 32-byte checkpoint per 1,024 records (0.0625 bytes a record
    // in the estimate: 225 MB), so it runs: 24 MB fixed + 0.78 + 225 MB + a member = 239 MB.
    let text = "duration = \"1h\"\nprotocols = [\"eager\"]\n[[topic]]\nname = \"t\"\npartitions = 1\nrate = 1000000.0\narrival = \"poisson\"\n[consumer]\nprocessing = \"1ms\"\n[group]\nmembers = 1\n";
    write(d, "p.toml", text);
    let o = sim_env(d, &["validate", "--estimate", "p.toml"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("estimate p.toml: peak memory 239 MB, wall time 396.0 s"), "{stdout}");
    // A hundred such partitions: 3.6e11 records, 21,458 MB of checkpoints and 82 MB of times
    // held (100 x 38,912 times x 22 bytes): refused.
    write(d, "p100.toml", &text.replace("partitions = 1\n", "partitions = 100\n"));
    let message = "p100.toml: the run is estimated to need 21563 MB of memory at its peak, above the budget of 16384 MB; most of it: 21540 MB for a Poisson backlog of 3.600e11 records (lower [[topic]] rate or arrival = \"poisson\", duration, [consumer] processing, [group] members)";
    expect(&sim_env(d, &["validate", "p100.toml"], None), 2, message);
    expect(&sim_env(d, &["run", "p100.toml", "--out", "o"], None), 2, message);
    assert!(!d.join("o").exists(), "refused before any work");
    // Constant arrivals are arithmetic: no time is held, the same rates fit.
    write(
        d,
        "c.toml",
        &text.replace("poisson", "constant").replace("partitions = 1\n", "partitions = 100\n"),
    );
    expect(&sim_env(d, &["validate", "c.toml"], None), 0, "");
}

#[test]
fn a_sweep_is_refused_when_its_parallel_runs_do_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base = "duration = \"1m\"\nprotocols = [\"eager\"]\n[[topic]]\nname = \"t\"\npartitions = 1000000\nrate = 0.0\n[group]\nmembers = 3\n";
    write(d, "base.toml", base);
    write(d, "s.toml", "base = \"base.toml\"\n[grid]\n\"group.members\" = [3, 4]\n");
    let args = ["sweep", "s.toml", "--jobs", "2", "--memory-budget-mb", "1200", "--out", "o"];
    let o = sim_env(d, &args, None);
    expect(&o, 2, "s.toml: the run is estimated to need 1541 MB of memory at its peak, above the budget of 1200 MB (771 MB per run x 2 runs at once: lower --jobs)");
    assert!(!d.join("o").exists(), "refused before any work: no journal");
}

/// 20,000 partitions under three protocols for one second: 55 MB one protocol run at a time,
/// 63 MB two at once, 72 MB three.
const THREE_SMALL: &str = "duration = \"1s\"\nprotocols = [\"eager\", \"cooperative\", \"consumer\"]\n[[topic]]\nname = \"t\"\npartitions = 20000\nrate = 0.0\n[group]\nmembers = 3\n";

#[test]
fn run_counts_its_protocol_runs_at_once_and_a_given_jobs_above_the_budget_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "three.toml", THREE_SMALL);
    let run = |jobs: &str, budget: &str| {
        let args =
            ["run", "three.toml", "--jobs", jobs, "--memory-budget-mb", budget, "--out", "o"];
        sim_env(d, &args, None)
    };
    let o = run("3", "65");
    expect(&o, 2, "three.toml: the run is estimated to need 72 MB of memory at its peak, above the budget of 65 MB (3 protocol runs at once: lower --jobs; --jobs 2 needs 63 MB); most of it: 43 MB for 20000 partitions x 3 protocol runs at once (lower [[topic]] partitions, add-partitions events, --jobs)");
    let o = run("2", "60");
    expect(
        &o,
        2,
        "above the budget of 60 MB (2 protocol runs at once: lower --jobs; --jobs 1 needs 55 MB)",
    );
    let o = run("3", "50");
    expect(&o, 2, "above the budget of 50 MB (3 protocol runs at once: lower --jobs; even --jobs 1 needs 55 MB)");
    assert!(!d.join("o").exists(), "refused before any work");
    // More jobs than protocols hold as many runs at once as there are protocols.
    expect(&run("256", "72"), 0, "");
    expect(&run("1", "60"), 0, "");
    // One protocol: any --jobs is one run at a time, refused with the message of before.
    let o = sim_env(
        d,
        &[
            "run",
            "three.toml",
            "--protocol",
            "eager",
            "--jobs",
            "8",
            "--memory-budget-mb",
            "30",
            "--out",
            "p",
        ],
        None,
    );
    expect(&o, 2, "above the budget of 30 MB; most of it: 15 MB for 20000 partitions in all");
}

#[test]
fn run_lowers_its_default_jobs_to_what_fits_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "three.toml", THREE_SMALL);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let o = sim_env(d, &["run", "three.toml", "--memory-budget-mb", "60", "--out", "o"], None);
    expect(&o, 0, "");
    let note = "note: three.toml: running one protocol run at a time, not";
    assert_eq!(stderr(&o).contains(note), cores > 1, "{cores} cores: {}", stderr(&o));
    if cores > 1 {
        let at_most = cores.min(3);
        let needed = if at_most == 2 { 63 } else { 72 };
        expect(&o, 0, &format!("{note} {at_most} (the default: one per core, at most one per protocol): {at_most} at once are estimated to need {needed} MB, above the memory budget of 60 MB (--jobs sets the number; docs/limits.md)"));
    }
    // One at a time does not fit either: the refusal of before, without --jobs in it.
    let o = sim_env(d, &["run", "three.toml", "--memory-budget-mb", "50", "--out", "p"], None);
    expect(&o, 2, "three.toml: the run is estimated to need 55 MB of memory at its peak, above the budget of 50 MB; most of it:");
    assert!(!stderr(&o).contains("--jobs"), "{}", stderr(&o));
}

#[test]
fn a_millisecond_heartbeat_over_thirty_days_is_warned_about_with_its_count() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = "duration = \"30d\"\nprotocols = [\"eager\"]\n[[topic]]\nname = \"t\"\npartitions = 1\nrate = 0.0\n[consumer.config]\n\"heartbeat.interval.ms\" = 1\n[group]\nmembers = 1\n";
    write(d, "hb.toml", text);
    let o = sim_env(d, &["validate", "hb.toml"], None);
    expect(&o, 0, "warning: hb.toml: the run is estimated to take about 1.3 h of wall time, most of it for about 2.592e9 heartbeats (lower heartbeat.interval.ms, duration, [group] members): it will be slow");
    // The default 3 s interval over the same 30 days is not slow.
    write(
        d,
        "ok.toml",
        &text.replace("\"heartbeat.interval.ms\" = 1", "\"heartbeat.interval.ms\" = 3000"),
    );
    let o = sim_env(d, &["validate", "ok.toml"], None);
    assert!(!stderr(&o).contains("will be slow"), "{}", stderr(&o));
}

#[test]
fn a_budget_below_the_process_itself_names_the_process_not_an_empty_list() {
    // A small scenario: every part is below 1% of its 23 MB, the process's own 24e6 bytes.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "small.toml", "duration = \"1s\"\nprotocols = [\"eager\"]\n[[topic]]\nname = \"t\"\npartitions = 4\nrate = 10.0\n[group]\nmembers = 2\n");
    let o = sim_env(d, &["validate", "small.toml", "--memory-budget-mb", "10"], None);
    expect(
        &o,
        2,
        "error: small.toml: the run is estimated to need 23 MB of memory at its peak, above the \
         budget of 10 MB; most of it: 23 MB for the process itself (code, allocator, buffers: no \
         key of the file lowers it); or raise the budget with --memory-budget-mb",
    );
}
