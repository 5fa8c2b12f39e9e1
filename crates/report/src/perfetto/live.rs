//! The trace of a run written while it runs (`run --trace`): a [`TraceWriter`] is fed by a
//! [`model::Observer`] ([`TraceWriter::observer`]: the observations the collector also gets,
//! through a [`Tee`]) and a [`model::Probe`] ([`TraceWriter::probe`]: the group's state after
//! every event, and the heartbeats), and streams the events ([`super::events`]) as spans end:
//! memory holds one open span per track and the run's rebalances, never its records.
//!
//! Partitions: each `Access` opens an interval of the partition's owner and state, closed by
//! the next one (or the end of the run) exactly as the collector closes it into
//! `ownership.csv` rows: consuming; or `idle` while no record waits and the state from the
//! arrival of the first waiting record on; adjacent pieces of the same owner and state are one
//! span. So the partition spans are the `ownership.csv` rows, and a trace built from the files
//! ([`super::files`]) has the same ones.
//!
//! Members: the model's [`Observation::MemberState`] changes. The group state: the probe reads
//! it after every event. Heartbeats (only with [`TraceOptions::heartbeats`]): the probe reads
//! the first bytes of each queued event's `Debug` text ([`super::event_text`]); without them
//! the probe asks for no event text at all.

use super::event_text::{heartbeat_slot, Prefix};
use super::events::{EventWriter, Rebalances, COMMITS_TID, GROUP_TID, HEARTBEATS_TID};
use super::events::{COORDINATOR_PID, MEMBER_PID_BASE, STATE_TID};
use super::{TraceOptions, TraceStats};
use metrics::RunReport;
use model::{AccessRef, MemberState, Observation, Observer, PartState, PeriodicStretch, Probe};
use model::{RecordTimes, Tp, WorldView};
use sim_core::SimTime;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};
use std::sync::Arc;

/// A span still open on a track.
#[derive(Clone, Debug)]
struct OpenSpan<A> {
    start: SimTime,
    what: A,
}

/// A piece of a partition's timeline: an `ownership.csv` row in the making.
#[derive(Clone, Debug)]
struct Piece {
    start: SimTime,
    end: SimTime,
    owner: Option<Arc<str>>,
    state: &'static str,
}

/// A partition's timeline: the interval open since its last `Access`, and its last piece.
#[derive(Clone, Debug)]
struct PartTimeline {
    since: SimTime,
    owner: Option<Arc<str>>,
    state: PartState,
    waiting_from: SimTime,
    piece: Option<Piece>,
}

/// Writes one protocol run's trace to `W` (see the module doc).
pub struct TraceWriter<W: Write> {
    events: EventWriter<W>,
    /// Whether a run has a group (whose state is traced).
    grouped: bool,
    parts: Vec<Vec<Option<PartTimeline>>>,
    /// By member slot: the state shown and its incarnation.
    members: Vec<Option<OpenSpan<(MemberState, u32)>>>,
    slots: BTreeMap<Arc<str>, u32>,
    group: Option<OpenSpan<(&'static str, i32)>>,
    rebalances: Rebalances,
    end: Option<SimTime>,
}

impl<W: Write> TraceWriter<W> {
    /// A trace of a run of `protocol` (its CSV name: `eager`, `consumer`, `manual`, ...)
    /// labelled `label` (shown as the trace's title), written to `out`.
    pub fn new(out: W, label: &str, protocol: &str, options: TraceOptions) -> io::Result<Self> {
        let grouped = !matches!(protocol, "manual" | "tubemq-client" | "tubemq-server");
        Ok(TraceWriter {
            events: EventWriter::new(out, label, None, options)?,
            grouped,
            parts: Vec::new(),
            members: Vec::new(),
            slots: BTreeMap::new(),
            group: None,
            rebalances: Rebalances::default(),
            end: None,
        })
    }

