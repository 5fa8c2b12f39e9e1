"""One protocol run of a scenario in wall-clock time: processes, events, then the record.

Lifecycle: (mock cluster or real broker up, topics created) -> producer and members c0.. are
started SPAWN_LEAD_S (JAVA_LEAD_S for Java members) early and wait for t0 -> the
scenario's events are applied at their times (join = start a process, leave = SIGTERM so the
member calls close(), crash = SIGKILL, restart = start again as the next incarnation, pause =
SIGSTOP then SIGCONT, stall = a `stall` line on the member's stdin) -> at the duration every
process is killed. Every child is killed on any exit path (finally), none is left running.
The member implementation follows the scenario's `client`: `librdkafka` = realrun/member.py
(confluent-kafka), `java` = the Java consumer (member-java, realrun/javamember.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import javamember
from .recorder import Writer
from .scenario import ProtocolSpec, Scenario

PKG_ROOT = Path(__file__).resolve().parent.parent
# Java names librdkafka lacks or means otherwise (its `metadata.max.age.ms` is a cache age; its
# refresh period is `topic.metadata.refresh.interval.ms`, as the simulator reads it).
JAVA_ONLY = {"max.poll.records", "fetch.max.wait.ms", "request.timeout.ms", "retry.backoff.ms", "metadata.max.age.ms"}
CLASSIC_ONLY = {"session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"}
SPAWN_LEAD_S = 1.5  # processes start this long before their moment (interpreter + import time)
JAVA_LEAD_S = 10.0  # a JVM member's lead (JVM start + a warm-up consumer: up to ~9 s at load 16 on 2 cores)
CLIENTS = ("java", "librdkafka")


def librdkafka_value(value: Any) -> Any:
    """Booleans as librdkafka's strings; everything else as written."""
    return ("true" if value else "false") if isinstance(value, bool) else value


def member_config(sc: Scenario, spec: ProtocolSpec, bootstrap: str, group: str, name: str) -> dict[str, Any]:
    """librdkafka consumer properties for one member of one protocol run. client.id is the
    member's name under `[group] client_ids = "member-name"`; under "default" it is not set
    (librdkafka's default "rdkafka" for every member) unless [consumer.config] sets it."""
    cfg: dict[str, Any] = {"bootstrap.servers": bootstrap, "group.id": group}
    if sc.client_ids == "member-name":
        cfg["client.id"] = name
    for key, value in sc.consumer_config.items():
        if key not in JAVA_ONLY:
            cfg[key] = librdkafka_value(value)
    if "fetch.max.wait.ms" in sc.consumer_config and "fetch.wait.max.ms" not in cfg:
        cfg["fetch.wait.max.ms"] = sc.consumer_config["fetch.max.wait.ms"]
    if spec.protocol == "consumer":
        for key in CLASSIC_ONLY:
            cfg.pop(key, None)
        cfg["group.protocol"] = "consumer"
        cfg["group.remote.assignor"] = spec.assignor
    else:
        cfg["partition.assignment.strategy"] = spec.assignor
    if spec.static_membership:
        cfg["group.instance.id"] = name
    return cfg


@dataclass
class Proc:
    """A running child: its Popen and incarnation."""

    popen: subprocess.Popen[bytes]
    incarnation: int
    start_at_s: float


