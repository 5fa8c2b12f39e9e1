//! The invariants chaos mode checks after every event, as pure functions over a
//! [`Snapshot`] of the world, and the [`Checker`] probe that takes the snapshots during a run.
//!
//! Safety, after every event (each check names the one fact that broke):
//! - `exclusive-ownership`: no partition is owned by two members the coordinator has in its
//!   group with partitions of the same generation. A member the coordinator already removed
//!   but that has not noticed yet (a zombie), or a static member the coordinator kept in the
//!   group without it rejoining (KIP-345: it owns the previous generation's partitions until
//!   it polls), may still hold and consume a partition someone else got: real Kafka allows
//!   that, so it is not a failure but measured (`zombie` partition-time and episodes).
//! - `generation-monotonic`: the coordinator's generation never decreases, and neither does
//!   the generation of any member incarnation's owned partitions (a reset to -1 is allowed).
//! - the model's own facts (`model::invariants`, each violation named by its fact, e.g.
//!   `classic.stable_covers_partitions`, `kip848.held_exclusive`, `consumer.batch_of_last_poll`,
//!   `group.owned_generation_formed`: no member owns partitions of a generation the
//!   coordinator has not formed yet), read through `WorldView::broken` whenever the snapshot
//!   changed, in every build (the run loop also asserts them after every event in debug
//!   builds; a panic there is caught and reported as `model-assertion`). (A world-level
//!   "Stable covers every partition by an owner" is not checked: a member closing or leaving
//!   after `max.poll.interval.ms` drops its partitions before the coordinator hears of it, so
//!   the group is legitimately Stable with them unowned for a while; liveness catches a
//!   partition left unowned for good.)
//! - `event-budget`: a run stays under a bound on events (a livelock would not end).
//!
//! Liveness: from the liveness deadline (the end of the last fault plus
//! `chaos_gen::liveness_bound`) to the end of the run, after every event the group is
//! *settled*: with live members, the group is Stable with no open rebalance, every live member
//! is in the group, reachable and not paused, and every partition is owned by exactly one live
//! member and consumable; with no live member, the group is Empty. One exception, because
//! real Kafka has it too: a partition the Stable group leaves to no one *for good*
//! (`WorldView::withheld_for_good`: a cooperative round withheld it from a static member whose
//! process was then replaced without a rebalance, so nobody revokes it and rejoins) does not
//! fail liveness; it is measured instead (`withheld` partition-time, [`WithheldMeter`]).
//! Apache Kafka 4.4.0 with the Java client leaves such a partition unowned the same way
//! (docs/chaos.md, "Withheld for good", and `sims/real/static-withheld.toml`).

use model::protocols::classic::GroupState;
use model::{Conn, MemberView, PartState, Probe, Tp, WorldView};
use sim_core::SimTime;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

/// The world between two events, as plain data.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// The time of the event just handled.
    pub now: SimTime,
    /// The coordinator's state.
    pub state: GroupState,
    /// The coordinator's generation.
    pub generation: i32,
    /// The members in the coordinator's group.
    pub group: Vec<Conn>,
    /// Whether a rebalance is still open.
    pub rebalance_open: bool,
    /// Live member processes.
    pub members: Vec<MemberView>,
    /// Every partition: owner in the world's books and access state.
    pub partitions: Vec<(Tp, Option<Conn>, PartState)>,
    /// Partitions the Stable group leaves to no one for good (`WorldView::withheld_for_good`).
    pub withheld: Vec<Tp>,
}

impl Snapshot {
    /// Takes a snapshot of `view`.
    pub fn of(view: &WorldView<'_, '_>) -> Snapshot {
        Snapshot {
            now: view.now(),
            state: view.group_state(),
            generation: view.generation(),
            group: view.group_members(),
            rebalance_open: view.rebalance_open(),
            members: view.members(),
            partitions: view.partitions(),
            withheld: view.withheld_for_good(),
        }
    }

    /// Live members owning `tp`.
    fn holders(&self, tp: Tp) -> Vec<&MemberView> {
        self.members.iter().filter(|m| m.owned.contains(&tp)).collect()
    }

    fn in_group(&self, conn: Conn) -> bool {
        self.group.contains(&conn)
    }

