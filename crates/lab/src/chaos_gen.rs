//! Chaos scenarios: a whole, valid [`Scenario`] derived from one seed alone, and the time
//! facts the liveness check needs (when the last fault ends, how long the group may then take
//! to settle).
//!
//! Everything is drawn from `RngStreams::new(seed).stream("chaos-scenario")`, in a fixed order,
//! so a seed names one scenario for a given version of this file (changing the draws changes
//! which scenario a seed names: old failure seeds are then replayed with the old binary).
//! Scenarios stay small so that a run takes milliseconds: at most [`MAX_MEMBERS`] members at
//! any time, at most [`MAX_PARTITIONS`] partitions (added ones included), at most
//! [`MAX_DURATION`] simulated, a few records per second per partition.
//!
//! Timeouts are drawn inside Kafka's legal ranges and in the relations real deployments keep
//! (heartbeat at most a third of the session, `max.poll.interval.ms` at least the session
//! timeout), so that a liveness failure points at the model, not at a pathological config.

use rand::Rng;
use scenario::{
    default_broker_config, default_consumer_config, default_tubemq, member_order, scale_plan,
    Arrival, Client, ClientIds, CommitPolicy, ConsumerSpec, Event, EventKind, GroupSpec,
    NetworkSpec, OffsetReset, Processing, ProducerSpec, ProtocolSpec, Scenario, TimingSpec,
    TopicSpec,
};
use sim_core::{RngStreams, SimRng, SimTime};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// At most this many members at any time.
pub const MAX_MEMBERS: usize = 8;
/// At most this many partitions over all topics, added ones included.
pub const MAX_PARTITIONS: u32 = 32;
/// At most this much simulated time per scenario.
pub const MAX_DURATION: SimTime = SimTime::from_secs(300);
/// Faults are scheduled in `[0, FAULT_WINDOW)`.
const FAULT_WINDOW: SimTime = SimTime::from_secs(60);
/// At most this many `[[event]]` entries.
const MAX_EVENTS: u32 = 10;
/// Quiet time kept after the liveness deadline, so that "stays settled" is observed.
const TAIL: SimTime = SimTime::from_secs(5);

/// Every protocol spelling chaos runs by default: each protocol and assignor, and `+static`
/// for the Kafka group protocols.
pub fn default_protocols() -> Vec<ProtocolSpec> {
    let names = [
        "eager:range",
        "eager:roundrobin",
        "eager:sticky",
        "cooperative:cooperative-sticky",
        "consumer:uniform",
        "consumer:range",
        "tubemq-server",
        "tubemq-client",
        "manual",
        "eager:range+static",
        "cooperative:cooperative-sticky+static",
        "consumer:uniform+static",
    ];
    names.iter().map(|n| Scenario::parse_protocol(n).expect("a valid protocol name")).collect()
}

/// The scenario of chaos seed `seed`; its run seed is `seed` too.
pub fn generate(seed: u64) -> Scenario {
    let mut rng = RngStreams::new(seed).stream("chaos-scenario");
    let topics = gen_topics(&mut rng);
    let consumer = gen_consumer(&mut rng);
    let mut broker = default_broker_config();
    broker.group_initial_rebalance_delay = SimTime::from_millis(rng.random_range(0..=30) * 100);
    let network = NetworkSpec::with_rtt(SimTime::from_micros(rng.random_range(0..=20) * 500));
    let members = if rng.random_bool(0.05) { 0 } else { rng.random_range(1..=6) };
    let mut scenario = Scenario {
        name: format!("chaos-{seed}"),
        source: PathBuf::new(),
        duration: SimTime::ZERO,
        measure_from: SimTime::ZERO,
        seed,
        protocols: default_protocols(),
        topics,
        consumer,
        broker,
        network,
        producer: ProducerSpec::default(),
        timing: TimingSpec::exact(),
        group: GroupSpec { members, static_membership: false, client_ids: ClientIds::Default },
        events: Vec::new(),
        tubemq: default_tubemq(members),
    };
    scenario.events = gen_events(&mut rng, &scenario);
    gen_timing(seed, &mut scenario);
    gen_metadata_refresh(seed, &mut scenario);
    let settled_by = fault_horizon(&scenario) + liveness_bound(&scenario) + TAIL;
    scenario.duration = SimTime::from_secs(settled_by.as_nanos().div_ceil(1_000_000_000));
    scenario
}

