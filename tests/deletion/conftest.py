"""Fixtures for deletion: a lake on the memory KV store, and on a local folder or S3 (moto's
server on loopback), so the whole deletion flow also runs against DeleteObjects."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kvlake.blockstore import BlockStore
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake


@pytest.fixture
def lake(lake_blocks: BlockStore) -> Iterator[DeletionLake]:
    with MemoryStore() as store:
        yield DeletionLake(store, lake_blocks)
