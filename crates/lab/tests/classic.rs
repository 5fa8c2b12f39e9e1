//! Hand-derived scenario tests of the classic protocol (issue 4, item 4), run through
//! `lab::run_protocol` (model + metrics). Every expected number is derived in the comment
//! above its assertion.
//!
//! Common timing of the base scenario (derivation used by every test):
//! - rtt 2 ms, so every request and response takes 1 ms one way;
//! - constant arrivals at 100 records/s per partition: offset k arrives at (k + 1) * 10 ms,
//!   and reaches a waiting consumer 1 ms later (the fetch response), so members poll at
//!   x.xx1 s;
//! - `group.initial.rebalance.delay.ms` = 0: joins sent at t = 0 arrive at 1 ms, the join
//!   phase ends at 1 ms, join responses arrive at 2 ms, the SyncGroups at 3 ms, the sync
//!   responses at 4 ms: the first assignment takes effect at 4 ms;
//! - heartbeats every 3 s from the sync response: sent at 3.004, 6.004, ... (3k + 0.004 s),
//!   arriving 1 ms later; session timeout 10 s;
//! - Java auto-commit every 5 s from the assignment (AK `ConsumerCoordinator.onJoinComplete`
//!   restarts the timer: 4 ms), checked in poll; a poll waiting for the next record also wakes
//!   when the commit is due (`timeToNextPoll`): commits are sent at 5.004, 10.004, 15.004,
//!   20.004, ... and carry the positions of the poll of x.xx1 s before: at 20.004 s, offsets
//!   that arrived by 20.000 s, i.e. position 2000. (Until issue 25 the timer ran from the
//!   process start and commits went out at the first poll after the deadline: 20.001 s,
//!   position 1999, so every figure below that counts from the last commit was one record
//!   higher per partition.)

mod support;

use metrics::RunReport;
use model::Observation;
use scenario::Scenario;
use sim_core::SimTime;
use support::{close, run, spec};

const BASE: &str = r#"
name = "hand"
duration = "40s"
seed = 7
protocols = ["eager:range"]

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
client_ids = "member-name"   # the derivations below order members by name (c0 < c1 < c2 < c3)
"#;

fn scenario(extra: &str) -> Scenario {
    scenario_lasting("40s", extra)
}

fn scenario_lasting(duration: &str, extra: &str) -> Scenario {
    let base = BASE.replace("duration = \"40s\"", &format!("duration = \"{duration}\""));
    let text = format!("{base}\n{extra}");
    support::parse(&text, "hand.toml")
}

/// (a) c1 crashes at 20.505 s and never returns (2 members, range: c0 owns t-0, t-1; c1 owns
/// t-2, t-3).
#[test]
fn crash_without_restart() {
    let s = scenario("[[event]]\nat = \"20.505s\"\nkind = \"crash\"\nmember = \"c1\"\n");
    let r = run(&s, "eager:range");
    let sum = r.summary.as_ref().unwrap();
    // c1's last heartbeat was sent at 18.004 s and arrived at 18.005 s: its session expires at
    // 18.005 + 10 = 28.005 s (the rebalance trigger). c0 learns at its heartbeat of 30.004 s
    // (response 30.006), commits, revokes and rejoins at once: join 30.007 (only member, the
    // join phase ends), join response 30.008, sync 30.009, sync response 30.010 s.
    let reb = &r.rebalances[1];
    assert_eq!(reb.trigger, "session-expiry");
    close(reb.start_s, 28.005, "rebalance start");
    close(reb.end_s, 30.010, "rebalance end");
    assert_eq!((reb.rounds, reb.members, reb.partitions_moved), (1, 1, 2));
    // c1 polled at 20.501 s (offset 2049, arrived 20.500) before it died; t-2 and t-3 are
    // down from their next record (20.510 s) to 30.010 s: 9.5 s each = (session timeout 10 s
    // - 2.501 s since the last heartbeat) + 2.005 s until c0 rejoins and syncs - 0.005 s until
    // a record waits. t-0/t-1 are revoked 30.006..30.010 but their next record arrives at
    // 30.010: idle, not down.
    close(sum.downtime_partition_s, 2.0 * 9.5, "downtime");
    close(sum.downtime_episode_ms_max, 9500.0, "longest episode");
    let down: Vec<f64> = r.partitions.iter().map(|p| p.downtime_s).collect();
    assert_eq!(down.iter().filter(|d| **d == 0.0).count(), 2, "{down:?}");
    // c1 processed offsets up to 2049; its last commit (20.004) stored 2000 (offsets that
    // arrived by 20.000). c0 resumes t-2 and t-3 at 2000: 50 records each again = 100
    // records/s x 0.50 s between the last committed record and the crash, on 2 partitions.
    assert_eq!(sum.records_reprocessed, 100);
    // Stop-the-world: from c0's revocation (30.006) to its new assignment (30.010) no partition
    // may be consumed while t-2/t-3 have waiting records.
    close(sum.stop_the_world_s, 0.004, "stop the world");
    // 40 s x 100/s x 4 partitions = 16000 produced; the records of 40.000 s reach the member
    // after the end (final lag 4); earliest reset loses nothing.
    assert_eq!(sum.records_produced, 16_000);
    assert_eq!((sum.records_lost, sum.final_lag), (0, 4));
    assert_eq!(sum.records_processed, 16_000 - 4 + 100);
    assert_eq!(sum.rebalances, 2);
}

