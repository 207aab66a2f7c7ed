"""boto3 against a real server: objects, listings, copies, deletes and presigned URLs.

Nothing of boto3 is mocked: its default configuration (SigV4, CRC32 checksums
on every upload) talks HTTP to `kvlake serve`, on a local folder and on S3.
What the gateway writes, the REST API reads, and the other way round.
"""

from __future__ import annotations

import hashlib
import io
from datetime import UTC, datetime, timedelta
from typing import Any

import botocore.exceptions
import httpx
import pytest

from tests.api.server import Server
from tests.gateway.conftest import s3_client


def _code(exc: botocore.exceptions.ClientError) -> str:
    return str(exc.response["Error"]["Code"])


def test_put_then_get_keeps_bytes_type_and_metadata(s3: Any, repo: str) -> None:
    put = s3.put_object(
        Bucket=repo,
        Key="main/data/a.txt",
        Body=b"hello",
        ContentType="text/plain",
        Metadata={"color": "red"},
    )
    assert put["ETag"] == f'"{hashlib.md5(b"hello").hexdigest()}"'
    got = s3.get_object(Bucket=repo, Key="main/data/a.txt")
    assert got["Body"].read() == b"hello"
    assert got["ContentType"] == "text/plain"
    assert got["Metadata"] == {"color": "red"}
    assert got["ETag"] == put["ETag"]
    head = s3.head_object(Bucket=repo, Key="main/data/a.txt")
    assert head["ContentLength"] == 5
    assert head["Metadata"] == {"color": "red"}


def test_the_rest_api_and_the_gateway_see_the_same_objects(
    s3: Any, http: httpx.Client, repo: str
) -> None:
    s3.put_object(Bucket=repo, Key="main/from-s3", Body=b"s3 bytes", Metadata={"k": "v"})
    stat = http.get(f"/repositories/{repo}/refs/main/objects/stat", params={"path": "from-s3"})
    assert stat.status_code == 200, stat.text
    assert stat.json()["metadata"] == {"k": "v"}
    upload = http.post(
        f"/repositories/{repo}/branches/main/objects",
        params={"path": "from-rest"},
        content=b"rest bytes",
        headers={"Content-Type": "application/octet-stream", "x-lakefs-meta-who": "rest"},
    )
    assert upload.status_code == 201, upload.text
    got = s3.get_object(Bucket=repo, Key="main/from-rest")
    assert got["Body"].read() == b"rest bytes"
    assert got["Metadata"] == {"who": "rest"}


def test_reads_at_a_commit_and_a_tag_see_the_committed_state(
    s3: Any, http: httpx.Client, repo: str
) -> None:
    s3.put_object(Bucket=repo, Key="main/f", Body=b"one")
    commit = http.post(f"/repositories/{repo}/branches/main/commits", json={"message": "one"})
    assert commit.status_code == 201, commit.text
    commit_id = commit.json()["id"]
    tag = http.post(f"/repositories/{repo}/tags", json={"id": "v1", "ref": commit_id})
    assert tag.status_code == 201, tag.text
    s3.put_object(Bucket=repo, Key="main/f", Body=b"two")
    assert s3.get_object(Bucket=repo, Key="main/f")["Body"].read() == b"two"
    assert s3.get_object(Bucket=repo, Key=f"{commit_id}/f")["Body"].read() == b"one"
    assert s3.get_object(Bucket=repo, Key="v1/f")["Body"].read() == b"one"
    assert http.post(
        f"/repositories/{repo}/branches/main/commits", json={"message": "2"}
    ).is_success
    assert s3.get_object(Bucket=repo, Key="main~1/f")["Body"].read() == b"one"


def test_a_write_to_a_tag_is_method_not_allowed_and_stages_nothing(
    s3: Any, http: httpx.Client, repo: str
) -> None:
    s3.put_object(Bucket=repo, Key="main/f", Body=b"one")
    http.post(f"/repositories/{repo}/branches/main/commits", json={"message": "one"})
    assert http.post(f"/repositories/{repo}/tags", json={"id": "v1", "ref": "main"}).is_success
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.put_object(Bucket=repo, Key="v1/f", Body=b"new")
    assert _code(caught.value) == "MethodNotAllowed"
    assert s3.get_object(Bucket=repo, Key="v1/f")["Body"].read() == b"one"


