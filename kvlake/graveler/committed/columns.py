"""A range's rows as Arrow columns, and comparing two ranges without a Python step per row.

Diffs, merges and applies look at a whole range to find or replace a few rows
among thousands. `RangeColumns` decodes only the key and identity columns of a
range file, as Arrow arrays, and the data column only when values are asked
for; `compare_rows` finds the rows whose keys or identities differ between two
spans of ranges with Arrow kernels. Python objects are made only for the rows
that differ, so a range costs a few passes in C whatever its size. A
`RangeColumns` never changes once built (a range file never does), so any
number of threads may share one. With parquet.py, the only module that imports
pyarrow.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from operator import itemgetter
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc

from kvlake.graveler.committed.parquet import decode_range_columns
from kvlake.graveler.records import Value

BATCH: Final = 1024
"""`entries` turns this many rows at a time into Python values."""

_SPLICED_RUNS: Final = 64
"""`RangeRows.with_changes` splices up to this many runs; beyond, one `take` is cheaper."""

_KEY_OVERHEAD: Final = 41
"""Bytes CPython spends on a key in a list beyond its contents: object header and pointer."""

RowPair = tuple[int | None, int | None]
"""A differing key's row on the left and on the right; None on a side without the key."""


class RangeColumns:
    """The key and identity columns of one range file; its data column on demand."""

    __slots__ = ("_file", "_key_list", "identities", "keys", "range_id")

    def __init__(self, range_id: str, file: bytes) -> None:
        """Decode the key and identity columns of `file`, the bytes of range `range_id`.

        The data column is decoded (and not kept) each time `arrays` or
        `entries` need it.

        Raises:
            RangeNotFoundError: `file` is not a readable range file.
        """
        self.range_id = range_id
        self._file = file  # kept, compressed, to decode the data column from
        self.keys, self.identities = decode_range_columns(file, range_id, ("key", "identity"))
        self._key_list: list[bytes] | None = None

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def nbytes(self) -> int:
        """Roughly the memory this may hold: the columns, the file, and the keys as a list."""
        columns = int(self.keys.nbytes + self.identities.nbytes) + len(self._file)
        return columns + int(self.keys.nbytes) + _KEY_OVERHEAD * len(self.keys)

    def key(self, row: int) -> bytes:
        """The key of one row."""
        key: bytes = self.keys[row].as_py()
        return key

    def key_list(self) -> list[bytes]:
        """Every key as a list, made on first use: for callers that bisect many times.

        The list is shared: callers must not change it.
        """
        if self._key_list is None:
            # Two threads may both make it; the lists are equal, either may stay.
            self._key_list = self.keys.to_pylist()
        return self._key_list

    def bisect(self, key: bytes, lo: int = 0, hi: int | None = None) -> int:
        """The first row in [lo, hi) whose key is >= `key` (hi when there is none).

        A few microseconds: for the few bisections of a range in a walk.
        """
        keys = self.keys
        hi = len(keys) if hi is None else hi
        while lo < hi:
            mid = (lo + hi) // 2
            if keys[mid].as_py() < key:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def identity(self, row: int) -> bytes:
        """The identity of one row."""
        identity: bytes = self.identities[row].as_py()
        return identity

    def arrays(self) -> list[Any]:
        """The key, identity and data columns, decoding the data column (not kept)."""
        (datas,) = decode_range_columns(self._file, self.range_id, ("data",))
        return [self.keys, self.identities, datas]

    def rows(self) -> RangeRows:
        """Every row, ready to be copied into a new range by `RangeWriter.add_rows`."""
        return RangeRows(self.arrays(), self.key_list())

    def entries(self, rows: Iterable[int]) -> Iterator[tuple[bytes, Value]]:
        """The key and value of each row of `rows` (ascending or not), lazily.

        The data column is decoded once, on the first `next`, and values are
        made a batch at a time, so a caller that stops early pays for little.
        """
        datas: Any = None
        for indices, keys, identities in self._batches(rows):
            if datas is None:
                datas = self.arrays()[2]
            for key, identity, data in zip(
                keys, identities, datas.take(indices).to_pylist(), strict=True
            ):
                yield key, Value(identity=identity, data=data)

    def identities_at(self, rows: Iterable[int]) -> Iterator[tuple[bytes, bytes]]:
        """The key and identity of each row of `rows`, lazily; the data is never decoded."""
        for _, keys, identities in self._batches(rows):
            yield from zip(keys, identities, strict=True)

    def _batches(self, rows: Iterable[int]) -> Iterator[tuple[Any, list[bytes], list[bytes]]]:
        """Row indices (as an Arrow array), keys and identities, a batch at a time."""
        pending = iter(rows)
        while batch := list(islice(pending, BATCH)):
            indices = pa.array(batch, type=pa.int64())
            yield (
                indices,
                self.keys.take(indices).to_pylist(),
                self.identities.take(indices).to_pylist(),
            )


