//! `rebalance-sim validate` run as a process: exit codes (DESIGN section 6: 0 ok, 2 bad
//! input), what goes to stdout and stderr, `--help` and `--version`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rebalance-sim"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

fn sims(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sims").join(name)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Writes `body` to a fresh temporary file and returns it (the folder lives while it does).
fn temp_file(name: &str, body: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, body).unwrap();
    (dir, path)
}

const VALID: &str = "duration = \"1m\"\nprotocols = [\"eager\"]\n[[topic]]\nname = \"t\"\npartitions = 2\nrate = 10\n[group]\nmembers = 2\n";

#[test]
fn a_valid_file_prints_ok_with_counts_and_exits_0() {
    let path = sims("rolling-restart.toml");
    let out = run(&["validate", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // rolling-restart.toml lists two protocols and one rolling-restart event.
    assert_eq!(text(&out.stdout), format!("ok {} (4 protocols, 1 events)\n", path.display()));
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn every_problem_goes_to_stderr_one_per_line_with_exit_2() {
    let body = VALID
        .replace("partitions = 2", "partitions = 0")
        .replace("members = 2", "members = 2\nstatic = true");
    let (_dir, path) = temp_file("bad.toml", &body);
    let out = run(&["validate", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    // `partitions = 0` is line 5, its value at column 14; `static = true` line 9, column 10.
    assert_eq!(
        lines,
        [
            format!("error: {}:5:14: topic[0].partitions: 0 is out of range; allowed: an integer from 1 to 10000000", path.display()),
            format!("error: {}:9:10: group.static: unknown key `static`; allowed: members, static_membership, client_ids", path.display()),
        ]
    );
}

#[test]
fn several_files_are_all_checked_and_one_bad_file_fails_the_run() {
    let (_dir, bad) = temp_file("typo.toml", &VALID.replace("duration", "duraton"));
    let good = sims("crash.toml");
    let out = run(&["validate", bad.to_str().unwrap(), good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), format!("ok {} (4 protocols, 1 events)\n", good.display()));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("duraton: unknown key `duraton`; did you mean `duration`?"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("error: {}: duration: missing", bad.display())), "{stderr}");
}

#[test]
fn warnings_go_to_stderr_and_do_not_fail() {
    let body = format!("{VALID}[consumer.config]\n\"client.rack\" = \"r1\"\n");
    let (_dir, path) = temp_file("warn.toml", &body);
    let out = run(&["validate", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), format!("ok {} (1 protocols, 0 events)\n", path.display()));
    assert_eq!(
        text(&out.stderr),
        format!(
            "warning: {}: consumer.config.\"client.rack\" is accepted but not modeled\n",
            path.display()
        )
    );
}

#[test]
fn a_missing_file_is_bad_input_not_a_panic() {
    let out = run(&["validate", "/nonexistent/x.toml"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("error: /nonexistent/x.toml: cannot read the file"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn no_file_is_a_usage_error() {
    let out = run(&["validate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("<FILE>..."), "{}", text(&out.stderr));
}

#[test]
fn help_describes_the_command_and_version_prints_the_crate_version() {
    let out = run(&["validate", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    assert!(help.contains("Check scenario files without running them"), "{help}");
    assert!(help.contains("Scenario files (TOML) to check"), "{help}");
    let out = run(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    // `--version` names the crate version and the commit the binary was built from (issue 27
    // item 7): 40 hex digits, or `unknown` outside a git checkout.
    let version = text(&out.stdout);
    let prefix = format!("rebalance-sim {} (", env!("CARGO_PKG_VERSION"));
    let commit = version
        .strip_prefix(&prefix)
        .and_then(|rest| rest.strip_suffix(")\n"))
        .unwrap_or_else(|| panic!("`{version}` is not `{prefix}COMMIT)`"));
    let is_hex_commit = commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit());
    assert!(is_hex_commit || commit == "unknown", "commit `{commit}` in `{version}`");
}
