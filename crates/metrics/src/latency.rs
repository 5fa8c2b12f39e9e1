//! The end-to-end latency histogram of a run: an `hdrhistogram` (3 significant digits, auto
//! resizing) with a dense array of counts in front of it.
//!
//! A histogram is a multiset of bucket counts, so counting records per bucket apart and
//! recording the counts later ([`LatencyHistogram::flush`]) gives exactly the histogram that
//! recording every value at once gives. With 3 significant digits, the histogram keeps values
//! below 2,048 exactly and splits each `[2^k, 2^(k+1))` above into 1,024 buckets of width
//! `2^(k-10)`; [`class_of`] numbers those same buckets, so a record is an increment (the
//! histogram's `record_n` was most of the cost of folding records processed one by one), and
//! a test checks the classes against the histogram's own `lowest_equivalent`.

use hdrhistogram::Histogram;
use model::LatencyCounts;

/// Values below this are their own class (the histogram's exact range at 3 digits).
const EXACT_BELOW: u64 = 2_048;
/// Runs of records up to this long are counted record by record
/// ([`LatencyHistogram::record_linear`]: its setup costs more than a few divisions).
const SHORT_RUN: u64 = 16;
/// Classes per power of two above it.
const PER_OCTAVE: u64 = 1_024;
/// Number of classes: every `u64` has one.
const CLASSES: usize = (EXACT_BELOW + (64 - 11) * PER_OCTAVE) as usize;

/// The class of `us`: its bucket in a 3-digit histogram, numbered from 0.
///
/// Octave `k >= 11` (`us` in `[2^k, 2^(k+1))`) starts at class `2,048 + (k - 11) x 1,024` and
/// splits into 1,024 buckets of width `2^(k-10)`: class `(k - 10) x 1,024 + (us >> (k - 10))`.
/// Below 2,048 the shift is 0 and the class is `us` itself, so one formula serves both,
/// without a branch (a run's latencies straddle 2,048 us: the branch was mispredicted often).
#[inline]
pub(crate) fn class_of(us: u64) -> usize {
    let octave = 63 - u64::from((us | 1).leading_zeros());
    let shift = octave.saturating_sub(10);
    (shift * PER_OCTAVE + (us >> shift)) as usize
}

/// The lowest value of class `class` (inverse of [`class_of`] on each class's first value).
fn lowest_of(class: usize) -> u64 {
    let class = class as u64;
    if class < EXACT_BELOW {
        return class;
    }
    let above = class - EXACT_BELOW;
    let (octave, sub) = (11 + above / PER_OCTAVE, PER_OCTAVE + above % PER_OCTAVE);
    sub << (octave - 10)
}

/// Latencies in microseconds, with their exact maximum.
#[derive(Debug)]
pub(crate) struct LatencyHistogram {
    histogram: Histogram<u64>,
    /// `pending[c]`: records of class `c` not yet in `histogram` (allocated at first use).
    pending: Vec<u64>,
    /// Records counted in `pending` since the last flush.
    pending_total: u64,
    max_us: u64,
}

impl LatencyHistogram {
    /// An empty histogram.
    pub(crate) fn new() -> LatencyHistogram {
        LatencyHistogram {
            histogram: Histogram::new(3).expect("3 significant digits"),
            pending: Vec::new(),
            pending_total: 0,
            max_us: 0,
        }
    }

    /// Records `count` latencies of `us` microseconds.
    #[inline]
    pub(crate) fn record_n(&mut self, us: u64, count: u64) {
        if self.pending.is_empty() {
            self.pending = vec![0; CLASSES];
        }
        self.max_us = self.max_us.max(us);
        self.pending[class_of(us)] += count;
        self.pending_total += count;
    }

