//! Issue 27 item 9: what `validate` warns is printed by `run` and `sweep` too, and the command
//! line obeys the limits of the files (`--protocol`, `--seeds`, `--jobs`, `name`, `plot`'s
//! inputs, `merge --out`): each case's input, exit code and message.

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
fn run_and_sweep_print_what_validate_warns() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let empty = BASE.replace("members = 2", "members = 0");
    write(d, "empty.toml", &empty);
    let no_member = "[group] members = 0 and no member ever joins: nothing is consumed";
    expect(d, &["validate", "empty.toml"], 0, no_member);
    expect(d, &["run", "empty.toml", "--out", "o"], 0, no_member);
    // 500 records of 1 s each: 500 s, above the default max.poll.interval.ms of 300 s.
    let slow = format!("{BASE}[consumer]\nprocessing = \"1s\"\n");
    write(d, "slow.toml", &slow);
    let batch = "a full batch of max.poll.records = 500 takes 500000 ms on average, above max.poll.interval.ms (300000)";
    expect(d, &["run", "slow.toml", "--out", "o2"], 0, batch);
    write(d, "s.toml", "base = \"empty.toml\"\n[grid]\n\"topic.rate\" = [1.0, 2.0]\n");
    let o = expect(d, &["sweep", "s.toml", "--out", "so", "--jobs", "1"], 0, no_member);
    assert!(stderr(&o).contains(&format!("{no_member} (2 of 2 cells)")), "{}", stderr(&o));
}

#[test]
fn a_name_too_long_for_a_folder_is_refused_at_validation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = "n".repeat(300);
    write(d, "long.toml", &format!("name = \"{name}\"\n{BASE}"));
    let message = "long.toml:1:8: name: is 300 characters long, too long for a folder name";
    expect(d, &["validate", "long.toml"], 2, message);
    expect(d, &["run", "long.toml"], 2, "at most 200 characters from A-Z a-z 0-9 . _ -");
    assert!(!d.join("results").exists(), "refused before the simulation: nothing written");
    write(d, "ok.toml", &format!("name = \"{}\"\n{BASE}", "n".repeat(200)));
    expect(d, &["validate", "ok.toml"], 0, "");
    write(d, "base.toml", BASE);
    write(
        d,
        "s.toml",
        &format!("name = \"{name}\"\nbase = \"base.toml\"\n[grid]\n\"topic.rate\" = [1.0]\n"),
    );
    expect(d, &["sweep", "s.toml"], 2, "key `name`: a non-empty string of at most 200 letters");
}

#[test]
fn run_protocols_on_the_command_line_are_checked_like_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "a.toml", BASE);
    let args = ["run", "a.toml", "--protocol", "eager", "--protocol", "eager:range"];
    expect(d, &args, 2, "--protocol eager:range: repeats eager:range, given before");
    let o = expect(d, &["run", "a.toml", "--protocol", "bogus"], 2, "unknown protocol `bogus`");
    let allowed = "allowed: eager[:range|roundrobin|sticky], cooperative[:cooperative-sticky], consumer[:uniform|range]";
    assert!(stderr(&o).contains(allowed), "{}", stderr(&o));
    assert!(!d.join("results").exists(), "nothing written");
}

#[test]
fn sweep_seeds_and_jobs_on_the_command_line_have_the_files_limits() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "base.toml", BASE);
    write(d, "s.toml", "base = \"base.toml\"\n[grid]\n\"topic.rate\" = [1.0]\n");
    write(d, "file.toml", "base = \"base.toml\"\nseeds = 100001\n[grid]\n\"topic.rate\" = [1.0]\n");
    let allowed = "is not allowed: an integer from 1 to 100000 (replications per cell)";
    expect(d, &["sweep", "file.toml"], 2, &format!("key `seeds`: 100001 {allowed}"));
    expect(d, &["sweep", "s.toml", "--seeds", "100001"], 2, &format!("--seeds 100001 {allowed}"));
    let jobs = "--jobs 100000 is not allowed: from 1 to 256 worker threads";
    expect(d, &["sweep", "s.toml", "--jobs", "100000", "--out", "o"], 2, jobs);
    expect(d, &["sweep", "s.toml", "--jobs", "0", "--out", "o"], 2, "--jobs: must be at least 1");
    assert!(!d.join("o").exists(), "refused before any work: no folder, no journal");
    expect(d, &["sweep", "s.toml", "--jobs", "256", "--out", "o"], 0, "");
}

/// A run's output folder in `dir/o`, for `plot`.
fn run_output(dir: &Path) -> std::path::PathBuf {
    write(dir, "a.toml", BASE);
    let o = sim(dir, &["run", "a.toml", "--out", "o"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    dir.join("o")
}

/// Replaces field `column` of line `line` (1 = the header) of a CSV file.
fn edit_csv(path: &Path, line: usize, column: usize, value: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut fields: Vec<&str> = lines[line - 1].split(',').collect();
    fields[column] = value;
    lines[line - 1] = fields.join(",");
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn plot_refuses_times_it_cannot_draw_and_warns_on_unknown_states() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = run_output(d);
    // ownership.csv: protocol,assignor,static_membership,topic,partition,start_s,end_s,owner,state
    edit_csv(&out.join("ownership.csv"), 3, 6, "inf");
    let message =
        "ownership.csv line 3: end_s = `inf` is not finite; charts need times of at least 0 s";
    expect(d, &["plot", "o"], 2, message);
    assert!(!out.join("charts").exists() && !out.join("timeline-eager-range.png").exists());
    let out = {
        std::fs::remove_dir_all(&out).unwrap();
        run_output(d)
    };
    // timeline.csv: protocol,assignor,static_membership,t_s,lag,down_partitions,members
    edit_csv(&out.join("timeline.csv"), 4, 3, "-2.0");
    expect(d, &["plot", "o"], 2, "timeline.csv line 4: t_s = `-2.0` is negative");
    std::fs::remove_dir_all(&out).unwrap();
    let out = run_output(d);
    edit_csv(&out.join("ownership.csv"), 2, 8, "on-fire");
    let o = expect(d, &["plot", "o"], 0, "ownership.csv line 2: unknown state `on-fire`");
    assert!(
        stderr(&o).contains("this program writes consuming, idle, unassigned"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn merge_refuses_to_write_over_one_of_its_shards() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "base.toml", BASE);
    write(d, "s.toml", "base = \"base.toml\"\n[grid]\n\"topic.rate\" = [1.0, 2.0]\n");
    for k in 0..2 {
        let shard = format!("{k}/2");
        let o = sim(d, &["sweep", "s.toml", "--shard", &shard, "--out", &format!("shard{k}")]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let before = std::fs::read(d.join("shard1/runs.csv")).unwrap();
    let message = "--out ./shard1: is the shard folder shard1 given to merge";
    expect(d, &["merge", "shard0", "shard1", "--out", "./shard1"], 2, message);
    assert_eq!(std::fs::read(d.join("shard1/runs.csv")).unwrap(), before, "shard untouched");
    expect(d, &["merge", "shard0", "shard1", "--out", "merged"], 0, "merged 2 shards");
}
