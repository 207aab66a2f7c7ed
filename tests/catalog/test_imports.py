"""Zero-copy imports from S3 (moto): one commit of entries that point at the external objects,
which kvlake reads and never deletes."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import msgspec
import pytest

from kvlake.blockstore import BlockStore, open_blockstore
from kvlake.catalog import Importer, ImportSource
from kvlake.catalog.imports import CANCELED
from kvlake.errors import (
    ConflictError,
    DirtyBranchError,
    EntryNotFoundError,
    ImportNotFoundError,
    InvalidInputError,
    RepositoryNotFoundError,
)
from kvlake.kv.memory import MemoryStore
from kvlake.operations import Driver
from tests.deletion.helpers import DeletionLake
from tests.support.imports import run_import
from tests.support.s3server import MotoS3

EXTERNAL = {"external/set/a.csv": b"a,b", "external/set/sub/b.csv": b"1,2,3", "external/x": b"x"}


@pytest.fixture
def lake(s3_server: MotoS3) -> Iterator[DeletionLake]:
    for key, body in EXTERNAL.items():
        s3_server.admin.put_object(Bucket="lake", Key=key, Body=body)
    with MemoryStore() as store, open_blockstore("s3://lake") as blocks:
        yield DeletionLake(store, blocks, namespace="s3://lake/repo1")


@pytest.fixture
def importer(lake: DeletionLake) -> Importer:
    return lake.catalog.imports


def read(lake: DeletionLake, path: str, ref: str = "main") -> bytes:
    _, reader = lake.catalog.open_object(lake.repository, ref, path)
    with reader:
        return reader.read()


SOURCES = [
    ImportSource("s3://lake/external/set/", "data/", "common_prefix"),
    ImportSource("s3://lake/external/x", "single", "object"),
]


def test_an_import_is_one_commit_of_entries_that_read_the_external_objects(
    lake: DeletionLake, importer: Importer
) -> None:
    lake.upload("data/old")
    lake.commit()
    job = importer.prepare(lake.repository, "main", SOURCES, committer="me", message="imported")
    run_import(lake.lake, job.import_id)
    status = importer.status(lake.repository, job.import_id)
    assert (status.completed, status.error, status.ingested) == (True, "", 3)
    assert lake.graveler.get_branch(lake.repository, "main").commit_id == status.commit_id
    assert read(lake, "data/a.csv") == b"a,b" and read(lake, "data/sub/b.csv") == b"1,2,3"
    assert read(lake, "single") == b"x"
    stat = lake.catalog.stat(lake.repository, "main", "data/a.csv")
    assert stat.address == "s3://lake/external/set/a.csv" and stat.size == 3
    assert stat.checksum  # the ETag
    with pytest.raises(EntryNotFoundError):  # the destination prefix was replaced whole
        lake.catalog.stat(lake.repository, "main", "data/old")
    assert lake.data_blobs() == {lake.catalog.stat(lake.repository, "main~1", "data/old").address}


def test_imported_objects_are_never_deleted(lake: DeletionLake, importer: Importer) -> None:
    run_import(
        lake.lake, importer.prepare(lake.repository, "main", SOURCES, committer="me").import_id
    )
    lake.catalog.copy_object(lake.repository, "main", "single", "main", "copy", shallow=False)
    lake.catalog.copy_object(lake.repository, "main", "data/a.csv", "main", "copy2")
    lake.catalog.delete_object(lake.repository, "main", "copy")  # a staged delete
    lake.graveler.resets.reset_branch(lake.repository, "main")  # drops the token with copy2
    lake.catalog.delete_objects(lake.repository, "main", ["data/a.csv", "single"])
    lake.commit()
    lake.settle()
    assert list(lake.dead_letters()) == []
    assert set(lake.blocks.list_keys("s3://lake/external")) == {"set/a.csv", "set/sub/b.csv", "x"}
    assert read(lake, "single", "main~1") == b"x"


def test_a_bad_import_is_refused_before_anything_is_recorded(
    lake: DeletionLake, importer: Importer
) -> None:
    repository = lake.repository
    for sources, match in (
        ([ImportSource("s3://lake/repo1/data/", "d/", "common_prefix")], "is inside repo"),
        ([ImportSource("s3://lake/re", "d/", "common_prefix")], "overlaps repository repo1"),
        ([ImportSource("s3://never/x/", "d/", "common_prefix")], "cannot be read: .*not below"),
        ([ImportSource("local://x/", "d/", "common_prefix")], "cannot be read"),
        ([ImportSource("s3://lake/external/", "", "object")], "is invalid"),
        ([*SOURCES, ImportSource("s3://lake/external/x", "data/x", "object")], "overlap"),
        ([], "give 1 to 1000"),
    ):
        with pytest.raises(InvalidInputError, match=match):
            importer.prepare(repository, "main", sources, committer="me")
    lake.upload("staged")
    with pytest.raises(DirtyBranchError):
        importer.prepare(repository, "main", SOURCES, committer="me")


def test_a_missing_source_object_fails_the_import_with_nothing_committed(
    lake: DeletionLake, importer: Importer
) -> None:
    head = lake.graveler.get_branch(lake.repository, "main").commit_id
    missing = [ImportSource("s3://lake/external/nope", "n", "object")]
    job = importer.prepare(lake.repository, "main", missing, committer="me")
    run_import(lake.lake, job.import_id)
    status = importer.status(lake.repository, job.import_id)
    assert not status.completed and "does not exist" in status.error
    assert lake.graveler.get_branch(lake.repository, "main").commit_id == head


def test_a_canceled_import_commits_nothing(lake: DeletionLake, importer: Importer) -> None:
    head = lake.graveler.get_branch(lake.repository, "main").commit_id
    job = importer.prepare(lake.repository, "main", SOURCES, committer="me")
    importer.cancel(lake.repository, job.import_id)
    importer.cancel(lake.repository, job.import_id)  # twice is fine
    run_import(lake.lake, job.import_id)
    assert importer.status(lake.repository, job.import_id).error == CANCELED
    assert lake.graveler.get_branch(lake.repository, "main").commit_id == head
    done = importer.prepare(lake.repository, "main", SOURCES, committer="me")
    run_import(lake.lake, done.import_id)
    with pytest.raises(ConflictError, match="completed already"):
        importer.cancel(lake.repository, done.import_id)
    with pytest.raises(ImportNotFoundError):
        importer.cancel(lake.repository, "nope")


def test_an_import_whose_holder_died_is_resumed_by_another_runner_once_its_lease_lapsed(
    lake: DeletionLake, importer: Importer
) -> None:
    job = importer.prepare(lake.repository, "main", SOURCES, committer="me")
    dead = Driver(lake.lake.ledger, owner="dead", lease_time=60, clock=lake.clock)
    assert dead.claim(job.import_id).owner == "dead"  # claimed, then the process died
    assert run_import(lake.lake, job.import_id).owner == "dead"  # its lease still holds
    assert importer.status(lake.repository, job.import_id).error == ""
    lake.clock.advance(61)
    assert run_import(lake.lake, job.import_id).status == "completed"
    assert read(lake, "single") == b"x"


def test_a_resumed_import_whose_commit_landed_completes_with_it_and_commits_nothing_more(
    lake: DeletionLake, importer: Importer
) -> None:
    """A holder that died right after its commit landed (its record says `committing`):
    the next holder finds the import's commit after the recorded head and completes."""
    job = importer.prepare(lake.repository, "main", SOURCES, committer="me", message="m")
    done = run_import(lake.lake, job.import_id)
    base = lake.graveler.get_commit(lake.repository, done.commit_id).parents[0]
    ledger = lake.lake.ledger
    ledger.update(
        job.import_id,
        lambda op: msgspec.structs.replace(
            op, status="in_progress", commit_id="", committing=True, base_commit=base
        ),
    )
    assert (done.base_commit, done.committing) == (base, True)  # named before it landed
    assert run_import(lake.lake, job.import_id).commit_id == done.commit_id
    assert lake.graveler.get_branch(lake.repository, "main").commit_id == done.commit_id


