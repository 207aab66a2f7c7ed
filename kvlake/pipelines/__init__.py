"""kvlake's data pipelines on Apache Spark (PySpark, an optional dependency).

Importing this package needs no PySpark; `open_spark` says how to install it.
See docs/spark.md.
"""

from kvlake.pipelines.session import open_spark, read_lake

__all__ = ["open_spark", "read_lake"]