def test_ranges_and_conditionals(s3: Any, repo: str) -> None:
    etag = s3.put_object(Bucket=repo, Key="main/r", Body=b"0123456789")["ETag"]
    part = s3.get_object(Bucket=repo, Key="main/r", Range="bytes=2-4")
    assert part["Body"].read() == b"234"
    assert part["ContentRange"] == "bytes 2-4/10"
    assert s3.get_object(Bucket=repo, Key="main/r", Range="bytes=-3")["Body"].read() == b"789"
    assert s3.get_object(Bucket=repo, Key="main/r", Range="bytes=7-")["Body"].read() == b"789"
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.get_object(Bucket=repo, Key="main/r", Range="bytes=10-20")
    assert _code(caught.value) == "InvalidRange"
    assert s3.get_object(Bucket=repo, Key="main/r", IfMatch=etag)["Body"].read() == b"0123456789"
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.get_object(Bucket=repo, Key="main/r", IfMatch='"0000"')
    assert _code(caught.value) == "PreconditionFailed"
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.get_object(Bucket=repo, Key="main/r", IfNoneMatch=etag)
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 304
    future = datetime.now(UTC) + timedelta(days=1)
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.get_object(Bucket=repo, Key="main/r", IfModifiedSince=future)
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 304
    past = datetime.now(UTC) - timedelta(days=1)
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.get_object(Bucket=repo, Key="main/r", IfUnmodifiedSince=past)
    assert _code(caught.value) == "PreconditionFailed"


def test_response_header_overrides(s3: Any, repo: str) -> None:
    s3.put_object(Bucket=repo, Key="main/o", Body=b"x", ContentType="text/plain")
    got = s3.get_object(
        Bucket=repo,
        Key="main/o",
        ResponseContentType="application/json",
        ResponseContentDisposition="attachment; filename=o.json",
        ResponseCacheControl="no-cache",
    )
    assert got["ContentType"] == "application/json"
    assert got["ContentDisposition"] == "attachment; filename=o.json"
    assert got["CacheControl"] == "no-cache"


def test_if_none_match_star_refuses_to_overwrite(s3: Any, repo: str) -> None:
    s3.put_object(Bucket=repo, Key="main/once", Body=b"first", IfNoneMatch="*")
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.put_object(Bucket=repo, Key="main/once", Body=b"second", IfNoneMatch="*")
    assert _code(caught.value) == "PreconditionFailed"
    assert s3.get_object(Bucket=repo, Key="main/once")["Body"].read() == b"first"


@pytest.mark.parametrize("algorithm", ["CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256"])
def test_checksums_boto3_sends_are_accepted(s3: Any, repo: str, algorithm: str) -> None:
    s3.put_object(Bucket=repo, Key="main/c", Body=b"checked", ChecksumAlgorithm=algorithm)
    assert s3.get_object(Bucket=repo, Key="main/c")["Body"].read() == b"checked"


def test_listing_shows_refs_then_paths_with_prefixes(
    s3: Any, http: httpx.Client, repo: str
) -> None:
    for key in ("main/a/1", "main/a/2", "main/b", "main/c/d/e"):
        s3.put_object(Bucket=repo, Key=key, Body=b"x")
    assert http.post(
        f"/repositories/{repo}/branches/main/commits", json={"message": "c"}
    ).is_success
    branch = http.post(f"/repositories/{repo}/branches", json={"name": "dev", "source": "main"})
    assert branch.status_code == 201, branch.text
    top = s3.list_objects_v2(Bucket=repo, Delimiter="/")
    assert [p["Prefix"] for p in top["CommonPrefixes"]] == ["dev/", "main/"]
    inside = s3.list_objects_v2(Bucket=repo, Prefix="main/", Delimiter="/")
    assert [c["Key"] for c in inside["Contents"]] == ["main/b"]
    assert [p["Prefix"] for p in inside["CommonPrefixes"]] == ["main/a/", "main/c/"]
    flat = s3.list_objects_v2(Bucket=repo, Prefix="main/a/")
    assert [c["Key"] for c in flat["Contents"]] == ["main/a/1", "main/a/2"]
    assert flat["Contents"][0]["Size"] == 1
    everything = s3.list_objects_v2(Bucket=repo)
    assert [c["Key"] for c in everything["Contents"]] == [
        *(f"{ref}/{p}" for ref in ("dev", "main") for p in ("a/1", "a/2", "b", "c/d/e"))
    ]
    after = s3.list_objects_v2(Bucket=repo, Prefix="main/", StartAfter="main/a/2")
    assert [c["Key"] for c in after["Contents"]] == ["main/b", "main/c/d/e"]


