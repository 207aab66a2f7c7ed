"""The one map from kvlake errors to HTTP statuses, and the handlers that apply it.

Endpoints never catch to translate: an error raised anywhere below reaches
`kvlake_error`, which walks the error's MRO to the first class in `STATUS`, so
a new specific error needs no change here. lakeFS's mapping is kept on the wire:
permission denied is 401 ("insufficient permissions"), as lakeFS answers it.
Anything that is not a `KvlakeError` is a bug: a 500 with a generic message,
and the traceback in the log.
"""

from __future__ import annotations

import logging
from typing import Final

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from kvlake import errors
from kvlake.api.body import BodyBudgetFullError, BodyTimeoutError
from kvlake.api.wire.common import Error

log = logging.getLogger(__name__)

STATUS: Final[dict[type[errors.KvlakeError], int]] = {
    errors.NotFoundError: 404,
    errors.RepositoryDeletingError: 410,
    errors.ProtectedBranchError: 403,
    errors.ConflictError: 409,
    errors.TooManyTriesError: 429,
    errors.PreconditionFailedError: 412,
    errors.InvalidInputError: 400,
    errors.AuthenticationError: 401,
    errors.PermissionDeniedError: 401,
    errors.RateLimitedError: 429,
    errors.UnavailableError: 503,
    errors.ClosedError: 503,
    errors.ConfigError: 500,
    BodyTimeoutError: 408,
}
"""Error class -> status; the most specific class in an error's MRO wins."""

INTERNAL_MESSAGE: Final = "internal error; the server log has the details"
_encode = msgspec.json.Encoder().encode


def status_of(exc: BaseException) -> int:
    for cls in type(exc).__mro__:
        status = STATUS.get(cls)
        if status is not None:
            return status
    return 500


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(
        _encode(Error(message=message)),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


async def kvlake_error(request: Request, exc: Exception) -> Response:
    status = status_of(exc)
    if isinstance(exc, BodyBudgetFullError):
        # Expected under load, and a client could provoke it at will: no traceback.
        log.warning("%s %s refused: %s", request.method, request.url.path, exc)
        return error_response(status, str(exc))
    if status >= 500:
        log.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
        message = INTERNAL_MESSAGE if status == 500 else str(exc)
    else:
        message = str(exc)
    return error_response(status, message)


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (no such route, method not allowed) in lakeFS's error shape."""
    assert isinstance(exc, HTTPException)
    return error_response(exc.status_code, str(exc.detail), dict(exc.headers or {}))


async def client_gone(request: Request, exc: Exception) -> Response:
    """A client that left mid-body: one info line, never a traceback (a writer could flood
    the log with them). The answer goes nowhere; it only ends the request."""
    log.info("%s %s: %s", request.method, request.url.path, exc)
    return error_response(400, str(exc))


async def internal_error(request: Request, exc: Exception) -> Response:
    log.error("%s %s failed with a bug", request.method, request.url.path, exc_info=exc)
    return error_response(500, INTERNAL_MESSAGE)
