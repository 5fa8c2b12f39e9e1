//! Loading a scenario: file -> text -> positioned tree -> validated [`Scenario`], collecting
//! every problem on the way (DESIGN section 7).
//!
//! Defaults where a key is left out: `name` = the file stem, `measure_from` = 0, `seed` = 1, `[consumer]`
//! `processing = "1ms"`, `commit = "auto"`, `client = "java"`, `rebalance_listener = true`; `[[topic]]` `arrival =
//! "constant"`, `skew = 0`; `[network] rtt = "1ms"`, `rtt_p99` = 4 x `rtt`; `[timing]` varied
//! (`start_spread = "500ms"`, `event_jitter` = `heartbeat.interval.ms`, docs/timing.md); `[group] static_membership = false`;
//! Kafka properties per `config.rs`; `[tubemq]` per docs/kafka-facts.md section 8. Required:
//! `duration`, `protocols`, at least one `[[topic]]` (`name`, `partitions`, `rate`) and
//! `[group] members`.

use crate::config::{broker_config, consumer_config};
use crate::error::ScenarioError;
use crate::events::{check_timeline, parse_events};
use crate::limits::{MAX_MEMBERS, MAX_NAME_CHARS, MAX_PARTITIONS, MAX_RATE_PER_S};
use crate::protocol::{supports_static, PROTOCOL_FORMS};
use crate::reader::{self, Ctx, Section};
use crate::tree::{self, Kind, Node};
use crate::tubemq::tubemq_spec;
use crate::types::*;
use sim_core::SimTime;
use std::path::Path;

const ROOT_KEYS: &[&str] = &[
    "name",
    "duration",
    "measure_from",
    "seed",
    "protocols",
    "topic",
    "consumer",
    "broker",
    "network",
    "producer",
    "timing",
    "group",
    "event",
    "tubemq",
];
const TOPIC_KEYS: &[&str] = &["name", "partitions", "rate", "arrival", "skew"];
const CONSUMER_KEYS: &[&str] = &["processing", "commit", "client", "rebalance_listener", "config"];
const PROCESSING_KEYS: &[&str] = &["dist", "mean", "p99"];
const GROUP_KEYS: &[&str] = &["members", "static_membership", "client_ids"];

/// Reads and validates the scenario file at `path`.
pub fn load(path: &Path) -> Result<Scenario, Vec<ScenarioError>> {
    let whole_file = |message: String| ScenarioError {
        file: path.to_path_buf(),
        line: None,
        col: None,
        key: String::new(),
        message,
        allowed: None,
    };
    let bytes = crate::limits::read_capped(path).map_err(|m| vec![whole_file(m)])?;
    match String::from_utf8(bytes) {
        Ok(text) => parse_str(&text, path),
        Err(e) => Err(vec![whole_file(format!("cannot read the file: not UTF-8 text ({e})"))]),
    }
}

/// Validates scenario `text`; `path` names it in messages and becomes `Scenario::source`.
pub fn parse_str(text: &str, path: &Path) -> Result<Scenario, Vec<ScenarioError>> {
    let mut ctx = Ctx::new(path, Some(text));
    if too_many_event_tables(text) {
        let max = crate::limits::MAX_EVENTS;
        let message = format!("more than {max} [[event]] tables");
        ctx.error(None, "event", message, Some(format!("at most {max} events")));
        return Err(ctx.errors);
    }
    match tree::parse_text(text) {
        Ok(root) => build(&mut ctx, &root, path),
        Err((message, span)) => {
            let message = message.trim().replace('\n', "; ");
            ctx.error(span.as_ref(), "", format!("not valid TOML: {message}"), None);
            Err(ctx.errors)
        }
    }
}

/// Counts `[[event]]` headers before the TOML is parsed (a parse costs memory in proportion to
/// the entries): whether there are more than the limit.
fn too_many_event_tables(text: &str) -> bool {
    let max = crate::limits::MAX_EVENTS;
    let count = text
        .lines()
        .filter(|l| {
            l.trim_start().strip_prefix("[[").is_some_and(|r| r.trim_start().starts_with("event"))
        })
        .take(max + 1)
        .count();
    count > max
}

