//! Questions about the time intervals of every partition at once, answered without merging all
//! their edges: the stop-the-world time (some partition down, none allowed) and the number of
//! down partitions at each sample time. Each list is sorted, disjoint and ends by the end of
//! the run; both answers are exact.
//!
//! A sweep over all edges in time order (a heap of one cursor per list) cost a log factor per
//! edge: 26 million edges of 20,000 lists for the hour of `sims/bench/large-rolling-restart.toml`
//! under eager, 3 s of the report. Here the gaps of the allowed intervals (few: the group's
//! stop-the-world windows) are found first, and only the down pieces inside them are kept.

use sim_core::SimTime;

/// A time interval `[start, end)`.
pub type Span = (SimTime, SimTime);

/// The time during which some list of `down` has an interval and no list of `allowed` has
/// one: the measure of `(U down) \ (U allowed)`.
pub fn stop_the_world<'a>(
    down: impl Iterator<Item = &'a [Span]>,
    allowed: impl Iterator<Item = &'a [Span]>,
) -> SimTime {
    let mut gaps = vec![(SimTime::ZERO, SimTime::MAX)];
    let mut next = Vec::new();
    for list in allowed {
        subtract(&gaps, list, &mut next);
        std::mem::swap(&mut gaps, &mut next);
        if gaps.is_empty() {
            return SimTime::ZERO;
        }
    }
    let mut covered: Vec<Vec<Span>> = vec![Vec::new(); gaps.len()];
    for list in down {
        cover_gaps(&gaps, list, &mut covered);
    }
    covered.iter().flatten().fold(SimTime::ZERO, |total, &(s, e)| total + (e - s))
}

/// `out` = `spans` minus the intervals of `holes` (both sorted and disjoint).
fn subtract(spans: &[Span], holes: &[Span], out: &mut Vec<Span>) {
    out.clear();
    let mut h = 0;
    for &(mut start, end) in spans {
        while h < holes.len() && holes[h].1 <= start {
            h += 1;
        }
        let mut k = h;
        while k < holes.len() && holes[k].0 < end {
            if holes[k].0 > start {
                out.push((start, holes[k].0));
            }
            start = start.max(holes[k].1);
            k += 1;
        }
        if start < end {
            out.push((start, end));
        }
        // The last hole may reach into the next span.
        h = k.saturating_sub(1).max(h);
    }
}

/// Adds the parts of `list` inside each gap to that gap's covered set.
fn cover_gaps(gaps: &[Span], list: &[Span], covered: &mut [Vec<Span>]) {
    let mut g = 0;
    for &(start, end) in list {
        while g < gaps.len() && gaps[g].1 <= start {
            g += 1;
        }
        let mut k = g;
        while k < gaps.len() && gaps[k].0 < end {
            let piece = (start.max(gaps[k].0), end.min(gaps[k].1));
            insert_merged(&mut covered[k], piece);
            k += 1;
        }
    }
}

/// Adds `piece` to the sorted, disjoint `set`, merging what it overlaps or touches.
fn insert_merged(set: &mut Vec<Span>, (start, end): Span) {
    // Pieces mostly arrive in order, or cover what is there already: check the last first.
    if let Some(last) = set.last_mut() {
        if last.0 <= start && start <= last.1 {
            last.1 = last.1.max(end);
            return;
        }
    }
    let first = set.partition_point(|s| s.1 < start);
    let past = set.partition_point(|s| s.0 <= end);
    if first == past {
        set.insert(first, (start, end));
        return;
    }
    let merged = (start.min(set[first].0), end.max(set[past - 1].1));
    set.splice(first..past, [merged]);
}