/// The timing variation (docs/timing.md), from a stream of its own so that the scenario
/// itself is the one the seed gave before timing variation existed: exact in one run in
/// five, else a start spread up to 2 s, an event jitter up to 3 s and a network tail up to
/// 10 x the round trip.
fn gen_timing(seed: u64, scenario: &mut Scenario) {
    let mut rng = RngStreams::new(seed).stream("chaos-timing");
    if rng.random_bool(0.2) {
        return;
    }
    scenario.timing = TimingSpec {
        exact: false,
        start_delay: millis(&mut rng, 0, 200),
        start_spread: millis(&mut rng, 0, 2000),
        event_jitter: millis(&mut rng, 0, 3000),
        heartbeat_jitter: millis(&mut rng, 0, 100),
    };
    scenario.network.rtt_p99 = scenario.network.rtt * rng.random_range(1..=10);
}

/// With partitions added, the metadata refresh periods (`protocols/classic/metadata.rs`), from
/// a stream of their own (so the scenario is otherwise the one the seed gave before): the
/// members' and the producers' between 1 s and 60 s, in place of the 5 minute defaults that
/// would leave the new partitions to the end of most runs.
fn gen_metadata_refresh(seed: u64, scenario: &mut Scenario) {
    if !adds_partitions(scenario) {
        return;
    }
    let mut rng = RngStreams::new(seed).stream("chaos-metadata");
    let config = &mut scenario.consumer.config;
    config.metadata_max_age = millis(&mut rng, 1_000, 60_000);
    config.topic_metadata_refresh_interval = millis(&mut rng, 1_000, 60_000);
    scenario.producer.metadata_refresh = millis(&mut rng, 1_000, 60_000);
}

fn adds_partitions(scenario: &Scenario) -> bool {
    scenario.events.iter().any(|e| matches!(e.kind, EventKind::AddPartitions { .. }))
}

fn millis(rng: &mut SimRng, low: u64, high: u64) -> SimTime {
    SimTime::from_millis(rng.random_range(low..=high))
}

fn gen_topics(rng: &mut SimRng) -> Vec<TopicSpec> {
    let count = rng.random_range(1..=2);
    (0..count)
        .map(|i| TopicSpec {
            name: ["orders", "audit"][i].to_string(),
            partitions: rng.random_range(1..=12),
            rate_per_s: f64::from(rng.random_range(1..=40u32)) / 2.0,
            arrival: if rng.random_bool(0.5) { Arrival::Constant } else { Arrival::Poisson },
            skew: if rng.random_bool(0.7) {
                0.0
            } else {
                f64::from(rng.random_range(1..=6u32)) / 4.0
            },
        })
        .collect()
}

fn gen_processing(rng: &mut SimRng) -> Processing {
    let mean = SimTime::from_micros(rng.random_range(1..=40) * 50);
    match rng.random_range(0..3) {
        0 => Processing::Constant(mean),
        1 => Processing::Exponential { mean },
        _ => Processing::Lognormal { mean, p99: mean * rng.random_range(2..=10) },
    }
}

