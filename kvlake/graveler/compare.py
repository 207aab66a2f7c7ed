"""Comparing committed data range by range: the walk that makes diffs and merges cheap.

Ranges are content-addressed and cut at content-defined boundaries, so two
metaranges that share history share most range ids, at the same places. The
walk compares two metaranges' ranges in key order and skips a pair with one
id without opening either file; only ranges that differ are read, entry by
entry. A diff or merge therefore costs what changed, not what is stored. Memory
holds one decoded range per side.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Set
from typing import NamedTuple

from kvlake.errors import InvalidInputError
from kvlake.graveler.committed import CommittedManager, RangeInfo
from kvlake.graveler.records import Value


class Difference(NamedTuple):
    """A key whose value differs between two sides: None where a side has no entry."""

    key: bytes
    left: Value | None
    right: Value | None


def same(left: Value | None, right: Value | None) -> bool:
    """Whether two sides hold the same thing: both nothing, or values of one identity."""
    if left is None or right is None:
        return left is right
    return left.identity == right.identity


class _Side:
    """One side of a comparison: unopened ranges, or the entries of the one opened.

    An opened range is held as a list (the reader has decoded it whole anyway)
    so the hot loop in `_entries` can walk it by index.
    """

    __slots__ = ("_committed", "_namespace", "_ranges", "_index", "_start", "_stop", "items", "pos")

    def __init__(
        self,
        committed: CommittedManager,
        namespace: str,
        ranges: list[RangeInfo],
        start: bytes,
        stop: bytes | None,
    ) -> None:
        self._committed = committed
        self._namespace = namespace
        self._ranges = ranges
        self._index = bisect_left([info.max_key for info in ranges], start) if start else 0
        self._start = start
        self._stop = stop
        self.items: list[tuple[bytes, Value]] | None = None
        """The opened range's remaining entries from `pos` on (None: none is opened)."""
        self.pos = 0

    @property
    def range(self) -> RangeInfo | None:
        """The next range, while it is unopened (None once opened or past the end)."""
        if self.items is not None or self._index >= len(self._ranges):
            return None
        info = self._ranges[self._index]
        return None if self._stop is not None and info.min_key >= self._stop else info

    def key(self) -> bytes | None:
        """The next key: the current entry's, or the next range's first (None: no more)."""
        if self.items is not None:
            return self.items[self.pos][0]
        info = self.range
        return None if info is None else info.min_key

    def limit(self) -> bytes | None:
        """While this side is unopened, the other side's entries below this are due first."""
        info = self.range
        return None if info is None else info.min_key

    def skip_range(self) -> None:
        self._index += 1

    def open(self, start: bytes = b"") -> None:
        """Read the next range; its entries from max(start, the walk's start) come next."""
        info = self._ranges[self._index]
        self._index += 1
        items = list(self._committed.scan_range(self._namespace, info.id, max(start, self._start)))
        if self._stop is not None and items and items[-1][0] >= self._stop:
            del items[bisect_left(items, (self._stop,)) :]
            self._index = len(self._ranges)  # past the stop: nothing further counts
        self.items, self.pos = (items, 0) if items else (None, 0)

    def moved_to(self, pos: int) -> None:
        """Record that entries before `pos` are done, closing the range after its last."""
        assert self.items is not None
        if pos >= len(self.items):
            self.items, self.pos = None, 0
        else:
            self.pos = pos

    def skip_through(self, last: bytes) -> None:
        """Pass every key <= `last`, opening a range only if it straddles `last`."""
        while True:
            if self.items is not None:
                # (last + NUL,) sorts before every entry keyed above `last`, after the rest.
                self.moved_to(bisect_left(self.items, (last + b"\0",), self.pos))
                if self.items is not None:
                    return
                continue
            info = self.range
            if info is None or info.min_key > last:
                return
            if info.max_key <= last:
                self.skip_range()
            else:
                self.open(last + b"\0")


