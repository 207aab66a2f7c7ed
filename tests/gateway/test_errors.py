"""A test per S3 error the gateway documents: the code, the RequestId, and nothing changed.

Each refused write is checked to have staged nothing and left no blob behind.
"""

from __future__ import annotations

import base64
import datetime
import io
import uuid
import zlib
from typing import Any
from xml.etree import ElementTree

import botocore.exceptions
import httpx
import pytest
from botocore.httpchecksum import AwsChunkedWrapper, Crc32Checksum

from kvlake.auth.ratelimit import FREE_FAILURES
from tests.api.server import Server
from tests.gateway.conftest import DOMAIN, s3_client
from tests.gateway.signing import TRAILER_CRC32, send, sign


def _error(response: httpx.Response) -> dict[str, str]:
    root = ElementTree.fromstring(response.content)
    return {child.tag: child.text or "" for child in root}


def _code(exc: botocore.exceptions.ClientError) -> str:
    return str(exc.response["Error"]["Code"])


def _blobs(server: Server, repo: str) -> list[str]:
    return [k for k in server.storage.keys(server.storage.namespace(repo)) if "_lakefs" not in k]


def _staged(s3: Any, repo: str) -> list[str]:
    return [c["Key"] for c in s3.list_objects_v2(Bucket=repo, Prefix="main/").get("Contents", [])]


def test_no_such_bucket(s3: Any) -> None:
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.get_object(Bucket="no-such-repository", Key="main/x")
    assert _code(caught.value) == "NoSuchBucket"
    assert caught.value.response["ResponseMetadata"]["RequestId"]


def test_no_such_key_names_its_request(server: Server, repo: str) -> None:
    response = send("GET", f"{server.url}/{repo}/main/missing")
    assert response.status_code == 404
    error = _error(response)
    assert error["Code"] == "NoSuchKey"
    assert error["RequestId"] == response.headers["x-amz-request-id"]


def test_an_unsigned_request_is_access_denied(server: Server, repo: str) -> None:
    response = httpx.get(f"{server.url}/{repo}/main/x")
    assert response.status_code == 403
    assert _error(response)["Code"] == "AccessDenied"


def test_a_wrong_secret_does_not_match(server: Server, repo: str) -> None:
    client = s3_client(server, secret="not-the-secret")
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        client.list_objects_v2(Bucket=repo)
    assert _code(caught.value) == "SignatureDoesNotMatch"


def _new_user_keys(http: httpx.Client) -> tuple[str, str]:
    user = f"user-{uuid.uuid4().hex[:8]}"
    assert http.post("/auth/users", json={"id": user}).status_code == 201
    made = http.post(f"/auth/users/{user}/credentials")
    assert made.status_code == 201, made.text
    return made.json()["access_key_id"], made.json()["secret_access_key"]


def test_failed_signatures_slow_the_address_down_as_failed_logins_do(
    server: Server, http: httpx.Client, repo: str
) -> None:
    key, _ = _new_user_keys(http)  # a key of its own: the admin's stays usable
    wrong = s3_client(server, key, "not-the-secret")
    codes: list[str] = []
    # Past the free failures each one doubles the wait (1 s, 2 s, 4 s...): however slow
    # this machine, an attempt soon lands inside a wait and is refused unread.
    while "SlowDown" not in codes and len(codes) < FREE_FAILURES + 10:
        with pytest.raises(botocore.exceptions.ClientError) as caught:
            wrong.list_objects_v2(Bucket=repo)
        codes.append(_code(caught.value))
    assert codes[:FREE_FAILURES] == ["SignatureDoesNotMatch"] * FREE_FAILURES
    assert codes[-1] == "SlowDown"


def test_an_unknown_access_key(server: Server, repo: str) -> None:
    client = s3_client(server, access_key_id="AKIANOSUCHKEY0000000")
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        client.list_objects_v2(Bucket=repo)
    assert _code(caught.value) == "InvalidAccessKeyId"


def test_a_skewed_clock(server: Server, repo: str) -> None:
    an_hour_ago = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=1)
    response = send("GET", f"{server.url}/{repo}?list-type=2", at=an_hour_ago)
    assert response.status_code == 403
    assert _error(response)["Code"] == "RequestTimeTooSkewed"


def test_policies_apply_a_viewer_reads_but_cannot_write(
    server: Server, http: httpx.Client, s3: Any, repo: str
) -> None:
    s3.put_object(Bucket=repo, Key="main/seen", Body=b"x")
    user = f"viewer-{uuid.uuid4().hex[:8]}"
    assert http.post("/auth/users", json={"id": user}).status_code == 201
    assert http.put(f"/auth/groups/Viewers/members/{user}").status_code == 201
    made = http.post(f"/auth/users/{user}/credentials")
    assert made.status_code == 201, made.text
    viewer = s3_client(server, made.json()["access_key_id"], made.json()["secret_access_key"])
    assert viewer.get_object(Bucket=repo, Key="main/seen")["Body"].read() == b"x"
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        viewer.put_object(Bucket=repo, Key="main/new", Body=b"x")
    assert _code(caught.value) == "AccessDenied"
    answer = viewer.delete_objects(Bucket=repo, Delete={"Objects": [{"Key": "main/seen"}]})
    assert [e["Code"] for e in answer["Errors"]] == ["AccessDenied"]
    assert _staged(s3, repo) == ["main/seen"]


