//! The TubeMQ master's server-side balance (docs/kafka-facts.md section 8), a sans-IO machine.
//!
//! Follows apache/inlong `tubemq-server/.../master/MasterImpl.java` and `BalancerChore` /
//! `DefaultLoadBalancer` as far as a consumer group sees them:
//! - consumers register and then heartbeat every `heartbeat_interval`; one silent for
//!   `heartbeat_timeout` (`consumerHeartbeatTimeoutMs`) is removed and its partitions are
//!   unowned; a heartbeat from a consumer the master no longer knows is answered "unknown"
//!   (the client drops its partitions and registers again);
//! - the master balances only on its balance tick: the first at `first_balance_delay`
//!   (`firstBalanceDelayAfterStartMs`), then every `balance_period`
//!   (`consumerBalancePeriodMs`). A joining consumer waits for the next tick. The plan is
//!   `assignors::assign` with `AssignorName::Modulo` over the members sorted by id, each owning
//!   its current partitions, with the master's own seeded stream for the random placement of
//!   unowned partitions (TubeMQ seeds it with the wall clock);
//! - the tick queues, per consumer, a *disconnect* event (its registered partitions the plan
//!   gives to someone else) and a *connect* event (what the plan adds). Events travel only in
//!   heartbeat responses (`MasterImpl.consumerHeartbeatC2M`): the head event is pushed in the
//!   response to the consumer's next heartbeat and removed when a later heartbeat reports it
//!   processed; disconnect events go first, and no connect event is pushed while any consumer
//!   of the group still has a disconnect event (`ConsumerEventManager.peek`). A disconnect is
//!   processed once the consumer released its partitions (waiting up to `confirm_wait` for
//!   an in-flight batch); a connect registers the partitions to the consumer at once. A moved
//!   partition therefore waits for up to two heartbeat periods of its old owner plus one of
//!   its new owner.
//!
//! A tick leaves a group alone while events of an earlier plan are still queued
//! (`TMaster.getNeedToBalanceGroupList`; not modeled: TubeMQ drops such events after
//! `MAX_BALANCE_DELAY_TIME` skipped rounds). The rebalance ends when the last event of the
//! plan is pushed (its response reaches the consumer one network delay later).

use crate::invariants::{assert_holds, first_broken, require, Broken, Fact};
use crate::types::{Conn, Outbox, Tp};
use assignors::{AssignorName, GroupInput, Member, Topic};
use sim_core::{SimRng, SimTime};
use std::collections::{BTreeMap, VecDeque};

/// The master's settings (`[tubemq]`).
#[derive(Clone, Copy, Debug)]
pub struct MasterParams {
    /// `consumerBalancePeriodMs`.
    pub balance_period: SimTime,
    /// `firstBalanceDelayAfterStartMs`.
    pub first_balance_delay: SimTime,
    /// `consumerHeartbeatTimeoutMs`.
    pub heartbeat_timeout: SimTime,
}

/// Requests from a consumer to the master.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToMaster {
    /// A consumer (one incarnation of a member) registers.
    Register {
        /// Sender.
        conn: Conn,
        /// Member name.
        name: String,
    },
    /// Heartbeat.
    Heartbeat {
        /// Sender.
        conn: Conn,
    },
    /// Graceful shutdown (`unregister2Master`).
    Unregister {
        /// Sender.
        conn: Conn,
    },
    /// The consumer released these partitions (their offsets are stored at the broker).
    Released {
        /// Sender.
        conn: Conn,
        /// The partitions.
        tps: Vec<Tp>,
    },
}

/// Events from the master to a consumer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FromMaster {
    /// Consume these partitions (the world adds their stored offsets).
    Assign(Vec<Tp>),
    /// Release these partitions.
    Release(Vec<Tp>),
    /// The master does not know this consumer.
    Unknown,
}

/// The master's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MasterTimer {
    /// The balance tick.
    Balance,
    /// The heartbeat timeout of a consumer.
    Expire(Conn),
}