    /// Records the latencies of records `from..to` of a progression: record `i` arrives at
    /// `arrival.0 + i x arrival.1` and ends at `end.0 + i x end.1` (nanoseconds); its latency
    /// is `end - arrival` (0 if negative) in whole microseconds. The same counts as
    /// [`LatencyHistogram::record_n`] of each record, without a division per record (runs
    /// of up to [`SHORT_RUN`] records are counted one by one):
    /// - a count per class is a sum, so the records may be counted in any order: in rising
    ///   latency, the clipped ones (0 us) at once;
    /// - the latency `v` (ns) is linear, so the largest is at an end;
    /// - within one class width (`W` ns: `1,000` below 2,048 us, `1,000 x 2^(k - 10)` in
    ///   `[2^k, 2^(k+1))` us), the class is a base plus `floor(v / W)` (a floor of a floor:
    ///   `floor(floor(v / 1,000) / 2^s) = floor(v / (1,000 x 2^s))`), which a step of `d` ns
    ///   moves by `d / W`, plus one when the remainder passes `W`.
    pub(crate) fn record_linear(
        &mut self,
        arrival: (u64, u64),
        end: (u64, u64),
        from: u64,
        to: u64,
    ) {
        if from >= to {
            return;
        }
        // The arrival and end of every record are times (`u64` ns), so only their
        // difference needs a sign: exact in i128; a latency clipped at 0 fits a u64.
        let ns_at = |i: u64| {
            let (a, e) = (arrival.0 + arrival.1 * i, end.0 + end.1 * i);
            i128::from(e) - i128::from(a)
        };
        let clip = |ns: i128| ns.max(0) as u64;
        let (first, last, count) = (ns_at(from), ns_at(to - 1), to - from);
        if end.1 == arrival.1 {
            // Every record waits the same.
            self.record_n(clip(first) / 1_000, count);
            return;
        }
        if self.pending.is_empty() {
            self.pending = vec![0; CLASSES];
        }
        self.max_us = self.max_us.max(clip(first) / 1_000).max(clip(last) / 1_000);
        self.pending_total += count;
        if count <= SHORT_RUN {
            // Few records: a class each costs less than the setup below.
            let (mut a, mut e) = (arrival.0 + arrival.1 * from, end.0 + end.1 * from);
            for _ in 0..count {
                self.pending[class_of(e.saturating_sub(a) / 1_000)] += 1;
                // Past the last record these may wrap; they are not read then.
                a = a.wrapping_add(arrival.1);
                e = e.wrapping_add(end.1);
            }
            return;
        }
        let step = end.1.abs_diff(arrival.1);
        let mut lowest = first.min(last);
        let mut left = count;
        if lowest < 0 {
            // Records that end "before" they arrive in the arithmetic wait 0 us; the lowest
            // latency not clipped is below `step` ns.
            let clipped = left.min((lowest.unsigned_abs() as u64).div_ceil(step));
            self.pending[0] += clipped;
            left -= clipped;
            lowest += i128::from(clipped) * i128::from(step);
        }
        let mut ns = lowest as u64;
        while left > 0 {
            let us = ns / 1_000;
            // The class of `ns` is `base + ns / width` below `limit` ns (`None`: the top octave).
            let (base, width, limit) = if us < EXACT_BELOW {
                (0, 1_000, Some(1_000 * EXACT_BELOW))
            } else {
                let octave = 63 - u64::from(us.leading_zeros());
                let base = ((octave - 10) * PER_OCTAVE) as usize;
                // us < 2^54 (ns < 2^64): octave <= 53, whose limit is past every u64.
                let limit = 1_000u64.checked_mul(1 << (octave + 1));
                (base, 1_000 << (octave - 10), limit)
            };
            let here = limit.map_or(left, |limit| left.min((limit - ns).div_ceil(step)));
            self.count_rising(base + (ns / width) as usize, ns % width, width, step, here);
            left -= here;
            // Past the last record this may wrap; it is not read then.
            ns = ns.wrapping_add(here.wrapping_mul(step));
        }
    }

    /// Counts `count` records from class `class`, the first `remainder` ns into its width
    /// `width`, each `step` ns above the one before, all in classes of this width.
    fn count_rising(
        &mut self,
        mut class: usize,
        mut remainder: u64,
        width: u64,
        step: u64,
        count: u64,
    ) {
        let (classes_per_step, rest_per_step) = ((step / width) as usize, step % width);
        for _ in 0..count {
            self.pending[class] += 1;
            // Past the last record the class may run past the table; it is not read then.
            class = class.wrapping_add(classes_per_step);
            remainder += rest_per_step;
            if remainder >= width {
                remainder -= width;
                class = class.wrapping_add(1);
            }
        }
    }

