//! Kafka's (and librdkafka's) own assignor tests, transcribed as data in `tests/kafka_cases/`
//! (one JSON file per test class, each case naming its source method), run through the
//! `assign` command's input path ([`parse_request`]) and checked as Kafka checks them: an
//! exact answer where Kafka asserts one, else the same properties (validity and balance as
//! `AbstractStickyAssignorTest.verifyValidityAndBalance`, `isFullyBalanced`, stickiness).
//!
//! A case is a list of steps over a live group, as Kafka's tests mutate their `subscriptions`
//! map: `topics` replaces the topic metadata, `put` adds or replaces members, `remove` drops
//! them. A member's `owned` is a list of `"topic-N"` names or a reference `"sK.member"` to
//! what step K assigned that member (`"sKf.member"`: after that step's checks, which for
//! cooperative-sticky include the follow-up rebalances). Checks:
//! - `expect` (exact partitions per member, first round), `expect_after` (after the checks:
//!   for cooperative-sticky the converged assignment, as Kafka's test reads its mutated map),
//!   `sizes` (exact counts per member), `per_topic_counts` (every member holds that many of
//!   the topic), `transferring` (Kafka's `partitionsTransferringOwnership`, partition -> new
//!   owner: what the cooperative assignor withholds from the eager sticky answer);
//! - `valid_and_balanced`: for cooperative-sticky, first the client's two-round protocol as
//!   `CooperativeStickyAssignorTest.verifyValidityAndBalance` runs it (no partition revoked
//!   and assigned in the same round; while something is revoked, every member reports its new
//!   assignment as owned, generation 1, and the group rebalances again, at most 4 times);
//!   then Kafka's validity and balance check on the result;
//! - `size_range` `[lo, hi]` (every member's count), `distinct` (no partition given twice),
//!   `fully_balanced` (max - min <= 1), `all_assigned` (every subscribed partition assigned),
//!   `no_swaps` (no topic with partitions moving both ways between two members: what
//!   `isSticky()` rejects);
//! - `contains` `[A, B]` (A holds all of B), `disjoint`, `not_disjoint`, where A and B are
//!   references as above or literal lists, plus `"final.member"` for this step's result.
//!
//! A case may instead carry `generate` (Kafka's large and random-subscription tests): see
//! `kafka_generated/mod.rs`; each group it generates runs the same way.
//!
//! The test prints the count of cases per Kafka test class and per assignor, then fails
//! listing every failing case. A case may carry `known_difference` (why this project gives
//! another answer on purpose): it must then fail, and is listed, not counted as passing.

use assignors::assign;
use assignors::request::parse_request;
use serde_json::{json, Map, Value};
use sim_core::RngStreams;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod kafka_generated;

type Assignment = BTreeMap<String, BTreeSet<String>>;

/// One member of the live group.
#[derive(Clone, Debug)]
struct MemberSpec {
    topics: Vec<String>,
    owned: Vec<String>,
    generation: i32,
    group_instance_id: Option<String>,
}

/// The live group of a case: Kafka's `partitionsPerTopic` and `subscriptions`.
#[derive(Default)]
struct Live {
    topics: BTreeMap<String, u64>,
    members: BTreeMap<String, MemberSpec>,
    /// "sK" and "sKf" results of earlier steps.
    results: BTreeMap<String, Assignment>,
}

fn main_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kafka_cases")
}

