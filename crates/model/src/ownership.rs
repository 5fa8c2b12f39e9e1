//! The world's ownership books: per partition its owner as the observations report it, the
//! state it is in without one, how far its records were processed, and whether its access must
//! be reported again. The books are the only way to change an owner.
//!
//! Fast stepping (`world/stepper/lazy.rs`) runs a steady member's poll-loop steps aside and
//! must run them up to the current instant before anything reads or changes its partitions.
//! The books keep that rule themselves: every change of an owner ([`set_owner`]), every record
//! processed by someone other than the owner ([`record_processed`]) and every report of a
//! changed access ([`settle`]) goes through a function that takes the world as a [`CatchUp`] and
//! catches the owner up first; then it asserts (debug builds and tests) that the owner has no
//! aside step left before that instant, so a miss fails there and then, not at the end-of-run
//! comparison of plain and fast stepping. The owner's own records raise the processed frontier
//! without a catch-up ([`Books::raise_frontier`]): raising a maximum commutes, and whoever
//! reads the frontier settles the partition first.

use crate::observe::PartState;
use crate::tp_table::TpTable;
use crate::types::{Conn, Tp};
use sim_core::SimTime;

/// One partition's entry.
struct Part {
    /// The owner the observations report (changed only by [`set_owner`]).
    owner: Option<Conn>,
    /// Its state while it has no owner.
    cause: PartState,
    /// The offset below which every record was processed at least once.
    frontier: u64,
    /// The owner and state last reported.
    last: Option<(Option<Conn>, PartState)>,
    /// Listed in `Books::changed`.
    changed: bool,
}

impl Part {
    fn new() -> Part {
        Part { owner: None, cause: PartState::Unassigned, frontier: 0, last: None, changed: false }
    }
}

/// The books of every partition (every partition of every topic has an entry).
#[derive(Default)]
pub(crate) struct Books {
    parts: TpTable<Part>,
    /// Partitions whose owner or state may have changed since the last report, each once
    /// (`Part::changed`); reported in partition order (sorted once per report, not kept in a
    /// set: a mark is a flag test and a push).
    changed: Vec<Tp>,
}

/// What the books need of the world to change a partition: the catch-up of its owner.
pub(crate) trait CatchUp {
    /// The books.
    fn books(&mut self) -> &mut Books;
    /// The time of the event being handled.
    fn now(&self) -> SimTime;
    /// Runs the aside steps of `owner` that come before the event being handled at `now`.
    fn catch_up_owner(&mut self, owner: Conn, now: SimTime);
    /// Whether `owner` still has aside steps that come before the event being handled at
    /// `now` (a catch-up would run them).
    fn behind(&self, owner: Conn, now: SimTime) -> bool;
}

/// A partition's owner and processed frontier once its owner caught up ([`settle`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Settled {
    pub(crate) owner: Option<Conn>,
    pub(crate) frontier: u64,
}

/// Catches `owner` up to `now` and asserts (debug builds and tests) that it is not behind.
fn catch_up_first(world: &mut impl CatchUp, owner: Conn, tp: Tp, now: SimTime) {
    world.catch_up_owner(owner, now);
    if cfg!(any(debug_assertions, test)) {
        assert!(
            !world.behind(owner, now),
            "partition {tp:?} touched at {now} while its owner {owner:?} has steps pending"
        );
    }
}

/// Gives `tp` to `owner` (`None`: to no one, in state `cause`) as of the event being handled;
/// the previous owner catches up first.
pub(crate) fn set_owner(world: &mut impl CatchUp, tp: Tp, owner: Option<Conn>, cause: PartState) {
    let previous = world.books().owner(tp);
    if let Some(previous) = previous.filter(|p| Some(*p) != owner) {
        let now = world.now();
        catch_up_first(world, previous, tp, now);
    }
    let books = world.books();
    let part = books.part_mut(tp);
    part.owner = owner;
    part.cause = cause;
    books.mark(tp);
}

