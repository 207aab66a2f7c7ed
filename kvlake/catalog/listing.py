"""Delimited, paginated listings over a ref's sorted entries.

A listing with a delimiter folds every path below `prefix` that contains the
delimiter into one common prefix, then jumps past all of that prefix's keys
instead of reading them, so a folder with a million objects costs one row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kvlake.catalog.records import CommonPrefix, ListingPage, ObjectStat, from_value
from kvlake.graveler import Value

MAX_AMOUNT = 1000
"""The most rows one listing page returns, as in lakeFS."""


def prefix_end(prefix: bytes) -> bytes:
    """The smallest key greater than every key that starts with `prefix` (b"" if none)."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return b""
    return trimmed[:-1] + bytes([trimmed[-1] + 1])


def _is_common_prefix(path: bytes, prefix: bytes, delimiter: bytes) -> bool:
    """Whether a listing would have folded `path` into a common prefix row.

    Only a delimiter found after the listing prefix folds, so a path equal to the
    prefix (`a/` when listing `a/`) is an object even though it ends with one.
    """
    if not delimiter or not path.startswith(prefix):
        return False
    return path.find(delimiter, len(prefix)) == len(path) - len(delimiter)


def list_page(
    entries_from: Callable[[bytes], Iterator[tuple[bytes, Value]]],
    *,
    prefix: str,
    delimiter: str,
    after: str,
    amount: int,
) -> ListingPage:
    """Build one page from `entries_from(start)`, an ordered entry iterator from a key."""
    prefix_bytes, delimiter_bytes = prefix.encode(), delimiter.encode()
    start = prefix_bytes
    if after:
        after_bytes = after.encode()
        if _is_common_prefix(after_bytes, prefix_bytes, delimiter_bytes):
            start = max(start, prefix_end(after_bytes))  # skip everything folded into it
        else:
            start = max(start, after_bytes + b"\0")
    results: list[ObjectStat | CommonPrefix] = []
    while len(results) <= amount:
        jumped = False
        for key, value in entries_from(start):
            if not key.startswith(prefix_bytes):
                break
            cut = key.find(delimiter_bytes, len(prefix_bytes)) if delimiter_bytes else -1
            if cut >= 0:
                common = key[: cut + len(delimiter_bytes)]
                results.append(CommonPrefix(path=common.decode()))
                start = prefix_end(common)
                jumped = bool(start)
                break
            results.append(from_value(key.decode(), value))
            if len(results) > amount:
                break
        if not jumped:
            break
    has_more = len(results) > amount
    del results[amount:]
    return ListingPage(
        results=results,
        has_more=has_more,
        next_offset=results[-1].path if has_more and results else "",
    )
