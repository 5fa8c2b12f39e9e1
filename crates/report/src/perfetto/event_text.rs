//! What a trace needs from the model's queued events, read from the first bytes of their
//! `Debug` text (the only view of an event a [`model::Probe`] gets): which member sent a
//! JoinGroup or a heartbeat, which received a join or sync response, and the scenario's
//! actions (start, crash, close, pause, stall, disconnect) with their member and duration.
//!
//! The text is the derived `Debug` of `model::world::Ev` (`ToCoord(Join { conn: Conn { slot:
//! 3, incarnation: 1 }, ..`, `ToMember(Conn { .. }, Sync(Ok(..`, `Action(Pause("c1",
//! SimTime(30000000000)))`). Only a bounded prefix is formatted ([`Prefix`]); an event whose
//! text does not match any pattern is no member fact. The unit tests below pin the patterns,
//! and `tests/perfetto.rs` checks them against a real run.

use std::fmt::{self, Write};

/// Bytes of an event's `Debug` text kept: enough for every pattern below and a member name
/// of up to about 60 bytes.
const PREFIX_BYTES: usize = 112;

/// The first [`PREFIX_BYTES`] bytes of a `Debug` text; formatting stops (with `fmt::Error`)
/// once they are full, so a long event (an assignment of 10,000 partitions) costs no more.
pub(super) struct Prefix {
    bytes: [u8; PREFIX_BYTES],
    len: usize,
}

impl Prefix {
    /// The prefix of `event`'s `Debug` text.
    pub(super) fn of(event: &dyn fmt::Debug) -> Prefix {
        let mut prefix = Prefix { bytes: [0; PREFIX_BYTES], len: 0 };
        let _ = write!(prefix, "{event:?}"); // Err only when full: the prefix is what we want
        prefix
    }

    /// The text (cut at a character boundary).
    pub(super) fn text(&self) -> &str {
        match std::str::from_utf8(&self.bytes[..self.len]) {
            Ok(text) => text,
            Err(e) => std::str::from_utf8(&self.bytes[..e.valid_up_to()]).unwrap_or(""),
        }
    }
}

impl Write for Prefix {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = PREFIX_BYTES - self.len;
        let take = s.len().min(room);
        self.bytes[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        if take < s.len() {
            Err(fmt::Error)
        } else {
            Ok(())
        }
    }
}

/// A member fact read from an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum MemberFact {
    /// The coordinator receives a JoinGroup (classic) or a joining heartbeat (KIP-848, epoch 0).
    JoinArrives { slot: u32, incarnation: u32 },
    /// The member receives a successful JoinGroup response: it sends SyncGroup.
    JoinAnswered { slot: u32, incarnation: u32 },
    /// The member receives its assignment (SyncGroup response, or a KIP-848 heartbeat
    /// response).
    Assigned { slot: u32, incarnation: u32, kip848: bool },
    /// The coordinator receives a heartbeat (classic or KIP-848 with epoch > 0).
    Heartbeat { slot: u32 },
    /// A scenario action on a named member; `nanos` is its duration, if it has one.
    Action { kind: ActionKind, member: String, nanos: Option<u64> },
}

/// The scenario actions a member track shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ActionKind {
    /// The process starts (a first start or a restart).
    Start,
    /// It dies (no commit, no LeaveGroup).
    Crash,
    /// Graceful close.
    Close,
    /// Frozen for a duration.
    Pause,
    /// The current batch takes longer by a duration.
    Stall,
    /// Cut off from the coordinator and brokers for a duration.
    Disconnect,
}

/// The member fact of an event's `Debug` text, if any.
pub(super) fn member_fact(text: &str) -> Option<MemberFact> {
    if let Some(rest) = text.strip_prefix("ToCoord(") {
        return coordinator_message(rest);
    }
    if let Some(rest) = text.strip_prefix("ToMember(") {
        let (slot, incarnation, rest) = conn(rest)?;
        let rest = rest.strip_prefix(", ")?;
        if rest.starts_with("Join(Ok(") {
            return Some(MemberFact::JoinAnswered { slot, incarnation });
        }
        if rest.starts_with("Sync(Ok(") {
            return Some(MemberFact::Assigned { slot, incarnation, kip848: false });
        }
        if rest.starts_with("ConsumerHeartbeat(Ok(") {
            return Some(MemberFact::Assigned { slot, incarnation, kip848: true });
        }
        return None;
    }
    let rest = text.strip_prefix("Action(")?;
    action(rest)
}

fn coordinator_message(rest: &str) -> Option<MemberFact> {
    if let Some(rest) = rest.strip_prefix("Join { conn: ") {
        let (slot, incarnation, _) = conn(rest)?;
        return Some(MemberFact::JoinArrives { slot, incarnation });
    }
    if let Some(rest) = rest.strip_prefix("Heartbeat { conn: ") {
        let (slot, _, _) = conn(rest)?;
        return Some(MemberFact::Heartbeat { slot });
    }
    let rest = rest.strip_prefix("ConsumerHeartbeat(CgHeartbeat { conn: ")?;
    let (slot, incarnation, rest) = conn(rest)?;
    // `, name: "c0", member_id: .., member_epoch: 0`: epoch 0 joins.
    let epoch = rest.split("member_epoch: ").nth(1).map(leading_number);
    match epoch {
        Some(Some(0)) => Some(MemberFact::JoinArrives { slot, incarnation }),
        _ => Some(MemberFact::Heartbeat { slot }),
    }
}

