"""Request bodies: strict JSON for operations, streams for object uploads, and their limits.

JSON bodies are bounded (`MAX_JSON_BYTES`) and decoded straight into a wire
struct, so malformed JSON, a wrong type or an unknown field is a 400 before any
handler runs. Upload bodies up to `SMALL_BODY` are read at once (one thread hop
fewer); larger or unsized ones are pulled chunk by chunk from the event loop by
the worker thread that stores them (any thread: the reader holds its loop), so
memory stays flat for any size.

What a body may cost is bounded per process: every body holds a share of a
`BodyBudget` while it is read and handled (its declared size, or `STREAM_SHARE`
for a stream, which holds one chunk at a time). Issue 23: slow bodies filled
the budget, so one client address holds at most its share of a budget, and
every body keeps a `BodyPace`: a read that sends nothing for the read timeout,
or a body averaging less than the minimum rate, ends the request with 408.
Operations without credentials (login, setup) have a budget of their own and a
tiny cap (`PUBLIC_MAX_JSON_BYTES`). A client that goes away mid-body is not a
bug: it raises `ClientGoneError`, logged as one info line.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from starlette.requests import ClientDisconnect, Request

from kvlake.errors import InvalidInputError, KvlakeError, UnavailableError

MAX_JSON_BYTES: Final = 4 << 20
PUBLIC_MAX_JSON_BYTES: Final = 16 << 10
"""Cap of the body of an operation without credentials: a login is under 1 KiB."""
SMALL_BODY: Final = 1 << 20
STREAM_SHARE: Final = 256 << 10
"""Budget a streamed body holds: uvicorn pauses a connection whose unread body passes 64 KiB."""
BUDGET_WAIT_SECONDS: Final = 1.0
"""How long a body waits for budget before it is refused with 503."""


class BodyTimeoutError(KvlakeError):
    """The client sent nothing for the read timeout; send the body faster or retry."""


class BodyTooSlowError(BodyTimeoutError):
    """The body came slower than the minimum rate; send it faster or retry."""


class BodyBudgetFullError(UnavailableError):
    """The process holds its limit of request bodies; retry in a moment (503, no traceback)."""


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


class BodyBudget:
    """Bytes of request bodies one process may hold at once, shared by its requests.

    One client address holds at most `client_limit` of it (issue 23: one address
    with slow bodies must not hold all of it). Lives on the event loop: `hold` is
    called only from coroutines, so the counts need no lock beyond the condition
    that wakes waiters when a share comes back.
    """

    def __init__(
        self, limit: int, *, client_share: float = 1.0, wait: float = BUDGET_WAIT_SECONDS
    ) -> None:
        self.limit = limit
        self.client_limit = max(1, int(limit * client_share))
        self.used = 0
        self._by_client: dict[str, int] = {}
        self._wait = wait
        self._freed = asyncio.Condition()

    def held(self, client: str) -> int:
        """Bytes the client address holds now."""
        return self._by_client.get(client, 0)

    @contextlib.asynccontextmanager
    async def hold(self, size: int, *, client: str = "") -> AsyncIterator[None]:
        """Hold `size` bytes (at most the client's share) for the block's duration.

        Raises:
            BodyBudgetFullError: the budget, or the client's share of it, stayed full for
                the wait (answered 503).
        """
        size = min(size, self.client_limit)

        def fits() -> bool:
            return self.used + size <= self.limit and self.held(client) + size <= self.client_limit

        async with self._freed:
            try:
                await asyncio.wait_for(self._freed.wait_for(fits), self._wait)
            except TimeoutError:
                raise self._full(client, size) from None
            if size:  # a client has an entry while it holds bytes, never one of 0
                self.used += size
                self._by_client[client] = self.held(client) + size
        if not size:
            yield
            return
        try:
            yield
        finally:
            async with self._freed:
                self.used -= size
                left = self._by_client.pop(client) - size
                if left:
                    self._by_client[client] = left
                self._freed.notify_all()

    def _full(self, client: str, size: int) -> BodyBudgetFullError:
        if self.held(client) + size > self.client_limit:
            return BodyBudgetFullError(
                f"client address {client} holds its share of request bodies"
                f" ({self.client_limit} of {self.limit} bytes); finish its other requests,"
                " then retry"
            )
        return BodyBudgetFullError(
            f"the server is reading its limit of request bodies ({self.limit} bytes);"
            " retry in a moment"
        )


def body_share(request: Request, *, stream: bool, max_json: int = MAX_JSON_BYTES) -> int:
    """The budget a request's body holds: its declared size, capped as its reader caps it."""
    declared = request.headers.get("content-length")
    size = int(declared) if declared is not None and declared.isdigit() else None
    if stream:
        return size if size is not None and size <= SMALL_BODY else STREAM_SHARE
    return max_json if size is None else min(size, max_json)


async def chunks(request: Request, pace: BodyPace) -> AsyncIterator[bytes]:
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


async def read_json(
    request: Request,
    model: Any,
    *,
    optional: bool = False,
    pace: BodyPace,
    max_bytes: int = MAX_JSON_BYTES,
) -> Any:
    """The body decoded as `model` (None if `optional` and empty); else InvalidInputError.

    A body declared or found over `max_bytes` is refused before or as it passes the cap.
    """
    too_big = f"request body is over {max_bytes} bytes; send less"
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > max_bytes):
        raise InvalidInputError(too_big)
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks(request, pace):
        size += len(chunk)
        if size > max_bytes:
            raise InvalidInputError(too_big)
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
