//! Questions about the time intervals of every partition at once, answered without merging all
//! their edges: the stop-the-world time (some partition down, none allowed) and the number of
//! down partitions at each sample time. Each list is sorted, disjoint and ends by the end of
//! the run; both answers are exact.
//!
//! A sweep over all edges in time order (a heap of one cursor per list) cost a log factor per
//! edge: 26 million edges of 20,000 lists for the hour of `sims/bench/large-rolling-restart.toml`
//! under eager, 3 s of the report. Here the gaps of the allowed intervals (few: the group's
//! stop-the-world windows) are kept, and only the down pieces inside them.
//!
//! Both are fed one partition at a time ([`StopSweep`], [`CoverCount`]): the end of a run
//! reads its partitions' timelines back one after another from a stream (issue 29), and holds
//! no partition's lists beyond its own. `stop_the_world` and `count_covering` (built for tests
//! only), which take every list at once, stay as the tests' reference.

use sim_core::SimTime;

/// A time interval `[start, end)`.
pub type Span = (SimTime, SimTime);

#[cfg(test)]
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

/// `stop_the_world` (the tests' reference) fed one partition at a time (its down and allowed
/// lists), for a run whose partitions are read back from a stream one after another: the gaps of
/// the allowed intervals seen so far, and the down pieces inside them. Allowed intervals only ever
/// shrink both; at the end the pieces are `(U down) \ (U allowed)`, exactly.
#[derive(Debug)]
pub struct StopSweep {
    gaps: Vec<Span>,
    stopped: Vec<Span>,
    pieces: Vec<Span>,
    scratch: Vec<Span>,
}

impl Default for StopSweep {
    fn default() -> StopSweep {
        StopSweep {
            gaps: vec![(SimTime::ZERO, SimTime::MAX)],
            stopped: Vec::new(),
            pieces: Vec::new(),
            scratch: Vec::new(),
        }
    }
}

impl StopSweep {
    /// Adds one list's down and allowed intervals (each sorted and disjoint).
    pub fn add(&mut self, down: &[Span], allowed: &[Span]) {
        if !allowed.is_empty() {
            subtract(&self.gaps, allowed, &mut self.scratch);
            std::mem::swap(&mut self.gaps, &mut self.scratch);
            subtract(&self.stopped, allowed, &mut self.scratch);
            std::mem::swap(&mut self.stopped, &mut self.scratch);
        }
        self.pieces.clear();
        let mut g = 0;
        for &(start, end) in down {
            while g < self.gaps.len() && self.gaps[g].1 <= start {
                g += 1;
            }
            let mut k = g;
            while k < self.gaps.len() && self.gaps[k].0 < end {
                self.pieces.push((start.max(self.gaps[k].0), end.min(self.gaps[k].1)));
                k += 1;
            }
        }
        if !self.pieces.is_empty() {
            union(&self.stopped, &self.pieces, &mut self.scratch);
            std::mem::swap(&mut self.stopped, &mut self.scratch);
        }
    }

    /// The stop-the-world time inside `[from, to)`.
    pub fn within(&self, from: SimTime, to: SimTime) -> SimTime {
        self.stopped
            .iter()
            .map(|&(s, e)| (s.max(from), e.min(to)))
            .filter(|(s, e)| s < e)
            .fold(SimTime::ZERO, |total, (s, e)| total + (e - s))
    }
}

/// `out` = the union of `a` and `b` (both sorted and disjoint), touching pieces merged.
fn union(a: &[Span], b: &[Span], out: &mut Vec<Span>) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = if j == b.len() || (i < a.len() && a[i].0 <= b[j].0) {
            i += 1;
            a[i - 1]
        } else {
            j += 1;
            b[j - 1]
        };
        match out.last_mut() {
            Some(last) if next.0 <= last.1 => last.1 = last.1.max(next.1),
            _ => out.push(next),
        }
    }
}

/// `count_covering` (the tests' reference) fed one list at a time.
#[derive(Debug)]
pub struct CoverCount<'a> {
    at: &'a [SimTime],
    /// +1 at the first sample inside an interval, -1 at the first one past it.
    delta: Vec<i64>,
}

impl<'a> CoverCount<'a> {
    /// Counts for the times `at` (ascending).
    pub fn new(at: &'a [SimTime]) -> CoverCount<'a> {
        CoverCount { at, delta: vec![0; at.len() + 1] }
    }

    /// Adds one list (sorted and disjoint).
    pub fn add(&mut self, list: &[Span]) {
        for &(start, end) in list {
            let from = self.at.partition_point(|t| *t < start);
            let to = self.at.partition_point(|t| *t < end);
            if from < to {
                self.delta[from] += 1;
                self.delta[to] -= 1;
            }
        }
    }

    /// For each time, how many lists have an interval containing it.
    pub fn counts(&self) -> Vec<u32> {
        let mut count = 0i64;
        self.delta[..self.at.len()]
            .iter()
            .map(|d| {
                count += d;
                count as u32
            })
            .collect()
    }
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

#[cfg(test)]
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

#[cfg(test)]
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

#[cfg(test)]
/// For each time of `at` (ascending), how many lists have an interval containing it
/// (`start <= t < end`).
pub fn count_covering<'a>(at: &[SimTime], lists: impl Iterator<Item = &'a [Span]>) -> Vec<u32> {
    let mut count = CoverCount::new(at);
    for list in lists {
        count.add(list);
    }
    count.counts()
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

    /// Fed one list at a time, in any mix of down and allowed lists, the sweep gives
    /// [`stop_the_world`] of the whole run and of the lists cut at a bound.
    #[test]
    fn stop_sweep_equals_stop_the_world_whole_and_windowed() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
        for round in 0..300 {
            let end_ms = 300;
            let down = random_lists(&mut rng, 1 + round % 7, end_ms);
            let allowed: Vec<Vec<Span>> = random_lists(&mut rng, round % 5, end_ms)
                .into_iter()
                .map(|l| l.into_iter().step_by(1 + round % 3).collect())
                .collect();
            let mut sweep = StopSweep::default();
            for i in 0..down.len().max(allowed.len()) {
                let d = down.get(i).map_or(&[][..], |l| l.as_slice());
                let a = allowed.get(i).map_or(&[][..], |l| l.as_slice());
                sweep.add(d, a);
            }
            let whole = |d: &[Vec<Span>], a: &[Vec<Span>]| {
                stop_the_world(d.iter().map(|l| l.as_slice()), a.iter().map(|l| l.as_slice()))
            };
            assert_eq!(sweep.within(SimTime::ZERO, SimTime::MAX), whole(&down, &allowed));
            let cut = ms(rng.random_range(0..end_ms));
            let clip = |lists: &[Vec<Span>], from: SimTime, to: SimTime| -> Vec<Vec<Span>> {
                lists
                    .iter()
                    .map(|l| {
                        let clipped = l.iter().map(|&(s, e)| (s.max(from), e.min(to)));
                        clipped.filter(|(s, e)| s < e).collect()
                    })
                    .collect()
            };
            let before =
                whole(&clip(&down, SimTime::ZERO, cut), &clip(&allowed, SimTime::ZERO, cut));
            let after = whole(&clip(&down, cut, SimTime::MAX), &clip(&allowed, cut, SimTime::MAX));
            assert_eq!(sweep.within(SimTime::ZERO, cut), before, "round {round}");
            assert_eq!(sweep.within(cut, SimTime::MAX), after, "round {round}");
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
