"""`rebalance_sim.sweep` runs every run of the grid and writes the binary's runs.csv."""

from __future__ import annotations

import math
import tomllib

import pytest

import rebalance_sim
from conftest import cli

SWEEP = "sims/sweeps/session-timeout-vs-protocol.toml"


def expected_runs(path, seeds):
    sweep = tomllib.loads(path.read_text())
    cells = math.prod(len(values) for values in sweep["grid"].values())
    return cells, cells * len(sweep["protocols"]) * seeds


def test_sweep_has_every_run_and_the_binary_bytes(repo, binary, tmp_path):
    cells, runs = expected_runs(repo / SWEEP, seeds=2)
    result = rebalance_sim.sweep(repo / SWEEP, seeds=2, jobs=2)
    assert len(result.runs) == runs
    assert result.runs.groupby("cell").size().tolist() == [runs // cells] * cells
    assert len(result.aggregate) == runs // 2
    assert (result.aggregate["runs"] == 2).all()
    done = cli(binary, "sweep", str(repo / SWEEP), "--seeds", "2", "--jobs", "2", "--out", str(tmp_path / "bin"))
    assert done.returncode == 0, done.stderr
    for name in ["runs.csv", "aggregate.csv"]:
        assert result.csv[name] == (tmp_path / "bin" / name).read_bytes(), name


def test_sweep_into_a_folder_keeps_its_files(repo, tmp_path):
    out = tmp_path / "kept"
    result = rebalance_sim.sweep(repo / SWEEP, seeds=1, jobs=1, out=out)
    assert (out / "runs.csv").read_bytes() == result.csv["runs.csv"]
    assert len(list((out / "cells").iterdir())) == expected_runs(repo / SWEEP, seeds=1)[0]
    assert result.resumed == 0


def test_bad_sweep_arguments_raise_the_cli_message(repo, binary, tmp_path):
    for args, kwargs in [(["--seeds", "0"], {"seeds": 0}), (["--jobs", "0"], {"jobs": 0})]:
        done = cli(binary, "sweep", str(repo / SWEEP), *args, "--out", str(tmp_path / "bin"))
        assert done.returncode == 2
        with pytest.raises(rebalance_sim.ScenarioError) as raised:
            rebalance_sim.sweep(repo / SWEEP, **kwargs)
        assert str(raised.value) == done.stderr.rstrip("\n")
