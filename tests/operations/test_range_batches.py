"""Bulk deletes over whole committed ranges: one hidden-range record per range instead of a
tombstone per object, with the same result as deleting the objects one by one."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator

import pytest

from kvlake.blockstore import BlockStore
from kvlake.graveler import Repository, keys
from kvlake.kv.memory import MemoryStore
from kvlake.lake import Lake
from kvlake.operations import BulkDeleteOptions, Filters, LocalEngine
from kvlake.operations.batches import BatchProcessor
from kvlake.operations.records import Batch, Counters, Operation, Outcome, RangePlan
from tests.operations.helpers import fill, listed, make_lake, populate, run, start

INSIDE = [f"a/{i:05d}" for i in range(20_000)]
OUTSIDE = ["0", "a", "a0", "b/1"]


@pytest.fixture
def lake(lake_blocks: BlockStore) -> Iterator[Lake]:
    with make_lake(MemoryStore(), batch_size=1000, blocks=lake_blocks) as lake:
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

    with make_lake(MemoryStore(), batch_size=1000) as by_path:
        # A filter every object matches makes the engine list and tombstone each one.
        assert outcome_of(by_path, BulkDeleteOptions(filters=Filters(min_size=0))) == (
            status,
            counters,
            left,
            failures,
        )
        assert staged_rows(by_path, by_path.graveler.get_repository("repo1")) >= len(INSIDE)


def test_the_commit_drops_the_hidden_ranges(lake: Lake) -> None:
    repo = setup(lake)
    options = BulkDeleteOptions(commit=True, commit_message="gone")
    final = run(lake, start(lake, "lakefs://repo1/main/a/", options=options))
    assert final.commit_id
    assert listed(lake, repo) == ["0", "a", "a/12345", "a0", "b/1"]
    assert listed(lake, repo) == [k.decode() for k, _ in lake.graveler.list(repo, final.commit_id)]
    assert lake.graveler.get_branch(repo, "main").hiding == ()


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
    follows the stored plan (its own record now hides the keys it counts)."""
    repo = setup(lake)
    operation = start(lake, "lakefs://repo1/main/a/")
    context = lake.engine_context(owner="s1")

    class CrashAfterHiding(BatchProcessor):
        def _hide(
            self, op: Operation, repository: Repository, batch: Batch, plan: RangePlan
        ) -> list[tuple[str, str]]:
            super()._hide(op, repository, batch, plan)
            raise RuntimeError("crash")

    engine = LocalEngine(context)
    engine.batches = CrashAfterHiding(context)
    with pytest.raises(RuntimeError):
        engine.run(operation.id, threading.Event())
    crashed = lake.ledger.load(operation.id)[0]
    lake.clock.advance(31)  # type: ignore[attr-defined]
    final = run(lake, operation, owner="s2")
    assert crashed.done < final.done
    assert final.counters.deleted + final.counters.skipped == final.counters.enumerated
    assert final.counters.enumerated == len(INSIDE)
    assert listed(lake, repo) == ["0", "a", "a/12345", "a0", "b/1"]


def test_cancel_stops_after_a_range(lake: Lake) -> None:
    repo = setup(lake)
    operation = start(lake, "lakefs://repo1/main/a/")
    context = lake.engine_context(owner="s1")

    class CancelAfterRange(BatchProcessor):
        def process(self, op: Operation, repository: Repository, number: int) -> Outcome:
            outcome = super().process(op, repository, number)
            if lake.ledger.read_batch(op.id, number).range_id:
                lake.bulk_deletes.cancel(op.id, user="alice", admin=False)
            return outcome

    engine = LocalEngine(context)
    engine.batches = CancelAfterRange(context)
    final = engine.run(operation.id, threading.Event())
    assert final.status == "cancelled"
    left = [p for p in listed(lake, repo) if p.startswith("a/")]
    assert 0 < final.counters.deleted < len(INSIDE)
    assert len(left) == len(INSIDE) - final.counters.deleted  # what is done stays done
