"""The server key: generated once per data folder, checked at start, signing sessions."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from kvlake.auth import AuthStore, ServerKey, load_master_key
from kvlake.auth.credentials import KEY_FILE_NAME, new_access_key_id, secrets_equal
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


def test_tokens_round_trip_and_expire() -> None:
    key = ServerKey(b"k")
    token = key.issue_token("ada", now=1000.0, seconds=60)
    assert key.verify_token(token, now=1059.0) == ("ada", 1060)
    with pytest.raises(AuthenticationError, match="expired"):
        key.verify_token(token, now=1060.0)


def test_tokens_signed_by_another_key_or_tampered_are_refused() -> None:
    token = ServerKey(b"k1").issue_token("ada", now=1000.0)
    with pytest.raises(AuthenticationError):
        ServerKey(b"k2").verify_token(token, now=1000.0)
    with pytest.raises(AuthenticationError):
        ServerKey(b"k1").verify_token(token[:-2] + "xx", now=1000.0)


def test_access_key_ids_look_like_lakefs_ones() -> None:
    key = new_access_key_id()
    assert key.startswith("AKIAJ") and len(key) == 20 and key.isalnum()
    assert secrets_equal("abc", "abc") and not secrets_equal("abc", "abd")
