//! Writing a validated [`Scenario`] back out as scenario-file TOML (DESIGN section 7).
//!
//! The text is complete: every key the loader reads is written, defaults included, so that
//! [`crate::parse_str`] of the output gives back an equal `Scenario` (given the same path;
//! `source` is not part of the text). Used by `rebalance-sim chaos --save` to turn a
//! generated scenario into a file that `run` accepts. Times are written with `SimTime`'s
//! `Display`, which the loader parses back exactly; Kafka properties in whole milliseconds
//! (the loader only ever makes whole milliseconds of them); floats with the shortest text
//! that reads back as the same value.

use crate::types::*;
use sim_core::SimTime;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The scenario as a TOML scenario file.
pub fn to_toml(scenario: &Scenario) -> String {
    let mut out = String::new();
    write_header(&mut out, scenario);
    for topic in &scenario.topics {
        write_topic(&mut out, topic);
    }
    write_consumer(&mut out, &scenario.consumer);
    write_broker(&mut out, &scenario.broker);
    line(&mut out, "\n[network]");
    line(&mut out, &format!("rtt = {}", time(scenario.network.rtt)));
    line(&mut out, &format!("rtt_p99 = {}", time(scenario.network.rtt_p99)));
    line(&mut out, "\n[producer]");
    line(&mut out, &format!("metadata_refresh = {}", time(scenario.producer.metadata_refresh)));
    write_timing(&mut out, &scenario.timing);
    line(&mut out, "\n[group]");
    line(&mut out, &format!("members = {}", scenario.group.members));
    line(&mut out, &format!("static_membership = {}", scenario.group.static_membership));
    line(&mut out, &format!("client_ids = {}", quoted(scenario.group.client_ids.name())));
    for event in &scenario.events {
        write_event(&mut out, event, &scenario.topics);
    }
    write_tubemq(&mut out, &scenario.tubemq);
    out
}

fn write_timing(out: &mut String, timing: &TimingSpec) {
    line(out, "\n[timing]");
    line(out, &format!("exact = {}", timing.exact));
    if !timing.exact {
        line(out, &format!("start_delay = {}", time(timing.start_delay)));
        line(out, &format!("start_spread = {}", time(timing.start_spread)));
        line(out, &format!("event_jitter = {}", time(timing.event_jitter)));
        line(out, &format!("heartbeat_jitter = {}", time(timing.heartbeat_jitter)));
    }
}

fn line(out: &mut String, text: &str) {
    out.push_str(text);
    out.push('\n');
}

