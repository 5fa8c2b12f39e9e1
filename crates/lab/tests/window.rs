//! The measurement window (`measure_from`, issue 28 item 3): the availability and rebalance
//! figures of `summary.csv` count from `measure_from`, the start-up's are reported apart, and
//! nothing else changes. Checked against the same run without a window, whose ownership rows
//! (`ownership.csv`) give the split independently of the collector's clipping.

mod support;

use metrics::{RunReport, SummaryRow};
use scenario::Scenario;
use sim_core::SimTime;
use support::{close, parse, run};

/// Three members on 6 partitions at 100 records/s each; c1 crashes at 20 s and its partitions
/// are down until its session (10 s) expires and the group rebalances: an episode from about
/// 20 s to about 30 s, which a window from 25 s cuts in two.
const CRASH: &str = r#"
name = "window"
duration = "60s"
seed = 3
protocols = ["eager:range"]

[[topic]]
name = "t"
partitions = 6
rate = 100.0

[consumer.config]
"session.timeout.ms" = 10000
"heartbeat.interval.ms" = 1000

[group]
members = 3

[[event]]
at = "20s"
kind = "crash"
member = "c1"
"#;

const PROTOCOLS: [&str; 4] =
    ["eager:range", "cooperative:cooperative-sticky", "consumer:uniform", "eager:range+static"];

fn windowed(from: &str) -> Scenario {
    parse(&CRASH.replace("seed = 3", &format!("seed = 3\nmeasure_from = \"{from}\"")), "w.toml")
}

fn summary(r: &RunReport) -> &SummaryRow {
    r.summary.as_ref().expect("a summary")
}

/// Down seconds of the run's ownership rows inside `[from, to)`: every state but consuming and
/// idle is down (DESIGN section 5).
fn down_in(r: &RunReport, from: f64, to: f64) -> f64 {
    r.ownership
        .iter()
        .filter(|row| row.state != "consuming" && row.state != "idle")
        .map(|row| (row.end_s.min(to) - row.start_s.max(from)).max(0.0))
        .sum()
}

#[test]
fn the_window_splits_downtime_stop_the_world_and_rebalances_exactly() {
    let whole = parse(CRASH, "w.toml");
    let cut = windowed("25s");
    for protocol in PROTOCOLS {
        let (all, win) = (run(&whole, protocol), run(&cut, protocol));
        let (a, w) = (summary(&all), summary(&win));
        // The window changes what is reported, not what happens: every record count, the
        // latencies and the events are those of the whole run.
        assert_eq!(
            (a.records_produced, a.records_processed, a.records_reprocessed, a.records_lost),
            (w.records_produced, w.records_processed, w.records_reprocessed, w.records_lost),
            "{protocol}: record counts"
        );
        assert_eq!((a.final_lag, a.events), (w.final_lag, w.events), "{protocol}");
        assert_eq!(a.e2e_latency_ms_max, w.e2e_latency_ms_max, "{protocol}");
        assert_eq!(all.rebalances, win.rebalances, "{protocol}: rebalances.csv lists every one");
        // The split is exact: start-up + window = the whole run.
        let what = format!("{protocol}: downtime");
        close(
            w.startup_downtime_partition_s + w.downtime_partition_s,
            a.downtime_partition_s,
            &what,
        );
        let what = format!("{protocol}: stop-the-world");
        close(w.startup_stop_the_world_s + w.stop_the_world_s, a.stop_the_world_s, &what);
        assert_eq!(w.startup_rebalances + w.rebalances, a.rebalances, "{protocol}: rebalances");
        // ... and falls where the ownership rows of the unwindowed run put it.
        close(w.startup_downtime_partition_s, down_in(&all, 0.0, 25.0), &what);
        close(w.downtime_partition_s, down_in(&all, 25.0, 60.0), &what);
        let moved_in_window: u64 = win.partitions.iter().map(|p| p.moves).sum();
        assert_eq!(w.partitions_moved, moved_in_window, "{protocol}: partitions.csv sums to it");
        close(w.measure_from_s, 25.0, "measure_from_s");
    }
}

/// Eager with range, by hand: the only rebalances are the formation (in the start-up) and the
/// eviction of c1 after its session timeout (c1's last heartbeat reached the coordinator just
/// before 20 s, so it expires before 31 s, after 25 s): 1 + 1. The crashed member's 2
/// partitions are down from their first record after the crash (within 10 ms of 20 s, at 100
/// records/s, plus the fetch) to the eviction's assignment, so the start-up holds the
/// formation's downtime plus 2 partitions x (25 - 20 s) = 10 partition-s less at most 2 x 11 ms;
/// the window holds 2 x (eviction end - 25 s) plus the survivors' 4 partitions down during the
/// eviction's stop-the-world (at most its duration each).
#[test]
fn eager_crash_window_by_hand() {
    let whole = run(&parse(CRASH, "w.toml"), "eager:range");
    let win = run(&windowed("25s"), "eager:range");
    let w = summary(&win);
    assert_eq!((w.startup_rebalances, w.rebalances), (1, 1));
    let formation = whole.rebalances[0].end_s;
    let before = w.startup_downtime_partition_s - down_in(&whole, 0.0, formation);
    assert!((9.978..=10.0).contains(&before), "crash episode before 25 s: {before}");
    let eviction = &whole.rebalances[1];
    assert!(eviction.end_s > 25.0 && eviction.end_s < 31.0, "eviction ends at {}", eviction.end_s);
    let dead = 2.0 * (eviction.end_s - 25.0);
    let survivors = w.downtime_partition_s - dead;
    let bound = 4.0 * eviction.duration_ms / 1000.0;
    assert!((0.0..=bound + 1e-9).contains(&survivors), "survivors {survivors} s, bound {bound}");
}

/// `measure_from = "0s"` is the whole run: every column equal to the run without the key, and
/// the start-up columns zero.
#[test]
fn a_window_from_zero_changes_nothing() {
    let whole = parse(CRASH, "w.toml");
    let zero = windowed("0s");
    assert_eq!(zero.measure_from, SimTime::ZERO);
    for protocol in PROTOCOLS {
        let (a, z) = (run(&whole, protocol), run(&zero, protocol));
        assert_eq!(a.summary, z.summary, "{protocol}");
        assert_eq!(a.partitions, z.partitions, "{protocol}");
        let s = summary(&z);
        assert_eq!(
            (s.startup_downtime_partition_s, s.startup_stop_the_world_s, s.startup_rebalances),
            (0.0, 0.0, 0),
            "{protocol}"
        );
    }
}
