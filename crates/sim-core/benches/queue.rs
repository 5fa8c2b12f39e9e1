//! Schedule-and-pop throughput of the event queue on one million events, and timer re-arming.
// criterion_group! generates undocumented functions.
#![allow(missing_docs)]
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sim_core::{EventQueue, SimTime};

const EVENTS: u64 = 1_000_000;

/// One million events at pseudo-random times (a fixed LCG, no I/O), then drained.
fn schedule_then_pop(c: &mut Criterion) {
    let mut group = c.benchmark_group("event_queue");
    group.throughput(Throughput::Elements(EVENTS));
    group.sample_size(10);
    group.bench_function("schedule_then_pop_1M", |b| {
        b.iter(|| {
            let mut q: EventQueue<u64> = EventQueue::with_capacity(EVENTS as usize);
            let mut x: u64 = 12345;
            for i in 0..EVENTS {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                q.schedule(SimTime::from_nanos(x >> 24), i);
            }
            let mut sum = 0u64;
            while let Some((_, e)) = q.pop() {
                sum = sum.wrapping_add(e);
            }
            sum
        })
    });
    group.bench_function("steady_state_1M", |b| b.iter(|| steady_state(|i| i)));
    group.bench_function("rearm_timer_1M", |b| b.iter(|| rearm_timers(|i| i, |e| *e as usize)));
    group.finish();
}

/// A realistic shape: 1,000 pending events (`event(i)`), each pop schedules one successor.
fn steady_state<E>(event: impl Fn(u64) -> E) -> SimTime {
    let mut q: EventQueue<E> = EventQueue::with_capacity(2048);
    for i in 0..1000 {
        q.schedule(SimTime::from_micros(i), event(i));
    }
    let mut x: u64 = 1;
    for _ in 0..EVENTS {
        let (now, e) = q.pop().expect("never empty");
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        q.schedule(now + SimTime::from_nanos(1 + (x >> 44)), e);
    }
    q.now()
}

/// 1,000 timers (timer `i` fires `event(i)`; `timer_of` reads `i` back), each re-armed 3 s
/// after it fires, every third one twice.
fn rearm_timers<E: Clone>(event: impl Fn(u64) -> E, timer_of: impl Fn(&E) -> usize) -> SimTime {
    let mut q: EventQueue<E> = EventQueue::with_capacity(1024);
    let timers: Vec<_> = (0..1000).map(|_| q.new_timer()).collect();
    for (i, t) in timers.iter().enumerate() {
        q.arm(*t, SimTime::from_millis(i as u64 + 1), event(i as u64));
    }
    for k in 0..EVENTS {
        let (now, e) = q.pop().expect("never empty");
        let t = timers[timer_of(&e)];
        if k % 3 == 0 {
            q.arm(t, now + SimTime::from_millis(3000), e.clone());
            q.arm(t, now + SimTime::from_millis(3001), e);
        } else {
            q.arm(t, now + SimTime::from_millis(3000), e);
        }
    }
    q.now()
}

/// A payload the size of a large model event (96 bytes): the queue moves keys, not payloads.
type Big = [u64; 12];

/// The steady-state and re-arming shapes above with a 96-byte payload.
fn large_payload(c: &mut Criterion) {
    let mut group = c.benchmark_group("event_queue_96B");
    group.throughput(Throughput::Elements(EVENTS));
    group.sample_size(10);
    group.bench_function("steady_state_1M", |b| b.iter(|| steady_state(|i| [i; 12])));
    group.bench_function("rearm_timer_1M", |b| {
        b.iter(|| rearm_timers(|i| -> Big { [i; 12] }, |e| e[0] as usize))
    });
    group.finish();
}

criterion_group!(benches, schedule_then_pop, large_payload);
criterion_main!(benches);
