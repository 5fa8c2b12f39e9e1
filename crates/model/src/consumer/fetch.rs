//! A poll's fetch: which records of the owned partitions one `poll()` takes (the rotation of
//! the starting partition, the network delay, `max.poll.records`), and where they go. The walk
//! is written once, over a [`FetchSink`]: [`Consumer::fetch`] puts the records in a batch of
//! their own (every path of the member's machine), and fast stepping's folded catch-ups
//! (`world/stepper/fold.rs`) put them straight into the partitions' reports
//! ([`Consumer::fetch_into`]), so a batch that ends within the catch-up is never copied.

use super::{positions, Batch, Consumer, ConsumerEnv, LogView, SpareBatch, NO_POSITION};
use crate::types::Tp;
use sim_core::SimTime;

/// Owned partitions up to which a fetch walks them with a mask, one bit each
/// ([`Consumer::fetch_walk_masked`]).
const MASKED_WALK_MAX: usize = u64::BITS as usize;

/// Where a fetch puts the records it takes, part by part in batch order.
pub(crate) trait FetchSink {
    /// Reads `tp` (at `place` in the owned order) from position `known` at `at`, taking at
    /// most `max` records: [`LogView::read_from`]'s answer (the new position, and the arrival
    /// there when it is the first after `at`). A sink that lists the records' arrivals appends
    /// them as the log is read ([`LogView::read_into`]).
    fn read<L: LogView + ?Sized>(
        &mut self,
        log: &mut L,
        tp: Tp,
        place: usize,
        span: (SimTime, u64, u64),
    ) -> (u64, Option<SimTime>);

    /// The fetch took `count` records (at least one) of `tp` (at `place`) from offset `first`
    /// on: the batch's next part.
    fn took(&mut self, tp: Tp, place: usize, first: u64, count: usize);
}

/// The sink of [`Consumer::fetch`]: the batch's parts and, when processing varies, its
/// records' arrivals, in the buffers of the last finished batch.
struct BatchSink {
    parts: Vec<(Tp, u64, usize)>,
    /// The records' arrivals in batch order (`None`: not listed; constant processing times
    /// find them from the parts, `Consumer::timed_batch`).
    arrivals: Option<Vec<SimTime>>,
}

impl BatchSink {
    /// Empty lists, from the spare buffers.
    fn from_spare(spare: &mut SpareBatch, listing: bool) -> BatchSink {
        let mut parts = std::mem::take(&mut spare.parts);
        parts.clear();
        let arrivals = listing.then(|| {
            let mut arrivals = std::mem::take(&mut spare.listed_arrivals);
            arrivals.clear();
            arrivals
        });
        BatchSink { parts, arrivals }
    }

    /// Gives the buffers back unused (the fetch took nothing).
    fn give_back(self, spare: &mut SpareBatch) {
        spare.parts = self.parts;
        if let Some(arrivals) = self.arrivals {
            spare.listed_arrivals = arrivals;
        }
    }
}

impl FetchSink for BatchSink {
    #[inline]
    fn read<L: LogView + ?Sized>(
        &mut self,
        log: &mut L,
        tp: Tp,
        _place: usize,
        (at, known, max): (SimTime, u64, u64),
    ) -> (u64, Option<SimTime>) {
        match &mut self.arrivals {
            Some(out) => log.read_into(tp, (at, known, max), out),
            None => log.read_from(tp, at, known, max),
        }
    }

    #[inline]
    fn took(&mut self, tp: Tp, _place: usize, first: u64, count: usize) {
        self.parts.push((tp, first, count));
    }
}

impl Consumer {
    /// Takes up to `max.poll.records` records that reached the client (arrived at least one
    /// network delay ago), rotating the starting partition from poll to poll. Finding none, it
    /// gives the earliest arrival at the position of an owned partition (`SimTime::MAX` if
    /// none is readable), for the poll's wake-up.
    pub(crate) fn fetch<L: LogView + ?Sized>(
        &mut self,
        now: SimTime,
        env: &mut ConsumerEnv<'_, L>,
    ) -> Result<Batch, SimTime> {
        let (start, visible) = self.fetch_start(now)?;
        // A batch of variable processing lists its records' arrivals: copied as the log is
        // read (`LogView::read_into`), instead of looked up again once the batch is known.
        let listing = self.lists_records();
        let mut sink = BatchSink::from_spare(&mut self.poll_loop.spare, listing);
        match self.fetch_walk(start, visible, env.log, &mut sink) {
            Ok(()) => Ok(self.timed_batch(now, sink.parts, sink.arrivals, env)),
            Err(first_unseen) => {
                sink.give_back(&mut self.poll_loop.spare);
                Err(first_unseen)
            }
        }
    }

