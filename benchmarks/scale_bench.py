"""Costs along the dimensions installations grow in: small against large, same run (issue 33).

For each dimension, one operation that should not touch the data the dimension
adds runs beside a small and a large amount of it, on SQLite and on PostgreSQL
(when KVLAKE_TEST_POSTGRES_DSN, default postgresql://postgres@127.0.0.1:5432/test,
answers). Printed per operation: KV rows read and round trips (deterministic,
from CountingStore), this process's CPU time and wall time (median of a few
runs), and the large/small ratio. The data a dimension adds is written straight
through the KV store (records copied from one made by the real API), since
creating it is not what is measured.

    .venv/bin/python benchmarks/scale_bench.py --quick   # 10x smaller sizes, ~1 minute
    .venv/bin/python benchmarks/scale_bench.py           # the issue's sizes, a few minutes
    .venv/bin/python benchmarks/scale_bench.py -k cleaner -k orphan   # those rows only
    .venv/bin/python benchmarks/scale_bench.py --driver postgres      # one driver only

Dimensions: staged entries (GC candidates checked in batches), branches (one
due record's in-use check, with a path and a GC one's; a cleaner pass dropping
5 tokens; listBranches with a prefix, and beside hidden branches), repositories
(listRepositories with a prefix, and beside deleted names; an idle cleaner
pass; an orphan sweep), commits (`tip~N` over the whole history, called again),
finished records (a runner's idle pass; listing open pull requests beside closed
ones). `-k TEXT` (repeatable) runs the operations whose label contains TEXT.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Final

import msgspec
import psycopg

from kvlake import ids
from kvlake.api.pages import page
from kvlake.blockstore import open_blockstore
from kvlake.catalog import entry_ref
from kvlake.config import Settings
from kvlake.deletion import GcMarks, PendingDelete, ReferenceChecker, gc_records
from kvlake.graveler import keys
from kvlake.graveler.lifecycle.orphans import SWEEP_SLICE, OrphanSweep
from kvlake.graveler.lifecycle.tombstones import Tombstones
from kvlake.graveler.records import Commit, decode_branch, decode_repository, encode
from kvlake.graveler.refs.lineage import unstamped
from kvlake.graveler.refs.store import commit_id, partition_of
from kvlake.kv import CountingStore, open_store
from kvlake.lake import Lake
from kvlake.operations import Operation

DEFAULT_DSN: Final = "postgresql://postgres@127.0.0.1:5432/test"
RUNS: Final = 3


@dataclass(frozen=True)
class Figure:
    rows: int
    trips: int
    cpu: float
    wall: float


@dataclass(frozen=True)
class Sizes:
    staged: tuple[int, int]
    branches: tuple[int, int]
    repositories: tuple[int, int]
    commits: tuple[int, int]
    walks: tuple[int, int]
    finished: tuple[int, int]


FULL: Final = Sizes(
    staged=(1_000, 100_000),
    branches=(100, 10_000),
    repositories=(1_000, 50_000),
    commits=(1_000, 100_000),
    walks=(1_000, 50_000),
    finished=(100, 10_000),
)
QUICK: Final = Sizes(
    staged=(100, 10_000),
    branches=(10, 1_000),
    repositories=(100, 5_000),
    commits=(100, 10_000),
    walks=(1_000, 10_000),
    finished=(10, 1_000),
)


def measure(store: CountingStore, operation: Callable[[], object], *, runs: int = RUNS) -> Figure:
    """Rows and round trips of the first run; median CPU and wall time over `runs`."""
    cpus, walls, rows, trips = [], [], 0, 0
    for run in range(runs):
        store.reset()
        cpu, wall = time.process_time(), time.perf_counter()
        operation()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
        if run == 0:
            rows, trips = store.rows_read, store.round_trips
    return Figure(rows, trips, statistics.median(cpus), statistics.median(walls))


class Bench:
    """A fresh lake (one repository, `repo1`) on a counted store, in a scratch folder."""

    def __init__(self, url: str, scratch: str) -> None:
        self.store = CountingStore(open_store(url))
        self.blocks = open_blockstore(f"local://{scratch}/blocks")
        self.lake = Lake(Settings(), self.store, self.blocks, token_drop_delay=0)
        self.graveler = self.lake.graveler
        self.repository = self.graveler.create_repository(
            "repo1", storage_namespace="local://lake/repo1"
        )

    def close(self) -> None:
        self.store.close()
        self.blocks.close()

    def partition(self) -> bytes:
        return keys.instance_partition(self.repository.name, self.repository.instance_uid)

    def add_repositories(self, records: Iterable[tuple[bytes, bytes]]) -> None:
        """Repository records as their creations would leave them: each instance's uid
        named (`graveler_instances`), and each not deleted in the live index (liverepos.py)."""
        items = list(records)
        self.store.set_many(keys.REPOSITORIES, items)
        decoded = [decode_repository(raw) for _, raw in items]
        self.store.set_many(
            keys.INSTANCES, ((r.instance_uid.encode(), r.name.encode()) for r in decoded)
        )
        live = (r for r in decoded if r.state != "deleted")
        self.store.set_many(
            keys.LIVE_REPOSITORIES,
            ((keys.live_repository_key(r.name, r.instance_uid), b"") for r in live),
        )

    def add_branches(self, count: int, prefix: str = "b") -> None:
        """`count` branches copied from main's record, each with a staging token of its own."""
        raw, _ = self.store.get(self.partition(), keys.branch_key("main"))
        main = decode_branch(raw)
        uid = self.repository.instance_uid
        items = (
            (
                keys.branch_key(f"{prefix}{n:06d}"),
                encode(msgspec.structs.replace(main, staging_token=keys.new_staging_token(uid))),
            )
            for n in range(count)
        )
        self.store.set_many(self.partition(), items)


