"""A store that reports every driver call (its name, duration and outcome) to an observer.

`MeteredStore` wraps any `Store`, as `FaultyStore` does, and counts calls at the driver
boundary: one per point operation, one per scan page, one per batch chunk. The observer
is a plain callable, so the KV layer knows nothing of Prometheus: the server passes one
that feeds its `/metrics` (kvlake/api/observability.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from kvlake.kv.store import KeyValue, Predicate, Store

_T = TypeVar("_T")

Observer = Callable[[str, float, bool], None]
"""Called after each driver call with (call name, seconds, whether it raised)."""


class MeteredStore(Store):
    """Wraps `inner` and reports each driver call to `observe`. Thread-safe if the observer
    is; `close()` closes the inner store."""

    def __init__(self, inner: Store, observe: Observer) -> None:
        self._inner = inner
        self._observe = observe

    @property
    def inner(self) -> Store:
        return self._inner

    def _timed(self, call: str, action: Callable[[], _T]) -> _T:
        started = time.perf_counter()
        try:
            result = action()
        except BaseException:
            self._observe(call, time.perf_counter() - started, True)
            raise
        self._observe(call, time.perf_counter() - started, False)
        return result

    def _get(self, partition: bytes, key: bytes) -> bytes:
        return self._timed("get", lambda: self._inner._get(partition, key))

    def _set(self, partition: bytes, key: bytes, value: bytes) -> None:
        self._timed("set", lambda: self._inner._set(partition, key, value))

    def _set_if(
        self, partition: bytes, key: bytes, value: bytes, predicate: Predicate | None
    ) -> None:
        self._timed("set_if", lambda: self._inner._set_if(partition, key, value, predicate))

    def _delete(self, partition: bytes, key: bytes) -> None:
        self._timed("delete", lambda: self._inner._delete(partition, key))

    def _delete_if(self, partition: bytes, key: bytes, expected: bytes) -> bool:
        return self._timed("delete_if", lambda: self._inner._delete_if(partition, key, expected))

    def _scan_page(
        self, partition: bytes, start: bytes, inclusive: bool, limit: int
    ) -> list[KeyValue]:
        return self._timed(
            "scan", lambda: self._inner._scan_page(partition, start, inclusive, limit)
        )

    def _partitions(self, after: bytes) -> Iterator[bytes]:
        return self._timed("partitions", lambda: self._inner._partitions(after))

    def _get_across(
        self, partitions: list[bytes], keys: list[bytes]
    ) -> dict[bytes, dict[bytes, bytes]]:
        return self._timed("get_across", lambda: self._inner._get_across(partitions, keys))

    def _get_many(self, partition: bytes, keys: list[bytes]) -> dict[bytes, bytes]:
        return self._timed("get_many", lambda: self._inner._get_many(partition, keys))

    def _set_many(self, partition: bytes, items: list[KeyValue]) -> None:
        self._timed("set_many", lambda: self._inner._set_many(partition, items))

    def _swap_many(self, partition: bytes, swaps: list[tuple[bytes, bytes, bytes]]) -> list[bytes]:
        return self._timed("swap_many", lambda: self._inner._swap_many(partition, swaps))

    def _delete_many(self, partition: bytes, keys: list[bytes]) -> None:
        self._timed("delete_many", lambda: self._inner._delete_many(partition, keys))

    def _drop_partition(self, partition: bytes) -> None:
        self._timed("drop_partition", lambda: self._inner._drop_partition(partition))

    def close(self) -> None:
        self._inner.close()
