"""The operations' records in the KV: operations, their work batches, failures.

Every change to an operation record is a compare-and-swap of the whole
record, so a checkpoint and the counters it carries move together or not at
all (invariant 5). Batches and failures live in a partition per operation,
dropped once it is finished.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import msgspec

from kvlake.kv import Predicate, Store, get_or_none, update
from kvlake.operations import keys
from kvlake.operations.records import (
    Batch,
    Counters,
    Failure,
    Operation,
    Outcome,
    decode_batch,
    decode_failure,
    decode_operation,
    encode,
)

MAX_PAGE = 1000


@dataclass(frozen=True)
class FailurePage:
    """A page of an operation's failed and skipped paths; `next` is "" on the last page."""

    failures: list[tuple[str, Failure]]
    next: str


class Ledger:
    """Operation records, batches and failures. Thread-safe; no in-process state but
    having seen the live index built."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._indexed = False
        """Whether this process saw the live index built (it stays built)."""

    # -- operation records ----------------------------------------------------------

    def create(self, operation: Operation) -> None:
        # Indexed before it exists: a crash in between leaves a key naming nothing, which
        # `unfinished` drops; never a record a runner would not visit.
        self.store.set(keys.LIVE, keys.live_key(operation.id), b"")
        self.store.set_if(
            keys.OPERATIONS, keys.operation_key(operation.id), encode(operation), None
        )

    def load(self, operation_id: str) -> tuple[Operation, Predicate]:
        """The record and a predicate for `set_if`. Raises OperationNotFoundError."""
        loaded = get_or_none(self.store, keys.OPERATIONS, keys.operation_key(operation_id))
        if loaded is None:
            raise keys.not_found(operation_id)
        return decode_operation(loaded[0]), loaded[1]

    def update(
        self, operation_id: str, change: Callable[[Operation], Operation | None]
    ) -> Operation:
        """Apply `change` by compare-and-swap, again on what a racing writer wrote when it
        won (None: leave it as it is); the record as it is now.

        Raises:
            OperationNotFoundError: no such operation.
            TooManyTriesError: racing writers won every time (kvlake.kv.MAX_TRIES).
        """

        def apply(raw: bytes | None) -> bytes | None:
            if raw is None:
                return None  # no record: said below
            updated = change(decode_operation(raw))
            return None if updated is None else encode(updated)

        key = keys.operation_key(operation_id)
        what = f"updating operation {operation_id}"
        written = update(self.store, keys.OPERATIONS, key, apply, what=what)
        if written is None:
            raise keys.not_found(operation_id)
        return decode_operation(written)

    def list(self) -> Iterator[Operation]:
        """Every operation record, oldest first (ids sort by creation time)."""
        start = keys.operation_prefix()
        with self.store.scan(keys.OPERATIONS, start) as scan:
            for key, raw in scan:
                if not keys.is_operation_key(key):
                    return
                yield decode_operation(raw)

    def unfinished(self) -> Iterator[Operation]:
        """The records a runner must visit, oldest first: every unfinished operation, and
        finished ones not yet cleaned (`retire` takes them out). Reads the live index and
        those records only (one `get_many` per page), not the finished ones kept for their
        retention; the first call on a store written before the index builds it."""
        self._build_live_index()
        with self.store.scan(keys.LIVE) as scan:
            page: list[str] = []
            for key, _ in scan:
                page.append(key.decode())
                if len(page) == MAX_PAGE:
                    yield from self._live_page(page)
                    page = []
            yield from self._live_page(page)

    def _live_page(self, operation_ids: Sequence[str]) -> Iterator[Operation]:
        if not operation_ids:
            return
        found = self.store.get_many(keys.OPERATIONS, [keys.operation_key(i) for i in operation_ids])
        for operation_id in operation_ids:
            raw = found.get(keys.operation_key(operation_id))
            if raw is None:  # its creation was cut short, or it was removed: nothing to visit
                self.retire(operation_id)
                continue
            yield decode_operation(raw)

    def retire(self, operation_id: str) -> None:
        """Take a finished, cleaned operation out of the runners' index."""
        self.store.delete(keys.LIVE, keys.live_key(operation_id))

    def _build_live_index(self) -> None:
        """Index the unfinished and uncleaned records of a store written before the index
        (once: a marker says it was done). Creations meanwhile index themselves; a finished
        record indexed here after a runner retired it is retired again on the next pass."""
        if self._indexed:
            return
        if get_or_none(self.store, keys.OPERATIONS, keys.LIVE_INDEX_BUILT) is None:
            for operation in self.list():
                if not (operation.finished and operation.cleaned):
                    self.store.set(keys.LIVE, keys.live_key(operation.id), b"")
            self.store.set(keys.OPERATIONS, keys.LIVE_INDEX_BUILT, b"")
        self._indexed = True

    # -- batches ---------------------------------------------------------------------

    def write_batch(self, operation_id: str, number: int, batch: Batch) -> None:
        self.store.set(keys.batches_partition(operation_id), keys.batch_key(number), encode(batch))

    def read_batch(self, operation_id: str, number: int) -> Batch:
        raw, _ = self.store.get(keys.batches_partition(operation_id), keys.batch_key(number))
        return decode_batch(raw)

    def record_outcome(
        self, operation_id: str, number: int, batch: Batch, outcome: Outcome
    ) -> None:
        """Store a processed batch's outcome (before `fold` counts it). Idempotent."""
        self.write_batch(operation_id, number, msgspec.structs.replace(batch, outcome=outcome))

    def fold(
        self, operation_id: str, *, lease: Callable[[Operation], Operation] | None = None
    ) -> Operation:
        """Count every processed batch right after `done` into the counters, in order.

        One compare-and-swap moves `done` and the counters together, so a batch
        is counted exactly once whoever folds it and however often (invariant 5).
        `lease` may renew the holder's lease in the same swap.
        """

        def change(current: Operation) -> Operation | None:
            counters, done = current.counters, current.done
            while done < current.batches:
                batch = self.read_batch(operation_id, done)
                outcome = batch.outcome
                if outcome is None:
                    break
                # A range batch corrects what enumeration counted, only ever upwards.
                found = batch.objects if outcome.objects is None else outcome.objects
                counters = Counters(
                    enumerated=counters.enumerated + found - batch.objects,
                    deleted=counters.deleted + outcome.deleted,
                    failed=counters.failed + outcome.failed,
                    skipped=counters.skipped + outcome.skipped,
                )
                done += 1
            if done == current.done:
                return None
            updated = msgspec.structs.replace(current, counters=counters, done=done)
            return lease(updated) if lease is not None else updated

        return self.update(operation_id, change)

    # -- failures ---------------------------------------------------------------------

    def write_failures(self, operation_id: str, failures: Iterable[tuple[str, Failure]]) -> None:
        self.store.set_many(
            keys.failures_partition(operation_id),
            ((path.encode(), encode(failure)) for path, failure in failures),
        )

    def failures(self, operation_id: str, *, after: str = "", amount: int = 100) -> FailurePage:
        """A page of failed and skipped paths in path order, after `after`."""
        amount = max(1, min(amount, MAX_PAGE))
        start = after.encode() + b"\0" if after else b""
        page: list[tuple[str, Failure]] = []
        more = False
        with self.store.scan(keys.failures_partition(operation_id), start) as scan:
            for key, raw in scan:
                if len(page) == amount:
                    more = True
                    break
                page.append((key.decode(), decode_failure(raw)))
        return FailurePage(page, page[-1][0] if more else "")

    def drop_work(self, operation_id: str) -> None:
        """Drop the batches of a finished operation (its failures stay: they are its report)."""
        self.store.drop_partition(keys.batches_partition(operation_id))

    def remove(self, operation_id: str) -> None:
        """Remove a finished operation past its retention: its batches and failures, then
        its record (last, so a removal cut short is found and done again)."""
        self.drop_work(operation_id)
        self.store.drop_partition(keys.failures_partition(operation_id))
        self.retire(operation_id)
        self.store.delete(keys.OPERATIONS, keys.operation_key(operation_id))
