"""lakeFS's background tasks: refs dump and restore (dumpSubmit, dumpStatus,
restoreSubmit, restoreStatus) and GC commits preparation
(prepareGarbageCollectionCommitsAsync and its status).

A submit checks what lakeFS checks at submit (a restore needs a bare
repository and a well-formed dump id), records the task as running under
`tasks/<id>` in the repository's instance partition, starts the work in a
thread of this process and answers at once; the status call, in any process,
reads the record. The thread writes the outcome when the work ends: done, with
the result or with `error` (what lakeFS reports in the task rather than
refusing, such as a missing or inconsistent dump, is reported the same way).

A process that dies mid-task cannot write the outcome, so while the work runs
the thread touches the record's `update_time` every `HEARTBEAT_SECONDS`; a
running record not touched for `STALE_SECONDS` is reported done with an error
(submit again), so no task stays "running" forever. A dump cut short is never
taken for complete (it writes its manifest last). A restore checks the whole
dump before writing anything, then writes commits, tags and branches in that
order: one cut short while writing leaves a repository that is no longer bare,
so a second restore is refused; delete the repository and restore into a new
bare one.

The thread is started through `start` (default: a daemon thread), which tests
replace to hold the work at a gate; `heartbeat` sets the beat's interval. Task
records die with their repository instance.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Final, Literal

import msgspec

from kvlake import ids
from kvlake.errors import (
    InvalidInputError,
    KeyNotFoundError,
    KvlakeError,
    PreconditionFailedError,
    TaskNotFoundError,
)
from kvlake.graveler import keys
from kvlake.graveler.dump import RefsDumper
from kvlake.graveler.records import Repository
from kvlake.graveler.refs import partition_of
from kvlake.kv import Store

log = logging.getLogger(__name__)

TaskKind = Literal["dump", "restore", "gc_prepare_commits"]

HEARTBEAT_SECONDS: Final = 10.0
"""How often a running task's thread touches its record."""
STALE_SECONDS: Final = 300.0
"""A running record untouched this long belongs to a process that died: reported failed."""
INTERNAL_ERROR: Final = "internal error; see the server log"


class TaskResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a finished task produced."""

    dump_id: str = ""
    """The dump written (dump) or read (restore)."""
    run_id: str = ""
    """The GC run whose commits were prepared (gc_prepare_commits)."""


class TaskRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A task as the status call reports it."""

    kind: TaskKind
    update_time: float
    """When the record was last written: at submit, by the heartbeat, at the end."""
    done: bool = True
    """Records written before tasks ran in the background were all finished."""
    error: str = ""
    dump_id: str = ""
    run_id: str = ""


Work = Callable[[], TaskResult]
Starter = Callable[[Callable[[], None]], None]

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(TaskRecord).decode


def start_thread(run: Callable[[], None]) -> None:
    """Run `run` in a daemon thread of this process (the default starter)."""
    threading.Thread(target=run, name="kvlake-task", daemon=True).start()


