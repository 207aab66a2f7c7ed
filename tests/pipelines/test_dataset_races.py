"""Jobs meeting on one branch: a read planned before an overwrite, jobs writing side by side.

Interleavings are placed, not hoped for: a DataFrame's read is planned (the ref
resolved, the files listed) when it is loaded, and its tasks read when it is
collected, so an overwrite run between the two lands exactly between listing
and reading; concurrent jobs are driven step by step through their writers.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from kvlake.config import Settings
from kvlake.graveler import Repository
from kvlake.lake import Lake
from kvlake.pipelines.dataset_writer import open_writer
from kvlake.pipelines.executors import encode_settings
from tests.pipelines.test_dataset_writes import _paths, _write
from tests.pipelines.test_datasets import _read, _sorted
from tests.pipelines.test_gc import namespace_of


@pytest.fixture
def repo(lake: Lake) -> Repository:
    return lake.graveler.create_repository("repo1", storage_namespace=namespace_of(lake))


@pytest.mark.parametrize("message", ["replace", ""], ids=["committed", "staged"])
def test_a_read_planned_before_an_overwrite_returns_the_old_rows_only(
    spark: SparkSession, lake: Lake, repo: Repository, settings: Settings, message: str
) -> None:
    uri = "lakefs://repo1/main/t/"
    old = spark.createDataFrame([(i, "old") for i in range(6)], "id int, v string")
    new = spark.createDataFrame([(i, "new") for i in range(4)], "id int, v string")
    _write(old.repartition(3), uri, settings, "append", commit_message="old")
    reading = _read(spark, uri, settings, format="parquet")  # listed now, read at collect

    options = {"commit_message": message} if message else {}
    _write(new.repartition(2), uri, settings, "overwrite", **options)

    assert _sorted(reading) == _sorted(old)  # the snapshot it listed, whole
    assert _sorted(_read(spark, uri, settings, format="parquet")) == _sorted(new)


def test_jobs_writing_side_by_side_each_publish_only_their_own_files(
    lake: Lake, repo: Repository, settings: Settings
) -> None:
    schema = StructType([StructField("id", IntegerType()), StructField("v", StringType())])
    rows = pa.record_batch([pa.array([1, 2], pa.int32()), pa.array(["x", "y"])], ["id", "v"])

    def job(path: str, **options: str) -> tuple[object, object]:
        writer = open_writer(
            {"path": f"lakefs://repo1/main/{path}/", **options},
            schema,
            overwrite=False,
            settings=encode_settings(settings),
        )
        return writer, writer.write(iter([rows]))

    # Three jobs planned and written at once; they finish in another order than they began.
    (a, a_files), (b, b_files), (c, c_files) = (
        job("a", commit_message="a"),
        job("b", commit_message="b"),
        job("c"),  # staged, no commit
    )
    c.commit([c_files])  # type: ignore[attr-defined]
    base = lake.graveler.get_branch(repo, "main").commit_id
    b.commit([b_files])  # type: ignore[attr-defined]
    after_b = lake.graveler.get_branch(repo, "main").commit_id
    a.commit([a_files])  # type: ignore[attr-defined]
    after_a = lake.graveler.get_branch(repo, "main").commit_id

    def added(commit_id: str, parent: str) -> set[str]:
        paths = set(_paths(lake, repo, commit_id, ""))
        return {path.split("/")[0] for path in paths - set(_paths(lake, repo, parent, ""))}

    assert lake.graveler.get_commit(repo, after_a).parents == (after_b,)
    assert added(after_b, base) == {"b"} and added(after_a, after_b) == {"a"}
    assert {p.split("/")[0] for p in _paths(lake, repo, "main", "")} == {"a", "b", "c"}
    assert len(_paths(lake, repo, "main", "c/")) == 1  # still staged, on top
