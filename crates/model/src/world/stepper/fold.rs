//! The reports of one catch-up's quiet steps, folded per partition (issue 29).
//!
//! A stochastic run reports every finished batch part by part (`ConsumerNote::Processed`): the
//! ownership books raise the partition's frontier, the observer folds the part's records (the
//! collector: its interval set of processed offsets, its latency histogram). A member that
//! keeps up finishes a batch of one or two records every millisecond or so, so each record
//! paid for a report of its own. A catch-up (`lazy.rs`) runs one member's quiet steps with
//! nothing else in between; its reports can be held here and given as one report per
//! partition at its end, each the partition's consecutive records in offset order (a long
//! catch-up gives them every [`FOLD_RECORDS`] records or so, after the step that reached it:
//! what holds for its end holds between any two of its steps). When processing times vary
//! (each record's times are listed), the catch-up's fetches write their records here as they
//! take them, each with the end of its processing drawn as it is listed ([`FoldingPoll`]): the
//! batch in progress lives at the ends of its partitions' lists until it ends, and one still in
//! progress when the catch-up stops goes back to the member ([`FoldedReports::reopen_into`]); a
//! batch that ends within one catch-up is never copied.
//!
//! The same outputs, because of what reads the reports:
//! - Between the steps of one catch-up nothing else runs, so no other report and no reader of
//!   the books or of the observer comes between them: only the order of this member's own
//!   reports changes.
//! - Within a partition the order is kept (a quiet step's positions only move forward, so
//!   each batch's part of a partition starts where the last ended; debug builds check it):
//!   one report of offsets `a..c` gives the books and every observer what `a..b` and then
//!   `b..c` gave (the frontier is a maximum; the collector's offsets a set, its histogram a
//!   multiset; a trace's record track the same records in the same order).
//! - Across partitions, reports touch disjoint state, so their order does not matter.
//! - A report of a partition whose book owner is another member first catches that owner up
//!   to the report's time (`ownership::record_processed`): such reports must keep their
//!   times, so a member folds only when it is the book owner (or there is none) of every
//!   partition it holds ([`World::may_fold_reports`](crate::world::World)); the books do not
//!   change during a catch-up.

use crate::consumer::{Batch, BatchTimes, FetchSink, LogView, PollLoop};
use crate::processing::{Listing, ProcessingSampler};
use crate::records::RecordTimes;
use assignors::Tp;
use sim_core::{SimRng, SimTime};

/// Partitions with records looked at one by one before the member's owned partitions are
/// searched ([`FoldedReports::touched_place`]).
const LOOK_FIRST: usize = 8;

/// Records held before they are reported (`FoldedReports::is_full`): a catch-up reports its
/// records in runs of about this many, while the lists written are still in the core's cache
/// (a catch-up may run thousands of steps; its lists, written once and read once, would go to
/// and come back from a farther cache).
pub(in crate::world) const FOLD_RECORDS: usize = 1024;

/// The records one catch-up reported so far, per place of the member's owned partitions.
#[derive(Debug, Default)]
pub(in crate::world) struct FoldedReports {
    /// Records held.
    held: usize,
    /// By place among the member's owned partitions (`Positions::index_of`); empty lists
    /// between catch-ups (their buffers are kept).
    parts: Vec<FoldedPart>,
    /// The partitions with records and their places, in the order of their first record.
    touched: Vec<(Tp, usize)>,
    /// The batch in progress when this catch-up's fetches put their records here
    /// ([`FetchSink`]): its records are at the ends of its partitions' lists, not held yet.
    open: OpenBatch,
}

/// A batch whose records a catch-up's fetch put straight into the fold (variable processing
/// times: the lists are the batch's own, so a batch that ends within the catch-up is never
/// copied). Held when it ends ([`FoldedReports::close_batch`]); one still in progress when
/// the catch-up ends goes back to the member as a batch of its own
/// ([`FoldedReports::reopen_into`]).
#[derive(Debug, Default)]
struct OpenBatch {
    /// Its parts in batch order: partition, place, first offset, records.
    parts: Vec<(Tp, usize, u64, usize)>,
    /// Its poll's epoch, when none is open.
    epoch: Option<u64>,
    /// When its poll ran.
    polled: SimTime,
    /// When it ends.
    end: SimTime,
}

