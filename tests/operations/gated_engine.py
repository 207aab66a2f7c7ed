"""An engine that claims its operation, says so, and holds it until the test opens its gate.

Registered as `gated` by tests/operations/test_runner.py: it shows which operations
a runner started at once, without timing. Process-wide state: one test at a time.
"""

from __future__ import annotations

import threading

from kvlake.operations import EngineContext, Operation

STARTED: list[str] = []
"""Operation ids in the order the runner's threads started them."""
ARRIVED = threading.Condition()
GATE = threading.Event()


class GatedEngine:
    def __init__(self, context: EngineContext) -> None:
        self.driver = context.driver()

    def run(self, operation_id: str, stop: threading.Event) -> Operation:
        claimed = self.driver.claim(operation_id)
        if claimed.owner != self.driver.owner:
            return claimed
        with ARRIVED:
            STARTED.append(operation_id)
            ARRIVED.notify_all()
        GATE.wait(60)
        return self.driver.finish(operation_id, "completed")
