#!/usr/bin/env bash
# CI on a real broker (about a minute and a half): first the Java member's unit tests
# (member-java, `mvn -q test`: JUnit 5, MockConsumer, no broker; ~15 s, ~1 min more on a machine
# whose ~/.m2 is empty), then it starts the pinned Apache Kafka on loopback,
# runs scripts/real/scenarios/ci-join.toml (a join into a group of 3 at 15 s, cooperative-sticky,
# the Java client), then checks exact conservation from the raw record and the summary, and
# that the two rebalances happened (the formation, then the join at 15 s with 4 members).
# Every wait has a timeout; every process started here is killed on exit.
#   scripts/real/ci_kafka.sh        (exit 0 ok, non-zero otherwise)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
pgid=""
cleanup() {
  if [[ -n "$pgid" ]]; then kill -KILL -- "-$pgid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The Java member's unit tests (src/test/java/realrun/MemberTest.java). Its fixtures are in
# tests/ and checked against the Python side by tests/test_member_java.py (smoke.sh).
if ! timeout --kill-after=10 600 mvn -q -B -Dstyle.color=never -f "$here/member-java/pom.xml" test \
    > "$work/mvn-test.log" 2>&1; then
  grep -v '^\s*at ' "$work/mvn-test.log" | tail -40 >&2
  echo "ci_kafka: the Java member's unit tests failed (mvn -q test in scripts/real/member-java)" >&2
  exit 1
fi
grep -o 'MemberTest [a-zA-Z]*: .*' "$work/mvn-test.log" || true   # the two timing figures
echo "ci_kafka: Java member unit tests ok"

setsid timeout --kill-after=10 600 "$here/run.sh" run "$here/scenarios/ci-join.toml" --kafka \
  --out "$work/out" --raw "$work/raw" > "$work/log" 2>&1 &
pgid=$!
rc=0
wait "$pgid" || rc=$?
pgid_done="$pgid"; pgid=""
kill -KILL -- "-$pgid_done" 2>/dev/null || true                    # anything left in its group
grep -v '^%' "$work/log" || true
if [[ $rc -ne 0 ]]; then echo "ci_kafka: real run failed (exit $rc)" >&2; exit 1; fi

python3 - "$work/out" "$work/raw/cooperative_cooperative-sticky" <<'PY'
import csv, glob, json, sys
out, raw = sys.argv[1], sys.argv[2]
r = list(csv.DictReader(open(f"{out}/summary.csv")))
assert len(r) == 1, f"expected one summary row, got {len(r)}"
r = r[0]
produced, processed = int(r["records_produced"]), int(r["records_processed"])
reproc, lost, lag = int(r["records_reprocessed"]), int(r["records_lost"]), int(r["final_lag"])
unique = processed - reproc
assert produced == unique + lost + lag, f"conservation: {produced} != {unique} + {lost} + {lag}"
# The same from the raw record: acknowledged records produced before the end, every processing.
duration = 30.0
acked, seen, deliveries = set(), set(), 0
ahead = float("-inf")  # the most a record's produce() time came after its processing started
for line in open(f"{raw}/producer.jsonl"):
    o = json.loads(line)
    if o["k"] == "d" and o["a"] < duration:
        acked.add((o["p"], o["o"]))
for path in glob.glob(f"{raw}/member-*.jsonl"):
    for line in open(path):
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if o["k"] == "p" and o["e"] <= duration and o["a"] < duration:
            deliveries += 1
            seen.add((o["p"], o["o"]))
            ahead = max(ahead, o["a"] - o["s"])
assert len(acked) == produced, f"raw produced {len(acked)} != summary {produced}"
assert deliveries == processed and len(seen) == unique, f"raw {deliveries}/{len(seen)} != {processed}/{unique}"
assert produced > 4000, f"records_produced = {produced}: the producer did not run at 200/s"
assert unique > 0.5 * produced, f"unique processed {unique} of {produced}"
rbs = list(csv.DictReader(open(f"{out}/rebalances.csv")))
assert len(rbs) == 2, f"expected 2 rebalances (formation, join), got {len(rbs)}: {rbs}"
join = rbs[1]
assert join["trigger"] == "join" and float(join["start_s"]) == 15.0, f"second rebalance: {join}"
assert int(join["members"]) == 4, f"members after the join: {join['members']}"
# intervals.csv (issue 24): each partition's down intervals add up to its partitions.csv downtime.
down = {}
for iv in csv.DictReader(open(f"{out}/intervals.csv")):
    if iv["kind"] == "down":
        key = (iv["topic"], iv["partition"])
        down[key] = down.get(key, 0.0) + float(iv["to_s"]) - float(iv["from_s"])
for p in csv.DictReader(open(f"{out}/partitions.csv")):
    got = down.get((p["topic"], p["partition"]), 0.0)
    assert abs(got - float(p["downtime_s"])) < 1e-5, f"intervals.csv {p['topic']}/{p['partition']}: {got} != {p['downtime_s']}"
print(f"ci_kafka ok: produced={produced} processed={processed} unique={unique} lost={lost} "
      f"final_lag={lag} rebalances={len(rbs)} join_ms={join['duration_ms']} rounds={join['rounds']} "
      f"clock_check_ms={ahead * 1e3:.3f}")  # below 0 when every process reads one clock
PY
