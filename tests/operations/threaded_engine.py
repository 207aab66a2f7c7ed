"""A third engine for the agreement test: batches processed by a thread pool, out of order.

It is what a Spark engine does in small (kvlake/operations/engines.py): a
`BatchEngine` under the same `BulkDeleteDriver` (claim, lock, enumeration, commit
and finish), but handed every batch at once and processing them concurrently in
reverse order with `BatchProcessor.process`; the driver counts them with one
`Ledger.fold`. Registered as `threads` by tests/operations/test_engines.py.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from kvlake.graveler import Repository
from kvlake.operations import BatchProcessor, BulkDeleteDriver, EngineContext, Operation


class ThreadedBatches:
    wave = 1_000_000  # every batch written, in one call and one fold

    def __init__(self, context: EngineContext) -> None:
        self.processor = BatchProcessor(context)

    def process(self, operation: Operation, repository: Repository, numbers: range) -> None:
        with ThreadPoolExecutor(4) as pool:
            futures = [
                pool.submit(self.processor.process, operation, repository, number)
                for number in reversed(numbers)
            ]
            for future in futures:
                future.result()


def threaded_engine(context: EngineContext) -> BulkDeleteDriver:
    return BulkDeleteDriver(context, ThreadedBatches(context))
