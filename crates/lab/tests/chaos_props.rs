//! Property tests for the pieces chaos mode stands on, where a whole scenario run is too coarse:
//! the scenario generator always yields valid, small scenarios that round-trip through the
//! file format; the event queue pops in `(time, insertion)` order whatever timers are armed,
//! moved and cancelled.

use lab::chaos;
use lab::chaos_gen::{self, fault_horizon, generate, liveness_bound, Roster};
use proptest::prelude::*;
use scenario::{EventKind, Scenario};
use sim_core::{EventQueue, SimTime};
use std::path::Path;

/// The generated scenario, written out and read back, is valid and equal to itself.
fn round_trip(seed: u64) -> Result<(Scenario, Scenario), String> {
    let scenario = generate(seed);
    let text = scenario::to_toml(&scenario);
    let again = scenario::parse_str(&text, Path::new(""))
        .map_err(|errors| format!("seed {seed} does not load: {errors:?}\n{text}"))?;
    Ok((scenario, again))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Any seed gives a scenario `run` accepts, equal after a trip through TOML.
    #[test]
    fn generated_scenarios_are_valid_and_round_trip(seed in 0..=chaos::MAX_SEED) {
        let (scenario, again) = round_trip(seed).map_err(TestCaseError::fail)?;
        prop_assert_eq!(again, scenario);
    }

    /// The size limits of docs/chaos.md hold, and the liveness deadline lies inside the run.
    #[test]
    fn generated_scenarios_stay_small(seed in 0..=chaos::MAX_SEED) {
        let s = generate(seed);
        prop_assert!(s.duration <= chaos_gen::MAX_DURATION, "duration {}", s.duration);
        let c = &s.consumer.config;
        prop_assert!(c.heartbeat_interval * 3 <= c.session_timeout);
        prop_assert!(c.max_poll_interval >= c.session_timeout);
        prop_assert!(c.session_timeout >= s.broker.group_min_session_timeout);
        let mut partitions: u32 = s.topics.iter().map(|t| t.partitions).sum();
        let mut roster = Roster::initial(s.group.members);
        prop_assert!(roster.present() <= chaos_gen::MAX_MEMBERS);
        for event in &s.events {
            roster.apply(event);
            prop_assert!(roster.present() <= chaos_gen::MAX_MEMBERS, "{:?}", event);
            if let EventKind::AddPartitions { count, .. } = event.kind {
                partitions += count;
            }
        }
        prop_assert!(partitions <= chaos_gen::MAX_PARTITIONS);
        let deadline = fault_horizon(&s) + liveness_bound(&s);
        prop_assert!(deadline < s.duration, "deadline {} end {}", deadline, s.duration);
        prop_assert!(chaos::liveness_of(&s).is_some());
    }
}

/// One operation on the queue under test.
#[derive(Clone, Debug)]
enum Op {
    Schedule(u64),
    Arm(usize, u64),
    Cancel(usize),
    Pop,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u64..40).prop_map(Op::Schedule),
        (0usize..4, 0u64..40).prop_map(|(k, t)| Op::Arm(k, t)),
        (0usize..4).prop_map(Op::Cancel),
        Just(Op::Pop),
    ]
}

/// The reference: live entries `(time, seq, label)`; a timer's entry is replaced on re-arm.
#[derive(Default)]
struct Reference {
    entries: Vec<(u64, u64, String)>,
    timers: [Option<u64>; 4],
    seq: u64,
    now: u64,
}

impl Reference {
    fn add(&mut self, at: u64, label: String) -> u64 {
        self.seq += 1;
        self.entries.push((at, self.seq, label));
        self.seq
    }
    fn drop_timer(&mut self, k: usize) {
        if let Some(seq) = self.timers[k].take() {
            self.entries.retain(|e| e.1 != seq);
        }
    }
    fn pop(&mut self) -> Option<(u64, String)> {
        let i = (0..self.entries.len()).min_by_key(|i| (self.entries[*i].0, self.entries[*i].1))?;
        let (at, seq, label) = self.entries.remove(i);
        for t in self.timers.iter_mut() {
            if *t == Some(seq) {
                *t = None;
            }
        }
        self.now = at;
        Some((at, label))
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Whatever mix of one-shot events and armed, re-armed and cancelled timers: pops come out
    /// by (time, insertion order of the live entry), a cancelled or moved timer fires never at
    /// its old time, and the clock never goes back. Times in the past are clamped to `now`
    /// (the world never schedules into the past; the reference does the same).
    #[test]
    fn the_queue_pops_live_entries_in_time_then_insertion_order(ops in proptest::collection::vec(op(), 0..120)) {
        let mut q: EventQueue<String> = EventQueue::new();
        let timers: Vec<_> = (0..4).map(|_| q.new_timer()).collect();
        let mut reference = Reference::default();
        let mut counter = 0u32;
        for op in ops {
            match op {
                Op::Schedule(t) => {
                    let at = t.max(reference.now);
                    counter += 1;
                    let label = format!("e{counter}");
                    q.schedule(SimTime::from_millis(at), label.clone());
                    reference.add(at, label);
                }
                Op::Arm(k, t) => {
                    let at = t.max(reference.now);
                    counter += 1;
                    let label = format!("t{k}-{counter}");
                    q.arm(timers[k], SimTime::from_millis(at), label.clone());
                    reference.drop_timer(k);
                    let seq = reference.add(at, label);
                    reference.timers[k] = Some(seq);
                }
                Op::Cancel(k) => {
                    q.cancel(timers[k]);
                    reference.drop_timer(k);
                }
                Op::Pop => {
                    let got = q.pop().map(|(t, e)| (t.as_millis(), e));
                    prop_assert_eq!(got, reference.pop());
                }
            }
        }
        while let Some(expected) = reference.pop() {
            prop_assert_eq!(q.pop().map(|(t, e)| (t.as_millis(), e)), Some(expected));
        }
        prop_assert!(q.pop().is_none());
    }
}