    /// Ends every open span at the run's end, writes the counter tracks from `report`'s
    /// timeline (the `timeline.csv` samples) and closes the JSON; returns what was written.
    pub fn finish(mut self, report: &RunReport) -> io::Result<(W, TraceStats)> {
        let end = self.end.unwrap_or(SimTime::ZERO);
        self.close_all(end);
        for row in &report.timeline {
            self.events.counters(row.t_s, row.lag, row.down_partitions, row.members);
        }
        self.events.finish()
    }

    /// The observer half: feeds the observations of the run into `cell`'s writer.
    pub fn observer(cell: &RefCell<Self>) -> TraceObserver<'_, W> {
        TraceObserver { cell }
    }

    /// The probe half: feeds the group state (and the heartbeats) into `cell`'s writer.
    pub fn probe(cell: &RefCell<Self>) -> TraceProbe<'_, W> {
        let heartbeats = cell.borrow().events.options.heartbeats;
        TraceProbe { cell, heartbeats }
    }

    // ---- partitions ----

    fn on_access(
        &mut self,
        at: SimTime,
        tp: Tp,
        owner: Option<&Arc<str>>,
        state: PartState,
        waiting_from: SimTime,
    ) {
        let (t, p) = (tp.topic as usize, tp.partition as usize);
        if self.parts.len() <= t {
            self.parts.resize_with(t + 1, Vec::new);
        }
        if self.parts[t].len() <= p {
            self.parts[t].resize_with(p + 1, || None);
        }
        if self.parts[t][p].is_some() {
            self.close_interval(tp, at);
        }
        // The timeline now reaches `at` (observations come in time order).
        let piece = self.parts[t][p].take().and_then(|part| part.piece);
        let owner = owner.cloned();
        self.parts[t][p] = Some(PartTimeline { since: at, owner, state, waiting_from, piece });
    }

    /// Closes `tp`'s open interval at `at` into pieces, as the collector closes it into
    /// `ownership.csv` rows (`metrics::collector`, `PartMetrics::close_interval`).
    fn close_interval(&mut self, tp: Tp, at: SimTime) {
        let Some(part) = self.parts[tp.topic as usize][tp.partition as usize].as_ref() else {
            return;
        };
        let (since, state, waiting_from) = (part.since, part.state, part.waiting_from);
        if at <= since {
            return;
        }
        if state == PartState::Consuming {
            self.extend(tp, at, state.name());
            return;
        }
        let down_from = waiting_from.max(since);
        if down_from > since {
            self.extend(tp, down_from.min(at), "idle");
        }
        if down_from < at {
            self.extend(tp, at, state.name());
        }
    }

    /// Extends `tp`'s timeline to `end` in `state` under its current owner: its last piece
    /// grows if it has the same owner and state, else it is written and a new one begins.
    fn extend(&mut self, tp: Tp, end: SimTime, state: &'static str) {
        let part = self.parts[tp.topic as usize][tp.partition as usize]
            .as_mut()
            .expect("a partition with a timeline");
        let start = part.piece.as_ref().map_or(part.since, |piece| piece.end);
        if let Some(piece) = part.piece.as_mut() {
            if piece.state == state && piece.owner == part.owner {
                piece.end = end;
                return;
            }
        }
        let owner = part.owner.clone();
        let done = part.piece.replace(Piece { start, end, owner, state });
        if let Some(done) = done {
            self.write_piece(tp, &done);
        }
    }

    fn write_piece(&mut self, tp: Tp, piece: &Piece) {
        let rebalance = self.rebalances.at(piece.start);
        let rebalance = rebalance.map(|(index, trigger)| (index, Arc::clone(trigger)));
        let rebalance = rebalance.as_ref().map(|(index, trigger)| (*index, trigger));
        let span = (piece.start, piece.end);
        self.events.partition_span(tp, span, piece.owner.as_deref(), piece.state, rebalance);
    }

    // ---- coordinator ----

    fn on_group(&mut self, at: SimTime, state: &'static str, generation: i32) {
        if self.group.as_ref().is_some_and(|g| g.what == (state, generation)) {
            return;
        }
        if let Some(open) = self.group.replace(OpenSpan { start: at, what: (state, generation) }) {
            self.close_group(open, at);
        }
    }

    fn close_group(&mut self, open: OpenSpan<(&'static str, i32)>, end: SimTime) {
        let (state, generation) = open.what;
        let args = |line: &mut Vec<u8>| {
            let _ = write!(line, "\"generation\":{generation}");
        };
        let track = (COORDINATOR_PID, GROUP_TID);
        self.events.span(track, state, "group", open.start, end, &args);
    }

    fn close_rebalance(&mut self, end: SimTime, done: Option<(u32, u32)>) {
        if let Some(span) = self.rebalances.end(end, done) {
            self.events.rebalance_span(&span);
        }
    }

    // ---- members ----

    fn learn_name(&mut self, slot: u32, name: &Arc<str>) {
        if self.events.member_name(slot).is_none() {
            self.events.name_member(slot, name);
            self.slots.insert(Arc::clone(name), slot);
        }
    }

    /// Shows `state` on the member's track from `at` (closing the span shown before).
    fn on_member_state(&mut self, at: SimTime, slot: u32, incarnation: u32, state: MemberState) {
        let s = slot as usize;
        if self.members.len() <= s {
            self.members.resize(s + 1, None);
        }
        let what = (state, incarnation);
        if self.members[s].as_ref().is_some_and(|shown| shown.what == what) {
            return;
        }
        if let Some(open) = self.members[s].replace(OpenSpan { start: at, what }) {
            self.close_member(slot, open, at);
        }
    }

    fn close_member(&mut self, slot: u32, open: OpenSpan<(MemberState, u32)>, end: SimTime) {
        let name = self.events.member_name(slot).cloned();
        if !self.events.member_kept(name.as_deref()) {
            return;
        }
        let (state, incarnation) = open.what;
        let args = |line: &mut Vec<u8>| {
            let _ = write!(line, "\"incarnation\":{incarnation}");
        };
        let track = (MEMBER_PID_BASE + slot, STATE_TID);
        self.events.span(track, state.name(), "member", open.start, end, &args);
    }

    fn member_instant(&mut self, member: &str, name: &str, at: SimTime) {
        if !self.events.member_kept(Some(member)) {
            return;
        }
        if let Some(&slot) = self.slots.get(member) {
            self.events.instant((MEMBER_PID_BASE + slot, COMMITS_TID), name, "commit", at);
        }
    }

    fn on_heartbeat(&mut self, at: SimTime, slot: u32) {
        let name = self.events.member_name(slot).cloned();
        if self.events.member_kept(name.as_deref()) {
            let track = (MEMBER_PID_BASE + slot, HEARTBEATS_TID);
            self.events.instant(track, "heartbeat", "heartbeat", at);
        }
    }

    /// After an event: the group's state.
    fn after_event(&mut self, view: &WorldView<'_, '_>) {
        if !self.grouped {
            return;
        }
        let state = match view.group_state() {
            model::protocols::classic::GroupState::Empty => "Empty",
            model::protocols::classic::GroupState::PreparingRebalance => "PreparingRebalance",
            model::protocols::classic::GroupState::CompletingRebalance => "CompletingRebalance",
            model::protocols::classic::GroupState::Stable => "Stable",
        };
        self.on_group(view.now(), state, view.generation());
    }

    fn close_all(&mut self, end: SimTime) {
        self.close_rebalance(end, None);
        if let Some(open) = self.group.take() {
            self.close_group(open, end);
        }
        for slot in 0..self.members.len() {
            if let Some(open) = self.members[slot].take() {
                self.close_member(slot as u32, open, end);
            }
        }
        for topic in 0..self.parts.len() {
            for partition in 0..self.parts[topic].len() {
                let tp = Tp { topic: topic as u32, partition: partition as u32 };
                self.close_interval(tp, end);
                let piece = self.parts[topic][partition].take().and_then(|part| part.piece);
                if let Some(piece) = piece {
                    self.write_piece(tp, &piece);
                }
            }
        }
    }

    fn observe(&mut self, observation: Observation) {
        match observation {
            Observation::Topics { names, .. } => self.events.set_topics(names),
            Observation::Access { at, tp, owner, state, waiting_from } => {
                if let Some(owner) = &owner {
                    self.learn_name(owner.id, &owner.name);
                }
                let owner = owner.as_ref().map(|o| &o.name);
                self.on_access(at, tp, owner, state, waiting_from);
            }
            Observation::RebalanceStarted { at, trigger } => self.rebalances.start(at, &trigger),
            Observation::RebalanceEnded { at, rounds, members } => {
                self.close_rebalance(at, Some((rounds, members)))
            }
            Observation::MemberState { at, member, incarnation, state } => {
                self.learn_name(member.id, &member.name);
                self.on_member_state(at, member.id, incarnation, state);
            }
            Observation::Commit { at, member, ok } => {
                let name = if ok { "commit" } else { "commit-refused" };
                self.member_instant(&member, name, at);
            }
            Observation::MaxPollExpired { at, member } => {
                self.member_instant(&member, "max-poll-expired", at);
            }
            Observation::End { at, .. } => self.end = Some(at),
            _ => {}
        }
    }
}