@dataclass
class Run:
    """One protocol run: its folder, processes and timeline."""

    sc: Scenario
    spec: ProtocolSpec
    bootstrap: str
    out_dir: Path
    group: str
    t0: float = 0.0
    members: dict[str, list[Proc]] = field(default_factory=dict)  # every incarnation, in order
    incarnations: dict[str, int] = field(default_factory=dict)
    others: list[subprocess.Popen[bytes]] = field(default_factory=list)
    log: Writer | None = None
    java_cp: str = ""
    admin: Any = None  # an AdminClient made before t0 when the scenario adds partitions
    partition_counts: list[int] = field(default_factory=list)

    def _spawn(self, module: str, arg: dict[str, Any], name: str) -> subprocess.Popen[bytes]:
        env = dict(os.environ, PYTHONPATH=str(PKG_ROOT))
        if module == "realrun.member" and self.sc.client == "java":
            cmd = [*javamember.command(self.java_cp), json.dumps(arg)]
        else:
            cmd = [sys.executable, "-m", module, json.dumps(arg)]
        with open(self.out_dir / f"{name}.stderr", "ab") as err:  # the child keeps its own copy
            return subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=env,
                cwd=PKG_ROOT,
            )

    def event(self, kind: str, member: str = "", inc: int | None = None, **extra: Any) -> None:
        """Append one orchestrator event to events.jsonl (for the member's current incarnation
        unless `inc` is given)."""
        assert self.log is not None
        if inc is None:
            inc = self.current(member).incarnation if member in self.members else 0
        self.log.write({"k": kind, "t_s": self.log.now(), "m": member, "inc": inc, **extra})

    def start_member(self, name: str, start_at_s: float) -> None:
        """Start a member process (its next incarnation) that subscribes at start_at_s."""
        inc = self.incarnations.get(name, -1) + 1
        self.incarnations[name] = inc
        arg = {
            "name": name,
            "record": str(self.out_dir / f"member-{name}-{inc}.jsonl"),
            "t0": self.t0,
            "start_at_s": start_at_s,
            "processing_s": self.sc.processing_s,
            "batch": int(self.sc.consumer_config.get("max.poll.records", 500)),
            "config": self._config(name),
            "topics": [t.name for t in self.sc.topics],
        }
        proc = Proc(self._spawn("realrun.member", arg, f"member-{name}-{inc}"), inc, start_at_s)
        self.members.setdefault(name, []).append(proc)
        self.event("spawn", name, inc=inc, start_at_s=start_at_s)

    def _config(self, name: str) -> dict[str, Any]:
        if self.sc.client == "java":
            return dict(javamember.member_config(self.sc, self.spec, self.bootstrap, self.group, name))
        return member_config(self.sc, self.spec, self.bootstrap, self.group, name)

    def start_producer(self) -> None:
        """Start the load process (it creates its client at t0: librdkafka's metadata refresh
        timer runs from the client's creation, the simulator's producer refresh from t = 0)."""
        rates = [[t.name, p, t.rate_per_s] for t in self.sc.topics for p in range(t.partitions)]
        refresh_ms = int(round(self.sc.producer_metadata_refresh_s * 1000))
        arg = {
            "record": str(self.out_dir / "producer.jsonl"),
            "t0": self.t0,
            "seed": self.sc.seed,
            "rates": rates,
            "adds": self.added_rates(),
            "poisson": any(t.arrival == "poisson" for t in self.sc.topics),
            "config": {
                "bootstrap.servers": self.bootstrap,
                "linger.ms": 1,
                "topic.metadata.refresh.interval.ms": refresh_ms,
            },
        }
        self.others.append(self._spawn("realrun.producer", arg, "producer"))

    def added_rates(self) -> list[list[Any]]:
        """Per add-partitions event: [at_s, [[topic, partition, rate], ..]] of the new partitions."""
        counts = [t.partitions for t in self.sc.topics]
        adds = []
        for ev in self.sc.events:
            if ev.kind != "add-partitions":
                continue
            t = self.sc.topics[ev.topic_index]
            first = counts[ev.topic_index]
            counts[ev.topic_index] += ev.count
            adds.append([ev.at_s, [[t.name, p, t.rate_per_s] for p in range(first, first + ev.count)]])
        return adds

    def add_partitions(self, topic_index: int, count: int) -> None:
        """Grow a topic by `count` partitions (Admin CreatePartitions) and log when it is done."""
        from confluent_kafka.admin import AdminClient, NewPartitions  # type: ignore[attr-defined]

        assert self.log is not None
        t = self.sc.topics[topic_index]
        total = self.partition_counts[topic_index] + count
        requested = self.log.now()
        admin = self.admin or AdminClient({"bootstrap.servers": self.bootstrap})
        for f in admin.create_partitions([NewPartitions(t.name, total)]).values():
            f.result(timeout=30)
        first = self.partition_counts[topic_index]
        self.partition_counts[topic_index] = total
        self.event("add-partitions", topic=t.name, first=first, count=count, requested_s=requested)

    def current(self, name: str) -> Proc:
        """The incarnation an event at this moment is for: the latest one whose moment has come
        (a restarted member's next process may already be waiting for its moment)."""
        assert self.log is not None
        now = self.log.now()
        started = [p for p in self.members[name] if p.start_at_s <= now]
        return started[-1] if started else self.members[name][0]

    def signal(self, name: str, sig: int) -> None:
        """Send a signal to a member's current process."""
        proc = self.current(name).popen
        if proc.poll() is None:
            proc.send_signal(sig)

    def stall(self, name: str, duration_s: float) -> None:
        """Ask a member to stall its current batch."""
        stdin = self.current(name).popen.stdin
        assert stdin is not None
        stdin.write(f"stall {duration_s}\n".encode())
        stdin.flush()

    def kill_all(self) -> None:
        """SIGCONT + SIGKILL every child still running, then reap them."""
        procs = [p.popen for incs in self.members.values() for p in incs] + self.others
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.kill()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass


