//! `[consumer.config]` and `[broker.config]`: Kafka properties by their real names.
//!
//! Modeled properties are read with Kafka's units (`*.ms` are integers in milliseconds; Java's
//! ConfigDef also accepts a string of digits, so do we) and take the Java client's / Apache
//! Kafka's defaults when unset (docs/kafka-facts.md section 1). Real but unmodeled names go into
//! `ignored` with their values as written; anything else is rejected with the nearest name.
//!
//! librdkafka names: shared names mean the same; `fetch.wait.max.ms` is librdkafka's name for
//! Java's `fetch.max.wait.ms` (both: how long the broker may hold a fetch waiting for
//! `fetch.min.bytes`) and is mapped onto it; `auto.offset.reset` accepts librdkafka's values
//! (`smallest`/`beginning` = earliest, `largest`/`end` = latest, `error` = none). Other
//! librdkafka-only names are ignored.

use crate::kafka_props::{
    is_ignored_broker_property, is_ignored_consumer_property, BROKER_IGNORED,
    JAVA_CONSUMER_IGNORED, LIBRDKAFKA_CONSUMER_IGNORED,
};
use crate::reader::{unknown_message, Ctx, Section};
use crate::tree::{Kind, Node};
use crate::types::{BrokerConfig, ConsumerConfig, OffsetReset};
use sim_core::SimTime;
use std::collections::BTreeMap;

/// The consumer properties the model reads.
pub(crate) const MODELED_CONSUMER: &[&str] = &[
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "max.poll.interval.ms",
    "enable.auto.commit",
    "auto.commit.interval.ms",
    "auto.offset.reset",
    "max.poll.records",
    "fetch.max.wait.ms",
    "request.timeout.ms",
    "retry.backoff.ms",
    "metadata.max.age.ms",
    "topic.metadata.refresh.interval.ms",
    "client.id",
];

/// librdkafka's name for `fetch.max.wait.ms`.
const LIBRDKAFKA_FETCH_WAIT: &str = "fetch.wait.max.ms";

/// The broker properties the model reads.
pub(crate) const MODELED_BROKER: &[&str] = &[
    "group.initial.rebalance.delay.ms",
    "group.min.session.timeout.ms",
    "group.max.session.timeout.ms",
    "group.consumer.session.timeout.ms",
    "group.consumer.heartbeat.interval.ms",
];

/// Java's `int` properties top out here.
const JAVA_INT_MAX: i64 = i32::MAX as i64;

/// `auto.offset.reset` values, Java's then librdkafka's.
const OFFSET_RESET_VALUES: &[(&str, OffsetReset)] = &[
    ("latest", OffsetReset::Latest),
    ("earliest", OffsetReset::Earliest),
    ("none", OffsetReset::None),
    ("largest", OffsetReset::Latest),
    ("end", OffsetReset::Latest),
    ("smallest", OffsetReset::Earliest),
    ("beginning", OffsetReset::Earliest),
    ("error", OffsetReset::None),
];

/// The Java client's defaults (docs/kafka-facts.md section 1).
pub fn default_consumer_config() -> ConsumerConfig {
    ConsumerConfig {
        session_timeout: SimTime::from_millis(45_000),
        heartbeat_interval: SimTime::from_millis(3_000),
        max_poll_interval: SimTime::from_millis(300_000),
        enable_auto_commit: true,
        auto_commit_interval: SimTime::from_millis(5_000),
        auto_offset_reset: OffsetReset::Latest,
        max_poll_records: 500,
        fetch_max_wait: SimTime::from_millis(500),
        request_timeout: SimTime::from_millis(30_000),
        retry_backoff: SimTime::from_millis(100),
        metadata_max_age: SimTime::from_millis(300_000),
        topic_metadata_refresh_interval: SimTime::from_millis(300_000),
        client_id: None,
        ignored: BTreeMap::new(),
    }
}

/// Apache Kafka's broker defaults (docs/kafka-facts.md section 1).
pub fn default_broker_config() -> BrokerConfig {
    BrokerConfig {
        group_initial_rebalance_delay: SimTime::from_millis(3_000),
        group_min_session_timeout: SimTime::from_millis(6_000),
        group_max_session_timeout: SimTime::from_millis(1_800_000),
        group_consumer_session_timeout: SimTime::from_millis(45_000),
        group_consumer_heartbeat_interval: SimTime::from_millis(5_000),
        ignored: BTreeMap::new(),
    }
}

