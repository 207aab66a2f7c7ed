"""The `spark` engine of bulk deletes: work batches processed by Spark tasks, counted by the driver.

`BulkDeleteDriver` (kvlake/operations/bulk_delete_driver.py) runs the operation
as for every engine: it claims the operation, takes its delete lock and
enumerates the branch into work batches in the KV (streamed, one batch in
memory). `SparkBatches` is its `BatchEngine`: a wave of batches at a time, Spark
tasks open the lake from its settings and run `BatchProcessor.process` on their
batches (write locks, filters, tombstones through graveler's writer flow,
failure records, the batch's outcome), in any order and on any executor. The
driver counts a wave with one `Ledger.fold` (which moves `done` and the counters
together and renews the lease) and reads cancellation before the next wave;
each task renews the delete lock before each batch it processes
(kvlake/operations/renewal.py). A batch processed twice (a retried task, a
resumed operation) is counted once, as with every engine.

Waves keep the lease fresh (one fold per wave, well inside `lease_time`) and
bound what a cancel leaves running. Only batch numbers and per-batch counts
cross between driver and tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Final

import msgspec
import pyarrow as pa

from kvlake.errors import ConfigError
from kvlake.graveler import Repository
from kvlake.operations import BulkDeleteDriver
from kvlake.operations.batches import BatchProcessor
from kvlake.operations.engines import EngineContext
from kvlake.operations.records import Operation, decode_operation, encode
from kvlake.pipelines.arrow import spark_schema
from kvlake.pipelines.executors import encode_settings, task_lake
from kvlake.pipelines.session import open_spark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

WAVE_BATCHES: Final = 32
"""Batches per Spark job between two folds (10k paths each by default)."""
OUTCOMES: Final = pa.schema(
    [(name, pa.int64()) for name in ("number", "deleted", "failed", "skipped")]
)


class SparkBatches:
    """A `BatchEngine` whose waves are Spark jobs, one task per batch."""

    wave = WAVE_BATCHES

    def __init__(self, context: EngineContext) -> None:
        if context.lake_settings is None:
            raise ConfigError(
                "the spark engine needs the lake's settings to give its tasks;"
                " build its context with Lake.engine_context()"
            )
        self.context = context
        self._settings = context.lake_settings
        self._spark: SparkSession | None = None

    def process(self, operation: Operation, repository: Repository, numbers: range) -> None:
        if self._spark is None:  # the session only once there is work for it
            self._spark = open_spark(self._settings.spark, app_name="kvlake-bulk-delete")
        rows = [(number,) for number in numbers]
        wave = self._spark.createDataFrame(rows, "number long").repartition(len(rows))
        work = process_batches(
            encode_settings(self._settings), self.context.owner, operation, repository
        )
        outcomes = wave.mapInArrow(work, spark_schema(OUTCOMES))
        outcomes.count()  # runs the wave; the outcomes are in the KV


def spark_engine(context: EngineContext) -> BulkDeleteDriver:
    """The `spark` engine: the driver here, the batches' work on Spark."""
    return BulkDeleteDriver(context, SparkBatches(context))


def process_batches(
    settings: str, owner: str, operation: Operation, repository: Repository
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """Batch numbers in, each processed (and its outcome stored) in the task; counts out."""
    raw_operation = encode(operation)
    raw_repository = msgspec.msgpack.encode(repository)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        processor = BatchProcessor(task_lake(settings).engine_context(owner=owner))
        held_operation = decode_operation(raw_operation)
        held_repository = msgspec.msgpack.decode(raw_repository, type=Repository)
        for batch in batches:
            rows = []
            for number in batch.column("number").to_pylist():
                outcome = processor.process(held_operation, held_repository, number)
                rows.append(
                    {
                        "number": number,
                        "deleted": outcome.deleted,
                        "failed": outcome.failed,
                        "skipped": outcome.skipped,
                    }
                )
            yield pa.RecordBatch.from_pylist(rows, schema=OUTCOMES)

    return run