#[test]
fn every_kafka_assignor_test_case() {
    let mut files: Vec<_> = std::fs::read_dir(main_dir())
        .expect("tests/kafka_cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut per_class: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut per_assignor: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut differences = Vec::new();
    let mut not_transcribed = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read case file");
        let doc: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: invalid JSON: {e}", file.display()));
        let class = doc["class"].as_str().expect("class").to_string();
        for why in doc.get("not_transcribed").and_then(Value::as_array).into_iter().flatten() {
            not_transcribed.push(format!("{class}: {}", why.as_str().unwrap_or_default()));
        }
        for case in doc["cases"].as_array().expect("cases") {
            let method = case["method"].as_str().expect("method");
            let label = match case.get("params").and_then(Value::as_str) {
                Some(p) => format!("{class}#{method}[{p}]"),
                None => format!("{class}#{method}"),
            };
            if let Some(spec) = case.get("generate") {
                let (_, about) = kafka_generated::expand(spec).expect("generated case");
                println!("generated: {label}: {about}");
            }
            let mut case_ok = true;
            let known = case.get("known_difference").and_then(Value::as_str);
            for assignor in case["assignors"].as_array().expect("assignors") {
                let assignor = assignor.as_str().expect("assignor name");
                let outcome = run_case(assignor, case);
                let entry = per_assignor.entry(assignor.to_string()).or_default();
                entry.0 += 1;
                match (outcome, known) {
                    (Ok(()), None) => entry.1 += 1,
                    (Err(e), Some(why)) => {
                        case_ok = false;
                        differences.push(format!("{label} ({assignor}): {e}\n    because: {why}"));
                    }
                    (Ok(()), Some(_)) => {
                        case_ok = false;
                        failures.push(format!(
                            "{label} ({assignor}): passes; drop its known_difference"
                        ));
                    }
                    (Err(e), None) => {
                        case_ok = false;
                        failures.push(format!("{label} ({assignor}): {e}"));
                    }
                }
            }
            let entry = per_class.entry(class.clone()).or_default();
            entry.0 += 1;
            entry.1 += usize::from(case_ok);
        }
    }
    println!("Kafka assignor test cases, per test class (cases passing / cases):");
    for (class, (total, passed)) in &per_class {
        println!("  {class:<48} {passed:>4} / {total}");
    }
    println!("per assignor (case runs passing / runs):");
    for (assignor, (total, passed)) in &per_assignor {
        println!("  {assignor:<48} {passed:>4} / {total}");
    }
    let cases: usize = per_class.values().map(|c| c.0).sum();
    let runs: usize = per_assignor.values().map(|c| c.0).sum();
    println!(
        "total: {cases} cases, {runs} runs, {} failing, {} known differences",
        failures.len(),
        differences.len()
    );
    for d in &differences {
        println!("known difference: {d}");
    }
    for n in &not_transcribed {
        println!("not transcribed: {n}");
    }
    assert!(cases > 0, "no cases found in {}", main_dir().display());
    assert!(failures.is_empty(), "failing cases:\n{}", failures.join("\n"));
}

/// Runs every step of `case` with `assignor`: its `steps`, or each step list its `generate`
/// expands to (on a fresh group each, as Kafka's test runs each on a fresh assignor).
fn run_case(assignor: &str, case: &Value) -> Result<(), String> {
    let Some(spec) = case.get("generate") else {
        return run_steps(assignor, case["steps"].as_array().ok_or("no steps")?);
    };
    let (runs, _) = kafka_generated::expand(spec)?;
    for (k, steps) in runs.iter().enumerate() {
        run_steps(assignor, steps).map_err(|e| format!("generated group {k}: {e}"))?;
    }
    Ok(())
}

/// Runs `steps` in order on one live group.
fn run_steps(assignor: &str, steps: &[Value]) -> Result<(), String> {
    let mut live = Live::default();
    for (k, step) in steps.iter().enumerate() {
        let n = k + 1;
        apply_changes(&mut live, step).map_err(|e| format!("step {n}: {e}"))?;
        let first = run_assignor(assignor, &live).map_err(|e| format!("step {n}: {e}"))?;
        live.results.insert(format!("s{n}"), first.clone());
        let last =
            check_step(assignor, &mut live, step, first).map_err(|e| format!("step {n}: {e}"))?;
        live.results.insert(format!("s{n}f"), last);
    }
    Ok(())
}

