"""A byte range of an open local blob, read as a raw stream with LocalBlockStore's errors."""

from __future__ import annotations

import io
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer


class RangeReader(io.RawIOBase):
    """Reads an open file from its position for `remaining` bytes, then reports end of file."""

    def __init__(
        self,
        file: io.FileIO,
        remaining: int,
        errors: Callable[[str], AbstractContextManager[None]],
        what: str,
    ) -> None:
        super().__init__()
        self._file = file
        self._remaining = remaining
        self._errors = errors
        self._what = what

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        if self._remaining <= 0:
            return 0
        view = memoryview(buffer).cast("B")[: self._remaining]
        with self._errors(f"read {self._what}"):
            count = self._file.readinto(view) or 0
        self._remaining -= count
        return count

    def readall(self) -> bytes:
        """The rest in one system call, not the default loop of small reads."""
        if self._remaining <= 0:
            return b""
        with self._errors(f"read {self._what}"):
            data = self._file.read(self._remaining) or b""
        self._remaining -= len(data)
        return data

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()
