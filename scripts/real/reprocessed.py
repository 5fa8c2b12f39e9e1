#!/usr/bin/env python3
"""Which records were processed again, by whom, from the record of a real run (issue #10).

    scripts/real/reprocessed.py RUN_DIR [RUN_DIR...] [--duration S]

Groups every repeated delivery (a record's second and later processing ending before
--duration) by partition, the member incarnation that processed it first and the one that
processed it again, with the span of the first processings' start times. This separates, e.g.,
the work a crashed member had not committed from records a surviving member processed but
could not commit (the mock refuses commits during its join phase: docs/real.md departure 2).
Standard library only.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path


def deliveries(run_dir: Path, duration_s: float) -> dict[tuple[int, int], list[tuple[float, str]]]:
    """(partition, offset) -> [(start, member-incarnation)], in start order."""
    out: dict[tuple[int, int], list[tuple[float, str]]] = defaultdict(list)
    for path in sorted(run_dir.glob("member-*.jsonl")):
        who = path.stem.removeprefix("member-")
        for line in path.read_text().splitlines():
            try:
                o = json.loads(line)
            except json.JSONDecodeError:
                continue
            if o["k"] == "p" and o["e"] <= duration_s and o["a"] < duration_s:  # the loader's cut (recorder.py)
                out[(o["p"], o["o"])].append((o["s"], who))
    for v in out.values():
        v.sort()
    return out


def main() -> None:
    """Print one block per run folder."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", type=Path, nargs="+")
    p.add_argument("--duration", type=float, default=1e9)
    args = p.parse_args()
    for run_dir in args.run_dir:
        groups: dict[tuple[int, str, str], list[float]] = defaultdict(list)
        for (part, _), ds in deliveries(run_dir, args.duration).items():
            for start, who in ds[1:]:
                groups[(part, ds[0][1], who)].append(ds[0][0])
        total = sum(len(v) for v in groups.values())
        print(f"{run_dir}  (reprocessed: {total})")
        for (part, first, again), starts in sorted(groups.items(), key=lambda kv: min(kv[1])):
            print(f"  partition {part}: {len(starts):5d}  first by {first} at {min(starts):6.2f}-{max(starts):6.2f} s,"
                  f" again by {again}")


if __name__ == "__main__":
    main()
