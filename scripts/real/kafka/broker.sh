#!/usr/bin/env bash
# Start the pinned Apache Kafka (pom.xml here) on loopback, print its address, hold it, stop it:
#   scripts/real/kafka/broker.sh [SCENARIO.toml] [--hold SECONDS]
# (SCENARIO's [broker.config] is applied). The first use resolves the release from Maven Central
# into ~/.m2. Exit 0 ok, 2 it did not start (the tail of its log is printed).
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/run.sh" broker "$@"
