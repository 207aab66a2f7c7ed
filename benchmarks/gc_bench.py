"""Garbage collection at scale on Spark `local[N]`, beside single-process baselines in the same run.

A repository of `--objects` blobs on SQLite and a local blockstore: 90% live
under the head, 10% overwritten over `--commits` commits, all commits 30 days
old under a one-day rule, so exactly the overwritten 10% is expired. The
namespace is listed from an inventory file (as S3 Inventory and Delta's
`VACUUM ... USING INVENTORY` do): only the expired blobs exist as real files
(1M at 10M objects), so the sweep deletes physically, and no run creates more
than 2M files. Printed: seconds per phase, blobs/s, the driver's peak RSS (the
Python process; run at 1M and at 10M to see it stay flat), a single-process
pyarrow anti-join of the same address sets, and the sweep beside a bare
`os.unlink` loop over as many files.

    .venv/bin/python benchmarks/gc_bench.py --quick                  # 200k objects, ~2 min
    .venv/bin/python benchmarks/gc_bench.py --objects 1000000        # ~5 min
    .venv/bin/python benchmarks/gc_bench.py --objects 10000000       # ~25 min on 2 cores
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kvlake.catalog import entry_ref
from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.config import Settings, SparkSettings
from kvlake.graveler import DAY, Repository, keys, make_rules
from kvlake.graveler.records import encode
from kvlake.lake import Lake
from kvlake.pipelines import open_spark
from kvlake.pipelines.gc.collector import GarbageCollector

CHUNK: Final = 100_000
PER_HOUR: Final = 100_000
"""Blobs per hour folder."""
AGE: Final = 30 * DAY


def address(n: int, base_hour: float) -> str:
    hour = time.strftime("%Y%m%dT%H", time.gmtime(base_hour + (n // PER_HOUR) * 3600))
    return f"data/{hour}/{n:016x}"


def stage(lake: Lake, repo: Repository, entries: Iterator[tuple[bytes, str]]) -> None:
    """Stage entries straight into main's staging token, a chunk per KV call (set-up only)."""
    token = lake.graveler.get_branch(repo, "main").staging_token
    partition = keys.staging_partition(token)
    chunk: list[tuple[bytes, bytes]] = []
    for path, blob in entries:
        entry = ObjectEntry(address=blob, size=1, checksum="0", mtime=0.0, content_type="x")
        chunk.append((path, encode(to_value(entry))))
        if len(chunk) == CHUNK:
            lake.store.set_many(partition, chunk)
            chunk = []
    lake.store.set_many(partition, chunk)


