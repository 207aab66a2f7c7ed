"""getMetaRange, getRange and createSymlinkFile through the SDK and plain HTTP."""

from __future__ import annotations

import httpx
import lakefs
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException

from tests.api.server import Server


def test_metarange_and_range_locations(server: Server, sdk: LakeFSClient, repo: str) -> None:
    branch = lakefs.Repository(repo, client=server.client()).branch("main")
    branch.object("a").upload(b"x")
    metarange = branch.commit("c").get_commit().meta_range_id
    uri = sdk.metadata_api.get_meta_range(repo, metarange)
    namespace = server.storage.namespace(repo)
    assert uri.location == f"{namespace}/_lakefs/{metarange}"
    assert server.storage.blocks.exists(namespace, f"_lakefs/{metarange}")
    with pytest.raises(ApiException) as missing:
        sdk.metadata_api.get_range(repo, "0" * 64)
    assert missing.value.status == 404


def test_the_location_header_and_missing_files(http: httpx.Client, repo: str) -> None:
    head = http.get(f"/repositories/{repo}/branches/main").json()["commit_id"]
    metarange = http.get(f"/repositories/{repo}/commits/{head}").json()["meta_range_id"]
    found = http.get(f"/repositories/{repo}/metadata/meta_range/{metarange}")
    assert found.status_code == 200
    assert found.headers["Location"] == found.json()["location"]
    for bad in ("0" * 64, "not-an-id", "..%2F..%2Fetc"):
        response = http.get(f"/repositories/{repo}/metadata/range/{bad}")
        assert response.status_code == 404, (bad, response.text)  # never a file outside
    assert http.get(f"/repositories/nope/metadata/range/{metarange}").status_code == 404


def test_symlink_files_for_hive(server: Server, sdk: LakeFSClient, repo: str) -> None:
    branch = lakefs.Repository(repo, client=server.client()).branch("main")
    branch.object("t/p=1/a").upload(b"1")
    branch.object("t/p=2/b").upload(b"2")
    uri = sdk.internal_api.create_symlink_file(repo, "main", location="t/")
    namespace = server.storage.namespace(repo)
    assert uri.location == f"{namespace}/symlinks"
    folder = f"symlinks/{repo}/main/t"
    address = branch.object("t/p=1/a").stat().physical_address
    assert server.storage.blocks.get(namespace, f"{folder}/p=1/symlink.txt").decode() == address
    assert server.storage.blocks.exists(namespace, f"{folder}/p=2/symlink.txt")
    with pytest.raises(ApiException) as missing:
        sdk.internal_api.create_symlink_file(repo, "nope")
    assert missing.value.status == 404