/// Inputs of the master.
#[derive(Clone, Debug)]
pub enum MasterInput {
    /// A request.
    Message(ToMaster),
    /// A timer fired.
    Timer(MasterTimer),
    /// Partitions were added: the new counts of the topics (sorted by name).
    TopicsChanged(Vec<u32>),
}

/// What the master reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MasterNote {
    /// A balance tick changed the plan: a rebalance starts.
    Started {
        /// join, leave, heartbeat-timeout, partitions-added, or balance.
        trigger: &'static str,
    },
    /// Every partition of the plan is registered to its planned owner again.
    Settled {
        /// Members.
        members: u32,
    },
    /// A consumer was removed; its partitions are unowned.
    Removed {
        /// Its address.
        conn: Conn,
        /// The partitions it held.
        tps: Vec<Tp>,
    },
}

/// The master's outbox.
pub type MasterOutbox = Outbox<(Conn, FromMaster), MasterTimer, MasterNote>;

/// Which queue an event comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EventKind {
    Disconnect,
    Connect,
}

/// A consumer's queued events (`ConsumerEventManager`): the head is delivered in a heartbeat
/// response and removed when a later heartbeat reports it processed.
#[derive(Clone, Debug, Default)]
struct Events {
    disconnect: VecDeque<Vec<Tp>>,
    connect: VecDeque<Vec<Tp>>,
    delivered: Option<EventKind>,
}

impl Events {
    fn is_empty(&self) -> bool {
        self.disconnect.is_empty() && self.connect.is_empty()
    }
    /// No event waits to be delivered (a delivered head may wait for its report).
    fn all_delivered(&self) -> bool {
        let undelivered_connects = self.connect.len()
            - usize::from(self.delivered == Some(EventKind::Connect) && !self.connect.is_empty());
        self.disconnect.is_empty() && undelivered_connects == 0
    }
}

/// The master's view of one group.
#[derive(Clone, Debug)]
pub struct TubeMqMaster {
    params: MasterParams,
    members: BTreeMap<Conn, String>,
    events: BTreeMap<Conn, Events>,
    holders: BTreeMap<Tp, Conn>,
    topics: Vec<Topic>,
    trigger: Option<&'static str>,
    open: bool,
}

impl TubeMqMaster {
    /// A master for `topics` (sorted by name); arms the first balance tick.
    pub fn new(params: MasterParams, topics: Vec<Topic>, out: &mut MasterOutbox) -> TubeMqMaster {
        out.arm(MasterTimer::Balance, params.first_balance_delay);
        TubeMqMaster {
            params,
            members: BTreeMap::new(),
            events: BTreeMap::new(),
            holders: BTreeMap::new(),
            topics,
            trigger: None,
            open: false,
        }
    }

    /// Registered consumers.
    pub fn member_count(&self) -> usize {
        self.members.len()
    }

    /// Whether `conn` is a registered consumer.
    pub fn knows(&self, conn: Conn) -> bool {
        self.members.contains_key(&conn)
    }

    /// The consumer a partition is registered to, if any.
    pub fn holder(&self, tp: Tp) -> Option<Conn> {
        self.holders.get(&tp).copied()
    }

    /// Handles one input at `now`.
    pub fn handle(
        &mut self,
        now: SimTime,
        input: MasterInput,
        rng: &mut SimRng,
        out: &mut MasterOutbox,
    ) {
        match input {
            MasterInput::Message(ToMaster::Register { conn, name }) => {
                self.members.insert(conn, name);
                self.events.insert(conn, Events::default());
                self.trigger.get_or_insert("join");
                out.arm(MasterTimer::Expire(conn), now + self.params.heartbeat_timeout);
            }
            MasterInput::Message(ToMaster::Heartbeat { conn }) => {
                if self.members.contains_key(&conn) {
                    out.arm(MasterTimer::Expire(conn), now + self.params.heartbeat_timeout);
                    self.on_heartbeat(conn, out);
                } else {
                    out.send((conn, FromMaster::Unknown));
                }
            }
            MasterInput::Message(ToMaster::Unregister { conn }) => self.remove(conn, "leave", out),
            MasterInput::Message(ToMaster::Released { conn, tps }) => {
                for tp in tps {
                    if self.holders.get(&tp) == Some(&conn) {
                        self.holders.remove(&tp);
                    }
                }
            }
            MasterInput::Timer(MasterTimer::Expire(conn)) => {
                self.remove(conn, "heartbeat-timeout", out)
            }
            MasterInput::Timer(MasterTimer::Balance) => {
                out.arm(MasterTimer::Balance, now + self.params.balance_period);
                self.balance(rng, out);
            }
            MasterInput::TopicsChanged(counts) => {
                for (topic, count) in self.topics.iter_mut().zip(counts) {
                    topic.partitions = count;
                }
                self.trigger.get_or_insert("partitions-added");
            }
        }
    }

