"""The loader's cut of a run's record at its end (recorder.load_record), on a hand-made run."""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from realrun.metrics import offsets_of
from realrun.recorder import Record, load_record

TP = ("events", 0)


class CutTest(unittest.TestCase):
    def load(self, member_lines: str) -> Record:
        with tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp)
            # Offsets 0 and 1 produced at 9.5 and 9.9 s; offset 2 at 10.05 s, after the 10 s end.
            (run / "producer.jsonl").write_text(
                '{"k":"d","t":"events","p":0,"o":0,"a":9.5,"ack":9.501}\n'
                '{"k":"d","t":"events","p":0,"o":1,"a":9.9,"ack":9.901}\n'
                '{"k":"d","t":"events","p":0,"o":2,"a":10.05,"ack":10.051}\n'
            )
            (run / "events.jsonl").write_text("")
            (run / "member-c0-0.jsonl").write_text(member_lines)
            return load_record(run, 10.0, [TP], 300.0)

    def test_processing_ending_after_the_end_is_out(self) -> None:
        rec = self.load(
            '{"k":"p","t":"events","p":0,"o":0,"a":9.5,"s":9.6,"e":9.7}\n'
            '{"k":"p","t":"events","p":0,"o":1,"a":9.9,"s":9.95,"e":10.01}\n'
        )
        self.assertEqual([d.offset for d in rec.deliveries], [0])
        po = offsets_of(rec, TP)  # 2 produced: 1 processed, 1 left as lag
        self.assertEqual((po.produced, po.unique, po.lost, po.final_lag), (2, 1, 0, 1))

    def test_a_member_clock_behind_the_producers_keeps_conservation(self) -> None:
        # The member's clock 0.2 s behind the producer's: it processed offset 2 (produced at
        # 10.05 s by the producer's clock) ending at 9.96 s by its own. Cut by `e` alone, offset 2
        # would be processed but never produced (ConservationError); cut by `a` too it is out.
        rec = self.load(
            '{"k":"p","t":"events","p":0,"o":0,"a":9.5,"s":9.4,"e":9.41}\n'
            '{"k":"p","t":"events","p":0,"o":1,"a":9.9,"s":9.8,"e":9.81}\n'
            '{"k":"p","t":"events","p":0,"o":2,"a":10.05,"s":9.95,"e":9.96}\n'
        )
        self.assertEqual([d.offset for d in rec.deliveries], [0, 1])
        po = offsets_of(rec, TP)
        self.assertEqual((po.produced, po.processed, po.unique, po.final_lag), (2, 2, 2, 0))


if __name__ == "__main__":
    unittest.main()
