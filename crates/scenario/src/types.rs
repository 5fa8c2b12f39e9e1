//! The validated scenario: typed structures every later crate consumes without re-checking.
//!
//! Parsing (`crate::load`) turns a TOML file into these types or into a list of
//! [`crate::ScenarioError`]s. Once a `Scenario` exists, its invariants hold: times are
//! non-negative, `heartbeat_interval < session_timeout`, every event names a member that exists
//! at that moment, every event lies inside the run, topics have at least one partition, and all
//! Kafka properties carry the Java client's / Apache Kafka's defaults where unset.

use assignors::AssignorName;
use sim_core::SimTime;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// One validated scenario file.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// `name`: also the default output folder `results/<name>/`.
    pub name: String,
    /// The file it was read from (for messages and manifests); empty for built scenarios.
    pub source: PathBuf,
    /// `duration`: the run ends at this virtual time.
    pub duration: SimTime,
    /// `measure_from`: the start of the measurement window `[measure_from, duration]` of the
    /// availability and rebalance metrics (0: the whole run); what falls before it is reported
    /// apart as the start-up.
    pub measure_from: SimTime,
    /// `seed`: the run seed (overridable by `--seed`).
    pub seed: u64,
    /// `protocols`: one run per entry, in file order.
    pub protocols: Vec<ProtocolSpec>,
    /// `[[topic]]` entries, in file order. Every member subscribes to every topic.
    pub topics: Vec<TopicSpec>,
    /// `[consumer]`.
    pub consumer: ConsumerSpec,
    /// `[broker.config]`.
    pub broker: BrokerConfig,
    /// `[network]`.
    pub network: NetworkSpec,
    /// `[producer]`.
    pub producer: ProducerSpec,
    /// `[timing]`: the seeded variation of when things happen.
    pub timing: TimingSpec,
    /// `[group]`.
    pub group: GroupSpec,
    /// `[[event]]` entries sorted by `at` (stable: equal times keep file order).
    pub events: Vec<Event>,
    /// `[tubemq]`: used by the TubeMQ protocols only.
    pub tubemq: TubeMqSpec,
}

/// Which group protocol a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Protocol {
    /// Classic protocol, eager rebalancing (range, roundrobin, sticky).
    Eager,
    /// Classic protocol, cooperative incremental rebalancing (KIP-429).
    Cooperative,
    /// The KIP-848 consumer protocol (`group.protocol=consumer`).
    Consumer,
    /// TubeMQ with the master balancing every balance period.
    TubemqServer,
    /// TubeMQ with client-side `hash % sourceCount == nodeId` balancing.
    TubemqClient,
    /// `assign()` with no group at all.
    Manual,
}

impl Protocol {
    /// The name used on the command line, in scenario files and in CSV.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Eager => "eager",
            Protocol::Cooperative => "cooperative",
            Protocol::Consumer => "consumer",
            Protocol::TubemqServer => "tubemq-server",
            Protocol::TubemqClient => "tubemq-client",
            Protocol::Manual => "manual",
        }
    }
}

/// One `protocols` entry: `protocol[:assignor][+static]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProtocolSpec {
    /// The protocol.
    pub protocol: Protocol,
    /// The assignor (defaulted per DESIGN section 6 when left out).
    pub assignor: AssignorName,
    /// `+static` or `[group] static_membership = true`.
    pub static_membership: bool,
}

impl fmt::Display for ProtocolSpec {
    /// `eager:range`, `cooperative:cooperative-sticky+static`, `manual:none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.protocol.name(), self.assignor.name())?;
        if self.static_membership {
            f.write_str("+static")?;
        }
        Ok(())
    }
}

/// A `[[topic]]`.
#[derive(Clone, Debug, PartialEq)]
pub struct TopicSpec {
    /// Topic name (unique in the scenario).
    pub name: String,
    /// Partitions at the start (>= 1).
    pub partitions: u32,
    /// Mean records/s per partition (>= 0).
    pub rate_per_s: f64,
    /// Arrival process.
    pub arrival: Arrival,
    /// Zipf exponent over the partitions (>= 0; 0 = all alike). Partition `i` (0-based) gets a
    /// rate proportional to `1 / (i + 1)^skew`, normalised so the mean stays `rate_per_s`.
    pub skew: f64,
}

/// How records arrive on a partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Evenly spaced: exactly `rate` records per second.
    Constant,
    /// A Poisson process with mean `rate`.
    Poisson,
}

