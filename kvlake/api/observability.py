"""What an operator sees of a running server: `/metrics`, the access log, and log format.

`/metrics` is Prometheus's text format through `prometheus_client`. Under
`kvlake serve --workers N` every worker writes its samples to the folder named by
PROMETHEUS_MULTIPROC_DIR (set by `serve` before any worker starts) and a scrape,
answered by any worker, sums them all, so counters match what the whole server
did. Gauges that describe the stores (deletion log depth, operations) are read from
the KV at scrape time, the same from every worker.

The access log is one line per request (time, user, operation id, status, bytes,
duration) on the `kvlake.access` logger, as text or JSON after KVLAKE_LOG_FORMAT.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, Final

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kvlake.api.metrics import REQUEST_SECONDS_BY, REQUESTS_BY, RESPONSE_BYTES_BY
from kvlake.api.routing import OPERATION_SCOPE_KEY, USER_SCOPE_KEY
from kvlake.config import Settings
from kvlake.deletion import DeletionLog, deletion_status
from kvlake.operations import Ledger

MULTIPROCESS_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"
ACCESS_LOGGER: Final = "kvlake.access"


def operation_of(scope: Scope) -> str:
    """The operation a request was routed to: the API's operation id, `s3` for the gateway,
    or `unknown` for what matched nothing."""
    operation = scope.get(OPERATION_SCOPE_KEY)
    if isinstance(operation, str):
        return operation
    path = scope.get("path", "")
    if path == "/metrics":
        return "metrics"
    return "unknown" if path.startswith("/api/") else "s3"


class Observed:
    """ASGI middleware: counts and times every HTTP request and writes its access log line."""

    def __init__(self, app: ASGIApp, *, access_log: bool) -> None:
        self.app = app
        self.access_log = access_log
        self.log = logging.getLogger(ACCESS_LOGGER)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        sent = 0

        async def observe(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, observe)
        finally:
            seconds = time.perf_counter() - started
            operation = operation_of(scope)
            REQUESTS_BY(operation, str(status)).inc()
            REQUEST_SECONDS_BY(operation).observe(seconds)
            RESPONSE_BYTES_BY(operation).inc(sent)
            if self.access_log and self.log.isEnabledFor(logging.INFO):
                # The record is made here, not by `info()`: that walks the stack for the
                # caller's file and line, which the line never shows, on the event loop.
                access = {
                    "user": scope.get(USER_SCOPE_KEY, ""),
                    "operation": operation,
                    "method": scope.get("method", ""),
                    "path": scope.get("path", ""),
                    "status": status,
                    "bytes": sent,
                    "duration": round(seconds, 6),
                }
                self.log.handle(
                    self.log.makeRecord(
                        ACCESS_LOGGER,
                        logging.INFO,
                        "",
                        0,
                        "access",
                        (),
                        None,
                        extra={"access": access},
                    )
                )


_Family = type[GaugeMetricFamily] | type[CounterMetricFamily]


class DeletionCollector(Collector):
    """The deletion log's depth and its workers' counters, read from the KV at scrape time:
    the same answer from every worker, and right after a restart."""

    def __init__(self, log: DeletionLog) -> None:
        self.log = log

    def collect(self) -> Iterator[Metric]:
        status = deletion_status(self.log)
        # Each series is the PartitionStatus field of the same name, one sample a partition.
        families: list[tuple[str, _Family, str]] = [
            ("pending", GaugeMetricFamily, "Blob deletions waiting in the log"),
            ("due", GaugeMetricFamily, "Pending blob deletions whose time has come"),
            ("deleted", CounterMetricFamily, "Blobs deleted (not found counts)"),
            ("retried", CounterMetricFamily, "Records rescheduled: in use or failed"),
            ("dead_lettered", CounterMetricFamily, "Records moved to the dead letters"),
            ("kept", CounterMetricFamily, "Records dropped, blob still referenced"),
        ]
        leased = GaugeMetricFamily(
            "kvlake_deletion_leased",
            "1 if a worker holds the partition's lease",
            labels=["partition"],
        )
        for partition in status.partitions:
            leased.add_metric([str(partition.number)], int(partition.leased(status.now)))
        yield leased
        for name, kind, text in families:
            family = kind(f"kvlake_deletion_{name}", text, labels=["partition"])
            for partition in status.partitions:
                family.add_metric([str(partition.number)], getattr(partition, name))
            yield family
        yield GaugeMetricFamily(
            "kvlake_deletion_dead_letters",
            "Records in the dead letters, awaiting an operator",
            value=status.dead_letters,
        )
        yield GaugeMetricFamily(
            "kvlake_deletion_oldest_pending_age_seconds",
            "How long the oldest pending record has waited",
            value=status.oldest_pending_age,
        )


class OperationsCollector(Collector):
    """Long-running operations from the KV at scrape time: how many of each kind are in
    each status, and the counters of those still running (their progress)."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def collect(self) -> Iterator[Metric]:
        counts: dict[tuple[str, str], int] = {}
        running = {"enumerated": 0, "deleted": 0, "failed": 0, "skipped": 0}
        for operation in self.ledger.list():
            key = (operation.kind, operation.status)
            counts[key] = counts.get(key, 0) + 1
            if not operation.finished:
                for name in running:
                    running[name] += getattr(operation.counters, name)
        by_status = GaugeMetricFamily(
            "kvlake_operations",
            "Long-running operations, by kind and status",
            labels=["kind", "status"],
        )
        for (kind, status), count in sorted(counts.items()):
            by_status.add_metric([kind, status], count)
        yield by_status
        progress = GaugeMetricFamily(
            "kvlake_operations_running_items",
            "Items of unfinished operations so far, by counter (enumerated, deleted, ...)",
            labels=["counter"],
        )
        for name, value in running.items():
            progress.add_metric([name], value)
        yield progress


