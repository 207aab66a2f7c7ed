"""The cleaner's sweep for partitions nothing references (issue 9's leaks).

A writer that stalled past its token's drop leaves a stray key in the dropped
staging partition; a creation that stalled past its abandonment leaves keys in
an instance partition the cleaner removed. The sweep notes such a partition,
then drops it a grace period later if it is still an orphan, logging the blobs
of a live instance's stray entries first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlake import ids
from kvlake.blockstore import BlockStore
from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.config import load_settings
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.lifecycle.cleaner import Cleaner
from kvlake.graveler.lifecycle.orphans import SWEEP_GRACE, OrphanSweep
from kvlake.graveler.records import Repository
from kvlake.graveler.records import encode as encode_value
from kvlake.kv import CountingStore, Store, get_or_none
from kvlake.kv.memory import MemoryStore
from kvlake.lake import Lake
from tests.deletion.helpers import DeletionLake
from tests.graveler.helpers import make_graveler, value
from tests.graveler.stepping import calls_of, paused_graveler, run_paused
from tests.support import FakeClock


def _partitions(store: Store) -> set[bytes]:
    return set(store.partitions())


def _dropped_token(graveler: Graveler, repository: Repository, cleaner: Cleaner) -> str:
    """A token a commit consumed and the cleaner dropped."""
    graveler.set(repository, "main", b"a", value("a"))
    token = graveler.get_branch(repository, "main").staging_token
    graveler.commit(repository, "main", committer="t", message="m")
    graveler.clock.advance(3600)  # type: ignore[attr-defined]
    cleaner.clean_once()
    assert keys.staging_partition(token) not in _partitions(graveler.store)
    return token


@pytest.fixture
def repository(graveler: Graveler, namespace: str) -> Repository:
    return graveler.create_repository("repo1", storage_namespace=namespace)


def test_a_stalled_writers_stray_key_is_swept_and_its_write_is_kept(
    graveler: Graveler, repository: Repository, clock: FakeClock
) -> None:
    cleaner = Cleaner(graveler, sweep_interval=0)
    token = _dropped_token(graveler, repository, cleaner)
    # The stalled writer read the branch long ago: it writes to the dropped token, then
    # re-reads the branch and writes again to the live one.
    graveler.set(repository, "main", b"late", value("late"), token=token)
    stray = keys.staging_partition(token)
    assert stray in _partitions(graveler.store)
    first = cleaner.clean_once()
    assert first.orphans_noted == 1 and stray in _partitions(graveler.store)
    clock.advance(SWEEP_GRACE)
    second = cleaner.clean_once()
    assert second.orphans_dropped == 1
    assert stray not in _partitions(graveler.store)
    assert graveler.get(repository, "main", b"late") == value("late")
    assert list(graveler.store.scan(keys.ORPHANS)) == []


def test_a_stalled_creations_instance_partition_is_swept(
    graveler: Graveler, clock: FakeClock
) -> None:
    cleaner = Cleaner(graveler, sweep_interval=0)
    dead_uid = ids.new_uid()
    leftovers = keys.instance_partition("repo9", dead_uid)
    stray_token = keys.staging_partition(keys.new_staging_token(dead_uid))
    graveler.store.set(leftovers, keys.branch_key("main"), b"x")
    graveler.store.set(stray_token, b"k", b"")
    assert cleaner.clean_once().orphans_noted == 2
    clock.advance(SWEEP_GRACE / 2)
    assert cleaner.clean_once().orphans_dropped == 0  # noted, but not for long enough
    assert {leftovers, stray_token} <= _partitions(graveler.store)
    clock.advance(SWEEP_GRACE / 2)
    assert cleaner.clean_once().orphans_dropped == 2
    assert not {leftovers, stray_token} & _partitions(graveler.store)


def test_live_young_and_queued_partitions_are_never_swept(
    graveler: Graveler, repository: Repository, clock: FakeClock
) -> None:
    cleaner = Cleaner(graveler, sweep_interval=0)
    graveler.set(repository, "main", b"staged", value("s"))
    graveler.create_branch(repository, "dev", "main")
    graveler.set(repository, "dev", b"d", value("d"))
    dev_token = graveler.get_branch(repository, "dev").staging_token
    graveler.delete_branch(repository, "dev")  # queued: the token-drop job's, not the sweep's
    graveler.store.set(b"auth/users", b"someone", b"x")  # other layers' partitions
    assert keys.staging_partition(dev_token) in _partitions(graveler.store)
    for _ in range(3):
        report = cleaner.clean_once()
        assert report.orphans_noted == report.orphans_dropped == 0
        clock.advance(SWEEP_GRACE)
    assert b"auth/users" in _partitions(graveler.store)
    assert graveler.get(repository, "main", b"staged") == value("s")


def test_a_partition_referenced_again_before_the_grace_ends_is_kept(
    graveler: Graveler, clock: FakeClock, namespace: str
) -> None:
    """A note alone never drops anything: the partition must still be an orphan later."""
    cleaner = Cleaner(graveler, sweep_interval=0)
    repository = graveler.create_repository("repo2", storage_namespace=namespace + "2")
    dead_uid = ids.new_uid()
    stray = keys.staging_partition(keys.new_staging_token(dead_uid))
    graveler.store.set(stray, b"k", b"")
    assert cleaner.clean_once().orphans_noted == 1
    graveler.store.drop_partition(stray)  # gone by itself: its note is forgotten
    cleaner.clean_once()
    assert list(graveler.store.scan(keys.ORPHANS)) == []
    assert graveler.get_branch(repository, "main")


def test_a_sweep_at_any_point_of_a_stalled_write_loses_nothing(
    graveler: Graveler, repository: Repository, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    cleaner = Cleaner(graveler, sweep_interval=0, sweep_grace=0)
    paused, stepping = paused_graveler(graveler, clock, lake_blocks)
    token = _dropped_token(graveler, repository, cleaner)
    total = calls_of(
        stepping, lambda: paused.set(repository, "main", b"probe", value("p"), token=token)
    )
    for n in range(total):
        key = b"late%d" % n
        run_paused(
            stepping,
            lambda key=key: paused.set(repository, "main", key, value("v"), token=token),  # type: ignore[misc]
            at_call=n,
            intruder=lambda: (cleaner.clean_once(), cleaner.clean_once()),
        )
        assert graveler.get(repository, "main", key) == value("v"), n
        cleaner.clean_once()
        cleaner.clean_once()
        assert keys.staging_partition(token) not in _partitions(graveler.store), n


def test_a_live_instances_stray_blobs_are_logged_and_deleted(lake_blocks: BlockStore) -> None:
    """A stray key in a token no commit consumed (here a deleted branch's) is logged.

    (A consumed token's strays are garbage collection's, as the rest of its entries.)
    """
    lake = DeletionLake(MemoryStore(), lake_blocks)
    repository = lake.repository
    lake.graveler.create_branch(repository, "dev", "main")
    lake.upload("a", branch="dev")
    token = lake.graveler.get_branch(repository, "dev").staging_token
    lake.graveler.delete_branch(repository, "dev")
    lake.settle()
    blob = "data/stray-blob"
    lake.blocks.put(lake.namespace, blob, b"stray")
    entry = ObjectEntry(address=blob, size=5, checksum="x", mtime=lake.clock(), content_type="t")
    # A stray entry only (its writer died before writing again to the live token).
    lake.store.set(keys.staging_partition(token), b"stray", encode_value(to_value(entry)))
    lake.settle()  # notes the orphan
    lake.clock.advance(SWEEP_GRACE)
    assert lake.cleaner.clean_once().orphans_dropped == 1  # logged its blob, then dropped
    lake.settle()
    assert keys.staging_partition(token) not in _partitions(lake.store)
    assert blob not in lake.data_blobs()


def _strays(store: Store, repository: Repository, count: int) -> set[bytes]:
    """`count` staging partitions of a live instance that no branch names: orphans."""
    strays = set()
    for _ in range(count):
        partition = keys.staging_partition(keys.new_staging_token(repository.instance_uid))
        store.set(partition, b"k", b"v")
        strays.add(partition)
    return strays


def test_a_sweeps_round_trips_do_not_grow_with_the_orphans_it_notes_and_drops(
    clock: FakeClock,
) -> None:
    """Notes are read and written a batch at a time: not a get and a set per orphan
    (issue 33, item 6). Counted at 10 and 200 orphans, noting and then dropping."""
    trips = []
    for count in (10, 200):
        store = CountingStore(MemoryStore())
        graveler = make_graveler(store, clock, MemoryBlockStore())
        repository = graveler.create_repository("repo1", storage_namespace="mem://b/repo1")
        strays = _strays(store, repository, count)
        sweep = OrphanSweep(store, graveler._refs, clock=clock, grace=10)
        store.reset()
        assert sweep.run().noted == count
        noting = store.round_trips
        clock.advance(11)
        store.reset()
        assert sweep.run().dropped == count
        assert not strays & set(store.partitions())
        # Dropping costs a drop and a note's deletion per orphan: what it changes.
        trips.append((noting, store.round_trips - 2 * count))
    assert trips[0] == trips[1]


def test_a_sweep_in_a_new_process_goes_on_where_the_last_sweep_stopped(
    graveler: Graveler, repository: Repository, clock: FakeClock
) -> None:
    """The slice cursor is kept in the KV: a process restarted more often than a whole
    round of slices takes still reaches every partition."""
    store = graveler.store
    strays = _strays(store, repository, 30)
    listed = sorted(store.partitions())
    first = OrphanSweep(store, graveler._refs, clock=clock, slice_size=10)
    first.run()
    restarted = OrphanSweep(store, graveler._refs, clock=clock, slice_size=10)
    restarted.run()
    noted = {key for key, _ in store.scan(keys.ORPHANS)}
    assert noted == strays & set(listed[:20])


# -- queued drops, looked up by token (issue 33 item 6) ----------------------------------


def _queued(graveler: Graveler, repository: Repository, count: int) -> list[str]:
    """`count` tokens queued for dropping (not due for long), with no partition."""
    tokens = [keys.new_staging_token(repository.instance_uid) for _ in range(count)]
    graveler.queue_token_drops(repository, tokens, branch="main")
    return tokens


def test_a_sweep_reads_as_many_rows_beside_10_or_2000_queued_drops(clock: FakeClock) -> None:
    """The sweep asks the token-keyed index about its slice's tokens: it reads no queue
    entry of a token outside its slice, however long the queue (a scan of the queue, keyed
    by due time, read all of it every sweep)."""
    costs = []
    for count in (10, 2000):
        store = CountingStore(MemoryStore())
        graveler = make_graveler(store, clock, MemoryBlockStore(), token_drop_delay=10**6)
        repository = graveler.create_repository("repo1", storage_namespace="mem://b/repo1")
        strays = _strays(store, repository, 5)
        _queued(graveler, repository, count)
        OrphanSweep(store, graveler._refs, clock=clock).run()  # indexes older drops, once
        store.reset()
        assert OrphanSweep(store, graveler._refs, clock=clock).run().noted == 0  # noted before
        assert strays <= {key for key, _ in store.inner.scan(keys.ORPHANS)}
        costs.append((store.rows_read, store.round_trips))
    assert costs[0] == costs[1]


def test_an_index_entry_without_its_queue_entry_counts_for_nothing_and_goes(
    graveler: Graveler, repository: Repository, clock: FakeClock
) -> None:
    """A crash between the index write and the queue write of `queue_token_drops` leaves
    an index entry alone: its token is not queued, and the entry goes once long past due."""
    stray = next(iter(_strays(graveler.store, repository, 1)))
    token = stray[len(keys.STAGING_PREFIX) :]
    due = keys.dropped_token_key(clock(), token.decode())
    graveler.store.set(keys.DROPPED_BY_TOKEN, token, due)
    sweep = OrphanSweep(graveler.store, graveler._refs, clock=clock, grace=10)
    assert sweep.run().noted == 1
    assert graveler.store.get(keys.DROPPED_BY_TOKEN, token)[0] == due  # not yet past
    clock.advance(11)
    assert sweep.run().dropped == 1
    assert list(graveler.store.scan(keys.DROPPED_BY_TOKEN)) == []


def test_drops_queued_before_the_index_are_indexed_once_and_never_swept(
    graveler: Graveler, repository: Repository, clock: FakeClock
) -> None:
    graveler.create_branch(repository, "dev", "main")
    graveler.set(repository, "dev", b"d", value("d"))
    dev_token = graveler.get_branch(repository, "dev").staging_token
    graveler.delete_branch(repository, "dev")  # queued, with its index entry
    graveler.store.drop_partition(keys.DROPPED_BY_TOKEN)  # a store from before the index
    graveler.store.delete(keys.INDEXES, keys.DROPPED_INDEX_BUILT)
    sweep = OrphanSweep(graveler.store, graveler._refs, clock=clock, grace=10)
    for _ in range(2):
        assert sweep.run().noted == 0
        clock.advance(11)
    assert keys.staging_partition(dev_token) in _partitions(graveler.store)
    assert [key for key, _ in graveler.store.scan(keys.DROPPED_BY_TOKEN)] == [dev_token.encode()]
    graveler.store.drop_partition(keys.DROPPED_BY_TOKEN)
    OrphanSweep(graveler.store, graveler._refs, clock=clock).run()  # the marker: done once
    assert list(graveler.store.scan(keys.DROPPED_BY_TOKEN)) == []


def test_dropping_an_older_queue_entry_keeps_the_newer_index_entry(clock: FakeClock) -> None:
    """A token queued twice: the cleaner settling the first entry removes its index entry
    only if it still names that entry (delete_if), so the second stays findable."""
    graveler = make_graveler(MemoryStore(), clock, MemoryBlockStore(), token_drop_delay=100)
    repository = graveler.create_repository("repo1", storage_namespace="mem://b/repo1")
    token = keys.new_staging_token(repository.instance_uid)
    graveler.queue_token_drops(repository, [token], branch="main")
    clock.advance(50)
    graveler.queue_token_drops(repository, [token], branch="main")
    second = keys.dropped_token_key(clock() + 100, token)
    clock.advance(51)  # the first is due, the second not
    Cleaner(graveler, sweep_interval=10**9).clean_once()
    assert [key for key, _ in graveler.store.scan(keys.DROPPED_TOKENS)] == [second]
    assert graveler.store.get(keys.DROPPED_BY_TOKEN, token.encode())[0] == second
    clock.advance(100)
    Cleaner(graveler, sweep_interval=10**9).clean_once()
    assert list(graveler.store.scan(keys.DROPPED_BY_TOKEN)) == []


def test_the_sweep_slice_setting_reaches_the_lakes_cleaner(tmp_path: Path) -> None:
    """KVLAKE_CLEANER_SWEEP_SLICE sizes the slice: 250 partitions are one sweep by default,
    three of 100."""
    settings = load_settings({"KVLAKE_DATA_DIR": str(tmp_path)})
    sliced = load_settings({"KVLAKE_DATA_DIR": str(tmp_path), "KVLAKE_CLEANER_SWEEP_SLICE": "100"})
    cursors = []
    for chosen in (settings, sliced):
        store = MemoryStore()
        for n in range(250):
            store.set(b"other/%03d" % n, b"k", b"v")
        Lake(chosen, store, MemoryBlockStore()).cleaner().clean_once()
        cursors.append(get_or_none(store, keys.SWEEP, keys.SWEEP_CURSOR))
    assert cursors[0] is None  # the listing ended: the next sweep starts over
    # Stopped within the 250 (a partition of the lake's own may sort before them).
    assert cursors[1] is not None and b"other/097" <= cursors[1][0] <= b"other/099"


def test_a_token_queued_after_the_index_was_built_is_never_swept(
    graveler: Graveler, repository: Repository, clock: FakeClock
) -> None:
    graveler.set(repository, "main", b"m", value("m"))  # a staging partition to judge
    sweep = OrphanSweep(graveler.store, graveler._refs, clock=clock, grace=10)
    sweep.run()  # the index of older drops is built (marked) now
    assert graveler.store.get_many(keys.INDEXES, [keys.DROPPED_INDEX_BUILT])
    graveler.create_branch(repository, "dev", "main")
    graveler.set(repository, "dev", b"d", value("d"))
    dev_token = graveler.get_branch(repository, "dev").staging_token
    graveler.delete_branch(repository, "dev")  # queued: found through its index entry
    for _ in range(2):
        assert sweep.run().noted == 0
        clock.advance(11)
    assert keys.staging_partition(dev_token) in _partitions(graveler.store)
