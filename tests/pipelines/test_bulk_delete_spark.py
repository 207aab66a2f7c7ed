"""The spark engine of bulk deletes gives what the local engine gives, on the same data.

The lake lives in files and servers (SQLite, and a local folder or moto's S3) because
Spark tasks open it themselves from the settings.
"""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from kvlake.blockstore import open_blockstore
from kvlake.config import DeletionSettings, OperationsSettings, Settings
from kvlake.errors import InvalidInputError
from kvlake.graveler import TOKEN_DROP_DELAY, Repository
from kvlake.kv import open_store
from kvlake.lake import Lake
from kvlake.operations import (
    BulkDeleteDriver,
    BulkDeleteOptions,
    Filters,
    Operation,
    open_engine,
    parse_branch_path,
    select_engine,
)
from kvlake.pipelines.bulk_delete import SparkBatches, spark_engine
from tests.operations.helpers import (
    DropTheToken,
    committing_mid_listing,
    fill,
    listed,
    populate,
)
from tests.support import FakeClock

PATHS = [f"a/{i:02d}.csv" for i in range(10)] + ["a/x.tmp", "b/1"]


def _run_on(
    engine: str, data_dir: Path, blockstore_url: str, *, many: int = 0
) -> tuple[object, ...]:
    """Run the same bulk delete with `engine` on a lake in `data_dir` over `blockstore_url`
    ("": the data dir's folder); `many` committed objects more under a/ (and no filter)
    make whole committed ranges, which the engine hides range by range."""
    settings = Settings(
        data_dir=str(data_dir),
        blockstore_url=blockstore_url,
        operations=OperationsSettings(batch_size=3, lease_time=60.0),
        deletion=DeletionSettings(send_delay=0.0),
    )
    with Lake.open(settings) as lake:
        root = "s3://lake" if lake.blockstore.scheme == "s3" else "local:/"
        repo = lake.graveler.create_repository(
            "repo1", storage_namespace=f"{root}/{data_dir.name}/repo1"
        )
        for path in PATHS:
            lake.catalog.upload(repo, "main", path, io.BytesIO(path.encode()))
        fill(lake, repo, [f"a/m{i:05d}.csv" for i in range(many)], commit=False)
        lake.graveler.commit(repo, "main", committer="t", message="data")
        lake.catalog.upload(repo, "main", "a/staged.csv", io.BytesIO(b"staged"))
        lake.locks.acquire(repo, "a/04.csv", owner="bob", ttl=600)
        options = BulkDeleteOptions(
            filters=Filters() if many else Filters(glob="*.csv"),
            commit=True,
            commit_message="m",
            engine=engine,
        )
        operation = lake.bulk_deletes.create(
            parse_branch_path("lakefs://repo1/main/a/"), options, created_by="alice"
        )
        context = lake.engine_context(owner="s")
        final = open_engine(engine, context).run(operation.id, threading.Event())
        failures = lake.ledger.failures(operation.id).failures
        left = [key.decode() for key, _ in lake.graveler.list(repo, "main")]
        message = lake.graveler.get_commit(repo, final.commit_id).message
        return (
            final.status,
            final.counters,
            final.done == final.batches,
            left,
            [(path, failure.outcome) for path, failure in failures],
            message,
        )


def test_the_spark_engine_agrees_with_the_local_engine(
    spark: SparkSession, tmp_path: Path, settings: Settings
) -> None:
    local = _run_on("local", tmp_path / "local", settings.blockstore_url)
    on_spark = _run_on("spark", tmp_path / "spark", settings.blockstore_url)

    assert local[0] == "completed_with_errors" and local[3] == ["a/04.csv", "a/x.tmp", "b/1"]
    assert on_spark == local


def test_the_engines_agree_on_whole_committed_ranges(
    spark: SparkSession, tmp_path: Path, settings: Settings
) -> None:
    local = _run_on("local", tmp_path / "local", settings.blockstore_url, many=12_000)
    on_spark = _run_on("spark", tmp_path / "spark", settings.blockstore_url, many=12_000)

    assert local[0] == "completed_with_errors" and local[3] == ["a/04.csv", "b/1"]
    assert on_spark == local


