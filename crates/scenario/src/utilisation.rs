//! Estimated load of the group: the records per second its members must process against what
//! their per-record processing time allows, at the start and after every scripted change of
//! membership or partitions.
//!
//! A group above 100% cannot keep up: lag and latency grow for the whole run and every
//! protocol's figures measure the backlog, not the rebalance. `validate` and `run` warn about
//! it ([`overload_warnings`]) and `run` prints the figure ([`load_timeline`]).
//!
//! The estimate: utilisation = records/s x mean processing time / consuming members, where
//! consuming members are the live ones, at most one per partition (a member without
//! partitions processes nothing). A member processes one record at a time, so its capacity is
//! 1 / mean processing time records/s (docs/kafka-facts.md: the poll loop processes a batch
//! record by record). It ignores pauses, stalls and poll overheads (all only add load) and
//! how unevenly an assignor spreads the partitions (the busiest member carries more).

use crate::types::{EventKind, Scenario};
use sim_core::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The group's load from `at` until the next point.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadPoint {
    /// From when this load holds.
    pub at: SimTime,
    /// What changed the load then (`start`, `crash of c1`, ...).
    pub cause: String,
    /// Live members.
    pub members: u32,
    /// Partitions of all topics.
    pub partitions: u64,
    /// Records produced per second over all partitions.
    pub records_per_s: f64,
    /// Records per second the consuming members can process together.
    pub capacity_per_s: f64,
    /// `records_per_s / capacity_per_s`; `None` when no member is live (or processing is
    /// instantaneous: no limit).
    pub utilisation: Option<f64>,
}

/// A change of membership due at a time (restarts and rolling-restart steps come later than
/// the event that scheduled them).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Change {
    /// A crashed member restarts (`down` -> live).
    Restart(String),
    /// A rolling restart closes a member.
    RollingDown(String),
    /// A rolling restart's member is back.
    RollingUp(String),
}

/// Counts while replaying the events.
struct Replay {
    live: u32,
    /// Crashed members waiting for their restart (they count towards `scale`).
    down: u32,
    partitions: u64,
    records_per_s: f64,
}

/// The load at the start and after each change of membership or partitions, in time order;
/// changes at the same instant are merged into one point (causes joined by `, `).
pub fn load_timeline(scenario: &Scenario) -> Vec<LoadPoint> {
    let mut replay = Replay {
        live: scenario.group.members,
        down: 0,
        partitions: scenario.topics.iter().map(|t| u64::from(t.partitions)).sum(),
        records_per_s: scenario.topics.iter().map(|t| t.rate_per_s * f64::from(t.partitions)).sum(),
    };
    let mut points = vec![point(scenario, &replay, SimTime::ZERO, "start".to_string())];
    let mut pending: BinaryHeap<Reverse<(SimTime, u64, Change)>> = BinaryHeap::new();
    let mut seq: u64 = 0;
    let mut events = scenario.events.iter().peekable();
    loop {
        let next_event = events.peek().map(|e| e.at);
        let next_change = pending.peek().map(|Reverse((at, _, _))| *at);
        let (at, cause) = match (next_event, next_change) {
            (None, None) => break,
            (Some(e), c) if c.is_none_or(|c| e <= c) => {
                let event = events.next().expect("peeked");
                let cause =
                    apply_event(scenario, &mut replay, &event.kind, e, &mut pending, &mut seq);
                (e, cause)
            }
            _ => {
                let Reverse((at, _, change)) = pending.pop().expect("peeked");
                (at, apply_change(&mut replay, change))
            }
        };
        if at >= scenario.duration {
            break;
        }
        let Some(cause) = cause else { continue };
        push_point(&mut points, point(scenario, &replay, at, cause));
    }
    points
}

/// Adds `new`, merged into the last point when both are at the same instant.
fn push_point(points: &mut Vec<LoadPoint>, new: LoadPoint) {
    match points.last_mut() {
        Some(last) if last.at == new.at => {
            let cause = format!("{}, {}", last.cause, new.cause);
            *last = LoadPoint { cause, ..new };
        }
        _ => points.push(new),
    }
}

