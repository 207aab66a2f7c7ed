"""Request bodies: strict JSON for operations, streams for object uploads.

JSON bodies are bounded (`MAX_JSON_BYTES`) and decoded straight into a wire
struct, so malformed JSON, a wrong type or an unknown field is a 400 before any
handler runs. Upload bodies up to `SMALL_BODY` are read at once (one thread hop
fewer); larger or unsized ones are pulled chunk by chunk from the event loop by
the worker thread that stores them (any thread: the reader holds its loop), so
memory stays flat for any size.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from typing import Any, Final

import msgspec
from starlette.requests import Request

from kvlake.errors import InvalidInputError

MAX_JSON_BYTES: Final = 4 << 20
SMALL_BODY: Final = 1 << 20


async def read_json(request: Request, model: Any, *, optional: bool = False) -> Any:
    """The body decoded as `model` (None if `optional` and empty); else InvalidInputError."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_JSON_BYTES):
        raise InvalidInputError(f"request body is over {MAX_JSON_BYTES} bytes; send less")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_JSON_BYTES:
            raise InvalidInputError(f"request body is over {MAX_JSON_BYTES} bytes; send less")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if optional and not raw.strip():
        return None
    try:
        return msgspec.json.decode(raw, type=model, strict=True)
    except msgspec.ValidationError as exc:
        raise InvalidInputError(f"request body is invalid: {exc}") from None
    except msgspec.DecodeError as exc:
        raise InvalidInputError(f"request body is not valid JSON: {exc}") from None


async def upload_source(request: Request) -> io.RawIOBase | io.BytesIO:
    """A binary reader of the body, to be read from a worker thread."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) <= SMALL_BODY:
        return io.BytesIO(await request.body())
    return ThreadBodyReader(request.stream(), asyncio.get_running_loop())


class ThreadBodyReader(io.RawIOBase):
    """Reads an ASGI body from a worker thread, fetching each chunk on the event loop."""

    def __init__(self, stream: AsyncIterator[bytes], loop: asyncio.AbstractEventLoop) -> None:
        self._stream = stream
        self._loop = loop
        self._pending = b""
        self._done = False

    def readable(self) -> bool:
        return True

    async def _next(self) -> bytes | None:
        try:
            return await self._stream.__anext__()
        except StopAsyncIteration:
            return None

    def read(self, size: int = -1) -> bytes:
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
