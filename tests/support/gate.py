"""A task starter that holds background work at a gate until the test opens it.

Servers run tasks (refs dumps, GC preparations) in threads; a test that must see
a task still running hands this to `RefsTasks(start=...)`, asks the status,
then `release`s the work and waits for it to end: no sleeps, no races.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class GatedStarter:
    """Starts each run in a thread that first waits for `release` (or `drop`)."""

    def __init__(self) -> None:
        self._gate = threading.Event()
        self._dropped = False
        self._threads: list[threading.Thread] = []

    def __call__(self, run: Callable[[], None]) -> None:
        def gated() -> None:
            self._gate.wait()
            if not self._dropped:
                run()

        thread = threading.Thread(target=gated, name="gated-task", daemon=True)
        thread.start()
        self._threads.append(thread)

    @property
    def started(self) -> int:
        return len(self._threads)

    def release(self) -> None:
        """Let every held run go, and wait until they have all finished."""
        self._gate.set()
        for thread in self._threads:
            thread.join()

    def drop(self) -> None:
        """End the held runs without running them: the process died after the submit."""
        self._dropped = True
        self.release()
