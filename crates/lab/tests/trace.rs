//! `run --trace` (report::perfetto through lab::trace): the trace of `sims/crash.toml` obeys
//! the Trace Event Format's rules (valid JSON, required fields, every track named, spans in
//! `ts` order and not overlapping on their track), tells the figures the scenario makes
//! checkable by hand (the crashed member's owner spans, its dead span, one rebalance span per
//! `rebalances.csv` row), and its window and member filter keep what they say. Tracing
//! changes nothing in the run's report.

use metrics::RunReport;
use report::perfetto::{TraceOptions, TraceWriter};
use scenario::Scenario;
use serde_json::Value;
use sim_core::SimTime;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `sims/crash.toml` under lock-step timing (`[timing] exact = true`): the crash falls at 2m.
fn crash() -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sims/crash.toml");
    let text = std::fs::read_to_string(&path).expect("sims/crash.toml");
    scenario::parse_str(&format!("{text}\n[timing]\nexact = true\n"), &path)
        .expect("sims/crash.toml loads")
}

fn protocol(text: &str) -> scenario::ProtocolSpec {
    Scenario::parse_protocol(text).expect("a protocol")
}

/// The report and the trace's events of one run.
fn traced(text: &str, options: TraceOptions) -> (RunReport, Vec<u8>, Vec<Value>) {
    let scenario = crash();
    let spec = protocol(text);
    let writer = TraceWriter::new(Vec::new(), "crash", spec.protocol.name(), options).unwrap();
    let (report, written) = lab::trace::run_protocol_traced(
        &scenario,
        spec,
        scenario.seed,
        lab::Stepping::Fast,
        writer,
    )
    .expect("the run");
    let (bytes, stats) = written.expect("the trace");
    assert_eq!(stats.bytes, bytes.len() as u64, "the byte count is the file's size");
    let json: Value = serde_json::from_slice(&bytes).expect("the trace is valid JSON");
    let events = json["traceEvents"].as_array().expect("a traceEvents array").clone();
    assert_eq!(stats.events, events.len() as u64);
    (report, bytes, events)
}

fn micros(v: &Value) -> f64 {
    v.as_f64().expect("a number")
}

/// `(pid, tid)` of an event.
fn track(e: &Value) -> (u64, u64) {
    (e["pid"].as_u64().expect("pid"), e["tid"].as_u64().unwrap_or(0))
}

/// The format's rules, as the viewers need them.
fn check_format(events: &[Value]) {
    let mut processes = BTreeSet::new();
    let mut threads = BTreeSet::new();
    let mut last_end: BTreeMap<(u64, u64), f64> = BTreeMap::new();
    let mut last_instant: BTreeMap<(u64, u64, String), f64> = BTreeMap::new();
    for e in events {
        let ph = e["ph"].as_str().expect("every event has ph");
        assert!(e["name"].is_string(), "every event has a name: {e}");
        assert!(e["pid"].is_u64(), "every event has a pid: {e}");
        match ph {
            "M" => {
                let name = e["name"].as_str().unwrap();
                assert!(e["args"].is_object(), "{e}");
                match name {
                    "process_name" | "process_sort_index" => {
                        processes.insert(e["pid"].as_u64().unwrap());
                    }
                    "thread_name" | "thread_sort_index" => {
                        threads.insert(track(e));
                    }
                    other => panic!("unknown metadata {other}"),
                }
            }
            "X" | "i" | "C" => {
                assert!(e["cat"].is_string() && e["ts"].is_number(), "{e}");
                assert!(e["tid"].is_u64(), "{e}");
                assert!(processes.contains(&track(e).0), "process named before use: {e}");
                if ph != "C" {
                    assert!(threads.contains(&track(e)), "thread named before use: {e}");
                }
                let ts = micros(&e["ts"]);
                assert!(ts >= 0.0);
                if ph == "X" {
                    let dur = micros(&e["dur"]);
                    assert!(dur > 0.0, "no empty span: {e}");
                    let end = last_end.entry(track(e)).or_insert(0.0);
                    // Times are microseconds with 3 decimals (whole nanoseconds): `ts + dur` of
                    // the span before may exceed this `ts` by a rounding error far below 1 ns.
                    assert!(ts >= *end - 1e-4, "spans of a track in order, not overlapping: {e}");
                    *end = ts + dur;
                } else {
                    let key = (track(e).0, track(e).1, e["name"].as_str().unwrap().to_string());
                    let last = last_instant.entry(key).or_insert(0.0);
                    assert!(ts >= *last, "instants and counters in order: {e}");
                    *last = ts;
                }
                if ph == "i" {
                    assert_eq!(e["s"], "t", "{e}");
                }
                if ph == "C" {
                    assert!(e["args"]["value"].is_number(), "{e}");
                }
            }
            other => panic!("unexpected phase {other}: {e}"),
        }
    }
}

