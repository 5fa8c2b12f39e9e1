//! `[[event]]` entries: parsed per kind, sorted by time, then replayed against the membership
//! so that every event names a member that exists at that moment.
//!
//! Replay rules (shared with the model through `crate::members`): initial members `c0..` are
//! live at t = 0; `join` makes a new or departed name live (a live or crashed-and-restarting
//! name is an error); `leave` and `crash` need a live member; a crash with `restart_after`
//! keeps the name "down" until then; `pause`, `stall`, `disconnect` need a live member;
//! `scale` follows [`crate::scale_plan`]; `rolling-restart` changes no membership, but every
//! one of its steps (its last member back up) must lie inside the run, like any event. (A
//! `scale` happens at one instant: its `at` is the whole check.)

use crate::limits;
use crate::members::valid_member_name;
use crate::reader::{self, Ctx, Section};
use crate::roster::Roster;
use crate::tree::Node;
use crate::types::{Event, EventKind, TopicSpec};
use sim_core::SimTime;
use std::collections::BTreeSet;

/// Event kinds as written in files.
pub(crate) const EVENT_KINDS: &[&str] = &[
    "join",
    "leave",
    "crash",
    "pause",
    "stall",
    "disconnect",
    "rolling-restart",
    "scale",
    "add-partitions",
];

/// The keys each kind accepts besides `at` and `kind`.
fn fields_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "join" | "leave" => &["member"],
        "crash" => &["member", "restart_after"],
        "pause" | "stall" | "disconnect" => &["member", "duration"],
        "rolling-restart" => &["interval", "downtime"],
        "scale" => &["members"],
        "add-partitions" => &["topic", "count"],
        _ => &[],
    }
}

/// `rolling-restart` without `downtime` keeps each member down this long (DESIGN section 7).
pub(crate) const DEFAULT_ROLLING_DOWNTIME: SimTime = SimTime::from_secs(5);

/// One parsed event and the table it came from (for positions in later messages).
pub(crate) struct Parsed<'n> {
    pub event: Event,
    pub index: usize,
    pub node: &'n Node,
}

impl Parsed<'_> {
    /// The key path of this event's field `field`.
    fn key(&self, field: &str) -> String {
        format!("event[{}].{field}", self.index)
    }

    /// The node of `field`, or the whole event table.
    fn field_node(&self, field: &str) -> &Node {
        self.node.get(field).unwrap_or(self.node)
    }
}

/// Parses the `event` array; events that fail to parse are left out (their errors recorded).
/// The result is sorted by `at`, stable.
pub(crate) fn parse_events<'n>(
    ctx: &mut Ctx<'_>,
    node: Option<&'n Node>,
    topics: &[TopicSpec],
) -> Vec<Parsed<'n>> {
    let Some(node) = node else { return Vec::new() };
    let Some(items) = reader::array(ctx, node, "event") else { return Vec::new() };
    if items.len() > limits::MAX_EVENTS {
        let allowed = format!("at most {} events", limits::MAX_EVENTS);
        ctx.at(node, "event", format!("{} events is too many", items.len()), Some(&allowed));
        return Vec::new();
    }
    let mut parsed: Vec<Parsed<'n>> = items
        .iter()
        .enumerate()
        .filter_map(|(index, item)| {
            let event = parse_one(ctx, item, index, topics)?;
            Some(Parsed { event, index, node: item })
        })
        .collect();
    parsed.sort_by_key(|p| p.event.at);
    parsed
}

fn parse_one(ctx: &mut Ctx<'_>, node: &Node, index: usize, topics: &[TopicSpec]) -> Option<Event> {
    let path = format!("event[{index}]");
    let mut section = Section::open(ctx, node, &path)?;
    let at = section.require(ctx, "at", "the event time, e.g. at = \"2m\"");
    let at = at.and_then(|n| reader::duration(ctx, n, &section.key("at")));
    let kind_node = section.require(ctx, "kind", &format!("one of {}", EVENT_KINDS.join(", ")));
    let kind_index =
        kind_node.and_then(|n| reader::choice(ctx, n, &section.key("kind"), EVENT_KINDS));
    let Some(kind_name) = kind_index.map(|i| EVENT_KINDS[i]) else {
        section.take_rest();
        return None;
    };
    let kind = parse_kind(ctx, &mut section, kind_name, topics);
    let mut allowed = vec!["at", "kind"];
    allowed.extend(fields_of(kind_name));
    section.finish(ctx, &allowed);
    Some(Event { at: at?, kind: kind? })
}

