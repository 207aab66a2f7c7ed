"""The server's Prometheus series, defined once per process (prometheus_client's registry).

Under `kvlake serve --workers N` prometheus_client keeps each worker's values in files of
PROMETHEUS_MULTIPROC_DIR, which `/metrics` sums (kvlake/api/observability.py). Nothing
here imports the rest of the API, so the services can meter the KV store with it.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from prometheus_client import Counter, Histogram

from kvlake.blockstore import BlobObserver
from kvlake.kv import Observer

_M = TypeVar("_M", Counter, Histogram)


class Children(Generic[_M]):
    """A labelled metric's children by their label values, each looked up once per process.

    prometheus_client's `labels()` validates the values and takes the metric's lock on every
    call, which the request path paid three times a request and twice a KV call. The label
    values here are bounded (operation ids, statuses, driver calls), so the map stays small.
    Thread-safe: a race looks a child up twice and gets the same child both times.
    """

    def __init__(self, metric: _M) -> None:
        self._metric: _M = metric
        self._children: dict[tuple[str, ...], _M] = {}

    def __call__(self, *values: str) -> _M:
        child = self._children.get(values)
        if child is None:
            child = self._children[values] = self._metric.labels(*values)
        return child


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

ACTION_HOOKS = Counter(
    "kvlake_action_hooks",
    "Action hooks run, by event type, hook type (lua, webhook) and outcome (passed, failed)",
    ["event", "type", "outcome"],
)


BLOCKSTORE_CALLS = Counter(
    "kvlake_blockstore_calls",
    "Blockstore adapter calls (a put, a read opened, a head, a listing, a batched delete),"
    " by adapter, call and outcome (ok, not_found, error)",
    ["adapter", "call", "outcome"],
)
BLOCKSTORE_SECONDS = Histogram(
    "kvlake_blockstore_call_duration_seconds",
    "Blockstore adapter call latency (a listing: the time spent inside the adapter), by"
    " adapter and call",
    ["adapter", "call"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
BLOCKSTORE_THROTTLED = Counter(
    "kvlake_blockstore_throttled",
    "Requests the object store answered 'slow down' (S3 503 SlowDown), by endpoint; each"
    " lowers the process's request rate to that endpoint (kvlake/blockstore/throttle.py)",
    ["endpoint"],
)


REQUESTS_BY = Children(REQUESTS)
REQUEST_SECONDS_BY = Children(REQUEST_SECONDS)
RESPONSE_BYTES_BY = Children(RESPONSE_BYTES)
KV_CALLS_BY = Children(KV_CALLS)
KV_SECONDS_BY = Children(KV_SECONDS)


def kv_observer(driver: str) -> Observer:
    """An observer for `MeteredStore` that feeds the KV series with `driver`'s label."""

    def observe(call: str, seconds: float, failed: bool) -> None:
        KV_CALLS_BY(driver, call, "error" if failed else "ok").inc()
        KV_SECONDS_BY(driver, call).observe(seconds)

    return observe


def blob_observer(adapter: str) -> BlobObserver:
    """An observer for `MeteredBlockStore` that feeds the blockstore series."""

    def observe(call: str, seconds: float, outcome: str) -> None:
        BLOCKSTORE_CALLS.labels(adapter, call, outcome).inc()
        BLOCKSTORE_SECONDS.labels(adapter, call).observe(seconds)

    return observe


def count_throttled(endpoint: str) -> None:
    """A throttle observer (kvlake/blockstore/throttle.py `observe_throttling`)."""
    BLOCKSTORE_THROTTLED.labels(endpoint).inc()


def count_hook(event_type: str, hook_type: str, outcome: str) -> None:
    """The actions service's hook observer (`Actions.observe_hooks`): one run counted."""
    ACTION_HOOKS.labels(event_type, hook_type, outcome).inc()