/// The records of one partition held for its report.
#[derive(Debug, Default)]
struct FoldedPart {
    tp: Option<Tp>,
    first: u64,
    arrivals: Vec<SimTime>,
    ends: Vec<SimTime>,
}

impl FoldedReports {
    /// A catch-up of a member owning `owned` partitions begins (nothing is held).
    pub(in crate::world) fn begin(&mut self, owned: usize) {
        debug_assert!(self.touched.is_empty(), "a fold left unreported");
        if self.parts.len() < owned {
            self.parts.resize_with(owned, FoldedPart::default);
        }
    }

    /// Holds the records of `batch`, finished; `place_of` gives each partition's place
    /// among the member's owned partitions.
    pub(in crate::world) fn add_batch(
        &mut self,
        batch: &Batch,
        mut place_of: impl FnMut(&Tp) -> usize,
    ) {
        let mut index = 0;
        for (part, &(tp, first, count)) in batch.parts.iter().enumerate() {
            let place = self.touched_place(&tp).unwrap_or_else(|| place_of(&tp));
            self.touch(tp, place, first, 0).push(&batch.times, (part, index, count));
            index += count;
        }
        self.held += index;
    }

    /// The records the last fetch put here are the batch of poll `epoch`, polled at
    /// `polled`, ending at `end`.
    pub(in crate::world) fn open_batch(&mut self, epoch: u64, polled: SimTime, end: SimTime) {
        debug_assert!(self.open.epoch.is_none(), "one batch in progress");
        debug_assert!(!self.open.parts.is_empty(), "a batch has records");
        self.open.epoch = Some(epoch);
        self.open.polled = polled;
        self.open.end = end;
    }

    /// The poll epoch and the poll's time of the batch in progress whose records are here.
    pub(in crate::world) fn open_poll(&self) -> Option<(u64, SimTime)> {
        self.open.epoch.map(|epoch| (epoch, self.open.polled))
    }

    /// The batch in progress is done: its records are held.
    pub(in crate::world) fn close_batch(&mut self) {
        debug_assert!(self.open.epoch.is_some(), "a batch in progress");
        self.held += self.open.parts.iter().map(|p| p.3).sum::<usize>();
        self.open.parts.clear();
        self.open.epoch = None;
    }

    /// The catch-up ends with a batch in progress whose records are here: it becomes the
    /// batch in progress of `poll_loop` again (in the buffers of its last finished batch),
    /// its records taken off the ends of their lists, and a partition that had no other
    /// record is untouched again.
    pub(in crate::world) fn reopen_into(&mut self, poll_loop: &mut PollLoop) {
        let Some(epoch) = self.open.epoch.take() else {
            debug_assert!(self.open.parts.is_empty(), "records without a batch");
            return;
        };
        let mut batch = poll_loop.spare_listed_batch();
        let BatchTimes::Listed { arrivals, ends } = &mut batch.times else {
            unreachable!("a spare listed batch")
        };
        for &(tp, place, first, count) in &self.open.parts {
            let folded = &mut self.parts[place];
            let kept = folded.arrivals.len() - count;
            arrivals.extend(folded.arrivals.drain(kept..));
            ends.extend(folded.ends.drain(kept..));
            batch.parts.push((tp, first, count));
            if kept == 0 {
                folded.tp = None;
            }
        }
        // The partitions the batch touched first are the last touched.
        while self.touched.last().is_some_and(|(_, place)| self.parts[*place].tp.is_none()) {
            self.touched.pop();
        }
        debug_assert!(self.touched.iter().all(|(_, place)| self.parts[*place].tp.is_some()));
        self.open.parts.clear();
        (batch.epoch, batch.polled, batch.end) = (epoch, self.open.polled, self.open.end);
        poll_loop.batch = Some(batch);
    }

