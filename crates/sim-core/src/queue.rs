//! The event queue: a priority queue keyed by `(time, rank, sched, seq)`, FIFO among equal
//! times of equal rank, with timers that are cancelled or moved by lazy invalidation.
//!
//! Time never goes backwards, so the queue is split at a `horizon` that only rises:
//! - `far`, the entries after the horizon: a radix heap of 64 unsorted buckets, by the highest
//!   bit in which an entry's time differs from the horizon. A push is O(1).
//! - `run`: when nothing at or before the horizon is left, the lowest non-empty bucket is
//!   split: the horizon rises to the end of the window of 1,024 ns holding its earliest live
//!   time, the entries up to it (those of that instant, mostly) are sorted into `run` (latest
//!   first, so a pop is O(1)), the later ones fall into lower buckets, and the stale timer
//!   entries met are dropped.
//! - `near`: a 4-ary heap (`dary_heap`) of the entries pushed at or before the horizon after
//!   the split (events of the current instant), usually few.
//!
//! A model has many events at one instant (hundreds at the reference scale, ordered by rank):
//! one sort per instant replaces a heap sift of depth log n per pop, and a far timer moved or
//! cancelled before its time is dropped from an unsorted bucket without ever being sorted.
//! Any structure that pops the least key pops the same sequence, the keys being distinct.
//! Entries are 32-byte keys (two to a cache line); the events wait aside in a slab of reused
//! slots, which holds exactly the live events (a re-armed timer's event replaces the old one
//! in its slot), so the queue moves keys, not large events, and a stale entry holds no memory
//! but its key.
//!
//! Order among events of one instant: a lower `rank` first (the default, [`RANK_LAST`], is the
//! highest: callers rank a few event kinds ahead of the rest); then the time at which the
//! event was scheduled (`sched`), then insertion order. `sched` is the clock at scheduling
//! unless given explicitly ([`EventQueue::arm_as_of`]), so for ordinary use the order is plain
//! insertion order: the clock never goes backwards, so `(sched, seq)` sorts like `seq`. An
//! explicit, earlier `sched` lets a caller that schedules late (a model that advances some
//! state lazily) place the event where it would have been had it been scheduled on time.
//!
//! Lifecycle: [`EventQueue::schedule`] puts a one-shot event in; [`EventQueue::new_timer`] makes
//! a reusable timer slot that [`EventQueue::arm`] (re)sets and [`EventQueue::cancel`] clears.
//! Re-arming does not search the queue: the slot remembers the `seq` of its live entry, and an
//! entry whose `seq` no longer matches is dropped when it is met (a bucket split, the front of
//! `run` or `near`, a compaction). [`EventQueue::pop`] advances the clock and asserts it never
//! goes backwards.

use crate::SimTime;
use dary_heap::QuaternaryHeap;
use std::cmp::Ordering;

/// A reusable timer slot. Arming it again moves it; the old firing never happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimerId(u32);

const DISARMED: u64 = u64::MAX;

/// The default rank: after every explicitly ranked event of the same instant.
pub const RANK_LAST: u64 = u64::MAX;

/// Where the event of an entry is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Payload {
    /// A one-shot event, at this index of [`EventQueue::slab`].
    Slab(u32),
    /// The event of this timer (its [`TimerState::slot`] of the slab); the entry is stale
    /// unless its `seq` is the timer's.
    Timer(u32),
}

/// A queue entry: the ordering key and where the event is (32 bytes, whatever `E` is, so a
/// sift moves little memory and the four children of a node span two cache lines).
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: SimTime,
    sched: SimTime,
    seq: u64,
    /// The rank, [`RANK_LAST`] as `u32::MAX` (the order of ranks is kept).
    rank: u32,
    /// The [`Payload`], packed: its index, with [`TIMER_BIT`] set for a timer.
    payload: u32,
}

/// Marks a packed payload as a timer's.
const TIMER_BIT: u32 = 1 << 31;

impl Payload {
    fn pack(self) -> u32 {
        match self {
            Payload::Slab(slot) => slot,
            Payload::Timer(timer) => timer | TIMER_BIT,
        }
    }

    fn unpack(packed: u32) -> Payload {
        match packed & TIMER_BIT {
            0 => Payload::Slab(packed),
            _ => Payload::Timer(packed & !TIMER_BIT),
        }
    }
}

/// A rank as kept in an entry: [`RANK_LAST`] is `u32::MAX`, every other rank must be below it.
fn packed_rank(rank: u64) -> u32 {
    if rank == RANK_LAST {
        return u32::MAX;
    }
    u32::try_from(rank).ok().filter(|r| *r < u32::MAX).expect("a rank below 2^32 - 1 or RANK_LAST")
}

