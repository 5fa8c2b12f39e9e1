#!/usr/bin/env bash
# CI smoke test of the real-run tool (about 30 s): sets up the pinned venv, runs the unit tests,
# then a 25 s KIP-848 join (sims/real/smoke.toml) on librdkafka's mock cluster and checks that a
# summary was computed. Every wait has a timeout; every process started here is killed on exit.
#   scripts/real/smoke.sh        (exit 0 ok, non-zero otherwise)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
pgid=""
cleanup() {
  if [[ -n "$pgid" ]]; then kill -KILL -- "-$pgid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

timeout 300 "$here/run.sh" --help >/dev/null                       # venv + pinned wheel
(cd "$here" && PYTHONPATH="$here" timeout 60 .venv/bin/python -m unittest discover -s tests -q)

setsid timeout --kill-after=10 120 "$here/run.sh" run "$root/sims/real/smoke.toml" --mock \
  --out "$work/out" --raw "$work/raw" > "$work/log" 2>&1 &
pgid=$!
rc=0
wait "$pgid" || rc=$?
pgid_done="$pgid"; pgid=""
kill -KILL -- "-$pgid_done" 2>/dev/null || true                    # anything left in its group
grep -v '^%' "$work/log" || true
if [[ $rc -ne 0 ]]; then echo "smoke: real run failed (exit $rc)" >&2; exit 1; fi

python3 - "$work/out/summary.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1, f"expected one summary row, got {len(rows)}"
r = rows[0]
produced, processed = int(r["records_produced"]), int(r["records_processed"])
assert produced > 3000, f"records_produced = {produced}: the producer did not run at 200/s"
assert processed > 0.9 * produced, f"records_processed = {processed} of {produced}"
assert int(r["rebalances"]) >= 2, f"rebalances = {r['rebalances']}: the join was not seen"
print(f"smoke ok: produced={produced} processed={processed} rebalances={r['rebalances']} "
      f"downtime_partition_s={r['downtime_partition_s']}")
PY
