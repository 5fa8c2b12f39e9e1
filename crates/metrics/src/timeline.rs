//! The `ownership.csv` timeline as the collector builds it during a run, and what the end of
//! the run reads from it: each partition's rows for the [`OwnershipLog`](crate::OwnershipLog)
//! and its [`Availability`] (down and allowed intervals, from which downtime, episodes and the
//! stop-the-world time are computed).
//!
//! A partition's intervals tile the time from its first report. Its last interval stays open
//! to extension (an [`OpenSpan`], kept in the partition's metrics, where the `Access` report
//! that extends it already is). When a new interval starts, the open one is closed: appended
//! to one list of every partition's closed intervals, in the order they close (16 bytes each:
//! its end, owner, partition and state; its start is the end of the partition's interval
//! before). The list grows in fixed chunks, never copied.
//!
//! Why one list: the eager hour of `sims/bench/large-rolling-restart.toml` closes about 18
//! million intervals, one after another in 10,000 partitions. A list per partition missed the
//! cache at its end on every append, and copied itself as it grew; one list is appended at one
//! place.
//!
//! Memory independent of the run's length (issue 29): once the list holds its threshold of
//! intervals ([`SPILL_THRESHOLD`] unless the collector was given another) it is sorted by
//! partition (a stable counting sort, so each partition's intervals stay in time order) and
//! written to a spill file as one *run* (`spill.rs`), and the list starts again empty. At the
//! end, the last list is sorted the same way and every partition's rows are read back by a
//! merge of the runs ([`Merge`]): partition after partition, each run's piece of the
//! partition in run order, which is time order. A run that never fills the list is never
//! written: its one run stays in memory and goes through the same merge.

use crate::ownership::{OwnershipInterval, CONSUMING, IDLE, NO_OWNER};
use crate::spill::{Run, SpillFile};
use model::Tp;
use sim_core::SimTime;
use std::io;
use std::sync::Arc;

/// Closed intervals per chunk (1 MiB).
const CHUNK: usize = 1 << 16;

/// Closed intervals held in memory before they are sorted and spilled (16 MiB): the default
/// threshold of `Timelines`.
pub const SPILL_THRESHOLD: usize = 1 << 20;

/// The low bits of [`ClosedSpan::part_state`] that hold the state code (8 codes: `idle` and
/// the seven partition states).
const STATE_BITS: u32 = 3;

/// The last interval of a partition's timeline, still open to extension. Empty
/// (`start == end`) only before the partition's first interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OpenSpan {
    start: SimTime,
    end: SimTime,
    owner: u32,
    state: u8,
}

impl OpenSpan {
    /// The empty span of a timeline starting at `at`.
    pub(crate) fn empty(at: SimTime) -> OpenSpan {
        OpenSpan { start: at, end: at, owner: NO_OWNER, state: IDLE }
    }

    /// The end of the timeline so far.
    pub(crate) fn end(&self) -> SimTime {
        self.end
    }
}

/// A closed interval: its end, owner (index or [`NO_OWNER`]), and its timeline's index shifted
/// left by [`STATE_BITS`] with the state code in the low bits. Written to a spill file as 16
/// bytes, little-endian, in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct ClosedSpan {
    pub(crate) end: SimTime,
    pub(crate) owner: u32,
    pub(crate) part_state: u32,
}

/// Every partition's closed intervals: the runs already sorted (spilled, or in memory if the
/// spill file failed), and the ones closed since, in the order they closed.
#[derive(Debug)]
pub(crate) struct Timelines {
    closed: Vec<Vec<ClosedSpan>>,
    /// Intervals in `closed`.
    held: usize,
    /// Intervals held before they are spilled.
    threshold: usize,
    /// The sorted runs so far, in time order.
    runs: Vec<Run>,
    /// Where runs are spilled (made at the first spill; `None` after a failure, when runs
    /// stay in memory).
    spill: Option<SpillFile>,
    /// The spill file could not be made or written: runs stay in memory from then on.
    spill_failed: bool,
    /// By timeline index: the partition and when its timeline starts.
    parts: Vec<(Tp, SimTime)>,
}

impl Default for Timelines {
    fn default() -> Timelines {
        Timelines::with_threshold(SPILL_THRESHOLD)
    }
}

/// A partition's down intervals and the intervals in which a live member may consume it,
/// adjacent ones merged (merging changes no metric: downtime sums the same nanoseconds,
/// episodes merge adjacent pieces anyway, and a sweep over edges sees no gap at an instant).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Availability {
    /// Intervals in a state other than consuming and idle.
    pub(crate) down: Vec<(SimTime, SimTime)>,
    /// Consuming intervals.
    pub(crate) allowed: Vec<(SimTime, SimTime)>,
}

