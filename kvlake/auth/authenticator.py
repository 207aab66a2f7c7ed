"""Who is calling, and may they do this: the checks every request goes through.

Three ways to sign a request, as lakeFS accepts them: HTTP Basic with an access
key id and its secret, a Bearer JWT from `login`, and the same JWT in the
`internal_auth_session` cookie. Secrets are checked in constant time and
failures are rate-limited per access key across all server processes. Policies
are read from the KV on every request, so a revoked key or a detached policy
takes effect at once on every process.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Callable, Sequence
from typing import Final

from kvlake.auth.credentials import secrets_equal
from kvlake.auth.policies import Permission, is_allowed
from kvlake.auth.ratelimit import LoginLimiter
from kvlake.auth.records import User
from kvlake.auth.store import AuthStore
from kvlake.errors import (
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitedError,
)

SESSION_COOKIE: Final = "internal_auth_session"
_BAD_CREDENTIALS: Final = "the access key id or secret access key is wrong; check both"


class Authenticator:
    """Authenticates and authorizes requests. Thread-safe; no in-process state."""

    def __init__(
        self, store: AuthStore, limiter: LoginLimiter, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self._limiter = limiter
        self._clock = clock

    def check_secret(self, access_key_id: str, secret: str) -> User:
        """The user owning the key, if `secret` is its secret.

        Raises:
            AuthenticationError: unknown key or wrong secret (the same message for both).
            RateLimitedError: too many recent failures for this key.
        """
        try:
            credential = self.store.get_credential(access_key_id)
        except (NotFoundError, ValueError):
            raise AuthenticationError(_BAD_CREDENTIALS) from None
        remaining = credential.locked_until - self._clock()
        if remaining > 0:
            raise RateLimitedError(
                f"too many failed logins for this access key; retry in {int(remaining) + 1} s"
            )
        expected = self.store.server_key.decrypt(credential.encrypted_secret)
        if not secrets_equal(secret, expected):
            locked_until = self._limiter.record_failure(access_key_id)
            if locked_until is not None:
                self.store.lock_credential(access_key_id, locked_until)
            raise AuthenticationError(_BAD_CREDENTIALS)
        try:
            return self.store.get_user(credential.user_id)
        except NotFoundError:
            raise AuthenticationError(_BAD_CREDENTIALS) from None

    def login(self, access_key_id: str, secret: str) -> tuple[str, int]:
        """A session token and its expiry (unix seconds) for valid credentials."""
        user = self.check_secret(access_key_id, secret)
        now = self._clock()
        token = self.store.server_key.issue_token(user.id, now=now)
        return token, self.store.server_key.verify_token(token, now=now)[1]

    def authenticate(self, authorization: str | None, session_cookie: str | None) -> User:
        """The caller named by the Authorization header, or else the session cookie.

        Raises:
            AuthenticationError: no credentials, or bad ones.
            RateLimitedError: the access key is locked after failed attempts.
        """
        if authorization:
            scheme, _, value = authorization.strip().partition(" ")
            scheme = scheme.lower()
            if scheme == "basic":
                access_key_id, secret = _decode_basic(value.strip())
                return self.check_secret(access_key_id, secret)
            if scheme == "bearer":
                return self._user_of_token(value.strip())
            raise AuthenticationError(
                "the Authorization header must be 'Basic <key:secret in base64>' or"
                " 'Bearer <token>'"
            )
        if session_cookie:
            return self._user_of_token(session_cookie)
        raise AuthenticationError(
            "this request carries no credentials; sign it with HTTP Basic (access key id and"
            " secret), a Bearer token from /auth/login, or the session cookie"
        )

    def _user_of_token(self, token: str) -> User:
        user_id, _ = self.store.server_key.verify_token(token, now=self._clock())
        try:
            return self.store.get_user(user_id)
        except (NotFoundError, ValueError):
            raise AuthenticationError("the session's user no longer exists; log in again") from None

    def authorize(self, user: User, needed: Sequence[Permission]) -> None:
        """Raise PermissionDeniedError unless the user's policies grant all of `needed`."""
        if not needed:
            return
        if not is_allowed(self.store.effective_policies(user.id), needed, user_id=user.id):
            wanted = ", ".join(f"{p.action} on {p.resource}" for p in needed)
            raise PermissionDeniedError(
                f"insufficient permissions: user {user.id!r} needs {wanted}; ask an admin to"
                " attach a policy that allows it"
            )


def _decode_basic(value: str) -> tuple[str, str]:
    try:
        decoded = base64.b64decode(value, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise AuthenticationError("the Basic credentials are not valid base64 text") from None
    access_key_id, colon, secret = decoded.partition(":")
    if not colon or not access_key_id:
        raise AuthenticationError("the Basic credentials must be '<access key id>:<secret>'")
    return access_key_id, secret