/// Validates an in-memory table (a sweep's base after its dotted overrides); messages carry
/// no line numbers.
pub fn from_table(table: toml::Table, path: &Path) -> Result<Scenario, Vec<ScenarioError>> {
    let root = tree::from_table(table);
    let mut ctx = Ctx::new(path, None);
    build(&mut ctx, &root, path)
}

/// The whole validation; `Err` holds every problem found.
fn build(ctx: &mut Ctx<'_>, root: &Node, path: &Path) -> Result<Scenario, Vec<ScenarioError>> {
    let mut section = Section::open(ctx, root, "").ok_or_else(|| ctx.errors.clone())?;
    let name = scenario_name(ctx, &mut section, path);
    let duration = run_duration(ctx, &mut section);
    let measure_from = measure_from(ctx, &mut section, duration);
    let seed = section.take("seed").and_then(|n| reader::int_in(ctx, n, "seed", 0, i64::MAX));
    let topics = topics(ctx, section.take("topic"));
    let consumer = consumer(ctx, section.take("consumer"));
    let broker = broker(ctx, section.take("broker"));
    let network = network(ctx, section.take("network"));
    let producer = producer(ctx, section.take("producer"));
    let timing = timing(ctx, section.take("timing"), consumer.config.heartbeat_interval);
    let group = group(ctx, &mut section, consumer.config.client_id.as_deref());
    let protocols = protocols(ctx, &mut section, group.static_membership);
    let events = parse_events(ctx, section.take("event"), &topics);
    // With an unusable member count, replaying events would only report phantom members.
    let group_ok = !ctx.errors.iter().any(|e| e.key.starts_with("group."));
    let names = group_ok.then(|| check_timeline(ctx, &events, group.members, duration, &topics));
    let tubemq = tubemq_spec(ctx, section.take("tubemq"), group.members, names.as_ref());
    section.finish(ctx, ROOT_KEYS);
    // Cross-property rules are reported with the other errors, each unless one of the
    // properties it compares was rejected (it would compare as its default and give a second,
    // misleading message).
    check_timeouts(ctx, root, &consumer.config, &broker);
    if !ctx.errors.is_empty() {
        // File order reads best; problems without a position (in-memory tables) keep theirs.
        ctx.errors.sort_by_key(|e| (e.line, e.col));
        return Err(std::mem::take(&mut ctx.errors));
    }
    Ok(Scenario {
        name,
        source: path.to_path_buf(),
        duration: duration.unwrap_or_default(),
        measure_from,
        seed: seed.map_or(1, |s| s as u64),
        protocols,
        topics,
        consumer,
        broker,
        network,
        producer,
        timing,
        group,
        events: events.into_iter().map(|p| p.event).collect(),
        tubemq,
    })
}

/// `name`, or the file stem; must be usable as a folder name (`results/<name>/`).
fn scenario_name(ctx: &mut Ctx<'_>, section: &mut Section<'_>, path: &Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let Some(node) = section.take("name") else {
        if stem.chars().count() > MAX_NAME_CHARS {
            let message = format!(
                "not set, and the file name's stem ({} characters) is too long to name the \
                 output folder",
                stem.chars().count()
            );
            ctx.error(None, "name", message, Some(name_allowed()));
        }
        return stem;
    };
    let Some(name) = reader::string(ctx, node, "name") else { return stem };
    let ok = !name.is_empty()
        && name != "."
        && name != ".."
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !ok {
        let allowed = "a non-empty folder name from A-Z a-z 0-9 . _ -";
        ctx.at(node, "name", format!("`{name}` cannot name the output folder"), Some(allowed));
    } else if name.chars().count() > MAX_NAME_CHARS {
        let message =
            format!("is {} characters long, too long for a folder name", name.chars().count());
        ctx.at(node, "name", message, Some(name_allowed().as_str()));
    }
    name.to_string()
}

