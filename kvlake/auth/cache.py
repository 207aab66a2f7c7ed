"""A short-lived, per-process memo of auth facts, with a documented staleness bound.

Authentication and authorization read five KV records a request (credential,
user, the user's grants, each group's policies, each policy); lakeFS caches
the same lookups. An entry here lives `ttl` seconds (at most `MAX_TTL`), so a
revoked key, a deleted user or a detached, changed or deleted policy takes
effect on every server process within `ttl` seconds, and at once on the process
that made the change (its auth store clears the cache on every write, and a
lookup that started before a clear is not kept). Only
successful lookups are kept: a wrong secret always reaches the KV, where
failures are counted. A `ttl` of 0 disables the cache.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Final, Generic, TypeVar

MAX_TTL: Final = 1.0
"""The longest staleness the docs promise: `AuthSettings.cache_ttl` is bounded by it."""

CAPACITY: Final = 10_000
"""Entries kept before the cache is emptied (bounded memory under many callers)."""

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


class TtlCache(Generic[_K, _V]):
    """Values that expire `ttl` seconds after they were put. Thread-safe."""

    def __init__(self, ttl: float, *, clock: Callable[[], float], capacity: int = CAPACITY) -> None:
        if not 0 <= ttl <= MAX_TTL:
            raise ValueError(f"cache ttl {ttl} is out of range; use 0 to {MAX_TTL} seconds")
        self._ttl = ttl
        self._clock = clock
        self._capacity = capacity
        self._items: dict[_K, tuple[float, _V]] = {}
        self._lock = threading.Lock()
        self._generation = 0

    @property
    def generation(self) -> int:
        """Read it before a lookup and pass it to `put`: a clear in between voids the put."""
        return self._generation

    def get(self, key: _K) -> _V | None:
        """The value if put less than `ttl` seconds ago, else None."""
        found = self._items.get(key)  # a dict read is atomic: no lock on the hot path
        if found is None:
            return None
        deadline, value = found
        if deadline <= self._clock():
            with self._lock:
                if self._items.get(key) is found:
                    del self._items[key]
            return None
        return value

    def put(self, key: _K, value: _V, generation: int) -> None:
        """Keep `value` unless the cache was cleared since `generation` was read."""
        if self._ttl <= 0:
            return
        with self._lock:
            if generation != self._generation:
                return  # the lookup may have read records a write has since changed
            if len(self._items) >= self._capacity:
                self._items.clear()  # rare: many distinct callers within one ttl
            self._items[key] = (self._clock() + self._ttl, value)

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._items.clear()
