#!/usr/bin/env bash
# The hour of the reference (sims/bench/large-rolling-restart.toml, as scripts/perf-reference.sh
# runs it: one process per protocol, `run FILE --protocol P --timing`) with two builds
# alternated, ROUNDS times (default 2): base, new, base, new, ... for each protocol in turn, so
# a change of the machine's load falls on both builds alike. Prints one row per run:
#   build,protocol,wall_s,user_s,run_s
# (`run_s`: the protocol run alone, from --timing). Timings depend on the machine and its load.
#
#   scripts/gate/hour-alternated.sh BASE_BIN NEW_BIN [ROUNDS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[[ $# -ge 2 ]] || { echo "usage: $0 BASE_BIN NEW_BIN [ROUNDS]" >&2; exit 2; }
base="$(realpath "$1")"; new="$(realpath "$2")"; rounds="${3:-2}"
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || { echo "ROUNDS: a number from 1 to 99, not $rounds" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
scenario=sims/bench/large-rolling-restart.toml
echo "build,protocol,wall_s,user_s,run_s"
for p in eager:range cooperative:cooperative-sticky consumer:uniform; do
  for ((round = 0; round < rounds; round++)); do
    for build in base new; do
      bin="$base"; [[ $build == new ]] && bin="$new"
      /usr/bin/time -f '%e %U' -o "$work/time" "$bin" run "$scenario" --protocol "$p" \
        --out "$work/out" --timing > /dev/null 2> "$work/timing"
      read -r wall user < "$work/time"
      run_s=$(sed -n 's/^timing: [^ ]*: \([0-9.]*\) s wall.*/\1/p' "$work/timing")
      echo "$build,$p,$wall,$user,$run_s"
    done
  done
done
