//! Poisson arrival times of one partition, exact and in bounded memory (issue 27 item 2).
//!
//! Every record keeps the arrival time drawn for it from the partition's own stream (exponential
//! gaps, `RngStreams::indexed("workload", partition)`); drawing is sequential, so the time of
//! offset `k` needs the `k` draws before it. What is kept of them:
//! - **held**: the times of the offsets `first_held..drawn`, the hot end of the log (a consumer
//!   that keeps up reads here, and so do the log-end questions of the producer side). Nothing
//!   below the lowest offset anyone can still read is held (`trim_below`), and when a backlog
//!   makes the held times more than [`Sizes::held_cap`] long, all but the newest
//!   [`Sizes::held_keep`] are dropped.
//! - **checkpoints**: for every block of [`Sizes::block`] offsets still readable, the generator's
//!   word position before the block's first draw and the arrival before it: 32 bytes a block.
//! - **window**: times of offsets below `first_held` drawn again from a checkpoint with a second
//!   generator (`decoder`) when a lagging reader asks for them, extended as it reads on.
//! - **origin**: the generator's word position before the first draw (block 0's checkpoint),
//!   kept after trimming: a reader the trim floor did not know of (below `trimmed`) has the
//!   checkpoints from its block on drawn again (`untrim`), and reads as a lagging reader.
//!
//! A dropped time drawn again is the same time: the same generator from the same word position
//! (`ChaCha8Rng::set_word_pos`) gives the same words, so every value is what holding every
//! arrival gave (the test `bounded_arrivals_equal_the_full_record` compares them). A backlog
//! of `n` records costs `32 n / block` bytes instead of `8 n`; a reader of a backlog pays one
//! more draw per record it reads below the held times.

use std::collections::VecDeque;

use rand_distr::{Distribution, Exp};
use sim_core::{SimRng, SimTime};

/// Arrivals drawn ahead of their first read, at least this many at a time (the stream is the
/// partition's own: drawing ahead changes no value, and touches the generator's state once per
/// block instead of once per record).
const DRAW_AHEAD: u64 = 16;

/// Held times a fetch looks at one by one before it searches the rest
/// ([`PoissonArrivals::read_held`]).
const SCAN_FIRST: usize = 8;

/// A trimmed prefix of the held times is dropped once it is this long and at least as long as
/// the live part (amortized: each time is moved at most once per its own length).
const COMPACT_FROM: usize = 32;

/// A list that keeps nothing: [`PoissonArrivals::read_held`] is
/// [`PoissonArrivals::read_held_into`] without a list.
struct Unlisted;

impl super::ArrivalList for Unlisted {
    #[inline]
    fn reserve(&mut self, _additional: usize) {}
    #[inline]
    fn push(&mut self, _arrival: SimTime) {}
    fn append_with<R>(&mut self, append: impl FnOnce(&mut Vec<SimTime>) -> R) -> R {
        append(&mut Vec::new())
    }
}

/// How much of the drawn times is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sizes {
    /// Offsets per checkpoint (a power of two).
    pub block: u64,
    /// Held times past which a backlog's older times are dropped.
    pub held_cap: u64,
    /// Held times kept when they are dropped (the newest).
    pub held_keep: u64,
    /// Decoded times past which the window's front is dropped.
    pub window_cap: usize,
}

/// The sizes of a run: a checkpoint every 1,024 offsets (32 bytes: 0.03 bytes a record), at
/// most 32,768 held times (256 KiB) after a block boundary, 4,096 kept, a window of at most
/// 4,096 times. A partition whose readers keep up holds exactly what it held before: its live
/// times are far fewer than the cap (200 records/s over a 5 s commit interval: 1,000).
pub(crate) const RUN_SIZES: Sizes =
    Sizes { block: 1024, held_cap: 32_768, held_keep: 4096, window_cap: 4096 };

/// The generator's place before the first draw of a block.
#[derive(Clone, Copy, Debug)]
struct Checkpoint {
    /// The arrival of the offset before the block's first (the log's start for block 0).
    before: SimTime,
    /// `ChaCha8Rng::get_word_pos` before the block's first draw.
    word_pos: u128,
}

