"""One Spark session for the whole test process (starting one costs seconds), and lakes on disk.

Spark tasks run in other processes, so a lake they read must live in files or
servers: an SQLite KV store under a temporary data dir, and a local blockstore
there, then (`blockstore_kind`) the bucket `lake` of the session's moto server.
Tasks reach moto through the endpoint in the blockstore URL and the test
credentials the session hands its executors (`spark.executorEnv.*`). Spark tests
are marked `spark`; CI installs PySpark and runs them (with CI=true a missing
PySpark fails the run instead of skipping it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlake.blockstore import open_blockstore
from kvlake.config import Settings, SparkSettings
from kvlake.kv import open_store
from kvlake.lake import Lake
from tests.support import FakeClock
from tests.support.backends import BLOCKSTORES
from tests.support.lakes import lake_on
from tests.support.s3server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, lake_bucket_env

if os.environ.get("CI", "").lower() == "true":
    import pyspark  # noqa: F401 - under CI the Spark tests must run, never skip
else:
    pytest.importorskip("pyspark", reason="PySpark is not installed: make install")

from pyspark.sql import SparkSession  # noqa: E402

from kvlake.pipelines import open_spark  # noqa: E402

TEST_CONF = ";".join(
    [
        "spark.ui.enabled=false",
        # The S3 lakes' credentials (moto accepts any): tasks open the blockstore themselves,
        # and Python workers keep the environment Spark started with, not the test's.
        f"spark.executorEnv.AWS_ACCESS_KEY_ID={ACCESS_KEY_ID}",
        f"spark.executorEnv.AWS_SECRET_ACCESS_KEY={SECRET_ACCESS_KEY}",
        "spark.executorEnv.AWS_REGION=us-east-1",
        "spark.executorEnv.AWS_EC2_METADATA_DISABLED=true",
        "spark.sql.shuffle.partitions=4",
        # Faster JVM start for short tests (halves speed on real joins: tests only).
        "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    ]
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/pipelines/" in str(item.fspath):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = open_spark(SparkSettings(master="local[2]", conf=TEST_CONF), app_name="kvlake-tests")
    yield session
    session.stop()


@pytest.fixture(params=sorted(BLOCKSTORES))
def blockstore_kind(request: pytest.FixtureRequest) -> str:
    """The lake's blockstore: a local folder, then S3; a test that stores no blob (or is
    about one kind) parametrizes this name itself."""
    return str(request.param)


@pytest.fixture
def settings(tmp_path: Path, blockstore_kind: str, request: pytest.FixtureRequest) -> Settings:
    if blockstore_kind == "local":
        return Settings(data_dir=str(tmp_path / "lake"))
    s3 = lake_bucket_env(request, tmp_path / "aws")
    return Settings(data_dir=str(tmp_path / "lake"), blockstore_url=s3["KVLAKE_BLOCKSTORE_URL"])


@pytest.fixture
def lake(settings: Settings) -> Iterator[Lake]:
    with Lake.open(settings) as opened:
        yield opened


@pytest.fixture
def clocked_lake(settings: Settings, clock: FakeClock) -> Iterator[Lake]:
    """A lake whose uploads and commits happen when the test's clock says (tasks read it)."""
    blocks, store = open_blockstore(settings.blockstore_url), open_store(settings.kv_url)
    with lake_on(blocks, store, settings=settings, clock=clock) as opened:
        yield opened