    /// The list of `tp` at `place`, which a part from offset `first` on extends (its last
    /// `listed` records are that part's already): touched if it was not, with `first` as its
    /// first offset. Debug builds check that the part follows the list's records.
    fn touch(&mut self, tp: Tp, place: usize, first: u64, listed: usize) -> &mut FoldedPart {
        let folded = &mut self.parts[place];
        if folded.tp.is_none() {
            folded.tp = Some(tp);
            folded.first = first;
            self.touched.push((tp, place));
        }
        debug_assert_eq!(folded.tp, Some(tp), "one partition a place");
        debug_assert_eq!(
            folded.first + (folded.arrivals.len() - listed) as u64,
            first,
            "a partition's parts follow each other within a catch-up ({tp:?})"
        );
        folded
    }

    /// Whether [`FOLD_RECORDS`] or more records are held.
    pub(in crate::world) fn is_full(&self) -> bool {
        self.held >= FOLD_RECORDS
    }

    /// The place of `tp` if it has records already and is among the first [`LOOK_FIRST`]
    /// partitions that had (a member holds a few partitions: a look at each is cheaper than
    /// a search of its owned ones).
    #[inline]
    fn touched_place(&self, tp: &Tp) -> Option<usize> {
        let first = &self.touched[..self.touched.len().min(LOOK_FIRST)];
        first.iter().find(|(touched, _)| touched == tp).map(|(_, place)| *place)
    }

    /// Gives each partition's held records to `report` (partition, first offset, times) and
    /// holds nothing after.
    pub(in crate::world) fn drain(&mut self, mut report: impl FnMut(Tp, u64, &RecordTimes)) {
        self.held = 0;
        for (_, place) in self.touched.drain(..) {
            let folded = &mut self.parts[place];
            let tp = folded.tp.take().expect("a touched place has a partition");
            let lists = (std::mem::take(&mut folded.arrivals), std::mem::take(&mut folded.ends));
            let times = RecordTimes::listed(lists.0, lists.1);
            report(tp, folded.first, &times);
            let (mut arrivals, mut ends) = times.into_lists();
            arrivals.clear();
            ends.clear();
            (folded.arrivals, folded.ends) = (arrivals, ends);
        }
    }
}

/// One poll of a catch-up whose fetch puts its records straight into their partitions'
/// lists in the fold, each with the end of its processing drawn as it is listed (in batch
/// order from the member's stream, one after the other from the poll's time, as
/// `Consumer::timed_batch` draws a batch's: `processing::Listing`): the records of the batch
/// in progress.
pub(in crate::world) struct FoldingPoll<'a> {
    folded: &'a mut FoldedReports,
    processing: &'a ProcessingSampler,
    rng: &'a mut SimRng,
    /// The end of the last record's processing (the poll's time before the first).
    end: SimTime,
}

impl<'a> FoldingPoll<'a> {
    /// The poll at `now` of a member drawing from `processing` and `rng`.
    pub(in crate::world) fn new(
        folded: &'a mut FoldedReports,
        processing: &'a ProcessingSampler,
        rng: &'a mut SimRng,
        now: SimTime,
    ) -> FoldingPoll<'a> {
        FoldingPoll { folded, processing, rng, end: now }
    }

    /// The end of the batch the poll took (the poll's time if it took nothing).
    pub(in crate::world) fn end(&self) -> SimTime {
        self.end
    }
}

impl FetchSink for FoldingPoll<'_> {
    #[inline]
    fn read<L: LogView + ?Sized>(
        &mut self,
        log: &mut L,
        tp: Tp,
        place: usize,
        span: (SimTime, u64, u64),
    ) -> (u64, Option<SimTime>) {
        let part = &mut self.folded.parts[place];
        let mut listing = Listing {
            arrivals: &mut part.arrivals,
            ends: &mut part.ends,
            end: self.end,
            processing: self.processing,
            rng: self.rng,
        };
        let read = log.read_listing_at(tp, place, span, &mut listing);
        self.end = listing.end;
        read
    }

    #[inline]
    fn took(&mut self, tp: Tp, place: usize, first: u64, count: usize) {
        self.folded.touch(tp, place, first, count);
        self.folded.open.parts.push((tp, place, first, count));
    }
}

