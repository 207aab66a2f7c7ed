"""The raw request body, read from a worker thread while the event loop receives it.

A gateway handler runs in a thread and hands the body to the catalog as a
file; each `read` fetches the next ASGI message on the loop, so one chunk at a
time is held whatever the object's size. A client that sends nothing for the
read timeout, or goes away mid-body, makes the read raise: the blockstore's put
fails, disposes of its partial blob, and nothing is staged. While a body is
read, its request holds a share of the server's body budget (`body_share`),
the same budget the REST API's bodies hold.
"""

from __future__ import annotations

import asyncio
import io
from typing import Any, Final

from starlette.types import Receive

from kvlake.gateway.errors import S3Error

STREAM_SHARE: Final = 256 << 10
"""What a streamed body holds of the server's body budget: one chunk at a time, as the
REST API's streamed uploads hold (uvicorn pauses a connection past 64 KiB unread)."""


def body_share(content_length: str | None) -> int:
    """The share of the body budget a request holds while its body is read and handled:
    the gateway reads every body as a stream, one chunk at a time."""
    if content_length is not None and content_length.isdigit():
        return min(int(content_length), STREAM_SHARE)
    return STREAM_SHARE


class ReceiveReader(io.RawIOBase):
    """A binary file over an ASGI `receive`, for one reading thread at a time."""

    def __init__(self, receive: Receive, loop: asyncio.AbstractEventLoop, timeout: float) -> None:
        self._receive = receive
        self._loop = loop
        self._timeout = timeout
        self._pending = b""
        self._done = False

    @property
    def done(self) -> bool:
        """Whether the whole body was received."""
        return self._done and not self._pending

    def readable(self) -> bool:
        return True

    async def _next(self) -> bytes | None:
        try:
            message = await asyncio.wait_for(self._receive(), self._timeout)
        except TimeoutError:
            raise S3Error(
                400,
                "RequestTimeout",
                f"the request body sent nothing for {self._timeout:g} s; send it without pausing",
            ) from None
        if message["type"] == "http.disconnect":
            raise S3Error(400, "IncompleteBody", "the client closed the connection mid-body")
        if not message.get("more_body", False):
            self._done = True
        body: bytes = message.get("body", b"")
        return body

    def read(self, size: int | None = -1) -> bytes:
        while not self._pending and not self._done:
            chunk = asyncio.run_coroutine_threadsafe(self._next(), self._loop).result()
            self._pending = chunk or b""
        if size is None or size < 0 or size >= len(self._pending):
            data, self._pending = self._pending, b""
        else:
            data, self._pending = self._pending[:size], self._pending[size:]
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def drain(self) -> None:
        """Read what is left (a refused request's body), so the connection stays usable."""
        while self.read(1 << 20):
            pass
