"""Listings cost what they list, not what sorts before them (issue 33).

Counted in KV rows read (CountingStore), which is deterministic: the same
listing runs beside few and many names it does not return, and the rows it
reads must not grow with them.
"""

from __future__ import annotations

import msgspec
import pytest

from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.graveler import keys
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.history.mergebase import find_merge_base
from kvlake.graveler.lifecycle.cleaner import Cleaner, CleanerReport
from kvlake.graveler.lifecycle.orphans import OrphanSweep
from kvlake.graveler.lifecycle.repositories import INITIAL_TIMEOUT
from kvlake.graveler.records import Repository
from kvlake.kv import CountingStore
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import make_graveler, value
from tests.support import FakeClock

SIZES = (5, 300)


def counted_graveler() -> tuple[Graveler, CountingStore]:
    store = CountingStore(MemoryStore())
    return make_graveler(store, FakeClock(), MemoryBlockStore()), store


def test_a_repository_prefix_reads_only_the_names_it_lists() -> None:
    rows = []
    for size in SIZES:
        graveler, store = counted_graveler()
        for n in range(size):
            graveler.create_bare_repository(f"aaa{n:04d}", storage_namespace=f"mem://b/a{n}")
        for name in ("mmm1", "mmm2"):
            graveler.create_bare_repository(name, storage_namespace=f"mem://b/{name}")
        store.reset()
        assert [r.name for r in graveler.list_repositories(prefix="m")] == ["mmm1", "mmm2"]
        assert [r.name for r in graveler.list_repositories(after="mmm1", prefix="m")] == ["mmm2"]
        assert [r.name for r in graveler.list_repositories(after="a", prefix="m")] == [
            "mmm1",
            "mmm2",
        ]
        assert [r.name for r in graveler.list_repositories(after="n", prefix="m")] == []
        rows.append(store.rows_read)
    assert rows[0] == rows[1]


def test_a_branch_prefix_reads_only_the_names_it_lists() -> None:
    rows = []
    for size in SIZES:
        graveler, store = counted_graveler()
        repository = graveler.create_repository("repo", storage_namespace="mem://b/repo")
        for n in range(size):
            graveler.create_branch(repository, f"a{n:04d}", "main")
        for name in ("x1", "x2"):
            graveler.create_branch(repository, name, "main")
        store.reset()
        assert [n for n, _ in graveler.list_branches(repository, prefix="x")] == ["x1", "x2"]
        branches = graveler.list_branches(repository, after="x1", prefix="x")
        assert [n for n, _ in branches] == ["x2"]
        rows.append(store.rows_read)
    assert rows[0] == rows[1]


def test_a_tag_prefix_reads_only_the_names_it_lists() -> None:
    rows = []
    for size in SIZES:
        graveler, store = counted_graveler()
        repository = graveler.create_repository("repo", storage_namespace="mem://b/repo")
        for n in range(size):
            graveler.create_tag(repository, f"a{n:04d}", "main")
        for name in ("x1", "x2"):
            graveler.create_tag(repository, name, "main")
        store.reset()
        assert [n for n, _ in graveler.list_tags(repository, prefix="x")] == ["x1", "x2"]
        assert [n for n, _ in graveler.list_tags(repository, after="x1", prefix="x")] == ["x2"]
        rows.append(store.rows_read)
    assert rows[0] == rows[1]


def chain(graveler: Graveler, repository: Repository, length: int, side: str = "") -> str:
    """`length` commits on top of main's, stored straight as records; returns the tip."""
    tip = graveler.get_branch(repository, "main").commit_id
    base = graveler._refs.get_commit(repository, tip)
    for n in range(length):
        commit = msgspec.structs.replace(
            base, message=f"{side}c{n}", parents=(tip,), generation=base.generation + n + 1
        )
        tip = graveler._refs.add_commit(repository, commit)
    return tip