# -- the dimensions ------------------------------------------------------------------


def _gc_setup(bench: Bench, staged: int) -> list[list[PendingDelete]]:
    """`staged` entries on main, a GC run's saved marks, and 10 batches of 100 candidates."""
    bench.lake.catalog.upload(bench.repository, "main", "first", io.BytesIO(b"x"))
    token = bench.graveler.get_branch(bench.repository, "main").staging_token
    raw, _ = bench.store.get(keys.staging_partition(token), b"first")
    partition = keys.staging_partition(token)
    bench.store.set_many(partition, ((b"p%07d" % n, raw) for n in range(staged)))
    GcMarks(bench.store).save("run1", [])
    addresses = [f"data/old/{n}" for n in range(1000)]
    log, repository = bench.lake.deletion_log, bench.repository
    records = list(gc_records(log, repository, "run1", time.time(), addresses))
    return [records[start : start + 100] for start in range(0, len(records), 100)]


def _checker(bench: Bench) -> ReferenceChecker:
    return ReferenceChecker(bench.graveler, bench.blocks, bench.lake.purges, entry_ref)


def gc_run(bench: Bench, staged: int) -> Figure:
    """A GC run's 10 batches of 100 candidates, checked beside `staged` staged entries:
    the run reads the staged entries once (its staged-address set)."""
    batches = _gc_setup(bench, staged)

    def check() -> None:
        checker = _checker(bench)
        for batch in batches:
            checker.check(batch)

    return measure(bench.store, check)


def gc_batch(bench: Bench, staged: int) -> Figure:
    """One more batch of 100 GC candidates of a run already under way."""
    batches = _gc_setup(bench, staged)
    checker = _checker(bench)
    checker.check(batches[0])
    return measure(bench.store, lambda: checker.check(batches[1]))


def due_record(bench: Bench, branches: int) -> Figure:
    """One overwritten-staged record's in-use check, beside `branches` branches."""
    bench.add_branches(branches)
    stat = bench.lake.catalog.upload(bench.repository, "main", "a", io.BytesIO(b"x"))
    token = bench.graveler.get_branch(bench.repository, "main").staging_token
    record = bench.lake.deletion_log.new_record(
        bench.repository, stat.address, "overwritten_staged", staging_token=token, path=b"a"
    )
    checker = _checker(bench)
    return measure(bench.store, lambda: checker.check([record]))


def due_gc_record(bench: Bench, branches: int) -> Figure:
    """One GC candidate's in-use check by a fresh checker (no staged-address set yet),
    beside `branches` branches with empty staging."""
    bench.add_branches(branches)
    GcMarks(bench.store).save("run1", [])
    log, repository = bench.lake.deletion_log, bench.repository
    records = list(gc_records(log, repository, "run1", time.time(), ["data/old/1"]))
    return measure(bench.store, lambda: _checker(bench).check(records))


