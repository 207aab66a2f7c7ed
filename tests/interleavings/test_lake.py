"""Uploads, commits, resets, branch deletions, workers and the cleaner, interleaved.

Every scenario runs under many schedules (scheduler.py): each pauses the
operations at every KV and blockstore call and lets them go in a chosen order.
After each schedule the cleaner and the deletion workers run until nothing is
left to do, and then, whatever the interleaving:
- no acknowledged write is lost (each scenario says what its writes must leave);
- no blob that any commit (reachable or not: a commit stays readable by id until
  garbage collection) or any live staged entry references was deleted;
- nothing is orphaned: every blob left is referenced, or marked shared (left to
  garbage collection by rule).
"""

from __future__ import annotations

import itertools
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from kvlake.blockstore import BlockStore
from kvlake.catalog import ObjectStat
from kvlake.errors import KvlakeError, NoChangesError, StorageNamespaceInUseError
from kvlake.kv import Store, open_store
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake
from tests.interleavings.scheduler import (
    Check,
    Outcome,
    Scenario,
    Scheduler,
    SteppingBlockStore,
    SteppingStore,
    explore,
)
from tests.support import backends, drop_postgres_table
from tests.support.backends import budget, paired_params

Operations = Sequence[Callable[[], object]]


StoreFactory = Callable[[], Store]
_new_store: StoreFactory = MemoryStore
"""The KV store the scenarios build on (a test may switch it to SQLite or PostgreSQL)."""


_blocks: BlockStore | None = None
"""The blockstore the scenarios build on: the test's `lake_blocks` (a local folder, S3)."""
_lakes = itertools.count()
"""Numbers the lakes: each schedule's lake has a namespace of its own on `_blocks`."""


@pytest.fixture(autouse=True)
def blocks(lake_blocks: BlockStore, monkeypatch: pytest.MonkeyPatch) -> BlockStore:
    monkeypatch.setattr(sys.modules[__name__], "_blocks", lake_blocks)
    return lake_blocks


def _lake(scheduler: Scheduler) -> DeletionLake:
    assert _blocks is not None, "the autouse fixture `blocks` sets the blockstore"
    return DeletionLake(
        SteppingStore(_new_store(), scheduler),
        SteppingBlockStore(_blocks, scheduler),
        namespace=backends.namespace(_blocks, f"repo{next(_lakes)}"),
    )


def _commit(lake: DeletionLake, branch: str = "main") -> str | None:
    try:
        return lake.commit(branch)
    except NoChangesError:
        return None


def _settled(lake: DeletionLake) -> None:
    """Drain the cleaner and workers, then check no blob is lost or orphaned."""
    lake.settle()
    blobs, referenced = lake.data_blobs(), lake.referenced()
    assert referenced <= blobs, f"referenced blobs were deleted: {sorted(referenced - blobs)}"
    orphaned = blobs - referenced - lake.shared_addresses()
    assert not orphaned, f"blobs nothing references or logs: {sorted(orphaned)}"


def _address_on_main(lake: DeletionLake, path: str) -> str:
    return lake.catalog.stat(lake.repository, "main", path).address


def upload_and_commit(scheduler: Scheduler) -> tuple[Operations, Check]:
    lake = _lake(scheduler)
    lake.upload("base")
    lake.commit()
    lake.upload("filler")  # staged, so the commit seals the token the upload writes to

    def check(outcomes: list[Outcome]) -> None:
        upload = outcomes[0]
        assert upload.acknowledged, upload.error
        assert isinstance(upload.value, ObjectStat)
        _commit(lake)
        head = lake.graveler.get_branch(lake.repository, "main").commit_id
        committed = lake.catalog.stat(lake.repository, head, "p").address
        assert committed == upload.value.address, "the acknowledged upload was lost"
        _settled(lake)

    return [lambda: lake.upload("p", b"new"), lambda: _commit(lake)], check


