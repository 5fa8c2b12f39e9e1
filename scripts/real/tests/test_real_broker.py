"""Tests of the real-broker pieces that need no broker: server.properties, the Java member's
properties, the coordinator log reader, the collector's stop-the-world, the matrix's files."""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import unittest
from pathlib import Path

from realrun import javamember
from realrun.broker import server_properties
from realrun.coordinator import coordinator_moments
from realrun.metrics import compute, stop_the_world_s
from realrun.recorder import Callback, Delivery, Mark, Record
from realrun.runner import Proc, Run, actions
from realrun.runner import member_config as runner_member_config
from realrun.scenario import ProtocolSpec, ScenarioError, load

HERE = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("matrix", HERE / "matrix.py")
assert spec is not None and spec.loader is not None
matrix = importlib.util.module_from_spec(spec)
sys.modules["matrix"] = matrix
spec.loader.exec_module(matrix)

P0, P1 = ("t", 0), ("t", 1)


class ServerPropertiesTest(unittest.TestCase):
    def test_bounds_admit_the_scenario_values(self) -> None:
        props = server_properties(
            Path("/d"), 9000, 9001, {"group.consumer.session.timeout.ms": 6000, "group.consumer.heartbeat.interval.ms": 1000}
        )
        # Apache Kafka's min session 45000 and min heartbeat 5000 would refuse 6000 / 1000.
        self.assertEqual(props["group.consumer.min.session.timeout.ms"], "6000")
        self.assertEqual(props["group.consumer.max.session.timeout.ms"], "6000")
        self.assertEqual(props["group.consumer.min.heartbeat.interval.ms"], "1000")
        self.assertEqual(props["listeners"], "PLAINTEXT://127.0.0.1:9000,CONTROLLER://127.0.0.1:9001")
        self.assertEqual(props["controller.quorum.voters"], "1@127.0.0.1:9001")
        self.assertEqual(props["offsets.topic.replication.factor"], "1")
        self.assertEqual(props["log.dirs"], "/d/log")

    def test_scenario_values_override_defaults(self) -> None:
        props = server_properties(Path("/d"), 1, 2, {"group.initial.rebalance.delay.ms": 0, "x.flag": True})
        self.assertEqual((props["group.initial.rebalance.delay.ms"], props["x.flag"]), ("0", "true"))


class JavaConfigTest(unittest.TestCase):
    def scenario(self):  # type: ignore[no-untyped-def]
        return load(HERE.parent.parent / "sims/real/crash.toml")

    def test_classic_eager_static(self) -> None:
        cfg = javamember.member_config(self.scenario(), ProtocolSpec("eager", "range", True), "b:1", "g", "c1")
        self.assertEqual(cfg["partition.assignment.strategy"], "org.apache.kafka.clients.consumer.RangeAssignor")
        self.assertEqual((cfg["group.protocol"], cfg["group.instance.id"]), ("classic", "c1"))
        # librdkafka's fetch.wait.max.ms is the Java consumer's fetch.max.wait.ms.
        self.assertEqual(cfg["fetch.max.wait.ms"], "20")
        self.assertNotIn("fetch.wait.max.ms", cfg)
        self.assertEqual((cfg["session.timeout.ms"], cfg["enable.auto.commit"]), ("6000", "true"))

    def test_consumer_protocol_drops_classic_only_keys(self) -> None:
        cfg = javamember.member_config(self.scenario(), ProtocolSpec("consumer", "uniform", False), "b:1", "g", "c0")
        self.assertEqual((cfg["group.protocol"], cfg["group.remote.assignor"]), ("consumer", "uniform"))
        for key in ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"):
            self.assertNotIn(key, cfg)
        self.assertNotIn("group.instance.id", cfg)


