//! Sweeps end to end with the real scenario parser and a fake model: output bytes independent of
//! `--jobs`, resume after a kill (torn journal line included), shards merged byte-identically,
//! stable seeds, and `check` catching a deliberate change.

use lab::check::{check_run, check_sweep, read_check_file, BaselineKind};
use lab::sweep::{run_sweep, LabError, SweepOptions, SweepPlan};
use lab::sweep_manifest::{Manifest, Shard};
use lab::sweep_merge::merge;
use metrics::{RunReport, SummaryRow};
use scenario::{Protocol, ProtocolSpec, Scenario};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

const BASE: &str = r#"
name = "crash"
duration = "60s"
seed = 7
protocols = ["eager:range"]

[[topic]]
name = "orders"
partitions = 6
rate = 10.0

[group]
members = 3
"#;

const SWEEP: &str = r#"
name = "t"
base = "base.toml"
seeds = 3
protocols = ["eager:range", "cooperative:cooperative-sticky"]

[grid]
"consumer.config.session.timeout.ms" = [10000, 30000]
"group.members" = [3, 6]
"#;

/// A fake model whose metrics are simple functions of the scenario, protocol and seed:
/// `downtime_partition_s` = session timeout in s (x2 for eager), `records_reprocessed` =
/// 10 * members + seed % 7 (+ `extra`), `rebalances` = members.
fn fake_summary(s: &Scenario, p: ProtocolSpec, seed: u64, extra: u64) -> SummaryRow {
    let session_s = s.consumer.config.session_timeout.as_nanos() as f64 / 1e9;
    let eager = p.protocol == Protocol::Eager;
    let members = u64::from(s.group.members);
    SummaryRow {
        scenario: s.name.clone(),
        protocol: p.protocol.name().to_string(),
        assignor: p.assignor.name().to_string(),
        static_membership: p.static_membership,
        seed,
        duration_s: 60.0,
        partitions: 6,
        records_produced: 3600,
        records_processed: 3600 + 10 * members + seed % 7 + extra,
        records_reprocessed: 10 * members + seed % 7 + extra,
        records_lost: 0,
        final_lag: 0,
        downtime_partition_s: if eager { 2.0 * session_s } else { session_s },
        downtime_episode_ms_p50: 100.0,
        downtime_episode_ms_p99: 200.0,
        downtime_episode_ms_max: 250.5,
        stop_the_world_s: if eager { 0.5 } else { 0.0 },
        rebalances: members,
        rebalance_ms_p50: 30.0,
        rebalance_ms_max: 40.0,
        partitions_moved: 2,
        e2e_latency_ms_p50: 1.0,
        e2e_latency_ms_p99: 2.0,
        e2e_latency_ms_max: 3.0,
        events: 1000 + seed % 1000,
        measure_from_s: 0.0,
        startup_downtime_partition_s: 0.0,
        startup_stop_the_world_s: 0.0,
        startup_rebalances: 0,
    }
}

fn fake(s: &Scenario, p: ProtocolSpec, seed: u64) -> Result<RunReport, String> {
    Ok(RunReport { summary: Some(fake_summary(s, p, seed, 0)), ..RunReport::default() })
}

fn setup(sweep: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.toml"), BASE).unwrap();
    std::fs::write(dir.path().join("sweep.toml"), sweep).unwrap();
    let path = dir.path().join("sweep.toml");
    (dir, path)
}

fn plan(path: &Path) -> SweepPlan {
    SweepPlan::load(path, None, "test-commit", scenario::from_table).unwrap()
}

fn opts(out: &Path, jobs: usize, shard: Option<Shard>) -> SweepOptions {
    SweepOptions { out_dir: out.to_path_buf(), jobs, shard }
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()))
}

fn same_outputs(a: &Path, b: &Path) {
    for f in ["runs.csv", "aggregate.csv", "manifest.json"] {
        assert_eq!(read(a, f), read(b, f), "{f} differs");
    }
}

