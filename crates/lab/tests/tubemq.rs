//! Hand-derived scenario tests of TubeMQ server-side balance (`tubemq-server`) and client-side
//! balance (`tubemq-client`), issue 6 part 2, run through `lab::run_protocol`. Every expected
//! number is derived in the comment above its assertion.
//!
//! Common timing (derivation used by every test):
//! - rtt 2 ms: every request and response takes 1 ms one way;
//! - constant arrivals at 100 records/s per partition: offset k arrives at (k + 1) * 10 ms and
//!   reaches a waiting consumer 1 ms later, so members poll at x.xx1 s; processing takes 0 ms;
//! - TubeMQ confirms every batch (synchronous commit per batch): a batch polled at x.xx1 s is
//!   confirmed at x.xx2 s (stored at the broker), the response arrives at x.xx3 s;
//! - server side: `[tubemq]` first balance after 5 s, then every 10 s (ticks at 5, 15, 25,
//!   35, 45 s); heartbeats every 2 s from the member's start (arriving 1 ms later); heartbeat
//!   timeout 6 s. The master pushes one event per heartbeat response (arriving 2 ms after the
//!   heartbeat was sent) and removes it at the next heartbeat if processed; no connect event
//!   while a disconnect event is pending. First assignment for members started at 0: the
//!   tick of 5 s queues connect events, pushed with the heartbeats of 6 s: consuming from
//!   6.002 s; every partition waited from its first record (10 ms): 5.992 s each;
//! - client side: the partition key of `t-p` is `"1:t:p"`; Java `String.hashCode` of
//!   `"1:t:0"` = 49*31^4 + 58*31^3 + 116*31^2 + 58*31 + 48 = 47093729, and the keys of
//!   t-1, t-2, t-3 hash one higher each (only the last character changes, by one). Hence with
//!   sourceCount 2: node 0 owns t-1, t-3 and node 1 owns t-0, t-2; with sourceCount 3
//!   (47093729 = 3 * 15697909 + 2): node 0 owns t-1, node 1 t-2, node 2 t-0 and t-3.
//!   A node queries at its start, its registration reaches the broker 1 ms later and the
//!   answer (with the stored offset) 1 ms after that: it consumes from start + 2 ms.

mod support;

use metrics::RunReport;
use scenario::Scenario;
use support::{close, run};

const BASE: &str = r#"
name = "tubemq-hand"
duration = "60s"
seed = 7
protocols = ["tubemq-server"]

[[topic]]
name = "t"
partitions = 4
rate = 100.0
arrival = "constant"

[consumer]
processing = "0ms"
commit = "auto"

[consumer.config]
"auto.offset.reset" = "earliest"

[network]
rtt = "2ms"

[group]
members = 2

[tubemq]
first_balance_delay = "5s"
balance_period = "10s"
heartbeat_interval = "2s"
heartbeat_timeout = "6s"
confirm_wait = "3s"
"#;

fn scenario(members: u32, duration: &str, extra: &str) -> Scenario {
    let base = BASE
        .replace("duration = \"60s\"", &format!("duration = \"{duration}\""))
        .replace("members = 2", &format!("members = {members}"));
    let text = format!("{base}\n{extra}");
    support::parse(&text, "tubemq-hand.toml")
}

/// Owners of partition `p` over the run, in order, with the state and start of each interval
/// (idle intervals left out).
fn owners(r: &RunReport, p: u32) -> Vec<(String, String, f64)> {
    r.ownership
        .iter()
        .filter(|o| o.partition == p && o.state != "idle")
        .map(|o| (o.owner.to_string(), o.state.to_string(), o.start_s))
        .collect()
}

