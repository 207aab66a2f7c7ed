"""Concurrent durable writes on SQLite: one writer, many threads, and two processes of threads.

    .venv/bin/python benchmarks/kv_writers_bench.py [--seconds 3] [--threads 32] \\
        [--dir /work/tmp] [--synchronous full] [--json PATH]

Each writer creates fresh keys with `set_if(..., None)` (as uploads create staged entries)
for `--seconds`, on one `SqliteStore` per process, in a new database under `--dir` (default
TMPDIR; the disk matters: each commit waits for an fsync). Scenarios: one thread; `--threads`
threads in one process; two processes of `--threads / 2` threads each (a server's two
workers). Prints writes/s and p50/p99 latency per scenario, and the load average.
`--json PATH` writes `{scenario: {metric: number}}` for benchmarks/compare_commits.py.
Everything written is removed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path

from kvlake.kv import open_store

P = b"bench"
VALUE = b"v" * 200


def write_for(url: str, threads: int, seconds: float, start_at: float) -> list[int]:
    """Run `threads` writers on one store until the deadline; return every latency in ns."""
    latencies: list[list[int]] = [[] for _ in range(threads)]
    with open_store(url) as store:
        store.get_many(P, [b"warm"])  # open the database before the clock starts

        def writer(mine: list[int]) -> None:
            prefix = uuid.uuid4().hex.encode()
            deadline = start_at + seconds
            while time.time() < start_at:
                time.sleep(0.001)
            n = 0
            while time.time() < deadline:
                began = time.perf_counter_ns()
                store.set_if(P, b"%s-%d" % (prefix, n), VALUE, None)
                mine.append(time.perf_counter_ns() - began)
                n += 1

        pool = [threading.Thread(target=writer, args=(mine,)) for mine in latencies]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
    return [latency for mine in latencies for latency in mine]


def _in_process(url: str, threads: int, seconds: float, start_at: float, out: str) -> None:
    Path(out).write_text(json.dumps(write_for(url, threads, seconds, start_at)))


def scenario(
    url: str, processes: int, threads: int, seconds: float, scratch: str
) -> dict[str, float]:
    """Writes/s and latency percentiles of `processes` x `threads` writers on one database."""
    start_at = time.time() + 0.5  # every process has opened its store by then
    if processes == 1:
        latencies = write_for(url, threads, seconds, start_at)
    else:
        context = multiprocessing.get_context("spawn")
        outs = [os.path.join(scratch, f"p{i}.json") for i in range(processes)]
        start_at += 2  # spawned interpreters import kvlake first
        children = [
            context.Process(target=_in_process, args=(url, threads, seconds, start_at, out))
            for out in outs
        ]
        for child in children:
            child.start()
        for child in children:
            child.join()
            if child.exitcode:
                raise SystemExit(f"a writer process failed with exit code {child.exitcode}")
        latencies = [x for out in outs for x in json.loads(Path(out).read_text())]
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    return {
        "writes/s": len(latencies) / seconds,
        "p50 ms": cuts[49] / 1e6,
        "p99 ms": cuts[98] / 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per scenario")
    parser.add_argument("--threads", type=int, default=32, help="writers, all processes")
    parser.add_argument("--dir", default=None, help="folder for the database (default TMPDIR)")
    parser.add_argument("--synchronous", choices=("full", "normal"), default="full")
    parser.add_argument("--json", default=None, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    scratch = tempfile.mkdtemp(prefix="kv-writers-", dir=args.dir)
    results: dict[str, dict[str, float]] = {}
    try:
        plan = [(1, 1), (1, args.threads), (2, max(1, args.threads // 2))]
        for number, (processes, threads) in enumerate(plan):
            db = os.path.join(scratch, f"kv{number}.db")
            url = f"sqlite://{db}?synchronous={args.synchronous}"
            name = f"{processes}x{threads} writers"
            results[name] = scenario(url, processes, threads, args.seconds, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"SQLite set_if creates, synchronous={args.synchronous}, {args.seconds:g} s each")
    for name, figures in results.items():
        print(
            f"{name:18} {figures['writes/s']:9,.0f} writes/s"
            f"   p50 {figures['p50 ms']:7.2f} ms   p99 {figures['p99 ms']:7.2f} ms"
        )
    print(f"load average {load}")
    if args.json:
        Path(args.json).write_text(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
