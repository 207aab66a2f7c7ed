"""Reading a dataset's rows through the `kvlake` source: Parquet as Spark writes it, CSV, JSON;
partition folders, pruning, projection, one snapshot per read, and bad input.

The Parquet files are Spark's own (`df.write.parquet` to a temporary folder),
uploaded into the lake; each read is compared with `spark.read.parquet` of the
same folder, which is what the kvlake source promises to return.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import EqualTo, GreaterThan, In, InputPartition, Not

from kvlake.config import Settings
from kvlake.errors import (
    BlobReplacedError,
    InvalidInputError,
    RefNotFoundError,
    RepositoryNotFoundError,
)
from kvlake.graveler import Repository
from kvlake.lake import Lake
from kvlake.pipelines.dataset_reader import DatasetReader
from kvlake.pipelines.datasets import DataFile, group_files, plan_read, split_bytes
from kvlake.pipelines.executors import encode_settings
from tests.pipelines.test_gc import namespace_of

ROWS = "id int, name string, amount decimal(12,2), at timestamp, local timestamp_ntz,"
ROWS += " day date, raw binary, tags array<string>, attrs map<string,int>,"
ROWS += " point struct<x: double, y: double>, year int"


def _every_type(spark: SparkSession) -> DataFrame:
    utc = dt.UTC
    rows = [
        (
            n,
            f"name{n}" if n % 3 else None,
            decimal.Decimal(f"{n}.25"),
            dt.datetime(2026, 1, n + 1, 12, tzinfo=utc),
            dt.datetime(2026, 2, n + 1, 8, 30),
            dt.date(2026, 3, n + 1),
            bytes([n, 0, 255]),
            [f"t{n}", None],
            {"k": n},
            (n / 2, -n / 2),
            2025 + n % 2,
        )
        for n in range(6)
    ]
    return spark.createDataFrame(rows, ROWS)


def _upload_folder(lake: Lake, repo: Repository, folder: Path, prefix: str) -> int:
    """Every file Spark wrote under `folder` (its _SUCCESS and .crc files too) into the lake."""
    count = 0
    for file in sorted(folder.rglob("*")):
        if file.is_file():
            path = f"{prefix}/{file.relative_to(folder).as_posix()}"
            lake.catalog.upload(repo, "main", path, io.BytesIO(file.read_bytes()))
            count += file.suffix == ".parquet"
    return count


def _read(spark: SparkSession, uri: str, settings: Settings, **options: str) -> DataFrame:
    reader = spark.read.format("kvlake").option("kvlake.settings", encode_settings(settings))
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(uri)


def _sorted(frame: DataFrame) -> list[tuple[object, ...]]:
    return sorted((tuple(row) for row in frame.collect()), key=repr)


@pytest.fixture
def repo(lake: Lake) -> Repository:
    return lake.graveler.create_repository("repo1", storage_namespace=namespace_of(lake))


def test_spark_parquet_of_every_type_reads_back_as_spark_reads_it(
    spark: SparkSession, lake: Lake, repo: Repository, settings: Settings, tmp_path: Path
) -> None:
    written = tmp_path / "events"
    _every_type(spark).repartition(2).write.partitionBy("year").parquet(str(written))
    _upload_folder(lake, repo, written, "tables/events")

    frame = _read(spark, "lakefs://repo1/main/tables/events", settings, format="parquet")
    expected = spark.read.parquet(str(written))

    assert frame.schema == expected.schema
    assert _sorted(frame) == _sorted(expected)
    assert _sorted(frame.filter("year = 2026").select("id")) == [(1,), (3,), (5,)]


def test_a_partition_filter_opens_only_the_matching_files(
    lake: Lake, repo: Repository, settings: Settings
) -> None:
    for year in (2024, 2025, 2026):
        for month in (1, 2):
            body = f"n\n{year}{month}\n".encode()
            path = f"t/year={year}/month={month}/part.csv"
            lake.catalog.upload(repo, "main", path, io.BytesIO(body))
    plan = plan_read(lake, "lakefs://repo1/main/t/", {"format": "csv", "header": "true"})
    reader = DatasetReader(plan, plan.spark_schema(), {"header": "true"}, encode_settings(settings))

    kept = list(reader.pushFilters([GreaterThan(("year",), 2024), Not(EqualTo(("month",), 2))]))
    opened = [f.path for part in reader.partitions() for f in _files(part)]

    assert len(kept) == 2  # Spark still applies them to the rows
    assert sorted(opened) == ["t/year=2025/month=1/part.csv", "t/year=2026/month=1/part.csv"]
    assert plan.partitions == (("year", "int"), ("month", "int"))
    reader.pushFilters([In(("year",), ("2025",))])  # a string literal is not compared with 2025
    assert len([f for part in reader.partitions() for f in _files(part)]) == 6


def _files(partition: InputPartition) -> list[DataFile]:
    return msgspec.msgpack.decode(partition.value, type=list[DataFile])


def test_a_read_sees_the_snapshot_it_planned_whatever_the_branch_does(
    lake: Lake, repo: Repository, settings: Settings
) -> None:
    lake.catalog.upload(repo, "main", "t/a.json", io.BytesIO(b'{"v": 1}\n'))
    plan = plan_read(lake, "lakefs://repo1/main/t", {"format": "json"})
    lake.catalog.upload(repo, "main", "t/b.json", io.BytesIO(b'{"v": 2}\n'))
    lake.graveler.commit(repo, "main", committer="t", message="b")
    reader = DatasetReader(plan, plan.spark_schema(), {}, encode_settings(settings))

    batches = [batch for part in reader.partitions() for batch in reader.read(part)]

    assert [row["v"] for batch in batches for row in batch.to_pylist()] == [1]


def _parquet(values: list[int]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table({"v": values}), sink)
    return sink.getvalue()


def test_a_linked_blob_replaced_after_the_link_fails_its_task(
    lake: Lake, repo: Repository, settings: Settings, blockstore_kind: str
) -> None:
    # A presigned PUT URL outlives the link: the client may write the blob again. Tasks
    # read with the ETag recorded at the link, so S3 refuses the other bytes.
    links = lake.catalog.direct_uploads(b"k" * 32)
    address, _ = links.issue(repo, "main", "t/a.parquet")
    linked = _parquet([1, 2, 3])
    namespace = repo.storage_namespace
    lake.blockstore.put(namespace, address, io.BytesIO(linked))
    links.link(
        repo,
        "main",
        "t/a.parquet",
        address,
        size=len(linked),
        checksum="c",
        content_type="application/octet-stream",
        metadata={},
    )
    plan = plan_read(lake, "lakefs://repo1/main/t/", {"format": "parquet"})
    assert plan.files[0].etag == lake.blockstore.head(namespace, address).etag
    lake.blockstore.put(namespace, address, io.BytesIO(_parquet([7, 8, 9])))
    reader = DatasetReader(plan, plan.spark_schema(), {}, encode_settings(settings))
    parts = reader.partitions()

    if blockstore_kind == "s3":
        assert plan.files[0].etag  # S3 reports one
        refused = r"t/a.parquet of lakefs://repo1/main/t/ cannot be read.*replaced after it"
        with pytest.raises(BlobReplacedError, match=refused):
            list(reader.read(parts[0]))
    else:
        # A local folder hands out no presigned URL and records no ETag: nothing to compare.
        assert plan.files[0].etag == ""
        rows = [row["v"] for batch in reader.read(parts[0]) for row in batch.to_pylist()]
        assert rows == [7, 8, 9]


def test_csv_and_json_with_spark_options_and_a_projection(
    spark: SparkSession, lake: Lake, repo: Repository, settings: Settings
) -> None:
    lake.catalog.upload(repo, "main", "c/1.csv", io.BytesIO(b"a;b\n1;x\n2;y\n"))
    lake.catalog.upload(repo, "main", "j/1.json", io.BytesIO(b'{"a": 1, "b": "x"}\n{"a": 2}\n'))
    lake.catalog.upload(repo, "main", "j/_SUCCESS", io.BytesIO(b"not json"))

    csv = _read(spark, "lakefs://repo1/main/c/", settings, format="csv", header="true", sep=";")
    typed = _read(
        spark,
        "lakefs://repo1/main/c/",
        settings,
        format="csv",
        header="true",
        sep=";",
        inferSchema="true",
    )
    json_b = _read(spark, "lakefs://repo1/main/j/", settings, format="json", columns="b")

    assert _sorted(csv) == [("1", "x"), ("2", "y")]
    assert typed.schema.simpleString() == "struct<a:bigint,b:string>"
    assert _sorted(typed.filter("a > 1")) == [(2, "y")]
    assert json_b.columns == ["b"] and _sorted(json_b) == [("x",), (None,)]


def test_differing_schemas_need_merge_schema(
    spark: SparkSession, lake: Lake, repo: Repository, settings: Settings, tmp_path: Path
) -> None:
    spark.createDataFrame([(1, "a")], "id int, s string").write.parquet(str(tmp_path / "1"))
    spark.createDataFrame([(2, 2.5)], "id int, f double").write.parquet(str(tmp_path / "2"))
    _upload_folder(lake, repo, tmp_path / "1", "t/p1")
    _upload_folder(lake, repo, tmp_path / "2", "t/p2")
    uri = "lakefs://repo1/main/t/"

    merged = _read(spark, uri, settings, format="parquet", mergeSchema="true")
    assert merged.columns == ["id", "s", "f"]
    assert _sorted(merged) == [(1, "a", None), (2, None, 2.5)]
    with pytest.raises(Exception, match="has no column 's'.*mergeSchema"):
        _read(spark, uri, settings, format="parquet").collect()


def test_merge_schema_merges_struct_fields_at_any_depth(
    spark: SparkSession, lake: Lake, repo: Repository, settings: Settings, tmp_path: Path
) -> None:
    first = (
        "id int, st struct<a:int,b:string>, xs array<struct<x:int>>, m map<string,struct<p:int>>"
    )
    second = (
        "id int, st struct<a:int,c:double>, xs array<struct<x:int,y:string>>,"
        " m map<string,struct<q:string>>"
    )
    rows_1 = [(1, (1, "b"), [(10,)], {"k": (5,)})]
    rows_2 = [(2, (2, 2.5), [(20, "y")], {"k": ("q",)})]
    spark.createDataFrame(rows_1, first).write.parquet(str(tmp_path / "1"))
    spark.createDataFrame(rows_2, second).write.parquet(str(tmp_path / "2"))
    spark.createDataFrame([(3, (3,))], "id int, st struct<a:string>").write.parquet(
        str(tmp_path / "3")
    )
    _upload_folder(lake, repo, tmp_path / "1", "t/p1")
    _upload_folder(lake, repo, tmp_path / "2", "t/p2")
    _upload_folder(lake, repo, tmp_path / "3", "bad/p3")
    _upload_folder(lake, repo, tmp_path / "1", "bad/p1")

    merged = _read(spark, "lakefs://repo1/main/t/", settings, format="parquet", mergeSchema="true")

    assert merged.schema.simpleString() == (
        "struct<id:int,st:struct<a:int,b:string,c:double>,xs:array<struct<x:int,y:string>>,"
        "m:map<string,struct<p:int,q:string>>>"
    )
    assert _sorted(merged) == [
        (1, (1, "b", None), [(10, None)], {"k": (5, None)}),
        (2, (2, None, 2.5), [(20, "y")], {"k": (None, "q")}),
    ]
    with pytest.raises(InvalidInputError, match="column 'st.a' .* is int in one file and string"):
        plan_read(lake, "lakefs://repo1/main/bad/", {"format": "parquet", "mergeschema": "true"})


def test_bad_input_is_refused_on_the_driver(lake: Lake, repo: Repository) -> None:
    lake.catalog.upload(repo, "main", "t/a.parquet", io.BytesIO(b"PAR1 not really"))
    csv = {"format": "csv"}
    with pytest.raises(InvalidInputError, match="format 'avro' is not one.*csv, json, parquet"):
        plan_read(lake, "lakefs://repo1/main/t/", {"format": "avro"})
    with pytest.raises(InvalidInputError, match="is not a lakefs:// URI"):
        plan_read(lake, "s3://repo1/main/t/", csv)
    with pytest.raises(RepositoryNotFoundError):
        plan_read(lake, "lakefs://nope/main/t/", csv)
    with pytest.raises(RefNotFoundError):
        plan_read(lake, "lakefs://repo1/nope/t/", csv)
    with pytest.raises(InvalidInputError, match="no csv files under"):
        plan_read(lake, "lakefs://repo1/main/empty/", csv)
    with pytest.raises(InvalidInputError, match="t/a.parquet: not a Parquet file"):
        plan_read(lake, "lakefs://repo1/main/t/", {"format": "parquet"})


def test_files_are_grouped_into_tasks_by_size() -> None:
    mb = 1 << 20
    files = [
        DataFile(f"f{n}", "local://x", f"k{n}", size, ())
        for n, size in enumerate([100 * mb, 60 * mb, 30 * mb, 1, 1, 1])
    ]

    groups = group_files(files, max_bytes=128 * mb)

    assert [[f.path for f in group] for group in groups] == [
        ["f0"],
        ["f1", "f2", "f3", "f4", "f5"],
    ]
    assert len(group_files(files[3:], max_bytes=5 * mb)) == 3  # each tiny file costs 4 MiB to open


def test_a_small_dataset_is_spread_over_the_cores_as_spark_spreads_it() -> None:
    mb = 1 << 20
    files = [DataFile(f"f{n}", "local://x", f"k{n}", mb, ()) for n in range(20)]

    size = split_bytes(files, max_bytes=128 * mb, parallelism=2)

    assert size == 50 * mb  # 20 files of 1 MiB, each costing 4 MiB more, over 2 cores
    assert [len(group) for group in group_files(files, max_bytes=size)] == [10, 10]
    assert split_bytes(files, max_bytes=128 * mb, parallelism=1) == 100 * mb
    assert split_bytes(files[:1], max_bytes=128 * mb, parallelism=64) == 4 * mb  # the floor
    assert split_bytes(files * 20, max_bytes=128 * mb, parallelism=2) == 128 * mb  # the cap