/// Poisson arrivals with mean `rate_per_s`: see the module doc for what is held.
#[derive(Clone, Debug)]
pub(crate) struct PoissonArrivals {
    rate_per_s: f64,
    /// The gap distribution, built once (`None` for a rate `Exp::new` refuses: drawing then
    /// panics, as it did; a rate of at most zero draws nothing).
    gap_s: Option<Exp<f64>>,
    sizes: Sizes,
    /// The frontier's generator: positioned after the last drawn arrival.
    rng: Box<SimRng>,
    /// Its word position before the first draw: block 0's checkpoint, kept after trimming it
    /// (a reader sent below `trimmed` draws the log again from there: [`Self::untrim`]).
    origin_word_pos: u128,
    /// Lowest offset anyone can still read.
    trimmed: u64,
    /// `times[head..]` are the arrivals of offsets `first_held..drawn` (those before `head` are
    /// dropped, kept until the next compaction). Never empty once anything is drawn.
    first_held: u64,
    head: usize,
    times: Vec<SimTime>,
    /// `checkpoints[i]` is block `first_block + i`'s; every block from the one holding
    /// `trimmed` to the last one drawn into has one.
    first_block: u64,
    checkpoints: VecDeque<Checkpoint>,
    /// Decoded arrivals of offsets `window_start..window_start + window.len()`, all below
    /// `first_held`.
    window_start: u64,
    window: Vec<SimTime>,
    /// Positioned after the window's last time (or at its checkpoint when it is empty), with
    /// the arrival before the window's end.
    decoder: Option<(Box<SimRng>, SimTime)>,
}

impl PoissonArrivals {
    pub(crate) fn new(rate_per_s: f64, rng: SimRng, sizes: Sizes) -> PoissonArrivals {
        assert!(sizes.block.is_power_of_two(), "block {}", sizes.block);
        assert!(sizes.held_keep >= DRAW_AHEAD && sizes.held_keep <= sizes.held_cap, "{sizes:?}");
        PoissonArrivals {
            rate_per_s,
            gap_s: Exp::new(rate_per_s).ok(),
            sizes,
            origin_word_pos: rng.get_word_pos(),
            rng: Box::new(rng),
            trimmed: 0,
            first_held: 0,
            head: 0,
            times: vec![],
            first_block: 0,
            checkpoints: VecDeque::new(),
            window_start: 0,
            window: vec![],
            decoder: None,
        }
    }

    /// Whether no record ever arrives.
    pub(crate) fn never(&self) -> bool {
        self.rate_per_s <= 0.0
    }

    /// Offsets drawn so far.
    #[inline]
    fn drawn_count(&self) -> u64 {
        self.first_held + (self.times.len() - self.head) as u64
    }

    /// The held times.
    #[inline]
    fn held(&self) -> &[SimTime] {
        &self.times[self.head..]
    }

    /// The arrival of `offset` if it is held.
    #[inline]
    pub(crate) fn drawn(&self, offset: u64) -> Option<SimTime> {
        let after = usize::try_from(offset.checked_sub(self.first_held)?).ok()?;
        self.held().get(after).copied()
    }

    /// Draws until `target` offsets are drawn, and at least a block more, recording a
    /// checkpoint at each block boundary. Held times below `keep_from` may be dropped there,
    /// down to the newest `held_keep`.
    #[cold]
    fn draw_to(&mut self, start: SimTime, target: u64, keep_from: u64) {
        let mut drawn = self.drawn_count();
        let target = target.max(drawn + DRAW_AHEAD);
        let gap_s = self.gap_s.expect("positive rate");
        let mut prev = self.times.last().copied().unwrap_or(start);
        while drawn < target {
            if drawn & (self.sizes.block - 1) == 0 {
                self.checkpoints
                    .push_back(Checkpoint { before: prev, word_pos: self.rng.get_word_pos() });
                self.cap_held(keep_from);
            }
            let block_end = (drawn | (self.sizes.block - 1)) + 1;
            let segment_end = target.min(block_end);
            self.make_room((segment_end - drawn) as usize);
            for _ in drawn..segment_end {
                prev = next_poisson(prev, &gap_s, &mut self.rng);
                self.times.push(prev);
            }
            drawn = segment_end;
        }
    }

