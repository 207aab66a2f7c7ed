"""The same jobs through Spark Connect: the `kvlake` source and garbage collection, unchanged.

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

from kvlake.config import Settings
from kvlake.graveler import make_rules
from kvlake.lake import Lake

ORPHAN = "data/20250101T00/orphan"

SCRIPT = textwrap.dedent(
    """
    import msgspec
    from kvlake.config import load_settings
    from kvlake.lake import Lake
    from kvlake.pipelines import open_spark, read_lake
    from kvlake.pipelines.gc import GarbageCollector

    settings = load_settings()
    spark = open_spark(settings.spark)
    assert type(spark).__module__ == "pyspark.sql.connect.session", type(spark)
    rows = read_lake(spark, "lakefs://repo1/main").collect()
    print("paths", sorted(row["path"] for row in rows))
    with Lake.open(settings) as lake:
        summary = GarbageCollector(spark, lake).run("repo1")
    print("summary", msgspec.json.encode(summary.counts).decode())
    """
)


def test_the_source_and_gc_run_through_spark_connect(lake: Lake, settings: Settings) -> None:
    repo = lake.graveler.create_repository(
        "repo1", storage_namespace=f"local://{settings.data_dir}/blocks/repo1"
    )
    lake.graveler.retention.set_rules(repo, make_rules(7))
    lake.catalog.upload(repo, "main", "kept", io.BytesIO(b"referenced"))
    lake.blockstore.put(repo.storage_namespace, ORPHAN, b"orphan")

    process = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env={**os.environ, "KVLAKE_DATA_DIR": settings.data_dir, "KVLAKE_SPARK_REMOTE": "local"},
        capture_output=True,
        text=True,
        timeout=280,
    )

    assert process.returncode == 0, process.stderr[-3000:]
    assert "paths ['kept']" in process.stdout
    assert '"deleted":1' in process.stdout and '"bytes_freed":6' in process.stdout
    assert not lake.blockstore.exists(repo.storage_namespace, ORPHAN)
