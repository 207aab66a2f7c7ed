"""CountingStore: wraps any Store and counts its round trips, the rows they read and the
bytes they write.

Costs that must not grow with data an operation does not touch are asserted in
tests as rows read, which, unlike time, are deterministic; benchmarks print the
same figures beside CPU time. A wrapper, never a flag inside a driver.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from kvlake.kv.store import KeyValue, Predicate, Store


class CountingStore(Store):
    """Delegates every call to `inner`, counting calls by name and rows read. Thread-safe
    as far as the counters go: they may miss increments under contention, which only
    benchmarks running many threads would notice."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()
        self.rows_read = 0
        self.bytes_written = 0
        """Key and value bytes of every write (set, set_if, set_many)."""

    def reset(self) -> None:
        """Start counting again from zero."""
        self.calls.clear()
        self.rows_read = 0
        self.bytes_written = 0

    @property
    def round_trips(self) -> int:
        """Driver calls made, of any kind."""
        return sum(self.calls.values())

    def _get(self, partition: bytes, key: bytes) -> bytes:
        self.calls["get"] += 1
        value = self.inner._get(partition, key)
        self.rows_read += 1
        return value

    def _set(self, partition: bytes, key: bytes, value: bytes) -> None:
        self.calls["set"] += 1
        self.bytes_written += len(key) + len(value)
        self.inner._set(partition, key, value)

    def _set_if(
        self, partition: bytes, key: bytes, value: bytes, predicate: Predicate | None
    ) -> None:
        self.calls["set_if"] += 1
        self.bytes_written += len(key) + len(value)
        self.inner._set_if(partition, key, value, predicate)

    def _delete(self, partition: bytes, key: bytes) -> None:
        self.calls["delete"] += 1
        self.inner._delete(partition, key)

    def _delete_if(self, partition: bytes, key: bytes, expected: bytes) -> bool:
        self.calls["delete_if"] += 1
        return self.inner._delete_if(partition, key, expected)

    def _scan_page(
        self, partition: bytes, start: bytes, inclusive: bool, limit: int
    ) -> list[KeyValue]:
        self.calls["scan"] += 1
        page = self.inner._scan_page(partition, start, inclusive, limit)
        self.rows_read += len(page)
        return page

    def _partitions(self, after: bytes) -> Iterator[bytes]:
        self.calls["partitions"] += 1
        for partition in self.inner._partitions(after):
            self.rows_read += 1
            yield partition

    def _get_many(self, partition: bytes, keys: list[bytes]) -> dict[bytes, bytes]:
        self.calls["get_many"] += 1
        found = self.inner._get_many(partition, keys)
        self.rows_read += len(found)
        return found

    def _get_across(
        self, partitions: list[bytes], keys: list[bytes]
    ) -> dict[bytes, dict[bytes, bytes]]:
        self.calls["get_across"] += 1
        found = self.inner._get_across(partitions, keys)
        self.rows_read += sum(len(values) for values in found.values())
        return found

    def _set_many(self, partition: bytes, items: list[KeyValue]) -> None:
        self.calls["set_many"] += 1
        self.bytes_written += sum(len(k) + len(v) for k, v in items)
        self.inner._set_many(partition, items)

    def _swap_many(self, partition: bytes, swaps: list[tuple[bytes, bytes, bytes]]) -> list[bytes]:
        self.calls["swap_many"] += 1
        self.bytes_written += sum(len(k) + len(v) for k, _, v in swaps)
        return self.inner._swap_many(partition, swaps)

    def _delete_many(self, partition: bytes, keys: list[bytes]) -> None:
        self.calls["delete_many"] += 1
        self.inner._delete_many(partition, keys)

    def _drop_partition(self, partition: bytes) -> None:
        self.calls["drop_partition"] += 1
        self.inner._drop_partition(partition)

    def close(self) -> None:
        self.inner.close()
