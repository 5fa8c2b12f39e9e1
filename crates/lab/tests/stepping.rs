//! Fast stepping changes nothing but the work done (issue 8): every scenario in `sims/` and
//! `sims/real/`, under every protocol it lists, and a set of generated chaos scenarios under
//! every protocol, give the same report with `Stepping::Fast` as with `Stepping::Plain`
//! (every CSV row equal; only `events`, the queue events handled, differs).

use lab::{run_protocol_stepped, Stepping};
use metrics::RunReport;
use scenario::{ProtocolSpec, Scenario};
use std::path::{Path, PathBuf};

fn sims(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// Runs both steppings and compares; returns the two event counts.
fn assert_same(label: &str, s: &Scenario, protocol: ProtocolSpec) -> (u64, u64) {
    let run = |stepping| {
        run_protocol_stepped(s, protocol, s.seed, stepping)
            .unwrap_or_else(|e| panic!("{label} {protocol}: {e}"))
    };
    let (plain, fast) = (run(Stepping::Plain), run(Stepping::Fast));
    let events = |r: &RunReport| r.summary.as_ref().expect("a summary").events;
    let counts = (events(&plain), events(&fast));
    let without_events = |mut r: RunReport| {
        r.summary.as_mut().expect("a summary").events = 0;
        r
    };
    let (plain, fast) = (without_events(plain), without_events(fast));
    assert_eq!(plain.summary, fast.summary, "{label} {protocol}: summary");
    assert_eq!(plain.partitions, fast.partitions, "{label} {protocol}: partitions");
    assert_eq!(plain.rebalances, fast.rebalances, "{label} {protocol}: rebalances");
    assert_eq!(plain.timeline, fast.timeline, "{label} {protocol}: timeline");
    assert_eq!(plain.ownership, fast.ownership, "{label} {protocol}: ownership");
    counts
}

#[test]
fn fast_stepping_equals_plain_on_every_sim() {
    let mut total = (0, 0);
    for file in sims("sims").into_iter().chain(sims("sims/real")) {
        let s = scenario::load(&file).unwrap_or_else(|e| panic!("{}: {e:?}", file.display()));
        for protocol in s.protocols.clone() {
            let (plain, fast) = assert_same(&file.display().to_string(), &s, protocol);
            total = (total.0 + plain, total.1 + fast);
        }
    }
    // Not a speed test: fast stepping must actually keep steps out of the queue.
    assert!(total.1 * 2 < total.0, "fast {} events vs plain {}", total.1, total.0);
}

#[test]
fn fast_stepping_equals_plain_on_chaos_scenarios() {
    for seed in 0..12 {
        let s = lab::chaos_gen::generate(seed);
        for protocol in lab::chaos_gen::default_protocols() {
            assert_same(&format!("chaos seed {seed}"), &s, protocol);
        }
    }
}
