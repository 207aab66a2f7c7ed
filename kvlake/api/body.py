"""Request bodies: strict JSON for operations, and their limits.

JSON bodies are bounded (`MAX_JSON_BYTES`) and decoded straight into a wire
struct, so malformed JSON, a wrong type or an unknown field is a 400 before any
handler runs. Upload bodies are kvlake/http's (`upload_source`), which the S3
gateway reads through too.

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
from collections.abc import AsyncIterator
from typing import Any, Final

import msgspec
from starlette.requests import Request

from kvlake.errors import InvalidInputError, UnavailableError
from kvlake.http import BodyPace, chunks, stream_share

MAX_JSON_BYTES: Final = 4 << 20
PUBLIC_MAX_JSON_BYTES: Final = 16 << 10
"""Cap of the body of an operation without credentials: a login is under 1 KiB."""
BUDGET_WAIT_SECONDS: Final = 1.0
"""How long a body waits for budget before it is refused with 503."""


class BodyBudgetFullError(UnavailableError):
    """The process holds its limit of request bodies; retry in a moment (503, no traceback)."""


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
        self._waiting = 0
        """Holds waiting for budget: a release wakes them only if there are any."""

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
        if size <= 0:  # nothing to hold; recording a 0 would let two such holds race a pop
            yield
            return

        def fits() -> bool:
            return self.used + size <= self.limit and self.held(client) + size <= self.client_limit

        if not fits():  # the common case, a share that fits, takes it without a task or lock
            self._waiting += 1
            try:
                async with self._freed:
                    try:
                        await asyncio.wait_for(self._freed.wait_for(fits), self._wait)
                    except TimeoutError:
                        raise self._full(client, size) from None
            finally:
                self._waiting -= 1
        # Nothing awaits between the check and these updates: no other coroutine runs.
        self.used += size
        self._by_client[client] = self.held(client) + size
        try:
            yield
        finally:
            self.used -= size
            left = self._by_client.pop(client) - size
            if left:
                self._by_client[client] = left
            if self._waiting:
                async with self._freed:
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
        return stream_share(declared)
    return max_json if size is None else min(size, max_json)


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
