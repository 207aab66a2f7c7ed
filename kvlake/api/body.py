"""Request bodies: strict JSON for operations, streams for object uploads, and their limits.

JSON bodies are bounded (`MAX_JSON_BYTES`) and decoded straight into a wire
struct, so malformed JSON, a wrong type or an unknown field is a 400 before any
handler runs. Upload bodies up to `SMALL_BODY` are read at once (one thread hop
fewer); larger or unsized ones are pulled chunk by chunk from the event loop by
the worker thread that stores them (any thread: the reader holds its loop), so
memory stays flat for any size.

What a body may cost is bounded per process: every body holds a share of one
`BodyBudget` while it is read and handled (its declared size, or `STREAM_SHARE`
for a stream, which holds one chunk at a time), and a read that sends nothing
for the read timeout ends the request with 408. A client that goes away
mid-body is not a bug: it raises `ClientGoneError`, logged as one info line.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator
from typing import Any, Final

import msgspec
from starlette.requests import ClientDisconnect, Request

from kvlake.errors import InvalidInputError, KvlakeError, UnavailableError

MAX_JSON_BYTES: Final = 4 << 20
SMALL_BODY: Final = 1 << 20
STREAM_SHARE: Final = 256 << 10
"""Budget a streamed body holds: uvicorn pauses a connection whose unread body passes 64 KiB."""
BUDGET_WAIT_SECONDS: Final = 1.0
"""How long a body waits for budget before it is refused with 503."""


class BodyTimeoutError(KvlakeError):
    """The client sent nothing for the read timeout; send the body faster or retry."""


class BodyBudgetFullError(UnavailableError):
    """The process holds its limit of request bodies; retry in a moment (503, no traceback)."""


class ClientGoneError(KvlakeError):
    """The client closed the connection before sending its whole body; no one is answered."""


class BodyBudget:
    """Bytes of request bodies one process may hold at once, shared by its requests.

    Lives on the event loop: `hold` is called only from coroutines, so the count
    needs no lock beyond the condition that wakes waiters when a share comes back.
    """

    def __init__(self, limit: int, *, wait: float = BUDGET_WAIT_SECONDS) -> None:
        self.limit = limit
        self.used = 0
        self._wait = wait
        self._freed = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def hold(self, size: int) -> AsyncIterator[None]:
        """Hold `size` bytes (at most the whole budget) for the block's duration.

        Raises:
            BodyBudgetFullError: the budget stayed full for the wait (answered 503).
        """
        size = min(size, self.limit)
        async with self._freed:
            try:
                await asyncio.wait_for(
                    self._freed.wait_for(lambda: self.used + size <= self.limit), self._wait
                )
            except TimeoutError:
                raise BodyBudgetFullError(
                    f"the server is reading its limit of request bodies ({self.limit} bytes);"
                    " retry in a moment"
                ) from None
            self.used += size
        try:
            yield
        finally:
            async with self._freed:
                self.used -= size
                self._freed.notify_all()


def body_share(request: Request, *, stream: bool) -> int:
    """The budget a request's body holds: its declared size, capped as its reader caps it."""
    declared = request.headers.get("content-length")
    size = int(declared) if declared is not None and declared.isdigit() else None
    if stream:
        return size if size is not None and size <= SMALL_BODY else STREAM_SHARE
    return MAX_JSON_BYTES if size is None else min(size, MAX_JSON_BYTES)


async def chunks(request: Request, timeout: float) -> AsyncIterator[bytes]:
    """The body's chunks; BodyTimeoutError after `timeout` seconds with none, ClientGoneError."""
    stream = request.stream()
    while True:
        try:
            chunk = await asyncio.wait_for(anext(stream), timeout)
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise BodyTimeoutError(
                f"the request body sent nothing for {timeout:g} s; send it without pausing"
            ) from None
        except ClientDisconnect:
            raise ClientGoneError("the client closed the connection mid-body") from None
        if chunk:
            yield chunk


async def read_json(request: Request, model: Any, *, optional: bool = False, timeout: float) -> Any:
    """The body decoded as `model` (None if `optional` and empty); else InvalidInputError."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_JSON_BYTES):
        raise InvalidInputError(f"request body is over {MAX_JSON_BYTES} bytes; send less")
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks(request, timeout):
        size += len(chunk)
        if size > MAX_JSON_BYTES:
            raise InvalidInputError(f"request body is over {MAX_JSON_BYTES} bytes; send less")
        parts.append(chunk)
    raw = b"".join(parts)
    del parts
    if optional and not raw.strip():
        return None
    try:
        return msgspec.json.decode(raw, type=model, strict=True)
    except msgspec.ValidationError as exc:
        raise InvalidInputError(f"request body is invalid: {exc}") from None
    except msgspec.DecodeError as exc:
        raise InvalidInputError(f"request body is not valid JSON: {exc}") from None


async def upload_source(request: Request, *, timeout: float) -> io.RawIOBase | io.BytesIO:
    """A binary reader of the body, to be read from a worker thread."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) <= SMALL_BODY:
        buffer = io.BytesIO()
        async for chunk in chunks(request, timeout):
            buffer.write(chunk)
        buffer.seek(0)
        return buffer
    return ThreadBodyReader(chunks(request, timeout), asyncio.get_running_loop())


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
