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

/// Values below this are their own class (the histogram's exact range at 3 digits).
const EXACT_BELOW: u64 = 2_048;
/// Classes per power of two above it.
const PER_OCTAVE: u64 = 1_024;
/// Number of classes: every `u64` has one.
const CLASSES: usize = (EXACT_BELOW + (64 - 11) * PER_OCTAVE) as usize;

/// The class of `us`: its bucket in a 3-digit histogram, numbered from 0.
fn class_of(us: u64) -> usize {
    if us < EXACT_BELOW {
        return us as usize;
    }
    let octave = 63 - u64::from(us.leading_zeros()); // >= 11
    let shift = octave - 10;
    let sub = us >> shift; // in [1024, 2048)
    (EXACT_BELOW + (octave - 11) * PER_OCTAVE + (sub - PER_OCTAVE)) as usize
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
    /// [`LatencyHistogram::record_n`] of each record, with the work per record cut to an
    /// increment: a count per class is a sum, so records are counted one by one in any order;
    /// the latency is linear in `i` (clipped at 0), so the largest is at `from` or `to - 1`.
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
        let us_of = |i: u64| (end.0 + end.1 * i).saturating_sub(arrival.0 + arrival.1 * i) / 1_000;
        let (first_us, last_us) = (us_of(from), us_of(to - 1));
        if end.1 == arrival.1 {
            // Every record waits the same.
            self.record_n(first_us, to - from);
            return;
        }
        if self.pending.is_empty() {
            self.pending = vec![0; CLASSES];
        }
        self.max_us = self.max_us.max(first_us).max(last_us);
        self.pending_total += to - from;
        let (mut a, mut e) = (arrival.0 + arrival.1 * from, end.0 + end.1 * from);
        for _ in from..to {
            self.pending[class_of(e.saturating_sub(a) / 1_000)] += 1;
            // Past the last record these may wrap; they are not read then.
            a = a.wrapping_add(arrival.1);
            e = e.wrapping_add(end.1);
        }
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
