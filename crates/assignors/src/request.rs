//! The `assign` command's JSON (DESIGN section 8): parse a request into a [`GroupInput`] with
//! messages that name the offending key and the allowed values, and render an assignment.
//!
//! Input keys: `assignor`, `topics` (name -> partition count), `members` (each: `id`, `topics`,
//! optional `owned` `[[topic, partition], ...]`, `generation` (default -1),
//! `group_instance_id`, `node_id`), plus two optional extensions for TubeMQ `modulo`:
//! `source_count` (client-side balance; without it the server-side balance runs) and `seed`
//! (default 0; seeds the stream the server-side balance draws its random placements from),
//! and two for the KIP-848 server-side assignors: `topic_ids` (topic name -> Kafka topic id,
//! for every topic; `uniform` visits topics in the order of a Java `HashSet` of their ids) and
//! `member_order` (`"broker"`, the default: a Java `HashMap` of member ids, as the broker
//! iterates them; `"given"`: file order).
//! Unknown keys are rejected; a topic a member names that is not in `topics` is skipped with a
//! [`SkippedTopic`] (Kafka skips topics without metadata). Output: one JSON object, keys in member-id order, each value the
//! member's `[topic, partition]` pairs sorted by topic then partition.

use crate::{
    AssignorName, GroupAssignment, GroupInput, Member, MemberOrder, Topic, TopicId, Tp,
    ASSIGN_COMMAND_NAMES,
};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// At most this many partitions over all topics (the scenario limit): an assignment holds one
/// entry per partition, so `{"t1": 4294967295}` would ask for tens of GB.
pub const MAX_PARTITIONS: u64 = 10_000_000;
/// At most this many members (the scenario limit).
pub const MAX_MEMBERS: usize = 100_000;

/// Extra spellings `assign` accepts: the command line's `protocol:assignor` form for KIP-848.
pub const ASSIGNOR_ALIASES: &[(&str, AssignorName)] =
    &[("consumer:uniform", AssignorName::Uniform), ("consumer:range", AssignorName::ConsumerRange)];

/// A parsed `assign` request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssignRequest {
    /// The assignor to run.
    pub assignor: AssignorName,
    /// Topics (sorted by name) and members (in file order).
    pub input: GroupInput,
    /// Seed of the random stream (TubeMQ server-side placement only).
    pub seed: u64,
    /// Topics a member subscribes to, or claims partitions of, that are not in `"topics"`:
    /// skipped as Kafka skips a topic without metadata (`RangeAssignorTest`
    /// `testOneConsumerNonexistentTopic`; `AbstractStickyAssignor.allSubscriptionsEqual`
    /// ignores owned partitions of such topics). One entry per occurrence, in file order.
    pub skipped: Vec<SkippedTopic>,
}

/// A topic named in a member's `topics` or `owned` that has no metadata (is not in
/// `"topics"`): the assignors skip it, as Kafka's do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedTopic {
    /// Where: e.g. `members[1].topics[0]`.
    pub key: String,
    /// The topic name.
    pub topic: String,
}

impl fmt::Display for SkippedTopic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: topic `{}` is not in \"topics\" (no metadata); skipped, as Kafka skips it",
            self.key, self.topic
        )
    }
}

/// What is wrong with a request: the key path (e.g. `members[1].topics[0]`) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestError {
    /// Where: a key path into the JSON, or `(json)` for syntax errors.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for RequestError {}

fn err<T>(key: impl Into<String>, message: impl Into<String>) -> Result<T, RequestError> {
    Err(RequestError { key: key.into(), message: message.into() })
}

/// Parses an assignor name: [`ASSIGN_COMMAND_NAMES`] or an [`ASSIGNOR_ALIASES`] spelling.
pub fn parse_assignor(name: &str) -> Result<AssignorName, RequestError> {
    if let Ok(a) = name.parse::<AssignorName>() {
        return Ok(a);
    }
    if let Some((_, a)) = ASSIGNOR_ALIASES.iter().find(|(alias, _)| *alias == name) {
        return Ok(*a);
    }
    let mut allowed: Vec<&str> = ASSIGN_COMMAND_NAMES.to_vec();
    allowed.extend(ASSIGNOR_ALIASES.iter().map(|(alias, _)| *alias));
    err("assignor", format!("unknown assignor `{name}`; allowed: {}", allowed.join(", ")))
}

