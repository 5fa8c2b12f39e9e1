//! Loading valid scenarios: every key of DESIGN section 7 lands in the typed `Scenario` with
//! the value written, defaults fill the rest, events come out sorted, and `warnings` flags the
//! dubious settings.

use assignors::AssignorName;
use scenario::*;
use sim_core::SimTime;
use std::path::Path;

/// DESIGN section 7's example, verbatim apart from the comments.
const DESIGN_EXAMPLE: &str = r#"
name = "scale-out"
duration = "10m"
seed = 1
protocols = ["eager:range", "cooperative:cooperative-sticky"]

[[topic]]
name = "orders"
partitions = 12
rate = 100.0
arrival = "constant"
skew = 0.0

[consumer]
processing = "1ms"
commit = "auto"
client = "java"

[consumer.config]
"session.timeout.ms" = 45000
"heartbeat.interval.ms" = 3000
"max.poll.interval.ms" = 300000
"enable.auto.commit" = true
"auto.commit.interval.ms" = 5000
"auto.offset.reset" = "latest"
"max.poll.records" = 500

[broker.config]
"group.initial.rebalance.delay.ms" = 3000

[network]
rtt = "1ms"

[group]
members = 3
static_membership = false

[[event]]
at = "2m"
kind = "join"
member = "c3"

[[event]]
at = "5m"
kind = "crash"
member = "c1"
restart_after = "30s"
"#;

