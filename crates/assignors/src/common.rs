//! Helpers every assignor shares: Java's string semantics (`String.hashCode`, `compareTo`,
//! `HashMap` iteration order), Kafka's member ordering, and a flat index over all partitions
//! so that per-partition state lives in plain vectors instead of maps.
//!
//! Partition `Tp { topic, partition }` has the global index `offsets[topic] + partition`.
//! Topics are sorted by name in the input, so sorting indices sorts by topic name, then
//! partition: the order Kafka's assignors use when they lay partitions out.

use crate::{GroupAssignment, GroupInput, Member, Topic, Tp};
use std::cmp::Ordering;
use std::ops::Range;

/// "No member" in per-partition owner vectors.
pub(crate) const NO_MEMBER: u32 = u32::MAX;

/// Java `String.hashCode()`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16 code units, wrapping.
/// An ASCII string's code units are its bytes (member ids are; the bytes are read directly).
pub(crate) fn java_string_hash(s: &str) -> i32 {
    let step = |h: i32, c: i32| h.wrapping_mul(31).wrapping_add(c);
    if s.is_ascii() {
        return s.bytes().fold(0i32, |h, b| step(h, i32::from(b)));
    }
    s.encode_utf16().fold(0i32, |h, c| step(h, i32::from(c)))
}