fn parse_kind(
    ctx: &mut Ctx<'_>,
    section: &mut Section<'_>,
    kind: &str,
    topics: &[TopicSpec],
) -> Option<EventKind> {
    match kind {
        "join" => Some(EventKind::Join { member: member(ctx, section)? }),
        "leave" => Some(EventKind::Leave { member: member(ctx, section)? }),
        "crash" => parse_crash(ctx, section),
        "pause" | "stall" | "disconnect" => parse_timed(ctx, section, kind),
        "rolling-restart" => parse_rolling(ctx, section),
        "scale" => {
            let node =
                section.require(ctx, "members", "the target member count, e.g. members = 4")?;
            let max = limits::MAX_MEMBERS;
            let members = reader::u32_in(ctx, node, &section.key("members"), 0, max)?;
            Some(EventKind::Scale { members })
        }
        _ => parse_add_partitions(ctx, section, topics),
    }
}

fn member(ctx: &mut Ctx<'_>, section: &mut Section<'_>) -> Option<String> {
    let node = section.require(ctx, "member", "the member's name, e.g. member = \"c1\"")?;
    let key = section.key("member");
    let name = reader::string(ctx, node, &key)?;
    if !valid_member_name(name) {
        let allowed = "1 to 64 characters from A-Z a-z 0-9 . _ -";
        ctx.at(node, &key, format!("`{name}` is not a valid member name"), Some(allowed));
        return None;
    }
    Some(name.to_string())
}

fn parse_crash(ctx: &mut Ctx<'_>, section: &mut Section<'_>) -> Option<EventKind> {
    let member = member(ctx, section);
    let restart_after = match section.take("restart_after") {
        Some(node) => Some(reader::positive_duration(ctx, node, &section.key("restart_after"))?),
        None => None,
    };
    Some(EventKind::Crash { member: member?, restart_after })
}

fn parse_timed(ctx: &mut Ctx<'_>, section: &mut Section<'_>, kind: &str) -> Option<EventKind> {
    let member = member(ctx, section);
    let node = section.require(ctx, "duration", "how long, e.g. duration = \"30s\"");
    let duration = node.and_then(|n| reader::positive_duration(ctx, n, &section.key("duration")));
    let (member, duration) = (member?, duration?);
    Some(match kind {
        "pause" => EventKind::Pause { member, duration },
        "stall" => EventKind::Stall { member, duration },
        _ => EventKind::Disconnect { member, duration },
    })
}

fn parse_rolling(ctx: &mut Ctx<'_>, section: &mut Section<'_>) -> Option<EventKind> {
    let node =
        section.require(ctx, "interval", "the time between two restarts, e.g. interval = \"1m\"");
    let interval = node.and_then(|n| reader::positive_duration(ctx, n, &section.key("interval")));
    let downtime = match section.take("downtime") {
        Some(n) => reader::duration(ctx, n, &section.key("downtime"))?,
        None => DEFAULT_ROLLING_DOWNTIME,
    };
    Some(EventKind::RollingRestart { interval: interval?, downtime })
}