fn parse(text: &str) -> Scenario {
    match parse_str(text, Path::new("t.toml")) {
        Ok(s) => s,
        Err(errors) => {
            panic!("{}", errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
        }
    }
}

fn errors(text: &str) -> Vec<String> {
    parse_str(text, Path::new("t.toml")).unwrap_err().iter().map(ToString::to_string).collect()
}

#[test]
fn the_design_example_loads_with_every_value() {
    let s = parse(DESIGN_EXAMPLE);
    assert_eq!(s.name, "scale-out");
    assert_eq!(s.source, Path::new("t.toml"));
    assert_eq!(s.duration, SimTime::from_secs(600));
    assert_eq!(s.seed, 1);
    let expected_protocols = [
        ProtocolSpec {
            protocol: Protocol::Eager,
            assignor: AssignorName::Range,
            static_membership: false,
        },
        ProtocolSpec {
            protocol: Protocol::Cooperative,
            assignor: AssignorName::CooperativeSticky,
            static_membership: false,
        },
    ];
    assert_eq!(s.protocols, expected_protocols);
    let topic = TopicSpec {
        name: "orders".into(),
        partitions: 12,
        rate_per_s: 100.0,
        arrival: Arrival::Constant,
        skew: 0.0,
    };
    assert_eq!(s.topics, [topic]);
    assert_eq!(s.consumer.processing, Processing::Constant(SimTime::from_millis(1)));
    assert_eq!(s.consumer.commit, CommitPolicy::Auto);
    assert_eq!(s.consumer.client, Client::Java);
    assert!(s.consumer.rebalance_listener, "the default: a listener is registered");
    // Every property written equals the Java default, so the config is exactly the defaults.
    assert_eq!(s.consumer.config, default_consumer_config());
    assert_eq!(s.broker, default_broker_config());
    assert_eq!(s.network.rtt, SimTime::from_millis(1));
    assert_eq!(
        s.group,
        GroupSpec { members: 3, static_membership: false, client_ids: ClientIds::Default }
    );
    assert_eq!(
        s.events,
        [
            Event { at: SimTime::from_secs(120), kind: EventKind::Join { member: "c3".into() } },
            Event {
                at: SimTime::from_secs(300),
                kind: EventKind::Crash {
                    member: "c1".into(),
                    restart_after: Some(SimTime::from_secs(30))
                },
            },
        ]
    );
    assert_eq!(s.tubemq, default_tubemq(3));
    assert!(warnings(&s).is_empty(), "{:?}", warnings(&s));
}

const MINIMAL: &str = r#"
duration = "1m"
protocols = ["eager"]
[[topic]]
name = "t"
partitions = 2
rate = 10
[group]
members = 2
"#;

#[test]
fn defaults_fill_every_optional_key() {
    let s = parse(MINIMAL);
    assert_eq!(s.name, "t", "the file stem of t.toml");
    assert_eq!(s.seed, 1);
    assert_eq!(s.measure_from, SimTime::ZERO, "the window is the whole run by default");
    assert_eq!(s.topics[0].rate_per_s, 10.0);
    assert_eq!(s.topics[0].arrival, Arrival::Constant);
    assert_eq!(s.topics[0].skew, 0.0);
    assert_eq!(s.consumer.processing, Processing::Constant(SimTime::from_millis(1)));
    assert_eq!(s.consumer.config.session_timeout, SimTime::from_secs(45));
    assert_eq!(s.consumer.config.heartbeat_interval, SimTime::from_secs(3));
    assert_eq!(s.consumer.config.max_poll_interval, SimTime::from_secs(300));
    assert_eq!(s.consumer.config.auto_offset_reset, OffsetReset::Latest);
    assert_eq!(s.broker.group_initial_rebalance_delay, SimTime::from_secs(3));
    assert_eq!(s.broker.group_min_session_timeout, SimTime::from_secs(6));
    assert_eq!(s.broker.group_max_session_timeout, SimTime::from_secs(1800));
    assert_eq!(s.broker.group_consumer_session_timeout, SimTime::from_secs(45));
    assert_eq!(s.broker.group_consumer_heartbeat_interval, SimTime::from_secs(5));
    assert_eq!(s.tubemq.balance_period, SimTime::from_secs(30));
    assert_eq!(s.tubemq.heartbeat_interval, SimTime::from_secs(13));
    assert_eq!(s.tubemq.source_count, 2);
    assert!(s.events.is_empty());
}

#[test]
fn every_event_kind_parses_and_events_sort_stably_by_time() {
    let text = format!(
        "{MINIMAL}{}",
        r#"
[[event]]
at = "50s"
kind = "add-partitions"
topic = "t"
count = 3
[[event]]
at = "10s"
kind = "pause"
member = "c0"
duration = "2s"
[[event]]
at = "10s"
kind = "stall"
member = "c1"
duration = "3s"
[[event]]
at = "20s"
kind = "disconnect"
member = "c0"
duration = "4s"
[[event]]
at = "30s"
kind = "rolling-restart"
interval = "5s"
[[event]]
at = "40s"
kind = "scale"
members = 4
[[event]]
at = "45s"
kind = "leave"
member = "c3"
[[event]]
at = "46s"
kind = "crash"
member = "c2"
"#
    );
    let s = parse(&text);
    let secs = SimTime::from_secs;
    let expected = vec![
        // The two 10 s events keep file order (pause before stall).
        Event { at: secs(10), kind: EventKind::Pause { member: "c0".into(), duration: secs(2) } },
        Event { at: secs(10), kind: EventKind::Stall { member: "c1".into(), duration: secs(3) } },
        Event {
            at: secs(20),
            kind: EventKind::Disconnect { member: "c0".into(), duration: secs(4) },
        },
        // downtime defaults to 5 s (DESIGN section 7).
        Event {
            at: secs(30),
            kind: EventKind::RollingRestart { interval: secs(5), downtime: secs(5) },
        },
        // Scale from 2 (c0, c1) to 4 adds c2 and c3, so leave c3 and crash c2 are valid.
        Event { at: secs(40), kind: EventKind::Scale { members: 4 } },
        Event { at: secs(45), kind: EventKind::Leave { member: "c3".into() } },
        Event { at: secs(46), kind: EventKind::Crash { member: "c2".into(), restart_after: None } },
        Event { at: secs(50), kind: EventKind::AddPartitions { topic: 0, count: 3 } },
    ];
    assert_eq!(s.events, expected);
}

#[test]
fn a_member_back_from_its_restart_can_be_used_again() {
    // c1 crashes at 10 s and restarts at 10 + 5 = 15 s, so a pause at 15 s is valid and one at
    // 14 s would not be.
    let body = |at: &str| {
        format!(
            "{MINIMAL}[[event]]\nat = \"10s\"\nkind = \"crash\"\nmember = \"c1\"\nrestart_after = \"5s\"\n\
             [[event]]\nat = \"{at}\"\nkind = \"pause\"\nmember = \"c1\"\nduration = \"1s\"\n"
        )
    };
    parse(&body("15s"));
    let errs = errors(&body("14s"));
    assert_eq!(errs.len(), 1);
    assert!(errs[0].contains("`c1` is down at 14s (crashed; restarts at 15s)"), "{}", errs[0]);
}

#[test]
fn processing_distributions_and_client_settings() {
    let text = format!(
        "{MINIMAL}{}",
        r#"
[consumer]
processing = { dist = "exponential", mean = "2ms" }
commit = "sync-per-batch"
client = "librdkafka"
[consumer.config]
"enable.auto.commit" = false
"fetch.wait.max.ms" = 20
"auto.offset.reset" = "smallest"
"statistics.interval.ms" = 0
"#
    );
    let s = parse(&text);
    assert_eq!(s.consumer.processing, Processing::Exponential { mean: SimTime::from_millis(2) });
    assert_eq!(s.consumer.commit, CommitPolicy::SyncPerBatch);
    assert_eq!(s.consumer.client, Client::Librdkafka);
    assert_eq!(s.consumer.config.fetch_max_wait, SimTime::from_millis(20));
    assert_eq!(s.consumer.config.auto_offset_reset, OffsetReset::Earliest);
    assert_eq!(
        s.consumer.config.ignored.get("statistics.interval.ms").map(String::as_str),
        Some("0")
    );
    assert_eq!(
        warnings(&s),
        ["consumer.config.\"statistics.interval.ms\" is accepted but not modeled"]
    );
}

#[test]
fn group_static_membership_applies_to_kafka_group_protocols_only() {
    let text = MINIMAL
        .replace(
            "protocols = [\"eager\"]",
            "protocols = [\"eager\", \"consumer:range\", \"manual\"]",
        )
        .replace("members = 2", "members = 2\nstatic_membership = true");
    let s = parse(&text);
    let rendered: Vec<String> = s.protocols.iter().map(ToString::to_string).collect();
    assert_eq!(rendered, ["eager:range+static", "consumer:range+static", "manual:none"]);
    assert_eq!(s.protocols[1].assignor, AssignorName::ConsumerRange);
}

#[test]
fn group_client_ids_default_member_name_and_client_id() {
    assert_eq!(parse(MINIMAL).group.client_ids, ClientIds::Default);
    let named = MINIMAL.replace("members = 2", "members = 2\nclient_ids = \"member-name\"");
    assert_eq!(parse(&named).group.client_ids, ClientIds::MemberName);
    let bad = MINIMAL.replace("members = 2", "members = 2\nclient_ids = \"names\"");
    let e = errors(&bad);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].starts_with("t.toml:"), "{}", e[0]);
    assert!(
        e[0].contains("group.client_ids: unknown value `names`")
            && e[0].ends_with("allowed: default, member-name"),
        "{}",
        e[0]
    );
    // One client.id for every member: "default"'s order; it contradicts "member-name".
    let with_id = |group: &str| {
        format!(
            "{}\n[consumer.config]\n\"client.id\" = \"app\"\n",
            MINIMAL.replace("members = 2", group)
        )
    };
    let s = parse(&with_id("members = 2\nclient_ids = \"default\""));
    assert_eq!(
        (s.group.client_ids, s.consumer.config.client_id.as_deref()),
        (ClientIds::Default, Some("app"))
    );
    assert!(warnings(&s).is_empty(), "client.id is modeled now: {:?}", warnings(&s));
    let e = errors(&with_id("members = 2\nclient_ids = \"member-name\""));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("group.client_ids: \"member-name\" gives each member its name"),
        "{}",
        e[0]
    );
}

