"""The server's Prometheus series, defined once per process (prometheus_client's registry).

Under `kvlake serve --workers N` prometheus_client keeps each worker's values in files of
PROMETHEUS_MULTIPROC_DIR, which `/metrics` sums (kvlake/api/observability.py). Nothing
here imports the rest of the API, so the services can meter the KV store with it.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from kvlake.kv import Observer

REQUESTS = Counter(
    "kvlake_requests", "HTTP requests answered, by operation and status", ["operation", "status"]
)
REQUEST_SECONDS = Histogram(
    "kvlake_request_duration_seconds",
    "Time from a request's head to its response's last byte, by operation",
    ["operation"],
)
RESPONSE_BYTES = Counter(
    "kvlake_response_bytes", "Response body bytes sent, by operation", ["operation"]
)
KV_CALLS = Counter(
    "kvlake_kv_calls",
    "KV driver calls (a point operation, a scan page, a batch chunk), by driver, call, outcome",
    ["driver", "call", "outcome"],
)
KV_SECONDS = Histogram(
    "kvlake_kv_call_duration_seconds",
    "KV driver call latency, by driver and call",
    ["driver", "call"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)


def kv_observer(driver: str) -> Observer:
    """An observer for `MeteredStore` that feeds the KV series with `driver`'s label."""

    def observe(call: str, seconds: float, failed: bool) -> None:
        KV_CALLS.labels(driver, call, "error" if failed else "ok").inc()
        KV_SECONDS.labels(driver, call).observe(seconds)

    return observe