fn parse_add_partitions(
    ctx: &mut Ctx<'_>,
    section: &mut Section<'_>,
    topics: &[TopicSpec],
) -> Option<EventKind> {
    let topic_node = section.require(ctx, "topic", "the name of a [[topic]]");
    let topic = topic_node.and_then(|node| {
        let key = section.key("topic");
        let name = reader::string(ctx, node, &key)?;
        let found = topics.iter().position(|t| t.name == name);
        if found.is_none() {
            let names: Vec<&str> = topics.iter().map(|t| t.name.as_str()).collect();
            let message = reader::unknown_message("topic", name, names.iter().copied());
            ctx.at(node, &key, message, Some(&names.join(", ")));
        }
        found
    });
    let count_node = section.require(ctx, "count", "how many partitions to add, e.g. count = 6");
    let max = limits::MAX_PARTITIONS;
    let count = count_node.and_then(|n| reader::u32_in(ctx, n, &section.key("count"), 1, max));
    Some(EventKind::AddPartitions { topic: topic?, count: count? })
}

/// Replays the sorted events; returns every member name that ever exists.
pub(crate) fn check_timeline(
    ctx: &mut Ctx<'_>,
    events: &[Parsed<'_>],
    initial_members: u32,
    duration: Option<SimTime>,
    topics: &[TopicSpec],
) -> BTreeSet<String> {
    let mut roster = Roster::new(initial_members);
    let mut partitions: u64 = topics.iter().map(|t| u64::from(t.partitions)).sum();
    for parsed in events {
        if let Some(end) = duration {
            if parsed.event.at >= end {
                let message =
                    format!("at {} is not before the end of the run ({end})", parsed.event.at);
                let allowed = format!("times from 0s to before {end}");
                ctx.at(parsed.field_node("at"), &parsed.key("at"), message, Some(&allowed));
                continue;
            }
        }
        roster.restart_due(parsed.event.at);
        if let (Some(end), EventKind::RollingRestart { interval, downtime }) =
            (duration, &parsed.event.kind)
        {
            rolling_restart_fits(ctx, &mut roster, parsed, (*interval, *downtime), end);
        }
        replay(ctx, &mut roster, parsed, &mut partitions);
    }
    roster.ever()
}

/// A rolling restart must end inside the run, like any single event: every member it
/// restarts (those live at its time, in name order, one every `interval`) must be back,
/// `downtime` after its close, before the end. Else the run would cut it short silently.
fn rolling_restart_fits(
    ctx: &mut Ctx<'_>,
    roster: &mut Roster,
    parsed: &Parsed<'_>,
    (interval, downtime): (SimTime, SimTime),
    end: SimTime,
) {
    let at = parsed.event.at;
    let close_of = |step: usize| {
        at.saturating_add(SimTime::from_nanos(interval.as_nanos().saturating_mul(step as u64)))
    };
    let back_of = |step: usize| close_of(step).saturating_add(downtime);
    let count = roster.live_len();
    let step = first_step(count, |step| back_of(step) >= end);
    if step == count {
        return;
    }
    let close = close_of(step);
    let message = format!(
        "the rolling restart does not fit in the run: step {} of {count} ({}) closes at {close} \
         and is back at {}, not before the end of the run ({end})",
        step + 1,
        roster.nth_live(step),
        back_of(step)
    );
    let last = (count - 1) as u64;
    let room = end.saturating_sub(at).saturating_sub(downtime);
    let allowed = if last == 0 || room == SimTime::ZERO {
        format!("at + downtime before the end ({end}): an earlier `at` or a longer `duration`")
    } else {
        let max_interval = SimTime::from_nanos(room.as_nanos() / last);
        format!(
            "at + {last} x interval + downtime before the end ({end}): an interval below \
             {max_interval}, an earlier `at` or a `duration` above {}",
            back_of(count - 1)
        )
    };
    ctx.at(parsed.field_node("interval"), &parsed.key("interval"), message, Some(&allowed));
}

/// The first step in `0..count` where `late` (false, then true as steps grow) holds, or
/// `count`: a binary search, so a rolling restart of 100,000 members costs 17 looks.
fn first_step(count: usize, late: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, count);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if late(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

fn replay(ctx: &mut Ctx<'_>, roster: &mut Roster, parsed: &Parsed<'_>, partitions: &mut u64) {
    let at = parsed.event.at;
    match &parsed.event.kind {
        EventKind::Join { member } => join(ctx, roster, parsed, member),
        EventKind::Leave { member } => {
            if require_live(ctx, roster, parsed, member) {
                roster.remove(member, None);
            }
        }
        EventKind::Crash { member, restart_after } => {
            if require_live(ctx, roster, parsed, member) {
                roster.remove(member, restart_after.map(|after| at.saturating_add(after)));
            }
        }
        EventKind::Pause { member, .. }
        | EventKind::Stall { member, .. }
        | EventKind::Disconnect { member, .. } => {
            require_live(ctx, roster, parsed, member);
        }
        EventKind::RollingRestart { .. } => {}
        EventKind::Scale { members } => scale(ctx, roster, parsed, *members),
        EventKind::AddPartitions { count, .. } => {
            *partitions += u64::from(*count);
            if *partitions > u64::from(limits::MAX_PARTITIONS) {
                let message = format!("brings the partitions to {partitions}, too many");
                let allowed = format!("at most {} partitions in all", limits::MAX_PARTITIONS);
                ctx.at(parsed.field_node("count"), &parsed.key("count"), message, Some(&allowed));
            }
        }
    }
}

fn join(ctx: &mut Ctx<'_>, roster: &mut Roster, parsed: &Parsed<'_>, member: &str) {
    let node = parsed.field_node("member");
    let key = parsed.key("member");
    if roster.is_live(member) {
        let message = format!("`{member}` is already a live member at {}", parsed.event.at);
        ctx.at(node, &key, message, Some("a name that is not live at that time"));
    } else if let Some(restart) = roster.restart_of(member) {
        let message = format!("`{member}` crashed and restarts by itself at {restart}");
        ctx.at(node, &key, message, Some("a name that is not live or restarting"));
    } else if roster.live_len() + roster.down_len() >= limits::MAX_MEMBERS as usize {
        let allowed = format!("at most {} members at a time", limits::MAX_MEMBERS);
        ctx.at(node, &key, "too many members", Some(&allowed));
    } else {
        roster.join(member);
    }
}

/// Records an error unless `member` is live at the event's time.
fn require_live(ctx: &mut Ctx<'_>, roster: &mut Roster, parsed: &Parsed<'_>, member: &str) -> bool {
    if roster.is_live(member) {
        return true;
    }
    let at = parsed.event.at;
    let message = match roster.restart_of(member) {
        Some(restart) => format!("`{member}` is down at {at} (crashed; restarts at {restart})"),
        None if roster.was_member(member) => format!("`{member}` is no longer a member at {at}"),
        None => format!("no member `{member}` exists at {at}"),
    };
    let allowed = format!("members live then: {}", live_list(roster));
    ctx.at(parsed.field_node("member"), &parsed.key("member"), message, Some(&allowed));
    false
}

fn scale(ctx: &mut Ctx<'_>, roster: &mut Roster, parsed: &Parsed<'_>, target: u32) {
    let present = (roster.live_len() + roster.down_len()) as u64;
    let work = present + present.abs_diff(u64::from(target));
    roster.scale_work = roster.scale_work.saturating_add(work);
    if roster.scale_work > limits::MAX_SCALE_WORK {
        if roster.scale_work - work <= limits::MAX_SCALE_WORK {
            let message = format!(
                "the scale events up to this one touch {} member-steps (each counts the \
                 members present and those added or removed)",
                roster.scale_work
            );
            let allowed = format!(
                "at most {} member-steps over all scale events: fewer scale events or smaller \
                 groups",
                limits::MAX_SCALE_WORK
            );
            ctx.at(parsed.field_node("members"), &parsed.key("members"), message, Some(&allowed));
        }
        return;
    }
    if let Err(message) = roster.scale(target as usize) {
        ctx.at(parsed.field_node("members"), &parsed.key("members"), message, None);
    }
}

/// Live names for a message, at most ten.
fn live_list(roster: &mut Roster) -> String {
    let count = roster.live_len();
    let mut text = roster.first_live(10).join(", ");
    if count > 10 {
        text.push_str(&format!(", ... ({count} in all)"));
    }
    if text.is_empty() {
        text.push_str("none");
    }
    text
}
