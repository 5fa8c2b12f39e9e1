#!/usr/bin/env python3
"""Compare simulated and measured summaries side by side (DESIGN section 7 summary.csv).

    compare.py SIM_DIR REAL_DIR [--csv OUT] [--markdown]
    compare.py --real-only REAL_DIR... [--markdown]
    compare.py --matrix MATRIX_DIR [--csv OUT] [--markdown]

SIM_DIR holds the simulator's summary.csv (or is that file). REAL_DIR holds a summary.csv or
repetitions rep1/, rep2/, ... each with one. Rows are matched by (protocol, assignor,
static_membership); for each metric the table shows the simulated value (the median if
SIM_DIR has several rows for a protocol, e.g. seeds), the measured min/median/max over the
repetitions, and median - simulated (absolute and relative). With --real-only only the
spread of the measured runs is shown (one table per REAL_DIR). With --matrix (the folder
scripts/real/matrix.py writes: <client>/<scenario>/<protocol>/{sim,rep1,rep2,...}) every cell's
headline metrics (HEADLINE) show sim, min, median, max, n and whether the sim lies inside
[min, max] of the measured repetitions, then the count of inside cells per client and protocol.
Exit 2 on bad input.
Standard library only, so it runs without the virtual environment.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from dataclasses import astuple, dataclass
from pathlib import Path

KEY = ("protocol", "assignor", "static_membership")
METRICS = [
    "records_produced",
    "records_processed",
    "records_reprocessed",
    "records_lost",
    "final_lag",
    "downtime_partition_s",
    "downtime_episode_ms_p50",
    "downtime_episode_ms_p99",
    "downtime_episode_ms_max",
    "stop_the_world_s",
    "rebalances",
    "rebalance_ms_p50",
    "rebalance_ms_max",
    "partitions_moved",
    "e2e_latency_ms_p50",
    "e2e_latency_ms_p99",
    "e2e_latency_ms_max",
]
Key = tuple[str, str, str]
HEADLINE = [
    "records_reprocessed",
    "records_lost",
    "downtime_partition_s",
    "stop_the_world_s",
    "rebalances",
    "partitions_moved",
    "rebalance_ms_p50",
    "rebalance_ms_max",
]


class InputError(Exception):
    """A missing or malformed summary file."""


def read_summary(path: Path) -> list[dict[str, str]]:
    """Rows of one summary.csv, checked for the key and metric columns."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as err:
        raise InputError(f"{path}: {err.strerror}") from err
    if rows:
        missing = [c for c in KEY + tuple(METRICS) if c not in rows[0]]
        if missing:
            raise InputError(f"{path}: missing columns {', '.join(missing)} (DESIGN section 7 summary.csv)")
    return rows


def summaries(folder: Path) -> list[Path]:
    """The summary files of a folder: its own, or one per rep*/ sub-folder (numeric order)."""
    if folder.is_file():
        return [folder]
    if (folder / "summary.csv").is_file():
        return [folder / "summary.csv"]
    reps = sorted(
        folder.glob("rep*/summary.csv"), key=lambda p: int("0" + "".join(ch for ch in p.parent.name if ch.isdigit()))
    )
    if not reps:
        raise InputError(f"{folder}: no summary.csv and no rep*/summary.csv")
    return reps


def values_by_key(paths: list[Path]) -> dict[Key, dict[str, list[float]]]:
    """metric values per protocol key, one per row over all files."""
    out: dict[Key, dict[str, list[float]]] = {}
    for path in paths:
        for row in read_summary(path):
            key = (row["protocol"], row["assignor"], row["static_membership"])
            for m in METRICS:
                try:
                    out.setdefault(key, {}).setdefault(m, []).append(float(row[m]))
                except ValueError as err:
                    raise InputError(f"{path}: {m} = {row[m]!r} is not a number") from err
    return out


PROTOCOL_ORDER = ["eager", "cooperative", "consumer", "tubemq-server", "tubemq-client", "manual"]


def key_order(key: Key) -> tuple[int, Key]:
    """Protocols in DESIGN order (eager, cooperative, consumer, ...), then by name."""
    rank = PROTOCOL_ORDER.index(key[0]) if key[0] in PROTOCOL_ORDER else len(PROTOCOL_ORDER)
    return rank, key


