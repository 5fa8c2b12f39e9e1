"""The group coordinator's own moments, read off a local broker's log (realrun/broker.py).

A client cannot see when the coordinator starts a rebalance it did not ask for (a session
expiry). Apache Kafka's GroupMetadataManager logs it: classic groups "Preparing to rebalance
group G ... (reason: ...)" (prepareRebalance), KIP-848 groups "[GroupId G] Bumped group epoch to N"
(a member joined, left or was fenced). Each such line of the run's group becomes
`{"k": "rebalance", "t_s": ..., "why": ...}` in coordinator.jsonl (seconds since t0), which the
metrics use as a crash's rebalance start, as the mock's JoinGroup receipts (recorder.py).
Every other log line of the group's coordinator is kept too, as `{"k": "log", "t_s", "msg"}`
(joins, stabilized generations, expiries: scripts/real/timeline.py shows them in order).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

LINE_RE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}) ")
MARKERS = (
    (re.compile(r"Preparing to rebalance group (\S+) .*\(reason: (.*)\)"), "classic"),
    (re.compile(r"\[GroupId (\S+)\] Bumped group epoch to (\d+)"), "consumer epoch"),
)


def coordinator_moments(log: Path, group: str, t0: float) -> list[dict[str, object]]:
    """The rebalance starts of `group` in a broker log, as seconds since t0."""
    out: list[dict[str, object]] = []
    named = re.compile(rf"(?<![\w.-]){re.escape(group)}(?![\w-])")  # the id as a whole word
    for line in log.read_text(errors="replace").splitlines():
        stamp = LINE_RE.match(line)
        if stamp is None or not named.search(line):
            continue
        t = round(datetime.strptime(stamp.group(1), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp() - t0, 6)
        for pattern, kind in MARKERS:
            m = pattern.search(line)
            if m and m.group(1).rstrip(".,") == group:
                out.append({"k": "rebalance", "t_s": t, "why": f"{kind}: {m.group(2)}"})
        if " - " in line and "GroupCoordinator" in line:
            msg = line.split(" - ", 1)[1].split("] ", 1)[-1].replace(group, "G")
            out.append({"k": "log", "t_s": t, "msg": msg[:300]})
    return out


def write_moments(log: Path, group: str, t0: float, path: Path) -> int:
    """Write coordinator.jsonl; returns how many rebalance starts were found."""
    moments = coordinator_moments(log, group, t0) if log.exists() else []
    with open(path, "w") as f:
        f.writelines(json.dumps(m) + "\n" for m in moments)
    return sum(1 for m in moments if m["k"] == "rebalance")