/// Parses and validates a request.
pub fn parse_request(text: &str) -> Result<AssignRequest, RequestError> {
    let invalid = |e: serde_json::Error| RequestError {
        key: "(json)".into(),
        message: format!("invalid JSON: {e}"),
    };
    // serde_json's Value keeps the last of two equal keys without a word: refuse them first.
    serde_json::from_str::<NoDuplicateKeys>(text).map_err(invalid)?;
    let root: Value = serde_json::from_str(text).map_err(invalid)?;
    let Value::Object(root) = root else {
        return err("(root)", "expected a JSON object with keys assignor, topics, members");
    };
    check_keys(
        &root,
        "",
        &["assignor", "topics", "members", "source_count", "seed", "topic_ids", "member_order"],
    )?;
    let assignor = match root.get("assignor") {
        Some(Value::String(s)) => parse_assignor(s)?,
        Some(_) => return err("assignor", "expected a string"),
        None => {
            return err(
                "assignor",
                "missing; allowed: ".to_string() + &ASSIGN_COMMAND_NAMES.join(", "),
            )
        }
    };
    let topics = parse_topics(root.get("topics"))?;
    let source_count = optional_u32(root.get("source_count"), "source_count")?;
    if source_count == Some(0) {
        return err("source_count", "must be at least 1");
    }
    let seed = match root.get("seed") {
        None => 0,
        Some(v) => v.as_u64().map_or_else(|| err("seed", "expected a non-negative integer"), Ok)?,
    };
    let topic_ids = parse_topic_ids(root.get("topic_ids"), &topics)?;
    let member_order = parse_member_order(root.get("member_order"))?;
    let mut skipped = Vec::new();
    let members = parse_members(root.get("members"), &topics, source_count, &mut skipped)?;
    Ok(AssignRequest {
        assignor,
        input: GroupInput { topics, members, source_count, topic_ids, member_order },
        seed,
        skipped,
    })
}

/// `topic_ids`: an object from every topic of `topics` to its Kafka topic id
/// (`Uuid.toString()`, 22 characters of URL-safe base64), or absent (no ids: the uniform
/// assignor then visits topics by name).
fn parse_topic_ids(value: Option<&Value>, topics: &[Topic]) -> Result<Vec<TopicId>, RequestError> {
    let Some(value) = value else { return Ok(Vec::new()) };
    let Value::Object(ids) = value else {
        return err("topic_ids", "expected an object: topic name -> Kafka topic id");
    };
    for name in ids.keys() {
        if !topics.iter().any(|t| &t.name == name) {
            return err(format!("topic_ids.{name}"), "not a topic of \"topics\"");
        }
    }
    let mut out = Vec::with_capacity(topics.len());
    for topic in topics {
        let key = format!("topic_ids.{}", topic.name);
        let id = match ids.get(&topic.name) {
            Some(Value::String(text)) => TopicId::parse(text).map_or_else(
                || err(&key, "expected a Kafka topic id: 22 characters of URL-safe base64 (e.g. T1-A4s3VTwiI5CTbEp6POw)"),
                Ok,
            )?,
            Some(_) => return err(key, "expected a string (a Kafka topic id)"),
            None => return err(key, "missing: give every topic an id, or none"),
        };
        out.push(id);
    }
    Ok(out)
}

/// `member_order`: `"broker"` (default: a Java `HashMap` of member ids, as the broker
/// iterates them) or `"given"` (file order, as Kafka's assignor tests list a `TreeMap`).
fn parse_member_order(value: Option<&Value>) -> Result<MemberOrder, RequestError> {
    match value {
        None => Ok(MemberOrder::JavaHashMap),
        Some(Value::String(s)) if s == "broker" => Ok(MemberOrder::JavaHashMap),
        Some(Value::String(s)) if s == "given" => Ok(MemberOrder::Given),
        Some(_) => err("member_order", "expected \"broker\" or \"given\""),
    }
}

/// Rejects keys outside `allowed`.
fn check_keys(
    obj: &Map<String, Value>,
    prefix: &str,
    allowed: &[&str],
) -> Result<(), RequestError> {
    for key in obj.keys() {
        if !allowed.contains(&key.as_str()) {
            return err(
                format!("{prefix}{key}"),
                format!("unknown key; allowed: {}", allowed.join(", ")),
            );
        }
    }
    Ok(())
}

