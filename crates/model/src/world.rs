//! The world loop: the one place that owns the clock (a `sim_core::EventQueue`), the random
//! streams, the partition logs, the coordinator and the members. It delivers messages one
//! network delay (rtt / 2) after they are sent, fires timers, applies the scenario's events
//! (faults and operations), and turns what the machines report into [`Observation`]s.
//!
//! Lifecycle of a run: topics and members `c0..` are created at t = 0; scenario events are
//! queued at their times; the loop pops events until the end time; batches still in progress
//! at the end report the records finished by then; an [`Observation::End`] closes the run.
//! Pause holds every input of the frozen member until it resumes; disconnect drops messages to
//! and from it; a crash kills the incarnation (its timers and messages are dropped).
//!
//! After every event, debug builds and tests assert the invariants (`check_invariants`).

use crate::consumer::{
    Consumer, ConsumerEnv, ConsumerInput, ConsumerNote, ConsumerOutbox, ConsumerParams,
    ConsumerTimer, LogView, RevokeCause, CONSUMER_TIMER_SLOTS,
};
use crate::latency_counts::LatencyCounts;
use crate::observe::{AccessRef, MemberState, Observation, Observer, PartState};
use crate::ownership::{self, Books, CatchUp};
use crate::processing::{Listing, ProcessingSampler};
use crate::protocols::assigned::world::ExtEv;
use crate::protocols::classic::coordinator::{CoordInput, CoordTimer};
use crate::protocols::classic::metadata::TopicMetadata;
use crate::protocols::kip848::coordinator::{CgInput, CgTimer};
use crate::protocols::Group;
use crate::records::RecordTimes;
use crate::types::{Conn, ToCoordinator, ToMember, Tp};
use crate::workload::{skewed_rates, PartitionLog};
use assignors::Topic;
use scenario::{Arrival, EventKind, ProducerSpec, ProtocolSpec, Scenario};
use sim_core::{EventQueue, RngStreams, SimRng, SimTime, TimerId, RANK_LAST};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

mod member_state;
mod stepper;
mod timing;
mod view;
pub use stepper::CatchUpThreads;
pub(crate) use stepper::Stepper;
pub use stepper::Stepping;
use stepper::{Fast, Plain};
pub use view::{MemberView, NoProbe, Probe, WorldView};

/// At most this many events per run (a bound, not a target: reaching it ends the run).
pub const MAX_EVENTS: u64 = 2_000_000_000;

/// More events than this at one instant can only be a model bug (a loop that never advances
/// time); the run stops with a panic naming the time.
pub const MAX_EVENTS_PER_INSTANT: u64 = 1_000_000;

/// At most this many timeline samples per run.
pub const MAX_SAMPLES: u64 = 2_000;

/// The tables of a sample's trim of the logs ([`World::trim_logs`]), kept from sample to
/// sample so that a sample allocates nothing.
#[derive(Default)]
struct TrimTables {
    /// By topic and partition (the logs' shape): the lowest position of a live member that
    /// owns it, `u64::MAX` if none.
    member_floors: Vec<Vec<u64>>,
    /// Each partition of the books with the offset below which its log is trimmed.
    floors: Vec<(Tp, u64)>,
}

impl TrimTables {
    /// Fills [`TrimTables::member_floors`] from the live members of `slots`, shaped as
    /// `logs`.
    fn gather_member_floors(&mut self, slots: &[Slot], logs: &[Vec<PartitionLog>]) {
        self.member_floors.resize_with(logs.len(), Vec::new);
        for (floors, logs) in self.member_floors.iter_mut().zip(logs) {
            floors.clear();
            floors.resize(logs.len(), u64::MAX);
        }
        for slot in slots {
            let Some(c) = slot.consumer.as_ref().filter(|c| c.alive()) else { continue };
            for (tp, position) in c.owned_positions() {
                let floor = self
                    .member_floors
                    .get_mut(tp.topic as usize)
                    .and_then(|floors| floors.get_mut(tp.partition as usize));
                if let Some(floor) = floor {
                    *floor = (*floor).min(position);
                }
            }
        }
    }

    /// The lowest position of a live member owning `tp` (`u64::MAX` if none).
    fn member_floor(&self, tp: Tp) -> u64 {
        let floors = self.member_floors.get(tp.topic as usize);
        floors.and_then(|f| f.get(tp.partition as usize)).copied().unwrap_or(u64::MAX)
    }
}

/// What a run did, besides its observations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunStats {
    /// Events handled.
    pub events: u64,
    /// Whether the run stopped at the event bound instead of the end time.
    pub hit_event_limit: bool,
    /// Samples (and the end) before which the members' catch-ups were shared out over the
    /// run's threads ([`simulate_on_threads`]; 0 on one thread).
    pub shared_catch_ups: u64,
    /// Heartbeat responses that changed nothing whose wake-up of the member's poll waited
    /// with its steps run aside (fast stepping, `World::defer_wake`; 0 for plain stepping).
    pub deferred_wakes: u64,
}

/// Runs `scenario` under `protocol` with `seed`, reporting every observation to `observer`.
pub fn simulate(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    seed: u64,
    observer: &mut dyn Observer,
) -> RunStats {
    simulate_probed(scenario, protocol, seed, observer, &mut NoProbe)
}

/// [`simulate`] with a [`Probe`] that sees the world after every event and may stop the run
/// (chaos mode's invariant checks). Probing changes nothing in the run.
pub fn simulate_probed(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    seed: u64,
    observer: &mut dyn Observer,
    probe: &mut dyn Probe,
) -> RunStats {
    simulate_stepped(scenario, protocol, seed, Stepping::Fast, observer, probe)
}

/// [`simulate_probed`] with an explicit [`Stepping`] (both give the same observations, except
/// the event count of `End`).
pub fn simulate_stepped(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    seed: u64,
    stepping: Stepping,
    observer: &mut dyn Observer,
    probe: &mut dyn Probe,
) -> RunStats {
    let threads = CatchUpThreads::new(1);
    simulate_on_threads(scenario, protocol, seed, stepping, threads, observer, probe)
}

