//! `protocol[:assignor][+static]` strings (DESIGN section 6) to [`ProtocolSpec`]s.
//!
//! Defaults when the assignor is left out: eager -> range, cooperative -> cooperative-sticky,
//! consumer -> uniform, tubemq-server and tubemq-client -> modulo, manual -> none.
//! `consumer:range` is KIP-848's server-side range assignor ([`AssignorName::ConsumerRange`]).
//! `+static` (KIP-345) applies to the Kafka group protocols only: manual assignment has no
//! group and TubeMQ no `group.instance.id`, so the suffix is rejected there.

use crate::reader::unknown_message;
use crate::types::{Protocol, ProtocolSpec, Scenario};
use assignors::AssignorName;

/// Every protocol name, in DESIGN order.
pub(crate) const PROTOCOL_NAMES: &[&str] =
    &["eager", "cooperative", "consumer", "tubemq-server", "tubemq-client", "manual"];

/// What `--protocol` and `protocols` entries may look like (for messages).
pub const PROTOCOL_FORMS: &str = "eager[:range|roundrobin|sticky], \
cooperative[:cooperative-sticky], consumer[:uniform|range], tubemq-server[:modulo], \
tubemq-client[:modulo], manual[:none], each optionally followed by +static (not for manual \
or tubemq)";

/// The assignors a protocol accepts by name; the first is its default.
fn assignors_of(protocol: Protocol) -> &'static [(&'static str, AssignorName)] {
    match protocol {
        Protocol::Eager => &[
            ("range", AssignorName::Range),
            ("roundrobin", AssignorName::RoundRobin),
            ("sticky", AssignorName::Sticky),
        ],
        Protocol::Cooperative => &[("cooperative-sticky", AssignorName::CooperativeSticky)],
        Protocol::Consumer => &[
            ("uniform", AssignorName::Uniform),
            ("range", AssignorName::ConsumerRange),
            ("consumer-range", AssignorName::ConsumerRange),
        ],
        Protocol::TubemqServer | Protocol::TubemqClient => &[("modulo", AssignorName::Modulo)],
        Protocol::Manual => &[("none", AssignorName::None)],
    }
}

/// The protocol called `name`.
fn protocol_named(name: &str) -> Option<Protocol> {
    Some(match name {
        "eager" => Protocol::Eager,
        "cooperative" => Protocol::Cooperative,
        "consumer" => Protocol::Consumer,
        "tubemq-server" => Protocol::TubemqServer,
        "tubemq-client" => Protocol::TubemqClient,
        "manual" => Protocol::Manual,
        _ => return None,
    })
}

/// Whether static membership means anything for `protocol` (a Kafka consumer group).
pub(crate) fn supports_static(protocol: Protocol) -> bool {
    matches!(protocol, Protocol::Eager | Protocol::Cooperative | Protocol::Consumer)
}

impl Scenario {
    /// Parses `protocol[:assignor][+static]`, e.g. `eager`, `eager:roundrobin`,
    /// `cooperative:cooperative-sticky+static`, `consumer:range`. The error names what is
    /// allowed.
    pub fn parse_protocol(text: &str) -> Result<ProtocolSpec, String> {
        let trimmed = text.trim();
        let (body, static_membership) = match trimmed.strip_suffix("+static") {
            Some(body) => (body, true),
            None => (trimmed, false),
        };
        let (protocol_name, assignor_name) = match body.split_once(':') {
            Some((p, a)) => (p, Some(a)),
            None => (body, None),
        };
        let protocol = protocol_named(protocol_name).ok_or_else(|| {
            let head = unknown_message("protocol", protocol_name, PROTOCOL_NAMES.iter().copied());
            format!("`{text}`: {head}; allowed: {PROTOCOL_FORMS}")
        })?;
        let assignor = pick_assignor(protocol, assignor_name, text)?;
        if static_membership && !supports_static(protocol) {
            return Err(format!(
                "`{text}`: +static needs a Kafka consumer group; {} has no static membership",
                protocol.name()
            ));
        }
        Ok(ProtocolSpec { protocol, assignor, static_membership })
    }
}

/// The assignor named `name` for `protocol`, or the protocol's default when `None`.
fn pick_assignor(
    protocol: Protocol,
    name: Option<&str>,
    text: &str,
) -> Result<AssignorName, String> {
    let choices = assignors_of(protocol);
    let Some(name) = name else {
        return Ok(choices[0].1);
    };
    if let Some((_, assignor)) = choices.iter().find(|(n, _)| *n == name) {
        return Ok(*assignor);
    }
    let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
    Err(format!(
        "`{text}`: {} does not run assignor `{name}`; it accepts {}",
        protocol.name(),
        names.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(protocol: Protocol, assignor: AssignorName, static_membership: bool) -> ProtocolSpec {
        ProtocolSpec { protocol, assignor, static_membership }
    }

    #[test]
    fn defaults_follow_design_section_6() {
        let cases = [
            ("eager", spec(Protocol::Eager, AssignorName::Range, false)),
            ("cooperative", spec(Protocol::Cooperative, AssignorName::CooperativeSticky, false)),
            ("consumer", spec(Protocol::Consumer, AssignorName::Uniform, false)),
            ("tubemq-server", spec(Protocol::TubemqServer, AssignorName::Modulo, false)),
            ("tubemq-client", spec(Protocol::TubemqClient, AssignorName::Modulo, false)),
            ("manual", spec(Protocol::Manual, AssignorName::None, false)),
        ];
        for (text, expected) in cases {
            assert_eq!(Scenario::parse_protocol(text), Ok(expected), "{text}");
        }
    }

    #[test]
    fn explicit_assignors_and_static() {
        let cases = [
            ("eager:roundrobin", spec(Protocol::Eager, AssignorName::RoundRobin, false)),
            ("eager:sticky+static", spec(Protocol::Eager, AssignorName::Sticky, true)),
            ("consumer:range", spec(Protocol::Consumer, AssignorName::ConsumerRange, false)),
            (
                " cooperative:cooperative-sticky+static ",
                spec(Protocol::Cooperative, AssignorName::CooperativeSticky, true),
            ),
            ("manual:none", spec(Protocol::Manual, AssignorName::None, false)),
        ];
        for (text, expected) in cases {
            assert_eq!(Scenario::parse_protocol(text), Ok(expected), "{text}");
        }
    }

    #[test]
    fn display_round_trips() {
        for text in ["eager:range", "cooperative:cooperative-sticky+static", "manual:none"] {
            assert_eq!(Scenario::parse_protocol(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn invalid_combinations_are_rejected_with_the_choices() {
        let err = Scenario::parse_protocol("eager:uniform").unwrap_err();
        assert_eq!(err, "`eager:uniform`: eager does not run assignor `uniform`; it accepts range, roundrobin, sticky");
        let err = Scenario::parse_protocol("manual+static").unwrap_err();
        assert!(err.contains("manual has no static membership"), "{err}");
        let err = Scenario::parse_protocol("eagre:range").unwrap_err();
        let head = "`eagre:range`: unknown protocol `eagre`; did you mean `eager`?";
        assert_eq!(err, format!("{head}; allowed: {PROTOCOL_FORMS}"));
        assert!(Scenario::parse_protocol("").is_err());
        assert!(Scenario::parse_protocol("cooperative:range").is_err());
    }
}
