"""CommittedManager: writing, reading and scanning metaranges; unknown ids."""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from pathlib import Path

import pytest

from kvlake.blockstore import BlockStore, open_blockstore
from kvlake.errors import (
    EntryNotFoundError,
    InvalidInputError,
    MetarangeNotFoundError,
    RangeNotFoundError,
)
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.records import Value
from tests.support import backends

from .helpers import SMALL, entries, value


def test_write_metarange_round_trips_through_scan_and_get(
    manager: CommittedManager, namespace: str
) -> None:
    written = entries(500)
    metarange_id = manager.write_metarange(namespace, iter(written))

    assert list(manager.scan(namespace, metarange_id)) == written
    for key, expected in written[::7]:
        assert manager.get(namespace, metarange_id, key) == expected
    assert len(manager.ranges(namespace, metarange_id)) > 20


def test_ranges_are_sorted_disjoint_and_stored_under_their_hash(
    manager: CommittedManager, blockstore: BlockStore, namespace: str
) -> None:
    written = entries(400)
    metarange_id = manager.write_metarange(namespace, written)
    ranges = manager.ranges(namespace, metarange_id)

    assert sum(info.count for info in ranges) == 400
    assert ranges[0].min_key == written[0][0] and ranges[-1].max_key == written[-1][0]
    for before, after in zip(ranges, ranges[1:], strict=False):
        assert before.max_key < after.min_key
    for info in ranges:
        data = blockstore.get(namespace, f"_lakefs/{info.id}")
        assert hashlib.sha256(data).hexdigest() == info.id
        assert len(data) == info.size
        scanned = list(manager.scan_range(namespace, info.id))
        assert len(scanned) == info.count
        assert (scanned[0][0], scanned[-1][0]) == (info.min_key, info.max_key)
    data = blockstore.get(namespace, f"_lakefs/{metarange_id}")
    assert hashlib.sha256(data).hexdigest() == metarange_id


def test_same_entries_give_same_ids_and_bytes_in_any_store(
    blockstore: BlockStore, namespace: str, tmp_path: Path
) -> None:
    """The run's blockstore against another, a local folder (another kind, on S3's run)."""
    first = blockstore
    with open_blockstore(f"local://{tmp_path}/second") as second:
        id_one = CommittedManager(first, chunking=SMALL).write_metarange(namespace, entries(300))
        other = backends.namespace(second, "repo1")
        id_two = CommittedManager(second, chunking=SMALL).write_metarange(other, entries(300))

        assert id_one == id_two
        assert list(first.list_keys(namespace)) == list(second.list_keys(other))
        for key in first.list_keys(namespace):
            assert first.get(namespace, key) == second.get(other, key)


def test_writing_the_same_entries_again_puts_no_file(
    manager: CommittedManager, namespace: str
) -> None:
    first = manager.write_metarange(namespace, entries(300))
    written = manager.stats.files_written

    assert manager.write_metarange(namespace, entries(300)) == first
    assert manager.stats.files_written == written
    assert manager.stats.files_already_present == written


def test_different_values_give_a_different_metarange(
    manager: CommittedManager, namespace: str
) -> None:
    assert manager.write_metarange(namespace, entries(50)) != manager.write_metarange(
        namespace, entries(50, version=1)
    )


def test_empty_metarange_is_what_writing_nothing_gives(
    manager: CommittedManager, namespace: str
) -> None:
    empty = manager.empty_metarange(namespace)

    assert manager.empty_metarange(namespace) == empty
    assert manager.write_metarange(namespace, []) == empty
    assert manager.ranges(namespace, empty) == []
    assert list(manager.scan(namespace, empty)) == []
    with pytest.raises(EntryNotFoundError):
        manager.get(namespace, empty, b"a")


