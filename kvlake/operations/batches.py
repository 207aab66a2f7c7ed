"""Processing one work batch of a bulk delete: locks, then tombstones, then the outcome.

`BatchProcessor.process` is what every engine runs per batch, wherever it
runs. It is idempotent: a batch processed again (a crash before its outcome
was stored, a lease taken over) writes the same tombstones (a tombstone over a
tombstone is skipped), the same failure records and the same outcome, and
`Ledger.fold` counts a batch once whatever happened before (invariant 5).
"""

from __future__ import annotations

import datetime
import logging

from kvlake.errors import TooManyTriesError
from kvlake.graveler import Repository
from kvlake.operations.engines import EngineContext
from kvlake.operations.records import Batch, Failure, Lock, Operation, Outcome

log = logging.getLogger(__name__)


def skip_reason(lock: Lock) -> str:
    until = datetime.datetime.fromtimestamp(lock.expires, datetime.UTC).isoformat()
    return f"write-locked by {lock.owner!r} until {until}"


class BatchProcessor:
    """Deletes one batch's paths. Thread-safe; no in-process state."""

    def __init__(self, context: EngineContext) -> None:
        self.context = context

    def process(self, operation: Operation, repository: Repository, number: int) -> Outcome:
        """Process batch `number` of `operation` (if not done already) and store its outcome.

        Write-locked paths are skipped (their locks are read after the
        operation's delete lock was taken: see kvlake/operations/locks.py); the
        rest get tombstones through graveler's writer flow, all at once.

        Raises:
            ProtectedBranchError, BranchNotFoundError: the operation cannot go on.
        """
        ledger = self.context.ledger
        batch = ledger.read_batch(operation.id, number)
        if batch.outcome is not None:
            return batch.outcome
        failures, todo, addresses = self._split_locked(repository, batch)
        failed = 0
        if todo and not operation.options.dry_run:
            failed_paths = self._delete(operation, repository, todo, addresses)
            failures.extend(
                (path, Failure(outcome="failed", reason=why)) for path, why in failed_paths
            )
            failed = len(failed_paths)
        if failures:
            ledger.write_failures(operation.id, failures)
        outcome = Outcome(
            deleted=len(todo) - failed, failed=failed, skipped=len(batch.paths) - len(todo)
        )
        ledger.record_outcome(operation.id, number, batch, outcome)
        return outcome

    def _split_locked(
        self, repository: Repository, batch: Batch
    ) -> tuple[list[tuple[str, Failure]], list[str], list[str]]:
        paths = batch.paths
        if not paths:
            return [], [], []
        locked = self.context.locks.write_locked(repository, paths[0], paths[-1])
        skipped: list[tuple[str, Failure]] = []
        todo: list[str] = []
        addresses: list[str] = []
        for index, path in enumerate(paths):
            lock = locked.get(path)
            if lock is not None:
                skipped.append((path, Failure(outcome="skipped", reason=skip_reason(lock))))
                continue
            todo.append(path)
            if batch.addresses:
                addresses.append(batch.addresses[index])
        return skipped, todo, addresses

    def _delete(
        self, operation: Operation, repository: Repository, paths: list[str], addresses: list[str]
    ) -> list[tuple[str, str]]:
        """Stage tombstones at `paths`; the paths that failed, with why."""
        deletion = self.context.deletion
        if addresses and deletion is not None:
            # purge=false: the blobs stay for garbage collection. Marked before the
            # tombstones log them, so a worker finds the mark when it checks them.
            deletion.mark_shared_many(repository.instance_uid, addresses)
        graveler = self.context.graveler
        try:
            graveler.delete_many(repository, operation.branch, [path.encode() for path in paths])
            return []
        except TooManyTriesError as exc:
            log.info(
                "bulk delete %s: batch raced writers (%s); one path at a time", operation.id, exc
            )
        failed: list[tuple[str, str]] = []
        for path in paths:
            try:
                graveler.delete(repository, operation.branch, path.encode())
            except TooManyTriesError as exc:
                failed.append((path, str(exc)))
        return failed
