"""Tests of explain_out.py on a hand-made matrix folder (expected values derived by hand), and
that the committed results/real/4.4.0/OUT.md is what the committed inputs give."""

from __future__ import annotations

import csv
import importlib.util
import io
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("explain_out", HERE / "explain_out.py")
assert spec is not None and spec.loader is not None
explain_out = importlib.util.module_from_spec(spec)
sys.modules["explain_out"] = explain_out  # dataclasses look their module up while the module loads
spec.loader.exec_module(explain_out)

Cell = explain_out.Cell
HEAD = ["client", "scenario", "protocol", "metric", "sim", "real_min", "real_median", "real_max", "n", "inside"]
SCENARIO = '[[topic]]\nname = "events"\npartitions = 6\n\n[group]\nmembers = 3\n\n[consumer.config]\n"heartbeat.interval.ms" = 1000\n'


def write_csv(path: Path, head: list[str], rows: list[list[object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        w.writerows(rows)


def write_run(
    folder: Path,
    metrics: dict[str, float],
    rebalances: list[tuple[float, float, int]],
    partitions: tuple[tuple[int, int], ...] = (),
) -> None:
    """summary.csv with `metrics`; rebalances.csv rows (duration_ms, end_s, members), index in
    order; partitions.csv rows (reprocessed, moves)."""
    write_csv(folder / "summary.csv", list(metrics), [list(metrics.values())])
    write_csv(
        folder / "rebalances.csv",
        ["index", "trigger", "start_s", "end_s", "duration_ms", "members"],
        [[i, "join", end - ms / 1e3, end, ms, members] for i, (ms, end, members) in enumerate(rebalances)],
    )
    write_csv(folder / "partitions.csv", ["partition", "reprocessed", "moves"],
              [[p, r, m] for p, (r, m) in enumerate(partitions)])


class CellTest(unittest.TestCase):
    def test_side_distance_relative(self) -> None:
        below = Cell("java", "s", "eager:range", "downtime_partition_s", 50.0, 52.0, 55.0, 59.0, 3)
        # 52 - 50 = 2 below the minimum; relative to it: 2 / 52.
        self.assertEqual((below.side, below.distance), ("below", 2.0))
        self.assertAlmostEqual(below.relative or 0, 2 / 52)
        above = Cell("java", "s", "eager:range", "records_reprocessed", 598.0, 132.0, 133.0, 150.0, 3)
        self.assertEqual((above.side, above.distance), ("above", 448.0))
        zero = Cell("java", "s", "eager:range", "rebalance_ms_p50", 6003.0, 0.0, 0.0, 0.0, 3)
        self.assertIsNone(zero.relative)

    def test_folder_of_a_static_protocol(self) -> None:
        c = Cell("java", "s", "cooperative:cooperative-sticky+static", "rebalances", 1, 2, 2, 2, 3)
        self.assertEqual(c.folder(Path("/b")), Path("/b/java/s/cooperative_cooperative-sticky_static"))

    def test_patterns(self) -> None:
        self.assertTrue(explain_out.matches("eager:*|cooperative:*", "eager:range+static"))
        self.assertTrue(explain_out.matches("join | scale-out", "scale-out"))
        self.assertFalse(explain_out.matches("eager:*|cooperative:*", "consumer:uniform"))
        self.assertFalse(explain_out.matches("join", "join2"))


class RulesFileTest(unittest.TestCase):
    def rules(self, text: str) -> str:
        with tempfile.TemporaryDirectory() as tmp:
            p = Path(tmp) / "causes.toml"
            p.write_text('[[cause]]\nid = "a"\ntitle = "A"\ntext = "t"\nref = "r"\n' + text)
            try:
                explain_out.load_rules(p)
            except explain_out.InputError as err:
                return str(err)
            return ""

    def test_bad_rules_are_refused_with_the_reason(self) -> None:
        self.assertEqual(self.rules('[[rule]]\ncause = "a"\nmetric = "x"\n'), "")
        self.assertIn("not a [[cause]] id", self.rules('[[rule]]\ncause = "b"\n'))
        self.assertIn("side must be", self.rules('[[rule]]\ncause = "a"\nside = "under"\n'))
        self.assertIn("unknown keys ['metrics']", self.rules('[[rule]]\ncause = "a"\nmetrics = "x"\n'))
        self.assertIn("check must be", self.rules('[[rule]]\ncause = "a"\ncheck = "guess"\n'))
        self.assertIn("spread values", self.rules('[[rule]]\ncause = "a"\nspread = ["near"]\n'))


class ExplainTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        base = self.base = Path(self.tmp.name)
        (base / "java/crash").mkdir(parents=True)
        (base / "java/crash/scenario.toml").write_text(SCENARIO)
        cell = base / "java/crash/eager_range"
        # The sim forms the group in 6000 ms, ending at 6.5 s. rep1: formation 6800 ms ending at
        # 6.8 s (0.3 s later), rep2: 7300 ms ending at 7.3 s. A later rebalance: 400 ms (sim),
        # 900 / 1500 ms (real).
        write_run(cell / "sim", {"downtime_partition_s": 50.0, "stop_the_world_s": 6.5, "rebalance_ms_max": 6000,
                                 "rebalance_ms_p50": 400, "records_reprocessed": 0},
                  [(6000, 6.5, 3), (400, 20.4, 3)])
        write_run(cell / "rep1", {"downtime_partition_s": 51.5, "stop_the_world_s": 7.0, "rebalance_ms_max": 6800,
                                  "rebalance_ms_p50": 900, "records_reprocessed": 4},
                  [(6800, 6.8, 3), (900, 20.9, 3)], ((4, 1), (0, 0)))
        write_run(cell / "rep2", {"downtime_partition_s": 53.0, "stop_the_world_s": 6.9, "rebalance_ms_max": 7300,
                                  "rebalance_ms_p50": 1500, "records_reprocessed": 5},
                  [(7300, 7.3, 3), (1500, 21.5, 3)], ((3, 1), (2, 0)))
        rows = [
            # downtime: 51.5 - 50 = 1.5 <= 6 partitions x (6.8 - 6.5) = 1.8 (rep1 bounds): explained.
            ["java", "crash", "eager:range", "downtime_partition_s", 50.0, 51.5, 52.25, 53.0, 2, "false"],
            # stop-the-world: the bounding run is rep2 (6.9): 6.9 - 6.5 = 0.4 <= 7.3 - 6.5 = 0.8.
            ["java", "crash", "eager:range", "stop_the_world_s", 6.5, 6.9, 6.95, 7.0, 2, "false"],
            # max: rebalance 0 in the sim and in rep1: explained by the formation.
            ["java", "crash", "eager:range", "rebalance_ms_max", 6000, 6800, 7050, 7300, 2, "false"],
            # p50: from rebalance 1 both sides, 900 - 400 = 500 <= 1000 ms: heartbeat, after the
            # formation rule's check failed.
            ["java", "crash", "eager:range", "rebalance_ms_p50", 400, 900, 1200, 1500, 2, "false"],
            # reprocessed: rep2 reprocessed 2 on a partition that never moved: not explained.
            ["java", "crash", "eager:range", "records_reprocessed", 0, 4, 4.5, 5, 2, "false"],
            ["java", "crash", "eager:range", "records_lost", 0, 0, 0, 0, 2, "true"],
        ]
        write_csv(base / "comparison.csv", HEAD, rows)
        (base / "causes.toml").write_text(
            '[[cause]]\nid = "formation"\ntitle = "F"\ntext = "f"\nref = "COMPARISON.md 4"\n'
            '[[cause]]\nid = "hb"\ntitle = "H"\ntext = "h"\nref = "COMPARISON.md 3"\n'
            '[[cause]]\nid = "moves"\ntitle = "M"\ntext = "m"\nref = "x"\n'
            '[[rule]]\ncause = "moves"\nmetric = "records_reprocessed"\ncheck = "moved-only"\n'
            '[[rule]]\ncause = "formation"\nprotocol = "eager:*"\nside = "below"\ncheck = "formation"\n'
            '[[rule]]\ncause = "hb"\nmetric = "rebalance_ms_p50"\nside = "below"\ncheck = "heartbeat"\n'
        )

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def verdicts(self) -> dict[str, Any]:
        cells = explain_out.load_cells(self.base / "comparison.csv")
        _, rules = explain_out.load_rules(self.base / "causes.toml")
        return {v.cell.metric: v for v in explain_out.explain(cells, rules, {}, self.base)}

    def test_first_rule_whose_check_holds(self) -> None:
        v = self.verdicts()
        self.assertNotIn("records_lost", v)  # inside: not listed
        self.assertEqual(v["downtime_partition_s"].cause, "formation")
        self.assertIn("6 partitions x 0.300 s = 1.8 partition-s >= distance 1.5", v["downtime_partition_s"].detail)
        self.assertEqual(v["stop_the_world_s"].cause, "formation")
        self.assertIn("in rep2", v["stop_the_world_s"].detail.replace("java/crash/eager_range/", ""))
        self.assertEqual(v["rebalance_ms_max"].cause, "formation")
        p50 = v["rebalance_ms_p50"]
        self.assertEqual(p50.cause, "hb")
        self.assertEqual(len(p50.failed), 1)  # the formation rule's check
        self.assertIn("distance 500 ms <= heartbeat.interval.ms 1000", p50.detail)
        rep = v["records_reprocessed"]
        self.assertIsNone(rep.cause)
        self.assertIn("rep2: 2 reprocessed on partitions that never moved", rep.failed[0])

    def test_a_shorter_formation_explains_nothing(self) -> None:
        # rep1's formation now ends at 6.6 s: 6 x 0.1 = 0.6 < 1.5.
        write_run(self.base / "java/crash/eager_range/rep1",
                  {"downtime_partition_s": 51.5, "stop_the_world_s": 7.0, "rebalance_ms_max": 6800,
                   "rebalance_ms_p50": 900, "records_reprocessed": 4},
                  [(6800, 6.6, 3), (900, 20.9, 3)], ((4, 1), (0, 0)))
        v = self.verdicts()["downtime_partition_s"]
        self.assertIsNone(v.cause)
        self.assertIn("0.6 partition-s < distance 1.5", v.failed[0])

    def test_out_md_counts_and_sections(self) -> None:
        with redirect_stdout(io.StringIO()) as out:
            rc = explain_out.main(["--base", str(self.base)])
        self.assertEqual(rc, 0)
        self.assertIn("5 OUT cells, 4 explained, 1 not explained", out.getvalue())
        text = (self.base / "OUT.md").read_text()
        self.assertIn("**5 OUT of 6 metric cells: 4 explained, 1 not explained.**", text)
        self.assertIn("| [formation](#formation) | 3 | F |", text)
        self.assertIn("| java | eager:range | 5 | 3 | 1 | 1 |", text)  # formation, hb, not explained
        self.assertNotIn("| [moves]", text)  # a cause that explains nothing is not counted
        unexplained = text.split("## not explained")[1]
        self.assertIn("| java | crash | eager:range | records_reprocessed | 0 | 4-4.5-5 (2) | below | 4 | 100.0% | - |", unexplained)

    def test_spread_verdict_and_stale(self) -> None:
        (self.base / "SPREAD.md").write_text(
            "## java crash eager:range\n\n| metric | sim | real | |\n|---|---|---|---|\n"
            "| rebalance_ms_max | 5990-6100 | 6800-7300 (2) | apart |\n"
            "| rebalance_ms_p50 | 100-950 | 900-1500 (2) | overlap |\n"
            "| downtime_partition_s | 40-45 | 51.5-53 (2) | apart |\n"
        )
        spread = explain_out.load_spread(self.base / "SPREAD.md")
        cells = {c.metric: c for c in explain_out.load_cells(self.base / "comparison.csv")}
        self.assertEqual(explain_out.spread_verdict(cells["rebalance_ms_max"], spread), "apart")
        self.assertEqual(explain_out.spread_verdict(cells["rebalance_ms_p50"], spread), "overlap")
        # The sim's 50.0 is not inside SPREAD's 40-45 over seeds: written from another sim.
        self.assertEqual(explain_out.spread_verdict(cells["downtime_partition_s"], spread), "stale")
        self.assertEqual(explain_out.spread_verdict(cells["stop_the_world_s"], spread), "-")

    def test_inside_flag_must_agree(self) -> None:
        write_csv(self.base / "comparison.csv", HEAD, [["java", "crash", "eager:range", "records_lost", 1, 0, 0, 0, 2, "true"]])
        with self.assertRaises(explain_out.InputError):
            explain_out.load_cells(self.base / "comparison.csv")


REB_HEAD = ["index", "trigger", "start_s", "end_s", "duration_ms", "members", "partitions_moved"]
PART_HEAD = ["partition", "reprocessed", "downtime_s", "episodes", "moves"]


def write_run2(folder: Path, summary: dict[str, float], rebalances: list[tuple[str, float, float, int, int]],
               partitions: list[tuple[int, float, int, int]], host: str = "") -> None:
    """summary.csv; rebalances.csv rows (trigger, start_s, end_s, members, moved); partitions.csv
    rows (reprocessed, downtime_s, episodes, moves); host.txt when given."""
    write_csv(folder / "summary.csv", list(summary), [list(summary.values())])
    write_csv(folder / "rebalances.csv", REB_HEAD,
              [[i, t, a, b, (b - a) * 1e3, m, mv] for i, (t, a, b, m, mv) in enumerate(rebalances)])
    write_csv(folder / "partitions.csv", PART_HEAD, [[i, *r] for i, r in enumerate(partitions)])
    if host:
        (folder / "host.txt").write_text(host)


class NewChecksTest(unittest.TestCase):
    """The checks of this issue's causes on hand-made runs (the expected verdicts worked out by hand)."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.base = Path(self.tmp.name)

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def scenario(self, scenario: str, text: str) -> None:
        d = self.base / "java" / scenario
        d.mkdir(parents=True, exist_ok=True)
        (d / "scenario.toml").write_text(text)

    def check(self, name: str, cell: Any) -> tuple[bool, str]:
        ok, why = explain_out.CHECKS[name](cell, self.base)
        return ok, why

    def test_static_absence(self) -> None:
        self.scenario("stall-maxpoll", SCENARIO)
        folder = self.base / "java/stall-maxpoll/eager_range_static"
        write_run2(folder / "sim", {"rebalances": 1, "rebalance_ms_p50": 6000}, [("join", 0.5, 6.5, 3, 0)],
                   [(0, 6.5, 1, 0)] * 6)
        # A static member's 5 s absence: nothing moved, 3 members, 4 extra episodes < 6 x 1.
        rows = [(0, 6.3, 1, 0), (0, 6.3, 1, 0), (12, 11.3, 3, 0), (13, 11.3, 3, 0), (0, 6.3, 1, 0), (0, 6.3, 1, 0)]
        write_run2(folder / "rep1", {"rebalances": 2, "rebalance_ms_p50": 5000},
                   [("join", 0.0, 6.6, 3, 0), ("max-poll-leave", 22.0, 27.0, 3, 0)], rows)
        cell = Cell("java", "stall-maxpoll", "eager:range+static", "rebalances", 1, 2, 2, 2, 1)
        self.assertTrue(self.check("static-absence", cell)[0])
        p50 = Cell("java", "stall-maxpoll", "eager:range+static", "rebalance_ms_p50", 6000, 5000, 5000, 5000, 1)
        ok, why = self.check("static-absence", p50)
        self.assertTrue(ok, why)
        self.assertIn("p50 = rebalance 1", why)
        # The same with a partition moved: a real group rebalance, not an absence.
        write_run2(folder / "rep1", {"rebalances": 2, "rebalance_ms_p50": 5000},
                   [("join", 0.0, 6.6, 3, 0), ("max-poll-leave", 22.0, 27.0, 3, 1)], rows)
        ok, why = self.check("static-absence", cell)
        self.assertFalse(ok)
        self.assertIn("moved 1", why)
        # And the cut-off: 2 partitions x 5.0 s = 10 >= 8.65, no partition down in the sim meanwhile.
        write_csv(folder / "sim/ownership.csv", ["partition", "start_s", "end_s", "owner", "state"],
                  [[2, 0.03, 6.5, "", "unassigned"], [2, 6.5, 27.0, "c1", "consuming"], [2, 27.0, 27.002, "", "unassigned"]])
        write_run2(folder / "rep1", {"downtime_partition_s": 47.6},
                   [("join", 0.0, 6.6, 3, 0), ("max-poll-leave", 22.0, 27.0, 3, 0)], rows)
        down = Cell("java", "stall-maxpoll", "eager:range+static", "downtime_partition_s", 38.99, 47.6, 47.6, 47.6, 1)
        ok, why = self.check("cutoff", down)
        self.assertTrue(ok, why)
        self.assertIn("2 x 5.00 s = 10 partition-s >= distance 8.61", why)
        # A sim that has the partition down during the cut-off: not this cause.
        write_csv(folder / "sim/ownership.csv", ["partition", "start_s", "end_s", "owner", "state"],
                  [[2, 22.5, 23.0, "", "unassigned"]])
        self.assertFalse(self.check("cutoff", down)[0])

    def test_commit_phase(self) -> None:
        self.scenario("crash", '[[topic]]\nname = "events"\npartitions = 6\nrate = 33.333333\n\n[group]\nmembers = 3\n\n'
                               '[consumer.config]\n"enable.auto.commit" = true\n"auto.commit.interval.ms" = 5000\n\n'
                               '[[event]]\nat = "12s"\nkind = "crash"\nmember = "c1"\n')
        folder = self.base / "java/crash/eager_range"
        write_run2(folder / "sim", {"records_reprocessed": 30}, [("join", 0.5, 6.53, 3, 0)], [(0, 6.5, 1, 0)])
        # Restart 6.53 s: commit at 11.53 s, crash at 12 s: 66.7/s x 0.47 s = 31 (sim 30).
        # rep1: formation ends at 7.28 s (window 6.98-7.28): the commit at 11.98-12.28 s may come
        # after the crash, so 0 (just committed) up to everything since offset 0 (800) is possible.
        write_run2(folder / "rep1", {"records_reprocessed": 718}, [("join", 0.0, 7.28, 3, 0)], [(0, 6.5, 1, 0)])
        cell = Cell("java", "crash", "eager:range", "records_reprocessed", 30, 718, 718, 718, 1)
        ok, why = self.check("commit-phase", cell)
        self.assertTrue(ok, why)
        self.assertIn("sim restart 6.53 s -> 31-31", why)
        # A formation ending at 6.60 s: commit at 11.3-11.6 s, 27-47 records, not 718.
        write_run2(folder / "rep1", {"records_reprocessed": 718}, [("join", 0.0, 6.60, 3, 0)], [(0, 6.5, 1, 0)])
        self.assertFalse(self.check("commit-phase", cell)[0])

    def test_kip848_start_and_count(self) -> None:
        self.scenario("join", '[[topic]]\nname = "events"\npartitions = 6\nrate = 33.333333\n\n[group]\nmembers = 3\n\n'
                              '[broker.config]\n"group.consumer.heartbeat.interval.ms" = 1000\n')
        folder = self.base / "java/join/consumer_uniform"
        sim_reb = [("join", 0.525, 0.5253, 1, 0), ("join", 0.5277, 1.62, 3, 4), ("join", 12.3, 13.3, 4, 1)]
        write_run2(folder / "sim", {"stop_the_world_s": 0.495, "downtime_partition_s": 3.55, "rebalances": 3},
                   sim_reb, [(0, 0.495, 1, 0)] * 6)
        write_csv(folder / "sim/ownership.csv", ["partition", "start_s", "end_s", "owner", "state"],
                  [[p, 0.03, 0.525, "", "unassigned"] for p in range(6)]
                  + [[p, 1.56, 1.62, "", "revoked"] for p in (2, 3)])
        # Real: the first assignment after 1.69 s (p0, p1: never moved, down once), the spread
        # 3.24-4.11 s: p2-p4 moved once and down twice.
        parts = [(0, 1.692, 1, 0), (0, 1.667, 1, 0), (0, 2.45, 2, 1), (0, 2.45, 2, 1), (0, 2.49, 2, 1), (0, 2.75, 3, 2)]
        write_run2(folder / "rep1", {"stop_the_world_s": 1.692, "downtime_partition_s": 13.5, "rebalances": 3},
                   [("join", 0.0, 1.98, 3, 0), ("rejoin", 3.24, 4.11, 3, 4), ("join", 12.0, 13.6, 4, 1)], parts)
        stw = Cell("java", "join", "consumer:uniform", "stop_the_world_s", 0.495, 1.692, 1.692, 1.692, 1)
        ok, why = self.check("kip848-start", stw)
        self.assertTrue(ok, why)
        # Downtime: waits 1.692 + 1.667 + 4 x (1.667 - 0.03) = 9.907; gaps: 4 spread moves less
        # 1 partition moved twice = the 3 smallest of (2.45, 2.45, 2.49) - 1.692 = 2.314;
        # the sim's start: 6 x 0.495 + 2 x 0.06 = 3.09: 9.13 < 9.96.
        down = Cell("java", "join", "consumer:uniform", "downtime_partition_s", 3.55, 13.51, 13.51, 13.51, 1)
        ok, why = self.check("kip848-start", down)
        self.assertFalse(ok)
        self.assertIn("9.13 partition-s < distance 9.96", why)
        # Not a KIP-848 cell: refused.
        self.assertFalse(self.check("kip848-start", Cell("java", "join", "eager:range", "stop_the_world_s", 1, 2, 2, 2, 1))[0])
        # The start as one real rebalance (librdkafka) against the sim's group of one: 3 / 2.
        write_run2(folder / "rep1", {"rebalances": 2}, [("join", 0.0, 2.16, 3, 4), ("join", 12.0, 13.1, 4, 1)], parts)
        count = Cell("java", "join", "consumer:uniform", "rebalances", 3, 2, 2, 2, 1)
        self.assertTrue(self.check("kip848-start-count", count)[0])
        write_run2(folder / "rep1", {"rebalances": 2}, [("join", 0.0, 2.16, 3, 0), ("join", 12.0, 13.1, 4, 1)], parts)
        self.assertFalse(self.check("kip848-start-count", count)[0])  # nothing moved in its rebalance 0

    def test_kip848_start_split(self) -> None:
        self.scenario("join", '[[topic]]\nname = "events"\npartitions = 2\nrate = 10\n\n[group]\nmembers = 2\n\n'
                              '[broker.config]\n"group.consumer.heartbeat.interval.ms" = 1000\n\n'
                              '[[event]]\nat = "12s"\nkind = "join"\nmember = "c2"\n')
        folder = self.base / "java/join/consumer_uniform"
        # The sim: both partitions wait 0.5 s for c0, p1 moves to c1 in the spread (revoked
        # 1.60-1.65 s) and to c2 at the join (12.5-12.6 s): down 0.5 + 0.5 + 0.05 + 0.1 = 1.15;
        # stop-the-world only [0, 0.5] (c0 may consume p0 from 0.5 s on).
        write_run2(folder / "sim", {"downtime_partition_s": 1.15, "stop_the_world_s": 0.5},
                   [("join", 0.5, 0.5003, 1, 0), ("join", 0.51, 1.65, 2, 1), ("join", 12.3, 12.6, 3, 1)], [])
        own = ["topic", "partition", "start_s", "end_s", "owner", "state"]
        write_csv(folder / "sim/ownership.csv", own,
                  [["events", 0, 0.0, 0.5, "", "unassigned"], ["events", 0, 0.5, 30.0, "c0", "consuming"],
                   ["events", 1, 0.0, 0.5, "", "unassigned"], ["events", 1, 0.5, 1.6, "c0", "consuming"],
                   ["events", 1, 1.6, 1.65, "c0", "revoked"], ["events", 1, 1.65, 12.5, "c1", "consuming"],
                   ["events", 1, 12.5, 12.6, "c1", "revoked"], ["events", 1, 12.6, 30.0, "c2", "idle"]])
        # The run: both wait 1.2 s, the spread 3.0-3.8 s moves p1, the join 12.4-13.0 s again:
        # down 1.2 + 1.2 + 0.8 + 0.6 = 3.8, stop-the-world [0, 1.2].
        rebs = [("join", 0.0, 1.2, 2, 0), ("rejoin", 3.0, 3.8, 2, 1), ("join", 12.0, 13.0, 3, 1)]
        write_run2(folder / "rep1", {"downtime_partition_s": 3.8, "stop_the_world_s": 1.2}, rebs, [])
        ivs = ["topic", "partition", "kind", "from_s", "to_s"]
        rows = [["events", 0, "down", 0.0, 1.2], ["events", 0, "allowed", 1.2, 30.0],
                ["events", 1, "down", 0.0, 1.2], ["events", 1, "down", 3.0, 3.8], ["events", 1, "down", 12.4, 13.0],
                ["events", 1, "allowed", 1.2, 3.0], ["events", 1, "allowed", 3.8, 12.4], ["events", 1, "allowed", 13.0, 30.0]]
        down = Cell("java", "join", "consumer:uniform", "downtime_partition_s", 1.15, 3.8, 3.8, 3.8, 1)
        ok, why = self.check("kip848-start-split", down)
        self.assertFalse(ok)
        self.assertIn("measured without intervals.csv", why)
        write_csv(folder / "rep1/intervals.csv", ivs, rows)
        # T = max(3.8, 1.65) = 3.8: the run 3.2 before it, 0.6 after; the sim 1.05 and 0.1: the
        # start's excess 2.15 of the distance 2.65, the rest 0.5 <= 1 partition moved x 1 s.
        ok, why = self.check("kip848-start-split", down)
        self.assertTrue(ok, why)
        self.assertIn("before 3.800 s (the later start's end) 3.200 against the sim's 1.050", why)
        self.assertIn("the rest 0.5 <= 1 partitions moved after it x 1 s", why)
        stw = Cell("java", "join", "consumer:uniform", "stop_the_world_s", 0.5, 1.2, 1.2, 1.2, 1)
        ok, why = self.check("kip848-start-split", stw)
        self.assertTrue(ok, why)
        self.assertIn("the start's excess 0.7 of the distance 0.7", why)
        # The join's move 1.6 s long for real (12.4-14.0): the rest 1.5 is more than one heartbeat.
        rows[4] = ["events", 1, "down", 12.4, 14.0]
        write_csv(folder / "rep1/intervals.csv", ivs, rows)
        write_run2(folder / "rep1", {"downtime_partition_s": 4.8, "stop_the_world_s": 1.2}, rebs, [])
        longer = Cell("java", "join", "consumer:uniform", "downtime_partition_s", 1.15, 4.8, 4.8, 4.8, 1)
        ok, why = self.check("kip848-start-split", longer)
        self.assertFalse(ok)
        self.assertIn("the rest 1.5 > 1 partitions moved", why)
        # Intervals that do not add up to the summary: an error naming the folder.
        write_run2(folder / "rep1", {"downtime_partition_s": 3.8, "stop_the_world_s": 1.2}, rebs, [])
        with self.assertRaisesRegex(ValueError, "rep1: the run's intervals add up to 4.800000"):
            self.check("kip848-start-split", down)
        # A bounding run measured without intervals (rep3, down 3.0): kip848-start's bound on it
        # (waits 1.0 + (1.0 - 0.1), gap 2.0 - 1.0, less the sim's start 1.05: 1.85) and the two
        # runs with intervals (rep1 as first written, rep2 a copy) each passing the split test.
        rows[4] = ["events", 1, "down", 12.4, 13.0]
        for rep in ("rep1", "rep2"):
            write_run2(folder / rep, {"downtime_partition_s": 3.8, "stop_the_world_s": 1.2}, rebs, [])
            write_csv(folder / rep / "intervals.csv", ivs, rows)
        write_run2(folder / "rep3", {"downtime_partition_s": 3.0, "stop_the_world_s": 1.0}, rebs,
                   [(0, 1.0, 1, 0), (0, 2.0, 2, 1)])
        bounded = Cell("java", "join", "consumer:uniform", "downtime_partition_s", 1.15, 3.0, 3.8, 3.8, 3)
        self.assertIn("measured without intervals.csv", self.check("kip848-start-split", bounded)[1])
        ok, why = self.check("kip848-start-split-runs", bounded)
        self.assertTrue(ok, why)
        self.assertIn("its start exceeds the sim's by >= 1.85 of the distance 1.85", why)
        self.assertIn("; the 2 runs with intervals: ", why)
        # One run with intervals is not enough.
        (folder / "rep2/intervals.csv").unlink()
        self.assertFalse(self.check("kip848-start-split-runs", bounded)[0])
        # A bounding run whose start was shorter than the sim's: p0 waited 0.45 s, p1 moved twice
        # (spread and join), 1.2 s down in all: bound 0.45 + (0.45 - 0.1) - 1.05 = -0.25 < 0, so
        # the distance 0.5 lies after the start: 0.75 <= 1 partition moved after it x 1 s.
        write_csv(folder / "rep2/intervals.csv", ivs, rows)
        write_run2(folder / "rep3", {"downtime_partition_s": 1.65, "stop_the_world_s": 0.45}, rebs,
                   [(0, 0.45, 1, 0), (0, 1.2, 3, 2)])
        shorter = Cell("java", "join", "consumer:uniform", "downtime_partition_s", 1.15, 1.65, 3.8, 3.8, 3)
        self.assertFalse(self.check("kip848-start-split-runs", shorter)[0])
        ok, why = self.check("kip848-after-start", shorter)
        self.assertTrue(ok, why)
        self.assertIn("exceeds the sim's by >= -0.25 of the distance 0.5", why)
        self.assertIn("the rest <= 0.75 <= 1 partitions moved after it x 1 s", why)
        # start-only-episodes: the join moved p1 after the start: not only the start's.
        self.assertIn("rebalance 2 after its start moved partitions", self.check("start-only-episodes", shorter)[1])
        # Without that move (and the sim never down after its start, 1.65 s): both are their starts.
        write_run2(folder / "rep3", {"downtime_partition_s": 1.65, "stop_the_world_s": 0.45},
                   rebs[:2] + [("join", 12.0, 13.0, 3, 0)], [(0, 0.45, 1, 0), (0, 1.2, 2, 1)])
        own_rows = [["events", 0, 0.0, 0.5, "", "unassigned"], ["events", 0, 0.5, 30.0, "c0", "consuming"],
                    ["events", 1, 0.0, 0.5, "", "unassigned"], ["events", 1, 0.5, 1.6, "c0", "consuming"],
                    ["events", 1, 1.6, 1.65, "c0", "revoked"], ["events", 1, 1.65, 30.0, "c1", "consuming"]]
        write_csv(folder / "sim/ownership.csv", own, own_rows)
        ok, why = self.check("start-only-episodes", shorter)
        self.assertTrue(ok, why)
        self.assertIn("the sim down only before 1.650 s", why)

    def test_maxpoll_or_moved_and_heartbeat_max(self) -> None:
        self.scenario("stall-join", '[[topic]]\nname = "events"\npartitions = 6\nrate = 33.333333\n\n[group]\nmembers = 3\n\n'
                                    '[consumer.config]\n"enable.auto.commit" = true\n"auto.commit.interval.ms" = 5000\n'
                                    '"max.poll.interval.ms" = 10000\n\n[broker.config]\n'
                                    '"group.consumer.heartbeat.interval.ms" = 1000\n\n'
                                    '[[event]]\nat = "12s"\nkind = "stall"\nmember = "c1"\nduration = "10s"\n\n'
                                    '[[event]]\nat = "14s"\nkind = "join"\nmember = "c3"\n')
        folder = self.base / "java/stall-join/consumer_uniform"
        sim_reb = [("join", 0.52, 0.5203, 1, 0), ("join", 0.53, 1.62, 3, 4), ("join", 14.29, 15.32, 4, 1)]
        write_run2(folder / "sim", {"records_reprocessed": 0, "rebalance_ms_max": 1092}, sim_reb, [(0, 0.5, 1, 0)] * 6)
        # rep1: the timer expired 17 ms after the stall's end (22.0 s): 116 + 116 <= 66.7/s x 5 s = 333.
        exp = [("join", 0.0, 1.47, 3, 0), ("rejoin", 2.67, 3.57, 3, 4), ("join", 14.0, 15.5, 4, 1),
               ("max-poll-leave", 22.017, 22.537, 4, 1)]
        write_run2(folder / "rep1", {"records_reprocessed": 232, "rebalance_ms_max": 1500}, exp,
                   [(0, 1.3, 1, 0), (116, 2.3, 4, 0), (116, 2.7, 4, 0), (0, 2.2, 2, 1), (0, 3.0, 3, 2), (0, 1.3, 1, 0)])
        # rep2: no expiry, its 252 records all on partitions that moved.
        write_run2(folder / "rep2", {"records_reprocessed": 252, "rebalance_ms_max": 1400},
                   [("join", 0.0, 1.47, 3, 0), ("rejoin", 2.67, 3.57, 3, 4), ("join", 14.0, 22.78, 4, 1)],
                   [(0, 1.3, 1, 0), (126, 2.3, 4, 1), (126, 2.7, 4, 2), (0, 2.2, 2, 1), (0, 3.0, 3, 0), (0, 1.3, 1, 0)])
        cell = Cell("java", "stall-join", "consumer:uniform", "records_reprocessed", 0, 232, 242, 252, 2)
        ok, why = self.check("maxpoll-or-moved", cell)
        self.assertTrue(ok, why)
        self.assertIn("rep1 expired 17 ms after the stall, 232 <= 333; rep2 no expiry, 252 all on moved partitions", why)
        # An expiry 60 ms late is not the knife edge.
        exp[3] = ("max-poll-leave", 22.06, 22.537, 4, 1)
        write_run2(folder / "rep1", {"records_reprocessed": 232, "rebalance_ms_max": 1500}, exp, [(232, 2.3, 4, 0)])
        self.assertFalse(self.check("maxpoll-or-moved", cell)[0])
        # heartbeat-max: rep2's max (1400 ms) is its 14 s join, after its start (rebalance 1); the
        # sim's join lasts 1030 ms: 370 ms <= 1000.
        write_run2(folder / "rep2", {"records_reprocessed": 252, "rebalance_ms_max": 1400},
                   [("join", 0.0, 1.3, 3, 0), ("rejoin", 2.67, 3.57, 3, 4), ("join", 14.0, 15.4, 4, 1)], [])
        shutil.rmtree(folder / "rep1")
        top = Cell("java", "stall-join", "consumer:uniform", "rebalance_ms_max", 1092, 1400, 1400, 1400, 1)
        ok, why = self.check("heartbeat-max", top)
        self.assertTrue(ok, why)
        self.assertIn("the sim's join lasts 1030 ms: 370 ms <= group.consumer.heartbeat.interval.ms 1000", why)
        # Its max being the start: not this cause.
        write_run2(folder / "rep2", {"records_reprocessed": 252, "rebalance_ms_max": 1400},
                   [("join", 0.0, 1.0, 3, 0), ("rejoin", 2.0, 3.4, 3, 4), ("join", 14.0, 15.2, 4, 1)], [])
        self.assertFalse(self.check("heartbeat-max", top)[0])

    def test_formation_and_heartbeat_split(self) -> None:
        self.scenario("gc-pause", '[[topic]]\nname = "events"\npartitions = 2\nrate = 10\n\n[group]\nmembers = 2\n\n'
                                  '[consumer.config]\n"heartbeat.interval.ms" = 1000\n')
        folder = self.base / "java/gc-pause/eager_range"
        # The sim: both partitions wait for the formation (6.5 s) and are revoked 20.0-20.5 s:
        # down 14.0, stop-the-world 7.0. The run: formation 6.4 s, revoked 20.0-21.0 s: 14.8, 7.4.
        write_run2(folder / "sim", {"downtime_partition_s": 14.0, "stop_the_world_s": 7.0},
                   [("join", 0.5, 6.5, 2, 0), ("join", 20.0, 20.5, 2, 0)], [])
        own = ["topic", "partition", "start_s", "end_s", "owner", "state"]
        write_csv(folder / "sim/ownership.csv", own,
                  [r for p in (0, 1) for r in (["events", p, 0.0, 6.5, "", "unassigned"], ["events", p, 6.5, 20.0, "c0", "consuming"],
                                               ["events", p, 20.0, 20.5, "c0", "revoked"], ["events", p, 20.5, 30.0, "c0", "consuming"])])
        write_run2(folder / "rep1", {"downtime_partition_s": 14.8, "stop_the_world_s": 7.4},
                   [("join", 0.0, 6.4, 2, 0), ("join", 20.0, 21.0, 2, 0)], [])
        down = Cell("java", "gc-pause", "eager:range", "downtime_partition_s", 14.0, 14.8, 14.8, 14.8, 1)
        self.assertIn("measured without intervals.csv", self.check("heartbeat-split", down)[1])
        write_csv(folder / "rep1/intervals.csv", ["topic", "partition", "kind", "from_s", "to_s"],
                  [r for p in (0, 1) for r in (["events", p, "down", 0.0, 6.4], ["events", p, "down", 20.0, 21.0],
                                               ["events", p, "allowed", 6.4, 20.0], ["events", p, "allowed", 21.0, 30.0])])
        # T = 6.5: the run 12.8 before it against 13.0 (excess -0.2), 2.0 after against 1.0: the rest
        # 1.0 <= 1 rebalance x 2 partitions x 1 s; not the formation's.
        ok, why = self.check("heartbeat-split", down)
        self.assertTrue(ok, why)
        self.assertIn("the formation's excess -0.2, the rest after it 1 <= 1 rebalances after it x 2 partitions x 1 s", why)
        self.assertFalse(self.check("formation-split", down)[0])
        stw = Cell("java", "gc-pause", "eager:range", "stop_the_world_s", 7.0, 7.4, 7.4, 7.4, 1)
        ok, why = self.check("heartbeat-split", stw)
        self.assertTrue(ok, why)
        self.assertIn("the rest after it 0.5 <= 1 rebalances after it x 1 s", why)
        # Not for KIP-848.
        self.assertFalse(self.check("heartbeat-split", Cell("java", "gc-pause", "consumer:uniform", "stop_the_world_s", 1, 2, 2, 2, 1))[0])
        # A formation 0.5 s longer and the same rebalance as the sim's: the formation's alone.
        write_run2(folder / "rep1", {"downtime_partition_s": 15.0, "stop_the_world_s": 7.5},
                   [("join", 0.0, 7.0, 2, 0), ("join", 20.0, 20.5, 2, 0)], [])
        write_csv(folder / "rep1/intervals.csv", ["topic", "partition", "kind", "from_s", "to_s"],
                  [r for p in (0, 1) for r in (["events", p, "down", 0.0, 7.0], ["events", p, "down", 20.0, 20.5],
                                               ["events", p, "allowed", 7.0, 20.0], ["events", p, "allowed", 20.5, 30.0])])
        longer = Cell("java", "gc-pause", "eager:range", "downtime_partition_s", 14.0, 15.0, 15.0, 15.0, 1)
        ok, why = self.check("formation-split", longer)
        self.assertTrue(ok, why)
        self.assertIn("the formation's excess 1 covers the distance 1", why)
        self.assertFalse(self.check("heartbeat-split", longer)[0])

    def test_formation_lost(self) -> None:
        text = '[[topic]]\nname = "t"\npartitions = 2\nrate = 10.0\n\n[group]\nmembers = 1\n'
        self.scenario("static-withheld", text)
        folder = self.base / "java/static-withheld/cooperative_cooperative-sticky_static"
        # auto.offset.reset = latest (the default): a partition loses what was produced before its
        # first position. The sim: formation ends 6.53 s, 65 lost each -> 6.5 s, 0.03 s before it.
        write_run2(folder / "sim", {"records_lost": 130}, [("join", 0.5, 6.53, 3, 0)],
                   [(0, 6.4, 1, 0), (0, 6.4, 1, 0)])
        write_csv(folder / "sim/partitions.csv", ["partition", "lost", "moves"], [[0, 65, 0], [1, 65, 0]])
        # The run: formation ends 7.558 s, 77 and 78 lost -> 7.7 and 7.8 s: 0.142-0.242 s after it.
        write_run2(folder / "rep1", {"records_lost": 155}, [("join", 0.0, 7.558, 3, 0)], [])
        write_csv(folder / "rep1/partitions.csv", ["partition", "lost", "moves"], [[0, 77, 0], [1, 78, 0]])
        cell = Cell("java", "static-withheld", "cooperative:cooperative-sticky+static", "records_lost", 130, 155, 155, 155, 1)
        ok, why = self.check("formation-lost", cell)
        self.assertTrue(ok, why)
        self.assertIn("formation ends 7.558 s, resets +0.142..+0.242 s after it", why)
        self.assertIn("formation ends 6.530 s, resets -0.030..-0.030 s after it", why)
        # A reset 1.4 s after the formation is not the client-side time.
        write_csv(folder / "rep1/partitions.csv", ["partition", "lost", "moves"], [[0, 77, 0], [1, 90, 0]])
        self.assertFalse(self.check("formation-lost", cell)[0])
        # Reset to earliest: nothing is lost at the start, the check does not apply.
        self.scenario("static-withheld", text + '\n[consumer.config]\n"auto.offset.reset" = "earliest"\n')
        self.assertIn("earliest", self.check("formation-lost", cell)[1])

    def test_sticky_giver(self) -> None:
        d = self.base / "librdkafka" / "stall-join"
        d.mkdir(parents=True, exist_ok=True)
        (d / "scenario.toml").write_text('[[topic]]\nname = "events"\npartitions = 2\nrate = 10\n\n[group]\nmembers = 2\n\n'
                                         '[consumer.config]\n"heartbeat.interval.ms" = 1000\n')
        folder = d / "cooperative_cooperative-sticky"
        # The sim: formation at 6.5 s, its mover p1 down 22.0-22.97 s: 13.0 + 0.97 = 13.97.
        write_run2(folder / "sim", {"downtime_partition_s": 13.97}, [("join", 0.5, 6.5, 2, 0), ("join", 14.3, 22.97, 3, 1)],
                   [(0, 6.5, 1, 0), (0, 7.47, 2, 1)])
        own = ["topic", "partition", "start_s", "end_s", "owner", "state"]
        write_csv(folder / "sim/ownership.csv", own,
                  [["events", 0, 0.0, 6.5, "", "unassigned"], ["events", 0, 6.5, 30.0, "c0", "consuming"],
                   ["events", 1, 0.0, 6.5, "", "unassigned"], ["events", 1, 6.5, 22.0, "c1", "consuming"],
                   ["events", 1, 22.0, 22.97, "", "revoked"], ["events", 1, 22.97, 30.0, "c2", "consuming"]])
        # The runs: formation at 6.2 s, their mover p0 down 14.2-22.5 s: 12.4 + 8.3 = 20.7.
        rebs = [("join", 0.0, 6.2, 2, 0), ("join", 14.0, 22.5, 3, 1)]
        ivs = ["topic", "partition", "kind", "from_s", "to_s"]
        for rep in ("rep1", "rep2"):
            write_run2(folder / rep, {"downtime_partition_s": 20.7}, rebs, [(0, 14.5, 2, 1), (0, 6.2, 1, 0)])
            write_csv(folder / rep / "intervals.csv", ivs,
                      [["events", 0, "down", 0.0, 6.2], ["events", 0, "down", 14.2, 22.5], ["events", 1, "down", 0.0, 6.2]])
        cell = Cell("librdkafka", "stall-join", "cooperative:cooperative-sticky", "downtime_partition_s", 13.97, 20.7, 20.7, 20.7, 2)
        # T = 6.5: the run 12.4 before it against 13.0, 8.3 after against 0.97; its mover p0 8.3
        # after T, the sim's p1 0.97: the other partitions add 0 (allowance 1 moved x 1 s).
        ok, why = self.check("sticky-giver", cell)
        self.assertTrue(ok, why)
        self.assertIn("every real run moved partition 0, the sim 1: down after the formation 8.300 against 0.970", why)
        # Runs that moved different partitions: no fixed giver.
        write_run2(folder / "rep2", {"downtime_partition_s": 20.7}, rebs, [(0, 6.2, 1, 0), (0, 14.5, 2, 1)])
        self.assertIn("the real runs moved different partitions", self.check("sticky-giver", cell)[1])

    def test_start_max_and_pause_held(self) -> None:
        self.scenario("gc-pause", '[[topic]]\nname = "events"\npartitions = 6\nrate = 33.333333\n\n[group]\nmembers = 3\n\n'
                                  '[consumer.config]\n"session.timeout.ms" = 6000\n\n'
                                  '[[event]]\nat = "12s"\nkind = "pause"\nmember = "c1"\nduration = "8s"\n')
        folder = self.base / "java/gc-pause/eager_range"
        write_run2(folder / "sim", {"rebalance_ms_p50": 449, "rebalance_ms_max": 6000},
                   [("join", 0.5, 6.5, 3, 0), ("session-expiry", 17.69, 17.84, 2, 2), ("join", 20.5, 20.949, 3, 2)],
                   [(0, 6.5, 1, 0)])
        # The expiry's rebalance held open from 18.67 s to 20.61 s, just after the resume at 20 s.
        write_run2(folder / "rep1", {"rebalance_ms_p50": 1940, "rebalance_ms_max": 6740},
                   [("join", 0.0, 6.74, 3, 0), ("rejoin", 18.67, 20.61, 3, 2), ("rejoin", 20.72, 20.745, 3, 2)],
                   [(0, 6.5, 1, 0)])
        p50 = Cell("java", "gc-pause", "eager:range", "rebalance_ms_p50", 449, 1940, 1940, 1940, 1)
        ok, why = self.check("pause-held", p50)
        self.assertTrue(ok, why)
        self.assertIn("0.610 s after the resume at 20 s", why)
        # Ended 1.5 s after the resume: not the held expiry.
        write_run2(folder / "rep1", {"rebalance_ms_p50": 2840, "rebalance_ms_max": 6740},
                   [("join", 0.0, 6.74, 3, 0), ("rejoin", 18.67, 21.51, 3, 2), ("rejoin", 21.6, 21.65, 3, 2)],
                   [(0, 6.5, 1, 0)])
        self.assertFalse(self.check("pause-held", Cell("java", "gc-pause", "eager:range", "rebalance_ms_p50",
                                                       449, 2840, 2840, 2840, 1))[0])
        # start-max: the run's max is its start (6740 ms), the others at most 2840 ms: above the
        # sim's 2000 ms, so the start alone does not explain it; with the sim at 3000 ms it does.
        mx = Cell("java", "gc-pause", "eager:range", "rebalance_ms_max", 2000, 6740, 6740, 6740, 1)
        self.assertFalse(self.check("start-max", mx)[0])
        mx = Cell("java", "gc-pause", "eager:range", "rebalance_ms_max", 3000, 6740, 6740, 6740, 1)
        ok, why = self.check("start-max", mx)
        self.assertTrue(ok, why)
        self.assertIn("at most 2840 ms <= the sim's 3000 ms", why)

    def test_join_stall_end(self) -> None:
        self.scenario("stall-join", '[[topic]]\nname = "events"\npartitions = 6\n\n[group]\nmembers = 3\n\n'
                                    '[[event]]\nat = "12s"\nkind = "stall"\nmember = "c1"\nduration = "10s"\n\n'
                                    '[[event]]\nat = "14s"\nkind = "join"\nmember = "c3"\n\n'
                                    '[timing]\nstart_delay = "100ms"\nstart_spread = "600ms"\n')
        folder = self.base / "java/stall-join/eager_range"
        # The sim: join from 14.3 s (its joiner's start draw) to 22.004 s = 7704 ms.
        write_run2(folder / "sim", {"rebalance_ms_max": 7704.0},
                   [("join", 0.5, 6.5, 3, 0), ("join", 14.3, 22.004, 4, 1)], [(0, 6.5, 1, 0)])
        # The run: from the moment (14.0 s) to 22.104 s = 8104 ms; 300 + 100 ms = the distance 400.
        write_run2(folder / "rep1", {"rebalance_ms_max": 8104.0},
                   [("join", 0.0, 7.0, 3, 0), ("join", 14.0, 22.104, 4, 1)], [(0, 6.5, 1, 0)])
        cell = Cell("java", "stall-join", "eager:range", "rebalance_ms_max", 7704.0, 8104.0, 8104.0, 8104.0, 1)
        ok, why = self.check("join-stall-end", cell)
        self.assertTrue(ok, why)
        self.assertIn("starts 300 ms after the run's, the run ends 100 ms after the sim: 400 ms >= distance 400 ms", why)
        # The run ends 0.5 s after the stall: beyond the 300 ms of client-side time, not explained.
        write_run2(folder / "rep1", {"rebalance_ms_max": 8504.0},
                   [("join", 0.0, 7.0, 3, 0), ("join", 14.0, 22.504, 4, 1)], [(0, 6.5, 1, 0)])
        cell = Cell("java", "stall-join", "eager:range", "rebalance_ms_max", 7704.0, 8504.0, 8504.0, 8504.0, 1)
        self.assertFalse(self.check("join-stall-end", cell)[0])
        # The run's rebalance starts at the joiner's JoinGroup (14.3 s), as the sim's: nothing to explain by it.
        write_run2(folder / "rep1", {"rebalance_ms_max": 7804.0},
                   [("join", 0.0, 7.0, 3, 0), ("join", 14.3, 22.104, 4, 1)], [(0, 6.5, 1, 0)])
        cell = Cell("java", "stall-join", "eager:range", "rebalance_ms_max", 7704.0, 7804.0, 7804.0, 7804.0, 1)
        self.assertFalse(self.check("join-stall-end", cell)[0])

    def test_kip848_start_median(self) -> None:
        d = self.base / "librdkafka" / "static-restart"
        d.mkdir(parents=True)
        (d / "scenario.toml").write_text(SCENARIO)
        folder = d / "consumer_uniform"
        # The sim: group of one, start 1092 ms (its p50), restart 15.5-18.6 s (3100 ms).
        write_run2(folder / "sim", {"rebalance_ms_p50": 1092.0},
                   [("join", 0.5, 0.50034, 1, 0), ("join", 0.528, 1.620, 3, 4), ("join", 15.5, 18.6, 3, 0)],
                   [(0, 1.0, 1, 0)])
        # Real: starts 2050 / 4000 ms, restarts 2000 / 3600 ms: the p50s are the restarts.
        write_run2(folder / "rep1", {"rebalance_ms_p50": 2000.0},
                   [("join", 0.0, 2.05, 3, 4), ("session-expiry", 15.1, 17.1, 3, 0)], [(0, 1.0, 1, 0)])
        write_run2(folder / "rep2", {"rebalance_ms_p50": 3600.0},
                   [("join", 0.0, 4.0, 3, 4), ("session-expiry", 15.0, 18.6, 3, 0)], [(0, 1.0, 1, 0)])
        cell = Cell("librdkafka", "static-restart", "consumer:uniform", "rebalance_ms_p50", 1092.0, 2000.0, 2800.0, 3600.0, 2)
        ok, why = self.check("kip848-start-median", cell)
        self.assertTrue(ok, why)
        self.assertIn("lasts 3100 ms, inside the real 2000-3600", why)
        # A run whose start is shorter than its restart has its start as p50: not this cause.
        write_run2(folder / "rep2", {"rebalance_ms_p50": 1500.0},
                   [("join", 0.0, 1.5, 3, 4), ("session-expiry", 15.0, 18.6, 3, 0)], [(0, 1.0, 1, 0)])
        cell = Cell("librdkafka", "static-restart", "consumer:uniform", "rebalance_ms_p50", 1092.0, 1500.0, 1750.0, 2000.0, 2)
        self.assertFalse(self.check("kip848-start-median", cell)[0])

    def test_kip848_extra_heartbeat(self) -> None:
        self.scenario("rolling-restart", SCENARIO + '\n[broker.config]\n"group.consumer.heartbeat.interval.ms" = 1000\n')
        folder = self.base / "java/rolling-restart/consumer_uniform"
        write_run2(folder / "sim", {"rebalance_ms_max": 2045.0},
                   [("join", 0.3, 0.3003, 1, 0), ("join", 0.5, 1.6, 3, 4), ("join", 44.155, 46.2, 3, 2)],
                   [(0, 1.0, 1, 0)])
        head = ["partition", "start_s", "end_s", "owner", "state"]
        # p0 released at 45.15 and taken by c3 at 45.17 (its heartbeat); p1 released at 45.18,
        # after it, and taken by c3 at its next heartbeat, 46.2 s.
        write_csv(folder / "sim/ownership.csv", head, [
            [0, 1.6, 45.15, "c0", "consuming"], [0, 45.15, 45.17, "", "revoked"], [0, 45.17, 55.0, "c3", "consuming"],
            [1, 1.6, 45.18, "c1", "consuming"], [1, 45.18, 46.2, "", "revoked"], [1, 46.2, 55.0, "c3", "consuming"],
        ])
        cell = Cell("java", "rolling-restart", "consumer:uniform", "rebalance_ms_max", 2045.0, 1400.0, 1600.0, 1900.0, 1)
        ok, why = self.check("kip848-extra-heartbeat", cell)
        self.assertTrue(ok, why)
        self.assertIn("partition 1 was released at 45.180 s (10 ms after c3's heartbeat)", why)
        self.assertIn("without it 1015 ms <= the real max 1900 ms", why)
        # Released before the new owner's heartbeat: the late partition is not this mechanism.
        write_csv(folder / "sim/ownership.csv", head, [
            [0, 1.6, 45.15, "c0", "consuming"], [0, 45.15, 45.17, "", "revoked"], [0, 45.17, 55.0, "c3", "consuming"],
            [1, 1.6, 45.16, "c1", "consuming"], [1, 45.16, 46.2, "", "revoked"], [1, 46.2, 55.0, "c3", "consuming"],
        ])
        self.assertFalse(self.check("kip848-extra-heartbeat", cell)[0])

    def test_rdkafka_timer_start(self) -> None:
        d = self.base / "librdkafka" / "crash"
        d.mkdir(parents=True)
        (d / "scenario.toml").write_text(
            '[[topic]]\nname = "events"\npartitions = 6\nrate = 33.333333\n\n[group]\nmembers = 3\n\n'
            '[consumer.config]\n"enable.auto.commit" = true\n"auto.commit.interval.ms" = 5000\n\n'
            '[[event]]\nat = "12s"\nkind = "crash"\nmember = "c1"\n\n'
            '[timing]\nstart_delay = "100ms"\nstart_spread = "600ms"\n')
        folder = d / "eager_range"
        write_run2(folder / "sim", {"records_reprocessed": 98}, [("join", 0.5, 6.5, 3, 0)], [(0, 6.5, 1, 0)])
        late = "latest member subscribe after its moment: 0.021 s (attempt 1)\n"
        write_run2(folder / "rep1", {"records_reprocessed": 132}, [("join", 0.0, 7.1, 3, 0)], [(0, 6.5, 1, 0)], late)
        cell = Cell("librdkafka", "crash", "eager:range", "records_reprocessed", 98, 132, 132, 132, 1)
        ok, why = explain_out.CHECKS["rdkafka-timer-start"](cell, self.base)
        self.assertTrue(ok, why)
        self.assertIn("R = 0 gives 133; the sim's start window 0.1-0.7 s gives 87-127", why)
        write_run2(folder / "rep1", {"records_reprocessed": 132}, [("join", 0.0, 7.1, 3, 0)], [(0, 6.5, 1, 0)],
                   late.replace("0.021", "0.400"))
        self.assertFalse(explain_out.CHECKS["rdkafka-timer-start"](cell, self.base)[0])


class CommittedOutTest(unittest.TestCase):
    def test_out_md_is_up_to_date(self) -> None:
        base = HERE.parent.parent / "results/real/4.4.0"
        if not (base / "causes.toml").exists():
            self.skipTest("no results/real/4.4.0/causes.toml")
        with tempfile.TemporaryDirectory() as tmp, redirect_stdout(io.StringIO()):
            explain_out.main(["--out", str(Path(tmp) / "OUT.md")])
            fresh = (Path(tmp) / "OUT.md").read_text()
        self.assertEqual(fresh, (base / "OUT.md").read_text(), "rerun python3 scripts/real/explain_out.py")


if __name__ == "__main__":
    unittest.main()