/// `topics`, `remove` and `put` of one step.
fn apply_changes(live: &mut Live, step: &Value) -> Result<(), String> {
    if let Some(Value::Object(topics)) = step.get("topics") {
        live.topics = topics.iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0))).collect();
    }
    for id in step.get("remove").and_then(Value::as_array).into_iter().flatten() {
        live.members.remove(id.as_str().ok_or("remove: expected member ids")?);
    }
    for m in step.get("put").and_then(Value::as_array).into_iter().flatten() {
        let id = m["id"].as_str().ok_or("put: member without id")?.to_string();
        let topics = strings(&m["topics"])?;
        let owned = match m.get("owned") {
            None => Vec::new(),
            Some(v) => resolve(live, v, None)?.into_iter().collect(),
        };
        let generation = m.get("generation").and_then(Value::as_i64).unwrap_or(-1) as i32;
        let group_instance_id =
            m.get("group_instance_id").and_then(Value::as_str).map(String::from);
        live.members.insert(id, MemberSpec { topics, owned, generation, group_instance_id });
    }
    Ok(())
}

fn strings(v: &Value) -> Result<Vec<String>, String> {
    v.as_array()
        .ok_or_else(|| format!("expected a list of strings, got {v}"))?
        .iter()
        .map(|s| s.as_str().map(String::from).ok_or_else(|| format!("not a string: {s}")))
        .collect()
}

/// A reference (`sK.member`, `sKf.member`, `final.member`) or a literal list of partitions.
fn resolve(
    live: &Live,
    v: &Value,
    current: Option<&Assignment>,
) -> Result<BTreeSet<String>, String> {
    if let Value::String(r) = v {
        let (step, member) = r.split_once('.').ok_or_else(|| format!("bad reference `{r}`"))?;
        let assignment = match (step, current) {
            ("final", Some(c)) => c,
            _ => live.results.get(step).ok_or_else(|| format!("no result `{step}`"))?,
        };
        return Ok(assignment.get(member).cloned().unwrap_or_default());
    }
    Ok(strings(v)?.into_iter().collect())
}

/// The `assign` request of the live group, run through `parse_request` and the assignor.
fn run_assignor(assignor: &str, live: &Live) -> Result<Assignment, String> {
    let members: Vec<Value> = live
        .members
        .iter()
        .map(|(id, m)| {
            let owned: Vec<Value> = m.owned.iter().map(|p| json!(split_tp(p))).collect();
            let mut obj = Map::new();
            obj.insert("id".into(), json!(id));
            obj.insert("topics".into(), json!(m.topics));
            obj.insert("owned".into(), Value::Array(owned));
            obj.insert("generation".into(), json!(m.generation));
            if let Some(g) = &m.group_instance_id {
                obj.insert("group_instance_id".into(), json!(g));
            }
            Value::Object(obj)
        })
        .collect();
    let mut request = json!({"assignor": assignor, "topics": live.topics, "members": members});
    // Kafka's group-coordinator tests build the group in a `TreeMap` (member-id order, as
    // `live.members` lists it) and give the topics fixed ids.
    request["member_order"] = json!("given");
    if live.topics.keys().all(|t| KAFKA_TEST_TOPIC_IDS.iter().any(|(name, _)| name == t)) {
        let ids: Map<String, Value> = KAFKA_TEST_TOPIC_IDS
            .iter()
            .filter(|(name, _)| live.topics.contains_key(*name))
            .map(|(name, id)| (name.to_string(), json!(id)))
            .collect();
        request["topic_ids"] = Value::Object(ids);
    }
    let req = parse_request(&request.to_string()).map_err(|e| format!("request rejected: {e}"))?;
    let a = assign(req.assignor, &req.input, &mut RngStreams::new(req.seed).stream("assignor"));
    let mut out = Assignment::new();
    for (m, list) in req.input.members.iter().zip(&a.partitions) {
        let names = list
            .iter()
            .map(|tp| format!("{}-{}", req.input.topics[tp.topic as usize].name, tp.partition))
            .collect();
        out.insert(m.id.clone(), names);
    }
    Ok(out)
}

