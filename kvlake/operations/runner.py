"""The background runner: every server resumes every unfinished operation it can lease,
of every kind (bulk deletes, GC runs), each through its kind's engine.

A pass lists the operation records and hands each unfinished one to its
engine; the engine's lease decides who works on it, so any number of servers
can run passes over one store. After a crash the restarted server (or another
one, once the lease expired) resumes from the record's checkpoint.
"""

from __future__ import annotations

import logging
import threading

from kvlake.errors import KvlakeError
from kvlake.operations.engines import Engine, EngineContext, open_engine_for
from kvlake.operations.records import Operation

log = logging.getLogger(__name__)


class OperationRunner:
    """Runs operations in the calling thread, one at a time. `wake` starts a pass early."""

    def __init__(self, context: EngineContext) -> None:
        self.context = context
        self._engines: dict[str, Engine] = {}
        self._wake = threading.Event()

    def engine(self, operation: Operation) -> Engine:
        """The engine of `operation` (its kind's, or a bulk delete's chosen one), built once."""
        name = operation.options.engine if operation.kind == "bulk-delete" else operation.kind
        key = f"{operation.kind}/{name}"
        if key not in self._engines:
            self._engines[key] = open_engine_for(operation, self.context)
        return self._engines[key]

    def run_once(self, stop: threading.Event | None = None) -> list[Operation]:
        """One pass: run every unfinished operation this process can lease, to its end."""
        halt = stop or threading.Event()
        ran: list[Operation] = []
        pending = [op.id for op in self.context.ledger.list() if not op.finished]
        for operation_id in pending:
            if halt.is_set():
                break
            operation = self.context.ledger.load(operation_id)[0]
            try:
                ran.append(self.engine(operation).run(operation_id, halt))
            except KvlakeError as exc:  # the store is down: the next pass resumes it
                log.warning("operation %s paused: %s", operation_id, exc)
        return ran

    def wake(self) -> None:
        """Start the next pass now (a new operation was created)."""
        self._wake.set()

    def run(self, stop: threading.Event, *, interval: float) -> None:
        """Passes until `stop`, every `interval` seconds or when woken."""
        while not stop.is_set():
            self._wake.clear()
            ran = self.run_once(stop)
            if stop.is_set():
                return
            self._wake.wait(self._next_pass(ran, interval))

    def _next_pass(self, ran: list[Operation], interval: float) -> float:
        """Seconds to the next pass: `interval`, or sooner when another holder's lease on
        an unfinished operation ends (a restarted server resumes its predecessor's work as
        soon as that one's lease has expired, not a whole interval later)."""
        now = self.context.clock()
        expiries = [op.lease_expires for op in ran if not op.finished and op.lease_expires > now]
        return min([interval, *(expiry - now + 0.01 for expiry in expiries)])
