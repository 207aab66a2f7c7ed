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
    .venv/bin/python benchmarks/compare_commits.py main --rounds 2 -- \
        benchmarks/bulk_delete_bench.py --staged-only --sizes 200000 --drivers sqlite
        # the same on main and on this tree, back to back (`--json` writes the rates)

Issue 26's scale (docs/performance.md "Bulk delete"); `--direct` writes the committed ranges
straight (`fill_direct`: no staging, no KV row and no blob per object), so 50M objects are
~12,200 range files and a few GB on disk; `--tmp-dir` puts them on a disk, not in RAM:

    .venv/bin/python benchmarks/bulk_delete_bench.py --direct --commit \
        --sizes 1000000,50000000 --tmp-dir /work/tmp-bench50m
        # the delete, the branch listing afterwards (first page, all of it) and the commit,
        # with the range files each looked up and the peak RSS at each size
    .venv/bin/python benchmarks/bulk_delete_bench.py --metadata-filter --commit --sizes 1000000
        # filters.metadata takes every other object: a tombstone each
    .venv/bin/python benchmarks/bulk_delete_bench.py --concurrent 10000000,10000 [--big-filtered]
        # two big deletes and twenty small ones at once through the lake's runner
        # (KVLAKE_OPERATIONS_CONCURRENCY); when each one finished
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import queue
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Iterator
from itertools import islice
from typing import Any, NamedTuple

import msgspec
import psycopg
from psycopg import sql

from kvlake.blockstore import open_blockstore
from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.config import (
    DeletionSettings,
    OperationsSettings,
    Settings,
    SparkSettings,
    default_operations_concurrency,
)
from kvlake.graveler import keys
from kvlake.graveler.records import Value, encode
from kvlake.kv import Store, open_store
from kvlake.lake import Lake
from kvlake.operations import BulkDeleteOptions, Filters, open_engine, parse_branch_path
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


def committed_value(i: int = 0, metadata: dict[str, str] | None = None) -> Value:
    """A committed object's value (its blob is never written: `--direct` data)."""
    value = ObjectEntry(
        address=f"data/20250101T00/{i:026d}",
        size=1024,
        checksum="0" * 32,
        mtime=1.7e9,
        content_type="x",
        metadata=metadata or {},
    )
    return to_value(value)


def direct_entries(n: int, *, labelled: bool = False) -> Iterator[tuple[bytes, Value]]:
    """N objects under big/ and the few outside it, in key order. With `labelled`, every
    other object carries `label=x` (the rest `label=y`): a metadata filter takes half."""
    plain = committed_value()
    values = (
        (committed_value(0, {"label": "x"}), committed_value(1, {"label": "y"}))
        if labelled
        else (plain, plain)
    )
    yield OUTSIDE[0].encode(), plain
    yield from ((b"big/%09d" % i, values[i & 1]) for i in range(n))
    yield from ((path.encode(), plain) for path in OUTSIDE[1:])


def fill_direct(
    store: Store, blocks_url: str, n: int, *, labelled: bool = False, repository: str = "repo1"
) -> float:
    """Commit N objects under big/ by writing their ranges straight into the committed store
    (no staging, no KV row per object, no blob): how 50M objects fit this machine. Returns s."""
    with open_blockstore(blocks_url) as blocks:
        lake = Lake(settings(), store, blocks)
        namespace = f"local://{repository}"
        repo = lake.graveler.create_repository(repository, storage_namespace=namespace)
        started = time.perf_counter()
        metarange_id = lake.graveler.committed.write_metarange(
            namespace, direct_entries(n, labelled=labelled)
        )
        lake.graveler.commit(
            repo, "main", committer="bench", message="data", source_metarange=metarange_id
        )
        return time.perf_counter() - started


def range_lookups(lake: Lake) -> int:
    """Range files read or served from cache so far: what O(ranges) work is counted by."""
    stats = lake.graveler.committed.stats
    return stats.range_reads + stats.range_cache_hits


FIRST_PAGE = 1000
"""Entries in the first page of a listing (lakeFS's default `amount`)."""