impl PartialEq for Entry {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed so that the heap (a max-heap) pops the earliest key first, and an ascending
    /// sort puts it last.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

impl Entry {
    #[inline]
    fn key(&self) -> (SimTime, u32, SimTime, u64) {
        (self.time, self.rank, self.sched, self.seq)
    }
}

/// A timer's state: the `seq` of its live entry (or `DISARMED`), and while armed, that
/// entry's time and scheduling time and the slab slot of its event. Re-arming replaces the
/// event in its slot: a stale entry owns no payload, so moving a timer a million times
/// allocates nothing.
#[derive(Clone, Copy, Debug)]
struct TimerState {
    seq: u64,
    at: SimTime,
    sched: SimTime,
    slot: u32,
}

/// A deterministic priority queue of events of type `E`.
///
/// `run`, `near` and `far` hold small `Entry` keys (see the module doc); the live events
/// wait in a slab (`slab`, slots reused through the `free` list).
pub struct EventQueue<E> {
    /// The entries a refill moved from `far` (all at or before `horizon`), sorted latest
    /// first: the next to pop is the last, taken in O(1).
    run: Vec<Entry>,
    /// The entries pushed at or before `horizon` since the last refill (every entry of `far`
    /// is later, so the earlier of the last of `run` and the top of `near` is the earliest
    /// entry of all).
    near: QuaternaryHeap<Entry>,
    /// The entries after `horizon`, in radix buckets: a push is O(1), and a far timer moved
    /// or cancelled before its time is dropped when its bucket is split, never sorted.
    far: Far,
    /// Where `run` and `near` end; rises only when both are empty (see
    /// [`EventQueue::refill`]).
    horizon: SimTime,
    /// The events of live entries (one-shots and armed timers); `None` in a free slot.
    slab: Vec<Option<E>>,
    /// Indexes of the free slots of `slab`, reused last-freed first.
    free: Vec<u32>,
    timers: Vec<TimerState>,
    next_seq: u64,
    now: SimTime,
    popped: u64,
    /// Entries (in `run`, `near` or `far`) of timers that were moved or cancelled, not yet
    /// dropped.
    stale: usize,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty queue with room for `capacity` pending entries.
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            run: Vec::with_capacity(capacity),
            near: QuaternaryHeap::new(),
            far: Far::new(),
            horizon: SimTime::ZERO,
            slab: Vec::with_capacity(capacity),
            free: Vec::new(),
            timers: Vec::new(),
            next_seq: 0,
            now: SimTime::ZERO,
            popped: 0,
            stale: 0,
        }
    }

    /// The time of the last popped event (zero before the first).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// How many events have been popped (stale timer entries are not counted).
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Entries held (`run`, `near` and `far`), including stale timer entries not yet dropped.
    pub fn len_including_stale(&self) -> usize {
        self.run.len() + self.near.len() + self.far.len
    }

    /// Schedules a one-shot event. Scheduling in the past is a bug and panics.
    pub fn schedule(&mut self, at: SimTime, event: E) {
        self.schedule_ranked(at, RANK_LAST, event);
    }

    /// Schedules a one-shot event ahead of the events of rank greater than `rank` at `at`.
    /// A rank is below `2^32 - 1` (a model ranks by member slot) or [`RANK_LAST`].
    pub fn schedule_ranked(&mut self, at: SimTime, rank: u64, event: E) {
        self.check_not_past(at);
        let slot = self.store(event);
        self.push(at, rank, self.now, Payload::Slab(slot));
    }

    /// Makes a new timer slot, initially disarmed.
    pub fn new_timer(&mut self) -> TimerId {
        let id = u32::try_from(self.timers.len()).ok().filter(|id| id & TIMER_BIT == 0);
        let id = id.expect("too many timers");
        self.timers.push(TimerState {
            seq: DISARMED,
            at: SimTime::ZERO,
            sched: SimTime::ZERO,
            slot: 0,
        });
        TimerId(id)
    }

    /// Sets `timer` to fire `event` at `at`, replacing any earlier setting.
    pub fn arm(&mut self, timer: TimerId, at: SimTime, event: E) {
        self.arm_as_of(timer, at, RANK_LAST, self.now, event);
    }

    /// [`EventQueue::arm`] with an explicit `rank` and scheduling time `sched` (at most the
    /// current time), which order it among the events of its instant (see the module doc).
    pub fn arm_as_of(&mut self, timer: TimerId, at: SimTime, rank: u64, sched: SimTime, event: E) {
        assert!(sched <= self.now, "scheduled as of the future: {sched} > now {}", self.now);
        self.check_not_past(at);
        let slot = if self.is_armed(timer) {
            // The live entry becomes stale; the new event takes its slot.
            self.stale += 1;
            let slot = self.timers[timer.0 as usize].slot;
            self.slab[slot as usize] = Some(event);
            slot
        } else {
            self.store(event)
        };
        let seq = self.push(at, rank, sched, Payload::Timer(timer.0));
        self.timers[timer.0 as usize] = TimerState { seq, at, sched, slot };
        self.maybe_compact();
    }

    /// When `timer` fires, if it is armed.
    pub fn armed_at(&self, timer: TimerId) -> Option<SimTime> {
        self.armed(timer).map(|(at, _)| at)
    }

    /// When `timer` fires and the scheduling time it was armed with, if it is armed.
    pub fn armed(&self, timer: TimerId) -> Option<(SimTime, SimTime)> {
        let state = &self.timers[timer.0 as usize];
        self.is_armed(timer).then_some((state.at, state.sched))
    }

    /// Clears `timer`; a pending firing will not happen. Cancelling a disarmed timer is a no-op.
    pub fn cancel(&mut self, timer: TimerId) {
        if self.is_armed(timer) {
            self.stale += 1;
            let state = &mut self.timers[timer.0 as usize];
            state.seq = DISARMED;
            let slot = state.slot;
            drop(self.release(slot));
        }
        self.maybe_compact();
    }

    /// Drops every stale entry once they outnumber the live ones (and are more than 1,024):
    /// a timer moved far ahead and cancelled early (the 5-minute `max.poll.interval.ms` of
    /// every batch) would otherwise stay in a far bucket until the bucket is split, growing
    /// memory linearly. Amortised O(1) per operation; the pop order is unchanged because
    /// entries are totally ordered by their key. Stale entries own no payload (a timer's slab
    /// slot holds its live event only; it was replaced or freed when the entry went stale), so
    /// no slab slot is freed here.
    fn maybe_compact(&mut self) {
        if self.stale <= 1024 || self.stale <= self.len_including_stale() - self.stale {
            return;
        }
        let timers = &self.timers;
        self.run.retain(|e| is_live(timers, e));
        self.near.retain(|e| is_live(timers, e));
        self.far.retain(|e| is_live(timers, e));
        self.stale = 0;
    }

    /// Whether `timer` has a pending firing.
    pub fn is_armed(&self, timer: TimerId) -> bool {
        self.timers[timer.0 as usize].seq != DISARMED
    }

    /// The time of the next live event, dropping stale timer entries on the way.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.next_live().map(|(time, _)| time)
    }

    /// Removes and returns the next live event, advancing the clock to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let (_, source) = self.next_live()?;
        let entry = self.take_near(source);
        debug_assert!(entry.time <= self.horizon, "a near entry after the horizon");
        assert!(entry.time >= self.now, "time went backwards: {} < {}", entry.time, self.now);
        let event = match Payload::unpack(entry.payload) {
            Payload::Slab(slot) => self.release(slot),
            Payload::Timer(timer) => {
                let state = &mut self.timers[timer as usize];
                state.seq = DISARMED;
                let slot = state.slot;
                self.release(slot)
            }
        };
        self.now = entry.time;
        self.popped += 1;
        Some((entry.time, event.expect("a live entry has its event")))
    }

    fn check_not_past(&self, at: SimTime) {
        assert!(at >= self.now, "scheduled in the past: {at} < now {}", self.now);
    }

    /// Puts `event` in a free slab slot (or a new one) and returns its index.
    fn store(&mut self, event: E) -> u32 {
        if let Some(slot) = self.free.pop() {
            self.slab[slot as usize] = Some(event);
            return slot;
        }
        let slot = u32::try_from(self.slab.len()).ok().filter(|slot| slot & TIMER_BIT == 0);
        let slot = slot.expect("too many pending events");
        self.slab.push(Some(event));
        slot
    }

    /// Takes the event out of slab slot `slot` and frees the slot.
    fn release(&mut self, slot: u32) -> Option<E> {
        self.free.push(slot);
        self.slab[slot as usize].take()
    }

    #[inline]
    fn push(&mut self, at: SimTime, rank: u64, sched: SimTime, payload: Payload) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        let (rank, payload) = (packed_rank(rank), payload.pack());
        let entry = Entry { time: at, sched, seq, rank, payload };
        // The key orders by time first, so every entry at or before the horizon (an entry
        // exactly at it included) precedes every far one, whatever its rank and `sched`.
        if at <= self.horizon {
            self.near.push(entry);
        } else {
            self.far.push(entry, self.horizon);
        }
        seq
    }

    /// The time and source of the earliest live entry, dropping stale entries on the way and
    /// refilling `run` from `far` when `run` and `near` both run dry.
    fn next_live(&mut self) -> Option<(SimTime, Source)> {
        loop {
            while let Some((top, source)) = self.next_near() {
                if is_live(&self.timers, top) {
                    return Some((top.time, source));
                }
                self.take_near(source);
                self.stale -= 1;
            }
            if self.far.len == 0 {
                return None;
            }
            self.refill();
        }
    }

    /// The earliest entry at or before the horizon (live or stale), and where it is.
    #[inline]
    fn next_near(&self) -> Option<(&Entry, Source)> {
        match (self.run.last(), self.near.peek()) {
            // Reversed order: the greater entry is the earlier.
            (Some(r), Some(h)) if h > r => Some((h, Source::Near)),
            (Some(r), _) => Some((r, Source::Run)),
            (None, h) => h.map(|h| (h, Source::Near)),
        }
    }

    /// Removes the earliest entry of `source` (which holds one).
    #[inline]
    fn take_near(&mut self, source: Source) -> Entry {
        let entry = match source {
            Source::Run => self.run.pop(),
            Source::Near => self.near.pop(),
        };
        entry.expect("the source holds an entry")
    }

    /// Splits the lowest non-empty far bucket (`run` and `near` are empty): drops its stale
    /// entries, raises the horizon to the end of the aligned window of `2^WINDOW_BITS` ns (or
    /// of the whole bucket, if smaller) that holds its earliest live entry, and moves its
    /// entries at or before the horizon into `run`, sorted, the later ones into lower buckets.
    /// A bucket of stale entries only is emptied and the next one split. The horizon keeps
    /// the bits of the old one above the bucket's, so the higher buckets stay valid.
    fn refill(&mut self) {
        debug_assert!(self.run.is_empty() && self.near.is_empty());
        while let Some((index, mut bucket)) = self.far.take_lowest() {
            let (timers, before, mut earliest) = (&self.timers, bucket.len(), u64::MAX);
            bucket.retain(|e| {
                let live = is_live(timers, e);
                if live {
                    earliest = earliest.min(e.time.as_nanos());
                }
                live
            });
            self.stale -= before - bucket.len();
            if !bucket.is_empty() {
                let window_bits = WINDOW_BITS.min(index as u32 + 1);
                self.horizon = SimTime::from_nanos(earliest | low_bits(window_bits));
                for e in bucket.drain(..) {
                    if e.time <= self.horizon {
                        self.run.push(e);
                    } else {
                        self.far.push(e, self.horizon);
                    }
                }
                // Ascending in the reversed order: the earliest last. The keys are distinct,
                // so the unstable sort gives the one order.
                self.run.sort_unstable();
            }
            self.far.give_back(index, bucket);
            if !self.run.is_empty() {
                return;
            }
        }
    }
}

