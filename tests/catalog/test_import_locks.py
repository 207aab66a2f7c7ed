"""Imports respect delete locks and write locks on their destinations (issue 22 b): an import
into a branch where a bulk delete runs over (part of) a destination, or where another
owner's write lock lies, is refused, both when it is started and right before it publishes
(a bulk delete may start while the sources are listed). Local folder and S3."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlake import ids
from kvlake.blockstore import BlockStore
from kvlake.catalog import ImportSource
from kvlake.config import ImportSettings, Settings
from kvlake.errors import LockedError
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake
from tests.support.imports import run_import

OPERATION = ids.new_uid()
FILES = {"set/a.csv": b"a,b", "set/sub/b.csv": b"1,2,3", "x": b"x"}


def folder(scheme: str) -> str:
    return "local://imports" if scheme == "local" else "s3://lake/imports"


@pytest.fixture
def lake(lake_blocks: BlockStore, tmp_path: Path) -> Iterator[DeletionLake]:
    imports = ImportSettings(local_enabled=True, local_prefixes="local://imports")
    settings = Settings(data_dir=str(tmp_path / "data"), imports=imports)
    with MemoryStore() as store:
        lake = DeletionLake(store, lake_blocks, settings=settings)
        for key, body in FILES.items():
            lake_blocks.put(folder(lake_blocks.scheme), key, body)
        lake.graveler.create_branch(lake.repository, "dev", "main")
        yield lake
        lake.lake.close()


def sources(lake: DeletionLake) -> list[ImportSource]:
    where = folder(lake.blocks.scheme)
    return [
        ImportSource(f"{where}/set/", "d/", "common_prefix"),
        ImportSource(f"{where}/x", "single", "object"),
    ]


def bulk_delete(lake: DeletionLake, prefix: str, branch: str = "main") -> None:
    """The delete lock a running bulk delete holds (operations' `take_delete_lock`)."""
    expires = lake.clock() + 3600
    lake.lake.locks.take_delete_lock(lake.repository, OPERATION, branch, prefix, expires)


@pytest.mark.parametrize("prefix", ["", "d", "d/", "d/sub/", "d/a.csv", "sin"])
def test_an_import_over_a_running_bulk_delete_is_refused(lake: DeletionLake, prefix: str) -> None:
    bulk_delete(lake, prefix)
    with pytest.raises(LockedError, match=f"bulk delete operation {OPERATION}"):
        lake.catalog.imports.prepare(lake.repository, "main", sources(lake), committer="me")


@pytest.mark.parametrize(("prefix", "branch"), [("e/", "main"), ("d/", "dev"), ("singles", "main")])
def test_a_bulk_delete_elsewhere_leaves_imports_alone(
    lake: DeletionLake, prefix: str, branch: str
) -> None:
    bulk_delete(lake, prefix, branch)
    importer = lake.catalog.imports
    job = importer.prepare(lake.repository, "main", sources(lake), committer="me")
    run_import(lake.lake, job.import_id)
    assert importer.status(lake.repository, job.import_id).completed


def test_a_bulk_delete_started_while_the_sources_are_listed_stops_the_import(
    lake: DeletionLake,
) -> None:
    importer = lake.catalog.imports
    head = lake.graveler.get_branch(lake.repository, "main").commit_id
    job = importer.prepare(lake.repository, "main", sources(lake), committer="me")
    bulk_delete(lake, "d/sub/")

    run_import(lake.lake, job.import_id)

    status = importer.status(lake.repository, job.import_id)
    assert not status.completed and f"bulk delete operation {OPERATION}" in status.error
    assert lake.graveler.get_branch(lake.repository, "main").commit_id == head


def test_another_owners_write_lock_under_a_destination_refuses_the_import(
    lake: DeletionLake,
) -> None:
    locks = lake.lake.locks
    locks.acquire(lake.repository, "d/sub/b.csv", owner="alice", ttl=600)
    with pytest.raises(LockedError, match="locked by 'alice'"):
        lake.catalog.imports.prepare(lake.repository, "main", sources(lake), committer="me")
    importer = lake.catalog.imports
    job = importer.prepare(lake.repository, "main", sources(lake), committer="alice")
    run_import(lake.lake, job.import_id)
    assert importer.status(lake.repository, job.import_id).completed


def test_a_write_lock_taken_while_the_sources_are_listed_stops_the_import(
    lake: DeletionLake,
) -> None:
    importer = lake.catalog.imports
    job = importer.prepare(lake.repository, "main", sources(lake), committer="me")
    lake.lake.locks.acquire(lake.repository, "single", owner="alice", ttl=600)

    run_import(lake.lake, job.import_id)

    status = importer.status(lake.repository, job.import_id)
    assert not status.completed and "locked by 'alice'" in status.error