def build(lake: Lake, root: Path, objects: int, commits: int) -> tuple[Repository, Path, list[str]]:
    """The repository, an inventory of every blob, and the expired addresses (as real files)."""
    repo = lake.graveler.create_repository("bench", storage_namespace="local://bench/b")
    lake.graveler.retention.set_rules(repo, make_rules(1))
    live = objects * 9 // 10
    expired_count = objects - live
    base = time.time() - AGE - 3 * DAY
    inventory = root / "inventory.parquet"
    writer = pq.ParquetWriter(inventory, pa.schema([("key", pa.string()), ("size", pa.int64())]))
    stage(lake, repo, ((b"t/%012d" % n, address(n, base)) for n in range(live)))
    for start in range(0, live, CHUNK):
        blobs = [address(n, base) for n in range(start, min(start + CHUNK, live))]
        writer.write_table(pa.table({"key": blobs, "size": [1] * len(blobs)}))
    date = int(base)
    lake.graveler.commit(repo, "main", committer="bench", message="initial", date=date)
    per_commit = max(1, expired_count // commits)
    expired: list[str] = []
    for c in range(commits):
        first = c * per_commit
        stop = expired_count if c == commits - 1 else first + per_commit
        # Overwrite a block of consecutive keys: their old addresses expire.
        renamed = [(b"t/%012d" % n, address(live + n, base)) for n in range(first, stop)]
        expired += [address(n, base) for n in range(first, stop)]
        stage(lake, repo, iter(renamed))
        blobs = [blob for _, blob in renamed]
        writer.write_table(pa.table({"key": blobs, "size": [1] * len(blobs)}))
        date += 60
        lake.graveler.commit(repo, "main", committer="bench", message=f"c{c}", date=date)
    writer.close()
    return repo, inventory, expired


def make_files(root: Path, keys_: list[str]) -> None:
    for key in keys_:
        path = root / key
        try:
            path.write_bytes(b"x")
        except FileNotFoundError:
            path.parent.mkdir(parents=True)
            path.write_bytes(b"x")


def pyarrow_antijoin(lake: Lake, repo: Repository, inventory: Path) -> tuple[int, float]:
    """Candidates = inventory − head's addresses, in one process: (count, seconds)."""
    begun = time.monotonic()
    listed = pq.read_table(inventory).column("key").combine_chunks()
    metarange = lake.graveler.resolve_ref(repo, "main").commit.metarange_id
    head = lake.graveler.committed.scan(repo.storage_namespace, metarange)
    marked = pa.array([entry_ref(value).address for _, value in head], pa.string())
    candidates = pc.sum(pc.invert(pc.is_in(listed, value_set=marked))).as_py()
    return int(candidates), time.monotonic() - begun


def unlink_loop(root: Path, keys_: list[str]) -> float:
    begun = time.monotonic()
    for key in keys_:
        os.unlink(root / key)
    return time.monotonic() - begun


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000_000)
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--quick", action="store_true", help="200,000 objects, 100 commits")
    args = parser.parse_args()
    objects, commits = (200_000, 100) if args.quick else (args.objects, args.commits)
    root = Path(tempfile.mkdtemp(prefix="kvlake-gc-bench-"))
    try:
        settings = Settings(data_dir=str(root), spark=SparkSettings(master=args.master))
        with Lake.open(settings) as lake:
            begun = time.monotonic()
            repo, inventory, expired = build(lake, root, objects, commits)
            namespace_dir = root / "blocks" / "bench" / "b"
            make_files(namespace_dir, expired)
            print(
                f"built {objects:,} blobs, {commits:,} commits, {len(expired):,} expired"
                f" (real files) in {time.monotonic() - begun:.0f} s"
            )
            rss_before = peak_rss_mib()
            spark = open_spark(settings.spark, app_name="kvlake-gc-bench")
            begun = time.monotonic()
            summary = GarbageCollector(spark, lake).run("bench", inventory=str(inventory))
            total = time.monotonic() - begun
            rss_gc = peak_rss_mib()
            counts = summary.counts
            print(f"gc on {args.master}: {total:.1f} s for {objects:,} blobs")
            for phase, seconds in summary.seconds.items():
                print(f"  {phase:<13} {seconds:8.1f} s")
            print(
                f"  listed {counts.listed:,}, committed {counts.committed:,}, candidates"
                f" {counts.candidates:,}, deleted {counts.deleted:,}, failed {counts.failed}"
            )
            assert counts.candidates == len(expired) == counts.deleted, counts
            print(f"  {objects / total:,.0f} blobs/s over the whole run")
            print(f"driver peak RSS: {rss_before:.0f} MiB before GC, {rss_gc:.0f} MiB after")
            spark.stop()
            found, seconds = pyarrow_antijoin(lake, repo, inventory)
            assert found == len(expired), (found, len(expired))
            mark_join = summary.seconds["committed"] + summary.seconds["candidates"]
            print(
                f"single-process pyarrow anti-join of the same sets: {seconds:.1f} s"
                f" (Spark's committed + candidates phases: {mark_join:.1f} s,"
                f" ratio {mark_join / seconds:.1f}x); its peak RSS {peak_rss_mib():.0f} MiB"
            )
            make_files(namespace_dir, expired)
            bare = unlink_loop(namespace_dir, expired)
            sweep = summary.seconds["sweep"]
            print(
                f"sweep {sweep:.1f} s for {len(expired):,} blobs ({len(expired) / sweep:,.0f}/s);"
                f" bare os.unlink loop {bare:.1f} s ({len(expired) / bare:,.0f}/s);"
                f" ratio {sweep / bare:.1f}x"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
