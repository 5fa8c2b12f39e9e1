//! Producers in closed form: when offset `k` of a partition arrives, and how many records a
//! partition holds at a time, without one event per record.
//!
//! Constant arrivals are exact arithmetic (offset `k` arrives at `start + (k + 1) / rate`).
//! Poisson arrivals are drawn lazily from the partition's own stream
//! (`RngStreams::indexed("workload", partition index)`), so the order in which partitions are
//! read never changes what any of them yields; arrival times below the lowest offset anyone can
//! still read are dropped ([`PartitionLog::trim_below`]), and a backlog keeps a checkpoint of
//! the stream per block of offsets instead of every time (`poisson`: exact, bounded memory).

mod poisson;

use poisson::PoissonArrivals;
use sim_core::{SimRng, SimTime};

/// Where a read of a log lists the arrivals of the records it takes
/// ([`PartitionLog::read_into`]): a plain list, or a fetch's list that draws each record's
/// processing as it lists it (`processing::Listing`).
pub trait ArrivalList {
    /// Room for `additional` more.
    fn reserve(&mut self, additional: usize);
    /// The next record's arrival.
    fn push(&mut self, arrival: SimTime);
    /// Appends what `append` appends to a plain list, and gives what it gives.
    fn append_with<R>(&mut self, append: impl FnOnce(&mut Vec<SimTime>) -> R) -> R;
}

impl ArrivalList for Vec<SimTime> {
    #[inline]
    fn reserve(&mut self, additional: usize) {
        Vec::reserve(self, additional);
    }
    #[inline]
    fn push(&mut self, arrival: SimTime) {
        Vec::push(self, arrival);
    }
    #[inline]
    fn append_with<R>(&mut self, append: impl FnOnce(&mut Vec<SimTime>) -> R) -> R {
        append(self)
    }
}

/// How one partition's records arrive.
#[derive(Clone, Debug)]
enum Process {
    /// Evenly spaced at `rate_per_s`; zero rate means no records ever. `spacing_ns`: the gap
    /// when the rate is a whole divisor of 10^9 per second (then integer arithmetic gives the
    /// same times as the floating-point formula, below [`EXACT_OFFSETS`]).
    Constant { rate_per_s: f64, spacing_ns: Option<u64> },
    /// Poisson arrivals drawn from the partition's own stream.
    Poisson(PoissonArrivals),
}

/// The log of one partition: records appended from `start` on.
#[derive(Clone, Debug)]
pub struct PartitionLog {
    start: SimTime,
    process: Process,
}

const NANOS_PER_SEC: f64 = 1e9;

/// Offsets below which `(offset + 1) x 10^9` is an exact `f64` (2^53 / 10^9): there the
/// floating-point arrival formula of an exactly spaced log is exact.
const EXACT_OFFSETS: u64 = (1u64 << 53) / 1_000_000_000;

/// The whole-nanosecond gap of a rate that divides 10^9 records per second exactly.
fn whole_spacing_ns(rate_per_s: f64) -> Option<u64> {
    let whole_rate = rate_per_s >= 1.0 && rate_per_s.fract() == 0.0 && rate_per_s <= 1e9;
    let rate = rate_per_s as u64;
    (whole_rate && 1_000_000_000 % rate == 0).then(|| 1_000_000_000 / rate)
}

impl PartitionLog {
    /// A partition with evenly spaced arrivals from `start`.
    pub fn constant(start: SimTime, rate_per_s: f64) -> PartitionLog {
        let spacing_ns = whole_spacing_ns(rate_per_s);
        PartitionLog { start, process: Process::Constant { rate_per_s, spacing_ns } }
    }

    /// A partition with Poisson arrivals from `start`, drawn from `rng`.
    pub fn poisson(start: SimTime, rate_per_s: f64, rng: SimRng) -> PartitionLog {
        PartitionLog::poisson_sized(start, rate_per_s, rng, poisson::RUN_SIZES)
    }

    /// A Poisson log keeping `sizes` of its drawn times (tests use small ones).
    fn poisson_sized(
        start: SimTime,
        rate_per_s: f64,
        rng: SimRng,
        sizes: poisson::Sizes,
    ) -> PartitionLog {
        let arrivals = PoissonArrivals::new(rate_per_s, rng, sizes);
        PartitionLog { start, process: Process::Poisson(arrivals) }
    }