/// (b) Scale-out from 3 to 4 members on 12 partitions at 250 records/s (offset k at
/// (k + 1) * 4 ms): c3 starts at 20 s; its join arrives at 20.001 s (rebalance start).
#[test]
fn scale_out_eager_moves_six_cooperative_three() {
    let extra = "[[event]]\nat = \"20s\"\nkind = \"join\"\nmember = \"c3\"\n";
    let mut s = scenario(extra);
    s.topics[0].partitions = 12;
    s.topics[0].rate_per_s = 250.0;
    s.group.members = 3;

    let eager = run(&s, "eager:range");
    let e = eager.summary.as_ref().unwrap();
    // Range 3 -> 4 members: c0 0-3 -> 0-2, c1 4-7 -> 3-5, c2 8-11 -> 6-8, c3 9-11:
    // 3, 6, 7, 9, 10, 11 change owner.
    assert_eq!(e.partitions_moved, 6);
    assert_eq!(eager.rebalances[1].partitions_moved, 6);
    // c0..c2 learn at their heartbeat of 21.004 (response 21.006), revoke and rejoin; the join
    // phase ends at 21.007, SyncGroup responses arrive at 21.010. Records of 21.008 wait
    // 21.008..21.010 on all 12 partitions: 2 ms of stop-the-world, 24 ms of downtime.
    close(eager.rebalances[1].start_s, 20.001, "eager start");
    close(eager.rebalances[1].end_s, 21.010, "eager end");
    close(e.stop_the_world_s, 0.002, "eager stop the world");
    close(e.downtime_partition_s, 0.024, "eager downtime");

    let coop = run(&s, "cooperative:cooperative-sticky");
    let c = coop.summary.as_ref().unwrap();
    // Cooperative-sticky 4/4/4 -> 3/3/3/3: one partition from each old member.
    assert_eq!(c.partitions_moved, 3);
    let reb = &coop.rebalances[1];
    assert_eq!((reb.rounds, reb.partitions_moved), (2, 3));
    // Round 1 ends at 21.010 (same timing as eager, nothing moves); the three owners revoke
    // one partition each and rejoin at once (join 21.011). c3 learns at its heartbeat of
    // 24.010 (3 s after its sync response), response 24.012, join 24.013, sync response
    // 24.016: the rebalance lasts 20.001..24.016 s.
    close(reb.start_s, 20.001, "coop start");
    close(reb.end_s, 24.016, "coop end");
    // The moved partitions wait from their next record (21.012) to 24.016: 3.004 s each.
    close(c.downtime_partition_s, 3.0 * 3.004, "coop downtime");
    // The other 9 partitions are consumed throughout: no stop-the-world.
    close(c.stop_the_world_s, 0.0, "coop stop the world");
}

/// (c) c1 crashes at 20.505 s and restarts 2 s later, inside the 10 s session timeout: the
/// restarted process is a new dynamic member and the eager rebalance waits for the old
/// member id to expire.
#[test]
fn crash_restart_holds_eager_rebalance_until_old_member_expires() {
    let extra =
        "[[event]]\nat = \"20.505s\"\nkind = \"crash\"\nmember = \"c1\"\nrestart_after = \"2s\"\n";
    let s = scenario(extra);
    let r = run(&s, "eager:range");
    let sum = r.summary.as_ref().unwrap();
    // The new c1 joins at 22.505 s (arrives 22.506: rebalance start). c0 learns at its
    // heartbeat of 24.004 (response 24.006) and rejoins (24.007). The old c1 id never rejoins;
    // its session expires at 28.005 s (last heartbeat arrived 18.005), which ends the join
    // phase: join responses 28.006, syncs 28.007, sync responses 28.008 s.
    let reb = &r.rebalances[1];
    assert_eq!(reb.trigger, "join");
    close(reb.start_s, 22.506, "start");
    close(reb.end_s, 28.008, "end");
    assert_eq!((reb.rounds, reb.members), (1, 2));
    // Range gives the new c1 its old partitions back: nothing moves.
    assert_eq!(sum.partitions_moved, 0);
    // From c0's revocation at 24.006 to 28.008 no partition may be consumed while t-2/t-3
    // (owner dead since 20.505, records waiting from 20.510) have records waiting: 4.002 s stop-the-world.
    close(sum.stop_the_world_s, 4.002, "stop the world");
    // Down: t-2, t-3 from their first record after the crash (20.510) to 28.008 (7.498 s
    // each); t-0, t-1 from their next record after the revocation (24.010) to 28.008 (3.998 s
    // each).
    close(sum.downtime_partition_s, 2.0 * 7.498 + 2.0 * 3.998, "downtime");
    // As in (a): 50 records since the last commit on each of c1's partitions.
    assert_eq!(sum.records_reprocessed, 100);
}