/// Applies one scripted event; the cause text when it changes membership or partitions.
fn apply_event(
    scenario: &Scenario,
    replay: &mut Replay,
    kind: &EventKind,
    at: SimTime,
    pending: &mut BinaryHeap<Reverse<(SimTime, u64, Change)>>,
    seq: &mut u64,
) -> Option<String> {
    let mut later = |due: SimTime, change: Change| {
        *seq += 1;
        pending.push(Reverse((due, *seq, change)));
    };
    match kind {
        EventKind::Join { member } => {
            replay.live += 1;
            Some(format!("join of {member}"))
        }
        EventKind::Leave { member } => {
            replay.live = replay.live.saturating_sub(1);
            Some(format!("leave of {member}"))
        }
        EventKind::Crash { member, restart_after } => {
            replay.live = replay.live.saturating_sub(1);
            if let Some(after) = restart_after {
                replay.down += 1;
                later(at.saturating_add(*after), Change::Restart(member.clone()));
            }
            Some(format!("crash of {member}"))
        }
        EventKind::RollingRestart { interval, downtime } => {
            // The model restarts the members live at that time, in name order (world.rs).
            for step in 0..u64::from(replay.live) {
                let offset = SimTime::from_nanos(interval.as_nanos().saturating_mul(step));
                let close = at.saturating_add(offset);
                let name = format!("member {}", step + 1);
                later(close, Change::RollingDown(name.clone()));
                later(close.saturating_add(*downtime), Change::RollingUp(name));
            }
            None
        }
        EventKind::Scale { members } => {
            let present = replay.live + replay.down;
            if *members >= present {
                replay.live += members - present;
            } else {
                replay.live = replay.live.saturating_sub(present - members);
            }
            Some(format!("scale to {members}"))
        }
        EventKind::AddPartitions { topic, count } => {
            // Priced at the topic's mean rate: exact without skew; with skew the model gives
            // new partitions the tail of the Zipf weights (model::world::grow_topic), less.
            replay.partitions += u64::from(*count);
            replay.records_per_s += scenario.topics[*topic].rate_per_s * f64::from(*count);
            Some(format!("{count} partitions added"))
        }
        EventKind::Pause { .. } | EventKind::Stall { .. } | EventKind::Disconnect { .. } => None,
    }
}

/// Applies a due restart or rolling step; its cause text.
fn apply_change(replay: &mut Replay, change: Change) -> Option<String> {
    Some(match change {
        Change::Restart(name) => {
            replay.down = replay.down.saturating_sub(1);
            replay.live += 1;
            format!("restart of {name}")
        }
        Change::RollingDown(name) => {
            replay.live = replay.live.saturating_sub(1);
            format!("rolling restart: {name} down")
        }
        Change::RollingUp(name) => {
            replay.live += 1;
            format!("rolling restart: {name} back")
        }
    })
}

/// The load under the current counts.
fn point(scenario: &Scenario, replay: &Replay, at: SimTime, cause: String) -> LoadPoint {
    let records_per_s = replay.records_per_s;
    let consuming = u64::from(replay.live).min(replay.partitions);
    let per_member = member_capacity_per_s(scenario);
    let capacity_per_s = per_member.map_or(f64::INFINITY, |c| c * consuming as f64);
    let utilisation =
        (consuming > 0 && capacity_per_s.is_finite()).then(|| records_per_s / capacity_per_s);
    LoadPoint {
        at,
        cause,
        members: replay.live,
        partitions: replay.partitions,
        records_per_s,
        capacity_per_s,
        utilisation,
    }
}

/// Records per second one member can process: 1 / mean processing time (`None`: no limit).
fn member_capacity_per_s(scenario: &Scenario) -> Option<f64> {
    let mean_s = scenario.consumer.processing.mean().as_secs_f64();
    (mean_s > 0.0).then(|| 1.0 / mean_s)
}

/// The highest utilisation over the run, if any member is ever live.
pub fn peak_utilisation(points: &[LoadPoint]) -> Option<f64> {
    points.iter().filter_map(|p| p.utilisation).reduce(f64::max)
}