fn spans(events: &[Value], pid: u64, tid: u64) -> Vec<&Value> {
    events.iter().filter(|e| e["ph"] == "X" && track(e) == (pid, tid)).collect()
}

/// The process id of a member (by its `process_name`).
fn member_pid(events: &[Value], name: &str) -> u64 {
    let want = format!("member {name}");
    events
        .iter()
        .find(|e| e["name"] == "process_name" && e["args"]["name"] == want.as_str())
        .and_then(|e| e["pid"].as_u64())
        .expect("the member's process")
}

/// The thread id of a partition track (by its `thread_name`).
fn partition_tid(events: &[Value], name: &str) -> u64 {
    events
        .iter()
        .find(|e| e["name"] == "thread_name" && e["pid"] == 2 && e["args"]["name"] == name)
        .and_then(|e| e["tid"].as_u64())
        .expect("the partition's thread")
}

#[test]
fn the_crash_trace_follows_the_format_and_tells_the_crash() {
    let (report, _, events) = traced("eager:range", TraceOptions::default());
    check_format(&events);
    // Tracing changes nothing in the run.
    let plain = lab::run_protocol(&crash(), protocol("eager:range"), crash().seed).unwrap();
    assert_eq!(report, plain);

    // One rebalance span per rebalances.csv row, at its times (microseconds).
    let rebalances = spans(&events, 1, 1);
    assert_eq!(rebalances.len(), report.rebalances.len());
    for (span, row) in rebalances.iter().zip(&report.rebalances) {
        assert!((micros(&span["ts"]) - row.start_s * 1e6).abs() < 1e-3, "{span}");
        assert_eq!(span["args"]["trigger"], row.trigger.as_str());
        assert_eq!(span["args"]["rounds"], row.rounds);
    }
    let expiry = report.rebalances.iter().find(|r| r.trigger == "session-expiry").unwrap();

    // c1 (orders-4..7 under range with 3 members) crashes at 2m: its partition orders-4 is
    // owned by c1, waits on the dead owner until the session expires, then (eager: after a
    // stop-the-world) belongs to c0, range's first member of the two left.
    let tid = partition_tid(&events, "orders-4");
    let part = spans(&events, 2, tid);
    let owners: Vec<&str> = part
        .iter()
        .filter(|s| s["args"]["state"] == "consuming")
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(owners, ["c1", "c0"], "owner spans of orders-4");
    let dead = part.iter().find(|s| s["name"] == "owner-dead").expect("an owner-dead span");
    assert_eq!(micros(&dead["ts"]), 120e6, "from the crash at 2m");
    assert_eq!(dead["args"]["owner"], "c1");
    let dead_end = micros(&dead["ts"]) + micros(&dead["dur"]);
    assert!((dead_end - expiry.start_s * 1e6).abs() < 1e-3, "to the session expiry");

    // The member's own track: consuming, then dead from 2m to the end of the run (5m).
    let pid = member_pid(&events, "c1");
    let states = spans(&events, pid, 1);
    let last = states.last().unwrap();
    assert_eq!(last["name"], "dead");
    assert_eq!(micros(&last["ts"]), 120e6);
    assert_eq!(micros(&last["ts"]) + micros(&last["dur"]), 300e6);
    let names: Vec<&str> = states.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert!(names.windows(3).any(|w| w == ["joining", "syncing", "consuming"]), "{names:?}");
    // c0 commits (auto-commit every 5 s), and none after c1 died counts for c1.
    let commits = |pid: u64| {
        events
            .iter()
            .filter(move |e| e["ph"] == "i" && track(e) == (pid, 2) && e["name"] == "commit")
    };
    assert!(commits(member_pid(&events, "c0")).count() >= 50);
    assert!(commits(pid).all(|e| micros(&e["ts"]) < 120e6));
    // The counters are the timeline.csv samples.
    let lag = events.iter().filter(|e| e["ph"] == "C" && e["name"] == "lag").count();
    assert_eq!(lag, report.timeline.len());
}

