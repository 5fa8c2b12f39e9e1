//! `rebalance-sim trace RUN_DIR` run as a process: the trace it builds from a run's files
//! follows the format's rules (report::perfetto::check, the rules the live trace's tests use)
//! and agrees with the trace `run --trace` wrote while the run ran, wherever both hold a thing:
//! every partition span and every rebalance span has the same name and the same begin and end
//! in virtual microseconds (and the same args), and the counters are the same samples; from
//! Parquet tables it is the same trace as from the CSV files. Bad input (no folder, a missing
//! table, a malformed or out-of-order row, an unknown or absent protocol, `--out` for several
//! runs, a bad window) exits 2 with a message naming the file and line, and leaves no file.

mod support;

use report::perfetto::check::nanos;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use support::{sim, TINY};

fn sims() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sims")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs the binary in `dir` and asserts exit 0.
fn ok(dir: &Path, args: &[&str]) -> String {
    let out = sim(dir, args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// Runs the binary in `dir` and asserts exit 2: its stderr.
fn bad(dir: &Path, args: &[&str]) -> String {
    let out = sim(dir, args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
    text(&out.stderr)
}

/// A trace file's events, checked against the format's rules.
fn events(path: &Path) -> Vec<Value> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json: Value = serde_json::from_slice(&bytes).expect("valid JSON");
    let events = json["traceEvents"].as_array().expect("traceEvents").clone();
    if let Err(broken) = report::perfetto::check::format(&events) {
        panic!("{}: {broken}", path.display());
    }
    events
}

/// A span as compared: name, begin, end (virtual nanoseconds, from the microseconds written),
/// args.
type Span = (String, i64, i64, Value);

/// The spans of each track of process `pid`, by the track's name.
fn spans_by_track(events: &[Value], pid: u64) -> BTreeMap<String, Vec<Span>> {
    let names: BTreeMap<u64, String> = events
        .iter()
        .filter(|e| e["name"] == "thread_name" && e["pid"] == pid)
        .map(|e| (e["tid"].as_u64().unwrap(), e["args"]["name"].as_str().unwrap().to_string()))
        .collect();
    let mut by_track: BTreeMap<String, Vec<Span>> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X" && e["pid"] == pid) {
        let track = names[&e["tid"].as_u64().unwrap()].clone();
        let ts = nanos(&e["ts"]).unwrap();
        let end = ts + nanos(&e["dur"]).unwrap();
        let name = e["name"].as_str().unwrap().to_string();
        by_track.entry(track).or_default().push((name, ts, end, e["args"].clone()));
    }
    by_track
}

/// The counter samples: (name, ts, value).
fn counters(events: &[Value]) -> Vec<(String, f64, f64)> {
    let counter = |e: &Value| {
        let name = e["name"].as_str().unwrap().to_string();
        (name, e["ts"].as_f64().unwrap(), e["args"]["value"].as_f64().unwrap())
    };
    events.iter().filter(|e| e["ph"] == "C").map(counter).collect()
}

/// The processes' names.
fn processes(events: &[Value]) -> Vec<String> {
    let name = |e: &Value| e["args"]["name"].as_str().unwrap().to_string();
    events.iter().filter(|e| e["name"] == "process_name").map(name).collect()
}

/// Asserts that the file-built trace shows what the live one shows of partitions (pid 2),
/// rebalances (pid 1, tid 1) and counters, and nothing of members.
fn assert_agree(live: &[Value], files: &[Value], what: &str) {
    let (live_parts, file_parts) = (spans_by_track(live, 2), spans_by_track(files, 2));
    assert!(!live_parts.is_empty(), "{what}: partition spans");
    assert_eq!(live_parts.keys().collect::<Vec<_>>(), file_parts.keys().collect::<Vec<_>>());
    for (track, spans) in &live_parts {
        assert_eq!(spans, &file_parts[track], "{what}: partition {track}");
    }
    let rebalances = |events| spans_by_track(events, 1).remove("rebalances").unwrap_or_default();
    let (live_rebalances, file_rebalances) = (rebalances(live), rebalances(files));
    assert!(!live_rebalances.is_empty(), "{what}: rebalance spans");
    assert_eq!(live_rebalances, file_rebalances, "{what}: rebalances");
    assert_eq!(counters(live), counters(files), "{what}: counters");
    let file_processes = processes(files);
    assert_eq!(file_processes, ["coordinator", "partitions"], "{what}: no member processes");
    let group_states = spans_by_track(files, 1).remove("group state");
    assert_eq!(group_states, None, "{what}: no group state");
}

#[test]
fn the_file_trace_of_the_crash_agrees_with_the_live_one() {
    let dir = tempfile::tempdir().unwrap();
    // Lock-step timing (docs/timing.md): the crash falls exactly at 2m, as derived below.
    let text = std::fs::read_to_string(sims().join("crash.toml")).unwrap();
    let scenario = dir.path().join("crash.toml");
    std::fs::write(&scenario, format!("{text}\n[timing]\nexact = true\n")).unwrap();
    ok(dir.path(), &["run", scenario.to_str().unwrap(), "--trace", "--out", "crash"]);
    let listed = ok(dir.path(), &["trace", "crash"]);
    let protocols = ["eager-range", "cooperative-cooperative-sticky", "eager-range+static"];
    let protocols = protocols.into_iter().chain(["consumer-uniform"]);
    for protocol in protocols {
        let run = dir.path().join("crash");
        let file = format!("trace-{protocol}.files.json");
        assert!(listed.contains(&file), "{listed}");
        let live = events(&run.join(format!("trace-{protocol}.json")));
        let files = events(&run.join(&file));
        assert_agree(&live, &files, protocol);
    }
    // The crashed member's partition orders-4 (range: c1 owns 4..7), as docs/formats.md
    // reads it; after the session expiry it goes to c2, whose member id sorts first of the two
    // left with this seed (`[group] client_ids = "default"`).
    let files = events(&dir.path().join("crash/trace-eager-range.files.json"));
    let part = &spans_by_track(&files, 2)["orders-4"];
    let names: Vec<&str> = part.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(names, ["idle", "unassigned", "c1", "idle", "owner-dead", "unassigned", "c2"]);
    let owner_dead = (part[4].1, part[4].2);
    assert_eq!(owner_dead, (120_002_816_127, 162_002_500_000), "from the crash's next record");
    assert_eq!(part[5].3["rebalance"], 1);
    assert_eq!(part[5].3["trigger"], "session-expiry");
}

#[test]
fn windows_and_member_filters_agree_and_parquet_gives_the_same_trace() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = sims().join("crash.toml");
    let scenario = scenario.to_str().unwrap();
    let filters = ["--trace-window", "100s..200s", "--trace-members", "c1,c2"];
    let live_args = ["run", scenario, "--protocol", "cooperative", "--trace", "--out", "csv"];
    ok(dir.path(), &[&live_args[..], &filters[..]].concat());
    let filters = ["--window", "100s..200s", "--members", "c1,c2", "--out", "w.json"];
    ok(dir.path(), &[&["trace", "csv"][..], &filters[..]].concat());
    let live = events(&dir.path().join("csv/trace-cooperative-cooperative-sticky.json"));
    let files = events(&dir.path().join("w.json"));
    assert_agree(&live, &files, "window and members");
    for e in files.iter().filter(|e| e["ph"] == "X" && e["pid"] == 2) {
        let owner = e["args"]["owner"].as_str().unwrap();
        assert!(owner == "c1" || owner == "c2", "{e}");
    }

    let args = ["run", scenario, "--protocol", "cooperative", "--format", "parquet"];
    ok(dir.path(), &[&args[..], &["--out", "pq"][..]].concat());
    assert!(!dir.path().join("pq/ownership.csv").exists());
    ok(dir.path(), &["trace", "pq", "--out", "pq.json"]);
    ok(dir.path(), &["trace", "csv", "--out", "csv.json"]);
    let (from_parquet, from_csv) =
        (events(&dir.path().join("pq.json")), events(&dir.path().join("csv.json")));
    assert_eq!(from_parquet, from_csv, "the same events from Parquet as from CSV");
    let head = std::fs::read_to_string(dir.path().join("pq.json")).unwrap();
    assert!(head.contains("ownership.parquet"), "the source says what was read");
}

