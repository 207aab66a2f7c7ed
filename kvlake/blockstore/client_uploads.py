"""The multipart uploads a client sends itself: the part of the blockstore contract for them.

lakeFS's presigned multipart calls (and the S3 gateway's multipart uploads) let
a client send a large object in parts, each PUT to a presigned URL or through
kvlake, then assembled into one blob. `ClientUploads` holds the public methods,
which check their arguments once, as `BlockStore`'s do, and the primitives an
adapter overrides; an adapter that overrides none refuses every call with one
error. `BlockStore` inherits it, so callers see one contract.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import BinaryIO

from kvlake.blockstore.terms import (
    PART_ETAG,
    PartSource,
    UploadedPart,
    check_expiry,
    check_key,
    check_part,
    read_chunks,
)
from kvlake.errors import InvalidInputError, UploadRefusedError


class ClientUploads(ABC):
    """Multipart uploads to a key, sent in parts by a client; see the module docstring."""

    scheme: str
    """The namespace URL scheme the adapter serves, named in its refusals."""

    @abstractmethod
    def check_namespace(self, namespace: str) -> str:
        """Return the namespace normalised if the adapter can serve it (see `BlockStore`)."""

    def start_upload(self, namespace: str, key: str) -> str:
        """Start a multipart upload to `key` whose parts a client sends; return its id.

        The blob appears, whole, only when `complete_upload` assembles the parts.

        Raises:
            InvalidInputError: bad namespace or key, or an adapter without presigned URLs.
        """
        normalised = self.check_namespace(namespace)
        return self._start_upload(normalised, check_key(key))

    def presign_upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, *, expires: int
    ) -> str:
        """A URL anyone holding it may PUT part `part` (1 to 10,000) of the upload to."""
        normalised = self.check_namespace(namespace)
        check_part(part)
        check_expiry(expires)
        return self._presign_upload_part(normalised, check_key(key), upload_id, part, expires)

    def upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, data: BinaryIO | bytes
    ) -> str:
        """Store part `part` (1 to 10,000) of the upload from `data`, read in READ_CHUNK
        pieces (a part is never held whole in memory); return its ETag, the MD5 in hex.
        A part sent again under its number replaces the earlier one, as on S3.

        Raises:
            InvalidInputError: bad arguments, an unknown upload, or no multipart uploads.
            UnavailableError: the backend failed; the part may be missing (send it again).
        """
        normalised = self.check_namespace(namespace)
        check_part(part)
        return self._upload_part(normalised, check_key(key), upload_id, part, read_chunks(data))

    def copy_upload_part(
        self,
        namespace: str,
        key: str,
        upload_id: str,
        part: int,
        *,
        source: tuple[str, str],
        start: int,
        end: int,
    ) -> str:
        """Make bytes [start, end) of blob `source` (namespace, key) part `part` of the upload,
        inside the store; return the part's ETag.

        Raises:
            BlobNotFoundError: no source blob.
            InvalidInputError: bad arguments, a range beyond the source, or no presigned URLs.
        """
        normalised = self.check_namespace(namespace)
        check_part(part)
        source_namespace = self.check_namespace(source[0])
        if not 0 <= start < end:
            raise InvalidInputError(
                f"byte range [{start}, {end}) of the copied part is invalid; pass 0 <= start < end"
            )
        checked = check_key(key)
        copied = PartSource(source_namespace, check_key(source[1]), start, end)
        return self._copy_upload_part(normalised, checked, upload_id, part, copied)

    def complete_upload(
        self, namespace: str, key: str, upload_id: str, parts: Sequence[tuple[int, str]]
    ) -> str:
        """Assemble the parts (number, ETag), ascending, into the blob; return its ETag.

        Raises:
            InvalidInputError: no parts, parts out of order, or parts the store refuses
                (too small, wrong ETag), or an unknown upload.
        """
        normalised = self.check_namespace(namespace)
        numbers = [number for number, _ in parts]
        if not numbers or numbers != sorted(set(numbers)):
            raise UploadRefusedError(
                "InvalidPartOrder",
                "parts must be given once each, ascending by part number; list the parts uploaded",
            )
        for number, etag in parts:
            if not PART_ETAG.fullmatch(etag):  # nothing else names a part, on any store
                raise UploadRefusedError(
                    "InvalidPart",
                    f"part {number}'s ETag {etag!r} is not one a part was given (32 hex"
                    " digits); send the ETag the part's upload answered",
                )
        return self._complete_upload(normalised, check_key(key), upload_id, parts)

    def list_upload_parts(self, namespace: str, key: str, upload_id: str) -> list[UploadedPart]:
        """The parts uploaded so far (the last sent of each number), ascending by number.

        Raises:
            UploadRefusedError: an unknown upload (NoSuchUpload).
        """
        normalised = self.check_namespace(namespace)
        return self._list_upload_parts(normalised, check_key(key), upload_id)

    def abort_upload(self, namespace: str, key: str, upload_id: str) -> None:
        """Drop the upload's parts; an upload already gone is not an error."""
        normalised = self.check_namespace(namespace)
        self._abort_upload(normalised, check_key(key), upload_id)

    def abort_uploads_to(self, namespace: str, key: str) -> int:
        """Abort every multipart upload in progress to `key`; return how many there were.

        For the deletion worker, once a handed-out address expired unlinked: an
        upload to it that was neither completed nor aborted still holds its parts.
        """
        normalised = self.check_namespace(namespace)
        return self._abort_uploads_to(normalised, check_key(key))

    # -- what an adapter implements ---------------------------------------------

    def _start_upload(self, namespace: str, key: str) -> str:
        raise self._no_client_uploads()

    def _presign_upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, expires: int
    ) -> str:
        raise self._no_client_uploads()

    def _upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, chunks: Iterator[bytes]
    ) -> str:
        raise self._no_client_uploads()

    def _copy_upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, source: PartSource
    ) -> str:
        raise self._no_client_uploads()

    def _complete_upload(
        self, namespace: str, key: str, upload_id: str, parts: Sequence[tuple[int, str]]
    ) -> str:
        raise self._no_client_uploads()

    def _list_upload_parts(self, namespace: str, key: str, upload_id: str) -> list[UploadedPart]:
        raise self._no_client_uploads()

    def _abort_upload(self, namespace: str, key: str, upload_id: str) -> None:
        raise self._no_client_uploads()

    def _abort_uploads_to(self, namespace: str, key: str) -> int:
        return 0  # an adapter without multipart uploads has none in progress

    def _no_client_uploads(self) -> InvalidInputError:
        return InvalidInputError(
            f"the {self.scheme} blockstore has no presigned URLs (pre_sign_support is false);"
            " upload the object through the API"
        )