    /// [`Consumer::fetch`] whose records go to `sink` instead of a batch: the same walk, the
    /// same positions, rotation and arrivals seen afterwards. `Ok` when it took records (their
    /// processing times are the caller's to draw, in batch order, from the member's stream).
    pub(crate) fn fetch_into<L: LogView + ?Sized, S: FetchSink>(
        &mut self,
        now: SimTime,
        log: &mut L,
        sink: &mut S,
    ) -> Result<(), SimTime> {
        let (start, visible) = self.fetch_start(now)?;
        self.fetch_walk(start, visible, log, sink)
    }

    /// The start of a fetch at `now`: the rotation moves on; gives the partition to start from
    /// and the latest arrival visible, or the earliest arrival at a position when the fetch
    /// is known to find nothing (no partition, disconnected, or nothing new since the last
    /// fetch that walked them).
    #[inline]
    fn fetch_start(&mut self, now: SimTime) -> Result<(usize, SimTime), SimTime> {
        let visible = now.saturating_sub(self.params.one_way);
        if self.poll_loop.owned.is_empty() || self.disconnected {
            return Err(SimTime::MAX);
        }
        // The partitions in rotation: from the `cursor`-th (mod their count) on, wrapping.
        let cursor = self.poll_loop.cursor;
        self.poll_loop.cursor = cursor.wrapping_add(1);
        // Known to find nothing new: what the walk below would find, without it (nor the
        // rotation's divide: the poll after a batch often ends here).
        if let Some(earliest) = self.poll_loop.owned.earliest().filter(|e| *e > visible) {
            return Err(earliest);
        }
        Ok((cursor % self.poll_loop.owned.len(), visible))
    }

    /// The walk of a fetch over the owned partitions from the `start`-th on, taking the
    /// records arrived by `visible` into `sink`. `Err`: it took none, with the earliest
    /// arrival at a position (every one of them seen).
    fn fetch_walk<L: LogView + ?Sized, S: FetchSink>(
        &mut self,
        start: usize,
        visible: SimTime,
        log: &mut L,
        sink: &mut S,
    ) -> Result<(), SimTime> {
        if self.poll_loop.owned.len() <= MASKED_WALK_MAX {
            return self.fetch_walk_masked(start, visible, log, sink);
        }
        self.fetch_walk_in_rotation(start, visible, log, sink)
    }

    /// [`Consumer::fetch_walk`] of a member with at most [`MASKED_WALK_MAX`] partitions, in
    /// two passes. The first looks at every partition in place order and notes, in one bit
    /// each, whether the record at its position arrived by `visible`, without a branch on it;
    /// the second reads the partitions whose bit is set, in rotation order from the `start`-th.
    /// Which partitions have a record varies from poll to poll: a branch on it per partition,
    /// and the exits of the rotation's two loops, were the most mispredicted branches of a
    /// stochastic run (docs/performance.md, "(9)"). Takes what
    /// [`Consumer::fetch_walk_in_rotation`] takes: the same reads in the same order; a
    /// partition's arrival is asked before any read instead of just before its own (each
    /// partition's log is its own).
    ///
    /// The arrivals at the positions are asked first only when the table is not known to hold
    /// each of them ([`positions::SeenWalk::fresh`]): after a walk whose reads all gave the
    /// arrival at their new position (a member that keeps up), the first pass compares the
    /// arrivals alone.
    pub(super) fn fetch_walk_masked<L: LogView + ?Sized, S: FetchSink>(
        &mut self,
        start: usize,
        visible: SimTime,
        log: &mut L,
        sink: &mut S,
    ) -> Result<(), SimTime> {
        let positions::SeenWalk { entries, seen, fresh } = self.poll_loop.owned.seen_walk();
        let count = entries.len();
        debug_assert!(start < count && count <= MASKED_WALK_MAX, "{start} of {count}");
        if !*fresh {
            see_every_position(entries, seen, log);
            *fresh = true;
        }
        let mut news = 0u64;
        let mut earliest = SimTime::MAX;
        for (place, seen) in seen.iter().enumerate() {
            let arrived = seen.arrival <= visible;
            news |= u64::from(arrived) << place;
            earliest = earliest.min(if arrived { SimTime::MAX } else { seen.arrival });
        }
        if news == 0 {
            // Nothing new anywhere: the poll waits for the earliest arrival (every one seen).
            self.poll_loop.owned.set_earliest(Some(earliest));
            return Err(earliest);
        }
        let mut budget = self.params.max_poll_records as u64;
        let mut all_known = true;
        // Bit `k` of `rotated` is the partition `k` places after the `start`-th, wrapping.
        let in_range = u64::MAX >> (u64::BITS as usize - count);
        let mut rotated = ((news >> start) | news.wrapping_shl((count - start) as u32)) & in_range;
        while rotated != 0 {
            let after = rotated.trailing_zeros() as usize;
            rotated &= rotated - 1;
            let place = if start + after >= count { start + after - count } else { start + after };
            let (tp, position) = &mut entries[place];
            // Only records from the position on matter: read the log from there, and keep
            // the arrival at the new position for the next fetch.
            let (end, arrival) = sink.read(log, *tp, place, (visible, *position, budget));
            let take = end - *position;
            debug_assert!(take > 0, "the record at the position arrived");
            sink.took(*tp, place, *position, take as usize);
            *position = end;
            budget -= take;
            match arrival {
                Some(arrival) => {
                    seen[place] = positions::Seen { offset: end, arrival };
                    earliest = earliest.min(arrival);
                }
                None => {
                    all_known = false;
                    *fresh = false; // Its arrival is asked at the next walk.
                }
            }
            if budget == 0 {
                all_known = false; // The partitions after this one are not read.
                break;
            }
        }
        self.poll_loop.owned.set_earliest(all_known.then_some(earliest));
        Ok(())
    }

