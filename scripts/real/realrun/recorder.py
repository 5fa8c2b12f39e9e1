"""The record of a real run: JSON-lines files written by every process, and their loader.

Each process appends one JSON object per line, flushed at once (a SIGKILLed member loses at most
the line it was writing). Times are seconds since the run's t0 (wall clock, shared by all
processes on one host). Kinds:

- producer.jsonl: `{"k":"d","t":topic,"p":part,"o":offset,"a":produce_s,"ack":ack_s}` per
  acknowledged record: `a` when produce() was called, `ack` when its delivery report arrived.
  The record's arrival (DESIGN section 5: its append to the partition) is taken as `ack`
  (records made before `ack` was recorded: `a`); the run's window is cut by `a`.
- <member>-<incarnation>.jsonl: `start` (subscribed), `assign`/`revoke`/`lost` (callback, with
  `parts` = [[topic, part], ...]), `p` (one processed record: `t`,`p`,`o`,`a`,`s` start,`e` end),
  `gap` (a poll gap over 1 s: `from`,`to`), `leave` (close() called), `closed`, `err`.
- events.jsonl (orchestrator): `spawn`, `crash`, `pause`, `resume`, `stall`, `leave`, `end`.
- mock_requests.jsonl (mock runs only): `{"k":"req","api":"JoinGroup"|"SyncGroup"|"LeaveGroup"|
  "Produce"|"Fetch","t_s"}` as the mock cluster received them (Produce and Fetch since issue #10).
- coordinator.jsonl (local Apache Kafka runs only, realrun/coordinator.py): `{"k":"rebalance",
  "t_s","why"}` when the broker's group coordinator started a rebalance of the run's group;
  broker.log beside it is the broker's whole log.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

TP = tuple[str, int]


class Writer:
    """Appends JSON lines to one file, line-buffered so each line reaches the OS at once."""

    def __init__(self, path: Path, t0: float) -> None:
        self._f: TextIO = open(path, "a", buffering=1)  # noqa: SIM115 (held open for the process's life)
        self._t0 = t0

    def now(self) -> float:
        """Seconds since t0."""
        return time.time() - self._t0

    def write(self, obj: dict[str, Any]) -> None:
        """Append one record."""
        self._f.write(json.dumps(obj, separators=(",", ":")) + "\n")

    def close(self) -> None:
        """Close the file."""
        self._f.close()


@dataclass(frozen=True)
class Delivery:
    """One processing of one record by one member."""

    tp: TP
    offset: int
    arrival_s: float
    start_s: float
    end_s: float
    member: str


@dataclass(frozen=True)
class Callback:
    """One assign/revoke/lost callback."""

    t_s: float
    member: str
    incarnation: int
    kind: str
    parts: tuple[TP, ...]


@dataclass(frozen=True)
class Mark:
    """A liveness change of a member incarnation: start, leave, crash, pause, resume, cutoff, uncut."""

    t_s: float
    member: str
    incarnation: int
    kind: str


@dataclass
class Record:
    """Everything a run recorded, already cut to the run's end (duration_s)."""

    duration_s: float
    partitions: list[TP]
    max_poll_interval_s: float
    produced: dict[TP, dict[int, float]] = field(default_factory=dict)
    deliveries: list[Delivery] = field(default_factory=list)
    callbacks: list[Callback] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    triggers: list[tuple[float, str]] = field(default_factory=list)  # (time, rebalances.csv trigger name)
    # JoinGroups the mock received, or the real coordinator's rebalance starts (coordinator.jsonl)
    join_requests_s: list[float] = field(default_factory=list)
    # Partitions added during the run (add-partitions events): when the broker had them
    added_s: dict[TP, float] = field(default_factory=dict)
    lines: int = 0

    def exists(self, tp: TP, t_s: float) -> bool:
        """Whether the partition exists at t_s (added ones from their creation)."""
        return self.added_s.get(tp, float("-inf")) <= t_s


