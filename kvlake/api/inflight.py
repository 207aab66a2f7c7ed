"""The request limit of one process: requests in flight, not open sockets.

uvicorn's `limit_concurrency` counted every open connection, so sockets that
never sent a request (issue 23) made every real request answer 503. kvlake
turns that off and counts here what costs the server: requests from a complete
head to the end of their response. Idle connections are bounded apart, by the
head deadline and the per-address cap (`connections.py`).
"""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Receive, Scope, Send

from kvlake.api.errors import error_response

log = logging.getLogger(__name__)


class InFlightLimit:
    """ASGI middleware answering 503 to a request beyond `limit` in flight in this process.

    Runs on the event loop only, so the count needs no lock.
    """

    def __init__(self, app: ASGIApp, *, limit: int) -> None:
        self.app = app
        self.limit = limit
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.limit:
            log.warning(
                "%s %s refused: %d requests in flight (KVLAKE_SERVER_MAX_CONNECTIONS)",
                scope["method"],
                scope["path"],
                self.limit,
            )
            message = f"the server is handling its limit of {self.limit} requests; retry soon"
            await error_response(503, message)(scope, receive, send)
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1
