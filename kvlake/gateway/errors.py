"""S3's errors: the codes clients branch on, and the XML body every refusal carries.

A gateway handler raises `S3Error` for what only S3 names (a bad signature, a
bad digest), and lets the catalog's `KvlakeError`s through: `s3_error_of`
translates those in this one table, walking the class's MRO as the REST API's
table does, so a new specific error needs no change here. Every answer names
the request by its `RequestId` (also the `x-amz-request-id` header), which the
server's log line repeats.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import quote
from xml.sax.saxutils import escape

from kvlake import errors
from kvlake.http import BodyTimeoutError, ClientGoneError


class S3Error(Exception):
    """A refusal in S3's terms: HTTP status, S3 code and a message saying what to fix."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def no_such_bucket(name: str) -> S3Error:
    return S3Error(404, "NoSuchBucket", f"repository {name!r} does not exist; create it first")


def not_implemented(what: str) -> S3Error:
    return S3Error(
        501, "NotImplemented", f"{what} is not implemented by kvlake's S3 gateway (docs/gateway.md)"
    )


_CODES: Final[dict[type[errors.KvlakeError], tuple[int, str]]] = {
    errors.RepositoryNotFoundError: (404, "NoSuchBucket"),
    errors.NotFoundError: (404, "NoSuchKey"),
    errors.RepositoryDeletingError: (404, "NoSuchBucket"),
    errors.ProtectedBranchError: (403, "AccessDenied"),
    errors.PermissionDeniedError: (403, "AccessDenied"),
    errors.AuthenticationError: (403, "AccessDenied"),
    errors.RateLimitedError: (503, "SlowDown"),
    errors.TooManyTriesError: (503, "SlowDown"),
    errors.PreconditionFailedError: (412, "PreconditionFailed"),
    errors.LockedError: (409, "OperationAborted"),
    errors.ConflictError: (409, "OperationAborted"),
    errors.InvalidInputError: (400, "InvalidArgument"),
    errors.UnavailableError: (503, "ServiceUnavailable"),
    errors.ClosedError: (503, "ServiceUnavailable"),
    errors.FeatureOffError: (501, "NotImplemented"),
    BodyTimeoutError: (400, "RequestTimeout"),
    ClientGoneError: (400, "IncompleteBody"),
}
"""Catalog error class -> (status, S3 code); the most specific class in the MRO wins."""


def s3_error_of(exc: errors.KvlakeError) -> S3Error:
    """The S3 refusal for a catalog error; unknown classes are an InternalError (500)."""
    if isinstance(exc, errors.UploadRefusedError):  # named with S3's code by the blockstore
        return S3Error(404 if exc.code == "NoSuchUpload" else 400, exc.code, str(exc))
    for cls in type(exc).__mro__:
        if cls in _CODES:
            status, code = _CODES[cls]
            return S3Error(status, code, str(exc))
    return S3Error(500, "InternalError", "the server failed; see its log for the request id")


_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
"""Characters XML 1.0 cannot carry at all, even escaped (a key may hold them)."""


def error_xml(error: S3Error, *, resource: str, request_id: str) -> bytes:
    """S3's `<Error>` document for one refusal; the resource percent-encoded, as a URL path."""
    resource = quote(resource, safe="/~!$&'()*+,;=:@")
    message = _NOT_XML.sub("?", error.message)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error>'
        f"<Code>{error.code}</Code><Message>{escape(message)}</Message>"
        f"<Resource>{escape(resource)}</Resource><RequestId>{request_id}</RequestId>"
        "</Error>"
    ).encode()