def upload_and_upload(scheduler: Scheduler) -> tuple[Operations, Check]:
    lake = _lake(scheduler)

    def check(outcomes: list[Outcome]) -> None:
        assert all(o.acknowledged for o in outcomes), outcomes
        written = {o.value.address for o in outcomes if isinstance(o.value, ObjectStat)}
        assert _address_on_main(lake, "p") in written
        _commit(lake)
        _settled(lake)

    return [lambda: lake.upload("p", b"a"), lambda: lake.upload("p", b"b")], check


def reset_key_and_commit(scheduler: Scheduler) -> tuple[Operations, Check]:
    lake = _lake(scheduler)
    lake.upload("base")
    lake.commit()
    lake.upload("p", b"staged")
    lake.upload("q", b"stays")
    repository = lake.repository

    def check(outcomes: list[Outcome]) -> None:
        assert outcomes[0].acknowledged, outcomes[0].error
        _commit(lake)
        _address_on_main(lake, "q")  # the commit or the staging area kept q
        _settled(lake)

    return [
        lambda: lake.graveler.resets.reset_key(repository, "main", b"p"),
        lambda: _commit(lake),
    ], check


def commit_and_hard_reset(scheduler: Scheduler) -> tuple[Operations, Check]:
    lake = _lake(scheduler)
    lake.upload("base")
    first = lake.commit()
    lake.upload("p", b"staged")
    repository = lake.repository

    def check(outcomes: list[Outcome]) -> None:
        committed, reset = outcomes
        assert reset.acknowledged, reset.error
        if isinstance(committed.value, str):
            lake.graveler.get_commit(repository, committed.value)  # it exists, readable
        elif not committed.acknowledged:  # the reset took its data: it says so
            assert isinstance(committed.error, KvlakeError), committed.error
        _settled(lake)

    return [
        lambda: _commit(lake),
        lambda: lake.graveler.resets.reset_hard(repository, "main", first),
    ], check


def delete_branch_and_worker(scheduler: Scheduler) -> tuple[Operations, Check]:
    lake = _lake(scheduler)
    repository = lake.repository
    lake.graveler.create_branch(repository, "dev", "main")
    lake.upload("p", b"committed", branch="dev")
    lake.commit("dev")
    lake.upload("p", b"overwritten", branch="dev")
    lake.upload("q", b"staged", branch="dev")
    lake.settle()
    worker = lake.worker()

    def check(outcomes: list[Outcome]) -> None:
        assert outcomes[0].acknowledged, outcomes[0].error
        _settled(lake)

    return [
        lambda: lake.graveler.delete_branch(repository, "dev"),
        worker.run_once,
    ], check


def upload_and_cleaner(scheduler: Scheduler) -> tuple[Operations, Check]:
    lake = _lake(scheduler)
    lake.upload("base")
    lake.commit()  # queues the committed token for dropping (no delay here)

    def check(outcomes: list[Outcome]) -> None:
        upload = outcomes[0]
        assert upload.acknowledged, upload.error
        assert isinstance(upload.value, ObjectStat)
        assert _address_on_main(lake, "p") == upload.value.address, "the upload was lost"
        _commit(lake)
        _settled(lake)

    return [lambda: lake.upload("p", b"new"), lake.cleaner.clean_once], check


def two_uploads_and_a_commit(scheduler: Scheduler) -> tuple[Operations, Check]:
    lake = _lake(scheduler)
    lake.upload("filler")

    def check(outcomes: list[Outcome]) -> None:
        assert outcomes[0].acknowledged and outcomes[1].acknowledged, outcomes
        written = {o.value.address for o in outcomes[:2] if isinstance(o.value, ObjectStat)}
        _commit(lake)
        head = lake.graveler.get_branch(lake.repository, "main").commit_id
        assert lake.catalog.stat(lake.repository, head, "p").address in written
        _settled(lake)

    return [
        lambda: lake.upload("p", b"a"),
        lambda: lake.upload("p", b"b"),
        lambda: _commit(lake),
    ], check


