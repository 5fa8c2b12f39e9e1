//! `run --trace`: one protocol run as a trace in the Chrome JSON Trace Event Format (the
//! object form, `{"traceEvents": [...]}`), which ui.perfetto.dev and chrome://tracing open
//! offline. Written while the run runs, from a [`model::Observer`] and a [`model::Probe`]
//! ([`TraceWriter::observer`], [`TraceWriter::probe`]), streamed to the file: memory holds
//! one open span per track, never the run's records.
//!
//! Tracks (`pid`/`tid`, named by `M` metadata events, sorted by `*_sort_index`):
//! - pid 1 `coordinator`: tid 1 `rebalances` (one span per logical rebalance, from the
//!   `RebalanceStarted`/`RebalanceEnded` observations: index, trigger, rounds, members),
//!   tid 2 `group state` (Empty / PreparingRebalance / CompletingRebalance / Stable spans with
//!   their generation, read by the probe after every event: a generation's round is its span),
//!   and the counter tracks `lag`, `down partitions`, `members` (the `timeline.csv` samples).
//! - pid 2 `partitions`: one thread per partition (`topic-N`): a span per access state, named
//!   by the owner while consuming, else by the state (`revoked`, `unassigned`,
//!   `stop-the-world`, `owner-dead`, `owner-paused`, `owner-disconnected`: the cause of the
//!   down interval), with the owner and the open rebalance (index and trigger) in `args`.
//! - pid 10 + slot: one process per member: tid 1 `state` (starting, joining, syncing,
//!   consuming, paused, stalled, disconnected, dead, closed; `running` for protocols without a
//!   group; the incarnation in `args`), tid 2 `commits` (instants: `commit`,
//!   `commit-refused`, `max-poll-expired`), tid 3 `heartbeats` (instants, only with
//!   [`TraceOptions::heartbeats`]: one per heartbeat the coordinator receives).
//!
//! Member states come from the probe: the first bytes of each queued event's `Debug` text
//! ([`event_text`]) name the JoinGroup the coordinator receives (joining), the join response
//! the member receives (syncing), its assignment (consuming) and the scenario's actions;
//! pauses, stalls and disconnects end after their duration.
//!
//! Spans are complete (`X`) events, written when they end, so each track's events are in
//! `ts` order and nothing is left open; zero-length spans are left out. Timestamps and
//! durations are virtual microseconds written exactly: the integer nanoseconds divided by
//! 1,000 as a decimal with up to three fractional digits (no rounding; a double holds every
//! such value of a run of up to 104 days exactly to the nanosecond).
//!
//! Bounding the size: [`TraceOptions::window`] keeps what overlaps `[from, to)` (spans cut at
//! its edges) and [`TraceOptions::members`] keeps the processes of the named members and the
//! partition spans they own (ownerless spans are dropped under a member filter).

mod event_text;

use event_text::{member_fact, ActionKind, MemberFact, Prefix};
use metrics::RunReport;
use model::{AccessRef, Observation, Observer, PartState, PeriodicStretch, Probe, RecordTimes};
use model::{Tp, WorldView};
use sim_core::SimTime;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::{self, Write};
use std::sync::Arc;

/// The coordinator's process id.
const COORDINATOR_PID: u32 = 1;
/// The partitions' process id.
const PARTITIONS_PID: u32 = 2;
/// Member slot `s` is process `MEMBER_PID_BASE + s`.
const MEMBER_PID_BASE: u32 = 10;
/// Partition `p` of topic `t` is thread `t * PARTITION_TID_STRIDE + p + 1` of the partitions.
const PARTITION_TID_STRIDE: u32 = 1_000_000;
/// Member threads.
const STATE_TID: u32 = 1;
const COMMITS_TID: u32 = 2;
const HEARTBEATS_TID: u32 = 3;
/// Coordinator threads.
const REBALANCES_TID: u32 = 1;
const GROUP_TID: u32 = 2;

/// What a trace keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceOptions {
    /// Keep only what overlaps `[from, to)` (spans cut at the edges); `None`: the whole run.
    pub window: Option<(SimTime, SimTime)>,
    /// Keep only these members' processes and the partition spans they own; `None`: all.
    pub members: Option<BTreeSet<String>>,
    /// Also write an instant per heartbeat the coordinator receives (many).
    pub heartbeats: bool,
}