fn gen_consumer(rng: &mut SimRng) -> ConsumerSpec {
    let processing = gen_processing(rng);
    let commit = [CommitPolicy::Auto, CommitPolicy::SyncPerBatch, CommitPolicy::AsyncPerBatch]
        [rng.random_range(0..3)];
    let client = if rng.random_bool(0.5) { Client::Java } else { Client::Librdkafka };
    let mut config = default_consumer_config();
    let session_ms = rng.random_range(6..=25) * 1_000;
    config.session_timeout = SimTime::from_millis(session_ms);
    config.heartbeat_interval = if rng.random_bool(0.5) {
        SimTime::from_millis(session_ms / 3)
    } else {
        millis(rng, 500, session_ms / 3)
    };
    config.max_poll_interval = millis(rng, session_ms, 45_000);
    config.enable_auto_commit = rng.random_bool(0.8);
    config.auto_commit_interval = millis(rng, 500, 5_000);
    config.auto_offset_reset =
        if rng.random_bool(0.5) { OffsetReset::Latest } else { OffsetReset::Earliest };
    config.max_poll_records = rng.random_range(5..=500);
    config.fetch_max_wait = millis(rng, 100, 500);
    // Both listener settings, without a draw of its own (an added draw would change every
    // later parameter of the committed chaos seeds): three runs in four register one.
    let rebalance_listener = !config.max_poll_records.is_multiple_of(4);
    ConsumerSpec { processing, commit, client, rebalance_listener, config }
}

/// Membership while events are drawn or replayed, with the validator's rules
/// (`scenario` crate, `events.rs`): crashed members restart at `at + restart_after`.
#[derive(Clone, Debug, Default)]
pub struct Roster {
    /// Live members.
    pub live: BTreeSet<String>,
    /// Crashed members and when they restart.
    pub down: BTreeMap<String, SimTime>,
}

impl Roster {
    /// The initial members `c0..`.
    pub fn initial(members: u32) -> Roster {
        let live = (0..members).map(scenario::initial_member_name).collect();
        Roster { live, down: BTreeMap::new() }
    }

    /// Restarts crashed members due by `now`.
    pub fn restart_due(&mut self, now: SimTime) {
        let due: Vec<String> =
            self.down.iter().filter(|(_, at)| **at <= now).map(|(n, _)| n.clone()).collect();
        for name in due {
            self.down.remove(&name);
            self.live.insert(name);
        }
    }

    /// Members present (live or waiting for their restart).
    pub fn present(&self) -> usize {
        self.live.len() + self.down.len()
    }

    /// Applies one (valid) event.
    pub fn apply(&mut self, event: &Event) {
        self.restart_due(event.at);
        match &event.kind {
            EventKind::Join { member } => {
                self.live.insert(member.clone());
            }
            EventKind::Leave { member } => {
                self.live.remove(member);
            }
            EventKind::Crash { member, restart_after } => {
                self.live.remove(member);
                if let Some(after) = restart_after {
                    self.down.insert(member.clone(), event.at + *after);
                }
            }
            EventKind::Scale { members } => {
                let down: BTreeSet<String> = self.down.keys().cloned().collect();
                if let Ok(plan) = scale_plan(&self.live, &down, *members as usize) {
                    self.live.extend(plan.add);
                    for name in plan.remove {
                        self.live.remove(&name);
                    }
                }
            }
            _ => {}
        }
    }

    /// The lowest `cN` name neither live nor down.
    fn free_name(&self) -> String {
        (0..)
            .map(scenario::initial_member_name)
            .find(|n| !self.live.contains(n) && !self.down.contains_key(n))
            .expect("a free name")
    }

    fn pick_live(&self, rng: &mut SimRng) -> Option<String> {
        let mut names: Vec<&String> = self.live.iter().collect();
        names.sort_by(|a, b| member_order(a, b));
        if names.is_empty() {
            return None;
        }
        Some(names[rng.random_range(0..names.len())].clone())
    }
}

fn gen_events(rng: &mut SimRng, s: &Scenario) -> Vec<Event> {
    let mut roster = Roster::initial(s.group.members);
    let mut partitions: u32 = s.topics.iter().map(|t| t.partitions).sum();
    let mut events = Vec::new();
    let mut at = millis(rng, 1_000, 10_000);
    let wanted = rng.random_range(0..=MAX_EVENTS);
    let mut rolled = false;
    while events.len() < wanted as usize && at < FAULT_WINDOW {
        roster.restart_due(at);
        let draw = Draw { partitions, rolled, topics: s.topics.len() };
        if let Some(kind) = gen_kind(rng, &roster, &draw) {
            if let EventKind::AddPartitions { count, .. } = kind {
                partitions += count;
            }
            rolled |= matches!(kind, EventKind::RollingRestart { .. });
            let event = Event { at, kind };
            roster.apply(&event);
            events.push(event);
        }
        at += millis(rng, 200, 12_000);
    }
    events
}

