"""The background runner: every process resumes every unfinished operation it can lease,
of every kind (bulk deletes, GC runs), each through its kind's engine.

A pass lists the operation records and hands each unfinished one to its
engine; the engine's lease (`Driver.claim`) decides who works on it, so any
number of API servers and `kvlake worker` processes can run passes over one
store. After a crash the restarted process (or another one, once the lease
expired) resumes from the record's checkpoint.

`run` works on up to `concurrency` operations at once (daemon threads), and hands
free threads out fairly between creators (`fair_order`): the creator with the
fewest operations running here goes first, so one user's 50M-object delete
takes one thread while everyone else's small ones keep going beside it.

Each pass also cleans up after finished operations (`_clean`): batches a crash
left behind after the end are dropped, and a record finished longer ago than
`KVLAKE_OPERATIONS_RETENTION` (30 days) is removed with its failures.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, defaultdict, deque
from collections.abc import Iterable
from typing import Final

import msgspec

from kvlake import ids
from kvlake.errors import (
    KvlakeError,
    NotFoundError,
    PreconditionFailedError,
    RepositoryDeletingError,
)
from kvlake.operations import events
from kvlake.operations.engines import Engine, EngineContext, open_engine_for
from kvlake.operations.records import GcRunRequest, Operation

EXPIRY_INTERVAL: Final = 3600.0
"""Seconds between two looks, in one process, for finished operations past their retention
(every record is read then; an idle pass reads only the live index)."""

log = logging.getLogger(__name__)


def creator_of(operation: Operation) -> str:
    """Whose work it is, for fairness: the user as created (`creator`), else its id."""
    return operation.creator or operation.created_by


def fair_order(pending: Iterable[Operation], running: Counter[str]) -> list[Operation]:
    """`pending` in the order free threads take them: round-robin between creators, the
    creator with the fewest operations `running` first (then the oldest operation), each
    creator's operations oldest first."""
    queues: defaultdict[str, deque[Operation]] = defaultdict(deque)
    for operation in sorted(pending, key=lambda op: op.id):
        queues[creator_of(operation)].append(operation)
    load = Counter(running)
    ordered: list[Operation] = []
    while queues:
        creator = min(queues, key=lambda name: (load[name], queues[name][0].id))
        ordered.append(queues[creator].popleft())
        load[creator] += 1
        if not queues[creator]:
            del queues[creator]
    return ordered


def _mark_cleaned(current: Operation) -> Operation | None:
    if not current.finished or current.cleaned:
        return None
    return msgspec.structs.replace(current, cleaned=True)


