//! Ownership intervals spilled to disk during a run (issue 29 item 4): with a tiny spill
//! threshold the collector writes its intervals to a temporary file many times over and the
//! report reads them back from it; every output file of the run (the five CSV files, their
//! Parquet tables and the charts) is byte for byte the file of the same run held in memory.

mod support;

use lab::Stepping;
use metrics::RunReport;
use scenario::Scenario;
use std::path::Path;
use support::parse;

fn sim(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sims").join(name);
    scenario::load(&path).unwrap()
}

/// The reports of every protocol of `scenario`, collected with `threshold` (`None`: the
/// default, in memory for runs this small).
fn reports(scenario: &Scenario, threshold: Option<usize>) -> Vec<RunReport> {
    scenario
        .protocols
        .iter()
        .map(|p| {
            let (seed, fast) = (scenario.seed, Stepping::Fast);
            match threshold {
                Some(t) => lab::run_protocol_spilling(scenario, *p, seed, fast, t).unwrap(),
                None => lab::run_protocol(scenario, *p, seed).unwrap(),
            }
        })
        .collect()
}

/// Every file written for `reports` into `dir`, by name, with its bytes.
fn outputs(dir: &Path, reports: &[RunReport], charts: bool) -> Vec<(String, Vec<u8>)> {
    report::csv_out::write_run_outputs(dir, reports).unwrap();
    report::parquet_out::write_run_parquet(dir, reports).unwrap();
    if charts {
        report::charts::draw_run(dir, reports).unwrap();
    }
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// Runs `scenario` in memory and spilled at each threshold of `thresholds`; every output file
/// must be the same bytes.
fn assert_spill_changes_nothing(scenario: &Scenario, thresholds: &[usize], charts: bool) {
    let memory = reports(scenario, None);
    assert!(memory.iter().all(|r| !r.ownership.is_spilled()), "{}: in memory", scenario.name);
    let dir = tempfile::tempdir().unwrap();
    let expected = outputs(&dir.path().join("memory"), &memory, charts);
    assert!(expected.len() >= 10, "{}: {} files", scenario.name, expected.len());
    for &threshold in thresholds {
        let spilled = reports(scenario, Some(threshold));
        for (m, s) in memory.iter().zip(&spilled) {
            let rows = s.ownership.len();
            let at = format!("{} threshold {threshold}, {rows} rows", scenario.name);
            assert_eq!(s.ownership.is_spilled(), rows >= threshold, "{at}");
            assert_eq!(m, s, "{at}: report");
        }
        assert!(spilled.iter().any(|r| r.ownership.is_spilled()), "{}", scenario.name);
        let got = outputs(&dir.path().join(format!("spilled-{threshold}")), &spilled, charts);
        let names = |files: &[(String, Vec<u8>)]| -> Vec<String> {
            files.iter().map(|(n, _)| n.clone()).collect()
        };
        assert_eq!(names(&got), names(&expected), "{}: the files", scenario.name);
        for ((name, want), (_, have)) in expected.iter().zip(&got) {
            assert!(want == have, "{} threshold {threshold}: {name} differs", scenario.name);
        }
    }
}

/// An eager rolling restart and a crash under every protocol they list, charts included: a
/// threshold of 1 spills every interval as a run of its own, 7 cuts partitions' intervals
/// across runs, 300 spills a few times (in the protocols with more).
#[test]
fn spilled_runs_write_the_same_files_as_runs_in_memory() {
    assert_spill_changes_nothing(&sim("rolling-restart.toml"), &[1, 7, 300], true);
    assert_spill_changes_nothing(&sim("crash.toml"), &[7], false);
    assert_spill_changes_nothing(&sim("tubemq.toml"), &[7], false);
}

/// With a measurement window (`measure_from`), the start-up's figures, computed from the
/// spilled intervals read back, are the same too; two topics, a partition added mid-run (a
/// timeline that starts between spills).
#[test]
fn spilled_runs_with_a_window_and_added_partitions_are_the_same() {
    let text = r#"
name = "spill-window"
duration = "40s"
seed = 5
measure_from = "12s"
protocols = ["eager:range", "cooperative:cooperative-sticky", "consumer:uniform"]

[[topic]]
name = "b"
partitions = 4
rate = 50.0

[[topic]]
name = "a"
partitions = 3
rate = 20.0

[consumer.config]
"session.timeout.ms" = 10000
"heartbeat.interval.ms" = 1000

[group]
members = 3

[[event]]
at = "10s"
kind = "crash"
member = "c1"
restart_after = "5s"

[[event]]
at = "20s"
kind = "add-partitions"
topic = "a"
count = 2

[[event]]
at = "25s"
kind = "join"
member = "c3"
"#;
    assert_spill_changes_nothing(&parse(text, "spill-window.toml"), &[3, 50], true);
}

/// `validate`'s memory estimate counts at most the intervals a run holds before it spills.
#[test]
fn the_estimate_knows_the_spill_threshold() {
    assert_eq!(metrics::SPILL_THRESHOLD as f64, scenario::estimate::INTERVALS_HELD_MAX);
}
