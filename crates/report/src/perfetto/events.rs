//! The trace's events and tracks, shared by both sources of a trace: the run itself
//! ([`super::live`], `run --trace`) and the files a run wrote ([`super::files`], `trace`).
//! An [`EventWriter`] streams the JSON: the head, each event as it is finished (named tracks
//! first: a track's `M` metadata events come before its first event), the tail. What both
//! sources show alike is written here, so they write it alike: a partition's span
//! ([`EventWriter::partition_span`]), a rebalance's span ([`EventWriter::rebalance_span`]),
//! the counters of a `timeline.csv` sample ([`EventWriter::counters`]), and which rebalance
//! a partition span began in ([`Rebalances`]). The window and the member filter of
//! [`TraceOptions`] are applied here too.

use super::{TraceOptions, TraceStats};
use model::Tp;
use sim_core::SimTime;
use std::collections::BTreeSet;
use std::io::{self, Write};
use std::sync::Arc;

/// The coordinator's process id.
pub(super) const COORDINATOR_PID: u32 = 1;
/// The partitions' process id.
pub(super) const PARTITIONS_PID: u32 = 2;
/// Member slot `s` is process `MEMBER_PID_BASE + s`.
pub(super) const MEMBER_PID_BASE: u32 = 10;
/// Partition `p` of topic `t` is thread `t * PARTITION_TID_STRIDE + p + 1` of the partitions.
pub(super) const PARTITION_TID_STRIDE: u32 = 1_000_000;
/// Member threads.
pub(super) const STATE_TID: u32 = 1;
pub(super) const COMMITS_TID: u32 = 2;
pub(super) const HEARTBEATS_TID: u32 = 3;
/// Coordinator threads.
pub(super) const REBALANCES_TID: u32 = 1;
pub(super) const GROUP_TID: u32 = 2;

/// A rebalance as its span shows it: a `rebalances.csv` row.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct RebalanceSpan {
    /// Its index in the run.
    pub(super) index: u64,
    /// What started it.
    pub(super) trigger: Arc<str>,
    /// The coordinator's trigger.
    pub(super) start: SimTime,
    /// Every member has its new assignment (or the run ended).
    pub(super) end: SimTime,
    /// Rounds and members, once it completed (`None`: open at the end of the run).
    pub(super) done: Option<(u32, u32)>,
}

/// The rebalances of a run in time order, and the one still open: which one a partition span
/// began in.
#[derive(Debug, Default)]
pub(super) struct Rebalances {
    closed: Vec<RebalanceSpan>,
    open: Option<(SimTime, Arc<str>)>,
}

impl Rebalances {
    /// A rebalance starts at `at`; one still open is replaced (as the collector does, so the
    /// rebalances are the rows of `rebalances.csv`).
    pub(super) fn start(&mut self, at: SimTime, trigger: &str) {
        self.open = Some((at, Arc::from(trigger)));
    }

    /// The open rebalance ends at `at` (`done`: its rounds and members); the span, if one was
    /// open.
    pub(super) fn end(&mut self, at: SimTime, done: Option<(u32, u32)>) -> Option<RebalanceSpan> {
        let (start, trigger) = self.open.take()?;
        let span = RebalanceSpan { index: self.closed.len() as u64, trigger, start, end: at, done };
        self.push(span.clone());
        Some(span)
    }

    /// A rebalance read from a file (rows in time order; checked by the reader).
    pub(super) fn push(&mut self, span: RebalanceSpan) {
        self.closed.push(span);
    }

    /// The last closed rebalance (its end), if any.
    pub(super) fn last_end(&self) -> Option<SimTime> {
        self.closed.last().map(|r| r.end)
    }

    /// The rebalance open at `at` (`start <= at < end`, or still open), with its index.
    pub(super) fn at(&self, at: SimTime) -> Option<(u64, &Arc<str>)> {
        if let Some((start, trigger)) = &self.open {
            if *start <= at {
                return Some((self.closed.len() as u64, trigger));
            }
        }
        let after = self.closed.partition_point(|r| r.start <= at);
        let span = self.closed[..after].last()?;
        (at < span.end).then_some((span.index, &span.trigger))
    }
}

