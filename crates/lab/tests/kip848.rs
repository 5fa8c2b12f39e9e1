//! Hand-derived scenario tests of the KIP-848 consumer protocol (issue 6 part 1), run
//! through `lab::run_protocol` (model + metrics). Every expected number is derived in the
//! comment above its assertion.
//!
//! Common timing:
//! - rtt 2 ms: every request and response takes 1 ms one way; processing takes 0 ms;
//! - broker defaults `group.consumer.heartbeat.interval.ms` = 5 s, session 45 s;
//! - start: c0, c1 (, c2) send their join heartbeats at 0 (arrive 1 ms, in name order). Each
//!   join bumps the group epoch; the first member gets every partition at once, the later
//!   ones wait for them (UNRELEASED_PARTITIONS). Join responses arrive at 2 ms. c0 takes
//!   every partition and acknowledges at once (issue 25 item 4: any completed reconciliation
//!   is acknowledged; arrives 3 ms): the response (4 ms) revokes what the target takes away,
//!   which c0 acknowledges at once (sent 4 ms, arrives 5 ms): it heartbeats every 5 s from
//!   that send (5.004, 10.004, ...). c1 (c2) heartbeats 5 s after its join response (5.002,
//!   arriving 5.003, the partitions free since 5 ms): it gets them at the response (5.004, the
//!   end of the start) and acknowledges at once, so it too heartbeats at 10.004, 15.004, ...
//!   (Before item 4 c0 kept the 4 partitions until its heartbeat of 5.002 and the others got
//!   theirs at 10.004: two heartbeat intervals.)

mod support;

use scenario::Scenario;
use support::{close, run, spec};

const BASE: &str = r#"
name = "kip848"
duration = "40s"
seed = 7
protocols = ["consumer:uniform"]

[[topic]]
name = "t"
partitions = 4
rate = 100.0
arrival = "constant"

[consumer]
processing = "0ms"
commit = "auto"

[consumer.config]
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
    support::parse(&text, "kip848.toml")
}

/// Scale-out 3 -> 4 on 12 partitions at 250 records/s (offset k arrives at (k + 1) * 4 ms):
/// only the moved partitions pause, each from its revocation to the new owner's next
/// heartbeat; the others are consumed throughout (uniform; range moves six).
#[test]
fn scale_out_moves_three_partitions_without_stopping_the_world() {
    let extra = "[[event]]\nat = \"20s\"\nkind = \"join\"\nmember = \"c3\"\n";
    let mut s = scenario("40s", extra);
    s.topics[0].partitions = 12;
    s.topics[0].rate_per_s = 250.0;
    s.group.members = 3;
    // Kafka 4.4.0's server-side range gives plain ranges (KAFKA-16944): 3 -> 4 members takes
    // c0 0-3, c1 4-7, c2 8-11 to c0 0-2, c1 3-5, c2 6-8, c3 9-11, moving 3, 6, 7, 9, 10 and
    // 11 (six partitions, where the sticky uniform moves three); still no stop-the-world.
    let r = run(&s, "consumer:range");
    let reb = &r.rebalances[1];
    assert_eq!((reb.trigger.as_str(), reb.rounds, reb.members), ("join", 1, 4));
    assert_eq!(reb.partitions_moved, 6);
    assert!(r.ownership.iter().all(|o| o.state != "stop-the-world" || o.start_s < 20.0));
    {
        let protocol = "consumer:uniform";
        let r = run(&s, protocol);
        let sum = r.summary.as_ref().unwrap();
        assert_eq!(r.rebalances.len(), 2, "{protocol}");
        // Initial: c0 holds all 12 at 2 ms and revokes 8 at 4 ms; c1 and c2 get 4 each at
        // their heartbeats of 5.002 (responses 5.004 s, the end of the first rebalance).
        close(r.rebalances[0].end_s, 5.004, protocol);
        // c3's join arrives at 20.001 s: epoch 4; the sticky target 4/4/4 -> 3/3/3/3 takes one
        // partition from each of c0, c1, c2.
        let reb = &r.rebalances[1];
        assert_eq!(reb.trigger, "join", "{protocol}");
        assert_eq!((reb.rounds, reb.members, reb.partitions_moved), (1, 4, 3), "{protocol}");
        close(reb.start_s, 20.001, protocol);
        // c0, c1 and c2 all heartbeat at 20.004 (arrive 20.005): each revokes one partition
        // at the response (20.006) and acknowledges at once (arrives 20.007). c3 joined at
        // 20.000 (response 20.002), so its next heartbeat is 25.002 (arrives 25.003): it
        // gets the 3 freed partitions at 25.004, the end of the rebalance.
        close(reb.end_s, 25.004, protocol);
        // Down: each moved partition's record of 20.004 s (offset 5000) was fetched at
        // 20.005, before the revocation of 20.006, so it waits from offset 5001 (20.008) to
        // 25.004 = 4.996 s, three times
        // = revoke + acknowledgement + the new owner's heartbeat (up to one interval).
        // Plus the start: the 8 partitions c0 revokes at 4 ms wait from their first record
        // (offset 0, arriving 4 ms, not fetched at the revocation of 4 ms) to 5.004: 8 x
        // 5.000 s.
        close(sum.downtime_partition_s, 8.0 * 5.0 + 3.0 * 4.996, protocol);
        close(sum.downtime_episode_ms_max, 5000.0, protocol);
        // The 9 partitions that stay are never paused: no stop-the-world after the start.
        let late_stw: Vec<f64> =
            r.ownership.iter().filter(|o| o.state == "stop-the-world").map(|o| o.start_s).collect();
        assert!(late_stw.is_empty(), "{protocol}: {late_stw:?}");
    }
}

