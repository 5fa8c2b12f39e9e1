//! The format's rules, as the viewers need them, stated once for the tests of both sources of
//! a trace (`crates/lab/tests/trace.rs`, `crates/cli/tests/trace.rs`): every event has a
//! phase, a name and a pid; metadata events name processes and threads before their first
//! event; every span is complete (`X`: its end is `ts + dur`, `dur > 0`, so no begin lacks
//! its end) and the spans of a track are in `ts` order without overlapping (times compared
//! in integer nanoseconds, [`nanos`]); instants (thread
//! scope) and counters of one name and track are in `ts` order; a counter has a numeric
//! `value`.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// `(pid, tid)` of an event (`tid` 0 when absent).
pub fn track(e: &Value) -> (u64, u64) {
    (e["pid"].as_u64().unwrap_or(u64::MAX), e["tid"].as_u64().unwrap_or(0))
}

/// A time of the trace (`ts`, `dur`: microseconds with up to three decimals) in integer
/// nanoseconds, exactly (`None`: not a number). Sums of times are compared this way: in
/// floating point `ts + dur` of one span may exceed the next span's `ts` by a rounding.
pub fn nanos(v: &Value) -> Option<i64> {
    v.as_f64().map(|us| (us * 1e3).round() as i64)
}

/// The first rule `events` (a trace's `traceEvents`) break, naming the event.
pub fn format(events: &[Value]) -> Result<(), String> {
    let mut processes = BTreeSet::new();
    let mut threads = BTreeSet::new();
    let mut last_end: BTreeMap<(u64, u64), i64> = BTreeMap::new();
    let mut last_instant: BTreeMap<(u64, u64, String), i64> = BTreeMap::new();
    let broken = |rule: &str, e: &Value| Err(format!("{rule}: {e}"));
    for e in events {
        let Some(ph) = e["ph"].as_str() else { return broken("every event has ph", e) };
        let Some(name) = e["name"].as_str() else { return broken("every event has a name", e) };
        if !e["pid"].is_u64() {
            return broken("every event has a pid", e);
        }
        match ph {
            "M" => {
                if !e["args"].is_object() {
                    return broken("metadata has args", e);
                }
                match name {
                    "process_name" | "process_sort_index" => {
                        processes.insert(track(e).0);
                    }
                    "thread_name" | "thread_sort_index" => {
                        threads.insert(track(e));
                    }
                    _ => return broken("known metadata", e),
                }
            }
            "X" | "i" | "C" => {
                if !e["cat"].is_string() || !e["ts"].is_number() || !e["tid"].is_u64() {
                    return broken("cat, ts and tid", e);
                }
                if !processes.contains(&track(e).0) {
                    return broken("process named before use", e);
                }
                if ph != "C" && !threads.contains(&track(e)) {
                    return broken("thread named before use", e);
                }
                let ts = nanos(&e["ts"]).unwrap_or(-1);
                if ts < 0 {
                    return broken("ts at least 0", e);
                }
                if ph == "X" {
                    let dur = nanos(&e["dur"]).unwrap_or(0);
                    if dur <= 0 {
                        return broken("a span has its end (dur > 0)", e);
                    }
                    let end = last_end.entry(track(e)).or_insert(0);
                    if ts < *end {
                        return broken("spans of a track in order, not overlapping", e);
                    }
                    *end = ts + dur;
                } else {
                    let key = (track(e).0, track(e).1, name.to_string());
                    let last = last_instant.entry(key).or_insert(0);
                    if ts < *last {
                        return broken("instants and counters in order", e);
                    }
                    *last = ts;
                }
                if ph == "i" && e["s"] != "t" {
                    return broken("instants of thread scope", e);
                }
                if ph == "C" && !e["args"]["value"].is_number() {
                    return broken("a counter has a value", e);
                }
            }
            _ => return broken("a known phase (M, X, i, C)", e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn named() -> Vec<Value> {
        vec![
            json!({"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "partitions"}}),
            json!({"name": "thread_name", "ph": "M", "pid": 2, "tid": 1, "args": {"name": "t-0"}}),
        ]
    }

    fn span(ts: f64, dur: f64) -> Value {
        json!({"name": "c0", "cat": "partition", "ph": "X", "ts": ts, "dur": dur, "pid": 2,
               "tid": 1, "args": {}})
    }

    #[test]
    fn spans_in_order_pass_and_each_broken_rule_is_named() {
        let mut events = named();
        events.extend([span(0.0, 5.0), span(5.0, 1.5)]);
        assert_eq!(format(&events), Ok(()));
        // In floating point 150038796.87 + 4963795.529 is above 155002592.399: in nanoseconds
        // the spans touch.
        let mut touching = named();
        touching.extend([span(150038796.87, 4963795.529), span(155002592.399, 1.0)]);
        assert_eq!(format(&touching), Ok(()));
        let mut overlapping = named();
        overlapping.extend([span(0.0, 5.0), span(4.0, 1.0)]);
        assert!(format(&overlapping).unwrap_err().starts_with("spans of a track in order"));
        let mut empty = named();
        empty.push(span(1.0, 0.0));
        assert!(format(&empty).unwrap_err().starts_with("a span has its end"));
        let unnamed = vec![span(0.0, 1.0)];
        assert!(format(&unnamed).unwrap_err().starts_with("process named before use"));
        let begin = json!({"name": "x", "cat": "c", "ph": "B", "ts": 0, "pid": 2, "tid": 1});
        let mut begins = named();
        begins.push(begin);
        assert!(format(&begins).unwrap_err().starts_with("a known phase"));
    }
}
