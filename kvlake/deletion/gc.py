"""What a garbage-collection run hands to the in-use check: its marks, candidates and start.

A GC run computes the set of addresses its retained commits and live staging
reference (the marks), lists the namespace, and takes every other address as a
`garbage_collection` candidate. Before a candidate is deleted it is checked
again (kvlake/deletion/checks.py): against the run's marks, live staging, and
copies made since the run started (a copy shares an older address, and may be
committed before the check looks at staging).

Two ways to hand over candidates:
- `log_candidates` appends them to the deletion log for its workers; the marks
  must then be saved with `GcMarks` (one KV key per address, under
  `deletion_gc/<run id>`, first a NUL-prefixed header so no address collides).
- The Spark GC job (kvlake/pipelines/gc/collector.py) computes candidates as listed minus
  marked in a distributed anti-join and checks them itself with
  `ReferenceChecker` and `SubtractedMarks`: nothing is stored per address.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final, Protocol

from kvlake.deletion.log import DeletionLog
from kvlake.deletion.records import PendingDelete
from kvlake.errors import InvalidInputError, NotFoundError
from kvlake.graveler import Repository
from kvlake.kv import Store, get_or_none

GC_PREFIX: Final = b"deletion_gc/"
_HEADER: Final = b"\0run"
RUN_PROPERTY: Final = "gc_run"
"""The property of a `garbage_collection` record that names its run."""
STARTED_PROPERTY: Final = "gc_started"
"""The property giving the run's start (seconds): copies made since keep their address."""


class MarkSet(Protocol):
    """Answers which candidate addresses a GC run marked as referenced."""

    def marked(self, run_id: str, addresses: Iterable[str]) -> set[str]: ...


class SubtractedMarks:
    """The marks of a run whose candidates are listed minus marked: none of them is marked.

    The Spark job subtracts its marks in an anti-join before any candidate
    exists, so looking each one up again would find nothing; what changed since
    the marks were taken is what the in-use check reads fresh.
    """

    def marked(self, run_id: str, addresses: Iterable[str]) -> set[str]:
        marks_partition(run_id)
        return set()


def gc_records(
    log: DeletionLog,
    repository: Repository,
    run_id: str,
    started: float,
    addresses: Iterable[str],
) -> Iterator[PendingDelete]:
    """A `garbage_collection` record per candidate, naming the run and when it started."""
    marks_partition(run_id)  # refuse a bad id before making anything
    properties = {RUN_PROPERTY: run_id, STARTED_PROPERTY: repr(started)}
    for address in addresses:
        yield log.new_record(repository, address, "garbage_collection", properties=properties)


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
        return get_or_none(self._store, marks_partition(run_id), _HEADER) is not None

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
        wanted = {address.encode(): address for address in addresses}
        return {wanted[key] for key in self._store.get_many(partition, wanted)}

    def drop(self, run_id: str) -> None:
        """Forget a finished run's marks (header first, so no half set looks complete)."""
        partition = marks_partition(run_id)
        self._store.delete(partition, _HEADER)
        self._store.drop_partition(partition)


def log_candidates(
    log: DeletionLog,
    repository: Repository,
    run_id: str,
    addresses: Iterable[str],
    *,
    started: float,
) -> int:
    """Append a `garbage_collection` record per candidate address of the run; return the count."""
    return log.append(gc_records(log, repository, run_id, started, addresses))