/// (d) c1 stalls 8 s inside a batch with `max.poll.interval.ms` = 5 s, committing
/// synchronously after every batch; processing takes 1 ms per record.
#[test]
fn stall_beyond_max_poll_interval_leaves_and_rejoins() {
    let extra =
        "[[event]]\nat = \"20.502s\"\nkind = \"stall\"\nmember = \"c1\"\nduration = \"8s\"\n";
    let mut s = scenario(extra);
    s.consumer.config.max_poll_interval = sim_core::SimTime::from_secs(5);
    s.consumer.processing = scenario::Processing::Constant(sim_core::SimTime::from_millis(1));
    s.consumer.commit = scenario::CommitPolicy::SyncPerBatch;
    let protocol = spec("eager:range");
    let mut seen: Vec<Observation> = Vec::new();
    model::simulate(&s, protocol, s.seed, &mut seen);
    let r = run(&s, "eager:range");
    let sum = r.summary.as_ref().unwrap();
    // c1's poll at 20.501 s returns offset 2049 of t-2 and t-3 (arrived 20.500); t-2's record
    // ends at 20.502, t-3's would end at 20.503 but the stall moves it to 28.503. The poll
    // timer expires at 20.501 + 5 = 25.501 s: c1 sends LeaveGroup (arrives 25.502, the
    // rebalance trigger). c0 learns at its heartbeat of 27.004 (response 27.006) and rejoins:
    // sync response at 27.010 s.
    let expired: Vec<String> = seen
        .iter()
        .filter_map(|o| match o {
            Observation::MaxPollExpired { at, member } => Some(format!("{member}@{at}")),
            _ => None,
        })
        .collect();
    assert_eq!(expired, ["c1@25.501s"]);
    let triggers: Vec<&str> = r.rebalances.iter().map(|x| x.trigger.as_str()).collect();
    assert_eq!(triggers, ["join", "max-poll-leave", "join"]);
    close(r.rebalances[1].start_s, 25.502, "leave rebalance start");
    close(r.rebalances[1].end_s, 27.010, "leave rebalance end");
    // The last stored commit of c1 is 2049 (after its batch of 20.491..20.493). c0 resumes
    // t-2/t-3 at 2049 and processes offset 2049 of both again: 2 reprocessed records.
    assert_eq!(sum.records_reprocessed, 2);
    // At 28.503 c1 finishes its batch; its commit fails (it left the group) ...
    let failed_at: Vec<String> = seen
        .iter()
        .filter_map(|o| match o {
            Observation::Commit { at, member, ok: false } => Some(format!("{member}@{at}")),
            _ => None,
        })
        .collect();
    assert_eq!(failed_at, ["c1@28.503s"]);
    // ... and it rejoins as a new member (join arrives 28.504): the third rebalance; range
    // gives t-2/t-3 back to c1, so each moved twice.
    close(r.rebalances[2].start_s, 28.504, "rejoin start");
    assert_eq!(sum.partitions_moved, 4);
}

