//! The divergence check of plain and fast stepping (issue 23, item 5), in the spirit of
//! madsim's determinism check (it runs a test twice and stops at the first point the two runs
//! differ): a run's observations are kept as a [`Trace`] in a normalised form, and
//! [`first_divergence`] compares two traces and names the first fact, in simulated time, on
//! which they differ: its time, partition and member, and the fact on each side.
//!
//! Why a normalised form: the order of observations is not the same in both steppings. Fast
//! stepping reports a steady member's processed records when it catches the member up, not
//! when its batches run, so the observations of different partitions interleave differently
//! and a `Sample` counts records reported later in its `unreported`. Within one partition
//! too: plain stepping reports a batch's records when the batch starts, fast stepping at a
//! catch-up, so a revoked member's last batch comes before the new owner's `Skip` and
//! `Access` in one and after them in the other (the `busy-heartbeats` scenario of
//! `tests/stepping.rs`, KIP-848); and two members can process one partition at once (a paused
//! member that resumes finishes its batch while the new owner consumes: `sims/gc-pause.toml`,
//! KIP-848), their batches reported in a different order. What both must agree on, and what
//! a trace keeps, as tracks compared fact by fact ([`Track`]):
//!
//! - **per partition, its records**: every processed record as one [`Fact::Record`] (offset,
//!   arrival, end of processing), whatever the encoding it came in (`Processed` listed or
//!   linear, `ProcessedPeriodic` stretches: the model's `observe::RecordByRecord` expands
//!   them record by record), in order of end of processing, then offset, then arrival (a
//!   record processed twice is there twice);
//! - **per partition, its access changes** (`Access`: time, owner, state, first waiting
//!   record) in the order observed, and **its skips** (`Skip`) in the order observed;
//! - **for the group**, in the order observed: every other observation (topics, partitions
//!   added, rebalances, commits, max-poll expiries, member states, samples, the end), where
//!   a sample's processed count is the records reported before it plus its `unreported` (the
//!   number the metrics read: `produced - unreported - reported` is its lag), and the end's
//!   event count is left out (fast stepping exists to make it smaller).
//!
//! What it does not compare: the order of a partition's records relative to its access
//! changes and skips, and of one partition's facts relative to another's (the metrics'
//! report, compared by `tests/stepping.rs` after this check, covers what that order changes).
//! Every fact carries a time for the report (not compared): its own (`at`, a record's end of
//! processing), or for a `Skip` the latest time of a group fact or access change seen
//! before it in the run.

use crate::single::RunError;
use metrics::{Collector, RunReport};
use model::observe::{RecordByRecord, RecordObserver};
use model::{
    AccessRef, MemberState, NoProbe, Observation, Observer, PartState, PeriodicStretch,
    RecordTimes, Stepping, Tp,
};
use scenario::{ProtocolSpec, Scenario};
use sim_core::SimTime;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// One normalised observation (see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub enum Fact {
    /// The topics (sorted by name) and their partition counts.
    Topics {
        /// Names.
        names: Vec<String>,
        /// Partition counts.
        partitions: Vec<u32>,
    },
    /// A topic grew.
    PartitionsAdded {
        /// When.
        at: SimTime,
        /// Topic index.
        topic: u32,
        /// The new count.
        partitions: u32,
    },
    /// One processed record of the track's partition.
    Record {
        /// Offset.
        offset: u64,
        /// Arrival time.
        arrival: SimTime,
        /// End of processing.
        end: SimTime,
    },
    /// A new owner of the track's partition starts reading at `at_offset`.
    Skip {
        /// First offset read.
        at_offset: u64,
    },
    /// The owner or the state of the track's partition changed.
    Access {
        /// When.
        at: SimTime,
        /// The owner's name, if any.
        owner: Option<Arc<str>>,
        /// The new state.
        state: PartState,
        /// Arrival of the first unprocessed record.
        waiting_from: SimTime,
    },
    /// A rebalance started.
    RebalanceStarted {
        /// When.
        at: SimTime,
        /// Why.
        trigger: String,
    },
    /// A rebalance ended.
    RebalanceEnded {
        /// When.
        at: SimTime,
        /// Join/sync rounds.
        rounds: u32,
        /// Members in the group.
        members: u32,
    },
    /// A commit was stored or refused.
    Commit {
        /// When.
        at: SimTime,
        /// Member name.
        member: Arc<str>,
        /// Stored?
        ok: bool,
    },
    /// A member's `max.poll.interval.ms` expired.
    MaxPollExpired {
        /// When.
        at: SimTime,
        /// Member name.
        member: String,
    },
    /// A member's state changed.
    MemberState {
        /// When.
        at: SimTime,
        /// Member name.
        member: Arc<str>,
        /// Its incarnation.
        incarnation: u32,
        /// The new state.
        state: MemberState,
    },
    /// A periodic sample.
    Sample {
        /// When.
        at: SimTime,
        /// Records produced so far.
        produced: u64,
        /// Members in the group.
        members: u32,
        /// Records processed by then: reported before the sample plus its `unreported`.
        processed: u64,
    },
    /// The run ended (its event count left out).
    End {
        /// The end time.
        at: SimTime,
        /// Records produced per partition.
        produced: Vec<(Tp, u64)>,
    },
}