    /// Drops held times of a backlog: when more than `held_cap` are held, all below
    /// `keep_from` but the newest `held_keep` (they can be drawn again from a checkpoint).
    fn cap_held(&mut self, keep_from: u64) {
        let drawn = self.drawn_count();
        if drawn - self.first_held <= self.sizes.held_cap {
            return;
        }
        let new_first = keep_from.min(drawn - self.sizes.held_keep).max(self.first_held);
        self.drop_held_below(new_first);
    }

    /// Room for `additional` more times: a trimmed prefix of at least a quarter of the held
    /// times (and [`COMPACT_FROM`]) is dropped before the vector would grow, instead of
    /// doubling it with the prefix in it (each time is then moved at most three times per its
    /// own length). A partition whose readers keep up holds a few seconds of records between
    /// two commits: every one of its partitions' vectors kept twice what it needed, the
    /// stochastic reference's largest allocation (docs/limits.md).
    fn make_room(&mut self, additional: usize) {
        let len = self.times.len();
        if len + additional > self.times.capacity()
            && self.head >= COMPACT_FROM
            && self.head * 4 >= len
        {
            self.times.drain(..self.head);
            self.head = 0;
        }
        self.times.reserve(additional);
    }

    /// Moves `first_held` up to `offset` (at most the last drawn), compacting amortized.
    fn drop_held_below(&mut self, offset: u64) {
        let keep_last = (self.times.len() - self.head).saturating_sub(1) as u64;
        let drop = offset.saturating_sub(self.first_held).min(keep_last) as usize;
        self.head += drop;
        self.first_held += drop as u64;
        if self.head >= COMPACT_FROM && self.head >= self.times.len() - self.head {
            self.times.drain(..self.head);
            self.head = 0;
        }
    }

    /// Draws until the last time is after `at` (`keep_from` as in [`Self::draw_to`]).
    fn draw_past(&mut self, start: SimTime, at: SimTime, keep_from: u64) {
        while self.times.last().is_none_or(|t| *t <= at) {
            let next = self.drawn_count() + 1;
            self.draw_to(start, next, keep_from);
        }
    }

    /// When `offset` arrives, drawing it first if need be (`offset >= trimmed`).
    #[inline(never)]
    pub(crate) fn arrival(&mut self, start: SimTime, offset: u64) -> SimTime {
        if self.never() {
            return SimTime::MAX;
        }
        self.untrim(start, offset);
        self.assert_readable(offset);
        if offset >= self.drawn_count() {
            self.draw_to(start, offset + 1, offset);
        }
        match self.drawn(offset) {
            Some(arrival) => arrival,
            None => self.decoded(offset),
        }
    }

    /// Panics when `offset` was trimmed: nobody was to read it again.
    #[inline]
    fn assert_readable(&self, offset: u64) {
        assert!(offset >= self.trimmed, "arrival of trimmed offset {offset} < {}", self.trimmed);
    }

    /// How many records have arrived by `at`, the trimmed ones included (`at >= start`).
    pub(crate) fn log_end(&mut self, start: SimTime, at: SimTime) -> u64 {
        if self.never() {
            return 0;
        }
        self.draw_past(start, at, u64::MAX);
        let held = self.held();
        if held[0] <= at {
            return self.first_held + held.partition_point(|t| *t <= at) as u64;
        }
        self.count_below_held(at)
    }

    /// How many arrival times are held.
    pub(crate) fn held_len(&self) -> usize {
        self.held().len()
    }

    /// The index in `times` of `offset` if it is held.
    #[inline]
    fn held_index(&self, offset: u64) -> Option<usize> {
        let after = usize::try_from(offset.checked_sub(self.first_held)?).ok()?;
        let index = self.head.checked_add(after)?;
        (index < self.times.len()).then_some(index)
    }

    /// [`PartitionLog::read_from`](super::PartitionLog::read_from) when the held times answer
    /// it: `known` is held, and either a held time from it on is after `at` or `max` of them
    /// are not (`None` otherwise: the times to look at are not drawn yet, or not held).
    #[inline]
    pub(crate) fn read_held(
        &self,
        at: SimTime,
        known: u64,
        max: u64,
    ) -> Option<(u64, Option<SimTime>)> {
        self.read_held_into(at, known, max, &mut Unlisted)
    }

