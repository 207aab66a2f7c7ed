"""First start: built-ins, one admin, keys from the settings or made once."""

from __future__ import annotations

from kvlake.auth import AuthStore, ensure_installation, is_installed
from kvlake.config import InstallationSettings


def test_first_start_creates_an_admin_once(auth: AuthStore) -> None:
    made = ensure_installation(auth, InstallationSettings())
    assert made is not None and made.user_name == "admin" and made.secret
    assert is_installed(auth)
    assert list(auth.user_groups("admin")) == ["Admins"]
    assert ensure_installation(auth, InstallationSettings()) is None


def test_keys_from_the_settings_are_used_and_not_echoed(auth: AuthStore) -> None:
    wanted = InstallationSettings(
        user_name="root", access_key_id="AKIAKNOWN", secret_access_key="known-secret"
    )
    made = ensure_installation(auth, wanted)
    assert made is not None and made.access_key_id == "AKIAKNOWN" and made.secret == ""
    credential = auth.get_credential("AKIAKNOWN")
    assert credential.user_id == "root"
    assert auth.server_key.decrypt(credential.encrypted_secret) == "known-secret"


def test_built_in_groups_and_policies_are_made(auth: AuthStore) -> None:
    ensure_installation(auth, InstallationSettings())
    assert {g.id for g in auth.list_groups()} >= {"Admins", "Developers", "Viewers"}
    assert list(auth.group_policies("Viewers")) == ["AuthManageOwnCredentials", "FSReadAll"]