/// What a `name` may be, for its messages.
fn name_allowed() -> String {
    format!("at most {MAX_NAME_CHARS} characters from A-Z a-z 0-9 . _ -")
}

fn run_duration(ctx: &mut Ctx<'_>, section: &mut Section<'_>) -> Option<SimTime> {
    let node =
        section.require(ctx, "duration", "how long the run lasts, e.g. duration = \"10m\"")?;
    reader::positive_duration(ctx, node, "duration")
}

/// `measure_from`: where the measurement window starts (default 0, the whole run); before the
/// end of the run, so the window is never empty.
fn measure_from(
    ctx: &mut Ctx<'_>,
    section: &mut Section<'_>,
    duration: Option<SimTime>,
) -> SimTime {
    let Some(node) = section.take("measure_from") else { return SimTime::ZERO };
    let Some(from) = reader::duration(ctx, node, "measure_from") else { return SimTime::ZERO };
    if let Some(end) = duration.filter(|end| from >= *end) {
        let message = format!("{from} is not before the end of the run (duration = {end})");
        let allowed = "a duration from \"0s\" up to, not including, `duration`";
        ctx.at(node, "measure_from", message, Some(allowed));
        return SimTime::ZERO;
    }
    from
}

/// `protocols`: non-empty, no duplicates; `[group] static_membership` applies to every Kafka
/// group protocol in it.
fn protocols(ctx: &mut Ctx<'_>, section: &mut Section<'_>, all_static: bool) -> Vec<ProtocolSpec> {
    let example =
        "a list such as protocols = [\"eager:range\", \"cooperative:cooperative-sticky\"]";
    let Some(node) = section.require(ctx, "protocols", example) else { return Vec::new() };
    let Some(items) = reader::array(ctx, node, "protocols") else { return Vec::new() };
    if items.is_empty() {
        ctx.at(node, "protocols", "is empty; list at least one protocol", Some(PROTOCOL_FORMS));
    }
    let mut specs: Vec<ProtocolSpec> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let key = format!("protocols[{index}]");
        let Some(text) = reader::string(ctx, item, &key) else { continue };
        match Scenario::parse_protocol(text) {
            Ok(mut spec) => {
                spec.static_membership |= all_static && supports_static(spec.protocol);
                if specs.contains(&spec) {
                    let message = format!("`{text}` repeats {spec}, listed before");
                    ctx.at(item, &key, message, Some("each protocol run once"));
                } else {
                    specs.push(spec);
                }
            }
            // An unknown protocol's message lists the allowed forms already.
            Err(message) if message.contains("allowed: ") => ctx.at(item, &key, message, None),
            Err(message) => ctx.at(item, &key, message, Some(PROTOCOL_FORMS)),
        }
    }
    specs
}

/// `[[topic]]`: at least one; unique names; partitions within the limit in total.
fn topics(ctx: &mut Ctx<'_>, node: Option<&Node>) -> Vec<TopicSpec> {
    let Some(node) = node else {
        ctx.error(
            None,
            "topic",
            "missing; add at least one [[topic]] with name, partitions and rate",
            None,
        );
        return Vec::new();
    };
    let Kind::Array(items) = &node.kind else {
        ctx.wrong_type(node, "topic", "an array of tables (write [[topic]], not [topic])");
        return Vec::new();
    };
    if items.is_empty() {
        ctx.at(node, "topic", "is empty; add at least one [[topic]]", None);
    }
    let mut specs: Vec<TopicSpec> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let Some(spec) = topic(ctx, item, index) else { continue };
        if specs.iter().any(|t| t.name == spec.name) {
            let key = format!("topic[{index}].name");
            let message = format!("topic `{}` is defined twice", spec.name);
            ctx.at(item.get("name").unwrap_or(item), &key, message, Some("unique topic names"));
            continue;
        }
        specs.push(spec);
    }
    let total: u64 = specs.iter().map(|t| u64::from(t.partitions)).sum();
    if total > u64::from(MAX_PARTITIONS) {
        let allowed = format!("at most {MAX_PARTITIONS} partitions in all");
        ctx.at(node, "topic", format!("{total} partitions in all is too many"), Some(&allowed));
    }
    specs
}

