"""The terms of the blockstore contract that its adapters share: keys, limits, values.

`BlockStore` checks its arguments against these once, in its public methods,
and adapters use the same names where they need them (a key's rule, S3's part
limits, the multipart ETag every adapter answers alike), so that every adapter
keeps one set of rules and says the same thing when one is broken.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO, Final, NamedTuple

from kvlake.errors import BlobReplacedError, InvalidInputError

READ_CHUNK: Final = 1 << 20
"""Streams hand data over in pieces of this size."""


def check_key(key: str) -> str:
    """Return `key` if it is a clean relative path: the same blob on every adapter.

    Segments may not be empty (no leading, trailing or doubled `/`), `.` or `..`,
    and NUL is refused, so no key can climb out of its namespace and no two
    spellings name one file on a filesystem-backed adapter.

    Raises:
        InvalidInputError: the key is not such a path.
    """
    if not isinstance(key, str) or not key or "\0" in key:
        raise InvalidInputError(f"blob key {key!r} is invalid; use a non-empty str without NUL")
    if any(segment in ("", ".", "..") for segment in key.split("/")):
        raise InvalidInputError(
            f"blob key {key!r} is invalid; use a relative path like 'data/ab/cd' without"
            " empty, '.' or '..' segments"
        )
    return key


def read_chunks(data: BinaryIO | bytes) -> Iterator[bytes]:
    """Yield `data` in pieces of at most READ_CHUNK; errors of the caller's stream propagate."""
    stream: BinaryIO = (
        io.BytesIO(data) if isinstance(data, bytes | bytearray | memoryview) else data
    )
    while True:
        chunk = stream.read(READ_CHUNK)
        if not isinstance(chunk, bytes | bytearray):
            raise InvalidInputError(
                f"blob data stream returned {type(chunk).__name__} from read();"
                " open it in binary mode"
            )
        if not chunk:
            return
        yield bytes(chunk)


MAX_NAMESPACE_BYTES: Final = 512
"""A namespace path's length: what is left of a 1,024-byte S3 key or a 4,096-byte local
path leaves room for the keys kvlake writes under it."""
MAX_NAMESPACE_SEGMENT_BYTES: Final = 255
"""A folder name's length on common filesystems."""
MAX_PARALLEL_LISTINGS: Final = 64
"""Prefixes listed at once, each in a thread: beyond this, S3's per-prefix request rate,
not the round trips, is the limit."""
MAX_PRESIGN_SECONDS: Final = 7 * 24 * 3600
"""S3's longest lifetime for a URL signed with SigV4."""


MAX_PARTS: Final = 10_000
"""S3's most parts in one multipart upload."""
PART_ETAG: Final = re.compile(r'"?[0-9a-fA-F]{32}"?')
"""A part's ETag as every store answers it: its MD5 in hex, quoted or not."""
MIN_PART_BYTES: Final = 5 << 20
"""S3's smallest part but the last: a completion with a smaller one is refused."""


@dataclass(frozen=True)
class UploadedPart:
    """One part of a multipart upload in progress, as ListParts shows it."""

    number: int
    etag: str
    size: int
    mtime: float


def multipart_etag(etags: Sequence[str]) -> str:
    """S3's ETag of a completed multipart upload: the MD5 of the parts' binary MD5s, then
    "-" and the part count (clients compare it, so every adapter answers the same)."""
    digest = hashlib.md5(usedforsecurity=False)
    for etag in etags:
        digest.update(bytes.fromhex(etag.strip('"')))
    return f"{digest.hexdigest()}-{len(etags)}"


def check_part(part: int) -> None:
    """Refuse a part number S3 would refuse, so every adapter refuses it alike."""
    if not 1 <= part <= MAX_PARTS:
        raise InvalidInputError(f"part number {part} is invalid; use 1 to {MAX_PARTS}")


def check_expiry(expires: int) -> None:
    """Refuse a presigned URL's lifetime beyond what SigV4 signs (or none at all)."""
    if not 1 <= expires <= MAX_PRESIGN_SECONDS:
        raise InvalidInputError(
            f"presigned URL lifetime {expires} s is invalid; use 1 to {MAX_PRESIGN_SECONDS} s"
        )


def blob_replaced(namespace: str, key: str, etag: str) -> BlobReplacedError:
    """The error for a linked blob whose bytes changed under its recorded ETag."""
    return BlobReplacedError(
        f"blob {key!r} in {namespace!r} was replaced after it was linked (its ETag is no"
        f" longer {etag!r}), likely through a presigned URL still in force; its bytes are"
        " not the object's: upload the object again"
    )


class BlobHead(NamedTuple):
    """A blob's size and its ETag as the store reports it ("" where the store has none)."""

    size: int
    etag: str


class PartSource(NamedTuple):
    """Bytes [start, end) of the blob `key` in `namespace`: what `copy_upload_part` makes a
    part of, checked once by the contract and handed to the adapter whole."""

    namespace: str
    key: str
    start: int
    end: int
