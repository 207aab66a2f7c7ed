"""HTTP Range headers for object reads: one byte range, as lakeFS serves them.

`bytes=a-b`, `bytes=a-` and `bytes=-n` are understood; a start at or past the
end of the object is unsatisfiable (416 with `Content-Range: bytes */size`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kvlake.errors import InvalidInputError

_RANGE = re.compile(r"bytes=(\d{0,19})-(\d{0,19})")


class ByteRange(NamedTuple):
    """Bytes [start, end) of an object of `size` bytes; `satisfiable` false for a 416."""

    start: int
    end: int
    size: int
    satisfiable: bool = True

    def content_range(self) -> str:
        if not self.satisfiable:
            return f"bytes */{self.size}"
        return f"bytes {self.start}-{self.end - 1}/{self.size}"


def parse_range(header: str, size: int) -> ByteRange:
    """The range a `Range` header asks for within an object of `size` bytes."""
    match = _RANGE.fullmatch(header.strip())
    if not match or match.group(1) == match.group(2) == "":
        raise InvalidInputError(
            f"Range header {header!r} is invalid; use one range such as 'bytes=0-99',"
            " 'bytes=100-' or 'bytes=-100'"
        )
    first, last = match.group(1), match.group(2)
    if first == "":
        suffix = int(last)
        if suffix == 0:
            return ByteRange(0, 0, size, satisfiable=False)
        return ByteRange(max(size - suffix, 0), size, size)
    start = int(first)
    if start >= size:
        return ByteRange(0, 0, size, satisfiable=False)
    end = size if last == "" else min(int(last) + 1, size)
    if end <= start:
        raise InvalidInputError(f"Range header {header!r} ends before it starts")
    return ByteRange(start, end, size)