/// (e) `auto.offset.reset`: one member, 2 partitions, default 3 s initial rebalance delay.
#[test]
fn offset_reset_latest_loses_records_before_first_fetch() {
    let mut s = scenario("");
    s.topics[0].partitions = 2;
    s.group.members = 1;
    s.duration = sim_core::SimTime::from_secs(10);
    s.broker.group_initial_rebalance_delay = sim_core::SimTime::from_secs(3);
    // The join arrives at 1 ms; the join phase ends after the 3 s delay (no other member
    // joined meanwhile, so no extension) at 3.001 s; join response 3.002, sync 3.003, sync
    // response 3.004 s. `latest` starts at the log end of 3.004 s: offsets 0..299 (arrived
    // 0.010..3.000 s) on each partition are lost.
    s.consumer.config.auto_offset_reset = scenario::OffsetReset::Latest;
    let latest = run(&s, "eager:range");
    let l = latest.summary.as_ref().unwrap();
    assert_eq!(l.records_lost, 600);
    // 10 s x 100/s x 2 = 2000 produced; the records of 10.000 s are not fetched by the end.
    assert_eq!((l.records_produced, l.final_lag), (2000, 2));
    assert_eq!(l.records_processed, 2000 - 600 - 2);
    // Both partitions are down from their first record (0.010 s) to 3.004 s.
    close(l.downtime_partition_s, 2.0 * 2.994, "downtime");

    s.consumer.config.auto_offset_reset = scenario::OffsetReset::Earliest;
    let earliest = run(&s, "eager:range");
    let e = earliest.summary.as_ref().unwrap();
    assert_eq!((e.records_lost, e.final_lag, e.records_processed), (0, 2, 1998));
}

/// Same seed, same bytes: two runs of a Poisson scenario with faults give identical CSV.
#[test]
fn same_seed_gives_byte_identical_csv() {
    let extra =
        "[[event]]\nat = \"12s\"\nkind = \"crash\"\nmember = \"c1\"\nrestart_after = \"3s\"\n\
                 [[event]]\nat = \"20s\"\nkind = \"join\"\nmember = \"c2\"\n";
    let mut s = scenario(extra);
    s.topics[0].arrival = scenario::Arrival::Poisson;
    s.consumer.processing = scenario::Processing::Lognormal {
        mean: sim_core::SimTime::from_millis(1),
        p99: sim_core::SimTime::from_millis(5),
    };
    let bytes = |s: &Scenario| {
        let dir = tempfile::tempdir().unwrap();
        let reports: Vec<RunReport> =
            ["eager:range", "cooperative"].iter().map(|p| run(s, p)).collect();
        report::csv_out::write_run_outputs(dir.path(), &reports).unwrap();
        ["summary.csv", "partitions.csv", "rebalances.csv", "ownership.csv", "timeline.csv"]
            .iter()
            .map(|f| std::fs::read(dir.path().join(f)).unwrap())
            .collect::<Vec<_>>()
    };
    let first = bytes(&s);
    assert_eq!(first, bytes(&s));
    // A different seed changes the Poisson arrivals, hence the bytes.
    s.seed = 8;
    assert_ne!(first[0], bytes(&s)[0]);
}

/// Every protocol is modeled now (issue 6 added static membership and KIP-848): none is
/// refused as unsupported.
#[test]
fn every_protocol_is_modeled() {
    let s = scenario("");
    for p in ["consumer:uniform", "consumer:range", "eager:range+static", "cooperative+static"] {
        assert!(lab::run_protocol(&s, spec(p), 1).is_ok(), "{p}");
    }
}

/// `client = "librdkafka"` auto-commits on a background timer (docs/kafka-facts.md section
/// 10): a member stalled between polls keeps committing what it already consumed, where a
/// Java member commits nothing until its next poll.
#[test]
fn librdkafka_commits_during_a_stall_java_does_not() {
    let extra =
        "[[event]]\nat = \"20.505s\"\nkind = \"stall\"\nmember = \"c1\"\nduration = \"8s\"\n\
                 [[event]]\nat = \"27s\"\nkind = \"crash\"\nmember = \"c1\"\n";
    let mut s = scenario(extra);
    // Java: c1's last commit is the one of 20.004 s (position 2000); it consumed through
    // offset 2049 (poll of 20.501 s) before stalling and then crashing at 27 s. Its
    // heartbeats go on during the stall (last one sent 24.004 s), so its session expires at
    // 34.005 s; c0 takes t-2/t-3 over from 2000: 50 records each again.
    let java = run(&s, "eager:range");
    assert_eq!(java.summary.as_ref().unwrap().records_reprocessed, 100);
    close(java.rebalances[1].start_s, 34.005, "java session expiry");
    // librdkafka: the background commit of 25.0 s (every 5 s from the start) stores 2050,
    // everything already returned to the application: nothing is processed twice.
    s.consumer.client = scenario::Client::Librdkafka;
    let rd = run(&s, "eager:range");
    assert_eq!(rd.summary.as_ref().unwrap().records_reprocessed, 0);
    close(rd.rebalances[1].start_s, 34.005, "librdkafka session expiry");
}

