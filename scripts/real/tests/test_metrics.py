"""Unit tests of the DESIGN section 5 metrics on hand-made records (expected values derived by hand)."""

from __future__ import annotations

import unittest

from realrun.metrics import ConservationError, compute, offsets_of, rebalances, subtract, union
from realrun.output import interval_rows, partition_rows
from realrun.scenario import ProtocolSpec
from realrun.recorder import Callback, Delivery, Mark, Record

P0, P1 = ("t", 0), ("t", 1)


def delivery(offset: int, start: float, member: str = "c0", tp: tuple[str, int] = P0) -> Delivery:
    """A 1 ms processing starting at `start`."""
    return Delivery(tp, offset, 0.0, start, start + 0.001, member)


class IntervalTest(unittest.TestCase):
    def test_union_merges_overlapping_and_touching(self) -> None:
        # [0,1) and [1,2) touch -> [0,2); [1.5,3) overlaps it -> [0,3); [5,5) is empty.
        self.assertEqual(union([(1.5, 3.0), (0.0, 1.0), (1.0, 2.0), (5.0, 5.0)]), [(0.0, 3.0)])

    def test_subtract(self) -> None:
        # [0,10) minus [2,3) and [5,12) leaves [0,2) and [3,5).
        self.assertEqual(subtract([(0.0, 10.0)], [(2.0, 3.0), (5.0, 12.0)]), [(0.0, 2.0), (3.0, 5.0)])


class OffsetsTest(unittest.TestCase):
    def record(self) -> Record:
        rec = Record(10.0, [P0], 300.0)
        rec.produced[P0] = {o: float(o) for o in range(10)}
        # 0..3 processed, then 2 and 3 again (a restart from an older commit), then a reset
        # jumps to 6: 6 and 7 processed, 8 and 9 never.
        rec.deliveries = [delivery(o, 1.0 + i) for i, o in enumerate([0, 1, 2, 3, 2, 3, 6, 7])]
        return rec

    def test_reprocessed_lost_lag(self) -> None:
        po = offsets_of(self.record(), P0)
        # processed = 8 deliveries; unique = {0,1,2,3,6,7} = 6; reprocessed = 8 - 6 = 2.
        # Unprocessed {4,5,8,9}: 4 and 5 lie below the highest processed offset 7 -> lost 2;
        # 8 and 9 above it -> lag 2. 10 produced = 6 + 2 + 2.
        self.assertEqual((po.produced, po.processed, po.unique), (10, 8, 6))
        self.assertEqual((po.reprocessed, po.lost, po.final_lag), (2, 2, 2))

    def test_unknown_offset_breaks_conservation(self) -> None:
        rec = self.record()
        rec.deliveries.append(delivery(42, 9.0))
        with self.assertRaises(ConservationError):
            offsets_of(rec, P0)


