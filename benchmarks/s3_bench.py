"""The s3 blockstore against the same boto3 calls made directly, then a throttled sweep.

Both run against moto's S3 server on loopback, started here (`moto[server]`, a
dev dependency), so the figures compare kvlake's overhead, not a network.

1. Overhead: put, ranged read, list and DeleteObjects through `S3BlockStore`
   beside the plain boto3 calls doing the same work in the same run.
2. Scale: N one-byte blobs put by 32 threads into 100 hourly slices
   (`data/<hour>/`, the catalog's address layout), then listed: as one
   `list_keys` stream, and by slice with `list_blobs` (1 and 8 at once).
3. A sweep: those N blobs deleted by 8 threads through `delete_many` (as
   deletion workers do), behind a proxy that answers `SlowDown` to
   DeleteObjects beyond a fixed rate, the way S3 throttles a prefix. It must
   finish with nothing left and every key deleted; the shared rate limiter's
   rate is printed over time.

    .venv/bin/python benchmarks/s3_bench.py --quick    # 10,000 blobs, about two minutes
    .venv/bin/python benchmarks/s3_bench.py            # 100,000 blobs, about 15 minutes
"""

from __future__ import annotations

import argparse
import http.client
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from moto.server import ThreadedMotoServer

from kvlake.blockstore.s3 import S3BlockStore
from kvlake.blockstore.s3.client import S3Location, make_client
from kvlake.blockstore.throttle import AdaptiveRateLimiter

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import ObjectIdentifierTypeDef

BUCKET: Final = "bench"
NS: Final = f"s3://{BUCKET}/sweep"
SERVER_LIMIT: Final = 2000.0
"""Deleted keys per second the throttling proxy lets through (S3 counts each key of a
DeleteObjects against a prefix's 3,500 writes per second)."""


