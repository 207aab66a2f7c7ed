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
from bisect import bisect_left, bisect_right
from collections.abc import Iterator

import msgspec

from kvlake.errors import ConflictError, TooManyTriesError
from kvlake.graveler import RangeInfo, RangeTombstone, Repository
from kvlake.operations.engines import EngineContext
from kvlake.operations.records import (
    Failure,
    Lock,
    Operation,
    Outcome,
    PathBatch,
    RangeBatch,
    RangePlan,
)
from kvlake.operations.renewal import HeldDeleteLock
from kvlake.operations.snapshots import committed_since, staged_span

log = logging.getLogger(__name__)


def skip_reason(lock: Lock) -> str:
    until = datetime.datetime.fromtimestamp(lock.expires, datetime.UTC).isoformat()
    return f"write-locked by {lock.owner_name!r} until {until}"


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
        held = HeldDeleteLock(self.context, operation, repository)
        held.renew()  # before the write locks are read: see kvlake/operations/renewal.py
        if isinstance(batch, RangeBatch):
            return self._process_range(operation, repository, number, batch, held)
        failures, todo, addresses = self._split_locked(repository, batch)
        failed = 0
        if todo and not operation.options.dry_run:
            failed_paths = self._delete(operation, repository, todo, addresses, held)
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
        self,
        operation: Operation,
        repository: Repository,
        number: int,
        batch: RangeBatch,
        held: HeldDeleteLock,
    ) -> Outcome:
        """A range batch: its staged objects one by one, each range's keys as one record."""
        ledger = self.context.ledger
        plan = batch.plan
        if plan is None:
            plan = self._plan_range(operation, repository, batch)
            batch = msgspec.structs.replace(batch, plan=plan)
            ledger.write_batch(operation.id, number, batch)
        failed_paths: list[tuple[str, str]] = []
        if not operation.options.dry_run:
            if plan.paths:
                failed_paths = self._delete(operation, repository, plan.paths, plan.addresses, held)
            if plan.tombstoned:
                failed_paths += self._tombstone_ranges(operation, repository, batch, plan, held)
        if failed_paths:
            failures = [(path, Failure(outcome="failed", reason=why)) for path, why in failed_paths]
            ledger.write_failures(operation.id, failures)
        failed = len(failed_paths)
        deleted = len(plan.paths) + plan.tombstoned - failed
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

    def _plan_range(
        self, operation: Operation, repository: Repository, batch: RangeBatch
    ) -> RangePlan:
        """Read the span's staged entries and locks (and, where there are any, the range
        keys they fall on); write the skips.

        The batch deletes what existed when enumeration found the span, as a path
        batch deletes the paths enumeration listed (issue 22 #6): a staged object is
        deleted one by one (its blob logged, or marked shared) if it was staged then
        or is at a range key that was not deleted then; a key deleted then is kept
        out of the records, whatever was restored or written there since; an object
        new in the span since stays. Write-locked objects are skipped, and their keys
        kept out of the records. With none of these in the span, every key of every
        range is hidden, and the ranges' recorded counts say how many without reading
        them.
        """
        context = self.context
        low, high = batch.span
        # One snapshot that held for the whole read (issue 22 #5): a commit and the token
        # drop after it, under a listing, read the rest of the token as empty.
        branch, listing = staged_span(context, repository, operation.branch, low, high + b"\0")
        staged = dict(listing)
        locked = context.locks.write_locked(repository, low.decode(), high.decode())
        existed = {path.encode() for path in batch.staged}
        gone = {path.encode() for path in batch.gone}
        keep_addresses = not operation.options.purge
        failures: list[tuple[str, Failure]] = []
        paths: list[str] = []
        addresses: list[str] = []
        ranged: set[bytes] | None = None  # the ranges' keys, read only if needed
        entries = committed_since(context, repository, operation.base_commit, batch.ranges, branch)
        entries.update(staged)
        for key, value in sorted(entries.items()):
            if value is None:
                continue  # deleted already
            if key not in existed:
                if key in gone:
                    continue  # deleted when enumeration found the span: restored since
                if ranged is None:
                    ranged = set(self._range_keys(repository, batch))
                if key not in ranged:
                    continue  # new in the span since enumeration found it
            path = key.decode()
            lock = locked.get(path)
            if lock is not None:
                failures.append((path, Failure(outcome="skipped", reason=skip_reason(lock))))
                continue
            paths.append(path)
            if keep_addresses:
                addresses.append(context.describe(value).address)
        tombstoned = sum(info.count for info in batch.ranges)
        keep: list[bytes] = []
        if staged or locked or gone:
            tombstoned = 0
            for key in self._range_keys(repository, batch):
                if key in gone:
                    keep.append(key)  # not this operation's to delete, whatever comes there
                    continue
                if key in staged:
                    continue
                lock = locked.get(key.decode())
                if lock is None:
                    tombstoned += 1
                    continue
                keep.append(key)
                failures.append(
                    (key.decode(), Failure(outcome="skipped", reason=skip_reason(lock)))
                )
        if failures:
            context.ledger.write_failures(operation.id, failures)
        return RangePlan(
            paths=paths,
            addresses=addresses,
            tombstoned=tombstoned,
            keep=keep,
            skipped=len(failures),
        )

    def _range_keys(self, repository: Repository, batch: RangeBatch) -> Iterator[bytes]:
        """Every key of the batch's ranges, in order (one range file in memory at a time)."""
        committed = self.context.graveler.committed
        for info in batch.ranges:
            yield from committed.range_columns(repository.storage_namespace, info.id).key_list()

    def _tombstone_ranges(
        self,
        operation: Operation,
        repository: Repository,
        batch: RangeBatch,
        plan: RangePlan,
        held: HeldDeleteLock,
    ) -> list[tuple[str, str]]:
        """Stage the ranges' records; where the token refuses them (it holds records of
        another commit's ranges, which ours could overlap), the same keys get one
        tombstone each. The paths that failed, with why."""
        graveler = self.context.graveler
        records = [_record(info, plan.keep) for info in batch.ranges]
        records = [  # a range whose every key is kept hides nothing: no record
            record
            for record, info in zip(records, batch.ranges, strict=True)
            if len(record.keep) < info.count
        ]
        if not records:
            return []
        base = graveler.get_commit(repository, operation.base_commit)
        try:
            graveler.stage_range_tombstones(
                repository, operation.branch, records, metarange_id=base.metarange_id
            )
            return []
        except ConflictError as exc:
            log.info(
                "bulk delete %s: tombstones instead of range tombstones (%s)", operation.id, exc
            )
            paths = [
                path
                for record in records
                for path in self._tombstoned_paths(repository, operation, record)
            ]
            return self._delete(operation, repository, paths, [], held)
        except TooManyTriesError as exc:
            why = str(exc)
            return [
                (path, why)
                for record in records
                for path in self._tombstoned_paths(repository, operation, record)
            ]

    def _tombstoned_paths(
        self, repository: Repository, operation: Operation, record: RangeTombstone
    ) -> list[str]:
        """The paths `record` was to hide: its range's keys but the kept and the staged."""
        graveler = self.context.graveler
        stop = record.max_key + b"\0"
        _, listing = staged_span(self.context, repository, operation.branch, record.min_key, stop)
        staged = {key for key, _ in listing}
        kept = set(record.keep)
        range_keys = graveler.committed.range_columns(repository.storage_namespace, record.range_id)
        return [
            key.decode() for key in range_keys.key_list() if key not in kept and key not in staged
        ]

    def _split_locked(
        self, repository: Repository, batch: PathBatch
    ) -> tuple[list[tuple[str, Failure]], list[str], list[str]]:
        paths = batch.paths
        if not paths:
            return [], [], []
        locked = self.context.locks.write_locked(repository, paths[0], paths[-1])
        if not locked:  # the usual case: every path, with no list rebuilt a path at a time
            return [], paths, batch.addresses
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
        self,
        operation: Operation,
        repository: Repository,
        paths: list[str],
        addresses: list[str],
        held: HeldDeleteLock,
    ) -> list[tuple[str, str]]:
        """Stage tombstones at `paths`; the paths that failed, with why."""
        deletion = self.context.deletion
        if addresses and deletion is not None:
            # purge=false: the blobs stay for garbage collection. Marked before the
            # tombstones log them, so a worker finds the mark when it checks them.
            deletion.mark_shared_many(repository.instance_uid, addresses)
        raced: list[tuple[str, str]] = []
        if held.lapsed():
            paths, raced = self._relocked(repository, paths)
        graveler = self.context.graveler
        if not paths:
            return raced
        try:
            graveler.delete_many(repository, operation.branch, [path.encode() for path in paths])
            return raced
        except TooManyTriesError as exc:
            log.info(
                "bulk delete %s: batch raced writers (%s); one path at a time", operation.id, exc
            )
        failed: list[tuple[str, str]] = raced
        for path in paths:
            try:
                graveler.delete(repository, operation.branch, path.encode())
            except TooManyTriesError as exc:
                failed.append((path, str(exc)))
        return failed

    def _relocked(
        self, repository: Repository, paths: list[str]
    ) -> tuple[list[str], list[tuple[str, str]]]:
        """`paths` split into those still free and those write-locked now, with why: read
        after the delete lock lapsed and was renewed, when writers may have come in."""
        locked = self.context.locks.write_locked(repository, paths[0], paths[-1])
        free = [path for path in paths if path not in locked]
        raced = [
            (path, f"{skip_reason(locked[path])}, taken while the delete lock had lapsed")
            for path in paths
            if path in locked
        ]
        return free, raced


def _record(info: RangeInfo, keep: list[bytes]) -> RangeTombstone:
    """The range tombstone of range `info`, keeping the locked keys (sorted `keep`)
    that fall in it."""
    kept = keep[bisect_left(keep, info.min_key) : bisect_right(keep, info.max_key)]
    return RangeTombstone(
        range_id=info.id, min_key=info.min_key, max_key=info.max_key, keep=tuple(kept)
    )
