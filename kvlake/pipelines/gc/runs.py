"""Garbage collection as one kind of the server's long-running operations (`gc-run`).

`GcRuns.start` checks the request, takes the repository's GC lease (one run
per repository across processes: kvlake/pipelines/gc/lease.py), records the
run as an operation of kind `gc-run` (kvlake/operations: the same record, list,
cancel and runner as every other kind) and wakes the runner. Whichever
process's runner claims the record (`Driver.claim`: an API server with
background work on, or a `kvlake worker`) runs it with `GcRunEngine`, on the
configured Spark master: it takes over the lease its start took
(`GcLeases.adopt`), drives the same `GarbageCollector` as the CLI, records
each phase in the record (renewing its lease) and reads a cancel between
phases. The lease a start took lasts `LEASE_SECONDS` unrenewed: a run no
runner claimed by then (every worker busy) may lose the repository to a newer
start, and then fails naming it.

The run's outcome is also written to its files in the storage namespace
(mark.json, summary.json, error.json), so `status` answers from the record
while the run goes on and from the files afterwards, in any process.
A process that dies mid-run leaves the record unfinished; once its lease
expires another runner claims it and runs it again from its first phase.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from typing import Final, Literal

import msgspec

from kvlake import ids
from kvlake.errors import (
    BlobNotFoundError,
    ConfigError,
    InvalidInputError,
    KvlakeError,
    NotFoundError,
)
from kvlake.lake import Lake
from kvlake.operations import (
    EngineContext,
    GcRunRequest,
    LostLeaseError,
    Operation,
)
from kvlake.pipelines.gc.lease import GcLeases
from kvlake.pipelines.runs import GcSummary, RunFiles, check_run_id
from kvlake.pipelines.session import INSTALL_HINT

log = logging.getLogger(__name__)

Mode = Literal["run", "mark", "sweep"]
ERROR_FILE: Final = "error.json"
KIND: Final = "gc-run"


class GcRunError(msgspec.Struct, frozen=True, kw_only=True):
    """Why a run stopped (error.json)."""

    error: str


class GcRunStatus(msgspec.Struct, frozen=True, kw_only=True):
    """`running`, `marked` (mark done, not swept), `swept`, `dry_run` or `failed`."""

    run_id: str
    status: str
    phase: str = ""
    """The last phase finished, while running."""
    summary: GcSummary | None = None
    error: str = ""


class GcRuns:
    """Starts runs (as operation records) and reports on them. Thread-safe, no state."""

    def __init__(self, lake: Lake) -> None:
        self._lake = lake
        self._leases = GcLeases(lake.store, clock=lake.clock)

    def start(
        self,
        repository: str,
        *,
        mode: Mode = "run",
        run_id: str | None = None,
        grace_period: float | None = None,
        dry_run: bool = False,
        created_by: str = "",
        creator: str = "",
    ) -> str:
        """Check the request, record the run and wake the runner; return the run's id at once.

        Raises:
            ConfigError: PySpark is not installed.
            ConflictError: the repository has a run going, in this process or another
                (its lease in the KV, kvlake/pipelines/gc/lease.py).
            InvalidInputError, NotFoundError: bad options, repository or run id.
        """
        from kvlake.pipelines.gc.collector import check_grace_period

        if importlib.util.find_spec("pyspark") is None:
            raise ConfigError(f"garbage collection runs on Spark, which is missing; {INSTALL_HINT}")
        default = self._lake.settings.gc.grace_period
        grace = check_grace_period(default if grace_period is None else grace_period)
        repo = self._lake.graveler.get_repository(repository)
        if mode != "sweep":
            self._lake.graveler.retention.get_rules(repo)  # no rules: refused now, not in the run
        operation_id = ids.new_uid()
        if mode == "sweep":
            if run_id is None:
                raise InvalidInputError("a sweep needs `run_id`: the id of a finished mark")
            check_run_id(run_id)
            RunFiles(self._lake.blockstore, repo.storage_namespace, run_id).read_summary(
                "mark.json"
            )  # refuse a run whose mark never finished now, not in the runner
        else:
            run_id = operation_id
        # One run per repository in every process: the lease is taken here, so a second
        # start is refused now, naming the run that holds it; the runner adopts it.
        held = self._leases.acquire(repository, run_id)
        now = self._lake.clock()
        try:
            self._lake.ledger.create(
                Operation(
                    id=operation_id,
                    kind=KIND,
                    repository=repo.name,
                    instance_uid=repo.instance_uid,
                    gc=GcRunRequest(run_id=run_id, mode=mode, grace_period=grace, dry_run=dry_run),
                    created_by=created_by or "gc",
                    creator=creator,
                    created_at=now,
                    last_updated_at=now,
                )
            )
        except BaseException:
            self._leases.release(held)
            raise
        self._lake.operations.wake()
        return run_id

    def status(self, repository: str, run_id: str) -> GcRunStatus:
        """What the run is doing or did. Raises NotFoundError for an unknown run."""
        check_run_id(run_id)
        record = self._latest(repository, run_id)
        if record is not None and not record.finished:
            return GcRunStatus(run_id=run_id, status="running", phase=record.phase)
        files = self._files(repository, run_id)
        for name in ("summary.json", "mark.json"):
            try:
                summary = files.read_summary(name)
            except NotFoundError:
                continue
            error = self._error(files)
            status = "failed" if error and name == "mark.json" else summary.state
            if record is not None and record.status == "cancelled" and name == "mark.json":
                status = "cancelled"
            return GcRunStatus(run_id=run_id, status=status, summary=summary, error=error)
        error = self._error(files)
        if error:
            return GcRunStatus(run_id=run_id, status="failed", error=error)
        if record is not None and record.status == "cancelled":
            return GcRunStatus(run_id=run_id, status="cancelled")
        raise NotFoundError(f"repository {repository!r} has no garbage collection run {run_id!r}")

    def _latest(self, repository: str, run_id: str) -> Operation | None:
        """The newest operation record of the run (a sweep of a mark has its own)."""
        latest = None
        for operation in self._lake.ledger.list():
            request = operation.gc
            if operation.repository == repository and request and request.run_id == run_id:
                latest = operation
        return latest

    def _files(self, repository: str, run_id: str) -> RunFiles:
        repo = self._lake.graveler.get_repository(repository)
        return RunFiles(self._lake.blockstore, repo.storage_namespace, run_id)

    @staticmethod
    def _error(files: RunFiles) -> str:
        try:
            raw = files.blockstore.get(files.namespace, files.key(ERROR_FILE))
        except BlobNotFoundError:
            return ""
        return msgspec.json.decode(raw, type=GcRunError).error


class _Cancelled(Exception):
    """The record asks to stop: leave before the next phase."""


class _Stopped(Exception):
    """This process is stopping: leave before the next phase; the lease lapses and another
    process runs the run again."""


class GcRunEngine:
    """Runs `gc-run` operations (the engine of that kind, kvlake/operations/engines.py)."""

    def __init__(self, context: EngineContext) -> None:
        if not isinstance(context.lake, Lake):
            raise ConfigError("a GC run's engine needs the lake that built its context")
        self._lake = context.lake
        self._driver = context.driver()
        self._leases = GcLeases(context.lake.store, clock=context.clock, holder=context.owner)

    def run(self, operation_id: str, stop: threading.Event) -> Operation:
        """Run the GC run to its end, a cancel, or `stop` (read between phases).

        Returns the record as last seen; one another live process holds is left alone.
        """
        operation = self._driver.claim(operation_id)
        if operation.owner != self._driver.owner or operation.finished:
            return operation
        request = operation.gc
        assert request is not None, "a gc-run record carries its request"
        if operation.cancel_requested:
            return self._driver.finish(operation_id, "cancelled")
        try:
            self._run(operation, request, stop)
        except _Stopped:
            return self._lake.ledger.load(operation_id)[0]
        except _Cancelled:
            return self._driver.finish(operation_id, "cancelled")
        except LostLeaseError:
            return self._lake.ledger.load(operation_id)[0]
        except KvlakeError as exc:  # the lake changed meanwhile, a store failed: said, not a bug
            log.warning("garbage collection run %s failed: %s", request.run_id, exc)
            return self._failed(operation, request, exc)
        except Exception as exc:  # any failure ends the run; its status must say why
            log.exception("garbage collection run %s failed", request.run_id)
            return self._failed(operation, request, exc)
        return self._driver.finish(operation_id, "completed")

    def _run(self, operation: Operation, request: GcRunRequest, stop: threading.Event) -> None:
        from kvlake.pipelines.gc.collector import GarbageCollector
        from kvlake.pipelines.session import open_spark

        def progress(phase: str, summary: GcSummary) -> None:
            record = self._driver.checkpoint(operation.id, phase=phase)
            if record.cancel_requested:
                raise _Cancelled
            if stop.is_set():
                raise _Stopped

        name, run_id, lake = operation.repository, request.run_id, self._lake
        with self._leases.adopt(name, run_id) as held:
            self._driver.checkpoint(operation.id, status="in_progress")
            self._clear_error(name, run_id)
            spark = open_spark(lake.settings.spark, app_name=f"kvlake-gc-{name}")
            collector = GarbageCollector(spark, lake, progress=progress)
            dry = request.dry_run
            grace = request.grace_period  # None (a record without one): the lake's setting
            if request.mode == "sweep":
                collector.sweep(name, run_id, dry_run=dry, lease=held)
            elif request.mode == "mark":
                collector.mark(name, grace_period=grace, dry_run=dry, run_id=run_id, lease=held)
            else:
                collector.run(name, grace_period=grace, dry_run=dry, run_id=run_id, lease=held)

    def _failed(self, operation: Operation, request: GcRunRequest, exc: Exception) -> Operation:
        error = f"{type(exc).__name__}: {exc}"
        try:
            files = self._files(operation.repository, request.run_id)
            files.write_json(ERROR_FILE, GcRunError(error=error))
        except KvlakeError as again:
            log.warning("could not record why GC run %s failed: %s", request.run_id, again)
        return self._driver.finish(operation.id, "failed", error)

    def _clear_error(self, repository: str, run_id: str) -> None:
        """A sweep run again after a failure starts without the old error."""
        files = self._files(repository, run_id)
        files.blockstore.delete(files.namespace, files.key(ERROR_FILE))

    def _files(self, repository: str, run_id: str) -> RunFiles:
        repo = self._lake.graveler.get_repository(repository)
        return RunFiles(self._lake.blockstore, repo.storage_namespace, run_id)
