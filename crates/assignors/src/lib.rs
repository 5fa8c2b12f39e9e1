//! Kafka's and TubeMQ's partition assignors as pure functions: no clock, no I/O.
//!
//! Every assignor reads one [`GroupInput`] (topics, members with their subscriptions, owned
//! partitions and generations) and returns a [`GroupAssignment`]: one sorted partition list per
//! member, in the input's member order. Topics and partitions are indices, not strings, so a
//! 2,000-member, 1,000,000-partition group assigns without a string per partition.
//! [`assign`] dispatches on the [`AssignorName`]; [`assign_into`] does the same with buffers
//! kept from one call to the next (an [`AssignScratch`] and the previous result).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod common;
mod consumer_range;
mod range;
pub mod request;
mod roundrobin;
mod sticky;
mod sticky_general;
mod tubemq;
mod uniform;
mod uniform_heterogeneous;

pub use tubemq::{
    tubemq_client_owns, tubemq_client_partitions, tubemq_partition_key, TUBEMQ_BROKER_ID,
};

use sim_core::SimRng;
use std::fmt;
use std::str::FromStr;

/// A topic partition: an index into [`GroupInput::topics`] and a partition number.
/// Ordering is by topic name (topics are sorted by name in the input), then partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tp {
    /// Index into `GroupInput::topics`.
    pub topic: u32,
    /// Partition number within the topic.
    pub partition: u32,
}

/// A topic and its partition count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topic {
    /// Topic name.
    pub name: String,
    /// Number of partitions.
    pub partitions: u32,
}

/// One member as the leader (or the KIP-848 broker) sees it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Member {
    /// The member id (Kafka sorts by it where it sorts).
    pub id: String,
    /// `group.instance.id` for static members (range and roundrobin then sort by it).
    pub group_instance_id: Option<String>,
    /// Subscribed topics (indices into `GroupInput::topics`), sorted.
    pub topics: Vec<u32>,
    /// Partitions the member reports as owned (cooperative and sticky), sorted.
    pub owned: Vec<Tp>,
    /// The generation of the `owned` claim; -1 when unknown.
    pub generation: i32,
    /// TubeMQ client-side balance: this member's nodeId.
    pub node_id: Option<u32>,
}

/// Everything an assignor reads.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct GroupInput {
    /// Topics, sorted by name; `Tp::topic` indexes this list.
    pub topics: Vec<Topic>,
    /// Members in any order; the output follows this order.
    pub members: Vec<Member>,
    /// TubeMQ client-side balance: the group's sourceCount.
    pub source_count: Option<u32>,
    /// The topics' Kafka topic ids, one per topic (parallel to `topics`), or empty when none
    /// are known. The KIP-848 uniform assignor visits topics in the iteration order of a Java
    /// `HashSet<Uuid>` of them ([`TopicId::java_hash`]); without ids it visits them by name.
    pub topic_ids: Vec<TopicId>,
    /// In which order the KIP-848 server-side assignors iterate the members.
    pub member_order: MemberOrder,
}

/// A Kafka topic id (`org.apache.kafka.common.Uuid`): two 64-bit halves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TopicId {
    /// `getMostSignificantBits()`.
    pub msb: u64,
    /// `getLeastSignificantBits()`.
    pub lsb: u64,
}

impl TopicId {
    /// Kafka's `Uuid.hashCode()`: `h = msb ^ lsb; (int) (h >> 32) ^ (int) h`.
    pub fn java_hash(self) -> i32 {
        let h = self.msb ^ self.lsb;
        ((h >> 32) as u32 ^ h as u32) as i32
    }

    /// Kafka's `Uuid.compareTo`: the most, then the least significant bits, each compared as
    /// a signed `long` (so not the unsigned order `Ord` derives).
    pub fn java_cmp(self, other: TopicId) -> std::cmp::Ordering {
        (self.msb as i64, self.lsb as i64).cmp(&(other.msb as i64, other.lsb as i64))
    }

    /// Parses Kafka's string form (`Uuid.toString()`: 22 characters of URL-safe base64
    /// without padding, e.g. `T1-A4s3VTwiI5CTbEp6POw`).
    pub fn parse(text: &str) -> Option<TopicId> {
        let digit = |c: u8| match c {
            b'A'..=b'Z' => Some(c - b'A'),
            b'a'..=b'z' => Some(c - b'a' + 26),
            b'0'..=b'9' => Some(c - b'0' + 52),
            b'-' => Some(62),
            b'_' => Some(63),
            _ => None,
        };
        if text.len() != 22 {
            return None;
        }
        // 22 digits of 6 bits = 132 bits: the 128 of the id, then 4 bits that Java's
        // `Base64.getUrlDecoder()` drops whatever they are (Kafka's own test ids, such as
        // `T2-B4s3VTwiI5YHbPp6YUe`, have them set).
        let mut bits: u128 = 0;
        for (i, c) in text.bytes().enumerate() {
            let d = u128::from(digit(c)?);
            if i == 21 {
                bits = (bits << 2) | (d >> 4);
            } else {
                bits = (bits << 6) | d;
            }
        }
        Some(TopicId { msb: (bits >> 64) as u64, lsb: bits as u64 })
    }

