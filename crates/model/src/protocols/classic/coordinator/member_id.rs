//! Classic member ids as the broker makes them: `clientId-UUID`, or `groupInstanceId-UUID` for
//! a static member (AK `group-coordinator/.../classic/ClassicGroup.java` `generateMemberId`:
//! `clientId + MEMBER_ID_DELIMITER + UUID.randomUUID()`, the delimiter `"-"`).
//!
//! The order of the ids matters: the classic range and roundrobin assignors sort dynamic
//! members by member id (AK `AbstractPartitionAssignor.MemberInfo.compareTo`, a Java `String`
//! compare, which for these ASCII ids is Rust's byte order). Members with the same client id
//! (every member, with the clients' default `client.id`) therefore sort by the UUID: a new
//! member, or a restarted one (it gets a new id), takes a random place in the order.
//!
//! The UUID comes from the run's [`STREAM`] stream, which the world hands the coordinator:
//! the same seed gives the same ids, and no other stream's draws change.

use crate::types::MemberId;
use rand::RngCore;
use sim_core::SimRng;

/// The name of the seeded stream the classic coordinator draws member-id UUIDs from.
pub const STREAM: &str = "classic-member-ids";

/// A version-4 UUID in `java.util.UUID.toString()` form (36 characters: lowercase hex in
/// groups of 8-4-4-4-12), as `UUID.randomUUID()` makes it: 128 random bits with the version
/// (4) in bits 12..16 of the most significant half and the IETF variant (`10`) in the top
/// two bits of the least significant half. Two draws from `rng`.
pub fn random_uuid(rng: &mut SimRng) -> String {
    let (msb, lsb) = (rng.next_u64(), rng.next_u64());
    let msb = (msb & !0xF000) | 0x4000;
    let lsb = (lsb & !(0xC000u64 << 48)) | (0x8000u64 << 48);
    // UUID.toString(): digits(msb >> 32, 8), digits(msb >> 16, 4), digits(msb, 4),
    // digits(lsb >> 48, 4), digits(lsb, 12).
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        msb >> 32,
        (msb >> 16) & 0xFFFF,
        msb & 0xFFFF,
        lsb >> 48,
        lsb & 0xFFFF_FFFF_FFFF
    )
}

/// A new member's id: `prefix` (its client id, or its `group.instance.id` when static), `-`,
/// then a fresh UUID from `rng`.
pub fn generate(prefix: &str, rng: &mut SimRng) -> MemberId {
    format!("{prefix}-{}", random_uuid(rng))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::RngStreams;
    use std::collections::BTreeSet;

    fn stream(seed: u64) -> SimRng {
        RngStreams::new(seed).stream(STREAM)
    }

    #[test]
    fn a_uuid_has_java_s_form_version_and_variant() {
        let mut rng = stream(1);
        for _ in 0..100 {
            let u = random_uuid(&mut rng);
            let groups: Vec<&str> = u.split('-').collect();
            let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
            assert_eq!(lengths, [8, 4, 4, 4, 12], "{u}");
            assert!(u
                .bytes()
                .all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
            assert!(groups[2].starts_with('4'), "version 4: {u}");
            assert!(matches!(groups[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'), "variant: {u}");
        }
    }

    #[test]
    fn ids_are_unique_and_deterministic() {
        let draw = |seed| {
            let mut rng = stream(seed);
            (0..1000).map(|_| generate("rdkafka", &mut rng)).collect::<Vec<_>>()
        };
        let a = draw(7);
        assert_eq!(a, draw(7), "same seed, same ids");
        assert_ne!(a, draw(8), "another seed, other ids");
        assert_eq!(a.iter().collect::<BTreeSet<_>>().len(), a.len(), "unique");
        assert!(a.iter().all(|id| id.starts_with("rdkafka-") && id.len() == 8 + 36));
    }

    /// Golden: the first ids of seed 1 (the hand-derived lab test relies on them; they change
    /// only if the stream name, the generator or the derivation does).
    #[test]
    fn golden_first_ids_of_seed_1() {
        let mut rng = stream(1);
        let ids: Vec<String> = (0..4).map(|_| random_uuid(&mut rng)).collect();
        assert_eq!(ids, GOLDEN_SEED1);
    }

    const GOLDEN_SEED1: [&str; 4] = [
        "ba3a2b30-9239-4f34-a869-b9bfc7fe7c2c",
        "57304526-3c87-4dc6-87b8-faca182df815",
        "4520cd95-ec9d-4e7b-adfa-c0fbfadd5c47",
        "9880b1c7-1175-416f-a9dd-a87e9e514638",
    ];

    /// Same client id: the order is the UUIDs' (a Java `String` compare of `clientId-uuid`),
    /// not the draw order. Different client ids: the client id decides first.
    #[test]
    fn ids_of_one_client_id_sort_by_uuid() {
        let mut rng = stream(3);
        let ids: Vec<MemberId> = (0..32).map(|_| generate("consumer-g-1", &mut rng)).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_ne!(ids, sorted, "32 draws in increasing order: the stream would not be random");
        let by_uuid = |id: &String| id["consumer-g-1-".len()..].to_string();
        let mut uuids: Vec<String> = ids.iter().map(by_uuid).collect();
        uuids.sort();
        assert_eq!(sorted.iter().map(by_uuid).collect::<Vec<_>>(), uuids);
        let (b, a) = (generate("c1", &mut rng), generate("c0", &mut rng));
        assert!(a < b, "c0-... sorts before c1-... whatever the UUIDs");
    }

    /// The member-id stream is its own: drawing from it changes no other stream.
    #[test]
    fn drawing_ids_leaves_other_streams_alone() {
        let streams = RngStreams::new(5);
        let alone = streams.stream("assignor").next_u64();
        let mut ids = streams.stream(STREAM);
        let _ = (0..100).map(|_| random_uuid(&mut ids)).count();
        assert_eq!(streams.stream("assignor").next_u64(), alone);
        assert_ne!(streams.stream(STREAM).next_u64(), alone);
    }
}
