//! Hand-derived scenario tests of static membership (KIP-345, issue 6 part 1), run through
//! `lab::run_protocol` (model + metrics). Every expected number is derived in the comment
//! above its assertion.
//!
//! Common timing (as in tests/classic.rs):
//! - rtt 2 ms: every request and response takes 1 ms one way;
//! - constant arrivals at 100 records/s per partition: offset k arrives at (k + 1) * 10 ms;
//! - initial delay 0: the first assignment takes effect at 4 ms (join 1 ms, response 2 ms,
//!   sync 3 ms, sync response 4 ms); range gives c0 t-0, t-1 and c1 t-2, t-3;
//! - heartbeats every 3 s from the sync response (3k + 0.004 s), arriving 1 ms later;
//!   session timeout 10 s;
//! - Java auto-commit every 5 s from the assignment (AK `ConsumerCoordinator.onJoinComplete`
//!   restarts the timer at 4 ms), checked in poll, a waiting poll waking when one is due:
//!   commits at 5.004, 10.004, 15.004, 20.004 s carry the positions returned by the poll of
//!   x.xx1 s before (at 20.004 s: position 2000). (Issue 25; the timer used to run from the
//!   process start: commits at 5.001 ... 20.001 s, position 1999 at 20.001 s.)

mod support;

use model::Observation;
use scenario::Scenario;
use support::{close, run, spec};

const BASE: &str = r#"
name = "static"
duration = "40s"
seed = 7
protocols = ["eager:range+static"]

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
"max.poll.interval.ms" = 300000
"auto.commit.interval.ms" = 5000
"auto.offset.reset" = "earliest"

[broker.config]
"group.initial.rebalance.delay.ms" = 0

[network]
rtt = "2ms"

[group]
members = 2
"#;

fn scenario(duration: &str, extra: &str) -> Scenario {
    let base = BASE.replace("duration = \"40s\"", &format!("duration = \"{duration}\""));
    let text = format!("{base}\n{extra}");
    support::parse(&text, "static.toml")
}

fn crash(member: &str) -> String {
    format!(
        "[[event]]\nat = \"20.505s\"\nkind = \"crash\"\nmember = \"{member}\"\n\
         restart_after = \"2s\"\n"
    )
}

/// A static member crashes at 20.505 s and restarts 2 s later, inside the 10 s session
/// timeout: no rebalance; its partitions are down exactly from the crash (first waiting
/// record) to the restarted member's sync response; the other member's never.
#[test]
fn static_crash_restart_within_session_timeout_does_not_rebalance() {
    for member in ["c1", "c0"] {
        for protocol in ["eager:range+static", "cooperative:cooperative-sticky+static"] {
            let what = format!("{protocol} {member}");
            let r = run(&scenario("40s", &crash(member)), protocol);
            let sum = r.summary.as_ref().unwrap();
            // Only the initial rebalance: the restart (JoinGroup at 22.505 s without a member
            // id, the old group.instance.id) replaces the member in the Stable group.
            assert_eq!(sum.rebalances, 1, "{what}");
            assert_eq!(sum.partitions_moved, 0, "{what}");
            // The member polled at 20.501 s (offset 2049, arrived 20.500) before it died; its
            // next record arrives at 20.510. The new process joins at 22.505 (arrives 22.506),
            // gets the current generation at 22.507, syncs (22.508) and has its old
            // partitions back at 22.509: 1.999 s down on each of its 2 partitions, an episode
            // each; the leader c0 restarting changes nothing (skipAssignment).
            close(sum.downtime_partition_s, 2.0 * 1.999, &what);
            close(sum.downtime_episode_ms_max, 1999.0, &what);
            let down: Vec<f64> = r.partitions.iter().map(|p| p.downtime_s).collect();
            assert_eq!(down.iter().filter(|d| **d == 0.0).count(), 2, "{what}: {down:?}");
            close(sum.stop_the_world_s, 0.0, &what);
            // It resumes at its commit of 20.004 s (2000): offsets 2000..=2049 again, 50 on
            // each of its 2 partitions.
            assert_eq!(sum.records_reprocessed, 100, "{what}");
        }
    }
}

/// The same crash and restart with dynamic members (tests/classic.rs (c)) costs a rebalance
/// and 4 s of stop-the-world: the comparison the static run must beat.
#[test]
fn dynamic_crash_restart_is_worse() {
    let s = scenario("40s", &crash("c1"));
    let dynamic = run(&s, "eager:range");
    let stat = run(&s, "eager:range+static");
    let (d, st) = (dynamic.summary.unwrap(), stat.summary.unwrap());
    // classic.rs (c): 2 x 7.498 + 2 x 3.998 s down, 2 rebalances; static: 2 x 1.999 s, 1.
    close(d.downtime_partition_s, 2.0 * 7.498 + 2.0 * 3.998, "dynamic downtime");
    assert_eq!((d.rebalances, st.rebalances), (2, 1));
    assert!(st.downtime_partition_s < d.downtime_partition_s);
}