impl TraceOptions {
    /// Parses `--trace-window FROM..TO` (human durations, `10m..12m`; either side may be
    /// empty: from the start, to the end).
    pub fn parse_window(text: &str) -> Result<(SimTime, SimTime), String> {
        let (from, to) = text
            .split_once("..")
            .ok_or_else(|| format!("`{text}`: expected FROM..TO, e.g. 10m..12m"))?;
        let at = |part: &str, default: SimTime| -> Result<SimTime, String> {
            let part = part.trim();
            if part.is_empty() {
                return Ok(default);
            }
            let d = humantime_like(part).ok_or_else(|| {
                format!("`{part}`: not a duration (use e.g. 90s, 10m, 1h, 250ms)")
            })?;
            Ok(d)
        };
        let (from, to) = (at(from, SimTime::ZERO)?, at(to, SimTime::MAX)?);
        if from >= to {
            return Err(format!("`{text}`: the window's start must be before its end"));
        }
        Ok((from, to))
    }
}

/// A duration such as `10m`, `1h30m`, `250ms`, `2.5s` (the scenario files' durations).
fn humantime_like(text: &str) -> Option<SimTime> {
    const UNITS: [(&str, f64); 6] =
        [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9)];
    let mut nanos = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.').count();
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        // Longest unit first: `ms` before `m`, `ns`/`us` before `s`.
        let (unit, scale) =
            UNITS.iter().filter(|(u, _)| rest.starts_with(u)).max_by_key(|(u, _)| u.len())?;
        nanos += value * scale;
        rest = &rest[unit.len()..];
    }
    (nanos.is_finite() && nanos >= 0.0).then(|| SimTime::from_nanos_f64(nanos.round()))
}

/// What a finished trace holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// Trace events written (metadata included).
    pub events: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// A span still open on a track.
#[derive(Clone, Debug)]
struct OpenSpan<A> {
    start: SimTime,
    what: A,
}

/// A partition's open span: its state, owner and the rebalance open when it began.
#[derive(Clone, Debug, PartialEq)]
struct PartSpan {
    state: PartState,
    owner: Option<Arc<str>>,
    rebalance: Option<(u64, Arc<str>)>,
}

/// A member's track: the state shown, the state under a timed overlay, and the overlay's end.
#[derive(Clone, Debug, Default)]
struct MemberTrack {
    shown: Option<OpenSpan<(&'static str, u32)>>,
    base: Option<&'static str>,
    overlay_until: Option<SimTime>,
    incarnation: u32,
}

/// The coordinator's open rebalance.
#[derive(Clone, Debug)]
struct OpenRebalance {
    start: SimTime,
    index: u64,
    trigger: Arc<str>,
}

/// Writes one protocol run's trace to `W` (see the module doc).
pub struct TraceWriter<W: Write> {
    out: W,
    options: TraceOptions,
    /// Whether a run has a group whose join and sync a member goes through.
    grouped: bool,
    first: bool,
    stats: TraceStats,
    error: Option<io::Error>,
    line: Vec<u8>,
    named_tracks: BTreeSet<(u32, u32)>,
    named_processes: BTreeSet<u32>,
    topics: Vec<String>,
    parts: Vec<Vec<Option<OpenSpan<PartSpan>>>>,
    names: Vec<Option<Arc<str>>>,
    slots: BTreeMap<String, u32>,
    members: Vec<MemberTrack>,
    /// Actions on members whose slot is not known yet (resolved after the event).
    unresolved: Vec<(SimTime, ActionKind, String, Option<u64>)>,
    overlays: BTreeSet<(SimTime, u32)>,
    group: Option<OpenSpan<(&'static str, i32)>>,
    rebalance: Option<OpenRebalance>,
    rebalances: u64,
    end: Option<SimTime>,
}

impl<W: Write> TraceWriter<W> {
    /// A trace of a run of `protocol` (its CSV name: `eager`, `consumer`, `manual`, ...)
    /// labelled `label` (shown as the trace's title), written to `out`.
    pub fn new(mut out: W, label: &str, protocol: &str, options: TraceOptions) -> io::Result<Self> {
        let mut head = Vec::new();
        head.extend_from_slice(b"{\"displayTimeUnit\":\"ms\",\"otherData\":{\"run\":");
        json_string(&mut head, label);
        head.extend_from_slice(b",\"time\":\"virtual microseconds\"},\"traceEvents\":[\n");
        out.write_all(&head)?;
        let grouped = !matches!(protocol, "manual" | "tubemq-client" | "tubemq-server");
        Ok(TraceWriter {
            out,
            options,
            grouped,
            first: true,
            stats: TraceStats { events: 0, bytes: head.len() as u64 },
            error: None,
            line: Vec::with_capacity(256),
            named_tracks: BTreeSet::new(),
            named_processes: BTreeSet::new(),
            topics: Vec::new(),
            parts: Vec::new(),
            names: Vec::new(),
            slots: BTreeMap::new(),
            members: Vec::new(),
            unresolved: Vec::new(),
            overlays: BTreeSet::new(),
            group: None,
            rebalance: None,
            rebalances: 0,
            end: None,
        })
    }