/// Where the earliest entry at or before the horizon is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// The last of [`EventQueue::run`].
    Run,
    /// The top of [`EventQueue::near`].
    Near,
}

/// The far entries: bucket `b` holds those whose time differs from the horizon first (from the
/// top) at bit `b` (a radix heap: the lowest non-empty bucket holds the earliest entries, and
/// when the horizon rises into it, the other buckets stay valid and its entries all fall into
/// lower buckets, so an entry is moved at most 64 times, in practice a few).
struct Far {
    buckets: [Vec<Entry>; 64],
    /// Bit `b` is set when bucket `b` is not empty.
    occupied: u64,
    /// The entries in all buckets.
    len: usize,
}

impl Far {
    fn new() -> Far {
        Far { buckets: std::array::from_fn(|_| Vec::new()), occupied: 0, len: 0 }
    }

    /// The bucket of an entry at `time`, after `horizon`.
    #[inline]
    fn bucket(time: SimTime, horizon: SimTime) -> usize {
        debug_assert!(time > horizon);
        // 63 - leading zeros (below 64 as the times differ), masked so that the index is
        // known to be in bounds.
        ((time.as_nanos() ^ horizon.as_nanos()).leading_zeros() ^ 63) as usize & 63
    }

    #[inline]
    fn push(&mut self, entry: Entry, horizon: SimTime) {
        let index = Far::bucket(entry.time, horizon);
        self.buckets[index].push(entry);
        self.occupied |= 1 << index;
        self.len += 1;
    }

