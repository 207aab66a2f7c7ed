"""Garbage collection as the server's long-running operation: start a run, ask its status.

A run is a thread of the server process driving the same `GarbageCollector`
as the CLI, on the configured Spark master. Its state is read from the run's
files in the storage namespace (mark.json, summary.json, error.json), so a
finished or failed run still answers after a restart; only a running one's
progress lives in memory. One run per repository at a time, across processes:
a run holds the repository's lease in the KV (kvlake/pipelines/gc_lease.py).
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
from kvlake.pipelines.gc_lease import GcLeases, HeldGcLease
from kvlake.pipelines.runs import GcSummary, RunFiles, check_run_id
from kvlake.pipelines.session import INSTALL_HINT

log = logging.getLogger(__name__)

Mode = Literal["run", "mark", "sweep"]
ERROR_FILE: Final = "error.json"


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


class _Running:
    def __init__(self, repository: str, summary: GcSummary | None = None) -> None:
        self.repository = repository
        self.phase = ""
        self.summary = summary


class GcRuns:
    """Starts runs in threads and reports on them. Thread-safe."""

    def __init__(self, lake: Lake) -> None:
        self._lake = lake
        self._lock = threading.Lock()
        self._running: dict[str, _Running] = {}
        self._leases = GcLeases(lake.store, clock=lake.clock)

    def start(
        self,
        repository: str,
        *,
        mode: Mode = "run",
        run_id: str | None = None,
        grace_period: float | None = None,
        dry_run: bool = False,
    ) -> str:
        """Check the request, start the run in a thread, and return its id at once.

        Raises:
            ConfigError: PySpark is not installed.
            ConflictError: the repository has a run going, in this process or another
                (its lease in the KV, kvlake/pipelines/gc_lease.py).
            InvalidInputError, NotFoundError: bad options, repository or run id.
        """
        from kvlake.pipelines.gc import DEFAULT_GRACE_PERIOD, check_grace_period

        if importlib.util.find_spec("pyspark") is None:
            raise ConfigError(f"garbage collection runs on Spark, which is missing; {INSTALL_HINT}")
        grace = check_grace_period(DEFAULT_GRACE_PERIOD if grace_period is None else grace_period)
        repo = self._lake.graveler.get_repository(repository)
        if mode != "sweep":
            self._lake.graveler.retention.get_rules(repo)  # no rules: refused now, not in the run
        if mode == "sweep":
            if run_id is None:
                raise InvalidInputError("a sweep needs `run_id`: the id of a finished mark")
            check_run_id(run_id)
            RunFiles(self._lake.blockstore, repo.storage_namespace, run_id).read_summary(
                "mark.json"
            )  # refuse a run whose mark never finished now, not in the thread
        else:
            run_id = ids.new_uid()
        # One run per repository in every process: the lease is taken here, so a second
        # start is refused now, naming the run that holds it, not in the thread.
        held = self._leases.acquire(repository, run_id)
        with self._lock:
            running = self._running[run_id] = _Running(repository)
        thread = threading.Thread(
            target=self._run,
            args=(running, held, mode, grace, dry_run),
            name=f"kvlake-gc-{repository}",
            daemon=True,
        )
        thread.start()
        return run_id

    def status(self, repository: str, run_id: str) -> GcRunStatus:
        """What the run is doing or did. Raises NotFoundError for an unknown run."""
        check_run_id(run_id)
        with self._lock:
            running = self._running.get(run_id)
        if running is not None and running.repository == repository:
            return GcRunStatus(
                run_id=run_id, status="running", phase=running.phase, summary=running.summary
            )
        files = self._files(repository, run_id)
        for name in ("summary.json", "mark.json"):
            try:
                summary = files.read_summary(name)
            except NotFoundError:
                continue
            error = self._error(files)
            status = "failed" if error and name == "mark.json" else summary.state
            return GcRunStatus(run_id=run_id, status=status, summary=summary, error=error)
        error = self._error(files)
        if error:
            return GcRunStatus(run_id=run_id, status="failed", error=error)
        raise NotFoundError(f"repository {repository!r} has no garbage collection run {run_id!r}")

    def _run(
        self, running: _Running, held: HeldGcLease, mode: Mode, grace: float, dry: bool
    ) -> None:
        from kvlake.pipelines.gc import GarbageCollector
        from kvlake.pipelines.session import open_spark

        def progress(phase: str, summary: GcSummary) -> None:
            running.phase, running.summary = phase, summary

        name, run_id = running.repository, held.run_id
        try:
            with held:
                self._clear_error(name, run_id)
                spark = open_spark(self._lake.settings.spark, app_name=f"kvlake-gc-{name}")
                collector = GarbageCollector(spark, self._lake, progress=progress)
                if mode == "sweep":
                    collector.sweep(name, run_id, dry_run=dry, lease=held)
                elif mode == "mark":
                    collector.mark(name, grace_period=grace, dry_run=dry, run_id=run_id, lease=held)
                else:
                    collector.run(name, grace_period=grace, dry_run=dry, run_id=run_id, lease=held)
        except KvlakeError as exc:  # the lake changed meanwhile, a store failed: said, not a bug
            log.warning("garbage collection run %s of %s failed: %s", run_id, name, exc)
            self._record_error(name, run_id, exc)
        except Exception as exc:  # any failure ends the run; its status must say why
            log.exception("garbage collection run %s of %s failed", run_id, name)
            self._record_error(name, run_id, exc)
        finally:
            with self._lock:
                self._running.pop(run_id, None)

    def _clear_error(self, repository: str, run_id: str) -> None:
        """A sweep run again after a failure starts without the old error."""
        files = self._files(repository, run_id)
        files.blockstore.delete(files.namespace, files.key(ERROR_FILE))

    def _record_error(self, repository: str, run_id: str, exc: Exception) -> None:
        try:
            files = self._files(repository, run_id)
            files.write_json(ERROR_FILE, GcRunError(error=f"{type(exc).__name__}: {exc}"))
        except KvlakeError as again:
            log.warning("could not record why GC run %s failed: %s", run_id, again)

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
