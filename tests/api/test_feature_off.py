"""External principals, STS and OIDC (answered as lakeFS without them), the deprecated
internal branch protection calls, and getMetadataObject."""

from __future__ import annotations

import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException

from tests.api.server import Server


def test_external_principals_are_not_implemented(server: Server, http: httpx.Client) -> None:
    principals = "/auth/users/admin/external/principals"
    for response in (
        http.post(principals, params={"principalId": "arn:aws:iam::1:role/x"}),
        http.delete(principals, params={"principalId": "arn:aws:iam::1:role/x"}),
        http.get(f"{principals}/ls"),
        http.get("/auth/external/principals", params={"principalId": "p"}),
    ):
        assert response.status_code == 501, response.text
        assert response.json()["message"] == "Not Implemented"
    with httpx.Client(base_url=f"{server.url}/api/v1") as anonymous:
        login = anonymous.post("/auth/external/principal/login", json={"identityRequest": {}})
        assert login.status_code == 501 and login.json()["message"] == "Not Implemented"
        sts = anonymous.post("/sts/login", json={"code": "c", "state": "s", "redirect_uri": "r"})
        assert sts.status_code == 501
        assert anonymous.post("/sts/login", json={"code": "c"}).status_code == 400
        callback = anonymous.get("/oidc/callback", params={"code": "c", "state": "s"})
        assert callback.status_code == 200 and callback.content == b""
        assert anonymous.post(principals, params={"principalId": "p"}).status_code == 401


def test_the_sdk_sees_not_implemented(sdk: LakeFSClient) -> None:
    with pytest.raises(ApiException) as off:
        sdk.external_api.get_external_principal("p")
    assert off.value.status == 501


@pytest.mark.filterwarnings("ignore:.*branch_protection is deprecated:DeprecationWarning")
def test_internal_branch_protection_calls(sdk: LakeFSClient, http: httpx.Client, repo: str) -> None:
    internal = sdk.internal_api
    internal.internal_create_branch_protection_rule(
        repo, lakefs_sdk.BranchProtectionRule(pattern="main")
    )
    assert [r.pattern for r in internal.internal_get_branch_protection_rules(repo)] == ["main"]
    assert [r.pattern for r in sdk.repositories_api.get_branch_protection_rules(repo)] == ["main"]
    with pytest.raises(ApiException) as protected:
        sdk.objects_api.upload_object(repo, "main", "a", content=b"x")
    assert protected.value.status == 403
    url = f"/repositories/{repo}/branch_protection"
    missing = http.request("DELETE", url, json={"pattern": "nope"})
    assert missing.status_code == 404
    internal.internal_delete_branch_protection_rule(
        repo, lakefs_sdk.InternalDeleteBranchProtectionRuleRequest(pattern="main")
    )
    assert internal.internal_get_branch_protection_rules(repo) == []


def test_metadata_objects_are_the_committed_files(
    server: Server, sdk: LakeFSClient, http: httpx.Client, repo: str
) -> None:
    branch = lakefs.Repository(repo, client=server.client()).branch("main")
    branch.object("a").upload(b"x")
    metarange = branch.commit("c").get_commit().meta_range_id
    data = http.get(f"/repositories/{repo}/metadata/object/meta_range/{metarange}")
    assert data.status_code == 200
    assert data.headers["content-type"] == "application/octet-stream"
    assert data.headers["x-content-type-options"] == "nosniff"
    assert int(data.headers["content-length"]) == len(data.content)
    assert data.content[:4] == b"PAR1"  # kvlake's ranges and metaranges are Parquet
    same = sdk.internal_api.get_metadata_object(repo, object_id=metarange, type="meta_range")
    assert bytes(same) == data.content
    for path, status in (
        (f"meta_range/{'0' * 64}", 404),
        (f"range/{metarange}x", 404),
        (f"other/{metarange}", 400),
    ):
        response = http.get(f"/repositories/{repo}/metadata/object/{path}")
        assert response.status_code == status, (path, response.text)
    presign = http.get(
        f"/repositories/{repo}/metadata/object/meta_range/{metarange}",
        params={"presign": "true"},
    )
    if server.storage.kind == "local":
        assert presign.status_code == 400  # local storage signs no URLs
    else:
        assert presign.status_code == 302, presign.text
        assert httpx.get(presign.headers["Location"]).content == data.content