/// What the next event may be.
struct Draw {
    partitions: u32,
    rolled: bool,
    topics: usize,
}

/// One event kind that is valid now, or `None` when the drawn kind is not.
fn gen_kind(rng: &mut SimRng, roster: &Roster, draw: &Draw) -> Option<EventKind> {
    let live = roster.live.len();
    Some(match rng.random_range(0..10) {
        0 if roster.present() < MAX_MEMBERS => EventKind::Join { member: roster.free_name() },
        1 if live >= 2 => EventKind::Leave { member: roster.pick_live(rng)? },
        2 | 3 => {
            let member = roster.pick_live(rng)?;
            let restart = live < 2 || rng.random_bool(0.6);
            let restart_after = restart.then(|| millis(rng, 500, 30_000));
            EventKind::Crash { member, restart_after }
        }
        4 => {
            EventKind::Pause { member: roster.pick_live(rng)?, duration: millis(rng, 200, 40_000) }
        }
        5 => {
            EventKind::Stall { member: roster.pick_live(rng)?, duration: millis(rng, 200, 45_000) }
        }
        6 => EventKind::Disconnect {
            member: roster.pick_live(rng)?,
            duration: millis(rng, 200, 40_000),
        },
        7 if !draw.rolled && live >= 1 => EventKind::RollingRestart {
            interval: millis(rng, 500, 8_000),
            downtime: millis(rng, 0, 8_000),
        },
        8 => {
            let target = rng.random_range(1..=MAX_MEMBERS as u32);
            let down: BTreeSet<String> = roster.down.keys().cloned().collect();
            scale_plan(&roster.live, &down, target as usize).ok()?;
            EventKind::Scale { members: target }
        }
        9 if draw.partitions < MAX_PARTITIONS => {
            let room = (MAX_PARTITIONS - draw.partitions).min(8);
            EventKind::AddPartitions {
                topic: rng.random_range(0..draw.topics),
                count: rng.random_range(1..=room),
            }
        }
        _ => return None,
    })
}

/// When the last fault or operation of `scenario` is over: the latest of every event's time,
/// a crash's restart, the end of a pause, stall or disconnect, and the last restart of a
/// rolling restart (`interval` x (live members - 1) + `downtime`).
pub fn fault_horizon(scenario: &Scenario) -> SimTime {
    let mut roster = Roster::initial(scenario.group.members);
    let mut horizon = SimTime::ZERO;
    for event in &scenario.events {
        roster.restart_due(event.at);
        let end = match &event.kind {
            EventKind::Crash { restart_after, .. } => event.at + restart_after.unwrap_or_default(),
            EventKind::Pause { duration, .. }
            | EventKind::Stall { duration, .. }
            | EventKind::Disconnect { duration, .. } => event.at + *duration,
            EventKind::RollingRestart { interval, downtime } => {
                let others = roster.live.len().saturating_sub(1) as u64;
                event.at + *interval * others + *downtime
            }
            _ => event.at,
        };
        horizon = horizon.max(end);
        roster.apply(event);
    }
    let t = &scenario.timing;
    if t.exact {
        return horizon;
    }
    // An event may fall up to its jitter late, and a process starts up to its delay and
    // spread after its moment.
    horizon + t.event_jitter + t.start_delay + t.start_spread
}

