"""The server key: generated once per data folder, checked at start, signing sessions."""

from __future__ import annotations

import hashlib
import hmac
import threading
from pathlib import Path

import jwt
import pytest
from jwt.types import Options

from kvlake.auth import AuthStore, ServerKey, load_master_key
from kvlake.auth.credentials import (
    KEY_FILE_NAME,
    credential_tag,
    new_access_key_id,
    secrets_equal,
)
from kvlake.auth.records import Credential
from kvlake.errors import AuthenticationError, ConfigError
from kvlake.kv.memory import MemoryStore


def test_a_configured_key_wins_over_the_file(tmp_path: Path) -> None:
    assert load_master_key("configured", str(tmp_path)) == b"configured"
    assert not (tmp_path / KEY_FILE_NAME).exists()


def test_the_key_file_is_created_once_private_and_reused(tmp_path: Path) -> None:
    first = load_master_key("", str(tmp_path))
    assert load_master_key("", str(tmp_path)) == first
    assert (tmp_path / KEY_FILE_NAME).stat().st_mode & 0o777 == 0o600


def test_processes_starting_together_agree_on_one_key(tmp_path: Path) -> None:
    keys: list[bytes] = []
    threads = [
        threading.Thread(target=lambda: keys.append(load_master_key("", str(tmp_path))))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(keys)) == 1
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILE_NAME]


def test_a_different_server_key_is_refused_at_start(kv: MemoryStore) -> None:
    AuthStore(kv, ServerKey(b"first")).check_server_key()
    AuthStore(kv, ServerKey(b"first")).check_server_key()
    with pytest.raises(ConfigError, match="KVLAKE_AUTH_ENCRYPT_SECRET_KEY"):
        AuthStore(kv, ServerKey(b"second")).check_server_key()


def _credential(key: ServerKey) -> Credential:
    return Credential(
        access_key_id="AKIAADA", user_id="ada", encrypted_secret=key.encrypt("s"), creation_date=0
    )


def test_tokens_round_trip_and_expire() -> None:
    key = ServerKey(b"k")
    credential = _credential(key)
    token = key.issue_token(credential, now=1000.0, seconds=60)
    session = key.verify_token(token, now=1059.0)
    assert (session.user_id, session.expiry, session.access_key_id) == ("ada", 1060, "AKIAADA")
    assert session.credential_tag == credential_tag(credential)
    again = key.verify_token(key.issue_token(credential, now=1000.0), now=1000.0)
    assert session.token_id != again.token_id  # each login is its own session
    with pytest.raises(AuthenticationError, match="expired"):
        key.verify_token(token, now=1060.0)


def test_a_token_not_bound_to_a_credential_is_refused() -> None:
    key = ServerKey(b"k")
    # Session tokens are signed with a key derived from the master key; a token of
    # the old shape, signed the same way, has a valid signature and is still refused.
    signing_key = hmac.new(b"k", b"kvlake session tokens", hashlib.sha256).digest()
    issued = key.issue_token(_credential(key), now=1000.0)
    no_expiry: Options = {"verify_exp": False}  # check the signature: it expired in 1970
    assert jwt.decode(
        issued, signing_key, algorithms=["HS256"], audience="kvlake", options=no_expiry
    )
    claims = {"sub": "ada", "iat": 1000, "exp": 2000, "aud": "kvlake"}  # the old shape
    old = jwt.encode(claims, signing_key, algorithm="HS256")
    with pytest.raises(AuthenticationError, match="log in again"):
        key.verify_token(old, now=1000.0)


def test_tokens_signed_by_another_key_or_tampered_are_refused() -> None:
    token = ServerKey(b"k1").issue_token(_credential(ServerKey(b"k1")), now=1000.0)
    with pytest.raises(AuthenticationError):
        ServerKey(b"k2").verify_token(token, now=1000.0)
    with pytest.raises(AuthenticationError):
        ServerKey(b"k1").verify_token(token[:-2] + "xx", now=1000.0)


def test_access_key_ids_look_like_lakefs_ones() -> None:
    key = new_access_key_id()
    assert key.startswith("AKIAJ") and len(key) == 20 and key.isalnum()
    assert secrets_equal("abc", "abc") and not secrets_equal("abc", "abd")


def test_the_generated_server_key_and_its_folder_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    load_master_key("", str(data))
    assert data.stat().st_mode & 0o777 == 0o700
    assert (data / KEY_FILE_NAME).stat().st_mode & 0o777 == 0o600