def cleaner_pass(bench: Bench, branches: int) -> Figure:
    """A cleaner pass dropping 5 tokens (5 deleted branches), beside `branches` branches."""
    bench.add_branches(branches)
    cleaner = bench.lake.cleaner()
    cleaner.clean_once()  # the first pass also sweeps for orphans

    def drop_five() -> None:
        for n in range(5):
            name = f"gone{n}"
            bench.graveler.create_branch(bench.repository, name, "main")
            bench.lake.catalog.upload(bench.repository, name, "a", io.BytesIO(b"x"))
            bench.graveler.delete_branch(bench.repository, name)

    figures = []
    for _ in range(RUNS):
        drop_five()
        figures.append(measure(bench.store, cleaner.clean_once, runs=1))
    return Figure(
        figures[0].rows,
        figures[0].trips,
        statistics.median(f.cpu for f in figures),
        statistics.median(f.wall for f in figures),
    )


def branch_prefix(bench: Bench, branches: int) -> Figure:
    """listBranches' first page of 100 with a prefix, beside `branches` branches before it."""
    bench.add_branches(branches, prefix="a")
    bench.add_branches(200, prefix="x")

    def listing() -> None:
        named = (n for n, _ in bench.graveler.list_branches(bench.repository, prefix="x"))
        page(named, 100, str, prefix="x")

    return measure(bench.store, listing)


def hidden_branches(bench: Bench, hidden: int) -> Figure:
    """listBranches' first page of 100 (hidden ones left out), beside `hidden` hidden
    branches sorting before the 200 visible ones (written as creations leave them)."""
    raw, _ = bench.store.get(bench.partition(), keys.branch_key("main"))
    main = decode_branch(raw)
    uid = bench.repository.instance_uid
    bench.store.set_many(
        bench.partition(),
        (
            (keys.branch_key(f"aaa{n:06d}"), encode(msgspec.structs.replace(main, hidden=True)))
            for n in range(hidden)
        ),
    )
    bench.add_branches(200, prefix="x")
    index = keys.visible_branches_partition(bench.repository.name, uid)
    bench.store.set_many(index, ((f"x{n:06d}".encode(), b"") for n in range(200)))

    def listing() -> None:
        named = (n for n, _ in bench.graveler.list_branches(bench.repository, visible_only=True))
        page(named, 100, str)

    return measure(bench.store, listing)


def closed_pulls(bench: Bench, closed: int) -> Figure:
    """Listing open pull requests (a first page of 100) beside `closed` closed ones."""
    graveler, repo = bench.graveler, bench.repository
    graveler.create_branch(repo, "dev", "main")
    pulls = graveler.pulls

    def open_one() -> str:
        return pulls.create(
            repo, title="t", description="", author="b", source="dev", destination="main"
        )

    for _ in range(closed):
        pulls.update(repo, open_one(), status="closed")
    for _ in range(20):
        open_one()

    def listing() -> None:
        page((i for i, _ in pulls.list(repo, status="open")), 100, str)

    return measure(bench.store, listing)


def repository_prefix(bench: Bench, repositories: int) -> Figure:
    """listRepositories' first page of 100 with a prefix, beside `repositories` before it."""
    raw, _ = bench.store.get(keys.REPOSITORIES, keys.repository_key("repo1"))
    model = decode_repository(raw)

    def copies(prefix: str, count: int) -> Iterator[tuple[bytes, bytes]]:
        for n in range(count):
            name = f"{prefix}{n:06d}"
            record = msgspec.structs.replace(
                model, name=name, instance_uid=ids.new_uid(), storage_namespace=f"mem://x/{name}"
            )
            yield keys.repository_key(name), encode(record)

    bench.add_repositories(copies("aaa", repositories))
    bench.add_repositories(copies("xxx", 200))

    def listing() -> None:
        named = bench.graveler.list_repositories(prefix="xxx")
        page(named, 100, lambda r: r.name, prefix="xxx")

    return measure(bench.store, listing)


def repository_tombstones(bench: Bench, deleted: int) -> Figure:
    """listRepositories' first page of 100 (no prefix), beside `deleted` tombstones of
    deleted names sorting before the 200 live ones."""
    raw, _ = bench.store.get(keys.REPOSITORIES, keys.repository_key("repo1"))
    model = decode_repository(raw)

    def copies(prefix: str, count: int, state: str) -> Iterator[tuple[bytes, bytes]]:
        for n in range(count):
            name = f"{prefix}{n:06d}"
            record = msgspec.structs.replace(
                model,
                name=name,
                instance_uid=ids.new_uid(),
                storage_namespace=f"mem://x/{name}",
                state=state,
            )
            yield keys.repository_key(name), encode(record)

    bench.add_repositories(copies("aaa", deleted, "deleted"))
    bench.add_repositories(copies("xxx", 200, "active"))

    def listing() -> None:
        page(bench.graveler.list_repositories(), 100, lambda r: r.name)

    return measure(bench.store, listing)


