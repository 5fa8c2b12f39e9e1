//! `rebalance-sim check` end to end with the real model: a fresh baseline passes (exit 0), a
//! deliberately changed baseline value is caught (exit 1) and shown in the table.

mod support;

use std::path::Path;
use support::{sim, TINY};

const SWEEP: &str = "name = \"tiny-sweep\"\nbase = \"tiny.toml\"\nseeds = 3\n[grid]\n\"consumer.config.session.timeout.ms\" = [6000, 15000]\n[check]\nrelative = 0.05\nabsolute = 0.001\n";

const CHECK: &str = "[[run]]\nscenario = \"../tiny.toml\"\ndir = \"tiny\"\n[[sweep]]\nsweep = \"../s.toml\"\ndir = \"sweeps/tiny-sweep\"\n";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Replaces field `column` of data row `row` (0-based) of a CSV file.
fn edit_csv(path: &Path, row: usize, column: &str, value: &str) -> String {
    let body = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = body.lines().map(String::from).collect();
    let col = lines[0].split(',').position(|c| c == column).unwrap();
    let mut fields: Vec<String> = lines[row + 1].split(',').map(String::from).collect();
    let old = std::mem::replace(&mut fields[col], value.to_string());
    lines[row + 1] = fields.join(",");
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
    old
}