/// The client-side rule as derived in the module doc.
#[test]
fn client_rule_matches_the_hand_computed_hashes() {
    let node =
        |p: u32, count: u32| (0..count).find(|n| assignors::tubemq_client_owns("t", p, count, *n));
    assert_eq!(
        (0..4).map(|p| node(p, 2)).collect::<Vec<_>>(),
        [Some(1), Some(0), Some(1), Some(0)]
    );
    assert_eq!(
        (0..4).map(|p| node(p, 3)).collect::<Vec<_>>(),
        [Some(2), Some(0), Some(1), Some(2)]
    );
}

/// Server side: the first assignment waits for the first balance tick; a joining member waits
/// for the next tick.
#[test]
fn server_join_waits_for_the_next_balance_tick() {
    let s = scenario(2, "40s", "[[event]]\nat = \"21s\"\nkind = \"join\"\nmember = \"c2\"\n");
    let r = run(&s, "tubemq-server");
    let sum = r.summary.as_ref().unwrap();
    // Tick 1 at 5 s: nobody owns anything: the first allocation splits in ranges over the
    // members sorted by id (c0-1, c1-1): c0 gets t-0, t-1; c1 gets t-2, t-3. The connect
    // events ride on the heartbeats of 6 s: the last one is pushed at 6.001 s (end of the
    // rebalance when it arrives, 6.002 s).
    let first = &r.rebalances[0];
    assert_eq!(first.trigger, "join");
    close(first.start_s, 5.0, "first balance");
    close(first.end_s, 6.002, "first assignment");
    // c2 registers at 21.001 s (heartbeats at 23, 25, 27, 29 s); the tick of 15 s changed
    // nothing; the tick of 25 s balances 4 partitions over 3 members: min 1, max 2, one member
    // may keep 2: c0-1 keeps t-0 and t-1, c1-1 sheds its first partition t-2, which c2-1
    // takes. c1's heartbeat of 26 s gets the disconnect event (26.002 s); its batch of
    // 26.001 s is already confirmed: t-2 is released at once at 2600. c2's heartbeat of 27 s
    // gets nothing (a disconnect is pending); c1's heartbeat of 28 s reports it done; c2's
    // heartbeat of 29 s gets the connect event: c2 consumes t-2 from 29.002 s.
    let join = &r.rebalances[1];
    assert_eq!(join.trigger, "join");
    close(join.start_s, 25.0, "join balance");
    close(join.end_s, 29.002, "join settled");
    assert_eq!((join.members, join.partitions_moved), (3, 1));
    assert_eq!(sum.rebalances, 2);
    let t2 = owners(&r, 2);
    let states: Vec<(&str, &str)> = t2.iter().map(|o| (o.0.as_str(), o.1.as_str())).collect();
    assert_eq!(
        states,
        [("", "unassigned"), ("c1", "consuming"), ("", "revoked"), ("c2", "consuming")]
    );
    close(t2[2].2, 26.010, "t-2 down from its next record");
    close(t2[3].2, 29.002, "c2 consumes t-2");
    // Down: the initial 4 x 5.992 s, and t-2 from its next record (2600, 26.010 s) to
    // 29.002 s: 2.992 s.
    close(sum.downtime_partition_s, 4.0 * 5.992 + 2.992, "downtime");
    // Everything was confirmed: nothing is read twice. 40 s x 100/s x 4 = 16000 produced;
    // the records of 40.000 s reach the members after the end: final lag 4.
    assert_eq!((sum.records_reprocessed, sum.records_lost), (0, 0));
    assert_eq!((sum.records_produced, sum.final_lag), (16_000, 4));
}

