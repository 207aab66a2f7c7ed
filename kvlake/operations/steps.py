"""The one small interface a kind's work plugs into, and the driver loop that calls it.

Refs dumps and restores, imports and GC commit preparations all had the same
shape, written out in each engine: claim the record, leave it alone if it is
finished or another live process holds it, honour a cancel asked before the
work began, do the work under a `Heartbeat`, and end the record: `completed`,
`cancelled`, `failed` with the error as is (a `KvlakeError`: a missing dump,
a refused publish) or with `INTERNAL_ERROR` (anything else, logged), or left
unfinished when this process stops or lost the lease (another one resumes it).

Now a kind gives only its `Steps` (the work between claim and finish, with
the record as claimed and the driver to checkpoint through) and `drive` does
the rest, the same for every kind. `StepsEngine` makes a `Steps` the `Engine`
the runner calls (kvlake/operations/engines.py builds one per kind in
`_STEPS`). A step that sees a cancel at a boundary raises `Cancelled`; one
that sees `stop` raises `Stopped`.
"""

from __future__ import annotations

import logging
import threading
from typing import Final, Protocol

from kvlake.errors import InvalidInputError, KvlakeError, NotFoundError
from kvlake.graveler import Graveler, Repository
from kvlake.operations.driver import Driver, LostLeaseError
from kvlake.operations.heartbeat import Heartbeat
from kvlake.operations.records import Operation

log = logging.getLogger(__name__)

INTERNAL_ERROR: Final = "internal error; see the server log"
"""What a record says of an unexpected failure; the details go to the server log."""


class Cancelled(Exception):
    """The record asks to stop: end it `cancelled` (raised by steps at a boundary)."""


class Stopped(Exception):
    """This process is stopping: leave the record; the lease lapses and another resumes."""


class Steps(Protocol):
    """What a kind does between the driver's claim and its finish."""

    def work(self, operation: Operation, driver: Driver, stop: threading.Event) -> None:
        """Do the work of `operation` (the record as claimed), checkpointing through
        `driver`; raise `Cancelled` or `Stopped` where a boundary sees either, a
        `KvlakeError` to fail the record with its text."""


def drive(driver: Driver, operation_id: str, stop: threading.Event, steps: Steps) -> Operation:
    """Claim the operation, run its steps under a heartbeat, and end its record.

    Returns the record as last seen; one that is finished, or that another live
    process holds, is returned unchanged.
    """
    operation = driver.claim(operation_id)
    if operation.owner != driver.owner or operation.finished:
        return operation
    if operation.cancel_requested:
        return driver.finish(operation_id, "cancelled")
    try:
        with Heartbeat(driver, operation_id):
            steps.work(operation, driver, stop)
    except Cancelled:
        return driver.finish(operation_id, "cancelled")
    except (Stopped, LostLeaseError):
        return driver.ledger.load(operation_id)[0]
    except KvlakeError as exc:  # said as is in the record: a missing dump, a refused publish
        log.warning(
            "%s %s of %s failed: %s", operation.kind, operation_id, operation.repository, exc
        )
        return driver.finish(operation_id, "failed", str(exc))
    except Exception:  # the work's last word: recorded for the status call, then logged
        log.exception("%s %s of %s failed", operation.kind, operation_id, operation.repository)
        return driver.finish(operation_id, "failed", INTERNAL_ERROR)
    return driver.finish(operation_id, "completed")


class StepsEngine:
    """The `Engine` of a kind given by its steps: `run` is `drive` over them."""

    def __init__(self, driver: Driver, steps: Steps) -> None:
        self._driver = driver
        self._steps = steps

    def run(self, operation_id: str, stop: threading.Event) -> Operation:
        """Run the operation to its end, a cancel, or `stop` (see `drive`)."""
        return drive(self._driver, operation_id, stop, self._steps)


def repository_of(graveler: Graveler, operation: Operation, gone: str) -> Repository:
    """The operation's repository, the very instance it was created in.

    Raises:
        InvalidInputError: the repository was deleted (or deleted and created again);
            `gone` ends the message (what that means for this kind).
    """
    try:
        repository = graveler.get_repository(operation.repository)
    except NotFoundError:
        repository = None
    if repository is None or repository.instance_uid != operation.instance_uid:
        raise InvalidInputError(f"repository {operation.repository!r} was deleted {gone}")
    return repository
