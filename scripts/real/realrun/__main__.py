"""Command line: run a scenario for real, or recompute the CSVs from a kept record.

    python -m realrun run SCENARIO.toml (--mock | --kafka | --bootstrap HOST:PORT) [--protocol P]...
                          [--client java|librdkafka] [--out DIR] [--raw DIR]
    python -m realrun summarize SCENARIO.toml RAW_DIR [--protocol P]... [--client C] [--out DIR]
    python -m realrun broker [SCENARIO.toml] [--hold SECONDS]

--kafka starts the pinned Apache Kafka (scripts/real/kafka/pom.xml) on loopback for every
protocol run, with the scenario's [broker.config], and stops it after (realrun/broker.py);
`broker` starts it, prints its address and start time, holds it, stops it.

Exit codes as rebalance-sim: 0 ok, 1 the record broke a conservation check, 2 bad input.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import signal
import sys
import time
from pathlib import Path

from . import output
from .metrics import ConservationError, RunMetrics, compute
from .broker import BrokerError, LocalBroker, kafka_version
from .coordinator import write_moments
from .mock import MockCluster
from .runner import CLIENTS
from .recorder import load_record
from .scenario import ProtocolSpec, Scenario, ScenarioError, load, parse_protocol

MOCK_BROKERS = 1


def raw_name(spec: ProtocolSpec) -> str:
    """Folder name of one protocol run's record."""
    return spec.label().replace(":", "_").replace("+", "_")


def selected(sc: Scenario, names: list[str] | None) -> list[ProtocolSpec]:
    """The --protocol list, or the scenario's."""
    if not names:
        return sc.protocols
    return [parse_protocol(n, f"--protocol {n}", sc.static_membership) for n in names]


def renamed(sc: Scenario, suffix: str) -> Scenario:
    """The scenario with fresh topic names (a real cluster keeps old records and offsets)."""
    if not suffix:
        return sc
    return dataclasses.replace(sc, topics=[dataclasses.replace(t, name=f"{t.name}-{suffix}") for t in sc.topics])


REQUEST_APIS = {0: "Produce", 1: "Fetch", 11: "JoinGroup", 13: "LeaveGroup", 14: "SyncGroup"}


def write_requests(path: Path, mock: MockCluster, t0: float) -> None:
    """The classic group requests, and the Produce and Fetch requests, the mock received, as
    seconds since t0 (recorder format; Produce/Fetch only for scripts/real/latency.py)."""
    with open(path, "w") as f:
        f.writelines(
            json.dumps({"k": "req", "api": REQUEST_APIS[key], "t_s": round(wall - t0, 6)}) + "\n"
            for key, wall in mock.requests(set(REQUEST_APIS))
        )


def prepare_mock(sc: Scenario) -> tuple[MockCluster, str]:
    """A fresh mock cluster with the scenario's topics and broker settings."""
    mock = MockCluster(MOCK_BROKERS)
    for t in sc.topics:
        mock.create_topic(t.name, t.partitions)
    mock.set_initial_rebalance_delay_ms(int(sc.broker_config.get("group.initial.rebalance.delay.ms", 3000)))
    mock.set_consumer_group_timeouts_ms(
        int(sc.broker_config.get("group.consumer.session.timeout.ms", 45000)),
        int(sc.broker_config.get("group.consumer.heartbeat.interval.ms", 5000)),
    )
    return mock, mock.bootstraps


def prepare_real(sc: Scenario, bootstrap: str) -> None:
    """Create the run's topics on a real cluster."""
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(t.name, t.partitions, 1) for t in sc.topics])
    for f in futures.values():
        f.result(timeout=30)


