"""Who is calling, and may they do this: the checks every request goes through.

Three ways to sign a request, as lakeFS accepts them: HTTP Basic with an access
key id and its secret, a Bearer JWT from `login`, and the same JWT in the
`internal_auth_session` cookie. Secrets are checked in constant time and
failures are rate-limited per access key across all server processes.

What a successful check read (the caller, the caller's policies) is kept for
`cache_ttl` seconds (see `kvlake.auth.cache`): a revoked key or a detached
policy takes effect within that bound on every process, and at once on the
process that made the change. A wrong secret is never answered from the cache.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Final

from kvlake.auth.cache import MAX_TTL, TtlCache
from kvlake.auth.credentials import secrets_equal
from kvlake.auth.policies import Permission, is_allowed
from kvlake.auth.ratelimit import LoginLimiter
from kvlake.auth.records import Policy, User
from kvlake.auth.store import AuthStore
from kvlake.errors import (
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitedError,
)

SESSION_COOKIE: Final = "internal_auth_session"
_BAD_CREDENTIALS: Final = "the access key id or secret access key is wrong; check both"
CACHE_TTL: Final = MAX_TTL
"""Default seconds a successful lookup is reused (`AuthSettings.cache_ttl`)."""


class Authenticator:
    """Authenticates and authorizes requests. Thread-safe.

    The only in-process state is the `cache_ttl` memo of successful lookups
    (0 disables it); the store clears it on every write made through it.
    """

    def __init__(
        self,
        store: AuthStore,
        limiter: LoginLimiter,
        *,
        clock: Callable[[], float] = time.time,
        cache_ttl: float = CACHE_TTL,
    ) -> None:
        self.store = store
        self._limiter = limiter
        self._clock = clock
        # Keys hold a keyed digest of the secret, never the secret itself.
        self._salt = secrets.token_bytes(16)
        self._callers: TtlCache[tuple[str, bytes], User] = TtlCache(cache_ttl, clock=clock)
        self._sessions: TtlCache[str, User] = TtlCache(cache_ttl, clock=clock)
        self._policies: TtlCache[str, list[Policy]] = TtlCache(cache_ttl, clock=clock)
        store.on_change(self.forget)

    def forget(self) -> None:
        """Drop every cached lookup: the next requests read the KV again."""
        for cache in (self._callers, self._sessions, self._policies):
            cache.clear()

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
                return self._user_of_secret(access_key_id, secret)
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

    def _user_of_secret(self, access_key_id: str, secret: str) -> User:
        key = (access_key_id, hashlib.blake2b(secret.encode(), key=self._salt).digest())
        user = self._callers.get(key)
        if user is None:
            generation = self._callers.generation
            user = self.check_secret(access_key_id, secret)
            self._callers.put(key, user, generation)
        return user

    def _user_of_token(self, token: str) -> User:
        # Verified every time (signature and expiry): only the user lookup is cached.
        user_id, _ = self.store.server_key.verify_token(token, now=self._clock())
        user = self._sessions.get(token)
        if user is not None:
            return user
        generation = self._sessions.generation
        try:
            user = self.store.get_user(user_id)
        except (NotFoundError, ValueError):
            raise AuthenticationError("the session's user no longer exists; log in again") from None
        self._sessions.put(token, user, generation)
        return user

    def _effective_policies(self, user_id: str) -> list[Policy]:
        policies = self._policies.get(user_id)
        if policies is None:
            generation = self._policies.generation
            policies = self.store.effective_policies(user_id)
            self._policies.put(user_id, policies, generation)
        return policies

    def authorize(self, user: User, needed: Sequence[Permission]) -> None:
        """Raise PermissionDeniedError unless the user's policies grant all of `needed`."""
        if not needed:
            return
        if not is_allowed(self._effective_policies(user.id), needed, user_id=user.id):
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
