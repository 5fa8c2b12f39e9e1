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
(rep*/ and sim/: summary.csv, rebalances.csv, partitions.csv; the cell's scenario.toml):

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
- `moved-only`: records_reprocessed; in every real run all reprocessed records are on
  partitions whose owner changed (partitions.csv moves > 0).

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
    ok = i_sim != 0 and i_run != 0 and cell.distance <= hb
    return ok, (
        f"p50 = rebalance {i_sim} in the sim, {i_run} in {_where(run, base)}; "
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


CHECKS = {"formation": check_formation, "heartbeat": check_heartbeat, "moved-only": check_moved_only}


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
