"""What the range cache keeps: point reads stay hot, scans and commits do not evict them."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.graveler.committed import CommittedManager, CommittedStats

from .helpers import NAMESPACE, SMALL, entries, value


def test_a_full_scan_caches_only_its_first_range(blockstore: MemoryBlockStore) -> None:
    metarange_id = CommittedManager(blockstore, chunking=SMALL).write_metarange(
        NAMESPACE, entries(200)
    )
    manager = CommittedManager(blockstore, chunking=SMALL)
    ranges = manager.ranges(NAMESPACE, metarange_id)
    list(manager.scan(NAMESPACE, metarange_id))
    assert manager.stats.range_reads == len(ranges)

    manager.get(NAMESPACE, metarange_id, ranges[0].min_key)  # a listing's next page: cached
    assert manager.stats.range_reads == len(ranges)
    manager.get(NAMESPACE, metarange_id, ranges[5].min_key)
    assert manager.stats.range_reads == len(ranges) + 1


def test_apply_does_not_fill_the_cache(blockstore: MemoryBlockStore) -> None:
    manager = CommittedManager(blockstore, chunking=SMALL)
    base = manager.write_metarange(NAMESPACE, entries(200))
    key = manager.ranges(NAMESPACE, base)[3].min_key
    new = manager.apply(NAMESPACE, base, [(key, value(key, 1))])
    assert manager.stats.range_reads == 1

    assert manager.get(NAMESPACE, base, key) == value(key)  # the range apply read
    assert manager.stats.range_reads == 2
    assert manager.get(NAMESPACE, new, key) == value(key, 1)  # the range apply wrote
    assert manager.stats.range_reads == 3


def test_metaranges_are_read_once(blockstore: MemoryBlockStore) -> None:
    manager = CommittedManager(blockstore, chunking=SMALL)
    metarange_id = manager.write_metarange(NAMESPACE, entries(50))
    for key, _ in entries(50):
        manager.get(NAMESPACE, metarange_id, key)
    manager.ranges(NAMESPACE, metarange_id)

    assert manager.stats.metarange_reads == 1


def test_stats_count_exactly_under_concurrency() -> None:
    stats = CommittedStats()

    def bump(_: int) -> None:
        for _ in range(1000):
            stats.count("range_reads")

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(bump, range(8)))
    assert stats.range_reads == 8000
    assert "range_reads=8000" in repr(stats)