def metrics_endpoint(collectors: Callable[[], list[Collector]]) -> Callable[..., Any]:
    """The `/metrics` handler: this process's samples (every worker's in multiprocess
    mode) and the store collectors `collectors()` gives (once the services are open)."""

    async def metrics(request: Request) -> Response:
        folder = os.environ.get(MULTIPROCESS_ENV)
        if folder:
            registry = CollectorRegistry()
            MultiProcessCollector(registry, path=folder)  # type: ignore[no-untyped-call]
            body = generate_latest(registry)
        else:
            body = generate_latest(REGISTRY)
        stores = CollectorRegistry(auto_describe=False)
        for collector in collectors():
            stores.register(collector)
        # Reading the stores blocks: off the event loop, as the API's handlers are.
        body += await asyncio.get_running_loop().run_in_executor(None, generate_latest, stores)
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    return metrics


class _Formatter(logging.Formatter):
    """Text or JSON lines; access records carry their fields in `access`."""

    def __init__(self, as_json: bool) -> None:
        super().__init__()
        self.as_json = as_json

    def format(self, record: logging.LogRecord) -> str:
        when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        when += f".{int(record.msecs):03d}Z"
        access: dict[str, Any] | None = getattr(record, "access", None)
        if self.as_json:
            line: dict[str, Any] = {"time": when, "level": record.levelname}
            line |= access if access is not None else {"logger": record.name}
            if access is None:
                line["message"] = record.getMessage()
                if record.exc_info:
                    line["traceback"] = self.formatException(record.exc_info)
            return json.dumps(line)
        if access is not None:
            return (
                f"{when} {access['method']} {access['path']} {access['status']}"
                f" user={access['user'] or '-'} operation={access['operation']}"
                f" bytes={access['bytes']} duration={access['duration']:.6f}s"
            )
        text = f"{when} {record.levelname} {record.name}: {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def configure_logging(settings: Settings) -> None:
    """Route kvlake's logs to stderr at KVLAKE_LOG_LEVEL and the access log to stdout, both
    in KVLAKE_LOG_FORMAT. Idempotent: each process calls it once it knows its settings."""
    formatter = _Formatter(settings.log_format == "json")
    root = logging.getLogger("kvlake")
    root.setLevel(settings.log_level)
    for logger, stream in ((root, sys.stderr), (logging.getLogger(ACCESS_LOGGER), sys.stdout)):
        for handler in list(logger.handlers):
            if getattr(handler, "kvlake", False):
                logger.removeHandler(handler)
        handler = logging.StreamHandler(stream)
        handler.kvlake = True  # type: ignore[attr-defined]
        handler.setFormatter(formatter)
        logger.addHandler(handler)
    access = logging.getLogger(ACCESS_LOGGER)
    access.setLevel(logging.INFO)  # its own switch is KVLAKE_SERVER_ACCESS_LOG, not the level
    access.propagate = False
    root.propagate = False