    /// [`Self::read_held`] that also appends the arrivals of the offsets read to `out`
    /// (`LogView::read_into`; nothing is appended when it gives `None`). Each time looked at
    /// is listed as it is found arrived, in the same loop: a reader that keeps up takes a
    /// record or two, and a second loop over them would end at a count that varies from
    /// read to read (a mispredicted branch each, "(9)" in docs/performance.md).
    #[inline]
    pub(crate) fn read_held_into<A: super::ArrivalList>(
        &self,
        at: SimTime,
        known: u64,
        max: u64,
        out: &mut A,
    ) -> Option<(u64, Option<SimTime>)> {
        let from = self.held_index(known)?;
        let to = from.saturating_add(usize::try_from(max).unwrap_or(usize::MAX));
        let ahead = &self.times[from..to.min(self.times.len())];
        // The times to look at are not all drawn: no answer here (and nothing listed).
        if to > self.times.len() && ahead.last().is_none_or(|last| *last <= at) {
            return None;
        }
        let first = ahead.len().min(SCAN_FIRST);
        out.reserve(first);
        let mut taken = first;
        for (k, &arrival) in ahead[..first].iter().enumerate() {
            if arrival > at {
                taken = k;
                break;
            }
            out.push(arrival);
        }
        if taken == first {
            // A backlog: search the rest.
            let rest = ahead[first..].partition_point(|t| *t <= at);
            out.reserve(rest);
            for &arrival in &ahead[first..first + rest] {
                out.push(arrival);
            }
            taken += rest;
        }
        match ahead.get(taken) {
            Some(&arrival) => Some((known + taken as u64, Some(arrival))),
            None => Some((known + max, None)),
        }
    }

    /// The first offset from `known` on that arrives after `at`.
    #[inline]
    pub(crate) fn log_end_from(&mut self, start: SimTime, at: SimTime, known: u64) -> u64 {
        // The hot path: `known` is held and the last time drawn is after `at` (nothing to
        // draw): search the held times from `known` on.
        if let Some(from) = self.held_index(known) {
            if self.times.last().is_some_and(|t| *t > at) {
                return known + self.times[from..].partition_point(|t| *t <= at) as u64;
            }
        }
        self.log_end_from_drawing(start, at, known)
    }

    /// [`Self::log_end_from`] when `known` is not held or the log must be drawn past `at`.
    #[inline(never)]
    fn log_end_from_drawing(&mut self, start: SimTime, at: SimTime, known: u64) -> u64 {
        if known < self.trimmed {
            return self.log_end(start, at).max(known);
        }
        if known >= self.drawn_count() {
            self.draw_to(start, known + 1, known);
        }
        // A reader at the log end asks whether anything arrived: usually not.
        if self.drawn(known).is_some_and(|t| t > at) {
            return known;
        }
        // Nothing from `known` on is kept from dropping: a lagging reader must not make its
        // backlog held again (the answer is counted below the held times if need be).
        self.draw_past(start, at, u64::MAX);
        match self.held_index(known) {
            Some(from) => known + self.times[from..].partition_point(|t| *t <= at) as u64,
            None => self.log_end(start, at).max(known),
        }
    }

    /// Appends the arrivals of offsets `first..first + count` to `out`.
    #[inline]
    pub(crate) fn arrivals_into(
        &mut self,
        start: SimTime,
        first: u64,
        count: u64,
        out: &mut Vec<SimTime>,
    ) {
        // The hot path: every one of them held.
        if let Some(from) = self.held_index(first) {
            let to = from.saturating_add(usize::try_from(count).unwrap_or(usize::MAX));
            if to <= self.times.len() {
                out.extend_from_slice(&self.times[from..to]);
                return;
            }
        }
        self.arrivals_into_drawing(start, first, count, out);
    }

    /// [`Self::arrivals_into`] when some of them are not held (drawn ahead, or dropped).
    #[inline(never)]
    fn arrivals_into_drawing(
        &mut self,
        start: SimTime,
        first: u64,
        count: u64,
        out: &mut Vec<SimTime>,
    ) {
        if count == 0 {
            return;
        }
        if self.never() {
            out.extend((0..count).map(|_| SimTime::MAX));
            return;
        }
        self.untrim(start, first);
        self.assert_readable(first);
        let end = first + count;
        if end > self.drawn_count() {
            self.draw_to(start, end, first);
        }
        let mut next = first;
        while next < end.min(self.first_held) {
            next = self.decoded_into(next, end.min(self.first_held), out);
        }
        if next < end {
            let from = (next - self.first_held) as usize;
            let to = (end - self.first_held) as usize;
            out.extend_from_slice(&self.held()[from..to]);
        }
    }

