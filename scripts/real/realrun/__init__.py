"""realrun: run a rebalance-sim scenario for real against Kafka or librdkafka's mock cluster.

Modules: `scenario` (TOML parsing), `mock` (the mock cluster through ctypes), `member` (one
consumer process), `producer` (the load), `recorder` (JSON-lines record files), `metrics`
(DESIGN section 5 metrics from a record), `runner` (one scenario run), `__main__` (the CLI).
"""