/// Reads `[consumer.config]` (may be absent: all defaults).
pub(crate) fn consumer_config(ctx: &mut Ctx<'_>, node: Option<&Node>) -> ConsumerConfig {
    let mut config = default_consumer_config();
    let Some(node) = node else { return config };
    let Some(mut section) = Section::open(ctx, node, "consumer.config") else { return config };
    read_consumer_timeouts(ctx, &mut section, &mut config);
    read_consumer_commit(ctx, &mut section, &mut config);
    if let Some(v) = ms_property(ctx, &mut section, "max.poll.records", 1) {
        config.max_poll_records = u32::try_from(v).unwrap_or(u32::MAX);
    }
    read_fetch_wait(ctx, &mut section, &mut config);
    read_client_id(ctx, &mut section, &mut config);
    config.ignored =
        collect_ignored(ctx, &mut section, is_ignored_consumer_property, &consumer_names());
    config
}

fn read_consumer_timeouts(
    ctx: &mut Ctx<'_>,
    section: &mut Section<'_>,
    config: &mut ConsumerConfig,
) {
    if let Some(t) = ms_time(ctx, section, "session.timeout.ms", 1) {
        config.session_timeout = t;
    }
    if let Some(t) = ms_time(ctx, section, "heartbeat.interval.ms", 1) {
        config.heartbeat_interval = t;
    }
    if let Some(t) = ms_time(ctx, section, "max.poll.interval.ms", 1) {
        config.max_poll_interval = t;
    }
    if let Some(t) = ms_time(ctx, section, "request.timeout.ms", 0) {
        config.request_timeout = t;
    }
    if let Some(t) = ms_time(ctx, section, "retry.backoff.ms", 0) {
        config.retry_backoff = t;
    }
    // Java's `metadata.max.age.ms` and librdkafka's `topic.metadata.refresh.interval.ms`: how
    // often a client refreshes its topic metadata (librdkafka's own `metadata.max.age.ms` is
    // a cache age, not the refresh period: the model reads the name of the scenario's client).
    if let Some(t) = ms_time(ctx, section, "metadata.max.age.ms", 1) {
        config.metadata_max_age = t;
    }
    if let Some(t) = ms_time(ctx, section, "topic.metadata.refresh.interval.ms", 1) {
        config.topic_metadata_refresh_interval = t;
    }
}

fn read_consumer_commit(ctx: &mut Ctx<'_>, section: &mut Section<'_>, config: &mut ConsumerConfig) {
    if let Some(node) = section.take("enable.auto.commit") {
        if let Some(b) = bool_property(ctx, node, &section.key("enable.auto.commit")) {
            config.enable_auto_commit = b;
        }
    }
    if let Some(t) = ms_time(ctx, section, "auto.commit.interval.ms", 0) {
        config.auto_commit_interval = t;
    }
    if let Some(node) = section.take("auto.offset.reset") {
        if let Some(reset) = offset_reset(ctx, node, &section.key("auto.offset.reset")) {
            config.auto_offset_reset = reset;
        }
    }
}

/// `client.id`: a non-empty string. Java's `ConsumerConfig.maybeOverrideClientId` treats an
/// empty one as unset (it generates `consumer-<group.id>-<n>`); here leaving it out says that.
fn read_client_id(ctx: &mut Ctx<'_>, section: &mut Section<'_>, config: &mut ConsumerConfig) {
    let Some(node) = section.take("client.id") else { return };
    let key = section.key("client.id");
    let Some(id) = crate::reader::string(ctx, node, &key) else { return };
    if id.is_empty() {
        let allowed = "a non-empty string; leave client.id out for the client's default";
        ctx.at(node, &key, "an empty client.id", Some(allowed));
        return;
    }
    config.client_id = Some(id.to_string());
}

/// `fetch.max.wait.ms`, or librdkafka's `fetch.wait.max.ms` (not both).
fn read_fetch_wait(ctx: &mut Ctx<'_>, section: &mut Section<'_>, config: &mut ConsumerConfig) {
    let java = ms_time(ctx, section, "fetch.max.wait.ms", 0);
    let alias_node = section.node.get(LIBRDKAFKA_FETCH_WAIT);
    let librdkafka = ms_time(ctx, section, LIBRDKAFKA_FETCH_WAIT, 0);
    if let (Some(_), Some(_), Some(node)) = (java, librdkafka, alias_node) {
        let key = section.key(LIBRDKAFKA_FETCH_WAIT);
        let message = "librdkafka's name for fetch.max.wait.ms, which is also set; keep one";
        ctx.at(node, &key, message, Some("fetch.max.wait.ms or fetch.wait.max.ms, not both"));
    }
    if let Some(t) = java.or(librdkafka) {
        config.fetch_max_wait = t;
    }
}