/// The topic ids of Kafka's group-coordinator assignor tests (`UniformHomogeneousAssignmentBuilderTest`,
/// `UniformHeterogeneousAssignmentBuilderTest`, ...: `private final Uuid topic1Uuid =
/// Uuid.fromString("T1-A4s3VTwiI5CTbEp6POw")` and so on): the uniform assignor visits topics
/// in the order of a `HashSet` of them, so an exact expectation depends on these.
const KAFKA_TEST_TOPIC_IDS: &[(&str, &str)] = &[
    ("topic1", "T1-A4s3VTwiI5CTbEp6POw"),
    ("topic2", "T2-B4s3VTwiI5YHbPp6YUe"),
    ("topic3", "T3-CU8fVTLCz5YMkLoDQsa"),
    ("topic4", "T4-Tw9fVTLCz5HbPp6YQsa"),
];

/// `"topic-3"` -> `["topic", 3]`.
fn split_tp(name: &str) -> (String, u64) {
    let (t, p) = name.rsplit_once('-').expect("partition names are topic-N");
    (t.to_string(), p.parse().expect("partition number"))
}

/// Runs a step's checks on its result; returns the result after them.
fn check_step(
    assignor: &str,
    live: &mut Live,
    step: &Value,
    first: Assignment,
) -> Result<Assignment, String> {
    let owned_before: BTreeMap<String, Vec<String>> =
        live.members.iter().map(|(id, m)| (id.clone(), m.owned.clone())).collect();
    check_exact(step.get("expect"), &first)?;
    if let Some(Value::Object(sizes)) = step.get("sizes") {
        for (member, size) in sizes {
            let got = first.get(member).map_or(0, BTreeSet::len);
            if Some(got as u64) != size.as_u64() {
                return Err(format!("{member}: expected {size} partitions, got {got} ({first:?})"));
            }
        }
    }
    if let Some(Value::Object(want)) = step.get("transferring") {
        check_transferring(live, want)?;
    }
    let mut current = first;
    let checks = step.get("checks").map(strings).transpose()?.unwrap_or_default();
    for check in &checks {
        match check.as_str() {
            "valid_and_balanced" => {
                if assignor == "cooperative-sticky" {
                    current = cooperative_rounds(assignor, live, current)?;
                }
                verify_validity_and_balance(live, &current)?;
            }
            "fully_balanced" => fully_balanced(&current)?,
            "all_assigned" => all_assigned(live, &current)?,
            "no_swaps" => no_swaps(&owned_before, &current)?,
            "distinct" => distinct(&current)?,
            other => return Err(format!("unknown check `{other}`")),
        }
    }
    check_exact(step.get("expect_after"), &current)?;
    if let Some(Value::Array(range)) = step.get("size_range") {
        let (lo, hi) = (range[0].as_u64().unwrap_or(0), range[1].as_u64().unwrap_or(u64::MAX));
        for (member, parts) in &current {
            let n = parts.len() as u64;
            if n < lo || n > hi {
                return Err(format!("{member} holds {n}, outside {lo}..={hi} ({current:?})"));
            }
        }
    }
    if let Some(Value::Object(counts)) = step.get("per_topic_counts") {
        for (topic, count) in counts {
            for (member, parts) in &current {
                let got = parts.iter().filter(|p| topic_of(p) == topic).count();
                if Some(got as u64) != count.as_u64() {
                    return Err(format!("{member} holds {got} of {topic}, expected {count}"));
                }
            }
        }
    }
    for (key, want_overlap) in
        [("contains", None), ("disjoint", Some(false)), ("not_disjoint", Some(true))]
    {
        for pair in step.get(key).and_then(Value::as_array).into_iter().flatten() {
            let a = resolve(live, &pair[0], Some(&current))?;
            let b = resolve(live, &pair[1], Some(&current))?;
            let ok = match want_overlap {
                None => b.is_subset(&a),
                Some(overlap) => a.is_disjoint(&b) != overlap,
            };
            if !ok {
                return Err(format!("{key} {} {}: {a:?} vs {b:?}", pair[0], pair[1]));
            }
        }
    }
    Ok(current)
}