    /// Makes `offset` readable again if it was trimmed: a reader the world's floor did not
    /// know of (a member applying an assignment whose committed offset was read before a
    /// later commit; the world then counts its position). The checkpoints from `offset`'s
    /// block to the first one kept are drawn again from block 0's (the same generator from
    /// the same word position: the same times), so every later read is a backlog read.
    #[inline]
    fn untrim(&mut self, start: SimTime, offset: u64) {
        if offset < self.trimmed {
            self.restore_checkpoints(start, offset);
        }
    }

    /// [`Self::untrim`]'s work: `offset` below `trimmed`.
    #[cold]
    #[inline(never)]
    fn restore_checkpoints(&mut self, start: SimTime, offset: u64) {
        let gap_s = self.gap_s.expect("a trimmed log has drawn times: a positive rate");
        let block = self.sizes.block;
        let from_block = offset / block;
        let mut decoder = self.rng.clone();
        decoder.set_word_pos(self.origin_word_pos);
        let mut prev = start;
        let mut restored = Vec::new();
        for k in 0..self.first_block * block {
            if k % block == 0 && k / block >= from_block {
                restored.push(Checkpoint { before: prev, word_pos: decoder.get_word_pos() });
            }
            prev = next_poisson(prev, &gap_s, &mut decoder);
        }
        if let Some(kept) = self.checkpoints.front() {
            debug_assert_eq!(kept.before, prev, "drawn again, block {}", self.first_block);
            debug_assert_eq!(kept.word_pos, decoder.get_word_pos(), "drawn again");
        }
        for checkpoint in restored.into_iter().rev() {
            self.checkpoints.push_front(checkpoint);
        }
        self.first_block = self.first_block.min(from_block);
        self.trimmed = offset;
    }

    /// Forgets the times of offsets below `offset`, keeping the last one drawn.
    pub(crate) fn trim_below(&mut self, offset: u64) {
        let last = self.drawn_count().saturating_sub(1);
        self.trimmed = self.trimmed.max(offset.min(last));
        self.drop_held_below(self.trimmed);
        let readable_block = self.trimmed / self.sizes.block;
        while self.first_block < readable_block && !self.checkpoints.is_empty() {
            self.checkpoints.pop_front();
            self.first_block += 1;
        }
        if self.window_start + self.window.len() as u64 <= self.trimmed {
            self.window.clear();
            self.decoder = None;
        }
    }

    /// The arrival of an offset below the held times, from the window (drawn again from its
    /// block's checkpoint when the window does not reach it).
    #[cold]
    fn decoded(&mut self, offset: u64) -> SimTime {
        self.decode_through(offset);
        self.window[(offset - self.window_start) as usize]
    }

    /// Appends the decoded arrivals from `first` on, below `end` (at most `first_held`), as far
    /// as the window reaches after decoding `first`'s block; returns the next offset.
    fn decoded_into(&mut self, first: u64, end: u64, out: &mut Vec<SimTime>) -> u64 {
        self.decode_through(first);
        let window_end = self.window_start + self.window.len() as u64;
        let to = end.min(window_end);
        let from = (first - self.window_start) as usize;
        out.extend_from_slice(&self.window[from..(to - self.window_start) as usize]);
        to
    }

    /// Makes the window hold `offset` (below `first_held`) and the rest of its block: extends
    /// the window when it reaches the block, else starts it again at the block's checkpoint.
    fn decode_through(&mut self, offset: u64) {
        let block_start = offset & !(self.sizes.block - 1);
        let window_end = self.window_start + self.window.len() as u64;
        let reaches =
            self.decoder.is_some() && self.window_start <= offset && window_end >= block_start;
        if !reaches {
            self.restart_window(block_start);
        }
        if self.window.len() > self.sizes.window_cap {
            let drop = block_start.max(self.window_start) - self.window_start;
            self.window.drain(..drop as usize);
            self.window_start += drop;
        }
        let through = (block_start + self.sizes.block).min(self.first_held);
        self.extend_window(through);
        debug_assert!(offset < self.window_start + self.window.len() as u64, "offset {offset}");
    }

