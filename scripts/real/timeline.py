#!/usr/bin/env python3
"""One protocol run's record as a timeline: the orchestrator's events, every member's
subscribe/assign/revoke/lost/leave (not the processed records), poll gaps, and the broker's
group coordinator lines (coordinator.jsonl, local-broker runs), in time order (s since t0).

    scripts/real/timeline.py RUN_DIR [--from S] [--to S]

RUN_DIR is one protocol's record folder (e.g. scripts/real/.runs/matrix/java/crash/eager_range/
rep1/eager_range). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def lines(path: Path) -> list[dict[str, object]]:
    """JSON lines of a file, a torn last line ignored."""
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def entries(run: Path) -> list[tuple[float, str, str]]:
    """(time, source, text) of everything but processed records and deliveries."""
    out: list[tuple[float, str, str]] = []
    for o in lines(run / "events.jsonl"):
        extra = {k: v for k, v in o.items() if k not in ("k", "t_s", "m", "inc")}
        out.append((float(o["t_s"]), "run", f"{o['k']} {o.get('m', '')}.{o.get('inc', '')} {extra or ''}"))
    for path in sorted(run.glob("member-*.jsonl")):
        who = path.stem.removeprefix("member-")
        for o in lines(path):
            if o["k"] == "p":
                continue
            if o["k"] == "gap":
                out.append((float(o["from"]), who, f"poll gap until {float(o['to']):.3f}"))
                continue
            parts = ",".join(str(p[1]) for p in o.get("parts", []))
            out.append((float(o["t_s"]), who, f"{o['k']} [{parts}]" if "parts" in o else str(o["k"])))
    coordinator = run / "coordinator.jsonl"
    if coordinator.exists():
        out += [(float(o["t_s"]), "broker", str(o["msg"])) for o in lines(coordinator) if o["k"] == "log"]
    return sorted(out, key=lambda e: e[0])


def main(argv: list[str] | None = None) -> int:
    """Print the timeline; exit 2 when RUN_DIR is not a record."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", type=Path)
    p.add_argument("--from", dest="lo", type=float, default=float("-inf"))
    p.add_argument("--to", dest="hi", type=float, default=float("inf"))
    args = p.parse_args(argv)
    if not (args.run / "events.jsonl").exists():
        print(f"error: {args.run}: no events.jsonl (not a protocol run's record folder)", file=sys.stderr)
        return 2
    for t, who, text in entries(args.run):
        if args.lo <= t <= args.hi:
            print(f"{t:9.3f}  {who:8s} {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
