//! The membership that validation replays events against, at a cost per event independent of
//! the member counts (issue 27 item 6): a `scale` to 100,000 members and back costs a few tree
//! steps, not 100,000 names.
//!
//! Names `c0 .. c{SLOTS-1}` (exactly as [`initial_member_name`] writes them) live in a segment
//! tree of slots, each free, live or down, with lazy range updates: `scale` fills the lowest
//! free slots or frees the highest live ones in one range update. Any other name (joined by
//! `join`) is kept by name, ordered by [`member_order`]; there are at most as many as events.
//! The decisions are those of [`crate::scale_plan`], which the model uses at run time.

use crate::members::{initial_member_name, member_order, split_number};
use sim_core::SimTime;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Slots for `c0 ..`: above `limits::MAX_MEMBERS`, so every name a `scale` adds has one (it
/// adds the lowest free `cN`, all below its target).
const SLOTS: usize = 1 << 17;
const FREE: usize = 0;
const LIVE: usize = 1;
const DOWN: usize = 2;
/// A map of slot states, applied to a range: `map[old] = new`.
type StateMap = [u8; 3];
const IDENTITY: StateMap = [0, 1, 2];
const FREE_TO_LIVE: StateMap = [LIVE as u8, LIVE as u8, DOWN as u8];
const LIVE_TO_FREE: StateMap = [FREE as u8, FREE as u8, DOWN as u8];

/// Slot states in a segment tree: per node, how many slots are in each state, and the map
/// still to pass down to its children.
struct Slots {
    count: Vec<[u32; 3]>,
    pending: Vec<StateMap>,
}

impl Slots {
    fn new() -> Slots {
        let mut count = vec![[0; 3]; 2 * SLOTS];
        for (node, c) in count.iter_mut().enumerate().skip(1) {
            let depth = usize::BITS - 1 - node.leading_zeros();
            c[FREE] = (SLOTS >> depth) as u32;
        }
        Slots { count, pending: vec![IDENTITY; 2 * SLOTS] }
    }

    fn apply(&mut self, node: usize, map: StateMap) {
        let old = self.count[node];
        let mut new = [0; 3];
        for state in 0..3 {
            new[map[state] as usize] += old[state];
        }
        self.count[node] = new;
        let before = self.pending[node];
        self.pending[node] =
            [map[before[0] as usize], map[before[1] as usize], map[before[2] as usize]];
    }

    fn push(&mut self, node: usize) {
        let map = self.pending[node];
        if map != IDENTITY {
            self.apply(2 * node, map);
            self.apply(2 * node + 1, map);
            self.pending[node] = IDENTITY;
        }
    }

    /// Applies `map` to slots `from..to`.
    fn map_range(&mut self, from: usize, to: usize, map: StateMap) {
        if from < to {
            self.map_in(1, 0, SLOTS, (from, to), map);
        }
    }

    fn map_in(&mut self, node: usize, lo: usize, hi: usize, range: (usize, usize), map: StateMap) {
        if range.1 <= lo || hi <= range.0 {
            return;
        }
        if range.0 <= lo && hi <= range.1 {
            self.apply(node, map);
            return;
        }
        self.push(node);
        let mid = (lo + hi) / 2;
        self.map_in(2 * node, lo, mid, range, map);
        self.map_in(2 * node + 1, mid, hi, range, map);
        for state in 0..3 {
            self.count[node][state] = self.count[2 * node][state] + self.count[2 * node + 1][state];
        }
    }

    fn set(&mut self, slot: usize, state: usize) {
        self.map_range(slot, slot + 1, [state as u8; 3]);
    }

    fn total(&self, state: usize) -> usize {
        self.count[1][state] as usize
    }

    /// How many of slots `0..to` are in `state`.
    fn count_below(&mut self, to: usize, state: usize) -> usize {
        let (mut node, mut lo, mut hi, mut sum) = (1, 0, SLOTS, 0);
        while lo < to && to < hi {
            self.push(node);
            let mid = (lo + hi) / 2;
            if to <= mid {
                (node, hi) = (2 * node, mid);
            } else {
                sum += self.count[2 * node][state] as usize;
                (node, lo) = (2 * node + 1, mid);
            }
        }
        if hi <= to {
            sum += self.count[node][state] as usize;
        }
        sum
    }

    /// The slot of the `n`-th (from 0) slot in `state`, left to right; `n < total(state)`.
    fn nth(&mut self, state: usize, mut n: usize) -> usize {
        let mut node = 1;
        while node < SLOTS {
            self.push(node);
            let left = self.count[2 * node][state] as usize;
            if n < left {
                node *= 2;
            } else {
                n -= left;
                node = 2 * node + 1;
            }
        }
        node - SLOTS
    }

    fn state(&mut self, slot: usize) -> usize {
        (0..3).find(|&s| self.count_below(slot + 1, s) > self.count_below(slot, s)).unwrap_or(FREE)
    }
}

/// A name ordered as [`member_order`] orders it.
#[derive(PartialEq, Eq)]
struct Ordered(String);

impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> Ordering {
        member_order(&self.0, &other.0)
    }
}

impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The slot of `name`, when it is `cN` as [`initial_member_name`] writes it and N < SLOTS.
fn slot_of(name: &str) -> Option<usize> {
    let index: u32 = name.strip_prefix('c')?.parse().ok()?;
    let fits = (index as usize) < SLOTS && initial_member_name(index) == name;
    fits.then_some(index as usize)
}

/// The first slot whose name orders after `name` (a name without a slot): slots below it
/// order before `name`.
fn first_slot_after(name: &str) -> usize {
    let (head, number) = split_number(name);
    match (head.cmp("c"), number) {
        (Ordering::Greater, _) => SLOTS,
        (Ordering::Less, _) | (Ordering::Equal, None) => 0,
        (Ordering::Equal, Some(n)) if n >= SLOTS as u64 => SLOTS,
        (Ordering::Equal, Some(n)) => {
            let n = n as usize;
            if initial_member_name(n as u32).as_str() > name {
                n
            } else {
                n + 1
            }
        }
    }
}

/// Membership while replaying events.
pub(crate) struct Roster {
    slots: Slots,
    /// Live members without a slot.
    others: BTreeSet<Ordered>,
    /// Crashed members and when they restart.
    down: BTreeMap<String, SimTime>,
    /// The same, by restart time.
    due: BTreeSet<(SimTime, String)>,
    /// Every name that was ever a member: slots below `ever_below`, and `joined`.
    ever_below: usize,
    joined: BTreeSet<String>,
    /// Member-steps of the `scale` events so far (bounded by `limits::MAX_SCALE_WORK`).
    pub scale_work: u64,
}

impl Roster {
    /// Initial members `c0 .. c{members-1}` live.
    pub fn new(members: u32) -> Roster {
        let mut slots = Slots::new();
        let members = (members as usize).min(SLOTS);
        slots.map_range(0, members, FREE_TO_LIVE);
        Roster {
            slots,
            others: BTreeSet::new(),
            down: BTreeMap::new(),
            due: BTreeSet::new(),
            ever_below: members,
            joined: BTreeSet::new(),
            scale_work: 0,
        }
    }

    pub fn live_len(&self) -> usize {
        self.slots.total(LIVE) + self.others.len()
    }

    pub fn down_len(&self) -> usize {
        self.down.len()
    }

    pub fn is_live(&mut self, name: &str) -> bool {
        match slot_of(name) {
            Some(slot) => self.slots.state(slot) == LIVE,
            None => self.others.contains(&Ordered(name.to_string())),
        }
    }

    /// When `name`, crashed, restarts.
    pub fn restart_of(&self, name: &str) -> Option<SimTime> {
        self.down.get(name).copied()
    }

    pub fn was_member(&self, name: &str) -> bool {
        slot_of(name).is_some_and(|slot| slot < self.ever_below) || self.joined.contains(name)
    }

    /// Every name that was ever a member.
    pub fn ever(&self) -> BTreeSet<String> {
        let mut names = self.joined.clone();
        names.extend((0..self.ever_below as u32).map(initial_member_name));
        names
    }

    fn make_live(&mut self, name: &str) {
        match slot_of(name) {
            Some(slot) => self.slots.set(slot, LIVE),
            None => {
                self.others.insert(Ordered(name.to_string()));
            }
        }
    }

    /// `join`: `name` (not live, not down) becomes live.
    pub fn join(&mut self, name: &str) {
        self.make_live(name);
        self.joined.insert(name.to_string());
    }

    /// `leave`, or `crash` with `restart` when it restarts by itself.
    pub fn remove(&mut self, name: &str, restart: Option<SimTime>) {
        let state = if restart.is_some() { DOWN } else { FREE };
        match slot_of(name) {
            Some(slot) => self.slots.set(slot, state),
            None => {
                self.others.remove(&Ordered(name.to_string()));
            }
        }
        if let Some(at) = restart {
            self.down.insert(name.to_string(), at);
            self.due.insert((at, name.to_string()));
        }
    }

    /// Crashed members whose restart time is `now` or earlier are live again.
    pub fn restart_due(&mut self, now: SimTime) {
        while self.due.first().is_some_and(|(at, _)| *at <= now) {
            let Some((_, name)) = self.due.pop_first() else { break };
            self.down.remove(&name);
            self.make_live(&name);
        }
    }

    /// `scale` to `target` members, as [`crate::scale_plan`] decides; `Err` is its message.
    pub fn scale(&mut self, target: usize) -> Result<(), String> {
        let present = self.live_len() + self.down_len();
        if target >= present {
            let add = target - present;
            if add > 0 {
                let end = self.slots.nth(FREE, add - 1) + 1;
                self.slots.map_range(0, end, FREE_TO_LIVE);
                self.ever_below = self.ever_below.max(end);
            }
            return Ok(());
        }
        let excess = present - target;
        if excess > self.live_len() {
            return Err(format!(
                "cannot scale to {target}: only {} members are live and {} are down waiting for a restart",
                self.live_len(),
                self.down_len()
            ));
        }
        self.remove_highest(excess);
        Ok(())
    }