impl Timelines {
    /// Timelines that spill once `threshold` closed intervals are held (at least 1).
    pub(crate) fn with_threshold(threshold: usize) -> Timelines {
        Timelines {
            closed: Vec::new(),
            held: 0,
            threshold: threshold.max(1),
            runs: Vec::new(),
            spill: None,
            spill_failed: false,
            parts: Vec::new(),
        }
    }

    /// A new timeline for `tp`, starting at `at`: its index.
    pub(crate) fn add(&mut self, tp: Tp, at: SimTime) -> u32 {
        let index = u32::try_from(self.parts.len())
            .ok()
            .filter(|i| *i < 1 << (32 - STATE_BITS))
            .expect("at most 2^29 partitions (the scenario limit is 10 million)");
        self.parts.push((tp, at));
        index
    }

    /// Extends timeline `index`, whose open span is `open`, to `end` in `state` under
    /// `owner`: the open span grows if it has the same owner and state, or is closed and a new
    /// one starts where it ends.
    pub(crate) fn push(
        &mut self,
        (index, open): (u32, &mut OpenSpan),
        end: SimTime,
        owner: u32,
        state: u8,
    ) {
        debug_assert!(open.end < end, "an interval is not empty");
        if (open.owner, open.state) == (owner, state) && open.start < open.end {
            open.end = end;
            return;
        }
        self.close(index, open);
        *open = OpenSpan { start: open.end, end, owner, state };
    }

    /// Closes the open span of timeline `index` (nothing if it is empty).
    pub(crate) fn close(&mut self, index: u32, open: &OpenSpan) {
        if open.start == open.end {
            return;
        }
        debug_assert!(u32::from(open.state) < 1 << STATE_BITS, "a known state code");
        let span = ClosedSpan {
            end: open.end,
            owner: open.owner,
            part_state: index << STATE_BITS | u32::from(open.state),
        };
        match self.closed.last_mut() {
            Some(chunk) if chunk.len() < CHUNK => chunk.push(span),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK.min(self.threshold));
                chunk.push(span);
                self.closed.push(chunk);
            }
        }
        self.held += 1;
        if self.held >= self.threshold && !self.spill_failed {
            self.spill_held();
        }
    }

    /// Sorts the held intervals into a run and writes it to the spill file (kept in memory
    /// if the file cannot be made or written).
    fn spill_held(&mut self) {
        let sorted = self.sort_held();
        if sorted.is_empty() {
            return;
        }
        let file = match self.spill.take() {
            Some(file) => Ok(file),
            None => SpillFile::new(),
        };
        match file.and_then(|mut file| file.append(&sorted).map(|run| (file, run))) {
            Ok((file, run)) => {
                self.spill = Some(file);
                self.runs.push(run);
            }
            Err(_) => {
                // Outputs stay the same; only the memory grows as before the spill existed.
                self.spill_failed = true;
                self.runs.push(Run::Memory(Arc::new(sorted)));
            }
        }
    }

    /// The held intervals sorted by partition (a stable counting sort: each partition's
    /// intervals stay in the order they closed), the held list emptied chunk by chunk.
    fn sort_held(&mut self) -> Vec<ClosedSpan> {
        let rank = self.ranks();
        let mut starts = vec![0usize; self.parts.len() + 1];
        for span in self.closed.iter().flatten() {
            starts[rank[span.timeline()] as usize + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut sorted = vec![ClosedSpan::default(); self.held];
        for chunk in std::mem::take(&mut self.closed) {
            for span in chunk {
                let slot = &mut starts[rank[span.timeline()] as usize];
                sorted[*slot] = span;
                *slot += 1;
            }
        }
        self.held = 0;
        sorted
    }

    /// By timeline index, its place in partition order.
    fn ranks(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.parts.len() as u32).collect();
        order.sort_unstable_by_key(|&i| self.parts[i as usize].0);
        let mut rank = vec![0u32; order.len()];
        for (r, &i) in (0u32..).zip(&order) {
            rank[i as usize] = r;
        }
        rank
    }

    /// Every timeline's closed intervals as one merge, in partition order (open spans must
    /// be closed first). If nothing was spilled, the last run stays in memory; otherwise it is
    /// spilled too, so that the rows live on disk only.
    pub(crate) fn into_merge_source(mut self) -> MergeSource {
        if self.held > 0 {
            if self.runs.is_empty() || self.spill_failed {
                let sorted = self.sort_held();
                self.runs.push(Run::Memory(Arc::new(sorted)));
            } else {
                self.spill_held();
            }
        }
        let mut order: Vec<(Tp, SimTime, u32)> =
            (0u32..).zip(&self.parts).map(|(i, &(tp, start))| (tp, start, i)).collect();
        order.sort_unstable_by_key(|&(tp, _, _)| tp);
        let rows = self.runs.iter().map(Run::len).sum();
        MergeSource { file: self.spill.map(SpillFile::into_reader), runs: self.runs, order, rows }
    }
}

