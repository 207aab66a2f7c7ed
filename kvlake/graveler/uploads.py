"""S3 multipart uploads in progress: one record each, so ListMultipartUploads can list them.

The gateway's upload id carries everything its other calls need, so this record
is a listing: written when an upload starts (after the store's upload exists),
removed when it completes or is aborted. Beside it, each part sent gets a record
of its S3 checksum (for uploads with a checksum algorithm), keyed by its number and
ETag, from which Complete builds the object's composite checksum; removing the
upload removes them. A record whose upload was
abandoned outlives it; readers skip and remove records older than the upload's
address may live (the deletion worker drops the parts then). Records live in
the repository instance's partition, so they die with the instance.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from kvlake.graveler import keys
from kvlake.graveler.records import (
    MultipartUpload,
    Repository,
    decode_multipart_upload,
    encode,
)
from kvlake.graveler.refs.store import partition_of
from kvlake.kv import Store


class MultipartUploads:
    """Records of S3 multipart uploads in progress, by key then start. Thread-safe."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def add(self, repository: Repository, upload: MultipartUpload) -> None:
        """Record an upload in progress (a record already there is replaced)."""
        key = keys.upload_key(upload.key, upload.uid)
        self._store.set(partition_of(repository), key, encode(upload))

    def remove(self, repository: Repository, key: str, uid: str) -> None:
        """Forget an upload (completed, aborted or expired) and its parts' checksums; a
        missing record is no error."""
        partition = partition_of(repository)
        prefix = keys.upload_parts_prefix(uid)
        with self._store.scan(partition, prefix) as scan:
            parts = [k for k, _ in itertools.takewhile(lambda kv: kv[0].startswith(prefix), scan)]
        self._store.delete_many(partition, parts)
        self._store.delete(partition, keys.upload_key(key, uid))

    def add_part_checksum(
        self, repository: Repository, uid: str, part: int, etag: str, checksum: str
    ) -> None:
        """Record the S3 checksum of part `part` sent with ETag `etag`."""
        key = keys.upload_part_key(uid, part, etag)
        self._store.set(partition_of(repository), key, checksum.encode())

    def part_checksums(self, repository: Repository, uid: str) -> dict[tuple[int, str], str]:
        """Every recorded part checksum of the upload, by (part number, ETag)."""
        prefix = keys.upload_parts_prefix(uid)
        found: dict[tuple[int, str], str] = {}
        with self._store.scan(partition_of(repository), prefix) as scan:
            for key, value in scan:
                if not key.startswith(prefix):
                    break
                number, _, etag = key[len(prefix) :].decode().partition("/")
                found[int(number), etag] = value.decode()
        return found

    def scan(
        self, repository: Repository, *, start_key: str = "", after_uid: str = ""
    ) -> Iterator[MultipartUpload]:
        """The uploads from `start_key` on, ascending by key then uid.

        With `after_uid`, `start_key`'s uploads start after that uid (S3's
        key-marker and upload-id-marker); without, they are included.
        """
        start = keys.upload_key(start_key, after_uid)  # `<key>\0`: before all its uploads
        if after_uid:
            start += b"\0"  # the first key after the marker's own
        with self._store.scan(partition_of(repository), start) as scan:
            for key, value in scan:
                if not key.startswith(keys.UPLOAD_PREFIX):
                    return
                yield decode_multipart_upload(value)
