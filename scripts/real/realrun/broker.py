"""A real single-node Apache Kafka (KRaft, combined broker + controller) on loopback.

The release is pinned in scripts/real/kafka/pom.xml; Maven resolves it from Maven Central into
its local repository (~/.m2) and builds the classpath (cached in scripts/real/.kafka/, never the
jars). `LocalBroker` formats a fresh storage directory, writes server.properties with the
scenario's `[broker.config]` (and the min/max bounds its values need), starts
`java -cp CP kafka.Kafka server.properties` in its own process group on free loopback ports
(a port taken meanwhile: new ports, another try), waits until it serves, and on stop sends
SIGTERM (controlled shutdown), then SIGKILL to the whole group, and removes the directory.
A broker that does not come up raises BrokerError with the tail of its log.
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

KAFKA_DIR = Path(__file__).resolve().parent.parent / "kafka"
CACHE_DIR = Path(__file__).resolve().parent.parent / ".kafka"
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0
START_ATTEMPTS = 3
# slf4j-simple's lines carry the wall-clock time (ms) so the coordinator's own moments can be
# read off the log (realrun/coordinator.py).
LOG_OPTS = ["-Dorg.slf4j.simpleLogger.showDateTime=true", "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSSZ"]
JVM_OPTS = ["-Xms256m", "-Xmx768m", "-XX:+UseG1GC", "-Djava.awt.headless=true", *LOG_OPTS]
# Broker bounds that must admit the scenario's values (Apache Kafka's defaults in brackets):
# group.min.session.timeout.ms [6000] for classic members' session.timeout.ms,
# group.consumer.min/max.session.timeout.ms [45000/60000], min/max.heartbeat.interval.ms
# [5000/15000] for the KIP-848 group.consumer.* values (GroupCoordinatorConfig).
BOUNDS = {
    "group.consumer.session.timeout.ms": ("group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
    "group.consumer.heartbeat.interval.ms": (
        "group.consumer.min.heartbeat.interval.ms",
        "group.consumer.max.heartbeat.interval.ms",
    ),
}


class BrokerError(Exception):
    """The broker could not be resolved, formatted or started; the message says why."""


def kafka_version() -> str:
    """The pinned release (pom.xml's kafka.version)."""
    text = (KAFKA_DIR / "pom.xml").read_text()
    start = text.index("<kafka.version>") + len("<kafka.version>")
    return text[start : text.index("</kafka.version>")]


def maven_classpath(module: Path, cache: Path, timeout_s: float = 900.0, scope: str = "") -> str:
    """The runtime classpath of a Maven module, resolved (downloading on first use) and cached
    until its pom.xml changes. `scope` = dependency:build-classpath's includeScope ("" = every
    scope; "runtime" leaves out test-scope dependencies such as JUnit)."""
    pom = module / "pom.xml"
    if cache.exists() and cache.stat().st_mtime >= pom.stat().st_mtime:
        cp = cache.read_text().strip()
        if cp and all(Path(p).exists() for p in cp.split(os.pathsep)):
            return cp
    cache.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["mvn", "-q", "-B", "-f", str(pom), "dependency:build-classpath", f"-Dmdep.outputFile={cache}"]
    if scope:
        cmd.append(f"-DincludeScope={scope}")
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except FileNotFoundError as err:
        raise BrokerError("mvn not found: scripts/real needs Maven (and Java 17) for the real broker") from err
    except subprocess.TimeoutExpired as err:
        raise BrokerError(f"mvn did not resolve {pom} within {timeout_s:g} s") from err
    if done.returncode != 0:
        raise BrokerError(f"mvn failed on {pom}:\n{(done.stdout + done.stderr)[-3000:]}")
    return cache.read_text().strip()


def broker_classpath() -> str:
    """The pinned broker's classpath."""
    return maven_classpath(KAFKA_DIR, CACHE_DIR / f"broker-{kafka_version()}.classpath")


def free_port() -> int:
    """A loopback port free at this moment (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_properties(data_dir: Path, port: int, controller_port: int, broker_config: dict[str, Any]) -> dict[str, str]:
    """server.properties of the single node: KRaft combined mode, replication factors 1, the
    offsets topic with one partition (one broker hosts every coordinator anyway), then the
    scenario's [broker.config] and the bounds its values need."""
    props: dict[str, Any] = {
        "process.roles": "broker,controller",
        "node.id": 1,
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(data_dir / "log"),
        "num.partitions": 1,
        "auto.create.topics.enable": "false",
        "offsets.topic.replication.factor": 1,
        "offsets.topic.num.partitions": 1,
        "transaction.state.log.replication.factor": 1,
        "transaction.state.log.min.isr": 1,
        "share.coordinator.state.topic.replication.factor": 1,
        "share.coordinator.state.topic.min.isr": 1,
        "group.initial.rebalance.delay.ms": 3000,
    }
    for key, value in broker_config.items():
        props[key] = ("true" if value else "false") if isinstance(value, bool) else value
    for key, (lo, hi) in BOUNDS.items():
        if key in broker_config:
            v = int(broker_config[key])
            props.setdefault(lo, v)
            props[lo] = min(int(props[lo]), v)
            props.setdefault(hi, v)
            props[hi] = max(int(props[hi]), v)
    return {k: str(v) for k, v in props.items()}


def serving(bootstrap: str, timeout_s: float) -> bool:
    """Whether the broker answers a metadata request within timeout_s."""
    from confluent_kafka.admin import AdminClient  # type: ignore[attr-defined]

    try:
        md = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0}).list_topics(timeout=timeout_s)
        return len(md.brokers) == 1
    except Exception:  # noqa: BLE001 (KafkaException: not up yet)
        return False


