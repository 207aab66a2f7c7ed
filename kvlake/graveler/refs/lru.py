"""A small thread-safe LRU for records keyed by (instance uid, commit id)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

_V = TypeVar("_V")


class Lru(Generic[_V]):
    """A thread-safe LRU by (instance uid, commit id)."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._items: OrderedDict[tuple[str, str], _V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> _V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: tuple[str, str], value: _V) -> None:
        if self._capacity <= 0:
            return
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)
