"""The httptools protocol with TCP_NODELAY and the connection guards; imported only when
httptools is installed."""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from kvlake.api.connections import GuardedConnection
from kvlake.api.protocols import set_no_delay


class NoDelayHttpToolsProtocol(GuardedConnection, HttpToolsProtocol):
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        set_no_delay(transport)
        super().connection_made(transport)
