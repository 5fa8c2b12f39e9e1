//! A stochastic scenario's draws alone (issue 29 goal 1's floor): each record's arrival on a
//! Poisson log and its processing time, drawn as a run draws them, with nothing else. The
//! criterion bench (`cargo bench -p lab --bench model -- stochastic/draws_100k_records`) and
//! `crates/lab/examples/draw_floor.rs` (beside each stochastic row of
//! `scripts/perf-reference.sh`) time this one loop.

use model::processing::ProcessingSampler;
use model::workload::PartitionLog;
use scenario::{Arrival, Processing, Scenario};
use sim_core::{RngStreams, SimTime};

/// What is drawn for each record.
#[derive(Debug)]
pub struct Draws {
    /// The rate of the Poisson log whose arrivals are drawn (`None`: arrivals are not drawn).
    pub poisson_rate_per_s: Option<f64>,
    /// The processing time's sampler (a constant one draws nothing).
    pub processing: ProcessingSampler,
}

impl Draws {
    /// A scenario's draws: its first topic's arrivals if they are Poisson, its consumer's
    /// processing time. `None` if it draws nothing (no topic, or constant arrivals and
    /// constant processing).
    pub fn of_scenario(scenario: &Scenario) -> Option<Draws> {
        let topic = scenario.topics.first()?;
        let poisson_rate_per_s = (topic.arrival == Arrival::Poisson).then_some(topic.rate_per_s);
        let processing = &scenario.consumer.processing;
        if poisson_rate_per_s.is_none() && matches!(processing, Processing::Constant(_)) {
            return None;
        }
        Some(Draws { poisson_rate_per_s, processing: ProcessingSampler::new(processing) })
    }

    /// Draws `records` records from `streams` (the log's stream "w", the processing times'
    /// "p"): one processing time and one arrival a record, the log trimmed behind the last
    /// read as a run's commits trim it. Gives the processing times' sum and the arrival of
    /// offset `records` (so nothing is optimized away).
    pub fn draw(&self, streams: &RngStreams, records: u64) -> (SimTime, Option<SimTime>) {
        let mut log = self
            .poisson_rate_per_s
            .map(|rate| PartitionLog::poisson(SimTime::ZERO, rate, streams.stream("w")));
        let mut rng = streams.stream("p");
        let mut total = SimTime::ZERO;
        for offset in 0..records {
            total += self.processing.sample(&mut rng);
            if let Some(log) = log.as_mut() {
                log.arrival(offset);
                log.trim_below(offset);
            }
        }
        (total, log.map(|mut log| log.arrival(records)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn scenario(arrival: &str, processing: &str) -> Scenario {
        let text = format!(
            "name = \"d\"\nduration = \"1s\"\nprotocols = [\"eager:range\"]\n\
             [[topic]]\nname = \"t\"\npartitions = 2\nrate = 200.0\narrival = \"{arrival}\"\n[consumer]\nprocessing = {processing}\n\
             [group]\nmembers = 1\n"
        );
        scenario::parse_str(&text, Path::new("d.toml")).expect("a valid scenario")
    }

    /// A constant scenario draws nothing; a Poisson one draws its topic's arrivals.
    #[test]
    fn a_scenario_draws_what_it_randomizes() {
        assert!(Draws::of_scenario(&scenario("constant", "\"1ms\"")).is_none());
        let poisson = Draws::of_scenario(&scenario("poisson", "\"1ms\"")).expect("draws");
        assert_eq!(poisson.poisson_rate_per_s, Some(200.0));
        let lognormal = "{ dist = \"lognormal\", mean = \"1ms\", p99 = \"6ms\" }";
        let processing = Draws::of_scenario(&scenario("constant", lognormal)).expect("draws");
        assert_eq!(processing.poisson_rate_per_s, None);
    }

    /// The loop's values are the streams' own: the sum of the same processing times drawn one
    /// by one, and the arrival a log never trimmed gives for the same offset.
    #[test]
    fn the_loop_draws_the_streams_values() {
        let lognormal = "{ dist = \"lognormal\", mean = \"1ms\", p99 = \"6ms\" }";
        let draws = Draws::of_scenario(&scenario("poisson", lognormal)).expect("draws");
        let streams = RngStreams::new(7);
        let (total, last) = draws.draw(&streams, 5_000);
        let mut rng = streams.stream("p");
        let expected: SimTime =
            (0..5_000).fold(SimTime::ZERO, |t, _| t + draws.processing.sample(&mut rng));
        assert_eq!(total, expected);
        let mut untrimmed = PartitionLog::poisson(SimTime::ZERO, 200.0, streams.stream("w"));
        assert_eq!(last, Some(untrimmed.arrival(5_000)));
        assert!(last > Some(SimTime::from_millis(20_000)), "5,000 records at 200/s: {last:?}");
    }
}