fn topic(ctx: &mut Ctx<'_>, node: &Node, index: usize) -> Option<TopicSpec> {
    let mut s = Section::open(ctx, node, &format!("topic[{index}]"))?;
    let name = s.require(ctx, "name", "the topic's name, e.g. name = \"orders\"");
    let name = name.and_then(|n| reader::string(ctx, n, &s.key("name")).map(str::to_string));
    if name.as_deref() == Some("") {
        ctx.at(node, &s.key("name"), "is empty", Some("a non-empty topic name"));
    }
    let partitions = s.require(ctx, "partitions", "the partition count, e.g. partitions = 12");
    let partitions =
        partitions.and_then(|n| reader::u32_in(ctx, n, &s.key("partitions"), 1, MAX_PARTITIONS));
    let rate = s.require(ctx, "rate", "records/s per partition, e.g. rate = 100.0");
    let rate = rate.and_then(|n| reader::non_negative(ctx, n, &s.key("rate")));
    let rate = rate.filter(|r| {
        let too_fast = *r > MAX_RATE_PER_S;
        if too_fast {
            let allowed = format!("at most {MAX_RATE_PER_S} records/s per partition");
            ctx.at(
                node.get("rate").unwrap_or(node),
                &s.key("rate"),
                format!("{r} is too fast"),
                Some(&allowed),
            );
        }
        !too_fast
    });
    let arrival = match s.take("arrival") {
        Some(n) => match reader::choice(ctx, n, &s.key("arrival"), &["constant", "poisson"])? {
            0 => Arrival::Constant,
            _ => Arrival::Poisson,
        },
        None => Arrival::Constant,
    };
    let skew = match s.take("skew") {
        Some(n) => reader::non_negative(ctx, n, &s.key("skew"))?,
        None => 0.0,
    };
    s.finish(ctx, TOPIC_KEYS);
    Some(TopicSpec { name: name?, partitions: partitions?, rate_per_s: rate?, arrival, skew })
}

/// `[consumer]` (optional: all defaults).
fn consumer(ctx: &mut Ctx<'_>, node: Option<&Node>) -> ConsumerSpec {
    let mut spec = ConsumerSpec {
        processing: Processing::Constant(SimTime::from_millis(1)),
        commit: CommitPolicy::Auto,
        client: Client::Java,
        rebalance_listener: true,
        config: consumer_config(ctx, None),
    };
    let Some(node) = node else { return spec };
    let Some(mut s) = Section::open(ctx, node, "consumer") else { return spec };
    if let Some(p) = s.take("processing").and_then(|n| processing(ctx, n)) {
        spec.processing = p;
    }
    let commits = ["auto", "sync-per-batch", "async-per-batch"];
    if let Some(i) =
        s.take("commit").and_then(|n| reader::choice(ctx, n, "consumer.commit", &commits))
    {
        spec.commit =
            [CommitPolicy::Auto, CommitPolicy::SyncPerBatch, CommitPolicy::AsyncPerBatch][i];
    }
    let clients = ["java", "librdkafka"];
    if let Some(i) =
        s.take("client").and_then(|n| reader::choice(ctx, n, "consumer.client", &clients))
    {
        spec.client = [Client::Java, Client::Librdkafka][i];
    }
    let listener = s.take("rebalance_listener");
    if let Some(b) = listener.and_then(|n| reader::boolean(ctx, n, "consumer.rebalance_listener")) {
        spec.rebalance_listener = b;
    }
    spec.config = consumer_config(ctx, s.take("config"));
    s.finish(ctx, CONSUMER_KEYS);
    spec
}

