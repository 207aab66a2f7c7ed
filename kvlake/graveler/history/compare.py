"""Comparing committed data range by range: the walk that makes diffs and merges cheap.

Ranges are content-addressed and cut at content-defined boundaries, so two
metaranges that share history share most range ids, at the same places. The
walk compares two metaranges' ranges in key order and skips a pair with one
id without opening either file; only ranges that differ are read. A diff or
merge therefore costs what changed, not what is stored. An opened range is
read as its key and identity columns and compared column against column
(`compare_rows`); data is decoded, and values made, only for the keys that
differ. Memory holds one range per side.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Set
from typing import Any, NamedTuple

from kvlake.errors import InvalidInputError
from kvlake.graveler.committed import (
    CommittedManager,
    RangeColumns,
    RangeInfo,
    RowPair,
    compare_rows,
)
from kvlake.graveler.records import Value


class Difference(NamedTuple):
    """A key whose value differs between two sides: None where a side has no entry.

    As in lakeFS, the left side is given by identity only: every caller
    compares it or tests it for None, and its data would cost a decode.
    """

    key: bytes
    left_identity: bytes | None
    right: Value | None


def identity_of(value: Value | None) -> bytes | None:
    """What comparisons compare: a value's identity, or None where there is no entry."""
    return None if value is None else value.identity


class _Side:
    """One side of a comparison: unopened ranges, or the rows [pos, end) of the one opened.

    An opened range is held as its key and identity columns; values are made
    only for the rows that differ (see `RangeColumns`).
    """

    __slots__ = (
        "_committed",
        "_index",
        "_namespace",
        "_ranges",
        "_start",
        "_stop",
        "columns",
        "end",
        "pos",
    )

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
        self.columns: RangeColumns | None = None
        """The opened range (None: none is opened); rows [pos, end) remain."""
        self.pos = 0
        self.end = 0

    @property
    def range(self) -> RangeInfo | None:
        """The next range, while it is unopened (None once opened or past the end)."""
        if self.columns is not None or self._index >= len(self._ranges):
            return None
        info = self._ranges[self._index]
        return None if self._stop is not None and info.min_key >= self._stop else info

    def key(self) -> bytes | None:
        """The next key: the current row's, or the next range's first (None: no more)."""
        if self.columns is not None:
            return self.columns.key(self.pos)
        info = self.range
        return None if info is None else info.min_key

    def last_key(self) -> bytes:
        """The key of the opened range's last remaining row."""
        assert self.columns is not None
        return self.columns.key(self.end - 1)

    def limit(self) -> bytes | None:
        """While this side is unopened, the other side's entries below this are due first."""
        info = self.range
        return None if info is None else info.min_key

    def skip_range(self) -> None:
        self._index += 1

    def open(self, start: bytes = b"") -> None:
        """Read the next range; its rows from max(start, the walk's start) come next."""
        info = self._ranges[self._index]
        self._index += 1
        columns = self._committed.range_columns(self._namespace, info.id)
        start = max(start, self._start)
        pos, end = columns.bisect(start) if start else 0, len(columns)
        if self._stop is not None and pos < end and columns.key(end - 1) >= self._stop:
            end = columns.bisect(self._stop, pos)
            self._index = len(self._ranges)  # past the stop: nothing further counts
        self.columns, self.pos, self.end = (columns, pos, end) if pos < end else (None, 0, 0)

    def take_below(self, limit: bytes | None) -> tuple[int, int]:
        """The span of remaining rows with keys below `limit` (all when None), now done."""
        assert self.columns is not None
        first, end = self.pos, self.end
        stop = end if limit is None else self.columns.bisect(limit, first, end)
        self.moved_to(stop)
        return first, stop

    def moved_to(self, pos: int) -> None:
        """Record that rows before `pos` are done, closing the range after its last."""
        if pos >= self.end:
            self.columns, self.pos, self.end = None, 0, 0
        else:
            self.pos = pos

    def skip_through(self, last: bytes) -> None:
        """Pass every key <= `last`, opening a range only if it straddles `last`."""
        while True:
            if self.columns is not None:
                # last + NUL is the smallest key above `last`.
                self.moved_to(self.columns.bisect(last + b"\0", self.pos, self.end))
                if self.columns is not None:
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
    """Compare rows while no unopened range is due; the hot path of a diff.

    At least one side is opened. Both opened: every row up to the smaller of
    their last keys is compared at once (`compare_rows`), after which one
    side's range is done. One opened: its rows below the other side's next
    range all differ. Both sides move on before the first difference is made.
    """
    left_columns, right_columns = left.columns, right.columns
    if left_columns is not None and right_columns is not None:
        # Up to the smaller last key, every row of both sides is here.
        above = min(left.last_key(), right.last_key()) + b"\0"
        left_span = (left.pos, left_columns.bisect(above, left.pos, left.end))
        right_span = (right.pos, right_columns.bisect(above, right.pos, right.end))
        left.moved_to(left_span[1])
        right.moved_to(right_span[1])
        rows = compare_rows(left_columns, left_span, right_columns, right_span)
        return _differences(left_columns, right_columns, rows)
    if left_columns is not None:
        first, stop = left.take_below(right.limit())
        removed = left_columns.identities_at(range(first, stop))
        return (Difference(key, identity, None) for key, identity in removed)
    assert right_columns is not None
    first, stop = right.take_below(left.limit())
    return (Difference(k, None, v) for k, v in right_columns.entries(range(first, stop)))


