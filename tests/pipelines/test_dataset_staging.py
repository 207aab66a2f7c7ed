"""Jobs without a commit message stage their files in one swap; overwrites unstage the path.

The driver's side of a job (`open_writer`, its tasks' `write`, `commit`) runs
here without Spark: what these tests check happens in the KV store and the
blockstore, and the blobs' fate is decided by the real deletion worker, run
with the clock moved past the records' due times.
"""

from __future__ import annotations

import io
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.datasource import WriterCommitMessage
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from kvlake.catalog.records import from_value
from kvlake.deletion import PendingDelete
from kvlake.graveler import Repository
from kvlake.lake import Lake
from kvlake.pipelines.dataset_writer import DatasetWriter, open_writer
from kvlake.pipelines.executors import encode_settings
from tests.pipelines.test_dataset_writes import _paths
from tests.pipelines.test_gc import namespace_of
from tests.support import FakeClock

SCHEMA = StructType([StructField("id", IntegerType()), StructField("part", StringType())])
DAY = 24 * 3600.0


@pytest.fixture
def repo(lake: Lake) -> Repository:
    repository = lake.graveler.create_repository("repo1", storage_namespace=namespace_of(lake))
    lake.catalog.upload(repository, "main", "README", io.BytesIO(b"hello"))
    lake.graveler.commit(repository, "main", committer="t", message="first")
    return repository


def _job(
    settings: object, path: str, *, overwrite: bool = False, **options: str
) -> tuple[DatasetWriter, list[WriterCommitMessage | None]]:
    """A job whose two tasks wrote their files: two per task, by `part`."""
    writer = open_writer(
        {"path": path, "partition_by": "part", **options},
        SCHEMA,
        overwrite=overwrite,
        settings=encode_settings(settings),  # type: ignore[arg-type]
    )
    batch = pa.record_batch(
        [pa.array([1, 2, 3], pa.int32()), pa.array(["a", "b", "a"])], names=["id", "part"]
    )
    return writer, [writer.write(iter([batch])), writer.write(iter([batch]))]


def _records(lake: Lake) -> list[PendingDelete]:
    log = lake.deletion_log
    return [
        due.record
        for number in range(log.partition_count())
        for due in log.scan(number)
        if due.record is not None
    ]


def _address(lake: Lake, repo: Repository, ref: str, path: str) -> str:
    return from_value(path, lake.graveler.get(repo, ref, path.encode())).address


def _blobs(lake: Lake, repo: Repository) -> set[str]:
    return set(lake.blockstore.list_keys(repo.storage_namespace, "data/"))


def _work(lake: Lake, clock: FakeClock, days: float) -> None:
    """Run the cleaner (dropping the tokens commits and resets left), then the deletion
    worker, `days` after now (real time: the tasks and commits used it)."""
    clock.now = time.time() + days * DAY
    lake.cleaner().clean_once()
    lake.deletion_worker().run_once()


def test_a_job_without_a_commit_message_stages_its_files_in_one_swap(
    lake: Lake, clocked_lake: Lake, clock: FakeClock, repo: Repository, settings: object
) -> None:
    head = lake.graveler.get_branch(repo, "main").commit_id
    writer, messages = _job(settings, "lakefs://repo1/main/t/")
    assert _paths(lake, repo, "main", "t/") == []  # the tasks staged nothing

    writer.commit(messages)

    branch = lake.graveler.get_branch(repo, "main")
    assert branch.commit_id == head  # no commit: four staged files, in one sealed token
    staged = _paths(lake, repo, "main", "t/")
    assert len(staged) == 4 and {path.split("/")[1] for path in staged} == {"part=a", "part=b"}
    assert _paths(lake, repo, head, "t/") == []
    token = branch.sealed_tokens[0]  # above the staging token it sealed
    records = {r.address: r for r in _records(lake) if r.origin == "unlinked_upload"}
    for path in staged:  # each blob's record names where the job staged it
        record = records[_address(lake, repo, "main", path)]
        assert (record.staging_token, record.path) == (token, path.encode())
    blobs = {_address(lake, repo, "main", path) for path in staged}

    _work(clocked_lake, clock, days=2)  # staged: the worker waits
    assert blobs <= _blobs(lake, repo)
    lake.graveler.commit(repo, "main", committer="t", message="the job's files")
    _work(clocked_lake, clock, days=3)  # committed: garbage collection's, for good
    assert blobs <= _blobs(lake, repo)
    assert not {r.address for r in _records(lake)} & blobs

    # A second staged job whose files the branch then drops: the worker deletes them.
    writer, messages = _job(settings, "lakefs://repo1/main/u/")
    writer.commit(messages)
    dropped = {_address(lake, repo, "main", path) for path in _paths(lake, repo, "main", "u/")}
    lake.graveler.resets.reset_branch(repo, "main")
    _work(clocked_lake, clock, days=2)
    assert len(dropped) == 4 and not dropped & _blobs(lake, repo)
    assert blobs <= _blobs(lake, repo)