/// `processing`: a duration, or `{ dist = "lognormal", mean, p99 }` / `{ dist = "exponential",
/// mean }`.
fn processing(ctx: &mut Ctx<'_>, node: &Node) -> Option<Processing> {
    const KEY: &str = "consumer.processing";
    if let Kind::Str(_) = node.kind {
        return reader::duration(ctx, node, KEY).map(Processing::Constant);
    }
    let Kind::Table(_) = node.kind else {
        let expected = "a duration such as \"1ms\" or a table such as { dist = \"lognormal\", mean = \"1ms\", p99 = \"10ms\" }";
        ctx.wrong_type(node, KEY, expected);
        return None;
    };
    let mut s = Section::open(ctx, node, KEY)?;
    let dists = ["lognormal", "exponential"];
    let dist = s.require(ctx, "dist", "dist = \"lognormal\" or \"exponential\"");
    let dist = dist.and_then(|n| reader::choice(ctx, n, &s.key("dist"), &dists));
    let mean = s.require(ctx, "mean", "the mean per record, e.g. mean = \"1ms\"");
    let mean = mean.and_then(|n| reader::positive_duration(ctx, n, &s.key("mean")));
    let result = match dist? {
        0 => lognormal(ctx, &mut s, node, mean?),
        _ => mean.map(|mean| Processing::Exponential { mean }),
    };
    let allowed: &[&str] = if dist == Some(0) { PROCESSING_KEYS } else { &PROCESSING_KEYS[..2] };
    s.finish(ctx, allowed);
    result
}

fn lognormal(
    ctx: &mut Ctx<'_>,
    s: &mut Section<'_>,
    node: &Node,
    mean: SimTime,
) -> Option<Processing> {
    let p99 = s.require(ctx, "p99", "the 99th percentile, e.g. p99 = \"10ms\"")?;
    let p99 = reader::duration(ctx, p99, &s.key("p99"))?;
    if p99 <= mean {
        let message = format!("p99 ({p99}) must be above the mean ({mean}) for a lognormal");
        ctx.at(node, &s.key("p99"), message, Some("p99 > mean"));
        return None;
    }
    Some(Processing::Lognormal { mean, p99 })
}

/// `[broker]` holds only `config`.
fn broker(ctx: &mut Ctx<'_>, node: Option<&Node>) -> BrokerConfig {
    let Some(node) = node else { return broker_config(ctx, None) };
    let Some(mut s) = Section::open(ctx, node, "broker") else { return broker_config(ctx, None) };
    let config = broker_config(ctx, s.take("config"));
    s.finish(ctx, &["config"]);
    config
}

fn network(ctx: &mut Ctx<'_>, node: Option<&Node>) -> NetworkSpec {
    let mut spec = NetworkSpec::with_rtt(SimTime::from_millis(1));
    let Some(node) = node else { return spec };
    let Some(mut s) = Section::open(ctx, node, "network") else { return spec };
    if let Some(t) = s.take("rtt").and_then(|n| reader::duration(ctx, n, "network.rtt")) {
        spec = NetworkSpec::with_rtt(t);
    }
    if let Some(n) = s.take("rtt_p99") {
        if let Some(p99) = reader::duration(ctx, n, "network.rtt_p99") {
            let max = NetworkSpec::MAX_P99_OVER_MEDIAN;
            if p99 < spec.rtt || p99 > spec.rtt * max {
                let message = format!("{p99} is outside [rtt, {max} x rtt] (rtt = {})", spec.rtt);
                let allowed = format!("from rtt (no variation) to {max} x rtt");
                ctx.at(n, "network.rtt_p99", message, Some(&allowed));
            } else {
                spec.rtt_p99 = p99;
            }
        }
    }
    s.finish(ctx, &["rtt", "rtt_p99"]);
    spec
}