    /// Kafka's string form (`Uuid.toString()`; [`TopicId::parse`] reads it back).
    pub fn to_kafka_string(self) -> String {
        const DIGITS: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let bits = (u128::from(self.msb) << 64) | u128::from(self.lsb);
        (0..22)
            .map(|i| {
                let d = if i == 21 { (bits & 0x3) << 4 } else { (bits >> (122 - 6 * i)) & 0x3F };
                DIGITS[d as usize] as char
            })
            .collect()
    }
}

/// The member iteration order of the KIP-848 server-side assignors (`GroupSpec.memberIds()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MemberOrder {
    /// As the broker iterates them: `TargetAssignmentBuilder.build` puts the members into a
    /// `new HashMap<>()`, so the iteration order of a Java `HashMap` of their member ids.
    #[default]
    JavaHashMap,
    /// In the input's order, and each member's current partitions by topic name, then
    /// partition: Kafka's assignor tests build the group as a `TreeMap` (member-id order) and
    /// the current assignments with `mkOrderedAssignment`, topic by topic as listed.
    Given,
}

/// The result: `partitions[i]` belongs to `input.members[i]`, sorted.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct GroupAssignment {
    /// One sorted list per member, in the input's member order.
    pub partitions: Vec<Vec<Tp>>,
}

/// The assignors rebalance-sim knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AssignorName {
    /// Kafka `RangeAssignor` (classic, eager).
    Range,
    /// Kafka `RoundRobinAssignor` (classic, eager).
    RoundRobin,
    /// Kafka `StickyAssignor` (classic, eager, KIP-54).
    Sticky,
    /// Kafka `CooperativeStickyAssignor` (classic, cooperative, KIP-429).
    CooperativeSticky,
    /// KIP-848 server-side `UniformAssignor`.
    Uniform,
    /// KIP-848 server-side (sticky) `RangeAssignor`.
    ConsumerRange,
    /// TubeMQ hash-modulo balancing (server- or client-side).
    Modulo,
    /// No assignor: manual assignment.
    None,
}

impl AssignorName {
    /// The name on the command line, in files and in CSV. `ConsumerRange` prints as `range`:
    /// the protocol tells it apart.
    pub fn name(self) -> &'static str {
        match self {
            AssignorName::Range | AssignorName::ConsumerRange => "range",
            AssignorName::RoundRobin => "roundrobin",
            AssignorName::Sticky => "sticky",
            AssignorName::CooperativeSticky => "cooperative-sticky",
            AssignorName::Uniform => "uniform",
            AssignorName::Modulo => "modulo",
            AssignorName::None => "none",
        }
    }
}

impl fmt::Display for AssignorName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The names `assign` accepts in its JSON `"assignor"` field.
pub const ASSIGN_COMMAND_NAMES: &[&str] =
    &["range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "consumer-range", "modulo"];

/// An assignor name that is not one of [`ASSIGN_COMMAND_NAMES`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownAssignor(pub String);

impl fmt::Display for UnknownAssignor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown assignor `{}`; allowed: {}", self.0, ASSIGN_COMMAND_NAMES.join(", "))
    }
}

impl std::error::Error for UnknownAssignor {}

impl FromStr for AssignorName {
    type Err = UnknownAssignor;
    /// Parses the `assign` command's names; `consumer-range` is KIP-848's sticky range.
    fn from_str(s: &str) -> Result<Self, UnknownAssignor> {
        Ok(match s {
            "range" => AssignorName::Range,
            "roundrobin" => AssignorName::RoundRobin,
            "sticky" => AssignorName::Sticky,
            "cooperative-sticky" => AssignorName::CooperativeSticky,
            "uniform" => AssignorName::Uniform,
            "consumer-range" => AssignorName::ConsumerRange,
            "modulo" => AssignorName::Modulo,
            _ => return Err(UnknownAssignor(s.to_string())),
        })
    }
}

