#!/usr/bin/env bash
# CI of the Python package, on a fresh machine: a venv in python/.venv (git-ignored), the
# packages of requirements-ci.txt from PyPI, fmt and clippy of the extension crate, then
# `pip install ./python` (maturin builds the extension: Cargo.toml's release profile, no LTO)
# and pytest of python/tests, which also runs examples/sweep_plot.py. pytest's exit 5 (no test
# collected) counts as a failure.
#
# The tests compare with the `rebalance-sim` binary named by REBALANCE_SIM_BIN (.ci/run passes
# its release build); without it this script builds the debug binary of this checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
started_s=$SECONDS
venv=python/.venv

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r python/requirements-ci.txt
# The build backend calls the `maturin` executable of the venv by name.
export PATH="$PWD/$venv/bin:$PATH"

if [ -z "${REBALANCE_SIM_BIN:-}" ]; then
    cargo build --locked -p rebalance-sim
    REBALANCE_SIM_BIN="$PWD/target/debug/rebalance-sim"
fi
export REBALANCE_SIM_BIN

# The extension crate is not a member of the main workspace: its own format and lint checks.
cargo fmt --manifest-path python/Cargo.toml -- --check
PYO3_PYTHON="$PWD/$venv/bin/python" cargo clippy --manifest-path python/Cargo.toml --locked --all-targets -- -D warnings

build_started_s=$SECONDS
# maturin is in the venv already: no isolated build environment to download again.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-build-isolation ./python
echo "python/ci.sh: pip install ./python took $((SECONDS - build_started_s)) s"

set +e
# From the root, not python/: there `import rebalance_sim` would find the source folder (no
# compiled module in it) before the installed package.
"$venv/bin/pytest" -q -p no:cacheprovider python/tests
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "python/ci.sh: pytest collected no test" >&2
    exit 1
fi
echo "python/ci.sh: $((SECONDS - started_s)) s in all, pytest exit $status"
exit "$status"
