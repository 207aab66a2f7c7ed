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
same entries would cut it. Memory holds one decoded range, one range being
built and a few batches of changes, whatever the number of changes; rows copied
from a range, and changes that fall between ranges, stay Arrow slices, never
Python values (changes come as `ChangeBatch`es, taken by a bisection per range).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from kvlake.graveler.committed.batches import BatchCursor, ChangeBatch
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
    batches: Iterable[ChangeBatch],
    dropped: Collection[str] = frozenset(),
) -> list[RangeInfo]:
    """Write the ranges of `base` with the changes of `batches` applied; return the new
    ranges in key order.

    The changes are taken by key bound, a bisection per range: those in a gap between
    ranges, or past the last, go to the writer as batch slices; only the few that fall
    into a range are made single changes, to merge with its rows. The ranges of
    `dropped` (ids) lose every key: no change may fall into them, and they are left
    out unopened (a whole range is whole chunks, so the rest is cut as a fresh write
    of the remaining entries would cut it). The writer checks the order of every
    change key, deletions included.

    Raises:
        InvalidInputError: changes are not strictly ascending by key, or a key is empty.
        RangeNotFoundError: a range of `base` that a change falls into is missing.
    """
    cursor = BatchCursor(batches)
    last = len(base) - 1
    for index, info in enumerate(base):
        # Changes before this range fall in the gap after the previous one.
        for part in cursor.below(info.min_key, inclusive=False):
            writer.add_batch(part)
        following = cursor.peek()
        if info.id in dropped:
            if following is not None and following <= info.max_key:
                # Its keys were never read: merging a change would bring them back.
                raise RuntimeError(f"change {following!r} falls in range {info.id}, dropped")
            continue  # every key of it is deleted (a range tombstone): nothing to write
        if index == last and not writer.closes_at(info):
            # The last range ended where the input ended, not at a boundary:
            # entries appended after it belong in it, so any change reopens it.
            untouched = following is None
        else:
            untouched = following is None or following > info.max_key
        if writer.at_boundary and untouched:
            writer.add_range(info)
            continue
        # Read without caching: a commit touches each range once. (A merge
        # finds here the ranges it looked identities up in.)
        rows = reader.range_columns(namespace, info.id, keep=False).rows()
        inside = [
            change
            for part in cursor.below(rows.keys[-1], inclusive=True)
            for change in part.changes()
        ]
        writer.add_changed_rows(rows, inside)
    # Past the last range: a commit onto an empty base spends its time here.
    for part in cursor.rest():
        writer.add_batch(part)
    return writer.finish()