    /// Ends every open span at the run's end, writes the counter tracks from `report`'s
    /// timeline (the `timeline.csv` samples) and closes the JSON; returns what was written.
    pub fn finish(mut self, report: &RunReport) -> io::Result<(W, TraceStats)> {
        let end = self.end.unwrap_or(SimTime::ZERO);
        self.advance(end);
        self.close_all(end);
        for row in &report.timeline {
            let at = SimTime::from_secs_f64(row.t_s);
            self.counter("lag", at, row.lag as f64);
            self.counter("down partitions", at, f64::from(row.down_partitions));
            self.counter("members", at, f64::from(row.members));
        }
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        self.out.write_all(b"\n]}\n")?;
        self.stats.bytes += 4;
        self.out.flush()?;
        Ok((self.out, self.stats))
    }

    /// The observer half: feeds the observations of the run into `cell`'s writer.
    pub fn observer(cell: &RefCell<Self>) -> TraceObserver<'_, W> {
        TraceObserver { cell }
    }

    /// The probe half: feeds the events and the group state into `cell`'s writer.
    pub fn probe(cell: &RefCell<Self>) -> TraceProbe<'_, W> {
        TraceProbe { cell }
    }

    fn in_window(&self, at: SimTime) -> bool {
        self.options.window.is_none_or(|(from, to)| at >= from && at < to)
    }

    fn member_kept(&self, name: Option<&str>) -> bool {
        match (&self.options.members, name) {
            (None, _) => true,
            (Some(set), Some(name)) => set.contains(name),
            (Some(_), None) => false,
        }
    }

    // ---- writing ----

    /// Writes the event in `self.line` (a JSON object).
    fn emit(&mut self) {
        if self.error.is_some() {
            return;
        }
        let sep: &[u8] = if self.first { b"" } else { b",\n" };
        self.first = false;
        let result = self.out.write_all(sep).and_then(|()| self.out.write_all(&self.line));
        self.stats.bytes += (sep.len() + self.line.len()) as u64;
        self.stats.events += 1;
        if let Err(e) = result {
            self.error = Some(e);
        }
    }

    fn metadata(&mut self, kind: &str, pid: u32, tid: Option<u32>, key: &str, value: MetaValue) {
        self.line.clear();
        let _ = write!(self.line, "{{\"name\":\"{kind}\",\"ph\":\"M\",\"pid\":{pid}");
        if let Some(tid) = tid {
            let _ = write!(self.line, ",\"tid\":{tid}");
        }
        let _ = write!(self.line, ",\"args\":{{\"{key}\":");
        match value {
            MetaValue::Text(text) => json_string(&mut self.line, &text),
            MetaValue::Number(n) => {
                let _ = write!(self.line, "{n}");
            }
        }
        self.line.extend_from_slice(b"}}");
        self.emit();
    }

