"""The same jobs through Spark Connect: the `kvlake` source (objects, datasets written, read
and streamed), garbage collection and imports.

`KVLAKE_SPARK_REMOTE=local` makes PySpark start a Spark Connect server on this
machine and talk to it over gRPC, as a client of a remote cluster would. It runs
in its own process: one process holds one kind of session.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kvlake.config import Settings
from kvlake.graveler import make_rules
from kvlake.lake import Lake

ORPHAN = "data/20250101T00/orphan"

SCRIPT = textwrap.dedent(
    """
    import threading

    import msgspec
    from kvlake.catalog import ImportSource
    from kvlake.catalog.import_runs import ImportSteps
    from kvlake.config import load_settings
    from kvlake.lake import Lake
    from kvlake.operations import drive
    from kvlake.pipelines import open_spark, read_lake
    from kvlake.pipelines.gc.collector import GarbageCollector

    settings = load_settings()
    spark = open_spark(settings.spark)
    assert type(spark).__module__ == "pyspark.sql.connect.session", type(spark)
    rows = read_lake(spark, "lakefs://repo1/main").collect()
    print("paths", sorted(row["path"] for row in rows))
    with Lake.open(settings) as lake:
        summary = GarbageCollector(spark, lake).run("repo1")
    print("summary", msgspec.json.encode(summary.counts).decode())
    with Lake.open(settings) as lake:
        repo = lake.graveler.get_repository("repo1")
        lake.graveler.create_branch(repo, "imported", "main")
        source = ImportSource("local://imports/", "in/", "common_prefix")
        job = lake.catalog.imports.prepare(repo, "imported", [source], committer="c")
        context = lake.engine_context()
        drive(context.driver(), job.import_id, threading.Event(), ImportSteps(context))
        status = lake.catalog.imports.status(repo, job.import_id)
        print("import", status.completed, status.ingested, repr(status.error))

    rows = spark.createDataFrame([(1, "a"), (2, "b")], "id int, part string")
    rows.write.format("kvlake").mode("append").option("partition_by", "part").option(
        "commit_message", "through connect").save("lakefs://repo1/main/connect/")
    back = spark.read.format("kvlake").option("format", "parquet").load(
        "lakefs://repo1/main/connect/").filter("part = 'b'")
    print("dataset", sorted(tuple(row) for row in back.collect()))
    query = (
        spark.readStream.schema("id int").json(STREAM_IN).writeStream.format("kvlake")
        .option("commit_message", "stream").option("stream_id", "s1")
        .option("checkpointLocation", CHECKPOINT).trigger(availableNow=True)
        .start("lakefs://repo1/main/streamed/")
    )
    query.awaitTermination()
    streamed = spark.read.format("kvlake").option("format", "parquet").load(
        "lakefs://repo1/main/streamed/")
    print("streamed", sorted(row["id"] for row in streamed.collect()))
    """
)


# Local only: it imports a local folder, which only a lake on a local folder may; the source
# and GC on S3 are test_source.py's and test_gc.py's, through the same DataFrame code.
@pytest.mark.parametrize("blockstore_kind", ["local"])
def test_the_source_gc_and_imports_run_through_spark_connect(
    lake: Lake, settings: Settings
) -> None:
    repo = lake.graveler.create_repository(
        "repo1", storage_namespace=f"local://{settings.data_dir}/blocks/repo1"
    )
    lake.graveler.retention.set_rules(repo, make_rules(7))
    lake.catalog.upload(repo, "main", "kept", io.BytesIO(b"referenced"))
    lake.blockstore.put(repo.storage_namespace, ORPHAN, b"orphan")
    for name in ("a", "b/c", "b/d"):
        path = Path(settings.data_dir) / "blocks" / "imports" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(name.encode())
    imports = {
        "KVLAKE_IMPORTS_LOCAL_ENABLED": "true",
        "KVLAKE_IMPORTS_LOCAL_PREFIXES": "local://imports",
        "KVLAKE_IMPORTS_ENGINE": "spark",
    }

    stream_in = Path(settings.data_dir) / "stream-in"
    stream_in.mkdir()
    (stream_in / "1.json").write_text('{"id": 7}\n{"id": 8}\n')
    script = f"STREAM_IN = {str(stream_in)!r}\nCHECKPOINT = {str(stream_in) + '-checkpoint'!r}\n"

    process = subprocess.run(
        [sys.executable, "-c", script + SCRIPT],
        env={
            **os.environ,
            **imports,
            "KVLAKE_DATA_DIR": settings.data_dir,
            "KVLAKE_SPARK_REMOTE": "local",
        },
        capture_output=True,
        text=True,
        timeout=280,
    )

    assert process.returncode == 0, process.stderr[-3000:]
    assert "paths ['kept']" in process.stdout
    assert '"deleted":1' in process.stdout and '"bytes_freed":6' in process.stdout
    assert "import True 3 ''" in process.stdout
    assert "dataset [(2, 'b')]" in process.stdout
    assert "streamed [7, 8]" in process.stdout
    assert not lake.blockstore.exists(repo.storage_namespace, ORPHAN)