def test_a_resumed_import_whose_commit_never_landed_publishes_its_metarange(
    lake: DeletionLake, importer: Importer
) -> None:
    """A holder that died after recording `committing` but before its commit landed, and
    another writer committed since: that commit is not the import's, so the next holder
    publishes the recorded metarange on top of it (once)."""
    head = lake.graveler.get_branch(lake.repository, "main").commit_id
    job = importer.prepare(lake.repository, "main", SOURCES, committer="me")
    driver = Driver(lake.lake.ledger, owner="dead", lease_time=60, clock=lake.clock)
    driver.claim(job.import_id)
    metarange_id = importer.write_metarange(job, lambda _n: None)
    driver.checkpoint(job.import_id, metarange_id=metarange_id, committing=True, base_commit=head)
    lake.upload("other")
    foreign = lake.commit()
    lake.clock.advance(61)
    done = run_import(lake.lake, job.import_id)
    assert done.status == "completed" and done.base_commit == foreign
    assert lake.graveler.get_commit(lake.repository, done.commit_id).parents == (foreign,)
    assert read(lake, "data/a.csv") == b"a,b"


def test_an_import_is_an_operation_listed_with_every_kind(
    lake: DeletionLake, importer: Importer
) -> None:
    job = importer.prepare(lake.repository, "main", SOURCES, committer="me", creator="me#1")
    operation = lake.lake.ledger.load(job.import_id)[0]
    assert (operation.kind, operation.branch, operation.creator) == ("import", "main", "me#1")
    assert operation.imports is not None
    assert [s.destination for s in operation.imports.sources] == ["data/", "single"]
    other = lake.graveler.create_repository("repo2", storage_namespace="s3://lake/repo2")
    with pytest.raises(ImportNotFoundError):  # another repository's import is not found here
        importer.status(other, job.import_id)