impl Fact {
    /// The member the fact names itself, if any.
    fn member(&self) -> Option<&str> {
        match self {
            Fact::Access { owner, .. } => owner.as_deref(),
            Fact::Commit { member, .. } => Some(member),
            Fact::MaxPollExpired { member, .. } => Some(member),
            Fact::MemberState { member, .. } => Some(member),
            _ => None,
        }
    }
}

impl fmt::Display for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fact::Topics { names, partitions } => write!(f, "topics {names:?} {partitions:?}"),
            Fact::PartitionsAdded { at, topic, partitions } => {
                write!(f, "partitions added at {at}: topic {topic} has {partitions}")
            }
            Fact::Record { offset, arrival, end } => {
                write!(f, "record {offset} processed (arrival {arrival}, end {end})")
            }
            Fact::Skip { at_offset } => write!(f, "skip: reading starts at offset {at_offset}"),
            Fact::Access { at, owner, state, waiting_from } => {
                let owner = owner.as_deref().unwrap_or("none");
                let waiting = match *waiting_from {
                    SimTime::MAX => "none".to_string(),
                    w => w.to_string(),
                };
                write!(f, "access at {at}: owner {owner}, {}, waiting from {waiting}", state.name())
            }
            Fact::RebalanceStarted { at, trigger } => {
                write!(f, "rebalance started at {at} ({trigger})")
            }
            Fact::RebalanceEnded { at, rounds, members } => {
                write!(f, "rebalance ended at {at}: {rounds} rounds, {members} members")
            }
            Fact::Commit { at, member, ok } => {
                write!(f, "commit at {at} by {member}: {}", if *ok { "stored" } else { "refused" })
            }
            Fact::MaxPollExpired { at, member } => write!(f, "max.poll expired at {at}: {member}"),
            Fact::MemberState { at, member, incarnation, state } => {
                write!(f, "member {member} (incarnation {incarnation}) {} at {at}", state.name())
            }
            Fact::Sample { at, produced, members, processed } => write!(
                f,
                "sample at {at}: produced {produced}, processed {processed}, {members} members"
            ),
            Fact::End { at, produced } => {
                let total: u64 = produced.iter().map(|(_, n)| n).sum();
                write!(f, "end at {at}: {total} records produced")
            }
        }
    }
}

/// A fact and the time it is reported at (see the module doc; not compared).
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    at: SimTime,
    fact: Fact,
}

/// One sequence of facts compared fact by fact (see the module doc). The order of the
/// variants is the order of a tie between two divergences at the same time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Track {
    /// The group's facts, in the order observed.
    Group,
    /// A partition's processed records, in order of end of processing, offset, arrival.
    Records(Tp),
    /// A partition's access changes, in the order observed.
    Access(Tp),
    /// A partition's skips, in the order observed.
    Skips(Tp),
}