    /// `consumerHeartbeatC2M`: remove the delivered event once processed, then push the next
    /// one: disconnect events first, and no connect event while any consumer of the group
    /// still has a disconnect event (`ConsumerEventManager.peek`).
    fn on_heartbeat(&mut self, conn: Conn, out: &mut MasterOutbox) {
        let holders = &self.holders;
        let ev = self.events.get_mut(&conn).expect("a registered consumer has events");
        match ev.delivered {
            Some(EventKind::Disconnect) => {
                let head = ev.disconnect.front().expect("a delivered head");
                if head.iter().all(|tp| holders.get(tp) != Some(&conn)) {
                    ev.disconnect.pop_front();
                    ev.delivered = None;
                }
            }
            Some(EventKind::Connect) => {
                ev.connect.pop_front();
                ev.delivered = None;
            }
            None => {}
        }
        if ev.delivered.is_some() {
            return;
        }
        let group_disconnects = self.events.values().any(|e| !e.disconnect.is_empty());
        let ev = self.events.get_mut(&conn).expect("a registered consumer has events");
        if group_disconnects {
            if let Some(tps) = ev.disconnect.front() {
                ev.delivered = Some(EventKind::Disconnect);
                out.send((conn, FromMaster::Release(tps.clone())));
            }
        } else if let Some(tps) = ev.connect.front() {
            ev.delivered = Some(EventKind::Connect);
            let tps = tps.clone();
            for tp in &tps {
                self.holders.insert(*tp, conn);
            }
            out.send((conn, FromMaster::Assign(tps)));
        }
        self.maybe_settled(out);
    }

    /// Removes a consumer: its partitions and events are dropped; its partitions wait for
    /// the next tick.
    fn remove(&mut self, conn: Conn, trigger: &'static str, out: &mut MasterOutbox) {
        if self.members.remove(&conn).is_none() {
            return;
        }
        self.events.remove(&conn);
        out.cancel(MasterTimer::Expire(conn));
        self.trigger.get_or_insert(trigger);
        let held: Vec<Tp> =
            self.holders.iter().filter(|(_, c)| **c == conn).map(|(tp, _)| *tp).collect();
        for tp in &held {
            self.holders.remove(tp);
        }
        out.note(MasterNote::Removed { conn, tps: held });
        self.maybe_settled(out);
    }

    /// The balance tick: a new plan from the registered partitions; disconnect and connect
    /// events for the difference. A group whose events of an earlier plan are not all
    /// processed is left alone this tick.
    fn balance(&mut self, rng: &mut SimRng, out: &mut MasterOutbox) {
        if self.members.is_empty() || self.events.values().any(|e| !e.is_empty()) {
            return;
        }
        let plan = self.plan_assignment(rng);
        let mut disconnect: BTreeMap<Conn, Vec<Tp>> = BTreeMap::new();
        let mut connect: BTreeMap<Conn, Vec<Tp>> = BTreeMap::new();
        for (tp, holder) in &self.holders {
            if plan.get(tp) != Some(holder) {
                disconnect.entry(*holder).or_default().push(*tp);
            }
        }
        for (tp, owner) in &plan {
            if self.holders.get(tp) != Some(owner) {
                connect.entry(*owner).or_default().push(*tp);
            }
        }
        let trigger = self.trigger.take();
        if disconnect.is_empty() && connect.is_empty() {
            return;
        }
        self.open = true;
        out.note(MasterNote::Started { trigger: trigger.unwrap_or("balance") });
        for (conn, tps) in disconnect {
            self.events.get_mut(&conn).expect("holders are registered").disconnect.push_back(tps);
        }
        for (conn, tps) in connect {
            self.events.get_mut(&conn).expect("the plan names members").connect.push_back(tps);
        }
    }