/// A folder written by `run` for the tiny scenario (two protocol runs).
fn tiny_run(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    ok(dir, &["run", "tiny.toml", "--out", "tiny"]);
    dir.join("tiny")
}

/// Files in `dir` that are neither the run's tables nor charts: no trace or temporary left.
fn leftovers(dir: &Path) -> Vec<String> {
    let tables = ["summary.csv", "partitions.csv", "rebalances.csv", "ownership.csv"];
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !tables.contains(&n.as_str()) && n != "timeline.csv")
        .collect();
    names.sort();
    names
}

#[test]
fn bad_input_is_named_exits_2_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let run = tiny_run(dir.path());
    let d = dir.path();

    assert!(bad(d, &["trace", "nowhere"]).contains("nowhere: not a folder"));
    let stderr = bad(d, &["trace", "tiny", "--protocol", "eager:bogus"]);
    assert!(stderr.contains("--protocol") && stderr.contains("bogus"), "{stderr}");
    let stderr = bad(d, &["trace", "tiny", "--protocol", "consumer"]);
    assert!(stderr.contains("holds no run of consumer:uniform"), "{stderr}");
    assert!(stderr.contains("eager:range, cooperative:cooperative-sticky"), "{stderr}");
    let stderr = bad(d, &["trace", "tiny", "--out", "one.json"]);
    assert!(stderr.contains("2 protocol runs"), "{stderr}");
    let stderr = bad(d, &["trace", "tiny", "--window", "40s..50s"]);
    assert!(stderr.contains("--window 40s..50s: starts at or after the end"), "{stderr}");
    let stderr = bad(d, &["trace", "tiny", "--window", "20s..10s"]);
    assert!(stderr.contains("before its end"), "{stderr}");
    assert_eq!(leftovers(&run), Vec::<String>::new());

    // A malformed time on line 5 of ownership.csv, for the second run: the first run's trace
    // is not written either (the set is staged and renamed only whole).
    let ownership = std::fs::read_to_string(run.join("ownership.csv")).unwrap();
    let mut lines: Vec<String> = ownership.lines().map(String::from).collect();
    let second = lines.iter().position(|l| l.starts_with("cooperative")).unwrap();
    let broken = lines[second].replacen(",0.0,", ",soon,", 1);
    assert_ne!(broken, lines[second]);
    lines[second] = broken;
    std::fs::write(run.join("ownership.csv"), lines.join("\n") + "\n").unwrap();
    let stderr = bad(d, &["trace", "tiny"]);
    let want = format!("ownership.csv line {}: column `start_s`", second + 1);
    assert!(stderr.contains(&want), "{stderr}");
    assert_eq!(leftovers(&run), Vec::<String>::new(), "no trace, no temporary");
    // The first run alone is fine.
    let listed = ok(d, &["trace", "tiny", "--protocol", "eager"]);
    assert!(listed.contains("trace-eager-range.files.json"), "{listed}");
    std::fs::remove_file(run.join("trace-eager-range.files.json")).unwrap();

    // Rows out of order: a partition's row that starts before the one before it ends.
    lines[second] = ownership.lines().nth(second).unwrap().to_string();
    let next = second + 1;
    let mut fields: Vec<String> = lines[next].split(',').map(String::from).collect();
    fields[5] = "0.0".into(); // start_s of the partition's second row
    lines[next] = fields.join(",");
    std::fs::write(run.join("ownership.csv"), lines.join("\n") + "\n").unwrap();
    let stderr = bad(d, &["trace", "tiny", "--protocol", "cooperative"]);
    let want = format!("ownership.csv line {}: t-0 starts at 0 s, before its row before", next + 1);
    assert!(stderr.contains(&want), "{stderr}");
    assert_eq!(leftovers(&run), Vec::<String>::new());

    // A row with a field missing, and a table missing.
    std::fs::write(run.join("rebalances.csv"), "protocol,assignor\neager,range,false\n").unwrap();
    let stderr = bad(d, &["trace", "tiny"]);
    assert!(stderr.contains("rebalances.csv line 2: 3 fields where the rows before have 2"));
    std::fs::remove_file(run.join("timeline.csv")).unwrap();
    let stderr = bad(d, &["trace", "tiny"]);
    assert!(stderr.contains("tiny: missing timeline.csv"), "{stderr}");
    assert_eq!(leftovers(&run), Vec::<String>::new());
}