class LocalBroker:
    """One broker's lifetime: `with LocalBroker(cfg) as b: ... b.bootstrap ...`."""

    def __init__(self, broker_config: dict[str, Any], keep_log: Path | None = None) -> None:
        self.broker_config = broker_config
        self.keep_log = keep_log
        self.dir = Path(tempfile.mkdtemp(prefix="realrun-kafka-"))
        self.proc: subprocess.Popen[bytes] | None = None
        self.bootstrap = ""
        self.start_s = 0.0

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the broker's log."""
        log = self.dir / "broker.log"
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else "(no log)"

    def _java(self, cp: str, *args: str, log: Any) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            ["java", *JVM_OPTS, "-cp", cp, *args], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def _attempt(self, cp: str) -> bool:
        """Format and start on fresh ports; True once it serves, False if it exited (port taken)."""
        port, cport = free_port(), free_port()
        shutil.rmtree(self.dir / "log", ignore_errors=True)
        props = server_properties(self.dir, port, cport, self.broker_config)
        conf = self.dir / "server.properties"
        conf.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        # Kafka's Uuid text (url-safe base64, no padding); it may begin with "-", hence --cluster-id=.
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        with open(self.dir / "broker.log", "ab") as log:
            fmt = self._java(
                cp, "kafka.tools.StorageTool", "format", f"--cluster-id={cluster_id}", "-c", str(conf), log=log
            )
            if fmt.wait(timeout=120) != 0:
                raise BrokerError(f"formatting the storage failed (exit {fmt.returncode}):\n{self.log_tail()}")
            self.proc = self._java(cp, "kafka.Kafka", str(conf), log=log)
        self.bootstrap = f"127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                taken = "Address already in use" in self.log_tail(200)
                self._kill()
                if taken:
                    return False
                raise BrokerError(f"the broker exited (code {self.proc.returncode}):\n{self.log_tail()}")
            if serving(self.bootstrap, 1.0):
                return True
            time.sleep(0.2)
        self._kill()
        raise BrokerError(f"the broker did not serve within {START_TIMEOUT_S:g} s:\n{self.log_tail()}")

    def start(self) -> LocalBroker:
        """Resolve, format, start and wait until it serves (BrokerError otherwise)."""
        cp = broker_classpath()
        began = time.monotonic()
        for _ in range(START_ATTEMPTS):
            if self._attempt(cp):
                self.start_s = time.monotonic() - began
                return self
        raise BrokerError(f"ports taken {START_ATTEMPTS} times in a row:\n{self.log_tail()}")

    def _kill(self) -> None:
        """SIGKILL the broker's process group and reap it."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)

    def stop(self) -> float:
        """Controlled shutdown (SIGTERM), SIGKILL after STOP_TIMEOUT_S, data directory removed;
        returns the seconds it took."""
        began = time.monotonic()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                pass
        self._kill()
        if self.keep_log is not None and (self.dir / "broker.log").exists():
            self.keep_log.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.dir / "broker.log", self.keep_log)
        shutil.rmtree(self.dir, ignore_errors=True)
        return time.monotonic() - began

    def __enter__(self) -> LocalBroker:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *_exc: object) -> None:
        self.stop()
