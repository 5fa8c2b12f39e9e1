//! Hand-derived scenario tests of manual assignment (`manual`: `assign()` with no group),
//! issue 6 part 2, run through `lab::run_protocol`. Every expected number is derived in the
//! comment above its assertion.
//!
//! Common timing: rtt 2 ms (1 ms one way); constant arrivals at 100 records/s per partition,
//! offset k arrives at (k + 1) * 10 ms and reaches a waiting consumer 1 ms later (polls at
//! x.xx1 s); processing 0 ms. The rule: partition i of the flattened list (t-0..t-3) goes to
//! member c(i mod 2): c0 owns t-0 and t-2, c1 owns t-1 and t-3. A member fetches its
//! committed offsets at start (OffsetFetch: request 1 ms, response 1 ms) and consumes from
//! start + 2 ms. Java auto-commit every 5 s, checked at poll: commits at 5.001, 10.001,
//! 15.001, 20.001 s carry the positions of the previous poll (at 20.001 s: 1999).

mod support;

use scenario::Scenario;
use support::{close, run};

const BASE: &str = r#"
name = "manual-hand"
duration = "40s"
seed = 7
protocols = ["manual"]

[[topic]]
name = "t"
partitions = 4
rate = 100.0
arrival = "constant"

[consumer]
processing = "0ms"
commit = "auto"

[consumer.config]
"session.timeout.ms" = 10000
"heartbeat.interval.ms" = 3000
"auto.commit.interval.ms" = 5000
"auto.offset.reset" = "earliest"

[network]
rtt = "2ms"

[group]
members = 2
"#;

fn scenario(extra: &str) -> Scenario {
    let text = format!("{BASE}\n{extra}");
    support::parse(&text, "manual-hand.toml")
}

/// No failure: the fixed rule, no rebalance, nothing down, nothing twice.
#[test]
fn the_fixed_rule_spreads_partitions_round_robin() {
    let r = run(&scenario(""), "manual");
    let sum = r.summary.as_ref().unwrap();
    let owner = |p: u32| {
        r.ownership.iter().find(|o| o.partition == p && o.state == "consuming").unwrap().owner
    };
    assert_eq!([owner(0), owner(1), owner(2), owner(3)], ["c0", "c1", "c0", "c1"]);
    // Consuming from 2 ms, first record at 10 ms: never down.
    close(sum.downtime_partition_s, 0.0, "downtime");
    assert_eq!((sum.rebalances, sum.partitions_moved, sum.records_reprocessed), (0, 0, 0));
    // 16000 produced; the records of 40.000 s arrive too late: final lag 4.
    assert_eq!((sum.records_produced, sum.final_lag, sum.records_lost), (16_000, 4, 0));
    assert_eq!(r.summary.as_ref().unwrap().assignor, "none");
}

/// A crash with restart: the partitions wait for the member; nobody takes them over.
#[test]
fn crash_with_restart_waits_restart_after_plus_startup() {
    let extra =
        "[[event]]\nat = \"20.505s\"\nkind = \"crash\"\nmember = \"c1\"\nrestart_after = \"5s\"\n";
    let r = run(&scenario(extra), "manual");
    let sum = r.summary.as_ref().unwrap();
    // c1 restarts at 25.505 s, fetches its offsets (25.506 s at the coordinator) and consumes
    // from 25.507 s: t-1 and t-3 are down from their next record after the crash (20.510 s)
    // to 25.507 s = restart_after 5 s + startup 2 ms - 5 ms: 2 x 4.997 s, one episode each.
    close(sum.downtime_partition_s, 2.0 * 4.997, "downtime");
    close(sum.downtime_episode_ms_max, 4_997.0, "episode");
    let episodes: Vec<u64> = r.partitions.iter().map(|p| p.episodes).collect();
    assert_eq!(episodes, [0, 1, 0, 1]);
    // No group, no rebalance rows; the same member gets the same partitions: no move.
    assert!(r.rebalances.is_empty());
    assert_eq!((sum.rebalances, sum.partitions_moved), (0, 0));
    // c1 processed up to offset 2049 (polled 20.501 s); its last commit (20.001 s) stored
    // 1999: it reads 1999..=2049 again, 51 records on each of its 2 partitions.
    assert_eq!(sum.records_reprocessed, 102);
    assert_eq!((sum.records_produced, sum.final_lag, sum.records_lost), (16_000, 4, 0));
    // c0's partitions are untouched: stop-the-world never happens.
    close(sum.stop_the_world_s, 0.0, "stop the world");
}

/// A crash without restart: the partitions wait for the rest of the run.
#[test]
fn crash_without_restart_leaves_partitions_down_to_the_end() {
    let r = run(
        &scenario("[[event]]\nat = \"20.505s\"\nkind = \"crash\"\nmember = \"c1\"\n"),
        "manual",
    );
    let sum = r.summary.as_ref().unwrap();
    // t-1 and t-3 are down from 20.510 s to 40 s: 2 x 19.49 s. Offsets 2050..4000 of each
    // are never processed: final lag 2 x 1950 + 2 (the 40.000 s records of t-0, t-2).
    close(sum.downtime_partition_s, 2.0 * 19.49, "downtime");
    assert_eq!(sum.final_lag, 2 * 1950 + 2);
    assert_eq!((sum.rebalances, sum.records_reprocessed), (0, 0));
}

/// A member that joins later gets nothing: nobody reassigns.
#[test]
fn a_joined_member_gets_nothing() {
    let r = run(&scenario("[[event]]\nat = \"10s\"\nkind = \"join\"\nmember = \"c2\"\n"), "manual");
    let sum = r.summary.as_ref().unwrap();
    assert!(r.ownership.iter().all(|o| o.owner != "c2"));
    assert_eq!((sum.rebalances, sum.partitions_moved), (0, 0));
    // The timeline counts the live processes: 2, then 3 from 10 s.
    let members: Vec<u32> = r.timeline.iter().map(|t| t.members).collect();
    assert_eq!((members[9], members[10], members[39]), (2, 3, 3));
}

/// Commits still go to the group's offsets: a graceful leave commits, and the member
/// restarted later resumes exactly there.
#[test]
fn commits_go_to_the_groups_offsets() {
    let extra = "[[event]]\nat = \"20.505s\"\nkind = \"leave\"\nmember = \"c1\"\n\
                 [[event]]\nat = \"30.505s\"\nkind = \"join\"\nmember = \"c1\"\n";
    let r = run(&scenario(extra), "manual");
    let sum = r.summary.as_ref().unwrap();
    // The close at 20.505 s commits the positions (2050: offset 2049 was processed at
    // 20.501 s). c1 is back at 30.505 s, reads 2050 at 30.506 s and consumes from 30.507 s:
    // nothing twice, nothing lost; t-1 and t-3 were down from 20.510 s to 30.507 s.
    assert_eq!((sum.records_reprocessed, sum.records_lost), (0, 0));
    close(sum.downtime_partition_s, 2.0 * 9.997, "downtime");
    assert_eq!((sum.records_produced, sum.final_lag), (16_000, 4));
}