    /// Whether `other` shows the same world, whatever the time.
    pub fn same_state(&self, other: &Snapshot) -> bool {
        self.state == other.state
            && self.generation == other.generation
            && self.rebalance_open == other.rebalance_open
            && self.group == other.group
            && self.members == other.members
            && self.partitions == other.partitions
            && self.withheld == other.withheld
    }
}

/// A broken invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The invariant's name (`exclusive-ownership`, ...).
    pub invariant: &'static str,
    /// What exactly broke.
    pub detail: String,
}

impl Violation {
    fn new(invariant: &'static str, detail: String) -> Violation {
        Violation { invariant, detail }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.invariant, self.detail)
    }
}

/// Names partitions `orders-3` for messages (topics sorted by name, as `Tp::topic` indexes).
#[derive(Clone, Debug, Default)]
pub struct Names {
    /// Topic names, sorted.
    pub topics: Vec<String>,
}

impl Names {
    /// `topic-partition`.
    pub fn tp(&self, tp: Tp) -> String {
        let topic = self.topics.get(tp.topic as usize).map_or("?", String::as_str);
        format!("{topic}-{}", tp.partition)
    }
}

/// `exclusive-ownership`: at most one group member owns each partition.
pub fn check_exclusive(s: &Snapshot, names: &Names) -> Result<(), Violation> {
    for (tp, _, _) in &s.partitions {
        let members: Vec<&MemberView> =
            s.holders(*tp).into_iter().filter(|m| s.in_group(m.conn)).collect();
        for (i, a) in members.iter().enumerate() {
            if let Some(b) =
                members[i + 1..].iter().find(|b| b.owned_generation == a.owned_generation)
            {
                let detail = format!(
                    "partition {} is owned by group members {} and {}, both in generation {} (the coordinator is at {})",
                    names.tp(*tp),
                    a.name,
                    b.name,
                    a.owned_generation,
                    s.generation
                );
                return Err(Violation::new("exclusive-ownership", detail));
            }
        }
    }
    Ok(())
}

/// Whether `m` holds its partitions as a zombie: removed from the group, or still in it with
/// the partitions of a generation older than another holder's (a static member kept without
/// rejoining, KIP-345).
fn stale(s: &Snapshot, m: &MemberView, holders: &[&MemberView]) -> bool {
    !s.in_group(m.conn) || holders.iter().any(|h| h.owned_generation > m.owned_generation)
}

/// Whether the group is settled (module doc); `Err` says why not.
pub fn settled(s: &Snapshot, names: &Names) -> Result<(), String> {
    if s.members.is_empty() {
        return match s.state {
            GroupState::Empty => Ok(()),
            other => Err(format!("no live member but the group is {other:?}")),
        };
    }
    if s.state != GroupState::Stable {
        return Err(format!("the group is {:?} (generation {})", s.state, s.generation));
    }
    if s.rebalance_open {
        return Err("a rebalance is still open".to_string());
    }
    for m in &s.members {
        if !s.in_group(m.conn) {
            return Err(format!("live member {} is not in the group ({:?})", m.name, m.phase));
        }
        if m.paused || m.disconnected {
            return Err(format!("member {} is paused or cut off", m.name));
        }
    }
    for (tp, owner, state) in &s.partitions {
        let holders = s.holders(*tp);
        if holders.is_empty() && s.withheld.contains(tp) {
            continue; // Kafka leaves it to no one too (module doc): measured, not failed.
        }
        if holders.len() != 1 || Some(holders[0].conn) != *owner || *state != PartState::Consuming {
            let who: Vec<&str> = holders.iter().map(|m| m.name.as_str()).collect();
            return Err(format!(
                "partition {} is {} (owned by [{}])",
                names.tp(*tp),
                state.name(),
                who.join(", ")
            ));
        }
    }
    Ok(())
}

/// Time during which zombies (removed members that have not noticed) consume partitions that
/// a group member also owns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZombieMeter {
    /// Partition-time in zombie overlap.
    pub overlap: SimTime,
    /// Maximal overlap intervals, over all partitions.
    pub episodes: u64,
    /// The first episode, described: when, which partition, who holds it.
    pub first: Option<String>,
    since: SimTime,
    overlapped: BTreeSet<Tp>,
}

impl ZombieMeter {
    /// Accounts the time up to `now` with the overlaps of the last snapshot.
    pub fn advance(&mut self, now: SimTime) {
        let elapsed = now.saturating_sub(self.since);
        self.overlap += elapsed * self.overlapped.len() as u64;
        self.since = now;
    }

