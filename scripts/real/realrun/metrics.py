"""DESIGN section 5 metrics computed from the record of a real run (recorder.Record).

- Offsets (per partition): every processing is a delivery; reprocessed = deliveries beyond the
  first of an offset. An unprocessed offset below the highest processed offset of its partition
  was skipped by a position reset (auto.offset.reset, the only way a consumer jumps forward
  here): lost. An unprocessed offset above it is final lag. Both conservation laws are checked
  exactly, and a processed offset the producer never had acknowledged is an error.
- Down time: a partition is down while a record is waiting on it (arrived, not yet started; a lost
  record waits until the reset, i.e. the first processing above it; a lag record until the end)
  and no member may consume it. A member may consume a partition from its assign callback to
  its revoke/lost callback, while its process is alive (not crashed, not closing), not paused
  (SIGSTOP) and not cut off (poll gap beyond max.poll.interval.ms: from last poll +
  max.poll.interval to the next poll). A member busy processing still may consume.
- Rebalances: one opens at the first callback (with partitions) after the previous one closed,
  and closes when the group is complete again: every live member has had an assign, and every
  partition is owned by exactly one live member (live: alive, not cut off, not paused; a paused
  member whose session expired does not hold the survivors' rebalance open). Its start is the trigger when a client can see
  it (a joiner's scheduled subscribe, a leaver's close(), last poll + max.poll.interval.ms). A
  crash's session expiry is not observable: the first JoinGroup the mock received after the
  crash starts it (classic protocols on the mock), else the first callback.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import Counter
from dataclasses import dataclass, field

from .recorder import TP, Callback, Mark, Record

Interval = tuple[float, float]


class ConservationError(Exception):
    """The record breaks an exact conservation law: a bug in recording, not a metric."""


def union(ivs: list[Interval]) -> list[Interval]:
    """Sorted, disjoint, merged (touching intervals merge) union of intervals; empty ones dropped."""
    out: list[Interval] = []
    for a, b in sorted(iv for iv in ivs if iv[1] > iv[0]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def subtract(a: list[Interval], b: list[Interval]) -> list[Interval]:
    """a minus b, both sorted and disjoint."""
    out: list[Interval] = []
    j = 0
    for lo, hi in a:
        cur = lo
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < hi:
            if b[k][0] > cur:
                out.append((cur, b[k][0]))
            cur = max(cur, b[k][1])
            k += 1
        if cur < hi:
            out.append((cur, hi))
    return out


def total_s(ivs: list[Interval]) -> float:
    """Summed length."""
    return sum(b - a for a, b in ivs)


def covers(ivs: list[Interval], starts: list[float], t: float) -> bool:
    """Whether t lies inside one of the sorted disjoint intervals (starts = their lower ends)."""
    i = bisect.bisect_right(starts, t) - 1
    return i >= 0 and ivs[i][0] <= t < ivs[i][1]


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    s = sorted(values)
    return s[max(0, math.ceil(q * len(s)) - 1)]


@dataclass
class PartitionOffsets:
    """Offset accounting of one partition."""

    produced: int
    processed: int
    unique: int
    reprocessed: int
    lost: int
    final_lag: int


def offsets_of(rec: Record, tp: TP) -> PartitionOffsets:
    """Reprocessed, lost and lag of one partition, with the exact conservation checks."""
    prod = rec.produced.get(tp, {})
    counts = Counter(d.offset for d in rec.deliveries if d.tp == tp)
    unknown = [o for o in counts if o not in prod]
    if unknown:
        raise ConservationError(f"{tp}: processed offsets never acknowledged to the producer: {sorted(unknown)[:5]}")
    top = max(counts) if counts else -1
    missing = [o for o in prod if o not in counts]
    lost = sum(1 for o in missing if o < top)
    po = PartitionOffsets(
        len(prod), sum(counts.values()), len(counts), sum(counts.values()) - len(counts), lost, len(missing) - lost
    )
    if po.produced != po.unique + po.lost + po.final_lag or po.processed != po.unique + po.reprocessed:
        raise ConservationError(f"{tp}: conservation broken: {po}")
    return po


def waiting_intervals(rec: Record, tp: TP) -> list[Interval]:
    """When records wait on tp: each from its arrival to its first processing start (see module doc)."""
    first: dict[int, float] = {}
    for d in rec.deliveries:
        if d.tp == tp and (d.offset not in first or d.start_s < first[d.offset]):
            first[d.offset] = d.start_s
    done = sorted(first)
    ivs = []
    for o, arrival in rec.produced.get(tp, {}).items():
        if o in first:
            end = first[o]
        else:
            i = bisect.bisect_right(done, o)
            end = first[done[i]] if i < len(done) else rec.duration_s
        ivs.append((arrival, min(end, rec.duration_s)))
    return union(ivs)


@dataclass
class _Incarnation:
    owned: set[TP] = field(default_factory=set)
    alive: bool = False
    paused: bool = False
    cut: bool = False
    assigned_once: bool = False
    open: dict[TP, float] = field(default_factory=dict)

    def may_consume(self) -> set[TP]:
        return self.owned if self.alive and not self.paused and not self.cut else set()

    def in_group(self) -> bool:
        """Counted in the group for a rebalance's completion: alive, not cut off, not paused. A
        stopped process cannot take part in a rebalance; when the group rebalances without it
        (its session expired), its partitions are complete once the others own them, and it
        comes back with its `lost` callback (DESIGN section 5: a rebalance ends when every
        member has its new assignment)."""
        return self.alive and not self.cut and not self.paused


Item = Mark | Callback


def _timeline(rec: Record) -> list[Item]:
    """Callbacks and liveness marks merged in time order (marks first at equal times)."""
    items: list[Item] = [*rec.marks, *rec.callbacks]
    items.sort(key=lambda x: (x.t_s, isinstance(x, Callback)))
    return items


def _apply(inc: _Incarnation, item: Item) -> None:
    kind = item.kind
    if isinstance(item, Callback):
        if kind == "assign":
            inc.owned |= set(item.parts)
            inc.assigned_once = True
        else:
            inc.owned -= set(item.parts)
    elif kind == "start":
        inc.alive = True
    elif kind in ("leave", "crash"):
        inc.alive = False
    elif kind in ("pause", "resume"):
        inc.paused = kind == "pause"
    elif kind in ("cutoff", "uncut"):
        inc.cut = kind == "cutoff"
        if kind == "uncut":
            inc.assigned_once = False  # it left the group: it is back only with a new assignment


def allowed_intervals(rec: Record) -> dict[TP, list[Interval]]:
    """Per partition, when some member may consume it (see module doc)."""
    incs: dict[tuple[str, int], _Incarnation] = {}
    out: dict[TP, list[Interval]] = {tp: [] for tp in rec.partitions}
    for item in _timeline(rec):
        t = item.t_s
        inc = incs.setdefault((item.member, item.incarnation), _Incarnation())
        _apply(inc, item)
        now = inc.may_consume()
        for tp in [tp for tp in inc.open if tp not in now]:
            out.setdefault(tp, []).append((inc.open.pop(tp), t))
        for tp in now:
            inc.open.setdefault(tp, t)
    for inc in incs.values():
        for tp, start in inc.open.items():
            out.setdefault(tp, []).append((start, rec.duration_s))
    return {tp: union(ivs) for tp, ivs in out.items()}


def stop_the_world_s(down: dict[TP, list[Interval]], allowed: dict[TP, list[Interval]]) -> float:
    """Time during which some partition is down and no partition may be consumed: the measure
    of (U down) minus (U allowed), the simulator's collector (crates/metrics/src/time_sweep.rs
    stop_the_world; DESIGN section 5)."""
    any_down = union([iv for ivs in down.values() for iv in ivs])
    any_allowed = union([iv for ivs in allowed.values() for iv in ivs])
    return total_s(subtract(any_down, any_allowed))


@dataclass
class Rebalance:
    """One logical rebalance observed in the callbacks."""

    trigger: str
    start_s: float
    end_s: float
    rounds: int
    members: int
    partitions_moved: int


def _complete(rec: Record, incs: dict[tuple[str, int], _Incarnation], t_s: float) -> bool:
    live = [i for i in incs.values() if i.in_group()]
    owners = Counter(tp for i in live for tp in i.owned)
    every_owned = all(owners[tp] == 1 for tp in rec.partitions if rec.exists(tp, t_s))
    return bool(live) and all(i.assigned_once for i in live) and every_owned


def _trigger(rec: Record, after_s: float, open_s: float) -> tuple[str, float]:
    """Name and start of the rebalance opened at open_s (the previous one ended at after_s).

    The earliest trigger seen since the previous rebalance names it; a client-side moment
    (a join's scheduled subscribe, a leave's close(), a max.poll expiry) is its start. For a
    crash the coordinator's session expiry is not observable: the first JoinGroup the mock
    received after the crash starts it (classic protocols on the mock), else the first callback.
    """
    seen = [(t, name) for t, name in rec.triggers if after_s < t <= open_s]
    if not seen:
        return "rejoin", open_s
    t, name = seen[0]
    if name in ("join", "leave", "max-poll-leave"):  # client-side moments (a rejoin's poll too)
        return name, min(t, open_s)
    joins = [j for j in rec.join_requests_s if t <= j <= open_s]
    return name, (joins[0] if joins else open_s)


def _rounds(times: list[float]) -> int:
    """Assign callbacks grouped by gaps over 0.5 s: the join/sync rounds that assigned something."""
    ts = sorted(times)
    return max(1, 1 + sum(1 for a, b in itertools.pairwise(ts) if b - a > 0.5)) if ts else 1


@dataclass
class _Open:
    """A rebalance being observed."""

    trigger: str
    start_s: float
    assigns_s: list[float] = field(default_factory=list)
    moved: int = 0

    def close(self, end_s: float, members: int) -> Rebalance:
        return Rebalance(self.trigger, self.start_s, end_s, _rounds(self.assigns_s), members, self.moved)


def _count_moves(item: Callback, last_owner: dict[TP, str], cur: _Open | None) -> int:
    """Owner changes of one assign callback (recorded in last_owner and the open rebalance)."""
    moved = 0
    for tp in item.parts:
        if tp in last_owner and last_owner[tp] != item.member:
            moved += 1
        last_owner[tp] = item.member
    if cur is not None:
        cur.moved += moved
        cur.assigns_s.append(item.t_s)
    return moved


def rebalances(rec: Record) -> tuple[list[Rebalance], int]:
    """The rebalances of the run and the total partitions_moved (owner changed at an assign)."""
    incs: dict[tuple[str, int], _Incarnation] = {}
    last_owner: dict[TP, str] = {}
    out: list[Rebalance] = []
    cur: _Open | None = None
    prev_end, moved_total = -1.0, 0
    for item in _timeline(rec):
        _apply(incs.setdefault((item.member, item.incarnation), _Incarnation()), item)
        if isinstance(item, Callback):
            # A `lost` callback is a member learning that the group already went on without it
            # (a max.poll leave, an expiry while paused): it opens no rebalance of its own.
            if cur is None and item.parts and item.kind != "lost":
                cur = _Open(*_trigger(rec, prev_end, item.t_s))
            if item.kind == "assign":
                moved_total += _count_moves(item, last_owner, cur)
        if cur is not None and _complete(rec, incs, item.t_s):
            out.append(cur.close(item.t_s, sum(1 for i in incs.values() if i.in_group())))
            cur, prev_end = None, item.t_s
    if cur is not None:
        out.append(cur.close(rec.duration_s, sum(1 for i in incs.values() if i.in_group())))
    return out, moved_total


@dataclass
class PartitionMetrics:
    """One partition's row data."""

    tp: TP
    offsets: PartitionOffsets
    downtime_s: float
    episodes: int
    moves: int
    down: list[Interval]  # the intervals summed in downtime_s (intervals.csv)
    allowed: list[Interval]  # when some member may consume it (intervals.csv; stop-the-world)


