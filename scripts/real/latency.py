#!/usr/bin/env python3
"""Where a record's end-to-end latency goes, from the record of a real run (issue #10).

    scripts/real/latency.py RUN_DIR [RUN_DIR...] [--duration S]

RUN_DIR is one protocol run's record folder (e.g. scripts/real/.runs/crash/rep1/consumer_uniform).
Per record processed (first processing only, ending before --duration, default 1e9) it splits
the time from produce() to the end of processing into:

- produce->append: produce() call to the mock's receipt of the Produce request that carried it
  (the append; librdkafka's linger.ms and batching, then the request's way to the broker). The
  request is the last Produce the mock received at or before the delivery report (mock runs
  only, `mock_requests.jsonl`; records without one are left out of this column),
- append->ack: to the producer's delivery report (what the harness takes as arrival),
- ack->start: to the first processing start (fetch: on the mock an empty fetch is held for the
  whole fetch.wait.max.ms; the fetch response; the poll loop),
- processing: start to end,

and prints the p50 / p90 / p99 (nearest rank, ms) of each part and of the end-to-end latency
counted from produce(), from the append and from the delivery report (the harness's metric).
Standard library only.
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
from pathlib import Path
from typing import Any


def lines(path: Path) -> list[dict[str, Any]]:
    """JSON lines of one file (a torn last line is skipped)."""
    out = []
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (nan for no values)."""
    if not values:
        return math.nan
    s = sorted(values)
    return s[max(0, math.ceil(q * len(s)) - 1)]


def parts_of(run_dir: Path, duration_s: float) -> dict[str, list[float]]:
    """The latency parts (ms) of every record first processed before duration_s."""
    acked: dict[tuple[str, int, int], tuple[float, float]] = {}
    for o in lines(run_dir / "producer.jsonl"):
        if o["k"] == "d" and "ack" in o:
            acked[(o["t"], o["p"], o["o"])] = (o["a"], o["ack"])
    produce_reqs = sorted(o["t_s"] for o in lines(run_dir / "mock_requests.jsonl") if o.get("api") == "Produce")
    first: dict[tuple[str, int, int], tuple[float, float]] = {}
    for path in sorted(run_dir.glob("member-*.jsonl")):
        for o in lines(path):
            if o["k"] == "p" and o["e"] <= duration_s and o["a"] < duration_s:  # the loader's cut (recorder.py)
                key = (o["t"], o["p"], o["o"])
                if key not in first or o["s"] < first[key][0]:
                    first[key] = (o["s"], o["e"])
    out: dict[str, list[float]] = {
        k: []
        for k in (
            "produce->append",
            "append->ack",
            "ack->start",
            "processing",
            "e2e from produce()",
            "e2e from append",
            "e2e from ack (metric)",
        )
    }
    for key, (start, end) in first.items():
        if key not in acked:
            continue
        a, ack = acked[key]
        i = bisect.bisect_right(produce_reqs, ack) - 1
        append = produce_reqs[i] if i >= 0 and produce_reqs[i] >= a else None
        if append is not None:
            out["produce->append"].append((append - a) * 1e3)
            out["append->ack"].append((ack - append) * 1e3)
            out["e2e from append"].append((end - append) * 1e3)
        out["ack->start"].append((start - ack) * 1e3)
        out["processing"].append((end - start) * 1e3)
        out["e2e from produce()"].append((end - a) * 1e3)
        out["e2e from ack (metric)"].append((end - ack) * 1e3)
    return out


def main() -> None:
    """Print one table per run folder."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", type=Path, nargs="+")
    p.add_argument("--duration", type=float, default=1e9, help="cut processing ending after this (s)")
    args = p.parse_args()
    for run_dir in args.run_dir:
        parts = parts_of(run_dir, args.duration)
        print(f"{run_dir}  (records: {len(parts['processing'])}, with a Produce request: {len(parts['append->ack'])})")
        print(f"  {'part (ms)':24} {'p50':>8} {'p90':>8} {'p99':>8}")
        for name, values in parts.items():
            print(f"  {name:24} " + " ".join(f"{pct(values, q):8.2f}" for q in (0.5, 0.9, 0.99)))


if __name__ == "__main__":
    main()