#[test]
fn outputs_do_not_depend_on_jobs_and_aggregates_are_right() {
    let (dir, path) = setup(SWEEP);
    let plan = plan(&path);
    // 2 x 2 cells, 3 seeds, 2 protocols = 24 runs.
    assert_eq!(plan.runs().len(), 24);
    let (one, two) = (dir.path().join("j1"), dir.path().join("j2"));
    let r = run_sweep(&plan, &opts(&one, 1, None), &fake, &|_, _| {}).unwrap();
    assert_eq!((r.runs, r.resumed, r.ran), (24, 0, 24));
    run_sweep(&plan, &opts(&two, 2, None), &fake, &|_, _| {}).unwrap();
    same_outputs(&one, &two);

    let runs = read(&one, "runs.csv");
    let lines: Vec<&str> = runs.lines().collect();
    assert_eq!(lines.len(), 25);
    assert!(lines[0].starts_with(
        "cell,replication,consumer.config.session.timeout.ms,group.members,scenario,protocol,assignor,static_membership,seed,"
    ));
    // Cell 0 is (10000, 3); its first run is replication 0 under eager:range.
    let m = Manifest::read(&one.join("manifest.json")).unwrap();
    let c0 = &m.cells[0];
    assert_eq!(c0.params["group.members"], "3");
    assert_eq!(c0.protocols, vec!["eager:range", "cooperative:cooperative-sticky"]);
    let expected_start = format!("{},0,10000,3,crash,eager,range,false,{},", c0.cell, c0.seeds[0]);
    assert!(lines[1].starts_with(&expected_start), "{} vs {expected_start}", lines[1]);

    let agg = read(&one, "aggregate.csv");
    let header: Vec<&str> = agg.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = agg.lines().nth(1).unwrap().split(',').collect();
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(agg.lines().count(), 1 + 4 * 2);
    assert_eq!((col("protocol"), col("runs")), ("eager", "3"));
    // Eager, session 10 s: downtime 20 s in every replication: mean 20, std 0, CI [20, 20].
    assert_eq!(col("downtime_partition_s_mean"), "20");
    assert_eq!(col("downtime_partition_s_std"), "0");
    assert_eq!(col("downtime_partition_s_ci95_lo"), "20");
    // records_reprocessed = 30 + seed % 7: its mean over the cell's three seeds.
    let mean = c0.seeds.iter().map(|s| 30.0 + (s % 7) as f64).sum::<f64>() / 3.0;
    assert_eq!(col("records_reprocessed_mean").parse::<f64>().unwrap(), mean);
    assert!(!header.contains(&"seed_mean") && !header.contains(&"duration_s_mean"));
}

#[test]
fn a_killed_sweep_resumes_to_the_same_bytes() {
    let (dir, path) = setup(SWEEP);
    let plan = plan(&path);
    let full = dir.path().join("full");
    run_sweep(&plan, &opts(&full, 2, None), &fake, &|_, _| {}).unwrap();

    // "Kill" after 10 runs: the 11th call fails, so 10 runs reach the journal.
    let out = dir.path().join("resumed");
    let calls = AtomicUsize::new(0);
    let dying = |s: &Scenario, p: ProtocolSpec, seed: u64| {
        if calls.fetch_add(1, Ordering::SeqCst) >= 10 {
            return Err("killed".to_string());
        }
        fake(s, p, seed)
    };
    let err = run_sweep(&plan, &opts(&out, 1, None), &dying, &|_, _| {}).unwrap_err();
    assert!(matches!(err, LabError::Run(ref m) if m.starts_with("killed: cell ")), "{err:?}");
    assert!(!out.join("runs.csv").exists(), "no final file before the end");
    // A kill in the middle of a write leaves a torn last line.
    let journal = out.join("journal.jsonl");
    let mut text = std::fs::read_to_string(&journal).unwrap();
    assert_eq!(text.lines().count(), 11, "header + 10 runs");
    text.push_str("{\"cell\":\"0123");
    std::fs::write(&journal, text).unwrap();

    let again = AtomicUsize::new(0);
    let counting = |s: &Scenario, p: ProtocolSpec, seed: u64| {
        again.fetch_add(1, Ordering::SeqCst);
        fake(s, p, seed)
    };
    let r = run_sweep(&plan, &opts(&out, 2, None), &counting, &|_, _| {}).unwrap();
    assert_eq!((r.resumed, r.ran, again.load(Ordering::SeqCst)), (10, 14, 14));
    same_outputs(&full, &out);
    // The journal is gone once the final files exist; started once more, the sweep runs
    // everything again and writes the same bytes.
    assert!(!journal.exists());
    let r = run_sweep(&plan, &opts(&out, 2, None), &counting, &|_, _| {}).unwrap();
    assert_eq!((r.resumed, r.ran), (0, 24));
    same_outputs(&full, &out);
}

