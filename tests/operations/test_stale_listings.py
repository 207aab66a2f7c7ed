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
from kvlake.graveler import TOKEN_DROP_DELAY, keys
from kvlake.kv.faults import Call
from kvlake.kv.memory import MemoryStore
from kvlake.lake import Lake
from kvlake.operations import BulkDeleteOptions, Filters, local_engine
from tests.graveler.stepping import SteppingStore
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
    engine = committing_mid_listing(local_engine, drop)(lake.engine_context(owner="server-1"))
    final = engine.run(operation.id, threading.Event())
    assert drop.dropped
    total = len(STAGED) + len(after)
    assert final.status == "completed", final
    c = final.counters
    assert (c.enumerated, c.deleted, c.failed, c.skipped) == (total, total, 0, 0)
    assert listed(lake, repo, "s/") == []


RANGED = [f"r/{i:05d}" for i in range(20_000)]
"""Committed objects filling several whole ranges under r/: a range batch."""
NEW = [f"r/{i:05d}x" for i in range(3_000)]
"""Objects staged in the range batch's span, at no key of its ranges: more than one page
of a staging scan (the first page reads 1,000 keys)."""


@pytest.mark.parametrize("phase", ["enumeration", "planning"])
def test_a_token_dropped_under_a_range_batch_read_of_staging_is_read_again(
    lake_blocks: BlockStore, clock: FakeClock, phase: str
) -> None:
    """Issue 22 (round 2, a): a range batch reads its span's staged entries once when
    enumeration finds the span and once when the batch is planned. A commit and the whole
    token-drop delay under either read (here: between two pages of its scan) must not make
    the operation say `completed` with objects of the span left on the branch."""
    stepping = SteppingStore(MemoryStore())
    with make_lake(
        stepping, lake_blocks, batch_size=1000, clock=clock, token_drop_delay=TOKEN_DROP_DELAY
    ) as lake:
        repo = populate(lake, [], commit=False)
        fill(lake, repo, RANGED)
        fill(lake, repo, NEW, commit=False)
        partition = keys.staging_partition(lake.graveler.get_branch(repo, "main").staging_token)
        continuations = {path.encode() for path in NEW}
        drop = DropTheToken(lake, clock)
        armed = [phase == "enumeration"]

        def at_call(call: Call) -> None:
            """Drop the token when a read of the span's staging asks for its second page."""
            if armed[0] and call.op == "scan" and call.partition == partition:
                if call.key in continuations:
                    stepping.at_call = None  # the drop's own calls run freely
                    drop()

        def arm() -> None:  # after enumeration wrote the range batch
            armed[0] = True

        operation = start(lake, "lakefs://repo1/main/r/")
        engine = committing_mid_listing(local_engine, arm if phase == "planning" else lambda: None)
        stepping.at_call = at_call
        final = engine(lake.engine_context(owner="server-1")).run(operation.id, threading.Event())
        stepping.at_call = None

        assert drop.dropped
        assert final.status == "completed", final
        assert listed(lake, repo, "r/") == []
        c = final.counters
        assert c.deleted == c.enumerated == len(RANGED) + len(NEW)