/// For each time of `at` (ascending), how many lists have an interval containing it
/// (`start <= t < end`).
pub fn count_covering<'a>(at: &[SimTime], lists: impl Iterator<Item = &'a [Span]>) -> Vec<u32> {
    // +1 at the first sample inside an interval, -1 at the first one past it.
    let mut delta = vec![0i64; at.len() + 1];
    for list in lists {
        for &(start, end) in list {
            let from = at.partition_point(|t| *t < start);
            let to = at.partition_point(|t| *t < end);
            if from < to {
                delta[from] += 1;
                delta[to] -= 1;
            }
        }
    }
    let mut count = 0i64;
    delta[..at.len()]
        .iter()
        .map(|d| {
            count += d;
            count as u32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    fn spans(list: &[(u64, u64)]) -> Vec<Span> {
        list.iter().map(|&(s, e)| (ms(s), ms(e))).collect()
    }

    /// The definition, a millisecond at a time (every edge here is a whole millisecond).
    fn stop_the_world_by_ms(down: &[Vec<Span>], allowed: &[Vec<Span>], end_ms: u64) -> SimTime {
        let inside =
            |lists: &[Vec<Span>], t: SimTime| lists.iter().flatten().any(|&(s, e)| s <= t && t < e);
        let stopped = (0..end_ms).filter(|&t| inside(down, ms(t)) && !inside(allowed, ms(t)));
        ms(stopped.count() as u64)
    }

    fn random_lists(rng: &mut impl Rng, lists: usize, end_ms: u64) -> Vec<Vec<Span>> {
        (0..lists)
            .map(|_| {
                let mut t = 0;
                let mut list = Vec::new();
                while t < end_ms {
                    let start = t + rng.random_range(0..20);
                    let end = (start + rng.random_range(1..30)).min(end_ms);
                    if start < end {
                        list.push((ms(start), ms(end)));
                    }
                    t = end + rng.random_range(0..2);
                }
                list
            })
            .collect()
    }

    #[test]
    fn stop_the_world_by_hand() {
        // Allowed [0,10) and [12,20) on one list, [15,30) on another: gaps [10,12) and from 30.
        // Down [5,11) counts [10,11) = 1 ms; down [25,40) counts [30,40) = 10 ms; [11,12)
        // is down on neither list.
        let allowed = [spans(&[(0, 10), (12, 20)]), spans(&[(15, 30)])];
        let down = [spans(&[(5, 11)]), spans(&[(25, 40)])];
        let total =
            stop_the_world(down.iter().map(|l| l.as_slice()), allowed.iter().map(|l| l.as_slice()));
        assert_eq!(total, ms(11));
    }

    #[test]
    fn stop_the_world_equals_the_definition_on_random_lists() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for round in 0..200 {
            let end_ms = 300;
            let down = random_lists(&mut rng, 1 + round % 7, end_ms);
            // Sparse allowed lists leave gaps; dense ones leave none.
            let allowed: Vec<Vec<Span>> = random_lists(&mut rng, round % 4, end_ms)
                .into_iter()
                .map(|l| l.into_iter().step_by(1 + round % 3).collect())
                .collect();
            let fast = stop_the_world(
                down.iter().map(|l| l.as_slice()),
                allowed.iter().map(|l| l.as_slice()),
            );
            assert_eq!(fast, stop_the_world_by_ms(&down, &allowed, end_ms), "round {round}");
        }
    }

    #[test]
    fn covering_counts_by_hand_and_on_random_lists() {
        // Samples at 0, 10, 20, 30: [0,10) holds 0; [5,25) holds 10, 20; [10,11) holds 10;
        // [30,31) holds 30; [31,40) holds none.
        let lists = [spans(&[(0, 10), (30, 31)]), spans(&[(5, 25)]), spans(&[(10, 11), (31, 40)])];
        let at = [ms(0), ms(10), ms(20), ms(30)];
        assert_eq!(count_covering(&at, lists.iter().map(|l| l.as_slice())), vec![1, 2, 1, 1]);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for _ in 0..50 {
            let lists = random_lists(&mut rng, 5, 200);
            let at: Vec<SimTime> = (0..200).step_by(7).map(ms).collect();
            let by_definition: Vec<u32> = at
                .iter()
                .map(|&t| {
                    let covering = lists.iter().filter(|l| l.iter().any(|&(s, e)| s <= t && t < e));
                    covering.count() as u32
                })
                .collect();
            assert_eq!(count_covering(&at, lists.iter().map(|l| l.as_slice())), by_definition);
        }
    }
}
