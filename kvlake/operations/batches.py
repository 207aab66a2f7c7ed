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

import msgspec

from kvlake.errors import ConflictError, TooManyTriesError
from kvlake.graveler import HiddenRange, Repository
from kvlake.operations.engines import EngineContext
from kvlake.operations.records import Batch, Failure, Lock, Operation, Outcome, RangePlan

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
        if batch.range_id:
            return self._process_range(operation, repository, number, batch)
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

    def _process_range(
        self, operation: Operation, repository: Repository, number: int, batch: Batch
    ) -> Outcome:
        """A range batch: its staged objects one by one, the range's keys as one record."""
        ledger = self.context.ledger
        plan = batch.plan
        if plan is None:
            plan = self._plan_range(operation, repository, batch)
            batch = msgspec.structs.replace(batch, plan=plan)
            ledger.write_batch(operation.id, number, batch)
        failed_paths: list[tuple[str, str]] = []
        if not operation.options.dry_run:
            if plan.paths:
                failed_paths = self._delete(operation, repository, plan.paths, plan.addresses)
            if plan.hidden:
                failed_paths += self._hide(operation, repository, batch, plan)
        if failed_paths:
            failures = [(path, Failure(outcome="failed", reason=why)) for path, why in failed_paths]
            ledger.write_failures(operation.id, failures)
        failed = len(failed_paths)
        deleted = len(plan.paths) + plan.hidden - failed
        # Objects enumeration counted that someone deleted since (a path batch counts
        # them as deleted too: a tombstone over theirs): counted so, the enumerated count
        # never has to go back (invariant 5).
        deleted += max(0, batch.estimate - deleted - failed - plan.skipped)
        outcome = Outcome(
            deleted=deleted,
            failed=failed,
            skipped=plan.skipped,
            objects=deleted + failed + plan.skipped,
        )
        ledger.record_outcome(operation.id, number, batch, outcome)
        return outcome

    def _plan_range(self, operation: Operation, repository: Repository, batch: Batch) -> RangePlan:
        """Read the range's keys, the span's staged entries and locks; write the skips.

        A staged entry wins over the committed one at its key: a value is deleted
        as a staged object (its blob logged, or marked shared), a deletion was
        done already. Write-locked objects are skipped, and their keys kept out of
        the record.
        """
        context = self.context
        graveler = context.graveler
        namespace = repository.storage_namespace
        range_keys = graveler.committed.range_columns(namespace, batch.range_id).key_list()
        staged = dict(
            graveler.list_staged(
                repository, operation.branch, batch.range_min, batch.range_max + b"\0"
            )
        )
        locked = context.locks.write_locked(
            repository, batch.range_min.decode(), batch.range_max.decode()
        )
        keep_addresses = not operation.options.purge
        failures: list[tuple[str, Failure]] = []
        paths: list[str] = []
        addresses: list[str] = []
        for key, value in staged.items():
            if value is None:
                continue  # deleted already
            path = key.decode()
            lock = locked.get(path)
            if lock is not None:
                failures.append((path, Failure(outcome="skipped", reason=skip_reason(lock))))
                continue
            paths.append(path)
            if keep_addresses:
                addresses.append(context.describe(value).address)
        hidden = len(range_keys)
        keep: list[bytes] = []
        if staged or locked:
            hidden = 0
            for key in range_keys:
                if key in staged:
                    continue
                lock = locked.get(key.decode())
                if lock is None:
                    hidden += 1
                    continue
                keep.append(key)
                failures.append(
                    (key.decode(), Failure(outcome="skipped", reason=skip_reason(lock)))
                )
        if failures:
            context.ledger.write_failures(operation.id, failures)
        return RangePlan(
            paths=paths, addresses=addresses, hidden=hidden, keep=keep, skipped=len(failures)
        )

    def _hide(
        self, operation: Operation, repository: Repository, batch: Batch, plan: RangePlan
    ) -> list[tuple[str, str]]:
        """Stage the range's record; every key it would hide fails with why, if it cannot."""
        record = HiddenRange(
            range_id=batch.range_id,
            min_key=batch.range_min,
            max_key=batch.range_max,
            keep=tuple(plan.keep),
        )
        try:
            self.context.graveler.hide(repository, operation.branch, [record])
            return []
        except (ConflictError, TooManyTriesError) as exc:
            log.info("bulk delete %s: range %s not hidden (%s)", operation.id, batch.range_id, exc)
            graveler = self.context.graveler
            namespace = repository.storage_namespace
            range_keys = graveler.committed.range_columns(namespace, batch.range_id).key_list()
            stop = batch.range_max + b"\0"
            staged = {
                key
                for key, _ in graveler.list_staged(
                    repository, operation.branch, batch.range_min, stop
                )
            }
            kept = set(plan.keep)
            return [
                (key.decode(), str(exc))
                for key in range_keys
                if key not in kept and key not in staged
            ]

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
