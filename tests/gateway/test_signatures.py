"""SigV4, aws-chunked and digests on their own, against AWS's published examples.

The signed-stream example of AWS's documentation ("Signature calculation:
Transfer payload in multiple chunks") fixes the seed and chunk signatures; a
decoder that accepts it and refuses a changed byte speaks S3's protocol.
"""

from __future__ import annotations

import base64
import io
import zlib
from typing import Any

import pytest
from botocore.httpchecksum import AwsChunkedWrapper, Crc32Checksum

from kvlake.gateway import S3Error
from kvlake.gateway.chunked import ChunkedReader, ChunkSigner
from kvlake.gateway.digests import Expected, VerifyingReader
from kvlake.gateway.sigv4 import (
    Credential,
    Signature,
    canonical_request,
    check_time,
    read_signature,
    request_string_to_sign,
    sign,
    signing_key,
)

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
CREDENTIAL = Credential("AKIAIOSFODNN7EXAMPLE", "20130524", "us-east-1", "s3")
SEED = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
CHUNKS = (
    (0x10000, "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648"),
    (0x400, "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497"),
    (0, "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"),
)


def _example_body() -> bytes:
    parts = [
        f"{size:x};chunk-signature={signature}\r\n".encode() + b"a" * size + b"\r\n"
        for size, signature in CHUNKS
    ]
    return b"".join(parts)


def _signer() -> ChunkSigner:
    key = signing_key(SECRET, CREDENTIAL)
    return ChunkSigner(key, "20130524T000000Z", CREDENTIAL.scope, SEED)


def test_the_aws_example_request_signs_to_its_seed_signature() -> None:
    signature = Signature(
        credential=CREDENTIAL,
        amz_date="20130524T000000Z",
        signed_headers=(
            "content-encoding",
            "content-length",
            "host",
            "x-amz-content-sha256",
            "x-amz-date",
            "x-amz-decoded-content-length",
            "x-amz-storage-class",
        ),
        signature=SEED,
        payload="STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
    )
    headers = {
        "content-encoding": ["aws-chunked"],
        "content-length": ["66824"],
        "host": ["s3.amazonaws.com"],
        "x-amz-content-sha256": ["STREAMING-AWS4-HMAC-SHA256-PAYLOAD"],
        "x-amz-date": ["20130524T000000Z"],
        "x-amz-decoded-content-length": ["66560"],
        "x-amz-storage-class": ["REDUCED_REDUNDANCY"],
    }
    canonical = canonical_request("PUT", "/examplebucket/chunkObject.txt", [], headers, signature)
    key = signing_key(SECRET, CREDENTIAL)
    assert sign(key, request_string_to_sign(signature, canonical)) == SEED


def test_the_aws_example_signed_stream_decodes() -> None:
    reader = ChunkedReader(io.BytesIO(_example_body()), signer=_signer(), trailer=False)
    data = b""
    while chunk := reader.read(1000):
        data += chunk
    assert data == b"a" * 66560


def test_a_changed_byte_in_a_signed_stream_is_refused() -> None:
    body = bytearray(_example_body())
    body[200] = ord("b")
    reader = ChunkedReader(io.BytesIO(bytes(body)), signer=_signer(), trailer=False)
    with pytest.raises(S3Error) as caught:
        reader.read(-1)
    assert caught.value.code == "SignatureDoesNotMatch"


def _botocore_stream(data: bytes, checksum: bool = True) -> bytes:
    wrapper: Any = AwsChunkedWrapper(
        io.BytesIO(data),
        checksum_cls=Crc32Checksum if checksum else None,
        checksum_name="x-amz-checksum-crc32",
        chunk_size=4096,
    )
    return bytes(wrapper.read())


def _decode(stream: bytes, headers: dict[str, str]) -> bytes:
    decoded = ChunkedReader(io.BytesIO(stream), signer=None, trailer=True)
    expected = Expected(headers, declared_trailer="x-amz-checksum-crc32")
    reader = VerifyingReader(decoded, expected, trailers=lambda: decoded.trailers)  # type: ignore[arg-type]
    out = b""
    while chunk := reader.read(1000):
        out += chunk
    return out


def test_botocore_unsigned_trailer_stream_decodes_and_verifies() -> None:
    data = bytes(range(256)) * 50
    assert _decode(_botocore_stream(data), {}) == data


def test_a_trailer_checksum_that_does_not_match_is_bad_digest() -> None:
    data = bytes(range(256)) * 50
    stream = _botocore_stream(data)
    good = base64.b64encode(zlib.crc32(data).to_bytes(4, "big"))
    assert good in stream
    stream = stream.replace(good, base64.b64encode(b"\0\0\0\0"))
    with pytest.raises(S3Error) as caught:
        _decode(stream, {})
    assert caught.value.code == "BadDigest"


def test_a_stream_without_its_declared_trailer_is_refused() -> None:
    with pytest.raises(S3Error) as caught:
        _decode(_botocore_stream(b"data", checksum=False), {})
    assert caught.value.code == "IncompleteBody"


def test_a_truncated_stream_is_refused() -> None:
    with pytest.raises(S3Error) as caught:
        _decode(_botocore_stream(b"x" * 10000)[:5000], {})
    assert caught.value.code == "IncompleteBody"


def test_content_md5_must_match() -> None:
    wrong = base64.b64encode(b"\0" * 16).decode()
    reader = VerifyingReader(io.BytesIO(b"body"), Expected({"content-md5": wrong}))
    with pytest.raises(S3Error) as caught:
        reader.read(-1), reader.read(-1)
    assert caught.value.code == "BadDigest"


def test_an_unknown_checksum_is_refused_not_stored_unverified() -> None:
    with pytest.raises(S3Error) as caught:
        Expected({"x-amz-checksum-md4": "AAAAAAAAAAA="})
    assert caught.value.code == "InvalidRequest"


def _signature(amz_date: str, expires: int | None = None) -> Signature:
    return Signature(
        credential=Credential("k", amz_date[:8], "us-east-1", "s3"),
        amz_date=amz_date,
        signed_headers=("host",),
        signature="0" * 64,
        payload="UNSIGNED-PAYLOAD",
        expires=expires,
    )


def test_a_request_signed_more_than_15_minutes_away_is_skewed() -> None:
    moment = 1_369_353_600.0  # 2013-05-24T00:00:00Z
    check_time(_signature("20130524T000000Z"), moment + 15 * 60)
    for now in (moment + 15 * 60 + 1, moment - 15 * 60 - 1):
        with pytest.raises(S3Error) as caught:
            check_time(_signature("20130524T000000Z"), now)
        assert caught.value.code == "RequestTimeTooSkewed"


def test_a_presigned_url_past_its_expiry_is_refused() -> None:
    moment = 1_369_353_600.0
    check_time(_signature("20130524T000000Z", expires=3600), moment + 3600)
    with pytest.raises(S3Error) as caught:
        check_time(_signature("20130524T000000Z", expires=3600), moment + 3601)
    assert caught.value.code == "AccessDenied"


def test_a_signature_that_does_not_cover_the_host_is_refused() -> None:
    header = (
        "AWS4-HMAC-SHA256 Credential=k/20130524/us-east-1/s3/aws4_request,"
        " SignedHeaders=x-amz-date, Signature=" + "0" * 64
    )
    headers = {"authorization": [header], "x-amz-content-sha256": ["UNSIGNED-PAYLOAD"]}
    with pytest.raises(S3Error) as caught:
        read_signature([], headers)
    assert caught.value.code == "AccessDenied"
