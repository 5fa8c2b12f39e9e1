"""One group member as its own OS process: `python -m realrun.member ARGS_JSON`.

The process is started ahead of its moment (`start_at_s`) and waits, so that interpreter
start-up (imports) does not shift the scenario's timing. At its moment it creates its consumer
(not earlier: librdkafka's auto-commit timer runs from the consumer's creation) and subscribes
with the scenario's consumer config, then runs a poll loop: consume a
batch, process each record (sleep the processing time), record it. Control from the
orchestrator: SIGTERM = graceful leave (close(): commit and LeaveGroup), a line
`stall SECONDS` on stdin = the current batch takes that much longer (heartbeats go on in
librdkafka's threads). Crash (SIGKILL) and pause (SIGSTOP/SIGCONT) need no cooperation.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from .recorder import Writer

GAP_RECORD_S = 1.0  # poll gaps longer than this are recorded (max.poll.interval accounting)
POLL_TIMEOUT_S = 0.05


class Member:
    """State of the member process: its consumer, its record writer and pending controls."""

    def __init__(self, args: dict[str, Any]) -> None:
        self.name: str = args["name"]
        self.out = Writer(Path(args["record"]), args["t0"])
        self.processing_s: float = args["processing_s"]
        self.batch: int = args["batch"]
        self.leave_requested = False
        self.stall_s = 0.0
        self.lock = threading.Lock()
        delay = args["start_at_s"] - self.out.now()
        if delay > 0:
            time.sleep(delay)  # started early so that imports do not delay the scenario's moment
        # Created only now: librdkafka starts its auto-commit timer (auto.commit.interval.ms)
        # when the consumer is created, and the simulator starts it when the member starts.
        self.consumer = Consumer(args["config"])
        self.consumer.subscribe(
            args["topics"], on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost
        )
        self.out.write({"k": "start", "t_s": self.out.now()})

    def _callback(self, kind: str, parts: list[TopicPartition]) -> None:
        self.out.write({"k": kind, "t_s": self.out.now(), "parts": [[tp.topic, tp.partition] for tp in parts]})

    def _on_assign(self, _c: Consumer, parts: list[TopicPartition]) -> None:
        self._callback("assign", parts)

    def _on_revoke(self, _c: Consumer, parts: list[TopicPartition]) -> None:
        self._callback("revoke", parts)

    def _on_lost(self, _c: Consumer, parts: list[TopicPartition]) -> None:
        self._callback("lost", parts)

    def read_controls(self) -> None:
        """Stdin reader thread: `stall SECONDS` lines."""
        for line in sys.stdin:
            words = line.split()
            if len(words) == 2 and words[0] == "stall":
                with self.lock:
                    self.stall_s += float(words[1])

    def _take_stall(self) -> float:
        with self.lock:
            s, self.stall_s = self.stall_s, 0.0
        return s

    def process(self, msg: Any) -> None:
        """Process one record: sleep the processing time (plus a pending stall), then record it."""
        start = self.out.now()
        stall = self._take_stall()
        time.sleep(self.processing_s + stall)
        arrival = float(msg.value().decode())
        self.out.write(
            {
                "k": "p",
                "t": msg.topic(),
                "p": msg.partition(),
                "o": msg.offset(),
                "a": arrival,
                "s": start,
                "e": self.out.now(),
            }
        )

    def poll_batch(self) -> list[Any]:
        """One poll as the Java client's: wait up to POLL_TIMEOUT_S for a first record, then take
        what is already fetched, up to the batch size. (librdkafka's consume(n, timeout) would
        instead wait for n records or the whole timeout, adding up to 50 ms of latency.)"""
        first = self.consumer.poll(POLL_TIMEOUT_S)
        if first is None:
            return []
        return [first] + (self.consumer.consume(num_messages=self.batch - 1, timeout=0) if self.batch > 1 else [])

    def run(self) -> None:
        """The poll loop until SIGTERM; then close() (commit + leave)."""
        last_return = self.out.now()
        while not self.leave_requested:
            stall = self._take_stall()
            if stall:
                time.sleep(stall)  # a stall with no record in hand: the poll gap is the same
            called = self.out.now()
            if called - last_return > GAP_RECORD_S:
                self.out.write({"k": "gap", "from": last_return, "to": called})
            msgs = self.poll_batch()
            last_return = self.out.now()
            for msg in msgs:
                if msg.error():
                    self.out.write({"k": "err", "t_s": self.out.now(), "msg": str(msg.error())})
                else:
                    self.process(msg)
        self.out.write({"k": "leave", "t_s": self.out.now()})
        self.consumer.close()
        self.out.write({"k": "closed", "t_s": self.out.now()})


def main() -> None:
    """Entry point: one JSON argument: name, record, t0, start_at_s, processing_s, batch, config, topics."""
    member = Member(json.loads(sys.argv[1]))

    def on_term(_sig: int, _frame: Any) -> None:
        member.leave_requested = True

    signal.signal(signal.SIGTERM, on_term)
    threading.Thread(target=member.read_controls, daemon=True).start()
    member.run()
    member.out.close()


if __name__ == "__main__":
    main()
