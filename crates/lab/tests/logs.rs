//! The arrival times a run's Poisson logs hold stay bounded: each sample forgets those nobody
//! can read again (below the committed offset, every live owner's position and the books'
//! frontier: `World::trim_logs`), so a run's memory for its logs does not grow with its length.

use model::{Observation, Probe, WorldView};
use scenario::Scenario;
use sim_core::SimTime;
use std::path::Path;

/// The largest number of arrival times held after `from`, and the last held.
struct HeldTimes {
    from: SimTime,
    max_after: u64,
    last: u64,
}

impl Probe for HeldTimes {
    fn after_event(&mut self, view: &WorldView<'_, '_>) -> bool {
        self.last = view.held_arrivals();
        if view.now() >= self.from {
            self.max_after = self.max_after.max(self.last);
        }
        true
    }
}

fn scenario(protocol: &str) -> Scenario {
    let text = format!(
        r#"name = "held-times"
duration = "60s"
seed = 3
protocols = ["{protocol}"]

[[topic]]
name = "t0"
partitions = 2
rate = 100.0
arrival = "poisson"

[consumer]
processing = {{ dist = "lognormal", mean = "1ms", p99 = "4ms" }}
commit = "auto"
client = "java"

[consumer.config]
"auto.commit.interval.ms" = 5000

[group]
members = 1
"#
    );
    scenario::parse_str(&text, Path::new("held-times.toml")).unwrap_or_else(|e| panic!("{e:?}"))
}

/// One member keeping up with 2 partitions of 100 records/s for 60 s (about 12,000 records),
/// committing every 5 s: a partition's floor is its committed offset, at most about 5 s of
/// records behind (a commit every 5 s, acknowledged a round trip later), and its log is drawn a
/// little past the instant read (at most to the next sample, 1 s ahead), so from 10 s on
/// at most about 6-7 s of records a partition are held: under 1,600 for the two (8 s; 1,104
/// and 1,083 when written). Without the trim all of them are held: 12,000 at the end (checked
/// by a build whose sample skips the trim, which fails here).
#[test]
fn a_run_holds_a_bounded_window_of_arrival_times() {
    for protocol in ["eager:range", "consumer:uniform"] {
        let s = scenario(protocol);
        let spec = s.protocols[0];
        let mut probe = HeldTimes { from: SimTime::from_secs(10), max_after: 0, last: 0 };
        let mut observations: Vec<Observation> = Vec::new();
        model::simulate_probed(&s, spec, s.seed, &mut observations, &mut probe);
        let produced: u64 = observations
            .iter()
            .find_map(|o| match o {
                Observation::End { produced, .. } => Some(produced.iter().map(|(_, n)| n).sum()),
                _ => None,
            })
            .expect("an end");
        assert!((11_000..13_000).contains(&produced), "{protocol}: {produced} produced");
        assert!(probe.last > 0, "{protocol}: the logs hold the times still readable");
        assert!(probe.max_after <= 1_600, "{protocol}: {} held", probe.max_after);
    }
}
