//! Hostile input from issue 27 (grids that overflow or collide, tampered baselines, huge or
//! slow inputs, interrupted runs): each case's input, exit code and message.

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
fn sweep_grids_that_overflow_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "base.toml", BASE);
    let mut grid = String::from("base = \"base.toml\"\n[grid]\n");
    for i in 0..64 {
        grid.push_str(&format!("\"consumer.config.k{i}\" = [1, 2]\n"));
    }
    write(dir.path(), "s.toml", &grid);
    expect(
        dir.path(),
        &["sweep", "s.toml"],
        2,
        "s.toml: key `grid`: more than 18446744073709551615 cells x 1 seeds is more than 1000000 runs",
    );
    assert!(!dir.path().join("results").exists(), "nothing written");
}

#[test]
fn sweep_grid_keys_that_conflict_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "base.toml", BASE);
    write(
        dir.path(),
        "s.toml",
        "base = \"base.toml\"\n[grid]\n\"topic.rate\" = [1.0, 2.0]\n\"topic.0.rate\" = [3.0]\n",
    );
    expect(
        dir.path(),
        &["sweep", "s.toml"],
        2,
        "s.toml: key `grid.\"topic.rate\"`: conflicts with `topic.0.rate`",
    );
}

#[test]
fn sweep_cells_with_colliding_short_ids_run_under_distinct_ids() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "base.toml", BASE);
    write(
        dir.path(),
        "s.toml",
        "base = \"base.toml\"\n[grid]\n\"group.members\" = [24, 40]\n\"topic.rate\" = [67.0, 660.0]\n",
    );
    let o = sim(dir.path(), &["sweep", "s.toml", "--out", "o", "--jobs", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let runs = std::fs::read_to_string(dir.path().join("o/runs.csv")).unwrap();
    let mut ids: Vec<&str> = runs.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(ids.len(), 4);
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "{runs}");
    assert_eq!(ids.iter().filter(|i| i.starts_with("63eb95e1-")).count(), 2, "{ids:?}");
    for id in ids {
        assert!(dir.path().join(format!("o/cells/{id}.toml")).is_file(), "{id}");
    }
}

/// A run big enough that its writes take a while (a few hundred partitions, many intervals).
const WIDE: &str = "name = \"wide\"\nduration = \"60s\"\nseed = 2\nprotocols = [\"eager\", \"cooperative\"]\n[[topic]]\nname = \"t\"\npartitions = 400\nrate = 5.0\narrival = \"poisson\"\n[group]\nmembers = 4\n[[event]]\nat = \"10s\"\nkind = \"crash\"\nmember = \"c1\"\nrestart_after = \"5s\"\n[[event]]\nat = \"30s\"\nkind = \"join\"\nmember = \"c4\"\n";

const RUN_FILES: [&str; 5] =
    ["summary.csv", "partitions.csv", "rebalances.csv", "ownership.csv", "timeline.csv"];

fn run_set(dir: &Path) -> Vec<Option<Vec<u8>>> {
    RUN_FILES.iter().map(|f| std::fs::read(dir.join(f)).ok()).collect()
}

/// Entries of `dir` that a run leaves behind when interrupted (staging folders, `.tmp*`).
fn leftovers(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for parent in [dir.to_path_buf(), dir.join("out")] {
        for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.contains(".staging-") || name.starts_with(".tmp") {
                out.push(name);
            }
        }
    }
    out
}

