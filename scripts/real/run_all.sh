#!/usr/bin/env bash
# The committed measurements: every sims/real scenario on the mock cluster, REPS times (default 3),
# one run at a time (modest load), into results/real/<scenario>/rep<N>/; records are kept in
# scripts/real/.runs/<scenario>/rep<N>/ (not committed). Then results/real/README.md is rebuilt.
#   scripts/real/run_all.sh [REPS] [SCENARIO...]     (SCENARIO = file stem, e.g. crash)
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
reps="${1:-3}"; shift || true
scenarios=("$@")
[[ ${#scenarios[@]} -gt 0 ]] || scenarios=(join leave crash stall-join stall-maxpoll)
cd "$root"
for rep in $(seq 1 "$reps"); do
  for s in "${scenarios[@]}"; do
    echo "== $(date -u +%H:%M:%S) $s rep$rep"
    rm -rf "$here/.runs/$s/rep$rep"
    timeout --foreground 900 "$here/run.sh" run "sims/real/$s.toml" --mock --out "results/real/$s/rep$rep" \
      --raw "$here/.runs/$s/rep$rep" 2>&1 | grep -v '^%' || echo "!! $s rep$rep failed"
  done
done
"$here/spread.sh"
