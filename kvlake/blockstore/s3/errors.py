"""What an S3 error means: retry under a lower rate, retry later, or tell the user what to fix.

Kept apart from the adapter so the one table of S3 error codes is read in one
place and tested directly: the adapter's retry loop asks `classify`, and what
it finally raises comes from `translate`.
"""

from __future__ import annotations

import enum
from typing import Final
from urllib.parse import urlsplit

import botocore.exceptions

from kvlake.errors import (
    BlobNotFoundError,
    BlobReplacedError,
    ConfigError,
    InvalidInputError,
    KvlakeError,
    UnavailableError,
    UploadRefusedError,
)

THROTTLE_CODES: Final = frozenset(
    {
        "SlowDown",
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "RequestThrottledException",
        "RequestLimitExceeded",
        "TooManyRequests",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "BandwidthLimitExceeded",
        "ServiceUnavailable",
    }
)
"""Error codes that mean "too fast": AWS's, and those S3-compatible stores answer."""
TRANSIENT_CODES: Final = frozenset(
    {"InternalError", "RequestTimeout", "RequestTimeoutException", "IDPCommunicationError"}
)
UPLOAD_REFUSALS: Final = frozenset(
    {"EntityTooSmall", "InvalidPart", "InvalidPartOrder", "NoSuchUpload"}
)
"""A multipart upload's refusals: the client's parts, not the store, are at fault."""
CREDENTIAL_CODES: Final = frozenset(
    {
        "AccessDenied",
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "ExpiredToken",
        "InvalidToken",
        "AllAccessDisabled",
        "403",
    }
)
_CREDENTIALS_HINT: Final = (
    "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or give the host a role"
)


class RangeNotSatisfiableError(InvalidInputError):
    """S3 answered 416: the requested range starts at or beyond the object's end."""


class Outcome(enum.Enum):
    """What the retry loop does with a failed request."""

    THROTTLED = "throttled"
    """Too fast: lower the shared rate, back off, retry."""
    TRANSIENT = "transient"
    """A 5xx or a dropped connection: back off, retry a few times."""
    FINAL = "final"
    """Retrying cannot help: translate and raise."""


def _code_and_status(exc: botocore.exceptions.ClientError) -> tuple[str, int]:
    error = exc.response.get("Error", {})
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    return str(error.get("Code", "")), int(status)


def classify(exc: Exception) -> Outcome:
    """Sort a botocore error into throttled, transient or final."""
    if isinstance(exc, botocore.exceptions.ClientError):
        code, status = _code_and_status(exc)
        if code in THROTTLE_CODES or status in (429, 503):
            return Outcome.THROTTLED
        if code in TRANSIENT_CODES or status >= 500:
            return Outcome.TRANSIENT
        return Outcome.FINAL
    if isinstance(
        exc,
        botocore.exceptions.ConnectionError
        | botocore.exceptions.HTTPClientError
        | botocore.exceptions.ResponseStreamingError,
    ):
        return Outcome.TRANSIENT
    return Outcome.FINAL


def endpoint_host(endpoint: str) -> str:
    """The endpoint without anything a URL may carry besides scheme, host and port."""
    parts = urlsplit(endpoint)
    return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}"


def translate(exc: Exception, doing: str, endpoint: str) -> KvlakeError:
    """The kvlake error for a botocore error that will not be retried (any longer)."""
    where = endpoint_host(endpoint)
    if isinstance(
        exc, botocore.exceptions.NoCredentialsError | botocore.exceptions.PartialCredentialsError
    ):
        return ConfigError(
            f"cannot {doing}: no usable AWS credentials were found; {_CREDENTIALS_HINT}"
        )
    if isinstance(exc, botocore.exceptions.ClientError):
        code, status = _code_and_status(exc)
        message = exc.response.get("Error", {}).get("Message", "")
        if code == "InvalidRange" or status == 416:
            return RangeNotSatisfiableError(f"cannot {doing}: the range starts beyond the blob")
        if code == "PreconditionFailed" or status == 412:  # only reads send IfMatch
            return BlobReplacedError(f"cannot {doing}: its ETag is no longer the one read")
        if code == "NoSuchBucket":
            return ConfigError(
                f"cannot {doing}: the bucket does not exist at {where}; create it, or check"
                " AWS_ENDPOINT_URL and the storage namespace"
            )
        if code in UPLOAD_REFUSALS:
            return UploadRefusedError(
                code, f"cannot {doing}: S3 refused it ({code}{f': {message}' if message else ''})"
            )
        if code in ("NoSuchKey", "404", "NotFound") or status == 404:
            return BlobNotFoundError(f"cannot {doing}: not found")
        if code in CREDENTIAL_CODES or status == 403:
            return ConfigError(
                f"cannot {doing}: S3 at {where} refused the request ({code}); check the"
                f" credentials ({_CREDENTIALS_HINT}) and that their policy grants what"
                " docs/s3.md lists"
            )
        if code == "KeyTooLongError":
            return InvalidInputError(
                f"cannot {doing}: the object key is longer than S3's 1,024 bytes; use shorter keys"
            )
        outcome = classify(exc)
        if outcome is Outcome.THROTTLED:
            return UnavailableError(
                f"cannot {doing}: S3 at {where} kept throttling ({code or status}) through every"
                " retry at a falling rate; retry later"
            )
        return UnavailableError(
            f"cannot {doing}: S3 at {where} answered {code or status}"
            f"{f' ({message})' if message else ''}; retry later"
        )
    if isinstance(
        exc, botocore.exceptions.EndpointConnectionError | botocore.exceptions.ConnectTimeoutError
    ):
        return UnavailableError(
            f"cannot {doing}: S3 endpoint {where} cannot be reached; check AWS_ENDPOINT_URL"
            " (or the URL's endpoint_url) and the network, then retry"
        )
    # Not str(exc): botocore's messages carry the endpoint URL, which may carry a secret.
    return UnavailableError(
        f"cannot {doing}: S3 at {where} failed ({type(exc).__name__}); retry later"
    )
