"""Range files stored in the background while the next ranges are cut, beside storing each
in turn, on a real folder (the local blockstore: every range file fsynced with its folder).

A commit's metarange is written by one `RangeWriter`: it cuts the sorted entries into
ranges, encodes each as Parquet and stores it. Storing is mostly writes and fsyncs, which
release the GIL, so `PUTS_IN_FLIGHT` puts run in threads while the writer goes on. The
baseline is the same writer with `puts_in_flight=0` (each range stored before the next is
cut), alternated round by round in this process, so both see the same disk and load.

    .venv/bin/python benchmarks/range_writer_bench.py [--entries 1000000] [--rounds 3]
                                                      [--dir /path/on/the/disk/to/measure]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time

from kvlake.blockstore.local import LocalBlockStore
from kvlake.graveler.committed import CommittedStats
from kvlake.graveler.committed.records import Chunking
from kvlake.graveler.committed.writer import PUTS_IN_FLIGHT, RangeWriter
from kvlake.graveler.records import Value


def entries(count: int) -> list[tuple[bytes, Value | None]]:
    """Catalog-like entries: 32-byte identities, ~100-byte data."""
    identities = os.urandom(32 * count)
    return [
        (
            b"path/to/file-%08d" % i,
            Value(
                identity=identities[32 * i : 32 * i + 32],
                data=b'{"address":"data/gabc/%08d","size":%d,"content_type":"text/csv"}' % (i, i),
            ),
        )
        for i in range(count)
    ]


def write_once(root: str, rows: list[tuple[bytes, Value | None]], puts_in_flight: int) -> float:
    """Seconds to write `rows` as one metarange's ranges into a fresh namespace under `root`."""
    namespace = f"local://bench-{puts_in_flight}-{time.monotonic_ns()}"
    blockstore = LocalBlockStore(root)
    writer = RangeWriter(
        blockstore, namespace, Chunking(), CommittedStats(), puts_in_flight=puts_in_flight
    )
    started = time.perf_counter()
    writer.add_all(rows, deletions=False)
    writer.finish()
    seconds = time.perf_counter() - started
    shutil.rmtree(os.path.join(root, namespace.removeprefix("local://")))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=None, help="folder on the disk to measure")
    args = parser.parse_args()
    rows = entries(args.entries)
    root = tempfile.mkdtemp(prefix="kvlake-range-bench-", dir=args.dir)
    try:
        times: dict[int, list[float]] = {0: [], PUTS_IN_FLIGHT: []}
        for _ in range(args.rounds):
            for in_flight in times:
                times[in_flight].append(write_once(root, rows, in_flight))
    finally:
        shutil.rmtree(root)
    serial, background = (statistics.median(times[k]) for k in (0, PUTS_IN_FLIGHT))
    print(f"{args.entries:,} entries, {args.rounds} rounds, load average {os.getloadavg()[0]:.1f}")
    for in_flight, label in (
        (0, "each range stored in turn"),
        (PUTS_IN_FLIGHT, "puts in background"),
    ):
        rounds = " ".join(f"{t:.2f}" for t in times[in_flight])
        median = serial if in_flight == 0 else background
        print(f"  {label:26} median {median:6.2f} s  (rounds: {rounds})")
    print(f"  speed-up: {serial / background:.2f}x")


if __name__ == "__main__":
    main()
