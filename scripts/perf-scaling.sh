#!/usr/bin/env bash
# Run time against group size and partition count (issue 8): runs short scenarios of growing
# size with the release binary, one protocol run at a time, and draws
# results/perf/scaling.{svg,png} from results/perf/scaling.csv.
#
#   scripts/perf-scaling.sh            # full sweep (members 10..10,000; partitions 100..100,000)
#   SIM_S=10 scripts/perf-scaling.sh   # shorter runs
#
# Every run: 10 topics, 10 records/s per partition (constant), 0.5 ms per record, java client,
# auto-commit, no initial rebalance delay, SIM_S simulated seconds (default 60): the group
# forms (one rebalance of every member) and consumes in steady state. The process's wall time
# and peak RSS come from /usr/bin/time (10 ms steps), the protocol run's own time (`run_s`,
# without reading the scenario and writing the files; 1 ms steps) from `run --timing`; events
# (queue events: with fast stepping mostly the group protocol, as steady polls run aside) and
# records processed from the run's table. Events grow with members, records with partitions.
# Timings depend on the machine and its load: compare the slopes, not the absolute values.
set -euo pipefail
cd "$(dirname "$0")/.."
SIM_S="${SIM_S:-60}"
OUT=results/perf
mkdir -p "$OUT"
cargo build --release -q -p rebalance-sim -p report --bins
BIN=target/release/rebalance-sim
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# scenario MEMBERS PARTITIONS_PER_TOPIC FILE
scenario() {
  {
    printf 'name = "perf-scaling"\nduration = "%ss"\nseed = 1\n' "$SIM_S"
    printf 'protocols = ["eager:range", "cooperative:cooperative-sticky"]\n\n'
    for t in 0 1 2 3 4 5 6 7 8 9; do
      printf '[[topic]]\nname = "t%s"\npartitions = %s\nrate = 10.0\n\n' "$t" "$2"
    done
    printf '[consumer]\nprocessing = "0.5ms"\n\n'
    printf '[broker.config]\n"group.initial.rebalance.delay.ms" = 0\n\n'
    printf '[group]\nmembers = %s\n' "$1"
  } > "$3"
}

# measure SWEEP MEMBERS PARTITIONS_PER_TOPIC
measure() {
  local file="$WORK/s-$1-$2-$3.toml"
  scenario "$2" "$3" "$file"
  for p in eager:range cooperative:cooperative-sticky; do
    /usr/bin/time -f '%e %M' -o "$WORK/time" "$BIN" run "$file" --protocol "$p" \
      --out "$WORK/out" --timing > "$WORK/table" 2> "$WORK/timing"
    read -r wall rss < "$WORK/time"
    run_s=$(sed -n 's/^timing: .*: \([0-9.]*\) s wall.*/\1/p' "$WORK/timing")
    events=$(awk '$1 == "events" { print $2 }' "$WORK/table")
    records=$(awk '$1 == "records_processed" { print $2 }' "$WORK/table")
    echo "$1,$p,$2,$(( $3 * 10 )),$SIM_S,$events,$records,$wall,$run_s,$rss" |
      tee -a "$OUT/scaling.csv"
  done
}

echo "sweep,protocol,members,partitions,sim_s,events,records,wall_s,run_s,max_rss_kb" \
  > "$OUT/scaling.csv"
for m in 10 100 1000 10000; do measure members "$m" 100; done
for p in 10 100 1000 10000; do measure partitions 100 "$p"; done
target/release/perf-chart "$OUT/scaling.csv" "$OUT/scaling"
