"""lakeFS's prepareGarbageCollectionCommitsAsync as an operation (kind
`gc-prepare-commits`): the retained commits' CSV written by whichever runner leases it.

The async call checks the repository has GC rules (lakeFS's client keeps every
commit on the 404), records the operation (kvlake/operations/tasks.py) and
wakes the runner; a server's or a `kvlake worker`'s runner runs its
`GcPrepareSteps` through `drive` (kvlake/operations/steps.py: claim, heartbeat,
cancel, finish). The run id is the operation's id, so the status call names the
CSV from the record alone, in any process, and a runner that takes over after
a death writes the same file again (the retained commits as they are then).
Rules removed between the submit and the run fail the task with lakeFS's text.
"""

from __future__ import annotations

import threading
from typing import Final

from kvlake.catalog.catalog import Catalog
from kvlake.catalog.gcprepare import GcPreparation
from kvlake.errors import ConfigError
from kvlake.graveler import Repository
from kvlake.operations import Driver, EngineContext, Operation, repository_of, submit_task
from kvlake.operations.ledger import Ledger

KIND: Final = "gc-prepare-commits"


def submit_gc_prepare_commits(
    ledger: Ledger, preparation: GcPreparation, repository: Repository, *, creator: str, now: float
) -> str:
    """Record a commits preparation of the repository; return its id (the run id).

    Raises:
        NotFoundError: the repository has no GC rules; nothing is recorded.
    """
    preparation.check_rules(repository)
    return submit_task(ledger, repository, KIND, creator=creator, now=now)


class GcPrepareSteps:
    """The steps of `gc-prepare-commits` operations: write the run's commits.csv."""

    def __init__(self, context: EngineContext) -> None:
        catalog = getattr(context.lake, "catalog", None)
        if not isinstance(catalog, Catalog):
            raise ConfigError("a GC preparation's engine needs the lake that built its context")
        self._graveler = context.graveler
        self._preparation = GcPreparation(context.graveler, catalog.blockstore)

    def work(self, operation: Operation, driver: Driver, stop: threading.Event) -> None:
        """Write the CSV under the operation's id (`stop` is not read: one step)."""
        repository = repository_of(self._graveler, operation, "before its GC preparation ran")
        self._preparation.prepare_commits(repository, run_id=operation.id)
