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
    // Run: 2 protocols x 22 non-key summary columns; sweep: 2 cells x 2 protocols x 18 means.
    assert!(
        text(&o.stdout).contains("check: 2 baselines, 116 values compared, nothing moved"),
        "{}",
        text(&o.stdout)
    );

    // A deliberate change: the baseline claims 5 more reprocessed records for eager:range.
    let summary = d.join("results/tiny/summary.csv");
    let old: u64 = edit_csv(&summary, 0, "records_reprocessed", "0").parse().unwrap();
    edit_csv(&summary, 0, "records_reprocessed", &(old + 5).to_string());
    let o = sim(d, &["check"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.starts_with("baseline"), "{out}");
    let line =
        out.lines().find(|l| l.contains("records_reprocessed")).expect("moved metric listed");
    assert!(line.contains("eager range false"), "{line}");
    assert!(line.contains("-5"), "{line}");
    assert!(out.contains("1 moved beyond tolerance: REGRESSION"), "{out}");

    // --baseline checks one folder only: the sweep is untouched, so it passes.
    let o = sim(d, &["check", "--baseline", "results/sweeps/tiny-sweep"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    // A sweep mean moved by more than its 5% tolerance is caught too.
    let agg = d.join("results/sweeps/tiny-sweep/aggregate.csv");
    let mean: f64 = edit_csv(&agg, 0, "events_mean", "1").parse().unwrap();
    assert!(mean > 100.0);
    let o = sim(d, &["check", "--baseline", "results/sweeps/tiny-sweep"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("events_mean"), "{}", text(&o.stdout));
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
    check_says(d, &run, 1, "2 moved beyond tolerance: REGRESSION");
    // An empty file: bad input naming the file and what it lacks (exit 2).
    std::fs::write(&summary, "").unwrap();
    check_says(d, &run, 2, "summary.csv: the baseline is empty: expected a header (scenario,");
    // A column deleted.
    let without: Vec<String> =
        lines.iter().map(|l| l.rsplit_once(',').unwrap().0.to_string()).collect();
    std::fs::write(&summary, without.join("\n") + "\n").unwrap();
    check_says(d, &run, 2, "summary.csv: the baseline has no column events");
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
    // The baseline's manifest claims a huge tolerance and a mean is doubled: still caught.
    let manifest = d.join("results/sweeps/tiny-sweep/manifest.json");
    let text_m = std::fs::read_to_string(&manifest).unwrap();
    let tampered = text_m.replace("\"relative\": 0.05", "\"relative\": 1000000000.0");
    assert_ne!(tampered, text_m);
    std::fs::write(&manifest, tampered).unwrap();
    let agg = d.join("results/sweeps/tiny-sweep/aggregate.csv");
    let mean: f64 = edit_csv(&agg, 0, "events_mean", "0").parse().unwrap();
    edit_csv(&agg, 0, "events_mean", &(2.0 * mean).to_string());
    check_says(d, &sweep, 1, "events_mean");
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
