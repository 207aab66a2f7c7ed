"""The KV contract every metadata record in kvlake goes through.

A store holds ordered byte keys in named partitions and offers six
operations: get, set, compare-and-swap (`set_if`), delete, compare-and-delete
(`delete_if`) and an ordered scan. There are no transactions: `set_if` and
`delete_if` are the only guards, so every multi-key protocol above this layer is
built from single-key compare-and-swap steps.

Public methods validate their arguments once, here, then call a driver's
private primitive; a driver therefore only translates. Batch helpers have a
correct default built on the primitives and are overridden only to be faster.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from typing import Final, Self, TypeVar, final

from kvlake.closing import Closing
from kvlake.errors import (
    ClosedError,
    KeyNotFoundError,
    MissingArgumentError,
    PreconditionFailedError,
)

_T = TypeVar("_T")

KeyValue = tuple[bytes, bytes]
"""One entry of a scan: `(key, value)`."""

DEFAULT_BATCH_SIZE: Final = 1000
"""The first page a scan reads; later pages grow, see `Scan`."""

MAX_BATCH_SIZE: Final = 16384
"""Pages stop growing here, bounding the memory one scan holds."""

WRITE_CHUNK: Final = 10000
"""Batch writes reach a driver in chunks of at most this many items."""

READ_CHUNK: Final = 1000
"""Keys per `get_many` driver call: one SQL statement, well under SQLite's parameter limit."""


@final
class Predicate:
    """What `get` saw: pass it to `set_if` to write only if nothing changed since.

    Opaque to callers. `MUST_EXIST` is the one predicate not made by `get`.
    """

    __slots__ = ("expected",)

    def __init__(self, expected: bytes | None) -> None:
        # None means "any value": that is how MUST_EXIST is spelled.
        self.expected = expected

    def __repr__(self) -> str:
        return "MUST_EXIST" if self.expected is None else "Predicate(<value>)"


MUST_EXIST: Final = Predicate(None)
"""For `set_if`: write only if the key exists, whatever its value."""


@final
class Scan(Closing, Iterator[KeyValue]):
    """An ordered, paged iterator over one partition; not a snapshot.

    Pages start at the caller's batch size and double up to `MAX_BATCH_SIZE`, so
    a scan that reads a few keys costs one small query and a long scan costs few
    round trips. A key written or deleted during the scan may or may not be seen;
    no key is seen twice and order is always ascending. Close it (or use it as a
    context manager) to release the driver early; using it after that raises
    `ClosedError`.
    """

    __slots__ = (
        "_read_page",
        "_next_start",
        "_inclusive",
        "_batch_size",
        "_page",
        "_pos",
        "_done",
        "_closed",
    )

    def __init__(
        self, read_page: Callable[[bytes, bool, int], list[KeyValue]], start: bytes, batch_size: int
    ) -> None:
        self._read_page = read_page
        self._next_start = start
        self._inclusive = True
        self._batch_size = batch_size
        self._page: list[KeyValue] = []
        self._pos = 0
        self._done = False
        self._closed = False

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> KeyValue:
        if self._pos < len(self._page):
            item = self._page[self._pos]
            self._pos += 1
            return item
        self._page = self._next_page()
        self._pos = 1
        return self._page[0]

    def batches(self) -> Iterator[list[KeyValue]]:
        """Yield the rest of the scan a page at a time: the fast path for bulk readers."""
        if self._pos < len(self._page):
            rest, self._page = self._page[self._pos :], []
            self._pos = 0
            yield rest
        while True:
            try:
                yield self._next_page()
            except StopIteration:
                return

    def _next_page(self) -> list[KeyValue]:
        if self._closed:
            raise ClosedError("this scan was closed; start a new scan to read more")
        if self._done:
            raise StopIteration
        page = self._read_page(self._next_start, self._inclusive, self._batch_size)
        if len(page) < self._batch_size:
            self._done = True
        if not page:
            raise StopIteration
        self._next_start, self._inclusive = page[-1][0], False
        self._batch_size = min(self._batch_size * 2, max(MAX_BATCH_SIZE, self._batch_size))
        return page

    def close(self) -> None:
        """Stop the scan; further reads raise `ClosedError`. Closing twice is fine."""
        self._closed = True
        self._page = []
        self._pos = 0