class ClientIdsTest(unittest.TestCase):
    """`[group] client_ids`: the measured scenarios say "member-name" (client.id = the member's
    name, as before); "default" leaves client.id unset in both members' configs."""

    def test_real_scenarios_set_client_id_to_the_member_name(self) -> None:
        root = HERE.parent.parent
        # restart-range measures the clients' default ids on purpose (issue 25 item 6c).
        default_ids = {"restart-range.toml"}
        for path in [*sorted((root / "sims/real").glob("*.toml")), *sorted((HERE / "scenarios").glob("*.toml"))]:
            sc = load(path)
            if path.name in default_ids:
                self.assertEqual(sc.client_ids, "default", path)
                continue
            self.assertEqual(sc.client_ids, "member-name", path)
            spec = ProtocolSpec("eager", "range", False)
            self.assertEqual(javamember.member_config(sc, spec, "b:1", "g", "c1")["client.id"], "c1", path)
            self.assertEqual(runner_member_config(sc, spec, "b:1", "g", "c1")["client.id"], "c1", path)

    def test_default_sets_no_client_id(self) -> None:
        sc = load(HERE.parent.parent / "sims/real/crash.toml")
        sc.client_ids = "default"
        spec = ProtocolSpec("eager", "range", False)
        self.assertNotIn("client.id", javamember.member_config(sc, spec, "b:1", "g", "c1"))
        self.assertNotIn("client.id", runner_member_config(sc, spec, "b:1", "g", "c1"))
        # A client.id of [consumer.config] is every member's.
        sc.consumer_config["client.id"] = "app"
        self.assertEqual(javamember.member_config(sc, spec, "b:1", "g", "c1")["client.id"], "app")
        self.assertEqual(runner_member_config(sc, spec, "b:1", "g", "c1")["client.id"], "app")

    def test_bad_value_and_conflict_are_rejected(self) -> None:
        text = (HERE.parent.parent / "sims/real/crash.toml").read_text()
        with tempfile.TemporaryDirectory() as d:
            bad = Path(d) / "bad.toml"
            bad.write_text(text.replace('client_ids = "member-name"', 'client_ids = "names"'))
            with self.assertRaisesRegex(ScenarioError, "group.client_ids: 'names'; allowed: default, member-name"):
                load(bad)
            both = Path(d) / "both.toml"
            both.write_text(text.replace("[consumer.config]", '[consumer.config]\n"client.id" = "app"'))
            with self.assertRaisesRegex(ScenarioError, "group.client_ids"):
                load(both)


class CoordinatorLogTest(unittest.TestCase):
    def test_rebalance_starts_of_the_group_only(self) -> None:
        lines = [
            "2026-12-01T10:25:02.644+0000 [p-2] INFO G - [GroupCoordinator id=1] Preparing to rebalance group g1 in "
            "state PreparingRebalance with old generation 0 (reason: Adding new member c0 with group instance id null)",
            "2026-12-01T10:25:17.723+0000 [p-0] INFO G - [GroupCoordinator id=1] Preparing to rebalance group g10 in "
            "state PreparingRebalance with old generation 1 (reason: other group.)",
            "2026-12-01T10:25:17.723+0000 [p-0] INFO G - [GroupCoordinator id=1] Preparing to rebalance group g1 in "
            "state PreparingRebalance with old generation 1 (reason: removing member c1 on heartbeat expiration.)",
            "2026-12-01T10:25:20.500+0000 [p-0] INFO G - [GroupCoordinator id=1] [GroupId g1] Bumped group epoch to 5 "
            "with metadata hash 11.",
            "\tgroup.initial.rebalance.delay.ms = 3000",
        ]
        with tempfile.TemporaryDirectory() as d:
            log = Path(d) / "broker.log"
            log.write_text("\n".join(lines) + "\n")
            t0 = 1796120700.0  # 2026-12-01T10:25:00Z
            moments = coordinator_moments(log, "g1", t0)
        starts = [m for m in moments if m["k"] == "rebalance"]
        self.assertEqual([m["t_s"] for m in starts], [2.644, 17.723, 20.5])
        self.assertEqual(starts[2]["why"], "consumer epoch: 5")
        # Each of the group's coordinator lines is kept as a log entry (group id shortened to G).
        logs = [m for m in moments if m["k"] == "log"]
        self.assertEqual(len(logs), 3)
        self.assertTrue(str(logs[0]["msg"]).startswith("Preparing to rebalance group G in state"))
        self.assertIn("heartbeat expiration", str(starts[1]["why"]))


