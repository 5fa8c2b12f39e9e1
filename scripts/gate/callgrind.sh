#!/usr/bin/env bash
# The instruction-count gate of a change that must not cost speed (issue 23): callgrind counts
# of the whole process (reading the scenario, the run, writing the CSV files) for two cuts of
# the 1,000-member reference (sims/bench/), both `--protocol eager:range`:
#   restart-240s      the constant-rate reference, 240 s, its rolling restart moved to 60 s
#                     (the cut of scripts/gate/same-outputs.sh)
#   stochastic-13s    the stochastic reference, 13 s of steady state (no events)
# Instruction counts are exact and do not depend on the machine's load; callgrind runs about
# 50 times slower than the binary alone (the 240 s cut: minutes).
#
#   scripts/gate/callgrind.sh BIN [--keep DIR]
#
# Prints one line per cut: `CUT INSTRUCTIONS` (the `ct` total of callgrind_annotate), then the
# callgrind files are removed unless --keep DIR keeps them (DIR/callgrind.CUT.out).
# Runs from the repository's root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[[ $# -ge 1 ]] || { echo "usage: $0 BIN [--keep DIR]" >&2; exit 2; }
bin="$(realpath "$1")"; shift
keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --keep) keep="$2"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ -x "$bin" ]] || { echo "$bin: not an executable" >&2; exit 2; }
command -v valgrind > /dev/null || { echo "valgrind not found" >&2; exit 2; }
work="${keep:-$(mktemp -d)}"
mkdir -p "$work/inputs"
[[ -n "$keep" ]] || trap 'rm -rf "$work"' EXIT

# The cuts of the reference, as files (scripts/gate/cuts.sh).
source scripts/gate/cuts.sh  # (the working folder is the repository root here)
reference_cut sims/bench/large-rolling-restart.toml restart-240s 240s 60s "$work/inputs" 175ms
reference_cut sims/bench/large-rolling-restart-stochastic.toml stochastic-13s 13s none "$work/inputs"

for name in restart-240s stochastic-13s; do
  profile="$work/callgrind.$name.out"
  valgrind --tool=callgrind --callgrind-out-file="$profile" \
    "$bin" run "$work/inputs/$name.toml" --protocol eager:range --out "$work/out-$name" \
    > "$work/$name.stdout" 2> "$work/$name.valgrind"
  # callgrind_annotate's header: "<count> (100.0%)  PROGRAM TOTALS" (older: "<count>  PROGRAM TOTALS").
  total=$(callgrind_annotate "$profile" 2> /dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
  [[ -n "$total" ]] || { echo "$name: no total in $profile" >&2; exit 1; }
  echo "$name $total"
done
