//! `rebalance-sim diff` (issue 28 item 5): two configs and two run folders compared, the
//! verdict of a change, the files of `--out`, and bad sides refused with exit 2.

mod support;

use std::path::Path;
use support::sim;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// Two members, c1 crashes at 10 s; `restart` says whether it comes back 5 s later.
fn crash(restart: bool) -> String {
    let after = if restart { "restart_after = \"5s\"\n" } else { "" };
    format!(
        "duration = \"40s\"\nprotocols = [\"eager\"]\n[[topic]]\nname = \"t\"\npartitions = 4\n\
         rate = 10.0\n[group]\nmembers = 2\n[[event]]\nat = \"10s\"\nkind = \"crash\"\n\
         member = \"c1\"\n{after}"
    )
}

#[test]
fn two_configs_and_their_run_folders_give_the_same_diff() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.toml", &crash(false));
    write(dir.path(), "b.toml", &crash(true));
    let by_config = sim(dir.path(), &["diff", "a.toml", "b.toml", "--all", "--out", "d"]);
    assert_eq!(by_config.status.code(), Some(0), "{}", String::from_utf8_lossy(&by_config.stderr));
    let text = String::from_utf8_lossy(&by_config.stdout).into_owned();
    assert!(text.starts_with("eager:range\n"), "{text}");
    // The same protocol, scenario and seed on both sides but the restart: the input's own
    // figures are equal, and each value compared is one of the summary's metrics.
    assert!(text.contains("diff: 24 values compared"), "{text}");
    assert!(text.contains("0 changed inputs"), "{text}");
    let csv = std::fs::read_to_string(dir.path().join("d/diff.csv")).unwrap();
    assert!(csv.starts_with("row,metric,before,after,change,verdict\n"));
    assert_eq!(csv.lines().count(), 25, "a header and 24 metrics");
    assert!(dir.path().join("d/diff.png").is_file());
    for (name, file) in [("fold-a", "a.toml"), ("fold-b", "b.toml")] {
        let o = sim(dir.path(), &["run", file, "--out", name]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let by_folder = sim(dir.path(), &["diff", "fold-a", "fold-b", "--all"]);
    assert_eq!(by_folder.status.code(), Some(0));
    let folder_text = String::from_utf8_lossy(&by_folder.stdout).replace("fold-a", "a.toml");
    let folder_text = folder_text.replace("fold-b", "b.toml");
    assert_eq!(folder_text, text, "a run folder and its config compare alike");
}

#[test]
fn a_side_that_is_neither_a_run_folder_nor_a_scenario_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    write(dir.path(), "a.toml", &crash(false));
    let o = sim(dir.path(), &["diff", "a.toml", "empty"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("empty/summary.csv") && err.contains("a run's output folder"), "{err}");
    let o = sim(dir.path(), &["diff", "a.toml", "missing.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.toml"));
}