def label(key: Key) -> str:
    """`protocol:assignor[+static]`."""
    return f"{key[0]}:{key[1]}" + ("+static" if key[2] == "true" else "")


def num(x: float | None) -> str:
    """A compact number (empty when absent)."""
    if x is None:
        return ""
    return f"{x:.0f}" if abs(x) >= 1000 or x == int(x) else f"{x:.3g}"


@dataclass
class Row:
    """One protocol and metric: the simulated value, the measured spread and the difference."""

    protocol: str
    metric: str
    sim: float | None
    real_min: float | None
    real_median: float | None
    real_max: float | None
    n: int
    diff: float | None
    rel_diff: float | None

    def cells(self) -> list[object]:
        """CSV cells in header order (empty when absent)."""
        return ["" if v is None else v for v in astuple(self)]


def compare_rows(sim: dict[Key, dict[str, list[float]]], real: dict[Key, dict[str, list[float]]]) -> list[Row]:
    """One Row per protocol key and metric; diff = real median - sim, rel_diff = diff / sim."""
    rows: list[Row] = []
    for key in sorted(set(sim) | set(real), key=key_order):
        for m in METRICS:
            s = statistics.median(sim[key][m]) if key in sim else None
            r = real.get(key, {}).get(m, [])
            med = statistics.median(r) if r else None
            diff = med - s if med is not None and s is not None else None
            rel = diff / s if diff is not None and s else None
            lo, hi = (min(r), max(r)) if r else (None, None)
            rows.append(Row(label(key), m, s, lo, med, hi, len(r), diff, rel))
    return rows


def render(header: list[str], rows: list[list[str]], markdown: bool) -> str:
    """A plain aligned table, or a Markdown one."""
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    return "\n".join("  ".join(x.ljust(w) for x, w in zip(r, widths)) for r in [header] + rows)


def text_rows(rows: list[Row]) -> list[list[str]]:
    """Format compare rows for display."""
    return [
        [
            r.protocol,
            r.metric,
            num(r.sim),
            num(r.real_min),
            num(r.real_median),
            num(r.real_max),
            str(r.n),
            num(r.diff),
            f"{r.rel_diff * 100:+.0f}%" if r.rel_diff is not None else "",
        ]
        for r in rows
    ]


def spread_table(real: dict[Key, dict[str, list[float]]], markdown: bool) -> str:
    """One row per metric, one column per protocol: `median (min-max, n)` of the repetitions."""
    keys = sorted(real, key=key_order)
    rows = []
    for m in METRICS:
        cells = []
        for k in keys:
            v = real[k][m]
            cells.append(f"{num(statistics.median(v))} ({num(min(v))}-{num(max(v))})")
        rows.append([m] + cells)
    n = max((len(real[k][METRICS[0]]) for k in keys), default=0)
    return render([f"metric (median (min-max), n={n})"] + [label(k) for k in keys], rows, markdown)


@dataclass
class MatrixRow:
    """One cell (client, scenario, protocol) and headline metric of the real-broker matrix."""

    client: str
    scenario: str
    protocol: str
    metric: str
    sim: float | None
    real_min: float
    real_median: float
    real_max: float
    n: int

    def inside(self) -> bool | None:
        """Whether the simulated value lies in [min, max] of the measured ones (None: no sim)."""
        return None if self.sim is None else self.real_min <= self.sim <= self.real_max

    def cells(self) -> list[object]:
        """CSV cells: the fields, then inside."""
        inside = self.inside()
        return ["" if v is None else v for v in astuple(self)] + ["" if inside is None else str(inside).lower()]


MATRIX_HEAD = ["client", "scenario", "protocol", "metric", "sim", "real_min", "real_median", "real_max", "n", "inside"]


def matrix_rows(base: Path) -> list[MatrixRow]:
    """Every measured cell under base (client/scenario/protocol/rep*/summary.csv) with its sim."""
    rows: list[MatrixRow] = []
    for cell in sorted({p.parent.parent for p in base.glob("*/*/*/rep*/summary.csv")}):
        client, scenario = cell.parts[-3], cell.parts[-2]
        real = values_by_key(summaries(cell))
        sim_file = cell / "sim" / "summary.csv"
        sim = values_by_key([sim_file]) if sim_file.exists() else {}
        for key in sorted(real, key=key_order):
            for m in HEADLINE:
                v = real[key][m]
                s = statistics.median(sim[key][m]) if key in sim else None
                rows.append(
                    MatrixRow(client, scenario, label(key), m, s, min(v), statistics.median(v), max(v), len(v))
                )
    return rows


