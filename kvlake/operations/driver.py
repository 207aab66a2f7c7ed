"""The driver: the one place an operation record of any kind is claimed, leased and ended.

Every kind of long-running work (a bulk delete, a garbage-collection run, ...)
lives in one `Operation` record, and whoever works on it goes through these
steps, each one compare-and-swap of the whole record (`Ledger.update`, the
only write an operation record gets after its creation):

- `claim`: take the lease if the record is unfinished and its lease is free,
  expired or already this process's, and mark it `started`;
- `checkpoint`: change the record and renew the lease together, only while
  the lease is still this process's (`LostLeaseError` otherwise: another
  process took the work over after the lease lapsed; stop quietly, it carries
  on);
- `renewed`: the same renewal, for a change built elsewhere (`Ledger.fold`);
- `finish`: the final status and error, the lease let go.

An engine (kvlake/operations/engines.py) adds what its kind needs between
those steps: the bulk-delete engines their delete lock, batches and commit,
the GC engine its repository lease and phases. A kind whose work cannot
resume from a checkpoint still resumes through `claim`: its engine sees the
record it was left in and decides (a GC run restarts its phases).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import msgspec

from kvlake.operations.ledger import Ledger
from kvlake.operations.records import Operation, OperationStatus


class LostLeaseError(Exception):
    """Another process holds the operation now: stop quietly, it carries on."""


class Driver:
    """Claims, renews and finishes operation records for one lease owner. Thread-safe."""

    def __init__(
        self,
        ledger: Ledger,
        *,
        owner: str,
        lease_time: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.ledger = ledger
        self.owner = owner
        self.lease_time = lease_time
        self.clock = clock

    def claim(self, operation_id: str) -> Operation:
        """Take the operation's lease if it is free, expired or already ours.

        Returns the record as it now is: `owner == self.owner` says whether the
        claim landed (a finished record, or one another live process holds, is
        returned unchanged).
        """
        now = self.clock()

        def change(current: Operation) -> Operation | None:
            if current.finished:
                return None
            if current.owner not in ("", self.owner) and current.lease_expires > now:
                return None
            return msgspec.structs.replace(
                current,
                owner=self.owner,
                lease_expires=now + self.lease_time,
                status="started" if current.status == "not_started" else current.status,
                processing_started_at=now,
                processed_at_start=current.processed,
                last_updated_at=now,
            )

        return self.ledger.update(operation_id, change)

    def renewed(self, updated: Operation) -> Operation:
        """`updated` with the lease renewed from now. Only the holder may write it.

        Raises:
            LostLeaseError: the record's lease is another process's now.
        """
        if updated.owner != self.owner:
            raise LostLeaseError
        now = self.clock()
        return msgspec.structs.replace(
            updated, lease_expires=now + self.lease_time, last_updated_at=now
        )

    def checkpoint(self, operation_id: str, **changes: object) -> Operation:
        """Apply `changes` and renew the lease in one compare-and-swap, if still ours.

        Raises:
            LostLeaseError: another process holds the operation now; nothing written.
        """
        return self.ledger.update(
            operation_id,
            lambda current: self.renewed(msgspec.structs.replace(current, **changes)),
        )

    def finish(self, operation_id: str, status: OperationStatus, error: str = "") -> Operation:
        """Record the final status (and why, when failed) and let the lease go.

        A record that is already finished keeps its status: the first end wins.
        """
        now = self.clock()

        def change(current: Operation) -> Operation | None:
            if current.finished:
                return None
            return msgspec.structs.replace(
                current,
                status=status,
                error=error,
                owner="",
                lease_expires=0.0,
                last_updated_at=now,
            )

        return self.ledger.update(operation_id, change)
