"""Tests of compare.py on hand-written summary files (expected values derived by hand)."""

from __future__ import annotations

import csv
import importlib.util
import io
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("compare", HERE / "compare.py")
assert spec is not None and spec.loader is not None
compare = importlib.util.module_from_spec(spec)
sys.modules["compare"] = compare  # dataclasses look their module up while the module loads
spec.loader.exec_module(compare)


def write_summary(path: Path, rows: list[dict[str, object]]) -> None:
    """A summary.csv with every contract column; unspecified metrics are 0."""
    cols = (
        ["scenario", "protocol", "assignor", "static_membership", "seed", "duration_s", "partitions"]
        + compare.METRICS
        + ["events"]
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, cols)
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, 0) for c in cols})


class CompareTest(unittest.TestCase):
    def test_spread_and_difference(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            base = {"scenario": "x", "protocol": "eager", "assignor": "range", "static_membership": "false"}
            write_summary(root / "sim/summary.csv", [dict(base, records_reprocessed=100)])
            for rep, value in [(1, 90), (2, 130), (3, 110)]:
                write_summary(root / f"real/rep{rep}/summary.csv", [dict(base, records_reprocessed=value)])
            with redirect_stdout(io.StringIO()):
                rc = compare.main([str(root / "sim"), str(root / "real"), "--csv", str(root / "out.csv")])
            self.assertEqual(rc, 0)
            with open(root / "out.csv") as f:
                rows = {r["metric"]: r for r in csv.DictReader(f)}
            r = rows["records_reprocessed"]
            # reps 90, 130, 110: min 90, median 110, max 130; diff = 110 - 100 = 10; rel = 0.1.
            self.assertEqual(
                (float(r["real_min"]), float(r["real_median"]), float(r["real_max"])), (90.0, 110.0, 130.0)
            )
            self.assertEqual((float(r["diff"]), float(r["rel_diff"]), r["n"]), (10.0, 0.1, "3"))

    def test_missing_input_is_exit_2(self) -> None:
        with tempfile.TemporaryDirectory() as tmp, redirect_stdout(io.StringIO()):
            self.assertEqual(compare.main([tmp, tmp]), 2)


class MatrixTest(unittest.TestCase):
    def test_inside_and_counts(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            cell = Path(tmp) / "java" / "crash" / "eager_range"
            base = {"scenario": "x", "protocol": "eager", "assignor": "range", "static_membership": "false"}
            write_summary(cell / "sim/summary.csv", [dict(base, records_reprocessed=100, rebalances=3)])
            for rep, (rp, rb) in enumerate([(90, 4), (130, 4), (110, 5)], 1):
                write_summary(cell / f"rep{rep}/summary.csv", [dict(base, records_reprocessed=rp, rebalances=rb)])
            rows = {r.metric: r for r in compare.matrix_rows(Path(tmp))}
            # reprocessed: sim 100 in [90, 130]; rebalances: sim 3 outside [4, 5]; the other six
            # headline metrics are 0 everywhere, so inside.
            rp, rb = rows["records_reprocessed"], rows["rebalances"]
            self.assertEqual((rp.real_min, rp.real_median, rp.real_max, rp.inside()), (90.0, 110.0, 130.0, True))
            self.assertEqual((rb.real_min, rb.real_max, rb.inside()), (4.0, 5.0, False))
            counts = compare.inside_counts(list(rows.values()))
            self.assertEqual(counts, {("java", "eager:range"): (len(compare.HEADLINE) - 1, len(compare.HEADLINE))})


if __name__ == "__main__":
    unittest.main()