fn action(rest: &str) -> Option<MemberFact> {
    const KINDS: [(&str, ActionKind); 6] = [
        ("Start(", ActionKind::Start),
        ("Crash(", ActionKind::Crash),
        ("Close(", ActionKind::Close),
        ("Pause(", ActionKind::Pause),
        ("Stall(", ActionKind::Stall),
        ("Disconnect(", ActionKind::Disconnect),
    ];
    let (kind, rest) =
        KINDS.iter().find_map(|(head, kind)| rest.strip_prefix(head).map(|r| (*kind, r)))?;
    let rest = rest.strip_prefix('"')?;
    let close = rest.find('"')?;
    let member = rest[..close].to_string();
    let after = &rest[close + 1..];
    let nanos = after.strip_prefix(", SimTime(").and_then(leading_number);
    Some(MemberFact::Action { kind, member, nanos })
}

/// `Conn { slot: 3, incarnation: 1 }` at the start of `text`: slot, incarnation, the rest.
fn conn(text: &str) -> Option<(u32, u32, &str)> {
    let rest = text.strip_prefix("Conn { slot: ")?;
    let (slot, rest) = number(rest)?;
    let rest = rest.strip_prefix(", incarnation: ")?;
    let (incarnation, rest) = number(rest)?;
    let rest = rest.strip_prefix(" }")?;
    Some((u32::try_from(slot).ok()?, u32::try_from(incarnation).ok()?, rest))
}

fn number(text: &str) -> Option<(u64, &str)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let value = text[..digits].parse().ok()?;
    Some((value, &text[digits..]))
}

fn leading_number(text: &str) -> Option<u64> {
    number(text).map(|(value, _)| value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_stops_at_its_size() {
        let long = "x".repeat(500);
        let prefix = Prefix::of(&long);
        assert_eq!(prefix.text().len(), PREFIX_BYTES);
        assert!(prefix.text().starts_with("\"xxx"));
    }

    #[test]
    fn the_patterns_of_the_model_events_are_read() {
        let join = "ToCoord(Join { conn: Conn { slot: 3, incarnation: 2 }, name: \"c3\"";
        assert_eq!(member_fact(join), Some(MemberFact::JoinArrives { slot: 3, incarnation: 2 }));
        let answered = "ToMember(Conn { slot: 12, incarnation: 1 }, Join(Ok(JoinOk {";
        let want = MemberFact::JoinAnswered { slot: 12, incarnation: 1 };
        assert_eq!(member_fact(answered), Some(want));
        let synced = "ToMember(Conn { slot: 0, incarnation: 1 }, Sync(Ok(SyncOk";
        let want = MemberFact::Assigned { slot: 0, incarnation: 1, kip848: false };
        assert_eq!(member_fact(synced), Some(want));
        let refused = "ToMember(Conn { slot: 0, incarnation: 1 }, Sync(Err(RebalanceInProgress";
        assert_eq!(member_fact(refused), None);
        let beat = "ToCoord(Heartbeat { conn: Conn { slot: 7, incarnation: 1 }, member_id";
        assert_eq!(member_fact(beat), Some(MemberFact::Heartbeat { slot: 7 }));
        let cg = "ToCoord(ConsumerHeartbeat(CgHeartbeat { conn: Conn { slot: 1, incarnation: 1 }, name: \"c1\", member_id: None, member_epoch: 0,";
        assert_eq!(member_fact(cg), Some(MemberFact::JoinArrives { slot: 1, incarnation: 1 }));
        let cg = "ToCoord(ConsumerHeartbeat(CgHeartbeat { conn: Conn { slot: 1, incarnation: 1 }, name: \"c1\", member_id: Some(MemberId(4)), member_epoch: 5,";
        assert_eq!(member_fact(cg), Some(MemberFact::Heartbeat { slot: 1 }));
        let pause = "Action(Pause(\"c1\", SimTime(30000000000)))";
        let want = MemberFact::Action {
            kind: ActionKind::Pause,
            member: "c1".into(),
            nanos: Some(3e10 as u64),
        };
        assert_eq!(member_fact(pause), Some(want));
        let crash = "Action(Crash(\"c10\", None))";
        let want =
            MemberFact::Action { kind: ActionKind::Crash, member: "c10".into(), nanos: None };
        assert_eq!(member_fact(crash), Some(want));
        assert_eq!(member_fact("Action(Scale(4))"), None);
        assert_eq!(member_fact("MemberTimer(Conn { slot: 0, incarnation: 1 }, Poll)"), None);
    }
}
