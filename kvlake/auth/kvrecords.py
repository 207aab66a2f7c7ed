"""Typed record access over the KV: create-if-absent, load, prefix scans and pair scans.

The helpers every auth record kind shares, so `AuthStore` holds only what is
particular to users, groups, policies and credentials. Missing records raise
`NotFoundError`, taken ids `ConflictError`, each naming the thing. Every write
goes through `_set`, `_set_if`, `_update` or `_delete`, which then tell the `on_change`
listeners (the authenticator's cache), whether or not the write succeeded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from kvlake.auth import keys
from kvlake.auth.credentials import ServerKey
from kvlake.errors import ConflictError, NotFoundError, PreconditionFailedError
from kvlake.kv import Predicate, Store, get_or_none, update

_R = TypeVar("_R")


class KvRecords:
    """Base of the auth store: one KV store, read and written a record at a time."""

    def __init__(
        self, store: Store, server_key: ServerKey, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.kv = store
        self.server_key = server_key
        self._clock = clock
        self._listeners: list[Callable[[], None]] = []

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call `listener` after every write made through this store. Not thread-safe."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in self._listeners:
            listener()

    def _set(self, partition: bytes, key: bytes, value: bytes) -> None:
        try:
            self.kv.set(partition, key, value)
        finally:
            self._changed()  # even a failed write may have landed

    def _set_if(
        self, partition: bytes, key: bytes, value: bytes, predicate: Predicate | None
    ) -> None:
        try:
            self.kv.set_if(partition, key, value, predicate)
        finally:
            self._changed()

    def _update(
        self,
        partition: bytes,
        key: bytes,
        change: Callable[[bytes | None], bytes | None],
        what: str,
    ) -> bytes | None:
        """`kvlake.kv.update` through this store: the listeners hear of it."""
        try:
            return update(self.kv, partition, key, change, what=what)
        finally:
            self._changed()

    def _delete(self, partition: bytes, key: bytes) -> None:
        try:
            self.kv.delete(partition, key)
        finally:
            self._changed()

    def _now(self) -> int:
        return int(self._clock())

    def _create(self, partition: bytes, key: bytes, value: bytes, what: str) -> None:
        try:
            self._set_if(partition, key, value, None)
        except PreconditionFailedError:
            raise ConflictError(f"{what} already exists; choose another id") from None

    def _load(self, partition: bytes, key: bytes, decode: Callable[[bytes], _R], what: str) -> _R:
        loaded = get_or_none(self.kv, partition, key)
        if loaded is None:
            raise NotFoundError(f"{what} not found")
        return decode(loaded[0])

    def _scan(
        self, partition: bytes, decode: Callable[[bytes], _R], *, prefix: str, after: str
    ) -> Iterator[_R]:
        start = max(prefix.encode(), after.encode() + b"\0" if after else b"")
        with self.kv.scan(partition, start) as scan:
            for key, raw in scan:
                if not key.startswith(prefix.encode()):
                    return
                yield decode(raw)

    def _pairs(self, partition: bytes, first: str, *, after: str = "") -> Iterator[str]:
        """The second ids linked to `first`, ascending, after `after`."""
        return self._names(partition, keys.pair_prefix(first), after=after)

    def _names(self, partition: bytes, prefix: bytes, *, after: str = "") -> Iterator[str]:
        """What follows `prefix` in the partition's keys, ascending, after `after`."""
        start = prefix + after.encode() + b"\0" if after else prefix
        with self.kv.scan(partition, start) as scan:
            for key, _ in scan:
                if not key.startswith(prefix):
                    return
                yield key[len(prefix) :].decode()