/// Records `first..first + count` of `tp` processed at `now` by `by`: an owner in another
/// slot catches up first (its earlier records come first).
pub(crate) fn record_processed(
    world: &mut impl CatchUp,
    by: Conn,
    tp: Tp,
    first: u64,
    count: u64,
    now: SimTime,
) {
    let owner = world.books().owner(tp);
    if let Some(owner) = owner.filter(|o| o.slot != by.slot) {
        catch_up_first(world, owner, tp, now);
    }
    world.books().raise_frontier(tp, first + count);
}

/// The owner and frontier of `tp` at `now`, its owner caught up first (to report its access).
pub(crate) fn settle(world: &mut impl CatchUp, tp: Tp, now: SimTime) -> Settled {
    if let Some(owner) = world.books().owner(tp) {
        catch_up_first(world, owner, tp, now);
    }
    let part = world.books().part(tp);
    Settled { owner: part.owner, frontier: part.frontier }
}

impl Books {
    fn part(&self, tp: Tp) -> &Part {
        self.parts.get(tp).expect("known partition")
    }

    fn part_mut(&mut self, tp: Tp) -> &mut Part {
        self.parts.get_mut(tp).expect("known partition")
    }

    /// A new partition: unowned, unassigned, nothing processed, to be reported.
    pub(crate) fn add(&mut self, tp: Tp) {
        self.parts.get_or_insert_with(tp, Part::new);
        self.mark(tp);
    }

    /// The owner of `tp`.
    pub(crate) fn owner(&self, tp: Tp) -> Option<Conn> {
        self.part(tp).owner
    }

    /// The state of `tp` while it has no owner.
    pub(crate) fn cause(&self, tp: Tp) -> PartState {
        self.part(tp).cause
    }

    /// The offset below which every record of `tp` was processed.
    pub(crate) fn frontier(&self, tp: Tp) -> u64 {
        self.part(tp).frontier
    }

    /// Whether `offset` of `tp` is at or above the frontier (false for an unknown partition).
    pub(crate) fn is_unprocessed(&self, tp: Tp, offset: u64) -> bool {
        self.parts.get(tp).is_some_and(|p| offset >= p.frontier)
    }

    /// Records below `to` of `tp` were processed (by its owner, or reported by a jump of its
    /// owner's steps): a raise of a maximum, which needs no catch-up.
    pub(crate) fn raise_frontier(&mut self, tp: Tp, to: u64) {
        let part = self.part_mut(tp);
        part.frontier = part.frontier.max(to);
    }