    /// Removes the `count` (at most all) live members highest in name order.
    fn remove_highest(&mut self, mut count: usize) {
        while count > 0 {
            let from = self.others.last().map_or(0, |top| first_slot_after(&top.0));
            let live_slots = self.slots.total(LIVE);
            let above = live_slots - self.slots.count_below(from, LIVE);
            if above >= count {
                let first = self.slots.nth(LIVE, live_slots - count);
                self.slots.map_range(first, SLOTS, LIVE_TO_FREE);
                return;
            }
            self.slots.map_range(from, SLOTS, LIVE_TO_FREE);
            self.others.pop_last();
            count -= above + 1;
        }
    }

    /// The live member `n`-th (from 0) in name order; `n < live_len()`. Costs a step per live
    /// member without a slot (only messages ask).
    pub fn nth_live(&mut self, n: usize) -> String {
        let mut before = 0;
        for (index, other) in self.others.iter().enumerate() {
            let rank = index + self.slots.count_below(first_slot_after(&other.0), LIVE);
            match rank.cmp(&n) {
                Ordering::Equal => return other.0.clone(),
                Ordering::Greater => break,
                Ordering::Less => before = index + 1,
            }
        }
        initial_member_name(self.slots.nth(LIVE, n - before) as u32)
    }

    /// The first `count` live members in name order.
    pub fn first_live(&mut self, count: usize) -> Vec<String> {
        let slots = self.slots.total(LIVE).min(count);
        let mut names: Vec<String> =
            (0..slots).map(|n| initial_member_name(self.slots.nth(LIVE, n) as u32)).collect();
        names.extend(self.others.iter().take(count).map(|o| o.0.clone()));
        names.sort_by(|a, b| member_order(a, b));
        names.truncate(count);
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scale_plan;

    /// A small deterministic generator (xorshift).
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// The replay by name, as validation did before the slots: the reference.
    #[derive(Default)]
    struct Naive {
        live: BTreeSet<String>,
        down: BTreeSet<String>,
    }

    fn sorted_live(roster: &mut Roster) -> Vec<String> {
        (0..roster.live_len()).map(|n| roster.nth_live(n)).collect()
    }

    fn check_same(roster: &mut Roster, naive: &Naive) {
        let mut expected: Vec<String> = naive.live.iter().cloned().collect();
        expected.sort_by(|a, b| member_order(a, b));
        assert_eq!(sorted_live(roster), expected);
        assert_eq!(roster.first_live(10), expected.iter().take(10).cloned().collect::<Vec<_>>());
        for name in &expected {
            assert!(roster.is_live(name), "{name}");
        }
    }

    #[test]
    fn scale_matches_scale_plan_with_odd_names_and_down_members() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let odd = ["c", "c00", "c01", "c007", "b5", "d1", "c131072", "worker", "c0x", "c3"];
        let mut roster = Roster::new(5);
        let mut naive = Naive::default();
        naive.live.extend((0..5).map(initial_member_name));
        for step in 0..3000u32 {
            match rng.below(5) {
                0 => {
                    let target = rng.below(40) as usize;
                    let expected = scale_plan(&naive.live, &naive.down, target);
                    let got = roster.scale(target);
                    assert_eq!(got.clone().err(), expected.clone().err(), "step {step}");
                    if let Ok(plan) = expected {
                        naive.live.extend(plan.add);
                        plan.remove.iter().for_each(|n| {
                            naive.live.remove(n);
                        });
                    }
                }
                1 => {
                    let name = odd[rng.below(odd.len() as u64) as usize].to_string();
                    if !naive.live.contains(&name) && !naive.down.contains(&name) {
                        naive.live.insert(name.clone());
                        roster.join(&name);
                    }
                }
                2 | 3 => {
                    let Some(name) = naive.live.iter().nth(rng.below(8) as usize).cloned() else {
                        continue;
                    };
                    naive.live.remove(&name);
                    let restart = (rng.below(2) == 0).then(|| SimTime::from_secs(u64::from(step)));
                    if restart.is_some() {
                        naive.down.insert(name.clone());
                    }
                    roster.remove(&name, restart);
                }
                _ => {
                    roster.restart_due(SimTime::from_secs(u64::from(step)));
                    let back: Vec<String> = std::mem::take(&mut naive.down).into_iter().collect();
                    naive.live.extend(back);
                }
            }
            assert_eq!(roster.down_len(), naive.down.len());
            check_same(&mut roster, &naive);
        }
    }

    #[test]
    fn names_after_slots_follow_member_order() {
        assert_eq!(first_slot_after("c"), 0);
        assert_eq!(first_slot_after("b9"), 0);
        assert_eq!(first_slot_after("d0"), SLOTS);
        assert_eq!(first_slot_after("c00"), 1);
        assert_eq!(first_slot_after("c05"), 5);
        assert_eq!(slot_of("c05"), None);
        assert_eq!(slot_of("c5"), Some(5));
    }
}
