//! `rebalance-sim sweep`, `merge` and `check` from the outside: bad input exits 2 with a message
//! naming the file, key or argument and what is allowed (DESIGN section 6).

mod support;

use std::path::Path;
use std::process::{Command, Output};
use support::{sim, TINY};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const BASE: &str = "duration = \"60s\"\nprotocols = [\"eager\"]\n[[topic]]\nname = \"t\"\npartitions = 2\nrate = 1.0\n[group]\nmembers = 2\n";

#[test]
fn bad_sweep_input_exits_2_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.toml"), BASE).unwrap();
    std::fs::write(dir.path().join("s.toml"), "base = \"base.toml\"\nseed = 3\n").unwrap();
    let o = sim(dir.path(), &["sweep", "s.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("s.toml: key `seed`: unknown key (did you mean `seeds`?)"),
        "{}",
        stderr(&o)
    );

    std::fs::write(
        dir.path().join("s.toml"),
        "base = \"base.toml\"\n[grid]\n\"group.members\" = [\"three\"]\n",
    )
    .unwrap();
    let o = sim(dir.path(), &["sweep", "s.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("s.toml: key `grid`: cell group.members=\"three\": "),
        "{}",
        stderr(&o)
    );

    let o = sim(dir.path(), &["sweep", "s.toml", "--shard", "4/4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--shard `4/4`: expected K/N with 0 <= K < N"), "{}", stderr(&o));

    let o = sim(dir.path(), &["sweep", "missing.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing.toml: cannot read the sweep file"), "{}", stderr(&o));
}

#[test]
fn bad_merge_and_check_input_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("a")).unwrap();
    let o = sim(dir.path(), &["merge", "a", "--out", "m"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("manifest.json"), "{}", stderr(&o));

    let o = sim(dir.path(), &["check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("results/check.toml: cannot read the check file"),
        "{}",
        stderr(&o)
    );

    std::fs::create_dir(dir.path().join("results")).unwrap();
    std::fs::write(dir.path().join("results/check.toml"), "[[runs]]\ndir = \"x\"\n").unwrap();
    let o = sim(dir.path(), &["check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("key `runs`: unknown; allowed: metrics, run, sweep"),
        "{}",
        stderr(&o)
    );
}

const TINY_SWEEP: &str = r#"name = "tiny-sweep"
base = "tiny.toml"
seeds = 4
[grid]
"consumer.config.session.timeout.ms" = [6000, 10000, 15000]
"#;

fn tiny_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tiny.toml"), TINY).unwrap();
    std::fs::write(dir.path().join("s.toml"), TINY_SWEEP).unwrap();
    dir
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()))
}

fn same_outputs(a: &Path, b: &Path) {
    for f in ["runs.csv", "aggregate.csv", "manifest.json"] {
        assert!(
            read(a, f) == read(b, f),
            "{f} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

#[test]
fn sweep_jobs_shards_and_merge_give_the_same_bytes() {
    let dir = tiny_dir();
    let d = dir.path();
    let o = sim(d, &["sweep", "s.toml", "--jobs", "1", "--out", "one"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // 3 cells x 4 seeds x 2 protocols = 24 runs; the table has a row per cell and protocol.
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    // Header, a row per cell and protocol, and the legend of the ± cells.
    assert_eq!(table.lines().count(), 1 + 3 * 2 + 1, "{table}");
    assert!(
        table.ends_with("half-width of its 95% confidence interval; no ± when the runs agree)\n")
    );
    assert!(table.contains("eager:range") && table.contains("cooperative:cooperative-sticky"));
    let runs = String::from_utf8(read(&d.join("one"), "runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 25);
    let o = sim(d, &["sweep", "s.toml", "--jobs", "2", "--out", "two"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    same_outputs(&d.join("one"), &d.join("two"));
    for k in 0..2 {
        let shard = format!("{k}/2");
        let o = sim(d, &["sweep", "s.toml", "--shard", &shard, "--out", &format!("shard{k}")]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let o = sim(d, &["merge", "shard0", "shard1", "--out", "merged", "--charts"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    same_outputs(&d.join("one"), &d.join("merged"));
    assert!(d.join("merged/charts/sweep-records_reprocessed.png").exists());
}

#[test]
fn a_cell_file_and_seed_reproduce_a_row_with_run() {
    let dir = tiny_dir();
    let d = dir.path();
    let o = sim(d, &["sweep", "s.toml", "--out", "out"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let runs = String::from_utf8(read(&d.join("out"), "runs.csv")).unwrap();
    // Data row 9 (line 9 after the header): cell 1 (10000 ms), replication 0, eager:range;
    // rows 1-8 are cell 0 (4 seeds x 2 protocols).
    let row: Vec<&str> = runs.lines().nth(9).unwrap().split(',').collect();
    assert_eq!((row[1], row[2], row[4]), ("0", "10000", "eager"));
    let (cell, seed) = (row[0], row[7]);
    let cell_file = format!("out/cells/{cell}.toml");
    let o = sim(
        d,
        &["run", &cell_file, "--seed", seed, "--protocol", "eager:range", "--out", "replay"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary = String::from_utf8(read(&d.join("replay"), "summary.csv")).unwrap();
    let replayed = summary.lines().nth(1).unwrap();
    assert_eq!(
        replayed,
        row[3..].join(","),
        "the run's summary row equals the sweep row's summary columns"
    );
}

#[test]
fn a_killed_sweep_resumes_to_the_same_bytes() {
    let dir = tiny_dir();
    let d = dir.path();
    let o = sim(d, &["sweep", "s.toml", "--jobs", "1", "--out", "full"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut child = Command::new(env!("CARGO_BIN_EXE_rebalance-sim"))
        .current_dir(d)
        .args(["sweep", "s.toml", "--jobs", "1", "--out", "killed"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let journal = d.join("killed/journal.jsonl");
    // Kill it once a few runs are in the journal (or let it finish if it is faster than us).
    for _ in 0..20_000 {
        let lines = std::fs::read_to_string(&journal).map(|t| t.lines().count()).unwrap_or(0);
        if lines > 3 || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
    child.kill().ok();
    child.wait().unwrap();
    // What the kill left: the runs finished in the journal (its complete lines after the
    // header; a torn last line is dropped on resume), or no journal once the sweep had ended.
    let journaled = std::fs::read_to_string(&journal)
        .ok()
        .map(|t| t.bytes().filter(|&b| b == b'\n').count().saturating_sub(1));
    if journaled.is_some_and(|n| n < 24) {
        assert!(!d.join("killed/runs.csv").exists(), "no final file before every run is done");
    }
    let o = sim(d, &["sweep", "s.toml", "--jobs", "2", "--out", "killed"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let line =
        stderr(&o).lines().find(|l| l.contains(" resumed, ")).unwrap_or_default().to_string();
    if let Some(n) = journaled {
        // "sweep tiny-sweep: 24 runs (R resumed, N run now)": exactly the journaled runs resume.
        let expected = format!("({n} resumed, {} run now)", 24 - n);
        assert!(line.contains(&expected), "{line} (expected {expected})");
    }
    same_outputs(&d.join("full"), &d.join("killed"));
}
