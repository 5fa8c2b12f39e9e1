"""`rebalance_sim.validate` raises with exactly the text `rebalance-sim validate` prints."""

from __future__ import annotations

import warnings

import pytest

import rebalance_sim
from conftest import cli
from test_run import BROKEN


def test_a_broken_file_raises_the_cli_message(binary, tmp_path):
    broken = tmp_path / "broken.toml"
    broken.write_text(BROKEN)
    done = cli(binary, "validate", str(broken))
    assert done.returncode == 2
    assert done.stdout == ""
    with pytest.raises(rebalance_sim.ScenarioError) as raised:
        rebalance_sim.validate(str(broken))
    message = str(raised.value)
    assert message == done.stderr.rstrip("\n")
    lines = message.split("\n")
    assert len(lines) >= 3
    assert all(line.startswith(f"error: {broken}:") for line in lines), lines


def test_broken_text_names_the_string(tmp_path):
    with pytest.raises(ValueError) as raised:
        rebalance_sim.validate(BROKEN)
    assert str(raised.value).startswith(f"error: {rebalance_sim.TEXT_SOURCE_NAME}:")


def test_a_missing_file_raises_the_cli_message(binary, tmp_path):
    missing = tmp_path / "nowhere.toml"
    done = cli(binary, "validate", str(missing))
    assert done.returncode == 2
    with pytest.raises(rebalance_sim.ScenarioError) as raised:
        rebalance_sim.validate(missing)
    assert str(raised.value) == done.stderr.rstrip("\n")


def test_a_valid_file_gives_the_cli_facts_and_warnings(repo, binary, tmp_path):
    text = (repo / "sims/crash.toml").read_text()
    odd = text.replace("[consumer.config]\n", '[consumer.config]\n"group.instance.id" = "x"\n')
    assert odd != text
    path = tmp_path / "odd.toml"
    path.write_text(odd)
    done = cli(binary, "validate", str(path))
    assert done.returncode == 0, done.stderr
    with warnings.catch_warnings(record=True) as issued:
        warnings.simplefilter("always")
        found = rebalance_sim.validate(path)
    assert f"ok {path} ({len(found.protocols)} protocols, {found.events} events)\n" == done.stdout
    assert found.warnings == done.stderr.splitlines()
    assert len(found.warnings) >= 1
    assert [str(w.message) for w in issued] == found.warnings
    assert found.name == "crash"