/// Reads `[broker.config]` (may be absent: all defaults).
pub(crate) fn broker_config(ctx: &mut Ctx<'_>, node: Option<&Node>) -> BrokerConfig {
    let mut config = default_broker_config();
    let Some(node) = node else { return config };
    let Some(mut section) = Section::open(ctx, node, "broker.config") else { return config };
    let fields: [(&str, u64, &mut SimTime); 5] = [
        ("group.initial.rebalance.delay.ms", 0, &mut config.group_initial_rebalance_delay),
        ("group.min.session.timeout.ms", 0, &mut config.group_min_session_timeout),
        ("group.max.session.timeout.ms", 0, &mut config.group_max_session_timeout),
        ("group.consumer.session.timeout.ms", 1, &mut config.group_consumer_session_timeout),
        ("group.consumer.heartbeat.interval.ms", 1, &mut config.group_consumer_heartbeat_interval),
    ];
    for (name, min, field) in fields {
        if let Some(t) = ms_time(ctx, &mut section, name, min) {
            *field = t;
        }
    }
    if config.group_min_session_timeout > config.group_max_session_timeout {
        let key = section.key("group.min.session.timeout.ms");
        let message = format!(
            "{} is above group.max.session.timeout.ms ({})",
            config.group_min_session_timeout.as_millis(),
            config.group_max_session_timeout.as_millis()
        );
        ctx.at(node, &key, message, None);
    }
    let names: Vec<&str> = MODELED_BROKER.iter().chain(BROKER_IGNORED).copied().collect();
    config.ignored = collect_ignored(ctx, &mut section, is_ignored_broker_property, &names);
    config
}

/// Every consumer name the file may use: modeled, the librdkafka alias, and ignored ones.
fn consumer_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = MODELED_CONSUMER.to_vec();
    names.push(LIBRDKAFKA_FETCH_WAIT);
    names.extend(JAVA_CONSUMER_IGNORED);
    names.extend(LIBRDKAFKA_CONSUMER_IGNORED);
    names
}

/// Moves the remaining entries into `ignored` when `known`, else reports them as unknown.
fn collect_ignored(
    ctx: &mut Ctx<'_>,
    section: &mut Section<'_>,
    known: fn(&str) -> bool,
    all_names: &[&str],
) -> BTreeMap<String, String> {
    let mut ignored = BTreeMap::new();
    for (name, node) in section.take_rest() {
        let key = section.key(name);
        if !known(name) {
            let message = unknown_message("property", name, all_names.iter().copied());
            let allowed =
                format!("a real Kafka property name; modeled: {}", modeled_list(all_names));
            ctx.at(node, &key, message, Some(&allowed));
            continue;
        }
        match render_value(node) {
            Some(text) => {
                ignored.insert(name.to_string(), text);
            }
            None => {
                ctx.wrong_type(node, &key, "a property value (string, number, boolean or list)")
            }
        }
    }
    ignored
}

/// The modeled names at the head of `all_names` (the lists start with them).
fn modeled_list(all_names: &[&str]) -> String {
    let modeled: Vec<&str> = all_names
        .iter()
        .copied()
        .filter(|n| MODELED_CONSUMER.contains(n) || MODELED_BROKER.contains(n))
        .collect();
    modeled.join(", ")
}

/// A property value as Kafka's properties text would hold it; lists are comma-joined.
fn render_value(node: &Node) -> Option<String> {
    match &node.kind {
        Kind::Str(s) => Some(s.clone()),
        Kind::Int(i) => Some(i.to_string()),
        Kind::Float(f) => Some(f.to_string()),
        Kind::Bool(b) => Some(b.to_string()),
        Kind::Array(items) => {
            let parts: Option<Vec<String>> = items.iter().map(render_value).collect();
            parts.map(|p| p.join(","))
        }
        Kind::Datetime(_) | Kind::Table(_) => None,
    }
}