/// A TOML string literal (quoted and escaped).
fn quoted(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// A time as a quoted human duration.
fn time(t: SimTime) -> String {
    quoted(&t.to_string())
}

/// A float that reads back as the same `f64`.
fn float(x: f64) -> String {
    toml::Value::Float(x).to_string()
}

/// A quoted Kafka property name (they contain dots).
fn prop(name: &str, value: impl std::fmt::Display) -> String {
    format!("{} = {value}", quoted(name))
}

fn millis(t: SimTime) -> u64 {
    t.as_millis()
}

fn write_header(out: &mut String, s: &Scenario) {
    line(out, &format!("name = {}", quoted(&s.name)));
    line(out, &format!("duration = {}", time(s.duration)));
    line(out, &format!("measure_from = {}", time(s.measure_from)));
    line(out, &format!("seed = {}", s.seed));
    let protocols: Vec<String> = s.protocols.iter().map(|p| quoted(&p.to_string())).collect();
    line(out, &format!("protocols = [{}]", protocols.join(", ")));
}

fn write_topic(out: &mut String, t: &TopicSpec) {
    line(out, "\n[[topic]]");
    line(out, &format!("name = {}", quoted(&t.name)));
    line(out, &format!("partitions = {}", t.partitions));
    line(out, &format!("rate = {}", float(t.rate_per_s)));
    let arrival = match t.arrival {
        Arrival::Constant => "constant",
        Arrival::Poisson => "poisson",
    };
    line(out, &format!("arrival = {}", quoted(arrival)));
    line(out, &format!("skew = {}", float(t.skew)));
}

fn processing(p: &Processing) -> String {
    match *p {
        Processing::Constant(t) => time(t),
        Processing::Lognormal { mean, p99 } => {
            format!("{{ dist = \"lognormal\", mean = {}, p99 = {} }}", time(mean), time(p99))
        }
        Processing::Exponential { mean } => {
            format!("{{ dist = \"exponential\", mean = {} }}", time(mean))
        }
    }
}

fn write_consumer(out: &mut String, c: &ConsumerSpec) {
    line(out, "\n[consumer]");
    line(out, &format!("processing = {}", processing(&c.processing)));
    let commit = match c.commit {
        CommitPolicy::Auto => "auto",
        CommitPolicy::SyncPerBatch => "sync-per-batch",
        CommitPolicy::AsyncPerBatch => "async-per-batch",
    };
    line(out, &format!("commit = {}", quoted(commit)));
    let client = match c.client {
        Client::Java => "java",
        Client::Librdkafka => "librdkafka",
    };
    line(out, &format!("client = {}", quoted(client)));
    line(out, &format!("rebalance_listener = {}", c.rebalance_listener));
    write_consumer_config(out, &c.config);
}

fn write_consumer_config(out: &mut String, c: &ConsumerConfig) {
    line(out, "\n[consumer.config]");
    line(out, &prop("session.timeout.ms", millis(c.session_timeout)));
    line(out, &prop("heartbeat.interval.ms", millis(c.heartbeat_interval)));
    line(out, &prop("max.poll.interval.ms", millis(c.max_poll_interval)));
    line(out, &prop("enable.auto.commit", c.enable_auto_commit));
    line(out, &prop("auto.commit.interval.ms", millis(c.auto_commit_interval)));
    let reset = match c.auto_offset_reset {
        OffsetReset::Latest => "latest",
        OffsetReset::Earliest => "earliest",
        OffsetReset::None => "none",
    };
    line(out, &prop("auto.offset.reset", quoted(reset)));
    line(out, &prop("max.poll.records", c.max_poll_records));
    line(out, &prop("fetch.max.wait.ms", millis(c.fetch_max_wait)));
    line(out, &prop("request.timeout.ms", millis(c.request_timeout)));
    line(out, &prop("retry.backoff.ms", millis(c.retry_backoff)));
    line(out, &prop("metadata.max.age.ms", millis(c.metadata_max_age)));
    line(
        out,
        &prop("topic.metadata.refresh.interval.ms", millis(c.topic_metadata_refresh_interval)),
    );
    if let Some(id) = &c.client_id {
        line(out, &prop("client.id", quoted(id)));
    }
    write_ignored(out, &c.ignored);
}

/// Recognised but unmodeled properties: the loader keeps them as the text written.
fn write_ignored(out: &mut String, ignored: &BTreeMap<String, String>) {
    for (name, value) in ignored {
        line(out, &prop(name, quoted(value)));
    }
}

fn write_broker(out: &mut String, b: &BrokerConfig) {
    line(out, "\n[broker.config]");
    let fields = [
        ("group.initial.rebalance.delay.ms", b.group_initial_rebalance_delay),
        ("group.min.session.timeout.ms", b.group_min_session_timeout),
        ("group.max.session.timeout.ms", b.group_max_session_timeout),
        ("group.consumer.session.timeout.ms", b.group_consumer_session_timeout),
        ("group.consumer.heartbeat.interval.ms", b.group_consumer_heartbeat_interval),
    ];
    for (name, value) in fields {
        line(out, &prop(name, millis(value)));
    }
    write_ignored(out, &b.ignored);
}

fn write_event(out: &mut String, e: &Event, topics: &[TopicSpec]) {
    line(out, "\n[[event]]");
    line(out, &format!("at = {}", time(e.at)));
    let mut fields = String::new();
    let kind = match &e.kind {
        EventKind::Join { member } => member_field(&mut fields, "join", member),
        EventKind::Leave { member } => member_field(&mut fields, "leave", member),
        EventKind::Crash { member, restart_after } => {
            let kind = member_field(&mut fields, "crash", member);
            if let Some(after) = restart_after {
                let _ = writeln!(fields, "restart_after = {}", time(*after));
            }
            kind
        }
        EventKind::Pause { member, duration } => timed(&mut fields, "pause", member, *duration),
        EventKind::Stall { member, duration } => timed(&mut fields, "stall", member, *duration),
        EventKind::Disconnect { member, duration } => {
            timed(&mut fields, "disconnect", member, *duration)
        }
        EventKind::RollingRestart { interval, downtime } => {
            let _ = writeln!(fields, "interval = {}", time(*interval));
            let _ = writeln!(fields, "downtime = {}", time(*downtime));
            "rolling-restart"
        }
        EventKind::Scale { members } => {
            let _ = writeln!(fields, "members = {members}");
            "scale"
        }
        EventKind::AddPartitions { topic, count } => {
            let name = topics.get(*topic).map_or("", |t| t.name.as_str());
            let _ = writeln!(fields, "topic = {}", quoted(name));
            let _ = writeln!(fields, "count = {count}");
            "add-partitions"
        }
    };
    line(out, &format!("kind = {}", quoted(kind)));
    out.push_str(&fields);
}

fn member_field(fields: &mut String, kind: &'static str, member: &str) -> &'static str {
    let _ = writeln!(fields, "member = {}", quoted(member));
    kind
}

fn timed(fields: &mut String, kind: &'static str, member: &str, d: SimTime) -> &'static str {
    member_field(fields, kind, member);
    let _ = writeln!(fields, "duration = {}", time(d));
    kind
}

fn write_tubemq(out: &mut String, t: &TubeMqSpec) {
    line(out, "\n[tubemq]");
    line(out, &format!("balance_period = {}", time(t.balance_period)));
    line(out, &format!("first_balance_delay = {}", time(t.first_balance_delay)));
    line(out, &format!("heartbeat_timeout = {}", time(t.heartbeat_timeout)));
    line(out, &format!("heartbeat_interval = {}", time(t.heartbeat_interval)));
    line(out, &format!("confirm_wait = {}", time(t.confirm_wait)));
    line(out, &format!("partition_query_interval = {}", time(t.partition_query_interval)));
    line(out, &format!("source_count = {}", t.source_count));
    if !t.node_ids.is_empty() {
        line(out, "\n[tubemq.node_ids]");
        for (member, id) in &t.node_ids {
            line(out, &format!("{} = {id}", quoted(member)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_str;
    use std::path::Path;

    const FULL: &str = r#"
name = "all-kinds"
duration = "10m"
measure_from = "90s"
seed = 7
protocols = ["eager:roundrobin", "cooperative", "consumer:range", "manual"]

[[topic]]
name = "orders"
partitions = 4
rate = 12.5
arrival = "poisson"
skew = 0.75

[[topic]]
name = "audit log"
partitions = 2
rate = 3

[consumer]
processing = { dist = "lognormal", mean = "1.5ms", p99 = "12ms" }
commit = "async-per-batch"
client = "librdkafka"
rebalance_listener = false

[consumer.config]
"session.timeout.ms" = 10000
"heartbeat.interval.ms" = 2500
"auto.offset.reset" = "smallest"
"isolation.level" = "read_committed"
"client.id" = "billing"

[broker.config]
"group.initial.rebalance.delay.ms" = 0

[network]
rtt = "250us"
rtt_p99 = "600us"

[timing]
start_spread = "2s"
event_jitter = "0s"

[group]
members = 3

[[event]]
at = "1m02.5s"
kind = "crash"
member = "c1"
restart_after = "30s"

[[event]]
at = "30s"
kind = "join"
member = "c3"

[[event]]
at = "2m"
kind = "add-partitions"
topic = "audit log"
count = 2

[[event]]
at = "3m"
kind = "rolling-restart"
interval = "20s"

[[event]]
at = "4m"
kind = "scale"
members = 2

[[event]]
at = "5m"
kind = "stall"
member = "c0"
duration = "1.5s"

[tubemq]
confirm_wait = "0s"

[tubemq.node_ids]
c3 = 2
"#;

    #[test]
    fn a_scenario_using_every_kind_round_trips() {
        let path = Path::new("all-kinds.toml");
        let scenario = parse_str(FULL, path).unwrap();
        let text = to_toml(&scenario);
        let again = parse_str(&text, path).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        assert_eq!(again, scenario, "{text}");
        // The events come back sorted by time: join (30s) before the crash (1m02.5s).
        assert!(matches!(again.events[0].kind, EventKind::Join { .. }));
        assert_eq!(again.events[1].at, SimTime::from_millis(62_500));
    }

    #[test]
    fn written_values_use_file_syntax() {
        let scenario = parse_str(FULL, Path::new("all-kinds.toml")).unwrap();
        let text = to_toml(&scenario);
        assert!(text.contains("\"session.timeout.ms\" = 10000\n"), "{text}");
        assert!(text.contains("\"auto.offset.reset\" = \"earliest\"\n"), "{text}");
        assert!(text.contains("rate = 12.5\n"), "{text}");
        assert!(text.contains("measure_from = \"1m30s\"\n"), "{text}");
        assert!(text.contains("topic = \"audit log\"\n"), "{text}");
        assert!(text.contains("\"client.id\" = \"billing\"\n"), "{text}");
        assert!(text.contains("client_ids = \"default\"\n"), "{text}");
        assert!(text.contains("protocols = [\"eager:roundrobin\", \"cooperative:cooperative-sticky\", \"consumer:range\", \"manual:none\"]"), "{text}");
    }
}