def cleaner_idle(bench: Bench, repositories: int) -> Figure:
    """An idle cleaner pass beside `repositories` records, half of them tombstones."""
    raw, _ = bench.store.get(keys.REPOSITORIES, keys.repository_key("repo1"))
    model = decode_repository(raw)

    def copies() -> Iterator[tuple[bytes, bytes]]:
        for n in range(repositories):
            name = f"aaa{n:06d}"
            record = msgspec.structs.replace(
                model,
                name=name,
                instance_uid=ids.new_uid(),
                storage_namespace=f"mem://x/{name}",
                state="deleted" if n % 2 else "active",
            )
            yield keys.repository_key(name), encode(record)

    bench.add_repositories(copies())
    cleaner = bench.lake.cleaner()
    cleaner.clean_once()  # the first pass sweeps and reads every record once
    return measure(bench.store, cleaner.clean_once)


def orphan_sweep(bench: Bench, repositories: int, *, slice_size: int = SWEEP_SLICE) -> Figure:
    """One orphan sweep beside `repositories` live repositories, each with a staging
    partition no branch names (an orphan to note): the sweep looks at one slice."""
    raw, _ = bench.store.get(keys.REPOSITORIES, keys.repository_key("repo1"))
    model = decode_repository(raw)
    records, strays = [], []
    for n in range(repositories):
        name, uid = f"aaa{n:06d}", ids.new_uid()
        record = msgspec.structs.replace(
            model, name=name, instance_uid=uid, storage_namespace=f"mem://x/{name}"
        )
        records.append((keys.repository_key(name), encode(record)))
        strays.append(keys.staging_partition(keys.new_staging_token(uid)))
    bench.add_repositories(records)
    for partition in strays:
        bench.store.set(partition, b"k", b"v")
    sweep = OrphanSweep(bench.store, bench.graveler._refs, clock=time.time, slice_size=slice_size)
    return measure(bench.store, sweep.run)


def orphan_sweep_small_slice(bench: Bench, repositories: int) -> Figure:
    """The orphan sweep with a slice of 250 partitions, so that at both sizes each of the
    measured sweeps looks at a full slice (the default slice, 10,000, holds all of the
    small side's partitions and a fifth of the large side's): the cost per slice."""
    return orphan_sweep(bench, repositories, slice_size=250)


def orphan_sweep_queued(bench: Bench, queued: int) -> Figure:
    """One orphan sweep over 100 orphans beside `queued` token drops waiting in the queue:
    the sweep asks the token-keyed index about its slice's tokens, not the queue."""
    uid = bench.repository.instance_uid
    for _ in range(100):
        bench.store.set(keys.staging_partition(keys.new_staging_token(uid)), b"k", b"v")
    tokens = [keys.new_staging_token(uid) for _ in range(queued)]
    bench.graveler.queue_token_drops(bench.repository, tokens, branch="main")
    OrphanSweep(bench.store, bench.graveler._refs, clock=time.time).run()  # indexes, notes
    sweep = OrphanSweep(bench.store, bench.graveler._refs, clock=time.time)
    return measure(bench.store, sweep.run)


def tombstones_idle(bench: Bench, queued: int) -> Figure:
    """An idle cleaner pass beside `queued` tombstones waiting for their grace."""
    tombstones = Tombstones(bench.store, clock=bench.lake.clock)
    for n in range(queued):
        tombstones.queue(f"gone{n:06d}", ids.new_uid())
    cleaner = bench.lake.cleaner()
    cleaner.clean_once()  # the first pass sweeps and reads every record once
    return measure(bench.store, cleaner.clean_once)


def _store_old(bench: Bench, batch: list[tuple[str, Commit]]) -> None:
    """Write commit records as kvlake did before it recorded walk fields (no skips)."""
    bench.store.set_many(
        partition_of(bench.repository),
        ((keys.commit_key(i), encode(unstamped(c))) for i, c in batch),
    )


