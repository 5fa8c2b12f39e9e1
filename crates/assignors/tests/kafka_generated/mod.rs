//! Kafka's generated assignor test cases (the large groups and the random subscriptions of
//! `AbstractStickyAssignorTest`), expanded into the step lists `kafka_cases.rs` runs: a case
//! with `"generate": {"kind": ..., ...}` instead of `"steps"` becomes one or more step lists,
//! each run on a fresh group as Kafka's test runs it on a fresh assignor.
//!
//! Kafka draws these groups from an unseeded `java.util.Random`; here they come from a seeded
//! stream (`seed`, one stream per repetition), so each run is the same every time and a
//! failure names the repetition that fails. The large cases use Kafka's sizes in release
//! builds and `debug_topics` topics in debug builds (the test prints which).

use rand::Rng;
use serde_json::{json, Value};
use sim_core::{RngStreams, SimRng};

/// The step lists of a generated case, and a line saying what was generated.
pub fn expand(spec: &Value) -> Result<(Vec<Vec<Value>>, String), String> {
    let kind = spec["kind"].as_str().ok_or("generate: no kind")?;
    let num = |key: &str| spec[key].as_u64().ok_or(format!("generate.{key}: expected a number"));
    match kind {
        "large" | "large_last_one_topic" | "halves" => {
            let topics = if cfg!(debug_assertions) { num("debug_topics")? } else { num("topics")? };
            let (partitions, consumers) = (num("partitions")?, num("consumers")?);
            let subscription = |i: u64| -> (u64, u64) {
                match kind {
                    // testLargeAssignmentAndGroupWithNonEqualSubscription: the last consumer
                    // subscribes to the first topic only.
                    "large_last_one_topic" if i == consumers - 1 => (0, 1),
                    // testAssignmentAndGroupWithNonEqualSubscriptionNotTimeout: every 4th
                    // consumer the first half of the topics, the others the second half.
                    "halves" if i.is_multiple_of(4) => (0, topics / 2),
                    "halves" => (topics / 2, topics),
                    _ => (0, topics),
                }
            };
            let steps = large(topics, partitions, consumers, &subscription);
            let about = format!(
                "{topics} topics x {partitions} partitions, {consumers} consumers{}",
                if cfg!(debug_assertions) { " (debug build size)" } else { "" }
            );
            Ok((vec![steps], about))
        }
        "random_leaving" => {
            let (seed, reps) = (num("seed")?, num("repetitions")?);
            let runs = (0..reps).map(|r| random_leaving(&mut stream(seed, r))).collect();
            Ok((runs, format!("{reps} seeded groups of 200 consumers on 40 topics")))
        }
        "random_changes" => {
            let (seed, rounds) = (num("seed")?, num("rounds")?);
            let runs = (0..rounds).map(|r| random_changes(&mut stream(seed, r))).collect();
            Ok((runs, format!("{rounds} seeded rounds of 20-39 consumers on 10-19 topics")))
        }
        other => Err(format!("generate.kind: unknown `{other}`")),
    }
}

fn stream(seed: u64, repetition: u64) -> SimRng {
    RngStreams::new(seed).indexed("kafka-generated-case", repetition)
}

/// Kafka's `getCanonicalName`: a prefix and the index padded to the width of `max`.
fn name(prefix: &str, i: u64, max: u64) -> String {
    let width = max.to_string().len();
    format!("{prefix}{i:0width$}")
}

fn member(id: &str, topics: &[String], owned: Option<String>) -> Value {
    let mut m = json!({"id": id, "topics": topics, "generation": 1});
    if let Some(r) = owned {
        m["owned"] = json!(r);
    }
    m
}

/// The large cases: every consumer subscribes, then every consumer but the first re-joins
/// owning what it got (`buildSubscriptionV2Above(..., assignment.get(consumer), ...)`).
/// Kafka asserts nothing but that the assignor returns; this checks that the answer is valid
/// (each partition once, all assigned) and, with equal subscriptions, fully balanced.
fn large(
    topics: u64,
    partitions: u64,
    consumers: u64,
    subscription: &dyn Fn(u64) -> (u64, u64),
) -> Vec<Value> {
    let names: Vec<String> = (0..topics).map(|i| name("t", i, topics)).collect();
    let metadata: serde_json::Map<String, Value> =
        names.iter().map(|t| (t.clone(), json!(partitions))).collect();
    let subscribed = |i: u64| {
        let (from, to) = subscription(i);
        names[from as usize..to as usize].to_vec()
    };
    let equal = (0..consumers).all(|i| subscription(i) == (0, topics));
    let mut checks = vec!["distinct", "all_assigned"];
    if equal {
        checks.push("fully_balanced");
    }
    let first: Vec<Value> =
        (0..consumers).map(|i| member(&name("c", i, consumers), &subscribed(i), None)).collect();
    let second: Vec<Value> = (1..consumers)
        .map(|i| {
            let id = name("c", i, consumers);
            member(&id, &subscribed(i), Some(format!("s1.{id}")))
        })
        .collect();
    vec![
        json!({"topics": metadata, "put": first, "checks": checks}),
        json!({"put": second, "checks": checks}),
    ]
}

