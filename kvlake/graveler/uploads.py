"""S3 multipart uploads in progress: one record each, so ListMultipartUploads can list them.

The gateway's upload id carries everything its other calls need, so this record
is only a listing: written when an upload starts (after the store's upload
exists), removed when it completes or is aborted. A record whose upload was
abandoned outlives it; readers skip and remove records older than the upload's
address may live (the deletion worker drops the parts then). Records live in
the repository instance's partition, so they die with the instance.
"""

from __future__ import annotations

from collections.abc import Iterator

from kvlake.graveler import keys
from kvlake.graveler.records import (
    MultipartUpload,
    Repository,
    decode_multipart_upload,
    encode,
)
from kvlake.graveler.refs import partition_of
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
        """Forget an upload (completed, aborted or expired); a missing record is no error."""
        self._store.delete(partition_of(repository), keys.upload_key(key, uid))

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
