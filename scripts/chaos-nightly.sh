#!/usr/bin/env bash
# Chaos over many seeds (issue 27): `rebalance-sim chaos` in shards of 1,000 seeds, each
# shard's report kept in OUT/shard-<first>.txt (a shard with a report is skipped, so a stopped
# run resumes where it was), failing seeds' scenarios saved in OUT/failing/. Prints the totals
# and exits 1 if any shard had a failure.
#
#   scripts/chaos-nightly.sh [SEEDS] [OUT]      # default: 100000 seeds into target/chaos-nightly
#
# Time: about 0.45 s of CPU per seed (12 protocol runs, release build), so 100,000 seeds are
# about 12.5 CPU-hours (about 6 hours on 2 cores: the shards use every core).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds="${1:-100000}"
out="${2:-target/chaos-nightly}"
if ! [[ "$seeds" =~ ^[0-9]+$ ]] || (( seeds < 1 )); then
  echo "error: SEEDS must be a positive whole number of seeds, got '$seeds'" >&2
  exit 2
fi
cargo build --release --locked -p rebalance-sim
bin=target/release/rebalance-sim
mkdir -p "$out/failing"
failed=0
for (( first = 0; first < seeds; first += 1000 )); do
  last=$(( first + 1000 < seeds ? first + 1000 : seeds ))
  report="$out/shard-$first.txt"
  [[ -s "$report" ]] && continue
  rc=0
  "$bin" chaos --seeds "$first..$last" --save "$out/failing" > "$report.tmp" || rc=$?
  if (( rc > 1 )); then
    echo "error: chaos --seeds $first..$last exited $rc (see $report.tmp)" >&2
    exit "$rc"
  fi
  mv "$report.tmp" "$report"
  echo "$(tail -n 1 "$report")  [seeds $first..$last]"
done
runs=0; failures=0
for report in "$out"/shard-*.txt; do
  line=$(tail -n 1 "$report")   # N seeds, M runs, K failures
  runs=$(( runs + $(awk '{print $3}' <<<"$line") ))
  f=$(awk '{print $5}' <<<"$line")
  failures=$(( failures + f ))
  (( f > 0 )) && failed=1
done
echo "total: $seeds seeds, $runs runs, $failures failures (reports in $out)"
exit "$failed"
