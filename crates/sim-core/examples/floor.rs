//! The machine's floor for an event loop, measured beside a run so its wall time can be read
//! as a ratio (issue 29 item 5; `scripts/perf-reference.sh` prints both): a binary heap of
//! 24-byte events held at 100,000 pending, popped and pushed N times (pairs per second), and
//! dependent random reads over 256 MiB (nanoseconds per read: the memory latency a large
//! working set pays). The machines' speed for large working sets varies 2-4x between phases
//! while a small loop does not, so a wall time over this floor compares across phases.
//!
//!     cargo run --release -p sim-core --example floor [-- PAIRS]
//!
//! Prints one line: `heap_pairs_per_s=<f> mem_latency_ns=<f>`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::Instant;

/// Events pending in the heap while it is measured.
const PENDING: u64 = 100_000;
/// Pop/push pairs measured unless the command line says otherwise.
const DEFAULT_PAIRS: u64 = 20_000_000;
/// The dependent reads' working set: 256 MiB of `u64` indices.
const CHASE_WORDS: usize = 256 * 1024 * 1024 / 8;
/// Dependent reads measured.
const CHASE_READS: u64 = 20_000_000;

/// A 24-byte event: (time, sequence, payload), ordered by time then sequence.
type Event = Reverse<(u64, u64, u64)>;

/// SplitMix64: a fixed, fast sequence of pseudo-random words (the floor needs no stream).
fn split_mix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Pop/push pairs per second of a heap held at [`PENDING`] events: each pop is followed by
/// the push of an event a random delay (under one simulated second) after it.
fn heap_pairs_per_s(pairs: u64) -> f64 {
    let mut state = 1;
    let mut heap: BinaryHeap<Event> = (0..PENDING)
        .map(|seq| Reverse((split_mix(&mut state) % 1_000_000_000, seq, seq)))
        .collect();
    #[allow(clippy::disallowed_methods)] // the floor is wall time by definition, never simulated
    let started = Instant::now();
    for seq in PENDING..PENDING + pairs {
        let Reverse((at, _, payload)) = heap.pop().expect("the heap is never empty");
        let delay_ns = split_mix(&mut state) % 1_000_000_000;
        heap.push(Reverse((at + delay_ns, seq, payload ^ seq)));
    }
    let elapsed_s = started.elapsed().as_secs_f64();
    black_box(heap.peek());
    pairs as f64 / elapsed_s
}

/// Nanoseconds per read of a chain of dependent reads through a random single cycle over
/// [`CHASE_WORDS`] words (Sattolo's shuffle: every read's address is the previous read's
/// value, so no two overlap).
fn mem_latency_ns() -> f64 {
    let mut next: Vec<u64> = (0..CHASE_WORDS as u64).collect();
    let mut state = 7;
    for i in (1..CHASE_WORDS).rev() {
        let j = (split_mix(&mut state) % i as u64) as usize;
        next.swap(i, j);
    }
    let mut at = 0u64;
    #[allow(clippy::disallowed_methods)] // the floor is wall time by definition, never simulated
    let started = Instant::now();
    for _ in 0..CHASE_READS {
        at = next[at as usize];
    }
    let elapsed_s = started.elapsed().as_secs_f64();
    black_box(at);
    elapsed_s * 1e9 / CHASE_READS as f64
}

fn main() {
    let pairs = match std::env::args().nth(1) {
        None => DEFAULT_PAIRS,
        Some(text) => match text.parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("floor: PAIRS must be a positive whole number, not {text:?}");
                std::process::exit(2);
            }
        },
    };
    let pairs_per_s = heap_pairs_per_s(pairs);
    let latency_ns = mem_latency_ns();
    println!("heap_pairs_per_s={pairs_per_s:.0} mem_latency_ns={latency_ns:.1}");
}
