"""Imports on Spark: the same commit as the local import of the same sources (local folders
and S3 on moto), canceled without a commit, empty sources, and `auto` choosing by size."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec
import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from kvlake import ids
from kvlake.blockstore import open_blockstore
from kvlake.catalog import Importer, ImportSource, ImportStatus, split_sources
from kvlake.catalog.imports import CANCELED, SPARK_PARTS
from kvlake.config import ImportSettings, Settings
from kvlake.graveler import DAY, Repository, make_rules
from kvlake.kv import open_store
from kvlake.lake import Lake
from kvlake.pipelines import imports as spark_imports
from kvlake.pipelines.executors import encode_settings
from kvlake.pipelines.gc.collector import GarbageCollector
from tests.support import FakeClock
from tests.support.imports import run_import
from tests.support.s3server import MotoS3

LOCAL = ImportSettings(local_enabled=True, local_prefixes="local://imports")


def folder_files() -> dict[str, bytes]:
    """A tree with blobs on several levels, so the Spark import lists many parts."""
    files = {f"set/top-{n}": b"t%d" % n for n in range(5)}
    for folder in ("a", "b", "c/d", "c/e", "c/e/f"):
        files.update({f"set/{folder}/f{n:03d}": b"%s-%d" % (folder.encode(), n) for n in range(40)})
    return files


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=str(tmp_path / "lake"), imports=LOCAL)


@pytest.fixture
def lake(settings: Settings) -> Iterator[Lake]:
    root = Path(settings.data_dir) / "blocks" / "imports"
    for key, body in folder_files().items():
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_bytes(body)
    with Lake.open(settings) as opened:
        opened.graveler.create_repository("repo1", storage_namespace="local://lake/repo1")
        yield opened


def importer(lake: Lake, engine: str, threshold: int = 100_000) -> Importer:
    imports = msgspec.structs.replace(
        lake.settings.imports, engine=engine, spark_threshold=threshold
    )
    settings = msgspec.structs.replace(lake.settings, imports=imports)
    return Importer(
        lake.graveler, lake.blockstore, clock=lake.clock, settings=settings, locks=lake.locks
    )


def run(lake: Lake, engine: str, sources: list[ImportSource], branch: str) -> ImportStatus:
    repository = lake.graveler.get_repository("repo1")
    lake.graveler.create_branch(repository, branch, "main")
    chosen = importer(lake, engine)
    job = chosen.prepare(repository, branch, sources, committer="me", message="import")
    run_import(lake, job.import_id, chosen)
    return chosen.status(repository, job.import_id)


def contents(lake: Lake, repository: Repository, metarange_id: str) -> list[tuple[bytes, bytes]]:
    scan = lake.graveler.committed.scan(repository.storage_namespace, metarange_id)
    return [(key, value.identity + value.data) for key, value in scan]


def assert_same_commit(lake: Lake, sources: list[ImportSource], count: int) -> None:
    spark_status = run(lake, "spark", sources, "via-spark")
    local_status = run(lake, "local", sources, "via-local")
    for status in (spark_status, local_status):
        assert (status.completed, status.error, status.ingested) == (True, "", count)
    repository = lake.graveler.get_repository("repo1")
    imported = contents(lake, repository, spark_status.metarange_id)
    assert len(imported) == count
    assert imported == contents(lake, repository, local_status.metarange_id)
    # Content-addressed: the same ranges and metarange, not only the same entries.
    assert spark_status.metarange_id == local_status.metarange_id


def test_spark_and_local_imports_of_a_local_folder_make_the_same_commit(
    spark: SparkSession, lake: Lake
) -> None:
    sources = [
        ImportSource("local://imports/set/", "data/", "common_prefix"),
        ImportSource("local://imports/set/c/", "again/", "common_prefix"),
        ImportSource("local://imports/set/top-1", "single", "object"),
    ]
    assert len(split_sources(lake.blockstore, sources, parts=SPARK_PARTS)) > 8
    assert_same_commit(lake, sources, len(folder_files()) + 3 * 40 + 1)


def test_spark_and_local_imports_of_s3_make_the_same_commit(
    spark: SparkSession, s3_server: MotoS3, tmp_path: Path
) -> None:
    for key, body in folder_files().items():
        s3_server.admin.put_object(Bucket="lake", Key=f"external/{key}", Body=body)
    url = f"s3://lake?endpoint_url={s3_server.endpoint}"
    settings = Settings(data_dir=str(tmp_path / "s3lake"), blockstore_url=url)
    with Lake.open(settings) as lake:
        lake.graveler.create_repository("repo1", storage_namespace="s3://lake/repo1")
        sources = [
            ImportSource("s3://lake/external/set/", "data/", "common_prefix"),
            ImportSource("s3://lake/external/set/c/e", "e", "common_prefix"),  # a name prefix
            ImportSource("s3://lake/external/nothing/", "none/", "common_prefix"),
        ]
        assert_same_commit(lake, sources, len(folder_files()) + 2 * 40)


def test_an_empty_folder_imports_nothing_on_both_engines(spark: SparkSession, lake: Lake) -> None:
    (Path(lake.settings.data_dir) / "blocks" / "imports" / "empty").mkdir()
    assert_same_commit(lake, [ImportSource("local://imports/empty/", "d/", "common_prefix")], 0)


def test_a_canceled_spark_import_commits_nothing(spark: SparkSession, lake: Lake) -> None:
    repository = lake.graveler.get_repository("repo1")
    head = lake.graveler.get_branch(repository, "main").commit_id
    spark_import = importer(lake, "spark")
    sources = [ImportSource("local://imports/set/", "data/", "common_prefix")]
    job = spark_import.prepare(repository, "main", sources, committer="me")
    spark_import.cancel(repository, job.import_id)
    run_import(lake, job.import_id, spark_import)
    status = spark_import.status(repository, job.import_id)
    assert (status.completed, status.error) == (False, CANCELED)
    assert lake.graveler.get_branch(repository, "main").commit_id == head


def test_a_bulk_delete_started_during_a_spark_import_stops_its_commit(
    spark: SparkSession, lake: Lake
) -> None:
    """Issue 22 (b): the Spark import publishes through the same check as the local one: a
    bulk delete over its destination, started while Spark lists, leaves the branch as it was."""
    repository = lake.graveler.get_repository("repo1")
    head = lake.graveler.get_branch(repository, "main").commit_id
    spark_import = importer(lake, "spark")
    sources = [ImportSource("local://imports/set/", "data/", "common_prefix")]
    job = spark_import.prepare(repository, "main", sources, committer="me")
    operation = ids.new_uid()
    lake.locks.take_delete_lock(repository, operation, "main", "data/c/", lake.clock() + 3600)
    run_import(lake, job.import_id, spark_import)
    status = spark_import.status(repository, job.import_id)
    assert not status.completed and f"bulk delete operation {operation}" in status.error
    assert lake.graveler.get_branch(repository, "main").commit_id == head


def test_auto_imports_on_spark_from_the_threshold(lake: Lake) -> None:
    repository = lake.graveler.get_repository("repo1")
    sources = [ImportSource("local://imports/set/", "data/", "common_prefix")]
    count = len(folder_files())
    for threshold, engine in ((count, "spark"), (count + 1, "local")):
        chosen = importer(lake, "auto", threshold)
        job = chosen.prepare(repository, "main", sources, committer="me")
        assert chosen.choose_engine(job) == engine
        chosen.cancel(repository, job.import_id)


def test_garbage_collection_never_deletes_imported_local_files(
    spark: SparkSession, settings: Settings
) -> None:
    clock = FakeClock()
    root = Path(settings.data_dir) / "blocks" / "imports"
    for key, body in folder_files().items():
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_bytes(body)
    store, blocks = open_store(settings.kv_url), open_blockstore(settings.blockstore_url)
    with Lake(settings, store, blocks, clock=clock) as lake:
        repository = lake.graveler.create_repository("repo1", storage_namespace="local://lake/r")
        lake.graveler.retention.set_rules(repository, make_rules(1, {}))
        imports = lake.catalog.imports
        sources = [ImportSource("local://imports/set/", "data/", "common_prefix")]
        run_import(lake, imports.prepare(repository, "main", sources, committer="me").import_id)
        clock.advance(2 * DAY)
        lake.catalog.delete_objects(repository, "main", [f"data/top-{n}" for n in range(5)])
        lake.graveler.commit(repository, "main", committer="me", message="drop")
        clock.advance(5 * DAY)  # the import commit expires
        summary = GarbageCollector(spark, lake, clock=clock).run("repo1", grace_period=DAY)
        assert summary.counts.failed == 0
    on_disk = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
    assert on_disk == set(folder_files())


def test_a_listing_task_stops_once_its_import_is_canceled(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spark_imports, "PROGRESS_EVERY", 10)  # a status read every 10 entries
    repository = lake.graveler.get_repository("repo1")
    sources = [ImportSource("local://imports/set/", "data/", "common_prefix")]
    units = [
        msgspec.json.encode(unit).decode()
        for unit in split_sources(lake.blockstore, sources, parts=1)
    ]
    batch = pa.record_batch([units], names=["unit"])
    job = lake.catalog.imports.prepare(repository, "main", sources, committer="me")
    settings = encode_settings(lake.settings)

    def listed() -> int:
        task = spark_imports.list_parts(settings, job)
        return sum(out.num_rows for out in task(iter([batch])))

    assert listed() == len(folder_files())
    lake.catalog.imports.cancel(repository, job.import_id)
    assert listed() == 10


def test_a_missing_object_fails_a_spark_import_clearly_with_nothing_committed(lake: Lake) -> None:
    repository = lake.graveler.get_repository("repo1")
    head = lake.graveler.get_branch(repository, "main").commit_id
    chosen = importer(lake, "spark")
    source = ImportSource("local://imports/set/top-1", "t", "object")
    job = chosen.prepare(repository, "main", [source], committer="me")
    (Path(lake.settings.data_dir) / "blocks" / "imports" / "set" / "top-1").unlink()  # meanwhile
    run_import(lake, job.import_id, chosen)
    status = chosen.status(repository, job.import_id)
    assert not status.completed and "does not exist" in status.error
    assert lake.graveler.get_branch(repository, "main").commit_id == head