def compare(
    committed: CommittedManager,
    namespace: str,
    left: str,
    right: str,
    *,
    start: bytes = b"",
    stop: bytes | None = None,
    ignore_ranges: Set[str] = frozenset(),
) -> Iterator[Difference]:
    """Yield the keys in [start, stop) whose values differ between two metaranges, ascending.

    Values are compared by identity. Over the key span of a `right` range whose
    id is in `ignore_ranges`, nothing is yielded and neither side is read: a
    merge passes the destination's range ids, because where the source and the
    destination hold the same range there is nothing to merge.

    Raises:
        MetarangeNotFoundError, RangeNotFoundError: a file is missing (raised now
            for a metarange, on reaching it for a range).
    """
    left_side = _Side(committed, namespace, committed.ranges(namespace, left), start, stop)
    right_side = _Side(committed, namespace, committed.ranges(namespace, right), start, stop)
    return _walk(left_side, right_side, ignore_ranges)


def _walk(left: _Side, right: _Side, ignore_ranges: Set[str]) -> Iterator[Difference]:
    while True:
        left_range, right_range = left.range, right.range
        if left_range is not None and right_range is not None and left_range.id == right_range.id:
            left.skip_range()
            right.skip_range()
            continue
        left_key, right_key = left.key(), right.key()
        if left_key is None and right_key is None:
            return
        if (
            right_range is not None
            and right_range.id in ignore_ranges
            and (left_key is None or left_key >= right_range.min_key)
        ):
            left.skip_through(right_range.max_key)
            right.skip_range()
            continue
        # Open a range only once the other side has nothing before its first key.
        if left_range is not None and (right_key is None or left_range.min_key <= right_key):
            left.open()
        elif right_range is not None and (left_key is None or right_range.min_key <= left_key):
            right.open()
        else:
            yield from _entries(left, right)


def _entries(left: _Side, right: _Side) -> Iterator[Difference]:
    """Compare entries while no unopened range is due; the hot loop of a diff.

    At least one side is opened. Returns when an opened side's range is done,
    or when the unopened side's next range starts at or before the current key.
    """
    left_items, right_items = left.items, right.items
    left_limit = right.limit()  # left entries below it come before right's next range
    right_limit = left.limit()
    i, j = left.pos, right.pos
    left_end = len(left_items) if left_items is not None else 0
    right_end = len(right_items) if right_items is not None else 0
    try:
        if left_items is not None and right_items is not None:
            while i < left_end and j < right_end:
                left_key, left_value = left_items[i]
                right_key, right_value = right_items[j]
                if left_key == right_key:
                    if left_value.identity != right_value.identity:
                        yield Difference(left_key, left_value, right_value)
                    i += 1
                    j += 1
                elif left_key < right_key:
                    yield Difference(left_key, left_value, None)
                    i += 1
                else:
                    yield Difference(right_key, None, right_value)
                    j += 1
        elif left_items is not None:
            while i < left_end:
                left_key, left_value = left_items[i]
                if left_limit is not None and left_key >= left_limit:
                    break
                yield Difference(left_key, left_value, None)
                i += 1
        elif right_items is not None:
            while j < right_end:
                right_key, right_value = right_items[j]
                if right_limit is not None and right_key >= right_limit:
                    break
                yield Difference(right_key, None, right_value)
                j += 1
    finally:
        if left_items is not None:
            left.moved_to(i)
        if right_items is not None:
            right.moved_to(j)


class SortedLookup:
    """Values of one metarange at ascending keys, opening only the ranges they fall into.

    For callers that hold a sorted stream of keys (a diff, staged changes) and
    need the committed value under each. Each lookup bisects the range it
    falls into (decoded once, then served from the reader's cache while the
    keys move through it), so a sparse stream of keys costs a few microseconds
    a key whatever the range size. Not thread-safe.
    """

    def __init__(self, committed: CommittedManager, namespace: str, metarange_id: str) -> None:
        self._committed = committed
        self._namespace = namespace
        self._ranges = committed.ranges(namespace, metarange_id)
        self._max_keys = [info.max_key for info in self._ranges]
        self._index = 0
        self._last = b""

    def get(self, key: bytes) -> Value | None:
        """The value under `key`, or None when the metarange has no entry there.

        Raises:
            InvalidInputError: `key` is below the previous key (lookups never go back).
        """
        if key < self._last:
            raise InvalidInputError(
                f"key {key!r} comes after {self._last!r}; look keys up in ascending order"
            )
        self._last = key
        self._index = index = bisect_left(self._max_keys, key, self._index)
        if index >= len(self._ranges) or self._ranges[index].min_key > key:
            return None
        found = next(self._committed.scan_range(self._namespace, self._ranges[index].id, key), None)
        return found[1] if found is not None and found[0] == key else None