/// `CooperativeStickyAssignorTest.verifyValidityAndBalance`'s rounds: while partitions are
/// revoked, members report their assignment as owned (generation 1) and the group
/// rebalances; no partition may be revoked and assigned to another member in one round.
fn cooperative_rounds(
    assignor: &str,
    live: &mut Live,
    first: Assignment,
) -> Result<Assignment, String> {
    let mut current = first;
    for rebalances in 0..=4 {
        let mut added = BTreeSet::new();
        let mut revoked = BTreeSet::new();
        for (id, assigned) in &current {
            let owned: BTreeSet<String> = live.members[id].owned.iter().cloned().collect();
            revoked.extend(owned.difference(assigned).cloned());
            added.extend(assigned.difference(&owned).cloned());
        }
        let both: Vec<_> = added.intersection(&revoked).collect();
        if !both.is_empty() {
            return Err(format!("revoked and assigned in the same round: {both:?} ({current:?})"));
        }
        if revoked.is_empty() {
            return Ok(current);
        }
        if rebalances == 4 {
            break;
        }
        for (id, assigned) in &current {
            let m = live.members.get_mut(id).expect("member");
            m.owned = assigned.iter().cloned().collect();
            m.generation = 1;
        }
        current = run_assignor(assignor, live)?;
    }
    Err("still revoking after 4 follow-up rebalances".into())
}

fn topic_of(tp: &str) -> &str {
    tp.rsplit_once('-').map_or(tp, |(t, _)| t)
}

/// `AbstractStickyAssignorTest.verifyValidityAndBalance`: every partition is of a subscribed
/// topic, no two members share one, and two members whose counts differ by more than one
/// share no topic.
fn verify_validity_and_balance(live: &Live, a: &Assignment) -> Result<(), String> {
    let members: Vec<(&String, &BTreeSet<String>)> = a.iter().collect();
    for (i, (id, parts)) in members.iter().enumerate() {
        let subscribed = &live.members[*id].topics;
        if let Some(p) = parts.iter().find(|p| !subscribed.iter().any(|t| t == topic_of(p))) {
            return Err(format!("{p} is assigned to {id}, which does not subscribe to it ({a:?})"));
        }
        for (other, other_parts) in &members[i + 1..] {
            if let Some(p) = parts.intersection(other_parts).next() {
                return Err(format!("{id} and {other} are both assigned {p} ({a:?})"));
            }
            if parts.len().abs_diff(other_parts.len()) <= 1 {
                continue;
            }
            let topics: BTreeSet<&str> = parts.iter().map(|p| topic_of(p)).collect();
            if let Some(t) = other_parts.iter().map(|p| topic_of(p)).find(|t| topics.contains(t)) {
                return Err(format!(
                    "{id} ({}) and {other} ({}) both hold {t}: a move would balance better ({a:?})",
                    parts.len(),
                    other_parts.len()
                ));
            }
        }
    }
    Ok(())
}

/// `isFullyBalanced`: max - min <= 1.
fn fully_balanced(a: &Assignment) -> Result<(), String> {
    let sizes: Vec<usize> = a.values().map(BTreeSet::len).collect();
    let (min, max) =
        (sizes.iter().min().copied().unwrap_or(0), sizes.iter().max().copied().unwrap_or(0));
    if max - min > 1 {
        return Err(format!("not fully balanced: sizes {min}..{max} ({a:?})"));
    }
    Ok(())
}

/// Every partition of a topic someone subscribes to is assigned.
fn all_assigned(live: &Live, a: &Assignment) -> Result<(), String> {
    let assigned: BTreeSet<&String> = a.values().flatten().collect();
    for (topic, &count) in &live.topics {
        if !live.members.values().any(|m| m.topics.contains(topic)) {
            continue;
        }
        for p in 0..count {
            let name = format!("{topic}-{p}");
            if !assigned.contains(&name) {
                return Err(format!("{name} is not assigned ({a:?})"));
            }
        }
    }
    Ok(())
}

