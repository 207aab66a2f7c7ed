"""Versioning-core figures: a big commit, writers racing it, and reads on a big branch.

Everything runs on the embedded set-up (a SQLite KV file and a local blockstore, both in a
temporary folder); each figure is printed beside its goal and, where the issue asks for one,
a baseline measured in the same run:

1. Commit of N staged entries (default 1,000,000). Staging uses `Store.set_many` on the
   branch's staging partition (`Graveler.set` one entry at a time is timed on a sample, to show
   why); the commit runs in a freshly spawned process, so its peak RSS is its own.
2. `Graveler.set` throughput and p99 from writer threads in another process (in the committing
   process they would wait on the commit's GIL, which no multi-worker server does) while an
   N-entry commit of the same branch runs, against the same writers alone before and after it.
   The writers' CPU share and writes per CPU-second tell a costlier write (locks, busy waits)
   from a commit that merely takes a core the writers wanted.
3. `Graveler.get` and 1000-entry `Graveler.list` p50/p99 on a branch whose commit holds N
   entries and whose staging token N/10 (half of them updates, half new keys).

    .venv/bin/python benchmarks/graveler_bench.py --quick      # smoke run, under 30 s
    .venv/bin/python benchmarks/graveler_bench.py              # full size, about 3 minutes
    .venv/bin/python benchmarks/graveler_bench.py --profile    # adds cProfile tops (slower)
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import itertools
import multiprocessing
import os
import pstats
import queue
import random
import resource
import statistics
import sys
import tempfile
import threading
import time
import traceback
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.context import SpawnContext
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from typing import Any

from kvlake.blockstore import BlockStore, open_blockstore
from kvlake.errors import KvlakeError
from kvlake.graveler import keys
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Repository, Value, encode
from kvlake.kv import Store, open_store

CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
REPOSITORY = "bench"
NAMESPACE = "local://lake/bench"
LIST_AMOUNT = 1000

# Goals from the issue.
COMMIT_SECONDS_GOAL = 20.0
COMMIT_RSS_GOAL_MB = 500.0
THROUGHPUT_RATIO_GOAL = 0.8
P99_RATIO_GOAL = 2.0

Samples = list[tuple["array[int]", "array[int]"]]
"""Per writer thread: start times and latencies (monotonic ns), one pair per write."""


@dataclass(frozen=True)
class Paths:
    kv_url: str
    blocks_url: str


class Lake:
    """A graveler over the benchmark's SQLite file and local blockstore."""

    def __init__(self, paths: Paths) -> None:
        self.store: Store = open_store(paths.kv_url)
        self.blocks: BlockStore = open_blockstore(paths.blocks_url)
        self.committed = CommittedManager(self.blocks)
        self.graveler = Graveler(
            self.store, self.committed, check_namespace=self.blocks.check_namespace
        )

    def repository(self) -> Repository:
        return self.graveler.get_repository(REPOSITORY)

    def close(self) -> None:
        self.store.close()
        self.blocks.close()


@dataclass(frozen=True)
class Latencies:
    count: int
    seconds: float
    p50_ms: float
    p99_ms: float

    @classmethod
    def of(cls, latencies_ns: Sequence[int], seconds: float) -> Latencies:
        if len(latencies_ns) < 2:
            only = latencies_ns[0] / 1e6 if latencies_ns else float("nan")
            return cls(len(latencies_ns), seconds, only, only)
        cuts = statistics.quantiles(latencies_ns, n=100, method="inclusive")
        return cls(len(latencies_ns), seconds, cuts[49] / 1e6, cuts[98] / 1e6)

    @property
    def rate(self) -> float:
        return self.count / self.seconds if self.seconds else float("nan")


@dataclass(frozen=True)
class Row:
    label: str
    value: str
    baseline: str = ""
    ratio: str = ""
    goal: str = ""
    met: str = ""


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- entries ------------------------------------------------------------------------------


def object_key(i: int) -> bytes:
    return b"data/part-%07d.parquet" % i


def object_value(key: bytes, version: int = 0) -> Value:
    """A 32-byte identity and 100 bytes of data that compress like real metadata (hex)."""
    seed = key + b"#%d" % version
    data = hashlib.blake2b(seed, digest_size=50).hexdigest().encode()
    return Value(identity=hashlib.sha256(seed).digest(), data=data)