class DowntimeTest(unittest.TestCase):
    def crash_record(self) -> Record:
        """One partition, records at t = 1..9 (offsets 0..8); c0 owns it 0.5..crash at 4.5,
        c1 is assigned at 7.0 and catches up: offsets 4, 5, 6 start at 7.000, 7.001, 7.002."""
        rec = Record(10.0, [P0], 300.0)
        rec.produced[P0] = {o: float(o + 1) for o in range(9)}
        starts = {0: 1.01, 1: 2.01, 2: 3.01, 3: 4.01, 4: 7.0, 5: 7.001, 6: 7.002, 7: 8.01, 8: 9.01}
        rec.deliveries = [delivery(o, s, "c0" if o < 4 else "c1") for o, s in starts.items()]
        rec.marks = [Mark(0.0, "c0", 0, "start"), Mark(0.0, "c1", 0, "start"), Mark(4.5, "c0", 0, "crash")]
        rec.callbacks = [Callback(0.5, "c0", 0, "assign", (P0,)), Callback(7.0, "c1", 0, "assign", (P0,))]
        return rec

    def test_crash_downtime(self) -> None:
        m = compute(self.crash_record())
        # Waiting: [k, k+0.01) for k = 1..4, allowed (c0 owns 0.5..4.5). Offsets 4, 5, 6 wait
        # [5, 7.0), [6, 7.001), [7, 7.002): union [5, 7.002); c1 may consume from 7.0, so the
        # partition is down [5, 7.0): 2.0 s in one episode; the partition is the only one with
        # waiting records then, so stop-the-world is 2.0 s too.
        self.assertAlmostEqual(m.partitions[0].downtime_s, 2.0, places=9)
        self.assertEqual(m.partitions[0].episodes, 1)
        self.assertAlmostEqual(m.episodes_ms[0], 2000.0, places=6)
        self.assertAlmostEqual(m.stop_the_world_s, 2.0, places=9)
        # c0 -> c1 is one owner change.
        self.assertEqual((m.partitions_moved, m.partitions[0].moves), (1, 1))
        # intervals.csv keeps what was summed: down [5, 7.0); allowed while c0 owns it (0.5 to
        # the crash at 4.5) and from c1's assignment at 7.0 to the end (10.0).
        self.assertEqual(m.partitions[0].down, [(5.0, 7.0)])
        self.assertEqual(m.partitions[0].allowed, [(0.5, 4.5), (7.0, 10.0)])

    def test_interval_rows_add_up_to_the_partition_rows(self) -> None:
        m = compute(self.crash_record())
        spec = ProtocolSpec("eager", "range", False)
        rows = interval_rows(spec, m, {})
        self.assertEqual(
            rows,
            [
                ["eager", "range", False, "t", 0, "down", 5.0, 7.0],
                ["eager", "range", False, "t", 0, "allowed", 0.5, 4.5],
                ["eager", "range", False, "t", 0, "allowed", 7.0, 10.0],
            ],
        )
        down = sum(r[7] - r[6] for r in rows if r[5] == "down")
        self.assertAlmostEqual(down, partition_rows(spec, m, {})[0][9], places=9)

    def test_pause_makes_down_but_busy_does_not(self) -> None:
        rec = self.crash_record()
        # c0 is SIGSTOPped 2.5..3.5: offset 2 arrives at 3 and starts at 3.5 -> down [3, 3.5).
        rec.marks += [Mark(2.5, "c0", 0, "pause"), Mark(3.5, "c0", 0, "resume")]
        rec.marks.sort(key=lambda x: x.t_s)
        rec.deliveries[2] = delivery(2, 3.5, "c0")
        m = compute(rec)
        # 0.5 s (pause) + 2.0 s (crash) = 2.5 s in two episodes of 500 and 2000 ms.
        self.assertAlmostEqual(m.partitions[0].downtime_s, 2.5, places=9)
        self.assertEqual(sorted(round(e, 6) for e in m.episodes_ms), [500.0, 2000.0])

    def test_max_poll_cutoff_is_down(self) -> None:
        rec = self.crash_record()
        # c0 stops polling at 1.5 (max.poll 1 s): cut off 2.5..4.0; offset 1 (arrived 2) and
        # offset 2 (arrived 3) start at 4.0 -> waiting [2, 4.0); allowed until 2.5 -> down [2.5, 4.0).
        rec.max_poll_interval_s = 1.0
        rec.marks += [Mark(2.5, "c0", 0, "cutoff"), Mark(4.0, "c0", 0, "uncut")]
        rec.marks.sort(key=lambda x: x.t_s)
        rec.deliveries[1] = delivery(1, 4.0, "c0")
        rec.deliveries[2] = delivery(2, 4.0005, "c0")
        m = compute(rec)
        # 1.5 s (cut off) + 2.0 s (crash) = 3.5 s.
        self.assertAlmostEqual(m.partitions[0].downtime_s, 3.5, places=9)