/// A value of an `M` metadata event.
enum MetaValue {
    Text(String),
    Number(u32),
}

/// Streams one trace's events to `W` (see the module doc).
pub(super) struct EventWriter<W: Write> {
    out: W,
    pub(super) options: TraceOptions,
    first: bool,
    stats: TraceStats,
    error: Option<io::Error>,
    line: Vec<u8>,
    named_tracks: BTreeSet<(u32, u32)>,
    named_processes: BTreeSet<u32>,
    /// Topic names by index (`Tp::topic`).
    topics: Vec<String>,
    /// Member names by slot (for the members' process names).
    names: Vec<Option<Arc<str>>>,
}

impl<W: Write> EventWriter<W> {
    /// A trace labelled `label` (its title); `source`, if any, says what it was built from.
    pub(super) fn new(
        mut out: W,
        label: &str,
        source: Option<&str>,
        options: TraceOptions,
    ) -> io::Result<Self> {
        let mut head = Vec::new();
        head.extend_from_slice(b"{\"displayTimeUnit\":\"ms\",\"otherData\":{\"run\":");
        json_string(&mut head, label);
        head.extend_from_slice(b",\"time\":\"virtual microseconds\"");
        if let Some(source) = source {
            head.extend_from_slice(b",\"source\":");
            json_string(&mut head, source);
        }
        head.extend_from_slice(b"},\"traceEvents\":[\n");
        out.write_all(&head)?;
        Ok(EventWriter {
            out,
            options,
            first: true,
            stats: TraceStats { events: 0, bytes: head.len() as u64 },
            error: None,
            line: Vec::with_capacity(256),
            named_tracks: BTreeSet::new(),
            named_processes: BTreeSet::new(),
            topics: Vec::new(),
            names: Vec::new(),
        })
    }