/// One warning per time the group enters overload (utilisation >= 100%), with the numbers,
/// and one for a partition too hot for any single member.
pub fn overload_warnings(scenario: &Scenario) -> Vec<String> {
    let points = load_timeline(scenario);
    let mut out = Vec::new();
    let mut overloaded = false;
    for p in &points {
        let now = p.utilisation.is_some_and(|u| u >= 1.0);
        if now && !overloaded {
            out.push(overload_text(scenario, p));
        }
        overloaded = now;
    }
    out.extend(hot_partition(scenario));
    out
}

fn overload_text(scenario: &Scenario, p: &LoadPoint) -> String {
    let consuming = u64::from(p.members).min(p.partitions);
    format!(
        "overload: at {} ({}) {consuming} consuming members must process {:.0} records/s \
         and can process {:.0} (processing {} per record): utilisation {:.0}%; lag and latency \
         grow for as long as it lasts and the figures measure the backlog",
        p.at,
        p.cause,
        p.records_per_s,
        p.capacity_per_s,
        scenario.consumer.processing.mean(),
        p.utilisation.unwrap_or(0.0) * 100.0
    )
}

/// A partition whose own rate exceeds what one member can process: no assignment helps.
fn hot_partition(scenario: &Scenario) -> Option<String> {
    let capacity = member_capacity_per_s(scenario)?;
    let (name, rate) = scenario
        .topics
        .iter()
        .map(|t| (t.name.as_str(), hottest_partition_rate(t.rate_per_s, t.partitions, t.skew)))
        .reduce(|best, t| if t.1 > best.1 { t } else { best })?;
    (rate >= capacity).then(|| {
        format!(
            "overload: partition 0 of topic `{name}` receives {rate:.0} records/s, at or above \
             what one member can process ({capacity:.0}): no assignment lets it keep up"
        )
    })
}