class OperationRunner:
    """Runs operations: `run_once` in the calling thread, one after another; `run` on up to
    `concurrency` threads until stopped. `wake` starts a pass early."""

    def __init__(self, context: EngineContext, *, concurrency: int = 1) -> None:
        self.context = context
        self.concurrency = concurrency
        self._engines: dict[str, Engine] = {}
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._running: dict[str, str] = {}
        """Operations running in this process: id -> creator."""
        self._wait = 0.0
        self._next_expiry = 0.0
        """When this process next looks for operations past their retention."""

    def engine(self, operation: Operation) -> Engine:
        """The engine of `operation` (its kind's, or a bulk delete's chosen one), built once."""
        name = operation.options.engine if operation.kind == "bulk-delete" else operation.kind
        key = f"{operation.kind}/{name}"
        with self._lock:
            if key not in self._engines:
                self._engines[key] = open_engine_for(operation, self.context)
            return self._engines[key]

    def run_once(self, stop: threading.Event | None = None) -> list[Operation]:
        """One pass: run every unfinished operation this process can lease, to its end."""
        halt = stop or threading.Event()
        ran: list[Operation] = []
        pending = [op.id for op in self.context.ledger.unfinished() if not op.finished]
        for operation_id in pending:
            if halt.is_set():
                break
            done = self._run_one(operation_id, halt)
            if done is not None:
                ran.append(done)
        return ran

    def wake(self) -> None:
        """Start the next pass now (a new operation was created, a thread came free)."""
        self._wake.set()

    def run(self, stop: threading.Event, *, interval: float) -> None:
        """Passes until `stop`, every `interval` seconds or when woken; returns once the
        operations it started have stopped (at their next batch or phase boundary), or
        after a lease time (their daemon threads end with the process; their leases
        expire and another process resumes them)."""
        threads: list[threading.Thread] = []
        while not stop.is_set():
            self._wake.clear()
            threads = [thread for thread in threads if thread.is_alive()]
            threads += self.dispatch(stop, interval)
            if stop.is_set():
                break
            self._wake.wait(self._wait)
        deadline = self.context.clock() + self.context.settings.lease_time
        for thread in threads:
            thread.join(max(deadline - self.context.clock(), 0.0))

    def dispatch(self, stop: threading.Event, interval: float) -> list[threading.Thread]:
        """Start what free threads can take, fairly, and set the seconds until the next
        pass: `interval`, or sooner when another holder's lease on an unfinished operation
        ends (a restarted process resumes its predecessor's work as soon as it expired)."""
        now = self.context.clock()
        with self._lock:
            running = dict(self._running)
        pending: list[Operation] = []
        wait = interval
        self._expire(now)
        for operation in self.context.ledger.unfinished():
            if operation.finished:
                self._clean(operation)
                continue
            if operation.id in running:
                continue
            held_elsewhere = operation.owner not in ("", self.context.owner)
            if held_elsewhere and operation.lease_expires > now:
                wait = min(wait, operation.lease_expires - now + 0.01)
                continue
            pending.append(operation)
        self._wait = wait
        free = self.concurrency - len(running)
        started: list[threading.Thread] = []
        for operation in fair_order(pending, Counter(running.values()))[: max(free, 0)]:
            with self._lock:
                self._running[operation.id] = creator_of(operation)
            thread = threading.Thread(
                target=self._run_and_release,
                args=(operation.id, stop),
                name=f"kvlake-operation-{operation.id}",
                daemon=True,
            )
            thread.start()
            started.append(thread)
        return started

    def _clean(self, operation: Operation) -> None:
        """Drop what a finished operation left (its batches: a crash between its end and
        their drop leaves them), start its follow-up, queue its post-event, then take it
        out of the runners' index: later passes never read it again."""
        ledger = self.context.ledger
        try:
            if not operation.cleaned:
                ledger.drop_work(operation.id)
                self._follow_up(operation)
                self._announce(operation)
                ledger.update(operation.id, _mark_cleaned)
            ledger.retire(operation.id)
        except KvlakeError as exc:  # the store is down a moment: the next pass does it
            log.warning("cleaning operation %s failed: %s", operation.id, exc)

    def _announce(self, operation: Operation) -> None:
        """Queue the finished operation's post-event (`post-bulk-delete`, `post-gc-run`)
        for the actions' background pass, before the record is marked cleaned: a crash in
        between queues it again under the same key, which writes nothing while the first
        waits. The hooks never run in this thread, so a slow one delays no operation."""
        graveler = self.context.graveler
        hooks = graveler.events if graveler is not None else None
        if hooks is None:
            return
        try:
            repository = graveler.get_repository(operation.repository)
        except (NotFoundError, RepositoryDeletingError):
            return  # deleted since: its runs go with it
        if repository.instance_uid != operation.instance_uid:
            return  # created again under the name: the event is not the new one's
        event = events.finished(operation, repository)
        if event is not None:
            hooks.queue_post(repository, event, key=f"{event.event_type}/{operation.id}")

    def _expire(self, now: float) -> None:
        """Remove finished operations past their retention, reading every record: once per
        `EXPIRY_INTERVAL` in a process (and on its first pass), not on every idle pass."""
        if now < self._next_expiry:
            return
        self._next_expiry = now + EXPIRY_INTERVAL
        retention = self.context.settings.retention
        try:
            for operation in self.context.ledger.list():
                if operation.finished and operation.last_updated_at + retention <= now:
                    self.context.ledger.remove(operation.id)
                    log.info("operation %s removed: finished past its retention", operation.id)
        except KvlakeError as exc:  # the store is down a moment: the next sweep does it
            log.warning("removing expired operations failed: %s", exc)

    def _follow_up(self, operation: Operation) -> None:
        """Start the garbage collection a completed bulk delete with `free_storage` asked
        for: the run's id is written into the bulk delete first, then its record, so a
        crash in between (or two runners at once) still starts exactly one run."""
        wanted = operation.kind == "bulk-delete" and operation.options.free_storage
        if not wanted or operation.status not in ("completed", "completed_with_errors"):
            return
        ledger, run_id = self.context.ledger, ids.new_uid()

        def name_it(current: Operation) -> Operation | None:
            return None if current.follow_up else msgspec.structs.replace(current, follow_up=run_id)

        named = ledger.update(operation.id, name_it)
        now = self.context.clock()
        follow_up = Operation(
            id=named.follow_up,
            kind="gc-run",
            repository=named.repository,
            instance_uid=named.instance_uid,
            gc=GcRunRequest(run_id=named.follow_up, dry_run=named.options.dry_run),
            created_by=named.created_by,
            creator=named.creator,
            created_at=now,
            last_updated_at=now,
        )
        try:
            ledger.create(follow_up)
        except PreconditionFailedError:
            return  # another runner created it
        log.info("operation %s: garbage collection %s frees its storage", named.id, run_id)
        self._wake.set()

    def _run_and_release(self, operation_id: str, stop: threading.Event) -> None:
        ran: Operation | None = None
        try:
            ran = self._run_one(operation_id, stop)
        except Exception:  # a bug in one operation must not stop the others: logged, retried
            log.exception("operation %s stopped unexpectedly", operation_id)
        finally:
            with self._lock:
                self._running.pop(operation_id, None)
        if ran is not None:
            self._wake.set()  # a thread came free: the next pass may give it work at once

    def _run_one(self, operation_id: str, stop: threading.Event) -> Operation | None:
        operation = self.context.ledger.load(operation_id)[0]
        try:
            return self.engine(operation).run(operation_id, stop)
        except KvlakeError as exc:  # the store is down: the next pass resumes it
            log.warning("operation %s paused: %s", operation_id, exc)
            return None