    /// `assignors::assign(Modulo)` over the members sorted by id, each owning the partitions
    /// registered to it.
    fn plan_assignment(&self, rng: &mut SimRng) -> BTreeMap<Tp, Conn> {
        let conns: Vec<Conn> = self.members.keys().copied().collect();
        let all_topics: Vec<u32> = (0..self.topics.len() as u32).collect();
        let members = conns
            .iter()
            .map(|c| {
                let owned =
                    self.holders.iter().filter(|(_, o)| *o == c).map(|(tp, _)| *tp).collect();
                Member {
                    id: member_id(&self.members[c], *c),
                    topics: all_topics.clone(),
                    owned,
                    ..Member::default()
                }
            })
            .collect();
        let input = GroupInput { topics: self.topics.clone(), members, ..GroupInput::default() };
        let result = assignors::assign(AssignorName::Modulo, &input, rng);
        let mut plan = BTreeMap::new();
        for (conn, tps) in conns.iter().zip(result.partitions) {
            for tp in tps {
                plan.insert(tp, *conn);
            }
        }
        plan
    }

    /// The rebalance is over when every event of its plan was delivered.
    fn maybe_settled(&mut self, out: &mut MasterOutbox) {
        if self.open && self.events.values().all(Events::all_delivered) {
            self.open = false;
            out.note(MasterNote::Settled { members: self.members.len() as u32 });
        }
    }

    /// The master's facts (`crate::invariants`), in the order they are checked.
    pub const FACTS: &'static [Fact<TubeMqMaster>] = &[
        TubeMqMaster::holders_registered,
        TubeMqMaster::events_of_registered,
        TubeMqMaster::delivered_event_queued,
    ];

    /// The first of the master's facts that does not hold.
    pub fn broken(&self) -> Option<Broken> {
        first_broken(self, Self::FACTS)
    }

    /// Asserts the master's facts; the panic names the one that broke.
    pub fn check_invariants(&self) {
        assert_holds(self.broken());
    }

    /// `tubemq_server.holders_registered`: every partition holder is a registered consumer
    /// (each partition has at most one holder: `holders` is a map).
    fn holders_registered(&self) -> Result<(), Broken> {
        for (tp, c) in &self.holders {
            require(self.members.contains_key(c), "tubemq_server.holders_registered", || {
                format!("{tp:?} held by unregistered {c:?}")
            })?;
        }
        Ok(())
    }

    /// `tubemq_server.events_of_registered`: rebalance events are queued for registered
    /// consumers only.
    fn events_of_registered(&self) -> Result<(), Broken> {
        for c in self.events.keys() {
            require(self.members.contains_key(c), "tubemq_server.events_of_registered", || {
                format!("events of unregistered {c:?}")
            })?;
        }
        Ok(())
    }

    /// `tubemq_server.delivered_event_queued`: an event delivered to a consumer is the head of
    /// its queue.
    fn delivered_event_queued(&self) -> Result<(), Broken> {
        for (c, e) in &self.events {
            let head = match e.delivered {
                Some(EventKind::Disconnect) => !e.disconnect.is_empty(),
                Some(EventKind::Connect) => !e.connect.is_empty(),
                None => true,
            };
            require(head, "tubemq_server.delivered_event_queued", || {
                format!("{c:?}: a delivered event that is not queued")
            })?;
        }
        Ok(())
    }
}