/// The rate of partition 0 under Zipf skew (weights `1 / (i + 1)^skew`, mean `rate_per_s`;
/// model::workload::skewed_rates).
fn hottest_partition_rate(rate_per_s: f64, partitions: u32, skew: f64) -> f64 {
    let weights: f64 = (0..partitions).map(|i| 1.0 / f64::from(i + 1).powf(skew)).sum();
    rate_per_s * f64::from(partitions) / weights
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The issue's group: 40 members, 2 x 60 partitions at `rate`/s, 5 ms per record.
    fn group(rate: f64, events: &str) -> Scenario {
        let text = format!(
            "name = \"g\"\nduration = \"30m\"\nprotocols = [\"eager\"]\n\
             [[topic]]\nname = \"a\"\npartitions = 60\nrate = {rate}\n\
             [[topic]]\nname = \"b\"\npartitions = 60\nrate = {rate}\n\
             [consumer]\nprocessing = \"5ms\"\n[group]\nmembers = 40\n{events}"
        );
        crate::parse_str(&text, std::path::Path::new("g.toml")).unwrap()
    }

    #[test]
    fn the_issues_group_is_at_300_percent() {
        let s = group(200.0, "");
        let points = load_timeline(&s);
        assert_eq!(points.len(), 1);
        let p = &points[0];
        assert_eq!((p.members, p.partitions), (40, 120));
        assert_eq!(p.records_per_s, 24_000.0);
        assert!((p.capacity_per_s - 8_000.0).abs() < 1e-6, "{}", p.capacity_per_s);
        assert!((p.utilisation.unwrap() - 3.0).abs() < 1e-9);
        let w = overload_warnings(&s);
        assert_eq!(w.len(), 2, "{w:?}");
        // 200 records/s at 5 ms each is exactly one member's capacity.
        assert!(w[1].starts_with("overload: partition 0 of topic `a` receives 200 records/s, at or above what one member can process (200)"), "{}", w[1]);
        assert!(w[0].starts_with("overload: at 0s (start) 40 consuming members must process 24000 records/s and can process 8000 (processing 5ms per record): utilisation 300%"), "{}", w[0]);
    }

    #[test]
    fn sixty_percent_is_quiet() {
        let s = group(40.0, "");
        assert!((peak_utilisation(&load_timeline(&s)).unwrap() - 0.6).abs() < 1e-9);
        assert!(overload_warnings(&s).is_empty());
    }

    #[test]
    fn a_crash_tips_a_full_group_over_and_its_restart_brings_it_back() {
        // 80/s x 120 x 5ms = 48 busy members; 40 -> 100% ... use 66.0/s: 39.6 of 40 (99%).
        let s = group(
            66.0,
            "[[event]]\nat = \"1m\"\nkind = \"crash\"\nmember = \"c3\"\nrestart_after = \"30s\"\n",
        );
        let points = load_timeline(&s);
        let u: Vec<(String, u32, i64)> = points
            .iter()
            .map(|p| {
                (p.at.to_string(), p.members, (p.utilisation.unwrap() * 1000.0).round() as i64)
            })
            .collect();
        assert_eq!(
            u,
            [("0s".into(), 40, 990), ("1m00s".into(), 39, 1015), ("1m30s".into(), 40, 990)]
        );
        let w = overload_warnings(&s);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("overload: at 1m00s (crash of c3) 39 consuming members"),
            "{}",
            w[0]
        );
        assert!(w[0].contains("utilisation 102%"), "{}", w[0]);
    }

    #[test]
    fn a_rolling_restart_takes_one_member_out_at_a_time() {
        let s =
            group(66.0, "[[event]]\nat = \"1m\"\nkind = \"rolling-restart\"\ninterval = \"10s\"\n");
        let points = load_timeline(&s);
        // start, then 40 steps of (down, back): 5 s down every 10 s.
        assert_eq!(points.len(), 81);
        assert_eq!((points[1].at, points[1].members), (SimTime::from_secs(60), 39));
        assert_eq!((points[2].at, points[2].members), (SimTime::from_secs(65), 40));
        assert_eq!(points[1].cause, "rolling restart: member 1 down");
        // Each step enters overload again: one warning per entry.
        assert_eq!(overload_warnings(&s).len(), 40);
    }

    #[test]
    fn idle_members_beyond_the_partition_count_add_no_capacity() {
        let text = "name = \"g\"\nduration = \"1m\"\nprotocols = [\"eager\"]\n\
                    [[topic]]\nname = \"a\"\npartitions = 2\nrate = 150.0\n\
                    [consumer]\nprocessing = \"5ms\"\n[group]\nmembers = 10\n";
        let s = crate::parse_str(text, std::path::Path::new("g.toml")).unwrap();
        // 300 records/s, 2 consuming members of 200/s each: 75%, not 15%.
        assert!((peak_utilisation(&load_timeline(&s)).unwrap() - 0.75).abs() < 1e-9);
    }

    #[test]
    fn a_skewed_partition_hotter_than_one_member_is_named() {
        let text = "name = \"g\"\nduration = \"1m\"\nprotocols = [\"eager\"]\n\
                    [[topic]]\nname = \"hot\"\npartitions = 3\nrate = 150.0\nskew = 1.0\n\
                    [consumer]\nprocessing = \"5ms\"\n[group]\nmembers = 3\n";
        let s = crate::parse_str(text, std::path::Path::new("g.toml")).unwrap();
        // 450/s over weights 1, 1/2, 1/3 (11/6): partition 0 gets 245.5/s > 200/s.
        let w = overload_warnings(&s);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("partition 0 of topic `hot` receives 245 records/s"), "{}", w[0]);
    }

    #[test]
    fn added_partitions_raise_the_load_at_their_topics_rate() {
        let s = group(
            40.0,
            "[[event]]\nat = \"2m\"\nkind = \"add-partitions\"\ntopic = \"b\"\ncount = 60\n",
        );
        let points = load_timeline(&s);
        assert_eq!(points.len(), 2);
        assert_eq!(points[1].records_per_s, 7_200.0);
        assert!((points[1].utilisation.unwrap() - 0.9).abs() < 1e-9);
    }
}
