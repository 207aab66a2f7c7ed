"""Benchmark committed data: write, apply, point get and scan over a 1M-entry metarange.

Runs on the memory blockstore, so it measures kvlake's own work (chunking,
Parquet encoding, hashing, merging), not a disk. Entries look like the
catalog's: keys `path/to/file-%07d`, 32-byte identities, ~100-byte data.

    .venv/bin/python benchmarks/committed_bench.py [--entries 1000000]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import time
from collections.abc import Iterator

from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.graveler.committed import Change, CommittedManager
from kvlake.graveler.records import Value

NAMESPACE = "mem://bench/repo"


def entries(count: int, version: int = 0, step: int = 2) -> Iterator[tuple[bytes, Value]]:
    """`count` entries with even numbers (odd keys are free for inserts)."""
    identities = os.urandom(32 * count)
    for i in range(count):
        n = i * step
        yield (
            b"path/to/file-%07d" % n,
            Value(
                identity=identities[32 * i : 32 * i + 32],
                data=b'{"address":"s3://bucket/data/%07d-v%d","size":%d,"content_type":"text/csv"}'
                % (n, version, n * 7),
            ),
        )


def changes(total: int, count: int, *, clustered: bool) -> list[Change]:
    """`count` changes, 80% updates, 10% deletes, 10% inserts.

    Spread evenly over the key space, or `clustered` in one run of keys in the
    middle (one folder rewritten), which is where range reuse pays off.
    """
    out: list[Change] = []
    stride = 1 if clustered else max(total // count, 1)
    first = (total - count) // 2 if clustered else 0
    for j in range(count):
        n = (first + j * stride) * 2
        kind = j % 10
        if kind == 8:
            out.append((b"path/to/file-%07d" % n, None))
        elif kind == 9:
            key = b"path/to/file-%07d" % (n + 1)
            out.append((key, Value(identity=os.urandom(32), data=b"inserted " + key)))
        else:
            key = b"path/to/file-%07d" % n
            out.append((key, Value(identity=os.urandom(32), data=b"updated " + key * 4)))
    return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    total = parser.parse_args().entries
    blockstore = MemoryBlockStore()
    manager = CommittedManager(blockstore)

    started = time.perf_counter()
    generated = sum(1 for _ in entries(total))
    generate_s = time.perf_counter() - started
    started = time.perf_counter()
    base = manager.write_metarange(NAMESPACE, entries(total))
    write_s = time.perf_counter() - started
    ranges = manager.ranges(NAMESPACE, base)
    print(
        f"write {total:,} entries: {write_s:.2f} s, {total / write_s:,.0f} entries/s "
        f"(generating them alone: {generate_s:.2f} s); {len(ranges)} ranges, "
        f"{sum(r.size for r in ranges) / 1e6:.0f} MB, peak RSS {peak_rss_mb():.0f} MB"
    )
    assert generated == total

    for clustered in (False, True):
        for count in (1_000, 10_000, 100_000):
            batch = changes(total, count, clustered=clustered)
            fresh = CommittedManager(blockstore)  # cold cache, clean counters
            started = time.perf_counter()
            new = fresh.apply(NAMESPACE, base, batch)
            apply_s = time.perf_counter() - started
            print(
                f"apply {count:>7,} {'clustered' if clustered else 'spread'} changes: "
                f"{apply_s:.2f} s; {fresh.stats.ranges_reused}/"
                f"{len(fresh.ranges(NAMESPACE, new))} ranges reused by id, "
                f"{fresh.stats.range_reads} read"
            )
    empty = manager.empty_metarange(NAMESPACE)
    started = time.perf_counter()
    manager.apply(NAMESPACE, empty, entries(total, version=1))
    commit_s = time.perf_counter() - started
    print(f"apply {total:,} inserts onto the empty metarange (a first commit): {commit_s:.2f} s")

    keys = [b"path/to/file-%07d" % (2 * random.randrange(total)) for _ in range(20_000)]
    warm = CommittedManager(blockstore, range_cache_size=len(ranges))
    for key in keys:
        warm.get(NAMESPACE, base, key)
    timings = []
    for key in keys:
        started = time.perf_counter()
        warm.get(NAMESPACE, base, key)
        timings.append(time.perf_counter() - started)
    quantiles = statistics.quantiles(timings, n=100)
    print(
        f"point get, warm cache ({len(keys):,} random keys): p50 {quantiles[49] * 1e6:.1f} us, "
        f"p99 {quantiles[98] * 1e6:.1f} us"
    )
    cold = CommittedManager(blockstore)  # the default 64-range cache, fewer than the ranges
    started = time.perf_counter()
    for key in keys[:2000]:
        cold.get(NAMESPACE, base, key)
    cold_s = time.perf_counter() - started
    print(
        f"point get, default cache, random keys: {cold_s / 2000 * 1e6:.0f} us mean "
        f"({cold.stats.range_reads} range reads for 2,000 gets)"
    )

    scanner = CommittedManager(blockstore)
    started = time.perf_counter()
    scanned = sum(1 for _ in scanner.scan(NAMESPACE, base))
    scan_s = time.perf_counter() - started
    print(f"full scan: {scanned:,} entries in {scan_s:.2f} s, {scanned / scan_s:,.0f} entries/s")
    print(f"peak RSS: {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
