"""Objects through the SDKs and raw HTTP: upload, read (ranges too), stat, list, delete, copy."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator

import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException, NotFoundException

from tests.api.server import Server


def test_upload_and_read_back_with_the_generated_client(
    server: Server, sdk: LakeFSClient, repo: str
) -> None:
    stats = sdk.objects_api.upload_object(repo, "main", "docs/a.txt", content=b"hello world")
    assert stats.path == "docs/a.txt" and stats.size_bytes == 11
    assert stats.checksum == hashlib.md5(b"hello world").hexdigest()
    assert stats.physical_address.startswith(f"{server.storage.namespace(repo)}/")
    assert bytes(sdk.objects_api.get_object(repo, "main", "docs/a.txt")) == b"hello world"
    stat = sdk.objects_api.stat_object(repo, "main", "docs/a.txt")
    assert stat.size_bytes == 11 and stat.path_type == "object"


def test_high_level_writer_and_reader_with_metadata(server: Server, repo: str) -> None:
    branch = lakefs.Repository(repo, client=server.client()).branch("main")
    obj = branch.object("data/table.csv")
    obj.upload(b"a,b\n1,2\n", content_type="text/csv", metadata={"owner": "ada"})
    assert obj.reader().read() == b"a,b\n1,2\n"
    stat = obj.stat()
    assert stat.content_type == "text/csv" and stat.metadata == {"owner": "ada"}
    with obj.reader() as reader:
        reader.seek(4)
        assert reader.read(3) == b"1,2"
    assert obj.exists()


def test_range_reads_give_206_and_content_range(http: httpx.Client, repo: str) -> None:
    http.post(
        f"/repositories/{repo}/branches/main/objects", params={"path": "r"}, content=b"0123456789"
    )
    read = f"/repositories/{repo}/refs/main/objects"
    cases = {"bytes=2-4": b"234", "bytes=7-": b"789", "bytes=-3": b"789", "bytes=8-100": b"89"}
    for header, expected in cases.items():
        response = http.get(read, params={"path": "r"}, headers={"Range": header})
        assert response.status_code == 206 and response.content == expected, header
        assert response.headers["Content-Range"].endswith("/10")
    assert (
        http.get(read, params={"path": "r"}, headers={"Range": "bytes=2-4"}).headers[
            "Content-Range"
        ]
        == "bytes 2-4/10"
    )


@pytest.mark.parametrize("header", ["bytes=10-", "bytes=11-20"])
def test_range_starting_at_or_past_the_end_is_416_with_the_size(
    http: httpx.Client, repo: str, header: str
) -> None:
    http.post(
        f"/repositories/{repo}/branches/main/objects", params={"path": "r"}, content=b"0123456789"
    )
    response = http.get(
        f"/repositories/{repo}/refs/main/objects", params={"path": "r"}, headers={"Range": header}
    )
    assert response.status_code == 416
    assert response.headers["Content-Range"] == "bytes */10"


def test_reading_past_the_end_with_the_high_level_reader_returns_nothing(
    server: Server, repo: str
) -> None:
    obj = lakefs.Repository(repo, client=server.client()).branch("main").object("small")
    obj.upload(b"abc")
    with obj.reader() as reader:
        assert reader.read() == b"abc"
        assert reader.read() == b""


def test_head_reports_size_without_a_body(http: httpx.Client, repo: str) -> None:
    http.post(f"/repositories/{repo}/branches/main/objects", params={"path": "h"}, content=b"12345")
    response = http.head(f"/repositories/{repo}/refs/main/objects", params={"path": "h"})
    assert response.status_code == 200 and response.headers["Content-Length"] == "5"
    missing = http.head(f"/repositories/{repo}/refs/main/objects", params={"path": "nope"})
    assert missing.status_code == 404


def test_multipart_upload_and_user_metadata_headers(http: httpx.Client, repo: str) -> None:
    response = http.post(
        f"/repositories/{repo}/branches/main/objects",
        params={"path": "form.bin"},
        files={"content": ("form.bin", b"from a form", "application/x-test")},
        headers={"x-lakefs-meta-color": "blue"},
    )
    assert response.status_code == 201, response.text
    stats = response.json()
    assert stats["size_bytes"] == 11 and stats["content_type"] == "application/x-test"
    assert stats["metadata"] == {"color": "blue"}
    read = http.get(f"/repositories/{repo}/refs/main/objects", params={"path": "form.bin"})
    assert read.content == b"from a form"


def test_if_none_match_star_refuses_to_overwrite(http: httpx.Client, repo: str) -> None:
    url = f"/repositories/{repo}/branches/main/objects"
    first = http.post(url, params={"path": "once"}, content=b"1", headers={"If-None-Match": "*"})
    again = http.post(url, params={"path": "once"}, content=b"2", headers={"If-None-Match": "*"})
    assert first.status_code == 201 and again.status_code == 412
    read = http.get(f"/repositories/{repo}/refs/main/objects", params={"path": "once"})
    assert read.content == b"1"


def test_high_level_exclusive_mode_raises_when_the_object_exists(server: Server, repo: str) -> None:
    obj = lakefs.Repository(repo, client=server.client()).branch("main").object("x")
    obj.upload(b"1", mode="x")
    with pytest.raises(lakefs.exceptions.ObjectExistsException):
        obj.upload(b"2", mode="x")


def test_a_large_upload_streams_through(http: httpx.Client, repo: str) -> None:
    size = 33 * 1024 * 1024
    block = os.urandom(1024 * 1024)
    digest = hashlib.md5()

    def body() -> Iterator[bytes]:
        for _ in range(size // len(block)):
            digest.update(block)
            yield block

    response = http.post(
        f"/repositories/{repo}/branches/main/objects", params={"path": "big"}, content=body()
    )
    assert response.status_code == 201, response.text
    assert response.json()["size_bytes"] == size
    assert response.json()["checksum"] == digest.hexdigest()
    with http.stream(
        "GET", f"/repositories/{repo}/refs/main/objects", params={"path": "big"}
    ) as read:
        received = hashlib.md5()
        for chunk in read.iter_bytes():
            received.update(chunk)
    assert received.hexdigest() == digest.hexdigest()


def test_listing_pages_with_delimiter_and_common_prefixes(sdk: LakeFSClient, repo: str) -> None:
    for path in ["a/1", "a/2", "b/1", "c", "d"]:
        sdk.objects_api.upload_object(repo, "main", path, content=b"x")
    page = sdk.objects_api.list_objects(repo, "main", delimiter="/", amount=3)
    assert [r.path for r in page.results] == ["a/", "b/", "c"]
    prefix = page.results[0]
    assert prefix.path_type == "common_prefix" and prefix.checksum == "" and prefix.mtime == 0
    assert page.pagination.has_more and page.pagination.next_offset == "c"
    rest = sdk.objects_api.list_objects(repo, "main", delimiter="/", after="c")
    assert [r.path for r in rest.results] == ["d"] and not rest.pagination.has_more
    inside = sdk.objects_api.list_objects(repo, "main", prefix="a/")
    assert [r.path for r in inside.results] == ["a/1", "a/2"]


def test_delete_and_delete_many(sdk: LakeFSClient, repo: str) -> None:
    for path in ["x", "y", "z"]:
        sdk.objects_api.upload_object(repo, "main", path, content=b"x")
    sdk.objects_api.delete_object(repo, "main", "x")
    with pytest.raises(NotFoundException):
        sdk.objects_api.stat_object(repo, "main", "x")
    result = sdk.objects_api.delete_objects(
        repo, "main", lakefs_sdk.PathList(paths=["y", "z", "never-there"])
    )
    assert result.errors == []
    assert sdk.objects_api.list_objects(repo, "main").results == []


def test_the_wrapper_deletes_many_given_object_references(server: Server, repo: str) -> None:
    """`Branch.delete_objects` takes a path, an object reference, or an iterable of either
    (a generator too, as lakefs-spec's rm passes) and sends their paths."""
    branch = lakefs.Repository(repo, client=server.client()).branch("main")
    for path in ["a", "b", "c", "d", "e/1", "e/2"]:
        branch.object(path).upload(b"x")
    branch.delete_objects(branch.object("a"))
    branch.delete_objects([branch.object("b"), "c", lakefs.StoredObject(repo, "main", "d")])
    branch.delete_objects(obj.path for obj in branch.objects(prefix="e/"))
    branch.delete_objects([branch.object("never-there")])  # missing paths are skipped
    assert list(branch.objects()) == []


def test_delete_many_refuses_more_than_1000_paths(http: httpx.Client, repo: str) -> None:
    response = http.post(
        f"/repositories/{repo}/branches/main/objects/delete",
        json={"paths": [f"p{i}" for i in range(1001)]},
    )
    assert response.status_code == 400


def test_copy_keeps_content_type_metadata_and_checksum(sdk: LakeFSClient, repo: str) -> None:
    source = sdk.objects_api.upload_object(repo, "main", "src", content=b"copy me")
    copied = sdk.objects_api.copy_object(
        repo, "main", "dst", lakefs_sdk.ObjectCopyCreation(src_path="src", src_ref="main")
    )
    assert copied.checksum == source.checksum and copied.content_type == source.content_type
    assert bytes(sdk.objects_api.get_object(repo, "main", "dst")) == b"copy me"


def test_missing_object_and_repository_are_404(sdk: LakeFSClient, repo: str) -> None:
    with pytest.raises(NotFoundException):
        sdk.objects_api.get_object(repo, "main", "missing")
    with pytest.raises(ApiException) as raised:
        sdk.objects_api.get_object("no-such-repo", "main", "missing")
    assert raised.value.status == 404


@pytest.mark.local_blockstore  # S3 presigns (test_s3_lake.py)
def test_presign_true_is_refused_naming_the_parameter(http: httpx.Client, repo: str) -> None:
    for path in ("/objects", "/objects/stat", "/objects/ls"):
        params = {"presign": "true"} | ({} if path.endswith("ls") else {"path": "p"})
        response = http.get(f"/repositories/{repo}/refs/main{path}", params=params)
        assert response.status_code == 400, (path, response.text)
        assert "'presign' is not supported" in response.json()["message"]
        params["presign"] = "false"
        assert http.get(f"/repositories/{repo}/refs/main{path}", params=params).status_code != 400


def test_underlying_properties_have_no_storage_class(sdk: LakeFSClient, repo: str) -> None:
    sdk.objects_api.upload_object(repo, "main", "a.txt", content=b"a")
    properties = sdk.objects_api.get_underlying_properties(repo, "main", "a.txt")
    assert properties.storage_class is None
    with pytest.raises(NotFoundException):
        sdk.objects_api.get_underlying_properties(repo, "main", "missing.txt")


@pytest.mark.local_blockstore  # S3 presigns
def test_get_physical_address_refuses_presign_on_a_blockstore_without_it(
    http: httpx.Client, repo: str
) -> None:
    backing = f"/repositories/{repo}/branches/main/staging/backing"
    plain = http.get(backing, params={"path": "a"})
    assert plain.status_code == 200, plain.text
    assert plain.json()["physical_address"].startswith("local://")
    assert "presigned_url" not in plain.json()
    refused = http.get(backing, params={"path": "a", "presign": "true"})
    assert refused.status_code == 400
    assert "has no presigned URLs" in refused.json()["message"]


@pytest.mark.local_blockstore  # S3 imports
def test_import_is_refused_on_a_blockstore_without_it(http: httpx.Client, repo: str) -> None:
    assert http.get("/config/storage").json()["import_support"] is False
    body = {
        "paths": [{"type": "common_prefix", "path": "local://elsewhere/", "destination": "d/"}],
        "commit": {"message": "m"},
    }
    refused = http.post(f"/repositories/{repo}/branches/main/import", json=body)
    assert refused.status_code == 400
    assert "does not import (import_support is false)" in refused.json()["message"]