def _differences(
    left: RangeColumns, right: RangeColumns, rows: list[RowPair]
) -> Iterator[Difference]:
    """The differences at row pairs from `compare_rows`, making values lazily."""
    left_entries = left.identities_at(row for row, _ in rows if row is not None)
    right_entries = right.entries(row for _, row in rows if row is not None)
    for left_row, right_row in rows:
        if left_row is None:
            key, right_value = next(right_entries)
            yield Difference(key, None, right_value)
        elif right_row is None:
            key, left_identity = next(left_entries)
            yield Difference(key, left_identity, None)
        else:
            key, left_identity = next(left_entries)
            yield Difference(key, left_identity, next(right_entries)[1])


class SortedLookup:
    """Values of one metarange at ascending keys, opening only the ranges they fall into.

    For callers that hold a sorted stream of keys (a diff, staged changes, a
    merge) and need the committed value, or just its identity, under each.
    Each lookup bisects the range it falls into (decoded once, then served
    from the reader's cache while the keys move through it), so a sparse
    stream of keys costs a few microseconds a key whatever the range size.
    `identity` decodes only the key and identity columns. Not thread-safe.
    """

    def __init__(self, committed: CommittedManager, namespace: str, metarange_id: str) -> None:
        self._committed = committed
        self._namespace = namespace
        self._ranges = committed.ranges(namespace, metarange_id)
        self._max_keys = [info.max_key for info in self._ranges]
        self._index = 0
        self._last = b""
        # The range `identity` last looked in, with its keys as a list to bisect.
        self._columns: RangeColumns | None = None
        self._keys: list[bytes] = []
        # The data column `value` last decoded, and the range it belongs to.
        self._datas: Any = None
        self._datas_of = ""

    def get(self, key: bytes) -> Value | None:
        """The value under `key`, or None when the metarange has no entry there.

        Raises:
            InvalidInputError: `key` is below the previous key (lookups never go back).
        """
        info = self._find(key)
        if info is None:
            return None
        found = next(self._committed.scan_range(self._namespace, info.id, key), None)
        return found[1] if found is not None and found[0] == key else None

    def identity(self, key: bytes) -> bytes | None:
        """The identity of the value under `key`, or None when there is no entry there.

        Cheaper than `get` when the value itself is not needed: only the key
        and identity columns of the range are decoded.

        Raises:
            InvalidInputError: `key` is below the previous key (lookups never go back).
        """
        found = self._row(key)
        return None if found is None else found[0].identity(found[1])

    def value(self, key: bytes) -> Value | None:
        """The value under `key` as `get` finds it, read through the column cache `identity`
        uses (the one a diff's walk has just filled): for the old values of removed keys.

        The data column of a range is decoded once, while the keys stay in it.

        Raises:
            InvalidInputError: `key` is below the previous key (lookups never go back).
        """
        found = self._row(key)
        if found is None:
            return None
        columns, row = found
        if self._datas_of != columns.range_id:
            self._datas, self._datas_of = columns.arrays()[2], columns.range_id
        data: bytes = self._datas[row].as_py()
        return Value(identity=columns.identity(row), data=data)

    def _row(self, key: bytes) -> tuple[RangeColumns, int] | None:
        """The columns of the range holding `key`, and its row there; None when absent."""
        info = self._find(key)
        if info is None:
            return None
        columns = self._columns
        if columns is None or columns.range_id != info.id:
            columns = self._columns = self._committed.range_columns(self._namespace, info.id)
            self._keys = columns.key_list()
        row = bisect_left(self._keys, key)
        return (columns, row) if row < len(self._keys) and self._keys[row] == key else None

    def _find(self, key: bytes) -> RangeInfo | None:
        """The range `key` would be in, if any range may hold it."""
        if key < self._last:
            raise InvalidInputError(
                f"key {key!r} comes after {self._last!r}; look keys up in ascending order"
            )
        self._last = key
        self._index = index = bisect_left(self._max_keys, key, self._index)
        if index >= len(self._ranges) or self._ranges[index].min_key > key:
            return None
        return self._ranges[index]
