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
use std::collections::BTreeSet;
use std::path::Path;

/// `sims/<file>` under lock-step timing (`[timing] exact = true`, docs/timing.md): its events
/// fall exactly at their `at` (the crash at 2m), as the derivations below need.
fn sim(file: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sims").join(file);
    let text = std::fs::read_to_string(&path).expect("the scenario file");
    scenario::parse_str(&format!("{text}\n[timing]\nexact = true\n"), &path)
        .expect("the scenario loads")
}

fn crash() -> Scenario {
    sim("crash.toml")
}

fn protocol(text: &str) -> scenario::ProtocolSpec {
    Scenario::parse_protocol(text).expect("a protocol")
}

/// The report and the trace's events of one run of `sims/crash.toml`.
fn traced(text: &str, options: TraceOptions) -> (RunReport, Vec<u8>, Vec<Value>) {
    traced_run(&crash(), text, options)
}

/// The report and the trace's events of one run of `scenario`.
fn traced_run(
    scenario: &Scenario,
    text: &str,
    options: TraceOptions,
) -> (RunReport, Vec<u8>, Vec<Value>) {
    let spec = protocol(text);
    let writer = TraceWriter::new(Vec::new(), "crash", spec.protocol.name(), options).unwrap();
    let (report, written) =
        lab::trace::run_protocol_traced(scenario, spec, scenario.seed, lab::Stepping::Fast, writer)
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
    report::perfetto::check::track(e)
}

/// The format's rules, as the viewers need them (report::perfetto::check, shared with the
/// file-built trace's tests in crates/cli/tests/trace.rs).
fn check_format(events: &[Value]) {
    if let Err(broken) = report::perfetto::check::format(events) {
        panic!("{broken}");
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
    // stop-the-world) belongs to c2, range's first member of the two left: members sort by
    // their ids, whose UUIDs the coordinator draws from the seed (`[group] client_ids =
    // "default"`, issue 25 item 6c); with this seed c2's sorts before c0's.
    let tid = partition_tid(&events, "orders-4");
    let part = spans(&events, 2, tid);
    let owners: Vec<&str> = part
        .iter()
        .filter(|s| s["args"]["state"] == "consuming")
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(owners, ["c1", "c2"], "owner spans of orders-4");
    // From the crash at 2m, the partition is idle (owner c1) until its next record arrives,
    // then down on the dead owner until the session expires: the ownership.csv rows.
    let c1 = part.iter().find(|s| s["name"] == "c1").expect("c1's span");
    assert_eq!(micros(&c1["ts"]) + micros(&c1["dur"]), 120e6, "c1 consumes until the crash");
    let idle = part.iter().find(|s| s["name"] == "idle" && micros(&s["ts"]) == 120e6);
    let idle = idle.expect("an idle span from the crash");
    assert_eq!(idle["args"]["owner"], "c1");
    let dead = part.iter().find(|s| s["name"] == "owner-dead").expect("an owner-dead span");
    assert_eq!(micros(&dead["ts"]), micros(&idle["ts"]) + micros(&idle["dur"]));
    assert_eq!(dead["args"]["owner"], "c1");
    let dead_end = micros(&dead["ts"]) + micros(&dead["dur"]);
    assert!((dead_end - expiry.start_s * 1e6).abs() < 1e-3, "to the session expiry");
    // Every span of the partition is a row of ownership.csv, in order.
    let rows: Vec<(f64, f64, &str)> = report
        .ownership
        .iter()
        .filter(|o| o.topic == "orders" && o.partition == 4)
        .map(|o| (o.start_s * 1e6, o.end_s * 1e6, o.state))
        .collect();
    assert_eq!(rows.len(), part.len(), "one span per ownership row");
    for (span, (start, end, state)) in part.iter().zip(&rows) {
        assert!((micros(&span["ts"]) - start).abs() < 1e-3, "{span} vs {start}");
        let span_end = micros(&span["ts"]) + micros(&span["dur"]);
        assert!((span_end - end).abs() < 1e-3, "{span} vs {end}");
        assert_eq!(span["args"]["state"], *state);
    }

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

/// Member states are the model's (`Observation::MemberState`), not read from event text: in
/// `sims/stall.toml` c1 stalls at 1m for 90 s, in `sims/gc-pause.toml` c2 pauses at 2m for
/// 60 s, and their tracks show exactly those spans; before them each joined (its first
/// JoinGroup sent at the start), synced (classic only) and consumed.
#[test]
fn member_states_are_the_models_stalls_and_pauses() {
    let cases = [
        ("stall.toml", "c1", "stalled", 60e6, 90e6),
        ("gc-pause.toml", "c2", "paused", 120e6, 60e6),
    ];
    for (file, member, state, at_us, for_us) in cases {
        let scenario = sim(file);
        for text in ["eager:range", "consumer:uniform"] {
            let what = format!("{file} {text} {member}");
            let (_, _, events) = traced_run(&scenario, text, TraceOptions::default());
            check_format(&events);
            let states = spans(&events, member_pid(&events, member), 1);
            let hits: Vec<&&Value> = states.iter().filter(|s| s["name"] == state).collect();
            assert_eq!(hits.len(), 1, "{what}: one {state} span");
            assert_eq!(
                (micros(&hits[0]["ts"]), micros(&hits[0]["dur"])),
                (at_us, for_us),
                "{what}"
            );
            let names: Vec<&str> = states.iter().map(|s| s["name"].as_str().unwrap()).collect();
            let joined = if text == "eager:range" {
                &["joining", "syncing", "consuming"][..]
            } else {
                &["joining", "consuming"][..] // KIP-848: no SyncGroup
            };
            assert_eq!(&names[..joined.len()], joined, "{what}: {names:?}");
            assert_eq!(micros(&states[0]["ts"]), 0.0, "{what}: the first JoinGroup at the start");
            assert!(states.iter().all(|s| s["args"]["incarnation"] == 1), "{what}");
        }
    }
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
