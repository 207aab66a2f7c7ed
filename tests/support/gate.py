"""A task starter that holds background work at a gate until the test opens it.

Servers run tasks (refs dumps, GC preparations) in threads; a test that must see
a task still running hands this to `RefsTasks(start=...)`, asks the status,
then `release`s the work and waits for it to end: no sleeps, no races.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class GatedStarter:
    """Starts each run in a thread that waits for `release` (run it) or `drop` (don't).

    Each call holds only the runs started since the last one: a run started later
    waits for a later `release`.
    """

    def __init__(self) -> None:
        self._held: list[tuple[threading.Event, list[bool], threading.Thread]] = []
        self.started = 0

    def __call__(self, run: Callable[[], None]) -> None:
        gate = threading.Event()
        go = [True]

        def gated() -> None:
            gate.wait()
            if go[0]:
                run()

        thread = threading.Thread(target=gated, name="gated-task", daemon=True)
        thread.start()
        self._held.append((gate, go, thread))
        self.started += 1

    def release(self) -> None:
        """Let the held runs go, and wait until they have all finished."""
        self._open(run=True)

    def drop(self) -> None:
        """End the held runs without running them: the process died after the submit."""
        self._open(run=False)

    def _open(self, *, run: bool) -> None:
        held, self._held = self._held, []
        for gate, go, _ in held:
            go[0] = run
            gate.set()
        for _, _, thread in held:
            thread.join()
