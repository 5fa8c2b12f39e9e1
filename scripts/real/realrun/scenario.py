"""Scenario files (DESIGN section 7) parsed with tomllib into the subset a real run needs.

Only what can be applied to real processes is accepted: topics, the consumer config, broker
settings the mock cluster exposes, members, and the events join, leave, crash (with restart),
pause, stall and add-partitions (`[producer] metadata_refresh` sets the producer's refresh
period, as in the simulator). Anything else is rejected with the file, the key and what is allowed, so a
real run never silently differs from the simulated one.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DURATION_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(ns|us|ms|s|m|h)\s*$")
UNIT_S = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
PROTOCOL_DEFAULT_ASSIGNOR = {"eager": "range", "cooperative": "cooperative-sticky", "consumer": "uniform"}
ALLOWED_ASSIGNORS = {
    "eager": ("range", "roundrobin"),  # librdkafka has no eager sticky assignor
    "cooperative": ("cooperative-sticky",),
    "consumer": ("uniform", "range"),
}
REAL_EVENT_KINDS = ("join", "leave", "crash", "pause", "stall", "add-partitions")
CLIENT_IDS = ("default", "member-name")  # [group] client_ids, as the simulator reads it
TOP_KEYS = {
    "name",
    "duration",
    "seed",
    "protocols",
    "topic",
    "consumer",
    "broker",
    "network",
    "producer",
    "timing",  # the simulator's seeded timing variation; a real run's timing is real
    "group",
    "event",
    "tubemq",
}


class ScenarioError(Exception):
    """A scenario file that cannot be run for real; the message names file, key and allowed values."""


@dataclass(frozen=True)
class ProtocolSpec:
    """One `protocol:assignor[+static]` entry."""

    protocol: str
    assignor: str
    static_membership: bool

    def label(self) -> str:
        """The CLI spelling, e.g. `eager:range`."""
        return f"{self.protocol}:{self.assignor}" + ("+static" if self.static_membership else "")


@dataclass(frozen=True)
class Topic:
    """A `[[topic]]`: partitions and per-partition rate in records/s."""

    name: str
    partitions: int
    rate_per_s: float
    arrival: str


@dataclass(frozen=True)
class Event:
    """One `[[event]]` a real run can apply."""

    at_s: float
    kind: str
    member: str
    duration_s: float = 0.0
    restart_after_s: float | None = None
    topic_index: int = -1  # add-partitions: the topic, by its [[topic]] index
    count: int = 0  # add-partitions: how many partitions are added


@dataclass
class Scenario:
    """The parsed scenario, times in seconds."""

    name: str
    source: Path
    duration_s: float
    seed: int
    protocols: list[ProtocolSpec]
    topics: list[Topic]
    processing_s: float
    commit: str
    client: str
    consumer_config: dict[str, Any]
    broker_config: dict[str, Any]
    members: int
    static_membership: bool
    events: list[Event] = field(default_factory=list)
    # [producer] metadata_refresh: the producer's topic.metadata.refresh.interval.ms
    producer_metadata_refresh_s: float = 300.0
    # `[group] client_ids`: "member-name" = each member's client.id is its name; "default" =
    # no client.id is set (the client's default, the same for every member), unless
    # [consumer.config] sets one for all.
    client_ids: str = "default"

    def max_poll_interval_s(self) -> float:
        """`max.poll.interval.ms` in seconds (Kafka default 300000)."""
        return float(self.consumer_config.get("max.poll.interval.ms", 300000)) / 1000.0

    def partitions(self) -> list[tuple[str, int]]:
        """Every (topic, partition) of the run, in topic order, added ones included."""
        return [(t.name, p) for i, t in enumerate(self.topics) for p in range(self.final_partitions(i))]

    def final_partitions(self, topic_index: int) -> int:
        """The partition count of a topic after every add-partitions event."""
        added = sum(e.count for e in self.events if e.kind == "add-partitions" and e.topic_index == topic_index)
        return self.topics[topic_index].partitions + added


def parse_duration_s(text: Any, where: str) -> float:
    """Parse a human duration ("250ms", "45s", "5m") into seconds."""
    if not isinstance(text, str) or not DURATION_RE.match(text):
        raise ScenarioError(f'{where}: expected a duration like "250ms", "45s" or "5m", got {text!r}')
    m = DURATION_RE.match(text)
    assert m is not None
    return float(m.group(1)) * UNIT_S[m.group(2)]


def parse_protocol(text: Any, where: str, static_default: bool) -> ProtocolSpec:
    """Parse `protocol[:assignor][+static]`, allowing only the protocols a Kafka client runs."""
    if not isinstance(text, str):
        raise ScenarioError(f'{where}: expected a string like "eager:range", got {text!r}')
    body, static = (text[: -len("+static")], True) if text.endswith("+static") else (text, static_default)
    proto, _, assignor = body.partition(":")
    if proto not in PROTOCOL_DEFAULT_ASSIGNOR:
        raise ScenarioError(f"{where}: protocol {proto!r} cannot run for real; allowed: eager, cooperative, consumer")
    assignor = assignor or PROTOCOL_DEFAULT_ASSIGNOR[proto]
    if assignor not in ALLOWED_ASSIGNORS[proto]:
        raise ScenarioError(
            f"{where}: assignor {assignor!r} for {proto}; allowed: {', '.join(ALLOWED_ASSIGNORS[proto])}"
        )
    return ProtocolSpec(proto, assignor, static)


def _table(doc: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise ScenarioError(f"{where}: [{key}] must be a table")
    return value


def _check_keys(table: dict[str, Any], allowed: set[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            raise ScenarioError(f"{where}: unknown key {key!r}; allowed: {', '.join(sorted(allowed))}")


def _topics(doc: dict[str, Any], where: str) -> list[Topic]:
    raw = doc.get("topic")
    if not isinstance(raw, list) or not raw:
        raise ScenarioError(f"{where}: at least one [[topic]] is required")
    topics = []
    for i, t in enumerate(raw):
        w = f"{where}: topic[{i}]"
        _check_keys(t, {"name", "partitions", "rate", "arrival", "skew"}, w)
        if float(t.get("skew", 0.0)) != 0.0:
            raise ScenarioError(f"{w}.skew: a real run supports only skew = 0")
        parts, rate = t.get("partitions"), t.get("rate")
        if not isinstance(parts, int) or parts < 1:
            raise ScenarioError(f"{w}.partitions: expected an integer >= 1, got {parts!r}")
        if not isinstance(rate, (int, float)) or rate < 0:
            raise ScenarioError(f"{w}.rate: expected records/s >= 0, got {rate!r}")
        arrival = t.get("arrival", "constant")
        if arrival not in ("constant", "poisson"):
            raise ScenarioError(f"{w}.arrival: {arrival!r}; allowed: constant, poisson")
        topics.append(Topic(str(t.get("name", "")), parts, float(rate), arrival))
    return topics


def _processing_s(value: Any, where: str) -> float:
    """Per-record processing time; a distribution is run at its mean (real runs are not seeded)."""
    if isinstance(value, dict):
        return parse_duration_s(value.get("mean"), f"{where}.mean")
    return parse_duration_s(value, where)


def _add_partitions(raw: dict[str, Any], where: str, at_s: float, topics: list[str]) -> Event:
    """An add-partitions event: `topic` (a [[topic]] name) and `count` >= 1."""
    _check_keys(raw, {"at", "kind", "topic", "count"}, where)
    topic, count = raw.get("topic"), raw.get("count")
    if topic not in topics:
        raise ScenarioError(f"{where}.topic: {topic!r} is not a [[topic]]; allowed: {', '.join(topics)}")
    if not isinstance(count, int) or count < 1:
        raise ScenarioError(f"{where}.count: expected an integer >= 1, got {count!r}")
    return Event(at_s, "add-partitions", "", topic_index=topics.index(topic), count=count)


def _event(raw: dict[str, Any], where: str, duration_s: float, topics: list[str] | None = None) -> Event:
    kind = raw.get("kind")
    if kind not in REAL_EVENT_KINDS:
        raise ScenarioError(
            f"{where}.kind: {kind!r} cannot be applied for real; allowed: {', '.join(REAL_EVENT_KINDS)}"
        )
    at_s = parse_duration_s(raw.get("at"), f"{where}.at")
    if at_s > duration_s:
        raise ScenarioError(f"{where}.at: {raw.get('at')} is after the end of the run")
    if kind == "add-partitions":
        return _add_partitions(raw, where, at_s, topics or [])
    _check_keys(raw, {"at", "kind", "member", "duration", "restart_after"}, where)
    member = raw.get("member")
    if not isinstance(member, str) or not member:
        raise ScenarioError(f"{where}.member: a member name is required for kind {kind!r}")
    dur = parse_duration_s(raw["duration"], f"{where}.duration") if kind in ("pause", "stall") else 0.0
    restart = raw.get("restart_after")
    restart_s = parse_duration_s(restart, f"{where}.restart_after") if restart is not None else None
    return Event(at_s, kind, member, dur, restart_s)


def _check_members(events: list[Event], members: int, where: str) -> None:
    """Every event names a member that exists (and is alive) at that moment."""
    alive = {f"c{i}" for i in range(members)}
    restarts: list[tuple[float, str]] = []
    for ev in events:
        if ev.kind == "add-partitions":
            continue
        for t, name in [r for r in restarts if r[0] <= ev.at_s]:
            alive.add(name)
            restarts.remove((t, name))
        if ev.kind == "join":
            if ev.member in alive:
                raise ScenarioError(f"{where}: join of {ev.member} at {ev.at_s}s, but it is already running")
            alive.add(ev.member)
        elif ev.member not in alive:
            raise ScenarioError(f"{where}: {ev.kind} of {ev.member} at {ev.at_s}s, but no such live member")
        elif ev.kind in ("leave", "crash"):
            alive.discard(ev.member)
            if ev.restart_after_s is not None:
                restarts.append((ev.at_s + ev.restart_after_s, ev.member))


def load(path: Path) -> Scenario:
    """Read and validate a scenario file; raises ScenarioError with a clear message."""
    where = str(path)
    try:
        doc = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise ScenarioError(f"{where}: {err}") from err
    _check_keys(doc, TOP_KEYS, where)
    duration_s = parse_duration_s(doc.get("duration"), f"{where}: duration")
    group = _table(doc, "group", where)
    _check_keys(group, {"members", "static_membership", "client_ids"}, f"{where}: [group]")
    static = bool(group.get("static_membership", False))
    client_ids = group.get("client_ids", "default")
    if client_ids not in CLIENT_IDS:
        raise ScenarioError(f"{where}: group.client_ids: {client_ids!r}; allowed: {', '.join(CLIENT_IDS)}")
    protocols = [
        parse_protocol(p, f"{where}: protocols[{i}]", static) for i, p in enumerate(doc.get("protocols", ["eager"]))
    ]
    consumer = _table(doc, "consumer", where)
    _check_keys(consumer, {"processing", "commit", "client", "rebalance_listener", "config"}, f"{where}: [consumer]")
    if consumer.get("commit", "auto") != "auto":
        raise ScenarioError(f'{where}: consumer.commit: a real run supports only "auto"')
    if consumer.get("rebalance_listener", True) is not True:
        # Both members (Member.java Listener, member.py on_assign/on_revoke/on_lost) record
        # every callback, so they always register a listener.
        raise ScenarioError(f"{where}: consumer.rebalance_listener: a real run supports only true")
    client = consumer.get("client", "java")
    if client not in ("java", "librdkafka"):
        raise ScenarioError(f"{where}: consumer.client: {client!r}; allowed: java, librdkafka")
    broker = _table(doc, "broker", where)
    if client_ids == "member-name" and "client.id" in consumer.get("config", {}):
        raise ScenarioError(
            f'{where}: group.client_ids: "member-name" gives each member its name as client.id, '
            'but consumer.config."client.id" gives every member the same one; allowed: "default", or leave client.id out'
        )
    topics = _topics(doc, where)
    names = [t.name for t in topics]
    events = [_event(e, f"{where}: event[{i}]", duration_s, names) for i, e in enumerate(doc.get("event", []))]
    events.sort(key=lambda e: e.at_s)
    members = group.get("members", 1)
    if not isinstance(members, int) or members < 0:
        raise ScenarioError(f"{where}: group.members: expected an integer >= 0, got {members!r}")
    _check_members(events, members, where)
    return Scenario(
        name=str(doc.get("name", path.stem)),
        source=path,
        duration_s=duration_s,
        seed=int(doc.get("seed", 1)),
        protocols=protocols,
        topics=topics,
        processing_s=_processing_s(consumer.get("processing", "1ms"), f"{where}: consumer.processing"),
        commit="auto",
        client=client,
        consumer_config=dict(consumer.get("config", {})),
        broker_config=dict(broker.get("config", {})),
        members=members,
        static_membership=static,
        events=events,
        producer_metadata_refresh_s=_producer_refresh_s(doc, where),
        client_ids=client_ids,
    )


def _producer_refresh_s(doc: dict[str, Any], where: str) -> float:
    """`[producer] metadata_refresh` in seconds (default 5m)."""
    producer = _table(doc, "producer", where)
    _check_keys(producer, {"metadata_refresh"}, f"{where}: [producer]")
    if "metadata_refresh" not in producer:
        return 300.0
    return parse_duration_s(producer["metadata_refresh"], f"{where}: producer.metadata_refresh")
