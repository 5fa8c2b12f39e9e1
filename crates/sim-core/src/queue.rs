//! The event queue: a 4-ary heap (`dary_heap`: half the depth of a binary heap, so fewer cache
//! misses per pop) keyed by `(time, rank, sched, seq)`, FIFO among equal times of equal rank,
//! with timers that are cancelled or moved in O(log n) by lazy invalidation.
//! The heap holds 32-byte keys only (two to a cache line); the events wait aside in a slab of
//! reused slots, which holds exactly the live events (a re-armed timer's event replaces the
//! old one in its slot), so a pop moves keys, not large events, and a stale entry holds no
//! memory but its key.
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
//! Re-arming does not search the heap: the slot remembers the `seq` of its live entry, and an
//! entry whose `seq` no longer matches is dropped when it reaches the top. [`EventQueue::pop`]
//! advances the clock and asserts it never goes backwards.

use crate::SimTime;
use dary_heap::QuaternaryHeap;
use std::cmp::Ordering;

/// A reusable timer slot. Arming it again moves it; the old firing never happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimerId(u32);

const DISARMED: u64 = u64::MAX;

/// The default rank: after every explicitly ranked event of the same instant.
pub const RANK_LAST: u64 = u64::MAX;

/// Where the event of a heap entry is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Payload {
    /// A one-shot event, at this index of [`EventQueue::slab`].
    Slab(u32),
    /// The event of this timer (its [`TimerState::slot`] of the slab); the entry is stale
    /// unless its `seq` is the timer's.
    Timer(u32),
}

/// A heap entry: the ordering key and where the event is (32 bytes, whatever `E` is, so a
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
    /// Reversed so that the heap (a max-heap) pops the earliest key first.
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

/// A timer's state: the `seq` of its live heap entry (or `DISARMED`), and while armed, that
/// entry's time and scheduling time and the slab slot of its event. Re-arming replaces the
/// event in its slot: a stale heap entry owns no payload, so moving a timer a million times
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
/// The heap holds small [`Entry`] keys; the live events wait in a slab (`slab`, slots reused
/// through the `free` list).
pub struct EventQueue<E> {
    heap: QuaternaryHeap<Entry>,
    /// The events of live entries (one-shots and armed timers); `None` in a free slot.
    slab: Vec<Option<E>>,
    /// Indexes of the free slots of `slab`, reused last-freed first.
    free: Vec<u32>,
    timers: Vec<TimerState>,
    next_seq: u64,
    now: SimTime,
    popped: u64,
    /// Heap entries of timers that were moved or cancelled, not yet dropped.
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
            heap: QuaternaryHeap::with_capacity(capacity),
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

    /// Entries in the heap, including stale timer entries not yet dropped.
    pub fn len_including_stale(&self) -> usize {
        self.heap.len()
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
    /// every batch) would otherwise stay in the heap until its time, growing memory and the
    /// heap depth linearly. Amortised O(1) per operation; the pop order is unchanged because
    /// entries are totally ordered by their key. Stale entries own no payload (a timer's slab
    /// slot holds its live event only; it was replaced or freed when the entry went stale), so
    /// no slab slot is freed here.
    fn maybe_compact(&mut self) {
        if self.stale <= 1024 || self.stale <= self.heap.len() - self.stale {
            return;
        }
        let timers = &self.timers;
        self.heap.retain(|e| is_live(timers, e));
        self.stale = 0;
    }

    /// Whether `timer` has a pending firing.
    pub fn is_armed(&self, timer: TimerId) -> bool {
        self.timers[timer.0 as usize].seq != DISARMED
    }

    /// The time of the next live event, dropping stale timer entries on the way.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.drop_stale();
        self.heap.peek().map(|e| e.time)
    }

    /// Removes and returns the next live event, advancing the clock to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.drop_stale();
        let entry = self.heap.pop()?;
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

    fn push(&mut self, at: SimTime, rank: u64, sched: SimTime, payload: Payload) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        let (rank, payload) = (packed_rank(rank), payload.pack());
        self.heap.push(Entry { time: at, sched, seq, rank, payload });
        seq
    }

    fn drop_stale(&mut self) {
        while let Some(top) = self.heap.peek() {
            if is_live(&self.timers, top) {
                return;
            }
            self.heap.pop();
            self.stale -= 1;
        }
    }
}

/// Whether heap entry `e` will fire: a one-shot always, a timer entry while it is its timer's
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
