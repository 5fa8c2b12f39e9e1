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
//! place. At the end ([`Timelines::regroup`]) a counting sort by partition builds each
//! partition's rows with their exact size, reading the list once, in order, and freeing it
//! chunk by chunk.

use crate::ownership::{OwnershipInterval, CONSUMING, IDLE, NO_OWNER};
use model::Tp;
use sim_core::SimTime;

/// Closed intervals per chunk (1 MiB).
const CHUNK: usize = 1 << 16;

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
/// left by [`STATE_BITS`] with the state code in the low bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ClosedSpan {
    end: SimTime,
    owner: u32,
    part_state: u32,
}

/// Every partition's closed intervals, in the order they closed.
#[derive(Debug, Default)]
pub(crate) struct Timelines {
    closed: Vec<Vec<ClosedSpan>>,
    /// By timeline index: the partition and when its timeline starts.
    parts: Vec<(Tp, SimTime)>,
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

/// One partition's timeline, regrouped at the end of the run.
#[derive(Debug)]
pub(crate) struct PartTimeline {
    /// The partition.
    pub(crate) tp: Tp,
    /// Its `ownership.csv` rows, in time order.
    pub(crate) rows: Vec<OwnershipInterval>,
    /// Its down and allowed intervals.
    pub(crate) availability: Availability,
}

impl Timelines {
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
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(span);
                self.closed.push(chunk);
            }
        }
    }

    /// Every timeline's rows and availability, by timeline index (open spans must be closed
    /// first): a counting sort of the closed intervals by timeline, stable (each partition's
    /// rows stay in time order), which frees the list chunk by chunk. The scattering pass
    /// writes exact rows only (its working set, a row and an end per partition, stays in the
    /// cache); each partition's availability and row seconds are read from them afterwards.
    pub(crate) fn regroup(self) -> Vec<PartTimeline> {
        let mut counts = vec![0usize; self.parts.len()];
        for span in self.closed.iter().flatten() {
            counts[span.timeline()] += 1;
        }
        let mut rows: Vec<Vec<ExactRow>> = counts.into_iter().map(Vec::with_capacity).collect();
        let mut ends: Vec<SimTime> = self.parts.iter().map(|(_, start)| *start).collect();
        for chunk in self.closed {
            for span in chunk {
                let i = span.timeline();
                let (start, end) = (ends[i], span.end);
                rows[i].push(ExactRow { start, end, owner: span.owner, state: span.state() });
                ends[i] = end;
            }
        }
        self.parts.into_iter().zip(rows).map(|((tp, _), rows)| PartTimeline::of(tp, rows)).collect()
    }
}

/// A row with exact times, as the regrouping writes it: the same size as an
/// [`OwnershipInterval`], into which it is converted in place.
#[derive(Clone, Copy, Debug)]
struct ExactRow {
    start: SimTime,
    end: SimTime,
    owner: u32,
    state: u8,
}

impl ClosedSpan {
    /// The index of its timeline.
    fn timeline(&self) -> usize {
        (self.part_state >> STATE_BITS) as usize
    }

    /// Its state code.
    fn state(&self) -> u8 {
        (self.part_state & ((1 << STATE_BITS) - 1)) as u8
    }
}

impl PartTimeline {
    /// The timeline of `tp` from its exact rows.
    fn of(tp: Tp, rows: Vec<ExactRow>) -> PartTimeline {
        let mut availability = Availability::default();
        for row in &rows {
            availability.add(row.start, row.end, row.state);
        }
        let seconds = |r: ExactRow| OwnershipInterval {
            start_s: r.start.as_secs_f64(),
            end_s: r.end.as_secs_f64(),
            owner: r.owner,
            state: r.state,
        };
        // Same size and alignment: `collect` reuses the allocation.
        PartTimeline { tp, rows: rows.into_iter().map(seconds).collect(), availability }
    }
}

impl Availability {
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

    /// Two partitions' intervals interleaved in one list come back per partition, in time
    /// order, with their starts (the end before, or the timeline's start), merged where the
    /// owner and state repeat; the availability follows the states.
    #[test]
    fn interleaved_timelines_regroup_per_partition() {
        let revoked = state_code(PartState::Revoked);
        let mut t = Timelines::default();
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
        let out = t.regroup();
        let rows = |i: usize| -> Vec<(f64, f64, u32, u8)> {
            out[i].rows.iter().map(|r| (r.start_s, r.end_s, r.owner, r.state)).collect()
        };
        assert_eq!((out[0].tp, out[1].tp), (tp(1), tp(0)));
        assert_eq!(rows(0), vec![(0.0, 2.0, 7, 0), (2.0, 2.5, 7, revoked), (2.5, 4.0, 8, 0)]);
        assert_eq!(rows(1), vec![(0.5, 1.5, NO_OWNER, IDLE), (1.5, 3.0, NO_OWNER, revoked)]);
        assert_eq!(out[0].availability.allowed, vec![(s(0), s(2_000)), (s(2_500), s(4_000))]);
        assert_eq!(out[0].availability.down, vec![(s(2_000), s(2_500))]);
        assert_eq!(out[1].availability.down, vec![(s(1_500), s(3_000))]);
        assert!(out[1].availability.allowed.is_empty());
    }

    /// A closed interval takes 16 bytes; an exact row converts into a log row in place.
    #[test]
    fn sizes() {
        assert_eq!(std::mem::size_of::<ClosedSpan>(), 16);
        assert_eq!(std::mem::size_of::<ExactRow>(), std::mem::size_of::<OwnershipInterval>());
        assert_eq!(std::mem::align_of::<ExactRow>(), std::mem::align_of::<OwnershipInterval>());
    }

    /// More intervals than a chunk holds keep their order across chunks.
    #[test]
    fn chunks_keep_the_order() {
        let mut t = Timelines::default();
        let index = t.add(tp(0), s(0));
        let mut open = OpenSpan::empty(s(0));
        let n = CHUNK as u64 + 3;
        for k in 0..n {
            let state = if k % 2 == 0 { CONSUMING } else { IDLE };
            t.push((index, &mut open), s(k + 1), NO_OWNER, state);
        }
        t.close(index, &open);
        assert_eq!(t.closed.len(), 2);
        let out = t.regroup();
        assert_eq!(out[0].rows.len() as u64, n);
        assert!(out[0].rows.iter().zip(0u64..).all(|(r, k)| r.start_s == s(k).as_secs_f64()));
        assert_eq!(out[0].availability.allowed.len() as u64, n.div_ceil(2));
    }
}