/// `[producer]`: `metadata_refresh` (default 5m, at least 1ms).
fn producer(ctx: &mut Ctx<'_>, node: Option<&Node>) -> ProducerSpec {
    let mut spec = ProducerSpec::default();
    let Some(node) = node else { return spec };
    let Some(mut s) = Section::open(ctx, node, "producer") else { return spec };
    if let Some(n) = s.take("metadata_refresh") {
        if let Some(t) = reader::duration(ctx, n, "producer.metadata_refresh") {
            if t < SimTime::from_millis(1) {
                let allowed = "a duration of at least 1ms (default 5m)";
                ctx.at(n, "producer.metadata_refresh", format!("{t} is too short"), Some(allowed));
            } else {
                spec.metadata_refresh = t;
            }
        }
    }
    s.finish(ctx, &["metadata_refresh"]);
    spec
}

/// `[timing]`: `exact`, `start_delay`, `start_spread`, `event_jitter`, `heartbeat_jitter`
/// (docs/timing.md).
fn timing(ctx: &mut Ctx<'_>, node: Option<&Node>, heartbeat_interval: SimTime) -> TimingSpec {
    let mut spec = TimingSpec::varied(heartbeat_interval);
    let Some(node) = node else { return spec };
    let Some(mut s) = Section::open(ctx, node, "timing") else { return spec };
    if let Some(b) = s.take("exact").and_then(|n| reader::boolean(ctx, n, "timing.exact")) {
        spec.exact = b;
    }
    let mut read = |key: &str, field: &mut SimTime| {
        let name = format!("timing.{key}");
        if let Some(t) = s.take(key).and_then(|n| reader::duration(ctx, n, &name)) {
            *field = t;
        }
    };
    read("start_delay", &mut spec.start_delay);
    read("start_spread", &mut spec.start_spread);
    read("event_jitter", &mut spec.event_jitter);
    read("heartbeat_jitter", &mut spec.heartbeat_jitter);
    s.finish(ctx, &["exact", "start_delay", "start_spread", "event_jitter", "heartbeat_jitter"]);
    if spec.exact {
        return TimingSpec::exact();
    }
    spec
}

/// `[group]`: `members` is required. `client_id` is `[consumer.config] "client.id"`.
fn group(ctx: &mut Ctx<'_>, root: &mut Section<'_>, client_id: Option<&str>) -> GroupSpec {
    let mut spec =
        GroupSpec { members: 0, static_membership: false, client_ids: ClientIds::Default };
    let Some(node) = root.require(ctx, "group", "a [group] table with members = N") else {
        return spec;
    };
    let Some(mut s) = Section::open(ctx, node, "group") else { return spec };
    let members = s.require(ctx, "members", "the initial member count, e.g. members = 3");
    if let Some(m) = members.and_then(|n| reader::u32_in(ctx, n, "group.members", 0, MAX_MEMBERS)) {
        spec.members = m;
    }
    if let Some(b) =
        s.take("static_membership").and_then(|n| reader::boolean(ctx, n, "group.static_membership"))
    {
        spec.static_membership = b;
    }
    if let Some(node) = s.take("client_ids") {
        client_ids(ctx, node, client_id, &mut spec);
    }
    s.finish(ctx, GROUP_KEYS);
    spec
}

/// `[group] client_ids`: one of [`ClientIds::NAMES`]. `"member-name"` gives each member its
/// own client id, which a `client.id` shared by every member contradicts: rejected.
fn client_ids(ctx: &mut Ctx<'_>, node: &Node, client_id: Option<&str>, spec: &mut GroupSpec) {
    let Some(i) = reader::choice(ctx, node, "group.client_ids", &ClientIds::NAMES) else {
        return;
    };
    spec.client_ids = [ClientIds::Default, ClientIds::MemberName][i];
    if let (ClientIds::MemberName, Some(id)) = (spec.client_ids, client_id) {
        let message = format!(
            "\"member-name\" gives each member its name as client id, but consumer.config.\"client.id\" = {id:?} gives every member the same one"
        );
        let allowed = "\"default\" (every member has client.id's value), or leave client.id out";
        ctx.at(node, "group.client_ids", message, Some(allowed));
    }
}

