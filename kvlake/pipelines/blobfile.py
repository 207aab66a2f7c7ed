"""A blob as a seekable file, read in byte ranges: how tasks hand Parquet files to pyarrow.

pyarrow reads a Parquet file's footer first, then only the column chunks a read
needs; over S3 a whole-blob download would fetch every column. `BlobFile` turns
each `read` into one ranged read of the blockstore, so a task reading two
columns of a wide file fetches those two columns' bytes (plus the footer).
Every ranged read carries the entry's recorded ETag (`if_match`), so a linked blob
replaced through its presigned PUT URL fails the read instead of mixing two files'
bytes.
"""

from __future__ import annotations

import io
from typing import Final

from kvlake.blockstore import BlockStore

READ_AHEAD: Final = 1 << 20
"""Bytes buffered per ranged read: small reads (footer, page headers) share one request."""


class BlobFile(io.RawIOBase):
    """A read-only, seekable view of one blob of known size. Not thread-safe (one per task)."""

    def __init__(
        self, blockstore: BlockStore, namespace: str, key: str, size: int, *, if_match: str = ""
    ) -> None:
        super().__init__()
        self._blockstore = blockstore
        self._namespace = namespace
        self._key = key
        self._size = size
        self._if_match = if_match
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        wanted = min(len(buffer), self._size - self._position)
        if wanted <= 0:
            return 0
        end = self._position + wanted
        with self._blockstore.open_reader(
            self._namespace, self._key, start=self._position, end=end, if_match=self._if_match
        ) as reader:
            view = memoryview(buffer)
            filled = 0
            while filled < wanted:
                chunk = reader.read(wanted - filled)
                if not chunk:
                    break
                view[filled : filled + len(chunk)] = chunk
                filled += len(chunk)
        self._position += filled
        return filled


def open_blob_file(
    blockstore: BlockStore, namespace: str, key: str, size: int, *, if_match: str = ""
) -> io.BufferedReader:
    """The blob as a buffered, seekable binary file (close it).

    Reads raise BlobReplacedError when `if_match` (an entry's `blob_etag`) is set and
    the blob's ETag is another (see BlockStore.open_reader).
    """
    blob = BlobFile(blockstore, namespace, key, size, if_match=if_match)
    return io.BufferedReader(blob, buffer_size=READ_AHEAD)
