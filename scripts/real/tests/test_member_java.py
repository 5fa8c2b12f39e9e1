"""The Java member's contract with the Python side, through two fixtures its Maven tests read
(scripts/real/member-java/src/test/java/realrun/MemberTest.java, `mvn -q test`):

- member_record.jsonl: record lines as realrun.Member writes them (MemberTest builds the same
  inputs and compares byte for byte); here: member.py's writer gives the same bytes, and the
  loader metrics.py uses (recorder.load_record) reads them as intended.
- java_member_configs.json: javamember.member_config for sims/real/crash.toml in the four
  matrix protocols (MemberTest constructs a KafkaConsumer with each, so the Java client must
  accept them); here: the fixture is what member_config gives now. Regenerate after a change:
  `cd scripts/real && PYTHONPATH=. python3 tests/test_member_java.py --write`.
"""

from __future__ import annotations

import json
import sys
import tempfile
import unittest
from pathlib import Path

from realrun import javamember
from realrun.recorder import Callback, Delivery, Mark, Writer, load_record
from realrun.scenario import ProtocolSpec, load

HERE = Path(__file__).resolve().parent
RECORD = HERE / "member_record.jsonl"
CONFIGS = HERE / "java_member_configs.json"
PROTOCOLS = {
    "eager:range": ProtocolSpec("eager", "range", False),
    "eager:range+static": ProtocolSpec("eager", "range", True),
    "cooperative:cooperative-sticky": ProtocolSpec("cooperative", "cooperative-sticky", False),
    "consumer:uniform": ProtocolSpec("consumer", "uniform", False),
}


def configs() -> dict[str, dict[str, str]]:
    """member_config of crash.toml's member c1, group g, bootstrap 127.0.0.1:9, per protocol."""
    sc = load(HERE.parent.parent.parent / "sims/real/crash.toml")
    return {label: javamember.member_config(sc, spec, "127.0.0.1:9", "g", "c1") for label, spec in PROTOCOLS.items()}


class JavaRecordFormatTest(unittest.TestCase):
    def test_python_member_writes_the_same_bytes(self) -> None:
        # The objects member.py writes, in its key order, for the fixture's inputs.
        objs = [
            {"k": "start", "t_s": 0.5},
            {"k": "assign", "t_s": 1.25, "parts": [["events", 0], ["events", 3]]},
            {"k": "p", "t": "events", "p": 3, "o": 7, "a": 0.125, "s": 1.5, "e": 1.625},
            {"k": "gap", "from": 2.0, "to": 3.5},
            {"k": "revoke", "t_s": 4.0, "parts": [["events", 3]]},
            {"k": "lost", "t_s": 4.5, "parts": [["events", 0]]},
            {"k": "err", "t_s": 4.75, "msg": "org.apache.kafka.common.KafkaException: boom"},
            {"k": "leave", "t_s": 5.0},
            {"k": "closed", "t_s": 5.25},
        ]
        with tempfile.TemporaryDirectory() as tmp:
            w = Writer(Path(tmp) / "m.jsonl", 0.0)
            for o in objs:
                w.write(o)
            w.close()
            self.assertEqual((Path(tmp) / "m.jsonl").read_text(), RECORD.read_text())

    def test_loader_reads_the_java_lines(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp)
            (run / "producer.jsonl").write_text('{"k":"d","t":"events","p":3,"o":7,"a":0.125,"ack":0.126}\n')
            (run / "events.jsonl").write_text("")
            (run / "member-c0-0.jsonl").write_text(RECORD.read_text())
            # max.poll.interval.ms 1 s: the 1.5 s gap cuts the member off from 3.0 s to 3.5 s.
            rec = load_record(run, 10.0, [("events", 0), ("events", 3)], 1.0)
        self.assertEqual(rec.deliveries, [Delivery(("events", 3), 7, 0.125, 1.5, 1.625, "c0")])
        self.assertEqual(
            rec.callbacks,
            [
                Callback(1.25, "c0", 0, "assign", (("events", 0), ("events", 3))),
                Callback(4.0, "c0", 0, "revoke", (("events", 3),)),
                Callback(4.5, "c0", 0, "lost", (("events", 0),)),
            ],
        )
        self.assertEqual(
            rec.marks,
            [Mark(0.5, "c0", 0, "start"), Mark(3.0, "c0", 0, "cutoff"), Mark(3.5, "c0", 0, "uncut"), Mark(5.0, "c0", 0, "leave")],
        )
        self.assertEqual(rec.lines, 10)  # 9 member lines + 1 producer line


class JavaConfigFixtureTest(unittest.TestCase):
    def test_fixture_is_what_member_config_gives(self) -> None:
        self.assertEqual(json.loads(CONFIGS.read_text()), configs(), f"regenerate {CONFIGS.name}: see the module doc")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        CONFIGS.write_text(json.dumps(configs(), indent=2, sort_keys=True) + "\n")
    else:
        unittest.main()
