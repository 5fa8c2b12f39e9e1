//! Hand-derived: the classic member order follows the member ids, `clientId-UUID` (AK
//! `ClassicGroup.generateMemberId`), and the range assignor sorts dynamic members by member id
//! (AK `AbstractPartitionAssignor.MemberInfo.compareTo`, then `RangeAssignor` hands each
//! member in that order its share of every topic: 6 partitions over 3 members, 2 each, the
//! first member t-0/t-1, the second t-2/t-3, the third t-4/t-5). `[group] client_ids` says
//! whether every member has the same client id (`"default"`: the UUID alone orders them) or
//! its own name (`"member-name"`: they order by name).
//!
//! Scenario: 3 members, 6 partitions at 100 records/s, `eager:range`, rtt 2 ms, no initial
//! delay, session timeout 10 s, lock-step timing, seed 1. c2 crashes at 20.505 s and restarts
//! 2 s later, inside its session: the timing is that of classic.rs test (c) (c2 in place of
//! c1): the new c2 joins at 22.505 (arrives 22.506: the rebalance starts), c0 and c1 learn at
//! their heartbeat of 24.004 (response 24.006) and rejoin, the old c2's session expires at
//! 28.005 (its last heartbeat arrived 18.005), which ends the join phase: sync responses at
//! 28.008 s. The generation then has c0, c1 and the new c2.

mod support;

use model::protocols::classic::coordinator::member_id;
use scenario::Scenario;
use sim_core::RngStreams;
use support::{close, run};

const BASE: &str = r#"
name = "member-ids"
duration = "40s"
seed = 1
protocols = ["eager:range"]

[[topic]]
name = "t"
partitions = 6
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

[broker.config]
"group.initial.rebalance.delay.ms" = 0

[network]
rtt = "2ms"

[[event]]
at = "20.505s"
kind = "crash"
member = "c2"
restart_after = "2s"
"#;

fn scenario(group: &str) -> Scenario {
    support::parse(&format!("{BASE}\n[group]\nmembers = 3\n{group}\n"), "member-ids.toml")
}

/// The owner of each partition at `at_s` (ownership.csv rows), by partition.
fn owners_at(r: &metrics::RunReport, at_s: f64) -> Vec<String> {
    (0..6)
        .map(|p| {
            let row = r.ownership.iter().find(|o| {
                o.partition == p && o.start_s <= at_s && at_s < o.end_s && !o.owner.is_empty()
            });
            row.map_or_else(String::new, |o| o.owner.to_string())
        })
        .collect()
}

/// The UUIDs seed 1 draws, in draw order: the coordinator draws one per new member as its
/// JoinGroup arrives (c0, c1, c2 at 1 ms, in start order; the new c2 at 22.506 s).
#[test]
fn seed_1_draws_these_uuids() {
    let mut rng = RngStreams::new(1).stream(member_id::STREAM);
    let drawn: Vec<String> = (0..4).map(|_| member_id::random_uuid(&mut rng)).collect();
    assert_eq!(
        drawn,
        [
            "ba3a2b30-9239-4f34-a869-b9bfc7fe7c2c", // c0
            "57304526-3c87-4dc6-87b8-faca182df815", // c1
            "4520cd95-ec9d-4e7b-adfa-c0fbfadd5c47", // c2
            "9880b1c7-1175-416f-a9dd-a87e9e514638", // c2 restarted
        ]
    );
}

/// `client_ids = "member-name"`: ids `c0-…`, `c1-…`, `c2-…` order by name whatever the UUIDs.
/// Before: c0 t-0/t-1, c1 t-2/t-3, c2 t-4/t-5; after the restart the new `c2-…` still sorts
/// last and gets t-4/t-5 back: nothing moves.
#[test]
fn member_name_ids_give_the_restarted_member_its_partitions_back() {
    let r = run(&scenario("client_ids = \"member-name\""), "eager:range");
    let sum = r.summary.as_ref().unwrap();
    assert_eq!(owners_at(&r, 10.0), ["c0", "c0", "c1", "c1", "c2", "c2"]);
    assert_eq!(owners_at(&r, 30.0), ["c0", "c0", "c1", "c1", "c2", "c2"]);
    let reb = &r.rebalances[1];
    assert_eq!(reb.trigger, "join");
    close(reb.start_s, 22.506, "start");
    close(reb.end_s, 28.008, "end");
    assert_eq!((reb.members, reb.partitions_moved), (3, 0));
    assert_eq!(sum.partitions_moved, 0);
    common_figures(&r);
}

/// `client_ids = "default"` (the default): every id is `consumer-group-1-<uuid>` (the Java
/// client's default client.id), so the UUIDs order the members: 4520… (c2) < 5730… (c1) <
/// ba3a… (c0). Before: c2 t-0/t-1, c1 t-2/t-3, c0 t-4/t-5. The new c2 draws 9880…, which sorts
/// between c1 (5730…) and c0 (ba3a…): c1 t-0/t-1, c2 t-2/t-3, c0 t-4/t-5. t-0 and t-1 move
/// from the old c2 to c1, t-2 and t-3 from c1 to the new c2: 4 partitions moved.
#[test]
fn default_ids_order_by_uuid_and_the_restarted_member_takes_a_new_place() {
    for group in ["", "client_ids = \"default\""] {
        let r = run(&scenario(group), "eager:range");
        let sum = r.summary.as_ref().unwrap();
        assert_eq!(owners_at(&r, 10.0), ["c2", "c2", "c1", "c1", "c0", "c0"], "{group}");
        assert_eq!(owners_at(&r, 30.0), ["c1", "c1", "c2", "c2", "c0", "c0"], "{group}");
        let reb = &r.rebalances[1];
        assert_eq!(reb.trigger, "join");
        close(reb.start_s, 22.506, "start");
        close(reb.end_s, 28.008, "end");
        assert_eq!((reb.members, reb.partitions_moved), (3, 4));
        assert_eq!(sum.partitions_moved, 4);
        common_figures(&r);
    }
}

/// One shared `client.id` in `[consumer.config]` orders like "default": the same ids but for
/// the prefix, so the same assignment.
#[test]
fn a_shared_client_id_orders_by_uuid_too() {
    let mut s = scenario("");
    s.consumer.config.client_id = Some("app".to_string());
    let r = run(&s, "eager:range");
    assert_eq!(owners_at(&r, 30.0), ["c1", "c1", "c2", "c2", "c0", "c0"]);
    assert_eq!(r.summary.as_ref().unwrap().partitions_moved, 4);
}

/// What the order does not change here (eager: every partition stops while the group
/// rebalances, and everything resumes at the sync responses of 28.008 s): the two partitions
/// of the dead c2 are down from their first record after the crash (20.510) to 28.008,
/// 7.498 s each; the other four from their next record after c0's and c1's revocation
/// (24.010) to 28.008, 3.998 s each. The dead member's last commit (20.004 s) stored 2000 on
/// each of its partitions and it had processed up to 2049: 50 records each again.
fn common_figures(r: &metrics::RunReport) {
    let sum = r.summary.as_ref().unwrap();
    close(sum.downtime_partition_s, 2.0 * 7.498 + 4.0 * 3.998, "downtime");
    close(sum.stop_the_world_s, 4.002, "stop the world");
    assert_eq!(sum.records_reprocessed, 100);
    assert_eq!(sum.rebalances, 2);
}
