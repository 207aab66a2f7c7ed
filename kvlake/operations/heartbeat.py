"""A heartbeat: an operation's lease renewed from a thread while its holder is busy.

Engines renew their lease with each checkpoint. Some steps report nothing for
longer than a lease time (a Spark job listing an import's sources, a large
commit); without renewals another process would take the operation over while
it is still running. `Heartbeat` renews the lease every third of a lease time
until the step ends, and stops quietly once the lease is another's.
"""

from __future__ import annotations

import logging
import threading
from types import TracebackType

from kvlake.errors import KvlakeError
from kvlake.operations.driver import Driver, LostLeaseError

log = logging.getLogger(__name__)


class Heartbeat:
    """Renews `operation_id`'s lease through `driver` while the `with` block runs."""

    def __init__(self, driver: Driver, operation_id: str) -> None:
        self._driver = driver
        self._operation_id = operation_id
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._beat, name=f"kvlake-heartbeat-{operation_id}", daemon=True
        )

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(
        self,
        _kind: type[BaseException] | None,
        _error: BaseException | None,
        _trace: TracebackType | None,
    ) -> None:
        self._done.set()
        self._thread.join()

    def _beat(self) -> None:
        while not self._done.wait(self._driver.lease_time / 3):
            try:
                self._driver.checkpoint(self._operation_id)
            except LostLeaseError:
                return  # another process holds it now: its holder's next checkpoint says so
            except KvlakeError as exc:  # a store blip: the next beat tries again
                log.warning("operation %s: lease renewal failed: %s", self._operation_id, exc)
