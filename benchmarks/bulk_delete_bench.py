"""Bulk delete figures: N committed objects under a prefix, deleted by the local or spark engine.

For each KV driver (SQLite file, PostgreSQL when KVLAKE_TEST_POSTGRES_DSN answers) and each
size: a repository whose main branch commits N objects under `big/` (staged with
`Store.set_many` straight into the staging partition, as graveler_bench does, then committed),
plus a few objects outside the prefix. The bulk delete then runs in a freshly spawned process
(so its peak RSS is its own) with each engine asked for (`--engines local,spark`; Spark on
`local[2]`, its session started before the clock runs), and this prints objects/s, the time per
phase, the peak RSS, and beside it `Store.set_many` of N keys into a scratch partition of the
same store in the same run (the metadata write limit a tombstone per object is bound by).

    .venv/bin/python benchmarks/bulk_delete_bench.py --quick   # 20,000 objects, seconds
    .venv/bin/python benchmarks/bulk_delete_bench.py           # 100,000 and 1,000,000
    .venv/bin/python benchmarks/bulk_delete_bench.py --staged-only --sizes 200000
        # objects only staged (issue 26: one tombstone each, no whole ranges to hide)
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import queue
import sys
import tempfile
import threading
import time
import traceback
import uuid
from typing import Any

import psycopg
from psycopg import sql

from kvlake.blockstore import open_blockstore
from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.config import DeletionSettings, OperationsSettings, Settings, SparkSettings
from kvlake.graveler import keys
from kvlake.graveler.records import encode
from kvlake.kv import Store, open_store
from kvlake.lake import Lake
from kvlake.operations import BulkDeleteOptions, open_engine, parse_branch_path
from kvlake.pipelines import open_spark

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"
NAMESPACE = "local://repo1"
OUTSIDE = ("a/1", "bigger/1", "z/1")


def rss_mb(field: str) -> float:
    """`VmHWM` (peak) or `VmRSS` (now) of this process, in MB (see graveler_bench)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def settings(kv_url: str = "", blocks_url: str = "") -> Settings:
    return Settings(
        kv_url=kv_url,
        blockstore_url=blocks_url,
        operations=OperationsSettings(batch_size=10_000),
        deletion=DeletionSettings(send_delay=0.0),
        spark=SparkSettings(master="local[2]", conf="spark.ui.enabled=false"),
    )


def entry(i: int) -> bytes:
    address = f"data/20250101T00/{i:026d}"
    value = ObjectEntry(
        address=address, size=1024, checksum="0" * 32, mtime=1.7e9, content_type="x"
    )
    return encode(to_value(value))


def fill(store: Store, blocks_url: str, n: int, *, commit: bool = True) -> tuple[float, float]:
    """Stage N objects under big/ and commit them (unless `commit` is false: staged-only
    objects, a tombstone each); return (stage s, commit s)."""
    with open_blockstore(blocks_url) as blocks:
        lake = Lake(settings(), store, blocks)
        repo = lake.graveler.create_repository("repo1", storage_namespace=NAMESPACE)
        token = lake.graveler.get_branch(repo, "main").staging_token
        started = time.perf_counter()
        items = ((f"big/{i:09d}".encode(), entry(i)) for i in range(n))
        store.set_many(keys.staging_partition(token), items)
        store.set_many(keys.staging_partition(token), ((p.encode(), entry(0)) for p in OUTSIDE))
        staged = time.perf_counter() - started
        if not commit:
            return staged, 0.0
        started = time.perf_counter()
        lake.graveler.commit(repo, "main", committer="bench", message="data")
        return staged, time.perf_counter() - started


def delete_child(
    kv_url: str,
    blocks_url: str,
    engine_name: str,
    out: multiprocessing.Queue[Any],
    commit: bool = False,
) -> None:
    """Run one bulk delete of big/ with the engine; report figures (and, with `commit`,
    the time of committing the branch afterwards, which drops the range tombstones)."""
    try:
        with open_store(kv_url) as store, open_blockstore(blocks_url) as blocks:
            lake = Lake(settings(kv_url, blocks_url), store, blocks)
            if engine_name == "spark":
                open_spark(lake.settings.spark)  # the JVM starts outside the timing
            rss_before = rss_mb("VmRSS")
            started = time.perf_counter()
            operation = lake.bulk_deletes.create(
                parse_branch_path("lakefs://repo1/main/big/"),
                BulkDeleteOptions(engine=engine_name),
                created_by="bench",
            )
            engine = open_engine(engine_name, lake.engine_context(owner="bench"))
            final = engine.run(operation.id, threading.Event())
            seconds = time.perf_counter() - started
            repo = lake.graveler.get_repository("repo1")
            started = time.perf_counter()
            left = [k.decode() for k, _ in lake.graveler.list(repo, "main")]
            listed = time.perf_counter() - started
            committed = 0.0
            if commit:
                started = time.perf_counter()
                lake.graveler.commit(repo, "main", committer="bench", message="deleted")
                committed = time.perf_counter() - started
            out.put(
                (
                    "done",
                    {
                        "seconds": seconds,
                        "status": final.status,
                        "deleted": final.counters.deleted,
                        "left": left,
                        "rss_before": rss_before,
                        "rss_peak": rss_mb("VmHWM"),
                        "list_seconds": listed,
                        "commit_seconds": committed,
                    },
                )
            )
    except BaseException:  # noqa: BLE001 - reported to the parent, which fails loudly
        out.put(("error", traceback.format_exc()))


