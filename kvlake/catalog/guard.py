"""The one path every staging write of a new blob takes: its write lock, then the writer flow.

A bulk delete's tombstones are written blind where nothing is staged
(kvlake/graveler/staging/writer.py, `write_tombstones`): a blob staged at such a path
between the bulk delete's read of the write locks and its write would be
replaced unannounced, an orphan no deletion record names. The delete lock
closes that window only for writes that meet it (kvlake/operations/locks.py),
so every write that stages a blob there comes through here: an upload, a copy
(deep or shallow), a direct-upload link (and so a presigned multipart
completion) and stageObject. Each

1. takes an implicit write lock on its path, which is refused under another
   owner's explicit lock or a running bulk delete on its branch (so a write
   lock covers every write of its path, copies included), and which a bulk
   delete that read the write locks after it skips;
2. stages through graveler's writer flow, which logs the entry it replaces
   before replacing it (invariant 4);
3. checks its lock outlived the staging (its process's upload lease stayed live
   throughout, kvlake/operations/leases.py; a lease that lapsed mid-write reopened
   the window: the write is refused and its blob left to the deletion log's
   use-checked deletion).

Imports stage external entries, which kvlake never deletes, so a blind
tombstone over one orphans nothing; they take no lock of their own, but refuse
destinations a bulk delete or another owner's write lock holds, when they start
and right before they publish (`ObjectLocks.refuse_import`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypedDict, Unpack

from kvlake.errors import LockedError
from kvlake.graveler import BranchProtection, Graveler, Repository, Value
from kvlake.operations import ObjectLocks, UploadLock


class StagingGuard:
    """Takes the write lock of each new-blob staging write. Thread-safe; no in-process state."""

    def __init__(
        self,
        graveler: Graveler,
        locks: ObjectLocks | None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._graveler = graveler
        self._locks = locks
        self._clock = clock

    @contextmanager
    def writing(
        self, repository: Repository, branch: str, path: str, *, owner: str
    ) -> Iterator[GuardedWrite]:
        """Hold the write lock on `path` for as long as the block runs; stage inside it.

        Take it before any byte is written, so a refused write costs nothing.

        Raises:
            LockedError: another owner's write lock, or a bulk delete on `branch`,
                covers the path (nothing written).
        """
        if self._locks is None:
            yield GuardedWrite(self, repository, branch, path, None)
            return
        held = self._locks.begin_upload(repository, branch, path, owner=owner)
        try:
            yield GuardedWrite(self, repository, branch, path, held)
        finally:
            self._locks.end_upload(held)

    def _check_outlived(
        self, repository: Repository, branch: str, path: str, held: UploadLock
    ) -> None:
        """A write whose lock expired before it staged may have been replaced by a bulk
        delete's blind tombstone, unlogged: refuse it, so the caller's clean-up hands its
        blob to the log's use-checked deletion (kept if the entry survived)."""
        assert self._locks is not None
        if self._locks.held_through(held):
            return
        lock = self._locks.deleting(repository, path, branch=branch)
        if lock is not None:
            raise LockedError(
                f"write of {path!r} outlived its lock ({self._locks.upload_ttl:.0f} s) while"
                f" bulk delete operation {lock.operation_id} runs; write it again once that"
                " operation has finished"
            )


class StageOptions(TypedDict, total=False):
    """`Graveler.set`'s options, which a guarded write passes on."""

    if_absent: bool
    token: str
    attempted: list[str] | None
    protection: BranchProtection | None


@dataclass(frozen=True)
class GuardedWrite:
    """A write holding its path's lock: `stage` is its one staging write."""

    guard: StagingGuard
    repository: Repository
    branch: str
    path: str
    held: UploadLock | None

    def stage(self, key: bytes, value: Value, **options: Unpack[StageOptions]) -> None:
        """Stage `value` at the path through the writer flow (`options` are
        `Graveler.set`'s), then check the lock held.

        Raises:
            LockedError: the lock expired mid-write while a bulk delete covers the path
                (the entry may have landed: clean up as for any failed staging write).
            PreconditionFailedError, ProtectedBranchError...: as `Graveler.set`.
        """
        guard = self.guard
        guard._graveler.set(self.repository, self.branch, key, value, **options)
        if self.held is not None:
            guard._check_outlived(self.repository, self.branch, self.path, self.held)