/// Every event kind of DESIGN section 7 in one run, with the invariants checked after every
/// event (tests build with them on) and conservation checked at the end.
#[test]
fn every_event_kind_runs() {
    let events = [
        ("5s", "kind = \"add-partitions\"\ntopic = \"t\"\ncount = 2"),
        ("12s", "kind = \"scale\"\nmembers = 3"),
        ("20s", "kind = \"leave\"\nmember = \"c2\""),
        ("25s", "kind = \"disconnect\"\nmember = \"c1\"\nduration = \"15s\""),
        ("45s", "kind = \"pause\"\nmember = \"c0\"\nduration = \"2s\""),
        ("47s", "kind = \"stall\"\nmember = \"c0\"\nduration = \"1s\""),
        ("50s", "kind = \"rolling-restart\"\ninterval = \"20s\"\ndowntime = \"1s\""),
    ];
    let extra: String =
        events.iter().map(|(at, body)| format!("[[event]]\nat = \"{at}\"\n{body}\n")).collect();
    let mut s = scenario_lasting("100s", &extra);
    // Metadata refreshes (protocols/classic/metadata.rs): the producer's every 4 s, the
    // members' 2 s after each response.
    s.producer.metadata_refresh = SimTime::from_secs(4);
    s.consumer.config.metadata_max_age = SimTime::from_secs(2);
    for protocol in ["eager:range", "eager:sticky", "cooperative", "eager:roundrobin"] {
        let r = run(&s, protocol);
        let sum = r.summary.as_ref().unwrap();
        // 4 partitions for 100 s and 2 more that get records from the producer's first
        // refresh after 5 s (8 s) at 100/s: 4 * 10000 + 2 * 9200.
        assert_eq!(sum.partitions, 6, "{protocol}");
        assert_eq!(sum.records_produced, 40_000 + 18_400, "{protocol}");
        let triggers: Vec<&str> = r.rebalances.iter().map(|x| x.trigger.as_str()).collect();
        // The initial join, then the new partitions (the leader c0's refresh responses come at
        // 0.002 + k x 2.002 s: 6.008 s, and it rejoins at once), c2 joining (12 s) and leaving
        // (20 s); c1 is cut off from 25 s: its last heartbeat went out less than one interval
        // (3 s) before, so its session (10 s) expires 7 to 10 s (+ 1 ms transit) after 25 s.
        assert_eq!(triggers[..5], ["join", "partitions-added", "join", "leave", "session-expiry"]);
        close(r.rebalances[1].start_s, 6.009, protocol);
        let expiry = r.rebalances[4].start_s;
        assert!((32.0..=35.001).contains(&expiry), "{protocol}: expiry at {expiry}");
        // The rolling restart closes c0 at 50 s and c1 at 70 s, each back 1 s later.
        assert!(triggers.iter().filter(|t| **t == "leave").count() >= 3, "{triggers:?}");
    }
}

/// Added partitions reach a classic group through its members' metadata refreshes, and records
/// reach them through the producers' (issue 25 item 5; `protocols/classic/metadata.rs` cites the
/// sources). 2 members, t-0..t-3 at 100/s, 2 partitions added at 5 s; the producer refreshes
/// every 6 s, the members 10 s after each response (Java `metadata.max.age.ms`) or every 10 s
/// from their start (librdkafka `topic.metadata.refresh.interval.ms`).
#[test]
fn added_partitions_wait_for_the_metadata_refreshes() {
    let extra = "[[event]]\nat = \"5s\"\nkind = \"add-partitions\"\ntopic = \"t\"\ncount = 2\n";
    let mut s = scenario(extra);
    s.producer.metadata_refresh = SimTime::from_secs(6);
    s.consumer.config.metadata_max_age = SimTime::from_secs(10);
    s.consumer.config.topic_metadata_refresh_interval = SimTime::from_secs(10);
    let downtime = |r: &RunReport, p: u32| -> f64 {
        r.partitions.iter().find(|row| row.partition == p).map(|row| row.downtime_s).unwrap()
    };
    // The producer's first refresh after 5 s is at 6 s: offset k of t-4 and t-5 arrives at
    // 6 + (k + 1) x 10 ms, through 40.00 s: 3,400 records each (and 4,000 on t-0..t-3).
    let java = run(&s, "eager:range");
    let sum = java.summary.as_ref().unwrap();
    assert_eq!(sum.records_produced, 4 * 4_000 + 2 * 3_400);
    // Java: the leader c0 (the first to join) got metadata at 0.002 s (one round trip after
    // its start) and refreshes 10 s after each response: 10.004 s. Its assignment was made
    // with 4 partitions: it rejoins at once (idle in poll), its JoinGroup arrives 10.005 s.
    let r = &java.rebalances[1];
    assert_eq!(r.trigger, "partitions-added");
    close(r.start_s, 10.005, "java trigger");
    // c1 hears of it at its heartbeat of 12.004 s (response 12.006), rejoins at once: its
    // JoinGroup (12.007) completes the join phase; responses 12.008, the leader assigns with
    // the 6 partitions it knows, SyncGroups 12.009, responses 12.010 s: the assignment takes
    // effect at once (both wait in poll). Range: c0 t-0..t-2, c1 t-3..t-5.
    close(r.end_s, 12.010, "java end");
    // t-4 waits from its first record (6.010 s) until c1 may consume it (12.010 s).
    close(downtime(&java, 4), 6.0, "java t-4 down");
    assert_eq!(java.rebalances.len(), 2, "one rebalance for the new partitions");

    // librdkafka: every member's refresh timer fires at 0.002 + 10 k s; at 10.002 s both see 6
    // partitions where their last check saw 4 and rejoin at once (eager: revoke first), from
    // their own thread. Both JoinGroups arrive 10.003 s: the join phase ends, responses
    // 10.004, the leader (assigning with current metadata) syncs at 10.005, responses at
    // 10.006 s, served at once by the waiting polls.
    s.consumer.client = scenario::Client::Librdkafka;
    let rd = run(&s, "eager:range");
    let r = &rd.rebalances[1];
    assert_eq!(r.trigger, "partitions-added");
    close(r.start_s, 10.003, "librdkafka trigger");
    close(r.end_s, 10.006, "librdkafka end");
    close(downtime(&rd, 4), 10.006 - 6.010, "librdkafka t-4 down");
    assert_eq!(rd.rebalances.len(), 2, "one rebalance for the new partitions");

    // KIP-848: the broker's group coordinator sees the new partitions at once and hands them
    // out at the members' next heartbeats; their records still wait for the producer (6 s).
    s.consumer.client = scenario::Client::Java;
    let kip = run(&s, "consumer:uniform");
    assert_eq!(kip.summary.as_ref().unwrap().records_produced, 4 * 4_000 + 2 * 3_400);
    assert!(downtime(&kip, 4) < 0.01, "KIP-848 t-4 down {}", downtime(&kip, 4));
}

