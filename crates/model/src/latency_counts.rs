//! Records counted per latency class ahead of their reports, on the threads of a shared-out
//! round (issue 29).
//!
//! The model computes no statistics: an observer that keeps its latencies as counts per class
//! (the collector's 3-digit histogram) gives how it counts a report's records
//! ([`Observer::latency_counter`](crate::Observer::latency_counter): its class function
//! inlined in [`LatencyCounts::count_listed`], one call a report), and a shared-out catch-up
//! counts its held reports' records per class while their times are in its core's cache
//! ([`LatencyCounts`]). The calling thread then gives each report with its largest
//! latency ([`Observer::observe_processed_counted`](crate::Observer::observe_processed_counted))
//! instead of the observer reading every record again, and the counts at the end of the run
//! (each piece of work's, kept round after round: adding them at every round read thousands
//! of classes on the calling thread while the others waited). A count per class is a sum, so
//! counting on another thread, in another order, at another time, gives the same counts.

use sim_core::SimTime;

/// How an observer counts a report's records per latency class: adds each record of
/// `arrivals` and `ends` (as many) to the counts by the class of its latency ([`latency_us`];
/// a class is a small index, the counts a dense table up to the largest class counted), and
/// gives the largest latency. An observer writes it as [`LatencyCounts::count_listed`] with
/// its class function, which is then inlined in the loop over the records (a class function
/// called through a pointer for each record cost the stochastic reference's first 20 s 1.8%
/// more instructions: "(22)" in docs/performance.md).
pub type CountLatencies = fn(&mut LatencyCounts, &[SimTime], &[SimTime]) -> u64;

/// The latency of a record that arrived at `arrival` and was processed by `end`, in whole
/// microseconds (0 if it ends before it arrives in the arithmetic): what every observer of
/// this model counts as a record's end-to-end latency.
#[inline]
pub fn latency_us(arrival: SimTime, end: SimTime) -> u64 {
    end.saturating_sub(arrival).as_nanos() / 1_000
}

/// Records counted per class; emptied by [`LatencyCounts::drain`],
/// [`LatencyCounts::drain_into`] or [`LatencyCounts::clear`] (its table kept).
///
/// The table is as long as the largest class ever counted (a run's latencies during a
/// restart reach tens of seconds: some 15,000 classes), while the records counted between two
/// drains mostly span a few thousand: the counts keep the classes counted since the last
/// drain within `lowest..=highest`, and a drain reads that range only.
#[derive(Debug)]
pub struct LatencyCounts {
    /// `counts[c]`: records of class `c`; 0 outside `lowest..=highest`.
    counts: Vec<u64>,
    /// Records counted.
    total: u64,
    /// The lowest class counted since the last drain (`usize::MAX` when none).
    lowest: usize,
    /// The highest class counted since the last drain (0 when none).
    highest: usize,
}

impl Default for LatencyCounts {
    fn default() -> Self {
        Self { counts: Vec::new(), total: 0, lowest: usize::MAX, highest: 0 }
    }
}

impl LatencyCounts {
    /// Counts one record of class `class`.
    #[inline]
    pub fn add(&mut self, class: usize) {
        if class >= self.counts.len() {
            self.counts.resize(class + 1, 0);
        }
        self.counts[class] += 1;
        self.total += 1;
        self.lowest = self.lowest.min(class);
        self.highest = self.highest.max(class);
    }

    /// Counts each record of `arrivals` and `ends` (as many) by `class_of` its latency
    /// ([`latency_us`]), as [`LatencyCounts::add`] of each would, and gives the largest of their
    /// latencies (0 for none). The range counted and the total are kept in locals through
    /// the loop: one write each a report, not a record.
    #[inline]
    pub fn count_listed(
        &mut self,
        arrivals: &[SimTime],
        ends: &[SimTime],
        class_of: impl Fn(u64) -> usize,
    ) -> u64 {
        debug_assert_eq!(arrivals.len(), ends.len(), "one arrival and one end a record");
        let (mut lowest, mut highest, mut max_us) = (self.lowest, self.highest, 0);
        for (arrival, end) in arrivals.iter().zip(ends) {
            let us = latency_us(*arrival, *end);
            max_us = max_us.max(us);
            let class = class_of(us);
            if class >= self.counts.len() {
                self.counts.resize(class + 1, 0);
            }
            self.counts[class] += 1;
            lowest = lowest.min(class);
            highest = highest.max(class);
        }
        self.total += arrivals.len() as u64;
        (self.lowest, self.highest) = (lowest, highest);
        max_us
    }

    /// Takes back out one record of class `class`, counted before.
    pub fn remove(&mut self, class: usize) {
        let count = self.counts.get_mut(class).filter(|c| **c > 0);
        *count.expect("a record taken out was counted") -= 1;
        self.total -= 1;
    }

    /// Records counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Gives each class with records and its count, in class order, and counts nothing after.
    pub fn drain(&mut self, mut each: impl FnMut(usize, u64)) {
        if self.total == 0 {
            return;
        }
        let counted = &mut self.counts[self.lowest..=self.highest];
        for (class, count) in (self.lowest..).zip(counted).filter(|(_, c)| **c > 0) {
            each(class, *count);
            *count = 0;
        }
        self.forget_range();
    }

