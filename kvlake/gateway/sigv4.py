"""AWS Signature Version 4: read a request's signature and compute what it should be.

S3 clients sign either in the Authorization header or in a presigned query
string (`X-Amz-Signature`). Both sign the same canonical request: the method,
the URI-encoded path, the sorted query, the signed headers and the payload's
hash (or `UNSIGNED-PAYLOAD`, or a `STREAMING-*` marker when the body is
aws-chunked, each chunk then signed on its own: see `kvlake.gateway.chunked`).
The server never trusts the client's canonical form: it rebuilds it from what
arrived, so a request changed in transit, or signed with another secret, does
not match.

Time is checked before the signature (a request more than 15 minutes from the
server's clock is refused with RequestTimeTooSkewed, a presigned URL past its
expiry with AccessDenied), so a replayed request is refused whatever its secret.
"""

from __future__ import annotations

import calendar
import hashlib
import hmac
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from kvlake.gateway.errors import S3Error

ALGORITHM: Final = "AWS4-HMAC-SHA256"
UNSIGNED: Final = "UNSIGNED-PAYLOAD"
STREAMING_SIGNED: Final = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
STREAMING_SIGNED_TRAILER: Final = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
STREAMING_UNSIGNED_TRAILER: Final = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
STREAMING: Final = frozenset(
    {STREAMING_SIGNED, STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER}
)
EMPTY_SHA256: Final = hashlib.sha256(b"").hexdigest()
MAX_SKEW_SECONDS: Final = 15 * 60
"""S3's tolerance between the client's clock and the server's."""
MAX_PRESIGN_SECONDS: Final = 7 * 24 * 3600
"""The longest a presigned URL may live (S3's limit)."""

_HEX64: Final = re.compile(r"[0-9a-f]{64}")
_CREDENTIAL: Final = re.compile(r"([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request")


def _refuse(code: str, message: str, status: int = 403) -> S3Error:
    return S3Error(status, code, message)


@dataclass(frozen=True)
class Credential:
    """The `Credential=` part: whose key, and the day, region and service it signs for."""

    access_key_id: str
    date: str
    region: str
    service: str

    @property
    def scope(self) -> str:
        return f"{self.date}/{self.region}/{self.service}/aws4_request"


@dataclass(frozen=True)
class Signature:
    """What a request says about its own signature, before anything is verified."""

    credential: Credential
    amz_date: str
    """`YYYYMMDDTHHMMSSZ`: when the client signed."""
    signed_headers: tuple[str, ...]
    signature: str
    payload: str
    """The payload hash as signed: hex sha256, UNSIGNED-PAYLOAD or a STREAMING marker."""
    expires: int | None = None
    """Seconds a presigned URL lives; None for a header signature."""

    @property
    def presigned(self) -> bool:
        return self.expires is not None


def _credential(text: str) -> Credential:
    match = _CREDENTIAL.fullmatch(text.strip())
    if match is None:
        raise _refuse(
            "AuthorizationHeaderMalformed",
            f"credential {text!r} is malformed; it must be"
            " '<access key id>/<YYYYMMDD>/<region>/s3/aws4_request'",
            400,
        )
    return Credential(*match.groups())


def read_signature(
    query: Sequence[tuple[str, str]], headers: dict[str, list[str]]
) -> Signature | None:
    """The request's SigV4 signature, from its Authorization header or its query string.

    Returns None when the request is not signed with V4 (it may be V2: `sigv2`).
    Headers are lower-cased names with their values in order.

    Raises:
        S3Error: a signature in a form S3 would refuse (SigV2, a missing part).
    """
    authorization = ",".join(headers.get("authorization", [])).strip()
    params = dict(query)
    if authorization and not authorization.startswith("AWS "):
        return _from_header(authorization, headers)
    if "X-Amz-Signature" in params or "X-Amz-Algorithm" in params:
        return _from_query(params)
    return None


def _from_header(authorization: str, headers: dict[str, list[str]]) -> Signature:
    algorithm, _, rest = authorization.partition(" ")
    if algorithm != ALGORITHM:
        raise _refuse(
            "AuthorizationHeaderMalformed",
            f"the Authorization header uses {algorithm!r}; sign with {ALGORITHM}",
            400,
        )
    parts: dict[str, str] = {}
    for item in rest.split(","):
        name, _, value = item.strip().partition("=")
        parts[name] = value
    missing = [p for p in ("Credential", "SignedHeaders", "Signature") if not parts.get(p)]
    if missing:
        raise _refuse(
            "AuthorizationHeaderMalformed",
            f"the Authorization header lacks {', '.join(missing)}",
            400,
        )
    amz_date = _first(headers, "x-amz-date") or _first(headers, "date")
    payload = _first(headers, "x-amz-content-sha256")
    if not payload:
        raise _refuse(
            "InvalidRequest",
            "x-amz-content-sha256 is missing; SigV4 requests must send the payload's hash",
            400,
        )
    if payload not in STREAMING and payload != UNSIGNED and not _HEX64.fullmatch(payload):
        raise _refuse(
            "InvalidArgument", f"x-amz-content-sha256 {payload!r} is not a sha256 or marker", 400
        )
    return Signature(
        credential=_credential(parts["Credential"]),
        amz_date=amz_date,
        signed_headers=_signed_headers(parts["SignedHeaders"]),
        signature=parts["Signature"],
        payload=payload,
    )