#[test]
fn all_problems_are_collected_not_just_the_first() {
    let text = r#"
duration = "0s"
protocols = ["eager", "eager"]
[[topic]]
name = "t"
partitions = 0
rate = -5
[group]
members = 2
[consumer.config]
"session.timeout.ms" = 1000
"heartbeat.interval.ms" = 2000
"#;
    let errs = errors(text);
    // duration, the repeated protocol (`protocols = ["eager", ` is 22 characters, so column
    // 23), partitions, rate; then heartbeat >= session and the
    // session below the broker's 6000 minimum, at their values: `"session.timeout.ms" = ` is
    // 23 characters (column 24), `"heartbeat.interval.ms" = ` 26 (column 27). Sorted by line.
    assert_eq!(errs.len(), 6, "{errs:#?}");
    assert!(errs[0].starts_with("t.toml:2:12: duration: must be longer than zero"), "{}", errs[0]);
    assert!(
        errs[1].starts_with("t.toml:3:23: protocols[1]: `eager` repeats eager:range"),
        "{}",
        errs[1]
    );
    assert!(
        errs[2].starts_with("t.toml:6:14: topic[0].partitions: 0 is out of range"),
        "{}",
        errs[2]
    );
    assert!(errs[3].starts_with("t.toml:7:8: topic[0].rate: -5 is not allowed"), "{}", errs[3]);
    assert!(
        errs[4]
            .starts_with("t.toml:11:24: consumer.config.\"session.timeout.ms\": 1000 is outside"),
        "{}",
        errs[4]
    );
    assert!(
        errs[5].starts_with(
            "t.toml:12:27: consumer.config.\"heartbeat.interval.ms\": 2000 is not below"
        ),
        "{}",
        errs[5]
    );
}