    /// Closes the JSON: the output and what was written, or the first write error.
    pub(super) fn finish(mut self) -> io::Result<(W, TraceStats)> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        self.out.write_all(b"\n]}\n")?;
        self.stats.bytes += 4;
        self.out.flush()?;
        Ok((self.out, self.stats))
    }

    /// The topics' names, by index.
    pub(super) fn set_topics(&mut self, names: Vec<String>) {
        self.topics = names;
    }

    /// The index of topic `name`, a new one (the next) if it is not known yet.
    pub(super) fn topic_index(&mut self, name: &str) -> u32 {
        match self.topics.iter().position(|t| t == name) {
            Some(i) => i as u32,
            None => {
                self.topics.push(name.to_string());
                (self.topics.len() - 1) as u32
            }
        }
    }

    /// The member in `slot` is `name` (its process is named after it).
    pub(super) fn name_member(&mut self, slot: u32, name: &Arc<str>) {
        let s = slot as usize;
        if self.names.len() <= s {
            self.names.resize(s + 1, None);
        }
        if self.names[s].is_none() {
            self.names[s] = Some(Arc::clone(name));
        }
    }

    /// The name of the member in `slot`, if known.
    pub(super) fn member_name(&self, slot: u32) -> Option<&Arc<str>> {
        self.names.get(slot as usize).and_then(Option::as_ref)
    }

    /// Whether `at` is inside the window.
    pub(super) fn in_window(&self, at: SimTime) -> bool {
        self.options.window.is_none_or(|(from, to)| at >= from && at < to)
    }

    /// Whether the member filter keeps what `name` owns or does (`None`: no member).
    pub(super) fn member_kept(&self, name: Option<&str>) -> bool {
        match (&self.options.members, name) {
            (None, _) => true,
            (Some(set), Some(name)) => set.contains(name),
            (Some(_), None) => false,
        }
    }

    // ---- what both sources show ----

    /// The span of partition `tp` over `[start, end)`: named by its owner while consuming,
    /// else by its state; args `state`, `owner`, and the rebalance it began in. Left out when
    /// the member filter drops its owner.
    pub(super) fn partition_span(
        &mut self,
        tp: Tp,
        (start, end): (SimTime, SimTime),
        owner: Option<&str>,
        state: &str,
        rebalance: Option<(u64, &Arc<str>)>,
    ) {
        if !self.member_kept(owner) {
            return;
        }
        let tid = tp.topic * PARTITION_TID_STRIDE + tp.partition + 1;
        let name = match owner {
            Some(owner) if state == "consuming" => owner,
            _ => state,
        };
        let args = |line: &mut Vec<u8>| {
            line.extend_from_slice(b"\"state\":");
            json_string(line, state);
            if let Some(owner) = owner {
                line.extend_from_slice(b",\"owner\":");
                json_string(line, owner);
            }
            if let Some((index, trigger)) = rebalance {
                let _ = write!(line, ",\"rebalance\":{index},\"trigger\":");
                json_string(line, trigger);
            }
        };
        self.span((PARTITIONS_PID, tid), name, "partition", start, end, &args);
    }

    /// A rebalance's span on the coordinator: `rebalance 3 (leave)`, args index, trigger and
    /// (once completed) rounds and members.
    pub(super) fn rebalance_span(&mut self, r: &RebalanceSpan) {
        let name = format!("rebalance {} ({})", r.index, r.trigger);
        let args = |line: &mut Vec<u8>| {
            let _ = write!(line, "\"index\":{},\"trigger\":", r.index);
            json_string(line, &r.trigger);
            if let Some((rounds, members)) = r.done {
                let _ = write!(line, ",\"rounds\":{rounds},\"members\":{members}");
            }
        };
        let track = (COORDINATOR_PID, REBALANCES_TID);
        self.span(track, &name, "rebalance", r.start, r.end, &args);
    }

    /// The counters of one `timeline.csv` sample: lag, down partitions, members.
    pub(super) fn counters(&mut self, t_s: f64, lag: u64, down_partitions: u32, members: u32) {
        let at = SimTime::from_secs_f64(t_s);
        self.counter("lag", at, lag as f64);
        self.counter("down partitions", at, f64::from(down_partitions));
        self.counter("members", at, f64::from(members));
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

    fn slot_name(&self, slot: u32) -> String {
        match self.member_name(slot) {
            Some(name) => name.to_string(),
            None => format!("slot {slot}"),
        }
    }

    /// A complete span `[start, end)` cut to the window; `args` writes the `args` object's
    /// members (without braces). Nothing when empty.
    pub(super) fn span(
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
    pub(super) fn instant(&mut self, track: (u32, u32), name: &str, cat: &str, at: SimTime) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: u64) -> SimTime {
        SimTime::from_secs(secs)
    }

    #[test]
    fn a_time_holds_one_rebalance_at_most_and_the_open_one_counts() {
        let mut r = Rebalances::default();
        r.start(s(1), "join");
        assert_eq!(r.at(s(1)).map(|(i, t)| (i, t.to_string())), Some((0, "join".into())));
        r.start(s(2), "leave"); // replaces the open one
        assert_eq!(r.at(s(1)), None);
        let done = r.end(s(4), Some((1, 3))).expect("an open rebalance");
        assert_eq!((done.index, done.start, done.end), (0, s(2), s(4)));
        assert_eq!(r.at(s(3)).map(|(i, _)| i), Some(0));
        assert_eq!(r.at(s(4)), None, "the end is not inside");
        r.start(s(6), "session-expiry");
        assert_eq!(r.at(s(5)), None);
        assert_eq!(r.at(s(7)).map(|(i, t)| (i, t.to_string())), Some((1, "session-expiry".into())));
        assert_eq!(r.end(s(8), None).map(|r| r.index), Some(1));
        assert_eq!(r.last_end(), Some(s(8)));
        assert_eq!(r.end(s(9), None), None, "nothing open");
    }

    #[test]
    fn microseconds_are_exact() {
        let text = |ns: u64| {
            let mut line = Vec::new();
            micros(&mut line, SimTime::from_nanos(ns));
            String::from_utf8(line).unwrap()
        };
        assert_eq!(text(6_002_000_000), "6002000");
        assert_eq!(text(162_002_500_000), "162002500");
        assert_eq!(text(162_005_605_447), "162005605.447");
        assert_eq!(text(1_500), "1.5");
    }
}
