//! `rebalance-sim run` as a process: exit codes (0 ok, 2 bad input), the five CSV files, the
//! printed table, `--seed`, `--protocol`, and every protocol family running.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SCENARIO: &str = r#"
name = "tiny"
duration = "20s"
seed = 3
protocols = ["eager:range", "cooperative"]

[[topic]]
name = "t"
partitions = 4
rate = 50.0

[consumer]
processing = "1ms"

[group]
members = 2

[[event]]
at = "10s"
kind = "join"
member = "c2"
"#;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rebalance-sim")).args(args).output().expect("binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn setup(body: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.toml");
    std::fs::write(&path, body).unwrap();
    (dir, path)
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap()
}

#[test]
fn run_writes_five_csv_files_and_prints_a_table() {
    let (dir, path) = setup(SCENARIO);
    let out_dir = dir.path().join("out");
    let out = run(&["run", path.to_str().unwrap(), "--out", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let header = stdout.lines().next().unwrap();
    assert!(header.starts_with("metric"), "{stdout}");
    assert!(header.contains("eager:range") && header.contains("cooperative:cooperative-sticky"));
    assert!(stdout.contains("partitions_moved"), "{stdout}");
    let summary = read(&out_dir, "summary.csv");
    assert!(summary.starts_with("scenario,protocol,assignor,static_membership,seed,duration_s,"));
    // One row per protocol run, carrying the file's seed.
    let rows: Vec<&str> = summary.lines().skip(1).collect();
    assert_eq!(rows.len(), 2);
    assert!(rows[0].starts_with("tiny,eager,range,false,3,20.0,4,"), "{}", rows[0]);
    for file in ["partitions.csv", "rebalances.csv", "ownership.csv", "timeline.csv"] {
        assert!(read(&out_dir, file).lines().count() > 1, "{file} has rows");
    }
    // 20 s sampled every second from t = 0: 21 timeline rows per protocol run.
    assert_eq!(read(&out_dir, "timeline.csv").lines().count(), 1 + 2 * 21);
}

#[test]
fn same_seed_same_bytes_and_seed_override() {
    let (dir, path) = setup(SCENARIO);
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    for target in [&a, &b] {
        let out =
            run(&["run", path.to_str().unwrap(), "--seed", "9", "--out", target.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    for file in ["summary.csv", "partitions.csv", "rebalances.csv", "ownership.csv", "timeline.csv"]
    {
        assert_eq!(read(&a, file), read(&b, file), "{file}");
    }
    assert!(read(&a, "summary.csv")
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("tiny,eager,range,false,9,"));
}

#[test]
fn protocol_flag_selects_runs() {
    let (dir, path) = setup(SCENARIO);
    let out_dir = dir.path().join("out");
    let args = ["run", path.to_str().unwrap(), "--protocol", "eager:roundrobin", "--out"];
    let out = run(&[&args[..], &[out_dir.to_str().unwrap()]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = read(&out_dir, "summary.csv");
    let rows: Vec<&str> = summary.lines().skip(1).collect();
    assert_eq!(rows.len(), 1);
    assert!(rows[0].starts_with("tiny,eager,roundrobin,"), "{}", rows[0]);
}

#[test]
fn every_protocol_of_the_design_runs() {
    // Each protocol family of DESIGN section 6 produces a summary row of its own.
    let body = SCENARIO.replace(
        "[\"eager:range\", \"cooperative\"]",
        "[\"consumer:uniform\", \"tubemq-server\", \"tubemq-client\", \"manual\"]",
    );
    let (dir, path) = setup(&body);
    let out_dir = dir.path().join("out");
    let out = run(&["run", path.to_str().unwrap(), "--out", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = read(&out_dir, "summary.csv");
    let labels: Vec<String> = summary
        .lines()
        .skip(1)
        .map(|row| row.split(',').skip(1).take(2).collect::<Vec<_>>().join(":"))
        .collect();
    assert_eq!(
        labels,
        ["consumer:uniform", "tubemq-server:modulo", "tubemq-client:modulo", "manual:none"]
    );
}

#[test]
fn bad_protocol_name_and_bad_file_exit_2() {
    let (_dir, path) = setup(SCENARIO);
    let out = run(&["run", path.to_str().unwrap(), "--protocol", "eager:fastest"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--protocol eager:fastest"), "{}", text(&out.stderr));
    let (_dir2, bad) = setup("name = \"x\"\nduration = \"banana\"\n");
    let out = run(&["run", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("error:"), "{}", text(&out.stderr));
}

/// SCENARIO with 20 ms per record: 4 x 50 records/s on 2 members is 200% of their capacity.
fn overloaded() -> String {
    SCENARIO.replace("processing = \"1ms\"", "processing = \"20ms\"")
}

#[test]
fn an_overloaded_group_is_warned_about_and_the_utilisation_printed() {
    let (dir, path) = setup(&overloaded());
    let out_dir = dir.path().join("out");
    let out = run(&["run", path.to_str().unwrap(), "--out", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let file = path.display().to_string();
    // At the start 2 members must process 200 records/s and can do 100; the join at 10 s
    // brings 3 members (150/s: 133%), still overloaded, so one warning.
    let expected = format!("warning: {file}: overload: at 0s (start) 2 consuming members must process 200 records/s and can process 100 (processing 20ms per record): utilisation 200%;");
    assert!(stderr.contains(&expected), "{stderr}");
    assert_eq!(stderr.matches("overload: at").count(), 1, "{stderr}");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("utilisation (estimated: records/s x mean processing time / consuming members): 200% at the start, peak 200%"), "{stdout}");
    // validate warns the same way and still says ok (exit 0).
    let v = run(&["validate", path.to_str().unwrap()]);
    assert_eq!(v.status.code(), Some(0));
    assert!(text(&v.stderr).contains(&expected), "{}", text(&v.stderr));
}

#[test]
fn a_group_within_capacity_gets_no_warning_and_its_figure() {
    let (dir, path) = setup(SCENARIO);
    let out_dir = dir.path().join("out");
    let out = run(&["run", path.to_str().unwrap(), "--out", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("overload"), "{}", text(&out.stderr));
    // 200 records/s x 1 ms on 2 members: 10%; 3 members after the join: 6.7%.
    assert!(text(&out.stdout).contains(": 10% at the start, peak 10%"), "{}", text(&out.stdout));
}

#[test]
fn replacing_another_scenarios_results_is_warned_about() {
    let (dir, path) = setup(SCENARIO);
    let out_dir = dir.path().join("out");
    let out_arg = out_dir.to_str().unwrap();
    let first = run(&["run", path.to_str().unwrap(), "--out", out_arg]);
    assert_eq!(first.status.code(), Some(0));
    // The same scenario again: its own folder, no warning.
    let again = run(&["run", path.to_str().unwrap(), "--out", out_arg]);
    assert!(!text(&again.stderr).contains("warning"), "{}", text(&again.stderr));
    // Another scenario into the same folder: warned, then replaced.
    let other = dir.path().join("other.toml");
    std::fs::write(&other, SCENARIO.replace("name = \"tiny\"", "name = \"other\"")).unwrap();
    let o = run(&["run", other.to_str().unwrap(), "--out", out_arg]);
    assert_eq!(o.status.code(), Some(0));
    let expected = format!("warning: {out_arg}: holds the results of scenario `tiny`, not `other`: they are replaced by this run's");
    assert!(text(&o.stderr).contains(&expected), "{}", text(&o.stderr));
    assert!(read(&out_dir, "summary.csv").lines().nth(1).unwrap().starts_with("other,"));
    // A folder of other files: warned that the run's files go in beside them.
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("notes.txt"), "mine").unwrap();
    let d = run(&["run", path.to_str().unwrap(), "--out", docs.to_str().unwrap()]);
    assert_eq!(d.status.code(), Some(0));
    assert!(
        text(&d.stderr).contains("exists and is not a run's output folder (no summary.csv)"),
        "{}",
        text(&d.stderr)
    );
    assert_eq!(read(&docs, "notes.txt"), "mine");
}