def test_a_wrong_content_md5_is_bad_digest_and_leaves_nothing(
    server: Server, s3: Any, repo: str
) -> None:
    before = _blobs(server, repo)
    wrong = base64.b64encode(b"\0" * 16).decode()
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.put_object(Bucket=repo, Key="main/bad", Body=b"body", ContentMD5=wrong)
    assert _code(caught.value) == "BadDigest"
    assert _staged(s3, repo) == []
    assert _blobs(server, repo) == before


def _trailer_put(server: Server, url: str, data: bytes, *, corrupt: bool = False) -> httpx.Response:
    wrapper: Any = AwsChunkedWrapper(
        io.BytesIO(data),
        checksum_cls=Crc32Checksum,
        checksum_name="x-amz-checksum-crc32",
        chunk_size=64 << 10,
    )
    body = bytes(wrapper.read())
    if corrupt:
        body = body.replace(data[:100], b"?" * 100, 1)
    headers = {
        "Content-Encoding": "aws-chunked",
        "X-Amz-Trailer": "x-amz-checksum-crc32",
        "X-Amz-Decoded-Content-Length": str(len(data)),
    }
    return send("PUT", url, body=body, headers=headers, context={"checksum": TRAILER_CRC32})


def test_a_streamed_upload_with_a_trailer_checksum_is_stored(
    server: Server, s3: Any, repo: str
) -> None:
    data = bytes(range(256)) * 1000
    response = _trailer_put(server, f"{server.url}/{repo}/main/streamed", data)
    assert response.status_code == 200, response.text
    assert s3.get_object(Bucket=repo, Key="main/streamed")["Body"].read() == data
    # The trailer's checksum, verified after the last byte, is the one stored.
    crc32 = base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()
    head = s3.head_object(Bucket=repo, Key="main/streamed", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == crc32


def test_a_streamed_upload_whose_trailer_does_not_match_leaves_nothing(
    server: Server, s3: Any, repo: str
) -> None:
    before = _blobs(server, repo)
    data = bytes(range(256)) * 1000
    response = _trailer_put(server, f"{server.url}/{repo}/main/bad", data, corrupt=True)
    assert response.status_code == 400
    assert _error(response)["Code"] == "BadDigest"
    assert _staged(s3, repo) == []
    assert _blobs(server, repo) == before


def test_malformed_xml_is_refused(server: Server, s3: Any, repo: str) -> None:
    s3.put_object(Bucket=repo, Key="main/kept", Body=b"x")
    response = send("POST", f"{server.url}/{repo}?delete", body=b"<Delete><Object><Key>main/")
    assert response.status_code == 400
    assert _error(response)["Code"] == "MalformedXML"
    assert _staged(s3, repo) == ["main/kept"]


@pytest.mark.parametrize("key", ["main/a/../b", "main/./c", "main/nul\0here"])
def test_keys_with_dot_segments_or_nul_are_refused(s3: Any, repo: str, key: str) -> None:
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.put_object(Bucket=repo, Key=key, Body=b"x")
    assert _code(caught.value) == "InvalidArgument"
    assert _staged(s3, repo) == []


def test_a_copy_from_another_repository_or_a_missing_ref_is_refused(s3: Any, repo: str) -> None:
    s3.put_object(Bucket=repo, Key="main/src", Body=b"x")
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.copy_object(Bucket=repo, Key="main/dst", CopySource="other-repository/main/src")
    assert _code(caught.value) == "InvalidArgument"
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.copy_object(Bucket=repo, Key="main/dst", CopySource=f"{repo}/no-such-ref/src")
    assert _code(caught.value) == "NoSuchKey"
    assert _staged(s3, repo) == ["main/src"]


def test_an_operation_not_served_is_not_implemented(s3: Any, repo: str) -> None:
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.get_bucket_policy(Bucket=repo)
    assert _code(caught.value) == "NotImplemented"
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.create_bucket(Bucket="new-bucket")
    assert _code(caught.value) == "NotImplemented"


def test_the_rest_api_keeps_its_own_errors(http: httpx.Client) -> None:
    response = http.get("/no/such/operation")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/json")


def test_virtual_hosted_requests_address_the_repository_by_host(
    server: Server, s3: Any, repo: str
) -> None:
    s3.put_object(Bucket=repo, Key="main/v", Body=b"virtual")
    host = f"{repo}.{DOMAIN}:{server.port}"
    response = send("GET", f"{server.url}/main/v", headers={"Host": host})
    assert response.status_code == 200, response.text
    assert response.content == b"virtual"
    listing = send("GET", f"{server.url}/?list-type=2&prefix=main%2F", headers={"Host": host})
    assert b"<Key>main/v</Key>" in listing.content


def test_a_body_that_is_not_the_signed_payload_hash_leaves_nothing(
    server: Server, s3: Any, repo: str
) -> None:
    before = _blobs(server, repo)
    url = f"{server.url}/{repo}/main/swapped"
    headers = sign("PUT", url, body=b"signed body")  # x-amz-content-sha256 of this body
    response = httpx.put(url, headers=headers, content=b"other body!", timeout=60)
    assert response.status_code == 400
    assert _error(response)["Code"] == "XAmzContentSHA256Mismatch"
    assert _staged(s3, repo) == []
    assert _blobs(server, repo) == before


@pytest.mark.parametrize("digest", ["not base64!", base64.b64encode(b"short").decode()])
def test_a_content_md5_that_is_no_md5_is_invalid_digest(
    server: Server, s3: Any, repo: str, digest: str
) -> None:
    before = _blobs(server, repo)
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        s3.put_object(Bucket=repo, Key="main/bad", Body=b"body", ContentMD5=digest)
    assert _code(caught.value) == "InvalidDigest"
    assert _staged(s3, repo) == []
    assert _blobs(server, repo) == before