def inside_counts(rows: list[MatrixRow]) -> dict[tuple[str, str], tuple[int, int]]:
    """(inside, compared) per (client, protocol), over cells x headline metrics with a sim."""
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for r in rows:
        inside = r.inside()
        if inside is None:
            continue
        a, b = out.get((r.client, r.protocol), (0, 0))
        out[(r.client, r.protocol)] = (a + int(inside), b + 1)
    return out


def matrix_report(rows: list[MatrixRow], markdown: bool) -> str:
    """Per client and scenario a table (metric rows, protocol columns: `sim | min-median-max (n)
    | in/OUT`), then the inside counts."""
    parts = []
    for client, scenario in sorted({(r.client, r.scenario) for r in rows}):
        sel = [r for r in rows if (r.client, r.scenario) == (client, scenario)]
        protocols = list(dict.fromkeys(r.protocol for r in sel))
        table = []
        for m in HEADLINE:
            line = [m]
            for p in protocols:
                r = next((r for r in sel if r.protocol == p and r.metric == m), None)
                if r is None:
                    line.append("")
                    continue
                flag = {None: "no sim", True: "in", False: "OUT"}[r.inside()]
                line.append(
                    f"{num(r.sim)} / {num(r.real_min)}-{num(r.real_median)}-{num(r.real_max)} (n={r.n}) {flag}"
                )
            table.append(line)
        head = [f"{client} {scenario}: sim / min-median-max"] + protocols
        parts.append(render(head, table, markdown))
    counts = inside_counts(rows)
    clients = sorted({c for c, _ in counts})
    protocols = sorted({p for _, p in counts}, key=lambda p: PROTOCOL_ORDER.index(p.split(":")[0]))
    table = []
    for c in clients:
        line = [c]
        for p in protocols:
            a, b = counts.get((c, p), (0, 0))
            line.append(f"{a}/{b}" if b else "")
        a = sum(counts[(c, p)][0] for p in protocols if (c, p) in counts)
        b = sum(counts[(c, p)][1] for p in protocols if (c, p) in counts)
        table.append(line + [f"{a}/{b}"])
    parts.append(render(["sim inside the real range (metric cells)"] + protocols + ["all"], table, markdown))
    return "\n\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dirs", nargs="+", type=Path, help="SIM_DIR REAL_DIR, or REAL_DIR... with --real-only")
    p.add_argument("--real-only", action="store_true", help="only the spread of measured repetitions")
    p.add_argument("--matrix", action="store_true", help="DIR is a matrix folder (scripts/real/matrix.py)")
    p.add_argument("--csv", type=Path, help="also write the comparison as CSV")
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args(argv)
    try:
        if args.matrix:
            if len(args.dirs) != 1:
                raise InputError("--matrix takes one folder (results/real/<kafka version>)")
            mrows = matrix_rows(args.dirs[0])
            if not mrows:
                raise InputError(f"{args.dirs[0]}: no <client>/<scenario>/<protocol>/rep*/summary.csv")
            print(matrix_report(mrows, args.markdown))
            if args.csv:
                with open(args.csv, "w", newline="") as f:
                    w = csv.writer(f, lineterminator="\n")
                    w.writerow(MATRIX_HEAD)
                    w.writerows([r.cells() for r in mrows])
            return 0
        if args.real_only:
            for folder in args.dirs:
                print(f"\n{folder}\n" if len(args.dirs) > 1 else "", end="")
                print(spread_table(values_by_key(summaries(folder)), args.markdown))
            return 0
        if len(args.dirs) != 2:
            raise InputError("expected SIM_DIR REAL_DIR (or --real-only REAL_DIR...)")
        rows = compare_rows(values_by_key(summaries(args.dirs[0])), values_by_key(summaries(args.dirs[1])))
    except InputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    head = ["protocol", "metric", "sim", "real_min", "real_median", "real_max", "n", "diff", "rel_diff"]
    print(render(head, text_rows(rows), args.markdown))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(head)
            w.writerows([r.cells() for r in rows])
    return 0


if __name__ == "__main__":
    sys.exit(main())