    /// An empty window at `block_start` with the decoder at the block's checkpoint.
    fn restart_window(&mut self, block_start: u64) {
        let index = usize::try_from(block_start / self.sizes.block - self.first_block)
            .expect("checkpoint index fits usize");
        let checkpoint = self.checkpoints[index];
        let mut decoder = self.rng.clone();
        decoder.set_word_pos(checkpoint.word_pos);
        self.window.clear();
        self.window_start = block_start;
        self.decoder = Some((decoder, checkpoint.before));
    }

    /// Decodes until the window ends at `through`.
    fn extend_window(&mut self, through: u64) {
        let gap_s = self.gap_s.expect("positive rate");
        let (decoder, prev) = self.decoder.as_mut().expect("a window has a decoder");
        let mut window_end = self.window_start + self.window.len() as u64;
        while window_end < through {
            *prev = next_poisson(*prev, &gap_s, decoder);
            self.window.push(*prev);
            window_end += 1;
        }
    }

    /// The number of arrivals by `at` when the first held time is after it: at least
    /// `trimmed`, at most `first_held`, counted in the one block whose arrivals straddle `at`.
    fn count_below_held(&mut self, at: SimTime) -> u64 {
        // The last block whose checkpoint's `before` arrived by `at`: every offset below its
        // start arrived, and the next block's `before` (its own last time) did not.
        let found = self.checkpoints.partition_point(|c| c.before <= at);
        if found == 0 {
            return self.trimmed;
        }
        let block_start = (self.first_block + found as u64 - 1) * self.sizes.block;
        let from = block_start.max(self.trimmed);
        if from >= self.first_held {
            return from;
        }
        self.decode_through(from);
        let window_end = (self.window_start + self.window.len() as u64).min(self.first_held);
        let searched = &self.window
            [(from - self.window_start) as usize..(window_end - self.window_start) as usize];
        from + searched.partition_point(|t| *t <= at) as u64
    }

    /// Times held, checkpoints and decoded times (for the memory test).
    #[cfg(test)]
    pub(crate) fn kept(&self) -> (usize, usize, usize) {
        (self.times.len(), self.checkpoints.len(), self.window.len())
    }
}

