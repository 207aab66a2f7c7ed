"""What the range cache keeps: point reads stay hot, scans and commits do not evict them."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from kvlake.blockstore import BlockStore
from kvlake.graveler.committed import CommittedManager, CommittedStats

from .helpers import SMALL, entries, value


def test_a_full_scan_caches_only_its_first_range(blockstore: BlockStore, namespace: str) -> None:
    metarange_id = CommittedManager(blockstore, chunking=SMALL).write_metarange(
        namespace, entries(200)
    )
    manager = CommittedManager(blockstore, chunking=SMALL)
    ranges = manager.ranges(namespace, metarange_id)
    list(manager.scan(namespace, metarange_id))
    assert manager.stats.range_reads == len(ranges)

    manager.get(namespace, metarange_id, ranges[0].min_key)  # a listing's next page: cached
    assert manager.stats.range_reads == len(ranges)
    manager.get(namespace, metarange_id, ranges[5].min_key)
    assert manager.stats.range_reads == len(ranges) + 1


def test_apply_does_not_fill_the_cache(blockstore: BlockStore, namespace: str) -> None:
    manager = CommittedManager(blockstore, chunking=SMALL)
    base = manager.write_metarange(namespace, entries(200))
    key = manager.ranges(namespace, base)[3].min_key
    new = manager.apply(namespace, base, [(key, value(key, 1))])
    assert manager.stats.range_reads == 1

    assert manager.get(namespace, base, key) == value(key)  # the range apply read
    assert manager.stats.range_reads == 2
    assert manager.get(namespace, new, key) == value(key, 1)  # the range apply wrote
    assert manager.stats.range_reads == 3


def test_metaranges_are_read_once(blockstore: BlockStore, namespace: str) -> None:
    manager = CommittedManager(blockstore, chunking=SMALL)
    metarange_id = manager.write_metarange(namespace, entries(50))
    for key, _ in entries(50):
        manager.get(namespace, metarange_id, key)
    manager.ranges(namespace, metarange_id)

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
