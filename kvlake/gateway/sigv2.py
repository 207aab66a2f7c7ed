"""AWS Signature Version 2, which old clients and boto3's default presigned URLs still use.

V2 signs an HMAC-SHA1 over the method, Content-MD5, Content-Type, the date (or
a presigned URL's `Expires`), the `x-amz-*` headers and the resource: the
bucket and key, plus the subresources S3 lists. It signs no body, so a V2
request's body is verified only by the digests it carries (Content-MD5).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Final
from urllib.parse import quote

from kvlake.gateway.errors import S3Error
from kvlake.gateway.sigv4 import MAX_SKEW_SECONDS

SIGNED_SUBRESOURCES: Final = frozenset(
    {
        "acl", "delete", "lifecycle", "location", "logging", "notification", "partNumber",
        "policy", "requestPayment", "response-cache-control", "response-content-disposition",
        "response-content-encoding", "response-content-language", "response-content-type",
        "response-expires", "restore", "tagging", "torrent", "uploadId", "uploads",
        "versionId", "versioning", "versions", "website",
    }
)  # fmt: skip
"""The query names V2 signs as part of the resource (S3's list)."""


@dataclass(frozen=True)
class SignatureV2:
    access_key_id: str
    signature: str
    expires: int | None
    """A presigned URL's expiry (unix seconds); None for a header signature."""


def read_signature_v2(
    query: Sequence[tuple[str, str]], headers: dict[str, list[str]]
) -> SignatureV2 | None:
    """The request's V2 signature (`Authorization: AWS key:sig`, or a presigned query)."""
    authorization = ",".join(headers.get("authorization", [])).strip()
    if authorization.startswith("AWS "):
        key, _, signature = authorization[4:].partition(":")
        if not key or not signature:
            raise S3Error(
                400, "InvalidArgument", "the Authorization header must be 'AWS <key>:<signature>'"
            )
        return SignatureV2(key.strip(), signature.strip(), None)
    params = dict(query)
    if "Signature" in params and "AWSAccessKeyId" in params:
        expires = params.get("Expires", "")
        if not expires.isdigit():
            raise S3Error(403, "AccessDenied", "a V2 presigned URL needs Expires (unix seconds)")
        return SignatureV2(params["AWSAccessKeyId"], params["Signature"], int(expires))
    return None


def check_time_v2(signature: SignatureV2, headers: dict[str, list[str]], now: float) -> None:
    if signature.expires is not None:
        if now > signature.expires:
            raise S3Error(403, "AccessDenied", "Request has expired: presign the URL again")
        return
    date = (headers.get("x-amz-date") or headers.get("date") or [""])[0]
    try:
        moment = parsedate_to_datetime(date).timestamp()
    except (TypeError, ValueError, IndexError):
        raise S3Error(403, "AccessDenied", "a V2 request needs a Date or x-amz-date") from None
    if abs(now - moment) > MAX_SKEW_SECONDS:
        raise S3Error(
            403,
            "RequestTimeTooSkewed",
            "The difference between the request time and the server's time is too large;"
            " fix the client's clock",
        )


def string_to_sign_v2(
    method: str,
    resource_path: str,
    query: Sequence[tuple[str, str]],
    headers: dict[str, list[str]],
    signature: SignatureV2,
) -> str:
    """What V2 signs; `resource_path` is `/<bucket>/<key>` decoded, whatever the addressing."""

    def first(name: str) -> str:
        values = headers.get(name)
        return values[0].strip() if values else ""

    if signature.expires is not None:
        date = str(signature.expires)
    else:
        date = "" if "x-amz-date" in headers else first("date")
    amz = sorted(
        (name, ",".join(v.strip() for v in values))
        for name, values in headers.items()
        if name.startswith("x-amz-")
    )
    subresources = sorted((k, v) for k, v in query if k in SIGNED_SUBRESOURCES)
    resource = quote(resource_path, safe="/~")
    if subresources:
        resource += "?" + "&".join(f"{k}={v}" if v else k for k, v in subresources)
    lines = [method, first("content-md5"), first("content-type"), date]
    lines += [f"{name}:{value}" for name, value in amz]
    return "\n".join(lines + [resource])


def sign_v2(secret: str, string_to_sign: str) -> str:
    digest = hmac.new(secret.encode(), string_to_sign.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()
