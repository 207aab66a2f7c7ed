"""Refs dump and restore as lakeFS's tasks (dumpSubmit, dumpStatus, restoreSubmit,
restoreStatus).

lakeFS runs a submitted dump or restore in the background and records its
outcome for the status call to read. kvlake's dump and restore stream their
files and take about as long as the request that submits them, so a submit runs
the task itself and records the finished outcome under `tasks/<id>` in the
repository's instance partition; the status call reads it. A submit that is
answered names a finished task, and a submit that dies before its answer
recorded nothing (a dump writes its manifest last, and a restore checks the
whole dump before writing), so no task is ever left "running" by a crash.
What lakeFS reports in the task rather than refusing (a missing or
inconsistent dump) is reported the same way here: done, with `error`. Task
records die with their repository instance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import msgspec

from kvlake import ids
from kvlake.errors import InvalidInputError, KeyNotFoundError, NotFoundError, TaskNotFoundError
from kvlake.graveler import keys
from kvlake.graveler.dump import RefsDumper
from kvlake.graveler.records import Repository
from kvlake.graveler.refs import partition_of
from kvlake.kv import Store

TaskKind = Literal["dump", "restore"]


class TaskRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A finished dump or restore: its outcome, as the status call reports it."""

    kind: TaskKind
    update_time: float
    error: str = ""
    dump_id: str = ""
    """The dump written (dump) or read (restore)."""


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(TaskRecord).decode


class RefsTasks:
    """Runs dumps and restores as tasks and reads their outcome. Thread-safe."""

    def __init__(
        self, store: Store, dumps: Callable[[], RefsDumper], clock: Callable[[], float]
    ) -> None:
        self._store = store
        self._dumps = dumps
        self._clock = clock

    def submit_dump(self, repository: Repository) -> str:
        """Dump the repository's refs; return the id of the finished task."""
        manifest = self._dumps().dump(repository)
        return self._record(repository, "dump", dump_id=manifest.dump_id)

    def submit_restore(self, repository: Repository, dump_id: str) -> str:
        """Restore a dump into the bare repository; return the id of the finished task.

        Raises:
            InvalidInputError: a malformed dump id, or the repository is not bare
                (lakeFS refuses these at submit too); nothing is written.
        """
        dumps = self._dumps()
        try:
            dumps.load_manifest(repository, dump_id)  # a malformed id raises here
        except NotFoundError as exc:
            return self._record(repository, "restore", dump_id=dump_id, error=str(exc))
        if not dumps.is_bare(repository):
            raise InvalidInputError("can only restore into a bare repository")  # lakeFS's text
        error = ""
        try:
            dumps.restore(repository, dump_id)
        except (InvalidInputError, NotFoundError) as exc:  # an inconsistent or partial dump
            error = str(exc)
        return self._record(repository, "restore", dump_id=dump_id, error=error)

    def status(self, repository: Repository, kind: TaskKind, task_id: str) -> TaskRecord:
        """The finished task's outcome. Raises TaskNotFoundError."""
        try:
            raw, _ = self._store.get(partition_of(repository), keys.task_key(task_id))
        except KeyNotFoundError:
            raw = b""
        record = _decode(raw) if raw else None
        if record is None or record.kind != kind:
            raise TaskNotFoundError(
                f"no {kind} task {task_id!r} in repository {repository.name!r}; pass the id"
                f" {kind}Submit answered"
            )
        return record

    def _record(
        self, repository: Repository, kind: TaskKind, *, dump_id: str, error: str = ""
    ) -> str:
        task_id = f"{kind}-{ids.new_uid()}"
        record = TaskRecord(kind=kind, update_time=self._clock(), error=error, dump_id=dump_id)
        self._store.set(partition_of(repository), keys.task_key(task_id), _encode(record))
        return task_id
