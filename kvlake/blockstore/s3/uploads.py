"""The multipart uploads a client sends itself, for S3BlockStore: presigned part URLs,
parts copied inside the store, completion and abort.

For lakeFS's presigned multipart calls (createPresignMultipartUpload, uploadPart,
uploadPartCopy, completePresignMultipartUpload, abortPresignMultipartUpload): the
client PUTs the parts straight to S3, kvlake starts, completes or aborts the
upload. Kept apart from `store.py` because it is another concept (the adapter's own
large puts are `multipart.MultipartUpload`); every request still goes through
`S3Requests._call`, so it shares the rate limiter and its retries.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Final

from kvlake.blockstore.s3.requests import S3Requests
from kvlake.blockstore.terms import PartSource, UploadedPart
from kvlake.errors import BlobNotFoundError, InvalidInputError, UploadRefusedError

if TYPE_CHECKING:
    from mypy_boto3_s3.type_defs import CompletedPartTypeDef

SPOOL_BYTES: Final = 1 << 20
"""A part sent through kvlake is spooled to a temporary file beyond this, so the request
can be retried and the process's memory stays flat whatever the part's size."""


class S3ClientUploads(S3Requests):
    """Implements BlockStore's client-upload primitives for S3BlockStore, its subclass."""

    def _start_upload(self, namespace: str, key: str) -> str:
        bucket, object_key = self._locate(namespace, key)
        return self._call(
            f"start an upload of blob {key!r} in {namespace!r}",
            lambda: self._client.create_multipart_upload(Bucket=bucket, Key=object_key),
        )["UploadId"]

    def _presign_upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, expires: int
    ) -> str:
        extra = {"UploadId": upload_id, "PartNumber": part}
        return self._presign("upload_part", namespace, key, expires, extra)

    def _upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, chunks: Iterator[bytes]
    ) -> str:
        bucket, object_key = self._locate(namespace, key)
        with tempfile.SpooledTemporaryFile(SPOOL_BYTES) as spool:
            for chunk in chunks:  # the caller's stream: its errors reach the caller as they are
                spool.write(chunk)
            size = spool.tell()

            def send() -> str:
                spool.seek(0)  # from the start on every try
                return self._client.upload_part(
                    Bucket=bucket,
                    Key=object_key,
                    UploadId=upload_id,
                    PartNumber=part,
                    Body=spool,
                    ContentLength=size,
                )["ETag"]

            etag = self._call(
                f"send part {part} of an upload of blob {key!r} in {namespace!r}", send
            )
        return etag.strip('"')

    def _copy_upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, source: PartSource
    ) -> str:
        bucket, object_key = self._locate(namespace, key)
        source_bucket, source_key = self._locate(source.namespace, source.key)
        try:
            answer = self._call(
                f"copy part {part} of an upload of blob {key!r} in {namespace!r}",
                partial(
                    self._client.upload_part_copy,
                    Bucket=bucket,
                    Key=object_key,
                    UploadId=upload_id,
                    PartNumber=part,
                    CopySource={"Bucket": source_bucket, "Key": source_key},
                    CopySourceRange=f"bytes={source.start}-{source.end - 1}",
                ),
            )
        except BlobNotFoundError:  # NoSuchKey or NoSuchUpload
            raise InvalidInputError(
                f"upload {upload_id!r} of {key!r} or the copied blob {source.key!r} does not"
                " exist; start the upload again, or check the source"
            ) from None
        return answer["CopyPartResult"]["ETag"].strip('"')

    def _complete_upload(
        self, namespace: str, key: str, upload_id: str, parts: Sequence[tuple[int, str]]
    ) -> str:
        bucket, object_key = self._locate(namespace, key)
        listed: list[CompletedPartTypeDef] = [
            {"PartNumber": number, "ETag": f'"{etag.strip(chr(34))}"'} for number, etag in parts
        ]
        try:
            answer = self._call(
                f"complete an upload of blob {key!r} in {namespace!r}",
                lambda: self._client.complete_multipart_upload(
                    Bucket=bucket,
                    Key=object_key,
                    UploadId=upload_id,
                    MultipartUpload={"Parts": listed},
                ),
            )
        except BlobNotFoundError:  # NoSuchUpload
            raise InvalidInputError(
                f"upload {upload_id!r} of {key!r} does not exist (completed or aborted already?);"
                " start a new upload"
            ) from None
        return answer.get("ETag", "").strip('"')

    def _list_upload_parts(self, namespace: str, key: str, upload_id: str) -> list[UploadedPart]:
        bucket, object_key = self._locate(namespace, key)
        parts: list[UploadedPart] = []
        marker = 0
        while True:  # S3 answers at most 1,000 parts a page; an upload has at most 10,000
            page = self._call(
                f"list the parts of an upload of blob {key!r} in {namespace!r}",
                partial(
                    self._client.list_parts,
                    Bucket=bucket,
                    Key=object_key,
                    UploadId=upload_id,
                    PartNumberMarker=marker,
                ),
            )
            for part in page.get("Parts", []):
                parts.append(
                    UploadedPart(
                        part["PartNumber"],
                        part["ETag"].strip('"'),
                        part["Size"],
                        part["LastModified"].timestamp(),
                    )
                )
            if not page.get("IsTruncated"):
                return parts
            marker = page["NextPartNumberMarker"]

    def _abort_uploads_to(self, namespace: str, key: str) -> int:
        bucket, object_key = self._locate(namespace, key)
        found: list[str] = []
        key_marker, id_marker = "", ""
        while True:
            page = self._call(
                f"list the uploads to blob {key!r} in {namespace!r}",
                partial(
                    self._client.list_multipart_uploads,
                    Bucket=bucket,
                    Prefix=object_key,
                    KeyMarker=key_marker,
                    UploadIdMarker=id_marker,
                ),
            )
            found += [u["UploadId"] for u in page.get("Uploads", []) if u["Key"] == object_key]
            if not page.get("IsTruncated"):
                break
            key_marker, id_marker = page["NextKeyMarker"], page["NextUploadIdMarker"]
        for upload_id in found:
            self._abort_upload(namespace, key, upload_id)
        return len(found)

    def _abort_upload(self, namespace: str, key: str, upload_id: str) -> None:
        bucket, object_key = self._locate(namespace, key)
        try:
            self._call(
                f"abort an upload of blob {key!r} in {namespace!r}",
                lambda: self._client.abort_multipart_upload(
                    Bucket=bucket, Key=object_key, UploadId=upload_id
                ),
            )
        except BlobNotFoundError:
            pass  # gone already: aborted or completed
        except UploadRefusedError as exc:
            if exc.code != "NoSuchUpload":
                raise
