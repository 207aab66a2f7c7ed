"""Shared helpers for committed-data tests: small chunking, entries."""

from __future__ import annotations

from kvlake.graveler.committed import Chunking
from kvlake.graveler.records import Value

SMALL = Chunking(target_entries=8, max_entries=32, max_bytes=4096)
"""Ranges of ~8 entries, so a few hundred entries span dozens of ranges and every cap bites."""


def value(key: bytes, version: int = 0) -> Value:
    """A deterministic value for `key`, different for each version."""
    return Value(identity=b"id-%d-" % version + key, data=b"data-%d-" % version + key * 2)


def entries(count: int, version: int = 0) -> list[tuple[bytes, Value]]:
    """`count` sorted entries with keys like the catalog's object paths."""
    return [(key, value(key, version)) for key in keys(count)]


def keys(count: int) -> list[bytes]:
    """`count` sorted keys, spaced so that there are gaps to insert into."""
    return [b"path/to/file-%07d" % (i * 10) for i in range(count)]


UNSORTED_CHANGES: list[list[tuple[bytes, Value | None]]] = [
    [(b"b", None), (b"a", None)],
    [(b"b", value(b"b")), (b"a", value(b"a"))],
    [(b"a", None), (b"a", value(b"a"))],
    [(b"", None)],
]
"""Changes a commit must refuse (keys out of order, repeated or empty), for `apply` and
`apply_batches` alike."""
UNSORTED_IDS = ["descending deletes", "descending inserts", "duplicate", "empty key"]