@dataclass
class RunMetrics:
    """Everything summary.csv, partitions.csv and rebalances.csv need for one protocol run."""

    partitions: list[PartitionMetrics]
    episodes_ms: list[float]
    stop_the_world_s: float
    rebalances: list[Rebalance]
    partitions_moved: int
    e2e_ms: list[float]
    lines: int


def _moves_per_partition(rec: Record) -> Counter[TP]:
    last: dict[TP, str] = {}
    moves: Counter[TP] = Counter()
    for c in rec.callbacks:
        if c.kind == "assign":
            for tp in c.parts:
                if tp in last and last[tp] != c.member:
                    moves[tp] += 1
                last[tp] = c.member
    return moves


def e2e_latencies_ms(rec: Record) -> list[float]:
    """Arrival to end of first processing, per processed record, in ms."""
    first: dict[tuple[TP, int], float] = {}
    for d in rec.deliveries:
        key = (d.tp, d.offset)
        if key not in first or d.end_s < first[key]:
            first[key] = d.end_s
    return [(end - rec.produced[tp][o]) * 1000.0 for (tp, o), end in first.items()]


def compute(rec: Record) -> RunMetrics:
    """All metrics of one run."""
    allowed = allowed_intervals(rec)
    waiting = {tp: waiting_intervals(rec, tp) for tp in rec.partitions}
    down = {tp: subtract(waiting[tp], allowed.get(tp, [])) for tp in rec.partitions}
    moves = _moves_per_partition(rec)
    parts = [
        PartitionMetrics(
            tp, offsets_of(rec, tp), total_s(down[tp]), len(down[tp]), moves[tp], down[tp], allowed.get(tp, [])
        )
        for tp in rec.partitions
    ]
    episodes = [(b - a) * 1000.0 for tp in rec.partitions for a, b in down[tp]]
    rbs, moved = rebalances(rec)
    return RunMetrics(parts, episodes, stop_the_world_s(down, allowed), rbs, moved, e2e_latencies_ms(rec), rec.lines)
