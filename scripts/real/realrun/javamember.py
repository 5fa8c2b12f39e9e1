"""The Java client member (scripts/real/member-java, realrun.Member): build and command line.

Maven builds the jar from the module's own sources (`mvn -q package -DskipTests`, again
whenever a source or the pom is newer than the jar) and its runtime classpath (kafka-clients of
the pinned release, resolved from Maven Central into ~/.m2 on first use; JUnit, test scope, is
not on it). The module's unit tests (`mvn -q test`, src/test/java) are run by
scripts/real/ci_kafka.sh, not by this build: a measurement is not held up by a timing test on a
loaded host. `member_config` turns the
scenario's `[consumer.config]` into Java consumer properties, passed as is: these are Java's
own names; the only librdkafka spelling the scenarios use, `fetch.wait.max.ms`, is renamed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from .broker import CACHE_DIR, LOG_OPTS, BrokerError, kafka_version, maven_classpath
from .scenario import ProtocolSpec, Scenario

MODULE = Path(__file__).resolve().parent.parent / "member-java"
JAR = MODULE / "target" / "realrun-member-1.jar"
LIBRDKAFKA_NAMES = {"fetch.wait.max.ms": "fetch.max.wait.ms"}
# librdkafka's own names the Java consumer does not know (its refresh period is
# metadata.max.age.ms): not passed, so the consumer logs no unused-config warning.
LIBRDKAFKA_ONLY = {"topic.metadata.refresh.interval.ms"}
# Refused by the Java consumer with group.protocol=consumer (ConsumerConfig: the broker owns
# the session, the heartbeat and the assignor under KIP-848).
CLASSIC_ONLY = {"session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"}
ASSIGNOR_CLASSES = {
    "range": "org.apache.kafka.clients.consumer.RangeAssignor",
    "roundrobin": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
    "cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
}


def java_value(value: Any) -> str:
    """Booleans as Java's strings; everything else as written."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def member_config(sc: Scenario, spec: ProtocolSpec, bootstrap: str, group: str, name: str) -> dict[str, str]:
    """Java consumer properties for one member of one protocol run. client.id is the member's
    name under `[group] client_ids = "member-name"`; under "default" it is not set (the Java
    client's `consumer-<group.id>-<n>`, n = 1 in each member's JVM) unless [consumer.config]
    sets it."""
    cfg = {"bootstrap.servers": bootstrap, "group.id": group}
    if sc.client_ids == "member-name":
        cfg["client.id"] = name
    for key, value in sc.consumer_config.items():
        if key in LIBRDKAFKA_ONLY:
            continue
        java_key = LIBRDKAFKA_NAMES.get(key, key)
        if java_key == key or java_key not in sc.consumer_config:
            cfg[java_key] = java_value(value)
    if spec.protocol == "consumer":
        for key in CLASSIC_ONLY:
            cfg.pop(key, None)
        cfg["group.protocol"] = "consumer"
        cfg["group.remote.assignor"] = spec.assignor
    else:
        cfg["group.protocol"] = "classic"
        cfg["partition.assignment.strategy"] = ASSIGNOR_CLASSES[spec.assignor]
    if spec.static_membership:
        cfg["group.instance.id"] = name
    return cfg


def _stale() -> bool:
    if not JAR.exists():
        return True
    built = JAR.stat().st_mtime
    sources = [MODULE / "pom.xml", *MODULE.joinpath("src").rglob("*.java")]
    return any(s.stat().st_mtime > built for s in sources)


def classpath() -> str:
    """The member's classpath (jar + dependencies), building the jar first if needed."""
    version = kafka_version()
    if f"<kafka.version>{version}</kafka.version>" not in (MODULE / "pom.xml").read_text():
        raise BrokerError(f"{MODULE / 'pom.xml'}: kafka.version differs from the broker's {version}")
    if _stale():
        done = subprocess.run(
            ["mvn", "-q", "-B", "-f", str(MODULE / "pom.xml"), "package", "-DskipTests"],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if done.returncode != 0:
            raise BrokerError(f"building the Java member failed:\n{(done.stdout + done.stderr)[-3000:]}")
    deps = maven_classpath(MODULE, CACHE_DIR / f"member-{version}.classpath", scope="runtime")
    return f"{JAR}:{deps}"


# The commit path logged in the member's stderr (ConsumerCoordinator at debug: "Sending
# asynchronous auto-commit of offsets", "Committed offset N for partition P"), for the evidence.
COMMIT_LOG = "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients.consumer.internals.ConsumerCoordinator=debug"


def command(cp: str) -> list[str]:
    """The JVM command of one member; its JSON argument is appended by the runner."""
    jvm = ["java", "-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
    return [*jvm, *LOG_OPTS, COMMIT_LOG, "-cp", cp, "realrun.Member"]