    /// Takes the lowest non-empty bucket out, with its index.
    fn take_lowest(&mut self) -> Option<(usize, Vec<Entry>)> {
        if self.occupied == 0 {
            return None;
        }
        let index = self.occupied.trailing_zeros() as usize;
        self.occupied &= !(1 << index);
        let bucket = std::mem::take(&mut self.buckets[index]);
        self.len -= bucket.len();
        Some((index, bucket))
    }

    /// Puts a taken bucket's allocation back, emptied (its entries all moved lower).
    fn give_back(&mut self, index: usize, mut bucket: Vec<Entry>) {
        debug_assert!(self.buckets[index].is_empty());
        bucket.clear();
        self.buckets[index] = bucket;
    }

    /// Keeps the entries for which `keep` holds.
    fn retain(&mut self, mut keep: impl FnMut(&Entry) -> bool) {
        self.len = 0;
        for (index, bucket) in self.buckets.iter_mut().enumerate() {
            bucket.retain(&mut keep);
            self.len += bucket.len();
            if bucket.is_empty() {
                self.occupied &= !(1 << index);
            }
        }
    }
}

/// A number with its `bits` lowest bits set (`bits` at most 64).
fn low_bits(bits: u32) -> u64 {
    match bits {
        0 => 0,
        _ => u64::MAX >> (64 - bits),
    }
}

/// A refill moves the entries of an aligned window of `2^WINDOW_BITS` ns (about 1 µs) into
/// `run` at once: entries a few nanoseconds apart are sorted together rather than split bucket
/// by bucket; wider windows cost more, as more events scheduled after the refill then fall
/// before the horizon, into `near`.
const WINDOW_BITS: u32 = 10;

