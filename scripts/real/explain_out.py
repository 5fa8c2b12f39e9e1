#!/usr/bin/env python3
"""Explain, cell by cell, where the simulator is outside the real range (issue 24).

Reads BASE/comparison.csv (written by `compare.py --matrix BASE --csv`), the hand-written rules
in BASE/causes.toml and BASE/SPREAD.md (seed_spread.py), and writes BASE/OUT.md: every OUT cell
(client x scenario x protocol x metric with inside = false) with the cause of the first rule
that matches it, its distance to the real range (absolute, and relative to the nearer bound),
the seed spread's verdict, and counts per cause and per client x protocol. Cells no rule
explains are listed under "not explained".

    scripts/real/explain_out.py [--base results/real/4.4.0] [--rules FILE] [--out FILE]

A rule (`[[rule]]` in causes.toml) names a `cause` (one of the `[[cause]]` entries: id, title,
text, ref) and matches cells by `client`, `scenario`, `protocol`, `metric` patterns (fnmatch, `|`
separates alternatives; absent = any), `side` ("below": sim < real min, "above": sim > real
max; absent = either), `spread` (SPREAD.md verdicts, e.g. ["overlap", "cover"]) and `check`,
a verification from the committed per-run records under BASE/<client>/<scenario>/<protocol>/
(rep*/ and sim/: summary.csv, rebalances.csv, partitions.csv, rep*/host.txt, sim/ownership.csv;
the cell's scenario.toml):

- `formation`: the group's formation (its first rebalance that ends with the scenario's
  `[group] members`; rebalance 0 in the real runs, rebalance 1 in a KIP-848 sim whose first
  member forms a group of one) explains the cell in the bounding run (the real run at the
  violated end of the range): rebalance_ms_max / _p50: the rebalance that gives the value is the
  formation in the sim and in that run; downtime_partition_s: distance <= initial partitions x
  (the run's formation end - the sim's formation end); stop_the_world_s: distance <= (the run's
  formation end - the sim's); both only for a sim below the range.
- `heartbeat`: rebalance_ms_p50 from a rebalance after the formation in both the sim and the
  bounding run, and the distance <= one heartbeat interval (the scenario's
  heartbeat.interval.ms, group.consumer.heartbeat.interval.ms for KIP-848).
- `heartbeat-event`: as `heartbeat`, and both p50 rebalances have the same trigger (the same
  scenario event).
- `moved-only`: records_reprocessed; in every real run all reprocessed records are on
  partitions whose owner changed (partitions.csv moves > 0).
- `static-absence`: rebalances / rebalance_ms_p50 of a static-membership cell; the sim has no
  rebalance after its formation, and in every real run each rebalance after the formation moved
  no partition, kept the group's size, and the partitions have fewer down episodes after the
  formation than one per partition per such rebalance (a group rebalance of an eager group
  revokes every partition); for the p50, it comes from such a rebalance in the bounding run and
  from the formation in the sim.
- `static-leave-start`: rebalance_ms_p50 / _max of a static `leave` cell; in every real run the
  rebalance after the formation starts at the leave's moment (within 0.1 s), in the sim at its
  session expiry (the leave's moment + session.timeout.ms, within one heartbeat interval), and
  both end within 2 s of each other; the p50 / max come from that rebalance in the bounding
  run (the max: from it in the run and from the formation in the sim), or the p50 from the
  run's formation when that leave rebalance lasts longer than the formation (the nearest-rank
  median of the two is the shorter).
- `cutoff`: downtime_partition_s, sim below; the bounding run has one max-poll-leave rebalance
  after the formation that moved nothing, [a, b]; the sim has no partition down (ownership.csv:
  unassigned, revoked, owner-dead, owner-paused, stop-the-world) at any time in [a, b - 0.1 s];
  the stalled member's share, floor(partitions / members), x (b - a) >= the distance.
- `rdkafka-maxpoll-rejoin`: rebalances / partitions_moved / rebalance_ms_p50 / _max; the sim has
  one max-poll-leave rebalance that moved partitions and, over 1 s after it, a join rebalance;
  every real run has one max-poll-leave rebalance after its start, which moved nothing.
  rebalances: the sim's rebalance 0 is a group of one and the sim is 2 above; partitions_moved:
  the distance is what the sim's two rebalances moved; p50 / max: the value is that real
  rebalance, which starts over 1 s before the sim's leave, or (p50) the real run has only its
  start and that rebalance, the median is its start, and the sim's median is its leave or
  rejoin among its four (group of one, start, leave, rejoin).
- `commit-phase`: records_reprocessed; the scenario's first crash / stall / pause at E, the
  auto-commit every I ms from a restart R: R + n x I (n >= 1) is the last commit before E and
  rate x (partitions / members) x (E - last commit) the records processed again; with no
  commit between R and E, everything since offset 0 (between rate x (E - R) and rate x E). R is the end
  of the sim's last rebalance before E (its members restart the timer there); in the bounding
  run, any moment of its last rebalance before E (classic: its last 0.3 s, where the members'
  join completions lie; KIP-848: from the first to the last callback, where each member's
  reconciliation lies). Holds when the prediction over that window reaches the bounding run's
  value and the sim's (each within 10 records or 10%).
- `rdkafka-timer-start`: records_reprocessed below the range, librdkafka (commit timer from
  the consumer's creation, R = its start); the bounding run's members subscribed within 0.05 s
  of their moment (host.txt) and the prediction with R = 0 (see commit-phase) reaches its
  value, while the sim's value is reached with R in the scenario's [timing] start window
  (start_delay .. start_delay + start_spread).
- `rdkafka-resume`: records_reprocessed, sim above; every real run reprocessed at most what
  one commit interval gives (rate x partitions / members x I: records since the last commit),
  the sim more.
- `kip848-start`: KIP-848 (consumer:*) downtime_partition_s / stop_the_world_s, sim below.
  The bounding run's initial wait (the wait for the first assignment): the downtime of its
  partitions that never moved and were down once. Both sides' stop-the-world is only that wait
  (the run: one such partition waited at least its stop-the-world less one record interval;
  the sim: its stop-the-world is at most its least first `unassigned` interval in
  ownership.csv plus one record interval): that settles stop_the_world_s. For
  downtime_partition_s, a lower bound of the run's start (its waits: exactly for those
  partitions, at least the least of them less one record interval for the other partitions
  that were down at all; plus the spread's gaps: the downtime less the stop-the-world of
  partitions moved once and down twice, the smallest (spread's moves - partitions moved more
  than once) of them) less the sim's start
  (ownership.csv: its `unassigned` and `revoked` time up to the end of its spread, the first
  rebalance that moved partitions) >= the distance.
- `kip848-start-split`: KIP-848 downtime_partition_s / stop_the_world_s, sim below, for a
  bounding run measured with its intervals (rep*/intervals.csv: each partition's down and allowed
  intervals). T = the later of the two starts' ends (the run's and the sim's first rebalance that
  moved partitions), before the scenario's first event. Both sides' downtime (or stop-the-world:
  the union of the down intervals less the union of the allowed ones; the sim's from ownership.csv,
  down = any state but consuming and idle, allowed = consuming or idle with an owner) is split at
  T; each side's parts must add up to its summary.csv value (within 1 ms a partition). Holds when
  the run's excess before T is >= 0 and what is left of the distance after T (the run's part
  after T less the sim's) is at most, for downtime, one heartbeat interval
  (group.consumer.heartbeat.interval.ms) per partition the run moved after T (a moved partition
  waits for its new owner's next heartbeat: `kip848-heartbeat-phase`), for stop-the-world 1 ms:
  the distance is the start, and the heartbeat phase of the later moves.
- `kip848-after-start`: as `kip848-start-split-runs` when the bounding run's start was shorter
  than the sim's (the bound < 0): what is left of the distance (distance less the bound) is at
  most the heartbeat allowance of the partitions the run moved after its start.
- `start-only-episodes`: KIP-848 downtime_partition_s below; in the bounding run no rebalance
  after its start moved a partition and no partition has more down episodes than its first wait
  plus one per move, and the sim has no down interval after its start: both values are their
  starts' alone.
- `formation-split` / `heartbeat-split`: classic downtime_partition_s / stop_the_world_s below
  the range, the bounding run measured with intervals; both sides split at T = the later
  formation end (as `kip848-start-split`). `formation-split` holds when the run's part after T is
  at most the sim's (the distance is the formation's); `heartbeat-split` when it is above it by at
  most the heartbeat allowance: heartbeat.interval.ms for each partition of an eager group and
  each rebalance after T (each partition moved after T for a cooperative one; each rebalance for
  stop-the-world), the members learning of each rebalance at their own next heartbeat
  (finding 3).
- `sticky-giver`: librdkafka cooperative downtime_partition_s below, the bounding run measured
  with intervals; every real run moved the same partitions and the sim others; split at the later
  formation end (as `heartbeat-split`), the run's moved partitions were down longer after it than
  the sim's, and what the other partitions add is at most the heartbeat allowance.
- `formation-lost`: records_lost below the range, auto.offset.reset = latest (the default), one
  topic rate r: in the bounding run and in the sim each partition's lost / r (the moment of its
  first position, within one record interval) lies between 2 record intervals before and 0.3 s
  (the client-side time after the broker's answer on this host, docs/timing.md) plus one record
  interval after its formation's end: the losses are the formations', the run's ending later.
- `maxpoll-or-moved`: records_reprocessed below the range in a scenario with a stall as long
  as max.poll.interval.ms; the sim has no max-poll-leave rebalance; every real run either has a
  max-poll-leave rebalance 0-50 ms after the stall's end and reprocessed at most one commit
  interval's records of one member (rate x partitions / members x auto.commit.interval.ms), or
  has none and all its reprocessed records lie on partitions that moved.
- `heartbeat-max`: KIP-848 rebalance_ms_max below the range; the bounding run's max is a
  rebalance after its start (its spread); the sim's rebalance of the same trigger after its
  start (the one starting nearest) lasts at most one group.consumer.heartbeat.interval.ms less.
- `kip848-start-split-runs`: as `kip848-start-split` for a cell whose bounding run was measured
  without intervals (before 2026-12-03): it holds when at least two runs of the cell have
  intervals.csv and each passes the `kip848-start-split` test against its own distance to the
  sim, and, for downtime, the bounding run's start (the lower bound of `kip848-start`) is >= 0
  and leaves at most the heartbeat allowance of the distance (for stop-the-world the runs with
  intervals carry it: none after the start in any of them).
- `pause-held`: rebalance_ms_p50 / _max of a scenario with one pause longer than the session
  timeout; the value comes, in the bounding run, from a rebalance that starts after the pause's
  start + the session timeout - 1.5 s and ends within 1 s after the resume, while the sim's
  session-expiry rebalance ends before the resume.
- `kip848-start-p50`: KIP-848 rebalance_ms_p50; the sim's rebalance 0 is a group of one;
  without it the sim's p50 (nearest rank) is another rebalance, with the bounding run's p50
  rebalance's trigger, and at most one heartbeat interval from the real range.
- `kip848-spread-p50`: KIP-848 rebalance_ms_p50; the bounding run's p50 is its start's spread
  (its first rebalance that moved partitions, a rebalance of its own), the sim's p50 a later
  rebalance, and the run's one rebalance with that trigger lasts within one heartbeat interval
  of the sim's.
- `start-max`: rebalance_ms_max below the range; the bounding run's max is its start (the
  formation) and every other rebalance of that run lasts at most the sim's max: without the
  longer start the run would not be above the sim.
- `join-stall-end`: rebalance_ms_max / _p50 below the range, a scenario with one `join` at J
  during one `stall` that ends at E; the value is the join's rebalance in the sim and in the
  bounding run; the run's starts at J (within 10 ms: the harness counts from the joiner's
  moment), the sim's at its joiner's start draw (J + the [timing] start_delay or later); the
  sim's ends within 50 ms after E, the run's 0-300 ms after E (the client-side time after the
  broker's answer, 20-300 ms on this host, docs/timing.md); the distance <= (the sim's start -
  J) + (the run's end - the sim's end).
- `kip848-start-median`: KIP-848 rebalance_ms_p50 below the range; the sim's rebalance 0 is a
  group of one and its p50 is its start (the formation); in every real run the p50 is the one
  rebalance after the start (the start lasts at least as long); the sim's rebalance after its
  start that begins within 1 s of the bounding run's p50 rebalance (the same event, whatever
  the trigger's label) lasts within the real range.
- `kip848-extra-heartbeat`: KIP-848 rebalance_ms_max above the range; the sim's max is a
  rebalance after its formation, [a, b]; its new owner X received a partition at t1 in the
  rebalance, and another partition, released by its owner at r with t1 < r < b (just after X's
  heartbeat), only at b (ownership.csv), one heartbeat interval after t1 (within 0.1 s); without
  that extra heartbeat the rebalance, t1 - a, is not above the real maximum.
- `kip848-start-count`: KIP-848 rebalances, sim above by 1; the sim's rebalance 0 is a group
  of one (members 1, nothing moved, under 1 ms) before the rebalance that forms the group, and
  every real run's rebalance 0 ends with the whole group and moved partitions (its start is one
  rebalance).

A rule whose check fails does not match (the next rule is tried); the failures are listed in
OUT.md with the not-explained cells. Exit codes: 0 ok, 2 bad input (the message names the file).
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import math
import re
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realrun.metrics import subtract, total_s, union  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_BASE = ROOT / "results/real/4.4.0"
RULE_KEYS = {"cause", "client", "scenario", "protocol", "metric", "side", "spread", "check", "note"}
SIDES = {"below", "above"}
VERDICTS = {"cover", "overlap", "apart"}


class InputError(Exception):
    """A missing or malformed input file."""


@dataclass(frozen=True)
class Cell:
    """One row of comparison.csv."""

    client: str
    scenario: str
    protocol: str
    metric: str
    sim: float
    real_min: float
    real_median: float
    real_max: float
    n: int

    @property
    def side(self) -> str:
        """below: the sim under the real range; above: over it."""
        return "below" if self.sim < self.real_min else "above"

    @property
    def distance(self) -> float:
        """Absolute distance from the sim to the nearer end of the real range."""
        return self.real_min - self.sim if self.side == "below" else self.sim - self.real_max

    @property
    def relative(self) -> float | None:
        """Distance relative to the nearer end (None when that end is 0)."""
        bound = self.real_min if self.side == "below" else self.real_max
        return None if bound == 0 else self.distance / abs(bound)

    def folder(self, base: Path) -> Path:
        """BASE/client/scenario/<protocol folder> (eager:range+static -> eager_range_static)."""
        return base / self.client / self.scenario / self.protocol.replace(":", "_").replace("+", "_")


@dataclass(frozen=True)
class Cause:
    id: str
    title: str
    text: str
    ref: str


@dataclass(frozen=True)
class Rule:
    cause: str
    patterns: dict[str, str]
    side: str | None = None
    spread: tuple[str, ...] = ()
    check: str | None = None
    note: str = ""


@dataclass
class Verdict:
    """What the rules made of one OUT cell."""

    cell: Cell
    spread: str
    cause: str | None = None
    detail: str = ""
    failed: list[str] = field(default_factory=list)  # "cause: why its check failed"


def load_cells(path: Path) -> list[Cell]:
    """comparison.csv rows (every cell, in file order)."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as err:
        raise InputError(f"{path}: {err.strerror}") from err
    cells = []
    for i, r in enumerate(rows, start=2):
        try:
            if r["inside"] not in ("true", "false"):
                continue  # no sim for this cell
            cell = Cell(
                r["client"], r["scenario"], r["protocol"], r["metric"], float(r["sim"]),
                float(r["real_min"]), float(r["real_median"]), float(r["real_max"]), int(r["n"]),
            )
        except (KeyError, ValueError) as err:
            raise InputError(f"{path}: line {i}: {err!r}") from err
        if (r["inside"] == "true") != (cell.real_min <= cell.sim <= cell.real_max):
            raise InputError(f"{path}: line {i}: inside = {r['inside']} disagrees with its numbers")
        cells.append(cell)
    return cells


