"""Starting Spark for kvlake's pipelines, where the settings say (`KVLAKE_SPARK_*`).

PySpark is optional (`pip install 'kvlake[spark]'`): the server and library run
without it, and only asking for a pipeline imports it. The same jobs run on
`local[*]`, on a cluster master and through Spark Connect, because they use
DataFrames, Python data sources and Arrow only.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from kvlake.config import Settings, SparkSettings
from kvlake.errors import ConfigError
from kvlake.pipelines.executors import SETTINGS_OPTION, encode_settings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

INSTALL_HINT = "install it with: pip install 'kvlake[spark]' (Java 17 or newer must be on PATH)"


def open_spark(settings: SparkSettings, *, app_name: str = "kvlake") -> SparkSession:
    """A Spark session on the configured master (or Spark Connect remote), kvlake source registered.

    Workers get this interpreter (`PYSPARK_PYTHON`) unless it is set: the one
    on PATH may lack pyarrow and kvlake. A local master binds to loopback.
    Under spark-submit, its `--master` wins over `KVLAKE_SPARK_MASTER`.

    Raises:
        ConfigError: PySpark is not installed.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise ConfigError(f"kvlake's Spark pipelines need PySpark; {INSTALL_HINT}") from exc
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if settings.remote:
        builder = builder.remote(settings.remote)
    elif "PYSPARK_GATEWAY_PORT" in os.environ:
        pass  # launched by spark-submit: its --master and --conf decide
    else:
        if settings.master.startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.master(settings.master)
    for key, value in settings.options().items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    # The dataset reader prunes partitions through Python data source filter pushdown,
    # which Spark refuses to call (rather than skip) while it is off.
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    from kvlake.pipelines.source import LakeDataSource

    spark.dataSource.register(LakeDataSource)
    return spark


def read_lake(
    spark: SparkSession,
    uri: str,
    *,
    settings: Settings | None = None,
    diff_against: str | None = None,
) -> DataFrame:
    """`spark.read.format("kvlake")` with the lake's settings passed to the tasks.

    `uri` is `lakefs://<repository>/<ref>[/<prefix>]`; with `diff_against`, the
    changes from that ref to `uri`'s ref instead of the objects.
    """
    reader = spark.read.format("kvlake")
    if settings is not None:
        reader = reader.option(SETTINGS_OPTION, encode_settings(settings))
    if diff_against is not None:
        reader = reader.option("diff_against", diff_against)
    return reader.load(uri)