#[test]
fn heartbeats_appear_only_when_asked_and_traces_are_reproducible() {
    let (_, bytes, events) = traced("cooperative", TraceOptions::default());
    assert!(!events.iter().any(|e| e["name"] == "heartbeat"));
    let (_, again, _) = traced("cooperative", TraceOptions::default());
    assert_eq!(bytes, again, "same seed, same trace bytes");
    let with = TraceOptions { heartbeats: true, ..TraceOptions::default() };
    let (_, _, events) = traced("cooperative", with);
    check_format(&events);
    // c0 lives the whole 5 minutes, one heartbeat every 3 s: about 100 reach the coordinator.
    let pid = member_pid(&events, "c0");
    let beats = events.iter().filter(|e| e["name"] == "heartbeat" && track(e) == (pid, 3)).count();
    assert!((90..=101).contains(&beats), "{beats} heartbeats of c0");
}

#[test]
fn a_window_and_a_member_filter_keep_what_they_say() {
    let window = (SimTime::from_secs(100), SimTime::from_secs(200));
    let options = TraceOptions { window: Some(window), ..TraceOptions::default() };
    let (_, windowed, events) = traced("eager:range", options);
    check_format(&events);
    for e in events.iter().filter(|e| e["ph"] != "M") {
        let ts = micros(&e["ts"]);
        let end = ts + e["dur"].as_f64().unwrap_or(0.0);
        assert!(ts >= 100e6 && end <= 200e6, "inside the window: {e}");
    }
    // The dead owner's span is cut at the window's start.
    let tid = partition_tid(&events, "orders-4");
    assert!(spans(&events, 2, tid).iter().any(|s| s["name"] == "owner-dead"));
    let (_, whole, _) = traced("eager:range", TraceOptions::default());
    assert!(windowed.len() * 2 < whole.len(), "{} vs {} bytes", windowed.len(), whole.len());

    let members = Some(BTreeSet::from(["c1".to_string()]));
    let (_, _, events) = traced("eager:range", TraceOptions { members, ..TraceOptions::default() });
    check_format(&events);
    let member_processes: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .filter(|n| n.starts_with("member "))
        .collect();
    assert_eq!(member_processes, ["member c1"]);
    for s in events.iter().filter(|e| e["ph"] == "X" && e["pid"] == 2) {
        assert_eq!(s["args"]["owner"], "c1", "{s}");
    }
}

#[test]
fn windows_parse_and_bad_ones_are_named() {
    let w = TraceOptions::parse_window("10m..12m").unwrap();
    assert_eq!(w, (SimTime::from_secs(600), SimTime::from_secs(720)));
    let w = TraceOptions::parse_window("..1m30s").unwrap();
    assert_eq!(w, (SimTime::ZERO, SimTime::from_secs(90)));
    let w = TraceOptions::parse_window("250ms..").unwrap();
    assert_eq!(w, (SimTime::from_millis(250), SimTime::MAX));
    assert!(TraceOptions::parse_window("12m..10m").unwrap_err().contains("before its end"));
    assert!(TraceOptions::parse_window("10m").unwrap_err().contains("FROM..TO"));
    assert!(TraceOptions::parse_window("10x..12m").unwrap_err().contains("not a duration"));
}
