"""Shared fixtures: the repository root and the `rebalance-sim` binary the tests compare with.

The binary is the one `REBALANCE_SIM_BIN` names (python/ci.sh sets it: the release binary that
.ci/run has just built, or a debug build of this checkout); without it the comparisons fail
instead of passing against nothing.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def binary() -> Path:
    named = os.environ.get("REBALANCE_SIM_BIN")
    if not named:
        pytest.fail("set REBALANCE_SIM_BIN to the rebalance-sim binary of this checkout (python/ci.sh does)")
    path = Path(named).resolve()
    if not os.access(path, os.X_OK):
        pytest.fail(f"REBALANCE_SIM_BIN={named}: not an executable file")
    return path


def cli(binary: Path, *args: str) -> subprocess.CompletedProcess:
    """Runs the binary from the repository root and captures its output as text."""
    return subprocess.run([str(binary), *args], cwd=REPO, capture_output=True, text=True, timeout=600)
