//! Per-record processing times drawn from the scenario's distribution.
//!
//! A lognormal is given by its mean and 99th percentile: with `ln X ~ N(mu, sigma^2)`,
//! `mean = exp(mu + sigma^2 / 2)` and `p99 = exp(mu + z99 * sigma)`, so
//! `sigma^2 / 2 - z99 * sigma + ln(p99 / mean) = 0`; the smaller root is taken. A ratio
//! `p99 / mean` above `exp(z99^2 / 2)` (about 15) has no solution: sigma is then capped at
//! `z99` (documented approximation, the mean is kept exact).

use rand_distr::{Distribution, Exp, LogNormal};
use scenario::Processing;
use sim_core::{SimRng, SimTime};

/// The 99th percentile of the standard normal distribution.
const Z99: f64 = 2.326_347_874_040_841;

/// A sampler for one member's per-record processing times.
#[derive(Clone, Debug)]
pub enum ProcessingSampler {
    /// Always the same.
    Constant(SimTime),
    /// Lognormal in nanoseconds.
    Lognormal(LogNormal<f64>),
    /// Exponential in nanoseconds.
    Exponential(Exp<f64>),
}

impl ProcessingSampler {
    /// The sampler for a scenario's `processing`.
    pub fn new(processing: &Processing) -> ProcessingSampler {
        match *processing {
            Processing::Constant(t) => ProcessingSampler::Constant(t),
            Processing::Lognormal { mean, p99 } => {
                let (mu, sigma) = lognormal_params(mean.as_nanos() as f64, p99.as_nanos() as f64);
                ProcessingSampler::Lognormal(LogNormal::new(mu, sigma).expect("finite sigma"))
            }
            Processing::Exponential { mean } => {
                let rate = 1.0 / (mean.as_nanos().max(1) as f64);
                ProcessingSampler::Exponential(Exp::new(rate).expect("positive rate"))
            }
        }
    }

    /// One record's processing time.
    pub fn sample(&self, rng: &mut SimRng) -> SimTime {
        match self {
            ProcessingSampler::Constant(t) => *t,
            ProcessingSampler::Lognormal(d) => SimTime::from_nanos_f64(d.sample(rng)),
            ProcessingSampler::Exponential(d) => SimTime::from_nanos_f64(d.sample(rng)),
        }
    }
}

/// A fetch's records listed as a log's read takes them, each with the end of its processing
/// drawn as it is listed: record by record in the order taken, from the member's stream, one
/// after the other from `end` (as `Consumer::timed_batch` draws a batch's, after the fetch:
/// the log's reads draw from the partitions' own streams, so the interleaving changes no
/// value). Listing and drawing in one loop spares a second loop over each part's records
/// (fast stepping's folded catch-ups, `world/stepper/fold.rs`).
pub struct Listing<'a> {
    /// The arrivals of the records listed.
    pub arrivals: &'a mut Vec<SimTime>,
    /// The ends of their processing.
    pub ends: &'a mut Vec<SimTime>,
    /// The end of the last record's processing (the poll's time before the first).
    pub end: SimTime,
    /// The member's processing times.
    pub processing: &'a ProcessingSampler,
    /// The member's stream.
    pub rng: &'a mut SimRng,
}

impl Listing<'_> {
    /// Draws the ends of the records listed from `from` on (their arrivals are listed).
    fn draw_ends_from(&mut self, from: usize) {
        let listed = self.arrivals.len() - from;
        self.ends.reserve(listed);
        for _ in 0..listed {
            self.end += self.processing.sample(self.rng);
            self.ends.push(self.end);
        }
    }
}

impl crate::workload::ArrivalList for Listing<'_> {
    #[inline]
    fn reserve(&mut self, additional: usize) {
        self.arrivals.reserve(additional);
        self.ends.reserve(additional);
    }
    #[inline(always)]
    fn push(&mut self, arrival: SimTime) {
        self.arrivals.push(arrival);
        self.end += self.processing.sample(self.rng);
        self.ends.push(self.end);
    }
    fn append_with<R>(&mut self, append: impl FnOnce(&mut Vec<SimTime>) -> R) -> R {
        let from = self.arrivals.len();
        let given = append(self.arrivals);
        self.draw_ends_from(from);
        given
    }
}

/// `(mu, sigma)` of the lognormal with this mean and 99th percentile (both in ns).
pub fn lognormal_params(mean_ns: f64, p99_ns: f64) -> (f64, f64) {
    let log_ratio = (p99_ns / mean_ns).ln().max(0.0);
    let disc = Z99 * Z99 - 2.0 * log_ratio;
    let sigma = if disc > 0.0 { Z99 - disc.sqrt() } else { Z99 };
    let mu = mean_ns.ln() - sigma * sigma / 2.0;
    (mu, sigma)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lognormal_params_reproduce_mean_and_p99() {
        let (mu, sigma) = lognormal_params(1e6, 1e7);
        let mean = (mu + sigma * sigma / 2.0).exp();
        let p99 = (mu + Z99 * sigma).exp();
        assert!((mean - 1e6).abs() < 1e-3, "mean {mean}");
        assert!((p99 - 1e7).abs() < 1e-2, "p99 {p99}");
    }

    #[test]
    fn sampled_mean_is_close() {
        let s = ProcessingSampler::new(&Processing::Exponential { mean: SimTime::from_millis(2) });
        let mut rng = sim_core::RngStreams::new(1).stream("t");
        let n = 20_000u64;
        let total: u64 = (0..n).map(|_| s.sample(&mut rng).as_nanos()).sum();
        let mean_ms = total as f64 / n as f64 / 1e6;
        // Standard error of the mean: 2 ms / sqrt(20000) = 0.014 ms; allow 5 of them.
        assert!((mean_ms - 2.0).abs() < 0.07, "mean {mean_ms}");
    }
}