#[test]
fn a_journal_of_another_sweep_is_refused() {
    let (dir, path) = setup(SWEEP);
    let out = dir.path().join("o");
    // Interrupted after 3 runs, so its journal stays.
    let calls = AtomicUsize::new(0);
    let dying = |s: &Scenario, p: ProtocolSpec, seed: u64| {
        if calls.fetch_add(1, Ordering::SeqCst) >= 3 {
            return Err("killed".to_string());
        }
        fake(s, p, seed)
    };
    run_sweep(&plan(&path), &opts(&out, 1, None), &dying, &|_, _| {}).unwrap_err();
    std::fs::write(&path, SWEEP.replace("seeds = 3", "seeds = 2")).unwrap();
    let err = run_sweep(&plan(&path), &opts(&out, 1, None), &fake, &|_, _| {}).unwrap_err();
    assert!(
        err.to_string().contains("journal.jsonl: this journal belongs to another sweep"),
        "{err}"
    );
}

#[test]
fn shards_merge_into_the_unsharded_bytes() {
    let (dir, path) = setup(SWEEP);
    let plan = plan(&path);
    let full = dir.path().join("full");
    run_sweep(&plan, &opts(&full, 2, None), &fake, &|_, _| {}).unwrap();
    let mut shards = Vec::new();
    for k in 0..3 {
        let d = dir.path().join(format!("shard{k}"));
        let r =
            run_sweep(&plan, &opts(&d, 1, Some(Shard { index: k, count: 3 })), &fake, &|_, _| {})
                .unwrap();
        assert_eq!(r.runs, 8, "24 runs over 3 shards");
        assert!(!d.join("aggregate.csv").exists());
        shards.push(d);
    }
    let merged = dir.path().join("merged");
    let err = merge(&shards[..2], &merged).unwrap_err();
    assert!(err.to_string().contains("shards missing: 2/3"), "{err}");
    let m = merge(&shards, &merged).unwrap();
    assert_eq!((m.shards, m.runs), (3, 24));
    same_outputs(&full, &merged);
    let cell = Manifest::read(&full.join("manifest.json")).unwrap().cells[1].scenario.clone();
    assert_eq!(read(&full, &cell), read(&merged, &cell));
    let err = merge(&[shards[0].clone(), shards[0].clone()], &merged).unwrap_err();
    assert!(err.to_string().contains("given twice"), "{err}");
}

#[test]
fn the_cell_scenario_file_reproduces_a_row() {
    let (dir, path) = setup(SWEEP);
    let out = dir.path().join("o");
    run_sweep(&plan(&path), &opts(&out, 1, None), &fake, &|_, _| {}).unwrap();
    let m = Manifest::read(&out.join("manifest.json")).unwrap();
    let cell = &m.cells[3];
    let s = scenario::load(&out.join(&cell.scenario)).unwrap();
    assert_eq!(s.group.members, 6);
    assert_eq!(s.consumer.config.session_timeout.as_nanos(), 30_000_000_000);
    let row = fake(&s, s.protocols[1], cell.seeds[2]).unwrap().summary.unwrap();
    let runs = read(&out, "runs.csv");
    let prefix = format!(
        "{},2,30000,6,crash,cooperative,cooperative-sticky,false,{},",
        cell.cell, cell.seeds[2]
    );
    let line = runs.lines().find(|l| l.starts_with(&prefix)).expect("row present");
    let header: Vec<&str> = runs.lines().next().expect("a header").split(',').collect();
    let events = header.iter().position(|c| *c == "events").expect("an events column");
    assert_eq!(line.split(',').nth(events), Some(row.events.to_string().as_str()), "{line}");
}

#[test]
fn adding_a_grid_value_keeps_other_cells_seeds() {
    let (_dir, path) = setup(SWEEP);
    let a = plan(&path).manifest;
    std::fs::write(&path, SWEEP.replace("[3, 6]", "[3, 4, 6]")).unwrap();
    let b = plan(&path).manifest;
    assert_eq!(b.cells.len(), 6);
    for cell in &a.cells {
        let same = b.cells.iter().find(|c| c.params == cell.params).unwrap();
        assert_eq!((&same.cell, &same.seeds), (&cell.cell, &cell.seeds));
    }
}