class RangeRows:
    """Rows to copy into new ranges: Arrow columns, with keys (and sizes) as lists.

    `keys` is for bisecting and hashing, `offsets` for the writer's byte cap.
    The lists are shared: callers must not change them.
    """

    __slots__ = ("_arrays", "_offsets", "keys")

    def __init__(self, arrays: list[Any], keys: list[bytes] | None = None) -> None:
        """Rows from key, identity and data arrays (`keys`: the first, as a list, if known)."""
        self._arrays = arrays
        self.keys: list[bytes] = arrays[0].to_pylist() if keys is None else keys
        self._offsets: list[int] | None = None

    @property
    def offsets(self) -> list[int]:
        """`offsets[i]`: the bytes of keys, identities and data in rows [0, i)."""
        if self._offsets is None:
            key, identity, data = map(pc.binary_length, self._arrays)
            sizes = pc.add(pc.add(key, identity), data).cast(pa.int64())
            self._offsets = [0, *pc.cumulative_sum(sizes).to_pylist()]
        return self._offsets

    def slice(self, start: int, stop: int) -> list[Any]:
        """The key, identity and data arrays of rows [start, stop), without copying."""
        return [array.slice(start, stop - start) for array in self._arrays]

    def with_changes(self, changes: Sequence[tuple[bytes, Value | None]]) -> RangeRows:
        """These rows with changes applied: a value puts its key, None deletes it.

        `changes` must be sorted strictly ascending by key. A few changes
        splice slices of the columns; many build the result with one `take`
        per column, so the cost never grows with a Python step per change.
        """
        if not changes:
            return self
        keys, count = self.keys, len(self.keys)
        # The result as runs [start, stop) of these rows followed by the new rows.
        runs: list[tuple[int, int]] = []
        result_keys: list[bytes] = []
        new: tuple[list[bytes], list[bytes], list[bytes]] = ([], [], [])
        row = 0
        for key, value in changes:
            position = bisect_left(keys, key, row)
            if position > row:
                runs.append((row, position))
                result_keys.extend(keys[row:position])
            # A replaced or deleted row is dropped; deleting a missing key does nothing.
            row = position + 1 if position < count and keys[position] == key else position
            if value is not None:
                added = count + len(new[0])
                runs.append((added, added + 1))
                result_keys.append(key)
                new[0].append(key)
                new[1].append(value.identity)
                new[2].append(value.data)
        if row < count:
            runs.append((row, count))
            result_keys.extend(keys[row:])
        added_arrays = [pa.array(added, type=pa.binary()) for added in new]
        if len(runs) > _SPLICED_RUNS:
            order = [i for start, stop in runs for i in range(start, stop)]
            indices = pa.array(order, type=pa.int64())
            arrays = [
                pa.concat_arrays([array, added]).take(indices)
                for array, added in zip(self._arrays, added_arrays, strict=True)
            ]
        else:
            arrays = [
                pa.concat_arrays(
                    [
                        array.slice(start, stop - start)
                        if start < count
                        else added.slice(start - count, stop - start)
                        for start, stop in runs
                    ]
                    or [array.slice(0, 0)]
                )
                for array, added in zip(self._arrays, added_arrays, strict=True)
            ]
        return RangeRows(arrays, result_keys)


def compare_rows(
    left: RangeColumns,
    left_span: tuple[int, int],
    right: RangeColumns,
    right_span: tuple[int, int],
) -> list[RowPair]:
    """The rows whose entries differ between two spans [start, stop) of ranges, by key.

    A key in one span only, or in both with different identities, differs.
    The spans are sorted by key (as rows of a range are); the result is too.
    """
    (left_start, left_stop), (right_start, right_stop) = left_span, right_span
    left_keys = left.keys.slice(left_start, max(left_stop - left_start, 0))
    right_keys = right.keys.slice(right_start, max(right_stop - right_start, 0))
    left_ids = left.identities.slice(left_start, len(left_keys))
    right_ids = right.identities.slice(right_start, len(right_keys))
    if left_keys.equals(right_keys):
        # The usual case when values changed in place: one pass, no hashing.
        changed = _nonzero(pc.not_equal(left_ids, right_ids))
        return [(left_start + row, right_start + row) for row in changed]
    # For each left key its row on the right, null where the right lacks it.
    at = pc.index_in(left_keys, value_set=right_keys)
    differs = pc.fill_null(pc.not_equal(left_ids, right_ids.take(at)), True)
    left_rows = _nonzero(differs)
    left_at: list[int | None] = at.take(pa.array(left_rows, type=pa.int64())).to_pylist()
    added = _nonzero(pc.invert(pc.is_in(right_keys, value_set=left_keys)))
    merged: list[tuple[bytes, int | None, int | None]] = [
        (key, left_start + row, None if other is None else right_start + other)
        for key, row, other in zip(_keys_at(left_keys, left_rows), left_rows, left_at, strict=True)
    ]
    merged.extend(
        (key, None, right_start + row)
        for key, row in zip(_keys_at(right_keys, added), added, strict=True)
    )
    # The two lists hold distinct keys, each list sorted: a sort merges them.
    merged.sort(key=itemgetter(0))
    return [(row, other) for _, row, other in merged]


def _nonzero(mask: Any) -> list[int]:
    rows: list[int] = pc.indices_nonzero(mask).to_pylist()
    return rows


def _keys_at(keys: Any, rows: list[int]) -> list[bytes]:
    found: list[bytes] = keys.take(pa.array(rows, type=pa.int64())).to_pylist()
    return found
