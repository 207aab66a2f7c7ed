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
from kvlake.auth.credentials import new_access_key_id, new_secret_access_key
from kvlake.auth.kvrecords import KvRecords
from kvlake.auth.records import Attachment, Credential, decode_credential, decode_user, encode
from kvlake.errors import ConfigError, KeyNotFoundError, NotFoundError, PreconditionFailedError

_KEY_CHECK_TEXT = "kvlake server key check"


class CredentialRecords(KvRecords):
    """The credential half of `AuthStore`."""

    def _require_user(self, user_id: str) -> None:
        keys.check_id("user", user_id)
        self._load(keys.USERS, keys.key(user_id), decode_user, f"user {user_id!r}")

    def check_server_key(self) -> None:
        """Fail at start if stored secrets were encrypted with another server key."""
        try:
            raw, _ = self.kv.get(keys.META, keys.KEY_CHECK)
        except KeyNotFoundError:
            try:
                self._set_if(
                    keys.META, keys.KEY_CHECK, self.server_key.encrypt(_KEY_CHECK_TEXT), None
                )
            except PreconditionFailedError:
                pass  # another process wrote it first: check against theirs below
            raw, _ = self.kv.get(keys.META, keys.KEY_CHECK)
        if self.server_key.decrypt(raw) != _KEY_CHECK_TEXT:
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

    def lock_credential(self, access_key_id: str, until: float) -> None:
        """Refuse the key until `until` (unix seconds), on every process: it is in the record."""
        for _ in range(10):
            try:
                raw, predicate = self.kv.get(keys.CREDENTIALS, keys.key(access_key_id))
            except KeyNotFoundError:
                return  # deleted meanwhile: nothing left to lock
            credential = decode_credential(raw)
            if credential.locked_until >= until:
                return
            locked = msgspec.structs.replace(credential, locked_until=until)
            try:
                self._set_if(keys.CREDENTIALS, keys.key(access_key_id), encode(locked), predicate)
                return
            except PreconditionFailedError:
                continue  # another process locked or changed it: look again

    def delete_credentials(self, user_id: str, access_key_id: str) -> None:
        self.user_credential(user_id, access_key_id)
        self._delete(keys.CREDENTIALS, keys.key(access_key_id))
        self._delete(keys.USER_CREDENTIALS, keys.pair(user_id, access_key_id))
