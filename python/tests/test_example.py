"""examples/sweep_plot.py runs a sweep and writes its PNG where it says it did."""

from __future__ import annotations

import struct
import subprocess
import sys


def png_size(data: bytes):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_the_example_writes_its_png(repo, tmp_path):
    out = tmp_path / "plot.png"
    done = subprocess.run(
        [sys.executable, str(repo / "examples/sweep_plot.py"), "--seeds", "2", "--out", str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"wrote {out}\n"
    assert png_size(out.read_bytes()) == (800, 500)  # figsize 8 x 5 in at 100 dpi
    assert out.stat().st_size > 20_000  # axes, five lines and their bands, not an empty canvas


def test_the_example_rejects_an_unknown_metric(repo, tmp_path):
    done = subprocess.run(
        [sys.executable, str(repo / "examples/sweep_plot.py"), "--seeds", "1", "--metric", "colour",
         "--out", str(tmp_path / "x.png")],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 2
    assert "error: --metric colour: not a metric of aggregate.csv; allowed: records_produced" in done.stderr
    assert not (tmp_path / "x.png").exists()
