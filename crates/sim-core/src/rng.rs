//! Seeded random streams: one run seed, split by stream name into independent ChaCha streams.
//!
//! Every stream shares the key derived from the run seed and gets its own 64-bit ChaCha stream
//! id from a stable hash (FNV-1a) of its name, optionally with an index (`member`, 3). Drawing
//! from one stream therefore never changes what another yields, and adding a new stream
//! reshuffles nothing. The hash and the generator are pinned by a golden test.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The generator every stream uses.
pub type SimRng = ChaCha8Rng;

/// The factory of named streams for one run seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RngStreams {
    seed: u64,
}

/// FNV-1a 64: stable across Rust versions and platforms, unlike `std`'s hashers.
fn fnv1a64(bytes: &[u8], mut hash: u64) -> u64 {
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

impl RngStreams {
    /// Streams for the run seed `seed`.
    pub fn new(seed: u64) -> RngStreams {
        RngStreams { seed }
    }

    /// The run seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The stream called `name` (e.g. `"workload"`, `"faults"`).
    pub fn stream(&self, name: &str) -> SimRng {
        self.make(fnv1a64(name.as_bytes(), FNV_OFFSET))
    }

    /// The `index`-th stream of a family (e.g. `("member", 3)`, `("partition", 17)`).
    pub fn indexed(&self, name: &str, index: u64) -> SimRng {
        let h = fnv1a64(name.as_bytes(), FNV_OFFSET);
        self.make(fnv1a64(&index.to_le_bytes(), fnv1a64(b"#", h)))
    }

    fn make(&self, stream_id: u64) -> SimRng {
        let mut rng = SimRng::seed_from_u64(self.seed);
        rng.set_stream(stream_id);
        rng
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn first(rng: &mut SimRng, n: usize) -> Vec<u64> {
        (0..n).map(|_| rng.random::<u64>()).collect()
    }

    #[test]
    fn same_seed_same_stream_same_values() {
        let a = first(&mut RngStreams::new(7).stream("workload"), 8);
        let b = first(&mut RngStreams::new(7).stream("workload"), 8);
        assert_eq!(a, b);
    }

    #[test]
    fn streams_are_independent() {
        let streams = RngStreams::new(42);
        let alone = first(&mut streams.stream("faults"), 16);
        // Drawing heavily from another stream first must not change "faults".
        let mut workload = streams.stream("workload");
        let _ = first(&mut workload, 10_000);
        let after = first(&mut streams.stream("faults"), 16);
        assert_eq!(alone, after);
        assert_ne!(
            alone,
            first(&mut streams.stream("workload"), 16),
            "names give different streams"
        );
    }

    #[test]
    fn indexed_streams_differ_by_index_and_from_plain_names() {
        let s = RngStreams::new(1);
        let m0 = first(&mut s.indexed("member", 0), 4);
        let m1 = first(&mut s.indexed("member", 1), 4);
        let plain = first(&mut s.stream("member"), 4);
        assert_ne!(m0, m1);
        assert_ne!(m0, plain);
    }

    #[test]
    fn different_seeds_differ() {
        let a = first(&mut RngStreams::new(1).stream("workload"), 4);
        let b = first(&mut RngStreams::new(2).stream("workload"), 4);
        assert_ne!(a, b);
    }

    /// Golden values: if an upgrade of rand/rand_chacha or a change to the stream derivation
    /// alters them, every committed result changes. Update only on purpose.
    #[test]
    fn golden_first_values() {
        let got = first(&mut RngStreams::new(1).stream("workload"), 3);
        assert_eq!(got, GOLDEN_WORKLOAD_SEED1);
        let got = first(&mut RngStreams::new(1).indexed("member", 3), 2);
        assert_eq!(got, GOLDEN_MEMBER3_SEED1);
    }

    const GOLDEN_WORKLOAD_SEED1: [u64; 3] =
        [9644899987305209625, 3122711223207276775, 2097043188848131249];
    const GOLDEN_MEMBER3_SEED1: [u64; 2] = [18066034327249060806, 11123280657941004904];
}