/// c1 crashes at 30.505 s and never returns (4 partitions at 100 records/s, offset k at
/// (k + 1) * 10 ms): downtime = session timeout (45 s) - time since the last heartbeat +
/// the new owner's next heartbeat.
#[test]
fn crash_without_restart_waits_for_the_session_timeout() {
    let s = scenario("90s", "[[event]]\nat = \"30.505s\"\nkind = \"crash\"\nmember = \"c1\"\n");
    let r = run(&s, "consumer:uniform");
    let sum = r.summary.as_ref().unwrap();
    // c1's last heartbeat: sent 30.004, arrived 30.005 s: its session expires at 75.005 s
    // (epoch bump, rebalance start). c0's heartbeat of 75.004 arrives at 75.005, after the
    // expiry (armed at 30.005, earlier than the heartbeat's send): it gets c1's 2 partitions
    // at 75.006 s, the end.
    let reb = &r.rebalances[1];
    assert_eq!(reb.trigger, "session-expiry");
    close(reb.start_s, 75.005, "start");
    close(reb.end_s, 75.006, "end");
    assert_eq!((reb.members, reb.partitions_moved), (1, 2));
    // c1 consumed the record of 30.500 at 30.501; the next arrives at 30.510: down until
    // 75.006 = 44.496 s = 45 - (30.505 - 30.003) + (75.006 - 75.003) - (30.510 - 30.505).
    // Plus the start: c0 revokes c1's 2 partitions at 4 ms; they wait from their first record
    // (0.010) to c1's response of 5.004: 2 x 4.994 s.
    close(sum.downtime_partition_s, 2.0 * 44.496 + 2.0 * 4.994, "downtime");
    // c1 auto-committed at its polls after each 5 s deadline, the last at 30.011 s (position
    // 3000: offsets up to 2999 arrived by 30.000); it consumed up to 3049 (30.500): c0 reads
    // 3000..=3049 again on both partitions.
    assert_eq!(sum.records_reprocessed, 100);
    close(sum.stop_the_world_s, 0.0, "stop the world");
}