#[test]
fn check_passes_on_fresh_baselines_and_catches_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("tiny.toml"), TINY).unwrap();
    std::fs::write(d.join("s.toml"), SWEEP).unwrap();
    let o = sim(d, &["run", "tiny.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = sim(d, &["sweep", "s.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    std::fs::write(d.join("results/check.toml"), CHECK).unwrap();

    let o = sim(d, &["check"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    // Run: 2 protocols x 18 summary columns (25 minus the 3 keys, scenario, seed and the
    // bookkeeping events and records_processed); sweep: 2 cells x 2 protocols x 16 means.
    assert!(
        text(&o.stdout).contains("check: 2 baselines, 120 values compared, nothing moved"),
        "{}",
        text(&o.stdout)
    );

    // The baseline claims 5 more reprocessed records for eager:range: the model now does
    // better, which is listed as better and passes.
    let summary = d.join("results/tiny/summary.csv");
    let old: u64 = edit_csv(&summary, 0, "records_reprocessed", "0").parse().unwrap();
    edit_csv(&summary, 0, "records_reprocessed", &(old + 5).to_string());
    let o = sim(d, &["check"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.starts_with("baseline"), "{out}");
    let line =
        out.lines().find(|l| l.contains("records_reprocessed")).expect("moved metric listed");
    assert!(line.contains("eager range false"), "{line}");
    assert!(line.contains("-5") && line.ends_with("better"), "{line}");
    assert!(!out.contains("REGRESSION"), "{out}");
    assert!(out.contains("nothing worse; 1 better beyond tolerance"), "{out}");

    // The baseline claims half the downtime: the model is worse now, exit 1.
    edit_csv(&summary, 0, "records_reprocessed", &old.to_string());
    let was: f64 = edit_csv(&summary, 0, "downtime_partition_s", "0").parse().unwrap();
    edit_csv(&summary, 0, "downtime_partition_s", &(was / 2.0).to_string());
    let o = sim(d, &["check"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let line = out.lines().find(|l| l.contains("downtime_partition_s")).expect("listed");
    assert!(line.contains("(+100.0%)") && line.ends_with("WORSE"), "{line}");
    assert!(out.contains("1 worse and 0 better beyond tolerance: REGRESSION"), "{out}");
    edit_csv(&summary, 0, "downtime_partition_s", &was.to_string());

    // --baseline checks one folder only: the sweep is untouched, so it passes.
    let o = sim(d, &["check", "--baseline", "results/sweeps/tiny-sweep"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    // A sweep mean moved by more than its 5% tolerance the worse way is caught too ...
    let agg = d.join("results/sweeps/tiny-sweep/aggregate.csv");
    let mean: f64 = edit_csv(&agg, 0, "downtime_partition_s_mean", "1").parse().unwrap();
    assert!(mean > 1.0);
    let o = sim(d, &["check", "--baseline", "results/sweeps/tiny-sweep"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("downtime_partition_s_mean"), "{}", text(&o.stdout));
    // ... but the simulator's step count (events) is bookkeeping, not compared by default.
    edit_csv(&agg, 0, "downtime_partition_s_mean", &mean.to_string());
    edit_csv(&agg, 0, "events_mean", "1");
    let o = sim(d, &["check", "--baseline", "results/sweeps/tiny-sweep"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
}

/// A fresh run and sweep baseline in a temporary folder, listed in results/check.toml.
fn baselines() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("tiny.toml"), TINY).unwrap();
    std::fs::write(d.join("s.toml"), SWEEP).unwrap();
    assert_eq!(sim(d, &["run", "tiny.toml"]).status.code(), Some(0));
    assert_eq!(sim(d, &["sweep", "s.toml"]).status.code(), Some(0));
    std::fs::write(d.join("results/check.toml"), CHECK).unwrap();
    dir
}

fn check_says(d: &Path, args: &[&str], code: i32, message: &str) {
    let o = sim(d, args);
    let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(code), "{args:?}: {all}");
    assert!(all.contains(message), "{args:?}: expected `{message}` in:\n{all}");
}

#[test]
fn tampered_run_baselines_fail() {
    let dir = baselines();
    let d = dir.path();
    let summary = d.join("results/tiny/summary.csv");
    let original = std::fs::read_to_string(&summary).unwrap();
    let lines: Vec<&str> = original.lines().collect();
    assert_eq!(lines.len(), 3, "a header and two protocols");
    let run = ["check", "--baseline", "results/tiny"];

    // A protocol's row deleted: the re-run has it, so it shows as a new row (exit 1).
    std::fs::write(&summary, format!("{}\n{}\n", lines[0], lines[1])).unwrap();
    check_says(d, &run, 1, "cooperative cooperative-sticky false  (row)   absent  new");
    // Only the header: both rows are new.
    std::fs::write(&summary, format!("{}\n", lines[0])).unwrap();
    check_says(d, &run, 1, "2 worse and 0 better beyond tolerance: REGRESSION");
    // An empty file: bad input naming the file and what it lacks (exit 2).
    std::fs::write(&summary, "").unwrap();
    check_says(d, &run, 2, "summary.csv: the baseline is empty: expected a header (scenario,");
    // A column deleted (the last, startup_rebalances).
    let without: Vec<String> =
        lines.iter().map(|l| l.rsplit_once(',').unwrap().0.to_string()).collect();
    std::fs::write(&summary, without.join("\n") + "\n").unwrap();
    check_says(d, &run, 2, "summary.csv: the baseline has no column startup_rebalances");
    // A row twice.
    std::fs::write(&summary, format!("{}\n{}\n{}\n", lines[0], lines[1], lines[1])).unwrap();
    check_says(d, &run, 2, "summary.csv: the baseline has the row `eager range false` twice");
    // Truncated in the middle of a row.
    std::fs::write(&summary, &original[..original.len() - 20]).unwrap();
    check_says(d, &run, 2, "summary.csv");
    std::fs::write(&summary, &original).unwrap();
    check_says(d, &run, 0, "nothing moved");
}

#[test]
fn a_sweep_tolerance_comes_from_the_check_file_not_the_baseline() {
    let dir = baselines();
    let d = dir.path();
    let sweep = ["check", "--baseline", "results/sweeps/tiny-sweep"];
    // The baseline's manifest claims a huge tolerance and a mean is halved (the re-run's is
    // double, worse): still caught.
    let manifest = d.join("results/sweeps/tiny-sweep/manifest.json");
    let text_m = std::fs::read_to_string(&manifest).unwrap();
    let tampered = text_m.replace("\"relative\": 0.05", "\"relative\": 1000000000.0");
    assert_ne!(tampered, text_m);
    std::fs::write(&manifest, tampered).unwrap();
    let agg = d.join("results/sweeps/tiny-sweep/aggregate.csv");
    let mean: f64 = edit_csv(&agg, 0, "downtime_partition_s_mean", "0").parse().unwrap();
    edit_csv(&agg, 0, "downtime_partition_s_mean", &(mean / 2.0).to_string());
    check_says(d, &sweep, 1, "downtime_partition_s_mean");
    check_says(d, &sweep, 1, "manifest.json records the tolerance relative 1000000000");
    // The check file may set its own: a tolerance of 10 (1000%) lets the doubled mean pass.
    let loose = CHECK.replace(
        "dir = \"sweeps/tiny-sweep\"\n",
        "dir = \"sweeps/tiny-sweep\"\nrelative = 10\nabsolute = 0\n",
    );
    std::fs::write(d.join("results/check.toml"), loose).unwrap();
    check_says(d, &sweep, 0, "nothing moved");
    // An aggregate row deleted: the re-run has it (exit 1); the file emptied: exit 2.
    let body = std::fs::read_to_string(&agg).unwrap();
    let kept: Vec<&str> = body.lines().take(2).collect();
    std::fs::write(&agg, kept.join("\n") + "\n").unwrap();
    check_says(d, &sweep, 1, "absent");
    std::fs::write(&agg, "").unwrap();
    check_says(d, &sweep, 2, "aggregate.csv: the baseline is empty");
}

/// The repository's own check file and `sims/crash.toml` under lock-step timing (`[timing]
/// exact = true`, so that one changed setting moves only what it causes: the figures below are
/// derived by hand), with its baseline run here, in a temporary tree laid out like the
/// repository (the check file's paths are relative to it).
fn repo_crash_baseline() -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("sims")).unwrap();
    std::fs::create_dir_all(d.join("results")).unwrap();
    let file = std::fs::read_to_string(repo.join("sims/crash.toml")).unwrap();
    std::fs::write(d.join("sims/crash.toml"), format!("{file}\n[timing]\nexact = true\n")).unwrap();
    std::fs::copy(repo.join("results/check.toml"), d.join("results/check.toml")).unwrap();
    let o = sim(d, &["run", "sims/crash.toml", "--out", "results/crash"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    dir
}

fn set_session_timeout(d: &Path, ms: u32) {
    let path = d.join("sims/crash.toml");
    let body = std::fs::read_to_string(&path).unwrap();
    let line = "\"session.timeout.ms\" = 45000";
    assert!(body.contains(line));
    std::fs::write(&path, body.replace(line, &format!("\"session.timeout.ms\" = {ms}"))).unwrap();
}

#[test]
fn the_repos_check_file_fails_on_a_regression_and_passes_on_an_improvement() {
    let dir = repo_crash_baseline();
    let d = dir.path();
    let args = ["check", "--config", "results/check.toml", "--baseline", "results/crash"];
    // 4 protocol rows x 22 compared columns (18 and measure_from_s and the 3 start-up
    // columns), as committed.
    check_says(d, &args, 0, "check: 1 baselines, 88 values compared, nothing moved");
    // A real regression: the member's session times out 15 s later, so its partitions wait
    // 15 s longer (KIP-848 takes its session timeout from the broker and stays the same).
    set_session_timeout(d, 60000);
    let o = sim(d, &args);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let line = out
        .lines()
        .find(|l| l.contains("eager range false") && l.contains("downtime_partition_s"))
        .expect("downtime listed");
    assert!(line.contains("(+25.0%)") && line.ends_with("WORSE"), "{line}");
    assert!(!out.contains("consumer uniform"), "{out}");
    assert!(out.contains("15 worse and 3 better beyond tolerance: REGRESSION"), "{out}");
    // An improvement: 30 s instead of 45 s. Listed as better, and the check passes.
    let dir = repo_crash_baseline();
    let d = dir.path();
    set_session_timeout(d, 30000);
    let o = sim(d, &args);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(!out.contains("WORSE") && !out.contains("REGRESSION"), "{out}");
    let line = out
        .lines()
        .find(|l| l.contains("eager range false") && l.contains("downtime_partition_s"))
        .expect("downtime listed");
    assert!(line.contains("(-25.1%)") && line.ends_with("better"), "{line}");
    assert!(out.contains("nothing worse; 18 better beyond tolerance"), "{out}");
}

#[test]
fn a_limit_fails_even_when_the_value_did_not_change() {
    let dir = repo_crash_baseline();
    let d = dir.path();
    // "records_reprocessed must be 0": the crash reprocesses 313-433 records in every row.
    let check = "[metrics]\nrecords_reprocessed = { max = 0 }\n[[run]]\nscenario = \"../sims/crash.toml\"\ndir = \"crash\"\n";
    std::fs::write(d.join("results/slo.toml"), check).unwrap();
    let o = sim(d, &["check", "--config", "results/slo.toml"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let line = out.lines().find(|l| l.contains("eager range false")).expect("listed");
    assert!(
        line.contains("records_reprocessed  313")
            && line.ends_with("+0 max 0  WORSE (above max 0)"),
        "{line}"
    );
    assert!(out.contains("4 worse and 0 better beyond tolerance: REGRESSION"), "{out}");
}

#[test]
fn per_metric_direction_tolerance_and_ignore() {
    let dir = baselines();
    let d = dir.path();
    let summary = d.join("results/tiny/summary.csv");
    let run = ["check", "--baseline", "results/tiny"];
    // The model's downtime is 3% above the baseline's: worse with the run default (0) ...
    let was: f64 = edit_csv(&summary, 0, "downtime_partition_s", "0").parse().unwrap();
    edit_csv(&summary, 0, "downtime_partition_s", &(was / 1.03).to_string());
    check_says(d, &run, 1, "1 worse and 0 better");
    // ... within `relative = 0.05` ...
    let rules = |text: &str| {
        std::fs::write(d.join("results/check.toml"), format!("[metrics]\n{text}\n{CHECK}")).unwrap()
    };
    rules("downtime_partition_s = { relative = 0.05 }");
    check_says(d, &run, 0, "nothing moved");
    // ... and better when lower is what is worse.
    rules("downtime_partition_s = { worse = \"lower\" }");
    check_says(d, &run, 0, "nothing worse; 1 better");
    // An absolute tolerance covers it too.
    rules(&format!("downtime_partition_s = {{ absolute = {} }}", was));
    check_says(d, &run, 0, "nothing moved");
    edit_csv(&summary, 0, "downtime_partition_s", &was.to_string());
    // events is not compared by default; `ignore = false` compares it, `ignore = true` drops
    // a metric (one value fewer per row).
    let events: u64 = edit_csv(&summary, 0, "events", "0").parse().unwrap();
    edit_csv(&summary, 0, "events", &(events - 1).to_string());
    std::fs::write(d.join("results/check.toml"), CHECK).unwrap();
    check_says(d, &run, 0, "44 values compared, nothing moved");
    rules("events = { ignore = false }");
    check_says(d, &run, 1, "1 worse and 0 better");
    rules("final_lag = { ignore = true }");
    check_says(d, &run, 0, "42 values compared, nothing moved");
    // An entry's own rules replace the file's for its baseline.
    let entry = CHECK
        .replace("dir = \"tiny\"\n", "dir = \"tiny\"\nmetrics = { events = { ignore = true } }\n");
    std::fs::write(
        d.join("results/check.toml"),
        format!("[metrics]\nevents = {{ ignore = false }}\n{entry}"),
    )
    .unwrap();
    check_says(d, &run, 0, "nothing moved");
}

#[test]
fn unknown_keys_metrics_and_values_are_bad_input_naming_what_is_allowed() {
    let dir = baselines();
    let d = dir.path();
    let write = |text: &str| std::fs::write(d.join("results/check.toml"), text).unwrap();
    write(&format!("[gate]\nx = 1\n{CHECK}"));
    check_says(
        d,
        &["check"],
        2,
        "results/check.toml: key `gate`: unknown; allowed: metrics, run, sweep",
    );
    write(&format!("[metrics]\ndowntime = {{ max = 1 }}\n{CHECK}"));
    check_says(d, &["check"], 2, "key `metrics`.downtime: unknown metric; allowed: duration_s, partitions, records_produced,");
    write(
        &CHECK.replace(
            "dir = \"tiny\"\n",
            "dir = \"tiny\"\nmetrics = { final_lag = { limit = 0 } }\n",
        ),
    );
    check_says(d, &["check"], 2, "key `run[0]`.metrics.final_lag: unknown key `limit`; allowed: worse, relative, absolute, max, min, ignore");
    write(&format!("[metrics]\nfinal_lag = {{ worse = \"up\" }}\n{CHECK}"));
    check_says(d, &["check"], 2, "worse = \"up\": allowed: higher, lower, any");
    write(&CHECK.replace("dir = \"tiny\"\n", "dir = \"tiny\"\nrelative = 0.1\n"));
    check_says(
        d,
        &["check"],
        2,
        "key `run[0]`: unknown key `relative`; allowed: scenario, dir, metrics",
    );
}

#[test]
fn paths_are_relative_to_the_check_file_and_a_sweep_folder_is_found_from_anywhere() {
    let dir = baselines();
    let d = dir.path();
    let elsewhere = tempfile::tempdir().unwrap();
    let config = d.join("results/check.toml");
    let o = sim(elsewhere.path(), &["check", "--config", config.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    // A sweep folder not listed in a check file: its manifest names `s.toml` as given to
    // `sweep` in `d`; found from a folder above the baseline.
    let sweep_dir = d.join("results/sweeps/tiny-sweep");
    let args = ["check", "--config", "none.toml", "--baseline", sweep_dir.to_str().unwrap()];
    check_says(elsewhere.path(), &args, 0, "nothing moved");
    std::fs::remove_file(d.join("s.toml")).unwrap();
    check_says(elsewhere.path(), &args, 2, "its manifest.json names the sweep file `s.toml` (as given to `sweep`, relative to the folder it ran in), found neither from here nor from a folder above the baseline");
}
