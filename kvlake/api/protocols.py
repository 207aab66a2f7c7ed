"""uvicorn's HTTP protocols with TCP_NODELAY and kvlake's connection guards, in every worker.

The guards (a request-head deadline, a per-address cap) are `connections.py`'s.

With `workers > 1` uvicorn binds the listening socket itself with protocol
number 0, and asyncio sets TCP_NODELAY only on sockets whose protocol is
IPPROTO_TCP; so each worker's connections keep Nagle's algorithm, and h11,
which writes a response's head and body separately, waits for the client's
delayed ACK: about 40 ms per request. Setting TCP_NODELAY when a connection is
made removes the stall whatever the worker count. httptools is used when it is
installed (`uvicorn[standard]`), h11 otherwise, unless `KVLAKE_SERVER_HTTP` names one.
"""

from __future__ import annotations

import asyncio
import importlib.util
import socket
from typing import Final

from uvicorn.protocols.http.h11_impl import H11Protocol

from kvlake.api.connections import GuardedConnection
from kvlake.errors import ConfigError


def set_no_delay(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class NoDelayH11Protocol(GuardedConnection, H11Protocol):
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        set_no_delay(transport)
        super().connection_made(transport)


HAS_HTTPTOOLS: Final = importlib.util.find_spec("httptools") is not None


PROTOCOLS: Final = {
    "h11": "kvlake.api.protocols:NoDelayH11Protocol",
    "httptools": "kvlake.api.protocols_httptools:NoDelayHttpToolsProtocol",
}
"""`KVLAKE_SERVER_HTTP` to the import path uvicorn's `http` setting takes."""


def protocol_path(choice: str = "auto") -> str:
    """The import path of the protocol `choice` names (`auto`: the best one installed).

    Raises:
        ConfigError: `httptools` is chosen but not installed.
    """
    if choice == "auto":
        choice = "httptools" if HAS_HTTPTOOLS else "h11"
    if choice == "httptools" and not HAS_HTTPTOOLS:
        raise ConfigError(
            "KVLAKE_SERVER_HTTP is httptools, which is not installed; install"
            " uvicorn[standard], or set it to h11 or auto"
        )
    return PROTOCOLS[choice]