#[test]
fn from_table_validates_without_positions() {
    let mut table: toml::Table = MINIMAL.parse().unwrap();
    table["group"]["members"] = toml::Value::String("many".into());
    let errs = from_table(table.clone(), Path::new("sweep-cell.toml")).unwrap_err();
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].line, None);
    assert_eq!(
        errs[0].to_string(),
        "sweep-cell.toml: group.members: expected an integer, found the string \"many\""
    );
    table["group"]["members"] = toml::Value::Integer(5);
    let s = from_table(table, Path::new("sweep-cell.toml")).unwrap();
    assert_eq!(s.group.members, 5);
}

#[test]
fn warnings_flag_dubious_settings() {
    let text = MINIMAL.replace("members = 2", "members = 2\n[consumer]\nprocessing = \"1s\"\ncommit = \"auto\"\n[consumer.config]\n\"session.timeout.ms\" = 9000\n\"heartbeat.interval.ms\" = 4000\n\"enable.auto.commit\" = false\n\"max.poll.interval.ms\" = 60000\n\"group.instance.id\" = \"a\"");
    let s = parse(&text);
    let w = warnings(&s);
    assert_eq!(w.len(), 6, "{w:#?}");
    assert!(
        w[0].starts_with(
            "consumer.config.\"group.instance.id\" is accepted but not modeled: use [group]"
        ),
        "{}",
        w[0]
    );
    // 4000 * 3 = 12000 > 9000; a third of 9000 is 3000.
    assert!(w[1].contains("heartbeat.interval.ms\" = 4000 is above a third of session.timeout.ms (9000); Kafka's docs advise at most 3000"), "{}", w[1]);
    // 500 records x 1 s = 500000 ms > 60000 ms.
    assert!(
        w[2].contains("takes 500000 ms on average, above max.poll.interval.ms (60000)"),
        "{}",
        w[2]
    );
    assert!(w[3].contains("nothing is ever committed"), "{}", w[3]);
    // 2 x 10 records/s at 1 s each on 2 members: 10 times what they can process.
    assert!(w[4].contains("2 consuming members must process 20 records/s and can process 2 (processing 1s per record): utilisation 1000%"), "{}", w[4]);
    assert!(w[5].contains("partition 0 of topic `t` receives 10 records/s"), "{}", w[5]);
}

#[test]
fn limits_stop_runaway_input() {
    // Built in memory: parsing 100,001 events from text takes seconds in a debug build.
    let mut table: toml::Table = MINIMAL.parse().unwrap();
    let event: toml::Table = "at = \"1s\"\nkind = \"leave\"\nmember = \"c0\"".parse().unwrap();
    let events = vec![toml::Value::Table(event); 100_001];
    table.insert("event".into(), toml::Value::Array(events));
    let errs = from_table(table, Path::new("t.toml")).unwrap_err();
    assert_eq!(errs.len(), 1, "{:?}", &errs[..errs.len().min(3)]);
    assert_eq!(
        errs[0].to_string(),
        "t.toml: event: 100001 events is too many; allowed: at most 100000 events"
    );
    let errs = errors(&MINIMAL.replace(
        "members = 2",
        "members = 2\n[[event]]\nat = \"1s\"\nkind = \"scale\"\nmembers = 100001",
    ));
    assert!(errs[0].contains("event[0].members: 100001 is out of range"), "{}", errs[0]);
}