def ref_walk(bench: Bench, commits: int, *, old: bool = False) -> Figure:
    """`tip~N` to the first commit, called again (the first call reads the history);
    the history written by `add_commits` (as a restore writes it: with skip pointers),
    or `old` as records of older kvlake versions were."""
    refs = bench.graveler._refs

    def add(batch: list[tuple[str, Commit]]) -> None:
        if old:
            _store_old(bench, batch)
        else:
            refs.add_commits(bench.repository, batch)

    tip = bench.graveler.get_branch(bench.repository, "main").commit_id
    base = refs.get_commit(bench.repository, tip)
    batch: list[tuple[str, Commit]] = []
    for n in range(commits):
        commit = msgspec.structs.replace(
            base, message=f"c{n}", parents=(tip,), generation=base.generation + n + 1
        )
        tip = commit_id(commit)
        batch.append((tip, commit))
        if len(batch) == 10_000:
            add(batch)
            batch = []
    add(batch)
    bench.graveler.create_tag(bench.repository, "tip", tip)
    ref = f"tip~{commits}"
    bench.graveler.resolve_ref(bench.repository, ref)  # the first walk reads every commit
    return measure(bench.store, lambda: bench.graveler.resolve_ref(bench.repository, ref))


def _cold_walk(bench: Bench, commits: int, *, stamped: bool, walk: str) -> Figure:
    """`tip~N` or the merge base of two branches forked N commits back, on empty caches;
    `stamped` stores the commits with skip pointers (`add_commits`), else as records of
    older kvlake versions were (`_store_old`): the baseline."""
    from kvlake.graveler.history.mergebase import find_merge_base
    from kvlake.graveler.refs.refexpr import RefResolver
    from kvlake.graveler.refs.store import Refs

    refs = Refs(bench.store)
    root = bench.graveler.get_branch(bench.repository, "main").commit_id

    def line(base: str, count: int, side: str) -> str:
        tip, commit = base, refs.get_commit(bench.repository, base)
        batch: list[tuple[str, Commit]] = []
        for n in range(count):
            commit = msgspec.structs.replace(
                commit, message=f"{side}{n}", parents=(tip,), generation=commit.generation + 1
            )
            tip = commit_id(commit)
            batch.append((tip, commit))
        if stamped:  # as `add_commit` one at a time would, in one call (a restore's)
            refs.add_commits(bench.repository, batch)
        else:
            _store_old(bench, batch)
        return tip

    left = line(root, commits, "l")
    right = line(line(root, 1, "f"), commits, "r") if walk == "base" else ""

    def operation() -> object:
        fresh = Refs(bench.store)  # empty caches: a new process, or another one's history
        if walk == "base":
            return find_merge_base(fresh, bench.repository, left, right)
        return RefResolver(fresh).resolve(bench.repository, f"{left}~{commits}")

    return measure(bench.store, operation)


def ref_walk_old(bench: Bench, commits: int) -> Figure:
    return ref_walk(bench, commits, old=True)


def cold_tilde(bench: Bench, commits: int) -> Figure:
    return _cold_walk(bench, commits, stamped=True, walk="tilde")


def cold_tilde_old(bench: Bench, commits: int) -> Figure:
    return _cold_walk(bench, commits, stamped=False, walk="tilde")


def cold_base(bench: Bench, commits: int) -> Figure:
    return _cold_walk(bench, commits, stamped=True, walk="base")


def cold_base_old(bench: Bench, commits: int) -> Figure:
    return _cold_walk(bench, commits, stamped=False, walk="base")


# -- running -------------------------------------------------------------------------


def stores(
    dsn: str, scratch: str, drivers: Iterable[str]
) -> Iterator[tuple[str, Callable[[], str]]]:
    counter = iter(range(1_000_000))
    if "sqlite" in drivers:
        yield "sqlite", lambda: f"sqlite://{scratch}/kv{next(counter)}.db"
    if "postgres" not in drivers:
        return
    try:
        with psycopg.connect(dsn, connect_timeout=5):
            pass
    except psycopg.Error as exc:
        print(f"postgres skipped: {' '.join(str(exc).split())}", file=sys.stderr)
        return
    table = f"scale_bench_{os.getpid()}"
    yield "postgres", lambda: f"{dsn}?table={table}_{next(counter)}"


def drop_tables(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE tablename LIKE %s",
            (f"scale_bench_{os.getpid()}_%",),
        ).fetchall()
        for (table,) in rows:
            conn.execute(f'DROP TABLE IF EXISTS "{table}"')


