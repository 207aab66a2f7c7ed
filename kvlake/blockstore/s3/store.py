"""Blobs as objects in S3 or any S3-compatible store: `s3://bucket/prefix`.

A namespace `s3://lake/repos/repo1` is the bucket `lake` and the key prefix
`repos/repo1/`; a blob is the object `repos/repo1/<key>`. Unlike `local://`,
namespaces are absolute (lakeFS clients send `s3://bucket/path`), so the root
in KVLAKE_BLOCKSTORE_URL is a wall they must stay inside: `s3://lake/repos`
serves `s3://lake/repos/<anything>` only, `s3://lake` any prefix of that bucket,
and a bare `s3://` every bucket the credentials reach (what lakeFS does).

Everything about reaching the store is the standard AWS configuration (the
credential chain, AWS_ENDPOINT_URL, AWS_REGION, the config file's
addressing style), so MinIO, Ceph, R2 and others need no kvlake setting; the
URL's query may override a few (`from_url`).

Every request goes through `S3Requests._call` (`requests.py`): under the
process's shared rate for the endpoint, retried there, its errors translated, so
callers see only kvlake errors. Put bodies are retried from kvlake's own part
buffer, never by re-reading the caller's stream.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, BinaryIO, Final, Self

import botocore.exceptions

from kvlake.blockstore.listing import BlobInfo
from kvlake.blockstore.s3.client import (
    BUCKET_NAME,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_PART_SIZE_MIB,
    make_client,
    parse_url,
)
from kvlake.blockstore.s3.errors import THROTTLE_CODES, RangeNotSatisfiableError
from kvlake.blockstore.s3.multipart import MultipartUpload
from kvlake.blockstore.s3.uploads import S3ClientUploads
from kvlake.blockstore.store import BlockStore
from kvlake.blockstore.terms import MAX_PARTS, BlobHead, blob_replaced, check_key
from kvlake.blockstore.throttle import AdaptiveRateLimiter, shared_limiter
from kvlake.errors import (
    BlobNotFoundError,
    BlobReplacedError,
    ConfigError,
    InvalidInputError,
    KvlakeError,
    UnavailableError,
)

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer
    from botocore.response import StreamingBody
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import (
        CopyObjectRequestTypeDef,
        CopySourceTypeDef,
        GetObjectRequestTypeDef,
        ListObjectsV2OutputTypeDef,
    )

MIB: Final = 1 << 20
DEFAULT_PART_SIZE: Final = DEFAULT_PART_SIZE_MIB * MIB
"""Bodies up to this size are one PutObject; larger ones are multipart uploads in parts of
at least this size, so a put holds about two parts in memory, never the whole body."""
MIN_PART_SIZE: Final = 5 * MIB
"""S3 refuses smaller parts (but the last)."""
PARTS_PER_SIZE_STEP: Final = 1000
"""Part sizes double every 1,000 parts (up to MAX_PART_SIZE): a stream of unknown length
then fits S3's 10,000 parts up to about 2.5 TiB with 8 MiB parts."""
MAX_PART_SIZE: Final = 512 * MIB
MAX_COPY_OBJECT: Final = 5 << 30
"""CopyObject copies at most 5 GiB; larger blobs are copied in parts (UploadPartCopy)."""
COPY_PART_SIZE: Final = 512 * MIB
"""Parts of a multipart copy: copied inside the store, so large parts cost kvlake nothing,
and 10,000 of them cover S3's largest object (5 TiB)."""
DELETE_BATCH: Final = 1000
"""DeleteObjects takes at most 1,000 keys."""


class _ObjectReader(io.RawIOBase):
    """An S3 response body as a raw stream; a broken connection becomes UnavailableError."""

    def __init__(self, body: StreamingBody, what: str) -> None:
        super().__init__()
        self._body = body
        self._what = what

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        try:
            data = self._body.read(len(view))
        except botocore.exceptions.BotoCoreError as exc:
            raise UnavailableError(
                f"reading {self._what} from S3 broke off ({type(exc).__name__}); retry the read"
            ) from exc
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._body.close()
        super().close()


