"""CSV output with the column contract of DESIGN section 7 (summary, partitions, rebalances),
and intervals.csv: each partition's down and allowed intervals, so a measured run's downtime and
stop-the-world can be split at any moment afterwards without its raw records (issue 24).

Values are written as the Rust writer does: booleans `true`/`false`, floats in their shortest
form; times rounded to microseconds (s) or to 0.001 ms.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

from .metrics import RunMetrics, percentile
from .scenario import ProtocolSpec, Scenario

SUMMARY_COLUMNS = [
    "scenario",
    "protocol",
    "assignor",
    "static_membership",
    "seed",
    "duration_s",
    "partitions",
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
    "events",
]
PARTITION_COLUMNS = [
    "protocol",
    "assignor",
    "static_membership",
    "topic",
    "partition",
    "produced",
    "processed",
    "reprocessed",
    "lost",
    "downtime_s",
    "episodes",
    "moves",
]
INTERVAL_COLUMNS = [
    "protocol",
    "assignor",
    "static_membership",
    "topic",
    "partition",
    "kind",
    "from_s",
    "to_s",
]
REBALANCE_COLUMNS = [
    "protocol",
    "assignor",
    "static_membership",
    "index",
    "trigger",
    "start_s",
    "end_s",
    "duration_ms",
    "rounds",
    "members",
    "partitions_moved",
]


def fmt(value: Any) -> str:
    """One CSV cell."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(round(value, 6) + 0.0)
    return str(value)


def summary_row(sc: Scenario, spec: ProtocolSpec, m: RunMetrics) -> list[Any]:
    """One summary.csv row."""
    off = [p.offsets for p in m.partitions]
    durations = [(r.end_s - r.start_s) * 1000.0 for r in m.rebalances]
    return [
        sc.name,
        spec.protocol,
        spec.assignor,
        spec.static_membership,
        sc.seed,
        sc.duration_s,
        len(m.partitions),
        sum(o.produced for o in off),
        sum(o.processed for o in off),
        sum(o.reprocessed for o in off),
        sum(o.lost for o in off),
        sum(o.final_lag for o in off),
        sum(p.downtime_s for p in m.partitions),
        percentile(m.episodes_ms, 0.5),
        percentile(m.episodes_ms, 0.99),
        max(m.episodes_ms, default=0.0),
        m.stop_the_world_s,
        len(m.rebalances),
        percentile(durations, 0.5),
        max(durations, default=0.0),
        m.partitions_moved,
        percentile(m.e2e_ms, 0.5),
        percentile(m.e2e_ms, 0.99),
        max(m.e2e_ms, default=0.0),
        m.lines,
    ]


def partition_rows(spec: ProtocolSpec, m: RunMetrics, topic_names: dict[str, str]) -> list[list[Any]]:
    """partitions.csv rows (topic names mapped back to the scenario's)."""
    head = [spec.protocol, spec.assignor, spec.static_membership]
    return [
        head
        + [
            topic_names.get(p.tp[0], p.tp[0]),
            p.tp[1],
            p.offsets.produced,
            p.offsets.processed,
            p.offsets.reprocessed,
            p.offsets.lost,
            p.downtime_s,
            p.episodes,
            p.moves,
        ]
        for p in m.partitions
    ]


def interval_rows(spec: ProtocolSpec, m: RunMetrics, topic_names: dict[str, str]) -> list[list[Any]]:
    """intervals.csv rows: per partition its `down` intervals (their sum is partitions.csv's
    downtime_s) and its `allowed` ones (some member may consume it), times in s from t0."""
    head = [spec.protocol, spec.assignor, spec.static_membership]
    return [
        head + [topic_names.get(p.tp[0], p.tp[0]), p.tp[1], kind, a, b]
        for p in m.partitions
        for kind, ivs in (("down", p.down), ("allowed", p.allowed))
        for a, b in ivs
    ]


def rebalance_rows(spec: ProtocolSpec, m: RunMetrics) -> list[list[Any]]:
    """rebalances.csv rows."""
    head = [spec.protocol, spec.assignor, spec.static_membership]
    return [
        head
        + [i, r.trigger, r.start_s, r.end_s, (r.end_s - r.start_s) * 1000.0, r.rounds, r.members, r.partitions_moved]
        for i, r in enumerate(m.rebalances)
    ]


def write_csv(path: Path, columns: list[str], rows: list[list[Any]]) -> None:
    """Write atomically (temp file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        w.writerows([[fmt(v) for v in row] for row in rows])
    os.replace(tmp, path)
