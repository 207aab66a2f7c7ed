"""getGroupACL and setGroupACL over HTTP (the SDK no longer has them; the UI calls them)."""

from __future__ import annotations

import uuid

import httpx
import lakefs_sdk
from lakefs_sdk.client import LakeFSClient

from tests.api.server import Server


def test_an_acl_grants_its_level(server: Server, sdk: LakeFSClient, http: httpx.Client) -> None:
    group = f"team-{uuid.uuid4().hex[:8]}"
    user = f"member-{uuid.uuid4().hex[:8]}"
    assert http.post("/auth/groups", json={"id": group}).status_code == 201
    assert http.get(f"/auth/groups/{group}/acl").json() == {"permission": ""}
    sdk.auth_api.create_user(lakefs_sdk.UserCreation(id=user))
    sdk.auth_api.add_group_membership(group, user)
    credentials = sdk.auth_api.create_credentials(user)
    member = server.sdk(credentials.access_key_id, credentials.secret_access_key)
    set_read = http.post(f"/auth/groups/{group}/acl", json={"permission": "Read"})
    assert set_read.status_code == 201
    assert http.get(f"/auth/groups/{group}/acl").json() == {"permission": "Read"}
    member.repositories_api.list_repositories()  # Read lists repositories
    body = {"name": f"r-{group}", "storage_namespace": server.storage.namespace(f"r-{group}")}
    assert credentials.secret_access_key is not None
    with server.http(credentials.access_key_id, credentials.secret_access_key) as as_member:
        assert as_member.post("/repositories", json=body).status_code == 401  # creates none
        super_acl = http.post(f"/auth/groups/{group}/acl", json={"permission": "Super"})
        assert super_acl.status_code == 201
        created = as_member.post("/repositories", json=body)
        assert created.status_code == 201, created.text
    policies = sdk.auth_api.list_group_policies(group).results  # the ACL policy alone
    assert [p.id for p in policies] == [f"ACL(_-_){group}"]


def test_lakefs_answers_for_groups_without_an_acl(http: httpx.Client) -> None:
    group = f"team-{uuid.uuid4().hex[:8]}"
    assert http.post("/auth/groups", json={"id": group}).status_code == 201
    assert http.put(f"/auth/groups/{group}/policies/FSReadAll").status_code == 201
    no_acl = http.get(f"/auth/groups/{group}/acl")
    assert no_acl.status_code == 404
    assert no_acl.json() == {"message": "Policy attached to group has no ACL", "no_acl": True}
    assert http.put(f"/auth/groups/{group}/policies/FSFullAccess").status_code == 201
    several = http.get(f"/auth/groups/{group}/acl")
    assert several.json()["message"] == "Multiple policies attached to group - no ACL"
    bad = http.post(f"/auth/groups/{group}/acl", json={"permission": "Owner"})
    assert bad.status_code == 400
    assert bad.json()["message"] == (
        f"{group}: translate ACL {{Permission:Owner}} to statements: validation error:"
        ' Bad ACL permission "Owner"'
    )
    missing = http.get("/auth/groups/nobody/acl")
    assert missing.status_code == 404 and missing.json()["message"] == "group not found"
    assert http.post("/auth/groups/nobody/acl", json={"permission": "Read"}).status_code == 404
