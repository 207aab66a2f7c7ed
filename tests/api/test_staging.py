"""stageObject, getPhysicalAddress and linkPhysicalAddress through the SDK and plain HTTP."""

from __future__ import annotations

import hashlib

import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException

from tests.api.server import Server


def _write(server: Server, repo: str, key: str, data: bytes) -> str:
    """Put a blob into the repository's namespace as a client writing to storage would."""
    namespace = server.storage.namespace(repo)
    server.storage.blocks.put(namespace, key, data)
    return f"{namespace}/{key}"


def test_stage_object_links_a_blob_of_the_namespace(
    server: Server, sdk: LakeFSClient, repo: str
) -> None:
    address = _write(server, repo, "imported/lakes.csv", b"name\nBaikal\n")
    with pytest.warns(DeprecationWarning):  # lakeFS deprecates it; clients still call it
        stats = sdk.internal_api.stage_object(
            repo,
            "main",
            "tables/lakes.csv",
            lakefs_sdk.ObjectStageCreation(
                physical_address=address,
                checksum="abc",
                size_bytes=12,
                mtime=1_700_000_000,
                metadata={"source": "import"},
                content_type="text/csv",
            ),
        )
    assert (stats.path, stats.physical_address, stats.mtime) == (
        "tables/lakes.csv",
        address,
        1_700_000_000,
    )
    branch = lakefs.Repository(repo, client=server.client()).branch("main")
    obj = branch.object("tables/lakes.csv")
    assert obj.reader().read() == b"name\nBaikal\n"
    stat = obj.stat()
    assert (stat.content_type, stat.metadata, stat.checksum) == (
        "text/csv",
        {"source": "import"},
        "abc",
    )
    commit = branch.commit("link").get_commit().id
    assert bytes(sdk.objects_api.get_object(repo, commit, "tables/lakes.csv")) == (
        b"name\nBaikal\n"
    )


def test_get_then_link_a_physical_address(server: Server, sdk: LakeFSClient, repo: str) -> None:
    location = sdk.staging_api.get_physical_address(repo, "main", "a.bin")
    address = location.physical_address or ""
    assert address.startswith(f"{server.storage.namespace(repo)}/data/")
    if server.storage.kind == "local":
        assert location.presigned_url is None  # S3 presigns
    key = address.removeprefix(f"{server.storage.namespace(repo)}/")
    _write(server, repo, key, b"payload")
    checksum = hashlib.md5(b"payload").hexdigest()
    stats = sdk.staging_api.link_physical_address(
        repo,
        "main",
        "a.bin",
        lakefs_sdk.StagingMetadata(
            staging=location,
            checksum=f'"{checksum}"',
            size_bytes=7,
            user_metadata={"k": "v"},
        ),
    )
    assert (stats.checksum, stats.size_bytes, stats.metadata) == (checksum, 7, {"k": "v"})
    assert bytes(sdk.objects_api.get_object(repo, "main", "a.bin")) == b"payload"
    with pytest.raises(ApiException) as exists:
        sdk.staging_api.link_physical_address(
            repo,
            "main",
            "a.bin",
            lakefs_sdk.StagingMetadata(staging=location, checksum=checksum, size_bytes=7),
            if_none_match="*",
        )
    # lakeFS's text for a failed link condition (uploadObject says "path already exists")
    assert exists.value.status == 412 and '"Precondition failed"' in str(exists.value.body)


def test_addresses_kvlake_does_not_own_are_refused(
    server: Server, http: httpx.Client, repo: str
) -> None:
    other = f"{repo}-other"
    created = http.post(
        "/repositories", json={"name": other, "storage_namespace": server.storage.namespace(other)}
    )
    assert created.status_code == 201
    theirs = _write(server, other, "data/x", b"theirs")
    url = f"/repositories/{repo}/branches/main/objects"
    for address in (
        theirs,
        "s3://bucket/x",
        f"{server.storage.namespace(repo)}/_lakefs/x",
        f"{server.storage.namespace(repo)}/../{other}/data/x",
        f"{server.storage.namespace(repo)}/missing",
    ):
        body = {"physical_address": address, "checksum": "c", "size_bytes": 6}
        response = http.put(url, params={"path": "p"}, json=body)
        assert response.status_code == 400, (address, response.text)
    assert server.storage.blocks.get(server.storage.namespace(other), "data/x") == b"theirs"
    stat = http.get(f"/repositories/{repo}/refs/main/objects/stat", params={"path": "p"})
    assert stat.status_code == 404


def test_bad_input_and_missing_things(server: Server, http: httpx.Client, repo: str) -> None:
    address = _write(server, repo, "imported/a", b"abc")
    url = f"/repositories/{repo}/branches/main/objects"
    good = {"physical_address": address, "checksum": "c", "size_bytes": 3}
    for body in (
        {**good, "size_bytes": 4},
        {**good, "size_bytes": -1},
        {**good, "mtime": -5},
        {**good, "extra": 1},
        {"physical_address": address, "checksum": "c"},
    ):
        response = http.put(url, params={"path": "p"}, json=body)
        assert response.status_code == 400, (body, response.text)
    no_branch = http.put(
        f"/repositories/{repo}/branches/nope/objects", params={"path": "p"}, json=good
    )
    assert no_branch.status_code == 404 and no_branch.json()["message"] == "branch not found"
    link = f"/repositories/{repo}/branches/main/staging/backing"
    no_checksum = http.put(
        link,
        params={"path": "p"},
        json={"staging": {"physical_address": address}, "checksum": ' "" ', "size_bytes": 3},
    )
    assert no_checksum.status_code == 400
    assert no_checksum.json()["message"] == "checksum is required"
    if server.storage.kind == "local":  # S3 presigns (test_s3_lake.py)
        presign = http.get(link, params={"path": "p", "presign": "true"})
        assert presign.status_code == 400 and "presign" in presign.json()["message"]
    assert http.get(f"/repositories/{repo}/refs/main/objects/ls").json()["results"] == []