/// [`simulate_stepped`] on the threads of `threads`: with fast stepping, the members'
/// catch-ups before each sample of a stochastic run are shared out over them when enough
/// members catch up (`world/stepper/parallel.rs`). The observations are the same for any
/// number of threads; the calling thread waits while they work. One thread (or a pool that
/// cannot start) runs everything on the calling thread.
pub fn simulate_on_threads(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    seed: u64,
    stepping: Stepping,
    threads: CatchUpThreads,
    observer: &mut dyn Observer,
    probe: &mut dyn Probe,
) -> RunStats {
    match stepping {
        Stepping::Fast => {
            let mut world = World::<Fast>::new(scenario, protocol, seed, observer);
            world.stepper.share_out_over(threads);
            world.run(probe)
        }
        Stepping::Plain => World::<Plain>::new(scenario, protocol, seed, observer).run(probe),
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Action {
    /// A member's process starts (scheduled at `Timing::start_at` of its moment: t = 0, a
    /// join, a restart; `World::schedule_start`).
    Start(String),
    Crash(String, Option<SimTime>),
    Close(String),
    Pause(String, SimTime),
    Stall(String, SimTime),
    Disconnect(String, SimTime),
    RollingRestart(SimTime, SimTime),
    Scale(u32),
    AddPartitions(usize, u32),
}

#[derive(Clone, Debug)]
pub(crate) enum Ev {
    ToCoord(ToCoordinator),
    CoordTimer(CoordTimer),
    CgTimer(CgTimer),
    ToMember(Conn, ToMember),
    MemberTimer(Conn, ConsumerTimer),
    Action(Action),
    Resume(Conn),
    Reconnect(Conn),
    Sample,
    External(ExtEv),
    /// A member's poll-loop steps kept aside must go back to the queue (`world/stepper`).
    Wake(Conn),
    /// A member's metadata refresh response arrives (`protocols/classic/metadata.rs`).
    Metadata(Conn),
}

/// The partition logs, by topic (sorted by name) and partition.
pub(crate) struct Logs {
    pub(crate) logs: Vec<Vec<PartitionLog>>,
    /// Per topic, while every partition's log is the same constant log (same start and rate:
    /// a topic without skew, no partitions added later), a copy of it: reads go to the copy
    /// and not to the partition's own log (one small log in cache instead of one per
    /// partition).
    shared: Vec<Option<PartitionLog>>,
}

impl Logs {
    /// Empty logs of `topics` topics.
    fn new(topics: usize) -> Logs {
        Logs { logs: vec![Vec::new(); topics], shared: vec![None; topics] }
    }

    /// Appends the log of the next partition of `topic`.
    fn push(&mut self, topic: usize, log: PartitionLog) {
        let shared = &mut self.shared[topic];
        if self.logs[topic].is_empty() {
            *shared = log.arrives_like(&log).then(|| log.clone());
        } else if shared.as_ref().is_some_and(|s| !s.arrives_like(&log)) {
            *shared = None;
        }
        self.logs[topic].push(log);
    }

    /// The log end offsets of every partition at `at`, summed (a topic with a shared log
    /// counts its log end once per partition, without reading the partitions' logs).
    fn log_end_sum(&mut self, at: SimTime) -> u64 {
        self.sum_by_topic(at, |_, logs| PartitionLog::log_end_sum(logs, at))
    }

    /// The log end offsets at `at`, summed over topics: a topic with a shared log counts its
    /// log end once per partition, the others what `unshared(topic, logs)` sums.
    fn sum_by_topic(
        &mut self,
        at: SimTime,
        mut unshared: impl FnMut(usize, &mut [PartitionLog]) -> u64,
    ) -> u64 {
        let topics = self.logs.iter_mut().zip(self.shared.iter_mut()).enumerate();
        topics
            .map(|(topic, (logs, shared))| match shared {
                Some(shared) => shared.log_end(at) * logs.len() as u64,
                None => unshared(topic, logs),
            })
            .sum()
    }
}

/// Partitions' logs found by partition, each read through its [`PartitionLog`]: the world's
/// [`Logs`], and the logs lent to a catch-up on another thread (`stepper/parallel.rs`).
pub(crate) trait LogsByPartition {
    /// The log to read for `tp`.
    fn log(&mut self, tp: Tp) -> &mut PartitionLog;
    /// The log to read for `tp`, the `place`-th partition of the reading member in partition
    /// order ([`LogView::read_listing_at`]).
    #[inline]
    fn log_at(&mut self, tp: Tp, _place: usize) -> &mut PartitionLog {
        self.log(tp)
    }
}

impl LogsByPartition for Logs {
    /// The topic's shared copy when it has one.
    #[inline]
    fn log(&mut self, tp: Tp) -> &mut PartitionLog {
        let (topic, partition) = (tp.topic as usize, tp.partition as usize);
        debug_assert!(partition < self.logs[topic].len(), "a known partition {tp:?}");
        match self.shared[topic].as_mut() {
            Some(shared) => shared,
            None => &mut self.logs[topic][partition],
        }
    }
}

impl<T: LogsByPartition> LogView for T {
    fn log_end(&mut self, tp: Tp, at: SimTime) -> u64 {
        self.log(tp).log_end(at)
    }
    fn arrival(&mut self, tp: Tp, offset: u64) -> SimTime {
        self.log(tp).arrival(offset)
    }
    fn log_end_from(&mut self, tp: Tp, at: SimTime, known: u64) -> u64 {
        self.log(tp).log_end_from(at, known)
    }
    fn exact_spacing(&mut self, tp: Tp, first: u64, count: u64) -> Option<SimTime> {
        self.log(tp).exact_spacing_over(first, count)
    }
    fn arrivals_into(&mut self, tp: Tp, first: u64, count: u64, out: &mut Vec<SimTime>) {
        self.log(tp).arrivals_into(first, count, out)
    }
    fn read_from(&mut self, tp: Tp, at: SimTime, known: u64, max: u64) -> (u64, Option<SimTime>) {
        self.log(tp).read_from(at, known, max)
    }
    fn read_into(
        &mut self,
        tp: Tp,
        (at, known, max): (SimTime, u64, u64),
        out: &mut Vec<SimTime>,
    ) -> (u64, Option<SimTime>) {
        self.log(tp).read_into(at, known, max, out)
    }
    fn read_listing(
        &mut self,
        tp: Tp,
        (at, known, max): (SimTime, u64, u64),
        listing: &mut Listing<'_>,
    ) -> (u64, Option<SimTime>) {
        self.log(tp).read_into(at, known, max, listing)
    }
    fn read_listing_at(
        &mut self,
        tp: Tp,
        place: usize,
        (at, known, max): (SimTime, u64, u64),
        listing: &mut Listing<'_>,
    ) -> (u64, Option<SimTime>) {
        self.log_at(tp, place).read_into(at, known, max, listing)
    }
}

pub(crate) struct Slot {
    pub(crate) name: Arc<str>,
    pub(crate) consumer: Option<Consumer>,
    pub(crate) incarnation: u32,
    rng: SimRng,
    timers: Vec<TimerId>,
    pub(crate) paused: bool,
    held: Vec<ConsumerInput>,
    pub(crate) disconnected: bool,
    restart_pending: bool,
    /// The state last reported for the incarnation (`world/member_state.rs`).
    reported: Option<(u32, MemberState)>,
    /// The end of the incarnation's processing stall (in the past when none).
    stalled_until: SimTime,
    /// The incarnation exited after a graceful close (not a crash).
    exited: bool,
}

impl Slot {
    pub(crate) fn alive(&self) -> bool {
        self.consumer.as_ref().is_some_and(|c| c.alive())
    }
}

pub(crate) struct TopicWorkload {
    rate_per_s: f64,
    skew: f64,
    arrival: Arrival,
    pub(crate) initial: u32,
}

/// The rebalance the observations report as open (classic and KIP-848 groups).
pub(crate) struct OpenRebalance {
    pub(crate) rounds: u32,
    pub(crate) generation: i32,
    pub(crate) pending: BTreeSet<Conn>,
    pub(crate) more_rounds: bool,
}

pub(crate) struct World<'o, S: Stepper> {
    pub(crate) queue: EventQueue<Ev>,
    streams: RngStreams,
    pub(crate) assignor_rng: SimRng,
    pub(crate) topics: Vec<Topic>,
    pub(crate) workloads: Vec<TopicWorkload>,
    sorted_index: Vec<usize>,
    logs: Logs,
    /// The group protocol's side: its coordinator (if any), timers and stores.
    pub(crate) group: Group,
    pub(crate) slots: Vec<Slot>,
    /// The slot of each member name (a name keeps its slot across restarts).
    slot_of: BTreeMap<String, usize>,
    down_waiting: BTreeSet<String>,
    pub(crate) params: ConsumerParams,
    /// Who owns each partition (the only way to change an owner: `crate::ownership`).
    pub(crate) books: Books,
    pub(crate) rebalance: Option<OpenRebalance>,
    pub(crate) last_generation: i32,
    pub(crate) observer: &'o mut dyn Observer,
    pub(crate) one_way: SimTime,
    /// The producers' metadata refresh: when added partitions start to get records.
    producer: ProducerSpec,
    /// When members start, events fall and group-protocol messages arrive (`world/timing`).
    pub(crate) timing: timing::Timing,
    /// Members whose process starts later than its moment: (moment, start) by name.
    launching: BTreeMap<String, (SimTime, SimTime)>,
    end: SimTime,
    sample_every: SimTime,
    /// How the members' poll loops are stepped (`world/stepper`): `Plain` or `Fast`, whose
    /// state this is.
    stepper: S,
    /// Emptied member outboxes kept for reuse (`World::take_outbox`): a poll step fills one,
    /// and reusing its buffers spares their allocations (a delivery can run another member's
    /// steps before its own outbox is drained, so there may be several).
    spare_outboxes: Vec<ConsumerOutbox>,
    /// The sample's trim of the logs' tables, kept from sample to sample
    /// ([`World::trim_logs`]).
    trim: TrimTables,
    /// The buffers a part of three or more records of a batch run aside is listed in for its
    /// report (`BatchTimes::of_part_reusing`).
    spare_times: (Vec<SimTime>, Vec<SimTime>),
    /// The ends of the members' processing stalls (`world/member_state.rs`).
    stall_ends: member_state::StallEnds,
}

impl<'o, S: Stepper> World<'o, S> {
    fn new(
        scenario: &Scenario,
        protocol: ProtocolSpec,
        seed: u64,
        observer: &'o mut dyn Observer,
    ) -> World<'o, S> {
        let streams = RngStreams::new(seed);
        let mut order: Vec<usize> = (0..scenario.topics.len()).collect();
        order.sort_by(|a, b| scenario.topics[*a].name.cmp(&scenario.topics[*b].name));
        let mut sorted_index = vec![0; order.len()];
        for (sorted, original) in order.iter().enumerate() {
            sorted_index[*original] = sorted;
        }
        let topics: Vec<Topic> = order
            .iter()
            .map(|i| Topic { name: scenario.topics[*i].name.clone(), partitions: 0 })
            .collect();
        let workloads = order
            .iter()
            .map(|i| {
                let t = &scenario.topics[*i];
                TopicWorkload {
                    rate_per_s: t.rate_per_s,
                    skew: t.skew,
                    arrival: t.arrival,
                    initial: t.partitions,
                }
            })
            .collect();
        let one_way = SimTime::from_nanos(scenario.network.rtt.as_nanos() / 2);
        let params = consumer_params(scenario, protocol, one_way);
        let samples = scenario.duration.as_nanos().div_ceil(SimTime::from_secs(1).as_nanos());
        let every_s = samples.div_ceil(MAX_SAMPLES).max(1);
        let periodic = scenario.topics.iter().all(|t| t.arrival == Arrival::Constant)
            && matches!(scenario.consumer.processing, scenario::Processing::Constant(_));
        let mut world = World {
            queue: EventQueue::new(),
            assignor_rng: streams.stream("assignor"),
            streams,
            logs: Logs::new(topics.len()),
            topics,
            workloads,
            sorted_index,
            group: Group::new(scenario, protocol, &streams, Vec::new()),
            slots: Vec::new(),
            slot_of: BTreeMap::new(),
            down_waiting: BTreeSet::new(),
            params,
            books: Books::default(),
            rebalance: None,
            last_generation: 0,
            observer,
            one_way,
            producer: scenario.producer,
            timing: timing::Timing::new(scenario.timing, scenario.network, streams),
            launching: BTreeMap::new(),
            end: scenario.duration,
            sample_every: SimTime::from_secs(every_s),
            stepper: S::new(periodic, order.len()),
            spare_outboxes: Vec::new(),
            trim: TrimTables::default(),
            spare_times: (Vec::new(), Vec::new()),
            stall_ends: member_state::StallEnds::default(),
        };
        world.init(scenario, protocol);
        world
    }

    fn init(&mut self, scenario: &Scenario, protocol: ProtocolSpec) {
        for topic in 0..self.topics.len() {
            let count = self.workloads[topic].initial;
            self.grow_topic(SimTime::ZERO, topic, count);
        }
        let streams = &self.streams;
        self.group = Group::new(scenario, protocol, streams, self.partition_counts());
        let names = self.topics.iter().map(|t| t.name.clone()).collect();
        let partitions = self.partition_counts();
        self.observer.observe(Observation::Topics { names, partitions });
        for i in 0..scenario.group.members {
            self.schedule_start(SimTime::ZERO, format!("c{i}"));
        }
        // Jittered events keep their file order: none falls before the one written before it.
        let mut previous = SimTime::ZERO;
        for (index, event) in scenario.events.iter().enumerate() {
            let action = self.action_of(&event.kind);
            let at = self.timing.event_at(index, event.at, self.end).max(previous);
            previous = at;
            match action {
                Action::Start(name) => self.schedule_start(at, name),
                action => self.queue.schedule(at, Ev::Action(action)),
            }
        }
        self.queue.schedule(SimTime::ZERO, Ev::Sample);
        self.group_init();
    }

    pub(crate) fn partition_counts(&self) -> Vec<u32> {
        self.topics.iter().map(|t| t.partitions).collect()
    }

    fn action_of(&self, kind: &EventKind) -> Action {
        match kind.clone() {
            EventKind::Join { member } => Action::Start(member),
            EventKind::Leave { member } => Action::Close(member),
            EventKind::Crash { member, restart_after } => Action::Crash(member, restart_after),
            EventKind::Pause { member, duration } => Action::Pause(member, duration),
            EventKind::Stall { member, duration } => Action::Stall(member, duration),
            EventKind::Disconnect { member, duration } => Action::Disconnect(member, duration),
            EventKind::RollingRestart { interval, downtime } => {
                Action::RollingRestart(interval, downtime)
            }
            EventKind::Scale { members } => Action::Scale(members),
            EventKind::AddPartitions { topic, count } => {
                Action::AddPartitions(self.sorted_index[topic], count)
            }
        }
    }

    /// Adds `count` partitions to sorted topic `topic`, producing from `now` on.
    fn grow_topic(&mut self, now: SimTime, topic: usize, count: u32) {
        let w = &self.workloads[topic];
        let old = self.topics[topic].partitions;
        let total = old + count;
        let rates = skewed_rates(w.rate_per_s, w.initial.max(total), w.skew);
        let arrival = w.arrival;
        for partition in old..total {
            let rate = rates[partition as usize];
            let log = match arrival {
                Arrival::Constant => PartitionLog::constant(now, rate),
                Arrival::Poisson => {
                    let index = self.global_index(topic, partition);
                    PartitionLog::poisson(now, rate, self.streams.indexed("workload", index))
                }
            };
            self.stepper.add_partition(topic, log.exact_spacing());
            self.logs.push(topic, log);
            let tp = Tp { topic: topic as u32, partition };
            self.books.add(tp);
        }
        self.topics[topic].partitions = total;
    }

    /// A stable index of a partition for its random stream: topic index in the high bits.
    fn global_index(&self, topic: usize, partition: u32) -> u64 {
        ((topic as u64) << 32) | u64::from(partition)
    }

    fn run(&mut self, probe: &mut dyn Probe) -> RunStats {
        let mut events = 0u64;
        let mut hit_event_limit = false;
        let mut same_instant = (SimTime::ZERO, 0u64);
        while let Some(t) = self.queue.peek_time() {
            same_instant = if t == same_instant.0 { (t, same_instant.1 + 1) } else { (t, 1) };
            assert!(
                same_instant.1 <= MAX_EVENTS_PER_INSTANT,
                "livelock: more than {MAX_EVENTS_PER_INSTANT} events at {t} (a model bug)"
            );
            if t > self.end {
                break;
            }
            if events >= MAX_EVENTS {
                hit_event_limit = true;
                break;
            }
            let (now, ev) = self.queue.pop().expect("peeked an event");
            events += 1;
            self.end_stalls(now);
            S::before_event(self, &ev);
            if probe.wants_events() {
                probe.before_event(now, &ev);
            }
            self.handle(now, ev);
            self.flush_access(now);
            if !probe.after_event(&WorldView { world: self, now, events }) {
                break;
            }
            if cfg!(any(debug_assertions, test)) {
                self.check_invariants();
            }
        }
        self.finish(events);
        let (shared_catch_ups, deferred_wakes) =
            (S::shared_catch_ups(self), S::deferred_wakes(self));
        RunStats { events, hit_event_limit, shared_catch_ups, deferred_wakes }
    }

    fn finish(&mut self, events: u64) {
        let end = self.end;
        self.end_stalls(end);
        S::before_end(self, end);
        for slot in 0..self.slots.len() {
            let Some(consumer) = self.slots[slot].consumer.as_ref() else { continue };
            if !consumer.alive() {
                continue;
            }
            let conn = consumer.conn();
            let mut out = ConsumerOutbox::default();
            consumer.flush_partial(end, &mut out);
            for note in out.notes {
                self.on_member_note(end, conn, note);
            }
        }
        self.flush_access(end);
        let mut produced = Vec::new();
        for tp in self.books.partitions() {
            produced
                .push((tp, self.logs.logs[tp.topic as usize][tp.partition as usize].log_end(end)));
        }
        self.observer.observe(Observation::End { at: end, produced, events });
    }

    fn handle(&mut self, now: SimTime, ev: Ev) {
        match ev {
            Ev::ToCoord(msg) => self.group_message(now, msg),
            Ev::CgTimer(timer) => self.cg_input(now, CgInput::Timer(timer)),
            Ev::CoordTimer(timer) => self.coord_input(now, CoordInput::Timer(timer)),
            Ev::ToMember(conn, msg) => {
                if !self.cut_off(conn) {
                    self.member_input(now, conn, ConsumerInput::Message(msg));
                }
            }
            Ev::MemberTimer(conn, timer) => {
                self.member_input(now, conn, ConsumerInput::Timer(timer))
            }
            Ev::Action(action) => self.action(now, action),
            Ev::Resume(conn) => self.resume(now, conn),
            Ev::Metadata(conn) => {
                let counts = self.partition_counts();
                self.member_input(now, conn, ConsumerInput::Metadata(counts));
            }
            Ev::Reconnect(conn) => {
                if let Some(slot) = self.live_slot(conn) {
                    self.slots[slot].disconnected = false;
                    self.books.mark_owned_by(conn);
                    self.member_input(now, conn, ConsumerInput::Reconnect);
                    self.report_member_state(now, slot);
                }
            }
            Ev::Sample => self.sample(now),
            Ev::External(ev) => self.ext_event(now, ev),
            Ev::Wake(conn) => S::on_wake(self, now, conn),
        }
    }

    /// True when `conn` is gone or cut off: a message to it is dropped.
    pub(crate) fn cut_off(&self, conn: Conn) -> bool {
        self.live_slot(conn).is_none_or(|slot| self.slots[slot].disconnected)
    }

    /// The slot of `conn` if that incarnation is alive.
    pub(crate) fn live_slot(&self, conn: Conn) -> Option<usize> {
        let slot = self.slots.get(conn.slot as usize)?;
        (slot.incarnation == conn.incarnation && slot.alive()).then_some(conn.slot as usize)
    }

    fn sample(&mut self, now: SimTime) {
        let unreported = S::before_sample(self, now);
        let produced = S::produced(self, now);
        let members = self.group_members();
        self.observer.observe(Observation::Sample { at: now, produced, members, unreported });
        self.trim_logs();
        let next = now + self.sample_every;
        if next <= self.end {
            self.queue.schedule(next, Ev::Sample);
        }
    }

    /// Forgets Poisson arrival times nobody can read again: below the committed offset and
    /// below every live member's position (a new owner starts at the committed offset).
    /// Linear in partitions plus owned partitions (the members' positions are gathered once,
    /// into a table by topic and partition kept from sample to sample: a `BTreeMap` of them
    /// built at each sample was about a fifth of the calling thread's samples in the steady
    /// stochastic hour, docs/performance.md "(19)").
    fn trim_logs(&mut self) {
        if self.workloads.iter().all(|w| w.arrival == Arrival::Constant) {
            return; // Constant logs keep no arrival times.
        }
        let mut trim = std::mem::take(&mut self.trim);
        trim.gather_member_floors(&self.slots, &self.logs.logs);
        trim.floors.clear();
        for tp in self.books.partitions() {
            let committed = self.committed_offset(tp).unwrap_or(0);
            let floor = committed.min(trim.member_floor(tp)).min(self.books.frontier(tp));
            trim.floors.push((tp, floor));
        }
        for &(tp, floor) in &trim.floors {
            self.logs.logs[tp.topic as usize][tp.partition as usize].trim_below(floor);
        }
        self.trim = trim;
    }

    /// Gives `tp` to `owner` (`None`: to no one, in state `cause`), the previous owner caught
    /// up first (`crate::ownership`).
    pub(crate) fn set_owner(&mut self, tp: Tp, owner: Option<Conn>, cause: PartState) {
        ownership::set_owner(self, tp, owner, cause);
    }

    /// Delivers `input` to the live incarnation `conn`, holding it while the member is paused.
    pub(crate) fn member_input(&mut self, now: SimTime, conn: Conn, input: ConsumerInput) {
        let Some(slot) = self.live_slot(conn) else { return };
        if self.slots[slot].paused {
            self.slots[slot].held.push(input);
            return;
        }
        self.deliver(now, slot, input);
    }

    /// Runs the member machine on `input` and applies its outbox.
    fn deliver(&mut self, now: SimTime, slot: usize, input: ConsumerInput) {
        if S::before_input(self, slot, now, &input) {
            return;
        }
        if let ConsumerInput::Stall(by) = &input {
            self.begin_stall(now, slot, *by);
        }
        let mut out = self.take_outbox();
        let Some(conn) = self.run_member(slot, now, input, &mut out) else { return };
        self.apply_member_outbox(now, slot, conn, out);
        S::after_input(self, slot, now);
        self.report_member_state(now, slot);
    }

    /// Runs the machine of the member in `slot` on `input` into `out`, in place (a member
    /// is large: it is not moved out and back); its address, or `None` when the slot holds no
    /// member.
    fn run_member(
        &mut self,
        slot: usize,
        now: SimTime,
        input: ConsumerInput,
        out: &mut ConsumerOutbox,
    ) -> Option<Conn> {
        let World { slots, logs, assignor_rng, topics, .. } = self;
        let s = &mut slots[slot];
        let consumer = s.consumer.as_mut()?;
        let mut env = ConsumerEnv { log: logs, rng: &mut s.rng, assignor_rng, topics };
        consumer.handle(now, input, &mut env, out);
        Some(consumer.conn())
    }

    /// An empty member outbox, with the buffers of one used before if any.
    fn take_outbox(&mut self) -> ConsumerOutbox {
        self.spare_outboxes.pop().unwrap_or_default()
    }

    /// Keeps a drained outbox's buffers for [`World::take_outbox`].
    fn return_outbox(&mut self, out: ConsumerOutbox) {
        debug_assert!(out.sends.is_empty() && out.timers.is_empty() && out.notes.is_empty());
        self.spare_outboxes.push(out);
    }

    fn apply_member_outbox(
        &mut self,
        now: SimTime,
        slot: usize,
        conn: Conn,
        mut out: ConsumerOutbox,
    ) {
        for msg in out.sends.drain(..) {
            let at = self.timing.net.arrival_at_coord(slot, now);
            self.queue.schedule(at, Ev::ToCoord(msg));
        }
        for (timer, at) in out.timers.drain(..) {
            let id = self.slots[slot].timers[timer.slot()];
            // Poll-loop steps rank by slot, ahead of the other events of their instant.
            let rank = if stepper::is_poll_step(timer) { slot as u64 } else { RANK_LAST };
            // A heartbeat due later leaves at the heartbeat thread's first check after it is
            // due (`Timing::heartbeat_at`); one asked for now (an acknowledgement) leaves now.
            let at = match (timer, at) {
                (ConsumerTimer::Heartbeat, Some(due)) if due > now => {
                    Some(self.timing.heartbeat_at(slot, due))
                }
                _ => at,
            };
            match at {
                Some(at) => self.queue.arm_as_of(id, at, rank, now, Ev::MemberTimer(conn, timer)),
                None => self.queue.cancel(id),
            }
        }
        for note in out.notes.drain(..) {
            self.on_member_note(now, conn, note);
        }
        self.return_outbox(out);
        if !self.slots[slot].alive() {
            self.books.mark_owned_by(conn);
        }
    }

    /// Records `first..` of `tp` processed by `conn` (`ConsumerNote::Processed`, a part of
    /// every batch: steps run aside call it directly).
    fn on_processed(&mut self, now: SimTime, conn: Conn, tp: Tp, first: u64, times: &RecordTimes) {
        ownership::record_processed(self, conn, tp, first, times.len(), now);
        self.observer.observe_processed(tp, first, times);
    }

    /// [`World::on_processed`] of listed times lent as two lists of equal length (a
    /// shared-out catch-up's held reports: the observer reads them in place).
    fn on_processed_listed(
        &mut self,
        now: SimTime,
        conn: Conn,
        (tp, first): (Tp, u64),
        arrivals: &[SimTime],
        ends: &[SimTime],
    ) {
        ownership::record_processed(self, conn, tp, first, ends.len() as u64, now);
        self.observer.observe_processed_listed(tp, first, arrivals, ends);
    }

    /// [`World::on_processed_listed`] of records counted ahead (their classes in `counted`,
    /// the largest latency `max_us`: [`Observer::observe_processed_counted`]).
    fn on_processed_counted(
        &mut self,
        now: SimTime,
        conn: Conn,
        (tp, first): (Tp, u64),
        times: (&[SimTime], &[SimTime]),
        (max_us, counted): (u64, &mut LatencyCounts),
    ) {
        ownership::record_processed(self, conn, tp, first, times.1.len() as u64, now);
        self.observer.observe_processed_counted(tp, first, times, max_us, counted);
    }

    fn on_member_note(&mut self, now: SimTime, conn: Conn, note: ConsumerNote) {
        let name = || self.slots[conn.slot as usize].name.to_string();
        match note {
            ConsumerNote::Assigned { owned, generation, rejoining } => {
                for tp in owned {
                    if self.books.owner(tp) != Some(conn) {
                        self.set_owner(tp, Some(conn), PartState::Unassigned);
                    }
                }
                if let Some(r) = self.rebalance.as_mut() {
                    if r.generation == generation {
                        r.pending.remove(&conn);
                        r.more_rounds |= rejoining;
                    }
                }
                self.try_close_rebalance(now);
            }
            ConsumerNote::Revoked { tps, cause } => {
                let state = match cause {
                    RevokeCause::StopTheWorld => PartState::StopTheWorld,
                    RevokeCause::Revoked => PartState::Revoked,
                    RevokeCause::Closed => PartState::Unassigned,
                };
                self.release(conn, &tps, state);
            }
            ConsumerNote::Lost { tps } => self.release(conn, &tps, PartState::Unassigned),
            ConsumerNote::Processed { tp, first, times } => {
                self.on_processed(now, conn, tp, first, &times)
            }
            ConsumerNote::Reset { .. } => {}
            ConsumerNote::Position { tp, at } => {
                self.books.raise_frontier(tp, at);
                self.observer.observe(Observation::Skip { tp, at_offset: at });
            }
            ConsumerNote::Commit { ok } => {
                let member = Arc::clone(&self.slots[conn.slot as usize].name);
                self.observer.observe(Observation::Commit { at: now, member, ok })
            }
            ConsumerNote::MaxPollExpired => {
                let member = name();
                self.observer.observe(Observation::MaxPollExpired { at: now, member })
            }
            ConsumerNote::Released { offsets, wait_until } => {
                self.group_released(now, conn, offsets, wait_until)
            }
            ConsumerNote::Exited => {
                let name = name();
                let slot = conn.slot as usize;
                self.slots[slot].exited = true;
                self.group_member_exited(now, conn);
                if self.slots[slot].restart_pending {
                    self.slots[slot].restart_pending = false;
                    self.queue.schedule(now, Ev::Action(Action::Start(name)));
                }
            }
        }
    }

    fn release(&mut self, conn: Conn, tps: &[Tp], state: PartState) {
        for tp in tps {
            if self.books.owner(*tp) == Some(conn) {
                self.set_owner(*tp, None, state);
            }
        }
    }

    /// Emits an `Access` observation for every partition whose owner or state changed.
    pub(crate) fn flush_access(&mut self, now: SimTime) {
        self.group_before_flush();
        let mut changed = self.books.take_changed();
        for tp in changed.drain(..) {
            let settled = ownership::settle(self, tp, now);
            let state = self.access_state(tp);
            if !self.books.report(tp, (settled.owner, state)) {
                continue;
            }
            let waiting_from = self.logs.arrival(tp, settled.frontier);
            let owner = settled.owner.map(|c| (c.slot, &self.slots[c.slot as usize].name));
            let access = AccessRef { at: now, tp, owner, state, waiting_from };
            self.observer.observe_access(access);
        }
        self.books.return_changed(changed);
    }

    fn access_state(&self, tp: Tp) -> PartState {
        let Some(conn) = self.books.owner(tp) else { return self.books.cause(tp) };
        let slot = &self.slots[conn.slot as usize];
        if slot.incarnation != conn.incarnation || !slot.alive() {
            PartState::OwnerDead
        } else if slot.paused {
            PartState::OwnerPaused
        } else if slot.disconnected {
            PartState::OwnerDisconnected
        } else {
            PartState::Consuming
        }
    }

    fn slot_index(&mut self, name: &str) -> usize {
        if let Some(i) = self.slot_of.get(name) {
            return *i;
        }
        let index = self.slots.len();
        self.slot_of.insert(name.to_string(), index);
        let timers = (0..CONSUMER_TIMER_SLOTS).map(|_| self.queue.new_timer()).collect();
        let wake = self.queue.new_timer();
        self.slots.push(Slot {
            name: name.into(),
            consumer: None,
            incarnation: 0,
            rng: self.streams.indexed("member", index as u64),
            timers,
            paused: false,
            held: Vec::new(),
            disconnected: false,
            restart_pending: false,
            reported: None,
            stalled_until: SimTime::ZERO,
            exited: false,
        });
        self.stepper.add_slot(wake);
        index
    }

    fn find_live(&self, name: &str) -> Option<(usize, Conn)> {
        let i = *self.slot_of.get(name)?;
        let slot = &self.slots[i];
        let conn = slot.consumer.as_ref()?.conn();
        slot.alive().then_some((i, conn))
    }

    fn action(&mut self, now: SimTime, action: Action) {
        if let Some(at) = self.waits_for_launch(now, &action) {
            // The member's process is due but has not started yet: the event finds it just
            // started.
            self.queue.schedule(at, Ev::Action(action));
            return;
        }
        match action {
            Action::Start(name) => self.start(now, &name),
            Action::Crash(name, restart_after) => self.crash(now, &name, restart_after),
            Action::Close(name) => {
                if let Some((_, conn)) = self.find_live(&name) {
                    self.member_input(now, conn, ConsumerInput::Close);
                }
            }
            Action::Pause(name, d) => self.pause(now, &name, d),
            Action::Stall(name, d) => {
                if let Some((_, conn)) = self.find_live(&name) {
                    self.member_input(now, conn, ConsumerInput::Stall(d));
                }
            }
            Action::Disconnect(name, d) => {
                if let Some((slot, conn)) = self.find_live(&name) {
                    self.slots[slot].disconnected = true;
                    self.books.mark_owned_by(conn);
                    self.deliver(now, slot, ConsumerInput::Disconnect);
                    self.queue.schedule(now + d, Ev::Reconnect(conn));
                }
            }
            Action::RollingRestart(interval, downtime) => {
                for (i, name) in self.live_names().into_iter().enumerate() {
                    let at = now + interval * i as u64;
                    self.queue.schedule(at, Ev::Action(Action::Close(name.clone())));
                    self.schedule_start(at + downtime, name);
                }
            }
            Action::Scale(target) => self.scale(now, target),
            Action::AddPartitions(topic, count) => {
                // The producers send to the new partitions from their next metadata refresh.
                self.grow_topic(self.producer.first_refresh_after(now), topic, count);
                let topic_u32 = topic as u32;
                let partitions = self.topics[topic].partitions;
                self.observer.observe(Observation::PartitionsAdded {
                    at: now,
                    topic: topic_u32,
                    partitions,
                });
                self.group_topics_changed(now);
                self.schedule_metadata_refreshes(now);
            }
        }
    }

    /// After partitions were added: each live classic member's next metadata refresh
    /// (`protocols/classic/metadata.rs`; other protocols learn of them otherwise).
    fn schedule_metadata_refreshes(&mut self, now: SimTime) {
        if !matches!(self.group, Group::Classic(_)) {
            return;
        }
        let rtt = self.one_way * 2;
        let (period, client) = (self.params.metadata_refresh, self.params.client);
        for slot in &self.slots {
            let Some(consumer) = slot.consumer.as_ref().filter(|_| slot.alive()) else {
                continue;
            };
            // Java counts from its first metadata response (after its start-up); librdkafka's
            // refresh timer from the client's creation (measured on Apache Kafka 4.4.0:
            // docs/clients.md, "Added partitions").
            let anchor = match client {
                scenario::Client::Java => consumer.started,
                scenario::Client::Librdkafka => consumer.created,
            };
            let at = TopicMetadata::next_refresh_after(now, anchor, period, rtt, client);
            self.queue.schedule(at, Ev::Metadata(consumer.conn()));
        }
    }

    /// When the member an action is for starts, if its moment has come (`now`) but its
    /// process starts later.
    fn waits_for_launch(&self, now: SimTime, action: &Action) -> Option<SimTime> {
        let name = match action {
            Action::Crash(name, _)
            | Action::Close(name)
            | Action::Pause(name, _)
            | Action::Stall(name, _)
            | Action::Disconnect(name, _) => name,
            _ => return None,
        };
        let (moment, at) = *self.launching.get(name)?;
        (moment <= now && now < at && self.find_live(name).is_none()).then_some(at)
    }

    /// Schedules the start of member `name` whose moment is `moment`: at its drawn start
    /// (`Timing::start_at`; the moment itself under exact timing). A member between its moment
    /// and its start counts as present (`scale`) and events for it wait for its start.
    fn schedule_start(&mut self, moment: SimTime, name: String) {
        let at = self.timing.start_at(&name, moment);
        if at > moment {
            self.launching.insert(name.clone(), (moment, at));
        }
        self.queue.schedule(at, Ev::Action(Action::Start(name)));
    }

    /// Starts now the member `name` whose moment is now (a `scale`): at once under exact
    /// timing, else at its drawn start.
    fn start_now_or_later(&mut self, now: SimTime, name: String) {
        if self.timing.varies_starts() {
            self.schedule_start(now, name);
        } else {
            self.start(now, &name);
        }
    }

    /// Live member names in natural order (`c2` before `c10`).
    fn live_names(&self) -> Vec<String> {
        let mut names: Vec<String> =
            self.slots.iter().filter(|s| s.alive()).map(|s| s.name.to_string()).collect();
        names.sort_by(|a, b| scenario::member_order(a, b));
        names
    }

    fn start(&mut self, now: SimTime, name: &str) {
        self.down_waiting.remove(name);
        let moment = self.launching.remove(name).map_or(now, |(moment, _)| moment);
        let slot = self.slot_index(name);
        if self.slots[slot].alive() {
            // Still closing (rolling restart): start once the old process exits.
            self.slots[slot].restart_pending = true;
            return;
        }
        let s = &mut self.slots[slot];
        s.incarnation += 1;
        s.paused = false;
        s.held.clear();
        s.disconnected = false;
        for id in s.timers.clone() {
            self.queue.cancel(id);
        }
        self.stepper.restart(slot);
        self.reset_member_state(slot);
        let conn = Conn { slot: slot as u32, incarnation: self.slots[slot].incarnation };
        let mut consumer = self.new_consumer(conn, name);
        consumer.created = moment.min(now);
        self.slots[slot].consumer = Some(consumer);
        self.deliver(now, slot, ConsumerInput::Start);
        self.group_member_started(now, conn);
    }

    fn crash(&mut self, now: SimTime, name: &str, restart_after: Option<SimTime>) {
        let Some((slot, conn)) = self.find_live(name) else { return };
        self.slots[slot].held.clear();
        self.slots[slot].paused = false;
        self.deliver(now, slot, ConsumerInput::Crash);
        for id in self.slots[slot].timers.clone() {
            self.queue.cancel(id);
        }
        S::on_crash(self, slot);
        self.report_member_state(now, slot);
        self.books.mark_owned_by(conn);
        if let Some(after) = restart_after {
            self.down_waiting.insert(name.to_string());
            self.schedule_start(now + after, name.to_string());
        }
    }

    fn pause(&mut self, now: SimTime, name: &str, d: SimTime) {
        let Some((slot, conn)) = self.find_live(name) else { return };
        if !self.slots[slot].paused {
            self.deliver(now, slot, ConsumerInput::Pause(d));
        }
        self.slots[slot].paused = true;
        self.report_member_state(now, slot);
        S::on_pause(self, slot);
        self.books.mark_owned_by(conn);
        self.queue.schedule(now + d, Ev::Resume(conn));
    }

    fn resume(&mut self, now: SimTime, conn: Conn) {
        let Some(slot) = self.live_slot(conn) else { return };
        if !self.slots[slot].paused {
            return;
        }
        self.slots[slot].paused = false;
        self.report_member_state(now, slot);
        self.books.mark_owned_by(conn);
        let held = std::mem::take(&mut self.slots[slot].held);
        for input in held {
            if self.live_slot(conn).is_none() || self.slots[slot].paused {
                break;
            }
            self.deliver(now, slot, input);
        }
    }

    /// `scale`: the plan of `scenario::scale_plan` (new `cN` names lowest first; graceful
    /// close of the highest names; members down waiting for a restart count as present).
    fn scale(&mut self, now: SimTime, target: u32) {
        let live: BTreeSet<String> = self.live_names().into_iter().collect();
        let mut present = self.down_waiting.clone();
        let due = self.launching.iter().filter(|(_, (moment, _))| *moment <= now);
        present.extend(due.map(|(name, _)| name.clone()));
        let Ok(plan) = scenario::scale_plan(&live, &present, target as usize) else {
            return; // Validation rejects impossible scale events; nothing to do here.
        };
        for name in plan.add {
            self.start_now_or_later(now, name);
        }
        for name in plan.remove {
            if let Some((_, conn)) = self.find_live(&name) {
                self.member_input(now, conn, ConsumerInput::Close);
            }
        }
    }
}