/// The sorted runs of every timeline's closed intervals, read back partition by partition
/// ([`MergeSource::merge`]); shared by the report's [`OwnershipLog`](crate::OwnershipLog).
#[derive(Debug)]
pub(crate) struct MergeSource {
    file: Option<crate::spill::SpillReader>,
    runs: Vec<Run>,
    /// Every timeline (partition, start, index), in partition order.
    order: Vec<(Tp, SimTime, u32)>,
    rows: usize,
}

impl MergeSource {
    /// Whether any run is on disk.
    pub(crate) fn spilled(&self) -> bool {
        self.runs.iter().any(|r| matches!(r, Run::Disk { .. }))
    }

    /// Total closed intervals (rows).
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// A merge from the first partition.
    pub(crate) fn merge(&self) -> Merge<'_> {
        let cursors = self.runs.iter().map(|run| run.cursor(self.file.as_ref())).collect();
        Merge { source: self, cursors, next: 0 }
    }
}

/// Reads every partition's rows from the sorted runs of a [`MergeSource`], in partition order.
pub(crate) struct Merge<'a> {
    source: &'a MergeSource,
    cursors: Vec<crate::spill::Cursor<'a>>,
    next: usize,
}

impl Merge<'_> {
    /// The next partition (every timeline, also one without rows) and its exact rows, in time
    /// order, into `rows` (cleared first).
    pub(crate) fn next_partition(&mut self, rows: &mut Vec<ExactRow>) -> io::Result<Option<Tp>> {
        rows.clear();
        let Some(&(tp, start, index)) = self.source.order.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        let mut at = start;
        for cursor in &mut self.cursors {
            while let Some(span) = cursor.peek()? {
                if span.timeline() != index as usize {
                    break;
                }
                cursor.advance();
                rows.push(ExactRow {
                    start: at,
                    end: span.end,
                    owner: span.owner,
                    state: span.state(),
                });
                at = span.end;
            }
        }
        Ok(Some(tp))
    }
}

/// A row with exact times, as the merge reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ExactRow {
    pub(crate) start: SimTime,
    pub(crate) end: SimTime,
    pub(crate) owner: u32,
    pub(crate) state: u8,
}

impl ExactRow {
    /// The row as the log keeps it (times in seconds).
    pub(crate) fn interval(&self) -> OwnershipInterval {
        OwnershipInterval {
            start_s: self.start.as_secs_f64(),
            end_s: self.end.as_secs_f64(),
            owner: self.owner,
            state: self.state,
        }
    }
}

impl ClosedSpan {
    /// The index of its timeline.
    pub(crate) fn timeline(&self) -> usize {
        (self.part_state >> STATE_BITS) as usize
    }

    /// Its state code.
    fn state(&self) -> u8 {
        (self.part_state & ((1 << STATE_BITS) - 1)) as u8
    }
}

impl Availability {
    /// The availability of a partition whose rows are `rows`.
    pub(crate) fn of(rows: &[ExactRow]) -> Availability {
        let mut availability = Availability::default();
        for row in rows {
            availability.add(row.start, row.end, row.state);
        }
        availability
    }

    /// Adds the interval `[start, end)` in state `state` (a state code).
    fn add(&mut self, start: SimTime, end: SimTime, state: u8) {
        let list = match state {
            CONSUMING => &mut self.allowed,
            IDLE => return,
            _ => &mut self.down,
        };
        match list.last_mut() {
            Some(last) if last.1 == start => last.1 = end,
            _ => list.push((start, end)),
        }
    }

    /// Total down time.
    pub(crate) fn downtime(&self) -> SimTime {
        self.down.iter().fold(SimTime::ZERO, |acc, (s, e)| acc + (*e - *s))
    }

    /// Its intervals inside `[from, to)`, cut at the bounds (an episode across a bound counts
    /// on both sides of it).
    pub(crate) fn clipped(&self, from: SimTime, to: SimTime) -> Availability {
        let clip = |list: &[(SimTime, SimTime)]| -> Vec<(SimTime, SimTime)> {
            list.iter().map(|&(s, e)| (s.max(from), e.min(to))).filter(|(s, e)| s < e).collect()
        };
        Availability { down: clip(&self.down), allowed: clip(&self.allowed) }
    }

