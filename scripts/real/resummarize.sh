#!/usr/bin/env bash
# Recompute results/real/<scenario>/rep<N>/*.csv from the kept records in
# scripts/real/.runs/<scenario>/rep<N>/ (after a change to the metric code), then the README.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
for raw in "$here"/.runs/*/rep*/; do
  s="$(basename "$(dirname "$raw")")"; rep="$(basename "$raw")"
  "$here/run.sh" summarize "sims/real/$s.toml" "$raw" --out "results/real/$s/$rep" >/dev/null
  echo "summarized $s/$rep"
done
"$here/spread.sh"