    /// For a constant log whose arrivals are exactly `spacing` apart for every offset below
    /// `limit` (a whole rate that divides 10^9 records per second; the arithmetic of
    /// [`PartitionLog::arrival`] is exact there): `Some((spacing, limit))`. Shifting such a log by
    /// `d` offsets shifts its arrivals by exactly `d x spacing` (fast stepping's periodic jumps).
    pub fn exact_spacing(&self) -> Option<(SimTime, u64)> {
        let Process::Constant { spacing_ns, .. } = self.process else { return None };
        spacing_ns.map(|s| (SimTime::from_nanos(s), EXACT_OFFSETS))
    }

    /// When offset `offset` arrives (`SimTime::MAX` if it never does).
    #[inline]
    pub fn arrival(&mut self, offset: u64) -> SimTime {
        let start = self.start;
        match &mut self.process {
            Process::Constant { spacing_ns: Some(s), .. } if offset + 1 < EXACT_OFFSETS => {
                start.saturating_add(SimTime::from_nanos((offset + 1) * *s))
            }
            Process::Constant { rate_per_s, .. } => constant_arrival(start, *rate_per_s, offset),
            Process::Poisson(poisson) => match poisson.drawn(offset) {
                Some(arrival) => arrival,
                None => poisson.arrival(start, offset),
            },
        }
    }

    /// The spacing `s` when offsets `first..first + count` arrive exactly at
    /// `arrival(first) + i x s`: a constant log with a whole spacing, below the offsets of
    /// exact arithmetic.
    pub fn exact_spacing_over(&self, first: u64, count: u64) -> Option<SimTime> {
        match &self.process {
            Process::Constant { spacing_ns: Some(s), .. } if first + count < EXACT_OFFSETS => {
                Some(SimTime::from_nanos(*s))
            }
            _ => None,
        }
    }

    /// Appends the arrivals of offsets `first..first + count` to `out` (the same times as
    /// [`PartitionLog::arrival`] of each; exactly spaced constant logs in one tight loop).
    pub fn arrivals_into(&mut self, first: u64, count: u64, out: &mut Vec<SimTime>) {
        let start = self.start;
        match &mut self.process {
            Process::Constant { spacing_ns: Some(s), .. } if first + count < EXACT_OFFSETS => {
                let s = *s;
                out.extend(
                    (first + 1..=first + count)
                        .map(|k| start.saturating_add(SimTime::from_nanos(k * s))),
                );
            }
            Process::Poisson(poisson) => poisson.arrivals_into(start, first, count, out),
            _ => out.extend((first..first + count).map(|offset| self.arrival(offset))),
        }
    }

    /// `max(known, log_end(at))`, searched in the Poisson times from `known` on instead of the
    /// whole history: a consumer at position `known` reads the hot end of the log.
    #[inline]
    pub fn log_end_from(&mut self, at: SimTime, known: u64) -> u64 {
        match &self.process {
            Process::Poisson(poisson) => {
                // A reader at the log end asks whether anything arrived: usually not.
                if poisson.drawn(known).is_some_and(|arrival| arrival > at) {
                    return known;
                }
                self.poisson_log_end_from(at, known)
            }
            _ => self.log_end(at).max(known),
        }
    }

    /// A fetch of at most `max` records from position `known` at `at` (`LogView::read_from`):
    /// `min(log_end_from(at, known), known + max)`, with the arrival of that offset unless it
    /// is the cap. A Poisson reader of the held times walks them from `known` (a fetch takes
    /// the few records that arrived since the last, and copies each of them anyway).
    #[inline]
    pub fn read_from(&mut self, at: SimTime, known: u64, max: u64) -> (u64, Option<SimTime>) {
        if let Process::Poisson(poisson) = &self.process {
            if let Some(read) = poisson.read_held(at, known, max) {
                return read;
            }
        }
        let end = self.log_end_from(at, known);
        read_capped(end, known, max, |offset| self.arrival(offset))
    }

    /// [`PartitionLog::read_from`] that also appends the arrivals of the offsets read to
    /// `out` (`LogView::read_into`): a Poisson reader of the held times copies them as it
    /// walks them.
    #[inline(always)]
    pub fn read_into<A: ArrivalList>(
        &mut self,
        at: SimTime,
        known: u64,
        max: u64,
        out: &mut A,
    ) -> (u64, Option<SimTime>) {
        if let Process::Poisson(poisson) = &self.process {
            if let Some(read) = poisson.read_held_into(at, known, max, out) {
                return read;
            }
        }
        let read = self.read_from(at, known, max);
        out.append_with(|list| self.arrivals_into(known, read.0 - known, list));
        read
    }

