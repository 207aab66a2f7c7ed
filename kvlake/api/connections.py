"""What a connection may hold before it sends a request: a head deadline, a per-address cap.

Issue 23: 520 sockets that sent nothing, or trickled a request line a byte at a
time, took a server offline, because uvicorn counted every open socket against
its limit and gave a fresh connection no deadline. Now the limit counts requests
in flight (`inflight.py`), and here, in every worker, a connection
- must send a whole request head within `head_timeout` seconds of being opened
  or of its previous response, or it is closed (a byte at a time does not help:
  data does not restart the deadline, a complete head does); and
- is closed at once when its client address already holds
  `max_client_connections` of this process's connections.
`GuardedConnection` is mixed into both of uvicorn's HTTP protocols; the app's
lifespan puts the process's `ClientConnections` into uvicorn's state, where
every connection of the process finds it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Final

from kvlake.config import ServerSettings

if TYPE_CHECKING:

    class _Protocol(asyncio.Protocol):
        """What the mixin uses of uvicorn's protocols, both of which have it; at run time
        the mixin comes first in the MRO of a subclass of either, so super() is that one."""

        loop: asyncio.AbstractEventLoop
        transport: asyncio.Transport
        client: tuple[str, int] | None
        app_state: dict[str, Any]
        cycle: Any

        def on_response_complete(self) -> None: ...

else:
    _Protocol = object

log = logging.getLogger(__name__)

CONNECTIONS_STATE: Final = "kvlake.connections"
"""The key of the process's `ClientConnections` in the lifespan state uvicorn shares."""


class ClientConnections:
    """The open connections of one process per client address, and the head deadline.

    Used only from the event loop's thread, so the counts need no lock.
    """

    def __init__(self, settings: ServerSettings) -> None:
        self.head_timeout = settings.head_timeout
        self.max_per_client = settings.max_client_connections
        self._open: dict[str, int] = {}

    def admit(self, address: str) -> bool:
        """Count a new connection from `address`; False (not counted) if it holds its share."""
        held = self._open.get(address, 0)
        if held >= self.max_per_client:
            return False
        self._open[address] = held + 1
        return True

    def release(self, address: str) -> None:
        """Forget one connection `admit` counted."""
        held = self._open.pop(address) - 1
        if held:
            self._open[address] = held

    def held(self, address: str) -> int:
        """The connections `address` holds now."""
        return self._open.get(address, 0)


class GuardedConnection(_Protocol):
    """A uvicorn HTTP protocol whose connections obey the process's `ClientConnections`."""

    _connections: ClientConnections | None = None
    _address: str = ""
    _head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        connections = self.app_state.get(CONNECTIONS_STATE)
        if not isinstance(connections, ClientConnections):
            return  # not kvlake's app (a protocol test): uvicorn's own rules only
        address = self.client[0] if self.client else ""
        if not connections.admit(address):
            log.info(
                "closed a connection from %s: it holds %d connections, the most one address"
                " may (KVLAKE_SERVER_MAX_CLIENT_CONNECTIONS)",
                address,
                connections.max_per_client,
            )
            transport.close()
            return
        self._connections = connections
        self._address = address
        self._arm_head_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_head_deadline()  # the next request's head has the same time

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None
        if self._connections is not None:
            self._connections.release(self._address)
            self._connections = None

    def _arm_head_deadline(self) -> None:
        if self._connections is None or self.transport.is_closing():
            return
        if self._head_deadline is not None:
            self._head_deadline.cancel()
        self._head_deadline = self.loop.call_later(
            self._connections.head_timeout, self._head_expired
        )

    def _head_expired(self) -> None:
        self._head_deadline = None
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            return  # its head came in time: a request is in flight, and its response re-arms
        if not self.transport.is_closing():
            self.transport.close()
