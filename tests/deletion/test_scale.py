"""The in-use check costs what its batch touches, not what the repository holds (issue 33).

Counted in KV rows read and round trips (CountingStore), which are deterministic:
the same batch is checked beside a small and a large amount of data it does not
touch (staged entries, branches), and the counts must not grow with it.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import pytest

from kvlake.blockstore import BlockStore
from kvlake.catalog import entry_ref
from kvlake.deletion import GcMarks, PendingDelete, ReferenceChecker, gc_records
from kvlake.deletion.staged_refs import STAGED_SET_REUSE
from kvlake.graveler.keys import staging_partition
from kvlake.kv import CountingStore
from kvlake.kv.memory import MemoryStore
from kvlake.kv.store import DEFAULT_BATCH_SIZE
from tests.deletion.helpers import DeletionLake

BATCHES = 3
BATCH = 10


@pytest.fixture
def counted(lake_blocks: BlockStore) -> Iterator[tuple[DeletionLake, CountingStore]]:
    with CountingStore(MemoryStore()) as store:
        yield DeletionLake(store, lake_blocks), store


def checker(lake: DeletionLake) -> ReferenceChecker:
    return ReferenceChecker(lake.graveler, lake.blocks, lake.purges, entry_ref)


def stage_copies(lake: DeletionLake, count: int) -> str:
    """`count` staged entries on main referencing one uploaded blob; returns its address."""
    stat = lake.upload("first")
    token = lake.graveler.get_branch(lake.repository, "main").staging_token
    raw, _ = lake.store.get(staging_partition(token), b"first")
    lake.store.set_many(staging_partition(token), ((b"p%06d" % n, raw) for n in range(count)))
    return stat.address


def gc_batches(lake: DeletionLake) -> list[list[PendingDelete]]:
    GcMarks(lake.store).save("run1", [])
    addresses = [f"data/old/{n}" for n in range(BATCHES * BATCH)]
    records = list(gc_records(lake.log, lake.repository, "run1", lake.clock(), addresses))
    return [records[n : n + BATCH] for n in range(0, len(records), BATCH)]


def rows_to_check_gc_batches(lake: DeletionLake, store: CountingStore, staged: int) -> int:
    stage_copies(lake, staged)
    batches, check = gc_batches(lake), checker(lake)
    store.reset()
    for batch in batches:
        assert {v.action for v in check.check(batch)} == {"delete"}
    return store.rows_read


def test_gc_batches_read_the_staged_entries_once_per_run_not_once_per_batch(
    lake_blocks: BlockStore,
) -> None:
    small, large = 20, 2000
    counts = []
    for staged in (small, large):
        with CountingStore(MemoryStore()) as store:
            counts.append(rows_to_check_gc_batches(DeletionLake(store, lake_blocks), store, staged))
    # Each staged entry is read at most once for all the batches of the run.
    assert counts[1] - counts[0] <= large - small


def test_a_gc_run_sees_entries_staged_since_its_set_once_the_set_is_reused_no_longer(
    counted: tuple[DeletionLake, CountingStore],
) -> None:
    lake, _ = counted
    check = checker(lake)
    (first, second, *_) = gc_batches(lake)
    lake.upload("early")  # main's token holds an entry, so the first check reads it whole
    assert {v.action for v in check.check(first)} == {"delete"}
    stat = lake.upload("late")  # into the token the set has read: seen once the set expires
    moved = msgspec.structs.replace(second[0], address=stat.address)
    lake.clock.advance(STAGED_SET_REUSE)
    (verdict,) = check.check([moved])
    assert verdict.action == "in_use" and "late" in verdict.reason


def test_a_path_is_checked_in_every_live_token_in_round_trips_that_do_not_grow_with_branches(
    lake_blocks: BlockStore,
) -> None:
    trips = []
    for branches in (3, 300):
        with CountingStore(MemoryStore()) as store:
            lake = DeletionLake(store, lake_blocks)
            stat = lake.upload("a")
            for n in range(branches):
                lake.graveler.create_branch(lake.repository, f"b{n}", "main")
                lake.upload(f"other{n}", branch=f"b{n}")  # every token holds an entry
            token = lake.graveler.get_branch(lake.repository, "main").staging_token
            record = lake.log.new_record(
                lake.repository, stat.address, "overwritten_staged", staging_token=token, path=b"a"
            )
            store.reset()
            (verdict,) = checker(lake).check([record])
            assert verdict.action == "in_use"
            trips.append(store.round_trips)
    assert trips[0] == trips[1]


def test_a_cleaner_pass_reads_the_branches_its_tokens_were_queued_from_not_every_branch(
    lake_blocks: BlockStore,
) -> None:
    dropped, rows = 5, []
    for branches in (10, 300):
        with CountingStore(MemoryStore()) as store:
            lake = DeletionLake(store, lake_blocks)
            for n in range(branches):
                lake.graveler.create_branch(lake.repository, f"b{n:04d}", "main")
            for n in range(dropped):
                lake.upload("a", branch=f"b{n:04d}")
                lake.graveler.delete_branch(lake.repository, f"b{n:04d}")
            lake.cleaner.clean_once()  # the first pass also sweeps for orphans: not counted
            for n in range(dropped, 2 * dropped):
                lake.upload("a", branch=f"b{n:04d}")
                lake.graveler.delete_branch(lake.repository, f"b{n:04d}")
            store.reset()
            assert lake.cleaner.clean_once().tokens_dropped == dropped
            rows.append(store.rows_read)
    # The records of the deleted branches only (none left): no scan of the others.
    assert rows[0] == rows[1]


def test_a_pass_over_entries_queued_without_their_branch_scans_the_branches_once(
    lake_blocks: BlockStore,
) -> None:
    """Entries queued before they named their branch (older stores) are still checked."""
    dropped, rows = 5, []
    for branches in (10, 300):
        with CountingStore(MemoryStore()) as store:
            lake = DeletionLake(store, lake_blocks)
            for n in range(branches):
                lake.graveler.create_branch(lake.repository, f"b{n:04d}", "main")
            tokens = [
                lake.graveler.get_branch(lake.repository, f"b{n:04d}").staging_token
                for n in range(dropped)
            ]
            for n in range(dropped):
                lake.graveler._refs.delete_branch_record(lake.repository, f"b{n:04d}")
            lake.graveler.queue_token_drops(lake.repository, tokens)
            store.reset()
            assert lake.cleaner.clean_once().tokens_dropped == dropped
            rows.append(store.rows_read)
    assert rows[1] - rows[0] <= 300 - 10


def check_a_gc_record_beside_branches(
    lake_blocks: BlockStore, branches: int
) -> tuple[CountingStore, list[str]]:
    """One batch of two GC records beside `branches` branches, one staging the first record's
    blob: the round trips and rows of the check, and the verdicts."""
    with CountingStore(MemoryStore()) as store:
        lake = DeletionLake(store, lake_blocks)
        for n in range(branches):
            lake.graveler.create_branch(lake.repository, f"b{n:05d}", "main")
        staged = lake.upload("kept", branch=f"b{branches // 2:05d}").address
        GcMarks(lake.store).save("run1", [])
        batch = list(gc_records(lake.log, lake.repository, "run1", 0.0, [staged, "data/old/1"]))
        store.reset()
        verdicts: list[str] = [v.action for v in checker(lake).check(batch)]
        return store, verdicts


def test_a_gc_batch_scans_no_live_token_whose_staging_is_empty(lake_blocks: BlockStore) -> None:
    """Issue 33 item 2: one due record at 10,000 branches made 10,015 round trips."""
    small, large = 10, 1000
    (few, few_verdicts), (many, many_verdicts) = (
        check_a_gc_record_beside_branches(lake_blocks, branches) for branches in (small, large)
    )
    # The entry staged on one branch among many is found all the same.
    assert few_verdicts == many_verdicts == ["in_use", "delete"]
    # What grows is the one scan of the branch records (for the live tokens), a page per
    # 1,000: no round trip, and no row, per branch whose staging is empty.
    assert many.round_trips - few.round_trips <= large // DEFAULT_BATCH_SIZE
    assert many.rows_read - few.rows_read <= large - small
    assert many.calls["scan"] - few.calls["scan"] <= large // DEFAULT_BATCH_SIZE


def rows_to_check_one_record(lake_blocks: BlockStore, branches: int, *, gc: bool) -> int:
    """Rows one due record's check reads beside `branches` branches whose staging is empty
    (records from the bench: benchmarks/scale_bench.py `due_record`, `due_gc_record`)."""
    with CountingStore(MemoryStore()) as store:
        lake = DeletionLake(store, lake_blocks)
        for n in range(branches):
            lake.graveler.create_branch(lake.repository, f"b{n:05d}", "main")
        stat = lake.upload("a")
        if gc:
            GcMarks(lake.store).save("run1", [])
            records = list(gc_records(lake.log, lake.repository, "run1", 0.0, ["data/old/1"]))
            expected = "delete"
        else:
            token = lake.graveler.get_branch(lake.repository, "main").staging_token
            records = [
                lake.log.new_record(
                    lake.repository,
                    stat.address,
                    "overwritten_staged",
                    staging_token=token,
                    path=b"a",
                )
            ]
            expected = "in_use"
        check = checker(lake)
        store.reset()
        (verdict,) = check.check(records)
        assert verdict.action == expected
        return store.rows_read


@pytest.mark.parametrize("gc", [False, True], ids=["path-record", "gc-record"])
def test_one_records_check_reads_no_row_per_branch_whose_staging_is_empty(
    lake_blocks: BlockStore, gc: bool
) -> None:
    """Issue 33 item 2: the check read every branch record to learn the live and sealed
    tokens (10,004 rows at 10,000 branches); the sealing index and the listing of the
    non-empty staging partitions do not grow with branches that stage nothing."""
    few, many = (rows_to_check_one_record(lake_blocks, n, gc=gc) for n in (10, 1000))
    assert many == few
