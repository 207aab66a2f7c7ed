"""A big commit's time and memory: N staged entries committed onto an empty branch.

    .venv/bin/python benchmarks/commit_bench.py --entries 1000000 [--rounds 3] [--dir D]

Each round stages N entries (straight into the branch's staging partition, as
graveler_bench.py does) and commits them in a fresh child process, so the peak RSS
printed is the commit's own (VmHWM, beside the child's RSS before it started). Prints
every round and the medians; with `--json PATH` it writes `{"commit": {metric: median}}`
for benchmarks/compare_commits.py, which runs it on two trees back to back:

    .venv/bin/python benchmarks/compare_commits.py HEAD~1 -- benchmarks/commit_bench.py \\
        --entries 1000000

Issue 28's goals: 1M entries in at most 3 s, 10M in at most 30 s, peak RSS at most
500 MB. On /dev/shm the disk costs nothing; pass `--dir` on a real disk to count fsyncs.
With `--serving-gc` the child first sets Python's cyclic collector as a server process
has it (`kvlake.api.collector.tune_for_serving`: the start-up heap frozen, a young
threshold of 20,000), where a commit through the API runs; without it, CPython's
defaults, as in a script that commits through graveler. Besides the wall and CPU time
of the whole process it prints the main thread's CPU time: the commit's critical path
(SQLite, decoding, cutting), apart from the put threads' encoding and writes.
Nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from graveler_bench import (  # noqa: E402 -- a sibling benchmark's set-up, run from here
    NAMESPACE,
    REPOSITORY,
    Lake,
    Paths,
    committed_entries,
    encoded,
    rss_mb,
    stage_bulk,
)

from kvlake.api.collector import tune_for_serving  # noqa: E402
from kvlake.graveler.records import Value  # noqa: E402


def commit_child(paths: Paths, serving_gc: bool, out: Queue[Any]) -> None:
    """Commit `main` in this fresh process; report wall and CPU seconds and RSS (MB).

    A one-entry commit on another branch goes first: a server has long loaded Arrow's
    Parquet writer and started its put threads, a fresh process pays that once (about
    a second here), which is not the commit's cost.
    """
    lake = Lake(paths)
    try:
        repository = lake.repository()
        lake.graveler.create_branch(repository, "warm-up", "main")
        lake.graveler.set(repository, "warm-up", b"warm-up", Value(identity=b"w", data=b"w"))
        lake.graveler.commit(repository, "warm-up", committer="bench", message="warm-up")
        if serving_gc:
            tune_for_serving()
        before = rss_mb("VmRSS")
        cpu, main_cpu, started = time.process_time(), time.thread_time(), time.perf_counter()
        lake.graveler.commit(repository, "main", committer="bench", message="bench")
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        main_cpu = time.thread_time() - main_cpu
        out.put({"seconds": wall, "cpu_seconds": cpu, "main_cpu_seconds": main_cpu,
                 "rss_before_mb": before, "peak_rss_mb": rss_mb("VmHWM")})  # fmt: skip
    finally:
        lake.close()


def one_round(entries: int, folder: str | None, serving_gc: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="kvlake-commit-bench-", dir=folder) as tmp:
        paths = Paths(kv_url=f"sqlite://{tmp}/kv.db", blocks_url=f"local://{tmp}/blocks")
        lake = Lake(paths)
        try:
            repository = lake.graveler.create_repository(REPOSITORY, storage_namespace=NAMESPACE)
            stage_bulk(lake, repository, "main", encoded(committed_entries(entries)))
        finally:
            lake.close()
        ctx = multiprocessing.get_context("spawn")
        out: Queue[Any] = ctx.Queue()
        child = ctx.Process(target=commit_child, args=(paths, serving_gc, out))
        child.start()
        figures: dict[str, float] = out.get()
        child.join()
        return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=None, help="parent folder of the temporary folder")
    parser.add_argument("--json", default=None, help="write the medians here")
    parser.add_argument(
        "--serving-gc", action="store_true", help="the collector as a server sets it"
    )
    args = parser.parse_args(argv)
    rounds = []
    for number in range(1, args.rounds + 1):
        figures = one_round(args.entries, args.dir, args.serving_gc)
        rounds.append(figures)
        print(
            f"round {number}: commit of {args.entries:,} entries {figures['seconds']:.2f} s"
            f" (CPU {figures['cpu_seconds']:.2f} s, main thread"
            f" {figures['main_cpu_seconds']:.2f} s), peak RSS {figures['peak_rss_mb']:.0f} MB"
            f" ({figures['rss_before_mb']:.0f} MB before), load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    medians = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}
    print(
        f"median of {len(rounds)}: {medians['seconds']:.2f} s (CPU {medians['cpu_seconds']:.2f}"
        f" s, main thread {medians['main_cpu_seconds']:.2f} s),"
        f" {args.entries / medians['seconds']:,.0f} entries/s, peak RSS"
        f" {medians['peak_rss_mb']:.0f} MB"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"commit": medians}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
