"""Request bodies as the doors read them: paced chunks off the event loop, and a file
that a worker thread reads them through.

Both the REST API and the S3 gateway hand an upload's body to the catalog as a
binary file read in a worker thread. A small body (up to `SMALL_BODY`) is read
whole on the event loop first (one thread hop fewer); a larger or unsized one
is pulled chunk by chunk from the loop by the thread that stores it
(`ThreadBodyReader`), so memory stays flat for any size. Every chunk keeps a
`BodyPace` (issue 23): a read that waits the read timeout, or a body averaging
less than the minimum rate, raises in the reading thread, so the blockstore's
put fails and disposes of its partial blob. A client gone mid-body is
`ClientGoneError`, not a bug.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any, Final

from starlette.requests import ClientDisconnect, Request

from kvlake.errors import KvlakeError

SMALL_BODY: Final = 1 << 20
"""Bodies up to this size are read whole on the event loop before the handler's thread."""
STREAM_SHARE: Final = 256 << 10
"""Budget a streamed body holds: uvicorn pauses a connection whose unread body passes 64 KiB."""


def stream_share(content_length: str | None) -> int:
    """The share of a body budget an upload's body holds while it is read and handled:
    all of a small body (read whole), `STREAM_SHARE` of a streamed one."""
    if content_length is not None and content_length.isdigit():
        size = int(content_length)
        return size if size <= SMALL_BODY else STREAM_SHARE
    return STREAM_SHARE


class BodyTimeoutError(KvlakeError):
    """The client sent nothing for the read timeout; send the body faster or retry."""


class BodyTooSlowError(BodyTimeoutError):
    """The body came slower than the minimum rate; send it faster or retry."""


class ClientGoneError(KvlakeError):
    """The client closed the connection before sending its whole body; no one is answered."""


@dataclass(frozen=True)
class BodyPace:
    """How slowly a body may come: per read, and on average over the whole body."""

    read_timeout: float
    """Seconds one read may wait for the client's next bytes."""
    min_rate: float
    """Bytes per second the body must average, beyond `grace`."""
    grace: float
    """Seconds every body has on top of what `min_rate` allows for its bytes."""

    def allowance(self, received: int) -> float:
        """Seconds from the first read that a body which has sent `received` bytes may take."""
        return self.grace + received / self.min_rate


async def chunks(request: Request, pace: BodyPace) -> AsyncGenerator[bytes, None]:
    """The body's chunks; BodyTimeoutError when a read waits `pace.read_timeout` seconds,
    BodyTooSlowError when the body falls behind `pace.allowance`, ClientGoneError."""
    stream = request.stream()
    loop = asyncio.get_running_loop()
    start = loop.time()
    received = 0
    while True:
        # Issue 23: a per-read timeout alone let a byte every few seconds hold a body's
        # budget share for ever; the whole body has a deadline that grows with what came.
        left = start + pace.allowance(received) - loop.time()
        wait = min(pace.read_timeout, left)
        try:
            chunk = await asyncio.wait_for(anext(stream), max(wait, 0))
        except StopAsyncIteration:
            return
        except TimeoutError:
            if wait < pace.read_timeout:
                raise BodyTooSlowError(
                    f"the request body came slower than {pace.min_rate:g} bytes/s after"
                    f" {pace.grace:g} s; send it faster"
                ) from None
            raise BodyTimeoutError(
                f"the request body sent nothing for {pace.read_timeout:g} s;"
                " send it without pausing"
            ) from None
        except ClientDisconnect:
            raise ClientGoneError("the client closed the connection mid-body") from None
        if chunk:
            received += len(chunk)
            yield chunk


async def upload_source(request: Request, *, pace: BodyPace) -> io.RawIOBase | io.BytesIO:
    """A binary reader of the body, to be read from a worker thread."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) <= SMALL_BODY:
        buffer = io.BytesIO()
        async for chunk in chunks(request, pace):
            buffer.write(chunk)
        buffer.seek(0)
        return buffer
    return ThreadBodyReader(chunks(request, pace), asyncio.get_running_loop())


class ThreadBodyReader(io.RawIOBase):
    """Reads an ASGI body from a worker thread, fetching each chunk on the event loop.

    Errors of the fetch (`BodyTimeoutError`, `ClientGoneError`) are raised in
    the reading thread, so the blockstore's put fails and disposes of its
    partial blob as for any other failed write.
    """

    def __init__(self, stream: AsyncIterator[bytes], loop: asyncio.AbstractEventLoop) -> None:
        self._stream = stream
        self._loop = loop
        self._pending = b""
        self._done = False

    @property
    def done(self) -> bool:
        """Whether the whole body was received and read."""
        return self._done and not self._pending

    def readable(self) -> bool:
        return True

    async def _next(self) -> bytes | None:
        try:
            return await anext(self._stream)
        except StopAsyncIteration:
            return None

    def read(self, size: int | None = -1) -> bytes:
        while not self._pending and not self._done:
            chunk = asyncio.run_coroutine_threadsafe(self._next(), self._loop).result()
            if chunk is None:
                self._done = True
            else:
                self._pending = chunk
        if size is None or size < 0 or size >= len(self._pending):
            data, self._pending = self._pending, b""
        else:
            data, self._pending = self._pending[:size], self._pending[size:]
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
