"""Writing a dataset into a branch through the `kvlake` source: one commit per job, only the
job's files, all or nothing; what a failed job leaves (nothing staged, every blob logged)."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import WriterCommitMessage
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from kvlake.config import Settings
from kvlake.deletion import keys as deletion_keys
from kvlake.errors import (
    InvalidInputError,
    LockedError,
    ProtectedBranchError,
    RepositoryNotFoundError,
)
from kvlake.graveler import Repository
from kvlake.lake import Lake
from kvlake.pipelines.dataset_writer import open_writer
from kvlake.pipelines.executors import encode_settings
from tests.pipelines.test_datasets import _every_type, _read, _sorted
from tests.pipelines.test_gc import namespace_of
from tests.support.lakes import logged_addresses


@pytest.fixture
def repo(lake: Lake) -> Repository:
    repository = lake.graveler.create_repository("repo1", storage_namespace=namespace_of(lake))
    lake.catalog.upload(repository, "main", "README", io.BytesIO(b"hello"))
    lake.graveler.commit(repository, "main", committer="t", message="first")
    return repository


def _write(frame: DataFrame, uri: str, settings: Settings, mode: str, **options: str) -> None:
    writer = frame.write.format("kvlake").mode(mode)
    writer = writer.option("kvlake.settings", encode_settings(settings))
    for key, value in options.items():
        writer = writer.option(key, value)
    writer.save(uri)


def _paths(lake: Lake, repo: Repository, ref: str, prefix: str) -> list[str]:
    return [
        key.decode() for key, _ in lake.graveler.list(repo, ref) if key.decode().startswith(prefix)
    ]


def test_a_job_commits_its_files_once_and_they_read_back_row_for_row(
    spark: SparkSession, lake: Lake, repo: Repository, settings: Settings
) -> None:
    frame = _every_type(spark).repartition(2)
    lake.catalog.upload(repo, "main", "elsewhere/staged", io.BytesIO(b"someone else's"))
    before = lake.graveler.get_branch(repo, "main").commit_id

    _write(
        frame,
        "lakefs://repo1/main/tables/events/",
        settings,
        "append",
        partition_by="year",
        commit_message="events",
        commit_metadata='{"pipeline": "nightly"}',
    )

    head = lake.graveler.get_branch(repo, "main").commit_id
    commit = lake.graveler.get_commit(repo, head)
    assert commit.parents == (before,) and commit.message == "events"
    assert commit.metadata["pipeline"] == "nightly" and "kvlake.job_id" in commit.metadata
    files = _paths(lake, repo, head, "tables/events/")
    assert {path.split("/")[2] for path in files} == {"year=2025", "year=2026"}
    assert "elsewhere/staged" not in _paths(lake, repo, head, "")  # someone else's: staged
    assert "elsewhere/staged" in _paths(lake, repo, "main", "")
    back = _read(spark, "lakefs://repo1/main/tables/events/", settings, format="parquet")
    assert _sorted(back.select(*frame.columns)) == _sorted(frame)
    assert back.schema == frame.schema  # partition column last, as Spark reads it
    # The committed blobs are garbage collection's: their records will never delete them.
    shared = {key for key, _ in lake.store.scan(deletion_keys.SHARED)}
    addresses = _addresses(lake, repo)
    assert addresses and all(
        deletion_keys.shared_key(repo.instance_uid, a) in shared for a in addresses
    )


def _addresses(lake: Lake, repo: Repository) -> list[str]:
    from kvlake.catalog.records import from_value

    return [
        from_value(key.decode(), value).address
        for key, value in lake.graveler.list(repo, "main")
        if key.startswith(b"tables/")
    ]


def test_overwrite_replaces_the_path_in_one_commit_and_the_modes(
    spark: SparkSession, lake: Lake, repo: Repository, settings: Settings
) -> None:
    uri = "lakefs://repo1/main/t/"
    first = spark.createDataFrame([(1, "a"), (2, "b")], "id int, s string")
    _write(first, uri, settings, "append", commit_message="first")
    old_head = lake.graveler.get_branch(repo, "main").commit_id
    lake.catalog.upload(repo, "main", "t/staged-by-someone", io.BytesIO(b"x"))
    lake.graveler.commit(repo, "main", committer="t", message="someone's file under t/")

    _write(
        spark.createDataFrame([(3, "c")], "id int, s string"),
        uri,
        settings,
        "overwrite",
        commit_message="replace",
    )

    assert _sorted(_read(spark, uri, settings, format="parquet")) == [(3, "c")]
    assert len(_paths(lake, repo, "main", "t/")) == 1
    # The replaced files stay readable in history: garbage collection's, not the log's.
    assert _sorted(_read(spark, f"lakefs://repo1/{old_head}/t/", settings, format="parquet")) == [
        (1, "a"),
        (2, "b"),
    ]


def test_save_modes_error_and_ignore_look_at_the_path_first(
    spark: SparkSession, lake: Lake, repo: Repository, settings: Settings
) -> None:
    rows = spark.createDataFrame([(1,)], "id int")
    head = lake.graveler.get_branch(repo, "main").commit_id

    _write(
        rows,
        "lakefs://repo1/main/",
        settings,
        "append",
        save_mode="ignore",
        commit_message="skipped: README is there",
    )
    with pytest.raises(Exception, match="already holds objects and save_mode is 'error'"):
        _write(
            rows,
            "lakefs://repo1/main/",
            settings,
            "append",
            save_mode="error",
            commit_message="refused",
        )
    assert lake.graveler.get_branch(repo, "main").commit_id == head
    _write(
        rows,
        "lakefs://repo1/main/new/",
        settings,
        "append",
        save_mode="error",
        commit_message="an empty path",
    )
    assert len(_paths(lake, repo, "main", "new/")) == 1


def _unreferenced_blobs(lake: Lake, repo: Repository) -> set[str]:
    referenced = set(_all_addresses(lake, repo))
    return {
        key
        for key in lake.blockstore.list_keys(repo.storage_namespace, "data/")
        if key not in referenced
    }


def _all_addresses(lake: Lake, repo: Repository) -> Iterator[str]:
    from kvlake.catalog.records import from_value

    for ref in ("main",):
        for key, value in lake.graveler.list(repo, ref):
            yield from_value(key.decode(), value).address


def test_a_failed_task_leaves_nothing_visible_and_every_blob_logged(
    spark: SparkSession, lake: Lake, repo: Repository, settings: Settings
) -> None:
    # One of the four tasks fails (local masters do not retry); the others write their files.
    failing = "CASE WHEN id = 3 THEN raise_error('task killed by the test') ELSE id END AS id"
    rows = spark.range(0, 8, numPartitions=4).selectExpr(failing)
    head = lake.graveler.get_branch(repo, "main")

    with pytest.raises(Exception, match="task killed by the test"):
        _write(rows, "lakefs://repo1/main/t/", settings, "append", commit_message="fails")

    assert lake.graveler.get_branch(repo, "main") == head  # nothing committed or staged
    assert _paths(lake, repo, "main", "t/") == []
    assert _unreferenced_blobs(lake, repo) <= logged_addresses(lake)


def test_a_job_failing_at_its_commit_leaves_nothing_and_logs_every_blob(
    lake: Lake, repo: Repository, settings: Settings
) -> None:
    schema = StructType([StructField("id", IntegerType()), StructField("part", StringType())])
    options = {
        "path": "lakefs://repo1/main/t/",
        "partition_by": "part",
        "commit_message": "m",
    }
    writer = open_writer(options, schema, overwrite=False, settings=encode_settings(settings))
    batch = pa.record_batch(
        [pa.array([1, 2, 3], pa.int32()), pa.array(["a", "b", "a"])], names=["id", "part"]
    )
    messages: list[WriterCommitMessage | None] = [
        writer.write(iter([batch])),
        writer.write(iter([batch])),
    ]  # two tasks
    lake.graveler.protection.set_rule(repo, "main", ["commit"])

    with pytest.raises(ProtectedBranchError):
        writer.commit(messages)
    writer.abort(messages)

    assert _paths(lake, repo, "main", "t/") == []
    written = _unreferenced_blobs(lake, repo)
    assert len(written) == 4 and written <= logged_addresses(lake)


def test_bad_writes_are_refused_before_any_task(
    lake: Lake, repo: Repository, settings: Settings
) -> None:
    lake.graveler.create_tag(repo, "v1", "main")
    schema = StructType([StructField("id", IntegerType())])
    json = encode_settings(settings)

    def refused(path: str, **options: str) -> None:
        options = {"path": path, "commit_message": "m", **options}
        open_writer(options, schema, overwrite=False, settings=json)

    with pytest.raises(InvalidInputError, match="'v1' in .* is not a branch"):
        refused("lakefs://repo1/v1/t/")
    with pytest.raises(InvalidInputError, match="is not a lakefs:// URI"):
        refused("s3://repo1/main/t/")
    with pytest.raises(RepositoryNotFoundError):
        refused("lakefs://nope/main/t/")
    with pytest.raises(InvalidInputError, match="format 'csv' cannot be written"):
        refused("lakefs://repo1/main/t/", format="csv")
    with pytest.raises(InvalidInputError, match="partition_by names 'day'"):
        refused("lakefs://repo1/main/t/", partition_by="day")
    with pytest.raises(InvalidInputError, match="with commit_metadata needs option"):
        open_writer(
            {"path": "lakefs://repo1/main/t/", "commit_metadata": '{"a": "b"}'},
            schema,
            overwrite=False,
            settings=json,
        )
    with pytest.raises(InvalidInputError, match="commit_metadata .* is not a JSON object"):
        refused("lakefs://repo1/main/t/", commit_metadata="a=b")
    with pytest.raises(InvalidInputError, match="save_mode 'never' is not one of"):
        refused("lakefs://repo1/main/t/", save_mode="never")
    lake.locks.acquire(repo, "t/x", owner="alice", ttl=60)
    with pytest.raises(LockedError, match="'t/x' under 't/' is write-locked by 'alice'"):
        refused("lakefs://repo1/main/t/")
    lake.graveler.protection.set_rule(repo, "main", ["commit"])
    with pytest.raises(ProtectedBranchError):
        refused("lakefs://repo1/main/u/")
    lake.graveler.protection.set_rule(repo, "main", ["staging_write"])
    with pytest.raises(ProtectedBranchError):  # a job without a commit stages its files
        open_writer({"path": "lakefs://repo1/main/u/"}, schema, overwrite=False, settings=json)
    assert _unreferenced_blobs(lake, repo) == set()