def test_get_of_a_missing_key_raises_entry_not_found(
    manager: CommittedManager, namespace: str
) -> None:
    metarange_id = manager.write_metarange(namespace, entries(200))
    ranges = manager.ranges(namespace, metarange_id)
    between_ranges = ranges[3].max_key + b"0"  # after a max key, before the next min key
    assert between_ranges < ranges[4].min_key
    missing = [b"a", b"path/to/file-0000005", between_ranges, b"zzz"]

    for key in missing:
        with pytest.raises(EntryNotFoundError, match="no entry under key"):
            manager.get(namespace, metarange_id, key)


def test_scan_starts_at_the_first_key_at_or_after_start(
    manager: CommittedManager, namespace: str
) -> None:
    written = entries(300)
    metarange_id = manager.write_metarange(namespace, written)
    boundary = manager.ranges(namespace, metarange_id)[5].max_key
    all_keys = [key for key, _ in written]

    for start in [b"", b"a", all_keys[42], all_keys[42] + b"\x00", boundary, b"zzz"]:
        expected = [entry for entry in written if entry[0] >= start]
        assert list(manager.scan(namespace, metarange_id, start)) == expected


def test_scan_range_starts_at_start(manager: CommittedManager, namespace: str) -> None:
    metarange_id = manager.write_metarange(namespace, entries(100))
    info = manager.ranges(namespace, metarange_id)[2]
    full = list(manager.scan_range(namespace, info.id))

    assert list(manager.scan_range(namespace, info.id, full[1][0])) == full[1:]
    assert list(manager.scan_range(namespace, info.id, info.max_key + b"\x00")) == []


@pytest.mark.parametrize(
    "bad_id",
    ["0" * 64, "not-an-id", "../../etc/passwd", "A" * 64, ""],
)
def test_unknown_metarange_ids_raise_metarange_not_found(
    manager: CommittedManager, bad_id: str, namespace: str
) -> None:
    with pytest.raises(MetarangeNotFoundError, match="metarange"):
        manager.get(namespace, bad_id, b"k")
    with pytest.raises(MetarangeNotFoundError):
        manager.scan(namespace, bad_id)  # raised before the first next()
    with pytest.raises(MetarangeNotFoundError):
        manager.ranges(namespace, bad_id)
    with pytest.raises(MetarangeNotFoundError):
        manager.apply(namespace, bad_id, [])


def test_a_range_id_is_not_a_metarange_id(manager: CommittedManager, namespace: str) -> None:
    metarange_id = manager.write_metarange(namespace, entries(10))
    range_id = manager.ranges(namespace, metarange_id)[0].id

    with pytest.raises(MetarangeNotFoundError, match="columns"):
        manager.ranges(namespace, range_id)
    with pytest.raises(RangeNotFoundError, match="columns"):
        manager.scan_range(namespace, metarange_id)


def test_ids_do_not_cross_storage_namespaces(manager: CommittedManager, namespace: str) -> None:
    metarange_id = manager.write_metarange(namespace, entries(10))
    range_id = manager.ranges(namespace, metarange_id)[0].id
    other = namespace.replace("/repo1", "/other")

    with pytest.raises(MetarangeNotFoundError, match=other):
        manager.ranges(other, metarange_id)
    with pytest.raises(RangeNotFoundError, match=other):
        manager.scan_range(other, range_id)


def test_unknown_range_ids_raise_range_not_found(manager: CommittedManager, namespace: str) -> None:
    for bad_id in ["f" * 64, "nope"]:
        with pytest.raises(RangeNotFoundError, match="range"):
            manager.scan_range(namespace, bad_id)


def test_a_missing_range_file_fails_reads_loudly(
    manager: CommittedManager, blockstore: BlockStore, namespace: str
) -> None:
    metarange_id = manager.write_metarange(namespace, entries(100))
    info = manager.ranges(namespace, metarange_id)[1]
    blockstore.delete(namespace, f"_lakefs/{info.id}")

    with pytest.raises(RangeNotFoundError, match=info.id):
        manager.get(namespace, metarange_id, info.min_key)
    with pytest.raises(RangeNotFoundError):
        list(manager.scan(namespace, metarange_id))