fn consumer_params(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    one_way: SimTime,
) -> ConsumerParams {
    let c = &scenario.consumer.config;
    let params = ConsumerParams {
        mode: crate::protocols::rebalance_mode(protocol.protocol),
        assignor: protocol.assignor,
        client: scenario.consumer.client,
        commit: scenario.consumer.commit,
        enable_auto_commit: c.enable_auto_commit,
        auto_commit_interval: c.auto_commit_interval,
        session_timeout: c.session_timeout,
        heartbeat_interval: c.heartbeat_interval,
        max_poll_interval: c.max_poll_interval,
        max_poll_records: c.max_poll_records.max(1),
        fetch_max_wait: c.fetch_max_wait,
        offset_reset: c.auto_offset_reset,
        one_way,
        processing: ProcessingSampler::new(&scenario.consumer.processing),
        static_membership: protocol.static_membership,
        metadata_refresh: match scenario.consumer.client {
            scenario::Client::Java => c.metadata_max_age,
            scenario::Client::Librdkafka => c.topic_metadata_refresh_interval,
        },
        rebalance_listener: scenario.consumer.rebalance_listener,
        shared_client_id: shared_client_id(scenario),
    };
    crate::protocols::assigned::world::params_for(protocol, params)
}

/// The `client.id` every member has, or `None` when each has its own (its name): `[group]
/// client_ids = "member-name"`, as the project's real-broker harness sets it. Otherwise
/// `[consumer.config] "client.id"` if set, else the client's default: Java
/// `consumer-<group.id>-<n>` (`ConsumerConfig.maybeOverrideClientId`; `n` counts consumers
/// per JVM, 1 for one consumer per process), librdkafka `rdkafka` (`CONFIGURATION.md`). Only
/// its being shared matters to the order (member ids `clientId-UUID`).
fn shared_client_id(scenario: &Scenario) -> Option<String> {
    let config = &scenario.consumer.config;
    match scenario.group.client_ids {
        scenario::ClientIds::MemberName => None,
        scenario::ClientIds::Default => Some(match (&config.client_id, scenario.consumer.client) {
            (Some(id), _) => id.clone(),
            (None, scenario::Client::Librdkafka) => "rdkafka".to_string(),
            (None, scenario::Client::Java) => {
                let group = config.ignored.get("group.id").map_or("group", String::as_str);
                format!("consumer-{group}-1")
            }
        }),
    }
}

/// The catch-up the ownership books ask for before a partition changes (`crate::ownership`):
/// the stepper's.
impl<S: Stepper> CatchUp for World<'_, S> {
    fn books(&mut self) -> &mut Books {
        &mut self.books
    }

    fn now(&self) -> SimTime {
        self.queue.now()
    }

    fn catch_up_owner(&mut self, owner: Conn, now: SimTime) {
        S::catch_up_owner(self, owner, now);
    }

    fn behind(&self, owner: Conn, now: SimTime) -> bool {
        S::behind(self, owner, now)
    }
}
