#!/usr/bin/env bash
# The reference measurement of issue 8: each protocol of sims/bench/large-rolling-restart.toml
# (1,000 members, 10,000 partitions, 1 million records/s, one hour, rolling restart from minute
# 10) in its own process, with wall time, CPU time, queue events, peak RSS and the protocol
# run's own wall time (`run_s`: without reading the scenario and writing the CSV files).
# Appends to results/perf/reference.csv (with the commit measured) and prints the rows.
#
#   scripts/perf-reference.sh                       # the constant-rate reference, its 3 protocols
#   VARIANT=stochastic DURATION=60s scripts/perf-reference.sh   # Poisson/lognormal, shortened
#   VARIANT=deploy scripts/perf-reference.sh        # sims/bench/deploy-stochastic.toml (issue 29)
#   PLAIN=1 DURATION=20s scripts/perf-reference.sh  # the same with every step queued
#   PROTOCOLS="eager:range consumer:uniform" scripts/perf-reference.sh
#
# The floor (issue 29 item 5): before the rows, `crates/sim-core/examples/floor.rs` measures
# on the same machine a binary heap of 24-byte events held at 100,000 pending (pop/push pairs
# per second) and dependent random reads over 256 MiB (memory latency). Each row reports
# `floor_ratio` = wall_s / (events / heap_pairs_per_s): how many times slower than a bare heap
# the run is per queue event, a figure that compares across the machines' 2-4x speed phases.
# `ns_per_record` = run_s / records_processed: for stochastic workloads, where every record's
# arrival and processing time is drawn, the figure to hold against the draws alone. A
# stochastic or deploy row measures them beside it (issue 29 goal 1, its criterion bench's
# loop: `crates/lab/examples/draw_floor.rs` on the scenario's own distributions, the same
# build, the same phase) and reports `draw_ns_per_record` and `draw_ratio` = ns_per_record /
# draw_ns_per_record: how many times its draws a record of the run costs (goal: 2). There
# `floor_ratio` says little: fast stepping runs most steps aside, off the queue it counts.
#
# DURATION shortens the run and drops the events (the reference's rolling restart starts at
# minute 10): a shortened run is steady state only. Timings depend on the machine and its load.
set -euo pipefail
cd "$(dirname "$0")/.."
# With BIN the binary measured is another build's: the working tree's is not built (an edit in
# progress would otherwise cost a release build before every measurement).
if [[ -z "${BIN:-}" ]]; then
  cargo build --release --locked -q -p rebalance-sim
fi
cargo build --release --locked -q -p sim-core --example floor
cargo build --release --locked -q -p lab --example draw_floor
case "${VARIANT:-constant}" in
  constant) src=sims/bench/large-rolling-restart.toml ;;
  stochastic) src=sims/bench/large-rolling-restart-stochastic.toml ;;
  deploy) src=sims/bench/deploy-stochastic.toml ;;
  *) echo "perf-reference.sh: VARIANT must be constant, stochastic or deploy" >&2; exit 2 ;;
esac
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Copies, so a build during the measurement does not change what is measured; BIN measures
# another build (e.g. an earlier commit's, to alternate the two).
bin="$work/rebalance-sim"
cp "${BIN:-target/release/rebalance-sim}" "$bin"
cp target/release/examples/floor "$work/floor"
cp target/release/examples/draw_floor "$work/draw_floor"
scenario="$work/scenario.toml"
cp "$src" "$scenario"
if [[ -n "${DURATION:-}" ]]; then
  sed -i -e "s/^duration = \".*\"/duration = \"$DURATION\"/" -e '/^\[\[event\]\]/,$d' "$scenario"
fi
flags=(--timing)
stepping=fast
if [[ -n "${PLAIN:-}" ]]; then flags+=(--plain); stepping=plain; fi
# By default the scenario's own protocols (its one-line `protocols = [...]`).
scenario_protocols="$(sed -n 's/^protocols = \[\(.*\)\]$/\1/p' "$src" | tr -d '",')"
protocols="${PROTOCOLS:-$scenario_protocols}"
if [[ -z "$protocols" ]]; then
  echo "perf-reference.sh: $src has no one-line protocols = [...]; set PROTOCOLS" >&2
  exit 2
fi
out=results/perf/reference.csv
header="date,variant,duration,stepping,protocol,wall_s,user_s,events,max_rss_kb,run_s,commit"
header+=",heap_pairs_per_s,mem_latency_ns,floor_ratio,records_processed,ns_per_record"
header+=",draw_ns_per_record,draw_ratio"
[[ -f "$out" ]] || echo "$header" > "$out"
# The build measured (rows before the eleventh session have none: their dates repeat across
# sessions; docs/performance.md says which rows are which).
commit="$(git rev-parse --short=7 HEAD 2>/dev/null || true)"
if [[ -n "$commit" ]] && ! git diff --quiet HEAD -- crates Cargo.toml Cargo.lock 2>/dev/null; then
  commit="$commit+dirty"
fi
# Another build: the commit it embeds (`--version`).
if [[ -n "${BIN:-}" ]]; then
  commit="$("$bin" --version | sed -n 's/.*(\([0-9a-f]\{7\}\).*/\1/p')"
fi
floor="$("$work/floor")"
pairs_per_s="$(sed -n 's/.*heap_pairs_per_s=\([0-9.]*\).*/\1/p' <<< "$floor")"
latency_ns="$(sed -n 's/.*mem_latency_ns=\([0-9.]*\).*/\1/p' <<< "$floor")"
echo "floor: $floor" >&2
# The draws' floor of a stochastic scenario (none for the constant one: it draws nothing).
draw_ns=""
if [[ "${VARIANT:-constant}" != constant ]]; then
  draw_floor="$("$work/draw_floor" "$scenario")"
  draw_ns="$(sed -n 's/^draw_ns_per_record=\([0-9.]*\)$/\1/p' <<< "$draw_floor")"
  echo "draws: $draw_floor" >&2
fi
duration="$(sed -n 's/^duration = "\(.*\)"/\1/p' "$scenario")"
for p in $protocols; do
  /usr/bin/time -f '%e %U %M' -o "$work/time" "$bin" run "$scenario" --protocol "$p" \
    --out "$work/out" "${flags[@]}" > "$work/table" 2> "$work/timing"
  read -r wall user rss < "$work/time"
  events=$(sed -n 's/.* s wall, \([0-9]*\) events.*/\1/p' "$work/timing")
  # The protocol run alone (model and collector), without loading and writing the CSV files.
  run_s=$(sed -n 's/^timing: [^ ]*: \([0-9.]*\) s wall.*/\1/p' "$work/timing")
  ratio=$(awk -v r="$wall" -v e="$events" -v h="$pairs_per_s" 'BEGIN { printf "%.1f", r / (e / h) }')
  records=$(awk '$1 == "records_processed" { print $2 }' "$work/table")
  per_record=$(awk -v r="$run_s" -v n="$records" 'BEGIN { printf "%.1f", (n > 0 ? r * 1e9 / n : 0) }')
  draw_ratio=""
  if [[ -n "$draw_ns" ]]; then
    draw_ratio=$(awk -v r="$per_record" -v d="$draw_ns" 'BEGIN { printf "%.2f", r / d }')
  fi
  row="$(date -u +%F),${VARIANT:-constant},$duration,$stepping,$p,$wall,$user,$events,$rss,$run_s,$commit"
  row+=",$pairs_per_s,$latency_ns,$ratio,$records,$per_record,$draw_ns,$draw_ratio"
  echo "$row" | tee -a "$out"
done
