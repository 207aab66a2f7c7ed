"""examples/spark_pipeline.py runs, on a local folder and on S3, and computes what it says."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from pyspark.sql import SparkSession

from kvlake.config import Settings
from kvlake.lake import Lake
from tests.pipelines.test_gc import namespace_of

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "spark_pipeline.py"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("spark_pipeline", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("spark_pipeline", module)
    spec.loader.exec_module(module)
    return module


def test_the_example_pipeline_publishes_totals_through_a_merge(
    spark: SparkSession, lake: Lake, settings: Settings
) -> None:
    repository = lake.graveler.create_repository("repo1", storage_namespace=namespace_of(lake))

    totals = _example().run(spark, lake, settings, repository)

    rows = {row["country"]: row["total"] for row in totals.collect()}
    assert rows == {"de": 25, "fr": 17, "it": 12}
    main = lake.graveler.get_commit(
        repository, lake.graveler.get_branch(repository, "main").commit_id
    )
    assert main.message == "publish totals" and len(main.parents) == 2
