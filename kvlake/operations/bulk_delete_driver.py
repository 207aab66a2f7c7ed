"""The bulk-delete driver: one bulk delete's run, whichever engine processes its batches.

Engines differ only in where and how they process work batches (this thread,
Spark tasks, a thread pool in the tests): each is a `BatchEngine`
(kvlake/operations/engines.py) that `BulkDeleteDriver` holds and calls, wave by
wave, between the steps every engine shares, which live here once.

The run is a sequence of checkpoints, each one compare-and-swap of the
operation record, so a process killed at any point leaves a record another
(or the restarted) server resumes from (invariant 5):

1. claim: take the lease (an expired one is taken over);
2. take the operation's delete lock (uploads under the prefix are refused);
3. enumerate: stream the branch listing (committed ranges and staging,
   through `Graveler.list`) from the cursor, write a batch record per
   `batch_size` matching paths, and advance the cursor with it, renewing the
   lease and the delete lock with each batch written and every third of the
   lease time while listing. A batch number is written once (compare-and-swap
   on absence): a resumed enumeration that finds one adopts it and lists on
   after its last path. Before a batch is written, the listing's snapshot is
   checked: if the branch no longer holds its staging tokens and the
   token-drop delay may have passed, what was listed since the cursor is
   dropped and listed again from a fresh snapshot (a dropped token reads as
   empty, silently);
4. process the batches a wave at a time (`BatchEngine.process`: each batch with
   `BatchProcessor`, which renews the delete lock before it reads the batch's
   write locks, in any order, anywhere), then fold the wave's outcomes into the
   counters (`Ledger.fold`) and renew the lease;
5. commit if asked, then finish: status, lease and delete lock released, the
   batches dropped (the failures stay as the operation's report).

Cancellation is read at each wave boundary. Memory holds one batch.
"""

from __future__ import annotations

import logging
import threading
from bisect import bisect_left
from dataclasses import dataclass

import msgspec

from kvlake.errors import (
    BranchNotFoundError,
    NoChangesError,
    PreconditionFailedError,
    ProtectedBranchError,
    RepositoryNotFoundError,
)
from kvlake.graveler import RangeInfo, Repository, ResolvedRef, prefix_end
from kvlake.kv import get_or_none
from kvlake.operations import keys
from kvlake.operations.bulk_delete import matches
from kvlake.operations.driver import LostLeaseError
from kvlake.operations.engines import BatchEngine, EngineContext
from kvlake.operations.records import (
    Batch,
    Counters,
    Filters,
    Operation,
    OperationStatus,
    PathBatch,
    RangeBatch,
    decode_batch,
    encode,
)
from kvlake.operations.snapshots import committed_since, snapshot_holds, staged_span

log = logging.getLogger(__name__)

OPERATION_METADATA_KEY = "kvlake.bulk_delete"
"""Commit metadata naming the operation whose deletion a commit records."""


RANGES_PER_BATCH = 32
"""Whole committed ranges one range batch takes (about 130,000 objects at 4,096 a
range). A range batch costs a range-file read per range but a fixed handful of KV
writes, so taking several makes those writes rare, while a batch stays a few seconds
of work: the boundary where a cancel lands and progress is recorded."""


@dataclass
class HeldOperation:
    """An operation record as its holder last wrote it, and its repository: what the
    driver passes between its steps."""

    operation: Operation
    repository: Repository
    ranges: list[RangeInfo] | None = None
    """The base commit's ranges, once enumeration read them."""
    renewed: float = 0.0
    """When the lease and the delete lock were last renewed."""