/// Whether entry `e` will fire: a one-shot always, a timer entry while it is its timer's
/// live entry.
#[inline]
fn is_live(timers: &[TimerState], e: &Entry) -> bool {
    match Payload::unpack(e.payload) {
        Payload::Slab(_) => true,
        Payload::Timer(timer) => timers[timer as usize].seq == e.seq,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut EventQueue<&'static str>) -> Vec<(u64, &'static str)> {
        std::iter::from_fn(|| q.pop()).map(|(t, e)| (t.as_millis(), e)).collect()
    }

    #[test]
    fn entries_are_32_bytes_and_ranks_keep_their_order() {
        assert_eq!(std::mem::size_of::<Entry>(), 32);
        let mut q = EventQueue::new();
        let t = SimTime::from_millis(1);
        q.schedule(t, "last");
        q.schedule_ranked(t, u64::from(u32::MAX) - 1, "highest explicit rank");
        q.schedule_ranked(t, 0, "rank 0");
        let order = vec![(1, "rank 0"), (1, "highest explicit rank"), (1, "last")];
        assert_eq!(drain(&mut q), order);
    }

    #[test]
    #[should_panic(expected = "a rank below 2^32 - 1 or RANK_LAST")]
    fn a_rank_of_32_bits_or_more_is_refused() {
        let mut q = EventQueue::new();
        q.schedule_ranked(SimTime::from_millis(1), u64::from(u32::MAX), "too high");
    }

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(SimTime::from_millis(5), "b1");
        q.schedule(SimTime::from_millis(1), "a");
        q.schedule(SimTime::from_millis(5), "b2");
        q.schedule(SimTime::from_millis(5), "b3");
        q.schedule(SimTime::from_millis(3), "c");
        assert_eq!(drain(&mut q), vec![(1, "a"), (3, "c"), (5, "b1"), (5, "b2"), (5, "b3")]);
    }

    /// Rank first, then the scheduling time, then insertion order.
    #[test]
    fn rank_and_scheduling_time_order_one_instant() {
        let mut q = EventQueue::new();
        let t = q.new_timer();
        let u = q.new_timer();
        q.schedule(SimTime::from_millis(1), "first");
        assert_eq!(q.pop().map(|(_, e)| e), Some("first"));
        q.schedule(SimTime::from_millis(9), "plain");
        q.schedule_ranked(SimTime::from_millis(9), 7, "rank 7");
        q.schedule_ranked(SimTime::from_millis(9), 3, "rank 3");
        // Armed now, but as of time zero: ahead of "plain" (scheduled at 1 ms).
        q.arm_as_of(t, SimTime::from_millis(9), RANK_LAST, SimTime::ZERO, "as of 0");
        q.arm(u, SimTime::from_millis(9), "armed at 1");
        assert_eq!(q.armed(t), Some((SimTime::from_millis(9), SimTime::ZERO)));
        assert_eq!(q.armed_at(u), Some(SimTime::from_millis(9)));
        assert_eq!(
            drain(&mut q),
            vec![(9, "rank 3"), (9, "rank 7"), (9, "as of 0"), (9, "plain"), (9, "armed at 1")]
        );
        assert_eq!(q.armed_at(t), None);
    }

    #[test]
    fn cancelled_timer_never_fires() {
        let mut q = EventQueue::new();
        let t = q.new_timer();
        q.arm(t, SimTime::from_millis(2), "timer");
        q.schedule(SimTime::from_millis(3), "other");
        assert!(q.is_armed(t));
        q.cancel(t);
        assert!(!q.is_armed(t));
        assert_eq!(drain(&mut q), vec![(3, "other")]);
    }

    #[test]
    fn moved_timer_fires_once_at_its_new_time() {
        let mut q = EventQueue::new();
        let t = q.new_timer();
        q.arm(t, SimTime::from_millis(10), "hb");
        q.arm(t, SimTime::from_millis(4), "hb-earlier");
        q.arm(t, SimTime::from_millis(7), "hb-moved");
        q.schedule(SimTime::from_millis(5), "x");
        assert_eq!(drain(&mut q), vec![(5, "x"), (7, "hb-moved")]);
        assert!(!q.is_armed(t), "a fired timer is disarmed");
    }

    #[test]
    fn a_timer_can_be_rearmed_after_firing() {
        let mut q = EventQueue::new();
        let t = q.new_timer();
        q.arm(t, SimTime::from_millis(1), "first");
        assert_eq!(q.pop().map(|(_, e)| e), Some("first"));
        q.arm(t, SimTime::from_millis(2), "second");
        assert_eq!(drain(&mut q), vec![(2, "second")]);
    }

    /// 10,000 re-armings of one timer far ahead, interleaved with one-shot events: the heap
    /// keeps at most about 2 x 1,024 entries instead of 10,000, and the order is unchanged.
    #[test]
    fn stale_entries_are_compacted() {
        let mut q = EventQueue::new();
        let t = q.new_timer();
        for i in 0..10_000u64 {
            q.arm(t, SimTime::from_secs(300 + i), i);
        }
        q.schedule(SimTime::from_secs(1), 1_000_000);
        // Live: the timer (at 300 + 9,999 s) and the one-shot; stale after the last
        // compaction: at most 1,025 (compaction runs once stale > max(1,024, live)).
        assert!(q.len_including_stale() <= 1_027, "{}", q.len_including_stale());
        assert_eq!(q.pop(), Some((SimTime::from_secs(1), 1_000_000)));
        assert_eq!(q.pop(), Some((SimTime::from_secs(10_299), 9_999)));
        assert_eq!(q.pop(), None);
        // Cancelled timers are compacted too.
        for i in 0..5_000u64 {
            q.arm(t, SimTime::from_secs(20_000 + i), i);
            q.cancel(t);
        }
        assert!(q.len_including_stale() <= 1_025, "{}", q.len_including_stale());
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn peek_skips_stale_entries() {
        let mut q = EventQueue::new();
        let t = q.new_timer();
        q.arm(t, SimTime::from_millis(1), "stale");
        q.arm(t, SimTime::from_millis(9), "live");
        assert_eq!(q.peek_time(), Some(SimTime::from_millis(9)));
        assert_eq!(q.len_including_stale(), 1);
    }

    #[test]
    #[should_panic(expected = "scheduled in the past")]
    fn scheduling_in_the_past_is_a_bug() {
        let mut q = EventQueue::new();
        q.schedule(SimTime::from_millis(5), "a");
        q.pop();
        q.schedule(SimTime::from_millis(4), "late");
    }

    /// A tiny deterministic generator (an LCG, top bits) for the randomised tests.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    /// The reference: every live pending event as `((time, rank, sched, insertion), timer,
    /// event)` in a plain Vec; the next is the minimum key (the documented order).
    type RefEntry = ((u64, u64, u64, u64), Option<usize>, u64);

    fn ref_pop(reference: &mut Vec<RefEntry>) -> Option<(u64, u64)> {
        let (i, _) = reference.iter().enumerate().min_by_key(|(_, e)| e.0)?;
        let ((time, ..), _, event) = reference.remove(i);
        Some((time, event))
    }

    /// 20,000 random schedule / ranked schedule / arm / arm-as-of / cancel / pop / peek
    /// operations on 40 timers, with many equal times (0..20 ms ahead) and ranks: the queue
    /// pops exactly what a sorted reference pops, and reports the same armed timers.
    #[test]
    fn random_operations_match_a_sorted_reference() {
        let mut q: EventQueue<u64> = EventQueue::new();
        let timers: Vec<TimerId> = (0..40).map(|_| q.new_timer()).collect();
        let mut reference: Vec<RefEntry> = Vec::new();
        let mut rng = Lcg(7);
        let (mut insertion, mut pops, mut max_live) = (0u64, 0u64, 0usize);
        for event in 0..20_000u64 {
            let now = q.now().as_millis();
            let op = rng.below(100);
            let at = now + rng.below(20);
            let t = rng.below(40) as usize;
            let ranked = (25..=34).contains(&op) || (60..=69).contains(&op);
            let rank = if ranked { [1, 5, RANK_LAST][rng.below(3) as usize] } else { RANK_LAST };
            let sched = if (60..=69).contains(&op) { rng.below(now + 1) } else { now };
            let key = (at, rank, sched, insertion);
            let (at_time, sched_time) = (SimTime::from_millis(at), SimTime::from_millis(sched));
            match op {
                0..=24 => q.schedule(at_time, event),
                25..=34 => q.schedule_ranked(at_time, rank, event),
                35..=59 => q.arm(timers[t], at_time, event),
                60..=69 => q.arm_as_of(timers[t], at_time, rank, sched_time, event),
                70..=79 => q.cancel(timers[t]),
                _ => {
                    pops += 1;
                    assert_eq!(q.pop().map(|(t, e)| (t.as_millis(), e)), ref_pop(&mut reference));
                }
            }
            if (35..=79).contains(&op) {
                reference.retain(|e| e.1 != Some(t));
            }
            match op {
                0..=34 => reference.push((key, None, event)),
                35..=69 => reference.push((key, Some(t), event)),
                _ => {}
            }
            if op < 70 {
                insertion += 1;
            }
            if event % 97 == 0 {
                let next = reference.iter().map(|e| e.0).min().map(|k| k.0);
                assert_eq!(q.peek_time().map(SimTime::as_millis), next);
            }
            for (i, timer) in timers.iter().enumerate() {
                let pending = reference.iter().find(|e| e.1 == Some(i)).map(|e| e.0 .0);
                assert_eq!(q.armed_at(*timer).map(SimTime::as_millis), pending);
            }
            max_live = max_live.max(reference.len());
        }
        // 20 % of the operations pop: about 4,000 (the exact count depends on the LCG).
        assert!(pops > 3_000, "{pops}");
        while let Some(expected) = ref_pop(&mut reference) {
            assert_eq!(q.pop().map(|(t, e)| (t.as_millis(), e)), Some(expected));
        }
        assert_eq!(q.pop(), None);
        // Slab slots are reused: never more than the most live events pending at once.
        assert!(q.slab.len() <= max_live, "{} > {max_live}", q.slab.len());
        assert_eq!(q.free.len(), q.slab.len(), "every slot is free once the queue is empty");
    }

    /// A timer re-armed a million times far ahead, with a one-shot scheduled and popped every
    /// 1,000 re-armings: the slab never holds more than those two events (the timer's, re-used
    /// in place, and the one-shot's), and the heap is compacted (at most 1,025 stale + 1 live
    /// + 1 one-shot).
    #[test]
    fn a_million_rearmings_keep_the_slab_and_heap_bounded() {
        let mut q: EventQueue<u64> = EventQueue::new();
        let t = q.new_timer();
        for i in 0..1_000_000u64 {
            q.arm(t, SimTime::from_secs(1_000_000 + i), i);
            if i % 1_000 == 0 {
                let now = q.now();
                q.schedule(now, i);
                assert_eq!(q.pop(), Some((now, i)));
            }
            assert!(q.len_including_stale() <= 1_027, "{}", q.len_including_stale());
        }
        assert_eq!(q.slab.len(), 2);
        assert_eq!(q.pop(), Some((SimTime::from_secs(1_999_999), 999_999)));
        assert_eq!(q.pop(), None);
    }

    /// The events of moved and cancelled timers are dropped at once, not when their stale
    /// entries leave the heap: with `Rc` events, only the live one is still referenced.
    #[test]
    fn stale_entries_hold_no_event() {
        let event = std::rc::Rc::new(());
        let mut q = EventQueue::new();
        let t = q.new_timer();
        for i in 0..100 {
            q.arm(t, SimTime::from_secs(10 + i), std::rc::Rc::clone(&event));
        }
        // 99 stale entries in the heap, one live event besides `event` itself.
        assert_eq!((q.len_including_stale(), std::rc::Rc::strong_count(&event)), (100, 2));
        q.cancel(t);
        assert_eq!(std::rc::Rc::strong_count(&event), 1);
        q.schedule(SimTime::from_secs(1), std::rc::Rc::clone(&event));
        assert_eq!(std::rc::Rc::strong_count(&event), 2);
        assert!(q.pop().is_some());
        assert_eq!(q.pop(), None);
        assert_eq!(std::rc::Rc::strong_count(&event), 1);
    }

    /// The queue's invariants: near entries at or before the horizon, far ones after it, and
    /// `stale` counting exactly the held entries that will not fire.
    fn check_invariants<E>(q: &EventQueue<E>) {
        assert!(q.near.iter().all(|e| e.time <= q.horizon), "a near entry after the horizon");
        assert!(q.run.iter().all(|e| e.time <= q.horizon), "a run entry after the horizon");
        assert!(q.run.windows(2).all(|w| w[0].key() > w[1].key()), "run not sorted latest first");
        for (index, bucket) in q.far.buckets.iter().enumerate() {
            assert!(
                bucket.iter().all(|e| e.time > q.horizon),
                "a far entry at or before the horizon"
            );
            assert!(bucket.iter().all(|e| Far::bucket(e.time, q.horizon) == index), "misplaced");
            assert_eq!(bucket.is_empty(), q.far.occupied & (1 << index) == 0);
        }
        assert_eq!(q.far.len, q.far.buckets.iter().map(Vec::len).sum::<usize>());
        let held = q.run.iter().chain(q.near.iter()).chain(q.far.buckets.iter().flatten());
        let stale = held.filter(|e| !is_live(&q.timers, e)).count();
        assert_eq!(q.stale, stale, "stale entries miscounted");
    }

    /// Events exactly at the horizon go to `near`, one nanosecond later to a far bucket, and
    /// all keep their order (time, rank, `sched`, insertion).
    #[test]
    fn events_at_the_horizon_keep_their_order() {
        let mut q = EventQueue::new();
        let t = q.new_timer();
        q.schedule(SimTime::from_millis(1), "first");
        assert_eq!(q.pop(), Some((SimTime::from_millis(1), "first")));
        // 1 ms (1,000,000 ns) was in far bucket 19 (2^19 <= 1,000,000 < 2^20): the horizon
        // ends its window of 2^10 ns, 1,000,000 | 1,023 = 1,000,447 (1,000,000 = 976 x 1,024
        // + 576, so the window is 999,424..=1,000,447).
        let h = q.horizon;
        assert_eq!(h, SimTime::from_nanos(1_000_447));
        let after = h + SimTime::from_nanos(1);
        q.schedule(after, "1 ns after");
        q.schedule(h, "plain at h");
        q.schedule_ranked(h, 3, "rank 3 at h");
        // As of time zero: ahead of "plain at h" (scheduled at 1 ms).
        q.arm_as_of(t, h, RANK_LAST, SimTime::ZERO, "as of 0 at h");
        q.schedule_ranked(after, 2, "rank 2 after");
        assert_eq!((q.near.len(), q.far.len), (3, 2));
        check_invariants(&q);
        let popped: Vec<_> =
            std::iter::from_fn(|| q.pop()).map(|(t, e)| (t.as_nanos(), e)).collect();
        let (h, after) = (h.as_nanos(), after.as_nanos());
        let order = vec![
            (h, "rank 3 at h"),
            (h, "as of 0 at h"),
            (h, "plain at h"),
            (after, "rank 2 after"),
            (after, "1 ns after"),
        ];
        assert_eq!(popped, order);
    }

    /// One operation of [`operations_far_beyond_the_horizon_match_a_sorted_map`]: a kind (0..=9), a timer (0..6), a
    /// span class (0..=6), a raw offset, a rank choice and a `sched` choice.
    type Op = (u8, usize, u8, u64, usize, u64);

    /// How far ahead an operation schedules, by class: up to 20 ms, 5 s, 400 s, 2 hours, a
    /// whole number of milliseconds below 4 (many events at one instant), up to 4,096 ns (a
    /// few windows of 1,024 ns), or exactly the distance to the horizon plus 0 or 1 ns (the
    /// raw offset's parity).
    fn ahead_nanos<E>(q: &EventQueue<E>, class: u8, raw: u64) -> u64 {
        let to_horizon = q.horizon.as_nanos().saturating_sub(q.now.as_nanos());
        match class {
            0 => raw % 20_000_000,
            1 => raw % 5_000_000_000,
            2 => raw % 400_000_000_000,
            3 => raw % 7_200_000_000_000,
            4 => raw % 4 * 1_000_000,
            5 => raw % 4_096,
            _ => to_horizon + raw % 2,
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Random schedule / ranked schedule / arm / arm-as-of / cancel / pop / peek sequences
        /// on 6 timers with times from microseconds to hours ahead (far beyond the horizon)
        /// and exactly at it: the queue pops exactly what a sorted map of the keys pops, the
        /// armed timers agree, and the invariants hold after every operation.
        #[test]
        fn operations_far_beyond_the_horizon_match_a_sorted_map(ops in proptest::collection::vec(
            (0u8..10, 0usize..6, 0u8..7, proptest::num::u64::ANY, 0usize..3, proptest::num::u64::ANY),
            0..400,
        )) {
            use std::collections::BTreeMap;
            type Key = (u64, u64, u64, u64);
            let mut q: EventQueue<u64> = EventQueue::new();
            let timers: Vec<TimerId> = (0..6).map(|_| q.new_timer()).collect();
            // Key (time, rank, sched, insertion) -> event; a timer's live key.
            let mut reference: BTreeMap<Key, u64> = BTreeMap::new();
            let mut armed: Vec<Option<Key>> = vec![None; 6];
            let ops: Vec<Op> = ops;
            for (i, (kind, t, class, raw, rank, sched)) in ops.into_iter().enumerate() {
                let (event, now) = (i as u64, q.now().as_nanos());
                let at = now + ahead_nanos(&q, class, raw);
                let rank = if kind == 1 || kind == 5 { [0, 7, RANK_LAST][rank] } else { RANK_LAST };
                let sched = if kind == 5 { sched % (now + 1) } else { now };
                let key = (at, rank, sched, i as u64);
                let (at_time, sched_time) = (SimTime::from_nanos(at), SimTime::from_nanos(sched));
                if (3..=6).contains(&kind) {
                    if let Some(old) = armed[t].take() {
                        reference.remove(&old);
                    }
                }
                match kind {
                    0 => q.schedule(at_time, event),
                    1 => q.schedule_ranked(at_time, rank, event),
                    2 => {
                        let next = reference.keys().next().map(|k| k.0);
                        proptest::prop_assert_eq!(q.peek_time().map(SimTime::as_nanos), next);
                    }
                    3 | 4 => q.arm(timers[t], at_time, event),
                    5 => q.arm_as_of(timers[t], at_time, rank, sched_time, event),
                    6 => q.cancel(timers[t]),
                    _ => {
                        let expected = reference.pop_first();
                        // A timer whose entry fires is disarmed.
                        armed.iter_mut().filter(|a| **a == expected.map(|(k, _)| k)).for_each(|a| *a = None);
                        let expected = expected.map(|(k, e)| (k.0, e));
                        proptest::prop_assert_eq!(q.pop().map(|(t, e)| (t.as_nanos(), e)), expected);
                    }
                }
                if matches!(kind, 0 | 1 | 3..=5) {
                    reference.insert(key, event);
                }
                if (3..=5).contains(&kind) {
                    armed[t] = Some(key);
                }
                for (timer, pending) in timers.iter().zip(&armed) {
                    proptest::prop_assert_eq!(q.armed_at(*timer).map(SimTime::as_nanos), pending.map(|k| k.0));
                }
                check_invariants(&q);
            }
            while let Some((key, event)) = reference.pop_first() {
                proptest::prop_assert_eq!(q.pop(), Some((SimTime::from_nanos(key.0), event)));
            }
            proptest::prop_assert_eq!(q.pop(), None);
            proptest::prop_assert_eq!(q.len_including_stale(), 0);
        }
    }

    proptest::proptest! {
        /// Whatever is scheduled, pops come out sorted by (time, insertion order).
        #[test]
        fn pops_are_sorted_by_time_then_insertion(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() {
                q.schedule(SimTime::from_millis(*t), i);
            }
            let mut expected: Vec<(u64, usize)> = times.iter().copied().zip(0..).collect();
            expected.sort();
            let got: Vec<(u64, usize)> = std::iter::from_fn(|| q.pop()).map(|(t, i)| (t.as_millis(), i)).collect();
            proptest::prop_assert_eq!(got, expected);
        }
    }
}
