"""The server key, and what it protects: stored secrets and session tokens.

One master key (a setting, or a random key generated once and kept in
`data_dir`) derives two keys: a Fernet key that encrypts every stored secret and
an HMAC key that signs session JWTs. Every server process of one installation
must use the same master key; `AuthStore.check_server_key` refuses to start
with a different one rather than fail every login later. Secrets are compared in
constant time, and never appear in a log line or an error message.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import logging
import os
import secrets
import string
from pathlib import Path
from typing import Final, NamedTuple

import jwt
from cryptography.fernet import Fernet, InvalidToken

from kvlake.auth.records import Credential
from kvlake.errors import AuthenticationError, ConfigError
from kvlake.permissions import create_private_file, make_private_folders

log = logging.getLogger(__name__)

KEY_FILE_NAME: Final = "auth_secret.key"
KEY_SETTING: Final = "KVLAKE_AUTH_ENCRYPT_SECRET_KEY"
SESSION_SECONDS: Final = 7 * 24 * 3600
"""How long a login token stays valid, as in lakeFS."""

_ACCESS_KEY_ALPHABET: Final = string.ascii_uppercase + string.digits
_JWT_ALGORITHM: Final = "HS256"


def new_access_key_id() -> str:
    """`AKIAJ` and 15 random upper-case letters and digits: lakeFS's shape, 20 characters."""
    return "AKIAJ" + "".join(secrets.choice(_ACCESS_KEY_ALPHABET) for _ in range(15))


def new_secret_access_key() -> str:
    """40 random URL-safe characters (240 bits)."""
    return secrets.token_urlsafe(30)


def secrets_equal(given: str, expected: str) -> bool:
    """Constant-time comparison: the time taken says nothing about where they differ."""
    return hmac.compare_digest(given.encode(), expected.encode())


def load_master_key(configured: str, data_dir: str) -> bytes:
    """The configured key, or the one kept in `data_dir`, created on first use.

    Creation is atomic (write a temporary file, then hard-link it into place), so
    several processes starting at once on one data folder agree on one key.

    Raises:
        ConfigError: the key file cannot be read or written.
    """
    if configured:
        return configured.encode()
    path = Path(data_dir) / KEY_FILE_NAME
    try:
        return _read_key_file(path)
    except FileNotFoundError:
        pass
    try:
        make_private_folders(path.parent)
        temporary = path.with_name(f".{KEY_FILE_NAME}.{secrets.token_hex(8)}")
        fd = create_private_file(temporary)
        with os.fdopen(fd, "w") as file:
            file.write(secrets.token_hex(32) + "\n")
        try:
            os.link(temporary, path)
            log.info("generated a new server key in %s", path)
        except FileExistsError:
            pass  # another process won the race: use its key
        finally:
            temporary.unlink()
        return _read_key_file(path)
    except OSError as exc:
        raise ConfigError(
            f"the server key file {str(path)!r} cannot be created ({exc.strerror or exc});"
            f" make the data folder writable or set {KEY_SETTING}"
        ) from exc


def _read_key_file(path: Path) -> bytes:
    try:
        key = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"the server key file {str(path)!r} cannot be read ({exc}); fix its permissions"
            f" or set {KEY_SETTING}"
        ) from exc
    if not key:
        raise ConfigError(f"the server key file {str(path)!r} is empty; delete it to start over")
    return key.encode()


class ServerKey:
    """Encrypts stored secrets and signs session tokens. Immutable; thread-safe."""

    def __init__(self, master: bytes) -> None:
        fernet_key = hmac.new(master, b"kvlake secret encryption", hashlib.sha256).digest()
        self._fernet = Fernet(base64.urlsafe_b64encode(fernet_key))
        self._jwt_key = hmac.new(master, b"kvlake session tokens", hashlib.sha256).digest()

    def encrypt(self, secret: str) -> bytes:
        return self._fernet.encrypt(secret.encode())

    def decrypt(self, token: bytes) -> str:
        """The plain secret.

        Raises:
            ConfigError: the token was encrypted with another server key.
        """
        return self._decrypt_cached(token)

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - one ServerKey per process, never freed
    def _decrypt_cached(self, token: bytes) -> str:
        # A ciphertext always decrypts to the same secret: caching it is caching immutable
        # data, so every process still sees a deleted or new key at once (it reads the KV).
        try:
            return self._fernet.decrypt(token).decode()
        except InvalidToken:
            raise ConfigError(
                f"a stored secret was encrypted with another server key; give every server"
                f" process the same {KEY_SETTING} (or the same {KEY_FILE_NAME})"
            ) from None

    def issue_token(
        self, credential: Credential, *, now: float, seconds: int = SESSION_SECONDS
    ) -> str:
        """A session token bound to the credential that logged in (and so to its user).

        It names the access key and a tag of the credential's ciphertext, which is new
        each time a key is created: a token dies with its credential or its user, and a
        new user or key made later under the same ids does not revive it.
        """
        claims = {
            "sub": credential.user_id,
            "iat": int(now),
            "exp": int(now) + seconds,
            "aud": "kvlake",
            "jti": secrets.token_hex(16),
            "akid": credential.access_key_id,
            "ctag": credential_tag(credential),
        }
        return jwt.encode(claims, self._jwt_key, algorithm=_JWT_ALGORITHM)

    def verify_token(self, token: str, *, now: float) -> SessionClaims:
        """What a valid token names, if it is unexpired at `now`.

        Checks the signature and expiry only: whether its credential still exists and
        it was not logged out is the authenticator's to check against the KV.

        Raises:
            AuthenticationError: bad signature, malformed, expired, or issued before
                sessions were bound to credentials.
        """
        try:
            claims = jwt.decode(
                token,
                self._jwt_key,
                algorithms=[_JWT_ALGORITHM],
                audience="kvlake",
                # Expiry is checked below against the caller's clock, like everything else.
                options={
                    "require": ["sub", "exp", "iat", "jti", "akid", "ctag"],
                    "verify_exp": False,
                },
            )
        except jwt.InvalidTokenError:
            raise AuthenticationError("the session token is invalid; log in again") from None
        fields = (claims["sub"], claims["jti"], claims["akid"], claims["ctag"])
        if not all(isinstance(v, str) for v in fields) or not isinstance(claims["exp"], int):
            raise AuthenticationError("the session token is invalid; log in again")
        if claims["exp"] <= now:
            raise AuthenticationError("the session token has expired; log in again")
        return SessionClaims(
            user_id=claims["sub"],
            expiry=claims["exp"],
            token_id=claims["jti"],
            access_key_id=claims["akid"],
            credential_tag=claims["ctag"],
        )


class SessionClaims(NamedTuple):
    """What a verified session token says: who, until when, through which credential."""

    user_id: str
    expiry: int
    token_id: str
    access_key_id: str
    credential_tag: str


def credential_tag(credential: Credential) -> str:
    """A short fingerprint of one credential's creation (its ciphertext is random each time)."""
    return hashlib.sha256(credential.encrypted_secret).hexdigest()[:32]
