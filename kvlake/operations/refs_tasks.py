"""Refs dumps and restores as operations (kinds `dump`, `restore`): lakeFS's dumpSubmit,
dumpStatus, restoreSubmit and restoreStatus over the one operation record.

A submit checks what lakeFS checks at submit (a restore needs a bare
repository and a well-formed dump id), creates the operation record and
returns its id; the caller wakes the runner, and whichever runner (a
server's or a `kvlake worker`'s) leases the record runs its `RefsTaskSteps`
through `drive` (kvlake/operations/steps.py: claim, heartbeat, finish). The
status is read from the record (kvlake/operations/tasks.py), in any process.

A process killed mid-task leaves the record leased; once the lease lapses
another runner claims it and runs it again:

- a dump simply runs again: it writes its manifest last, so a dump cut short
  is never taken for complete, and the new run writes a new dump id;
- a restore checks the whole dump before writing anything, and is marked
  `in_progress` just before it does. Resumed before that mark, or with the
  repository still bare, it runs again; resumed after it had started writing
  (the repository is no longer bare) it fails with a clear error: delete the
  repository and restore into a new bare one.

A missing or inconsistent dump is the task's error (as in lakeFS), not a
refusal at submit.
"""

from __future__ import annotations

import threading
from typing import Final

from kvlake.errors import InvalidInputError
from kvlake.graveler import Graveler, Repository
from kvlake.operations.driver import Driver
from kvlake.operations.engines import EngineContext
from kvlake.operations.ledger import Ledger
from kvlake.operations.records import Operation
from kvlake.operations.steps import repository_of
from kvlake.operations.tasks import submit_task

CUT_SHORT: Final = (
    "the restore was cut short while writing refs (its server process ended); the"
    " repository is no longer bare: delete it and restore into a new bare repository"
)


def submit_dump(ledger: Ledger, repository: Repository, *, creator: str, now: float) -> str:
    """Record a dump of the repository's refs; return its id (wake the runner next)."""
    return submit_task(ledger, repository, "dump", creator=creator, now=now)


def submit_restore(
    ledger: Ledger,
    graveler: Graveler,
    repository: Repository,
    dump_id: str,
    *,
    creator: str,
    now: float,
) -> str:
    """Record a restore of `dump_id` into the bare repository; return its id.

    Raises:
        InvalidInputError: a malformed dump id, or the repository is not bare
            (lakeFS refuses these at submit too); nothing is written.
    """
    dumps = graveler.dumps
    dumps.check_dump_id(dump_id)
    if not dumps.is_bare(repository):
        raise InvalidInputError("can only restore into a bare repository")  # lakeFS's text
    return submit_task(ledger, repository, "restore", creator=creator, now=now, dump_id=dump_id)


class RefsTaskSteps:
    """The steps of `dump` and `restore` operations (`drive` runs them)."""

    def __init__(self, context: EngineContext) -> None:
        self._graveler = context.graveler

    def work(self, operation: Operation, driver: Driver, stop: threading.Event) -> None:
        """Dump or restore, then record the dump id (`stop` is not read: one step)."""
        repository = repository_of(self._graveler, operation, f"before its {operation.kind} ran")
        dumps = self._graveler.dumps
        if operation.kind == "dump":
            dump_id = dumps.dump(repository).dump_id
        else:
            if operation.status == "in_progress" and not dumps.is_bare(repository):
                raise InvalidInputError(CUT_SHORT)
            dumps.load_manifest(repository, operation.dump_id)  # missing: the task's error
            driver.checkpoint(operation.id, status="in_progress")
            dump_id = dumps.restore(repository, operation.dump_id).dump_id
        driver.checkpoint(operation.id, dump_id=dump_id)
