"""`rebalance_sim.run` gives the binary's files byte for byte, and the CLI's error messages."""

from __future__ import annotations

import os
import threading
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest

import rebalance_sim
from conftest import cli

RUN_FILES = ["summary.csv", "partitions.csv", "rebalances.csv", "ownership.csv", "timeline.csv"]


def binary_run(binary: Path, out: Path, *args: str) -> dict:
    done = cli(binary, "run", *args, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(RUN_FILES)
    return {name: (out / name).read_bytes() for name in RUN_FILES}


def test_crash_matches_the_binary_byte_for_byte(repo, binary, tmp_path):
    crash = str(repo / "sims/crash.toml")
    expected = binary_run(binary, tmp_path / "bin", crash)
    result = rebalance_sim.run(crash)
    assert list(result.csv) == RUN_FILES
    for name in RUN_FILES:
        assert result.csv[name] == expected[name], name
    # The frames are pandas' reading of those bytes, one row per protocol run in the summary.
    for name in RUN_FILES:
        frame = getattr(result, name[: -len(".csv")])
        pd.testing.assert_frame_equal(frame, pd.read_csv(tmp_path / "bin" / name))
    labels = [f"{p}:{a}" + ("+static" if s else "") for p, a, s in
              zip(result.summary.protocol, result.summary.assignor, result.summary.static_membership)]
    assert labels == rebalance_sim.validate(crash).protocols
    assert (result.summary.seed == 1).all()
    assert len(result.ownership) > len(result.summary)
    result.write(tmp_path / "py")
    assert {p.name: p.read_bytes() for p in (tmp_path / "py").iterdir()} == expected


def test_crash_matches_the_committed_baseline(repo):
    """results/crash/ is the binary's output that `rebalance-sim check` re-runs in CI."""
    result = rebalance_sim.run(str(repo / "sims/crash.toml"))
    assert result.csv["summary.csv"] == (repo / "results/crash/summary.csv").read_bytes()


def test_seed_and_protocols_match_the_binary(repo, binary, tmp_path):
    crash = str(repo / "sims/crash.toml")
    protocols = ["eager:sticky", "cooperative", "consumer:range"]
    cli_args = [arg for p in protocols for arg in ("--protocol", p)]
    expected = binary_run(binary, tmp_path / "bin", crash, "--seed", "7", *cli_args)
    result = rebalance_sim.run(crash, seed=7, protocols=protocols)
    assert result.csv == expected
    assert list(result.summary.seed) == [7, 7, 7]
    assert list(result.summary.assignor) == ["sticky", "cooperative-sticky", "range"]
    other_seed = rebalance_sim.run(crash, seed=8, protocols=protocols)
    assert other_seed.csv["ownership.csv"] != result.csv["ownership.csv"]


def test_toml_text_runs_as_the_file(repo):
    crash = repo / "sims/crash.toml"
    text = crash.read_text()
    assert rebalance_sim.run(text, protocols=["eager"]).csv == rebalance_sim.run(str(crash), protocols=["eager"]).csv
    unnamed = text.replace('name = "crash"\n', "")
    assert unnamed != text
    summary = rebalance_sim.run(unnamed, protocols=["eager"]).summary
    assert list(summary.scenario) == [rebalance_sim.TEXT_SOURCE_NAME]


BROKEN = """\
name = "broken"
duration = "5 parsecs"
protocols = ["eager:range", "lazy"]

[[topic]]
name = "orders"
partitions = 0
rate = 10.0

[group]
members = 3
colour = "blue"
"""


def test_a_broken_file_raises_the_cli_message(binary, tmp_path):
    broken = tmp_path / "broken.toml"
    broken.write_text(BROKEN)
    done = cli(binary, "run", str(broken), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.count("error: ") >= 3, done.stderr
    with pytest.raises(rebalance_sim.ScenarioError) as raised:
        rebalance_sim.run(str(broken))
    assert str(raised.value) == done.stderr.rstrip("\n")
    assert isinstance(raised.value, ValueError)
    assert not (tmp_path / "out").exists()


def test_an_unknown_protocol_raises_the_cli_message(repo, binary, tmp_path):
    crash = str(repo / "sims/crash.toml")
    done = cli(binary, "run", crash, "--protocol", "eager", "--protocol", "lazy:cat", "--protocol", "x",
               "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    with pytest.raises(rebalance_sim.ScenarioError) as raised:
        rebalance_sim.run(crash, protocols=["eager", "lazy:cat", "x"])
    assert str(raised.value) == done.stderr.rstrip("\n")
    assert str(raised.value).count("\n") == 1  # one line per bad --protocol


def test_jobs_give_the_bytes_of_one_run_at_a_time(repo, binary, tmp_path):
    scenario = str(repo / "sims/rolling-restart.toml")
    expected = binary_run(binary, tmp_path / "bin", scenario, "--jobs", "1")
    assert len(rebalance_sim.validate(scenario).protocols) >= 3
    for jobs in [1, 2, 3, None]:
        result = rebalance_sim.run(scenario, jobs=jobs)
        assert result.csv == expected, f"jobs={jobs}"


def test_bad_jobs_raise_the_cli_message(repo, binary, tmp_path):
    crash = str(repo / "sims/crash.toml")
    for jobs in [0, 257]:
        done = cli(binary, "run", crash, "--jobs", str(jobs), "--out", str(tmp_path / "out"))
        assert done.returncode == 2
        with pytest.raises(rebalance_sim.ScenarioError) as raised:
            rebalance_sim.run(crash, jobs=jobs)
        assert str(raised.value) == done.stderr.rstrip("\n")


THREE_SMALL = """duration = "1s"
protocols = ["eager", "cooperative", "consumer"]
[[topic]]
name = "t"
partitions = 20000
rate = 0.0
[group]
members = 3
"""


def test_a_budget_for_one_run_at_a_time_is_kept_as_the_cli_keeps_it(binary, tmp_path, monkeypatch):
    """The budget of one run (crates/cli/tests/budget.rs: 55 MB for one of THREE_SMALL's runs,
    63 MB for two at once): jobs=2 is refused with the CLI's message; the default (one run per
    core) runs one at a time with the CLI's note, as a warning, and the same files."""
    scenario = tmp_path / "three.toml"
    scenario.write_text(THREE_SMALL)
    monkeypatch.setenv("REBALANCE_SIM_MEMORY_BUDGET_MB", "60")
    refused = cli(binary, "run", str(scenario), "--jobs", "2", "--out", str(tmp_path / "refused"))
    assert refused.returncode == 2
    assert "estimated to need 63 MB" in refused.stderr
    with pytest.raises(rebalance_sim.ScenarioError) as raised:
        rebalance_sim.run(scenario, jobs=2)
    assert str(raised.value) == refused.stderr.rstrip("\n")
    out = tmp_path / "default"
    done = cli(binary, "run", str(scenario), "--out", str(out))
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: ")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = rebalance_sim.run(scenario)
    assert [str(w.message) for w in caught if str(w.message).startswith("note: ")] == notes
    if len(os.sched_getaffinity(0)) > 1:
        assert len(notes) == 1 and "running one protocol run at a time" in notes[0], done.stderr
    assert result.csv == {name: (out / name).read_bytes() for name in RUN_FILES}


def test_the_gil_is_released_during_a_run(repo):
    """Another Python thread runs while the simulator works: ordering, not speed, is checked."""
    scenario = str(repo / "sims/rolling-restart.toml")
    span = {}

    def work():
        span["start"] = time.perf_counter()
        rebalance_sim._native.run(path=scenario, protocols=["eager", "cooperative"])
        span["end"] = time.perf_counter()

    worker = threading.Thread(target=work)
    ticks = []
    worker.start()
    while worker.is_alive() and len(ticks) < 10_000_000:
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    worker.join()
    inside = [t for t in ticks if span["start"] < t < span["end"]]
    # Held GIL: no tick at all between start and end (at most one, if the interpreter switched
    # threads between `start` and the call).
    assert len(inside) >= 2, f"{len(inside)} ticks of the main thread during the {span['end'] - span['start']:.3f} s run"


def test_the_version_is_the_binary_version(binary):
    done = cli(binary, "--version")
    assert done.returncode == 0
    name, version, _commit = done.stdout.split(" ", 2)
    assert name == "rebalance-sim"
    assert rebalance_sim.__version__ == version
    assert rebalance_sim.VERSION.startswith(f"{version} (")