class ThrottlingProxy:
    """Forwards to the S3 server; answers 503 SlowDown to DeleteObjects above a key rate."""

    def __init__(self, upstream: str, limit: float) -> None:
        target = urlsplit(upstream)
        lock = threading.Lock()
        state = {"next": time.monotonic(), "throttled": 0.0}

        def allowed(keys: int) -> bool:
            with lock:
                now = time.monotonic()
                if now < state["next"]:
                    state["throttled"] += 1
                    return False
                state["next"] = max(now, state["next"]) + keys / limit
                return True

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _handle(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                deleting = self.command == "POST" and "?delete" in self.path
                if deleting and not allowed(body.count(b"<Key>")):
                    data = b"<Error><Code>SlowDown</Code><Message>slow down</Message></Error>"
                    self.send_response(503)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                connection = http.client.HTTPConnection(target.hostname or "", target.port)
                connection.request(self.command, self.path, body, dict(self.headers))
                answer = connection.getresponse()
                data = answer.read()
                connection.close()
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

        self.state = state
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        self._server.shutdown()


def best_of(rounds: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def overhead(store: S3BlockStore, client: S3Client, n: int) -> None:
    """Each operation through the adapter and as the same boto3 calls, best of 3."""
    body = b"x" * 4096
    keys = [f"o/{i:06d}" for i in range(n)]
    rows = [
        (
            "put 4 KiB",
            lambda: [store.put(NS, k, body) for k in keys],
            lambda: [client.put_object(Bucket=BUCKET, Key=f"sweep/{k}", Body=body) for k in keys],
        ),
        (
            "ranged read 1 KiB",
            lambda: [store.open_reader(NS, k, start=100, end=1124).read() for k in keys],
            lambda: [
                client.get_object(Bucket=BUCKET, Key=f"sweep/{k}", Range="bytes=100-1123")[
                    "Body"
                ].read()
                for k in keys
            ],
        ),
        (
            "list (keys/s)",
            lambda: list(store.list_keys(NS, "o/")),
            lambda: [
                entry["Key"]
                for page in client.get_paginator("list_objects_v2").paginate(
                    Bucket=BUCKET, Prefix="sweep/o/"
                )
                for entry in page.get("Contents", [])
            ],
        ),
    ]
    print(f"\noverhead, {n} objects, best of 3 (ops/s; 1.00x = no overhead)")
    print(f"{'operation':<20} {'kvlake':>10} {'boto3':>10} {'ratio':>7}")
    for name, ours, theirs in rows:
        mine, raw = best_of(3, ours), best_of(3, theirs)
        print(f"{name:<20} {n / mine:>10,.0f} {n / raw:>10,.0f} {mine / raw:>6.2f}x")

    def delete_raw() -> None:
        for start in range(0, n, 1000):
            objects: list[ObjectIdentifierTypeDef] = [
                {"Key": f"sweep/{k}"} for k in keys[start : start + 1000]
            ]
            client.delete_objects(Bucket=BUCKET, Delete={"Objects": objects, "Quiet": True})

    mine = best_of(3, lambda: store.delete_many(NS, keys) and None)
    raw = best_of(3, delete_raw)
    print(f"{'DeleteObjects':<20} {n / mine:>10,.0f} {n / raw:>10,.0f} {mine / raw:>6.2f}x")


HOURS: Final = 100
"""Time slices the scale run spreads its blobs over, as `data/<hour>/` of the address layout."""


def scale(store: S3BlockStore, n: int) -> list[str]:
    """Put n one-byte blobs (32 threads), then list them: sequentially, and by time slice."""
    first = 1_704_067_200  # 2024-01-01T00:00Z
    hours = [time.strftime("data/%Y%m%dT%H/", time.gmtime(first + h * 3600)) for h in range(HOURS)]
    keys = [f"{hours[i % HOURS]}{i:07d}" for i in range(n)]
    start = time.perf_counter()
    with ThreadPoolExecutor(32) as pool:
        list(pool.map(lambda k: store.put(NS, k, b"x"), keys))
    elapsed = time.perf_counter() - start
    print(f"\nscale: {n:,} blobs over {HOURS} hourly slices")
    print(f"{'operation':<34} {'seconds':>8} {'blobs/s':>9}")
    print(f"{'put (32 threads)':<34} {elapsed:>8.1f} {n / elapsed:>9,.0f}")
    start = time.perf_counter()
    listed = sum(1 for _ in store.list_keys(NS, "data/"))
    elapsed = time.perf_counter() - start
    print(f"{'list_keys data/ (one stream)':<34} {elapsed:>8.1f} {listed / elapsed:>9,.0f}")
    for parallel in (1, 8):
        start = time.perf_counter()
        found = sum(blob.size for blob in store.list_blobs(NS, hours, parallel=parallel))
        elapsed = time.perf_counter() - start
        name = f"list_blobs by slice, parallel={parallel}"
        print(f"{name:<34} {elapsed:>8.1f} {found / elapsed:>9,.0f}")
    if listed != n or found != n:
        raise SystemExit(f"listed {listed} and {found} blobs of {n}")
    return keys


def sweep(
    store: S3BlockStore, limiter: AdaptiveRateLimiter, proxy: ThrottlingProxy, keys: list[str]
) -> None:
    """Delete `keys` (already stored) with 8 threads behind the throttling proxy."""
    n = len(keys)
    print(f"\nsweep: deleting {n:,} blobs with 8 threads, server limit {SERVER_LIMIT:,.0f} keys/s")
    samples: list[tuple[float, float, float]] = []
    done = threading.Event()
    start = time.perf_counter()

    def sample() -> None:
        while not done.wait(0.5):
            samples.append((time.perf_counter() - start, limiter.rate, proxy.state["throttled"]))

    sampler = threading.Thread(target=sample)
    sampler.start()
    chunks = [keys[i : i + 1000] for i in range(0, n, 1000)]
    with ThreadPoolExecutor(8) as pool:
        failures = [
            f for result in pool.map(lambda c: store.delete_many(NS, c), chunks) for f in result
        ]
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    left = sum(1 for _ in store.list_keys(NS, "data/"))
    print(f"{'t (s)':>6} {'rate (req/s)':>13} {'SlowDowns so far':>17}")
    step = max(1, len(samples) // 20)
    for t, rate, throttled in samples[::step]:
        print(f"{t:>6.1f} {rate:>13,.1f} {throttled:>17,.0f}")
    print(
        f"done in {elapsed:.1f} s ({n / elapsed:,.0f} blobs/s): {len(failures)} failed,"
        f" {left} left, {limiter.throttled} SlowDowns answered, final rate {limiter.rate:,.1f}/s"
    )
    if failures or left:
        raise SystemExit("the sweep lost blobs or left some behind")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 blobs instead of 100,000")
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    for name, value in (
        ("AWS_ACCESS_KEY_ID", "bench"),
        ("AWS_SECRET_ACCESS_KEY", "bench"),
        ("AWS_REGION", "us-east-1"),
    ):
        os.environ.setdefault(name, value)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    client = make_client(S3Location(root=BUCKET, endpoint_url=endpoint))
    client.create_bucket(Bucket=BUCKET)
    limiter = AdaptiveRateLimiter()
    store = S3BlockStore(client, root=BUCKET, limiter=limiter)
    overhead(store, client, 200 if args.quick else 1000)
    keys = scale(store, 10_000 if args.quick else 100_000)
    proxy = ThrottlingProxy(endpoint, SERVER_LIMIT)
    swept = AdaptiveRateLimiter()
    throttled = S3BlockStore(
        make_client(S3Location(root=BUCKET, endpoint_url=proxy.endpoint)),
        root=BUCKET,
        limiter=swept,
    )
    sweep(throttled, swept, proxy, keys)
    proxy.stop()
    server.stop()


if __name__ == "__main__":
    main()