    /// Names the track `(pid, tid)` (and its process) before its first event.
    fn ensure_track(&mut self, pid: u32, tid: u32) {
        if self.named_processes.insert(pid) {
            let (name, sort) = match pid {
                COORDINATOR_PID => ("coordinator".to_string(), 0),
                PARTITIONS_PID => ("partitions".to_string(), 1),
                _ => (format!("member {}", self.slot_name(pid - MEMBER_PID_BASE)), pid),
            };
            self.metadata("process_name", pid, None, "name", MetaValue::Text(name));
            self.metadata("process_sort_index", pid, None, "sort_index", MetaValue::Number(sort));
        }
        if tid == 0 || !self.named_tracks.insert((pid, tid)) {
            return;
        }
        let name = match (pid, tid) {
            (COORDINATOR_PID, REBALANCES_TID) => "rebalances".to_string(),
            (COORDINATOR_PID, _) => "group state".to_string(),
            (PARTITIONS_PID, _) => {
                let (topic, partition) =
                    ((tid - 1) / PARTITION_TID_STRIDE, (tid - 1) % PARTITION_TID_STRIDE);
                let topic = self.topics.get(topic as usize).map_or("?", String::as_str);
                format!("{topic}-{partition}")
            }
            (_, STATE_TID) => "state".to_string(),
            (_, COMMITS_TID) => "commits".to_string(),
            _ => "heartbeats".to_string(),
        };
        self.metadata("thread_name", pid, Some(tid), "name", MetaValue::Text(name));
        self.metadata("thread_sort_index", pid, Some(tid), "sort_index", MetaValue::Number(tid));
    }

    /// A complete span `[start, end)` cut to the window; `args` writes the `args` object's
    /// members (without braces). Nothing when empty.
    fn span(
        &mut self,
        track: (u32, u32),
        name: &str,
        cat: &str,
        start: SimTime,
        end: SimTime,
        args: &dyn Fn(&mut Vec<u8>),
    ) {
        let (from, to) = self.options.window.unwrap_or((SimTime::ZERO, SimTime::MAX));
        let (start, end) = (start.max(from), end.min(to));
        if end <= start {
            return;
        }
        self.ensure_track(track.0, track.1);
        self.line.clear();
        self.line.extend_from_slice(b"{\"name\":");
        json_string(&mut self.line, name);
        let _ = write!(self.line, ",\"cat\":\"{cat}\",\"ph\":\"X\",\"ts\":");
        micros(&mut self.line, start);
        self.line.extend_from_slice(b",\"dur\":");
        micros(&mut self.line, end.saturating_sub(start));
        let _ = write!(self.line, ",\"pid\":{},\"tid\":{},\"args\":{{", track.0, track.1);
        args(&mut self.line);
        self.line.extend_from_slice(b"}}");
        self.emit();
    }

