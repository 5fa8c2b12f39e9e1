//! The event queue: a binary heap keyed by `(time, rank, sched, seq)`, FIFO among equal times
//! of equal rank, with timers that are cancelled or moved in O(log n) by lazy invalidation.
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
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A reusable timer slot. Arming it again moves it; the old firing never happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimerId(u32);

const DISARMED: u64 = u64::MAX;

/// The default rank: after every explicitly ranked event of the same instant.
pub const RANK_LAST: u64 = u64::MAX;

struct Entry<E> {
    time: SimTime,
    rank: u64,
    sched: SimTime,
    seq: u64,
    /// `u32::MAX` for a one-shot event, else the timer slot that owns this entry.
    timer: u32,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest key first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

impl<E> Entry<E> {
    fn key(&self) -> (SimTime, u64, SimTime, u64) {
        (self.time, self.rank, self.sched, self.seq)
    }
}

const ONE_SHOT: u32 = u32::MAX;

/// A deterministic priority queue of events of type `E`.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    /// Per timer slot, the `seq` of its live entry, or `DISARMED`.
    timer_seq: Vec<u64>,
    /// Per timer slot, the time and scheduling time of its live entry (meaningful while armed).
    timer_time: Vec<(SimTime, SimTime)>,
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
            heap: BinaryHeap::with_capacity(capacity),
            timer_seq: Vec::new(),
            timer_time: Vec::new(),
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
        self.push(at, RANK_LAST, self.now, ONE_SHOT, event);
    }

    /// Schedules a one-shot event ahead of the events of rank greater than `rank` at `at`.
    pub fn schedule_ranked(&mut self, at: SimTime, rank: u64, event: E) {
        self.push(at, rank, self.now, ONE_SHOT, event);
    }

    /// Makes a new timer slot, initially disarmed.
    pub fn new_timer(&mut self) -> TimerId {
        let id = u32::try_from(self.timer_seq.len()).expect("too many timers");
        assert!(id != ONE_SHOT, "too many timers");
        self.timer_seq.push(DISARMED);
        self.timer_time.push((SimTime::ZERO, SimTime::ZERO));
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
        self.mark_stale(timer);
        let seq = self.push(at, rank, sched, timer.0, event);
        self.timer_seq[timer.0 as usize] = seq;
        self.timer_time[timer.0 as usize] = (at, sched);
        self.maybe_compact();
    }

    /// When `timer` fires, if it is armed.
    pub fn armed_at(&self, timer: TimerId) -> Option<SimTime> {
        self.armed(timer).map(|(at, _)| at)
    }

    /// When `timer` fires and the scheduling time it was armed with, if it is armed.
    pub fn armed(&self, timer: TimerId) -> Option<(SimTime, SimTime)> {
        self.is_armed(timer).then(|| self.timer_time[timer.0 as usize])
    }

    /// Clears `timer`; a pending firing will not happen. Cancelling a disarmed timer is a no-op.
    pub fn cancel(&mut self, timer: TimerId) {
        self.mark_stale(timer);
        self.timer_seq[timer.0 as usize] = DISARMED;
        self.maybe_compact();
    }

    /// Counts the live entry of `timer`, if any, as stale (it is about to be replaced).
    fn mark_stale(&mut self, timer: TimerId) {
        if self.timer_seq[timer.0 as usize] != DISARMED {
            self.stale += 1;
        }
    }

    /// Drops every stale entry once they outnumber the live ones (and are more than 1,024):
    /// a timer moved far ahead and cancelled early (the 5-minute `max.poll.interval.ms` of
    /// every batch) would otherwise stay in the heap until its time, growing memory and the
    /// heap depth linearly. Amortised O(1) per operation; the pop order is unchanged because
    /// entries are totally ordered by their key.
    fn maybe_compact(&mut self) {
        if self.stale <= 1024 || self.stale <= self.heap.len() - self.stale {
            return;
        }
        let timer_seq = &self.timer_seq;
        self.heap.retain(|e| e.timer == ONE_SHOT || timer_seq[e.timer as usize] == e.seq);
        self.stale = 0;
    }

    /// Whether `timer` has a pending firing.
    pub fn is_armed(&self, timer: TimerId) -> bool {
        self.timer_seq[timer.0 as usize] != DISARMED
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
        if entry.timer != ONE_SHOT {
            self.timer_seq[entry.timer as usize] = DISARMED;
        }
        self.now = entry.time;
        self.popped += 1;
        Some((entry.time, entry.event))
    }

    fn push(&mut self, at: SimTime, rank: u64, sched: SimTime, timer: u32, event: E) -> u64 {
        assert!(at >= self.now, "scheduled in the past: {at} < now {}", self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time: at, rank, sched, seq, timer, event });
        seq
    }

    fn drop_stale(&mut self) {
        while let Some(top) = self.heap.peek() {
            let live = top.timer == ONE_SHOT || self.timer_seq[top.timer as usize] == top.seq;
            if live {
                return;
            }
            self.heap.pop();
            self.stale -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut EventQueue<&'static str>) -> Vec<(u64, &'static str)> {
        std::iter::from_fn(|| q.pop()).map(|(t, e)| (t.as_millis(), e)).collect()
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