def lead_s(sc: Scenario) -> float:
    """How long before its moment a member process is started."""
    return JAVA_LEAD_S if sc.client == "java" else SPAWN_LEAD_S


def actions(sc: Scenario) -> list[tuple[float, int, str, str, float]]:
    """The timeline of (time, order, action, member, seconds), sorted; order keeps file order.

    A join or restart at time t becomes a process start at t - lead_s(sc) with seconds = t
    (it may start while the same name's previous process still runs: events go to the
    incarnation whose moment has come, Run.current)
    (the moment it subscribes); a pause adds its resume.
    """
    out = []
    lead = lead_s(sc)
    for i, ev in enumerate(sc.events):
        if ev.kind == "add-partitions":
            # The member slot carries the topic index, the seconds slot the count.
            out.append((ev.at_s, i, ev.kind, str(ev.topic_index), float(ev.count)))
            continue
        if ev.kind == "join":
            out.append((ev.at_s - lead, i, "join", ev.member, ev.at_s))
        else:
            out.append((ev.at_s, i, ev.kind, ev.member, ev.duration_s))
        if ev.kind == "pause":
            out.append((ev.at_s + ev.duration_s, i, "resume", ev.member, 0.0))
        if ev.kind == "crash" and ev.restart_after_s is not None:
            at = ev.at_s + ev.restart_after_s
            out.append((at - lead, i, "restart", ev.member, at))
    return sorted(a for a in out if a[0] <= sc.duration_s)


def apply(run: Run, action: str, member: str, seconds: float) -> None:
    """Apply one scenario action for real and log it."""
    if action in ("join", "restart"):
        run.start_member(member, seconds)
        return
    if action == "add-partitions":
        run.add_partitions(int(member), int(seconds))
        return
    run.event(action, member, duration_s=seconds)
    if action == "leave":
        run.signal(member, signal.SIGTERM)
    elif action == "crash":
        run.signal(member, signal.SIGKILL)
    elif action == "pause":
        run.signal(member, signal.SIGSTOP)
    elif action == "resume":
        run.signal(member, signal.SIGCONT)
    elif action == "stall":
        run.stall(member, seconds)


def sleep_until(run: Run, t_s: float) -> None:
    """Sleep until t_s seconds after t0."""
    assert run.log is not None
    delay = t_s - run.log.now()
    if delay > 0:
        time.sleep(delay)


def execute(sc: Scenario, spec: ProtocolSpec, bootstrap: str, out_dir: Path, group: str) -> float:
    """Run the scenario once for `spec`, leaving the record in out_dir; returns t0 (time.time())."""
    out_dir.mkdir(parents=True, exist_ok=True)
    run = Run(sc, spec, bootstrap, out_dir, group)
    if sc.client == "java":
        run.java_cp = javamember.classpath()
    run.t0 = time.time() + lead_s(sc)
    run.log = Writer(out_dir / "events.jsonl", run.t0)
    run.partition_counts = [t.partitions for t in sc.topics]
    if any(ev.kind == "add-partitions" for ev in sc.events):
        from confluent_kafka.admin import AdminClient  # type: ignore[attr-defined]

        run.admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        run.start_producer()  # it waits for t0 itself (its first arrivals are due at t >= 0)
        for i in range(sc.members):
            run.start_member(f"c{i}", 0.0)
        for at_s, _, action, member, seconds in actions(sc):
            sleep_until(run, at_s)
            apply(run, action, member, seconds)
        sleep_until(run, sc.duration_s)
        run.event("end")
        run.others[0].send_signal(signal.SIGTERM)
        run.others[0].wait(timeout=15)
    finally:
        run.kill_all()
        run.log.close()
    return run.t0
