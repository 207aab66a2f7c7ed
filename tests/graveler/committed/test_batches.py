"""Changes as batches: the columns a commit moves from staging into ranges, and the cursor
that walks them beside a base's ranges."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
import pytest

from kvlake.errors import InvalidInputError
from kvlake.graveler.committed import Change, ChangeBatch, CommittedManager, batched
from kvlake.graveler.committed.batches import BatchCursor, _split_encoded
from kvlake.graveler.records import Value, encode

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


# (identity length, data length) of each value: msgpack's bin 8, 16 and 32 headers, alone
# and mixed in one page, and empty fields.
SPLIT_LAYOUTS = {
    "hashes and short data": [(32, 100), (32, 7), (32, 255)],
    "bin 16 and bin 32 data": [(32, 256), (32, 70_000), (32, 65_535)],
    "bin 8 and bin 16 data mixed": [(32, 300), (32, 3), (32, 256)],
    "empty fields": [(0, 0), (0, 0)],
    "empty data beside bin 8": [(32, 0), (32, 1)],
}
# Pages split value by value instead: they decode to the same batch all the same.
DECODED_LAYOUTS = {
    "identities of two lengths": [(32, 10), (20, 10)],
    "a bin 16 identity": [(300, 10), (300, 10)],
    "tiny data beside bin 16": [(32, 0), (32, 400)],
}


@pytest.mark.parametrize(
    ("lengths", "split"),
    [(lengths, True) for lengths in SPLIT_LAYOUTS.values()]
    + [(lengths, False) for lengths in DECODED_LAYOUTS.values()],
    ids=[*SPLIT_LAYOUTS, *DECODED_LAYOUTS],
)
def test_encoded_values_make_the_batch_their_decoded_values_make(
    lengths: list[tuple[int, int]], split: bool
) -> None:
    values = [
        Value(identity=bytes([65 + i % 26]) * identity, data=bytes([i % 256]) * data)
        for i, (identity, data) in enumerate(lengths)
    ]
    keys = [b"k%03d" % i for i in range(len(values))]
    raws = [encode(v) for v in values]
    batch = ChangeBatch.from_encoded(keys, raws)
    assert batch.changes() == list(zip(keys, values, strict=True))
    assert batch.deletions == 0
    assert (_split_encoded(raws) is not None) is split


def test_values_with_another_identity_length_are_decoded_whatever_their_data_holds() -> None:
    """The second value's data holds, where the first's data header lies, bytes that read
    as a header giving the right length: only its identity's length tells them apart."""
    first = Value(identity=b"i" * 32, data=b"d" * 100)
    data = bytearray(b"e" * 100)
    data[29:31] = bytes([0xC4, 100 - 31])  # at byte 35 of the encoded value
    second = Value(identity=b"j", data=bytes(data))
    keys = [b"k1", b"k2"]
    batch = ChangeBatch.from_encoded(keys, [encode(first), encode(second)])
    assert batch.changes() == [(b"k1", first), (b"k2", second)]


def test_encoded_tombstones_delete_their_keys() -> None:
    changes = mixed(30)
    keys = [key for key, _ in changes]
    batch = ChangeBatch.from_encoded(keys, [b"" if v is None else encode(v) for _, v in changes])
    assert batch.changes() == changes
    assert batch.deletions == 10


@pytest.mark.parametrize(
    "broken",
    [
        b"\x92\xc4\x01a\xc4\x05abc",  # data shorter than its header says
        b"\x92\xc4\x01a\xc4\x01abc",  # bytes after the data
        b"\x92\xc4\x01a\xa1b",  # data as a string, not bytes
    ],
)
def test_a_value_that_is_no_encoded_value_is_refused_among_good_ones(broken: bytes) -> None:
    good = encode(Value(identity=b"a", data=b"b"))
    with pytest.raises(msgspec.DecodeError):
        ChangeBatch.from_encoded([b"k1", b"k2", b"k3"], [good, broken, good])


@pytest.mark.parametrize(
    "keys",
    [
        [b"a\x01", b"a\xff"],
        [b"a\xff", b"a\x01"],
        [b"a", b"ab"],
        [b"ab", b"a"],
        [b"\x00", b"\x00\x00"],
        [b"b", b"b"],
        [b"a", b"b", b"c", b"c"],
    ],
)
def test_a_batch_compares_its_keys_as_python_compares_bytes(keys: list[bytes]) -> None:
    batch = ChangeBatch.from_values(keys, [value(key) for key in keys])
    assert batch.ascending() is all(a < b for a, b in zip(keys, keys[1:], strict=False))
    assert batch.slice(1, len(keys)).ascending() is all(
        a < b for a, b in zip(keys[1:], keys[2:], strict=False)
    )


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


# Every cut on the local folder; S3 (a minute a size on moto) for the one cut across ranges.
@pytest.mark.parametrize(
    ("lake_blocks", "size"),
    [("local", 1), ("local", 7), ("local", 100), ("local", 5000), ("s3", 5000)],
    indirect=["lake_blocks"],
)
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