def runner_idle(bench: Bench, finished: int) -> Figure:
    """A runner's idle pass beside `finished` operations kept for their retention."""
    ledger, now = bench.lake.ledger, bench.lake.clock()
    for _ in range(finished):
        ledger.create(
            Operation(
                id=ids.new_uid(),
                kind="bulk-delete",
                repository="repo1",
                instance_uid=bench.repository.instance_uid,
                status="completed",
                created_by="bench",
                created_at=now,
                last_updated_at=now,
            )
        )
    runner = bench.lake.operations
    runner.concurrency = 0  # clean and look only: start nothing
    runner.dispatch(threading.Event(), 60)  # the first pass cleans them (and looks for expired)
    return measure(bench.store, lambda: runner.dispatch(threading.Event(), 60))


DIMENSIONS: Final = (
    ("GC run, 10 batches of 100", "staged", gc_run),
    ("GC batch of 100, run under way", "staged", gc_batch),
    ("in-use check of 1 record", "branches", due_record),
    ("in-use check of 1 GC record", "branches", due_gc_record),
    ("cleaner pass dropping 5 tokens", "branches", cleaner_pass),
    ("listBranches prefix, 1st page", "branches", branch_prefix),
    ("listBranches, hidden before", "branches", hidden_branches),
    ("listRepositories prefix, 1st page", "repositories", repository_prefix),
    ("listRepositories, deleted before", "repositories", repository_tombstones),
    ("cleaner idle pass (half tombstones)", "repositories", cleaner_idle),
    ("orphan sweep (one slice)", "repositories", orphan_sweep),
    ("orphan sweep, slice of 250", "repositories", orphan_sweep_small_slice),
    ("orphan sweep, drops queued", "finished", orphan_sweep_queued),
    ("cleaner idle, tombstones queued", "finished", tombstones_idle),
    ("tip~N again (N = all commits)", "commits", ref_walk),
    ("tip~N again, old records (baseline)", "commits", ref_walk_old),
    ("cold tip~N, old records (baseline)", "walks", cold_tilde_old),
    ("cold tip~N, skip pointers", "walks", cold_tilde),
    ("cold merge base, old records (base)", "walks", cold_base_old),
    ("cold merge base, skip pointers", "walks", cold_base),
    ("runner idle pass", "finished", runner_idle),
    ("open pull requests, closed kept", "finished", closed_pulls),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10x smaller sizes")
    parser.add_argument(
        "-k",
        action="append",
        default=[],
        metavar="TEXT",
        help="run only the operations whose label contains TEXT (repeatable)",
    )
    parser.add_argument(
        "--driver",
        action="append",
        choices=("sqlite", "postgres"),
        help="run on this driver only (repeatable; default both), e.g. one process per driver",
    )
    args = parser.parse_args()
    rows = [row for row in DIMENSIONS if not args.k or any(k in row[0] for k in args.k)]
    sizes = QUICK if args.quick else FULL
    dsn = os.environ.get("KVLAKE_TEST_POSTGRES_DSN", DEFAULT_DSN)
    header = (
        f"{'driver':8} {'operation':34} {'dimension':>20}"
        f" {'rows':>15} {'trips':>11} {'CPU ms':>15} {'wall ms':>15} {'CPU x':>6}"
    )
    print(header)
    with tempfile.TemporaryDirectory(prefix="kvlake-scale-bench-") as scratch:
        try:
            for driver, new_url in stores(dsn, scratch, args.driver or ("sqlite", "postgres")):
                for label, dimension, operation in rows:
                    small, large = getattr(sizes, dimension)
                    figures = []
                    for size in (small, large):
                        bench = Bench(new_url(), scratch)
                        try:
                            figures.append(operation(bench, size))
                        finally:
                            bench.close()
                    a, b = figures
                    print(
                        f"{driver:8} {label:34} {f'{dimension} {small:,}->{large:,}':>20}"
                        f" {f'{a.rows:,}->{b.rows:,}':>15} {f'{a.trips}->{b.trips}':>11}"
                        f" {f'{a.cpu * 1e3:.1f}->{b.cpu * 1e3:.1f}':>15}"
                        f" {f'{a.wall * 1e3:.1f}->{b.wall * 1e3:.1f}':>15}"
                        f" {b.cpu / max(a.cpu, 1e-6):>6.2f}",
                        flush=True,
                    )
        finally:
            with contextlib.suppress(psycopg.Error):
                drop_tables(dsn)


if __name__ == "__main__":
    main()