def test_walking_a_history_longer_than_the_commit_cache_again_reads_no_commit() -> None:
    rows = []
    for length in SIZES:
        store = CountingStore(MemoryStore())
        blocks = MemoryBlockStore()
        graveler = Graveler(  # a commit cache far shorter than the history
            store,
            CommittedManager(blocks),
            check_namespace=blocks.check_namespace,
            clock=FakeClock(),
            commit_cache_size=2,
        )
        repository = graveler.create_repository("repo", storage_namespace="mem://b/repo")
        graveler.create_tag(repository, "tip", chain(graveler, repository, length))
        other = graveler.create_repository("other", storage_namespace="mem://b/other")
        graveler.create_tag(other, "tip", chain(graveler, other, 3 * length))  # evicts nothing
        root = graveler.resolve_ref(repository, f"tip~{length}").commit_id
        store.reset()
        assert graveler.resolve_ref(repository, f"tip~{length}").commit_id == root
        rows.append(store.rows_read)
    assert rows[0] == rows[1]


def test_a_merge_base_of_long_forks_found_again_reads_no_commit() -> None:
    rows = []
    for length in SIZES:
        store = CountingStore(MemoryStore())
        blocks = MemoryBlockStore()
        graveler = Graveler(
            store,
            CommittedManager(blocks),
            check_namespace=blocks.check_namespace,
            clock=FakeClock(),
            commit_cache_size=2,
        )
        repository = graveler.create_repository("repo", storage_namespace="mem://b/repo")
        fork = graveler.get_branch(repository, "main").commit_id
        left, right = (
            chain(graveler, repository, length, "l"),
            chain(graveler, repository, length, "r"),
        )
        assert left != right
        assert find_merge_base(graveler._refs, repository, left, right) == fork
        store.reset()
        assert find_merge_base(graveler._refs, repository, left, right) == fork
        rows.append(store.rows_read)
    assert rows[0] == rows[1]


def test_an_idle_cleaner_pass_reads_no_repository_record() -> None:
    rows = []
    for size in SIZES:
        graveler, store = counted_graveler()
        for n in range(size):
            graveler.create_bare_repository(f"aaa{n:04d}", storage_namespace=f"mem://b/a{n}")
            if n % 2:
                graveler.delete_repository(f"aaa{n:04d}")  # a tombstone stays
        cleaner = Cleaner(graveler)
        cleaner.clean_once()  # the first pass sweeps and reads every record once
        store.reset()
        assert cleaner.clean_once() == CleanerReport()
        rows.append(store.rows_read)
    assert rows[0] == rows[1]


def test_the_cleaner_finds_a_crashed_creation_through_its_marker_and_drops_the_marker() -> None:
    clock = FakeClock()
    store = CountingStore(MemoryStore())
    graveler = make_graveler(store, clock, MemoryBlockStore())
    cleaner = Cleaner(graveler)
    cleaner.clean_once()
    crashed, _ = graveler._repositories.begin_create(
        "crashed", storage_namespace="mem://b/crashed", default_branch="main"
    )
    graveler.create_bare_repository("done", storage_namespace="mem://b/done")
    assert [k for k, _ in store.scan(keys.CREATIONS)] == [
        keys.creation_key("crashed", crashed.instance_uid)
    ]
    assert cleaner.clean_once().abandoned_creations == 0  # not stale yet
    clock.advance(INITIAL_TIMEOUT + 1)
    assert cleaner.clean_once().abandoned_creations == 1
    assert graveler._repositories.load("crashed")[0].state == "deleted"
    cleaner.clean_once()
    assert list(store.scan(keys.CREATIONS)) == []


def test_a_marker_whose_record_is_not_written_yet_is_kept_until_the_timeout() -> None:
    clock = FakeClock()
    store = CountingStore(MemoryStore())
    graveler = make_graveler(store, clock, MemoryBlockStore())
    cleaner = Cleaner(graveler)
    marker = keys.creation_key("inflight", "0" * 26)
    store.set(keys.CREATIONS, marker, b"%.3f" % clock())  # a creation about to write its record
    cleaner.clean_once()
    cleaner.clean_once()
    assert [k for k, _ in store.scan(keys.CREATIONS)] == [marker]
    clock.advance(INITIAL_TIMEOUT + 1)
    cleaner.clean_once()
    assert list(store.scan(keys.CREATIONS)) == []


