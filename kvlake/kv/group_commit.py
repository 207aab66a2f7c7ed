"""Group commit: concurrent writes of one process share one transaction and its one fsync.

A durable SQLite commit waits for an fsync of the WAL (about 0.1 ms on a quiet disk, several
on a loaded one), and SQLite lets one transaction write at a time, so writes that each
commit alone queue behind each other's fsyncs: 32 threads write no faster than one.
`GroupCommit` lets them share: a caller queues its operation, and if no other caller is
committing it becomes the leader, takes every queued operation (its own among them), runs
them in one transaction through the `commit` function the driver gives, and wakes their
callers. Callers arriving meanwhile queue for the next group, whose leader is one of them.

Guarantees (docs/kv.md, "Group commit"): a caller returns only after the transaction holding
its operation committed (or with the error saying it did not); each operation has its own
outcome, so one that fails (a compare-and-swap that missed, a statement refused) neither
fails nor undoes the others; and operations are applied in the order they were queued.
Nothing is batched across processes: SQLite's write lock still orders them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final, Generic, TypeVar, cast

C = TypeVar("C")
"""What an operation runs against: the leader's open transaction (the SQLite driver's cursor)."""
T = TypeVar("T")

MAX_GROUP: Final = 512
"""Operations one transaction takes at most, so a burst cannot hold the write lock for long."""


class Operation(Generic[C]):
    """One caller's write in a group: what to run, its outcome or error, and its caller's wake."""

    __slots__ = ("done", "error", "outcome", "run", "wake")

    def __init__(self, run: Callable[[C], object]) -> None:
        self.run = run
        self.outcome: object = None
        self.error: BaseException | None = None
        self.done = False
        self.wake = threading.Lock()
        """Held while the caller waits; released once: its group committed, or it is to lead."""
        self.wake.acquire()


class GroupCommit(Generic[C]):
    """Queues writes and commits them in groups; see the module docstring for the guarantees.

    `commit(group)` must run every operation of `group` in one transaction, give each its
    `outcome` or `error`, and return only once the transaction committed. If it raises, every
    operation of the group fails with that error (raised to each caller, not to the leader
    as such). Each waiting caller sleeps on its own lock, woken alone: when its group
    committed, or when it heads the queue and leadership passes to it.
    """

    def __init__(self, commit: Callable[[list[Operation[C]]], None]) -> None:
        self._commit = commit
        self._mutex = threading.Lock()
        self._queued: list[Operation[C]] = []
        self._leading = False

    def run(self, run: Callable[[C], T]) -> T:
        """Run `run` in the next group's transaction; return its outcome once that committed.

        Raises whatever error the operation, or its group's commit, failed with.
        """
        mine: Operation[C] = Operation(run)
        with self._mutex:
            self._queued.append(mine)
            leads = not self._leading
            self._leading = True
        if not leads:
            mine.wake.acquire()  # released when committed, or when this caller is to lead
        if not mine.done:  # this caller leads until its own operation is committed
            while not mine.done:
                self._lead()
            self._pass_leadership_on()
        if mine.error is not None:
            raise mine.error
        return cast(T, mine.outcome)

    def queued(self) -> int:
        """How many operations wait for a group now (not counting the one committing)."""
        with self._mutex:
            return len(self._queued)

    def _lead(self) -> None:
        """Commit the first queued operations as one group and wake their callers."""
        with self._mutex:
            group, self._queued = self._queued[:MAX_GROUP], self._queued[MAX_GROUP:]
        try:
            self._commit(group)
        except BaseException as exc:  # noqa: BLE001 - each caller raises it for its own operation
            for operation in group:
                operation.error = exc
        self._acknowledge(group)

    def _acknowledge(self, group: list[Operation[C]]) -> None:
        """Wake the group's callers: only ever after `commit` returned (or failed)."""
        for operation in group:
            operation.done = True
            operation.wake.release()

    def _pass_leadership_on(self) -> None:
        """Called by a leader whose own operation is done: the queue's head leads next."""
        with self._mutex:
            if not self._queued:
                self._leading = False
                return
            head = self._queued[0]
        head.wake.release()
