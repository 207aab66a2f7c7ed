"""The test-lake builder: a whole `Lake` (catalog, graveler, deletion, operations, actions)
over a blockstore a fixture gave the test, on the memory KV store unless told otherwise.

Tests that need a lake of their own write `with lake_on(lake_blocks) as lake:` (or take a
fixture built on it) rather than assembling one: the lake's settings, store and clock are
then its defaults but for what the test says, and it is closed, store and blockstore with
it, however the test ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kvlake.blockstore import BlockStore
from kvlake.config import Settings
from kvlake.kv import Store
from kvlake.kv.memory import MemoryStore
from kvlake.lake import Lake


@contextmanager
def lake_on(
    blocks: BlockStore,
    store: Store | None = None,
    *,
    settings: Settings | None = None,
    clock: Callable[[], float] | None = None,
) -> Iterator[Lake]:
    """A lake over `blocks` and `store` (a fresh memory store by default), with `settings`
    (the defaults) and `clock` (the lake's own), closed on exit."""
    with Lake(
        settings or Settings(), store or MemoryStore(), blocks, clock=clock or time.time
    ) as lake:
        yield lake


def logged_addresses(lake: Lake) -> set[str]:
    """Every address the lake's deletion log holds a readable pending record for."""
    log = lake.deletion_log
    return {
        due.record.address
        for number in range(log.partition_count())
        for due in log.scan(number)
        if due.record is not None
    }
