"""Issue 27 item 9: the package applies the CLI's checks where the same input reaches it.

Each case gives the binary and the package the same input and compares the exception (type and
message) with the CLI's stderr, or the warnings with its ``warning:`` lines.
"""

from __future__ import annotations

import os
import subprocess
import warnings

import pytest

import rebalance_sim
from conftest import REPO, cli

SWEEP = "sims/sweeps/session-timeout-vs-protocol.toml"

BASE = """duration = "20s"
protocols = ["eager"]
[[topic]]
name = "t"
partitions = 2
rate = 1.0
[group]
members = 2
"""


def cli_env(binary, env, *args):
    """The binary with extra environment variables."""
    return subprocess.run([str(binary), *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600, env={**os.environ, **env})


def test_a_repeated_protocol_raises_the_cli_message(repo, binary, tmp_path):
    crash = str(repo / "sims/crash.toml")
    done = cli(binary, "run", crash, "--protocol", "eager", "--protocol", "eager",
               "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "repeats eager" in done.stderr
    with pytest.raises(rebalance_sim.ScenarioError) as raised:
        rebalance_sim.run(crash, protocols=["eager", "eager"])
    assert str(raised.value) == done.stderr.rstrip("\n")


def test_run_warns_what_the_cli_warns(binary, tmp_path):
    empty = tmp_path / "empty.toml"
    empty.write_text(BASE.replace("members = 2", "members = 0"))
    done = cli(binary, "run", str(empty), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    expected = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert any("no member ever joins" in line for line in expected), done.stderr
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = rebalance_sim.run(str(empty))
    assert result.warnings == expected
    assert [str(w.message) for w in caught] == expected
    assert all(w.category is UserWarning for w in caught)


BIG = BASE.replace("partitions = 2", "partitions = 1000000").replace('"20s"', '"1h"')


@pytest.mark.parametrize("command", ["run", "validate"])
def test_the_memory_budget_refuses_as_the_cli(binary, tmp_path, monkeypatch, command):
    big = tmp_path / "big.toml"
    big.write_text(BIG)
    env = {"REBALANCE_SIM_MEMORY_BUDGET_MB": "1"}
    args = [command, str(big)] + (["--out", str(tmp_path / "out")] if command == "run" else [])
    done = cli_env(binary, env, *args)
    assert done.returncode == 2, done.stderr
    assert "the run is estimated to need" in done.stderr
    monkeypatch.setenv("REBALANCE_SIM_MEMORY_BUDGET_MB", "1")
    with pytest.raises(rebalance_sim.ScenarioError) as raised:
        getattr(rebalance_sim, command)(str(big))
    assert str(raised.value) == done.stderr.rstrip("\n")


def test_a_bad_memory_budget_variable_raises_the_cli_message(binary, tmp_path, monkeypatch):
    small = tmp_path / "small.toml"
    small.write_text(BASE)
    done = cli_env(binary, {"REBALANCE_SIM_MEMORY_BUDGET_MB": "lots"}, "validate", str(small))
    assert done.returncode == 2
    assert "REBALANCE_SIM_MEMORY_BUDGET_MB = `lots`" in done.stderr
    monkeypatch.setenv("REBALANCE_SIM_MEMORY_BUDGET_MB", "lots")
    with pytest.raises(rebalance_sim.ScenarioError) as raised:
        rebalance_sim.validate(str(small))
    assert str(raised.value) == done.stderr.rstrip("\n")


def test_a_long_name_raises_the_cli_message(binary, tmp_path):
    named = tmp_path / "named.toml"
    named.write_text('name = "' + "n" * 201 + '"\n' + BASE)
    done = cli(binary, "validate", str(named))
    assert done.returncode == 2
    with pytest.raises(rebalance_sim.ScenarioError) as raised:
        rebalance_sim.validate(str(named))
    assert str(raised.value) == done.stderr.rstrip("\n")


@pytest.mark.parametrize("option,value", [("jobs", 1000), ("seeds", 100_001)])
def test_sweep_limits_raise_the_cli_message(repo, binary, tmp_path, option, value):
    done = cli(binary, "sweep", SWEEP, f"--{option}", str(value), "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr
    with pytest.raises(rebalance_sim.ScenarioError) as raised:
        rebalance_sim.sweep(str(repo / SWEEP), **{option: value})
    assert str(raised.value).replace(str(repo) + "/", "") == done.stderr.rstrip("\n")
