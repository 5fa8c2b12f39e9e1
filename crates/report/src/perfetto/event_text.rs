//! The heartbeats of `run --trace --trace-heartbeats`, read from the first bytes of each
//! queued event's `Debug` text (the only view of an event a [`model::Probe`] gets): which
//! member's heartbeat the coordinator receives. Member states no longer come from here (the
//! model reports them: `Observation::MemberState`); a heartbeat is no state change, and an
//! observation per heartbeat would cost every run, traced or not.
//!
//! The text is the derived `Debug` of `model::world::Ev` (`ToCoord(Heartbeat { conn: Conn {
//! slot: 3, incarnation: 1 }, ..`, `ToCoord(ConsumerHeartbeat(CgHeartbeat { conn: .., name:
//! "c0", member_id: .., member_epoch: 5, ..`). Only a bounded prefix is formatted
//! ([`Prefix`]), and only when heartbeats are asked for. The unit tests below pin the
//! patterns, and `crates/lab/tests/trace.rs` counts a real run's heartbeats.

use std::fmt::{self, Write};

/// Bytes of an event's `Debug` text kept: enough for both patterns and a member name of up to
/// about 60 bytes (the KIP-848 epoch follows the name).
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

/// The member slot of a heartbeat the coordinator receives (classic, or KIP-848 with an epoch
/// other than 0: an epoch-0 heartbeat is a join), if the event is one.
pub(super) fn heartbeat_slot(text: &str) -> Option<u32> {
    let rest = text.strip_prefix("ToCoord(")?;
    if let Some(rest) = rest.strip_prefix("Heartbeat { conn: ") {
        return conn_slot(rest).map(|(slot, _)| slot);
    }
    let rest = rest.strip_prefix("ConsumerHeartbeat(CgHeartbeat { conn: ")?;
    let (slot, rest) = conn_slot(rest)?;
    // `, name: "c0", member_id: .., member_epoch: 0`: epoch 0 joins.
    let epoch = rest.split("member_epoch: ").nth(1).map(leading_number);
    match epoch {
        Some(Some(0)) => None,
        _ => Some(slot),
    }
}

/// `Conn { slot: 3, incarnation: 1 }` at the start of `text`: the slot and the rest.
fn conn_slot(text: &str) -> Option<(u32, &str)> {
    let rest = text.strip_prefix("Conn { slot: ")?;
    let (slot, rest) = number(rest)?;
    let rest = rest.strip_prefix(", incarnation: ")?;
    let (_, rest) = number(rest)?;
    let rest = rest.strip_prefix(" }")?;
    Some((u32::try_from(slot).ok()?, rest))
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
    fn the_heartbeat_patterns_of_the_model_events_are_read() {
        let beat = "ToCoord(Heartbeat { conn: Conn { slot: 7, incarnation: 1 }, member_id";
        assert_eq!(heartbeat_slot(beat), Some(7));
        let cg = "ToCoord(ConsumerHeartbeat(CgHeartbeat { conn: Conn { slot: 1, incarnation: 1 }, name: \"c1\", member_id: Some(MemberId(4)), member_epoch: 5,";
        assert_eq!(heartbeat_slot(cg), Some(1));
        let join = "ToCoord(ConsumerHeartbeat(CgHeartbeat { conn: Conn { slot: 1, incarnation: 1 }, name: \"c1\", member_id: None, member_epoch: 0,";
        assert_eq!(heartbeat_slot(join), None, "an epoch-0 heartbeat joins");
        let classic_join = "ToCoord(Join { conn: Conn { slot: 3, incarnation: 2 }, name: \"c3\"";
        assert_eq!(heartbeat_slot(classic_join), None);
        let to_member = "ToMember(Conn { slot: 0, incarnation: 1 }, Heartbeat(None))";
        assert_eq!(heartbeat_slot(to_member), None);
        assert_eq!(heartbeat_slot("Action(Pause(\"c1\", SimTime(30000000000)))"), None);
    }
}
