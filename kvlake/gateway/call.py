"""One S3 request as a gateway handler sees it: the bucket and key it names, and its caller.

Addressing: path style is `/<repository>/<ref>/<path>`; with a configured
domain, a request whose Host is `<repository>.<domain>` is virtual-hosted and
its whole path is the key. The key's first segment is the ref, the rest the
object's path in it.

Authentication happens before any handler and any byte of the body is read: the
signature is rebuilt from what arrived (`kvlake.gateway.sigv4`) and checked
against the caller's secret through the authenticator, so failed signatures
slow the client down exactly as failed REST logins do.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from starlette.requests import Request

from kvlake.auth import Authenticator, Permission, User
from kvlake.catalog import Catalog, PhysicalLinks
from kvlake.config import GatewaySettings
from kvlake.errors import AuthenticationError, RepositoryNotFoundError
from kvlake.gateway import sigv4
from kvlake.gateway.chunked import ChunkSigner
from kvlake.gateway.errors import S3Error, no_such_bucket
from kvlake.gateway.sigv2 import (
    SignatureV2,
    check_time_v2,
    read_signature_v2,
    sign_v2,
    string_to_sign_v2,
)
from kvlake.graveler import Graveler, Repository
from kvlake.http import ThreadBodyReader


class Backends(Protocol):
    """What the gateway uses of the server's services (`kvlake.api.services.Services`)."""

    @property
    def catalog(self) -> Catalog: ...

    @property
    def graveler(self) -> Graveler: ...

    @property
    def authenticator(self) -> Authenticator: ...

    @property
    def links(self) -> PhysicalLinks: ...


@dataclass(frozen=True)
class Target:
    """What a request addresses: a bucket (or none: the service) and a key in it."""

    bucket: str = ""
    key: str = ""

    @property
    def ref(self) -> str:
        return self.key.partition("/")[0]

    @property
    def path(self) -> str:
        return self.key.partition("/")[2]


def target_of(path: str, host: str, settings: GatewaySettings) -> Target:
    """The bucket and key of a request's (decoded) path and Host header."""
    domain = settings.domain.strip(".").lower()
    hostname = host.rsplit(":", 1)[0].lower() if host else ""
    if domain and hostname.endswith("." + domain):
        return Target(hostname[: -len(domain) - 1], path.removeprefix("/"))
    bucket, _, key = path.removeprefix("/").partition("/")
    return Target(bucket, key)


def is_virtual_hosted(host: str, settings: GatewaySettings) -> bool:
    domain = settings.domain.strip(".").lower()
    hostname = host.rsplit(":", 1)[0].lower() if host else ""
    return bool(domain) and hostname.endswith("." + domain)


@dataclass
class S3Call:
    """One request: its target, query, headers (lower-cased), caller and the services."""

    request: Request
    target: Target
    query: dict[str, str]
    headers: dict[str, list[str]]
    backends: Backends
    settings: GatewaySettings
    request_id: str
    user: User | None = None
    signer: ChunkSigner | None = None
    """A signed stream's chunk signer (set by `authenticate` for STREAMING-AWS4-...)."""
    payload: str = ""
    body: ThreadBodyReader | None = None
    """The body's reader, for the operations that take one."""
    _repository: Repository | None = field(default=None, repr=False)

    def header(self, name: str) -> str:
        values = self.headers.get(name)
        return values[0] if values else ""

    @property
    def repository(self) -> Repository:
        """The bucket's repository, read once (NoSuchBucket if absent)."""
        if self._repository is None:
            try:
                self._repository = self.backends.graveler.get_repository(self.target.bucket)
            except RepositoryNotFoundError:
                raise no_such_bucket(self.target.bucket) from None
        return self._repository

    @property
    def user_id(self) -> str:
        return self.user.id if self.user is not None else ""

    @property
    def principal(self) -> str:
        """The caller as the owner of locks (`User.principal`), as the REST API's calls."""
        return self.user.principal if self.user is not None else ""

    def authorize(self, needed: list[Permission]) -> None:
        assert self.user is not None, "authenticate before authorizing"
        self.backends.authenticator.authorize(self.user, needed)


def authenticate(call: S3Call, *, now: Callable[[], float] = time.time) -> User:
    """The caller who signed the request (SigV4, else SigV2); S3's error for a bad signature.

    Raises:
        S3Error: AccessDenied (unsigned, expired), RequestTimeTooSkewed,
            InvalidAccessKeyId, SignatureDoesNotMatch.
    """
    query = call.request.query_params.multi_items()
    signature = sigv4.read_signature(query, call.headers)
    if signature is not None:
        return _authenticate_v4(call, signature, query, now())
    signature_v2 = read_signature_v2(query, call.headers)
    if signature_v2 is not None:
        return _authenticate_v2(call, signature_v2, query, now())
    raise S3Error(
        403, "AccessDenied", "the request is not signed; sign it with SigV4 and a kvlake key"
    )


def _authenticate_v4(
    call: S3Call, signature: sigv4.Signature, query: list[tuple[str, str]], now: float
) -> User:
    sigv4.check_time(signature, now)
    request = call.request
    canonical = sigv4.canonical_request(
        request.method, request.scope["path"], query, call.headers, signature
    )
    string_to_sign = sigv4.request_string_to_sign(signature, canonical)
    keys: list[bytes] = []

    def signed_with(secret: str) -> bool:
        key = sigv4.signing_key(secret, signature.credential)
        keys.append(key)
        return sigv4.matches(sigv4.sign(key, string_to_sign), signature.signature)

    call.user = _check(call, signature.credential.access_key_id, signed_with)
    call.payload = signature.payload
    if signature.payload in (sigv4.STREAMING_SIGNED, sigv4.STREAMING_SIGNED_TRAILER):
        call.signer = ChunkSigner(
            keys[-1], signature.amz_date, signature.credential.scope, signature.signature
        )
    return call.user


def _authenticate_v2(
    call: S3Call, signature: SignatureV2, query: list[tuple[str, str]], now: float
) -> User:
    check_time_v2(signature, call.headers, now)
    resource = f"/{call.target.bucket}/{call.target.key}" if call.target.bucket else "/"
    string_to_sign = string_to_sign_v2(
        call.request.method, resource, query, call.headers, signature
    )

    def signed_with(secret: str) -> bool:
        return sigv4.matches(sign_v2(secret, string_to_sign), signature.signature)

    call.user = _check(call, signature.access_key_id, signed_with)
    call.payload = sigv4.UNSIGNED
    return call.user


def _check(call: S3Call, access_key_id: str, signed_with: Callable[[str], bool]) -> User:
    """The key's owner if `signed_with` accepts its secret; S3's error otherwise."""
    tried: list[bool] = []

    def proves(secret: str) -> bool:
        tried.append(True)
        return signed_with(secret)

    client = call.request.client.host if call.request.client is not None else ""
    try:
        return call.backends.authenticator.check_signature(access_key_id, proves, client=client)
    except AuthenticationError:
        if not tried:  # the secret was never looked at: no such key
            raise S3Error(
                403,
                "InvalidAccessKeyId",
                "The AWS Access Key Id you provided does not exist in kvlake; use a kvlake"
                " access key id",
            ) from None
        raise S3Error(
            403,
            "SignatureDoesNotMatch",
            "The request signature we calculated does not match the signature you provided;"
            " check the secret access key and that the client signs for this endpoint",
        ) from None