/// `testLargeAssignmentWithMultipleConsumersLeavingAndRandomSubscription`: 40 topics of 1-10
/// partitions, 200 consumers subscribed to random topics (the loop bound `rand.nextInt(20)`
/// is drawn again at every iteration, as in Kafka's test), then every consumer but the first
/// re-joins owning its assignment and 50 random draws of a consumer leave; valid and balanced
/// both times, and sticky (`isSticky`: no partition moving both ways) after the departures.
fn random_leaving(rng: &mut SimRng) -> Vec<Value> {
    let (topic_count, consumer_count) = (40u64, 200u64);
    let metadata: serde_json::Map<String, Value> = (0..topic_count)
        .map(|i| (name("t", i, topic_count), json!(rng.random_range(0..10u64) + 1)))
        .collect();
    let mut subscriptions = Vec::new();
    for _ in 0..consumer_count {
        let mut topics = Vec::new();
        let mut j = 0;
        while j < rng.random_range(0..20u64) {
            topics.push(name("t", rng.random_range(0..topic_count), topic_count));
            j += 1;
        }
        topics.sort();
        topics.dedup();
        subscriptions.push(topics);
    }
    let ids: Vec<String> = (0..consumer_count).map(|i| name("c", i, consumer_count)).collect();
    let first: Vec<Value> =
        ids.iter().zip(&subscriptions).map(|(id, t)| member(id, t, None)).collect();
    let second: Vec<Value> = ids
        .iter()
        .zip(&subscriptions)
        .skip(1)
        .map(|(id, t)| member(id, t, Some(format!("s1.{id}"))))
        .collect();
    let mut leaving: Vec<String> =
        (0..50).map(|_| ids[rng.random_range(0..consumer_count) as usize].clone()).collect();
    leaving.sort();
    leaving.dedup();
    vec![
        json!({"topics": metadata, "put": first, "checks": ["valid_and_balanced"]}),
        json!({"put": second, "remove": leaving, "checks": ["valid_and_balanced", "no_swaps"]}),
    ]
}

/// One round of `testReassignmentWithRandomSubscriptionsAndChanges`: 10-19 topics (topic i
/// has i + 1 partitions), 20-39 consumers each on a random sublist of the topics; then every
/// consumer re-joins on a new random sublist owning its assignment. Valid and balanced both
/// times, and sticky after the change.
fn random_changes(rng: &mut SimRng) -> Vec<Value> {
    let (max_topics, max_consumers) = (20u64, 40u64);
    let topic_count = 10 + rng.random_range(0..10u64);
    let names: Vec<String> = (0..topic_count).map(|i| name("t", i, max_topics)).collect();
    let metadata: serde_json::Map<String, Value> =
        names.iter().enumerate().map(|(i, t)| (t.clone(), json!(i + 1))).collect();
    let consumer_count = 20 + rng.random_range(0..20u64);
    let ids: Vec<String> = (0..consumer_count).map(|i| name("c", i, max_consumers)).collect();
    let first: Vec<Value> =
        ids.iter().map(|id| member(id, &random_sublist(rng, &names), None)).collect();
    let second: Vec<Value> = ids
        .iter()
        .map(|id| member(id, &random_sublist(rng, &names), Some(format!("s1.{id}"))))
        .collect();
    vec![
        json!({"topics": metadata, "put": first, "checks": ["valid_and_balanced"]}),
        json!({"put": second, "checks": ["valid_and_balanced", "no_swaps"]}),
    ]
}

/// Kafka's `getRandomSublist`: remove `nextInt(len)` random elements, sorted
/// (`Utils.sorted`).
fn random_sublist(rng: &mut SimRng, list: &[String]) -> Vec<String> {
    let mut selected = list.to_vec();
    let remove = rng.random_range(0..list.len());
    for _ in 0..remove {
        selected.remove(rng.random_range(0..selected.len()));
    }
    selected.sort();
    selected
}