    /// An instant on a thread (`s: "t"`), if inside the window.
    fn instant(&mut self, track: (u32, u32), name: &str, cat: &str, at: SimTime) {
        if !self.in_window(at) {
            return;
        }
        self.ensure_track(track.0, track.1);
        self.line.clear();
        self.line.extend_from_slice(b"{\"name\":");
        json_string(&mut self.line, name);
        let _ = write!(self.line, ",\"cat\":\"{cat}\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
        micros(&mut self.line, at);
        let _ = write!(self.line, ",\"pid\":{},\"tid\":{},\"args\":{{}}}}", track.0, track.1);
        self.emit();
    }

    /// A counter sample on the coordinator's process.
    fn counter(&mut self, name: &str, at: SimTime, value: f64) {
        if !self.in_window(at) {
            return;
        }
        self.ensure_track(COORDINATOR_PID, 0);
        self.line.clear();
        self.line.extend_from_slice(b"{\"name\":");
        json_string(&mut self.line, name);
        self.line.extend_from_slice(b",\"cat\":\"counter\",\"ph\":\"C\",\"ts\":");
        micros(&mut self.line, at);
        let _ = write!(
            self.line,
            ",\"pid\":{COORDINATOR_PID},\"tid\":0,\"args\":{{\"value\":{value}}}}}"
        );
        self.emit();
    }

    // ---- partitions ----

    fn on_access(&mut self, at: SimTime, tp: Tp, owner: Option<&Arc<str>>, state: PartState) {
        let (t, p) = (tp.topic as usize, tp.partition as usize);
        if self.parts.len() <= t {
            self.parts.resize_with(t + 1, Vec::new);
        }
        if self.parts[t].len() <= p {
            self.parts[t].resize_with(p + 1, || None);
        }
        let rebalance = self.rebalance.as_ref().map(|r| (r.index, Arc::clone(&r.trigger)));
        let what = PartSpan { state, owner: owner.cloned(), rebalance };
        let before = self.parts[t][p].take();
        if let Some(open) = &before {
            if open.what.state == state && open.what.owner.as_deref() == owner.map(|o| &**o) {
                self.parts[t][p] = before; // no change
                return;
            }
        }
        self.parts[t][p] = Some(OpenSpan { start: at, what });
        if let Some(open) = before {
            self.close_partition(tp, open, at);
        }
    }

    fn close_partition(&mut self, tp: Tp, open: OpenSpan<PartSpan>, end: SimTime) {
        let PartSpan { state, owner, rebalance } = open.what;
        if !self.member_kept(owner.as_deref()) {
            return;
        }
        let tid = tp.topic * PARTITION_TID_STRIDE + tp.partition + 1;
        let name = match (state, &owner) {
            (PartState::Consuming, Some(owner)) => owner.to_string(),
            _ => state.name().to_string(),
        };
        let args = |line: &mut Vec<u8>| {
            line.extend_from_slice(b"\"state\":");
            json_string(line, state.name());
            if let Some(owner) = &owner {
                line.extend_from_slice(b",\"owner\":");
                json_string(line, owner);
            }
            if let Some((index, trigger)) = &rebalance {
                let _ = write!(line, ",\"rebalance\":{index},\"trigger\":");
                json_string(line, trigger);
            }
        };
        self.span((PARTITIONS_PID, tid), &name, "partition", open.start, end, &args);
    }

    // ---- coordinator ----

    /// A trigger while a rebalance is open replaces it, as in the collector (`metrics`), so
    /// the spans are the rows of `rebalances.csv`, with their index.
    fn on_rebalance_started(&mut self, at: SimTime, trigger: &str) {
        self.rebalance =
            Some(OpenRebalance { start: at, index: self.rebalances, trigger: Arc::from(trigger) });
    }

    fn close_rebalance(&mut self, open: OpenRebalance, end: SimTime, done: Option<(u32, u32)>) {
        let name = format!("rebalance {} ({})", open.index, open.trigger);
        let args = |line: &mut Vec<u8>| {
            let _ = write!(line, "\"index\":{},\"trigger\":", open.index);
            json_string(line, &open.trigger);
            if let Some((rounds, members)) = done {
                let _ = write!(line, ",\"rounds\":{rounds},\"members\":{members}");
            }
        };
        self.span((COORDINATOR_PID, REBALANCES_TID), &name, "rebalance", open.start, end, &args);
    }

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
        self.span((COORDINATOR_PID, GROUP_TID), state, "group", open.start, end, &args);
    }

    // ---- members ----

    fn slot_name(&self, slot: u32) -> String {
        match self.names.get(slot as usize) {
            Some(Some(name)) => name.to_string(),
            _ => format!("slot {slot}"),
        }
    }

    fn learn_name(&mut self, slot: u32, name: &str) {
        let s = slot as usize;
        if self.names.len() <= s {
            self.names.resize(s + 1, None);
        }
        if self.names[s].is_none() {
            self.names[s] = Some(Arc::from(name));
            self.slots.insert(name.to_string(), slot);
        }
    }

    fn track(&mut self, slot: u32) -> &mut MemberTrack {
        let s = slot as usize;
        if self.members.len() <= s {
            self.members.resize_with(s + 1, MemberTrack::default);
        }
        &mut self.members[s]
    }

    /// Shows `state` on the member's track from `at` (closing the span shown before).
    fn show(&mut self, slot: u32, at: SimTime, state: &'static str) {
        let track = self.track(slot);
        let incarnation = track.incarnation;
        if track.shown.as_ref().is_some_and(|s| s.what == (state, incarnation)) {
            return;
        }
        let before = track.shown.replace(OpenSpan { start: at, what: (state, incarnation) });
        if let Some(open) = before {
            self.close_member(slot, open, at);
        }
    }