def load_rules(path: Path) -> tuple[dict[str, Cause], list[Rule]]:
    """The causes and the rules (in file order) of a causes.toml."""
    try:
        data = tomllib.loads(path.read_text())
    except OSError as err:
        raise InputError(f"{path}: {err.strerror}") from err
    except tomllib.TOMLDecodeError as err:
        raise InputError(f"{path}: {err}") from err
    causes: dict[str, Cause] = {}
    for c in data.get("cause", []):
        if not {"id", "title", "text", "ref"} <= set(c) or c["id"] in causes:
            raise InputError(f"{path}: every [[cause]] needs a unique id, a title, text and ref: {c}")
        causes[c["id"]] = Cause(c["id"], c["title"], " ".join(c["text"].split()), c["ref"])
    rules = []
    for i, r in enumerate(data.get("rule", []), start=1):
        unknown = set(r) - RULE_KEYS
        if unknown:
            raise InputError(f"{path}: rule {i}: unknown keys {sorted(unknown)} (allowed: {sorted(RULE_KEYS)})")
        if r.get("cause") not in causes:
            raise InputError(f"{path}: rule {i}: cause {r.get('cause')!r} is not a [[cause]] id")
        if r.get("side") not in (None, *SIDES):
            raise InputError(f"{path}: rule {i}: side must be one of {sorted(SIDES)}")
        if not set(r.get("spread", [])) <= VERDICTS:
            raise InputError(f"{path}: rule {i}: spread values must be in {sorted(VERDICTS)}")
        if r.get("check") not in (None, *CHECKS):
            raise InputError(f"{path}: rule {i}: check must be one of {sorted(CHECKS)}")
        patterns = {k: r[k] for k in ("client", "scenario", "protocol", "metric") if k in r}
        rules.append(Rule(r["cause"], patterns, r.get("side"), tuple(r.get("spread", [])), r.get("check"), r.get("note", "")))
    return causes, rules


def load_spread(path: Path) -> dict[tuple[str, str, str, str], tuple[float, float, float, float, str]]:
    """SPREAD.md: (client, scenario, protocol, metric) -> (sim lo, sim hi, real lo, real hi, verdict)."""
    out: dict[tuple[str, str, str, str], tuple[float, float, float, float, str]] = {}
    if not path.exists():
        return out
    head: tuple[str, str, str] | None = None
    num = r"(-?[\d.e+-]+)"
    for line in path.read_text().splitlines():
        m = re.fullmatch(r"## (\S+) (\S+) (\S+)", line.strip())
        if m:
            head = (m[1], m[2], m[3])
            continue
        m = re.fullmatch(rf"\| (\w+) \| {num}-{num} \| {num}-{num} \(\d+\) \| (\w+) \|", line.strip())
        if m and head:
            out[(*head, m[1])] = (float(m[2]), float(m[3]), float(m[4]), float(m[5]), m[6])
    return out


def spread_verdict(cell: Cell, spread: dict[tuple[str, str, str, str], tuple[float, float, float, float, str]]) -> str:
    """SPREAD.md's verdict for the cell, or why it cannot be used ("-": not in SPREAD.md;
    "stale": its real range or the sim's seed-1 value is not the one of comparison.csv)."""
    s = spread.get((cell.client, cell.scenario, cell.protocol, cell.metric))
    if s is None:
        return "-"
    sim_lo, sim_hi, real_lo, real_hi, verdict = s

    def same(a: float, b: float) -> bool:
        return math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6)

    fits = sim_lo * (1 - 1e-6) - 1e-9 <= cell.sim <= sim_hi * (1 + 1e-6) + 1e-9
    if not (same(real_lo, cell.real_min) and same(real_hi, cell.real_max) and fits):
        return "stale"
    return verdict


def matches(pattern: str, value: str) -> bool:
    """fnmatch against any of the `|`-separated alternatives."""
    return any(fnmatch.fnmatchcase(value, p.strip()) for p in pattern.split("|"))


# ---- checks on the committed per-run records ----


