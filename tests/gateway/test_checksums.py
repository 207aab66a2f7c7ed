"""S3 checksums stored with the object and returned when asked, with boto3 and the AWS CLI.

A PutObject's verified `x-amz-checksum-*` (header or aws-chunked trailer) is kept
with the entry, survives a commit, and comes back on GetObject/HeadObject with
`x-amz-checksum-mode: ENABLED` (never for a range, never unasked). A multipart
upload with a checksum algorithm gets S3's composite checksum (`-N`), its parts'
checksums in ListParts, and a Complete naming a wrong part checksum is InvalidPart.
The REST API's stat has no field for them (as lakeFS's).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import zlib
from typing import Any

import botocore.exceptions
import httpx
import pytest

MIB = 1 << 20
PART = 5 * MIB


def _crc32(data: bytes) -> str:
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


def _sha256(data: bytes) -> str:
    return base64.b64encode(hashlib.sha256(data).digest()).decode()


def _composite_crc32(*parts: bytes) -> str:
    joined = b"".join(base64.b64decode(_crc32(part)) for part in parts)
    return f"{_crc32(joined)}-{len(parts)}"


def test_a_put_objects_checksum_comes_back_when_asked_and_after_a_commit(
    s3: Any, repo: str, http: httpx.Client
) -> None:
    data = b"checked bytes\n" * 100
    s3.put_object(Bucket=repo, Key="main/a.txt", Body=data)  # boto3's default: CRC32
    s3.put_object(Bucket=repo, Key="main/b.txt", Body=data, ChecksumAlgorithm="SHA256")
    got = s3.get_object(Bucket=repo, Key="main/a.txt", ChecksumMode="ENABLED")
    assert got["ChecksumCRC32"] == _crc32(data) and got["Body"].read() == data
    assert got["ChecksumType"] == "FULL_OBJECT"
    head = s3.head_object(Bucket=repo, Key="main/b.txt", ChecksumMode="ENABLED")
    assert head["ChecksumSHA256"] == _sha256(data)
    assert "ChecksumCRC32" not in s3.head_object(Bucket=repo, Key="main/a.txt")  # unasked
    ranged = s3.get_object(Bucket=repo, Key="main/a.txt", Range="bytes=0-9", ChecksumMode="ENABLED")
    assert "ChecksumCRC32" not in ranged  # S3 gives a whole object's checksum only
    answer = http.post(f"/repositories/{repo}/branches/main/commits", json={"message": "c"})
    assert answer.status_code == 201, answer.text
    commit = answer.json()["id"]
    committed = s3.head_object(Bucket=repo, Key=f"{commit}/b.txt", ChecksumMode="ENABLED")
    assert committed["ChecksumSHA256"] == _sha256(data)
    stat = http.get(f"/repositories/{repo}/refs/{commit}/objects/stat", params={"path": "b.txt"})
    assert "checksums" not in stat.json() and _sha256(data) not in stat.text  # lakeFS has no place


def test_a_copy_keeps_the_sources_checksum(s3: Any, repo: str) -> None:
    s3.put_object(Bucket=repo, Key="main/src", Body=b"abc", ChecksumAlgorithm="SHA256")
    s3.copy_object(Bucket=repo, Key="main/dst", CopySource={"Bucket": repo, "Key": "main/src"})
    head = s3.head_object(Bucket=repo, Key="main/dst", ChecksumMode="ENABLED")
    assert head["ChecksumSHA256"] == _sha256(b"abc")


def test_a_multipart_upload_gets_s3s_composite_checksum(s3: Any, repo: str) -> None:
    first, last = os.urandom(PART), b"the last part"
    upload = s3.create_multipart_upload(Bucket=repo, Key="main/big", ChecksumAlgorithm="CRC32")
    assert upload["ChecksumAlgorithm"] == "CRC32"
    uid = upload["UploadId"]
    sent = [
        s3.upload_part(
            Bucket=repo, Key="main/big", UploadId=uid, PartNumber=n, Body=body,
            ChecksumAlgorithm="CRC32",
        )
        for n, body in ((1, first), (2, last))
    ]  # fmt: skip
    assert [p["ChecksumCRC32"] for p in sent] == [_crc32(first), _crc32(last)]
    listed = s3.list_parts(Bucket=repo, Key="main/big", UploadId=uid)
    assert [p["ChecksumCRC32"] for p in listed["Parts"]] == [_crc32(first), _crc32(last)]
    parts = [
        {"PartNumber": n, "ETag": p["ETag"], "ChecksumCRC32": p["ChecksumCRC32"]}
        for n, p in enumerate(sent, 1)
    ]
    done = s3.complete_multipart_upload(
        Bucket=repo, Key="main/big", UploadId=uid, MultipartUpload={"Parts": parts}
    )
    assert done["ChecksumCRC32"] == _composite_crc32(first, last)
    head = s3.head_object(Bucket=repo, Key="main/big", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == _composite_crc32(first, last)
    assert head["ChecksumType"] == "COMPOSITE"
    body = s3.get_object(Bucket=repo, Key="main/big", ChecksumMode="ENABLED")["Body"].read()
    assert body == first + last


def test_a_complete_with_another_part_checksum_is_invalid_part(s3: Any, repo: str) -> None:
    uid = s3.create_multipart_upload(Bucket=repo, Key="main/x", ChecksumAlgorithm="CRC32")[
        "UploadId"
    ]
    sent = s3.upload_part(
        Bucket=repo, Key="main/x", UploadId=uid, PartNumber=1, Body=b"x", ChecksumAlgorithm="CRC32"
    )
    wrong = {"PartNumber": 1, "ETag": sent["ETag"], "ChecksumCRC32": _crc32(b"y")}
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        s3.complete_multipart_upload(
            Bucket=repo, Key="main/x", UploadId=uid, MultipartUpload={"Parts": [wrong]}
        )
    assert refused.value.response["Error"]["Code"] == "InvalidPart"
    with pytest.raises(botocore.exceptions.ClientError):
        s3.head_object(Bucket=repo, Key="main/x")  # nothing was staged


def test_the_aws_cli_puts_and_heads_with_checksums(aws: Any, repo: str, tmp_path: Any) -> None:
    source = tmp_path / "f.bin"
    source.write_bytes(b"cli bytes" * 1000)
    aws(
        "s3api", "put-object", "--bucket", repo, "--key", "main/f.bin", "--body", str(source),
        "--checksum-algorithm", "SHA256",
    )  # fmt: skip
    done = aws("s3api", "head-object", "--bucket", repo, "--key", "main/f.bin",
               "--checksum-mode", "ENABLED")  # fmt: skip
    assert json.loads(done.stdout)["ChecksumSHA256"] == _sha256(source.read_bytes())