class BulkDeleteDriver:
    """Runs bulk deletes in the calling thread, their batches processed by `engine`.

    An `Engine` (kvlake/operations/engines.py) for every bulk-delete engine: the
    local one (kvlake/operations/local.py) and Spark's (kvlake/pipelines/bulk_delete.py)
    are this driver over their `BatchEngine`. Thread-safe; no in-process state.
    """

    def __init__(self, context: EngineContext, engine: BatchEngine) -> None:
        self.context = context
        self.engine = engine
        self.driver = context.driver()

    def run(self, operation_id: str, stop: threading.Event) -> Operation:
        """Run the operation until it is finished, cancelled, or `stop` is set.

        Returns the record as last seen. A record another live server holds is
        left alone (returned as is).
        """
        operation = self.claim(operation_id)
        if operation.owner != self.context.owner or operation.finished:
            return operation
        try:
            repository = self._repository(operation)
            held = HeldOperation(operation, repository, renewed=operation.last_updated_at)
            if not operation.options.dry_run:
                self._lock(held)
            if not operation.enumerated:
                self._enumerate(held, stop)
            if held.operation.enumerated:
                self._process(held, stop)
            if stop.is_set() or not self._ends(held.operation):
                return held.operation
            if held.operation.cancel_requested:
                return self.finish(held.operation, "cancelled")
            if held.operation.options.commit and not held.operation.options.dry_run:
                self._commit(held)
            return self.finish(held.operation, _final_status(held.operation))
        except LostLeaseError:
            return self.context.ledger.load(operation_id)[0]
        except (RepositoryNotFoundError, BranchNotFoundError, ProtectedBranchError) as exc:
            return self.finish(self.context.ledger.load(operation_id)[0], "failed", str(exc))

    # -- lease ------------------------------------------------------------------------

    def claim(self, operation_id: str) -> Operation:
        """Take the operation's lease if it is free, expired or already ours (`Driver.claim`)."""
        return self.driver.claim(operation_id)

    def _checkpoint(self, held: HeldOperation, **changes: object) -> None:
        """Change the record (and renew the lease) by compare-and-swap, if still ours."""
        held.operation = self.driver.checkpoint(held.operation.id, **changes)
        held.renewed = self.context.clock()
        if not held.operation.options.dry_run:
            self._lock(held)  # the lock lives as long as the lease: see kvlake/operations/locks.py

    def _keep_alive(self, held: HeldOperation) -> None:
        """Renew the lease and the delete lock when a third of the lease time has passed
        since the last checkpoint: an enumeration that lists (or filters out) many
        objects between two batches must not outlive either."""
        if self.context.clock() - held.renewed >= self.context.settings.lease_time / 3:
            self._checkpoint(held)

    def _lock(self, held: HeldOperation) -> None:
        operation = held.operation
        expires = self.context.clock() + self.context.settings.lease_time
        self.context.locks.take_delete_lock(
            held.repository, operation.id, operation.branch, operation.prefix, expires
        )

    def _repository(self, operation: Operation) -> Repository:
        repository = self.context.graveler.get_repository(operation.repository)
        if repository.instance_uid != operation.instance_uid:
            raise RepositoryNotFoundError(
                f"repository {operation.repository!r} was deleted (and maybe created again)"
                " after the operation started; nothing more to delete"
            )
        return repository

    # -- enumeration ------------------------------------------------------------------

    def _enumerate(self, held: HeldOperation, stop: threading.Event) -> None:
        """List the branch under the prefix into batch records, from the cursor on."""
        while not held.operation.enumerated:
            if stop.is_set() or held.operation.cancel_requested:
                return
            self._enumerate_from_cursor(held, stop)

    def _enumerate_from_cursor(self, held: HeldOperation, stop: threading.Event) -> None:
        """List on from the cursor up to the next whole committed range, then write the
        run of whole ranges there as one range batch (their objects are neither listed
        nor read here)."""
        operation = held.operation
        context = self.context
        prefix = operation.prefix.encode()
        cursor = operation.cursor
        start = cursor.encode() + b"\0" if cursor is not None else prefix
        whole = self._next_whole_ranges(held, start)
        filters, keep_addresses = operation.options.filters, not operation.options.purge
        needs_info = keep_addresses or filters != Filters()
        paths: list[str] = []
        addresses: list[str] = []
        last = cursor
        snapshot = context.graveler.resolve_ref(held.repository, operation.branch)
        taken = context.clock()
        listing = context.graveler.list(
            held.repository,
            snapshot,
            start=start,
            stop=whole[0].min_key if whole else prefix_end(prefix),
        )
        for key, value in listing:
            self._keep_alive(held)
            path = key.decode()
            last = path
            if needs_info:  # decoding every entry costs a third of a plain enumeration
                info = context.describe(value)
                if not matches(filters, path, info):
                    continue
                if keep_addresses:
                    addresses.append(info.address)
            paths.append(path)
            if len(paths) == context.settings.batch_size:
                if not self._listing_holds(held, snapshot, taken):
                    return  # staged entries may be gone from it: list again from the cursor
                if not self._write_paths(held, paths, addresses, last, final=False):
                    return  # adopted another writer's batch: list again from its end
                paths, addresses = [], []
                if stop.is_set() or held.operation.cancel_requested:
                    return
        if not self._listing_holds(held, snapshot, taken):
            return  # as above: nothing of this listing is written
        if not whole:
            self._write_paths(held, paths, addresses, last, final=True)
            return
        if paths and not self._write_paths(held, paths, addresses, last, final=False):
            return
        ranged = self._range_batch(held, whole)
        self._write_batch(held, ranged, ranged.last_path, final=False)

    def _listing_holds(self, held: HeldOperation, snapshot: ResolvedRef, taken: float) -> bool:
        """Whether a listing of `snapshot` (the branch resolved at `taken`) has read every
        staged entry it met so far (`snapshot_holds`).

        A staging token is dropped `token_drop_delay` after the branch stopped
        referencing it (a commit, a reset), and a listing that outlives the drop reads
        the rest of it as empty, silently (issue 22 #5); if it may have, the caller
        drops what it listed since its cursor and lists again from a fresh snapshot.
        """
        return snapshot_holds(self.context, held.repository, held.operation.branch, snapshot, taken)

    def _range_batch(self, held: HeldOperation, whole: list[RangeInfo]) -> RangeBatch:
        """The range batch of a run of whole ranges, with what staging holds in their span
        now (one staged scan, not the range files): what the operation found there.

        Its estimate is the ranges' recorded sizes less the deletions staged in the
        span: a lower bound of what processing finds (it also finds the objects staged
        there), so a fold only ever corrects the count upwards: counting a deletion
        staged before the operation here, then taking it back, sent enumerated_count
        backwards (invariant 5).
        """
        low, high = whole[0].min_key, whole[-1].max_key
        operation = held.operation
        # Read whole from a snapshot that held (issue 22 #5): a listing open across a
        # commit and the token drop after it reads the rest of the token as empty.
        snapshot, listing = staged_span(
            self.context, held.repository, operation.branch, low, high + b"\0"
        )
        since = committed_since(
            self.context, held.repository, operation.base_commit, whole, snapshot
        )  # staged when the drop's commit took them: they count as found staged
        found = dict(listing)
        for key, value in since.items():
            found.setdefault(key, value)
        staged: list[str] = []
        gone: list[str] = []
        for key, value in sorted(found.items()):
            (gone if value is None else staged).append(key.decode())
        estimate = max(0, sum(info.count for info in whole) - len(gone))
        return RangeBatch(ranges=whole, estimate=estimate, staged=staged, gone=gone)

    def _next_whole_ranges(self, held: HeldOperation, start: bytes) -> list[RangeInfo]:
        """The run of ranges of the base commit from the first at or after `start`, as
        long as they lie wholly under the prefix (at most RANGES_PER_BATCH); none when
        filters must see every object."""
        operation = held.operation
        if operation.options.filters != Filters():
            return []
        if held.ranges is None:
            graveler = self.context.graveler
            if not operation.base_commit:
                head = graveler.get_branch(held.repository, operation.branch).commit_id
                self._checkpoint(held, base_commit=head)
            commit = graveler.get_commit(held.repository, held.operation.base_commit)
            namespace = held.repository.storage_namespace
            held.ranges = graveler.committed.ranges(namespace, commit.metarange_id)
        index = bisect_left(held.ranges, start, key=lambda info: info.min_key)
        prefix = operation.prefix.encode()
        run: list[RangeInfo] = []
        for info in held.ranges[index : index + RANGES_PER_BATCH]:
            if not (info.min_key.startswith(prefix) and info.max_key.startswith(prefix)):
                break
            run.append(info)
        return run

    def _write_batch(
        self,
        held: HeldOperation,
        batch: Batch | None,
        cursor: str | None,
        *,
        final: bool,
    ) -> bool:
        """Write the next batch once and advance the cursor with it; False if an earlier
        try wrote a different batch under that number (adopted: the cursor moves to its end)."""
        operation = held.operation
        number = operation.batches
        adopted = False
        if batch is not None:
            existing = self._write_once(operation.id, number, batch)
            if existing is not None and existing != batch:
                batch, adopted = existing, True
                cursor = batch.last_path
        counted = 0 if batch is None else batch.objects
        counters = operation.counters
        self._checkpoint(
            held,
            batches=number + (0 if batch is None else 1),
            cursor=cursor,
            enumerated=final and not adopted,
            status="in_progress",
            counters=msgspec.structs.replace(counters, enumerated=counters.enumerated + counted),
        )
        return not adopted

    def _write_paths(
        self,
        held: HeldOperation,
        paths: list[str],
        addresses: list[str],
        cursor: str | None,
        *,
        final: bool,
    ) -> bool:
        batch = PathBatch(paths=paths, addresses=addresses) if paths else None
        return self._write_batch(held, batch, cursor, final=final)

    def _write_once(self, operation_id: str, number: int, batch: Batch) -> Batch | None:
        """Write batch `number` if absent; the batch already there otherwise."""
        partition, key = keys.batches_partition(operation_id), keys.batch_key(number)
        try:
            self.context.ledger.store.set_if(partition, key, encode(batch), None)
            return None
        except PreconditionFailedError:
            there = get_or_none(self.context.ledger.store, partition, key)
            if there is None:  # dropped meanwhile: the operation finished elsewhere
                raise LostLeaseError from None
            return decode_batch(there[0])

    # -- processing -------------------------------------------------------------------

    def _process(self, held: HeldOperation, stop: threading.Event) -> None:
        """Hand the engine the batches not done yet, a wave at a time, and count each
        wave with one fold (which renews the lease), reading cancellation between waves."""
        ledger = self.context.ledger
        while held.operation.done < held.operation.batches:
            if stop.is_set() or held.operation.cancel_requested:
                return
            first = held.operation.done
            wave = range(first, min(held.operation.batches, first + max(1, self.engine.wave)))
            # Each batch renews the delete lock itself, before it reads its write locks
            # (kvlake/operations/renewal.py), wherever it runs.
            self.engine.process(held.operation, held.repository, wave)
            held.operation = ledger.fold(held.operation.id, lease=self._renew)

    def _renew(self, updated: Operation) -> Operation:
        """Renew the lease in the swap that counts a batch; only its holder may count."""
        return self.driver.renewed(updated)

    def _ends(self, operation: Operation) -> bool:
        done = operation.enumerated and operation.done == operation.batches
        return done or operation.cancel_requested

    # -- the end ------------------------------------------------------------------------

    def _commit(self, held: HeldOperation) -> None:
        operation = held.operation
        if operation.commit_id:
            return
        self._checkpoint(held, committing=True)
        graveler = self.context.graveler
        repository = held.repository
        commit_id = self._our_head(repository, operation)
        if not commit_id:
            options = operation.options
            metadata = {**options.commit_metadata, OPERATION_METADATA_KEY: operation.id}
            message = options.commit_message or f"Bulk delete of {operation.prefix or '/'!s}"
            try:
                commit_id = graveler.commit(
                    repository,
                    operation.branch,
                    committer=operation.created_by,
                    message=message,
                    metadata=metadata,
                )
            except NoChangesError:
                commit_id = self._our_head(repository, operation)
        self._checkpoint(held, commit_id=commit_id)

    def _our_head(self, repository: Repository, operation: Operation) -> str:
        """The branch's head commit if it records this operation (a commit before a crash)."""
        graveler = self.context.graveler
        head = graveler.get_branch(repository, operation.branch).commit_id
        commit = graveler.get_commit(repository, head)
        return head if commit.metadata.get(OPERATION_METADATA_KEY) == operation.id else ""

    def finish(self, operation: Operation, status: OperationStatus, error: str = "") -> Operation:
        """Record the final status, then release the delete lock and drop the batches."""
        context = self.context
        finished = self.driver.finish(operation.id, status, error)
        context.locks.release_delete_lock(operation.instance_uid, operation.id)
        context.ledger.drop_work(operation.id)
        c = finished.counters
        log.info(
            "bulk delete %s %s: %s %d of %d, %d failed, %d skipped",
            operation.id,
            finished.status,
            "would delete (dry run)" if finished.options.dry_run else "deleted",
            c.deleted,
            c.enumerated,
            c.failed,
            c.skipped,
        )
        return finished


def _final_status(operation: Operation) -> OperationStatus:
    counters: Counters = operation.counters
    return "completed_with_errors" if counters.failed or counters.skipped else "completed"