def precondition_failed(
    partition: bytes, key: bytes, predicate: Predicate | None
) -> PreconditionFailedError:
    """The error every driver raises when `set_if` finds the key not as expected."""
    if predicate is None:
        wanted = "to be absent"
    elif predicate is MUST_EXIST:
        wanted = "to exist"
    else:
        wanted = "to hold the value read earlier"
    return PreconditionFailedError(
        f"KV key {key!r} in partition {partition!r} was expected {wanted}; re-read it and retry"
    )


def _chunks(items: Iterable[_T], size: int) -> Iterator[list[_T]]:
    if isinstance(items, list):  # sliced, not rebuilt an item at a time
        for start in range(0, len(items), size):
            yield items[start : start + size]
        return
    chunk: list[_T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _require(name: str, value: bytes | None) -> None:
    if not value:
        what = "None" if value is None else "empty"
        raise MissingArgumentError(f"KV {name} is {what}; pass non-empty bytes")


class Store(Closing, ABC):
    """Ordered byte keys in named partitions. No transactions: `set_if` and `delete_if`
    are the only guards.

    Partitions and keys are non-empty bytes; values are bytes and may be empty.
    Every method is safe to call from many threads at once. Drivers implement the
    underscored primitives and may override the batch helpers to be faster.
    """

    # -- the contract ---------------------------------------------------------

    def get(self, partition: bytes, key: bytes) -> tuple[bytes, Predicate]:
        """Return the value under `key` and a predicate for a later `set_if`.

        Raises:
            KeyNotFoundError: nothing is stored under the key.
            MissingArgumentError: partition or key is None or empty.
        """
        _require("partition", partition)
        _require("key", key)
        value = self._get(partition, key)
        return value, Predicate(value)

    def set(self, partition: bytes, key: bytes, value: bytes) -> None:
        """Write `value` under `key`, replacing any value there."""
        _require("partition", partition)
        _require("key", key)
        if value is None:
            raise MissingArgumentError("KV value is None; pass bytes (b'' is a valid value)")
        self._set(partition, key, value)

    def set_if(
        self, partition: bytes, key: bytes, value: bytes, predicate: Predicate | None
    ) -> None:
        """Write only if the key still matches `predicate` (from get, None, or MUST_EXIST).

        `None` means the key must not exist; `MUST_EXIST` that it must, with any
        value; a predicate from `get` that its value is unchanged since.

        Raises:
            PreconditionFailedError: the key did not match; nothing was written.
        """
        _require("partition", partition)
        _require("key", key)
        if value is None:
            raise MissingArgumentError("KV value is None; pass bytes (b'' is a valid value)")
        if predicate is not None and not isinstance(predicate, Predicate):
            raise MissingArgumentError(
                f"KV predicate is a {type(predicate).__name__};"
                " pass one from get, None or MUST_EXIST"
            )
        self._set_if(partition, key, value, predicate)

    def delete(self, partition: bytes, key: bytes) -> None:
        """Remove `key`. A key (or partition) that does not exist is not an error."""
        _require("partition", partition)
        _require("key", key)
        self._delete(partition, key)

    def delete_if(self, partition: bytes, key: bytes, expected: bytes) -> bool:
        """Remove `key` only if its value is still `expected`, in one atomic step; return
        whether it was removed (False: missing, or holding another value, which is kept).

        The delete counterpart of `set_if`: a record read, judged obsolete and then
        replaced by another writer is never removed by a `delete` issued on the old
        reading (a repository's tombstone replaced by a new creation, for one).
        """
        _require("partition", partition)
        _require("key", key)
        if expected is None:
            raise MissingArgumentError(
                "KV delete_if expected value is None; pass the bytes read (b'' is a value)"
            )
        return self._delete_if(partition, key, expected)

    def scan(
        self, partition: bytes, start: bytes = b"", *, batch_size: int = DEFAULT_BATCH_SIZE
    ) -> Scan:
        """Iterate `(key, value)` pairs with key >= `start` in ascending byte order.

        `batch_size` is the first page size, a hint; see `Scan` for the guarantees.
        """
        _require("partition", partition)
        if start is None:
            raise MissingArgumentError("scan start is None; pass b'' to scan from the first key")
        if batch_size < 1:
            raise MissingArgumentError(f"scan batch_size is {batch_size}; pass a positive number")

        def read_page(first: bytes, inclusive: bool, limit: int) -> list[KeyValue]:
            return self._scan_page(partition, first, inclusive, limit)

        return Scan(read_page, start, batch_size)

    def partitions(self, *, after: bytes = b"") -> Iterator[bytes]:
        """Iterate the names of all non-empty partitions in ascending byte order, those
        after `after` only if given (a sweep goes on where its last slice stopped)."""
        return self._partitions(after)

    # -- batch helpers: correct defaults, overridden to be faster --------------

    def set_many(self, partition: bytes, items: Iterable[KeyValue]) -> None:
        """Upsert many keys, not atomically: a failure may leave earlier chunks written.

        Items are validated and handed to the driver in chunks of `WRITE_CHUNK`, so
        a bad item fails its chunk before any of that chunk is written.
        """
        _require("partition", partition)
        for chunk in _chunks(items, WRITE_CHUNK):
            for key, value in chunk:
                _require("key", key)
                if value is None:
                    raise MissingArgumentError(f"KV value for key {key!r} is None; pass bytes")
            self._set_many(partition, chunk)

    def swap_many(
        self, partition: bytes, swaps: Iterable[tuple[bytes, bytes, bytes]]
    ) -> list[bytes]:
        """Compare-and-swap many keys: `(key, expected, value)` writes `value` only where the
        key still holds `expected` (as `set_if` with the predicate `get` gave). Returns the
        keys not written because their value changed or went; the others are written.

        Each key is its own compare-and-swap, not all or nothing; a key appears once a
        chunk. On the SQL drivers one transaction a chunk, so a thousand swaps cost one
        durable commit instead of a thousand.
        """
        _require("partition", partition)
        missed: list[bytes] = []
        for chunk in _chunks(swaps, WRITE_CHUNK):
            for key, expected, value in chunk:
                if not key or expected is None or value is None:
                    _require("key", key)
                    raise MissingArgumentError(
                        f"KV swap of key {key!r} has None; pass the bytes read and the new bytes"
                    )
            if len({key for key, _, _ in chunk}) != len(chunk):
                raise MissingArgumentError("KV swap_many names a key twice; swap each key once")
            missed.extend(self._swap_many(partition, chunk))
        return missed

    def get_many(self, partition: bytes, keys: Iterable[bytes]) -> dict[bytes, bytes]:
        """The values of those `keys` that exist (missing keys are left out), in chunks.

        One round trip per `READ_CHUNK` keys on the SQL drivers, instead of one per key.
        """
        _require("partition", partition)
        found: dict[bytes, bytes] = {}
        for chunk in _chunks(keys, READ_CHUNK):
            for key in chunk:
                _require("key", key)
            found.update(self._get_many(partition, chunk))
        return found

    def get_across(
        self, partitions: Iterable[bytes], keys: Iterable[bytes]
    ) -> dict[bytes, dict[bytes, bytes]]:
        """The values of `keys` in each of `partitions`: {partition: {key: value}}, existing only.

        Many partitions at once in one round trip per chunk on the SQL drivers, where
        `get_many` on each would make one per partition (checking a path in every
        branch's staging token). Partitions with none of the keys are left out.
        """
        wanted = list(keys)
        for key in wanted:
            _require("key", key)
        found: dict[bytes, dict[bytes, bytes]] = {}
        if not wanted:
            return found
        for group in _chunks(partitions, READ_CHUNK):
            for partition in group:
                _require("partition", partition)
            for chunk in _chunks(wanted, READ_CHUNK):
                for partition, values in self._get_across(group, chunk).items():
                    found.setdefault(partition, {}).update(values)
        return found

    def delete_many(self, partition: bytes, keys: Iterable[bytes]) -> None:
        """Delete many keys, not atomically; missing keys are fine."""
        _require("partition", partition)
        for chunk in _chunks(keys, WRITE_CHUNK):
            for key in chunk:
                _require("key", key)
            self._delete_many(partition, chunk)

    def drop_partition(self, partition: bytes) -> None:
        """Delete every key of a partition. Re-running after a failure finishes the job."""
        _require("partition", partition)
        self._drop_partition(partition)

    def _get_many(self, partition: bytes, keys: list[bytes]) -> dict[bytes, bytes]:
        found: dict[bytes, bytes] = {}
        for key in keys:
            try:
                found[key] = self._get(partition, key)
            except KeyNotFoundError:
                continue
        return found

    def _get_across(
        self, partitions: list[bytes], keys: list[bytes]
    ) -> dict[bytes, dict[bytes, bytes]]:
        found: dict[bytes, dict[bytes, bytes]] = {}
        for partition in partitions:
            values = self._get_many(partition, keys)
            if values:
                found[partition] = values
        return found

    def _set_many(self, partition: bytes, items: list[KeyValue]) -> None:
        for key, value in items:
            self._set(partition, key, value)

    def _delete_many(self, partition: bytes, keys: list[bytes]) -> None:
        for key in keys:
            self._delete(partition, key)

    def _swap_many(self, partition: bytes, swaps: list[tuple[bytes, bytes, bytes]]) -> list[bytes]:
        missed: list[bytes] = []
        for key, expected, value in swaps:
            try:
                self._set_if(partition, key, value, Predicate(expected))
            except PreconditionFailedError:
                missed.append(key)
        return missed

    def _drop_partition(self, partition: bytes) -> None:
        with self.scan(partition, batch_size=MAX_BATCH_SIZE) as scan:
            for page in scan.batches():
                self._delete_many(partition, [key for key, _ in page])

    # -- lifecycle ------------------------------------------------------------

    def close(self) -> None:  # noqa: B027 - drivers without resources need not override
        """Release connections. The store must not be used afterwards."""

    # -- what a driver implements -----------------------------------------------

    @abstractmethod
    def _get(self, partition: bytes, key: bytes) -> bytes:
        """Return the value; raise KeyNotFoundError when absent."""

    @abstractmethod
    def _set(self, partition: bytes, key: bytes, value: bytes) -> None:
        """Upsert one key."""

    @abstractmethod
    def _set_if(
        self, partition: bytes, key: bytes, value: bytes, predicate: Predicate | None
    ) -> None:
        """Compare-and-swap one key atomically; raise PreconditionFailedError on mismatch."""

    @abstractmethod
    def _delete(self, partition: bytes, key: bytes) -> None:
        """Delete one key if present."""

    @abstractmethod
    def _delete_if(self, partition: bytes, key: bytes, expected: bytes) -> bool:
        """Delete one key atomically if its value equals `expected`; return whether it did."""

    @abstractmethod
    def _scan_page(
        self, partition: bytes, start: bytes, inclusive: bool, limit: int
    ) -> list[KeyValue]:
        """Return up to `limit` entries with key >= start (> start if not inclusive), ascending."""

    @abstractmethod
    def _partitions(self, after: bytes) -> Iterator[bytes]:
        """Iterate the names of non-empty partitions greater than `after`, ascending."""