class StopTheWorldTest(unittest.TestCase):
    def test_collector_definition(self) -> None:
        # p0 down [1, 3); p1 allowed [0, 2) and [2.5, 10): only [2, 2.5) has a partition down
        # and none allowed. (The older "every waiting partition down" reading would count all of
        # [1, 3) if p1 had nothing waiting.)
        down = {P0: [(1.0, 3.0)], P1: []}
        allowed = {P0: [], P1: [(0.0, 2.0), (2.5, 10.0)]}
        self.assertAlmostEqual(stop_the_world_s(down, allowed), 0.5, places=12)

    def test_idle_healthy_partition_does_not_count_as_stopped(self) -> None:
        # c0 owns p0 and p1 from 0.5; c0 crashes at 4.5, c1 gets both at 7.0. Only p0 receives
        # records (offsets 0..8 at 1..9 s); p1 never waits. Down p0 [5, 7.0) -> stop-the-world
        # 2.0 s as nobody may consume anything in between (c0 dead); c1 alone owns nothing before 7.
        rec = Record(10.0, [P0, P1], 300.0)
        rec.produced[P0] = {o: float(o + 1) for o in range(9)}
        starts = {0: 1.01, 1: 2.01, 2: 3.01, 3: 4.01, 4: 7.0, 5: 7.001, 6: 7.002, 7: 8.01, 8: 9.01}
        rec.deliveries = [Delivery(P0, o, 0.0, s, s + 0.001, "c0" if o < 4 else "c1") for o, s in starts.items()]
        rec.marks = [Mark(0.0, "c0", 0, "start"), Mark(0.0, "c1", 0, "start"), Mark(4.5, "c0", 0, "crash")]
        rec.callbacks = [Callback(0.5, "c0", 0, "assign", (P0, P1)), Callback(7.0, "c1", 0, "assign", (P0, P1))]
        self.assertAlmostEqual(compute(rec).stop_the_world_s, 2.0, places=9)


class MaxPollRejoinTest(unittest.TestCase):
    def test_lost_opens_nothing_and_the_rejoin_is_a_join(self) -> None:
        # As recorded on the real broker (stall-maxpoll, eager): c0 and c1 own p0 / p1 from 1;
        # c1 stalls from 2; max.poll.interval 5 s cuts it off at 7 (LeaveGroup), c0 takes p1 at
        # 7.5; c1 polls again at 10: lost [p1] at 10.02, then the group rebalances for its
        # rejoin: c0 revokes both at 10.9, assigns p0 to c0 and p1 to c1 at 11.0.
        rec = Record(12.0, [P0, P1], 5.0)
        rec.marks = [Mark(0.0, "c0", 0, "start"), Mark(0.0, "c1", 0, "start")]
        rec.marks += [Mark(7.0, "c1", 0, "cutoff"), Mark(10.0, "c1", 0, "uncut")]
        rec.triggers = [(0.0, "join"), (7.0, "max-poll-leave"), (10.0, "join")]
        rec.callbacks = [
            Callback(1.0, "c0", 0, "assign", (P0,)),
            Callback(1.0, "c1", 0, "assign", (P1,)),
            Callback(7.4, "c0", 0, "revoke", (P0,)),
            Callback(7.5, "c0", 0, "assign", (P0, P1)),
            Callback(10.02, "c1", 0, "lost", (P1,)),
            Callback(10.9, "c0", 0, "revoke", (P0, P1)),
            Callback(11.0, "c0", 0, "assign", (P0,)),
            Callback(11.0, "c1", 0, "assign", (P1,)),
        ]
        rbs = compute(rec).rebalances
        # Formation (0 -> 1), the max-poll leave (7 -> 7.5), c1's rejoin (10 -> 11): three, the
        # last a join from c1's poll at 10 (not a zero-length one at the lost callback).
        self.assertEqual([(r.trigger, r.start_s, r.end_s) for r in rbs],
                         [("join", 0.0, 1.0), ("max-poll-leave", 7.0, 7.5), ("join", 10.0, 11.0)])