impl Track {
    /// Its partition, `None` for the group.
    pub fn tp(self) -> Option<Tp> {
        match self {
            Track::Group => None,
            Track::Records(tp) | Track::Access(tp) | Track::Skips(tp) => Some(tp),
        }
    }
}

/// The three tracks of one partition.
#[derive(Clone, Debug, Default)]
struct PartTracks {
    records: Vec<Entry>,
    access: Vec<Entry>,
    skips: Vec<Entry>,
}

/// The normalised observations of one run (an [`Observer`]; see the module doc).
#[derive(Clone, Debug)]
pub struct Trace {
    label: String,
    topics: Vec<String>,
    group: Vec<Entry>,
    parts: BTreeMap<Tp, PartTracks>,
    /// The latest time of a group fact or access change seen (a `Skip`'s report time).
    clock: SimTime,
    /// Records reported so far (a sample's processed count adds its `unreported`).
    reported: u64,
}

impl Trace {
    /// An empty trace; `label` names its side in a [`Divergence`] (`plain`, `fast`).
    pub fn new(label: &str) -> Trace {
        Trace {
            label: label.to_string(),
            topics: Vec::new(),
            group: Vec::new(),
            parts: BTreeMap::new(),
            clock: SimTime::ZERO,
            reported: 0,
        }
    }

    /// Its label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Facts kept, all tracks.
    pub fn len(&self) -> usize {
        let parts = self.parts.values();
        self.group.len()
            + parts.map(|p| p.records.len() + p.access.len() + p.skips.len()).sum::<usize>()
    }

    /// True when nothing was observed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every track with a fact: the group's, then each partition's three.
    pub fn tracks(&self) -> Vec<Track> {
        let parts = self
            .parts
            .keys()
            .flat_map(|&tp| [Track::Records(tp), Track::Access(tp), Track::Skips(tp)]);
        std::iter::once(Track::Group)
            .chain(parts)
            .filter(|&t| !self.entries(t).is_empty())
            .collect()
    }

    /// The facts of `track`, in its order.
    pub fn facts(&self, track: Track) -> Vec<&Fact> {
        self.entries(track).iter().map(|e| &e.fact).collect()
    }

    /// The report times of the facts of `track` (see the module doc), in the same order.
    pub fn times(&self, track: Track) -> Vec<SimTime> {
        self.entries(track).iter().map(|e| e.at).collect()
    }

    /// Applies `change` to the `index`-th fact of `track` (a test's perturbation; the fact
    /// keeps its place); false if there is none.
    pub fn change_fact(
        &mut self,
        track: Track,
        index: usize,
        change: impl FnOnce(&mut Fact),
    ) -> bool {
        let Some(entry) = self.entries_mut(track).and_then(|t| t.get_mut(index)) else {
            return false;
        };
        change(&mut entry.fact);
        entry.at = entry_time(&entry.fact, entry.at);
        true
    }

    /// Removes the `index`-th fact of `track` (a test's perturbation).
    pub fn remove_fact(&mut self, track: Track, index: usize) -> Option<Fact> {
        let entries = self.entries_mut(track).filter(|t| index < t.len())?;
        Some(entries.remove(index).fact)
    }

    /// The partition's owner at `at` (its latest access change at or before `at`), if any.
    pub fn owner_at(&self, tp: Tp, at: SimTime) -> Option<String> {
        let access = self.entries(Track::Access(tp));
        let latest = access.iter().take_while(|e| e.at <= at).last()?;
        latest.fact.member().map(str::to_string)
    }

    fn entries(&self, track: Track) -> &[Entry] {
        let part = |tp: Tp| self.parts.get(&tp);
        match track {
            Track::Group => &self.group,
            Track::Records(tp) => part(tp).map_or(&[], |p| &p.records),
            Track::Access(tp) => part(tp).map_or(&[], |p| &p.access),
            Track::Skips(tp) => part(tp).map_or(&[], |p| &p.skips),
        }
    }

