"""A PySpark pipeline over kvlake: read raw data at a tag, transform it, write the result to a
branch with a commit, merge it into main, and read the result at the merge commit.

    python examples/spark_pipeline.py          # a throwaway lake in a temporary folder

Only DataFrames and the `kvlake` data source: it runs unchanged on `local[*]`,
through `spark-submit` and through Spark Connect (`KVLAKE_SPARK_REMOTE`).
tests/pipelines/test_example.py runs `run` against the test suite's lakes.
"""

from __future__ import annotations

import io
import tempfile

from pyspark.sql import DataFrame, SparkSession

from kvlake.config import Settings, SparkSettings
from kvlake.graveler import Repository
from kvlake.lake import Lake
from kvlake.pipelines import open_spark
from kvlake.pipelines.executors import SETTINGS_OPTION, encode_settings

RAW = b"\n".join(
    b'{"user": "%s", "country": "%s", "amount": %d}' % (user, country, amount)
    for user, country, amount in [
        (b"ann", b"fr", 10),
        (b"bob", b"de", 25),
        (b"cid", b"fr", 7),
        (b"dee", b"it", 12),
    ]
)


def run(spark: SparkSession, lake: Lake, settings: Settings, repository: Repository) -> DataFrame:
    """The pipeline; returns the totals as read back at the merge commit."""
    lakes = encode_settings(settings)
    name = repository.name
    # 1. Raw data lands on main and is tagged: the pipeline reads that tag, never a moving branch.
    lake.catalog.upload(repository, "main", "raw/orders/day=1/orders.json", io.BytesIO(RAW))
    lake.graveler.commit(repository, "main", committer="ingest", message="raw orders")
    lake.graveler.create_tag(repository, "raw-v1", "main")
    lake.graveler.create_branch(repository, "totals-job", "main")

    raw = (
        spark.read.format("kvlake")
        .option(SETTINGS_OPTION, lakes)
        .option("format", "json")
        .load(f"lakefs://{name}/raw-v1/raw/orders/")
    )
    # 2. Transform.
    totals = raw.groupBy("country").sum("amount").withColumnRenamed("sum(amount)", "total")
    # 3. Write to the job's branch: one commit holding only this job's files.
    (
        totals.write.format("kvlake")
        .mode("overwrite")
        .option(SETTINGS_OPTION, lakes)
        .option("partition_by", "country")
        .option("commit_message", "order totals by country")
        .save(f"lakefs://{name}/totals-job/tables/totals/")
    )
    # 4. Merge into main, and read the result at the merge commit.
    merged = lake.graveler.merges.merge(
        repository, "totals-job", "main", committer="pipeline", message="publish totals"
    )
    return (
        spark.read.format("kvlake")
        .option(SETTINGS_OPTION, lakes)
        .option("format", "parquet")
        .load(f"lakefs://{name}/{merged}/tables/totals/")
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(data_dir=folder)
        spark = open_spark(SparkSettings(master="local[2]"), app_name="kvlake-example")
        with Lake.open(settings) as lake:
            repository = lake.graveler.create_repository(
                "example", storage_namespace=f"local://{folder}/blocks/example"
            )
            run(spark, lake, settings, repository).orderBy("country").show()
        spark.stop()


if __name__ == "__main__":
    main()
