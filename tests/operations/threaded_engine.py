"""A second engine for the agreement test: batches processed by a thread pool, out of order.

It is what a Spark engine does in small (kvlake/operations/engines.py): the
local engine's claim, lock, enumeration, commit and finish, but the batches
processed concurrently in any order with `BatchProcessor.process` and counted
only by `Ledger.fold`. Registered as `threads` by tests/operations/test_engines.py.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from kvlake.operations import LocalEngine
from kvlake.operations.local import HeldOperation


class ThreadedEngine(LocalEngine):
    def _process(self, held: HeldOperation, stop: threading.Event) -> None:
        operation = held.operation
        pending = list(reversed(range(operation.done, operation.batches)))
        with ThreadPoolExecutor(4) as pool:
            futures = [
                pool.submit(self.batches.process, operation, held.repository, number)
                for number in pending
            ]
            for future in futures:
                future.result()
        # Every outcome is stored; one fold counts them all, in order, exactly once.
        held.operation = self.context.ledger.fold(operation.id, lease=self._renew)
