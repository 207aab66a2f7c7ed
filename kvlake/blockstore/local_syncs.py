"""Group commit of folder fsyncs, for LocalBlockStore: one fsync covers many puts' renames.

A put into a local folder is durable only once the folder itself is fsynced
(the rename lives in the folder). Concurrent puts into one folder share those
fsyncs instead of queueing one each; `FolderSyncs` keeps the bookkeeping, and
the store passes the fsync to run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class _Folder:
    __slots__ = ("requested", "synced", "running", "waiters")

    def __init__(self) -> None:
        self.requested = 0
        self.synced = 0
        self.running = False
        self.waiters = 0


class FolderSyncs:
    """Group commit of folder fsyncs: one fsync covers every rename made before it began.

    A caller renames, then asks for a sync and is numbered. If no fsync of the
    folder is running, it runs one, covering every number handed out so far; if
    one is running, it waits for it and for the next one (the running one may
    have started before its rename). So each caller returns only after an fsync
    that began after its rename, and concurrent puts into one folder share
    fsyncs instead of queueing one each. A failed fsync is raised to the caller
    that ran it; the waiters it covered run their own.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._folders: dict[str, _Folder] = {}

    def sync(self, folder: str, fsync: Callable[[], None]) -> None:
        with self._cond:
            state = self._folders.get(folder)
            if state is None:
                state = self._folders[folder] = _Folder()
            state.requested += 1
            state.waiters += 1
            mine = state.requested
            try:
                while state.synced < mine:
                    if state.running:
                        self._cond.wait()
                        continue
                    self._run(state, fsync)
            finally:
                state.waiters -= 1
                if not state.waiters:
                    del self._folders[folder]  # memory stays bounded by the folders in use

    def waiters(self, folder: str) -> int:
        """How many callers are in `sync` for this folder now, running an fsync or waiting."""
        with self._cond:
            state = self._folders.get(folder)
            return 0 if state is None else state.waiters

    def folders_in_use(self) -> int:
        """How many folders have a caller in `sync` now: state is kept for no other folder."""
        with self._cond:
            return len(self._folders)

    def _run(self, state: _Folder, fsync: Callable[[], None]) -> None:
        """Run one fsync with the lock released; on success it covers all numbers so far."""
        state.running = True
        covers = state.requested
        done = False
        self._cond.release()
        try:
            fsync()
            done = True
        finally:
            self._cond.acquire()
            state.running = False
            if done:
                state.synced = max(state.synced, covers)
            self._cond.notify_all()
