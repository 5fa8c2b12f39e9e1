#!/usr/bin/env python3
"""The simulator's KIP-848 server-side assignors (`uniform`, `consumer-range`) against the real
ones of the pinned Apache Kafka, on random groups and the rebalances that follow them.

    scripts/real/assignor_diff.py [--groups N] [--rounds R] [--seed S] [--sim BINARY]
                                  [--max-topics T] [--max-members M]

Each group (random topics with random topic ids, members with random member ids as Kafka 4.x
clients generate them, some static, subscriptions equal or not) is assigned by the real
assignor (`assignors/AssignorOracle.java` on the broker's classpath) and by `rebalance-sim
assign` with `"member_order": "broker"`; then members leave, join or change subscription and
the group is assigned again with every member owning what the real assignor gave it. Prints
one line per difference, per assignor the assignments equal to the real ones (all, then those of
groups whose subscriptions differ) and a summary `same: N of M assignments`; exits 1 on a
difference.

Groups have 1..T topics (default 4) and 1..M members (default 12); the defaults give the same
groups for a seed as before the options existed. Standard library only; the JVM answers on a
pipe.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from realrun.broker import broker_classpath  # noqa: E402


def kafka_uuid(rng: random.Random) -> str:
    """`Uuid.randomUuid().toString()`: 16 random bytes (version 4), URL-safe base64, no padding."""
    raw = bytearray(rng.getrandbits(8) for _ in range(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")


def random_group(rng: random.Random, max_topics: int = 4, max_members: int = 12) -> dict:
    topics = {f"t{i}": rng.randint(1, 40) for i in range(rng.randint(1, max_topics))}
    names = list(topics)
    equal = rng.random() < 0.6
    shared = rng.sample(names, rng.randint(1, len(names)))
    members = []
    for i in range(rng.randint(1, max_members)):
        subscribed = shared if equal else rng.sample(names, rng.randint(1, len(names)))
        member = {"id": kafka_uuid(rng), "topics": sorted(subscribed)}
        if rng.random() < 0.3:
            member["group_instance_id"] = f"instance-{i}"
        members.append(member)
    return {
        "topics": topics,
        "topic_ids": {t: kafka_uuid(rng) for t in names},
        "members": members,
    }


def next_round(rng: random.Random, group: dict, answer: dict) -> dict:
    """Every member owns what it was given; then one change: a leave, a join, a resubscribe."""
    members = []
    for m in group["members"]:
        owned = [pair for pair in answer.get(m["id"], []) if pair[0] in m["topics"]]
        members.append(dict(m, owned=owned))
    change = rng.random()
    if change < 0.35 and len(members) > 1:
        members.pop(rng.randrange(len(members)))
    elif change < 0.7:
        members.append({"id": kafka_uuid(rng), "topics": list(members[0]["topics"])})
    elif change < 0.85:
        group["topics"] = {t: p + rng.randint(0, 5) for t, p in group["topics"].items()}
    else:
        m = rng.choice(members)
        m["topics"] = sorted(rng.sample(list(group["topics"]), rng.randint(1, len(group["topics"]))))
        m["owned"] = [pair for pair in m.get("owned", []) if pair[0] in m["topics"]]
    return dict(group, members=members)


def sim_answer(binary: str, request: dict) -> dict:
    done = subprocess.run([binary, "assign", "-"], input=json.dumps(request), capture_output=True,
                          text=True, timeout=60)
    if done.returncode != 0:
        raise SystemExit(f"rebalance-sim assign failed: {done.stderr}\nrequest: {json.dumps(request)}")
    return json.loads(done.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--groups", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sim", default=str(ROOT / "target/release/rebalance-sim"))
    ap.add_argument("--max-topics", type=int, default=4)
    ap.add_argument("--max-members", type=int, default=12)
    args = ap.parse_args()
    if args.max_topics < 1 or args.max_members < 1:
        ap.error("--max-topics and --max-members must be at least 1")
    rng = random.Random(args.seed)
    oracle = subprocess.Popen(
        ["java", "-cp", broker_classpath(), str(HERE / "assignors/AssignorOracle.java")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    same = total = 0
    per_assignor = {}
    per_assignor_mixed = {}  # the assignments of groups whose subscriptions differ
    for g in range(args.groups):
        group = random_group(rng, args.max_topics, args.max_members)
        for assignor in ("uniform", "consumer-range"):
            state = json.loads(json.dumps(group))
            for r in range(args.rounds):
                request = dict(state, assignor=assignor)
                oracle.stdin.write(json.dumps(dict(request, assignor="uniform" if assignor == "uniform" else "range")) + "\n")
                oracle.stdin.flush()
                real = json.loads(oracle.stdout.readline())
                sim = sim_answer(args.sim, dict(request, member_order="broker"))
                total += 1
                ok = sim == real
                same += ok
                tally = per_assignor.setdefault(assignor, [0, 0])
                tally[0] += ok
                tally[1] += 1
                if len({tuple(sorted(m["topics"])) for m in request["members"]}) > 1:
                    mixed = per_assignor_mixed.setdefault(assignor, [0, 0])
                    mixed[0] += ok
                    mixed[1] += 1
                if not ok:
                    print(f"group {g} {assignor} round {r}: differs\n  request: {json.dumps(request)}\n"
                          f"  real: {json.dumps(real)}\n  sim:  {json.dumps(sim)}")
                state = next_round(rng, state, real)
    oracle.stdin.close()
    oracle.wait(timeout=60)
    for assignor, (ok, n) in per_assignor.items():
        print(f"{assignor}: {ok} of {n} assignments equal to Kafka's")
        mixed_ok, mixed_n = per_assignor_mixed.get(assignor, [0, 0])
        print(f"  of them with unequal subscriptions: {mixed_ok} of {mixed_n}")
    print(f"same: {same} of {total} assignments")
    return 0 if same == total else 1


if __name__ == "__main__":
    sys.exit(main())
