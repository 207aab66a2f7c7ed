"""What a garbage-collection run hands to the deletion log: its mark set and its candidates.

A GC run (kvlake/pipelines, later) computes the set of addresses its
retained commits reference (the marks), lists the namespace, and logs every
other address as a `garbage_collection` candidate. Workers check each
candidate against the run's marks again, plus live staging, before deleting:
a candidate the run itself marked is never deleted, whatever wrote the record.
The marks live in `deletion_gc/<run id>`, first a header key (NUL-prefixed, so
no address can collide: addresses never contain NUL), then one key per address.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

from kvlake.deletion.log import DeletionLog
from kvlake.deletion.records import PendingDelete
from kvlake.errors import InvalidInputError, KeyNotFoundError, NotFoundError
from kvlake.graveler import Repository
from kvlake.kv import Store

GC_PREFIX: Final = b"deletion_gc/"
_HEADER: Final = b"\0run"
RUN_PROPERTY: Final = "gc_run"
"""The property of a `garbage_collection` record that names its run."""


def marks_partition(run_id: str) -> bytes:
    if not run_id or "/" in run_id or "\0" in run_id:
        raise InvalidInputError(f"GC run id {run_id!r} is invalid; use a non-empty id without '/'")
    return GC_PREFIX + run_id.encode()


class GcMarks:
    """The mark sets of GC runs. Thread-safe; state lives in the KV."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def save(self, run_id: str, addresses: Iterable[str]) -> None:
        """Store the run's marks (streamed); the header goes last, so a partial save is unusable."""
        partition = marks_partition(run_id)
        self._store.set_many(partition, ((a.encode(), b"") for a in addresses))
        self._store.set(partition, _HEADER, b"")

    def exists(self, run_id: str) -> bool:
        try:
            self._store.get(marks_partition(run_id), _HEADER)
        except KeyNotFoundError:
            return False
        return True

    def marked(self, run_id: str, addresses: Iterable[str]) -> set[str]:
        """Which of `addresses` the run marked as referenced.

        Raises:
            NotFoundError: the run saved no complete mark set.
        """
        if not self.exists(run_id):
            raise NotFoundError(
                f"GC run {run_id!r} has no saved mark set; its candidates cannot be checked,"
                " run garbage collection again"
            )
        partition = marks_partition(run_id)
        found: set[str] = set()
        for address in addresses:
            try:
                self._store.get(partition, address.encode())
            except KeyNotFoundError:
                continue
            found.add(address)
        return found

    def drop(self, run_id: str) -> None:
        """Forget a finished run's marks (header first, so no half set looks complete)."""
        partition = marks_partition(run_id)
        self._store.delete(partition, _HEADER)
        self._store.drop_partition(partition)


def log_candidates(
    log: DeletionLog, repository: Repository, run_id: str, addresses: Iterable[str]
) -> int:
    """Append a `garbage_collection` record per candidate address of the run; return the count."""
    marks_partition(run_id)  # refuse a bad id before writing anything

    def records() -> Iterator[PendingDelete]:
        for address in addresses:
            yield log.new_record(
                repository,
                address,
                "garbage_collection",
                properties={RUN_PROPERTY: run_id},
            )

    return log.append(records())