class RefsTasks:
    """Runs dumps, restores and GC preparations as tasks and reports them. Thread-safe."""

    def __init__(
        self,
        store: Store,
        dumps: Callable[[], RefsDumper],
        clock: Callable[[], float],
        *,
        start: Starter = start_thread,
        heartbeat: float = HEARTBEAT_SECONDS,
    ) -> None:
        self._store = store
        self._dumps = dumps
        self._clock = clock
        self._start = start
        self._heartbeat_seconds = heartbeat

    def submit_dump(self, repository: Repository) -> str:
        """Start dumping the repository's refs; return the task id at once."""
        dumps = self._dumps()

        def work() -> TaskResult:
            return TaskResult(dump_id=dumps.dump(repository).dump_id)

        return self.submit(repository, "dump", work)

    def submit_restore(self, repository: Repository, dump_id: str) -> str:
        """Start restoring a dump into the bare repository; return the task id at once.

        A missing or inconsistent dump is the task's error, as in lakeFS.

        Raises:
            InvalidInputError: a malformed dump id, or the repository is not bare
                (lakeFS refuses these at submit too); nothing is written.
        """
        dumps = self._dumps()
        dumps.check_dump_id(dump_id)
        if not dumps.is_bare(repository):
            raise InvalidInputError("can only restore into a bare repository")  # lakeFS's text

        def work() -> TaskResult:
            return TaskResult(dump_id=dumps.restore(repository, dump_id).dump_id)

        return self.submit(repository, "restore", work)

    def submit(self, repository: Repository, kind: TaskKind, work: Work) -> str:
        """Record a running task, start `work` in the background, return the task id."""
        task_id = f"{kind}-{ids.new_uid()}"
        key = keys.task_key(task_id)
        record = TaskRecord(kind=kind, update_time=self._clock(), done=False)
        self._store.set(partition_of(repository), key, _encode(record))
        self._start(lambda: self._run(repository, task_id, kind, work))
        return task_id

    def status(self, repository: Repository, kind: TaskKind, task_id: str) -> TaskRecord:
        """The task as it stands; a running one nobody touched for STALE_SECONDS has failed.

        Raises:
            TaskNotFoundError: no task of this kind with this id in the repository.
        """
        try:
            raw, _ = self._store.get(partition_of(repository), keys.task_key(task_id))
        except KeyNotFoundError:
            raw = b""
        record = _decode(raw) if raw else None
        if record is None or record.kind != kind:
            raise TaskNotFoundError(
                f"no {kind} task {task_id!r} in repository {repository.name!r}; pass the id"
                " the submit call answered"
            )
        if not record.done and self._clock() - record.update_time > STALE_SECONDS:
            return msgspec.structs.replace(
                record,
                done=True,
                error=f"the task made no progress for {STALE_SECONDS:.0f} s: the server process"
                " running it has ended; submit it again",
            )
        return record

    def _run(self, repository: Repository, task_id: str, kind: TaskKind, work: Work) -> None:
        """The task's thread: do the work with a heartbeat, then record the outcome."""
        finished = threading.Event()
        heartbeat = threading.Thread(
            target=self._heartbeat,
            args=(repository, task_id, finished),
            name="kvlake-task-heartbeat",
            daemon=True,
        )
        heartbeat.start()
        try:
            result, error = work(), ""
        except KvlakeError as exc:  # a missing dump, no GC rules, a store down: said as is
            log.warning("%s task %s of %s failed: %s", kind, task_id, repository.name, exc)
            result, error = TaskResult(), str(exc)
        except Exception:  # the thread's last word: recorded for the status call, then logged
            log.exception("%s task %s of %s failed", kind, task_id, repository.name)
            result, error = TaskResult(), INTERNAL_ERROR
        finally:
            finished.set()
            heartbeat.join()
        outcome = TaskRecord(
            kind=kind,
            update_time=self._clock(),
            done=True,
            error=error,
            dump_id=result.dump_id,
            run_id=result.run_id,
        )
        try:
            self._store.set(partition_of(repository), keys.task_key(task_id), _encode(outcome))
        except KvlakeError as exc:  # the status call reports the task stale in the end
            log.warning("could not record the outcome of task %s: %s", task_id, exc)

    def _heartbeat(self, repository: Repository, task_id: str, finished: threading.Event) -> None:
        partition, key = partition_of(repository), keys.task_key(task_id)
        while not finished.wait(self._heartbeat_seconds):
            try:
                raw, predicate = self._store.get(partition, key)
                record = msgspec.structs.replace(_decode(raw), update_time=self._clock())
                self._store.set_if(partition, key, _encode(record), predicate)
            except (KeyNotFoundError, PreconditionFailedError):
                return  # the outcome was written meanwhile (or the repository went)
            except KvlakeError as exc:  # a store blip: the next beat tries again
                log.warning("task %s heartbeat failed: %s", task_id, exc)
