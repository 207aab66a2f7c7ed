"""Deletion workers against the physical limit: a bare `os.unlink` loop over as many files.

Both sides delete the same number of one-byte files laid out as the catalog lays
blobs out (`data/<hour>/<uid>`, 10,000 per folder) under a local blockstore in
one temporary folder, in the same run. The workers start from a log of
`dropped_staging_token` records on SQLite, the origin the cleaner writes most,
so every blob pays the full in-use check (its token and the live token at its
path, shared-address markers, the branch head's commit), the ownership check,
the blockstore delete and the record's removal. The log's own overhead per
blob (KV bytes written for its record, KV calls to append and to work it) is
printed. The goal is 20,000 blobs/s.

    .venv/bin/python benchmarks/deletion_bench.py --quick     # 20,000 blobs, seconds
    .venv/bin/python benchmarks/deletion_bench.py             # 1,000,000 blobs, ~15 minutes
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from kvlake import ids
from kvlake.blockstore import open_blockstore
from kvlake.config import DeletionSettings, Settings
from kvlake.deletion import DeletionLog, PendingDelete
from kvlake.graveler import keys
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.kv import CountingStore, open_store
from kvlake.lake import Lake

GOAL: Final = 20_000
PER_FOLDER: Final = 10_000
NAMESPACE: Final = "local://bench/repo"


def make_files(root: Path, count: int, hour: int) -> list[str]:
    """`count` one-byte blobs under `data/<hour + n>/`, returned as blobstore keys."""
    made = []
    for start in range(0, count, PER_FOLDER):
        folder = f"data/bench{hour + start // PER_FOLDER:05d}"
        (root / folder).mkdir(parents=True, exist_ok=True)
        for _ in range(min(PER_FOLDER, count - start)):
            key = f"{folder}/{ids.new_uid()}"
            with open(root / key, "wb") as file:
                file.write(b"x")
            made.append(key)
    return made


def unlink_loop(root: Path, keys_: list[str]) -> float:
    started = time.perf_counter()
    for key in keys_:
        os.unlink(root / key)
    return time.perf_counter() - started


def work(kv_url: str, blocks_url: str, settings: DeletionSettings) -> tuple[Counter[str], int]:
    """One worker process: drain the log until idle; return its KV calls and records done."""
    store = CountingStore(open_store(kv_url))
    blocks = open_blockstore(blocks_url)
    worker = Lake(Settings(deletion=settings), store, blocks).deletion_worker()
    done = 0
    while True:
        report = worker.run_once()
        done += report.deleted + report.kept + report.dead_lettered
        if report.batches == 0:
            break
    store.close()
    blocks.close()
    return store.calls, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blobs", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="20,000 blobs: a smoke run")
    parser.add_argument("--workers", type=int, default=4, help="worker processes (and partitions)")
    parser.add_argument("--dir", default=None, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    count = 20_000 if args.quick else args.blobs
    scratch = Path(tempfile.mkdtemp(prefix="kvlake-deletion-bench-", dir=args.dir))
    try:
        run(scratch, count, args.workers)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run(scratch: Path, count: int, workers: int) -> None:
    settings = DeletionSettings(partitions=workers, send_delay=0.0, batch_size=1000)
    kv_url, blocks_url = f"sqlite://{scratch}/kv.db", f"local://{scratch}/blocks"
    root = scratch / "blocks" / "bench" / "repo"
    print(f"deletion benchmark: {count:,} blobs, {workers} worker processes, SQLite KV")
    with open_store(kv_url) as raw, open_blockstore(blocks_url) as blocks:
        graveler = Graveler(raw, CommittedManager(blocks), check_namespace=blocks.check_namespace)
        repository = graveler.create_repository("bench", storage_namespace=NAMESPACE)
        started = time.perf_counter()
        addresses = make_files(root, count, 0)
        print(f"  created {count:,} blobs in {time.perf_counter() - started:.1f} s")
        store = CountingStore(raw)
        log = DeletionLog(store, settings)
        token = keys.new_staging_token(repository.instance_uid)  # dropped: no branch has it
        now = time.time()

        def records() -> Iterator[PendingDelete]:
            for n, address in enumerate(addresses):
                yield log.new_record(
                    repository,
                    address,
                    "dropped_staging_token",
                    staging_token=token,
                    path=b"objects/%09d" % n,
                    since=now,
                    due=now,
                )

        started = time.perf_counter()
        log.append(records())
        appended = time.perf_counter() - started
        append_calls = sum(store.calls.values())
        print(
            f"  logged {count:,} records in {appended:.1f} s ({count / appended:,.0f}/s):"
            f" {store.bytes_written / count:.0f} KV bytes and {append_calls / count:.4f} KV calls"
            " per blob"
        )
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        results = pool.starmap(work, [(kv_url, blocks_url, settings)] * workers)
    seconds = time.perf_counter() - started
    calls: Counter[str] = Counter()
    done = 0
    for worker_calls, worker_done in results:
        calls.update(worker_calls)
        done += worker_done
    left = sum(1 for path in (root / "data").rglob("*") if path.is_file())
    assert done == count and left == 0, f"workers finished {done} of {count}, {left} blobs left"
    rate = count / seconds
    per_blob = ", ".join(f"{op} {n / count:.4f}" for op, n in sorted(calls.items()))
    print(f"  workers: {count:,} blobs in {seconds:.1f} s = {rate:,.0f} blobs/s")
    print(f"    KV calls per blob while working: {sum(calls.values()) / count:.4f} ({per_blob})")
    shutil.rmtree(root / "data")
    unlinked = make_files(root, count, 10_000)
    seconds = unlink_loop(root, unlinked)
    print(f"  bare os.unlink loop: {count:,} files in {seconds:.1f} s = {count / seconds:,.0f}/s")
    verdict = "met" if rate >= GOAL else "missed"
    ratio = rate / (count / seconds)
    print(f"  goal {GOAL:,} blobs/s {verdict}; workers ran at {ratio:.2f}x the bare unlink loop")


if __name__ == "__main__":
    main()