    fn entries_mut(&mut self, track: Track) -> Option<&mut Vec<Entry>> {
        match track {
            Track::Group => Some(&mut self.group),
            Track::Records(tp) => self.parts.get_mut(&tp).map(|p| &mut p.records),
            Track::Access(tp) => self.parts.get_mut(&tp).map(|p| &mut p.access),
            Track::Skips(tp) => self.parts.get_mut(&tp).map(|p| &mut p.skips),
        }
    }

    fn push_group(&mut self, fact: Fact) {
        let at = entry_time(&fact, self.clock);
        self.clock = self.clock.max(at);
        self.group.push(Entry { at, fact });
    }

    fn push_access(&mut self, tp: Tp, fact: Fact) {
        let at = entry_time(&fact, self.clock);
        self.clock = self.clock.max(at);
        self.parts.entry(tp).or_default().access.push(Entry { at, fact });
    }

    fn push_skip(&mut self, tp: Tp, at_offset: u64) {
        let entry = Entry { at: self.clock, fact: Fact::Skip { at_offset } };
        self.parts.entry(tp).or_default().skips.push(entry);
    }

    /// Adds processed records to `tp`'s record track, each in its place by end of
    /// processing, offset, arrival (almost always the last: records come in that order but
    /// for two members processing one partition at once, and fast stepping's late reports).
    fn push_records(
        &mut self,
        tp: Tp,
        first: u64,
        records: impl Iterator<Item = (SimTime, SimTime)>,
    ) {
        let track = &mut self.parts.entry(tp).or_default().records;
        let before = track.len();
        for (offset, (arrival, end)) in (first..).zip(records) {
            track.push(Entry { at: end, fact: Fact::Record { offset, arrival, end } });
            let mut i = track.len() - 1;
            while i > 0 && record_key(&track[i - 1]) > record_key(&track[i]) {
                track.swap(i - 1, i);
                i -= 1;
            }
        }
        self.reported += (track.len() - before) as u64;
    }

    /// `tp`'s name (`topic-partition`).
    fn tp_name(&self, tp: Tp) -> String {
        match self.topics.get(tp.topic as usize) {
            Some(name) => format!("{name}-{}", tp.partition),
            None => format!("topic {} partition {}", tp.topic, tp.partition),
        }
    }
}

/// The order of a record in its track: end of processing, offset, arrival.
fn record_key(entry: &Entry) -> (SimTime, u64, SimTime) {
    match entry.fact {
        Fact::Record { offset, arrival, end } => (end, offset, arrival),
        _ => (entry.at, 0, SimTime::ZERO),
    }
}

/// A fact's own time, or `otherwise` for those without one.
fn entry_time(fact: &Fact, otherwise: SimTime) -> SimTime {
    match fact {
        Fact::Record { end, .. } => *end,
        Fact::PartitionsAdded { at, .. }
        | Fact::Access { at, .. }
        | Fact::RebalanceStarted { at, .. }
        | Fact::RebalanceEnded { at, .. }
        | Fact::Commit { at, .. }
        | Fact::MaxPollExpired { at, .. }
        | Fact::MemberState { at, .. }
        | Fact::Sample { at, .. }
        | Fact::End { at, .. } => *at,
        Fact::Topics { .. } | Fact::Skip { .. } => otherwise,
    }
}

/// A trace takes processed records one by one, whatever their encoding: the model's
/// [`RecordByRecord`] expands them.
impl RecordObserver for Trace {
    fn record(&mut self, tp: Tp, offset: u64, arrival: SimTime, end: SimTime) {
        self.push_records(tp, offset, std::iter::once((arrival, end)));
    }

    fn records(&mut self, tp: Tp, first: u64, times: &mut dyn Iterator<Item = (SimTime, SimTime)>) {
        self.push_records(tp, first, times);
    }