/// The consumer id the modulo assignor sorts by: name and incarnation (`c1-2`), like TubeMQ's
/// ids that start with the client's name.
fn member_id(name: &str, conn: Conn) -> String {
    format!("{name}-{}", conn.incarnation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::RngStreams;

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    fn conn(slot: u32) -> Conn {
        Conn { slot, incarnation: 1 }
    }

    fn tp(partition: u32) -> Tp {
        Tp { topic: 0, partition }
    }

    /// A master over one topic of 4 partitions: first tick at 5 s, then every 10 s,
    /// heartbeat timeout 6 s.
    fn master() -> (TubeMqMaster, MasterOutbox, SimRng) {
        let params = MasterParams {
            balance_period: t(10_000),
            first_balance_delay: t(5_000),
            heartbeat_timeout: t(6_000),
        };
        let mut out = MasterOutbox::default();
        let topics = vec![Topic { name: "t".into(), partitions: 4 }];
        let m = TubeMqMaster::new(params, topics, &mut out);
        (m, out, RngStreams::new(1).stream("tubemq-master"))
    }

    fn step(m: &mut TubeMqMaster, rng: &mut SimRng, now: u64, input: MasterInput) -> MasterOutbox {
        let mut out = MasterOutbox::default();
        m.handle(t(now), input, rng, &mut out);
        out
    }

    fn register(slot: u32) -> MasterInput {
        MasterInput::Message(ToMaster::Register { conn: conn(slot), name: format!("c{slot}") })
    }

    fn heartbeat(slot: u32) -> MasterInput {
        MasterInput::Message(ToMaster::Heartbeat { conn: conn(slot) })
    }

    /// c0 and c1 registered at 1 ms, assigned by the first tick and their heartbeats at 6 s
    /// (reported done at 8 s).
    fn stable_pair() -> (TubeMqMaster, SimRng) {
        let (mut m, _, mut rng) = master();
        step(&mut m, &mut rng, 1, register(0));
        step(&mut m, &mut rng, 1, register(1));
        step(&mut m, &mut rng, 5_000, MasterInput::Timer(MasterTimer::Balance));
        for now in [6_000, 8_000] {
            step(&mut m, &mut rng, now, heartbeat(0));
            step(&mut m, &mut rng, now, heartbeat(1));
        }
        (m, rng)
    }

    /// Each of the master's facts names a hand-broken state.
    #[test]
    fn a_broken_state_is_named_by_the_fact_it_breaks() {
        let (m, _) = stable_pair();
        assert_eq!(m.broken(), None);
        let mut stranger = m.clone();
        stranger.holders.insert(tp(0), conn(7));
        let b = stranger.broken().expect("a holder not registered");
        assert_eq!(b.fact, "tubemq_server.holders_registered");
        assert_eq!(b.detail, format!("{:?} held by unregistered {:?}", tp(0), conn(7)));
        let mut queued = m.clone();
        queued.events.insert(conn(7), Events::default());
        let b = queued.broken().expect("events of a stranger");
        assert_eq!(b.fact, "tubemq_server.events_of_registered");
        let mut phantom = m.clone();
        let events = phantom.events.entry(conn(0)).or_default();
        events.connect.clear();
        events.delivered = Some(EventKind::Connect);
        let b = phantom.broken().expect("a delivered event not queued");
        assert_eq!(b.fact, "tubemq_server.delivered_event_queued");
        assert_eq!(b.detail, format!("{:?}: a delivered event that is not queued", conn(0)));
    }

    #[test]
    fn the_first_tick_splits_in_ranges_pushed_with_the_next_heartbeats() {
        let (mut m, out, mut rng) = master();
        assert_eq!(out.timers, vec![(MasterTimer::Balance, Some(t(5_000)))]);
        let out = step(&mut m, &mut rng, 1, register(0));
        // Registration arms the heartbeat timeout and assigns nothing.
        assert!(out.sends.is_empty());
        assert_eq!(out.timers, vec![(MasterTimer::Expire(conn(0)), Some(t(6_001)))]);
        step(&mut m, &mut rng, 1, register(1));
        let out = step(&mut m, &mut rng, 5_000, MasterInput::Timer(MasterTimer::Balance));
        // The tick only queues events.
        assert!(out.sends.is_empty());
        assert_eq!(out.notes, vec![MasterNote::Started { trigger: "join" }]);
        assert_eq!(out.timers, vec![(MasterTimer::Balance, Some(t(15_000)))]);
        // Ranges over c0-1, c1-1: 0-1 and 2-3, each in the response to the next heartbeat.
        let out = step(&mut m, &mut rng, 6_000, heartbeat(0));
        assert_eq!(out.sends, vec![(conn(0), FromMaster::Assign(vec![tp(0), tp(1)]))]);
        assert!(out.notes.is_empty());
        let out = step(&mut m, &mut rng, 6_000, heartbeat(1));
        assert_eq!(out.sends, vec![(conn(1), FromMaster::Assign(vec![tp(2), tp(3)]))]);
        assert_eq!(out.notes, vec![MasterNote::Settled { members: 2 }]);
        m.check_invariants();
    }

    #[test]
    fn a_connect_waits_until_every_disconnect_of_the_group_is_reported() {
        let (mut m, mut rng) = stable_pair();
        step(&mut m, &mut rng, 9_000, register(2));
        // 4 over 3: c0-1 keeps 2 (the one member allowed max), c1-1 sheds t-2 to c2-1.
        step(&mut m, &mut rng, 15_000, MasterInput::Timer(MasterTimer::Balance));
        // c2 asks first: a disconnect is pending in the group, nothing for it yet.
        assert!(step(&mut m, &mut rng, 15_500, heartbeat(2)).sends.is_empty());
        let out = step(&mut m, &mut rng, 16_000, heartbeat(1));
        assert_eq!(out.sends, vec![(conn(1), FromMaster::Release(vec![tp(2)]))]);
        let released = ToMaster::Released { conn: conn(1), tps: vec![tp(2)] };
        step(&mut m, &mut rng, 16_002, MasterInput::Message(released));
        assert_eq!(m.holder(tp(2)), None);
        // Released, but not reported yet: c2 still waits.
        assert!(step(&mut m, &mut rng, 17_000, heartbeat(2)).sends.is_empty());
        // c1's next heartbeat reports the event done; then c2 gets the connect event.
        assert!(step(&mut m, &mut rng, 18_000, heartbeat(1)).sends.is_empty());
        let out = step(&mut m, &mut rng, 19_000, heartbeat(2));
        assert_eq!(out.sends, vec![(conn(2), FromMaster::Assign(vec![tp(2)]))]);
        assert_eq!(out.notes, vec![MasterNote::Settled { members: 3 }]);
        assert_eq!(m.holder(tp(2)), Some(conn(2)));
        m.check_invariants();
    }

    #[test]
    fn silence_removes_a_consumer_and_unknown_heartbeats_are_answered() {
        let (mut m, mut rng) = stable_pair();
        let out = step(&mut m, &mut rng, 14_000, MasterInput::Timer(MasterTimer::Expire(conn(1))));
        assert_eq!(out.notes, vec![MasterNote::Removed { conn: conn(1), tps: vec![tp(2), tp(3)] }]);
        assert_eq!((m.member_count(), m.holder(tp(2))), (1, None));
        let out = step(&mut m, &mut rng, 14_500, heartbeat(1));
        assert_eq!(out.sends, vec![(conn(1), FromMaster::Unknown)]);
        // The next tick places the unowned partitions on the only member.
        let out = step(&mut m, &mut rng, 15_000, MasterInput::Timer(MasterTimer::Balance));
        assert_eq!(out.notes, vec![MasterNote::Started { trigger: "heartbeat-timeout" }]);
        let out = step(&mut m, &mut rng, 16_000, heartbeat(0));
        assert_eq!(out.sends, vec![(conn(0), FromMaster::Assign(vec![tp(2), tp(3)]))]);
    }
}
