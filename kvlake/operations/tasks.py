"""lakeFS's background tasks as views over operation records: a submit creates the
record, a status call reads it back in lakeFS's terms.

lakeFS answers its task calls (dumpSubmit/dumpStatus, restoreSubmit/restoreStatus,
prepareGarbageCollectionCommitsAsync/Status) with a task id and later a
"done, with this result or this error". Here the task id is the id of an
operation record of the task's kind, so the same work also shows in
`GET /api/v1/operations`, can be cancelled there, and is run by whichever
runner (a server's or a `kvlake worker`'s) leases it. The status is read from
the record, in any process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kvlake import ids
from kvlake.errors import NotFoundError, TaskNotFoundError
from kvlake.graveler import Repository
from kvlake.operations.ledger import Ledger
from kvlake.operations.records import Operation, OperationKind

CANCELLED: Final = "the task was cancelled"
"""A task's error once it was cancelled (`DELETE /api/v1/operations/{id}`): lakeFS's
task status has no such state, so it reads as done with this error."""


@dataclass(frozen=True)
class TaskStatus:
    """A task as lakeFS's status calls report it."""

    done: bool
    update_time: float
    error: str
    dump_id: str
    """The dump written (a completed dump) or read (a restore); '' for other kinds."""


def submit_task(
    ledger: Ledger,
    repository: Repository,
    kind: OperationKind,
    *,
    creator: str,
    now: float,
    dump_id: str = "",
) -> str:
    """Record a task of `kind` on the repository; return its id (wake the runner next)."""
    operation = Operation(
        id=ids.new_uid(),
        kind=kind,
        repository=repository.name,
        instance_uid=repository.instance_uid,
        dump_id=dump_id,
        created_by=creator.split("#", 1)[0],
        creator=creator,
        created_at=now,
        last_updated_at=now,
    )
    ledger.create(operation)
    return operation.id


def task_status(
    ledger: Ledger, repository: Repository, kind: OperationKind, task_id: str
) -> TaskStatus:
    """The task as its record stands.

    Raises:
        TaskNotFoundError: no task of this kind with this id in the repository.
    """
    try:
        operation = ledger.load(task_id)[0]
    except NotFoundError:
        operation = None
    if (
        operation is None
        or operation.kind != kind
        or (operation.repository, operation.instance_uid)
        != (repository.name, repository.instance_uid)
    ):
        raise TaskNotFoundError(
            f"no {kind} task {task_id!r} in repository {repository.name!r}; pass the id"
            " the submit call answered"
        )
    error = operation.error
    if operation.status == "cancelled" and not error:
        error = CANCELLED
    return TaskStatus(
        done=operation.finished,
        update_time=operation.last_updated_at,
        error=error,
        dump_id=operation.dump_id,
    )
