"""Enumeration across a commit and the token drop that follows it (issue 22 #5).

A staging token outlives the commit that consumes it by `TOKEN_DROP_DELAY`; a
listing of the branch that is still open when the cleaner drops it reads the
rest of the token as empty. These tests run with the real delay and a fake
clock that crosses it, mid-listing: the operation must list on from a fresh
snapshot of the branch, never finish short and say `completed`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from kvlake.blockstore import BlockStore
from kvlake.graveler import TOKEN_DROP_DELAY
from kvlake.kv.memory import MemoryStore
from kvlake.lake import Lake
from kvlake.operations import BulkDeleteOptions, Filters, LocalEngine
from tests.operations.helpers import (
    DropTheToken,
    committing_mid_listing,
    fill,
    listed,
    make_lake,
    populate,
    start,
)
from tests.support import FakeClock

STAGED = [f"s/{i:05d}" for i in range(3_000)]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def lake(lake_blocks: BlockStore, clock: FakeClock) -> Iterator[Lake]:
    with make_lake(
        MemoryStore(), lake_blocks, batch_size=1000, clock=clock, token_drop_delay=TOKEN_DROP_DELAY
    ) as lake:
        yield lake


EVERY_SIZE = Filters(max_size=1 << 40)
"""A filter every object passes: the listing then covers committed objects too, where
it would otherwise take whole committed ranges without listing them."""


@pytest.mark.parametrize(
    ("options", "committed"),
    [
        (BulkDeleteOptions(), 0),
        (BulkDeleteOptions(filters=EVERY_SIZE), 0),
        (BulkDeleteOptions(filters=EVERY_SIZE), 2_500),
    ],
    ids=["staged-only", "filtered", "filtered-committed-after"],
)
def test_a_token_dropped_under_the_enumeration_is_listed_again_from_a_fresh_snapshot(
    lake: Lake, clock: FakeClock, options: BulkDeleteOptions, committed: int
) -> None:
    """The listing meets the drop at its end (staged objects only) or at a batch boundary
    (committed objects after the staged ones fill batches past the drop)."""
    repo = populate(lake, [], commit=False)
    after = [f"s/x{i:05d}" for i in range(committed)]
    fill(lake, repo, after, commit=bool(after))
    fill(lake, repo, STAGED, commit=False)
    operation = start(lake, "lakefs://repo1/main/s/", options=options)
    drop = DropTheToken(lake, clock)
    engine = committing_mid_listing(LocalEngine, drop)(lake.engine_context(owner="server-1"))
    final = engine.run(operation.id, threading.Event())
    assert drop.dropped
    total = len(STAGED) + len(after)
    assert final.status == "completed", final
    c = final.counters
    assert (c.enumerated, c.deleted, c.failed, c.skipped) == (total, total, 0, 0)
    assert listed(lake, repo, "s/") == []