@pytest.mark.parametrize("message", ["", "replace"], ids=["staged", "committed"])
def test_overwrite_replaces_staged_entries_too_and_logs_their_blobs(
    lake: Lake,
    clocked_lake: Lake,
    clock: FakeClock,
    repo: Repository,
    settings: object,
    message: str,
) -> None:
    uri = "lakefs://repo1/main/t/"
    writer, messages = _job(settings, uri, commit_message="old")
    writer.commit(messages)
    committed = {_address(lake, repo, "main", path) for path in _paths(lake, repo, "main", "t/")}
    lake.catalog.upload(repo, "main", "t/part=a/someone-staged", io.BytesIO(b"x"))
    lake.catalog.upload(repo, "main", "u/outside", io.BytesIO(b"y"))
    staged = _address(lake, repo, "main", "t/part=a/someone-staged")

    options = {"commit_message": message} if message else {}
    writer, messages = _job(settings, uri, overwrite=True, **options)
    writer.commit(messages)

    paths = _paths(lake, repo, "main", "t/")
    new = {_address(lake, repo, "main", path) for path in paths}
    assert len(paths) == 4 and not new & (committed | {staged})  # only the job's files
    assert "u/outside" in _paths(lake, repo, "main", "u/")
    logged = [r for r in _records(lake) if r.address == staged]
    assert [r.origin for r in logged] == ["deleted_staged"]
    if message:  # the commit holds only the job's files under the path
        head = lake.graveler.get_branch(repo, "main").commit_id
        assert {_address(lake, repo, head, p) for p in _paths(lake, repo, head, "t/")} == new

    lake.graveler.commit(repo, "main", committer="t", message="what is staged")
    assert _paths(lake, repo, "main", "t/") == paths
    _work(clocked_lake, clock, days=2)
    blobs = _blobs(lake, repo)
    assert staged not in blobs  # the unstaged blob went through the deletion log
    assert committed <= blobs and new <= blobs  # committed blobs are garbage collection's


def test_a_tasks_small_batches_become_one_row_group_per_file(
    lake: Lake, repo: Repository, settings: object
) -> None:
    writer = open_writer(
        {"path": "lakefs://repo1/main/t/", "commit_message": "m"},
        SCHEMA,
        overwrite=False,
        settings=encode_settings(settings),  # type: ignore[arg-type]
    )
    batches = [
        pa.record_batch([pa.array([n] * 100, pa.int32()), pa.array(["a"] * 100)], ["id", "part"])
        for n in range(30)
    ]  # as Spark hands them: many small Arrow batches
    writer.commit([writer.write(iter(batches))])

    (path,) = _paths(lake, repo, "main", "t/")
    body = lake.blockstore.get(repo.storage_namespace, _address(lake, repo, "main", path))
    parquet = pq.ParquetFile(io.BytesIO(body))
    assert parquet.metadata.num_rows == 3000 and parquet.metadata.num_row_groups == 1
