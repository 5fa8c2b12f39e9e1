//! Warnings: settings that are valid but ignored by the model or probably not what was meant.
//!
//! Unlike errors they do not stop a run; `validate` prints them to stderr, `run` prints the
//! overload ones (crate::utilisation).

use crate::limits::WARN_RECORDS;
use crate::types::{CommitPolicy, Protocol, Scenario};

/// Consumer properties with a more specific hint than "ignored".
const CONSUMER_HINTS: &[(&str, &str)] = &[
    ("group.instance.id", "use [group] static_membership = true or a +static protocol instead"),
    ("partition.assignment.strategy", "the protocols list chooses the assignor"),
    ("group.protocol", "the protocols list chooses the protocol"),
    (
        "group.remote.assignor",
        "the protocols list chooses the assignor (consumer:uniform, consumer:range)",
    ),
];

/// Everything dubious about `scenario`, one sentence each, in a fixed order.
pub fn warnings(scenario: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    ignored_properties(scenario, &mut out);
    timeouts(scenario, &mut out);
    commits(scenario, &mut out);
    workload(scenario, &mut out);
    out.extend(crate::utilisation::overload_warnings(scenario));
    out.extend(crate::estimate::slow_run_warning(scenario));
    out
}

fn ignored_properties(scenario: &Scenario, out: &mut Vec<String>) {
    for name in scenario.consumer.config.ignored.keys() {
        let hint = CONSUMER_HINTS.iter().find(|(n, _)| n == name).map_or("", |(_, h)| h);
        let mut text = format!("consumer.config.\"{name}\" is accepted but not modeled");
        if !hint.is_empty() {
            text.push_str(&format!(": {hint}"));
        }
        out.push(text);
    }
    for name in scenario.broker.ignored.keys() {
        out.push(format!("broker.config.\"{name}\" is accepted but not modeled"));
    }
}

fn timeouts(scenario: &Scenario, out: &mut Vec<String>) {
    let config = &scenario.consumer.config;
    let (session, heartbeat) =
        (config.session_timeout.as_millis(), config.heartbeat_interval.as_millis());
    // Kafka's docs: heartbeat.interval.ms "should be set no higher than 1/3" of the session
    // timeout (CommonClientConfigs.HEARTBEAT_INTERVAL_MS_DOC).
    if heartbeat * 3 > session {
        out.push(format!(
            "consumer.config.\"heartbeat.interval.ms\" = {heartbeat} is above a third of session.timeout.ms ({session}); Kafka's docs advise at most {}",
            session / 3
        ));
    }
    let batch_ms =
        scenario.consumer.processing.mean().as_millis_f64() * f64::from(config.max_poll_records);
    if batch_ms > config.max_poll_interval.as_millis_f64() {
        out.push(format!(
            "a full batch of max.poll.records = {} takes {batch_ms:.0} ms on average, above max.poll.interval.ms ({}): members will be kicked out whenever they are busy",
            config.max_poll_records,
            config.max_poll_interval.as_millis()
        ));
    }
}

fn commits(scenario: &Scenario, out: &mut Vec<String>) {
    let auto = scenario.consumer.config.enable_auto_commit;
    match (scenario.consumer.commit, auto) {
        (CommitPolicy::Auto, false) => out.push(
            "consumer.commit = \"auto\" but enable.auto.commit = false: nothing is ever committed"
                .to_string(),
        ),
        (CommitPolicy::SyncPerBatch | CommitPolicy::AsyncPerBatch, true) => out.push(
            "per-batch commits with enable.auto.commit = true (the Java default): both run, as in the real client; set \"enable.auto.commit\" = false for manual commits only"
                .to_string(),
        ),
        _ => {}
    }
}

fn workload(scenario: &Scenario, out: &mut Vec<String>) {
    let rate: f64 = scenario.topics.iter().map(|t| t.rate_per_s * f64::from(t.partitions)).sum();
    let records = rate * scenario.duration.as_secs_f64();
    if records > WARN_RECORDS {
        out.push(format!("about {records:.3e} records will be produced: the run may be slow"));
    }
    let joins = scenario.events.iter().any(|e| {
        matches!(e.kind, crate::EventKind::Join { .. } | crate::EventKind::Scale { members: 1.. })
    });
    if scenario.group.members == 0 && !joins {
        out.push("[group] members = 0 and no member ever joins: nothing is consumed".to_string());
    }
    let tubemq = scenario.protocols.iter().any(|p| p.protocol == Protocol::TubemqClient);
    if tubemq && scenario.group.members > scenario.tubemq.source_count {
        out.push(format!(
            "tubemq.source_count = {} is below the {} initial members: members with node id >= source_count own nothing",
            scenario.tubemq.source_count, scenario.group.members
        ));
    }
}