/// Cross-property rules: heartbeat below session; session inside the broker's bounds; the
/// KIP-848 broker heartbeat below its session timeout.
/// Whether a rule comparing `properties` (`consumer.session.timeout.ms`, ...) must be skipped:
/// one of them was rejected, or an unknown property of the same table may be a misspelling
/// of one of them (then the rule would compare a default the user did not mean).
fn depends_on_rejected(ctx: &Ctx<'_>, properties: &[(&str, &str)]) -> bool {
    ctx.errors.iter().any(|e| {
        properties.iter().any(|(table, name)| {
            let prefix = format!("{table}.config.");
            e.key == format!("{prefix}\"{name}\"")
                || (e.key.starts_with(&prefix) && e.message.starts_with("unknown property"))
        })
    })
}

fn check_timeouts(
    ctx: &mut Ctx<'_>,
    root: &Node,
    consumer: &ConsumerConfig,
    broker: &BrokerConfig,
) {
    let at = property_node(root, "consumer", "session.timeout.ms").unwrap_or(root);
    let (session, heartbeat) =
        (consumer.session_timeout.as_millis(), consumer.heartbeat_interval.as_millis());
    let session_and =
        |other: (&'static str, &'static str)| [("consumer", "session.timeout.ms"), other];
    if heartbeat >= session
        && !depends_on_rejected(ctx, &session_and(("consumer", "heartbeat.interval.ms")))
    {
        let node = property_node(root, "consumer", "heartbeat.interval.ms").unwrap_or(at);
        let key = "consumer.config.\"heartbeat.interval.ms\"";
        let message = format!("{heartbeat} is not below session.timeout.ms ({session})");
        let allowed =
            format!("below session.timeout.ms, ideally at most {} (a third)", session / 3);
        ctx.at(node, key, message, Some(&allowed));
    }
    let (min, max) = (
        broker.group_min_session_timeout.as_millis(),
        broker.group_max_session_timeout.as_millis(),
    );
    let bounds = [
        ("consumer", "session.timeout.ms"),
        ("broker", "group.min.session.timeout.ms"),
        ("broker", "group.max.session.timeout.ms"),
    ];
    if (session < min || session > max) && !depends_on_rejected(ctx, &bounds) {
        let key = "consumer.config.\"session.timeout.ms\"";
        let message = format!(
            "{session} is outside the broker's [group.min.session.timeout.ms, group.max.session.timeout.ms] = [{min}, {max}]; a classic JoinGroup would fail with INVALID_SESSION_TIMEOUT"
        );
        ctx.at(at, key, message, Some(&format!("{min} to {max}, or change the broker bounds")));
    }
    let (c_session, c_heartbeat) = (
        broker.group_consumer_session_timeout.as_millis(),
        broker.group_consumer_heartbeat_interval.as_millis(),
    );
    let kip848 = [
        ("broker", "group.consumer.session.timeout.ms"),
        ("broker", "group.consumer.heartbeat.interval.ms"),
    ];
    if c_heartbeat >= c_session && !depends_on_rejected(ctx, &kip848) {
        let node =
            property_node(root, "broker", "group.consumer.heartbeat.interval.ms").unwrap_or(root);
        let key = "broker.config.\"group.consumer.heartbeat.interval.ms\"";
        let message =
            format!("{c_heartbeat} is not below group.consumer.session.timeout.ms ({c_session})");
        ctx.at(node, key, message, Some("below group.consumer.session.timeout.ms"));
    }
}

/// The node of `[<table>.config] "<name>"`, for positions in cross-property messages.
fn property_node<'n>(root: &'n Node, table: &str, name: &str) -> Option<&'n Node> {
    root.get(table)?.get("config")?.get(name)
}
