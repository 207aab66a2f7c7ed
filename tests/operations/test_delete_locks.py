"""Delete locks name their branch, live as long as the operation, and every write meets them.

A bulk delete's delete lock refuses the writes that stage a new blob under its
prefix on its branch (uploads, deep and shallow copies, direct-upload links,
stageObject) and nothing on other branches. It is renewed while enumeration
lists (even when filters keep nothing for a long while) and before each batch,
so it never lapses while the operation runs. A write lock covers every write of
its path: copies onto it, deletes and resets too.
"""

from __future__ import annotations

import dataclasses
import io
import threading
from collections.abc import Callable

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import LockedError, PreconditionFailedError
from kvlake.graveler import Repository, Value
from kvlake.kv.memory import MemoryStore
from kvlake.lake import Lake
from kvlake.operations import (
    BatchProcessor,
    BulkDeleteDriver,
    BulkDeleteOptions,
    Filters,
    LocalBatches,
    ObjectInfo,
    Operation,
    Outcome,
    local_engine,
)
from tests.operations.helpers import listed, make_lake, populate, start
from tests.support import FakeClock

LINK_KEY = b"k" * 32


@pytest.fixture
def lake(lake_blocks: BlockStore) -> Lake:
    return make_lake(MemoryStore(), lake_blocks, batch_size=2)


def _clock(lake: Lake) -> FakeClock:
    clock = lake.clock
    assert isinstance(clock, FakeClock)
    return clock


def _lock(lake: Lake, repo: Repository, branch: str, prefix: str) -> Operation:
    """A bulk delete on `branch` holding its delete lock on `prefix`, not yet run (an
    empty `branch`: a lock written before locks named their branch)."""
    operation = start(lake, f"lakefs://repo1/{branch or 'main'}/{prefix}")
    lake.locks.take_delete_lock(repo, operation.id, branch, prefix, lake.clock() + 60)
    return operation


# Every write that stages a new blob, as (name, write(lake, repo, branch, path)).
def _upload(lake: Lake, repo: Repository, branch: str, path: str) -> object:
    return lake.catalog.upload(repo, branch, path, io.BytesIO(b"new"))


def _deep_copy(lake: Lake, repo: Repository, branch: str, path: str) -> object:
    return lake.catalog.copy_object(repo, "main", "src", branch, path, shallow=False)


def _shallow_copy(lake: Lake, repo: Repository, branch: str, path: str) -> object:
    return lake.catalog.copy_object(repo, "main", "src", branch, path)


def _link(lake: Lake, repo: Repository, branch: str, path: str) -> object:
    links = lake.catalog.direct_uploads(LINK_KEY)
    address, _ = links.issue(repo, branch, path)
    lake.blockstore.put(repo.storage_namespace, address, b"new")
    return links.link(
        repo, branch, path, address, size=3, checksum="c", content_type="x", metadata={}
    )


def _stage(lake: Lake, repo: Repository, branch: str, path: str) -> object:
    address = lake.catalog.links.new_physical_address(repo)
    lake.blockstore.put(repo.storage_namespace, address.split("/", 4)[-1], b"new")
    return lake.catalog.links.link(
        repo, branch, path, address, size=3, checksum="c", content_type="x", metadata={}
    )


WRITES: dict[str, Callable[[Lake, Repository, str, str], object]] = {
    "upload": _upload,
    "deep_copy": _deep_copy,
    "shallow_copy": _shallow_copy,
    "link": _link,
    "stage": _stage,
}


def _repo(lake: Lake) -> Repository:
    repo = populate(lake, ["a/1", "a/2", "b/1", "src"])
    lake.graveler.create_branch(repo, "dev", "main")
    return repo


@pytest.mark.parametrize("write", sorted(WRITES))
def test_every_new_blob_write_under_a_bulk_delete_on_its_branch_is_refused(
    lake: Lake, write: str
) -> None:
    repo = _repo(lake)
    operation = _lock(lake, repo, "main", "a/")
    with pytest.raises(LockedError, match=operation.id):
        WRITES[write](lake, repo, "main", "a/new")
    assert listed(lake, repo, "a/") == ["a/1", "a/2"]
    WRITES[write](lake, repo, "main", "b/new")  # outside the prefix


@pytest.mark.parametrize("write", sorted(WRITES))
def test_a_bulk_delete_refuses_no_write_on_another_branch(lake: Lake, write: str) -> None:
    repo = _repo(lake)
    _lock(lake, repo, "main", "a/")
    WRITES[write](lake, repo, "dev", "a/new")
    keys = [key.decode() for key, _ in lake.graveler.list(repo, "dev")]
    assert "a/new" in keys


def test_a_whole_branch_delete_blocks_its_branch_not_the_repository(lake: Lake) -> None:
    repo = _repo(lake)
    operation = _lock(lake, repo, "main", "")
    with pytest.raises(LockedError, match=f"{operation.id}.*branch 'main'"):
        _upload(lake, repo, "main", "c/new")
    _upload(lake, repo, "dev", "c/new")
    lake.graveler.create_branch(repo, "other", "main")
    _upload(lake, repo, "other", "c/new")