    /// [`Consumer::fetch_walk`] of a member with more than [`MASKED_WALK_MAX`] partitions:
    /// one partition after the other in rotation order.
    pub(super) fn fetch_walk_in_rotation<L: LogView + ?Sized, S: FetchSink>(
        &mut self,
        start: usize,
        visible: SimTime,
        log: &mut L,
        sink: &mut S,
    ) -> Result<(), SimTime> {
        let mut budget = self.params.max_poll_records as u64;
        let mut took_any = false;
        // The earliest arrival at a position after the fetch, while every one is known
        // (`all_known`). A fetch that takes nothing knows every one (only a cap forgets
        // them), and a partition it reads takes a record (its arrival reached `visible`): then
        // this is the earliest arrival of the records that found nothing new, the poll's
        // wake-up.
        let mut earliest = SimTime::MAX;
        let mut all_known = true;
        // The partitions in rotation: from the `start`-th on, then those before it, each
        // half a plain loop (an index loop over the whole rotation checks a bound per
        // partition: 4.5% more instructions for members of ten partitions, "(7)").
        let (from, before) = self.poll_loop.owned.rotation_with_seen_mut(start);
        'halves: for (first_place, (entries, seen)) in [(start, from), (0, before)] {
            let places = first_place..;
            for (place, ((tp, position), seen)) in places.zip(entries.iter_mut().zip(seen)) {
                // The arrival at a position never changes: the log is asked once per
                // position (a partition without one, `NO_POSITION`, is never read; it is
                // `NOT_SEEN`'s offset, whose arrival never comes).
                if seen.offset != *position {
                    if *position == NO_POSITION {
                        continue;
                    }
                    *seen =
                        positions::Seen { offset: *position, arrival: log.arrival(*tp, *position) };
                }
                // Usually nothing new: the record at the position arrives later.
                if seen.arrival > visible {
                    earliest = earliest.min(seen.arrival);
                    continue;
                }
                // Only records from the position on matter: read the log from there, and
                // keep the arrival at the new position for the next fetch.
                let (end, arrival) = sink.read(log, *tp, place, (visible, *position, budget));
                let take = end.saturating_sub(*position);
                if take > 0 {
                    sink.took(*tp, place, *position, take as usize);
                    took_any = true;
                    *position += take;
                    budget -= take;
                }
                match arrival {
                    Some(arrival) => {
                        *seen = positions::Seen { offset: end, arrival };
                        earliest = earliest.min(arrival);
                    }
                    None => all_known = false,
                }
                if budget == 0 {
                    all_known = false; // The partitions after this one are not looked at.
                    break 'halves;
                }
            }
        }
        let earliest = all_known.then_some(earliest);
        self.poll_loop.owned.set_earliest(earliest);
        if took_any {
            return Ok(());
        }
        // Every partition was read and found nothing new: the poll waits for this one.
        debug_assert!(earliest.is_some(), "a fetch that took nothing knows every arrival");
        Err(earliest.unwrap_or(SimTime::MAX))
    }
}

/// Asks the log the arrival at each position not seen yet (a partition without a position,
/// `NO_POSITION`, is never read: `NOT_SEEN`, whose offset it is and whose arrival never
/// comes). The arrival at a position never changes: the log is asked once per position.
fn see_every_position<L: LogView + ?Sized>(
    entries: &[(Tp, u64)],
    seen: &mut [positions::Seen],
    log: &mut L,
) {
    for ((tp, position), seen) in entries.iter().zip(seen) {
        if seen.offset != *position {
            *seen = match *position {
                NO_POSITION => positions::NOT_SEEN,
                position => {
                    positions::Seen { offset: position, arrival: log.arrival(*tp, position) }
                }
            };
        }
    }
}