/// No topic has partitions moving from A to B and from B to A (`PartitionMovements.isSticky`
/// rejects such two-member cycles).
fn no_swaps(owned: &BTreeMap<String, Vec<String>>, a: &Assignment) -> Result<(), String> {
    let mut moves: BTreeSet<(String, String, String)> = BTreeSet::new();
    for (from, parts) in owned {
        for p in parts {
            if let Some((to, _)) = a.iter().find(|(id, got)| *id != from && got.contains(p)) {
                moves.insert((topic_of(p).to_string(), from.clone(), to.clone()));
            }
        }
    }
    for (topic, from, to) in &moves {
        if moves.contains(&(topic.clone(), to.clone(), from.clone())) {
            return Err(format!("partitions of {topic} move both ways between {from} and {to}"));
        }
    }
    Ok(())
}

/// `expect` / `expect_after`: exact partitions per member.
fn check_exact(expect: Option<&Value>, a: &Assignment) -> Result<(), String> {
    let Some(Value::Object(expect)) = expect else { return Ok(()) };
    for (member, parts) in expect {
        let want: BTreeSet<String> = strings(parts)?.into_iter().collect();
        let got = a.get(member).cloned().unwrap_or_default();
        if got != want {
            return Err(format!("{member}: expected {want:?}, got {got:?} (all: {a:?})"));
        }
    }
    Ok(())
}

/// Kafka's `partitionsTransferringOwnership` (partition -> new owner), observed as what
/// `CooperativeStickyAssignor.adjustAssignment` withholds: the partitions the eager sticky
/// assignment gives a member that the cooperative one does not.
fn check_transferring(live: &Live, want: &Map<String, Value>) -> Result<(), String> {
    let eager = run_assignor("sticky", live)?;
    let cooperative = run_assignor("cooperative-sticky", live)?;
    let mut got = BTreeMap::new();
    for (member, parts) in &eager {
        for p in parts.difference(&cooperative[member]) {
            got.insert(p.clone(), member.clone());
        }
    }
    let want: BTreeMap<String, String> =
        want.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect();
    if got != want {
        return Err(format!("partitions transferring ownership: expected {want:?}, got {got:?}"));
    }
    Ok(())
}

/// No partition is assigned to two members.
fn distinct(a: &Assignment) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    match a.values().flatten().find(|p| !seen.insert(*p)) {
        Some(p) => Err(format!("{p} is assigned twice ({a:?})")),
        None => Ok(()),
    }
}

/// At the library level a topic without metadata is a subscribed topic index with no entry in
/// `GroupInput::topics`: every assignor skips it, giving what it gives without it
/// (`RangeAssignorTest.testOneConsumerNonexistentTopic` and siblings).
#[test]
fn assignor_functions_skip_topics_without_metadata() {
    use assignors::{AssignorName, GroupInput, Member, Topic};
    let member = |id: &str, topics: Vec<u32>| Member {
        id: id.into(),
        topics,
        node_id: Some(0),
        ..Member::default()
    };
    let topics = vec![Topic { name: "t".into(), partitions: 5 }];
    let with_ghost = GroupInput {
        topics: topics.clone(),
        members: vec![member("m1", vec![0, 7]), member("m2", vec![0]), member("m3", vec![9])],
        ..GroupInput::default()
    };
    let without = GroupInput {
        topics,
        members: vec![member("m1", vec![0]), member("m2", vec![0]), member("m3", vec![])],
        ..GroupInput::default()
    };
    for name in [
        AssignorName::Range,
        AssignorName::RoundRobin,
        AssignorName::Sticky,
        AssignorName::CooperativeSticky,
        AssignorName::Uniform,
        AssignorName::ConsumerRange,
        AssignorName::Modulo,
    ] {
        let rng = || RngStreams::new(3).stream("assignor");
        let got = assign(name, &with_ghost, &mut rng());
        assert_eq!(got, assign(name, &without, &mut rng()), "{name}");
        assert_eq!(got.partitions.iter().map(Vec::len).sum::<usize>(), 5, "{name}: {got:?}");
        assert!(got.partitions[2].is_empty(), "{name}: m3 subscribes only to a ghost topic");
    }
}