/// The observer half of a [`TraceWriter`] (see [`TraceWriter::observer`]).
pub struct TraceObserver<'a, W: Write> {
    cell: &'a RefCell<TraceWriter<W>>,
}

impl<W: Write> Observer for TraceObserver<'_, W> {
    fn observe(&mut self, observation: Observation) {
        self.cell.borrow_mut().observe(observation);
    }

    fn observe_periodic(&mut self, _: PeriodicStretch<'_>) {}

    fn observe_processed(&mut self, _: Tp, _: u64, _: &RecordTimes) {}

    fn observe_processed_listed(&mut self, _: Tp, _: u64, _: &[SimTime], _: &[SimTime]) {}

    fn observe_access(&mut self, access: AccessRef<'_>) {
        let mut writer = self.cell.borrow_mut();
        if let Some((id, name)) = access.owner {
            writer.learn_name(id, name);
        }
        let owner = access.owner.map(|(_, name)| name);
        writer.on_access(access.at, access.tp, owner, access.state, access.waiting_from);
    }
}

/// The probe half of a [`TraceWriter`] (see [`TraceWriter::probe`]).
pub struct TraceProbe<'a, W: Write> {
    cell: &'a RefCell<TraceWriter<W>>,
    heartbeats: bool,
}

impl<W: Write> Probe for TraceProbe<'_, W> {
    fn wants_events(&self) -> bool {
        self.heartbeats
    }

    fn before_event(&mut self, now: SimTime, event: &dyn fmt::Debug) {
        if let Some(slot) = heartbeat_slot(Prefix::of(event).text()) {
            self.cell.borrow_mut().on_heartbeat(now, slot);
        }
    }

    fn after_event(&mut self, view: &WorldView<'_, '_>) -> bool {
        self.cell.borrow_mut().after_event(view);
        true
    }
}

/// Sends every observation to the run's collector (`first`) and the facts a trace uses to
/// the trace (`second`): records processed and skipped and the samples go to `first` only.
pub struct Tee<'a> {
    /// The collector.
    pub first: &'a mut dyn Observer,
    /// The trace.
    pub second: &'a mut dyn Observer,
}

impl Observer for Tee<'_> {
    fn observe(&mut self, observation: Observation) {
        let traced = !matches!(
            observation,
            Observation::Processed { .. }
                | Observation::ProcessedPeriodic { .. }
                | Observation::Skip { .. }
                | Observation::Sample { .. }
        );
        if traced {
            self.second.observe(observation.clone());
        }
        self.first.observe(observation);
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