def _lines(path: Path) -> list[dict[str, Any]]:
    """Parse a JSON-lines file, ignoring a torn last line of a killed process."""
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def _load_member(rec: Record, path: Path, member: str, inc: int, start_at_s: float | None) -> None:
    """One member incarnation's file. Its start counts from its scheduled moment (start_at_s,
    when known): the member is joining from then, whatever the scheduling delay of subscribe()."""
    end = rec.duration_s
    for o in _lines(path):
        rec.lines += 1
        k = o["k"]
        if k == "start" and start_at_s is not None:
            o["t_s"] = min(o["t_s"], start_at_s)
        # A processing is in the run if it ended by the end and its record was produced before
        # the end (`a`, the producer's cut, on the producer's clock). On one clock the second
        # test drops nothing the first keeps; on two clocks apart (a member's behind the
        # producer's) it keeps out a record produced after the end, which the first would let
        # in as processed but never produced.
        if k == "p" and o["e"] <= end and o["a"] < end:
            rec.deliveries.append(Delivery((o["t"], o["p"]), o["o"], o["a"], o["s"], o["e"], member))
        elif k in ("assign", "revoke", "lost") and o["t_s"] <= end:
            parts = tuple((t, p) for t, p in o["parts"])
            rec.callbacks.append(Callback(o["t_s"], member, inc, k, parts))
        elif k in ("start", "leave") and o["t_s"] <= end:
            rec.marks.append(Mark(o["t_s"], member, inc, k))
        elif k == "gap" and o["to"] - o["from"] > rec.max_poll_interval_s:
            cut = o["from"] + rec.max_poll_interval_s
            if cut <= end:
                rec.marks.append(Mark(cut, member, inc, "cutoff"))
                rec.marks.append(Mark(min(o["to"], end), member, inc, "uncut"))


def _load_events(rec: Record, path: Path) -> dict[tuple[str, int], float]:
    """Orchestrator events: crashes and pauses (member liveness); returns the scheduled start
    of every member incarnation."""
    starts: dict[tuple[str, int], float] = {}
    for o in _lines(path):
        k = o["k"]
        if k == "spawn" and "start_at_s" in o:
            starts[(o["m"], o["inc"])] = o["start_at_s"]
        if k in ("crash", "pause", "resume") and o["t_s"] <= rec.duration_s:
            rec.marks.append(Mark(o["t_s"], o["m"], o["inc"], k))
        if k == "add-partitions":
            for p in range(o["first"], o["first"] + o["count"]):
                rec.added_s[(o["topic"], p)] = o["t_s"]
    return starts


# A member cut off by max.poll.interval.ms rejoins at its next poll ("uncut"): a join, as the
# simulator names it.
TRIGGERS = {
    "start": "join",
    "leave": "leave",
    "crash": "session-expiry",
    "cutoff": "max-poll-leave",
    "uncut": "join",
}


def load_record(run_dir: Path, duration_s: float, partitions: list[TP], max_poll_interval_s: float) -> Record:
    """Load every file of a run directory into a Record cut at duration_s."""
    rec = Record(duration_s, partitions, max_poll_interval_s)
    for o in _lines(run_dir / "producer.jsonl"):
        rec.lines += 1
        if o["k"] == "d" and o["a"] < duration_s:
            rec.produced.setdefault((o["t"], o["p"]), {})[o["o"]] = o.get("ack", o["a"])
    starts = _load_events(rec, run_dir / "events.jsonl")
    for path in sorted(run_dir.glob("member-*.jsonl")):
        _, member, inc = path.stem.split("-")
        _load_member(rec, path, member, int(inc), starts.get((member, int(inc))))
    requests = run_dir / "mock_requests.jsonl"
    if requests.exists():
        rec.join_requests_s = sorted(o["t_s"] for o in _lines(requests) if o.get("api") == "JoinGroup")
    coordinator = run_dir / "coordinator.jsonl"
    if coordinator.exists():
        rec.join_requests_s = sorted(o["t_s"] for o in _lines(coordinator) if o.get("k") == "rebalance")
    rec.deliveries.sort(key=lambda d: (d.end_s, d.tp, d.offset))
    rec.callbacks.sort(key=lambda c: c.t_s)
    rec.marks.sort(key=lambda m: m.t_s)
    rec.triggers = sorted((m.t_s, TRIGGERS[m.kind]) for m in rec.marks if m.kind in TRIGGERS)
    rec.triggers += [(t, "partitions-added") for t in sorted(set(rec.added_s.values())) if t <= duration_s]
    rec.triggers.sort()
    return rec