    fn other(&mut self, observation: Observation) {
        match observation {
            Observation::Topics { names, partitions } => {
                self.topics = names.clone();
                self.push_group(Fact::Topics { names, partitions });
            }
            Observation::PartitionsAdded { at, topic, partitions } => {
                self.push_group(Fact::PartitionsAdded { at, topic, partitions })
            }
            // `RecordByRecord` hands them to `records`.
            Observation::Processed { .. } | Observation::ProcessedPeriodic { .. } => {
                unreachable!("processed records come through RecordObserver::records")
            }
            Observation::Skip { tp, at_offset } => self.push_skip(tp, at_offset),
            Observation::Access { at, tp, owner, state, waiting_from } => {
                let owner = owner.map(|m| m.name);
                self.push_access(tp, Fact::Access { at, owner, state, waiting_from });
            }
            Observation::RebalanceStarted { at, trigger } => {
                self.push_group(Fact::RebalanceStarted { at, trigger })
            }
            Observation::RebalanceEnded { at, rounds, members } => {
                self.push_group(Fact::RebalanceEnded { at, rounds, members })
            }
            Observation::Commit { at, member, ok } => {
                self.push_group(Fact::Commit { at, member, ok })
            }
            Observation::MaxPollExpired { at, member } => {
                self.push_group(Fact::MaxPollExpired { at, member })
            }
            Observation::MemberState { at, member, incarnation, state } => {
                let member = member.name;
                self.push_group(Fact::MemberState { at, member, incarnation, state })
            }
            Observation::Sample { at, produced, members, unreported } => {
                let processed = self.reported + unreported;
                self.push_group(Fact::Sample { at, produced, members, processed });
            }
            Observation::End { at, produced, events: _ } => {
                self.push_group(Fact::End { at, produced })
            }
        }
    }

    fn other_access(&mut self, a: AccessRef<'_>) {
        let owner = a.owner.map(|(_, name)| Arc::clone(name));
        let fact = Fact::Access { at: a.at, owner, state: a.state, waiting_from: a.waiting_from };
        self.push_access(a.tp, fact);
    }
}

/// A trace observes a run through [`RecordByRecord`].
impl Observer for Trace {
    fn observe(&mut self, observation: Observation) {
        RecordByRecord(self).observe(observation);
    }

    fn observe_periodic(&mut self, stretch: PeriodicStretch<'_>) {
        RecordByRecord(self).observe_periodic(stretch);
    }

    fn observe_processed(&mut self, tp: Tp, first: u64, times: &RecordTimes) {
        RecordByRecord(self).observe_processed(tp, first, times);
    }

    fn observe_processed_listed(
        &mut self,
        tp: Tp,
        first: u64,
        arrivals: &[SimTime],
        ends: &[SimTime],
    ) {
        RecordByRecord(self).observe_processed_listed(tp, first, arrivals, ends);
    }

    fn observe_access(&mut self, access: AccessRef<'_>) {
        RecordByRecord(self).observe_access(access);
    }
}

/// The first fact on which two traces differ (see [`first_divergence`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Divergence {
    /// Its simulated time: the earlier of the two sides' facts.
    pub at: SimTime,
    /// Its track (the group's or one of a partition's).
    pub track: Track,
    /// The partition's name (`t0-3`), empty for the group.
    pub tp_name: String,
    /// The member: the one the fact names (an access change's owner, a commit's member), or
    /// for a record or skip the partition's owner at its time (on the first side that has
    /// the fact).
    pub member: Option<String>,
    /// The fact's position in its track (the facts before it are equal on both sides).
    pub index: usize,
    /// The two sides' labels.
    pub labels: (String, String),
    /// The fact on each side; `None` where that side's track ends first.
    pub facts: (Option<Fact>, Option<Fact>),
}

impl Divergence {
    /// Its partition, `None` for a fact of the group.
    pub fn tp(&self) -> Option<Tp> {
        self.track.tp()
    }
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match self.track {
            Track::Group => "the group".to_string(),
            Track::Records(_) => format!("partition {} (its records)", self.tp_name),
            Track::Access(_) => format!("partition {} (its access changes)", self.tp_name),
            Track::Skips(_) => format!("partition {} (its skips)", self.tp_name),
        };
        let member = self.member.as_deref().unwrap_or("none");
        writeln!(
            f,
            "first divergence at {} ({} ns), {place}, member {member}, fact {} of the track:",
            self.at,
            self.at.as_nanos(),
            self.index
        )?;
        let side = |fact: &Option<Fact>| match fact {
            Some(fact) => fact.to_string(),
            None => "nothing: the track ends before".to_string(),
        };
        writeln!(f, "  {}: {}", self.labels.0, side(&self.facts.0))?;
        write!(f, "  {}: {}", self.labels.1, side(&self.facts.1))
    }
}

