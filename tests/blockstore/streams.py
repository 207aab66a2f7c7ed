"""Source streams for put tests: a lazily generated pattern that can break on purpose.

They are real `io.RawIOBase` streams, standing in for a client's upload body;
nothing of kvlake is mocked.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

_PERIOD = bytes(range(251))  # a prime length, so chunk edges never line up with it


def pattern(start: int, length: int) -> bytes:
    """The bytes a PatternStream yields at offsets [start, start + length)."""
    offset = start % len(_PERIOD)
    repeats = length // len(_PERIOD) + 2
    return (_PERIOD * repeats)[offset : offset + length]


class SourceError(Exception):
    """What a PatternStream raises when told to fail: the client's upload broke."""


class PatternStream(io.RawIOBase):
    """Yields `size` pattern bytes, generated per read; records each read's requested size."""

    def __init__(self, size: int, *, fail_at: int | None = None) -> None:
        super().__init__()
        self.size = size
        self.fail_at = fail_at
        self.position = 0
        self.requests: list[int] = []

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        self.requests.append(len(view))
        if self.fail_at is not None and self.position >= self.fail_at:
            raise SourceError(f"upload broke at byte {self.position}")
        count = min(len(view), self.size - self.position)
        view[:count] = pattern(self.position, count)
        self.position += count
        return count