/// The arrival after `prev`: an exponential gap in seconds, rounded to the nanosecond as
/// `SimTime::from_secs_f64` rounds it.
fn next_poisson(prev: SimTime, gap_s: &Exp<f64>, rng: &mut SimRng) -> SimTime {
    let gap_s: f64 = gap_s.sample(rng);
    // At least one nanosecond apart so offsets keep a strict order.
    let gap = SimTime::from_secs_f64(gap_s).max(SimTime::from_nanos(1));
    prev.saturating_add(gap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    use sim_core::RngStreams;

    /// Sizes that never drop a held time: the full record the bounded one must equal.
    const FULL: Sizes =
        Sizes { block: 1 << 20, held_cap: u64::MAX, held_keep: 1 << 20, window_cap: 1 << 20 };
    /// Small sizes, so every path (drops, decoding, window restarts and caps) runs often.
    const SMALL: Sizes = Sizes { block: 16, held_cap: 64, held_keep: 16, window_cap: 32 };

    fn pair(seed: u64, rate_per_s: f64) -> (PoissonArrivals, PoissonArrivals) {
        let stream = || RngStreams::new(seed).stream("workload-test");
        (
            PoissonArrivals::new(rate_per_s, stream(), FULL),
            PoissonArrivals::new(rate_per_s, stream(), SMALL),
        )
    }

    /// A lagging reader, rewinds to the trim floor, reads at random readable offsets, log ends
    /// now and in the past, batches and trims: every answer of the bounded record equals the
    /// full record's, over many seeds.
    #[test]
    fn bounded_arrivals_equal_the_full_record() {
        let start = SimTime::from_millis(3);
        for seed in 0..60u64 {
            let (mut full, mut small) = pair(seed, 1000.0);
            let mut ops = RngStreams::new(seed).stream("ops");
            let (mut now, mut reader, mut floor) = (start, 0u64, 0u64);
            let mut out_full = Vec::new();
            let mut out_small = Vec::new();
            for step in 0..400 {
                now += SimTime::from_micros(ops.random_range(0..40_000));
                let at = now;
                let end = full.log_end(start, at);
                assert_eq!(small.log_end(start, at), end, "seed {seed} step {step} log_end");
                match ops.random_range(0..6) {
                    0 => {
                        // A slow reader: a few records at a time.
                        let count = ops.random_range(0..8).min(end.saturating_sub(reader));
                        out_full.clear();
                        out_small.clear();
                        full.arrivals_into(start, reader, count, &mut out_full);
                        small.arrivals_into(start, reader, count, &mut out_small);
                        assert_eq!(out_small, out_full, "seed {seed} step {step} batch");
                        reader += count;
                    }
                    1 => reader = floor, // a rewind to the committed offset
                    2 => {
                        let offset = ops.random_range(floor..=end + 40);
                        assert_eq!(small.arrival(start, offset), full.arrival(start, offset));
                    }
                    3 => {
                        let back = SimTime::from_micros(ops.random_range(0..200_000));
                        let past = now.saturating_sub(back).max(start);
                        let known = ops.random_range(floor..=end);
                        let expected = full.log_end_from(start, past, known);
                        assert_eq!(small.log_end_from(start, past, known), expected);
                        assert_eq!(small.log_end(start, past), full.log_end(start, past));
                    }
                    4 => {
                        floor = ops.random_range(floor..=reader.max(floor));
                        full.trim_below(floor);
                        small.trim_below(floor);
                    }
                    _ => {
                        let known = ops.random_range(floor..=end);
                        let expected = full.log_end_from(start, at, known);
                        assert_eq!(small.log_end_from(start, at, known), expected, "seed {seed}");
                    }
                }
            }
        }
    }

    /// A reader sent below the trim floor (a member applying an assignment whose committed
    /// offset was read before a later commit: chaos seed 10389, cooperative-sticky+static,
    /// asked offset 120 of a log trimmed below 450) reads the times of a log never trimmed,
    /// from the trimmed blocks and the kept ones, trimmed again after, and at the frontier.
    #[test]
    fn a_reader_below_the_trim_floor_reads_the_times_never_trimmed() {
        let start = SimTime::from_millis(3);
        for sizes in [SMALL, RUN_SIZES] {
            let stream = || RngStreams::new(7).stream("workload-test");
            let mut never_trimmed = PoissonArrivals::new(1000.0, stream(), FULL);
            let mut log = PoissonArrivals::new(1000.0, stream(), sizes);
            let at = SimTime::from_secs(5);
            let end = log.log_end(start, at);
            assert_eq!(never_trimmed.log_end(start, at), end);
            assert!(end > 4_900, "{end} records by 5 s at 1,000/s");
            log.trim_below(end - 50);
            for offset in [120, 121, 119, 3_000, end - 51, end - 50, end + 5] {
                let expected = never_trimmed.arrival(start, offset);
                assert_eq!(log.arrival(start, offset), expected, "{sizes:?} offset {offset}");
            }
            let (mut read, mut expected) = (Vec::new(), Vec::new());
            log.arrivals_into(start, 100, 1_500, &mut read);
            never_trimmed.arrivals_into(start, 100, 1_500, &mut expected);
            assert_eq!(read, expected, "{sizes:?}");
            let from_100 = never_trimmed.log_end_from(start, at, 100);
            assert_eq!(log.log_end_from(start, at, 100), from_100);
            log.trim_below(end - 10);
            read.clear();
            expected.clear();
            log.arrivals_into(start, 5, 40, &mut read);
            never_trimmed.arrivals_into(start, 5, 40, &mut expected);
            assert_eq!(read, expected, "{sizes:?} after a second trim");
            let later = SimTime::from_secs(6);
            assert_eq!(log.log_end(start, later), never_trimmed.log_end(start, later));
            let last = never_trimmed.log_end(start, later) - 1;
            assert_eq!(log.arrival(start, last), never_trimmed.arrival(start, last));
        }
    }

    /// `validate`'s memory estimate counts what these sizes hold at most.
    #[test]
    fn the_estimate_knows_the_sizes() {
        let most =
            RUN_SIZES.held_cap + RUN_SIZES.block + RUN_SIZES.window_cap as u64 + RUN_SIZES.block;
        assert_eq!(most as f64, scenario::estimate::POISSON_TIMES_HELD_MAX);
    }

    /// A partition whose reader keeps up, trimmed every second below what was read 5 s
    /// before (a commit's floor): about 600 times are live, and the vector holding them stays
    /// within 8/3 of the most ever live (doubling, and a trimmed prefix of at most a quarter
    /// kept when it grows: `make_room`), the bound `validate`'s estimate counts
    /// (`scenario::estimate::ARRIVAL_BYTES`). Compacting only when the prefix is as long as
    /// the live times, as trims do, let it reach 2,048 here (16 KiB a partition, the stochastic
    /// reference's largest allocation).
    #[test]
    fn held_times_keep_a_bounded_slack() {
        let start = SimTime::ZERO;
        let mut log = PoissonArrivals::new(100.0, RngStreams::new(3).stream("w"), RUN_SIZES);
        let (mut most_live, mut read_at) = (0u64, std::collections::VecDeque::new());
        for second in 1..=600 {
            let at = SimTime::from_secs(second);
            // The reader takes what arrived; the sample draws a second ahead.
            let read = log.log_end(start, at);
            log.log_end(start, at + SimTime::from_secs(1));
            read_at.push_back(read);
            if read_at.len() > 5 {
                log.trim_below(read_at.pop_front().expect("5 s of reads"));
            }
            most_live = most_live.max(log.drawn_count() - log.first_held);
            let bound = most_live * 8 / 3 + COMPACT_FROM as u64 + DRAW_AHEAD;
            assert!(log.times.capacity() as u64 <= bound, "{second} s: {}", log.times.capacity());
        }
        assert!((500..800).contains(&most_live), "live {most_live}");
        assert!(log.times.capacity() <= 1024, "capacity {}", log.times.capacity());
    }

    /// `validate`'s memory estimate knows how often a run samples (it trims the logs then, and
    /// a sample's catch-ups hold their records).
    #[test]
    fn the_estimate_knows_the_samples() {
        assert_eq!(crate::world::MAX_SAMPLES as f64, scenario::estimate::SAMPLES_MAX);
    }

    /// One partition at 10^6 records/s read by nobody for 5 simulated seconds, trimmed below
    /// offset 0 all along: the full record holds 5 million times, the bounded one at most
    /// `held_cap` plus a block, and 32-byte checkpoints per 1,024 records; and a reader that
    /// then reads the backlog from offset 0 gets the same times as the full record.
    #[test]
    fn a_backlog_keeps_checkpoints_not_times() {
        let start = SimTime::ZERO;
        let stream = || RngStreams::new(5).stream("w");
        let mut full = PoissonArrivals::new(1e6, stream(), FULL);
        let mut bounded = PoissonArrivals::new(1e6, stream(), RUN_SIZES);
        for second in 1..=5 {
            let at = SimTime::from_secs(second);
            assert_eq!(bounded.log_end(start, at), full.log_end(start, at));
            // The reader at offset 0 asks how far the log reaches.
            assert_eq!(bounded.log_end_from(start, at, 0), full.log_end_from(start, at, 0));
            full.trim_below(0);
            bounded.trim_below(0);
        }
        let (held, checkpoints, window) = bounded.kept();
        let drawn = full.kept().0;
        assert!(drawn > 4_990_000, "drawn {drawn}");
        assert!(held as u64 <= RUN_SIZES.held_cap + RUN_SIZES.block, "held {held}");
        assert_eq!(checkpoints as u64, (drawn as u64).div_ceil(RUN_SIZES.block));
        assert_eq!(window, 0);
        let mut from_full = Vec::new();
        let mut from_bounded = Vec::new();
        for first in (0..drawn as u64 - 10_000).step_by(499_999) {
            from_full.clear();
            from_bounded.clear();
            full.arrivals_into(start, first, 5_000, &mut from_full);
            bounded.arrivals_into(start, first, 5_000, &mut from_bounded);
            assert_eq!(from_bounded, from_full, "from {first}");
        }
        assert!(bounded.kept().2 <= RUN_SIZES.window_cap + RUN_SIZES.block as usize);
    }
}
