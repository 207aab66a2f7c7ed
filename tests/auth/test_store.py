"""The auth store: records, links in both directions, cascades, and no plain secrets."""

from __future__ import annotations

import pytest

from kvlake.auth import AuthStore, Statement
from kvlake.errors import ConflictError, InvalidInputError, NotFoundError
from kvlake.kv.memory import MemoryStore

READ_ALL = (Statement(effect="allow", action=("fs:Read*",), resource="*"),)


def test_create_get_list_and_conflict(auth: AuthStore) -> None:
    for user_id in ("carol", "ada", "bob"):
        auth.create_user(user_id)
    assert auth.get_user("ada").id == "ada"
    assert [u.id for u in auth.list_users()] == ["ada", "bob", "carol"]
    assert [u.id for u in auth.list_users(after="ada")] == ["bob", "carol"]
    assert [u.id for u in auth.list_users(prefix="c")] == ["carol"]
    with pytest.raises(ConflictError):
        auth.create_user("ada")


@pytest.mark.parametrize("bad", ["", "a/b", "x" * 129, "sp ace"])
def test_ids_with_slashes_or_spaces_are_refused(auth: AuthStore, bad: str) -> None:
    with pytest.raises(InvalidInputError):
        auth.create_user(bad)


def test_secrets_are_stored_only_encrypted(auth: AuthStore, kv: MemoryStore) -> None:
    auth.create_user("ada")
    _, secret = auth.create_credentials("ada")
    every_value = b"".join(v for p in kv.partitions() for _, v in kv.scan(p))
    assert secret.encode() not in every_value
    credential = auth.get_credential(auth.user_credentials("ada").__next__())
    assert auth.server_key.decrypt(credential.encrypted_secret) == secret


def test_given_keys_are_used_as_given(auth: AuthStore) -> None:
    auth.create_user("ada")
    credential, secret = auth.create_credentials(
        "ada", access_key_id="AKIAEXAMPLE", secret="s3cret"
    )
    assert credential.access_key_id == "AKIAEXAMPLE" and secret == "s3cret"
    with pytest.raises(ConflictError):
        auth.create_credentials("ada", access_key_id="AKIAEXAMPLE")


def test_deleting_a_user_removes_keys_memberships_and_attachments(
    auth: AuthStore, kv: MemoryStore
) -> None:
    auth.create_user("ada")
    auth.create_group("team")
    auth.create_policy("read", READ_ALL)
    auth.add_member("team", "ada")
    auth.attach_to_user("ada", "read")
    credential, _ = auth.create_credentials("ada")
    auth.delete_user("ada")
    with pytest.raises(NotFoundError):
        auth.get_credential(credential.access_key_id)
    assert list(auth.group_members("team")) == []
    # A new user under the old id inherits nothing.
    auth.create_user("ada")
    assert auth.effective_policies("ada") == []
    assert list(auth.user_groups("ada")) == []


def test_effective_policies_come_from_the_user_and_its_groups(auth: AuthStore) -> None:
    auth.create_user("ada")
    auth.create_group("team")
    auth.create_policy("mine", READ_ALL)
    auth.create_policy("ours", READ_ALL)
    auth.attach_to_user("ada", "mine")
    auth.attach_to_group("team", "ours")
    auth.add_member("team", "ada")
    assert [p.id for p in auth.effective_policies("ada")] == ["mine", "ours"]
    auth.remove_member("team", "ada")
    assert [p.id for p in auth.effective_policies("ada")] == ["mine"]


def test_deleting_a_policy_detaches_it_everywhere(auth: AuthStore) -> None:
    auth.create_user("ada")
    auth.create_group("team")
    auth.create_policy("read", READ_ALL)
    auth.attach_to_user("ada", "read")
    auth.attach_to_group("team", "read")
    auth.delete_policy("read")
    auth.create_policy("read", READ_ALL)  # same id again: no old attachment comes back
    assert list(auth.user_policies("ada")) == [] and list(auth.group_policies("team")) == []


def test_links_to_missing_things_are_404(auth: AuthStore) -> None:
    auth.create_user("ada")
    with pytest.raises(NotFoundError):
        auth.add_member("nogroup", "ada")
    with pytest.raises(NotFoundError):
        auth.attach_to_user("ada", "nopolicy")
    with pytest.raises(NotFoundError):
        auth.detach_from_user("ada", "nopolicy")
    with pytest.raises(NotFoundError):
        auth.remove_member("nogroup", "ada")


def test_update_policy_keeps_creation_date(auth: AuthStore) -> None:
    created = auth.create_policy("p", READ_ALL)
    deny = (Statement(effect="deny", action=("*",), resource="*"),)
    updated = auth.update_policy("p", deny)
    assert updated.creation_date == created.creation_date and updated.statement == deny
    with pytest.raises(NotFoundError):
        auth.update_policy("missing", deny)


def test_a_user_created_again_is_another_principal(auth: AuthStore) -> None:
    """Operations and locks belong to `User.principal`: the id and the creation's uid."""
    first = auth.create_user("alice")
    assert first.principal.startswith("alice#") and auth.get_user("alice") == first
    auth.delete_user("alice")
    again = auth.create_user("alice")
    assert again.principal.startswith("alice#") and again.principal != first.principal
