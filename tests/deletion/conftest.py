"""Fixtures for deletion: a lake on the memory KV store and the memory blockstore."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake


@pytest.fixture
def lake() -> Iterator[DeletionLake]:
    with MemoryStore() as store, MemoryBlockStore() as blocks:
        yield DeletionLake(store, blocks)