/// Server side: a crashed member's partitions wait for the heartbeat timeout, then for the
/// next balance tick.
#[test]
fn server_crash_waits_for_heartbeat_timeout_then_the_next_tick() {
    let s = scenario(2, "60s", "[[event]]\nat = \"30.505s\"\nkind = \"crash\"\nmember = \"c1\"\n");
    let r = run(&s, "tubemq-server");
    let sum = r.summary.as_ref().unwrap();
    // c1's last heartbeat was sent at 30 s and arrived at 30.001 s: the master removes it at
    // 36.001 s (its partitions t-2, t-3 become unowned); the tick of 35 s came before that.
    // The tick of 45 s places the unowned partitions on the only member, c0; the connect
    // event rides on c0's heartbeat of 46 s and arrives at 46.002 s.
    let crash = &r.rebalances[1];
    assert_eq!(crash.trigger, "heartbeat-timeout");
    close(crash.start_s, 45.0, "crash balance");
    close(crash.end_s, 46.002, "crash settled");
    assert_eq!((crash.members, crash.partitions_moved), (1, 2));
    let t3 = owners(&r, 3);
    let states: Vec<(&str, &str)> = t3.iter().map(|o| (o.0.as_str(), o.1.as_str())).collect();
    assert_eq!(
        states,
        [
            ("", "unassigned"),
            ("c1", "consuming"),
            ("c1", "owner-dead"),
            ("", "unassigned"),
            ("c0", "consuming")
        ]
    );
    close(t3[3].2, 36.001, "removed at the heartbeat timeout");
    // Down: the initial 4 x 5.992 s, then t-2 and t-3 from their next record after the crash
    // (30.510 s) to 46.002 s: 2 x 15.492 s = heartbeat timeout - 0.504 s since the last
    // heartbeat + 8.999 s to the next tick + 1.002 s to c0's next heartbeat response - 5 ms.
    close(sum.downtime_partition_s, 4.0 * 5.992 + 2.0 * 15.492, "downtime");
    close(sum.downtime_episode_ms_max, 15_492.0, "longest episode");
    // c1's last batch (offset 3049, polled 30.501 s) was confirmed at 30.502 s: c0 resumes
    // at 3050 and reads nothing twice. 60 s x 400/s = 24000 produced, final lag 4.
    assert_eq!((sum.records_reprocessed, sum.records_lost), (0, 0));
    assert_eq!((sum.records_produced, sum.final_lag), (24_000, 4));
}

/// Server side: a partition taken away while its batch is unconfirmed waits `confirm_wait`,
/// then is rolled back: the next owner reads exactly that batch again.
#[test]
fn server_rollback_rereads_exactly_the_unconfirmed_batch() {
    let extra = "[consumer]\nprocessing = \"1ms\"\ncommit = \"auto\"\n";
    let events = "[[event]]\nat = \"21s\"\nkind = \"join\"\nmember = \"c1\"\n\
                  [[event]]\nat = \"24.9915s\"\nkind = \"stall\"\nmember = \"c0\"\nduration = \"10s\"\n";
    let text =
        BASE.replace("partitions = 4", "partitions = 2").replace("members = 2", "members = 1");
    let text = text.replace("[consumer]\nprocessing = \"0ms\"\ncommit = \"auto\"\n", extra);
    let text = text.replace("duration = \"60s\"", "duration = \"40s\"");
    let s = support::parse(&format!("{text}\n{events}"), "rollback.toml");
    let r = run(&s, "tubemq-server");
    let sum = r.summary.as_ref().unwrap();
    // c0 alone owns t-0 and t-1 from 6.002 s (both waited 5.992 s). Long caught up by 24 s,
    // it polls at x.xx1 s one record of each partition (1 ms each): the batch polled at
    // 24.991 s (offsets 2498) ends at 24.993 s. The stall at 24.9915 s pushes its unfinished
    // records 10 s later: the batch ends at 34.993 s (heartbeats go on during a stall).
    // c1 registers at 21.001 s (heartbeats at 23, 25, 27, ... s); the tick of 25 s moves t-0
    // (c0 sheds its first partition). c0's heartbeat of 26 s gets the disconnect event
    // (26.002 s): t-0 is in the unconfirmed batch, so c0 waits confirm_wait = 3 s and at
    // 29.002 s hands t-0 back rolled back to 2498. Its heartbeat of 28 s reports nothing done
    // yet, that of 30 s does; c1's heartbeat of 31 s gets the connect event: c1 reads t-0
    // from 2498 from 31.002 s.
    let join = &r.rebalances[1];
    close(join.start_s, 25.0, "balance");
    close(join.end_s, 31.002, "settled after the confirm wait");
    let t0 = owners(&r, 0);
    let states: Vec<(&str, &str)> = t0.iter().map(|o| (o.0.as_str(), o.1.as_str())).collect();
    assert_eq!(
        states,
        [("", "unassigned"), ("c0", "consuming"), ("", "revoked"), ("c1", "consuming")]
    );
    close(t0[2].2, 29.002, "rolled back");
    // The batch had one record of t-0 (offset 2498): c0 finishes it at 34.993 s and c1 read
    // it at 31.002 s: exactly one record twice.
    assert_eq!(sum.records_reprocessed, 1);
    assert_eq!(r.partitions[0].reprocessed, 1);
    // Down: 2 x 5.992 s at the start; t-0 revoked 29.002..31.002 s with records waiting.
    // t-1 during the stall is c0's own busy batch: not down.
    close(sum.downtime_partition_s, 2.0 * 5.992 + 2.0, "downtime");
    // 40 s x 200/s = 8000 produced; the records of 40.000 s arrive too late: final lag 2.
    assert_eq!((sum.records_produced, sum.final_lag, sum.records_lost), (8_000, 2, 0));
}

