"""rebalance-sim from Python: run a scenario, run a sweep, validate a file.

The simulator is the Rust library the ``rebalance-sim`` binary uses (compiled into
``rebalance_sim._native``); its tables are written by the binary's own CSV writer and loaded
with pandas, so ``result.csv["summary.csv"]`` holds exactly the bytes ``rebalance-sim run``
writes for the same scenario, seed and protocols, and ``result.summary`` is
``pandas.read_csv`` of them.

    import rebalance_sim
    result = rebalance_sim.run("sims/crash.toml", seed=7, protocols=["eager:range"])
    print(result.summary[["protocol", "downtime_partition_s"]])

Bad input raises :class:`ScenarioError` (a ``ValueError``) whose message is what the CLI
prints on stderr for the same input (``error: FILE:LINE:COL: KEY: ...``, one line per problem).
The simulator runs with the GIL released, so other Python threads go on meanwhile.
"""

from __future__ import annotations

import io
import os
import warnings as _warnings
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Union

import pandas as pd

from . import _native
from ._native import ScenarioError

__all__ = [
    "run",
    "sweep",
    "validate",
    "RunResult",
    "SweepResult",
    "Validated",
    "ScenarioError",
    "TEXT_SOURCE_NAME",
    "VERSION",
    "__version__",
]

#: ``<package version> (<git commit>)`` of the simulator compiled in, as ``--version`` prints.
VERSION: str = _native.VERSION
__version__: str = VERSION.split(" ")[0]
#: How a scenario given as TOML text is named in messages (and its default ``name``).
TEXT_SOURCE_NAME: str = _native.TEXT_SOURCE_NAME

PathOrToml = Union[str, "os.PathLike[str]"]


def _source(scenario: PathOrToml) -> Dict[str, str]:
    """A path-like or a one-line string is a file path; a string with a newline is TOML text."""
    if isinstance(scenario, os.PathLike):
        return {"path": os.fspath(scenario)}
    if not isinstance(scenario, str):
        raise TypeError(f"scenario: expected a path or TOML text, got {type(scenario).__name__}")
    if "\n" in scenario:
        return {"text": scenario}
    return {"path": scenario}


def _frame(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data))


def _warn(lines: Sequence[str]) -> None:
    for line in lines:
        _warnings.warn(line, UserWarning, stacklevel=3)


@dataclass(frozen=True)
class RunResult:
    """The five tables of one ``run`` (DESIGN section 7), as pandas data frames.

    ``csv`` maps each file name (``summary.csv``, ...) to the exact bytes the CLI writes.
    """

    summary: pd.DataFrame
    partitions: pd.DataFrame
    rebalances: pd.DataFrame
    ownership: pd.DataFrame
    timeline: pd.DataFrame
    csv: Dict[str, bytes] = field(repr=False)
    #: The CLI's ``warning: FILE: ...`` lines for the run (also issued with ``warnings.warn``).
    warnings: List[str] = field(default_factory=list)

    def write(self, folder: PathOrToml) -> None:
        """Writes the five CSV files into ``folder`` (created if missing), byte for byte."""
        os.makedirs(folder, exist_ok=True)
        for name, data in self.csv.items():
            with open(os.path.join(folder, name), "wb") as out:
                out.write(data)


@dataclass(frozen=True)
class SweepResult:
    """A sweep's ``runs.csv`` (one row per run) and ``aggregate.csv`` (per cell and protocol)."""

    runs: pd.DataFrame
    aggregate: pd.DataFrame
    csv: Dict[str, bytes] = field(repr=False)
    #: Runs resumed from the journal of ``out`` (0 without ``out``).
    resumed: int = 0


@dataclass(frozen=True)
class Validated:
    """A valid scenario: its name, protocols, number of events and the CLI's warnings."""

    name: str
    protocols: List[str]
    events: int
    warnings: List[str]


def run(
    scenario: PathOrToml,
    seed: Optional[int] = None,
    protocols: Sequence[str] = (),
    jobs: Optional[int] = None,
) -> RunResult:
    """Runs ``scenario`` once per protocol, as ``rebalance-sim run SCENARIO [--jobs N]``.

    ``scenario`` is a file path or TOML text (any string with a newline). ``seed`` defaults to
    the file's ``seed``; ``protocols`` (``"eager:range"``, ``"cooperative"``, ...) to the file's
    list, whose protocols not modeled yet are skipped with a warning, as the CLI does. ``jobs``
    protocol runs go at once (default: the machine's cores, fewer if the memory budget needs
    it); the tables are the same for any value.
    """
    if isinstance(protocols, str):
        protocols = [protocols]
    files, warning_lines = _native.run(
        **_source(scenario), seed=seed, protocols=list(protocols), jobs=jobs
    )
    _warn(warning_lines)
    tables = {name[: -len(".csv")]: _frame(data) for name, data in files.items()}
    return RunResult(csv=dict(files), warnings=list(warning_lines), **tables)


def sweep(
    path: PathOrToml,
    seeds: Optional[int] = None,
    jobs: Optional[int] = None,
    out: Optional[PathOrToml] = None,
) -> SweepResult:
    """Runs a sweep file, as ``rebalance-sim sweep FILE [--seeds N] [--jobs N] [--out DIR]``.

    ``seeds`` overrides the file's replications; ``jobs`` defaults to the machine's cores.
    Without ``out`` the sweep runs in a temporary folder; with it the folder keeps every file
    (``cells/``, ``manifest.json``) and a sweep started again there resumes from its journal.
    """
    out_path = None if out is None else os.fspath(out)
    files, _runs, resumed = _native.sweep(os.fspath(path), seeds=seeds, jobs=jobs, out=out_path)
    return SweepResult(
        runs=_frame(files["runs.csv"]),
        aggregate=_frame(files["aggregate.csv"]),
        csv=dict(files),
        resumed=resumed,
    )


def validate(scenario: PathOrToml) -> Validated:
    """Checks a scenario without running it, as ``rebalance-sim validate FILE``.

    Raises :class:`ScenarioError` with the CLI's error lines; warnings of a valid file are
    returned (and issued as ``UserWarning``).
    """
    name, protocols, events, warning_lines = _native.validate(**_source(scenario))
    _warn(warning_lines)
    return Validated(name=name, protocols=list(protocols), events=events, warnings=list(warning_lines))