/// Rolling restart (close, back 2 s later, one member every 10 s): static members send no
/// LeaveGroup and rejoin inside the session timeout: no rebalance at all.
#[test]
fn static_rolling_restart_does_not_rebalance() {
    let extra = "[[event]]\nat = \"20s\"\nkind = \"rolling-restart\"\ninterval = \"10s\"\n\
                 downtime = \"2s\"\n";
    let s = scenario("40s", extra);
    for protocol in ["eager:range+static", "cooperative:cooperative-sticky+static"] {
        let r = run(&s, protocol);
        let sum = r.summary.as_ref().unwrap();
        assert_eq!(sum.rebalances, 1, "{protocol}");
        // c0 closes at 20.000 s: it commits its position (1999: its poll of 19.991 returned
        // offsets up to 1998) and revokes t-0, t-1, whose record 1999 arrives at 20.000. It
        // is back at 22.000: join 22.001, response 22.002, sync 22.003, sync response 22.004:
        // 2.004 s down on each of its 2 partitions; c1 likewise from 30.000 to 32.004 s.
        close(sum.downtime_partition_s, 4.0 * 2.004, protocol);
        // The close commit is stored (arrives 20.001) before the restart reads it.
        assert_eq!(sum.records_reprocessed, 0, "{protocol}");
        assert_eq!(sum.partitions_moved, 0, "{protocol}");
    }
    // Dynamic eager: each close is a LeaveGroup and each restart a join: 4 more rebalances.
    let dynamic = run(&s, "eager:range");
    assert_eq!(dynamic.summary.unwrap().rebalances, 5);
}

/// A static member stalls 20 s inside a batch with `max.poll.interval.ms` = 5 s (processing
/// 1 ms per record, a synchronous commit after every batch): it stops heartbeating but sends
/// no LeaveGroup; its partitions move only when its session expires.
#[test]
fn static_member_past_max_poll_moves_partitions_only_at_session_expiry() {
    let extra =
        "[[event]]\nat = \"20.502s\"\nkind = \"stall\"\nmember = \"c1\"\nduration = \"20s\"\n";
    let mut s = scenario("60s", extra);
    s.consumer.config.max_poll_interval = sim_core::SimTime::from_secs(5);
    s.consumer.processing = scenario::Processing::Constant(sim_core::SimTime::from_millis(1));
    s.consumer.commit = scenario::CommitPolicy::SyncPerBatch;
    let mut seen: Vec<Observation> = Vec::new();
    model::simulate(&s, spec("eager:range+static"), s.seed, &mut seen);
    let r = run(&s, "eager:range+static");
    // c1's poll at 20.501 s returns offset 2049 of t-2 and t-3; the stall moves the batch end
    // to 40.503. The poll timer expires at 20.501 + 5 = 25.501 s: no LeaveGroup, heartbeats
    // stop. Its last heartbeat was sent at 24.004 (arrived 24.005): the session expires at
    // 34.005 s, the rebalance trigger. c0 learns at its heartbeat of 36.004 (response
    // 36.006), revokes and rejoins (36.007, the only member): sync response at 36.010 s.
    let expired: Vec<String> = seen
        .iter()
        .filter_map(|o| match o {
            Observation::MaxPollExpired { at, member } => Some(format!("{member}@{at}")),
            _ => None,
        })
        .collect();
    assert_eq!(expired, ["c1@25.501s"]);
    let triggers: Vec<&str> = r.rebalances.iter().map(|x| x.trigger.as_str()).collect();
    assert_eq!(triggers, ["join", "session-expiry", "join"]);
    close(r.rebalances[1].start_s, 34.005, "expiry rebalance start");
    close(r.rebalances[1].end_s, 36.010, "expiry rebalance end");
    // t-2 and t-3 are consumed by the busy c1 (not down) until its removal at 34.005 s, then
    // down (records waiting since 20.500) until c0 has them at 36.010: 2.005 s each.
    let down_from: Vec<(u32, f64)> = r
        .ownership
        .iter()
        .filter(|o| o.state == "unassigned" && o.start_s > 30.0)
        .map(|o| (o.partition, o.start_s))
        .collect();
    assert_eq!(down_from, [(2, 34.005), (3, 34.005)]);
    // At 40.503 c1 finishes its batch; it is no longer a member, so it joins as a new one
    // (arrives 40.504): the third rebalance.
    close(r.rebalances[2].start_s, 40.504, "rejoin start");
}