def committed_entries(n: int) -> Iterator[tuple[bytes, Value]]:
    for i in range(n):
        key = object_key(i)
        yield key, object_value(key)


def staged_entries(n: int, staged: int) -> Iterator[tuple[bytes, Value]]:
    """`staged` entries spread over the N committed keys: even ones update, odd ones are new."""
    step = max(1, n // staged)
    for j in range(staged):
        key = object_key(j * step)
        if j % 2:
            key += b".new"
        yield key, object_value(key, version=1)


def encoded(entries: Iterator[tuple[bytes, Value]]) -> list[tuple[bytes, bytes]]:
    """Entries as staging stores them, made before any clock starts (about 8 us each)."""
    return [(key, encode(value)) for key, value in entries]


def stage_bulk(
    lake: Lake, repository: Repository, branch: str, items: list[tuple[bytes, bytes]]
) -> float:
    """Write encoded entries straight into the branch's staging partition; return seconds.

    This is what `Graveler.set` writes, minus its two branch reads per entry; nothing
    commits meanwhile, so skipping the writer flow's re-read loses nothing.
    """
    token = lake.graveler.get_branch(repository, branch).staging_token
    started = time.perf_counter()
    lake.store.set_many(keys.staging_partition(token), items)
    return time.perf_counter() - started


def rss_mb(field: str) -> float:
    """`VmHWM` (peak) or `VmRSS` (now) of this process, in MB.

    Not `ru_maxrss`: Linux carries it over an exec from the forked copy of the parent, so a
    spawned child would report the parent's size as its own peak.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB, may overstate


def profile_text(profiler: cProfile.Profile, top: int) -> str:
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


# -- child processes ------------------------------------------------------------------------


class Child:
    """A spawned process that reports `(kind, payload)` messages on a queue."""

    def __init__(self, ctx: SpawnContext, target: Callable[..., None], *args: object) -> None:
        self.queue: Queue[Any] = ctx.Queue()
        self.process = ctx.Process(target=target, args=(*args, self.queue), daemon=True)
        self.process.start()

    def receive(self, expected: str) -> Any:
        while True:
            try:
                kind, payload = self.queue.get(timeout=1.0)
            except queue.Empty:
                if not self.process.is_alive():
                    code = self.process.exitcode
                    raise RuntimeError(f"benchmark child died (exit code {code})") from None
                continue
            if kind == "error":
                raise RuntimeError(f"benchmark child failed:\n{payload}")
            if kind != expected:
                raise RuntimeError(f"benchmark child sent {kind!r}, expected {expected!r}")
            return payload

    def join(self) -> None:
        self.process.join()


def commit_child(paths: Paths, branch: str, profile: bool, go: Event, out: Queue[Any]) -> None:
    """Commit `branch` once `go` is set; report times (monotonic ns) and RSS (MB)."""
    try:
        lake = Lake(paths)
        repository = lake.repository()
        rss_before = rss_mb("VmRSS")
        out.put(("ready", None))
        go.wait()
        profiler = cProfile.Profile() if profile else None
        cpu, started = time.process_time(), time.monotonic_ns()
        if profiler:
            profiler.enable()
        lake.graveler.commit(repository, branch, committer="bench", message=f"bench {branch}")
        if profiler:
            profiler.disable()
        ended, cpu = time.monotonic_ns(), time.process_time() - cpu
        text = profile_text(profiler, 25) if profiler else ""
        out.put(("done", (started, ended, cpu, rss_before, rss_mb("VmHWM"), text)))
        lake.close()
    except BaseException:
        out.put(("error", traceback.format_exc()))
        raise


def writer_child(paths: Paths, branch: str, threads: int, stop: Event, out: Queue[Any]) -> None:
    """Run `threads` writers of `Graveler.set` on `branch` until `stop`; report every latency."""
    try:
        lake = Lake(paths)
        repository = lake.repository()
        value = object_value(b"incoming")
        done = threading.Event()
        samples: list[tuple[bytes, bytes]] = []
        failures: list[str] = []
        lock = threading.Lock()

        def write(n: int) -> None:
            starts, latencies = array("q"), array("q")
            clock = time.monotonic_ns
            for i in itertools.count():
                if done.is_set():
                    break
                key = b"incoming/w%02d/%08d" % (n, i)
                before = clock()
                try:
                    lake.graveler.set(repository, branch, key, value)
                except KvlakeError as exc:
                    with lock:
                        failures.append(f"{type(exc).__name__}: {exc}")
                    continue
                starts.append(before)
                latencies.append(clock() - before)
            with lock:
                samples.append((starts.tobytes(), latencies.tobytes()))

        cpu = array("q")

        def sample_cpu() -> None:
            # Process CPU time against the shared clock, to tell a lock from a busy machine.
            while not done.wait(0.02):
                cpu.extend((time.monotonic_ns(), time.process_time_ns()))

        workers = [threading.Thread(target=write, args=(n,)) for n in range(threads)]
        workers.append(threading.Thread(target=sample_cpu))
        for worker in workers:
            worker.start()
        out.put(("ready", None))
        stop.wait()
        done.set()
        for worker in workers:
            worker.join()
        out.put(("done", (samples, failures, cpu.tobytes())))
        lake.close()
    except BaseException:
        out.put(("error", traceback.format_exc()))
        raise


def cores_in(cpu: array[int], start: int, end: int) -> float:
    """CPU cores the writer process kept busy over [start, end), from its samples."""
    inside = [(cpu[i], cpu[i + 1]) for i in range(0, len(cpu), 2) if start <= cpu[i] < end]
    if len(inside) < 2:
        return float("nan")
    (t0, c0), (t1, c1) = inside[0], inside[-1]
    return (c1 - c0) / (t1 - t0)


def machine_busy() -> tuple[int, int]:
    """Busy and total jiffies of all CPUs so far (Linux), for the whole machine's load."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(x) for x in stat.readline().split()[1:]]
    except OSError:
        return 0, 0
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_cores(before: tuple[int, int], after: tuple[int, int]) -> float:
    busy, total = after[0] - before[0], after[1] - before[1]
    return busy / total * CPUS if total else float("nan")


def in_windows(samples: Samples, *windows: tuple[int, int]) -> Latencies:
    """The writes that started in the windows ([start, end) monotonic ns), pooled."""
    latencies = [
        latency
        for starts, lats in samples
        for began, latency in zip(starts, lats, strict=True)
        if any(start <= began < end for start, end in windows)
    ]
    return Latencies.of(latencies, sum(end - start for start, end in windows) / 1e9)


# -- the three measurements ------------------------------------------------------------------


def bench_commit(
    ctx: SpawnContext,
    lake: Lake,
    paths: Paths,
    args: argparse.Namespace,
    entries: list[tuple[bytes, bytes]],
) -> list[Row]:
    repository = lake.repository()
    n = args.entries
    sample = min(args.set_sample, n)
    lake.graveler.create_branch(repository, "sample", "main")
    started = time.perf_counter()
    for key, value in committed_entries(sample):
        lake.graveler.set(repository, "sample", key, value)
    set_rate = sample / (time.perf_counter() - started)
    log(f"Graveler.set: {set_rate:,.0f}/s on {sample:,}; staging {n:,} with Store.set_many")

    stage_seconds = stage_bulk(lake, repository, "main", entries)
    log(f"staged in {stage_seconds:.1f} s; committing in a fresh process")

    go = ctx.Event()
    child = Child(ctx, commit_child, paths, "main", args.profile, go)
    child.receive("ready")
    go.set()
    began, ended, cpu_seconds, rss_before, rss_peak, text = child.receive("done")
    child.join()
    seconds = (ended - began) / 1e9
    log(f"committed in {seconds:.1f} s, peak RSS {rss_peak:.0f} MB")
    if text:
        print(f"\n== cProfile of the {n:,}-entry commit (timings inflated) ==\n{text}")
    return [
        Row(
            f"1. stage {n:,} entries (Store.set_many)",
            f"{stage_seconds:.1f} s",
            f"{n / stage_seconds:,.0f} entries/s",
        ),
        Row(
            f"   Graveler.set one by one ({sample:,})",
            f"{set_rate:,.0f}/s",
            f"= {n / set_rate:,.0f} s for N",
        ),
        Row(
            f"   commit {n:,} entries",
            f"{seconds:.1f} s",
            f"{n / seconds:,.0f}/s, CPU {cpu_seconds:.1f} s",
            goal=f"< {COMMIT_SECONDS_GOAL:.0f} s",
            met=yes(seconds < COMMIT_SECONDS_GOAL),
        ),
        Row(
            "   commit peak RSS (own process)",
            f"{rss_peak:.0f} MB",
            f"{rss_before:.0f} MB at start",
            goal=f"< {COMMIT_RSS_GOAL_MB:.0f} MB",
            met=yes(rss_peak < COMMIT_RSS_GOAL_MB),
        ),
    ]


def bench_concurrent(
    ctx: SpawnContext,
    lake: Lake,
    paths: Paths,
    args: argparse.Namespace,
    entries: list[tuple[bytes, bytes]],
    first_commit: str,
) -> list[Row]:
    """The same writers alone, then while an N-entry commit runs, then alone again."""
    repository = lake.repository()
    n = args.entries
    lake.graveler.create_branch(repository, "racing", first_commit)
    seconds = stage_bulk(lake, repository, "racing", entries)
    log(f"staged {n:,} on 'racing' in {seconds:.1f} s; starting processes")

    go, stop = ctx.Event(), ctx.Event()
    committer = Child(ctx, commit_child, paths, "racing", args.profile, go)
    committer.receive("ready")  # its imports must not compete with the baseline window
    writers = Child(ctx, writer_child, paths, "racing", args.writers, stop)
    writers.receive("ready")
    time.sleep(args.warmup)
    before, machine_before = window(args.baseline_seconds)
    log(f"baseline window done ({args.baseline_seconds:g} s); committing under writes")
    busy = machine_busy()
    go.set()
    began, ended, cpu_seconds, _, _, text = committer.receive("done")
    machine_racing = busy_cores(busy, machine_busy())
    log("commit done; writers alone again")
    after, machine_after = window(args.baseline_seconds)
    stop.set()
    raw_samples, failures, raw_cpu = writers.receive("done")
    committer.join()
    writers.join()
    samples: Samples = [(array("q", s), array("q", lat)) for s, lat in raw_samples]
    cpu = array("q", raw_cpu)
    alone = in_windows(samples, before, after)
    racing = in_windows(samples, (began, ended))
    seconds = (ended - began) / 1e9
    for name, span, machine in (
        ("before", before, machine_before),
        ("during the commit", (began, ended), machine_racing),
        ("after", after, machine_after),
    ):
        measured = in_windows(samples, span)
        log(
            f"writers {name}: {measured.rate:,.0f}/s, p99 {measured.p99_ms:.2f} ms,"
            f" writer process {cores_in(cpu, *span):.2f} cores,"
            f" machine {machine:.2f} of {CPUS} cores busy"
        )
    writer_cores = (cores_in(cpu, *before) + cores_in(cpu, *after)) / 2
    racing_cores = cores_in(cpu, began, ended)
    # Writes per CPU-second of the writer process: below 1x the commit makes writes costlier
    # (locks, busy waits); at 1x any loss of throughput is the commit taking the CPUs.
    per_cpu_ratio = (racing.rate / racing_cores) / (alone.rate / writer_cores)
    log(f"commit under writes took {seconds:.1f} s; {len(failures)} writes failed")
    if text:
        print(f"\n== cProfile of the commit under writes (timings inflated) ==\n{text}")
    for failure in failures[:5]:
        log(f"  failed write: {failure}")
    throughput_ratio = racing.rate / alone.rate
    p99_ratio = racing.p99_ms / alone.p99_ms
    label = f"{args.writers} threads, 1 process"
    return [
        Row(
            f"2. Graveler.set during commit ({label})",
            f"{racing.rate:,.0f}/s",
            f"{alone.rate:,.0f}/s alone",  # before and after the commit, pooled
            f"{throughput_ratio:.2f}",
            f">= {THROUGHPUT_RATIO_GOAL:.2f}",
            yes(throughput_ratio >= THROUGHPUT_RATIO_GOAL),
        ),
        Row(
            "   Graveler.set p99 during commit",
            f"{racing.p99_ms:.2f} ms",
            f"{alone.p99_ms:.2f} ms alone",
            f"{p99_ratio:.2f}",
            f"< {P99_RATIO_GOAL:.0f}x",
            yes(p99_ratio < P99_RATIO_GOAL),
        ),
        Row(
            "   writer process CPU during commit",
            f"{racing_cores:.2f} cores",
            f"{writer_cores:.2f} cores alone",
            f"{racing_cores / writer_cores:.2f}",
            f"of {CPUS} CPUs",
        ),
        Row(
            "   Graveler.set per writer CPU-second",
            f"{racing.rate / racing_cores:,.0f}",
            f"{alone.rate / writer_cores:,.0f} alone",
            f"{per_cpu_ratio:.2f}",
        ),
        Row(
            "   whole machine busy during commit",
            f"{machine_racing:.2f} cores",
            f"{(machine_before + machine_after) / 2:.2f} cores alone",
            "",
            f"of {CPUS} CPUs",
        ),
        Row(
            "   Graveler.set p50 during commit",
            f"{racing.p50_ms:.2f} ms",
            f"{alone.p50_ms:.2f} ms alone",
            f"{racing.p50_ms / alone.p50_ms:.2f}",
        ),
        Row(
            f"   commit {n:,} entries (+ baseline writes)",
            f"{seconds:.1f} s",
            f"CPU {cpu_seconds:.1f} s; {len(failures)} writes failed",
        ),
    ]


def window(seconds: float) -> tuple[tuple[int, int], float]:
    """Sleep through a measuring window: its span in monotonic ns (shared by processes),
    and how many cores the whole machine kept busy meanwhile."""
    busy, start = machine_busy(), time.monotonic_ns()
    time.sleep(seconds)
    return (start, time.monotonic_ns()), busy_cores(busy, machine_busy())


def timed(calls: int, call: Callable[[int], object]) -> Latencies:
    latencies: list[int] = []
    clock = time.perf_counter_ns
    started = clock()
    for i in range(calls):
        before = clock()
        call(i)
        latencies.append(clock() - before)
    return Latencies.of(latencies, (clock() - started) / 1e9)


def count_first(entries: Iterator[tuple[bytes, Value]], amount: int) -> int:
    return sum(1 for _ in itertools.islice(entries, amount))


def bench_reads(lake: Lake, args: argparse.Namespace) -> list[Row]:
    """Point reads and 1000-entry listings on main: N committed entries, N/10 staged."""
    graveler, repository = lake.graveler, lake.repository()
    n, staged = args.entries, max(1, args.entries // 10)
    seconds = stage_bulk(lake, repository, "main", encoded(staged_entries(n, staged)))
    log(f"staged {staged:,} on main in {seconds:.1f} s; reading")
    branch = graveler.get_branch(repository, "main")
    partition = keys.staging_partition(branch.staging_token)
    rng = random.Random(7)
    committed_keys = [object_key(rng.randrange(n)) for _ in range(args.reads)]
    staged_keys = [key for key, _ in staged_entries(n, staged)]
    staged_keys = [rng.choice(staged_keys) for _ in range(args.reads)]
    starts = [object_key(rng.randrange(n)) for _ in range(args.lists)]

    def list_from(ref: str, start: bytes) -> None:
        if count_first(graveler.list(repository, ref, start=start), LIST_AMOUNT) < LIST_AMOUNT:
            raise RuntimeError(f"listing {ref!r} from {start!r} returned too few entries")

    profiler = cProfile.Profile() if args.profile else None
    if profiler:
        profiler.enable()
    timed(min(1000, args.reads), lambda i: graveler.get(repository, "main", committed_keys[i]))
    stats = lake.committed.stats
    hits, misses = stats.range_cache_hits, stats.range_reads
    get_any = timed(args.reads, lambda i: graveler.get(repository, "main", committed_keys[i]))
    hits, misses = stats.range_cache_hits - hits, stats.range_reads - misses
    get_staged = timed(args.reads, lambda i: graveler.get(repository, "main", staged_keys[i]))
    kv_get = timed(args.reads, lambda i: lake.store.get(partition, staged_keys[i]))
    list_head = timed(args.lists, lambda _: list_from("main", b""))
    list_any = timed(args.lists, lambda i: list_from("main", starts[i]))
    list_commit = timed(args.lists, lambda i: list_from(branch.commit_id, starts[i]))
    if profiler:
        profiler.disable()
        print(f"\n== cProfile of the reads (timings inflated) ==\n{profile_text(profiler, 20)}")

    def row(label: str, measured: Latencies, baseline: str = "", ratio: str = "") -> Row:
        value = f"{measured.p50_ms:.3f} / {measured.p99_ms:.3f}"
        return Row(label, value, baseline, ratio)

    return [
        row(
            f"3. get random committed key p50/p99 ms ({args.reads:,})",
            get_any,
            f"range cache miss {misses / max(1, hits + misses):.0%}",
        ),
        row(
            "   get staged key p50/p99 ms",
            get_staged,
            f"KV get {kv_get.p50_ms:.3f} / {kv_get.p99_ms:.3f}",
            f"{get_staged.p50_ms / kv_get.p50_ms:.1f}x p50",
        ),
        row(f"   list first {LIST_AMOUNT} p50/p99 ms ({args.lists})", list_head),
        row(
            f"   list {LIST_AMOUNT} from random key p50/p99 ms",
            list_any,
            f"commit only {list_commit.p50_ms:.1f} / {list_commit.p99_ms:.1f}",
            f"{list_any.p50_ms / list_commit.p50_ms:.1f}x p50",
        ),
    ]


# -- report -----------------------------------------------------------------------------------


def yes(met: bool) -> str:
    return "yes" if met else "NO"


def print_table(rows: list[Row]) -> None:
    widths = [max(len(getattr(r, f)) for r in rows) for f in ("label", "value", "baseline")]
    head = ("measurement", "value", "baseline (same run)", "ratio", "goal", "met")
    widths = [max(w, len(h)) for w, h in zip(widths, head, strict=False)] + [7, 9, 3]
    for cells in [head, *((r.label, r.value, r.baseline, r.ratio, r.goal, r.met) for r in rows)]:
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=1_000_000, help="N, entries per commit")
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run, < 30 s")
    parser.add_argument("--writers", type=int, default=4, help="writer threads in measure 2")
    parser.add_argument("--baseline-seconds", type=float, default=10.0, help="writers alone")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds before the baseline")
    parser.add_argument("--reads", type=int, default=20_000, help="point reads per kind")
    parser.add_argument("--lists", type=int, default=300, help="listings per kind")
    parser.add_argument("--set-sample", type=int, default=5000, help="Graveler.set calls timed")
    parser.add_argument("--profile", action="store_true", help="print cProfile tops")
    parser.add_argument("--dir", default=None, help="parent folder of the temporary folder")
    args = parser.parse_args(argv)
    if args.quick:
        args.entries = min(args.entries, 20_000)
        args.baseline_seconds, args.warmup = 1.5, 0.3
        args.reads, args.lists, args.set_sample = 1000, 30, 500
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    ctx = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="kvlake-graveler-bench-", dir=args.dir) as tmp:
        paths = Paths(kv_url=f"sqlite://{tmp}/kv.db", blocks_url=f"local://{tmp}/blocks")
        log(f"N={args.entries:,}; SQLite KV and local blockstore in {tmp}")
        lake = Lake(paths)
        try:
            repository = lake.graveler.create_repository(REPOSITORY, storage_namespace=NAMESPACE)
            first_commit = lake.graveler.get_branch(repository, "main").commit_id
            started = time.perf_counter()
            entries = encoded(committed_entries(args.entries))
            log(f"made {len(entries):,} entries in {time.perf_counter() - started:.1f} s")
            rows = bench_commit(ctx, lake, paths, args, entries)
            rows += bench_concurrent(ctx, lake, paths, args, entries, first_commit)
            del entries
            rows += bench_reads(lake, args)
        finally:
            lake.close()
    print(
        f"\ngraveler benchmarks, N={args.entries:,}, SQLite KV + local blockstore, {CPUS} CPUs,"
        f" load average {os.getloadavg()[0]:.1f}"
    )
    print_table(rows)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
