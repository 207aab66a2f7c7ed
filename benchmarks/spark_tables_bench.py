"""Writing and reading a Parquet dataset through the `kvlake` source, beside plain Spark.

Writes `--rows` rows (in `--files` files, about 20) to a branch with a commit,
then reads them back with a filter on a partition column; in the same run, the
same DataFrame through Spark's own `df.write.parquet` and `spark.read.parquet`
on a local folder. The reads run `--rounds` times after one untimed warm-up
read of each, alternating kvlake and Spark, and the medians are compared; a
third read narrows kvlake's schema with `option("columns", ...)` to the
columns the query uses, which is what Spark's own reader gets from column
pruning (a Python data source is not offered it).
Printed: seconds for each, the kvlake/Spark ratios (the goal is within 1.3x),
and the driver's peak RSS (the Python process; run at 1M and 10M rows to see
it stay flat).

    .venv/bin/python benchmarks/spark_tables_bench.py --rows 1000000
    .venv/bin/python benchmarks/spark_tables_bench.py --rows 10000000
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from kvlake.config import Settings, SparkSettings
from kvlake.lake import Lake
from kvlake.pipelines import open_spark
from kvlake.pipelines.executors import SETTINGS_OPTION, encode_settings


def _rows(spark: SparkSession, rows: int, files: int) -> DataFrame:
    return spark.range(0, rows, numPartitions=files).selectExpr(
        "id", "id % 4 AS part", "cast(id * 1.5 AS double) AS amount", "uuid() AS note"
    )


def _timed(label: str, action: object) -> float:
    started = time.monotonic()
    action()  # type: ignore[operator]
    seconds = time.monotonic() - started
    print(f"{label:32} {seconds:8.1f} s", flush=True)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--rounds", type=int, default=3, help="reads of each kind (medians)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(data_dir=f"{folder}/lake")
        spark = open_spark(SparkSettings(master=args.master), app_name="spark-tables-bench")
        frame = _rows(spark, args.rows, args.files)
        with Lake.open(settings) as lake:
            lake.graveler.create_repository(
                "bench", storage_namespace=f"local://{folder}/lake/blocks/bench"
            )
        lakes = encode_settings(settings)
        uri = "lakefs://bench/main/tables/t/"
        plain = str(Path(folder) / "plain")

        def kvlake_write() -> None:
            frame.write.format("kvlake").mode("append").option(SETTINGS_OPTION, lakes).option(
                "partition_by", "part"
            ).option("commit_message", "bench").save(uri)

        def kvlake_read() -> None:
            spark.read.format("kvlake").option(SETTINGS_OPTION, lakes).option(
                "format", "parquet"
            ).load(uri).filter("part = 1").agg({"amount": "sum"}).collect()

        def kvlake_read_narrowed() -> None:
            spark.read.format("kvlake").option(SETTINGS_OPTION, lakes).option(
                "format", "parquet"
            ).option("columns", "part,amount").load(uri).filter("part = 1").agg(
                {"amount": "sum"}
            ).collect()

        def spark_write() -> None:
            frame.write.partitionBy("part").parquet(plain)

        def spark_read() -> None:
            spark.read.parquet(plain).filter("part = 1").agg({"amount": "sum"}).collect()

        print(f"{args.rows:,} rows in {args.files} tasks on {args.master}")
        frame.limit(1).collect()  # warm the JVM and Python workers: not part of either figure
        write = _timed("kvlake write + commit", kvlake_write)
        plain_write = _timed("spark df.write.parquet", spark_write)
        kvlake_read()  # the first read of each kind starts its workers: not in the figures
        spark_read()
        reads: dict[str, list[float]] = {"kvlake": [], "narrowed": [], "spark": []}
        for _ in range(args.rounds):
            reads["kvlake"].append(_timed("kvlake filtered read", kvlake_read))
            reads["narrowed"].append(_timed("kvlake read, columns narrowed", kvlake_read_narrowed))
            reads["spark"].append(_timed("spark.read.parquet filtered", spark_read))
        read, narrowed, plain_read = (statistics.median(reads[k]) for k in reads)
        print(f"medians of {args.rounds}: kvlake read {read:.1f} s, narrowed {narrowed:.1f} s,")
        print(f"  spark read {plain_read:.1f} s")
        print(
            f"write ratio {write / plain_write:5.2f}x   read ratio {read / plain_read:5.2f}x"
            f"   narrowed read ratio {narrowed / plain_read:5.2f}x"
        )
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"driver (Python) peak RSS {peak:,.0f} MiB")
        spark.stop()


if __name__ == "__main__":
    main()