/// Client side: two nodes with the same node id both consume the same partitions.
#[test]
fn client_duplicate_node_id_processes_records_twice() {
    // c0 has node id 0 by default, c2 is given 0 too; c1 is node 1; sourceCount 2.
    let s = scenario(3, "40s", "[tubemq.node_ids]\nc2 = 0\n");
    let mut s = s;
    s.tubemq.source_count = 2;
    let r = run(&s, "tubemq-client");
    let sum = r.summary.as_ref().unwrap();
    // Node 0 owns t-1 and t-3 (module doc): c0 and c2 each read all of them from 2 ms on.
    // Each record of t-1 and t-3 up to offset 3998 (arrived 39.990 s) is processed by both;
    // offset 3999 arrives at 40.000 s, after the last fetch: reprocessed = 2 x 3999.
    assert_eq!(sum.records_reprocessed, 2 * 3999);
    let twice: Vec<u64> = r.partitions.iter().map(|p| p.reprocessed).collect();
    assert_eq!(twice, [0, 3999, 0, 3999]);
    // No coordination: no rebalance, nothing down (consuming from 2 ms, first record 10 ms).
    assert_eq!(sum.rebalances, 0);
    close(sum.downtime_partition_s, 0.0, "downtime");
    assert_eq!((sum.records_produced, sum.final_lag), (16_000, 4));
    assert_eq!(sum.records_processed, 16_000 - 4 + 2 * 3999);
}

/// Client side: a node id nobody runs leaves its partitions unconsumed for the whole run.
#[test]
fn client_unrun_node_id_leaves_partitions_unconsumed() {
    let mut s = scenario(2, "40s", "");
    s.tubemq.source_count = 3;
    let r = run(&s, "tubemq-client");
    let sum = r.summary.as_ref().unwrap();
    // sourceCount 3: node 2 owns t-0 and t-3 and nobody runs it (members c0, c1 are nodes 0
    // and 1). Their 4000 records each stay unprocessed; t-1 and t-2 miss only the record of
    // 40.000 s. Final lag 2 x 4000 + 2.
    assert_eq!(sum.final_lag, 2 * 4000 + 2);
    assert_eq!(r.partitions[0].processed, 0);
    assert_eq!(r.partitions[3].processed, 0);
    // t-0 and t-3 are down from their first record (10 ms) to the end: 2 x 39.99 s.
    close(sum.downtime_partition_s, 2.0 * 39.99, "downtime");
    close(sum.downtime_episode_ms_max, 39_990.0, "one episode per partition");
    assert_eq!((sum.rebalances, sum.records_reprocessed, sum.records_lost), (0, 0, 0));
}