/// librdkafka rejoins a cooperative rebalance without a poll (docs/kafka-facts.md section 10):
/// c1 stalls (no polls, heartbeats go on) from 12.005 s to 22.005 s; c2 joins at 14 s.
#[test]
fn librdkafka_cooperative_round_one_completes_during_a_stall() {
    let extra =
        "[[event]]\nat = \"12.005s\"\nkind = \"stall\"\nmember = \"c1\"\nduration = \"10s\"\n\
                 [[event]]\nat = \"14s\"\nkind = \"join\"\nmember = \"c2\"\n";
    let mut s = scenario(extra);
    // Which of the tied members gives a partition to c2 follows the member ids (the sticky
    // assignor iterates them in Java HashMap order), which the coordinator draws from the seed
    // (`[group] client_ids`, issue 25 item 6c): with seed 1 it is one of c1's, with BASE's seed
    // 7 one of c0's (found by running seeds 1..40: 23 give c1's, 16 c0's).
    s.seed = 1;
    s.consumer.client = scenario::Client::Librdkafka;
    let rd = run(&s, "cooperative");
    s.consumer.client = scenario::Client::Java;
    let java = run(&s, "cooperative");
    for (name, r) in [("librdkafka", &rd), ("java", &java)] {
        let reb = &r.rebalances[1];
        // c2's join arrives at 14.001 s. Whatever the client, the logical rebalance ends only
        // after c1's first poll after the stall (22.005 s): its assignment is served in poll.
        close(reb.start_s, 14.001, name);
        assert!(reb.end_s > 22.005, "{name}: ended at {}", reb.end_s);
        assert_eq!(reb.rounds, 2, "{name}");
        // c0 consumes throughout: never a stop-the-world.
        close(r.summary.as_ref().unwrap().stop_the_world_s, 0.0, name);
    }
    // Cooperative-sticky moves one of c1's partitions to c2.
    assert_eq!((rd.rebalances[1].partitions_moved, java.rebalances[1].partitions_moved), (1, 1));
    // librdkafka: c0 and c1 learn at their heartbeats of 15.004 s and rejoin at once (c1 in
    // the background); round 1 ends at 15.010 s, but c1 serves its callback only at its poll
    // of 22.005 s: it revokes then (the partition's records have waited since the stall, so it
    // is down from 22.005) and rejoins (22.006). c0 and c2 synced at 15.010, so they learn at
    // their heartbeat of 24.010 (response 24.012): join 24.013, sync responses 24.016 s.
    let down_from = |r: &RunReport| -> Vec<f64> {
        r.ownership.iter().filter(|o| o.state == "revoked").map(|o| o.start_s).collect()
    };
    assert_eq!(down_from(&rd), [22.005]);
    close(rd.rebalances[1].end_s, 24.016, "librdkafka end");
    // Java: c1's JoinGroup leaves with its poll of 22.005 s, so round 1 ends only then: join
    // 22.006, sync responses 22.009 s, when c1 revokes (its next record waits from 22.010) and
    // rejoins (22.010). c0 and c2 synced at 22.009: heartbeat 25.009, response 25.011, join
    // 25.012, sync responses 25.015 s.
    assert_eq!(down_from(&java), [22.010]);
    close(java.rebalances[1].end_s, 25.015, "java end");
}