def run_one(sc: Scenario, spec: ProtocolSpec, args: argparse.Namespace, raw: Path) -> Scenario:
    """Execute one protocol run; returns the scenario as run (topic names)."""
    from .runner import execute

    stamp = time.strftime("%Y%m%d%H%M%S")
    if args.mock:
        mock, bootstrap = prepare_mock(sc)
        try:
            mock.start_request_tracking()
            t0 = execute(sc, spec, bootstrap, raw / raw_name(spec), f"{sc.name}-{raw_name(spec)}")
            write_requests(raw / raw_name(spec) / "mock_requests.jsonl", mock, t0)
        finally:
            mock.close()
        return sc
    real = renamed(sc, stamp)
    group = f"{sc.name}-{raw_name(spec)}-{stamp}"
    if args.kafka:
        run_dir = raw / raw_name(spec)
        with LocalBroker(sc.broker_config, keep_log=run_dir / "broker.log") as broker:
            print(f"  broker {kafka_version()} up at {broker.bootstrap} in {broker.start_s:.1f} s", flush=True)
            prepare_real(real, broker.bootstrap)
            t0 = execute(real, spec, broker.bootstrap, run_dir, group)
        write_moments(run_dir / "broker.log", group, t0, run_dir / "coordinator.jsonl")
        return real
    prepare_real(real, args.bootstrap)
    execute(real, spec, args.bootstrap, raw / raw_name(spec), group)
    return real


def hold_broker(args: argparse.Namespace) -> int:
    """`broker`: start the local broker, report, hold it for --hold seconds, stop it."""
    config = load(args.scenario).broker_config if args.scenario else {}
    began = time.monotonic()
    broker = LocalBroker(config)
    try:
        broker.start()
        print(f"broker: Apache Kafka {kafka_version()} serving at {broker.bootstrap} "
              f"(started in {broker.start_s:.1f} s, {time.monotonic() - began:.1f} s with the classpath)", flush=True)
        print(f"broker: pid {broker.proc.pid if broker.proc else 0}, data {broker.dir}", flush=True)
        time.sleep(args.hold)
    except BrokerError as err:
        print(f"error: {err}", file=sys.stderr)
        broker.stop()
        return 2
    finally:
        if broker.proc is not None and broker.proc.poll() is None:
            took = broker.stop()
            print(f"broker: stopped in {took:.1f} s, data directory removed: {not broker.dir.exists()}")
    return 0


def metrics_of(sc: Scenario, run_dir: Path) -> RunMetrics:
    """Load a record folder and compute its metrics."""
    rec = load_record(run_dir, sc.duration_s, sc.partitions(), sc.max_poll_interval_s())
    return compute(rec)


def topics_in(run_dir: Path) -> list[str]:
    """Topic names the record actually used (the producer's), to map back to scenario names."""
    names: set[str] = set()
    for line in (run_dir / "producer.jsonl").read_text().splitlines()[:1000]:
        try:
            names.add(json.loads(line)["t"])
        except (ValueError, KeyError):
            continue
    return sorted(names)


def as_run(sc: Scenario, run_dir: Path) -> Scenario:
    """The scenario with the record's topic names (same order, matched by prefix)."""
    used = topics_in(run_dir)
    topics = []
    for t in sc.topics:
        match = [u for u in used if u == t.name or u.startswith(t.name + "-")]
        topics.append(dataclasses.replace(t, name=match[0]) if match else t)
    return dataclasses.replace(sc, topics=topics)


def summarize(sc: Scenario, specs: list[ProtocolSpec], raw: Path, out: Path) -> None:
    """Write summary.csv, partitions.csv, rebalances.csv and intervals.csv from the records under raw."""
    summary, parts, rbs, ivs = [], [], [], []
    for spec in specs:
        run_dir = raw / raw_name(spec)
        used = as_run(sc, run_dir)
        m = metrics_of(used, run_dir)
        summary.append(output.summary_row(sc, spec, m))
        names = {u.name: t.name for u, t in zip(used.topics, sc.topics)}
        parts += output.partition_rows(spec, m, names)
        ivs += output.interval_rows(spec, m, names)
        rbs += output.rebalance_rows(spec, m)
    output.write_csv(out / "summary.csv", output.SUMMARY_COLUMNS, summary)
    output.write_csv(out / "partitions.csv", output.PARTITION_COLUMNS, parts)
    output.write_csv(out / "rebalances.csv", output.REBALANCE_COLUMNS, rbs)
    output.write_csv(out / "intervals.csv", output.INTERVAL_COLUMNS, ivs)
    for row in summary:
        print(" ".join(f"{c}={output.fmt(v)}" for c, v in zip(output.SUMMARY_COLUMNS[1:], row[1:]) if c in SHOWN))


