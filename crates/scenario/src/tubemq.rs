//! `[tubemq]` and `[tubemq.node_ids]`: settings only the TubeMQ protocols read.
//!
//! Defaults follow the shipped configuration (docs/kafka-facts.md section 8): the master
//! balances every 30 s (`consumerBalancePeriodMs` in `conf/master.ini`; the code default is
//! 60 s), first balance after 30 s, a consumer silent for 30 s is removed, clients heartbeat
//! every 13 s (`TClientConstants`), a released partition waits 3 s for an in-flight batch
//! (`pullRebConfirmWaitPeriodMs`). `source_count` defaults to the initial member count.
//! `node_ids` holds only the entries written; a member without one uses `cN` -> N.

use crate::limits::MAX_MEMBERS;
use crate::reader::{self, Ctx, Section};
use crate::tree::Node;
use crate::types::TubeMqSpec;
use sim_core::SimTime;
use std::collections::{BTreeMap, BTreeSet};

const TUBEMQ_KEYS: &[&str] = &[
    "balance_period",
    "first_balance_delay",
    "heartbeat_timeout",
    "heartbeat_interval",
    "confirm_wait",
    "partition_query_interval",
    "source_count",
    "node_ids",
];

/// The shipped defaults for a group of `members` initial members.
pub fn default_tubemq(members: u32) -> TubeMqSpec {
    TubeMqSpec {
        balance_period: SimTime::from_secs(30),
        first_balance_delay: SimTime::from_secs(30),
        heartbeat_timeout: SimTime::from_secs(30),
        heartbeat_interval: SimTime::from_secs(13),
        confirm_wait: SimTime::from_secs(3),
        partition_query_interval: SimTime::from_secs(10),
        source_count: members.max(1),
        node_ids: BTreeMap::new(),
    }
}

/// Reads `[tubemq]`; `names` are all members that ever exist (for `node_ids`), when known.
pub(crate) fn tubemq_spec(
    ctx: &mut Ctx<'_>,
    node: Option<&Node>,
    members: u32,
    names: Option<&BTreeSet<String>>,
) -> TubeMqSpec {
    let mut spec = default_tubemq(members);
    let Some(node) = node else { return spec };
    let Some(mut s) = Section::open(ctx, node, "tubemq") else { return spec };
    read_durations(ctx, &mut s, &mut spec);
    if let Some(n) = s.take("source_count") {
        if let Some(count) = reader::u32_in(ctx, n, "tubemq.source_count", 1, MAX_MEMBERS) {
            spec.source_count = count;
        }
    }
    if let Some(n) = s.take("node_ids") {
        spec.node_ids = node_ids(ctx, n, spec.source_count, names);
    }
    s.finish(ctx, TUBEMQ_KEYS);
    spec
}

fn read_durations(ctx: &mut Ctx<'_>, s: &mut Section<'_>, spec: &mut TubeMqSpec) {
    let fields: [(&str, &mut SimTime); 6] = [
        ("balance_period", &mut spec.balance_period),
        ("first_balance_delay", &mut spec.first_balance_delay),
        ("heartbeat_timeout", &mut spec.heartbeat_timeout),
        ("heartbeat_interval", &mut spec.heartbeat_interval),
        ("confirm_wait", &mut spec.confirm_wait),
        ("partition_query_interval", &mut spec.partition_query_interval),
    ];
    for (name, field) in fields {
        if let Some(n) = s.take(name) {
            let key = s.key(name);
            let value = if name == "first_balance_delay" || name == "confirm_wait" {
                reader::duration(ctx, n, &key)
            } else {
                reader::positive_duration(ctx, n, &key)
            };
            if let Some(t) = value {
                *field = t;
            }
        }
    }
}

/// `[tubemq.node_ids]`: known members, ids below `source_count`, no id twice.
fn node_ids(
    ctx: &mut Ctx<'_>,
    node: &Node,
    source_count: u32,
    names: Option<&BTreeSet<String>>,
) -> BTreeMap<String, u32> {
    let mut ids = BTreeMap::new();
    let Some(mut s) = Section::open(ctx, node, "tubemq.node_ids") else { return ids };
    let mut owners: BTreeMap<u32, String> = BTreeMap::new();
    for (member, value) in s.take_rest() {
        let key = s.key(member);
        if let Some(names) = names.filter(|n| !n.contains(member)) {
            let message =
                reader::unknown_message("member", member, names.iter().map(String::as_str));
            ctx.at(value, &key, message, Some("members that exist during the run"));
            continue;
        }
        let Some(id) = reader::u32_in(ctx, value, &key, 0, source_count - 1) else { continue };
        if let Some(other) = owners.get(&id) {
            let message = format!("node id {id} is already {other}'s");
            ctx.at(value, &key, message, Some("a distinct node id per member (TubeMQ checks it)"));
            continue;
        }
        owners.insert(id, member.to_string());
        ids.insert(member.to_string(), id);
    }
    ids
}
