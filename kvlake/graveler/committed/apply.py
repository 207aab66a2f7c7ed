"""Applying sorted changes to a metarange: the walk that makes commits cheap.

The base metarange's ranges and the sorted changes are walked together. A
range no change falls into is passed to the new metarange by reference (same
id, file never opened) whenever the writer stands at a range boundary; a range
a change falls into is opened, merged with its changes and re-cut by the
content-defined rule. Because boundaries depend only on keys, the re-cut range
ends where the old one did (unless its last key changed), the writer is back at
a boundary, and the walk resumes passing ranges by reference. The last range
may end where its input ended instead, so it is reopened when entries are
appended after it; appends grow it rather than leave a trail of small ranges.
The invariant: the result is cut exactly as a fresh `write_metarange` of the
same entries would cut it. Memory holds one decoded range and one range being
built, whatever the number of changes; rows copied from a range stay Arrow
slices, never Python values.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from itertools import chain

from kvlake.graveler.committed.columns import RangeRows
from kvlake.graveler.committed.reader import CommittedReader
from kvlake.graveler.committed.records import RangeInfo
from kvlake.graveler.committed.writer import RangeWriter
from kvlake.graveler.records import Value

Change = tuple[bytes, Value | None]
"""A key and its new value, or None to delete the key."""


def apply_changes(
    reader: CommittedReader,
    writer: RangeWriter,
    namespace: str,
    base: list[RangeInfo],
    changes: Iterable[Change],
    dropped: Collection[str] = frozenset(),
) -> list[RangeInfo]:
    """Write the ranges of `base` with `changes` applied and return them in key order.

    The ranges of `dropped` (ids) lose every key: no change may fall into them, and
    they are left out unopened (a whole range is whole chunks, so the rest is cut as
    a fresh write of the remaining entries would cut it). The writer checks the
    order of every change key, deletions included.

    Raises:
        InvalidInputError: changes are not strictly ascending by key, or a key is empty.
        RangeNotFoundError: a range of `base` that a change falls into is missing.
    """
    pending = iter(changes)
    change = next(pending, None)
    last = len(base) - 1
    for index, info in enumerate(base):
        # Changes before this range fall in the gap after the previous one.
        while change is not None and change[0] < info.min_key:
            _apply_one(writer, change)
            change = next(pending, None)
        if info.id in dropped:
            if change is not None and change[0] <= info.max_key:
                # Its keys were never read: merging a change would bring them back.
                raise RuntimeError(f"change {change[0]!r} falls in range {info.id}, dropped")
            continue  # every key of it is deleted (a range tombstone): nothing to write
        if index == last and not writer.closes_at(info):
            # The last range ended where the input ended, not at a boundary:
            # entries appended after it belong in it, so any change reopens it.
            untouched = change is None
        else:
            untouched = change is None or change[0] > info.max_key
        if writer.at_boundary and untouched:
            writer.add_range(info)
            continue
        # Read without caching: a commit touches each range once. (A merge
        # finds here the ranges it looked identities up in.)
        rows = reader.range_columns(namespace, info.id, keep=False).rows()
        change = _merge_range(rows, change, pending, writer)
    if change is not None:
        # Past the last range: a commit onto an empty base spends its time here.
        writer.add_all(chain([change], pending), deletions=True)
    return writer.finish()


def _merge_range(
    rows: RangeRows, change: Change | None, pending: Iterator[Change], writer: RangeWriter
) -> Change | None:
    """Feed one range's rows, with the changes that fall into it, to the writer.

    Returns the first change after the range (or None when there are no more).
    """
    last_key = rows.keys[-1]
    inside: list[Change] = []
    while change is not None and change[0] <= last_key:
        inside.append(change)
        change = next(pending, None)
    writer.add_changed_rows(rows, inside)
    return change


def _apply_one(writer: RangeWriter, change: Change) -> None:
    key, value = change
    if value is None:  # deleting a key that is not there changes nothing
        writer.skip(key)
    else:
        writer.add(key, value.identity, value.data)