def test_an_orphan_sweep_looks_at_one_slice_of_partitions_whatever_the_store_holds() -> None:
    rows, noted = [], []
    for strays in (30, 300):
        graveler, store = counted_graveler()
        repository = graveler.create_repository("repo", storage_namespace="mem://b/repo")
        for _ in range(strays):  # staging partitions no branch names: orphans to note
            token = keys.new_staging_token(repository.instance_uid)
            store.set(keys.staging_partition(token), b"k", b"v")
        sweep = OrphanSweep(store, graveler._refs, clock=graveler.clock, slice_size=20)
        store.reset()
        noted.append(sweep.run().noted)
        rows.append(store.rows_read)
    assert noted[0] == noted[1] > 0 and rows[0] == rows[1]


def test_orphan_sweeps_in_slices_note_then_drop_every_orphan() -> None:
    clock = FakeClock()
    store = CountingStore(MemoryStore())
    graveler = make_graveler(store, clock, MemoryBlockStore())
    repository = graveler.create_repository("repo", storage_namespace="mem://b/repo")
    strays = {
        keys.staging_partition(keys.new_staging_token(repository.instance_uid)) for _ in range(45)
    }
    for partition in strays:
        store.set(partition, b"k", b"v")
    sweep = OrphanSweep(store, graveler._refs, clock=clock, grace=10, slice_size=20)
    assert sum(sweep.run().noted for _ in range(4)) == 45  # 20 + 20 + the last 5, then wraps
    clock.advance(11)
    assert sum(sweep.run().dropped for _ in range(4)) == 45
    assert not strays & set(store.partitions())
    assert list(store.scan(keys.ORPHANS)) == []


def test_an_orphan_sweep_reads_the_repositories_of_its_slice_not_every_repository() -> None:
    """Issue 33 item 6: a sweep read every repository record on every pass."""
    rows, noted = [], []
    for repositories in (20, 1000):
        graveler, store = counted_graveler()
        for n in range(repositories):  # each with a staging partition no branch names
            repository = graveler.create_bare_repository(
                f"aaa{n:04d}", storage_namespace=f"mem://b/a{n}"
            )
            token = keys.new_staging_token(repository.instance_uid)
            store.set(keys.staging_partition(token), b"k", b"v")
        store.set(keys.SWEEP, keys.SWEEP_CURSOR, keys.STAGING_PREFIX)  # a slice of strays
        sweep = OrphanSweep(store, graveler._refs, clock=graveler.clock, slice_size=10)
        store.reset()
        noted.append(sweep.run().noted)
        rows.append(store.rows_read)
    assert noted[0] == noted[1] == 10 and rows[0] == rows[1]


@pytest.mark.parametrize("older_store", [False, True])
def test_a_live_repositorys_staging_is_found_live_by_a_slice_that_misses_its_instance(
    older_store: bool,
) -> None:
    """A slice of staging partitions only finds their owners by uid (the index a creation
    writes); a store whose creations wrote no uid names gets the index built on first use."""
    graveler, store = counted_graveler()
    repository = graveler.create_repository("repo", storage_namespace="mem://b/repo")
    graveler.set(repository, "main", b"a", value("a"))
    graveler.create_branch(repository, "dev", "main")
    if older_store:
        store.drop_partition(keys.INSTANCES)
        store.delete(keys.INDEXES, keys.INSTANCES_INDEX_BUILT)
    clock = graveler.clock
    assert isinstance(clock, FakeClock)
    sweep = OrphanSweep(store, graveler._refs, clock=clock, grace=10)
    for _ in range(2):  # slices of staging partitions only: no instance partition names them
        store.set(keys.SWEEP, keys.SWEEP_CURSOR, keys.STAGING_PREFIX)
        report = sweep.run()
        assert report.noted == report.dropped == 0
        clock.advance(11)
    assert graveler.get(repository, "main", b"a") == value("a")
