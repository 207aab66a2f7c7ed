"""The engine of `import` operations: claims an import, lists and writes it, publishes it.

Any runner (a server's or a `kvlake worker`'s) runs an import's `ImportSteps`
through `drive` (`_STEPS` in kvlake/operations/engines.py; claim, heartbeat, cancel
and finish are kvlake/operations/steps.py's). The steps and what a process
death at each leaves (the record's fields say where it stood):

1. list the sources and write the metarange, checkpointing the count every
   KVLAKE_IMPORTS_PROGRESS_EVERY entries (a cancel or a stop is read there). A death here
   leaves no `metarange_id`: the next holder lists again from the start (the
   ranges already written are content-addressed files, written again alike);
2. record `metarange_id`: from then on a resumed import publishes it without
   listing again;
3. publish: before each attempt, inside the branch update's precondition, the
   record is checkpointed with `committing` and the head the commit builds on
   (`base_commit`), so the record names that head before any commit can land;
4. record the commit, then `completed`.

A death during or after 3 is resolved by the next holder: if the branch's
history holds, right after `base_commit`, a commit with the import's committer,
message and metadata, that is the import's (it completes with it); otherwise
nothing was published and it publishes again. So a killed import finishes or
fails cleanly, and is never published twice nor half (the publish is one commit).
"""

from __future__ import annotations

import threading
from typing import Final

from kvlake.catalog.catalog import Catalog
from kvlake.catalog.imports import Importer, ImportJob, job_of
from kvlake.errors import ConfigError
from kvlake.graveler import Repository
from kvlake.operations import (
    Cancelled,
    Counters,
    Driver,
    EngineContext,
    Operation,
    Stopped,
    repository_of,
)

HISTORY_WALK: Final = 10_000
"""Commits walked back from the head to find a published import's commit: that many
commits landing on the branch between a death and the resume would hide it."""


class ImportSteps:
    """The steps of `import` operations (`drive` claims, beats and finishes them)."""

    def __init__(self, context: EngineContext, importer: Importer | None = None) -> None:
        """`importer`: the one whose settings choose where the listing runs (default: the
        lake's catalog's; tests give one with other import settings)."""
        if importer is None:
            catalog = getattr(context.lake, "catalog", None)
            if not isinstance(catalog, Catalog):
                raise ConfigError("an import's engine needs the lake that built its context")
            importer = catalog.imports
        self._importer = importer
        self._graveler = context.graveler

    def work(self, operation: Operation, driver: Driver, stop: threading.Event) -> None:
        """List, write and publish the import, from where its record stands; a cancel or a
        stop is read at each progress update and before the publish."""
        operation_id = operation.id
        job = job_of(self._repository(operation), operation)
        metarange_id = operation.metarange_id
        if metarange_id and operation.committing:
            published = self._published(job, operation.base_commit)
            if published:
                self._done(driver, job, published)
                return
        if not metarange_id:

            def progress(ingested: int) -> None:
                record = driver.checkpoint(
                    operation_id, status="in_progress", counters=Counters(enumerated=ingested)
                )
                if record.cancel_requested:
                    raise Cancelled
                if stop.is_set():
                    raise Stopped

            metarange_id = self._importer.write_metarange(job, progress)
            driver.checkpoint(operation_id, metarange_id=metarange_id)
        self._repository(operation)  # invariant 1: it may have been deleted meanwhile

        def publishing(head_id: str) -> None:
            record = driver.checkpoint(operation_id, committing=True, base_commit=head_id)
            if record.cancel_requested:
                raise Cancelled

        self._done(driver, job, self._importer.publish(job, metarange_id, publishing))

    def _done(self, driver: Driver, job: ImportJob, commit_id: str) -> None:
        """Record the published commit (and its metarange, which importStatus shows)."""
        commit = self._graveler.get_commit(job.repository, commit_id)
        driver.checkpoint(job.import_id, commit_id=commit_id, metarange_id=commit.metarange_id)

    def _repository(self, operation: Operation) -> Repository:
        """The import's repository, the very instance it was started in.

        Raises:
            InvalidInputError: the repository was deleted (or deleted and created again).
        """
        return repository_of(self._graveler, operation, "during the import; nothing was committed")

    def _published(self, job: ImportJob, base: str) -> str:
        """The import's commit, if an earlier holder's publish landed on `base`; else ''."""
        commit_id = self._graveler.get_branch(job.repository, job.branch).commit_id
        for _ in range(HISTORY_WALK):
            if commit_id == base or not commit_id:
                return ""
            commit = self._graveler.get_commit(job.repository, commit_id)
            if not commit.parents:
                return ""
            if commit.parents[0] == base:
                ours = (commit.committer, commit.message, dict(commit.metadata))
                wanted = (job.committer, job.message, job.metadata)
                return commit_id if ours == wanted else ""
            commit_id = commit.parents[0]
        return ""
