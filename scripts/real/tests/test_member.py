"""The member process creates its librdkafka consumer at its start moment, not when spawned.

librdkafka starts the auto-commit timer when the consumer is created; the process is spawned
early (runner.SPAWN_LEAD_S) for its imports, so creating the consumer then would shift every
auto-commit (and the records reprocessed after a crash) by the lead (issue #10).
"""

from __future__ import annotations

import tempfile
import time
import unittest
from pathlib import Path
from typing import Any
from unittest import mock

from realrun import member


class FakeConsumer:
    """Records when it was created and subscribed (seconds since the test's t0)."""

    t0 = 0.0
    created: list[float] = []
    subscribed: list[float] = []

    def __init__(self, _config: dict[str, Any]) -> None:
        FakeConsumer.created.append(time.time() - FakeConsumer.t0)

    def subscribe(self, _topics: list[str], **_callbacks: Any) -> None:
        FakeConsumer.subscribed.append(time.time() - FakeConsumer.t0)


class StartTest(unittest.TestCase):
    def test_consumer_created_at_the_start_moment(self) -> None:
        start_at_s = 0.2
        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(member, "Consumer", FakeConsumer):
            FakeConsumer.t0 = time.time()
            FakeConsumer.created, FakeConsumer.subscribed = [], []
            args = {
                "name": "c0",
                "record": str(Path(tmp) / "member-c0-0.jsonl"),
                "t0": FakeConsumer.t0,
                "start_at_s": start_at_s,
                "processing_s": 0.001,
                "batch": 1,
                "config": {},
                "topics": ["t"],
            }
            m = member.Member(args)
            m.out.close()
        # Created (and subscribed) only once the start moment has come, not at spawn (t = 0).
        self.assertEqual(len(FakeConsumer.created), 1)
        self.assertGreaterEqual(FakeConsumer.created[0], start_at_s)
        self.assertGreaterEqual(FakeConsumer.subscribed[0], FakeConsumer.created[0])


if __name__ == "__main__":
    unittest.main()