def test_a_delete_lock_naming_no_branch_covers_every_branch(lake: Lake) -> None:
    """Records written before locks named their branch keep protecting every branch."""
    repo = _repo(lake)
    operation = _lock(lake, repo, "", "a/")
    with pytest.raises(LockedError, match=operation.id):
        _upload(lake, repo, "dev", "a/new")


@pytest.mark.parametrize("write", ["deep_copy", "shallow_copy", "upload", "link", "stage"])
def test_a_write_lock_covers_every_new_blob_write_of_its_path(lake: Lake, write: str) -> None:
    repo = _repo(lake)
    lake.locks.acquire(repo, "a/new", owner="bob", ttl=60)
    with pytest.raises(LockedError, match="locked by 'bob'"):
        WRITES[write](lake, repo, "main", "a/new")
    assert "a/new" not in listed(lake, repo)


def test_a_write_lock_covers_deletes_and_resets_of_its_path(lake: Lake) -> None:
    repo = _repo(lake)
    populate(lake, ["a/1", "a/3"], commit=False)  # staged changes for the resets
    lake.locks.acquire(repo, "a/1", owner="bob", ttl=60)
    catalog = lake.catalog
    with pytest.raises(LockedError, match="locked by 'bob'"):
        catalog.delete_object(repo, "main", "a/1", owner="alice")
    failures = catalog.delete_objects(repo, "main", ["a/1", "a/2"], owner="alice")
    assert [(path, type(exc)) for path, exc in failures] == [("a/1", LockedError)]
    with pytest.raises(LockedError, match="locked by 'bob'"):
        catalog.reset_object(repo, "main", "a/1", prefix=False, owner="alice")
    with pytest.raises(LockedError, match="locked by 'bob'"):
        catalog.reset_object(repo, "main", "a/", prefix=True, owner="alice")
    assert listed(lake, repo, "a/") == ["a/1", "a/3"]
    # The holder writes its own path freely.
    catalog.reset_object(repo, "main", "a/", prefix=True, owner="bob")  # a/2 back, a/3 gone
    catalog.delete_object(repo, "main", "a/1", owner="bob")
    assert listed(lake, repo, "a/") == ["a/2"]


def test_the_delete_lock_lives_through_an_enumeration_that_keeps_nothing_for_long(
    lake: Lake,
) -> None:
    """Filters that match nothing write no batch for a long while: the listing renews the
    lease and the delete lock itself, so a write meanwhile is refused, never accepted."""
    repo = populate(lake, [f"a/{i:02d}" for i in range(12)])
    lease = lake.settings.operations.lease_time
    clock = _clock(lake)
    operation = start(
        lake, "lakefs://repo1/main/a/", options=BulkDeleteOptions(filters=Filters(glob="*.tmp"))
    )
    refused: list[bool] = []
    context = lake.engine_context(owner="server")

    def slow_describe(value: Value) -> ObjectInfo:
        clock.advance(lease / 4)  # each object takes a quarter of the lease to read
        try:
            _upload(lake, repo, "main", "a/late")
            refused.append(False)
        except LockedError:
            refused.append(True)
        return context.describe(value)

    engine = local_engine(dataclasses.replace(context, describe=slow_describe))
    engine.run(operation.id, threading.Event())
    assert len(refused) == 12 and all(refused), refused


def test_the_delete_lock_is_renewed_for_each_batch(lake: Lake) -> None:
    """Batches that each take most of the lease: without a renewal per batch the lock
    lapses between two, and an upload then would be deleted by the next batch. The first
    two batches are all write-locked, so they write no tombstone (and never reach the
    check before one): only the renewal at the start of each batch keeps the lock."""
    repo = populate(lake, [f"a/{i}" for i in range(6)], commit=False)  # path batches of 2
    for path in ("a/0", "a/1", "a/2", "a/3"):
        lake.locks.acquire(repo, path, owner="bob", ttl=3600)
    lease = lake.settings.operations.lease_time
    clock = _clock(lake)
    operation = start(lake, "lakefs://repo1/main/a/")
    context = lake.engine_context(owner="server")
    uploads: list[str] = []

    class SlowBatches(BatchProcessor):
        def process(self, op: Operation, repository: Repository, number: int) -> Outcome:
            outcome = super().process(op, repository, number)
            clock.advance(lease * 0.6)
            try:
                _upload(lake, repo, "main", "a/5")  # in the last batch
                uploads.append("accepted")
            except LockedError:
                uploads.append("refused")
            return outcome

    engine = BulkDeleteDriver(context, LocalBatches(SlowBatches(context)))
    final = engine.run(operation.id, threading.Event())
    assert final.status == "completed_with_errors", final
    assert (final.counters.deleted, final.counters.skipped) == (2, 4)
    assert uploads == ["refused"] * 3


def test_a_released_delete_lock_is_never_renewed_back(lake: Lake) -> None:
    """A batch still running for an operation that finished elsewhere stops: renewing
    its released lock would refuse writes under the prefix for another lease time."""
    repo = _repo(lake)
    operation = _lock(lake, repo, "main", "a/")
    lake.locks.release_delete_lock(repo.instance_uid, operation.id)
    with pytest.raises(PreconditionFailedError, match="holds no delete lock"):
        lake.locks.renew_delete_lock(repo, operation.id, "main", "a/", lake.clock() + 60)
    assert lake.locks.deleting(repo, "a/1") is None
    _upload(lake, repo, "main", "a/new")