/// An optional unsigned 32-bit integer.
fn optional_u32(v: Option<&Value>, key: &str) -> Result<Option<u32>, RequestError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
            Some(n) => Ok(Some(n)),
            None => err(key, format!("expected an integer from 0 to {}", u32::MAX)),
        },
    }
}

/// `"topics": {"name": partitions, ...}`, sorted by name.
fn parse_topics(v: Option<&Value>) -> Result<Vec<Topic>, RequestError> {
    let Some(Value::Object(obj)) = v else {
        return err(
            "topics",
            "expected an object of topic name -> partition count, e.g. {\"t1\": 3}",
        );
    };
    let mut sorted = BTreeMap::new();
    let mut total: u64 = 0;
    for (name, count) in obj {
        if name.is_empty() {
            return err("topics", "a topic name is empty");
        }
        let key = format!("topics.{name}");
        let Some(partitions) = count.as_u64().and_then(|n| u32::try_from(n).ok()) else {
            return err(key, format!("{count} is not a partition count: an integer from 0"));
        };
        total += u64::from(partitions);
        if total > MAX_PARTITIONS {
            let msg = format!("brings the partitions to {total}: at most {MAX_PARTITIONS} in all");
            return err(key, msg);
        }
        sorted.insert(name.clone(), partitions);
    }
    Ok(sorted.into_iter().map(|(name, partitions)| Topic { name, partitions }).collect())
}

/// `"members": [...]`, with unique ids.
fn parse_members(
    v: Option<&Value>,
    topics: &[Topic],
    source_count: Option<u32>,
    skipped: &mut Vec<SkippedTopic>,
) -> Result<Vec<Member>, RequestError> {
    let Some(Value::Array(items)) = v else {
        return err(
            "members",
            "expected an array of members, e.g. [{\"id\": \"c1\", \"topics\": [\"t1\"]}]",
        );
    };
    if items.len() > MAX_MEMBERS {
        return err("members", format!("{} members: at most {MAX_MEMBERS}", items.len()));
    }
    let mut members: Vec<Member> = Vec::with_capacity(items.len());
    let mut ids = BTreeSet::new();
    let mut node_ids = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let member = parse_member(item, &format!("members[{i}]"), topics, source_count, skipped)?;
        if !ids.insert(member.id.clone()) {
            return err(format!("members[{i}].id"), format!("duplicate member id `{}`", member.id));
        }
        if let Some(node) = member.node_id {
            if let Some(first) = node_ids.insert(node, i) {
                let msg = format!("node_id {node} is also members[{first}]'s: one member per node");
                return err(format!("members[{i}].node_id"), msg);
            }
        } else if let Some(sc) = source_count {
            let msg = format!(
                "missing: with source_count every member needs a node_id from 0 to {}",
                sc - 1
            );
            return err(format!("members[{i}].node_id"), msg);
        }
        members.push(member);
    }
    Ok(members)
}

/// One member object.
fn parse_member(
    v: &Value,
    at: &str,
    topics: &[Topic],
    source_count: Option<u32>,
    skipped: &mut Vec<SkippedTopic>,
) -> Result<Member, RequestError> {
    let Value::Object(obj) = v else {
        return err(at, "expected an object with keys id, topics (and optionally owned, generation, group_instance_id, node_id)");
    };
    let allowed = ["id", "topics", "owned", "generation", "group_instance_id", "node_id"];
    check_keys(obj, &format!("{at}."), &allowed)?;
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return err(format!("{at}.id"), "expected a non-empty string"),
    };
    let group_instance_id = match obj.get("group_instance_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return err(format!("{at}.group_instance_id"), "expected a string"),
    };
    let generation = match obj.get("generation") {
        None => -1,
        Some(v) => v.as_i64().and_then(|g| i32::try_from(g).ok()).map_or_else(
            || err(format!("{at}.generation"), "expected an integer (-1 = unknown)"),
            Ok,
        )?,
    };
    let node_id = optional_u32(obj.get("node_id"), &format!("{at}.node_id"))?;
    if let (Some(n), Some(sc)) = (node_id, source_count) {
        if n >= sc {
            return err(
                format!("{at}.node_id"),
                format!("must be below source_count ({sc}): 0..={}", sc - 1),
            );
        }
    }
    Ok(Member {
        id,
        group_instance_id,
        topics: parse_member_topics(obj.get("topics"), at, topics, skipped)?,
        owned: parse_owned(obj.get("owned"), at, topics, skipped)?,
        generation,
        node_id,
    })
}

