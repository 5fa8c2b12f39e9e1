#!/usr/bin/env bash
# Run a scenario for real: sets up scripts/real/.venv (pinned confluent-kafka from PyPI) on first
# use, then `python -m realrun ARGS...`, e.g.
#   scripts/real/run.sh run sims/real/join.toml --mock --out results/real/join/rep1
#   scripts/real/run.sh run sims/real/join.toml --bootstrap localhost:9092
#   scripts/real/run.sh summarize sims/real/join.toml RAW_DIR --out DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "error: scripts/real needs python3 >= 3.11 (tomllib); found: $(python3 --version 2>&1)" >&2
  exit 2
fi
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c 'import confluent_kafka' 2>/dev/null; then
  python3 -m venv "$venv"
  timeout 300 "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
fi
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
exec "$venv/bin/python" -m realrun "$@"