def _from_query(params: dict[str, str]) -> Signature:
    if params.get("X-Amz-Algorithm") != ALGORITHM:
        raise _refuse(
            "AuthorizationQueryParametersError",
            f"X-Amz-Algorithm must be {ALGORITHM}",
            400,
        )
    missing = [
        p
        for p in ("X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders")
        if not params.get(p)
    ]
    if missing or not params.get("X-Amz-Signature"):
        raise _refuse(
            "AuthorizationQueryParametersError",
            f"the presigned URL lacks {', '.join(missing or ['X-Amz-Signature'])}",
            400,
        )
    expires = params["X-Amz-Expires"]
    if not expires.isdigit() or not 0 < int(expires) <= MAX_PRESIGN_SECONDS:
        raise _refuse(
            "AuthorizationQueryParametersError",
            f"X-Amz-Expires must be 1 to {MAX_PRESIGN_SECONDS} seconds, not {expires!r}",
            400,
        )
    return Signature(
        credential=_credential(params["X-Amz-Credential"]),
        amz_date=params["X-Amz-Date"],
        signed_headers=_signed_headers(params["X-Amz-SignedHeaders"]),
        signature=params["X-Amz-Signature"],
        payload=UNSIGNED,
        expires=int(expires),
    )


def _first(headers: dict[str, list[str]], name: str) -> str:
    values = headers.get(name)
    return values[0].strip() if values else ""


def signed_at(signature: Signature) -> float:
    """The signing time as unix seconds; AccessDenied if it is not `YYYYMMDDTHHMMSSZ`."""
    try:
        parsed = time.strptime(signature.amz_date, "%Y%m%dT%H%M%SZ")
    except ValueError:
        raise _refuse(
            "AccessDenied",
            f"X-Amz-Date {signature.amz_date!r} is not YYYYMMDDTHHMMSSZ; sign with the time",
        ) from None
    if signature.amz_date[:8] != signature.credential.date:
        raise _refuse(
            "SignatureDoesNotMatch",
            "the credential's date is not the day of X-Amz-Date; sign with one date",
        )
    return float(calendar.timegm(parsed))


def check_time(signature: Signature, now: float) -> None:
    """Refuse a request signed too far from `now`, or a presigned URL past its expiry."""
    moment = signed_at(signature)
    if signature.expires is not None:
        if now > moment + signature.expires:
            raise _refuse("AccessDenied", "Request has expired: presign the URL again")
        if moment - now > MAX_SKEW_SECONDS:
            raise _refuse(
                "RequestTimeTooSkewed", "the URL was signed in the future; check the clock"
            )
        return
    if abs(now - moment) > MAX_SKEW_SECONDS:
        raise _refuse(
            "RequestTimeTooSkewed",
            "The difference between the request time and the server's time is too large"
            f" (over {MAX_SKEW_SECONDS // 60} minutes); fix the client's clock",
        )


def uri_encode(text: str, *, keep_slash: bool) -> str:
    """AWS's UriEncode: every byte but the unreserved ones percent-encoded (UTF-8)."""
    return quote(text, safe="/~" if keep_slash else "~")


def _signed_headers(text: str) -> tuple[str, ...]:
    names = tuple(text.split(";"))
    if "host" not in names:
        raise _refuse(
            "AccessDenied", "the signature must cover the host header; sign it as SigV4 requires"
        )
    return names


def canonical_request(
    method: str,
    path: str,
    query: Sequence[tuple[str, str]],
    headers: dict[str, list[str]],
    signature: Signature,
) -> str:
    """The canonical request the client signed, rebuilt from what arrived.

    `path` is the decoded path as the client addressed it (S3 encodes it once);
    the query excludes nothing but a presigned URL's own `X-Amz-Signature`.
    """
    pairs = sorted(
        (uri_encode(name, keep_slash=False), uri_encode(value, keep_slash=False))
        for name, value in query
        if name != "X-Amz-Signature"
    )
    lines = [method, uri_encode(path, keep_slash=True), "&".join(f"{k}={v}" for k, v in pairs)]
    for name in signature.signed_headers:
        values = headers.get(name)
        if values is None:
            raise _refuse("SignatureDoesNotMatch", f"signed header {name!r} is not in the request")
        lines.append(f"{name}:{','.join(' '.join(v.split()) for v in values)}")
    lines += ["", ";".join(signature.signed_headers), signature.payload]
    return "\n".join(lines)


def signing_key(secret: str, credential: Credential) -> bytes:
    """The day's key: HMAC chained over date, region, service and `aws4_request`."""
    key = ("AWS4" + secret).encode()
    for part in (credential.date, credential.region, credential.service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def sign(key: bytes, string_to_sign: str) -> str:
    return hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()


def request_string_to_sign(signature: Signature, canonical: str) -> str:
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    return f"{ALGORITHM}\n{signature.amz_date}\n{signature.credential.scope}\n{digest}"


def matches(expected: str, given: str) -> bool:
    """Constant-time comparison of two hex signatures."""
    return hmac.compare_digest(expected.encode(), given.encode())
