"""RangeWriter: content-defined boundaries, caps, resynchronisation, put-if-absent."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator
from zlib import crc32

import pytest

from kvlake.blockstore import BlockStore
from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.errors import InvalidInputError, UnavailableError
from kvlake.graveler.committed import CommittedManager, CommittedStats
from kvlake.graveler.committed.records import FILE_PREFIX
from kvlake.graveler.committed.writer import RangeWriter
from kvlake.graveler.records import Value

from .helpers import SMALL, entries, value


def raw_bytes(manager: CommittedManager, namespace: str, range_id: str) -> int:
    return sum(
        len(key) + len(v.identity) + len(v.data)
        for key, v in manager.scan_range(namespace, range_id)
    )


def test_every_range_but_the_last_ends_at_a_key_hash_boundary_or_a_cap(
    manager: CommittedManager, namespace: str
) -> None:
    metarange_id = manager.write_metarange(namespace, entries(3000))
    ranges = manager.ranges(namespace, metarange_id)
    by_hash = by_cap = 0

    for info in ranges[:-1]:
        if crc32(info.max_key) % SMALL.target_entries == 0:
            by_hash += 1
        else:
            assert (
                info.count == SMALL.max_entries
                or raw_bytes(manager, namespace, info.id) >= SMALL.max_bytes
            )
            by_cap += 1
        assert info.count <= SMALL.max_entries
    assert by_hash > 100
    # Keys hash uniformly: with ~8 entries per range, a 32-entry cap bites only rarely.
    assert by_cap < by_hash / 10


def test_large_values_close_ranges_at_the_byte_cap(
    manager: CommittedManager, namespace: str
) -> None:
    big = [(b"k%04d" % i, Value(identity=b"i", data=b"x" * 1000)) for i in range(100)]
    metarange_id = manager.write_metarange(namespace, big)

    for info in manager.ranges(namespace, metarange_id)[:-1]:
        assert raw_bytes(manager, namespace, info.id) < SMALL.max_bytes + 1006
        assert info.count <= 5


def test_an_edit_changes_only_the_ranges_around_it(
    manager: CommittedManager, namespace: str
) -> None:
    written = entries(2000)
    before = manager.ranges(namespace, manager.write_metarange(namespace, written))
    key = written[1000][0]
    edited = [(k, value(k, 1) if k == key else v) for k, v in written]
    after = manager.ranges(namespace, manager.write_metarange(namespace, edited))

    assert len(after) == len(before)
    changed = [old.id for old, new in zip(before, after, strict=True) if old.id != new.id]
    assert len(changed) == 1
    assert [(r.min_key, r.max_key) for r in before] == [(r.min_key, r.max_key) for r in after]


def test_files_already_stored_are_not_put_again(blockstore: BlockStore, namespace: str) -> None:
    first = CommittedManager(blockstore, chunking=SMALL)
    first.write_metarange(namespace, entries(100))
    keys_before = list(blockstore.list_keys(namespace))
    second = CommittedManager(blockstore, chunking=SMALL)
    second.write_metarange(namespace, entries(100))

    assert second.stats.files_written == 0
    assert second.stats.files_already_present == first.stats.files_written
    assert list(blockstore.list_keys(namespace)) == keys_before
    assert all(key.startswith("_lakefs/") for key in keys_before)


def test_a_range_passes_by_reference_only_at_a_boundary(
    blockstore: BlockStore, namespace: str
) -> None:
    manager = CommittedManager(blockstore, chunking=SMALL)
    info = manager.ranges(namespace, manager.write_metarange(namespace, entries(50)))[-1]
    writer = RangeWriter(blockstore, namespace, SMALL, CommittedStats())
    key = next(key for key, _ in entries(50) if crc32(key) % SMALL.target_entries)
    writer.add(key[:-1], b"i", b"d")  # sorts before every written key, and is no boundary

    assert not writer.at_boundary
    with pytest.raises(RuntimeError, match="boundary"):
        writer.add_range(info)


def test_a_value_of_none_is_refused_outside_apply(
    manager: CommittedManager, namespace: str
) -> None:
    with pytest.raises(InvalidInputError, match="no value"):
        manager.write_metarange(namespace, [(b"a", None)])  # type: ignore[list-item]


class _SlowPuts(MemoryBlockStore):
    """Puts that take a while (or fail), as a disk's fsyncs do, to show when a writer waits."""

    def __init__(self, *, fail: bool = False) -> None:
        super().__init__()
        self.fail = fail

    def _put(self, namespace: str, key: str, chunks: Iterator[bytes]) -> int:
        time.sleep(0.02)
        if self.fail:
            raise UnavailableError("the disk is gone")
        return super()._put(namespace, key, chunks)


def test_finish_returns_only_once_every_range_file_is_stored() -> None:
    """Puts run in the background while the next ranges are cut: a metarange written
    before its ranges were stored could name files a crash has not kept."""
    blockstore = _SlowPuts()
    writer = RangeWriter(blockstore, "mem://lake", SMALL, CommittedStats())
    writer.add_all(entries(600), deletions=False)
    ranges = writer.finish()
    assert len(ranges) > 8
    assert all(blockstore.exists("mem://lake", FILE_PREFIX + r.id) for r in ranges)


def test_a_failed_background_put_fails_the_write() -> None:
    writer = RangeWriter(_SlowPuts(fail=True), "mem://lake", SMALL, CommittedStats())
    with pytest.raises(UnavailableError, match="the disk is gone"):
        writer.add_all(entries(600), deletions=False)
        writer.finish()


def _write_in_a_forked_child(queue: multiprocessing.Queue[int]) -> None:
    writer = RangeWriter(MemoryBlockStore(), "mem://lake", SMALL, CommittedStats())
    writer.add_all(entries(300), deletions=False)
    queue.put(len(writer.finish()))


def test_a_forked_child_stores_ranges_with_threads_of_its_own() -> None:
    """Spark's Python workers are forked: the parent's put threads do not exist there."""
    parent = RangeWriter(MemoryBlockStore(), "mem://lake", SMALL, CommittedStats())
    parent.add_all(entries(300), deletions=False)
    expected = len(parent.finish())  # the parent's pool is started and has idle threads
    context = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue[int] = context.Queue()
    child = context.Process(target=_write_in_a_forked_child, args=(queue,))
    child.start()
    child.join(timeout=60)
    stuck = child.is_alive()
    if stuck:
        child.kill()
        child.join()
    assert not stuck, "the child's puts never ran"
    assert child.exitcode == 0 and queue.get(timeout=5) == expected
