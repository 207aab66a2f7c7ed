"""ListMultipartUploads with real clients (boto3's paginator, the AWS CLI), on both pairs.

Uploads list by key, then in the order they were started; S3's prefix,
delimiter, key-marker, upload-id-marker, max-uploads and encoding-type apply;
a completed or aborted upload is no longer listed, and a listed id is the one
the upload's other calls take.
"""

from __future__ import annotations

import json
from typing import Any

import botocore.exceptions
import httpx
import pytest


def _start(s3: Any, repo: str, key: str) -> str:
    return str(s3.create_multipart_upload(Bucket=repo, Key=key)["UploadId"])


def _branch(http: httpx.Client, repo: str, name: str) -> None:
    answer = http.post(f"/repositories/{repo}/branches", json={"name": name, "source": "main"})
    assert answer.status_code == 201, answer.text


def _keys(answer: dict[str, Any]) -> list[str]:
    return [upload["Key"] for upload in answer.get("Uploads", [])]


def test_the_paginator_lists_every_upload_in_key_order(
    s3: Any, repo: str, http: httpx.Client
) -> None:
    _branch(http, repo, "dev")
    ids = {key: _start(s3, repo, key) for key in ("main/c", "main/a/1", "main/b", "dev/x")}
    s3.create_multipart_upload(Bucket=repo, Key="main/b")  # a second upload of one key
    pages = s3.get_paginator("list_multipart_uploads").paginate(
        Bucket=repo, PaginationConfig={"PageSize": 2}
    )
    listed = [upload for page in pages for upload in page.get("Uploads", [])]
    assert [u["Key"] for u in listed] == ["dev/x", "main/a/1", "main/b", "main/b", "main/c"]
    assert listed[0]["UploadId"] == ids["dev/x"] and listed[0]["Initiator"]["ID"]
    parts = s3.list_parts(Bucket=repo, Key="main/c", UploadId=listed[-1]["UploadId"])
    assert parts["UploadId"] == ids["main/c"]  # a listed id is the upload's


def test_prefix_delimiter_and_markers_page_as_s3(s3: Any, repo: str) -> None:
    for key in ("main/a/1", "main/a/2", "main/b", "main/c/1", "main/d"):
        _start(s3, repo, key)
    rolled = s3.list_multipart_uploads(Bucket=repo, Prefix="main/", Delimiter="/")
    assert _keys(rolled) == ["main/b", "main/d"]
    assert [p["Prefix"] for p in rolled["CommonPrefixes"]] == ["main/a/", "main/c/"]
    first = s3.list_multipart_uploads(Bucket=repo, Prefix="main/", Delimiter="/", MaxUploads=1)
    assert first["IsTruncated"] and first["NextKeyMarker"] == "main/a/"
    rest = s3.list_multipart_uploads(
        Bucket=repo, Prefix="main/", Delimiter="/", KeyMarker=first["NextKeyMarker"]
    )
    assert _keys(rest) == ["main/b", "main/d"]  # nothing under the rolled-up prefix again
    assert [p["Prefix"] for p in rest["CommonPrefixes"]] == ["main/c/"]
    after = s3.list_multipart_uploads(Bucket=repo, KeyMarker="main/b")
    assert _keys(after) == ["main/c/1", "main/d"]  # a key marker alone skips its own key


def test_an_upload_id_marker_resumes_inside_a_key(s3: Any, repo: str) -> None:
    for _ in range(3):
        _start(s3, repo, "main/same")
    _start(s3, repo, "main/z")
    listed = s3.list_multipart_uploads(Bucket=repo)["Uploads"]
    ids = [u["UploadId"] for u in listed]
    page = s3.list_multipart_uploads(Bucket=repo, KeyMarker="main/same", UploadIdMarker=ids[0])
    assert [u["UploadId"] for u in page["Uploads"]] == ids[1:]
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        s3.list_multipart_uploads(Bucket=repo, KeyMarker="main/same", UploadIdMarker="bogus!")
    assert refused.value.response["Error"]["Code"] == "InvalidArgument"


def test_completed_and_aborted_uploads_are_no_longer_listed(s3: Any, repo: str) -> None:
    done, dropped, kept = (_start(s3, repo, f"main/{name}") for name in ("done", "dropped", "kept"))
    etag = s3.upload_part(Bucket=repo, Key="main/done", UploadId=done, PartNumber=1, Body=b"x")
    s3.complete_multipart_upload(
        Bucket=repo,
        Key="main/done",
        UploadId=done,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag["ETag"]}]},
    )
    s3.abort_multipart_upload(Bucket=repo, Key="main/dropped", UploadId=dropped)
    listed = s3.list_multipart_uploads(Bucket=repo)["Uploads"]
    assert [(u["Key"], u["UploadId"]) for u in listed] == [("main/kept", kept)]


def test_url_encoding_encodes_keys_and_prefixes(s3: Any, repo: str) -> None:
    _start(s3, repo, "main/with space/x")
    _start(s3, repo, "main/é")
    answer = s3.list_multipart_uploads(
        Bucket=repo, EncodingType="url", Delimiter="/", Prefix="main/"
    )
    assert answer["EncodingType"] == "url"
    assert _keys(answer) == ["main/%C3%A9"]
    assert [p["Prefix"] for p in answer["CommonPrefixes"]] == ["main/with%20space/"]


def test_the_aws_cli_lists_uploads(aws: Any, s3: Any, repo: str, http: httpx.Client) -> None:
    _branch(http, repo, "dev")
    upload = _start(s3, repo, "main/cli/big.bin")
    _start(s3, repo, "dev/other")
    done = aws("s3api", "list-multipart-uploads", "--bucket", repo, "--prefix", "main/")
    listed = json.loads(done.stdout)["Uploads"]
    assert [(u["Key"], u["UploadId"]) for u in listed] == [("main/cli/big.bin", upload)]
