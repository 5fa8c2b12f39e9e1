//! `rebalance-sim chaos` run as a process: the summary line, exit codes (0 all passed, 2 bad
//! arguments), and `--save` writing a scenario that `run` accepts.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rebalance-sim")).args(args).output().expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn passing_seeds_print_the_summary_and_exit_0() {
    // 2 seeds x 2 protocols = 4 runs.
    let out = run(&[
        "chaos",
        "--seeds",
        "0..2",
        "--protocol",
        "eager",
        "--protocol",
        "cooperative",
        "--jobs",
        "2",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.ends_with("2 seeds, 4 runs, 0 failures\n"), "{stdout}");
}

#[test]
fn the_output_does_not_depend_on_jobs() {
    let args =
        |jobs| ["chaos", "--seeds", "3..5", "--protocol", "eager", "--verbose", "--jobs", jobs];
    let one = run(&args("1"));
    let two = run(&args("2"));
    assert_eq!(text(&one.stdout), text(&two.stdout));
    assert!(text(&one.stdout).starts_with("ok seed 3 eager:range: "), "{}", text(&one.stdout));
}

#[test]
fn bad_arguments_exit_2_with_a_message() {
    let out = run(&["chaos", "--seeds", "9..3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`9..3` holds no seed"), "{}", text(&out.stderr));
    let out = run(&["chaos", "--seeds", "1", "--protocol", "eagre"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("did you mean `eager`?"), "{}", text(&out.stderr));
}

#[test]
fn saved_scenarios_are_accepted_by_run() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("saved");
    let out = run(&[
        "chaos",
        "--seeds",
        "7",
        "--protocol",
        "eager",
        "--save",
        save.to_str().unwrap(),
        "--save-all",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let file = save.join("chaos-7.toml");
    let out = run(&["validate", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let results = dir.path().join("results");
    let out = run(&[
        "run",
        file.to_str().unwrap(),
        "--protocol",
        "eager:range",
        "--out",
        results.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(results.join("summary.csv").exists());
}