    /// Accounts the time since the last snapshot, then takes this one's overlaps.
    pub fn update(&mut self, s: &Snapshot) {
        self.advance(s.now);
        let now: BTreeSet<Tp> = s
            .partitions
            .iter()
            .map(|p| p.0)
            .filter(|tp| {
                let consuming: Vec<&MemberView> =
                    s.holders(*tp).into_iter().filter(|m| !m.paused && !m.disconnected).collect();
                consuming.len() > 1 && consuming.iter().any(|m| stale(s, m, &consuming))
            })
            .collect();
        let started: Vec<Tp> = now.difference(&self.overlapped).copied().collect();
        if let (None, Some(tp)) = (&self.first, started.first()) {
            self.first = Some(describe_overlap(s, *tp));
        }
        self.episodes += started.len() as u64;
        self.overlapped = now;
    }
}

/// Partition-time the group left partitions to no one for good (module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WithheldMeter {
    /// Partition-time withheld for good.
    pub partition_time: SimTime,
    /// The first such partition, described: when and which.
    pub first: Option<String>,
    since: SimTime,
    withheld: usize,
}

impl WithheldMeter {
    /// Accounts the time up to `now` with the withheld partitions of the last snapshot.
    pub fn advance(&mut self, now: SimTime) {
        let elapsed = now.saturating_sub(self.since);
        self.partition_time += elapsed * self.withheld as u64;
        self.since = now;
    }

    /// Accounts the time since the last snapshot, then takes this one's withheld partitions.
    pub fn update(&mut self, s: &Snapshot, names: &Names) {
        self.advance(s.now);
        if let (None, Some(tp)) = (&self.first, s.withheld.first()) {
            self.first =
                Some(format!("at {}: {} (generation {})", s.now, names.tp(*tp), s.generation));
        }
        self.withheld = s.withheld.len();
    }
}

/// `at 12s: c1 (not in the group, Stable, generation 1) and c2 (generation 3) own orders-0`.
fn describe_overlap(s: &Snapshot, tp: Tp) -> String {
    let holders: Vec<String> = s
        .holders(tp)
        .into_iter()
        .map(|m| {
            let standing = if s.in_group(m.conn) { "" } else { "not in the group, " };
            format!("{} ({standing}{:?}, generation {})", m.name, m.phase, m.owned_generation)
        })
        .collect();
    format!("at {}: {} own {tp:?}", s.now, holders.join(" and "))
}

/// A bounded ring of the last events' descriptions.
#[derive(Clone, Debug)]
pub struct Ring {
    capacity: usize,
    lines: VecDeque<String>,
}

/// A described event is cut to this many characters.
const EVENT_CHARS: usize = 300;

impl Ring {
    /// Keeps the last `capacity` events.
    pub fn new(capacity: usize) -> Ring {
        Ring { capacity, lines: VecDeque::with_capacity(capacity) }
    }

    fn push(&mut self, line: String) {
        if self.lines.len() == self.capacity {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    /// The events, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.lines.iter().cloned().collect()
    }
}

/// The liveness rule of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Liveness {
    /// When the last fault ends.
    pub horizon: SimTime,
    /// From when the group must stay settled.
    pub deadline: SimTime,
}

/// The probe that checks every invariant after every event of one run.
#[derive(Debug)]
pub struct Checker {
    names: Names,
    liveness: Option<Liveness>,
    event_budget: u64,
    last_generation: i32,
    member_generations: BTreeMap<Conn, i32>,
    /// Zombie overlap measured so far.
    pub zombies: ZombieMeter,
    /// Partition-time withheld for good so far.
    pub withheld: WithheldMeter,
    /// The first broken invariant, when and at which event.
    pub failure: Option<(Violation, SimTime, u64)>,
    /// When the group was last seen becoming settled (reset when it stops being settled).
    pub settled_since: Option<SimTime>,
    /// The time and number of the last event seen.
    pub last: (SimTime, u64),
    ring: Option<Ring>,
    /// Whether the group checks apply (exclusive ownership, zombies, liveness): the classic
    /// protocol's coordinator is the one the snapshot shows.
    group_checks: bool,
    /// The last snapshot that differed from its predecessor, and whether it was settled.
    previous: Option<(Snapshot, Result<(), String>)>,
}