/// `[consumer]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerSpec {
    /// Per-record processing time.
    pub processing: Processing,
    /// Commit policy.
    pub commit: CommitPolicy,
    /// Whose behaviour to model where the real clients differ.
    pub client: Client,
    /// `rebalance_listener`: the application registers a `ConsumerRebalanceListener` (default
    /// true, as Spring Kafka and Kafka Streams always do). A Java member under the consumer
    /// protocol (KIP-848) then completes each reconciliation at its next poll, where AK runs
    /// the callbacks (docs/clients.md).
    pub rebalance_listener: bool,
    /// `[consumer.config]`, defaults filled in.
    pub config: ConsumerConfig,
}

/// Per-record processing time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Processing {
    /// Every record takes exactly this long.
    Constant(SimTime),
    /// Lognormal with this mean and 99th percentile (`p99 > mean`).
    Lognormal {
        /// Mean.
        mean: SimTime,
        /// 99th percentile.
        p99: SimTime,
    },
    /// Exponential with this mean.
    Exponential {
        /// Mean.
        mean: SimTime,
    },
}

impl Processing {
    /// The mean processing time per record.
    pub fn mean(&self) -> SimTime {
        match *self {
            Processing::Constant(t) => t,
            Processing::Lognormal { mean, .. } | Processing::Exponential { mean } => mean,
        }
    }
}

/// How consumed positions are committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitPolicy {
    /// `enable.auto.commit` with `auto.commit.interval.ms` (and before revocation).
    Auto,
    /// `commitSync()` after every processed batch.
    SyncPerBatch,
    /// `commitAsync()` after every processed batch.
    AsyncPerBatch,
}

/// Which real client's behaviour is modeled (docs/kafka-facts.md section 10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    /// The Java `KafkaConsumer` (default).
    Java,
    /// librdkafka (confluent-kafka-python/go/.NET).
    Librdkafka,
}

/// `auto.offset.reset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetReset {
    /// Start from the log end: records before the first fetch are lost (`latest`/`largest`).
    Latest,
    /// Start from the log start (`earliest`/`smallest`).
    Earliest,
    /// Fail: the member cannot consume the partition (`none`/`error`).
    None,
}

/// `[consumer.config]`: the consumer properties the model uses, defaults filled in.
#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerConfig {
    /// `session.timeout.ms` (default 45000).
    pub session_timeout: SimTime,
    /// `heartbeat.interval.ms` (default 3000).
    pub heartbeat_interval: SimTime,
    /// `max.poll.interval.ms` (default 300000); also the rebalance timeout.
    pub max_poll_interval: SimTime,
    /// `enable.auto.commit` (default true).
    pub enable_auto_commit: bool,
    /// `auto.commit.interval.ms` (default 5000).
    pub auto_commit_interval: SimTime,
    /// `auto.offset.reset` (default latest).
    pub auto_offset_reset: OffsetReset,
    /// `max.poll.records` (default 500).
    pub max_poll_records: u32,
    /// `fetch.max.wait.ms` (default 500): how long an empty fetch waits at the broker.
    pub fetch_max_wait: SimTime,
    /// `request.timeout.ms` (default 30000).
    pub request_timeout: SimTime,
    /// `retry.backoff.ms` (default 100).
    pub retry_backoff: SimTime,
    /// Java's `metadata.max.age.ms` (default 300000): a Java member refreshes its topic
    /// metadata this long after the last refresh; the leader sees added partitions then.
    pub metadata_max_age: SimTime,
    /// librdkafka's `topic.metadata.refresh.interval.ms` (default 300000): a librdkafka
    /// member's metadata refresh period, from the client's creation.
    pub topic_metadata_refresh_interval: SimTime,
    /// `client.id` when set: one client id for every member (so member ids order by the
    /// coordinator's UUID, as with `[group] client_ids = "default"`).
    pub client_id: Option<String>,
    /// Recognised Kafka properties that the model does not use, with their values as written
    /// (kept so output manifests can echo the user's config).
    pub ignored: BTreeMap<String, String>,
}

/// `[broker.config]`: the broker properties the model uses, defaults filled in.
#[derive(Clone, Debug, PartialEq)]
pub struct BrokerConfig {
    /// `group.initial.rebalance.delay.ms` (default 3000).
    pub group_initial_rebalance_delay: SimTime,
    /// `group.min.session.timeout.ms` (default 6000).
    pub group_min_session_timeout: SimTime,
    /// `group.max.session.timeout.ms` (default 1800000).
    pub group_max_session_timeout: SimTime,
    /// `group.consumer.session.timeout.ms` (default 45000), KIP-848.
    pub group_consumer_session_timeout: SimTime,
    /// `group.consumer.heartbeat.interval.ms` (default 5000), KIP-848.
    pub group_consumer_heartbeat_interval: SimTime,
    /// Recognised broker properties the model does not use.
    pub ignored: BTreeMap<String, String>,
}