def _restore_and_worker(purge: bool) -> Scenario:
    """A repository deleted (with or without purge) while a bare one restores its refs on
    its namespace (lakeFS's migration path) and the worker works the old one's records."""

    def scenario(scheduler: Scheduler) -> tuple[Operations, Check]:
        lake = _lake(scheduler)
        repository = lake.repository
        lake.upload("p", b"committed")
        lake.commit()
        lake.upload("p", b"overwritten")
        lake.upload("p", b"staged")  # logs the "overwritten" blob, which no commit holds
        dump = lake.graveler.dumps.dump(repository)
        lake.purges.delete_repository("repo1", purge=purge)
        lake.cleaner.clean_once()  # with purge: the namespace's blobs are logged
        worker = lake.worker()

        def restore() -> None:
            bare = lake.graveler.create_bare_repository("copy", storage_namespace=lake.namespace)
            lake.graveler.dumps.restore(bare, dump.dump_id)

        def check(outcomes: list[Outcome]) -> None:
            if purge:  # the data is going: nobody may take the namespace over
                assert isinstance(outcomes[0].error, StorageNamespaceInUseError), outcomes[0]
                return
            assert outcomes[0].acknowledged, outcomes[0].error
            lake.settle()
            copy = lake.graveler.get_repository("copy")
            _, reader = lake.catalog.open_object(copy, "main", "p")
            with reader:
                assert reader.read() == b"committed", "the restored repository lost its data"

        return [restore, worker.run_once], check

    return scenario


SCENARIOS: dict[str, Scenario] = {
    "upload and commit": upload_and_commit,
    "upload and upload": upload_and_upload,
    "reset of a key and commit": reset_key_and_commit,
    "commit and hard reset": commit_and_hard_reset,
    "branch deletion and worker": delete_branch_and_worker,
    "upload and cleaner": upload_and_cleaner,
    "two uploads and a commit": two_uploads_and_a_commit,
    "restore and worker": _restore_and_worker(purge=False),
    "restore after a purge and worker": _restore_and_worker(purge=True),
}


SCHEDULES = ((300, 40, 20), (12, 3, 10))
"""(limit, shuffled, at least this many ran) of each scenario's exploration: every case, sample.
A local folder explores widely; S3 runs a sample, as the SQL drivers do below: a blob call
is one step there like any other, at ten times the cost of a local one."""


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_no_interleaving_loses_a_write_or_a_referenced_blob(name: str, blocks: BlockStore) -> None:
    limit, shuffled, least = budget(blocks, *SCHEDULES)
    assert explore(SCENARIOS[name], seed=1, limit=limit, shuffled=shuffled) > least


@pytest.fixture
def durable_store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scenarios on a real SQL driver, each schedule on a fresh database or table."""
    counter = iter(range(1_000_000))
    stores: list[Store] = []
    if request.param == "sqlite":

        def factory() -> Store:
            stores.append(open_store(f"sqlite:///{tmp_path}/kv{next(counter)}.db"))
            return stores[-1]
    else:
        dsn = str(request.getfixturevalue("postgres_dsn"))
        tables: list[str] = []

        def factory() -> Store:
            tables.append(f"kv_interleave_{uuid.uuid4().hex[:12]}")
            joiner = "&" if "?" in dsn else "?"
            stores.append(open_store(f"{dsn}{joiner}table={tables[-1]}"))
            return stores[-1]

        def drop_tables() -> None:
            for table in tables:
                drop_postgres_table(dsn, table)

        request.addfinalizer(drop_tables)
    monkeypatch.setattr(sys.modules[__name__], "_new_store", factory)

    def close_stores() -> None:
        for store in stores:
            store.close()

    request.addfinalizer(close_stores)


@pytest.mark.usefixtures("durable_store")
@pytest.mark.parametrize(
    ("durable_store", "lake_blocks"), paired_params("sqlite", "postgres"), indirect=True
)
@pytest.mark.parametrize("name", ["commit and hard reset", "upload and commit"])
def test_interleavings_hold_on_sql_drivers(name: str) -> None:
    assert explore(SCENARIOS[name], seed=2, limit=12, shuffled=3) > 10