def test_auto_picks_spark_above_the_threshold_when_it_is_installed() -> None:
    assert select_engine("auto", threshold=100, estimate=1000) == "spark"
    assert select_engine("auto", threshold=100, estimate=10) == "local"
    with pytest.raises(InvalidInputError, match="unknown"):
        select_engine("warp", threshold=1)


def test_the_spark_engine_lists_again_when_the_token_is_dropped_under_its_enumeration(
    spark: SparkSession, settings: Settings
) -> None:
    """Issue 22 #5 on the spark engine (its driver enumerates as the local engine does):
    a commit and the token drop after it, with the real delay crossed on a fake clock,
    mid-listing; nothing is left and nothing is reported short."""
    settings = Settings(
        data_dir=settings.data_dir,
        blockstore_url=settings.blockstore_url,
        operations=OperationsSettings(batch_size=1000, lease_time=60.0),
        deletion=DeletionSettings(send_delay=0.0),
    )
    clock = FakeClock()
    store, blocks = open_store(settings.kv_url), open_blockstore(settings.blockstore_url)
    with Lake(settings, store, blocks, clock=clock, token_drop_delay=TOKEN_DROP_DELAY) as lake:
        repo = populate(lake, [], commit=False)
        staged = [f"s/{i:05d}" for i in range(3_000)]
        fill(lake, repo, staged, commit=False)
        operation = lake.bulk_deletes.create(
            parse_branch_path("lakefs://repo1/main/s/"),
            BulkDeleteOptions(engine="spark"),
            created_by="alice",
        )
        drop = DropTheToken(lake, clock)
        engine = committing_mid_listing(spark_engine, drop)
        final = engine(lake.engine_context(owner="s")).run(operation.id, threading.Event())
        assert drop.dropped
        assert final.status == "completed", final
        assert (final.counters.enumerated, final.counters.deleted) == (3_000, 3_000)
        assert listed(lake, repo, "s/") == []


def test_the_spark_engine_keeps_what_was_restored_or_written_after_enumeration(
    spark: SparkSession, settings: Settings
) -> None:
    """Issue 22 #6 on the spark engine: its range batches, like the local engine's and
    like path batches, delete what existed when the prefix was listed."""
    settings = Settings(
        data_dir=settings.data_dir,
        blockstore_url=settings.blockstore_url,
        operations=OperationsSettings(batch_size=1000, lease_time=60.0),
        deletion=DeletionSettings(send_delay=0.0),
    )
    with Lake.open(settings) as lake:
        repo = populate(lake, [], commit=False)
        fill(lake, repo, [f"a/{i:05d}" for i in range(12_000)])
        for deleted in (b"a/06009", b"a/06019"):  # deleted when the operation starts
            lake.graveler.delete(repo, "main", deleted)
        copied = lake.graveler.get(repo, "main", b"a/06000")
        operation = lake.bulk_deletes.create(
            parse_branch_path("lakefs://repo1/main/a/"),
            BulkDeleteOptions(engine="spark"),
            created_by="alice",
        )

        class RestoringAfterEnumeration(SparkBatches):
            def process(self, operation: Operation, repository: Repository, numbers: range) -> None:
                if numbers.start == 0:
                    lake.graveler.resets.reset_key(repo, "main", b"a/06009")
                    lake.graveler.set(repo, "main", b"a/06019", copied)  # written again
                    lake.graveler.set(repo, "main", b"a/09000x", copied)
                super().process(operation, repository, numbers)

        context = lake.engine_context(owner="s")
        engine = BulkDeleteDriver(context, RestoringAfterEnumeration(context))
        final = engine.run(operation.id, threading.Event())
        assert final.status == "completed", final
        assert final.counters.deleted == final.counters.enumerated == 11_998
        assert listed(lake, repo, "a/") == ["a/06009", "a/06019", "a/09000x"]
