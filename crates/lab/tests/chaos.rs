//! Chaos mode end to end: the CI gate (50 seeds under every modeled protocol, every invariant
//! after every event), determinism of whole chaos runs, and that failures are reported with
//! what is needed to replay them.

use lab::chaos::{self, ChaosSummary, Failure, RunFacts, RunResult, SeedResult, Verdict};
use lab::chaos_check::Violation;
use lab::chaos_gen;
use rayon::prelude::*;
use scenario::Scenario;
use sim_core::SimTime;

/// The CI gate: seeds 0..50, each under one of the modeled protocols in turn (a debug build
/// runs the model's own assertions after every event too, so every protocol for every seed
/// would take minutes; `rebalance-sim chaos --seeds 0..300` in release covers that).
/// Fails listing every failure with its replay command.
#[test]
fn ci_gate_50_chaos_seeds_pass_every_invariant() {
    let protocols: Vec<_> = ["eager:range", "eager:roundrobin", "eager:sticky", "cooperative"]
        .iter()
        .map(|p| Scenario::parse_protocol(p).unwrap())
        .collect();
    let results: Vec<_> = (0..50u64)
        .into_par_iter()
        .map(|seed| chaos::check_seed(seed, &protocols[seed as usize % 4..][..1]))
        .collect();
    let mut reports = String::new();
    for r in &results {
        for run in &r.runs {
            if let Verdict::Failed(f) = &run.verdict {
                reports.push_str(&chaos::failure_report(r.seed, run.protocol, f, None));
            }
        }
    }
    let summary = ChaosSummary::of(&results);
    assert_eq!(summary.seeds, 50);
    assert_eq!(summary.runs, 50);
    assert!(reports.is_empty(), "{}\n{reports}", summary.line());
}

/// The same seeds give the same verdicts, facts and scenarios, in seed order, whatever the
/// number of threads.
#[test]
fn chaos_results_do_not_depend_on_threads() {
    let protocols = vec![Scenario::parse_protocol("cooperative").unwrap()];
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let serial = one.install(|| chaos::run_seeds(100..102, &protocols));
    let parallel = chaos::run_seeds(100..102, &protocols);
    assert_eq!(serial, parallel);
    let seeds: Vec<u64> = parallel.iter().map(|r| r.seed).collect();
    assert_eq!(seeds, [100, 101]);
}

/// Passing and failing runs count as runs; passing runs with zombie overlap are counted and
/// their partition-time summed.
#[test]
fn the_summary_counts_runs_failures_and_zombie_overlap() {
    let protocol = Scenario::parse_protocol("manual").unwrap();
    let failure = Failure {
        violation: Violation { invariant: "liveness", detail: "x".into() },
        at: SimTime::ZERO,
        event: 1,
        last_events: Vec::new(),
    };
    let failed = RunResult { protocol, verdict: Verdict::Failed(failure) };
    let passed = |zombie_episodes, overlap_ms| RunResult {
        protocol,
        verdict: Verdict::Passed(RunFacts {
            events: 10,
            zombie_overlap: SimTime::from_millis(overlap_ms),
            zombie_episodes,
            first_zombie: None,
            settled_at: None,
            withheld: SimTime::ZERO,
            first_withheld: None,
        }),
    };
    let scenario = chaos_gen::generate(1);
    let results = vec![
        SeedResult {
            seed: 1,
            scenario: scenario.clone(),
            runs: vec![passed(0, 0), passed(2, 1500)],
        },
        SeedResult { seed: 2, scenario, runs: vec![passed(1, 250), failed] },
    ];
    let summary = ChaosSummary::of(&results);
    // 2 seeds; 4 protocol runs, 1 failed; 2 passing runs with zombies, 1.5 s + 0.25 s.
    assert_eq!(summary.line(), "2 seeds, 4 runs, 1 failures");
    assert_eq!((summary.zombie_runs, summary.zombie_overlap), (2, SimTime::from_millis(1750)));
}

/// A scenario whose liveness deadline is impossible to meet (no time at all for the group to
/// form) fails `liveness`, and the report carries the seed, the invariant, the last events
/// and the replay command.
#[test]
fn a_broken_rule_is_reported_with_last_events_and_replay() {
    let mut scenario = chaos_gen::generate(5);
    scenario.group.members = 2;
    scenario.events.clear();
    scenario.timing = scenario::TimingSpec::exact(); // c0 starts at 0 s exactly
                                                     // With the deadline at 0 s, the very first event breaks it: member c0 starts at 0 s and
                                                     // its JoinGroup is still on the way (rtt / 2), so the coordinator is still Empty while a
                                                     // live member exists.
    let deadline_now =
        lab::chaos_check::Liveness { horizon: SimTime::ZERO, deadline: SimTime::ZERO };
    let verdict = chaos::check_run_with(&scenario, scenario.protocols[0], Some(deadline_now));
    let Verdict::Failed(Failure { violation, at, event, last_events }) = verdict else {
        panic!("{verdict:?}")
    };
    assert_eq!(violation.invariant, "liveness");
    assert_eq!((at, event), (SimTime::ZERO, 1));
    assert!(
        violation.detail.ends_with("at 0s: the group is Empty (generation 0)"),
        "{}",
        violation.detail
    );
    assert_eq!(last_events.len(), 1, "{last_events:?}");
    assert!(last_events[0].starts_with("0s Action(Start(\"c0\"))"), "{last_events:?}");
    let failure = Failure { violation: violation.clone(), at, event, last_events };
    let report =
        chaos::failure_report(5, scenario.protocols[0], &failure, Some("out/chaos-5.toml"));
    assert!(report.starts_with("FAIL seed 5 eager:range: liveness at 0s (event 1)\n"), "{report}");
    assert!(report.contains("  replay: rebalance-sim chaos --seeds 5 --protocol eager:range\n"));
    assert!(report.contains("rebalance-sim run out/chaos-5.toml --protocol eager:range"));
    let _: &Violation = &failure.violation;
}

#[test]
fn seed_ranges_parse_half_open_inclusive_and_single() {
    assert_eq!(chaos::parse_seed_range("0..500"), Ok(0..500));
    assert_eq!(chaos::parse_seed_range("3..=5"), Ok(3..6));
    assert_eq!(chaos::parse_seed_range("42"), Ok(42..43));
    assert!(chaos::parse_seed_range("5..5").unwrap_err().contains("holds no seed"));
    assert!(chaos::parse_seed_range("a..b").unwrap_err().contains("is not a seed"));
    let too_large = chaos::parse_seed_range("9223372036854775808").unwrap_err();
    assert!(too_large.contains("seeds go up to 9223372036854775807"), "{too_large}");
}
