//! `run --jobs N` (issue 29 item 3): the protocol runs of one `run` on N threads write the
//! bytes the runs one after the other write (every file: CSV, Parquet, charts, traces) and
//! print the same table and the same stderr, in protocol order; `--jobs` has sweep's limits.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;
use support::sim;

/// Four protocols of four families over a crash with a restart and a join: small enough for
/// a debug build, with rebalances of every kind.
const FOUR: &str = r#"name = "four"
duration = "40s"
seed = 5
protocols = ["eager:range", "cooperative:cooperative-sticky", "consumer:uniform", "tubemq-server"]
[[topic]]
name = "t"
partitions = 6
rate = 20.0
arrival = "poisson"
[consumer]
processing = "2ms"
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
at = "25s"
kind = "join"
member = "c3"
"#;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every file under `dir` as (path relative to `dir`, bytes), sorted by path.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                found.push((path.strip_prefix(dir).unwrap().to_path_buf(), bytes));
            }
        }
    }
    found.sort();
    found
}

/// `run four.toml --jobs JOBS --out OUT EXTRA...` in `dir`, asserting exit 0.
fn run_with(dir: &Path, jobs: &str, out: &str, extra: &[&str]) -> Output {
    let args = [&["run", "four.toml", "--jobs", jobs, "--out", out][..], extra].concat();
    let o = sim(dir, &args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
    o
}

#[test]
fn four_protocols_with_jobs_1_and_jobs_4_give_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("four.toml"), FOUR).unwrap();
    let cases: [&[&str]; 2] = [&["--charts", "--format", "both"], &["--trace", "--format", "csv"]];
    for extra in cases {
        let one = run_with(d, "1", "one", extra);
        let four = run_with(d, "4", "four", extra);
        let (one_files, four_files) = (files(&d.join("one")), files(&d.join("four")));
        let names: Vec<&PathBuf> = one_files.iter().map(|(p, _)| p).collect();
        assert_eq!(names, four_files.iter().map(|(p, _)| p).collect::<Vec<_>>(), "{extra:?}");
        for ((name, a), (_, b)) in one_files.iter().zip(&four_files) {
            assert!(a == b, "{extra:?}: {} differs between --jobs 1 and --jobs 4", name.display());
        }
        let expected: &[&str] = if extra.contains(&"--trace") {
            &["trace-eager-range.json", "summary.csv", "timeline.csv"]
        } else {
            &["summary.parquet", "ownership.csv", "compare.png", "lag.svg"]
        };
        for name in expected {
            assert!(
                names.iter().any(|p| p.file_name().unwrap() == *name),
                "{extra:?}: {name} in {names:?}"
            );
        }
        // The table, then `wrote <out>`; stderr (warnings, the traces' lines) alike.
        let same_out = text(&four.stdout).replace("wrote four", "wrote one");
        assert_eq!(text(&one.stdout), same_out, "{extra:?}");
        assert_eq!(text(&one.stderr), text(&four.stderr), "{extra:?}");
        let summary = text(&std::fs::read(d.join("one/summary.csv")).unwrap());
        let labels: Vec<String> = summary
            .lines()
            .skip(1)
            .map(|row| row.split(',').skip(1).take(2).collect::<Vec<_>>().join(":"))
            .collect();
        let order = ["eager:range", "cooperative:cooperative-sticky", "consumer:uniform"];
        assert_eq!(labels[..3], order, "rows in protocol order");
        assert_eq!(labels[3], "tubemq-server:modulo");
    }
}

#[test]
fn timing_and_trace_lines_come_in_protocol_order_with_jobs_4() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("four.toml"), FOUR).unwrap();
    let o = run_with(d, "4", "o", &["--timing", "--trace"]);
    let stderr = text(&o.stderr);
    let lines: Vec<&str> =
        stderr.lines().filter(|l| l.starts_with("timing: ") || l.starts_with("trace: ")).collect();
    let protocols = ["eager:range", "cooperative:cooperative-sticky", "consumer:uniform"];
    let mut expected = Vec::new();
    for p in protocols.iter().chain(&["tubemq-server:modulo"]) {
        expected.push(format!("trace: trace-{}.json:", p.replace(':', "-")));
        expected.push(format!("timing: {p}: "));
    }
    assert_eq!(lines.len(), expected.len(), "{stderr}");
    for (line, start) in lines.iter().zip(&expected) {
        assert!(
            line.starts_with(start.as_str()),
            "`{line}` should start with `{start}`:\n{stderr}"
        );
    }
}

#[test]
fn jobs_0_and_a_huge_jobs_are_refused_with_exit_2_as_sweep_refuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("four.toml"), FOUR).unwrap();
    let cases = [
        ("0", "error: --jobs: must be at least 1"),
        (
            "100000",
            "error: --jobs 100000 is not allowed: from 1 to 256 worker threads (the default is \
             the machine's cores)",
        ),
        ("257", "error: --jobs 257 is not allowed: from 1 to 256 worker threads"),
        // Beyond any integer: clap's own error, exit 2 too.
        ("99999999999999999999999", "--jobs <N>"),
        ("-1", "unexpected argument '-1'"),
    ];
    for (jobs, message) in cases {
        let o = sim(d, &["run", "four.toml", "--jobs", jobs, "--out", "o"]);
        assert_eq!(o.status.code(), Some(2), "--jobs {jobs}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains(message), "--jobs {jobs}: {}", text(&o.stderr));
        assert!(o.stdout.is_empty(), "--jobs {jobs}: nothing printed on stdout");
        assert!(!d.join("o").exists(), "--jobs {jobs}: refused before any work");
    }
    // The limit itself is allowed (four threads are started: one per protocol run).
    run_with(d, "256", "o", &[]);
}
