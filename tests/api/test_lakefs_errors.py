"""lakeFS's codes and texts for the common errors, with kvlake's advice in `detail`.

The texts are lakeFS's own (pkg/graveler/errors.go and pkg/api/controller.go), checked
through raw HTTP, the generated `lakefs-sdk` and the `lakefs` wrapper, which surface them
to users; a 404 never names storage internals.
"""

from __future__ import annotations

import json

import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs.exceptions import ConflictException, ForbiddenException, NotFoundException
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException

from tests.api.server import Server


def _error(response: httpx.Response, status: int) -> dict[str, str]:
    assert response.status_code == status, response.text
    body: dict[str, str] = response.json()
    return body


def test_not_found_texts_name_no_internals(http: httpx.Client, repo: str) -> None:
    http.post(f"/repositories/{repo}/branches/main/objects", params={"path": "a"}, content=b"1")
    http.post(f"/repositories/{repo}/branches/main/commits", json={"message": "m"})
    stat = f"/repositories/{repo}/refs/main/objects/stat"
    for path in ("x", "b/x"):  # committed miss: no metarange id, no b'x'
        body = _error(http.get(stat, params={"path": path}), 404)
        assert body["message"] == "not found"
        assert "b'" not in json.dumps(body) and "metarange" not in json.dumps(body)
    missing = [
        ("/repositories/nope", "repository not found"),
        (f"/repositories/{repo}/branches/nope", "branch not found"),
        (f"/repositories/{repo}/tags/nope", "tag not found"),
        (f"/repositories/{repo}/commits/{'0' * 64}", "not found"),
        (f"/repositories/{repo}/refs/nope/objects/stat?path=a", "not found"),
    ]
    for url, message in missing:
        assert _error(http.get(url), 404)["message"] == message, url


def test_exists_texts(server: Server, http: httpx.Client, repo: str) -> None:
    body = {"name": repo, "storage_namespace": server.storage.namespace("other")}
    again = http.post("/repositories", json=body)
    assert _error(again, 409)["message"] == "error creating repository: not unique"
    branches = f"/repositories/{repo}/branches"
    http.post(branches, json={"name": "dev", "source": "main"})
    body = _error(http.post(branches, json={"name": "dev", "source": "main"}), 409)
    assert body["message"] == "branch already exists: not unique"
    assert "'dev' already exists" in body["detail"]  # kvlake's own words, beside lakeFS's
    nowhere = http.post(branches, json={"name": "x", "source": "nope"})
    assert _error(nowhere, 404)["message"] == "source reference 'nope': not found"
    tags = f"/repositories/{repo}/tags"
    http.post(tags, json={"id": "v1", "ref": "main"})
    body = _error(http.post(tags, json={"id": "v1", "ref": "main"}), 409)
    assert body["message"] == "tag already exists: not unique"


def test_nothing_to_commit_or_merge_is_no_changes(http: httpx.Client, repo: str) -> None:
    commit = http.post(f"/repositories/{repo}/branches/main/commits", json={"message": "m"})
    assert _error(commit, 400)["message"] == "no changes"
    http.post(f"/repositories/{repo}/branches", json={"name": "dev", "source": "main"})
    merge = http.post(f"/repositories/{repo}/refs/dev/merge/main", json={})
    body = _error(merge, 400)
    assert body["message"] == "no changes" and "allow_empty" in body["detail"]


def test_dirty_destination_and_default_branch_texts(http: httpx.Client, repo: str) -> None:
    http.post(f"/repositories/{repo}/branches", json={"name": "dev", "source": "main"})
    http.post(f"/repositories/{repo}/branches/main/objects", params={"path": "a"}, content=b"1")
    merge = http.post(f"/repositories/{repo}/refs/dev/merge/main", json={})
    assert _error(merge, 400)["message"] == "main: uncommitted changes (dirty branch)"
    delete = http.delete(f"/repositories/{repo}/branches/main")
    assert _error(delete, 403)["message"] == "cannot delete repository default branch"


def test_protected_branch_texts(http: httpx.Client, sdk: LakeFSClient, repo: str) -> None:
    http.post(f"/repositories/{repo}/branches/main/objects", params={"path": "a"}, content=b"1")
    rules = [{"pattern": "main"}]
    assert http.put(f"/repositories/{repo}/settings/branch_protection", json=rules).is_success
    upload = http.post(
        f"/repositories/{repo}/branches/main/objects", params={"path": "b"}, content=b"2"
    )
    assert _error(upload, 403)["message"] == "cannot write to protected branch"
    commit = http.post(f"/repositories/{repo}/branches/main/commits", json={"message": "m"})
    assert _error(commit, 403)["message"] == "cannot commit to protected branch"
    deleted = sdk.objects_api.delete_objects(repo, "main", lakefs_sdk.PathList(paths=["a"]))
    assert [(e.status_code, e.message) for e in deleted.errors] == [
        (403, "cannot write to protected branch")
    ]


def test_the_wrapper_raises_its_exceptions_with_lakefs_texts(server: Server, repo: str) -> None:
    client = server.client()
    repository = lakefs.Repository(repo, client=client)
    with pytest.raises(NotFoundException) as missing:
        repository.branch("nope").get_commit()  # a ref, as lakeFS resolves it
    assert missing.value.body["message"] == "not found"
    with pytest.raises(NotFoundException) as missing:
        assert lakefs.Repository("nope", client=client).properties is None
    assert missing.value.body["message"] == "repository not found"
    with pytest.raises(ConflictException) as exists:
        repository.branch("main").create("main")
    assert exists.value.body["message"] == "branch already exists: not unique"
    with pytest.raises(ForbiddenException):
        repository.branch("main").delete()


def test_generated_client_reads_the_message(sdk: LakeFSClient, repo: str) -> None:
    with pytest.raises(ApiException) as raised:
        sdk.repositories_api.get_repository("nope")
    assert raised.value.status == 404
    assert json.loads(raised.value.body or "{}")["message"] == "repository not found"


def test_auth_texts(http: httpx.Client) -> None:
    assert _error(http.get("/auth/users/nobody"), 404)["message"] == "user not found"
    assert _error(http.get("/auth/groups/nobody"), 404)["message"] == "group not found"
    assert _error(http.get("/auth/policies/nobody"), 404)["message"] == "policy not found"
    created = http.post("/auth/groups", json={"id": "twice"})
    assert created.status_code == 201, created.text
    assert _error(http.post("/auth/groups", json={"id": "twice"}), 409) == {
        "message": "Already exists",
        "detail": "group 'twice' already exists; choose another id",
    }
    with httpx.Client(base_url=http.base_url) as anonymous:
        assert _error(anonymous.get("/repositories"), 401)["message"] == (
            "error authenticating request"
        )