def _csv(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        raise FileNotFoundError(str(path))
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _runs(cell: Cell, base: Path) -> list[Path]:
    folder = cell.folder(base)
    runs = [p.parent for p in folder.glob("rep*/summary.csv")]
    if not runs:
        raise FileNotFoundError(f"{folder}/rep*/summary.csv")
    return sorted(runs, key=lambda p: int("0" + "".join(ch for ch in p.name if ch.isdigit())))


def _value(run: Path, metric: str) -> float:
    return float(_csv(run / "summary.csv")[0][metric])


def _bounding(cell: Cell, base: Path) -> Path:
    """The real run at the violated end of the range (its minimum when the sim is below)."""
    runs = _runs(cell, base)
    pick = min if cell.side == "below" else max
    return pick(runs, key=lambda r: _value(r, cell.metric))


def _rebalances(run: Path) -> list[tuple[int, float]]:
    return [(int(r["index"]), float(r["duration_ms"])) for r in _csv(run / "rebalances.csv")]


def _formation(run: Path, members: int) -> tuple[int, float, float]:
    """(index, duration_ms, end_s) of the first rebalance that ends with `members` members."""
    for r in _csv(run / "rebalances.csv"):
        if int(r["members"]) >= members:
            return int(r["index"]), float(r["duration_ms"]), float(r["end_s"])
    raise ValueError(f"{run}/rebalances.csv: no rebalance ends with {members} members")


def _source_index(run: Path, metric: str) -> int:
    """The index of the rebalance whose duration is the run's rebalance_ms_* value."""
    value = _value(run, metric)
    rb = _rebalances(run)
    if not rb:
        raise ValueError(f"{run}: no rebalances")
    index, ms = min(rb, key=lambda r: (abs(r[1] - value), r[0]))
    if not math.isclose(ms, value, rel_tol=1e-3, abs_tol=0.01):
        raise ValueError(f"{run}: no rebalance lasts {metric} = {value} ms")
    return index


def _scenario(cell: Cell, base: Path) -> dict[str, Any]:
    path = base / cell.client / cell.scenario / "scenario.toml"
    return tomllib.loads(path.read_text())


def _where(run: Path, base: Path) -> str:
    return str(run.relative_to(base))


def check_formation(cell: Cell, base: Path) -> tuple[bool, str]:
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    sc = _scenario(cell, base)
    members = int(sc["group"]["members"])
    (i_sf, sim_ms, sim_end), (i_rf, run_ms, run_end) = _formation(sim, members), _formation(run, members)
    where = _where(run, base)
    if cell.metric in ("rebalance_ms_max", "rebalance_ms_p50"):
        i_sim, i_run = _source_index(sim, cell.metric), _source_index(run, cell.metric)
        ok = i_sim == i_sf and i_run == i_rf
        return ok, (
            f"{cell.metric} = rebalance {i_sim} in the sim, {i_run} in {where}; the formation is "
            f"rebalance {i_sf} ({sim_ms:.0f} ms) and {i_rf} ({run_ms:.0f} ms)"
        )
    if cell.metric in ("downtime_partition_s", "stop_the_world_s"):
        if cell.side != "below":
            return False, "the sim is above the range: a longer real formation cannot explain it"
        excess = run_end - sim_end
        head = f"formation ends at {sim_end:.3f} s in the sim, {run_end:.3f} s in {where}"
        if cell.metric == "downtime_partition_s":
            parts = sum(int(t["partitions"]) for t in sc.get("topic", []))
            bound = parts * excess
            how = f"{parts} partitions x {excess:.3f} s = {bound:.3g} partition-s"
        else:
            bound = excess
            how = f"{excess:.3f} s later"
        ok = bound >= cell.distance
        return ok, f"{head}: {how} {'>=' if ok else '<'} distance {cell.distance:.3g}"
    return False, f"check formation does not apply to {cell.metric}"


def check_heartbeat(cell: Cell, base: Path) -> tuple[bool, str]:
    return _heartbeat(cell, base, same_event=False)


def check_heartbeat_event(cell: Cell, base: Path) -> tuple[bool, str]:
    return _heartbeat(cell, base, same_event=True)


def _heartbeat(cell: Cell, base: Path, same_event: bool) -> tuple[bool, str]:
    if cell.metric != "rebalance_ms_p50":
        return False, f"check heartbeat does not apply to {cell.metric}"
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    sc = _scenario(cell, base)
    if cell.protocol.startswith("consumer:"):
        key, cfg = "group.consumer.heartbeat.interval.ms", sc.get("broker", {}).get("config", {})
    else:
        key, cfg = "heartbeat.interval.ms", sc.get("consumer", {}).get("config", {})
    if key not in cfg:
        return False, f"the scenario does not set {key}"
    hb = float(cfg[key])
    i_sim, i_run = _source_index(sim, cell.metric), _source_index(run, cell.metric)
    n = _group_size(sc)
    f_sim, f_run = _formation(sim, n)[0], _formation(run, n)[0]
    t_sim = _rows(sim, "rebalances.csv")[i_sim]["trigger"]
    t_run = _rows(run, "rebalances.csv")[i_run]["trigger"]
    ok = i_sim > f_sim and i_run > f_run and (t_sim == t_run or not same_event) and cell.distance <= hb
    return ok, (
        f"p50 = rebalance {i_sim} ({t_sim}) in the sim, {i_run} ({t_run}) in {_where(run, base)}; "
        f"distance {cell.distance:.0f} ms {'<=' if cell.distance <= hb else '>'} {key} {hb:.0f}"
    )


def check_moved_only(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric != "records_reprocessed":
        return False, f"check moved-only does not apply to {cell.metric}"
    parts = []
    for run in _runs(cell, base):
        rows = _csv(run / "partitions.csv")
        moved = sum(int(r["reprocessed"]) for r in rows if int(r["moves"]) > 0)
        still = sum(int(r["reprocessed"]) for r in rows if int(r["moves"]) == 0)
        if still:
            return False, f"{_where(run, base)}: {still} reprocessed on partitions that never moved"
        parts.append(f"{run.name} {moved}")
    return True, "reprocessed records all on moved partitions (" + ", ".join(parts) + ")"


def _stall_end_at_max_poll(sc: dict[str, Any]) -> float | None:
    """The end of the scenario's stall whose duration equals max.poll.interval.ms (or None)."""
    cfg = sc.get("consumer", {}).get("config", {})
    if "max.poll.interval.ms" not in cfg:
        return None
    limit_s = float(cfg["max.poll.interval.ms"]) / 1e3
    for e in _events(sc):
        if e.get("kind") == "stall" and abs(_seconds(e.get("duration", "0s")) - limit_s) < 1e-9:
            return _seconds(e["at"]) + limit_s
    return None


def check_maxpoll_or_moved(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric != "records_reprocessed" or cell.side != "below":
        return False, "check maxpoll-or-moved applies to records_reprocessed below the range"
    sc = _scenario(cell, base)
    end = _stall_end_at_max_poll(sc)
    if end is None:
        return False, "the scenario has no stall as long as max.poll.interval.ms"
    sim = cell.folder(base) / "sim"
    if any(r["trigger"] == "max-poll-leave" for r in _rows(sim, "rebalances.csv")):
        return False, "the sim's poll timer expires too (a max-poll-leave rebalance)"
    _, interval, rate = _commit_setup(cell, base)
    cap = rate * interval
    parts = []
    for run in _runs(cell, base):
        expired = [float(r["start_s"]) for r in _rows(run, "rebalances.csv") if r["trigger"] == "max-poll-leave"]
        value = _value(run, cell.metric)
        if expired:
            late = expired[0] - end
            if not 0 <= late <= 0.05 or value > cap:
                return False, (f"{_where(run, base)}: max-poll-leave {late * 1e3:.0f} ms after the stall's end, "
                               f"{value:.0f} reprocessed (one commit interval: {cap:.0f})")
            parts.append(f"{run.name} expired {late * 1e3:.0f} ms after the stall, {value:.0f} <= {cap:.0f}")
            continue
        rows = _rows(run, "partitions.csv")
        still = sum(int(r["reprocessed"]) for r in rows if int(r["moves"]) == 0)
        if still:
            return False, f"{_where(run, base)}: no expiry and {still} reprocessed on partitions that never moved"
        parts.append(f"{run.name} no expiry, {value:.0f} all on moved partitions")
    return True, "stall = max.poll.interval.ms, the sim's timer does not expire: " + "; ".join(parts)


def check_heartbeat_max(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric != "rebalance_ms_max" or cell.side != "below" or not cell.protocol.startswith("consumer:"):
        return False, "check heartbeat-max applies to KIP-848 rebalance_ms_max below the range"
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    i_run = _source_index(run, cell.metric)
    rows = _rows(run, "rebalances.csv")
    start = int(_spread(run)["index"])
    if i_run <= start:
        return False, f"{_where(run, base)}: its max is rebalance {i_run}, its start (spread {start})"
    trig, r_start = rows[i_run]["trigger"], float(rows[i_run]["start_s"])
    s_start = int(_spread(sim)["index"])
    same = [r for r in _rows(sim, "rebalances.csv") if int(r["index"]) > s_start and r["trigger"] == trig]
    if not same:
        return False, f"the sim has no {trig} rebalance after its start"
    twin = min(same, key=lambda r: abs(float(r["start_s"]) - r_start))
    hb = float(_scenario(cell, base).get("broker", {}).get("config", {}).get(HB_KEY, 5000))
    gap = _value(run, cell.metric) - float(twin["duration_ms"])
    ok = gap <= hb
    return ok, (
        f"max = rebalance {i_run} ({trig}, {_value(run, cell.metric):.0f} ms) of {_where(run, base)}, after its "
        f"start; the sim's {trig} lasts {float(twin['duration_ms']):.0f} ms: {gap:.0f} ms {'<=' if ok else '>'} "
        f"{HB_KEY} {hb:.0f}"
    )


def _rows(run: Path, name: str) -> list[dict[str, str]]:
    return _csv(run / name)


def _group_size(sc: dict[str, Any]) -> int:
    return int(sc["group"]["members"])


def _partitions(sc: dict[str, Any]) -> int:
    return sum(int(t["partitions"]) for t in sc.get("topic", []))


def _after_formation(run: Path, members: int) -> list[dict[str, str]]:
    """rebalances.csv rows after the formation (the first that ends with the whole group)."""
    rows = _rows(run, "rebalances.csv")
    i = _formation(run, members)[0]
    return [r for r in rows if int(r["index"]) > i]


def check_static_absence(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric not in ("rebalances", "rebalance_ms_p50"):
        return False, f"check static-absence does not apply to {cell.metric}"
    if not cell.protocol.endswith("+static"):
        return False, "not a static-membership cell"
    sc = _scenario(cell, base)
    n, parts = _group_size(sc), _partitions(sc)
    sim = cell.folder(base) / "sim"
    if _after_formation(sim, n):
        return False, "the sim has a rebalance after its formation"
    notes = []
    for run in _runs(cell, base):
        later = _after_formation(run, n)
        if not later:
            return False, f"{_where(run, base)}: no rebalance after the formation"
        for r in later:
            if int(r["partitions_moved"]) != 0 or int(r["members"]) != n:
                return False, f"{_where(run, base)}: rebalance {r['index']} moved {r['partitions_moved']} / ends with {r['members']} members"
        extra = sum(int(p["episodes"]) - 1 for p in _rows(run, "partitions.csv"))
        if extra >= parts * len(later):
            return False, f"{_where(run, base)}: {extra} down episodes after the formation >= {parts} x {len(later)}"
        notes.append(f"{run.name} {len(later)} ({extra} episodes)")
    why = ("after the formation, rebalances that moved nothing with " + str(n) + " members, down episodes "
           "fewer than a group rebalance gives: " + ", ".join(notes) + "; the sim: none")
    if cell.metric == "rebalance_ms_p50":
        run = _bounding(cell, base)
        i_run = _source_index(run, cell.metric)
        i_form = _formation(run, n)[0]
        i_sim = _source_index(sim, cell.metric)
        if i_run == i_form or i_sim != _formation(sim, n)[0]:
            return False, f"p50 = rebalance {i_run} in {_where(run, base)}, {i_sim} in the sim"
        why += f"; p50 = rebalance {i_run} in {_where(run, base)}, the formation in the sim"
    return True, why


def _events(sc: dict[str, Any]) -> list[dict[str, Any]]:
    return list(sc.get("event", []))


def _seconds(text: str) -> float:
    m = re.fullmatch(r"\s*([\d.]+)\s*(ms|s)\s*", str(text))
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    return float(m[1]) / (1000.0 if m[2] == "ms" else 1.0)


def check_static_leave_start(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric not in ("rebalance_ms_p50", "rebalance_ms_max"):
        return False, f"check static-leave-start does not apply to {cell.metric}"
    if not cell.protocol.endswith("+static"):
        return False, "not a static-membership cell"
    sc = _scenario(cell, base)
    n = _group_size(sc)
    leaves = [_seconds(e["at"]) for e in _events(sc) if e.get("kind") == "leave"]
    if len(leaves) != 1:
        return False, "not a single leave"
    at = leaves[0]
    cfg = sc.get("consumer", {}).get("config", {})
    session, hb = float(cfg["session.timeout.ms"]) / 1e3, float(cfg["heartbeat.interval.ms"]) / 1e3
    sim = cell.folder(base) / "sim"
    s_later = _after_formation(sim, n)
    if len(s_later) != 1 or abs(float(s_later[0]["start_s"]) - (at + session)) > hb:
        return False, f"the sim's rebalance after the formation does not start at {at} + {session} s"
    s_end = float(s_later[0]["end_s"])
    for run in _runs(cell, base):
        later = _after_formation(run, n)
        if len(later) != 1 or abs(float(later[0]["start_s"]) - at) > 0.1 or abs(float(later[0]["end_s"]) - s_end) > 2.0:
            return False, f"{_where(run, base)}: its rebalance after the formation does not start at the leave ({at} s) or end near the sim's ({s_end:.2f} s)"
    run = _bounding(cell, base)
    i_run = _source_index(run, cell.metric)
    i_sim = _source_index(sim, cell.metric)
    r_idx = int(_after_formation(run, n)[0]["index"])
    f_run = _formation(run, n)
    longer = float(_after_formation(run, n)[0]["duration_ms"]) >= f_run[1]
    # The p50 (nearest rank) of a formation and a leave is the shorter: the formation itself
    # when the leave, counted from close(), lasts longer.
    if i_run != r_idx and not (cell.metric == "rebalance_ms_p50" and i_run == f_run[0] and longer):
        return False, f"{cell.metric} = rebalance {i_run} in {_where(run, base)}, not the leave's"
    if cell.metric == "rebalance_ms_p50" and i_sim != int(s_later[0]["index"]):
        return False, f"p50 = rebalance {i_sim} in the sim, not the leave's"
    r = _after_formation(run, n)[0]
    return True, (
        f"real: {r['start_s']}-{r['end_s']} s in {_where(run, base)} (from the leave at {at:g} s), sim: "
        f"{float(s_later[0]['start_s']):.2f}-{s_end:.2f} s (from the session expiry, {at:g} + {session:g} s); "
        f"{cell.metric} = rebalance {i_run} in the run, {i_sim} in the sim"
    )


DOWN_STATES = {"unassigned", "revoked", "owner-dead", "owner-paused", "stop-the-world"}


def check_cutoff(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric != "downtime_partition_s" or cell.side != "below":
        return False, "check cutoff applies to downtime_partition_s below the range"
    sc = _scenario(cell, base)
    n, parts = _group_size(sc), _partitions(sc)
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    cut = [r for r in _after_formation(run, n) if r["trigger"] == "max-poll-leave" and int(r["partitions_moved"]) == 0]
    if len(cut) != 1:
        return False, f"{_where(run, base)}: no single max-poll-leave rebalance that moved nothing"
    a, b = float(cut[0]["start_s"]), float(cut[0]["end_s"])
    down = [
        r for r in _rows(sim, "ownership.csv")
        if r["state"] in DOWN_STATES and float(r["start_s"]) < b - 0.1 and float(r["end_s"]) > a
    ]
    if down:
        r = down[0]
        return False, f"the sim has partition {r['partition']} {r['state']} at {float(r['start_s']):.2f}-{float(r['end_s']):.2f} s"
    k, d = parts // n, b - a
    ok = k * d >= cell.distance
    return ok, (
        f"{_where(run, base)}: max-poll-leave {a:.2f}-{b:.2f} s moved nothing (the stalled member's {k} partitions "
        f"cut off, down); the sim: no partition down then: {k} x {d:.2f} s = {k * d:.3g} partition-s "
        f"{'>=' if ok else '<'} distance {cell.distance:.3g}"
    )


def check_rdkafka_maxpoll_rejoin(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric not in ("rebalances", "partitions_moved", "rebalance_ms_p50", "rebalance_ms_max"):
        return False, f"check rdkafka-maxpoll-rejoin does not apply to {cell.metric}"
    sc = _scenario(cell, base)
    n = _group_size(sc)
    sim = cell.folder(base) / "sim"
    srows = _rows(sim, "rebalances.csv")
    leave = [r for r in srows if r["trigger"] == "max-poll-leave"]
    if len(leave) != 1 or int(leave[0]["partitions_moved"]) == 0:
        return False, "the sim has no single max-poll-leave rebalance that moved partitions"
    li = int(leave[0]["index"])
    after = [r for r in srows if int(r["index"]) == li + 1]
    if not after or after[0]["trigger"] != "join" or float(after[0]["start_s"]) - float(leave[0]["start_s"]) < 1.0:
        return False, "the sim's member does not rejoin in a separate rebalance over 1 s after its leave"
    s_moved = int(leave[0]["partitions_moved"]) + int(after[0]["partitions_moved"])
    for run in _runs(cell, base):
        later = _after_formation(run, n)
        if len(later) != 1 or later[0]["trigger"] != "max-poll-leave" or int(later[0]["partitions_moved"]) != 0:
            return False, f"{_where(run, base)}: not a single max-poll-leave rebalance that moved nothing after the start"
    head = (
        f"sim: max-poll-leave at {float(leave[0]['start_s']):.2f} s moved {leave[0]['partitions_moved']}, the rejoin "
        f"{float(after[0]['start_s']):.2f} s later moved {after[0]['partitions_moved']}; every real run: one "
        f"max-poll-leave that moved nothing"
    )
    if cell.metric == "rebalances":
        s0 = srows[0]
        one = int(s0["members"]) == 1 and float(s0["duration_ms"]) < 1.0
        ok = one and math.isclose(cell.distance, 2.0)
        return ok, head + f"; the sim's group of one{'' if one else ' missing'}: 2 more rebalances"
    if cell.metric == "partitions_moved":
        ok = math.isclose(cell.distance, s_moved)
        return ok, head + f"; {s_moved} moved in those two"
    run = _bounding(cell, base)
    i_run = _source_index(run, cell.metric)
    r = _rows(run, "rebalances.csv")[i_run]
    if cell.metric == "rebalance_ms_p50" and i_run == 0:
        # Two real rebalances (the start and the cut-off): the nearest-rank median is the start;
        # the sim's four (group of one, start, leave, rejoin) put an event rebalance there.
        two = len(_rows(run, "rebalances.csv")) == 2
        four = len(srows) == 4 and int(srows[0]["members"]) == 1
        i_sim = _source_index(sim, cell.metric)
        ok = two and four and i_sim in (li, li + 1)
        return ok, head + (
            f"; p50 = the start in {_where(run, base)} (of its 2 rebalances), rebalance {i_sim} "
            f"({_rows(sim, 'rebalances.csv')[i_sim]['trigger']}) of the sim's {len(srows)}"
        )
    ok = r["trigger"] == "max-poll-leave" and float(r["start_s"]) < float(leave[0]["start_s"]) - 1.0
    return ok, head + (
        f"; {cell.metric} = that rebalance in {_where(run, base)} ({float(r['start_s']):.2f}-{float(r['end_s']):.2f} s: "
        f"from the poll timer, not from the leave)"
    )


def _commit_gap(event_s: float, restart_s: float, interval_s: float) -> float | None:
    """E - the last commit before E of a timer restarted at R (commits at R + n x I, n >= 1);
    None when no commit falls between R and E."""
    n = math.floor((event_s - restart_s) / interval_s)
    return None if n < 1 else event_s - (restart_s + n * interval_s)


def _reprocessed_range(event_s: float, lo: float, hi: float, interval_s: float, rate: float) -> tuple[float, float]:
    """Records processed again after E for a timer restart anywhere in [lo, hi]: rate x the gap
    since the last commit; with no commit since the restart (and none before it), everything
    processed since offset 0: between rate x (E - R) (what arrived after the restart) and
    rate x E (everything that arrived)."""
    pts = [lo, hi] + [event_s - k * interval_s for k in range(1, 100) if lo < event_s - k * interval_s < hi]
    out: list[float] = []
    for t in pts:
        for u in (t, t - 1e-9, t + 1e-9):
            if lo <= u <= hi:
                g = _commit_gap(event_s, u, interval_s)
                out += [rate * (event_s - u), rate * event_s] if g is None else [rate * g]
    return min(out), max(out)


def _commit_setup(cell: Cell, base: Path) -> tuple[float, float, float]:
    """(E, I, records/s of one member's partitions) of a records_reprocessed cell."""
    sc = _scenario(cell, base)
    cfg = sc.get("consumer", {}).get("config", {})
    if str(cfg.get("enable.auto.commit", "")).lower() != "true":
        raise ValueError("no auto-commit")
    interval = float(cfg["auto.commit.interval.ms"]) / 1e3
    ev = [e for e in _events(sc) if e.get("kind") in ("crash", "stall", "pause")]
    if not ev:
        raise ValueError("no crash, stall or pause")
    topics = sc.get("topic", [])
    rate = sum(float(t["rate"]) * int(t["partitions"]) for t in topics) / _group_size(sc)
    return _seconds(ev[0]["at"]), interval, rate


def _within(value: float, lo: float, hi: float) -> bool:
    slack = max(10.0, 0.1 * value)
    return lo - slack <= value <= hi + slack


def _last_before(run: Path, event_s: float) -> dict[str, str]:
    rows = [r for r in _rows(run, "rebalances.csv") if float(r["end_s"]) < event_s]
    if not rows:
        raise ValueError(f"{run}: no rebalance ends before {event_s} s")
    return rows[-1]


def check_commit_phase(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric != "records_reprocessed":
        return False, f"check commit-phase does not apply to {cell.metric}"
    e, interval, rate = _commit_setup(cell, base)
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    s_r = float(_last_before(sim, e)["end_s"])
    s_lo, s_hi = _reprocessed_range(e, s_r, s_r, interval, rate)
    r = _last_before(run, e)
    if cell.protocol.startswith("consumer:"):
        lo, hi = float(r["start_s"]), float(r["end_s"])
    else:
        hi = float(r["end_s"])
        lo = hi - 0.3
    r_lo, r_hi = _reprocessed_range(e, lo, hi, interval, rate)
    value = _value(run, cell.metric)
    ok = _within(value, r_lo, r_hi) and _within(cell.sim, s_lo, s_hi)
    return ok, (
        f"E = {e:g} s, {rate:.1f} records/s per member, commits every {interval:g} s from the restart: "
        f"sim restart {s_r:.2f} s -> {s_lo:.0f}-{s_hi:.0f} (sim {cell.sim:g}); {_where(run, base)} restart in "
        f"{lo:.2f}-{hi:.2f} s -> {r_lo:.0f}-{r_hi:.0f} (real {value:g})"
    )


def _lateness(run: Path) -> float:
    text = (run / "host.txt").read_text()
    m = re.search(r"subscribe after its moment: (-?[\d.]+) s", text)
    if not m:
        raise ValueError(f"{run}/host.txt: no subscribe lateness")
    return float(m[1])


def check_rdkafka_timer_start(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric != "records_reprocessed" or cell.client != "librdkafka" or cell.side != "below":
        return False, "check rdkafka-timer-start applies to librdkafka records_reprocessed below the range"
    e, interval, rate = _commit_setup(cell, base)
    sc = _scenario(cell, base)
    timing = sc.get("timing", {})
    t_lo = _seconds(timing.get("start_delay", "0s"))
    t_hi = t_lo + _seconds(timing.get("start_spread", "0s"))
    p_lo, p_hi = _reprocessed_range(e, 0.0, 0.0, interval, rate)
    run = _bounding(cell, base)
    lat, v = _lateness(run), _value(run, cell.metric)
    if lat > 0.05 or not _within(v, p_lo, p_hi):
        return False, f"{_where(run, base)}: subscribed {lat:.3f} s late, {v:g} again (R = 0 gives {p_lo:.0f})"
    s_lo, s_hi = _reprocessed_range(e, t_lo, t_hi, interval, rate)
    ok = _within(cell.sim, s_lo, s_hi)
    return ok, (
        f"{_where(run, base)}: members subscribed {lat:.3f} s late at most, {v:g} again; R = 0 gives {p_lo:.0f}; "
        f"the sim's start window {t_lo:g}-{t_hi:g} s gives {s_lo:.0f}-{s_hi:.0f} (sim {cell.sim:g})"
    )


def check_rdkafka_resume(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric != "records_reprocessed" or cell.side != "above":
        return False, "check rdkafka-resume applies to records_reprocessed above the range"
    e, interval, rate = _commit_setup(cell, base)
    real_pred = _reprocessed_range(e, 0.0, 0.0, interval, rate)[0]
    values = [_value(run, cell.metric) for run in _runs(cell, base)]
    most = rate * interval
    if max(values) > most:
        return False, f"a real run reprocessed {max(values):g} > {most:.0f}, more than a commit phase gives"
    ok = cell.sim > most
    return ok, (
        f"real {min(values):g}-{max(values):g}, within one commit interval's records (R = 0 gives {real_pred:.0f}); "
        f"the sim's {cell.sim:g} {'>' if ok else '<='} {most:.0f}, the most a commit phase gives ({rate:.1f}/s x {interval:g} s)"
    )


def _spread(run: Path) -> dict[str, str]:
    for r in _rows(run, "rebalances.csv"):
        if int(r["partitions_moved"]) > 0:
            return r
    raise ValueError(f"{run}: no rebalance moved partitions")


def _sim_start_downtime(sim: Path, spread_end: float) -> tuple[float, float]:
    """The sim's down time up to its spread's end (partition-s: its `unassigned` and `revoked`
    intervals that end by then) and its initial wait (the least first `unassigned` interval)."""
    first: dict[str, float] = {}
    total = 0.0
    for r in _rows(sim, "ownership.csv"):
        a, b = float(r["start_s"]), float(r["end_s"])
        if r["state"] == "unassigned" and r["partition"] not in first and a < spread_end:
            first[r["partition"]] = b - a
        if r["state"] in ("unassigned", "revoked") and b <= spread_end + 1e-9:
            total += b - a
    if not first:
        raise ValueError(f"{sim}/ownership.csv: no unassigned interval")
    return total, min(first.values())


def check_kip848_start(cell: Cell, base: Path) -> tuple[bool, str]:
    if not cell.protocol.startswith("consumer:"):
        return False, "check kip848-start applies to KIP-848 (consumer:*) cells"
    if cell.metric not in ("downtime_partition_s", "stop_the_world_s") or cell.side != "below":
        return False, "check kip848-start applies to downtime_partition_s / stop_the_world_s below the range"
    sc = _scenario(cell, base)
    rate = min(float(t["rate"]) for t in sc.get("topic", []))
    tick = 1.0 / rate
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    where = _where(run, base)
    # Partitions down at least once: every partition there at the start waited for its first
    # assignment (one added later may never have been down).
    rows = [r for r in _rows(run, "partitions.csv") if int(r["episodes"]) >= 1]
    once = [float(r["downtime_s"]) for r in rows if int(r["moves"]) == 0 and int(r["episodes"]) == 1]
    if not once:
        return False, f"{where}: no partition that never moved and was down once (its initial wait)"
    stw = _value(run, "stop_the_world_s")
    if max(once) < stw - tick:
        return False, f"{where}: stop-the-world {stw:.3f} s > the initial wait {max(once):.3f} s: not only the start's"
    s_spread = _spread(sim)
    s_start, s_w = _sim_start_downtime(sim, float(s_spread["end_s"]))
    s_stw = _value(sim, "stop_the_world_s")
    if s_stw > s_w + tick:
        return False, f"the sim's stop-the-world {s_stw:.3f} s > its initial wait {s_w:.3f} s"
    if cell.metric == "stop_the_world_s":
        return True, (
            f"{where}: stop-the-world {stw:.3f} s = the wait for the first assignment (a partition that never "
            f"moved waited {max(once):.3f} s), the sim's {s_stw:.3f} s = its wait ({s_w:.3f} s)"
        )
    # Every partition waited for the first assignment: exactly, the ones down once and never moved;
    # the others at least the least of those less one record interval. A partition moved once, down
    # twice, moved in the start's spread: its second episode (its downtime less the wait, which is at
    # most the stop-the-world) is the spread's gap; at least (spread moves - partitions moved more
    # than once) of them were moved in the spread, the smallest such gaps are counted.
    waits, gaps = _start_waits_and_gaps(run, rows, once, stw, tick)
    bound = waits + gaps - s_start
    ok = bound >= cell.distance
    return ok, (
        f"{where}: the start's waits >= {waits:.2f} partition-s (initial wait {min(once):.3f}-{max(once):.3f} s, the "
        f"sim's {s_w:.3f} s), its spread's gaps >= {gaps:.2f}; the sim's start {s_start:.2f}: "
        f"{bound:.3g} partition-s {'>=' if ok else '<'} distance {cell.distance:.3g}"
    )


def _start_waits_and_gaps(
    run: Path, rows: list[dict[str, str]], once: list[float], stw: float, tick: float
) -> tuple[float, float]:
    """Lower bounds of a run's start from partitions.csv: the waits for the first assignment and
    the spread's gaps (see check kip848-start)."""
    w_min = min(once)
    waits = sum(once) + (len(rows) - len(once)) * max(0.0, w_min - tick)
    spread_moves = int(_spread(run)["partitions_moved"])
    multi = sum(1 for r in rows if int(r["moves"]) >= 2)
    singles = sorted(
        max(0.0, float(r["downtime_s"]) - stw) for r in rows if int(r["moves"]) == 1 and int(r["episodes"]) == 2
    )
    return waits, sum(singles[: max(0, spread_moves - multi)])


def _start_bound(cell: Cell, base: Path, run: Path) -> float | None:
    """How much a run's start exceeds the sim's at least (partition-s, from partitions.csv), or
    None when the run has no partition that never moved and was down once."""
    rate = min(float(t["rate"]) for t in _scenario(cell, base).get("topic", []))
    rows = [r for r in _rows(run, "partitions.csv") if int(r["episodes"]) >= 1]
    once = [float(r["downtime_s"]) for r in rows if int(r["moves"]) == 0 and int(r["episodes"]) == 1]
    if not once:
        return None
    sim = cell.folder(base) / "sim"
    s_start, _ = _sim_start_downtime(sim, float(_spread(sim)["end_s"]))
    waits, gaps = _start_waits_and_gaps(run, rows, once, _value(run, "stop_the_world_s"), 1.0 / rate)
    return waits + gaps - s_start


Intervals = list[tuple[float, float]]


def _clip(ivs: Intervals, lo: float, hi: float) -> Intervals:
    return [(max(a, lo), min(b, hi)) for a, b in ivs if b > lo and a < hi]


def _run_intervals(run: Path) -> tuple[dict[str, Intervals], dict[str, Intervals]]:
    """A measured run's down and allowed intervals per partition (rep*/intervals.csv)."""
    down: dict[str, Intervals] = {}
    allowed: dict[str, Intervals] = {}
    for r in _rows(run, "intervals.csv"):
        key = f"{r['topic']}/{r['partition']}"
        (down if r["kind"] == "down" else allowed).setdefault(key, []).append((float(r["from_s"]), float(r["to_s"])))
    return down, allowed


SIM_UP = ("consuming", "idle")


def _sim_intervals(sim: Path) -> tuple[dict[str, Intervals], dict[str, Intervals]]:
    """The sim's down intervals (any state but consuming and idle) and allowed ones (consuming, or
    idle with an owner) per partition, from ownership.csv."""
    down: dict[str, Intervals] = {}
    allowed: dict[str, Intervals] = {}
    for r in _rows(sim, "ownership.csv"):
        key = f"{r['topic']}/{r['partition']}"
        iv = (float(r["start_s"]), float(r["end_s"]))
        if r["state"] not in SIM_UP:
            down.setdefault(key, []).append(iv)
        elif r["owner"]:
            allowed.setdefault(key, []).append(iv)
    return down, {k: union(v) for k, v in allowed.items()}


def _split(down: dict[str, Intervals], allowed: dict[str, Intervals], metric: str, t: float) -> tuple[float, float]:
    """(before t, from t on) of downtime_partition_s or stop_the_world_s."""
    if metric == "downtime_partition_s":
        ivs = [iv for v in down.values() for iv in v]
        return sum(b - a for a, b in _clip(ivs, 0.0, t)), sum(b - a for a, b in _clip(ivs, t, math.inf))
    stw = subtract(union([iv for v in down.values() for iv in v]), union([iv for v in allowed.values() for iv in v]))
    return total_s(_clip(stw, 0.0, t)), total_s(_clip(stw, t, math.inf))


def _split_both(metric: str, run: Path, sim: Path, t: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """(before t, from t on) of the run (intervals.csv) and of the sim (ownership.csv); each
    side's parts must add up to its summary.csv value (within 1 ms a partition)."""
    sides = []
    for label, folder, (down, allowed) in (("run", run, _run_intervals(run)), ("sim", sim, _sim_intervals(sim))):
        before, after = _split(down, allowed, metric, t)
        total = _value(folder, metric)
        if abs(before + after - total) > 1e-3 * max(1, len(down)):
            raise ValueError(f"{folder}: the {label}'s intervals add up to {before + after:.6f}, not {metric} {total}")
        sides.append((before, after))
    return sides[0], sides[1]


def _split_verdict(cell: Cell, base: Path, run: Path, distance: float) -> tuple[bool, str]:
    """The kip848-start-split test of one run that has intervals.csv, against its own distance
    to the sim (the run's value less the sim's)."""
    sim, where = cell.folder(base) / "sim", _where(run, base)
    t = max(float(_spread(run)["end_s"]), float(_spread(sim)["end_s"]))
    first_event = min((_seconds(e["at"]) for e in _events(_scenario(cell, base))), default=math.inf)
    if t >= first_event:
        return False, f"{where}: the starts end at {t:.3f} s, after the first event ({first_event:g} s)"
    (r_before, r_after), (s_before, s_after) = _split_both(cell.metric, run, sim, t)
    excess, rest = r_before - s_before, r_after - s_after
    allowance, why = _after_start_allowance(cell, base, run, t)
    ok = excess >= 0 and rest <= allowance
    return ok, (
        f"{where}: before {t:.3f} s (the later start's end) {r_before:.3f} against the sim's {s_before:.3f} "
        f"(the start's excess {excess:.3g} of the distance {distance:.3g}), after it {r_after:.3f} against "
        f"{s_after:.3f}: the rest {rest:.3g} {'<=' if rest <= allowance else '>'} {why}"
    )


HB_KEY = "group.consumer.heartbeat.interval.ms"


def _after_start_allowance(cell: Cell, base: Path, run: Path, t: float) -> tuple[float, str]:
    """What the heartbeat phase may add after the start: one heartbeat interval per partition the
    run moved after t (downtime), 1 ms (stop-the-world: none after the first assignment)."""
    if cell.metric != "downtime_partition_s":
        return 0.001, "1 ms"
    hb_s = float(_scenario(cell, base).get("broker", {}).get("config", {}).get(HB_KEY, 5000)) / 1000.0
    moved = sum(int(r["partitions_moved"]) for r in _rows(run, "rebalances.csv") if float(r["start_s"]) >= t)
    return moved * hb_s, f"{moved} partitions moved after it x {hb_s:g} s"


def _kip848_cell(cell: Cell, name: str) -> str | None:
    if not cell.protocol.startswith("consumer:") or cell.side != "below":
        return f"check {name} applies to KIP-848 (consumer:*) cells below the range"
    if cell.metric not in ("downtime_partition_s", "stop_the_world_s"):
        return f"check {name} applies to downtime_partition_s / stop_the_world_s"
    return None


def check_kip848_start_split(cell: Cell, base: Path) -> tuple[bool, str]:
    refused = _kip848_cell(cell, "kip848-start-split")
    if refused:
        return False, refused
    run = _bounding(cell, base)
    if not (run / "intervals.csv").exists():
        return False, f"{_where(run, base)}: measured without intervals.csv"
    return _split_verdict(cell, base, run, cell.distance)


def check_kip848_start_split_runs(cell: Cell, base: Path) -> tuple[bool, str]:
    return _split_runs(cell, base, "kip848-start-split-runs", start_longer=True)


def check_kip848_after_start(cell: Cell, base: Path) -> tuple[bool, str]:
    return _split_runs(cell, base, "kip848-after-start", start_longer=False)


def _split_runs(cell: Cell, base: Path, name: str, start_longer: bool) -> tuple[bool, str]:
    """kip848-start-split-runs (the bounding run's start exceeds the sim's by >= 0) and
    kip848-after-start (it does not: what is left lies after the start) on a bounding run without
    intervals, with the runs that have them as evidence of where the excess lies."""
    refused = _kip848_cell(cell, name)
    if refused:
        return False, refused
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    if (run / "intervals.csv").exists():
        return False, f"{_where(run, base)} has intervals.csv: kip848-start-split decides"
    measured = [r for r in _runs(cell, base) if (r / "intervals.csv").exists()]
    if len(measured) < 2:
        return False, f"{len(measured)} runs with intervals.csv (2 needed)"
    verdicts = [_split_verdict(cell, base, r, _value(r, cell.metric) - _value(sim, cell.metric)) for r in measured]
    bad = [why for ok, why in verdicts if not ok]
    if bad:
        return False, bad[0]
    t = max(float(_spread(run)["end_s"]), float(_spread(sim)["end_s"]))
    allowance, why = _after_start_allowance(cell, base, run, t)
    if cell.metric == "stop_the_world_s":
        if not start_longer:
            return False, f"check {name} applies to downtime_partition_s"
        head = f"{_where(run, base)} (no intervals): its stop-the-world is not split"
        ok = True
    else:
        bound = _start_bound(cell, base, run)
        if bound is None:
            return False, f"{_where(run, base)}: no partition that never moved and was down once (its initial wait)"
        rest = cell.distance - bound
        ok = (bound >= 0) == start_longer and rest <= allowance
        shorter = "" if bound >= 0 else " (its start was shorter than the sim's: the distance lies after it)"
        head = (f"{_where(run, base)} (no intervals): its start exceeds the sim's by >= {bound:.3g} of the distance "
                f"{cell.distance:.3g} (check kip848-start){shorter}, the rest <= {rest:.3g} "
                f"{'<=' if rest <= allowance else '>'} {why}")
    runs = "; ".join(why for _, why in verdicts)
    return ok, f"{head}; the {len(measured)} runs with intervals: {runs}"


def _classic_split(cell: Cell, base: Path) -> tuple[float, float, float, str, str] | str:
    """A classic downtime / stop-the-world cell below the range, its bounding run measured with
    intervals: (the run's excess before T, after T, the heartbeat allowance after T, its
    reason, the figures) with T the later formation end; or why it does not apply."""
    if cell.protocol.startswith("consumer:") or cell.side != "below":
        return "applies to classic cells below the range"
    if cell.metric not in ("downtime_partition_s", "stop_the_world_s"):
        return "applies to downtime_partition_s / stop_the_world_s"
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    where = _where(run, base)
    if not (run / "intervals.csv").exists():
        return f"{where}: measured without intervals.csv"
    sc = _scenario(cell, base)
    n = _group_size(sc)
    t = max(_formation(run, n)[2], _formation(sim, n)[2])
    (r_before, r_after), (s_before, s_after) = _split_both(cell.metric, run, sim, t)
    hb_s = float(sc.get("consumer", {}).get("config", {}).get("heartbeat.interval.ms", 3000)) / 1000.0
    later = [r for r in _rows(run, "rebalances.csv") if float(r["start_s"]) >= t]
    if cell.metric == "stop_the_world_s":
        allowance, why = len(later) * hb_s, f"{len(later)} rebalances after it x {hb_s:g} s"
    elif cell.protocol.startswith("eager:"):
        parts = _partitions(sc)
        allowance, why = len(later) * parts * hb_s, f"{len(later)} rebalances after it x {parts} partitions x {hb_s:g} s"
    else:
        moved = sum(int(r["partitions_moved"]) for r in later)
        allowance, why = moved * hb_s, f"{moved} partitions moved after it x {hb_s:g} s"
    figures = (
        f"{where}: before {t:.3f} s (the later formation's end) {r_before:.3f} against the sim's {s_before:.3f}, "
        f"after it {r_after:.3f} against {s_after:.3f}"
    )
    return r_before - s_before, r_after - s_after, allowance, why, figures


def check_formation_split(cell: Cell, base: Path) -> tuple[bool, str]:
    got = _classic_split(cell, base)
    if isinstance(got, str):
        return False, f"check formation-split {got}" if not got.startswith(("java", "librdkafka")) else got
    excess, rest, _, _, figures = got
    ok = rest <= 1e-6
    return ok, f"{figures}: the formation's excess {excess:.3g} {'covers' if ok else 'does not cover'} the distance {cell.distance:.3g}"


def check_heartbeat_split(cell: Cell, base: Path) -> tuple[bool, str]:
    got = _classic_split(cell, base)
    if isinstance(got, str):
        return False, f"check heartbeat-split {got}" if not got.startswith(("java", "librdkafka")) else got
    excess, rest, allowance, why, figures = got
    ok = 0 < rest <= allowance
    return ok, (
        f"{figures}: the formation's excess {excess:.3g}, the rest after it {rest:.3g} "
        f"{'<=' if rest <= allowance else '>'} {why}"
    )


def check_sticky_giver(cell: Cell, base: Path) -> tuple[bool, str]:
    """librdkafka cooperative-sticky downtime below: the partition given to a joiner is another
    member's for real (the same partitions in every run) than in the sim, and after the formation
    the whole distance is that partition's wait (less the sim's mover's), within the heartbeat
    allowance."""
    if cell.client != "librdkafka" or not cell.protocol.startswith("cooperative:") or cell.side != "below":
        return False, "check sticky-giver applies to librdkafka cooperative cells below the range"
    if cell.metric != "downtime_partition_s":
        return False, "check sticky-giver applies to downtime_partition_s"
    got = _classic_split(cell, base)
    if isinstance(got, str):
        return False, got
    excess, rest, allowance, why, figures = got
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)

    def movers(folder: Path) -> set[str]:
        return {r["partition"] for r in _rows(folder, "partitions.csv") if int(r["moves"]) > 0}

    real = [movers(r) for r in _runs(cell, base)]
    if any(m != real[0] for m in real) or not real[0]:
        return False, "the real runs moved different partitions: " + ", ".join(sorted("/".join(sorted(m)) for m in real))
    if movers(sim) == real[0]:
        return False, f"the sim moved the same partitions ({'/'.join(sorted(real[0]))})"
    n = _group_size(_scenario(cell, base))
    t = max(_formation(run, n)[2], _formation(sim, n)[2])

    def moved_after(down: dict[str, Intervals], keys: set[str]) -> float:
        return sum(b - a for k, ivs in down.items() if k.split("/")[1] in keys for a, b in _clip(ivs, t, math.inf))

    r_moved = moved_after(_run_intervals(run)[0], real[0])
    s_moved = moved_after(_sim_intervals(sim)[0], movers(sim))
    others = rest - (r_moved - s_moved)
    ok = r_moved > s_moved and others <= allowance
    return ok, (
        f"{figures}; every real run moved partition {'/'.join(sorted(real[0]))}, the sim "
        f"{'/'.join(sorted(movers(sim)))}: down after the formation {r_moved:.3f} against {s_moved:.3f}; the other "
        f"partitions' rest {others:.3g} {'<=' if others <= allowance else '>'} {why}"
    )


CLIENT_SIDE_MAX_S = 0.3  # the client-side time after the broker's answer on this host (docs/timing.md: 20-300 ms)


def check_formation_lost(cell: Cell, base: Path) -> tuple[bool, str]:
    """records_lost below the range with auto.offset.reset = latest: each partition loses what
    was produced before its first position, which follows the formation; the run's formation ends
    later. Per partition, lost / rate is the moment of its reset (within one record interval)."""
    if cell.metric != "records_lost" or cell.side != "below":
        return False, "check formation-lost applies to records_lost below the range"
    sc = _scenario(cell, base)
    if str(sc.get("consumer", {}).get("config", {}).get("auto.offset.reset", "latest")) != "latest":
        return False, "the scenario resets to earliest: nothing is lost at the start"
    rates = {float(t["rate"]) for t in sc.get("topic", [])}
    if len(rates) != 1:
        return False, "the topics' rates differ"
    rate = rates.pop()
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    n = _group_size(sc)
    lines = []
    for folder in (run, sim):
        end = _formation(folder, n)[2]
        resets = [int(r["lost"]) / rate for r in _rows(folder, "partitions.csv")]
        lo, hi = min(resets) - end, max(resets) - end
        if lo < -2.0 / rate or hi > CLIENT_SIDE_MAX_S + 1.0 / rate:
            return False, (f"{_where(folder, base)}: resets {lo:+.3f}..{hi:+.3f} s from its formation's end "
                           f"({end:.3f} s), not within the client-side time")
        lines.append(f"{_where(folder, base)}: formation ends {end:.3f} s, resets {lo:+.3f}..{hi:+.3f} s after it")
    return True, "; ".join(lines) + f" (<= {CLIENT_SIDE_MAX_S:g} s client-side, one record = {1.0 / rate:g} s)"


def check_start_only_episodes(cell: Cell, base: Path) -> tuple[bool, str]:
    """KIP-848 downtime below the range: both sides were down only in their starts."""
    refused = _kip848_cell(cell, "start-only-episodes")
    if refused or cell.metric != "downtime_partition_s":
        return False, refused or "check start-only-episodes applies to downtime_partition_s"
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    where = _where(run, base)
    spread = int(_spread(run)["index"])
    later = [r for r in _rows(run, "rebalances.csv") if int(r["index"]) > spread and int(r["partitions_moved"]) > 0]
    if later:
        return False, f"{where}: rebalance {later[0]['index']} after its start moved partitions"
    extra = [r["partition"] for r in _rows(run, "partitions.csv") if int(r["episodes"]) > 1 + int(r["moves"])]
    if extra:
        return False, f"{where}: partition {extra[0]} was down more often than its start explains"
    s_end = float(_spread(sim)["end_s"])
    down, _ = _sim_intervals(sim)
    after = sum(b - a for ivs in down.values() for a, b in _clip(ivs, s_end, math.inf))
    if after > 1e-9:
        return False, f"the sim is down {after:.3f} partition-s after its start ({s_end:.3f} s)"
    return True, (
        f"{where}: every move in its start (rebalance {spread}), no partition down more than once per move plus "
        f"its first wait; the sim down only before {s_end:.3f} s: both values are their starts"
    )


def check_pause_held(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric not in ("rebalance_ms_p50", "rebalance_ms_max"):
        return False, f"check pause-held does not apply to {cell.metric}"
    sc = _scenario(cell, base)
    pauses = [e for e in _events(sc) if e.get("kind") == "pause"]
    if len(pauses) != 1:
        return False, "not a single pause"
    at, dur = _seconds(pauses[0]["at"]), _seconds(pauses[0]["duration"])
    if cell.protocol.startswith("consumer:"):
        cfg, key = sc.get("broker", {}).get("config", {}), "group.consumer.session.timeout.ms"
    else:
        cfg, key = sc.get("consumer", {}).get("config", {}), "session.timeout.ms"
    session = float(cfg[key]) / 1e3
    if dur <= session:
        return False, "the pause is shorter than the session timeout"
    resume = at + dur
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    s_exp = [r for r in _rows(sim, "rebalances.csv") if r["trigger"] == "session-expiry"]
    if len(s_exp) != 1 or float(s_exp[0]["end_s"]) >= resume:
        return False, "the sim has no session-expiry rebalance ending before the resume"
    i_run = _source_index(run, cell.metric)
    r = _rows(run, "rebalances.csv")[i_run]
    a, b = float(r["start_s"]), float(r["end_s"])
    ok = at + session - 1.5 <= a < resume and resume <= b <= resume + 1.0
    return ok, (
        f"{cell.metric} = rebalance {i_run} of {_where(run, base)}: {a:.2f}-{b:.2f} s, from about the session expiry "
        f"({at:g} + {session:g} s) to {b - resume:.3f} s after the resume at {resume:g} s; the sim's session-expiry "
        f"rebalance: {float(s_exp[0]['start_s']):.2f}-{float(s_exp[0]['end_s']):.2f} s"
    )


def check_kip848_start_p50(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric != "rebalance_ms_p50" or not cell.protocol.startswith("consumer:"):
        return False, "check kip848-start-p50 applies to KIP-848 rebalance_ms_p50"
    sc = _scenario(cell, base)
    n = _group_size(sc)
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    rows = _rows(sim, "rebalances.csv")
    s0 = rows[0]
    if not (int(s0["members"]) == 1 and float(s0["duration_ms"]) < 1.0 and _formation(sim, n)[0] == 1):
        return False, "the sim's rebalance 0 is not a group of one"
    rest = sorted(rows[1:], key=lambda r: float(r["duration_ms"]))
    pick = rest[max(0, math.ceil(0.5 * len(rest)) - 1)]
    i_run = _source_index(run, cell.metric)
    t_run = _rows(run, "rebalances.csv")[i_run]["trigger"]
    hb = float(sc.get("broker", {}).get("config", {})["group.consumer.heartbeat.interval.ms"])
    value = float(pick["duration_ms"])
    bound = cell.real_min if cell.side == "below" else cell.real_max
    left = abs(value - bound) if not (cell.real_min <= value <= cell.real_max) else 0.0
    ok = int(pick["index"]) != _source_index(sim, cell.metric) and pick["trigger"] == t_run and left <= hb
    return ok, (
        f"the sim's p50 without its group of one: rebalance {pick['index']} ({pick['trigger']}, {value:.0f} ms), "
        f"the bounding run's: rebalance {i_run} ({t_run}); {left:.0f} ms from the real range"
    )


def check_kip848_spread_p50(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric != "rebalance_ms_p50" or not cell.protocol.startswith("consumer:"):
        return False, "check kip848-spread-p50 applies to KIP-848 rebalance_ms_p50"
    sc = _scenario(cell, base)
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    hb = float(sc.get("broker", {}).get("config", {})["group.consumer.heartbeat.interval.ms"])
    spread = _spread(run)
    i_run = _source_index(run, cell.metric)
    if i_run != int(spread["index"]) or int(spread["index"]) == 0:
        return False, f"the p50 of {_where(run, base)} is rebalance {i_run}, not its start's spread"
    i_sim = _source_index(sim, cell.metric)
    s_row = _rows(sim, "rebalances.csv")[i_sim]
    if i_sim <= _formation(sim, _group_size(sc))[0]:
        return False, "the sim's p50 is its start"
    same = [r for r in _rows(run, "rebalances.csv") if r["trigger"] == s_row["trigger"] and int(r["index"]) > i_run]
    if len(same) != 1:
        return False, f"{_where(run, base)} has no single {s_row['trigger']} rebalance after its start"
    gap = abs(float(same[0]["duration_ms"]) - float(s_row["duration_ms"]))
    ok = gap <= hb
    return ok, (
        f"p50 = the spread of {_where(run, base)} (rebalance {i_run}, {float(spread['duration_ms']):.0f} ms), the sim's "
        f"its {s_row['trigger']} ({float(s_row['duration_ms']):.0f} ms); the run's {s_row['trigger']}: "
        f"{float(same[0]['duration_ms']):.0f} ms, {gap:.0f} ms {'<=' if ok else '>'} one heartbeat interval"
    )


def check_start_max(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric != "rebalance_ms_max" or cell.side != "below":
        return False, "check start-max applies to rebalance_ms_max below the range"
    sc = _scenario(cell, base)
    run = _bounding(cell, base)
    i_form = _formation(run, _group_size(sc))[0]
    rows = _rows(run, "rebalances.csv")
    i_run = _source_index(run, cell.metric)
    others = [float(r["duration_ms"]) for r in rows if int(r["index"]) != i_form]
    ok = i_run == i_form and max(others, default=0.0) <= cell.sim
    return ok, (
        f"rebalance_ms_max = rebalance {i_run} of {_where(run, base)}, its start (rebalance {i_form}, "
        f"{float(rows[i_form]['duration_ms']):.0f} ms); its other rebalances at most "
        f"{max(others, default=0.0):.0f} ms {'<=' if ok else '>'} the sim's {cell.sim:.0f} ms"
    )


def check_join_stall_end(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric not in ("rebalance_ms_p50", "rebalance_ms_max") or cell.side != "below":
        return False, "check join-stall-end applies to rebalance_ms_p50 / _max below the range"
    sc = _scenario(cell, base)
    joins = [_seconds(e["at"]) for e in _events(sc) if e.get("kind") == "join"]
    stalls = [e for e in _events(sc) if e.get("kind") == "stall"]
    if len(joins) != 1 or len(stalls) != 1:
        return False, "not a single join and a single stall"
    j = joins[0]
    s0 = _seconds(stalls[0]["at"])
    e = s0 + _seconds(stalls[0]["duration"])
    if not s0 < j < e:
        return False, "the join does not fall within the stall"
    delay = _seconds(sc.get("timing", {}).get("start_delay", "0s"))
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    i_sim, i_run = _source_index(sim, cell.metric), _source_index(run, cell.metric)
    s, r = _rows(sim, "rebalances.csv")[i_sim], _rows(run, "rebalances.csv")[i_run]
    if s["trigger"] != "join" or r["trigger"] != "join":
        return False, f"{cell.metric} = rebalance {i_sim} ({s['trigger']}) in the sim, {i_run} ({r['trigger']}) in {_where(run, base)}: not the join's"
    sa, sb, ra, rb = float(s["start_s"]), float(s["end_s"]), float(r["start_s"]), float(r["end_s"])
    if abs(ra - j) > 0.01 or sa < j + delay:
        return False, f"the run's join rebalance starts at {ra:.3f} s, the sim's at {sa:.3f} s (join at {j:g} s, start_delay {delay:g} s)"
    if not (e <= sb <= e + 0.05 and e <= rb <= e + 0.3):
        return False, f"the sim's join rebalance ends at {sb:.3f} s, the run's at {rb:.3f} s (stall ends at {e:g} s)"
    start_part, end_part = (sa - ra) * 1e3, (rb - sb) * 1e3
    ok = cell.distance is not None and cell.distance <= start_part + end_part + 0.01
    return ok, (
        f"{cell.metric} = the join's rebalance (stall {s0:g}-{e:g} s, join at {j:g} s): {_where(run, base)} "
        f"{ra:.3f}-{rb:.3f} s, the sim {sa:.3f}-{sb:.3f} s; the sim's joiner starts {start_part:.0f} ms after the run's, "
        f"the run ends {end_part:.0f} ms after the sim: {start_part + end_part:.0f} ms "
        f"{'>=' if ok else '<'} distance {cell.distance:.0f} ms"
    )


def check_kip848_start_median(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric != "rebalance_ms_p50" or not cell.protocol.startswith("consumer:") or cell.side != "below":
        return False, "check kip848-start-median applies to KIP-848 rebalance_ms_p50 below the range"
    n = _group_size(_scenario(cell, base))
    sim, run = cell.folder(base) / "sim", _bounding(cell, base)
    rows = _rows(sim, "rebalances.csv")
    if not (int(rows[0]["members"]) == 1 and float(rows[0]["duration_ms"]) < 1.0 and _formation(sim, n)[0] == 1):
        return False, "the sim's rebalance 0 is not a group of one"
    s_form = float(rows[1]["duration_ms"])
    if _source_index(sim, cell.metric) != 1:
        return False, "the sim's p50 is not its start"
    starts = []
    for r in _runs(cell, base):
        f_idx, f_ms, _ = _formation(r, n)
        later = [x for x in _rows(r, "rebalances.csv") if int(x["index"]) > f_idx]
        if len(later) != 1 or _source_index(r, cell.metric) != int(later[0]["index"]) or f_ms < float(later[0]["duration_ms"]):
            return False, f"{_where(r, base)}: its p50 is not its one rebalance after the start"
        starts.append(f_ms)
    ev = _rows(run, "rebalances.csv")[_source_index(run, cell.metric)]
    same = [x for x in rows[2:] if abs(float(x["start_s"]) - float(ev["start_s"])) <= 1.0]
    if len(same) != 1:
        return False, f"the sim has no one rebalance within 1 s of {_where(run, base)}'s p50 rebalance ({ev['start_s']} s)"
    v = float(same[0]["duration_ms"])
    ok = cell.real_min <= v <= cell.real_max
    return ok, (
        f"the real p50 is the rebalance after the start in every run (starts {min(starts):.0f}-{max(starts):.0f} ms, "
        f"the sim's {s_form:.0f} ms, which is its p50); {_where(run, base)}'s: {ev['trigger']} "
        f"{float(ev['start_s']):.2f}-{float(ev['end_s']):.2f} s; the sim's rebalance {same[0]['index']} "
        f"({same[0]['trigger']}, {float(same[0]['start_s']):.2f}-{float(same[0]['end_s']):.2f} s) lasts {v:.0f} ms, "
        f"{'inside' if ok else 'outside'} the real {cell.real_min:.0f}-{cell.real_max:.0f}"
    )


def check_kip848_extra_heartbeat(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric != "rebalance_ms_max" or not cell.protocol.startswith("consumer:") or cell.side != "above":
        return False, "check kip848-extra-heartbeat applies to KIP-848 rebalance_ms_max above the range"
    sc = _scenario(cell, base)
    n = _group_size(sc)
    hb = float(sc.get("broker", {}).get("config", {})["group.consumer.heartbeat.interval.ms"]) / 1e3
    sim = cell.folder(base) / "sim"
    i_sim = _source_index(sim, cell.metric)
    if i_sim <= _formation(sim, n)[0]:
        return False, f"the sim's max is rebalance {i_sim}, not after its formation"
    rb = _rows(sim, "rebalances.csv")[i_sim]
    a, b = float(rb["start_s"]), float(rb["end_s"])
    segs: dict[str, list[tuple[float, float, str]]] = {}
    for r in _rows(sim, "ownership.csv"):
        segs.setdefault(r["partition"], []).append((float(r["start_s"]), float(r["end_s"]), r["owner"]))
    owned = {p: [x for x in v if x[2]] for p, v in segs.items()}
    late = []  # (partition, X, released at r) given to X at b
    got = []   # (partition, X, t1) given to X in [a, b)
    for p, v in owned.items():
        for prev, cur in zip(v, v[1:]):
            if prev[2] == cur[2]:
                continue
            if abs(cur[0] - b) <= 0.001 and a <= prev[1] < b:
                late.append((p, cur[2], prev[1]))
            elif a <= cur[0] < b - 0.001:
                got.append((p, cur[2], cur[0]))
    for p, x, r in late:
        before = [t for q, y, t in got if y == x and t < r]
        if not before:
            continue
        t1 = max(before)
        if abs((b - t1) - hb) <= 0.1:
            ok = (t1 - a) * 1e3 <= cell.real_max
            return ok, (
                f"the sim's max, rebalance {i_sim} ({rb['trigger']}, {a:.3f}-{b:.3f} s): {x} got a partition at "
                f"{t1:.3f} s, partition {p} was released at {r:.3f} s ({(r - t1) * 1e3:.0f} ms after {x}'s heartbeat) "
                f"and reached {x} at its next heartbeat, {b:.3f} s; without it {(t1 - a) * 1e3:.0f} ms "
                f"{'<=' if ok else '>'} the real max {cell.real_max:.0f} ms"
            )
    return False, f"the sim's max, rebalance {i_sim}: no partition released just after its new owner's heartbeat"


def check_kip848_start_count(cell: Cell, base: Path) -> tuple[bool, str]:
    if cell.metric != "rebalances" or cell.side != "above" or not math.isclose(cell.distance, 1.0):
        return False, "check kip848-start-count applies to rebalances above the range by 1"
    sc = _scenario(cell, base)
    n = _group_size(sc)
    sim = cell.folder(base) / "sim"
    s0 = _rows(sim, "rebalances.csv")[0]
    if not (int(s0["members"]) == 1 and int(s0["partitions_moved"]) == 0 and float(s0["duration_ms"]) < 1.0 and _formation(sim, n)[0] == 1):
        return False, "the sim's rebalance 0 is not a group of one before the formation"
    for run in _runs(cell, base):
        r0 = _rows(run, "rebalances.csv")[0]
        if int(r0["members"]) < n or int(r0["partitions_moved"]) == 0:
            return False, f"{_where(run, base)}: rebalance 0 ends with {r0['members']} members, moved {r0['partitions_moved']}"
    return True, (
        f"sim: rebalance 0 a group of one ({float(s0['duration_ms']):.2f} ms), the group formed in rebalance 1; "
        f"every real run: rebalance 0 ends with {n} members and moved partitions"
    )


CHECKS = {
    "formation": check_formation,
    "heartbeat": check_heartbeat,
    "heartbeat-event": check_heartbeat_event,
    "moved-only": check_moved_only,
    "static-absence": check_static_absence,
    "static-leave-start": check_static_leave_start,
    "cutoff": check_cutoff,
    "rdkafka-maxpoll-rejoin": check_rdkafka_maxpoll_rejoin,
    "commit-phase": check_commit_phase,
    "rdkafka-timer-start": check_rdkafka_timer_start,
    "rdkafka-resume": check_rdkafka_resume,
    "kip848-start": check_kip848_start,
    "kip848-start-split": check_kip848_start_split,
    "maxpoll-or-moved": check_maxpoll_or_moved,
    "heartbeat-max": check_heartbeat_max,
    "kip848-start-split-runs": check_kip848_start_split_runs,
    "kip848-after-start": check_kip848_after_start,
    "start-only-episodes": check_start_only_episodes,
    "formation-split": check_formation_split,
    "heartbeat-split": check_heartbeat_split,
    "sticky-giver": check_sticky_giver,
    "formation-lost": check_formation_lost,
    "kip848-start-count": check_kip848_start_count,
    "kip848-start-p50": check_kip848_start_p50,
    "pause-held": check_pause_held,
    "kip848-spread-p50": check_kip848_spread_p50,
    "start-max": check_start_max,
    "join-stall-end": check_join_stall_end,
    "kip848-start-median": check_kip848_start_median,
    "kip848-extra-heartbeat": check_kip848_extra_heartbeat,
}


def explain(cells: list[Cell], rules: list[Rule], spread: dict[Any, Any], base: Path) -> list[Verdict]:
    """A verdict for every OUT cell: the first rule that matches (patterns, side, spread, check)."""
    out = []
    for cell in cells:
        if cell.real_min <= cell.sim <= cell.real_max:
            continue
        v = Verdict(cell, spread_verdict(cell, spread))
        for rule in rules:
            if not all(matches(p, getattr(cell, k)) for k, p in rule.patterns.items()):
                continue
            if rule.side and rule.side != cell.side:
                continue
            if rule.spread and v.spread not in rule.spread:
                continue
            detail = rule.note
            if rule.check:
                try:
                    ok, why = CHECKS[rule.check](cell, base)
                except (OSError, ValueError, KeyError) as err:
                    ok, why = False, f"cannot check: {err}"
                if not ok:
                    v.failed.append(f"{rule.cause} ({rule.check}): {why}")
                    continue
                detail = "; ".join(x for x in (why, rule.note) if x)
            elif rule.spread:
                detail = "; ".join(x for x in (f"SPREAD.md: {v.spread}", rule.note) if x)
            v.cause, v.detail = rule.cause, detail
            break
        out.append(v)
    return out


# ---- OUT.md ----


def fmt(x: float) -> str:
    """A compact number."""
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.3g}"


def rel(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def row(v: Verdict) -> str:
    c = v.cell
    return (
        f"| {c.client} | {c.scenario} | {c.protocol} | {c.metric} | {fmt(c.sim)} | "
        f"{fmt(c.real_min)}-{fmt(c.real_median)}-{fmt(c.real_max)} ({c.n}) | {c.side} | {fmt(c.distance)} | "
        f"{rel(c.relative)} | {v.spread} |"
    )


def head(last: str) -> str:
    """The header of a cell table whose last column is `last`."""
    cols = ["client", "scenario", "protocol", "metric", "sim", "real min-median-max (n)", "sim is", "distance",
            "relative", "seeds", last]
    return "| " + " | ".join(cols) + " |\n" + "|---" * len(cols) + "|"


def render(verdicts: list[Verdict], causes: dict[str, Cause], total: int, command: str) -> str:
    """OUT.md."""
    explained = [v for v in verdicts if v.cause]
    unexplained = [v for v in verdicts if not v.cause]
    lines = [
        "# Where the simulator is outside the real range, cell by cell",
        "",
        f"Generated by `{command}` (do not edit; edit `causes.toml` and rerun) from `comparison.csv`, "
        "`causes.toml` (the rules: each names a cause established in COMPARISON.md or SPREAD.md and, "
        "where it can, verifies it on the committed per-run records) and `SPREAD.md`.",
        "",
        "Each OUT cell: the simulated value, the real min-median-max over the repetitions, whether "
        "the sim is below or above that range, the distance to the nearer end (absolute, in the "
        "metric's unit, and relative to that end), and `seeds` = SPREAD.md's verdict for the "
        "simulator over seeds 1..10 against the real range (`cover`, `overlap`, `apart`; `-` not "
        "there; `stale` its numbers are not comparison.csv's). The first rule that matches a cell "
        "gives its cause; a rule whose check fails on the records does not match, and such failures "
        "are listed with the cells that stay unexplained.",
        "",
        f"**{len(verdicts)} OUT of {total} metric cells: {len(explained)} explained, "
        f"{len(unexplained)} not explained.**",
        "",
        "## Count per cause",
        "",
        "| cause | cells | what |",
        "|---|---|---|",
    ]
    per_cause = Counter(v.cause for v in explained)
    for cid, cause in causes.items():
        if per_cause[cid]:
            lines.append(f"| [{cid}](#{cid}) | {per_cause[cid]} | {cause.title} |")
    lines.append(f"| not explained | {len(unexplained)} | |")
    lines += ["", "## Count per client x protocol", ""]
    ids = [cid for cid in causes if per_cause[cid]]
    lines.append("| client | protocol | OUT | " + " | ".join(ids) + " | not explained |")
    lines.append("|---|---|---|" + "---|" * (len(ids) + 1))
    groups = sorted({(v.cell.client, v.cell.protocol) for v in verdicts})
    for client, protocol in groups:
        vs = [v for v in verdicts if (v.cell.client, v.cell.protocol) == (client, protocol)]
        counts = Counter(v.cause for v in vs)
        lines.append(
            f"| {client} | {protocol} | {len(vs)} | "
            + " | ".join(str(counts[cid]) for cid in ids)
            + f" | {counts[None]} |"
        )
    for cid in ids:
        cause = causes[cid]
        lines += ["", f"## {cid}", "", cause.text, "", f"Evidence: {cause.ref}", "", head("verified on the records")]
        for v in explained:
            if v.cause == cid:
                lines.append(row(v) + f" {v.detail} |")
    lines += ["", "## not explained", ""]
    lines.append(
        "No rule of causes.toml matches these cells (or its check failed on the records, "
        "given in the last column); COMPARISON.md and SPREAD.md establish no cause for them."
    )
    lines += ["", head("rules whose check failed")]
    for v in unexplained:
        lines.append(row(v) + " " + ("<br>".join(v.failed) if v.failed else "") + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, default=DEFAULT_BASE, help="the matrix folder (default results/real/4.4.0)")
    ap.add_argument("--rules", type=Path, help="the rules (default BASE/causes.toml)")
    ap.add_argument("--out", type=Path, help="where to write (default BASE/OUT.md; - = stdout)")
    args = ap.parse_args(argv)
    base = args.base
    try:
        cells = load_cells(base / "comparison.csv")
        causes, rules = load_rules(args.rules or base / "causes.toml")
        verdicts = explain(cells, rules, load_spread(base / "SPREAD.md"), base)
    except InputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        shown = base.resolve().relative_to(ROOT)
    except ValueError:
        shown = base
    command = "python3 scripts/real/explain_out.py" + ("" if base.resolve() == DEFAULT_BASE else f" --base {shown}")
    text = render(verdicts, causes, len(cells), command)
    if str(args.out) == "-":
        sys.stdout.write(text)
    else:
        out = args.out or base / "OUT.md"
        out.write_text(text)
        n = sum(1 for v in verdicts if v.cause)
        per = Counter(v.cause or "not explained" for v in verdicts)
        print(f"wrote {out}: {len(verdicts)} OUT cells, {n} explained, {len(verdicts) - n} not explained")
        for cid, k in sorted(per.items(), key=lambda kv: -kv[1]):
            print(f"  {cid}: {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