def delete_child(
    kv_url: str,
    blocks_url: str,
    engine_name: str,
    out: multiprocessing.Queue[Any],
    commit: bool = False,
    filters: dict[str, str] | None = None,
) -> None:
    """Run one bulk delete of big/ with the engine (only objects whose metadata matches
    `filters`, when given); report figures: the listing of the branch afterwards (its first
    page, then the whole of it) and, with `commit`, the commit that drops the range
    tombstones, each with the range files it looked up (O(ranges) of what is left)."""
    try:
        with open_store(kv_url) as store, open_blockstore(blocks_url) as blocks:
            lake = Lake(settings(kv_url, blocks_url), store, blocks)
            if engine_name == "spark":
                open_spark(lake.settings.spark)  # the JVM starts outside the timing
            rss_before = rss_mb("VmRSS")
            started = time.perf_counter()
            options = BulkDeleteOptions(engine=engine_name)
            if filters:
                options = BulkDeleteOptions(engine=engine_name, filters=Filters(metadata=filters))
            operation = lake.bulk_deletes.create(
                parse_branch_path("lakefs://repo1/main/big/"), options, created_by="bench"
            )
            engine = open_engine(engine_name, lake.engine_context(owner="bench"))
            final = engine.run(operation.id, threading.Event())
            seconds = time.perf_counter() - started
            rss_deleted = rss_mb("VmHWM")
            repo = lake.graveler.get_repository("repo1")
            lookups = range_lookups(lake)
            started = time.perf_counter()
            page = [k.decode() for k, _ in islice(lake.graveler.list(repo, "main"), FIRST_PAGE)]
            first_page = time.perf_counter() - started
            started = time.perf_counter()
            listed = 0
            left: list[str] = []
            for key, _ in lake.graveler.list(repo, "main"):
                listed += 1
                if len(left) < FIRST_PAGE:
                    left.append(key.decode())
            list_seconds = time.perf_counter() - started
            list_lookups = range_lookups(lake) - lookups
            rss_listed = rss_mb("VmHWM")
            committed = 0.0
            commit_lookups = 0
            if commit:
                lookups = range_lookups(lake)
                started = time.perf_counter()
                lake.graveler.commit(repo, "main", committer="bench", message="deleted")
                committed = time.perf_counter() - started
                commit_lookups = range_lookups(lake) - lookups
            out.put(
                (
                    "done",
                    {
                        "seconds": seconds,
                        "status": final.status,
                        "deleted": final.counters.deleted,
                        "left": left,
                        "listed": listed,
                        "first_page": page == left[:FIRST_PAGE] and first_page,
                        "rss_before": rss_before,
                        "rss_deleted": rss_deleted,
                        "rss_listed": rss_listed,
                        "rss_peak": rss_mb("VmHWM"),
                        "list_seconds": list_seconds,
                        "list_lookups": list_lookups,
                        "commit_seconds": committed,
                        "commit_lookups": commit_lookups,
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


class Mode(NamedTuple):
    """How a run builds its data and what it deletes."""

    commit: bool = False
    staged_only: bool = False
    direct: bool = False
    """Committed data written straight as ranges (`fill_direct`), not staged and committed."""
    labelled: bool = False
    """Delete by a metadata filter (`label=x`: every other object), over direct data."""


Figures = dict[str, dict[str, float]]
"""`--json`'s figures: scenario -> metric -> value (benchmarks/compare_commits.py reads them)."""


def run_one(name: str, kv_url: str, folder: str, n: int, engines: list[str], mode: Mode) -> Figures:
    figures: Figures = {}
    blocks_url = f"local://{folder}/blocks-{n}"
    with open_store(kv_url) as store:
        if mode.direct or mode.labelled:
            staged, committed = 0.0, fill_direct(store, blocks_url, n, labelled=mode.labelled)
        else:
            staged, committed = fill(store, blocks_url, n, commit=not mode.staged_only)
        baseline = set_many_seconds(store, min(n, SET_MANY_CAP))
    filters = {"label": "x"} if mode.labelled else None
    deleted = (n + 1) // 2 if mode.labelled else n
    for engine in engines:
        if engine != engines[0]:  # the same committed objects again: reset the branch
            with open_store(kv_url) as store, open_blockstore(blocks_url) as blocks:
                lake = Lake(settings(), store, blocks)
                lake.graveler.resets.reset_branch(lake.graveler.get_repository("repo1"), "main")
        payload = _delete_in_child(kv_url, blocks_url, engine, mode.commit, filters)
        assert payload["status"] == "completed" and payload["deleted"] == deleted, payload
        assert payload["listed"] == n - deleted + len(OUTSIDE), payload["listed"]
        if not mode.labelled:
            assert payload["left"] == sorted(OUTSIDE), payload["left"][:5]
        label = " staged-only" if mode.staged_only else " metadata" if mode.labelled else ""
        _report(f"{name}{label}", engine, n, deleted, payload, baseline, staged, committed)
        figures[f"{name}{label} {engine} {n}"] = {
            "objects/s": n / payload["seconds"],
            "set_many/s": min(n, SET_MANY_CAP) / baseline,
        }
    return figures


SET_MANY_CAP = 1_000_000
"""The `Store.set_many` baseline writes at most this many keys (its rate is flat by then;
50M rows would only fill the disk)."""


def _delete_in_child(
    kv_url: str, blocks_url: str, engine: str, commit: bool, filters: dict[str, str] | None
) -> dict[str, Any]:
    ctx = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue[Any] = ctx.Queue()
    child = ctx.Process(
        target=delete_child,
        args=(kv_url, blocks_url, engine, out, commit, filters),
        daemon=True,
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
    deleted: int,
    payload: dict[str, Any],
    baseline_keys: float,
    staged: float,
    committed: float,
) -> None:
    rate = n / payload["seconds"]  # objects the delete looked at (all, with a filter)
    base_n = min(n, SET_MANY_CAP)
    total = payload["seconds"] + payload["list_seconds"] + payload["commit_seconds"]
    print(
        f"{name:8} {engine:5} {n:>10,} objects: bulk delete {payload['seconds']:7.1f} s"
        f" = {rate:>9,.0f} objects/s ({deleted:,} deleted"
        f" = {deleted / payload['seconds']:,.0f}/s);"
        f" Store.set_many of {base_n:,} keys {baseline_keys:6.1f} s"
        f" = {base_n / baseline_keys:>9,.0f}/s;"
        f" peak RSS {payload['rss_peak']:,.0f} MB (at start {payload['rss_before']:,.0f} MB,"
        f" after the delete {payload['rss_deleted']:,.0f}, after listing"
        f" {payload['rss_listed']:,.0f});"
        f" set-up: staged {staged:.1f} s, committed {committed:.1f} s;"
        f" afterwards: listing the branch: first page {payload['first_page']:.2f} s,"
        f" all {payload['listed']:,} entries {payload['list_seconds']:.1f} s"
        f" ({payload['list_lookups']:,} range lookups)"
        + (
            f", commit {payload['commit_seconds']:.1f} s"
            f" ({payload['commit_lookups']:,} range lookups);"
            f" delete + listing + commit {total:.1f} s"
            if payload["commit_seconds"]
            else ""
        ),
        flush=True,
    )


def run_concurrent(
    name: str,
    kv_url: str,
    folder: str,
    big: int,
    small: int,
    bigs: int,
    smalls: int,
    *,
    big_filtered: bool = False,
) -> None:
    """`bigs` deletes of `big` committed objects and `smalls` of `small` at once, through the
    lake's own runner (`KVLAKE_OPERATIONS_CONCURRENCY` threads, fair between creators): the
    big ones by one creator, the small ones by five others, all created before the runner
    starts, big ones first. Prints when each finished after it was created. With
    `big_filtered`, the big ones take every other object by `filters.metadata`: a tombstone
    each, minutes of work, where whole ranges take seconds."""
    blocks_url = f"local://{folder}/blocks-concurrent"
    plan = [(f"big{i}", big, "ingest") for i in range(bigs)]
    plan += [(f"small{i}", small, f"user{i % 5}") for i in range(smalls)]
    concurrency = int(os.environ.get("KVLAKE_OPERATIONS_CONCURRENCY", "0")) or (
        default_operations_concurrency()
    )
    with open_store(kv_url) as store:
        started = time.perf_counter()
        for repository, n, _ in plan:
            labelled = big_filtered and n == big
            fill_direct(store, blocks_url, n, repository=repository, labelled=labelled)
        print(
            f"{name}: {len(plan)} repositories committed in {time.perf_counter() - started:.1f} s"
        )
        base = set_many_seconds(store, small)
        with open_blockstore(blocks_url) as blocks:
            lake_settings = msgspec.structs.replace(
                settings(kv_url, blocks_url),
                operations=OperationsSettings(batch_size=10_000, concurrency=concurrency),
            )
            lake = Lake(lake_settings, store, blocks)
            created: dict[str, tuple[str, int, float]] = {}
            for repository, n, creator in plan:
                operation = lake.bulk_deletes.create(
                    parse_branch_path(f"lakefs://{repository}/main/big/"),
                    BulkDeleteOptions(filters=Filters(metadata={"label": "x"}))
                    if big_filtered and n == big
                    else BulkDeleteOptions(),
                    created_by=creator,
                    creator=creator,
                )
                created[operation.id] = (repository, n, time.perf_counter())
            stop = threading.Event()
            runner = threading.Thread(
                target=lake.operations.run, args=(stop,), kwargs={"interval": 0.05}, daemon=True
            )
            clock = time.perf_counter()
            runner.start()
            finished: dict[str, float] = {}
            try:
                while len(finished) < len(created):
                    for operation in lake.ledger.list():
                        if operation.id in created and operation.id not in finished:
                            if operation.finished:
                                assert operation.status == "completed", operation
                                finished[operation.id] = time.perf_counter()
                    time.sleep(0.05)
            finally:
                stop.set()
                runner.join()
    last_big = max(t for i, t in finished.items() if created[i][1] == big) - clock
    print(
        f"{name}: {bigs} deletes of {big:,}{' by a metadata filter' if big_filtered else ''}"
        f" and {smalls} of {small:,} at once,"
        f" {concurrency} runner threads (KVLAKE_OPERATIONS_CONCURRENCY);"
        f" Store.set_many of {small:,} keys in the same run {base:.2f} s:"
    )
    for operation_id, (repository, n, _) in sorted(created.items(), key=lambda i: finished[i[0]]):
        done = finished[operation_id] - clock
        print(
            f"  {repository:8} {n:>11,} objects: finished {done:6.1f} s after the runner started"
            + (" (a big one still running)" if done < last_big and n == small else "")
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
    parser.add_argument(
        "--direct",
        action="store_true",
        help="commit the objects by writing their ranges straight (no staging; for 50M)",
    )
    parser.add_argument(
        "--metadata-filter",
        action="store_true",
        help="delete every other object by filters.metadata (direct committed data)",
    )
    parser.add_argument(
        "--concurrent",
        default="",
        metavar="BIG,SMALL",
        help="two deletes of BIG and twenty of SMALL objects at once through the runner",
    )
    parser.add_argument(
        "--big-filtered",
        action="store_true",
        help="with --concurrent: the big deletes go by a metadata filter (a tombstone each)",
    )
    parser.add_argument("--tmp-dir", default=None, help="where the data goes (default TMPDIR)")
    parser.add_argument("--json", default="", help="also write the rates there (compare_commits)")
    args = parser.parse_args()
    figures: Figures = {}
    sizes = [20_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    dsn = os.environ.get("KVLAKE_TEST_POSTGRES_DSN", DEFAULT_DSN)
    engines = args.engines.split(",")
    if args.commit and len(engines) > 1:
        parser.error("--commit takes one engine: a commit cannot be reset for the next one")
    mode = Mode(
        commit=args.commit,
        staged_only=args.staged_only,
        direct=args.direct,
        labelled=args.metadata_filter,
    )
    for driver in args.drivers.split(","):
        for n in [0] if args.concurrent else sizes:
            with tempfile.TemporaryDirectory(prefix="bulk-bench-", dir=args.tmp_dir) as folder:
                table = f"bulk_bench_{uuid.uuid4().hex[:12]}"
                url = f"sqlite://{folder}/kv.db" if driver == "sqlite" else postgres_url(dsn, table)
                if url is None:
                    break
                try:
                    if args.concurrent:
                        big, small = (int(s) for s in args.concurrent.split(","))
                        run_concurrent(
                            driver, url, folder, big, small, 2, 20, big_filtered=args.big_filtered
                        )
                    else:
                        figures.update(run_one(driver, url, folder, n, engines, mode))
                finally:
                    if driver != "sqlite":
                        with psycopg.connect(dsn, autocommit=True) as conn:
                            conn.execute(
                                sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table))
                            )

    if args.json:
        with open(args.json, "w") as out:
            json.dump(figures, out)


if __name__ == "__main__":
    main()
