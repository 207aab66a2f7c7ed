"""Staging: uncommitted writes, one KV partition per staging token.

A write puts the encoded value under the object's key in the branch's current
token; a delete puts a tombstone (an empty value). Sealed tokens keep their
writes visible while a commit turns them into ranges. Readers consult the
current token, then the sealed ones newest first, then the commit: the first
hit wins. `overlay` is that rule as a streaming k-way merge. A token may also
hold hidden-range records (kvlake/graveler/hiding.py): tombstones at every key
of a committed range, which the token's own entries override.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

from kvlake.errors import KeyNotFoundError
from kvlake.graveler import keys
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.hiding import FIRST_PATH, RECORD_PREFIX, HiddenKeys
from kvlake.graveler.hiding import TOMBSTONE as TOMBSTONE
from kvlake.graveler.records import Value, decode_value, encode
from kvlake.kv import Store

_T = TypeVar("_T")


def overlay(sources: Sequence[Iterable[tuple[bytes, _T]]]) -> Iterator[tuple[bytes, _T]]:
    """Merge sorted sources by key; on equal keys the earliest source wins."""
    if len(sources) == 1:
        return iter(sources[0])  # the common case: no merge layer per entry
    return _merge(sources)


def _merge(sources: Sequence[Iterable[tuple[bytes, _T]]]) -> Iterator[tuple[bytes, _T]]:
    tagged = [_ranked(source, rank) for rank, source in enumerate(sources)]
    previous = None
    for key, _, item in heapq.merge(*tagged):
        if key != previous:
            previous = key
            yield key, item


def _ranked(source: Iterable[tuple[bytes, _T]], rank: int) -> Iterator[tuple[bytes, int, _T]]:
    for key, item in source:
        yield key, rank, item


class Staging:
    """Reads and writes staging partitions. Thread-safe; values are graveler Values."""

    def __init__(self, store: Store, committed: CommittedManager) -> None:
        self._store = store
        self._committed = committed

    def hidden(self, namespace: str, tokens: Sequence[str]) -> HiddenKeys | None:
        """What the hidden-range records of `tokens` (a branch's `hiding`) hide; None
        when there are none to read."""
        if not tokens:
            return None
        return HiddenKeys(self._store, self._committed, namespace, tokens)

    def set(self, token: str, key: bytes, value: Value) -> None:
        self._store.set(keys.staging_partition(token), key, encode(value))

    def set_tombstone(self, token: str, key: bytes) -> None:
        self._store.set(keys.staging_partition(token), key, TOMBSTONE)

    def set_many(self, token: str, entries: Iterable[tuple[bytes, Value | None]]) -> None:
        """Write many entries (None: a tombstone) in batches, not atomically: for a token
        no branch references yet, which becomes visible later in one swap."""
        self._store.set_many(
            keys.staging_partition(token),
            ((key, TOMBSTONE if value is None else encode(value)) for key, value in entries),
        )

    def get(
        self, tokens: Sequence[str], key: bytes, hidden: HiddenKeys | None = None
    ) -> Value | None:
        """The newest staged state of `key`: a Value, or None for a tombstone (staged, or
        of a hidden range in `hidden`).

        Raises:
            KeyNotFoundError: no token stages anything for the key.
        """
        for token in tokens:
            try:
                raw, _ = self._store.get(keys.staging_partition(token), key)
            except KeyNotFoundError:
                if hidden is not None and hidden.hides(token, key):
                    return None
                continue
            return decode_value(raw) if raw else None
        raise KeyNotFoundError(f"key {key!r} is not staged")

    def scan(
        self, tokens: Sequence[str], start: bytes = b"", hidden: HiddenKeys | None = None
    ) -> Iterator[tuple[bytes, Value | None]]:
        """Staged entries of all tokens merged (first token wins), tombstones as None,
        hidden ranges' keys (of the tokens in `hidden`) among the tombstones."""
        return overlay([self._scan_one(token, start, hidden) for token in tokens])

    def _scan_one(
        self, token: str, start: bytes, hidden: HiddenKeys | None
    ) -> Iterator[tuple[bytes, Value | None]]:
        entries = self._entries(token, start)
        if hidden is None or token not in hidden.tokens:
            return entries
        tombstones = ((key, None) for key in hidden.keys(token, start))
        return overlay([entries, tombstones])  # the token's own entries win

    def _entries(self, token: str, start: bytes) -> Iterator[tuple[bytes, Value | None]]:
        with self._store.scan(keys.staging_partition(token), max(start, FIRST_PATH)) as scan:
            for page in scan.batches():
                for key, raw in page:
                    yield key, (decode_value(raw) if raw else None)

    def is_empty(self, token: str) -> bool:
        """No entry and no hidden-range record (a hiding guard alone changes nothing)."""
        with self._store.scan(keys.staging_partition(token), RECORD_PREFIX, batch_size=1) as scan:
            return next(scan, None) is None

    def drop(self, token: str) -> None:
        self._store.drop_partition(keys.staging_partition(token))
