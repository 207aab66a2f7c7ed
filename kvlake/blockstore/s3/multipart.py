"""One S3 multipart upload: parts sent or copied in order, then completed, or aborted.

Both large puts (parts from kvlake's buffer) and large copies (UploadPartCopy
ranges of the source, inside the store) are multipart uploads; this is their
shared life cycle. Every request goes through the adapter's `_call`, so it
takes a slot of the shared rate limiter and is retried there. An upload that
fails is aborted at once; one whose process crashed is invisible and removed by
the bucket's AbortIncompleteMultipartUpload lifecycle rule (docs/s3.md).
"""

from __future__ import annotations

from contextlib import suppress
from functools import partial
from typing import TYPE_CHECKING, Protocol, TypeVar

from kvlake.errors import KvlakeError

if TYPE_CHECKING:
    from collections.abc import Callable

    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import (
        CompletedPartTypeDef,
        CopySourceTypeDef,
        UploadPartCopyRequestTypeDef,
    )

T = TypeVar("T")


class Caller(Protocol):
    """The adapter's `_call`: run one request under the shared rate, with retries."""

    def __call__(self, doing: str, request: Callable[[], T]) -> T: ...


class MultipartUpload:
    """Started on creation; `send` or `copy` parts in order, then `complete`, or `abort`."""

    def __init__(self, client: S3Client, call: Caller, bucket: str, key: str, what: str) -> None:
        self._client = client
        self._call = call
        self._bucket = bucket
        self._key = key
        self._what = what
        self._parts: list[CompletedPartTypeDef] = []
        self._id = call(
            f"start the upload of {what}",
            lambda: client.create_multipart_upload(Bucket=bucket, Key=key),
        )["UploadId"]

    @property
    def parts(self) -> int:
        return len(self._parts)

    def send(self, body: bytes) -> None:
        """Upload the next part from memory (retried from `body`, never the caller's stream)."""
        number = len(self._parts) + 1
        answer = self._call(
            f"upload part {number} of {self._what}",
            partial(
                self._client.upload_part,
                Bucket=self._bucket,
                Key=self._key,
                UploadId=self._id,
                PartNumber=number,
                Body=body,
            ),
        )
        self._parts.append({"PartNumber": number, "ETag": answer["ETag"]})

    def copy(self, origin: CopySourceTypeDef, start: int, end: int, *, if_match: str = "") -> None:
        """Make bytes [start, end) of `origin` the next part, inside the store; `if_match`
        (CopySourceIfMatch) refuses a source replaced meanwhile."""
        number = len(self._parts) + 1
        request: UploadPartCopyRequestTypeDef = {
            "Bucket": self._bucket,
            "Key": self._key,
            "UploadId": self._id,
            "PartNumber": number,
            "CopySource": origin,
            "CopySourceRange": f"bytes={start}-{end - 1}",
        }
        if if_match:
            request["CopySourceIfMatch"] = f'"{if_match}"'
        answer = self._call(
            f"copy part {number} of {self._what}",
            partial(self._client.upload_part_copy, **request),
        )
        self._parts.append({"PartNumber": number, "ETag": answer["CopyPartResult"]["ETag"]})

    def complete(self) -> None:
        """Make the object visible, whole (S3 assembles the parts atomically)."""
        parts = list(self._parts)
        self._call(
            f"complete the upload of {self._what}",
            lambda: self._client.complete_multipart_upload(
                Bucket=self._bucket,
                Key=self._key,
                UploadId=self._id,
                MultipartUpload={"Parts": parts},
            ),
        )

    def abort(self) -> None:
        """Drop the parts. Its own failure is swallowed: the error that led here matters more."""
        with suppress(KvlakeError):
            self._call(
                f"abort the upload of {self._what}",
                lambda: self._client.abort_multipart_upload(
                    Bucket=self._bucket, Key=self._key, UploadId=self._id
                ),
            )