impl std::error::Error for Divergence {}

/// Where two tracks first differ: the index and the report time (the earlier side's).
fn track_divergence(left: &[Entry], right: &[Entry]) -> Option<(usize, SimTime)> {
    let index = left.iter().zip(right).position(|(l, r)| l.fact != r.fact);
    let index =
        index.or_else(|| (left.len() != right.len()).then(|| left.len().min(right.len())))?;
    let at = match (left.get(index), right.get(index)) {
        (Some(l), Some(r)) => l.at.min(r.at),
        (Some(e), None) | (None, Some(e)) => e.at,
        (None, None) => unreachable!("a divergence index is inside one of the tracks"),
    };
    Some((index, at))
}

/// Compares two traces track by track and returns the number of facts compared when they
/// are equal, or the divergence with the earliest time (on a tie: the first track in
/// [`Track`]'s order).
// The error is a failed check's report, made once: its size costs nothing.
#[allow(clippy::result_large_err)]
pub fn first_divergence(left: &Trace, right: &Trace) -> Result<usize, Divergence> {
    let mut tracks = left.tracks();
    tracks.extend(right.tracks());
    tracks.sort();
    tracks.dedup();
    let mut first: Option<(SimTime, Track, usize)> = None;
    for track in tracks {
        let Some((index, at)) = track_divergence(left.entries(track), right.entries(track)) else {
            continue;
        };
        match first {
            Some((best, ..)) if best <= at => {}
            _ => first = Some((at, track, index)),
        }
    }
    let Some((at, track, index)) = first else { return Ok(left.len()) };
    let fact = |t: &Trace| t.entries(track).get(index).map(|e| e.fact.clone());
    let facts = (fact(left), fact(right));
    let side = if facts.0.is_some() { left } else { right };
    let named = facts.0.as_ref().or(facts.1.as_ref()).and_then(Fact::member).map(str::to_string);
    let member = match (named, track) {
        (Some(member), _) => Some(member),
        (None, Track::Records(tp) | Track::Skips(tp)) => {
            side.owner_at(tp, side.entries(track)[index].at)
        }
        (None, _) => None,
    };
    Err(Divergence {
        at,
        track,
        tp_name: track.tp().map_or_else(String::new, |tp| left.tp_name(tp)),
        member,
        index,
        labels: (left.label.clone(), right.label.clone()),
        facts,
    })
}

/// Passes every observation to two observers.
struct Tee<'a> {
    first: &'a mut dyn Observer,
    second: &'a mut dyn Observer,
}

impl Observer for Tee<'_> {
    fn observe(&mut self, observation: Observation) {
        self.first.observe(observation.clone());
        self.second.observe(observation);
    }
    fn observe_periodic(&mut self, stretch: PeriodicStretch<'_>) {
        self.first.observe_periodic(stretch);
        self.second.observe_periodic(stretch);
    }
    fn observe_processed(&mut self, tp: Tp, first: u64, times: &RecordTimes) {
        self.first.observe_processed(tp, first, times);
        self.second.observe_processed(tp, first, times);
    }
    fn observe_processed_listed(
        &mut self,
        tp: Tp,
        first: u64,
        arrivals: &[SimTime],
        ends: &[SimTime],
    ) {
        self.first.observe_processed_listed(tp, first, arrivals, ends);
        self.second.observe_processed_listed(tp, first, arrivals, ends);
    }
    fn observe_access(&mut self, access: AccessRef<'_>) {
        self.first.observe_access(access);
        self.second.observe_access(access);
    }
}

