"""Requests signed by botocore's own SigV4 signer, for what boto3's client will not send.

A skewed clock, a virtual-hosted Host header over loopback, a streamed body with
a trailer over plain HTTP (boto3 streams only over HTTPS), a malformed XML body:
the signature is still botocore's, computed by the code every boto3 call runs.
"""

from __future__ import annotations

import datetime
from typing import Any
from unittest import mock

import httpx
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY

TRAILER_CRC32: dict[str, Any] = {
    "request_algorithm": {"in": "trailer", "name": "x-amz-checksum-crc32", "algorithm": "crc32"}
}


def sign(
    method: str,
    url: str,
    *,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    context: dict[str, Any] | None = None,
    access_key_id: str = ACCESS_KEY_ID,
    secret: str = SECRET_ACCESS_KEY,
    at: datetime.datetime | None = None,
) -> dict[str, str]:
    """The headers botocore signs the request with (at `at`, default now)."""
    request = AWSRequest(method=method, url=url, data=body, headers=dict(headers or {}))
    request.context.update(context or {})
    signer = S3SigV4Auth(Credentials(access_key_id, secret), "s3", "us-east-1")
    if at is None:
        signer.add_auth(request)
    else:
        with mock.patch("botocore.auth.get_current_datetime", return_value=at):
            signer.add_auth(request)
    return {name: str(value) for name, value in request.headers.items()}


def send(method: str, url: str, *, body: bytes = b"", **options: Any) -> httpx.Response:
    """Sign with `sign(**options)`, then send with httpx."""
    headers = sign(method, url, body=body, **options)
    return httpx.request(method, url, headers=headers, content=body, timeout=60)
