"""Bulk deletes over whole committed ranges: one range tombstone per range instead of a
tombstone per object, with the same result as deleting the objects one by one."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator

import pytest

from kvlake.blockstore import BlockStore
from kvlake.graveler import RangeTombstone, Repository, keys
from kvlake.kv import Predicate
from kvlake.kv.memory import MemoryStore
from kvlake.lake import Lake
from kvlake.operations import (
    BulkDeleteDriver,
    BulkDeleteOptions,
    Filters,
    LocalBatches,
)
from kvlake.operations import keys as operation_keys
from kvlake.operations.batches import BatchProcessor
from kvlake.operations.records import (
    Counters,
    Operation,
    Outcome,
    RangeBatch,
    RangePlan,
    decode_operation,
)
from kvlake.operations.renewal import HeldDeleteLock
from tests.operations.helpers import fill, listed, make_lake, populate, run, start
from tests.support import backends

INSIDE = [f"a/{i:05d}" for i in range(20_000)]
OUTSIDE = ["0", "a", "a0", "b/1"]


@pytest.fixture
def lake(lake_blocks: BlockStore) -> Iterator[Lake]:
    with make_lake(MemoryStore(), lake_blocks, batch_size=1000) as lake:
        yield lake


def setup(lake: Lake) -> Repository:
    """20,000 committed objects under a/ (several ranges), a few outside, and on top of
    them: a staged overwrite, a staged new object, a staged deletion, a write lock."""
    repo = populate(lake, [], commit=False)
    fill(lake, repo, [*INSIDE, *OUTSIDE])
    lake.catalog.upload(repo, "main", "a/00007", io.BytesIO(b"overwritten"))
    lake.catalog.upload(repo, "main", "a/00007x", io.BytesIO(b"new"))
    lake.graveler.delete(repo, "main", b"a/00009")
    lake.locks.acquire(repo, "a/12345", owner="bob", ttl=600)
    return repo


def staged_rows(lake: Lake, repo: Repository) -> int:
    token = lake.graveler.get_branch(repo, "main").staging_token
    with lake.store.scan(keys.staging_partition(token)) as scan:
        return sum(1 for _ in scan)


Result = tuple[str, Counters, list[str], list[tuple[str, str]]]


def outcome_of(lake: Lake, options: BulkDeleteOptions) -> Result:
    repo = setup(lake)
    final = run(lake, start(lake, "lakefs://repo1/main/a/", options=options))
    failures = lake.ledger.failures(final.id).failures
    return (
        final.status,
        final.counters,
        listed(lake, repo),
        [(path, failure.outcome) for path, failure in failures],
    )


def test_whole_ranges_cost_one_record_each_and_delete_what_tombstones_would(lake: Lake) -> None:
    status, counters, left, failures = outcome_of(lake, BulkDeleteOptions())
    expected_total = len(INSIDE) + 1 - 1  # + the new staged object, - the staged deletion
    assert status == "completed_with_errors"
    assert counters.skipped == 1 and counters.failed == 0
    assert counters.deleted + counters.skipped == counters.enumerated == expected_total
    assert left == ["0", "a", "a/12345", "a0", "b/1"]
    assert failures == [("a/12345", "skipped")]
    repo = lake.graveler.get_repository("repo1")
    assert staged_rows(lake, repo) < 3 * 1000  # a record per whole range, paths at the ends

    blocks = lake.blockstore
    with make_lake(MemoryStore(), blocks, batch_size=1000) as by_path:
        # The same blockstore, in a namespace of its own.
        namespace = backends.namespace(blocks, "by-path")
        by_path.graveler.create_repository("repo1", storage_namespace=namespace)
        # A filter every object matches makes the engine list and tombstone each one.
        assert outcome_of(by_path, BulkDeleteOptions(filters=Filters(min_size=0))) == (
            status,
            counters,
            left,
            failures,
        )
        assert staged_rows(by_path, by_path.graveler.get_repository("repo1")) >= len(INSIDE)


def test_the_commit_drops_the_range_tombstones(lake: Lake) -> None:
    repo = setup(lake)
    options = BulkDeleteOptions(commit=True, commit_message="gone")
    final = run(lake, start(lake, "lakefs://repo1/main/a/", options=options))
    assert final.commit_id
    assert listed(lake, repo) == ["0", "a", "a/12345", "a0", "b/1"]
    assert listed(lake, repo) == [k.decode() for k, _ in lake.graveler.list(repo, final.commit_id)]
    assert lake.graveler.get_branch(repo, "main").tombstone_tokens == ()


def test_a_dry_run_counts_ranges_and_changes_nothing(lake: Lake) -> None:
    repo = setup(lake)
    before = listed(lake, repo)
    final = run(
        lake, start(lake, "lakefs://repo1/main/a/", options=BulkDeleteOptions(dry_run=True))
    )
    assert final.counters.deleted + final.counters.skipped == final.counters.enumerated
    assert final.counters.deleted == len(INSIDE) - 1
    assert listed(lake, repo) == before


def test_a_range_batch_processed_again_counts_once(lake: Lake) -> None:
    """A crash after the record was staged, before the outcome was stored: the retry
    follows the stored plan (its own record now hides the keys it counts, and its
    tombstone the object staged anew in the range's span, which a fresh plan would
    miss)."""
    repo = setup(lake)
    first_whole = first_whole_range(lake, repo)
    lake.catalog.upload(repo, "main", first_whole + "x", io.BytesIO(b"new in the span"))
    operation = start(lake, "lakefs://repo1/main/a/")
    context = lake.engine_context(owner="s1")

    class CrashAfterTombstoning(BatchProcessor):
        def _tombstone_ranges(
            self,
            op: Operation,
            repository: Repository,
            batch: RangeBatch,
            plan: RangePlan,
            held: HeldDeleteLock,
        ) -> list[tuple[str, str]]:
            super()._tombstone_ranges(op, repository, batch, plan, held)
            raise RuntimeError("crash")

    engine = BulkDeleteDriver(context, LocalBatches(CrashAfterTombstoning(context)))
    with pytest.raises(RuntimeError):
        engine.run(operation.id, threading.Event())
    crashed = lake.ledger.load(operation.id)[0]
    lake.clock.advance(31)  # type: ignore[attr-defined]
    final = run(lake, operation, owner="s2")
    assert crashed.done < final.done
    assert final.counters.deleted + final.counters.skipped == final.counters.enumerated
    assert final.counters.enumerated == len(INSIDE) + 1
    assert listed(lake, repo) == ["0", "a", "a/12345", "a0", "b/1"]


def first_whole_range(lake: Lake, repo: Repository) -> str:
    """The first key of the first committed range wholly under a/."""
    commit = lake.graveler.get_commit(repo, lake.graveler.get_branch(repo, "main").commit_id)
    ranges = lake.graveler.committed.ranges(repo.storage_namespace, commit.metarange_id)
    return next(
        r.min_key.decode()
        for r in ranges
        if r.min_key.startswith(b"a/") and r.max_key.startswith(b"a/") and r.count > 1
    )


def test_cancel_stops_after_a_range(lake: Lake) -> None:
    repo = setup(lake)
    operation = start(lake, "lakefs://repo1/main/a/")
    context = lake.engine_context(owner="s1")

    class CancelAfterRange(BatchProcessor):
        def process(self, op: Operation, repository: Repository, number: int) -> Outcome:
            outcome = super().process(op, repository, number)
            if isinstance(lake.ledger.read_batch(op.id, number), RangeBatch):
                lake.bulk_deletes.cancel(op.id, user="alice", admin=False)
            return outcome

    engine = BulkDeleteDriver(context, LocalBatches(CancelAfterRange(context)))
    final = engine.run(operation.id, threading.Event())
    assert final.status == "cancelled"
    left = [p for p in listed(lake, repo) if p.startswith("a/")]
    assert 0 < final.counters.deleted < len(INSIDE)
    assert len(left) == len(INSIDE) - final.counters.deleted  # what is done stays done


def test_ranges_whose_records_are_refused_get_tombstones_instead(lake: Lake) -> None:
    """The token holds another commit's range tombstones (a bulk delete from before a
    commit), which ours could overlap: the batch's records are refused, and the same keys
    get one tombstone each. Nothing fails; the result is the one records give."""
    repo = setup(lake)
    head = lake.graveler.get_commit(repo, lake.graveler.get_branch(repo, "main").commit_id)
    ranges = lake.graveler.committed.ranges(repo.storage_namespace, head.metarange_id)
    inner = [r for r in ranges if r.min_key.startswith(b"a/") and r.max_key.startswith(b"a/")]
    assert len(inner) >= 3
    taken = inner[1]
    other = RangeTombstone(range_id=taken.id, min_key=taken.min_key, max_key=taken.min_key)
    lake.graveler.stage_range_tombstones(repo, "main", [other], metarange_id="another commit's")
    final = run(lake, start(lake, "lakefs://repo1/main/a/"))
    assert final.status == "completed_with_errors"
    c = final.counters
    assert (c.failed, c.skipped) == (0, 1)
    assert c.deleted + c.skipped == c.enumerated
    assert listed(lake, repo) == ["0", "a", "a/12345", "a0", "b/1"]
    lake.graveler.commit(repo, "main", committer="t", message="deleted")
    assert listed(lake, repo) == ["0", "a", "a/12345", "a0", "b/1"]


def test_an_object_committed_into_a_range_span_during_the_delete_is_deleted(lake: Lake) -> None:
    """Staged when the delete started, committed before its range batch ran: the listing
    would have met it, so the range batch deletes it although its record does not hide it
    (it is no key of the base commit's ranges)."""
    repo = setup(lake)
    lake.catalog.upload(repo, "main", "a/15000x", io.BytesIO(b"staged before"))
    operation = start(lake, "lakefs://repo1/main/a/")
    context = lake.engine_context(owner="s1")

    class CommitFirst(BatchProcessor):
        def process(self, op: Operation, repository: Repository, number: int) -> Outcome:
            if number == 0:
                lake.graveler.commit(repository, "main", committer="bob", message="meanwhile")
            return super().process(op, repository, number)

    engine = BulkDeleteDriver(context, LocalBatches(CommitFirst(context)))
    final = engine.run(operation.id, threading.Event())
    assert listed(lake, repo) == ["0", "a", "a/12345", "a0", "b/1"]
    assert final.counters.deleted + final.counters.skipped == final.counters.enumerated
    assert final.counters.enumerated == len(INSIDE) + 1


def journalled(lake: Lake) -> list[Counters]:
    """The counters of every operation record the ledger writes from now on, once landed."""
    seen: list[Counters] = []
    store = lake.ledger.store
    set_if = store.set_if

    def journal(partition: bytes, key: bytes, value: bytes, predicate: Predicate | None) -> None:
        set_if(partition, key, value, predicate)
        if partition == operation_keys.OPERATIONS and operation_keys.is_operation_key(key):
            seen.append(decode_operation(value).counters)

    store.set_if = journal  # type: ignore[method-assign]
    return seen


def never_back(seen: list[Counters]) -> None:
    for before, after in zip(seen, seen[1:], strict=False):
        for name in ("enumerated", "deleted", "failed", "skipped"):
            assert getattr(after, name) >= getattr(before, name), (name, before, after)


def in_whole_ranges(lake: Lake, repo: Repository, paths: list[str]) -> bool:
    """Whether every path lies in a committed range wholly under a/ (a range batch's)."""
    commit = lake.graveler.get_commit(repo, lake.graveler.get_branch(repo, "main").commit_id)
    ranges = lake.graveler.committed.ranges(repo.storage_namespace, commit.metarange_id)
    whole = [r for r in ranges if r.min_key.startswith(b"a/") and r.max_key.startswith(b"a/")]
    return all(any(r.min_key <= p.encode() <= r.max_key for r in whole) for p in paths)


GONE = ["a/10009", "a/10010", "a/15000"]


def test_deletions_staged_in_a_whole_range_are_not_counted_then_uncounted(lake: Lake) -> None:
    """A range batch was counted by the range's recorded size, then corrected down when it
    found keys deleted already: enumerated_count (and total_count) went backwards."""
    repo = populate(lake, [], commit=False)
    fill(lake, repo, [*INSIDE, *OUTSIDE])
    assert in_whole_ranges(lake, repo, GONE)
    for path in GONE:
        lake.graveler.delete(repo, "main", path.encode())
    seen = journalled(lake)
    final = run(lake, start(lake, "lakefs://repo1/main/a/"))
    never_back(seen)
    c = final.counters
    assert c.enumerated == c.deleted == len(INSIDE) - len(GONE)
    assert (c.failed, c.skipped) == (0, 0)
    assert listed(lake, repo) == OUTSIDE


def test_an_object_deleted_after_enumeration_counts_as_deleted(lake: Lake) -> None:
    """As a path batch counts an object someone deleted after it was listed: the range
    batch finds fewer keys than enumeration counted, and the counters still add up."""
    repo = populate(lake, [], commit=False)
    fill(lake, repo, [*INSIDE, *OUTSIDE])
    assert in_whole_ranges(lake, repo, GONE)
    operation = start(lake, "lakefs://repo1/main/a/")
    context = lake.engine_context(owner="s1")

    class DeleteBehind(BatchProcessor):
        def process(self, op: Operation, repository: Repository, number: int) -> Outcome:
            if number == 0:  # enumeration is over: the paths are deleted behind its back
                for path in GONE:
                    lake.graveler.delete(repository, "main", path.encode())
            return super().process(op, repository, number)

    engine = BulkDeleteDriver(context, LocalBatches(DeleteBehind(context)))
    seen = journalled(lake)
    final = engine.run(operation.id, threading.Event())
    never_back(seen)
    c = final.counters
    assert c.enumerated == c.deleted == len(INSIDE)
    assert (c.failed, c.skipped) == (0, 0)
    assert listed(lake, repo) == OUTSIDE


@pytest.mark.parametrize(
    "options",
    [BulkDeleteOptions(), BulkDeleteOptions(filters=Filters(max_size=1 << 40))],
    ids=["range-batches", "path-batches"],
)
def test_objects_restored_or_written_under_the_prefix_after_enumeration_stay(
    lake: Lake, options: BulkDeleteOptions
) -> None:
    """Issue 22 #6: a bulk delete deletes what existed when it listed the prefix, with
    range tombstones as with tombstones. An object deleted then and restored since (a reset
    of the deletion), and one written since at a new key (below the locks, as a copy
    was), both stay whichever kind of batch covers them."""
    repo = setup(lake)
    for deleted in (b"a/10009", b"a/10019"):  # deleted when the operation starts
        lake.graveler.delete(repo, "main", deleted)
    operation = start(lake, "lakefs://repo1/main/a/", options=options)
    context = lake.engine_context(owner="s1")
    copied = lake.graveler.get(repo, "main", b"a/10000")

    class AfterEnumeration(BatchProcessor):
        def process(self, op: Operation, repository: Repository, number: int) -> Outcome:
            if number == 0:
                lake.graveler.resets.reset_key(repository, "main", b"a/10009")
                lake.graveler.set(repository, "main", b"a/10019", copied)  # written again
                lake.graveler.set(repository, "main", b"a/15000x", copied)
            return super().process(op, repository, number)

    engine = BulkDeleteDriver(context, LocalBatches(AfterEnumeration(context)))
    final = engine.run(operation.id, threading.Event())
    assert final.status == "completed_with_errors"
    c = final.counters
    assert c.deleted + c.skipped == c.enumerated and (c.failed, c.skipped) == (0, 1)
    expected = ["0", "a", "a/10009", "a/10019", "a/12345", "a/15000x", "a0", "b/1"]
    assert listed(lake, repo) == expected
    lake.graveler.commit(repo, "main", committer="t", message="deleted")
    assert listed(lake, repo) == expected
