"""A bulk delete's delete lock as one batch holds it: renewed before the batch reads its
write locks, and checked before each blind tombstone write.

The delete lock is what keeps new blobs out of a batch's paths between the read of
their write locks and the tombstones' blind write (kvlake/operations/locks.py). A
lock that lapsed in between reopened that window: a writer may have staged a blob
there, which the blind write would replace unlogged, an orphan. So a batch renews
the lock first (every engine runs batches through `BatchProcessor`, so this is the
per-batch renewal wherever a batch runs, Spark tasks included), and before a blind
write asks `lapsed()`: if the lock's time ran out, it is renewed and the batch
reads the write locks again before writing.
"""

from __future__ import annotations

from kvlake.graveler import Repository
from kvlake.operations.engines import EngineContext
from kvlake.operations.records import Operation


class HeldDeleteLock:
    """The delete lock of `operation`, renewed by this batch. Not thread-safe (one batch)."""

    def __init__(self, context: EngineContext, operation: Operation, repository: Repository):
        self._context = context
        self._operation = operation
        self._repository = repository
        self._enabled = not operation.options.dry_run  # a dry run takes no delete lock
        self.expires = 0.0
        """Until when the lock is live for sure: renewals only move it later."""

    def renew(self) -> None:
        """Renew the lock for another lease time, from now.

        Raises:
            PreconditionFailedError: the lock was released (the operation finished
                elsewhere); nothing was written.
        """
        if not self._enabled:
            return
        context, operation = self._context, self._operation
        self.expires = context.locks.renew_delete_lock(
            self._repository,
            operation.id,
            operation.branch,
            operation.prefix,
            context.clock() + context.settings.lease_time,
        )

    def lapsed(self) -> bool:
        """Whether the lock's time ran out since the last renewal (then it is renewed
        now, and the caller must read the write locks again before a blind write)."""
        if not self._enabled or self._context.clock() < self.expires:
            return False
        self.renew()
        return True
