"""Who is calling, and may they do this: the checks every request goes through.

Three ways to sign a request, as lakeFS accepts them: HTTP Basic with an access
key id and its secret, a Bearer JWT from `login`, and the same JWT in the
`internal_auth_session` cookie. Secrets are checked in constant time, and
failures slow down the client address that made them (kvlake.auth.ratelimit),
across all server processes, without ever locking the key's owner out. A
session token is bound to the credential that logged in: it stops working when
that credential or its user is deleted, or when it is logged out.

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
from kvlake.auth.credentials import SessionClaims, credential_tag, secrets_equal
from kvlake.auth.policies import Permission, refusal
from kvlake.auth.ratelimit import LoginLimiter
from kvlake.auth.records import Credential, Policy, User
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
        self._signers: TtlCache[str, tuple[User, str]] = TtlCache(cache_ttl, clock=clock)
        store.on_change(self.forget)

    def forget(self) -> None:
        """Drop every cached lookup: the next requests read the KV again."""
        for cache in (self._callers, self._sessions, self._policies, self._signers):
            cache.clear()

    def check_secret(self, access_key_id: str, secret: str, *, client: str = "") -> User:
        """The user owning the key, if `secret` is its secret.

        `client` is the caller's address: failures slow that address down only.

        Raises:
            AuthenticationError: unknown key or wrong secret (the same message for both).
            RateLimitedError: this address failed too often with this key; it must wait.
        """
        return self._check_secret(access_key_id, secret, client)[0]

    def check_signature(
        self, access_key_id: str, signed_with: Callable[[str], bool], *, client: str = ""
    ) -> User:
        """The user owning the key, if `signed_with(secret)` says the request was signed with
        its secret: for protocols that send a signature, never the secret (S3's SigV4).

        Failures count against `client` as a wrong secret does, so guessing signatures is
        slowed down like guessing secrets. `signed_with` is not called for an unknown key.
        A key that proved itself is kept for `cache_ttl` (every request signs anew, so the
        cache holds the key's owner and secret, and each signature is still checked).

        Raises:
            AuthenticationError: unknown key or a signature that does not match.
            RateLimitedError: this address failed too often with this key; it must wait.
        """
        cached = self._signers.get(access_key_id)
        if cached is not None and signed_with(cached[1]):
            return cached[0]
        # Not cached, or the signature does not match the cached secret: the full check,
        # which reads the KV afresh and counts a failure against the client.
        generation = self._signers.generation
        user, credential = self._check(access_key_id, signed_with, client)
        secret = self.store.server_key.decrypt(credential.encrypted_secret)
        self._signers.put(access_key_id, (user, secret), generation)
        return user

    def _check_secret(
        self, access_key_id: str, secret: str, client: str
    ) -> tuple[User, Credential]:
        return self._check(access_key_id, lambda expected: secrets_equal(secret, expected), client)

    def _check(
        self, access_key_id: str, proves: Callable[[str], bool], client: str
    ) -> tuple[User, Credential]:
        try:
            credential = self.store.get_credential(access_key_id)
        except (NotFoundError, ValueError):
            raise AuthenticationError(_BAD_CREDENTIALS) from None
        now = self._clock()
        if credential.throttled_until > now:
            # Before the secret is evaluated: a right guess must wait like a wrong one.
            wait = self._limiter.wait_seconds(access_key_id, client)
            if wait > 0:
                raise RateLimitedError(
                    f"too many failed logins from this address with this access key;"
                    f" retry in {int(wait) + 1} s"
                )
        expected = self.store.server_key.decrypt(credential.encrypted_secret)
        if not proves(expected):
            retry_after = self._limiter.record_failure(access_key_id, client)
            if retry_after:
                self.store.throttle_credential(access_key_id, retry_after)
            raise AuthenticationError(_BAD_CREDENTIALS)
        if now < credential.throttled_until + self._limiter.window:
            # Some address was slowed down lately: if it was this one, it knows the secret.
            self._limiter.forget(access_key_id, client)
        try:
            return self.store.get_user(credential.user_id), credential
        except NotFoundError:
            raise AuthenticationError(_BAD_CREDENTIALS) from None

    def login(self, access_key_id: str, secret: str, *, client: str = "") -> tuple[str, int]:
        """A session token and its expiry (unix seconds) for valid credentials.

        The token is bound to this credential: see `ServerKey.issue_token`.
        """
        _, credential = self._check_secret(access_key_id, secret, client)
        now = self._clock()
        token = self.store.server_key.issue_token(credential, now=now)
        return token, self.store.server_key.verify_token(token, now=now).expiry

    def logout(self, token: str) -> None:
        """Refuse this session token from now on; an invalid or expired one needs nothing."""
        try:
            session = self.store.server_key.verify_token(token, now=self._clock())
        except AuthenticationError:
            return
        self.store.revoke_session(session)

    def authenticate(
        self, authorization: str | None, session_cookie: str | None, *, client: str = ""
    ) -> User:
        """The caller named by the Authorization header, or else the session cookie.

        Raises:
            AuthenticationError: no credentials, or bad ones.
            RateLimitedError: this address failed too often with this access key.
        """
        if authorization:
            scheme, _, value = authorization.strip().partition(" ")
            scheme = scheme.lower()
            if scheme == "basic":
                access_key_id, secret = _decode_basic(value.strip())
                return self._user_of_secret(access_key_id, secret, client)
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

    def cached_caller(self, authorization: str | None, session_cookie: str | None) -> User | None:
        """The caller `authenticate` would return, if a successful check of these credentials
        is still in the cache; None when it is not, or the credentials are malformed or bad.

        Reads no KV and records no failure, so it can run where nothing may block (the
        event loop, for `Operation.inline` reads); on None the caller must `authenticate`.
        """
        try:
            if authorization:
                scheme, _, value = authorization.strip().partition(" ")
                scheme = scheme.lower()
                if scheme == "basic":
                    return self._callers.get(self._caller_key(*_decode_basic(value.strip())))
                if scheme != "bearer":
                    return None
                session_cookie = value.strip()
            if not session_cookie:
                return None
            self.store.server_key.verify_token(session_cookie, now=self._clock())
        except AuthenticationError:
            return None
        return self._sessions.get(session_cookie)

    def _caller_key(self, access_key_id: str, secret: str) -> tuple[str, bytes]:
        return access_key_id, hashlib.blake2b(secret.encode(), key=self._salt).digest()

    def _user_of_secret(self, access_key_id: str, secret: str, client: str) -> User:
        key = self._caller_key(access_key_id, secret)
        user = self._callers.get(key)
        if user is None:
            generation = self._callers.generation
            user = self.check_secret(access_key_id, secret, client=client)
            self._callers.put(key, user, generation)
        return user

    def _user_of_token(self, token: str) -> User:
        # Verified every time (signature and expiry); what the KV says is cached.
        session = self.store.server_key.verify_token(token, now=self._clock())
        user = self._sessions.get(token)
        if user is not None:
            return user
        generation = self._sessions.generation
        user = self._live_session_user(session)
        self._sessions.put(token, user, generation)
        return user

    def _live_session_user(self, session: SessionClaims) -> User:
        """The session's user, if its credential, its user and the session itself still stand."""
        try:
            credential = self.store.get_credential(session.access_key_id)
        except (NotFoundError, ValueError):
            credential = None
        if (
            credential is None
            or credential.user_id != session.user_id
            or credential_tag(credential) != session.credential_tag
        ):
            raise AuthenticationError(
                "the credential this session logged in with no longer exists; log in again"
            )
        try:
            user = self.store.get_user(session.user_id)
        except (NotFoundError, ValueError):
            raise AuthenticationError("the session's user no longer exists; log in again") from None
        if self.store.session_revoked(session):
            raise AuthenticationError("this session was logged out; log in again")
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
        reason = refusal(self._effective_policies(user.id), needed, user_id=user.id)
        if reason is not None:
            wanted = ", ".join(p.describe() for p in needed)
            raise PermissionDeniedError(
                f"insufficient permissions: user {user.id!r} needs {wanted} ({reason}); ask an"
                " admin to attach a policy that allows it"
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