/// Issue 25, item 1: what a Java cooperative member commits for a partition that moves. c1
/// stalls 5 s from 20.0075 s (busy between polls; heartbeats go on); c2 joins at 21 s.
/// Java (AK `ConsumerCoordinator.onJoinPrepare` commits before every JoinGroup;
/// `onJoinComplete` revokes without a commit) processes c1's moved records twice; librdkafka
/// (commits what it unassigns) does not.
#[test]
fn java_cooperative_reprocesses_what_a_moved_partition_consumed_in_round_one() {
    let extra =
        "[[event]]\nat = \"20.0075s\"\nkind = \"stall\"\nmember = \"c1\"\nduration = \"5s\"\n\
                 [[event]]\nat = \"21s\"\nkind = \"join\"\nmember = \"c2\"\n";
    let mut s = scenario(extra);
    // Which of the tied members gives a partition to c2 follows the member ids (the sticky
    // assignor iterates them in Java HashMap order), which the coordinator draws from the seed
    // (`[group] client_ids`, issue 25 item 6c): with seed 1 it is one of c1's, with BASE's seed
    // 7 one of c0's (found by running seeds 1..40: 23 give c1's, 16 c0's).
    s.seed = 1;
    let java = run(&s, "cooperative");
    // c2's join arrives at 21.001 s. c0 learns at its heartbeat of 21.004 (response 21.006)
    // and rejoins; c1 rejoins at its first poll after the stall, 25.0075 s: it commits its
    // position first (2000: its last poll, 20.001 s, took offsets through 1999), sends its
    // JoinGroup, then fetches its backlog (offsets 2000..=2499 of t-2 and t-3, arrived by
    // 25.000 s; zero processing: done at once). The join phase ends at 25.0085, syncs go out
    // at 25.0095, the sync responses arrive at 25.0115 s: round 1 takes t-3 from c1, which
    // by then also took offset 2500 (arrived 25.010, polled 25.011): position 2501. It
    // revokes t-3 without a commit and rejoins at once (its round-2 commit covers t-2 only).
    // c2 starts t-3 at the committed 2000: offsets 2000..=2500 again, 501 records.
    assert_eq!(java.summary.as_ref().unwrap().records_reprocessed, 501);
    let reb = &java.rebalances[1];
    assert_eq!((reb.rounds, reb.partitions_moved), (2, 1));
    // Round 2: c0 and c2 synced at 25.0115 learn at their heartbeat of 28.0115 (response
    // 28.0135), join 28.0135, join responses 28.0155, sync responses 28.0175 s.
    close(reb.start_s, 21.001, "java start");
    close(reb.end_s, 28.0175, "java end");
    // librdkafka rejoins in the background (round 1 ends while c1 stalls) and revokes t-3 at
    // c1's poll of 25.0075 s, committing its position (2000, nothing consumed since): c2
    // starts at 2000, which c1 never processed. Nothing is processed twice.
    s.consumer.client = scenario::Client::Librdkafka;
    let rd = run(&s, "cooperative");
    assert_eq!(rd.summary.as_ref().unwrap().records_reprocessed, 0);
    assert_eq!(rd.rebalances[1].partitions_moved, 1);
}

/// The commits a member sent and had stored, as `member@time` (a stored commit is observed
/// when its response reaches the member).
fn stored_commits(s: &Scenario, protocol: &str, member: &str, until_s: f64) -> Vec<String> {
    let mut seen: Vec<Observation> = Vec::new();
    model::simulate(s, spec(protocol), s.seed, &mut seen);
    seen.iter()
        .filter_map(|o| match o {
            Observation::Commit { at, member: m, ok: true }
                if &**m == member && at.as_secs_f64() <= until_s =>
            {
                Some(format!("{m}@{at}"))
            }
            _ => None,
        })
        .collect()
}

