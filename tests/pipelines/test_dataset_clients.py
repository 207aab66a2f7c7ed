"""What Spark writes into a branch reads back the same through the lake's other doors.

A real server serves the lake the Spark job wrote (the same SQLite file and
blockstore): lakefs-spec with pyarrow reads the dataset's folder over the REST
API, and boto3 with pyarrow reads each file through the S3 gateway.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import boto3
import botocore.config
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from lakefs_spec import LakeFSFileSystem
from pyspark.sql import SparkSession

from kvlake.config import Settings
from kvlake.graveler import Repository
from kvlake.lake import Lake
from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server
from tests.pipelines.test_dataset_writes import _write
from tests.pipelines.test_gc import namespace_of


@pytest.fixture
def server(settings: Settings, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Server]:
    """A server on the lake the Spark jobs write (its KV file and its blockstore)."""
    env: dict[str, str] = {}
    if settings.blockstore_url.startswith("s3://"):
        from tests.support.s3server import server_env

        moto = request.getfixturevalue("s3_server")
        env = server_env(moto.endpoint, "lake", tmp_path / "aws")
    started = Server(Path(settings.data_dir), env=env)
    yield started
    started.stop()
    assert "Traceback" not in started.output(), started.output()


@pytest.fixture
def repo(lake: Lake) -> Repository:
    return lake.graveler.create_repository("repo1", storage_namespace=namespace_of(lake))


def _rows(table: pa.Table) -> list[tuple[object, ...]]:
    columns = ["id", "name", "amount", "ts"]
    return sorted(tuple(row[c] for c in columns) for row in table.select(columns).to_pylist())


def test_spark_written_rows_read_back_the_same_through_lakefs_spec_and_the_gateway(
    spark: SparkSession, lake: Lake, repo: Repository, settings: Settings, server: Server
) -> None:
    frame = spark.createDataFrame(
        [(1, "a", Decimal("1.25"), "2026-01-02 03:04:05"), (2, None, None, None)] * 3,
        "id int, name string, amount decimal(10,2), ts string",
    ).selectExpr("id", "name", "amount", "to_timestamp_ntz(ts) AS ts")
    frame = frame.repartition(2)
    _write(frame, "lakefs://repo1/main/t/", settings, "append", commit_message="rows")
    expected = sorted(tuple(row) for row in frame.collect())

    fs = LakeFSFileSystem(host=server.url, username=ACCESS_KEY_ID, password=SECRET_ACCESS_KEY)
    through_spec = pq.read_table("repo1/main/t/", filesystem=fs)
    s3 = boto3.client(
        "s3",
        endpoint_url=server.url,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_access_key=SECRET_ACCESS_KEY,
        region_name="us-east-1",
        config=botocore.config.Config(s3={"addressing_style": "path"}),
    )
    listed = s3.list_objects_v2(Bucket="repo1", Prefix="main/t/")["Contents"]
    files = [s3.get_object(Bucket="repo1", Key=entry["Key"])["Body"].read() for entry in listed]
    through_gateway = pa.concat_tables(pq.read_table(io.BytesIO(body)) for body in files)

    assert len(files) == 2
    assert _rows(through_spec) == expected
    assert _rows(through_gateway) == expected
