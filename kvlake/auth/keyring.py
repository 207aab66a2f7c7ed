"""Access keys: created with an encrypted secret, listed per user, locked, deleted.

The secret is stored only encrypted with the server key (`ServerKey`), and the
key check record proves at start that this process holds the installation's
server key. A key is indexed under its user first, so deleting the user always
finds it.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from kvlake.auth import keys
from kvlake.auth.credentials import SessionClaims, new_access_key_id, new_secret_access_key
from kvlake.auth.kvrecords import KvRecords
from kvlake.auth.records import (
    Attachment,
    Credential,
    RevokedSession,
    decode_credential,
    decode_revoked_session,
    decode_user,
    encode,
)
from kvlake.errors import ConfigError, NotFoundError, PreconditionFailedError, TooManyTriesError
from kvlake.kv import get_or_none

_KEY_CHECK_TEXT = "kvlake server key check"


class CredentialRecords(KvRecords):
    """The credential half of `AuthStore`."""

    def _require_user(self, user_id: str) -> None:
        keys.check_id("user", user_id)
        self._load(keys.USERS, keys.key(user_id), decode_user, f"user {user_id!r}")

    def check_server_key(self) -> None:
        """Fail at start if stored secrets were encrypted with another server key."""
        loaded = get_or_none(self.kv, keys.META, keys.KEY_CHECK)
        if loaded is None:
            try:
                self._set_if(
                    keys.META, keys.KEY_CHECK, self.server_key.encrypt(_KEY_CHECK_TEXT), None
                )
            except PreconditionFailedError:
                pass  # another process wrote it first: check against theirs below
            loaded = self.kv.get(keys.META, keys.KEY_CHECK)
        if self.server_key.decrypt(loaded[0]) != _KEY_CHECK_TEXT:
            raise ConfigError("the server key check failed; set the installation's server key")

    def create_credentials(
        self, user_id: str, *, access_key_id: str = "", secret: str = ""
    ) -> tuple[Credential, str]:
        """New credentials for the user; returns them with the plain secret, shown once."""
        self._require_user(user_id)
        access_key_id = keys.check_id("access key", access_key_id or new_access_key_id())
        secret = secret or new_secret_access_key()
        credential = Credential(
            access_key_id=access_key_id,
            user_id=user_id,
            encrypted_secret=self.server_key.encrypt(secret),
            creation_date=self._now(),
        )
        # The user's index first: deleting the user always finds the key.
        self._set(
            keys.USER_CREDENTIALS,
            keys.pair(user_id, access_key_id),
            encode(Attachment(creation_date=credential.creation_date)),
        )
        self._create(
            keys.CREDENTIALS,
            keys.key(access_key_id),
            encode(credential),
            f"access key {access_key_id!r}",
        )
        return credential, secret

    def get_credential(self, access_key_id: str) -> Credential:
        keys.check_id("access key", access_key_id)
        return self._load(
            keys.CREDENTIALS,
            keys.key(access_key_id),
            decode_credential,
            f"access key {access_key_id!r}",
        )

    def user_credential(self, user_id: str, access_key_id: str) -> Credential:
        credential = self.get_credential(access_key_id)
        if credential.user_id != user_id:
            raise NotFoundError(f"access key {access_key_id!r} not found for user {user_id!r}")
        return credential

    def user_credentials(self, user_id: str, *, prefix: str = "", after: str = "") -> Iterator[str]:
        self._require_user(user_id)
        for access_key_id in self._pairs(keys.USER_CREDENTIALS, user_id, after=after):
            if access_key_id.startswith(prefix):
                yield access_key_id

    def throttle_credential(self, access_key_id: str, until: float) -> None:
        """Note that some address waits on this key until `until` (see kvlake.auth.ratelimit).

        Best effort, as the failure count it follows: a key that keeps changing under
        the note is left as it is, and the next failure notes it again.
        """

        def throttle(raw: bytes | None) -> bytes | None:
            if raw is None:
                return None  # deleted meanwhile: nothing left to lock
            credential = decode_credential(raw)
            if credential.throttled_until >= until:
                return None
            return encode(msgspec.structs.replace(credential, throttled_until=until))

        what = f"throttling access key {access_key_id!r}"
        try:
            self._update(keys.CREDENTIALS, keys.key(access_key_id), throttle, what)
        except TooManyTriesError:
            pass  # another process throttled or changed it every time: see above

    # -- sessions ---------------------------------------------------------------

    def revoke_session(self, session: SessionClaims) -> None:
        """Refuse this session token from now on (logout), on every process.

        The user's revocations of tokens that have expired meanwhile are forgotten on
        the way, so a user holds at most one record per live logged-out token.
        """
        now = self._now()
        with self.kv.scan(keys.REVOKED_SESSIONS, keys.pair_prefix(session.user_id)) as scan:
            stale = [
                key
                for key, raw in scan
                if key.startswith(keys.pair_prefix(session.user_id))
                and decode_revoked_session(raw).expiry <= now
            ]
        for key in stale:
            self._delete(keys.REVOKED_SESSIONS, key)
        record = RevokedSession(expiry=session.expiry)
        self._set(
            keys.REVOKED_SESSIONS, keys.pair(session.user_id, session.token_id), encode(record)
        )

    def session_revoked(self, session: SessionClaims) -> bool:
        revoked = keys.pair(session.user_id, session.token_id)
        return get_or_none(self.kv, keys.REVOKED_SESSIONS, revoked) is not None

    def delete_credentials(self, user_id: str, access_key_id: str) -> None:
        self.user_credential(user_id, access_key_id)
        self._delete(keys.CREDENTIALS, keys.key(access_key_id))
        self._delete(keys.USER_CREDENTIALS, keys.pair(user_id, access_key_id))
