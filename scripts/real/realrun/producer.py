"""The load: `python -m realrun.producer ARGS_JSON` appends records at the scenario's rates.

Each record's value is the time produce() was called (seconds since t0). Acknowledged records
are recorded with their offsets, that produce() time (`a`) and the time of their delivery report
(`ack`): the broker has appended the record by then, and it is the closest moment to the
append (DESIGN section 5's arrival) that a client can observe; the produce() time is earlier by
the producer's linger and batching. SIGTERM stops producing and flushes what is in flight.

Added partitions (`adds`: per add-partitions event its time and new partitions) get arrivals
from the event on; librdkafka refuses a record for a partition its metadata does not know yet
(`_UNKNOWN_PARTITION`), so records start on them at the producer's next metadata refresh
(`topic.metadata.refresh.interval.ms`, from the client's creation at t0), as a real producer
starts using new partitions. Refused attempts are counted per partition ("refused" lines).
"""

from __future__ import annotations

import heapq
import json
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from .recorder import Writer


def first_arrivals(
    rates: list[tuple[str, int, float]], poisson: bool, rng: random.Random
) -> list[tuple[float, str, int, float]]:
    """The first scheduled arrival per partition: (time, topic, partition, rate).

    Constant: offset k of every partition is due at (k + 1) / rate, in phase across partitions,
    as the simulator's constant arrivals (crates/model/src/workload.rs); a member owning two
    partitions gets two records at once. Poisson: seeded exponential gaps."""
    heap = []
    for topic, part, rate in rates:
        if rate > 0:
            first = rng.expovariate(rate) if poisson else 1.0 / rate
            heap.append((first, topic, part, rate))
    heapq.heapify(heap)
    return heap


def main() -> None:
    """Produce until SIGTERM, then flush and exit."""
    args: dict[str, Any] = json.loads(sys.argv[1])
    out = Writer(Path(args["record"]), args["t0"])
    stop = {"flag": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__("flag", True))
    rng = random.Random(args["seed"])
    heap = first_arrivals([tuple(r) for r in args["rates"]], args["poisson"], rng)
    adds = sorted((float(at), [tuple(r) for r in rates]) for at, rates in args.get("adds", []))
    refused: dict[tuple[str, int], list[float]] = {}
    while out.now() < 0 and not stop["flag"]:  # the client (and its refresh timer) starts at t0
        time.sleep(min(-out.now(), 0.05))
    producer = Producer(args["config"])

    def delivered(err: Any, msg: Any) -> None:
        if err is None:
            ack = out.now()
            a = float(msg.value().decode())
            out.write({"k": "d", "t": msg.topic(), "p": msg.partition(), "o": msg.offset(), "a": a, "ack": ack})
        else:
            out.write({"k": "fail", "t": msg.topic(), "p": msg.partition(), "err": str(err)})

    while (heap or adds) and not stop["flag"]:
        while adds and adds[0][0] <= out.now():
            at, rates = adds.pop(0)
            for due, topic, part, rate in first_arrivals(rates, args["poisson"], rng):
                heapq.heappush(heap, (at + due, topic, part, rate))
        if not heap:
            producer.poll(0.05)
            continue
        due, topic, part, rate = heapq.heappop(heap)
        wait = due - out.now()
        if wait > 0:
            producer.poll(min(wait, 0.05))
            heapq.heappush(heap, (due, topic, part, rate))
            continue
        now = out.now()
        try:
            producer.produce(
                topic,
                value=f"{now:.6f}".encode(),
                partition=part,
                timestamp=int((args["t0"] + now) * 1000),
                on_delivery=delivered,
            )
        except KafkaException as err:
            if err.args[0].code() != KafkaError._UNKNOWN_PARTITION:
                raise
            tally = refused.setdefault((topic, part), [0, now])
            tally[0] += 1
            tally[1] = now
        producer.poll(0)
        step = rng.expovariate(rate) if args["poisson"] else 1.0 / rate
        heapq.heappush(heap, (due + step, topic, part, rate))
    producer.flush(10.0)
    for (topic, part), (n, last) in sorted(refused.items()):
        out.write({"k": "refused", "t": topic, "p": part, "n": n, "last_s": last})
    out.close()


if __name__ == "__main__":
    main()
