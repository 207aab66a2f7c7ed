"""Changes as batches: the columns a commit moves from staging into ranges, and the cursor
that walks them beside a base's ranges."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from kvlake.errors import InvalidInputError
from kvlake.graveler.committed import Change, ChangeBatch, CommittedManager, batched
from kvlake.graveler.committed.batches import BatchCursor
from kvlake.graveler.records import Value

from .helpers import UNSORTED_CHANGES, UNSORTED_IDS, entries, value


def cut(changes: list[Change], size: int) -> list[ChangeBatch]:
    """The changes as batches of `size` (the last may be shorter)."""
    return [
        ChangeBatch.from_values(
            [key for key, _ in changes[i : i + size]], [v for _, v in changes[i : i + size]]
        )
        for i in range(0, len(changes), size)
    ]


def mixed(count: int) -> list[Change]:
    """Sorted changes, every third one a deletion."""
    return [(key, None if i % 3 == 0 else v) for i, (key, v) in enumerate(entries(count, 1))]


def test_a_batch_keeps_its_changes_and_deletions() -> None:
    changes = mixed(30)
    (batch,) = cut(changes, 30)
    assert batch.deletions == 10
    assert batch.changes() == changes
    assert batch.slice(5, 12).changes() == changes[5:12]
    present = batch.present()
    assert present.changes() == [change for change in changes if change[1] is not None]
    assert present.deletions == 0


def test_batched_cuts_a_stream_into_batches_that_say_the_same() -> None:
    changes = mixed(40_000)
    batches = list(batched(iter(changes)))
    assert len(batches) == 3
    assert [change for batch in batches for change in batch.changes()] == changes


def test_the_cursor_takes_changes_below_a_bound_across_batches() -> None:
    changes: list[Change] = [(b"k%02d" % i, Value(identity=b"i", data=b"d")) for i in range(20)]
    cursor = BatchCursor(cut(changes, 3))
    assert cursor.peek() == b"k00"

    def keys(parts: Iterable[ChangeBatch]) -> list[bytes]:
        return [key for part in parts for key, _ in part.changes()]

    assert keys(cursor.below(b"k07", inclusive=False)) == [b"k%02d" % i for i in range(7)]
    assert keys(cursor.below(b"k07", inclusive=True)) == [b"k07"]
    assert keys(cursor.below(b"k07", inclusive=True)) == []
    assert cursor.peek() == b"k08"
    assert keys(cursor.below(b"k085", inclusive=False)) == [b"k08"]
    assert keys(cursor.rest()) == [b"k%02d" % i for i in range(9, 20)]
    assert cursor.peek() is None
    assert keys(cursor.rest()) == []


@pytest.mark.parametrize("size", [1, 7, 100, 5000])
def test_applying_batches_writes_what_applying_single_changes_writes(
    manager: CommittedManager, namespace: str, size: int
) -> None:
    """However the changes are cut into batches, the ranges come out the same (ids)."""
    base = manager.write_metarange(namespace, entries(2000))
    by_key: dict[bytes, Value | None] = {}
    by_key.update((b"path/to/file-%07d" % i, value(b"%d" % i, 2)) for i in range(5, 25_000, 40))
    by_key.update((b"path/to/file-%07d" % i, None) for i in range(0, 20_000, 130))
    by_key.update(
        (b"path/to/file-%07d" % i, value(b"%d" % i, 3)) for i in range(30_000, 31_000, 10)
    )
    changes = sorted(by_key.items())
    expected = manager.apply(namespace, base, iter(changes))
    assert manager.apply_batches(namespace, base, cut(changes, size)) == expected
    empty = manager.empty_metarange(namespace)
    fresh = [(key, v) for key, v in changes if v is not None]
    assert manager.apply_batches(namespace, empty, cut(changes, size)) == (
        manager.write_metarange(namespace, fresh)
    )


@pytest.mark.parametrize("changes", UNSORTED_CHANGES, ids=UNSORTED_IDS)
@pytest.mark.parametrize("size", [1, 2])
def test_batches_out_of_order_are_refused_within_and_across_batches(
    manager: CommittedManager, namespace: str, changes: list[Change], size: int
) -> None:
    for base in (
        manager.empty_metarange(namespace),
        manager.write_metarange(namespace, entries(50)),
    ):
        with pytest.raises(InvalidInputError, match="key"):
            manager.apply_batches(namespace, base, cut(changes, size))


def test_a_change_inside_a_dropped_range_is_refused(
    manager: CommittedManager, namespace: str
) -> None:
    """A dropped range's keys are never read: merging a change into it would bring
    them back, so the walk refuses it; changes around it go through."""
    base = manager.write_metarange(namespace, entries(200))
    ranges = manager.ranges(namespace, base)
    dropped = ranges[3]
    inside: list[Change] = [(dropped.max_key, value(b"new"))]
    with pytest.raises(RuntimeError, match="dropped"):
        manager.apply_batches(namespace, base, cut(inside, 1), dropped={dropped.id})
    around: list[Change] = [(ranges[2].max_key, value(b"new")), (ranges[4].min_key, None)]
    new = manager.apply_batches(namespace, base, cut(around, 1), dropped={dropped.id})
    kept = [(k, v) for k, v in entries(200) if not dropped.min_key <= k <= dropped.max_key]
    kept = [(k, value(b"new") if k == ranges[2].max_key else v) for k, v in kept]
    kept = [(k, v) for k, v in kept if k != ranges[4].min_key]
    assert list(manager.scan(namespace, new)) == kept