# A local folder: S3 always imports, a local folder only with KVLAKE_IMPORTS_LOCAL_ENABLED.
@pytest.mark.parametrize("lake_blocks", ["local"], indirect=True)
def test_a_blockstore_without_imports_refuses_them(lake_blocks: BlockStore) -> None:
    lake = DeletionLake(MemoryStore(), lake_blocks)
    assert not lake.catalog.imports.supported
    with pytest.raises(InvalidInputError, match="does not import"):
        lake.catalog.imports.prepare(lake.repository, "main", SOURCES, committer="me")


def test_an_import_into_a_repository_deleted_meanwhile_commits_nothing(
    lake: DeletionLake, importer: Importer
) -> None:
    repository = lake.repository
    head = lake.graveler.get_branch(repository, "main").commit_id
    job = importer.prepare(repository, "main", SOURCES, committer="me")
    lake.graveler.delete_repository("repo1")
    run_import(lake.lake, job.import_id)
    with pytest.raises(RepositoryNotFoundError):
        lake.graveler.get_repository("repo1")
    # The instance's refs stay until the cleaner runs: the import added no commit there.
    assert lake.graveler.get_branch(repository, "main").commit_id == head
    status = importer.status(repository, job.import_id)
    assert not status.completed and "repository 'repo1'" in status.error


def test_a_cancel_read_at_a_progress_checkpoint_stops_the_listing(
    lake: DeletionLake, importer: Importer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine reads a cancel at each checkpoint of the listing (every
    KVLAKE_IMPORTS_PROGRESS_EVERY entries): a canceled import lists no further."""
    head = lake.graveler.get_branch(lake.repository, "main").commit_id
    job = importer.prepare(lake.repository, "main", SOURCES, committer="me")
    listed: list[str] = []
    write_metarange = Importer.write_metarange

    def canceled_at_the_first_checkpoint(
        self: Importer, job_: object, progress: Callable[[int], None]
    ) -> str:
        importer.cancel(lake.repository, job.import_id)
        progress(1)  # the first checkpoint, after the cancel
        listed.append("on")
        return write_metarange(self, job_, progress)  # type: ignore[arg-type]

    monkeypatch.setattr(Importer, "write_metarange", canceled_at_the_first_checkpoint)
    run_import(lake.lake, job.import_id)
    assert listed == []
    assert importer.status(lake.repository, job.import_id).error == CANCELED
    assert lake.graveler.get_branch(lake.repository, "main").commit_id == head


def test_a_repository_deleted_while_its_sources_are_listed_gets_no_commit(
    lake: DeletionLake, importer: Importer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Invariant 1: the engine reads the repository again after the listing; the deleted
    instance's refs stay until the cleaner runs, and a publish would land there."""
    repository = lake.repository
    head = lake.graveler.get_branch(repository, "main").commit_id
    job = importer.prepare(repository, "main", SOURCES, committer="me")
    write_metarange = Importer.write_metarange

    def deleted_meanwhile(self: Importer, job_: object, progress: Callable[[int], None]) -> str:
        metarange_id = write_metarange(self, job_, progress)  # type: ignore[arg-type]
        lake.graveler.delete_repository("repo1")
        return metarange_id

    monkeypatch.setattr(Importer, "write_metarange", deleted_meanwhile)
    run_import(lake.lake, job.import_id)
    assert lake.graveler.get_branch(repository, "main").commit_id == head
    status = importer.status(repository, job.import_id)
    assert not status.completed and "repository 'repo1'" in status.error
