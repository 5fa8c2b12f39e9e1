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
