"""Multipart uploads through the gateway with real clients, on both server pairs.

boto3's managed transfers and the AWS CLI go multipart above their thresholds
(set to S3's 5 MiB minimum part here, to stay fast); the by-hand calls check
S3's rules and errors: parts of at least 5 MiB but the last, ascending, with
matching ETags, and the final ETag the MD5 of the parts' MD5s with "-N". An
aborted upload leaves no parts behind (local part files, S3 uploads).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3.s3.transfer
import botocore.exceptions
import httpx
import pytest

from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server

MIB = 1 << 20
PART = 5 * MIB


def _md5(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def _etag_of(*parts: bytes) -> str:
    joined = b"".join(bytes.fromhex(_md5(part)) for part in parts)
    return f'"{_md5(joined)}-{len(parts)}"'


def _code(exc: pytest.ExceptionInfo[botocore.exceptions.ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def _start(s3: Any, repo: str, key: str = "main/big.bin") -> str:
    return str(s3.create_multipart_upload(Bucket=repo, Key=key)["UploadId"])


def _part(
    s3: Any, repo: str, upload: str, number: int, body: bytes, key: str = "main/big.bin"
) -> str:
    answer = s3.upload_part(Bucket=repo, Key=key, UploadId=upload, PartNumber=number, Body=body)
    return str(answer["ETag"])


def test_boto3_managed_transfers_go_multipart_both_ways(
    s3: Any, repo: str, tmp_path: Path, http: httpx.Client
) -> None:
    data = os.urandom(2 * PART + 1234)
    source = tmp_path / "up.bin"
    source.write_bytes(data)
    config = boto3.s3.transfer.TransferConfig(multipart_threshold=PART, multipart_chunksize=PART)
    s3.upload_file(str(source), repo, "main/dir/up.bin", Config=config)
    head = s3.head_object(Bucket=repo, Key="main/dir/up.bin")
    assert head["ContentLength"] == len(data)
    assert head["ETag"].endswith('-3"')
    s3.download_file(repo, "main/dir/up.bin", str(tmp_path / "down.bin"), Config=config)
    assert (tmp_path / "down.bin").read_bytes() == data
    stat = http.get(f"/repositories/{repo}/refs/main/objects/stat", params={"path": "dir/up.bin"})
    assert stat.json()["size_bytes"] == len(data)  # the REST API sees the same object


def test_by_hand_with_a_copied_part_and_s3s_etag(s3: Any, repo: str) -> None:
    first = os.urandom(PART)
    s3.put_object(Bucket=repo, Key="main/source.bin", Body=b"0123456789" * 10)
    s3.put_object(Bucket=repo, Key="main/big.bin", Body=b"replaced")
    upload = s3.create_multipart_upload(
        Bucket=repo, Key="main/big.bin", ContentType="text/csv", Metadata={"kind": "joined"}
    )["UploadId"]
    etag1 = _part(s3, repo, upload, 1, first)
    copied = s3.upload_part_copy(
        Bucket=repo,
        Key="main/big.bin",
        UploadId=upload,
        PartNumber=2,
        CopySource={"Bucket": repo, "Key": "main/source.bin"},
        CopySourceRange="bytes=10-29",
    )
    etag2 = copied["CopyPartResult"]["ETag"]
    assert etag2 == f'"{_md5(b"0123456789" * 2)}"'
    done = s3.complete_multipart_upload(
        Bucket=repo,
        Key="main/big.bin",
        UploadId=upload,
        MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": etag1}, {"PartNumber": 2, "ETag": etag2}]
        },
    )
    assert done["ETag"] == _etag_of(first, b"0123456789" * 2)
    got = s3.get_object(Bucket=repo, Key="main/big.bin")
    assert got["Body"].read() == first + b"0123456789" * 2
    assert got["ETag"] == done["ETag"]
    assert got["ContentType"] == "text/csv"
    assert got["Metadata"] == {"kind": "joined"}


def test_a_copied_range_past_the_source_is_invalid_range(s3: Any, repo: str) -> None:
    s3.put_object(Bucket=repo, Key="main/source.bin", Body=b"0123456789")
    upload = _start(s3, repo)
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        s3.upload_part_copy(
            Bucket=repo,
            Key="main/big.bin",
            UploadId=upload,
            PartNumber=1,
            CopySource={"Bucket": repo, "Key": "main/source.bin"},
            CopySourceRange="bytes=5-10",
        )
    assert _code(refused) == "InvalidRange"


def test_list_parts_pages_through_the_parts_sent(s3: Any, repo: str) -> None:
    upload = _start(s3, repo)
    etags = [_part(s3, repo, upload, number, f"part {number}".encode()) for number in (1, 2, 3)]
    pages = s3.get_paginator("list_parts").paginate(
        Bucket=repo, Key="main/big.bin", UploadId=upload, PaginationConfig={"PageSize": 2}
    )
    listed = [part for page in pages for part in page.get("Parts", [])]
    assert [(p["PartNumber"], p["ETag"], p["Size"]) for p in listed] == [
        (1, etags[0], 6),
        (2, etags[1], 6),
        (3, etags[2], 6),
    ]


def test_a_small_part_but_the_last_is_entity_too_small(s3: Any, repo: str, server: Server) -> None:
    upload = _start(s3, repo)
    small = _part(s3, repo, upload, 1, b"x" * (PART - 1))
    last = _part(s3, repo, upload, 2, b"y")
    parts = [{"PartNumber": 1, "ETag": small}, {"PartNumber": 2, "ETag": last}]
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        s3.complete_multipart_upload(
            Bucket=repo, Key="main/big.bin", UploadId=upload, MultipartUpload={"Parts": parts}
        )
    assert _code(refused) == "EntityTooSmall"
    with pytest.raises(botocore.exceptions.ClientError):
        s3.head_object(Bucket=repo, Key="main/big.bin")  # nothing staged


@pytest.mark.parametrize(
    ("parts", "code"),
    [
        ([(2, 0), (1, 0)], "InvalidPartOrder"),
        ([(1, 0), (2, None)], "InvalidPart"),  # part 2 never sent
        ([(1, "wrong")], "InvalidPart"),
    ],
)
def test_completions_s3_refuses(
    s3: Any, repo: str, parts: list[tuple[int, Any]], code: str
) -> None:
    upload = _start(s3, repo)
    sent = _part(s3, repo, upload, 1, b"a")
    etags = {0: sent, None: '"' + "0" * 32 + '"', "wrong": '"' + "f" * 32 + '"'}
    listed = [{"PartNumber": number, "ETag": etags[which]} for number, which in parts]
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        s3.complete_multipart_upload(
            Bucket=repo, Key="main/big.bin", UploadId=upload, MultipartUpload={"Parts": listed}
        )
    assert _code(refused) == code
    with pytest.raises(botocore.exceptions.ClientError):
        s3.head_object(Bucket=repo, Key="main/big.bin")


def test_an_aborted_upload_leaves_no_parts_and_is_no_such_upload(
    s3: Any, repo: str, server: Server
) -> None:
    upload = _start(s3, repo)
    etag = _part(s3, repo, upload, 1, b"part")
    assert server.storage.unfinished_writes(repo)  # the part is stored, as a part
    s3.abort_multipart_upload(Bucket=repo, Key="main/big.bin", UploadId=upload)
    assert server.storage.unfinished_writes(repo) == []
    parts = {"Parts": [{"PartNumber": 1, "ETag": etag}]}
    # moto answers a completion of an aborted upload with a 500 (S3: NoSuchUpload)
    unknowns = [upload, "not-an-upload-id"] if server.storage.kind == "local" else ["x"]
    for unknown in unknowns:
        with pytest.raises(botocore.exceptions.ClientError) as refused:
            s3.complete_multipart_upload(
                Bucket=repo, Key="main/big.bin", UploadId=unknown, MultipartUpload=parts
            )
        assert _code(refused) == "NoSuchUpload"


def test_an_upload_id_is_only_for_its_own_key(s3: Any, repo: str) -> None:
    upload = _start(s3, repo)
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        _part(s3, repo, upload, 1, b"a", key="main/other.bin")
    assert _code(refused) == "NoSuchUpload"


def test_the_aws_cli_copies_a_file_above_its_threshold(
    server: Server, repo: str, tmp_path: Path
) -> None:
    data = os.urandom(9 * MIB)  # above the CLI's 8 MiB multipart threshold
    source = tmp_path / "cli.bin"
    source.write_bytes(data)
    env = os.environ | {
        "AWS_ACCESS_KEY_ID": ACCESS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
    }
    env.pop("AWS_ENDPOINT_URL", None)
    aws = [sys.executable, "-m", "awscli", "--endpoint-url", server.url]
    for args in (
        ["s3", "cp", str(source), f"s3://{repo}/main/cli.bin"],
        ["s3", "cp", f"s3://{repo}/main/cli.bin", str(tmp_path / "back.bin")],
    ):
        done = subprocess.run([*aws, *args], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "back.bin").read_bytes() == data