/// `[producer]`: what the model needs to know of the application's producers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProducerSpec {
    /// `metadata_refresh`: how often the producers refresh their topic metadata, from t = 0
    /// (Java producer `metadata.max.age.ms`, librdkafka `topic.metadata.refresh.interval.ms`,
    /// both 300000 by default). Records arrive on added partitions from the producers' first
    /// refresh after the partitions were added: a producer sends only to partitions it knows
    /// (Java `DefaultPartitioner` / `BuiltInPartitioner` over `cluster.partitionsForTopic`,
    /// librdkafka `rd_kafka_msg_partitioner` over `rkt_partition_cnt`).
    pub metadata_refresh: SimTime,
}

impl Default for ProducerSpec {
    fn default() -> ProducerSpec {
        ProducerSpec { metadata_refresh: SimTime::from_secs(300) }
    }
}

impl ProducerSpec {
    /// The first refresh strictly after `at`: `k x metadata_refresh` for the least such `k`.
    pub fn first_refresh_after(&self, at: SimTime) -> SimTime {
        let period = self.metadata_refresh.as_nanos().max(1);
        let k = at.as_nanos() / period + 1;
        SimTime::from_nanos(k.saturating_mul(period))
    }
}

/// `[network]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkSpec {
    /// Round trip between a member and the coordinator or brokers (default 1ms): with varied
    /// timing the median of a round trip, each one-way hop's median being `rtt / 2`.
    pub rtt: SimTime,
    /// `rtt_p99`: the tail of the group protocol's messages under varied timing; each one-way
    /// hop is lognormal with median `rtt / 2` and 99th percentile `rtt_p99 / 2` (default
    /// [`NetworkSpec::DEFAULT_P99_OVER_MEDIAN`] x `rtt`; equal to `rtt`: no variation).
    pub rtt_p99: SimTime,
}

impl NetworkSpec {
    /// The default tail, p99 over median of a round trip: measured on loopback TCP here
    /// (docs/timing.md: 20,000 round trips, p50 13 us, p99 56 us, 4.3x), rounded down.
    pub const DEFAULT_P99_OVER_MEDIAN: u64 = 4;
    /// The largest `rtt_p99 / rtt` accepted (a heavier tail is a partition, not a delay).
    pub const MAX_P99_OVER_MEDIAN: u64 = 100;

    /// A network of round trip `rtt` with the default tail.
    pub fn with_rtt(rtt: SimTime) -> NetworkSpec {
        NetworkSpec { rtt, rtt_p99: rtt * Self::DEFAULT_P99_OVER_MEDIAN }
    }
}

/// `[timing]`: the seeded variation of when things happen, each drawn from its own named
/// stream (docs/timing.md). With `exact = true` none of it applies: every member starts at its
/// moment, every event falls at its `at`, every hop takes `rtt / 2` (the lock-step of
/// hand-derived tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimingSpec {
    /// `exact`: lock-step timing (default false).
    pub exact: bool,
    /// `start_delay`: the fixed part of a member process's start-up, from its moment (t = 0, a
    /// join, a restart) to its first request (default 0).
    pub start_delay: SimTime,
    /// `start_spread`: a member process starts uniformly within this after `start_delay`.
    pub start_spread: SimTime,
    /// `event_jitter`: a scripted event falls uniformly within this after its `at` (default:
    /// the consumers' `heartbeat.interval.ms`, so its phase against the heartbeats is uniform).
    pub event_jitter: SimTime,
    /// `heartbeat_jitter`: each heartbeat leaves uniformly within this after its timer expires
    /// (AK `AbstractCoordinator.HeartbeatThread.run` sends at its first check after expiry and
    /// `Heartbeat.sentHeartbeat` restarts the interval from the send, so members' heartbeat
    /// phases drift apart; default [`TimingSpec::DEFAULT_HEARTBEAT_JITTER`]).
    pub heartbeat_jitter: SimTime,
}

impl TimingSpec {
    /// The default start spread (docs/timing.md: measured on the real broker).
    pub const DEFAULT_START_SPREAD: SimTime = SimTime::from_millis(500);
    /// The default heartbeat send delay (docs/timing.md: measured on the real broker).
    pub const DEFAULT_HEARTBEAT_JITTER: SimTime = SimTime::from_millis(50);

    /// Lock-step timing.
    pub fn exact() -> TimingSpec {
        TimingSpec {
            exact: true,
            start_delay: SimTime::ZERO,
            start_spread: SimTime::ZERO,
            event_jitter: SimTime::ZERO,
            heartbeat_jitter: SimTime::ZERO,
        }
    }

    /// The defaults of a group whose consumers heartbeat every `heartbeat_interval`.
    pub fn varied(heartbeat_interval: SimTime) -> TimingSpec {
        TimingSpec {
            exact: false,
            start_delay: SimTime::ZERO,
            start_spread: Self::DEFAULT_START_SPREAD,
            event_jitter: heartbeat_interval,
            heartbeat_jitter: Self::DEFAULT_HEARTBEAT_JITTER,
        }
    }