    /// Every partition, in `(topic, partition)` order.
    pub(crate) fn partitions(&self) -> impl Iterator<Item = Tp> + '_ {
        self.parts.keys()
    }

    /// Every partition with its owner, in `(topic, partition)` order.
    pub(crate) fn owners(&self) -> impl Iterator<Item = (Tp, Option<Conn>)> + '_ {
        self.parts.iter().map(|(tp, p)| (tp, p.owner))
    }

    /// The partitions `conn` owns, in order.
    pub(crate) fn owned_by(&self, conn: Conn) -> Vec<Tp> {
        self.parts.iter().filter(|(_, p)| p.owner == Some(conn)).map(|(tp, _)| tp).collect()
    }

    /// Marks `tp` to be reported (its owner's state may have changed).
    pub(crate) fn mark(&mut self, tp: Tp) {
        let part = self.part_mut(tp);
        if !part.changed {
            part.changed = true;
            self.changed.push(tp);
        }
    }

    /// Marks every partition of `conn`.
    pub(crate) fn mark_owned_by(&mut self, conn: Conn) {
        for tp in self.owned_by(conn) {
            self.mark(tp);
        }
    }

    /// The marked partitions in partition order (the order they are reported in), still marked.
    pub(crate) fn marked(&self) -> Vec<Tp> {
        let mut marked = self.changed.clone();
        marked.sort_unstable();
        marked
    }

    /// The marked partitions in partition order, unmarked (marks made from here on are for
    /// the next report).
    pub(crate) fn take_changed(&mut self) -> Vec<Tp> {
        let mut changed = std::mem::take(&mut self.changed);
        changed.sort_unstable();
        for tp in &changed {
            self.part_mut(*tp).changed = false;
        }
        changed
    }

    /// Gives back the emptied buffer of [`Books::take_changed`] for the next marks (unless
    /// marks were made meanwhile).
    pub(crate) fn return_changed(&mut self, changed: Vec<Tp>) {
        debug_assert!(changed.is_empty());
        if self.changed.is_empty() {
            self.changed = changed;
        }
    }

    /// Whether `key` (owner and state) differs from what was last reported of `tp`; if so it
    /// is what was reported now.
    pub(crate) fn report(&mut self, tp: Tp, key: (Option<Conn>, PartState)) -> bool {
        let part = self.part_mut(tp);
        if part.last == Some(key) {
            return false;
        }
        part.last = Some(key);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Conn = Conn { slot: 0, incarnation: 1 };
    const B: Conn = Conn { slot: 1, incarnation: 1 };
    const TP: Tp = Tp { topic: 0, partition: 0 };

    /// A world of two members whose aside steps are pending until caught up; a forgetful
    /// one misses its catch-ups.
    struct Rig {
        books: Books,
        pending: Vec<Conn>,
        caught_up: Vec<(Conn, SimTime)>,
        forgetful: bool,
    }

    impl CatchUp for Rig {
        fn books(&mut self) -> &mut Books {
            &mut self.books
        }
        fn now(&self) -> SimTime {
            SimTime::from_millis(7)
        }
        fn catch_up_owner(&mut self, owner: Conn, now: SimTime) {
            self.caught_up.push((owner, now));
            if !self.forgetful {
                self.pending.retain(|c| *c != owner);
            }
        }
        fn behind(&self, owner: Conn, _: SimTime) -> bool {
            self.pending.contains(&owner)
        }
    }

    fn rig(forgetful: bool) -> Rig {
        let mut books = Books::default();
        books.add(TP);
        Rig { books, pending: vec![A, B], caught_up: Vec::new(), forgetful }
    }

    /// A move from A to B catches A up (once, at the event's time); giving it to B again, or
    /// B processing its own records, catches no one up; A processing B's records at 3 ms
    /// catches B up to 3 ms; settling catches the owner up; the frontier only rises.
    #[test]
    fn changes_catch_the_owner_up_first() {
        let mut w = rig(false);
        set_owner(&mut w, TP, Some(A), PartState::Unassigned);
        assert!(w.caught_up.is_empty(), "nobody owned it");
        set_owner(&mut w, TP, Some(B), PartState::Unassigned);
        assert_eq!(w.caught_up, vec![(A, SimTime::from_millis(7))]);
        set_owner(&mut w, TP, Some(B), PartState::Revoked);
        record_processed(&mut w, B, TP, 0, 5, SimTime::from_millis(3));
        assert_eq!(w.caught_up.len(), 1, "no change of owner, the owner's own records");
        assert_eq!(w.books.frontier(TP), 5);
        w.pending.push(B);
        record_processed(&mut w, A, TP, 2, 2, SimTime::from_millis(3));
        assert_eq!(w.caught_up[1], (B, SimTime::from_millis(3)));
        assert_eq!(w.books.frontier(TP), 5, "the frontier never falls");
        w.pending.push(B);
        let settled = settle(&mut w, TP, SimTime::from_millis(9));
        assert_eq!(settled, Settled { owner: Some(B), frontier: 5 });
        assert_eq!(w.caught_up[2], (B, SimTime::from_millis(9)));
        assert_eq!(w.books.take_changed(), vec![TP], "marked once");
        assert!(w.books.report(TP, (Some(B), PartState::Consuming)));
        assert!(!w.books.report(TP, (Some(B), PartState::Consuming)), "reported already");
    }

    /// A catch-up that leaves the owner behind fails at the change, naming the partition.
    #[test]
    #[should_panic(expected = "while its owner Conn { slot: 0, incarnation: 1 } has steps pending")]
    fn a_missed_catch_up_fails_at_the_change() {
        let mut w = rig(true);
        set_owner(&mut w, TP, Some(A), PartState::Unassigned);
        set_owner(&mut w, TP, None, PartState::Revoked);
    }

    /// The same for another member's records and for a report.
    #[test]
    #[should_panic(expected = "has steps pending")]
    fn a_missed_catch_up_fails_at_a_report() {
        let mut w = rig(true);
        set_owner(&mut w, TP, Some(B), PartState::Unassigned);
        settle(&mut w, TP, SimTime::from_millis(8));
    }
}