    /// Adds each class's count to `table[class]` and counts nothing after: [`LatencyCounts::drain`]
    /// into a dense table, one addition a class of the range counted, without a branch a class
    /// (whether a class has records is a coin toss within the range; the branch cost more than
    /// the additions of zeros).
    ///
    /// # Panics
    ///
    /// If `table` has no place for a class counted.
    pub fn drain_into(&mut self, table: &mut [u64]) {
        if self.total == 0 {
            return;
        }
        assert!(
            self.highest < table.len(),
            "class {} counted, table of {}",
            self.highest,
            table.len()
        );
        let counted = &mut self.counts[self.lowest..=self.highest];
        for (into, count) in table[self.lowest..=self.highest].iter_mut().zip(counted) {
            *into += *count;
            *count = 0;
        }
        self.forget_range();
    }

    /// After a drain: nothing counted, no range.
    fn forget_range(&mut self) {
        self.total = 0;
        self.lowest = usize::MAX;
        self.highest = 0;
    }

    /// Counts nothing.
    pub fn clear(&mut self) {
        self.drain(|_, _| {});
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_is_whole_microseconds_clipped_at_zero() {
        let ns = SimTime::from_nanos;
        assert_eq!(latency_us(ns(1_000), ns(3_999)), 2);
        assert_eq!(latency_us(ns(1_000), ns(4_000)), 3);
        assert_eq!(latency_us(ns(5_000), ns(4_000)), 0, "ends before it arrives");
    }

    /// A report of latencies 2, 9, 25 and 11 us, classed by tens of microseconds (0, 0, 2,
    /// 1): the largest latency is 25; the counts and the range the drain reads are those of
    /// `add` one by one (a range left at class 5, counted before, would drain that class
    /// alone), and an empty report changes nothing.
    #[test]
    fn a_reports_records_counted_at_once_as_one_by_one() {
        let us = SimTime::from_micros;
        let arrivals = [us(100), us(100), us(200), us(300)];
        let ends = [us(102), us(109), us(225), us(311)];
        let by_tens = |latency: u64| (latency / 10) as usize;
        let mut counts = LatencyCounts::default();
        counts.add(5);
        assert_eq!(counts.count_listed(&arrivals, &ends, by_tens), 25);
        assert_eq!(counts.count_listed(&[], &[], by_tens), 0);
        assert_eq!(counts.total(), 5);
        let mut one_by_one = LatencyCounts::default();
        for class in [5, 0, 0, 2, 1] {
            one_by_one.add(class);
        }
        let (mut drained, mut expected) = (Vec::new(), Vec::new());
        counts.drain(|class, count| drained.push((class, count)));
        one_by_one.drain(|class, count| expected.push((class, count)));
        assert_eq!(drained, vec![(0, 2), (1, 1), (2, 1), (5, 1)]);
        assert_eq!(drained, expected);
    }

    /// Classes 3, 0, 3, 7 counted, one 3 taken back out: 0 x1, 3 x1, 7 x1 in class order,
    /// three records; nothing after the drain, and a class counted again starts from 0.
    #[test]
    fn counts_per_class_drain_in_class_order() {
        let mut counts = LatencyCounts::default();
        for class in [3, 0, 3, 7] {
            counts.add(class);
        }
        counts.remove(3);
        assert_eq!(counts.total(), 3);
        let mut drained = Vec::new();
        counts.drain(|class, count| drained.push((class, count)));
        assert_eq!(drained, vec![(0, 1), (3, 1), (7, 1)]);
        assert_eq!(counts.total(), 0);
        counts.drain(|_, _| panic!("nothing counted"));
        counts.add(7);
        counts.clear();
        assert_eq!(counts.total(), 0);
        counts.add(7);
        counts.drain(|class, count| assert_eq!((class, count), (7, 1)));
    }

    /// Classes 5, 2, 5 counted into a table of 8 holding 1 in every class: classes 2 and 5
    /// gain 1 and 2, the others stay 1; then 7 alone (the range starts again after a drain)
    /// and 0 alone, each added once.
    #[test]
    fn counts_drain_into_a_dense_table_over_the_range_counted() {
        let mut counts = LatencyCounts::default();
        let mut table = [1u64; 8];
        for class in [5, 2, 5] {
            counts.add(class);
        }
        counts.drain_into(&mut table);
        assert_eq!(table, [1, 1, 2, 1, 1, 3, 1, 1]);
        assert_eq!(counts.total(), 0);
        counts.drain_into(&mut table);
        assert_eq!(table, [1, 1, 2, 1, 1, 3, 1, 1], "nothing counted, nothing added");
        counts.add(7);
        counts.drain_into(&mut table);
        counts.add(0);
        counts.drain_into(&mut table);
        assert_eq!(table, [2, 1, 2, 1, 1, 3, 1, 2]);
        counts.drain(|_, _| panic!("nothing counted"));
    }

    #[test]
    #[should_panic(expected = "class 9 counted, table of 8")]
    fn a_table_without_a_place_for_a_class_counted_is_refused() {
        let mut counts = LatencyCounts::default();
        counts.add(9);
        counts.drain_into(&mut [0; 8]);
    }

    #[test]
    #[should_panic(expected = "a record taken out was counted")]
    fn a_record_never_counted_cannot_be_taken_out() {
        let mut counts = LatencyCounts::default();
        counts.add(2);
        counts.remove(1);
    }
}