    /// [`PartitionLog::log_end_from`] past its first look.
    #[inline(never)]
    fn poisson_log_end_from(&mut self, at: SimTime, known: u64) -> u64 {
        let start = self.start;
        match &mut self.process {
            Process::Poisson(poisson) if !poisson.never() && at >= start => {
                poisson.log_end_from(start, at, known)
            }
            _ => self.log_end(at).max(known),
        }
    }

    /// How many records have arrived by `at` (inclusive): the log end offset.
    pub fn log_end(&mut self, at: SimTime) -> u64 {
        if at < self.start {
            return 0;
        }
        let start = self.start;
        match &mut self.process {
            Process::Constant { spacing_ns: Some(s), .. }
                if (at - start).as_nanos() / *s < EXACT_OFFSETS =>
            {
                (at - start).as_nanos() / *s
            }
            Process::Constant { rate_per_s, .. } => constant_count(start, *rate_per_s, at),
            // Draw past `at`, then binary-search the drawn times.
            Process::Poisson(poisson) => poisson.log_end(start, at),
        }
    }

    /// The log end offsets of `logs` at `at`, summed. Constant logs with the same start and
    /// rate have the same log end: a run of them (every partition of a topic) is computed once
    /// (a sample sums the log ends of every partition).
    pub fn log_end_sum(logs: &mut [PartitionLog], at: SimTime) -> u64 {
        let mut total = 0;
        let mut last: Option<(usize, u64)> = None;
        for i in 0..logs.len() {
            let end = match last {
                Some((j, end)) if logs[i].arrives_like(&logs[j]) => end,
                _ => logs[i].log_end(at),
            };
            if matches!(logs[i].process, Process::Constant { .. }) {
                last = Some((i, end));
            }
            total += end;
        }
        total
    }

    /// Whether both are constant logs with the same start and rate (the same arrivals): every
    /// read of one gives what the same read of the other gives.
    pub fn arrives_like(&self, other: &PartitionLog) -> bool {
        match (&self.process, &other.process) {
            (
                Process::Constant { rate_per_s: a, spacing_ns: sa },
                Process::Constant { rate_per_s: b, spacing_ns: sb },
            ) => self.start == other.start && a.to_bits() == b.to_bits() && sa == sb,
            _ => false,
        }
    }

    /// Arrival times held (a Poisson log's, from the trimmed offset on; a constant log holds
    /// none).
    pub fn held_arrivals(&self) -> u64 {
        match &self.process {
            Process::Poisson(poisson) => poisson.held_len() as u64,
            Process::Constant { .. } => 0,
        }
    }

    /// Forgets arrival times of offsets below `offset` (nobody will read them again).
    pub fn trim_below(&mut self, offset: u64) {
        if let Process::Poisson(poisson) = &mut self.process {
            poisson.trim_below(offset);
        }
    }
}

/// Offset `k` of a constant-rate partition arrives at `start + (k + 1) / rate`, rounded to the
/// nearest nanosecond. Out of line: the reads of the other logs stay lean.
#[inline(never)]
fn constant_arrival(start: SimTime, rate_per_s: f64, offset: u64) -> SimTime {
    if rate_per_s <= 0.0 {
        return SimTime::MAX;
    }
    let nanos = ((offset as f64 + 1.0) * NANOS_PER_SEC / rate_per_s).round();
    if nanos >= u64::MAX as f64 {
        return SimTime::MAX;
    }
    start.saturating_add(SimTime::from_nanos(nanos as u64))
}

/// The number of `k` with `constant_arrival(k) <= at`: an estimate from the rate, corrected by
/// the exact arrival function so the two always agree.
fn constant_count(start: SimTime, rate_per_s: f64, at: SimTime) -> u64 {
    if rate_per_s <= 0.0 {
        return 0;
    }
    let elapsed_s = (at - start).as_nanos() as f64 / NANOS_PER_SEC;
    let mut n = (elapsed_s * rate_per_s).floor().max(0.0) as u64;
    while n > 0 && constant_arrival(start, rate_per_s, n - 1) > at {
        n -= 1;
    }
    while constant_arrival(start, rate_per_s, n) <= at {
        n += 1;
    }
    n
}

/// Per-partition rates of a topic: Zipf weights `1 / (i + 1)^skew`, normalised so the mean is
/// `rate_per_s`.
pub fn skewed_rates(rate_per_s: f64, partitions: u32, skew: f64) -> Vec<f64> {
    let weights: Vec<f64> = (0..partitions).map(|i| 1.0 / f64::from(i + 1).powf(skew)).collect();
    let sum: f64 = weights.iter().sum();
    weights.iter().map(|w| rate_per_s * f64::from(partitions) * w / sum).collect()
}

