"""The records and names of committed data: range summaries, chunking rules, file ids.

Range and metarange files are content-addressed: a file's id is the SHA-256 of
its bytes and it lives at `_lakefs/<id>` in the storage namespace, so a file,
once written, never changes and can be shared by any number of commits. This
module is the only place that turns an id into a blob key, and it refuses
anything that is not an id, so no caller can address a blob outside `_lakefs/`.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final, Literal

import msgspec

from kvlake.errors import InvalidInputError, MetarangeNotFoundError, RangeNotFoundError

FILE_PREFIX: Final = "_lakefs/"
"""Range and metarange files live under this prefix of the storage namespace."""

_FILE_ID = re.compile(r"[0-9a-f]{64}")


class RangeInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One row of a metarange: where a range lives and what it covers.

    `min_key` and `max_key` are the range's first and last keys (inclusive);
    `size` is the byte size of the range file.
    """

    id: str
    min_key: bytes
    max_key: bytes
    count: int
    size: int


class Piece(msgspec.Struct, frozen=True, kw_only=True):
    """A sorted interval of a metarange, written apart from its neighbours (a Spark task's).

    Its ranges start after its first key whose hash surely ends a range and end
    at its last range boundary; the entries before (`head`) and after (`tail`)
    belong to ranges its neighbours complete, so pieces joined in key order
    (`CommittedManager.join_pieces`) give the very ranges and metarange one
    writer of all the entries would. Entries are `(key, identity, data)`.
    """

    head: list[tuple[bytes, bytes, bytes]]
    ranges: list[RangeInfo]
    tail: list[tuple[bytes, bytes, bytes]]

    @property
    def first_key(self) -> bytes:
        """The piece's lowest key, to order pieces by (b"" for an empty piece)."""
        if self.head:
            return self.head[0][0]
        return self.ranges[0].min_key if self.ranges else b""

    @property
    def count(self) -> int:
        return len(self.head) + sum(info.count for info in self.ranges) + len(self.tail)


class Chunking(msgspec.Struct, frozen=True, kw_only=True):
    """Where ranges end: after a key whose hash hits the modulus, or at a size cap.

    A range closes after a key `k` with `crc32(k) % target_entries == 0`, so
    boundaries depend on keys alone and an edit moves only the boundaries near
    it; later ranges come out identical and are reused by id. The caps bound a
    range's memory when keys hash unluckily or values are large. Changing these
    settings never breaks reading; it only makes new ranges share less with old.
    """

    target_entries: int = 4096
    """The hash modulus, the mean entries per range; a power of two."""
    max_entries: int = 16384
    """A range closes after this many entries whatever the hash says."""
    max_bytes: int = 4 << 20
    """A range closes once its keys, identities and data reach this many bytes."""

    def __post_init__(self) -> None:
        target = self.target_entries
        if target < 1 or target & (target - 1):
            raise InvalidInputError(
                f"Chunking target_entries is {target}; use a power of two, e.g. 4096"
            )
        if self.max_entries < 1 or self.max_bytes < 1:
            raise InvalidInputError(
                f"Chunking caps are {self.max_entries} entries, {self.max_bytes} bytes; "
                f"use positive numbers"
            )


DEFAULT_CHUNKING: Final = Chunking()
"""Tuned for commits of about a million entries: ~250 ranges of ~600 KB each."""


def file_id(data: bytes) -> str:
    """The content address of a range or metarange file."""
    return hashlib.sha256(data).hexdigest()


def file_key(kind: Literal["range", "metarange"], file_id: str) -> str:
    """Return the blob key of a range or metarange id.

    A malformed id names no file, so it is "not found", never a path to follow.

    Raises:
        RangeNotFoundError, MetarangeNotFoundError: `file_id` cannot be an id.
    """
    if not isinstance(file_id, str) or not _FILE_ID.fullmatch(file_id):
        error = RangeNotFoundError if kind == "range" else MetarangeNotFoundError
        raise error(
            f"{kind} id {file_id!r} is not an id; ids are 64 lowercase hex characters "
            f"as returned by write_metarange or apply"
        )
    return FILE_PREFIX + file_id
