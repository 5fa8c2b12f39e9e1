#!/usr/bin/env bash
# Regenerates every committed result in results/ from the files in sims/ (release build):
# each scenario in sims/*.toml with its charts into results/<name>/, and each sweep in
# sims/sweeps/ into results/sweeps/<name>/. The outputs are deterministic, so running this on
# an unchanged tree reproduces the committed files byte for byte (only the git commit recorded
# in a sweep's manifest.json follows HEAD).
#
#   scripts/regenerate-results.sh            rewrite results/
#   scripts/regenerate-results.sh --verify   regenerate into a temporary folder and compare
#
# results/real/ holds wall-clock measurements of real clients (scripts/real/); results/perf/
# holds timings. Neither is deterministic, so neither is regenerated here.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mode="${1:-write}"
cargo build --release --locked -q -p rebalance-sim
bin="$root/target/release/rebalance-sim"

if [[ "$mode" == "--verify" ]]; then
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
else
  out="$root/results"
fi

for scenario in sims/*.toml; do
  name="$(basename "$scenario" .toml)"
  "$bin" run "$scenario" --out "$out/$name" --charts > /dev/null
  echo "run   $scenario -> $out/$name"
done
for sweep in sims/sweeps/*.toml; do
  name="$(basename "$sweep" .toml)"
  "$bin" sweep "$sweep" --out "$out/sweeps/$name" --charts > /dev/null 2>&1
  echo "sweep $sweep -> $out/sweeps/$name"
done

if [[ "$mode" == "--verify" ]]; then
  status=0
  for dir in "$out"/*/ "$out"/sweeps/*/; do
    rel="${dir#"$out"/}"
    [[ "$rel" == sweeps/ ]] && continue
    if ! diff -r -q -x manifest.json "$dir" "results/$rel" > /dev/null; then
      echo "differs: results/$rel" >&2
      diff -r -q -x manifest.json "$dir" "results/$rel" >&2 || true
      status=1
    fi
  done
  [[ $status -eq 0 ]] && echo "verify: every regenerated file equals the committed one"
  exit $status
fi
