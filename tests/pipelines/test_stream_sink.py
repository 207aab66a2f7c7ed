"""The `kvlake` source as a streaming sink: each micro-batch one commit, replays skipped."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from pyspark.sql.datasource import WriterCommitMessage
from pyspark.sql.types import IntegerType, StructField, StructType

from kvlake.config import Settings
from kvlake.errors import InvalidInputError
from kvlake.graveler import Repository
from kvlake.lake import Lake
from kvlake.pipelines.executors import encode_settings
from kvlake.pipelines.stream_writer import open_stream_writer
from tests.pipelines.test_datasets import _read, _sorted
from tests.pipelines.test_gc import namespace_of


@pytest.fixture
def repo(lake: Lake) -> Repository:
    repository = lake.graveler.create_repository("repo1", storage_namespace=namespace_of(lake))
    lake.catalog.upload(repository, "main", "README", io.BytesIO(b"hello"))
    lake.graveler.commit(repository, "main", committer="t", message="first")
    return repository


def test_a_replayed_micro_batch_is_recognised_from_history_and_committed_once(
    lake: Lake, repo: Repository, settings: Settings
) -> None:
    schema = StructType([StructField("id", IntegerType())])
    options = {"path": "lakefs://repo1/main/s/", "commit_message": "m", "stream_id": "q1"}
    writer = open_stream_writer(
        options, schema, overwrite=False, settings=encode_settings(settings)
    )

    def batch(*ids: int) -> list[WriterCommitMessage | None]:
        return [writer.write(iter([pa.record_batch([pa.array(ids, pa.int32())], ["id"])]))]

    writer.commit(batch(1, 2), 0)
    lake.catalog.upload(repo, "main", "other", io.BytesIO(b"someone else's commit"))
    lake.graveler.commit(repo, "main", committer="t", message="between the batches")
    writer.commit(batch(3), 1)
    head = lake.graveler.get_branch(repo, "main").commit_id
    writer.commit(batch(3), 1)  # the query was killed before it recorded batch 1: replayed
    writer.commit(batch(1, 2), 0)
    assert lake.graveler.get_branch(repo, "main").commit_id == head
    writer.commit(batch(4), 2)

    head = lake.graveler.get_branch(repo, "main").commit_id
    commits = list(lake.graveler.history.walk(repo, head, first_parent=True))
    batches = [c.commit.metadata.get("kvlake.batch_id") for c in commits]
    assert batches == ["2", "1", None, "0", None, None]  # then "first" and the initial commit
    other = open_stream_writer(
        {**options, "stream_id": "q2"}, schema, overwrite=False, settings=encode_settings(settings)
    )
    other.commit(batch(5), 0)  # another stream's batch 0 is its own
    newest = lake.graveler.get_commit(repo, lake.graveler.get_branch(repo, "main").commit_id)
    assert newest.metadata["kvlake.stream_id"] == "q2"
    with pytest.raises(InvalidInputError, match="needs option\\('stream_id'"):
        open_stream_writer(
            {"path": "lakefs://repo1/main/s/", "commit_message": "m"},
            schema,
            overwrite=False,
            settings=encode_settings(settings),
        )


# Local only: Spark's streaming machinery (checkpoint, replay) is the same on either
# blockstore; the sink's blob writes and commits on S3 are the test above's and
# test_dataset_writes.py's.
@pytest.mark.parametrize("blockstore_kind", ["local"])
def test_a_query_killed_after_its_commit_and_restarted_adds_no_duplicate_and_misses_nothing(
    spark: SparkSession, lake: Lake, repo: Repository, settings: Settings, tmp_path: Path
) -> None:
    source, checkpoint = tmp_path / "in", tmp_path / "checkpoint"
    source.mkdir()
    uri = "lakefs://repo1/main/s/"

    def run() -> None:
        stream = spark.readStream.schema("id int").json(str(source))
        query = (
            stream.writeStream.format("kvlake")
            .option("kvlake.settings", encode_settings(settings))
            .option("commit_message", "stream")
            .option("stream_id", "events")
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start(uri)
        )
        query.awaitTermination()
        assert query.exception() is None

    (source / "1.json").write_text('{"id": 1}\n{"id": 2}\n')
    run()
    # Killed after the sink's commit, before Spark recorded the batch: Spark replays it.
    shutil.rmtree(checkpoint / "commits")
    (source / "2.json").write_text('{"id": 3}\n')
    run()

    assert _sorted(_read(spark, uri, settings, format="parquet")) == [(1,), (2,), (3,)]