class TimelineTest(unittest.TestCase):
    def test_rejoin_after_leave_has_the_whole_lead(self) -> None:
        # rolling-restart: c0 leaves at 10 s and joins again at 14 s; with the Java lead (10 s)
        # its new process starts at 4 s, beside the first one (events at 10 s go to the first:
        # Run.current picks the incarnation whose moment has come).
        sc = load(HERE / "scenarios/rolling-restart.toml")
        acts = [a for a in actions(sc) if a[3] == "c0"]
        self.assertEqual(acts[:2], [(4.0, 1, "join", "c0", 14.0), (10.0, 0, "leave", "c0", 0.0)])

    def test_events_go_to_the_incarnation_whose_moment_has_come(self) -> None:
        sc = load(HERE / "scenarios/rolling-restart.toml")
        run = Run(sc, sc.protocols[0], "b:1", Path("/nonexistent"), "g")
        run.log = _Clock(12.0)  # type: ignore[assignment]
        first, second = object(), object()
        run.members["c0"] = [Proc(first, 0, 0.0), Proc(second, 1, 14.0)]  # type: ignore[arg-type]
        self.assertIs(run.current("c0").popen, first)  # at 12 s: the first process
        run.log = _Clock(14.5)  # type: ignore[assignment]
        self.assertIs(run.current("c0").popen, second)  # at 14.5 s: the restarted one

    def test_crash_is_logged_for_the_old_incarnation(self) -> None:
        # static-restart: c1's next process is spawned at 5 s (restart at 15 s); the crash at
        # 12 s belongs to incarnation 0, the spawn to incarnation 1.
        with tempfile.TemporaryDirectory() as d:
            sc = load(HERE / "scenarios/static-restart.toml")
            run = Run(sc, sc.protocols[0], "b:1", Path(d), "g")
            run.log = _Clock(12.0)  # type: ignore[assignment]
            lines: list[dict[str, object]] = []
            run.log.write = lines.append  # type: ignore[attr-defined]
            run.members["c1"] = [Proc(object(), 0, 0.0), Proc(object(), 1, 15.0)]  # type: ignore[arg-type]
            run.event("crash", "c1")
            run.event("spawn", "c1", inc=1, start_at_s=15.0)
        self.assertEqual([(o["k"], o["inc"]) for o in lines], [("crash", 0), ("spawn", 1)])


class _Clock:
    """A stand-in for the run's Writer: only now()."""

    def __init__(self, t: float) -> None:
        self.t = t

    def now(self) -> float:
        return self.t


class MatrixTest(unittest.TestCase):
    def test_java_file_uses_java_names(self) -> None:
        text = matrix.derived_text(HERE.parent.parent / "sims/real/crash.toml", "java")
        self.assertIn('client = "java"', text)
        self.assertIn('"fetch.max.wait.ms" = 20', text)
        self.assertNotIn("librdkafka", text.split("[consumer.config]")[0].split("[consumer]")[1])

    def test_order_decides_eager_vs_cooperative_first(self) -> None:
        cells = matrix.cells(3, [])
        self.assertEqual(len(cells), 3 * 2 * 4 * len(matrix.SCENARIOS))
        first = cells[: 2 * 2 * len(matrix.SCENARIOS)]
        self.assertEqual({c[3] for c in first}, {"eager:range", "cooperative:cooperative-sticky"})
        self.assertEqual({c[0] for c in first}, {1})
        self.assertEqual(cells[0], (1, "java", "crash", "eager:range"))


if __name__ == "__main__":
    unittest.main()