#[test]
fn no_mutation_of_the_design_example_panics() {
    // Each line of the example with its value replaced by something wrong, or removed: every
    // result is a Scenario or a list of messages, never a panic.
    let replacements = [
        "\"x\"",
        "-1",
        "0",
        "[]",
        "{}",
        "nan",
        "inf",
        "\"999999days\"",
        "true",
        "\"-5s\"",
        "1979-05-27",
    ];
    let lines: Vec<&str> = DESIGN_EXAMPLE.lines().collect();
    let mut rejected = 0;
    for (index, line) in lines.iter().enumerate() {
        let mut variants = vec![String::new()];
        if let Some((key, _)) = line.split_once(" = ") {
            variants.extend(replacements.iter().map(|r| format!("{key} = {r}")));
        }
        for variant in variants {
            let mut mutated = lines.clone();
            mutated[index] = &variant;
            if let Err(errors) = parse_str(&mutated.join("\n"), Path::new("m.toml")) {
                assert!(errors.iter().all(|e| !e.message.is_empty()));
                rejected += 1;
            }
        }
    }
    // Most replacements are wrong for every key; at least the 11 per key x 30 keys mostly fail.
    assert!(rejected > 250, "only {rejected} mutations rejected");
}

#[test]
fn a_rolling_restart_that_does_not_fit_is_an_error_naming_its_step() {
    // 4 members restarted 20 s apart from 10 s, 5 s down each: c0 back at 15s, c1 at 35s, c2
    // at 55s, c3 closes at 1m10s, after the end (1m).
    let text = MINIMAL.replace(
        "members = 2",
        "members = 4\n[[event]]\nat = \"10s\"\nkind = \"rolling-restart\"\ninterval = \"20s\"",
    );
    let e = errors(&text);
    assert_eq!(e, ["t.toml:13:12: event[0].interval: the rolling restart does not fit in the run: step 4 of 4 (c3) closes at 1m10s and is back at 1m15s, not before the end of the run (1m00s); allowed: at + 3 x interval + downtime before the end (1m00s): an interval below 15s, an earlier `at` or a `duration` above 1m15s"]);
    // 14 s apart: c3 back at 10 + 42 + 5 = 57 s, inside the run.
    parse(&text.replace("\"20s\"", "\"14s\""));
    // A single member: only at + downtime must fit.
    let one = MINIMAL.replace(
        "members = 2",
        "members = 1\n[[event]]\nat = \"58s\"\nkind = \"rolling-restart\"\ninterval = \"1s\"",
    );
    let e = errors(&one);
    assert!(e[0].contains("step 1 of 1 (c0) closes at 58s and is back at 1m03s"), "{}", e[0]);
    assert!(
        e[0].ends_with(
            "allowed: at + downtime before the end (1m00s): an earlier `at` or a longer `duration`"
        ),
        "{}",
        e[0]
    );
}

#[test]
fn cross_property_rules_come_with_the_other_errors() {
    // An invalid max.poll.records no longer hides heartbeat >= session: both in one batch.
    let text = MINIMAL.replace("members = 2", "members = 2\n[consumer.config]\n\"max.poll.records\" = 0\n\"session.timeout.ms\" = 10000\n\"heartbeat.interval.ms\" = 10000");
    let e = errors(&text);
    assert_eq!(e.len(), 2, "{e:#?}");
    assert!(e[0].contains("consumer.config.\"max.poll.records\": 0 is out of range"), "{}", e[0]);
    assert!(e[1].contains("consumer.config.\"heartbeat.interval.ms\": 10000 is not below session.timeout.ms (10000)"), "{}", e[1]);
    // A rule whose own property is rejected stays silent (it would compare a default).
    let bad_session = MINIMAL.replace("members = 2", "members = 2\n[consumer.config]\n\"session.timeout.ms\" = -1\n\"heartbeat.interval.ms\" = 50000");
    let e = errors(&bad_session);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].contains("session.timeout.ms"), "{}", e[0]);
    // So does one when a misspelt property may be the one it compares.
    let misspelt = MINIMAL.replace("members = 2", "members = 2\n[consumer.config]\n\"sesion.timeout.ms\" = 90000\n\"heartbeat.interval.ms\" = 50000");
    let e = errors(&misspelt);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].contains("unknown property `sesion.timeout.ms`"), "{}", e[0]);
}
