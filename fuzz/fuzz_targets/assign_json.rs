//! Fuzz target: any text as `assign`'s JSON input (DESIGN section 8). Parsing must return a
//! request or an error, never panic; a valid request is assigned and rendered as `assign`
//! does. Requests of more than 100,000 partition-members are parsed only (their assignment is
//! valid work, just slow for a fuzzer).
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Partitions x members above which a request is not assigned.
const MAX_WORK: u64 = 100_000;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(request) = assignors::request::parse_request(text) else { return };
    let input = &request.input;
    let partitions: u64 = input.topics.iter().map(|t| u64::from(t.partitions)).sum();
    if partitions.saturating_mul(input.members.len() as u64) > MAX_WORK {
        return;
    }
    let mut rng = sim_core::RngStreams::new(request.seed).stream("assignor");
    let assignment = assignors::assign(request.assignor, input, &mut rng);
    let _ = assignors::request::render_assignment(input, &assignment);
});
