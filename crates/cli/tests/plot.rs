//! `rebalance-sim plot DIR` run as a process: it redraws the charts from CSV files written by
//! `report::csv_out::write_run_outputs`, and rejects a missing folder, a missing file or a
//! broken CSV with exit 2 and a message naming the file.

use metrics::{OwnershipLog, OwnershipRow, RebalanceRow, RunReport, SummaryRow, TimelineRow};
use std::path::Path;
use std::process::{Command, Output};

fn plot(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rebalance-sim"))
        .arg("plot")
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A 20 s eager run of 2 partitions: c0 and c1 consume, a join at 5 s stops the world for 1 s.
fn report() -> RunReport {
    let own = |p: u32, start_s: f64, end_s: f64, owner: &str, state: &str| OwnershipRow {
        protocol: "eager".into(),
        assignor: "range".into(),
        static_membership: false,
        topic: "t".into(),
        partition: p,
        start_s,
        end_s,
        owner: owner.into(),
        state: state.into(),
    };
    let sample = |t_s: f64, lag: u64| TimelineRow {
        protocol: "eager".into(),
        assignor: "range".into(),
        static_membership: false,
        t_s,
        lag,
        down_partitions: if lag > 0 { 2 } else { 0 },
        members: 2,
    };
    RunReport {
        summary: Some(SummaryRow {
            scenario: "plot-test".into(),
            protocol: "eager".into(),
            assignor: "range".into(),
            static_membership: false,
            seed: 1,
            duration_s: 20.0,
            partitions: 2,
            records_produced: 400,
            records_processed: 410,
            records_reprocessed: 10,
            records_lost: 0,
            final_lag: 0,
            downtime_partition_s: 2.0,
            downtime_episode_ms_p50: 1000.0,
            downtime_episode_ms_p99: 1000.0,
            downtime_episode_ms_max: 1000.0,
            stop_the_world_s: 1.0,
            rebalances: 1,
            rebalance_ms_p50: 1000.0,
            rebalance_ms_max: 1000.0,
            partitions_moved: 1,
            e2e_latency_ms_p50: 1.0,
            e2e_latency_ms_p99: 2.0,
            e2e_latency_ms_max: 3.0,
            events: 50,
            measure_from_s: 0.0,
            startup_downtime_partition_s: 0.0,
            startup_stop_the_world_s: 0.0,
            startup_rebalances: 0,
        }),
        partitions: Vec::new(),
        rebalances: vec![RebalanceRow {
            protocol: "eager".into(),
            assignor: "range".into(),
            static_membership: false,
            index: 0,
            trigger: "join".into(),
            start_s: 5.0,
            end_s: 6.0,
            duration_ms: 1000.0,
            rounds: 1,
            members: 2,
            partitions_moved: 1,
        }],
        ownership: OwnershipLog::from_rows(vec![
            own(0, 0.0, 5.0, "c0", "consuming"),
            own(0, 5.0, 6.0, "", "stop-the-world"),
            own(0, 6.0, 20.0, "c0", "consuming"),
            own(1, 0.0, 5.0, "c0", "consuming"),
            own(1, 5.0, 6.0, "", "stop-the-world"),
            own(1, 6.0, 20.0, "c1", "consuming"),
        ])
        .unwrap(),
        timeline: vec![sample(0.0, 0), sample(5.5, 100), sample(10.0, 0), sample(20.0, 0)],
    }
}

fn written(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".png") || n.ends_with(".svg"))
        .collect();
    names.sort();
    names
}

#[test]
fn plot_redraws_every_chart_from_the_csv_files() {
    let dir = tempfile::tempdir().unwrap();
    report::csv_out::write_run_outputs(dir.path(), &[report()]).unwrap();
    let out = plot(&[dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // 1 timeline + lag + compare + downtime-cdf, as PNG and SVG: 8 "wrote" lines.
    assert_eq!(text(&out.stdout).lines().filter(|l| l.starts_with("wrote ")).count(), 8);
    assert_eq!(
        written(dir.path()),
        [
            "compare.png",
            "compare.svg",
            "downtime-cdf.png",
            "downtime-cdf.svg",
            "lag.png",
            "lag.svg",
            "timeline-eager-range.png",
            "timeline-eager-range.svg",
        ]
    );
    let png = std::fs::read(dir.path().join("timeline-eager-range.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn plot_out_writes_elsewhere_and_the_bytes_match() {
    let dir = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    report::csv_out::write_run_outputs(dir.path(), &[report()]).unwrap();
    assert_eq!(plot(&[dir.path().to_str().unwrap()]).status.code(), Some(0));
    let out = plot(&[dir.path().to_str().unwrap(), "--out", other.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for name in written(other.path()) {
        let a = std::fs::read(dir.path().join(&name)).unwrap();
        let b = std::fs::read(other.path().join(&name)).unwrap();
        assert!(a == b, "{name} differs between two plots of the same CSV");
    }
}

#[test]
fn plot_rejects_a_missing_folder_or_file_with_exit_2() {
    let out = plot(&["/nonexistent/run-output"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("/nonexistent/run-output: not a folder"),
        "{}",
        text(&out.stderr)
    );

    let dir = tempfile::tempdir().unwrap();
    report::csv_out::write_run_outputs(dir.path(), &[report()]).unwrap();
    std::fs::remove_file(dir.path().join("ownership.csv")).unwrap();
    let out = plot(&[dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("missing ownership.csv"), "{}", text(&out.stderr));
}

#[test]
fn plot_names_the_csv_file_that_does_not_parse() {
    let dir = tempfile::tempdir().unwrap();
    report::csv_out::write_run_outputs(dir.path(), &[report()]).unwrap();
    let path = dir.path().join("timeline.csv");
    let mut body = std::fs::read_to_string(&path).unwrap();
    body.push_str("eager,range,false,not-a-number,1,0,2\n");
    std::fs::write(&path, body).unwrap();
    let out = plot(&[dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("timeline.csv") && !err.contains("panicked"), "{err}");
}

#[test]
fn plot_takes_unknown_states_and_names_ownership_csv_when_they_are_too_many() {
    // A hand-edited state this version does not know is drawn as "down (other state)".
    let dir = tempfile::tempdir().unwrap();
    report::csv_out::write_run_outputs(dir.path(), &[report()]).unwrap();
    let path = dir.path().join("ownership.csv");
    let body = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{body}eager,range,false,t,1,20,21,c1,frozen-by-hand\n"))
        .unwrap();
    let out = plot(&[dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // More distinct unknown states than the compact log can code: exit 2, no panic.
    let extra: String =
        (0..300).map(|i| format!("eager,range,false,t,1,20,21,c1,state-{i}\n")).collect();
    std::fs::write(&path, format!("{body}{extra}")).unwrap();
    let out = plot(&[dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("ownership.csv") && err.contains("more than 248 distinct state names"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