/// Runs `scenario` once under `protocol` with `seed` and `stepping`, and returns both its
/// report (as [`crate::run_protocol_stepped`] gives it) and its [`Trace`] (labelled
/// `plain` or `fast`).
pub fn run_traced(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    seed: u64,
    stepping: Stepping,
) -> Result<(RunReport, Trace), RunError> {
    let mut collector = Collector::new(crate::single::run_labels(scenario, protocol, seed));
    let label = match stepping {
        Stepping::Plain => "plain",
        Stepping::Fast => "fast",
    };
    let mut trace = Trace::new(label);
    let mut tee = Tee { first: &mut collector, second: &mut trace };
    let stats = model::simulate_stepped(scenario, protocol, seed, stepping, &mut tee, &mut NoProbe);
    if stats.hit_event_limit {
        return Err(RunError::EventLimit { protocol: protocol.to_string(), events: stats.events });
    }
    Ok((collector.finish(), trace))
}

/// Runs `scenario` with plain and with fast stepping and compares their traces: the facts
/// compared, or the first divergence (`Ok(Err(..))`); `Err` if a run fails.
pub fn check_stepping(
    scenario: &Scenario,
    protocol: ProtocolSpec,
    seed: u64,
) -> Result<Result<usize, Divergence>, RunError> {
    let (_, plain) = run_traced(scenario, protocol, seed, Stepping::Plain)?;
    let (_, fast) = run_traced(scenario, protocol, seed, Stepping::Fast)?;
    Ok(first_divergence(&plain, &fast))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    const TP: Tp = Tp { topic: 0, partition: 1 };

    fn records(trace: &Trace) -> Vec<(u64, SimTime, SimTime)> {
        let facts = trace.facts(Track::Records(TP));
        facts
            .into_iter()
            .filter_map(|f| match *f {
                Fact::Record { offset, arrival, end } => Some((offset, arrival, end)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_three_record_encodings_expand_to_the_same_records() {
        // Records 10..16 arrive every 10 ms from 100 ms and end every 10 ms from 500 ms.
        let expected: Vec<(u64, SimTime, SimTime)> =
            (0..6).map(|i| (10 + i, ms(100 + 10 * i), ms(500 + 10 * i))).collect();
        let (arrivals, ends): (Vec<_>, Vec<_>) = expected.iter().map(|r| (r.1, r.2)).unzip();
        let mut listed = Trace::new("listed");
        listed.observe_processed(TP, 10, &RecordTimes::listed(arrivals, ends));
        let mut linear = Trace::new("linear");
        let times = RecordTimes::Linear {
            count: 6,
            arrival: ms(100),
            arrival_step: ms(10),
            end: ms(500),
            end_step: ms(10),
        };
        linear.observe(Observation::Processed { tp: TP, first: 10, times });
        // A pattern of two records (arrivals 100, 110 ms; ends 500, 510 ms) repeating every
        // 20 ms: record j is pattern record j % 2 of copy j / 2, the same progression.
        let (arrivals, ends) = ([ms(100), ms(110)], [ms(500), ms(510)]);
        let stretch = PeriodicStretch {
            tp: TP,
            first: 10,
            arrivals: &arrivals,
            ends: &ends,
            latencies: &[],
            start: 0,
            count: 6,
            shift: SimTime::ZERO,
            period: ms(20),
        };
        let mut lent = Trace::new("lent");
        lent.observe_periodic(stretch);
        let mut owned = Trace::new("owned");
        owned.observe(stretch.to_observation());
        for trace in [&listed, &linear, &lent, &owned] {
            assert_eq!(records(trace), expected, "{}", trace.label());
        }
        assert_eq!(first_divergence(&listed, &owned), Ok(6));
    }

    #[test]
    fn a_sample_counts_reported_and_unreported_records() {
        let mut trace = Trace::new("t");
        let times = RecordTimes::listed(vec![ms(1), ms(2)], vec![ms(3), ms(4)]);
        trace.observe_processed(TP, 0, &times);
        trace.observe(Observation::Sample { at: ms(10), produced: 9, members: 2, unreported: 5 });
        let facts = trace.facts(Track::Group);
        assert_eq!(
            facts,
            vec![&Fact::Sample { at: ms(10), produced: 9, members: 2, processed: 7 }]
        );
    }
}
