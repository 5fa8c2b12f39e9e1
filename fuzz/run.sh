#!/bin/bash
# Runs each fuzz target for SECONDS (default 300) under nice, from the seeded corpus; logs in
# fuzz/logs/<target>.log, exit codes in fuzz/logs/summary.txt, crashing inputs in
# fuzz/artifacts/<target>/.
set -uo pipefail
cd "$(dirname "$0")"
secs=${1:-300}
./seed.sh
mkdir -p logs
for t in scenario_toml sweep_grid assign_json; do
  nice -n 15 cargo +nightly fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" \
    -rss_limit_mb=4096 -timeout=30 > "logs/$t.log" 2>&1
  echo "$t exit $?" >> logs/summary.txt
done