def set_many_seconds(store: Store, n: int) -> float:
    partition = b"bench_set_many/" + uuid.uuid4().hex.encode()
    started = time.perf_counter()
    store.set_many(partition, ((f"big/{i:09d}".encode(), b"") for i in range(n)))
    seconds = time.perf_counter() - started
    store.drop_partition(partition)
    return seconds


def run_one(
    name: str,
    kv_url: str,
    folder: str,
    n: int,
    engines: list[str],
    commit: bool = False,
    *,
    staged_only: bool = False,
) -> None:
    blocks_url = f"local://{folder}/blocks-{n}"
    with open_store(kv_url) as store:
        staged, committed = fill(store, blocks_url, n, commit=not staged_only)
        baseline = set_many_seconds(store, n)
    for engine in engines:
        if engine != engines[0]:  # the same committed objects again: reset the branch
            with open_store(kv_url) as store, open_blockstore(blocks_url) as blocks:
                lake = Lake(settings(), store, blocks)
                lake.graveler.resets.reset_branch(lake.graveler.get_repository("repo1"), "main")
        payload = _delete_in_child(kv_url, blocks_url, engine, commit)
        assert payload["status"] == "completed" and payload["deleted"] == n, payload
        assert payload["left"] == sorted(OUTSIDE), payload["left"][:5]
        _report(
            f"{name}{' staged-only' if staged_only else ''}",
            engine,
            n,
            payload,
            baseline,
            staged,
            committed,
        )


def _delete_in_child(kv_url: str, blocks_url: str, engine: str, commit: bool) -> dict[str, Any]:
    ctx = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue[Any] = ctx.Queue()
    child = ctx.Process(
        target=delete_child, args=(kv_url, blocks_url, engine, out, commit), daemon=True
    )
    child.start()
    while True:
        try:
            kind, payload = out.get(timeout=1.0)
            break
        except queue.Empty:
            if not child.is_alive():
                raise RuntimeError(f"child died ({child.exitcode})") from None
    child.join()
    if kind == "error":
        raise RuntimeError(payload)
    result: dict[str, Any] = payload
    return result


def _report(
    name: str,
    engine: str,
    n: int,
    payload: dict[str, Any],
    baseline: float,
    staged: float,
    committed: float,
) -> None:
    rate = n / payload["seconds"]
    print(
        f"{name:8} {engine:5} {n:>10,} objects: bulk delete {payload['seconds']:7.1f} s"
        f" = {rate:>9,.0f}/s;"
        f" Store.set_many of {n:,} keys {baseline:6.1f} s = {n / baseline:>9,.0f}/s;"
        f" peak RSS {payload['rss_peak']:,.0f} MB (at start {payload['rss_before']:,.0f} MB);"
        f" set-up: staged {staged:.1f} s, committed {committed:.1f} s;"
        f" afterwards: listing the branch {payload['list_seconds']:.1f} s"
        + (f", commit {payload['commit_seconds']:.1f} s" if payload["commit_seconds"] else ""),
        flush=True,
    )


def postgres_url(dsn: str, table: str) -> str | None:
    try:
        with psycopg.connect(dsn, connect_timeout=3):
            pass
    except psycopg.Error as exc:
        print(f"postgres skipped: {exc}", file=sys.stderr)
        return None
    return f"{dsn}{'&' if '?' in dsn else '?'}table={table}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated")
    parser.add_argument("--quick", action="store_true", help="one size of 20,000")
    parser.add_argument("--drivers", default="sqlite,postgres")
    parser.add_argument("--engines", default="local", help="comma-separated: local,spark")
    parser.add_argument(
        "--commit", action="store_true", help="time a commit after the delete (one engine)"
    )
    parser.add_argument(
        "--staged-only",
        action="store_true",
        help="objects only staged, never committed (one tombstone each; no whole ranges)",
    )
    args = parser.parse_args()
    sizes = [20_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    dsn = os.environ.get("KVLAKE_TEST_POSTGRES_DSN", DEFAULT_DSN)
    engines = args.engines.split(",")
    if args.commit and len(engines) > 1:
        parser.error("--commit takes one engine: a commit cannot be reset for the next one")
    for driver in args.drivers.split(","):
        for n in sizes:
            with tempfile.TemporaryDirectory(prefix="bulk-bench-") as folder:
                if driver == "sqlite":
                    run_one(
                        driver,
                        f"sqlite://{folder}/kv.db",
                        folder,
                        n,
                        engines,
                        args.commit,
                        staged_only=args.staged_only,
                    )
                    continue
                table = f"bulk_bench_{uuid.uuid4().hex[:12]}"
                url = postgres_url(dsn, table)
                if url is None:
                    break
                try:
                    run_one(
                        driver, url, folder, n, engines, args.commit, staged_only=args.staged_only
                    )
                finally:
                    with psycopg.connect(dsn, autocommit=True) as conn:
                        conn.execute(
                            sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table))
                        )


if __name__ == "__main__":
    main()
