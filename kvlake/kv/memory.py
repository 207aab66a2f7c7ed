"""An in-process store for tests and one-off tools: nothing survives the process.

Each partition is a dict for point operations plus a lazily rebuilt sorted key
list for scans; one lock makes every operation atomic, which is all `set_if`
needs to be a true compare-and-swap.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterator
from typing import Self

from kvlake.errors import ClosedError, KeyNotFoundError
from kvlake.kv.store import KeyValue, Predicate, Store, precondition_failed


class _Partition:
    __slots__ = ("values", "sorted_keys")

    def __init__(self) -> None:
        self.values: dict[bytes, bytes] = {}
        self.sorted_keys: list[bytes] | None = []

    def keys_in_order(self) -> list[bytes]:
        if self.sorted_keys is None:
            self.sorted_keys = sorted(self.values)
        return self.sorted_keys


class MemoryStore(Store):
    """A dict of partitions behind one lock. URL: `mem://` (each open is a new, empty store)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._partitions_by_name: dict[bytes, _Partition] = {}
        self._closed = False

    @classmethod
    def from_url(cls, url: str) -> Self:
        return cls()

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("this memory store was closed; open a new one")

    def _partition(self, name: bytes, *, create: bool) -> _Partition | None:
        self._check_open()
        part = self._partitions_by_name.get(name)
        if part is None and create:
            part = self._partitions_by_name[name] = _Partition()
        return part

    def _get(self, partition: bytes, key: bytes) -> bytes:
        with self._lock:
            part = self._partition(partition, create=False)
            if part is None or key not in part.values:
                raise KeyNotFoundError(f"KV key {key!r} not found in partition {partition!r}")
            return part.values[key]

    def _get_many(self, partition: bytes, keys: list[bytes]) -> dict[bytes, bytes]:
        with self._lock:
            part = self._partition(partition, create=False)
            if part is None:
                return {}
            return {key: part.values[key] for key in keys if key in part.values}

    def _put(self, part: _Partition, key: bytes, value: bytes) -> None:
        if key not in part.values:
            part.sorted_keys = None
        part.values[key] = value

    def _set(self, partition: bytes, key: bytes, value: bytes) -> None:
        with self._lock:
            part = self._partition(partition, create=True)
            assert part is not None
            self._put(part, key, value)

    def _set_if(
        self, partition: bytes, key: bytes, value: bytes, predicate: Predicate | None
    ) -> None:
        with self._lock:
            # Create the partition only once the write is certain: a failed set_if leaves none.
            part = self._partition(partition, create=False)
            current = None if part is None else part.values.get(key)
            if predicate is None:
                matches = current is None
            elif predicate.expected is None:
                matches = current is not None
            else:
                matches = current == predicate.expected
            if not matches:
                raise precondition_failed(partition, key, predicate)
            if part is None:
                part = self._partition(partition, create=True)
                assert part is not None
            self._put(part, key, value)

    def _delete(self, partition: bytes, key: bytes) -> None:
        with self._lock:
            part = self._partition(partition, create=False)
            if part is not None and part.values.pop(key, None) is not None:
                part.sorted_keys = None
                if not part.values:
                    del self._partitions_by_name[partition]

    def _delete_if(self, partition: bytes, key: bytes, expected: bytes) -> bool:
        with self._lock:
            part = self._partition(partition, create=False)
            if part is None or part.values.get(key) != expected:
                return False
            del part.values[key]
            part.sorted_keys = None
            if not part.values:
                del self._partitions_by_name[partition]
            return True

    def _scan_page(
        self, partition: bytes, start: bytes, inclusive: bool, limit: int
    ) -> list[KeyValue]:
        with self._lock:
            part = self._partition(partition, create=False)
            if part is None:
                return []
            keys = part.keys_in_order()
            find = bisect.bisect_left if inclusive else bisect.bisect_right
            first = find(keys, start)
            return [(key, part.values[key]) for key in keys[first : first + limit]]

    def _partitions(self, after: bytes) -> Iterator[bytes]:
        with self._lock:
            self._check_open()
            names = sorted(name for name in self._partitions_by_name if name > after)
        return iter(names)

    def _drop_partition(self, partition: bytes) -> None:
        with self._lock:
            self._partition(partition, create=False)
            self._partitions_by_name.pop(partition, None)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._partitions_by_name.clear()
