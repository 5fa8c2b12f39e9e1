"""The load: `python -m realrun.producer ARGS_JSON` appends records at the scenario's rates.

Each record's value is the time produce() was called (seconds since t0). Acknowledged records
are recorded with their offsets, that produce() time (`a`) and the time of their delivery report
(`ack`): the broker has appended the record by then, and it is the closest moment to the
append (DESIGN section 5's arrival) that a client can observe; the produce() time is earlier by
the producer's linger and batching. SIGTERM stops producing and flushes what is in flight.
"""

from __future__ import annotations

import heapq
import json
import random
import signal
import sys
from pathlib import Path
from typing import Any

from confluent_kafka import Producer

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
    producer = Producer(args["config"])
    rng = random.Random(args["seed"])
    heap = first_arrivals([tuple(r) for r in args["rates"]], args["poisson"], rng)

    def delivered(err: Any, msg: Any) -> None:
        if err is None:
            ack = out.now()
            a = float(msg.value().decode())
            out.write({"k": "d", "t": msg.topic(), "p": msg.partition(), "o": msg.offset(), "a": a, "ack": ack})
        else:
            out.write({"k": "fail", "t": msg.topic(), "p": msg.partition(), "err": str(err)})

    while heap and not stop["flag"]:
        due, topic, part, rate = heapq.heappop(heap)
        wait = due - out.now()
        if wait > 0:
            producer.poll(min(wait, 0.05))
            heapq.heappush(heap, (due, topic, part, rate))
            continue
        now = out.now()
        producer.produce(
            topic,
            value=f"{now:.6f}".encode(),
            partition=part,
            timestamp=int((args["t0"] + now) * 1000),
            on_delivery=delivered,
        )
        producer.poll(0)
        step = rng.expovariate(rate) if args["poisson"] else 1.0 / rate
        heapq.heappush(heap, (due + step, topic, part, rate))
    producer.flush(10.0)
    out.close()


if __name__ == "__main__":
    main()
