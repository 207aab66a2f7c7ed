"""The one map from kvlake errors to HTTP statuses, and the handlers that apply it.

Endpoints never catch to translate: an error raised anywhere below reaches
`kvlake_error`, which walks the error's MRO to the first class in `STATUS`, so
a new specific error needs no change here. lakeFS's mapping is kept on the wire:
permission denied is 401 ("insufficient permissions"), as lakeFS answers it.
Anything that is not a `KvlakeError` is a bug: a 500 with a generic message,
and the traceback in the log.

Clients and their users look for lakeFS's texts, so `message` is lakeFS's text
for the error (`LAKEFS_MESSAGES`, by the same MRO walk, or an operation's own
text for it: `Operation.lakefs_errors`, which the adapter attaches by raising
`OperationError`), and kvlake's own message, which says what to do, goes in
`detail`. Errors lakeFS has no fixed text for keep kvlake's message. A 404's
detail never names storage internals: errors of the KV and of range files
carry no detail at all.
"""

from __future__ import annotations

import logging
from typing import Final

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from kvlake import errors
from kvlake.api.body import BodyBudgetFullError
from kvlake.api.wire.common import Error
from kvlake.http import BodyTimeoutError

log = logging.getLogger(__name__)

STATUS: Final[dict[type[errors.KvlakeError], int]] = {
    errors.NotFoundError: 404,
    errors.RepositoryDeletingError: 410,
    errors.ObjectGoneError: 410,
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
    errors.FeatureOffError: 501,
    BodyTimeoutError: 408,
}
"""Error class -> status; the most specific class in an error's MRO wins."""

LAKEFS_MESSAGES: Final[dict[type[errors.KvlakeError], str]] = {
    errors.RepositoryNotFoundError: "repository not found",
    errors.BranchNotFoundError: "branch not found",
    errors.TagNotFoundError: "tag not found",
    errors.CommitNotFoundError: "commit not found",
    errors.RefNotFoundError: "not found",
    errors.EntryNotFoundError: "not found",
    errors.KeyNotFoundError: "not found",
    errors.BlobNotFoundError: "not found",
    errors.MetarangeNotFoundError: "not found",
    errors.RangeNotFoundError: "not found",
    errors.TaskNotFoundError: "not found",
    errors.PullRequestNotFoundError: "pull request not found",
    errors.PullRequestIdError: (
        "argument pullRequestID: pull request id: invalid value: validation error"
    ),
    errors.SameBranchError: (
        "source and destination branches are the same: same branch validation error"
    ),
    errors.PullRequestClosedError: "bad pull request status",
    errors.RepositoryDeletingError: "repository in deletion",
    errors.ProtectedBranchError: "cannot write to protected branch",
    errors.DefaultBranchError: "cannot delete repository default branch",
    errors.MergeConflictError: "conflict found",
    errors.NoChangesError: "no changes",
    errors.DirtyBranchError: "uncommitted changes (dirty branch)",
    errors.TooManyTriesError: "Too many attempts, try again later",
    errors.PreconditionFailedError: "Precondition failed",
    errors.AuthenticationError: "error authenticating request",
    errors.PermissionDeniedError: "insufficient permissions",
    errors.FeatureOffError: "Not Implemented",
}
"""Error class -> lakeFS's message for it (pkg/graveler/errors.go, the API controller)."""

_NO_DETAIL: Final = (
    errors.KeyNotFoundError,
    errors.BlobNotFoundError,
    errors.MetarangeNotFoundError,
    errors.RangeNotFoundError,
)
"""404s whose own message names KV keys, partitions, blob addresses or range ids."""

INTERNAL_MESSAGE: Final = "internal error; the server log has the details"
_encode = msgspec.json.Encoder().encode


class OperationError(errors.KvlakeError):
    """`cause`, raised by an operation that declares lakeFS's text for it (`message`)."""

    def __init__(self, cause: errors.KvlakeError, message: str) -> None:
        super().__init__(message)
        self.cause = cause
        self.message = message


def status_of(exc: BaseException) -> int:
    if isinstance(exc, OperationError):
        exc = exc.cause
    for cls in type(exc).__mro__:
        status = STATUS.get(cls)
        if status is not None:
            return status
    return 500


def lakefs_message(exc: errors.KvlakeError) -> str | None:
    """lakeFS's text for the error, or None where lakeFS has no fixed one."""
    if isinstance(exc, errors.HookAbortedError):
        return str(exc)  # lakeFS answers the run's error text itself
    for cls in type(exc).__mro__:
        message = LAKEFS_MESSAGES.get(cls)
        if message is not None:
            return message
    return None


def error_body(exc: errors.KvlakeError) -> Error:
    """lakeFS's message and, in `detail`, kvlake's (what to do), for a client error."""
    cause = exc.cause if isinstance(exc, OperationError) else exc
    message = exc.message if isinstance(exc, OperationError) else lakefs_message(exc)
    own = str(cause)
    if message is None:
        return Error(message=own)
    if isinstance(cause, _NO_DETAIL) or own == message:
        return Error(message=message)
    return Error(message=message, detail=own)


def error_response(
    status: int,
    message: str | Error,
    headers: dict[str, str] | None = None,
) -> Response:
    body = message if isinstance(message, Error) else Error(message=message)
    return Response(
        _encode(body),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


async def kvlake_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, errors.KvlakeError)
    status = status_of(exc)
    if isinstance(exc, BodyBudgetFullError):
        # Expected under load, and a client could provoke it at will: no traceback.
        log.warning("%s %s refused: %s", request.method, request.url.path, exc)
        return error_response(status, str(exc))
    if status >= 500 and status != 501:  # 501: a feature kvlake does not have, not a fault
        log.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
        return error_response(status, INTERNAL_MESSAGE if status == 500 else str(exc))
    return error_response(status, error_body(exc))


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