class RebalanceTest(unittest.TestCase):
    def test_join_then_leave(self) -> None:
        rec = Record(10.0, [P0, P1], 300.0)
        rec.marks = [Mark(0.0, "a", 0, "start"), Mark(0.1, "b", 0, "start"), Mark(5.0, "b", 0, "leave")]
        rec.triggers = [(0.0, "join"), (0.1, "join"), (5.0, "leave")]
        rec.callbacks = [
            Callback(3.0, "a", 0, "assign", (P0,)),
            Callback(3.01, "b", 0, "assign", (P1,)),
            Callback(5.001, "b", 0, "revoke", (P1,)),
            Callback(5.5, "a", 0, "revoke", (P0,)),
            Callback(5.6, "a", 0, "assign", (P0, P1)),
        ]
        rbs, moved = rebalances(rec)
        # #0 opens at a's assign (3.0), is complete once b owns P1 (3.01); the earliest join
        # (0.0) is its start. #1 opens at b's revoke; the leave at 5.0 names it and starts it;
        # complete when a owns both (5.6). Only P1 changed owner (b -> a).
        self.assertEqual([(r.trigger, r.start_s, r.end_s) for r in rbs], [("join", 0.0, 3.01), ("leave", 5.0, 5.6)])
        self.assertEqual([(r.members, r.partitions_moved, r.rounds) for r in rbs], [(2, 0, 1), (1, 1, 1)])
        self.assertEqual(moved, 1)

    def test_crash_starts_at_first_callback(self) -> None:
        rec = Record(20.0, [P0, P1], 300.0)
        rec.marks = [Mark(0.0, "a", 0, "start"), Mark(0.0, "b", 0, "start"), Mark(10.0, "b", 0, "crash")]
        rec.triggers = [(0.0, "join"), (0.0, "join"), (10.0, "session-expiry")]
        rec.callbacks = [
            Callback(3.0, "a", 0, "assign", (P0,)),
            Callback(3.0, "b", 0, "assign", (P1,)),
            Callback(16.5, "a", 0, "revoke", (P0,)),
            Callback(19.0, "a", 0, "assign", (P0, P1)),
        ]
        rbs, moved = rebalances(rec)
        # The crash (10.0) names rebalance #1, but the coordinator's expiry is not observable:
        # it starts at a's revoke (16.5) and ends when a alone owns both (19.0); P1 moved b -> a.
        self.assertEqual(
            [(r.trigger, r.start_s, r.end_s) for r in rbs], [("join", 0.0, 3.0), ("session-expiry", 16.5, 19.0)]
        )
        self.assertEqual((rbs[1].members, rbs[1].partitions_moved, moved), (1, 1, 1))

    def test_crash_starts_at_first_join_request(self) -> None:
        rec = Record(20.0, [P0, P1], 300.0)
        rec.marks = [Mark(0.0, "a", 0, "start"), Mark(0.0, "b", 0, "start"), Mark(10.0, "b", 0, "crash")]
        rec.triggers = [(0.0, "join"), (0.0, "join"), (10.0, "session-expiry")]
        # Cooperative: a revokes nothing; its only callback is the assign of P1 at 19.0. The mock
        # saw JoinGroups at 0.001 (before the crash: ignored) and 16.2, 16.3 (a rejoining).
        rec.join_requests_s = [0.001, 16.2, 16.3]
        rec.callbacks = [
            Callback(3.0, "a", 0, "assign", (P0,)),
            Callback(3.0, "b", 0, "assign", (P1,)),
            Callback(19.0, "a", 0, "assign", (P1,)),
        ]
        rbs, _ = rebalances(rec)
        # Rebalance #1 runs from the first JoinGroup after the crash (16.2) to 19.0.
        self.assertEqual((rbs[1].trigger, rbs[1].start_s, rbs[1].end_s), ("session-expiry", 16.2, 19.0))

    def test_paused_member_does_not_hold_the_expiry_open(self) -> None:
        # b is stopped 10-20 s (its session expires meanwhile): a takes P1 at 16.6 s, b's resumed
        # poll calls back `lost` at 20.0 s, then an eager rejoin (20.3-20.4 s).
        rec = Record(30.0, [P0, P1], 300.0)
        rec.marks = [Mark(0.0, "a", 0, "start"), Mark(0.0, "b", 0, "start"),
                     Mark(10.0, "b", 0, "pause"), Mark(20.0, "b", 0, "resume")]
        rec.triggers = [(0.0, "join"), (0.0, "join")]
        rec.callbacks = [
            Callback(3.0, "a", 0, "assign", (P0,)),
            Callback(3.0, "b", 0, "assign", (P1,)),
            Callback(16.5, "a", 0, "revoke", (P0,)),
            Callback(16.6, "a", 0, "assign", (P0, P1)),
            Callback(20.0, "b", 0, "lost", (P1,)),
            Callback(20.3, "a", 0, "revoke", (P0, P1)),
            Callback(20.4, "b", 0, "assign", (P1,)),
            Callback(20.4, "a", 0, "assign", (P0,)),
        ]
        rbs, moved = rebalances(rec)
        # #1 ends when a owns both (16.6 s), with 1 member: not when b resumes (20.0 s). #2 is
        # the rejoin (20.3-20.4 s, 2 members). P1 moved b -> a -> b.
        self.assertEqual(
            [(r.trigger, r.start_s, r.end_s, r.members) for r in rbs],
            [("join", 0.0, 3.0, 2), ("rejoin", 16.5, 16.6, 1), ("rejoin", 20.3, 20.4, 2)],
        )
        self.assertEqual(moved, 2)

    def test_added_partition_does_not_hold_the_formation_open(self) -> None:
        # P1 is added at 8.0 s; the formation (a owns P0 at 3.0 s) completes without it, and
        # the partitions-added rebalance starts at the coordinator's moment (8.5 s, the
        # leader's JoinGroup after its metadata refresh) and ends when a owns both (8.6 s).
        rec = Record(20.0, [P0, P1], 300.0)
        rec.added_s = {P1: 8.0}
        rec.marks = [Mark(0.0, "a", 0, "start")]
        rec.triggers = [(0.0, "join"), (8.0, "partitions-added")]
        rec.join_requests_s = [0.001, 8.5]
        rec.callbacks = [
            Callback(3.0, "a", 0, "assign", (P0,)),
            Callback(8.55, "a", 0, "revoke", (P0,)),
            Callback(8.6, "a", 0, "assign", (P0, P1)),
        ]
        rbs, moved = rebalances(rec)
        self.assertEqual(
            [(r.trigger, r.start_s, r.end_s) for r in rbs], [("join", 0.0, 3.0), ("partitions-added", 8.5, 8.6)]
        )
        self.assertEqual(moved, 0)


if __name__ == "__main__":
    unittest.main()
