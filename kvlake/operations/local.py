"""The local engine: a bulk delete's batches processed in the calling thread, one at a time.

`BulkDeleteDriver` (kvlake/operations/bulk_delete_driver.py) does the rest of
the run, as for every engine; a wave of one batch makes each batch its own
boundary for progress and cancellation.
"""

from __future__ import annotations

from kvlake.graveler import Repository
from kvlake.operations.batches import BatchProcessor
from kvlake.operations.bulk_delete_driver import BulkDeleteDriver
from kvlake.operations.engines import EngineContext
from kvlake.operations.records import Operation


class LocalBatches:
    """A `BatchEngine` that processes batches in order, in the calling thread."""

    wave = 1

    def __init__(self, processor: BatchProcessor) -> None:
        self.processor = processor

    def process(self, operation: Operation, repository: Repository, numbers: range) -> None:
        for number in numbers:
            self.processor.process(operation, repository, number)


def local_engine(context: EngineContext) -> BulkDeleteDriver:
    """The `local` engine: bulk deletes run wholly in the calling thread."""
    return BulkDeleteDriver(context, LocalBatches(BatchProcessor(context)))