    fn close_member(&mut self, slot: u32, open: OpenSpan<(&'static str, u32)>, end: SimTime) {
        let name = self.names.get(slot as usize).cloned().flatten();
        if !self.member_kept(name.as_deref()) {
            return;
        }
        let (state, incarnation) = open.what;
        let args = |line: &mut Vec<u8>| {
            let _ = write!(line, "\"incarnation\":{incarnation}");
        };
        let pid = MEMBER_PID_BASE + slot;
        self.span((pid, STATE_TID), state, "member", open.start, end, &args);
    }

    /// The member's state under any overlay becomes `state`.
    fn set_base(&mut self, slot: u32, at: SimTime, state: &'static str) {
        let track = self.track(slot);
        track.base = Some(state);
        if track.overlay_until.is_none() {
            self.show(slot, at, state);
        }
    }

    /// A timed state (paused, stalled, disconnected) over the member's state until `until`.
    fn set_overlay(&mut self, slot: u32, at: SimTime, state: &'static str, until: SimTime) {
        self.track(slot).overlay_until = Some(until);
        self.overlays.insert((until, slot));
        self.show(slot, at, state);
    }

    /// Ends the overlays that end by `now`, each at its own end.
    fn advance(&mut self, now: SimTime) {
        while let Some(&(until, slot)) = self.overlays.first() {
            if until > now {
                break;
            }
            self.overlays.pop_first();
            let track = self.track(slot);
            if track.overlay_until != Some(until) {
                continue; // replaced by a later overlay, or ended by a crash
            }
            track.overlay_until = None;
            if let Some(base) = track.base {
                self.show(slot, until, base);
            }
        }
    }

    fn on_fact(&mut self, now: SimTime, fact: MemberFact) {
        match fact {
            MemberFact::JoinArrives { slot, incarnation } => {
                self.track(slot).incarnation = incarnation;
                self.set_base(slot, now, "joining");
            }
            MemberFact::JoinAnswered { slot, incarnation } => {
                self.track(slot).incarnation = incarnation;
                self.set_base(slot, now, "syncing");
            }
            MemberFact::Assigned { slot, incarnation, kip848 } => {
                let track = self.track(slot);
                track.incarnation = incarnation;
                // A KIP-848 heartbeat response assigns only a joining member.
                if !kip848 || track.base == Some("joining") {
                    self.set_base(slot, now, "consuming");
                }
            }
            MemberFact::Heartbeat { slot } => {
                if self.options.heartbeats {
                    let name = self.names.get(slot as usize).cloned().flatten();
                    if self.member_kept(name.as_deref()) {
                        let pid = MEMBER_PID_BASE + slot;
                        self.instant((pid, HEARTBEATS_TID), "heartbeat", "heartbeat", now);
                    }
                }
            }
            MemberFact::Action { kind, member, nanos } => match self.slots.get(&member) {
                Some(&slot) => self.on_action(now, slot, kind, nanos),
                None => self.unresolved.push((now, kind, member, nanos)),
            },
        }
    }

    fn on_action(&mut self, now: SimTime, slot: u32, kind: ActionKind, nanos: Option<u64>) {
        let until = now.saturating_add(SimTime::from_nanos(nanos.unwrap_or(0)));
        match kind {
            ActionKind::Start => {
                let track = self.track(slot);
                track.overlay_until = None;
                track.incarnation += 1;
                let state = if self.grouped { "starting" } else { "running" };
                self.set_base(slot, now, state);
            }
            ActionKind::Crash => {
                self.track(slot).overlay_until = None;
                self.set_base(slot, now, "dead");
            }
            ActionKind::Close => {
                self.track(slot).overlay_until = None;
                self.set_base(slot, now, "closed");
            }
            ActionKind::Pause => self.set_overlay(slot, now, "paused", until),
            ActionKind::Stall => self.set_overlay(slot, now, "stalled", until),
            ActionKind::Disconnect => self.set_overlay(slot, now, "disconnected", until),
        }
    }

    /// After an event: resolve the members of actions whose slot was not known (the world's
    /// members now include a started one), and read the group's state.
    fn after_event(&mut self, view: &WorldView<'_, '_>) {
        if !self.unresolved.is_empty() {
            for member in view.members() {
                self.learn_name(member.conn.slot, &member.name);
            }
            for (at, kind, member, nanos) in std::mem::take(&mut self.unresolved) {
                if let Some(&slot) = self.slots.get(&member) {
                    self.on_action(at, slot, kind, nanos);
                }
            }
        }
        let state = match view.group_state() {
            model::protocols::classic::GroupState::Empty => "Empty",
            model::protocols::classic::GroupState::PreparingRebalance => "PreparingRebalance",
            model::protocols::classic::GroupState::CompletingRebalance => "CompletingRebalance",
            model::protocols::classic::GroupState::Stable => "Stable",
        };
        if self.grouped {
            self.on_group(view.now(), state, view.generation());
        }
    }

    fn close_all(&mut self, end: SimTime) {
        if let Some(open) = self.rebalance.take() {
            self.close_rebalance(open, end, None);
        }
        if let Some(open) = self.group.take() {
            self.close_group(open, end);
        }
        for slot in 0..self.members.len() {
            if let Some(open) = self.members[slot].shown.take() {
                self.close_member(slot as u32, open, end);
            }
        }
        for topic in 0..self.parts.len() {
            for partition in 0..self.parts[topic].len() {
                if let Some(open) = self.parts[topic][partition].take() {
                    let tp = Tp { topic: topic as u32, partition: partition as u32 };
                    self.close_partition(tp, open, end);
                }
            }
        }
    }

    fn observe(&mut self, observation: Observation) {
        match observation {
            Observation::Topics { names, .. } => self.topics = names,
            Observation::Access { at, tp, owner, state, .. } => {
                if let Some(owner) = &owner {
                    self.learn_name(owner.id, &owner.name);
                }
                self.advance(at);
                self.on_access(at, tp, owner.as_ref().map(|o| &o.name), state);
            }
            Observation::RebalanceStarted { at, trigger } => {
                self.on_rebalance_started(at, &trigger)
            }
            Observation::RebalanceEnded { at, rounds, members } => {
                if let Some(open) = self.rebalance.take() {
                    self.close_rebalance(open, at, Some((rounds, members)));
                    self.rebalances += 1;
                }
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

    fn member_instant(&mut self, member: &str, name: &str, at: SimTime) {
        if !self.member_kept(Some(member)) {
            return;
        }
        if let Some(&slot) = self.slots.get(member) {
            self.instant((MEMBER_PID_BASE + slot, COMMITS_TID), name, "commit", at);
        }
    }
}

enum MetaValue {
    Text(String),
    Number(u32),
}

/// Writes `t` in microseconds, exactly: `ns / 1000`, then `.` and the remainder's digits
/// without trailing zeros.
fn micros(line: &mut Vec<u8>, t: SimTime) {
    let ns = t.as_nanos();
    let (whole, frac) = (ns / 1000, ns % 1000);
    if frac == 0 {
        let _ = write!(line, "{whole}");
    } else {
        let digits = format!("{frac:03}");
        let _ = write!(line, "{whole}.{}", digits.trim_end_matches('0'));
    }
}

/// A JSON string literal.
fn json_string(line: &mut Vec<u8>, text: &str) {
    // Writing a &str to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *line, text);
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

    fn observe_access(&mut self, access: AccessRef<'_>) {
        let mut writer = self.cell.borrow_mut();
        if let Some((id, name)) = access.owner {
            writer.learn_name(id, name);
        }
        writer.advance(access.at);
        writer.on_access(access.at, access.tp, access.owner.map(|(_, name)| name), access.state);
    }
}

/// The probe half of a [`TraceWriter`] (see [`TraceWriter::probe`]).
pub struct TraceProbe<'a, W: Write> {
    cell: &'a RefCell<TraceWriter<W>>,
}

impl<W: Write> Probe for TraceProbe<'_, W> {
    fn wants_events(&self) -> bool {
        true
    }

    fn before_event(&mut self, now: SimTime, event: &dyn fmt::Debug) {
        let prefix = Prefix::of(event);
        let mut writer = self.cell.borrow_mut();
        writer.advance(now);
        if let Some(fact) = member_fact(prefix.text()) {
            writer.on_fact(now, fact);
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

    fn observe_access(&mut self, access: AccessRef<'_>) {
        self.first.observe_access(access);
        self.second.observe_access(access);
    }
}