/// Client side: a dead node's partitions wait for its restart; its queries re-register them.
#[test]
fn client_crash_waits_for_the_restart() {
    let extra =
        "[[event]]\nat = \"20.505s\"\nkind = \"crash\"\nmember = \"c1\"\nrestart_after = \"5s\"\n";
    let r = run(&scenario(2, "40s", extra), "tubemq-client");
    let sum = r.summary.as_ref().unwrap();
    // Node 1 (c1) owns t-0 and t-2. Its last batch (offset 2049, polled 20.501 s) was
    // confirmed at 20.502 s. It restarts at 25.505 s and consumes again from 25.507 s:
    // t-0 and t-2 are down from their next record (20.510 s): 2 x 4.997 s.
    close(sum.downtime_partition_s, 2.0 * 4.997, "downtime");
    // It resumes at the confirmed 2050: nothing twice; no rebalance.
    assert_eq!((sum.records_reprocessed, sum.rebalances), (0, 0));
    assert_eq!((sum.records_produced, sum.final_lag, sum.records_lost), (16_000, 4, 0));
}

/// Same seed, same report; the master's random placement comes from the run seed.
#[test]
fn server_runs_are_deterministic() {
    let extra =
        "[[event]]\nat = \"12s\"\nkind = \"crash\"\nmember = \"c1\"\nrestart_after = \"3s\"\n\
                 [[event]]\nat = \"20s\"\nkind = \"join\"\nmember = \"c3\"\n";
    let mut s = scenario(3, "60s", extra);
    s.topics[0].arrival = scenario::Arrival::Poisson;
    for p in ["tubemq-server", "tubemq-client"] {
        assert_eq!(run(&s, p), run(&s, p), "{p}");
    }
}

/// Server side: a member paused beyond the heartbeat timeout is removed; when it resumes, its
/// heartbeat is answered "unknown": it drops its partitions and registers again.
#[test]
fn server_pause_beyond_the_heartbeat_timeout_reregisters() {
    let extra =
        "[[event]]\nat = \"20.505s\"\nkind = \"pause\"\nmember = \"c1\"\nduration = \"10s\"\n";
    let r = run(&scenario(2, "60s", extra), "tubemq-server");
    let sum = r.summary.as_ref().unwrap();
    // c1's heartbeat of 20 s arrived at 20.001 s; paused from 20.505 s, it sends none at 22,
    // 24, 26 s: removed at 26.001 s (t-2, t-3 unowned). c1 resumes at 30.505 s; its heartbeat
    // of 32 s (32.001 s at the master) is answered unknown (32.002 s): it drops t-2, t-3 and
    // registers again (32.003 s), before the tick of 35 s. That tick places the unowned t-2
    // and t-3 each on a member drawn from the master's seeded stream (c0-1 or c1-1); with
    // seed 7: t-2 on c0, t-3 on c1, pushed with the heartbeats of 36 s (36.002 s). c0 then
    // holds 3 of 4: the tick of 45 s balances (no membership change: trigger `balance`):
    // c0 sheds its first partition t-0 to c1. c0's heartbeat of 46 s gets the disconnect
    // (46.002 s; its batch of 46.001 s is confirmed: released at once at 4600); c1's of 46 s
    // (after c0's) gets nothing; at 48 s c0 reports it done, then c1 gets the connect event:
    // settled at 48.001 s, c1 consumes t-0 from 48.002 s.
    let triggers: Vec<&str> = r.rebalances.iter().map(|x| x.trigger.as_str()).collect();
    assert_eq!(triggers, ["join", "heartbeat-timeout", "balance"]);
    close(r.rebalances[1].start_s, 35.0, "timeout balance");
    close(r.rebalances[1].end_s, 36.002, "timeout settled");
    close(r.rebalances[2].end_s, 48.002, "second balance");
    let last_owner = |p: u32| owners(&r, p).last().unwrap().0.clone();
    assert_eq!(
        [last_owner(0), last_owner(1), last_owner(2), last_owner(3)],
        ["c1", "c0", "c0", "c1"]
    );
    // Moves: t-2 (c1 -> c0) and t-0 (c0 -> c1); t-3 stayed with c1.
    assert_eq!(sum.partitions_moved, 2);
    // Down: the initial 4 x 5.992 s; t-2 and t-3 owner-paused from their next record
    // (20.510 s) to 26.001 s, then unassigned until 36.002 s: 2 x 15.492 s; t-0 from its next
    // record (4600, 46.010 s) to 48.002 s: 1.992 s. (c1 consumed t-2, t-3 again from
    // 30.505 s as a zombie, but the master no longer let it: they count as unassigned.)
    close(sum.downtime_partition_s, 4.0 * 5.992 + 2.0 * 15.492 + 1.992, "downtime");
    // Resumed at 30.505 s, c1 consumed t-2/t-3 again until 32.002 s (it did not know yet):
    // its confirmations were refused (the broker has no registration for it), and the new
    // owners read the same records from c1's last confirmed offset (2050) on:
    // 2 x (3199 - 2050 + 1) = 2 x 1150 records twice (offsets up to 3199 arrived by
    // 32.000 s, polled at 32.001 s).
    assert_eq!(sum.records_reprocessed, 2 * 1150);
    assert_eq!((sum.records_produced, sum.final_lag, sum.records_lost), (24_000, 4, 0));
}