    /// Takes the records `counted` counts (per [`class_of`], ahead of their reports: model's
    /// `latency_counts.rs`) as pending counts; their largest goes through
    /// [`LatencyHistogram::raise_max_us`].
    pub(crate) fn add_counts(&mut self, counted: &mut LatencyCounts) {
        if counted.total() == 0 {
            return;
        }
        if self.pending.is_empty() {
            self.pending = vec![0; CLASSES];
        }
        self.pending_total += counted.total();
        counted.drain_into(&mut self.pending);
    }

    /// The largest latency recorded is at least `us` (records counted ahead).
    pub(crate) fn raise_max_us(&mut self, us: u64) {
        self.max_us = self.max_us.max(us);
    }

    /// Moves the pending counts into the histogram.
    pub(crate) fn flush(&mut self) {
        if self.pending_total == 0 {
            return;
        }
        for (class, count) in self.pending.iter_mut().enumerate().filter(|(_, c)| **c > 0) {
            self.histogram.record_n(lowest_of(class), *count).expect("auto-resizing histogram");
            *count = 0;
        }
        self.pending_total = 0;
    }

    /// The histogram of every latency recorded (after [`LatencyHistogram::flush`]).
    pub(crate) fn histogram(&self) -> &Histogram<u64> {
        assert_eq!(self.pending_total, 0, "latencies recorded since the last flush");
        &self.histogram
    }

    /// The largest latency recorded, exactly (the histogram keeps 3 significant digits).
    pub(crate) fn max_us(&self) -> u64 {
        self.max_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A class is exactly one bucket of a 3-digit histogram: its values have the
        /// histogram's `lowest_equivalent` of the class, and the next class starts where the
        /// histogram's next bucket does.
        #[test]
        fn classes_are_the_histograms_buckets(
            us in prop_oneof![0u64..5_000, 0u64..(1 << 24), 0u64..(1 << 62)]
        ) {
            let h = Histogram::<u64>::new(3).unwrap();
            let class = class_of(us);
            prop_assert_eq!(lowest_of(class), h.lowest_equivalent(us));
            prop_assert_eq!(lowest_of(class + 1), h.next_non_equivalent(us));
            prop_assert!(class < CLASSES);
        }
    }

    #[test]
    fn class_edges() {
        assert_eq!((class_of(0), class_of(2_047), class_of(2_048)), (0, 2_047, 2_048));
        assert_eq!(class_of(2_049), 2_048); // width 2 from 2,048
        assert_eq!(class_of(4_096), 2_048 + 1_024);
        assert_eq!(class_of(u64::MAX), CLASSES - 1);
        assert_eq!(lowest_of(CLASSES - 1), 2_047 << 53);
    }

