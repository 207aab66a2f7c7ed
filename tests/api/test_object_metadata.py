"""updateObjectUserMetadata through the SDK, the wrapper and plain HTTP."""

from __future__ import annotations

import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException

from tests.api.conftest import viewer
from tests.api.server import Server


def _update(sdk: LakeFSClient, repo: str, path: str, metadata: dict[str, str]) -> None:
    sdk.objects_api.update_object_user_metadata(
        repo, "main", path, lakefs_sdk.UpdateObjectUserMetadata(set=metadata)
    )


def test_it_replaces_the_metadata_and_keeps_the_bytes(
    server: Server, sdk: LakeFSClient, repo: str
) -> None:
    branch = lakefs.Repository(repo, client=server.client()).branch("main")
    obj = branch.object("t.csv")
    obj.upload(b"a,b\n", content_type="text/csv", metadata={"old": "1"})
    before = obj.stat()
    _update(sdk, repo, "t.csv", {"owner": "ada", "team": "lakes"})
    after = branch.object("t.csv").stat()  # a new reference: the wrapper caches a stat
    assert after.metadata == {"owner": "ada", "team": "lakes"}
    assert (after.physical_address, after.checksum, after.mtime, after.content_type) == (
        before.physical_address,
        before.checksum,
        before.mtime,
        "text/csv",
    )
    assert obj.reader().read() == b"a,b\n"


def test_a_committed_object_is_updated_on_the_branch_only(
    server: Server, sdk: LakeFSClient, repo: str
) -> None:
    branch = lakefs.Repository(repo, client=server.client()).branch("main")
    branch.object("c").upload(b"committed")
    commit = branch.commit("add c").get_commit().id
    _update(sdk, repo, "c", {"k": "v"})
    assert [change.path for change in branch.uncommitted()] == ["c"]
    assert branch.object("c").stat().metadata == {"k": "v"}
    assert sdk.objects_api.stat_object(repo, commit, "c").metadata == {}
    assert branch.object("c").reader().read() == b"committed"


def test_a_missing_object_is_404_with_lakefs_text(http: httpx.Client, repo: str) -> None:
    url = f"/repositories/{repo}/branches/main/objects/stat/user_metadata"
    missing = http.put(url, params={"path": "nope"}, json={"set": {"k": "v"}})
    assert missing.status_code == 404
    assert missing.json()["message"] == f"update user metadata on {repo}/main/nope: not found"
    no_branch = http.put(
        f"/repositories/{repo}/branches/nope/objects/stat/user_metadata",
        params={"path": "a"},
        json={"set": {}},
    )
    assert no_branch.status_code == 404 and no_branch.json()["message"] == "branch not found"
    no_repo = http.put(
        "/repositories/nope/branches/main/objects/stat/user_metadata",
        params={"path": "a"},
        json={"set": {}},
    )
    assert no_repo.status_code == 404 and no_repo.json()["message"] == "repository not found"


def test_bad_bodies_change_nothing(http: httpx.Client, repo: str) -> None:
    upload = http.post(
        f"/repositories/{repo}/branches/main/objects", params={"path": "a"}, content=b"x"
    )
    assert upload.status_code == 201
    url = f"/repositories/{repo}/branches/main/objects/stat/user_metadata"
    bodies: list[object] = [{}, {"set": {"k": 1}}, {"set": {}, "extra": 1}, {"set": []}, []]
    for body in bodies:
        response = http.put(url, params={"path": "a"}, json=body)
        assert response.status_code == 400, (body, response.text)
    too_big = http.put(url, params={"path": "a"}, json={"set": {"k": "v" * 9000}})
    assert too_big.status_code == 400 and "over" in too_big.json()["message"]
    assert http.put(url, json={"set": {}}).status_code == 400  # no path
    stat = http.get(f"/repositories/{repo}/refs/main/objects/stat", params={"path": "a"})
    assert stat.json()["metadata"] == {}


def test_protected_branches_and_readers_are_refused(
    server: Server, sdk: LakeFSClient, repo: str
) -> None:
    sdk.objects_api.upload_object(repo, "main", "a", content=b"x")
    reader = viewer(server, sdk, f"viewer-{repo}")
    with pytest.raises(ApiException) as denied:
        _update(reader, repo, "a", {"k": "v"})
    assert denied.value.status == 401
    sdk.repositories_api.set_branch_protection_rules(
        repo, [lakefs_sdk.BranchProtectionRule(pattern="main")]
    )
    with pytest.raises(ApiException) as protected:
        _update(sdk, repo, "a", {"k": "v"})
    assert protected.value.status == 403
    assert sdk.objects_api.stat_object(repo, "main", "a").metadata == {}