/// `+static` with the consumer protocol: c1 closes at 30.505 s (static leave, epoch -2: the
/// coordinator keeps its assignment) and restarts 10 s later, inside the 45 s session.
#[test]
fn static_leave_keeps_the_assignment_for_the_session_timeout() {
    let extra = "[[event]]\nat = \"30.505s\"\nkind = \"leave\"\nmember = \"c1\"\n";
    let mut s = scenario("60s", extra);
    // The restart: a join of the same name (set here; files say `rolling-restart`).
    let restart = scenario::Event {
        at: sim_core::SimTime::from_millis(40_505),
        kind: scenario::EventKind::Join { member: "c1".into() },
    };
    s.events.push(restart);
    let r = run(&s, "consumer:uniform+static");
    let sum = r.summary.as_ref().unwrap();
    // No epoch bump after the start: the leave keeps the assignment, the rejoin (arrives
    // 40.506) takes it back (response 40.507).
    assert_eq!(sum.rebalances, 1);
    // c1 closes at 30.505 (commits 3050, revokes); its partitions wait from the record of
    // 30.510 to 40.507 s: 9.997 s each; no record is processed twice.
    // Plus the start, as in the crash test: 2 x 4.994 s.
    close(sum.downtime_partition_s, 2.0 * 9.997 + 2.0 * 4.994, "downtime");
    assert_eq!(sum.records_reprocessed, 0);
    // Dynamic: the leave bumps the epoch (c0 takes both at its heartbeat of 35.004, response
    // 35.006 s) and the rejoin bumps it again.
    let dynamic = run(&s, "consumer:uniform");
    let triggers: Vec<&str> = dynamic.rebalances.iter().map(|x| x.trigger.as_str()).collect();
    assert_eq!(triggers, ["join", "leave", "join"]);
    close(dynamic.rebalances[1].end_s, 35.006, "dynamic leave end");
}