impl FoldedPart {
    /// Appends the `count` records of part `part` of a batch's `times`, from batch index
    /// `index`.
    fn push(&mut self, times: &BatchTimes, (part, index, count): (usize, usize, usize)) {
        match times {
            BatchTimes::Listed { arrivals, ends } => {
                // Pushed one by one: a part holds a record or two, which a `memcpy` call
                // (`extend_from_slice`) costs more than.
                let range = index..index + count;
                for (arrival, end) in arrivals[range.clone()].iter().zip(&ends[range]) {
                    self.arrivals.push(*arrival);
                    self.ends.push(*end);
                }
            }
            BatchTimes::Linear { .. } => {
                let part_times = times.of_part(part, index, count as u64);
                for (arrival, end) in part_times.pairs(0, count as u64) {
                    self.arrivals.push(arrival);
                    self.ends.push(end);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    fn tp(partition: u32) -> Tp {
        Tp { topic: 0, partition }
    }

    fn listed(parts: Vec<(Tp, u64, usize)>, arrivals: &[u64], ends: &[u64]) -> Batch {
        let times = BatchTimes::Listed {
            arrivals: arrivals.iter().map(|v| ms(*v)).collect(),
            ends: ends.iter().map(|v| ms(*v)).collect(),
        };
        let end = ms(*ends.last().unwrap_or(&0));
        Batch { epoch: 1, parts, times, end, polled: ms(0) }
    }

    /// Two batches over partitions 3 and 5 (places 1 and 0 of the member), then a linear
    /// batch of partition 3: one report a partition, its records in offset order, in the
    /// order the partitions first had records; a second catch-up starts empty.
    #[test]
    fn a_catch_up_reports_each_partition_once_in_offset_order() {
        let place = |t: &Tp| if t.partition == 5 { 0 } else { 1 };
        let mut folded = FoldedReports::default();
        folded.begin(2);
        // Offsets 10, 11 of partition 3 and 40 of partition 5.
        folded.add_batch(
            &listed(vec![(tp(3), 10, 2), (tp(5), 40, 1)], &[1, 2, 3], &[5, 6, 7]),
            place,
        );
        // Offset 41 of partition 5, then 12 of partition 3.
        folded.add_batch(&listed(vec![(tp(5), 41, 1), (tp(3), 12, 1)], &[8, 9], &[10, 11]), place);
        // Offsets 13 and 14 of partition 3: arrivals 12 and 14 ms, ends 15 and 16 ms.
        let linear =
            BatchTimes::Linear { start: ms(14), each: ms(1), arrivals: vec![(ms(12), ms(2))] };
        let batch = Batch {
            epoch: 2,
            parts: vec![(tp(3), 13, 2)],
            times: linear,
            end: ms(16),
            polled: ms(14),
        };
        folded.add_batch(&batch, place);
        let mut reports = Vec::new();
        folded.drain(|tp, first, times| {
            let pairs: Vec<(u64, u64)> =
                times.pairs(0, times.len()).map(|(a, e)| (a.as_millis(), e.as_millis())).collect();
            reports.push((tp.partition, first, pairs));
        });
        assert_eq!(
            reports,
            vec![
                (3, 10, vec![(1, 5), (2, 6), (9, 11), (12, 15), (14, 16)]),
                (5, 40, vec![(3, 7), (8, 10)]),
            ]
        );
        folded.begin(2);
        let mut again = 0;
        folded.drain(|_, _, _| again += 1);
        assert_eq!(again, 0, "nothing held after a drain");
        folded.add_batch(&listed(vec![(tp(5), 90, 1)], &[20], &[21]), place);
        folded
            .drain(|tp, first, times| reports.push((tp.partition, first, vec![(times.len(), 0)])));
        assert_eq!(reports.last(), Some(&(5, 90, vec![(1, 0)])), "a new first offset");
    }

    /// A catch-up's fetches put their records here ([`FetchSink`]): offsets 1 and 2 of
    /// partition 3 (place 1; on `TenMs` offset k arrives at (k + 1) x 10 ms), read at 35 ms,
    /// processed 1 ms each from the poll at 40 ms (ends 41 and 42 ms), end as a batch; the
    /// next poll, at 50 ms, takes offset 0..4 of partition 5 (place 0) and offset 3 of
    /// partition 3, and is still in progress when the catch-up ends. It goes back to the
    /// member as a batch of its own, its records off the lists: only the first batch is
    /// reported, and partition 5 (no other record) is not.
    #[test]
    fn a_batch_in_progress_goes_back_to_the_member() {
        use crate::consumer::tests::TenMs;
        let mut folded = FoldedReports::default();
        let processing = ProcessingSampler::Constant(ms(1));
        let mut rng = sim_core::RngStreams::new(1).stream("member");
        folded.begin(2);
        let mut poll = FoldingPoll::new(&mut folded, &processing, &mut rng, ms(40));
        assert_eq!(poll.read(&mut TenMs, tp(3), 1, (ms(35), 1, 500)), (3, Some(ms(40))));
        poll.took(tp(3), 1, 1, 2);
        assert_eq!(poll.end(), ms(42));
        folded.open_batch(7, ms(40), ms(42));
        assert_eq!(folded.open_poll(), Some((7, ms(40))));
        folded.close_batch();
        assert_eq!(folded.open_poll(), None);
        assert_eq!(folded.held, 2, "a finished batch is held");
        let mut poll = FoldingPoll::new(&mut folded, &processing, &mut rng, ms(50));
        assert_eq!(poll.read(&mut TenMs, tp(5), 0, (ms(45), 0, 498)), (4, Some(ms(50))));
        poll.took(tp(5), 0, 0, 4);
        assert_eq!(poll.read(&mut TenMs, tp(3), 1, (ms(45), 3, 494)), (4, Some(ms(50))));
        poll.took(tp(3), 1, 3, 1);
        assert_eq!(poll.end(), ms(55));
        folded.open_batch(8, ms(50), ms(55));
        assert_eq!(folded.held, 2, "a batch in progress is not held");
        let mut poll_loop = PollLoop::default();
        folded.reopen_into(&mut poll_loop);
        let batch = poll_loop.batch.expect("the batch in progress");
        assert_eq!((batch.epoch, batch.polled, batch.end), (8, ms(50), ms(55)));
        assert_eq!(batch.parts, vec![(tp(5), 0, 4), (tp(3), 3, 1)]);
        let BatchTimes::Listed { arrivals, ends } = &batch.times else { panic!("listed") };
        let ms_of = |v: &Vec<SimTime>| v.iter().map(|t| t.as_millis()).collect::<Vec<_>>();
        assert_eq!(ms_of(arrivals), vec![10, 20, 30, 40, 40]);
        assert_eq!(ms_of(ends), vec![51, 52, 53, 54, 55]);
        let mut reports = Vec::new();
        folded.drain(|tp, first, times| {
            let pairs: Vec<(u64, u64)> =
                times.pairs(0, times.len()).map(|(a, e)| (a.as_millis(), e.as_millis())).collect();
            reports.push((tp.partition, first, pairs));
        });
        assert_eq!(reports, vec![(3, 1, vec![(20, 41), (30, 42)])]);
    }

    /// The fold is full once it holds `FOLD_RECORDS` records, whichever partitions they are
    /// of, and empty again after its report.
    #[test]
    fn the_fold_is_full_at_fold_records_records() {
        let place = |t: &Tp| t.partition as usize;
        let mut folded = FoldedReports::default();
        folded.begin(2);
        let (a, b) = (FOLD_RECORDS / 2, FOLD_RECORDS / 2 - 1);
        let ms_list = |n: usize| (0..n as u64).collect::<Vec<_>>();
        let two_parts = vec![(tp(0), 0, a), (tp(1), 0, b)];
        folded.add_batch(&listed(two_parts, &ms_list(a + b), &ms_list(a + b)), place);
        assert!(!folded.is_full(), "{} records", a + b);
        folded.add_batch(&listed(vec![(tp(1), b as u64, 1)], &[1], &[2]), place);
        assert!(folded.is_full(), "{FOLD_RECORDS} records");
        let mut counts = Vec::new();
        folded.drain(|tp, first, times| counts.push((tp.partition, first, times.len())));
        assert_eq!(counts, vec![(0, 0, a as u64), (1, 0, b as u64 + 1)]);
        assert!(!folded.is_full(), "reported: none held");
    }
}