#[test]
#[allow(clippy::disallowed_methods)] // wall time aims the kills; nothing asserts on it
fn a_killed_run_leaves_the_old_set_or_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "wide.toml", WIDE);
    let mut run_ms = 0;
    for (seed, out) in [("2", "seed2"), ("2", "out"), ("3", "seed3")] {
        let started = std::time::Instant::now();
        let o = sim(d, &["run", "wide.toml", "--seed", seed, "--out", out]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        run_ms = started.elapsed().as_millis() as u64;
    }
    let (old, new) = (run_set(&d.join("seed2")), run_set(&d.join("seed3")));
    assert_ne!(old, new);
    let bin = env!("CARGO_BIN_EXE_rebalance-sim");
    // Kills spread over the end of a run (its write phase), timed from one run's wall time:
    // the assertion holds at any instant, so the timing only aims the kills.
    for step in 0..12u64 {
        let delay_ms = run_ms * (80 + 2 * step) / 100;
        let mut child = std::process::Command::new(bin)
            .current_dir(d)
            .args(["run", "wide.toml", "--seed", "3", "--out", "out"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let now = run_set(&d.join("out"));
        assert!(now == old || now == new, "after {delay_ms} ms: a mixed set");
        if now == new {
            // Back to the old set for the next try.
            let o = sim(d, &["run", "wide.toml", "--seed", "2", "--out", "out"]);
            assert_eq!(o.status.code(), Some(0));
        }
    }
    // A SIGKILL leaves a staging folder; the next run sweeps it up.
    let o = sim(d, &["run", "wide.toml", "--seed", "3", "--out", "out"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(run_set(&d.join("out")), new);
    assert_eq!(leftovers(d), Vec::<String>::new());
}

#[test]
fn sigterm_and_sigint_leave_no_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "wide.toml", WIDE);
    let o = sim(d, &["run", "wide.toml", "--out", "out"]);
    assert_eq!(o.status.code(), Some(0));
    let before = run_set(&d.join("out"));
    // The set a whole run of seed 9 writes: a signal after its rename (the run then prints its
    // table and exits) ends the process by the signal with the new set in place.
    let o = sim(d, &["run", "wide.toml", "--seed", "9", "--out", "out9"]);
    assert_eq!(o.status.code(), Some(0));
    let after = run_set(&d.join("out9"));
    assert_ne!(before, after);
    let bin = env!("CARGO_BIN_EXE_rebalance-sim");
    for (signal, delay_ms) in [("TERM", 100u64), ("INT", 100), ("TERM", 300), ("INT", 500)] {
        let child = std::process::Command::new(bin)
            .current_dir(d)
            .args(["run", "wide.toml", "--seed", "9", "--out", "out"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let pid = child.id().to_string();
        std::process::Command::new("kill").args([&format!("-{signal}"), &pid]).status().unwrap();
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            continue; // it finished first
        }
        assert_eq!(leftovers(d), Vec::<String>::new(), "after SIG{signal} at {delay_ms} ms");
        let now = run_set(&d.join("out"));
        assert!(now == before || now == after, "after SIG{signal} at {delay_ms} ms: a mixed set");
        if now == after {
            // Signalled after its rename: back to the old set for the next try.
            let o = sim(d, &["run", "wide.toml", "--out", "out"]);
            assert_eq!(o.status.code(), Some(0));
        }
    }
}

#[test]
fn endless_and_huge_inputs_are_refused_before_parsing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let too_big =
        "the file is larger than 16777216 bytes (16 MiB), the most an input file may hold";
    expect(d, &["validate", "/dev/zero"], 2, &format!("/dev/zero: {too_big}"));
    expect(d, &["run", "/dev/zero"], 2, too_big);
    expect(d, &["assign", "/dev/zero"], 2, "/dev/zero: the file is larger than 16777216 bytes");
    write(d, "s.toml", "base = \"/dev/zero\"\n");
    expect(
        d,
        &["sweep", "s.toml"],
        2,
        "/dev/zero: the base scenario (key `base` of the sweep file) is larger than 16777216 bytes",
    );
    // 300,000 events in about 20 MB: refused by size; 100,001 events in a smaller file: by count.
    let event = "[[event]]\nat = \"1s\"\nkind = \"scale\"\nmembers = 2\n";
    let head = "duration = \"1h\"\nprotocols = [\"eager\"]\n[[topic]]\nname = \"t\"\npartitions = 2\nrate = 1.0\n[group]\nmembers = 1\n";
    let pad = " ".repeat(20);
    write(d, "big.toml", &(head.to_string() + &format!("{event}#{pad}\n").repeat(300_000)));
    assert!(std::fs::metadata(d.join("big.toml")).unwrap().len() > 19_000_000);
    expect(d, &["validate", "big.toml"], 2, too_big);
    write(d, "many.toml", &(head.to_string() + &event.repeat(100_001)));
    expect(
        d,
        &["validate", "many.toml"],
        2,
        "many.toml: event: more than 100000 [[event]] tables; allowed: at most 100000 events",
    );
}

#[test]
fn alternating_scale_events_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut text = String::from("duration = \"1h\"\nprotocols = [\"eager\"]\n[[topic]]\nname = \"t\"\npartitions = 2\nrate = 1.0\n[group]\nmembers = 1\n");
    for i in 0..1999 {
        let members = if i % 2 == 0 { 100_000 } else { 1 };
        text.push_str(&format!(
            "[[event]]\nat = \"{}s\"\nkind = \"scale\"\nmembers = {members}\n",
            i + 1
        ));
    }
    write(d, "alt.toml", &text);
    // Events touch 100,000 and 199,999 member-steps in turn: the 14th passes 2,000,000 and is
    // refused, once (the later ones are not replayed).
    let o = expect(
        d,
        &["validate", "alt.toml"],
        2,
        "event[13].members: the scale events up to this one touch 2099993 member-steps",
    );
    assert_eq!(stderr(&o).matches("member-steps").count(), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("at most 2000000 member-steps over all scale events"));
}

#[test]
fn many_alternating_scale_events_replay_the_membership_exactly() {
    // 1,200 events alternating 1000 and 1 members (1,799,400 member-steps, under the bound),
    // then c999 leaves and is paused: the replay (slots, not names, issue 27 item 6) must know
    // c0..c998 live and c999 gone, as the model's scale_plan would have them.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut text = String::from("duration = \"2h\"\nprotocols = [\"eager\"]\n[[topic]]\nname = \"t\"\npartitions = 2\nrate = 1.0\n[group]\nmembers = 1\n");
    for i in 0..1200 {
        let members = if i % 2 == 0 { 1000 } else { 1 };
        text.push_str(&format!(
            "[[event]]\nat = \"{}s\"\nkind = \"scale\"\nmembers = {members}\n",
            i + 1
        ));
    }
    let scale_up = "[[event]]\nat = \"1h\"\nkind = \"scale\"\nmembers = 1000\n";
    let leave = "[[event]]\nat = \"61m\"\nkind = \"leave\"\nmember = \"c999\"\n";
    write(d, "alt.toml", &format!("{text}{scale_up}{leave}"));
    let o = sim(d, &["validate", "alt.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let pause = "[[event]]\nat = \"62m\"\nkind = \"pause\"\nmember = \"c999\"\nduration = \"1s\"\n";
    write(d, "paused.toml", &format!("{text}{scale_up}{leave}{pause}"));
    let o = expect(
        d,
        &["validate", "paused.toml"],
        2,
        "event[1202].member: `c999` is no longer a member at",
    );
    assert!(
        stderr(&o).contains(
            "members live then: c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, ... (999 in all)"
        ),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).matches("error:").count(), 1, "{}", stderr(&o));
}

#[test]
fn shards_run_from_different_folders_merge() {
    // One copy of the inputs inside this git checkout (target/tmp), one outside any checkout:
    // a manifest read `git rev-parse` in the working folder before, so the two differed.
    let inside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let sweep = "base = \"base.toml\"\n[grid]\n\"group.members\" = [2, 3]\n";
    for d in [inside.path(), outside.path()] {
        write(d, "base.toml", BASE);
        write(d, "s.toml", sweep);
    }
    let shard = |d: &Path, k: &str, out: &Path| {
        let out = out.to_str().unwrap();
        let o = sim(d, &["sweep", "s.toml", "--shard", k, "--out", out, "--jobs", "1"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    };
    let results = tempfile::tempdir().unwrap();
    let (a, b) = (results.path().join("a"), results.path().join("b"));
    shard(inside.path(), "0/2", &a);
    shard(outside.path(), "1/2", &b);
    let version = sim(results.path(), &["--version"]);
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    let manifest = std::fs::read_to_string(a.join("manifest.json")).unwrap();
    let commit = version.trim().rsplit_once('(').unwrap().1.trim_end_matches(')').to_string();
    assert!(manifest.contains(&format!("\"git_commit\": \"{commit}\"")), "{version} {manifest}");
    let o = sim(results.path(), &["merge", "a", "b", "--out", "m"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(results.path().join("m/aggregate.csv").is_file());
}

#[test]
fn assign_refuses_ambiguous_or_huge_groups() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        (
            r#"{"assignor":"range","topics":{"t1":4294967295},"members":[{"id":"c1","topics":["t1"]}]}"#,
            "topics.t1: brings the partitions to 4294967295: at most 10000000 in all",
        ),
        (
            r#"{"assignor":"modulo","topics":{"t1":4},"members":[{"id":"a","topics":["t1"],"node_id":0},{"id":"b","topics":["t1"],"node_id":0}]}"#,
            "members[1].node_id: node_id 0 is also members[0]'s: one member per node",
        ),
        (
            r#"{"assignor":"modulo","source_count":2,"topics":{"t1":4},"members":[{"id":"a","topics":["t1"]}]}"#,
            "members[0].node_id: missing: with source_count every member needs a node_id from 0 to 1",
        ),
        (
            r#"{"assignor":"range","topics":{"t1":2,"t1":3},"members":[{"id":"c1","topics":["t1"]}]}"#,
            "duplicate key `t1`",
        ),
        (
            r#"{"assignor":"range","topics":{"t1":null},"members":[{"id":"c1","topics":["t1"]}]}"#,
            "topics.t1: null is not a partition count: an integer from 0",
        ),
    ];
    for (i, (json, message)) in cases.iter().enumerate() {
        let name = format!("a{i}.json");
        write(d, &name, json);
        expect(d, &["assign", &name], 2, message);
    }
    // 100,000 distinct members: the duplicate check is a set, not a scan per member.
    let members: Vec<String> =
        (0..100_000).map(|i| format!("{{\"id\":\"c{i}\",\"topics\":[\"t1\"]}}")).collect();
    let json = format!(
        "{{\"assignor\":\"roundrobin\",\"topics\":{{\"t1\":8}},\"members\":[{}]}}",
        members.join(",")
    );
    write(d, "big.json", &json);
    let o = sim(d, &["assign", "big.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("\"c99999\": []"), "every member listed");
}
