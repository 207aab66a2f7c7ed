"""A binary stream over an iterator of byte strings, so a blob can be written as it is made.

`BlockStore.put` reads a file-like object chunk by chunk; writers that produce
their content as they go (refs dumps, symlink files) hand it this instead of
joining the whole content in memory first.
"""

from __future__ import annotations

import io
from collections.abc import Iterator


class ChunkReader(io.RawIOBase):
    """A read-only binary stream over an iterator of byte strings (no whole-blob buffer)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        filled = 0
        while filled < len(buffer):
            if not self._pending:
                chunk = next(self._chunks, None)
                if chunk is None:
                    break
                self._pending = chunk
            n = min(len(buffer) - filled, len(self._pending))
            buffer[filled : filled + n] = self._pending[:n]
            self._pending = self._pending[n:]
            filled += n
        return filled