impl Checker {
    /// A checker; `ring` keeps the last events (costs a format per event).
    pub fn new(
        names: Names,
        liveness: Option<Liveness>,
        event_budget: u64,
        ring: Option<Ring>,
    ) -> Checker {
        Checker {
            names,
            liveness,
            event_budget,
            last_generation: 0,
            member_generations: BTreeMap::new(),
            zombies: ZombieMeter::default(),
            withheld: WithheldMeter::default(),
            failure: None,
            settled_since: None,
            last: (SimTime::ZERO, 0),
            ring,
            group_checks: true,
            previous: None,
        }
    }

    /// Turns the group checks off: for protocols whose group the snapshot does not show
    /// (TubeMQ, manual; the snapshot shows the classic coordinator and KIP-848's group).
    pub fn without_group_checks(mut self) -> Checker {
        self.group_checks = false;
        self.liveness = None;
        self
    }

    /// The last events seen, oldest first (empty without a ring).
    pub fn last_events(&self) -> Vec<String> {
        self.ring.as_ref().map(Ring::lines).unwrap_or_default()
    }

    /// Every check on one snapshot. A snapshot that shows the same world as the previous one
    /// (most events: a poll, a batch, a commit) only moves the time-dependent checks on.
    pub fn check(&mut self, s: &Snapshot, events: u64) -> Result<(), Violation> {
        let unchanged = self.previous.as_ref().filter(|(p, _)| p.same_state(s));
        if let Some((_, was_settled)) = unchanged {
            let was_settled = was_settled.clone();
            if self.group_checks {
                self.zombies.advance(s.now);
                self.withheld.advance(s.now);
            }
            self.check_liveness(s.now, was_settled)?;
        } else {
            self.check_generations(s)?;
            if self.group_checks {
                check_exclusive(s, &self.names)?;
                self.zombies.update(s);
                self.withheld.update(s, &self.names);
            }
            let is_settled = settled(s, &self.names);
            self.previous = Some((s.clone(), is_settled.clone()));
            self.check_liveness(s.now, is_settled)?;
        }
        self.check_budget(s, events)
    }

    /// Whether the last snapshot checked showed a new world (the model's own invariants need
    /// re-checking only then).
    pub fn changed_at(&self, now: SimTime) -> bool {
        self.previous.as_ref().is_some_and(|(p, _)| p.now == now)
    }

    fn check_budget(&self, s: &Snapshot, events: u64) -> Result<(), Violation> {
        if events > self.event_budget {
            let detail = format!(
                "{events} events by {} exceed the budget of {}: a livelock?",
                s.now, self.event_budget
            );
            return Err(Violation::new("event-budget", detail));
        }
        Ok(())
    }

    fn check_generations(&mut self, s: &Snapshot) -> Result<(), Violation> {
        if s.generation < self.last_generation {
            let detail = format!(
                "the coordinator's generation went from {} back to {}",
                self.last_generation, s.generation
            );
            return Err(Violation::new("generation-monotonic", detail));
        }
        self.last_generation = s.generation;
        for m in &s.members {
            if m.owned_generation < 0 {
                continue;
            }
            let before = self.member_generations.insert(m.conn, m.owned_generation);
            if let Some(before) = before.filter(|b| *b > m.owned_generation) {
                let detail = format!(
                    "{} owned partitions of generation {before}, then of generation {}",
                    m.name, m.owned_generation
                );
                return Err(Violation::new("generation-monotonic", detail));
            }
        }
        Ok(())
    }

    fn check_liveness(
        &mut self,
        now: SimTime,
        settled: Result<(), String>,
    ) -> Result<(), Violation> {
        let Some(live) = self.liveness else { return Ok(()) };
        if now < live.horizon {
            return Ok(());
        }
        match settled {
            Ok(()) => {
                self.settled_since.get_or_insert(now);
                Ok(())
            }
            Err(why) => {
                self.settled_since = None;
                if now < live.deadline {
                    return Ok(());
                }
                let detail = format!(
                    "the last fault ended at {} and the group must be settled from {} on, but at {now}: {why}",
                    live.horizon, live.deadline
                );
                Err(Violation::new("liveness", detail))
            }
        }
    }
}