def test_paginators_walk_every_key_once(s3: Any, repo: str) -> None:
    keys = [f"main/p/{i:03d}" for i in range(23)]
    for key in keys:
        s3.put_object(Bucket=repo, Key=key, Body=b"x")
    for operation in ("list_objects_v2", "list_objects"):
        pages = s3.get_paginator(operation).paginate(
            Bucket=repo, Prefix="main/p/", PaginationConfig={"PageSize": 5}
        )
        seen = [c["Key"] for page in pages for c in page.get("Contents", [])]
        assert seen == keys, operation


def test_encoding_type_url_round_trips_odd_keys(s3: Any, repo: str) -> None:
    odd = ["main/a b", "main/plus+sign", "main/ünï", "main/q?x=1&y"]
    for key in odd:
        s3.put_object(Bucket=repo, Key=key, Body=b"x")
    listed = s3.list_objects_v2(Bucket=repo, Prefix="main/")  # boto3 asks for url encoding
    assert sorted(c["Key"] for c in listed["Contents"]) == sorted(odd)
    for key in odd:
        assert s3.get_object(Bucket=repo, Key=key)["Body"].read() == b"x"


def test_copy_within_and_across_branches(s3: Any, http: httpx.Client, repo: str) -> None:
    s3.put_object(Bucket=repo, Key="main/src", Body=b"copied", Metadata={"m": "1"})
    assert http.post(
        f"/repositories/{repo}/branches", json={"name": "dev", "source": "main"}
    ).is_success
    s3.copy_object(Bucket=repo, Key="main/dst", CopySource={"Bucket": repo, "Key": "main/src"})
    s3.copy_object(Bucket=repo, Key="dev/dst", CopySource=f"{repo}/main/src")
    for key in ("main/dst", "dev/dst"):
        got = s3.get_object(Bucket=repo, Key=key)
        assert got["Body"].read() == b"copied"
        assert got["Metadata"] == {"m": "1"}


def test_copy_with_metadata_directive_replace_takes_the_request_s_metadata(
    s3: Any, repo: str
) -> None:
    s3.put_object(
        Bucket=repo, Key="main/src", Body=b"bytes", ContentType="text/plain", Metadata={"m": "1"}
    )
    s3.copy_object(
        Bucket=repo,
        Key="main/dst",
        CopySource=f"{repo}/main/src",
        MetadataDirective="REPLACE",
        ContentType="application/json",
        Metadata={"n": "2"},
    )
    got = s3.get_object(Bucket=repo, Key="main/dst")
    assert got["Body"].read() == b"bytes"
    assert (got["ContentType"], got["Metadata"]) == ("application/json", {"n": "2"})
    source = s3.head_object(Bucket=repo, Key="main/src")
    assert (source["ContentType"], source["Metadata"]) == ("text/plain", {"m": "1"})


def test_copy_source_conditionals_copy_or_fail_as_s3(s3: Any, repo: str) -> None:
    put = s3.put_object(Bucket=repo, Key="main/src", Body=b"bytes")
    etag = put["ETag"]
    mtime = s3.head_object(Bucket=repo, Key="main/src")["LastModified"]
    before, after = mtime - timedelta(days=1), mtime + timedelta(days=1)
    # (conditions, copied?) in S3's precedence: If-Match over If-Unmodified-Since,
    # If-None-Match over If-Modified-Since; every failure is 412, never 304.
    cases: list[tuple[dict[str, Any], bool]] = [
        ({"CopySourceIfMatch": etag}, True),
        ({"CopySourceIfMatch": '"0123"'}, False),
        ({"CopySourceIfNoneMatch": '"0123"'}, True),
        ({"CopySourceIfNoneMatch": etag}, False),
        ({"CopySourceIfModifiedSince": before}, True),
        ({"CopySourceIfModifiedSince": after}, False),
        ({"CopySourceIfUnmodifiedSince": after}, True),
        ({"CopySourceIfUnmodifiedSince": before}, False),
        ({"CopySourceIfMatch": etag, "CopySourceIfUnmodifiedSince": before}, True),
        ({"CopySourceIfNoneMatch": '"0123"', "CopySourceIfModifiedSince": after}, True),
    ]
    for number, (conditions, copied) in enumerate(cases):
        key = f"main/dst-{number}"
        call = {"Bucket": repo, "Key": key, "CopySource": f"{repo}/main/src", **conditions}
        if copied:
            s3.copy_object(**call)
            assert s3.get_object(Bucket=repo, Key=key)["Body"].read() == b"bytes", conditions
            continue
        with pytest.raises(botocore.exceptions.ClientError) as caught:
            s3.copy_object(**call)
        assert _code(caught.value) == "PreconditionFailed", conditions
        assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
        with pytest.raises(botocore.exceptions.ClientError):
            s3.head_object(Bucket=repo, Key=key)


