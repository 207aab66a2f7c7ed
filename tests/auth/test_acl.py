"""Group ACLs (lakeFS's simplified permissions) kept as one policy per group."""

from __future__ import annotations

import pytest

from kvlake.auth import AuthStore, Permission, acl_policy_id, read_group_acl, write_group_acl
from kvlake.auth.policies import is_allowed, repository_arn, user_arn
from kvlake.errors import AclPermissionError, NotFoundError


def _allowed(auth: AuthStore, user: str, action: str, resource: str) -> bool:
    policies = auth.effective_policies(user)
    return is_allowed(policies, [Permission(action, resource)], user_id=user)


def test_each_level_grants_what_lakefs_grants(auth: AuthStore) -> None:
    auth.create_group("team")
    auth.create_user("ada")
    auth.add_member("team", "ada")
    repo = repository_arn("lake")
    write_group_acl(auth, "team", "Read")
    assert _allowed(auth, "ada", "fs:ReadRepository", repo)
    assert _allowed(auth, "ada", "fs:ReadConfig", "*")
    assert _allowed(auth, "ada", "auth:CreateCredentials", user_arn("ada"))
    assert not _allowed(auth, "ada", "fs:WriteObject", repo)
    write_group_acl(auth, "team", "Write")
    assert _allowed(auth, "ada", "fs:WriteObject", repo)
    assert not _allowed(auth, "ada", "fs:DeleteRepository", repo)
    write_group_acl(auth, "team", "Super")
    assert _allowed(auth, "ada", "fs:DeleteRepository", repo)
    assert not _allowed(auth, "ada", "auth:CreateUser", user_arn("bob"))
    write_group_acl(auth, "team", "Admin")
    assert _allowed(auth, "ada", "auth:CreateUser", user_arn("bob"))
    assert read_group_acl(auth, "team").permission == "Admin"
    assert list(auth.group_policies("team")) == [acl_policy_id("team")]


def test_setting_an_acl_detaches_the_groups_other_policies(auth: AuthStore) -> None:
    auth.create_group("team")
    auth.create_policy("custom", ())
    auth.attach_to_group("team", "custom")
    assert read_group_acl(auth, "team").problem == "Policy attached to group has no ACL"
    auth.create_policy("other", ())
    auth.attach_to_group("team", "other")
    assert read_group_acl(auth, "team").problem == "Multiple policies attached to group - no ACL"
    write_group_acl(auth, "team", "Write")
    assert list(auth.group_policies("team")) == [acl_policy_id("team")]
    assert read_group_acl(auth, "team").permission == "Write"
    auth.get_policy("custom")  # detached, not deleted


def test_bad_levels_and_groups_change_nothing(auth: AuthStore) -> None:
    auth.create_group("team")
    with pytest.raises(AclPermissionError):
        write_group_acl(auth, "team", "Owner")
    with pytest.raises(NotFoundError):
        write_group_acl(auth, "nobody", "Read")
    assert read_group_acl(auth, "team").permission == ""
    assert list(auth.list_policies()) == []


def test_a_long_group_name_still_has_an_acl_policy(auth: AuthStore) -> None:
    name = "g" * 128
    auth.create_group(name)
    write_group_acl(auth, name, "Read")
    assert read_group_acl(auth, name).permission == "Read"
