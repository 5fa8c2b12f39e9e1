//! Test helpers: build groups from short literals and read assignments back as strings.
#![allow(dead_code)]

use assignors::{assign, AssignorName, GroupAssignment, GroupInput, Member, Topic, Tp};
use sim_core::RngStreams;

/// Topics as (name, partitions); sorted by name as `GroupInput` requires.
pub fn topics(list: &[(&str, u32)]) -> Vec<Topic> {
    let mut t: Vec<Topic> =
        list.iter().map(|&(n, p)| Topic { name: n.into(), partitions: p }).collect();
    t.sort_by(|a, b| a.name.cmp(&b.name));
    t
}

/// A member subscribed to the named topics.
pub fn member(input_topics: &[Topic], id: &str, subscribed: &[&str]) -> Member {
    let mut topics: Vec<u32> = subscribed.iter().map(|n| topic_index(input_topics, n)).collect();
    topics.sort_unstable();
    Member { id: id.into(), topics, ..Member::default() }
}

/// The index of a topic by name.
pub fn topic_index(input_topics: &[Topic], name: &str) -> u32 {
    input_topics.iter().position(|t| t.name == name).expect("known topic") as u32
}

/// Partitions named "topic-N" to `Tp`s (sorted).
pub fn tps(input_topics: &[Topic], names: &[&str]) -> Vec<Tp> {
    let mut out: Vec<Tp> = names
        .iter()
        .map(|n| {
            let (t, p) = n.rsplit_once('-').expect("topic-partition");
            Tp { topic: topic_index(input_topics, t), partition: p.parse().expect("partition") }
        })
        .collect();
    out.sort_unstable();
    out
}

/// Runs an assignor with a fixed seed.
pub fn run(name: AssignorName, input: &GroupInput) -> GroupAssignment {
    assign(name, input, &mut RngStreams::new(7).stream("assignor"))
}

/// One member's partitions as "topic-N" strings.
pub fn names(input: &GroupInput, a: &GroupAssignment, member_id: &str) -> Vec<String> {
    let m = input.members.iter().position(|m| m.id == member_id).expect("member");
    a.partitions[m]
        .iter()
        .map(|tp| format!("{}-{}", input.topics[tp.topic as usize].name, tp.partition))
        .collect()
}

/// Expands "t-0..3" style shorthand: `range("t", &[0, 1])` -> ["t-0", "t-1"].
pub fn parts(topic: &str, partitions: &[u32]) -> Vec<String> {
    partitions.iter().map(|p| format!("{topic}-{p}")).collect()
}

/// Concatenation helper.
pub fn cat(lists: &[Vec<String>]) -> Vec<String> {
    lists.concat()
}