/// Every event kind runs under the three protocols without breaking an invariant or the
/// conservation of records.
#[test]
fn every_event_kind_runs() {
    let events = [
        ("5s", "join", "member = \"c3\""),
        ("8s", "leave", "member = \"c0\""),
        ("12s", "crash", "member = \"c1\"\nrestart_after = \"3s\""),
        ("20s", "pause", "member = \"c2\"\nduration = \"9s\""),
        ("31s", "stall", "member = \"c2\"\nduration = \"4s\""),
        ("40s", "disconnect", "member = \"c1\"\nduration = \"8s\""),
        ("55s", "rolling-restart", "interval = \"3s\"\ndowntime = \"1s\""),
        ("70s", "scale", "members = 5"),
        ("80s", "add-partitions", "topic = \"t\"\ncount = 2"),
    ];
    let extra: String = events
        .iter()
        .map(|(at, kind, rest)| format!("[[event]]\nat = \"{at}\"\nkind = \"{kind}\"\n{rest}\n"))
        .collect();
    let mut s = scenario(3, "100s", &extra);
    s.topics[0].arrival = scenario::Arrival::Poisson;
    for p in ["tubemq-server", "tubemq-client", "manual"] {
        let r = run(&s, p);
        let sum = r.summary.as_ref().unwrap();
        assert_eq!(sum.partitions, 6, "{p}");
        assert!(sum.records_produced > 0, "{p}");
    }
}

/// Client side: when one of two nodes with the same node id dies, the other still consumes
/// their partitions: no downtime, and only the records both processed count twice.
#[test]
fn client_duplicate_node_survives_one_crash() {
    let mut s = scenario(3, "40s", "[tubemq.node_ids]\nc2 = 0\n\n[[event]]\nat = \"20.505s\"\nkind = \"crash\"\nmember = \"c2\"\n");
    s.tubemq.source_count = 2;
    let r = run(&s, "tubemq-client");
    let sum = r.summary.as_ref().unwrap();
    // c0 and c2 (node 0) both read t-1 and t-3 until c2 dies at 20.505 s, after its poll of
    // 20.501 s (offset 2049): offsets 0..=2049 twice on each, 2 x 2050 reprocessed.
    assert_eq!(sum.records_reprocessed, 2 * 2050);
    // c0 goes on: t-1 and t-3 are never down.
    close(sum.downtime_partition_s, 0.0, "downtime");
    assert_eq!((sum.records_produced, sum.final_lag), (16_000, 4));
}