/// Same seed, same bytes.
#[test]
fn same_seed_gives_identical_reports() {
    let extra = "[[event]]\nat = \"12s\"\nkind = \"crash\"\nmember = \"c1\"\n\
                 restart_after = \"3s\"\n[[event]]\nat = \"20s\"\nkind = \"join\"\n\
                 member = \"c2\"\n";
    let mut s = scenario("60s", extra);
    s.topics[0].arrival = scenario::Arrival::Poisson;
    let a = run(&s, "consumer:range");
    let b = run(&s, "consumer:range");
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

/// c1 stalls 20 s from 20.502 s with `max.poll.interval.ms` = 5 s. Java leaves at once (epoch
/// -1) when its poll timer expires; librdkafka 2.16 stops heartbeating and leaves only at its
/// next poll (docs/kafka-facts.md section 10).
#[test]
fn max_poll_expiry_java_leaves_at_once_librdkafka_at_next_poll() {
    let extra =
        "[[event]]\nat = \"20.502s\"\nkind = \"stall\"\nmember = \"c1\"\nduration = \"20s\"\n";
    let mut s = scenario("60s", extra);
    s.consumer.config.max_poll_interval = sim_core::SimTime::from_secs(5);
    let java = run(&s, "consumer:uniform");
    // Java: the poll timer of the stall (no batch: the stall is one) expires at 25.502 s; the
    // leave arrives at 25.503 (epoch bump). c0 heartbeats at 30.004 (arrives 30.005) and gets
    // c1's 2 partitions at 30.006. They are down from c1's leave (25.502; records waiting
    // since 20.510) to 30.006: 4.504 s each.
    let reb = &java.rebalances[1];
    assert_eq!(reb.trigger, "max-poll-leave");
    close(reb.start_s, 25.503, "java leave");
    close(reb.end_s, 30.006, "java end");
    let down: Vec<(u32, f64, f64)> = java
        .ownership
        .iter()
        .filter(|o| o.state == "unassigned" && o.start_s > 20.0)
        .map(|o| (o.partition, o.start_s, o.end_s))
        .collect();
    assert_eq!(down.len(), 2, "{down:?}");
    for (_, start, end) in &down {
        close(*start, 25.502, "java down from");
        close(*end, 30.006, "java down to");
    }
    // c1's stall ends at 40.502: it rejoins (arrives 40.503) - the third rebalance.
    close(java.rebalances[2].start_s, 40.503, "java rejoin");

    // librdkafka: no leave at 26.0 (the 500 ms grid), heartbeats stop; its last one (25.004,
    // arrived 25.005) keeps the session until 70.005, after the stall. At its poll of 40.502
    // it sends its leave and its join (both arrive 40.503: one rebalance). The leave frees
    // its 2 partitions and the join's target gives them straight back (response 40.504);
    // c0's epoch catches up at its heartbeat of 45.004 (response 45.006 s, the end).
    s.consumer.client = scenario::Client::Librdkafka;
    let rd = run(&s, "consumer:uniform");
    let triggers: Vec<&str> = rd.rebalances.iter().map(|x| x.trigger.as_str()).collect();
    assert_eq!(triggers, ["join", "max-poll-leave"]);
    close(rd.rebalances[1].start_s, 40.503, "librdkafka leave");
    close(rd.rebalances[1].end_s, 45.006, "librdkafka end");
}

/// A revocation that is not acknowledged within the rebalance timeout fences the member:
/// c0 is frozen (pause) from 20.005 s for 15 s, just as its revocation is on the way, with
/// `max.poll.interval.ms` = 10 s; 6 partitions, c2 joins at 20 s.
#[test]
fn unacknowledged_revocation_is_fenced() {
    let extra = "[[event]]\nat = \"20s\"\nkind = \"join\"\nmember = \"c2\"\n\
                 [[event]]\nat = \"20.005s\"\nkind = \"pause\"\nmember = \"c0\"\n\
                 duration = \"15s\"\n";
    let mut s = scenario("60s", extra);
    s.topics[0].partitions = 6;
    s.consumer.config.max_poll_interval = sim_core::SimTime::from_secs(10);
    let r = run(&s, "consumer:uniform");
    // c2's join arrives at 20.001 (3/3 -> 2/2/2). c0's heartbeat of 20.004 arrives at 20.005:
    // it must revoke one partition; the coordinator starts its rebalance timeout (10 s) then,
    // but the response (20.006) is held by the pause. At 30.005 s c0 is fenced.
    let triggers: Vec<&str> = r.rebalances.iter().map(|x| x.trigger.as_str()).collect();
    assert_eq!(triggers[..1], ["join"]);
    let fenced = r.rebalances.iter().find(|x| x.trigger == "rebalance-timeout");
    assert!(fenced.is_none(), "merged into the open rebalance of c2's join: {triggers:?}");
    let mut seen: Vec<model::Observation> = Vec::new();
    model::simulate(&s, spec("consumer:uniform"), s.seed, &mut seen);
    let starts: Vec<String> = seen
        .iter()
        .filter_map(|o| match o {
            model::Observation::RebalanceStarted { at, trigger } => Some(format!("{trigger}@{at}")),
            _ => None,
        })
        .collect();
    assert_eq!(starts[1], "join@20.001s");
    // c0's 3 partitions (the world still sees it owning all 3: it never applied the
    // revocation) are released at the fence: 30.005 s.
    let released: Vec<f64> = r
        .ownership
        .iter()
        .filter(|o| o.state == "unassigned" && o.start_s > 25.0 && o.start_s < 35.0)
        .map(|o| o.start_s)
        .collect();
    assert_eq!(released.len(), 3, "{released:?}");
    assert!(released.iter().all(|t| (*t - 30.005).abs() < 1e-9), "{released:?}");
}

/// Records every ConsumerGroupHeartbeat request the coordinator receives: (time, sender
/// name, member epoch, owned partitions reported), from the event descriptions.
struct HeartbeatLog(Vec<(f64, String, i32, Option<usize>)>);

impl model::Probe for HeartbeatLog {
    fn wants_events(&self) -> bool {
        true
    }
    fn before_event(&mut self, now: sim_core::SimTime, event: &dyn std::fmt::Debug) {
        let text = format!("{event:?}");
        if !text.contains("ConsumerHeartbeat(CgHeartbeat") {
            return;
        }
        let field = |key: &str| {
            let from = text.find(key).expect("field") + key.len();
            text[from..].split([',', ' ', '}']).next().unwrap().trim_matches('"').to_string()
        };
        let owned = text.find("owned: Some([").map(|from| {
            let list = &text[from + 13..];
            let list = &list[..list.find(']').unwrap()];
            list.matches("Tp").count()
        });
        let epoch = field("member_epoch: ").parse().unwrap();
        self.0.push((now.as_secs_f64(), field("name: "), epoch, owned));
    }
    fn after_event(&mut self, _: &model::WorldView<'_, '_>) -> bool {
        true
    }
}

/// Issue 25 item 4: a start of 3 spreads its partitions in one heartbeat interval, because
/// an assignment that only adds partitions is acknowledged at once (AK
/// `AbstractMembershipManager.revokeAndAssign` -> ACKNOWLEDGING, `shouldHeartbeatNow`).
/// 6 partitions, uniform (2/2/2), Java and librdkafka alike.
#[test]
fn start_of_three_acknowledges_added_partitions_at_once() {
    let mut s = scenario("12s", "");
    s.topics[0].partitions = 6;
    s.group.members = 3;
    // Arrivals at the coordinator (sent 1 ms earlier), (member, epoch, owned reported):
    // - 0.001: the three joins (epoch 0, owned []), in name order: group epochs 1, 2, 3; c0's
    //   target at epoch 1 is all 6; c1 and c2 are given epochs 2 and 3 and nothing (every
    //   partition is c0's).
    // - 0.003: c0 took its 6 at the response of 0.002 and acknowledges (epoch 1, 6 owned);
    //   the response (0.004) keeps epoch 1 and takes 4 away (target 2/2/2).
    // - 0.005: c0 revoked them and acknowledges (epoch 1, 2 owned): it reaches epoch 3, the
    //   4 partitions are free.
    // - 5.003: c1 and c2 heartbeat 5 s after their join responses (0.002), at the epochs
    //   those gave (2 and 3), owned not sent (unchanged); each gets its 2 at 5.004.
    // - 5.005: c0's heartbeat (5 s after its send of 0.004, epoch 3) and c1's and c2's
    //   acknowledgements of 5.004 (epoch 3, 2 owned each), in the order sent.
    // - 10.005: every member, 5 s after its last send. Nothing else until the end (12 s).
    let expected: Vec<(f64, &str, i32, Option<usize>)> = vec![
        (0.001, "c0", 0, Some(0)),
        (0.001, "c1", 0, Some(0)),
        (0.001, "c2", 0, Some(0)),
        (0.003, "c0", 1, Some(6)),
        (0.005, "c0", 1, Some(2)),
        (5.003, "c1", 2, None),
        (5.003, "c2", 3, None),
        (5.005, "c0", 3, None),
        (5.005, "c1", 3, Some(2)),
        (5.005, "c2", 3, Some(2)),
        (10.005, "c0", 3, None),
        (10.005, "c1", 3, None),
        (10.005, "c2", 3, None),
    ];
    for client in [scenario::Client::Java, scenario::Client::Librdkafka] {
        s.consumer.client = client;
        let mut log = HeartbeatLog(Vec::new());
        let mut sink: Vec<model::Observation> = Vec::new();
        model::simulate_probed(&s, spec("consumer:uniform"), s.seed, &mut sink, &mut log);
        let got: Vec<(f64, &str, i32, Option<usize>)> =
            log.0.iter().map(|(t, n, e, o)| (*t, n.as_str(), *e, *o)).collect();
        assert_eq!(got.len(), expected.len(), "{client:?}: {got:?}");
        for (g, e) in got.iter().zip(&expected) {
            close(g.0, e.0, &format!("{client:?} {g:?}"));
            assert_eq!((g.1, g.2, g.3), (e.1, e.2, e.3), "{client:?} at {}", e.0);
        }
        // The start is one rebalance, from the first join (0.001) to c1's and c2's
        // responses of 5.004 s: 5.003 s (two heartbeat intervals, 10.003 s, before item 4).
        let r = run(&s, "consumer:uniform");
        let reb = &r.rebalances[0];
        close(reb.start_s, 0.001, "start");
        close(reb.end_s, 5.004, "end");
        close(reb.duration_ms, 5003.0, "duration");
    }
}

/// The partition c1 gives up to c2 in the stall-join test below.
const GIVEN: u32 = 3;

/// Issue 25, the KIP-848 stall-join: a member with a rebalance listener completes a
/// reconciliation only at its next poll. c1 stalls 10 s from 12 s (waiting in poll then: the
/// records of 12.000 s reach it at 12.001), c2 joins at 14 s; 4 partitions, uniform 2/2 (c0
/// 0-1, c1 2-3) -> 2/1/1: c1 gives up partition 3 (`GIVEN`). Heartbeats as in the module
/// doc: c0 and c1 at 15.004, 20.004, ... (arriving 1 ms later); c2 5 s after its join
/// response.
///
/// - c2's join arrives at 14.001 (epoch bump: the rebalance starts); its response (14.002)
///   gives it nothing (partition 3 is still c1's), so it next heartbeats at 19.002 and 24.002.
/// - c1's heartbeat of 15.004 (arrives 15.005) learns it must revoke GIVEN (response 15.006,
///   c1 keeps its epoch: UNREVOKED_PARTITIONS, rebalance timeout 300 s).
/// - Java with a listener (the default): AK runs onPartitionsRevoked in the application thread
///   (`ConsumerMembershipManager.invokeOnPartitionsRevokedCallback` ->
///   `enqueueConsumerRebalanceListenerCallback`, `AsyncKafkaConsumer.poll` ->
///   `processBackgroundEvents`) and `AbstractMembershipManager.revokeAndAssign` completes only
///   after it: c1 revokes at its poll at the stall's end, 22.000 s (committing GIVEN at 1199,
///   everything it fetched: offset 1198 arrived 11.990), acknowledges (arrives 22.001: GIVEN
///   is free); c2's heartbeat of 24.002 (arrives 24.003) gets it, response 24.004: the end.
///   Rebalance 14.001 -> 24.004 = 10003 ms; GIVEN is down from 22.000 to 24.004 (2.004 s;
///   while c1 stalls, it is busy with its partitions, not down).
/// - Without a listener (or librdkafka): c1 revokes at the response, 15.006 s (acknowledgement
///   arrives 15.007); c2's heartbeat of 19.002 (arrives 19.003) gets GIVEN at 19.004, the end:
///   5003 ms; GIVEN is down 15.006 -> 19.004 (3.998 s).
/// - Either way c1 commits GIVEN at 1199 before revoking it and c2 starts there: no record is
///   processed twice. Downtime: the start's 2 x 4.994 s (module doc; the crash test) plus
///   GIVEN's.
#[test]
fn java_listener_revocation_waits_for_the_stalled_members_poll() {
    let extra = "[[event]]\nat = \"12s\"\nkind = \"stall\"\nmember = \"c1\"\nduration = \"10s\"\n\
                 [[event]]\nat = \"14s\"\nkind = \"join\"\nmember = \"c2\"\n";
    let mut s = scenario("30s", extra);
    assert!(s.consumer.rebalance_listener, "the default registers a listener");
    let cases = [
        (scenario::Client::Java, true, 22.000, 24.004, 10003.0),
        (scenario::Client::Java, false, 15.006, 19.004, 5003.0),
        (scenario::Client::Librdkafka, true, 15.006, 19.004, 5003.0),
    ];
    for (client, listener, revoked_at, end_s, duration_ms) in cases {
        let what = format!("{client:?}, rebalance_listener = {listener}");
        s.consumer.client = client;
        s.consumer.rebalance_listener = listener;
        let r = run(&s, "consumer:uniform");
        let sum = r.summary.as_ref().unwrap();
        let reb = &r.rebalances[1];
        assert_eq!((reb.trigger.as_str(), reb.members, reb.partitions_moved), ("join", 3, 1));
        close(reb.start_s, 14.001, &what);
        close(reb.end_s, end_s, &what);
        close(reb.duration_ms, duration_ms, &what);
        let moved: Vec<(u32, f64, f64)> = r
            .ownership
            .iter()
            .filter(|o| o.state == "revoked" && o.start_s > 10.0)
            .map(|o| (o.partition, o.start_s, o.end_s))
            .collect();
        assert_eq!(moved.len(), 1, "{what}: {moved:?}");
        assert_eq!(moved[0].0, GIVEN, "{what}");
        close(moved[0].1, revoked_at, &what);
        close(moved[0].2, end_s, &what);
        assert_eq!(sum.records_reprocessed, 0, "{what}");
        close(sum.downtime_partition_s, 2.0 * 4.994 + (end_s - revoked_at), &what);
    }
}
