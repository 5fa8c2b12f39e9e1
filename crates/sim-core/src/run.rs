//! The bounded run loop: pop, check the bounds, hand the event to the world.
//!
//! A run stops at the first of: the queue is empty, the next event is after the end time, or
//! the event limit is reached. Reaching a bound is a reported outcome ([`StopReason`]), never a
//! hang. Events exactly at the end time still run.

use crate::{EventQueue, SimTime};

/// Where a run must stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunLimits {
    /// Events after this time are not run.
    pub end: SimTime,
    /// At most this many events are handled.
    pub max_events: u64,
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// No event was left.
    QueueEmpty,
    /// The next event lies after `RunLimits::end`.
    EndTime,
    /// `RunLimits::max_events` events were handled.
    EventLimit,
}

/// What a run did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOutcome {
    /// Why it stopped.
    pub reason: StopReason,
    /// Events handled by this call.
    pub events: u64,
    /// The time of the last handled event.
    pub last_event_at: SimTime,
}

/// Pops events in order and passes each to `handle` with the queue, so the handler can schedule
/// follow-ups, until a bound is reached.
pub fn run<E, F>(queue: &mut EventQueue<E>, limits: RunLimits, mut handle: F) -> RunOutcome
where
    F: FnMut(SimTime, E, &mut EventQueue<E>),
{
    let mut events = 0;
    let reason = loop {
        if events >= limits.max_events {
            break StopReason::EventLimit;
        }
        match queue.peek_time() {
            None => break StopReason::QueueEmpty,
            Some(t) if t > limits.end => break StopReason::EndTime,
            Some(_) => {}
        }
        let (now, event) = queue.pop().expect("peeked an event");
        events += 1;
        handle(now, event, queue);
    };
    RunOutcome { reason, events, last_event_at: queue.now() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain that reschedules itself every second forever.
    fn ticking_queue() -> EventQueue<u32> {
        let mut q = EventQueue::new();
        q.schedule(SimTime::ZERO, 0);
        q
    }

    fn tick(now: SimTime, n: u32, q: &mut EventQueue<u32>) {
        q.schedule(now + SimTime::from_secs(1), n + 1);
    }

    #[test]
    fn stops_at_end_time_inclusive() {
        let mut q = ticking_queue();
        let limits = RunLimits { end: SimTime::from_secs(10), max_events: u64::MAX };
        let out = run(&mut q, limits, tick);
        assert_eq!(out.reason, StopReason::EndTime);
        assert_eq!(out.events, 11, "t = 0..=10 s");
        assert_eq!(out.last_event_at, SimTime::from_secs(10));
    }

    #[test]
    fn stops_at_event_limit() {
        let mut q = ticking_queue();
        let limits = RunLimits { end: SimTime::MAX, max_events: 5 };
        let out = run(&mut q, limits, tick);
        assert_eq!(out.reason, StopReason::EventLimit);
        assert_eq!(out.events, 5);
        assert_eq!(out.last_event_at, SimTime::from_secs(4));
    }

    #[test]
    fn stops_when_empty() {
        let mut q: EventQueue<u32> = EventQueue::new();
        q.schedule(SimTime::from_secs(1), 7);
        let limits = RunLimits { end: SimTime::MAX, max_events: u64::MAX };
        let mut seen = Vec::new();
        let out = run(&mut q, limits, |_, e, _| seen.push(e));
        assert_eq!(out.reason, StopReason::QueueEmpty);
        assert_eq!(seen, vec![7]);
    }
}
