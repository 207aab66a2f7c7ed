"""Every botocore error the s3 adapter can meet is sorted (retry or not) and translated."""

from __future__ import annotations

import botocore.exceptions
import pytest

from kvlake.blockstore.s3.errors import (
    THROTTLE_CODES,
    Outcome,
    RangeNotSatisfiableError,
    classify,
    translate,
)
from kvlake.errors import (
    BlobNotFoundError,
    ConfigError,
    InvalidInputError,
    KvlakeError,
    UnavailableError,
)

ENDPOINT = "https://user:pass@s3.example.com:9000/path?token=x"


def client_error(code: str, status: int) -> botocore.exceptions.ClientError:
    return botocore.exceptions.ClientError(
        {
            "Error": {"Code": code, "Message": "told"},
            "ResponseMetadata": {
                "HTTPStatusCode": status,
                "HTTPHeaders": {},
                "HostId": "",
                "RequestId": "",
                "RetryAttempts": 0,
            },
        },
        "GetObject",
    )


@pytest.mark.parametrize(
    ("error", "outcome", "kind", "words"),
    [
        (client_error("SlowDown", 503), Outcome.THROTTLED, UnavailableError, "kept throttling"),
        (client_error("Throttling", 400), Outcome.THROTTLED, UnavailableError, "kept throttling"),
        (client_error("", 429), Outcome.THROTTLED, UnavailableError, "kept throttling"),
        (client_error("InternalError", 500), Outcome.TRANSIENT, UnavailableError, "retry later"),
        (client_error("BadGateway", 502), Outcome.TRANSIENT, UnavailableError, "retry later"),
        (client_error("NoSuchKey", 404), Outcome.FINAL, BlobNotFoundError, "not found"),
        (client_error("404", 404), Outcome.FINAL, BlobNotFoundError, "not found"),
        (client_error("NoSuchBucket", 404), Outcome.FINAL, ConfigError, "does not exist"),
        (client_error("AccessDenied", 403), Outcome.FINAL, ConfigError, "docs/s3.md"),
        (client_error("InvalidAccessKeyId", 403), Outcome.FINAL, ConfigError, "credentials"),
        (client_error("InvalidRange", 416), Outcome.FINAL, RangeNotSatisfiableError, "range"),
        (client_error("KeyTooLongError", 400), Outcome.FINAL, InvalidInputError, "1,024"),
        (client_error("MalformedXML", 400), Outcome.FINAL, UnavailableError, "MalformedXML"),
        (
            botocore.exceptions.EndpointConnectionError(endpoint_url=ENDPOINT),
            Outcome.TRANSIENT,
            UnavailableError,
            "cannot be reached",
        ),
        (
            botocore.exceptions.ConnectionClosedError(endpoint_url=ENDPOINT),
            Outcome.TRANSIENT,
            UnavailableError,
            "retry later",
        ),
        (
            botocore.exceptions.ReadTimeoutError(endpoint_url=ENDPOINT),
            Outcome.TRANSIENT,
            UnavailableError,
            "retry later",
        ),
        (botocore.exceptions.NoCredentialsError(), Outcome.FINAL, ConfigError, "AWS_PROFILE"),
        (
            botocore.exceptions.PartialCredentialsError(provider="env", cred_var="secret"),
            Outcome.FINAL,
            ConfigError,
            "credentials",
        ),
    ],
)
def test_each_error_is_sorted_and_translated(
    error: Exception, outcome: Outcome, kind: type[KvlakeError], words: str
) -> None:
    assert classify(error) is outcome
    translated = translate(error, "read blob 'k'", ENDPOINT)
    assert type(translated) is kind
    assert words in str(translated)
    assert "cannot read blob 'k'" in str(translated)
    assert "pass" not in str(translated) and "token" not in str(translated)


def test_every_throttle_code_is_throttled_whatever_the_status() -> None:
    for code in THROTTLE_CODES:
        assert classify(client_error(code, 400)) is Outcome.THROTTLED
