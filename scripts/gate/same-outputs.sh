#!/usr/bin/env bash
# The byte-identical gate of a change that must not alter outputs (a refactoring, a speed-up):
# runs the same inputs with two builds and compares every file they write and every table they
# print. The inputs: every scenario in sims/*.toml and sims/real/*.toml (their own protocols),
# every sweep in sims/sweeps/ (with --sweeps), and three cuts of the 1,000-member reference
# (sims/bench/), all with three protocols:
#   restart-240s      the constant-rate reference, 240 s, its rolling restart moved to 60 s
#   stochastic-20s    the stochastic reference, 20 s of steady state (no events)
#   stochastic-60s    the stochastic reference, 60 s, its rolling restart moved to 20 s
#
#   scripts/gate/same-outputs.sh BEFORE_BIN AFTER_BIN [--sweeps] [--keep DIR]
#
# Exit 0 when every output is byte-identical ("same: N runs, M files"), 1 with the differing
# files listed otherwise. Runs from the repository's root; writes to a temporary folder.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[[ $# -ge 2 ]] || { echo "usage: $0 BEFORE_BIN AFTER_BIN [--sweeps] [--keep DIR]" >&2; exit 2; }
before="$(realpath "$1")"; after="$(realpath "$2")"; shift 2
sweeps=""; keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sweeps) sweeps=1 ;;
    --keep) keep="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
work="${keep:-$(mktemp -d)}"
mkdir -p "$work/inputs"
[[ -n "$keep" ]] || trap 'rm -rf "$work"' EXIT

# The cuts of the reference, as files (scripts/gate/cuts.sh).
source scripts/gate/cuts.sh  # (the working folder is the repository root here)
reference_cut sims/bench/large-rolling-restart.toml restart-240s 240s 60s "$work/inputs" 175ms
reference_cut sims/bench/large-rolling-restart-stochastic.toml stochastic-20s 20s none "$work/inputs"
reference_cut sims/bench/large-rolling-restart-stochastic.toml stochastic-60s 60s 20s "$work/inputs" 35ms

inputs=("$PWD"/sims/*.toml "$PWD"/sims/real/*.toml "$work"/inputs/*.toml)
sweep_files=("$PWD"/sims/sweeps/*.toml)
runs=0
for side in before after; do
  bin="$before"; [[ $side == after ]] && bin="$after"
  mkdir -p "$work/$side"
  for scenario in "${inputs[@]}"; do
    name="$(basename "$(dirname "$scenario")")-$(basename "$scenario" .toml)"
    # Relative --out from the side's own folder: the printed paths are the same for both.
    (cd "$work/$side" && "$bin" run "$scenario" --out "$name" > "$name.stdout" 2>&1) \
      || echo "exit $?" >> "$work/$side/$name.stdout"
    [[ $side == before ]] && runs=$((runs + 1))
  done
  if [[ -n "$sweeps" ]]; then
    for sweep in "${sweep_files[@]}"; do
      name="sweep-$(basename "$sweep" .toml)"
      "$bin" sweep "$sweep" --out "$work/$side/$name" --jobs 2 > "$work/$side/$name.stdout" 2>/dev/null \
        || echo "exit $?" >> "$work/$side/$name.stdout"
      [[ $side == before ]] && runs=$((runs + 1))
    done
  fi
done
files=$(find "$work/before" -type f ! -name manifest.json | wc -l)
if diff -r -q -x manifest.json "$work/before" "$work/after"; then
  echo "same: $runs runs, $files files byte-identical"
else
  echo "DIFFERENT (above); outputs kept in $work" >&2
  trap - EXIT
  exit 1
fi
