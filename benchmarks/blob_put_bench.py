"""Local blob puts beside a bare durable-write loop on the same disk, in the same run.

    .venv/bin/python benchmarks/blob_put_bench.py [--puts 2000] [--dir /work/tmp] [--json PATH]

Each round puts `--puts` 1 KiB blobs with `LocalBlockStore.put` into 16 folders of
one namespace (as uploads spread over `data/<prefix>/`), then runs the bare loop the
put cannot beat: write a temporary file, fsync it, rename it, fsync the folder. Prints
puts/s, the bare loop's writes/s and their ratio, median of `--rounds`. `--json PATH`
writes `{scenario: {metric: number}}` for benchmarks/compare_commits.py. Everything
written is removed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from kvlake.blockstore.local import LocalBlockStore


def puts(root: str, count: int) -> float:
    store = LocalBlockStore(root)
    body = b"x" * 1024
    for i in range(16):  # folders exist first: the steady state of a lake
        store.put("local://bench/repo", f"data/{i:02x}/warm", body)
    started = time.perf_counter()
    for i in range(count):
        store.put("local://bench/repo", f"data/{i % 16:02x}/{i:06d}", body)
    return count / (time.perf_counter() - started)


def bare(root: str, count: int) -> float:
    folders = [os.path.join(root, f"{i:02x}") for i in range(16)]
    for folder in folders:
        os.makedirs(folder)
    body = b"x" * 1024
    started = time.perf_counter()
    for i in range(count):
        folder = folders[i % 16]
        temp = os.path.join(folder, f".tmp-{i}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, body)
        os.fsync(fd)
        os.close(fd)
        os.replace(temp, os.path.join(folder, f"{i:06d}"))
        folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        os.fsync(folder_fd)
        os.close(folder_fd)
    return count / (time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--puts", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=None, help="where to write (default: TMPDIR)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    put_rates: list[float] = []
    bare_rates: list[float] = []
    for _ in range(args.rounds):
        for rates, run in ((put_rates, puts), (bare_rates, bare)):
            scratch = tempfile.mkdtemp(prefix="kvlake-blob-bench-", dir=args.dir)
            try:
                rates.append(run(scratch, args.puts))
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    put, loop = statistics.median(put_rates), statistics.median(bare_rates)
    print(
        f"{args.puts} puts of 1 KiB, median of {args.rounds} rounds, load {os.getloadavg()[0]:.1f}"
    )
    print(f"LocalBlockStore.put   {put:>9,.0f}/s   runs {[round(r) for r in put_rates]}")
    print(f"bare durable loop     {loop:>9,.0f}/s   runs {[round(r) for r in bare_rates]}")
    print(f"put / bare            {put / loop:>9.2f}")
    if args.json is not None:
        figures = {"blob put": {"rps": put}, "bare durable loop": {"rps": loop}}
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