/// The index of a topic name; `None` (recorded in `skipped`) for a topic not in `"topics"`.
fn topic_index(
    name: &str,
    key: &str,
    topics: &[Topic],
    skipped: &mut Vec<SkippedTopic>,
) -> Option<u32> {
    let found = topics.binary_search_by(|t| t.name.as_str().cmp(name)).ok();
    if found.is_none() {
        skipped.push(SkippedTopic { key: key.to_string(), topic: name.to_string() });
    }
    found.map(|i| i as u32)
}

/// A member's `"topics": ["t1", ...]`, as sorted, deduplicated indices.
fn parse_member_topics(
    v: Option<&Value>,
    at: &str,
    topics: &[Topic],
    skipped: &mut Vec<SkippedTopic>,
) -> Result<Vec<u32>, RequestError> {
    let Some(Value::Array(items)) = v else {
        return err(format!("{at}.topics"), "expected an array of topic names");
    };
    let mut out = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let key = format!("{at}.topics[{j}]");
        let Value::String(name) = item else {
            return err(key, "expected a topic name (string)");
        };
        out.extend(topic_index(name, &key, topics, skipped));
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// A member's `"owned": [["t1", 0], ...]`, sorted and deduplicated.
fn parse_owned(
    v: Option<&Value>,
    at: &str,
    topics: &[Topic],
    skipped: &mut Vec<SkippedTopic>,
) -> Result<Vec<Tp>, RequestError> {
    let items = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return err(format!("{at}.owned"), "expected an array of [topic, partition] pairs")
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let key = format!("{at}.owned[{j}]");
        let pair = match item {
            Value::Array(pair) if pair.len() == 2 => pair,
            _ => return err(key, "expected a [topic, partition] pair, e.g. [\"t1\", 0]"),
        };
        let Value::String(name) = &pair[0] else {
            return err(key, "the first element must be a topic name");
        };
        if pair[1].as_u64().is_none() {
            return err(key, "the second element must be a partition number (integer)");
        }
        let Some(topic) = topic_index(name, &key, topics, skipped) else { continue };
        let count = topics[topic as usize].partitions;
        let partition = match pair[1].as_u64().and_then(|p| u32::try_from(p).ok()) {
            Some(p) if p < count => p,
            _ => {
                return err(
                    key,
                    format!(
                        "partition of `{name}` must be an integer from 0 to {} (it has {count})",
                        count.saturating_sub(1)
                    ),
                )
            }
        };
        out.push(Tp { topic, partition });
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Renders an assignment as `{"c1": [["t1", 0], ["t2", 0]], "c2": []}` (plus no newline):
/// members in member-id order (byte order), each list sorted by topic, then partition.
pub fn render_assignment(input: &GroupInput, assignment: &GroupAssignment) -> String {
    let mut order: Vec<usize> = (0..input.members.len()).collect();
    order.sort_by(|&a, &b| input.members[a].id.cmp(&input.members[b].id));
    let entries: Vec<String> = order
        .iter()
        .map(|&m| {
            let mut list = assignment.partitions.get(m).cloned().unwrap_or_default();
            list.sort_unstable();
            let pairs: Vec<String> = list
                .iter()
                .map(|tp| {
                    format!(
                        "[{}, {}]",
                        json_string(&input.topics[tp.topic as usize].name),
                        tp.partition
                    )
                })
                .collect();
            format!("{}: [{}]", json_string(&input.members[m].id), pairs.join(", "))
        })
        .collect();
    format!("{{{}}}", entries.join(", "))
}

/// A JSON string literal.
fn json_string(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// Any JSON value, refused when an object has the same key twice (serde_json's `Value` keeps
/// the last one silently).
struct NoDuplicateKeys;

impl<'de> serde::Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicateKeys)
    }
}

impl<'de> serde::de::Visitor<'de> for NoDuplicateKeys {
    type Value = NoDuplicateKeys;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(NoDuplicateKeys)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut keys = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!("duplicate key `{key}`")));
            }
            map.next_value::<NoDuplicateKeys>()?;
        }
        Ok(NoDuplicateKeys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"{"assignor": "range",
 "topics": {"t1": 3, "t2": 2},
 "members": [{"id": "c1", "topics": ["t1", "t2"], "owned": [["t1", 0]], "generation": 1},
             {"id": "c2", "topics": ["t1"]}]}"#;

    #[test]
    fn reads_topic_ids_and_member_order_and_names_what_is_wrong() {
        let with = |extra: &str| EXAMPLE.replacen('{', &format!("{{{extra},"), 1);
        let req = parse_request(&with(
            r#""topic_ids": {"t2": "T2-B4s3VTwiI5YHbPp6YUe", "t1": "T1-A4s3VTwiI5CTbEp6POw"}, "member_order": "given""#,
        ))
        .unwrap();
        let ids: Vec<i32> = req.input.topic_ids.iter().map(|id| id.java_hash()).collect();
        assert_eq!(ids, vec![418407434, 885118816], "in topic (name) order");
        assert_eq!(req.input.member_order, MemberOrder::Given);
        let plain = parse_request(EXAMPLE).unwrap();
        assert!(plain.input.topic_ids.is_empty());
        assert_eq!(plain.input.member_order, MemberOrder::JavaHashMap);
        let key_of = |extra: &str| parse_request(&with(extra)).unwrap_err().key;
        assert_eq!(key_of(r#""topic_ids": {"t1": "T1-A4s3VTwiI5CTbEp6POw"}"#), "topic_ids.t2");
        assert_eq!(
            key_of(r#""topic_ids": {"t1": "short", "t2": "T2-B4s3VTwiI5YHbPp6YUe"}"#),
            "topic_ids.t1"
        );
        assert_eq!(key_of(r#""topic_ids": {"t3": "T1-A4s3VTwiI5CTbEp6POw"}"#), "topic_ids.t3");
        assert_eq!(key_of(r#""member_order": "sorted""#), "member_order");
    }

    #[test]
    fn parses_the_design_example() {
        let req = parse_request(EXAMPLE).unwrap();
        assert_eq!(req.assignor, AssignorName::Range);
        assert_eq!(req.input.topics[1], Topic { name: "t2".into(), partitions: 2 });
        assert_eq!(req.input.members[0].topics, vec![0, 1]);
        assert_eq!(req.input.members[0].owned, vec![Tp { topic: 0, partition: 0 }]);
        assert_eq!(req.input.members[0].generation, 1);
        assert_eq!(req.input.members[1].generation, -1);
    }

    #[test]
    fn skips_a_topic_without_metadata_and_names_its_key() {
        let text = EXAMPLE
            .replace(r#"{"id": "c2", "topics": ["t1"]}"#, r#"{"id": "c2", "topics": ["t9", "t1"]}"#)
            .replace(r#"[["t1", 0]]"#, r#"[["t1", 0], ["gone", 3]]"#);
        let req = parse_request(&text).unwrap();
        assert_eq!(req.input.members[1].topics, vec![0]);
        assert_eq!(req.input.members[0].owned, vec![Tp { topic: 0, partition: 0 }]);
        let keys: Vec<(&str, &str)> =
            req.skipped.iter().map(|s| (s.key.as_str(), s.topic.as_str())).collect();
        assert_eq!(keys, vec![("members[0].owned[1]", "gone"), ("members[1].topics[0]", "t9")]);
        assert!(req.skipped[1].to_string().contains("`t9`"), "{}", req.skipped[1]);
    }

    #[test]
    fn rejects_out_of_range_owned_partition_and_unknown_keys() {
        let text = EXAMPLE.replace(r#"[["t1", 0]]"#, r#"[["t2", 2]]"#);
        assert_eq!(parse_request(&text).unwrap_err().key, "members[0].owned[0]");
        let text = EXAMPLE.replace(r#""generation": 1"#, r#""generaton": 1"#);
        assert_eq!(parse_request(&text).unwrap_err().key, "members[0].generaton");
    }

    #[test]
    fn accepts_kip848_aliases() {
        assert_eq!(parse_assignor("consumer:range").unwrap(), AssignorName::ConsumerRange);
        assert_eq!(parse_assignor("consumer-range").unwrap(), AssignorName::ConsumerRange);
        assert!(parse_assignor("rang").unwrap_err().message.contains("roundrobin"));
    }

    #[test]
    fn renders_in_member_id_order() {
        let req = parse_request(EXAMPLE).unwrap();
        let a = GroupAssignment {
            partitions: vec![
                vec![Tp { topic: 1, partition: 0 }, Tp { topic: 0, partition: 0 }],
                vec![],
            ],
        };
        assert_eq!(
            render_assignment(&req.input, &a),
            r#"{"c1": [["t1", 0], ["t2", 0]], "c2": []}"#
        );
    }
}