SHOWN = {
    "protocol",
    "records_produced",
    "records_reprocessed",
    "records_lost",
    "final_lag",
    "downtime_partition_s",
    "stop_the_world_s",
    "rebalances",
    "rebalance_ms_max",
    "e2e_latency_ms_p99",
}


def _terminate(_sig: int, _frame: object) -> None:
    raise SystemExit(143)


def parser() -> argparse.ArgumentParser:
    """The argument parser."""
    p = argparse.ArgumentParser(
        prog="realrun", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a scenario for real")
    r.add_argument("scenario", type=Path)
    where = r.add_mutually_exclusive_group(required=True)
    where.add_argument("--mock", action="store_true", help="start librdkafka's mock cluster")
    where.add_argument("--kafka", action="store_true", help="start the pinned Apache Kafka on loopback")
    where.add_argument("--bootstrap", metavar="HOST:PORT", help="a real cluster")
    r.add_argument("--protocol", action="append", help="protocol:assignor (repeatable); default: the scenario's")
    r.add_argument("--client", choices=CLIENTS, help="member implementation (default: the scenario's client)")
    r.add_argument("--out", type=Path, help="CSV folder (default results/real/<scenario name>/)")
    r.add_argument("--raw", type=Path, help="record folder (default scripts/real/.runs/<name>-<time>/)")
    s = sub.add_parser("summarize", help="recompute the CSVs from a record folder")
    s.add_argument("scenario", type=Path)
    s.add_argument("raw", type=Path)
    s.add_argument("--protocol", action="append")
    s.add_argument("--client", choices=CLIENTS)
    s.add_argument("--out", type=Path)
    b = sub.add_parser("broker", help="start the local Apache Kafka, hold it, stop it")
    b.add_argument("scenario", type=Path, nargs="?", help="apply this scenario's [broker.config]")
    b.add_argument("--hold", type=float, default=0.0, metavar="SECONDS")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)  # so `finally` kills the children
    try:
        if args.cmd == "broker":
            return hold_broker(args)
        sc = load(args.scenario)
        if args.client:
            sc = dataclasses.replace(sc, client=args.client)
        specs = selected(sc, args.protocol)
        if args.cmd == "run" and args.mock and sc.client == "java":
            raise ScenarioError(
                f"{args.scenario}: consumer.client = \"java\" cannot run on librdkafka's mock cluster; "
                "use --kafka (a local Apache Kafka) or --client librdkafka"
            )
    except ScenarioError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    out = args.out or Path("results/real") / sc.name
    if args.cmd == "run":
        # Absolute: the Java members run in their own working directory and write their records here.
        raw = (
            args.raw or Path(__file__).resolve().parent.parent / ".runs" / f"{sc.name}-{time.strftime('%Y%m%d-%H%M%S')}"
        ).resolve()
        for spec in specs:
            print(f"running {sc.name} {spec.label()} ({sc.client}) for {sc.duration_s:g} s ...", flush=True)
            try:
                run_one(sc, spec, args, raw)
            except BrokerError as err:
                print(f"error: {err}", file=sys.stderr)
                return 2
        print(f"record: {raw}")
    else:
        raw = args.raw
    try:
        summarize(sc, specs, raw, out)
    except ConservationError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except FileNotFoundError as err:
        print(f"error: missing record file {err.filename}", file=sys.stderr)
        return 2
    print(f"wrote {out}/summary.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
