"""The `kvlake` Spark data source: any ref, a prefix, a diff; what the lake's own listing says."""

from __future__ import annotations

import io

import pytest
from pyspark.sql import SparkSession

from kvlake.catalog.records import ObjectStat
from kvlake.config import Settings
from kvlake.errors import InvalidInputError
from kvlake.graveler import Repository
from kvlake.lake import Lake
from kvlake.operations import parse_ref_path
from kvlake.pipelines import read_lake
from tests.pipelines.test_gc import namespace_of


def _upload(lake: Lake, repo: Repository, branch: str, path: str, body: bytes) -> None:
    lake.catalog.upload(repo, branch, path, io.BytesIO(body), metadata={"k": path[-1]})


def _repository(lake: Lake, settings: Settings) -> Repository:
    return lake.graveler.create_repository("repo1", storage_namespace=namespace_of(lake))


def test_a_branch_reads_as_its_objects_uncommitted_ones_included(
    spark: SparkSession, lake: Lake, settings: Settings
) -> None:
    repo = _repository(lake, settings)
    for n in range(30):
        _upload(lake, repo, "main", f"tables/t/{n:03d}", b"x" * n)
    lake.graveler.commit(repo, "main", committer="t", message="30 objects")
    _upload(lake, repo, "main", "tables/t/new", b"staged")
    lake.graveler.delete(repo, "main", b"tables/t/000")

    frame = read_lake(spark, "lakefs://repo1/main/tables/", settings=settings)
    rows = {row["path"]: row for row in frame.collect()}

    page = lake.catalog.list_objects(repo, "main").results
    expected = {stat.path: stat for stat in page if isinstance(stat, ObjectStat)}
    assert set(rows) == set(expected) and "tables/t/new" in rows and "tables/t/000" not in rows
    row = rows["tables/t/007"]
    assert row["size"] == 7 and row["metadata"] == {"k": "7"}
    assert row["physical_address"] == f"{repo.storage_namespace}/{expected['tables/t/007'].address}"


def test_a_commit_id_and_a_prefix(spark: SparkSession, lake: Lake, settings: Settings) -> None:
    repo = _repository(lake, settings)
    _upload(lake, repo, "main", "a/1", b"1")
    _upload(lake, repo, "main", "b/1", b"1")
    commit_id = lake.graveler.commit(repo, "main", committer="t", message="two")
    _upload(lake, repo, "main", "a/2", b"2")

    frame = read_lake(spark, f"lakefs://repo1/{commit_id}/a/", settings=settings)

    assert [row["path"] for row in frame.collect()] == ["a/1"]


def test_diff_against_gives_each_change_with_both_addresses(
    spark: SparkSession, lake: Lake, settings: Settings
) -> None:
    repo = _repository(lake, settings)
    _upload(lake, repo, "main", "keep", b"k")
    _upload(lake, repo, "main", "change", b"old")
    _upload(lake, repo, "main", "remove", b"r")
    lake.graveler.commit(repo, "main", committer="t", message="base")
    lake.graveler.create_tag(repo, "v1", "main")
    _upload(lake, repo, "main", "change", b"new!")
    _upload(lake, repo, "main", "add", b"a")
    lake.graveler.delete(repo, "main", b"remove")

    frame = read_lake(spark, "lakefs://repo1/main", settings=settings, diff_against="v1")
    rows = {row["path"]: row for row in frame.collect()}

    assert {path: row["type"] for path, row in rows.items()} == {
        "add": "added",
        "change": "changed",
        "remove": "removed",
    }
    changed = rows["change"]
    assert changed["old_physical_address"] != changed["new_physical_address"]
    assert changed["size"] == 4 and rows["add"]["old_physical_address"] is None


def test_a_bad_uri_says_what_to_write() -> None:
    with pytest.raises(InvalidInputError, match="is not a lakefs:// URI; write it as lakefs://"):
        parse_ref_path("s3://bucket/key")
    with pytest.raises(InvalidInputError, match="needs a repository and a branch"):
        parse_ref_path("lakefs://repo1")
    assert parse_ref_path("lakefs://repo1/main~2/a/").branch == "main~2"
