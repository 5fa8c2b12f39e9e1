"""librdkafka's built-in mock cluster, reached through ctypes.

The confluent-kafka wheel bundles librdkafka, which exports the experimental rd_kafka_mock_* API
(confluentinc/librdkafka src/rdkafka_mock.h). A producer handle created with
`test.mock.num.brokers` owns a mock cluster whose brokers listen on localhost; its bootstrap
addresses are handed to the member and producer processes, which are ordinary clients.
The cluster lives as long as this object (and so the orchestrator process).
"""

from __future__ import annotations

import ctypes
import glob
import os
import time

import confluent_kafka


def _find_librdkafka() -> str:
    """The librdkafka shared object bundled next to the confluent_kafka package."""
    site = os.path.dirname(os.path.dirname(confluent_kafka.__file__))
    hits = sorted(glob.glob(os.path.join(site, "confluent_kafka.libs", "librdkafka*.so*")))
    if not hits:
        raise RuntimeError(f"no bundled librdkafka under {site}/confluent_kafka.libs")
    return hits[0]


def _declare(lib: ctypes.CDLL) -> None:
    """Argument and result types of the functions used (rdkafka.h, rdkafka_mock.h)."""
    vp, cp, i32 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32
    lib.rd_kafka_conf_new.restype = vp
    lib.rd_kafka_conf_set.argtypes = [vp, cp, cp, cp, ctypes.c_size_t]
    lib.rd_kafka_conf_set.restype = ctypes.c_int
    lib.rd_kafka_new.argtypes = [ctypes.c_int, vp, cp, ctypes.c_size_t]
    lib.rd_kafka_new.restype = vp
    lib.rd_kafka_destroy.argtypes = [vp]
    lib.rd_kafka_handle_mock_cluster.argtypes = [vp]
    lib.rd_kafka_handle_mock_cluster.restype = vp
    lib.rd_kafka_mock_cluster_handle.argtypes = [vp]
    lib.rd_kafka_mock_cluster_handle.restype = vp
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [vp]
    lib.rd_kafka_mock_cluster_bootstraps.restype = cp
    lib.rd_kafka_mock_topic_create.argtypes = [vp, cp, ctypes.c_int, ctypes.c_int]
    lib.rd_kafka_mock_topic_create.restype = ctypes.c_int
    lib.rd_kafka_mock_group_initial_rebalance_delay_ms.argtypes = [vp, i32]
    lib.rd_kafka_mock_set_group_consumer_session_timeout_ms.argtypes = [vp, ctypes.c_int]
    lib.rd_kafka_mock_set_group_consumer_heartbeat_interval_ms.argtypes = [vp, ctypes.c_int]
    lib.rd_kafka_mock_start_request_tracking.argtypes = [vp]
    lib.rd_kafka_mock_get_requests.argtypes = [vp, ctypes.POINTER(ctypes.c_size_t)]
    lib.rd_kafka_mock_get_requests.restype = ctypes.POINTER(vp)
    lib.rd_kafka_mock_request_api_key.argtypes = [vp]
    lib.rd_kafka_mock_request_api_key.restype = ctypes.c_int16
    lib.rd_kafka_mock_request_timestamp.argtypes = [vp]
    lib.rd_kafka_mock_request_timestamp.restype = ctypes.c_int64
    lib.rd_kafka_mock_request_destroy_array.argtypes = [ctypes.POINTER(vp), ctypes.c_size_t]


class MockCluster:
    """A running mock cluster with `brokers` brokers; `bootstraps` is its address list."""

    def __init__(self, brokers: int = 1) -> None:
        self._lib = ctypes.CDLL(_find_librdkafka())
        _declare(self._lib)
        conf = self._lib.rd_kafka_conf_new()
        err = ctypes.create_string_buffer(512)
        if self._lib.rd_kafka_conf_set(conf, b"test.mock.num.brokers", str(brokers).encode(), err, 512) != 0:
            raise RuntimeError(f"test.mock.num.brokers: {err.value.decode()}")
        self._rk = self._lib.rd_kafka_new(0, conf, err, 512)  # 0 = RD_KAFKA_PRODUCER
        if not self._rk:
            raise RuntimeError(f"rd_kafka_new: {err.value.decode()}")
        self._mc = self._lib.rd_kafka_handle_mock_cluster(self._rk)
        if not self._mc or self._lib.rd_kafka_mock_cluster_handle(self._mc) != self._rk:
            raise RuntimeError("the producer handle has no mock cluster")
        self.bootstraps: str = self._lib.rd_kafka_mock_cluster_bootstraps(self._mc).decode()

    def create_topic(self, name: str, partitions: int) -> None:
        """Create `name` with `partitions` partitions, replication factor 1."""
        rc = self._lib.rd_kafka_mock_topic_create(self._mc, name.encode(), partitions, 1)
        if rc != 0:
            raise RuntimeError(f"rd_kafka_mock_topic_create({name}): error {rc}")

    def set_initial_rebalance_delay_ms(self, delay_ms: int) -> None:
        """`group.initial.rebalance.delay.ms` of the classic coordinator (mock default 3000)."""
        self._lib.rd_kafka_mock_group_initial_rebalance_delay_ms(self._mc, int(delay_ms))

    def set_consumer_group_timeouts_ms(self, session_ms: int, heartbeat_ms: int) -> None:
        """KIP-848 `group.consumer.session.timeout.ms` / `heartbeat.interval.ms` (mock 30000/3000)."""
        self._lib.rd_kafka_mock_set_group_consumer_session_timeout_ms(self._mc, int(session_ms))
        self._lib.rd_kafka_mock_set_group_consumer_heartbeat_interval_ms(self._mc, int(heartbeat_ms))

    def start_request_tracking(self) -> None:
        """Record every request the brokers receive (api key, monotonic time)."""
        self._lib.rd_kafka_mock_start_request_tracking(self._mc)

    def requests(self, api_keys: set[int]) -> list[tuple[int, float]]:
        """Tracked requests of the given api keys as (api key, wall-clock time.time() seconds).

        The mock stamps requests with rd_clock() (CLOCK_MONOTONIC, microseconds), the clock of
        Python's time.monotonic() on Linux; the offset to wall-clock time is sampled here.
        """
        count = ctypes.c_size_t(0)
        reqs = self._lib.rd_kafka_mock_get_requests(self._mc, ctypes.byref(count))
        mono_to_wall = time.time() - time.monotonic()
        out = []
        for i in range(count.value):
            key = int(self._lib.rd_kafka_mock_request_api_key(reqs[i]))
            if key in api_keys:
                out.append((key, self._lib.rd_kafka_mock_request_timestamp(reqs[i]) / 1e6 + mono_to_wall))
        if reqs:
            self._lib.rd_kafka_mock_request_destroy_array(reqs, count.value)
        return sorted(out, key=lambda r: r[1])

    def close(self) -> None:
        """Destroy the handle and with it the cluster."""
        if self._rk:
            self._lib.rd_kafka_destroy(self._rk)
            self._rk = None