    /// Small and large values, in any order: the histogram one gets by recording each value
    /// straight into an hdrhistogram.
    #[test]
    fn equals_recording_each_value_directly() {
        let values = [5u64, 40_000, 5, 1_000_000, 32_767, 32_768, 0, 2_049, 2_049, 12_345_678];
        let mut direct = Histogram::<u64>::new(3).unwrap();
        let mut dense = LatencyHistogram::new();
        for (i, &v) in values.iter().enumerate() {
            let count = 1 + i as u64 % 3;
            direct.record_n(v, count).unwrap();
            dense.record_n(v, count);
        }
        dense.flush();
        let h = dense.histogram();
        assert_eq!(h, &direct);
        assert_eq!(h.len(), direct.len());
        assert_eq!((h.min(), h.max()), (direct.min(), direct.max()));
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(h.value_at_quantile(q), direct.value_at_quantile(q), "q = {q}");
        }
        for v in values {
            assert_eq!(h.count_at(v), direct.count_at(v), "value {v}");
        }
        assert_eq!(dense.max_us(), 12_345_678);
        // A second flush with nothing pending changes nothing.
        dense.flush();
        assert_eq!(dense.histogram(), &direct);
    }

    proptest! {
        /// A progression recorded at once gives the histogram, the count and the maximum of
        /// its records recorded one by one (latencies clipped at 0 included: a record may be
        /// "processed" before it arrives in the arithmetic; equal steps: equal latencies).
        #[test]
        fn a_progression_equals_its_records_one_by_one(
            arrival in 0u64..1 << 40,
            arrival_step in prop_oneof![0u64..2_000, 0u64..20_000_000],
            end in 0u64..1 << 40,
            end_step in prop_oneof![0u64..2_000, 0u64..20_000_000, Just(500_000u64)],
            from in 0u64..600,
            len in 0u64..600,
            before in 0u64..3,
        ) {
            let to = from + len;
            let mut whole = LatencyHistogram::new();
            let mut each = LatencyHistogram::new();
            // Something recorded before, to check the progression adds to it.
            whole.record_n(3, before);
            each.record_n(3, before);
            whole.record_linear((arrival, arrival_step), (end, end_step), from, to);
            for i in from..to {
                let us = (end + end_step * i).saturating_sub(arrival + arrival_step * i) / 1_000;
                each.record_n(us, 1);
            }
            prop_assert_eq!(whole.pending_total, each.pending_total);
            prop_assert_eq!(whole.max_us(), each.max_us());
            whole.flush();
            each.flush();
            prop_assert_eq!(whole.histogram(), each.histogram());
        }
    }

    proptest! {
        /// Progressions chosen by their latencies, so that they cross classes of every width
        /// from the exact ones (below 2,048 us) up, start or end clipped at 0, and rise or
        /// fall by less or more than a class width per record: counted as one by one.
        #[test]
        fn a_progression_across_class_widths_equals_one_by_one(
            first_ns in prop_oneof![-(1i64 << 26)..(1i64 << 26), -(1i64 << 26)..(1i64 << 38)],
            step_ns in prop_oneof![-2_000i64..2_000, -(1i64 << 25)..(1i64 << 25)],
            len in 1u64..3_000,
        ) {
            // Arrivals every 2^25 ns from 2^40 ns; ends `first_ns` later, spaced `step_ns` more.
            let arrival = (1u64 << 40, 1u64 << 25);
            let end = ((1i64 << 40) + first_ns) as u64;
            let end_step = ((1i64 << 25) + step_ns) as u64;
            let mut whole = LatencyHistogram::new();
            let mut each = LatencyHistogram::new();
            whole.record_linear(arrival, (end, end_step), 0, len);
            for i in 0..len {
                let us = (end + end_step * i).saturating_sub(arrival.0 + arrival.1 * i) / 1_000;
                each.record_n(us, 1);
            }
            prop_assert_eq!(whole.max_us(), each.max_us());
            prop_assert_eq!(&whole.pending, &each.pending);
        }
    }

    /// By hand: arrivals every 10 ms from 1 ms, ends every 0.5 ms from 101 ms: record `i`
    /// waits 100 - 9.5 i ms, so records 0..=10 wait 100, 90.5, ..., 5 ms, and record 11 would
    /// "end" before it arrives (clipped to 0 us).
    #[test]
    fn a_falling_progression_by_hand() {
        let mut h = LatencyHistogram::new();
        h.record_linear((1_000_000, 10_000_000), (101_000_000, 500_000), 0, 12);
        assert_eq!((h.max_us(), h.pending_total), (100_000, 12));
        h.flush();
        let h = h.histogram();
        assert_eq!((h.len(), h.min(), h.count_at(0)), (12, 0, 1));
        // Record 10 waits 5,000 us, alone in its bucket (width 4 in [4,096, 8,192)).
        assert_eq!(h.count_at(5_000), 1);
        assert_eq!(h.value_at_quantile(1.0), h.highest_equivalent(100_000));
    }

    #[test]
    #[should_panic(expected = "since the last flush")]
    fn reading_before_a_flush_is_a_bug() {
        let mut h = LatencyHistogram::new();
        h.record_n(7, 1);
        let _ = h.histogram();
    }
}