class S3BlockStore(S3ClientUploads, BlockStore):
    """Objects under a root `s3://[bucket[/prefix]]`. Thread-safe: one boto3 client, shared.

    Puts are atomic because S3's are (PutObject, CompleteMultipartUpload); a
    failed multipart upload is aborted. Listings are S3's, in UTF-8 byte order.
    """

    scheme = "s3"
    presigns = True

    def __init__(
        self,
        client: S3Client,
        *,
        root: str = "",
        limiter: AdaptiveRateLimiter,
        part_size: int = DEFAULT_PART_SIZE,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        max_copy_object: int = MAX_COPY_OBJECT,
        copy_part_size: int = COPY_PART_SIZE,
    ) -> None:
        """Serve namespaces below `root` (`bucket/prefix`, `bucket` or "" for all buckets).

        `max_copy_object` and `copy_part_size` exist for tests, which copy in parts
        without 5 GiB objects.
        """
        if part_size < MIN_PART_SIZE or max_attempts < 1:
            raise ConfigError(
                f"S3 part size {part_size} or max attempts {max_attempts} is invalid; use a part"
                f" size of at least {MIN_PART_SIZE // MIB} MiB and at least one attempt"
            )
        super().__init__(client, limiter=limiter, max_attempts=max_attempts)
        self._root = tuple(s for s in root.split("/") if s)
        self._part_size = part_size
        self._max_copy_object = max_copy_object
        self._copy_part_size = max(copy_part_size, MIN_PART_SIZE)

    @classmethod
    def from_url(cls, url: str) -> Self:
        """Open `s3://[bucket[/prefix]][?option=value&...]` and check the bucket at once.

        Options override the AWS configuration: `endpoint_url`, `region`,
        `addressing_style` (`path`, `virtual`, `auto`); and kvlake's own
        `part_size_mib` (default 8) and `max_attempts` (default 5).

        Raises:
            ConfigError: a malformed URL or option, missing credentials, an
                unreachable endpoint, or a root bucket that does not exist.
        """
        location = parse_url(url)
        client = make_client(location)
        store = cls(
            client,
            root=location.root,
            limiter=shared_limiter(client.meta.endpoint_url),
            part_size=location.part_size_mib * MIB,
            max_attempts=location.max_attempts,
        )
        if location.root:
            try:
                store._check_bucket(location.root.split("/", 1)[0])
            except KvlakeError as exc:
                store.close()
                raise ConfigError(f"KVLAKE_BLOCKSTORE_URL cannot be served: {exc}") from exc
        return store

    def check_namespace(self, namespace: str) -> str:
        """Accept `s3://bucket/prefix` below the root, in an existing bucket; see `BlockStore`."""
        path = self._namespace_path(namespace)
        segments = tuple(path.split("/"))
        if len(segments) <= len(self._root) or segments[: len(self._root)] != self._root:
            root = f"s3://{'/'.join(self._root)}"
            raise InvalidInputError(
                f"storage namespace {namespace!r} is not below the blockstore root {root!r}"
                f" (KVLAKE_BLOCKSTORE_URL); use a namespace below it, such as {root}/repo1"
                if self._root
                else f"storage namespace {namespace!r} needs a bucket; use s3://bucket/repo1"
            )
        if not BUCKET_NAME.fullmatch(segments[0]):
            raise InvalidInputError(
                f"storage namespace {namespace!r} names the bucket {segments[0]!r}, which is not"
                " a valid S3 bucket name; use 3 to 63 lowercase letters, digits, '.' and '-'"
            )
        self._check_bucket(segments[0])
        return f"s3://{path}"

    # -- primitives -----------------------------------------------------------------------

    def _put(self, namespace: str, key: str, chunks: Iterator[bytes]) -> int:
        bucket, object_key = self._locate(namespace, key)
        what = f"blob {key!r} in {namespace!r}"
        buffer = bytearray()
        for chunk in chunks:
            buffer += chunk
            if len(buffer) >= self._part_size:
                return self._put_multipart(bucket, object_key, buffer, chunks, what)
        body = bytes(buffer)
        self._call(
            f"store {what}",
            lambda: self._client.put_object(Bucket=bucket, Key=object_key, Body=body),
        )
        return len(body)

    def _put_multipart(
        self, bucket: str, object_key: str, buffer: bytearray, chunks: Iterator[bytes], what: str
    ) -> int:
        """Upload `buffer`, then the rest of `chunks`, in parts; abort on any failure."""
        upload = MultipartUpload(self._client, self._call, bucket, object_key, what)
        size = 0
        try:
            for chunk in chunks:  # the caller's stream: its errors reach the caller as they are
                if len(buffer) >= self._part_size_for(upload.parts + 1):
                    size += len(buffer)
                    upload.send(bytes(buffer))
                    buffer = bytearray()
                buffer += chunk
            size += len(buffer)
            upload.send(bytes(buffer))
            upload.complete()
        except BaseException:
            upload.abort()
            raise
        return size

    def _part_size_for(self, number: int) -> int:
        """The size part `number` (from 1) must reach before it is sent."""
        return min(MAX_PART_SIZE, self._part_size << ((number - 1) // PARTS_PER_SIZE_STEP))

    def _open_reader(self, namespace: str, key: str, start: int, end: int | None) -> BinaryIO:
        return self._open_matching(namespace, key, start, end, "")

    def _open_matching(
        self, namespace: str, key: str, start: int, end: int | None, if_match: str
    ) -> BinaryIO:
        bucket, object_key = self._locate(namespace, key)
        what = f"blob {key!r} in {namespace!r}"
        if end == start:  # no HTTP range is empty: check the blob and the start instead
            self._clip_range(namespace, key, start, end, self._size(namespace, key))
            return io.BytesIO(b"")
        # S3 clips the range's end to the object; no Range at all for a whole read,
        # because an empty object satisfies no range. IfMatch rides on the same GET.
        request: GetObjectRequestTypeDef = {"Bucket": bucket, "Key": object_key}
        if if_match:
            request["IfMatch"] = f'"{if_match}"'
        if not (start == 0 and end is None):
            request["Range"] = f"bytes={start}-{'' if end is None else end - 1}"
        try:
            answer = self._call(f"read {what}", lambda: self._client.get_object(**request))
        except BlobReplacedError:
            raise blob_replaced(namespace, key, if_match) from None
        except RangeNotSatisfiableError:
            # The start is at or beyond the end: an empty reader, or the contract's error.
            self._clip_range(namespace, key, start, end, self._size(namespace, key))
            return io.BytesIO(b"")
        except BlobNotFoundError:
            raise self._not_found(namespace, key) from None
        return io.BufferedReader(_ObjectReader(answer["Body"], what))

    def _size(self, namespace: str, key: str) -> int:
        return self._head(namespace, key).size

    def _head(self, namespace: str, key: str) -> BlobHead:
        bucket, object_key = self._locate(namespace, key)
        try:
            answer = self._call(
                f"read the size of blob {key!r} in {namespace!r}",
                lambda: self._client.head_object(Bucket=bucket, Key=object_key),
            )
        except BlobNotFoundError:
            raise self._not_found(namespace, key) from None
        return BlobHead(answer["ContentLength"], answer.get("ETag", "").strip('"'))

    def _copy(self, namespace: str, source: str, destination: str, if_match: str) -> int:
        """Copy inside the store: CopyObject, or UploadPartCopy above 5 GiB. No bytes pass
        through kvlake, and S3 makes the copy visible whole, as a put. `if_match` rides
        on every copy request (CopySourceIfMatch), so a source replaced meanwhile fails
        the copy instead of landing in it."""
        head = self._head(namespace, source)
        if if_match and head.etag != if_match:  # moto ignores CopySourceIfMatch; S3 does not
            raise blob_replaced(namespace, source, if_match)
        bucket, source_key = self._locate(namespace, source)
        _, object_key = self._locate(namespace, destination)
        origin: CopySourceTypeDef = {"Bucket": bucket, "Key": source_key}
        request: CopyObjectRequestTypeDef = {
            "Bucket": bucket,
            "Key": object_key,
            "CopySource": origin,
        }
        if if_match:
            request["CopySourceIfMatch"] = f'"{if_match}"'
        what = f"blob {source!r} to {destination!r} in {namespace!r}"
        try:
            if head.size <= self._max_copy_object:
                self._call(f"copy {what}", lambda: self._client.copy_object(**request))
            else:
                self._copy_parts(bucket, object_key, origin, head.size, what, if_match)
        except BlobNotFoundError:
            raise self._not_found(namespace, source) from None
        except BlobReplacedError:
            raise blob_replaced(namespace, source, if_match) from None
        return head.size

    def _copy_parts(
        self,
        bucket: str,
        object_key: str,
        origin: CopySourceTypeDef,
        size: int,
        what: str,
        if_match: str,
    ) -> None:
        """A multipart upload whose parts are ranges of the source; aborted on any failure."""
        part = max(self._copy_part_size, -(-size // MAX_PARTS))
        upload = MultipartUpload(self._client, self._call, bucket, object_key, what)
        try:
            for start in range(0, size, part):
                upload.copy(origin, start, min(start + part, size), if_match=if_match)
            upload.complete()
        except BaseException:
            upload.abort()
            raise

    def _delete(self, namespace: str, key: str) -> None:
        bucket, object_key = self._locate(namespace, key)
        self._call(
            f"delete blob {key!r} in {namespace!r}",
            lambda: self._client.delete_object(Bucket=bucket, Key=object_key),
        )

    def delete_many(self, namespace: str, keys: Iterable[str]) -> dict[str, Exception]:
        """Delete in DeleteObjects batches of 1,000; retry the keys a batch failed singly."""
        normalised = self.check_namespace(namespace)
        failures: dict[str, Exception] = {}
        batch: dict[str, str] = {}  # object key -> blob key, in order, without duplicates
        for key in keys:
            try:
                batch[self._locate(normalised, check_key(key))[1]] = key
            except InvalidInputError as exc:  # reported per key, as BlockStore documents
                failures[key] = exc
            if len(batch) == DELETE_BATCH:
                self._delete_batch(normalised, batch, failures)
                batch = {}
        if batch:
            self._delete_batch(normalised, batch, failures)
        return failures

    def _delete_batch(
        self, namespace: str, batch: dict[str, str], failures: dict[str, Exception]
    ) -> None:
        bucket, _ = self._locate(namespace)
        round_ = self._limiter.round
        try:
            answer = self._call(
                f"delete {len(batch)} blobs in {namespace!r}",
                lambda: self._client.delete_objects(
                    Bucket=bucket,
                    Delete={"Objects": [{"Key": k} for k in batch], "Quiet": True},
                ),
            )
        except KvlakeError as exc:  # the batch already had its retries: report every key
            failures.update(dict.fromkeys(batch.values(), exc))
            return
        errors = answer.get("Errors", [])
        if any(error.get("Code") in THROTTLE_CODES for error in errors):
            # S3 may throttle single keys of a batch that it answers 200: still congestion.
            self._limiter.throttled_in(round_)
        for error in errors:
            # A key the batch failed (SlowDown, InternalError, ...): retried on its own.
            key = batch.get(error.get("Key", ""))
            if key is None:
                continue
            try:
                self._delete(namespace, key)
            except KvlakeError as exc:  # reported per key
                failures[key] = exc

    def _list_keys(self, namespace: str, prefix: str) -> Iterator[str]:
        return (blob.key for blob in self._list_blobs(namespace, prefix))

    def _list_blobs(self, namespace: str, prefix: str) -> Iterator[BlobInfo]:
        return self._blobs(namespace, prefix, delimiter="")

    def _list_level(self, namespace: str, prefix: str) -> Iterator[BlobInfo]:
        return self._blobs(namespace, prefix, delimiter="/")

    def _blobs(self, namespace: str, prefix: str, *, delimiter: str) -> Iterator[BlobInfo]:
        """Blobs under `prefix`; with the `/` delimiter, not those in its sub-folders."""
        bucket, base = self._locate(namespace)
        token = ""
        while True:
            answer = self._call(
                f"list blobs in {namespace!r}",
                partial(self._list_page, bucket, base + prefix, token, delimiter=delimiter),
            )
            for entry in answer.get("Contents", []):
                yield BlobInfo(
                    entry["Key"][len(base) :],
                    entry["Size"],
                    entry["LastModified"].timestamp(),
                    entry.get("ETag", "").strip('"'),
                )
            token = answer.get("NextContinuationToken", "")
            if not answer.get("IsTruncated") or not token:
                return

    def _presign_read(self, namespace: str, key: str, expires: int) -> str:
        return self._presign("get_object", namespace, key, expires)

    def _presign_write(self, namespace: str, key: str, expires: int) -> str:
        return self._presign("put_object", namespace, key, expires)

    def _list_folders(self, namespace: str, prefix: str) -> Iterator[str]:
        bucket, base = self._locate(namespace)
        token = ""
        while True:
            answer = self._call(
                f"list folders in {namespace!r}",
                partial(self._list_page, bucket, base + prefix, token, delimiter="/"),
            )
            for entry in answer.get("CommonPrefixes", []):
                yield entry["Prefix"][len(base) :]
            token = answer.get("NextContinuationToken", "")
            if not answer.get("IsTruncated") or not token:
                return

    def _list_page(
        self, bucket: str, prefix: str, token: str, *, delimiter: str = ""
    ) -> ListObjectsV2OutputTypeDef:
        if token:
            return self._client.list_objects_v2(
                Bucket=bucket, Prefix=prefix, Delimiter=delimiter, ContinuationToken=token
            )
        return self._client.list_objects_v2(Bucket=bucket, Prefix=prefix, Delimiter=delimiter)

    def close(self) -> None:
        """Close the client's connection pool. Closing twice is fine."""
        self._client.close()
