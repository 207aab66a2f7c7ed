"""Repository metadata through the SDK, the wrapper and lakefs-spec's transactions."""

from __future__ import annotations

import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException

from tests.api.server import Server


def test_set_adds_keys_and_delete_removes_them(sdk: LakeFSClient, repo: str) -> None:
    api = sdk.repositories_api
    internal = sdk.internal_api
    assert api.get_repository_metadata(repo) == {}
    internal.set_repository_metadata(
        repo, lakefs_sdk.RepositoryMetadataSet(metadata={"owner": "ada", "team": "lakes"})
    )
    internal.set_repository_metadata(
        repo, lakefs_sdk.RepositoryMetadataSet(metadata={"team": "rivers"})
    )
    assert api.get_repository_metadata(repo) == {"owner": "ada", "team": "rivers"}
    internal.delete_repository_metadata(
        repo, lakefs_sdk.RepositoryMetadataKeys(keys=["team", "absent"])
    )
    assert api.get_repository_metadata(repo) == {"owner": "ada"}


def test_the_wrapper_reads_it(server: Server, sdk: LakeFSClient, repo: str) -> None:
    sdk.internal_api.set_repository_metadata(
        repo, lakefs_sdk.RepositoryMetadataSet(metadata={"source": "kvlake"})
    )
    assert lakefs.Repository(repo, client=server.client()).metadata == {"source": "kvlake"}


def test_missing_repository_and_bad_bodies(http: httpx.Client, repo: str) -> None:
    missing = http.post("/repositories/nope/metadata", json={"metadata": {"k": "v"}})
    assert missing.status_code == 404 and missing.json()["message"] == "repository not found"
    assert http.get("/repositories/nope/metadata").status_code == 404
    # As lakeFS: nothing to set or delete is done at once.
    assert http.post("/repositories/nope/metadata", json={"metadata": {}}).status_code == 204
    bodies: list[dict[str, object]] = [
        {},
        {"metadata": {"k": 1}},
        {"metadata": {}, "extra": 1},
        {"metadata": []},
    ]
    for body in bodies:
        response = http.post(f"/repositories/{repo}/metadata", json=body)
        assert response.status_code == 400, (body, response.text)
    bad_keys = http.request("DELETE", f"/repositories/{repo}/metadata", json={"keys": "k"})
    assert bad_keys.status_code == 400
    empty_key = http.post(f"/repositories/{repo}/metadata", json={"metadata": {"": "v"}})
    assert empty_key.status_code == 400 and "key" in empty_key.json()["message"]
    assert http.get(f"/repositories/{repo}/metadata").json() == {}


def test_a_reader_cannot_set_it(server: Server, sdk: LakeFSClient, repo: str) -> None:
    user = "metadata-viewer"
    sdk.auth_api.create_user(lakefs_sdk.UserCreation(id=user))
    sdk.auth_api.add_group_membership("Viewers", user)
    credentials = sdk.auth_api.create_credentials(user)
    viewer = server.sdk(credentials.access_key_id, credentials.secret_access_key)
    assert viewer.repositories_api.get_repository_metadata(repo) == {}
    with pytest.raises(ApiException) as denied:
        viewer.internal_api.set_repository_metadata(
            repo, lakefs_sdk.RepositoryMetadataSet(metadata={"k": "v"})
        )
    assert denied.value.status == 401
    assert sdk.repositories_api.get_repository_metadata(repo) == {}