/// How long after [`fault_horizon`] the group must be settled (docs/chaos.md):
///
/// `initial delay + session + rebalance timeout + 4 x (heartbeat + its jitter) + 2 x (batch +
///  fetch wait) + 20 x rtt_p99 + 1 s`
///
/// A dead member is evicted at most one session after its last heartbeat; a member that never
/// rejoins is dropped by the rebalance timeout (`max.poll.interval.ms`); the others learn of a
/// rebalance at their next heartbeat and rejoin at their next poll (after the current batch,
/// bounded by `max.poll.records` x 4 x the mean processing time, or after an empty fetch's
/// wait); cooperative needs a second round (another heartbeat and poll); an emptied group
/// waits the initial delay; every step costs a few round trips; 1 s covers scheduling slack.
///
/// With partitions added, a classic group learns of them at its members' next metadata
/// refresh: one refresh period and a round trip more (the larger of the two clients' periods).
///
/// Session and heartbeat are the larger of the classic ones (`session.timeout.ms`,
/// `heartbeat.interval.ms`) and KIP-848's broker-side ones
/// (`group.consumer.session.timeout.ms`, `group.consumer.heartbeat.interval.ms`), so one bound
/// serves every protocol.
pub fn liveness_bound(scenario: &Scenario) -> SimTime {
    let c = &scenario.consumer.config;
    let b = &scenario.broker;
    let batch = scenario.consumer.processing.mean() * (u64::from(c.max_poll_records) * 4);
    let session = c.session_timeout.max(b.group_consumer_session_timeout);
    let heartbeat = c.heartbeat_interval.max(b.group_consumer_heartbeat_interval);
    let refresh = if adds_partitions(scenario) {
        c.metadata_max_age.max(c.topic_metadata_refresh_interval) + scenario.network.rtt_p99
    } else {
        SimTime::ZERO
    };
    scenario.broker.group_initial_rebalance_delay
        + refresh
        + session
        + c.max_poll_interval
        + (heartbeat + scenario.timing.heartbeat_jitter) * 4
        + (batch + c.fetch_max_wait) * 2
        + scenario.network.rtt_p99 * 20
        + SimTime::from_secs(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_scenario() {
        assert_eq!(generate(11), generate(11));
        assert_ne!(generate(11), generate(12));
    }

    #[test]
    fn the_bound_adds_up_its_terms() {
        let mut s = generate(3);
        s.broker.group_initial_rebalance_delay = SimTime::from_millis(3_000);
        s.consumer.config.session_timeout = SimTime::from_secs(10);
        s.consumer.config.max_poll_interval = SimTime::from_secs(20);
        s.consumer.config.heartbeat_interval = SimTime::from_secs(3);
        // KIP-848's broker-side settings, lower here: the classic ones count.
        s.broker.group_consumer_session_timeout = SimTime::from_secs(8);
        s.broker.group_consumer_heartbeat_interval = SimTime::from_secs(2);
        s.consumer.config.max_poll_records = 100;
        s.consumer.config.fetch_max_wait = SimTime::from_millis(500);
        s.consumer.processing = Processing::Constant(SimTime::from_millis(1));
        s.network = NetworkSpec { rtt: SimTime::from_millis(2), rtt_p99: SimTime::from_millis(2) };
        s.timing = TimingSpec::exact();
        // 3 + 10 + 20 + 4 x 3 + 2 x (100 x 4 x 1ms + 0.5) + 20 x 2ms + 1
        // = 3 + 10 + 20 + 12 + 1.8 + 0.04 + 1 = 47.84 s
        assert_eq!(liveness_bound(&s), SimTime::from_millis(47_840));
    }

    #[test]
    fn the_horizon_covers_restarts_and_rolling_restarts() {
        let mut s = generate(3);
        s.group.members = 3;
        s.events = vec![
            Event {
                at: SimTime::from_secs(10),
                kind: EventKind::Crash {
                    member: "c0".into(),
                    restart_after: Some(SimTime::from_secs(30)),
                },
            },
            Event {
                at: SimTime::from_secs(20),
                kind: EventKind::RollingRestart {
                    interval: SimTime::from_secs(4),
                    downtime: SimTime::from_secs(5),
                },
            },
        ];
        // The crash restarts at 40 s. At 20 s two members are live (c0 is down): the rolling
        // restart's last member restarts at 20 + 4 x 1 + 5 = 29 s. The horizon is 40 s.
        assert_eq!(fault_horizon(&s), SimTime::from_secs(40));
        s.events.truncate(1);
        s.events[0].kind =
            EventKind::Pause { member: "c1".into(), duration: SimTime::from_secs(7) };
        assert_eq!(fault_horizon(&s), SimTime::from_secs(17));
    }
}