/// Issue 25, item 2: the Java auto-commit timer restarts when an assignment takes effect
/// (AK `ConsumerCoordinator.onJoinComplete`), and a waiting poll wakes when a commit is due
/// (`timeToNextPoll`). With the default 3 s initial rebalance delay the group forms at 6.004
/// s: the join phase opens at 0.001 s, c1's join during the first 3 s extends it once
/// (`InitialDelayedJoin`), to 6.001 s; join responses 6.002, syncs 6.003, sync responses
/// 6.004 s. c1 crashes at 24.995 s, just before a multiple of the interval (the issue's
/// example: the timer from the process start loses 5 s of work there, Java 4 s).
#[test]
fn java_auto_commit_timer_restarts_at_the_assignment() {
    let extra = "[[event]]\nat = \"24.995s\"\nkind = \"crash\"\nmember = \"c1\"\n";
    let mut s = scenario(extra);
    s.broker.group_initial_rebalance_delay = sim_core::SimTime::from_secs(3);
    // Commits due at 6.004 + 5k s: the poll waiting for the next record (x.xx1 s) wakes at the
    // deadline and sends them at 11.004, 16.004, 21.004 s; each is stored when its response
    // arrives 2 ms later. (With the timer from the process start: sent at the first poll after
    // 10, 15, 20 s, i.e. 10.001, 15.001, 20.001 s.)
    let commits = stored_commits(&s, "eager:range", "c0", 24.0);
    assert_eq!(commits, ["c0@11.006s", "c0@16.006s", "c0@21.006s"]);
    let r = run(&s, "eager:range");
    // c1's last commit (21.004 s) stored 2100 on t-2 and t-3 (its poll of 21.001 took offsets
    // through 2099, arrived 21.000); its last poll before the crash, 24.991 s, took offsets
    // through 2498: position 2499. c0 resumes both at 2100: 399 records each again, 3.99 s of
    // work (from the process start: its commit of 20.001 s, 1999, would give 500 each).
    assert_eq!(r.summary.as_ref().unwrap().records_reprocessed, 2 * 399);
    // librdkafka's background timer runs from the start (5, 10, 15, 20 s): its commit of
    // 20 s stores 1999 (everything returned by its poll of 19.991 s), so 500 each again.
    s.consumer.client = scenario::Client::Librdkafka;
    let rd = run(&s, "eager:range");
    assert_eq!(rd.summary.as_ref().unwrap().records_reprocessed, 2 * 500);
}

/// Issue 25, item 3: a Java member handles its JoinGroup response inside `poll()` (AK
/// `AbstractCoordinator.joinGroupIfNeeded` from `ensureActiveGroup`; `HeartbeatThread.run`
/// does no I/O while joining), so a leader busy when the response comes runs the assignor and
/// sends its SyncGroup only at its next poll; librdkafka does it at once. Eager, c2 joins at
/// 20 s; the leader c0 stalls 2 s from 21.0075 s, after its JoinGroup and before the response.
#[test]
fn java_leader_busy_at_the_join_response_holds_the_round() {
    let extra =
        "[[event]]\nat = \"20s\"\nkind = \"join\"\nmember = \"c2\"\n\
                 [[event]]\nat = \"21.0075s\"\nkind = \"stall\"\nmember = \"c0\"\nduration = \"2s\"\n";
    let mut s = scenario(extra);
    // c2's join arrives at 20.001 s. c0 and c1 learn at their heartbeat of 21.004 (response
    // 21.006), commit, revoke everything and rejoin (21.006); the join phase ends at 21.007
    // and the join responses arrive at 21.008 s. c0 stalls from 21.0075 to 23.0075 s.
    let java = run(&s, "eager:range");
    let reb = &java.rebalances[1];
    close(reb.start_s, 20.001, "java start");
    // Java: c0 handles its response at its poll of 23.0075 s: assignment and SyncGroup then,
    // arriving 23.0085; every sync response arrives at 23.0095 s, when all three apply them
    // (waiting in poll): the round grew by the leader's remaining 1.9995 s of stall.
    close(reb.end_s, 23.0095, "java end");
    // No partition may be consumed from the revocations (21.006) to 23.0095 s; records wait
    // from 21.010 s on: 1.9995 s of stop-the-world.
    close(java.summary.as_ref().unwrap().stop_the_world_s, 1.9995, "java stop the world");
    // librdkafka: c0's SyncGroup goes out with the response at 21.008; the sync responses
    // arrive at 21.010 s. c1 and c2 (waiting in poll) apply theirs then; c0 at its poll of
    // 23.0075 s, which ends the rebalance. The records of 21.010 s are consumable at once:
    // no stop-the-world.
    s.consumer.client = scenario::Client::Librdkafka;
    let rd = run(&s, "eager:range");
    close(rd.rebalances[1].end_s, 23.0075, "librdkafka end");
    close(rd.summary.as_ref().unwrap().stop_the_world_s, 0.0, "librdkafka stop the world");
}
