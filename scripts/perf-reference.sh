#!/usr/bin/env bash
# The reference measurement of issue 8: each protocol of sims/bench/large-rolling-restart.toml
# (1,000 members, 10,000 partitions, 1 million records/s, one hour, rolling restart from minute
# 10) in its own process, with wall time, CPU time, queue events, peak RSS and the protocol
# run's own wall time (`run_s`: without reading the scenario and writing the CSV files).
# Appends to results/perf/reference.csv (with the commit measured) and prints the rows.
#
#   scripts/perf-reference.sh                       # the constant-rate reference, 3 protocols
#   VARIANT=stochastic DURATION=60s scripts/perf-reference.sh   # Poisson/lognormal, shortened
#   PLAIN=1 DURATION=20s scripts/perf-reference.sh  # the same with every step queued
#
# DURATION shortens the run and drops the rolling restart (it starts at minute 10): a shortened
# run is steady state only. Timings depend on the machine and its load.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p rebalance-sim
bin=target/release/rebalance-sim
src=sims/bench/large-rolling-restart.toml
[[ "${VARIANT:-}" == stochastic ]] && src=sims/bench/large-rolling-restart-stochastic.toml
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
scenario="$work/scenario.toml"
sed -e "s/^duration = \"1h\"/duration = \"${DURATION:-1h}\"/" "$src" > "$scenario"
if [[ "${DURATION:-1h}" != 1h ]]; then
  sed -i '/^\[\[event\]\]/,$d' "$scenario"
fi
flags=(--timing)
stepping=fast
if [[ -n "${PLAIN:-}" ]]; then flags+=(--plain); stepping=plain; fi
out=results/perf/reference.csv
[[ -f "$out" ]] || echo "date,variant,duration,stepping,protocol,wall_s,user_s,events,max_rss_kb,run_s,commit" > "$out"
# The build measured (rows before the eleventh session have none: their dates repeat across
# sessions; docs/performance.md says which rows are which).
commit="$(git rev-parse --short=7 HEAD 2>/dev/null || true)"
if [[ -n "$commit" ]] && ! git diff --quiet HEAD -- crates Cargo.toml Cargo.lock 2>/dev/null; then
  commit="$commit+dirty"
fi
for p in eager:range cooperative:cooperative-sticky consumer:uniform; do
  /usr/bin/time -f '%e %U %M' -o "$work/time" "$bin" run "$scenario" --protocol "$p" \
    --out "$work/out" "${flags[@]}" > /dev/null 2> "$work/timing"
  read -r wall user rss < "$work/time"
  events=$(sed -n 's/.* s wall, \([0-9]*\) events.*/\1/p' "$work/timing")
  # The protocol run alone (model and collector), without loading and writing the CSV files.
  run_s=$(sed -n 's/^timing: [^ ]*: \([0-9.]*\) s wall.*/\1/p' "$work/timing")
  row="$(date -u +%F),${VARIANT:-constant},${DURATION:-1h},$stepping,$p,$wall,$user,$events,$rss,$run_s,$commit"
  echo "$row" | tee -a "$out"
done