/// Java `String.compareTo`: lexicographic over UTF-16 code units. For ASCII strings that is
/// their byte order (compared directly).
pub(crate) fn java_cmp(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.as_bytes().cmp(b.as_bytes());
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Kafka `AbstractPartitionAssignor.MemberInfo.compareTo`: static members (with a
/// `group.instance.id`) first, ordered by it; then dynamic members by member id.
pub(crate) fn member_info_cmp(a: &Member, b: &Member) -> Ordering {
    match (&a.group_instance_id, &b.group_instance_id) {
        (Some(x), Some(y)) => java_cmp(x, y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => java_cmp(&a.id, &b.id),
    }
}

/// Member indices sorted as Kafka's `MemberInfo` sorts them (range, roundrobin).
pub(crate) fn by_member_info(members: &[Member]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| member_info_cmp(&members[a], &members[b]));
    order
}

/// Member indices sorted by member id (`Collections.sort` over member-id strings).
pub(crate) fn by_member_id(members: &[Member]) -> Vec<usize> {
    let mut order = Vec::new();
    by_member_id_into(members, &mut order);
    order
}

/// [`by_member_id`] into a reused buffer. Members already in id order (the KIP-848
/// coordinator keeps them so) are not sorted: a stable sort of a sorted list leaves it as is,
/// equal ids included, and the check costs no allocation (the sort's buffer would).
pub(crate) fn by_member_id_into(members: &[Member], order: &mut Vec<usize>) {
    order.clear();
    order.extend(0..members.len());
    let sorted = members.windows(2).all(|w| java_cmp(&w[0].id, &w[1].id) != Ordering::Greater);
    if !sorted {
        order.sort_by(|&a, &b| java_cmp(&members[a].id, &members[b].id));
    }
}

/// The iteration order of a `java.util.HashMap<String, _>` built with `new HashMap<>()` and
/// `put` in the order of `keys` (indices into `keys` are returned).
///
/// OpenJDK `HashMap`: the table starts at 16 buckets and doubles whenever the size exceeds
/// 3/4 of it; a key's bucket is `(h ^ (h >>> 16)) & (capacity - 1)` with `h = hashCode()`;
/// iteration walks buckets in index order and each bucket in insertion order (resizing keeps
/// the relative order). Tree bins (8+ colliding keys in one bucket) are not modelled.
pub(crate) fn java_hashmap_order(keys: &[&str]) -> Vec<usize> {
    let mut order = Vec::new();
    java_hashmap_order_into(keys.iter().copied(), &mut JavaHashmapScratch::default(), &mut order);
    order
}

/// The buffers of [`java_hashmap_order_into`], kept by a caller that orders again and again.
#[derive(Clone, Debug, Default)]
pub(crate) struct JavaHashmapScratch {
    buckets: Vec<usize>,
    starts: Vec<usize>,
}

/// [`java_hashmap_order`] into `order`: a counting sort by bucket, stable (insertion order
/// within a bucket), linear in the keys and the table size (at most max(16, 8/3 of the
/// keys)).
pub(crate) fn java_hashmap_order_into<'a>(
    keys: impl ExactSizeIterator<Item = &'a str>,
    scratch: &mut JavaHashmapScratch,
    order: &mut Vec<usize>,
) {
    let capacity = java_hashmap_capacity(keys.len());
    let JavaHashmapScratch { buckets, starts } = scratch;
    buckets.clear();
    buckets.extend(keys.map(|k| java_hashmap_bucket(k, capacity)));
    starts.clear();
    starts.resize(capacity + 1, 0);
    for &b in buckets.iter() {
        starts[b + 1] += 1;
    }
    for b in 0..capacity {
        starts[b + 1] += starts[b];
    }
    order.clear();
    order.resize(buckets.len(), 0);
    for (i, &b) in buckets.iter().enumerate() {
        order[starts[b]] = i;
        starts[b] += 1;
    }
}

/// The table size of a `java.util.HashSet` copied from a collection of `len` elements
/// (`new HashSet<>(c)`; JDK 17, the broker's JVM here: `new HashMap<>(Math.max((int) (len /
/// .75f) + 1, 16))`, whose table is the next power of two).
pub(crate) fn java_hashset_copy_capacity(len: usize) -> usize {
    let wanted = ((len as f32 / 0.75f32) as usize + 1).max(16);
    wanted.next_power_of_two()
}

/// `HashMap.hash`: a key's hash code with its high half folded into the low half.
fn java_spread(hash: i32) -> usize {
    let h = hash as u32;
    (h ^ (h >> 16)) as usize
}

/// Sorts `items` (given in insertion order) into the iteration order of a Java hash table of
/// `capacity` buckets holding them: by bucket (`spread(hash) & (capacity - 1)`), insertion
/// order within a bucket (a stable sort; tree bins, 8+ keys in one bucket, not modelled).
pub(crate) fn java_table_order<T>(items: &mut [T], capacity: usize, hash: impl Fn(&T) -> i32) {
    let mask = capacity - 1;
    let sorted = items
        .windows(2)
        .all(|w| (java_spread(hash(&w[0])) & mask) <= (java_spread(hash(&w[1])) & mask));
    if !sorted {
        items.sort_by_key(|item| java_spread(hash(item)) & mask);
    }
}

/// The table size of a `java.util.HashMap` after `len` puts into `new HashMap<>()`: 16,
/// doubled while `len` exceeds 3/4 of it.
pub(crate) fn java_hashmap_capacity(len: usize) -> usize {
    let mut capacity: usize = 16;
    while len * 4 > capacity * 3 {
        capacity *= 2;
    }
    capacity
}

/// The bucket of `key` in a `java.util.HashMap` table of `capacity` (a power of two):
/// `(h ^ (h >>> 16)) & (capacity - 1)` with `h = key.hashCode()`.
fn java_hashmap_bucket(key: &str, capacity: usize) -> usize {
    let h = java_string_hash(key) as u32;
    ((h ^ (h >> 16)) as usize) & (capacity - 1)
}

/// A flat index over every partition of every topic.
#[derive(Clone, Debug)]
pub(crate) struct PartitionIndex {
    /// `offsets[t]` is the global index of `Tp { topic: t, partition: 0 }`; the last entry is
    /// the total partition count.
    offsets: Vec<usize>,
}

impl PartitionIndex {
    /// The index of the input's topics.
    pub(crate) fn new(topics: &[Topic]) -> PartitionIndex {
        let mut offsets = Vec::with_capacity(topics.len() + 1);
        let mut total = 0usize;
        offsets.push(0);
        for topic in topics {
            total += topic.partitions as usize;
            offsets.push(total);
        }
        PartitionIndex { offsets }
    }

    /// Number of partitions over all topics.
    pub(crate) fn total(&self) -> usize {
        *self.offsets.last().unwrap_or(&0)
    }

    /// The global indices of one topic's partitions.
    pub(crate) fn range(&self, topic: u32) -> Range<usize> {
        let t = topic as usize;
        self.offsets[t]..self.offsets[t + 1]
    }

    /// The global index of `tp`, or `None` when the topic or partition does not exist.
    pub(crate) fn index(&self, tp: Tp) -> Option<usize> {
        let t = tp.topic as usize;
        if t + 1 >= self.offsets.len() {
            return None;
        }
        let idx = self.offsets[t] + tp.partition as usize;
        (idx < self.offsets[t + 1]).then_some(idx)
    }

    /// The topic of a global index.
    pub(crate) fn topic_of(&self, idx: usize) -> u32 {
        // The last offset <= idx whose topic is non-empty is the one holding idx.
        (self.offsets.partition_point(|&o| o <= idx) - 1) as u32
    }

    /// Appends to `out` the partitions at ascending global indices `sorted` (the topic found
    /// by walking the offsets once, not by a search per index).
    pub(crate) fn extend_tps_of_sorted(&self, sorted: &[usize], out: &mut Vec<Tp>) {
        let mut topic = 0;
        let offsets = &self.offsets;
        out.extend(sorted.iter().map(|&idx| {
            while offsets[topic + 1] <= idx {
                topic += 1;
            }
            Tp { topic: topic as u32, partition: (idx - offsets[topic]) as u32 }
        }));
    }

    /// The partition at a global index.
    pub(crate) fn tp(&self, idx: usize) -> Tp {
        let topic = self.topic_of(idx);
        Tp { topic, partition: (idx - self.offsets[topic as usize]) as u32 }
    }
}

/// Who subscribes to what, as a dense member x topic table.
#[derive(Clone, Debug, Default)]
pub(crate) struct Subscriptions {
    topic_count: usize,
    /// `table[m * topic_count + t]`: member `m` subscribes to topic `t`.
    table: Vec<bool>,
    /// Topic `t` has at least one subscriber.
    pub(crate) any: Vec<bool>,
}

impl Subscriptions {
    /// The subscription table of `input`; topic indices out of range are ignored.
    pub(crate) fn new(input: &GroupInput) -> Subscriptions {
        let mut subs = Subscriptions::default();
        subs.fill(input);
        subs
    }

    /// Makes this the subscription table of `input`, reusing the buffers.
    pub(crate) fn fill(&mut self, input: &GroupInput) {
        let topic_count = input.topics.len();
        self.topic_count = topic_count;
        self.table.clear();
        self.table.reserve(input.members.len() * topic_count);
        self.any.clear();
        self.any.resize(topic_count, false);
        let mut previous: Option<&[u32]> = None;
        for (m, member) in input.members.iter().enumerate() {
            if previous == Some(member.topics.as_slice()) {
                // The previous member's list: its row (usually every member's).
                self.table.extend_from_within((m - 1) * topic_count..m * topic_count);
                continue;
            }
            self.table.resize((m + 1) * topic_count, false);
            for &t in &member.topics {
                if (t as usize) < topic_count {
                    self.table[m * topic_count + t as usize] = true;
                    self.any[t as usize] = true;
                }
            }
            previous = Some(&member.topics);
        }
    }

    /// Member `m` subscribes to topic `t`.
    pub(crate) fn has(&self, m: usize, t: u32) -> bool {
        self.table[m * self.topic_count + t as usize]
    }

    /// Every member subscribes to exactly the same topics.
    pub(crate) fn all_equal(&self) -> bool {
        let row = |m: usize| &self.table[m * self.topic_count..(m + 1) * self.topic_count];
        let members = self.table.len() / self.topic_count.max(1);
        (1..members).all(|m| row(m) == row(0))
    }

    /// The topics member `m` subscribes to, ascending.
    pub(crate) fn topics_of(&self, m: usize) -> Vec<u32> {
        (0..self.topic_count as u32).filter(|&t| self.has(m, t)).collect()
    }

    /// The members subscribed to topic `t`, in the given member order.
    pub(crate) fn members_of(&self, t: u32, order: &[usize]) -> Vec<usize> {
        order.iter().copied().filter(|&m| self.has(m, t)).collect()
    }
}

/// Turns per-member lists of global indices into the sorted [`GroupAssignment`].
pub(crate) fn to_assignment(ix: &PartitionIndex, per_member: Vec<Vec<usize>>) -> GroupAssignment {
    let mut out = GroupAssignment::default();
    fill_assignment(ix, per_member, &mut out);
    out
}

/// [`to_assignment`] into `out`, whose lists are cleared and reused.
pub(crate) fn fill_assignment(
    ix: &PartitionIndex,
    per_member: Vec<Vec<usize>>,
    out: &mut GroupAssignment,
) {
    reset_lists(&mut out.partitions, per_member.len());
    for (mut list, tps) in per_member.into_iter().zip(&mut out.partitions) {
        list.sort_unstable();
        ix.extend_tps_of_sorted(&list, tps);
    }
}

/// Makes `lists` hold `n` empty lists, keeping the buffers of those it had.
pub(crate) fn reset_lists<T>(lists: &mut Vec<Vec<T>>, n: usize) {
    lists.truncate(n);
    lists.iter_mut().for_each(Vec::clear);
    lists.resize_with(n, Vec::new);
}

/// The server-side current assignment (KIP-848, TubeMQ): each member's `owned` partitions
/// that exist and belong to a topic it subscribes to, each partition kept by the first member
/// in `order` that lists it (the coordinator never has two owners; this guards bad input).
pub(crate) fn server_current(
    input: &GroupInput,
    ix: &PartitionIndex,
    subs: &Subscriptions,
    order: &[usize],
) -> Vec<Vec<usize>> {
    let mut taken = vec![false; ix.total()];
    let mut current = vec![Vec::new(); input.members.len()];
    for &m in order {
        current[m].reserve_exact(input.members[m].owned.len());
        for &tp in &input.members[m].owned {
            let Some(idx) = ix.index(tp) else { continue };
            if subs.has(m, tp.topic) && !taken[idx] {
                taken[idx] = true;
                current[m].push(idx);
            }
        }
        current[m].sort_unstable();
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hash_matches_known_values() {
        // "a".hashCode() = 97; "ab" = 97*31 + 98 = 3105; "" = 0.
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("ab"), 3105);
        assert_eq!(java_string_hash(""), 0);
        // "polygenelubricants".hashCode() == Integer.MIN_VALUE (a well-known Java curiosity).
        assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
    }

    #[test]
    fn java_string_semantics_beyond_ascii() {
        // "é" (U+00E9) is one code unit, 233; "😀" (U+1F600) is the surrogate pair D83D DE00:
        // 0xD83D * 31 + 0xDE00 = 1,772,093.
        assert_eq!(java_string_hash("é"), 233);
        assert_eq!(java_string_hash("😀"), 0xD83D * 31 + 0xDE00);
        // UTF-16 order puts a surrogate pair (D83D..) below U+FFFD, unlike code point order.
        assert_eq!(java_cmp("😀", "\u{FFFD}"), Ordering::Less);
        assert_eq!(java_cmp("a", "é"), Ordering::Less);
        assert_eq!(java_cmp("b", "ab"), Ordering::Greater);
        assert_eq!(java_cmp("ab", "ab"), Ordering::Equal);
    }

    proptest::proptest! {
        /// The ASCII fast paths give what the UTF-16 definitions give.
        #[test]
        fn ascii_fast_paths_match_utf16(a in "[ -~]{0,12}", b in "[ -~]{0,12}") {
            let hash = a.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
            proptest::prop_assert_eq!(java_string_hash(&a), hash);
            proptest::prop_assert_eq!(java_cmp(&a, &b), a.encode_utf16().cmp(b.encode_utf16()));
        }
    }

    #[test]
    fn hashmap_order_follows_buckets() {
        // Capacity 16: "a" (97) -> bucket 97 & 15 = 1, "b" (98) -> 2, "p" (112) -> 0,
        // "q" (113) -> 1 (after "a", inserted later).
        let keys = ["a", "b", "p", "q"];
        assert_eq!(java_hashmap_order(&keys), vec![2, 0, 3, 1]);
    }

    #[test]
    fn member_info_puts_static_members_first() {
        let m = |id: &str, gi: Option<&str>| Member {
            id: id.into(),
            group_instance_id: gi.map(String::from),
            ..Member::default()
        };
        let members = vec![m("a", None), m("z", Some("i2")), m("b", Some("i1"))];
        assert_eq!(by_member_info(&members), vec![2, 1, 0]);
    }

    #[test]
    fn index_round_trips_with_empty_topics() {
        let topics = vec![
            Topic { name: "a".into(), partitions: 2 },
            Topic { name: "b".into(), partitions: 0 },
            Topic { name: "c".into(), partitions: 3 },
        ];
        let ix = PartitionIndex::new(&topics);
        assert_eq!(ix.total(), 5);
        assert_eq!(ix.tp(2), Tp { topic: 2, partition: 0 });
        assert_eq!(ix.tp(1), Tp { topic: 0, partition: 1 });
        assert_eq!(ix.index(Tp { topic: 1, partition: 0 }), None);
        assert_eq!(ix.index(Tp { topic: 2, partition: 2 }), Some(4));
        assert_eq!(ix.index(Tp { topic: 3, partition: 0 }), None);
    }
}