/// A Kafka integer property (an integer, or a string of digits as Java's ConfigDef accepts), in
/// `min..=i32::MAX`.
fn ms_property(ctx: &mut Ctx<'_>, section: &mut Section<'_>, name: &str, min: i64) -> Option<u64> {
    let node = section.take(name)?;
    let key = section.key(name);
    let value = match &node.kind {
        Kind::Int(i) => Some(*i),
        Kind::Str(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    let unit_hint = if name.ends_with(".ms") { " (milliseconds)" } else { "" };
    let Some(value) = value else {
        let expected = format!("an integer{unit_hint}, e.g. {name} = 45000");
        ctx.wrong_type(node, &key, &expected);
        return None;
    };
    if value < min || value > JAVA_INT_MAX {
        let allowed = format!("an integer from {min} to {JAVA_INT_MAX}{unit_hint}");
        ctx.at(node, &key, format!("{value} is out of range"), Some(&allowed));
        return None;
    }
    u64::try_from(value).ok()
}

/// A `*.ms` property as a time.
fn ms_time(ctx: &mut Ctx<'_>, section: &mut Section<'_>, name: &str, min: u64) -> Option<SimTime> {
    let min = i64::try_from(min).unwrap_or(i64::MAX);
    ms_property(ctx, section, name, min).map(SimTime::from_millis)
}

/// A boolean property: `true`/`false`, or the strings Java's ConfigDef accepts.
fn bool_property(ctx: &mut Ctx<'_>, node: &Node, key: &str) -> Option<bool> {
    match &node.kind {
        Kind::Bool(b) => Some(*b),
        Kind::Str(s) if s.eq_ignore_ascii_case("true") => Some(true),
        Kind::Str(s) if s.eq_ignore_ascii_case("false") => Some(false),
        _ => {
            ctx.wrong_type(node, key, "true or false");
            None
        }
    }
}

/// `auto.offset.reset` in Java's or librdkafka's words.
fn offset_reset(ctx: &mut Ctx<'_>, node: &Node, key: &str) -> Option<OffsetReset> {
    let Kind::Str(text) = &node.kind else {
        ctx.wrong_type(node, key, "a string");
        return None;
    };
    if let Some((_, reset)) = OFFSET_RESET_VALUES.iter().find(|(name, _)| name == text) {
        return Some(*reset);
    }
    let names: Vec<&str> = OFFSET_RESET_VALUES.iter().map(|(n, _)| *n).collect();
    let message = unknown_message("value", text, names.iter().copied());
    ctx.at(node, key, message, Some(&names.join(", ")));
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::parse_text;
    use std::path::PathBuf;

    fn consumer_from(text: &str) -> (ConsumerConfig, Vec<String>) {
        let root = parse_text(text).unwrap();
        let Kind::Table(t) = &root.kind else { panic!() };
        let file = PathBuf::from("c.toml");
        let mut ctx = Ctx::new(&file, Some(text));
        let config = consumer_config(&mut ctx, t.get("config"));
        (config, ctx.errors.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn unset_properties_take_the_java_defaults() {
        let (config, errors) = consumer_from("");
        assert!(errors.is_empty());
        assert_eq!(config, default_consumer_config());
        assert_eq!(config.session_timeout, SimTime::from_secs(45));
        assert_eq!(config.max_poll_records, 500);
    }

    #[test]
    fn modeled_ignored_and_librdkafka_names() {
        let text = "[config]\n\"session.timeout.ms\" = 10000\n\"enable.auto.commit\" = \"false\"\n\
            \"auto.offset.reset\" = \"smallest\"\n\"fetch.wait.max.ms\" = 20\n\
            \"isolation.level\" = \"read_committed\"\n\"queued.min.messages\" = 1000\n";
        let (config, errors) = consumer_from(text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(config.session_timeout, SimTime::from_millis(10_000));
        assert!(!config.enable_auto_commit);
        assert_eq!(config.auto_offset_reset, OffsetReset::Earliest);
        assert_eq!(config.fetch_max_wait, SimTime::from_millis(20));
        assert_eq!(
            config.ignored.get("isolation.level").map(String::as_str),
            Some("read_committed")
        );
        assert_eq!(config.ignored.get("queued.min.messages").map(String::as_str), Some("1000"));
    }

    #[test]
    fn typos_and_bad_values_are_reported() {
        let text = "[config]\n\"session.timeout\" = 10000\n\"max.poll.records\" = 0\n";
        let (_, errors) = consumer_from(text);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].starts_with(
                "c.toml:3:22: consumer.config.\"max.poll.records\": 0 is out of range"
            ),
            "{}",
            errors[0]
        );
        assert!(
            errors[1]
                .contains("unknown property `session.timeout`; did you mean `session.timeout.ms`?"),
            "{}",
            errors[1]
        );
    }
}