    /// Whether anything varies.
    pub fn varies(&self) -> bool {
        !self.exact
            && (self.start_spread > SimTime::ZERO
                || self.event_jitter > SimTime::ZERO
                || self.start_delay > SimTime::ZERO
                || self.heartbeat_jitter > SimTime::ZERO)
    }
}

/// `[group]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupSpec {
    /// Members `c0..c{members-1}` start at t = 0.
    pub members: u32,
    /// Static membership for every protocol of the file.
    pub static_membership: bool,
    /// The client ids the members use (`client_ids`, default [`ClientIds::Default`]).
    pub client_ids: ClientIds,
}

/// `[group] client_ids`: which `client.id` the members' consumers carry. The classic
/// coordinator names a new member `clientId-UUID` (AK `ClassicGroup.generateMemberId`), and
/// the classic range and roundrobin assignors order dynamic members by member id
/// (`AbstractPartitionAssignor.MemberInfo.compareTo`), so this decides the members' order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClientIds {
    /// `"default"`: every member has the same client id (the client's default, Java
    /// `consumer-<group.id>-<n>` with a per-JVM counter, librdkafka `rdkafka`, or
    /// `[consumer.config] "client.id"` when set), so the coordinator's random UUID alone
    /// orders the members, and a restarted member takes a new place.
    #[default]
    Default,
    /// `"member-name"`: each member's client id is its name (`c0`, `c1`, ...), as the
    /// project's real-broker harness sets it: members order by name.
    MemberName,
}

impl ClientIds {
    /// The scenario-file values, in the order of the variants.
    pub const NAMES: [&'static str; 2] = ["default", "member-name"];

    /// The scenario-file value.
    pub fn name(self) -> &'static str {
        match self {
            ClientIds::Default => Self::NAMES[0],
            ClientIds::MemberName => Self::NAMES[1],
        }
    }
}

/// One `[[event]]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// When it happens.
    pub at: SimTime,
    /// What happens.
    pub kind: EventKind,
}

/// The event kinds of DESIGN section 7.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    /// A new member starts and joins.
    Join {
        /// Its name (new at that time).
        member: String,
    },
    /// Graceful close: commit, LeaveGroup (static members send none).
    Leave {
        /// A live member.
        member: String,
    },
    /// The process dies: no commit, no leave.
    Crash {
        /// A live member.
        member: String,
        /// Restarts with the same name after this long.
        restart_after: Option<SimTime>,
    },
    /// The whole process is frozen: no heartbeats, no polls.
    Pause {
        /// A live member.
        member: String,
        /// How long.
        duration: SimTime,
    },
    /// The current batch takes `duration` longer: no polls, heartbeats continue.
    Stall {
        /// A live member.
        member: String,
        /// How long.
        duration: SimTime,
    },
    /// The member cannot reach the coordinator or brokers.
    Disconnect {
        /// A live member.
        member: String,
        /// How long.
        duration: SimTime,
    },
    /// Restart every member in name order, one every `interval`, each down for `downtime`.
    RollingRestart {
        /// Between two restarts.
        interval: SimTime,
        /// How long each member is down (default 5s).
        downtime: SimTime,
    },
    /// Add or gracefully remove (highest names first) members to reach `members`.
    Scale {
        /// The target count.
        members: u32,
    },
    /// The topic grows by `count` partitions.
    AddPartitions {
        /// Index into `Scenario::topics`.
        topic: usize,
        /// How many partitions are added (>= 1).
        count: u32,
    },
}

/// `[tubemq]` (docs/kafka-facts.md section 8; defaults from the shipped master.ini).
#[derive(Clone, Debug, PartialEq)]
pub struct TubeMqSpec {
    /// `balance_period`: the master balances every this long (default 30s).
    pub balance_period: SimTime,
    /// `first_balance_delay`: the first balance after start (default 30s).
    pub first_balance_delay: SimTime,
    /// `heartbeat_timeout`: a consumer silent this long is removed (default 30s).
    pub heartbeat_timeout: SimTime,
    /// `heartbeat_interval`: the client heartbeat period (default 13s, `TClientConstants`).
    pub heartbeat_interval: SimTime,
    /// `confirm_wait`: how long a released partition waits for an in-flight batch (3s).
    pub confirm_wait: SimTime,
    /// `partition_query_interval`: client-side balance re-queries the partition set (default 10s).
    pub partition_query_interval: SimTime,
    /// `source_count` for client-side balance (default: the initial member count).
    pub source_count: u32,
    /// `[tubemq.node_ids]`: member name -> nodeId (default: `cN` -> N).
    pub node_ids: BTreeMap<String, u32>,
}