#[test]
fn bad_cells_are_reported_against_the_sweep_file() {
    let (_dir, path) = setup(
        &SWEEP
            .replace("\"group.members\" = [3, 6]", "\"consumer.config.session.timeout.mss\" = [1]"),
    );
    let err = SweepPlan::load(&path, None, "c", scenario::from_table).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("sweep.toml: key `grid`: cell "), "{text}");
    assert!(text.contains("session.timeout.mss"), "{text}");
    let err = SweepPlan::load(&path.with_file_name("nope.toml"), None, "c", scenario::from_table)
        .unwrap_err();
    assert!(err.to_string().contains("nope.toml: cannot read the sweep file"), "{err}");
}

#[test]
fn check_catches_a_deliberate_change() {
    let (dir, path) = setup(SWEEP);
    let base = dir.path().join("results");
    let sweep_dir = base.join("sweeps/t");
    run_sweep(&plan(&path), &opts(&sweep_dir, 2, None), &fake, &|_, _| {}).unwrap();
    let s = scenario::load(&dir.path().join("base.toml")).unwrap();
    let run_dir = base.join("crash");
    let report = fake(&s, s.protocols[0], 7).unwrap();
    report::csv_out::write_run_outputs(&run_dir, &[report]).unwrap();
    let check_toml = base.join("check.toml");
    let text = "[[run]]\nscenario = \"../base.toml\"\ndir = \"crash\"\n[[sweep]]\nsweep = \"../sweep.toml\"\ndir = \"sweeps/t\"\n";
    std::fs::write(&check_toml, text).unwrap();
    let baselines = read_check_file(&check_toml).unwrap();
    assert_eq!(baselines.len(), 2);
    let load =
        |p: &Path| scenario::load(p).map_err(|e| e.iter().map(ToString::to_string).collect());

    let BaselineKind::Run { scenario } = &baselines[0].kind else { panic!("run first") };
    let rules = &baselines[0].rules;
    let same = check_run(&baselines[0].dir, scenario, rules, &load, &fake).unwrap();
    // 29 summary columns minus 3 key columns, minus scenario, seed and the bookkeeping
    // columns events and records_processed (not compared by default) = 22 values, none moved.
    assert_eq!((same.compared, same.moved.len()), (22, 0));
    let changed = |s: &Scenario, p: ProtocolSpec, seed: u64| {
        Ok(RunReport { summary: Some(fake_summary(s, p, seed, 1)), ..RunReport::default() })
    };
    let moved = check_run(&baselines[0].dir, scenario, rules, &load, &changed).unwrap().moved;
    let metrics: Vec<&str> = moved.iter().map(|m| m.metric.as_str()).collect();
    assert_eq!(metrics, vec!["records_reprocessed"]);
    assert!(moved[0].fails(), "one more reprocessed record is worse");

    let BaselineKind::Sweep { sweep, tolerance } = &baselines[1].kind else {
        panic!("sweep second")
    };
    let same =
        check_sweep(&baselines[1].dir, sweep, *tolerance, rules, scenario::from_table, &fake, 2)
            .unwrap();
    assert!(same.moved.is_empty(), "{:?}", same.moved);
    // 8 aggregate rows x 19 metric means (21, the 3 start-up columns included, without
    // events_mean and records_processed_mean).
    assert_eq!(same.compared, 8 * 19);
    // +1 reprocessed record on means of 30..42 is below the default 5% tolerance ...
    let small =
        check_sweep(&baselines[1].dir, sweep, *tolerance, rules, scenario::from_table, &changed, 2)
            .unwrap();
    assert!(small.moved.is_empty(), "{:?}", small.moved);
    // ... +10 is not (10 / 36 > 5%); records_processed means (~3630) move by only 0.3%.
    let big = |s: &Scenario, p: ProtocolSpec, seed: u64| {
        Ok(RunReport { summary: Some(fake_summary(s, p, seed, 10)), ..RunReport::default() })
    };
    let r = check_sweep(&baselines[1].dir, sweep, *tolerance, rules, scenario::from_table, &big, 2)
        .unwrap();
    assert_eq!(r.moved.len(), 8);
    assert!(r.moved.iter().all(|m| m.metric == "records_reprocessed_mean"));
    let table = lab::check::format_moved(&r.moved);
    assert!(table.lines().next().unwrap().starts_with("baseline"));
    assert!(table.contains("+10 ("), "{table}");
}
