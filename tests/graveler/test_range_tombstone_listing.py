"""Listing a branch skips the committed ranges its range tombstones hide whole, by range.

A bulk delete of a prefix stages one range tombstone per committed range under
it (kvlake/graveler/staging/range_tombstones.py). A listing of the branch
afterwards must not read those ranges' keys, neither from the range files to list
them nor to hide them: its cost follows the ranges hidden, not the objects in
them. Counted, at two sizes, in range files opened and KV rows read.
"""

from __future__ import annotations

from typing import NamedTuple

from kvlake.blockstore import BlockStore
from kvlake.graveler import RangeTombstone
from kvlake.graveler.committed import Chunking, CommittedManager, RangeInfo
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Repository
from kvlake.kv.counting import CountingStore
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import make_graveler, stage_many, value
from tests.support import FakeClock, backends

RANGES = 25
"""About how many ranges the prefix spans at every size: only the keys per range grow."""


class Listing(NamedTuple):
    keys: list[bytes]
    expected: list[bytes]
    range_files: int
    """Range files the listing opened (read or found in the cache)."""
    rows_read: int
    hidden_ranges: int


def _hidden_lake(
    clock: FakeClock, blocks: BlockStore, per_range: int
) -> tuple[Graveler, Repository, CountingStore, list[RangeInfo]]:
    """A branch whose commit holds about RANGES ranges of `per_range` keys under d/ (and a
    key on each side), with a range tombstone on every range wholly under d/."""
    objects = RANGES * per_range
    chunking = Chunking(target_entries=per_range, max_entries=2 * per_range, max_bytes=1 << 30)
    store = CountingStore(MemoryStore())
    graveler = make_graveler(
        store, clock, blocks, committed=CommittedManager(blocks, chunking=chunking)
    )
    repo = graveler.create_repository(
        f"repo{objects}", storage_namespace=backends.namespace(blocks, f"repo{objects}")
    )
    entry = value("x")
    paths = [b"a", *(f"d/{i:07d}".encode() for i in range(objects)), b"z"]
    stage_many(graveler, repo, "main", ((path, entry) for path in paths))
    graveler.commit(repo, "main", committer="t", message="data")
    head = graveler.get_commit(repo, graveler.resolve_ref(repo, "main").commit_id)
    ranges = graveler.committed.ranges(repo.storage_namespace, head.metarange_id)
    inside = [r for r in ranges if r.min_key >= b"d/" and r.max_key < b"d0"]
    records = [RangeTombstone(range_id=r.id, min_key=r.min_key, max_key=r.max_key) for r in inside]
    graveler.stage_range_tombstones(repo, "main", records, metarange_id=head.metarange_id)
    return graveler, repo, store, ranges


def _list(clock: FakeClock, blocks: BlockStore, per_range: int) -> Listing:
    graveler, repo, store, ranges = _hidden_lake(clock, blocks, per_range)
    hidden = {r.id for r in ranges if r.min_key >= b"d/" and r.max_key < b"d0"}
    expected = sorted(
        key
        for r in ranges
        if r.id not in hidden
        for key in graveler.committed.range_columns(repo.storage_namespace, r.id).key_list()
    )
    stats = graveler.committed.stats
    opened = stats.range_reads + stats.range_cache_hits
    store.reset()
    keys = [key for key, _ in graveler.list(repo, "main")]
    listing = Listing(
        keys=keys,
        expected=expected,
        range_files=stats.range_reads + stats.range_cache_hits - opened,
        rows_read=store.rows_read,
        hidden_ranges=len(hidden),
    )
    # A window (as a bulk delete's enumeration lists) skips the hidden ranges inside it.
    window = [key for key, _ in graveler.list(repo, "main", start=b"d/0000100", stop=b"d0")]
    assert window == [key for key in expected if b"d/0000100" <= key < b"d0"]
    return listing


def test_listing_a_branch_skips_wholly_tombstoned_ranges_unread(
    clock: FakeClock, lake_blocks: BlockStore
) -> None:
    # 12,800 and 102,400 objects under the prefix.
    small, large = _list(clock, lake_blocks, 512), _list(clock, lake_blocks, 4096)
    for listing in (small, large):
        assert listing.keys == listing.expected  # exactly what is not hidden
        assert listing.hidden_ranges >= RANGES // 2
        # Only the ranges at the prefix's two ends are opened, never a hidden one.
        assert listing.range_files <= 2
    # Eight times the objects in about as many ranges: the same KV rows (the records).
    assert (
        large.rows_read <= small.rows_read + 4 * abs(large.hidden_ranges - small.hidden_ranges) + 8
    )
    assert large.rows_read < 10 * large.hidden_ranges