def test_delete_object_and_delete_objects(s3: Any, repo: str) -> None:
    for key in ("main/x", "main/y", "main/z"):
        s3.put_object(Bucket=repo, Key=key, Body=b"x")
    s3.delete_object(Bucket=repo, Key="main/x")
    s3.delete_object(Bucket=repo, Key="main/never-there")  # S3: 204 all the same
    answer = s3.delete_objects(
        Bucket=repo, Delete={"Objects": [{"Key": "main/y"}, {"Key": "main/missing"}]}
    )
    assert sorted(d["Key"] for d in answer["Deleted"]) == ["main/missing", "main/y"]
    quiet = s3.delete_objects(Bucket=repo, Delete={"Objects": [{"Key": "main/z"}], "Quiet": True})
    assert "Deleted" not in quiet and "Errors" not in quiet
    assert s3.list_objects_v2(Bucket=repo, Prefix="main/")["KeyCount"] == 0


def test_delete_objects_of_a_thousand_long_keys_reads_the_whole_request(
    s3: Any, server: Server, repo: str
) -> None:
    # About 200 KB of XML: it arrives in many pieces, and its checksum covers all of them.
    keys = [f"main/{'k' * 180}/{i:04d}" for i in range(1000)]
    for key in keys[:3]:
        s3.put_object(Bucket=repo, Key=key, Body=b"x")
    answer = s3.delete_objects(Bucket=repo, Delete={"Objects": [{"Key": k} for k in keys]})
    assert len(answer["Deleted"]) == 1000
    assert "Errors" not in answer
    assert s3.list_objects_v2(Bucket=repo, Prefix="main/")["KeyCount"] == 0


def test_delete_objects_lists_each_refused_key(s3: Any, http: httpx.Client, repo: str) -> None:
    s3.put_object(Bucket=repo, Key="main/ok", Body=b"x")
    http.post(f"/repositories/{repo}/branches/main/commits", json={"message": "c"})
    assert http.post(f"/repositories/{repo}/tags", json={"id": "t", "ref": "main"}).is_success
    answer = s3.delete_objects(
        Bucket=repo, Delete={"Objects": [{"Key": "main/ok"}, {"Key": "t/ok"}]}
    )
    assert [d["Key"] for d in answer["Deleted"]] == ["main/ok"]
    assert [(e["Key"], e["Code"]) for e in answer["Errors"]] == [("t/ok", "NoSuchKey")]


def test_bucket_calls(s3: Any, repo: str) -> None:
    assert repo in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    s3.head_bucket(Bucket=repo)
    assert s3.get_bucket_location(Bucket=repo)["LocationConstraint"] is None
    assert "Status" not in s3.get_bucket_versioning(Bucket=repo)
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.head_bucket(Bucket="no-such-repository")
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


@pytest.mark.parametrize("signature_version", ["s3", "s3v4"])
def test_presigned_urls_read_and_write(server: Server, repo: str, signature_version: str) -> None:
    client = s3_client(server, signature_version=signature_version)
    put_url = client.generate_presigned_url(
        "put_object", Params={"Bucket": repo, "Key": "main/pre"}, ExpiresIn=300
    )
    assert httpx.put(put_url, content=b"presigned").status_code == 200
    get_url = client.generate_presigned_url(
        "get_object",
        Params={"Bucket": repo, "Key": "main/pre", "ResponseContentType": "text/x-pre"},
        ExpiresIn=300,
    )
    got = httpx.get(get_url)
    assert got.status_code == 200, got.text
    assert got.content == b"presigned"
    assert got.headers["content-type"] == "text/x-pre"
    tampered = get_url.replace("main%2Fpre", "main%2Fother").replace("main/pre", "main/other")
    refused = httpx.get(tampered)
    assert refused.status_code == 403
    assert b"<Code>SignatureDoesNotMatch</Code>" in refused.content


def test_upload_fileobj_and_download_fileobj_below_the_multipart_threshold(
    s3: Any, repo: str
) -> None:
    data = bytes(range(256)) * 4096  # 1 MiB
    s3.upload_fileobj(io.BytesIO(data), repo, "main/managed")
    out = io.BytesIO()
    s3.download_fileobj(repo, "main/managed", out)
    assert out.getvalue() == data