/// The model's own facts (`model::invariants`): a broken one is a violation of its name.
fn model_facts(view: &WorldView<'_, '_>) -> Result<(), Violation> {
    match view.broken() {
        Some(b) => Err(Violation::new(b.fact, b.detail)),
        None => Ok(()),
    }
}

impl Probe for Checker {
    fn wants_events(&self) -> bool {
        self.ring.is_some()
    }

    fn before_event(&mut self, now: SimTime, event: &dyn fmt::Debug) {
        if let Some(ring) = self.ring.as_mut() {
            let mut text = format!("{now} {event:?}");
            if text.len() > EVENT_CHARS {
                let mut cut = EVENT_CHARS;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
                text.push_str(" ...");
            }
            ring.push(text);
        }
    }

    fn after_event(&mut self, view: &WorldView<'_, '_>) -> bool {
        self.last = (view.now(), view.events());
        let snapshot = Snapshot::of(view);
        let checked = self.check(&snapshot, view.events()).and_then(|()| {
            if self.changed_at(view.now()) {
                model_facts(view)
            } else {
                Ok(())
            }
        });
        match checked {
            Ok(()) => true,
            Err(v) => {
                self.failure = Some((v, view.now(), view.events()));
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::consumer::Phase;

    fn conn(slot: u32) -> Conn {
        Conn { slot, incarnation: 1 }
    }

    fn tp(partition: u32) -> Tp {
        Tp { topic: 0, partition }
    }

    fn member(slot: u32, owned: &[u32], generation: i32) -> MemberView {
        MemberView {
            name: format!("c{slot}"),
            conn: conn(slot),
            paused: false,
            disconnected: false,
            phase: Phase::Stable,
            owned: owned.iter().map(|p| tp(*p)).collect(),
            owned_generation: generation,
        }
    }

    fn names() -> Names {
        Names { topics: vec!["orders".into()] }
    }

    /// Two members c0 (owns p0) and c1 (owns p1), both in a Stable generation 2.
    fn settled_pair() -> Snapshot {
        Snapshot {
            now: SimTime::from_secs(10),
            state: GroupState::Stable,
            generation: 2,
            group: vec![conn(0), conn(1)],
            rebalance_open: false,
            members: vec![member(0, &[0], 2), member(1, &[1], 2)],
            partitions: vec![
                (tp(0), Some(conn(0)), PartState::Consuming),
                (tp(1), Some(conn(1)), PartState::Consuming),
            ],
            withheld: vec![],
        }
    }

    #[test]
    fn a_settled_pair_passes_every_check() {
        let s = settled_pair();
        assert_eq!(check_exclusive(&s, &names()), Ok(()));
        assert_eq!(settled(&s, &names()), Ok(()));
    }

    #[test]
    fn two_group_members_on_one_partition_break_exclusive_ownership() {
        let mut s = settled_pair();
        s.members[1].owned.push(tp(0));
        let v = check_exclusive(&s, &names()).unwrap_err();
        assert_eq!(v.invariant, "exclusive-ownership");
        assert_eq!(
            v.detail,
            "partition orders-0 is owned by group members c0 and c1, both in generation 2 (the coordinator is at 2)"
        );
        // A group member still on the previous generation (a static member kept without
        // rejoining) is a zombie: measured, not failed.
        s.members[1].owned_generation = 1;
        assert_eq!(check_exclusive(&s, &names()), Ok(()));
        let mut meter = ZombieMeter::default();
        meter.update(&s);
        assert_eq!(meter.episodes, 1);
    }

    #[test]
    fn a_zombie_overlap_is_measured_not_failed() {
        let mut meter = ZombieMeter::default();
        let mut s = settled_pair();
        // c2 was removed from the group (not in `group`) but still consumes p0.
        s.members.push(member(2, &[0], 1));
        assert_eq!(check_exclusive(&s, &names()), Ok(()));
        meter.update(&s); // at 10 s: overlap starts on p0
        s.now = SimTime::from_millis(10_250);
        meter.update(&s); // 250 ms of overlap on one partition
        s.members.pop();
        s.now = SimTime::from_secs(11);
        meter.update(&s); // still 750 ms more (the overlap ends only now)
                          // 250 ms + 750 ms = 1 s of partition-time, in one episode.
        assert_eq!(meter.overlap, SimTime::from_secs(1));
        assert_eq!(meter.episodes, 1);
    }

    /// c1 lost p1 (it owns nothing), the group is Stable: not settled, unless the
    /// coordinator shows p1 withheld for good (Kafka leaves it to no one too), which is then
    /// measured: 10 s to 12.5 s on one partition is 2.5 partition-s.
    #[test]
    fn a_partition_withheld_for_good_is_measured_not_failed() {
        let mut s = settled_pair();
        s.members[1].owned.clear();
        s.partitions[1] = (tp(1), None, PartState::Unassigned);
        assert_eq!(
            settled(&s, &names()),
            Err("partition orders-1 is unassigned (owned by [])".to_string())
        );
        s.withheld = vec![tp(1)];
        assert_eq!(settled(&s, &names()), Ok(()));
        let mut meter = WithheldMeter::default();
        meter.update(&s, &names());
        s.now = SimTime::from_millis(12_500);
        meter.update(&s, &names());
        assert_eq!(meter.partition_time, SimTime::from_millis(2_500));
        assert_eq!(meter.first.as_deref(), Some("at 10s: orders-1 (generation 2)"));
        // A withheld partition someone still holds is checked as any other.
        s.members[0].owned.push(tp(1));
        assert!(settled(&s, &names()).is_err());
    }

    #[test]
    fn a_paused_zombie_does_not_consume() {
        let mut meter = ZombieMeter::default();
        let mut s = settled_pair();
        let mut zombie = member(2, &[0], 1);
        zombie.paused = true;
        s.members.push(zombie);
        meter.update(&s);
        s.now = SimTime::from_secs(20);
        meter.update(&s);
        assert_eq!(meter.overlap, SimTime::ZERO);
        assert_eq!(meter.episodes, 0);
    }

    #[test]
    fn generations_must_not_go_back() {
        let mut checker = Checker::new(names(), None, u64::MAX, None);
        let mut s = settled_pair();
        assert_eq!(checker.check(&s, 1), Ok(()));
        s.members[0].owned_generation = 1;
        s.generation = 2;
        let v = checker.check(&s, 2).unwrap_err();
        assert_eq!(v.detail, "c0 owned partitions of generation 2, then of generation 1");
        let mut checker = Checker::new(names(), None, u64::MAX, None);
        assert_eq!(checker.check(&settled_pair(), 1), Ok(()));
        let mut s = settled_pair();
        s.generation = 1;
        s.members = Vec::new();
        let v = checker.check(&s, 2).unwrap_err();
        assert_eq!(v.detail, "the coordinator's generation went from 2 back to 1");
    }

    #[test]
    fn liveness_fails_only_after_the_deadline_and_names_the_reason() {
        let live = Liveness { horizon: SimTime::from_secs(10), deadline: SimTime::from_secs(20) };
        let mut checker = Checker::new(names(), Some(live), u64::MAX, None);
        let mut s = settled_pair();
        s.state = GroupState::PreparingRebalance;
        s.now = SimTime::from_secs(15);
        assert_eq!(checker.check(&s, 1), Ok(()), "before the deadline");
        s.now = SimTime::from_secs(21);
        let v = checker.check(&s, 2).unwrap_err();
        assert_eq!(v.invariant, "liveness");
        assert!(v.detail.ends_with("at 21s: the group is PreparingRebalance (generation 2)"));
        let mut checker = Checker::new(names(), Some(live), u64::MAX, None);
        let mut s = settled_pair();
        s.now = SimTime::from_secs(12);
        assert_eq!(checker.check(&s, 1), Ok(()));
        assert_eq!(checker.settled_since, Some(SimTime::from_secs(12)));
    }

    #[test]
    fn an_empty_group_is_settled_only_when_empty() {
        let mut s = settled_pair();
        s.members.clear();
        assert!(settled(&s, &names()).is_err());
        s.state = GroupState::Empty;
        assert_eq!(settled(&s, &names()), Ok(()));
    }

    #[test]
    fn the_ring_keeps_the_last_events() {
        let mut checker = Checker::new(names(), None, u64::MAX, Some(Ring::new(2)));
        for i in 0..3u64 {
            checker.before_event(SimTime::from_secs(i), &i);
        }
        assert_eq!(checker.last_events(), vec!["1s 1".to_string(), "2s 2".to_string()]);
    }
}