    /// The down episodes: the down intervals, maximal already ([`Availability::add`] merges
    /// adjacent pieces).
    pub(crate) fn episodes(&self) -> &[(SimTime, SimTime)] {
        &self.down
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collector::tests::{s, tp};
    use crate::ownership::state_code;
    use model::PartState;

    /// Every partition's rows from a merge, in partition order.
    fn read_all(t: Timelines) -> Vec<(Tp, Vec<ExactRow>)> {
        read_source(&t.into_merge_source())
    }

    fn read_source(source: &MergeSource) -> Vec<(Tp, Vec<ExactRow>)> {
        let mut merge = source.merge();
        let mut out = Vec::new();
        let mut rows = Vec::new();
        while let Some(tp) = merge.next_partition(&mut rows).unwrap() {
            out.push((tp, rows.clone()));
        }
        out
    }

    /// Two partitions' intervals interleaved, closed into one list, come back per partition,
    /// in partition order and time order, with their starts (the end before, or the
    /// timeline's start), merged where the owner and state repeat; the availability follows
    /// the states. The same whether the list is spilled at every interval, every third, or
    /// never.
    #[test]
    fn interleaved_timelines_come_back_per_partition() {
        let revoked = state_code(PartState::Revoked);
        for threshold in [1, 3, SPILL_THRESHOLD] {
            let mut t = Timelines::with_threshold(threshold);
            let (a, b) = (t.add(tp(1), s(0)), t.add(tp(0), s(500)));
            let (mut open_a, mut open_b) = (OpenSpan::empty(s(0)), OpenSpan::empty(s(500)));
            t.push((a, &mut open_a), s(1_000), 7, CONSUMING);
            t.push((b, &mut open_b), s(1_500), NO_OWNER, IDLE);
            t.push((a, &mut open_a), s(2_000), 7, CONSUMING); // Extends a's span.
            t.push((b, &mut open_b), s(3_000), NO_OWNER, revoked);
            t.push((a, &mut open_a), s(2_500), 7, revoked);
            t.push((a, &mut open_a), s(4_000), 8, CONSUMING);
            t.close(a, &open_a);
            t.close(b, &open_b);
            let out = read_all(t);
            let rows = |i: usize| -> Vec<(f64, f64, u32, u8)> {
                let r = out[i].1.iter().map(ExactRow::interval);
                r.map(|r| (r.start_s, r.end_s, r.owner, r.state)).collect()
            };
            assert_eq!((out[0].0, out[1].0), (tp(0), tp(1)));
            assert_eq!(rows(1), vec![(0.0, 2.0, 7, 0), (2.0, 2.5, 7, revoked), (2.5, 4.0, 8, 0)]);
            assert_eq!(rows(0), vec![(0.5, 1.5, NO_OWNER, IDLE), (1.5, 3.0, NO_OWNER, revoked)]);
            let (av0, av1) = (Availability::of(&out[0].1), Availability::of(&out[1].1));
            assert_eq!(av1.allowed, vec![(s(0), s(2_000)), (s(2_500), s(4_000))]);
            assert_eq!(av1.down, vec![(s(2_000), s(2_500))]);
            assert_eq!(av0.down, vec![(s(1_500), s(3_000))]);
            assert!(av0.allowed.is_empty());
        }
    }

    /// A closed interval takes 16 bytes.
    #[test]
    fn sizes() {
        assert_eq!(std::mem::size_of::<ClosedSpan>(), 16);
    }

    /// More intervals than a chunk holds keep their order across chunks, and across spilled
    /// runs (a partition added between spills too).
    #[test]
    fn chunks_and_runs_keep_the_order() {
        let alternate = |k: u64| if k.is_multiple_of(2) { CONSUMING } else { IDLE };
        for threshold in [1_000, SPILL_THRESHOLD] {
            let mut t = Timelines::with_threshold(threshold);
            let index = t.add(tp(3), s(0));
            let mut open = OpenSpan::empty(s(0));
            let n = CHUNK as u64 + 3;
            for k in 0..n {
                t.push((index, &mut open), s(k + 1), NO_OWNER, alternate(k));
            }
            let late = t.add(tp(1), s(n));
            let mut late_open = OpenSpan::empty(s(n));
            for k in 0..2_500u64 {
                t.push((late, &mut late_open), s(n + k + 1), 4, alternate(k));
            }
            t.close(index, &open);
            t.close(late, &late_open);
            let source = t.into_merge_source();
            assert_eq!(source.spilled(), threshold < SPILL_THRESHOLD);
            assert_eq!(source.rows() as u64, n + 2_500);
            let out = read_source(&source);
            assert_eq!((out[0].0, out[1].0), (tp(1), tp(3)));
            assert_eq!(out[0].1.len(), 2_500);
            assert!(out[0].1.iter().zip(0u64..).all(|(r, k)| r.start == s(n + k) && r.owner == 4));
            assert_eq!(out[1].1.len() as u64, n);
            assert!(out[1].1.iter().zip(0u64..).all(|(r, k)| r.start == s(k) && r.end == s(k + 1)));
            assert_eq!(Availability::of(&out[1].1).allowed.len() as u64, n.div_ceil(2));
        }
    }
}
