//! Helpers shared by the hand-derived scenario tests: parse a scenario written in the test,
//! run one protocol, compare floats exactly enough for derived values.
#![allow(dead_code)]

use metrics::RunReport;
use scenario::{ProtocolSpec, Scenario};
use std::path::Path;

/// Parses `text` as the scenario file `file_name` with lock-step timing (`[timing] exact =
/// true`, which the hand-derived arithmetic of these tests needs) unless the text has a
/// `[timing]` table of its own; a parse error fails the test with every message.
pub fn parse(text: &str, file_name: &str) -> Scenario {
    if text.contains("[timing]") {
        return parse_as_written(text, file_name);
    }
    parse_as_written(&format!("{text}\n[timing]\nexact = true\n"), file_name)
}

/// Parses `text` as written (varied timing unless it says otherwise).
pub fn parse_as_written(text: &str, file_name: &str) -> Scenario {
    scenario::parse_str(text, Path::new(file_name)).unwrap_or_else(|e| {
        panic!("{}", e.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("\n"))
    })
}

/// `eager:range`, `consumer:uniform+static`, ... as a protocol spec.
pub fn spec(text: &str) -> ProtocolSpec {
    Scenario::parse_protocol(text).unwrap()
}

/// Runs `s` under `protocol` with the scenario's own seed.
pub fn run(s: &Scenario, protocol: &str) -> RunReport {
    lab::run_protocol(s, spec(protocol), s.seed).unwrap()
}

/// Asserts that a derived value matches to a nanosecond-scale tolerance.
pub fn close(actual: f64, expected: f64, what: &str) {
    assert!((actual - expected).abs() < 1e-6, "{what}: {actual} != {expected}");
}