@pytest.mark.parametrize(
    "bad",
    [
        [(b"b", value(b"b")), (b"a", value(b"a"))],
        [(b"a", value(b"a")), (b"a", value(b"a"))],
        [(b"", value(b""))],
    ],
    ids=["descending", "duplicate", "empty key"],
)
def test_write_metarange_refuses_unsorted_keys(
    manager: CommittedManager, bad: list[tuple[bytes, Value]], namespace: str
) -> None:
    with pytest.raises(InvalidInputError, match="key"):
        manager.write_metarange(namespace, bad)


def test_get_reads_a_range_once_then_serves_it_from_the_cache(
    blockstore: BlockStore, namespace: str
) -> None:
    writer = CommittedManager(blockstore, chunking=SMALL)
    metarange_id = writer.write_metarange(namespace, entries(100))
    first, second, third = (info.min_key for info in writer.ranges(namespace, metarange_id)[:3])
    reader = CommittedManager(blockstore, range_cache_size=2, chunking=SMALL)

    for key in [first, first, second, third]:
        reader.get(namespace, metarange_id, key)
    assert (reader.stats.range_reads, reader.stats.range_cache_hits) == (3, 1)
    reader.get(namespace, metarange_id, first)  # evicted: the cache holds two ranges
    assert reader.stats.range_reads == 4
    assert reader.stats.metarange_reads == 1


def test_range_cache_is_bounded_by_bytes_as_well_as_by_count(
    blockstore: BlockStore, namespace: str
) -> None:
    writer = CommittedManager(blockstore, chunking=SMALL)
    metarange_id = writer.write_metarange(namespace, entries(100))
    first, second = (info.min_key for info in writer.ranges(namespace, metarange_id)[:2])
    reader = CommittedManager(blockstore, range_cache_bytes=1, chunking=SMALL)

    for key in [first, first, second, first]:
        reader.get(namespace, metarange_id, key)
    # A budget smaller than one range still keeps the newest range, and only it.
    assert (reader.stats.range_reads, reader.stats.range_cache_hits) == (3, 1)


def test_concurrent_gets_and_scans_agree(
    manager: CommittedManager, blockstore: BlockStore, namespace: str
) -> None:
    written = entries(400)
    metarange_id = manager.write_metarange(namespace, written)
    small_cache = CommittedManager(blockstore, range_cache_size=3, chunking=SMALL)

    def check(offset: int) -> bool:
        ok = all(
            small_cache.get(namespace, metarange_id, key) == expected
            for key, expected in written[offset::5]
        )
        return ok and list(small_cache.scan(namespace, metarange_id)) == written

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(check, range(16)))


@pytest.mark.parametrize("cuts", [(), (1,), (3, 4, 5), (50, 51, 200), tuple(range(0, 400, 37))])
def test_pieces_written_apart_join_into_the_metarange_one_writer_makes(
    manager: CommittedManager, namespace: str, cuts: tuple[int, ...]
) -> None:
    written = entries(400)
    whole = manager.write_metarange(namespace, written)
    bounds = [0, *cuts, len(written)]
    pieces = [manager.write_piece(namespace, written[a:b]) for a, b in pairwise(bounds)]
    assert sum(piece.count for piece in pieces) == 400
    assert any(piece.ranges for piece in pieces)
    shuffled = sorted(pieces, key=lambda piece: hashlib.sha256(piece.first_key).digest())
    joined = manager.join_pieces(
        namespace, sorted((p for p in shuffled if p.count), key=lambda p: p.first_key)
    )
    assert joined == whole
    assert manager.ranges(namespace, joined) == manager.ranges(namespace, whole)


def test_pieces_out_of_order_are_refused(manager: CommittedManager, namespace: str) -> None:
    written = entries(100)
    first, second = (manager.write_piece(namespace, part) for part in (written[:50], written[50:]))
    with pytest.raises(InvalidInputError, match="sorted"):
        manager.join_pieces(namespace, [second, first])
    with pytest.raises(InvalidInputError, match="sorted"):
        manager.write_piece(namespace, [written[1], written[0]])
