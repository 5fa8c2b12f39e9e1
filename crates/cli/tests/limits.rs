//! Hostile input from issue 27 (grids that overflow or collide, tampered baselines, huge or
//! slow inputs, interrupted runs): each case's input, exit code and message.

mod support;

use std::path::Path;
use std::process::Output;
use support::sim;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// Runs `rebalance-sim ARGS` in `dir` and asserts the exit code and a part of stderr.
fn expect(dir: &Path, args: &[&str], code: i32, message: &str) -> Output {
    let o = sim(dir, args);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(message), "{args:?}: expected `{message}` in:\n{}", stderr(&o));
    o
}

const BASE: &str = "duration = \"20s\"\nprotocols = [\"eager\"]\n[[topic]]\nname = \"t\"\npartitions = 2\nrate = 1.0\n[group]\nmembers = 2\n";

#[test]
fn sweep_grids_that_overflow_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "base.toml", BASE);
    let mut grid = String::from("base = \"base.toml\"\n[grid]\n");
    for i in 0..64 {
        grid.push_str(&format!("\"consumer.config.k{i}\" = [1, 2]\n"));
    }
    write(dir.path(), "s.toml", &grid);
    expect(
        dir.path(),
        &["sweep", "s.toml"],
        2,
        "s.toml: key `grid`: more than 18446744073709551615 cells x 1 seeds is more than 1000000 runs",
    );
    assert!(!dir.path().join("results").exists(), "nothing written");
}

#[test]
fn sweep_grid_keys_that_conflict_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "base.toml", BASE);
    write(
        dir.path(),
        "s.toml",
        "base = \"base.toml\"\n[grid]\n\"topic.rate\" = [1.0, 2.0]\n\"topic.0.rate\" = [3.0]\n",
    );
    expect(
        dir.path(),
        &["sweep", "s.toml"],
        2,
        "s.toml: key `grid.\"topic.rate\"`: conflicts with `topic.0.rate`",
    );
}

#[test]
fn sweep_cells_with_colliding_short_ids_run_under_distinct_ids() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "base.toml", BASE);
    write(
        dir.path(),
        "s.toml",
        "base = \"base.toml\"\n[grid]\n\"group.members\" = [24, 40]\n\"topic.rate\" = [67.0, 660.0]\n",
    );
    let o = sim(dir.path(), &["sweep", "s.toml", "--out", "o", "--jobs", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let runs = std::fs::read_to_string(dir.path().join("o/runs.csv")).unwrap();
    let mut ids: Vec<&str> = runs.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(ids.len(), 4);
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "{runs}");
    assert_eq!(ids.iter().filter(|i| i.starts_with("63eb95e1-")).count(), 2, "{ids:?}");
    for id in ids {
        assert!(dir.path().join(format!("o/cells/{id}.toml")).is_file(), "{id}");
    }
}
