"""Garbage collection of a repository's blobs on Spark (docs/spark.md).

`collector` marks and sweeps (the `GarbageCollector`), `tasks` holds what its Spark
tasks run, `lease` keeps one run per repository across processes, `runs` makes a
run one of the server's operations (`gc-run`), and `job` is the operator's entry
point (`python -m kvlake.pipelines.gc.job`). Importing it needs no PySpark.
"""
