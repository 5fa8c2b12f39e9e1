"""`run --format both` and `sweep --format both`: pandas reads each Parquet table equal to the
CSV table of the same run, value for value, with the Parquet file's dtypes (integers int64,
seeds uint64, times float64, names strings, static_membership bool) being what the CSV holds.

The binary is $REBALANCE_SIM_BIN, else target/release/rebalance-sim, else
target/debug/rebalance-sim (CI builds the release binary before pytest).
"""

import os
import pathlib
import subprocess

import pandas as pd
import pandas.testing as pdt
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def binary():
    given = os.environ.get("REBALANCE_SIM_BIN")
    candidates = [pathlib.Path(given)] if given else []
    candidates += [ROOT / "target/release/rebalance-sim", ROOT / "target/debug/rebalance-sim"]
    for path in candidates:
        if path.is_file():
            return str(path)
    pytest.fail("no rebalance-sim binary: build it (cargo build --release) or set REBALANCE_SIM_BIN")


def same_table(folder, name):
    parquet = pd.read_parquet(folder / f"{name}.parquet")
    dtypes = dict(parquet.dtypes)
    floats = [c for c, t in dtypes.items() if t == "float64"]
    # Empty cells: '' in a string column (an unowned interval's owner), NaN in a float column.
    csv = pd.read_csv(
        folder / f"{name}.csv",
        dtype={c: t for c, t in dtypes.items() if t != "bool"},
        keep_default_na=False,
        na_values={c: [""] for c in floats},
    )
    for column, dtype in dtypes.items():
        if dtype == "bool":
            assert set(csv[column].unique()) <= {True, False}, column
            csv[column] = csv[column].astype(bool)
    pdt.assert_frame_equal(parquet, csv, check_exact=True)
    return dtypes


def test_run_tables(tmp_path):
    out = tmp_path / "crash"
    subprocess.run(
        [binary(), "run", str(ROOT / "sims/crash.toml"), "--out", str(out), "--format", "both"],
        check=True,
        capture_output=True,
    )
    summary = same_table(out, "summary")
    assert summary["records_produced"] == "int64"
    assert summary["downtime_partition_s"] == "float64"
    assert pd.api.types.is_string_dtype(summary["protocol"])
    assert summary["seed"] == "uint64"
    assert summary["static_membership"] == "bool"
    for name in ["partitions", "rebalances", "timeline", "ownership"]:
        same_table(out, name)
    ownership = pd.read_parquet(out / "ownership.parquet")
    assert ownership["start_s"].dtype == "float64"
    assert len(ownership) == len(pd.read_csv(out / "ownership.csv"))
    # pandas' own inference agrees on the summary's integer and float columns.
    inferred = pd.read_csv(out / "summary.csv")
    assert inferred["records_produced"].dtype == "int64"
    assert inferred["stop_the_world_s"].dtype == "float64"


def test_sweep_tables(tmp_path):
    out = tmp_path / "sweep"
    sweep = tmp_path / "small.toml"
    sweep.write_text(
        f'name = "small"\nbase = "{ROOT / "sims/crash.toml"}"\nseeds = 2\n'
        'protocols = ["eager:range"]\n\n[grid]\n"consumer.config.session.timeout.ms" = [10000, 30000]\n'
    )
    subprocess.run(
        [binary(), "sweep", str(sweep), "--out", str(out), "--jobs", "1", "--format", "both"],
        check=True,
        capture_output=True,
    )
    runs = same_table(out, "runs")
    assert runs["consumer.config.session.timeout.ms"] == "int64"
    assert runs["replication"] == "int64"
    aggregate = same_table(out, "aggregate")
    assert aggregate["records_lost_mean"] == "float64"