/// A read from offset `known` of a log whose records end at `end`, taking at most `max`: the
/// offset it stops at and, when it stopped at the log's end rather than the cap, the arrival
/// of the record there (`arrival_at`), which the next read starts from.
#[inline]
pub(crate) fn read_capped(
    end: u64,
    known: u64,
    max: u64,
    arrival_at: impl FnOnce(u64) -> SimTime,
) -> (u64, Option<SimTime>) {
    if end - known >= max {
        return (known + max, None);
    }
    (end, Some(arrival_at(end)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::RngStreams;

    #[test]
    fn constant_arrivals_are_evenly_spaced() {
        // 100 records/s: offset k arrives at (k + 1) * 10 ms.
        let mut log = PartitionLog::constant(SimTime::ZERO, 100.0);
        assert_eq!(log.arrival(0), SimTime::from_millis(10));
        assert_eq!(log.arrival(99), SimTime::from_secs(1));
        assert_eq!(log.log_end(SimTime::from_millis(9)), 0);
        assert_eq!(log.log_end(SimTime::from_millis(10)), 1);
        assert_eq!(log.log_end(SimTime::from_secs(10)), 1000);
    }

    /// The summed log ends equal the log ends one by one, over runs of alike constant logs
    /// broken by other starts, other rates and a Poisson log.
    #[test]
    fn log_end_sum_is_the_sum_of_log_ends() {
        let rng = sim_core::RngStreams::new(3).stream("w");
        let mut logs = vec![
            PartitionLog::constant(SimTime::ZERO, 100.0),
            PartitionLog::constant(SimTime::ZERO, 100.0),
            PartitionLog::constant(SimTime::from_millis(5), 100.0),
            PartitionLog::poisson(SimTime::ZERO, 100.0, rng),
            PartitionLog::constant(SimTime::from_millis(5), 100.0),
            PartitionLog::constant(SimTime::from_millis(5), 3.0),
            PartitionLog::constant(SimTime::from_millis(5), 3.0),
        ];
        for ms in [0, 5, 14, 15, 1_004, 60_000] {
            let at = SimTime::from_millis(ms);
            let one_by_one: u64 = logs.iter_mut().map(|l| l.log_end(at)).sum();
            assert_eq!(PartitionLog::log_end_sum(&mut logs, at), one_by_one, "at {ms} ms");
        }
        // At 1,004 ms: 100 + 100 (from 0: 10 ms apart), 99 + 99 (from 5 ms), 2 + 2 (3/s from
        // 5 ms: 338.3 and 671.7 ms), and the Poisson log's own count.
        let at = SimTime::from_millis(1_004);
        let poisson = logs[3].log_end(at);
        assert_eq!(PartitionLog::log_end_sum(&mut logs, at), 402 + poisson);
    }

    /// 100/s is 10 ms apart exactly; 3/s (333,333,333.3 ns) is not; Poisson never.
    #[test]
    fn exact_spacing_only_for_whole_nanosecond_gaps() {
        let log = PartitionLog::constant(SimTime::from_millis(7), 100.0);
        let (spacing, limit) = log.exact_spacing().expect("10 ms");
        assert_eq!(spacing, SimTime::from_millis(10));
        let mut log = log;
        for k in [0u64, 1, 12_345, limit - 2] {
            assert_eq!(log.arrival(k + 3) - log.arrival(k), SimTime::from_millis(30), "{k}");
        }
        assert_eq!(PartitionLog::constant(SimTime::ZERO, 3.0).exact_spacing(), None);
        assert_eq!(PartitionLog::constant(SimTime::ZERO, 0.0).exact_spacing(), None);
        let rng = sim_core::RngStreams::new(1).stream("w");
        assert_eq!(PartitionLog::poisson(SimTime::ZERO, 100.0, rng).exact_spacing(), None);
    }

    /// Galloping from a known prefix gives the same log end as the full search (and never
    /// less than the prefix).
    #[test]
    fn log_end_from_a_known_prefix_equals_log_end() {
        let rng = sim_core::RngStreams::new(7).stream("w");
        let mut log = PartitionLog::poisson(SimTime::from_millis(3), 250.0, rng);
        let mut reference = log.clone();
        for ms in [0u64, 2, 3, 4, 10, 77, 500, 501, 2_000] {
            let at = SimTime::from_millis(ms);
            let end = reference.log_end(at);
            for known in [0, end / 2, end.saturating_sub(1), end, end + 3] {
                assert_eq!(log.log_end_from(at, known), end.max(known), "at {ms} ms from {known}");
            }
        }
    }

    /// `read_from` is `log_end_from` capped at `known + max`, with the arrival of the offset
    /// it returns unless that is the cap: on a Poisson log read from the held times (a reader
    /// that keeps up), past them (the answer is drawn first), and with the cap inside and
    /// past the arrived records; and on a constant log. `read_into` is the same read that
    /// appends the arrivals of the offsets read (after what the list held).
    #[test]
    fn read_from_is_log_end_from_with_the_next_arrival() {
        let rng = sim_core::RngStreams::new(11).stream("w");
        let poisson = PartitionLog::poisson(SimTime::from_millis(3), 250.0, rng);
        for mut log in [poisson, PartitionLog::constant(SimTime::from_millis(3), 250.0)] {
            let mut reference = log.clone();
            for ms in [0u64, 2, 3, 4, 10, 77, 500, 501, 2_000, 2_001, 9_000] {
                let at = SimTime::from_millis(ms);
                let end = reference.log_end(at);
                for known in [end.saturating_sub(40), end.saturating_sub(1), end, end + 3] {
                    for max in [1, 2, 7, 40, 500] {
                        let capped = reference.log_end_from(at, known).min(known + max);
                        let arrival = (capped < known + max).then(|| reference.arrival(capped));
                        // Each read of a log as it was before the first (not drawn past `at`).
                        let (mut into_log, mut listing_log) = (log.clone(), log.clone());
                        let read = log.read_from(at, known, max);
                        assert_eq!(read, (capped, arrival), "at {ms} ms from {known}, max {max}");
                        // The same read, appending the arrivals of the offsets it read.
                        let mut listed = vec![SimTime::MAX];
                        let read = into_log.read_into(at, known, max, &mut listed);
                        assert_eq!(read, (capped, arrival), "into: at {ms} ms from {known}");
                        let expected: Vec<SimTime> = std::iter::once(SimTime::MAX)
                            .chain((known..capped).map(|k| reference.arrival(k)))
                            .collect();
                        assert_eq!(listed, expected, "at {ms} ms from {known}, max {max}");
                        // The same read through a fetch's listing: the same arrivals, each
                        // with its processing's end drawn in order after the last end.
                        let read = listing_read(&mut listing_log, (at, known, max), &expected[1..]);
                        assert_eq!(read, (capped, arrival), "listing: at {ms} ms from {known}");
                    }
                }
            }
        }
    }

    /// Reads `span` of `log` through a [`Listing`](crate::processing::Listing) whose lists
    /// hold one record already, and checks that it listed `arrivals` after it, each with its
    /// end: the last end plus a processing time drawn in order from the same stream.
    fn listing_read(
        log: &mut PartitionLog,
        (at, known, max): (SimTime, u64, u64),
        arrivals: &[SimTime],
    ) -> (u64, Option<SimTime>) {
        use crate::processing::{Listing, ProcessingSampler};
        let processing = ProcessingSampler::new(&scenario::Processing::Lognormal {
            mean: SimTime::from_millis(1),
            p99: SimTime::from_millis(6),
        });
        let (mut rng, mut reference_rng) =
            (RngStreams::new(5).stream("m"), RngStreams::new(5).stream("m"));
        let (mut listed, mut ends) = (vec![SimTime::ZERO], vec![SimTime::from_secs(1)]);
        let mut listing = Listing {
            arrivals: &mut listed,
            ends: &mut ends,
            end: SimTime::from_secs(1),
            processing: &processing,
            rng: &mut rng,
        };
        let read = log.read_into(at, known, max, &mut listing);
        let end = listing.end;
        let mut expected_end = SimTime::from_secs(1);
        let expected_ends: Vec<SimTime> = std::iter::once(expected_end)
            .chain(arrivals.iter().map(|_| {
                expected_end += processing.sample(&mut reference_rng);
                expected_end
            }))
            .collect();
        assert_eq!(listed[1..], *arrivals, "listed arrivals at {at:?} from {known}, max {max}");
        assert_eq!(ends, expected_ends, "ends at {at:?} from {known}, max {max}");
        assert_eq!(end, *expected_ends.last().expect("one end at least"));
        assert_eq!(rng, reference_rng, "one draw a record");
        read
    }

    /// The integer path of an exactly spaced log gives the floating-point formula's times and
    /// counts, at the ends of its range too.
    #[test]
    fn whole_rates_use_exact_integer_arithmetic() {
        for rate in [1.0, 100.0, 250.0, 1_000.0, 8.0] {
            let start = SimTime::from_millis(3);
            let mut log = PartitionLog::constant(start, rate);
            assert!(log.exact_spacing().is_some(), "{rate}");
            for k in [0u64, 1, 99, 12_345, EXACT_OFFSETS - 3, EXACT_OFFSETS - 2] {
                let float = constant_arrival(start, rate, k);
                assert_eq!(log.arrival(k), float, "rate {rate} offset {k}");
                assert_eq!(log.log_end(float), constant_count(start, rate, float), "{rate} {k}");
                let before = float - SimTime::from_nanos(1);
                assert_eq!(log.log_end(before), constant_count(start, rate, before), "{rate} {k}");
            }
        }
        assert_eq!(whole_spacing_ns(3.0), None); // 333,333,333.3 ns
        assert_eq!(whole_spacing_ns(33.333333), None);
        assert_eq!(whole_spacing_ns(0.5), None); // exact, but not a whole rate: float path
    }

    #[test]
    fn a_late_partition_starts_empty() {
        // Added at 5 s with 3 records/s: offset 0 at 5 s + 333.333333 ms (rounded to ns).
        let mut log = PartitionLog::constant(SimTime::from_secs(5), 3.0);
        assert_eq!(log.log_end(SimTime::from_secs(5)), 0);
        assert_eq!(log.arrival(0), SimTime::from_nanos(5_333_333_333));
        assert_eq!(log.log_end(SimTime::from_secs(6)), 3);
    }

    #[test]
    fn poisson_count_and_arrival_agree_and_trim_keeps_values() {
        let mut log = PartitionLog::poisson(SimTime::ZERO, 50.0, RngStreams::new(3).stream("w"));
        let n = log.log_end(SimTime::from_secs(20));
        // Mean 1000 over 20 s; a Poisson count stays well within +-5 sigma (~158).
        assert!((842..=1158).contains(&n), "count {n}");
        assert!(log.arrival(n - 1) <= SimTime::from_secs(20));
        assert!(log.arrival(n) > SimTime::from_secs(20));
        let a = log.arrival(600);
        log.trim_below(500);
        assert_eq!(log.arrival(600), a);
        assert_eq!(log.log_end(SimTime::from_secs(20)), n);
    }

    /// Reads in any order, trims and compactions of the drawn times change no arrival: every
    /// read gives the arrival a log read offset by offset gives.
    #[test]
    fn poisson_reads_after_trims_and_compactions_keep_values() {
        let stream = || RngStreams::new(11).stream("w");
        let start = SimTime::from_millis(2);
        let mut reference = PartitionLog::poisson(start, 400.0, stream());
        let expected: Vec<SimTime> = (0..3_000).map(|k| reference.arrival(k)).collect();
        let mut log = PartitionLog::poisson(start, 400.0, stream());
        let mut known = 0;
        let mut listed = Vec::new();
        for ms in (0..7_000u64).step_by(7) {
            let at = SimTime::from_millis(ms);
            let end = log.log_end_from(at, known);
            let arrived = expected.partition_point(|t| *t <= at) as u64;
            assert_eq!(end, arrived.max(known), "at {ms} ms from {known}");
            listed.clear();
            log.arrivals_into(known, end - known, &mut listed);
            assert_eq!(listed, expected[known as usize..end as usize], "at {ms} ms");
            known = end;
            log.trim_below(known.saturating_sub(3));
            assert_eq!(log.log_end(at), arrived.max(known.saturating_sub(3)), "at {ms} ms");
            assert_eq!(log.arrival(known + 5), expected[known as usize + 5]);
        }
        assert!(known > 2_000, "read {known}");
    }

    #[test]
    fn zipf_rates_keep_the_mean() {
        // skew 1 over 3 partitions: weights 1, 1/2, 1/3 (sum 11/6); total 3 * 10 = 30/s,
        // so rates 30 * 6/11, 30 * 3/11, 30 * 2/11.
        let r = skewed_rates(10.0, 3, 1.0);
        assert!((r[0] - 180.0 / 11.0).abs() < 1e-9);
        assert!((r[1] - 90.0 / 11.0).abs() < 1e-9);
        assert!((r[2] - 60.0 / 11.0).abs() < 1e-9);
    }
}
