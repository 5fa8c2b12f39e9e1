#!/usr/bin/env python3
"""Window metrics of real runs: stop-the-world and downtime from a moment on (the simulator's
`measure_from`, DESIGN section 5), and each rebalance after it, from the raw records.

    scripts/real/window.py SCENARIO.toml FROM_S RAW_DIR... [--csv OUT]

Each RAW_DIR is one run's record folder (scripts/real/.runs/.../<protocol>/, the one holding
producer.jsonl). Used for issue 26's phase case (sims/real/scale-out-60s.toml, a join at 60 s:
FROM_S = 30 leaves the formation out), where the whole-run summary is dominated by the start-up.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realrun.__main__ import as_run  # noqa: E402
from realrun.metrics import allowed_intervals, rebalances, subtract, total_s, union, waiting_intervals  # noqa: E402
from realrun.recorder import load_record  # noqa: E402
from realrun.scenario import load  # noqa: E402


def clip(ivs: list[tuple[float, float]], start: float) -> list[tuple[float, float]]:
    """The parts of `ivs` from `start` on."""
    return [(max(a, start), b) for a, b in ivs if b > start]


def window(scenario: Path, from_s: float, run_dir: Path) -> dict[str, float]:
    """stop_the_world_s, downtime_partition_s and the first rebalance after from_s of one run."""
    sc = as_run(load(scenario), run_dir)
    rec = load_record(run_dir, sc.duration_s, sc.partitions(), sc.max_poll_interval_s())
    allowed = allowed_intervals(rec)
    down = {tp: clip(subtract(waiting_intervals(rec, tp), allowed.get(tp, [])), from_s) for tp in rec.partitions}
    any_down = union([iv for ivs in down.values() for iv in ivs])
    any_allowed = union([iv for ivs in allowed.values() for iv in ivs])
    stw = total_s(subtract(any_down, any_allowed))
    later = [r for r in rebalances(rec)[0] if r.start_s >= from_s]
    first = later[0] if later else None
    return {
        "stop_the_world_s": round(stw, 6),
        "downtime_partition_s": round(sum(total_s(ivs) for ivs in down.values()), 6),
        "rebalance_ms": round((first.end_s - first.start_s) * 1000.0, 3) if first else float("nan"),
        "rebalances": len(later),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", type=Path)
    p.add_argument("from_s", type=float)
    p.add_argument("runs", type=Path, nargs="+")
    p.add_argument("--csv", type=Path)
    args = p.parse_args(argv)
    rows = []
    for run in args.runs:
        w = window(args.scenario, args.from_s, run)
        rows.append({"run": str(run), **w})
        print(" ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            out = csv.DictWriter(f, fieldnames=list(rows[0]))
            out.writeheader()
            out.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