/// Runs the named assignor. `rng` is used only where the real implementation draws randomness
/// (TubeMQ's remainder placement); callers hand it a dedicated seeded stream.
///
/// `Modulo` applies TubeMQ's client-side rule when `input.source_count` is set, else the
/// server-side balance. `None` (manual assignment) assigns nothing: manual members pick their
/// partitions themselves.
pub fn assign(name: AssignorName, input: &GroupInput, rng: &mut SimRng) -> GroupAssignment {
    match name {
        AssignorName::Range => range::assign(input),
        AssignorName::RoundRobin => roundrobin::assign(input),
        AssignorName::Sticky => sticky::assign(input, false),
        AssignorName::CooperativeSticky => sticky::assign(input, true),
        AssignorName::Uniform => uniform::assign(input),
        AssignorName::ConsumerRange => consumer_range::assign(input),
        AssignorName::Modulo => match input.source_count {
            Some(source_count) => tubemq::client_assign(input, source_count),
            None => tubemq::server_assign(input, rng),
        },
        AssignorName::None => GroupAssignment { partitions: vec![Vec::new(); input.members.len()] },
    }
}

/// Working buffers kept from one [`assign_into`] call to the next, so that a caller assigning
/// a group again and again (the KIP-848 coordinator, at each epoch bump) does not allocate
/// them each time. They carry nothing from one call to the next that could change a result.
#[derive(Clone, Debug, Default)]
pub struct AssignScratch {
    uniform: uniform::Scratch,
}

/// [`assign`] into `out`, whose per-member lists are cleared and reused: the same assignment
/// as `assign(name, input, rng)`. The uniform assignor works in the buffers of `scratch`; the
/// others run as [`assign`] does and their result replaces `out`.
pub fn assign_into(
    name: AssignorName,
    input: &GroupInput,
    rng: &mut SimRng,
    scratch: &mut AssignScratch,
    out: &mut GroupAssignment,
) {
    match name {
        AssignorName::Uniform => uniform::assign_into(input, &mut scratch.uniform, out),
        _ => *out = assign(name, input, rng),
    }
}

#[cfg(test)]
mod topic_id_tests {
    use super::TopicId;

    /// Values printed by Kafka 4.4.0's own `org.apache.kafka.common.Uuid` (`fromString`,
    /// `hashCode`, `getMostSignificantBits`, `getLeastSignificantBits`, `toString`) for the
    /// topic ids of its assignor tests.
    #[test]
    fn topic_ids_parse_hash_and_print_as_kafka_does() {
        let rows: [(&str, i32, i64, i64, &str); 4] = [
            (
                "T1-A4s3VTwiI5CTbEp6POw",
                418407434,
                5719431763388092168,
                -8582694466532503749,
                "T1-A4s3VTwiI5CTbEp6POw",
            ),
            (
                "T2-B4s3VTwiI5YHbPp6YUe",
                885118816,
                5723936462527090440,
                -8582310736236210095,
                "T2-B4s3VTwiI5YHbPp6YUQ",
            ),
            (
                "T3-CU8fVTLCz5YMkLoDQsa",
                365927798,
                5728440547385101488,
                -5483832779831455567,
                "T3-CU8fVTLCz5YMkLoDQsQ",
            ),
            (
                "T4-Tw9fVTLCz5HbPp6YQsa",
                -1944536819,
                5732963320014916784,
                -5484127811987435343,
                "T4-Tw9fVTLCz5HbPp6YQsQ",
            ),
        ];
        for (text, hash, msb, lsb, printed) in rows {
            let id = TopicId::parse(text).expect(text);
            assert_eq!((id.msb as i64, id.lsb as i64), (msb, lsb), "{text}");
            assert_eq!(id.java_hash(), hash, "{text}");
            assert_eq!(id.to_kafka_string(), printed, "{text}");
        }
        assert_eq!(TopicId::parse("T1-A4s3VTwiI5CTbEp6PO"), None, "21 characters");
        assert_eq!(TopicId::parse("T1-A4s3VTwiI5CTbEp6PO="), None, "padding is not a digit");
    }

    /// `Uuid.compareTo` compares signed halves: an id whose most significant bit is set sorts
    /// before one whose is not (the unsigned `Ord` says the opposite), then the least
    /// significant halves decide, also signed.
    #[test]
    fn java_cmp_compares_signed_halves() {
        use std::cmp::Ordering::{Equal, Greater, Less};
        let high = TopicId { msb: 0x8000_0000_0000_0000, lsb: 0 };
        let low = TopicId { msb: 1, lsb: 0 };
        assert_eq!(high.java_cmp(low), Less);
        assert!(high > low, "the derived order is unsigned");
        let a = TopicId { msb: 5, lsb: u64::MAX }; // lsb -1
        let b = TopicId { msb: 5, lsb: 0 };
        assert_eq!(a.java_cmp(b), Less);
        assert_eq!(b.java_cmp(a), Greater);
        assert_eq!(a.java_cmp(a), Equal);
    }
}
